// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-tcp-timeline: what the program's files share. main.c has the
 * overview and the wire protocol; the files by role:
 *
 *   main.c      signals, the commands (server, client, now)
 *   options.c   the command line: --help text, options, their checks
 *   log.c       the program's one logger ("mrc-tcp-timeline: " lines on
 *               stderr) and the JSON string writer of its stdout
 *   pattern.c   the stream's deterministic bytes, checked and explained
 *   net.c       sockets: MPTCP or TCP, bounded waits, reads and writes,
 *               an MPTCP connection's subflows
 *   server.c    the server: one session per client, --timeline
 *   client.c    the client: connect, send, the server's verdict, output
 *   messages.c  the client's message mode (--msg-size, --depth)
 *
 * The program's one clock, now_ns() (CLOCK_MONOTONIC ns, the clock of
 * t0_ns and of `now`), is here, inline.
 */
#ifndef MRC_TCP_TIMELINE_H
#define MRC_TCP_TIMELINE_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <endian.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>

#define PROG		"mrc-tcp-timeline"
#define MAGIC		"MRCTTL01"
#define MAGIC_MSG	"MRCTTM01"	/* message mode: the header carries S */
#define HDR_LEN		16
#define HDR_MSG_LEN	24
#define ACK_FLAG	(1ull << 63)	/* message-mode ack record */
#define DEFAULT_DEPTH	16		/* mrc-perf's --depth default */
#define MAX_DEPTH	512
#define MAX_MSGS	(1u << 26)	/* latencies kept: 512 MiB of them at most */
#define REPLY_LEN	24
#define DEFAULT_PORT	18600
#define DEFAULT_TIMEOUT	120
#define IO_SIZE		(256 * 1024)
#define NSEC_PER_SEC	1000000000ull
#define NSEC_PER_MSEC	1000000ull
#define TIMELINE_MAX_ROWS 600000u	/* 10 minutes of 1 ms rows */
#define MAX_SUBFLOWS	16

#ifndef TCP_IS_MPTCP
#define TCP_IS_MPTCP	43
#endif

struct opts {
	bool server, client, mptcp, once, json;
	const char *host, *timeline, *bind_addr;
	unsigned int port, sport, timeout_s, depth;
	uint64_t bytes, msg_size;	/* msg_size 0: one stream, no acks */
	bool have_bytes, have_depth;
};

/* Set from SIGINT/SIGTERM (main.c); every wait checks it. */
extern volatile sig_atomic_t stop_flag;

/* ---------------------------------------------------------------- clock */

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- logger (log.c) */

/* One line on stderr: PROG ": " and the message. */
void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The message, the --help hint, exit status 2. */
void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...);
/* `s` as a JSON string. */
void json_string(FILE *f, const char *s);

/* ---------------------------------------------------------------- options (options.c) */

void usage(FILE *f);
void parse_args(int argc, char **argv, struct opts *o);

/* ---------------------------------------------------------------- pattern (pattern.c) */

void pattern_fill(uint8_t *buf, uint64_t off, size_t len);
void pattern_explain(const uint8_t *buf, size_t len, uint64_t stream_len,
		     char *out, size_t outlen);
ssize_t pattern_check(const uint8_t *buf, uint64_t off, size_t len,
		      uint8_t *scratch);

/* ---------------------------------------------------------------- sockets (net.c) */

static inline void put_be64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
}

static inline uint64_t get_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

bool mptcp_unsupported(int err);
int make_socket(int family, bool mptcp);
const char *addr_str(const struct sockaddr *sa, char *buf, size_t len);
int wait_fd(int fd, short events, uint64_t deadline);
int read_full(int fd, void *buf, size_t len, uint64_t deadline);
int write_full(int fd, const void *buf, size_t len, uint64_t deadline);
bool is_mptcp_conn(int fd);

struct subflow {
	char local[INET6_ADDRSTRLEN + 16], remote[INET6_ADDRSTRLEN + 16];
	uint64_t bytes_acked, bytes_sent;
	uint32_t retrans;
};

int mptcp_subflows(int fd, struct subflow *out, int max);

/* ---------------------------------------------------------------- message mode (messages.c) */

/* Message mode (--msg-size): the client's view of the outstanding messages. */
struct msg_state {
	uint64_t *lat;		/* completion time of each message, ns */
	uint64_t *post;		/* message k posted: in slot k % depth */
	uint64_t nmsg, acked;	/* messages in all, acknowledged so far */
	uint8_t rbuf[32];	/* bytes from the server not parsed yet */
	size_t rlen;
};

int send_messages(const struct opts *o, int fd, uint8_t *buf, uint64_t deadline,
		  struct msg_state *m, char *errbuf, size_t errlen);
double percentile_us(const uint64_t *v, uint64_t n, unsigned int pct);
int cmp_u64(const void *a, const void *b);

/* ---------------------------------------------------------------- the two roles */

int run_server(const struct opts *o);	/* server.c */
int run_client(const struct opts *o);	/* client.c */

#endif /* MRC_TCP_TIMELINE_H */
