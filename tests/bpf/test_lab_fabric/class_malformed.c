// SPDX-License-Identifier: GPL-2.0
/*
 * Traffic classes (priority for control, data class for the rest) and
 * what the program does not understand: malformed, truncated or foreign
 * packets are forwarded untouched.
 */
#include <string.h>

#include "lab_fabric_test.h"

/* ====================================================================== */
/* Tests: traffic class                                                   */
/* ====================================================================== */

static void expect_class(const struct port *p, const struct pkt_spec *s, __u32 prio)
{
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(s, pkt);
	struct run r;

	int before = test_state.failed;

	run_pkt(p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	ASSERT_EQ(r.ctx.priority, prio, "skb->priority");
	if (test_state.failed != before)
		fprintf(stderr, "  (opcode 0x%02x, dport %u)\n", s->opcode, s->dport);
}

TEST_CASE(test_class_priority, "lab.class_priority")
{
	struct lab_link_cfg cfg = { .rate_bps = 100000000, .queue_limit = 1000000 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	static const __u8 control[] = { MRC_OP_ACK, MRC_OP_SACK, MRC_OP_NACK,
					MRC_OP_PROBE, MRC_OP_EP_REQUEST };
	static const __u8 data[] = { MRC_OP_WRITE_FIRST, MRC_OP_WRITE_MIDDLE,
				     MRC_OP_WRITE_ONLY_IMM };
	struct pkt_spec s;
	size_t i;

	for (i = 0; i < sizeof(control); i++) {
		s = mrc_spec(0, control[i], 0, 16);
		expect_class(&p, &s, PRIO_CLASS);
	}
	for (i = 0; i < sizeof(data); i++) {
		s = mrc_spec(0, data[i], 0, 512);
		expect_class(&p, &s, DATA_CLASS);
	}
	/* MRC-looking SACK on another port is just data. */
	s = mrc_spec(1, MRC_OP_SACK, 0, 16);
	s.dport = 9999;
	expect_class(&p, &s, DATA_CLASS);
}

/* ====================================================================== */
/* Tests: what the program does not understand is forwarded untouched     */
/* ====================================================================== */

/* A port that would trim and mark anything it recognised. */
static struct port malformed_port(void)
{
	struct lab_link_cfg cfg = { .rate_bps = SLOW_RATE, .trim_thresh = 1,
				    .queue_limit = 1000000 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);

	seed_backlog(&p, 3000);
	return p;
}

static void expect_passes_untouched(const __u8 *pkt, size_t len)
{
	struct port p = malformed_port();
	struct lab_port_stats want = { .packets = 1, .bytes = len };
	struct run r;

	run_pkt(&p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	expect_stats(&p, &want);
}

/*
 * Frames test_run itself may refuse with -EINVAL before the program runs:
 * under ETH_HLEN, and (since the kernel's test_run checks the IP header it
 * reads the addresses from) IPv4/IPv6 frames whose IP header is cut. A
 * clean refusal is fine; a kernel that runs them must see them forwarded.
 */
static void expect_passes_or_refused(const __u8 *pkt, size_t len)
{
	struct port p = malformed_port();
	struct lab_port_stats none = {}, want = { .packets = 1, .bytes = len };
	struct run r;

	run_pkt(&p, pkt, len, &r);
	if (r.err) {
		fprintf(stderr, "  %zu-byte frame refused by test_run (expected)\n", len);
		ASSERT_EQ(r.err, -EINVAL, "refused cleanly");
		expect_stats(&p, &none);
		return;
	}
	expect_forwarded_unchanged(&r, pkt, len);
	expect_stats(&p, &want);
}

TEST_CASE(test_malformed_short_eth, "lab.malformed_short_eth")
{
	static const __u8 pkt[10] = { 0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0 };

	expect_passes_or_refused(pkt, sizeof(pkt));
}

TEST_CASE(test_malformed_ipv4_options, "lab.malformed_ipv4_options")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 400);
	__u8 pkt[PKT_MAX], opt[PKT_MAX];
	size_t len = build_pkt(&s, pkt);

	/* Same datagram behind a 24-byte header (one NOP-padded option). */
	memcpy(opt, pkt, ETH_LEN + IP4_LEN);
	memset(opt + ETH_LEN + IP4_LEN, 1, 4);		/* 4 x NOP */
	memcpy(opt + ETH_LEN + IP4_LEN + 4, pkt + ETH_LEN + IP4_LEN,
	       len - ETH_LEN - IP4_LEN);
	opt[ETH_LEN] = 0x46;
	put16(opt + ETH_LEN + 2, (__u16)(len + 4 - ETH_LEN));
	ipv4_csum_fill(opt);
	expect_passes_untouched(opt, len + 4);
}

TEST_CASE(test_malformed_truncated_udp, "lab.malformed_truncated_udp")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 400);
	__u8 pkt[PKT_MAX];

	build_pkt(&s, pkt);
	/* IP says UDP (and 400+ bytes) but the frame ends 4 bytes into UDP. */
	expect_passes_untouched(pkt, ETH_LEN + IP4_LEN + 4);
	/* ... or right after the IPv6 header. */
	s.ipv6 = 1;
	build_pkt(&s, pkt);
	expect_passes_untouched(pkt, ETH_LEN + IP6_LEN);
}

TEST_CASE(test_malformed_truncated_ip, "lab.malformed_truncated_ip")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 400);
	__u8 pkt[PKT_MAX];

	build_pkt(&s, pkt);
	expect_passes_or_refused(pkt, ETH_LEN + 12);
	s.ipv6 = 1;
	build_pkt(&s, pkt);
	expect_passes_or_refused(pkt, ETH_LEN + 30);
}

TEST_CASE(test_malformed_truncated_mrc, "lab.malformed_truncated_mrc")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, MRC_BTH_F_TS, 400);
	__u8 pkt[PKT_MAX];
	size_t l4 = ETH_LEN + IP4_LEN;

	build_pkt(&s, pkt);
	/* Half a BTH, then a BTH whose RETH is cut: nothing to trim. */
	expect_passes_untouched(pkt, l4 + UDP_LEN + 6);
	expect_passes_untouched(pkt, l4 + UDP_LEN + 24);
}

TEST_CASE(test_malformed_fragment, "lab.malformed_fragment")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 1000);
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(&s, pkt);

	/* First fragment (MF): its "UDP header" is not trusted. */
	put16(pkt + ETH_LEN + 6, 0x2000);
	ipv4_csum_fill(pkt);
	expect_passes_untouched(pkt, len);
}

TEST_CASE(test_malformed_arp, "lab.malformed_arp")
{
	__u8 pkt[42];
	size_t n = lf_build_eth(pkt, 0x0806);

	memset(pkt + n, 0, sizeof(pkt) - n);
	put16(pkt + n, 1);		/* Ethernet */
	put16(pkt + n + 2, 0x0800);	/* IPv4 */
	pkt[n + 4] = 6;
	pkt[n + 5] = 4;
	put16(pkt + n + 6, 1);		/* request */
	expect_passes_untouched(pkt, sizeof(pkt));
}
