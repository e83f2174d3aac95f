// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "paths" (see LAYERS and paths.h): a QP's EV table, built from its
 * EV profile at RTR, and EV path discovery: which spine each EV of the
 * table crosses, so the active EVs of a plane can be split evenly over
 * its spines.
 *
 * ECMP hashes the 5-tuple, so a plane's 64 EVs land on its spines as a
 * coin would: 36 on one and 28 on the other is common, and the spines'
 * load follows the EV counts. A UDP probe with the EV as source port, the
 * data's addresses and port, and TTL 2 takes the same path and dies at the
 * spine (host -> leaf -> spine), which answers with ICMP Time Exceeded
 * from its own address. Per plane we then keep the same number of EVs per
 * spine active and make the surplus backups (they replace EVs that keep
 * being marked). A fabric that does not answer changes nothing.
 *
 * IPv4 only for now; the wait is bounded (MRC_PROBE_WAIT_MS, and less once
 * answers stop coming).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netinet/ip.h>
#include <netinet/ip_icmp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/ev_profile.h"
#include "paths.h"

#define MRC_PROBE_WAIT_MS	40	/* longest wait for the first answer */
#define MRC_PROBE_QUIET_MS	5	/* stop once answers pause this long */
#define PROBE_TTL		2	/* expires at the spine */

struct plane_probe {
	int fd;
	struct in_addr src, dst;
};

static int open_probe_socket(const struct mrc_plane *pl, struct plane_probe *pp)
{
	struct sockaddr_in me = { .sin_family = AF_INET };
	int ttl = PROBE_TTL;

	pp->fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_UDP);
	if (pp->fd < 0)
		return -errno;
	memcpy(&me.sin_addr, pl->addr4, 4);
	if (setsockopt(pp->fd, IPPROTO_IP, IP_TTL, &ttl, sizeof(ttl)) ||
	    setsockopt(pp->fd, SOL_SOCKET, SO_BINDTODEVICE, pl->name,
		       (socklen_t)strnlen(pl->name, sizeof(pl->name))) ||
	    bind(pp->fd, (struct sockaddr *)&me, sizeof(me))) {
		int err = -errno;

		close(pp->fd);
		pp->fd = -1;
		return err;
	}
	pp->src = me.sin_addr;
	return 0;
}

/* One probe: a UDP header with the EV as source port, 4 zero bytes. */
static void send_probe(struct plane_probe *pp, uint16_t sport, uint16_t dport)
{
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr = pp->dst };
	struct { struct udphdr udp; uint32_t zero; } pkt = {
		.udp = { .source = htons(sport), .dest = htons(dport),
			 .len = htons(sizeof(pkt)), .check = 0 },
	};

	sendto(pp->fd, &pkt, sizeof(pkt), 0, (struct sockaddr *)&to, sizeof(to));
}

/*
 * An ICMP Time Exceeded quoting one of our probes: the plane it was sent
 * on (by quoted addresses), its source port and the answering router.
 */
static int parse_answer(const uint8_t *buf, ssize_t len,
			const struct plane_probe *pp, int n_planes,
			int *plane, uint16_t *sport, uint32_t *router)
{
	const struct iphdr *ip = (const void *)buf, *in;
	const struct icmphdr *icmp;
	const struct udphdr *udp;
	size_t off;

	if (len < (ssize_t)sizeof(*ip) || ip->protocol != IPPROTO_ICMP)
		return -1;
	off = (size_t)ip->ihl * 4;
	if ((size_t)len < off + sizeof(*icmp) + sizeof(*in) + 8)
		return -1;
	icmp = (const void *)(buf + off);
	if (icmp->type != ICMP_TIME_EXCEEDED)
		return -1;
	in = (const void *)(icmp + 1);
	if (in->protocol != IPPROTO_UDP ||
	    (size_t)len < off + sizeof(*icmp) + (size_t)in->ihl * 4 + 8)
		return -1;
	udp = (const void *)((const uint8_t *)in + in->ihl * 4);
	for (int p = 0; p < n_planes; p++) {
		if (pp[p].fd < 0 || in->saddr != pp[p].src.s_addr ||
		    in->daddr != pp[p].dst.s_addr)
			continue;
		*plane = p;
		*sport = ntohs(udp->source);
		*router = ip->saddr;
		return 0;
	}
	return -1;
}

/* Collect answers until all came, or they pause, or the wait runs out. */
static int collect_answers(int icmp_fd, struct plane_probe *pp, int n_planes,
			   struct mrc_qp_evs *evs, uint32_t n, uint32_t *router)
{
	uint64_t start = mrc_now_ns(), last = 0;
	uint32_t answered = 0;
	uint8_t buf[512];

	while (answered < n) {
		uint64_t now = mrc_now_ns();
		struct pollfd pfd = { .fd = icmp_fd, .events = POLLIN };
		ssize_t len;

		if (last ? now - last > MRC_PROBE_QUIET_MS * 1000000ull :
			   now - start > MRC_PROBE_WAIT_MS * 1000000ull)
			break;
		if (poll(&pfd, 1, 1) <= 0)
			continue;
		while ((len = recv(icmp_fd, buf, sizeof(buf), MSG_DONTWAIT)) > 0) {
			uint16_t sport;
			uint32_t from;
			int plane;

			if (parse_answer(buf, len, pp, n_planes, &plane, &sport, &from))
				continue;
			for (uint32_t i = 0; i < n; i++) {
				if (evs->ev[i].plane != plane + 1 ||
				    (uint16_t)evs->ev[i].ev != sport || router[i])
					continue;
				router[i] = from;
				answered++;
				last = mrc_now_ns();
				break;
			}
		}
	}
	return (int)answered;
}

/* Routers (spines) one plane's active EVs reach, and EVs per router. */
struct plane_routers {
	uint32_t n;
	uint32_t addr[16];
	uint32_t count[16];
};

static int router_index(const struct plane_routers *pr, uint32_t addr)
{
	for (uint32_t r = 0; r < pr->n; r++)
		if (pr->addr[r] == addr)
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
			if (pr->n == 16)
				return -1;
			r = (int)pr->n++;
			pr->addr[r] = router[i];
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
 * first answered get path 1, 2, ... (at most 255), so XDP can take all
 * EVs of a failed spine out together. Unanswered EVs keep path 0.
 */
static void label_paths(struct mrc_qp_evs *evs, uint32_t n, const uint32_t *router)
{
	uint32_t seen[MRC_MAX_PLANES_ABI][16] = {}, count[MRC_MAX_PLANES_ABI] = {};

	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = evs->ev[i].plane - 1, r;

		if (p >= MRC_MAX_PLANES_ABI || !router[i])
			continue;
		for (r = 0; r < count[p] && seen[p][r] != router[i]; r++)
			;
		if (r == count[p]) {
			if (count[p] == 16)
				continue;	/* more spines than we label */
			seen[p][count[p]++] = router[i];
		}
		evs->ev[i].path = (uint8_t)(r + 1);
	}
}

static void balance_evs(struct mrc_qp *qp, struct mrc_qp_evs *evs, uint32_t n)
{
	struct plane_probe pp[MRC_MAX_PLANES_ABI];
	uint32_t router[MRC_MAX_EVS];
	int n_planes = 0, icmp_fd, probes = 0, rcvbuf = 8 << 20;

	memset(router, 0, sizeof(router));
	for (int p = 0; p < MRC_MAX_PLANES_ABI; p++)
		pp[p].fd = -1;
	icmp_fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_ICMP);
	if (icmp_fd < 0)
		return;		/* no privilege: keep the table as generated */
	/* All answers arrive at once, in buffers sized for jumbo frames. */
	setsockopt(icmp_fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf));

	for (uint32_t p = 0; p < qp->n_peers && p < MRC_MAX_PLANES_ABI; p++) {
		const struct in6_addr *peer = &qp->peers[p].sin6_addr;
		struct mrc_plane pl;

		if (!IN6_IS_ADDR_V4MAPPED(peer) ||
		    bpf_map_lookup_elem(mrc_map_fd(qp->ctx, MRC_PIN_PLANES), &p, &pl) || !pl.ifindex ||
		    !(pl.addr4[0] | pl.addr4[1] | pl.addr4[2] | pl.addr4[3]))
			continue;
		if (open_probe_socket(&pl, &pp[p]))
			continue;
		memcpy(&pp[p].dst, &peer->s6_addr[12], 4);
		n_planes = (int)p + 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = evs->ev[i].plane - 1;

		if (p < MRC_MAX_PLANES_ABI && pp[p].fd >= 0) {
			send_probe(&pp[p], (uint16_t)evs->ev[i].ev, qp->ctx->udp_port);
			probes++;
		}
	}
	int got = probes ? collect_answers(icmp_fd, pp, n_planes, evs, n, router) : 0;

	if (got > 0) {
		label_paths(evs, n, router);
		balance_planes(evs, n, n_planes, router);
	}

	for (int p = 0; p < MRC_MAX_PLANES_ABI; p++)
		if (pp[p].fd >= 0)
			close(pp[p].fd);
	close(icmp_fd);
}

/* ---- the EV table --------------------------------------------------------- */

static int local_plane_count(struct mrc_context *ctx)
{
	int n = 0;

	for (uint32_t i = 0; i < MRC_MAX_PLANES_ABI; i++) {
		struct mrc_plane p;

		if (bpf_map_lookup_elem(mrc_map_fd(ctx, MRC_PIN_PLANES), &i, &p) || !p.ifindex)
			break;
		n++;
	}
	return n;
}

/*
 * Is the peer on this host (loopback, or one of our addresses)? Its
 * packets then never meet a NIC, so nothing cuts a UDP GSO burst before
 * the receiver's XDP, which would judge only its first packet: such a QP
 * sends one packet a datagram.
 */
static bool peer_is_local(const struct mrc_qp *qp)
{
	const struct in6_addr *peer = &qp->peers[0].sin6_addr;
	struct ifaddrs *list, *ifa;
	bool local = false;

	if (IN6_IS_ADDR_LOOPBACK(peer) ||
	    (IN6_IS_ADDR_V4MAPPED(peer) && peer->s6_addr[12] == 127))
		return true;
	if (getifaddrs(&list))
		return true;	/* cannot tell: the safe answer */
	for (ifa = list; ifa && !local; ifa = ifa->ifa_next) {
		const struct sockaddr *sa = ifa->ifa_addr;

		if (sa && sa->sa_family == AF_INET)
			local = IN6_IS_ADDR_V4MAPPED(peer) &&
				!memcmp(&peer->s6_addr[12],
					&((const struct sockaddr_in *)sa)->sin_addr, 4);
		else if (sa && sa->sa_family == AF_INET6)
			local = IN6_ARE_ADDR_EQUAL(peer,
				&((const struct sockaddr_in6 *)sa)->sin6_addr);
	}
	freeifaddrs(list);
	return local;
}

/*
 * The QP's EV profile: the one mrcd keeps under that id (it must be
 * ONLINE), or the built-in AUTO profile for id 0 when none is defined.
 */
static int load_ev_profile(struct mrc_qp *qp, struct ev_profile *p,
			   uint32_t *backups)
{
	struct mrc_ev_profile_rec rec;
	uint32_t id = qp->attr.ev_profile_id;
	char err[EV_ERR_LEN];

	if (bpf_map_lookup_elem(mrc_map_fd(qp->ctx, MRC_PIN_EV_PROFILES), &id, &rec)) {
		if (id != 0)
			return -ENOENT;
		*backups = 0;
		return ev_profile_init(p, 0, EV_PROFILE_AUTO, MRC_EVF_UDP, err,
				       sizeof(err));
	}
	if (ev_profile_from_rec(&rec, p, backups))
		return -EINVAL;
	return p->state == EV_PROFILE_STATE_ONLINE ? 0 : -EINVAL;
}

/*
 * The first rotation order: Fisher-Yates with libc's random(), swapping
 * only positions `stride` apart, as TC does when it redraws (see struct
 * mrc_qp_evs). With the table's planes in turn, the rotation visits the
 * planes in turn.
 */
static void shuffle(uint8_t *perm, uint32_t n, uint32_t stride)
{
	for (uint32_t i = 0; i < n; i++)
		perm[i] = (uint8_t)i;
	for (uint32_t i = n - 1; n > 1 && i > 0; i--) {
		uint32_t j = i - stride * ((uint32_t)random() % (i / stride + 1));
		uint8_t t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
}

/* Is entry i of the table on plane (i % planes) + 1 for every i? */
static bool planes_in_turn(const struct mrc_qp_evs *evs, uint32_t n,
			   uint32_t planes)
{
	for (uint32_t i = 0; i < n; i++)
		if (evs->ev[i].plane != i % planes + 1)
			return false;
	return true;
}

/*
 * The table, and fresh per-EV counters, send log and reverse EVs. The
 * counters and the log are new inner maps sized by this QP (its EV count,
 * its window: user/common/qpmaps.h), replacing those of an earlier table
 * or of a dead process that had the slot.
 */
static int publish_ev_table(struct mrc_qp *qp, const struct mrc_qp_evs *evs,
			    uint32_t n_evs)
{
	struct mrc_rev_evs zero_rev = {};
	struct mrc_context *ctx = qp->ctx;
	uint32_t slot = qp->slot;
	int err;

	err = mrc_qpmaps_publish(&ctx->qpmaps, slot, qp->qpn,
				 (uint32_t)qp->attr.mpr_units * MRC_MPR_UNIT, n_evs);
	if (err)
		return err;
	if (bpf_map_update_elem(mrc_map_fd(ctx, MRC_PIN_QP_EVS), &slot, evs, BPF_ANY) ||
	    bpf_map_update_elem(mrc_map_fd(ctx, MRC_PIN_REV_EVS), &slot, &zero_rev, BPF_ANY))
		return -errno;
	return 0;
}

/*
 * Build the QP's path table from its EV profile, spread over the planes
 * both ends have, and reset its per-EV counters, send log and reverse
 * EVs. TC egress sprays over this table from the first packet.
 */
int mrc_install_ev_table(struct mrc_qp *qp)
{
	struct ev_table_entry table[MRC_MAX_EVS];	/* 2 KiB */
	struct mrc_context *ctx = qp->ctx;
	struct mrc_qp_evs evs = {};
	struct ev_profile prof;
	char err[EV_ERR_LEN];
	uint32_t backups = 0, n = 0;
	int planes = local_plane_count(ctx), ret;

	if (planes > qp->n_peers)
		planes = qp->n_peers;
	if (planes < 1)
		planes = 1;
	ret = load_ev_profile(qp, &prof, &backups);
	if (ret)
		return ret;
	ret = ev_profile_generate(&prof, (unsigned int)planes, backups, table,
				  MRC_MAX_EVS, &n, err, sizeof(err));
	if (ret)
		return ret;
	for (uint32_t i = 0; i < n; i++) {
		evs.ev[i].ev = table[i].ev;
		evs.ev[i].plane = table[i].plane;
		evs.ev[i].state = MRC_EV_GOOD;
		evs.ev[i].flags = table[i].active ? MRC_EV_F_ACTIVE : 0;
	}
	/* Lists the controller wrote are used as they are. */
	if (prof.type != EV_PROFILE_EXPLICIT)
		balance_evs(qp, &evs, n);
	/* Generated tables go round the planes; explicit lists may not. */
	evs.stride = planes > 1 && n % planes == 0 &&
		     planes_in_turn(&evs, n, (uint32_t)planes) ? (uint32_t)planes : 1;
	shuffle(evs.perm, n, evs.stride);
	/* Demotions may not leave fewer usable EVs than the profile asks. */
	evs.profile = (uint16_t)qp->attr.ev_profile_id;
	evs.min_active = (uint16_t)(prof.ev_min_active < n ? prof.ev_min_active : n);
	qp->n_evs = n;
	qp->ev_format = (uint8_t)prof.format;
	qp->gso_burst = peer_is_local(qp) ? 1 : prof.gso_burst;
	return publish_ev_table(qp, &evs, n);
}
