// SPDX-License-Identifier: GPL-2.0
/*
 * Connection keys (issue 16) through the API: each QP draws its key with
 * getrandom(), INIT->RTR wants the peer's (dest_key) unless the QP was
 * created MRC_QP_INTEROP_NO_KEY, the fast path's map shows both keys;
 * a WRITE with the wrong key is refused by XDP, one that reaches
 * libmrc's socket without crossing XDP is refused by libmrc; an interop
 * pair still transfers.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mrc/wire_build.h"
#include "libmrc_test.h"

static struct mrc_qp *new_qp(struct mrc_cq *cq, uint32_t flags)
{
	return mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 4, .max_recv_wr = 1,
		.max_sge = 1, .flags = flags });
}

TEST_CASE(test_qp_keys_drawn, "libmrc.qp_keys_drawn")
{
	enum { N = 6 };
	struct mrc_cq *cq = mrc_create_cq(ctx, 8);
	struct mrc_qp *qp[N] = { 0 }, *interop = NULL;
	struct mrc_qp_attr q;
	int same = 0;

	if (!ASSERT_TRUE(cq != NULL, "create CQ"))
		return;
	for (int i = 0; i < N; i++) {
		qp[i] = new_qp(cq, 0);
		if (!ASSERT_TRUE(qp[i] != NULL, "create a keyed QP"))
			goto out;
		ASSERT_TRUE(mrc_qp_key(qp[i]) != 0, "key is not 0");
		ASSERT_TRUE(mrc_qp_key(qp[i]) != MRC_KEY_INTEROP, "key is not the interop bytes");
		memset(&q, 0, sizeof(q));
		ASSERT_EQ(mrc_query_qp(qp[i], &q), 0, "query");
		ASSERT_EQ(q.qp_key, mrc_qp_key(qp[i]), "query: qp_key = mrc_qp_key()");
		for (int j = 0; j < i; j++)
			same += mrc_qp_key(qp[i]) == mrc_qp_key(qp[j]);
	}
	ASSERT_EQ(same, 0, "every QP its own key");
	interop = new_qp(cq, MRC_QP_INTEROP_NO_KEY);
	if (ASSERT_TRUE(interop != NULL, "create an interop QP"))
		ASSERT_EQ(mrc_qp_key(interop), MRC_KEY_INTEROP, "interop QP: 0x00FFFF00");
	EXPECT_NULL(new_qp(cq, 1u << 2), EINVAL, "unknown create flag");
	ASSERT_EQ(mrc_qp_key(NULL), 0, "mrc_qp_key(NULL)");
out:
	for (int i = 0; i < N; i++)
		if (qp[i])
			mrc_destroy_qp(qp[i]);
	if (interop)
		mrc_destroy_qp(interop);
	mrc_destroy_cq(cq);
}

/* INIT with a complete RTR attribute set but for the key. */
static void rtr_attrs(struct mrc_qp_attr *a, uint32_t dest_qpn, int *mask)
{
	memset(a, 0, sizeof(*a));
	a->qp_state = MRC_QP_RTR;
	a->dest_qpn = dest_qpn;
	a->rq_psn = 5;
	a->n_peer_addrs = 1;
	a->peer_addrs[0] = ss_of(LOCAL4);
	*mask = MRC_QP_ATTR_STATE | MRC_QP_ATTR_DEST_QPN | MRC_QP_ATTR_RQ_PSN |
		MRC_QP_ATTR_PEER_ADDRS;
}

TEST_CASE(test_rtr_needs_dest_key, "libmrc.rtr_needs_dest_key")
{
	struct mrc_cq *cq = mrc_create_cq(ctx, 8);
	struct mrc_qp *qp = NULL, *interop = NULL;
	struct mrc_qp_info info;
	struct mrc_qp_attr a, q;
	int mask;

	if (!ASSERT_TRUE(cq != NULL, "create CQ"))
		return;
	qp = new_qp(cq, 0);
	/* A NIC peer: no keys, and the RoCEv2 ICRC (MRC_QP_ICRC). */
	interop = new_qp(cq, MRC_QP_INTEROP_NO_KEY | MRC_QP_ICRC);
	if (!ASSERT_TRUE(qp && interop, "create QPs"))
		goto out;

	/* Keyed: no key, key 0, key 0x00FFFF00 are refused; still INIT. */
	ASSERT_EQ(set_state(qp, MRC_QP_INIT), 0, "RESET->INIT");
	rtr_attrs(&a, 77, &mask);
	EXPECT_ERR(mrc_modify_qp(qp, &a, mask), EINVAL, "INIT->RTR without DEST_KEY");
	a.dest_key = 0;
	EXPECT_ERR(mrc_modify_qp(qp, &a, mask | MRC_QP_ATTR_DEST_KEY), EINVAL,
		   "INIT->RTR with dest_key 0");
	a.dest_key = MRC_KEY_INTEROP;
	EXPECT_ERR(mrc_modify_qp(qp, &a, mask | MRC_QP_ATTR_DEST_KEY), EINVAL,
		   "INIT->RTR with dest_key 0x00FFFF00");
	ASSERT_EQ(qp_state(qp), MRC_QP_INIT, "still INIT");
	a.dest_key = 0xc0ffee11;
	ASSERT_EQ(mrc_modify_qp(qp, &a, mask | MRC_QP_ATTR_DEST_KEY), 0,
		  "INIT->RTR with a dest_key");
	memset(&q, 0, sizeof(q));
	ASSERT_EQ(mrc_query_qp(qp, &q), 0, "query");
	ASSERT_EQ(q.dest_key, 0xc0ffee11, "query: dest_key");
	if (ASSERT_EQ(qp_info(mrc_qp_num(qp), &info), 0, "mrc_qps lookup")) {
		ASSERT_EQ(info.flags, MRC_QP_F_KEYED, "mrc_qps: keyed");
		ASSERT_EQ(info.local_key, mrc_qp_key(qp), "mrc_qps: local_key");
		ASSERT_EQ(info.peer_key, 0xc0ffee11, "mrc_qps: peer_key");
	}
	/* RESET forgets the peer's key: the next RTR needs one again. */
	ASSERT_EQ(set_state(qp, MRC_QP_RESET), 0, "RTR->RESET");
	ASSERT_EQ(set_state(qp, MRC_QP_INIT), 0, "RESET->INIT");
	EXPECT_ERR(mrc_modify_qp(qp, &a, mask), EINVAL, "INIT->RTR after RESET without DEST_KEY");

	/* Interop: RTR without a key; a key is refused (it would send none). */
	ASSERT_EQ(set_state(interop, MRC_QP_INIT), 0, "interop RESET->INIT");
	rtr_attrs(&a, 78, &mask);
	a.dest_key = 0xc0ffee11;
	EXPECT_ERR(mrc_modify_qp(interop, &a, mask | MRC_QP_ATTR_DEST_KEY), EINVAL,
		   "interop INIT->RTR with DEST_KEY");
	ASSERT_EQ(mrc_modify_qp(interop, &a, mask), 0, "interop INIT->RTR without a key");
	if (ASSERT_EQ(qp_info(mrc_qp_num(interop), &info), 0, "mrc_qps lookup")) {
		ASSERT_EQ(info.flags, MRC_QP_F_ICRC, "mrc_qps: not keyed, ICRC");
		ASSERT_EQ(info.local_key, MRC_KEY_INTEROP, "mrc_qps: local_key interop");
		ASSERT_EQ(info.peer_key, MRC_KEY_INTEROP, "mrc_qps: peer_key interop");
	}
out:
	if (qp)
		mrc_destroy_qp(qp);
	if (interop)
		mrc_destroy_qp(interop);
	mrc_destroy_cq(cq);
}

/* A WRITE of n bytes from A to B's region: status of its completion, or -1. */
static int write_and_wait(struct pair *p, uint8_t *src, uint8_t *dst, size_t n,
			  struct mrc_mr *msrc, struct mrc_mr *mdst)
{
	struct mrc_wc wc;

	if (post_write1(p->a, 7, MRC_WR_WRITE, src, (uint32_t)n, mrc_mr_lkey(msrc),
			(uintptr_t)dst, mrc_mr_rkey(mdst), 0))
		return -1;
	memset(&wc, 0, sizeof(wc));
	if (collect(p->cqa, &wc, 1, DEADLINE_MS) != 1)
		return -1;
	return (int)wc.status;
}

/*
 * A connected with a wrong key for B: B's XDP drops every packet as
 * BAD_KEY, B's region stays untouched, A gives up (RETRY_EXC_ERR).
 * Then with the right key the same WRITE goes through (the control).
 */
TEST_CASE(test_wrong_dest_key_refused, "libmrc.wrong_dest_key_refused")
{
	static uint8_t src[4096], dst[4096], zero[4096];
	const struct qp_conf fast = { .set_retry = true, .timeout = 8,
				      .retry_cnt = 1, .exp_retry_cnt = 1 };
	struct mrc_mr *msrc = mrc_reg_mr(ctx, src, sizeof(src), MRC_ACCESS_LOCAL_WRITE);
	struct mrc_mr *mdst = mrc_reg_mr(ctx, dst, sizeof(dst),
					 MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE);
	size_t bad_key = offsetof(struct mrc_drop_stats, bad_key);
	uint64_t before;
	struct pair p;

	memset(&p, 0, sizeof(p));
	memset(dst, 0, sizeof(dst));
	fill_random(src, sizeof(src), 0xfeed);
	if (!ASSERT_TRUE(msrc && mdst, "regions") ||
	    !ASSERT_EQ(pair_create(&p, 4, 1, 1), 0, "QP pair"))
		goto out;
	if (!ASSERT_EQ(connect_qp(p.a, mrc_qp_num(p.b), mrc_qp_key(p.b) ^ 1, LOCAL4,
				  1000, 2000, &fast), 0, "A to B, wrong key") ||
	    !ASSERT_EQ(connect_qp(p.b, mrc_qp_num(p.a), mrc_qp_key(p.a), LOCAL4,
				  2000, 1000, &fast), 0, "B to A"))
		goto out;
	drain_async();
	before = drops(bad_key);
	ASSERT_EQ(write_and_wait(&p, src, dst, sizeof(src), msrc, mdst),
		  MRC_WC_RETRY_EXC_ERR, "A gives up: RETRY_EXC_ERR");
	ASSERT_TRUE(drops(bad_key) - before >= 4 * (1 + 1 + 1),
		    "XDP counted every packet and resend as bad_key");
	ASSERT_MEM_EQ(dst, zero, sizeof(dst), "B's region untouched");

	ASSERT_EQ(connect_qp(p.a, mrc_qp_num(p.b), mrc_qp_key(p.b), LOCAL4,
			     1000, 2000, &fast), 0, "A to B, right key");
	ASSERT_EQ(connect_qp(p.b, mrc_qp_num(p.a), mrc_qp_key(p.a), LOCAL4,
			     2000, 1000, &fast), 0, "B to A again");
	before = drops(bad_key);
	ASSERT_EQ(write_and_wait(&p, src, dst, sizeof(src), msrc, mdst),
		  MRC_WC_SUCCESS, "with the key: SUCCESS");
	ASSERT_MEM_EQ(dst, src, sizeof(dst), "B's region written");
	ASSERT_EQ(drops(bad_key) - before, 0, "no bad_key drop");
out:
	drain_async();
	pair_destroy(&p);
	if (msrc)
		mrc_dereg_mr(msrc);
	if (mdst)
		mrc_dereg_mr(mdst);
}

/* Two interop QPs send 0x00FFFF00 and check nothing: they still transfer. */
TEST_CASE(test_interop_pair_transfer, "libmrc.interop_pair_transfer")
{
	static uint8_t src[8192], dst[8192];
	struct mrc_mr *msrc = mrc_reg_mr(ctx, src, sizeof(src), MRC_ACCESS_LOCAL_WRITE);
	struct mrc_mr *mdst = mrc_reg_mr(ctx, dst, sizeof(dst),
					 MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE);
	struct mrc_cq *cqa = mrc_create_cq(ctx, 8), *cqb = mrc_create_cq(ctx, 8);
	struct pair p = { .cqa = cqa, .cqb = cqb };

	memset(dst, 0, sizeof(dst));
	fill_random(src, sizeof(src), 0xbeef);
	if (!ASSERT_TRUE(msrc && mdst && cqa && cqb, "regions and CQs"))
		goto out;
	p.a = new_qp(cqa, MRC_QP_INTEROP_NO_KEY);
	p.b = new_qp(cqb, MRC_QP_INTEROP_NO_KEY);
	if (!ASSERT_TRUE(p.a && p.b, "two interop QPs") ||
	    !ASSERT_EQ(connect_qp(p.a, mrc_qp_num(p.b), MRC_KEY_INTEROP, LOCAL4,
				  PSN_BA, PSN_AB, NULL), 0, "A to B") ||
	    !ASSERT_EQ(connect_qp(p.b, mrc_qp_num(p.a), MRC_KEY_INTEROP, LOCAL4,
				  PSN_AB, PSN_BA, NULL), 0, "B to A"))
		goto out;
	ASSERT_EQ(write_and_wait(&p, src, dst, sizeof(src), msrc, mdst),
		  MRC_WC_SUCCESS, "interop WRITE: SUCCESS");
	ASSERT_MEM_EQ(dst, src, sizeof(dst), "placed");
out:
	pair_destroy(&p);
	if (msrc)
		mrc_dereg_mr(msrc);
	if (mdst)
		mrc_dereg_mr(mdst);
}

/*
 * A WRITE_ONLY of `len` bytes into `vaddr` for QP dqpn, with `key`, at
 * PSN psn, as a forger builds it by hand.
 */
static size_t forged_write(uint8_t *buf, uint32_t key, uint32_t dqpn, uint32_t psn,
			   uint64_t vaddr, uint32_t rkey, const uint8_t *data,
			   uint32_t len)
{
	struct mrc_bth bth;
	struct mrc_meth meth = { 0, 0 };
	struct mrc_reth reth = { .vaddr = htobe64(vaddr), .rkey = htonl(rkey),
				 .length = htonl(len) };
	size_t n = 0;

	mrc_wire_bth(&bth, MRC_OP_WRITE_ONLY, key, dqpn, psn, MRC_BTH_F_ACK_REQ);
	memcpy(buf + n, &bth, sizeof(bth));
	n += sizeof(bth);
	memcpy(buf + n, &meth, sizeof(meth));
	n += sizeof(meth);
	memcpy(buf + n, &reth, sizeof(reth));
	n += sizeof(reth);
	memcpy(buf + n, data, len);
	return n + len;
}

/*
 * A datagram straight to the context's socket port from the peer's
 * address never crosses XDP (its destination port is not MRC's): libmrc
 * checks the key itself. Wrong key: not placed, counted in rx_bad_key;
 * the same datagram with the key: placed (the control).
 */
TEST_CASE(test_socket_path_checks_key, "libmrc.socket_path_checks_key")
{
	static uint8_t dst[256], data[64], pkt[512];
	struct mrc_mr *mdst = mrc_reg_mr(ctx, dst, sizeof(dst),
					 MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE);
	struct sockaddr_in from = { .sin_family = AF_INET }, to = { .sin_family = AF_INET };
	struct mrc_qp_counters c;
	struct mrc_qp_info info;
	struct pair p;
	size_t len;
	int s = -1;

	memset(&p, 0, sizeof(p));
	memset(dst, 0, sizeof(dst));
	fill_random(data, sizeof(data), 0xabc);
	if (!ASSERT_TRUE(mdst != NULL, "region") ||
	    !ASSERT_EQ(pair_create(&p, 4, 1, 1), 0, "QP pair") ||
	    !ASSERT_EQ(pair_connect(&p, LOCAL4, 100, 200, NULL), 0, "connect") ||
	    !ASSERT_EQ(qp_info(mrc_qp_num(p.b), &info), 0, "B's socket port"))
		goto out;
	s = socket(AF_INET, SOCK_DGRAM, 0);
	inet_pton(AF_INET, LOCAL4, &from.sin_addr);
	to.sin_addr = from.sin_addr;
	to.sin_port = htons(info.sock_port);
	if (!ASSERT_TRUE(s >= 0, "socket") ||
	    !ASSERT_EQ(bind(s, (struct sockaddr *)&from, sizeof(from)), 0,
		       "bound to the peer's address"))
		goto out;

	len = forged_write(pkt, mrc_qp_key(p.b) ^ 0x01000000u, mrc_qp_num(p.b), 100,
			   (uintptr_t)dst, mrc_mr_rkey(mdst), data, sizeof(data));
	ASSERT_EQ(sendto(s, pkt, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len,
		  "forged WRITE sent");
	quiet_for(p.cqb, 50);
	mrc_qp_counters(p.b, &c);
	ASSERT_EQ(c.rx_bad_key, 1, "rx_bad_key counted");
	ASSERT_EQ(c.rx_packets, 0, "nothing placed");
	ASSERT_EQ(dst[0] | dst[1] | dst[63], 0, "region untouched");

	len = forged_write(pkt, mrc_qp_key(p.b), mrc_qp_num(p.b), 100,
			   (uintptr_t)dst, mrc_mr_rkey(mdst), data, sizeof(data));
	ASSERT_EQ(sendto(s, pkt, len, 0, (struct sockaddr *)&to, sizeof(to)), (ssize_t)len,
		  "keyed WRITE sent");
	quiet_for(p.cqb, 50);
	mrc_qp_counters(p.b, &c);
	ASSERT_EQ(c.rx_bad_key, 1, "no new rx_bad_key");
	ASSERT_EQ(c.rx_packets, 1, "placed");
	ASSERT_MEM_EQ(dst, data, sizeof(data), "region written");
out:
	if (s >= 0)
		close(s);
	pair_destroy(&p);
	if (mdst)
		mrc_dereg_mr(mdst);
}
