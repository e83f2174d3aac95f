// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "paths" (see LAYERS and paths.h): a QP's EV table, built from its
 * EV profile at RTR over the planes both ends have, labelled with the
 * spine each EV crosses and balanced over the spines (discover.c), then
 * published to the maps TC and XDP read.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/ev_profile.h"
#include "discover.h"
#include "host.h"
#include "paths.h"

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
/* SRv6 EVs ride IPv6 only: every peer address must be IPv6. */
static bool srv6_peers_ok(const struct mrc_qp *qp)
{
	for (int i = 0; i < qp->n_peers; i++)
		if (IN6_IS_ADDR_V4MAPPED(&qp->peers[i].sin6_addr))
			return false;
	return true;
}

/*
 * An SRv6 EV names its spine itself (the uSID, high 16 bits): no path
 * discovery, whose TTL-limited probes would cross the fabric by ECMP
 * instead. Each distinct uSID gets a path number, 1, 2, ... in increasing
 * uSID order, so the EVs through one spine still fail together.
 */
static void srv6_paths(struct mrc_qp_evs *evs, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint16_t usid = (uint16_t)(evs->ev[i].ev >> 16);
		uint32_t below = 0, seen = 0;
		uint16_t others[MRC_MAX_EVS];

		/* Distinct uSIDs smaller than this one. */
		for (uint32_t j = 0; j < n; j++) {
			uint16_t u = (uint16_t)(evs->ev[j].ev >> 16);
			uint32_t k;

			if (u >= usid)
				continue;
			for (k = 0; k < seen && others[k] != u; k++)
				;
			if (k == seen) {
				others[seen++] = u;
				below++;
			}
		}
		evs->ev[i].path = (uint8_t)(below < 254 ? below + 1 : 255);
	}
}

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
 * Fresh send log for `window` PSNs and, unless log_only, per-EV counters
 * and reverse EVs (made here or by mrcd's broker: host.h). The log's map
 * replaces the QP's own descriptor of it (send.c reads it after timeouts).
 */
static int new_maps(struct mrc_qp *qp, uint32_t window, uint32_t n_evs,
		    bool log_only)
{
	int fd = -1;
	int err = mrc_host_qp_maps(qp->ctx, qp->slot, qp->qpn, window, n_evs,
				   log_only, &fd);

	if (err)
		return err;
	if (qp->log_fd >= 0)
		close(qp->log_fd);
	qp->log_fd = fd;
	return 0;
}

int mrc_qp_new_log(struct mrc_qp *qp, uint32_t window)
{
	return new_maps(qp, window, 0, true);
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
	int err = new_maps(qp, (uint32_t)qp->attr.mpr_units * MRC_MPR_UNIT, n_evs,
			   false);

	if (err)
		return err;
	/*
	 * Through the QP's own mapping: a copy, as an update of the map would
	 * be (no more atomic). The QP is not ready yet (INIT -> RTR), so the
	 * fast path does not spray over it until mrc_qps says RTR.
	 */
	memcpy(qp->evs, evs, sizeof(*evs));
	__atomic_thread_fence(__ATOMIC_RELEASE);
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
	/*
	 * Every table learns its spines; lists the controller wrote are used
	 * as they are (labelled, not rebalanced). A peer on this host has no
	 * fabric in between.
	 */
	if (prof.format == MRC_EVF_SRV6) {
		if (!srv6_peers_ok(qp))
			return -EAFNOSUPPORT;
		srv6_paths(&evs, n);
	} else if (!peer_is_local(qp)) {
		mrc_discover_paths(qp, &evs, n, (uint8_t)prof.format,
				   prof.type != EV_PROFILE_EXPLICIT);
	}
	/* Generated tables go round the planes; explicit lists may not. */
	evs.stride = planes > 1 && n % planes == 0 &&
		     planes_in_turn(&evs, n, (uint32_t)planes) ? (uint32_t)planes : 1;
	shuffle(evs.perm, n, evs.stride);
	/* Demotions may not leave fewer usable EVs than the profile asks. */
	evs.profile = (uint16_t)qp->attr.ev_profile_id;
	evs.min_active = (uint16_t)(prof.ev_min_active < n ? prof.ev_min_active : n);
	qp->n_evs = n;
	qp->ev_format = (uint8_t)prof.format;
	qp->srv6_block = prof.srv6_block;
	qp->gso_burst = peer_is_local(qp) ? 1 : prof.gso_burst;
	/*
	 * The table goes round the planes: so do our datagrams, each sent
	 * to the peer on its plane, and TC keeps it there (send.c
	 * datagram_plane). A peer on this host is reached through none.
	 */
	qp->tx_planes = evs.stride > 1 && !peer_is_local(qp) ? (uint8_t)evs.stride : 0;
	qp->tx_plane_next = 0;
	qp->planes_unusable = 0;
	qp->planes_seen_ns = 0;
	return publish_ev_table(qp, &evs, n);
}
