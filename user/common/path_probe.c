// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * EV path discovery (path_probe.h), which
 * spine each EV of a QP's table crosses, so the active EVs of a plane can
 * be split evenly over its spines and XDP can take a failed spine's EVs
 * out together (the EV word's path).
 *
 * ECMP hashes the 5-tuple (and, for IPv6, the flow label), so a plane's 64
 * EVs land on its spines as a coin would: 36 on one and 28 on the other is
 * common, and the spines' load follows the EV counts. A UDP probe with the
 * data's addresses, ports and flow label and a hop limit of 2 takes the
 * same path and dies at the spine (host -> leaf -> spine), which answers
 * with ICMP (ICMPv6) Time Exceeded from its own address. Per plane we
 * then keep the same number of EVs per spine active and make the surplus
 * backups (they replace EVs that keep being marked). A fabric that does
 * not answer changes nothing.
 *
 * IPv4 probes go through a raw UDP socket (the kernel writes the IP
 * header, TTL 2). IPv6 probes carry a header of our own (IPPROTO_RAW):
 * the flow label must be the one data packets carry, which libmrc's
 * socket leaves at 0 (no automatic flow labels) and TC fills with the
 * EV's high 16 bits for STEV; an ordinary socket could not set it without
 * registering every label. The wait is bounded (PROBE_WAIT_MS, and less
 * once answers stop coming).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/icmp6.h>
#include <netinet/ip.h>
#include <netinet/ip6.h>
#include <netinet/ip_icmp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/path_probe.h"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#define PROBE_WAIT_MS	40	/* longest wait for the first answer */
#define PROBE_QUIET_MS	5	/* stop once answers pause this long */
#define PROBE_HOPS	2	/* expires at the spine */
#define MAX_ROUTERS	64	/* distinct spines one discovery tells apart */
#define MAX_SPINES	16	/* spines per plane that get a path label */

/* One plane's probe socket; addresses IPv6 (IPv4-mapped for IPv4). */
struct plane_probe {
	int fd;
	int family;
	struct in6_addr src, dst;
};

/* Everything one discovery sends and hears. */
struct discovery {
	struct plane_probe pp[MRC_MAX_PLANES_ABI];
	int n_planes;			/* planes 1..n_planes may have probes */
	int icmp4, icmp6;		/* answer sockets, -1 if not needed */
	uint8_t format;			/* enum mrc_ev_format of the table */
	/* Routers that answered: router[i] (1-based index here) per entry. */
	struct in6_addr routers[MAX_ROUTERS];
	uint32_t n_routers;
	uint32_t router[MRC_MAX_EVS];
};

static void map_v4(struct in6_addr *a, const void *addr4)
{
	memset(a, 0, sizeof(*a));
	a->s6_addr[10] = a->s6_addr[11] = 0xff;
	memcpy(&a->s6_addr[12], addr4, 4);
}

/* The 1-based id of router `addr`, added on first sight; 0 when full. */
static uint32_t router_id(struct discovery *d, const struct in6_addr *addr)
{
	for (uint32_t r = 0; r < d->n_routers; r++)
		if (IN6_ARE_ADDR_EQUAL(&d->routers[r], addr))
			return r + 1;
	if (d->n_routers == MAX_ROUTERS)
		return 0;
	d->routers[d->n_routers++] = *addr;
	return d->n_routers;
}

/* ---- sending -------------------------------------------------------------- */

static int bind_to_plane(int fd, const struct mrc_plane *pl)
{
	return setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, pl->name,
			  (socklen_t)strnlen(pl->name, sizeof(pl->name)));
}

static int open_probe4(const struct mrc_plane *pl, struct plane_probe *pp)
{
	struct sockaddr_in me = { .sin_family = AF_INET };
	int ttl = PROBE_HOPS;

	pp->fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
	if (pp->fd < 0)
		return -errno;
	memcpy(&me.sin_addr, pl->addr4, 4);
	if (setsockopt(pp->fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) ||
	    bind_to_plane(pp->fd, pl) ||
	    bind(pp->fd, (struct sockaddr *)&me, sizeof(me)))
		return -errno;
	pp->family = AF_INET;
	map_v4(&pp->src, pl->addr4);
	return 0;
}

static int open_probe6(const struct mrc_plane *pl, struct plane_probe *pp)
{
	/* IPPROTO_RAW: we write the IPv6 header (IPV6_HDRINCL). */
	pp->fd = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	if (pp->fd < 0)
		return -errno;
	if (bind_to_plane(pp->fd, pl))
		return -errno;
	pp->family = AF_INET6;
	memcpy(&pp->src, pl->addr6, 16);
	return 0;
}

/* The probe's payload: 4 zero bytes (docs/WIRE.md 8a). */
struct probe_udp {
	struct udphdr udp;
	uint32_t zero;
};

static void send_probe4(const struct plane_probe *pp, uint16_t sport, uint16_t dport)
{
	struct sockaddr_in to = { .sin_family = AF_INET };
	struct probe_udp pkt = {
		.udp = { .source = htons(sport), .dest = htons(dport),
			 .len = htons(sizeof(pkt)), .check = 0 },
	};

	memcpy(&to.sin_addr, &pp->dst.s6_addr[12], 4);
	sendto(pp->fd, &pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to));
}

static uint32_t sum16(const void *p, size_t len, uint32_t sum)
{
	const uint8_t *b = p;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (len & 1)
		sum += (uint32_t)b[len - 1] << 8;
	return sum;
}

static uint16_t fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

/* UDP over IPv6 must carry a checksum (pseudo-header: RFC 8200 8.1). */
static uint16_t udp6_checksum(const struct ip6_hdr *ip, const struct probe_udp *u)
{
	uint32_t sum = sum16(&ip->ip6_src, 32, 0);
	uint16_t c;

	sum += sizeof(*u) + IPPROTO_UDP;
	c = fold(sum16(u, sizeof(*u), sum));
	return htons(c ? c : 0xffff);
}

static void send_probe6(const struct plane_probe *pp, uint32_t flow_label,
			uint16_t sport, uint16_t dport)
{
	struct sockaddr_in6 to = { .sin6_family = AF_INET6, .sin6_addr = pp->dst };
	struct {
		struct ip6_hdr ip;	/* 40 bytes: u follows without padding */
		struct probe_udp u;
	} pkt = {
		.ip = {
			.ip6_flow = htonl(6u << 28 | (flow_label & 0xfffff)),
			.ip6_plen = htons(sizeof(struct probe_udp)),
			.ip6_nxt = IPPROTO_UDP,
			.ip6_hlim = PROBE_HOPS,
			.ip6_src = pp->src,
			.ip6_dst = pp->dst,
		},
		.u.udp = { .source = htons(sport), .dest = htons(dport),
			   .len = htons(sizeof(struct probe_udp)) },
	};

	_Static_assert(sizeof(pkt) == 40 + 12, "probe: IPv6 header then UDP");
	pkt.u.udp.check = udp6_checksum(&pkt.ip, &pkt.u);
	sendto(pp->fd, &pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to));
}

/* The flow label data packets of EV `ev` carry (TC's stamp, tc_stamp.h). */
static uint32_t data_flow_label(uint8_t format, uint32_t ev)
{
	return format == MRC_EVF_STEV ? ev >> 16 : 0;
}

/* ---- hearing -------------------------------------------------------------- */

/*
 * Which entry a quoted probe was: sent on `plane` (0-based) with source
 * port `sport` and, over IPv6, flow label `label` (the EV's high bits for
 * STEV). Entries that already have a router are skipped (EVs repeat
 * across planes, never within one).
 */
static int entry_of(const struct mrc_qp_evs *evs, uint32_t n, const struct discovery *d,
		    int plane, uint16_t sport, int family, uint32_t label)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t ev = evs->ev[i].ev;

		if (evs->ev[i].plane != plane + 1 || (uint16_t)ev != sport || d->router[i])
			continue;
		if (family == AF_INET6 && (data_flow_label(d->format, ev) & 0xffff) !=
		    (label & 0xffff))
			continue;
		return (int)i;
	}
	return -1;
}

static int plane_of(const struct discovery *d, int family, const struct in6_addr *src,
		    const struct in6_addr *dst)
{
	for (int p = 0; p < d->n_planes; p++)
		if (d->pp[p].fd >= 0 && d->pp[p].family == family &&
		    IN6_ARE_ADDR_EQUAL(&d->pp[p].src, src) &&
		    IN6_ARE_ADDR_EQUAL(&d->pp[p].dst, dst))
			return p;
	return -1;
}

/* Entry i (-1: none of ours) crossed router `from`. */
static void record(struct discovery *d, int i, const struct in6_addr *from,
		   uint32_t *answered)
{
	if (i < 0)
		return;
	d->router[i] = router_id(d, from);
	if (d->router[i])
		(*answered)++;
}

/* An ICMP Time Exceeded (with its IP header) quoting one of our probes. */
static void hear4(struct discovery *d, const struct mrc_qp_evs *evs, uint32_t n,
		  const uint8_t *buf, size_t len, uint32_t *answered)
{
	const struct iphdr *ip = (const void *)buf, *in;
	const struct icmphdr *icmp;
	const struct udphdr *udp;
	struct in6_addr src, dst, from;
	size_t off;
	int plane, i;

	if (len < sizeof(*ip) || ip->protocol != IPPROTO_ICMP)
		return;
	off = (size_t)ip->ihl * 4;
	if (len < off + sizeof(*icmp) + sizeof(*in) + 8)
		return;
	icmp = (const void *)(buf + off);
	in = (const void *)(icmp + 1);
	if (icmp->type != ICMP_TIME_EXCEEDED || in->protocol != IPPROTO_UDP ||
	    len < off + sizeof(*icmp) + (size_t)in->ihl * 4 + 8)
		return;
	udp = (const void *)((const uint8_t *)in + in->ihl * 4);
	map_v4(&src, &in->saddr);
	map_v4(&dst, &in->daddr);
	map_v4(&from, &ip->saddr);
	plane = plane_of(d, AF_INET, &src, &dst);
	i = plane < 0 ? -1 : entry_of(evs, n, d, plane, ntohs(udp->source), AF_INET, 0);
	record(d, i, &from, answered);
}

/*
 * An ICMPv6 Time Exceeded (a raw ICMPv6 socket gives it without the IPv6
 * header; `from` is its source) quoting one of our probes.
 */
static void hear6(struct discovery *d, const struct mrc_qp_evs *evs, uint32_t n,
		  const uint8_t *buf, size_t len, const struct in6_addr *from,
		  uint32_t *answered)
{
	const struct icmp6_hdr *icmp = (const void *)buf;
	const struct ip6_hdr *in = (const void *)(icmp + 1);
	const struct udphdr *udp = (const void *)(in + 1);
	int plane, i;

	if (len < sizeof(*icmp) + sizeof(*in) + sizeof(*udp) ||
	    icmp->icmp6_type != ICMP6_TIME_EXCEEDED || in->ip6_nxt != IPPROTO_UDP)
		return;
	plane = plane_of(d, AF_INET6, &in->ip6_src, &in->ip6_dst);
	i = plane < 0 ? -1 : entry_of(evs, n, d, plane, ntohs(udp->source), AF_INET6,
				      ntohl(in->ip6_flow) & 0xfffff);
	record(d, i, from, answered);
}

static void drain(struct discovery *d, int fd, const struct mrc_qp_evs *evs,
		  uint32_t n, uint32_t *answered)
{
	uint8_t buf[512];
	struct sockaddr_in6 from;
	socklen_t flen = sizeof(from);
	ssize_t len;

	while ((len = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT,
			       (struct sockaddr *)&from, &flen)) > 0) {
		if (fd == d->icmp4)
			hear4(d, evs, n, buf, (size_t)len, answered);
		else
			hear6(d, evs, n, buf, (size_t)len, &from.sin6_addr, answered);
		flen = sizeof(from);
	}
}

/* Collect answers until all came, or they pause, or the wait runs out. */
static uint32_t collect_answers(struct discovery *d, const struct mrc_qp_evs *evs,
				uint32_t n, uint32_t probes)
{
	uint64_t start = now_ns(), last = 0;
	uint32_t answered = 0;

	while (answered < probes) {
		uint64_t now = now_ns(), seen = answered;
		struct pollfd pfd[2] = {
			{ .fd = d->icmp4, .events = POLLIN },
			{ .fd = d->icmp6, .events = POLLIN },
		};

		if (last ? now - last > PROBE_QUIET_MS * 1000000ull :
			   now - start > PROBE_WAIT_MS * 1000000ull)
			break;
		if (poll(pfd, 2, 1) <= 0)
			continue;
		for (int k = 0; k < 2; k++)
			if (pfd[k].revents & POLLIN)
				drain(d, pfd[k].fd, evs, n, &answered);
		if (answered != seen)
			last = now_ns();
	}
	return answered;
}

/* ---- balancing ------------------------------------------------------------ */

/* Routers (spines) one plane's active EVs reach, and EVs per router. */
struct plane_routers {
	uint32_t n;
	uint32_t id[MAX_SPINES];
	uint32_t count[MAX_SPINES];
};

static int router_index(const struct plane_routers *pr, uint32_t id)
{
	for (uint32_t r = 0; r < pr->n; r++)
		if (pr->id[r] == id)
			return (int)r;
	return -1;
}

static int count_routers(const struct mrc_qp_evs *evs, uint32_t n,
			 uint32_t plane, const uint32_t *router,
			 struct plane_routers *pr)
{
	memset(pr, 0, sizeof(*pr));
	for (uint32_t i = 0; i < n; i++) {
		int r;

		if (evs->ev[i].plane != plane ||
		    !(evs->ev[i].flags & MRC_EV_F_ACTIVE))
			continue;
		if (!router[i])
			return -1;	/* an EV without an answer: unknown split */
		r = router_index(pr, router[i]);
		if (r < 0) {
			if (pr->n == MAX_SPINES)
				return -1;
			r = (int)pr->n++;
			pr->id[r] = router[i];
		}
		pr->count[r]++;
	}
	return 0;
}

/*
 * Keep `keep` EVs per router active on every plane and make the rest
 * backups, so every spine of every plane gets the same share. Done only
 * when every plane answered for all its EVs and has the same number of
 * spines (2 or more); anything else leaves the table as generated.
 */
static void balance_planes(struct mrc_qp_evs *evs, uint32_t n, int n_planes,
			   const uint32_t *router)
{
	struct plane_routers pr[MRC_MAX_PLANES_ABI];
	uint32_t keep = UINT32_MAX, spines = 0;

	for (int p = 0; p < n_planes; p++) {
		if (count_routers(evs, n, (uint32_t)p + 1, router, &pr[p]))
			return;
		if (pr[p].n < 2 || (spines && pr[p].n != spines))
			return;
		spines = pr[p].n;
		for (uint32_t r = 0; r < pr[p].n; r++)
			keep = pr[p].count[r] < keep ? pr[p].count[r] : keep;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = evs->ev[i].plane - 1;
		int r;

		if (p >= (uint32_t)n_planes || !(evs->ev[i].flags & MRC_EV_F_ACTIVE))
			continue;
		r = router_index(&pr[p], router[i]);
		if (r >= 0 && pr[p].count[r] > keep) {
			/* Drop the surplus from the end: keeps earlier EVs active. */
			pr[p].count[r]--;
			evs->ev[i].flags &= ~MRC_EV_F_ACTIVE;
		}
	}
}

/*
 * Name each answered EV's spine: per plane, the routers in the order they
 * first answered get path 1, 2, ... (at most MAX_SPINES), so XDP can take
 * all EVs of a failed spine out together. Unanswered EVs keep path 0.
 */
static void label_paths(struct mrc_qp_evs *evs, uint32_t n, const uint32_t *router)
{
	uint32_t seen[MRC_MAX_PLANES_ABI][MAX_SPINES] = {}, count[MRC_MAX_PLANES_ABI] = {};

	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = evs->ev[i].plane - 1, r;

		if (p >= MRC_MAX_PLANES_ABI || !router[i])
			continue;
		for (r = 0; r < count[p] && seen[p][r] != router[i]; r++)
			;
		if (r == count[p]) {
			if (count[p] == MAX_SPINES)
				continue;	/* more spines than we label */
			seen[p][count[p]++] = router[i];
		}
		evs->ev[i].path = (uint8_t)(r + 1);
	}
}

/* ---- one discovery -------------------------------------------------------- */

static bool has_addr6(const struct mrc_plane *pl)
{
	static const uint8_t none[16];

	return memcmp(pl->addr6, none, 16) != 0;
}

/* Plane p's probe socket towards the peer's address on that plane. */
static void open_plane(struct discovery *d, int planes_fd,
		       const struct in6_addr *peer, uint32_t p)
{
	struct plane_probe *pp = &d->pp[p];
	struct mrc_plane pl;
	int rc;

	if (bpf_map_lookup_elem(planes_fd, &p, &pl) || !pl.ifindex)
		return;
	if (IN6_IS_ADDR_V4MAPPED(peer))
		rc = d->icmp4 >= 0 && (pl.addr4[0] | pl.addr4[1] | pl.addr4[2] | pl.addr4[3]) ?
		     open_probe4(&pl, pp) : -ENOENT;
	else
		rc = d->icmp6 >= 0 && has_addr6(&pl) ? open_probe6(&pl, pp) : -ENOENT;
	if (rc) {
		if (pp->fd >= 0)
			close(pp->fd);
		pp->fd = -1;
		return;
	}
	pp->dst = *peer;
	d->n_planes = (int)p + 1;
}

static int open_answer_socket(int family, int proto)
{
	int fd = socket(family, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, proto);
	int rcvbuf = 8 << 20;	/* all answers arrive at once */

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));
	if (fd >= 0 && family == AF_INET6) {
		struct icmp6_filter f;

		ICMP6_FILTER_SETBLOCKALL(&f);
		ICMP6_FILTER_SETPASS(ICMP6_TIME_EXCEEDED, &f);
		setsockopt(fd, IPPROTO_ICMPV6, ICMP6_FILTER, &f, sizeof(f));
	}
	return fd;
}

static uint32_t send_probes(struct discovery *d, const struct mrc_qp_evs *evs,
			    uint32_t n, uint16_t dport)
{
	uint32_t probes = 0;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = evs->ev[i].plane - 1, ev = evs->ev[i].ev;
		const struct plane_probe *pp = &d->pp[p];

		if (p >= MRC_MAX_PLANES_ABI || pp->fd < 0)
			continue;
		if (pp->family == AF_INET)
			send_probe4(pp, (uint16_t)ev, dport);
		else
			send_probe6(pp, data_flow_label(d->format, ev), (uint16_t)ev, dport);
		probes++;
	}
	return probes;
}

int mrc_path_probe(int planes_fd, const struct in6_addr *peers, uint32_t n_peers,
		   uint16_t dport, struct mrc_qp_evs *evs, uint32_t n,
		   uint8_t format, bool balance)
{
	struct discovery *d = calloc(1, sizeof(*d));
	uint32_t probes;
	int answered = 0;

	if (!d)
		return 0;
	d->format = format;
	for (int p = 0; p < MRC_MAX_PLANES_ABI; p++)
		d->pp[p].fd = -1;
	/* Without the privilege for raw sockets the table stays as generated. */
	d->icmp4 = open_answer_socket(AF_INET, IPPROTO_ICMP);
	d->icmp6 = open_answer_socket(AF_INET6, IPPROTO_ICMPV6);
	if (n > MRC_MAX_EVS)
		n = MRC_MAX_EVS;
	for (uint32_t p = 0; p < n_peers && p < MRC_MAX_PLANES_ABI; p++)
		open_plane(d, planes_fd, &peers[p], p);
	probes = send_probes(d, evs, n, dport);
	if (probes && collect_answers(d, evs, n, probes)) {
		label_paths(evs, n, d->router);
		if (balance)
			balance_planes(evs, n, d->n_planes, d->router);
		answered = 1;
	}
	for (int p = 0; p < MRC_MAX_PLANES_ABI; p++)
		if (d->pp[p].fd >= 0)
			close(d->pp[p].fd);
	if (d->icmp4 >= 0)
		close(d->icmp4);
	if (d->icmp6 >= 0)
		close(d->icmp6);
	free(d);
	return answered;
}
