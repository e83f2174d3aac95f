// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-tcp-timeline client, message mode (--msg-size S, --depth D): at most
 * D messages unacknowledged, each timed from the moment a slot frees for
 * it to the moment its ack is read, as mrc-perf times a WRITE.
 */
#include "tcp_timeline.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>

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
int send_messages(const struct opts *o, int fd, uint8_t *buf, uint64_t deadline,
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

int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The pct-th percentile of n sorted values (the rank mrc-perf uses), in us. */
double percentile_us(const uint64_t *v, uint64_t n, unsigned int pct)
{
	uint64_t rank;

	if (!n)
		return 0;
	rank = (n * pct + 99) / 100;
	if (!rank)
		rank = 1;
	return (double)v[rank - 1] / 1e3;
}
