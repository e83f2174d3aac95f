// SPDX-License-Identifier: GPL-2.0
/*
 * RoCEv2 ICRC (bpf/mrc/icrc.h): TC fills the trailer of an ICRC QP's
 * DATA with the CRC a bit-by-bit reference computes (IPv4 and IPv6, even
 * and odd payloads, UDP checksum still valid, also when no EV is usable)
 * and leaves it alone on other QPs; XDP steers DATA with a good ICRC (whatever the routers did to TTL,
 * ECN, flow label), drops a wrong or missing one before any state change,
 * and asks for none on other QPs.
 */
#include "mrc_xdp_test.h"
#include "icrc_ref.h"

/* DATA with `payload` bytes and 4 zero trailer bytes (libmrc's room). */
static size_t data_with_trailer(__u8 *buf, const struct hdrs *h,
				struct data_spec d)
{
	__u8 m[PKT_MAX];
	size_t mlen = build_data(m, &d);

	memset(m + mlen, 0, MRC_ICRC_LEN);
	return build_udp(h, m, mlen + MRC_ICRC_LEN, buf);
}

static size_t tc_icrc_frame(__u8 *buf, const struct hdrs *h, __u32 payload)
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, TC_PSN, payload);

	d.dqpn = REMOTE_QPN;
	d.key = PEER_KEY;
	d.flags = MRC_BTH_F_TS;
	return data_with_trailer(buf, h, d);
}

static void check_tc_fills(struct hdrs h, __u32 payload, __u8 format)
{
	static const __u32 ev[] = { 0x12345 };
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_tc(format, ev, NULL, 1);
	set_icrc_flag(1);
	len = tc_icrc_frame(pkt, &h, payload);
	run_tc(pkt, len, &r);
	ASSERT_EQ(r.ret, TC_ACT_OK, "TC verdict");
	ASSERT_EQ(r.out_len, len, "length kept");
	ASSERT_EQ(get16(r.out + l4_off(r.out)), 0x2345, "EV stamped");
	ASSERT_EQ(icrc_of_trailer(r.out), icrc_ref(r.out), "ICRC = reference");
	ASSERT_TRUE(icrc_of_trailer(r.out) != 0, "trailer written");
	ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid with the trailer");
	expect_drops(&no_drops);
}

TEST_CASE(test_icrc_tc_ipv4_even, "mrc.icrc_tc_ipv4_even")
{
	check_tc_fills(tx4(), 300, MRC_EVF_UDP);
}

TEST_CASE(test_icrc_tc_ipv4_odd, "mrc.icrc_tc_ipv4_odd")
{
	check_tc_fills(tx4(), 301, MRC_EVF_UDP);
}

/* STEV: the flow label changes too, which the ICRC does not cover. */
TEST_CASE(test_icrc_tc_ipv6_stev_long, "mrc.icrc_tc_ipv6_stev_long")
{
	check_tc_fills(tx6(), 1001, MRC_EVF_STEV);
}

/* No EV usable: the packet keeps the socket's port, and gets its ICRC. */
TEST_CASE(test_icrc_tc_unsprayed_filled, "mrc.icrc_tc_unsprayed_filled")
{
	static const __u32 ev[] = { 0x5555 };
	static const __u16 state[] = { MRC_EV_ASSUMED_BAD };
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_tc(MRC_EVF_UDP, ev, state, 1);
	set_icrc_flag(1);
	len = tc_icrc_frame(pkt, &h, 300);
	run_tc(pkt, len, &r);
	ASSERT_EQ(r.ret, TC_ACT_OK, "TC verdict");
	ASSERT_EQ(get16(r.out + l4_off(r.out)), get16(pkt + l4_off(pkt)),
		  "source port kept (nothing sprayed)");
	ASSERT_EQ(icrc_of_trailer(r.out), icrc_ref(r.out), "ICRC = reference");
	ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid with the trailer");
	expect_drops(&no_drops);
}

TEST_CASE(test_icrc_tc_off_untouched, "mrc.icrc_tc_off_untouched")
{
	static const __u32 ev[] = { 0x4444 };
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_tc(MRC_EVF_UDP, ev, NULL, 1);
	len = tc_icrc_frame(pkt, &h, 300);
	run_tc(pkt, len, &r);
	ASSERT_EQ(r.ret, TC_ACT_OK, "TC verdict");
	ASSERT_EQ(icrc_of_trailer(r.out), 0, "no ICRC without the flag");
}

/* ---- XDP --------------------------------------------------------------- */

static size_t rx_icrc_frame(__u8 *buf, const struct hdrs *h, __u32 payload)
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, payload);
	size_t len = data_with_trailer(buf, h, d);

	icrc_put_trailer(buf, icrc_ref(buf));
	udp_csum_fill(buf);
	return len;
}

static void expect_accepted(struct hdrs h, __u32 payload)
{
	struct mrc_qp_stats want = { .rx_data = 1, .rx_data_bytes = 0 };
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(2);
	set_icrc_flag(1);
	len = rx_icrc_frame(pkt, &h, payload);
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	/* The payload ends before the trailer. */
	want.rx_data_bytes = len - l4_off(pkt) - UDP_LEN - MRC_ICRC_LEN;
	expect_qp_stats(&want);
	expect_drops(&no_drops);
}

TEST_CASE(test_icrc_xdp_good_ipv4, "mrc.icrc_xdp_good_ipv4")
{
	expect_accepted(rx4(), 257);
}

TEST_CASE(test_icrc_xdp_good_ipv6, "mrc.icrc_xdp_good_ipv6")
{
	expect_accepted(rx6(), 1400);
}

/* Routers change TTL, ECN and the IPv4 checksum: the ICRC does not care. */
TEST_CASE(test_icrc_xdp_variant_fields, "mrc.icrc_xdp_variant_fields")
{
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	set_icrc_flag(1);
	len = rx_icrc_frame(pkt, &h, 300);
	pkt[ETH_LEN + 8] -= 3;		/* TTL */
	pkt[ETH_LEN + 1] |= 0x03;	/* ECN CE */
	ipv4_csum_fill(pkt);
	run_xdp(pkt, len, &r);
	ASSERT_EQ(r.ret, XDP_PASS, "variant fields changed: still passed");
	expect_drops(&no_drops);
}

static void expect_icrc_drop(const __u8 *pkt, size_t len)
{
	struct mrc_drop_stats want = { .bad_icrc = 1 };
	struct mrc_qp_stats qs = { .rx_bad = 1 };
	struct mrc_rx_state before, after;
	struct run r;

	get_rx(&before);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
	expect_qp_stats(&qs);
	get_rx(&after);
	ASSERT_TRUE(memcmp(&before, &after, sizeof(before)) == 0,
		    "receive state unchanged");
	ASSERT_EQ(drain_events(), 0, "no events");
}

TEST_CASE(test_icrc_xdp_wrong, "mrc.icrc_xdp_wrong")
{
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;

	setup_qp(1);
	set_icrc_flag(1);
	len = rx_icrc_frame(pkt, &h, 300);
	pkt[len - 100] ^= 0x01;		/* a payload bit flipped on the way */
	udp_csum_fill(pkt);
	expect_icrc_drop(pkt, len);
}

/* The source port (the EV) is covered: a changed one is caught. */
TEST_CASE(test_icrc_xdp_wrong_sport, "mrc.icrc_xdp_wrong_sport")
{
	struct hdrs h = rx6();
	__u8 pkt[PKT_MAX];
	size_t len;

	setup_qp(2);
	set_icrc_flag(1);
	len = rx_icrc_frame(pkt, &h, 300);
	pkt[l4_off(pkt) + 1] ^= 0x10;
	udp_csum_fill(pkt);
	expect_icrc_drop(pkt, len);
}

TEST_CASE(test_icrc_xdp_missing, "mrc.icrc_xdp_missing")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 300);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;

	setup_qp(1);
	set_icrc_flag(1);
	len = data_frame(pkt, &h, &d);
	expect_icrc_drop(pkt, len);
}

/* Shorter than headers + trailer, longer than a trimmed header. */
TEST_CASE(test_icrc_xdp_short, "mrc.icrc_xdp_short")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 2);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;

	setup_qp(1);
	set_icrc_flag(1);
	len = data_frame(pkt, &h, &d);
	expect_icrc_drop(pkt, len);
}

TEST_CASE(test_icrc_xdp_off_not_required, "mrc.icrc_xdp_off_not_required")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 300);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	len = data_frame(pkt, &h, &d);
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	expect_drops(&no_drops);
}
