/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * A congestion window (struct mrc_cc_view of include/mrc/abi.h) as the
 * tools show it, in one place for mrcctl (`qp show`, `qp list`, through
 * mrcd's map fds) and mrc-perf (the client's "cc" object, from the pinned
 * maps): the algorithm's name, RTT percentiles from the view's histogram,
 * the JSON members, and reading the view of a QP from the pin folder.
 */
#ifndef MRC_CC_VIEW_H
#define MRC_CC_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mrc/abi.h"

/* "none", "nscc", or "?" for a value this build does not know. */
const char *cc_algo_name(uint32_t algo);

/* RTT samples in the view's histogram. */
static inline uint64_t cc_rtt_samples(const struct mrc_cc_view *v)
{
	uint64_t n = 0;

	for (uint32_t b = 0; b < MRC_RTT_BUCKETS; b++)
		n += v->rtt_hist[b];
	return n;
}

/*
 * The pct-th percentile (1..100) of the SACK-measured RTTs, as the upper
 * edge of the bucket it falls in (mrc_rtt_bucket_top_ns: an upper bound,
 * within 1/16 of the value above 16 us); 0 when there are no samples.
 */
static inline uint64_t cc_rtt_percentile_ns(const struct mrc_cc_view *v,
					    unsigned int pct)
{
	uint64_t total = cc_rtt_samples(v), rank, seen = 0;
	uint32_t b;

	if (!total)
		return 0;
	rank = (total * pct + 99) / 100;
	if (!rank)
		rank = 1;
	for (b = 0; b < MRC_RTT_BUCKETS - 1; b++) {
		seen += v->rtt_hist[b];
		if (seen >= rank)
			break;
	}
	return mrc_rtt_bucket_top_ns(b);
}

/*
 * The view as JSON object members, without the braces: algo, cwnd,
 * inflight, waiting, base_rtt_ns, min_rtt_ns, avg_delay_ns, target_ns,
 * n_md, n_fast, n_qa, n_trims, n_losses, acked_bytes, rtt_samples,
 * rtt_p50_us, rtt_p99_us (0 without samples).
 */
void cc_view_json_members(FILE *f, const struct mrc_cc_view *v);

/* The window of one QP, read from the maps pinned in a folder. */
struct cc_view_src {
	int fd_qps, fd_view;	/* -1 when not open */
	uint32_t slot;		/* 1-based cc_slot of the QP; 0 = no window */
};

/*
 * Open mrc_qps in `pin_dir` and find QP `qpn`'s window; with one, open
 * mrc_cc_view too (user/common/pins.h: shapes and ABI version checked).
 * 0 (s->slot 0 = the QP has no window), or -errno with the reason in
 * `err` (a fast path without congestion control has no mrc_cc_view:
 * -ENOENT; pins of another build: -EPROTO). cc_view_close() in every case.
 */
int cc_view_open(struct cc_view_src *s, const char *pin_dir, uint32_t qpn,
		 char *err, size_t errlen);

/* The window's view now: 0, -ENOENT without a window, or -errno. */
int cc_view_read(const struct cc_view_src *s, struct mrc_cc_view *v);

void cc_view_close(struct cc_view_src *s);

#endif
