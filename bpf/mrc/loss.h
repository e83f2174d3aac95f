/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Loss detection on the requester (XDP, from SACKs): which holes one SACK
 * proves lost, reported once each into the owner's event ring and blamed
 * on the EV that carried the packet (mrc/ev_feedback.h).
 */
#ifndef MRC_BPF_LOSS_H
#define MRC_BPF_LOSS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "mrc/ev_rules.h"
#include "parsing.h"
#include "mrc/maps.h"
#include "mrc/stats.h"
#include "mrc/bits.h"
#include "mrc/ev_log.h"
#include "mrc/ev_feedback.h"

/*
 * Loss evidence comes from one SACK at a time: its bitmap window (and
 * cack + 1) says which PSNs the responder lacked when it sent the SACK,
 * and its trigger (the packet that made the responder send it) says how
 * late that was. SACKs are sprayed and arrive out of order, and those on
 * a failed path are lost; mixing an old window with a newer SACK's
 * timing would call packets lost that arrived in between.
 */
struct loss_ctx {
	struct mrc_tx_state *tx;
	const struct mrc_qp_info *info;
	struct mrc_qp_evs *evs;
	struct mrc_qp_stats *st;
	__u64 now, reorder_ns, give_up_ns;
	__u64 trig_sent_ns;	/* 0: no send record of the trigger */
	__u32 trig_plane, trig_ev;
	__u32 implied;		/* this SACK's cack + 1 */
	__u32 win_base;
	__u64 window;		/* PSNs of its bitmap window shown missing */
	__u32 qpn, from, to;
	__u32 reported;		/* losses reported (for the window) */
};

/* Did this SACK's bitmap (or its cumulative ack) show psn missing? */
static __always_inline int shown_missing(const struct loss_ctx *lc, __u32 psn)
{
	__u32 off = psn - lc->win_base;

	if (psn == lc->implied)
		return 1;
	return off < 64 && ((lc->window >> off) & 1);
}

/*
 * Was psn's packet overtaken: sent on the trigger's EV more than
 * MRC_EV_REORDER_NS before it (one path is FIFO), on the trigger's plane
 * more than the reorder window before it (planes differ by their queues,
 * paths within one plane less), or longer ago than the give-up window?
 */
static __always_inline int overtaken(struct loss_ctx *lc,
				     const struct mrc_send_rec *rec)
{
	__u8 state;

	/*
	 * Give up on the packet when it was sent that long before the
	 * trigger: measured from the trigger, not from now, since a SACK
	 * held up on its way speaks of the time it was sent.
	 */
	if (!lc->trig_sent_ns)
		return lc->now - rec->sent_ns > lc->give_up_ns;
	if (lc->trig_sent_ns > rec->sent_ns + lc->give_up_ns)
		return 1;
	/*
	 * Its EV is already out of service (a loss, port status, the
	 * controller): a packet still missing on it is lost as soon as a
	 * trigger on any plane overtook it, so a dead plane's packets are
	 * resent without waiting for a trigger that plane cannot deliver.
	 */
	state = lc->evs ? READ_ONCE(lc->evs->ev[rec->ev_idx & (MRC_MAX_EVS - 1)].state) : 0;
	if (mrc_ev_state_out_of_service(state) &&
	    lc->trig_sent_ns > rec->sent_ns + lc->reorder_ns)
		return 1;
	if (rec->ev_idx == lc->trig_ev &&
	    lc->trig_sent_ns > rec->sent_ns + MRC_EV_REORDER_NS)
		return 1;
	return rec->plane == lc->trig_plane &&
	       lc->trig_sent_ns > rec->sent_ns + lc->reorder_ns;
}

/*
 * First pass: how far the holes are known losses. A hole this SACK did
 * not show, or whose packet the trigger did not overtake, ends the range:
 * it and everything after it wait for later SACKs.
 */
static long loss_scan_step(__u32 i, void *data)
{
	struct loss_ctx *lc = data;
	__u32 psn = lc->from + i;
	struct mrc_send_rec *rec;

	if (psn == lc->to)
		return 1;
	if (bitmap_test(lc->tx->sacked, psn))
		return 0;
	rec = sent_record(mrc_qpn_to_slot(lc->qpn), psn);
	if (!shown_missing(lc, psn) || (rec && !overtaken(lc, rec))) {
		lc->to = psn;
		return 1;
	}
	return 0;
}

/*
 * A loss report written straight into the ring (reserve, fill, submit):
 * no copy of the record on this callback's stack, which sits on top of
 * the SACK path's frame and under demote_siblings' callback.
 */
static __always_inline void emit_loss(const struct mrc_qp_info *info, __u32 qpn,
				      __u32 psn, __u32 ev)
{
	__u32 ctx = info->ctx;
	void *ring = bpf_map_lookup_elem(&mrc_events, &ctx);
	struct mrc_event *e = ring ? bpf_ringbuf_reserve(ring, sizeof(*e), 0) : NULL;

	if (!e) {
		count_drop(MRC_DROP_RING_FULL);
		return;
	}
	e->type = MRC_EVT_LOSS;
	e->qpn = qpn;
	e->psn = psn;
	e->ev = ev;
	e->reason = 0;
	e->hold_ns = 0;
	bpf_ringbuf_submit(e, 0);
}

static long report_loss_step(__u32 i, void *data)
{
	struct loss_ctx *lc = data;
	__u32 psn = lc->from + i, ev;

	if (psn == lc->to)
		return 1;
	if (bitmap_test(lc->tx->sacked, psn))
		return 0;
	ev = blame_loss(mrc_qpn_to_slot(lc->qpn), psn, lc->evs, lc->info->n_evs);
	emit_loss(lc->info, lc->qpn, psn, ev);
	lc->reported++;
	if (lc->st)
		lc->st->losses++;
	return 0;
}

/*
 * Are all PSNs in [from, to) selectively acked? At most MRC_LOSS_BURST
 * (32) PSNs, so at most two bitmap words, checked whole.
 */
static __always_inline int all_sacked(struct mrc_tx_state *tx, __u32 from,
				      __u32 to)
{
	__u32 n = to - from, idx = from % MRC_WINDOW_MAX;
	__u32 w = idx / 64, b = idx % 64, first;
	__u64 mask, word;

	if (n == 0 || n > MRC_LOSS_BURST)
		return n == 0;
	first = 64 - b < n ? 64 - b : n;
	mask = (first == 64 ? ~0ULL : ((1ULL << first) - 1)) << b;
	word = READ_ONCE(tx->sacked[w & (MRC_BITMAP_WORDS - 1)]);
	if ((word & mask) != mask)
		return 0;
	if (first == n)
		return 1;
	mask = (1ULL << (n - first)) - 1;
	word = READ_ONCE(tx->sacked[(w + 1) & (MRC_BITMAP_WORDS - 1)]);
	return (word & mask) == mask;
}

/* How much later a packet on the same plane must be to overtake a hole. */
static __always_inline __u64 reorder_window(struct mrc_tx_state *tx)
{
	__u64 w = READ_ONCE(tx->srtt_ns) / MRC_REORDER_FRACTION;

	return w < MRC_REORDER_MIN_NS ? MRC_REORDER_MIN_NS : w;
}

/* After this long without an acknowledgement a hole is lost anyway. */
static __always_inline __u64 give_up_window(struct mrc_tx_state *tx)
{
	__u64 w = 2 * (__u64)READ_ONCE(tx->rtt_peak_ns);

	return w < 4 * MRC_REORDER_MIN_NS ? 4 * MRC_REORDER_MIN_NS : w;
}

/*
 * Holes below sack_max - DUPTHRESH that this SACK shows missing and whose
 * packet its trigger overtook (see overtaken()) are lost. loss_mark
 * remembers how far we reported, so each hole is reported once (a timeout in libmrc rewinds
 * it); the range is claimed with a compare-and-swap so two CPUs never
 * report the same PSN.
 */
static __always_inline __u32 report_losses(struct mrc_tx_state *tx,
					  const struct mrc_qp_info *info,
					  __u32 qpn, __u32 una, __u32 implied,
					  const struct mrc_send_rec *trig,
					  __u32 win_base, __u64 window)
{
	__u32 sack_max = READ_ONCE(tx->sack_max);
	__u32 nxt = READ_ONCE(tx->snd_nxt);
	__u32 mark = READ_ONCE(tx->loss_mark);
	__u32 limit, slot = mrc_qpn_to_slot(qpn);
	struct loss_ctx lc = { .tx = tx, .info = info, .qpn = qpn };

	/* Never a loss (nor loss_mark) at or past snd_nxt: never sent. */
	if (mrc_psn_before(nxt, sack_max))
		sack_max = nxt;
	limit = sack_max - MRC_DUPTHRESH;

	lc.from = mrc_psn_before(mark, una) ? una : mark;
	if (!mrc_psn_before(lc.from, limit))
		return 0;
	lc.to = limit - lc.from > MRC_LOSS_BURST ? lc.from + MRC_LOSS_BURST : limit;
	/* The common case, no hole at all: move the mark, scan nothing. */
	if (all_sacked(tx, lc.from, lc.to)) {
		__sync_val_compare_and_swap(&tx->loss_mark, mark, lc.to);
		return 0;
	}
	lc.now = bpf_ktime_get_ns();
	lc.reorder_ns = reorder_window(tx);
	lc.give_up_ns = give_up_window(tx);
	lc.implied = implied;
	lc.win_base = win_base;
	lc.evs = qp_ev_table(slot);
	lc.window = window;
	if (trig) {
		lc.trig_sent_ns = trig->sent_ns;
		lc.trig_plane = trig->plane;
		lc.trig_ev = trig->ev_idx;
	}
	bpf_loop(MRC_LOSS_BURST, loss_scan_step, &lc, 0);
	if (lc.to == lc.from)
		return 0;
	if (__sync_val_compare_and_swap(&tx->loss_mark, mark, lc.to) != mark)
		return 0;	/* another CPU reports this range */
	lc.st = qp_stats(slot);
	bpf_loop(MRC_LOSS_BURST, report_loss_step, &lc, 0);
	return lc.reported;
}

#endif /* MRC_BPF_LOSS_H */
