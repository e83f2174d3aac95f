/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * SACK and NACK received (XDP): the requester side, entirely here.
 * Advance the cumulative ack, record selective acks, report losses
 * (mrc/loss.h), complete WRITEs into the owner's event ring, feed the
 * per-EV feedback (mrc/ev_feedback.h) and the window (mrc/cc.h); a fatal
 * NACK fails the QP.
 */
#ifndef MRC_BPF_ACK_RX_H
#define MRC_BPF_ACK_RX_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "parsing.h"
#include "mrc/maps.h"
#include "mrc/stats.h"
#include "mrc/bits.h"
#include "mrc/parse.h"
#include "mrc/ev_log.h"
#include "mrc/ev_feedback.h"
#include "mrc/cc.h"
#include "mrc/loss.h"
#include "mrc/icrc.h"

/* Raise *word to `val` unless another CPU already raised it further. */
static __always_inline int advance_u32(__u32 *word, __u32 val)
{
	__u32 old = READ_ONCE(*word);

	for (int i = 0; i < 8; i++) {
		__u32 prev;

		if (!mrc_psn_before(old, val))
			return 0;
		prev = __sync_val_compare_and_swap(word, old, val);
		if (prev == old)
			return 1;
		old = prev;
	}
	return 0;
}

/*
 * Apply a cumulative ack. Returns 0, or a drop reason when the ack names
 * PSNs we never sent.
 */
static __always_inline int ack_cumulative(struct mrc_tx_state *tx,
					  __u32 cack24, __u32 *una_out)
{
	__u32 una = READ_ONCE(tx->snd_una);
	__u32 nxt = READ_ONCE(tx->snd_nxt);
	__u32 new_una = mrc_psn_extend(una - 1, cack24 & MRC_PSN_MASK) + 1;

	if (mrc_psn_before(nxt, new_una))
		return MRC_DROP_BAD_ACK;
	advance_u32(&tx->snd_una, new_una);
	*una_out = READ_ONCE(tx->snd_una);
	return 0;
}

/*
 * OR 64 bits starting at PSN `base` into a PSN ring bitmap; returns how
 * many of them were not set before (newly acked, for the window).
 */
static __always_inline __u32 ring_or64(__u64 *ring, __u32 base, __u64 bits)
{
	__u32 idx = base % MRC_WINDOW_MAX, word = idx / 64, shift = idx % 64;
	__u64 lo = bits << shift, old;
	__u32 fresh;

	old = __sync_fetch_and_or(&ring[word & (MRC_BITMAP_WORDS - 1)], lo);
	fresh = popcount64(lo & ~old);
	if (shift) {
		__u64 hi = bits >> (64 - shift);

		old = __sync_fetch_and_or(&ring[(word + 1) & (MRC_BITMAP_WORDS - 1)], hi);
		fresh += popcount64(hi & ~old);
	}
	return fresh;
}

/*
 * The PSNs a SACK's bitmap speaks about: 64 from `base`, clipped to
 * [una, snd_nxt): the ring slots of older PSNs belong to newer ones
 * already. Empty (0) when the window lies outside.
 */
static __always_inline __u64 sack_window(struct mrc_tx_state *tx, __u32 base,
					 __u32 una)
{
	__u32 nxt = READ_ONCE(tx->snd_nxt);
	__u64 window = ~0ULL;

	if (mrc_psn_before(base, una)) {
		__u32 skip = una - base;

		window = skip >= 64 ? 0 : window << skip;
	}
	if (!mrc_psn_before(base, nxt))
		return 0;
	if (nxt - base < 64)
		window &= (1ULL << (nxt - base)) - 1;
	return window;
}

/*
 * Record the acked PSNs of a SACK (bits already clipped to its window);
 * returns how many were not acked before.
 */
static __always_inline __u32 record_sacks(struct mrc_tx_state *tx, __u32 base,
					  __u64 bits)
{
	return bits ? ring_or64(tx->sacked, base, bits) : 0;
}

/*
 * Complete, in order, every posted WRITE whose last PSN is acked. The
 * ring record is reserved before wr_head moves: when the ring is full the
 * WRITE stays unretired (counted as RING_FULL) and a later SACK retires
 * it, so a completion is late, never lost.
 */
static __always_inline void emit_completions(struct mrc_tx_state *tx,
					     const struct mrc_qp_info *info,
					     __u32 qpn, __u32 una)
{
	struct mrc_qp_stats *st = qp_stats(mrc_qpn_to_slot(qpn));
	__u32 ctx = info->ctx;
	void *ring = bpf_map_lookup_elem(&mrc_events, &ctx);

	for (int i = 0; i < MRC_COMPL_BURST; i++) {
		__u32 head = READ_ONCE(tx->wr_head);
		__u32 tail = READ_ONCE(tx->wr_tail);
		struct mrc_wr_rec *rec;
		struct mrc_event *e;
		__u32 last;

		if (head == tail)
			break;
		rec = &tx->wr[head % MRC_WR_RING];
		last = READ_ONCE(rec->last_psn);
		if (!mrc_psn_before(last, una))
			break;
		e = ring ? bpf_ringbuf_reserve(ring, sizeof(*e), 0) : NULL;
		if (!e) {
			count_drop(MRC_DROP_RING_FULL);
			break;		/* not retired: a later SACK will */
		}
		if (__sync_val_compare_and_swap(&tx->wr_head, head, head + 1) != head) {
			bpf_ringbuf_discard(e, 0);
			continue;	/* another CPU took it; look again */
		}
		e->type = MRC_EVT_COMPLETION;
		e->qpn = qpn;
		e->psn = last;
		e->ev = 0;
		e->reason = 0;
		e->hold_ns = 0;
		bpf_ringbuf_submit(e, 0);
		if (st)
			st->completions++;
	}
}

/*
 * A NACK younger than rtt_min >> NACK_AGE_SHIFT after the first send it
 * names cannot answer it. An eighth, not a half: rtt_min is measured on
 * full packets, while a trimmed header skips the payload's serialization
 * from the trim point on and the queues' data class; on the lab's 200 Mb/s
 * spines a real trim NACK came back in under half of it (trim.sh).
 */
#define NACK_AGE_SHIFT	3

/*
 * The youngest a NACK of this send may be. A retransmission waits half of
 * rtt_min: the resends of one PSN that NACKs drive are then at most two
 * per RTT, so a storm of NACKs for the PSNs in flight cannot multiply the
 * traffic. Not a whole rtt_min: a resend into a full queue is trimmed
 * again, and its NACK returns faster than a full packet's ack (with a
 * whole rtt_min, trim.sh's goodput fell from 8.5 to 1.8 Gb/s, a third of
 * the real NACKs gated and left to the timer; with half, none gated).
 */
static __always_inline __u64 nack_min_age(const struct mrc_tx_state *tx,
					  const struct mrc_send_rec *cur)
{
	__u64 rtt_min = READ_ONCE(tx->rtt_min_ns);

	return cur->flags & MRC_BTH_F_RETX ? rtt_min >> 1 : rtt_min >> NACK_AGE_SHIFT;
}

/*
 * How long libmrc must hold the resend a NACK of this send asks for: a
 * resend answering a resend waits until a whole minimum RTT after it, so
 * NACK-driven sends of one PSN are at most one per RTT (and with them the
 * window cuts, one per send), while the NACK itself is taken as soon as
 * nack_min_age() allows. A hold, not a gate: gating such NACKs for a
 * whole RTT left real re-trims to the retransmission timer (trim.sh's
 * goodput fell from 8.5 to 1.8 Gb/s); held, they cost at most the rest of
 * the RTT. A first send's NACK is never held.
 */
static __always_inline __u32 resend_hold_ns(const struct mrc_tx_state *tx,
					    const struct mrc_send_rec *cur, __u64 age)
{
	__u64 rtt_min = READ_ONCE(tx->rtt_min_ns);

	if (!(cur->flags & MRC_BTH_F_RETX) || age >= rtt_min)
		return 0;
	return (__u32)(rtt_min - age);
}

/*
 * May a NACK for psn act (resend, window cut, EV feedback)? Once per send
 * of the PSN, and not sooner than nack_min_age() after that send: no
 * answer to a send comes back sooner, so an earlier NACK speaks of an
 * older send, or is forged. The first NACK claims the send with a CAS on
 * the record's head (`nacked`); TC clears the claim when it sends the PSN
 * again. A NACK storm for one PSN thus makes at most one resend per send,
 * held (*hold_ns, resend_hold_ns()) to one per RTT, and 100 TRIMMED NACKs
 * one window cut.
 * A PSN in the window without a record of its own has not left the host
 * yet (libmrc counts it sent before TC logs it): no NACK can answer it.
 * (TC logs nothing when no EV is usable: those PSNs are left to the
 * timer.)
 */
static __always_inline int nack_may_act(struct mrc_tx_state *tx, __u32 slot,
					__u32 psn, __u32 *hold_ns)
{
	struct mrc_send_rec *rec = send_rec(slot, psn);
	struct mrc_send_rec cur;
	__u64 head, age;

	if (!rec)
		return 0;
	head = READ_ONCE(rec->head);
	cur.head = head;
	if (cur.psn != psn || cur.nacked)
		return 0;
	age = bpf_ktime_get_ns() - READ_ONCE(rec->sent_ns);
	if (age < nack_min_age(tx, &cur))
		return 0;
	cur.nacked = 1;
	if (__sync_val_compare_and_swap(&rec->head, head, cur.head) != head)
		return 0;
	if (hold_ns)
		*hold_ns = resend_hold_ns(tx, &cur, age);
	return 1;
}

/*
 * Selective acks are advisory (as TCP's, RFC 2018): a cumulative ack that
 * says the responder lacks una (its cack + 1 is una) while una's bit is
 * set proves the bit wrong. A responder's placed PSNs only grow, so no
 * SACK of its, early or late, could show una placed and then this cack;
 * the bit came from a forged SACK (or a responder that lost the data).
 * Clear it, so una is resent (now, through the NACK gate, or by the
 * timer) instead of the transfer waiting for an ack that never comes.
 */
static __always_inline void renege_una(struct mrc_tx_state *tx,
				       const struct mrc_qp_info *info,
				       __u32 qpn, __u32 implied, __u32 una)
{
	__u32 idx = una % MRC_WINDOW_MAX, slot = mrc_qpn_to_slot(qpn);
	__u64 *word = &tx->sacked[(idx / 64) & (MRC_BITMAP_WORDS - 1)];
	__u64 bit = 1ULL << (idx % 64);
	struct mrc_qp_stats *st;

	if (implied != una || una == READ_ONCE(tx->snd_nxt) ||
	    !(READ_ONCE(*word) & bit))
		return;
	if (!(__sync_fetch_and_and(word, ~bit) & bit))
		return;		/* another CPU cleared it */
	st = qp_stats(slot);
	if (st)
		st->sacks_reneged++;
	if (!nack_may_act(tx, slot, una, NULL))
		return;		/* its send was just resent or NACKed */
	emit_loss(info, qpn, una, 0);
	if (st)
		st->losses++;
}

/*
 * Common checks of SACK and NACK (`fixed` bytes of headers after UDP):
 * our QP, sending, from the peer, keyed, and its ICRC when the QP has one.
 */
static __always_inline struct mrc_tx_state *
ack_target(struct mrc_pkt *p, struct mrc_qp_info **info_out, int *reason,
	   __u32 fixed)
{
	struct mrc_qp_info *info;
	__u32 slot = 0;

	info = lookup_qp(p->qpn, &slot);
	if (!info) {
		*reason = MRC_DROP_UNKNOWN_QP;
		return NULL;
	}
	if (info->state != MRC_QPS_RTS && info->state != MRC_QPS_ERROR) {
		*reason = MRC_DROP_QP_NOT_READY;
		return NULL;
	}
	if (!from_peer(p, info)) {
		*reason = MRC_DROP_BAD_SOURCE;
		return NULL;
	}
	if (!has_qp_key(p, info)) {
		*reason = MRC_DROP_BAD_KEY;
		return NULL;
	}
	*reason = icrc_check_ctrl(p->ctx, &p->l4, info->flags, p->payload_len,
				  fixed);
	if (*reason)
		return NULL;
	*info_out = info;
	/* A QP without its state map (being created or torn down): no QP. */
	*reason = MRC_DROP_UNKNOWN_QP;
	return qp_tx_state(slot);
}

static __always_inline int handle_sack(struct mrc_pkt *p)
{
	struct mrc_sackh *sh = (void *)(p->bth + 1);
	__u32 slot = mrc_qpn_to_slot(p->qpn);
	struct mrc_qp_info *info = NULL;
	struct mrc_tx_state *tx;
	struct mrc_qp_stats *st;
	__u32 una = 0, old_una, base, top, trig_psn, sacked, lost, implied;
	__u64 rtt;
	int reason = MRC_DROP_UNKNOWN_QP;
	__u64 bits, window;

	if ((void *)(sh + 1) > p->end ||
	    p->payload_len < sizeof(struct mrc_bth) + sizeof(*sh))
		return count_drop(MRC_DROP_MALFORMED);
	tx = ack_target(p, &info, &reason, sizeof(struct mrc_bth) + sizeof(*sh));
	if (!tx || !info)
		return mrc_qpn_valid(p->qpn) ?
			count_qp_drop(slot, reason) : count_drop(reason);

	old_una = READ_ONCE(tx->snd_una);
	reason = ack_cumulative(tx, bpf_ntohl(sh->cack), &una);
	if (reason)
		return count_qp_drop(slot, reason);

	bits = (__u64)bpf_ntohl(sh->bitmap_hi) << 32 | bpf_ntohl(sh->bitmap_lo);
	base = mrc_psn_extend(una, bpf_ntohl(sh->cack) & MRC_PSN_MASK) + 1 +
	       bpf_ntohs(sh->bitmap_off);
	window = sack_window(tx, base, una);
	sacked = record_sacks(tx, base, bits & window);
	/*
	 * One past the highest PSN acked: by this SACK's bits when it acks
	 * one, else by its cumulative ack. Both lie within [una, snd_nxt]
	 * (the window is clipped to snd_nxt), so sack_max never passes it.
	 */
	top = (bits & window) ? base + fls64(bits & window) : una;
	advance_u32(&tx->sack_max, top);

	st = qp_stats(slot);
	if (st)
		st->rx_sack++;
	trig_psn = mrc_psn_extend(una, p->psn);
	/*
	 * RTT samples only from a live trigger: sent, and not yet acked
	 * when this SACK arrived (an old trigger's sample is forged or late).
	 */
	rtt = sack_feedback(tx, slot, trig_psn, sh->m, sh->hold,
			    !mrc_psn_before(trig_psn, old_una) &&
			    mrc_psn_before(trig_psn, READ_ONCE(tx->snd_nxt)));
	/*
	 * The window hears of the acks before the loss scan, and of losses
	 * after it, so nothing has to live across the scan's stack frames.
	 */
	cc_update(info, p->qpn, old_una, una, rtt, sacked, 0, 0,
		  (sh->m & 3) == MRC_M_SKIP_ONCE ? CC_ECN : 0);
	/* cack + 1 of this SACK is missing, or its cack would be past it. */
	implied = base - bpf_ntohs(sh->bitmap_off);
	renege_una(tx, info, p->qpn, implied, una);
	lost = report_losses(tx, info, p->qpn, una, implied,
			     sent_record(slot, trig_psn), base, window & ~bits);
	if (lost)
		cc_update(info, p->qpn, una, una, 0, 0, 0, lost, 0);
	emit_completions(tx, info, p->qpn, una);
	return XDP_DROP;	/* consumed */
}

static __always_inline int nack_is_fatal(__u8 reason)
{
	return reason == MRC_NACK_REMOTE_ACCESS || reason == MRC_NACK_UNEXP_EVENT;
}

/*
 * What a NACK that is no fatal error says about the path of psn and the
 * window: a trim is counted for the window (and a mid-path one penalises
 * the EV), the receiver's ALWAYS_SKIP verdict demotes the EV, and the
 * loss is counted on it.
 */
static __always_inline void nack_feedback(const struct mrc_qp_info *info,
					  __u32 qpn, const struct mrc_nackh *nh,
					  __u32 psn, __u32 old_una, __u32 una)
{
	__u32 slot = mrc_qpn_to_slot(qpn), trimmed = 0;

	if (nh->reason == MRC_NACK_TRIMMED || nh->reason == MRC_NACK_TRIMMED_LASTHOP) {
		trim_feedback(slot, psn, nh->reason);
		trimmed = 1;
	}
	cc_update(info, qpn, old_una, una, 0, 0, trimmed, 0,
		  nh->reason == MRC_NACK_TRIMMED_LASTHOP ? CC_LAST_HOP : 0);
	if ((nh->m & 3) == MRC_M_ALWAYS_SKIP) {
		struct mrc_send_rec *rec = sent_record(slot, psn);

		if (rec)
			always_skip_ev(slot, rec->ev_idx, psn);
	}
	blame_loss(slot, psn, NULL, 0);
}

static __always_inline int handle_nack(struct mrc_pkt *p)
{
	struct mrc_nackh *nh = (void *)(p->bth + 1);
	__u32 slot = mrc_qpn_to_slot(p->qpn);
	struct mrc_qp_info *info = NULL;
	struct mrc_tx_state *tx;
	struct mrc_qp_stats *st;
	struct mrc_event evt = {};
	__u32 una = 0, old_una, psn;
	int reason = MRC_DROP_UNKNOWN_QP;

	if ((void *)(nh + 1) > p->end ||
	    p->payload_len < sizeof(struct mrc_bth) + sizeof(*nh))
		return count_drop(MRC_DROP_MALFORMED);
	tx = ack_target(p, &info, &reason, sizeof(struct mrc_bth) + sizeof(*nh));
	if (!tx || !info)
		return mrc_qpn_valid(p->qpn) ?
			count_qp_drop(slot, reason) : count_drop(reason);

	/*
	 * A NACK, fatal or not, speaks only of a PSN in [snd_una, snd_nxt):
	 * anything else is stale or forged and changes nothing (not even
	 * its cumulative ack).
	 */
	old_una = READ_ONCE(tx->snd_una);
	psn = mrc_psn_extend(old_una, p->psn);
	if (!mrc_psn_before(psn, READ_ONCE(tx->snd_nxt)))
		return count_qp_drop(slot, MRC_DROP_BAD_ACK);
	if (mrc_psn_before(psn, old_una))
		return count_qp_drop(slot, MRC_DROP_STALE_ACK);
	reason = ack_cumulative(tx, bpf_ntohl(nh->cack), &una);
	if (reason)
		return count_qp_drop(slot, reason);
	/* Its own cumulative ack (or another CPU's) passed it: stale. */
	if (mrc_psn_before(psn, una))
		return count_qp_drop(slot, MRC_DROP_STALE_ACK);

	st = qp_stats(slot);
	if (st)
		st->rx_nack++;
	evt.qpn = p->qpn;
	evt.psn = psn;
	evt.ev = bpf_ntohl(nh->ev);
	evt.reason = nh->reason;
	/* Completions first: what the peer acked before refusing succeeded. */
	emit_completions(tx, info, p->qpn, una);
	if (nack_is_fatal(nh->reason)) {
		evt.type = MRC_EVT_QP_FATAL;
		/*
		 * One signal: the event, which carries the reason; libmrc then
		 * moves the QP (and tx->state) to ERROR. Only when the event is
		 * lost (ring full or gone) does XDP write the state itself, the
		 * one signal left, which libmrc's progress loop checks.
		 */
		if (emit_event(info, &evt))
			WRITE_ONCE(tx->state, MRC_QPS_ERROR);
		return XDP_DROP;	/* consumed */
	}
	/* Only the first NACK for a send acts; the others change nothing. */
	if (!nack_may_act(tx, slot, psn, &evt.hold_ns)) {
		if (st) {
			st->nacks_gated++;
			if (nh->reason == MRC_NACK_TRIMMED ||
			    nh->reason == MRC_NACK_TRIMMED_LASTHOP)
				st->trim_cuts_gated++;
		}
		return XDP_DROP;	/* consumed */
	}
	evt.type = MRC_EVT_LOSS;
	if (st)
		st->losses++;
	nack_feedback(info, p->qpn, nh, psn, old_una, una);
	emit_event(info, &evt);
	return XDP_DROP;	/* consumed */
}

#endif /* MRC_BPF_ACK_RX_H */
