/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc layer "recv" (see LAYERS): the responder, as the QP verbs and
 * the progress engine drive it.
 */
#ifndef MRC_RECV_H
#define MRC_RECV_H

#include "base.h"

void mrc_rx_reset(struct mrc_qp *qp);
int mrc_rx_progress(struct mrc_context *ctx);	/* packets taken */
/*
 * SACKs owed after a receive batch, or after XDP dropped a duplicate,
 * into the round's batch: mrc_rx_flush_acks sends them (at the round's
 * end), mrc_rx_close frees the batch.
 */
void mrc_rx_send_acks(struct mrc_qp *qp);
int mrc_rx_flush_acks(struct mrc_context *ctx);	/* SACKs sent */
void mrc_rx_close(struct mrc_context *ctx);

#endif /* MRC_RECV_H */
