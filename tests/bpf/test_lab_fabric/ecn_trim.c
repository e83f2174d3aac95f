// SPDX-License-Identifier: GPL-2.0
/*
 * Congestion signals of a port's queue: ECN marking (CE above ecn_thresh)
 * and packet trimming (MRC data cut to its headers above trim_thresh, DSCP
 * set), on core ports and on the last hop.
 */
#include <string.h>

#include "lab_fabric_test.h"

/* ====================================================================== */
/* Tests: ECN marking                                                     */
/* ====================================================================== */

static const struct lab_link_cfg cfg_ecn = {
	.rate_bps = SLOW_RATE, .ecn_thresh = 2000, .queue_limit = 1000000,
};

/* `r` is `in` with CE set and nothing else changed (checksum fixed). */
static void expect_ce_marked(const struct run *r, const __u8 *in, size_t len)
{
	__u8 exp[PKT_MAX];

	if (!ASSERT_EQ(r->err, 0, "test_run") ||
	    !ASSERT_EQ(r->verdict, TC_ACT_OK, "verdict") ||
	    !ASSERT_EQ(r->out_len, len, "output length"))
		return;
	ASSERT_EQ(pkt_tos(r->out), pkt_tos(in) | 3, "tos with CE");
	if (!pkt_is_ipv6(r->out))
		ASSERT_TRUE(ipv4_csum_ok(r->out), "IPv4 header checksum after CE");
	memcpy(exp, in, len);
	set_tos(exp, pkt_tos(in) | 3);
	ASSERT_MEM_EQ(r->out, exp, len, "CE-marked packet");
}

/* Six 1000-byte frames into an ECN port (hook, port flags): the 4th
 * (backlog 3000) and later are above the 2000-byte threshold and marked
 * if the packet is ECT. */
static void run_ecn_sequence_at(__u32 hook, __u32 flags, int ipv6, __u8 tos,
				int expect_marks)
{
	struct port p = setup_port(hook, flags, &cfg_ecn);
	struct lab_port_stats want = { .packets = 6, .bytes = 6000 };
	__u8 pkt[PKT_MAX];
	size_t len = build_udp_frame(pkt, ipv6, tos, 1000);
	struct run r;
	int i;

	for (i = 0; i < 6; i++) {
		int before = test_state.failed;

		run_pkt(&p, pkt, len, &r);
		if (i >= 3 && expect_marks)
			expect_ce_marked(&r, pkt, len);
		else
			expect_forwarded_unchanged(&r, pkt, len);
		note_packet(before, i);
	}
	want.ecn_marked = expect_marks ? 3 : 0;
	expect_stats(&p, &want);
}

/* A core port (leaf to spine, spine to leaf): egress, no flags. */
static void run_ecn_sequence(int ipv6, __u8 tos, int expect_marks)
{
	run_ecn_sequence_at(LAB_HOOK_EGRESS, 0, ipv6, tos, expect_marks);
}

TEST_CASE(test_ecn_ipv4, "lab.ecn_ipv4")
{
	/* DSCP 10 + ECT(0): the DSCP bits must survive the mark. */
	run_ecn_sequence(0, 0x2A, 1);
}

TEST_CASE(test_ecn_ipv4_ect1, "lab.ecn_ipv4_ect1")
{
	run_ecn_sequence(0, 0x01, 1);
}

TEST_CASE(test_ecn_not_ect, "lab.ecn_not_ect")
{
	run_ecn_sequence(0, 0x28, 0);
	run_ecn_sequence(1, 0x28, 0);
}

/*
 * A packet a port before this one marked (CE already) passes unchanged
 * and is not counted again: ecn_marked counts the marks a port made, so
 * a path's marks add up to the CE marks its receiver sees.
 */
TEST_CASE(test_ecn_already_ce, "lab.ecn_already_ce")
{
	run_ecn_sequence(0, 0x2B, 0);
	run_ecn_sequence(1, 0x03, 0);
}

TEST_CASE(test_ecn_ipv6, "lab.ecn_ipv6")
{
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_ecn);
	__u8 pkt[PKT_MAX];
	size_t len = build_udp_frame(pkt, 1, 0x2A, 1000);
	struct run r;
	int i;

	seed_backlog(&p, 3000);
	for (i = 0; i < 2; i++) {
		run_pkt(&p, pkt, len, &r);
		expect_ce_marked(&r, pkt, len);
		/* Version 6, tclass 0x2B, flow label 0xABCDE: 62 BA BC DE. */
		ASSERT_EQ(r.out[ETH_LEN], 0x62, "IPv6 byte 0");
		ASSERT_EQ(r.out[ETH_LEN + 1], 0xBA, "IPv6 byte 1");
		ASSERT_EQ(get16(r.out + ETH_LEN + 2), 0xBCDE, "IPv6 flow label low");
	}
	ASSERT_EQ(read_stats(&p).ecn_marked, 2, "stats.ecn_marked");
}

/* ====================================================================== */
/* Tests: trimming                                                        */
/* ====================================================================== */

static const struct lab_link_cfg cfg_trim = {
	.rate_bps = SLOW_RATE, .trim_thresh = 2000, .queue_limit = 1000000,
};

static size_t hdr_len(const struct pkt_spec *s)
{
	return ETH_LEN + (s->ipv6 ? IP6_LEN : IP4_LEN) + UDP_LEN +
	       mrc_data_header_len(s->opcode, s->bth_flags);
}

/* Two full packets fill the queue past 2000 bytes; the next three are
 * trimmed to their headers, marked with `dscp`. */
static void run_trim_sequence(const struct pkt_spec *s, __u32 port_flags, __u8 dscp)
{
	struct port p = setup_port(LAB_HOOK_EGRESS, port_flags, &cfg_trim);
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(s, pkt), hlen = hdr_len(s);
	struct lab_port_stats want = {
		.packets = 5, .bytes = 2 * len + 3 * hlen, .trimmed = 3,
	};
	struct run r;
	int i;

	for (i = 0; i < 5; i++) {
		int before = test_state.failed;

		run_pkt(&p, pkt, len, &r);
		if (i < 2) {
			expect_forwarded_unchanged(&r, pkt, len);
			ASSERT_EQ(r.ctx.priority, DATA_CLASS, "data class");
		} else {
			expect_trimmed(&r, pkt, hlen, dscp);
		}
		note_packet(before, i);
	}
	expect_stats(&p, &want);
}

TEST_CASE(test_trim_ipv4, "lab.trim_ipv4")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 1000);

	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
}

TEST_CASE(test_trim_ipv4_lasthop, "lab.trim_ipv4_lasthop")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 1000);

	run_trim_sequence(&s, LAB_PORT_LASTHOP, MRC_DSCP_TRIMMED_LASTHOP);
}

TEST_CASE(test_trim_keeps_ecn, "lab.trim_keeps_ecn")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_FIRST, 0, 1000);

	s.tos = 0x03;	/* already CE */
	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
	s.tos = 0x00;	/* not ECN-capable */
	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
}

TEST_CASE(test_trim_ts_flag, "lab.trim_ts_flag")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE,
				     MRC_BTH_F_TS | MRC_BTH_F_ACK_REQ, 1000);

	ASSERT_EQ(hdr_len(&s), ETH_LEN + IP4_LEN + UDP_LEN + 36, "TS header length");
	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
}

TEST_CASE(test_trim_imm_opcode, "lab.trim_imm_opcode")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_LAST_IMM, 0, 1000);

	ASSERT_EQ(hdr_len(&s), ETH_LEN + IP4_LEN + UDP_LEN + 36, "IMM header length");
	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
	/* Both extensions: 40 bytes of MRC headers. */
	s = mrc_spec(0, MRC_OP_WRITE_ONLY_IMM, MRC_BTH_F_TS, 1000);
	ASSERT_EQ(hdr_len(&s), ETH_LEN + IP4_LEN + UDP_LEN + 40, "TS+IMM header length");
	run_trim_sequence(&s, LAB_PORT_LASTHOP, MRC_DSCP_TRIMMED_LASTHOP);
}

TEST_CASE(test_trim_ipv6, "lab.trim_ipv6")
{
	struct pkt_spec s = mrc_spec(1, MRC_OP_WRITE_MIDDLE, 0, 1000);

	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
	s = mrc_spec(1, MRC_OP_WRITE_LAST_IMM, MRC_BTH_F_TS, 1000);
	run_trim_sequence(&s, LAB_PORT_LASTHOP, MRC_DSCP_TRIMMED_LASTHOP);
}

/*
 * CE marks come from the core only. The last hop (the leaf's port facing
 * the receiving host, LAB_PORT_LASTHOP) never marks, IPv4 or IPv6, even
 * far above the threshold: congestion there is incast, which no other
 * path of the sender avoids. The host's uplink (leaf ingress, REHASH) is
 * not the last hop and marks like the core.
 */
TEST_CASE(test_ecn_not_on_last_hop, "lab.ecn_not_on_last_hop")
{
	run_ecn_sequence_at(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, 0, 0x2A, 0);
	run_ecn_sequence_at(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, 1, 0x2A, 0);
	run_ecn_sequence_at(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, 0, 0x01, 0);
	run_ecn_sequence_at(LAB_HOOK_INGRESS, LAB_PORT_REHASH, 0, 0x2A, 1);
	{
		struct port p = setup_port(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, &cfg_ecn);
		__u8 pkt[PKT_MAX];
		size_t len = build_udp_frame(pkt, 0, 0x02, 1000);
		struct run r;

		seed_backlog(&p, 400000);
		run_pkt(&p, pkt, len, &r);
		expect_forwarded_unchanged(&r, pkt, len);
		ASSERT_EQ(read_stats(&p).ecn_marked, 0, "no mark at 400 KB of backlog");
	}
}

/* ECN at 1000 bytes and trims at 3000 on one queue, MRC data (ECT(0)). */
static const struct lab_link_cfg cfg_ecn_trim = {
	.rate_bps = SLOW_RATE, .ecn_thresh = 1000, .trim_thresh = 3000,
	.queue_limit = 1000000,
};

/*
 * The same burst of MRC data into a core port and into the last hop:
 * the core marks CE between the two thresholds and trims (DSCP 0x2C)
 * above; the last hop forwards unmarked between them and trims (DSCP
 * 0x2D, ECN bits as they came) above.
 */
TEST_CASE(test_lasthop_trims_never_marks, "lab.lasthop_trims_never_marks")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, MRC_BTH_F_TS, 1000);
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(&s, pkt), hlen = hdr_len(&s);
	int lasthop;

	for (lasthop = 0; lasthop < 2; lasthop++) {
		struct port p = setup_port(LAB_HOOK_EGRESS, lasthop ? LAB_PORT_LASTHOP : 0,
					   &cfg_ecn_trim);
		struct lab_port_stats want = {
			.packets = 5, .bytes = 3 * len + 2 * hlen, .trimmed = 2,
			.ecn_marked = lasthop ? 0 : 2,
		};
		struct run r;
		int i;

		for (i = 0; i < 5; i++) {
			int before = test_state.failed;

			run_pkt(&p, pkt, len, &r);
			if (i == 0 || (i < 3 && lasthop))
				expect_forwarded_unchanged(&r, pkt, len);
			else if (i < 3)
				expect_ce_marked(&r, pkt, len);
			else
				expect_trimmed(&r, pkt, hlen, lasthop ?
					       MRC_DSCP_TRIMMED_LASTHOP : MRC_DSCP_TRIMMED);
			note_packet(before, i);
		}
		expect_stats(&p, &want);
		if (test_state.failed)
			fprintf(stderr, "  (last hop %d)\n", lasthop);
	}
}

/* A queue with trim and tail-drop: `pkt` must never be trimmed, only
 * tail-dropped once the 5000-byte limit is reached. */
static void expect_never_trimmed(const __u8 *pkt, size_t len, __u32 want_prio)
{
	struct lab_link_cfg cfg = { .rate_bps = SLOW_RATE, .trim_thresh = 2000,
				    .queue_limit = 5000 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	int i, fit = (int)(5000 / len);
	struct lab_port_stats want = {
		.packets = (__u64)fit, .bytes = (__u64)fit * len, .drop_queue = 3,
	};
	struct run r;

	for (i = 0; i < fit + 3; i++) {
		int before = test_state.failed;

		run_pkt(&p, pkt, len, &r);
		if (i < fit) {
			expect_forwarded_unchanged(&r, pkt, len);
			ASSERT_EQ(r.ctx.priority, want_prio, "class");
		} else {
			expect_dropped(&r);
		}
		note_packet(before, i);
	}
	expect_stats(&p, &want);
}

TEST_CASE(test_trim_skips_non_mrc_udp, "lab.trim_skips_non_mrc_udp")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 958);
	__u8 pkt[PKT_MAX];
	size_t len;

	s.dport = MRC_UDP_PORT_DEFAULT + 1;	/* MRC-looking, other port */
	len = build_pkt(&s, pkt);
	expect_never_trimmed(pkt, len, DATA_CLASS);
}

TEST_CASE(test_trim_skips_control, "lab.trim_skips_control")
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_SACK, 0, 958);
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(&s, pkt);

	expect_never_trimmed(pkt, len, PRIO_CLASS);
	s = mrc_spec(1, MRC_OP_SACK, 0, 938);
	len = build_pkt(&s, pkt);
	expect_never_trimmed(pkt, len, PRIO_CLASS);
}

TEST_CASE(test_trim_skips_header_only, "lab.trim_skips_header_only")
{
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_trim);
	__u8 pkt[PKT_MAX];
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 0);
	size_t len = build_pkt(&s, pkt);
	struct lab_port_stats want = { .packets = 1, .bytes = len };
	struct run r;

	seed_backlog(&p, 3000);
	run_pkt(&p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	ASSERT_EQ(r.ctx.priority, DATA_CLASS, "untrimmed data class");
	expect_stats(&p, &want);
}

/*
 * A header trimmed by a switch before this one (header only, trim DSCP
 * 0x2C or 0x2D) is not cut again and keeps the priority class at every
 * later hop, so the receiver's NACK is not held up behind the data that
 * caused the trim. Header-only data without a trim DSCP (a zero-length
 * WRITE, a sender's own DSCP) stays in the data class. IPv4 and IPv6;
 * the lab's configured trim DSCPs count, not the defaults.
 */
TEST_CASE(test_trimmed_header_keeps_priority, "lab.trimmed_header_keeps_priority")
{
	static const struct { __u8 dscp; __u32 prio; } cases[] = {
		{ MRC_DSCP_TRIMMED, PRIO_CLASS },
		{ MRC_DSCP_TRIMMED_LASTHOP, PRIO_CLASS },
		{ 0x2E, DATA_CLASS },
		{ 0, DATA_CLASS },
	};
	struct lab_global_cfg g = { .dscp_trimmed = 0x30, .dscp_trimmed_lasthop = 0x31 },
			      zero_g = {};
	int gfd = bpf_map__fd(lf_skel->maps.lab_global);
	struct pkt_spec s;
	__u8 pkt[PKT_MAX];
	size_t i, len;
	struct port p;
	struct run r;
	__u32 zero = 0;
	int v6;

	for (v6 = 0; v6 < 2; v6++) {
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			int before = test_state.failed;

			p = setup_port(LAB_HOOK_EGRESS, i & 1 ? LAB_PORT_LASTHOP : 0, &cfg_trim);
			seed_backlog(&p, 3000);
			s = mrc_spec(v6, MRC_OP_WRITE_MIDDLE, MRC_BTH_F_TS, 0);
			s.tos = (__u8)(cases[i].dscp << 2 | 0x2);
			len = build_pkt(&s, pkt);
			run_pkt(&p, pkt, len, &r);
			expect_forwarded_unchanged(&r, pkt, len);
			ASSERT_EQ(r.ctx.priority, cases[i].prio, "class of a header-only packet");
			ASSERT_EQ(read_stats(&p).trimmed, 0, "not trimmed again");
			if (test_state.failed != before)
				fprintf(stderr, "  (ipv6 %d, dscp 0x%02x)\n", v6, cases[i].dscp);
		}
	}
	/* With other trim DSCPs configured, those mark trimmed headers. */
	if (!ASSERT_EQ(bpf_map_update_elem(gfd, &zero, &g, BPF_ANY), 0, "set lab_global"))
		return;
	p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_trim);
	s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 0);
	s.tos = 0x31 << 2;
	len = build_pkt(&s, pkt);
	run_pkt(&p, pkt, len, &r);
	ASSERT_EQ(r.ctx.priority, PRIO_CLASS, "configured last-hop DSCP: priority");
	s.tos = MRC_DSCP_TRIMMED << 2;
	len = build_pkt(&s, pkt);
	run_pkt(&p, pkt, len, &r);
	ASSERT_EQ(r.ctx.priority, DATA_CLASS, "default DSCP no longer a trim mark");
	ASSERT_EQ(bpf_map_update_elem(gfd, &zero, &zero_g, BPF_ANY), 0, "reset lab_global");
}

/* MRC-looking bytes behind an IP header that does not say UDP. */
TEST_CASE(test_trim_skips_non_udp, "lab.trim_skips_non_udp")
{
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_trim);
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 1000);
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(&s, pkt);
	struct lab_port_stats want = { .packets = 1, .bytes = len };
	struct run r;

	pkt[ETH_LEN + 9] = 6;	/* TCP */
	ipv4_csum_fill(pkt);
	seed_backlog(&p, 3000);
	run_pkt(&p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	expect_stats(&p, &want);
}

/* Just over the headers: four payload bytes are still cut. */
TEST_CASE(test_trim_smallest_payload, "lab.trim_smallest_payload")
{
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_trim);
	__u8 pkt[PKT_MAX];
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 4);
	size_t len = build_pkt(&s, pkt);
	struct lab_port_stats want = { .packets = 1, .bytes = hdr_len(&s), .trimmed = 1 };
	struct run r;

	seed_backlog(&p, 3000);
	run_pkt(&p, pkt, len, &r);
	expect_trimmed(&r, pkt, hdr_len(&s), MRC_DSCP_TRIMMED);
	expect_stats(&p, &want);
}

/* lab_global overrides the MRC port and the trim DSCPs. */
TEST_CASE(test_trim_global_config, "lab.trim_global_config")
{
	struct lab_global_cfg g = { .mrc_udp_port = 5000, .dscp_trimmed = 0x30,
				    .dscp_trimmed_lasthop = 0x31 }, zero_g = {};
	int gfd = bpf_map__fd(lf_skel->maps.lab_global);
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 1000);
	__u8 pkt[PKT_MAX];
	size_t len;
	struct port p;
	struct run r;
	__u32 zero = 0;

	if (!ASSERT_EQ(bpf_map_update_elem(gfd, &zero, &g, BPF_ANY), 0, "set lab_global"))
		return;
	s.dport = 5000;
	len = build_pkt(&s, pkt);
	p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_trim);
	seed_backlog(&p, 3000);
	run_pkt(&p, pkt, len, &r);
	expect_trimmed(&r, pkt, hdr_len(&s), 0x30);

	p = setup_port(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, &cfg_trim);
	seed_backlog(&p, 3000);
	run_pkt(&p, pkt, len, &r);
	expect_trimmed(&r, pkt, hdr_len(&s), 0x31);

	/* The default port is plain UDP now. */
	s.dport = MRC_UDP_PORT_DEFAULT;
	len = build_pkt(&s, pkt);
	run_pkt(&p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);

	ASSERT_EQ(bpf_map_update_elem(gfd, &zero, &zero_g, BPF_ANY), 0, "reset lab_global");
}
