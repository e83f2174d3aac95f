// SPDX-License-Identifier: GPL-2.0
/*
 * The switch emulation on UDP GSO skbs (libmrc's bursts, crossing the lab
 * whole): one skb stands for its gso_segs packets. Counters count them,
 * the queue model charges their wire bytes, a fault or a tail drop loses
 * them all, an ECN mark marks them all, a trim trims each to its header.
 */
#include <string.h>

#include "lab_fabric_test.h"

#define SEG_PAYLOAD	300	/* data bytes of each segment */

/*
 * A UDP GSO skb of n MRC data segments as the kernel builds it: the outer
 * headers once, then each segment's MRC headers and data; segment i's
 * PSN low byte is i. spec_last, when not NULL, is the last segment's
 * (another header length). *seg gets gso_size, *outer the bytes each
 * segment repeats on the wire (Ethernet, IP, UDP).
 */
static size_t gso_frame(const struct pkt_spec *s, const struct pkt_spec *spec_last,
			__u32 n, __u8 *buf, __u32 *seg, __u32 *outer)
{
	__u8 one[PKT_MAX];
	size_t len = build_pkt(s, buf), off = len - s->payload -
		     mrc_data_header_len(s->opcode, s->bth_flags);
	size_t l3 = ETH_LEN, l4 = l3 + (s->ipv6 ? IP6_LEN : IP4_LEN);

	*seg = (__u32)(len - off);
	*outer = (__u32)off;
	for (__u32 i = 1; i < n; i++) {
		size_t l = build_pkt(i == n - 1 && spec_last ? spec_last : s, one);

		memcpy(buf + len, one + off, l - off);
		buf[len + 11] = (__u8)i;	/* BTH PSN, low byte */
		len += l - off;
	}
	put16(buf + l4 + 4, (__u16)(len - l4));
	if (s->ipv6) {
		put16(buf + l3 + 4, (__u16)(len - l4));
	} else {
		put16(buf + l3 + 2, (__u16)(len - l3));
		ipv4_csum_fill(buf);
	}
	return len;
}

static void run_gso(const struct port *p, const __u8 *pkt, size_t len, __u32 segs,
		    __u32 size, struct run *r)
{
	struct __sk_buff ctx_in = { .ifindex = LO_IFINDEX, .gso_segs = segs,
				    .gso_size = size };

	run_pkt_ctx(p, pkt, len, &ctx_in, r);
}

static __u64 backlog_of(const struct port *p)
{
	struct lab_queue q = {};

	bpf_map_lookup_elem(bpf_map__fd(lf_skel->maps.lab_queues), &p->id, &q);
	return q.backlog;
}

/* Forwarded as it is, counted as 4 packets and their wire bytes. */
TEST_CASE(test_gso_counts_segments, "lab.gso_counts_segments")
{
	static const struct lab_link_cfg cfg = { .rate_bps = SLOW_RATE,
						 .queue_limit = 1000000 };
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, SEG_PAYLOAD);
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	__u8 pkt[PKT_MAX];
	__u32 seg, outer;
	size_t len = gso_frame(&s, NULL, 4, pkt, &seg, &outer);
	struct lab_port_stats want = { .packets = 4, .bytes = len + 3 * outer };
	struct run r;

	run_gso(&p, pkt, len, 4, seg, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	expect_stats(&p, &want);
	ASSERT_EQ(backlog_of(&p), len + 3 * outer, "queue model: the wire bytes");
}

/* A fault or a full queue loses the whole burst, counted per packet. */
TEST_CASE(test_gso_drops_burst, "lab.gso_drops_burst")
{
	static const struct lab_link_cfg fault = { .drop_ppm = 1000000 };
	static const struct lab_link_cfg tail = { .rate_bps = SLOW_RATE,
						  .queue_limit = 4000 };
	struct pkt_spec s = mrc_spec(1, MRC_OP_WRITE_MIDDLE, 0, SEG_PAYLOAD);
	struct port p = setup_port(LAB_HOOK_INGRESS, 0, &fault);
	__u8 pkt[PKT_MAX];
	__u32 seg, outer;
	size_t len = gso_frame(&s, NULL, 5, pkt, &seg, &outer);
	struct run r;

	run_gso(&p, pkt, len, 5, seg, &r);
	expect_dropped(&r);
	expect_stats(&p, &(struct lab_port_stats){ .drop_fault = 5 });

	/*
	 * 1,970 wire bytes (1,722 in the skb) fit an empty 4,000-byte queue;
	 * on 2,100 the wire bytes do not, though the skb's would.
	 */
	p = setup_port(LAB_HOOK_EGRESS, 0, &tail);
	ASSERT_EQ(len + 4 * outer, 1970, "wire bytes of the burst");
	run_gso(&p, pkt, len, 5, seg, &r);
	ASSERT_EQ(r.verdict, TC_ACT_OK, "fits the empty queue");
	seed_backlog(&p, 2100);
	run_gso(&p, pkt, len, 5, seg, &r);
	expect_dropped(&r);
	ASSERT_EQ(read_stats(&p).drop_queue, 5, "tail drop: all 5 packets");
}

/* Above the ECN threshold every segment is marked (the header is shared). */
TEST_CASE(test_gso_ecn_marks_all, "lab.gso_ecn_marks_all")
{
	static const struct lab_link_cfg cfg = { .rate_bps = SLOW_RATE,
						 .ecn_thresh = 1000, .queue_limit = 1000000 };
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, SEG_PAYLOAD);
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	__u8 pkt[PKT_MAX];
	__u32 seg, outer;
	size_t len = gso_frame(&s, NULL, 3, pkt, &seg, &outer);
	struct run r;

	seed_backlog(&p, 3000);
	run_gso(&p, pkt, len, 3, seg, &r);
	ASSERT_EQ(r.verdict, TC_ACT_OK, "forwarded");
	ASSERT_EQ(pkt_tos(r.out) & 3, 3, "CE");
	ASSERT_EQ(read_stats(&p).ecn_marked, 3, "3 packets marked");
}

/*
 * Above the trim threshold each segment leaves as its own trimmed header:
 * the first ones as copies, the last in the skb; a segment with a longer
 * header (a WRITE-IMM's last) is lost, counted as a queue drop.
 */
TEST_CASE(test_gso_trim_each_segment, "lab.gso_trim_each_segment")
{
	static const struct lab_link_cfg cfg = { .rate_bps = SLOW_RATE,
						 .trim_thresh = 2000, .queue_limit = 1000000 };
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, SEG_PAYLOAD);
	struct pkt_spec imm = mrc_spec(0, MRC_OP_WRITE_LAST_IMM, 0, SEG_PAYLOAD - 4);
	struct port p = setup_port(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, &cfg);
	__u8 pkt[PKT_MAX], last[PKT_MAX];
	__u32 seg, outer, hlen = (__u32)(ETH_LEN + IP4_LEN + UDP_LEN +
					 mrc_data_header_len(s.opcode, 0));
	size_t len = gso_frame(&s, NULL, 4, pkt, &seg, &outer);
	struct lab_port_stats want = { .packets = 4, .bytes = 4 * hlen, .trimmed = 4 };
	struct run r;

	seed_backlog(&p, 3000);
	run_gso(&p, pkt, len, 4, seg, &r);
	/* The skb carries the last segment's header: segment 0's, PSN 3. */
	memcpy(last, pkt, hlen);
	last[outer + 11] = 3;
	expect_trimmed(&r, last, hlen, MRC_DSCP_TRIMMED_LASTHOP);
	ASSERT_EQ(r.ctx.mark, 0, "its mark untouched");
	expect_stats(&p, &want);

	p = setup_port(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, &cfg);
	len = gso_frame(&s, &imm, 4, pkt, &seg, &outer);
	seed_backlog(&p, 3000);
	run_gso(&p, pkt, len, 4, seg, &r);
	ASSERT_EQ(r.verdict, TC_ACT_OK, "trimmed");
	ASSERT_EQ(r.out_len, hlen, "one trimmed header");
	ASSERT_EQ(r.out[outer + 11], 2, "the last segment of equal header");
	want = (struct lab_port_stats){ .packets = 3, .bytes = 3 * hlen, .trimmed = 3,
					.drop_queue = 1 };
	expect_stats(&p, &want);
}
