// SPDX-License-Identifier: GPL-2.0
/*
 * Congestion control in XDP: the SACKs and NACKs that mrc_xdp_rx
 * processes feed the QP's NSCC window (include/mrc/nscc.h): acked bytes,
 * RTT samples, ECN decrease, trims, losses, algorithm none, the view
 * libmrc reads (mrc_cc_view) and the MRC_EVT_WINDOW wake-up, windows a QP
 * has not (cc_slot none or out of range) left alone, update packing.
 */
#include "mrc_xdp_test.h"

/* ====================================================================== */
/* Tests: XDP feeds the congestion window (NSCC, include/mrc/nscc.h)      */
/* ====================================================================== */

/*
 * The test QP's window is mrc_cc[CC_K] / mrc_cc_view[CC_K]: info.cc_slot
 * is 1-based (CC_K + 1), and CC_K is not the QP's slot (4), so a mix-up of
 * the two indices shows. The state starts as nscc_init() leaves it (as
 * libmrc's new_group() does); every expected value below is worked out by
 * hand from the formulas of nscc.h, not by calling them.
 *
 * The parameters make everything that depends on the clock
 * deterministic: with a base RTT of 1 s no period ends during a test (no
 * fulfilment by time, no eta, no quick-adapt goodput period, at most one
 * MD), and an RTT sample of a test (microseconds to 10 ms) is below the
 * base RTT, so its delay is 0. Tests that need a delay lower the base RTT
 * to 1 us and keep what would then depend on the clock out of the way.
 */
#define CC_K		7
#define CC_SLOT_K	(CC_K + 1)	/* mrc_qp_info.cc_slot of window CC_K */
#define CC_MTU		4000
#define CC_MAX_CWND	100000
#define CC_BASE_NS	1000000000u	/* 1 s */
#define CC_TARGET_NS	1000u
#define CC_LOG_PSNS	300		/* set-up logs PSNs TX_UNA .. TX_UNA + 299 */

static struct mrc_nscc_params cc_test_params(void)
{
	struct mrc_nscc_params p = {
		.mtu = CC_MTU,
		.base_rtt_ns = CC_BASE_NS,
		.target_ns = CC_TARGET_NS,
		.qa_threshold_ns = 0,		/* 4 x target = 4000 ns */
		.adjust_period_ns = CC_BASE_NS,
		.adjust_bytes = 1000000,	/* 250 MTU: no fulfilment by bytes */
		.max_cwnd = CC_MAX_CWND,
		.min_cwnd = CC_MTU,
		.alpha_bytes = 1000,
		.fi_bytes = 500,
		.eta_bytes = 100,
		.fi_scale_milli = 250,
		.fast_delay_ns = 0,		/* target / 8 = 125 ns */
		.gamma_milli = 800,
		.md_jump_milli = 500,
		.qa_gate = 3,			/* QA below 100000 >> 3 = 12500 */
		.algo = MRC_CC_NSCC,
	};
	return p;
}

static struct mrc_cc_state cc_buf;

static struct mrc_nscc get_cc(__u32 k)
{
	memset(&cc_buf, 0, sizeof(cc_buf));
	ASSERT_EQ(bpf_map_lookup_elem(MFD(mrc_cc), &k, &cc_buf), 0, "read mrc_cc");
	return cc_buf.nscc;
}

static void put_cc(__u32 k, const struct mrc_nscc *s)
{
	memset(&cc_buf, 0, sizeof(cc_buf));
	cc_buf.nscc = *s;
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_cc), &k, &cc_buf, BPF_ANY), 0, "write mrc_cc");
}

static struct mrc_cc_view get_view(__u32 k)
{
	struct mrc_cc_view v;

	memset(&v, 0, sizeof(v));
	get_state_of(MFD(mrc_cc_view), k, &v, sizeof(v), "read mrc_cc_view");
	return v;
}

static void put_view(__u32 k, const struct mrc_cc_view *v)
{
	put_state_of(MFD(mrc_cc_view), k, v, sizeof(*v), "write mrc_cc_view");
}

static void set_waiting(__u32 k, __u32 waiting)
{
	struct mrc_cc_view v = get_view(k);

	v.waiting = waiting;
	put_view(k, &v);
}

static __u64 hist_sum(const struct mrc_cc_view *v)
{
	__u64 n = 0;

	for (int b = 0; b < MRC_RTT_BUCKETS; b++)
		n += v->rtt_hist[b];
	return n;
}

/* Send time of every PSN setup_cc() logs. */
static __u64 cc_t0;

/*
 * setup_qp(1), the QP's cc_slot set to `cc_slot`, and window k initialised
 * from p as libmrc does it: nscc_init() now, and a view with algo, base
 * RTT, target and the first window (max_cwnd, or 0xffffffff without
 * NSCC). With `log`, PSNs TX_UNA .. TX_UNA + CC_LOG_PSNS - 1 have a send
 * record (EV 0, plane 1) all sent at cc_t0 (now): a trigger then gives an
 * RTT sample, and no hole is ever overtaken (nothing was sent before the
 * trigger), so no loss gets in the way.
 */
static void setup_cc(const struct mrc_nscc_params *p, __u32 cc_slot, __u32 k, int log)
{
	struct mrc_qp_info q;
	struct mrc_cc_view v;
	struct mrc_nscc s;
	__u32 psn;

	setup_qp(1);
	get_qp(&q);
	q.cc_slot = cc_slot;
	put_qp(&q);
	cc_t0 = mono_ns();
	nscc_init(&s, p, cc_t0);
	put_cc(k, &s);
	memset(&v, 0, sizeof(v));
	v.algo = p->algo;
	v.base_rtt_ns = p->base_rtt_ns;
	v.target_ns = p->target_ns;
	v.cwnd = p->algo == MRC_CC_NSCC ? p->max_cwnd : 0xffffffffu;
	put_view(k, &v);
	if (!log)
		return;
	read_log();
	for (psn = TX_UNA; psn < TX_UNA + CC_LOG_PSNS; psn++) {
		struct mrc_send_rec *rec = &log_buf.rec[psn % MRC_WINDOW_MAX];

		memset(rec, 0, sizeof(*rec));
		rec->psn = psn;
		rec->plane = 1;
		rec->sent_ns = cc_t0;
	}
	write_log();
}

/* The SACK (cack, bitmap of cack + 1 + i) with trigger `psn` and M = m. */
static void run_cc_sack(__u32 cack, __u16 off, __u64 bitmap, __u32 psn, __u8 m,
			struct run *r)
{
	struct sack_spec s = sspec(cack, bitmap);

	s.off = off;
	s.psn = psn;
	s.m = m;
	run_sack(&s, r);
	expect_xdp_drop(r);
}

/* Every published field of the view matches the state (cwnd of NSCC). */
static void expect_view_of(const struct mrc_cc_view *v, const struct mrc_nscc *s)
{
	ASSERT_EQ(v->cwnd, s->p.algo == MRC_CC_NSCC ? s->cwnd : 0xffffffffu,
		  "view.cwnd published");
	ASSERT_EQ(v->algo, s->p.algo, "view.algo");
	ASSERT_EQ(v->min_rtt_ns, s->min_rtt_ns, "view.min_rtt_ns");
	ASSERT_EQ(v->avg_delay_ns, s->avg_delay_ns, "view.avg_delay_ns");
	ASSERT_EQ(v->n_md, s->n_md, "view.n_md");
	ASSERT_EQ(v->n_fast, s->n_fast, "view.n_fast");
	ASSERT_EQ(v->n_qa, s->n_qa, "view.n_qa");
	ASSERT_EQ(v->n_trims, s->n_trims, "view.n_trims");
	ASSERT_EQ(v->n_losses, s->n_losses, "view.n_losses");
	ASSERT_EQ(v->acked_bytes, s->acked_bytes, "view.acked_bytes");
}

/*
 * SACKs count the PSNs they newly acknowledge, selectively (bits not set
 * before) or cumulatively (PSNs below the new snd_una that no SACK had
 * acked: count_unsacked(), which looks at the first 128 only).
 */
TEST_CASE(test_cc_sack_acked_bytes, "mrc.cc_sack_acked_bytes")
{
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_cc_view v;
	struct mrc_nscc s;
	struct run r;

	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	/* Selective: PSNs 1001, 1003, 1005 (bits 1, 3, 5 of cack 999 + 1). */
	run_cc_sack(RX_CACK, 0, 1ULL << 1 | 1ULL << 3 | 1ULL << 5, 1005, MRC_M_NONE, &r);
	s = get_cc(CC_K);
	v = get_view(CC_K);
	/* 3 PSNs x 4000 = 12000 bytes. */
	ASSERT_EQ(s.acked_bytes, 12000, "nscc.acked_bytes: 3 x 4000");
	ASSERT_EQ(v.acked_bytes, 12000, "view.acked_bytes: 3 x 4000");
	/*
	 * RTT (< 1 s) below the base RTT: delay 0 < target, no ECN:
	 * proportional increase, inc = alpha x bytes / target x (target -
	 * delay) = 1000 x 12000 / 1000 x 1000 = 12,000,000. Paid out only
	 * every 1,000,000 bytes or 1 s: cwnd stays 100000. delay 0 < fast
	 * delay (125): fast_bytes 0 + 12000 (below cwnd: no fast increase).
	 */
	ASSERT_EQ(s.inc, 12000000, "nscc.inc: 1000 x 12000 / 1000 x 1000");
	ASSERT_EQ(s.adjust_acked, 12000, "nscc.adjust_acked");
	ASSERT_EQ(s.fast_bytes, 12000, "nscc.fast_bytes");
	ASSERT_EQ(s.n_fulfil + s.n_fast + s.n_md + s.n_qa + s.n_trims + s.n_losses, 0,
		  "no fulfilment, fast increase, MD, QA, trim, loss");
	ASSERT_EQ(s.cwnd, 100000, "nscc.cwnd: 100000 unchanged");
	ASSERT_EQ(v.cwnd, 100000, "view.cwnd == nscc.cwnd");
	ASSERT_EQ(v.base_rtt_ns, CC_BASE_NS, "view.base_rtt_ns: the profile's");
	ASSERT_EQ(v.target_ns, CC_TARGET_NS, "view.target_ns: the profile's");
	expect_view_of(&v, &s);
	ASSERT_EQ(hist_sum(&v), 1, "one RTT sample");

	/*
	 * The same SACK again: its bits were set already, nothing new (its
	 * trigger still gives an RTT sample, delay 0: no bytes, no change).
	 */
	run_cc_sack(RX_CACK, 0, 1ULL << 1 | 1ULL << 3 | 1ULL << 5, 1005, MRC_M_NONE, &r);
	s = get_cc(CC_K);
	v = get_view(CC_K);
	ASSERT_EQ(s.acked_bytes, 12000, "repeated SACK: nscc.acked_bytes unchanged");
	ASSERT_EQ(v.acked_bytes, 12000, "repeated SACK: view.acked_bytes unchanged");
	ASSERT_EQ(s.inc, 12000000, "repeated SACK: nscc.inc unchanged (0 bytes)");
	ASSERT_EQ(s.adjust_acked, 12000, "repeated SACK: nscc.adjust_acked unchanged");
	ASSERT_EQ(s.cwnd, 100000, "repeated SACK: cwnd unchanged");

	/*
	 * cack 1009 (snd_una 1000 -> 1010) and bit 2 (PSN 1012): of
	 * 1000..1009, 1001, 1003 and 1005 were counted by the first SACK, so
	 * 10 - 3 = 7, plus 1012: 8 PSNs, 32000 bytes; 12000 + 32000 = 44000.
	 * inc 12,000,000 + 1000 x 32000 / 1000 x 1000 = 44,000,000.
	 */
	run_cc_sack(1009, 0, 1ULL << 2, 1012, MRC_M_NONE, &r);
	s = get_cc(CC_K);
	v = get_view(CC_K);
	ASSERT_EQ(s.acked_bytes, 44000, "cack 1009: 12000 + (7 + 1) x 4000");
	ASSERT_EQ(v.acked_bytes, 44000, "cack 1009: view.acked_bytes");
	ASSERT_EQ(s.inc, 44000000, "cack 1009: nscc.inc");
	ASSERT_EQ(s.cwnd, 100000, "cack 1009: cwnd unchanged");
	expect_view_of(&v, &s);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "snd_una 1010");

	/*
	 * A cumulative jump of 200 PSNs (snd_una 1000 -> 1200, snd_nxt
	 * 1300). Before it, SACKs acked 1100..1109 (inside the first 128 of
	 * the jump) and 1150..1159 (beyond): 20 PSNs, 80000 bytes.
	 * count_unsacked() looks at 1000..1127 only: 128 - 10 = 118 PSNs;
	 * 1128..1199 (62 of them never SACKed) count as acked before, by
	 * design (a jump that long is a resend filling a hole below PSNs
	 * SACKed long ago). 80000 + 118 x 4000 = 552000, not the 180 x 4000
	 * a full count would add. The 128 looked at span three ring words
	 * (1000 is bit 40 of word 15: 24 + 64 + 40).
	 */
	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	get_tx(&tx);
	tx.snd_nxt = 1300;
	put_tx(&tx);
	run_cc_sack(RX_CACK, 100, 0x3FFULL, 1109, MRC_M_NONE, &r);	/* 1100..1109 */
	run_cc_sack(RX_CACK, 150, 0x3FFULL, 1159, MRC_M_NONE, &r);	/* 1150..1159 */
	s = get_cc(CC_K);
	ASSERT_EQ(s.acked_bytes, 80000, "two SACKs of 10 PSNs: 20 x 4000");
	run_cc_sack(1199, 0, 0, 1199, MRC_M_NONE, &r);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1200, "snd_una 1200");
	s = get_cc(CC_K);
	v = get_view(CC_K);
	ASSERT_EQ(s.acked_bytes, 552000, "jump of 200: 80000 + (128 - 10) x 4000");
	ASSERT_EQ(v.acked_bytes, 552000, "jump of 200: view.acked_bytes");
	/* fast_bytes 80000 < cwnd before the jump: + 472000, no fast increase yet. */
	ASSERT_EQ(s.cwnd, 100000, "jump of 200: cwnd unchanged");
	ASSERT_EQ(s.n_fast, 0, "jump of 200: no fast increase yet");
	expect_view_of(&v, &s);
	drain_events();
}

/*
 * The trigger's RTT (ktime at the SACK - its send record's sent_ns) is one
 * sample: min_rtt_ns, the view's histogram, the QP's srtt. A resent
 * trigger (MRC_BTH_F_RETX) gives none (Karn). The sample's value depends
 * on the clock: only ranges are checked.
 */
TEST_CASE(test_cc_rtt_sample, "mrc.cc_rtt_sample")
{
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_cc_view v;
	struct mrc_nscc s;
	__u64 sent, t1;
	struct run r;

	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	sent = mono_ns() - 1000000;			/* 1 ms ago */
	put_rec(1005, 0, 1, 0, sent);
	run_cc_sack(RX_CACK, 0, 1ULL << 5, 1005, MRC_M_NONE, &r);
	t1 = mono_ns();
	s = get_cc(CC_K);
	v = get_view(CC_K);
	ASSERT_TRUE(s.min_rtt_ns > 0, "nscc.min_rtt_ns > 0");
	ASSERT_TRUE(s.min_rtt_ns >= 1000000 && s.min_rtt_ns <= t1 - sent,
		    "nscc.min_rtt_ns = SACK time - sent_ns (>= 1 ms)");
	ASSERT_EQ(v.min_rtt_ns, s.min_rtt_ns, "view.min_rtt_ns");
	ASSERT_EQ(hist_sum(&v), 1, "one RTT sample in the histogram");
	ASSERT_EQ(v.rtt_hist[mrc_rtt_bucket(s.min_rtt_ns)], 1, "in the sample's bucket");
	/* 1 ms < base RTT 1 s: delay 0, the average stays 0. */
	ASSERT_EQ(s.avg_delay_ns, 0, "nscc.avg_delay_ns: delay 0");
	get_tx(&tx);
	ASSERT_EQ(tx.srtt_ns, s.min_rtt_ns, "the QP's srtt took the same sample");
	ASSERT_EQ(s.acked_bytes, 4000, "one PSN acked");

	/* A resend's SACK (sent 0.5 ms ago: a sample would lower min_rtt). */
	put_rec(1006, 0, 1, MRC_BTH_F_RETX, mono_ns() - 500000);
	run_cc_sack(RX_CACK, 0, 1ULL << 6, 1006, MRC_M_NONE, &r);
	{
		struct mrc_nscc s2 = get_cc(CC_K);

		v = get_view(CC_K);
		ASSERT_EQ(hist_sum(&v), 1, "resent trigger: no RTT sample (Karn)");
		ASSERT_EQ(s2.min_rtt_ns, s.min_rtt_ns, "resent trigger: min_rtt_ns unchanged");
		ASSERT_EQ(s2.acked_bytes, 8000, "resent trigger: its PSN still counts");
	}

	/*
	 * The responder held the trigger 0.5 ms (hold 3906 x 128 ns): the CC
	 * sample is the RTT without it, the QP's timers keep the whole RTT.
	 */
	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	get_tx(&tx);
	tx.srtt_ns = 0;
	tx.rtt_peak_ns = 0;
	put_tx(&tx);
	sent = mono_ns() - 2000000;			/* 2 ms ago */
	put_rec(1007, 0, 1, 0, sent);
	{
		struct sack_spec sp = sspec(RX_CACK, 1ULL << 7);

		sp.psn = 1007;
		sp.hold = 3906;
		run_sack(&sp, &r);
		expect_xdp_drop(&r);
	}
	t1 = mono_ns();
	s = get_cc(CC_K);
	v = get_view(CC_K);
	ASSERT_TRUE(s.min_rtt_ns >= 2000000 - 3906 * 128 &&
		    s.min_rtt_ns <= t1 - sent - 3906 * 128,
		    "held trigger: CC sample = RTT - hold (>= 1.5 ms, < RTT)");
	ASSERT_EQ(v.rtt_hist[mrc_rtt_bucket(s.min_rtt_ns)], 1, "held trigger: histogram has the fabric RTT");
	get_tx(&tx);
	ASSERT_TRUE(tx.srtt_ns >= 2000000, "held trigger: the QP's srtt has the whole RTT");
	/* A hold longer than the RTT cannot be right: the RTT stays whole. */
	put_rec(1008, 0, 1, 0, mono_ns() - 1000000);
	{
		struct sack_spec sp = sspec(RX_CACK, 1ULL << 8);

		sp.psn = 1008;
		sp.hold = 0xffff;			/* 8.4 ms */
		run_sack(&sp, &r);
		expect_xdp_drop(&r);
	}
	v = get_view(CC_K);
	ASSERT_EQ(hist_sum(&v), 2, "bogus hold: still one sample");
	ASSERT_TRUE(get_cc(CC_K).min_rtt_ns >= 1000000,
		    "bogus hold: the 1 ms RTT not shortened");
	ASSERT_TRUE(get_cc(CC_K).min_rtt_ns <= s.min_rtt_ns, "bogus hold: min_rtt the smaller one");

	/*
	 * Base RTT and target 0 in the parameters: they follow the measured
	 * RTT, base = min_rtt_ns, target = 3/4 of it (view publishes both);
	 * before any sample the assumed 100 us.
	 */
	p.base_rtt_ns = 0;
	p.target_ns = 0;
	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	put_rec(1005, 0, 1, 0, mono_ns() - 1000000);
	run_cc_sack(RX_CACK, 0, 1ULL << 5, 1005, MRC_M_NONE, &r);
	s = get_cc(CC_K);
	v = get_view(CC_K);
	ASSERT_TRUE(s.min_rtt_ns >= 1000000, "measured RTT >= 1 ms");
	ASSERT_EQ(v.base_rtt_ns, s.min_rtt_ns, "view.base_rtt_ns = measured min RTT");
	ASSERT_EQ(v.target_ns, (__u64)s.min_rtt_ns * 3 / 4, "view.target_ns = 3/4 of it");
	ASSERT_EQ(s.avg_delay_ns, 0, "the first sample is the base: delay 0");
}

/*
 * ECN echo (M = SKIP_ONCE) with a delay above target: multiplicative
 * decrease. Base RTT and target 1 us, the average delay 1 ms before the
 * SACK and a trigger sent 10 ms ago: the factor floors at md_jump.
 */
TEST_CASE(test_cc_ecn_decrease, "mrc.cc_ecn_decrease")
{
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_cc_view v;
	struct mrc_nscc s;
	__u64 t0, t1, rtt;
	struct run r;

	p.base_rtt_ns = 1000;
	p.target_ns = 1000;
	/*
	 * Quick adapt off: with a 1 us base RTT the goodput period has ended
	 * by the time the SACK comes (qa_last_bytes becomes 0, whatever it
	 * was) and delay (10 ms) > 4 x target checks QA, which would cut the
	 * window to min_cwnd. adjust_period_ns stays 1 s: no fulfilment.
	 */
	p.flags = MRC_CC_F_DISABLE_QA;
	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	s = get_cc(CC_K);
	s.avg_delay_ns = 1000000;			/* 1 ms > target */
	put_cc(CC_K, &s);
	put_rec(1005, 0, 1, 0, mono_ns() - 10000000);	/* 10 ms ago */
	t0 = mono_ns();
	run_cc_sack(RX_CACK, 0, 1ULL << 5, 1005, MRC_M_SKIP_ONCE, &r);
	t1 = mono_ns();
	s = get_cc(CC_K);
	v = get_view(CC_K);
	rtt = s.min_rtt_ns;
	ASSERT_TRUE(rtt >= 10000000, "RTT sample >= 10 ms");
	/*
	 * delay = rtt - base >= 10,000,000 - 1000 = 9,999,000 >= target, and
	 * ECN: DECREASE. avg first takes the sample (gain 1/8):
	 * avg = 1,000,000 - 1,000,000 / 8 + delay / 8 = 875,000 + delay / 8
	 * >= 875,000 + 1,249,875 = 2,124,875.
	 */
	ASSERT_EQ(s.avg_delay_ns, 875000 + (rtt - 1000) / 8, "avg = 7/8 x 1 ms + delay / 8");
	/*
	 * cut = gamma x (avg - target) / avg = 800 x (avg - 1000) / avg,
	 * >= 800 x 2,123,875 / 2,124,875 = 799.6: 799 (and < 800), factor
	 * 1000 - 799 = 201 < md_jump 500: the floor, 500. cwnd = 100000 x
	 * 500 / 1000 = 50000.
	 */
	ASSERT_EQ(s.n_md, 1, "n_md: one multiplicative decrease");
	ASSERT_EQ(s.cwnd, 50000, "cwnd 100000 x 0.5 (md_jump floor) = 50000");
	ASSERT_EQ(v.cwnd, 50000, "view.cwnd 50000");
	ASSERT_EQ(v.n_md, 1, "view.n_md");
	ASSERT_TRUE(s.last_md_ns >= t0 && s.last_md_ns <= t1, "last_md_ns = the SACK's time");
	ASSERT_EQ(s.inc, 0, "no increase collected in the decrease quadrant");
	ASSERT_EQ(s.n_qa + s.n_fulfil, 0, "no QA, no fulfilment");
	ASSERT_EQ(s.acked_bytes, 4000, "the acked PSN still counts");
	expect_view_of(&v, &s);

	/*
	 * The same without ECN: delay >= target, no ECN: fair increase,
	 * inc = fi x bytes = 500 x 4000 = 2,000,000; no cut.
	 */
	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	s = get_cc(CC_K);
	s.avg_delay_ns = 1000000;
	put_cc(CC_K, &s);
	put_rec(1005, 0, 1, 0, mono_ns() - 10000000);
	run_cc_sack(RX_CACK, 0, 1ULL << 5, 1005, MRC_M_NONE, &r);
	s = get_cc(CC_K);
	ASSERT_EQ(s.n_md, 0, "no ECN: no decrease");
	ASSERT_EQ(s.cwnd, 100000, "no ECN: cwnd 100000");
	ASSERT_EQ(s.inc, 2000000, "no ECN: fair increase 500 x 4000");
}

/* NACKs of trimmed packets shrink the window; other NACKs leave it. */
/*
 * A fresh window (params p) whose average delay is avg_ns, then a NACK
 * with `reason` for PSN 1010 through XDP: the window's state after it.
 */
static struct mrc_nscc trim_with_avg_delay(const struct mrc_nscc_params *p,
					   __u64 avg_ns, __u8 reason, struct run *r)
{
	struct mrc_nscc s;

	setup_cc(p, CC_SLOT_K, CC_K, 1);
	s = get_cc(CC_K);
	ASSERT_EQ(s.qa_last_bytes, MRC_NSCC_QA_UNKNOWN, "QA has no goodput to compare");
	s.avg_delay_ns = avg_ns;
	put_cc(CC_K, &s);
	run_nack(1010, RX_CACK, reason, r);
	return get_cc(CC_K);
}

TEST_CASE(test_cc_nack_trims, "mrc.cc_nack_trims")
{
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_nscc s, before;
	struct mrc_cc_view v;
	struct run r;

	/*
	 * Quick adapt cannot act in these cases unless told: qa_last_bytes is
	 * MRC_NSCC_QA_UNKNOWN (nscc_init) and, with the 1 s base RTT, no
	 * goodput period ends to replace it.
	 */
	/* Mid-path trim, average delay 1 ms > target: one MTU, no MD. */
	s = trim_with_avg_delay(&p, 1000000, MRC_NACK_TRIMMED, &r);
	expect_xdp_drop(&r);
	v = get_view(CC_K);
	ASSERT_EQ(s.cwnd, 96000, "mid-path trim: cwnd 100000 - 4000 (one MTU) = 96000");
	ASSERT_EQ(s.n_trims, 1, "mid-path trim: n_trims");
	ASSERT_EQ(s.n_md, 0, "mid-path trim: no MD");
	ASSERT_EQ(s.n_qa, 0, "mid-path trim: no QA");
	ASSERT_EQ(v.cwnd, 96000, "mid-path trim: view.cwnd");
	ASSERT_EQ(v.n_trims, 1, "mid-path trim: view.n_trims");
	ASSERT_EQ(s.acked_bytes, 0, "mid-path trim: nothing acked");
	expect_view_of(&v, &s);

	/*
	 * Last-hop trim, avg 1 ms > target 1 us: cwnd 100000 - 4000 = 96000,
	 * then MD: cut = 800 x (1,000,000 - 1000) / 1,000,000 = 799 (799.2),
	 * factor 1000 - 799 = 201 < 500: floor 500; 96000 x 500 / 1000 = 48000.
	 */
	s = trim_with_avg_delay(&p, 1000000, MRC_NACK_TRIMMED_LASTHOP, &r);
	expect_xdp_drop(&r);
	v = get_view(CC_K);
	ASSERT_EQ(s.cwnd, 48000, "last-hop trim: (100000 - 4000) x 0.5 = 48000");
	ASSERT_EQ(s.n_trims, 1, "last-hop trim: n_trims");
	ASSERT_EQ(s.n_md, 1, "last-hop trim: n_md");
	ASSERT_EQ(s.n_qa, 0, "last-hop trim: no QA");
	ASSERT_EQ(v.cwnd, 48000, "last-hop trim: view.cwnd");
	ASSERT_EQ(v.n_md, 1, "last-hop trim: view.n_md");
	expect_view_of(&v, &s);

	/*
	 * Last-hop trim with avg 500 ns <= target: the trim says the queue
	 * passed the trim threshold, so the cut takes the delay as 2 x target
	 * (2000 ns): cut = 800 * (2000 - 1000) / 2000 = 400, factor 600:
	 * (100000 - 4000) * 600 / 1000 = 57600.
	 */
	s = trim_with_avg_delay(&p, 500, MRC_NACK_TRIMMED_LASTHOP, &r);
	ASSERT_EQ(s.cwnd, 57600, "last-hop trim, avg <= target: cut as at 2 x target");
	ASSERT_EQ(s.n_md, 1, "last-hop trim, avg <= target: one MD");

	/*
	 * Quick adapt acts first when the last base RTT delivered little:
	 * qa_last_bytes 8000 < cwnd 96000 and < max_cwnd >> 3 = 12500: the
	 * window drops to 8000 and the last-hop MD is skipped.
	 */
	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	s = get_cc(CC_K);
	s.avg_delay_ns = 1000000;
	s.qa_last_bytes = 8000;
	put_cc(CC_K, &s);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED_LASTHOP, &r);
	s = get_cc(CC_K);
	ASSERT_EQ(s.cwnd, 8000, "QA: cwnd = the last period's goodput, 8000");
	ASSERT_EQ(s.n_qa, 1, "QA: n_qa");
	ASSERT_EQ(s.n_md, 0, "QA acted: no MD");

	/*
	 * A trim NACK whose cack acks 1000..1004 (5 PSNs, 20000 bytes, no RTT
	 * sample: delay = avg 0, proportional, inc = 1000 x 20000 / 1000 x
	 * 1000 = 20,000,000), then the trim: 100000 - 4000.
	 */
	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	run_nack(1010, 1004, MRC_NACK_TRIMMED, &r);
	s = get_cc(CC_K);
	ASSERT_EQ(s.acked_bytes, 20000, "NACK cack 1004: 5 x 4000 acked");
	ASSERT_EQ(s.inc, 20000000, "NACK cack 1004: inc");
	ASSERT_EQ(s.cwnd, 96000, "NACK cack 1004: trimmed 100000 - 4000");
	v = get_view(CC_K);
	ASSERT_EQ(hist_sum(&v), 0, "a NACK gives no RTT sample");

	/* Other reasons: the window is left alone. */
	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	s = get_cc(CC_K);
	s.avg_delay_ns = 1000000;
	put_cc(CC_K, &s);
	before = get_cc(CC_K);
	run_nack(1010, RX_CACK, MRC_NACK_NO_RESOURCE, &r);
	expect_xdp_drop(&r);
	run_nack(1011, RX_CACK, MRC_NACK_NO_BITMAP, &r);
	expect_xdp_drop(&r);
	s = get_cc(CC_K);
	v = get_view(CC_K);
	ASSERT_MEM_EQ(&s, &before, sizeof(s), "NO_RESOURCE / NO_BITMAP: window state unchanged");
	ASSERT_EQ(v.cwnd, 100000, "NO_RESOURCE: view.cwnd 100000");
	ASSERT_EQ(v.n_trims + v.n_md, 0, "NO_RESOURCE: no trim, no MD");
	ASSERT_EQ(drain_events(), 2, "the NACKs still report their losses");
}

/* Losses reported by a SACK reach the window (nscc_on_loss). */
/*
 * 100 forged TRIMMED NACKs for one send of a PSN cut the window once (one
 * MTU), not to its floor; the PSN's next send may be cut for again. The
 * minimum RTT is set so the gate's age rule holds too.
 */
TEST_CASE(test_cc_trim_storm_one_cut, "mrc.cc_trim_storm_one_cut")
{
	static const __u8 reasons[] = { MRC_NACK_TRIMMED, MRC_NACK_TRIMMED_LASTHOP };
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_nscc s, once;
	struct run r;

	for (size_t i = 0; i < sizeof(reasons); i++) {
		setup_cc(&p, CC_SLOT_K, CC_K, 1);
		s = get_cc(CC_K);
		s.avg_delay_ns = 1000000;
		put_cc(CC_K, &s);
		get_tx(&tx);
		tx.rtt_min_ns = 100000;
		put_tx(&tx);
		put_rec(1010, 0, 1, 0, mono_ns() - 1000000);
		run_nack(1010, RX_CACK, reasons[i], &r);
		once = get_cc(CC_K);
		ASSERT_EQ(once.n_trims, 1, "first trim NACK: counted");
		ASSERT_TRUE(once.cwnd < CC_MAX_CWND, "first trim NACK: the window is cut");
		for (int k = 1; k < 100; k++)
			run_nack(1010, RX_CACK, reasons[i], &r);
		s = get_cc(CC_K);
		ASSERT_EQ(s.n_trims, 1, "100 trim NACKs for one send: one trim");
		ASSERT_EQ(s.n_md, once.n_md, "no further decrease");
		ASSERT_EQ(s.cwnd, once.cwnd, "window cut once");
		ASSERT_EQ(read_qp_stats(SLOT).trim_cuts_gated, 99, "99 cuts withheld");
		ASSERT_EQ(drain_events(), 1, "one resend");
		/* The resend, trimmed too: one more cut. */
		put_rec(1010, 0, 1, MRC_BTH_F_RETX, mono_ns() - 1000000);
		run_nack(1010, RX_CACK, reasons[i], &r);
		s = get_cc(CC_K);
		ASSERT_EQ(s.n_trims, 2, "the resend's trim counts");
		ASSERT_TRUE(s.cwnd < once.cwnd, "and cuts again");
		drain_events();
	}
}

TEST_CASE(test_cc_sack_losses, "mrc.cc_sack_losses")
{
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_cc_view v;
	struct mrc_nscc s;
	struct run r;

	/*
	 * test_sack_gaps_losses_once: cack 1009, PSNs 1012..1020 acked, no
	 * send records: holes 1010 and 1011 lost, K = 2. Acked: 1000..1009
	 * (10, none SACKed before) + 9 = 19 PSNs = 76000 bytes. The trigger
	 * (1010) has no record: no RTT sample.
	 */
	setup_cc(&p, CC_SLOT_K, CC_K, 0);
	run_cc_sack(1009, 0, 0x7FCULL, 1010, MRC_M_NONE, &r);
	ASSERT_EQ(drain_events(), 4, "two losses, two completions");
	expect_event(0, MRC_EVT_LOSS, 1010, UNLOGGED_EV, 0);
	expect_event(1, MRC_EVT_LOSS, 1011, UNLOGGED_EV, 0);
	s = get_cc(CC_K);
	v = get_view(CC_K);
	ASSERT_EQ(s.n_losses, 2, "nscc.n_losses == the 2 losses reported");
	ASSERT_EQ(v.n_losses, 2, "view.n_losses");
	ASSERT_EQ(read_qp_stats(SLOT).losses, 2, "qp_stats.losses agrees");
	ASSERT_EQ(s.acked_bytes, 76000, "19 PSNs x 4000");
	ASSERT_EQ(hist_sum(&v), 0, "no RTT sample (trigger unlogged)");
	/* QA cannot act (goodput unknown): cwnd 100000. */
	ASSERT_EQ(s.n_qa, 0, "no QA");
	ASSERT_EQ(s.cwnd, 100000, "cwnd 100000");
	expect_view_of(&v, &s);
	/* The same SACK again: the holes were reported once, no new loss. */
	run_cc_sack(1009, 0, 0x7FCULL, 1010, MRC_M_NONE, &r);
	ASSERT_EQ(get_cc(CC_K).n_losses, 2, "repeated SACK: n_losses still 2");

	/*
	 * With a known goodput of 8000 (< cwnd, < 100000 >> 3 = 12500), the
	 * loss lets quick adapt cut the window to 8000 (inc reset).
	 */
	setup_cc(&p, CC_SLOT_K, CC_K, 0);
	s = get_cc(CC_K);
	s.qa_last_bytes = 8000;
	put_cc(CC_K, &s);
	run_cc_sack(1009, 0, 0x7FCULL, 1010, MRC_M_NONE, &r);
	s = get_cc(CC_K);
	ASSERT_EQ(s.n_losses, 2, "QA: n_losses");
	ASSERT_EQ(s.n_qa, 1, "QA: n_qa");
	ASSERT_EQ(s.cwnd, 8000, "QA: cwnd 8000");
	ASSERT_EQ(s.inc, 0, "QA: inc reset");
	ASSERT_EQ(get_view(CC_K).cwnd, 8000, "QA: view.cwnd");
	drain_events();
}

/* Algorithm none: no window, the same measurements. */
TEST_CASE(test_cc_algo_none, "mrc.cc_algo_none")
{
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_cc_view v;
	struct mrc_nscc s;
	struct run r;

	p.algo = MRC_CC_NONE;
	p.base_rtt_ns = 1000;
	p.target_ns = 1000;
	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	s = get_cc(CC_K);
	s.avg_delay_ns = 1000000;
	put_cc(CC_K, &s);
	/* ECN with a delay of ~10 ms: NSCC would cut (test_cc_ecn_decrease). */
	put_rec(1005, 0, 1, 0, mono_ns() - 10000000);
	run_cc_sack(RX_CACK, 0, 1ULL << 1 | 1ULL << 3 | 1ULL << 5, 1005, MRC_M_SKIP_ONCE, &r);
	s = get_cc(CC_K);
	v = get_view(CC_K);
	ASSERT_EQ(v.cwnd, 0xffffffffu, "algo none: view.cwnd 0xffffffff");
	ASSERT_EQ(v.algo, MRC_CC_NONE, "algo none: view.algo");
	ASSERT_EQ(s.acked_bytes, 12000, "algo none: acked_bytes 3 x 4000");
	ASSERT_EQ(v.acked_bytes, 12000, "algo none: view.acked_bytes");
	ASSERT_EQ(hist_sum(&v), 1, "algo none: RTT histogram counts");
	ASSERT_TRUE(s.min_rtt_ns >= 10000000, "algo none: min_rtt_ns >= 10 ms");
	ASSERT_EQ(s.avg_delay_ns, 875000 + ((__u64)s.min_rtt_ns - 1000) / 8,
		  "algo none: the average delay is kept");
	ASSERT_EQ(s.n_md, 0, "algo none: no MD despite ECN");
	ASSERT_EQ(s.cwnd, 100000, "algo none: nscc.cwnd untouched");
	expect_view_of(&v, &s);

	/*
	 * A last-hop trim and losses are counted, nothing else. The NACK's
	 * PSN was sent longer ago than half the minimum RTT (10 ms) the SACK
	 * above measured, or it could not be an answer to that send.
	 */
	put_rec(1010, 0, 1, 0, mono_ns() - 20000000);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED_LASTHOP, &r);
	s = get_cc(CC_K);
	v = get_view(CC_K);
	ASSERT_EQ(s.n_trims, 1, "algo none: n_trims");
	ASSERT_EQ(s.n_md, 0, "algo none: no MD on a last-hop trim");
	ASSERT_EQ(s.cwnd, 100000, "algo none: cwnd untouched by the trim");
	ASSERT_EQ(v.cwnd, 0xffffffffu, "algo none: view.cwnd still 0xffffffff");
	ASSERT_EQ(v.n_trims, 1, "algo none: view.n_trims");
	drain_events();
}

/*
 * libmrc sleeps on a full window with view.waiting = 1: the first SACK
 * that acks something clears it and writes MRC_EVT_WINDOW to the QP's
 * context's ring (context 2 here, not 0), counted in cc_wakeups.
 */
TEST_CASE(test_cc_wakeup, "mrc.cc_wakeup")
{
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_ctl_stats want_ctl = {};
	struct mrc_drop_stats want_drops = {};
	struct mrc_qp_info q;
	__u32 zero = 0, two = 2;
	struct run r;

	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	get_qp(&q);
	q.ctx = 2;
	put_qp(&q);
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_events), &two, &ring_fd, BPF_ANY), 0,
		  "ring at context 2");
	ASSERT_EQ(bpf_map_delete_elem(MFD(mrc_events), &zero), 0, "no ring at context 0");
	set_waiting(CC_K, 1);
	run_cc_sack(RX_CACK, 0, 1ULL << 1, 1001, MRC_M_NONE, &r);
	ASSERT_EQ(get_view(CC_K).waiting, 0, "waiting cleared");
	ASSERT_EQ(drain_events(), 1, "one event");
	expect_event(0, MRC_EVT_WINDOW, 0, 0, 0);
	want_ctl.cc_wakeups = 1;
	expect_ctl(&want_ctl);
	expect_drops(&no_drops);

	/* Nobody waiting: no event. */
	run_cc_sack(RX_CACK, 0, 1ULL << 3, 1003, MRC_M_NONE, &r);
	ASSERT_EQ(get_cc(CC_K).acked_bytes, 8000, "the SACK acked");
	ASSERT_EQ(drain_events(), 0, "not waiting: no WINDOW event");
	expect_ctl(&want_ctl);

	/* Waiting, and a SACK that acks nothing new: no wake. */
	set_waiting(CC_K, 1);
	run_cc_sack(RX_CACK, 0, 1ULL << 3, 1003, MRC_M_NONE, &r);
	ASSERT_EQ(get_cc(CC_K).acked_bytes, 8000, "duplicate SACK acked nothing");
	ASSERT_EQ(get_view(CC_K).waiting, 1, "duplicate SACK: still waiting");
	ASSERT_EQ(drain_events(), 0, "duplicate SACK: no event");
	expect_ctl(&want_ctl);

	/* A trim frees room too: WINDOW first, then the NACK's loss. */
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(get_view(CC_K).waiting, 0, "trim: waiting cleared");
	ASSERT_EQ(drain_events(), 2, "trim: WINDOW and LOSS");
	expect_event(0, MRC_EVT_WINDOW, 0, 0, 0);
	expect_event(1, MRC_EVT_LOSS, 1010, ACK_EV, MRC_NACK_TRIMMED);
	want_ctl.cc_wakeups = 2;
	expect_ctl(&want_ctl);

	/* No ring at the context: waiting still cleared, the event counted lost. */
	ASSERT_EQ(bpf_map_delete_elem(MFD(mrc_events), &two), 0, "remove ring 2");
	set_waiting(CC_K, 1);
	run_cc_sack(RX_CACK, 0, 1ULL << 5, 1005, MRC_M_NONE, &r);
	ASSERT_EQ(get_view(CC_K).waiting, 0, "no ring: waiting cleared");
	want_ctl.cc_wakeups = 3;
	expect_ctl(&want_ctl);
	want_drops.ring_full = 1;
	expect_drops(&want_drops);
}

/*
 * A sender the responder's window holds sleeps until a share of what is
 * out has been acked (view.wake_acked, libmrc's mrc_tx_wake_after): SACKs
 * below it leave it asleep without an event, the one that reaches it
 * wakes it, and a trim wakes it at once whatever it asked for.
 */
TEST_CASE(test_cc_wakeup_after_share, "mrc.cc_wakeup_after_share")
{
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_cc_view v;
	__u32 zero = 0;
	struct run r;

	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_events), &zero, &ring_fd, BPF_ANY), 0,
		  "ring at context 0");
	drain_events();
	v = get_view(CC_K);
	v.waiting = 1;
	v.wake_acked = v.acked_bytes + 3 * p.mtu;	/* three packets on */
	put_view(CC_K, &v);
	run_cc_sack(RX_CACK, 0, 1ULL << 1, 1001, MRC_M_NONE, &r);
	ASSERT_EQ(get_view(CC_K).acked_bytes, v.acked_bytes + p.mtu, "one packet acked");
	ASSERT_EQ(get_view(CC_K).waiting, 1, "one of three: still asleep");
	ASSERT_EQ(drain_events(), 0, "below wake_acked: no WINDOW event");

	run_cc_sack(RX_CACK, 0, 1ULL << 1 | 1ULL << 3 | 1ULL << 5, 1005, MRC_M_NONE, &r);
	ASSERT_EQ(get_view(CC_K).acked_bytes, v.acked_bytes + 3 * p.mtu, "three acked");
	ASSERT_EQ(get_view(CC_K).waiting, 0, "wake_acked reached: woken");
	ASSERT_EQ(drain_events(), 1, "one event");
	expect_event(0, MRC_EVT_WINDOW, 0, 0, 0);

	v = get_view(CC_K);
	v.waiting = 1;
	v.wake_acked = v.acked_bytes + 100 * p.mtu;
	put_view(CC_K, &v);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(get_view(CC_K).waiting, 0, "trim: woken whatever it asked");
	ASSERT_EQ(drain_events(), 2, "trim: WINDOW and LOSS");
	expect_event(0, MRC_EVT_WINDOW, 0, 0, 0);
}

/* Copies of every window, to check that a run left them all alone. */
static struct mrc_cc_state cc_snap[MRC_MAX_CC];
static struct mrc_cc_view view_snap[MRC_MAX_CC];

/* Window k's view; zero for a window without one (reset_maps made FX_CC_VIEWS). */
static void view_or_zero(__u32 k, struct mrc_cc_view *v)
{
	int err = mrc_qp_state_read(MFD(mrc_cc_view), k, 0, v, sizeof(*v));

	if (err == -ENOENT)
		memset(v, 0, sizeof(*v));
	else
		ASSERT_EQ(err, 0, "read mrc_cc_view");
}

static void snap_cc(void)
{
	for (__u32 k = 0; k < MRC_MAX_CC; k++) {
		memset(&cc_snap[k], 0, sizeof(cc_snap[k]));
		ASSERT_EQ(bpf_map_lookup_elem(MFD(mrc_cc), &k, &cc_snap[k]), 0, "read mrc_cc");
		view_or_zero(k, &view_snap[k]);
	}
}

static void expect_cc_unchanged(const char *what)
{
	__u32 key;
	int bad = 0;

	for (__u32 k = 0; k < MRC_MAX_CC; k++) {
		struct mrc_nscc s = get_cc(k);
		struct mrc_cc_view v;

		view_or_zero(k, &v);
		if (memcmp(&s, &cc_snap[k].nscc, sizeof(s)) ||
		    memcmp(&v, &view_snap[k], sizeof(v))) {
			fprintf(stderr, "  window %u changed\n", k);
			bad++;
		}
	}
	ASSERT_EQ(bad, 0, what);
	ASSERT_TRUE(bpf_map_get_next_key(MFD(mrc_cc_owner), NULL, &key) != 0,
		    "mrc_cc_owner still empty");
}

/*
 * SACKs and NACKs that touch a window when the QP has one: selective acks
 * with an ECN echo and an RTT sample, trims mid-path and at the last hop,
 * a cumulative ack with two losses (1010 and 1011, their records made
 * foreign so nothing says they might still arrive).
 */
static void run_cc_traffic(const char *what)
{
	struct run r;

	run_cc_sack(RX_CACK, 0, 1ULL << 1 | 1ULL << 3, 1003, MRC_M_SKIP_ONCE, &r);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	expect_xdp_drop(&r);
	run_nack(1011, RX_CACK, MRC_NACK_TRIMMED_LASTHOP, &r);
	expect_xdp_drop(&r);
	put_rec_as(1010, 1010 + MRC_WINDOW_MAX, 0, 1, 0, cc_t0);
	put_rec_as(1011, 1011 + MRC_WINDOW_MAX, 0, 1, 0, cc_t0);
	run_cc_sack(1009, 0, 0x7FCULL, 1020, MRC_M_NONE, &r);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, what);
	/* 2 NACKs + holes 1010 and 1011. */
	ASSERT_EQ(read_qp_stats(SLOT).losses, 4, "losses reported");
	drain_events();
}

/*
 * A trigger below the snd_una the SACK found (acked long ago) gives the
 * window no RTT sample; a live one does (issue 16).
 */
TEST_CASE(test_cc_no_rtt_from_stale_trigger, "mrc.cc_no_rtt_from_stale_trigger")
{
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_cc_view v;
	struct run r;

	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	run_cc_sack(1009, 0, 0, 1009, MRC_M_NONE, &r);
	v = get_view(CC_K);
	ASSERT_EQ(hist_sum(&v), 1, "live trigger: one RTT sample");
	/* snd_una is 1010 now: trigger 1005 was acked by the SACK above. */
	run_cc_sack(1009, 0, 0, 1005, MRC_M_NONE, &r);
	v = get_view(CC_K);
	ASSERT_EQ(hist_sum(&v), 1, "stale trigger: no RTT sample");
	drain_events();
}

/* cc_slot 0: the QP has no window; nothing in any window map changes. */
TEST_CASE(test_cc_slot_none, "mrc.cc_slot_none")
{
	struct mrc_nscc_params p = cc_test_params();

	/* Window CC_K initialised and waiting, but not the QP's. */
	setup_cc(&p, 0, CC_K, 1);
	set_waiting(CC_K, 1);
	snap_cc();
	run_cc_traffic("cc_slot 0: SACKs still processed");
	expect_cc_unchanged("cc_slot 0: no window changed");
	ASSERT_EQ(get_view(CC_K).waiting, 1, "cc_slot 0: nobody woken");
	ASSERT_EQ(read_ctl().cc_wakeups, 0, "cc_slot 0: ctl_stats.cc_wakeups");
}

/*
 * cc_slot past MRC_MAX_CC (a bad value in mrc_qps): nothing written, the
 * SACKs still processed. MRC_MAX_CC itself is the last window.
 */
TEST_CASE(test_cc_slot_out_of_range, "mrc.cc_slot_out_of_range")
{
	static const __u32 bad[] = { MRC_MAX_CC + 1, MRC_MAX_CC + 5, 0xffff, 0xffffffffu };
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_nscc s;
	struct run r;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int before = test_state.failed;

		setup_cc(&p, bad[i], MRC_MAX_CC - 1, 1);
		snap_cc();
		run_cc_traffic("bad cc_slot: SACKs still processed");
		expect_cc_unchanged("bad cc_slot: no window changed");
		if (test_state.failed != before)
			fprintf(stderr, "  (cc_slot %u)\n", bad[i]);
	}

	/* cc_slot MRC_MAX_CC: window MRC_MAX_CC - 1, the last one. */
	setup_cc(&p, MRC_MAX_CC, MRC_MAX_CC - 1, 1);
	run_cc_sack(RX_CACK, 0, 1ULL << 1, 1001, MRC_M_NONE, &r);
	s = get_cc(MRC_MAX_CC - 1);
	ASSERT_EQ(s.acked_bytes, 4000, "cc_slot MRC_MAX_CC: the last window counts");
	ASSERT_EQ(get_view(MRC_MAX_CC - 1).acked_bytes, 4000, "and its view");
}

/*
 * SUSPECTED BUG: cc_update() packs cc_slot and the context into
 * mrc_cc_update()'s first argument with 16 bits each (cc_slot << 48 |
 * (ctx & 0xffff) << 32), so out-of-range values alias valid ones:
 * - cc_slot 0x10000 + n becomes n: the QP updates (and wakes) window
 *   n - 1, another destination's, instead of being refused like any slot
 *   past MRC_MAX_CC;
 * - ctx 0x10000 + c becomes c: the WINDOW event goes to context c's ring
 *   (another process), where emit_event() with the same ctx finds no ring
 *   and counts the event lost.
 * cc_update() should refuse cc_slot > MRC_MAX_CC, and pass a context past
 * MRC_MAX_CTX as one that has no ring, before packing.
 */
TEST_CASE(test_cc_update_packing, "mrc.cc_update_packing")
{
	struct mrc_nscc_params p = cc_test_params();
	struct mrc_drop_stats want_drops = { .ring_full = 1 };
	struct mrc_qp_info q;
	struct run r;

	setup_cc(&p, 0x10000 + CC_SLOT_K, CC_K, 1);
	set_waiting(CC_K, 1);
	snap_cc();
	run_cc_traffic("cc_slot 0x10000 + n: SACKs still processed");
	expect_cc_unchanged("cc_slot 0x10000 + n: window n - 1 not touched");
	ASSERT_EQ(get_view(CC_K).waiting, 1, "cc_slot 0x10000 + n: window n - 1 not woken");
	ASSERT_EQ(read_ctl().cc_wakeups, 0, "cc_slot 0x10000 + n: no wake-up");

	/* Context 0x10000: no ring; context 0's ring must not get the event. */
	setup_cc(&p, CC_SLOT_K, CC_K, 1);
	get_qp(&q);
	q.ctx = 0x10000;
	put_qp(&q);
	set_waiting(CC_K, 1);
	run_cc_sack(RX_CACK, 0, 1ULL << 1, 1001, MRC_M_NONE, &r);
	ASSERT_EQ(get_cc(CC_K).acked_bytes, 4000, "ctx 0x10000: the window counts");
	ASSERT_EQ(drain_events(), 0, "ctx 0x10000: nothing in context 0's ring");
	expect_drops(&want_drops);
}
