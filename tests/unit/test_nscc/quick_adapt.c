// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Quick adapt (nscc_quick_adapt): on trims, on delay past qa_threshold and
 * on losses the window drops to the goodput of the last window RTT, at most
 * once per window RTT.
 */
#include "nscc_test.h"

TEST_CASE(test_quick_adapt, "nscc.qa.trim")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;

	quiet_params(&p);
	start(&s, &p, 0);		/* cwnd 1000000 */

	/* avg1 5000, window RTT 45000 */
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 1000);
	CHECK_EQ(s.qa_bytes, 9000, "qa: qa_bytes");
	CHECK_EQ(s.qa_last_bytes, MRC_NSCC_QA_UNKNOWN, "qa: no period yet");
	nscc_on_trim(&s, 9000, 0, T0 + 2000);
	CHECK_EQ(s.cwnd, 991000, "qa: trim before a period is a plain trim");
	CHECK_EQ(s.n_qa, 0, "qa: n_qa 0 before a period");
	CHECK_EQ(nscc_quick_adapt(&s, T0 + 2000), 0, "qa: direct call before a period");
	nscc_on_loss(&s, 2, T0 + 3000);
	CHECK_EQ(s.n_losses, 2, "qa: n_losses");
	CHECK_EQ(s.cwnd, 991000, "qa: loss before a period");

	/* avg2 9375, avg3 13204, then avg4 16554: 60000 >= 56554 closes it. */
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 10000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 20000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 60000);
	CHECK_EQ(s.qa_last_bytes, 27000, "qa: 27000 bytes in the first window RTT");
	CHECK_EQ(s.qa_bytes, 9000, "qa: new period");
	CHECK_EQ(s.qa_start_ns, T0 + 60000, "qa: qa_start");

	/*
	 * Trim at T0 + 61000 (1000 ns into the period: no roll): cwnd
	 * 991000 - 9000 = 982000, then quick adapt: 27000 < 1000000 >> 3 =
	 * 125000, so cwnd = 27000.
	 */
	s.inc = 12345;
	s.fast_bytes = 9000;
	nscc_on_trim(&s, 9000, 0, T0 + 61000);
	CHECK_EQ(s.cwnd, 27000, "qa: cwnd = goodput of the last window RTT");
	CHECK_EQ(s.n_qa, 1, "qa: n_qa 1");
	CHECK_EQ(s.last_qa_ns, T0 + 61000, "qa: last_qa");
	CHECK_EQ(s.inc, 0, "qa: inc dropped");
	CHECK_EQ(s.fast_bytes, 0, "qa: fast_bytes dropped");

	/*
	 * One more fair ack at T0 + 70000 (delay 40000 < 120000: no delay
	 * trigger): avg5 19485, window RTT 59485, 70000 - 60000 = 10000 < 59485:
	 * same period, qa_bytes = 9000 + 9000 = 18000.
	 */
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 70000);
	CHECK_EQ(s.qa_bytes, 18000, "qa: 2nd period so far");
	CHECK_EQ(s.qa_last_bytes, 27000, "qa: last period still 27000");

	/*
	 * Not again within a window RTT (59485, avg 19485): at
	 * T0 + 61000 + 59484 = T0 + 120484 -- more than a base RTT later -- a
	 * plain trim, 500000 - 9000 = 491000. Quick adapt still rolls the
	 * goodput period first: 120484 - 60000 = 60484 >= 59485, so
	 * qa_last_bytes = 18000, qa_bytes = 0, qa_start = T0 + 120484.
	 */
	s.cwnd = 500000;
	nscc_on_trim(&s, 9000, 0, T0 + 61000 + 59484);
	CHECK_EQ(s.cwnd, 491000, "qa: not twice within window RTT");
	CHECK_EQ(s.n_qa, 1, "qa: n_qa still 1");
	CHECK_EQ(s.qa_last_bytes, 18000, "qa: period rolled even when blocked");
	CHECK_EQ(s.qa_bytes, 0, "qa: rolled qa_bytes");
	CHECK_EQ(s.qa_start_ns, T0 + 120484, "qa: rolled qa_start");
	CHECK_EQ(nscc_quick_adapt(&s, T0 + 61000 + 59484), 0,
		 "qa: direct call within window RTT");
	/*
	 * One window RTT after the first (T0 + 120485) it acts again, with
	 * the period rolled just before: 491000 - 9000 = 482000, then
	 * 18000 < 482000 and < 125000 -> cwnd 18000. (No second roll:
	 * 120485 - 120484 = 1 ns.)
	 */
	nscc_on_trim(&s, 9000, 0, T0 + 61000 + 59485);
	CHECK_EQ(s.cwnd, 18000, "qa: again after window RTT");
	CHECK_EQ(s.n_qa, 2, "qa: n_qa 2");
	CHECK_EQ(s.last_qa_ns, T0 + 120485, "qa: last_qa 2nd");
	/*
	 * 20000 bytes acked at T0 + 140000: avg6 22050, window RTT 62050;
	 * 140000 - 120484 = 19516 into the period: no roll, qa_bytes = 20000.
	 * The direct call at T0 + 182535 rolls it (182535 - 120484 = 62051 >=
	 * 62050): qa_last_bytes = 20000; 182535 - 120485 = 62050 ns since the
	 * last quick adapt, not < 62050; 20000 < 500000, < 125000 -> cwnd 20000.
	 */
	s.cwnd = 500000;
	nscc_on_ack(&s, 20000, 80000, 0, T0 + 140000);
	CHECK_EQ(s.qa_bytes, 20000, "qa: 3rd period so far");
	CHECK_EQ(nscc_quick_adapt(&s, T0 + 182535), 1, "qa: direct call acts");
	CHECK_EQ(s.qa_last_bytes, 20000, "qa: direct call rolled the period");
	CHECK_EQ(s.cwnd, 20000, "qa: direct call cwnd");

	/*
	 * The gate: exactly max_cwnd >> 3 = 125000 bytes is enough goodput.
	 * 5 acks (avg5 19485), then 1 byte at T0 + 70000: avg6 22050, window
	 * RTT 62050, 70000 >= 62050 closes the period.
	 */
	start(&s, &p, 0);
	nscc_on_ack(&s, 25000, 80000, 0, T0 + 1000);
	nscc_on_ack(&s, 25000, 80000, 0, T0 + 2000);
	nscc_on_ack(&s, 25000, 80000, 0, T0 + 3000);
	nscc_on_ack(&s, 25000, 80000, 0, T0 + 4000);
	nscc_on_ack(&s, 25000, 80000, 0, T0 + 5000);
	nscc_on_ack(&s, 1, 80000, 0, T0 + 70000);
	CHECK_EQ(s.qa_last_bytes, 125000, "qa gate: 5 x 25000");
	nscc_on_trim(&s, 9000, 0, T0 + 71000);
	CHECK_EQ(s.cwnd, 991000, "qa gate: 125000 >= 125000, plain trim");
	CHECK_EQ(s.n_qa, 0, "qa gate: n_qa 0");
	/* ... and 124999 is not. */
	start(&s, &p, 0);
	nscc_on_ack(&s, 25000, 80000, 0, T0 + 1000);
	nscc_on_ack(&s, 25000, 80000, 0, T0 + 2000);
	nscc_on_ack(&s, 25000, 80000, 0, T0 + 3000);
	nscc_on_ack(&s, 25000, 80000, 0, T0 + 4000);
	nscc_on_ack(&s, 24999, 80000, 0, T0 + 5000);
	nscc_on_ack(&s, 1, 80000, 0, T0 + 70000);
	nscc_on_trim(&s, 9000, 0, T0 + 71000);
	CHECK_EQ(s.cwnd, 124999, "qa gate: 124999 < 125000 -> cwnd 124999");
	CHECK_EQ(s.n_qa, 1, "qa gate: n_qa 1");

	/*
	 * A period with nothing acked: goodput 0 -> cwnd floors at one MTU.
	 * The first ack's own sample makes avg 5000 before it is counted:
	 * window RTT 45000, so at T0 + 45000 it closes the empty period.
	 */
	start(&s, &p, 0);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 45000);
	CHECK_EQ(s.qa_last_bytes, 0, "qa: empty period");
	nscc_on_trim(&s, 9000, 0, T0 + 46000);
	CHECK_EQ(s.cwnd, 9000, "qa: goodput 0 -> min_cwnd");
	/* ... 1 ns earlier it does not (44999 < 45000). */
	start(&s, &p, 0);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 44999);
	CHECK_EQ(s.qa_last_bytes, MRC_NSCC_QA_UNKNOWN,
		 "qa: the ack's own delay lengthens the period");
	CHECK_EQ(s.qa_bytes, 9000, "qa: counted in the first period");

	/* MRC_CC_F_DISABLE_QA: trims and losses never quick-adapt. */
	p.flags = MRC_CC_F_DISABLE_QA;
	start(&s, &p, 0);
	one_period_of_27000(&s);
	nscc_on_trim(&s, 9000, 0, T0 + 61000);
	CHECK_EQ(s.cwnd, 991000, "qa disabled: plain trim");
	nscc_on_loss(&s, 1, T0 + 62000);
	CHECK_EQ(s.cwnd, 991000, "qa disabled: loss");
	CHECK_EQ(s.n_losses, 1, "qa disabled: loss counted");
	CHECK_EQ(nscc_quick_adapt(&s, T0 + 63000), 0, "qa disabled: direct call");
	CHECK_EQ(s.n_qa, 0, "qa disabled: n_qa 0");
	p.flags = 0;
}

TEST_CASE(test_quick_adapt_delay, "nscc.qa.delay")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;

	quiet_params(&p);
	start(&s, &p, 0);
	one_period_of_27000(&s);	/* qa_start T0 + 60000, avg 16554 */
	/*
	 * delay 160000 - 40000 = 120000: not above qa_threshold 120000.
	 * avg = 16554 - 2069 + 15000 = 29485 (window RTT 69485: no roll).
	 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 160000, 0, T0 + 61000), NSCC_FAIR,
		 "qa delay: quadrant at threshold");
	CHECK_EQ(s.cwnd, 1000000, "qa delay: delay == threshold does not act");
	CHECK_EQ(s.inc, 5ULL * 8100000, "qa delay: 5 fair acks collected");
	/*
	 * delay 120001 > 120000 (120001 >> 3 = 15000): avg = 29485 - 3685 +
	 * 15000 = 40800, window RTT 80800, 2000 ns into the period: no roll.
	 * Quick adapt to 27000; the fair inc is dropped.
	 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 160001, 0, T0 + 62000), NSCC_FAIR,
		 "qa delay: quadrant above threshold");
	CHECK_EQ(s.avg_delay_ns, 40800, "qa delay: avg 40800");
	CHECK_EQ(s.cwnd, 27000, "qa delay: cwnd = 27000");
	CHECK_EQ(s.n_qa, 1, "qa delay: n_qa 1");
	CHECK_EQ(s.inc, 0, "qa delay: inc dropped");

	/* A resent packet (rtt 0) never triggers it, even with a huge average. */
	start(&s, &p, 0);
	one_period_of_27000(&s);
	s.avg_delay_ns = 500000;
	nscc_on_ack(&s, 9000, 0, 0, T0 + 61000);
	CHECK_EQ(s.n_qa, 0, "qa delay: rtt 0 does not trigger");
	CHECK_EQ(s.cwnd, 1000000, "qa delay: rtt 0 cwnd");

	/*
	 * qa_threshold 0 no longer switches the delay trigger off (it means
	 * 4 x target, see test_quick_adapt_derived); MRC_CC_F_DISABLE_QA
	 * does: delay 10000000 - 40000 = 9960000, no quick adapt.
	 */
	p.qa_threshold_ns = 0;
	p.flags = MRC_CC_F_DISABLE_QA;
	start(&s, &p, 0);
	one_period_of_27000(&s);
	nscc_on_ack(&s, 9000, 10000000, 0, T0 + 61000);
	CHECK_EQ(s.n_qa, 0, "qa delay: DISABLE_QA with threshold 0");
	CHECK_EQ(s.cwnd, 1000000, "qa delay: DISABLE_QA cwnd");
}

/*
 * qa_threshold 0 = 4 x the target in force at run time: the explicit
 * target, or 0.75 x the measured base RTT (which, plus the average delay,
 * also sets how long a goodput period is).
 */
TEST_CASE(test_quick_adapt_derived, "nscc.qa.derived")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;

	/* Target 30000: threshold 4 x 30000 = 120000. */
	quiet_params(&p);
	p.qa_threshold_ns = 0;
	start(&s, &p, 0);
	one_period_of_27000(&s);	/* qa_start T0 + 60000, avg 16554 */
	/* delay 160000 - 40000 = 120000: not above 120000 (avg 29485) */
	nscc_on_ack(&s, 9000, 160000, 0, T0 + 61000);
	CHECK_EQ(s.n_qa, 0, "qa derived: delay 4 x target does not act");
	CHECK_EQ(s.cwnd, 1000000, "qa derived: cwnd at 4 x target");
	/* delay 120001 > 120000 (avg 40800, window RTT 80800, no roll): 27000 */
	nscc_on_ack(&s, 9000, 160001, 0, T0 + 62000);
	CHECK_EQ(s.n_qa, 1, "qa derived: delay 4 x target + 1 acts");
	CHECK_EQ(s.cwnd, 27000, "qa derived: cwnd = 27000");

	/*
	 * An explicit target of 25000 alone: threshold 100000. The delay
	 * 40000 of one_period_of_27000 is still >= 25000 (fair), and the
	 * average does not depend on the target: period closed at T0 + 60000,
	 * avg 16554.
	 */
	p.target_ns = 25000;
	start(&s, &p, 0);
	one_period_of_27000(&s);
	/*
	 * delay 140000 - 40000 = 100000: not above; avg = 16554 - 2069 +
	 * 12500 = 26985 (window RTT 66985, no roll)
	 */
	nscc_on_ack(&s, 9000, 140000, 0, T0 + 61000);
	CHECK_EQ(s.n_qa, 0, "qa derived: delay 4 x 25000 does not act");
	/*
	 * delay 100001 (>> 3 = 12500): avg = 26985 - 3373 + 12500 = 36112,
	 * window RTT 76112, 2000 ns in: no roll; acts with 27000.
	 */
	nscc_on_ack(&s, 9000, 140001, 0, T0 + 62000);
	CHECK_EQ(s.n_qa, 1, "qa derived: delay 4 x 25000 + 1 acts");
	CHECK_EQ(s.cwnd, 27000, "qa derived: target 25000 cwnd");

	/* Measured base RTT, target and threshold left 0. */
	quiet_params(&p);
	p.base_rtt_ns = 0;
	p.target_ns = 0;
	p.qa_threshold_ns = 0;
	start(&s, &p, 0);		/* cwnd 1000000 */
	/*
	 * rtt 50000 (delay 0, avg stays 0): min 50000, so base 50000, target
	 * 37500, threshold 4 x 37500 = 150000, window RTT 50000 + 0. Acks at
	 * T0 + 1000, 10000, 20000 give qa_bytes 27000; the one at T0 + 50000
	 * closes the period (50000 >= 50000; it would not with the assumed
	 * 100000): qa_last_bytes 27000, qa_bytes 9000, qa_start T0 + 50000.
	 */
	nscc_on_ack(&s, 9000, 50000, 0, T0 + 1000);
	nscc_on_ack(&s, 9000, 50000, 0, T0 + 10000);
	nscc_on_ack(&s, 9000, 50000, 0, T0 + 20000);
	nscc_on_ack(&s, 9000, 50000, 0, T0 + 50000);
	CHECK_EQ(s.min_rtt_ns, 50000, "qa measured: min_rtt");
	CHECK_EQ(s.qa_last_bytes, 27000, "qa measured: period of the measured base");
	CHECK_EQ(s.qa_bytes, 9000, "qa measured: qa_bytes");
	/*
	 * rtt 200000: delay 150000, not above 150000 (qa_bytes 18000);
	 * avg = 0 + 150000 / 8 = 18750.
	 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 200000, 0, T0 + 51000), NSCC_FAIR,
		 "qa measured: delay 150000 quadrant");
	CHECK_EQ(s.n_qa, 0, "qa measured: delay 4 x 37500 does not act");
	CHECK_EQ(s.cwnd, 1000000, "qa measured: cwnd before");
	/*
	 * rtt 200001: delay 150001 > 150000 (>> 3 = 18750): avg = 18750 -
	 * 2343 + 18750 = 35157, window RTT 85157, 2000 ns into the period: no
	 * roll (qa_bytes 27000); cwnd = qa_last_bytes 27000. With the assumed
	 * base 100 us the delay would be 100001 against 4 x 75000 = 300000.
	 */
	nscc_on_ack(&s, 9000, 200001, 0, T0 + 52000);
	CHECK_EQ(s.n_qa, 1, "qa measured: delay 150001 acts");
	CHECK_EQ(s.cwnd, 27000, "qa measured: cwnd 27000");
	/*
	 * A smaller RTT at T0 + 53000: min 45000, target 33750, threshold
	 * 4 x 33750 = 135000; delay 0: avg = 35157 - 4394 = 30763; qa_bytes
	 * 27000 + 9000 = 36000.
	 */
	nscc_on_ack(&s, 9000, 45000, 0, T0 + 53000);
	CHECK_EQ(s.min_rtt_ns, 45000, "qa measured: new min_rtt");
	CHECK_EQ(s.qa_bytes, 36000, "qa measured: qa_bytes 36000");
	s.cwnd = 500000;
	/*
	 * T0 + 140000, rtt 180000: delay 180000 - 45000 = 135000 (>> 3 =
	 * 16875), avg = 30763 - 3845 + 16875 = 43793, window RTT 45000 + 43793
	 * = 88793; the period rolls (140000 - 50000 = 90000 >= 88793):
	 * qa_last_bytes 36000, qa_bytes 9000, qa_start T0 + 140000. The delay
	 * 135000 is not above 135000.
	 */
	nscc_on_ack(&s, 9000, 180000, 0, T0 + 140000);
	CHECK_EQ(s.qa_last_bytes, 36000, "qa measured: 2nd period");
	CHECK_EQ(s.n_qa, 1, "qa measured: delay 4 x 33750 does not act");
	CHECK_EQ(s.cwnd, 500000, "qa measured: cwnd 500000 kept");
	/*
	 * T0 + 160000, rtt 180001: delay 135001 > 135000 (it was below the old
	 * threshold 150000); avg = 43793 - 5474 + 16875 = 55194, window RTT
	 * 100194; no roll (20000 ns in); 160000 - 52000 = 108000 >= 100194
	 * since the last quick adapt; 36000 < 500000, < 125000 -> cwnd 36000.
	 */
	nscc_on_ack(&s, 9000, 180001, 0, T0 + 160000);
	CHECK_EQ(s.n_qa, 2, "qa measured: threshold follows the minimum");
	CHECK_EQ(s.cwnd, 36000, "qa measured: cwnd 36000");
}

/*
 * The defaults as the XDP program gets them: base RTT 40 us, 2 x 1000 Mb/s,
 * MTU 9000 -> target 30000, qa_threshold left 0 (4 x 30000 = 120000 at
 * run time), max_cwnd 18000, min_cwnd 9000, fi 3000, qa_gate 3 (18000 >> 3
 * = 2250), adjust every 72000 bytes or 40000 ns, eta 90.
 */
TEST_CASE(test_quick_adapt_defaults, "nscc.qa.defaults")
{
	struct mrc_cc_profile_rec prof;
	struct mrc_nscc_params p;
	struct mrc_nscc s;

	memset(&prof, 0, sizeof(prof));
	prof.base_rtt_ns = 40000;
	nscc_defaults(&prof, 9000, 2, 1000, &p);
	nscc_init(&s, &p, T0);
	CHECK_EQ(s.cwnd, 18000, "qa defaults: first window max_cwnd");
	/*
	 * 1000 fair bytes (delay 40000) at T0 + 1000: avg 5000, qa_bytes 1000,
	 * inc 3000000. 1000 more at T0 + 50000: avg 9375, window RTT 49375,
	 * 50000 >= 49375: the period rolls (qa_last_bytes 1000, qa_start
	 * T0 + 50000); fulfilment by time (50000 >= 40000): cwnd += 6000000 /
	 * 18000 = 333 -> 18333, + eta 90 -> 18423, clamped to max_cwnd 18000.
	 */
	nscc_on_ack(&s, 1000, 80000, 0, T0 + 1000);
	nscc_on_ack(&s, 1000, 80000, 0, T0 + 50000);
	CHECK_EQ(s.qa_last_bytes, 1000, "qa defaults: 1000 bytes in the period");
	CHECK_EQ(s.cwnd, 18000, "qa defaults: cwnd at max");
	/*
	 * delay 160000 - 40000 = 120000: not above; avg = 9375 - 1171 + 15000
	 * = 23204 (window RTT 63204, no roll); no fulfilment (1000 bytes,
	 * 1000 ns since the last).
	 */
	nscc_on_ack(&s, 1000, 160000, 0, T0 + 51000);
	CHECK_EQ(s.n_qa, 0, "qa defaults: delay 120000 does not act");
	CHECK_EQ(s.cwnd, 18000, "qa defaults: cwnd kept");
	/*
	 * delay 120001: avg = 23204 - 2900 + 15000 = 35304 (window RTT 75304,
	 * no roll); 1000 < 18000, < 2250 -> cwnd 1000, floored at 9000; no
	 * fulfilment (2000 bytes, 2000 ns).
	 */
	nscc_on_ack(&s, 1000, 160001, 0, T0 + 52000);
	CHECK_EQ(s.n_qa, 1, "qa defaults: delay 120001 acts");
	CHECK_EQ(s.cwnd, 9000, "qa defaults: cwnd to goodput, floored at MTU");
}

/* Quick adapt only ever lowers the window. */
TEST_CASE(test_quick_adapt_only_down, "nscc.qa.only_down")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;

	quiet_params(&p);
	start(&s, &p, 0);
	/* qa_last_bytes 27000, qa_start T0 + 60000, window RTT 56554 */
	one_period_of_27000(&s);

	/* goodput 27000 == cwnd 27000: nothing to do */
	s.cwnd = 27000;
	CHECK_EQ(nscc_quick_adapt(&s, T0 + 61000), 0, "qa down: goodput == cwnd");
	CHECK_EQ(s.cwnd, 27000, "qa down: cwnd 27000 kept");
	/* goodput 27000 > cwnd 20000: never raised */
	s.cwnd = 20000;
	nscc_on_loss(&s, 1, T0 + 61000);
	CHECK_EQ(s.cwnd, 20000, "qa down: loss does not raise 20000");
	/* trim 36000 - 9000 = 27000, then 27000 >= 27000: kept */
	s.cwnd = 36000;
	nscc_on_trim(&s, 9000, 0, T0 + 61000);
	CHECK_EQ(s.cwnd, 27000, "qa down: trim to 27000, no quick adapt");
	/*
	 * delay trigger: delay 120001 > 120000 (avg 29485, window RTT 69485,
	 * no roll), cwnd 9000 (the floor)
	 */
	s.cwnd = 9000;
	nscc_on_ack(&s, 9000, 160001, 0, T0 + 61000);
	CHECK_EQ(s.cwnd, 9000, "qa down: delay trigger does not raise");
	CHECK_EQ(s.n_qa, 0, "qa down: n_qa 0");
	CHECK_EQ(s.last_qa_ns, 0, "qa down: the once-per-RTT clock did not start");
	/* ... so 1 ns later one byte above the goodput is cut at once. */
	s.cwnd = 27001;
	CHECK_EQ(nscc_quick_adapt(&s, T0 + 61001), 1, "qa down: 27001 > 27000 acts");
	CHECK_EQ(s.cwnd, 27000, "qa down: cwnd 27001 -> 27000");
	CHECK_EQ(s.n_qa, 1, "qa down: n_qa 1");
}

/*
 * nscc_quick_adapt() first rolls a window-RTT period that ended without an
 * ack since, as nscc_on_ack() would have. Three acks at rtt 80000
 * (T0 + 1000, 10000, 20000: 27000 bytes) leave avg3 13204: window RTT
 * 40000 + 13204 = 53204, and trims and losses do not move it.
 */
TEST_CASE(test_quick_adapt_rollover, "nscc.qa.rollover")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;

	quiet_params(&p);
	start(&s, &p, 0);		/* cwnd 1000000 */
	/* 27000 bytes in the first period, no ack closes it. */
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 1000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 10000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 20000);
	CHECK_EQ(s.qa_last_bytes, MRC_NSCC_QA_UNKNOWN, "qa roll: period open");
	/*
	 * T0 + 53203: 53203 < 53204, still open (though more than a base RTT
	 * has passed): a plain trim to 991000.
	 */
	nscc_on_trim(&s, 9000, 0, T0 + 53203);
	CHECK_EQ(s.qa_last_bytes, MRC_NSCC_QA_UNKNOWN, "qa roll: not 1 ns early");
	CHECK_EQ(s.qa_bytes, 27000, "qa roll: qa_bytes 27000 before");
	CHECK_EQ(s.cwnd, 991000, "qa roll: plain trim before the period ends");
	/*
	 * A loss at T0 + 53204: the period rolls (qa_last_bytes 27000,
	 * qa_bytes 0, qa_start T0 + 53204), then 27000 < 991000, < 125000.
	 */
	nscc_on_loss(&s, 1, T0 + 53204);
	CHECK_EQ(s.qa_last_bytes, 27000, "qa roll: qa_last_bytes 27000");
	CHECK_EQ(s.qa_bytes, 0, "qa roll: qa_bytes 0");
	CHECK_EQ(s.qa_start_ns, T0 + 53204, "qa roll: qa_start");
	CHECK_EQ(s.cwnd, 27000, "qa roll: cwnd 27000");
	CHECK_EQ(s.n_qa, 1, "qa roll: n_qa 1");
	/*
	 * The next ack counts in the new period (avg4 16554, window RTT
	 * 56554, 5000 ns in: no roll).
	 */
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 58204);
	CHECK_EQ(s.qa_bytes, 9000, "qa roll: next ack in the new period");
	CHECK_EQ(s.qa_last_bytes, 27000, "qa roll: last period kept");

	/*
	 * The period starts at the call, not at the boundary: a trim at
	 * T0 + 58204 (5000 ns after it) rolls with qa_start = T0 + 58204.
	 */
	start(&s, &p, 0);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 1000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 10000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 20000);
	nscc_on_trim(&s, 9000, 0, T0 + 58204);
	CHECK_EQ(s.qa_start_ns, T0 + 58204, "qa roll: qa_start = now");
	CHECK_EQ(s.cwnd, 27000, "qa roll: trim 991000 -> 27000");

	/*
	 * A gap of several periods rolls only once (documented limitation):
	 * at T0 + 200000, more than three window RTTs (3 x 53204 = 159612)
	 * after the start, qa_last_bytes is 27000, not 0, and cwnd 1000000
	 * drops to 27000.
	 */
	start(&s, &p, 0);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 1000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 10000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 20000);
	CHECK_EQ(nscc_quick_adapt(&s, T0 + 200000), 1, "qa roll: gap acts");
	CHECK_EQ(s.qa_last_bytes, 27000, "qa roll: gap rolled once, not 0");
	CHECK_EQ(s.qa_start_ns, T0 + 200000, "qa roll: gap qa_start");
	CHECK_EQ(s.cwnd, 27000, "qa roll: gap cwnd 27000");
	/*
	 * 1 ns short of a window RTT later (T0 + 253203): neither a roll
	 * (53203 < 53204) nor a second quick adapt (53203 < 53204).
	 */
	CHECK_EQ(nscc_quick_adapt(&s, T0 + 253203), 0, "qa roll: window RTT - 1 ns");
	CHECK_EQ(s.qa_last_bytes, 27000, "qa roll: window RTT - 1 ns, no roll");
	/*
	 * One window RTT later (T0 + 253204) the empty period is known:
	 * qa_last_bytes 0, cwnd 0 -> one MTU.
	 */
	CHECK_EQ(nscc_quick_adapt(&s, T0 + 253204), 1, "qa roll: empty period acts");
	CHECK_EQ(s.qa_last_bytes, 0, "qa roll: empty period 0");
	CHECK_EQ(s.cwnd, 9000, "qa roll: goodput 0 -> min_cwnd");

	/*
	 * With quick adapt disabled the period still rolls (58204 >= 53204),
	 * cwnd stays.
	 */
	p.flags = MRC_CC_F_DISABLE_QA;
	start(&s, &p, 0);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 1000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 10000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 20000);
	nscc_on_loss(&s, 1, T0 + 58204);
	CHECK_EQ(s.qa_last_bytes, 27000, "qa roll disabled: rolled");
	CHECK_EQ(s.qa_bytes, 0, "qa roll disabled: qa_bytes 0");
	CHECK_EQ(s.cwnd, 1000000, "qa roll disabled: cwnd kept");
	CHECK_EQ(s.n_qa, 0, "qa roll disabled: n_qa 0");
}

TEST_CASE(test_quick_adapt_loss, "nscc.qa.loss")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;

	quiet_params(&p);
	start(&s, &p, 0);
	one_period_of_27000(&s);	/* qa_start T0 + 60000, window RTT 56554 */
	nscc_on_loss(&s, 3, T0 + 61000);
	CHECK_EQ(s.n_losses, 3, "qa loss: n_losses 3");
	CHECK_EQ(s.cwnd, 27000, "qa loss: cwnd = 27000");
	CHECK_EQ(s.n_qa, 1, "qa loss: n_qa 1");
	CHECK_EQ(s.n_trims, 0, "qa loss: not a trim");
	s.cwnd = 400000;
	nscc_on_loss(&s, 1, T0 + 62000);
	CHECK_EQ(s.n_losses, 4, "qa loss: n_losses 4");
	CHECK_EQ(s.cwnd, 400000, "qa loss: not again within window RTT");
	CHECK_EQ(s.n_qa, 1, "qa loss: n_qa still 1");
	/*
	 * T0 + 61000 + 56553 = T0 + 117553, more than a base RTT after the
	 * first: the period rolls (117553 - 60000 = 57553 >= 56554; the closing
	 * ack's 9000 bytes: qa_last_bytes 9000), but 56553 < 56554 since the
	 * last quick adapt: cwnd kept.
	 */
	nscc_on_loss(&s, 1, T0 + 117553);
	CHECK_EQ(s.qa_last_bytes, 9000, "qa loss: period rolled");
	CHECK_EQ(s.cwnd, 400000, "qa loss: window RTT - 1 ns, blocked");
	CHECK_EQ(s.n_qa, 1, "qa loss: n_qa 1 at window RTT - 1 ns");
	/* T0 + 117554: one window RTT since; 9000 < 400000 -> cwnd 9000. */
	nscc_on_loss(&s, 1, T0 + 117554);
	CHECK_EQ(s.cwnd, 9000, "qa loss: again after window RTT");
	CHECK_EQ(s.n_qa, 2, "qa loss: n_qa 2");
	CHECK_EQ(s.n_losses, 6, "qa loss: n_losses 6");
}

/*
 * The window RTT rule itself, with the average held still: acks of
 * resent packets (rtt 0) carry no sample and leave avg_delay as it is
 * (their delay is the average), and trims and losses never move it.
 */
TEST_CASE(test_quick_adapt_window_rtt, "nscc.qa.window_rtt")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;
	int k, j;

	/*
	 * (a) avg_delay D = 20000: the period lasts 40000 + 20000 = 60000,
	 * not the base RTT 40000. rtt-0 acks at delay 20000 < 30000 are
	 * proportional (no delay trigger without a sample).
	 */
	quiet_params(&p);
	start(&s, &p, 0);		/* cwnd 1000000 */
	s.avg_delay_ns = 20000;
	CHECK_EQ(nscc_window_rtt(&s), 60000, "window rtt: 40000 + 20000");
	CHECK_EQ(nscc_on_ack(&s, 9000, 0, 0, T0 + 1000), NSCC_PROPORTIONAL,
		 "window rtt: rtt-0 ack at avg 20000");
	CHECK_EQ(s.avg_delay_ns, 20000, "window rtt: avg held");
	/* One base RTT: 40000 < 60000, still the first period. */
	nscc_on_ack(&s, 9000, 0, 0, T0 + 40000);
	CHECK_EQ(s.qa_last_bytes, MRC_NSCC_QA_UNKNOWN, "window rtt: no roll at base RTT");
	CHECK_EQ(s.qa_bytes, 18000, "window rtt: 18000 at base RTT");
	CHECK_EQ(s.qa_start_ns, T0, "window rtt: qa_start T0 at base RTT");
	/* 59999 < 60000: still open */
	nscc_on_ack(&s, 9000, 0, 0, T0 + 59999);
	CHECK_EQ(s.qa_last_bytes, MRC_NSCC_QA_UNKNOWN, "window rtt: no roll 1 ns early");
	CHECK_EQ(s.qa_bytes, 27000, "window rtt: 27000 1 ns early");
	/* 60000 >= 60000: rolls, this ack starts the next period. */
	nscc_on_ack(&s, 9000, 0, 0, T0 + 60000);
	CHECK_EQ(s.qa_last_bytes, 27000, "window rtt: rolled at base + D");
	CHECK_EQ(s.qa_bytes, 9000, "window rtt: next period 9000");
	CHECK_EQ(s.qa_start_ns, T0 + 60000, "window rtt: qa_start T0 + 60000");
	/*
	 * The window RTT in force at each check counts: avg back to 0, the
	 * next period ends one base RTT after T0 + 60000 (99999: no,
	 * 100000: yes; qa_last_bytes 9000 + 9000 = 18000).
	 */
	s.avg_delay_ns = 0;
	CHECK_EQ(nscc_window_rtt(&s), 40000, "window rtt: D 0 -> base");
	nscc_on_ack(&s, 9000, 0, 0, T0 + 99999);
	CHECK_EQ(s.qa_last_bytes, 27000, "window rtt: D 0, no roll at 39999");
	nscc_on_ack(&s, 9000, 0, 0, T0 + 100000);
	CHECK_EQ(s.qa_last_bytes, 18000, "window rtt: D 0, roll at 40000");

	/*
	 * A measured base: the assumed 100000 + 20000 before any sample;
	 * after rtt 50000 (min 50000, delay 0: avg = 20000 - 2500 + 0 =
	 * 17500) 50000 + 17500 = 67500, and the period that began at T0
	 * closes at T0 + 67500, not at T0 + 67499.
	 */
	p.base_rtt_ns = 0;
	p.target_ns = 0;
	start(&s, &p, 0);
	s.avg_delay_ns = 20000;
	CHECK_EQ(nscc_window_rtt(&s), 120000, "window rtt: assumed 100000 + 20000");
	nscc_on_ack(&s, 9000, 50000, 0, T0 + 1000);
	CHECK_EQ(s.avg_delay_ns, 17500, "window rtt: measured, avg 17500");
	CHECK_EQ(nscc_window_rtt(&s), 67500, "window rtt: measured 50000 + 17500");
	nscc_count_goodput(&s, 0, T0 + 67499);
	CHECK_EQ(s.qa_last_bytes, MRC_NSCC_QA_UNKNOWN, "window rtt: measured, 67499 open");
	nscc_count_goodput(&s, 0, T0 + 67500);
	CHECK_EQ(s.qa_last_bytes, 9000, "window rtt: measured, 67500 rolls");

	/*
	 * (b) At most once per window RTT, D = 20000 (60000). 27000 bytes by
	 * T0 + 20000, closed by the rtt-0 ack at T0 + 60000 (qa_last_bytes
	 * 27000, qa_bytes 9000, qa_start T0 + 60000); a loss at T0 + 61000
	 * cuts to 27000.
	 */
	quiet_params(&p);
	start(&s, &p, 0);
	s.avg_delay_ns = 20000;
	nscc_on_ack(&s, 9000, 0, 0, T0 + 1000);
	nscc_on_ack(&s, 9000, 0, 0, T0 + 10000);
	nscc_on_ack(&s, 9000, 0, 0, T0 + 20000);
	nscc_on_ack(&s, 9000, 0, 0, T0 + 60000);
	nscc_on_loss(&s, 1, T0 + 61000);
	CHECK_EQ(s.cwnd, 27000, "once per window rtt: first cut 27000");
	CHECK_EQ(s.n_qa, 1, "once per window rtt: n_qa 1");
	CHECK_EQ(s.last_qa_ns, T0 + 61000, "once per window rtt: last_qa");
	s.cwnd = 500000;
	/* One base RTT later: 40000 < 60000, blocked; no roll (41000 < 60000). */
	nscc_on_loss(&s, 1, T0 + 101000);
	CHECK_EQ(s.cwnd, 500000, "once per window rtt: blocked at base RTT");
	CHECK_EQ(s.n_qa, 1, "once per window rtt: n_qa 1 at base RTT");
	CHECK_EQ(s.qa_last_bytes, 27000, "once per window rtt: no roll at base RTT");
	/*
	 * T0 + 120999: the period rolls (120999 - 60000 = 60999 >= 60000:
	 * qa_last_bytes 9000), but 59999 < 60000 since the cut: blocked.
	 */
	nscc_on_loss(&s, 1, T0 + 120999);
	CHECK_EQ(s.qa_last_bytes, 9000, "once per window rtt: rolled at 60999");
	CHECK_EQ(s.cwnd, 500000, "once per window rtt: blocked 1 ns early");
	CHECK_EQ(s.n_qa, 1, "once per window rtt: n_qa 1 1 ns early");
	/* T0 + 121000: 60000 since the cut; 9000 < 500000 -> cwnd 9000. */
	CHECK_EQ(nscc_quick_adapt(&s, T0 + 121000), 1, "once per window rtt: acts at base + D");
	CHECK_EQ(s.cwnd, 9000, "once per window rtt: second cut 9000");
	CHECK_EQ(s.n_qa, 2, "once per window rtt: n_qa 2");
	CHECK_EQ(s.last_qa_ns, T0 + 121000, "once per window rtt: last_qa 2nd");

	/*
	 * (c) A window of 4 packets (cwnd 36000) whose acks come back one RTT
	 * of 100000 after they left: rtt 100000, delay 60000 (fair, below the
	 * 120000 threshold: no delay trigger), the average at its steady
	 * state 60000 (60000 - 7500 + 60000 / 8 = 60000), window RTT 100000.
	 * Rounds of 4 acks at T0 + 50000 + k x 100000 + j x 1000: every
	 * window RTT holds one round, 36000 bytes.
	 */
	quiet_params(&p);
	start(&s, &p, 36000);
	s.avg_delay_ns = 60000;
	for (k = 0; k < 3; k++)
		for (j = 0; j < 4; j++)
			CHECK_EQ(nscc_on_ack(&s, 9000, 100000, 0,
					     T0 + 50000 + k * 100000 + j * 1000),
				 NSCC_FAIR, "few packets: fair acks");
	/*
	 * Round 0 (T0 + 50000..53000) in the first period; round 1 closed it
	 * at T0 + 150000 (150000 >= 100000), round 2 at T0 + 250000 (100000 >=
	 * 100000): qa_last_bytes 36000 (round 1), qa_bytes 36000 (round 2).
	 */
	CHECK_EQ(s.avg_delay_ns, 60000, "few packets: avg steady 60000");
	CHECK_EQ(s.qa_last_bytes, 36000, "few packets: round 1 goodput");
	CHECK_EQ(s.qa_start_ns, T0 + 250000, "few packets: period of round 2");
	CHECK_EQ(s.qa_bytes, 36000, "few packets: round 2 so far");
	/*
	 * Losses between rounds 2 and 3, 45000 and 90000 ns after round 2
	 * began -- each more than a base RTT after the last ack: no roll
	 * (45000, 90000 < 100000), goodput 36000 >= cwnd 36000: no cut.
	 * (Over base-RTT periods the first loss would have closed round 2's
	 * period and the second an empty one: goodput 0, cwnd 9000.)
	 */
	nscc_on_loss(&s, 1, T0 + 295000);
	CHECK_EQ(s.cwnd, 36000, "few packets: loss 45000 after the round");
	nscc_on_loss(&s, 1, T0 + 340000);
	CHECK_EQ(s.cwnd, 36000, "few packets: no collapse");
	CHECK_EQ(s.n_qa, 0, "few packets: n_qa 0");
	CHECK_EQ(s.qa_last_bytes, 36000, "few packets: goodput still 36000");
	/* Round 3's first ack at T0 + 350000 closes round 2's period. */
	nscc_on_ack(&s, 9000, 100000, 0, T0 + 350000);
	CHECK_EQ(s.qa_last_bytes, 36000, "few packets: round 2 goodput 36000");
	CHECK_EQ(s.qa_bytes, 9000, "few packets: round 3 begins");
	/*
	 * The window does get cut when the goodput really falls short: a
	 * trim of 9000 leaves 27000 (36000 >= 27000, no quick adapt), and a
	 * cwnd of 45000 is cut to the 36000 that got through.
	 */
	nscc_on_trim(&s, 9000, 0, T0 + 351000);
	CHECK_EQ(s.cwnd, 27000, "few packets: trim, no quick adapt");
	s.cwnd = 45000;
	nscc_on_loss(&s, 1, T0 + 352000);
	CHECK_EQ(s.cwnd, 36000, "few packets: 45000 cut to the goodput");
	CHECK_EQ(s.n_qa, 1, "few packets: n_qa 1");
}
