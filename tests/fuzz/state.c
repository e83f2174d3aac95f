// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzed QPs and the host around them, written the way their real
 * writers write them (docs/ARCHITECTURE.md, "Who writes which shared
 * word"): libmrc publishes a QP at RTR/RTS (mrc_qps, mrc_rx, mrc_tx, the
 * EV table, the send log zeroed, a window) and then only moves its own
 * words (snd_nxt, the WR ring tail, cack and the placed bits, loss_mark
 * on a timeout, `waiting`); mrcd and the controller change EV entries
 * through user/common/ev_state.c, the CAS rules the fast path obeys too.
 * The fuzzer never writes a word XDP or TC own after publication, so any
 * change there is the programs' own doing, which check.c judges.
 */
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "fuzz.h"
#include "common/ev_state.h"
#include "common/qpmaps.h"
#include "common/state_maps.h"

const __u32 fz_qpns[FZ_QPS] = { 1, 5, 130, MRC_MAX_QPS };
const __u32 fz_remote_qpns[FZ_QPS] = { 9, 10, 11, 12 };

/* Plane 2's addresses, ours and the peer's (plane 1: the fixture's). */
static const __u8 local4_2[4] = { 198, 18, 2, 1 };
static const __u8 peer4_2[4] = { 198, 18, 2, 2 };
static const __u8 local6_2[16] = { 0xfd, 0, 0, 2, [15] = 1 };
static const __u8 peer6_2[16] = { 0xfd, 0, 0, 2, [15] = 2 };

#define FZ_AGENT_PORT	5555
#define FZ_MTU		4096

/* What userspace wrote last: mrc_qps is not mmapped, and its writer knows. */
static struct mrc_qp_info info_shadow[FZ_QPS];
/* Parameters of windows 1..FZ_QPS (a window may be shared by QPs). */
static struct mrc_nscc_params cc_shadow[FZ_QPS];

/* ---- the mmapped state maps --------------------------------------------- */

static __u32 slot_of(int i);

/*
 * The fuzzed QPs' state entries: one block shared by them all, as one
 * process's QPs share theirs; put_info_slot names each QP's entry.
 */
static struct mrc_state_blocks fz_blocks;
static __u32 fz_state_idx[FZ_QPS];

/* Entry idx of a fresh state map's fd, mapped (the fd closed); NULL on error. */
static void *map_fd(int fd, __u32 idx, size_t value_size)
{
	void *p = fd < 0 ? NULL : mrc_state_map_entry(fd, idx, value_size,
						      PROT_READ | PROT_WRITE);

	if (fd >= 0)
		close(fd);
	return p;
}

/*
 * Called after fz_env_setup (whose reset_maps gives the test QP of the
 * fixture its state): only the fuzzed QPs and windows hold state maps.
 */
int fz_maps_open(struct fz_maps *m)
{
	struct mrc_qp_state_fds fds;
	__u32 k;
	int i;

	for (k = 0; k < fx_max_qps; k++) {
		mrc_qpmaps_remove(&fx_qpmaps, k);
		bpf_map_delete_elem(MFD(mrc_cc_view), &k);
	}
	for (i = 0; i < FZ_QPS; i++) {
		if (mrc_qp_state_create(&fx_qpmaps, &fz_blocks, slot_of(i), fz_qpns[i], &fds))
			return -1;
		fz_state_idx[i] = fds.idx;
		m->tx[i] = map_fd(fds.tx, fds.idx, sizeof(*m->tx[i]));
		m->rx[i] = map_fd(fds.rx, fds.idx, sizeof(*m->rx[i]));
		m->evs[i] = map_fd(fds.evs, fds.idx, sizeof(*m->evs[i]));
		m->view[i] = map_fd(mrc_cc_view_create(&fx_qpmaps, MFD(mrc_cc_view), (__u32)i),
				    0, sizeof(*m->view[i]));
		if (!m->tx[i] || !m->rx[i] || !m->evs[i] || !m->view[i])
			return -1;
	}
	return 0;
}

void fz_maps_close(struct fz_maps *m)
{
	int i;

	for (i = 0; i < FZ_QPS; i++) {
		mrc_state_unmap(m->tx[i], sizeof(*m->tx[i]));
		mrc_state_unmap(m->rx[i], sizeof(*m->rx[i]));
		mrc_state_unmap(m->evs[i], sizeof(*m->evs[i]));
		mrc_state_unmap(m->view[i], sizeof(*m->view[i]));
	}
	mrc_state_blocks_fini(&fz_blocks);
	memset(m, 0, sizeof(*m));
}

static __u32 slot_of(int i)
{
	return mrc_qpn_to_slot(fz_qpns[i]);
}

/* A PSN's bit in a ring bitmap (placed, sacked), as libmrc's base.c. */
static void set_bit_in(__u64 *bm, __u32 psn)
{
	__u32 idx = psn % MRC_WINDOW_MAX;

	__atomic_fetch_or(&bm[idx / 64], 1ULL << (idx % 64), __ATOMIC_RELAXED);
}

static void clear_bit_in(__u64 *bm, __u32 psn)
{
	__u32 idx = psn % MRC_WINDOW_MAX;

	__atomic_fetch_and(&bm[idx / 64], ~(1ULL << (idx % 64)), __ATOMIC_RELAXED);
}

/* libmrc's mrc_qp_publish_state: the whole record, one system call. */
static void put_info_slot(__u32 slot, const struct mrc_qp_info *q)
{
	struct mrc_qp_info with_entry = *q;

	/* The QP's entry is its allocator's (fz_maps_open), like libmrc's. */
	for (int i = 0; i < FZ_QPS; i++)
		if (slot_of(i) == slot)
			with_entry.state_idx = fz_state_idx[i];
	if (bpf_map_update_elem(MFD(mrc_qps), &slot, &with_entry, BPF_ANY))
		ASSERT_TRUE(0, "write mrc_qps");
}

/* ---- the host: planes, settings, peers (mrcd and libmrc at start-up) ---- */

static void add_peers(__u32 remote, __u32 local)
{
	__u8 a[16];

	mapped4(a, peer4);
	add_peer(a, remote, local);
	mapped4(a, peer4_2);
	add_peer(a, remote, local);
	add_peer(peer6, remote, local);
	add_peer(peer6_2, remote, local);
}

int fz_env_setup(void)
{
	struct mrc_global_cfg cfg = { .agent_port = FZ_AGENT_PORT,
				      .abi_version = MRC_ABI_VERSION };
	__u32 zero = 0;
	int i;

	reset_maps();
	if (bpf_map_update_elem(MFD(mrc_cfg), &zero, &cfg, BPF_ANY))
		return -1;
	set_plane(1, lo_ifindex, local4, local6);
	/* Plane 2 on lo too: TC's plane move rewrites addresses either way. */
	set_plane(2, lo_ifindex, local4_2, local6_2);
	set_plane_of(lo_ifindex, 1);
	for (i = 0; i < FZ_QPS; i++)
		add_peers(fz_remote_qpns[i], fz_qpns[i]);
	new_ring();
	memset(info_shadow, 0, sizeof(info_shadow));
	memset(cc_shadow, 0, sizeof(cc_shadow));
	return test_state.failed ? -1 : 0;
}

/* ---- random but legal values ------------------------------------------- */

/* A 32-bit PSN, often close to the 24-bit or the 32-bit wrap. */
static __u32 psn_base(struct fz_rng *r)
{
	switch (fz_below(r, 5)) {
	case 0:
		return MRC_PSN_MASK - fz_below(r, 64);
	case 1:
		return 0xFFFFFFFFu - fz_below(r, 64);
	case 2:
		return fz_below(r, 64);
	case 3:
		return (__u32)fz_rand(r);
	default:
		return 1000 + fz_below(r, 100);
	}
}

static __u32 pick_state(struct fz_rng *r)
{
	static const __u32 states[] = { MRC_QPS_RTS, MRC_QPS_RTS, MRC_QPS_RTS,
		MRC_QPS_RTS, MRC_QPS_RTS, MRC_QPS_RTS, MRC_QPS_RTR, MRC_QPS_ERROR,
		MRC_QPS_INIT, MRC_QPS_RESET };

	return states[fz_below(r, sizeof(states) / sizeof(states[0]))];
}

static __u32 pick_mpr(struct fz_rng *r)
{
	static const __u32 mprs[] = { 1024, MRC_WINDOW_MAX, 128, 64, 1, 0 };

	return mprs[fz_below(r, sizeof(mprs) / sizeof(mprs[0]))];
}

static void fill_info(struct fz_rng *r, int i, struct mrc_qp_info *q)
{
	__u32 n_addrs = 1 + fz_below(r, 3);

	memset(q, 0, sizeof(*q));
	q->state = pick_state(r);
	/* Context 0 has a ring; 1 has none (events lost); 70 is past them. */
	q->ctx = fz_chance(r, 9, 10) ? 0 : fz_chance(r, 1, 2) ? 1 : 70;
	q->remote_qpn = fz_remote_qpns[i];
	q->mpr = pick_mpr(r);
	q->sock_port = (__u16)(SOCK_PORT + i);
	q->n_peer_addrs = (__u8)n_addrs;
	q->ev_format = fz_chance(r, 1, 3) ? MRC_EVF_STEV : MRC_EVF_UDP;
	/* An ICRC QP: TC writes trailers, XDP checks them and builds one. */
	q->flags = fz_chance(r, 1, 4) ? MRC_QP_F_ICRC : 0;
	q->n_evs = fz_chance(r, 1, 20) ? 0 : 1 + fz_below(r, MRC_MAX_EVS);
	if (fz_chance(r, 1, 2))
		mapped4(q->peer_addrs[0], peer4);
	else
		memcpy(q->peer_addrs[0], peer6, 16);
	if (fz_chance(r, 1, 2))
		mapped4(q->peer_addrs[1], peer4_2);
	else
		memcpy(q->peer_addrs[1], peer6_2, 16);
	memcpy(q->peer_addrs[2], peer6, 16);
	/* No window, a window of its own, or window 1 shared (one destination). */
	q->cc_slot = fz_chance(r, 1, 3) ? 0 : fz_chance(r, 1, 2) ? (__u32)i + 1 : 1;
}

/* The responder: window at a random place, some PSNs above cack placed. */
static void fill_rx(struct fz_rng *r, const struct mrc_qp_info *q,
		    struct mrc_rx_state *rx)
{
	__u32 span = q->mpr < 256 ? q->mpr : 256, k;

	memset(rx, 0, sizeof(*rx));
	rx->cack = psn_base(r);
	rx->mpr = q->mpr;
	rx->generation = (__u32)fz_rand(r);
	for (k = 1; k < span; k++)
		if (fz_chance(r, 1, 3))
			set_bit_in(rx->placed, rx->cack + k);
}

/* The requester: a window sent, WRITEs posted, nothing acked yet. */
static void fill_tx(struct fz_rng *r, const struct mrc_qp_info *q,
		    struct mrc_tx_state *tx)
{
	__u32 n_wr = fz_below(r, 24), k, last;

	memset(tx, 0, sizeof(*tx));
	tx->snd_una = psn_base(r);
	tx->snd_nxt = tx->snd_una + (fz_chance(r, 1, 10) ? MRC_WINDOW_MAX :
				     fz_below(r, 300));
	tx->sack_max = tx->snd_una;
	tx->loss_mark = tx->snd_una;
	tx->state = q->state;
	tx->generation = (__u32)fz_rand(r);
	tx->srtt_ns = fz_chance(r, 1, 2) ? 0 : fz_below(r, 10000000);
	tx->rtt_peak_ns = tx->srtt_ns;
	tx->wr_head = fz_chance(r, 1, 4) ? 0xFFFFFFFFu - fz_below(r, 8) : fz_below(r, 1000);
	tx->wr_tail = tx->wr_head;
	last = tx->snd_una;
	for (k = 0; k < n_wr; k++) {
		last += fz_below(r, 40);
		tx->wr[tx->wr_tail % MRC_WR_RING].last_psn = last;
		tx->wr_tail++;
	}
}

/* A legal entry word: OWED and BY_TIMEOUT only on entries out of service. */
static struct mrc_ev_entry random_entry(struct fz_rng *r, const struct mrc_qp_info *q)
{
	static const __u8 states[] = { MRC_EV_GOOD, MRC_EV_GOOD, MRC_EV_GOOD,
		MRC_EV_GOOD, MRC_EV_SKIP, MRC_EV_ASSUMED_BAD, MRC_EV_DENIED };
	struct mrc_ev_entry e = {};
	__u8 flags = fz_chance(r, 3, 4) ? MRC_EV_F_ACTIVE : 0;

	e.ev = q->ev_format == MRC_EVF_STEV ? (__u32)fz_rand(r) : 1024 + fz_below(r, 64000);
	e.plane = (__u8)(1 + fz_below(r, q->n_peer_addrs));
	e.path = (__u8)fz_below(r, 3);
	e.state = states[fz_below(r, sizeof(states))];
	if (e.state == MRC_EV_ASSUMED_BAD) {
		flags = fz_chance(r, 1, 2) ? MRC_EV_F_OWED : 0;
		if (fz_chance(r, 1, 4))
			flags |= MRC_EV_F_BY_TIMEOUT;
	}
	e.flags = flags;
	return e;
}

/* libmrc's publish_ev_table, then mrcd's and the controller's history. */
static void fill_evs(struct fz_rng *r, const struct mrc_qp_info *q,
		     struct mrc_qp_evs *e)
{
	__u32 n = q->n_evs, k, down = 0;

	memset(e, 0, sizeof(*e));
	e->stride = fz_below(r, MRC_MAX_PLANES_ABI + 2);
	e->profile = (__u16)fz_below(r, 4);
	for (k = 0; k < n; k++) {
		e->ev[k] = random_entry(r, q);
		down += mrc_ev_state_out_of_service(e->ev[k].state);
		e->perm[k] = (__u8)k;
	}
	for (k = n; k > 1; k--) {		/* Fisher-Yates */
		__u32 j = fz_below(r, k);
		__u8 t = e->perm[k - 1];

		e->perm[k - 1] = e->perm[j];
		e->perm[j] = t;
	}
	e->n_down = down;
	/* A floor at or below what is usable now (the profile's ev_min_active). */
	e->min_active = (__u16)fz_below(r, n - down + 1);
	e->next = (__u32)fz_rand(r);
}

/*
 * The send log and per-EV counters: fresh inner maps sized by the QP's
 * window and EV count, as libmrc publishes them at RTR (or, now and then,
 * none: a QP whose table was never published), then what TC logged for
 * the window sent.
 */
static void fill_send_log(struct fz_rng *r, __u32 slot, const struct mrc_tx_state *tx,
			  const struct mrc_qp_info *q)
{
	__u32 window = q->mpr < 1 ? 1 : q->mpr > MRC_WINDOW_MAX ? MRC_WINDOW_MAX : q->mpr;
	__u32 n_evs = q->n_evs, n_planes = q->n_peer_addrs, mask;
	__u64 now = mono_ns();
	__u32 psn;

	if (fz_chance(r, 1, 16)) {
		remove_log_maps(slot);	/* the QP keeps its state maps */
		return;
	}
	publish_qp_maps(slot, window, n_evs < MRC_MAX_EVS ? n_evs : MRC_MAX_EVS);
	mask = mrc_send_log_entries(window) - 1;
	memset(&log_buf, 0, sizeof(log_buf));
	if (n_evs && fz_chance(r, 3, 4)) {
		for (psn = tx->snd_una; psn != tx->snd_nxt; psn++) {
			struct mrc_send_rec *rec = &log_buf.rec[psn & mask];

			rec->psn = psn;
			rec->ev_idx = (__u8)fz_below(r, n_evs);
			rec->plane = (__u8)(1 + fz_below(r, n_planes));
			rec->flags = fz_chance(r, 1, 8) ? MRC_BTH_F_RETX : 0;
			rec->sent_ns = now - fz_below(r, 20000000);
		}
	}
	write_log_of(slot, &log_buf);
}

static void zero_slot(int fd, __u32 slot, size_t size)
{
	static __u8 zero[sizeof(struct mrc_rev_evs)];

	if (size <= sizeof(zero) && bpf_map_update_elem(fd, &slot, zero, BPF_ANY))
		ASSERT_TRUE(0, "zero a slot");
}

/* A window as libmrc creates it (new_group): parameters, state, view. */
static void write_window(struct fz_rng *r, const struct fz_maps *m, __u32 cc_slot)
{
	struct mrc_cc_profile_rec prof = { .algo = fz_chance(r, 3, 4) ? MRC_CC_NSCC : MRC_CC_NONE };
	static struct mrc_cc_state cs;
	struct mrc_cc_view *v = m->view[cc_slot - 1];
	struct mrc_nscc_params *p = &cc_shadow[cc_slot - 1];
	__u32 k = cc_slot - 1;

	prof.base_rtt_ns = fz_chance(r, 1, 4) ? 0 : 1000 + fz_below(r, 5000000);
	prof.max_cwnd_bytes = fz_chance(r, 1, 2) ? 0 : fz_below(r, 4000000);
	nscc_defaults(&prof, FZ_MTU, 1 + fz_below(r, 4), 100 + fz_below(r, 400000), p);
	memset(&cs, 0, sizeof(cs));
	nscc_init(&cs.nscc, p, mono_ns());
	if (bpf_map_update_elem(MFD(mrc_cc), &k, &cs, BPF_ANY))
		ASSERT_TRUE(0, "write mrc_cc");
	memset(v, 0, sizeof(*v));
	v->algo = p->algo;
	v->base_rtt_ns = p->base_rtt_ns;
	v->target_ns = p->target_ns;
	v->cwnd = p->algo == MRC_CC_NSCC ? (__u32)cs.nscc.cwnd : 0xffffffffu;
	v->waiting = fz_chance(r, 1, 4);
	/* Asleep until a share is acked (mrc_tx_wake_after), now and then. */
	if (fz_chance(r, 1, 2))
		v->wake_acked = fz_below(r, 64) * p->mtu;
}

void fz_randomise_qp(struct fz_rng *r, const struct fz_maps *m, int i)
{
	struct mrc_qp_info *q = &info_shadow[i];
	__u32 slot = slot_of(i);

	/* The QP goes to RESET first (nobody reads a half-built state). */
	q->state = MRC_QPS_RESET;
	put_info_slot(slot, q);
	fill_info(r, i, q);
	fill_rx(r, q, m->rx[i]);
	fill_tx(r, q, m->tx[i]);
	fill_evs(r, q, m->evs[i]);
	fill_send_log(r, slot, m->tx[i], q);
	zero_slot(MFD(mrc_rev_evs), slot, sizeof(struct mrc_rev_evs));
	if (q->cc_slot)
		write_window(r, m, q->cc_slot);
	put_info_slot(slot, q);		/* published last */
}

/* ---- what userspace does between packets --------------------------------- */

/* libmrc's send_new: a PSN's sacked bit is cleared before its first send. */
static void lib_send_new(struct fz_rng *r, struct mrc_tx_state *tx)
{
	__u32 una = __atomic_load_n(&tx->snd_una, __ATOMIC_ACQUIRE);
	__u32 nxt = tx->snd_nxt, n = 1 + fz_below(r, 48), k;

	if (nxt - una + n > MRC_WINDOW_MAX)
		return;
	for (k = 0; k < n; k++)
		clear_bit_in(tx->sacked, nxt + k);
	__atomic_store_n(&tx->snd_nxt, nxt + n, __ATOMIC_RELEASE);
}

/* libmrc's mrc_post_write: a WRITE ending at or after the last one posted. */
static void lib_post_write(struct fz_rng *r, struct mrc_tx_state *tx)
{
	__u32 tail = tx->wr_tail, last;

	if (tail - __atomic_load_n(&tx->wr_head, __ATOMIC_ACQUIRE) >= MRC_WR_RING)
		return;
	last = tail != tx->wr_head ? tx->wr[(tail - 1) % MRC_WR_RING].last_psn :
	       tx->snd_nxt;
	if (mrc_psn_before(last, tx->snd_nxt))
		last = tx->snd_nxt;
	tx->wr[tail % MRC_WR_RING].last_psn = last + fz_below(r, 40);
	__atomic_store_n(&tx->wr_tail, tail + 1, __ATOMIC_RELEASE);
}

/* libmrc's recv.c: place a PSN of the window, or advance cack over some. */
static void lib_receive(struct fz_rng *r, struct mrc_rx_state *rx)
{
	__u32 cack = rx->cack, n = fz_below(r, 16), k;

	if (fz_chance(r, 1, 2)) {
		if (rx->mpr > 1)
			set_bit_in(rx->placed, cack + 1 + fz_below(r, rx->mpr - 1));
		return;
	}
	for (k = 1; k <= n; k++)
		clear_bit_in(rx->placed, cack + k);
	__atomic_store_n(&rx->cack, cack + n, __ATOMIC_RELEASE);
	if (fz_chance(r, 1, 2))
		__atomic_exchange_n(&rx->sack_pending, 0, __ATOMIC_ACQ_REL);
}

/* mrcd (probes, port status) and the controller (deny/allow), by CAS. */
static void agent_ev_change(struct fz_rng *r, struct mrc_qp_evs *e, __u32 n)
{
	__u32 idx = fz_below(r, n);

	if (!n)
		return;
	switch (fz_below(r, 4)) {
	case 0:
		ev_promote(e, n, idx);
		break;
	case 1:
		ev_demote(e, n, idx, fz_chance(r, 1, 2) ? MRC_EV_F_BY_TIMEOUT : 0);
		break;
	case 2:
		ev_deny(e, n, idx);
		break;
	default:
		ev_allow(e, n, idx);
		break;
	}
}

void fz_user_step(struct fz_rng *r, const struct fz_maps *m, int i)
{
	struct mrc_tx_state *tx = m->tx[i];
	struct mrc_qp_info *q = &info_shadow[i];

	switch (fz_below(r, 8)) {
	case 0:
	case 1:
		lib_send_new(r, tx);
		break;
	case 2:
		lib_post_write(r, tx);
		break;
	case 3:
	case 4:
		lib_receive(r, m->rx[i]);
		break;
	case 5:
		agent_ev_change(r, m->evs[i], q->n_evs);
		break;
	case 6:
		/* resend_unacked after a timeout: holes below snd_nxt reported again. */
		__atomic_store_n(&tx->loss_mark, tx->snd_nxt, __ATOMIC_RELEASE);
		break;
	default:
		/* libmrc sleeps on a full window (mrc_cc_arm_wakeup). */
		if (q->cc_slot) {
			struct mrc_cc_view *v = m->view[q->cc_slot - 1];

			__atomic_store_n(&v->wake_acked, v->acked_bytes +
					 (fz_chance(r, 1, 2) ? fz_below(r, 16) * 4096ull : 0),
					 __ATOMIC_RELAXED);
			__atomic_store_n(&v->waiting, 1, __ATOMIC_RELEASE);
		}
		break;
	}
}

/* ---- snapshots ------------------------------------------------------------ */

static void read_counters(struct fz_snap *s)
{
	int i;

	for (i = 0; i < FZ_QPS; i++)
		s->qp[i].stats = read_qp_stats(slot_of(i));
	s->drops = read_drops();
	sum_percpu_u64(MFD(mrc_ctl_stats), 0, &s->ctl, sizeof(s->ctl), "read mrc_ctl_stats");
}

void fz_snapshot(const struct fz_maps *m, struct fz_snap *s, int counters)
{
	int i;

	for (i = 0; i < FZ_QPS; i++) {
		struct fz_qp_snap *q = &s->qp[i];
		__u32 w = info_shadow[i].cc_slot;

		q->info = info_shadow[i];
		memcpy(&q->tx, m->tx[i], sizeof(q->tx));
		memcpy(&q->rx, m->rx[i], sizeof(q->rx));
		memcpy(&q->evs, m->evs[i], sizeof(q->evs));
		if (w && w <= FZ_QPS) {
			q->cc = cc_shadow[w - 1];
			memcpy(&q->view, m->view[w - 1], sizeof(q->view));
		} else {
			memset(&q->cc, 0, sizeof(q->cc));
			memset(&q->view, 0, sizeof(q->view));
		}
	}
	if (counters)
		read_counters(s);
}

/*
 * Write a snapshot's QPs into the maps (--replay). The windows' NSCC
 * state starts afresh from the parameters: only the view was kept.
 */
void fz_restore(const struct fz_maps *m, const struct fz_snap *s)
{
	static struct mrc_cc_state cs;
	int i;

	for (i = 0; i < FZ_QPS; i++) {
		const struct fz_qp_snap *q = &s->qp[i];
		__u32 slot = slot_of(i), w = q->info.cc_slot;

		info_shadow[i] = q->info;
		memcpy(m->tx[i], &q->tx, sizeof(q->tx));
		memcpy(m->rx[i], &q->rx, sizeof(q->rx));
		memcpy(m->evs[i], &q->evs, sizeof(q->evs));
		if (w && w <= FZ_QPS) {
			__u32 k = w - 1;

			cc_shadow[k] = q->cc;
			memset(&cs, 0, sizeof(cs));
			nscc_init(&cs.nscc, &q->cc, mono_ns());
			cs.nscc.cwnd = q->view.cwnd;
			if (bpf_map_update_elem(MFD(mrc_cc), &k, &cs, BPF_ANY))
				ASSERT_TRUE(0, "write mrc_cc");
			memcpy(m->view[k], &q->view, sizeof(q->view));
		}
		put_info_slot(slot, &q->info);
	}
}

/* ---- nobody else's slot ------------------------------------------------------ */

/* Does the outer map hold an inner map at slot? */
static int holds_map(int outer_fd, __u32 slot)
{
	__u32 id = 0;

	return !bpf_map_lookup_elem(outer_fd, &slot, &id) && id;
}

static int fuzzed_slot(__u32 slot)
{
	int i;

	for (i = 0; i < FZ_QPS; i++)
		if (slot_of(i) == slot)
			return 1;
	return 0;
}

__u32 fz_unused_slots_dirty(const struct fz_maps *m)
{
	__u32 slot;

	(void)m;
	for (slot = 0; slot < fx_max_qps; slot++) {
		if (!fuzzed_slot(slot) &&
		    (holds_map(MFD(mrc_tx), slot) || holds_map(MFD(mrc_rx), slot) ||
		     holds_map(MFD(mrc_qp_evs), slot)))
			return slot + 1;
		/* Windows past the fuzzed QPs' (1..FZ_QPS) belong to nobody. */
		if (slot >= FZ_QPS && holds_map(MFD(mrc_cc_view), slot))
			return slot + 1;
	}
	return 0;
}
