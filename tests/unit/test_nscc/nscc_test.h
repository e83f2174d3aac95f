/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
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
 *
 * What the files of tests/unit/test_nscc/ share: the parameters, the
 * window start and the one scripted period of main.c.
 *
 *   main.c          parameters, helpers, main()
 *   ack.c           nscc_on_ack: init, the four quadrants, fulfilment, fast
 *                   increase, clamping, base RTT tracking
 *   trim.c          nscc_on_trim: plain and last-hop trims
 *   quick_adapt.c   quick adapt on trims, delay and losses; the window RTT
 *   defaults.c      nscc_defaults: CC profiles resolved to parameters
 *   sequence.c      long mixed sequences: the window stays in bounds
 */
#ifndef MRC_TEST_NSCC_H
#define MRC_TEST_NSCC_H

#include <stdint.h>
#include <string.h>

#include "mrc/nscc.h"
#include "test.h"

/* Every check goes through CHECK_*, so main() can report how many ran. */
extern unsigned int n_checks;

#define CHECK_EQ(actual, expected, what) \
	(n_checks++, ASSERT_EQ((actual), (expected), (what)))

#define T0	1000000ULL
#define MTU	9000u

/* The parameters above. */
void base_params(struct mrc_nscc_params *p);
/* The same without fulfilment, to look at one quadrant alone. */
void quiet_params(struct mrc_nscc_params *p);
/* A window created at T0 whose cwnd is then set by hand (0 = keep max_cwnd). */
void start(struct mrc_nscc *s, const struct mrc_nscc_params *p, __u64 cwnd);
/* Four acks at rtt 80000 that close the first goodput period at T0 + 60000. */
void one_period_of_27000(struct mrc_nscc *s);

#endif
