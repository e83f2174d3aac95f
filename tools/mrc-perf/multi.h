// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's many-QP client (--qps N, or HOST a comma-separated list):
 * one process, one context, one CQ, N QPs spread round robin over the
 * servers, one control connection per server carrying all of that
 * server's QP set-ups. multi.c: set-up and end; multi_run.c: the data
 * phase and the output.
 */
#ifndef MRC_PERF_MULTI_H
#define MRC_PERF_MULTI_H

#include "perf.h"

#include "client.h"
#include "ctl.h"

/* One server and its control connection. */
struct mpeer {
	const char *host;
	struct ctl_conn ctl;
	struct sockaddr_storage peer;
	char peer_str[ADDR_STR_LEN];
	int family;
	struct sockaddr_storage addrs[MRC_MAX_PLANES];	/* our planes */
	int n_addrs;
	uint32_t mtu;			/* ours towards it */
	uint32_t n_qps;			/* QPs i with i % n_peers == its index */
	bool up;			/* HELLO_ACK came, its QPs are RTS */
	uint64_t verify_mismatch;	/* most regions that failed one VERIFY */
};

/* One QP; its WRITEs' slots are post_ns/free_slots [index * depth, +depth). */
struct mqp {
	struct mrc_qp *qp;
	uint32_t peer;
	struct mrc_conn_params local, remote;
	uint64_t posted, done;		/* WRITEs of the size in progress */
	uint64_t next_op;		/* run-wide, per QP: the immediate */
	uint32_t n_free;
	bool failed;			/* a WRITE or the QP failed: no more posts */
	bool to_post;			/* on mclient.to_post */
};

struct mclient {
	const struct opts *o;
	struct mrc_context *ctx;
	uint64_t deadline_ns;
	char *hosts;			/* the copy that peers[].host point into */

	uint64_t sizes[MAX_SIZES];
	int n_sizes;
	uint64_t max_size;
	uint8_t *buf;			/* the source, shared by every QP */
	size_t map_len;
	struct mrc_mr *mr;
	struct mrc_cq *cq;

	struct mpeer *peers;
	uint32_t n_peers;
	struct mqp *qps;
	uint32_t n_qps, n_created;
	uint64_t *post_ns;
	uint32_t *free_slots;
	/*
	 * The timed loop visits only the QPs that may post (a free slot came
	 * back), not every QP each poll: to_post holds n_to_post indexes;
	 * qps_left counts the QPs with WRITEs of the size still to complete.
	 */
	uint32_t *to_post;
	uint32_t n_to_post, qps_left;
	struct lat_hist *hist;

	struct size_result results[MAX_SIZES];
	int n_results, n_verified;
	uint64_t run_ops;		/* WRITEs per QP, all sizes so far */
	uint32_t qps_in_error;
	double setup_seconds;
	bool started;
	unsigned int reported_failures;
	struct mrc_qp_counters cnt;	/* summed over the QPs at the end */
	char error[ERR_LEN];
};

/* multi.c */
int __attribute__((format(printf, 2, 3))) mc_fail(struct mclient *c, const char *fmt, ...);
int mc_check_alive(struct mclient *c, const char *while_doing);
int mc_await(struct mclient *c, struct mpeer *p, uint16_t type, struct ctl_msg *m,
	     const char *while_doing);
int mc_progress_idle(struct mclient *c);
void mc_drain_async(struct mclient *c);
void mc_qp_failed(struct mclient *c, struct mqp *q, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* multi_run.c */
int mc_run_sizes(struct mclient *c);
int mc_linger(struct mclient *c);
int mc_settle(struct mclient *c);
int mc_done(struct mclient *c);
void mc_print_json(struct mclient *c);
void mc_print_summary(const struct mclient *c);


#endif /* MRC_PERF_MULTI_H */
