// SPDX-License-Identifier: GPL-2.0
/*
 * SRv6 EVs (bpf/mrc/srv6.h, docs/WIRE.md section 13): TC puts DATA and
 * acknowledgements of an MRC_EVF_SRV6 QP in the envelope (outer IPv6 +
 * SRH with [destination, carrier]); XDP takes it off and handles the
 * inner packet exactly as the same packet without one, and drops (counted)
 * an MRC packet in a broken envelope. The expected envelopes are written
 * here byte by byte from the wire description, not with the BPF code.
 */
#include "mrc_xdp_test.h"
#include "srv6_test.h"
#include "icrc_ref.h"

/* fd00:5::/32, the lab's locator block, as the QP keeps it. */
#define BLOCK_BE	htonl(0xfd000005)

const __u8 carrier_1001[16] = { 0xfd, 0x00, 0x00, 0x05, 0x10, 0x01 };

/* Ethernet + the inner packet of an enveloped frame, for udp_csum_ok(). */
void srv6_inner(__u8 *out, const __u8 *wrapped, size_t wrapped_len)
{
	memcpy(out, wrapped, ETH_LEN);
	memcpy(out + ETH_LEN, wrapped + ETH_LEN + ENV_LEN,
	       wrapped_len - ETH_LEN - ENV_LEN);
}

/*
 * The envelope TC (or XDP for an answer) put on, as it leaves: outer
 * source = inner source, destination = the carrier, Segments Left 1,
 * segment 0 the inner destination, segment 1 the carrier; the outer first
 * word and hop limit those of the inner header.
 */
void expect_envelope(const __u8 *out, size_t inner_frame_len, const __u8 carrier[16])
{
	const __u8 *o = out + ETH_LEN, *srh = o + IP6_LEN, *in = o + ENV_LEN;
	static const __u8 srh_fixed[8] = { 41, 4, 4, 1, 1, 0, 0, 0 };

	ASSERT_EQ(get16(out + 12), 0x86DD, "ethertype IPv6");
	ASSERT_EQ(get32(o), get32(in), "outer word 0 = inner word 0");
	ASSERT_EQ(get16(o + 4), inner_frame_len - ETH_LEN + SRH_LEN,
		  "outer payload length = inner packet + SRH");
	ASSERT_EQ(o[6], 43, "outer next header: routing");
	ASSERT_EQ(o[7], in[7], "outer hop limit = inner");
	ASSERT_MEM_EQ(o + 8, in + 8, 16, "outer source = inner source");
	ASSERT_MEM_EQ(o + 24, carrier, 16, "outer destination = the carrier");
	ASSERT_MEM_EQ(srh, srh_fixed, 8, "SRH: IPv6 inside, 2 segments, type 4, SL 1");
	ASSERT_MEM_EQ(srh + 8, in + 24, 16, "segment 0 = inner destination");
	ASSERT_MEM_EQ(srh + 24, carrier, 16, "segment 1 = the carrier");
}

static void set_block(__u32 block_be)
{
	struct mrc_qp_info q;

	get_qp(&q);
	q.srv6_block = block_be;
	put_qp(&q);
}

/*
 * DATA of an SRv6 QP: the inner packet is the one a UDP-format QP sends
 * (sport = EV low 16 bits, flow label 0, checksum valid), inside an
 * envelope whose carrier is fd00:5:<EV high 16 bits>::. Both EVs of the
 * rotation, each with its own uSID.
 */
TEST_CASE(test_srv6_tc_envelope, "mrc.srv6_tc_envelope")
{
	static const __u32 ev[] = { 0x1001C123, 0x1002C124 };
	__u8 pkt[PKT_MAX], exp[PKT_MAX], inner[PKT_MAX], carrier[16];
	struct hdrs h = tx6();
	size_t len, l4, i;
	struct run r;
	int seen = 0;

	setup_tc(MRC_EVF_SRV6, ev, NULL, 2);
	set_block(BLOCK_BE);
	len = tc_data_frame(pkt, &h);
	l4 = l4_off(pkt);
	for (i = 0; i < 2; i++) {
		__u16 sport;
		int k;

		run_tc(pkt, len, &r);
		if (!ASSERT_EQ(r.err, 0, "test_run") ||
		    !ASSERT_EQ(r.ret, TC_ACT_OK, "verdict TC_ACT_OK") ||
		    !ASSERT_EQ(r.out_len, len + ENV_LEN, "80 bytes of envelope"))
			return;
		srv6_inner(inner, r.out, r.out_len);
		sport = get16(inner + l4);
		k = sport == 0xC123 ? 0 : sport == 0xC124 ? 1 : -1;
		if (!ASSERT_TRUE(k >= 0, "inner sport is an EV's low 16 bits"))
			return;
		seen |= 1 << k;
		memcpy(carrier, carrier_1001, 16);
		carrier[5] = (__u8)(ev[k] >> 16);
		expect_envelope(r.out, len, carrier);
		ASSERT_TRUE(udp_csum_ok(inner), "inner UDP checksum valid");
		memcpy(exp, pkt, len);
		put16(exp + l4, sport);
		memcpy(exp + l4 + 6, inner + l4 + 6, 2);
		put32(exp + ETH_LEN, 0x60000000);	/* flow label 0: UDP-style */
		ASSERT_MEM_EQ(inner, exp, len, "inner = the stamped packet");
	}
	ASSERT_EQ(seen, 3, "both EVs (both uSIDs) used");
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 2, "qp_stats.tx_stamped");
	expect_drops(&no_drops);
}

/*
 * An SRv6 QP's packet that cannot take its EV's path is not sent: IPv4
 * (no SRv6 over IPv4), no locator block. Counted as malformed.
 */
TEST_CASE(test_srv6_tc_refused, "mrc.srv6_tc_refused")
{
	static const __u32 ev[] = { 0x1001C123 };
	struct mrc_drop_stats want = {};
	__u8 pkt[PKT_MAX];
	struct hdrs h;
	size_t len;
	struct run r;

	setup_tc(MRC_EVF_SRV6, ev, NULL, 1);
	set_block(BLOCK_BE);
	h = tx4();
	len = tc_data_frame(pkt, &h);
	run_tc(pkt, len, &r);
	ASSERT_EQ(r.ret, TC_ACT_SHOT, "IPv4: TC_ACT_SHOT");
	want.malformed = 1;
	expect_drops(&want);

	set_block(0);
	h = tx6();
	len = tc_data_frame(pkt, &h);
	run_tc(pkt, len, &r);
	ASSERT_EQ(r.ret, TC_ACT_SHOT, "no block: TC_ACT_SHOT");
	want.malformed = 2;
	expect_drops(&want);
}

/*
 * XDP: DATA in an envelope comes out exactly as the same DATA without
 * one (steered, same bytes, same counters); the learned reverse EV
 * carries the uSID above the port. An outer CE mark reaches an
 * ECN-capable inner packet.
 */
TEST_CASE(test_srv6_xdp_take_out, "mrc.srv6_xdp_take_out")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 256);
	__u8 pkt[PKT_MAX], wrapped[PKT_MAX], want_out[PKT_MAX];
	struct hdrs h = rx6();
	struct mrc_rev_evs rev;
	size_t len, wlen;
	struct run r;
	__u32 want_len;
	int ce;

	for (ce = 0; ce < 2; ce++) {
		len = data_frame(pkt, &h, &d);
		if (ce)		/* what arrives at the end of the path: CE */
			pkt[ETH_LEN + 1] |= 0x30;
		setup_qp(2);
		set_plane_of(lo_ifindex, 1);
		run_xdp(pkt, len, &r);
		expect_steered(&r, pkt, len);
		memcpy(want_out, r.out, r.out_len);
		want_len = r.out_len;

		if (ce) {	/* the inner one was only ECT(0) */
			pkt[ETH_LEN + 1] = (__u8)((pkt[ETH_LEN + 1] & ~0x30) | 0x20);
			wlen = srv6_wrap(wrapped, pkt, len, carrier_1001);
			wrapped[ETH_LEN + 1] |= 0x30;	/* the outer got the mark */
		} else {
			wlen = srv6_wrap(wrapped, pkt, len, carrier_1001);
		}
		setup_qp(2);
		set_plane_of(lo_ifindex, 1);
		run_xdp(wrapped, wlen, &r);
		if (!ASSERT_EQ(r.ret, XDP_PASS, "verdict XDP_PASS") ||
		    !ASSERT_EQ(r.out_len, want_len, "envelope taken off"))
			return;
		ASSERT_MEM_EQ(r.out, want_out, want_len,
			      ce ? "as the same CE packet without envelope"
				 : "as the same packet without envelope");
		expect_drops(&no_drops);
		ASSERT_EQ(read_qp_stats(SLOT).rx_data, 1, "qp_stats.rx_data");
		get_rev(&rev);
		ASSERT_EQ(rev.next[0], 1, "one reverse EV learned on plane 1");
		ASSERT_EQ(rev.ev[0][0], 0x1001u << 16 | PEER_SPORT,
			  "reverse EV = uSID << 16 | sport");
	}
}

/* One way to break an enveloped DATA frame. */
struct srv6_mutation {
	const char *what;
	size_t off;		/* byte to change, from the frame's start */
	__u8 value;
	size_t cut;		/* or: frame cut to this length (0 = not cut) */
};

#define OUTER(o)	(ETH_LEN + (o))
#define SRH(o)		(ETH_LEN + IP6_LEN + (o))

/*
 * An MRC packet in a broken envelope is dropped and counted (malformed)
 * before anything of it is looked at: segments left not 0, other segment
 * counts, segment 0 not the destination, a carrier with a second uSID,
 * an outer source that is not the inner one, lengths that disagree, cut
 * short in the SRH or before the inner UDP header.
 */
TEST_CASE(test_srv6_xdp_malformed, "mrc.srv6_xdp_malformed")
{
	static const struct srv6_mutation muts[] = {
		{ "segments left 1", SRH(3), 1, 0 },
		{ "last entry 0", SRH(4), 0, 0 },
		{ "segment 0 not the destination", SRH(8 + 15), 0x77, 0 },
		{ "carrier with a second uSID", SRH(24 + 7), 0x01, 0 },
		{ "carrier with no uSID", SRH(24 + 5), 0x00, 0 },
		{ "outer source not the inner one", OUTER(8 + 15), 0x99, 0 },
		{ "outer payload length too long", OUTER(5), 0xff, 0 },
		{ "cut in the SRH", 0, 0, ETH_LEN + IP6_LEN + 6 },
		{ "cut before the inner UDP header", 0, 0, ETH_LEN + ENV_LEN + 20 },
	};
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 256);
	__u8 pkt[PKT_MAX], wrapped[PKT_MAX];
	struct mrc_drop_stats want = {};
	struct hdrs h = rx6();
	size_t len, wlen, i;
	struct run r;

	len = data_frame(pkt, &h, &d);
	setup_qp(2);
	for (i = 0; i < sizeof(muts) / sizeof(muts[0]); i++) {
		int before = test_state.failed;

		wlen = srv6_wrap(wrapped, pkt, len, carrier_1001);
		if (muts[i].cut)
			wlen = muts[i].cut;
		else
			wrapped[muts[i].off] = muts[i].value;
		/* A uSID is two bytes: "no uSID" clears both. */
		if (muts[i].off == SRH(24 + 5))
			wrapped[SRH(24 + 4)] = 0;
		run_xdp(wrapped, wlen, &r);
		ASSERT_EQ(r.ret, XDP_DROP, "verdict XDP_DROP");
		want.malformed++;
		expect_drops(&want);
		if (test_state.failed != before)
			fprintf(stderr, "  (case: %s)\n", muts[i].what);
	}
	ASSERT_EQ(read_qp_stats(SLOT).rx_data, 0, "nothing of them reached the QP");
}

/*
 * Not ours, left alone: a routing header of another type, an SRv6
 * envelope around another UDP port's packet.
 */
TEST_CASE(test_srv6_xdp_not_ours, "mrc.srv6_xdp_not_ours")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 256);
	__u8 pkt[PKT_MAX], wrapped[PKT_MAX];
	struct hdrs h = rx6();
	size_t len, wlen;
	struct run r;

	setup_qp(2);
	len = data_frame(pkt, &h, &d);
	wlen = srv6_wrap(wrapped, pkt, len, carrier_1001);
	wrapped[SRH(2)] = 3;	/* RPL source route */
	run_xdp(wrapped, wlen, &r);
	expect_untouched(&r, wrapped, wlen, XDP_PASS);

	h.dport = 53;
	len = data_frame(pkt, &h, &d);
	wlen = srv6_wrap(wrapped, pkt, len, carrier_1001);
	run_xdp(wrapped, wlen, &r);
	expect_untouched(&r, wrapped, wlen, XDP_PASS);
	expect_drops(&no_drops);
}

/*
 * Acknowledgements of an SRv6 QP go back over a learned EV in an envelope
 * of the uSID that EV came through; an EV learned without one (uSID 0),
 * or a QP without a block, leaves without an envelope.
 */
TEST_CASE(test_srv6_tc_ack, "mrc.srv6_tc_ack")
{
	static const __u32 ev1 = 0x1001C123;
	__u8 pkt[PKT_MAX], inner[PKT_MAX], carrier[16];
	struct sack_spec s = sspec(1009, 0);
	struct mrc_rev_evs rev = {};
	struct hdrs h = tx6();
	size_t len;
	struct run r;

	setup_tc(MRC_EVF_SRV6, &ev1, NULL, 1);
	set_block(BLOCK_BE);
	rev.ev[0][0] = 0x1002u << 16 | 0x3000;
	rev.next[0] = 1;
	put_rev(&rev);
	s.dqpn = REMOTE_QPN;
	s.key = PEER_KEY;
	len = sack_frame(pkt, &h, &s);
	run_tc(pkt, len, &r);
	if (!ASSERT_EQ(r.ret, TC_ACT_OK, "verdict TC_ACT_OK") ||
	    !ASSERT_EQ(r.out_len, len + ENV_LEN, "SACK in an envelope"))
		return;
	memcpy(carrier, carrier_1001, 16);
	carrier[5] = 0x02;
	expect_envelope(r.out, len, carrier);
	srv6_inner(inner, r.out, r.out_len);
	ASSERT_EQ(get16(inner + l4_off(pkt)), 0x3000, "inner sport = the EV's port");
	ASSERT_TRUE(udp_csum_ok(inner), "inner UDP checksum valid");

	rev.ev[0][0] = 0x3000;
	put_rev(&rev);
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, 0x3000, 0);

	/* No block to build the carrier: the SACK still goes, without. */
	rev.ev[0][0] = 0x1002u << 16 | 0x3000;
	put_rev(&rev);
	set_block(0);
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, 0x3000, 0);
}

/*
 * An ICRC QP's SACK on an SRv6 EV: TC writes the ICRC of the inner
 * packet, then puts the envelope on; the peer's XDP takes the envelope
 * off and checks the ICRC of what is left.
 */
TEST_CASE(test_srv6_tc_ack_icrc, "mrc.srv6_tc_ack_icrc")
{
	static const __u32 ev1 = 0x1001C123;
	__u8 pkt[PKT_MAX], inner[PKT_MAX], m[128];
	struct sack_spec s = sspec(1009, 0);
	struct mrc_rev_evs rev = {};
	struct hdrs h = tx6();
	size_t len, mlen;
	struct run r;

	setup_tc(MRC_EVF_SRV6, &ev1, NULL, 1);
	set_block(BLOCK_BE);
	set_icrc_flag(1);
	rev.ev[0][0] = 0x1002u << 16 | 0x3000;
	rev.next[0] = 1;
	put_rev(&rev);
	s.dqpn = REMOTE_QPN;
	s.key = PEER_KEY;
	mlen = build_sack(m, &s);
	memset(m + mlen, 0, MRC_ICRC_LEN);	/* libmrc's room for the ICRC */
	len = build_udp(&h, m, mlen + MRC_ICRC_LEN, pkt);
	run_tc(pkt, len, &r);
	if (!ASSERT_EQ(r.ret, TC_ACT_OK, "verdict TC_ACT_OK") ||
	    !ASSERT_EQ(r.out_len, len + ENV_LEN, "SACK in an envelope"))
		return;
	srv6_inner(inner, r.out, r.out_len);
	ASSERT_TRUE(icrc_of_trailer(inner) != 0, "trailer written");
	ASSERT_EQ(icrc_of_trailer(inner), icrc_ref(inner), "inner ICRC = reference");
	ASSERT_TRUE(udp_csum_ok(inner), "inner UDP checksum valid");
}
