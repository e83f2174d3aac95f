// SPDX-License-Identifier: GPL-2.0
/*
 * The invariants, judged on the state before and after one program run
 * (two snapshots), the run itself and the events it wrote. Pure: no maps,
 * no kernel, so tests/bpf/test_fuzz feeds it corrupted snapshots and
 * checks each violation is named. Every violation reads
 * "<invariant>: <details>"; the invariant names are listed in
 * docs/SECURITY.md ("Fuzzing").
 */
#include <stdarg.h>
#include <netinet/in.h>
#include <string.h>

#include "fuzz.h"
#include "mrc/ev_rules.h"

#define XDP_ABORTED_	0
#define XDP_DROP_	1
#define XDP_TX_		3
#define XDP_REDIRECT_	4
#define TC_ACT_UNSPEC_	0xffffffffu
#define TC_ACT_SHOT_	2

static void fail(struct fz_report *rep, const char *invariant, const char *fmt, ...)
{
	char *out;
	size_t n;
	va_list ap;

	if (rep->n >= FZ_REPORT_MAX)
		return;
	out = rep->what[rep->n++];
	n = (size_t)snprintf(out, sizeof(rep->what[0]), "%s: ", invariant);
	va_start(ap, fmt);
	vsnprintf(out + n, sizeof(rep->what[0]) - n, fmt, ap);
	va_end(ap);
}

int fz_report_has(const struct fz_report *rep, const char *invariant)
{
	size_t n = strlen(invariant);
	int i;

	for (i = 0; i < rep->n; i++)
		if (!strncmp(rep->what[i], invariant, n) && rep->what[i][n] == ':')
			return 1;
	return 0;
}

/* ---- the run: verdict and the frame it emits -------------------------------- */

static void check_verdict(const struct fz_frame *f, struct fz_report *rep)
{
	__u32 v = f->verdict;

	if (f->hook == FZ_XDP) {
		if (v == XDP_ABORTED_)
			fail(rep, "verdict_legal", "XDP_ABORTED");
		else if (v > XDP_REDIRECT_)
			fail(rep, "verdict_legal", "XDP verdict %u", v);
		return;
	}
	if (v != TC_ACT_OK && v != TC_ACT_SHOT_ && v != TC_ACT_REDIRECT && v != TC_ACT_UNSPEC_)
		fail(rep, "verdict_legal", "TC verdict %d", (int)v);
}

static int emitted(const struct fz_frame *f)
{
	if (f->hook == FZ_XDP)
		return f->verdict != XDP_DROP_ && f->verdict != XDP_ABORTED_;
	return f->verdict != TC_ACT_SHOT_;
}

/*
 * An SRv6 envelope TC put on an SRv6 QP's packet (bpf/mrc/srv6.h): the
 * frame grew by exactly MRC_SRV6_ENCAP_LEN and carries, after Ethernet,
 * an outer IPv6 header whose next header is a routing header of type SRH.
 */
#define FZ_ETH_LEN	14
static int srv6_wrapped(const struct fz_frame *f)
{
	const __u8 *ip = f->out + FZ_ETH_LEN;

	return f->hook == FZ_TC && f->out_len == f->in_len + MRC_SRV6_ENCAP_LEN &&
	       f->out[12] == 0x86 && f->out[13] == 0xdd && (ip[0] >> 4) == 6 &&
	       ip[6] == IPPROTO_ROUTING && ip[40 + 2] == MRC_SRV6_ROUTING_TYPE;
}

/*
 * What leaves: never longer than what came in (but for an SRv6 envelope,
 * checked without it: the packet inside follows the same rules);
 * checksums that were valid stay valid, and a frame the program rebuilt
 * (a new length) has valid ones whatever came in. A UDP checksum of 0
 * ("none") may stay 0.
 */
static void check_output(const struct fz_frame *f, struct fz_report *rep)
{
	static __u8 inner[FZ_FRAME_MAX + MRC_SRV6_ENCAP_LEN];
	struct fz_frame unwrapped;
	int rebuilt, in_ip, out_ip, in_udp, out_udp;

	if (emitted(f) && srv6_wrapped(f)) {
		/* The inner packet behind the original Ethernet header. */
		memcpy(inner, f->out, FZ_ETH_LEN);
		memcpy(inner + FZ_ETH_LEN, f->out + FZ_ETH_LEN + MRC_SRV6_ENCAP_LEN,
		       f->out_len - FZ_ETH_LEN - MRC_SRV6_ENCAP_LEN);
		inner[12] = f->in[12];
		inner[13] = f->in[13];
		unwrapped = *f;
		unwrapped.out = inner;
		unwrapped.out_len = f->out_len - MRC_SRV6_ENCAP_LEN;
		f = &unwrapped;
	}
	rebuilt = f->out_len != f->in_len;
	if (f->out_len > f->in_len)
		fail(rep, "output_not_longer", "%u bytes in, %u out", f->in_len, f->out_len);
	if (!emitted(f) || (!rebuilt && !memcmp(f->in, f->out, f->in_len)))
		return;
	in_ip = fz_ip4_csum_state(f->in, f->in_len);
	out_ip = fz_ip4_csum_state(f->out, f->out_len);
	if (out_ip == 0 && (in_ip == 1 || rebuilt))
		fail(rep, "ipv4_checksum", "the program emits a wrong IPv4 header checksum");
	in_udp = fz_udp_csum_state(f->in, f->in_len);
	out_udp = fz_udp_csum_state(f->out, f->out_len);
	if (rebuilt && out_udp != 1)
		fail(rep, "udp_checksum", "a rebuilt frame without a valid UDP checksum (%d)",
		     out_udp);
	else if (in_udp == 1 && out_udp != 1)
		fail(rep, "udp_checksum", "a valid UDP checksum made %s",
		     out_udp == 0 ? "wrong" : "unreadable");
}

/* ---- the requester: acked <= sent, and who writes what ------------------- */

static void check_tx_order(const struct mrc_tx_state *b, const struct mrc_tx_state *a,
			   struct fz_report *rep, __u32 qpn)
{
	if (mrc_psn_before(a->snd_nxt, a->snd_una))
		fail(rep, "acked_le_sent", "qp %u snd_una %u past snd_nxt %u", qpn,
		     a->snd_una, a->snd_nxt);
	if (mrc_psn_before(a->snd_nxt, a->sack_max))
		fail(rep, "sack_max_le_sent", "qp %u sack_max %u past snd_nxt %u", qpn,
		     a->sack_max, a->snd_nxt);
	if (mrc_psn_before(a->snd_nxt, a->loss_mark))
		fail(rep, "loss_mark_le_sent", "qp %u loss_mark %u past snd_nxt %u", qpn,
		     a->loss_mark, a->snd_nxt);
	if (mrc_psn_before(a->snd_una, b->snd_una) ||
	    mrc_psn_before(a->sack_max, b->sack_max) ||
	    mrc_psn_before(a->loss_mark, b->loss_mark))
		fail(rep, "acks_monotone", "qp %u una %u->%u sack_max %u->%u loss_mark %u->%u",
		     qpn, b->snd_una, a->snd_una, b->sack_max, a->sack_max,
		     b->loss_mark, a->loss_mark);
}

/* WRITEs retired only up to the tail, and only once acked. */
static void check_wr_ring(const struct mrc_tx_state *b, const struct mrc_tx_state *a,
			  struct fz_report *rep, __u32 qpn)
{
	__u32 done = a->wr_head - b->wr_head, k;

	if (done > b->wr_tail - b->wr_head) {
		fail(rep, "wr_ring", "qp %u wr_head %u->%u past wr_tail %u", qpn,
		     b->wr_head, a->wr_head, b->wr_tail);
		return;
	}
	for (k = 0; k < done; k++) {
		__u32 last = b->wr[(b->wr_head + k) % MRC_WR_RING].last_psn;

		if (!mrc_psn_before(last, a->snd_una))
			fail(rep, "wr_ring", "qp %u WRITE ending at %u retired, snd_una %u",
			     qpn, last, a->snd_una);
	}
}

/* The PSN of [una, una + window) that owns ring slot idx. */
static __u32 psn_of_slot(__u32 una, __u32 idx)
{
	return una + ((idx - una % MRC_WINDOW_MAX) % MRC_WINDOW_MAX);
}

/*
 * The one sacked bit XDP may take back: snd_una's (after the SACK's own
 * cumulative ack moved it), when that ack shows it missing (renege_una,
 * counted in sacks_reneged).
 */
static __u64 reneged_bit(const struct fz_qp_snap *b, const struct fz_qp_snap *a,
			 __u32 w)
{
	__u32 idx = a->tx.snd_una % MRC_WINDOW_MAX;

	if (a->stats.sacks_reneged == b->stats.sacks_reneged ||
	    (idx / 64) % MRC_BITMAP_WORDS != w)
		return 0;
	return 1ULL << (idx % 64);
}

/*
 * XDP sets sacked bits only for PSNs sent and not yet acked, and clears
 * none but a reneged snd_una.
 */
static void check_sacked(const struct fz_qp_snap *qb, const struct fz_qp_snap *qa,
			 struct fz_report *rep, __u32 qpn)
{
	const struct mrc_tx_state *b = &qb->tx, *a = &qa->tx;
	__u32 w, bit;

	for (w = 0; w < MRC_BITMAP_WORDS; w++) {
		__u64 fresh = a->sacked[w] & ~b->sacked[w];

		if (b->sacked[w] & ~a->sacked[w] & ~reneged_bit(qb, qa, w))
			fail(rep, "sacked_only_set", "qp %u sacked word %u lost bits", qpn, w);
		for (bit = 0; fresh && bit < 64; bit++) {
			__u32 psn = psn_of_slot(b->snd_una, w * 64 + bit);

			if (((fresh >> bit) & 1) && !mrc_psn_before(psn, b->snd_nxt)) {
				fail(rep, "sacked_only_sent", "qp %u PSN %u SACKed, snd_nxt %u",
				     qpn, psn, b->snd_nxt);
				return;
			}
		}
	}
}

/* Words libmrc owns: XDP and TC never write them (tx->state: ERROR only). */
static void check_lib_words(const struct fz_qp_snap *b, const struct fz_qp_snap *a,
			    struct fz_report *rep, __u32 qpn)
{
	if (a->tx.snd_nxt != b->tx.snd_nxt || a->tx.wr_tail != b->tx.wr_tail ||
	    a->tx.generation != b->tx.generation ||
	    memcmp(a->tx.wr, b->tx.wr, sizeof(a->tx.wr)))
		fail(rep, "lib_words", "qp %u: snd_nxt, wr_tail, generation or wr[] changed", qpn);
	if (a->tx.state != b->tx.state && a->tx.state != MRC_QPS_ERROR)
		fail(rep, "lib_words", "qp %u: tx state %u -> %u", qpn, b->tx.state, a->tx.state);
	if (a->rx.cack != b->rx.cack || a->rx.mpr != b->rx.mpr ||
	    a->rx.generation != b->rx.generation ||
	    memcmp(a->rx.placed, b->rx.placed, sizeof(a->rx.placed)))
		fail(rep, "lib_words", "qp %u: cack, mpr, generation or placed changed", qpn);
	if (a->rx.sack_pending > 1 || (b->rx.sack_pending && !a->rx.sack_pending))
		fail(rep, "lib_words", "qp %u: sack_pending %u -> %u", qpn,
		     b->rx.sack_pending, a->rx.sack_pending);
	if (a->view.inflight != b->view.inflight || a->view.wake_acked != b->view.wake_acked ||
	    (a->view.waiting && a->view.waiting != b->view.waiting))
		fail(rep, "lib_words", "qp %u: window inflight/waiting/wake_acked written", qpn);
}

/* ---- the EV table --------------------------------------------------------------- */

/* A word a writer may leave: known state and flags, OWED only off service. */
static int ev_word_legal(const struct mrc_ev_entry *e)
{
	__u8 known = MRC_EV_F_ACTIVE | MRC_EV_F_OWED | MRC_EV_F_BY_TIMEOUT;

	if (e->state > MRC_EV_DENIED || (e->flags & ~known))
		return 0;
	if (mrc_ev_state_usable(e->state) && (e->flags & MRC_EV_F_OWED))
		return 0;
	return !(e->state == MRC_EV_ASSUMED_BAD && (e->flags & MRC_EV_F_ACTIVE));
}

/*
 * The changes the fast path makes: XDP GOOD -> SKIP, GOOD/SKIP ->
 * ASSUMED_BAD, SKIP -> GOOD (a retired entry); TC SKIP -> GOOD. Promotion
 * and DENIED belong to mrcd and the controller.
 */
static int ev_change_legal(enum fz_hook hook, __u8 from, __u8 to)
{
	if (from == to)
		return 1;
	if (from == MRC_EV_SKIP && to == MRC_EV_GOOD)
		return 1;
	if (hook == FZ_TC)
		return 0;
	return (from == MRC_EV_GOOD && to == MRC_EV_SKIP) ||
	       (mrc_ev_state_usable(from) && to == MRC_EV_ASSUMED_BAD);
}

static __u32 count_down(const struct mrc_qp_evs *e, __u32 n)
{
	__u32 k, down = 0;

	for (k = 0; k < n; k++)
		down += mrc_ev_state_out_of_service(e->ev[k].state);
	return down;
}

static void check_ev_entries(const struct fz_qp_snap *b, const struct fz_qp_snap *a,
			     enum fz_hook hook, struct fz_report *rep, __u32 qpn, __u32 n)
{
	__u32 k;

	for (k = 0; k < MRC_MAX_EVS; k++) {
		const struct mrc_ev_entry *eb = &b->evs.ev[k], *ea = &a->evs.ev[k];

		if (ea->ev != eb->ev || ea->plane != eb->plane || ea->path != eb->path ||
		    (k >= n && ea->word != eb->word)) {
			fail(rep, "ev_table_words", "qp %u entry %u: ev/plane/path written", qpn, k);
			return;
		}
		if (k >= n)
			continue;
		if (!ev_word_legal(ea)) {
			fail(rep, "ev_state_legal", "qp %u entry %u: state %u flags 0x%x", qpn,
			     k, ea->state, ea->flags);
			return;
		}
		if (!ev_change_legal(hook, eb->state, ea->state)) {
			fail(rep, "ev_transition", "qp %u entry %u: %u -> %u by %s", qpn, k,
			     eb->state, ea->state, hook == FZ_XDP ? "XDP" : "TC");
			return;
		}
	}
}

/* perm[0..n-1] names every entry below n exactly once. */
static int perm_ok(const struct mrc_qp_evs *e, __u32 n)
{
	__u8 seen[MRC_MAX_EVS] = { 0 };
	__u32 k;

	for (k = 0; k < n; k++) {
		if (e->perm[k] >= n || seen[e->perm[k]])
			return 0;
		seen[e->perm[k]] = 1;
	}
	return 1;
}

static void check_evs(const struct fz_qp_snap *b, const struct fz_qp_snap *a,
		      enum fz_hook hook, struct fz_report *rep, __u32 qpn)
{
	__u32 n = a->info.n_evs > MRC_MAX_EVS ? MRC_MAX_EVS : a->info.n_evs;
	__u32 down = count_down(&a->evs, n), min = a->evs.min_active;

	if (a->evs.stride != b->evs.stride || a->evs.profile != b->evs.profile ||
	    a->evs.min_active != b->evs.min_active)
		fail(rep, "ev_table_words", "qp %u: stride/profile/min_active written", qpn);
	check_ev_entries(b, a, hook, rep, qpn, n);
	if (b->evs.n_down == count_down(&b->evs, n) && a->evs.n_down != down)
		fail(rep, "ev_n_down", "qp %u: n_down %u, %u entries down", qpn,
		     a->evs.n_down, down);
	if (n - count_down(&b->evs, n) >= min && n - down < min)
		fail(rep, "ev_min_active", "qp %u: %u usable, floor %u", qpn, n - down, min);
	if (!perm_ok(&a->evs, n))
		fail(rep, "perm_permutation", "qp %u: perm[0..%u) is no permutation", qpn, n);
	if (hook == FZ_XDP && (memcmp(a->evs.perm, b->evs.perm, sizeof(a->evs.perm)) ||
			       a->evs.next != b->evs.next || a->evs.shuffles != b->evs.shuffles))
		fail(rep, "rotation_owner", "qp %u: XDP moved TC's rotation", qpn);
}

/* ---- the window and the counters ----------------------------------------------- */

static void check_cwnd(const struct fz_qp_snap *a, struct fz_report *rep, __u32 qpn)
{
	const struct mrc_nscc_params *p = &a->cc;
	__u32 lo = p->min_cwnd ? p->min_cwnd : p->mtu ? p->mtu : 1;

	if (!a->info.cc_slot || a->info.cc_slot > FZ_QPS)
		return;
	if (p->algo != MRC_CC_NSCC) {
		if (a->view.cwnd != 0xffffffffu)
			fail(rep, "cwnd_bounds", "qp %u: no algorithm, cwnd %u", qpn, a->view.cwnd);
		return;
	}
	if (a->view.cwnd < lo || (p->max_cwnd && a->view.cwnd > p->max_cwnd))
		fail(rep, "cwnd_bounds", "qp %u: cwnd %u outside [%u, %u]", qpn,
		     a->view.cwnd, lo, p->max_cwnd);
}

/* Each __u64 of a counter struct never goes down; the sum of the increases. */
static __u64 grown(const void *before, const void *after, size_t size, int *down)
{
	const __u64 *b = before, *a = after;
	__u64 sum = 0;
	size_t k;

	for (k = 0; k < size / sizeof(__u64); k++) {
		if (a[k] < b[k])
			*down = 1;
		else
			sum += a[k] - b[k];
	}
	return sum;
}

/* Counters only grow, and every dropped frame is counted somewhere. */
static void check_counters(const struct fz_snap *b, const struct fz_snap *a,
			   const struct fz_frame *f, struct fz_report *rep)
{
	int down = 0, i;
	__u64 traces = grown(&b->drops, &a->drops, sizeof(a->drops), &down);

	grown(&b->ctl, &a->ctl, sizeof(a->ctl), &down);
	traces += a->ctl.ep_dropped - b->ctl.ep_dropped;
	for (i = 0; i < FZ_QPS; i++) {
		grown(&b->qp[i].stats, &a->qp[i].stats, sizeof(a->qp[i].stats), &down);
		traces += a->qp[i].stats.rx_sack - b->qp[i].stats.rx_sack;
		traces += a->qp[i].stats.rx_nack - b->qp[i].stats.rx_nack;
	}
	if (down)
		fail(rep, "counters_monotone", "a counter went down");
	if (!emitted(f) && f->verdict != XDP_ABORTED_ && !traces)
		fail(rep, "drop_counted", "a frame dropped without a counter");
}

/* ---- events --------------------------------------------------------------------- */

static int qp_index(__u32 qpn)
{
	int i;

	for (i = 0; i < FZ_QPS; i++)
		if (fz_qpns[i] == qpn)
			return i;
	return -1;
}

static void check_event(const struct fz_snap *b, const struct fz_snap *a,
			const struct mrc_event *e, struct fz_report *rep)
{
	int i = qp_index(e->qpn);
	const struct mrc_tx_state *ta, *tb;

	if (i < 0 || e->type < MRC_EVT_COMPLETION || e->type > MRC_EVT_SACK_DUE) {
		fail(rep, "event_legal", "type %u for qp %u", e->type, e->qpn);
		return;
	}
	ta = &a->qp[i].tx;
	tb = &b->qp[i].tx;
	if (e->type == MRC_EVT_COMPLETION && !mrc_psn_before(e->psn, ta->snd_una))
		fail(rep, "completion_acked", "qp %u: PSN %u completed, snd_una %u",
		     e->qpn, e->psn, ta->snd_una);
	if ((e->type == MRC_EVT_LOSS || e->type == MRC_EVT_QP_FATAL) &&
	    (mrc_psn_before(e->psn, tb->snd_una) || !mrc_psn_before(e->psn, ta->snd_nxt)))
		fail(rep, "loss_in_window", "qp %u: event %u for PSN %u outside [%u, %u)",
		     e->qpn, e->type, e->psn, tb->snd_una, ta->snd_nxt);
	/* A hold only on a loss, and never past a minimum RTT. */
	if (e->hold_ns && (e->type != MRC_EVT_LOSS || e->hold_ns > tb->rtt_min_ns))
		fail(rep, "resend_hold", "qp %u: event %u held %u ns, minimum RTT %u",
		     e->qpn, e->type, e->hold_ns, tb->rtt_min_ns);
}

static void check_ev_event(const struct fz_snap *a, const struct mrc_ev_event *e,
			   struct fz_report *rep)
{
	int i = qp_index(e->qpn);

	if (i < 0 || e->state > MRC_EV_DENIED || e->reason < MRC_EVR_LOSS ||
	    e->reason > MRC_EVR_SAME_PATH || e->idx >= a->qp[i].info.n_evs)
		fail(rep, "ev_event_legal", "qp %u entry %u state %u reason %u", e->qpn,
		     e->idx, e->state, e->reason);
}

int fz_check(const struct fz_snap *b, const struct fz_snap *a,
	     const struct fz_frame *f, const struct fz_events *e,
	     struct fz_report *rep)
{
	int i;

	rep->n = 0;
	check_verdict(f, rep);
	check_output(f, rep);
	for (i = 0; i < FZ_QPS; i++) {
		const struct fz_qp_snap *qb = &b->qp[i], *qa = &a->qp[i];
		__u32 qpn = fz_qpns[i];

		check_tx_order(&qb->tx, &qa->tx, rep, qpn);
		check_wr_ring(&qb->tx, &qa->tx, rep, qpn);
		check_sacked(qb, qa, rep, qpn);
		check_lib_words(qb, qa, rep, qpn);
		check_evs(qb, qa, f->hook, rep, qpn);
		check_cwnd(qa, rep, qpn);
	}
	check_counters(b, a, f, rep);
	for (i = 0; e && i < e->n; i++)
		check_event(b, a, &e->ev[i], rep);
	for (i = 0; e && i < e->n_eve; i++)
		check_ev_event(a, &e->eve[i], rep);
	return rep->n;
}
