// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "cq_mr" (see LAYERS and cq_mr.h): memory regions, completion
 * queues and the context's asynchronous events. Completions are polled in
 * progress.c (mrc_poll_cq drives the transport when a queue is empty).
 */
#include <errno.h>
#include <stdlib.h>

#include "cq_mr.h"

/* ---- asynchronous events ----------------------------------------------- */

void mrc_push_async(struct mrc_context *ctx, struct mrc_qp *qp,
		    enum mrc_async_event_type type, enum mrc_wc_status status)
{
	uint32_t cap = sizeof(ctx->async) / sizeof(ctx->async[0]);
	struct mrc_async_event *ev;

	if (ctx->async_tail - ctx->async_head >= cap)
		ctx->async_head++;	/* keep the newest */
	ev = &ctx->async[ctx->async_tail++ % cap];
	ev->type = type;
	ev->qp = qp;
	ev->qp_num = qp ? qp->qpn : 0;
	ev->status = status;
}

int mrc_get_async_event(struct mrc_context *ctx, struct mrc_async_event *ev)
{
	uint32_t cap;

	if (!ctx || !ev)
		return mrc_err(EINVAL);
	cap = sizeof(ctx->async) / sizeof(ctx->async[0]);
	if (ctx->async_head == ctx->async_tail)
		return mrc_err(EAGAIN);
	*ev = ctx->async[ctx->async_head++ % cap];
	return 0;
}

/* ---- memory regions ---------------------------------------------------- */

struct mrc_mr *mrc_find_mr(struct mrc_context *ctx, uint32_t key)
{
	for (int i = 0; i < ctx->n_mrs; i++)
		if (ctx->mrs[i]->key == key)
			return ctx->mrs[i];
	return NULL;
}

/* An rkey peers cannot guess (getrandom); 0 or -errno. */
static int new_key(struct mrc_context *ctx, uint32_t *key)
{
	int err;

	do {
		err = mrc_random_bytes(key, sizeof(*key));
		if (err)
			return err;
	} while (*key == 0 || mrc_find_mr(ctx, *key));
	return 0;
}

struct mrc_mr *mrc_reg_mr(struct mrc_context *ctx, void *addr, size_t length,
			  unsigned int access)
{
	struct mrc_mr *mr;
	int err;

	if (!ctx || !addr || !length ||
	    access & ~(unsigned int)(MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE) ||
	    (uintptr_t)addr + length < (uintptr_t)addr)
		return mrc_err_ptr(EINVAL);
	if (ctx->n_mrs == ctx->cap_mrs) {
		int cap = ctx->cap_mrs ? 2 * ctx->cap_mrs : 16;
		struct mrc_mr **mrs = realloc(ctx->mrs, cap * sizeof(*mrs));

		if (!mrs)
			return mrc_err_ptr(ENOMEM);
		ctx->mrs = mrs;
		ctx->cap_mrs = cap;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return mrc_err_ptr(ENOMEM);
	err = new_key(ctx, &mr->key);
	if (err) {
		free(mr);
		return mrc_err_ptr(-err);
	}
	mr->ctx = ctx;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	ctx->mrs[ctx->n_mrs++] = mr;
	return mr;
}

int mrc_dereg_mr(struct mrc_mr *mr)
{
	struct mrc_context *ctx;

	if (!mr)
		return mrc_err(EINVAL);
	ctx = mr->ctx;
	for (int i = 0; i < ctx->n_mrs; i++) {
		if (ctx->mrs[i] != mr)
			continue;
		ctx->mrs[i] = ctx->mrs[--ctx->n_mrs];
		free(mr);
		return 0;
	}
	return mrc_err(EINVAL);
}

uint32_t mrc_mr_lkey(const struct mrc_mr *mr)
{
	return mr ? mr->key : 0;
}

uint32_t mrc_mr_rkey(const struct mrc_mr *mr)
{
	return mr ? mr->key : 0;
}

/* ---- completion queues ------------------------------------------------- */

struct mrc_cq *mrc_create_cq(struct mrc_context *ctx, int depth)
{
	struct mrc_cq *cq;
	uint32_t cap = 16;

	if (!ctx || depth <= 0 || depth > (1 << 20))
		return mrc_err_ptr(EINVAL);
	while (cap < (uint32_t)depth)
		cap <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return mrc_err_ptr(ENOMEM);
	cq->ring = calloc(cap, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return mrc_err_ptr(ENOMEM);
	}
	cq->ctx = ctx;
	cq->cap = cap;
	return cq;
}

int mrc_destroy_cq(struct mrc_cq *cq)
{
	if (!cq)
		return mrc_err(EINVAL);
	if (cq->refs)
		return mrc_err(EBUSY);
	free(cq->ring);
	free(cq);
	return 0;
}

/* Completions never get lost: the ring grows instead of overflowing. */
int mrc_cq_push(struct mrc_cq *cq, const struct mrc_wc *wc)
{
	if (cq->tail - cq->head == cq->cap) {
		struct mrc_wc *ring = calloc(2 * cq->cap, sizeof(*ring));

		if (!ring)
			return -ENOMEM;
		for (uint32_t i = 0; i < cq->cap; i++)
			ring[i] = cq->ring[(cq->head + i) & (cq->cap - 1)];
		free(cq->ring);
		cq->ring = ring;
		cq->head = 0;
		cq->tail = cq->cap;
		cq->cap *= 2;
	}
	cq->ring[cq->tail++ & (cq->cap - 1)] = *wc;
	return 0;
}

const char *mrc_wc_status_str(enum mrc_wc_status status)
{
	switch (status) {
	case MRC_WC_SUCCESS:		return "success";
	case MRC_WC_RETRY_EXC_ERR:	return "retry exceeded";
	case MRC_WC_REM_ACCESS_ERR:	return "remote access error";
	case MRC_WC_WR_FLUSH_ERR:	return "flushed";
	case MRC_WC_REM_OP_ERR:		return "remote operation error";
	case MRC_WC_LOC_PROT_ERR:	return "local protection error";
	}
	return "unknown status";
}
