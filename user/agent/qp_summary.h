/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * A host's QPs in a few numbers, for `mrcctl status` and `doctor` at
 * thousands of QPs: QPs by state, how many are in ERROR or have EVs
 * ASSUMED_BAD, the worst few by name; and the limits mrcd was started
 * with against their use. Pure functions of a qp_table (unit-tested).
 */
#ifndef MRC_QP_SUMMARY_H
#define MRC_QP_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "agent/qp_table.h"

#define QP_WORST_MAX	5	/* QPs named in a summary */

struct qp_worst {
	uint32_t qpn;
	uint32_t state;		/* enum mrc_qp_state_code */
	uint32_t bad;		/* EVs ASSUMED_BAD */
	uint32_t n_evs;
};

struct qp_summary {
	unsigned int by_state[MRC_QPS_ERROR + 1];
	unsigned int total;		/* QPs not in RESET */
	unsigned int in_error;
	unsigned int with_bad_evs;	/* QPs with an EV ASSUMED_BAD */
	uint64_t bad_evs;		/* EVs ASSUMED_BAD, all QPs */
	unsigned int n_worst;
	/* In ERROR first, then by EVs ASSUMED_BAD, most first; QP number breaks ties. */
	struct qp_worst worst[QP_WORST_MAX];
};

/* The summary of t's rows (the EV counts need t->evs; without them 0). */
void qp_summarise(const struct qp_table *t, struct qp_summary *s);

/* The limits mrcd sized its maps for, and their use. */
struct host_limits {
	uint32_t max_qps, qps_in_use;		/* mrc_qps, mrc_qp_owner */
	uint32_t max_ctx, ctx_in_use;		/* mrc_ctx_owner */
};

/* The percentage of a limit in use above which doctor warns. */
#define LIMIT_WARN_PERCENT	90

/* Is use more than LIMIT_WARN_PERCENT of max? (max 0: no limit known) */
bool limit_near(uint32_t use, uint32_t max);

#endif
