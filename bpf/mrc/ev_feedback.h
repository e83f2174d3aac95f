/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * What SACKs and NACKs say about the paths of the packets they speak
 * about: per-EV acks, RTT samples and marks (ECN echo, trims, the
 * receiver's ALWAYS_SKIP verdict), losses blamed on the EV that carried
 * the packet; the EV state changes that follow (mrc/ev_state.h).
 */
#ifndef MRC_BPF_EV_FEEDBACK_H
#define MRC_BPF_EV_FEEDBACK_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "parsing.h"
#include "mrc/maps.h"
#include "mrc/ev_log.h"
#include "mrc/ev_state.h"

/* ECN echo or mid-path trim on the EV at idx: skip a turn, maybe swap. */
static __always_inline void penalise_ev(__u32 slot, __u32 idx,
					struct mrc_ev_rx_counters *c)
{
	struct mrc_qp_evs *evs = qp_ev_table(slot);
	struct mrc_qp_info *info = bpf_map_lookup_elem(&mrc_qps, &slot);

	if (!evs || !info || !ev_idx_valid(info->n_evs, idx))
		return;
	skip_once(evs, info->n_evs, idx);
	if (__sync_fetch_and_add(&c->marks_in_row, 1) + 1 >= MRC_EV_SWAP_MARKS) {
		WRITE_ONCE(c->marks_in_row, 0);
		swap_for_backup(evs, info->n_evs, idx);
	}
}

/* The receiver judges the path bad (M = ALWAYS_SKIP): demote the EV. */
static __always_inline void always_skip_ev(__u32 slot, __u32 idx, __u32 psn)
{
	struct mrc_qp_evs *evs = qp_ev_table(slot);
	struct mrc_qp_info *info = bpf_map_lookup_elem(&mrc_qps, &slot);

	if (evs && info)
		demote_ev(slot, evs, info->n_evs, idx, MRC_EVR_ALWAYS_SKIP, psn, 0);
}

/*
 * The QP's smoothed RTT and deviation (RFC 6298 gains 1/8 and 1/4), for
 * the reorder window. Updates from two CPUs may interleave; the estimate
 * stays an estimate.
 */
static __always_inline void update_rtt(struct mrc_tx_state *tx, __u64 rtt)
{
	__s64 srtt, var, err;
	__u64 peak;

	if (rtt > 0xffffffffull)
		return;
	peak = READ_ONCE(tx->rtt_peak_ns);
	peak -= peak >> 6;
	WRITE_ONCE(tx->rtt_peak_ns, rtt > peak ? (__u32)rtt : (__u32)peak);
	srtt = READ_ONCE(tx->srtt_ns);
	var = READ_ONCE(tx->rttvar_ns);
	if (!srtt) {
		WRITE_ONCE(tx->srtt_ns, (__u32)rtt);
		WRITE_ONCE(tx->rttvar_ns, (__u32)(rtt / 2));
		return;
	}
	err = (__s64)rtt - srtt;
	/* Shifts, not divisions: BPF has no signed divide before v4. */
	srtt += err >> 3;
	var += ((err < 0 ? -err : err) - var) >> 2;
	WRITE_ONCE(tx->srtt_ns, (__u32)srtt);
	WRITE_ONCE(tx->rttvar_ns, (__u32)var);
}

/*
 * The smallest fabric RTT seen: the lower bound of how soon an answer to
 * a send can come back (ack_rx.h nack_may_act). It only falls, so a
 * fabric that grew slower never makes the NACK gate stricter.
 */
static __always_inline void note_min_rtt(struct mrc_tx_state *tx, __u64 sample)
{
	__u32 min = READ_ONCE(tx->rtt_min_ns);

	if (sample && sample <= 0xffffffffull && (!min || sample < min))
		WRITE_ONCE(tx->rtt_min_ns, (__u32)sample);
}

/* Raise *word to val unless it is already there (several CPUs). */
static __always_inline void raise_u64(__u64 *word, __u64 val)
{
	__u64 old;

	for (int i = 0; i < 4; i++) {
		old = READ_ONCE(*word);
		if (old >= val || __sync_val_compare_and_swap(word, old, val) == old)
			return;
	}
}

/* The newest send time acknowledged on the trigger's plane only grows. */
static __always_inline void note_plane_ack(struct mrc_tx_state *tx,
					   const struct mrc_send_rec *rec)
{
	__u32 plane = rec->plane;

	if (!tx || plane == 0 || plane > MRC_MAX_PLANES_ABI)
		return;
	raise_u64(&tx->acked_sent_ns[(plane - 1) & (MRC_MAX_PLANES_ABI - 1)],
		  rec->sent_ns);
}

/*
 * The RTT sample congestion control takes: the fabric's part, without the
 * time the responder held the trigger before acking it (its hold field).
 * The timers keep the whole RTT: a timeout must wait for the responder too.
 */
static __always_inline __u64 fabric_rtt(__u64 rtt, __u16 hold_wire)
{
	__u64 hold = (__u64)bpf_ntohs(hold_wire) << MRC_TS_SHIFT;

	/* A hold as long as the RTT itself cannot be right: keep the RTT. */
	return hold < rtt ? rtt - hold : rtt;
}

/* What a SACK says about the path of the packet that triggered it. */
/* Returns the trigger's RTT sample for the window, 0 when there is none. */
static __always_inline __u64 sack_feedback(struct mrc_tx_state *tx, __u32 slot,
					   __u32 psn, __u8 m, __u16 hold, int live)
{
	struct mrc_send_rec *rec = sent_record(slot, psn);
	struct mrc_ev_rx_counters *c;
	__u64 sample = 0;

	if (!rec)
		return 0;
	note_plane_ack(tx, rec);
	c = ev_counters(slot, rec->ev_idx);
	if (!c)
		return 0;
	__sync_fetch_and_add(&c->acked, 1);
	raise_u64(&c->acked_sent_ns, rec->sent_ns);
	/* Karn: a resent packet's RTT is ambiguous; a dead trigger's is no RTT. */
	if (live && !(rec->flags & MRC_BTH_F_RETX)) {
		__u64 rtt = bpf_ktime_get_ns() - rec->sent_ns;

		__sync_fetch_and_add(&c->rtt_sum_ns, rtt);
		__sync_fetch_and_add(&c->rtt_samples, 1);
		update_rtt(tx, rtt);
		sample = fabric_rtt(rtt, hold);
		note_min_rtt(tx, sample);
	}
	if ((m & 3) == MRC_M_ALWAYS_SKIP) {
		always_skip_ev(slot, rec->ev_idx, psn);
	} else if ((m & 3) == MRC_M_SKIP_ONCE) {
		__sync_fetch_and_add(&c->ecn, 1);
		penalise_ev(slot, rec->ev_idx, c);
	} else if (READ_ONCE(c->marks_in_row)) {
		WRITE_ONCE(c->marks_in_row, 0);
	}
	return sample;
}

/*
 * The EV a lost PSN went out on (for the loss report), counted. With the
 * QP's table (SACK evidence, not a NACK), the EV is demoted: a path that
 * lost a packet carries nothing more until probes say it works.
 */
static __always_inline __u32 blame_loss(__u32 slot, __u32 psn,
					struct mrc_qp_evs *evs, __u32 n)
{
	struct mrc_send_rec *rec = sent_record(slot, psn);
	struct mrc_ev_rx_counters *c;
	__u32 idx;

	if (!rec)
		return 0;
	idx = rec->ev_idx;
	c = ev_counters(slot, idx);
	if (c)
		__sync_fetch_and_add(&c->losses, 1);
	if (!evs || !ev_idx_valid(n, idx))
		return 0;
	if (demote_ev(slot, evs, n, idx, MRC_EVR_LOSS, psn, rec->sent_ns)) {
		if (c)
			WRITE_ONCE(c->lost_ns, bpf_ktime_get_ns());
		demote_siblings(slot, evs, n, idx, psn, rec->sent_ns);
	}
	return evs->ev[idx & (MRC_MAX_EVS - 1)].ev;
}

/* A trimmed packet: mid-path trims penalise its EV, last-hop trims not. */
static __always_inline void trim_feedback(__u32 slot, __u32 psn, __u8 reason)
{
	struct mrc_send_rec *rec = sent_record(slot, psn);
	struct mrc_ev_rx_counters *c;

	if (!rec)
		return;
	c = ev_counters(slot, rec->ev_idx);
	if (!c)
		return;
	__sync_fetch_and_add(&c->trims, 1);
	if (reason == MRC_NACK_TRIMMED)
		penalise_ev(slot, rec->ev_idx, c);
}

#endif /* MRC_BPF_EV_FEEDBACK_H */
