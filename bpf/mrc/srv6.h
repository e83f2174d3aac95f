/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * SRv6 EVs (docs/WIRE.md section 13): the envelope around an MRC packet
 * whose QP uses MRC_EVF_SRV6. The EV's high 16 bits are a micro-SID
 * (uSID) naming the node the packet must cross, the spine; the carrier
 * address is the QP's locator block (32 bits), the uSID, then zeros (End
 * of carrier). The envelope, 80 bytes in front of the inner IPv6 header:
 *
 *   outer IPv6: source = inner source, destination = the carrier,
 *               next header 43, hop limit and first word (traffic class,
 *               flow label) = the inner packet's
 *   SRH:        next header 41 (IPv6), 2 segments: [0] the inner
 *               destination, [1] the carrier; Segments Left 1
 *
 * The fabric routes the carrier to the spine owning the uSID, whose End
 * (with NEXT-C-SID: the argument after the uSID is empty) moves to
 * segment 0: the destination host. There the XDP program takes the
 * envelope out (srv6_take_out) and handles the inner packet as any other;
 * TC puts it on (srv6_put_on_skb), and XDP puts it back on the answer to
 * an EV probe (srv6_put_on_xdp), so the answer returns over the same uSID.
 */
#ifndef MRC_BPF_SRV6_H
#define MRC_BPF_SRV6_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "parsing.h"
#include "mrc/parse.h"

#define SRV6_NEXTHDR_ROUTING	43
#define SRV6_NEXTHDR_IPV6	41
#define SRV6_NEXTHDR_UDP	17
/* A routing header's length in 8-byte units past its first 8 bytes. */
#define SRV6_HDRLEN_UNITS	(MRC_SRV6_SEGS * 16 / 8)
/* The longest SRH looked at when telling whether the inner packet is MRC. */
#define SRV6_HDRLEN_MAX		32

struct srv6_envelope {
	struct ipv6hdr ip6;
	__u8	nexthdr;
	__u8	hdrlen;
	__u8	type;
	__u8	segments_left;
	__u8	last_entry;
	__u8	flags;
	__u16	tag;
	__u8	seg[MRC_SRV6_SEGS][16];
};
_Static_assert(sizeof(struct srv6_envelope) == MRC_SRV6_ENCAP_LEN,
	       "the envelope is MRC_SRV6_ENCAP_LEN bytes");

/* The carrier: block (network order), uSID, the rest zero. */
static __always_inline void srv6_carrier(__u8 out[16], __u32 block, __u16 usid)
{
	__u16 usid_be = bpf_htons(usid);

	__builtin_memset(out, 0, 16);
	__builtin_memcpy(out, &block, 4);
	__builtin_memcpy(out + 4, &usid_be, 2);
}

/*
 * Fill the envelope in place: env->ip6 holds a copy of the inner IPv6
 * header, which becomes the outer one. Its payload length is the inner
 * one's plus the inner header and the SRH: -1 if that overflows.
 */
static __always_inline int srv6_envelope_fill(struct srv6_envelope *env,
					      __u32 block, __u16 usid)
{
	__u32 len = bpf_ntohs(env->ip6.payload_len) + sizeof(env->ip6) +
		    MRC_SRV6_SRH_LEN;

	if (len > 0xffff || !usid || !block)
		return -1;
	env->ip6.payload_len = bpf_htons((__u16)len);
	env->ip6.nexthdr = SRV6_NEXTHDR_ROUTING;
	env->nexthdr = SRV6_NEXTHDR_IPV6;
	env->hdrlen = SRV6_HDRLEN_UNITS;
	env->type = MRC_SRV6_ROUTING_TYPE;
	env->segments_left = MRC_SRV6_SEGS - 1;
	env->last_entry = MRC_SRV6_SEGS - 1;
	env->flags = 0;
	env->tag = 0;
	__builtin_memcpy(env->seg[0], &env->ip6.daddr, 16);
	srv6_carrier(env->seg[1], block, usid);
	__builtin_memcpy(&env->ip6.daddr, env->seg[1], 16);
	return 0;
}

/*
 * TC: put an outgoing IPv6 packet (already stamped) in its envelope. The
 * room goes right after Ethernet; the kernel learns that the old IPv6
 * header is now an inner one (ENCAP_L3_IPV6), so a UDP GSO burst is
 * still cut into packets, each in its own envelope, with the segment size
 * kept (FIXED_GSO: the MRC packets keep their size, the envelope comes on
 * top). 0 = done, -1 = not possible (the packet is unchanged).
 *
 * A global function: verified once, not at each of its three callers
 * (data, acknowledgements, EV probes), and its 80-byte envelope is not
 * on their stacks.
 */
__noinline int srv6_put_on_skb(struct __sk_buff *skb, __u32 ev, __u32 block)
{
	struct srv6_envelope env;

	if (!skb ||
	    bpf_skb_load_bytes(skb, sizeof(struct ethhdr), &env.ip6, sizeof(env.ip6)) ||
	    env.ip6.version != 6 ||
	    srv6_envelope_fill(&env, block, (__u16)(ev >> 16)))
		return -1;
	if (bpf_skb_adjust_room(skb, MRC_SRV6_ENCAP_LEN, BPF_ADJ_ROOM_MAC,
				BPF_F_ADJ_ROOM_ENCAP_L3_IPV6 |
				BPF_F_ADJ_ROOM_FIXED_GSO))
		return -1;
	if (bpf_skb_store_bytes(skb, sizeof(struct ethhdr), &env, sizeof(env), 0))
		return -1;
	bpf_set_hash_invalid(skb);
	return 0;
}

static __always_inline int addr_eq(const void *a, const void *b)
{
	const __u32 *x = a, *y = b;

	return x[0] == y[0] && x[1] == y[1] && x[2] == y[2] && x[3] == y[3];
}

/*
 * Is the envelope exactly the one our TC builds, after the spine's End:
 * two segments, Segments Left 0, the destination segment 0, the carrier
 * a block and one uSID, the inner packet IPv6/UDP between the same
 * addresses, the outer payload length the frame's? The source is checked
 * against the inner one so the envelope cannot pass a packet off as
 * coming from anyone else; the inner source is checked as always.
 */
static __always_inline int srv6_envelope_ok(const struct srv6_envelope *env,
					    const struct ipv6hdr *in,
					    __u32 frame_ip_payload)
{
	const __u32 *carrier = (const __u32 *)env->seg[1];

	return env->hdrlen == SRV6_HDRLEN_UNITS &&
	       env->last_entry == MRC_SRV6_SEGS - 1 &&
	       env->segments_left == 0 &&
	       bpf_ntohs(env->ip6.payload_len) == frame_ip_payload &&
	       addr_eq(env->seg[0], &env->ip6.daddr) &&
	       carrier[0] && (carrier[1] & bpf_htonl(0xffff0000)) &&
	       !(carrier[1] & bpf_htonl(0xffff)) && !carrier[2] && !carrier[3] &&
	       in->version == 6 && in->nexthdr == SRV6_NEXTHDR_UDP &&
	       addr_eq(&in->saddr, &env->ip6.saddr) &&
	       addr_eq(&in->daddr, &env->ip6.daddr);
}

/* Outer CE on an ECN-capable inner packet: the inner one is marked too. */
static __always_inline void srv6_copy_ce(const struct ipv6hdr *out,
					 struct ipv6hdr *in)
{
	const __u8 *o = (const __u8 *)out;
	__u8 *i = (__u8 *)in;

	if ((o[1] & 0x30) == 0x30 && (i[1] & 0x30))
		i[1] |= 0x30;
}

/*
 * XDP: take the SRv6 envelope off an MRC packet. 0 = no envelope (or not
 * around an MRC packet: left to the stack), 1 = taken off (p->srv6_*
 * name the carrier), -reason = an MRC packet in a broken envelope or one
 * too short to tell: counted and dropped.
 */
static __always_inline int srv6_take_out(struct xdp_md *ctx, struct mrc_pkt *p)
{
	void *data = (void *)(long)ctx->data, *end = (void *)(long)ctx->data_end;
	struct ethhdr eth, *e = data;
	struct srv6_envelope *env = (void *)(e + 1);
	struct ipv6hdr *in;
	struct udphdr *udp;
	__u32 inner_off, frame_len = ctx->data_end - ctx->data;

	if ((void *)(e + 1) > end || e->h_proto != bpf_htons(ETH_P_IPV6))
		return 0;
	if ((void *)&env->ip6 + sizeof(env->ip6) > end ||
	    env->ip6.nexthdr != SRV6_NEXTHDR_ROUTING)
		return 0;
	if ((void *)&env->seg[0] > end)
		return -MRC_DROP_MALFORMED;	/* a routing header cut short */
	if (env->type != MRC_SRV6_ROUTING_TYPE || env->nexthdr != SRV6_NEXTHDR_IPV6)
		return 0;
	if (env->hdrlen > SRV6_HDRLEN_MAX)
		return 0;	/* longer than any we send: not ours */
	inner_off = sizeof(struct ipv6hdr) + 8 + env->hdrlen * 8;
	in = (void *)env + (inner_off & 0x1ff);
	udp = (void *)(in + 1);
	if ((void *)(udp + 1) > end)
		return -MRC_DROP_MALFORMED;	/* truncated: cannot even tell */
	if (in->nexthdr != SRV6_NEXTHDR_UDP || udp->dest != bpf_htons(mrc_port()))
		return 0;	/* someone else's tunnel */
	if ((void *)(env + 1) > end ||
	    !srv6_envelope_ok(env, in, frame_len - sizeof(*e) - sizeof(env->ip6)))
		return -MRC_DROP_MALFORMED;

	p->srv6_block = *(__u32 *)env->seg[1];
	p->srv6_usid = bpf_ntohs(*(__u16 *)(env->seg[1] + 4));
	srv6_copy_ce(&env->ip6, in);
	__builtin_memcpy(&eth, e, sizeof(eth));
	if (bpf_xdp_adjust_head(ctx, MRC_SRV6_ENCAP_LEN))
		return -MRC_DROP_MALFORMED;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	if (data + sizeof(eth) > end)
		return -MRC_DROP_MALFORMED;
	__builtin_memcpy(data, &eth, sizeof(eth));
	return 1;
}

/*
 * XDP: put the envelope back on an answer built in place (an EV probe's),
 * over the uSID the request came by: the answer crosses the same spine.
 * Must be the last thing done to the frame (it moves the packet start).
 * Built in the frame itself: the old Ethernet header moves to the new
 * start, the inner IPv6 header is copied into the room and completed.
 * 0 = done, -1 = no room or no frame.
 */
static __always_inline int srv6_put_on_xdp(struct xdp_md *ctx, __u32 block,
					   __u16 usid)
{
	struct srv6_envelope *env;
	struct ethhdr *old_eth;
	struct ipv6hdr *in;
	void *data, *end;

	if (bpf_xdp_adjust_head(ctx, -MRC_SRV6_ENCAP_LEN))
		return -1;
	data = (void *)(long)ctx->data;
	end = (void *)(long)ctx->data_end;
	env = data + sizeof(struct ethhdr);
	old_eth = data + MRC_SRV6_ENCAP_LEN;
	in = (void *)(old_eth + 1);
	if ((void *)(in + 1) > end)
		return -1;
	__builtin_memmove(data, old_eth, sizeof(*old_eth));
	__builtin_memcpy(&env->ip6, in, sizeof(*in));
	return srv6_envelope_fill(env, block, usid);
}

#endif /* MRC_BPF_SRV6_H */
