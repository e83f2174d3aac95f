/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * MRC-XDP ABI, congestion control part: the per-destination windows XDP
 * keeps under a spin lock and the lock-free view libmrc reads before each
 * send. Same rules as include/mrc/abi.h, which includes this file at its
 * end (the guard is set first, so either may be included first).
 */
#ifndef MRC_ABI_CC_H
#define MRC_ABI_CC_H

#include "mrc/abi.h"

/* ---------------------------------------------------------------------- */
/* Congestion control: NSCC (Ultra Ethernet), one window per destination   */
/* ---------------------------------------------------------------------- */

enum mrc_cc_algo {
	MRC_CC_NONE	= 0,	/* only the responder's window (MPR) limits */
	MRC_CC_NSCC	= 1,
};

enum mrc_cc_flags {
	MRC_CC_F_DISABLE_QA	= 1 << 0,	/* no quick adapt */
	MRC_CC_F_NO_PACING	= 1 << 1,	/* libmrc sends a window's room at once */
};
#define MRC_CC_F_ALL	(MRC_CC_F_DISABLE_QA | MRC_CC_F_NO_PACING)

/*
 * A CC profile as mrcctl stores it. Zero in a tunable means "derive it"
 * (see mrc_nscc_defaults() in include/mrc/nscc.h): from the base RTT, the
 * link speed of the planes and the MTU, as the reference does.
 */
struct mrc_cc_profile_rec {
	__u16	id;
	__u8	state;		/* as EV profiles */
	__u8	algo;		/* enum mrc_cc_algo */
	__u32	base_rtt_ns;		/* 0 = the smallest RTT measured */
	__u32	target_delay_ns;	/* 0 = 0.75 x base RTT */
	__u32	max_cwnd_bytes;		/* 0 = 1.5 x BDP (also the first window) */
	__u32	gamma_milli;		/* multiplicative decrease factor x 1000 */
	__u32	max_md_jump_milli;	/* smallest decrease factor x 1000 */
	__u32	qa_gate;		/* quick adapt below max_cwnd >> qa_gate; 0 = 3 */
	__u32	link_mbps;		/* one plane's speed; 0 = the device's */
	__u32	fi_bytes;		/* fair increase per RTT; 0 = 5 MTU a */
	__u32	fi_scale_milli;		/* fast increase x 1000; 0 = 250 a */
	__u32	eta_bytes;		/* per fulfilment; 0 = 0.15 MTU a */
	__u32	alpha_bytes;		/* proportional gain; 0 = 4 a b MTU */
	__u32	qa_threshold_ns;	/* delay that also checks QA; 0 = 4 x target */
	__u32	adjust_bytes;		/* fulfil every ...; 0 = 8 MTU */
	__u32	adjust_period_ns;	/* ... or every ...; 0 = base RTT */
	__u32	flags;			/* enum mrc_cc_flags */
};
MRC_ABI_ASSERT_SIZE(struct mrc_cc_profile_rec, 64);

/*
 * The parameters one window runs with, every default resolved (libmrc
 * fills them when the first QP to a destination connects). Bytes and ns.
 */
struct mrc_nscc_params {
	__u32	mtu;		/* payload of a full packet */
	__u32	base_rtt_ns;	/* 0 = follow the smallest RTT measured */
	__u32	target_ns;	/* 0 = 0.75 x base RTT (when measured) */
	__u32	qa_threshold_ns;	/* 0 = 4 x target */
	__u32	adjust_period_ns;
	__u32	adjust_bytes;
	__u32	max_cwnd;
	__u32	min_cwnd;	/* one MTU */
	__u32	alpha_bytes;	/* increase per RTT at zero delay */
	__u32	fi_bytes;	/* fair increase per RTT */
	__u32	eta_bytes;	/* added at each fulfilment */
	__u32	fi_scale_milli;	/* fast increase: cwnd grows by this x acked */
	__u32	fast_delay_ns;	/* queue counts as empty below; 0 = target / 8 */
	__u16	gamma_milli;
	__u16	md_jump_milli;
	__u8	qa_gate;
	__u8	algo;		/* enum mrc_cc_algo */
	__u8	flags;		/* enum mrc_cc_flags */
	__u8	pad;
};
MRC_ABI_ASSERT_SIZE(struct mrc_nscc_params, 60);

/* The evolving state of one window (see include/mrc/nscc.h). */
struct mrc_nscc {
	__u64	cwnd;		/* bytes */
	__u64	inc;		/* pending increase x cwnd (bytes^2) */
	__u64	adjust_acked;	/* bytes acked since the last fulfilment */
	__u64	last_adjust_ns;
	__u64	last_md_ns;
	__u64	fast_bytes;	/* bytes acked in a row with an empty queue */
	__u64	avg_delay_ns;	/* EWMA, gain 1/8 */
	__u64	qa_bytes;	/* bytes acked in the current window RTT */
	__u64	qa_last_bytes;	/* ... in the last full one */
	__u64	qa_start_ns;
	__u64	last_qa_ns;
	__u64	last_eta_ns;
	__u32	min_rtt_ns;	/* smallest RTT sample (base RTT tracking) */
	__u32	pad;
	/* what happened, for mrcctl qp show */
	__u64	n_md, n_fast, n_qa, n_trims, n_losses, n_fulfil;
	__u64	acked_bytes;
	struct mrc_nscc_params p;
	__u32	pad2;
};
MRC_ABI_ASSERT_SIZE(struct mrc_nscc, 104 + 56 + 64);

/* Destinations (windows) on a host: slot = index into mrc_cc, mrc_cc_view. */
#define MRC_MAX_CC	MRC_MAX_QPS

/* Value of mrc_cc: SACKs of different CPUs update a window in turn. */
struct mrc_cc_state {
	struct bpf_spin_lock lock;
	__u32	pad;
	struct mrc_nscc nscc;
};
MRC_ABI_ASSERT_SIZE(struct mrc_cc_state, 8 + 224);

/*
 * SACK-measured RTTs, log-linear: 16 buckets per octave of 1.024 us units
 * (a bucket is at most 1/16 wide: its top, which percentiles report, is
 * within 6.25% of any sample in it), from 0 to about 537 ms (the last
 * bucket takes everything above).
 */
#define MRC_RTT_BUCKETS		256
#define MRC_RTT_SUB_SHIFT	4	/* 16 buckets per octave */
#define MRC_RTT_MAX_MSB		18	/* octave of the last bucket */

static inline __u32 mrc_rtt_bucket(__u64 rtt_ns)
{
	__u64 v = rtt_ns >> 10;
	__u32 msb = 0;

	if (v < (1u << MRC_RTT_SUB_SHIFT))
		return (__u32)v;
	for (int i = 32; i; i >>= 1)
		if (v >> (msb + i))
			msb += i;
	if (msb > MRC_RTT_MAX_MSB)
		return MRC_RTT_BUCKETS - 1;
	return ((msb - MRC_RTT_SUB_SHIFT + 1) << MRC_RTT_SUB_SHIFT) +
	       (__u32)((v >> (msb - MRC_RTT_SUB_SHIFT)) & ((1u << MRC_RTT_SUB_SHIFT) - 1));
}

/* The largest RTT bucket b holds (ns): percentiles read from this are upper bounds. */
static inline __u64 mrc_rtt_bucket_top_ns(__u32 b)
{
	const __u32 sub = 1u << MRC_RTT_SUB_SHIFT;
	__u32 msb;

	if (b < sub)
		return (((__u64)b + 1) << 10) - 1;
	msb = (b >> MRC_RTT_SUB_SHIFT) + MRC_RTT_SUB_SHIFT - 1;
	return ((((__u64)sub + (b & (sub - 1)) + 1) << (msb - MRC_RTT_SUB_SHIFT)) << 10) - 1;
}

/*
 * What a window looks like from outside, the one entry of the window's own
 * BPF_F_MMAPABLE map (mrc_cc_view holds it at the window's slot), mmapped
 * by libmrc (it reads cwnd with a plain load before every send) and read
 * by mrcctl. XDP writes it after each update (libmrc fills it once when
 * it creates the window); libmrc writes inflight and waiting, on a line of
 * their own.
 */
struct mrc_cc_view {
	/* XDP's, per SACK. */
	__u32	cwnd;		/* bytes; 0xffffffff with algorithm none */
	__u32	algo;
	__u32	base_rtt_ns;	/* in use */
	__u32	min_rtt_ns;	/* measured */
	__u32	avg_delay_ns;
	__u32	target_ns;
	__u64	n_md, n_fast, n_qa, n_trims, n_losses;
	__u64	acked_bytes;
	__u64	rtt_hist[MRC_RTT_BUCKETS];	/* SACK-measured RTTs */
	__u32	_pad0[14];
	/* libmrc's, per progress round (XDP clears waiting when it wakes it). */
	__u32	inflight;	/* bytes in flight to the destination (libmrc) */
	__u32	waiting;	/* libmrc sleeps on a full window: XDP wakes it */
	/*
	 * While waiting: the acked_bytes an ack must reach to wake it (a
	 * sender held by the responder's window wakes once a share of it is
	 * free, not on every SACK); a trim or a loss wakes it at once. 0 (or
	 * anything already reached): the next ack.
	 */
	__u64	wake_acked;
	__u32	_pad1[12];
};
MRC_ABI_ASSERT_SIZE(struct mrc_cc_view, 35 * MRC_CACHE_LINE);
MRC_ABI_ASSERT_LINE(struct mrc_cc_view, inflight);

#endif /* MRC_ABI_CC_H */
