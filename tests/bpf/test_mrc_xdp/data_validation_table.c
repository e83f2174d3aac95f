// SPDX-License-Identifier: GPL-2.0
/*
 * DATA validation in mrc_xdp_rx as one table (katran's packet fixtures,
 * cilium's bpf/tests): every row is {test, QP state, packet mutation,
 * expected verdict, expected drop counters [, QP counters, SACK owed]}
 * and one driver, dv_run_row(), runs it. The rows of one test run in
 * order, and a row with .setup = 0 keeps the state (and the counters)
 * the row before it left, so the counters a row expects are the totals
 * since the last set-up. Each test still prints its own [mrc.NAME] line.
 *
 * Verdicts: XDP_DROP, or XDP_PASS meaning steered to the owner's socket
 * (expect_steered(): only the UDP dport and a valid checksum changed).
 * Drop counters are always checked (fields not named must be zero); the
 * QP counters and the responder's sack_pending where the row says so.
 */
#include "mrc_xdp_test.h"

/* How a row's packet differs from the DATA packet dspec() describes. */
enum dv_mutation {
	MUT_NONE,
	MUT_DQPN,		/* BTH destination QP arg */
	MUT_MSG_LEN,		/* RETH message length arg */
	MUT_UDP_LEN,		/* UDP length field arg (nothing else changed) */
	MUT_UDP_LEN_PLUS,	/* UDP length field arg bytes past the datagram */
	MUT_KEEP,		/* only the first arg bytes of the MRC message sent */
	MUT_CUT,		/* the MRC message without its last arg bytes */
	MUT_BTH_FLAGS,		/* BTH flags arg set, the headers they announce absent */
	MUT_OPCODE,		/* BTH opcode arg over the headers built for .opcode */
	MUT_RAW_OPCODE,		/* BTH with opcode arg and 32 zero bytes after it */
};

/* Responder state written before the packet (rx_set). */
#define RX_SET_CACK	0x1
#define RX_SET_MPR	0x2
#define RX_SET_PLACED	0x4	/* the placed bit of PSN .placed */

/* Optional checks (check). */
#define CHK_QP		0x1	/* QP counters = .qp (rx_data_bytes: see data_pkts) */
#define CHK_SACK	0x2	/* rx.sack_pending = .sack_pending after the packet */
#define CHK_PLACED	0x4	/* the placed bit sits in word .placed_word, bit .placed_bit */

struct dv_row {
	const char *test;		/* the test's printed name */
	const char *what;		/* the row, in failure messages */

	/* QP state */
	__u8	setup;			/* setup_qp(setup) first; 0: keep the row before's */
	__u8	set_state;		/* then set_qp_state(state) */
	__u32	state;
	__u32	rx_set;			/* RX_SET_*: cack, mpr, placed */
	__u32	cack, mpr, placed;

	/* the packet: DATA from the peer (rx4(), or rx6() if ipv6) */
	__u8	opcode;
	__u32	psn;
	__u32	payload;
	int	ipv6;
	const __u8 *src;		/* NULL: the peer */
	enum dv_mutation mut;
	__u32	arg;

	/* expected */
	__u32	verdict;		/* XDP_DROP, or XDP_PASS: steered */
	struct mrc_drop_stats drops;	/* since set-up */
	__u32	check;			/* CHK_* */
	struct mrc_qp_stats qp;		/* since set-up */
	__u32	data_pkts;		/* qp.rx_data_bytes = data_pkts x this MRC length */
	__u32	sack_pending;
	__u32	placed_word, placed_bit;
};

#define DATA(op, p, len)	.opcode = (op), .psn = (p), .payload = (len)
#define STATE(s)		.set_state = 1, .state = (s)
#define STEERED			.verdict = XDP_PASS
#define DROPPED(...)		.verdict = XDP_DROP, .drops = { __VA_ARGS__ }
/* Dropped as malformed; counted on the QP (rx_bad) once the QP is known. */
#define MALFORMED(on_qp)	.setup = 1, DROPPED(.malformed = 1), .check = CHK_QP, \
				.qp = { .rx_bad = (on_qp) }

static const struct dv_row dv_rows[] = {
	/* ---- malformed: the lengths do not hold what the headers say ---- */
	{ "mrc.malformed_udp_len_past_end", "UDP length 10 bytes past the end",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 64), .mut = MUT_UDP_LEN_PLUS, .arg = 10,
	  MALFORMED(0) },
	{ "mrc.malformed_udp_len_past_end", "one byte past the end is enough",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 64), .mut = MUT_UDP_LEN_PLUS, .arg = 1,
	  MALFORMED(0) },
	{ "mrc.malformed_udp_len_past_end", "UDP length shorter than the UDP header",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 64), .mut = MUT_UDP_LEN, .arg = 4,
	  MALFORMED(0) },

	{ "mrc.malformed_short_bth", "the frame ends 6 bytes into the BTH",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 64), .mut = MUT_KEEP, .arg = 6,
	  MALFORMED(0) },
	{ "mrc.malformed_short_bth", "whole packet, UDP length stops inside the BTH",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 64), .mut = MUT_UDP_LEN,
	  .arg = UDP_LEN + BTH_LEN - 1, MALFORMED(0) },

	{ "mrc.malformed_headers_cut", "RETH cut in half: 24 of 32 header bytes",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 0), .mut = MUT_CUT, .arg = 8,
	  MALFORMED(1) },
	{ "mrc.malformed_headers_cut", "TSETH flag, no TSETH: 32 bytes where 36 are needed",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 0), .mut = MUT_BTH_FLAGS, .arg = MRC_BTH_F_TS,
	  MALFORMED(1) },

	{ "mrc.malformed_payload_over_msg_len", "101 payload bytes, message length 100",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 101), .mut = MUT_MSG_LEN, .arg = 100,
	  MALFORMED(1) },
	{ "mrc.malformed_payload_over_msg_len", "boundary: exactly the message length is fine",
	  .setup = 1, DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 100), .mut = MUT_MSG_LEN, .arg = 100,
	  STEERED },

	/* WRITE_ONLY headers (32 bytes) under an IMM opcode that needs 36. */
	{ "mrc.malformed_imm_missing", "WRITE_ONLY headers under WRITE_ONLY_IMM",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 0), .mut = MUT_OPCODE,
	  .arg = MRC_OP_WRITE_ONLY_IMM, MALFORMED(1) },
	{ "mrc.malformed_imm_missing", "WRITE_ONLY headers under WRITE_LAST_IMM",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 0), .mut = MUT_OPCODE,
	  .arg = MRC_OP_WRITE_LAST_IMM, MALFORMED(1) },
	/*
	 * With its immediate the same opcode passes: a zero-length WRITE with
	 * immediate (with a message length, no data would be a trimmed header).
	 */
	{ "mrc.malformed_imm_missing", "zero-length WRITE_ONLY_IMM with its immediate",
	  .setup = 1, DATA(MRC_OP_WRITE_ONLY_IMM, RX_CACK + 1, 0), .mut = MUT_MSG_LEN,
	  .arg = 0, STEERED },

	/* ---- opcodes that are no DATA (a BTH and 32 zero bytes) ---- */
	{ "mrc.bad_opcode", "opcode 0x42", .setup = 1,
	  DATA(0, RX_CACK + 1, 0), .mut = MUT_RAW_OPCODE, .arg = 0x42,
	  DROPPED(.bad_opcode = 1), .check = CHK_QP },
	{ "mrc.bad_opcode", "opcode 0x00",
	  DATA(0, RX_CACK + 1, 0), .mut = MUT_RAW_OPCODE, .arg = 0x00,
	  DROPPED(.bad_opcode = 2), .check = CHK_QP },
	{ "mrc.bad_opcode", "opcode WRITE_FIRST - 1",
	  DATA(0, RX_CACK + 1, 0), .mut = MUT_RAW_OPCODE, .arg = MRC_OP_WRITE_FIRST - 1,
	  DROPPED(.bad_opcode = 3), .check = CHK_QP },
	{ "mrc.bad_opcode", "opcode WRITE_ONLY_IMM + 1",
	  DATA(0, RX_CACK + 1, 0), .mut = MUT_RAW_OPCODE, .arg = MRC_OP_WRITE_ONLY_IMM + 1,
	  DROPPED(.bad_opcode = 4), .check = CHK_QP },
	{ "mrc.bad_opcode", "opcode 0xFF",
	  DATA(0, RX_CACK + 1, 0), .mut = MUT_RAW_OPCODE, .arg = 0xFF,
	  DROPPED(.bad_opcode = 5), .check = CHK_QP },

	/* ---- no QP at the destination QPN ---- */
	{ "mrc.unknown_qp", "dqpn 77", .setup = 1,
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16), .mut = MUT_DQPN, .arg = 77,
	  DROPPED(.unknown_qp = 1), .check = CHK_QP },
	{ "mrc.unknown_qp", "dqpn 0",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16), .mut = MUT_DQPN, .arg = 0,
	  DROPPED(.unknown_qp = 2), .check = CHK_QP },
	{ "mrc.unknown_qp", "dqpn MRC_MAX_QPS + 1",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16), .mut = MUT_DQPN, .arg = MRC_MAX_QPS + 1,
	  DROPPED(.unknown_qp = 3), .check = CHK_QP },
	{ "mrc.unknown_qp", "dqpn 300",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16), .mut = MUT_DQPN, .arg = 300,
	  DROPPED(.unknown_qp = 4), .check = CHK_QP },
	{ "mrc.unknown_qp", "dqpn MRC_MAX_QPS",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16), .mut = MUT_DQPN, .arg = MRC_MAX_QPS,
	  DROPPED(.unknown_qp = 5), .check = CHK_QP },

	/* ---- the QP's state ---- */
	{ "mrc.qp_not_ready", "INIT", .setup = 1, STATE(MRC_QPS_INIT),
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16),
	  DROPPED(.qp_not_ready = 1), .check = CHK_QP, .qp = { .rx_bad = 1 } },
	{ "mrc.qp_not_ready", "ERROR", .setup = 1, STATE(MRC_QPS_ERROR),
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16),
	  DROPPED(.qp_not_ready = 1) },
	{ "mrc.qp_not_ready", "RESET is \"no QP here\"", .setup = 1, STATE(MRC_QPS_RESET),
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16),
	  DROPPED(.unknown_qp = 1) },
	{ "mrc.qp_not_ready", "RTR already receives", .setup = 1, STATE(MRC_QPS_RTR),
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16),
	  STEERED },

	/* ---- the source is no peer of the QP ---- */
	{ "mrc.bad_source", "IPv4 stranger", .setup = 2,
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16), .src = stranger4,
	  DROPPED(.bad_source = 1), .check = CHK_QP, .qp = { .rx_bad = 1 } },
	{ "mrc.bad_source", "IPv6 stranger",
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16), .ipv6 = 1, .src = stranger6,
	  DROPPED(.bad_source = 2), .check = CHK_QP, .qp = { .rx_bad = 2 } },
	/* fd00:1::2 sits in peer_addrs[1] but n_peer_addrs = 1: not a peer. */
	{ "mrc.bad_source", "second address beyond n_peer_addrs", .setup = 1,
	  DATA(MRC_OP_WRITE_ONLY, RX_CACK + 1, 16), .ipv6 = 1,
	  DROPPED(.bad_source = 1), .check = CHK_QP, .qp = { .rx_bad = 1 } },

	/* ---- PSNs already received: dropped, a SACK owed ---- */
	{ "mrc.duplicate", "psn cack", .setup = 1,
	  DATA(MRC_OP_WRITE_MIDDLE, RX_CACK, 64),
	  DROPPED(.duplicate = 1), .check = CHK_QP | CHK_SACK, .qp = { .rx_dup = 1 },
	  .sack_pending = 1 },
	{ "mrc.duplicate", "psn cack - 1", .setup = 1,
	  DATA(MRC_OP_WRITE_MIDDLE, RX_CACK - 1, 64),
	  DROPPED(.duplicate = 1), .check = CHK_QP | CHK_SACK, .qp = { .rx_dup = 1 },
	  .sack_pending = 1 },
	{ "mrc.duplicate", "psn cack - 500", .setup = 1,
	  DATA(MRC_OP_WRITE_MIDDLE, RX_CACK - 500, 64),
	  DROPPED(.duplicate = 1), .check = CHK_QP | CHK_SACK, .qp = { .rx_dup = 1 },
	  .sack_pending = 1 },
	/* Above cack but already placed: bit psn % MRC_WINDOW_MAX (1005: word 15, bit 45). */
	{ "mrc.duplicate", "placed above cack", .setup = 1,
	  .rx_set = RX_SET_PLACED, .placed = RX_CACK + 6,
	  DATA(MRC_OP_WRITE_MIDDLE, RX_CACK + 6, 64),
	  DROPPED(.duplicate = 1), .check = CHK_QP | CHK_SACK | CHK_PLACED,
	  .qp = { .rx_dup = 1 }, .sack_pending = 1, .placed_word = 15, .placed_bit = 45 },
	/* Its neighbours are not placed: they go up. */
	{ "mrc.duplicate", "neighbour below the placed PSN",
	  DATA(MRC_OP_WRITE_MIDDLE, RX_CACK + 5, 64),
	  STEERED, .drops = { .duplicate = 1 } },
	{ "mrc.duplicate", "neighbour above the placed PSN",
	  DATA(MRC_OP_WRITE_MIDDLE, RX_CACK + 7, 64),
	  STEERED, .drops = { .duplicate = 1 } },

	/* ---- the window (cack, cack + mpr) ---- */
	{ "mrc.out_of_window", "last PSN of the window", .setup = 1,
	  DATA(MRC_OP_WRITE_MIDDLE, RX_CACK + RX_MPR - 1, 64),
	  STEERED, .check = CHK_SACK, .sack_pending = 0 },
	{ "mrc.out_of_window", "first PSN past it",
	  DATA(MRC_OP_WRITE_MIDDLE, RX_CACK + RX_MPR, 64),
	  DROPPED(.out_of_window = 1), .check = CHK_QP,
	  .qp = { .rx_data = 1, .rx_oow = 1 }, .data_pkts = 1 },
	{ "mrc.out_of_window", "an MPR larger than the bitmap ring refuses everything",
	  .setup = 1, .rx_set = RX_SET_MPR, .mpr = MRC_WINDOW_MAX + MRC_MPR_UNIT,
	  DATA(MRC_OP_WRITE_MIDDLE, RX_CACK + 1, 64),
	  DROPPED(.out_of_window = 1) },

	/*
	 * SUSPECTED BUG (counter only): a PSN beyond the window whose ring slot
	 * (psn % MRC_WINDOW_MAX) aliases a placed PSN inside the window is
	 * counted as a duplicate, because check_window() tests the placed
	 * bitmap before the window. Both are dropped; the counter is wrong.
	 */
	{ "mrc.out_of_window_aliasing_placed", "slot of placed cack + 6, one window on",
	  .setup = 1, .rx_set = RX_SET_PLACED, .placed = RX_CACK + 6,
	  DATA(MRC_OP_WRITE_MIDDLE, RX_CACK + 6 + MRC_WINDOW_MAX, 64),
	  DROPPED(.out_of_window = 1), .check = CHK_QP, .qp = { .rx_oow = 1 } },

	/* ---- 24-bit wire PSNs against a 32-bit cack ---- */
	{ "mrc.psn_wrap", "24-bit wrap: cack 0x00FFFFF0, wire 5 is 0x01000005",
	  .setup = 1, .rx_set = RX_SET_CACK, .cack = 0x00FFFFF0,
	  DATA(MRC_OP_WRITE_MIDDLE, 0x000005, 64),
	  STEERED },
	{ "mrc.psn_wrap", "wire 0xFFFFF0 is cack itself: a duplicate",
	  DATA(MRC_OP_WRITE_MIDDLE, 0xFFFFF0, 64),
	  DROPPED(.duplicate = 1) },
	{ "mrc.psn_wrap", "32-bit wrap: cack 0xFFFFFFF0, wire 5 is 0x00000005",
	  .setup = 1, .rx_set = RX_SET_CACK, .cack = 0xFFFFFFF0,
	  DATA(MRC_OP_WRITE_MIDDLE, 0x000005, 64),
	  STEERED },
	{ "mrc.psn_wrap", "placed ring across the wrap: 0x00000005 is slot 5",
	  .rx_set = RX_SET_PLACED, .placed = 5,
	  DATA(MRC_OP_WRITE_MIDDLE, 0x000005, 64),
	  DROPPED(.duplicate = 1) },
};

#define DV_ROWS	(sizeof(dv_rows) / sizeof(dv_rows[0]))

/* The row's packet, built into pkt; returns its length. */
static size_t dv_packet(const struct dv_row *row, __u8 *pkt)
{
	struct data_spec d = dspec(row->opcode, row->psn, row->payload);
	struct hdrs h = row->ipv6 ? rx6() : rx4();
	__u8 m[PKT_MAX];
	size_t mlen, len;

	if (row->src)
		h.src = row->src;
	if (row->mut == MUT_DQPN)
		d.dqpn = row->arg;
	else if (row->mut == MUT_MSG_LEN)
		d.msg_len = row->arg;
	mlen = build_data(m, &d);
	switch (row->mut) {
	case MUT_KEEP:
		mlen = row->arg;
		break;
	case MUT_CUT:
		mlen -= row->arg;
		break;
	case MUT_BTH_FLAGS:
		m[8] |= (__u8)row->arg;
		break;
	case MUT_OPCODE:
		m[0] = (__u8)row->arg;
		break;
	case MUT_RAW_OPCODE:
		put_bth(m, (__u8)row->arg, d.dqpn, 0, row->psn);
		memset(m + BTH_LEN, 0, 32);
		mlen = BTH_LEN + 32;
		break;
	default:
		break;
	}
	len = build_udp(&h, m, mlen, pkt);
	if (row->mut == MUT_UDP_LEN)
		set_udp_len(pkt, (__u16)row->arg);
	else if (row->mut == MUT_UDP_LEN_PLUS)
		set_udp_len(pkt, (__u16)(get16(pkt + l4_off(pkt) + 4) + row->arg));
	return len;
}

/* Set up the row's QP state, run its packet, check what the row expects. */
static void dv_run_row(const struct dv_row *row)
{
	struct mrc_qp_stats want_qp = row->qp;
	struct mrc_rx_state rx;
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	if (row->setup)
		setup_qp(row->setup);
	if (row->set_state)
		set_qp_state(row->state);
	if (row->rx_set) {
		get_rx(&rx);
		if (row->rx_set & RX_SET_CACK)
			rx.cack = row->cack;
		if (row->rx_set & RX_SET_MPR)
			rx.mpr = row->mpr;
		if (row->rx_set & RX_SET_PLACED)
			set_bit_of(rx.placed, row->placed);
		if (row->check & CHK_PLACED)
			ASSERT_EQ(rx.placed[row->placed_word], 1ULL << row->placed_bit,
				  "placed bit position");
		put_rx(&rx);
	}
	len = dv_packet(row, pkt);
	run_xdp(pkt, len, &r);
	if (row->verdict == XDP_PASS)
		expect_steered(&r, pkt, len);
	else
		expect_xdp_drop(&r);
	expect_drops(&row->drops);
	if (row->check & CHK_QP) {
		want_qp.rx_data_bytes = row->data_pkts * (len - l4_off(pkt) - UDP_LEN);
		expect_qp_stats(&want_qp);
	}
	if (row->check & CHK_SACK) {
		get_rx(&rx);
		ASSERT_EQ(rx.sack_pending, row->sack_pending, "rx.sack_pending (SACK owed)");
	}
}

/* Every row names a registered test (a misspelt name would never run). */
static int dv_rows_registered(void)
{
	const struct test_case *tc;
	size_t i;

	for (i = 0; i < DV_ROWS; i++) {
		for (tc = test_registry.head; tc; tc = tc->next)
			if (!strcmp(tc->name, dv_rows[i].test))
				break;
		if (!tc) {
			fprintf(stderr, "  (row \"%s\" of unregistered %s)\n",
				dv_rows[i].what, dv_rows[i].test);
			return 0;
		}
	}
	return 1;
}

/* Run the rows of test `name` in table order. */
static void dv_run(const char *name)
{
	size_t i, n = 0;

	ASSERT_TRUE(dv_rows_registered(), "every table row belongs to a registered test");
	for (i = 0; i < DV_ROWS; i++) {
		int before = test_state.failed;

		if (strcmp(dv_rows[i].test, name))
			continue;
		n++;
		dv_run_row(&dv_rows[i]);
		if (test_state.failed != before)
			fprintf(stderr, "  (row: %s)\n", dv_rows[i].what);
	}
	ASSERT_TRUE(n > 0, "the table has rows for this test");
}

#define DV_TEST(fn, name)	TEST_CASE(fn, name) { dv_run(name); }

DV_TEST(test_malformed_udp_len_past_end, "mrc.malformed_udp_len_past_end")
DV_TEST(test_malformed_short_bth, "mrc.malformed_short_bth")
DV_TEST(test_malformed_headers_cut, "mrc.malformed_headers_cut")
DV_TEST(test_malformed_payload_over_msg_len, "mrc.malformed_payload_over_msg_len")
DV_TEST(test_malformed_imm_missing, "mrc.malformed_imm_missing")
DV_TEST(test_bad_opcode, "mrc.bad_opcode")
DV_TEST(test_unknown_qp, "mrc.unknown_qp")
DV_TEST(test_qp_not_ready, "mrc.qp_not_ready")
DV_TEST(test_bad_source, "mrc.bad_source")
DV_TEST(test_duplicate, "mrc.duplicate")
DV_TEST(test_out_of_window, "mrc.out_of_window")
DV_TEST(test_out_of_window_aliasing_placed, "mrc.out_of_window_aliasing_placed")
DV_TEST(test_psn_wrap, "mrc.psn_wrap")
