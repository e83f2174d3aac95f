// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "base" (see LAYERS and worklist.h): the progress engine's lists of
 * QPs. The FIFOs are linked through the QPs (no allocation on the data
 * path); taking a QP out of the middle walks the list, which only
 * destroying a QP or leaving a window does.
 */
#include <errno.h>

#include "base.h"
#include "worklist.h"

/* ---- the ready list ---------------------------------------------------- */

void mrc_qp_wake(struct mrc_qp *qp)
{
	struct mrc_qp_fifo *f = &qp->ctx->ready;

	if (qp->on_ready)
		return;
	qp->on_ready = true;
	qp->ready_next = NULL;
	if (f->tail)
		f->tail->ready_next = qp;
	else
		f->head = qp;
	f->tail = qp;
	f->n++;
}

struct mrc_qp *mrc_ready_pop(struct mrc_context *ctx)
{
	struct mrc_qp_fifo *f = &ctx->ready;
	struct mrc_qp *qp = f->head;

	if (!qp)
		return NULL;
	f->head = qp->ready_next;
	if (!f->head)
		f->tail = NULL;
	f->n--;
	qp->on_ready = false;
	qp->ready_next = NULL;
	return qp;
}

static void ready_remove(struct mrc_qp *qp)
{
	struct mrc_qp_fifo *f = &qp->ctx->ready;
	struct mrc_qp *prev = NULL;

	if (!qp->on_ready)
		return;
	for (struct mrc_qp *q = f->head; q; prev = q, q = q->ready_next) {
		if (q != qp)
			continue;
		if (prev)
			prev->ready_next = q->ready_next;
		else
			f->head = q->ready_next;
		if (f->tail == q)
			f->tail = prev;
		f->n--;
		break;
	}
	qp->on_ready = false;
	qp->ready_next = NULL;
}

/* ---- a window's waiters ------------------------------------------------ */

void mrc_wait_push(struct mrc_cc_group *g, struct mrc_qp *qp)
{
	struct mrc_qp_fifo *f = &g->waiters;

	if (qp->on_wait)
		return;
	qp->on_wait = true;
	qp->wait_next = NULL;
	if (f->tail)
		f->tail->wait_next = qp;
	else
		f->head = qp;
	f->tail = qp;
	f->n++;
}

struct mrc_qp *mrc_wait_pop(struct mrc_cc_group *g)
{
	struct mrc_qp_fifo *f = &g->waiters;
	struct mrc_qp *qp = f->head;

	if (!qp)
		return NULL;
	f->head = qp->wait_next;
	if (!f->head)
		f->tail = NULL;
	f->n--;
	qp->on_wait = false;
	qp->wait_next = NULL;
	return qp;
}

void mrc_wait_remove(struct mrc_cc_group *g, struct mrc_qp *qp)
{
	struct mrc_qp_fifo *f = &g->waiters;
	struct mrc_qp *prev = NULL;

	if (!qp->on_wait)
		return;
	for (struct mrc_qp *q = f->head; q; prev = q, q = q->wait_next) {
		if (q != qp)
			continue;
		if (prev)
			prev->wait_next = q->wait_next;
		else
			f->head = q->wait_next;
		if (f->tail == q)
			f->tail = prev;
		f->n--;
		break;
	}
	qp->on_wait = false;
	qp->wait_next = NULL;
}

/* ---- QPs with packets out ---------------------------------------------- */

int mrc_out_add(struct mrc_qp *qp)
{
	struct mrc_context *ctx = qp->ctx;
	int err;

	if (qp->out_idx != MRC_NOT_LISTED)
		return 0;
	err = mrc_list_reserve((void ***)&ctx->out, ctx->n_out, &ctx->cap_out);
	if (err)
		return err;
	qp->out_idx = ctx->n_out;
	ctx->out[ctx->n_out++] = qp;
	return 0;
}

/* The last of the list takes its place. */
void mrc_out_remove(struct mrc_qp *qp)
{
	struct mrc_context *ctx = qp->ctx;
	struct mrc_qp *last;

	if (qp->out_idx == MRC_NOT_LISTED)
		return;
	last = ctx->out[--ctx->n_out];
	ctx->out[qp->out_idx] = last;
	last->out_idx = qp->out_idx;
	qp->out_idx = MRC_NOT_LISTED;
}

void mrc_qp_unlist(struct mrc_qp *qp)
{
	ready_remove(qp);
	if (qp->cc)
		mrc_wait_remove(qp->cc, qp);
	mrc_out_remove(qp);
}
