// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Queue pairs: creation, the RESET-INIT-RTR-RTS-ERROR state machine and
 * what each state publishes to the fast path's maps.
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

#include "common/ev_profile.h"
#include "mrc_int.h"


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

static int claim_qpn(struct mrc_context *ctx, uint32_t *qpn)
{
	uint32_t start = (uint32_t)random() % MRC_MAX_QPS;

	for (uint32_t i = 0; i < MRC_MAX_QPS; i++) {
		uint32_t n = (start + i) % MRC_MAX_QPS + 1;

		if (!mrc_claim_slot(ctx->fd_qp_owner, n, ctx->pid)) {
			*qpn = n;
			return 0;
		}
	}
	return -ENOSPC;
}

static void qp_free(struct mrc_qp *qp)
{
	free(qp->sq);
	free(qp->retx);
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
	qp->retx_queued = calloc(MRC_BITMAP_WORDS, sizeof(uint64_t));
	qp->imm_val = calloc(MRC_WINDOW_MAX, sizeof(uint32_t));
	qp->imm_len = calloc(MRC_WINDOW_MAX, sizeof(uint32_t));
	qp->imm_pending = calloc(MRC_BITMAP_WORDS, sizeof(uint64_t));
	qp->recv_wr = calloc(qp->recv_cap, sizeof(uint64_t));
	if (!qp->sq || !qp->retx || !qp->retx_queued || !qp->imm_val ||
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
	    attr->max_recv_wr > 65536 || attr->max_sge > MRC_MAX_SGE)
		return mrc_err_ptr(EINVAL);
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return mrc_err_ptr(ENOMEM);
	qp->ctx = ctx;
	qp->init = *attr;
	if (!qp->init.max_sge)
		qp->init.max_sge = 1;
	err = qp_alloc_queues(qp);
	if (!err)
		err = claim_qpn(ctx, &qp->qpn);
	if (err) {
		qp_free(qp);
		return mrc_err_ptr(-err);
	}
	qp->slot = qp->qpn - 1;
	qp->rx = mrc_rx_state_of(ctx, qp->slot);
	qp->tx = mrc_tx_state_of(ctx, qp->slot);
	qp->state = MRC_QP_RESET;
	ctx->qps[qp->slot] = qp;
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

static int local_plane_count(struct mrc_context *ctx)
{
	int n = 0;

	for (uint32_t i = 0; i < MRC_MAX_PLANES_ABI; i++) {
		struct mrc_plane p;

		if (bpf_map_lookup_elem(ctx->fd_planes, &i, &p) || !p.ifindex)
			break;
		n++;
	}
	return n;
}

/*
 * The QP's EV profile: the one mrcd keeps under that id (it must be
 * ONLINE), or the built-in AUTO profile for id 0 when none is defined.
 */
static int load_ev_profile(struct mrc_qp *qp, struct ev_profile *p,
			   uint32_t *backups)
{
	struct mrc_ev_profile_rec rec;
	uint32_t id = qp->attr.ev_profile_id;
	char err[EV_ERR_LEN];

	if (bpf_map_lookup_elem(qp->ctx->fd_ev_profiles, &id, &rec)) {
		if (id != 0)
			return -ENOENT;
		*backups = 0;
		return ev_profile_init(p, 0, EV_PROFILE_AUTO, MRC_EVF_UDP, err,
				       sizeof(err));
	}
	if (ev_profile_from_rec(&rec, p, backups))
		return -EINVAL;
	return p->state == EV_PROFILE_STATE_ONLINE ? 0 : -EINVAL;
}

/*
 * The first rotation order: Fisher-Yates with libc's random(), swapping
 * only positions `stride` apart, as TC does when it redraws (see struct
 * mrc_qp_evs). With the table's planes in turn, the rotation visits the
 * planes in turn.
 */
static void shuffle(uint8_t *perm, uint32_t n, uint32_t stride)
{
	for (uint32_t i = 0; i < n; i++)
		perm[i] = (uint8_t)i;
	for (uint32_t i = n - 1; n > 1 && i > 0; i--) {
		uint32_t j = i - stride * ((uint32_t)random() % (i / stride + 1));
		uint8_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* Is entry i of the table on plane (i % planes) + 1 for every i? */
static bool planes_in_turn(const struct mrc_qp_evs *evs, uint32_t n,
			   uint32_t planes)
{
	for (uint32_t i = 0; i < n; i++)
		if (evs->ev[i].plane != i % planes + 1)
			return false;
	return true;
}

/*
 * Build the QP's path table from its EV profile, spread over the planes
 * both ends have, and reset its per-EV counters, send log and reverse
 * EVs. TC egress sprays over this table from the first packet.
 */
static int install_evs(struct mrc_qp *qp)
{
	struct ev_table_entry table[MRC_MAX_EVS];	/* 2 KiB */
	struct mrc_context *ctx = qp->ctx;
	/* Read-only zeros, too large for the stack: safe to share. */
	static const struct mrc_qp_ev_stats zero_stats;
	static const struct mrc_send_log zero_log;
	struct mrc_rev_evs zero_rev = {};
	struct mrc_qp_evs evs = {};
	struct ev_profile prof;
	char err[EV_ERR_LEN];
	uint32_t backups = 0, n = 0;
	int planes = local_plane_count(ctx), ret;

	if (planes > qp->n_peers)
		planes = qp->n_peers;
	if (planes < 1)
		planes = 1;
	ret = load_ev_profile(qp, &prof, &backups);
	if (ret)
		return ret;
	ret = ev_profile_generate(&prof, (unsigned int)planes, backups, table,
				  MRC_MAX_EVS, &n, err, sizeof(err));
	if (ret)
		return ret;
	for (uint32_t i = 0; i < n; i++) {
		evs.ev[i].ev = table[i].ev;
		evs.ev[i].plane = table[i].plane;
		evs.ev[i].state = MRC_EV_GOOD;
		evs.ev[i].flags = table[i].active ? MRC_EV_F_ACTIVE : 0;
	}
	/* Lists the controller wrote are used as they are. */
	if (prof.type != EV_PROFILE_EXPLICIT)
		mrc_balance_evs(qp, &evs, n);
	/* Generated tables go round the planes; explicit lists may not. */
	evs.stride = planes > 1 && n % planes == 0 &&
		     planes_in_turn(&evs, n, (uint32_t)planes) ? (uint32_t)planes : 1;
	shuffle(evs.perm, n, evs.stride);
	/* Demotions may not leave fewer usable EVs than the profile asks. */
	evs.profile = (uint16_t)qp->attr.ev_profile_id;
	evs.min_active = (uint16_t)(prof.ev_min_active < n ? prof.ev_min_active : n);
	qp->n_evs = n;
	qp->ev_format = (uint8_t)prof.format;
	if (bpf_map_update_elem(ctx->fd_qp_evs, &qp->slot, &evs, BPF_ANY) ||
	    bpf_map_update_elem(ctx->fd_ev_stats, &qp->slot, &zero_stats, BPF_ANY) ||
	    bpf_map_update_elem(ctx->fd_send_log, &qp->slot, &zero_log, BPF_ANY) ||
	    bpf_map_update_elem(ctx->fd_rev_evs, &qp->slot, &zero_rev, BPF_ANY))
		return -errno;
	return 0;
}

static int install_peers(struct mrc_qp *qp)
{
	struct mrc_peer_key key = { .remote_qpn = qp->attr.dest_qpn };

	for (int i = 0; i < qp->n_peers; i++) {
		memcpy(key.addr, qp->peer_keys[i], 16);
		if (bpf_map_update_elem(qp->ctx->fd_peers, &key, &qp->qpn, BPF_ANY))
			return -errno;
	}
	qp->maps_installed = true;
	return 0;
}

static void remove_peers(struct mrc_qp *qp)
{
	struct mrc_peer_key key = { .remote_qpn = qp->attr.dest_qpn };

	if (!qp->maps_installed)
		return;
	for (int i = 0; i < qp->n_peers; i++) {
		memcpy(key.addr, qp->peer_keys[i], 16);
		bpf_map_delete_elem(qp->ctx->fd_peers, &key);
	}
	qp->maps_installed = false;
}

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
		.n_evs = qp->state >= MRC_QP_RTR ? qp->n_evs : 0,
		.cc_slot = qp->state == MRC_QP_RTS ? mrc_cc_slot(qp) : 0,
	};

	for (int i = 0; i < qp->n_peers; i++)
		memcpy(info.peer_addrs[i], qp->peer_keys[i], 16);
	__atomic_store_n(&qp->tx->state, (uint32_t)qp->state, __ATOMIC_RELEASE);
	return bpf_map_update_elem(qp->ctx->fd_qps, &qp->slot, &info, BPF_ANY) ?
		-errno : 0;
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

static void reset_responder(struct mrc_qp *qp)
{
	struct mrc_rx_state *rx = qp->rx;

	qp->rcv_cack = qp->attr.rq_psn - 1;
	qp->rcv_highest = qp->rcv_cack;
	qp->ooo_count = 0;
	qp->rcv_bytes = 0;
	qp->imm_reserved = 0;
	qp->pkts_since_sack = 0;
	qp->sack_due = false;
	memset(qp->imm_pending, 0, MRC_BITMAP_WORDS * sizeof(uint64_t));
	memset(rx->placed, 0, sizeof(rx->placed));
	rx->sack_pending = 0;
	rx->mpr = (uint32_t)qp->attr.mpr_units * MRC_MPR_UNIT;
	__atomic_store_n(&rx->cack, qp->rcv_cack, __ATOMIC_RELEASE);
	rx->generation++;
}

static void reset_requester(struct mrc_qp *qp)
{
	struct mrc_tx_state *tx = qp->tx;
	uint32_t psn = qp->attr.sq_psn;

	memset(tx->sacked, 0, sizeof(tx->sacked));
	memset(tx->acked_sent_ns, 0, sizeof(tx->acked_sent_ns));
	tx->srtt_ns = tx->rttvar_ns = tx->rtt_peak_ns = 0;
	tx->wr_head = tx->wr_tail = 0;
	tx->sack_max = tx->loss_mark = psn;
	tx->snd_nxt = psn;
	__atomic_store_n(&tx->snd_una, psn, __ATOMIC_RELEASE);
	tx->generation++;
	qp->next_psn = qp->snd_nxt = qp->una_seen = psn;
	mrc_tx_reset(qp);
}

static int to_rtr(struct mrc_qp *qp, const struct mrc_qp_attr *attr, int mask)
{
	int need = MRC_QP_ATTR_DEST_QPN | MRC_QP_ATTR_RQ_PSN |
		   MRC_QP_ATTR_PEER_ADDRS;
	int err;

	if ((mask & need) != need)
		return -EINVAL;
	remove_peers(qp);
	err = set_peer_addrs(qp, attr);
	if (err)
		return err;
	reset_responder(qp);
	err = install_evs(qp);
	if (!err)
		err = install_peers(qp);
	return err;
}

static int to_rts(struct mrc_qp *qp, int mask)
{
	if (!(mask & MRC_QP_ATTR_SQ_PSN))
		return -EINVAL;
	reset_requester(qp);
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

	if (!qp || !attr || mask & ~0xfff)
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

int mrc_qp_counters(struct mrc_qp *qp, struct mrc_qp_counters *out)
{
	if (!qp || !out)
		return mrc_err(EINVAL);
	*out = qp->counters;
	out->cc_slot = mrc_cc_slot(qp);
	out->cc_sleeps = qp->ctx->cc_sleeps;
	return 0;
}

/* ---- error and teardown ------------------------------------------------ */

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

int mrc_destroy_qp(struct mrc_qp *qp)
{
	struct mrc_context *ctx;

	if (!qp)
		return mrc_err(EINVAL);
	ctx = qp->ctx;
	remove_peers(qp);
	qp->state = MRC_QP_RESET;
	mrc_qp_publish_state(qp);
	mrc_cc_detach(qp);
	bpf_map_delete_elem(ctx->fd_qp_owner, &qp->qpn);
	ctx->qps[qp->slot] = NULL;
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
