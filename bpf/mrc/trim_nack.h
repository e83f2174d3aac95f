/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Trimmed DATA answered from XDP.
 *
 * A congested switch may cut an MRC data packet down to its MRC headers
 * and mark the IP DSCP (docs/WIRE.md section 9): 0x2C when it did so in
 * the core, 0x2D at the last hop. Such a header carries nothing to place;
 * all the responder owes the requester is a NACK, at once, so the packet
 * is resent long before any SACK would show it missing. XDP builds that
 * NACK in place of the header and sends it back out of the interface it
 * came in on (XDP_TX): no socket wake-up, no libmrc, no copy.
 *
 * The NACK keeps the data's UDP ports (source = the EV, destination = the
 * MRC port), like the answer to an EV probe, so it crosses the fabric on
 * the EV's return path and lands in the requester's XDP, which takes
 * every packet to the MRC port. The BTH and NACK are built by
 * mrc_wire_nack() (include/mrc/wire_build.h), the builder libmrc's own
 * NACKs share, with these fields:
 *
 *   BTH   opcode NACK, key = the peer QP's connection key
 *         (mrc_qp_info.peer_key; MRC_KEY_INTEROP for an interop QP),
 *         dqpn = the peer's QP (mrc_qp_info.remote_qpn), PSN = the
 *         data's PSN, flags clear
 *   NACK  cack = the responder's cumulative ack (mrc_rx_state.cack, low
 *         24 bits), ev = the data's UDP source port, reason TRIMMED or
 *         TRIMMED_LASTHOP (DSCP 0x2D), m = NONE, ts_echo = the TSETH's
 *         send_ts (0 without one)
 *   IP    addresses and MACs swapped, DSCP 0 and ECN 0 (libmrc's
 *         control packets have DSCP 0), TTL / hop limit 64, lengths for
 *         the 24-byte UDP payload, IPv4 header checksum recomputed
 *   UDP   length 32, full checksum (pseudo-header included) recomputed
 */
#ifndef MRC_BPF_TRIM_NACK_H
#define MRC_BPF_TRIM_NACK_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "mrc/wire_build.h"
#include "parsing.h"
#include "mrc/stats.h"
#include "mrc/parse.h"
#include "mrc/xdp_rewrite.h"

/* handle_data() goes on with the packet: it is not a trimmed header. */
#define TRIM_NOT_TRIMMED	(-1)

#define TRIM_NACK_TTL		64

/* The NACK follows the UDP header: 24 bytes (struct mrc_nack_pkt). */
#define TRIM_NACK_UDP_LEN	(sizeof(struct udphdr) + sizeof(struct mrc_nack_pkt))

/* What the NACK needs from the data header, read before the frame shrinks. */
struct trim_info {
	__u32 sport;	/* UDP source port (the EV), host order */
	__u16 ts_echo;	/* TSETH send_ts, host order; 0 without a TSETH */
	__u8 reason;	/* enum mrc_nack_reason */
	__u8 lasthop;
};

/* Whom the NACK goes to: the peer's QP and its connection key. */
struct trim_dest {
	__u32 qpn;
	__u32 key;
};

/*
 * Is p a trimmed header? Its UDP payload is exactly its MRC headers (no
 * data) while the RETH names a message of length > 0. A zero-length
 * WRITE has no data either, but its RETH says length 0: nothing was cut.
 * Returns 1 (and fills *ti), 0, or -1 when the headers do not fit (the
 * caller checked the lengths already; this is the verifier's check).
 */
static __always_inline int trimmed_header(struct mrc_pkt *p,
					  struct trim_info *ti)
{
	__u32 off = sizeof(struct mrc_bth) + sizeof(struct mrc_meth);
	struct mrc_reth *reth;

	if (p->payload_len != mrc_data_header_len(p->opcode, p->flags))
		return 0;
	ti->ts_echo = 0;
	if (p->flags & MRC_BTH_F_TS) {
		struct mrc_tseth *ts = (void *)p->bth + off;

		if ((void *)(ts + 1) > p->end)
			return -1;
		ti->ts_echo = bpf_ntohs(ts->send_ts);
		off += sizeof(*ts);
	}
	reth = (void *)p->bth + off;
	if ((void *)(reth + 1) > p->end)
		return -1;
	if (!reth->length)
		return 0;
	ti->sport = bpf_ntohs(p->udp->source);
	ti->lasthop = p->l4.tos >> 2 == MRC_DSCP_TRIMMED_LASTHOP;
	ti->reason = ti->lasthop ? MRC_NACK_TRIMMED_LASTHOP : MRC_NACK_TRIMMED;
	return 1;
}

/* One's complement sum of `words` 16-bit words, as they lie in memory. */
static __always_inline __u32 trim_sum16(const void *start, const int words)
{
	const __u16 *w = start;
	__u32 sum = 0;

#pragma unroll
	for (int i = 0; i < words; i++)
		sum += w[i];
	return sum;
}

/* Sums of memory words fold to a checksum that goes back as it is. */
static __always_inline __u16 trim_udp_csum(__u32 sum)
{
	__u16 c = csum_fold32(sum);

	return c ? c : 0xffff;	/* 0 would mean "no checksum" */
}

static __always_inline void trim_fill_nack(struct mrc_nack_pkt *n,
					   const struct trim_info *ti,
					   const struct trim_dest *to,
					   __u32 psn24, __u32 cack)
{
	struct mrc_nack_fields f = {
		.dqpn = to->qpn,
		.psn = psn24,
		.cack = cack,
		.ev = ti->sport,
		.key = to->key,
		.ts_echo = ti->ts_echo,
		.reason = ti->reason,
		.m = MRC_M_NONE,
	};

	mrc_wire_nack(n, &f);
}

/*
 * The NACK's IPv4 header, in place: DSCP and ECN 0 (libmrc's control
 * packets have DSCP 0), its length, TTL 64, header checksum recomputed.
 * Returns the UDP header (NULL when the frame is too short for the NACK)
 * and, in *sum, the pseudo-header's addresses.
 */
static __always_inline struct udphdr *trim_nack_ip4(void *data, void *end,
						    __u32 *sum)
{
	struct iphdr *ip = data + sizeof(struct ethhdr);
	struct udphdr *udp = (void *)(ip + 1);
	struct mrc_nack_pkt *n = (void *)(udp + 1);

	if ((void *)(n + 1) > end)
		return NULL;
	ip->tos = 0;
	ip->tot_len = bpf_htons(sizeof(*ip) + TRIM_NACK_UDP_LEN);
	ip->ttl = TRIM_NACK_TTL;
	ip->check = 0;
	ip->check = csum_fold32(trim_sum16(ip, sizeof(*ip) / 2));
	/* Pseudo-header: addresses, protocol, UDP length. */
	*sum = trim_sum16(&ip->saddr, 4);
	return udp;
}

/* The same for IPv6: traffic class 0, payload length, hop limit 64. */
static __always_inline struct udphdr *trim_nack_ip6(void *data, void *end,
						    __u32 *sum)
{
	struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);
	struct udphdr *udp = (void *)(ip6 + 1);
	struct mrc_nack_pkt *n = (void *)(udp + 1);
	__u8 *b = (__u8 *)ip6;

	if ((void *)(n + 1) > end)
		return NULL;
	/* Traffic class 0, version and flow label kept. */
	b[0] &= 0xf0;
	b[1] &= 0x0f;
	ip6->payload_len = bpf_htons(TRIM_NACK_UDP_LEN);
	ip6->hop_limit = TRIM_NACK_TTL;
	*sum = trim_sum16(&ip6->saddr, 16);
	return udp;
}

/*
 * The UDP header and the NACK behind it (the IP header's helper checked
 * they fit), with the full UDP checksum: `sum` brings the pseudo-header's
 * addresses.
 */
static __always_inline void trim_nack_udp(struct udphdr *udp,
					  const struct trim_info *ti,
					  const struct trim_dest *to,
					  __u32 psn24, __u32 cack, __u32 sum)
{
	struct mrc_nack_pkt *n = (void *)(udp + 1);

	/* Ports kept: source = the EV, destination = the MRC port. */
	udp->len = bpf_htons(TRIM_NACK_UDP_LEN);
	udp->check = 0;
	trim_fill_nack(n, ti, to, psn24, cack);
	sum += bpf_htons(IPPROTO_UDP_) + bpf_htons(TRIM_NACK_UDP_LEN);
	sum += trim_sum16(udp, TRIM_NACK_UDP_LEN / 2);
	udp->check = trim_udp_csum(sum);
}

/*
 * The NACK of a trimmed DATA packet p of the QP at `slot`, which passed
 * the length and window checks: XDP_TX, or a counted drop when the frame
 * cannot be rebuilt; TRIM_NOT_TRIMMED when p is no trimmed header.
 */
static __always_inline int answer_trimmed(struct mrc_pkt *p, __u32 slot,
					  const struct mrc_qp_info *info,
					  struct mrc_rx_state *rx)
{
	struct trim_info ti = {};
	struct mrc_ctl_stats *cs;
	struct udphdr *udp;
	struct trim_dest to = { .qpn = info->remote_qpn, .key = info->peer_key };
	__u32 psn24 = p->psn, cack, sum = 0;
	__u32 l4_off, new_len;
	void *data, *end;
	struct xdp_md *xdp = p->ctx;
	int ret, delta;

	ret = trimmed_header(p, &ti);
	if (ret == 0)
		return TRIM_NOT_TRIMMED;
	if (ret < 0)
		return count_qp_drop(slot, MRC_DROP_MALFORMED);
	/* parse_l3() takes no IP options or extension headers. */
	l4_off = sizeof(struct ethhdr) + (p->l4.l3_proto == ETH_P_IP ?
		 sizeof(struct iphdr) : sizeof(struct ipv6hdr));
	if (p->l4.l4_off != l4_off || reflect_frame(p))
		return count_qp_drop(slot, MRC_DROP_MALFORMED);
	cack = READ_ONCE(rx->cack);

	/* Shrink to eth + IP + UDP + BTH + NACK; every packet pointer dies. */
	new_len = l4_off + TRIM_NACK_UDP_LEN;
	delta = (int)new_len - (int)(p->end - p->data);
	if (delta > 0 || (delta && bpf_xdp_adjust_tail(xdp, delta)))
		return count_qp_drop(slot, MRC_DROP_MALFORMED);
	data = (void *)(long)xdp->data;
	end = (void *)(long)xdp->data_end;

	if (l4_off == sizeof(struct ethhdr) + sizeof(struct iphdr))
		udp = trim_nack_ip4(data, end, &sum);
	else
		udp = trim_nack_ip6(data, end, &sum);
	if (!udp)
		return count_qp_drop(slot, MRC_DROP_MALFORMED);
	trim_nack_udp(udp, &ti, &to, psn24, cack, sum);

	cs = ctl_stats();
	if (cs) {
		cs->trim_nacks++;
		if (ti.lasthop)
			cs->trim_nacks_lasthop++;
	}
	return XDP_TX;
}

#endif /* MRC_BPF_TRIM_NACK_H */
