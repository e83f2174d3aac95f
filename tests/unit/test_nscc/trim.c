// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * nscc_on_trim: a trimmed packet cuts the window; a last-hop trim is also
 * the ECN echo the last hop does not give.
 */
#include "nscc_test.h"

/* ---- trims ------------------------------------------------------------- */

TEST_CASE(test_trim, "nscc.trim")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;

	base_params(&p);
	start(&s, &p, 100000);
	nscc_on_trim(&s, 9000, 0, T0 + 1000);
	CHECK_EQ(s.cwnd, 91000, "trim: 100000 - 9000");
	CHECK_EQ(s.n_trims, 1, "trim: n_trims");
	nscc_on_trim(&s, 4000, 0, T0 + 2000);
	CHECK_EQ(s.cwnd, 87000, "trim: 91000 - 4000");
	/* No full goodput period (window RTT = 40000 + avg 0) seen yet:
	 * quick adapt stays out. */
	CHECK_EQ(s.n_qa, 0, "trim: no quick adapt yet");
	nscc_on_trim(&s, 80000, 0, T0 + 3000);
	CHECK_EQ(s.cwnd, 9000, "trim: 87000 - 80000 = 7000 -> one MTU");
	nscc_on_trim(&s, 1000000, 0, T0 + 4000);
	CHECK_EQ(s.cwnd, 9000, "trim: underflow floors at one MTU");
	CHECK_EQ(s.n_trims, 4, "trim: n_trims 4");
}

/*
 * A last-hop trim (TRIMMED_LASTHOP) is also the ECN echo the last hop does
 * not give: after the one-packet cut, the multiplicative decrease of the
 * (ECN, late) quadrant, at most once per base RTT, unless quick adapt acted.
 * The trim says the queue passed the trim threshold, so the decrease takes
 * the delay as at least 2 x target (60000): avg_delay 50000 set by hand
 * counts as 60000, cut = 800 * (60000 - 30000) / 60000 = 400, factor 600
 * (trims do not move the average).
 */
TEST_CASE(test_trim_last_hop, "nscc.trim.last_hop")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;

	/* Quick adapt off, so that only the decrease acts. */
	quiet_params(&p);
	p.flags = MRC_CC_F_DISABLE_QA;
	start(&s, &p, 100000);
	s.avg_delay_ns = 50000;
	/* 100000 - 9000 = 91000, * 600 / 1000 = 54600 */
	nscc_on_trim(&s, 9000, 1, T0 + 1000);
	CHECK_EQ(s.cwnd, 54600, "trim last hop: 91000 * 0.6");
	CHECK_EQ(s.n_md, 1, "trim last hop: n_md 1");
	CHECK_EQ(s.last_md_ns, T0 + 1000, "trim last hop: last_md");
	CHECK_EQ(s.n_trims, 1, "trim last hop: n_trims 1");
	/* 39999 ns later: 54600 - 9000 = 45600, no second cut */
	nscc_on_trim(&s, 9000, 1, T0 + 40999);
	CHECK_EQ(s.cwnd, 45600, "trim last hop: once per base RTT");
	CHECK_EQ(s.n_md, 1, "trim last hop: n_md still 1");
	/*
	 * One base RTT later: 45600 - 9000 = 36600, * 600 / 1000 = 21960.
	 * The decrease keeps the base RTT: with avg 50000 the window RTT
	 * would be 90000, and 40000 < 90000 would block this cut.
	 */
	nscc_on_trim(&s, 9000, 1, T0 + 41000);
	CHECK_EQ(s.cwnd, 21960, "trim last hop: cut again after base RTT");
	CHECK_EQ(s.n_md, 2, "trim last hop: n_md 2");
	/* The same trim not from the last hop: 100000 - 9000 only. */
	start(&s, &p, 100000);
	s.avg_delay_ns = 50000;
	nscc_on_trim(&s, 9000, 0, T0 + 1000);
	CHECK_EQ(s.cwnd, 91000, "trim not last hop: no decrease");
	CHECK_EQ(s.n_md, 0, "trim not last hop: n_md 0");
	/* The average at the target (30000) still counts as 60000: 54600. */
	start(&s, &p, 100000);
	s.avg_delay_ns = 30000;
	nscc_on_trim(&s, 9000, 1, T0 + 1000);
	CHECK_EQ(s.cwnd, 54600, "trim last hop: avg = target, cut as at 2 x target");
	CHECK_EQ(s.n_md, 1, "trim last hop: avg = target, n_md 1");
	/*
	 * An average above 2 x target wins: avg 70000, cut = 800 * 40000 /
	 * 70000 = 457 (.14), factor 543 (above md_jump 500): 91000 * 543 /
	 * 1000 = 49413.
	 */
	start(&s, &p, 100000);
	s.avg_delay_ns = 70000;
	nscc_on_trim(&s, 9000, 1, T0 + 1000);
	CHECK_EQ(s.cwnd, 49413, "trim last hop: avg 70000 above 2 x target");
	/* An ECN echo keeps the plain average: avg 30000 = target, no cut. */
	start(&s, &p, 100000);
	s.avg_delay_ns = 30000;
	nscc_decrease(&s, T0 + 1000, 0);
	CHECK_EQ(s.cwnd, 100000, "decrease without floor: avg = target, no cut");
	CHECK_EQ(s.n_md, 0, "decrease without floor: n_md 0");

	/*
	 * Quick adapt on, after 27000 bytes in the first window RTT
	 * (one_period_of_27000, closed at T0 + 60000), avg then set to 50000
	 * (window RTT 90000): at T0 + 61000 no new roll (1000 < 90000);
	 * 1000000 - 9000 = 991000, quick adapt to 27000, and no decrease.
	 */
	quiet_params(&p);
	start(&s, &p, 0);
	one_period_of_27000(&s);
	s.avg_delay_ns = 50000;
	nscc_on_trim(&s, 9000, 1, T0 + 61000);
	CHECK_EQ(s.cwnd, 27000, "trim last hop: quick adapt instead");
	CHECK_EQ(s.n_qa, 1, "trim last hop: n_qa 1");
	CHECK_EQ(s.n_md, 0, "trim last hop: no decrease after quick adapt");
	/*
	 * Quick adapt that does not act (goodput 27000 >= 30000 - 9000 = 21000)
	 * leaves the decrease: 21000 * 600 / 1000 = 12600.
	 */
	start(&s, &p, 0);
	one_period_of_27000(&s);
	s.avg_delay_ns = 50000;
	s.cwnd = 30000;
	nscc_on_trim(&s, 9000, 1, T0 + 61000);
	CHECK_EQ(s.n_qa, 0, "trim last hop: quick adapt did not act");
	CHECK_EQ(s.cwnd, 12600, "trim last hop: decrease 21000 * 0.6");
	CHECK_EQ(s.n_md, 1, "trim last hop: n_md 1 after no quick adapt");
	/*
	 * One base RTT is no period any more: the 4th ack at T0 + 40000 (avg4
	 * 16554, window RTT 56554, 40000 < 56554) leaves the first period
	 * open; avg set to 50000 (window RTT 90000), the trim at T0 + 41000
	 * does not close it either (41000 < 90000). Quick adapt has no goodput
	 * to go by, so the decrease acts: 991000 * 600 / 1000 = 594600.
	 */
	start(&s, &p, 0);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 1000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 10000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 20000);
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 40000);
	CHECK_EQ(s.qa_last_bytes, MRC_NSCC_QA_UNKNOWN,
		 "trim last hop: a base RTT does not close the period");
	s.avg_delay_ns = 50000;
	nscc_on_trim(&s, 9000, 1, T0 + 41000);
	CHECK_EQ(s.n_qa, 0, "trim last hop: no period, no quick adapt");
	CHECK_EQ(s.cwnd, 594600, "trim last hop: no period, decrease 991000 * 0.6");
	CHECK_EQ(s.n_md, 1, "trim last hop: no period, n_md 1");
}
