/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * NSCC, the congestion control of Ultra Ethernet that MRC uses: one window
 * per destination, clocked by SACKs, steered by queueing delay and ECN.
 *
 * This file is the algorithm and nothing else: pure integer arithmetic on
 * struct mrc_nscc (include/mrc/abi.h), no maps, no clocks, no helpers. The
 * XDP program calls it under the window's spin lock; tests/unit/test_nscc/
 * drives the very same code with scripted ACK sequences.
 *
 * Each acknowledgement brings newly acked bytes, an ECN echo (the SACK's
 * M field said SKIP_ONCE) and, unless the packet was resent, an RTT
 * sample; delay = RTT - base RTT. The four quadrants:
 *
 *                  delay < target             delay >= target
 *   no ECN         proportional increase      fair increase
 *                  inc += alpha*bytes*(target-delay)/target
 *                                             inc += fi * bytes
 *   ECN            hold (the EV choice        multiplicative decrease, at
 *                  fixes a hot path)          most once per base RTT
 *
 * `inc` collects increase x cwnd; every adjust_bytes of acks or every
 * adjust period it is paid out: cwnd += inc / cwnd (+ eta at most once
 * per base RTT). Over one window that adds alpha x (target - delay) /
 * target, or fi, bytes per RTT. A whole window acked with an empty queue
 * (delay below fast_delay) switches to fast increase, cwnd += bytes x
 * fi_scale, until the queue builds again.
 *
 * Fixed point: bytes and ns are integers, fractions are x 1000 (milli).
 * The widest product is alpha_bytes x bytes (< 2^32 x 2^32), divided by
 * the target before it meets (target - delay): no overflow for windows up
 * to 4 GiB. Integer division rounds down: the window never grows more
 * than the formula says.
 */
#ifndef MRC_NSCC_H
#define MRC_NSCC_H

#include "abi.h"

#ifdef __bpf__
#define NSCC_INLINE static __always_inline
#else
#define NSCC_INLINE static inline
#endif

/* Base RTT assumed to derive defaults when a profile leaves it to measurement. */
#define MRC_NSCC_ASSUMED_BASE_RTT_NS	100000u
/* Averaging gain of the delay EWMA: 1 / 2^3. */
#define MRC_NSCC_DELAY_SHIFT		3
/* No full window-RTT period seen yet: quick adapt has nothing to compare. */
#define MRC_NSCC_QA_UNKNOWN		(~0ULL)

enum nscc_quadrant {
	NSCC_PROPORTIONAL	= 0,	/* no ECN, delay < target */
	NSCC_FAIR		= 1,	/* no ECN, delay >= target */
	NSCC_DECREASE		= 2,	/* ECN, delay >= target */
	NSCC_HOLD		= 3,	/* ECN, delay < target */
};

NSCC_INLINE __u64 nscc_base_rtt(const struct mrc_nscc *s)
{
	if (s->p.base_rtt_ns)
		return s->p.base_rtt_ns;
	return s->min_rtt_ns ? s->min_rtt_ns : MRC_NSCC_ASSUMED_BASE_RTT_NS;
}

NSCC_INLINE __u64 nscc_target(const struct mrc_nscc *s)
{
	__u64 t = s->p.target_ns ? s->p.target_ns : nscc_base_rtt(s) * 3 / 4;

	return t ? t : 1;
}

/* How often increases are paid out when acks are few. */
NSCC_INLINE __u64 nscc_adjust_period(const struct mrc_nscc *s)
{
	return s->p.adjust_period_ns ? s->p.adjust_period_ns : nscc_base_rtt(s);
}

/* Below this the queue counts as empty (fast increase); 0 = target / 8. */
NSCC_INLINE __u64 nscc_fast_delay(const struct mrc_nscc *s)
{
	return s->p.fast_delay_ns ? s->p.fast_delay_ns : nscc_target(s) / 8;
}

/* A delay above this also checks quick adapt; 0 = 4 x target. */
NSCC_INLINE __u64 nscc_qa_threshold(const struct mrc_nscc *s)
{
	return s->p.qa_threshold_ns ? s->p.qa_threshold_ns : 4 * nscc_target(s);
}

NSCC_INLINE void nscc_clamp(struct mrc_nscc *s)
{
	__u64 lo = s->p.min_cwnd ? s->p.min_cwnd : s->p.mtu ? s->p.mtu : 1;

	if (s->p.max_cwnd && s->cwnd > s->p.max_cwnd)
		s->cwnd = s->p.max_cwnd;
	if (s->cwnd < lo)
		s->cwnd = lo;
}

/* A new window starts full open (max_cwnd), as the reference does. */
NSCC_INLINE void nscc_init(struct mrc_nscc *s, const struct mrc_nscc_params *p,
			   __u64 now)
{
	__builtin_memset(s, 0, sizeof(*s));
	s->p = *p;
	s->cwnd = p->max_cwnd;
	s->last_adjust_ns = now;
	s->qa_start_ns = now;
	s->last_eta_ns = now;
	s->qa_last_bytes = MRC_NSCC_QA_UNKNOWN;
	nscc_clamp(s);
}

/* Track the smallest RTT and the average delay; returns this sample's delay. */
NSCC_INLINE __u64 nscc_take_rtt(struct mrc_nscc *s, __u64 rtt)
{
	__u64 base, delay;

	if (rtt <= 0xffffffffULL && (!s->min_rtt_ns || rtt < s->min_rtt_ns))
		s->min_rtt_ns = (__u32)rtt;
	base = nscc_base_rtt(s);
	delay = rtt > base ? rtt - base : 0;
	s->avg_delay_ns = s->avg_delay_ns - (s->avg_delay_ns >> MRC_NSCC_DELAY_SHIFT) +
			  (delay >> MRC_NSCC_DELAY_SHIFT);
	return delay;
}

NSCC_INLINE enum nscc_quadrant nscc_quadrant(const struct mrc_nscc *s,
					     __u64 delay, int ecn)
{
	int late = delay >= nscc_target(s);

	if (!ecn)
		return late ? NSCC_FAIR : NSCC_PROPORTIONAL;
	return late ? NSCC_DECREASE : NSCC_HOLD;
}

/*
 * Multiplicative decrease by how far the average delay (or delay_floor,
 * when larger) overshoots the target:
 * cwnd *= max(1 - gamma x (avg - target) / avg, max_md_jump).
 */
NSCC_INLINE void nscc_decrease(struct mrc_nscc *s, __u64 now, __u64 delay_floor)
{
	__u64 target = nscc_target(s), cut, factor;
	__u64 avg = s->avg_delay_ns > delay_floor ? s->avg_delay_ns : delay_floor;

	if (now - s->last_md_ns < nscc_base_rtt(s) && s->n_md)
		return;		/* at most once per base RTT */
	if (avg <= target)
		return;		/* the average is still fine: no cut */
	cut = (__u64)s->p.gamma_milli * (avg - target) / avg;
	factor = cut < 1000 ? 1000 - cut : 0;
	if (factor < s->p.md_jump_milli)
		factor = s->p.md_jump_milli;
	s->cwnd = s->cwnd * factor / 1000;
	s->last_md_ns = now;
	s->n_md++;
	nscc_clamp(s);
}

/* Proportional increase, and fast increase once a whole window saw no queue. */
NSCC_INLINE void nscc_proportional(struct mrc_nscc *s, __u64 bytes, __u64 delay)
{
	__u64 target = nscc_target(s);

	s->inc += (__u64)s->p.alpha_bytes * bytes / target * (target - delay);
	if (delay >= nscc_fast_delay(s)) {
		s->fast_bytes = 0;
		return;
	}
	if (s->fast_bytes < s->cwnd) {
		s->fast_bytes += bytes;
		return;
	}
	/* In fast increase until the queue builds (which resets fast_bytes). */
	s->fast_bytes = ~0ULL;
	s->cwnd += bytes * s->p.fi_scale_milli / 1000;
	s->n_fast++;
	nscc_clamp(s);
}

/* Pay out the collected increase every adjust_bytes or adjust period. */
NSCC_INLINE void nscc_fulfil(struct mrc_nscc *s, __u64 bytes, __u64 now)
{
	s->adjust_acked += bytes;
	if (s->adjust_acked < s->p.adjust_bytes &&
	    now - s->last_adjust_ns < nscc_adjust_period(s))
		return;
	if (s->cwnd)
		s->cwnd += s->inc / s->cwnd;
	if (now - s->last_eta_ns >= nscc_base_rtt(s)) {
		s->cwnd += s->p.eta_bytes;
		s->last_eta_ns = now;
	}
	s->inc = 0;
	s->adjust_acked = 0;
	s->last_adjust_ns = now;
	s->n_fulfil++;
	nscc_clamp(s);
}

/*
 * The round trip a window takes now: base RTT plus the average delay.
 * Quick adapt measures goodput over this, not over the base RTT: with
 * few packets in flight and a delay above the base, a base RTT may see
 * no ack at all, and a window that does deliver would read as zero.
 */
NSCC_INLINE __u64 nscc_window_rtt(const struct mrc_nscc *s)
{
	return nscc_base_rtt(s) + s->avg_delay_ns;
}

/* Bytes acked per window RTT: what quick adapt calls the achieved goodput. */
NSCC_INLINE void nscc_count_goodput(struct mrc_nscc *s, __u64 bytes, __u64 now)
{
	if (now - s->qa_start_ns >= nscc_window_rtt(s)) {
		s->qa_last_bytes = s->qa_bytes;
		s->qa_bytes = 0;
		s->qa_start_ns = now;
	}
	s->qa_bytes += bytes;
}

/*
 * Quick adapt: after trims, losses or a huge delay, at most once per
 * window RTT (base RTT + average delay), a window far above what actually
 * got through (the last window RTT delivered less than max_cwnd >>
 * qa_gate) drops to that goodput at once instead of shrinking step by
 * step. Returns 1 when it acted.
 */
NSCC_INLINE int nscc_quick_adapt(struct mrc_nscc *s, __u64 now)
{
	__u64 got;

	nscc_count_goodput(s, 0, now);	/* a period that just ended counts */
	got = s->qa_last_bytes;
	if (s->p.flags & MRC_CC_F_DISABLE_QA || got == MRC_NSCC_QA_UNKNOWN)
		return 0;
	if (s->n_qa && now - s->last_qa_ns < nscc_window_rtt(s))
		return 0;
	/* Only ever down: a congestion signal never opens the window. */
	if (got >= s->cwnd || got >= ((__u64)s->p.max_cwnd >> (s->p.qa_gate & 31)))
		return 0;
	s->cwnd = got;
	s->inc = 0;
	s->fast_bytes = 0;
	s->last_qa_ns = now;
	s->n_qa++;
	nscc_clamp(s);
	return 1;
}

/*
 * One acknowledgement: `bytes` newly acked, `rtt` the trigger's RTT (0 =
 * none: it was resent), `ecn` the echo of a CE mark. Returns the quadrant.
 */
NSCC_INLINE enum nscc_quadrant nscc_on_ack(struct mrc_nscc *s, __u64 bytes,
					   __u64 rtt, int ecn, __u64 now)
{
	__u64 delay = rtt ? nscc_take_rtt(s, rtt) : s->avg_delay_ns;
	enum nscc_quadrant q = nscc_quadrant(s, delay, ecn);

	s->acked_bytes += bytes;
	nscc_count_goodput(s, bytes, now);
	switch (q) {
	case NSCC_PROPORTIONAL:
		nscc_proportional(s, bytes, delay);
		break;
	case NSCC_FAIR:
		s->inc += (__u64)s->p.fi_bytes * bytes;
		s->fast_bytes = 0;
		break;
	case NSCC_DECREASE:
		s->fast_bytes = 0;
		nscc_decrease(s, now, 0);
		break;
	case NSCC_HOLD:
		s->fast_bytes = 0;
		break;
	}
	if (rtt && delay > nscc_qa_threshold(s))
		nscc_quick_adapt(s, now);
	nscc_fulfil(s, bytes, now);
	return q;
}

/*
 * A trimmed packet (NACK TRIMMED or TRIMMED_LASTHOP): its bytes left the
 * network, and the window shrinks by as much (never below min_cwnd,
 * one MTU unless the profile says otherwise).
 *
 * A last-hop trim also counts as the ECN echo the last hop does not give
 * (it never marks: a CE mark must mean "this path is hot, steer away",
 * and at the last hop every path is the same). So an incast, whose only
 * signal is last-hop trims, gets the multiplicative decrease of the
 * (ECN, delay >= target) quadrant, at most once per base RTT; alone, the
 * one-MTU cuts would balance the fair increase only at the price of
 * several resends per RTT per sender. The trim also says the last hop's
 * queue passed its trim threshold, which a fabric sets above the target
 * delay: the cut takes the delay as at least 2 x target, even while the
 * average (dragged down by the other paths' packets) looks fine.
 */
NSCC_INLINE void nscc_on_trim(struct mrc_nscc *s, __u64 bytes, int last_hop,
			      __u64 now)
{
	s->n_trims++;
	s->cwnd = s->cwnd > bytes ? s->cwnd - bytes : 0;
	nscc_clamp(s);
	if (nscc_quick_adapt(s, now))
		return;
	if (last_hop)
		nscc_decrease(s, now, 2 * nscc_target(s));
}

/* Packets declared lost: only quick adapt reacts (loss may be a bad path). */
NSCC_INLINE void nscc_on_loss(struct mrc_nscc *s, __u32 packets, __u64 now)
{
	s->n_losses += packets;
	nscc_quick_adapt(s, now);
}

/* ---------------------------------------------------------------------- */
/* Defaults, as the reference derives them                                */
/* ---------------------------------------------------------------------- */

/*
 * With BDP = planes x link speed x base RTT, a = BDP / 150 KB and
 * b = target / 12 us: max_cwnd = 1.5 BDP, fi = 5 MTU a, eta = 0.15 MTU a,
 * fi_scale = 0.25 a, alpha = 4 a b MTU (increase per RTT at zero delay;
 * the reference's alpha is this / target, applied to bytes x (target -
 * delay)), target = 0.75 base RTT, qa_gate 3, gamma 0.8, max_md_jump 0.5,
 * adjust every 8 MTU or one base RTT. Computed from the BDP directly (no
 * rounded a and b), saturating at 32 bits. Left 0, and derived from the
 * target in force at run time: the fast-increase delay (target / 8) and
 * the quick-adapt delay threshold (4 x target), so a measured base RTT
 * moves them too. Whatever the profile sets explicitly wins.
 */
NSCC_INLINE __u32 nscc_sat32(__u64 v)
{
	return v > 0xffffffffULL ? 0xffffffffU : (__u32)v;
}

NSCC_INLINE void nscc_defaults(const struct mrc_cc_profile_rec *prof, __u32 mtu,
			       __u32 planes, __u32 link_mbps,
			       struct mrc_nscc_params *p)
{
	__u64 base = prof->base_rtt_ns ? prof->base_rtt_ns : MRC_NSCC_ASSUMED_BASE_RTT_NS;
	__u64 bps = (__u64)planes * link_mbps * 125000;	/* bytes per second */
	__u64 bdp = bps / 1000 * base / 1000000;	/* bytes */
	__u64 target = prof->target_delay_ns ? prof->target_delay_ns : base * 3 / 4;
	__u64 max_cwnd, a4;

	__builtin_memset(p, 0, sizeof(*p));
	if (bdp < mtu)
		bdp = mtu;
	max_cwnd = prof->max_cwnd_bytes ? prof->max_cwnd_bytes : bdp * 3 / 2;
	if (max_cwnd < 2ULL * mtu)
		max_cwnd = 2ULL * mtu;

	p->algo = prof->algo;
	p->flags = (__u8)prof->flags;
	p->mtu = mtu;
	p->base_rtt_ns = prof->base_rtt_ns;
	p->target_ns = prof->target_delay_ns ? prof->target_delay_ns :
		       prof->base_rtt_ns ? nscc_sat32(target) : 0;
	p->max_cwnd = nscc_sat32(max_cwnd);
	p->min_cwnd = mtu;
	p->fi_bytes = prof->fi_bytes ? prof->fi_bytes : nscc_sat32(5ULL * mtu * bdp / 150000);
	p->eta_bytes = prof->eta_bytes ? prof->eta_bytes :
		       nscc_sat32(15ULL * mtu * bdp / 15000000);
	p->fi_scale_milli = prof->fi_scale_milli ? prof->fi_scale_milli :
			    nscc_sat32(250 * bdp / 150000);
	a4 = 4 * bdp * mtu / 150000;
	/* a4 x target may not fit 64 bits: saturate before multiplying. */
	p->alpha_bytes = prof->alpha_bytes ? prof->alpha_bytes :
			 a4 > 0xffffffffULL * 12000 / (target ? target : 1) ? 0xffffffffU :
			 nscc_sat32(a4 * target / 12000);
	p->qa_threshold_ns = prof->qa_threshold_ns;
	p->adjust_bytes = prof->adjust_bytes ? prof->adjust_bytes : 8 * mtu;
	p->adjust_period_ns = prof->adjust_period_ns ? prof->adjust_period_ns :
			      prof->base_rtt_ns;
	p->fast_delay_ns = 0;
	p->gamma_milli = (__u16)(prof->gamma_milli ? prof->gamma_milli : 800);
	p->md_jump_milli = (__u16)(prof->max_md_jump_milli ? prof->max_md_jump_milli : 500);
	p->qa_gate = (__u8)(prof->qa_gate ? prof->qa_gate : 3);
}

#endif /* MRC_NSCC_H */
