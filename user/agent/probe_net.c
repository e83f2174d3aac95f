// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Endpoint packets, addresses, sockets and the link watch; see probe_net.h.
 */
#define _GNU_SOURCE
#include "agent/probe_net.h"
#include "common/errmsg.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP	0x10000
#endif


/* ---- packets ------------------------------------------------------------ */

static void ep_build(uint8_t *buf, const struct mrc_eph *eph)
{
	struct mrc_bth bth = { .opcode = MRC_OP_EP_REQUEST };

	memcpy(buf, &bth, sizeof(bth));
	memcpy(buf + sizeof(bth), eph, sizeof(*eph));
}

void ep_build_probe(uint8_t *buf, uint32_t req_id, uint32_t ev, uint8_t plane,
		    uint16_t reply_port, uint8_t format, uint32_t srv6_block_be)
{
	/*
	 * SRv6: TC puts the probe in the envelope of the EV's uSID, as the
	 * data. Else an EV wider than the port is STEV: TC puts its high bits
	 * in the flow label, as on the data. (For 16-bit EVs both formats
	 * send label 0, so the flag would change nothing.)
	 */
	int srv6 = format == MRC_EVF_SRV6;
	struct mrc_eph eph = {
		.kind = MRC_EP_EV_PROBE,
		.plane = plane,
		.flags = srv6 ? MRC_EPH_F_SRV6 : ev > 0xffff ? MRC_EPH_F_STEV : 0,
		.req_id = htonl(req_id),
		.ev = htonl(ev),
		.reply_port = htons(reply_port),
		.srv6_block = srv6 ? srv6_block_be : 0,
	};

	ep_build(buf, &eph);
}

void ep_build_port_status(uint8_t *buf, uint8_t plane, uint8_t status)
{
	struct mrc_eph eph = {
		.kind = MRC_EP_PORT_STATUS,
		.plane = plane,
		.status = status,
	};

	ep_build(buf, &eph);
}

int ep_parse(const void *buf, size_t len, uint8_t *opcode, struct mrc_eph *eph)
{
	struct mrc_bth bth;

	if (len < EP_PKT_LEN)
		return -EINVAL;
	memcpy(&bth, buf, sizeof(bth));
	if (bth.opcode != MRC_OP_EP_REQUEST && bth.opcode != MRC_OP_EP_RESPONSE)
		return -EINVAL;
	memcpy(eph, (const uint8_t *)buf + sizeof(bth), sizeof(*eph));
	if (eph->kind != MRC_EP_EV_PROBE && eph->kind != MRC_EP_PORT_STATUS)
		return -EINVAL;
	eph->req_id = ntohl(eph->req_id);
	eph->ev = ntohl(eph->ev);
	eph->reply_port = ntohs(eph->reply_port);
	*opcode = bth.opcode;
	return 0;
}

/* ---- addresses ---------------------------------------------------------- */

static const uint8_t v4mapped_prefix[12] = { [10] = 0xff, [11] = 0xff };

bool addr_is_v4mapped(const uint8_t a[16])
{
	return !memcmp(a, v4mapped_prefix, sizeof(v4mapped_prefix));
}

bool addr_is_zero(const uint8_t a[16])
{
	static const uint8_t zero[16];

	return !memcmp(a, zero, sizeof(zero));
}

socklen_t addr_to_sockaddr(const uint8_t a[16], uint16_t port,
			   struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (addr_is_v4mapped(a)) {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		in->sin_family = AF_INET;
		in->sin_port = htons(port);
		memcpy(&in->sin_addr, a + 12, 4);
		return sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons(port);
		memcpy(&in6->sin6_addr, a, 16);
		return sizeof(*in6);
	}
}

void addr_from_sockaddr(const struct sockaddr_storage *ss, uint8_t a[16])
{
	if (ss->ss_family == AF_INET) {
		memcpy(a, v4mapped_prefix, sizeof(v4mapped_prefix));
		memcpy(a + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else {
		memcpy(a, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	}
}

int addr_parse(const char *s, uint8_t a[16])
{
	struct in_addr in;

	if (inet_pton(AF_INET, s, &in) == 1) {
		memcpy(a, v4mapped_prefix, sizeof(v4mapped_prefix));
		memcpy(a + 12, &in, 4);
		return 0;
	}
	return inet_pton(AF_INET6, s, a) == 1 ? 0 : -EINVAL;
}

const char *addr_text(const uint8_t a[16], char *buf, size_t len)
{
	const char *s = addr_is_v4mapped(a) ?
		inet_ntop(AF_INET, a + 12, buf, (socklen_t)len) :
		inet_ntop(AF_INET6, a, buf, (socklen_t)len);

	return s ? s : "?";
}

/* ---- sockets ------------------------------------------------------------ */

static int bound_port(int fd, uint16_t *port)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return -errno;
	*port = ntohs(ss.ss_family == AF_INET ?
		      ((struct sockaddr_in *)&ss)->sin_port :
		      ((struct sockaddr_in6 *)&ss)->sin6_port);
	return 0;
}

/*
 * Freebind: an IPv6 address may still be tentative (duplicate address
 * detection) when mrcd starts with the interface.
 */
static void set_freebind(int fd, int family)
{
	int one = 1;

	if (family == AF_INET)
		setsockopt(fd, IPPROTO_IP, IP_FREEBIND, &one, sizeof(one));
	else
		setsockopt(fd, IPPROTO_IPV6, IPV6_FREEBIND, &one, sizeof(one));
}

int plane_socket_open(const char *ifname, int family, const uint8_t *addr,
		      uint16_t *port, char *err, size_t errlen)
{
	struct sockaddr_storage ss = {};
	socklen_t len;
	int fd, rc, one = 1;

	fd = socket(family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(-errno, err, errlen, "socket: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, ifname, (socklen_t)strlen(ifname) + 1)) {
		rc = -errno;
		close(fd);
		return fail(rc, err, errlen, "binding a socket to %s: %s", ifname,
			    strerror(-rc));
	}
	set_freebind(fd, family);
	if (family == AF_INET) {
		struct sockaddr_in *in = (struct sockaddr_in *)&ss;

		in->sin_family = AF_INET;
		memcpy(&in->sin_addr, addr, 4);
		len = sizeof(*in);
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;

		in6->sin6_family = AF_INET6;
		memcpy(&in6->sin6_addr, addr, 16);
		len = sizeof(*in6);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (bind(fd, (struct sockaddr *)&ss, len) || bound_port(fd, port)) {
		char a[INET6_ADDRSTRLEN];

		rc = -errno;
		close(fd);
		inet_ntop(family, addr, a, sizeof(a));
		return fail(rc, err, errlen, "binding a socket to %s on %s: %s", a,
			    ifname, strerror(-rc));
	}
	return fd;
}

int ctl_socket_open(uint16_t *port, char *err, size_t errlen)
{
	struct sockaddr_in6 sa = { .sin6_family = AF_INET6, .sin6_addr = IN6ADDR_ANY_INIT };
	int fd, rc, zero = 0;

	fd = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(-errno, err, errlen, "control socket: %s", strerror(errno));
	/* Port status from IPv4 peers arrives as v4-mapped addresses. */
	if (setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || bound_port(fd, port)) {
		rc = -errno;
		close(fd);
		return fail(rc, err, errlen, "control socket: %s", strerror(-rc));
	}
	return fd;
}

/* ---- plane links -------------------------------------------------------- */

bool link_flags_up(unsigned int flags)
{
	return (flags & IFF_UP) && (flags & IFF_RUNNING) && (flags & IFF_LOWER_UP);
}

/* SIOCGIFFLAGS has no IFF_LOWER_UP (16 bits); IFF_RUNNING follows carrier too. */
bool link_is_up(int ifindex)
{
	struct ifreq ifr = {};
	bool up = false;
	int fd;

	if (!if_indextoname((unsigned int)ifindex, ifr.ifr_name))
		return false;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr))
		up = (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
	close(fd);
	return up;
}

int link_watch_open(char *err, size_t errlen)
{
	struct sockaddr_nl sa = { .nl_family = AF_NETLINK, .nl_groups = RTMGRP_LINK };
	int fd, rc;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (fd < 0)
		return fail(-errno, err, errlen, "rtnetlink socket: %s", strerror(errno));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		rc = -errno;
		close(fd);
		return fail(rc, err, errlen, "rtnetlink: subscribing to link changes: %s",
			    strerror(-rc));
	}
	return fd;
}

static void link_message(const struct nlmsghdr *nh, link_change_fn cb, void *arg)
{
	const struct ifinfomsg *ifi = NLMSG_DATA(nh);

	if (nh->nlmsg_len < NLMSG_LENGTH(sizeof(*ifi)))
		return;
	if (nh->nlmsg_type == RTM_DELLINK)
		cb(arg, ifi->ifi_index, false);
	else if (nh->nlmsg_type == RTM_NEWLINK)
		cb(arg, ifi->ifi_index, link_flags_up(ifi->ifi_flags));
}

int link_watch_read(int fd, link_change_fn cb, void *arg)
{
	char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
	struct nlmsghdr *nh;
	ssize_t n;
	int len;

	for (;;) {
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno == ENOBUFS ? -ENOBUFS : 0;
		len = (int)n;
		for (nh = (struct nlmsghdr *)buf; NLMSG_OK(nh, len);
		     nh = NLMSG_NEXT(nh, len))
			link_message(nh, cb, arg);
	}
}
