// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of include/mrc/wire_build.h, the BTH, NACK and SACK builders
 * the XDP program (trimmed-packet NACKs) and libmrc compile: every byte
 * against docs/WIRE.md's layout, fields wider than the wire truncated to
 * it, reserved bytes zero whatever the buffer held before, and the same
 * bytes as the encoding libmrc used by hand (htonl/htons field by field).
 */
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>

#include "mrc/wire_build.h"
#include "test.h"

TEST_STATE_DEFINE;

TEST_CASE(test_byte_order, "wire_build.byte_order")
{
	ASSERT_EQ(mrc_wire_be16(0x1234), htons(0x1234), "be16 is htons");
	ASSERT_EQ(mrc_wire_be32(0x12345678), htonl(0x12345678), "be32 is htonl");
}

TEST_CASE(test_bth, "wire_build.bth")
{
	struct mrc_bth bth;
	static const uint8_t want[12] = {
		MRC_OP_WRITE_ONLY, 0x9a, 0xbc, 0xde,	/* opcode, key bytes 0-2 */
		0xf1, 0x12, 0x34, 0x56,			/* key byte 3, dqpn */
		MRC_BTH_F_RETX | MRC_BTH_F_TS, 0x65, 0x43, 0x21, /* flags, PSN */
	};

	memset(&bth, 0xee, sizeof(bth));
	mrc_wire_bth(&bth, MRC_OP_WRITE_ONLY, 0x9abcdef1, 0xff123456, 0x77654321,
		     MRC_BTH_F_RETX | MRC_BTH_F_TS);
	ASSERT_MEM_EQ(&bth, want, sizeof(want), "BTH bytes");
	ASSERT_EQ(mrc_bth_key(&bth), 0x9abcdef1, "mrc_bth_key reads it back");
	ASSERT_EQ(ntohl(bth.dqpn) & MRC_QPN_MASK, 0x123456, "dqpn masked");
}

/* The interop key is the InfiniBand bytes: reserved 0, pkey 0xFFFF, 0. */
TEST_CASE(test_bth_interop_key, "wire_build.bth_interop_key")
{
	struct mrc_bth bth;
	static const uint8_t want[12] = {
		MRC_OP_SACK, 0x00, 0xff, 0xff,
		0x00, 0x00, 0x00, 0x2a,
		0x00, 0x00, 0x00, 0x05,
	};

	memset(&bth, 0xee, sizeof(bth));
	mrc_wire_bth(&bth, MRC_OP_SACK, MRC_KEY_INTEROP, 42, 5, 0);
	ASSERT_MEM_EQ(&bth, want, sizeof(want), "BTH bytes");
}

/* The key accessors touch bytes 1-4 only, at any alignment. */
TEST_CASE(test_bth_key_accessors, "wire_build.bth_key_accessors")
{
	uint8_t buf[16];

	for (int off = 0; off < 4; off++) {
		struct mrc_bth *bth = (struct mrc_bth *)(void *)(buf + off);

		memset(buf, 0x55, sizeof(buf));
		mrc_bth_set_key(bth, 0x01020304);
		ASSERT_EQ(buf[off], 0x55, "opcode byte untouched");
		ASSERT_EQ(buf[off + 1], 0x01, "key byte 0");
		ASSERT_EQ(buf[off + 2], 0x02, "key byte 1");
		ASSERT_EQ(buf[off + 3], 0x03, "key byte 2");
		ASSERT_EQ(buf[off + 4], 0x04, "key byte 3");
		ASSERT_EQ(buf[off + 5], 0x55, "QP bytes untouched");
		ASSERT_EQ(mrc_bth_key(bth), 0x01020304, "read back");
	}
}

TEST_CASE(test_nack, "wire_build.nack")
{
	struct mrc_nack_pkt pkt;
	struct mrc_nack_fields f = {
		.dqpn = 0x000007, .psn = 0x01abcdef, .cack = 0xff00ff00,
		.ev = 0xc001, .key = 0xa1b2c3d4, .ts_echo = 0x0102,
		.reason = MRC_NACK_TRIMMED_LASTHOP, .m = MRC_M_ALWAYS_SKIP,
	};
	static const uint8_t want[24] = {
		MRC_OP_NACK, 0xa1, 0xb2, 0xc3,
		0xd4, 0x00, 0x00, 0x07,		/* key byte 3, dqpn */
		0x00, 0xab, 0xcd, 0xef,		/* no flags in a NACK's BTH */
		0x00, 0x00, 0xff, 0x00,		/* cack: low 24 bits */
		0x00, 0x00, 0xc0, 0x01,		/* ev */
		MRC_NACK_TRIMMED_LASTHOP, MRC_M_ALWAYS_SKIP,
		0x01, 0x02,			/* ts_echo */
	};

	memset(&pkt, 0xee, sizeof(pkt));
	mrc_wire_nack(&pkt, &f);
	ASSERT_MEM_EQ(&pkt, want, sizeof(want), "NACK bytes");
}

/* The NACK libmrc's send_nack() wrote by hand before the shared builder. */
TEST_CASE(test_nack_as_libmrc, "wire_build.nack_as_libmrc")
{
	struct mrc_nack_pkt built, by_hand;
	uint32_t dqpn = 42, psn24 = 0x123456, cack = 0x999999, port = 50000;
	struct mrc_nack_fields f = {
		.dqpn = dqpn, .psn = psn24, .cack = cack, .ev = port,
		.key = MRC_KEY_INTEROP, .ts_echo = 0x4321, .reason = MRC_NACK_NO_RESOURCE,
		.m = MRC_M_NONE,
	};

	memset(&by_hand, 0, sizeof(by_hand));
	by_hand.bth.opcode = MRC_OP_NACK;
	by_hand.bth.key_hi[1] = 0xff;	/* the partition key it had */
	by_hand.bth.key_hi[2] = 0xff;
	by_hand.bth.dqpn = htonl(dqpn & MRC_QPN_MASK);
	by_hand.bth.psn = htonl(psn24 & MRC_PSN_MASK);
	by_hand.nh.cack = htonl(cack & MRC_PSN_MASK);
	by_hand.nh.ev = htonl(port);
	by_hand.nh.reason = MRC_NACK_NO_RESOURCE;
	by_hand.nh.ts_echo = htons(0x4321);

	memset(&built, 0xee, sizeof(built));
	mrc_wire_nack(&built, &f);
	ASSERT_MEM_EQ(&built, &by_hand, sizeof(built), "same bytes as libmrc's encoder");
}

TEST_CASE(test_sack, "wire_build.sack")
{
	struct mrc_sack_pkt pkt;
	struct mrc_sack_fields f = {
		.bitmap = 0x0123456789abcdefULL, .dqpn = 9, .psn = 0x000100,
		.cack = 0x0000ff, .ev = 0xbeef, .rcv_bytes = 0x0a0b0c0d,
		.key = 0x0badcafe, .bitmap_off = 0x0040, .ts_echo = 0x1111,
		.ooo_count = 0x2222, .hold = 0x3333, .m = MRC_M_SKIP_ONCE,
		.penalty = 0,
	};
	static const uint8_t want[44] = {
		MRC_OP_SACK, 0x0b, 0xad, 0xca,
		0xfe, 0x00, 0x00, 0x09,		/* key byte 3, dqpn */
		0x00, 0x00, 0x01, 0x00,
		0x00, 0x00, 0x00, 0xff,		/* cack */
		0x00, 0x00, 0xbe, 0xef,		/* ev */
		0x00, 0x40, MRC_M_SKIP_ONCE, 0x00, /* bitmap_off, m, rsvd */
		0x01, 0x23, 0x45, 0x67,		/* bitmap_hi */
		0x89, 0xab, 0xcd, 0xef,		/* bitmap_lo */
		0x11, 0x11, 0x22, 0x22,		/* ts_echo, ooo_count */
		0x0a, 0x0b, 0x0c, 0x0d,		/* rcv_bytes */
		0x00, 0x00, 0x33, 0x33,		/* penalty, rsvd2, hold */
	};

	memset(&pkt, 0xee, sizeof(pkt));
	mrc_wire_sack(&pkt, &f);
	ASSERT_MEM_EQ(&pkt, want, sizeof(want), "SACK bytes");
}

/* The SACK libmrc's send_sack() wrote by hand before the shared builder. */
TEST_CASE(test_sack_as_libmrc, "wire_build.sack_as_libmrc")
{
	struct mrc_sack_pkt built, by_hand;
	uint64_t bits = 0xfffffffffffffffeULL, rcv_bytes = 0x123456789ULL;
	struct mrc_sack_fields f = {
		.bitmap = bits, .dqpn = 3, .psn = 0x00abcd, .cack = 0x00abcc,
		.ev = 0x1234, .rcv_bytes = (uint32_t)(rcv_bytes >> 8),
		.key = MRC_KEY_INTEROP, .bitmap_off = 64, .ts_echo = 7, .ooo_count = 5,
		.hold = 0xffff, .m = MRC_M_NONE,
	};

	memset(&by_hand, 0, sizeof(by_hand));
	by_hand.bth.opcode = MRC_OP_SACK;
	by_hand.bth.key_hi[1] = 0xff;	/* the partition key it had */
	by_hand.bth.key_hi[2] = 0xff;
	by_hand.bth.dqpn = htonl(3);
	by_hand.bth.psn = htonl(0x00abcd);
	by_hand.sh.cack = htonl(0x00abcc);
	by_hand.sh.ev = htonl(0x1234);
	by_hand.sh.bitmap_off = htons(64);
	by_hand.sh.m = MRC_M_NONE;
	by_hand.sh.bitmap_hi = htonl((uint32_t)(bits >> 32));
	by_hand.sh.bitmap_lo = htonl((uint32_t)bits);
	by_hand.sh.ts_echo = htons(7);
	by_hand.sh.ooo_count = htons(5);
	by_hand.sh.rcv_bytes = htonl((uint32_t)(rcv_bytes >> 8));
	by_hand.sh.hold = htons(0xffff);

	memset(&built, 0xee, sizeof(built));
	mrc_wire_sack(&built, &f);
	ASSERT_MEM_EQ(&built, &by_hand, sizeof(built), "same bytes as libmrc's encoder");
}

int main(void)
{
	RUN_REGISTERED_TESTS();
	return TEST_EXIT();
}
