// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * A socket that refuses every send (its network gone, a bad address) must
 * not trap the progress engine: the packets it refused are requeued for a
 * later round, and the round ends. A round that drained its resend queue
 * while requeueing into it never ended (found as a client spinning for
 * minutes, deaf to its timeout and to SIGTERM). Here the QP instead runs
 * out of retries and reports it.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libmrc/objects.h"
#include "libmrc_test.h"

#define REFUSED_LEN	(1024 * 1024)	/* far more packets than one send batch */

static void stuck_in_poll(int sig)
{
	static const char msg[] =
		"[libmrc.send_refused_round_ends] FAIL: mrc_poll_cq did not return in 10 s\n";

	(void)sig;
	if (write(STDERR_FILENO, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

TEST_CASE(test_send_refused_round_ends, "libmrc.send_refused_round_ends")
{
	struct mrc_qp_counters c;
	struct mrc_mr *mr = NULL;
	struct mrc_qp *qp = NULL;
	struct mrc_cq *cq;
	struct mrc_wc wc;
	uint8_t *buf;
	uint32_t dead;

	buf = calloc(1, REFUSED_LEN);
	cq = mrc_create_cq(ctx, 8);
	mr = buf ? mrc_reg_mr(ctx, buf, REFUSED_LEN, MRC_ACCESS_LOCAL_WRITE) : NULL;
	if (!ASSERT_TRUE(cq && mr, "CQ and MR"))
		goto out;
	qp = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 4, .max_sge = 1 });
	dead = unused_qpn();
	if (!ASSERT_TRUE(qp && dead, "QP, and a QP number nobody holds") ||
	    !ASSERT_EQ(connect_qp(qp, dead, 0x12345678, "127.0.0.1", 0, 100,
				  &(struct qp_conf){ .set_retry = true, .timeout = 8,
						     .retry_cnt = 1, .exp_retry_cnt = 1 }),
		       0, "connect"))
		goto out;
	/* To port 0 every send fails (EINVAL): nothing leaves the host. */
	for (int i = 0; i < qp->n_peers; i++)
		qp->peers[i].sin6_port = 0;
	ASSERT_EQ(post_write1(qp, 1, MRC_WR_WRITE, buf, REFUSED_LEN, mrc_mr_lkey(mr),
			      0x10000, 0x1234, 0), 0, "post a 1 MiB WRITE");
	signal(SIGALRM, stuck_in_poll);
	alarm(10);
	ASSERT_EQ(collect(cq, &wc, 1, 5000), 1, "the WRITE completes (in error)");
	alarm(0);
	signal(SIGALRM, SIG_DFL);
	ASSERT_EQ(wc.status, MRC_WC_RETRY_EXC_ERR, "retries exhausted, not a hang");
	ASSERT_EQ(qp_state(qp), MRC_QP_ERROR, "QP in ERROR");
	if (ASSERT_EQ(mrc_qp_counters(qp, &c), 0, "counters"))
		ASSERT_TRUE(c.timeouts >= 2, "the timer ran (the rounds returned)");
out:
	if (qp)
		ASSERT_EQ(mrc_destroy_qp(qp), 0, "destroy QP");
	if (mr)
		mrc_dereg_mr(mr);
	if (cq)
		ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ");
	free(buf);
}
