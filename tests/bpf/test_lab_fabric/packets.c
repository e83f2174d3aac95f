// SPDX-License-Identifier: GPL-2.0
/*
 * Packets for the lab_fabric tests: Ethernet, IPv4/IPv6, UDP and MRC
 * headers built with correct checksums, and the rewrites a test expects of
 * the program (TOS, trims), built independently from the input.
 */
#include <string.h>

#include "lab_fabric_test.h"

/* ====================================================================== */
/* Packet builder                                                         */
/* ====================================================================== */

static const __u8 mac_dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const __u8 mac_src[6] = { 0x02, 0, 0, 0, 0, 0x01 };

size_t lf_build_eth(__u8 *p, __u16 proto)
{
	memcpy(p, mac_dst, 6);
	memcpy(p + 6, mac_src, 6);
	put16(p + 12, proto);
	return ETH_LEN;
}

/* IPv4 header, DF set; its checksum is filled once the length is known. */
static size_t build_ipv4(__u8 *ip, __u8 tos, __u16 tot_len)
{
	static const __u8 addrs[8] = { 10, 9, 0, 1, 10, 9, 0, 2 };

	memset(ip, 0, IP4_LEN);
	ip[0] = 0x45;
	ip[1] = tos;
	put16(ip + 2, tot_len);
	put16(ip + 4, 0x1234);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, addrs, 8);
	return IP4_LEN;
}

/* IPv6 header with a non-zero flow label, so the tclass rewrite must not
 * spill into it. */
static size_t build_ipv6(__u8 *ip, __u8 tclass, __u16 payload_len)
{
	static const __u8 src[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	static const __u8 dst[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };
	__u32 flow = 0xABCDE;

	put32(ip, 6u << 28 | (__u32)tclass << 20 | flow);
	put16(ip + 4, payload_len);
	ip[6] = 17;
	ip[7] = 64;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	return IP6_LEN;
}

/* MRC data/control headers: BTH, METH, [TSETH], RETH, [IMM]. */
static size_t build_mrc(__u8 *m, __u8 opcode, __u8 bth_flags)
{
	size_t n = 0;

	m[n++] = opcode;
	m[n++] = 0;
	put16(m + n, 0xffff);			n += 2;	/* pkey */
	put32(m + n, 0x00123456);		n += 4;	/* dqpn */
	put32(m + n, (__u32)bth_flags << 24 | 0x000abc); n += 4;
	put16(m + n, 7);			n += 2;	/* wimm_msn */
	put16(m + n, 9);			n += 2;	/* msn */
	if (bth_flags & MRC_BTH_F_TS) {
		put16(m + n, 0x4321);		n += 2;
		put16(m + n, 0);		n += 2;
	}
	put32(m + n, 0x00007f00);		n += 4;	/* vaddr */
	put32(m + n, 0x12340000);		n += 4;
	put32(m + n, 0xcafe);			n += 4;	/* rkey */
	put32(m + n, 65536);			n += 4;	/* length */
	if (mrc_opcode_has_imm(opcode)) {
		put32(m + n, 0xfeedf00d);	n += 4;
	}
	return n;
}

/* A complete Ethernet frame with correct IPv4 and UDP checksums. */
size_t build_pkt(const struct pkt_spec *s, __u8 *buf)
{
	size_t l3 = lf_build_eth(buf, s->ipv6 ? 0x86DD : 0x0800);
	size_t l4 = l3 + (s->ipv6 ? IP6_LEN : IP4_LEN);
	size_t n = l4 + UDP_LEN, i;

	if (s->mrc)
		n += build_mrc(buf + n, s->opcode, s->bth_flags);
	for (i = 0; i < s->payload; i++)
		buf[n + i] = (__u8)(i * 7 + 3);
	n += s->payload;

	put16(buf + l4, 49152);			/* sport */
	put16(buf + l4 + 2, s->dport);
	put16(buf + l4 + 4, (__u16)(n - l4));
	if (s->ipv6) {
		build_ipv6(buf + l3, s->tos, (__u16)(n - l4));
	} else {
		build_ipv4(buf + l3, s->tos, (__u16)(n - l3));
		ipv4_csum_fill(buf);
	}
	udp_csum_fill(buf);
	return n;
}

/* A UDP frame of exactly `len` bytes to a non-MRC port. */
size_t build_udp_frame(__u8 *buf, int ipv6, __u8 tos, size_t len)
{
	struct pkt_spec s = { .ipv6 = ipv6, .tos = tos, .dport = 9999 };

	s.payload = (__u32)(len - ETH_LEN - (ipv6 ? IP6_LEN : IP4_LEN) - UDP_LEN);
	return build_pkt(&s, buf);
}

struct pkt_spec mrc_spec(int ipv6, __u8 opcode, __u8 flags, __u32 payload)
{
	struct pkt_spec s = {
		.ipv6 = ipv6, .tos = 0x02, .dport = MRC_UDP_PORT_DEFAULT,
		.mrc = 1, .opcode = opcode, .bth_flags = flags, .payload = payload,
	};
	return s;
}

/* ====================================================================== */
/* Expected rewrites, built independently from the input                  */
/* ====================================================================== */

__u8 pkt_tos(const __u8 *pkt)
{
	const __u8 *ip = pkt + ETH_LEN;

	if (pkt_is_ipv6(pkt))
		return (__u8)((ip[0] & 0x0f) << 4 | ip[1] >> 4);
	return ip[1];
}

/* Set TOS/traffic class, keeping the IPv4 header checksum right. */
void set_tos(__u8 *pkt, __u8 tos)
{
	__u8 *ip = pkt + ETH_LEN;

	if (pkt_is_ipv6(pkt)) {
		ip[0] = (__u8)((ip[0] & 0xf0) | tos >> 4);
		ip[1] = (__u8)((ip[1] & 0x0f) | tos << 4);
	} else {
		ip[1] = tos;
		ipv4_csum_fill(pkt);
	}
}

/* What a trimming switch makes of `in`: its first `len` bytes, lengths and
 * checksums fixed, the DSCP set, the ECN bits kept. */
static void expected_trim(const __u8 *in, size_t len, __u8 dscp, __u8 *exp)
{
	size_t l4 = l4_off(in);

	memcpy(exp, in, len);
	put16(exp + l4 + 4, (__u16)(len - l4));
	if (pkt_is_ipv6(exp))
		put16(exp + ETH_LEN + 4, (__u16)(len - l4));
	else
		put16(exp + ETH_LEN + 2, (__u16)(len - ETH_LEN));
	set_tos(exp, (__u8)(dscp << 2 | (pkt_tos(in) & 3)));
	udp_csum_fill(exp);
}

/* `r` is the trim of `in` to `len` bytes with `dscp`, valid checksums. */
void expect_trimmed(const struct run *r, const __u8 *in, size_t len, __u8 dscp)
{
	__u8 exp[PKT_MAX];

	if (!ASSERT_EQ(r->err, 0, "test_run") ||
	    !ASSERT_EQ(r->verdict, TC_ACT_OK, "verdict") ||
	    !ASSERT_EQ(r->out_len, len, "trimmed length"))
		return;
	if (!pkt_is_ipv6(r->out))
		ASSERT_TRUE(ipv4_csum_ok(r->out), "IPv4 header checksum after trim");
	ASSERT_TRUE(udp_csum_ok(r->out), "UDP checksum after trim");
	ASSERT_EQ(pkt_tos(r->out) >> 2, dscp, "DSCP after trim");
	ASSERT_EQ(pkt_tos(r->out) & 3, pkt_tos(in) & 3, "ECN kept by trim");
	expected_trim(in, len, dscp, exp);
	ASSERT_MEM_EQ(r->out, exp, len, "trimmed headers");
	ASSERT_EQ(r->ctx.priority, DIRECT_CLASS, "trimmed header: HTB direct, unshaped");
}
