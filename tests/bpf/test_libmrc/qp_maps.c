// SPDX-License-Identifier: GPL-2.0
/*
 * A QP's inner maps (user/common/qpmaps.h): libmrc creates its send log
 * and per-EV counters when the QP reaches RTR, sized by its window (MPR
 * rounded up to a power of two) and its EV table; a new MPR later gets a
 * log of its size; destroying the QP takes them out of the outer maps.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/qpmaps.h"
#include "libmrc_test.h"

/* Entries of the inner map outer holds for QP qpn, or -errno. */
static long inner_entries(int outer_fd, uint32_t qpn)
{
	int fd = mrc_qpmaps_open(outer_fd, mrc_qpn_to_slot(qpn));
	long n;

	if (fd < 0)
		return fd;
	n = mrc_qpmaps_entries(fd);
	close(fd);
	return n;
}

#define LOG_FD	bpf_map__fd(lm_skel->maps.mrc_send_log)
#define RX_FD	bpf_map__fd(lm_skel->maps.mrc_ev_stats)
#define TX_FD	bpf_map__fd(lm_skel->maps.mrc_ev_tx)

/* INIT -> RTR with `mpr_units` (0: the default), to itself over lo. */
static int to_rtr(struct mrc_qp *qp, uint16_t mpr_units)
{
	struct mrc_qp_attr a = {
		.qp_state = MRC_QP_RTR, .dest_qpn = mrc_qp_num(qp),
		.dest_key = mrc_qp_key(qp), .rq_psn = 1, .n_peer_addrs = 1,
		.mpr_units = mpr_units,
	};
	int mask = MRC_QP_ATTR_STATE | MRC_QP_ATTR_DEST_QPN | MRC_QP_ATTR_RQ_PSN |
		   MRC_QP_ATTR_PEER_ADDRS | MRC_QP_ATTR_DEST_KEY;

	a.peer_addrs[0] = ss_of(LOCAL4);
	if (mpr_units)
		mask |= MRC_QP_ATTR_MPR;
	if (set_state(qp, MRC_QP_INIT))
		return -1;
	return mrc_modify_qp(qp, &a, mask);
}

TEST_CASE(test_qp_inner_maps_sized, "libmrc.qp_inner_maps_sized")
{
	static const struct { uint16_t units; long log; } cases[] = {
		{ 1, 128 }, { 3, 512 }, { 0, 1024 }, { 32, 4096 },
	};
	struct mrc_cq *cq = mrc_create_cq(ctx, 8);
	struct mrc_qp_info info;
	struct mrc_qp *qp;
	uint32_t qpn;

	qp = cq ? mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 4 }) : NULL;
	if (!ASSERT_TRUE(qp != NULL, "a QP")) {
		mrc_destroy_cq(cq);
		return;
	}
	qpn = mrc_qp_num(qp);
	ASSERT_EQ(inner_entries(LOG_FD, qpn), -ENOENT, "no log before RTR");
	ASSERT_EQ(inner_entries(RX_FD, qpn), -ENOENT, "no counters before RTR");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(set_state(qp, MRC_QP_RESET), 0, "to RESET");
		if (!ASSERT_EQ(to_rtr(qp, cases[i].units), 0, "to RTR"))
			break;
		ASSERT_EQ(inner_entries(LOG_FD, qpn), cases[i].log,
			  "log: the window rounded up to a power of two");
		ASSERT_EQ(qp_info(qpn, &info), 0, "mrc_qps lookup");
		ASSERT_TRUE(info.n_evs >= 1, "an EV table");
		ASSERT_EQ(inner_entries(RX_FD, qpn), info.n_evs, "XDP's counters: n_evs");
		ASSERT_EQ(inner_entries(TX_FD, qpn), info.n_evs, "TC's counters: n_evs");
	}

	/* RTR -> RTS with a new MPR: a log of the new window. */
	{
		struct mrc_qp_attr a = { .qp_state = MRC_QP_RTS, .sq_psn = 1,
					 .mpr_units = 2 };

		ASSERT_EQ(mrc_modify_qp(qp, &a, MRC_QP_ATTR_STATE | MRC_QP_ATTR_SQ_PSN |
					MRC_QP_ATTR_MPR), 0, "to RTS with MPR 256");
		ASSERT_EQ(inner_entries(LOG_FD, qpn), 256, "log resized to 256");
	}

	ASSERT_EQ(mrc_destroy_qp(qp), 0, "destroy the QP");
	ASSERT_EQ(inner_entries(LOG_FD, qpn), -ENOENT, "log gone with the QP");
	ASSERT_EQ(inner_entries(RX_FD, qpn), -ENOENT, "XDP's counters gone");
	ASSERT_EQ(inner_entries(TX_FD, qpn), -ENOENT, "TC's counters gone");
	mrc_destroy_cq(cq);
}

/* Closing the context takes the inner maps of its QPs out too. */
TEST_CASE(test_qp_inner_maps_close, "libmrc.qp_inner_maps_close")
{
	struct mrc_context *c2 = mrc_open(&(struct mrc_context_attr){ .pin_dir = pin_dir });
	struct mrc_cq *cq = c2 ? mrc_create_cq(c2, 8) : NULL;
	struct mrc_qp *qp;
	uint32_t qpn;

	qp = cq ? mrc_create_qp(c2, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 4 }) : NULL;
	if (!ASSERT_TRUE(qp != NULL, "a QP in a second context")) {
		if (c2)
			mrc_close(c2);
		reopen_ctx();
		return;
	}
	qpn = mrc_qp_num(qp);
	ASSERT_EQ(to_rtr(qp, 0), 0, "to RTR");
	ASSERT_EQ(inner_entries(LOG_FD, qpn), 1024, "log of the default window");
	ASSERT_EQ(mrc_close(c2), 0, "close with the QP still there");
	ASSERT_EQ(inner_entries(LOG_FD, qpn), -ENOENT, "log gone");
	ASSERT_EQ(inner_entries(RX_FD, qpn), -ENOENT, "XDP's counters gone");
	ASSERT_EQ(inner_entries(TX_FD, qpn), -ENOENT, "TC's counters gone");
	mrc_destroy_cq(cq);
	if (reopen_ctx())
		test_state.failed++;
}
