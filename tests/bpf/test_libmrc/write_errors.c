// SPDX-License-Identifier: GPL-2.0
/*
 * WRITEs that fail: refused by the responder (E, remote access errors) and
 * sent to a QP that does not exist until the retries run out (F); the
 * completions, the QP states and the asynchronous events they leave.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "libmrc_test.h"

/* ====================================================================== */
/* E. Remote access errors                                                */
/* ====================================================================== */

#define E_LEN	65536u

static void check_async_after_refusal(struct pair *p);

/*
 * A's WRITE wr_id 1 is refused by B: A gets REM_ACCESS_ERR for it and
 * WR_FLUSH_ERR for the two good WRITEs queued behind it, A goes to ERROR,
 * and the target memory is untouched. The async events are checked by
 * check_async_after_refusal().
 */
static void expect_refused_write(struct pair *p, const uint8_t *src,
				 uint32_t lkey, uint64_t remote, uint32_t len,
				 uint32_t rkey, uint8_t *dst, uint32_t good_rkey,
				 const uint8_t *copy, const char *what)
{
	struct mrc_wc wc[4];
	int got;

	fprintf(stderr, "  refused WRITE: %s\n", what);
	drain_async();
	ASSERT_EQ(post_write1(p->a, 1, MRC_WR_WRITE, src, len, lkey, remote, rkey, 0),
		  0, "post the bad WRITE");
	ASSERT_EQ(post_write1(p->a, 2, MRC_WR_WRITE, src, 8192, lkey,
			      (uintptr_t)dst, good_rkey, 0), 0, "post a good WRITE after it");
	ASSERT_EQ(post_write1(p->a, 3, MRC_WR_WRITE, src, 8192, lkey,
			      (uintptr_t)dst + 8192, good_rkey, 0), 0,
		  "post another good WRITE");
	memset(wc, 0, sizeof(wc));
	got = collect(p->cqa, wc, 3, DEADLINE_MS);
	ASSERT_EQ(got, 3, "three completions within the deadline");
	if (got >= 1) {
		ASSERT_EQ(wc[0].wr_id, 1, "first completion: the bad WRITE");
		if (!ASSERT_EQ(wc[0].status, MRC_WC_REM_ACCESS_ERR, "bad WRITE: REM_ACCESS_ERR"))
			fprintf(stderr, "  got %s\n", mrc_wc_status_str(wc[0].status));
	}
	for (int i = 1; i < got; i++) {
		ASSERT_EQ(wc[i].wr_id, 1 + i, "later WRITEs in order");
		ASSERT_EQ(wc[i].status, MRC_WC_WR_FLUSH_ERR, "later WRITEs: WR_FLUSH_ERR");
	}
	ASSERT_EQ(quiet_for(p->cqa, 20), 0, "nothing more at A");
	ASSERT_EQ(qp_state(p->a), MRC_QP_ERROR, "A in ERROR");
	ASSERT_MEM_EQ(dst, copy, E_LEN, "target region unchanged");
	EXPECT_ERR(post_write1(p->a, 9, MRC_WR_WRITE, src, 10, lkey,
			       (uintptr_t)dst, good_rkey, 0), ENOTCONN,
		   "post_write after ERROR");
	EXPECT_ERR(mrc_post_recv(p->a, &(struct mrc_recv_wr){ .wr_id = 9 }), ENOTCONN,
		   "post_recv after ERROR");
}

static void check_async_after_refusal(struct pair *p)
{
	struct mrc_async_event ev;
	bool fatal_a = false, access_b = false;

	while (!mrc_get_async_event(ctx, &ev)) {
		if (ev.type == MRC_EVENT_QP_FATAL && ev.qp == p->a &&
		    ev.qp_num == mrc_qp_num(p->a)) {
			fatal_a = true;
			ASSERT_EQ(ev.status, MRC_WC_REM_ACCESS_ERR, "QP_FATAL status REM_ACCESS_ERR");
		}
		if (ev.type == MRC_EVENT_QP_ACCESS_ERR && ev.qp == p->b &&
		    ev.qp_num == mrc_qp_num(p->b))
			access_b = true;
	}
	ASSERT_TRUE(fatal_a, "async QP_FATAL for A");
	ASSERT_TRUE(access_b, "async QP_ACCESS_ERR for B");
}

TEST_CASE(test_remote_access_errors, "libmrc.remote_access_errors")
{
	uint8_t *src = malloc(E_LEN), *dst = malloc(E_LEN), *copy = malloc(E_LEN);
	uint8_t *ro = malloc(E_LEN), *ro_copy = malloc(E_LEN);
	struct mrc_mr *ms = NULL, *md = NULL, *mro = NULL;
	uint32_t lkey, rkey, wrong;
	struct pair p;
	struct mrc_wc wc[4];
	int got;

	memset(&p, 0, sizeof(p));
	if (!ASSERT_TRUE(src && dst && copy && ro && ro_copy, "buffers"))
		goto out_mem;
	fill_random(src, E_LEN, 7);
	memset(dst, 0x5A, E_LEN);
	memcpy(copy, dst, E_LEN);
	memset(ro, 0x3C, E_LEN);
	memcpy(ro_copy, ro, E_LEN);
	ms = mrc_reg_mr(ctx, src, E_LEN, MRC_ACCESS_LOCAL_WRITE);
	md = mrc_reg_mr(ctx, dst, E_LEN, MRC_ACCESS_REMOTE_WRITE);
	mro = mrc_reg_mr(ctx, ro, E_LEN, MRC_ACCESS_LOCAL_WRITE);	/* no remote */
	if (!ASSERT_TRUE(ms && md && mro, "regions"))
		goto out_mem;
	lkey = mrc_mr_lkey(ms);
	rkey = mrc_mr_rkey(md);
	wrong = rkey ^ 0x5a5a5a5au;
	if (wrong == lkey || wrong == mrc_mr_rkey(mro) || wrong == 0)
		wrong ^= 0x01000000u;

	if (!ASSERT_EQ(pair_create(&p, 8, 4, 1), 0, "create QPs"))
		goto out;

	/* 1. A key B never gave out. */
	if (!ASSERT_EQ(pair_connect(&p, "127.0.0.1", PSN_AB, PSN_BA, NULL), 0, "connect"))
		goto out;
	ASSERT_EQ(mrc_post_recv(p.b, &(struct mrc_recv_wr){ .wr_id = 77 }), 0,
		  "a receive at B");
	expect_refused_write(&p, src, lkey, (uintptr_t)dst, 4096, wrong, dst, rkey,
			     copy, "wrong rkey");
	check_async_after_refusal(&p);
	/*
	 * B refused: as in verbs (and recv.c's refuse_access()), the
	 * responder QP fails too and its posted receive is flushed.
	 */
	ASSERT_EQ(qp_state(p.b), MRC_QP_ERROR, "B in ERROR after refusing");
	memset(wc, 0, sizeof(wc));
	got = collect(p.cqb, wc, 1, 1000);
	if (ASSERT_EQ(got, 1, "B's receive flushed")) {
		ASSERT_EQ(wc[0].wr_id, 77, "B: flushed receive wr_id");
		ASSERT_EQ(wc[0].status, MRC_WC_WR_FLUSH_ERR, "B: flushed receive status");
	}

	/* 2. Past the end of B's region: the last 100 bytes stay. */
	if (!ASSERT_EQ(pair_connect(&p, "127.0.0.1", 0x10, 0x20, NULL), 0,
		       "reconnect through RESET"))
		goto out;
	drain_async();
	{
		struct mrc_wc w[4];

		ASSERT_EQ(post_write1(p.a, 1, MRC_WR_WRITE, src, 4096, lkey,
				      (uintptr_t)dst + E_LEN - 100, rkey, 0), 0,
			  "post WRITE across the end of the region");
		ASSERT_EQ(post_write1(p.a, 2, MRC_WR_WRITE, src, 8192, lkey,
				      (uintptr_t)dst, rkey, 0), 0, "post a good WRITE after it");
		memset(w, 0, sizeof(w));
		got = collect(p.cqa, w, 2, DEADLINE_MS);
		ASSERT_EQ(got, 2, "two completions");
		if (got >= 1 && !ASSERT_EQ(w[0].status, MRC_WC_REM_ACCESS_ERR,
					  "WRITE past the end: REM_ACCESS_ERR"))
			fprintf(stderr, "  got %s\n", mrc_wc_status_str(w[0].status));
		if (got >= 2)
			ASSERT_EQ(w[1].status, MRC_WC_WR_FLUSH_ERR, "next WRITE flushed");
		ASSERT_MEM_EQ(dst + E_LEN - 100, copy + E_LEN - 100, 100,
			      "last 100 bytes unchanged");
		ASSERT_MEM_EQ(dst, copy, E_LEN, "whole region unchanged");
		ASSERT_EQ(qp_state(p.a), MRC_QP_ERROR, "A in ERROR");
		check_async_after_refusal(&p);
	}

	/* 3. A region registered without MRC_ACCESS_REMOTE_WRITE. */
	if (!ASSERT_EQ(pair_connect(&p, "127.0.0.1", 0x30, 0x40, NULL), 0,
		       "reconnect through RESET"))
		goto out;
	drain_async();
	{
		struct mrc_wc w[2];

		ASSERT_EQ(post_write1(p.a, 1, MRC_WR_WRITE, src, 100, lkey,
				      (uintptr_t)ro, mrc_mr_rkey(mro), 0), 0,
			  "post WRITE into a local-only region");
		memset(w, 0, sizeof(w));
		got = collect(p.cqa, w, 1, DEADLINE_MS);
		if (ASSERT_EQ(got, 1, "a completion"))
			ASSERT_EQ(w[0].status, MRC_WC_REM_ACCESS_ERR,
				  "no remote write right: REM_ACCESS_ERR");
		ASSERT_MEM_EQ(ro, ro_copy, E_LEN, "local-only region unchanged");
		check_async_after_refusal(&p);
	}

	/* 4. After all that, the pair works again. */
	if (!ASSERT_EQ(pair_connect(&p, "127.0.0.1", 0x50, 0x60, NULL), 0,
		       "reconnect through RESET"))
		goto out;
	ASSERT_EQ(post_write1(p.a, 5, MRC_WR_WRITE, src, E_LEN, lkey,
			      (uintptr_t)dst, rkey, 0), 0, "post a good WRITE");
	memset(wc, 0, sizeof(wc));
	if (ASSERT_EQ(collect(p.cqa, wc, 1, DEADLINE_MS), 1, "it completes"))
		ASSERT_EQ(wc[0].status, MRC_WC_SUCCESS, "success after reconnecting");
	ASSERT_MEM_EQ(dst, src, E_LEN, "region written after reconnecting");
out:
	pair_destroy(&p);
out_mem:
	if (ms)
		mrc_dereg_mr(ms);
	if (md)
		mrc_dereg_mr(md);
	if (mro)
		mrc_dereg_mr(mro);
	free(src);
	free(dst);
	free(copy);
	free(ro);
	free(ro_copy);
}

/* ====================================================================== */
/* F. Retry exhaustion                                                    */
/* ====================================================================== */

TEST_CASE(test_retry_exhaustion, "libmrc.retry_exhaustion")
{
	static uint8_t buf[4096];
	struct mrc_qp_counters c;
	struct mrc_mr *mr = NULL;
	struct mrc_qp *qp = NULL;
	struct mrc_cq *cq;
	struct mrc_wc wc[4];
	enum mrc_wc_status st = (enum mrc_wc_status)-1;
	uint64_t before, t0, elapsed_ns;
	uint32_t dead;
	int got;

	cq = mrc_create_cq(ctx, 8);
	mr = mrc_reg_mr(ctx, buf, sizeof(buf), MRC_ACCESS_LOCAL_WRITE);
	if (!ASSERT_TRUE(cq && mr, "CQ and MR"))
		goto out;
	qp = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 4, .max_sge = 1 });
	if (!ASSERT_TRUE(qp != NULL, "create QP"))
		goto out;
	dead = unused_qpn();
	if (!ASSERT_TRUE(dead != 0, "a QP number nobody holds"))
		goto out;
	if (!ASSERT_EQ(connect_qp(qp, dead, 0x12345678, "127.0.0.1", 0, 100,
				  &(struct qp_conf){ .set_retry = true, .timeout = 8,
						     .retry_cnt = 2,
						     .exp_retry_cnt = 2 }), 0,
		       "connect to a QP that does not exist"))
		goto out;
	drain_async();
	before = drops(offsetof(struct mrc_drop_stats, unknown_qp));
	t0 = now_ns();
	ASSERT_EQ(post_write1(qp, 1, MRC_WR_WRITE, buf, 1024, mrc_mr_lkey(mr),
			      0x10000, 0x1234, 0), 0, "post WRITE 1");
	ASSERT_EQ(post_write1(qp, 2, MRC_WR_WRITE, buf, 1, mrc_mr_lkey(mr),
			      0x20000, 0x1234, 0), 0, "post WRITE 2");
	memset(wc, 0, sizeof(wc));
	got = collect(cq, wc, 2, 5000);
	elapsed_ns = now_ns() - t0;
	fprintf(stderr, "  retries exhausted after %.2f ms\n", elapsed_ns / 1e6);
	ASSERT_EQ(got, 2, "both WRITEs complete");
	if (got >= 1) {
		ASSERT_EQ(wc[0].wr_id, 1, "first: WRITE 1");
		ASSERT_EQ(wc[0].status, MRC_WC_RETRY_EXC_ERR, "first: RETRY_EXC_ERR");
	}
	if (got >= 2) {
		ASSERT_EQ(wc[1].wr_id, 2, "second: WRITE 2");
		ASSERT_EQ(wc[1].status, MRC_WC_WR_FLUSH_ERR, "second: WR_FLUSH_ERR");
	}
	ASSERT_TRUE(elapsed_ns < 1000000000ull, "within 1 s");
	/* 1 + 2 fixed + 2 doubling intervals: 9 x 262 us at the least. */
	ASSERT_TRUE(elapsed_ns >= 2000000ull, "not before the retries ran (>= 2 ms)");
	ASSERT_EQ(qp_state(qp), MRC_QP_ERROR, "QP in ERROR");
	ASSERT_TRUE(find_async(MRC_EVENT_QP_FATAL, qp, &st), "QP_FATAL event");
	ASSERT_EQ(st, MRC_WC_RETRY_EXC_ERR, "QP_FATAL status RETRY_EXC_ERR");
	if (ASSERT_EQ(mrc_qp_counters(qp, &c), 0, "counters")) {
		/* Each of retry_cnt + exp_retry_cnt retries resends both packets. */
		ASSERT_EQ(c.tx_retransmits, 2 * (2 + 2), "retransmissions: 2 packets x 4 retries");
		ASSERT_EQ(c.tx_packets, 2 + c.tx_retransmits, "packets sent");
		ASSERT_EQ(drops(offsetof(struct mrc_drop_stats, unknown_qp)) - before,
			  c.tx_packets, "XDP counted every packet as unknown_qp");
	}
	ASSERT_EQ(quiet_for(cq, 20), 0, "nothing more");
out:
	if (qp)
		ASSERT_EQ(mrc_destroy_qp(qp), 0, "destroy QP");
	if (mr)
		mrc_dereg_mr(mr);
	if (cq)
		ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ");
}
