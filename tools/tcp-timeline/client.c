// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-tcp-timeline client: connect (optionally from --bind/--sport), send
 * the header and the N bytes of the pattern (as one stream, or as
 * messages: messages.c), read the server's verdict, say goodbye, print the
 * result.
 */
#include "tcp_timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdlib.h>
#include <unistd.h>
#include <linux/tcp.h>

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

int run_client(const struct opts *o)
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
