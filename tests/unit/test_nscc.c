// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of include/mrc/nscc.h, the NSCC window update the XDP program
 * runs on every SACK: scripted ACK, trim and loss sequences drive
 * nscc_on_ack / nscc_on_trim / nscc_on_loss / nscc_quick_adapt, and
 * nscc_defaults resolves CC profiles. Every expected number is worked out
 * by hand in the comment next to it (../shared/MRC.md section 5 gives the
 * formulas), never by calling the formulas under test.
 *
 * Unless a test says otherwise the window runs with the parameters of
 * base_params(): MTU 9000, base RTT 40 us, target 30 us, max_cwnd 1 MB,
 * alpha 36000, fi 900, eta 90, fi_scale 0.25, fast_delay 3.75 us, adjust
 * every 8 MTU (72000 bytes) or 40 us, gamma 0.8, max_md_jump 0.5,
 * qa_gate 3 (1000000 >> 3 = 125000 bytes), qa_threshold 120 us. Time
 * starts at T0 = 1 ms; "rtt R" below means delay = R - 40000.
 * fast_delay and qa_threshold are set explicitly here, to the very values
 * that 0 derives at run time from target 30 us (30000 / 8 = 3750 and
 * 4 x 30000 = 120000); the *_derived tests leave them 0.
 *
 * Quick adapt measures goodput over the window RTT, base RTT + avg_delay
 * (nscc_window_rtt), and acts at most once per window RTT; the
 * multiplicative decrease, eta and the adjust period still go by the base
 * RTT. An ack's own RTT sample enters avg_delay before the ack is counted,
 * so the window RTT that decides whether an ack closes a period already
 * includes that ack's delay. The acks at rtt 80000 (delay 40000, 40000 >> 3
 * = 5000 per sample) that most quick-adapt tests use move the average
 * from 0 as follows (x >> 3 rounds down):
 *   avg1 = 0     - 0    + 5000 = 5000    window RTT 45000
 *   avg2 = 5000  - 625  + 5000 = 9375    window RTT 49375
 *   avg3 = 9375  - 1171 + 5000 = 13204   window RTT 53204  (9375/8 = 1171.9)
 *   avg4 = 13204 - 1650 + 5000 = 16554   window RTT 56554  (13204/8 = 1650.5)
 *   avg5 = 16554 - 2069 + 5000 = 19485   window RTT 59485  (16554/8 = 2069.3)
 *   avg6 = 19485 - 2435 + 5000 = 22050   window RTT 62050  (19485/8 = 2435.6)
 */
#include <stdint.h>
#include <string.h>

#include "mrc/nscc.h"
#include "test.h"

TEST_STATE_DEFINE;

/* Every check goes through CHECK_*, so main() can report how many ran. */
static unsigned int n_checks;

#define CHECK_EQ(actual, expected, what) \
	(n_checks++, ASSERT_EQ((actual), (expected), (what)))

#define T0	1000000ULL
#define MTU	9000u

static void base_params(struct mrc_nscc_params *p)
{
	memset(p, 0, sizeof(*p));
	p->mtu = MTU;
	p->base_rtt_ns = 40000;
	p->target_ns = 30000;
	p->qa_threshold_ns = 120000;
	p->adjust_period_ns = 40000;
	p->adjust_bytes = 8 * MTU;		/* 72000 */
	p->max_cwnd = 1000000;
	p->min_cwnd = MTU;
	p->alpha_bytes = 36000;
	p->fi_bytes = 900;
	p->eta_bytes = 90;
	p->fi_scale_milli = 250;
	p->fast_delay_ns = 3750;
	p->gamma_milli = 800;
	p->md_jump_milli = 500;
	p->qa_gate = 3;
	p->algo = MRC_CC_NSCC;
}

/*
 * The same without fulfilment (adjust every 1e9 bytes or 1 s), to look at
 * one quadrant's effect on cwnd and inc alone.
 */
static void quiet_params(struct mrc_nscc_params *p)
{
	base_params(p);
	p->adjust_bytes = 1000000000;
	p->adjust_period_ns = 1000000000;
}

/* A window created at T0 whose cwnd is then set by hand (0 = keep max_cwnd). */
static void start(struct mrc_nscc *s, const struct mrc_nscc_params *p,
		  __u64 cwnd)
{
	nscc_init(s, p, T0);
	if (cwnd)
		s->cwnd = cwnd;
}

/* ---- init ------------------------------------------------------------ */

static void test_init(void)
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

static void test_proportional(void)
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

static void test_fair(void)
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

static void test_decrease(void)
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

static void test_hold(void)
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

static void test_fulfil(void)
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

static void test_fast_entry(void)
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
static void test_fast_sustained(void)
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
static void test_fast_derived(void)
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

/* ---- trims and quick adapt --------------------------------------------- */

static void test_trim(void)
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
 * Acks of 9000 bytes at rtt 80000 (delay 40000) at T0 + 1000, + 10000,
 * + 20000 (27000 bytes), then one at T0 + 60000 that closes the first
 * period: its own sample makes avg 16554 (avg4 in the table at the top),
 * window RTT 40000 + 16554 = 56554, and 60000 - 0 >= 56554. (At T0 + 40000,
 * one base RTT, it would not: 40000 < 56554.)
 * Afterwards: qa_last_bytes = 27000, qa_bytes = 9000, qa_start = T0 + 60000,
 * avg_delay 16554 (window RTT 56554), inc = 4 x 900 x 9000 = 32400000.
 */
static void one_period_of_27000(struct mrc_nscc *s)
{
	nscc_on_ack(s, 9000, 80000, 0, T0 + 1000);
	nscc_on_ack(s, 9000, 80000, 0, T0 + 10000);
	nscc_on_ack(s, 9000, 80000, 0, T0 + 20000);
	nscc_on_ack(s, 9000, 80000, 0, T0 + 60000);
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
static void test_trim_last_hop(void)
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

static void test_quick_adapt(void)
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

static void test_quick_adapt_delay(void)
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
static void test_quick_adapt_derived(void)
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
static void test_quick_adapt_defaults(void)
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
static void test_quick_adapt_only_down(void)
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
static void test_quick_adapt_rollover(void)
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

static void test_quick_adapt_loss(void)
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
static void test_quick_adapt_window_rtt(void)
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

/* ---- clamping and base RTT tracking -------------------------------------- */

static void test_clamp(void)
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

static void test_base_rtt_tracking(void)
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

/* ---- nscc_defaults ------------------------------------------------------- */

static void test_defaults(void)
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
static void test_defaults_qa_gate(void)
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

static void test_defaults_explicit(void)
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

static void test_defaults_floors(void)
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

/* ---- long sequences ------------------------------------------------------ */

/*
 * 200 acks with a delay pattern (empty, small, at target, late, very late),
 * ECN on some late acks, trims (plain and last-hop) and losses in between. After every event the
 * window must be within [min_cwnd, max_cwnd]; inc may only shrink when a
 * fulfilment or quick adapt consumed it (a wrap would show as a shrink).
 */
static void run_sequence(const struct mrc_nscc_params *p, __u64 bytes,
			 const char *tag)
{
	static const __u32 delays[] = {
		0, 1000, 10000, 29999, 30000, 60000, 200000, 2000,
		0, 0, 500, 45000, 130000, 0, 3000, 25000,
	};
	unsigned int out_of_range = 0, inc_wrapped = 0, i;
	__u64 now = T0, acked = 0, trims = 0, losses = 0;
	char what[96];
	struct mrc_nscc s;

	nscc_init(&s, p, T0);
	for (i = 0; i < 200; i++) {
		__u32 d = delays[i % 16];
		int ecn = d >= 45000 && i % 3 == 0;
		__u64 inc = s.inc, nf = s.n_fulfil, nq = s.n_qa;
		__u64 rtt = i % 11 == 10 ? 0 : p->base_rtt_ns + (__u64)d;

		now += 5000;
		nscc_on_ack(&s, bytes, rtt, ecn, now);
		acked += bytes;
		if (s.inc < inc && s.n_fulfil == nf && s.n_qa == nq)
			inc_wrapped++;
		if (s.cwnd < p->min_cwnd || s.cwnd > p->max_cwnd)
			out_of_range++;
		if (i % 13 == 12) {
			/* every other trim a last-hop one */
			nscc_on_trim(&s, bytes, (i / 13) % 2, now + 100);
			trims++;
		}
		if (i % 29 == 28) {
			nscc_on_loss(&s, 2, now + 200);
			losses += 2;
		}
		if (s.cwnd < p->min_cwnd || s.cwnd > p->max_cwnd)
			out_of_range++;
	}
	snprintf(what, sizeof(what), "%s: cwnd out of [min, max]", tag);
	CHECK_EQ(out_of_range, 0, what);
	snprintf(what, sizeof(what), "%s: inc shrank without a payout", tag);
	CHECK_EQ(inc_wrapped, 0, what);
	snprintf(what, sizeof(what), "%s: acked_bytes", tag);
	CHECK_EQ(s.acked_bytes, acked, what);
	snprintf(what, sizeof(what), "%s: n_trims", tag);
	CHECK_EQ(s.n_trims, trims, what);
	snprintf(what, sizeof(what), "%s: n_losses", tag);
	CHECK_EQ(s.n_losses, losses, what);
	/* The pattern reaches every path at least once. */
	snprintf(what, sizeof(what), "%s: fulfilments happened", tag);
	CHECK_EQ(s.n_fulfil > 0, 1, what);
	snprintf(what, sizeof(what), "%s: decreases happened", tag);
	CHECK_EQ(s.n_md > 0, 1, what);
	snprintf(what, sizeof(what), "%s: quick adapt happened", tag);
	CHECK_EQ(s.n_qa > 0, 1, what);
}

static void test_sequence(void)
{
	struct mrc_nscc_params p;

	base_params(&p);
	run_sequence(&p, 9000, "seq 1 MB");
}

static void test_sequence_4g(void)
{
	struct mrc_nscc_params p;
	struct mrc_nscc s;

	/* 4 GiB - 1 windows, 1 MiB acks, every gain at its 32-bit maximum. */
	base_params(&p);
	p.mtu = 1 << 20;
	p.max_cwnd = 0xffffffffu;
	p.min_cwnd = 1 << 20;
	p.alpha_bytes = 0xffffffffu;
	p.fi_bytes = 0xffffffffu;
	p.eta_bytes = 0xffffffffu;
	p.adjust_bytes = 8u << 20;
	p.fi_scale_milli = 1000;
	run_sequence(&p, 1 << 20, "seq 4 GiB");

	/*
	 * One proportional ack at delay 0:
	 * 0xffffffff * 1048576 = 4503599626321920, / 30000 = 150119987544
	 * (150119987544.06), * 30000 = 4503599626320000 (no 64-bit wrap).
	 */
	p.adjust_bytes = 0xffffffffu;
	p.adjust_period_ns = 1000000000;
	nscc_init(&s, &p, T0);
	nscc_on_ack(&s, 1 << 20, 40000, 0, T0 + 1000);
	CHECK_EQ(s.inc, 4503599626320000ULL, "4g: proportional inc");
	/* Fair: 0xffffffff * 1048576 = 4503599626321920 more. */
	nscc_on_ack(&s, 1 << 20, 80000, 0, T0 + 2000);
	CHECK_EQ(s.inc, 4503599626320000ULL + 4503599626321920ULL, "4g: fair inc");
	/* MD of a full 4 GiB window: avg 50000, factor 680:
	 * 4294967295 * 680 / 1000 = 2920577760 (2920577760.6) */
	s.avg_delay_ns = 50000;
	nscc_on_ack(&s, 1 << 20, 90000, 1, T0 + 3000);
	CHECK_EQ(s.cwnd, 2920577760ULL, "4g: decrease");
	/* Fast increase of 1 MiB x 1.0 from 4 GiB - 2 MiB: capped. */
	s.cwnd = 0xffffffffULL - (2 << 20);
	s.fast_bytes = 0xffffffffULL;
	nscc_on_ack(&s, 1 << 20, 40000, 0, T0 + 4000);
	CHECK_EQ(s.cwnd, 0xffffffffULL - (1 << 20), "4g: fast + 1 MiB");
	nscc_on_ack(&s, 1 << 20, 40000, 0, T0 + 5000);
	nscc_on_ack(&s, 1 << 20, 40000, 0, T0 + 6000);
	CHECK_EQ(s.cwnd, 0xffffffffULL, "4g: fast capped at max_cwnd");
}

int main(void)
{
	RUN_TEST("nscc.init", test_init);
	RUN_TEST("nscc.quadrant.proportional", test_proportional);
	RUN_TEST("nscc.quadrant.fair", test_fair);
	RUN_TEST("nscc.quadrant.decrease", test_decrease);
	RUN_TEST("nscc.quadrant.hold", test_hold);
	RUN_TEST("nscc.fulfil", test_fulfil);
	RUN_TEST("nscc.fast.entry", test_fast_entry);
	RUN_TEST("nscc.fast.sustained", test_fast_sustained);
	RUN_TEST("nscc.fast.derived", test_fast_derived);
	RUN_TEST("nscc.trim", test_trim);
	RUN_TEST("nscc.trim.last_hop", test_trim_last_hop);
	RUN_TEST("nscc.qa.trim", test_quick_adapt);
	RUN_TEST("nscc.qa.delay", test_quick_adapt_delay);
	RUN_TEST("nscc.qa.loss", test_quick_adapt_loss);
	RUN_TEST("nscc.qa.derived", test_quick_adapt_derived);
	RUN_TEST("nscc.qa.defaults", test_quick_adapt_defaults);
	RUN_TEST("nscc.qa.only_down", test_quick_adapt_only_down);
	RUN_TEST("nscc.qa.rollover", test_quick_adapt_rollover);
	RUN_TEST("nscc.qa.window_rtt", test_quick_adapt_window_rtt);
	RUN_TEST("nscc.clamp", test_clamp);
	RUN_TEST("nscc.base_rtt", test_base_rtt_tracking);
	RUN_TEST("nscc.defaults", test_defaults);
	RUN_TEST("nscc.defaults.qa_gate", test_defaults_qa_gate);
	RUN_TEST("nscc.defaults.explicit", test_defaults_explicit);
	RUN_TEST("nscc.defaults.floors", test_defaults_floors);
	RUN_TEST("nscc.sequence", test_sequence);
	RUN_TEST("nscc.sequence.4g", test_sequence_4g);
	fprintf(stderr, "%u checks\n", n_checks);
	return TEST_EXIT();
}
