// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's addresses and path MTU: printing and comparing socket
 * addresses, the MTU towards the peer and of the plane interfaces, and the
 * options of the TCP control socket.
 */
#include "perf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

const char *family_name(int family)
{
	return family == AF_INET6 ? "IPv6" : "IPv4";
}

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

const char *addr_str(const struct sockaddr_storage *ss, char *buf,
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
uint32_t detect_path_mtu(const struct sockaddr_storage *peer, int family,
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
int socket_peer(int fd, struct sockaddr_storage *peer)
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
void set_socket_timeouts(int fd, unsigned int ms)
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
