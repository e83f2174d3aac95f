// SPDX-License-Identifier: GPL-2.0
/*
 * Forged acknowledgements cannot hang a transfer (issue 16): a SACK for a
 * PSN that was never delivered only delays it. Selective acks are
 * advisory: the timer resends a SACKed snd_una (libmrc), and a cumulative
 * ack that shows a SACKed PSN missing takes the bit back (XDP).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "mrc/wire_build.h"
#include "libmrc_test.h"

#define FORGE_MTU	1024

/*
 * A SACK "from B" (127.0.0.1, B's peer address, A's key) to A's QP: cack, and a
 * bitmap of one bit acking `acked`. 0 or -errno.
 */
static int forge_sack(uint32_t dqpn, uint32_t key, uint32_t cack, uint32_t acked)
{
	struct mrc_sack_fields f = {
		.dqpn = dqpn, .psn = acked, .cack = cack,
		.bitmap = 1, .bitmap_off = (uint16_t)(acked - cack - 1),
		.key = key,	/* A's connection key: a peer that misbehaves */
	};
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(MRC_UDP_PORT_DEFAULT) };
	struct mrc_sack_pkt pkt;
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err = 0;

	if (fd < 0)
		return -errno;
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	mrc_wire_sack(&pkt, &f);
	if (sendto(fd, &pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to)) !=
	    (ssize_t)sizeof(pkt))
		err = -errno;
	close(fd);
	return err;
}

/* qp_stats.sacks_reneged of a QP, summed over the CPUs. */
static uint64_t xdp_reneged(uint32_t qpn)
{
	struct mrc_qp_stats *st = calloc(lm_ncpus, sizeof(*st));
	uint32_t slot = mrc_qpn_to_slot(qpn);
	uint64_t n = 0;

	if (st && !bpf_map_lookup_elem(bpf_map__fd(lm_skel->maps.mrc_qp_stats),
				       &slot, st))
		for (int i = 0; i < lm_ncpus; i++)
			n += st[i].sacks_reneged;
	free(st);
	return n;
}

static bool acked_bit(const struct mrc_tx_state *tx, uint32_t psn)
{
	uint32_t i = psn % MRC_WINDOW_MAX;

	return tx->sacked[i / 64] >> (i % 64) & 1;
}

/*
 * A WRITE of 4 packets goes out while B cannot take it (B not connected
 * yet: XDP drops all four). A forged SACK acks the first PSN without
 * contradicting A's cumulative ack (its cack is older). B is connected;
 * without renege the timer would never resend that PSN (SACKed), the
 * retries would run out and the WRITE fail. With it, the timer resends
 * it, the WRITE completes, the data is verified.
 */
TEST_CASE(test_forged_sack_recovered, "libmrc.forged_sack_recovered")
{
	enum { LEN = 4 * FORGE_MTU };
	static uint8_t src[LEN], dst[LEN];
	const struct qp_conf conf = { .mtu = FORGE_MTU, .set_retry = true,
				      .timeout = 12, .retry_cnt = 3,
				      .exp_retry_cnt = 3 };
	struct mrc_tx_state *tx = malloc(sizeof(*tx));
	struct mrc_mr *ms = NULL, *md = NULL;
	struct mrc_qp_counters c;
	struct mrc_wc wc[1];
	struct pair p;
	uint64_t t0, took;
	uint32_t qa, qb;

	memset(&p, 0, sizeof(p));
	memset(dst, 0, sizeof(dst));
	fill_random(src, sizeof(src), 16);
	ms = mrc_reg_mr(ctx, src, sizeof(src), MRC_ACCESS_LOCAL_WRITE);
	md = mrc_reg_mr(ctx, dst, sizeof(dst), MRC_ACCESS_REMOTE_WRITE);
	if (!ASSERT_TRUE(tx && ms && md, "regions") ||
	    !ASSERT_EQ(pair_create(&p, 4, 1, 1), 0, "create QPs"))
		goto out;
	qa = mrc_qp_num(p.a);
	qb = mrc_qp_num(p.b);
	if (!ASSERT_EQ(connect_qp(p.a, qb, mrc_qp_key(p.b), "127.0.0.1", 200, 100, &conf), 0, "A to RTS"))
		goto out;
	ASSERT_EQ(post_write1(p.a, 9, MRC_WR_WRITE, src, LEN, mrc_mr_lkey(ms),
			      (uintptr_t)dst, mrc_mr_rkey(md), 0), 0, "post a 4-packet WRITE");
	/* One poll sends the window: PSNs 100 .. 103, all dropped at B. */
	ASSERT_EQ(mrc_poll_cq(p.cqa, 1, wc), 0, "nothing completes yet");
	if (!ASSERT_EQ(tx_state(qa, tx), 0, "A's tx state") ||
	    !ASSERT_EQ(tx->snd_nxt, 104, "four PSNs sent"))
		goto out;
	/* cack 98 is older than A's (99): no evidence against the bit. */
	ASSERT_EQ(forge_sack(qa, mrc_qp_key(p.a), 98, 100), 0, "forge a SACK of PSN 100");
	ASSERT_EQ(tx_state(qa, tx), 0, "A's tx state");
	ASSERT_TRUE(acked_bit(tx, 100), "the forged SACK acked PSN 100");
	ASSERT_EQ(tx->snd_una, 100, "nothing cumulatively acked");

	if (!ASSERT_EQ(connect_qp(p.b, qa, mrc_qp_key(p.a), "127.0.0.1", 100, 200, &conf), 0, "B to RTS"))
		goto out;
	t0 = now_ns();
	memset(wc, 0, sizeof(wc));
	if (ASSERT_EQ(collect(p.cqa, wc, 1, DEADLINE_MS), 1, "the WRITE completes")) {
		ASSERT_EQ(wc[0].wr_id, 9, "wr_id");
		ASSERT_EQ(wc[0].status, MRC_WC_SUCCESS, "status SUCCESS");
	}
	took = now_ns() - t0;
	fprintf(stderr, "  forged SACK of an undelivered PSN: completed after %.1f ms\n",
		took / 1e6);
	ASSERT_MEM_EQ(dst, src, LEN, "data placed");
	ASSERT_TRUE(took < 1000000000ull, "within 1 s, far below the retry budget");
	ASSERT_EQ(mrc_qp_counters(p.a, &c), 0, "counters");
	/*
	 * Reneged by libmrc's timer, or sooner by XDP: the tail probe's
	 * resends of 101-103 draw a SACK whose cack 99 proves 100's bit wrong.
	 */
	ASSERT_TRUE(c.sack_reneges + xdp_reneged(qa) >= 1,
		    "the SACKed snd_una was reneged and resent");
	ASSERT_EQ(qp_state(p.a), MRC_QP_RTS, "A still RTS");
out:
	pair_destroy(&p);
	if (ms)
		mrc_dereg_mr(ms);
	if (md)
		mrc_dereg_mr(md);
	free(tx);
}

/*
 * The forged SACK acks a PSN in the middle (102): the cumulative ack
 * stops below it, B's SACK (cack 101) says it is missing, XDP takes the
 * bit back and reports it for a resend at once.
 */
TEST_CASE(test_forged_sack_mid_window, "libmrc.forged_sack_mid_window")
{
	enum { LEN = 4 * FORGE_MTU };
	static uint8_t src[LEN], dst[LEN];
	const struct qp_conf conf = { .mtu = FORGE_MTU, .set_retry = true,
				      .timeout = 12, .retry_cnt = 3,
				      .exp_retry_cnt = 3 };
	struct mrc_tx_state *tx = malloc(sizeof(*tx));
	struct mrc_mr *ms = NULL, *md = NULL;
	struct mrc_wc wc[1];
	struct pair p;
	uint32_t qa, qb;

	memset(&p, 0, sizeof(p));
	memset(dst, 0, sizeof(dst));
	fill_random(src, sizeof(src), 17);
	ms = mrc_reg_mr(ctx, src, sizeof(src), MRC_ACCESS_LOCAL_WRITE);
	md = mrc_reg_mr(ctx, dst, sizeof(dst), MRC_ACCESS_REMOTE_WRITE);
	if (!ASSERT_TRUE(tx && ms && md, "regions") ||
	    !ASSERT_EQ(pair_create(&p, 4, 1, 1), 0, "create QPs"))
		goto out;
	qa = mrc_qp_num(p.a);
	qb = mrc_qp_num(p.b);
	if (!ASSERT_EQ(connect_qp(p.a, qb, mrc_qp_key(p.b), "127.0.0.1", 200, 100, &conf), 0, "A to RTS"))
		goto out;
	ASSERT_EQ(post_write1(p.a, 5, MRC_WR_WRITE, src, LEN, mrc_mr_lkey(ms),
			      (uintptr_t)dst, mrc_mr_rkey(md), 0), 0, "post a 4-packet WRITE");
	ASSERT_EQ(mrc_poll_cq(p.cqa, 1, wc), 0, "nothing completes yet");
	ASSERT_EQ(forge_sack(qa, mrc_qp_key(p.a), 99, 102), 0, "forge a SACK of PSN 102");
	ASSERT_EQ(tx_state(qa, tx), 0, "A's tx state");
	ASSERT_TRUE(acked_bit(tx, 102), "the forged SACK acked PSN 102");
	if (!ASSERT_EQ(connect_qp(p.b, qa, mrc_qp_key(p.a), "127.0.0.1", 100, 200, &conf), 0, "B to RTS"))
		goto out;
	memset(wc, 0, sizeof(wc));
	if (ASSERT_EQ(collect(p.cqa, wc, 1, DEADLINE_MS), 1, "the WRITE completes"))
		ASSERT_EQ(wc[0].status, MRC_WC_SUCCESS, "status SUCCESS");
	ASSERT_MEM_EQ(dst, src, LEN, "data placed");
	ASSERT_TRUE(xdp_reneged(qa) >= 1, "XDP reneged the SACK of 102");
out:
	pair_destroy(&p);
	if (ms)
		mrc_dereg_mr(ms);
	if (md)
		mrc_dereg_mr(md);
	free(tx);
}
