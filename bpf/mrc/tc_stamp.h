/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Rewrites of an outgoing packet (TC): the EV stamp (UDP source port, and
 * over IPv6 the flow label: the EV's high bits for STEV, else 0) and the move to another plane (addresses
 * rewritten, the caller redirects). Checksums are fixed by the helpers.
 */
#ifndef MRC_BPF_TC_STAMP_H
#define MRC_BPF_TC_STAMP_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "parsing.h"
#include "mrc/maps.h"

/*
 * The whole IPv6 flow label is the EV's: its high 16 bits for STEV (in the
 * label's low 16 bits), 0 for UDP EVs. ECMP hashes the label with the
 * ports, so nothing the sending socket chose (an automatic label) may stay
 * in it: path discovery's probes carry exactly this label. No checksum
 * covers the label.
 */
static __always_inline int stamp_flow_label(struct __sk_buff *skb, __u32 ev,
					    __u8 format)
{
	__u32 off = sizeof(struct ethhdr), word, label;

	label = format == MRC_EVF_STEV ? ev >> 16 : 0;
	if (bpf_skb_load_bytes(skb, off, &word, 4))
		return -1;
	word = (word & bpf_htonl(0xfff00000)) | bpf_htonl(label);
	return bpf_skb_store_bytes(skb, off, &word, 4, 0);
}

static __always_inline int stamp_ev(struct __sk_buff *skb,
				    const struct l4_info *l4, __u32 ev,
				    __u8 format)
{
	__u32 port_off = l4->l4_off + offsetof(struct udphdr, source);
	__u32 csum_off = l4->l4_off + offsetof(struct udphdr, check);
	__u16 old_port, new_port = bpf_htons((__u16)ev);

	if (bpf_skb_load_bytes(skb, port_off, &old_port, 2))
		return -1;
	if (old_port != new_port) {
		if (bpf_l4_csum_replace(skb, csum_off, old_port, new_port,
					BPF_F_MARK_MANGLED_0 | 2))
			return -1;
		if (bpf_skb_store_bytes(skb, port_off, &new_port, 2, 0))
			return -1;
	}
	if (l4->l3_proto == ETH_P_IPV6 && stamp_flow_label(skb, ev, format))
		return -1;
	/* The stack hashed the old port: make ECMP look at the new one. */
	bpf_set_hash_invalid(skb);
	return 0;
}

/* Replace one IPv4 address, fixing the IP and (pseudo-header) UDP sums. */
static __always_inline int rewrite_addr4(struct __sk_buff *skb,
					 const struct l4_info *l4, __u32 off,
					 __u32 new_addr)
{
	__u32 old_addr;

	if (bpf_skb_load_bytes(skb, off, &old_addr, 4))
		return -1;
	if (old_addr == new_addr)
		return 0;
	if (bpf_l3_csum_replace(skb, sizeof(struct ethhdr) +
				offsetof(struct iphdr, check), old_addr, new_addr, 4) ||
	    bpf_l4_csum_replace(skb, l4->l4_off + offsetof(struct udphdr, check),
				old_addr, new_addr,
				BPF_F_PSEUDO_HDR | BPF_F_MARK_MANGLED_0 | 4))
		return -1;
	return bpf_skb_store_bytes(skb, off, &new_addr, 4, 0);
}

static __always_inline int rewrite_addr6(struct __sk_buff *skb,
					 const struct l4_info *l4, __u32 off,
					 const __u8 *new_addr)
{
	__u32 old_addr[4], new[4];
	__s64 diff;

	if (bpf_skb_load_bytes(skb, off, old_addr, 16))
		return -1;
	__builtin_memcpy(new, new_addr, 16);
	diff = bpf_csum_diff(old_addr, 16, new, 16, 0);
	if (diff < 0 ||
	    bpf_l4_csum_replace(skb, l4->l4_off + offsetof(struct udphdr, check),
				0, (__u32)diff,
				BPF_F_PSEUDO_HDR | BPF_F_MARK_MANGLED_0))
		return -1;
	return bpf_skb_store_bytes(skb, off, new, 16, 0);
}

static __always_inline int peer_is_v4mapped(const __u8 *a)
{
	const __u32 *w = (const __u32 *)a;

	return w[0] == 0 && w[1] == 0 && w[2] == bpf_htonl(0x0000ffff);
}

/*
 * Move a packet to another plane: that plane's source address and the
 * peer's address on that plane; the caller then redirects it with
 * bpf_redirect_neigh(), which routes it on the plane's interface and fills
 * in the MACs (bpf_fib_lookup would need IP forwarding on the host).
 * Returns the plane's ifindex, or 0 to send the packet where it was going
 * (plane not configured, family not on that plane).
 */
static __always_inline __u32 move_to_plane(struct __sk_buff *skb,
					   const struct l4_info *l4,
					   const struct mrc_qp_info *info,
					   __u32 plane)
{
	struct mrc_plane *pl;
	__u32 key = plane - 1;
	const __u8 *peer;

	if (plane == 0 || plane > MRC_MAX_PLANES_ABI ||
	    plane > info->n_peer_addrs)
		return 0;
	pl = bpf_map_lookup_elem(&mrc_planes, &key);
	if (!pl || !pl->ifindex)
		return 0;
	peer = info->peer_addrs[key & (MRC_MAX_PLANES_ABI - 1)];

	/* The peer must have an address of the packet's family there. */
	if (peer_is_v4mapped(peer) != (l4->l3_proto == ETH_P_IP))
		return 0;
	if (l4->l3_proto == ETH_P_IP) {
		__u32 src, dst;

		__builtin_memcpy(&src, pl->addr4, 4);
		__builtin_memcpy(&dst, peer + 12, 4);
		if (!src || !dst)
			return 0;
		if (rewrite_addr4(skb, l4, sizeof(struct ethhdr) +
				  offsetof(struct iphdr, saddr), src) ||
		    rewrite_addr4(skb, l4, sizeof(struct ethhdr) +
				  offsetof(struct iphdr, daddr), dst))
			return 0;
	} else {
		__u32 src[4];

		__builtin_memcpy(src, pl->addr6, 16);
		if (!(src[0] | src[1] | src[2] | src[3]))
			return 0;
		if (rewrite_addr6(skb, l4, sizeof(struct ethhdr) +
				  offsetof(struct ipv6hdr, saddr), pl->addr6) ||
		    rewrite_addr6(skb, l4, sizeof(struct ethhdr) +
				  offsetof(struct ipv6hdr, daddr), peer))
			return 0;
	}
	/* Its egress program runs again on the new plane: let it pass. */
	skb->mark = MRC_SKB_MARK_SPRAYED;
	return pl->ifindex;
}

#endif /* MRC_BPF_TC_STAMP_H */
