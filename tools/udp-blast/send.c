// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-udp-blast's sender: segments 0..total-1 from a cycle of
 * BLAST_CYCLE prepared slots (header + pattern), `batch` of them per
 * sendmsg (UDP_SEGMENT: the kernel cuts them), round-robin over the
 * sockets, never more than `window` segments past the receiver's credit.
 * Only the headers are written per send: the data is prepared once, as an
 * application sending from its buffers would.
 */
#include "blast.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103
#endif

struct sender {
	const struct opts *o;
	int fds[MAX_SOCKS], n;
	uint8_t *cycle;
	uint32_t seg, dps, batch;	/* segment bytes, data per segment, per send */
	uint64_t total, last_len, deadline;
	uint64_t credit_next, last_credit_ns, credit_waits;
	uint64_t sends, sent, t0, t1;
	bool confirmed;
	char error[256];
};

static int sender_fail(struct sender *s, const char *what, int err)
{
	if (!s->error[0])
		snprintf(s->error, sizeof(s->error), "%s%s%s", what, err ? ": " : "",
			 err ? strerror(err) : "");
	report("%s", s->error);
	return -1;
}

static void drain_credits(struct sender *s)
{
	struct blast_credit c;

	for (int i = 0; i < s->n; i++)
		while (recv(s->fds[i], &c, sizeof(c), MSG_DONTWAIT) == (ssize_t)sizeof(c)) {
			if (c.magic != CREDIT_MAGIC)
				continue;
			s->last_credit_ns = now_ns();
			if (c.next > s->credit_next && c.next <= s->total)
				s->credit_next = c.next;
			if (c.received == s->total && c.next == s->total)
				s->confirmed = true;
		}
}

/* Sleep until a credit may have come (1 ms at most), then read them. */
static void wait_credits(struct sender *s)
{
	struct pollfd p[MAX_SOCKS];

	for (int i = 0; i < s->n; i++)
		p[i] = (struct pollfd){ .fd = s->fds[i], .events = POLLIN };
	poll(p, (nfds_t)s->n, 1);
	drain_credits(s);
}

static int sender_open(struct sender *s)
{
	const struct opts *o = s->o;
	uint32_t seg = o->seg, m;
	int fd;

	s->n = o->n_to;
	for (int i = 0; i < s->n; i++) {
		fd = blast_socket(o->n_from ? &o->from[i] : NULL, &o->to[i]);
		if (fd < 0)
			return sender_fail(s, "socket", -fd);
		s->fds[i] = fd;
		m = path_seg_bytes(fd, o->to[i].ss_family);
		if (!o->seg && m && (!seg || m < seg))
			seg = m;
	}
	if (!seg)
		seg = 1472;
	s->seg = seg > MAX_SEG ? MAX_SEG : seg;
	s->dps = s->seg - (uint32_t)sizeof(struct blast_hdr);
	s->batch = o->gso_segs ? o->gso_segs : MAX_GSO_BYTES / s->seg;
	if (s->batch * s->seg > MAX_GSO_BYTES)
		s->batch = MAX_GSO_BYTES / s->seg;
	if (s->batch > BLAST_CYCLE)
		s->batch = BLAST_CYCLE;
	if (!s->batch)
		s->batch = 1;
	for (int i = 0; i < s->n && s->batch > 1; i++) {
		int gso = (int)s->seg;

		if (setsockopt(s->fds[i], SOL_UDP, UDP_SEGMENT, &gso, sizeof(gso)))
			return sender_fail(s, "UDP_SEGMENT (GSO)", errno);
	}
	s->total = (s->o->bytes + s->dps - 1) / s->dps;
	if (s->total > MAX_SEGMENTS)
		return sender_fail(s, "--bytes: too many segments", 0);
	s->last_len = s->o->bytes - (s->total - 1) * s->dps;
	s->cycle = malloc((size_t)BLAST_CYCLE * s->seg);
	if (!s->cycle)
		return sender_fail(s, "malloc", ENOMEM);
	for (uint32_t i = 0; i < BLAST_CYCLE; i++)
		pattern_slot(i, s->cycle + (size_t)i * s->seg + sizeof(struct blast_hdr), s->dps);
	return 0;
}

/* One sendmsg of segments idx..idx+k-1 on socket `fd`. */
static int send_batch(struct sender *s, int fd, uint64_t idx, uint32_t k)
{
	uint32_t slot0 = (uint32_t)(idx % BLAST_CYCLE), c1, retries = 0;
	struct iovec iov[2];
	struct msghdr msg = { .msg_iov = iov };
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	for (uint32_t j = 0; j < k; j++) {
		struct blast_hdr h = {
			.magic = BLAST_MAGIC, .index = idx + j, .total = s->total,
			.data_len = idx + j == s->total - 1 ? (uint32_t)s->last_len : s->dps,
		};

		memcpy(s->cycle + (size_t)((idx + j) % BLAST_CYCLE) * s->seg, &h, sizeof(h));
	}
	c1 = k < BLAST_CYCLE - slot0 ? k : BLAST_CYCLE - slot0;
	iov[0] = (struct iovec){ s->cycle + (size_t)slot0 * s->seg, (size_t)c1 * s->seg };
	msg.msg_iovlen = 1;
	if (k > c1) {
		iov[1] = (struct iovec){ s->cycle, (size_t)(k - c1) * s->seg };
		msg.msg_iovlen = 2;
	}
	if (idx + k == s->total)	/* the last segment is short */
		iov[msg.msg_iovlen - 1].iov_len -= s->dps - s->last_len;
	while (sendmsg(fd, &msg, 0) < 0) {
		/* A full queue waits; a refusal (the receiver not yet bound)
		 * is tried again a few times. */
		if (errno == EAGAIN || errno == ENOBUFS || errno == EINTR)
			poll(&p, 1, 1);
		else if (errno != ECONNREFUSED || ++retries > 50)
			return sender_fail(s, "sendmsg", errno);
		else
			usleep(10000);
		if (stop_flag || now_ns() > s->deadline)
			return sender_fail(s, stop_flag ? "interrupted" : "timed out (--timeout-s)", 0);
	}
	s->sends++;
	return 0;
}

static int send_all(struct sender *s)
{
	uint64_t idx = 0, now;
	uint32_t k;
	int rr = 0;

	s->t0 = s->last_credit_ns = now_ns();
	s->deadline = s->t0 + (uint64_t)s->o->timeout_s * 1000000000ull;
	while (idx < s->total) {
		k = s->total - idx < s->batch ? (uint32_t)(s->total - idx) : s->batch;
		while (idx + k > s->credit_next + s->o->window) {
			s->credit_waits++;
			wait_credits(s);
			now = now_ns();
			if (stop_flag || now > s->deadline)
				return sender_fail(s, stop_flag ? "interrupted" : "timed out (--timeout-s)", 0);
			if (now - s->last_credit_ns > CREDIT_STALL_MS * 1000000ull)
				return sender_fail(s, "no credit from the receiver for 3 s", 0);
		}
		if (idx > s->credit_next + s->o->window / 2)
			drain_credits(s);
		if (send_batch(s, s->fds[rr], idx, k))
			return -1;
		rr = (rr + 1) % s->n;
		idx += k;
		s->sent = idx;
	}
	s->t1 = now_ns();
	/* The receiver's last credit says whether everything arrived. */
	while (!s->confirmed && now_ns() - s->t1 < 2000000000ull && !stop_flag)
		wait_credits(s);
	return 0;
}

int run_send(const struct opts *o)
{
	struct sender s = { .o = o };
	double secs;
	uint64_t bytes;
	int ret = 0;

	if (sender_open(&s) || send_all(&s))
		ret = 1;
	bytes = s.sent ? (s.sent - 1) * s.dps + (s.sent == s.total ? s.last_len : s.dps) : 0;
	secs = s.t1 > s.t0 ? (double)(s.t1 - s.t0) / 1e9 : 0;
	if (o->json) {
		printf("{\"role\": \"send\", \"bytes\": %" PRIu64 ", \"segments\": %" PRIu64
		       ", \"sends\": %" PRIu64 ", \"segs_per_send\": %.2f, \"seg_bytes\": %u"
		       ", \"gso\": %s, \"sockets\": %d, \"seconds\": %.6f, \"gbps\": %.6f"
		       ", \"credit_waits\": %" PRIu64 ", \"confirmed\": %s, \"error\": ",
		       bytes, s.sent, s.sends, s.sends ? (double)s.sent / (double)s.sends : 0,
		       s.seg, s.batch > 1 ? "true" : "false", s.n, secs,
		       secs > 0 ? (double)bytes * 8 / secs / 1e9 : 0, s.credit_waits,
		       s.confirmed ? "true" : "false");
		if (s.error[0])
			printf("\"%s\"}\n", s.error);	/* our own words: no quotes in them */
		else
			printf("null}\n");
	} else {
		printf("sent %" PRIu64 " bytes in %" PRIu64 " segments of %u bytes, %" PRIu64
		       " sends, %.3f s, %.2f Gb/s, receiver %s\n", bytes, s.sent, s.seg,
		       s.sends, secs, secs > 0 ? (double)bytes * 8 / secs / 1e9 : 0,
		       s.confirmed ? "got everything" : "did not confirm");
	}
	for (int i = 0; i < s.n; i++)
		close(s.fds[i]);
	free(s.cycle);
	return ret;
}
