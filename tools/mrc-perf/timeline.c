// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's timelines (timeline.h): appending rows, writing the CSV, and
 * the server's --timeline, sampled from the QP's rx_bytes.
 */
#include "perf.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

bool timeline_append(struct timeline *t, const uint64_t *row)
{
	uint64_t *rows;
	size_t cap;

	if (t->n == t->cap) {
		if (t->cap >= TIMELINE_MAX_ROWS) {
			t->full = true;
			t->on = false;
			return false;
		}
		/* Doubling: glibc grows a buffer this large with mremap(),
		 * without copying it. */
		cap = t->cap ? 2 * t->cap : TIMELINE_FIRST_ROWS;
		if (cap > TIMELINE_MAX_ROWS)
			cap = TIMELINE_MAX_ROWS;
		rows = realloc(t->rows, cap * t->cols * sizeof(*rows));
		if (!rows) {
			t->nomem = true;
			t->on = false;
			return false;
		}
		t->rows = rows;
		t->cap = cap;
	}
	memcpy(t->rows + t->n * t->cols, row, t->cols * sizeof(*row));
	t->n++;
	return true;
}

/* time_ms 0 is now; `base` is what the counter the rows follow reads now. */
void timeline_start(struct timeline *t, uint64_t base)
{
	t->started = true;
	t->on = true;
	t->t0_ns = now_ns();
	t->row_end_ns = t->t0_ns + NSEC_PER_MSEC;
	t->base = base;
	t->n = 0;
	/* Allocate now, before the WRITEs go. */
	t->rows = malloc(TIMELINE_FIRST_ROWS * t->cols * sizeof(*t->rows));
	if (t->rows) {
		t->cap = TIMELINE_FIRST_ROWS;
	} else {
		t->nomem = true;
		t->on = false;
	}
}

/*
 * FILE := the header and the rows of `t` (just the header if `t` never
 * started). Returns 0, or -1 with the reason in `err`.
 */
int timeline_write(const char *path, const struct timeline *t,
		   char *err, size_t len)
{
	FILE *f = fopen(path, "we");
	size_t i, n = t->started ? t->n : 0;
	unsigned int k;
	int bad;

	if (!f) {
		snprintf(err, len, "cannot open '%s' for writing: %s", path,
			 strerror(errno));
		return -1;
	}
	errno = 0;
	fprintf(f, "%s\n", t->header);
	for (i = 0; i < n; i++)
		for (k = 0; k < t->cols; k++)
			fprintf(f, "%" PRIu64 "%c", t->rows[i * t->cols + k],
				k + 1 < t->cols ? ',' : '\n');
	bad = ferror(f);
	if (fclose(f) || bad) {
		snprintf(err, len, "cannot write '%s': %s", path,
			 strerror(errno ? errno : EIO));
		return -1;
	}
	return 0;
}

/*
 * After the run: the rows to FILE; false if it cannot be written. A
 * cut-short timeline is a warning, not a failure. `who` starts every
 * message; `no_rows` says why a timeline may never have started.
 */
bool timeline_finish(const char *path, const struct timeline *t,
		     const char *who, const char *no_rows)
{
	char why[ERR_LEN];

	if (t->full)
		report("%s: the run outlasted %u ms; later milliseconds are not in it",
		       who, TIMELINE_MAX_ROWS);
	if (t->nomem)
		report("%s: out of memory after %zu rows; later milliseconds are not "
		       "in it", who, t->n);
	if (timeline_write(path, t, why, sizeof(why))) {
		report("%s: %s", who, why);
		return false;
	}
	if (!t->started)
		report("%s: %s: %s has the header only", who, no_rows, path);
	else
		report("%s: %zu rows written to %s", who, t->n, path);
	return true;
}

/* ==================================================================== server timeline */

const struct timeline server_timeline = { .header = TIMELINE_HEADER, .cols = 2 };

/* Bytes placed since the last sample; 0 if the counters cannot be read. */
static uint64_t timeline_delta(struct timeline *t, struct mrc_qp *qp)
{
	struct mrc_qp_counters c;
	uint64_t d;

	if (mrc_qp_counters(qp, &c))
		return 0;
	d = c.rx_bytes - t->base;
	t->base = c.rx_bytes;
	return d;
}

/* The row of time_ms n, with `bytes`. */
static bool timeline_append_bytes(struct timeline *t, uint64_t bytes)
{
	uint64_t row[2] = { t->n, bytes };

	return timeline_append(t, row);
}

/*
 * `now` is past the end of the row in progress: close it with what was
 * placed since the last sample and add a zero row for every further
 * millisecond that passed without a sample (the loop was held up; what it
 * placed in that time is counted in the first of them).
 */
void timeline_sample(struct timeline *t, struct mrc_qp *qp, uint64_t now)
{
	uint64_t k = 1 + (now - t->row_end_ns) / NSEC_PER_MSEC;

	t->row_end_ns += k * NSEC_PER_MSEC;
	if (!timeline_append_bytes(t, timeline_delta(t, qp)))
		return;
	while (--k && timeline_append_bytes(t, 0))
		;
}

/* DONE or the end of the session: the rows up to now, the last partial. */
void timeline_stop(struct timeline *t, struct mrc_qp *qp)
{
	uint64_t now;

	if (!t->on)
		return;
	now = now_ns();
	if (now >= t->row_end_ns)
		timeline_sample(t, qp, now);
	if (t->on)
		timeline_append_bytes(t, timeline_delta(t, qp));
	t->on = false;
}
