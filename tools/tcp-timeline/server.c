// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-tcp-timeline server: accept clients one after the other; per
 * session read the header, check every payload byte against the pattern,
 * acknowledge whole messages in message mode, count the bytes of each
 * millisecond for --timeline, then send the verdict.
 */
#include "tcp_timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/tcp.h>

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

int run_server(const struct opts *o)
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
