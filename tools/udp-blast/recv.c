// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-udp-blast's receiver: one socket per address with UDP_GRO, so the
 * kernel may hand several segments to one recvmsg (the UDP_GRO control
 * message gives their size); every segment's header and bytes are checked
 * against the pattern, duplicates and strangers counted. A credit goes
 * back every BLAST_CREDIT_EVERY segments and at the end.
 */
#include "blast.h"

#include <errno.h>
#include <inttypes.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef UDP_GRO
#define UDP_GRO 104
#endif
#define RECV_BUF	(256u << 10)	/* a GRO batch is at most 64 KiB */

struct receiver {
	const struct opts *o;
	int fds[MAX_SOCKS], n;
	uint8_t *expect, *buf, *seen;
	uint64_t total, got, good_bytes, bad, dups, foreign, truncated;
	uint64_t calls, segs, max_segs, next, credited;
	uint64_t t_first, t_last;
	bool gro_cmsg;
	char error[256];
};

static int receiver_open(struct receiver *r)
{
	int one = 1, fd;

	r->n = r->o->n_on;
	for (int i = 0; i < r->n; i++) {
		fd = blast_socket(&r->o->on[i], NULL);
		if (fd < 0) {
			snprintf(r->error, sizeof(r->error), "bind: %s", strerror(-fd));
			return -1;
		}
		r->fds[i] = fd;
		if (setsockopt(fd, SOL_UDP, UDP_GRO, &one, sizeof(one)))
			report("UDP_GRO: %s (one segment per read)", strerror(errno));
	}
	r->expect = malloc((size_t)BLAST_CYCLE * MAX_SEG);
	r->buf = malloc(RECV_BUF);
	if (!r->expect || !r->buf) {
		snprintf(r->error, sizeof(r->error), "out of memory");
		return -1;
	}
	for (uint32_t s = 0; s < BLAST_CYCLE; s++)
		pattern_slot(s, r->expect + (size_t)s * MAX_SEG, MAX_SEG);
	return 0;
}

/* The first well-formed header names the transfer's size. */
static bool learn_total(struct receiver *r, uint64_t total)
{
	if (r->total)
		return total == r->total;
	if (!total || total > MAX_SEGMENTS)
		return false;
	r->seen = calloc((size_t)(total + 7) / 8, 1);
	if (!r->seen)
		return false;
	r->total = total;
	return true;
}

static void check_segment(struct receiver *r, const uint8_t *p, size_t len)
{
	struct blast_hdr h;

	if (len < sizeof(h)) {
		r->foreign++;
		return;
	}
	memcpy(&h, p, sizeof(h));
	if (h.magic != BLAST_MAGIC) {
		r->foreign++;
		return;
	}
	if (h.data_len != len - sizeof(h) || h.data_len > MAX_SEG - sizeof(h) ||
	    !learn_total(r, h.total) || h.index >= r->total ||
	    memcmp(p + sizeof(h), r->expect + (size_t)(h.index % BLAST_CYCLE) * MAX_SEG,
		   h.data_len)) {
		r->bad++;
		return;
	}
	if (r->seen[h.index / 8] & (1u << (h.index % 8))) {
		r->dups++;
		return;
	}
	r->seen[h.index / 8] |= (uint8_t)(1u << (h.index % 8));
	r->got++;
	r->good_bytes += h.data_len;
	if (h.index + 1 > r->next)
		r->next = h.index + 1;
}

static void send_credit(struct receiver *r, int fd, const struct sockaddr_storage *to)
{
	struct blast_credit c = { .magic = CREDIT_MAGIC, .next = r->next, .received = r->got };

	sendto(fd, &c, sizeof(c), MSG_DONTWAIT, (const struct sockaddr *)to, addr_len(to));
	r->credited = r->got;
}

/* Every datagram waiting on fd; false when the socket failed. */
static bool drain_socket(struct receiver *r, int fd)
{
	char ctl[CMSG_SPACE(sizeof(int))];
	struct sockaddr_storage from;
	struct iovec iov = { r->buf, RECV_BUF };
	struct msghdr m;
	struct cmsghdr *c;
	size_t seg, off, n;
	ssize_t len;
	uint64_t k;

	for (;;) {
		m = (struct msghdr){ .msg_name = &from, .msg_namelen = sizeof(from),
				     .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl, .msg_controllen = sizeof(ctl) };
		len = recvmsg(fd, &m, MSG_DONTWAIT);
		if (len < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR;
		if (m.msg_flags & MSG_TRUNC) {
			r->truncated++;
			continue;
		}
		n = (size_t)len;
		seg = n;
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO) {
				int g;

				memcpy(&g, CMSG_DATA(c), sizeof(g));
				if (g > 0)
					seg = (size_t)g;
				r->gro_cmsg = true;
			}
		r->calls++;
		for (off = 0, k = 0; off < n; off += seg, k++)
			check_segment(r, r->buf + off, n - off < seg ? n - off : seg);
		r->segs += k;
		if (k > r->max_segs)
			r->max_segs = k;
		r->t_last = now_ns();
		if (!r->t_first)
			r->t_first = r->t_last;
		if (r->got - r->credited >= BLAST_CREDIT_EVERY || (r->total && r->got == r->total))
			send_credit(r, fd, &from);
	}
}

static void receive_all(struct receiver *r)
{
	uint64_t start = now_ns(), now;
	struct pollfd p[MAX_SOCKS];

	for (int i = 0; i < r->n; i++)
		p[i] = (struct pollfd){ .fd = r->fds[i], .events = POLLIN };
	report("listening on %d socket%s, port %u", r->n, r->n > 1 ? "s" : "", r->o->port);
	while (!(r->total && r->got == r->total)) {
		poll(p, (nfds_t)r->n, 50);
		for (int i = 0; i < r->n; i++)
			if (p[i].revents && !drain_socket(r, r->fds[i])) {
				snprintf(r->error, sizeof(r->error), "recvmsg: %s", strerror(errno));
				return;
			}
		now = now_ns();
		if (stop_flag) {
			snprintf(r->error, sizeof(r->error), "interrupted");
			return;
		}
		if (r->t_first && now - r->t_last > (uint64_t)r->o->idle_ms * 1000000ull)
			return;	/* the rest was lost: the counts say so */
		if (now - start > (uint64_t)r->o->timeout_s * 1000000000ull) {
			snprintf(r->error, sizeof(r->error), "timed out (--timeout-s)");
			return;
		}
	}
}

int run_recv(const struct opts *o)
{
	struct receiver r = { .o = o };
	double secs;
	bool ok;

	if (!receiver_open(&r))
		receive_all(&r);
	secs = r.t_last > r.t_first ? (double)(r.t_last - r.t_first) / 1e9 : 0;
	ok = !r.error[0] && r.total && r.got == r.total && !r.bad && !r.dups;
	if (!r.error[0] && !ok)
		snprintf(r.error, sizeof(r.error), "%" PRIu64 " of %" PRIu64 " segments intact "
			 "(%" PRIu64 " wrong, %" PRIu64 " twice)", r.got, r.total, r.bad, r.dups);
	if (o->json)
		printf("{\"role\": \"recv\", \"bytes\": %" PRIu64 ", \"segments\": %" PRIu64
		       ", \"expected_segments\": %" PRIu64 ", \"lost_segments\": %" PRIu64
		       ", \"bad\": %" PRIu64 ", \"duplicates\": %" PRIu64 ", \"foreign\": %" PRIu64
		       ", \"truncated\": %" PRIu64 ", \"recv_calls\": %" PRIu64
		       ", \"segs_per_call\": %.2f, \"max_segs_per_call\": %" PRIu64
		       ", \"gro\": %s, \"seconds\": %.6f, \"gbps\": %.6f, \"verified\": %s"
		       ", \"error\": %s%s%s}\n",
		       r.good_bytes, r.got, r.total, r.total - r.got, r.bad, r.dups, r.foreign,
		       r.truncated, r.calls, r.calls ? (double)r.segs / (double)r.calls : 0,
		       r.max_segs, r.max_segs > 1 ? "true" : "false", secs,
		       secs > 0 ? (double)r.good_bytes * 8 / secs / 1e9 : 0, ok ? "true" : "false",
		       r.error[0] ? "\"" : "", r.error[0] ? r.error : "null", r.error[0] ? "\"" : "");
	else
		printf("received %" PRIu64 " bytes in %" PRIu64 " of %" PRIu64 " segments, %"
		       PRIu64 " reads (%.2f segments per read), %.3f s, %.2f Gb/s; %" PRIu64
		       " wrong, %" PRIu64 " twice, %" PRIu64 " foreign: %s\n", r.good_bytes, r.got,
		       r.total, r.calls, r.calls ? (double)r.segs / (double)r.calls : 0, secs,
		       secs > 0 ? (double)r.good_bytes * 8 / secs / 1e9 : 0, r.bad, r.dups,
		       r.foreign, ok ? "verified" : "NOT verified");
	for (int i = 0; i < r.n; i++)
		close(r.fds[i]);
	free(r.expect);
	free(r.buf);
	free(r.seen);
	return ok ? 0 : 1;
}
