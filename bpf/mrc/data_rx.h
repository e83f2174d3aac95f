/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * DATA and PROBE received (XDP): validate (opcode, lengths, QP, peer
 * address, connection key, window, duplicate), then hand to the owner's socket by
 * rewriting the destination port. Everything bad is dropped and counted
 * before it costs a socket wake-up; a trimmed header is answered with a
 * NACK from here (mrc/trim_nack.h).
 */
#ifndef MRC_BPF_DATA_RX_H
#define MRC_BPF_DATA_RX_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "parsing.h"
#include "mrc/maps.h"
#include "mrc/stats.h"
#include "mrc/bits.h"
#include "mrc/parse.h"
#include "mrc/xdp_rewrite.h"
#include "mrc/trim_nack.h"
#include "mrc/icrc.h"

/* Header lengths add up, the payload fits the message: 0 or a reason. */
static __always_inline int check_data_lengths(struct mrc_pkt *p)
{
	__u32 hdr_len = mrc_data_header_len(p->opcode, p->flags);
	struct mrc_reth *reth;
	__u32 reth_off = sizeof(struct mrc_bth) + sizeof(struct mrc_meth);
	__u32 data_len, msg_len;

	if (p->payload_len < hdr_len)
		return MRC_DROP_MALFORMED;
	if (p->flags & MRC_BTH_F_TS)
		reth_off += sizeof(struct mrc_tseth);
	reth = (void *)p->bth + reth_off;
	if ((void *)(reth + 1) > p->end)
		return MRC_DROP_MALFORMED;
	data_len = p->payload_len - hdr_len;
	msg_len = bpf_ntohl(reth->length);
	/* A packet never carries more than its whole message. */
	if (data_len > msg_len)
		return MRC_DROP_MALFORMED;
	return MRC_DROP_NONE;
}

/*
 * Responder window: PSNs in (cack, cack + mpr) that are not placed yet
 * go up; older ones and placed ones are duplicates (libmrc still owes the
 * sender a SACK for them), newer ones are out of the window.
 */
static __always_inline int check_window(struct mrc_rx_state *rx, __u32 psn24)
{
	__u32 cack = READ_ONCE(rx->cack);
	__u32 mpr = READ_ONCE(rx->mpr);
	__u32 psn = mrc_psn_extend(cack, psn24);

	if (mrc_psn_before(cack, psn) &&
	    (psn - cack >= mpr || mpr > MRC_WINDOW_MAX))
		return MRC_DROP_OUT_OF_WINDOW;
	/* Only in-window PSNs own their bitmap slot. */
	if (!mrc_psn_before(cack, psn) || bitmap_test(rx->placed, psn))
		return MRC_DROP_DUPLICATE;
	return MRC_DROP_NONE;
}

/*
 * A dropped duplicate or out-of-window packet: libmrc owes the sender a
 * SACK (its last one may be lost). The first since libmrc last sent one
 * (sack_pending 0 -> 1) writes SACK_DUE to the owner's ring, whose epoll
 * wakes a context asleep in its idle wait: nothing else would until its
 * longest sleep, and the sender may be waiting for that very SACK.
 */
static __always_inline void owe_sack(const struct mrc_qp_info *info,
				     struct mrc_rx_state *rx, __u32 qpn)
{
	struct mrc_event evt = { .type = MRC_EVT_SACK_DUE, .qpn = qpn };

	if (READ_ONCE(rx->sack_pending) ||
	    __sync_val_compare_and_swap(&rx->sack_pending, 0, 1) != 0)
		return;
	emit_event(info, &evt);
}

/*
 * Remember the EVs the peer's data arrives on, per plane: the responder's
 * SACKs go back over those paths (they are known to work).
 */
static __always_inline void learn_reverse_ev(__u32 slot, struct mrc_pkt *p)
{
	struct mrc_rev_evs *rev = bpf_map_lookup_elem(&mrc_rev_evs, &slot);
	__u32 plane = plane_of_ifindex(p->ifindex), i;

	if (!rev || plane == 0 || plane > MRC_MAX_PLANES_ABI)
		return;
	plane = (plane - 1) & (MRC_MAX_PLANES_ABI - 1);
	i = __sync_fetch_and_add(&rev->next[plane], 1) % MRC_REV_EVS;
	/* An SRv6 EV: the uSID it came through above the port (mrc/srv6.h). */
	rev->ev[plane][i & (MRC_REV_EVS - 1)] = (__u32)p->srv6_usid << 16 |
						 bpf_ntohs(p->udp->source);
}

/*
 * A data packet of an ICRC QP: its trailer must be its ICRC (a packet
 * without one fails too: its last 4 payload bytes are not the CRC). The
 * payload then ends before the trailer. A trimmed header has lost the
 * trailer with the payload (a switch cut it), so it has none to check.
 */
static __always_inline int check_icrc(struct mrc_pkt *p,
				      const struct mrc_qp_info *info)
{
	__u32 hdr_len = mrc_data_header_len(p->opcode, p->flags);

	if (!(info->flags & MRC_QP_F_ICRC) || p->payload_len == hdr_len)
		return MRC_DROP_NONE;
	if (p->payload_len < hdr_len + MRC_ICRC_LEN ||
	    !icrc_good_xdp(p->ctx, &p->l4, p->payload_len + sizeof(struct udphdr)))
		return MRC_DROP_BAD_ICRC;
	p->payload_len -= MRC_ICRC_LEN;
	return MRC_DROP_NONE;
}

static __always_inline int handle_data(struct mrc_pkt *p, int is_probe)
{
	struct mrc_qp_info *info;
	struct mrc_rx_state *rx;
	struct mrc_qp_stats *st;
	__u32 slot = 0;
	int reason;

	info = lookup_qp(p->qpn, &slot);
	if (!info)
		return count_drop(MRC_DROP_UNKNOWN_QP);
	if (info->state != MRC_QPS_RTR && info->state != MRC_QPS_RTS)
		return count_qp_drop(slot, MRC_DROP_QP_NOT_READY);
	if (!from_peer(p, info))
		return count_qp_drop(slot, MRC_DROP_BAD_SOURCE);
	if (!has_qp_key(p, info))
		return count_qp_drop(slot, MRC_DROP_BAD_KEY);

	if (!is_probe) {
		reason = check_icrc(p, info);
		if (reason)
			return count_qp_drop(slot, reason);
		reason = check_data_lengths(p);
		if (reason)
			return count_qp_drop(slot, reason);
		rx = qp_rx_state(slot);
		if (!rx)
			return count_qp_drop(slot, MRC_DROP_UNKNOWN_QP);
		reason = check_window(rx, p->psn);
		if (reason) {
			owe_sack(info, rx, p->qpn);
			return count_qp_drop(slot, reason);
		}
		/* A trimmed header has nothing to place: NACK it from here. */
		reason = answer_trimmed(p, slot, info, rx);
		if (reason != TRIM_NOT_TRIMMED)
			return reason;
	} else {
		/* A probe is a bare BTH: an ICRC QP's has its ICRC behind. */
		reason = icrc_check_ctrl(p->ctx, &p->l4, info->flags,
					 p->payload_len, sizeof(struct mrc_bth));
		if (reason)
			return count_qp_drop(slot, reason);
	}

	st = qp_stats(slot);
	if (st && !is_probe) {
		st->rx_data++;
		st->rx_data_bytes += p->payload_len;
	}
	if (!is_probe)
		learn_reverse_ev(slot, p);
	steer_to_owner(p->udp, info->sock_port);
	return XDP_PASS;
}

#endif /* MRC_BPF_DATA_RX_H */
