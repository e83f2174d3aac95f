/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Bounds-checked header parsing shared by every XDP and TC program.
 *
 * A cursor walks [pos, end); each helper returns NULL when the header does
 * not fit, so callers cannot forget a bounds check the verifier would
 * reject anyway, and malformed packets take the same path as short ones.
 */
#ifndef MRC_BPF_PARSING_H
#define MRC_BPF_PARSING_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_IP	0x0800
#define ETH_P_IPV6	0x86DD
#define IPPROTO_UDP_	17

#ifndef TC_ACT_OK
#define TC_ACT_UNSPEC	(-1)	/* no verdict: the next filter, or pass */
#define TC_ACT_OK	0
#define TC_ACT_SHOT	2
#endif

/* Single, untorn accesses to state another CPU or userspace also writes. */
#define READ_ONCE(x)		(*(volatile typeof(x) *)&(x))
#define WRITE_ONCE(x, v)	(*(volatile typeof(x) *)&(x) = (v))

#define ECN_MASK	0x3
#define ECN_CE		0x3

struct cursor {
	void *pos;
	void *end;
};

static __always_inline void *cursor_take(struct cursor *c, __u32 len)
{
	void *hdr = c->pos;

	if (hdr + len > c->end)
		return NULL;
	c->pos = hdr + len;
	return hdr;
}

/* Where the headers of a UDP packet start and what the IP layer says. */
struct l4_info {
	__u32 l3_off;
	__u32 l4_off;		/* UDP header */
	__u16 l3_proto;		/* ETH_P_IP or ETH_P_IPV6, host order */
	__u8  tos;		/* IPv4 TOS or IPv6 traffic class */
	__u8  is_udp;
};

static __always_inline __u8 ipv6_tclass(const struct ipv6hdr *ip6)
{
	const __u8 *b = (const __u8 *)ip6;

	return (__u8)((b[0] & 0x0f) << 4 | b[1] >> 4);
}

/*
 * Parse Ethernet + IPv4/IPv6 up to the transport header. Returns 0 when
 * the packet is IP (is_udp tells whether a UDP header follows), -1 for
 * anything we do not look into (ARP, IPv4 options, extension headers).
 */
static __always_inline int parse_l3(struct cursor *c, void *base,
				    struct l4_info *info)
{
	struct ethhdr *eth = cursor_take(c, sizeof(*eth));

	if (!eth)
		return -1;
	info->l3_off = (__u32)((void *)(eth + 1) - base);
	info->l3_proto = bpf_ntohs(eth->h_proto);

	if (info->l3_proto == ETH_P_IP) {
		struct iphdr *ip = cursor_take(c, sizeof(*ip));

		/*
		 * The version too: the kernel drops a header of another
		 * version, so it is none of ours to answer (mrc-fuzz found a
		 * trimmed header with version 6 answered with a NACK).
		 */
		if (!ip || ip->ihl != 5 || ip->version != 4)
			return -1;
		/* Fragments carry no UDP header of their own. */
		if (ip->frag_off & bpf_htons(0x3fff))
			return -1;
		info->tos = ip->tos;
		info->is_udp = ip->protocol == IPPROTO_UDP_;
	} else if (info->l3_proto == ETH_P_IPV6) {
		struct ipv6hdr *ip6 = cursor_take(c, sizeof(*ip6));

		if (!ip6 || ip6->version != 6)
			return -1;
		info->tos = ipv6_tclass(ip6);
		info->is_udp = ip6->nexthdr == IPPROTO_UDP_;
	} else {
		return -1;
	}
	info->l4_off = (__u32)(c->pos - base);
	return 0;
}

/* Fold a 32-bit one's complement sum to the 16 bits a header carries. */
static __always_inline __u16 csum_fold32(__u64 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

#endif /* MRC_BPF_PARSING_H */
