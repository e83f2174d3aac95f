/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Congestion control glue: feed NSCC (include/mrc/nscc.h, the algorithm
 * itself) from SACKs and NACKs, one window per destination (mrc_cc), and
 * publish the result to the mmapped view libmrc reads before each send
 * (mrc_cc_view); wake a context whose window opened.
 */
#ifndef MRC_BPF_CC_H
#define MRC_BPF_CC_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "mrc/nscc.h"
#include "parsing.h"
#include "mrc/maps.h"
#include "mrc/stats.h"
#include "mrc/bits.h"

/* Flags of a window update (bits of mrc_cc_update's last argument). */
#define CC_ECN		1u	/* the SACK echoed a CE mark */
#define CC_LAST_HOP	2u	/* the trim happened at the last hop */

/* What one SACK or NACK tells the destination's window. */
struct cc_input {
	__u64 rtt;		/* the trigger's RTT; 0 = none (resent) */
	__u32 acked;		/* packets newly acked */
	__u32 trims;		/* packets trimmed (NACK TRIMMED*) */
	__u32 last_hop;		/* ... at the last hop (incast) */
	__u32 losses;		/* packets declared lost */
	__u32 ecn;		/* the trigger was CE marked */
};

/* PSNs not SACKed among the up to 64 from *from that share one ring word. */
static __always_inline __u32 unsacked_in_word(const struct mrc_tx_state *tx,
					      __u32 *from, __u32 *n)
{
	__u32 idx = *from % MRC_WINDOW_MAX, shift = idx % 64;
	__u32 take = 64 - shift < *n ? 64 - shift : *n;
	__u64 bits = READ_ONCE(tx->sacked[(idx / 64) & (MRC_BITMAP_WORDS - 1)]) >> shift;
	__u64 mask = take >= 64 ? ~0ULL : (1ULL << take) - 1;

	*from += take;
	*n -= take;
	return take - popcount64(bits & mask);
}

/*
 * PSNs in [from, to) not selectively acked before: what a cumulative ack
 * newly acknowledges (the SACKed ones were counted when their SACK came).
 * Only the first 128 are looked at: a longer jump is a hole filled by a
 * resend below PSNs that SACKs acknowledged (and counted) long ago, so
 * the rest counts as acked before. Straight-line code: a loop here would
 * multiply the verifier's states by its rounds.
 */
static __always_inline __u32 count_unsacked(const struct mrc_tx_state *tx,
					    __u32 from, __u32 to)
{
	__u32 n = to - from, got;

	if (n > MRC_WINDOW_MAX)
		return 0;
	if (n > 128)
		n = 128;
	if (!n)
		return 0;
	got = unsacked_in_word(tx, &from, &n);
	if (n)
		got += unsacked_in_word(tx, &from, &n);
	if (n)
		got += unsacked_in_word(tx, &from, &n);
	return got;
}

/*
 * Run the algorithm and publish the result to the view, all under the
 * window's lock (plain stores to another map value are allowed there;
 * helper calls are not, so everything here is inline arithmetic).
 */
static __always_inline void cc_run(struct mrc_nscc *s, const struct cc_input *in,
				   __u64 now, struct mrc_cc_view *v)
{
	__u64 mtu = s->p.mtu ? s->p.mtu : 1;

	if (s->p.algo == MRC_CC_NSCC) {
		if (in->acked || in->rtt)
			nscc_on_ack(s, in->acked * mtu, in->rtt, in->ecn, now);
		if (in->trims)
			nscc_on_trim(s, in->trims * mtu, in->last_hop, now);
		if (in->losses)
			nscc_on_loss(s, in->losses, now);
	} else {
		/* No window, but the same measurements for mrcctl and benchmarks. */
		if (in->rtt)
			nscc_take_rtt(s, in->rtt);
		s->acked_bytes += in->acked * mtu;
		s->n_trims += in->trims;
		s->n_losses += in->losses;
	}
	if (s->p.algo != MRC_CC_NSCC)
		WRITE_ONCE(v->cwnd, 0xffffffffU);
	else
		WRITE_ONCE(v->cwnd, s->cwnd > 0xffffffffULL ? 0xffffffffU : (__u32)s->cwnd);
	WRITE_ONCE(v->algo, s->p.algo);
	WRITE_ONCE(v->base_rtt_ns, (__u32)nscc_base_rtt(s));
	WRITE_ONCE(v->min_rtt_ns, s->min_rtt_ns);
	WRITE_ONCE(v->avg_delay_ns, s->avg_delay_ns > 0xffffffffULL ? 0xffffffffU :
				    (__u32)s->avg_delay_ns);
	WRITE_ONCE(v->target_ns, (__u32)nscc_target(s));
	WRITE_ONCE(v->n_md, s->n_md);
	WRITE_ONCE(v->n_fast, s->n_fast);
	WRITE_ONCE(v->n_qa, s->n_qa);
	WRITE_ONCE(v->n_trims, s->n_trims);
	WRITE_ONCE(v->n_losses, s->n_losses);
	WRITE_ONCE(v->acked_bytes, s->acked_bytes);
}

/*
 * libmrc sleeps when the window is full and sets `waiting`; the first ack
 * that frees room clears it and wakes the context through its event ring.
 * "Room" is what libmrc asked for (wake_acked): each wake costs the
 * sleeper a ring notification and a context switch, so a sender the
 * responder's window holds sleeps until a share of it is free. A trim or
 * a loss (`urgent`) wakes it at once: there is a resend to make.
 */
static __always_inline void cc_wake(struct mrc_cc_view *v, __u32 ctx, __u32 qpn,
				    bool urgent)
{
	struct mrc_event evt = { .type = MRC_EVT_WINDOW, .qpn = qpn };
	void *ring;
	struct mrc_ctl_stats *cs;

	if (!READ_ONCE(v->waiting))
		return;
	if (!urgent && READ_ONCE(v->acked_bytes) < READ_ONCE(v->wake_acked))
		return;
	if (__sync_val_compare_and_swap(&v->waiting, 1, 0) != 1)
		return;
	ring = bpf_map_lookup_elem(&mrc_events, &ctx);
	if (!ring || bpf_ringbuf_output(ring, &evt, sizeof(evt), 0))
		count_drop(MRC_DROP_RING_FULL);
	cs = ctl_stats();
	if (cs)
		cs->cc_wakeups++;
}

/*
 * A global function: the verifier checks it once, on its own, instead of
 * along every path of the SACK and NACK code that calls it (the many
 * branches of NSCC times those paths would exceed its budget), and its
 * stack frame is not stacked on the loss scan's nested callbacks. Hence
 * scalar arguments only, packed: who = (cc_slot - 1) << 48 | context
 * << 32 | qpn (16 bits hold window slots 0..MRC_QPS_LIMIT - 1); una_range = the cumulative ack before << 32 | after (the PSNs it
 * newly acked that no SACK had acked yet count too); counts = SACKed now
 * << 32 | trims; flags = losses << 32 | last-hop trim << 1 | ecn.
 */
__noinline int mrc_cc_update(__u64 who, __u64 una_range, __u64 rtt, __u64 counts,
			     __u64 flags)
{
	__u32 slot = (__u32)(who >> 48), qpn = (__u32)who & MRC_QPN_MASK;
	__u32 tx_slot = mrc_qpn_to_slot(qpn);
	struct cc_input in = {
		.rtt = rtt,
		.acked = (__u32)(counts >> 32),
		.trims = (__u32)counts,
		.losses = (__u32)(flags >> 32),
		.ecn = ((__u32)flags & CC_ECN) != 0,
		.last_hop = ((__u32)flags & CC_LAST_HOP) != 0,
	};
	struct mrc_tx_state *tx;
	struct mrc_cc_state *cs;
	struct mrc_cc_view *v;
	__u64 now;

	/* Slots past the maps' sizes (mrcd's --max-qps) fail the lookups. */
	tx = qp_tx_state(tx_slot);
	cs = bpf_map_lookup_elem(&mrc_cc, &slot);
	v = cc_view_of(slot);
	if (!tx || !cs || !v)
		return 0;
	in.acked += count_unsacked(tx, (__u32)(una_range >> 32), (__u32)una_range);
	if (rtt)
		__sync_fetch_and_add(&v->rtt_hist[mrc_rtt_bucket(rtt) &
						  (MRC_RTT_BUCKETS - 1)], 1);
	now = bpf_ktime_get_ns();
	bpf_spin_lock(&cs->lock);
	cc_run(&cs->nscc, &in, now, v);
	bpf_spin_unlock(&cs->lock);
	if (in.acked || in.trims)
		cc_wake(v, (__u32)(who >> 32) & 0xffff, qpn, in.trims || in.losses);
	return 0;
}

static __always_inline void cc_update(const struct mrc_qp_info *info, __u32 qpn,
				      __u32 old_una, __u32 una, __u64 rtt,
				      __u32 sacked, __u32 trims, __u32 losses, __u32 flags)
{
	/*
	 * Only 16 bits of each fit in `who`: refuse a slot past the window
	 * number space, and name a context past it by one that has no ring
	 * (the event is counted lost, as emit_event() does), rather than
	 * alias them. Slots and contexts past the maps' run-time sizes fail
	 * their lookups.
	 */
	__u32 ctx = info->ctx < MRC_CTX_LIMIT ? info->ctx : MRC_CTX_LIMIT;

	if (!info->cc_slot || info->cc_slot > MRC_QPS_LIMIT)
		return;
	mrc_cc_update((__u64)(info->cc_slot - 1) << 48 | (__u64)ctx << 32 | qpn,
		      (__u64)old_una << 32 | una, rtt, (__u64)sacked << 32 | trims,
		      (__u64)losses << 32 | flags);
}

#endif /* MRC_BPF_CC_H */
