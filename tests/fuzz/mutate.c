// SPDX-License-Identifier: GPL-2.0
/*
 * The one mutation engine: a few random edits of a frame, some blind
 * (bit flips, random bytes, truncation, extension), most aimed at the
 * fields the parser trusts (IP lengths and header size, UDP length and
 * port, the BTH opcode, QP, flags and PSN), and then, half the time, the
 * checksums made right again, so that broken fields also arrive in frames
 * whose checksums would let them through. And the checksum reader the
 * invariants use, bounded by the frame (the fixture's trusts lengths).
 */
#include <string.h>

#include "fuzz.h"

/* Offsets of the headers in a frame built by frames.c. */
static size_t l3_len(const __u8 *f)
{
	return pkt_is_ipv6(f) ? IP6_LEN : IP4_LEN;
}

static size_t bth_off(const __u8 *f)
{
	return ETH_LEN + l3_len(f) + UDP_LEN;
}

/* A byte offset where a header begins, ends, or one of the BTH's fields is. */
static size_t boundary(struct fz_rng *r, const __u8 *f)
{
	const size_t bth = bth_off(f);
	const size_t cuts[] = { 0, ETH_LEN, ETH_LEN + l3_len(f) - 1, bth - UDP_LEN,
		bth - 1, bth, bth + 4, bth + 11, bth + 12, bth + 16, bth + 20,
		bth + 31, bth + 32, bth + 36, bth + 43, bth + 44, bth + 52 };

	return cuts[fz_below(r, sizeof(cuts) / sizeof(cuts[0]))] + fz_below(r, 2);
}

/* Set a 16-bit field at off to a length-like value (around the truth). */
static void mutate_len16(struct fz_rng *r, __u8 *f, size_t len, size_t off)
{
	__u16 v = get16(f + off);

	if (off + 2 > len)
		return;
	switch (fz_below(r, 4)) {
	case 0:
		v = (__u16)(v + fz_below(r, 9) - 4);
		break;
	case 1:
		v = (__u16)fz_below(r, 64);
		break;
	case 2:
		v = 0xffff - (__u16)fz_below(r, 4);
		break;
	default:
		v = (__u16)fz_rand(r);
		break;
	}
	put16(f + off, v);
}

/* Edit one field the parsers read. */
static void mutate_field(struct fz_rng *r, __u8 *f, size_t len)
{
	size_t l4 = ETH_LEN + l3_len(f), bth = bth_off(f);

	if (len < bth + 12)
		return;
	switch (fz_below(r, 10)) {
	case 0:	/* IPv4 total length / IPv6 payload length */
		mutate_len16(r, f, len, ETH_LEN + (pkt_is_ipv6(f) ? 4 : 2));
		break;
	case 1:	/* UDP length */
		mutate_len16(r, f, len, l4 + 4);
		break;
	case 2:	/* IPv4 header length, fragment bits; IPv6 next header */
		if (pkt_is_ipv6(f))
			f[ETH_LEN + 6] = fz_chance(r, 1, 2) ? 0 : (__u8)fz_rand(r);
		else if (fz_chance(r, 1, 2))
			f[ETH_LEN] = (__u8)(0x40 | fz_below(r, 16));
		else
			put16(f + ETH_LEN + 6, (__u16)fz_rand(r));
		break;
	case 3:	/* the opcode */
		f[bth] = (__u8)(0xC0 + fz_below(r, 0x20));
		break;
	case 4:	/* BTH bytes 1-4: reserved byte and partition key */
		f[bth + 1 + fz_below(r, 3)] = (__u8)fz_rand(r);
		break;
	case 5:	/* the destination QP */
		put32(f + bth + 4, fz_chance(r, 1, 2) ? (__u32)fz_rand(r) :
		      (__u32)fz_below(r, MRC_MAX_QPS + 2));
		break;
	case 6:	/* the flags before the PSN */
		f[bth + 8] = (__u8)fz_rand(r);
		break;
	case 7:	/* the PSN, by a little */
		put32(f + bth + 8, (get32(f + bth + 8) & 0xff000000u) |
		      ((get32(f + bth + 8) + fz_below(r, 9) - 4) & MRC_PSN_MASK));
		break;
	case 8:	/* the UDP destination port: the MRC port or next to it */
		put16(f + l4 + 2, (__u16)(MRC_UDP_PORT_DEFAULT + fz_below(r, 3) - 1));
		break;
	default: /* the ethertype */
		put16(f + 12, fz_chance(r, 1, 2) ? 0x8100 : (__u16)fz_rand(r));
		break;
	}
}

/* Cut the frame (often at a header edge) or add bytes behind it. */
static size_t mutate_size(struct fz_rng *r, __u8 *f, size_t len)
{
	size_t n, k;

	if (fz_chance(r, 1, 2)) {
		n = fz_chance(r, 2, 3) ? boundary(r, f) : fz_below(r, (__u32)len + 1);
		return n < len ? n : len;
	}
	n = len + 1 + fz_below(r, 64);
	if (n > FZ_FRAME_MAX)
		n = FZ_FRAME_MAX;
	for (k = len; k < n; k++)
		f[k] = (__u8)fz_rand(r);
	return n;
}

size_t fz_mutate(struct fz_rng *r, __u8 *f, size_t len)
{
	__u32 edits = 1 + fz_below(r, 4), i;

	for (i = 0; i < edits && len; i++) {
		switch (fz_below(r, 6)) {
		case 0:
			f[fz_below(r, (__u32)len)] ^= (__u8)(1u << fz_below(r, 8));
			break;
		case 1:
			f[fz_below(r, (__u32)len)] = (__u8)fz_rand(r);
			break;
		case 2:
			len = mutate_size(r, f, len);
			break;
		default:
			mutate_field(r, f, len);
			break;
		}
	}
	if (fz_chance(r, 1, 2))
		fz_fix_checksums(f, len);
	return len;
}

/* ---- checksums, bounded by the frame --------------------------------------- */

static int is_ip4(const __u8 *f, size_t len)
{
	return len >= ETH_LEN + IP4_LEN && get16(f + 12) == 0x0800 &&
	       f[ETH_LEN] >> 4 == 4 && (f[ETH_LEN] & 0xf) >= 5 &&
	       ETH_LEN + (size_t)(f[ETH_LEN] & 0xf) * 4 <= len;
}

/* The UDP datagram of a frame: its offset and length, or 0 if unreadable. */
static size_t udp_span(const __u8 *f, size_t len, size_t *l4)
{
	size_t ulen;

	if (is_ip4(f, len)) {
		if (f[ETH_LEN + 9] != 17)
			return 0;
		*l4 = ETH_LEN + (size_t)(f[ETH_LEN] & 0xf) * 4;
	} else if (len >= ETH_LEN + IP6_LEN && get16(f + 12) == 0x86DD &&
		   f[ETH_LEN + 6] == 17) {
		*l4 = ETH_LEN + IP6_LEN;
	} else {
		return 0;
	}
	if (*l4 + UDP_LEN > len)
		return 0;
	ulen = get16(f + *l4 + 4);
	return ulen >= UDP_LEN && *l4 + ulen <= len ? ulen : 0;
}

static __u32 pseudo_sum(const __u8 *f, size_t l4, size_t ulen)
{
	__u32 sum;

	if (l4 == ETH_LEN + IP6_LEN && get16(f + 12) == 0x86DD)
		sum = csum_add(0, f + ETH_LEN + 8, 32) + (__u32)(ulen >> 16) +
		      (__u32)(ulen & 0xffff);
	else
		sum = csum_add(0, f + ETH_LEN + 12, 8) + (__u32)ulen;
	return sum + 17;
}

int fz_ip4_csum_state(const __u8 *f, size_t len)
{
	if (!is_ip4(f, len))
		return -1;
	return csum_fold(csum_add(0, f + ETH_LEN, (size_t)(f[ETH_LEN] & 0xf) * 4)) == 0;
}

/* 1 valid (and present), 0 wrong or absent (0), -1 no readable datagram. */
int fz_udp_csum_state(const __u8 *f, size_t len)
{
	size_t l4 = 0, ulen = udp_span(f, len, &l4);

	if (!ulen)
		return -1;
	if (get16(f + l4 + 6) == 0)
		return 0;
	return csum_fold(csum_add(pseudo_sum(f, l4, ulen), f + l4, ulen)) == 0;
}

void fz_fix_checksums(__u8 *f, size_t len)
{
	size_t l4 = 0, ulen;
	__u16 c;

	if (is_ip4(f, len)) {
		put16(f + ETH_LEN + 10, 0);
		put16(f + ETH_LEN + 10, csum_fold(csum_add(0, f + ETH_LEN,
					(size_t)(f[ETH_LEN] & 0xf) * 4)));
	}
	ulen = udp_span(f, len, &l4);
	if (!ulen)
		return;
	put16(f + l4 + 6, 0);
	c = csum_fold(csum_add(pseudo_sum(f, l4, ulen), f + l4, ulen));
	put16(f + l4 + 6, c ? c : 0xffff);
}
