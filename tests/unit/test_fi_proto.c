// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of the libfabric provider's wire protocol
 * (user/libfabric/proto.c): immediates, the credit and slot accounting of
 * a receive ring, the control payloads and the CM message. No network.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <string.h>

#include "libfabric/proto.h"
#include "test.h"

TEST_STATE_DEFINE;

TEST_CASE(test_imm_roundtrip, "fi_proto.imm.roundtrip")
{
	struct mfi_imm in = { .kind = MFI_K_MSG, .last = true, .cqdata = true,
			      .slot = 1023, .credits = 0xfffe };
	struct mfi_imm out;
	uint32_t v = mfi_imm_encode(&in);

	ASSERT_EQ(mfi_imm_decode(v, &out), 0, "decode of an encoded MSG");
	ASSERT_EQ(out.kind, MFI_K_MSG, "kind");
	ASSERT_TRUE(out.last && out.cqdata, "flags");
	ASSERT_EQ(out.slot, 1023, "slot");
	ASSERT_EQ(out.credits, 0xfffe, "credits");

	in = (struct mfi_imm){ .kind = MFI_K_READ_RESP, .slot = 7, .credits = 3 };
	ASSERT_EQ(mfi_imm_decode(mfi_imm_encode(&in), &out), 0, "READ_RESP");
	ASSERT_EQ(out.kind, MFI_K_READ_RESP, "kind READ_RESP");
	ASSERT_EQ(out.slot, 7, "slot 7");
	ASSERT_TRUE(!out.last && !out.cqdata, "no flags");
}

TEST_CASE(test_imm_rejects, "fi_proto.imm.rejects")
{
	struct mfi_imm out;

	ASSERT_EQ(mfi_imm_decode(0, &out), -EPROTO, "kind 0");
	ASSERT_EQ(mfi_imm_decode(6u << MFI_IMM_KIND_SHIFT, &out), -EPROTO, "kind 6");
	ASSERT_EQ(mfi_imm_decode(0xffffffffu, &out), -EPROTO, "all ones");
	/* Only fragments end or carry CQ data; a credit names no slot. */
	ASSERT_EQ(mfi_imm_decode((uint32_t)MFI_K_WDATA << MFI_IMM_KIND_SHIFT |
				 MFI_IMM_LAST, &out), -EPROTO, "WDATA with LAST");
	ASSERT_EQ(mfi_imm_decode((uint32_t)MFI_K_CREDIT << MFI_IMM_KIND_SHIFT |
				 5u << MFI_IMM_SLOT_SHIFT, &out), -EPROTO,
		  "CREDIT with a slot");
	ASSERT_EQ(mfi_imm_decode((uint32_t)MFI_K_CREDIT << MFI_IMM_KIND_SHIFT | 9,
				 &out), 0, "CREDIT with 9 credits");
	ASSERT_EQ(out.credits, 9, "9 credits");
}

TEST_CASE(test_credits_sender, "fi_proto.credits.sender")
{
	struct mfi_credits c;

	ASSERT_EQ(mfi_credits_init(&c, 0), -EINVAL, "0 slots");
	ASSERT_EQ(mfi_credits_init(&c, MFI_MAX_SLOTS + 1), -EINVAL, "too many slots");
	ASSERT_EQ(mfi_credits_init(&c, 4), 0, "4 slots");
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(mfi_tx_take_slot(&c), i, "slots round robin");
	ASSERT_EQ(mfi_tx_take_slot(&c), -EAGAIN, "out of credit");
	ASSERT_EQ(mfi_tx_grant(&c, 5), -EPROTO, "more credit than owed");
	ASSERT_EQ(mfi_tx_grant(&c, 2), 0, "2 back");
	ASSERT_EQ(mfi_tx_take_slot(&c), 0, "wraps to slot 0");
	ASSERT_EQ(mfi_tx_take_slot(&c), 1, "then slot 1");
	ASSERT_EQ(mfi_tx_take_slot(&c), -EAGAIN, "out again");
	ASSERT_EQ(mfi_tx_grant(&c, 5), -EPROTO, "5 back of 4 owed");
	ASSERT_EQ(mfi_tx_grant(&c, 4), 0, "all 4 back");
}

TEST_CASE(test_credits_receiver_in_order, "fi_proto.credits.receiver")
{
	struct mfi_credits c;

	mfi_credits_init(&c, 4);
	ASSERT_EQ(mfi_rx_arrive(&c, 1), -EPROTO, "slot 1 before slot 0");
	for (uint32_t s = 0; s < 4; s++)
		ASSERT_EQ(mfi_rx_arrive(&c, s), 0, "arrivals in order");
	ASSERT_EQ(mfi_rx_arrive(&c, 0), -EPROTO, "a fifth without credit");
	ASSERT_EQ(mfi_rx_free(&c, 0), 0, "free slot 0");
	ASSERT_EQ(mfi_rx_free(&c, 0), -EPROTO, "free slot 0 twice");
	ASSERT_EQ(mfi_rx_credit_due(&c), false, "1 of 4 owed: not yet");
	ASSERT_EQ(mfi_rx_free(&c, 1), 0, "free slot 1");
	ASSERT_EQ(mfi_rx_credit_due(&c), true, "half the ring owed");
	ASSERT_EQ(mfi_rx_take_credits(&c), 2, "2 credits back");
	ASSERT_EQ(mfi_rx_take_credits(&c), 0, "then none");
	ASSERT_EQ(mfi_rx_arrive(&c, 0), 0, "slot 0 again after its credit");
}

/* Out-of-order frees return credit only for the contiguous run. */
TEST_CASE(test_credits_out_of_order, "fi_proto.credits.out_of_order")
{
	struct mfi_credits c;

	mfi_credits_init(&c, 4);
	for (uint32_t s = 0; s < 3; s++)
		mfi_rx_arrive(&c, s);
	ASSERT_EQ(mfi_rx_free(&c, 3), -EPROTO, "slot 3 never arrived");
	ASSERT_EQ(mfi_rx_free(&c, 2), 0, "free slot 2 first");
	ASSERT_EQ(mfi_rx_free(&c, 1), 0, "then slot 1");
	ASSERT_EQ(mfi_rx_take_credits(&c), 0, "slot 0 still busy: no credit");
	ASSERT_EQ(mfi_rx_free(&c, 0), 0, "free slot 0");
	ASSERT_EQ(mfi_rx_take_credits(&c), 3, "all three at once");
}

/* Sender and receiver in lockstep over many wraps never disagree. */
TEST_CASE(test_credits_lockstep, "fi_proto.credits.lockstep")
{
	struct mfi_credits tx, rx;
	int sent = 0;

	mfi_credits_init(&tx, 8);
	mfi_credits_init(&rx, 8);
	for (int round = 0; round < 1000; round++) {
		int slot;

		while ((slot = mfi_tx_take_slot(&tx)) >= 0) {
			if (mfi_rx_arrive(&rx, (uint32_t)slot))
				break;
			sent++;
		}
		/* The receiver frees every other round all it has. */
		if (round % 2)
			for (uint32_t s = rx.rx_freed_seq; s != rx.rx_seq; s++)
				mfi_rx_free(&rx, s % 8);
		if (mfi_tx_grant(&tx, mfi_rx_take_credits(&rx)))
			break;
	}
	ASSERT_EQ(sent, 4000, "8 fragments every two rounds");
	ASSERT_EQ(tx.tx_seq, rx.rx_seq, "both counted the same fragments");
}

TEST_CASE(test_read_payloads, "fi_proto.read_payloads")
{
	struct mfi_read_req req = { 0x1122334455667788ull, 0xdeadbeef00ull, 0xabcd,
				    1 << 20, 0x7f0000001000ull, 0x55aa55aa };
	struct mfi_read_req req2;
	struct mfi_read_resp resp = { 42, 13 }, resp2;
	uint8_t buf[MFI_READ_REQ_LEN];

	mfi_read_req_encode(&req, buf);
	ASSERT_EQ(buf[0], 0x11, "big endian id");
	mfi_read_req_decode(buf, &req2);
	ASSERT_MEM_EQ(&req2, &req, offsetof(struct mfi_read_req, lrkey) + 4,
		      "read request round trip");
	mfi_read_resp_encode(&resp, buf);
	mfi_read_resp_decode(buf, &resp2);
	ASSERT_EQ(resp2.id, 42, "answer id");
	ASSERT_EQ(resp2.status, 13, "answer status");
}

static void sample_req(struct mfi_cm_msg *m)
{
	struct sockaddr_in *a = (struct sockaddr_in *)&m->addrs[0];
	struct sockaddr_in6 *b = (struct sockaddr_in6 *)&m->addrs[1];

	memset(m, 0, sizeof(*m));
	m->type = MFI_CM_REQ;
	m->qpn = 77;
	m->psn = 0x123456;
	m->key = 0x9abcdef0;
	m->path_mtu = 8192;
	m->ring_addr = 0x7f0000000000ull;
	m->ring_rkey = 0x1234;
	m->slot_size = 65536;
	m->nslots = 32;
	m->n_addrs = 2;
	a->sin_family = AF_INET;
	inet_pton(AF_INET, "198.18.1.2", &a->sin_addr);
	b->sin6_family = AF_INET6;
	inet_pton(AF_INET6, "fd00:1::2", &b->sin6_addr);
	m->cm_len = 24;
	for (int i = 0; i < 24; i++)
		m->cm_data[i] = (uint8_t)(i * 7);
}

TEST_CASE(test_cm_roundtrip, "fi_proto.cm.roundtrip")
{
	struct mfi_cm_msg m, out;
	uint8_t buf[MFI_CM_WIRE_LEN];

	sample_req(&m);
	ASSERT_EQ(mfi_cm_encode(&m, buf), 0, "encode");
	ASSERT_EQ(mfi_cm_decode(buf, &out), 0, "decode");
	ASSERT_EQ(out.qpn, 77, "qpn");
	ASSERT_EQ(out.psn, 0x123456, "psn");
	ASSERT_EQ(out.key, 0x9abcdef0, "key");
	ASSERT_EQ(out.ring_addr, 0x7f0000000000ull, "ring address");
	ASSERT_EQ(out.nslots, 32, "slots");
	ASSERT_EQ(out.cm_len, 24, "cm data length");
	ASSERT_MEM_EQ(out.cm_data, m.cm_data, 24, "cm data");
	ASSERT_MEM_EQ(&((struct sockaddr_in *)&out.addrs[0])->sin_addr,
		      &((struct sockaddr_in *)&m.addrs[0])->sin_addr, 4, "IPv4 plane");
	ASSERT_MEM_EQ(&((struct sockaddr_in6 *)&out.addrs[1])->sin6_addr,
		      &((struct sockaddr_in6 *)&m.addrs[1])->sin6_addr, 16, "IPv6 plane");
}

TEST_CASE(test_cm_rejects, "fi_proto.cm.rejects")
{
	struct mfi_cm_msg m, out;
	uint8_t buf[MFI_CM_WIRE_LEN];

	sample_req(&m);
	mfi_cm_encode(&m, buf);
	buf[0] ^= 1;
	ASSERT_EQ(mfi_cm_decode(buf, &out), -EPROTO, "bad magic");
	mfi_cm_encode(&m, buf);
	buf[5] = 9;
	ASSERT_EQ(mfi_cm_decode(buf, &out), -EPROTO, "other version");
	mfi_cm_encode(&m, buf);
	buf[7] = MFI_CM_MAX_ADDRS + 1;
	ASSERT_EQ(mfi_cm_decode(buf, &out), -EPROTO, "too many addresses");
	mfi_cm_encode(&m, buf);
	buf[44] = 0x7f;
	ASSERT_EQ(mfi_cm_decode(buf, &out), -EPROTO, "cm data too long");
	mfi_cm_encode(&m, buf);
	memset(buf + 40, 0xff, 4);
	ASSERT_EQ(mfi_cm_decode(buf, &out), -EPROTO, "absurd slot count");
	mfi_cm_encode(&m, buf);
	memset(buf + 16, 0, 4);
	ASSERT_EQ(mfi_cm_decode(buf, &out), -EPROTO, "REQ without a key");
	m.nslots = 0;
	ASSERT_EQ(mfi_cm_encode(&m, buf), -EINVAL, "encode refuses 0 slots");
	/* A REJECT carries no connection: its empty fields are fine. */
	memset(&m, 0, sizeof(m));
	m.type = MFI_CM_REJECT;
	m.cm_len = 3;
	memcpy(m.cm_data, "no!", 3);
	ASSERT_EQ(mfi_cm_encode(&m, buf), 0, "encode REJECT");
	ASSERT_EQ(mfi_cm_decode(buf, &out), 0, "decode REJECT");
	ASSERT_MEM_EQ(out.cm_data, "no!", 3, "reject data");
}

int main(void)
{
	RUN_REGISTERED_TESTS();
	return TEST_EXIT();
}
