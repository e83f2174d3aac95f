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
 *   ICRC  for a QP with MRC_QP_F_ICRC: 4 more bytes, the NACK's ICRC
 *         (UDP length 36), as the QP's peer expects on all its packets
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
#include "mrc/icrc.h"

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
						    __u32 *sum, __u32 udp_len)
{
	struct iphdr *ip = data + sizeof(struct ethhdr);
	struct udphdr *udp = (void *)(ip + 1);

	/* udp_len is checked by its writers; the NACK's own bytes here. */
	if ((void *)udp + TRIM_NACK_UDP_LEN > end)
		return NULL;
	ip->tos = 0;
	ip->tot_len = bpf_htons(sizeof(*ip) + udp_len);
	ip->ttl = TRIM_NACK_TTL;
	ip->check = 0;
	ip->check = csum_fold32(trim_sum16(ip, sizeof(*ip) / 2));
	/* Pseudo-header: addresses, protocol, UDP length. */
	*sum = trim_sum16(&ip->saddr, 4);
	return udp;
}

/* The same for IPv6: traffic class 0, payload length, hop limit 64. */
static __always_inline struct udphdr *trim_nack_ip6(void *data, void *end,
						    __u32 *sum, __u32 udp_len)
{
	struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);
	struct udphdr *udp = (void *)(ip6 + 1);
	__u8 *b = (__u8 *)ip6;

	/* udp_len is checked by its writers; the NACK's own bytes here. */
	if ((void *)udp + TRIM_NACK_UDP_LEN > end)
		return NULL;
	/* Traffic class 0, version and flow label kept. */
	b[0] &= 0xf0;
	b[1] &= 0x0f;
	ip6->payload_len = bpf_htons(udp_len);
	ip6->hop_limit = TRIM_NACK_TTL;
	*sum = trim_sum16(&ip6->saddr, 16);
	return udp;
}

/*
 * The UDP header and the NACK behind it (the IP header's helper checked
 * they fit), the checksum left for trim_nack_csum(): an ICRC QP's NACK
 * gets its trailer first.
 */
static __always_inline void trim_nack_udp(struct udphdr *udp,
					  const struct trim_info *ti,
					  const struct trim_dest *to,
					  __u32 psn24, __u32 cack, __u32 udp_len)
{
	struct mrc_nack_pkt *n = (void *)(udp + 1);

	/* Ports kept: source = the EV, destination = the MRC port. */
	udp->len = bpf_htons(udp_len);
	udp->check = 0;
	trim_fill_nack(n, ti, to, psn24, cack);
}

/*
 * The full UDP checksum: `sum` brings the pseudo-header's addresses. The
 * ICRC trailer, when there is one, is 2 more words (the caller checked
 * they are in the frame).
 */
static __always_inline void trim_nack_csum(struct udphdr *udp, __u32 sum,
					   int icrc)
{
	__u32 udp_len = TRIM_NACK_UDP_LEN + (icrc ? MRC_ICRC_LEN : 0);

	sum += bpf_htons(IPPROTO_UDP_) + bpf_htons(udp_len);
	sum += trim_sum16(udp, TRIM_NACK_UDP_LEN / 2);
	if (icrc)
		sum += trim_sum16((void *)udp + TRIM_NACK_UDP_LEN, MRC_ICRC_LEN / 2);
	udp->check = trim_udp_csum(sum);
}

/*
 * An ICRC QP's NACK ends in its ICRC (bpf/mrc/icrc.h): computed over the
 * NACK as built, which the UDP checksum then covers. 0, or -1 when the
 * frame cannot be read back.
 */
static __always_inline int trim_nack_icrc(struct xdp_md *xdp,
					  const struct l4_info *l4)
{
	const __u32 udp_len = TRIM_NACK_UDP_LEN + MRC_ICRC_LEN;
	__u8 trailer[MRC_ICRC_LEN];
	__u32 crc;

	if (icrc_compute(xdp, 1, l4, udp_len, &crc))
		return -1;
	icrc_to_wire(crc, trailer);
	return bpf_xdp_store_bytes(xdp, l4->l4_off + udp_len - MRC_ICRC_LEN,
				   trailer, MRC_ICRC_LEN) ? -1 : 0;
}

/* The UDP header of the frame as rebuilt, with `len` bytes behind it, or NULL. */
static __always_inline struct udphdr *trim_udp_at(struct xdp_md *xdp,
						  const struct l4_info *l4,
						  __u32 len)
{
	void *data = (void *)(long)xdp->data;
	struct udphdr *udp = data + sizeof(struct ethhdr) +
		(l4->l3_proto == ETH_P_IP ? sizeof(struct iphdr) :
		 sizeof(struct ipv6hdr));

	if ((void *)udp + len > (void *)(long)xdp->data_end)
		return NULL;
	return udp;
}

/*
 * The frame rebuilt as the NACK: eth + IP + UDP + BTH + NACK, and the
 * ICRC when `icrc`. Every packet pointer dies. 0 or -1.
 */
static __always_inline int trim_rebuild(struct xdp_md *xdp,
					const struct l4_info *l4,
					__u32 frame_len,
					const struct trim_info *ti,
					const struct trim_dest *to,
					__u32 psn24, __u32 cack, int icrc)
{
	__u32 udp_len = TRIM_NACK_UDP_LEN + (icrc ? MRC_ICRC_LEN : 0), sum = 0;
	int delta = (int)(l4->l4_off + udp_len) - (int)frame_len;
	struct udphdr *udp;
	void *data, *end;

	if (delta > 0 || (delta && bpf_xdp_adjust_tail(xdp, delta)))
		return -1;
	data = (void *)(long)xdp->data;
	end = (void *)(long)xdp->data_end;
	if (l4->l3_proto == ETH_P_IP)
		udp = trim_nack_ip4(data, end, &sum, udp_len);
	else
		udp = trim_nack_ip6(data, end, &sum, udp_len);
	if (!udp)
		return -1;
	trim_nack_udp(udp, ti, to, psn24, cack, udp_len);
	if (icrc) {
		if (trim_nack_icrc(xdp, l4))
			return -1;
		/* The store invalidated every packet pointer. */
		udp = trim_udp_at(xdp, l4, TRIM_NACK_UDP_LEN + MRC_ICRC_LEN);
	} else {
		udp = trim_udp_at(xdp, l4, TRIM_NACK_UDP_LEN);
	}
	if (!udp)
		return -1;
	trim_nack_csum(udp, sum, icrc);
	return 0;
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
	struct trim_dest to = { .qpn = info->remote_qpn, .key = info->peer_key };
	__u32 psn24 = p->psn, cack, l4_off;
	struct xdp_md *xdp = p->ctx;
	int ret;

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

	if (trim_rebuild(xdp, &p->l4, p->end - p->data, &ti, &to, psn24, cack,
			 info->flags & MRC_QP_F_ICRC))
		return count_qp_drop(slot, MRC_DROP_MALFORMED);

	cs = ctl_stats();
	if (cs) {
		cs->trim_nacks++;
		if (ti.lasthop)
			cs->trim_nacks_lasthop++;
	}
	return XDP_TX;
}

#endif /* MRC_BPF_TRIM_NACK_H */
