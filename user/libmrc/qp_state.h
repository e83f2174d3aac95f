/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc layer "qp_state" (see LAYERS): finding a QP by number, what its
 * state shows the fast path, and the move to ERROR.
 */
#ifndef MRC_QP_STATE_H
#define MRC_QP_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "base.h"

/* The context's QP with that number (from a packet or an event), or NULL. */
static inline struct mrc_qp *mrc_qp_by_num(struct mrc_context *ctx, uint32_t qpn)
{
	if (qpn == 0 || qpn > MRC_MAX_QPS)
		return NULL;
	return ctx->qps[mrc_qpn_to_slot(qpn)];
}

int mrc_qp_publish_state(struct mrc_qp *qp);

/*
 * Move to ERROR: the WRITE holding `psn` (or the oldest one when psn is 0)
 * completes with first_status, every other outstanding one is flushed.
 */
void mrc_qp_to_error(struct mrc_qp *qp, enum mrc_wc_status first_status,
		     uint32_t psn);

/*
 * Did XDP fail the sending QP (a fatal NACK whose event it could not
 * queue)? It sets the state word in the mmapped requester state only then;
 * otherwise the event alone says so.
 */
static inline bool mrc_qp_failed_by_peer(const struct mrc_qp *qp)
{
	return qp->state == MRC_QP_RTS &&
	       __atomic_load_n(&qp->tx->state, __ATOMIC_ACQUIRE) == MRC_QPS_ERROR;
}

#endif /* MRC_QP_STATE_H */
