/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * In-place rewrites of a received frame (XDP): steering to a socket by
 * destination port, incremental UDP checksum updates, and turning a frame
 * around (XDP_TX answers: EV probes, trimmed-packet NACKs).
 */
#ifndef MRC_BPF_XDP_REWRITE_H
#define MRC_BPF_XDP_REWRITE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "parsing.h"
#include "mrc/parse.h"

/*
 * Point the packet at the owner's socket. The checksum is updated
 * incrementally (RFC 1624); an IPv4 checksum of 0 means "none" and stays.
 */
static __always_inline void steer_to_owner(struct udphdr *udp, __u16 port)
{
	__u16 new_port = bpf_htons(port);
	__u16 old_port = udp->dest;
	__u32 sum;

	if (old_port == new_port)
		return;
	udp->dest = new_port;
	if (!udp->check)
		return;
	sum = (__u16)~udp->check;
	sum += (__u16)~old_port;
	sum += new_port;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	udp->check = (__u16)~sum ? (__u16)~sum : 0xffff;
}

/*
 * Ones'-complement update of a UDP checksum for 16-bit words that changed
 * (RFC 1624): sum_old and sum_new are plain sums of the old and new words.
 * An IPv4 checksum of 0 means "none" and stays 0.
 */
static __always_inline void udp_csum_update(struct udphdr *udp, __u32 sum_old,
					    __u32 sum_new)
{
	__u32 sum;

	if (!udp->check)
		return;
	sum_old = (sum_old & 0xffff) + (sum_old >> 16);
	sum_old = (sum_old & 0xffff) + (sum_old >> 16);
	sum_new = (sum_new & 0xffff) + (sum_new >> 16);
	sum_new = (sum_new & 0xffff) + (sum_new >> 16);
	sum = (__u16)~udp->check;
	sum += (__u16)~sum_old;
	sum += sum_new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	udp->check = (__u16)~sum ? (__u16)~sum : 0xffff;
}

/* Sum of the 16-bit words of a 32- or 64-bit field, as they lie in memory. */
static __always_inline __u32 words32(__u32 v)
{
	return (v & 0xffff) + (v >> 16);
}

static __always_inline __u32 words64(__u64 v)
{
	return words32((__u32)v) + words32((__u32)(v >> 32));
}

/* Send the frame back where it came from: swap MACs and IP addresses. */
static __always_inline int reflect_frame(struct mrc_pkt *p)
{
	struct ethhdr *eth = p->data;
	__u8 mac[6];	/* ETH_ALEN */

	if ((void *)(eth + 1) > p->end)
		return -1;
	__builtin_memcpy(mac, eth->h_dest, 6);
	__builtin_memcpy(eth->h_dest, eth->h_source, 6);
	__builtin_memcpy(eth->h_source, mac, 6);
	/* Swapping the addresses keeps every checksum: sums commute. */
	if (p->l4.l3_proto == ETH_P_IP) {
		struct iphdr *ip = p->data + sizeof(struct ethhdr);
		__u32 a;

		if ((void *)(ip + 1) > p->end)
			return -1;
		a = ip->saddr;
		ip->saddr = ip->daddr;
		ip->daddr = a;
	} else {
		struct ipv6hdr *ip6 = p->data + sizeof(struct ethhdr);
		struct in6_addr a;

		if ((void *)(ip6 + 1) > p->end)
			return -1;
		a = ip6->saddr;
		ip6->saddr = ip6->daddr;
		ip6->daddr = a;
	}
	return 0;
}

#endif /* MRC_BPF_XDP_REWRITE_H */
