// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-udp-blast: addresses, sockets, and the pattern both ends share.
 */
#include "blast.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <string.h>
#include <unistd.h>

/* "a,b,c" of numeric IPv4/IPv6 addresses: their count, -E2BIG, -EINVAL. */
int parse_addr_list(const char *s, uint16_t port, struct sockaddr_storage *out, int max)
{
	char buf[INET6_ADDRSTRLEN + 1];
	const char *p = s, *comma;
	size_t len;
	int n = 0;

	while (*p) {
		struct sockaddr_in *a4 = (struct sockaddr_in *)&out[n];
		struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)&out[n];

		if (n == max)
			return -E2BIG;
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (!len || len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, p, len);
		buf[len] = '\0';
		memset(&out[n], 0, sizeof(out[n]));
		if (inet_pton(AF_INET, buf, &a4->sin_addr) == 1) {
			a4->sin_family = AF_INET;
			a4->sin_port = htons(port);
		} else if (inet_pton(AF_INET6, buf, &a6->sin6_addr) == 1) {
			a6->sin6_family = AF_INET6;
			a6->sin6_port = htons(port);
		} else {
			return -EINVAL;
		}
		n++;
		p += len;
		if (*p == ',' && !*++p)
			return -EINVAL;
	}
	return n;
}

socklen_t addr_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					 : sizeof(struct sockaddr_in);
}

/*
 * A UDP socket bound to bind_to (if any) and connected to peer (if any),
 * never fragmenting (a segment over the path MTU is an error, not two
 * fragments), with large buffers: the receiver's must hold the window.
 */
int blast_socket(const struct sockaddr_storage *bind_to, const struct sockaddr_storage *peer)
{
	int family = peer ? peer->ss_family : bind_to->ss_family;
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int pmtu = family == AF_INET6 ? IPV6_PMTUDISC_DO : IP_PMTUDISC_DO;
	int buf = 32 << 20, err;

	if (fd < 0)
		return -errno;
	if (family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	else
		setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &pmtu, sizeof(pmtu));
	/* FORCE needs CAP_NET_ADMIN; without it the sysctl maximum applies. */
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)))
		setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	if ((bind_to && bind(fd, (const struct sockaddr *)bind_to, addr_len(bind_to))) ||
	    (peer && connect(fd, (const struct sockaddr *)peer, addr_len(peer)))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

/* UDP payload that fits the connected socket's path MTU, 0 if unknown. */
uint32_t path_seg_bytes(int fd, int family)
{
	socklen_t len = sizeof(int);
	int mtu = 0;

	if (family == AF_INET6) {
		if (getsockopt(fd, IPPROTO_IPV6, IPV6_MTU, &mtu, &len) || mtu <= 48)
			return 0;
		return (uint32_t)mtu - 48;
	}
	if (getsockopt(fd, IPPROTO_IP, IP_MTU, &mtu, &len) || mtu <= 28)
		return 0;
	return (uint32_t)mtu - 28;
}

/* Slot s's bytes: a different sequence per slot, so a segment placed in
 * the wrong slot (or a stale one) does not match. */
void pattern_slot(uint32_t s, uint8_t *out, size_t len)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (s + 1);

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		out[i] = (uint8_t)x;
	}
}
