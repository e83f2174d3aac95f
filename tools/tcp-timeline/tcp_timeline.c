// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-tcp-timeline: one TCP or MPTCP stream of a deterministic byte
 * pattern, verified byte for byte by the server, with the bytes received
 * per millisecond as CSV (the format of `mrc-perf server --timeline`), so
 * TCP and MPTCP runs can be compared with MRC runs on the same lab.
 *
 *   mrc-tcp-timeline server [--port P] [--mptcp] [--timeline FILE] [--once]
 *       [--json] [--timeout-s S]
 *   mrc-tcp-timeline client HOST [--port P] [--mptcp] --bytes N [--json]
 *       [--sport PORT] [--bind ADDR] [--timeout-s S] [--msg-size S [--depth D]]
 *   mrc-tcp-timeline now
 *
 * Wire protocol (one connection = one session):
 *   client -> server: "MRCTTL01" + u64 BE byte count N, then N bytes of
 *                     pattern (byte i = byte i%8 of the LE word w(i/8));
 *                     message mode: "MRCTTM01" + u64 BE N + u64 BE message
 *                     size S, then the same N bytes
 *   server -> client: message mode only, while the data arrives: u64 BE
 *                     (1 << 63 | M) each time the count M of messages whose
 *                     every byte arrived and was checked grows (cumulative;
 *                     the last message may be shorter than S)
 *   server -> client: "MRCTTL01" + u64 BE bytes received + u64 BE flags
 *                     (bit 0: verified); the server then waits for one
 *                     byte from the client before it closes, so the
 *                     server ends in TIME_WAIT and the client's port can
 *                     be reused at once (benchmarks pin the source port to
 *                     pin the ECMP path). An ack record has its top bit
 *                     set, the verdict's first byte ('M') does not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <endian.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/mptcp.h>
#include <linux/tcp.h>

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

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void usage(FILE *f)
{
	fputs(
"Usage:\n"
"  " PROG " server [--port P] [--mptcp] [--timeline FILE] [--once] [--json]\n"
"      [--timeout-s S]\n"
"  " PROG " client HOST [--port P] [--mptcp] --bytes N [--json] [--sport PORT]\n"
"      [--bind ADDR] [--timeout-s S] [--msg-size S [--depth D]]\n"
"  " PROG " now\n"
"  " PROG " --help\n"
"\n"
"One TCP (or MPTCP) connection carries N bytes of a deterministic pattern\n"
"from the client to the server, which checks every byte and records the\n"
"bytes received per millisecond.\n"
"\n"
"server:\n"
"  --port P        TCP port to listen on (default 18600), IPv6 and IPv4\n"
"  --mptcp         listen with IPPROTO_MPTCP (plain TCP clients still work)\n"
"  --timeline FILE CSV 'time_ms,bytes': payload bytes received per ms, one\n"
"                  row per ms (0 where nothing arrived) from the ms of the\n"
"                  first payload byte (time_ms 0) to the last; the latest\n"
"                  session\n"
"  --once          serve one client, then exit (0 verified, 1 otherwise)\n"
"  --json          one JSON line per session on stdout: bytes, expected,\n"
"                  verified, seconds, gbps, t0_ns (CLOCK_MONOTONIC of the\n"
"                  first byte), mptcp, error\n"
"  --timeout-s S   a session is abandoned after S s; with --once the server\n"
"                  also gives up if no client came within S s (default 120)\n"
"client:\n"
"  --bytes N       payload bytes, k/m/g suffixes (binary), required\n"
"  --mptcp         connect with IPPROTO_MPTCP; exit 1 if the kernel has no\n"
"                  MPTCP (net.mptcp.enabled=0)\n"
"  --sport PORT    bind this source port (pins the ECMP path)\n"
"  --bind ADDR     bind this source address\n"
"  --json          one JSON object on stdout: bytes, seconds, gbps,\n"
"                  verified (the server's verdict), mptcp, subflows,\n"
"                  subflow_list (local, remote, bytes_acked, retrans)\n"
"  --timeout-s S   give up after S seconds (default 120)\n"
"  --msg-size S    message mode: the N bytes go as messages of S bytes (k/m/g;\n"
"                  the last one may be shorter), at most D unacknowledged;\n"
"                  the server acknowledges each message once all its bytes\n"
"                  arrived and were checked. A message is posted as soon as\n"
"                  fewer than D are unacknowledged (the first D at once) and\n"
"                  completes when the client reads its ack: its completion\n"
"                  time includes the wait behind earlier messages, as\n"
"                  mrc-perf's per-WRITE latency (post to completion, --depth\n"
"                  D) does. Both ends set TCP_NODELAY. --json adds msg_size,\n"
"                  depth, ops, lat_p50_us, lat_p99_us, lat_max_us\n"
"  --depth D       messages outstanding, 1..512 (default 16, as mrc-perf)\n"
"now:             print CLOCK_MONOTONIC in ns (the clock of t0_ns, of\n"
"                 mrcctl events' time_ns and of mrc-perf's timelines)\n"
"Exit status: 0 ok, 1 run-time failure (or data not verified), 2 usage.\n",
	      f);
}

static void __attribute__((noreturn)) usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\ntry '" PROG " --help'\n", stderr);
	exit(2);
}

/* ---------------------------------------------------------------- parsing */

static bool parse_u64_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	case 't': case 'T': mul = 1ull << 40; end++; break;
	default: break;
	}
	if (*end || (v && mul > UINT64_MAX / v))
		return false;
	*out = v * mul;
	return true;
}

static unsigned int parse_uint(const char *opt, const char *s, unsigned int lo,
			       unsigned int hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		usage_error("%s: expected a number in %u..%u, got '%s'", opt, lo, hi, s);
	return (unsigned int)v;
}

enum { OPT_PORT = 256, OPT_MPTCP, OPT_JSON, OPT_TIMEOUT, OPT_TIMELINE, OPT_ONCE,
       OPT_BYTES, OPT_SPORT, OPT_BIND, OPT_MSG_SIZE, OPT_DEPTH };

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, OPT_PORT },
		{ "mptcp", no_argument, NULL, OPT_MPTCP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "timeout-s", required_argument, NULL, OPT_TIMEOUT },
		{ "timeline", required_argument, NULL, OPT_TIMELINE },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "bytes", required_argument, NULL, OPT_BYTES },
		{ "sport", required_argument, NULL, OPT_SPORT },
		{ "bind", required_argument, NULL, OPT_BIND },
		{ "msg-size", required_argument, NULL, OPT_MSG_SIZE },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	o->port = DEFAULT_PORT;
	o->timeout_s = DEFAULT_TIMEOUT;
	o->depth = DEFAULT_DEPTH;
	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		bool srv_only = c == OPT_TIMELINE || c == OPT_ONCE;
		bool cli_only = c == OPT_BYTES || c == OPT_SPORT || c == OPT_BIND ||
				c == OPT_MSG_SIZE || c == OPT_DEPTH;

		if ((srv_only && !o->server) || (cli_only && !o->client))
			usage_error("%s: not an option of '%s'", argv[optind - 1],
				    o->server ? "server" : "client");
		switch (c) {
		case OPT_PORT: o->port = parse_uint("--port", optarg, 1, 65535); break;
		case OPT_MPTCP: o->mptcp = true; break;
		case OPT_JSON: o->json = true; break;
		case OPT_TIMEOUT:
			o->timeout_s = parse_uint("--timeout-s", optarg, 1, 86400);
			break;
		case OPT_TIMELINE:
			if (!*optarg)
				usage_error("--timeline: empty path");
			o->timeline = optarg;
			break;
		case OPT_ONCE: o->once = true; break;
		case OPT_BYTES:
			if (!parse_u64_size(optarg, &o->bytes) || !o->bytes ||
			    o->bytes > (1ull << 44))
				usage_error("--bytes: expected 1..16t with optional k/m/g/t, got '%s'",
					    optarg);
			o->have_bytes = true;
			break;
		case OPT_SPORT: o->sport = parse_uint("--sport", optarg, 1, 65535); break;
		case OPT_BIND: o->bind_addr = optarg; break;
		case OPT_MSG_SIZE:
			if (!parse_u64_size(optarg, &o->msg_size) || !o->msg_size ||
			    o->msg_size > (1ull << 40))
				usage_error("--msg-size: expected 1..1t with optional k/m/g/t, got '%s'",
					    optarg);
			break;
		case OPT_DEPTH:
			o->depth = parse_uint("--depth", optarg, 1, MAX_DEPTH);
			o->have_depth = true;
			break;
		case 'h': usage(stdout); exit(0);
		case ':':
			usage_error("%s needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (o->client) {
		if (optind >= argc)
			usage_error("client: HOST is required");
		o->host = argv[optind++];
		if (!o->have_bytes)
			usage_error("client: --bytes N is required");
		if (o->have_depth && !o->msg_size)
			usage_error("--depth needs --msg-size");
		if (o->msg_size && (o->bytes + o->msg_size - 1) / o->msg_size > MAX_MSGS)
			usage_error("--msg-size: more than %u messages in --bytes", MAX_MSGS);
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
}

/* ---------------------------------------------------------------- pattern */

/* Word i of the stream: a bijection of i, so every word differs and a
 * misplaced or repeated block never matches. */
static inline uint64_t pattern_word(uint64_t i)
{
	uint64_t x = i * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;

	return x ^ (x >> 29);
}

/* buf := bytes [off, off + len) of the stream. */
static void pattern_fill(uint8_t *buf, uint64_t off, size_t len)
{
	uint64_t w = off / 8, le;
	size_t skip = off % 8, n;

	if (skip) {
		le = htole64(pattern_word(w++));
		n = 8 - skip < len ? 8 - skip : len;
		memcpy(buf, (uint8_t *)&le + skip, n);
		buf += n;
		len -= n;
	}
	while (len >= 8) {
		le = htole64(pattern_word(w++));
		memcpy(buf, &le, 8);
		buf += 8;
		len -= 8;
	}
	if (len) {
		le = htole64(pattern_word(w));
		memcpy(buf, &le, len);
	}
}

/* The index i of the word pattern_word(i) == w: the multiply and the
 * xorshift are both invertible mod 2^64. */
static uint64_t pattern_index(uint64_t w)
{
	uint64_t x = w ^ (w >> 29) ^ (w >> 58), inv = 0x9e3779b97f4a7c15ull;
	int k;

	/* Newton's iteration for the inverse of an odd number mod 2^64. */
	for (k = 0; k < 5; k++)
		inv *= 2 - 0x9e3779b97f4a7c15ull * inv;
	return (x - 0x632be59bd9b4e019ull) * inv;
}

/* What a wrong run of bytes at buf[0..len) holds: stream bytes from
 * another offset (misplaced or repeated data) or foreign bytes. Writes
 * " (...)" into out. Looks at the first 8-byte word that could be aligned
 * to the stream and confirms a match over up to 64 bytes. */
static void pattern_explain(const uint8_t *buf, size_t len, uint64_t stream_len,
			    char *out, size_t outlen)
{
	uint8_t want[64];
	size_t k, n;
	uint64_t le, src;

	for (k = 0; k < 8 && k + 8 <= len; k++) {
		memcpy(&le, buf + k, 8);
		src = pattern_index(le64toh(le));
		if (src >= stream_len / 8 + 1 || src * 8 < k)
			continue;
		src = src * 8 - k;	/* the stream offset of buf[0] */
		n = len < sizeof(want) ? len : sizeof(want);
		pattern_fill(want, src, n);
		if (!memcmp(buf, want, n)) {
			snprintf(out, outlen, " (it holds the stream's bytes from "
				 "offset %" PRIu64 ": misplaced data)", src);
			return;
		}
	}
	snprintf(out, outlen, " (not bytes of the stream)");
}

/* -1 if buf holds bytes [off, off + len) of the stream, else the offset
 * (relative to buf) of the first wrong byte. */
static ssize_t pattern_check(const uint8_t *buf, uint64_t off, size_t len,
			     uint8_t *scratch)
{
	size_t i;

	pattern_fill(scratch, off, len);
	if (!memcmp(buf, scratch, len))
		return -1;
	for (i = 0; i < len && buf[i] == scratch[i]; i++)
		;
	return (ssize_t)i;
}

/* ---------------------------------------------------------------- sockets */

static void put_be64(uint8_t *p, uint64_t v)
{
	v = htobe64(v);
	memcpy(p, &v, 8);
}

static uint64_t get_be64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return be64toh(v);
}

static bool mptcp_unsupported(int err)
{
	return err == EPROTONOSUPPORT || err == EINVAL || err == ENOPROTOOPT ||
	       err == ESOCKTNOSUPPORT || err == EPROTOTYPE;
}

static int make_socket(int family, bool mptcp)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, mptcp ? IPPROTO_MPTCP : 0);

	if (fd < 0 && mptcp && mptcp_unsupported(errno))
		report("MPTCP is not available (socket(IPPROTO_MPTCP): %s); is "
		       "net.mptcp.enabled=1 and the kernel built with MPTCP?",
		       strerror(errno));
	else if (fd < 0)
		report("socket: %s", strerror(errno));
	return fd;
}

static const char *addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned int port = 0;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s = (const void *)sa;

		inet_ntop(AF_INET, &s->sin_addr, host, sizeof(host));
		port = ntohs(s->sin_port);
		snprintf(buf, len, "%s:%u", host, port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s = (const void *)sa;

		if (IN6_IS_ADDR_V4MAPPED(&s->sin6_addr)) {
			inet_ntop(AF_INET, &s->sin6_addr.s6_addr[12], host, sizeof(host));
			snprintf(buf, len, "%s:%u", host, ntohs(s->sin6_port));
		} else {
			inet_ntop(AF_INET6, &s->sin6_addr, host, sizeof(host));
			snprintf(buf, len, "[%s]:%u", host, ntohs(s->sin6_port));
		}
	} else {
		snprintf(buf, len, "?");
	}
	return buf;
}

/* Wait until fd is ready for `events` or `deadline` (CLOCK_MONOTONIC ns)
 * passes; 1 ready, 0 timed out or stopped, -1 error. */
static int wait_fd(int fd, short events, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = events };
	uint64_t now;
	int r, ms;

	for (;;) {
		if (stop_flag)
			return 0;
		now = now_ns();
		if (now >= deadline)
			return 0;
		ms = (int)((deadline - now) / NSEC_PER_MSEC) + 1;
		if (ms > 200)
			ms = 200;	/* look at stop_flag now and then */
		r = poll(&p, 1, ms);
		if (r > 0)
			return 1;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* Read exactly len bytes before deadline; 0 ok, -1 error/EOF/timeout
 * (errno: 0 for EOF, ETIMEDOUT). */
static int read_full(int fd, void *buf, size_t len, uint64_t deadline)
{
	uint8_t *p = buf;
	ssize_t n;
	int r;

	while (len) {
		r = wait_fd(fd, POLLIN, deadline);
		if (r <= 0) {
			if (r == 0)
				errno = ETIMEDOUT;
			return -1;
		}
		n = recv(fd, p, len, MSG_DONTWAIT);
		if (n == 0) {
			errno = 0;
			return -1;
		}
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len, uint64_t deadline)
{
	const uint8_t *p = buf;
	ssize_t n;
	int r;

	while (len) {
		r = wait_fd(fd, POLLOUT, deadline);
		if (r <= 0) {
			if (r == 0)
				errno = ETIMEDOUT;
			return -1;
		}
		n = send(fd, p, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static bool is_mptcp_conn(int fd)
{
	int v = 0;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, IPPROTO_TCP, TCP_IS_MPTCP, &v, &l))
		return false;
	return v != 0;
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

/* ---------------------------------------------------------------- server */

struct timeline {
	uint64_t *rows;
	size_t n, cap;
	bool full, nomem;
};

/* Add `bytes` to the row of millisecond `ms`, zero rows before it. */
static void timeline_add(struct timeline *t, uint64_t ms, uint64_t bytes)
{
	if (ms >= TIMELINE_MAX_ROWS) {
		t->full = true;
		return;
	}
	if (ms >= t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		uint64_t *rows;

		while (cap <= ms)
			cap *= 2;
		if (cap > TIMELINE_MAX_ROWS)
			cap = TIMELINE_MAX_ROWS;
		rows = realloc(t->rows, cap * sizeof(*rows));
		if (!rows) {
			t->nomem = true;
			return;
		}
		t->rows = rows;
		t->cap = cap;
	}
	while (t->n <= ms)
		t->rows[t->n++] = 0;
	t->rows[ms] += bytes;
}

static int timeline_write(const char *path, const struct timeline *t)
{
	FILE *f = fopen(path, "we");
	size_t i;
	int err;

	if (!f) {
		report("timeline: %s: %s", path, strerror(errno));
		return -1;
	}
	fputs("time_ms,bytes\n", f);
	for (i = 0; t && i < t->n; i++)
		fprintf(f, "%zu,%" PRIu64 "\n", i, t->rows[i]);
	err = ferror(f);
	if (fclose(f) || err) {
		report("timeline: writing %s failed", path);
		return -1;
	}
	return 0;
}

struct session {
	char peer[INET6_ADDRSTRLEN + 16];
	uint64_t expected, received, t0, t_last, msg_size;
	bool verified, mptcp;
	char error[256];
};

static void session_json(const struct session *s)
{
	double secs = s->t_last > s->t0 ? (double)(s->t_last - s->t0) / 1e9 : 0;

	printf("{\"peer\": ");
	json_string(stdout, s->peer);
	printf(", \"bytes\": %" PRIu64 ", \"expected\": %" PRIu64 ", \"verified\": %s, "
	       "\"seconds\": %.6f, \"gbps\": %.6f, \"t0_ns\": %" PRIu64 ", \"mptcp\": %s, "
	       "\"msg_size\": %" PRIu64 ", \"error\": ",
	       s->received, s->expected, s->verified ? "true" : "false", secs,
	       secs > 0 ? (double)s->received * 8 / secs / 1e9 : 0.0, s->t0,
	       s->mptcp ? "true" : "false", s->msg_size);
	if (s->error[0])
		json_string(stdout, s->error);
	else
		fputs("null", stdout);
	printf("}\n");
	fflush(stdout);
}

/* One client, start to end. Returns true if the data was complete and right. */
static bool serve_one(const struct opts *o, int fd, struct session *s,
		      uint8_t *buf, uint8_t *scratch)
{
	uint64_t deadline = now_ns() + (uint64_t)o->timeout_s * NSEC_PER_SEC;
	struct timeline tl = { 0 };
	uint8_t hdr[HDR_MSG_LEN], reply[REPLY_LEN];
	size_t hdr_have = 0, hdr_need = HDR_LEN;
	bool bad = false, done = false, overflow = false, hdr_ok = false;
	uint64_t off = 0, msgs_acked = 0;
	ssize_t n, at;
	int r, one = 1;

	s->mptcp = is_mptcp_conn(fd);
	while (!done) {
		r = wait_fd(fd, POLLIN, deadline);
		if (r <= 0) {
			snprintf(s->error, sizeof(s->error), "%s after %" PRIu64 " of %"
				 PRIu64 " bytes", r == 0 ? (stop_flag ? "stopped" : "timed out")
				 : strerror(errno), s->received, s->expected);
			break;
		}
		n = recv(fd, buf, IO_SIZE, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			snprintf(s->error, sizeof(s->error), "recv: %s after %" PRIu64
				 " of %" PRIu64 " bytes", strerror(errno), s->received,
				 s->expected);
			break;
		}
		if (n == 0) {
			snprintf(s->error, sizeof(s->error), "connection closed after %"
				 PRIu64 " of %" PRIu64 " bytes", s->received, s->expected);
			break;
		}
		s->t_last = now_ns();
		uint8_t *p = buf;
		size_t len = (size_t)n;

		while (!hdr_ok && len) {
			size_t k = hdr_need - hdr_have < len ? hdr_need - hdr_have : len;

			memcpy(hdr + hdr_have, p, k);
			hdr_have += k;
			p += k;
			len -= k;
			if (hdr_have < hdr_need)
				break;
			if (hdr_need == HDR_LEN && !memcmp(hdr, MAGIC_MSG, 8)) {
				hdr_need = HDR_MSG_LEN;	/* S follows */
				continue;
			}
			if (hdr_need == HDR_LEN && memcmp(hdr, MAGIC, 8)) {
				snprintf(s->error, sizeof(s->error),
					 "not a " PROG " client (bad magic)");
				bad = true;
				break;
			}
			hdr_ok = true;
			s->expected = get_be64(hdr + 8);
			if (hdr_need == HDR_MSG_LEN) {
				s->msg_size = get_be64(hdr + 16);
				if (!s->msg_size) {
					snprintf(s->error, sizeof(s->error),
						 "message mode with messages of 0 bytes");
					bad = true;
					break;
				}
				/* Acks are tiny and must not wait for Nagle. */
				setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			}
		}
		if (bad)
			break;
		if (!hdr_ok)
			continue;
		if (!s->expected) {
			done = true;
			break;
		}
		if (!len)
			continue;
		if (!s->t0)
			s->t0 = s->t_last;	/* time_ms 0: the first payload byte */
		if (len > s->expected - off) {
			snprintf(s->error, sizeof(s->error), "client sent more than the "
				 "%" PRIu64 " bytes it announced", s->expected);
			bad = overflow = true;
			len = (size_t)(s->expected - off);
		}
		if (o->timeline)
			timeline_add(&tl, (s->t_last - s->t0) / NSEC_PER_MSEC, len);
		if (len) {
			at = pattern_check(p, off, len, scratch);
			if (at >= 0 && !bad) {
				char why[96];

				pattern_explain(p + at, len - (size_t)at, s->expected,
						why, sizeof(why));
				snprintf(s->error, sizeof(s->error), "byte %" PRIu64
					 " differs from the pattern%s", off + (uint64_t)at, why);
				bad = true;
			}
		}
		off += len;
		s->received = off;
		if (overflow)
			break;
		if (off == s->expected)
			done = true;
		if (s->msg_size) {
			/* Messages whose every byte is here and checked. */
			uint64_t m = done ? (s->expected + s->msg_size - 1) / s->msg_size
					  : off / s->msg_size;
			uint8_t ack[8];

			if (m > msgs_acked) {
				put_be64(ack, ACK_FLAG | m);
				if (write_full(fd, ack, sizeof(ack), deadline)) {
					snprintf(s->error, sizeof(s->error), "sending an ack: %s",
						 errno ? strerror(errno) : "timed out");
					done = false;
					break;
				}
				msgs_acked = m;
			}
		}
	}
	if (hdr_ok && s->expected == 0)
		done = true;
	s->verified = done && !bad;

	/* The verdict, then wait for the client's goodbye before closing. */
	memcpy(reply, MAGIC, 8);
	put_be64(reply + 8, s->received);
	put_be64(reply + 16, s->verified ? 1 : 0);
	if (hdr_ok && !write_full(fd, reply, sizeof(reply),
					       now_ns() + 5 * NSEC_PER_SEC)) {
		uint8_t bye;

		(void)read_full(fd, &bye, 1, now_ns() + 5 * NSEC_PER_SEC);
	}
	if (o->timeline) {
		if (tl.full)
			report("timeline: the session outlasted %u ms; later ms are "
			       "not in it", TIMELINE_MAX_ROWS);
		if (tl.nomem)
			report("timeline: out of memory; rows are missing");
		if (timeline_write(o->timeline, &tl) && s->verified) {
			snprintf(s->error, sizeof(s->error), "timeline not written");
		}
	}
	free(tl.rows);
	return s->verified;
}

static int run_server(const struct opts *o)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_port = htons(o->port),
				   .sin6_addr = IN6ADDR_ANY_INIT };
	uint8_t *buf = malloc(IO_SIZE), *scratch = malloc(IO_SIZE);
	int lfd, one = 1, zero = 0, status = 0;
	uint64_t start = now_ns();

	if (!buf || !scratch) {
		report("out of memory");
		return 1;
	}
	/* Fail at start, not after a transfer, if the file cannot be written. */
	if (o->timeline && timeline_write(o->timeline, NULL))
		return 2;
	lfd = make_socket(AF_INET6, o->mptcp);
	if (lfd < 0)
		return 1;
	setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	setsockopt(lfd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	if (bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) || listen(lfd, 8)) {
		report("listen on port %u: %s", o->port, strerror(errno));
		close(lfd);
		return 1;
	}
	report("listening on port %u (%s)", o->port, o->mptcp ? "MPTCP" : "TCP");
	for (;;) {
		struct sockaddr_storage peer;
		socklen_t plen = sizeof(peer);
		struct session s = { 0 };
		uint64_t deadline = o->once ? start + (uint64_t)o->timeout_s * NSEC_PER_SEC
					    : UINT64_MAX;
		int r, fd;

		r = wait_fd(lfd, POLLIN, deadline);
		if (r <= 0) {
			if (stop_flag) {
				report("stopped");
				status = o->once ? 1 : status;
			} else {
				report("no client within %u s", o->timeout_s);
				status = 1;
			}
			break;
		}
		fd = accept4(lfd, (struct sockaddr *)&peer, &plen, SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
				continue;
			report("accept: %s", strerror(errno));
			status = 1;
			break;
		}
		addr_str((struct sockaddr *)&peer, s.peer, sizeof(s.peer));
		report("client %s connected", s.peer);
		serve_one(o, fd, &s, buf, scratch);
		close(fd);
		report("client %s: %" PRIu64 " of %" PRIu64 " bytes, %s%s%s", s.peer,
		       s.received, s.expected, s.verified ? "verified" : "NOT verified",
		       s.error[0] ? ": " : "", s.error);
		if (o->json)
			session_json(&s);
		if (o->once) {
			status = s.verified ? 0 : 1;
			break;
		}
		if (stop_flag)
			break;
	}
	close(lfd);
	free(buf);
	free(scratch);
	return status;
}

/* ---------------------------------------------------------------- client */

struct subflow {
	char local[INET6_ADDRSTRLEN + 16], remote[INET6_ADDRSTRLEN + 16];
	uint64_t bytes_acked, bytes_sent;
	uint32_t retrans;
};

/* The subflows of an MPTCP socket with their addresses and byte counts;
 * the number found, 0 if not MPTCP or the kernel cannot tell. */
static int mptcp_subflows(int fd, struct subflow *out, int max)
{
	struct {
		struct mptcp_subflow_data d;
		struct mptcp_subflow_addrs a[MAX_SUBFLOWS];
	} addrs;
	struct {
		struct mptcp_subflow_data d;
		struct tcp_info t[MAX_SUBFLOWS];
	} infos;
	socklen_t len;
	unsigned int i, n;

	memset(&addrs, 0, sizeof(addrs));
	addrs.d.size_subflow_data = sizeof(addrs.d);
	addrs.d.size_user = sizeof(addrs.a[0]);
	len = sizeof(addrs);
	if (getsockopt(fd, SOL_MPTCP, MPTCP_SUBFLOW_ADDRS, &addrs, &len))
		return 0;
	memset(&infos, 0, sizeof(infos));
	infos.d.size_subflow_data = sizeof(infos.d);
	infos.d.size_user = sizeof(infos.t[0]);
	len = sizeof(infos);
	if (getsockopt(fd, SOL_MPTCP, MPTCP_TCPINFO, &infos, &len))
		infos.d.num_subflows = 0;
	n = addrs.d.num_subflows;
	if (n > (unsigned int)max)
		n = (unsigned int)max;
	for (i = 0; i < n; i++) {
		struct subflow *f = &out[i];

		memset(f, 0, sizeof(*f));
		addr_str(&addrs.a[i].sa_local, f->local, sizeof(f->local));
		addr_str(&addrs.a[i].sa_remote, f->remote, sizeof(f->remote));
		if (i < infos.d.num_subflows && i < MAX_SUBFLOWS) {
			f->bytes_acked = infos.t[i].tcpi_bytes_acked;
			f->bytes_sent = infos.t[i].tcpi_bytes_sent;
			f->retrans = infos.t[i].tcpi_total_retrans;
		}
	}
	return (int)n;
}

static int client_connect(const struct opts *o, uint64_t deadline)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res, *ai;
	char port[8];
	int fd = -1, r, err = 0, one = 1;

	snprintf(port, sizeof(port), "%u", o->port);
	r = getaddrinfo(o->host, port, &hints, &res);
	if (r) {
		report("%s: %s", o->host, gai_strerror(r));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = make_socket(ai->ai_family, o->mptcp);
		if (fd < 0) {
			if (o->mptcp && mptcp_unsupported(errno))
				break;
			continue;
		}
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (o->bind_addr || o->sport) {
			struct addrinfo bh = { .ai_family = ai->ai_family,
					       .ai_socktype = SOCK_STREAM,
					       .ai_flags = AI_PASSIVE | AI_NUMERICHOST },
					*b;
			char sp[8];

			snprintf(sp, sizeof(sp), "%u", o->sport);
			r = getaddrinfo(o->bind_addr, sp, &bh, &b);
			if (r) {
				report("--bind %s: %s", o->bind_addr ? o->bind_addr : "", gai_strerror(r));
				close(fd);
				fd = -1;
				break;
			}
			r = bind(fd, b->ai_addr, b->ai_addrlen);
			err = errno;
			freeaddrinfo(b);
			if (r) {
				report("bind to %s port %u: %s", o->bind_addr ? o->bind_addr : "*",
				       o->sport, strerror(err));
				close(fd);
				fd = -1;
				break;
			}
		}
		/* Non-blocking connect, bounded by the deadline. */
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
		r = connect(fd, ai->ai_addr, ai->ai_addrlen);
		if (r && errno == EINPROGRESS) {
			socklen_t l = sizeof(err);

			r = wait_fd(fd, POLLOUT, deadline);
			if (r == 1 && !getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l) && !err)
				r = 0;
			else
				errno = r == 1 ? err : ETIMEDOUT, r = -1;
		}
		if (!r)
			break;
		err = errno;
		report("connect to %s port %u: %s", o->host, o->port, strerror(err));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* Message mode (--msg-size): the client's view of the outstanding messages. */
struct msg_state {
	uint64_t *lat;		/* completion time of each message, ns */
	uint64_t *post;		/* message k posted: in slot k % depth */
	uint64_t nmsg, acked;	/* messages in all, acknowledged so far */
	uint8_t rbuf[32];	/* bytes from the server not parsed yet */
	size_t rlen;
};

/* Consume the ack records at the head of m->rbuf: 1 when what follows is
 * the verdict (top bit clear), 0 when more is needed, -1 on a bad ack. */
static int msg_parse(struct msg_state *m, unsigned int depth, uint64_t now)
{
	while (m->rlen && (m->rbuf[0] & 0x80)) {
		uint64_t v;

		if (m->rlen < 8)
			return 0;
		v = get_be64(m->rbuf) & ~ACK_FLAG;
		m->rlen -= 8;
		memmove(m->rbuf, m->rbuf + 8, m->rlen);
		if (v < m->acked || v > m->nmsg)
			return -1;
		/* Each ack frees a slot: the message `depth` later is posted. */
		for (; m->acked < v; m->acked++) {
			m->lat[m->acked] = now - m->post[m->acked % depth];
			m->post[m->acked % depth] = now;
		}
	}
	return m->rlen ? 1 : 0;
}

/* Send o->bytes as messages of o->msg_size, at most o->depth of them
 * unacknowledged, until every one is acknowledged (0), the server sent its
 * verdict early (1: it gave up), or something failed (-1, errbuf says).
 * A message is posted when a slot is free (the first `depth` at once, then
 * one per ack), as mrc-perf posts a WRITE; its bytes then wait behind the
 * earlier messages' in the stream, and that wait is part of its time. */
static int send_messages(const struct opts *o, int fd, uint8_t *buf, uint64_t deadline,
			 struct msg_state *m, char *errbuf, size_t errlen)
{
	const uint64_t S = o->msg_size, N = o->bytes;
	uint64_t off = 0, limit, now = now_ns(), k;
	size_t have = 0, pos = 0, len;
	ssize_t n;
	int r;

	for (k = 0; k < o->depth && k < m->nmsg; k++)
		m->post[k] = now;

	while (m->acked < m->nmsg) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int ms;

		limit = (m->acked + o->depth) * S;
		if (limit > N)
			limit = N;
		if (off < limit)
			p.events |= POLLOUT;
		now = now_ns();
		if (stop_flag || now >= deadline) {
			snprintf(errbuf, errlen, "%s after %" PRIu64 " of %" PRIu64
				 " messages acknowledged", stop_flag ? "stopped" : "timed out",
				 m->acked, m->nmsg);
			return -1;
		}
		ms = (int)((deadline - now) / NSEC_PER_MSEC) + 1;
		r = poll(&p, 1, ms > 200 ? 200 : ms);
		if (r < 0 && errno != EINTR) {
			snprintf(errbuf, errlen, "poll: %s", strerror(errno));
			return -1;
		}
		if (r <= 0)
			continue;
		if (p.revents & (POLLIN | POLLERR | POLLHUP)) {
			n = recv(fd, m->rbuf + m->rlen, sizeof(m->rbuf) - m->rlen, MSG_DONTWAIT);
			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
				snprintf(errbuf, errlen, "%s after %" PRIu64 " of %" PRIu64
					 " messages acknowledged",
					 n ? strerror(errno) : "connection closed",
					 m->acked, m->nmsg);
				return -1;
			}
			if (n > 0) {
				m->rlen += (size_t)n;
				r = msg_parse(m, o->depth, now_ns());
				if (r < 0) {
					snprintf(errbuf, errlen, "bad ack from the server after %"
						 PRIu64 " messages", m->acked);
					return -1;
				}
				if (r == 1)
					return 1;
			}
		}
		if (!(p.revents & POLLOUT) || off >= limit)
			continue;
		if (pos == have) {
			have = N - off < IO_SIZE ? (size_t)(N - off) : IO_SIZE;
			pattern_fill(buf, off, have);
			pos = 0;
		}
		len = have - pos;
		if (len > limit - off)
			len = (size_t)(limit - off);
		n = send(fd, buf + pos, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			snprintf(errbuf, errlen, "send: %s after %" PRIu64 " bytes",
				 strerror(errno), off);
			return -1;
		}
		pos += (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The pct-th percentile of n sorted values (the rank mrc-perf uses), in us. */
static double percentile_us(const uint64_t *v, uint64_t n, unsigned int pct)
{
	uint64_t rank;

	if (!n)
		return 0;
	rank = (n * pct + 99) / 100;
	if (!rank)
		rank = 1;
	return (double)v[rank - 1] / 1e3;
}

static int run_client(const struct opts *o)
{
	uint64_t start = now_ns(), deadline = start + (uint64_t)o->timeout_s * NSEC_PER_SEC;
	uint8_t *buf = malloc(IO_SIZE), hdr[HDR_MSG_LEN], reply[REPLY_LEN], bye = 0;
	struct msg_state msg = { 0 };
	size_t hdr_len = o->msg_size ? HDR_MSG_LEN : HDR_LEN;
	struct subflow sf[MAX_SUBFLOWS];
	uint64_t off = 0, t_first, t_end, got = 0;
	size_t have = 0, pos = 0;
	bool verified = false, mptcp;
	int fd, nsf = 0, status = 1, r, i;
	char local[INET6_ADDRSTRLEN + 16] = "?";
	struct sockaddr_storage ls;
	socklen_t lsl = sizeof(ls);
	const char *err = NULL;
	char errbuf[256];

	if (o->msg_size) {
		msg.nmsg = (o->bytes + o->msg_size - 1) / o->msg_size;
		msg.lat = calloc(msg.nmsg, sizeof(*msg.lat));
		msg.post = calloc(o->depth, sizeof(*msg.post));
	}
	if (!buf || (o->msg_size && (!msg.lat || !msg.post))) {
		report("out of memory");
		free(buf);
		free(msg.lat);
		free(msg.post);
		return 1;
	}
	fd = client_connect(o, deadline);
	if (fd < 0) {
		free(buf);
		free(msg.lat);
		free(msg.post);
		return 1;
	}
	if (o->msg_size) {
		int one = 1;

		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	if (!getsockname(fd, (struct sockaddr *)&ls, &lsl))
		addr_str((struct sockaddr *)&ls, local, sizeof(local));
	mptcp = is_mptcp_conn(fd);
	if (o->mptcp && !mptcp)
		report("warning: the connection fell back to plain TCP (the server "
		       "or the path does not do MPTCP)");
	report("connected to %s port %u from %s (%s)", o->host, o->port, local,
	       mptcp ? "MPTCP" : "TCP");
	memcpy(hdr, o->msg_size ? MAGIC_MSG : MAGIC, 8);
	put_be64(hdr + 8, o->bytes);
	put_be64(hdr + 16, o->msg_size);
	t_first = now_ns();
	if (write_full(fd, hdr, hdr_len, deadline)) {
		snprintf(errbuf, sizeof(errbuf), "send: %s", strerror(errno));
		err = errbuf;
		goto out;
	}
	if (o->msg_size) {
		r = send_messages(o, fd, buf, deadline, &msg, errbuf, sizeof(errbuf));
		if (r < 0) {
			err = errbuf;
			goto out;
		}
		/* The verdict's first bytes may have come with the last ack. */
		if (msg.rlen > sizeof(reply))
			msg.rlen = sizeof(reply);
		memcpy(reply, msg.rbuf, msg.rlen);
		off = o->bytes;
	}
	while (off < o->bytes) {
		ssize_t n;

		if (pos == have) {
			have = o->bytes - off < IO_SIZE ? (size_t)(o->bytes - off) : IO_SIZE;
			pattern_fill(buf, off, have);
			pos = 0;
		}
		r = wait_fd(fd, POLLOUT, deadline);
		if (r <= 0) {
			snprintf(errbuf, sizeof(errbuf), "%s after %" PRIu64 " bytes",
				 r == 0 ? (stop_flag ? "stopped" : "timed out") : strerror(errno),
				 off);
			err = errbuf;
			goto out;
		}
		n = send(fd, buf + pos, have - pos, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				continue;
			snprintf(errbuf, sizeof(errbuf), "send: %s after %" PRIu64 " bytes",
				 strerror(errno), off);
			err = errbuf;
			goto out;
		}
		pos += (size_t)n;
		off += (uint64_t)n;
	}
	if (read_full(fd, reply + msg.rlen, sizeof(reply) - msg.rlen, deadline) ||
	    memcmp(reply, MAGIC, 8)) {
		snprintf(errbuf, sizeof(errbuf), "no verdict from the server: %s",
			 errno ? strerror(errno) : "connection closed");
		err = errbuf;
		goto out;
	}
	t_end = now_ns();
	got = get_be64(reply + 8);
	verified = (get_be64(reply + 16) & 1) && got == o->bytes && msg.acked == msg.nmsg;
	if (mptcp)
		nsf = mptcp_subflows(fd, sf, MAX_SUBFLOWS);
	/* Goodbye: the server closes first and keeps the TIME_WAIT. */
	(void)write_full(fd, &bye, 1, now_ns() + NSEC_PER_SEC);
	{
		uint8_t tmp[64];
		uint64_t dl = now_ns() + 5 * NSEC_PER_SEC;

		while (wait_fd(fd, POLLIN, dl) == 1) {
			ssize_t n = recv(fd, tmp, sizeof(tmp), MSG_DONTWAIT);

			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				break;
		}
	}
	status = verified ? 0 : 1;
	{
		double secs = (double)(t_end - t_first) / 1e9;

		report("%" PRIu64 " bytes in %.3f s, %.3f Gb/s, server: %" PRIu64
		       " bytes, %s", o->bytes, secs, (double)o->bytes * 8 / secs / 1e9, got,
		       verified ? "verified" : "NOT verified");
		for (i = 0; i < nsf; i++)
			report("subflow %s -> %s: %" PRIu64 " bytes acked, %u retransmits",
			       sf[i].local, sf[i].remote, sf[i].bytes_acked, sf[i].retrans);
		if (o->msg_size) {
			qsort(msg.lat, msg.nmsg, sizeof(*msg.lat), cmp_u64);
			report("%" PRIu64 " messages of %" PRIu64 " bytes, depth %u: completion "
			       "p50 %.3f us, p99 %.3f us, max %.3f us", msg.nmsg, o->msg_size,
			       o->depth, percentile_us(msg.lat, msg.nmsg, 50),
			       percentile_us(msg.lat, msg.nmsg, 99),
			       percentile_us(msg.lat, msg.nmsg, 100));
		}
		if (o->json) {
			printf("{\"bytes\": %" PRIu64 ", \"seconds\": %.6f, \"gbps\": %.6f, "
			       "\"verified\": %s, \"server_bytes\": %" PRIu64 ", \"local\": ",
			       o->bytes, secs, (double)o->bytes * 8 / secs / 1e9,
			       verified ? "true" : "false", got);
			json_string(stdout, local);
			printf(", \"mptcp\": %s, \"subflows\": %d, \"subflow_list\": [",
			       mptcp ? "true" : "false", nsf);
			for (i = 0; i < nsf; i++) {
				printf("%s{\"local\": ", i ? ", " : "");
				json_string(stdout, sf[i].local);
				printf(", \"remote\": ");
				json_string(stdout, sf[i].remote);
				printf(", \"bytes_acked\": %" PRIu64 ", \"bytes_sent\": %" PRIu64
				       ", \"retrans\": %u}", sf[i].bytes_acked, sf[i].bytes_sent,
				       sf[i].retrans);
			}
			printf("]");
			if (o->msg_size) {
				printf(", \"msg_size\": %" PRIu64 ", \"depth\": %u, \"ops\": %"
				       PRIu64 ", \"lat_p50_us\": %.3f, \"lat_p99_us\": %.3f, "
				       "\"lat_max_us\": %.3f", o->msg_size, o->depth, msg.nmsg,
				       percentile_us(msg.lat, msg.nmsg, 50),
				       percentile_us(msg.lat, msg.nmsg, 99),
				       percentile_us(msg.lat, msg.nmsg, 100));
			}
			printf(", \"error\": null}\n");
		}
	}
out:
	if (err) {
		report("%s", err);
		if (o->json) {
			printf("{\"bytes\": %" PRIu64 ", \"verified\": false, \"error\": ",
			       o->bytes);
			json_string(stdout, err);
			printf("}\n");
		}
	}
	fflush(stdout);
	close(fd);
	free(buf);
	free(msg.lat);
	free(msg.post);
	return status;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "now")) {
		if (argc != 2)
			usage_error("now takes no arguments");
		printf("%" PRIu64 "\n", now_ns());
		return 0;
	}
	if (!strcmp(argv[1], "server"))
		o.server = true;
	else if (!strcmp(argv[1], "client"))
		o.client = true;
	else
		usage_error("unknown command '%s' (server, client, now)", argv[1]);
	parse_args(argc, argv, &o);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return o.server ? run_server(&o) : run_client(&o);
}
