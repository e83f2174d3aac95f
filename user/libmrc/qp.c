// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "qp" (see LAYERS): the QP verbs. Creation, the
 * RESET-INIT-RTR-RTS-ERROR state machine and what each state publishes to
 * the fast path's maps (the publishing itself and ERROR are qp_state.c's).
 *
 * RTR installs the responder side (window, peer addresses, the EV table
 * TC stamps from); RTS installs the requester side. ERROR flushes every
 * outstanding work request with an error completion, so an application
 * never waits for a WRITE that cannot finish.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "cc.h"
#include "host.h"
#include "paths.h"
#include "qp_state.h"
#include "worklist.h"
#include "recv.h"
#include "send.h"

#define DEFAULT_MTU		1024
#define DEFAULT_MPR_UNITS	8
#define DEFAULT_TIMEOUT		14	/* 16.8 ms */
#define DEFAULT_RETRY		7
#define DEFAULT_EXP_RETRY	7
#define DEFAULT_WIMM		64

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/*
 * The QP's connection key: 32 random bits, never 0 nor MRC_KEY_INTEROP
 * (those mark "no key"); a few draws, since each is 2^-31 likely to
 * need another. An interop QP's is MRC_KEY_INTEROP.
 */
#define KEY_RANDOM_TRIES 4
_Static_assert(MRC_QP_KEY_INTEROP == MRC_KEY_INTEROP, "mrc.h and abi.h agree");

static int draw_local_key(struct mrc_qp *qp)
{
	uint32_t r[KEY_RANDOM_TRIES];
	int err;

	if (!mrc_qp_keyed(qp)) {
		qp->local_key = MRC_KEY_INTEROP;
		return 0;
	}
	err = mrc_random_bytes(r, sizeof(r));
	if (err)
		return err;
	for (int i = 0; i < KEY_RANDOM_TRIES; i++) {
		if (r[i] != 0 && r[i] != MRC_KEY_INTEROP) {
			qp->local_key = r[i];
			return 0;
		}
	}
	return -EAGAIN;
}

/*
 * A QP number peers cannot predict (among the host's 1..max_qps, mrcd's
 * --max-qps) and the QP's state: a fresh entry in this context's blocks,
 * whose maps go into mrc_rx, mrc_tx and mrc_qp_evs at its slot (replacing
 * what a dead process left), made by this process or by mrcd's broker
 * (host.h); the entry's pages are mapped here.
 */
static int qp_map_state(struct mrc_qp *qp)
{
	struct mrc_qp_state_fds fds;
	int err = mrc_host_qp_create(qp->ctx, &qp->qpn, &fds);

	if (err)
		return err;
	qp->slot = mrc_qpn_to_slot(qp->qpn);
	qp->state_idx = fds.idx;
	qp->state_block = fds.block;
	qp->rx = mrc_map_state(fds.rx, fds.idx, sizeof(*qp->rx));
	qp->tx = mrc_map_state(fds.tx, fds.idx, sizeof(*qp->tx));
	qp->evs = mrc_map_state(fds.evs, fds.idx, sizeof(*qp->evs));
	close(fds.rx);
	close(fds.tx);
	close(fds.evs);
	if (qp->rx && qp->tx && qp->evs)
		return 0;
	/* Not mapped: the entry and the number go back (qp_free unmaps the rest). */
	mrc_host_qp_destroy(qp->ctx, qp);
	return -ENOMEM;
}

static void qp_unmap_state(struct mrc_qp *qp)
{
	mrc_unmap_state(qp->rx, sizeof(*qp->rx));
	mrc_unmap_state(qp->tx, sizeof(*qp->tx));
	mrc_unmap_state(qp->evs, sizeof(*qp->evs));
	qp->rx = NULL;
	qp->tx = NULL;
	qp->evs = NULL;
}

static void qp_free(struct mrc_qp *qp)
{
	qp_unmap_state(qp);
	if (qp->log_fd >= 0)
		close(qp->log_fd);
	free(qp->sq);
	free(qp->retx);
	free(qp->held_psn);
	free(qp->held_due_ns);
	free(qp->retx_queued);
	free(qp->imm_val);
	free(qp->imm_len);
	free(qp->imm_pending);
	free(qp->recv_wr);
	free(qp);
}

static int qp_alloc_queues(struct mrc_qp *qp)
{
	qp->sq_cap = pow2_at_least(qp->init.max_send_wr);
	qp->recv_cap = pow2_at_least(qp->init.max_recv_wr ? qp->init.max_recv_wr : 1);
	qp->sq = calloc(qp->sq_cap, sizeof(*qp->sq));
	qp->retx = calloc(MRC_WINDOW_MAX, sizeof(*qp->retx));
	qp->held_psn = calloc(MRC_WINDOW_MAX, sizeof(*qp->held_psn));
	qp->held_due_ns = calloc(MRC_WINDOW_MAX, sizeof(*qp->held_due_ns));
	qp->retx_queued = calloc(MRC_BITMAP_WORDS, sizeof(uint64_t));
	qp->imm_val = calloc(MRC_WINDOW_MAX, sizeof(uint32_t));
	qp->imm_len = calloc(MRC_WINDOW_MAX, sizeof(uint32_t));
	qp->imm_pending = calloc(MRC_BITMAP_WORDS, sizeof(uint64_t));
	qp->recv_wr = calloc(qp->recv_cap, sizeof(uint64_t));
	if (!qp->sq || !qp->retx || !qp->held_psn || !qp->held_due_ns || !qp->retx_queued || !qp->imm_val ||
	    !qp->imm_len || !qp->imm_pending || !qp->recv_wr)
		return -ENOMEM;
	return 0;
}

struct mrc_qp *mrc_create_qp(struct mrc_context *ctx,
			     const struct mrc_qp_init_attr *attr)
{
	struct mrc_qp *qp;
	int err;

	if (!ctx || !attr || !attr->send_cq || !attr->recv_cq ||
	    attr->send_cq->ctx != ctx || attr->recv_cq->ctx != ctx ||
	    attr->max_send_wr == 0 || attr->max_send_wr > MRC_WR_RING ||
	    attr->max_recv_wr > 65536 || attr->max_sge > MRC_MAX_SGE ||
	    attr->flags & ~(MRC_QP_INTEROP_NO_KEY | MRC_QP_ICRC))
		return mrc_err_ptr(EINVAL);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return mrc_err_ptr(ENOMEM);
	qp->ctx = ctx;
	qp->init = *attr;
	if (!qp->init.max_sge)
		qp->init.max_sge = 1;
	qp->log_fd = -1;
	err = qp_alloc_queues(qp);
	if (!err)
		err = draw_local_key(qp);
	if (!err)
		err = qp_map_state(qp);
	if (err) {
		qp_free(qp);
		return mrc_err_ptr(-err);
	}
	qp->state = MRC_QP_RESET;
	qp->out_idx = MRC_NOT_LISTED;
	err = mrc_own_add(ctx, qp);
	if (err) {
		mrc_host_qp_destroy(ctx, qp);
		qp_free(qp);
		return mrc_err_ptr(-err);
	}
	attr->send_cq->refs++;
	attr->recv_cq->refs++;
	mrc_qp_publish_state(qp);
	return qp;
}

/* ---- what the maps see ------------------------------------------------- */

static void addr_key(const struct sockaddr_in6 *sa, uint8_t key[16])
{
	memcpy(key, &sa->sin6_addr, 16);
}

/* (peer address, peer QP) -> this QP, for TC to know its packets. */
static int install_peers(struct mrc_qp *qp)
{
	int err = mrc_host_peers_set(qp->ctx, qp->slot, qp->qpn, qp->attr.dest_qpn,
				     (uint32_t)qp->n_peers, qp->peer_keys);

	if (!err)
		qp->maps_installed = true;
	return err;
}

static void remove_peers(struct mrc_qp *qp)
{
	if (!qp->maps_installed)
		return;
	mrc_host_peers_clear(qp->ctx, qp->slot, qp->qpn, qp->attr.dest_qpn,
			     (uint32_t)qp->n_peers, qp->peer_keys);
	qp->maps_installed = false;
}

/* ---- transitions ------------------------------------------------------- */

static int set_peer_addrs(struct mrc_qp *qp, const struct mrc_qp_attr *attr)
{
	if (attr->n_peer_addrs == 0 || attr->n_peer_addrs > MRC_MAX_PLANES)
		return -EINVAL;
	for (int i = 0; i < attr->n_peer_addrs; i++) {
		const struct sockaddr_storage *ss = &attr->peer_addrs[i];
		struct sockaddr_in6 *out = &qp->peers[i];

		memset(out, 0, sizeof(*out));
		out->sin6_family = AF_INET6;
		out->sin6_port = htons(qp->ctx->udp_port);
		if (ss->ss_family == AF_INET) {
			const struct sockaddr_in *in = (const void *)ss;

			out->sin6_addr.s6_addr[10] = 0xff;
			out->sin6_addr.s6_addr[11] = 0xff;
			memcpy(&out->sin6_addr.s6_addr[12], &in->sin_addr, 4);
		} else if (ss->ss_family == AF_INET6) {
			out->sin6_addr = ((const struct sockaddr_in6 *)ss)->sin6_addr;
		} else {
			return -EAFNOSUPPORT;
		}
		addr_key(out, qp->peer_keys[i]);
	}
	qp->n_peers = attr->n_peer_addrs;
	return 0;
}

/* The peer QP's connection key: only a keyed QP takes one, never "none". */
static int set_dest_key(struct mrc_qp *qp, uint32_t key)
{
	if (!mrc_qp_keyed(qp)) {
		mrc_log(MRC_LOG_ERROR, "QP %u: dest_key given, but the QP was "
			"created with MRC_QP_INTEROP_NO_KEY (it sends no key)",
			qp->qpn);
		return -EINVAL;
	}
	if (key == 0 || key == MRC_KEY_INTEROP) {
		mrc_log(MRC_LOG_ERROR, "QP %u: dest_key 0x%08x is no connection "
			"key (a keyed peer never draws 0 or 0x%08x)", qp->qpn,
			key, MRC_KEY_INTEROP);
		return -EINVAL;
	}
	qp->attr.dest_key = key;
	return 0;
}

/* Copy the optional attributes `mask` names, after checking their range. */
static int apply_attrs(struct mrc_qp *qp, const struct mrc_qp_attr *a, int mask)
{
	if (mask & MRC_QP_ATTR_PATH_MTU) {
		if (a->path_mtu < 256 || a->path_mtu > 9000)
			return -EINVAL;
		qp->attr.path_mtu = a->path_mtu;
	}
	if (mask & MRC_QP_ATTR_MPR) {
		if (a->mpr_units == 0 ||
		    (uint32_t)a->mpr_units * MRC_MPR_UNIT > MRC_WINDOW_MAX)
			return -EINVAL;
		qp->attr.mpr_units = a->mpr_units;
	}
	if (mask & MRC_QP_ATTR_TIMEOUT) {
		if (a->timeout > 24)
			return -EINVAL;
		qp->attr.timeout = a->timeout;
	}
	if (mask & MRC_QP_ATTR_RETRY) {
		if (a->retry_cnt > 7 || a->exp_retry_cnt > 25)
			return -EINVAL;
		qp->attr.retry_cnt = a->retry_cnt;
		qp->attr.exp_retry_cnt = a->exp_retry_cnt;
	}
	if (mask & MRC_QP_ATTR_WIMM) {
		qp->attr.max_wimm_out = a->max_wimm_out;
		qp->attr.max_wimm_in = a->max_wimm_in;
	}
	if (mask & MRC_QP_ATTR_EV_PROFILE)
		qp->attr.ev_profile_id = a->ev_profile_id;
	if (mask & MRC_QP_ATTR_CC_PROFILE)
		qp->attr.cc_profile_id = a->cc_profile_id;
	if (mask & MRC_QP_ATTR_DEST_QPN) {
		if (a->dest_qpn == 0 || a->dest_qpn > MRC_QPN_MASK)
			return -EINVAL;
		qp->attr.dest_qpn = a->dest_qpn;
	}
	if (mask & MRC_QP_ATTR_RQ_PSN) {
		if (a->rq_psn > MRC_PSN_MASK)
			return -EINVAL;
		qp->attr.rq_psn = a->rq_psn;
	}
	if (mask & MRC_QP_ATTR_SQ_PSN) {
		if (a->sq_psn > MRC_PSN_MASK)
			return -EINVAL;
		qp->attr.sq_psn = a->sq_psn;
	}
	if (mask & MRC_QP_ATTR_DEST_KEY)
		return set_dest_key(qp, a->dest_key);
	return 0;
}

static void set_defaults(struct mrc_qp *qp)
{
	qp->attr.path_mtu = DEFAULT_MTU;
	qp->attr.mpr_units = DEFAULT_MPR_UNITS;
	qp->attr.timeout = DEFAULT_TIMEOUT;
	qp->attr.retry_cnt = DEFAULT_RETRY;
	qp->attr.exp_retry_cnt = DEFAULT_EXP_RETRY;
	qp->attr.max_wimm_out = DEFAULT_WIMM;
	qp->attr.max_wimm_in = DEFAULT_WIMM;
}

static int to_rtr(struct mrc_qp *qp, const struct mrc_qp_attr *attr, int mask)
{
	int need = MRC_QP_ATTR_DEST_QPN | MRC_QP_ATTR_RQ_PSN |
		   MRC_QP_ATTR_PEER_ADDRS;
	int err;

	if ((mask & need) != need)
		return -EINVAL;
	if (mrc_qp_keyed(qp) && !qp->attr.dest_key) {
		mrc_log(MRC_LOG_ERROR, "QP %u: INIT->RTR needs the peer QP's "
			"connection key (dest_key, MRC_QP_ATTR_DEST_KEY), or a QP "
			"created with MRC_QP_INTEROP_NO_KEY", qp->qpn);
		return -EINVAL;
	}
	remove_peers(qp);
	err = set_peer_addrs(qp, attr);
	if (err)
		return err;
	mrc_rx_reset(qp);
	err = mrc_install_ev_table(qp);
	if (!err)
		err = install_peers(qp);
	return err;
}

static int to_rts(struct mrc_qp *qp, int mask)
{
	if (!(mask & MRC_QP_ATTR_SQ_PSN))
		return -EINVAL;
	mrc_tx_reset(qp);
	/* The window is the requester's: it comes with RTS. */
	return mrc_cc_attach(qp);
}

static int to_reset(struct mrc_qp *qp)
{
	if (qp->state != MRC_QP_RESET && qp->state != MRC_QP_ERROR)
		mrc_qp_to_error(qp, MRC_WC_WR_FLUSH_ERR, 0);
	remove_peers(qp);
	mrc_cc_detach(qp);
	memset(&qp->attr, 0, sizeof(qp->attr));
	qp->n_peers = 0;
	qp->state = MRC_QP_RESET;
	return 0;
}

/*
 * The send log was sized by the window the QP had when its EV table was
 * published (paths.c); a new MPR after that gets a log of its size.
 */
static int resize_send_log(struct mrc_qp *qp)
{
	return mrc_qp_new_log(qp, (uint32_t)qp->attr.mpr_units * MRC_MPR_UNIT);
}

static bool transition_allowed(enum mrc_qp_state from, enum mrc_qp_state to)
{
	if (to == MRC_QP_RESET || to == MRC_QP_ERROR)
		return true;
	switch (from) {
	case MRC_QP_RESET:	return to == MRC_QP_INIT;
	case MRC_QP_INIT:	return to == MRC_QP_INIT || to == MRC_QP_RTR;
	case MRC_QP_RTR:	return to == MRC_QP_RTS;
	case MRC_QP_RTS:	return to == MRC_QP_RTS;
	default:		return false;
	}
}

int mrc_modify_qp(struct mrc_qp *qp, const struct mrc_qp_attr *attr, int mask)
{
	enum mrc_qp_state to;
	struct mrc_qp_attr saved;
	int err = 0;

	if (!qp || !attr || mask & ~0x1fff)
		return mrc_err(EINVAL);
	to = mask & MRC_QP_ATTR_STATE ? attr->qp_state : qp->state;
	if (to < MRC_QP_RESET || to > MRC_QP_ERROR ||
	    !transition_allowed(qp->state, to))
		return mrc_err(EINVAL);
	/* RESET and ERROR take no attributes: refuse rather than drop them. */
	if ((to == MRC_QP_RESET || to == MRC_QP_ERROR) &&
	    mask & ~MRC_QP_ATTR_STATE)
		return mrc_err(EINVAL);
	if (to == MRC_QP_RESET)
		return to_reset(qp) ? mrc_err(EINVAL) : mrc_qp_publish_state(qp);
	if (to == MRC_QP_ERROR) {
		mrc_qp_to_error(qp, MRC_WC_WR_FLUSH_ERR, 0);
		return 0;
	}

	saved = qp->attr;
	if (qp->state == MRC_QP_RESET)
		set_defaults(qp);
	err = apply_attrs(qp, attr, mask);
	if (!err && to == MRC_QP_RTR && qp->state == MRC_QP_INIT)
		err = to_rtr(qp, attr, mask);
	else if (!err && to == MRC_QP_RTS && qp->state == MRC_QP_RTR)
		err = to_rts(qp, mask);
	if (!err && qp->state >= MRC_QP_RTR && mask & MRC_QP_ATTR_MPR &&
	    qp->attr.mpr_units != saved.mpr_units)
		err = resize_send_log(qp);
	if (err) {
		qp->attr = saved;
		return mrc_err(-err);
	}
	qp->state = to;
	qp->attr.qp_state = to;
	err = mrc_qp_publish_state(qp);
	return err ? mrc_err(-err) : 0;
}

int mrc_query_qp(struct mrc_qp *qp, struct mrc_qp_attr *attr)
{
	if (!qp || !attr)
		return mrc_err(EINVAL);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->qp_key = qp->local_key;
	attr->n_peer_addrs = qp->n_peers;
	for (int i = 0; i < qp->n_peers; i++) {
		struct sockaddr_in6 *sa = (struct sockaddr_in6 *)&attr->peer_addrs[i];

		memset(&attr->peer_addrs[i], 0, sizeof(attr->peer_addrs[i]));
		*sa = qp->peers[i];
	}
	return 0;
}

uint32_t mrc_qp_num(const struct mrc_qp *qp)
{
	return qp ? qp->qpn : 0;
}

uint32_t mrc_qp_key(const struct mrc_qp *qp)
{
	return qp ? qp->local_key : 0;
}

int mrc_qp_counters(struct mrc_qp *qp, struct mrc_qp_counters *out)
{
	if (!qp || !out)
		return mrc_err(EINVAL);
	*out = qp->counters;
	out->cc_slot = mrc_cc_slot(qp);
	out->wait = qp->ctx->wait;
	out->wait.ring_publishes = qp->ctx->ring.publishes;
	out->wait.spin_limit_ns = qp->ctx->spin_limit_ns;
	out->cc_sleeps = qp->ctx->wait.sleeps;
	out->rx_truncated = qp->ctx->rx_truncated;
	return 0;
}

int mrc_destroy_qp(struct mrc_qp *qp)
{
	struct mrc_context *ctx;

	if (!qp)
		return mrc_err(EINVAL);
	ctx = qp->ctx;
	remove_peers(qp);
	qp->state = MRC_QP_RESET;
	mrc_qp_publish_state(qp);
	mrc_qp_unlist(qp);
	mrc_cc_detach(qp);
	/* Its state, send log and counters go (their memory with them), then its number. */
	mrc_host_qp_destroy(ctx, qp);
	mrc_own_remove(ctx, qp);
	qp->init.send_cq->refs--;
	qp->init.recv_cq->refs--;
	qp_free(qp);
	return 0;
}

int mrc_post_recv(struct mrc_qp *qp, const struct mrc_recv_wr *wr)
{
	if (!qp || !wr)
		return mrc_err(EINVAL);
	/* Receives may be posted before the QP connects, not after it failed. */
	if (qp->state == MRC_QP_ERROR)
		return mrc_err(ENOTCONN);
	if (qp->recv_tail - qp->recv_head >= qp->recv_cap ||
	    qp->recv_tail - qp->recv_head >= qp->init.max_recv_wr)
		return mrc_err(EAGAIN);
	qp->recv_wr[qp->recv_tail++ & (qp->recv_cap - 1)] = wr->wr_id;
	return 0;
}
