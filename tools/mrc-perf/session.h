// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's server side of one client connection, a session (session.c),
 * and the loop that runs many of them in one process (server.c). A session
 * serves the N QPs its client asked for in HELLO (n_qps): one region slice,
 * one QP each, one CQ and one registered buffer for them all.
 */
#ifndef MRC_PERF_SESSION_H
#define MRC_PERF_SESSION_H

#include "perf.h"

#include "ctl.h"
#include "timeline.h"

/* Ops [first_op, first_op + ops) are WRITEs of `size` bytes, on every QP. */
struct size_range {
	uint64_t first_op, ops, size;
};

/* One QP of a session and the immediates it received. */
struct sqp {
	struct mrc_qp *qp;
	struct mrc_conn_params local, remote;
	uint64_t imm_count;
	uint64_t next_imm_op;		/* the op number we expect next */
	uint64_t next_recv_id;
};

enum session_state {
	SESSION_HELLO,			/* accepted, waiting for HELLO */
	SESSION_SERVE,			/* QPs up: progress, control messages */
	SESSION_END,			/* finished or failed: report, clean up */
};

struct server;

/* One client connection, from accept() to close. */
struct session {
	const struct opts *o;
	struct server *srv;		/* polled during a long set-up */
	struct mrc_context *ctx;
	enum session_state state;
	struct ctl_conn ctl;
	struct sockaddr_storage peer;
	char peer_str[ADDR_STR_LEN];
	int family;
	uint64_t deadline_ns;
	unsigned int spins;

	struct ctl_msg hello;
	bool imm;
	bool icrc;		/* HELLO asked for ICRC QPs (CTL_F_ICRC) */
	uint32_t n_qps;
	uint64_t len;			/* region per QP, as HELLO asked */
	uint64_t stride;		/* len rounded up to a page: slice distance */
	uint8_t *buf;			/* n_qps slices */
	size_t map_len;
	struct mrc_mr *mr;
	struct mrc_cq *cq;
	struct sqp *qps;
	uint32_t n_up;			/* QPs created (and to destroy) */
	uint32_t rq_depth;		/* receives per QP */
	uint64_t hashed;		/* bytes checksummed since the last progress */

	struct size_range ranges[MAX_SIZES];
	int n_ranges;
	uint64_t imm_count;		/* of all QPs */
	bool imm_in_order, imm_len_ok;
	char imm_len_err[CTL_TEXT_LEN];	/* the first byte_len mismatch */

	bool done_pending, done_answered;
	uint64_t done_ops, done_deadline_ns, linger_deadline_ns;
	char error[ERR_LEN];

	struct timeline tl;		/* --timeline, of the first QP */
};

/* Start a session on an accepted socket (state HELLO, or END on failure). */
void session_start(struct session *s, struct server *srv, const struct opts *o,
		   struct mrc_context *ctx, int fd);
/* One turn of the session's state machine; never blocks except while
 * setting up its QPs (mrc_conn_exchange), and polls the others meanwhile. */
void session_step(struct session *s);
/* One poll of the session's CQ (a serving session), for server_poll_all(). */
void session_progress(struct session *s);
/* An async event: true if it names one of the session's QPs (it then fails). */
bool session_takes_event(struct session *s, const struct mrc_async_event *ev);
/* Report (stderr, --json), write --timeline, free; false if it failed. */
bool session_finish(struct session *s);

/* server.c: poll every serving session's CQ once (during a long set-up). */
void server_poll_all(struct server *srv, const struct session *except);

#endif /* MRC_PERF_SESSION_H */
