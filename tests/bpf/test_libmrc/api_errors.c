// SPDX-License-Identifier: GPL-2.0
/*
 * libmrc refusals at call time, before anything reaches the wire: every
 * entry point's argument checks (A), then the local protection of memory
 * regions and the queue limits of a QP (C).
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "libmrc_test.h"

/* ====================================================================== */
/* A. Argument checking                                                   */
/* ====================================================================== */

TEST_CASE(test_args, "libmrc.args")
{
	struct mrc_context_attr bad_dir = { .pin_dir = "/sys/fs/bpf/mrc-libtest-does-not-exist" };
	struct mrc_cq *cq, *cq2 = NULL;
	struct mrc_context *ctx2;
	struct mrc_qp *qp = NULL;
	struct mrc_qp_attr qa;
	struct mrc_wc wc[2];
	struct mrc_async_event ev;
	struct mrc_sge sge;
	struct mrc_send_wr wr;
	struct mrc_recv_wr rwr = { .wr_id = 1 };
	struct mrc_conn_params cp;
	struct sockaddr_storage addrs[4];
	static uint8_t buf[4096];
	int pfd[2];

	memset(&qa, 0, sizeof(qa));
	memset(&cp, 0, sizeof(cp));

	/* context */
	EXPECT_ERR(mrc_close(NULL), EINVAL, "mrc_close(NULL)");
	EXPECT_NULL(mrc_open(&bad_dir), ENOENT, "mrc_open(missing pin_dir)");
	EXPECT_ERR(mrc_local_addrs(NULL, AF_INET, addrs, 4), EINVAL,
		   "mrc_local_addrs(NULL ctx)");
	EXPECT_ERR(mrc_local_addrs(ctx, AF_UNIX, addrs, 4), EINVAL,
		   "mrc_local_addrs(AF_UNIX)");
	EXPECT_ERR(mrc_local_addrs(ctx, 12345, addrs, 4), EINVAL,
		   "mrc_local_addrs(family 12345)");
	EXPECT_ERR(mrc_local_addrs(ctx, AF_INET, addrs, -1), EINVAL,
		   "mrc_local_addrs(max -1)");
	EXPECT_ERR(mrc_local_addrs(ctx, AF_INET, NULL, 4), EINVAL,
		   "mrc_local_addrs(NULL out)");

	/* memory regions */
	EXPECT_NULL(mrc_reg_mr(NULL, buf, sizeof(buf), MRC_ACCESS_LOCAL_WRITE),
		    EINVAL, "mrc_reg_mr(NULL ctx)");
	EXPECT_NULL(mrc_reg_mr(ctx, NULL, sizeof(buf), MRC_ACCESS_LOCAL_WRITE),
		    EINVAL, "mrc_reg_mr(NULL addr)");
	EXPECT_NULL(mrc_reg_mr(ctx, buf, 0, MRC_ACCESS_LOCAL_WRITE), EINVAL,
		    "mrc_reg_mr(length 0)");
	EXPECT_NULL(mrc_reg_mr(ctx, buf, sizeof(buf), 1u << 2), EINVAL,
		    "mrc_reg_mr(access bit 2)");
	EXPECT_NULL(mrc_reg_mr(ctx, buf, sizeof(buf), 0x80000000u), EINVAL,
		    "mrc_reg_mr(access bit 31)");
	EXPECT_NULL(mrc_reg_mr(ctx, (void *)(uintptr_t)(UINTPTR_MAX - 100), 4096,
			       MRC_ACCESS_LOCAL_WRITE), EINVAL,
		    "mrc_reg_mr(range wraps)");
	EXPECT_ERR(mrc_dereg_mr(NULL), EINVAL, "mrc_dereg_mr(NULL)");
	ASSERT_EQ(mrc_mr_lkey(NULL), 0, "mrc_mr_lkey(NULL)");
	ASSERT_EQ(mrc_mr_rkey(NULL), 0, "mrc_mr_rkey(NULL)");

	/* completion queues */
	EXPECT_NULL(mrc_create_cq(ctx, 0), EINVAL, "mrc_create_cq(depth 0)");
	EXPECT_NULL(mrc_create_cq(ctx, -5), EINVAL, "mrc_create_cq(depth -5)");
	EXPECT_NULL(mrc_create_cq(NULL, 8), EINVAL, "mrc_create_cq(NULL ctx)");
	EXPECT_ERR(mrc_destroy_cq(NULL), EINVAL, "mrc_destroy_cq(NULL)");
	cq = mrc_create_cq(ctx, 8);
	if (!ASSERT_TRUE(cq != NULL, "mrc_create_cq(8)"))
		return;
	EXPECT_ERR(mrc_poll_cq(NULL, 1, wc), EINVAL, "mrc_poll_cq(NULL cq)");
	EXPECT_ERR(mrc_poll_cq(cq, -1, wc), EINVAL, "mrc_poll_cq(n -1)");
	EXPECT_ERR(mrc_poll_cq(cq, 1, NULL), EINVAL, "mrc_poll_cq(NULL wc)");
	ASSERT_EQ(mrc_poll_cq(cq, 2, wc), 0, "mrc_poll_cq(empty)");
	ASSERT_EQ(mrc_poll_cq(cq, 0, NULL), 0, "mrc_poll_cq(n 0, NULL wc)");

	/* queue pairs: creation */
	EXPECT_NULL(mrc_create_qp(NULL, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 8 }),
		    EINVAL, "mrc_create_qp(NULL ctx)");
	EXPECT_NULL(mrc_create_qp(ctx, NULL), EINVAL, "mrc_create_qp(NULL attr)");
	EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = NULL, .recv_cq = cq, .max_send_wr = 8 }),
		    EINVAL, "mrc_create_qp(NULL send_cq)");
	EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = NULL, .max_send_wr = 8 }),
		    EINVAL, "mrc_create_qp(NULL recv_cq)");
	EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 0 }),
		    EINVAL, "mrc_create_qp(max_send_wr 0)");
	EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 513 }),
		    EINVAL, "mrc_create_qp(max_send_wr 513)");
	EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 8, .max_sge = 17 }),
		    EINVAL, "mrc_create_qp(max_sge 17)");

	/* The limits themselves are accepted. */
	qp = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 512,
		.max_recv_wr = 4, .max_sge = 16 });
	if (!ASSERT_TRUE(qp != NULL, "mrc_create_qp(max_send_wr 512, max_sge 16)")) {
		mrc_destroy_cq(cq);
		return;
	}

	/* A CQ in use cannot go. */
	EXPECT_ERR(mrc_destroy_cq(cq), EBUSY, "mrc_destroy_cq(CQ used by a QP)");

	/* modify / query */
	qa.qp_state = MRC_QP_INIT;
	EXPECT_ERR(mrc_modify_qp(NULL, &qa, MRC_QP_ATTR_STATE), EINVAL,
		   "mrc_modify_qp(NULL qp)");
	EXPECT_ERR(mrc_modify_qp(qp, NULL, MRC_QP_ATTR_STATE), EINVAL,
		   "mrc_modify_qp(NULL attr)");
	EXPECT_ERR(mrc_modify_qp(qp, &qa, MRC_QP_ATTR_STATE | (1 << 13)), EINVAL,
		   "mrc_modify_qp(mask bit 13)");
	EXPECT_ERR(mrc_modify_qp(qp, &qa, MRC_QP_ATTR_STATE | (1 << 30)), EINVAL,
		   "mrc_modify_qp(mask bit 30)");
	EXPECT_ERR(mrc_modify_qp(qp, &qa, -1), EINVAL, "mrc_modify_qp(mask -1)");
	qa.qp_state = (enum mrc_qp_state)99;
	EXPECT_ERR(mrc_modify_qp(qp, &qa, MRC_QP_ATTR_STATE), EINVAL,
		   "mrc_modify_qp(state 99)");
	qa.qp_state = (enum mrc_qp_state)-1;
	EXPECT_ERR(mrc_modify_qp(qp, &qa, MRC_QP_ATTR_STATE), EINVAL,
		   "mrc_modify_qp(state -1)");
	ASSERT_EQ(qp_state(qp), MRC_QP_RESET, "still RESET after refused modifies");
	EXPECT_ERR(mrc_query_qp(NULL, &qa), EINVAL, "mrc_query_qp(NULL qp)");
	EXPECT_ERR(mrc_query_qp(qp, NULL), EINVAL, "mrc_query_qp(NULL attr)");
	ASSERT_EQ(mrc_qp_num(NULL), 0, "mrc_qp_num(NULL)");
	EXPECT_ERR(mrc_qp_counters(NULL, &(struct mrc_qp_counters){0}), EINVAL,
		   "mrc_qp_counters(NULL qp)");
	EXPECT_ERR(mrc_qp_counters(qp, NULL), EINVAL, "mrc_qp_counters(NULL out)");
	EXPECT_ERR(mrc_destroy_qp(NULL), EINVAL, "mrc_destroy_qp(NULL)");

	/* work requests */
	memset(&sge, 0, sizeof(sge));
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)buf;
	sge.length = 16;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = MRC_WR_WRITE;
	EXPECT_ERR(mrc_post_write(NULL, &wr), EINVAL, "mrc_post_write(NULL qp)");
	EXPECT_ERR(mrc_post_write(qp, NULL), EINVAL, "mrc_post_write(NULL wr)");
	wr.opcode = (enum mrc_wr_opcode)2;
	EXPECT_ERR(mrc_post_write(qp, &wr), EINVAL, "mrc_post_write(opcode 2)");
	wr.opcode = (enum mrc_wr_opcode)-1;
	EXPECT_ERR(mrc_post_write(qp, &wr), EINVAL, "mrc_post_write(opcode -1)");
	EXPECT_ERR(mrc_post_recv(NULL, &rwr), EINVAL, "mrc_post_recv(NULL qp)");
	EXPECT_ERR(mrc_post_recv(qp, NULL), EINVAL, "mrc_post_recv(NULL wr)");

	/* asynchronous events */
	drain_async();
	EXPECT_ERR(mrc_get_async_event(NULL, &ev), EINVAL,
		   "mrc_get_async_event(NULL ctx)");
	EXPECT_ERR(mrc_get_async_event(ctx, NULL), EINVAL,
		   "mrc_get_async_event(NULL ev)");
	EXPECT_ERR(mrc_get_async_event(ctx, &ev), EAGAIN,
		   "mrc_get_async_event(none pending)");

	/* wait fds: any readable fd, once; not a bad or closed one */
	EXPECT_ERR(mrc_add_wait_fd(NULL, 0), EINVAL, "mrc_add_wait_fd(NULL ctx)");
	EXPECT_ERR(mrc_add_wait_fd(ctx, -1), EINVAL, "mrc_add_wait_fd(fd -1)");
	if (ASSERT_EQ(pipe(pfd), 0, "pipe")) {
		ASSERT_EQ(mrc_add_wait_fd(ctx, pfd[0]), 0, "mrc_add_wait_fd(pipe)");
		EXPECT_ERR(mrc_add_wait_fd(ctx, pfd[0]), EEXIST,
			   "mrc_add_wait_fd(the same fd again)");
		close(pfd[0]);
		close(pfd[1]);
		EXPECT_ERR(mrc_add_wait_fd(ctx, pfd[0]), EBADF,
			   "mrc_add_wait_fd(closed fd)");
	}

	/* connection set-up */
	EXPECT_ERR(mrc_conn_exchange(-1, &cp, &cp), EINVAL,
		   "mrc_conn_exchange(fd -1)");
	EXPECT_ERR(mrc_conn_exchange(0, NULL, &cp), EINVAL,
		   "mrc_conn_exchange(NULL local)");
	EXPECT_ERR(mrc_conn_exchange(0, &cp, NULL), EINVAL,
		   "mrc_conn_exchange(NULL remote)");
	EXPECT_ERR(mrc_conn_connect(NULL, 18515, 1000), EINVAL,
		   "mrc_conn_connect(NULL host)");
	EXPECT_ERR(mrc_conn_connect("", 18515, 1000), EINVAL,
		   "mrc_conn_connect(empty host)");
	EXPECT_ERR(mrc_conn_connect("127.0.0.1", 18515, 0), EINVAL,
		   "mrc_conn_connect(timeout 0)");
	EXPECT_ERR(mrc_conn_connect("127.0.0.1", 18515, -1), EINVAL,
		   "mrc_conn_connect(timeout -1)");

	ASSERT_EQ(mrc_destroy_qp(qp), 0, "destroy QP");
	ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ once unused");

	/* A CQ of another context. */
	cq = mrc_create_cq(ctx, 8);
	ctx2 = mrc_open(&(struct mrc_context_attr){ .pin_dir = pin_dir });
	if (ASSERT_TRUE(cq && ctx2, "a CQ and a second context")) {
		cq2 = mrc_create_cq(ctx2, 8);
		ASSERT_TRUE(cq2 != NULL, "CQ of the second context");
		EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
				.send_cq = cq2, .recv_cq = cq, .max_send_wr = 8 }),
			    EINVAL, "mrc_create_qp(send_cq of another context)");
		EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
				.send_cq = cq, .recv_cq = cq2, .max_send_wr = 8 }),
			    EINVAL, "mrc_create_qp(recv_cq of another context)");
		ASSERT_EQ(mrc_destroy_cq(cq2), 0, "destroy CQ of the second context");
	}
	if (cq)
		ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ");
	if (ctx2) {
		ASSERT_EQ(mrc_close(ctx2), 0, "close the second context");
		/* Repair what that close did to the main context (a bug). */
		if (reopen_ctx())
			test_state.failed++;
	}
}

/* ====================================================================== */
/* C. Local protection and queue limits                                   */
/* ====================================================================== */

TEST_CASE(test_local_protection, "libmrc.local_protection")
{
	static uint8_t buf[65536], other[4096];
	struct mrc_qp *qp = NULL, *qp2 = NULL, *qp3 = NULL;
	struct mrc_sge sge[3];
	struct mrc_send_wr wr;
	struct mrc_mr *mr;
	struct mrc_cq *cq;
	uint32_t lkey, bad_key;
	uintptr_t base = (uintptr_t)buf;

	cq = mrc_create_cq(ctx, 16);
	mr = mrc_reg_mr(ctx, buf, sizeof(buf), MRC_ACCESS_LOCAL_WRITE);
	if (!ASSERT_TRUE(cq && mr, "CQ and MR"))
		goto out;
	lkey = mrc_mr_lkey(mr);
	ASSERT_TRUE(lkey != 0, "lkey is not 0");
	ASSERT_EQ(mrc_mr_rkey(mr), lkey, "rkey");
	bad_key = lkey ^ 0x00010001u;

	qp = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 4, .max_recv_wr = 2,
		.max_sge = 2 });
	if (!ASSERT_TRUE(qp != NULL, "create QP"))
		goto out;
	/* Connected to itself; nothing here polls, so nothing is sent. */
	if (!ASSERT_EQ(connect_qp(qp, mrc_qp_num(qp), mrc_qp_key(qp), "127.0.0.1", 5, 5, NULL), 0,
		       "QP to RTS"))
		goto out;

	memset(&wr, 0, sizeof(wr));
	memset(sge, 0, sizeof(sge));
	wr.opcode = MRC_WR_WRITE;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.remote_addr = 0x10000;
	wr.rkey = 1;

	sge[0] = (struct mrc_sge){ .addr = base, .length = 100, .lkey = bad_key };
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "unregistered lkey");
	sge[0] = (struct mrc_sge){ .addr = base + sizeof(buf) - 10, .length = 20, .lkey = lkey };
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "SGE past the end of its MR");
	sge[0] = (struct mrc_sge){ .addr = base - 1, .length = 10, .lkey = lkey };
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "SGE before the start of its MR");
	sge[0] = (struct mrc_sge){ .addr = (uintptr_t)other, .length = 10, .lkey = lkey };
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "SGE in memory outside the MR");
	sge[0] = (struct mrc_sge){ .addr = base, .length = 0xffffffffu, .lkey = lkey };
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "SGE length 4 GiB - 1");
	sge[0] = (struct mrc_sge){ .addr = base, .length = 100, .lkey = lkey };
	sge[1] = (struct mrc_sge){ .addr = base + sizeof(buf) - 50, .length = 100, .lkey = lkey };
	wr.num_sge = 2;
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "second SGE past the end");
	sge[1] = (struct mrc_sge){ .addr = base + 200, .length = 100, .lkey = lkey };
	sge[2] = sge[1];
	wr.num_sge = 3;
	EXPECT_ERR(mrc_post_write(qp, &wr), EINVAL, "3 SGEs, max_sge 2");
	wr.num_sge = -1;
	EXPECT_ERR(mrc_post_write(qp, &wr), EINVAL, "num_sge -1");
	wr.num_sge = 1;
	wr.sg_list = NULL;
	EXPECT_ERR(mrc_post_write(qp, &wr), EINVAL, "num_sge 1, NULL sg_list");
	wr.sg_list = sge;

	/* The refused posts took no room: 4 fit, the 5th does not. */
	wr.num_sge = 2;
	for (int i = 0; i < 4; i++) {
		wr.wr_id = 100 + (uint64_t)i;
		ASSERT_EQ(mrc_post_write(qp, &wr), 0, "post within max_send_wr 4");
	}
	wr.wr_id = 104;
	EXPECT_ERR(mrc_post_write(qp, &wr), EAGAIN, "5th post, max_send_wr 4");
	EXPECT_ERR(mrc_post_write(qp, &wr), EAGAIN, "6th post, max_send_wr 4");

	/* Receives: max_recv_wr 2. */
	ASSERT_EQ(mrc_post_recv(qp, &(struct mrc_recv_wr){ .wr_id = 1 }), 0, "recv 1");
	ASSERT_EQ(mrc_post_recv(qp, &(struct mrc_recv_wr){ .wr_id = 2 }), 0, "recv 2");
	EXPECT_ERR(mrc_post_recv(qp, &(struct mrc_recv_wr){ .wr_id = 3 }), EAGAIN,
		   "3rd receive, max_recv_wr 2");

	/* WRITE-IMMs in flight are limited by max_wimm_out. */
	qp2 = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 8, .max_sge = 1 });
	if (ASSERT_TRUE(qp2 != NULL, "create QP 2") &&
	    ASSERT_EQ(connect_qp(qp2, mrc_qp_num(qp2), mrc_qp_key(qp2), "127.0.0.1", 5, 5,
				 &(struct qp_conf){ .set_wimm = true,
						    .max_wimm_out = 2,
						    .max_wimm_in = 2 }), 0,
		      "QP 2 to RTS, max_wimm_out 2")) {
		ASSERT_EQ(post_write1(qp2, 1, MRC_WR_WRITE_WITH_IMM, buf, 10, lkey,
				      0x1000, 1, 1), 0, "WRITE-IMM 1");
		ASSERT_EQ(post_write1(qp2, 2, MRC_WR_WRITE_WITH_IMM, buf, 10, lkey,
				      0x1000, 1, 2), 0, "WRITE-IMM 2");
		EXPECT_ERR(post_write1(qp2, 3, MRC_WR_WRITE_WITH_IMM, buf, 10, lkey,
				       0x1000, 1, 3), EAGAIN, "WRITE-IMM 3, max_wimm_out 2");
		ASSERT_EQ(post_write1(qp2, 4, MRC_WR_WRITE, buf, 10, lkey,
				      0x1000, 1, 0), 0, "a plain WRITE still fits");
	}

	/* max_sge 0 means 1. */
	qp3 = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 2, .max_sge = 0 });
	if (ASSERT_TRUE(qp3 != NULL, "create QP 3, max_sge 0") &&
	    ASSERT_EQ(connect_qp(qp3, mrc_qp_num(qp3), mrc_qp_key(qp3), "127.0.0.1", 5, 5, NULL), 0,
		      "QP 3 to RTS")) {
		sge[0] = (struct mrc_sge){ .addr = base, .length = 10, .lkey = lkey };
		sge[1] = sge[0];
		wr.num_sge = 2;
		EXPECT_ERR(mrc_post_write(qp3, &wr), EINVAL, "2 SGEs with max_sge 0");
		wr.num_sge = 1;
		ASSERT_EQ(mrc_post_write(qp3, &wr), 0, "1 SGE with max_sge 0");
	}
out:
	/* Destroyed unpolled: nothing of this ever goes on the wire. */
	if (qp)
		ASSERT_EQ(mrc_destroy_qp(qp), 0, "destroy QP");
	if (qp2)
		ASSERT_EQ(mrc_destroy_qp(qp2), 0, "destroy QP 2");
	if (qp3)
		ASSERT_EQ(mrc_destroy_qp(qp3), 0, "destroy QP 3");
	if (mr)
		ASSERT_EQ(mrc_dereg_mr(mr), 0, "dereg MR");
	if (cq)
		ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ");
}
