// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-tcp-timeline's sockets: TCP or MPTCP sockets, printing addresses,
 * waits, reads and writes bounded by a deadline (and by SIGINT/SIGTERM),
 * and the subflows of an MPTCP connection.
 */
#include "tcp_timeline.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <linux/mptcp.h>
#include <linux/tcp.h>

bool mptcp_unsupported(int err)
{
	return err == EPROTONOSUPPORT || err == EINVAL || err == ENOPROTOOPT ||
	       err == ESOCKTNOSUPPORT || err == EPROTOTYPE;
}

int make_socket(int family, bool mptcp)
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

const char *addr_str(const struct sockaddr *sa, char *buf, size_t len)
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
int wait_fd(int fd, short events, uint64_t deadline)
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
int read_full(int fd, void *buf, size_t len, uint64_t deadline)
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

int write_full(int fd, const void *buf, size_t len, uint64_t deadline)
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

bool is_mptcp_conn(int fd)
{
	int v = 0;
	socklen_t l = sizeof(v);

	if (getsockopt(fd, IPPROTO_TCP, TCP_IS_MPTCP, &v, &l))
		return false;
	return v != 0;
}

/* The subflows of an MPTCP socket with their addresses and byte counts;
 * the number found, 0 if not MPTCP or the kernel cannot tell. */
int mptcp_subflows(int fd, struct subflow *out, int max)
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
