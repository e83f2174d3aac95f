/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc layer "base" (see LAYERS): the lists that tell the progress
 * engine which QPs to visit, so a round costs the QPs with something to
 * do rather than every QP of the context:
 *   - the ready list: something happened to the QP (an event, a post, a
 *     packet, a SACK owed); any layer may put a QP on it (mrc_qp_wake);
 *   - a congestion window's waiters: QPs whose send it held back, visited
 *     in turn when it has room again;
 *   - the QPs with packets out: their timers and their share of the window.
 * Each QP is on each list at most once; mrc_qp_unlist takes it off all.
 */
#ifndef MRC_WORKLIST_H
#define MRC_WORKLIST_H

#include "objects.h"

void mrc_qp_wake(struct mrc_qp *qp);
struct mrc_qp *mrc_ready_pop(struct mrc_context *ctx);

void mrc_wait_push(struct mrc_cc_group *g, struct mrc_qp *qp);
struct mrc_qp *mrc_wait_pop(struct mrc_cc_group *g);
void mrc_wait_remove(struct mrc_cc_group *g, struct mrc_qp *qp);

int mrc_out_add(struct mrc_qp *qp);
void mrc_out_remove(struct mrc_qp *qp);

/* Off every list (before the QP is freed or leaves its window). */
void mrc_qp_unlist(struct mrc_qp *qp);

#endif /* MRC_WORKLIST_H */
