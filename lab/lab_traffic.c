// SPDX-License-Identifier: GPL-2.0
/*
 * lab_traffic.c - UDP traffic generator and sink for MRC-XDP lab tests.
 *
 *   mrc-lab-traffic send --dst ADDR --port PORT [options]
 *   mrc-lab-traffic recv --port PORT [options]
 *
 * The sender writes a payload the receiver can verify without shared state:
 * plain datagrams carry their 32-bit packet index in the first 4 bytes,
 * MRC datagrams carry it in the BTH PSN, and every byte j after that header
 * is (index * 31 + j) & 0xff.  The receiver reports counts on one line (or
 * as JSON) so shell tests can compare them with what was sent.
 *
 * Exit codes: 0 success, 1 runtime error, 2 usage error.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define PROG			"mrc-lab-traffic"
#define EXIT_RUNTIME		1
#define EXIT_USAGE		2

#define MAX_PAYLOAD		65000
#define IDX_HDR_LEN		4	/* big-endian packet index */
#define MRC_HDR_LEN		32	/* BTH 12 + METH 4 + RETH 16 */
#define MRC_OPCODE_FIRST	0xC6
#define MRC_OPCODE_LAST		0xCB
#define MRC_OPCODE_WRITE_MIDDLE	0xC7
#define MRC_RKEY		0x1234
#define MRC_DEST_QP		1

#define SEND_RETRIES		1000
#define SEND_RETRY_NS		100000ULL	/* 100 us between ENOBUFS retries */
#define RECV_BUF_LEN		65536
#define RCVBUF_WANTED		(32 << 20)	/* absorb a full-speed burst */
#define NSEC_PER_SEC		1000000000ULL
#define NSEC_PER_MSEC		1000000ULL

/* Set from SIGINT/SIGTERM so both modes can stop cleanly and still report. */
static volatile sig_atomic_t stop_requested;

/* Options of both subcommands; each uses its own group plus port and json. */
struct opts {
	bool is_send, json;
	uint16_t port;			/* send: destination, recv: local */
	/* send */
	struct sockaddr_storage dst, src;
	socklen_t dst_len, src_len;
	bool have_src, new_socket, mrc, random_payload;
	uint16_t sport_lo, sport_hi;	/* 0:0 = let the kernel pick */
	uint32_t size;
	int tos;			/* -1 = leave the default */
	uint64_t count, pps, duration_ms;	/* pps 0 = as fast as possible */
	/* recv */
	struct sockaddr_storage bind_addr;
	socklen_t bind_len;
	bool have_bind;
	int family;			/* 0 = dual-stack default, 4 or 6 */
	uint64_t timeout_ms, idle_ms, expect;
};

/* unsigned long long so the counters print with %llu without casts. */
struct recv_stats {
	unsigned long long packets, bytes, ce, ect, sports, short_pkts, pattern_errors;
	unsigned long long min_size, max_size;
	unsigned long long dscp[64];
	uint8_t sport_seen[65536 / 8];
};

static const char usage_text[] =
"Usage:\n"
"  " PROG " send --dst ADDR --port PORT [--src ADDR] [--sport N | --sport-range A:B]\n"
"      [--count N(1000)] [--size BYTES(1000, 1..65000)] [--tos T] [--pps RATE]\n"
"      [--new-socket] [--mrc-data | --random] [--duration-ms MS(30000)] [--json]\n"
"  " PROG " recv --port PORT [--bind ADDR] [--family 4|6] [--timeout-ms MS(10000)]\n"
"      [--idle-ms MS(1000)] [--expect N] [--json]\n"
"\n"
"send: ADDR is numeric IPv4/IPv6. --sport-range A:B gives packet i source port\n"
"  A + i % (B-A+1); otherwise the kernel picks one. --tos sets IP_TOS/IPV6_TCLASS\n"
"  (decimal or 0x hex, 2 = ECT(0)). --new-socket opens a socket per packet.\n"
"  --mrc-data prefixes a 32-byte BTH+METH+RETH header (needs --size >= 32).\n"
"  --random fills every payload with pseudo-random bytes (garbage tests).\n"
"recv: default is a dual-stack socket on ::; --family 4 binds 0.0.0.0,\n"
"  --family 6 binds :: IPv6-only. Prints 'ready' on stderr once bound, then one\n"
"  summary line when --expect is met, --idle-ms passes without traffic, or\n"
"  --timeout-ms expires. An empty dscp_counts list prints as '-'.\n"
"Exit status: 0 ok, 1 runtime error, 2 usage error.\n";

static void vreport(const char *fmt, va_list ap)
{
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
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

static void __attribute__((format(printf, 1, 2))) runtime_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* Sleep until an absolute CLOCK_MONOTONIC deadline; false if interrupted to stop. */
static bool sleep_until_ns(uint64_t deadline)
{
	struct timespec ts = {
		.tv_sec = (time_t)(deadline / NSEC_PER_SEC),
		.tv_nsec = (long)(deadline % NSEC_PER_SEC),
	};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		if (stop_requested)
			return false;
	return true;
}

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void install_stop_handlers(void)
{
	/* No SA_RESTART: poll()/clock_nanosleep() must return so we can report. */
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/*
 * Strict unsigned parser: decimal, or hex with a 0x prefix.  strtoull()
 * alone would accept "-1", leading blanks and octal, all of which are
 * more likely typos than intent in a test script.
 */
static uint64_t parse_uint(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	unsigned long long v;
	char *end;

	errno = 0;
	v = strtoull(digits, &end, hex ? 16 : 10);
	if (!(hex ? isxdigit((unsigned char)*digits) : isdigit((unsigned char)*digits)) ||
	    *end != '\0')
		usage_error("%s: '%s' is not a non-negative number", opt, s);
	if (errno == ERANGE || v < min || v > max)
		usage_error("%s: '%s' is out of range (%llu..%llu)", opt, s,
			    (unsigned long long)min, (unsigned long long)max);
	return v;
}

static socklen_t parse_addr(const char *opt, const char *s, struct sockaddr_storage *out)
{
	struct addrinfo *res, hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM, .ai_flags = AI_NUMERICHOST,
	};
	socklen_t len;
	int err;

	err = getaddrinfo(s, NULL, &hints, &res);
	if (err)
		usage_error("%s: '%s' is not a numeric IPv4 or IPv6 address (%s)",
			    opt, s, gai_strerror(err));
	len = res->ai_addrlen;
	memset(out, 0, sizeof(*out));
	memcpy(out, res->ai_addr, len);
	freeaddrinfo(res);
	return len;
}

static void set_port(struct sockaddr_storage *ss, uint16_t port)
{
	if (ss->ss_family == AF_INET)
		((struct sockaddr_in *)ss)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)ss)->sin6_port = htons(port);
}

static uint16_t get_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
}

static socklen_t any_addr(int family, struct sockaddr_storage *out)
{
	memset(out, 0, sizeof(*out));
	out->ss_family = (sa_family_t)family;
	if (family == AF_INET) {
		((struct sockaddr_in *)out)->sin_addr.s_addr = htonl(INADDR_ANY);
		return sizeof(struct sockaddr_in);
	}
	((struct sockaddr_in6 *)out)->sin6_addr = in6addr_any;
	return sizeof(struct sockaddr_in6);
}

static const char *addr_str(const struct sockaddr_storage *ss, socklen_t len,
			    char *buf, size_t buflen)
{
	if (getnameinfo((const struct sockaddr *)ss, len, buf, (socklen_t)buflen,
			NULL, 0, NI_NUMERICHOST))
		snprintf(buf, buflen, "?");
	return buf;
}

static const char *family_name(int family)
{
	return family == AF_INET ? "IPv4" : "IPv6";
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = (v << 8) | p[i];
	return v;
}

/* Byte j of packet i is (i*31 + j) & 0xff; only i mod 256 matters. */
static void fill_pattern(uint8_t *buf, size_t from, size_t len, uint32_t index)
{
	uint8_t base = (uint8_t)(index * 31u);

	for (size_t j = from; j < len; j++)
		buf[j] = (uint8_t)(base + j);
}

static bool pattern_matches(const uint8_t *buf, size_t from, size_t len, uint32_t index)
{
	uint8_t base = (uint8_t)(index * 31u);

	for (size_t j = from; j < len; j++)
		if (buf[j] != (uint8_t)(base + j))
			return false;
	return true;
}

/* BTH (RDMA WRITE middle) + zero METH + RETH, as a trimming switch expects. */
static void build_mrc_header(uint8_t *buf, uint32_t index, uint32_t size)
{
	memset(buf, 0, MRC_HDR_LEN);
	buf[0] = MRC_OPCODE_WRITE_MIDDLE;
	/* Bytes 1-4: the connection key; no QP takes these packets, so the
	 * interop bytes 0x00 0xFFFF 0x00 (docs/WIRE.md section 10). */
	put_be(buf + 2, 0xFFFF, 2);
	put_be(buf + 5, MRC_DEST_QP, 3);		/* dest QP after reserved byte */
	put_be(buf + 9, index & 0xFFFFFF, 3);		/* PSN */
	/* bytes 12..15: METH, left zero */
	put_be(buf + 16, (uint64_t)index * size, 8);	/* RETH virtual address */
	put_be(buf + 24, MRC_RKEY, 4);
	put_be(buf + 28, size, 4);
}

/* Garbage for robustness tests: xorshift64, reproducible per packet. */
static void fill_random(uint8_t *buf, uint32_t size, uint64_t index)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (index + 1);

	for (uint32_t j = 0; j < size; j++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[j] = (uint8_t)x;
	}
}

static void build_payload(uint8_t *buf, uint32_t size, uint32_t index, bool mrc)
{
	size_t hdr = 0;

	if (mrc) {
		build_mrc_header(buf, index, size);
		hdr = MRC_HDR_LEN;
	} else if (size >= IDX_HDR_LEN) {
		put_be(buf, index, IDX_HDR_LEN);
		hdr = IDX_HDR_LEN;
	}
	fill_pattern(buf, hdr, size, index);
}

/* ---------------------------------------------------------------- send */

static int set_tos(int fd, int family, int tos)
{
	if (family == AF_INET)
		return setsockopt(fd, IPPROTO_IP, IP_TOS, &tos, sizeof(tos));
	return setsockopt(fd, IPPROTO_IPV6, IPV6_TCLASS, &tos, sizeof(tos));
}

static int open_send_socket(const struct opts *o, uint16_t sport)
{
	int family = o->dst.ss_family;
	struct sockaddr_storage local;
	socklen_t local_len;
	char abuf[INET6_ADDRSTRLEN + 16];
	int one = 1;
	int fd;

	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		runtime_error("socket(%s): %s", family_name(family), strerror(errno));
		return -1;
	}
	/* Rebinding a port we just closed (port cycling, --new-socket) must not fail. */
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one))) {
		runtime_error("setsockopt(SO_REUSEADDR/SO_REUSEPORT): %s", strerror(errno));
		goto fail;
	}
	if (o->tos >= 0 && set_tos(fd, family, o->tos)) {
		runtime_error("--tos %d: setsockopt: %s", o->tos, strerror(errno));
		goto fail;
	}
	if (!o->have_src && !sport)
		return fd;	/* kernel picks address and ephemeral port at sendto() */

	if (o->have_src) {
		local = o->src;
		local_len = o->src_len;
	} else {
		local_len = any_addr(family, &local);
	}
	set_port(&local, sport);
	if (bind(fd, (struct sockaddr *)&local, local_len)) {
		runtime_error("bind to source %s port %u: %s",
			      addr_str(&local, local_len, abuf, sizeof(abuf)),
			      sport, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

static uint16_t sport_for_packet(const struct opts *o, uint64_t i)
{
	uint32_t span = (uint32_t)o->sport_hi - o->sport_lo + 1;

	if (!o->sport_lo)
		return 0;
	return (uint16_t)(o->sport_lo + i % span);
}

/*
 * Send one datagram.  ENOBUFS/EAGAIN mean a full qdisc or socket buffer,
 * which is back-pressure rather than failure, so back off and retry.
 * Returns 0 on success or the errno of the failure.
 */
static int send_datagram(int fd, const uint8_t *buf, const struct opts *o,
			 uint64_t end_ns)
{
	for (int tries = 0; tries < SEND_RETRIES; tries++) {
		if (sendto(fd, buf, o->size, 0, (const struct sockaddr *)&o->dst,
			   o->dst_len) == (ssize_t)o->size)
			return 0;
		if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
			return errno ? errno : EIO;
		if (stop_requested || now_ns() >= end_ns)
			return ETIMEDOUT;
		if (errno != EINTR && !sleep_until_ns(now_ns() + SEND_RETRY_NS))
			return EINTR;
	}
	return ENOBUFS;
}

static int run_send(const struct opts *o)
{
	unsigned long long sent = 0, bytes = 0, errors = 0;
	uint64_t start = now_ns(), end_ns;
	int first_err = 0, fd = -1, fd_port = -1, rc = 0;
	uint8_t buf[MAX_PAYLOAD];
	double secs;

	end_ns = start + o->duration_ms * NSEC_PER_MSEC;
	for (uint64_t i = 0; i < o->count && !stop_requested; i++) {
		uint16_t sport = sport_for_packet(o, i);
		int err;

		if (o->pps) {
			/* Absolute deadlines so pacing error does not accumulate. */
			uint64_t slot = start + i * NSEC_PER_SEC / o->pps;

			if (slot >= end_ns || !sleep_until_ns(slot))
				break;
		}
		if (now_ns() >= end_ns)
			break;
		if (fd < 0 || o->new_socket || sport != fd_port) {
			if (fd >= 0)
				close(fd);
			fd = open_send_socket(o, sport);
			if (fd < 0) {
				rc = EXIT_RUNTIME;
				break;
			}
			fd_port = sport;
		}
		if (o->random_payload)
			fill_random(buf, o->size, i);
		else
			build_payload(buf, o->size, (uint32_t)i, o->mrc);
		err = send_datagram(fd, buf, o, end_ns);
		if (!err) {
			sent++;
			bytes += o->size;
		} else {
			errors++;
			if (!first_err)
				first_err = err;
		}
	}
	secs = (double)(now_ns() - start) / 1e9;
	if (fd >= 0)
		close(fd);

	if (first_err)
		runtime_error("%llu send errors, first: %s", errors, strerror(first_err));
	printf(o->json ? "{\"sent\":%llu,\"bytes\":%llu,\"errors\":%llu,\"seconds\":%.3f}\n"
		       : "sent %llu bytes %llu errors %llu seconds %.3f\n",
	       sent, bytes, errors, secs);
	fflush(stdout);
	return rc;
}

/* ---------------------------------------------------------------- recv */

static int open_recv_socket(const struct opts *o)
{
	struct sockaddr_storage local;
	socklen_t local_len;
	char abuf[INET6_ADDRSTRLEN + 16];
	int one = 1, v6only = o->family == 6, rcvbuf = RCVBUF_WANTED;
	int fd, family;

	if (o->have_bind) {
		local = o->bind_addr;
		local_len = o->bind_len;
	} else {
		local_len = any_addr(o->family == 4 ? AF_INET : AF_INET6, &local);
	}
	family = local.ss_family;
	set_port(&local, o->port);

	fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		runtime_error("socket(%s): %s", family_name(family), strerror(errno));
		return -1;
	}
	/*
	 * No SO_REUSEADDR: a stale receiver on the same port must make bind()
	 * fail loudly rather than silently share the traffic.  A big buffer
	 * absorbs a full-speed burst (FORCE needs CAP_NET_ADMIN).
	 */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));

	if (family == AF_INET6) {
		if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only)) ||
		    setsockopt(fd, IPPROTO_IPV6, IPV6_RECVTCLASS, &one, sizeof(one))) {
			runtime_error("setsockopt(IPV6_V6ONLY/IPV6_RECVTCLASS): %s",
				      strerror(errno));
			goto fail;
		}
	}
	/*
	 * IPv4-mapped traffic on a dual-stack socket reports its TOS through
	 * IP_TOS cmsgs, so ask for those on IPv6 sockets too (best effort there).
	 */
	if (setsockopt(fd, IPPROTO_IP, IP_RECVTOS, &one, sizeof(one)) &&
	    family == AF_INET) {
		runtime_error("setsockopt(IP_RECVTOS): %s", strerror(errno));
		goto fail;
	}
	if (bind(fd, (struct sockaddr *)&local, local_len)) {
		runtime_error("bind to %s port %u: %s",
			      addr_str(&local, local_len, abuf, sizeof(abuf)),
			      o->port, strerror(errno));
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

static int tos_from_cmsgs(struct msghdr *msg)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(msg); c; c = CMSG_NXTHDR(msg, c)) {
		if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS &&
		    c->cmsg_len >= CMSG_LEN(1))
			return *(const uint8_t *)CMSG_DATA(c);
		if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int tclass;

			memcpy(&tclass, CMSG_DATA(c), sizeof(tclass));
			return tclass & 0xff;
		}
	}
	return 0;	/* no cmsg: treat as not-ECT, DSCP 0 */
}

/* Count a datagram shorter than its index header as short; else verify it. */
static void check_payload(struct recv_stats *st, const uint8_t *buf, size_t len)
{
	bool mrc = len >= 1 && buf[0] >= MRC_OPCODE_FIRST && buf[0] <= MRC_OPCODE_LAST;
	size_t hdr = mrc ? MRC_HDR_LEN : IDX_HDR_LEN;
	uint32_t index;

	if (len < hdr) {
		st->short_pkts++;
		return;
	}
	index = mrc ? (uint32_t)get_be(buf + 9, 3) : (uint32_t)get_be(buf, 4);
	if (!pattern_matches(buf, hdr, len, index))
		st->pattern_errors++;
}

static void account_datagram(struct recv_stats *st, const uint8_t *buf, size_t len,
			     int tos, uint16_t sport)
{
	int ecn = tos & 3;

	if (!st->packets || len < st->min_size)
		st->min_size = len;
	if (len > st->max_size)
		st->max_size = len;
	st->packets++;
	st->bytes += len;
	if (ecn == 3)
		st->ce++;
	else if (ecn)
		st->ect++;
	st->dscp[(tos >> 2) & 63]++;
	if (!(st->sport_seen[sport / 8] & (1u << (sport % 8)))) {
		st->sport_seen[sport / 8] |= (uint8_t)(1u << (sport % 8));
		st->sports++;
	}
	check_payload(st, buf, len);
}

/*
 * Read everything queued without blocking.  Returns the number of
 * datagrams read, or -1 on a socket error.
 */
static long drain_socket(int fd, uint8_t *buf, struct recv_stats *st, uint64_t expect)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int)) * 4];
	} control;
	struct sockaddr_storage from;
	struct iovec iov = { .iov_base = buf, .iov_len = RECV_BUF_LEN };
	struct msghdr msg = {
		.msg_name = &from, .msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = control.buf,
	};
	long got = 0;
	ssize_t n;

	while (!expect || st->packets < expect) {
		msg.msg_namelen = sizeof(from);
		msg.msg_controllen = sizeof(control.buf);
		n = recvmsg(fd, &msg, MSG_DONTWAIT);
		if (n < 0) {
			/* EINTR: let the caller re-check stop_requested. */
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				break;
			runtime_error("recvmsg: %s", strerror(errno));
			return -1;
		}
		account_datagram(st, buf, (size_t)n, tos_from_cmsgs(&msg), get_port(&from));
		got++;
	}
	return got;
}

static void print_recv_stats(const struct recv_stats *st, bool json)
{
	bool first = true;

	printf(json ? "{\"received\":%llu,\"bytes\":%llu,\"ce\":%llu,\"ect\":%llu,"
		      "\"sports\":%llu,\"dscp\":{"
		    : "received %llu bytes %llu ce %llu ect %llu sports %llu dscp_counts ",
	       st->packets, st->bytes, st->ce, st->ect, st->sports);
	for (int d = 0; d < 64; d++) {
		if (!st->dscp[d])
			continue;
		printf(json ? "%s\"%d\":%llu" : "%s%d:%llu", first ? "" : ",", d, st->dscp[d]);
		first = false;
	}
	/* An empty text list prints as "-" so the line still splits into key/value pairs. */
	if (!json && first)
		putchar('-');
	printf(json ? "},\"min_size\":%llu,\"max_size\":%llu,\"short\":%llu,"
		      "\"pattern_errors\":%llu}\n"
		    : " min %llu max %llu short %llu pattern_errors %llu\n",
	       st->min_size, st->max_size, st->short_pkts, st->pattern_errors);
	fflush(stdout);
}

static int run_recv(const struct opts *o)
{
	struct recv_stats stats = { 0 }, *st = &stats;
	uint64_t hard_end, last_rx = 0;
	uint8_t buf[RECV_BUF_LEN];
	struct pollfd pfd = { .fd = open_recv_socket(o), .events = POLLIN };
	int rc = 0;

	if (pfd.fd < 0)
		return EXIT_RUNTIME;
	fputs("ready\n", stderr);
	fflush(stderr);
	hard_end = now_ns() + o->timeout_ms * NSEC_PER_MSEC;
	while (!stop_requested && (!o->expect || st->packets < o->expect)) {
		uint64_t now = now_ns(), limit = hard_end, wait_ms;
		long got;
		int r;

		if (st->packets && last_rx + o->idle_ms * NSEC_PER_MSEC < limit)
			limit = last_rx + o->idle_ms * NSEC_PER_MSEC;
		if (now >= limit)
			break;
		/* Round up so we never spin on a sub-millisecond remainder. */
		wait_ms = (limit - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC;
		r = poll(&pfd, 1, wait_ms > INT_MAX ? INT_MAX : (int)wait_ms);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			runtime_error("poll: %s", strerror(errno));
			rc = EXIT_RUNTIME;
			break;
		}
		if (!r)
			continue;
		got = drain_socket(pfd.fd, buf, st, o->expect);
		if (got < 0) {
			rc = EXIT_RUNTIME;
			break;
		}
		if (got)
			last_rx = now_ns();
	}
	close(pfd.fd);
	print_recv_stats(st, o->json);
	return rc;
}

/* ------------------------------------------------------------- parsing */

/* Options up to OPT_JSON apply to both subcommands, then send-only, then recv-only. */
enum {
	OPT_PORT = 256, OPT_JSON,
	OPT_DST, OPT_SRC, OPT_SPORT, OPT_SPORT_RANGE, OPT_COUNT, OPT_SIZE,
	OPT_TOS, OPT_PPS, OPT_NEW_SOCKET, OPT_MRC_DATA, OPT_RANDOM, OPT_DURATION,
	OPT_BIND, OPT_FAMILY, OPT_TIMEOUT, OPT_IDLE, OPT_EXPECT,
};

static const struct option long_opts[] = {
	{ "port", required_argument, NULL, OPT_PORT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "dst", required_argument, NULL, OPT_DST },
	{ "src", required_argument, NULL, OPT_SRC },
	{ "sport", required_argument, NULL, OPT_SPORT },
	{ "sport-range", required_argument, NULL, OPT_SPORT_RANGE },
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "tos", required_argument, NULL, OPT_TOS },
	{ "pps", required_argument, NULL, OPT_PPS },
	{ "new-socket", no_argument, NULL, OPT_NEW_SOCKET },
	{ "mrc-data", no_argument, NULL, OPT_MRC_DATA },
	{ "random", no_argument, NULL, OPT_RANDOM },
	{ "duration-ms", required_argument, NULL, OPT_DURATION },
	{ "bind", required_argument, NULL, OPT_BIND },
	{ "family", required_argument, NULL, OPT_FAMILY },
	{ "timeout-ms", required_argument, NULL, OPT_TIMEOUT },
	{ "idle-ms", required_argument, NULL, OPT_IDLE },
	{ "expect", required_argument, NULL, OPT_EXPECT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Report getopt failures ourselves so the message names the bad argument. */
static void __attribute__((noreturn)) bad_option(int c, char **argv)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		usage_error("option '%s' requires an argument", arg);
	usage_error("unknown option '%s'%s", arg,
		    strchr(arg, '=') ? " (or it takes no value)" : "");
}

static void parse_sport_range(const char *s, struct opts *o)
{
	char lo[16], *colon = strchr(s, ':');
	size_t n = colon ? (size_t)(colon - s) : 0;

	if (!colon || n == 0 || n >= sizeof(lo) || !colon[1])
		usage_error("--sport-range: '%s' is not of the form A:B", s);
	memcpy(lo, s, n);
	lo[n] = '\0';
	o->sport_lo = (uint16_t)parse_uint("--sport-range", lo, 1, 65535);
	o->sport_hi = (uint16_t)parse_uint("--sport-range", colon + 1, 1, 65535);
	if (o->sport_lo > o->sport_hi)
		usage_error("--sport-range: '%s' has A > B", s);
}

static void apply_option(struct opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_PORT:
		o->port = (uint16_t)parse_uint("--port", arg, 1, 65535);
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_DST:
		o->dst_len = parse_addr("--dst", arg, &o->dst);
		break;
	case OPT_SRC:
		o->src_len = parse_addr("--src", arg, &o->src);
		o->have_src = true;
		break;
	case OPT_SPORT:
		o->sport_lo = o->sport_hi = (uint16_t)parse_uint("--sport", arg, 1, 65535);
		break;
	case OPT_SPORT_RANGE:
		parse_sport_range(arg, o);
		break;
	case OPT_COUNT:
		/* The index travels in 32 bits, so stay within them. */
		o->count = parse_uint("--count", arg, 0, UINT32_MAX);
		break;
	case OPT_SIZE:
		o->size = (uint32_t)parse_uint("--size", arg, 1, MAX_PAYLOAD);
		break;
	case OPT_TOS:
		o->tos = (int)parse_uint("--tos", arg, 0, 255);
		break;
	case OPT_PPS:
		o->pps = parse_uint("--pps", arg, 1, 100000000);
		break;
	case OPT_NEW_SOCKET:
		o->new_socket = true;
		break;
	case OPT_MRC_DATA:
		o->mrc = true;
		break;
	case OPT_RANDOM:
		o->random_payload = true;
		break;
	case OPT_DURATION:
		o->duration_ms = parse_uint("--duration-ms", arg, 1, 86400000);
		break;
	case OPT_BIND:
		o->bind_len = parse_addr("--bind", arg, &o->bind_addr);
		o->have_bind = true;
		break;
	case OPT_FAMILY:
		if (strcmp(arg, "4") && strcmp(arg, "6"))
			usage_error("--family: '%s' must be 4 or 6", arg);
		o->family = arg[0] - '0';
		break;
	case OPT_TIMEOUT:
		o->timeout_ms = parse_uint("--timeout-ms", arg, 1, 86400000);
		break;
	case OPT_IDLE:
		o->idle_ms = parse_uint("--idle-ms", arg, 1, 86400000);
		break;
	case OPT_EXPECT:
		o->expect = parse_uint("--expect", arg, 1, UINT64_MAX);
		break;
	}
}

/* Cross-option checks, run once everything has been parsed. */
static void validate_opts(const struct opts *o, const char *cmd, bool seen_sport,
			  bool seen_range)
{
	char a[INET6_ADDRSTRLEN + 16], b[INET6_ADDRSTRLEN + 16];

	if (o->is_send && !o->dst_len)
		usage_error("send: --dst ADDR is required");
	if (!o->port)
		usage_error("%s: --port PORT is required", cmd);
	if (!o->is_send) {
		if (o->have_bind && o->family &&
		    (o->family == 4) != (o->bind_addr.ss_family == AF_INET))
			usage_error("--bind %s is %s but --family is %d",
				    addr_str(&o->bind_addr, o->bind_len, a, sizeof(a)),
				    family_name(o->bind_addr.ss_family), o->family);
		return;
	}
	if (seen_sport && seen_range)
		usage_error("send: --sport and --sport-range are mutually exclusive");
	if (o->have_src && o->src.ss_family != o->dst.ss_family)
		usage_error("--src %s is %s but --dst %s is %s",
			    addr_str(&o->src, o->src_len, a, sizeof(a)),
			    family_name(o->src.ss_family),
			    addr_str(&o->dst, o->dst_len, b, sizeof(b)),
			    family_name(o->dst.ss_family));
	if (o->mrc && o->size < MRC_HDR_LEN)
		usage_error("--size %u is too small for --mrc-data (needs >= %d)",
			    o->size, MRC_HDR_LEN);
}

/* argv[0] is the subcommand name. */
static void parse_args(int argc, char **argv, struct opts *o)
{
	bool seen_sport = false, seen_range = false;
	int c, idx;

	o->count = 1000;
	o->size = 1000;
	o->tos = -1;
	o->duration_ms = 30000;
	o->timeout_ms = 10000;
	o->idle_ms = 1000;

	while ((c = getopt_long(argc, argv, ":h", long_opts, &idx)) != -1) {
		if (c == 'h') {
			fputs(usage_text, stdout);
			exit(0);
		}
		if (c < OPT_PORT)
			bad_option(c, argv);
		if (c > OPT_JSON && (c < OPT_BIND) != o->is_send)
			usage_error("option '--%s' does not apply to %s",
				    long_opts[idx].name, argv[0]);
		seen_sport |= c == OPT_SPORT;
		seen_range |= c == OPT_SPORT_RANGE;
		apply_option(o, c, optarg);
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	validate_opts(o, argv[0], seen_sport, seen_range);
	if (o->is_send)
		set_port(&o->dst, o->port);
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : NULL;
	struct opts o = { 0 };

	if (!cmd)
		usage_error("missing subcommand (send or recv)");
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		fputs(usage_text, stdout);
		return 0;
	}
	if (strcmp(cmd, "send") && strcmp(cmd, "recv"))
		usage_error("unknown subcommand '%s' (expected send or recv)", cmd);
	o.is_send = !strcmp(cmd, "send");
	parse_args(argc - 1, argv + 1, &o);
	install_stop_handlers();
	return o.is_send ? run_send(&o) : run_recv(&o);
}
