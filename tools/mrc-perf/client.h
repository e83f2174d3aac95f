// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's client, shared by its files: client.c (set-up, handshake with
 * the server, end of run), sweep.c (the data phase, size after size),
 * cc.c (the QP's congestion window) and report.c (what it prints).
 */
#ifndef MRC_PERF_CLIENT_H
#define MRC_PERF_CLIENT_H

#include "perf.h"

#include "agent/cc_view.h"
#include "ctl.h"
#include "timeline.h"

struct lat_hist;

struct size_result {
	uint64_t size, ops;
	double seconds, gbps, mpps, p50_us, p99_us, max_us;
};

/* A WRITE in flight; wr_id is its index. SGEs live here until completion. */
struct wr_slot {
	uint64_t op;
	uint64_t post_ns;
	bool busy;
	struct mrc_sge sge[2];
};

struct client {
	const struct opts *o;
	struct mrc_context *ctx;
	struct ctl_conn ctl;
	struct sockaddr_storage peer;
	char peer_str[ADDR_STR_LEN];
	int family;
	uint64_t deadline_ns;

	uint64_t sizes[MAX_SIZES];
	int n_sizes;
	uint64_t max_size;

	uint8_t *buf;
	size_t map_len;
	struct mrc_mr *mr;
	struct mrc_cq *cq;
	struct mrc_qp *qp;
	struct mrc_conn_params local, remote;
	uint32_t path_mtu;

	struct wr_slot *slots;		/* depth of them */
	uint32_t *free_slots, n_free;
	struct lat_hist *hist;
	uint64_t next_op;		/* run-wide counter, the next immediate */

	struct size_result results[MAX_SIZES];
	int n_results;
	int n_verified;
	bool started;			/* the data phase began: print totals */
	bool qp_failed;			/* a WRITE failed: "qps_in_error": 1 */
	double setup_seconds;		/* QP created .. RTS */
	char error[ERR_LEN];

	/* The QP's congestion window, from the pinned maps (agent/cc_view.h). */
	struct cc_view_src cc;
	char cc_err[ERR_LEN];		/* why it cannot be read */
	bool have_ccv, have_cnt;
	struct mrc_cc_view ccv;		/* at the end of the run */
	struct mrc_qp_counters cnt;	/* at the end of the run */
	struct timeline cctl;		/* --cc-timeline */
	bool cctl_tried;
};

/* --cc-timeline's shape, header and columns: what cctl starts as (cc.c). */
extern const struct timeline client_cc_timeline;

/* ---- client.c: failures, the control connection ---- */

/* Record the first failure (the JSON "error") and print every one. */
int __attribute__((format(printf, 2, 3))) client_fail(struct client *c, const char *fmt, ...);
int client_ctl_fail(struct client *c, int err, const char *while_doing);
int client_check_alive(struct client *c, const char *while_doing);
int client_send(struct client *c, const struct ctl_msg *m);
/* Busy-wait for the server's answer of type `type`. */
int client_await(struct client *c, uint16_t type, struct ctl_msg *m,
		 const char *while_doing);

/* ---- sweep.c: the data phase ---- */

int plan_sizes(uint64_t min, uint64_t max, uint64_t *sizes);
/* WRITEs of one size: --iters, or --bytes / size (at least 1). */
uint64_t ops_for_size(const struct opts *o, uint64_t size);
int client_run_sizes(struct client *c);
int client_check_imm_flags(struct client *c, const struct ctl_msg *m);

/* ---- cc.c: the congestion window, "cc" of --json, --cc-timeline ---- */

void cc_timeline_row(struct client *c, uint64_t now);
void cc_timeline_begin(struct client *c);
void cc_timeline_end(struct client *c);
void client_cc_snapshot(struct client *c);

/* Once per turn of the client's loops: a clock read, and a row per ms. */
static inline void cc_timeline_tick(struct client *c)
{
	uint64_t now;

	if (!c->cctl.on)
		return;
	now = now_ns();
	if (now >= c->cctl.row_end_ns)
		cc_timeline_row(c, now);
}

/* ---- report.c: the client's output ---- */

void print_size_header(void);
void print_size_line(const struct size_result *r);
void print_size_results_json(const struct size_result *res, int n);
/* Bytes and timed seconds of all sizes; the " total: ..." line of text output. */
void size_results_totals(const struct size_result *res, int n, uint64_t *bytes,
			 double *seconds);
void print_total_line(uint64_t bytes, double seconds, const char *verified);
void client_print_summary(const struct client *c);
void client_print_json(const struct client *c);

#endif /* MRC_PERF_CLIENT_H */
