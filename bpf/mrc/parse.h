/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Hook-neutral packet parsing, shared by XDP (receive) and TC (send): one
 * parse of the MRC headers into struct mrc_pkt, and one way to find a
 * packet's addresses, its QP (by our QP number on receive, by the peer's
 * QP and address on send) and its plane (by interface).
 */
#ifndef MRC_BPF_PARSE_H
#define MRC_BPF_PARSE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "parsing.h"
#include "mrc/maps.h"

/* The UDP port of MRC: mrcd's setting, else the default. */
static __always_inline __u16 mrc_port(void)
{
	__u32 zero = 0;
	struct mrc_global_cfg *cfg = bpf_map_lookup_elem(&mrc_cfg, &zero);

	if (cfg && cfg->udp_port)
		return cfg->udp_port;
	return MRC_UDP_PORT_DEFAULT;
}

/*
 * One MRC packet, as both hooks see it (cilium's context shim idea: the
 * parsing code never names the hook). data/end are the bytes the hook can
 * read: the whole frame in XDP, the skb's linear part in TC.
 */
struct mrc_pkt {
	void *data;
	void *end;
	struct l4_info l4;
	struct udphdr *udp;
	struct mrc_bth *bth;
	__u32 payload_len;	/* UDP payload, MRC headers included */
	__u32 qpn;		/* BTH dqpn: ours on receive, the peer's on send */
	__u32 psn;		/* 24 bits */
	__u8 opcode;
	__u8 flags;
	__u32 ifindex;		/* where it arrived / leaves: tells the plane */
	__u32 srv6_block;	/* came in an SRv6 envelope (mrc/srv6.h): its block */
	__u16 srv6_usid;	/* ... and uSID; 0 = no envelope */
	void *ctx;		/* struct xdp_md * or struct __sk_buff *, for helpers */
};

static __always_inline void pkt_from_xdp(struct mrc_pkt *p, struct xdp_md *ctx)
{
	p->data = (void *)(long)ctx->data;
	p->end = (void *)(long)ctx->data_end;
	p->ifindex = ctx->ingress_ifindex;
	p->ctx = ctx;
}

static __always_inline void pkt_from_skb(struct mrc_pkt *p, struct __sk_buff *skb)
{
	p->data = (void *)(long)skb->data;
	p->end = (void *)(long)skb->data_end;
	p->ifindex = skb->ifindex;
	p->ctx = skb;
}

/* What the hook can see of a packet (parse_mrc()'s second argument). */
enum pkt_view {
	/*
	 * TC: only the skb's linear part is readable (the payload may sit in
	 * pages), so the UDP length cannot be checked against it; our own
	 * stack wrote it anyway.
	 */
	PKT_HEADERS	= 0,
	PKT_WHOLE_FRAME	= 1,	/* XDP: the UDP length must fit the frame */
};

/*
 * Parse up to the BTH; 1 = an MRC packet, 0 = not ours, <0 = drop reason
 * (whole frames only: with PKT_HEADERS a short packet is "not ours").
 */
static __always_inline int parse_mrc(struct mrc_pkt *p, enum pkt_view view)
{
	struct cursor c = { .pos = p->data, .end = p->end };
	__u32 udp_len;

	if (parse_l3(&c, p->data, &p->l4) || !p->l4.is_udp)
		return 0;
	p->udp = cursor_take(&c, sizeof(*p->udp));
	if (!p->udp || p->udp->dest != bpf_htons(mrc_port()))
		return 0;
	udp_len = bpf_ntohs(p->udp->len);
	if (view == PKT_WHOLE_FRAME &&
	    (udp_len < sizeof(struct udphdr) ||
	     (void *)p->udp + udp_len > p->end))
		return -MRC_DROP_MALFORMED;
	p->payload_len = udp_len - sizeof(struct udphdr);
	p->bth = cursor_take(&c, sizeof(*p->bth));
	if (!p->bth)
		return view == PKT_WHOLE_FRAME ? -MRC_DROP_MALFORMED : 0;
	if (view == PKT_WHOLE_FRAME && p->payload_len < sizeof(struct mrc_bth))
		return -MRC_DROP_MALFORMED;
	p->opcode = p->bth->opcode;
	p->qpn = bpf_ntohl(p->bth->dqpn) & MRC_QPN_MASK;
	p->psn = bpf_ntohl(p->bth->psn) & MRC_PSN_MASK;
	p->flags = bpf_ntohl(p->bth->psn) >> 24;
	return 1;
}

/* Which address of a packet packet_addr() reads. */
enum pkt_addr_of {
	PKT_SRC,
	PKT_DST,
};

/*
 * A packet's source or destination as IPv6 or IPv4-mapped IPv6, as peers
 * are stored. parse_l3() takes no VLAN tags, so the IP header is right
 * after Ethernet.
 */
static __always_inline int packet_addr(const struct mrc_pkt *p,
				       enum pkt_addr_of which, __u32 addr[4])
{
	if (p->l4.l3_proto == ETH_P_IP) {
		struct iphdr *ip = p->data + sizeof(struct ethhdr);

		if ((void *)(ip + 1) > p->end)
			return -1;
		addr[0] = 0;
		addr[1] = 0;
		addr[2] = bpf_htonl(0x0000ffff);
		addr[3] = which == PKT_SRC ? ip->saddr : ip->daddr;
	} else {
		struct ipv6hdr *ip6 = p->data + sizeof(struct ethhdr);

		if ((void *)(ip6 + 1) > p->end)
			return -1;
		__builtin_memcpy(addr, which == PKT_SRC ? &ip6->saddr : &ip6->daddr, 16);
	}
	return 0;
}

static __always_inline int is_peer_address(const struct mrc_qp_info *info,
					   const __u32 src[4])
{
	__u32 n = info->n_peer_addrs;

	for (__u32 i = 0; i < MRC_MAX_PEER_ADDRS; i++) {
		const __u32 *a = (const __u32 *)info->peer_addrs[i];

		if (i >= n)
			break;
		if (a[0] == src[0] && a[1] == src[1] && a[2] == src[2] &&
		    a[3] == src[3])
			return 1;
	}
	return 0;
}

/* Did the packet come from one of the QP's peer addresses? */
static __always_inline int from_peer(const struct mrc_pkt *p,
				     const struct mrc_qp_info *info)
{
	__u32 src[4];

	return !packet_addr(p, PKT_SRC, src) && is_peer_address(info, src);
}

/*
 * Does the packet carry the QP's connection key? Checked for every packet
 * addressed to a QP right after its source, before anything it says
 * changes state: an address can be forged or shared (an unprivileged
 * process on the peer host), the key is known only to the two QPs. An
 * interop QP (no MRC_QP_F_KEYED) takes any key bytes.
 */
static __always_inline int has_qp_key(const struct mrc_pkt *p,
				      const struct mrc_qp_info *info)
{
	return !(info->flags & MRC_QP_F_KEYED) ||
	       mrc_bth_key(p->bth) == info->local_key;
}

/*
 * Is an outgoing packet the QP's own (TC)? Any local process may send to
 * the MRC port; only the QP's owner knows the peer's key. A keyed QP's
 * state (send log, EV rotation, counters) is not touched for the rest.
 */
static __always_inline int is_own_packet(const struct mrc_pkt *p,
					 const struct mrc_qp_info *info)
{
	return !(info->flags & MRC_QP_F_KEYED) ||
	       mrc_bth_key(p->bth) == info->peer_key;
}

/* The QP a packet names, or NULL (counted) when it is not ours. */
static __always_inline struct mrc_qp_info *lookup_qp(__u32 qpn, __u32 *slot)
{
	struct mrc_qp_info *info;

	if (!mrc_qpn_valid(qpn))
		return NULL;
	*slot = mrc_qpn_to_slot(qpn);
	info = bpf_map_lookup_elem(&mrc_qps, slot);
	if (!info || info->state == MRC_QPS_RESET)
		return NULL;
	return info;
}

/*
 * The local QP an outgoing packet belongs to: by peer QP (the BTH's
 * destination) and the peer's address (the packet's destination).
 */
static __always_inline int outgoing_qp(const struct mrc_pkt *p, __u32 *slot)
{
	struct mrc_peer_key key = {};
	__u32 *qpn;

	key.remote_qpn = p->qpn;
	if (packet_addr(p, PKT_DST, (__u32 *)key.addr))
		return -1;
	qpn = bpf_map_lookup_elem(&mrc_peers, &key);
	if (!qpn || !mrc_qpn_valid(*qpn))
		return -1;
	*slot = mrc_qpn_to_slot(*qpn);
	return 0;
}

static __always_inline __u32 plane_of_ifindex(__u32 ifindex)
{
	__u32 *plane = bpf_map_lookup_elem(&mrc_plane_of, &ifindex);

	return plane ? *plane : 0;
}

#endif /* MRC_BPF_PARSE_H */
