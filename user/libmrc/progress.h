/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc layer "progress" (see LAYERS): the progress engine's set-up, as
 * context open and close need it (mrc_poll_cq is its API entry).
 */
#ifndef MRC_PROGRESS_H
#define MRC_PROGRESS_H

#include "base.h"

/* Read the context's event ring (ctx->ring_fd) with the engine's callback. */
int mrc_progress_open_ring(struct mrc_context *ctx);
/* What ends an idle sleep: the ring and the socket (ctx->sock). */
int mrc_progress_open_waits(struct mrc_context *ctx);
void mrc_progress_close(struct mrc_context *ctx);

#endif /* MRC_PROGRESS_H */
