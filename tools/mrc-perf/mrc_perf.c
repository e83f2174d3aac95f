// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf: RDMA WRITE bandwidth and latency over MRC, after perftest's
 * ib_write_bw.
 *
 *   mrc-perf server [--port P] [--once] [--json] [--pin-dir DIR] [--timeline FILE]
 *                   [--cc-profile N]
 *   mrc-perf client HOST [--size BYTES | --sweep MIN:MAX] [--cc-profile N]
 *                   [--cc-timeline FILE] [options]
 *
 * The server owns a zero-filled region. The client WRITEs (or WRITE-IMMs)
 * into it through one libmrc QP, keeping `depth` WRITEs outstanding, size
 * after size, and times every WRITE from post to completion. With --verify
 * the server checksums what landed; with --imm it checks that the
 * immediates arrive one by one, in order, with the right lengths. The two
 * sides meet on a TCP control connection that carries a small fixed-size
 * protocol of our own and, once, libmrc's mrc_conn_exchange():
 *
 *   client                              server
 *   HELLO {region size, depth, imm,  ->  allocates the region, CQ and QP,
 *          QP tuning, timeout}           posts receives for immediates
 *                                    <-  HELLO_ACK            (or ERROR)
 *   mrc_conn_exchange()              <-> mrc_conn_exchange(); both QPs go
 *                                        RESET->INIT->RTR->RTS
 *   for each size:
 *     BEGIN {size, first op, ops}    ->  remembers the size of those ops
 *                                    <-  BEGIN_ACK (the server QP is RTS)
 *     ... WRITEs over MRC ...
 *     VERIFY {offset, length}        ->  (--verify) checksums that range
 *                                    <-  VERIFY_ACK {checksum, imm count}
 *   DONE {ops posted}                ->  waits for that many immediates
 *                                    <-  DONE_ACK {imm count, in order}
 *   close                                session over, next client
 *   ABORT {reason}                   ->  (client failure) session over
 *                                    <-  ERROR {reason} (server failure)
 *
 * Every message is CTL_MSG_LEN bytes in network byte order and starts with
 * a magic and a version, so a stranger or an older peer gets a clear error
 * instead of a misread number.
 *
 * libmrc only makes progress inside mrc_poll_cq() (sending, placing data,
 * SACKs, retransmission timers), so neither side ever sleeps while a QP
 * exists: a wait for a control message is a busy loop that polls the CQ
 * and peeks at the socket with MSG_DONTWAIT. Every wait has a deadline.
 *
 * Exit status: 0 success, 1 run-time failure, 2 usage error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <inttypes.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mrc/mrc.h"
#include "agent/cc_view.h"
#include "common/parse.h"
#include "agent/json_out.h"

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
#define CHECK_EVERY		1024	/* data loop: spins between deadline checks */
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

/* Set from SIGINT/SIGTERM; every loop checks it. */
static volatile sig_atomic_t stop_requested;

/* ==================================================================== options */

struct opts {
	bool server;
	uint16_t port;
	bool once, json, imm, verify;
	const char *pin_dir;		/* NULL = libmrc's default */
	const char *timeline;		/* server: CSV of bytes per ms, or NULL */
	const char *cc_timeline;	/* client: CSV of its window per ms, or NULL */
	int cc_profile;			/* the QPs' CC profile; -1 = libmrc's default */
	const char *host;
	uint64_t size_min, size_max;	/* equal unless --sweep */
	uint64_t iters;
	uint64_t bytes_total;		/* 0 = use iters */
	uint32_t depth;
	uint32_t mtu;			/* 0 = detect */
	uint64_t offset;
	uint8_t ack_timeout, retry_cnt, exp_retry_cnt, mpr_units;
	uint32_t timeout_s;
};

static const char usage_text[] =
"Usage:\n"
"  " PROG " server [--port P] [--once] [--json] [--pin-dir DIR] [--timeline FILE]\n"
"      [--cc-profile N]\n"
"  " PROG " client HOST [--port P] [--size BYTES | --sweep MIN:MAX] [--iters N]\n"
"      [--bytes TOTAL] [--imm] [--verify] [--json] [--depth N] [--mtu BYTES]\n"
"      [--offset BYTES] [--ack-timeout T] [--retry N] [--exp-retry N]\n"
"      [--mpr UNITS] [--timeout-s S] [--pin-dir DIR] [--cc-profile N]\n"
"      [--cc-timeline FILE]\n"
"  " PROG " --help\n"
"\n"
"RDMA WRITE bandwidth and latency over MRC, like perftest's ib_write_bw.\n"
"The server waits for clients on TCP port P (default 18515) and gives each a\n"
"zero-filled region; the client WRITEs into it and prints one line per size.\n"
"\n"
"server:\n"
"  --port P        TCP port to listen on (default 18515); also a client\n"
"                  option, the server's port\n"
"  --once          serve one client, then exit (1 if its session failed)\n"
"  --json          one JSON line per client on stdout\n"
"  --pin-dir DIR   where mrcd pinned its maps (default " MRC_DEFAULT_PIN_DIR ")\n"
"  --cc-profile N  the QP's CC profile (mrcctl profile cc), 0..63 (default:\n"
"                  libmrc's); also a client option\n"
"  --timeline FILE the payload placed in the region per millisecond, as CSV:\n"
"                  a header 'time_ms,bytes', then one row per ms (0 where\n"
"                  nothing arrived) from the ms the client's first BEGIN\n"
"                  arrived (time_ms 0) to its DONE, 10 minutes at most.\n"
"                  FILE holds the latest session: just the header while one\n"
"                  runs, its rows when it ends. Exit 2 if FILE is not writable\n"
"client:\n"
"  --size BYTES    WRITE size, k/m/g suffixes, 1..1g (default 65536)\n"
"  --sweep MIN:MAX every power of two from MIN to MAX, both included\n"
"  --iters N       WRITEs per size (default 1000)\n"
"  --bytes TOTAL   WRITEs per size = max(1, TOTAL / size), overrides --iters\n"
"  --imm           WRITE with immediate; the server checks order and count\n"
"  --verify        after each size, compare checksums of source and region\n"
"  --json          one JSON object on stdout at the end, nothing else\n"
"  --depth N       WRITEs outstanding (default 16, at most 512)\n"
"  --mtu BYTES     path MTU, payload bytes per packet, 256..9000 (default:\n"
"                  from the interfaces towards HOST and of the MRC planes)\n"
"  --offset BYTES  added to the remote address (to test refused WRITEs)\n"
"  --ack-timeout T ACK timeout 1.024 us * 2^T, 1..24 (default 14)\n"
"  --retry N       retries at a fixed interval, 0..7 (default 7)\n"
"  --exp-retry N   doubling retries, 0..25 (default 7)\n"
"  --mpr UNITS     window in units of 128 packets, 1..32 (default 8)\n"
"  --timeout-s S   give up after S seconds (default 120)\n"
"  --cc-profile N  the QP's CC profile (mrcctl profile cc), 0..63 (default:\n"
"                  libmrc's). --json then has \"cc\": the window at the end\n"
"                  (cwnd, min_rtt_ns, avg_delay_ns, rtt_p50_us, rtt_p99_us,\n"
"                  n_md, n_qa, n_trims, n_losses, ...; null without one)\n"
"  --cc-timeline FILE  the QP's congestion window, at most once per ms, as\n"
"                  CSV 'time_ms,acked_bytes,cwnd,inflight': time_ms from the\n"
"                  first BEGIN (--json: cc_timeline_t0_ns, CLOCK_MONOTONIC),\n"
"                  bytes acked since then, cwnd and bytes in flight; ms in\n"
"                  which the loop did not run have no row. Written at the\n"
"                  end, 10 minutes at most. Exit 2 if FILE is not writable\n"
"Exit status: 0 ok, 1 run-time failure, 2 usage error.\n";

static void vreport(const char *fmt, va_list ap)
{
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

static void __attribute__((format(printf, 1, 2))) report(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
}

static void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	fputs("Try '" PROG " --help' for more information.\n", stderr);
	exit(EXIT_USAGE);
}

/*
 * Options before OPT_ONCE apply to both roles, OPT_ONCE..OPT_TIMELINE are
 * the server's, the rest the client's.
 */
enum {
	OPT_PORT = 256, OPT_JSON, OPT_PIN_DIR, OPT_CC_PROFILE,
	OPT_ONCE, OPT_TIMELINE,
	OPT_SIZE, OPT_SWEEP, OPT_ITERS, OPT_BYTES, OPT_IMM, OPT_VERIFY,
	OPT_DEPTH, OPT_MTU, OPT_OFFSET, OPT_ACK_TIMEOUT, OPT_RETRY,
	OPT_EXP_RETRY, OPT_MPR, OPT_TIMEOUT_S, OPT_CC_TIMELINE,
};

static const struct option long_opts[] = {
	{ "port", required_argument, NULL, OPT_PORT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "pin-dir", required_argument, NULL, OPT_PIN_DIR },
	{ "cc-profile", required_argument, NULL, OPT_CC_PROFILE },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "timeline", required_argument, NULL, OPT_TIMELINE },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "sweep", required_argument, NULL, OPT_SWEEP },
	{ "iters", required_argument, NULL, OPT_ITERS },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "imm", no_argument, NULL, OPT_IMM },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "ack-timeout", required_argument, NULL, OPT_ACK_TIMEOUT },
	{ "retry", required_argument, NULL, OPT_RETRY },
	{ "exp-retry", required_argument, NULL, OPT_EXP_RETRY },
	{ "mpr", required_argument, NULL, OPT_MPR },
	{ "timeout-s", required_argument, NULL, OPT_TIMEOUT_S },
	{ "cc-timeline", required_argument, NULL, OPT_CC_TIMELINE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Report getopt failures ourselves so the message names the bad argument. */
static void __attribute__((noreturn)) bad_option(int c, char **argv)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		usage_error("option '%s' needs a value", arg);
	usage_error("unknown option '%s'%s", arg,
		    strchr(arg, '=') ? " (or it takes no value)" : "");
}

/* A plain integer in [min, max]. */
static uint64_t parse_number(const char *opt, const char *s, uint64_t min,
			     uint64_t max)
{
	uint64_t v;
	int err;

	if (s[0] == '-')
		usage_error("%s: '%s' is negative", opt, s);
	err = parse_u64(s, max, &v);
	if (err == -EINVAL)
		usage_error("%s: '%s' is not a number", opt, s);
	if (err || v < min)
		usage_error("%s: %s is out of range (%" PRIu64 "..%" PRIu64 ")",
			    opt, s, min, max);
	return v;
}

/* A byte count with an optional k/m/g suffix, in [min, max]. */
static uint64_t parse_bytes(const char *opt, const char *s, uint64_t min,
			    uint64_t max)
{
	uint64_t v;
	int err;

	if (s[0] == '-')
		usage_error("%s: '%s' is negative", opt, s);
	err = parse_size(s, &v);
	if (err == -EINVAL)
		usage_error("%s: '%s' is not a size (e.g. 4096, 64k, 1m, 1g)",
			    opt, s);
	if (err == -ERANGE || v > max)
		usage_error("%s: %s is too large (maximum %" PRIu64 ")",
			    opt, s, max);
	if (v < min)
		usage_error("%s: %s is too small (minimum %" PRIu64 ")",
			    opt, s, min);
	return v;
}

static void parse_sweep(const char *s, struct opts *o)
{
	const char *colon = strchr(s, ':');
	char min[64];
	size_t n = colon ? (size_t)(colon - s) : 0;

	if (!colon || n == 0 || n >= sizeof(min) || !colon[1])
		usage_error("--sweep: '%s' is not of the form MIN:MAX", s);
	memcpy(min, s, n);
	min[n] = '\0';
	o->size_min = parse_bytes("--sweep", min, 1, MAX_MSG_SIZE);
	o->size_max = parse_bytes("--sweep", colon + 1, 1, MAX_MSG_SIZE);
	if (o->size_min > o->size_max)
		usage_error("--sweep: '%s' has MIN > MAX", s);
}

static void apply_option(struct opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_PORT:
		o->port = (uint16_t)parse_number("--port", arg, 1, 65535);
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_PIN_DIR:
		if (!*arg)
			usage_error("--pin-dir: empty path");
		o->pin_dir = arg;
		break;
	case OPT_CC_PROFILE:
		o->cc_profile = (int)parse_number("--cc-profile", arg, 0,
						  MRC_MAX_PROFILES - 1);
		break;
	case OPT_ONCE:
		o->once = true;
		break;
	case OPT_TIMELINE:
		if (!*arg)
			usage_error("--timeline: empty path");
		o->timeline = arg;
		break;
	case OPT_SIZE:
		o->size_min = o->size_max = parse_bytes("--size", arg, 1, MAX_MSG_SIZE);
		break;
	case OPT_SWEEP:
		parse_sweep(arg, o);
		break;
	case OPT_ITERS:
		o->iters = parse_number("--iters", arg, 1, MAX_ITERS);
		break;
	case OPT_BYTES:
		o->bytes_total = parse_bytes("--bytes", arg, 1, UINT64_MAX);
		break;
	case OPT_IMM:
		o->imm = true;
		break;
	case OPT_VERIFY:
		o->verify = true;
		break;
	case OPT_DEPTH:
		o->depth = (uint32_t)parse_number("--depth", arg, 1, UINT32_MAX);
		break;
	case OPT_MTU:
		o->mtu = (uint32_t)parse_bytes("--mtu", arg, MTU_MIN, MTU_MAX);
		break;
	case OPT_OFFSET:
		o->offset = parse_bytes("--offset", arg, 0, UINT64_MAX);
		break;
	case OPT_ACK_TIMEOUT:
		o->ack_timeout = (uint8_t)parse_number("--ack-timeout", arg,
						       ACK_TIMEOUT_MIN, ACK_TIMEOUT_MAX);
		break;
	case OPT_RETRY:
		o->retry_cnt = (uint8_t)parse_number("--retry", arg, 0, RETRY_MAX);
		break;
	case OPT_EXP_RETRY:
		o->exp_retry_cnt = (uint8_t)parse_number("--exp-retry", arg, 0,
							 EXP_RETRY_MAX);
		break;
	case OPT_MPR:
		o->mpr_units = (uint8_t)parse_number("--mpr", arg, MPR_MIN, MPR_MAX);
		break;
	case OPT_TIMEOUT_S:
		o->timeout_s = (uint32_t)parse_number("--timeout-s", arg, 1,
						      MAX_TIMEOUT_S);
		break;
	case OPT_CC_TIMELINE:
		if (!*arg)
			usage_error("--cc-timeline: empty path");
		o->cc_timeline = arg;
		break;
	}
}

static void set_defaults(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = DEFAULT_PORT;
	o->size_min = o->size_max = DEFAULT_SIZE;
	o->iters = DEFAULT_ITERS;
	o->depth = DEFAULT_DEPTH;
	o->ack_timeout = DEFAULT_ACK_TIMEOUT;
	o->retry_cnt = DEFAULT_RETRY;
	o->exp_retry_cnt = DEFAULT_EXP_RETRY;
	o->mpr_units = DEFAULT_MPR;
	o->timeout_s = DEFAULT_TIMEOUT_S;
	o->cc_profile = -1;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	const char *role_opt = NULL, *size_opt = NULL;
	int c, idx;

	set_defaults(o);
	if (argc < 2)
		usage_error("missing command: 'server' or 'client HOST'");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_text, stdout);
		exit(0);
	}
	if (!strcmp(argv[1], "server"))
		o->server = true;
	else if (strcmp(argv[1], "client"))
		usage_error("unknown command '%s': use 'server' or 'client HOST'",
			    argv[1]);

	/* getopt takes argv[0] for the program name: let it be the command. */
	argc--;
	argv++;
	opterr = 0;
	for (;;) {
		idx = -1;
		c = getopt_long(argc, argv, ":h", long_opts, &idx);
		if (c == -1)
			break;
		if (c == '?' || c == ':')
			bad_option(c, argv);
		if (c == 'h') {
			fputs(usage_text, stdout);
			exit(0);
		}
		/* Remember the first option the other role owns, to refuse it. */
		if (!role_opt && idx >= 0 &&
		    (o->server ? c > OPT_TIMELINE
			       : c >= OPT_ONCE && c <= OPT_TIMELINE))
			role_opt = long_opts[idx].name;
		if (c == OPT_SIZE || c == OPT_SWEEP) {
			if (size_opt && strcmp(size_opt, long_opts[idx].name))
				usage_error("--size and --sweep exclude each other");
			size_opt = long_opts[idx].name;
		}
		apply_option(o, c, optarg);
	}
	if (role_opt)
		usage_error("--%s is not an option of '%s'", role_opt,
			    o->server ? "server" : "client");

	if (o->server) {
		if (optind < argc)
			usage_error("server: unexpected argument '%s'", argv[optind]);
		return;
	}
	if (optind >= argc)
		usage_error("client: missing HOST");
	if (optind + 1 < argc)
		usage_error("client: unexpected argument '%s'", argv[optind + 1]);
	o->host = argv[optind];
	if (!*o->host)
		usage_error("client: empty HOST");
	if (o->depth > MAX_SEND_WR) {
		report("--depth %u is more than a QP's max_send_wr: using %u",
		       o->depth, MAX_SEND_WR);
		o->depth = MAX_SEND_WR;
	}
}

/* ==================================================================== small helpers */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (long)(ms % 1000) * (long)NSEC_PER_MSEC,
	};

	nanosleep(&ts, NULL);
}

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/*
 * No SA_RESTART: a signal interrupts poll() and accept() so the loops see
 * stop_requested at once. SIGPIPE is ignored because a peer that vanishes
 * is an error to report, not a reason to die.
 */
static void install_signal_handlers(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* Truncating copy that always terminates `dst`. */
static void copy_text(char *dst, size_t dst_len, const char *src)
{
	size_t n = strlen(src);

	if (n >= dst_len)
		n = dst_len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* "null" or the string: the JSON "error" field of both roles. */
static void json_error(FILE *f, const char *err)
{
	if (err && *err)
		json_string(f, err);
	else
		fputs("null", f);
}

static const char *status_str(enum mrc_wc_status status)
{
	const char *s = mrc_wc_status_str(status);

	return s ? s : "unknown status";
}

static const char *family_name(int family)
{
	return family == AF_INET6 ? "IPv6" : "IPv4";
}

/* ==================================================================== addresses and MTU */

/* An IPv4-mapped IPv6 address (dual-stack sockets) becomes plain IPv4. */
static void addr_normalise(struct sockaddr_storage *ss)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in s4;

	if (ss->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return;
	memset(&s4, 0, sizeof(s4));
	s4.sin_family = AF_INET;
	s4.sin_port = s6->sin6_port;
	memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, &s4, sizeof(s4));
}

static socklen_t addr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					 : sizeof(struct sockaddr_in);
}

static const char *addr_str(const struct sockaddr_storage *ss, char *buf,
			    size_t len)
{
	const void *a = ss->ss_family == AF_INET6
		? (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr
		: (const void *)&((const struct sockaddr_in *)ss)->sin_addr;

	if (!inet_ntop(ss->ss_family, a, buf, (socklen_t)len))
		copy_text(buf, len, "?");
	return buf;
}

/* Same IP address, ports and scopes aside; either side may be v4-mapped. */
static bool addr_same_ip(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	struct sockaddr_storage x, y = *b;

	memset(&x, 0, sizeof(x));
	if (a->sa_family == AF_INET)
		memcpy(&x, a, sizeof(struct sockaddr_in));
	else if (a->sa_family == AF_INET6)
		memcpy(&x, a, sizeof(struct sockaddr_in6));
	else
		return false;
	addr_normalise(&x);
	addr_normalise(&y);
	if (x.ss_family != y.ss_family)
		return false;
	if (x.ss_family == AF_INET)
		return !memcmp(&((struct sockaddr_in *)&x)->sin_addr,
			       &((struct sockaddr_in *)&y)->sin_addr, 4);
	return !memcmp(&((struct sockaddr_in6 *)&x)->sin6_addr,
		       &((struct sockaddr_in6 *)&y)->sin6_addr, 16);
}

static int read_iface_mtu(const char *ifname)
{
	char path[128];
	FILE *f;
	int mtu = -1;

	snprintf(path, sizeof(path), "/sys/class/net/%s/mtu", ifname);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &mtu) != 1)
		mtu = -1;
	fclose(f);
	return mtu;
}

/* MTU of the interface that holds the local address `addr`, or -1. */
static int mtu_of_local_addr(const struct sockaddr_storage *addr)
{
	struct ifaddrs *list, *ifa;
	int mtu = -1;

	if (getifaddrs(&list))
		return -1;
	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		if (ifa->ifa_addr && addr_same_ip(ifa->ifa_addr, addr)) {
			mtu = read_iface_mtu(ifa->ifa_name);
			break;
		}
	}
	freeifaddrs(list);
	return mtu;
}

/*
 * The source address the kernel picks towards `peer`, which names the
 * interface the route leaves on. Connecting a UDP socket sends nothing.
 */
static int route_source_addr(const struct sockaddr_storage *peer,
			     struct sockaddr_storage *src)
{
	struct sockaddr_storage dst = *peer;
	socklen_t len = sizeof(*src);
	int fd, ret = -1;

	addr_normalise(&dst);
	if (dst.ss_family == AF_INET && !((struct sockaddr_in *)&dst)->sin_port)
		((struct sockaddr_in *)&dst)->sin_port = htons(9);
	if (dst.ss_family == AF_INET6 && !((struct sockaddr_in6 *)&dst)->sin6_port)
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(9);
	fd = socket(dst.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (!connect(fd, (struct sockaddr *)&dst, addr_len(&dst)) &&
	    !getsockname(fd, (struct sockaddr *)src, &len))
		ret = 0;
	close(fd);
	return ret;
}

/* MRC payload that fits one packet on an interface of MTU `ifmtu`. */
static uint32_t payload_mtu(int ifmtu, int family)
{
	long v = ifmtu - (family == AF_INET6 ? IPV6_HDR_LEN : IPV4_HDR_LEN) -
		 UDP_HDR_LEN - MRC_MAX_HDR_LEN;

	if (v > MTU_MAX)
		v = MTU_MAX;
	if (v < MTU_MIN)
		return MTU_MIN;
	return (uint32_t)v & ~(uint32_t)(MTU_ALIGN - 1);
}

/*
 * path_mtu for packets to `peer`: the smallest of the interface the route
 * to the peer leaves on and the interfaces that hold our plane addresses
 * (MRC traffic leaves from those, which need not be the control path's).
 * 0 when no interface could be identified.
 */
static uint32_t detect_path_mtu(const struct sockaddr_storage *peer, int family,
				const struct sockaddr_storage *planes, int n_planes)
{
	struct sockaddr_storage src;
	uint32_t best = 0;
	int i, mtu;

	for (i = -1; i < n_planes; i++) {
		if (i < 0)
			mtu = route_source_addr(peer, &src) ? -1 : mtu_of_local_addr(&src);
		else
			mtu = mtu_of_local_addr(&planes[i]);
		if (mtu <= 0)
			continue;
		if (!best || payload_mtu(mtu, family) < best)
			best = payload_mtu(mtu, family);
	}
	return best;
}

/* The peer of a connected socket, IPv4-mapped addresses made IPv4. */
static int socket_peer(int fd, struct sockaddr_storage *peer)
{
	socklen_t len = sizeof(*peer);

	memset(peer, 0, sizeof(*peer));
	if (getpeername(fd, (struct sockaddr *)peer, &len))
		return -errno;
	addr_normalise(peer);
	return 0;
}

/*
 * mrc_conn_exchange() does blocking I/O on the socket: bound it, so a peer
 * that stops talking makes it fail instead of hanging. Our own control
 * reads never block (MSG_DONTWAIT). NODELAY: control messages are small
 * and every one of them is waited for.
 */
static void set_socket_timeouts(int fd, unsigned int ms)
{
	struct timeval tv = {
		.tv_sec = ms / 1000,
		.tv_usec = (long)(ms % 1000) * 1000,
	};
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/* ==================================================================== data, checksums, latency */

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The source bytes of one size: pseudo-random from a seed derived from the
 * size, so the data a previous size left in the region never verifies.
 * No byte is zero, so "region modified" holds even after a 1-byte WRITE.
 */
static void fill_pattern(uint8_t *buf, uint64_t len, uint64_t size)
{
	uint64_t state = size * 0x2545f4914f6cdd1dULL, w, i;

	for (i = 0; i < len; i += 8) {
		w = splitmix64(&state) | 0x0101010101010101ULL;
		memcpy(buf + i, &w, len - i < 8 ? len - i : 8);
	}
}

#define CSUM_INIT	0xcbf29ce484222325ULL	/* FNV-1a 64 offset basis */
#define CSUM_PRIME	0x100000001b3ULL	/* FNV-1a 64 prime */

/*
 * FNV-1a over little-endian 64-bit words (bytes for the tail), with an
 * xorshift so high bits feed back into low ones: eight times faster than
 * byte-wise FNV on a 1 GiB region. Chunks passed to successive calls must
 * be multiples of 8 bytes except the last.
 */
static uint64_t csum_update(uint64_t h, const uint8_t *p, uint64_t len)
{
	uint64_t w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ le64toh(w)) * CSUM_PRIME;
		h ^= h >> 29;
	}
	for (; len; p++, len--)
		h = (h ^ *p) * CSUM_PRIME;
	return h;
}

/*
 * Latency histogram: exact below 128 ns, then 128 buckets per power of two
 * (under 1 % error). Fixed size whatever the number of WRITEs.
 */
#define LAT_SUB_BITS	7
#define LAT_SUB		(1u << LAT_SUB_BITS)
#define LAT_BUCKETS	((64 - LAT_SUB_BITS + 1) * LAT_SUB)

struct lat_hist {
	uint64_t count;
	uint64_t max_ns;	/* exact, not a bucket: outliers are the point */
	uint64_t bucket[LAT_BUCKETS];
};

static unsigned int lat_bucket(uint64_t ns)
{
	unsigned int e;

	if (ns < LAT_SUB)
		return (unsigned int)ns;
	e = 63 - (unsigned int)__builtin_clzll(ns);
	return (e - LAT_SUB_BITS + 1) * LAT_SUB +
	       (unsigned int)((ns >> (e - LAT_SUB_BITS)) & (LAT_SUB - 1));
}

/* The middle of a bucket's range. */
static uint64_t lat_bucket_value(unsigned int i)
{
	unsigned int e, shift;

	if (i < LAT_SUB)
		return i;
	e = i / LAT_SUB + LAT_SUB_BITS - 1;
	shift = e - LAT_SUB_BITS;
	return ((uint64_t)(LAT_SUB + i % LAT_SUB) << shift) +
	       ((1ULL << shift) >> 1);
}

static void lat_add(struct lat_hist *h, uint64_t ns)
{
	h->bucket[lat_bucket(ns)]++;
	h->count++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

static double lat_percentile_us(const struct lat_hist *h, unsigned int pct)
{
	uint64_t rank, seen = 0;
	unsigned int i;

	if (!h->count)
		return 0;
	rank = (h->count * pct + 99) / 100;
	if (!rank)
		rank = 1;
	for (i = 0; i < LAT_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			return (double)lat_bucket_value(i) / 1e3;
	}
	return 0;
}

/* A page-aligned, zero-filled buffer, faulted in now so page faults do
 * not land in the timed phase (registration would pin it on a NIC). */
static void *buffer_alloc(uint64_t len, size_t *map_len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (size_t)((len + (uint64_t)page - 1) & ~((uint64_t)page - 1));
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	*map_len = n;
	return p;
}

static bool buffer_is_modified(const uint8_t *buf, uint64_t len)
{
	/* All zero iff the first byte is zero and every byte equals the next. */
	return len && (buf[0] || memcmp(buf, buf + 1, len - 1));
}

/* ==================================================================== libmrc helpers */

/* The one context of this process; on failure, why in `err`. */
static struct mrc_context *open_context(const char *pin_dir, char *err, size_t len)
{
	struct mrc_context_attr attr = { .pin_dir = pin_dir };
	struct mrc_context *ctx = mrc_open(pin_dir ? &attr : NULL);

	if (!ctx)
		snprintf(err, len, "cannot open libmrc (maps in %s): %s: is mrcd running?",
			 pin_dir ? pin_dir : MRC_DEFAULT_PIN_DIR, strerror(errno));
	return ctx;
}

static const char *async_event_name(enum mrc_async_event_type type)
{
	switch (type) {
	case MRC_EVENT_QP_FATAL:
		return "QP fatal error";
	case MRC_EVENT_QP_ACCESS_ERR:
		return "QP access error";
	}
	return "unknown event";
}

/* Print every pending asynchronous event; how many there were. */
static int print_async_events(struct mrc_context *ctx)
{
	struct mrc_async_event ev;
	int n = 0;

	while (n < ASYNC_DRAIN_MAX && mrc_get_async_event(ctx, &ev) == 0) {
		report("async event: %s on qp %u: %s", async_event_name(ev.type),
		       ev.qp_num, status_str(ev.status));
		n++;
	}
	return n;
}

/* What each side needs to hear from the other before bringing its QP up. */
static int check_peer_params(const struct mrc_conn_params *p, char *err, size_t len)
{
	if (!p->qpn || p->qpn > 0xffffff)
		snprintf(err, len, "peer sent an invalid QP number %u", p->qpn);
	else if (p->psn > 0xffffff)
		snprintf(err, len, "peer sent an invalid PSN 0x%x", p->psn);
	else if (!p->n_addrs || p->n_addrs > MRC_MAX_PLANES)
		snprintf(err, len, "peer sent %u plane addresses (want 1..%d)",
			 p->n_addrs, MRC_MAX_PLANES);
	else if (p->path_mtu < MTU_MIN || p->path_mtu > MTU_MAX)
		snprintf(err, len, "peer sent path_mtu %u (want %d..%d)",
			 p->path_mtu, MTU_MIN, MTU_MAX);
	else
		return 0;
	return -EPROTO;
}

/* QP attributes both ends agree on through HELLO and the exchange. */
struct qp_tuning {
	uint32_t path_mtu;
	uint8_t mpr_units, ack_timeout, retry_cnt, exp_retry_cnt;
	bool imm;
	uint16_t wimm_out, wimm_in;
	int cc_profile;			/* -1 = libmrc's default (each side's own) */
};

static void fill_conn_params(struct mrc_conn_params *p, struct mrc_qp *qp,
			     const struct sockaddr_storage *addrs, int n_addrs,
			     uint32_t path_mtu, const struct mrc_mr *mr,
			     const void *buf, uint64_t len)
{
	uint32_t psn;

	/* A fresh random start PSN, so a stale packet of an earlier run
	 * cannot fall into this one's window. */
	if (getrandom(&psn, sizeof(psn), GRND_NONBLOCK) != (ssize_t)sizeof(psn))
		psn = (uint32_t)now_ns() ^ ((uint32_t)getpid() * 2654435761u);
	memset(p, 0, sizeof(*p));
	p->qpn = mrc_qp_num(qp);
	p->psn = psn & 0xffffff;
	p->path_mtu = path_mtu;
	if (mr) {
		p->rkey = mrc_mr_rkey(mr);
		p->vaddr = (uint64_t)(uintptr_t)buf;
		p->length = len;
	}
	p->n_addrs = (uint8_t)n_addrs;
	memcpy(p->addrs, addrs, (size_t)n_addrs * sizeof(p->addrs[0]));
}

/*
 * RESET->INIT->RTR->RTS as in verbs. The receive side (peer QP, PSN and
 * addresses, MTU, window) and the retry policy go with RTR, our own start
 * PSN with RTS. `step` names the transition that failed.
 */
static int qp_bring_up(struct mrc_qp *qp, const struct mrc_conn_params *local,
		       const struct mrc_conn_params *remote,
		       const struct qp_tuning *t, const char **step)
{
	struct mrc_qp_attr attr;
	int mask, ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = MRC_QP_INIT;
	*step = "RESET->INIT";
	ret = mrc_modify_qp(qp, &attr, MRC_QP_ATTR_STATE);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = MRC_QP_RTR;
	attr.path_mtu = t->path_mtu;
	attr.rq_psn = remote->psn;
	attr.dest_qpn = remote->qpn;
	attr.mpr_units = t->mpr_units;
	attr.timeout = t->ack_timeout;
	attr.retry_cnt = t->retry_cnt;
	attr.exp_retry_cnt = t->exp_retry_cnt;
	attr.n_peer_addrs = remote->n_addrs;
	memcpy(attr.peer_addrs, remote->addrs,
	       (size_t)remote->n_addrs * sizeof(attr.peer_addrs[0]));
	mask = MRC_QP_ATTR_STATE | MRC_QP_ATTR_PATH_MTU | MRC_QP_ATTR_RQ_PSN |
	       MRC_QP_ATTR_DEST_QPN | MRC_QP_ATTR_PEER_ADDRS | MRC_QP_ATTR_MPR |
	       MRC_QP_ATTR_TIMEOUT | MRC_QP_ATTR_RETRY;
	if (t->imm) {
		/* Let `depth` WRITE-IMMs fly: the server posted receives for them. */
		attr.max_wimm_out = t->wimm_out;
		attr.max_wimm_in = t->wimm_in;
		mask |= MRC_QP_ATTR_WIMM;
	}
	if (t->cc_profile >= 0) {
		attr.cc_profile_id = (uint16_t)t->cc_profile;
		mask |= MRC_QP_ATTR_CC_PROFILE;
	}
	*step = "INIT->RTR";
	ret = mrc_modify_qp(qp, &attr, mask);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = MRC_QP_RTS;
	attr.sq_psn = local->psn;
	*step = "RTR->RTS";
	return mrc_modify_qp(qp, &attr, MRC_QP_ATTR_STATE | MRC_QP_ATTR_SQ_PSN);
}

/* ==================================================================== control protocol */

#define CTL_MAGIC	0x4d525046u	/* "MRPF" */
#define CTL_VERSION	1
#define CTL_TEXT_LEN	112

enum ctl_type {
	CTL_HELLO = 1,		/* client: region size, depth, flags, tuning */
	CTL_HELLO_ACK,		/* server: region, CQ and QP ready */
	CTL_BEGIN,		/* client: length = size, offset = first op, ops */
	CTL_BEGIN_ACK,
	CTL_VERIFY,		/* client: checksum [offset, offset + length) */
	CTL_VERIFY_ACK,		/* server: checksum, imm_count, flags */
	CTL_DONE,		/* client: ops = WRITEs posted in the run */
	CTL_DONE_ACK,		/* server: imm_count, flags, text */
	CTL_ABORT,		/* client: text = why */
	CTL_ERROR,		/* server: status, text = why */
};

#define CTL_F_IMM		(1u << 0)	/* HELLO: WRITE-IMM run */
#define CTL_F_IMM_IN_ORDER	(1u << 1)	/* replies: imm_data 0, 1, 2, ... */
#define CTL_F_IMM_LEN_OK	(1u << 2)	/* replies: every byte_len matched */
#define CTL_F_GAVE_UP		(1u << 3)	/* DONE_ACK: grace time ran out */

/* On the wire: big-endian, naturally aligned, no implicit padding. */
struct ctl_wire {
	uint32_t magic;
	uint16_t version;
	uint16_t type;
	uint32_t status;	/* replies: 0 or a positive errno */
	uint32_t flags;		/* CTL_F_* */
	uint64_t length;	/* HELLO: region, BEGIN: size, VERIFY: bytes */
	uint64_t offset;	/* BEGIN: first op number, VERIFY: first byte */
	uint64_t ops;		/* BEGIN: ops of the size, DONE: ops of the run */
	uint64_t imm_count;	/* replies: WRITE-IMMs received so far */
	uint64_t checksum;	/* VERIFY_ACK */
	uint32_t depth;		/* HELLO: WRITEs the client keeps outstanding */
	uint32_t timeout_s;	/* HELLO: the client's --timeout-s */
	uint8_t ack_timeout, retry_cnt, exp_retry_cnt, mpr_units;	/* HELLO */
	uint8_t reserved[12];
	char text[CTL_TEXT_LEN];	/* ABORT, ERROR, DONE_ACK: NUL-terminated */
};
_Static_assert(sizeof(struct ctl_wire) == 192, "control message size is ABI");
_Static_assert(offsetof(struct ctl_wire, text) == 80, "control message layout is ABI");

#define CTL_MSG_LEN	sizeof(struct ctl_wire)

/* A decoded message, host byte order. */
struct ctl_msg {
	uint16_t version;
	uint16_t type;
	uint32_t status;
	uint32_t flags;
	uint64_t length, offset, ops, imm_count, checksum;
	uint32_t depth, timeout_s;
	uint8_t ack_timeout, retry_cnt, exp_retry_cnt, mpr_units;
	char text[CTL_TEXT_LEN];
};

/* One end of the control connection; reads are never blocking. */
struct ctl_conn {
	int fd;
	bool closed;		/* the peer closed, or a read failed */
	uint16_t peer_version;	/* of the last message, even a rejected one */
	size_t have;		/* bytes of the next message in rbuf */
	uint8_t rbuf[CTL_MSG_LEN];
};

static const char *ctl_type_name(uint16_t type)
{
	static const char *const names[] = {
		[CTL_HELLO] = "HELLO", [CTL_HELLO_ACK] = "HELLO_ACK",
		[CTL_BEGIN] = "BEGIN", [CTL_BEGIN_ACK] = "BEGIN_ACK",
		[CTL_VERIFY] = "VERIFY", [CTL_VERIFY_ACK] = "VERIFY_ACK",
		[CTL_DONE] = "DONE", [CTL_DONE_ACK] = "DONE_ACK",
		[CTL_ABORT] = "ABORT", [CTL_ERROR] = "ERROR",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "an unknown message";
}

static void ctl_msg_init(struct ctl_msg *m, uint16_t type)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
}

static void ctl_encode(const struct ctl_msg *m, struct ctl_wire *w)
{
	memset(w, 0, sizeof(*w));
	w->magic = htonl(CTL_MAGIC);
	w->version = htons(CTL_VERSION);
	w->type = htons(m->type);
	w->status = htonl(m->status);
	w->flags = htonl(m->flags);
	w->length = htobe64(m->length);
	w->offset = htobe64(m->offset);
	w->ops = htobe64(m->ops);
	w->imm_count = htobe64(m->imm_count);
	w->checksum = htobe64(m->checksum);
	w->depth = htonl(m->depth);
	w->timeout_s = htonl(m->timeout_s);
	w->ack_timeout = m->ack_timeout;
	w->retry_cnt = m->retry_cnt;
	w->exp_retry_cnt = m->exp_retry_cnt;
	w->mpr_units = m->mpr_units;
	copy_text(w->text, sizeof(w->text), m->text);
}

/* 0, -EBADMSG (not our protocol) or -EPROTONOSUPPORT (other version). */
static int ctl_decode(const uint8_t *buf, struct ctl_msg *m)
{
	struct ctl_wire w;

	memcpy(&w, buf, sizeof(w));
	memset(m, 0, sizeof(*m));
	if (ntohl(w.magic) != CTL_MAGIC)
		return -EBADMSG;
	m->version = ntohs(w.version);
	if (m->version != CTL_VERSION)
		return -EPROTONOSUPPORT;
	m->type = ntohs(w.type);
	m->status = ntohl(w.status);
	m->flags = ntohl(w.flags);
	m->length = be64toh(w.length);
	m->offset = be64toh(w.offset);
	m->ops = be64toh(w.ops);
	m->imm_count = be64toh(w.imm_count);
	m->checksum = be64toh(w.checksum);
	m->depth = ntohl(w.depth);
	m->timeout_s = ntohl(w.timeout_s);
	m->ack_timeout = w.ack_timeout;
	m->retry_cnt = w.retry_cnt;
	m->exp_retry_cnt = w.exp_retry_cnt;
	m->mpr_units = w.mpr_units;
	w.text[sizeof(w.text) - 1] = '\0';
	copy_text(m->text, sizeof(m->text), w.text);
	return 0;
}

static void ctl_init(struct ctl_conn *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
}

static bool ctl_alive(const struct ctl_conn *c)
{
	return c->fd >= 0 && !c->closed;
}

/* Sends are small and the socket has SO_SNDTIMEO: they cannot hang. */
static int ctl_send(struct ctl_conn *c, const struct ctl_msg *m)
{
	struct ctl_wire w;
	size_t off = 0;
	ssize_t n;

	if (!ctl_alive(c))
		return -ENOTCONN;
	ctl_encode(m, &w);
	while (off < sizeof(w)) {
		n = send(c->fd, (const uint8_t *)&w + off, sizeof(w) - off,
			 MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

/*
 * Peek at the socket without blocking: 1 and *m when a whole message has
 * arrived, 0 when not yet, -ECONNRESET once the peer closed, or the error
 * of ctl_decode(). Reads stop at a message boundary, so the bytes of
 * mrc_conn_exchange() that follow HELLO_ACK stay in the socket for it.
 */
static int ctl_poll(struct ctl_conn *c, struct ctl_msg *m)
{
	ssize_t n;
	int ret;

	if (!ctl_alive(c))
		return -ECONNRESET;
	n = recv(c->fd, c->rbuf + c->have, sizeof(c->rbuf) - c->have, MSG_DONTWAIT);
	if (n == 0) {
		c->closed = true;
		return -ECONNRESET;
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		c->closed = true;
		return -errno;
	}
	c->have += (size_t)n;
	if (c->have < sizeof(c->rbuf))
		return 0;
	c->have = 0;
	/* On a decode error the connection stays open so the server can still
	 * answer ERROR with its own version; callers end the session. */
	ret = ctl_decode(c->rbuf, m);
	c->peer_version = m->version;
	return ret ? ret : 1;
}

/* Why a control read failed, as a phrase about `who`. */
static void ctl_describe_error(const struct ctl_conn *c, int err, const char *who,
			       char *buf, size_t len)
{
	if (err == -ECONNRESET)
		snprintf(buf, len, "%s closed the control connection", who);
	else if (err == -EBADMSG)
		snprintf(buf, len, "%s does not speak the mrc-perf control protocol (bad magic)",
			 who);
	else if (err == -EPROTONOSUPPORT)
		snprintf(buf, len, "%s speaks control protocol version %u, this mrc-perf speaks %u",
			 who, c->peer_version, CTL_VERSION);
	else
		snprintf(buf, len, "control connection to %s: %s", who, strerror(-err));
}

/* ==================================================================== timelines */

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

static bool timeline_append(struct timeline *t, const uint64_t *row)
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
static void timeline_start(struct timeline *t, uint64_t base)
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
static int timeline_write(const char *path, const struct timeline *t,
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
static bool timeline_finish(const char *path, const struct timeline *t,
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

/* ==================================================================== client */

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
	char error[ERR_LEN];

	/* The QP's congestion window, from the pinned maps (lib/cc_view.h). */
	struct cc_view_src cc;
	char cc_err[ERR_LEN];		/* why it cannot be read */
	bool have_ccv, have_cnt;
	struct mrc_cc_view ccv;		/* at the end of the run */
	struct mrc_qp_counters cnt;	/* at the end of the run */
	struct timeline cctl;		/* --cc-timeline */
	bool cctl_tried;
};

#define CC_TIMELINE_HEADER	"time_ms,acked_bytes,cwnd,inflight"

static const struct timeline client_cc_timeline = {
	.header = CC_TIMELINE_HEADER, .cols = 4,
};

/* Record the first failure (the JSON "error") and print every one. */
static int __attribute__((format(printf, 2, 3)))
client_fail(struct client *c, const char *fmt, ...)
{
	char msg[ERR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report("%s", msg);
	if (!c->error[0])
		copy_text(c->error, sizeof(c->error), msg);
	return -1;
}

static int client_ctl_fail(struct client *c, int err, const char *while_doing)
{
	char why[ERR_LEN];

	ctl_describe_error(&c->ctl, err, "server", why, sizeof(why));
	return client_fail(c, "%s while %s", why, while_doing);
}

static int client_check_alive(struct client *c, const char *while_doing)
{
	if (stop_requested)
		return client_fail(c, "interrupted while %s", while_doing);
	if (now_ns() >= c->deadline_ns)
		return client_fail(c, "timed out after %u s (--timeout-s) while %s",
				   c->o->timeout_s, while_doing);
	return 0;
}

static int client_remaining_ms(const struct client *c)
{
	uint64_t now = now_ns();
	uint64_t ms = now >= c->deadline_ns ? 0 : (c->deadline_ns - now) / NSEC_PER_MSEC;

	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* MIN, every power of two strictly between, MAX. */
static int plan_sizes(uint64_t min, uint64_t max, uint64_t *sizes)
{
	uint64_t p;
	int n = 0;

	sizes[n++] = min;
	for (p = 1; p < max; p <<= 1)
		if (p > min)
			sizes[n++] = p;
	if (max != min)
		sizes[n++] = max;
	return n;
}

static uint64_t ops_for_size(const struct opts *o, uint64_t size)
{
	if (!o->bytes_total)
		return o->iters;
	return o->bytes_total / size ? o->bytes_total / size : 1;
}

static int client_init(struct client *c, const struct opts *o)
{
	char why[ERR_LEN];
	uint32_t i;

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->ctl.fd = -1;
	c->cc.fd_qps = c->cc.fd_view = -1;
	c->cctl = client_cc_timeline;
	c->deadline_ns = now_ns() + (uint64_t)o->timeout_s * NSEC_PER_SEC;
	c->n_sizes = plan_sizes(o->size_min, o->size_max, c->sizes);
	c->max_size = o->size_max;
	c->slots = calloc(o->depth, sizeof(*c->slots));
	c->free_slots = calloc(o->depth, sizeof(*c->free_slots));
	c->hist = calloc(1, sizeof(*c->hist));
	if (!c->slots || !c->free_slots || !c->hist)
		return client_fail(c, "out of memory");
	for (i = 0; i < o->depth; i++)
		c->free_slots[i] = o->depth - 1 - i;
	c->n_free = o->depth;
	c->ctx = open_context(o->pin_dir, why, sizeof(why));
	if (!c->ctx)
		return client_fail(c, "%s", why);
	return 0;
}

static int client_connect(struct client *c)
{
	const struct opts *o = c->o;
	uint64_t retry_until = now_ns() + CONNECT_RETRY_MS * NSEC_PER_MSEC;
	int fd, ret, ms;

	for (;;) {
		if (client_check_alive(c, "connecting"))
			return -1;
		ms = client_remaining_ms(c);
		fd = mrc_conn_connect(o->host, o->port,
				      ms < CONNECT_TIMEOUT_MS ? ms : CONNECT_TIMEOUT_MS);
		if (fd >= 0)
			break;
		/* A server started a moment ago may not be listening yet. */
		if (fd == -ECONNREFUSED && now_ns() < retry_until) {
			sleep_ms(CONNECT_PAUSE_MS);
			continue;
		}
		return client_fail(c, "cannot connect to %s port %u: %s (is '" PROG
				   " server' running there?)", o->host, o->port,
				   strerror(-fd));
	}
	ctl_init(&c->ctl, fd);
	ret = socket_peer(fd, &c->peer);
	if (ret)
		return client_fail(c, "getpeername: %s", strerror(-ret));
	c->family = c->peer.ss_family;
	addr_str(&c->peer, c->peer_str, sizeof(c->peer_str));
	return 0;
}

/* Source buffer, MR, CQ and QP; and what to tell the server about them. */
static int client_create_resources(struct client *c)
{
	const struct opts *o = c->o;
	struct sockaddr_storage addrs[MRC_MAX_PLANES];
	struct mrc_qp_init_attr qpa;
	uint32_t mtu = o->mtu;
	int n;

	n = mrc_local_addrs(c->ctx, c->family, addrs, MRC_MAX_PLANES);
	if (n < 0)
		return client_fail(c, "mrc_local_addrs: %s", strerror(-n));
	if (n == 0)
		return client_fail(c, "no MRC plane address of this family (%s, as the "
				   "connection to %s): is mrcd running with --planes?",
				   family_name(c->family), c->peer_str);
	if (n > MRC_MAX_PLANES)
		n = MRC_MAX_PLANES;
	if (!mtu) {
		mtu = detect_path_mtu(&c->peer, c->family, addrs, n);
		if (!mtu) {
			report("cannot tell the MTU towards %s: using path_mtu %d",
			       c->peer_str, MTU_FALLBACK);
			mtu = MTU_FALLBACK;
		}
	}

	c->buf = buffer_alloc(c->max_size, &c->map_len);
	if (!c->buf)
		return client_fail(c, "cannot allocate %" PRIu64 " bytes: %s",
				   c->max_size, strerror(errno));
	c->mr = mrc_reg_mr(c->ctx, c->buf, c->max_size, MRC_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		return client_fail(c, "mrc_reg_mr(%" PRIu64 " bytes): %s",
				   c->max_size, strerror(errno));
	c->cq = mrc_create_cq(c->ctx, (int)o->depth + POLL_BATCH);
	if (!c->cq)
		return client_fail(c, "mrc_create_cq: %s", strerror(errno));
	memset(&qpa, 0, sizeof(qpa));
	qpa.send_cq = c->cq;
	qpa.recv_cq = c->cq;
	qpa.max_send_wr = o->depth;
	qpa.max_recv_wr = 1;	/* the client receives no immediates */
	qpa.max_sge = 2;
	c->qp = mrc_create_qp(c->ctx, &qpa);
	if (!c->qp)
		return client_fail(c, "mrc_create_qp: %s", strerror(errno));
	fill_conn_params(&c->local, c->qp, addrs, n, mtu, NULL, NULL, 0);
	return 0;
}

static int client_send(struct client *c, const struct ctl_msg *m)
{
	int ret = ctl_send(&c->ctl, m);

	if (ret)
		return client_fail(c, "cannot send %s to the server: %s",
				   ctl_type_name(m->type), strerror(-ret));
	return 0;
}

/* ---- the congestion window: "cc" of --json, --cc-timeline ---- */

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
static void cc_timeline_row(struct client *c, uint64_t now)
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

/* The first BEGIN is time_ms 0, as for the server's --timeline. */
static void cc_timeline_begin(struct client *c)
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
static void cc_timeline_end(struct client *c)
{
	if (!c->cctl.on)
		return;
	cc_timeline_row(c, now_ns());
	c->cctl.on = false;
}

/* At the end of the run: the window and the QP's counters, for the output. */
static void client_cc_snapshot(struct client *c)
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

/*
 * Nothing of ours is in flight while we wait for the server, but libmrc
 * only progresses in mrc_poll_cq(), so keep calling it; a completion now
 * can only be an error.
 */
static int client_idle_progress(struct client *c)
{
	struct mrc_wc wc[POLL_BATCH];
	int i, n;

	if (!c->cq)
		return 0;
	n = mrc_poll_cq(c->cq, POLL_BATCH, wc);
	if (n < 0)
		return client_fail(c, "mrc_poll_cq: %s", strerror(-n));
	cc_timeline_tick(c);
	for (i = 0; i < n; i++)
		if (wc[i].status != MRC_WC_SUCCESS)
			return client_fail(c, "WRITE failed: %s (wr_id %" PRIu64
					   ", late completion, qp %u)",
					   status_str(wc[i].status), wc[i].wr_id,
					   wc[i].qp_num);
	return 0;
}

/* Busy-wait for the server's answer of type `type`. */
static int client_await(struct client *c, uint16_t type, struct ctl_msg *m,
			const char *while_doing)
{
	int ret;

	for (;;) {
		if (client_idle_progress(c))
			return -1;
		ret = ctl_poll(&c->ctl, m);
		if (ret < 0)
			return client_ctl_fail(c, ret, while_doing);
		if (ret == 1) {
			if (m->type == CTL_ERROR)
				return client_fail(c, "server error: %s", m->text);
			if (m->type != type)
				return client_fail(c, "protocol error: the server sent %s, "
						   "expected %s", ctl_type_name(m->type),
						   ctl_type_name(type));
			return 0;
		}
		if (client_check_alive(c, while_doing))
			return -1;
	}
}

static int client_hello(struct client *c)
{
	const struct opts *o = c->o;
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_HELLO);
	m.flags = o->imm ? CTL_F_IMM : 0;
	m.length = c->max_size;	/* --offset is not included, on purpose */
	m.depth = o->depth;
	m.timeout_s = o->timeout_s;
	m.ack_timeout = o->ack_timeout;
	m.retry_cnt = o->retry_cnt;
	m.exp_retry_cnt = o->exp_retry_cnt;
	m.mpr_units = o->mpr_units;
	if (client_send(c, &m))
		return -1;
	return client_await(c, CTL_HELLO_ACK, &m, "waiting for the server's HELLO_ACK");
}

static int client_exchange(struct client *c)
{
	char why[ERR_LEN];
	int ms = client_remaining_ms(c), ret;

	set_socket_timeouts(c->ctl.fd, ms < EXCHANGE_TIMEOUT_MS ? ms : EXCHANGE_TIMEOUT_MS);
	ret = mrc_conn_exchange(c->ctl.fd, &c->local, &c->remote);
	if (ret) {
		if (client_check_alive(c, "exchanging QP parameters"))
			return -1;
		return client_fail(c, "QP parameter exchange with the server failed: %s",
				   ret == -EAGAIN || ret == -EWOULDBLOCK ? "timed out"
									: strerror(-ret));
	}
	if (check_peer_params(&c->remote, why, sizeof(why)))
		return client_fail(c, "server: %s", why);
	if (!c->remote.rkey || c->remote.length < c->max_size)
		return client_fail(c, "server offered a region of %" PRIu64 " bytes "
				   "(rkey 0x%x), asked for %" PRIu64, c->remote.length,
				   c->remote.rkey, c->max_size);
	return 0;
}

static int client_bring_up_qp(struct client *c)
{
	const struct opts *o = c->o;
	struct qp_tuning t = {
		.mpr_units = o->mpr_units,
		.ack_timeout = o->ack_timeout,
		.retry_cnt = o->retry_cnt,
		.exp_retry_cnt = o->exp_retry_cnt,
		.imm = o->imm,
		.wimm_out = (uint16_t)o->depth,
		.wimm_in = 1,
		.cc_profile = o->cc_profile,
	};
	const char *step;
	int ret;

	t.path_mtu = c->local.path_mtu < c->remote.path_mtu ? c->local.path_mtu
							     : c->remote.path_mtu;
	c->path_mtu = t.path_mtu;
	ret = qp_bring_up(c->qp, &c->local, &c->remote, &t, &step);
	if (ret)
		return client_fail(c, "mrc_modify_qp(%s): %s", step, strerror(-ret));
	report("connected to %s port %u: qp %u -> %u, path_mtu %u (ours %u, server's %u), "
	       "depth %u, %u/%u plane addresses", c->peer_str, o->port, c->local.qpn,
	       c->remote.qpn, c->path_mtu, c->local.path_mtu, c->remote.path_mtu,
	       o->depth, c->local.n_addrs, c->remote.n_addrs);
	if (c->max_size + o->offset > c->remote.length || o->offset > c->remote.length)
		report("note: --offset %" PRIu64 " takes WRITEs past the server's "
		       "%" PRIu64 "-byte region", o->offset, c->remote.length);
	return 0;
}

/* Tells the server which ops carry which size; its answer also says that
 * its QP is ready, which the first BEGIN needs. */
static int client_begin_size(struct client *c, uint64_t size, uint64_t ops)
{
	struct ctl_msg m;

	cc_timeline_begin(c);
	ctl_msg_init(&m, CTL_BEGIN);
	m.length = size;
	m.offset = c->next_op;
	m.ops = ops;
	if (client_send(c, &m))
		return -1;
	return client_await(c, CTL_BEGIN_ACK, &m, "waiting for the server's BEGIN_ACK");
}

static int client_post_write(struct client *c, uint64_t size)
{
	const struct opts *o = c->o;
	uint32_t idx = c->free_slots[c->n_free - 1];
	struct wr_slot *slot = &c->slots[idx];
	uint32_t half = (uint32_t)(size / 2), lkey = mrc_mr_lkey(c->mr);
	struct mrc_send_wr wr;
	int ret;

	/* Two SGEs (the halves of the buffer) whenever there is something to
	 * split, so every run exercises scatter-gather. */
	slot->sge[0].addr = (uint64_t)(uintptr_t)c->buf;
	slot->sge[0].lkey = lkey;
	slot->sge[1].addr = (uint64_t)(uintptr_t)(c->buf + half);
	slot->sge[1].length = (uint32_t)size - half;
	slot->sge[1].lkey = lkey;
	slot->sge[0].length = size >= 2 ? half : (uint32_t)size;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = idx;
	wr.opcode = o->imm ? MRC_WR_WRITE_WITH_IMM : MRC_WR_WRITE;
	wr.sg_list = slot->sge;
	wr.num_sge = size >= 2 ? 2 : 1;
	wr.remote_addr = c->remote.vaddr + o->offset;
	wr.rkey = c->remote.rkey;
	wr.imm_data = (uint32_t)c->next_op;

	slot->post_ns = now_ns();
	ret = mrc_post_write(c->qp, &wr);
	if (ret)
		return ret;
	slot->op = c->next_op++;
	slot->busy = true;
	c->n_free--;
	return 0;
}

static void client_drain_async_events(struct client *c)
{
	if (c->ctx)
		print_async_events(c->ctx);
}

/* After a failed WRITE: if the server already said why, show it too. */
static void client_print_server_error(struct client *c)
{
	struct ctl_msg m;

	if (ctl_poll(&c->ctl, &m) == 1 && m.type == CTL_ERROR)
		report("server error: %s", m.text);
}

/* 1 when `wc` completed one of our WRITEs, -1 on failure. */
static int client_complete(struct client *c, const struct mrc_wc *wc,
			   uint64_t size, uint64_t now)
{
	const struct wr_slot *slot = wc->wr_id < c->o->depth ? &c->slots[wc->wr_id] : NULL;

	if (wc->status != MRC_WC_SUCCESS) {
		client_fail(c, "WRITE failed: %s (wr_id %" PRIu64 ", op %" PRIu64 ", %"
			    PRIu64 " bytes to 0x%" PRIx64 " rkey 0x%x, qp %u)",
			    status_str(wc->status), wc->wr_id, slot ? slot->op : 0,
			    size, c->remote.vaddr + c->o->offset, c->remote.rkey,
			    wc->qp_num);
		client_drain_async_events(c);
		client_print_server_error(c);
		return -1;
	}
	if (wc->opcode != MRC_WC_WRITE)
		return 0;
	if (!slot || !slot->busy)
		return client_fail(c, "completion for unknown wr_id %" PRIu64, wc->wr_id);
	lat_add(c->hist, now - slot->post_ns);
	c->slots[wc->wr_id].busy = false;
	c->free_slots[c->n_free++] = (uint32_t)wc->wr_id;
	return 1;
}

/* During the timed loop: the server may report an error or vanish. */
static int client_check_server(struct client *c)
{
	struct ctl_msg m;
	int ret = ctl_poll(&c->ctl, &m);

	if (ret < 0)
		return client_ctl_fail(c, ret, "WRITEs were in flight");
	if (ret == 1 && m.type == CTL_ERROR)
		return client_fail(c, "server error: %s", m.text);
	if (ret == 1)
		return client_fail(c, "protocol error: the server sent %s during the "
				   "WRITEs", ctl_type_name(m.type));
	return 0;
}

/* The timed phase of one size: `ops` WRITEs, `depth` outstanding. */
static int client_write_size(struct client *c, uint64_t size, uint64_t ops,
			     struct size_result *r)
{
	struct mrc_wc wc[POLL_BATCH];
	uint64_t posted = 0, done = 0, start, elapsed, now;
	unsigned int spins = 0;
	int i, n, ret;

	memset(c->hist, 0, sizeof(*c->hist));
	start = now_ns();
	while (done < ops) {
		while (posted < ops && c->n_free) {
			ret = client_post_write(c, size);
			if (ret == -EAGAIN)
				break;	/* send queue or WIMM limit full: poll */
			if (ret) {
				client_fail(c, "mrc_post_write(op %" PRIu64 "): %s",
					    c->next_op, strerror(-ret));
				client_drain_async_events(c);
				client_print_server_error(c);
				return -1;
			}
			posted++;
		}
		n = mrc_poll_cq(c->cq, POLL_BATCH, wc);
		if (n < 0)
			return client_fail(c, "mrc_poll_cq: %s", strerror(-n));
		cc_timeline_tick(c);
		now = n ? now_ns() : 0;
		for (i = 0; i < n; i++) {
			ret = client_complete(c, &wc[i], size, now);
			if (ret < 0)
				return -1;
			done += (uint64_t)ret;
		}
		if (++spins % CHECK_EVERY == 0 &&
		    (client_check_alive(c, "WRITEs were in flight") ||
		     client_check_server(c)))
			return -1;
	}
	elapsed = now_ns() - start;

	r->size = size;
	r->ops = ops;
	r->seconds = (double)elapsed / 1e9;
	r->gbps = r->seconds > 0 ? (double)size * (double)ops * 8 / r->seconds / 1e9 : 0;
	r->mpps = r->seconds > 0 ? (double)ops / r->seconds / 1e6 : 0;
	r->p50_us = lat_percentile_us(c->hist, 50);
	r->p99_us = lat_percentile_us(c->hist, 99);
	r->max_us = (double)c->hist->max_ns / 1e3;
	return 0;
}

static int client_check_imm_flags(struct client *c, const struct ctl_msg *m)
{
	if (!c->o->imm)
		return 0;
	if (!(m->flags & CTL_F_IMM_IN_ORDER))
		return client_fail(c, "immediates out of order (the server received %"
				   PRIu64 ")", m->imm_count);
	if (!(m->flags & CTL_F_IMM_LEN_OK))
		return client_fail(c, "immediate length mismatch: %s",
				   m->text[0] ? m->text : "byte_len differs from the size");
	return 0;
}

/* --verify: the server's checksum of what landed against our source. */
static int client_verify_size(struct client *c, uint64_t size)
{
	uint64_t expect = csum_update(CSUM_INIT, c->buf, size);
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_VERIFY);
	m.offset = c->o->offset;
	m.length = size;
	if (client_send(c, &m) ||
	    client_await(c, CTL_VERIFY_ACK, &m, "waiting for the server's checksum"))
		return -1;
	if (m.status)
		return client_fail(c, "VERIFY FAILED at size %" PRIu64 ": the server "
				   "cannot checksum it: %s", size,
				   m.text[0] ? m.text : strerror((int)m.status));
	if (client_check_imm_flags(c, &m))
		return -1;
	if (m.checksum != expect)
		return client_fail(c, "VERIFY FAILED at size %" PRIu64 ": region bytes [%"
				   PRIu64 ", %" PRIu64 ") have checksum %016" PRIx64
				   ", the source has %016" PRIx64, size, c->o->offset,
				   c->o->offset + size, m.checksum, expect);
	c->n_verified++;
	return 0;
}

static void print_size_header(void)
{
	printf(" #bytes     #iterations    BW[Gb/s]    MsgRate[Mpps]   lat_p50[us]  lat_p99[us]  lat_max[us]\n");
	fflush(stdout);
}

static void print_size_line(const struct size_result *r)
{
	printf(" %-10" PRIu64 " %-14" PRIu64 " %-11.2f %-15.6f %-12.2f %-12.2f %.2f\n",
	       r->size, r->ops, r->gbps, r->mpps, r->p50_us, r->p99_us, r->max_us);
	fflush(stdout);
}

static int client_run_sizes(struct client *c)
{
	struct size_result *r;
	uint64_t size, ops;
	int i;

	if (!c->o->json)
		print_size_header();
	for (i = 0; i < c->n_sizes; i++) {
		size = c->sizes[i];
		ops = ops_for_size(c->o, size);
		fill_pattern(c->buf, size, size);
		if (client_begin_size(c, size, ops))
			return -1;
		r = &c->results[c->n_results];
		if (client_write_size(c, size, ops, r))
			return -1;
		c->n_results++;
		if (!c->o->json)
			print_size_line(r);
		if (c->o->verify && client_verify_size(c, size))
			return -1;
	}
	return 0;
}

/* The end: every immediate the server saw, in order, none missing. */
static int client_done(struct client *c)
{
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_DONE);
	m.ops = c->next_op;
	if (client_send(c, &m) ||
	    client_await(c, CTL_DONE_ACK, &m, "waiting for the server's DONE_ACK"))
		return -1;
	if (client_check_imm_flags(c, &m))
		return -1;
	if (c->o->imm && m.imm_count != c->next_op)
		return client_fail(c, "immediates count mismatch: the server received %"
				   PRIu64 ", %" PRIu64 " were posted%s", m.imm_count,
				   c->next_op, m.flags & CTL_F_GAVE_UP ?
				   " (it stopped waiting after 5 s)" : "");
	return 0;
}

/* Tell a live server why we stop, so it cleans up at once. */
static void client_abort(struct client *c)
{
	struct ctl_msg m;

	if (!ctl_alive(&c->ctl))
		return;
	ctl_msg_init(&m, CTL_ABORT);
	copy_text(m.text, sizeof(m.text), c->error);
	ctl_send(&c->ctl, &m);	/* best effort: the server may be gone */
}

static bool client_all_verified(const struct client *c)
{
	return c->n_verified == c->n_sizes;
}

static void client_totals(const struct client *c, uint64_t *bytes, double *seconds)
{
	int i;

	*bytes = 0;
	*seconds = 0;
	for (i = 0; i < c->n_results; i++) {
		*bytes += c->results[i].size * c->results[i].ops;
		*seconds += c->results[i].seconds;
	}
}

static void client_print_summary(const struct client *c)
{
	uint64_t bytes;
	double seconds;

	client_totals(c, &bytes, &seconds);
	printf(" total: %" PRIu64 " bytes in %.6f s, %.2f Gb/s, verified: %s\n",
	       bytes, seconds, seconds > 0 ? (double)bytes * 8 / seconds / 1e9 : 0,
	       !c->o->verify ? "not checked" : client_all_verified(c) ? "yes" : "no");
	if (c->have_ccv)
		printf(" cc: window %u (%s), cwnd %u bytes, rtt min %.3f us p50 %.3f us "
		       "p99 %.3f us, avg delay %.3f us; md %" PRIu64 ", qa %" PRIu64
		       ", trims %" PRIu64 ", losses %" PRIu64 ", %" PRIu64
		       " packets retransmitted\n", c->cc.slot, cc_algo_name(c->ccv.algo),
		       c->ccv.cwnd, c->ccv.min_rtt_ns / 1e3,
		       cc_rtt_percentile_ns(&c->ccv, 50) / 1e3,
		       cc_rtt_percentile_ns(&c->ccv, 99) / 1e3, c->ccv.avg_delay_ns / 1e3,
		       (uint64_t)c->ccv.n_md, (uint64_t)c->ccv.n_qa,
		       (uint64_t)c->ccv.n_trims, (uint64_t)c->ccv.n_losses,
		       (uint64_t)c->cnt.tx_retransmits);
}

/* "cc": the window at the end (lib/cc_view.c's members), or null. */
static void client_print_cc_json(const struct client *c)
{
	if (!c->have_ccv) {
		fputs("null", stdout);
		return;
	}
	printf("{\"slot\": %u, ", c->cc.slot);
	cc_view_json_members(stdout, &c->ccv);
	printf(", \"tx_retransmits\": %" PRIu64 "}", (uint64_t)c->cnt.tx_retransmits);
}

static void client_print_json(const struct client *c)
{
	const struct size_result *r;
	uint64_t bytes;
	double seconds;
	int i;

	client_totals(c, &bytes, &seconds);
	printf("{\"bytes\": %" PRIu64 ", \"seconds\": %.6f, \"gbps\": %.6f, \"verified\": %s, "
	       "\"sizes\": [", bytes, seconds,
	       seconds > 0 ? (double)bytes * 8 / seconds / 1e9 : 0,
	       !c->o->verify ? "null" : client_all_verified(c) ? "true" : "false");
	for (i = 0; i < c->n_results; i++) {
		r = &c->results[i];
		printf("%s{\"size\": %" PRIu64 ", \"ops\": %" PRIu64 ", \"gbps\": %.6f, "
		       "\"mpps\": %.6f, \"lat_p50_us\": %.3f, \"lat_p99_us\": %.3f, "
		       "\"lat_max_us\": %.3f}",
		       i ? ", " : "", r->size, r->ops, r->gbps, r->mpps, r->p50_us,
		       r->p99_us, r->max_us);
	}
	printf("], \"imm\": %s, \"tx_retransmits\": %" PRIu64 ", \"retx_bytes\": %" PRIu64
	       ", \"cc_blocked\": %" PRIu64 ", \"cc_paced\": %" PRIu64
	       ", \"cc_sleeps\": %" PRIu64 ", \"cc_timeline_t0_ns\": %" PRIu64 ", \"cc\": ",
	       c->o->imm ? "true" : "false", (uint64_t)c->cnt.tx_retransmits,
	       (uint64_t)c->cnt.retx_bytes, (uint64_t)c->cnt.cc_blocked,
	       (uint64_t)c->cnt.cc_paced, (uint64_t)c->cnt.cc_sleeps, c->cctl.t0_ns);
	client_print_cc_json(c);
	printf(", \"error\": ");
	json_error(stdout, c->error);
	printf("}\n");
}

static void client_cleanup(struct client *c)
{
	int ret;

	/* QP before CQ before MR: each is in use by the one before. */
	if (c->qp && (ret = mrc_destroy_qp(c->qp)))
		report("mrc_destroy_qp: %s", strerror(-ret));
	if (c->cq && (ret = mrc_destroy_cq(c->cq)))
		report("mrc_destroy_cq: %s", strerror(-ret));
	if (c->mr && (ret = mrc_dereg_mr(c->mr)))
		report("mrc_dereg_mr: %s", strerror(-ret));
	if (c->buf)
		munmap(c->buf, c->map_len);
	if (c->ctl.fd >= 0)
		close(c->ctl.fd);
	if (c->ctx && (ret = mrc_close(c->ctx)))
		report("mrc_close: %s", strerror(-ret));
	free(c->slots);
	free(c->free_slots);
	free(c->hist);
	free(c->cctl.rows);
	cc_view_close(&c->cc);
}

static int run_client(const struct opts *o)
{
	struct client *c;
	char why[ERR_LEN];
	int ret;

	/* A FILE we cannot write is a mistake on the command line. */
	if (o->cc_timeline &&
	    timeline_write(o->cc_timeline, &client_cc_timeline, why, sizeof(why))) {
		report("--cc-timeline: %s", why);
		return EXIT_USAGE;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		report("out of memory");
		return EXIT_RUNTIME;
	}
	if (!client_init(c, o) && !client_connect(c) &&
	    !client_create_resources(c) && !client_hello(c) &&
	    !client_exchange(c) && !client_bring_up_qp(c)) {
		c->started = true;
		if (!client_run_sizes(c)) {
			cc_timeline_end(c);
			client_done(c);
		}
	}
	cc_timeline_end(c);
	client_cc_snapshot(c);
	if (c->error[0])
		client_abort(c);
	if (o->json)
		client_print_json(c);
	else if (c->started)
		client_print_summary(c);
	fflush(stdout);
	ret = c->error[0] ? EXIT_RUNTIME : 0;
	if (o->cc_timeline && !timeline_finish(o->cc_timeline, &c->cctl, "--cc-timeline",
					       c->cc_err[0] ? c->cc_err :
					       "no data phase began") && !ret)
		ret = EXIT_RUNTIME;
	client_cleanup(c);
	free(c);
	return ret;
}

/* ==================================================================== server timeline */

#define TIMELINE_HEADER		"time_ms,bytes"

/*
 * --timeline: the payload placed in the session's region per millisecond
 * (the rise of the QP's rx_bytes), one row per millisecond from the first
 * BEGIN (row 0 is the millisecond it arrived in) to DONE, zero rows
 * included, so a stall shows as a run of zeros. rx_bytes starts at 0 with
 * the QP and the rows take all of it, so they add up to the session's
 * bytes_received.
 */
static const struct timeline server_timeline = { .header = TIMELINE_HEADER, .cols = 2 };

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
static void timeline_sample(struct timeline *t, struct mrc_qp *qp, uint64_t now)
{
	uint64_t k = 1 + (now - t->row_end_ns) / NSEC_PER_MSEC;

	t->row_end_ns += k * NSEC_PER_MSEC;
	if (!timeline_append_bytes(t, timeline_delta(t, qp)))
		return;
	while (--k && timeline_append_bytes(t, 0))
		;
}

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

/* DONE or the end of the session: the rows up to now, the last partial. */
static void timeline_stop(struct timeline *t, struct mrc_qp *qp)
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

/* ==================================================================== server */

/* Ops [first_op, first_op + ops) are WRITEs of `size` bytes. */
struct size_range {
	uint64_t first_op, ops, size;
};

/* One client, from accept() to close. */
struct session {
	const struct opts *o;
	struct mrc_context *ctx;
	struct ctl_conn ctl;
	struct sockaddr_storage peer;
	char peer_str[ADDR_STR_LEN];
	int family;
	uint64_t deadline_ns;

	struct ctl_msg hello;
	bool imm;
	uint8_t *buf;
	uint64_t len;
	size_t map_len;
	struct mrc_mr *mr;
	struct mrc_cq *cq;
	struct mrc_qp *qp;
	struct mrc_conn_params local, remote;
	uint32_t rq_depth;
	uint64_t next_recv_id;

	struct size_range ranges[MAX_SIZES];
	int n_ranges;
	uint64_t imm_count;
	uint64_t next_imm_op;		/* the op number we expect next */
	bool imm_in_order, imm_len_ok;
	char imm_len_err[CTL_TEXT_LEN];	/* the first byte_len mismatch */

	bool done_pending, done_answered;
	uint64_t done_ops, done_deadline_ns, linger_deadline_ns;
	bool finished;
	char error[ERR_LEN];

	struct timeline tl;		/* --timeline */
};

/*
 * Record the session's first failure and print every one. With
 * `tell_client` the client hears it too (ERROR), unless it is gone.
 */
static int __attribute__((format(printf, 3, 4)))
session_fail(struct session *s, bool tell_client, const char *fmt, ...)
{
	char msg[ERR_LEN];
	struct ctl_msg m;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report("client %s: %s", s->peer_str, msg);
	if (s->error[0])
		return -1;
	copy_text(s->error, sizeof(s->error), msg);
	if (tell_client && ctl_alive(&s->ctl)) {
		ctl_msg_init(&m, CTL_ERROR);
		m.status = EPROTO;
		copy_text(m.text, sizeof(m.text), msg);
		ctl_send(&s->ctl, &m);
	}
	return -1;
}

static int session_ctl_fail(struct session *s, int err, const char *while_doing)
{
	char why[ERR_LEN];

	ctl_describe_error(&s->ctl, err, "client", why, sizeof(why));
	/* A peer that speaks another version deserves to hear ours. */
	return session_fail(s, err == -EPROTONOSUPPORT || err == -EBADMSG,
			    "%s while %s", why, while_doing);
}

static int session_init(struct session *s, const struct opts *o,
			struct mrc_context *ctx, int fd)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->ctx = ctx;
	s->tl = server_timeline;
	ctl_init(&s->ctl, fd);
	s->imm_in_order = true;
	s->imm_len_ok = true;
	s->deadline_ns = now_ns() + HELLO_WAIT_MS * NSEC_PER_MSEC;
	copy_text(s->peer_str, sizeof(s->peer_str), "?");
	ret = socket_peer(fd, &s->peer);
	if (ret)
		return session_fail(s, false, "getpeername: %s", strerror(-ret));
	s->family = s->peer.ss_family;
	addr_str(&s->peer, s->peer_str, sizeof(s->peer_str));
	set_socket_timeouts(fd, EXCHANGE_TIMEOUT_MS);
	report("client %s connected", s->peer_str);
	return 0;
}

static int session_check_hello(struct session *s, const struct ctl_msg *m)
{
	/* A client can fail before HELLO (no plane address of the family). */
	if (m->type == CTL_ABORT)
		return session_fail(s, false, "client aborted: %s",
				    m->text[0] ? m->text : "?");
	if (m->type != CTL_HELLO)
		return session_fail(s, true, "protocol error: %s before HELLO",
				    ctl_type_name(m->type));
	if (!m->length || m->length > MAX_MSG_SIZE)
		return session_fail(s, true, "HELLO asks for a %" PRIu64 "-byte region "
				    "(1..%llu)", m->length, MAX_MSG_SIZE);
	if (!m->depth || m->depth > MAX_SEND_WR)
		return session_fail(s, true, "HELLO has depth %u (1..%d)", m->depth,
				    MAX_SEND_WR);
	if (m->mpr_units < MPR_MIN || m->mpr_units > MPR_MAX ||
	    m->ack_timeout < ACK_TIMEOUT_MIN || m->ack_timeout > ACK_TIMEOUT_MAX ||
	    m->retry_cnt > RETRY_MAX || m->exp_retry_cnt > EXP_RETRY_MAX)
		return session_fail(s, true, "HELLO has QP attributes out of range "
				    "(mpr %u, timeout %u, retry %u, exp-retry %u)",
				    m->mpr_units, m->ack_timeout, m->retry_cnt,
				    m->exp_retry_cnt);
	if (!m->timeout_s || m->timeout_s > MAX_TIMEOUT_S)
		return session_fail(s, true, "HELLO has timeout %u s (1..%d)",
				    m->timeout_s, MAX_TIMEOUT_S);
	return 0;
}

/*
 * Before HELLO the context holds no QP, so there is no transport to drive
 * and a short blocking poll() is fine here (and only here).
 */
static int session_read_hello(struct session *s)
{
	struct pollfd pfd = { .fd = s->ctl.fd, .events = POLLIN };
	int ret;

	for (;;) {
		ret = ctl_poll(&s->ctl, &s->hello);
		if (ret == 1)
			break;
		if (ret < 0)
			return session_ctl_fail(s, ret, "waiting for HELLO");
		if (stop_requested)
			return session_fail(s, true, "interrupted");
		if (now_ns() >= s->deadline_ns)
			return session_fail(s, true, "no HELLO within %d s",
					    HELLO_WAIT_MS / 1000);
		poll(&pfd, 1, 100);
	}
	if (session_check_hello(s, &s->hello))
		return -1;
	s->imm = s->hello.flags & CTL_F_IMM;
	s->len = s->hello.length;
	s->deadline_ns = now_ns() +
		(uint64_t)(s->hello.timeout_s + SESSION_GRACE_S) * NSEC_PER_SEC;
	return 0;
}

static int session_post_recv(struct session *s)
{
	struct mrc_recv_wr wr = { .wr_id = s->next_recv_id++ };
	int ret = mrc_post_recv(s->qp, &wr);

	if (ret)
		return session_fail(s, true, "mrc_post_recv: %s", strerror(-ret));
	return 0;
}

/* Region, MR, CQ, QP and receives as HELLO asked; then HELLO_ACK. */
static int session_create_resources(struct session *s)
{
	struct sockaddr_storage addrs[MRC_MAX_PLANES];
	struct mrc_qp_init_attr qpa;
	struct ctl_msg m;
	uint32_t mtu, i;
	int n, ret;

	n = mrc_local_addrs(s->ctx, s->family, addrs, MRC_MAX_PLANES);
	if (n < 0)
		return session_fail(s, true, "mrc_local_addrs: %s", strerror(-n));
	if (n == 0)
		return session_fail(s, true, "no MRC plane address of this family (%s): "
				    "is mrcd running with --planes?",
				    family_name(s->family));
	if (n > MRC_MAX_PLANES)
		n = MRC_MAX_PLANES;
	/* Unknown here means "no limit from this side": the client's choice
	 * (its --mtu, or its own detection) decides. */
	mtu = detect_path_mtu(&s->peer, s->family, addrs, n);
	if (!mtu)
		mtu = MTU_MAX;

	s->buf = buffer_alloc(s->len, &s->map_len);
	if (!s->buf)
		return session_fail(s, true, "cannot allocate a %" PRIu64 "-byte region: %s",
				    s->len, strerror(errno));
	s->mr = mrc_reg_mr(s->ctx, s->buf, s->len,
			   MRC_ACCESS_REMOTE_WRITE | MRC_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		return session_fail(s, true, "mrc_reg_mr(%" PRIu64 " bytes): %s", s->len,
				    strerror(errno));

	/* Twice the client's depth: a receive is consumed when data lands,
	 * and reposted only when we poll its completion. */
	s->rq_depth = 1;
	if (s->imm)
		s->rq_depth = 2 * s->hello.depth < MAX_RECV_WR ? 2 * s->hello.depth
							       : MAX_RECV_WR;
	s->cq = mrc_create_cq(s->ctx, (int)s->rq_depth + POLL_BATCH);
	if (!s->cq)
		return session_fail(s, true, "mrc_create_cq: %s", strerror(errno));
	memset(&qpa, 0, sizeof(qpa));
	qpa.send_cq = s->cq;
	qpa.recv_cq = s->cq;
	qpa.max_send_wr = 1;	/* the server only receives */
	qpa.max_recv_wr = s->rq_depth;
	qpa.max_sge = 1;
	s->qp = mrc_create_qp(s->ctx, &qpa);
	if (!s->qp)
		return session_fail(s, true, "mrc_create_qp: %s", strerror(errno));
	for (i = 0; s->imm && i < s->rq_depth; i++)
		if (session_post_recv(s))
			return -1;
	fill_conn_params(&s->local, s->qp, addrs, n, mtu, s->mr, s->buf, s->len);

	ctl_msg_init(&m, CTL_HELLO_ACK);
	m.length = s->len;
	ret = ctl_send(&s->ctl, &m);
	if (ret)
		return session_fail(s, false, "cannot send HELLO_ACK: %s", strerror(-ret));
	return 0;
}

static int session_connect_qp(struct session *s)
{
	struct qp_tuning t = {
		.mpr_units = s->hello.mpr_units,
		.ack_timeout = s->hello.ack_timeout,
		.retry_cnt = s->hello.retry_cnt,
		.exp_retry_cnt = s->hello.exp_retry_cnt,
		.imm = s->imm,
		.wimm_out = 1,
		.wimm_in = (uint16_t)s->rq_depth,
		.cc_profile = s->o->cc_profile,
	};
	const char *step;
	char why[ERR_LEN];
	int ret;

	ret = mrc_conn_exchange(s->ctl.fd, &s->local, &s->remote);
	if (ret)
		/* The stream is mid-exchange: an ERROR would only confuse it. */
		return session_fail(s, false, "QP parameter exchange failed: %s",
				    ret == -EAGAIN || ret == -EWOULDBLOCK ? "timed out"
									  : strerror(-ret));
	if (check_peer_params(&s->remote, why, sizeof(why)))
		return session_fail(s, true, "%s", why);
	t.path_mtu = s->local.path_mtu < s->remote.path_mtu ? s->local.path_mtu
							     : s->remote.path_mtu;
	ret = qp_bring_up(s->qp, &s->local, &s->remote, &t, &step);
	if (ret)
		return session_fail(s, true, "mrc_modify_qp(%s): %s", step, strerror(-ret));
	report("client %s: qp %u -> %u, path_mtu %u, %" PRIu64 "-byte region%s",
	       s->peer_str, s->local.qpn, s->remote.qpn, t.path_mtu, s->len,
	       s->imm ? ", immediates" : "");
	return 0;
}

static uint64_t session_size_of_op(const struct session *s, uint64_t op)
{
	int i;

	for (i = 0; i < s->n_ranges; i++)
		if (op >= s->ranges[i].first_op &&
		    op - s->ranges[i].first_op < s->ranges[i].ops)
			return s->ranges[i].size;
	return 0;
}

/*
 * A WRITE-IMM landed: its immediate must be the next op number (the client
 * counts from 0 across the whole run) and its length that op's size.
 */
static void session_check_imm(struct session *s, const struct mrc_wc *wc)
{
	uint64_t op = s->next_imm_op, size;

	if (wc->imm_data != (uint32_t)op) {
		if (s->imm_in_order)
			report("client %s: immediate %u arrived, expected %u",
			       s->peer_str, wc->imm_data, (uint32_t)op);
		s->imm_in_order = false;
		op = (op & ~0xffffffffULL) | wc->imm_data;
	}
	s->next_imm_op = op + 1;
	s->imm_count++;
	size = session_size_of_op(s, op);
	if (wc->byte_len != size && s->imm_len_ok) {
		s->imm_len_ok = false;
		snprintf(s->imm_len_err, sizeof(s->imm_len_err),
			 "op %" PRIu64 " arrived with byte_len %u, expected %" PRIu64,
			 op, wc->byte_len, size);
		report("client %s: %s", s->peer_str, s->imm_len_err);
	}
}

static void session_handle_wc(struct session *s, const struct mrc_wc *wc)
{
	if (wc->status != MRC_WC_SUCCESS) {
		session_fail(s, true, "%s completion failed: %s",
			     wc->opcode == MRC_WC_RECV_WRITE_IMM ? "receive" : "WRITE",
			     status_str(wc->status));
		return;
	}
	if (wc->opcode != MRC_WC_RECV_WRITE_IMM)
		return;
	session_check_imm(s, wc);
	session_post_recv(s);	/* keep rq_depth receives posted */
}

/* Drive libmrc: place data, send SACKs, consume immediates. */
static void session_progress(struct session *s)
{
	struct mrc_wc wc[POLL_BATCH];
	int i, n = mrc_poll_cq(s->cq, POLL_BATCH, wc);

	if (n < 0) {
		session_fail(s, true, "mrc_poll_cq: %s", strerror(-n));
		return;
	}
	for (i = 0; i < n && !s->error[0]; i++)
		session_handle_wc(s, &wc[i]);
	timeline_tick(&s->tl, s->qp);
}

/* Events of our QP end the session; others are leftovers of old ones. */
static void session_check_async_events(struct session *s)
{
	struct mrc_async_event ev;
	int n;

	for (n = 0; n < ASYNC_DRAIN_MAX && mrc_get_async_event(s->ctx, &ev) == 0; n++) {
		if (s->qp && ev.qp_num == s->local.qpn)
			session_fail(s, true, "%s on qp %u: %s", async_event_name(ev.type),
				     ev.qp_num, status_str(ev.status));
		else
			report("async event: %s on qp %u (not this session's): %s",
			       async_event_name(ev.type), ev.qp_num,
			       status_str(ev.status));
	}
}

static int session_reply(struct session *s, struct ctl_msg *m)
{
	int ret;

	m->imm_count = s->imm_count;
	m->flags |= (s->imm_in_order ? CTL_F_IMM_IN_ORDER : 0) |
		    (s->imm_len_ok ? CTL_F_IMM_LEN_OK : 0);
	if (!s->imm_len_ok && !m->text[0])
		copy_text(m->text, sizeof(m->text), s->imm_len_err);
	ret = ctl_send(&s->ctl, m);
	if (ret)
		return session_fail(s, false, "cannot send %s: %s",
				    ctl_type_name(m->type), strerror(-ret));
	return 0;
}

static void session_begin(struct session *s, const struct ctl_msg *req)
{
	struct size_range *r;
	struct ctl_msg m;

	if (s->n_ranges == MAX_SIZES) {
		session_fail(s, true, "more than %d sizes in one run", MAX_SIZES);
		return;
	}
	if (!req->length || req->length > s->len) {
		session_fail(s, true, "BEGIN for %" PRIu64 "-byte WRITEs, HELLO said at "
			     "most %" PRIu64, req->length, s->len);
		return;
	}
	/* The client's first data phase starts: time_ms 0 of --timeline. */
	if (s->o->timeline && !s->tl.started)
		timeline_start(&s->tl, 0);	/* rx_bytes starts at 0 with the QP */
	r = &s->ranges[s->n_ranges++];
	r->first_op = req->offset;
	r->ops = req->ops;
	r->size = req->length;
	ctl_msg_init(&m, CTL_BEGIN_ACK);
	session_reply(s, &m);
}

/* Checksum a range in chunks, polling the CQ between them: hashing 1 GiB
 * takes long enough to starve the transport otherwise. */
static int session_checksum(struct session *s, uint64_t off, uint64_t len,
			    uint64_t *out)
{
	uint64_t h = CSUM_INIT, n;

	while (len) {
		n = len < CHECKSUM_CHUNK ? len : CHECKSUM_CHUNK;
		h = csum_update(h, s->buf + off, n);
		off += n;
		len -= n;
		session_progress(s);
		if (s->error[0])
			return -1;
	}
	*out = h;
	return 0;
}

static void session_verify(struct session *s, const struct ctl_msg *req)
{
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_VERIFY_ACK);
	if (req->offset > s->len || req->length > s->len - req->offset) {
		m.status = ERANGE;
		snprintf(m.text, sizeof(m.text), "bytes [%" PRIu64 ", %" PRIu64
			 ") are outside the %" PRIu64 "-byte region", req->offset,
			 req->offset + req->length, s->len);
	} else if (session_checksum(s, req->offset, req->length, &m.checksum)) {
		return;
	}
	session_reply(s, &m);
}

/* DONE waits for the immediates still on their way, 5 s at most. */
static void session_try_answer_done(struct session *s)
{
	struct ctl_msg m;
	uint64_t now = now_ns();

	if (s->imm && s->imm_count < s->done_ops && now < s->done_deadline_ns)
		return;
	ctl_msg_init(&m, CTL_DONE_ACK);
	if (s->imm && s->imm_count < s->done_ops)
		m.flags |= CTL_F_GAVE_UP;
	s->done_pending = false;
	s->done_answered = true;
	s->linger_deadline_ns = now + LINGER_MS * NSEC_PER_MSEC;
	session_reply(s, &m);
}

static void session_handle_msg(struct session *s, const struct ctl_msg *m)
{
	switch (m->type) {
	case CTL_BEGIN:
		session_begin(s, m);
		break;
	case CTL_VERIFY:
		session_verify(s, m);
		break;
	case CTL_DONE:
		/* Every WRITE completed at the client, so every byte is placed. */
		timeline_stop(&s->tl, s->qp);
		s->done_pending = true;
		s->done_ops = m->ops;
		s->done_deadline_ns = now_ns() + DONE_GRACE_MS * NSEC_PER_MSEC;
		break;
	case CTL_ABORT:
		session_fail(s, false, "client aborted: %s", m->text[0] ? m->text : "?");
		break;
	default:
		session_fail(s, true, "protocol error: unexpected %s",
			     ctl_type_name(m->type));
		break;
	}
}

/* Peek at the control socket: messages, a close, the deadlines. */
static void session_check_control(struct session *s)
{
	struct ctl_msg m;
	int ret = ctl_poll(&s->ctl, &m);

	if (ret == 1) {
		session_handle_msg(s, &m);
	} else if (ret == -ECONNRESET && s->done_answered) {
		s->finished = true;	/* the normal end */
	} else if (ret < 0) {
		session_ctl_fail(s, ret, s->done_pending ? "waiting for immediates"
							 : "the run was going on");
	} else if (stop_requested) {
		session_fail(s, true, "interrupted");
	} else if (s->done_answered && now_ns() >= s->linger_deadline_ns) {
		s->finished = true;	/* answered everything; it may keep its socket */
	} else if (now_ns() >= s->deadline_ns) {
		session_fail(s, true, "session timed out after %u s",
			     s->hello.timeout_s + SESSION_GRACE_S);
	}
}

/*
 * The session's main loop. Polling the CQ is what moves the transport, so
 * it runs all the time; the socket is peeked at every few polls.
 */
static void session_serve(struct session *s)
{
	unsigned int spins = 0;

	while (!s->error[0] && !s->finished) {
		session_progress(s);
		if (s->done_pending && !s->error[0])
			session_try_answer_done(s);
		if (++spins % CTL_PEEK_EVERY == 0 && !s->error[0]) {
			session_check_async_events(s);
			if (!s->error[0])
				session_check_control(s);
		}
	}
}

static void session_report(struct session *s)
{
	struct mrc_qp_counters cnt;
	bool modified;
	int ret;

	memset(&cnt, 0, sizeof(cnt));
	if (s->qp) {
		session_check_async_events(s);
		ret = mrc_qp_counters(s->qp, &cnt);
		if (ret)
			report("client %s: mrc_qp_counters: %s", s->peer_str, strerror(-ret));
	}
	modified = s->buf && buffer_is_modified(s->buf, s->len);

	fprintf(stderr, PROG ": client %s: %" PRIu64 " bytes received, %" PRIu64
		" immediates%s, region %s: %s\n", s->peer_str, (uint64_t)cnt.rx_bytes,
		s->imm_count, s->imm_in_order ? "" : " OUT OF ORDER",
		modified ? "modified" : "untouched", s->error[0] ? s->error : "ok");
	if (!s->o->json)
		return;
	printf("{\"client\": ");
	json_string(stdout, s->peer_str);
	printf(", \"bytes_received\": %" PRIu64 ", \"imm_received\": %" PRIu64
	       ", \"imm_in_order\": %s, \"region_modified\": %s"
	       ", \"timeline_t0_ns\": %" PRIu64 ", \"error\": ",
	       (uint64_t)cnt.rx_bytes, s->imm_count, s->imm_in_order ? "true" : "false",
	       modified ? "true" : "false", s->tl.t0_ns);
	json_error(stdout, s->error);
	printf("}\n");
	fflush(stdout);
}

static void session_cleanup(struct session *s)
{
	int ret;

	if (s->qp && (ret = mrc_destroy_qp(s->qp)))
		report("client %s: mrc_destroy_qp: %s", s->peer_str, strerror(-ret));
	if (s->cq && (ret = mrc_destroy_cq(s->cq)))
		report("client %s: mrc_destroy_cq: %s", s->peer_str, strerror(-ret));
	if (s->mr && (ret = mrc_dereg_mr(s->mr)))
		report("client %s: mrc_dereg_mr: %s", s->peer_str, strerror(-ret));
	if (s->buf)
		munmap(s->buf, s->map_len);
	if (s->ctl.fd >= 0)
		close(s->ctl.fd);
	free(s->tl.rows);
	/* Whatever the dead QP still reports must not blame the next client. */
	print_async_events(s->ctx);
}

/* --timeline after the session (see timeline_finish). */
static bool session_write_timeline(struct session *s)
{
	char who[ADDR_STR_LEN + 32];

	snprintf(who, sizeof(who), "client %s: timeline", s->peer_str);
	return timeline_finish(s->o->timeline, &s->tl, who, "no data phase began");
}

/* Serve one client to the end; false if its session failed. */
static bool serve_client(const struct opts *o, struct mrc_context *ctx, int fd)
{
	struct session *s = calloc(1, sizeof(*s));
	char why[ERR_LEN];
	bool ok, tl_ok = true;

	if (!s) {
		report("out of memory");
		close(fd);
		return false;
	}
	/* --timeline holds the most recent session: no stale rows meanwhile. */
	if (o->timeline && timeline_write(o->timeline, &server_timeline, why, sizeof(why))) {
		report("timeline: %s", why);
		tl_ok = false;
	}
	if (!session_init(s, o, ctx, fd) && !session_read_hello(s) &&
	    !session_create_resources(s) && !session_connect_qp(s))
		session_serve(s);
	if (s->qp)
		timeline_stop(&s->tl, s->qp);	/* no DONE: it ends here */
	session_report(s);
	if (o->timeline && !session_write_timeline(s))
		tl_ok = false;
	ok = !s->error[0] && tl_ok;
	session_cleanup(s);
	free(s);
	return ok;
}

/* The next client's socket, -1 on a fatal error, -2 when asked to stop. */
static int server_accept(int lfd)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int fd, n;

	while (!stop_requested) {
		n = poll(&pfd, 1, ACCEPT_POLL_MS);
		if (n < 0 && errno != EINTR) {
			report("poll: %s", strerror(errno));
			return -1;
		}
		if (n <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			return fd;
		/* The client may have given up between poll() and accept(). */
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
		    errno == ECONNABORTED || errno == EPROTO)
			continue;
		report("accept: %s", strerror(errno));
		return -1;
	}
	return -2;
}

static int run_server(const struct opts *o)
{
	char why[ERR_LEN];
	struct mrc_context *ctx;
	int lfd, fd, ret = 0, flags;

	/* A FILE we cannot write is a mistake on the command line: say so
	 * now, not after the first client. */
	if (o->timeline && timeline_write(o->timeline, &server_timeline, why, sizeof(why))) {
		report("--timeline: %s", why);
		return EXIT_USAGE;
	}
	ctx = open_context(o->pin_dir, why, sizeof(why));
	if (!ctx) {
		report("%s", why);
		return EXIT_RUNTIME;
	}
	lfd = mrc_conn_listen(o->port);
	if (lfd < 0) {
		report("cannot listen on TCP port %u: %s", o->port, strerror(-lfd));
		mrc_close(ctx);
		return EXIT_RUNTIME;
	}
	/* Non-blocking, so a client that vanishes before accept() cannot
	 * leave us stuck in it. */
	flags = fcntl(lfd, F_GETFL);
	if (flags >= 0)
		fcntl(lfd, F_SETFL, flags | O_NONBLOCK);
	report("server listening on TCP port %u", o->port);

	for (;;) {
		fd = server_accept(lfd);
		if (fd == -2)
			break;	/* SIGINT/SIGTERM: a normal end */
		if (fd < 0) {
			ret = EXIT_RUNTIME;
			break;
		}
		if (!serve_client(o, ctx, fd) && o->once)
			ret = EXIT_RUNTIME;
		if (o->once || stop_requested)
			break;
	}
	close(lfd);
	mrc_close(ctx);
	return ret;
}

int main(int argc, char **argv)
{
	struct opts o;

	parse_args(argc, argv, &o);
	install_signal_handlers();
	return o.server ? run_server(&o) : run_client(&o);
}
