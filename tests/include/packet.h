/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Packet helpers shared by the BPF unit tests: big-endian field access and
 * IPv4/UDP checksums computed independently of the programs under test, so
 * a test can tell a correct rewrite from a broken one.
 */
#ifndef MRC_TEST_PACKET_H
#define MRC_TEST_PACKET_H

#include <stddef.h>
#include <linux/types.h>

#define ETH_LEN		14
#define IP4_LEN		20
#define IP6_LEN		40
#define UDP_LEN		8

/* ====================================================================== */
/* Checksums, computed independently of the program under test           */
/* ====================================================================== */

/* One's complement sum of big-endian 16-bit words (odd tail zero-padded). */
static inline __attribute__((unused)) __u32 csum_add(__u32 sum, const void *data, size_t len)
{
	const __u8 *p = data;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (__u32)(p[i] << 8 | p[i + 1]);
	if (len & 1)
		sum += (__u32)(p[len - 1] << 8);
	return sum;
}

static inline __attribute__((unused)) __u16 csum_fold(__u32 sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

static inline __attribute__((unused)) void put16(__u8 *p, __u16 v)
{
	p[0] = (__u8)(v >> 8);
	p[1] = (__u8)v;
}

static inline __attribute__((unused)) __u16 get16(const __u8 *p)
{
	return (__u16)(p[0] << 8 | p[1]);
}

static inline __attribute__((unused)) void put32(__u8 *p, __u32 v)
{
	put16(p, (__u16)(v >> 16));
	put16(p + 2, (__u16)v);
}

static inline __attribute__((unused)) __u32 get32(const __u8 *p)
{
	return (__u32)get16(p) << 16 | get16(p + 2);
}

static inline __attribute__((unused)) int pkt_is_ipv6(const __u8 *pkt)
{
	return get16(pkt + 12) == 0x86DD;
}

static inline __attribute__((unused)) size_t l4_off(const __u8 *pkt)
{
	return ETH_LEN + (pkt_is_ipv6(pkt) ? IP6_LEN : IP4_LEN);
}

/* Sum of the UDP pseudo-header for a datagram of udp_len bytes. */
static inline __attribute__((unused)) __u32 udp_pseudo_sum(const __u8 *pkt, __u32 udp_len)
{
	const __u8 *ip = pkt + ETH_LEN;
	__u32 sum;

	if (pkt_is_ipv6(pkt)) {
		sum = csum_add(0, ip + 8, 32);		/* saddr, daddr */
		sum += udp_len >> 16;
		sum += udp_len & 0xffff;
	} else {
		sum = csum_add(0, ip + 12, 8);		/* saddr, daddr */
		sum += udp_len;
	}
	return sum + 17;				/* IPPROTO_UDP */
}

/* Write a correct IPv4 header checksum. */
static inline __attribute__((unused)) void ipv4_csum_fill(__u8 *pkt)
{
	__u8 *ip = pkt + ETH_LEN;

	put16(ip + 10, 0);
	put16(ip + 10, csum_fold(csum_add(0, ip, (size_t)(ip[0] & 0xf) * 4)));
}

static inline __attribute__((unused)) int ipv4_csum_ok(const __u8 *pkt)
{
	const __u8 *ip = pkt + ETH_LEN;

	return csum_fold(csum_add(0, ip, (size_t)(ip[0] & 0xf) * 4)) == 0;
}

/* Write a correct UDP checksum over the UDP length field's datagram. */
static inline __attribute__((unused)) void udp_csum_fill(__u8 *pkt)
{
	__u8 *udp = pkt + l4_off(pkt);
	__u16 ulen = get16(udp + 4), c;

	put16(udp + 6, 0);
	c = csum_fold(csum_add(udp_pseudo_sum(pkt, ulen), udp, ulen));
	put16(udp + 6, c ? c : 0xffff);	/* 0 would mean "no checksum" */
}

/* Valid and present: a zero checksum is "none", not good enough here. */
static inline __attribute__((unused)) int udp_csum_ok(const __u8 *pkt)
{
	const __u8 *udp = pkt + l4_off(pkt);
	__u16 ulen = get16(udp + 4);

	return get16(udp + 6) != 0 &&
	       csum_fold(csum_add(udp_pseudo_sum(pkt, ulen), udp, ulen)) == 0;
}

#endif /* MRC_TEST_PACKET_H */
