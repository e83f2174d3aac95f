/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * TC egress spraying: each outgoing DATA packet of a QP takes the next
 * usable EV of the QP's rotation (and its plane), logged for XDP's
 * feedback (mrc/ev_log.h); SACKs and NACKs from the responder spread over
 * the EVs the peer's data came on.
 */
#ifndef MRC_BPF_TC_SPRAY_H
#define MRC_BPF_TC_SPRAY_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "mrc/ev_rules.h"
#include "parsing.h"
#include "mrc/maps.h"
#include "mrc/stats.h"
#include "mrc/parse.h"
#include "mrc/ev_log.h"
#include "mrc/tc_stamp.h"
#include "mrc/tc_gso.h"
#include "mrc/icrc.h"
#include "mrc/srv6.h"

struct shuffle_ctx {
	struct mrc_qp_evs *evs;
	__u32 n;
	__u32 stride;
};

/*
 * One Fisher-Yates step: swap slot i = n - 1 - index with a random slot
 * at or below it that is a multiple of `stride` away (same plane slot).
 */
static long shuffle_step(__u32 index, void *data)
{
	struct shuffle_ctx *sc = data;
	__u32 i = sc->n - 1 - index, j;
	__u8 t;

	if (i == 0 || i >= MRC_MAX_EVS)
		return 1;
	j = i - sc->stride * (bpf_get_prandom_u32() % (i / sc->stride + 1));
	i &= MRC_MAX_EVS - 1;
	j &= MRC_MAX_EVS - 1;
	t = sc->evs->perm[i];
	sc->evs->perm[i] = sc->evs->perm[j];
	sc->evs->perm[j] = t;
	return 0;
}

/*
 * Redraw the rotation order when the cursor wraps, so the path sequence
 * is not periodic. bpf_loop keeps the verifier's work independent of the
 * table size.
 */
static __always_inline void reshuffle(struct mrc_qp_evs *evs, __u32 n)
{
	struct shuffle_ctx sc = { .evs = evs, .n = n, .stride = evs->stride };

	if (n < 2 || n > MRC_MAX_EVS)
		return;
	if (sc.stride == 0 || sc.stride > MRC_MAX_PLANES_ABI)
		sc.stride = 1;
	bpf_loop(n - 1, shuffle_step, &sc, 0);
	__sync_fetch_and_add(&evs->shuffles, 1);
}

/*
 * The next EV of the QP's rotation that may carry data: ACTIVE and GOOD,
 * and not `avoid` (the EV that lost the packet being resent) nor, when
 * path discovery labelled it, another EV of its path (`avoid_path`: the
 * entry word's low 16 bits, plane | path << 8; -1 none): the EVs of a dead spine fail together, and a
 * resend on one of them is lost again. An entry in SKIP loses this turn
 * and goes back to GOOD. Returns the entry's index.
 *
 * The rotation visits the planes in turn (perm keeps each plane in its
 * column, positions `stride` apart). When the entry at the cursor cannot
 * be used, another EV of the SAME plane takes the turn (the positions
 * stride, 2 x stride... further on), so a plane keeps its share of the
 * packets however many of its EVs are out of service; only a plane with
 * no usable EV in reach gives its turn to another plane: the next one,
 * or, when the sender chose the plane (col), the others in turn.
 */
#define NEXT_EV_SAME_PLANE	16	/* tries in the cursor's plane column */
#define NEXT_EV_TRIES		(2 * NEXT_EV_SAME_PLANE)

static __always_inline int next_ev(struct mrc_qp_evs *evs, __u32 n, int avoid,
				   int avoid_path, int col, int *wrapped)
{
	__u32 stride = evs->stride, pos = 0;
	int same_path = -1;

	if (stride == 0 || stride > MRC_MAX_PLANES_ABI)
		stride = 1;
	for (int i = 0; i < NEXT_EV_TRIES; i++) {
		struct mrc_ev_entry *e;
		__u32 p, idx, w, nw;

		if (i % NEXT_EV_SAME_PLANE == 0) {
			__u32 turn = __sync_fetch_and_add(&evs->next, 1);

			pos = turn % n;
			if (pos == n - 1)
				*wrapped = 1;
			/*
			 * The sender chose the plane (sender_column): the
			 * cursor's row, its column. With no usable EV there,
			 * another plane's turn, the next turns' the others,
			 * so a plane out of service spreads its share over
			 * the others instead of doubling one's.
			 */
			if (col >= 0) {
				__u32 c = (__u32)col;

				if (i)
					c = (c + 1 + turn / stride % (stride - 1)) % stride;
				pos = pos - pos % stride + c;
			}
		}
		p = (pos + (i % NEXT_EV_SAME_PLANE) * stride) % n;
		asm volatile("" : "+r"(p));
		idx = evs->perm[p & (MRC_MAX_EVS - 1)];
		/* Keep the mask: the verifier cannot follow the modulo. */
		asm volatile("" : "+r"(idx));
		idx &= MRC_MAX_EVS - 1;
		if (idx >= n)
			continue;
		e = &evs->ev[idx];
		w = READ_ONCE(e->word);
		if (!(MRC_EV_WORD_FLAGS(w) & MRC_EV_F_ACTIVE))
			continue;
		if (mrc_ev_rule_end_skip(w, &nw)) {
			__sync_val_compare_and_swap(&e->word, w, nw);
			continue;
		}
		if (!mrc_ev_carries(w) || (int)idx == avoid)
			continue;
		if ((int)(w & 0xffff) != avoid_path)
			return (int)idx;
		if (same_path < 0)
			same_path = (int)idx;
	}
	return same_path;	/* only the lost path in reach: better than none */
}

/*
 * The column of the rotation (plane - 1) the sender already put the packet
 * on, or -1 to follow the cursor. libmrc, with MRC_QP_F_SENDER_PLANE, sends
 * each datagram to the peer's address on a plane of its own rotation; the
 * packet then reaches TC on that plane's interface, and an EV of that plane
 * saves it a move (bpf_redirect_neigh: a route lookup and this program a
 * second time). Only when the interface and the destination agree on the
 * plane and the table goes round the planes (stride = planes).
 */
static __always_inline int sender_column(const struct mrc_pkt *p,
					 const struct mrc_qp_info *info,
					 const struct mrc_qp_evs *evs,
					 __u32 skb_plane)
{
	__u32 stride = evs->stride, dst[4];
	const __u32 *peer;

	if (!(info->flags & MRC_QP_F_SENDER_PLANE) || stride < 2 ||
	    stride > MRC_MAX_PLANES_ABI || skb_plane == 0 ||
	    skb_plane > stride || skb_plane > info->n_peer_addrs)
		return -1;
	if (packet_addr(p, PKT_DST, dst))
		return -1;
	peer = (const __u32 *)info->peer_addrs[(skb_plane - 1) &
					       (MRC_MAX_PLANES_ABI - 1)];
	if ((dst[0] ^ peer[0]) | (dst[1] ^ peer[1]) | (dst[2] ^ peer[2]) |
	    (dst[3] ^ peer[3]))
		return -1;
	return (int)skb_plane - 1;
}

/*
 * The path of the EV at idx as next_ev compares it (plane | path << 8),
 * or -1 when path discovery did not label it (path 0).
 */
static __always_inline int lost_path(struct mrc_qp_evs *evs, __u32 idx)
{
	__u32 w = READ_ONCE(evs->ev[idx & (MRC_MAX_EVS - 1)].word);

	return MRC_EV_WORD_PATH(w) ? (int)(w & 0xffff) : -1;
}

/* The move costs a second pass here: mrcctl stats shows how many. */
static __always_inline void count_plane_move(__u32 segs)
{
	struct mrc_ctl_stats *cs = ctl_stats();

	if (cs)
		cs->plane_moves += segs;
}

/*
 * A DATA packet of the QP that leaves unsprayed (no EV usable, no send
 * record, the stamp failed): still with its ICRC when the QP sends one,
 * or the peer would drop it as corrupt.
 */
static __always_inline int leave_unsprayed(struct __sk_buff *skb,
					   const struct l4_info *l4,
					   const struct mrc_qp_info *info)
{
	if ((info->flags & MRC_QP_F_ICRC) && icrc_fill(skb, l4)) {
		count_drop(MRC_DROP_BAD_ICRC);
		return TC_ACT_SHOT;
	}
	return TC_ACT_OK;
}

/*
 * DATA: next EV of the rotation, its plane, its stamp, its log entry. A
 * UDP GSO skb (a burst of libmrc's, tc_gso.h) is one step of all that,
 * with a log entry for every PSN in it, and counts as its packets.
 */
static __always_inline int spray_data(struct __sk_buff *skb,
				      const struct mrc_pkt *p, __u32 slot)
{
	struct gso_walk g = {};
	__u32 segs = skb->gso_segs > 1 ? skb->gso_segs : 1, bytes = skb->len;
	const struct l4_info *l4 = &p->l4;
	struct mrc_qp_info *info = bpf_map_lookup_elem(&mrc_qps, &slot);
	struct mrc_qp_evs *evs = qp_ev_table(slot);
	struct mrc_tx_state *tx = qp_tx_state(slot);
	__u32 psn, n, plane, ifindex = 0, skb_plane;
	__u8 flags = p->flags;
	struct mrc_send_rec *rec;
	struct mrc_qp_stats *st;
	struct mrc_ev_entry *e;
	int idx, avoid = -1, avoid_path = -1, wrapped = 0, col;

	if (!info || !evs || !tx || !is_own_packet(p, info))
		return TC_ACT_OK;
	n = info->n_evs;
	if (n == 0 || n > MRC_MAX_EVS)
		return leave_unsprayed(skb, l4, info);
	/* Before gso_check, which may move the packet's data. */
	skb_plane = plane_of_ifindex(skb->ifindex);
	col = sender_column(p, info, evs, skb_plane);
	psn = mrc_psn_extend(READ_ONCE(tx->snd_una), p->psn);
	/* A burst cannot carry one ICRC per segment: libmrc sends none. */
	if (segs > 1 && (info->flags & MRC_QP_F_ICRC)) {
		count_drop(MRC_DROP_BAD_ICRC);
		return TC_ACT_SHOT;
	}
	if (segs > 1) {
		if (!gso_check(skb, l4, p->bth, psn, segs, &g)) {
			count_drop(MRC_DROP_BAD_GSO);
			return TC_ACT_SHOT;
		}
		/* On the wire each segment carries the headers again. */
		bytes += (segs - 1) * g.off;
	}
	rec = send_rec(slot, psn);
	if (!rec)
		return leave_unsprayed(skb, l4, info);
	/* A resend never takes the EV, nor the known path, that lost the packet. */
	if (flags & MRC_BTH_F_RETX && rec->psn == psn) {
		avoid = rec->ev_idx;
		avoid_path = lost_path(evs, rec->ev_idx);
	}

	idx = next_ev(evs, n, avoid, avoid_path, col, &wrapped);
	if (wrapped)
		reshuffle(evs, n);
	if (idx < 0)	/* nothing usable: leave the socket's port */
		return leave_unsprayed(skb, l4, info);
	e = &evs->ev[idx & (MRC_MAX_EVS - 1)];
	plane = e->plane;
	if (plane && plane != skb_plane)
		ifindex = move_to_plane(skb, l4, info, plane);
	if (!ifindex)
		plane = skb_plane;
	if (stamp_ev(skb, l4, e->ev, info->ev_format))
		return leave_unsprayed(skb, l4, info);
	/* The ICRC covers the EV and the plane's addresses. */
	if ((info->flags & MRC_QP_F_ICRC) && icrc_fill(skb, l4)) {
		count_drop(MRC_DROP_BAD_ICRC);
		return TC_ACT_SHOT;
	}
	/*
	 * Last, as it moves every header: an SRv6 EV's envelope. Without
	 * it the packet would not take the EV's path: it is not sent.
	 */
	if (info->ev_format == MRC_EVF_SRV6 &&
	    (l4->l3_proto != ETH_P_IPV6 ||
	     srv6_put_on_skb(skb, e->ev, info->srv6_block))) {
		count_drop(MRC_DROP_MALFORMED);
		return TC_ACT_SHOT;
	}

	/*
	 * A new send: its time first, then the head in one store, which also
	 * clears `nacked`, so a NACK may act on this send (ack_rx.h
	 * nack_may_act) and never sees the new PSN with the old send's mark.
	 */
	if (segs > 1) {
		gso_log_all(slot, segs, &g, (__u8)idx, (__u8)plane);
	} else {
		rec->sent_ns = bpf_ktime_get_ns();
		WRITE_ONCE(rec->head, mrc_send_rec_head(psn, (__u8)idx, (__u8)plane,
							  flags & MRC_BTH_F_RETX, 0));
	}
	count_ev_tx(slot, idx, segs, bytes);
	st = qp_stats(slot);
	if (st)
		st->tx_stamped += segs;
	if (!ifindex)
		return TC_ACT_OK;
	count_plane_move(segs);
	return bpf_redirect_neigh(ifindex, NULL, 0, 0);
}

/* Did mrcd see this plane's link go down? */
static __always_inline int plane_is_down(__u32 plane)
{
	__u32 key = plane - 1;
	struct mrc_plane *pl = bpf_map_lookup_elem(&mrc_planes, &key);

	return pl && (READ_ONCE(pl->flags) & MRC_PLANE_F_DOWN);
}

/*
 * Does a control packet the QP sends (SACK, NACK, PROBE) carry an ICRC?
 * Asked before spraying rewrites the packet (its pointers die): only an
 * ICRC QP's own packets (its key; another process's are none of its
 * business), which carry libmrc's 4 zero bytes at their end.
 */
static __always_inline int ctrl_wants_icrc(const struct mrc_pkt *pkt,
					   __u32 slot)
{
	struct mrc_qp_info *info = bpf_map_lookup_elem(&mrc_qps, &slot);

	return info && (info->flags & MRC_QP_F_ICRC) && is_own_packet(pkt, info);
}

/*
 * The last step of such a packet but an SRv6 envelope, whatever way
 * spraying went: its ICRC, now that the EV and the plane's addresses are
 * final. SHOT and a counted
 * drop when it cannot be written (the peer would drop it as corrupt).
 */
static __always_inline int finish_ctrl(struct __sk_buff *skb,
				       const struct l4_info *l4, int icrc,
				       int verdict)
{
	if (!icrc || verdict == TC_ACT_SHOT)
		return verdict;
	if (icrc_fill(skb, l4)) {
		count_drop(MRC_DROP_BAD_ICRC);
		return TC_ACT_SHOT;
	}
	return verdict;
}

/*
 * SACK/NACK from the responder: spread over the planes and the EVs the
 * data direction used on each (learned by XDP), so acknowledgements take
 * working paths too and no single path carries them all. A plane whose
 * link is down is passed over.
 */
static __always_inline int spray_ack(struct __sk_buff *skb,
				     const struct mrc_pkt *pkt, __u32 slot, int icrc)
{
	const struct l4_info *l4 = &pkt->l4;
	struct mrc_rev_evs *rev = bpf_map_lookup_elem(&mrc_rev_evs, &slot);
	struct mrc_qp_info *info = bpf_map_lookup_elem(&mrc_qps, &slot);
	__u32 plane = 0, ev = 0, ifindex = 0;

	if (!rev || !info || !info->n_peer_addrs || !is_own_packet(pkt, info))
		return finish_ctrl(skb, l4, icrc, TC_ACT_OK);
	for (int i = 0; i < MRC_MAX_PLANES_ABI; i++) {
		__u32 p = __sync_fetch_and_add(&rev->pick, 1) % info->n_peer_addrs;
		__u32 filled, slot_i;

		asm volatile("" : "+r"(p));
		p &= MRC_MAX_PLANES_ABI - 1;
		/* Only the slots the plane's data has filled so far. */
		filled = READ_ONCE(rev->next[p]);
		if (filled == 0 || plane_is_down(p + 1))
			continue;
		if (filled > MRC_REV_EVS)
			filled = MRC_REV_EVS;
		slot_i = bpf_get_prandom_u32() % filled;
		asm volatile("" : "+r"(slot_i));
		ev = rev->ev[p][slot_i & (MRC_REV_EVS - 1)];
		if (ev) {
			plane = p + 1;
			break;
		}
	}
	if (!ev)	/* nothing learned yet */
		return finish_ctrl(skb, l4, icrc, TC_ACT_OK);
	if (plane != plane_of_ifindex(skb->ifindex))
		ifindex = move_to_plane(skb, l4, info, plane);
	if (stamp_ev(skb, l4, ev, MRC_EVF_UDP))
		return finish_ctrl(skb, l4, icrc, TC_ACT_OK);
	/* The ICRC before any envelope: the peer checks it with the envelope off. */
	if (finish_ctrl(skb, l4, icrc, TC_ACT_OK) == TC_ACT_SHOT)
		return TC_ACT_SHOT;
	/*
	 * An EV learned from data in an SRv6 envelope carries its uSID: the
	 * acknowledgement goes back through the same spine in one too. If
	 * that fails (no block) it still goes, without: late is worse than
	 * by another path.
	 */
	if (info->ev_format == MRC_EVF_SRV6 && (ev >> 16) &&
	    l4->l3_proto == ETH_P_IPV6)
		srv6_put_on_skb(skb, ev, info->srv6_block);
	return ifindex ? bpf_redirect_neigh(ifindex, NULL, 0, 0) : TC_ACT_OK;
}

#endif /* MRC_BPF_TC_SPRAY_H */
