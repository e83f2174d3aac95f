/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Counters and the per-context event rings: drops by reason (mrc_drops),
 * per-QP counters (mrc_qp_stats), control-path counters (mrc_ctl_stats),
 * and events for the process that owns a QP (mrc_events). Shared by every
 * role of both hooks.
 */
#ifndef MRC_BPF_STATS_H
#define MRC_BPF_STATS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "mrc/maps.h"

static __always_inline int count_drop(enum mrc_drop_reason reason)
{
	__u32 zero = 0;
	__u64 *stats = bpf_map_lookup_elem(&mrc_drops, &zero);

	if (stats && reason < MRC_DROP_REASONS)
		stats[reason & 15]++;
	return XDP_DROP;
}

static __always_inline struct mrc_qp_stats *qp_stats(__u32 slot)
{
	return bpf_map_lookup_elem(&mrc_qp_stats, &slot);
}


static __always_inline struct mrc_ctl_stats *ctl_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&mrc_ctl_stats, &zero);
}

static __always_inline int count_qp_drop(__u32 slot, int reason)
{
	struct mrc_qp_stats *st = qp_stats(slot);

	if (st) {
		if (reason == MRC_DROP_DUPLICATE)
			st->rx_dup++;
		else if (reason == MRC_DROP_OUT_OF_WINDOW)
			st->rx_oow++;
		else
			st->rx_bad++;
	}
	return count_drop(reason);
}

/* Write evt to the owner's ring: 0, or -1 when it is lost (counted). */
static __always_inline int emit_event(const struct mrc_qp_info *info,
				      struct mrc_event *evt)
{
	__u32 ctx = info->ctx;
	void *ring = bpf_map_lookup_elem(&mrc_events, &ctx);

	if (!ring || bpf_ringbuf_output(ring, evt, sizeof(*evt), 0)) {
		count_drop(MRC_DROP_RING_FULL);
		return -1;
	}
	return 0;
}

#endif /* MRC_BPF_STATS_H */
