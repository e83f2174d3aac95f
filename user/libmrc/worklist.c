// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "base" (see LAYERS and worklist.h): the progress engine's lists of
 * QPs. The FIFOs are linked through the QPs (no allocation on the data
 * path); taking a QP out of the middle walks the list, which only
 * destroying a QP or leaving a window does.
 */
#include <errno.h>
#include <stddef.h>

#include "base.h"
#include "worklist.h"

/*
 * One FIFO, the QPs linked through the struct mrc_qp_link at `off` in each
 * (the ready list and the windows' waiters have a link each).
 */
static struct mrc_qp_link *link_of(struct mrc_qp *qp, size_t off)
{
	return (struct mrc_qp_link *)((char *)qp + off);
}

static void fifo_push(struct mrc_qp_fifo *f, struct mrc_qp *qp, size_t off)
{
	struct mrc_qp_link *l = link_of(qp, off);

	if (l->on)
		return;
	l->on = true;
	l->next = NULL;
	if (f->tail)
		link_of(f->tail, off)->next = qp;
	else
		f->head = qp;
	f->tail = qp;
	f->n++;
}

static struct mrc_qp *fifo_pop(struct mrc_qp_fifo *f, size_t off)
{
	struct mrc_qp *qp = f->head;
	struct mrc_qp_link *l;

	if (!qp)
		return NULL;
	l = link_of(qp, off);
	f->head = l->next;
	if (!f->head)
		f->tail = NULL;
	f->n--;
	l->on = false;
	l->next = NULL;
	return qp;
}

/* Out of the middle: a walk, only when a QP is destroyed or leaves a window. */
static void fifo_remove(struct mrc_qp_fifo *f, struct mrc_qp *qp, size_t off)
{
	struct mrc_qp_link *l = link_of(qp, off);
	struct mrc_qp *prev = NULL;

	if (!l->on)
		return;
	for (struct mrc_qp *q = f->head; q; prev = q, q = link_of(q, off)->next) {
		if (q != qp)
			continue;
		if (prev)
			link_of(prev, off)->next = l->next;
		else
			f->head = l->next;
		if (f->tail == q)
			f->tail = prev;
		f->n--;
		break;
	}
	l->on = false;
	l->next = NULL;
}

#define READY_LINK	offsetof(struct mrc_qp, ready_link)
#define WAIT_LINK	offsetof(struct mrc_qp, wait_link)

/* ---- the ready list and the windows' waiters --------------------------- */

void mrc_qp_wake(struct mrc_qp *qp)
{
	fifo_push(&qp->ctx->ready, qp, READY_LINK);
}

struct mrc_qp *mrc_ready_pop(struct mrc_context *ctx)
{
	return fifo_pop(&ctx->ready, READY_LINK);
}

void mrc_wait_push(struct mrc_cc_group *g, struct mrc_qp *qp)
{
	fifo_push(&g->waiters, qp, WAIT_LINK);
}

struct mrc_qp *mrc_wait_pop(struct mrc_cc_group *g)
{
	return fifo_pop(&g->waiters, WAIT_LINK);
}

void mrc_wait_remove(struct mrc_cc_group *g, struct mrc_qp *qp)
{
	fifo_remove(&g->waiters, qp, WAIT_LINK);
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
	fifo_remove(&qp->ctx->ready, qp, READY_LINK);
	if (qp->cc)
		mrc_wait_remove(qp->cc, qp);
	mrc_out_remove(qp);
}
