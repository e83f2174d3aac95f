/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc layer "paths" (see LAYERS): the QP's EV table, the paths TC
 * egress sprays over.
 */
#ifndef MRC_PATHS_H
#define MRC_PATHS_H

#include "base.h"

/*
 * At RTR: build the table from the QP's EV profile over the planes both
 * ends have, balance it over the spines, and reset the per-EV counters,
 * send log and reverse EVs. 0 or -errno.
 */
int mrc_install_ev_table(struct mrc_qp *qp);

/*
 * A fresh send log alone, for a new window (an MPR changed after the EV
 * table was published): the records of PSNs in flight are lost. 0 or
 * -errno.
 */
int mrc_qp_new_log(struct mrc_qp *qp, uint32_t window);

#endif /* MRC_PATHS_H */
