// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The NSCC unit tests' parameters and helpers (see nscc_test.h) and
 * main(); the tests register themselves (TEST_CASE) in the other files.
 */
#include "nscc_test.h"

TEST_STATE_DEFINE;

unsigned int n_checks;

void base_params(struct mrc_nscc_params *p)
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
void quiet_params(struct mrc_nscc_params *p)
{
	base_params(p);
	p->adjust_bytes = 1000000000;
	p->adjust_period_ns = 1000000000;
}

/* A window created at T0 whose cwnd is then set by hand (0 = keep max_cwnd). */
void start(struct mrc_nscc *s, const struct mrc_nscc_params *p,
		  __u64 cwnd)
{
	nscc_init(s, p, T0);
	if (cwnd)
		s->cwnd = cwnd;
}

/*
 * Acks of 9000 bytes at rtt 80000 (delay 40000) at T0 + 1000, + 10000,
 * + 20000 (27000 bytes), then one at T0 + 60000 that closes the first
 * period: its own sample makes avg 16554 (avg4 in the table of nscc_test.h),
 * window RTT 40000 + 16554 = 56554, and 60000 - 0 >= 56554. (At T0 + 40000,
 * one base RTT, it would not: 40000 < 56554.)
 * Afterwards: qa_last_bytes = 27000, qa_bytes = 9000, qa_start = T0 + 60000,
 * avg_delay 16554 (window RTT 56554), inc = 4 x 900 x 9000 = 32400000.
 */
void one_period_of_27000(struct mrc_nscc *s)
{
	nscc_on_ack(s, 9000, 80000, 0, T0 + 1000);
	nscc_on_ack(s, 9000, 80000, 0, T0 + 10000);
	nscc_on_ack(s, 9000, 80000, 0, T0 + 20000);
	nscc_on_ack(s, 9000, 80000, 0, T0 + 60000);
}

int main(void)
{
	RUN_REGISTERED_TESTS();
	fprintf(stderr, "%u checks\n", n_checks);
	return TEST_EXIT();
}
