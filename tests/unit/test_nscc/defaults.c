// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * nscc_defaults: a CC profile's zeros resolved to derived parameters,
 * explicit values kept, floors applied.
 */
#include "nscc_test.h"

/* ---- nscc_defaults ------------------------------------------------------- */

TEST_CASE(test_defaults, "nscc.defaults")
{
	struct mrc_cc_profile_rec prof;
	struct mrc_nscc_params p;

	memset(&prof, 0, sizeof(prof));
	prof.base_rtt_ns = 40000;
	memset(&p, 0xa5, sizeof(p));
	nscc_defaults(&prof, 9000, 2, 1000, &p);
	/*
	 * bytes/s = 2 * 1000 * 125000 = 250000000
	 * BDP = 250000000 / 1000 * 40000 / 1000000 = 250000 * 40000 / 1e6
	 *     = 10000 (>= one MTU 9000)
	 * target = 40000 * 3 / 4 = 30000
	 */
	CHECK_EQ(p.mtu, 9000, "defaults: mtu");
	CHECK_EQ(p.base_rtt_ns, 40000, "defaults: base_rtt");
	CHECK_EQ(p.target_ns, 30000, "defaults: target = 0.75 x 40000");
	/* 1.5 x 10000 = 15000 < 2 MTU -> 18000 */
	CHECK_EQ(p.max_cwnd, 18000, "defaults: max_cwnd floor 2 MTU");
	CHECK_EQ(p.min_cwnd, 9000, "defaults: min_cwnd = MTU");
	/* 5 * 9000 * 10000 / 150000 = 450000000 / 150000 = 3000 */
	CHECK_EQ(p.fi_bytes, 3000, "defaults: fi = 5 MTU a");
	/* 15 * 9000 * 10000 / 15000000 = 1350000000 / 15000000 = 90 */
	CHECK_EQ(p.eta_bytes, 90, "defaults: eta = 0.15 MTU a");
	/* 250 * 10000 / 150000 = 2500000 / 150000 = 16 (16.67) */
	CHECK_EQ(p.fi_scale_milli, 16, "defaults: fi_scale = 0.25 a");
	/* 4 * 10000 * 9000 = 360000000, / 150000 = 2400, * 30000 = 72000000,
	 * / 12000 = 6000 */
	CHECK_EQ(p.alpha_bytes, 6000, "defaults: alpha = 4 a b MTU");
	/* left 0: 4 x target at run time (test_quick_adapt_derived) */
	CHECK_EQ(p.qa_threshold_ns, 0, "defaults: qa_threshold left 0");
	CHECK_EQ(p.adjust_bytes, 72000, "defaults: adjust_bytes = 8 MTU");
	CHECK_EQ(p.adjust_period_ns, 40000, "defaults: adjust_period = base RTT");
	/* left 0: target / 8 at run time (test_fast_derived) */
	CHECK_EQ(p.fast_delay_ns, 0, "defaults: fast_delay left 0");
	CHECK_EQ(p.gamma_milli, 800, "defaults: gamma 0.8");
	CHECK_EQ(p.md_jump_milli, 500, "defaults: max_md_jump 0.5");
	CHECK_EQ(p.algo, MRC_CC_NONE, "defaults: algo from profile");
	CHECK_EQ(p.flags, 0, "defaults: flags");
	CHECK_EQ(p.pad, 0, "defaults: pad zeroed");

	/* BDP 1.5 x 1 MB: the comment's 1.5 BDP when it is above 2 MTU. */
	prof.base_rtt_ns = 4000000;	/* 250000000 * 4 ms = 1000000 bytes */
	nscc_defaults(&prof, 9000, 2, 1000, &p);
	CHECK_EQ(p.max_cwnd, 1500000, "defaults: max_cwnd = 1.5 x 1000000");
	/* 5 * 9000 * 1000000 / 150000 = 45000000000 / 150000 = 300000 */
	CHECK_EQ(p.fi_bytes, 300000, "defaults: fi for BDP 1 MB");
	/* 15 * 9000 * 1000000 / 15000000 = 135000000000 / 15000000 = 9000 */
	CHECK_EQ(p.eta_bytes, 9000, "defaults: eta for BDP 1 MB");
	/* 250 * 1000000 / 150000 = 250000000 / 150000 = 1666 (1666.67) */
	CHECK_EQ(p.fi_scale_milli, 1666, "defaults: fi_scale for BDP 1 MB");
	/* target 3000000: 4 * 1000000 * 9000 = 36000000000, / 150000 = 240000,
	 * * 3000000 = 720000000000, / 12000 = 60000000 */
	CHECK_EQ(p.alpha_bytes, 60000000, "defaults: alpha for BDP 1 MB");

	/*
	 * The order of the integer operations shows with MTU 4096 (BDP still
	 * 1000000, target 3000000):
	 * fi = 5 * 4096 * 1000000 / 150000 = 20480000000 / 150000 = 136533
	 * (136533.3); eta = 15 * 4096 * 1000000 / 15000000 = 61440000000 /
	 * 15000000 = 4096; alpha = 4 * 1000000 * 4096 = 16384000000,
	 * / 150000 = 109226 (109226.7), * 3000000 = 327678000000,
	 * / 12000 = 27306500 (dividing by 150000 x 12000 only at the end
	 * would give 27306666).
	 */
	nscc_defaults(&prof, 4096, 2, 1000, &p);
	CHECK_EQ(p.fi_bytes, 136533, "defaults: fi, MTU 4096");
	CHECK_EQ(p.eta_bytes, 4096, "defaults: eta, MTU 4096");
	CHECK_EQ(p.alpha_bytes, 27306500, "defaults: alpha, MTU 4096, left to right");
	CHECK_EQ(p.min_cwnd, 4096, "defaults: min_cwnd = MTU 4096");
	CHECK_EQ(p.adjust_bytes, 32768, "defaults: adjust_bytes = 8 x 4096");
}

/* MRC.md section 5: "gamma 0.8; max_md_jump 0.5; qa_gate 3". */
TEST_CASE(test_defaults_qa_gate, "nscc.defaults.qa_gate")
{
	struct mrc_cc_profile_rec prof;
	struct mrc_nscc_params p;

	memset(&prof, 0, sizeof(prof));
	prof.base_rtt_ns = 40000;
	nscc_defaults(&prof, 9000, 2, 1000, &p);
	CHECK_EQ(p.qa_gate, 3, "defaults: qa_gate 3 when the profile says 0");
	prof.qa_gate = 5;
	nscc_defaults(&prof, 9000, 2, 1000, &p);
	CHECK_EQ(p.qa_gate, 5, "defaults: explicit qa_gate");
}

TEST_CASE(test_defaults_explicit, "nscc.defaults.explicit")
{
	struct mrc_cc_profile_rec prof;
	struct mrc_nscc_params p;

	memset(&prof, 0, sizeof(prof));
	prof.algo = MRC_CC_NSCC;
	prof.base_rtt_ns = 40000;
	prof.target_delay_ns = 25000;
	prof.max_cwnd_bytes = 500000;
	prof.gamma_milli = 700;
	prof.max_md_jump_milli = 400;
	prof.qa_gate = 4;
	prof.link_mbps = 1;		/* not read: the caller passes the speed */
	prof.fi_bytes = 1000;
	prof.fi_scale_milli = 300;
	prof.eta_bytes = 50;
	prof.alpha_bytes = 20000;
	prof.qa_threshold_ns = 90000;
	prof.adjust_bytes = 50000;
	prof.adjust_period_ns = 30000;
	prof.flags = MRC_CC_F_DISABLE_QA;
	nscc_defaults(&prof, 9000, 2, 1000, &p);

	CHECK_EQ(p.algo, MRC_CC_NSCC, "explicit: algo");
	CHECK_EQ(p.flags, MRC_CC_F_DISABLE_QA, "explicit: flags");
	CHECK_EQ(p.base_rtt_ns, 40000, "explicit: base_rtt");
	CHECK_EQ(p.target_ns, 25000, "explicit: target");
	CHECK_EQ(p.max_cwnd, 500000, "explicit: max_cwnd");
	CHECK_EQ(p.min_cwnd, 9000, "explicit: min_cwnd");
	CHECK_EQ(p.gamma_milli, 700, "explicit: gamma");
	CHECK_EQ(p.md_jump_milli, 400, "explicit: md_jump");
	CHECK_EQ(p.qa_gate, 4, "explicit: qa_gate");
	CHECK_EQ(p.fi_bytes, 1000, "explicit: fi");
	CHECK_EQ(p.fi_scale_milli, 300, "explicit: fi_scale");
	CHECK_EQ(p.eta_bytes, 50, "explicit: eta");
	CHECK_EQ(p.alpha_bytes, 20000, "explicit: alpha");
	CHECK_EQ(p.qa_threshold_ns, 90000, "explicit: qa_threshold");
	CHECK_EQ(p.adjust_bytes, 50000, "explicit: adjust_bytes");
	CHECK_EQ(p.adjust_period_ns, 30000, "explicit: adjust_period");
	/* no profile field: always 0 (target / 8 at run time) */
	CHECK_EQ(p.fast_delay_ns, 0, "explicit: fast_delay left 0");

	/*
	 * An explicit target alone: qa_threshold still left 0 (4 x 25000 at
	 * run time). BDP 10000 as in test_defaults:
	 * alpha = 4 * 10000 * 9000 = 360000000, / 150000 = 2400,
	 * * 25000 = 60000000, / 12000 = 5000.
	 */
	memset(&prof, 0, sizeof(prof));
	prof.base_rtt_ns = 40000;
	prof.target_delay_ns = 25000;
	nscc_defaults(&prof, 9000, 2, 1000, &p);
	CHECK_EQ(p.target_ns, 25000, "explicit: target alone");
	CHECK_EQ(p.qa_threshold_ns, 0, "explicit: qa_threshold left 0");
	CHECK_EQ(p.fast_delay_ns, 0, "explicit: fast_delay 0 with a target");
	CHECK_EQ(p.alpha_bytes, 5000, "explicit: alpha from target");

	/* An explicit target with a measured base RTT is kept as it is. */
	memset(&prof, 0, sizeof(prof));
	prof.target_delay_ns = 25000;
	nscc_defaults(&prof, 9000, 2, 1000, &p);
	CHECK_EQ(p.base_rtt_ns, 0, "explicit: target, base measured");
	CHECK_EQ(p.target_ns, 25000, "explicit: target with measured base");

	/* An explicit max_cwnd below 2 MTU is still raised to 2 MTU. */
	memset(&prof, 0, sizeof(prof));
	prof.base_rtt_ns = 40000;
	prof.max_cwnd_bytes = 10000;
	nscc_defaults(&prof, 9000, 2, 1000, &p);
	CHECK_EQ(p.max_cwnd, 18000, "explicit: max_cwnd 10000 -> 2 MTU");
}

TEST_CASE(test_defaults_floors, "nscc.defaults.floors")
{
	struct mrc_cc_profile_rec prof;
	struct mrc_nscc_params p;

	/*
	 * 1 plane at 1000 Mb/s, base RTT 1 us: bytes/s 125000000,
	 * BDP = 125000000 / 1000 * 1000 / 1000000 = 125 < MTU -> 9000.
	 * target = 750.
	 */
	memset(&prof, 0, sizeof(prof));
	prof.base_rtt_ns = 1000;
	nscc_defaults(&prof, 9000, 1, 1000, &p);
	CHECK_EQ(p.max_cwnd, 18000, "floors: 1.5 x 9000 = 13500 -> 2 MTU");
	/* 5 * 9000 * 9000 / 150000 = 405000000 / 150000 = 2700
	 * (not 5 * 9000 * 125 / 150000 = 37 from BDP 125) */
	CHECK_EQ(p.fi_bytes, 2700, "floors: fi from BDP = MTU");
	/* 15 * 9000 * 9000 / 15000000 = 1215000000 / 15000000 = 81 */
	CHECK_EQ(p.eta_bytes, 81, "floors: eta");
	/* 250 * 9000 / 150000 = 2250000 / 150000 = 15 */
	CHECK_EQ(p.fi_scale_milli, 15, "floors: fi_scale");
	/* 4 * 9000 * 9000 = 324000000, / 150000 = 2160, * 750 = 1620000,
	 * / 12000 = 135 */
	CHECK_EQ(p.alpha_bytes, 135, "floors: alpha");
	CHECK_EQ(p.target_ns, 750, "floors: target");
	CHECK_EQ(p.qa_threshold_ns, 0, "floors: qa_threshold left 0");
	CHECK_EQ(p.fast_delay_ns, 0, "floors: fast_delay left 0");
	CHECK_EQ(p.adjust_period_ns, 1000, "floors: adjust_period");

	/*
	 * Base RTT left to measurement: the defaults assume 100 us.
	 * BDP = 250000 * 100000 / 1000000 = 25000, target 75000.
	 * base_rtt, target and adjust_period stay 0 (follow the measurement).
	 */
	memset(&prof, 0, sizeof(prof));
	nscc_defaults(&prof, 9000, 2, 1000, &p);
	CHECK_EQ(p.base_rtt_ns, 0, "measured: base_rtt 0");
	CHECK_EQ(p.target_ns, 0, "measured: target 0");
	CHECK_EQ(p.adjust_period_ns, 0, "measured: adjust_period 0");
	CHECK_EQ(p.max_cwnd, 37500, "measured: 1.5 x 25000");
	/* 5 * 9000 * 25000 / 150000 = 1125000000 / 150000 = 7500 */
	CHECK_EQ(p.fi_bytes, 7500, "measured: fi");
	/* 15 * 9000 * 25000 / 15000000 = 3375000000 / 15000000 = 225 */
	CHECK_EQ(p.eta_bytes, 225, "measured: eta");
	/* 250 * 25000 / 150000 = 6250000 / 150000 = 41 (41.67) */
	CHECK_EQ(p.fi_scale_milli, 41, "measured: fi_scale");
	/* 4 * 25000 * 9000 = 900000000, / 150000 = 6000, * 75000 = 450000000,
	 * / 12000 = 37500 */
	CHECK_EQ(p.alpha_bytes, 37500, "measured: alpha");
	/* left 0: they follow the measured base RTT at run time */
	CHECK_EQ(p.qa_threshold_ns, 0, "measured: qa_threshold left 0");
	CHECK_EQ(p.fast_delay_ns, 0, "measured: fast_delay left 0");

	/* Huge BDP: max_cwnd capped at 4 GiB - 1.
	 * 8 planes x 800 Gb/s x 10 ms = 8e11 * 1e7 / 1e9 = 8e9 bytes; 1.5x = 1.2e10 */
	memset(&prof, 0, sizeof(prof));
	prof.base_rtt_ns = 10000000;
	nscc_defaults(&prof, 9000, 8, 800000, &p);
	CHECK_EQ(p.max_cwnd, 0xffffffffu, "floors: max_cwnd capped");
	/*
	 * bytes/s = 8 * 800000 * 125000 = 800000000000,
	 * BDP = 800000000 * 10000000 / 1000000 = 8000000000, target 7500000.
	 * fi = 5 * 9000 * 8e9 / 150000 = 3.6e14 / 150000 = 2400000000 (fits);
	 * eta = 15 * 9000 * 8e9 / 15000000 = 1.08e15 / 1.5e7 = 72000000;
	 * fi_scale = 250 * 8e9 / 150000 = 2e12 / 150000 = 13333333 (.33);
	 * alpha = 4 * 8e9 * 9000 = 2.88e14, / 150000 = 1920000000,
	 * * 7500000 = 1.44e16, / 12000 = 1.2e12 > 2^32 - 1 -> 0xffffffff.
	 */
	CHECK_EQ(p.fi_bytes, 2400000000u, "floors: fi 2.4e9 below 2^32");
	CHECK_EQ(p.eta_bytes, 72000000, "floors: eta huge BDP");
	CHECK_EQ(p.fi_scale_milli, 13333333, "floors: fi_scale huge BDP");
	CHECK_EQ(p.alpha_bytes, 0xffffffffu, "floors: alpha saturates");
	/*
	 * 16 planes: BDP 16000000000. fi = 5 * 9000 * 1.6e10 / 150000 = 4.8e9
	 * -> 0xffffffff; eta = 15 * 9000 * 1.6e10 / 1.5e7 = 144000000;
	 * fi_scale = 250 * 1.6e10 / 150000 = 4e12 / 150000 = 26666666 (.67).
	 */
	nscc_defaults(&prof, 9000, 16, 800000, &p);
	CHECK_EQ(p.fi_bytes, 0xffffffffu, "floors: fi saturates");
	CHECK_EQ(p.eta_bytes, 144000000, "floors: eta 16 planes");
	CHECK_EQ(p.fi_scale_milli, 26666666, "floors: fi_scale 16 planes");
	CHECK_EQ(p.alpha_bytes, 0xffffffffu, "floors: alpha saturates, 16 planes");
	CHECK_EQ(p.max_cwnd, 0xffffffffu, "floors: max_cwnd capped, 16 planes");
	/*
	 * 16 planes, base RTT 20 ms: bytes/s 1600000000000 / 1000 =
	 * 1600000000, * 20000000 = 3.2e16, / 1000000: BDP 32000000000 (bytes/s
	 * x base first would be 3.2e19 > 2^64 = 1.8e19 and wrap).
	 * eta = 15 * 9000 * 3.2e10 / 15000000 = 4.32e15 / 1.5e7 = 288000000;
	 * fi_scale = 250 * 3.2e10 / 150000 = 8e12 / 150000 = 53333333 (.33).
	 */
	prof.base_rtt_ns = 20000000;
	nscc_defaults(&prof, 9000, 16, 800000, &p);
	CHECK_EQ(p.eta_bytes, 288000000, "floors: eta, BDP 3.2e10 without a wrap");
	CHECK_EQ(p.fi_scale_milli, 53333333, "floors: fi_scale, BDP 3.2e10");
	CHECK_EQ(p.target_ns, 15000000, "floors: target 0.75 x 20 ms");
}
