/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Endpoint control messages (docs/WIRE.md): EV probes answered in place
 * (XDP_TX), answers to our own probes timestamped and steered to mrcd,
 * port status handed to mrcd, each only from a peer mrcd knows
 * (mrc_known_peers) and answers only to mrcd's probe sockets
 * (mrc_probe_ports); on egress (TC), mrcd's probes stamped with the EV
 * they test and their send time.
 */
#ifndef MRC_BPF_PROBES_H
#define MRC_BPF_PROBES_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "parsing.h"
#include "mrc/maps.h"
#include "mrc/stats.h"
#include "mrc/parse.h"
#include "mrc/xdp_rewrite.h"
#include "mrc/tc_stamp.h"
#include "mrc/srv6.h"

/*
 * The UDP length must be the IP payload's (IPv4 total length less its
 * 20-byte header, IPv6 payload length): an endpoint message is answered
 * or passed on only when both agree, so no answer is built over bytes the
 * sender's checksum did not cover, nor over a datagram the stack would
 * refuse (an IPv6 one without a checksum either). parse_mrc() has checked
 * that the UDP length fits the frame.
 */
static __always_inline int ep_lengths_agree(const struct mrc_pkt *p)
{
	__u32 udp_len = p->payload_len + sizeof(struct udphdr);

	if (p->l4.l3_proto == ETH_P_IP) {
		struct iphdr *ip = p->data + sizeof(struct ethhdr);

		if ((void *)(ip + 1) > p->end)
			return 0;
		return bpf_ntohs(ip->tot_len) == sizeof(*ip) + udp_len;
	} else {
		struct ipv6hdr *ip6 = p->data + sizeof(struct ethhdr);

		if ((void *)(ip6 + 1) > p->end)
			return 0;
		/* IPv6 has no "no checksum": a zero one is a broken packet. */
		return bpf_ntohs(ip6->payload_len) == udp_len && p->udp->check;
	}
}

static __always_inline struct mrc_eph *ep_header(struct mrc_pkt *p)
{
	struct mrc_eph *eh = (void *)(p->bth + 1);

	if ((void *)(eh + 1) > p->end ||
	    p->payload_len < sizeof(struct mrc_bth) + sizeof(*eh) ||
	    !ep_lengths_agree(p))
		return NULL;
	return eh;
}

/*
 * An endpoint packet we will not serve: counted with the control paths,
 * and, when the packet itself is at fault, as a drop like any other bad
 * MRC packet (reason 0: a good packet that nobody here can take).
 */
static __always_inline int ep_drop(enum mrc_drop_reason reason)
{
	struct mrc_ctl_stats *cs = ctl_stats();

	if (cs)
		cs->ep_dropped++;
	return reason ? count_drop(reason) : XDP_DROP;
}

/* What a refusal counts, besides ep_dropped and its drop reason. */
enum ep_refusal {
	EP_REFUSED_PROBE,
	EP_REFUSED_PORT_STATUS,
	EP_REFUSED_RESPONSE,
	EP_REFUSED_REPLY_PORT,
};

static __always_inline int ep_refuse(enum ep_refusal why,
				     enum mrc_drop_reason reason)
{
	struct mrc_ctl_stats *cs = ctl_stats();

	if (cs) {
		if (why == EP_REFUSED_PROBE)
			cs->probes_refused++;
		else if (why == EP_REFUSED_PORT_STATUS)
			cs->port_status_refused++;
		else if (why == EP_REFUSED_RESPONSE)
			cs->responses_refused++;
		else
			cs->responses_bad_port++;
	}
	return ep_drop(reason);
}

/*
 * Does mrcd know the packet's source for one of the reasons in `want`
 * (MRC_KNOWN_*)? mrcd keeps mrc_known_peers: the peers of live QPs, its
 * configured peers and the targets of running `mrcctl probe`s. No entry,
 * no service: nothing here trusts a packet for its source address alone.
 */
static __always_inline int ep_source_known(const struct mrc_pkt *p, __u32 want)
{
	struct mrc_known_peer_key key;
	struct mrc_known_peer *kp;

	if (packet_addr(p, PKT_SRC, (__u32 *)key.addr))
		return 0;
	kp = bpf_map_lookup_elem(&mrc_known_peers, &key);
	return kp && (kp->why & want);
}

/* Is `port` one of mrcd's probe sockets (mrc_probe_ports)? */
static __always_inline int is_probe_port(__u16 port)
{
	__u32 key = port;

	return port && bpf_map_lookup_elem(&mrc_probe_ports, &key) != NULL;
}

/*
 * An EV probe for us: answer it right here. The response keeps the UDP
 * ports (source = the EV, destination = the MRC port), so it crosses the
 * fabric on the EV's return path and reaches the requester's XDP.
 */
static __always_inline int answer_ev_probe(struct mrc_pkt *p,
					   struct mrc_eph *eh, __u64 t_arrival)
{
	struct mrc_ctl_stats *cs;
	__u16 *op_word = (__u16 *)p->bth;
	__u32 old_sum, new_sum, service;

	if (!ep_source_known(p, MRC_KNOWN_SERVED))
		return ep_refuse(EP_REFUSED_PROBE, MRC_DROP_BAD_SOURCE);
	if (reflect_frame(p))
		return ep_drop(MRC_DROP_MALFORMED);
	old_sum = *op_word + words32(eh->service_ns);
	p->bth->opcode = MRC_OP_EP_RESPONSE;
	service = (__u32)(bpf_ktime_get_ns() - t_arrival);
	eh->service_ns = service;
	new_sum = *op_word + words32(service);
	udp_csum_update(p->udp, old_sum, new_sum);
	/* In an SRv6 envelope: the answer goes back over the same uSID. */
	if (p->srv6_usid &&
	    srv6_put_on_xdp(p->ctx, p->srv6_block, p->srv6_usid))
		return ep_drop(MRC_DROP_MALFORMED);
	cs = ctl_stats();
	if (cs)
		cs->probes_answered++;
	return XDP_TX;
}

/*
 * The answer to one of our probes: timestamp it, hand it to its socket.
 * Only from a peer mrcd knows and only to one of mrcd's probe sockets: a
 * response is a request to deliver a packet to the port it names, which
 * would otherwise be any port of this host (22 as well).
 */
static __always_inline int take_probe_response(struct mrc_pkt *p,
					       struct mrc_eph *eh, __u64 now)
{
	struct mrc_ctl_stats *cs;
	__u16 port = bpf_ntohs(eh->reply_port);
	__u32 old_sum;

	if (eh->kind != MRC_EP_EV_PROBE)
		return ep_drop(MRC_DROP_BAD_OPCODE);
	if (!port)
		return ep_drop(MRC_DROP_MALFORMED);
	if (!ep_source_known(p, MRC_KNOWN_SERVED | MRC_KNOWN_PROBED))
		return ep_refuse(EP_REFUSED_RESPONSE, MRC_DROP_BAD_SOURCE);
	if (!is_probe_port(port))
		return ep_refuse(EP_REFUSED_REPLY_PORT, MRC_DROP_NONE);
	old_sum = words64(eh->t_rx_ns);
	eh->t_rx_ns = now;
	udp_csum_update(p->udp, old_sum, words64(now));
	steer_to_owner(p->udp, port);
	cs = ctl_stats();
	if (cs)
		cs->probe_responses++;
	return XDP_PASS;
}

/* A peer's port status goes to our mrcd, which knows the QPs. */
static __always_inline int take_port_status(struct mrc_pkt *p)
{
	__u32 zero = 0;
	struct mrc_global_cfg *cfg = bpf_map_lookup_elem(&mrc_cfg, &zero);
	struct mrc_ctl_stats *cs;

	if (!cfg || !cfg->agent_port)
		return ep_drop(MRC_DROP_NONE);	/* no agent to tell */
	if (!ep_source_known(p, MRC_KNOWN_SERVED))
		return ep_refuse(EP_REFUSED_PORT_STATUS, MRC_DROP_BAD_SOURCE);
	steer_to_owner(p->udp, cfg->agent_port);
	cs = ctl_stats();
	if (cs)
		cs->port_status_rx++;
	return XDP_PASS;
}

static __always_inline int handle_ep(struct mrc_pkt *p)
{
	__u64 t_arrival = bpf_ktime_get_ns();
	struct mrc_eph *eh = ep_header(p);

	if (!eh)
		return ep_drop(MRC_DROP_MALFORMED);
	if (p->opcode == MRC_OP_EP_RESPONSE)
		return take_probe_response(p, eh, t_arrival);
	if (eh->kind == MRC_EP_EV_PROBE)
		return answer_ev_probe(p, eh, t_arrival);
	if (eh->kind == MRC_EP_PORT_STATUS)
		return take_port_status(p);
	return ep_drop(MRC_DROP_BAD_OPCODE);
}

/*
 * An EV probe mrcd sends: give it the EV it tests (source port, flow
 * label), keep the socket's port for the answer and stamp the send time
 * as late as possible, so the RTT is the wire's.
 */
static __always_inline int stamp_probe(struct __sk_buff *skb,
				       const struct mrc_pkt *p)
{
	const struct l4_info *l4 = &p->l4;
	__u32 eph_off = l4->l4_off + sizeof(struct udphdr) + sizeof(struct mrc_bth);
	__u32 csum_off = l4->l4_off + offsetof(struct udphdr, check);
	struct mrc_ctl_stats *cs;
	struct mrc_eph eh;
	__u16 sport;
	__u64 now;
	__s64 diff;

	/*
	 * Only a request whose UDP datagram holds the whole header: bytes
	 * behind a shorter datagram are not its own, and its checksum does
	 * not cover them (found by mrc-fuzz: stamping them broke the sum).
	 */
	if (bpf_ntohs(p->udp->len) < sizeof(struct udphdr) + sizeof(struct mrc_bth) +
				     sizeof(eh))
		return TC_ACT_OK;
	if (bpf_skb_load_bytes(skb, eph_off, &eh, sizeof(eh)) ||
	    eh.kind != MRC_EP_EV_PROBE)
		return TC_ACT_OK;	/* port status goes as it is */
	if (bpf_skb_load_bytes(skb, l4->l4_off, &sport, sizeof(sport)))
		return TC_ACT_OK;
	if (bpf_l4_csum_replace(skb, csum_off, eh.reply_port, sport,
				BPF_F_MARK_MANGLED_0 | 2) ||
	    bpf_skb_store_bytes(skb, eph_off + offsetof(struct mrc_eph, reply_port),
				&sport, sizeof(sport), 0))
		return TC_ACT_OK;
	now = bpf_ktime_get_ns();
	diff = bpf_csum_diff((__be32 *)&eh.t_tx_ns, 8, (__be32 *)&now, 8, 0);
	if (bpf_l4_csum_replace(skb, csum_off, 0, (__u32)diff,
				BPF_F_MARK_MANGLED_0) ||
	    bpf_skb_store_bytes(skb, eph_off + offsetof(struct mrc_eph, t_tx_ns),
				&now, sizeof(now), 0))
		return TC_ACT_OK;
	if (stamp_ev(skb, l4, bpf_ntohl(eh.ev),
		     eh.flags & MRC_EPH_F_STEV ? MRC_EVF_STEV : MRC_EVF_UDP))
		return TC_ACT_OK;
	/* Last (it moves the headers): an SRv6 EV's envelope. */
	if ((eh.flags & MRC_EPH_F_SRV6) &&
	    (l4->l3_proto != ETH_P_IPV6 ||
	     srv6_put_on_skb(skb, bpf_ntohl(eh.ev), eh.srv6_block))) {
		count_drop(MRC_DROP_MALFORMED);
		return TC_ACT_SHOT;
	}
	cs = ctl_stats();
	if (cs)
		cs->probes_stamped++;
	return TC_ACT_OK;
}

#endif /* MRC_BPF_PROBES_H */
