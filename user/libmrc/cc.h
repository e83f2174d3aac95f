/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc layer "cc" (see LAYERS): the destination's congestion window
 * (published by XDP in mrc_cc_view) and the pacing of new packets, as the
 * send path and the progress engine ask about them.
 */
#ifndef MRC_CC_H
#define MRC_CC_H

#include <stdbool.h>
#include <stdint.h>

#include "base.h"

/* Give back the context's windows (each view was mapped when claimed). */
void mrc_cc_close(struct mrc_context *ctx);

/* A QP takes its destination's window at RTS and gives it back at RESET. */
int mrc_cc_attach(struct mrc_qp *qp);
void mrc_cc_detach(struct mrc_qp *qp);
uint32_t mrc_cc_slot(const struct mrc_qp *qp);	/* 1-based, 0 = none */

/* Per packet (send.c). */
void mrc_cc_refresh(struct mrc_qp *qp);
bool mrc_cc_has_room(const struct mrc_qp *qp);
bool mrc_cc_may_send(struct mrc_qp *qp);
bool mrc_cc_nearly_full(const struct mrc_qp *qp);
/* Is the window full, or do other QPs wait for it (its next turn may be late)? */
bool mrc_cc_crowded(const struct mrc_qp *qp);
/* Most packets of one UDP GSO burst the window allows (UINT32_MAX: none). */
uint32_t mrc_cc_burst_cap(const struct mrc_qp *qp);
void mrc_cc_sent(struct mrc_qp *qp);

/* Before the context sleeps (progress.c). */
bool mrc_cc_pace_deadline(struct mrc_qp *qp, uint64_t *deadline_ns);
void mrc_cc_arm_wakeup(struct mrc_qp *qp, uint32_t after_packets);
void mrc_cc_disarm_wakeups(struct mrc_context *ctx);

#endif /* MRC_CC_H */
