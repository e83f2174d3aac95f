// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Congestion windows on the requester side.
 *
 * A window belongs to a destination (the peer's first plane address): all
 * QPs of this context that send there share it. XDP runs NSCC on every
 * SACK and NACK (include/mrc/nscc.h, bpf/mrc.bpf.c mrc_cc_update) and
 * publishes the window in the mmapped map mrc_cc_view; here we only read
 * it with a plain load before each packet, so a send costs no system call.
 *
 * Bytes in flight are counted here, from the same state XDP keeps: every
 * PSN sent and neither cumulatively nor selectively acked counts one MTU
 * (a lost packet waiting for its resend still counts: the resend takes
 * its place). Resends are never held back by the window.
 *
 * New packets are also paced: the window's bytes leave spread over one
 * RTT (base RTT + average queueing delay) at PACE_GAIN times cwnd / RTT,
 * not in one burst whenever an ack frees room. Without pacing, a sender
 * woken on a full window sends all the acked bytes back to back, and in
 * an incast the last hop's queue sees the senders' bursts stacked on one
 * another (docs/CONGESTION.md measures both).
 *
 * When every sender of the context is held by a full window (or its
 * pacing), the context sleeps in epoll on its event ring and socket
 * (progress.c, mrc_idle_wait); XDP writes a WINDOW event to the ring when
 * an ack arrives for a window marked `waiting` (mrc_cc_arm_wakeup); a
 * paced send wakes it by the epoll timeout (mrc_cc_pace_deadline).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cc.h"
#include "host.h"
#include "worklist.h"
#include "mrc/nscc.h"

/* Link speed assumed when a plane device does not report one. */
#define CC_FALLBACK_LINK_MBPS	10000u
/*
 * Pacing: packets leave at PACE_GAIN_PCT % of cwnd / RTT (above 100 so the
 * pace never holds a window below itself: acks, not the clock, keep the
 * bytes in flight at cwnd), with up to PACE_BURST_PKTS back to back after
 * a pause. (A gap too short to sleep through is waited out by polling:
 * PACE_SPIN_NS in progress.c.)
 */
#define PACE_GAIN_PCT		125u
#define PACE_BURST_PKTS		2u

/*
 * A window slot of the host's (one per QP it may have, mrcd's --max-qps)
 * with its first state, and its view: a fresh map of its own in
 * mrc_cc_view at the slot (replacing what a dead process left), made here
 * or by mrcd's broker (host.h), mapped here.
 */
static int claim_window(struct mrc_context *ctx, struct mrc_cc_group *g,
			const struct mrc_cc_state *st)
{
	int fd = -1, err = mrc_host_cc_claim(ctx, st, &g->slot, &fd);

	if (err)
		return err;
	g->claimed = true;
	g->view = mrc_map_state(fd, 0, sizeof(*g->view));
	close(fd);
	return g->view ? 0 : -ENOMEM;
}

/* Its view unmapped, its slot (and the view's map) given back. */
static void release_slot(struct mrc_context *ctx, struct mrc_cc_group *g)
{
	mrc_unmap_state(g->view, sizeof(*g->view));
	g->view = NULL;
	if (g->claimed)
		mrc_host_cc_release(ctx, g->slot);
	g->claimed = false;
}

/* Give back this context's windows; the maps close with the context. */
void mrc_cc_close(struct mrc_context *ctx)
{
	for (uint32_t i = 0; i < ctx->n_cc; i++) {
		release_slot(ctx, ctx->cc[i]);
		free(ctx->cc[i]);
	}
	free(ctx->cc);
	ctx->cc = NULL;
	ctx->n_cc = ctx->cap_cc = 0;
}

/* ---- profile -> parameters -------------------------------------------- */

/*
 * The QP's CC profile: the one mrcd keeps under that id (it must be
 * ONLINE). Id 0 without a stored profile means no congestion control:
 * NSCC's defaults hang on the fabric's base RTT, which a host cannot guess.
 */
static int load_cc_profile(struct mrc_qp *qp, struct mrc_cc_profile_rec *rec)
{
	uint32_t id = qp->attr.cc_profile_id;

	if (!bpf_map_lookup_elem(mrc_map_fd(qp->ctx, MRC_PIN_CC_PROFILES), &id, rec)) {
		if (rec->state == 2)	/* ONLINE */
			return 0;
		mrc_log(MRC_LOG_ERROR, "CC profile %u is not ONLINE (mrcctl profile cc "
			"online %u)", id, id);
		return -EINVAL;
	}
	if (id) {
		mrc_log(MRC_LOG_ERROR, "there is no CC profile %u (mrcctl profile cc "
			"create %u)", id, id);
		return -ENOENT;
	}
	memset(rec, 0, sizeof(*rec));
	rec->algo = MRC_CC_NONE;
	return 0;
}

/* The slowest speed (Mb/s) the plane devices report, for the BDP. */
static uint32_t planes_link_mbps(struct mrc_context *ctx, uint32_t planes)
{
	uint32_t slowest = 0;

	for (uint32_t i = 0; i < planes && i < MRC_MAX_PLANES_ABI; i++) {
		struct mrc_plane p;
		char path[64];
		long speed = -1;
		FILE *f;

		if (bpf_map_lookup_elem(mrc_map_fd(ctx, MRC_PIN_PLANES), &i, &p) || !p.ifindex)
			break;
		snprintf(path, sizeof(path), "/sys/class/net/%.16s/speed", p.name);
		f = fopen(path, "r");
		if (f) {
			if (fscanf(f, "%ld", &speed) != 1)
				speed = -1;
			fclose(f);
		}
		if (speed > 0 && (!slowest || (uint32_t)speed < slowest))
			slowest = (uint32_t)speed;
	}
	return slowest ? slowest : CC_FALLBACK_LINK_MBPS;
}

static int cc_params(struct mrc_qp *qp, struct mrc_nscc_params *p)
{
	struct mrc_cc_profile_rec rec;
	uint32_t planes = qp->n_peers ? qp->n_peers : 1, mbps;
	int err = load_cc_profile(qp, &rec);

	if (err)
		return err;
	mbps = rec.link_mbps ? rec.link_mbps : planes_link_mbps(qp->ctx, planes);
	nscc_defaults(&rec, qp->attr.path_mtu, planes, mbps, p);
	return 0;
}

/* ---- windows of this context ------------------------------------------ */

static struct mrc_cc_group *find_group(struct mrc_context *ctx, const uint8_t *peer)
{
	for (uint32_t i = 0; i < ctx->n_cc; i++)
		if (!memcmp(ctx->cc[i]->peer, peer, 16))
			return ctx->cc[i];
	return NULL;
}

/* A new window in the context's list, not yet claimed; NULL + errno. */
static struct mrc_cc_group *add_group(struct mrc_context *ctx)
{
	struct mrc_cc_group *g;
	int err = mrc_list_reserve((void ***)&ctx->cc, ctx->n_cc, &ctx->cap_cc);

	if (err) {
		errno = -err;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g) {
		errno = ENOMEM;
		return NULL;
	}
	ctx->cc[ctx->n_cc++] = g;
	return g;
}

/* Out of the context's list, its slot given back. */
static void drop_group(struct mrc_context *ctx, struct mrc_cc_group *g)
{
	for (uint32_t i = 0; i < ctx->n_cc; i++) {
		if (ctx->cc[i] != g)
			continue;
		ctx->cc[i] = ctx->cc[--ctx->n_cc];
		break;
	}
	release_slot(ctx, g);
	free(g);
}

static struct mrc_cc_group *new_group(struct mrc_context *ctx, const uint8_t *peer,
				      const struct mrc_nscc_params *p)
{
	struct mrc_cc_state st = {};
	struct mrc_cc_group *g = add_group(ctx);
	struct mrc_cc_view *v;
	int err;

	if (!g)
		return NULL;
	nscc_init(&st.nscc, p, mrc_now_ns());
	err = claim_window(ctx, g, &st);
	if (err) {
		drop_group(ctx, g);
		errno = -err;
		return NULL;
	}
	v = g->view;	/* fresh: zeroed */
	v->algo = p->algo;
	v->base_rtt_ns = p->base_rtt_ns;
	v->target_ns = p->target_ns;
	/* The first window is max_cwnd, before any SACK publishes one. */
	__atomic_store_n(&v->cwnd, p->algo == MRC_CC_NSCC ? p->max_cwnd : UINT32_MAX,
			 __ATOMIC_RELEASE);
	memcpy(g->peer, peer, 16);
	g->inflight = 0;
	g->pacing = p->algo == MRC_CC_NSCC && !(p->flags & MRC_CC_F_NO_PACING);
	g->pace_next_ns = 0;
	g->ack_unit = p->mtu ? p->mtu : 1;	/* as XDP counts (bpf/mrc/cc.h) */
	g->armed = false;
	return g;
}

int mrc_cc_attach(struct mrc_qp *qp)
{
	struct mrc_nscc_params p;
	struct mrc_cc_group *g;
	int err;

	if (qp->cc)
		return 0;
	err = cc_params(qp, &p);
	if (err)
		return err;
	g = find_group(qp->ctx, qp->peer_keys[0]);
	if (!g)
		g = new_group(qp->ctx, qp->peer_keys[0], &p);
	if (!g)
		return -errno;
	g->refs++;
	qp->cc = g;
	qp->cc_inflight = 0;
	return 0;
}

void mrc_cc_detach(struct mrc_qp *qp)
{
	struct mrc_cc_group *g = qp->cc;

	if (!g)
		return;
	mrc_wait_remove(g, qp);
	g->inflight -= qp->cc_inflight < g->inflight ? qp->cc_inflight : g->inflight;
	qp->cc = NULL;
	qp->cc_inflight = 0;
	if (--g->refs)
		return;
	drop_group(qp->ctx, g);
}

uint32_t mrc_cc_slot(const struct mrc_qp *qp)
{
	return qp->cc ? qp->cc->slot + 1 : 0;
}

/* ---- bytes in flight --------------------------------------------------- */

/* PSNs in [una, nxt) not selectively acked. */
static uint32_t packets_out(const struct mrc_qp *qp)
{
	uint32_t una = __atomic_load_n(&qp->tx->snd_una, __ATOMIC_ACQUIRE);
	uint32_t n = qp->snd_nxt - una, out = 0, psn = una;

	if (n > MRC_WINDOW_MAX)
		return 0;
	while (n) {
		uint32_t idx = psn % MRC_WINDOW_MAX, shift = idx % 64;
		uint32_t take = 64 - shift < n ? 64 - shift : n;
		uint64_t bits = __atomic_load_n(&qp->tx->sacked[idx / 64], __ATOMIC_RELAXED);
		uint64_t mask = take == 64 ? ~0ull : (1ull << take) - 1;

		out += take - (uint32_t)__builtin_popcountll((bits >> shift) & mask);
		psn += take;
		n -= take;
	}
	return out;
}

/* Bring this QP's share of the destination's bytes in flight up to date. */
void mrc_cc_refresh(struct mrc_qp *qp)
{
	struct mrc_cc_group *g = qp->cc;
	uint64_t now_out;

	qp->cc_blocked = false;
	if (!g)
		return;
	now_out = (uint64_t)packets_out(qp) * qp->attr.path_mtu;
	g->inflight = g->inflight - qp->cc_inflight + now_out;
	qp->cc_inflight = now_out;
	__atomic_store_n(&g->view->inflight,
			 g->inflight > UINT32_MAX ? UINT32_MAX : (uint32_t)g->inflight,
			 __ATOMIC_RELAXED);
}

static uint64_t cwnd_of(const struct mrc_cc_group *g)
{
	return __atomic_load_n(&g->view->cwnd, __ATOMIC_ACQUIRE);
}

/* The window's round trip: the base RTT plus the queueing delay XDP sees. */
static uint64_t window_rtt_ns(const struct mrc_cc_group *g)
{
	return (uint64_t)__atomic_load_n(&g->view->base_rtt_ns, __ATOMIC_RELAXED) +
	       __atomic_load_n(&g->view->avg_delay_ns, __ATOMIC_RELAXED);
}

/*
 * Time between two paced packets of MTU bytes: MTU x RTT / cwnd, divided
 * by the pace gain. 0 (no pacing) without NSCC, without a known RTT, or
 * when the profile turns pacing off.
 */
static uint64_t pace_gap_ns(const struct mrc_cc_group *g, uint32_t mtu)
{
	uint64_t cwnd = cwnd_of(g), rtt;

	if (!g->pacing || !cwnd || cwnd == UINT32_MAX)
		return 0;
	rtt = window_rtt_ns(g);
	return (uint64_t)mtu * rtt * 100 / (cwnd * PACE_GAIN_PCT);
}

/* Does the window take one more packet of MTU bytes? */
static bool window_has_room(const struct mrc_cc_group *g, uint32_t mtu)
{
	return g->inflight + mtu <= cwnd_of(g);
}

/*
 * Does the pace let a packet leave now? Always without pacing (no clock
 * read then) and with nothing in flight.
 */
static bool paced_ok(const struct mrc_cc_group *g)
{
	return !g->pacing || !g->inflight || mrc_now_ns() >= g->pace_next_ns;
}

/*
 * Is there room for one more packet? Always when nothing is in flight, so
 * a window below one packet still moves.
 */
bool mrc_cc_has_room(const struct mrc_qp *qp)
{
	const struct mrc_cc_group *g = qp->cc;

	if (!g || !g->inflight)
		return true;
	return window_has_room(g, qp->attr.path_mtu) && paced_ok(g);
}

/*
 * Most packets of one UDP GSO burst (send.c) the window allows: an eighth
 * of it, at least one; no limit without a window. A burst takes one path,
 * and a fabric marks and trims from per-path queues a few packets deep
 * (NSCC's ECN threshold is near its target delay's worth): bursts much
 * smaller than the window keep those queues as smooth as per-packet
 * spraying, while large windows, where the CPU is the limit, still get
 * them (measured: docs/PERFORMANCE.md, "Lever: UDP GSO bursts").
 */
#define CC_BURST_FRACTION	8u

uint32_t mrc_cc_burst_cap(const struct mrc_qp *qp)
{
	const struct mrc_cc_group *g = qp->cc;
	uint64_t cap;

	if (!g)
		return UINT32_MAX;
	cap = cwnd_of(g) / ((uint64_t)CC_BURST_FRACTION * qp->attr.path_mtu);
	return cap < 1 ? 1 : cap > UINT32_MAX ? UINT32_MAX : (uint32_t)cap;
}

/* mrc_cc_has_room(), counting the sends the window or the pace holds back. */
bool mrc_cc_may_send(struct mrc_qp *qp)
{
	const struct mrc_cc_group *g = qp->cc;

	if (mrc_cc_has_room(qp))
		return true;
	qp->cc_blocked = true;
	if (window_has_room(g, qp->attr.path_mtu))
		qp->counters.cc_paced++;
	else
		qp->counters.cc_blocked++;
	return false;
}

/*
 * The ack-request rule: when the window is nearly full (room for less than
 * two more packets), ask the responder to SACK this packet at once, so the
 * window reopens without waiting for the responder's SACK cadence.
 */
bool mrc_cc_nearly_full(const struct mrc_qp *qp)
{
	const struct mrc_cc_group *g = qp->cc;

	return g && g->inflight + 3ull * qp->attr.path_mtu > cwnd_of(g);
}

/*
 * A send the window held back: when it is full, or when other QPs wait
 * for it (progress.c serves them in turn), the QP's next turn may come
 * after a retransmission timeout. Not when only the pace held it back
 * and nobody else waits: the pace lets it go within a gap.
 */
bool mrc_cc_crowded(const struct mrc_qp *qp)
{
	const struct mrc_cc_group *g = qp->cc;

	return g && (g->waiters.n || !window_has_room(g, qp->attr.path_mtu));
}

/*
 * Account a new packet: bytes in flight, and the pace's next departure,
 * one gap on; after a pause the pace may lend up to PACE_BURST_PKTS gaps.
 */
void mrc_cc_sent(struct mrc_qp *qp)
{
	struct mrc_cc_group *g = qp->cc;
	uint64_t gap, now, earliest;

	if (!g)
		return;
	qp->cc_inflight += qp->attr.path_mtu;
	g->inflight += qp->attr.path_mtu;
	gap = pace_gap_ns(g, qp->attr.path_mtu);
	if (!gap)
		return;
	now = mrc_now_ns();
	earliest = now > PACE_BURST_PKTS * gap ? now - PACE_BURST_PKTS * gap : 0;
	g->pace_next_ns = (g->pace_next_ns > earliest ? g->pace_next_ns : earliest) + gap;
}

/*
 * When a QP with packets queued waits only for its pace (its window has
 * room), the time the pace lets the next one go. None without pacing: a
 * window without a pace (no NSCC) would otherwise give a deadline long
 * past, and its context, held by the responder's window, would never
 * sleep.
 */
bool mrc_cc_pace_deadline(struct mrc_qp *qp, uint64_t *deadline_ns)
{
	const struct mrc_cc_group *g = qp->cc;

	if (!g || !g->pacing || !g->inflight || qp->state != MRC_QP_RTS ||
	    qp->sq_send == qp->sq_tail || !window_has_room(g, qp->attr.path_mtu))
		return false;
	*deadline_ns = g->pace_next_ns;
	return true;
}

/* ---- waking a sleeping context ----------------------------------------- */

/*
 * Ask XDP for a WINDOW event once the acks of the QP's window reach
 * `after_packets` more packets (0: the next ack); a trim or a loss wakes
 * at once. QPs of one window arming for the same sleep get the soonest.
 */
void mrc_cc_arm_wakeup(struct mrc_qp *qp, uint32_t after_packets)
{
	struct mrc_cc_group *g = qp->cc;
	uint64_t at;

	if (!g)
		return;
	at = __atomic_load_n(&g->view->acked_bytes, __ATOMIC_RELAXED) +
	     (uint64_t)after_packets * g->ack_unit;
	if (g->armed && g->wake_at <= at)
		return;
	g->armed = true;
	g->wake_at = at;
	__atomic_store_n(&g->view->wake_acked, at, __ATOMIC_RELAXED);
	__atomic_store_n(&g->view->waiting, 1, __ATOMIC_SEQ_CST);
}

void mrc_cc_disarm_wakeups(struct mrc_context *ctx)
{
	for (uint32_t i = 0; i < ctx->n_cc; i++) {
		__atomic_store_n(&ctx->cc[i]->view->waiting, 0, __ATOMIC_RELAXED);
		ctx->cc[i]->armed = false;
	}
}
