// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "base" (see LAYERS and base.h): the clock, the logger, claiming
 * keys of the owner maps and the layout of the mmapped per-QP state.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "base.h"
#include "common/state_maps.h"

uint64_t mrc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return mrc_timespec_ns(&ts);
}

uint64_t mrc_realtime_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts))
		return 0;
	return mrc_timespec_ns(&ts);
}

/* ---- logger ------------------------------------------------------------ */

static mrc_log_fn log_fn;
static void *log_arg;

/* MRC_VERSION comes from the VERSION file (the Makefile's -D). */
const char *mrc_version(void)
{
	return MRC_VERSION;
}

void mrc_set_log_fn(mrc_log_fn fn, void *arg)
{
	log_fn = fn;
	log_arg = arg;
}

void mrc_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_fn)
		log_fn(level, msg, log_arg);
	else
		fprintf(stderr, "libmrc: %s\n", msg);
}

/* ---- owner maps and mmapped state -------------------------------------- */

/* Entry idx of a state map (user/common/qpmaps.h), mapped; NULL: failed. */
void *mrc_map_state(int fd, uint32_t idx, size_t value_size)
{
	return mrc_state_map_entry(fd, idx, value_size, PROT_READ | PROT_WRITE);
}

void mrc_unmap_state(void *p, size_t value_size)
{
	mrc_state_unmap(p, value_size);
}

/* Grow a dense pointer list to hold one more (doubling). */
int mrc_list_reserve(void ***list, uint32_t n, uint32_t *cap)
{
	uint32_t want = *cap ? *cap * 2 : 16;
	void **p;

	if (n < *cap)
		return 0;
	p = realloc(*list, want * sizeof(*p));
	if (!p)
		return -ENOMEM;
	*list = p;
	*cap = want;
	return 0;
}

int mrc_own_add(struct mrc_context *ctx, struct mrc_qp *qp)
{
	int err = mrc_list_reserve((void ***)&ctx->own, ctx->n_own, &ctx->cap_own);

	if (err)
		return err;
	qp->own_idx = ctx->n_own;
	ctx->own[ctx->n_own++] = qp;
	ctx->qps[qp->slot] = qp;
	return 0;
}

/* Out of both lists; the last of the dense one takes its place. */
void mrc_own_remove(struct mrc_context *ctx, struct mrc_qp *qp)
{
	struct mrc_qp *last = ctx->own[--ctx->n_own];

	ctx->own[qp->own_idx] = last;
	last->own_idx = qp->own_idx;
	ctx->qps[qp->slot] = NULL;
}

/* getrandom(2) (common/claim.h), with a failure logged. */
int mrc_random_bytes(void *buf, size_t len)
{
	int err = mrc_getrandom(buf, len);

	if (err)
		mrc_log(MRC_LOG_ERROR, "getrandom: %s", strerror(-err));
	return err;
}
