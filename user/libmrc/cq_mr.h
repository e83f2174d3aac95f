/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc layer "cq_mr" (see LAYERS): completion queues, memory regions
 * and the context's queue of asynchronous events; what the layers above
 * deliver results into and check keys against.
 */
#ifndef MRC_CQ_MR_H
#define MRC_CQ_MR_H

#include "base.h"

struct mrc_mr *mrc_find_mr(struct mrc_context *ctx, uint32_t key);
int mrc_cq_push(struct mrc_cq *cq, const struct mrc_wc *wc);
void mrc_push_async(struct mrc_context *ctx, struct mrc_qp *qp,
		    enum mrc_async_event_type type, enum mrc_wc_status status);

#endif /* MRC_CQ_MR_H */
