// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Long sequences of acks, trims and losses: the window stays within
 * [min_cwnd, max_cwnd] and no counter wraps, at 1 MB and at 4 GiB.
 */
#include "nscc_test.h"

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

TEST_CASE(test_sequence, "nscc.sequence")
{
	struct mrc_nscc_params p;

	base_params(&p);
	run_sequence(&p, 9000, "seq 1 MB");
}

TEST_CASE(test_sequence_4g, "nscc.sequence.4g")
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
