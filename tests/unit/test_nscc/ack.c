// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * nscc_on_ack: the first window, the four quadrants (delay x ECN), fulfilment
 * of the increase, fast increase, clamping to [min_cwnd, max_cwnd] and the
 * base RTT tracked from the samples.
 */
#include "nscc_test.h"

/* ---- init ------------------------------------------------------------ */

TEST_CASE(test_init, "nscc.init")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;

	base_params(&p);
	memset(&s, 0xa5, sizeof(s));
	nscc_init(&s, &p, T0);
	/* The first window is max_cwnd, as the reference does. */
	CHECK_EQ(s.cwnd, 1000000, "init: cwnd = max_cwnd");
	CHECK_EQ(s.inc, 0, "init: inc");
	CHECK_EQ(s.avg_delay_ns, 0, "init: avg_delay");
	CHECK_EQ(s.min_rtt_ns, 0, "init: min_rtt");
	CHECK_EQ(s.last_adjust_ns, T0, "init: last_adjust");
	CHECK_EQ(s.last_eta_ns, T0, "init: last_eta");
	CHECK_EQ(s.qa_start_ns, T0, "init: qa_start");
	CHECK_EQ(s.qa_last_bytes, MRC_NSCC_QA_UNKNOWN, "init: qa_last_bytes unknown");
	CHECK_EQ(s.n_md + s.n_fast + s.n_qa + s.n_trims + s.n_losses + s.n_fulfil, 0,
		 "init: counters");
	CHECK_EQ(s.p.alpha_bytes, 36000, "init: params copied");

	/* max_cwnd 0 (no ceiling): the window starts at the floor, one MTU. */
	p.max_cwnd = 0;
	nscc_init(&s, &p, T0);
	CHECK_EQ(s.cwnd, 9000, "init: max_cwnd 0 -> cwnd = min_cwnd");
}

/* ---- the four quadrants ---------------------------------------------- */

TEST_CASE(test_proportional, "nscc.quadrant.proportional")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;
	int i;

	base_params(&p);
	start(&s, &p, 90000);

	/*
	 * rtt 50000: delay 10000 < target 30000, no ECN.
	 * inc += alpha * bytes / target * (target - delay)
	 *      = 36000 * 9000 / 30000 * (30000 - 10000) = 10800 * 20000
	 *      = 216000000
	 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 50000, 0, T0 + 1000), NSCC_PROPORTIONAL,
		 "prop: quadrant");
	CHECK_EQ(s.inc, 216000000, "prop: inc after 1 ack");
	CHECK_EQ(s.min_rtt_ns, 50000, "prop: min_rtt");
	CHECK_EQ(s.avg_delay_ns, 1250, "prop: avg = 0 - 0 + 10000/8 = 1250");
	/* delay 10000 >= fast_delay 3750: not an empty queue. */
	CHECK_EQ(s.fast_bytes, 0, "prop: fast_bytes");
	CHECK_EQ(s.cwnd, 90000, "prop: nothing paid at once");
	CHECK_EQ(s.acked_bytes, 9000, "prop: acked_bytes");

	for (i = 2; i <= 7; i++)
		nscc_on_ack(&s, 9000, 50000, 0, T0 + i * 1000);
	/* 7 x 216000000 = 1512000000; 63000 < 72000 bytes, 7 us < 40 us. */
	CHECK_EQ(s.inc, 1512000000ULL, "prop: inc after 7 acks");
	CHECK_EQ(s.cwnd, 90000, "prop: cwnd before the 8th MTU");
	CHECK_EQ(s.n_fulfil, 0, "prop: no fulfilment before the 8th MTU");
	CHECK_EQ(s.adjust_acked, 63000, "prop: adjust_acked = 7 x 9000");

	/*
	 * 8th MTU: inc = 8 x 216000000 = 1728000000, paid out:
	 * cwnd += 1728000000 / 90000 = 19200 -> 109200 (alpha x 20/30 x 8/10
	 * of a window = 36000 x 2/3 x 0.8 = 19200). No eta: 8 us < 40 us.
	 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 50000, 0, T0 + 8000), NSCC_PROPORTIONAL,
		 "prop: quadrant of the 8th");
	CHECK_EQ(s.cwnd, 109200, "prop: cwnd after fulfilment");
	CHECK_EQ(s.inc, 0, "prop: inc reset");
	CHECK_EQ(s.adjust_acked, 0, "prop: adjust_acked reset");
	CHECK_EQ(s.n_fulfil, 1, "prop: n_fulfil");
	CHECK_EQ(s.last_adjust_ns, T0 + 8000, "prop: last_adjust");
	CHECK_EQ(s.last_eta_ns, T0, "prop: no eta yet");

	/* Edges of (target - delay), without fulfilment. */
	quiet_params(&p);
	start(&s, &p, 90000);
	/* rtt 40000, delay 0: inc = 10800 * 30000 = 324000000 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 40000, 0, T0 + 1000), NSCC_PROPORTIONAL,
		 "prop: delay 0 quadrant");
	CHECK_EQ(s.inc, 324000000, "prop: delay 0 inc");
	/* rtt below base: delay 0 as well, +324000000 = 648000000 */
	nscc_on_ack(&s, 9000, 39000, 0, T0 + 2000);
	CHECK_EQ(s.inc, 648000000, "prop: rtt < base counts as delay 0");
	/* rtt 69999, delay 29999: + 10800 * 1 = 648010800 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 69999, 0, T0 + 3000), NSCC_PROPORTIONAL,
		 "prop: delay target-1 quadrant");
	CHECK_EQ(s.inc, 648010800, "prop: delay target-1 inc");
	/* 1000 bytes at delay 0: 36000 * 1000 / 30000 = 1200, x 30000 = 36000000 */
	nscc_on_ack(&s, 1000, 40000, 0, T0 + 4000);
	CHECK_EQ(s.inc, 684010800, "prop: small ack inc");
	CHECK_EQ(s.cwnd, 90000, "prop: quiet cwnd unchanged");
}

TEST_CASE(test_fair, "nscc.quadrant.fair")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;
	int i;

	base_params(&p);
	start(&s, &p, 90000);
	s.fast_bytes = 5000;

	/* rtt 80000: delay 40000 >= 30000, no ECN: inc += fi * bytes = 900 * 9000 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 80000, 0, T0 + 1000), NSCC_FAIR,
		 "fair: quadrant");
	CHECK_EQ(s.inc, 8100000, "fair: inc = 900 * 9000");
	CHECK_EQ(s.fast_bytes, 0, "fair: fast_bytes reset");
	/* rtt 70000: delay 30000 == target is already "late". */
	CHECK_EQ(nscc_on_ack(&s, 9000, 70000, 0, T0 + 2000), NSCC_FAIR,
		 "fair: delay == target quadrant");
	CHECK_EQ(s.inc, 16200000, "fair: inc = 2 * 8100000");
	for (i = 3; i <= 7; i++)
		nscc_on_ack(&s, 9000, 80000, 0, T0 + i * 1000);
	CHECK_EQ(s.cwnd, 90000, "fair: cwnd before the 8th MTU");
	/*
	 * 8th: inc = 8 x 8100000 = 64800000; cwnd += 64800000 / 90000 = 720
	 * (fi 900 x 72000 / 90000 of a window) -> 90720.
	 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 80000, 0, T0 + 8000), NSCC_FAIR,
		 "fair: quadrant of the 8th");
	CHECK_EQ(s.cwnd, 90720, "fair: cwnd after fulfilment");
	CHECK_EQ(s.n_md, 0, "fair: no decrease");
}

TEST_CASE(test_decrease, "nscc.quadrant.decrease")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;
	int i;

	quiet_params(&p);
	start(&s, &p, 100000);

	/*
	 * Build the average by hand: 4 unmarked acks at rtt 120000 (delay
	 * 80000, 80000 >> 3 = 10000 each):
	 *   avg = 0     - 0     + 10000 = 10000
	 *   avg = 10000 - 1250  + 10000 = 18750
	 *   avg = 18750 - 2343  + 10000 = 26407   (18750 >> 3 = 2343)
	 *   avg = 26407 - 3300  + 10000 = 33107   (26407 >> 3 = 3300)
	 */
	for (i = 1; i <= 4; i++)
		CHECK_EQ(nscc_on_ack(&s, 9000, 120000, 0, T0 + i * 1000), NSCC_FAIR,
			 "md: unmarked late acks are fair increase");
	CHECK_EQ(s.avg_delay_ns, 33107, "md: avg after 4 samples");
	CHECK_EQ(s.cwnd, 100000, "md: no change without ECN");

	/*
	 * ECN at rtt 120000: avg = 33107 - 4138 + 10000 = 38969.
	 * cut = gamma * (avg - target) / avg = 800 * 8969 / 38969
	 *     = 7175200 / 38969 = 184 (184.1); factor = 1000 - 184 = 816
	 * cwnd = 100000 * 816 / 1000 = 81600
	 */
	s.fast_bytes = 9000;
	CHECK_EQ(nscc_on_ack(&s, 9000, 120000, 1, T0 + 5000), NSCC_DECREASE,
		 "md: quadrant");
	CHECK_EQ(s.avg_delay_ns, 38969, "md: avg");
	CHECK_EQ(s.cwnd, 81600, "md: cwnd * (1 - 0.8 * 8969/38969)");
	CHECK_EQ(s.n_md, 1, "md: n_md");
	CHECK_EQ(s.last_md_ns, T0 + 5000, "md: last_md");
	CHECK_EQ(s.fast_bytes, 0, "md: fast_bytes reset");

	/* Within one base RTT (39999 ns later): no second cut.
	 * avg = 38969 - 4871 + 10000 = 44098 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 120000, 1, T0 + 5000 + 39999), NSCC_DECREASE,
		 "md: 2nd quadrant");
	CHECK_EQ(s.cwnd, 81600, "md: at most once per base RTT");
	CHECK_EQ(s.n_md, 1, "md: n_md still 1");
	CHECK_EQ(s.avg_delay_ns, 44098, "md: avg keeps moving");

	/*
	 * One base RTT after the first cut: avg = 44098 - 5512 + 10000 = 48586.
	 * cut = 800 * 18586 / 48586 = 14868800 / 48586 = 306 (306.03)
	 * cwnd = 81600 * 694 / 1000 = 56630 (56630.4)
	 */
	nscc_on_ack(&s, 9000, 120000, 1, T0 + 5000 + 40000);
	CHECK_EQ(s.avg_delay_ns, 48586, "md: avg 3rd");
	CHECK_EQ(s.cwnd, 56630, "md: cut again after base RTT");
	CHECK_EQ(s.n_md, 2, "md: n_md 2");

	/*
	 * max_md_jump floor: avg 200000 (rtt 240000 keeps it: 200000 - 25000 +
	 * 25000). cut = 800 * 170000 / 200000 = 680 -> factor 320 < 500 -> 500.
	 */
	start(&s, &p, 100000);
	s.avg_delay_ns = 200000;
	nscc_on_ack(&s, 9000, 240000, 1, T0 + 1000);
	CHECK_EQ(s.avg_delay_ns, 200000, "md jump: avg");
	CHECK_EQ(s.cwnd, 50000, "md jump: factor floored at 0.5");

	/*
	 * Without a floor and a cut above 1: gamma 2.0, md_jump 0:
	 * cut = 2000 * 170000 / 200000 = 1700 -> factor 0 -> cwnd 0 -> min 9000.
	 */
	p.gamma_milli = 2000;
	p.md_jump_milli = 0;
	start(&s, &p, 100000);
	s.avg_delay_ns = 200000;
	nscc_on_ack(&s, 9000, 240000, 1, T0 + 1000);
	CHECK_EQ(s.cwnd, 9000, "md: factor 0 floors at min_cwnd");
	quiet_params(&p);

	/*
	 * The sample is late but the average is not (avg = 0 + 40000/8 = 5000
	 * <= 30000): the quadrant says decrease, the factor would be >= 1, so
	 * nothing is cut and the once-per-RTT clock does not start.
	 */
	start(&s, &p, 100000);
	CHECK_EQ(nscc_on_ack(&s, 9000, 80000, 1, T0 + 1000), NSCC_DECREASE,
		 "md: avg below target quadrant");
	CHECK_EQ(s.cwnd, 100000, "md: avg below target, no cut");
	CHECK_EQ(s.n_md, 0, "md: avg below target, n_md 0");

	/*
	 * A resent packet (rtt 0) has no sample: the average stands in for the
	 * delay and is not updated. avg 50000 >= 30000 with ECN: decrease,
	 * cut = 800 * 20000 / 50000 = 320 -> cwnd = 100000 * 680 / 1000 = 68000.
	 */
	start(&s, &p, 100000);
	s.avg_delay_ns = 50000;
	CHECK_EQ(nscc_on_ack(&s, 9000, 0, 1, T0 + 1000), NSCC_DECREASE,
		 "md: rtt 0 uses avg");
	CHECK_EQ(s.avg_delay_ns, 50000, "md: rtt 0 leaves avg");
	CHECK_EQ(s.min_rtt_ns, 0, "md: rtt 0 is no sample");
	CHECK_EQ(s.cwnd, 68000, "md: rtt 0 cut");
}

TEST_CASE(test_hold, "nscc.quadrant.hold")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;
	int i;

	quiet_params(&p);
	start(&s, &p, 100000);
	/* One proportional ack first: inc = 216000000 (see test_proportional). */
	nscc_on_ack(&s, 9000, 50000, 0, T0 + 1000);
	CHECK_EQ(s.inc, 216000000, "hold: inc before");
	s.fast_bytes = 27000;

	/* ECN with delay 10000 < 30000: the path is hot, not the window. */
	CHECK_EQ(nscc_on_ack(&s, 9000, 50000, 1, T0 + 2000), NSCC_HOLD,
		 "hold: quadrant");
	CHECK_EQ(s.cwnd, 100000, "hold: cwnd unchanged");
	CHECK_EQ(s.inc, 216000000, "hold: inc unchanged");
	CHECK_EQ(s.fast_bytes, 0, "hold: fast_bytes reset");
	CHECK_EQ(s.n_md, 0, "hold: no decrease");
	/* delay 0 and delay target-1 (rtt 69999) hold too */
	CHECK_EQ(nscc_on_ack(&s, 9000, 40000, 1, T0 + 3000), NSCC_HOLD,
		 "hold: delay 0");
	CHECK_EQ(nscc_on_ack(&s, 9000, 69999, 1, T0 + 4000), NSCC_HOLD,
		 "hold: delay target-1");
	CHECK_EQ(s.cwnd, 100000, "hold: cwnd after 3 holds");
	CHECK_EQ(s.inc, 216000000, "hold: inc after 3 holds");
	CHECK_EQ(s.acked_bytes, 36000, "hold: bytes still counted");

	/*
	 * Held acks still count towards fulfilment, which pays what was
	 * collected before: 1 proportional + 7 hold acks = 72000 bytes ->
	 * cwnd = 90000 + 216000000 / 90000 = 92400.
	 */
	base_params(&p);
	start(&s, &p, 90000);
	nscc_on_ack(&s, 9000, 50000, 0, T0 + 1000);
	for (i = 2; i <= 8; i++)
		nscc_on_ack(&s, 9000, 50000, 1, T0 + i * 1000);
	CHECK_EQ(s.n_fulfil, 1, "hold: fulfilment still runs");
	CHECK_EQ(s.cwnd, 92400, "hold: earlier increase paid");
}

/* ---- fulfilment -------------------------------------------------------- */

TEST_CASE(test_fulfil, "nscc.fulfil")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;
	int i;

	base_params(&p);

	/* By bytes: 71999 then 1 byte (fair, inc = 900 per byte). */
	start(&s, &p, 90000);
	nscc_on_ack(&s, 71999, 80000, 0, T0 + 1000);
	CHECK_EQ(s.inc, 64799100, "fulfil: inc = 900 * 71999");
	CHECK_EQ(s.n_fulfil, 0, "fulfil: 71999 < adjust_bytes");
	CHECK_EQ(s.cwnd, 90000, "fulfil: 71999 bytes pay nothing");
	nscc_on_ack(&s, 1, 80000, 0, T0 + 2000);
	/* 72000 bytes: cwnd += 64800000 / 90000 = 720 */
	CHECK_EQ(s.n_fulfil, 1, "fulfil: at exactly adjust_bytes");
	CHECK_EQ(s.cwnd, 90720, "fulfil: paid at 72000 bytes");

	/*
	 * By time: one proportional ack (inc 216000000) and a small one just
	 * before the period ends: 1000 bytes at delay 10000 add
	 * 36000 * 1000 / 30000 * 20000 = 1200 * 20000 = 24000000.
	 */
	start(&s, &p, 90000);
	nscc_on_ack(&s, 9000, 50000, 0, T0 + 1000);
	nscc_on_ack(&s, 1000, 50000, 0, T0 + 39999);
	CHECK_EQ(s.inc, 240000000, "fulfil: inc before the period ends");
	CHECK_EQ(s.n_fulfil, 0, "fulfil: nothing 1 ns before the period");
	CHECK_EQ(s.cwnd, 90000, "fulfil: cwnd 1 ns before the period");
	/*
	 * At T0 + 40000 (one adjust period after init), a single 1000-byte ack:
	 * inc = 240000000 + 24000000 = 264000000,
	 * cwnd += 264000000 / 90000 = 2933 (2933.3) -> 92933,
	 * and one base RTT since init: + eta 90 -> 93023.
	 */
	nscc_on_ack(&s, 1000, 50000, 0, T0 + 40000);
	CHECK_EQ(s.n_fulfil, 1, "fulfil: by time");
	CHECK_EQ(s.cwnd, 93023, "fulfil: 90000 + 2933 + eta 90");
	CHECK_EQ(s.last_eta_ns, T0 + 40000, "fulfil: last_eta");
	CHECK_EQ(s.inc, 0, "fulfil: inc reset by time");

	/*
	 * 8 fair acks 1..8 us later: fulfilment by bytes at T0 + 48000,
	 * cwnd += 8 * 8100000 / 93023 = 64800000 / 93023 = 696 (696.6) -> 93719;
	 * no eta: 8000 ns since the last < base RTT.
	 */
	for (i = 1; i <= 8; i++)
		nscc_on_ack(&s, 9000, 80000, 0, T0 + 40000 + i * 1000);
	CHECK_EQ(s.n_fulfil, 2, "fulfil: 2nd by bytes");
	CHECK_EQ(s.cwnd, 93719, "fulfil: no second eta within base RTT");
	CHECK_EQ(s.last_eta_ns, T0 + 40000, "fulfil: last_eta unchanged");

	/*
	 * T0 + 88000: one adjust period after the last fulfilment (T0 + 48000),
	 * 1000 fair bytes: cwnd += 900000 / 93719 = 9 (9.6) -> 93728;
	 * 48000 >= 40000 ns since the last eta: + 90 -> 93818.
	 */
	nscc_on_ack(&s, 1000, 80000, 0, T0 + 88000);
	CHECK_EQ(s.n_fulfil, 3, "fulfil: 3rd by time");
	CHECK_EQ(s.cwnd, 93818, "fulfil: 93719 + 9 + eta 90");
	CHECK_EQ(s.last_eta_ns, T0 + 88000, "fulfil: last_eta moved");

	/* adjust_period 0 falls back to the base RTT (40000). */
	p.adjust_period_ns = 0;
	start(&s, &p, 90000);
	nscc_on_ack(&s, 1000, 80000, 0, T0 + 39999);
	CHECK_EQ(s.n_fulfil, 0, "fulfil: period 0 -> base RTT, not yet");
	nscc_on_ack(&s, 1000, 80000, 0, T0 + 40000);
	/* inc = 2 * 900000 = 1800000 / 90000 = 20, + eta 90 -> 90110 */
	CHECK_EQ(s.n_fulfil, 1, "fulfil: period 0 -> base RTT");
	CHECK_EQ(s.cwnd, 90110, "fulfil: period 0 cwnd");
}

/* ---- fast increase --------------------------------------------------- */

TEST_CASE(test_fast_entry, "nscc.fast.entry")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;
	int i;

	quiet_params(&p);
	start(&s, &p, 36000);

	/* rtt 41000: delay 1000 < fast_delay 3750. One window = 4 acks. */
	for (i = 1; i <= 4; i++) {
		CHECK_EQ(nscc_on_ack(&s, 9000, 41000, 0, T0 + i * 1000),
			 NSCC_PROPORTIONAL, "fast: quadrant");
		CHECK_EQ(s.fast_bytes, 9000ULL * i, "fast: counting a window");
		CHECK_EQ(s.cwnd, 36000, "fast: not before a whole window");
	}
	CHECK_EQ(s.n_fast, 0, "fast: n_fast 0");
	/* fast_bytes 36000 >= cwnd 36000: cwnd += 9000 * 250 / 1000 = 2250 */
	nscc_on_ack(&s, 9000, 41000, 0, T0 + 5000);
	CHECK_EQ(s.cwnd, 38250, "fast: 36000 + 2250");
	CHECK_EQ(s.n_fast, 1, "fast: n_fast 1");
	CHECK_EQ(s.fast_bytes, ~0ULL, "fast: in fast increase, fast_bytes ~0");

	/* delay exactly fast_delay (rtt 43750) is not empty: reset. */
	nscc_on_ack(&s, 9000, 43750, 0, T0 + 6000);
	CHECK_EQ(s.fast_bytes, 0, "fast: reset by delay == fast_delay");
	CHECK_EQ(s.cwnd, 38250, "fast: reset ack adds nothing at once");

	/*
	 * A new whole window is needed (delay 3749 counts as empty):
	 * fast_bytes 9000 .. 36000 (< 38250), 45000 -- then fast again.
	 */
	for (i = 1; i <= 5; i++)
		nscc_on_ack(&s, 9000, 43749, 0, T0 + 6000 + i * 1000);
	CHECK_EQ(s.fast_bytes, 45000, "fast: recount");
	CHECK_EQ(s.cwnd, 38250, "fast: no fast increase while recounting");
	CHECK_EQ(s.n_fast, 1, "fast: n_fast still 1");
	nscc_on_ack(&s, 9000, 43749, 0, T0 + 12000);
	CHECK_EQ(s.cwnd, 40500, "fast: 38250 + 2250 after a new window");
	CHECK_EQ(s.n_fast, 2, "fast: n_fast 2");

	/* The proportional increase is still collected alongside:
	 * 12 acks x 10800 x (30000 - delay): 5 at delay 1000, one at 3750,
	 * 6 at 3749 */
	CHECK_EQ(s.inc, 5ULL * 10800 * 29000 + 10800ULL * 26250 + 6ULL * 10800 * 26251,
		 "fast: inc collected too");

	/* Clamped to max_cwnd. */
	start(&s, &p, 999000);
	s.fast_bytes = 999000;
	nscc_on_ack(&s, 9000, 41000, 0, T0 + 1000);
	CHECK_EQ(s.cwnd, 1000000, "fast: 999000 + 2250 clamped to max_cwnd");
}

/*
 * "A whole window acked with an empty queue switches to fast increase ...
 * until the queue builds again": every further empty-queue ack grows cwnd.
 */
TEST_CASE(test_fast_sustained, "nscc.fast.sustained")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;
	int i;

	quiet_params(&p);
	start(&s, &p, 36000);
	for (i = 1; i <= 5; i++)
		nscc_on_ack(&s, 9000, 41000, 0, T0 + i * 1000);
	CHECK_EQ(s.cwnd, 38250, "fast sustained: entry 36000 + 2250");
	nscc_on_ack(&s, 9000, 41000, 0, T0 + 6000);
	CHECK_EQ(s.cwnd, 40500, "fast sustained: 6th ack 38250 + 2250");
	nscc_on_ack(&s, 9000, 41000, 0, T0 + 7000);
	CHECK_EQ(s.cwnd, 42750, "fast sustained: 7th ack 40500 + 2250");
	CHECK_EQ(s.n_fast, 3, "fast sustained: n_fast 3");
	CHECK_EQ(s.fast_bytes, ~0ULL, "fast sustained: fast_bytes stays ~0");
	/* Any size: 1000 bytes add 1000 * 250 / 1000 = 250 -> 43000. */
	nscc_on_ack(&s, 1000, 41000, 0, T0 + 8000);
	CHECK_EQ(s.cwnd, 43000, "fast sustained: 1000 bytes + 250");
	/* 3 bytes add 3 * 250 / 1000 = 0 (0.75). */
	nscc_on_ack(&s, 3, 41000, 0, T0 + 9000);
	CHECK_EQ(s.cwnd, 43000, "fast sustained: 3 bytes + 0");
	CHECK_EQ(s.n_fast, 5, "fast sustained: n_fast 5");

	/* A fair ack (delay 40000) ends it; the next empty ack counts anew. */
	nscc_on_ack(&s, 9000, 80000, 0, T0 + 10000);
	CHECK_EQ(s.fast_bytes, 0, "fast sustained: fair resets");
	nscc_on_ack(&s, 9000, 41000, 0, T0 + 11000);
	CHECK_EQ(s.fast_bytes, 9000, "fast sustained: counting again after fair");
	CHECK_EQ(s.cwnd, 43000, "fast sustained: no increase after fair");
	CHECK_EQ(s.n_fast, 5, "fast sustained: n_fast still 5");

	/* A proportional ack with delay 10000 >= 3750 ends it. */
	s.fast_bytes = ~0ULL;
	CHECK_EQ(nscc_on_ack(&s, 9000, 50000, 0, T0 + 12000), NSCC_PROPORTIONAL,
		 "fast sustained: delay 10000 quadrant");
	CHECK_EQ(s.fast_bytes, 0, "fast sustained: larger delay resets");
	CHECK_EQ(s.cwnd, 43000, "fast sustained: no increase at delay 10000");

	/* ECN at delay 1000 (hold) ends it. */
	s.fast_bytes = ~0ULL;
	CHECK_EQ(nscc_on_ack(&s, 9000, 41000, 1, T0 + 13000), NSCC_HOLD,
		 "fast sustained: hold quadrant");
	CHECK_EQ(s.fast_bytes, 0, "fast sustained: hold resets");
	CHECK_EQ(s.cwnd, 43000, "fast sustained: no increase on hold");

	/*
	 * ECN at delay 40000 (decrease) ends it; avg set to 0 by hand so that
	 * avg = 0 + 40000 / 8 = 5000 <= 30000 and nothing is cut.
	 */
	s.fast_bytes = ~0ULL;
	s.avg_delay_ns = 0;
	CHECK_EQ(nscc_on_ack(&s, 9000, 80000, 1, T0 + 14000), NSCC_DECREASE,
		 "fast sustained: decrease quadrant");
	CHECK_EQ(s.fast_bytes, 0, "fast sustained: decrease resets");
	CHECK_EQ(s.cwnd, 43000, "fast sustained: no cut, no increase");
	CHECK_EQ(s.n_fast, 5, "fast sustained: n_fast 5 at the end");
}

/* fast_delay 0 = target / 8 of the target in force at run time. */
TEST_CASE(test_fast_derived, "nscc.fast.derived")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;
	int i;

	/* Target 30000: fast delay 30000 / 8 = 3750. */
	quiet_params(&p);
	p.fast_delay_ns = 0;
	start(&s, &p, 36000);
	/* delay 43749 - 40000 = 3749 < 3750: counts */
	nscc_on_ack(&s, 9000, 43749, 0, T0 + 1000);
	CHECK_EQ(s.fast_bytes, 9000, "fast derived: delay 3749 counts");
	/* delay 3750: resets */
	nscc_on_ack(&s, 9000, 43750, 0, T0 + 2000);
	CHECK_EQ(s.fast_bytes, 0, "fast derived: delay 3750 resets");
	/* A whole window (4 x 9000 = 36000) at delay 3749, then fast: + 2250. */
	for (i = 1; i <= 4; i++)
		nscc_on_ack(&s, 9000, 43749, 0, T0 + 2000 + i * 1000);
	CHECK_EQ(s.fast_bytes, 36000, "fast derived: a window counted");
	CHECK_EQ(s.cwnd, 36000, "fast derived: not yet");
	nscc_on_ack(&s, 9000, 43749, 0, T0 + 7000);
	CHECK_EQ(s.cwnd, 38250, "fast derived: 36000 + 2250");
	CHECK_EQ(s.n_fast, 1, "fast derived: n_fast 1");

	/* An explicit target of 25000: fast delay 25000 / 8 = 3125. */
	p.target_ns = 25000;
	start(&s, &p, 36000);
	nscc_on_ack(&s, 9000, 43124, 0, T0 + 1000);
	CHECK_EQ(s.fast_bytes, 9000, "fast derived: delay 3124 < 3125 counts");
	nscc_on_ack(&s, 9000, 43125, 0, T0 + 2000);
	CHECK_EQ(s.fast_bytes, 0, "fast derived: delay 3125 resets");

	/* Measured base RTT: base, target and fast delay all left 0. */
	quiet_params(&p);
	p.base_rtt_ns = 0;
	p.target_ns = 0;
	p.fast_delay_ns = 0;
	/*
	 * No sample yet: assumed base 100000, target 75000, fast delay
	 * 75000 / 8 = 9375. A resent packet (rtt 0) uses the average.
	 */
	start(&s, &p, 90000);
	s.avg_delay_ns = 9374;
	nscc_on_ack(&s, 9000, 0, 0, T0 + 1000);
	CHECK_EQ(s.fast_bytes, 9000, "fast measured: assumed base, 9374 counts");
	s.avg_delay_ns = 9375;
	nscc_on_ack(&s, 9000, 0, 0, T0 + 2000);
	CHECK_EQ(s.fast_bytes, 0, "fast measured: assumed base, 9375 resets");

	/*
	 * rtt 50000: min 50000, target 37500, fast delay 37500 / 8 = 4687
	 * (4687.5); delay 0 counts.
	 */
	start(&s, &p, 90000);
	nscc_on_ack(&s, 9000, 50000, 0, T0 + 1000);
	CHECK_EQ(s.fast_bytes, 9000, "fast measured: delay 0 counts");
	/* delay 4686 counts, 4687 resets, 4600 counts */
	nscc_on_ack(&s, 9000, 54686, 0, T0 + 2000);
	CHECK_EQ(s.fast_bytes, 18000, "fast measured: delay 4686 counts");
	nscc_on_ack(&s, 9000, 54687, 0, T0 + 3000);
	CHECK_EQ(s.fast_bytes, 0, "fast measured: delay 4687 resets");
	nscc_on_ack(&s, 9000, 54600, 0, T0 + 4000);
	CHECK_EQ(s.fast_bytes, 9000, "fast measured: delay 4600 counts at min 50000");
	/*
	 * rtt 45000: min 45000 (delay 0, counts: 18000), target 33750, fast
	 * delay 33750 / 8 = 4218 (4218.75): the same delay 4600 now resets.
	 */
	nscc_on_ack(&s, 9000, 45000, 0, T0 + 5000);
	CHECK_EQ(s.min_rtt_ns, 45000, "fast measured: new min");
	CHECK_EQ(s.fast_bytes, 18000, "fast measured: delay 0 at new min");
	nscc_on_ack(&s, 9000, 49600, 0, T0 + 6000);
	CHECK_EQ(s.fast_bytes, 0, "fast measured: delay 4600 resets at min 45000");
	nscc_on_ack(&s, 9000, 49217, 0, T0 + 7000);
	CHECK_EQ(s.fast_bytes, 9000, "fast measured: delay 4217 counts");
	nscc_on_ack(&s, 9000, 49218, 0, T0 + 8000);
	CHECK_EQ(s.fast_bytes, 0, "fast measured: delay 4218 resets");
	CHECK_EQ(s.cwnd, 90000, "fast measured: cwnd untouched");
}

/* ---- clamping and base RTT tracking -------------------------------------- */

TEST_CASE(test_clamp, "nscc.clamp")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;
	int i;

	base_params(&p);
	start(&s, &p, 0);		/* cwnd = max_cwnd 1000000 */
	/* 8 proportional acks: cwnd += 1728000000 / 1000000 = 1728 -> clamp */
	for (i = 1; i <= 8; i++)
		nscc_on_ack(&s, 9000, 50000, 0, T0 + i * 1000);
	CHECK_EQ(s.n_fulfil, 1, "clamp: fulfilled");
	CHECK_EQ(s.cwnd, 1000000, "clamp: 1001728 -> max_cwnd");

	/* eta at T0 + 40000 by time: 999950 + 900000 / 999950 (0) + 90 -> max */
	start(&s, &p, 999950);
	nscc_on_ack(&s, 1000, 80000, 0, T0 + 40000);
	CHECK_EQ(s.n_fulfil, 1, "clamp: eta fulfilment");
	CHECK_EQ(s.cwnd, 1000000, "clamp: 999950 + 90 -> max_cwnd");

	/* A window above max_cwnd (e.g. a lowered profile) comes down at the
	 * next fulfilment: 72000 fair bytes, 2000000 + 64800000 / 2000000. */
	start(&s, &p, 2000000);
	nscc_on_ack(&s, 72000, 80000, 0, T0 + 1000);
	CHECK_EQ(s.cwnd, 1000000, "clamp: above max comes down at fulfilment");

	/* The floor: min_cwnd, else the MTU, else 1 byte. */
	base_params(&p);
	p.min_cwnd = 0;
	p.max_cwnd = 0;
	nscc_init(&s, &p, T0);
	CHECK_EQ(s.cwnd, 9000, "clamp: min_cwnd 0 -> floor MTU 9000");
	p.mtu = 0;
	nscc_init(&s, &p, T0);
	CHECK_EQ(s.cwnd, 1, "clamp: min_cwnd 0, mtu 0 -> floor 1");
	/* trim 1000000 from 100000 with min_cwnd 0: 0 -> MTU 9000 */
	base_params(&p);
	p.min_cwnd = 0;
	start(&s, &p, 100000);
	nscc_on_trim(&s, 1000000, 0, T0 + 1000);
	CHECK_EQ(s.cwnd, 9000, "clamp: trim to 0 floors at MTU");
	/* ... to 1 with the MTU 0 as well */
	p.mtu = 0;
	start(&s, &p, 100000);
	nscc_on_trim(&s, 1000000, 0, T0 + 1000);
	CHECK_EQ(s.cwnd, 1, "clamp: trim to 0 floors at 1");
	/* An explicit min_cwnd below the MTU wins: 100000 - 97000 = 3000 -> 4000 */
	base_params(&p);
	p.min_cwnd = 4000;
	start(&s, &p, 100000);
	nscc_on_trim(&s, 97000, 0, T0 + 1000);
	CHECK_EQ(s.cwnd, 4000, "clamp: min_cwnd 4000 below the MTU");
	/*
	 * A multiplicative decrease to 0 (gamma 2.0, md_jump 0, avg 200000,
	 * see test_decrease) with min_cwnd 0 floors at the MTU.
	 */
	quiet_params(&p);
	p.min_cwnd = 0;
	p.gamma_milli = 2000;
	p.md_jump_milli = 0;
	start(&s, &p, 100000);
	s.avg_delay_ns = 200000;
	nscc_on_ack(&s, 9000, 240000, 1, T0 + 1000);
	CHECK_EQ(s.cwnd, 9000, "clamp: decrease to 0 floors at MTU");
}

TEST_CASE(test_base_rtt_tracking, "nscc.base_rtt")
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;
	__u64 inc;

	quiet_params(&p);
	p.base_rtt_ns = 0;		/* follow the smallest RTT */
	p.target_ns = 0;		/* 0.75 x that */
	start(&s, &p, 90000);

	/*
	 * Before any sample the base is assumed to be 100 us, target 75 us.
	 * A resent packet (rtt 0) uses the average as its delay.
	 */
	s.avg_delay_ns = 74999;
	CHECK_EQ(nscc_on_ack(&s, 9000, 0, 0, T0 + 1000), NSCC_PROPORTIONAL,
		 "base: assumed 100 us, avg 74999 < 75000");
	s.avg_delay_ns = 75000;
	CHECK_EQ(nscc_on_ack(&s, 9000, 0, 0, T0 + 1000), NSCC_FAIR,
		 "base: assumed 100 us, avg 75000 >= 75000");
	CHECK_EQ(s.min_rtt_ns, 0, "base: rtt 0 is no sample");

	start(&s, &p, 90000);
	/* rtt 50000: min 50000, delay 0, target 37500.
	 * inc = 36000 * 9000 / 37500 * 37500 = 8640 * 37500 = 324000000 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 50000, 0, T0 + 1000), NSCC_PROPORTIONAL,
		 "base: first sample");
	CHECK_EQ(s.min_rtt_ns, 50000, "base: min_rtt 50000");
	CHECK_EQ(s.inc, 324000000, "base: inc against measured target");
	CHECK_EQ(s.avg_delay_ns, 0, "base: delay 0 against itself");
	/* rtt 80000: delay 30000 < 37500: + 8640 * 7500 = 64800000 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 80000, 0, T0 + 2000), NSCC_PROPORTIONAL,
		 "base: delay 30000 < 0.75 x 50000");
	CHECK_EQ(s.min_rtt_ns, 50000, "base: min_rtt keeps the smallest");
	CHECK_EQ(s.inc, 388800000, "base: inc 324000000 + 64800000");
	CHECK_EQ(s.avg_delay_ns, 3750, "base: avg = 30000 / 8");
	/* rtt 87499: delay 37499: + 8640 * 1; avg = 3750 - 468 + 4687 = 7969 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 87499, 0, T0 + 3000), NSCC_PROPORTIONAL,
		 "base: delay 37499");
	CHECK_EQ(s.inc, 388808640, "base: inc + 8640");
	CHECK_EQ(s.avg_delay_ns, 7969, "base: avg 7969");
	/* rtt 87500: delay 37500 = target: fair, + 900 * 9000 */
	CHECK_EQ(nscc_on_ack(&s, 9000, 87500, 0, T0 + 4000), NSCC_FAIR,
		 "base: delay 37500 = target");
	CHECK_EQ(s.inc, 396908640, "base: inc + 8100000");

	/* A smaller sample lowers the base to 45000 (target 33750). */
	CHECK_EQ(nscc_on_ack(&s, 9000, 45000, 0, T0 + 5000), NSCC_PROPORTIONAL,
		 "base: new minimum");
	CHECK_EQ(s.min_rtt_ns, 45000, "base: min_rtt 45000");
	/* rtt 78750: delay 33750 = new target (was < 37500 before). */
	CHECK_EQ(nscc_on_ack(&s, 9000, 78750, 0, T0 + 6000), NSCC_FAIR,
		 "base: target follows the minimum");
	/* An RTT that does not fit 32 bits is no minimum. */
	inc = s.inc;
	nscc_on_ack(&s, 9000, 0x100000000ULL, 0, T0 + 7000);
	CHECK_EQ(s.min_rtt_ns, 45000, "base: rtt >= 2^32 not a minimum");
	CHECK_EQ(s.inc - inc, 8100000, "base: huge rtt is fair increase");
	/* ... not even as the first sample (it would truncate to 5 ns). */
	start(&s, &p, 90000);
	nscc_on_ack(&s, 9000, 0x100000005ULL, 0, T0 + 1000);
	CHECK_EQ(s.min_rtt_ns, 0, "base: first rtt >= 2^32 not a minimum");

	/* An explicit base RTT wins over the measured minimum. */
	quiet_params(&p);
	start(&s, &p, 90000);
	nscc_on_ack(&s, 9000, 20000, 0, T0 + 1000);
	CHECK_EQ(s.min_rtt_ns, 20000, "base: min tracked with explicit base");
	/* rtt 70000 - 40000 (not 20000) = 30000 >= 30000: fair */
	CHECK_EQ(nscc_on_ack(&s, 9000, 70000, 0, T0 + 2000), NSCC_FAIR,
		 "base: explicit base used");
}
