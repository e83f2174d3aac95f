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
	if (qpn == 0 || qpn > ctx->pins.max_qps)
		return NULL;
	return ctx->qps[mrc_qpn_to_slot(qpn)];
}

int mrc_qp_publish_state(struct mrc_qp *qp);

/* Does the QP check connection keys (not MRC_QP_INTEROP_NO_KEY)? */
static inline bool mrc_qp_keyed(const struct mrc_qp *qp)
{
	return !(qp->init.flags & MRC_QP_INTEROP_NO_KEY);
}

/* Do the QP's DATA packets carry a RoCEv2 ICRC trailer (MRC_QP_ICRC)? */
static inline bool mrc_qp_icrc(const struct mrc_qp *qp)
{
	return qp->init.flags & MRC_QP_ICRC;
}

/* The key our packets to the peer's QP carry. */
static inline uint32_t mrc_qp_dest_key(const struct mrc_qp *qp)
{
	return mrc_qp_keyed(qp) ? qp->attr.dest_key : MRC_KEY_INTEROP;
}

/*
 * Does a packet that reached our socket carry our key? XDP checked it
 * already for packets that came in on a plane; this is for those that did
 * not cross XDP (sent to the socket's own port from this host).
 */
static inline bool mrc_qp_key_ok(const struct mrc_qp *qp, const struct mrc_bth *bth)
{
	return !mrc_qp_keyed(qp) || mrc_bth_key(bth) == qp->local_key;
}

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
