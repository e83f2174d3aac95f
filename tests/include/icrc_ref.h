/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reference RoCEv2 invariant CRC of a built Ethernet frame, for checking
 * what bpf/mrc/icrc.h computes. Written from the rule (IBTA Annex A17)
 * and bit by bit, so it shares nothing with the BPF table: 8 bytes of
 * 0xFF, then IP, UDP, BTH with their variant fields set to ones, then
 * every byte up to the 4-byte trailer at the end of the UDP datagram.
 */
#ifndef MRC_TEST_ICRC_REF_H
#define MRC_TEST_ICRC_REF_H

#include <string.h>
#include "packet.h"

static inline __attribute__((unused)) __u32 crc32_bitwise(__u32 crc, const __u8 *p,
							 size_t n)
{
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xEDB88320u & -(crc & 1));
	}
	return crc;
}

/* The ICRC the frame's trailer should hold (not complemented twice). */
static inline __attribute__((unused)) __u32 icrc_ref(const __u8 *frame)
{
	static const __u8 lrh[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	size_t l3 = ETH_LEN, l4 = l4_off(frame), ip_len = l4 - l3;
	__u16 udp_len = get16(frame + l4 + 4);
	__u8 hdr[40 + 8 + 12];
	__u32 crc;

	memcpy(hdr, frame + l3, ip_len + 8 + 12);
	if (pkt_is_ipv6(frame)) {
		hdr[0] |= 0x0f;
		hdr[1] = hdr[2] = hdr[3] = 0xff;
		hdr[7] = 0xff;
	} else {
		hdr[1] = 0xff;
		hdr[8] = 0xff;
		hdr[10] = hdr[11] = 0xff;
	}
	hdr[ip_len + 6] = hdr[ip_len + 7] = 0xff;
	hdr[ip_len + 8 + 4] = 0xff;
	crc = crc32_bitwise(0xffffffffu, lrh, sizeof(lrh));
	crc = crc32_bitwise(crc, hdr, ip_len + 8 + 12);
	crc = crc32_bitwise(crc, frame + l4 + 8 + 12, udp_len - 8 - 12 - 4);
	return ~crc;
}

/* The trailer as the frame carries it: least significant byte first. */
static inline __attribute__((unused)) __u32 icrc_of_trailer(const __u8 *frame)
{
	const __u8 *t = frame + l4_off(frame) + get16(frame + l4_off(frame) + 4) - 4;

	return t[0] | t[1] << 8 | t[2] << 16 | (__u32)t[3] << 24;
}

static inline __attribute__((unused)) void icrc_put_trailer(__u8 *frame, __u32 crc)
{
	__u8 *t = frame + l4_off(frame) + get16(frame + l4_off(frame) + 4) - 4;

	t[0] = (__u8)crc;
	t[1] = (__u8)(crc >> 8);
	t[2] = (__u8)(crc >> 16);
	t[3] = (__u8)(crc >> 24);
}

#endif /* MRC_TEST_ICRC_REF_H */
