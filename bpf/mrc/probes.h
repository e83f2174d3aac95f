/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Endpoint control messages (docs/WIRE.md): EV probes answered in place
 * (XDP_TX), answers to our own probes timestamped and steered to mrcd,
 * port status handed to mrcd; on egress (TC), mrcd's probes stamped with
 * the EV they test and their send time.
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

static __always_inline struct mrc_eph *ep_header(struct mrc_pkt *p)
{
	struct mrc_eph *eh = (void *)(p->bth + 1);

	if ((void *)(eh + 1) > p->end ||
	    p->payload_len < sizeof(struct mrc_bth) + sizeof(*eh))
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

	if (reflect_frame(p))
		return ep_drop(MRC_DROP_MALFORMED);
	old_sum = *op_word + words32(eh->service_ns);
	p->bth->opcode = MRC_OP_EP_RESPONSE;
	service = (__u32)(bpf_ktime_get_ns() - t_arrival);
	eh->service_ns = service;
	new_sum = *op_word + words32(service);
	udp_csum_update(p->udp, old_sum, new_sum);
	cs = ctl_stats();
	if (cs)
		cs->probes_answered++;
	return XDP_TX;
}

/* The answer to one of our probes: timestamp it, hand it to its socket. */
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
	cs = ctl_stats();
	if (cs)
		cs->probes_stamped++;
	return TC_ACT_OK;
}

#endif /* MRC_BPF_PROBES_H */
