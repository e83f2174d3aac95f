/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * RoCEv2 invariant CRC (ICRC, IBTA Annex A17) of a data packet: filled in
 * by TC egress after the last rewrite (EV, plane addresses), checked by
 * XDP before any state change, for QPs with MRC_QP_F_ICRC (docs/WIRE.md
 * section "ICRC trailer").
 *
 * CRC-32 as Ethernet's (reflected polynomial 0xEDB88320, initial value
 * 0xFFFFFFFF, final complement) over: 8 bytes of 0xFF (the LRH RoCEv2
 * has not), the IP header with the fields routers may change set to ones
 * (IPv4 TOS, TTL, header checksum; IPv6 traffic class, flow label, hop
 * limit), the UDP header with its checksum set to ones, the BTH with its
 * byte 4 (InfiniBand's resv8a, FECN/BECN) set to ones, then every byte
 * up to the 4-byte trailer. The trailer carries the CRC least significant
 * byte first, as Ethernet's FCS.
 *
 * BPF has no CRC helper: a 256-entry table in .rodata, and bpf_loop over
 * chunks of the packet, so the verifier sees one chunk, not the packet.
 */
#ifndef MRC_BPF_ICRC_H
#define MRC_BPF_ICRC_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "parsing.h"

#define ICRC_CHUNK	128	/* packet bytes per bpf_loop step */
#define ICRC_LRH_LEN	8	/* the 0xFF bytes standing for the LRH */
#define ICRC_IP6_LEN	40
#define ICRC_IP4_LEN	20
#define ICRC_HDR_MAX	(ICRC_LRH_LEN + ICRC_IP6_LEN + 8 + MRC_ICRC_BTH_LEN)

/* crc32_table[i]: i run through 8 steps of the reflected polynomial. */
static const __u32 mrc_crc32_table[256] = {
	0x00000000, 0x77073096, 0xee0e612c, 0x990951ba, 0x076dc419, 0x706af48f,
	0xe963a535, 0x9e6495a3, 0x0edb8832, 0x79dcb8a4, 0xe0d5e91e, 0x97d2d988,
	0x09b64c2b, 0x7eb17cbd, 0xe7b82d07, 0x90bf1d91, 0x1db71064, 0x6ab020f2,
	0xf3b97148, 0x84be41de, 0x1adad47d, 0x6ddde4eb, 0xf4d4b551, 0x83d385c7,
	0x136c9856, 0x646ba8c0, 0xfd62f97a, 0x8a65c9ec, 0x14015c4f, 0x63066cd9,
	0xfa0f3d63, 0x8d080df5, 0x3b6e20c8, 0x4c69105e, 0xd56041e4, 0xa2677172,
	0x3c03e4d1, 0x4b04d447, 0xd20d85fd, 0xa50ab56b, 0x35b5a8fa, 0x42b2986c,
	0xdbbbc9d6, 0xacbcf940, 0x32d86ce3, 0x45df5c75, 0xdcd60dcf, 0xabd13d59,
	0x26d930ac, 0x51de003a, 0xc8d75180, 0xbfd06116, 0x21b4f4b5, 0x56b3c423,
	0xcfba9599, 0xb8bda50f, 0x2802b89e, 0x5f058808, 0xc60cd9b2, 0xb10be924,
	0x2f6f7c87, 0x58684c11, 0xc1611dab, 0xb6662d3d, 0x76dc4190, 0x01db7106,
	0x98d220bc, 0xefd5102a, 0x71b18589, 0x06b6b51f, 0x9fbfe4a5, 0xe8b8d433,
	0x7807c9a2, 0x0f00f934, 0x9609a88e, 0xe10e9818, 0x7f6a0dbb, 0x086d3d2d,
	0x91646c97, 0xe6635c01, 0x6b6b51f4, 0x1c6c6162, 0x856530d8, 0xf262004e,
	0x6c0695ed, 0x1b01a57b, 0x8208f4c1, 0xf50fc457, 0x65b0d9c6, 0x12b7e950,
	0x8bbeb8ea, 0xfcb9887c, 0x62dd1ddf, 0x15da2d49, 0x8cd37cf3, 0xfbd44c65,
	0x4db26158, 0x3ab551ce, 0xa3bc0074, 0xd4bb30e2, 0x4adfa541, 0x3dd895d7,
	0xa4d1c46d, 0xd3d6f4fb, 0x4369e96a, 0x346ed9fc, 0xad678846, 0xda60b8d0,
	0x44042d73, 0x33031de5, 0xaa0a4c5f, 0xdd0d7cc9, 0x5005713c, 0x270241aa,
	0xbe0b1010, 0xc90c2086, 0x5768b525, 0x206f85b3, 0xb966d409, 0xce61e49f,
	0x5edef90e, 0x29d9c998, 0xb0d09822, 0xc7d7a8b4, 0x59b33d17, 0x2eb40d81,
	0xb7bd5c3b, 0xc0ba6cad, 0xedb88320, 0x9abfb3b6, 0x03b6e20c, 0x74b1d29a,
	0xead54739, 0x9dd277af, 0x04db2615, 0x73dc1683, 0xe3630b12, 0x94643b84,
	0x0d6d6a3e, 0x7a6a5aa8, 0xe40ecf0b, 0x9309ff9d, 0x0a00ae27, 0x7d079eb1,
	0xf00f9344, 0x8708a3d2, 0x1e01f268, 0x6906c2fe, 0xf762575d, 0x806567cb,
	0x196c3671, 0x6e6b06e7, 0xfed41b76, 0x89d32be0, 0x10da7a5a, 0x67dd4acc,
	0xf9b9df6f, 0x8ebeeff9, 0x17b7be43, 0x60b08ed5, 0xd6d6a3e8, 0xa1d1937e,
	0x38d8c2c4, 0x4fdff252, 0xd1bb67f1, 0xa6bc5767, 0x3fb506dd, 0x48b2364b,
	0xd80d2bda, 0xaf0a1b4c, 0x36034af6, 0x41047a60, 0xdf60efc3, 0xa867df55,
	0x316e8eef, 0x4669be79, 0xcb61b38c, 0xbc66831a, 0x256fd2a0, 0x5268e236,
	0xcc0c7795, 0xbb0b4703, 0x220216b9, 0x5505262f, 0xc5ba3bbe, 0xb2bd0b28,
	0x2bb45a92, 0x5cb36a04, 0xc2d7ffa7, 0xb5d0cf31, 0x2cd99e8b, 0x5bdeae1d,
	0x9b64c2b0, 0xec63f226, 0x756aa39c, 0x026d930a, 0x9c0906a9, 0xeb0e363f,
	0x72076785, 0x05005713, 0x95bf4a82, 0xe2b87a14, 0x7bb12bae, 0x0cb61b38,
	0x92d28e9b, 0xe5d5be0d, 0x7cdcefb7, 0x0bdbdf21, 0x86d3d2d4, 0xf1d4e242,
	0x68ddb3f8, 0x1fda836e, 0x81be16cd, 0xf6b9265b, 0x6fb077e1, 0x18b74777,
	0x88085ae6, 0xff0f6a70, 0x66063bca, 0x11010b5c, 0x8f659eff, 0xf862ae69,
	0x616bffd3, 0x166ccf45, 0xa00ae278, 0xd70dd2ee, 0x4e048354, 0x3903b3c2,
	0xa7672661, 0xd06016f7, 0x4969474d, 0x3e6e77db, 0xaed16a4a, 0xd9d65adc,
	0x40df0b66, 0x37d83bf0, 0xa9bcae53, 0xdebb9ec5, 0x47b2cf7f, 0x30b5ffe9,
	0xbdbdf21c, 0xcabac28a, 0x53b39330, 0x24b4a3a6, 0xbad03605, 0xcdd70693,
	0x54de5729, 0x23d967bf, 0xb3667a2e, 0xc4614ab8, 0x5d681b02, 0x2a6f2b94,
	0xb40bbe37, 0xc30c8ea1, 0x5a05df1b, 0x2d02ef8d,
};

static __always_inline __u32 crc32_bytes(__u32 crc, const __u8 *buf, __u32 n)
{
	for (__u32 i = 0; i < ICRC_CHUNK; i++) {
		if (i >= n)
			break;
		crc = mrc_crc32_table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
	}
	return crc;
}

/* Where a walk over the packet stands; ctx is the skb or the xdp_md. */
struct icrc_walk {
	void *ctx;
	__u32 off;
	__u32 end;
	__u32 crc;
	int err;
};

/* How many bytes the next chunk takes; 0 when the walk is done. */
static __always_inline __u32 icrc_chunk_len(const struct icrc_walk *w)
{
	__u32 n;

	if (w->off >= w->end)
		return 0;
	n = w->end - w->off;
	return n > ICRC_CHUNK ? ICRC_CHUNK : n;
}

static long icrc_chunk_skb(__u32 index, void *data)
{
	struct icrc_walk *w = data;
	__u8 buf[ICRC_CHUNK];
	__u32 n = icrc_chunk_len(w);

	if (n < 1 || n > ICRC_CHUNK)
		return 1;
	if (bpf_skb_load_bytes(w->ctx, w->off, buf, n)) {
		w->err = 1;
		return 1;
	}
	w->crc = crc32_bytes(w->crc, buf, n);
	w->off += n;
	return 0;
}

static long icrc_chunk_xdp(__u32 index, void *data)
{
	struct icrc_walk *w = data;
	__u8 buf[ICRC_CHUNK];
	__u32 n = icrc_chunk_len(w);

	if (n < 1 || n > ICRC_CHUNK)
		return 1;
	if (bpf_xdp_load_bytes(w->ctx, w->off, buf, n)) {
		w->err = 1;
		return 1;
	}
	w->crc = crc32_bytes(w->crc, buf, n);
	w->off += n;
	return 0;
}

/*
 * The invariant fields of IP, UDP and BTH, in buf after the LRH bytes,
 * with the variant ones set to all ones. Returns the bytes to sum.
 */
static __always_inline __u32 icrc_mask_headers(__u8 *buf, __u16 l3_proto)
{
	__u8 *ip = buf + ICRC_LRH_LEN, *udp, *bth;
	__u32 ip_len;

	__builtin_memset(buf, 0xff, ICRC_LRH_LEN);
	if (l3_proto == ETH_P_IP) {
		ip_len = ICRC_IP4_LEN;
		ip[1] = 0xff;			/* TOS: DSCP and ECN */
		ip[8] = 0xff;			/* TTL */
		ip[10] = ip[11] = 0xff;		/* header checksum */
	} else {
		ip_len = ICRC_IP6_LEN;
		ip[0] |= 0x0f;			/* traffic class, flow label */
		ip[1] = ip[2] = ip[3] = 0xff;
		ip[7] = 0xff;			/* hop limit */
	}
	udp = ip + ip_len;
	udp[6] = udp[7] = 0xff;			/* UDP checksum */
	bth = udp + 8;
	bth[4] = 0xff;				/* resv8a (FECN/BECN) */
	return ICRC_LRH_LEN + ip_len + 8 + MRC_ICRC_BTH_LEN;
}

/*
 * The ICRC of the packet whose UDP header is at l4->l4_off and whose
 * trailer is the last 4 bytes of its udp_len bytes. is_xdp picks the
 * loader. Returns 0 and the CRC in *out, or -1 (not IPv4 without options
 * or IPv6 without extension headers, too short, load failed).
 */
static __always_inline int icrc_compute(void *ctx, int is_xdp,
					const struct l4_info *l4,
					__u32 udp_len, __u32 *out)
{
	__u8 hdr[ICRC_HDR_MAX];
	__u32 ip_len = l4->l4_off - l4->l3_off, n;
	struct icrc_walk w = { .ctx = ctx };
	int err;

	if (udp_len < 8 + MRC_ICRC_BTH_LEN + MRC_ICRC_LEN)
		return -1;
	if (l4->l3_proto == ETH_P_IP ? ip_len != ICRC_IP4_LEN :
	    ip_len != ICRC_IP6_LEN)
		return -1;
	/* Constant sizes per family: the verifier wants known lengths. */
	if (ip_len == ICRC_IP4_LEN)
		err = is_xdp ? bpf_xdp_load_bytes(ctx, l4->l3_off, hdr + ICRC_LRH_LEN,
						  ICRC_IP4_LEN + 8 + MRC_ICRC_BTH_LEN) :
			bpf_skb_load_bytes(ctx, l4->l3_off, hdr + ICRC_LRH_LEN,
					   ICRC_IP4_LEN + 8 + MRC_ICRC_BTH_LEN);
	else
		err = is_xdp ? bpf_xdp_load_bytes(ctx, l4->l3_off, hdr + ICRC_LRH_LEN,
						  ICRC_IP6_LEN + 8 + MRC_ICRC_BTH_LEN) :
			bpf_skb_load_bytes(ctx, l4->l3_off, hdr + ICRC_LRH_LEN,
					   ICRC_IP6_LEN + 8 + MRC_ICRC_BTH_LEN);
	if (err)
		return -1;
	n = icrc_mask_headers(hdr, l4->l3_proto);
	w.crc = crc32_bytes(0xffffffff, hdr, n);

	w.off = l4->l4_off + 8 + MRC_ICRC_BTH_LEN;
	w.end = l4->l4_off + udp_len - MRC_ICRC_LEN;
	n = (w.end - w.off) / ICRC_CHUNK + 1;
	bpf_loop(n, is_xdp ? icrc_chunk_xdp : icrc_chunk_skb, &w, 0);
	if (w.err || w.off != w.end)
		return -1;
	*out = ~w.crc;
	return 0;
}

/* The trailer's bytes: the CRC least significant byte first. */
static __always_inline void icrc_to_wire(__u32 crc, __u8 *b)
{
	b[0] = (__u8)crc;
	b[1] = (__u8)(crc >> 8);
	b[2] = (__u8)(crc >> 16);
	b[3] = (__u8)(crc >> 24);
}

static __always_inline int skb_udp_len(struct __sk_buff *skb,
				       const struct l4_info *l4, __u32 *len)
{
	__u16 v;

	if (bpf_skb_load_bytes(skb, l4->l4_off + offsetof(struct udphdr, len), &v, 2))
		return -1;
	*len = bpf_ntohs(v);
	return 0;
}

/*
 * TC: write the ICRC over libmrc's 4 placeholder bytes, and fix the UDP
 * checksum, which covers them. The trailer may start at an odd offset
 * (payloads of any length): the one's-complement difference is then
 * byte-swapped, as a sum of bytes shifted by one is. Returns 0 or -1.
 */
static __always_inline int icrc_fill(struct __sk_buff *skb,
				     const struct l4_info *l4)
{
	__u32 udp_len, crc, off, oldw = 0, neww = 0;
	__u8 b[4];
	__s64 diff;
	__u32 d;

	if (skb_udp_len(skb, l4, &udp_len) ||
	    icrc_compute(skb, 0, l4, udp_len, &crc))
		return -1;
	off = l4->l4_off + udp_len - MRC_ICRC_LEN;
	if (bpf_skb_load_bytes(skb, off, &oldw, 4))
		return -1;
	icrc_to_wire(crc, b);
	__builtin_memcpy(&neww, b, 4);
	diff = bpf_csum_diff(&oldw, 4, &neww, 4, 0);
	if (diff < 0)
		return -1;
	d = (__u32)diff;
	d = (d & 0xffff) + (d >> 16);
	d = (d & 0xffff) + (d >> 16);
	if ((udp_len - MRC_ICRC_LEN) & 1)
		d = ((d & 0xff) << 8) | (d >> 8);
	if (bpf_l4_csum_replace(skb, l4->l4_off + offsetof(struct udphdr, check),
				0, d, BPF_F_MARK_MANGLED_0))
		return -1;
	return bpf_skb_store_bytes(skb, off, b, 4, 0) ? -1 : 0;
}

/* XDP: is the trailer the packet's ICRC? 1 yes, 0 no (or unreadable). */
static __always_inline int icrc_good_xdp(struct xdp_md *ctx,
					 const struct l4_info *l4, __u32 udp_len)
{
	__u8 want[4], got[4];
	__u32 crc;

	if (icrc_compute(ctx, 1, l4, udp_len, &crc))
		return 0;
	if (bpf_xdp_load_bytes(ctx, l4->l4_off + udp_len - MRC_ICRC_LEN, got, 4))
		return 0;
	icrc_to_wire(crc, want);
	return want[0] == got[0] && want[1] == got[1] &&
	       want[2] == got[2] && want[3] == got[3];
}

#endif /* MRC_BPF_ICRC_H */
