// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "qp_state" (see LAYERS and qp_state.h): what a QP's state shows
 * the fast path, and ERROR, which every layer above may have to enter
 * (retries spent, a peer's refusal, an access error here).
 *
 * ERROR flushes every outstanding work request with an error completion,
 * so an application never waits for a WRITE that cannot finish.
 */
#include <string.h>
#include <bpf/bpf.h>

#include "cc.h"
#include "host.h"
#include "cq_mr.h"
#include "qp_state.h"

/* mrc_qps (what XDP and TC see of the QP) and the state word XDP reads. */
int mrc_qp_publish_state(struct mrc_qp *qp)
{
	struct mrc_qp_info info = {
		.state = qp->state,
		.ctx = qp->ctx->ctx_slot,
		.remote_qpn = qp->attr.dest_qpn,
		.mpr = (uint32_t)qp->attr.mpr_units * MRC_MPR_UNIT,
		.sock_port = qp->ctx->sock_port,
		.n_peer_addrs = qp->n_peers,
		.ev_format = qp->ev_format,
		.srv6_block = qp->srv6_block,
		.state_idx = qp->state_idx,
		.n_evs = qp->state >= MRC_QP_RTR ? qp->n_evs : 0,
		.cc_slot = qp->state == MRC_QP_RTS ? mrc_cc_slot(qp) : 0,
		.local_key = qp->local_key,
		.peer_key = mrc_qp_dest_key(qp),
		.flags = (mrc_qp_keyed(qp) ? MRC_QP_F_KEYED : 0) |
			 (mrc_qp_icrc(qp) ? MRC_QP_F_ICRC : 0) |
			 (qp->tx_planes > 1 ? MRC_QP_F_SENDER_PLANE : 0),
	};

	for (int i = 0; i < qp->n_peers; i++)
		memcpy(info.peer_addrs[i], qp->peer_keys[i], 16);
	__atomic_store_n(&qp->tx->state, (uint32_t)qp->state, __ATOMIC_RELEASE);
	return mrc_host_qp_publish(qp->ctx, qp->slot, &info);
}

/* ---- error ------------------------------------------------------------- */

static void complete_send(struct mrc_qp *qp, struct mrc_send_wqe *wqe,
			  enum mrc_wc_status status)
{
	struct mrc_wc wc = {
		.wr_id = wqe->wr_id,
		.status = status,
		.opcode = MRC_WC_WRITE,
		.qp_num = qp->qpn,
		.byte_len = (uint32_t)wqe->length,
	};

	mrc_cq_push(qp->init.send_cq, &wc);
}

static void flush_receives(struct mrc_qp *qp)
{
	while (qp->recv_head != qp->recv_tail) {
		struct mrc_wc wc = {
			.wr_id = qp->recv_wr[qp->recv_head++ & (qp->recv_cap - 1)],
			.status = MRC_WC_WR_FLUSH_ERR,
			.opcode = MRC_WC_RECV_WRITE_IMM,
			.qp_num = qp->qpn,
		};

		mrc_cq_push(qp->init.recv_cq, &wc);
	}
}

/*
 * Move to ERROR: the WRITE holding `psn` (or the oldest one when psn is 0)
 * completes with first_status, every other outstanding one is flushed.
 */
void mrc_qp_to_error(struct mrc_qp *qp, enum mrc_wc_status first_status,
		     uint32_t psn)
{
	bool first_done = false;

	if (qp->state == MRC_QP_ERROR)
		return;
	qp->state = MRC_QP_ERROR;
	qp->attr.qp_state = MRC_QP_ERROR;
	mrc_qp_publish_state(qp);

	for (; qp->sq_head != qp->sq_tail; qp->sq_head++) {
		struct mrc_send_wqe *wqe = &qp->sq[qp->sq_head & (qp->sq_cap - 1)];
		bool holds = psn ? psn - wqe->first_psn < wqe->npkts : !first_done;
		enum mrc_wc_status st = MRC_WC_WR_FLUSH_ERR;

		if (holds && !first_done) {
			st = first_status;
			first_done = true;
		}
		complete_send(qp, wqe, st);
	}
	qp->sq_send = qp->sq_tail;
	qp->wimm_out = 0;
	flush_receives(qp);
	if (first_status != MRC_WC_WR_FLUSH_ERR)
		mrc_push_async(qp->ctx, qp, MRC_EVENT_QP_FATAL, first_status);
}
