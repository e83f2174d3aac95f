// SPDX-License-Identifier: GPL-2.0
/*
 * The tail loss probe (user/libmrc/send.c probe_tail): a lost last packet
 * has no later packet whose SACK would show it missing. It is resent a
 * probe timeout (2 x srtt, at least 2 ms) after it went, long before the
 * retransmission timeout, and twice at most per progress.
 */
#include <stdlib.h>
#include <string.h>

#include "libmrc_test.h"

#define PROBE_MTU	1024

/*
 * A one-packet WRITE that B drops (B is not ready yet: XDP counts
 * qp_not_ready), then B ready: with a 67 ms timeout, the WRITE completes
 * by the tail probe, without a timeout.
 */
TEST_CASE(test_tail_probe_recovers_lost_tail, "libmrc.tail_probe_recovers_lost_tail")
{
	static uint8_t src[PROBE_MTU], dst[PROBE_MTU];
	const struct qp_conf conf = { .mtu = PROBE_MTU, .set_retry = true,
				      .timeout = 16, .retry_cnt = 3,
				      .exp_retry_cnt = 3 };
	struct mrc_mr *ms = NULL, *md = NULL;
	struct mrc_qp_counters c;
	struct mrc_wc wc[1];
	struct pair p;
	uint32_t qa, qb;

	memset(&p, 0, sizeof(p));
	fill_random(src, sizeof(src), 17);
	memset(dst, 0, sizeof(dst));
	ms = mrc_reg_mr(ctx, src, sizeof(src), MRC_ACCESS_LOCAL_WRITE);
	md = mrc_reg_mr(ctx, dst, sizeof(dst), MRC_ACCESS_REMOTE_WRITE);
	if (!ASSERT_TRUE(ms && md, "regions") ||
	    !ASSERT_EQ(pair_create(&p, 4, 1, 1), 0, "create QPs"))
		goto out;
	qa = mrc_qp_num(p.a);
	qb = mrc_qp_num(p.b);
	if (!ASSERT_EQ(connect_qp(p.a, qb, mrc_qp_key(p.b), "127.0.0.1", 200, 100, &conf),
		       0, "A to RTS"))
		goto out;
	ASSERT_EQ(post_write1(p.a, 5, MRC_WR_WRITE, src, sizeof(src), mrc_mr_lkey(ms),
			      (uintptr_t)dst, mrc_mr_rkey(md), 0), 0, "post a 1-packet WRITE");
	/* One poll sends it; B, not yet RTR, drops it. */
	ASSERT_EQ(mrc_poll_cq(p.cqa, 1, wc), 0, "nothing completes yet");
	if (!ASSERT_EQ(connect_qp(p.b, qa, mrc_qp_key(p.a), "127.0.0.1", 100, 200, &conf),
		       0, "B to RTS"))
		goto out;
	memset(wc, 0, sizeof(wc));
	if (ASSERT_EQ(collect(p.cqa, wc, 1, DEADLINE_MS), 1, "the WRITE completes")) {
		ASSERT_EQ(wc[0].wr_id, 5, "wr_id");
		ASSERT_EQ(wc[0].status, MRC_WC_SUCCESS, "status SUCCESS");
	}
	ASSERT_MEM_EQ(dst, src, sizeof(src), "data placed");
	if (ASSERT_EQ(mrc_qp_counters(p.a, &c), 0, "counters")) {
		fprintf(stderr, "  tail probes %llu, timeouts %llu, resent %llu\n",
			(unsigned long long)c.tail_probes, (unsigned long long)c.timeouts,
			(unsigned long long)c.tx_retransmits);
		ASSERT_EQ(c.tail_probes, 1, "one tail probe");
		ASSERT_EQ(c.timeouts, 0, "no retransmission timeout");
		ASSERT_EQ(c.tx_retransmits, 1, "the packet resent once");
	}
out:
	pair_destroy(&p);
	if (ms)
		mrc_dereg_mr(ms);
	if (md)
		mrc_dereg_mr(md);
}

/*
 * The probe goes twice at most per progress, before the first timeout:
 * with B never ready, the tail is resent by two probes (2 and 4 ms), then
 * only by the timer, which exhausts its retries as before (every retry
 * resends the packet).
 */
TEST_CASE(test_tail_probe_bounded, "libmrc.tail_probe_bounded")
{
	static uint8_t src[PROBE_MTU];
	const struct qp_conf conf = { .mtu = PROBE_MTU, .set_retry = true,
				      .timeout = 14, .retry_cnt = 1,
				      .exp_retry_cnt = 1 };
	struct mrc_mr *ms = NULL;
	struct mrc_qp_counters c;
	struct mrc_wc wc[1];
	struct pair p;

	memset(&p, 0, sizeof(p));
	ms = mrc_reg_mr(ctx, src, sizeof(src), MRC_ACCESS_LOCAL_WRITE);
	if (!ASSERT_TRUE(ms != NULL, "region") ||
	    !ASSERT_EQ(pair_create(&p, 4, 1, 1), 0, "create QPs"))
		goto out;
	/* 16.8 ms timeout: the probes (2 and 4 ms) come well before it. */
	if (!ASSERT_EQ(connect_qp(p.a, mrc_qp_num(p.b), mrc_qp_key(p.b), "127.0.0.1",
				  200, 100, &conf), 0, "A to RTS"))
		goto out;
	ASSERT_EQ(post_write1(p.a, 6, MRC_WR_WRITE, src, sizeof(src), mrc_mr_lkey(ms),
			      0x10000, 0x1234, 0), 0, "post a 1-packet WRITE");
	memset(wc, 0, sizeof(wc));
	if (ASSERT_EQ(collect(p.cqa, wc, 1, DEADLINE_MS), 1, "the WRITE fails"))
		ASSERT_EQ(wc[0].status, MRC_WC_RETRY_EXC_ERR, "status RETRY_EXC_ERR");
	if (ASSERT_EQ(mrc_qp_counters(p.a, &c), 0, "counters")) {
		ASSERT_EQ(c.tail_probes, 2, "two tail probes");
		ASSERT_EQ(c.timeouts, 3, "three timeouts (1 + 1 fixed + 1 doubling)");
		ASSERT_EQ(c.tx_retransmits, 2 + 2, "resent by the probes and two retries");
	}
out:
	pair_destroy(&p);
	if (ms)
		mrc_dereg_mr(ms);
}
