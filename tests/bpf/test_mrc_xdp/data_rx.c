// SPDX-License-Identifier: GPL-2.0
/*
 * DATA receive in mrc_xdp_rx: valid DATA (IPv4, IPv6 with a TSETH from
 * the second peer address, no UDP checksum, a checksum that folds to
 * 0xffff) steered to the owner's socket with nothing else changed, PROBE
 * steering, the configured UDP port, and everything that is not MRC
 * passing untouched. The DATA the program refuses (malformed, unknown or
 * unready QP, stranger, duplicate, out of window, PSN wrap) is the table
 * of data_validation_table.c.
 */
#include "mrc_xdp_test.h"

/* ====================================================================== */
/* Tests: DATA steering                                                   */
/* ====================================================================== */

TEST_CASE(test_data_ipv4_steered, "mrc.data_ipv4_steered")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 256);
	struct mrc_qp_stats want = { .rx_data = 1 };
	struct hdrs h = rx4();
	struct mrc_rx_state rx;
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	len = data_frame(pkt, &h, &d);
	if (!ASSERT_TRUE(udp_csum_ok(pkt), "input UDP checksum valid"))
		return;
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	want.rx_data_bytes = len - l4_off(pkt) - UDP_LEN;
	expect_qp_stats(&want);
	expect_drops(&no_drops);
	get_rx(&rx);
	ASSERT_EQ(rx.sack_pending, 0, "no SACK owed for a new PSN");
	ASSERT_EQ(rx.cack, RX_CACK, "XDP does not move cack");
	ASSERT_EQ(drain_events(), 0, "no events for DATA");
}

TEST_CASE(test_data_ipv6_tseth_second_peer, "mrc.data_ipv6_tseth_second_peer")
{
	struct data_spec d = dspec(MRC_OP_WRITE_FIRST, RX_CACK + 1, 1000);
	struct mrc_qp_stats want = { .rx_data = 1 };
	struct hdrs h = rx6();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(2);
	d.flags = MRC_BTH_F_TS | MRC_BTH_F_ACK_REQ;
	len = data_frame(pkt, &h, &d);
	if (!ASSERT_TRUE(udp_csum_ok(pkt), "input UDP checksum valid"))
		return;
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	want.rx_data_bytes = len - l4_off(pkt) - UDP_LEN;
	expect_qp_stats(&want);
	expect_drops(&no_drops);
}

TEST_CASE(test_data_ipv4_no_checksum, "mrc.data_ipv4_no_checksum")
{
	struct data_spec d = dspec(MRC_OP_WRITE_MIDDLE, RX_CACK + 2, 100);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	h.zero_csum = 1;
	len = data_frame(pkt, &h, &d);
	ASSERT_EQ(get16(pkt + l4_off(pkt) + 6), 0, "input checksum is 0");
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	ASSERT_EQ(read_qp_stats(SLOT).rx_data, 1, "qp_stats.rx_data");
}

/*
 * An input whose checksum after the rewrite folds to 0: it must go out as
 * 0xffff, since 0 would say "no checksum".
 */
TEST_CASE(test_data_checksum_folds_to_ffff, "mrc.data_checksum_folds_to_ffff")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 64);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len, l4, tail;
	__u16 ulen;
	__u32 s;
	struct run r;

	setup_qp(1);
	len = data_frame(pkt, &h, &d);
	l4 = l4_off(pkt);
	ulen = get16(pkt + l4 + 4);
	tail = len - 2;				/* last two payload bytes */
	/* Make the sum over the rewritten datagram 0xffff. */
	put16(pkt + l4 + 2, SOCK_PORT);
	put16(pkt + l4 + 6, 0);
	put16(pkt + tail, 0);
	s = csum_add(udp_pseudo_sum(pkt, ulen), pkt + l4, ulen);
	put16(pkt + tail, csum_fold(s));	/* = ~S, so S + ~S = 0xffff */
	ASSERT_EQ(csum_fold(csum_add(udp_pseudo_sum(pkt, ulen), pkt + l4, ulen)), 0,
		  "constructed sum folds to zero");
	/* ... and the input, to the MRC port, with its correct checksum. */
	put16(pkt + l4 + 2, MRC_UDP_PORT_DEFAULT);
	udp_csum_fill(pkt);
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	ASSERT_EQ(get16(r.out + l4 + 6), 0xffff, "zero checksum sent as 0xffff");
}

/* ====================================================================== */
/* Tests: what is not MRC passes untouched                                */
/* ====================================================================== */

static void expect_xdp_ignores(const __u8 *pkt, size_t len)
{
	struct run r;

	setup_qp(2);
	run_xdp(pkt, len, &r);
	expect_untouched(&r, pkt, len, XDP_PASS);
	expect_drops(&no_drops);
	expect_qp_stats(&no_qp_stats);
}

TEST_CASE(test_non_mrc_untouched, "mrc.non_mrc_untouched")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 64);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX], opt[PKT_MAX];
	size_t len, n;

	/* UDP to another port. */
	h.dport = MRC_UDP_PORT_DEFAULT + 1;
	len = data_frame(pkt, &h, &d);
	expect_xdp_ignores(pkt, len);
	/* Even a broken MRC-looking one. */
	set_udp_len(pkt, 4);
	expect_xdp_ignores(pkt, len);

	/* TCP to port 4791. */
	h = rx4();
	len = data_frame(pkt, &h, &d);
	pkt[ETH_LEN + 9] = 6;
	ipv4_csum_fill(pkt);
	expect_xdp_ignores(pkt, len);

	/* IPv6 with an extension header (hop-by-hop) first. */
	h = rx6();
	len = data_frame(pkt, &h, &d);
	pkt[ETH_LEN + 6] = 0;
	expect_xdp_ignores(pkt, len);

	/* IPv4 with options. */
	h = rx4();
	len = data_frame(pkt, &h, &d);
	memcpy(opt, pkt, ETH_LEN + IP4_LEN);
	memset(opt + ETH_LEN + IP4_LEN, 1, 4);		/* 4 x NOP */
	memcpy(opt + ETH_LEN + IP4_LEN + 4, pkt + ETH_LEN + IP4_LEN,
	       len - ETH_LEN - IP4_LEN);
	opt[ETH_LEN] = 0x46;
	put16(opt + ETH_LEN + 2, (__u16)(len + 4 - ETH_LEN));
	ipv4_csum_fill(opt);
	expect_xdp_ignores(opt, len + 4);

	/*
	 * An IP header of the wrong version (6 behind the IPv4 ethertype, 4
	 * behind IPv6's), here a trimmed header: the kernel drops it, so
	 * it is none of XDP's to answer (mrc-fuzz found it answered with a
	 * NACK, XDP_TX).
	 */
	{
		struct data_spec trimmed = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 0);

		len = data_frame(pkt, &h, &trimmed);
		pkt[ETH_LEN] = 0x65;
		ipv4_csum_fill(pkt);
		expect_xdp_ignores(pkt, len);
		h = rx6();
		len = data_frame(pkt, &h, &trimmed);
		pkt[ETH_LEN] = (__u8)(0x40 | (pkt[ETH_LEN] & 0x0f));
		expect_xdp_ignores(pkt, len);
		h = rx4();
	}

	/* A first fragment. */
	len = data_frame(pkt, &h, &d);
	put16(pkt + ETH_LEN + 6, 0x2000);
	ipv4_csum_fill(pkt);
	expect_xdp_ignores(pkt, len);

	/* ARP. */
	n = build_eth(pkt, 0x0806);
	memset(pkt + n, 0, 28);
	put16(pkt + n, 1);
	put16(pkt + n + 2, 0x0800);
	pkt[n + 4] = 6;
	pkt[n + 5] = 4;
	put16(pkt + n + 6, 1);
	memcpy(pkt + n + 14, peer4, 4);
	memcpy(pkt + n + 24, local4, 4);
	expect_xdp_ignores(pkt, n + 28);
}

/* mrc_cfg.udp_port moves MRC to another port. */
TEST_CASE(test_cfg_udp_port, "mrc.cfg_udp_port")
{
	struct mrc_global_cfg cfg = { .udp_port = 5000 };
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 64);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	__u32 zero = 0;
	struct run r;

	setup_qp(1);
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_cfg), &zero, &cfg, BPF_ANY), 0, "set mrc_cfg");
	h.dport = 5000;
	len = data_frame(pkt, &h, &d);
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	/* 4791 is plain UDP now. */
	h.dport = MRC_UDP_PORT_DEFAULT;
	len = data_frame(pkt, &h, &d);
	run_xdp(pkt, len, &r);
	expect_untouched(&r, pkt, len, XDP_PASS);
	ASSERT_EQ(read_qp_stats(SLOT).rx_data, 1, "qp_stats.rx_data");
}

TEST_CASE(test_probe_steered, "mrc.probe_steered")
{
	struct mrc_drop_stats want = { .bad_source = 1 };
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX], m[BTH_LEN];
	struct mrc_rx_state rx;
	size_t len;
	struct run r;

	setup_qp(1);
	put_bth(m, MRC_OP_PROBE, QPN, MRC_BTH_F_ACK_REQ, TX_UNA);
	len = build_udp(&h, m, BTH_LEN, pkt);
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	/* A probe is not window-checked: an "old" PSN still goes up. */
	put_bth(m, MRC_OP_PROBE, QPN, MRC_BTH_F_ACK_REQ, RX_CACK - 10);
	len = build_udp(&h, m, BTH_LEN, pkt);
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	get_rx(&rx);
	ASSERT_EQ(rx.sack_pending, 0, "a probe does not mark a SACK owed");
	expect_drops(&no_drops);
	/* From a stranger it is dropped like data. */
	h.src = stranger4;
	len = build_udp(&h, m, BTH_LEN, pkt);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
}

/*
 * A duplicate or out-of-window DATA owes the sender a SACK. The first
 * one since libmrc last sent a SACK (sack_pending 0 -> 1) writes SACK_DUE
 * to the owner's ring, which wakes a context asleep in its idle wait; the
 * next ones, with the SACK still owed, write nothing (one wakeup per SACK).
 */
TEST_CASE(test_duplicate_wakes_owner, "mrc.duplicate_wakes_owner")
{
	struct data_spec dup = dspec(MRC_OP_WRITE_MIDDLE, RX_CACK, 64);
	struct data_spec far = dspec(MRC_OP_WRITE_MIDDLE, RX_CACK + RX_MPR + 1, 64);
	struct data_spec fresh = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 64);
	struct hdrs h = rx4();
	struct mrc_rx_state rx;
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	drain_events();
	len = data_frame(pkt, &h, &fresh);
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	ASSERT_EQ(drain_events(), 0, "new DATA: no event");

	len = data_frame(pkt, &h, &dup);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	get_rx(&rx);
	ASSERT_EQ(rx.sack_pending, 1, "duplicate: SACK owed");
	ASSERT_EQ(drain_events(), 1, "duplicate: one event");
	expect_event(0, MRC_EVT_SACK_DUE, 0, 0, 0);

	/* Still owed: no second wakeup, duplicate or out of window. */
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	len = data_frame(pkt, &h, &far);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 0, "SACK still owed: no event");

	/* libmrc sent its SACK (cleared the flag): the next one wakes it again. */
	get_rx(&rx);
	rx.sack_pending = 0;
	put_rx(&rx);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	get_rx(&rx);
	ASSERT_EQ(rx.sack_pending, 1, "out of window: SACK owed");
	ASSERT_EQ(drain_events(), 1, "out of window after the SACK: one event");
	expect_event(0, MRC_EVT_SACK_DUE, 0, 0, 0);
}
