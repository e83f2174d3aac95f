/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Per-EV bookkeeping: TC logs what it sent where (mrc_send_log) and counts
 * it per EV (mrc_ev_tx); XDP reads the log to judge the paths of the
 * packets SACKs and NACKs speak about, and counts per EV (mrc_ev_stats).
 *
 * All three are per QP inner maps, sized by the QP (include/mrc/abi.h):
 * one lookup in the outer map finds the QP's map, one in it the record.
 * A QP without them (its EV table not published) or an index past them
 * finds NULL: the bookkeeping is skipped and counted (ev_maps_missing).
 */
#ifndef MRC_BPF_EV_LOG_H
#define MRC_BPF_EV_LOG_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "mrc/maps.h"
#include "mrc/stats.h"

static __always_inline void count_ev_maps_missing(__u32 slot)
{
	struct mrc_qp_stats *st = qp_stats(slot);

	if (st)
		st->ev_maps_missing++;
}

/*
 * The record of psn in an inner send log: record psn & (size - 1), with
 * the size the map itself has (a power of two, libmrc's choice; were it
 * none, the key still stays below it), so nothing outside the map tells
 * BPF where its end is.
 */
static __always_inline struct mrc_send_rec *log_rec(void *log, __u32 psn)
{
	__u32 key = psn & (((struct bpf_map *)log)->max_entries - 1);

	return bpf_map_lookup_elem(log, &key);
}

/* The send log of the QP in slot, or NULL (counted) when it has none. */
static __always_inline void *send_log_of(__u32 slot)
{
	void *log = bpf_map_lookup_elem(&mrc_send_log, &slot);

	if (!log)
		count_ev_maps_missing(slot);
	return log;
}

static __always_inline struct mrc_send_rec *send_rec(__u32 slot, __u32 psn)
{
	void *log = send_log_of(slot);

	return log ? log_rec(log, psn) : NULL;
}

/* XDP's counters of one EV (its own cache line), or NULL (counted). */
static __always_inline struct mrc_ev_rx_counters *ev_counters(__u32 slot,
							      __u32 idx)
{
	void *stats = bpf_map_lookup_elem(&mrc_ev_stats, &slot);
	struct mrc_ev_rx_counters *c = stats ? bpf_map_lookup_elem(stats, &idx) : NULL;

	if (!c)
		count_ev_maps_missing(slot);
	return c;
}

/*
 * TC's count of packets sent on an EV (TC's own map): one, or the
 * segments of a GSO burst, with their bytes on the wire.
 */
static __always_inline void count_ev_tx(__u32 slot, int idx, __u32 packets,
					__u32 bytes)
{
	void *stats = bpf_map_lookup_elem(&mrc_ev_tx, &slot);
	__u32 key = (__u32)idx;
	struct mrc_ev_tx_counters *c = stats ? bpf_map_lookup_elem(stats, &key) : NULL;

	if (!c) {
		count_ev_maps_missing(slot);
		return;
	}
	__sync_fetch_and_add(&c->packets, packets);
	__sync_fetch_and_add(&c->bytes, bytes);
}

/* The send-log record of psn if it still describes psn, else NULL. */
static __always_inline struct mrc_send_rec *sent_record(__u32 slot, __u32 psn)
{
	struct mrc_send_rec *rec = send_rec(slot, psn);

	return rec && rec->psn == psn ? rec : NULL;
}

#endif /* MRC_BPF_EV_LOG_H */
