// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's timelines: a CSV of at most one row per millisecond, kept in
 * memory during the run and written at its end. The server's --timeline
 * records the payload placed in its region (timeline.c), the client's
 * --cc-timeline its congestion window (cc.c).
 */
#ifndef MRC_PERF_TIMELINE_H
#define MRC_PERF_TIMELINE_H

#include "perf.h"

#define TIMELINE_MAX_ROWS	600000u	/* 10 minutes of 1 ms rows */
#define TIMELINE_FIRST_ROWS	4096u	/* allocated when recording starts */
#define TIMELINE_MAX_COLS	4

/*
 * A CSV of one row per millisecond at most, time_ms first: the server's
 * --timeline (payload placed) and the client's --cc-timeline (its
 * congestion window). Rows are kept in memory and reach the file when the
 * run is over: the data path does no file I/O. Every progress call reads
 * the clock (a vDSO call); only when a millisecond boundary has passed does
 * it read anything else and append rows.
 */
struct timeline {
	const char *header;	/* the CSV header line */
	unsigned int cols;	/* values per row, time_ms included */
	bool on;		/* recording */
	bool started;
	bool full;		/* TIMELINE_MAX_ROWS: later ms not recorded */
	bool nomem;
	uint64_t row_end_ns;	/* the end of the millisecond in progress */
	uint64_t t0_ns;		/* CLOCK_MONOTONIC of time_ms 0 (0: no rows yet) */
	uint64_t base;		/* the counter the rows start from */
	uint64_t *rows;		/* n rows of `cols` values */
	size_t n, cap;
};

bool timeline_append(struct timeline *t, const uint64_t *row);
void timeline_start(struct timeline *t, uint64_t base);
int timeline_write(const char *path, const struct timeline *t, char *err, size_t len);
bool timeline_finish(const char *path, const struct timeline *t,
		     const char *who, const char *no_rows);

/* ---- the server's --timeline: payload placed per ms ---- */

#define TIMELINE_HEADER		"time_ms,bytes"

/*
 * --timeline: the payload placed in the session's region per millisecond
 * (the rise of the QP's rx_bytes), one row per millisecond from the first
 * BEGIN (row 0 is the millisecond it arrived in) to DONE, zero rows
 * included, so a stall shows as a run of zeros. rx_bytes starts at 0 with
 * the QP and the rows take all of it, so they add up to the session's
 * bytes_received.
 */
extern const struct timeline server_timeline;

void timeline_sample(struct timeline *t, struct mrc_qp *qp, uint64_t now);
void timeline_stop(struct timeline *t, struct mrc_qp *qp);

/* Once per turn of the server's loops: a clock read, nothing more unless
 * a millisecond boundary passed. */
static inline void timeline_tick(struct timeline *t, struct mrc_qp *qp)
{
	uint64_t now;

	if (!t->on)
		return;
	now = now_ns();
	if (now >= t->row_end_ns)
		timeline_sample(t, qp, now);
}

#endif /* MRC_PERF_TIMELINE_H */
