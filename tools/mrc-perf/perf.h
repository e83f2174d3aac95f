// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf: what every file of the program shares. main.c has the
 * overview (roles, control protocol, exit status); the files by role:
 *
 *   main.c        signals, then the server or the client
 *   options.c     the command line: --help text, options, their checks
 *   log.c         the program's one logger: "mrc-perf: " lines on stderr
 *   net.c         addresses, path MTU detection, control socket options
 *   verify.c      the bytes: source pattern, checksum, zero-filled regions
 *   latency.h     the per-WRITE latency histogram (inline: data path)
 *   qp.c          libmrc helpers: context, async events, QP bring-up
 *   ctl.h, ctl.c  the TCP control protocol between client and server
 *   timeline.h, timeline.c   the --timeline and --cc-timeline CSVs
 *   client.h, client.c       the client: set-up, handshake, end of run
 *   sweep.c       the client's data phase: sizes, WRITEs, --verify
 *   cc.c          the client's congestion window: "cc", --cc-timeline
 *   report.c      the client's text and JSON output
 *   multi.h, multi.c, multi_run.c  the many-QP client (--qps, HOST,HOST):
 *                 set-up over several servers, data phase, output
 *   session.h, session.c  the server's side of one client: its N QPs
 *   server.c      the server: accept, many sessions at once, round robin
 *
 * The program's one clock, now_ns() (CLOCK_MONOTONIC ns), is here, inline:
 * the data path reads it for every WRITE.
 */
#ifndef MRC_PERF_H
#define MRC_PERF_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#include "mrc/mrc.h"

#define PROG			"mrc-perf"
#define EXIT_RUNTIME		1
#define EXIT_USAGE		2

#define DEFAULT_PORT		18515
#define DEFAULT_SIZE		65536
#define DEFAULT_ITERS		1000
#define DEFAULT_DEPTH		16
#define DEFAULT_ACK_TIMEOUT	14
#define DEFAULT_RETRY		7
#define DEFAULT_EXP_RETRY	7
#define DEFAULT_MPR		8
#define DEFAULT_TIMEOUT_S	120

#define MAX_MSG_SIZE		(1ULL << 30)	/* 1 GiB: one region, one WRITE */
#define MAX_SEND_WR		512	/* mrc.h: max_send_wr <= 512 */
#define MAX_RECV_WR		512	/* receives for immediates we post */
#define MAX_ITERS		UINT32_MAX
#define MAX_TIMEOUT_S		86400
#define MAX_SIZES		40	/* a 1..1g sweep has 31 */
#define MAX_QPS			65536	/* --qps; MRC_QPS_LIMIT, mrcd's largest */
#define MAX_HOSTS		256	/* client: servers in HOST,HOST,... */
#define MAX_CQE			(1 << 20)	/* mrc_create_cq()'s limit */
#define MAX_SESSIONS		1024	/* server: clients served at once */

/* QP attribute ranges, from the comments of struct mrc_qp_attr. */
#define ACK_TIMEOUT_MIN		1	/* 0 means "no ACK timer": it could hang */
#define ACK_TIMEOUT_MAX		24	/* libmrc's limit: 1.024 us * 2^24 = 17 s */
#define RETRY_MAX		7
#define EXP_RETRY_MAX		25
#define MPR_MIN			1
#define MPR_MAX			32

/*
 * path_mtu is MRC payload per packet. Below the interface MTU sit the IP
 * and UDP headers and at most 40 bytes of MRC headers (BTH 12, METH 4,
 * TSETH 4, RETH 16, immediate 4).
 */
#define MTU_MIN			256
#define MTU_MAX			9000
#define MTU_ALIGN		64
#define MTU_FALLBACK		1024
#define IPV4_HDR_LEN		20
#define IPV6_HDR_LEN		40
#define UDP_HDR_LEN		8
#define MRC_MAX_HDR_LEN		40

#define POLL_BATCH		32
#define CHECK_EVERY		1024	/* data loop: turns between deadline checks */
#define CTL_PEEK_EVERY		16	/* server: CQ polls between socket peeks */
#define ASYNC_DRAIN_MAX		64
#define CONNECT_RETRY_MS	3000	/* the server may still be starting */
#define CONNECT_PAUSE_MS	100
#define CONNECT_TIMEOUT_MS	10000
#define EXCHANGE_TIMEOUT_MS	30000
#define HELLO_WAIT_MS		10000
#define DONE_GRACE_MS		5000
#define LINGER_MS		5000	/* after DONE_ACK: wait for the client to close */
#define SESSION_GRACE_S		30	/* on top of the client's --timeout-s */
#define ACCEPT_POLL_MS		200
#define CHECKSUM_CHUNK		(1u << 20)	/* server: poll the CQ between chunks */

#define NSEC_PER_SEC		1000000000ULL
#define NSEC_PER_MSEC		1000000ULL
#define ERR_LEN			256
#define ADDR_STR_LEN		(INET6_ADDRSTRLEN + 8)

/* ==================================================================== options (options.c) */

struct opts {
	bool server;
	uint16_t port;
	bool once, json, imm, verify;
	bool icrc;		/* QPs with the RoCEv2 ICRC (MRC_QP_ICRC), both ends */
	const char *pin_dir;		/* NULL = libmrc's default */
	const char *timeline;		/* server: CSV of bytes per ms, or NULL */
	const char *cc_timeline;	/* client: CSV of its window per ms, or NULL */
	int cc_profile;			/* the QPs' CC profile; -1 = libmrc's default */
	int ev_profile;			/* the QPs' EV profile; -1 = libmrc's default (0) */
	const char *host;
	uint64_t size_min, size_max;	/* equal unless --sweep */
	uint64_t iters;
	uint64_t bytes_total;		/* 0 = use iters */
	uint32_t depth;
	uint32_t mtu;			/* 0 = detect */
	uint64_t offset;
	uint8_t ack_timeout, retry_cnt, exp_retry_cnt, mpr_units;
	uint32_t timeout_s;
	uint32_t idle_s;		/* client: connected, idle this long; 0 = a run */
	uint32_t linger_s;		/* client: idle, connected, before DONE */
	uint32_t settle_s;		/* client: idle, connected, before the first WRITE */
	uint32_t n_qps;			/* client: --qps; 0 = one QP, the classic client */
};

/* Parse the command line into `o`; usage errors and --help exit. */
void parse_args(int argc, char **argv, struct opts *o);

/* Set from SIGINT/SIGTERM (main.c); every loop checks it. */
extern volatile sig_atomic_t stop_requested;

/* ==================================================================== logger (log.c) */

/* One line on stderr: PROG ": " and the message. */
void __attribute__((format(printf, 1, 2))) report(const char *fmt, ...);
/* report(), the --help hint, exit status 2. */
void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...);
/* Truncating copy that always terminates `dst`. */
void copy_text(char *dst, size_t dst_len, const char *src);

/* ==================================================================== clock */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static inline void sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * (long)NSEC_PER_MSEC,
	};

	nanosleep(&ts, NULL);
}

/* ==================================================================== addresses and MTU (net.c) */

const char *family_name(int family);
const char *addr_str(const struct sockaddr_storage *ss, char *buf, size_t len);
uint32_t detect_path_mtu(const struct sockaddr_storage *peer, int family,
			 const struct sockaddr_storage *planes, int n_planes);
int socket_peer(int fd, struct sockaddr_storage *peer);
void set_socket_timeouts(int fd, unsigned int ms);

/* ==================================================================== data and checksums (verify.c) */

#define CSUM_INIT	0xcbf29ce484222325ULL	/* FNV-1a 64 offset basis */
#define CSUM_PRIME	0x100000001b3ULL	/* FNV-1a 64 prime */

void fill_pattern(uint8_t *buf, uint64_t len, uint64_t size);
uint64_t csum_update(uint64_t h, const uint8_t *p, uint64_t len);
void *buffer_alloc(uint64_t len, size_t *map_len);
bool buffer_is_modified(const uint8_t *buf, uint64_t len);

/* ==================================================================== libmrc helpers (qp.c) */

/* QP attributes both ends agree on through HELLO and the exchange. */
struct qp_tuning {
	uint32_t path_mtu;
	uint8_t mpr_units, ack_timeout, retry_cnt, exp_retry_cnt;
	bool imm;
	uint16_t wimm_out, wimm_in;
	int cc_profile;			/* -1 = libmrc's default (each side's own) */
	int ev_profile;			/* -1 = libmrc's default (each side's own) */
};

const char *status_str(enum mrc_wc_status status);
struct mrc_context *open_context(const char *pin_dir, char *err, size_t len);
const char *async_event_name(enum mrc_async_event_type type);
int print_async_events(struct mrc_context *ctx);
int check_peer_params(const struct mrc_conn_params *p, char *err, size_t len);
void fill_conn_params(struct mrc_conn_params *p, struct mrc_qp *qp,
		      const struct sockaddr_storage *addrs, int n_addrs,
		      uint32_t path_mtu, const struct mrc_mr *mr,
		      const void *buf, uint64_t len);
int qp_bring_up(struct mrc_qp *qp, const struct mrc_conn_params *local,
		const struct mrc_conn_params *remote,
		const struct qp_tuning *t, const char **step);
/* A client QP's tuning from its options, at the smaller of the two MTUs. */
struct qp_tuning client_qp_tuning(const struct opts *o, uint32_t local_mtu,
				  uint32_t remote_mtu);

/* "null" or the string: the JSON "error" field of both roles (report.c). */
void json_error(FILE *f, const char *err);
/* ", \"wait\": {...}": how libmrc's context waited (mrc_wait_stats). */
void json_wait_stats(FILE *f, const struct mrc_qp_counters *cnt);

/* ==================================================================== the two roles */

int run_client(const struct opts *o);	/* client.c */
int run_server(const struct opts *o);	/* server.c */
int run_multi_client(const struct opts *o);	/* multi.c: --qps, HOST,HOST */

#endif /* MRC_PERF_H */
