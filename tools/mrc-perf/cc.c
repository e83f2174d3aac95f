// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf client, the QP's congestion window, read from the pinned maps
 * (agent/cc_view.h): the "cc" member of --json at the end of the run, and
 * --cc-timeline, one row per millisecond at most from the first BEGIN.
 */
#include "perf.h"

#include <string.h>

#include "client.h"

#define CC_TIMELINE_HEADER	"time_ms,acked_bytes,cwnd,inflight"

const struct timeline client_cc_timeline = {
	.header = CC_TIMELINE_HEADER, .cols = 4,
};

/* The QP's window in the pinned maps, once it has one: 0, or -1 (c->cc_err). */
static int client_cc_find(struct client *c)
{
	const char *dir = c->o->pin_dir ? c->o->pin_dir : MRC_DEFAULT_PIN_DIR;

	if (c->cc.slot)
		return 0;
	cc_view_close(&c->cc);
	c->cc_err[0] = '\0';
	if (cc_view_open(&c->cc, dir, c->local.qpn, c->cc_err, sizeof(c->cc_err)))
		return -1;
	if (!c->cc.slot)
		snprintf(c->cc_err, sizeof(c->cc_err), "qp %u has no congestion window%s",
			 c->local.qpn, c->o->cc_profile < 0 ? " (try --cc-profile)" : "");
	return c->cc.slot ? 0 : -1;
}

/*
 * The row of the millisecond `now` falls in: the window's bytes acked since
 * time_ms 0, cwnd and bytes in flight. A later sample in the same
 * millisecond (the last one) replaces its row.
 */
void cc_timeline_row(struct client *c, uint64_t now)
{
	struct timeline *t = &c->cctl;
	uint64_t ms = (now - t->t0_ns) / NSEC_PER_MSEC, row[4];
	struct mrc_cc_view v;

	t->row_end_ns = t->t0_ns + (ms + 1) * NSEC_PER_MSEC;
	if (cc_view_read(&c->cc, &v))
		return;
	row[0] = ms;
	row[1] = v.acked_bytes - t->base;
	row[2] = v.cwnd;
	row[3] = v.inflight;
	if (t->n && t->rows[(t->n - 1) * t->cols] == ms)
		memcpy(&t->rows[(t->n - 1) * t->cols], row, sizeof(row));
	else
		timeline_append(t, row);
}

/* The first BEGIN is time_ms 0, as for the server's --timeline. */
void cc_timeline_begin(struct client *c)
{
	struct mrc_cc_view v;
	int ret;

	if (!c->o->cc_timeline || c->cctl_tried)
		return;
	c->cctl_tried = true;
	if (client_cc_find(c))
		return;
	ret = cc_view_read(&c->cc, &v);
	if (ret) {
		snprintf(c->cc_err, sizeof(c->cc_err), "reading window %u of "
			 "mrc_cc_view: %s", c->cc.slot, strerror(-ret));
		return;
	}
	timeline_start(&c->cctl, v.acked_bytes);
	if (c->cctl.on)
		cc_timeline_row(c, c->cctl.t0_ns);	/* row 0: the window at the start */
}

/* The data phase is over: the last row. */
void cc_timeline_end(struct client *c)
{
	if (!c->cctl.on)
		return;
	cc_timeline_row(c, now_ns());
	c->cctl.on = false;
}

/* At the end of the run: the window and the QP's counters, for the output. */
void client_cc_snapshot(struct client *c)
{
	int ret;

	if (!c->qp)
		return;
	c->have_cnt = !mrc_qp_counters(c->qp, &c->cnt);
	if (client_cc_find(c)) {
		/* Said once, and only to those who asked for a window. */
		if (c->o->cc_profile >= 0 && !c->o->cc_timeline)
			report("cc: %s", c->cc_err);
		return;
	}
	ret = cc_view_read(&c->cc, &c->ccv);
	if (ret)
		report("cc: reading window %u of mrc_cc_view: %s", c->cc.slot,
		       strerror(-ret));
	c->have_ccv = !ret;
}
