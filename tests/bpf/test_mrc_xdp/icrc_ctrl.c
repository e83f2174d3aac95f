// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 ICRC on an ICRC QP's control packets (bpf/mrc/icrc.h): XDP acts
 * on a SACK, a NACK or a PROBE only with its good ICRC behind it (a
 * missing or wrong one is a counted drop that changes nothing), the NACK
 * XDP builds for a trimmed header ends in its ICRC, and TC fills the
 * ICRC of the SACKs, NACKs and PROBEs the QP sends, after spraying
 * moved them. Each against the bit-by-bit reference (tests/include/icrc_ref.h).
 */
#include "mrc_xdp_test.h"
#include "icrc_ref.h"

/* Headers `m` of `mlen` bytes, 4 trailer bytes behind: the good ICRC or 0s. */
static size_t with_trailer(__u8 *buf, const struct hdrs *h, const __u8 *m,
			   size_t mlen, int good)
{
	__u8 body[PKT_MAX];
	size_t len;

	memcpy(body, m, mlen);
	memset(body + mlen, 0, MRC_ICRC_LEN);
	len = build_udp(h, body, mlen + MRC_ICRC_LEN, buf);
	if (good) {
		icrc_put_trailer(buf, icrc_ref(buf));
		udp_csum_fill(buf);
	}
	return len;
}

static size_t sack_icrc_frame(__u8 *buf, const struct sack_spec *s, int good)
{
	struct hdrs h = rx4();
	__u8 m[128];

	return with_trailer(buf, &h, m, build_sack(m, s), good);
}

/* A NACK to the fixture QP, built as nack_frame() does, with a trailer. */
static size_t nack_icrc_frame(__u8 *buf, __u32 psn, __u32 cack, int good)
{
	struct hdrs h = rx4();
	__u8 full[PKT_MAX];
	size_t len = nack_frame(full, &h, QPN, psn, cack, MRC_NACK_TRIMMED);
	size_t off = l4_off(full) + UDP_LEN;

	return with_trailer(buf, &h, full + off, len - off, good);
}

/* ---- SACK and NACK in (XDP) ---------------------------------------------- */

TEST_CASE(test_icrc_sack_good, "mrc.icrc_sack_good")
{
	struct sack_spec s = sspec(1009, 0);
	struct mrc_qp_stats want = { .rx_sack = 1, .completions = 2 };
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	set_icrc_flag(1);
	len = sack_icrc_frame(pkt, &s, 1);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);		/* consumed */
	expect_drops(&no_drops);
	expect_qp_stats(&want);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "acted on: snd_una after cack 1009");
	ASSERT_EQ(drain_events(), 2, "two completions");
}

/* A SACK without its ICRC, or with a wrong one: nothing moves. */
static void expect_sack_refused(const __u8 *pkt, size_t len)
{
	struct mrc_drop_stats want = { .bad_icrc = 1 };
	struct mrc_tx_state before;
	struct run r;

	get_tx(&before);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
	get_tx(&tx);
	ASSERT_TRUE(memcmp(&before, &tx, sizeof(tx)) == 0, "send state unchanged");
	ASSERT_EQ(drain_events(), 0, "no events");
}

TEST_CASE(test_icrc_sack_missing, "mrc.icrc_sack_missing")
{
	struct sack_spec s = sspec(1009, 0);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;

	setup_qp(1);
	set_icrc_flag(1);
	len = sack_frame(pkt, &h, &s);		/* no trailer at all */
	expect_sack_refused(pkt, len);
}

TEST_CASE(test_icrc_sack_wrong, "mrc.icrc_sack_wrong")
{
	struct sack_spec s = sspec(1009, 0);
	__u8 pkt[PKT_MAX];
	size_t len;

	setup_qp(1);
	set_icrc_flag(1);
	len = sack_icrc_frame(pkt, &s, 1);
	/* The cumulative ack changed on the way, checksum made good again. */
	pkt[l4_off(pkt) + UDP_LEN + BTH_LEN + 3] ^= 0x04;
	udp_csum_fill(pkt);
	expect_sack_refused(pkt, len);
}

/* A QP without ICRC takes a SACK with 4 bytes behind it as before. */
TEST_CASE(test_icrc_sack_off_trailer_ignored, "mrc.icrc_sack_off_trailer_ignored")
{
	struct sack_spec s = sspec(1009, 0);
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	len = sack_icrc_frame(pkt, &s, 0);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	expect_drops(&no_drops);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "acted on");
	drain_events();
}

TEST_CASE(test_icrc_nack_good_and_bad, "mrc.icrc_nack_good_and_bad")
{
	struct mrc_drop_stats want = { .bad_icrc = 2 };
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	set_icrc_flag(1);
	put_rec(TX_UNA + 5, UNLOGGED_EV, 1, 0, mono_ns() - 1000000000ull);

	len = nack_icrc_frame(pkt, TX_UNA + 5, TX_UNA - 1, 0);	/* zeros */
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	len = nack_icrc_frame(pkt, TX_UNA + 5, TX_UNA - 1, 1);
	pkt[len - 1] ^= 0x80;					/* wrong */
	udp_csum_fill(pkt);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
	ASSERT_EQ(drain_events(), 0, "refused NACKs report no loss");
	ASSERT_EQ(get_rec(TX_UNA + 5).nacked, 0, "refused NACKs mark nothing");

	len = nack_icrc_frame(pkt, TX_UNA + 5, TX_UNA - 1, 1);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);		/* no new drop */
	ASSERT_EQ(get_rec(TX_UNA + 5).nacked, 1, "the good NACK acted on the send");
	drain_events();
}

/* ---- PROBE in (XDP) ------------------------------------------------------- */

TEST_CASE(test_icrc_probe, "mrc.icrc_probe")
{
	struct mrc_drop_stats want = { .bad_icrc = 1 };
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX], m[BTH_LEN];
	size_t len;
	struct run r;

	setup_qp(1);
	set_icrc_flag(1);
	put_bth(m, MRC_OP_PROBE, QPN, MRC_BTH_F_ACK_REQ, TX_UNA);
	len = build_udp(&h, m, BTH_LEN, pkt);		/* a bare BTH */
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);

	len = with_trailer(pkt, &h, m, BTH_LEN, 1);
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	expect_drops(&want);
}

/* ---- the trim NACK out (XDP_TX) ------------------------------------------ */

static void check_trim_nack_icrc(struct hdrs h)
{
	struct data_spec d = dspec(MRC_OP_WRITE_MIDDLE, RX_CACK + 3, 0);
	const size_t nack_udp = UDP_LEN + BTH_LEN + sizeof(struct mrc_nackh);
	size_t len, l4;
	__u8 pkt[PKT_MAX];
	struct run r;

	setup_qp(h.ipv6 ? 2 : 1);
	set_icrc_flag(1);
	d.flags = MRC_BTH_F_TS | MRC_BTH_F_ACK_REQ;
	len = data_frame(pkt, &h, &d);		/* header only: trimmed */
	run_xdp(pkt, len, &r);
	if (!ASSERT_EQ(r.ret, XDP_TX, "answered with a NACK"))
		return;
	l4 = l4_off(r.out);
	ASSERT_EQ(r.out_len, l4 + nack_udp + MRC_ICRC_LEN, "NACK + ICRC trailer");
	ASSERT_EQ(get16(r.out + l4 + 4), nack_udp + MRC_ICRC_LEN, "UDP length 36");
	ASSERT_EQ(r.out[l4 + UDP_LEN], MRC_OP_NACK, "opcode NACK");
	ASSERT_EQ(icrc_of_trailer(r.out), icrc_ref(r.out), "ICRC = reference");
	ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid, the trailer in it");
	if (!pkt_is_ipv6(r.out)) {
		ASSERT_TRUE(ipv4_csum_ok(r.out), "IPv4 header checksum valid");
		ASSERT_EQ(get16(r.out + ETH_LEN + 2), IP4_LEN + nack_udp + MRC_ICRC_LEN,
			  "IPv4 total length");
	} else {
		ASSERT_EQ(get16(r.out + ETH_LEN + 4), nack_udp + MRC_ICRC_LEN,
			  "IPv6 payload length");
	}
	expect_drops(&no_drops);
}

TEST_CASE(test_icrc_trim_nack_ipv4, "mrc.icrc_trim_nack_ipv4")
{
	check_trim_nack_icrc(rx4());
}

TEST_CASE(test_icrc_trim_nack_ipv6, "mrc.icrc_trim_nack_ipv6")
{
	check_trim_nack_icrc(rx6());
}

/* ---- SACK, NACK and PROBE out (TC) --------------------------------------- */

/*
 * A SACK of the fixture QP to its peer, as libmrc sends it: to the
 * peer's QP with the peer's key, 4 zero bytes behind. The reverse EVs
 * XDP learned let TC spray it: the ICRC must cover the EV it got.
 */
static size_t tc_sack_frame(__u8 *buf, const struct hdrs *h)
{
	struct sack_spec s = sspec(RX_CACK, 0);
	__u8 m[128];

	s.dqpn = REMOTE_QPN;
	s.key = PEER_KEY;
	return with_trailer(buf, h, m, build_sack(m, &s), 0);
}

/* The TC fixture, an ICRC QP, and (when `learned`) one reverse EV on plane 1. */
static void setup_tc_icrc(__u32 learned)
{
	static const __u32 ev = 0x1111;
	struct mrc_rev_evs rev = {};

	setup_tc(MRC_EVF_UDP, &ev, NULL, 1);
	set_icrc_flag(1);
	if (learned) {
		rev.ev[0][0] = learned;
		rev.next[0] = 1;
	}
	put_rev(&rev);
}

TEST_CASE(test_icrc_tc_sack_filled, "mrc.icrc_tc_sack_filled")
{
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_tc_icrc(0x3456);
	len = tc_sack_frame(pkt, &h);
	run_tc(pkt, len, &r);
	ASSERT_EQ(r.ret, TC_ACT_OK, "TC verdict");
	ASSERT_EQ(r.out_len, len, "length kept");
	ASSERT_EQ(get16(r.out + l4_off(r.out)), 0x3456,
		  "sprayed on the learned reverse EV");
	ASSERT_TRUE(icrc_of_trailer(r.out) != 0, "trailer written");
	ASSERT_EQ(icrc_of_trailer(r.out), icrc_ref(r.out), "ICRC = reference");
	ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid with the trailer");
	expect_drops(&no_drops);
}

/* Nothing learned yet: the SACK leaves unsprayed, still with its ICRC. */
TEST_CASE(test_icrc_tc_sack_unsprayed, "mrc.icrc_tc_sack_unsprayed")
{
	struct hdrs h = tx6();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_tc_icrc(0);
	len = tc_sack_frame(pkt, &h);
	run_tc(pkt, len, &r);
	ASSERT_EQ(r.ret, TC_ACT_OK, "TC verdict");
	ASSERT_EQ(icrc_of_trailer(r.out), icrc_ref(r.out), "ICRC = reference");
	ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid with the trailer");
}

TEST_CASE(test_icrc_tc_nack_probe_filled, "mrc.icrc_tc_nack_probe_filled")
{
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX], full[PKT_MAX], m[BTH_LEN];
	size_t len, off;
	struct run r;

	setup_tc_icrc(0x3456);
	len = nack_frame(full, &h, REMOTE_QPN, 77, RX_CACK, MRC_NACK_TRIMMED);
	off = l4_off(full) + UDP_LEN;
	len = with_trailer(pkt, &h, full + off, len - off, 0);
	run_tc(pkt, len, &r);
	ASSERT_EQ(icrc_of_trailer(r.out), icrc_ref(r.out), "NACK: ICRC = reference");
	ASSERT_TRUE(udp_csum_ok(r.out), "NACK: UDP checksum valid");

	put_bth_key(m, MRC_OP_PROBE, PEER_KEY, REMOTE_QPN, MRC_BTH_F_ACK_REQ, 5);
	len = with_trailer(pkt, &h, m, BTH_LEN, 0);
	run_tc(pkt, len, &r);
	ASSERT_EQ(r.ret, TC_ACT_OK, "PROBE: TC verdict");
	ASSERT_EQ(icrc_of_trailer(r.out), icrc_ref(r.out), "PROBE: ICRC = reference");
	ASSERT_TRUE(udp_csum_ok(r.out), "PROBE: UDP checksum valid");
}

/* Not an ICRC QP, or not the QP's own packet (wrong key): left alone. */
TEST_CASE(test_icrc_tc_ctrl_untouched, "mrc.icrc_tc_ctrl_untouched")
{
	struct hdrs h = tx4();
	struct sack_spec s = sspec(RX_CACK, 0);
	__u8 pkt[PKT_MAX], m[128];
	size_t len;
	struct run r;

	setup_tc_icrc(0x3456);
	set_icrc_flag(0);
	len = tc_sack_frame(pkt, &h);
	run_tc(pkt, len, &r);
	ASSERT_EQ(icrc_of_trailer(r.out), 0, "no ICRC without the flag");

	set_icrc_flag(1);
	s.dqpn = REMOTE_QPN;
	s.key = PEER_KEY ^ 1;			/* another process's packet */
	len = with_trailer(pkt, &h, m, build_sack(m, &s), 0);
	run_tc(pkt, len, &r);
	ASSERT_EQ(icrc_of_trailer(r.out), 0, "a stranger's SACK not filled");
}
