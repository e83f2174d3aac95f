/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Every QP of a host at once, read in bulk (agent/map_bulk.h): mrc_qps
 * and mrc_qp_owner by batch lookups, each row's EV table, mrc_tx, mrc_rx
 * and window view through read-only mmaps of the QP's own maps
 * (user/common/qpmaps.h), the per-CPU counters by batch.
 * What `mrcctl qp list`, `stats`, `status` and `doctor` read, in a few
 * syscalls at thousands of QPs, sized by the maps (mrcd --max-qps), never
 * by a compile-time limit.
 */
#ifndef MRC_QP_TABLE_H
#define MRC_QP_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrc/abi.h"

/* The maps to read, by fd; -1 where not needed (or absent). */
struct qp_table_maps {
	int qps, qp_owner;		/* needed */
	int qp_evs, tx, rx, cc_view;	/* rows' maps mmapped when given */
	int qp_stats;			/* counters when given */
	int ctx_owner;			/* contexts in use when given */
};

/* Which QPs get a row. */
enum qp_table_rows {
	QPT_LIVE,		/* not in RESET */
	QPT_LIVE_OR_COUNTED,	/* also RESET slots whose counters are not zero */
};

#define QPT_COUNTERS	(sizeof(struct mrc_qp_stats) / sizeof(uint64_t))

struct qp_table {
	uint32_t max_qps;		/* entries of mrc_qps: QP numbers 1..max_qps */
	uint32_t max_ctx;		/* entries of mrc_ctx_owner; 0 = not read */
	uint32_t qps_in_use;		/* QP numbers claimed (mrc_qp_owner) */
	uint32_t ctx_in_use;		/* contexts (mrc_ctx_owner) */
	uint32_t n;			/* rows */
	uint32_t *slot;			/* [n] ascending */
	struct mrc_qp_info *info;	/* [n] */
	uint32_t *owner;		/* [n] pid; 0 = none */
	uint64_t *counters;		/* [n * QPT_COUNTERS], or NULL */
	/*
	 * Each row's state maps, mmapped read-only, indexed by row: NULL
	 * arrays when the map was not given, a NULL entry when the QP has
	 * none (gone meanwhile; ccv: no window).
	 */
	const struct mrc_qp_evs **evs;
	const struct mrc_tx_state **tx;
	const struct mrc_rx_state **rx;
	const struct mrc_cc_view **ccv;
	uint32_t n_ccv;			/* windows in mrc_cc_view */
};

/* Read the table; 0, or -errno with a message. qp_table_free() in every case. */
int qp_table_read(struct qp_table *t, const struct qp_table_maps *m,
		  enum qp_table_rows rows, char *err, size_t errlen);
void qp_table_free(struct qp_table *t);

/* The row of slot, or -1. */
long qp_table_find(const struct qp_table *t, uint32_t slot);

/* EV counts of a QP's table by state (the `qp list` columns). */
struct qp_ev_counts {
	unsigned int good, skip, bad, denied, backup;
};

void qp_ev_counts(const struct mrc_qp_evs *evs, uint32_t n_evs,
		  struct qp_ev_counts *out);

#endif
