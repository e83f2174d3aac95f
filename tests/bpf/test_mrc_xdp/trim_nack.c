// SPDX-License-Identifier: GPL-2.0
/*
 * Trimmed-packet NACK: DATA a switch trimmed to its headers (DSCP
 * TRIMMED mid-path or TRIMMED_LASTHOP) answered by mrc_xdp_rx with a NACK
 * built in place and sent back with XDP_TX (bpf/mrc/trim_nack.h), over IPv4
 * and IPv6, its round trip into the requester, the trims it refuses and
 * the packets that are not trimmed.
 */
#include "mrc_xdp_test.h"

/* ====================================================================== */
/* Tests: trimmed DATA answered with a NACK from XDP (bpf/mrc/trim_nack.h)     */
/* ====================================================================== */

#define TRIM_TOS_MID		(MRC_DSCP_TRIMMED << 2 | 0x2)		/* + ECT(0) */
#define TRIM_TOS_LASTHOP	(MRC_DSCP_TRIMMED_LASTHOP << 2 | 0x3)	/* + CE */
#define TRIM_TS			0x4321	/* send_ts build_data() writes */
#define NACK_UDP_LEN		(UDP_LEN + BTH_LEN + sizeof(struct mrc_nackh))

/* Set the IPv4 TOS / IPv6 traffic class of a built frame (checksums kept). */
static void set_tos(__u8 *pkt, __u8 tos)
{
	__u8 *ip = pkt + ETH_LEN;

	if (pkt_is_ipv6(pkt)) {
		ip[0] = (__u8)((ip[0] & 0xf0) | tos >> 4);
		ip[1] = (__u8)((ip[1] & 0x0f) | (__u8)(tos << 4));
	} else {
		ip[1] = tos;
		ipv4_csum_fill(pkt);
	}
}

/* A trimmed header as a trimming switch forwards it: no payload, DSCP set. */
static size_t trimmed_frame(__u8 *buf, const struct hdrs *h,
			    const struct data_spec *d, __u8 tos)
{
	size_t len = data_frame(buf, h, d);

	set_tos(buf, tos);
	return len;
}

/*
 * The NACK frame the responder must send for a trimmed packet that came
 * in with headers `in` (peer -> us): the same frame builder (so IP id,
 * DF, TTL 64, flow label as it came), addresses reversed, ports kept,
 * MACs swapped, DSCP and ECN 0, and correct checksums.
 */
static size_t expected_nack(__u8 *buf, const struct hdrs *in, __u32 psn,
			    __u32 cack, __u8 reason, __u16 ts_echo)
{
	struct hdrs h = *in;
	__u8 m[64], mac[6];
	size_t n = put_bth_key(m, MRC_OP_NACK, PEER_KEY, REMOTE_QPN, 0, psn), len;

	h.src = in->dst;
	h.dst = in->src;
	put32(m + n, cack & MRC_PSN_MASK);
	put32(m + n + 4, in->sport);
	m[n + 8] = reason;
	m[n + 9] = MRC_M_NONE;
	put16(m + n + 10, ts_echo);
	len = build_udp(&h, m, n + sizeof(struct mrc_nackh), buf);
	memcpy(mac, buf, 6);
	memcpy(buf, buf + 6, 6);
	memcpy(buf + 6, mac, 6);
	return len;
}

/* XDP_TX with exactly the frame `exp`, both checksums valid. */
static int expect_nack_tx(const struct run *r, const __u8 *exp, size_t len)
{
	size_t l4 = l4_off(exp);

	if (!ASSERT_EQ(r->err, 0, "test_run") ||
	    !ASSERT_EQ(r->ret, XDP_TX, "verdict XDP_TX") ||
	    !ASSERT_EQ(r->out_len, len, "frame cut to eth + IP + UDP + BTH + NACK"))
		return 0;
	ASSERT_EQ(get16(r->out + l4 + 4), NACK_UDP_LEN, "UDP length");
	ASSERT_EQ(r->out[l4 + UDP_LEN], MRC_OP_NACK, "opcode NACK");
	if (!pkt_is_ipv6(r->out))
		ASSERT_TRUE(ipv4_csum_ok(r->out), "IPv4 header checksum valid");
	ASSERT_TRUE(udp_csum_ok(r->out), "UDP checksum valid (recomputed here)");
	return ASSERT_MEM_EQ(r->out, exp, len, "NACK frame");
}

static void expect_trim_ctl(__u64 nacks, __u64 lasthop)
{
	struct mrc_ctl_stats want = { .trim_nacks = nacks,
				      .trim_nacks_lasthop = lasthop };

	expect_ctl(&want);
}

/*
 * A header trimmed mid-path (DSCP 0x2C), IPv4, with a TSETH: XDP answers
 * with NACK TRIMMED in place: MACs and addresses swapped, ports kept
 * (source = the EV), dqpn = the peer's QP, the data's PSN, the
 * responder's cack, ev = the source port, ts_echo = send_ts, DSCP/ECN 0,
 * lengths for 24 bytes of UDP payload and both checksums recomputed.
 * Counted in ctl_stats.trim_nacks; nothing goes up to libmrc (no rx_data).
 */
TEST_CASE(test_trim_nack_ipv4, "mrc.trim_nack_ipv4")
{
	struct data_spec d = dspec(MRC_OP_WRITE_MIDDLE, RX_CACK + 3, 0);
	__u8 pkt[PKT_MAX], exp[PKT_MAX];
	struct mrc_rx_state rx;
	struct hdrs h = rx4();
	size_t len, elen;
	struct run r;

	setup_qp(1);
	d.flags = MRC_BTH_F_TS | MRC_BTH_F_ACK_REQ;
	len = trimmed_frame(pkt, &h, &d, TRIM_TOS_MID);
	if (!ASSERT_TRUE(udp_csum_ok(pkt) && ipv4_csum_ok(pkt), "input checksums valid"))
		return;
	run_xdp(pkt, len, &r);
	elen = expected_nack(exp, &h, RX_CACK + 3, RX_CACK, MRC_NACK_TRIMMED, TRIM_TS);
	ASSERT_EQ(elen, ETH_LEN + IP4_LEN + NACK_UDP_LEN, "expected frame: 66 bytes");
	expect_nack_tx(&r, exp, elen);
	ASSERT_EQ(r.out[ETH_LEN + 1], 0, "TOS 0: DSCP 0, ECN bits 0");
	ASSERT_EQ(get16(r.out + ETH_LEN + 2), IP4_LEN + NACK_UDP_LEN, "IPv4 tot_len");
	ASSERT_EQ(get16(r.out + ETH_LEN + IP4_LEN), PEER_SPORT, "UDP sport: the EV, kept");
	ASSERT_EQ(get16(r.out + ETH_LEN + IP4_LEN + 2), MRC_UDP_PORT_DEFAULT,
		  "UDP dport: the MRC port, kept");
	ASSERT_EQ(get32(r.out + ETH_LEN + IP4_LEN + UDP_LEN + 1), PEER_KEY,
		  "key: the peer QP's (bytes 1-4), not the data's");
	ASSERT_EQ(get32(r.out + ETH_LEN + IP4_LEN + UDP_LEN + 4) & MRC_QPN_MASK,
		  REMOTE_QPN, "dqpn");
	ASSERT_EQ(get32(r.out + ETH_LEN + IP4_LEN + UDP_LEN + 8), RX_CACK + 3,
		  "PSN, flags clear");
	ASSERT_EQ(get32(r.out + ETH_LEN + IP4_LEN + UDP_LEN + BTH_LEN), RX_CACK, "cack");
	ASSERT_EQ(get32(r.out + ETH_LEN + IP4_LEN + UDP_LEN + BTH_LEN + 4), PEER_SPORT,
		  "ev = UDP source port");
	ASSERT_EQ(r.out[ETH_LEN + IP4_LEN + UDP_LEN + BTH_LEN + 8], MRC_NACK_TRIMMED,
		  "reason TRIMMED");
	ASSERT_EQ(get16(r.out + ETH_LEN + IP4_LEN + UDP_LEN + BTH_LEN + 10), TRIM_TS,
		  "ts_echo = send_ts");
	expect_trim_ctl(1, 0);
	expect_drops(&no_drops);
	expect_qp_stats(&no_qp_stats);
	get_rx(&rx);
	ASSERT_EQ(rx.sack_pending, 0, "no SACK owed");
	ASSERT_EQ(rx.cack, RX_CACK, "cack unchanged");
	ASSERT_EQ(drain_events(), 0, "no events");

	/* Bytes past the datagram (Ethernet padding) are cut as well. */
	memset(pkt + len, 0xAA, 10);
	run_xdp(pkt, len + 10, &r);
	expect_nack_tx(&r, exp, elen);
	expect_trim_ctl(2, 0);

	/* Without DSCP (a switch that trims without marking): still TRIMMED. */
	set_tos(pkt, 0);
	run_xdp(pkt, len, &r);
	expect_nack_tx(&r, exp, elen);
	expect_trim_ctl(3, 0);
}

/*
 * Trimmed at the last hop (DSCP 0x2D): NACK TRIMMED_LASTHOP, counted in
 * trim_nacks and trim_nacks_lasthop. A WRITE_LAST_IMM header (immediate,
 * no TSETH: ts_echo 0) and a 24-bit PSN past the wrap: cack and PSN go
 * out as their low 24 bits.
 */
TEST_CASE(test_trim_nack_lasthop, "mrc.trim_nack_lasthop")
{
	struct data_spec d = dspec(MRC_OP_WRITE_LAST_IMM, 0x000005, 0);
	__u8 pkt[PKT_MAX], exp[PKT_MAX];
	struct mrc_rx_state rx;
	struct hdrs h = rx4();
	size_t len, elen;
	struct run r;

	setup_qp(1);
	get_rx(&rx);
	rx.cack = 0x00FFFFF0;		/* wire PSN 5 is 0x01000005 */
	put_rx(&rx);
	len = trimmed_frame(pkt, &h, &d, TRIM_TOS_LASTHOP);
	run_xdp(pkt, len, &r);
	elen = expected_nack(exp, &h, 0x000005, 0xFFFFF0, MRC_NACK_TRIMMED_LASTHOP, 0);
	expect_nack_tx(&r, exp, elen);
	expect_trim_ctl(1, 1);
	expect_drops(&no_drops);
	expect_qp_stats(&no_qp_stats);

	/* cack past 2^24: its low 24 bits. */
	setup_qp(1);
	get_rx(&rx);
	rx.cack = 0x01000003;
	put_rx(&rx);
	run_xdp(pkt, len, &r);
	elen = expected_nack(exp, &h, 0x000005, 0x000003, MRC_NACK_TRIMMED_LASTHOP, 0);
	expect_nack_tx(&r, exp, elen);
	expect_trim_ctl(1, 1);
}

/* IPv6 (second peer address): NACK with a valid, mandatory UDP checksum. */
TEST_CASE(test_trim_nack_ipv6, "mrc.trim_nack_ipv6")
{
	struct data_spec d = dspec(MRC_OP_WRITE_FIRST, RX_CACK + 1, 0);
	__u8 pkt[PKT_MAX], exp[PKT_MAX];
	struct hdrs h = rx6();
	size_t len, elen;
	struct run r;
	int lasthop;

	for (lasthop = 0; lasthop < 2; lasthop++) {
		int before = test_state.failed;

		setup_qp(2);
		d.flags = MRC_BTH_F_TS;
		len = trimmed_frame(pkt, &h, &d, lasthop ? TRIM_TOS_LASTHOP : TRIM_TOS_MID);
		if (!ASSERT_TRUE(udp_csum_ok(pkt), "input UDP checksum valid"))
			return;
		run_xdp(pkt, len, &r);
		elen = expected_nack(exp, &h, RX_CACK + 1, RX_CACK,
				     lasthop ? MRC_NACK_TRIMMED_LASTHOP : MRC_NACK_TRIMMED,
				     TRIM_TS);
		ASSERT_EQ(elen, ETH_LEN + IP6_LEN + NACK_UDP_LEN, "expected frame: 86 bytes");
		expect_nack_tx(&r, exp, elen);
		ASSERT_EQ(get16(r.out + ETH_LEN + 4), NACK_UDP_LEN, "IPv6 payload_len");
		ASSERT_EQ(get32(r.out + ETH_LEN) & 0x0FF00000u, 0, "traffic class 0");
		ASSERT_EQ(get32(r.out + ETH_LEN) & 0xFFFFF, h.flow, "flow label kept");
		expect_trim_ctl(1, lasthop);
		expect_drops(&no_drops);
		expect_qp_stats(&no_qp_stats);
		if (test_state.failed != before)
			fprintf(stderr, "  (last hop %d)\n", lasthop);
	}
}

/*
 * The NACK lands in the requester's XDP: fed back to the program as the
 * requester (QP REMOTE_QPN, whose peer is our address) sees it, it is
 * consumed as a loss of that PSN with reason TRIMMED and the EV echoed.
 */
TEST_CASE(test_trim_nack_round_trip, "mrc.trim_nack_round_trip")
{
	struct data_spec d = dspec(MRC_OP_WRITE_MIDDLE, RX_CACK + 7, 0);
	struct mrc_qp_info req = {
		.state = MRC_QPS_RTS, .ctx = 0, .remote_qpn = QPN, .mpr = RX_MPR,
		.sock_port = SOCK_PORT + 1, .n_peer_addrs = 1,
		.local_key = PEER_KEY, .peer_key = QP_KEY, .flags = MRC_QP_F_KEYED,
	};
	static struct mrc_tx_state req_tx;
	struct mrc_qp_stats got;
	__u32 k = REMOTE_QPN - 1;
	__u8 pkt[PKT_MAX], nack[PKT_MAX];
	struct hdrs h = rx4();
	size_t len, nlen;
	struct run r;

	setup_qp(1);
	mapped4(req.peer_addrs[0], local4);
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_qps), &k, &req, BPF_ANY), 0,
		  "install the requester's QP");
	memset(&req_tx, 0, sizeof(req_tx));
	req_tx.snd_una = req_tx.sack_max = req_tx.loss_mark = TX_UNA;
	req_tx.snd_nxt = TX_NXT;
	req_tx.state = MRC_QPS_RTS;
	put_state_of(MFD(mrc_tx), k, &req_tx, sizeof(req_tx), "requester's tx state");
	/* The requester's TC logged the send the NACK answers (1 s ago). */
	memset(&log_buf, 0, sizeof(log_buf));
	log_buf.rec[(RX_CACK + 7) % MRC_WINDOW_MAX].psn = RX_CACK + 7;
	log_buf.rec[(RX_CACK + 7) % MRC_WINDOW_MAX].plane = 1;
	log_buf.rec[(RX_CACK + 7) % MRC_WINDOW_MAX].sent_ns = mono_ns() - 1000000000ull;
	publish_qp_maps(k, MRC_WINDOW_MAX, MRC_MAX_EVS);
	write_log_of(k, &log_buf);
	len = trimmed_frame(pkt, &h, &d, TRIM_TOS_MID);
	run_xdp(pkt, len, &r);
	if (!ASSERT_EQ(r.ret, XDP_TX, "responder: XDP_TX"))
		return;
	nlen = r.out_len;
	memcpy(nack, r.out, nlen);
	run_xdp(nack, nlen, &r);
	expect_xdp_drop(&r);
	expect_drops(&no_drops);
	got = read_qp_stats(k);
	ASSERT_EQ(got.rx_nack, 1, "requester: qp_stats.rx_nack");
	ASSERT_EQ(got.losses, 1, "requester: qp_stats.losses");
	if (ASSERT_EQ(drain_events(), 1, "one event")) {
		ASSERT_EQ(evq[0].type, MRC_EVT_LOSS, "LOSS event");
		ASSERT_EQ(evq[0].qpn, REMOTE_QPN, "of the requester's QP");
		ASSERT_EQ(evq[0].psn, RX_CACK + 7, "the trimmed PSN");
		ASSERT_EQ(evq[0].ev, PEER_SPORT, "EV echoed");
		ASSERT_EQ(evq[0].reason, MRC_NACK_TRIMMED, "reason TRIMMED");
	}
}

/*
 * What the checks before the trim path refuse is refused for a trimmed
 * header too, counted the same way and never answered: unknown QP, a
 * stranger's address, a QP not ready, a PSN already placed or at/below
 * cack (duplicate), beyond the window.
 */
TEST_CASE(test_trim_refused, "mrc.trim_refused")
{
	struct data_spec d = dspec(MRC_OP_WRITE_MIDDLE, RX_CACK + 2, 0);
	struct mrc_drop_stats want = {};
	struct mrc_qp_stats want_qp = {};
	struct mrc_rx_state rx;
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	d.dqpn = 77;
	len = trimmed_frame(pkt, &h, &d, TRIM_TOS_MID);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.unknown_qp = 1;
	expect_drops(&want);

	d.dqpn = QPN;
	h.src = stranger4;
	len = trimmed_frame(pkt, &h, &d, TRIM_TOS_MID);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.bad_source = 1;
	want_qp.rx_bad = 1;
	expect_drops(&want);
	expect_qp_stats(&want_qp);

	h = rx4();
	set_qp_state(MRC_QPS_INIT);
	len = trimmed_frame(pkt, &h, &d, TRIM_TOS_LASTHOP);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.qp_not_ready = 1;
	want_qp.rx_bad = 2;
	expect_drops(&want);
	expect_qp_stats(&want_qp);
	set_qp_state(MRC_QPS_RTS);

	/* Already placed: a duplicate, which owes the sender a SACK. */
	get_rx(&rx);
	set_bit_of(rx.placed, RX_CACK + 2);
	put_rx(&rx);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.duplicate = 1;
	want_qp.rx_dup = 1;
	expect_drops(&want);
	expect_qp_stats(&want_qp);
	get_rx(&rx);
	ASSERT_EQ(rx.sack_pending, 1, "trimmed duplicate leaves a SACK owed");

	/* At cack: a duplicate too. */
	d.psn = RX_CACK;
	len = trimmed_frame(pkt, &h, &d, TRIM_TOS_MID);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.duplicate = 2;
	want_qp.rx_dup = 2;
	expect_drops(&want);

	/* Out of the window. */
	d.psn = RX_CACK + RX_MPR;
	len = trimmed_frame(pkt, &h, &d, TRIM_TOS_MID);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.out_of_window = 1;
	want_qp.rx_oow = 1;
	expect_drops(&want);
	expect_qp_stats(&want_qp);

	/* Headers cut short are malformed, not trimmed. */
	{
		__u8 m[PKT_MAX];
		size_t mlen;

		d.psn = RX_CACK + 3;
		mlen = build_data(m, &d);
		len = build_udp(&h, m, mlen - 4, pkt);
		set_tos(pkt, TRIM_TOS_MID);
		run_xdp(pkt, len, &r);
		expect_xdp_drop(&r);
		want.malformed = 1;
		want_qp.rx_bad = 3;
		expect_drops(&want);
		expect_qp_stats(&want_qp);
	}
	expect_trim_ctl(0, 0);
	/* The first duplicate owed a SACK and woke the owner; nothing else. */
	ASSERT_EQ(drain_events(), 1, "one event: SACK_DUE");
	expect_event(0, MRC_EVT_SACK_DUE, 0, 0, 0);
}

/*
 * Not trimmed: a header with data still goes up to libmrc (even when
 * marked with a trim DSCP: only the lengths say "trimmed"), and so does
 * a zero-length WRITE (no data, but its RETH says length 0), plain or
 * with an immediate.
 */
TEST_CASE(test_trim_not_trimmed, "mrc.trim_not_trimmed")
{
	static const __u8 ops[] = { MRC_OP_WRITE_ONLY, MRC_OP_WRITE_ONLY_IMM };
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t i, len;
	struct run r;

	setup_qp(1);
	{
		struct data_spec d = dspec(MRC_OP_WRITE_MIDDLE, RX_CACK + 1, 1);

		len = trimmed_frame(pkt, &h, &d, TRIM_TOS_MID);
		run_xdp(pkt, len, &r);
		expect_steered(&r, pkt, len);
	}
	for (i = 0; i < sizeof(ops); i++) {
		struct data_spec d = dspec(ops[i], RX_CACK + 2 + (__u32)i, 0);

		d.msg_len = 0;
		d.flags = MRC_BTH_F_TS | MRC_BTH_F_ACK_REQ;
		len = trimmed_frame(pkt, &h, &d, TRIM_TOS_LASTHOP);
		run_xdp(pkt, len, &r);
		expect_steered(&r, pkt, len);
	}
	ASSERT_EQ(read_qp_stats(SLOT).rx_data, 3, "qp_stats.rx_data");
	expect_trim_ctl(0, 0);
	expect_drops(&no_drops);
}
