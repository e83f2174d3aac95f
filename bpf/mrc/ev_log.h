/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Per-EV bookkeeping: TC logs what it sent where (mrc_send_log) and counts
 * it per EV (mrc_ev_stats); XDP reads the log to judge the paths of the
 * packets SACKs and NACKs speak about.
 */
#ifndef MRC_BPF_EV_LOG_H
#define MRC_BPF_EV_LOG_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "mrc/maps.h"

static __always_inline struct mrc_send_rec *send_rec(__u32 slot, __u32 psn)
{
	struct mrc_send_log *log = bpf_map_lookup_elem(&mrc_send_log, &slot);

	return log ? &log->rec[psn % MRC_WINDOW_MAX] : NULL;
}

/* XDP's counters of one EV (its own cache line). */
static __always_inline struct mrc_ev_rx_counters *ev_counters(__u32 slot,
							      __u32 idx)
{
	struct mrc_qp_ev_stats *es = bpf_map_lookup_elem(&mrc_ev_stats, &slot);

	return es ? &es->rx[idx & (MRC_MAX_EVS - 1)] : NULL;
}

/*
 * TC's count of packets sent on an EV (TC's block of the counters): one,
 * or the segments of a GSO burst, with their bytes on the wire.
 */
static __always_inline void count_ev_tx(__u32 slot, int idx, __u32 packets,
					__u32 bytes)
{
	struct mrc_qp_ev_stats *es = bpf_map_lookup_elem(&mrc_ev_stats, &slot);
	struct mrc_ev_tx_counters *c = es ? &es->tx[(__u32)idx & (MRC_MAX_EVS - 1)] : NULL;

	if (!c)
		return;
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
