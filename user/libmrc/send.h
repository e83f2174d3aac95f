/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc layer "send" (see LAYERS): the requester, as the QP verbs and
 * the progress engine drive it (mrc_post_write is its API entry).
 */
#ifndef MRC_SEND_H
#define MRC_SEND_H

#include <stdbool.h>
#include <stdint.h>

#include "base.h"

void mrc_tx_reset(struct mrc_qp *qp);
/*
 * Timer, resends and new packets of one QP in RTS, into the context's
 * batch for this progress round (sent as it fills). mrc_tx_flush sends
 * what is left at the round's end; mrc_tx_close frees the batch.
 */
void mrc_tx_progress(struct mrc_qp *qp);
void mrc_tx_flush(struct mrc_context *ctx);
void mrc_tx_close(struct mrc_context *ctx);
/* An event XDP wrote to the context's ring (completion, loss, fatal NACK). */
void mrc_tx_handle_event(struct mrc_context *ctx, const struct mrc_event *evt);
/*
 * What a QP in RTS waits for after its turn, so the progress engine knows
 * when to give it the next one: nothing (idle, or a responder only), the
 * CPU (resends queued, or sends the socket held back), its destination's
 * congestion window, or the responder's window (an ack, seen as una moving).
 */
enum mrc_tx_need {
	MRC_TX_NOTHING,
	MRC_TX_NOW,
	MRC_TX_WINDOW,
	MRC_TX_PEER,
};
enum mrc_tx_need mrc_tx_need(const struct mrc_qp *qp);
/* What the progress engine asks before it lets the context sleep. */
bool mrc_tx_wants_cpu(struct mrc_qp *qp);
/* New packets queued, held back by the responder's window (not the pace). */
bool mrc_tx_peer_window_full(const struct mrc_qp *qp);
/* Acked packets a sleeping QP can wait for before it has work (0: any ack). */
uint32_t mrc_tx_wake_after(const struct mrc_qp *qp);
bool mrc_tx_deadline(const struct mrc_qp *qp, uint64_t *deadline_ns);

#endif /* MRC_SEND_H */
