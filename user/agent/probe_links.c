// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Plane links and port status (see probe_int.h): a plane whose link goes
 * down has its EVs demoted at once and is marked DOWN for TC, and every
 * peer hears of it over the planes still up (three times); a peer's port
 * status demotes, or probes at once, the EVs of that plane to it.
 */
#include <errno.h>
#include <string.h>

#include <bpf/bpf.h>

#include "agent/probe_int.h"
#include "agent/probe_net.h"

/* When a port status goes out: at 0, 5 and 20 ms. */
static const uint64_t announce_at_ms[ANNOUNCE_TIMES] = { 0, 5, 20 };

/* ---- plane links and port status ---------------------------------------- */

struct dest {
	uint8_t plane;
	uint8_t addr[16];
};

static int add_dest(struct dest *d, int n, uint8_t plane, const uint8_t addr[16])
{
	for (int i = 0; i < n; i++)
		if (d[i].plane == plane && !memcmp(d[i].addr, addr, 16))
			return n;
	if (n >= PE_MAX_DESTS)
		return n;
	d[n].plane = plane;
	memcpy(d[n].addr, addr, 16);
	return n + 1;
}

/*
 * Every peer of a live QP, on every plane of ours that is up (but the one
 * that went down): the status reaches the peer over the planes that work.
 */
static int port_status_dests(struct probe_engine *pe, uint8_t changed,
			     uint8_t status, struct dest *d)
{
	int n = 0;

	pe_walk_refresh(pe);	/* a QP created since the last tick counts too */
	for (uint32_t w = 0; w < pe->walk.n; w++) {
		uint32_t slot = pe->walk.slot[w];
		struct pe_slot *s = pe_slot_get(pe, slot);

		for (int q = 1; s && q <= s->info.n_peer_addrs && q <= pe->cfg.n_planes; q++) {
			if ((q == changed && !status) || !pe->planes[q - 1].up ||
			    addr_is_zero(s->info.peer_addrs[q - 1]))
				continue;
			n = add_dest(d, n, (uint8_t)q, s->info.peer_addrs[q - 1]);
		}
	}
	return n;
}

static void send_port_status(struct probe_engine *pe, uint8_t plane, uint8_t status)
{
	static struct dest d[PE_MAX_DESTS];
	uint8_t pkt[EP_PKT_LEN];
	uint16_t port;
	int n = port_status_dests(pe, plane, status, d), fd;

	ep_build_port_status(pkt, plane, status);
	for (int i = 0; i < n; i++) {
		fd = pe_plane_sock(&pe->planes[d[i].plane - 1], d[i].addr, &port);
		if (fd >= 0 && !pe_send_ep(pe, fd, d[i].addr, pkt))
			pe->counters[PE_PORT_STATUS_SENT]++;
		else
			pe->counters[PE_PROBES_SEND_FAILED]++;
	}
}

void pe_announce_step(struct probe_engine *pe)
{
	for (int i = 0; i < PE_ANNOUNCES; i++) {
		struct pe_announce *a = &pe->announce[i];

		while (a->t0 && a->sent < ANNOUNCE_TIMES &&
		       pe->now >= a->t0 + announce_at_ms[a->sent] * MS_NS) {
			send_port_status(pe, a->plane, a->status);
			a->sent++;
		}
	}
}

/* A newer status of a plane replaces the repeats of the older one. */
static void announce(struct probe_engine *pe, uint8_t plane, uint8_t status)
{
	struct pe_announce *slot = NULL;

	for (int i = 0; i < PE_ANNOUNCES; i++) {
		struct pe_announce *a = &pe->announce[i];

		if (a->t0 && a->plane == plane)
			a->t0 = 0;
		if (!a->t0 || a->sent >= ANNOUNCE_TIMES)
			slot = slot ? slot : a;
	}
	if (!slot)
		slot = &pe->announce[0];
	*slot = (struct pe_announce){ .t0 = pe->now, .plane = plane, .status = status };
	pe_announce_step(pe);
}

/*
 * Demote the EVs on `plane` of every live QP (to `peer`, if given); how
 * many QPs were concerned.
 */
static int demote_plane(struct probe_engine *pe, uint16_t plane, uint8_t reason,
			const uint8_t *peer)
{
	enum pe_counter counter = reason == MRC_EVR_PORT_DOWN ?
		PE_DEMOTIONS_PORT_DOWN : PE_DEMOTIONS_PEER_PORT_DOWN;
	int matched = 0;

	pe_walk_refresh(pe);	/* a QP created since the last tick counts too */
	for (uint32_t w = 0; w < pe->walk.n; w++) {
		uint32_t slot = pe->walk.slot[w];
		struct pe_slot *s = pe_slot_get(pe, slot);

		if (!s || (peer && !pe_slot_has_peer(s, peer)))
			continue;
		matched++;
		s->quiet = false;
		pe_walk_wake(pe, slot);
		for (uint32_t idx = 0; idx < s->n_evs; idx++)
			if (MRC_EV_WORD_PLANE(entry_word(pe, slot, idx)) == plane)
				pe_demote(pe, slot, s, idx, reason, counter);
	}
	return matched;
}

/* Probe the ASSUMED_BAD EVs on `plane` (of QPs to `peer`) at once. */
static int probe_plane_now(struct probe_engine *pe, uint16_t plane, const uint8_t *peer)
{
	int matched = 0;

	pe_walk_refresh(pe);	/* a QP created since the last tick counts too */
	for (uint32_t w = 0; w < pe->walk.n; w++) {
		uint32_t slot = pe->walk.slot[w];
		struct pe_slot *s = pe_slot_get(pe, slot);

		if (!s || (peer && !pe_slot_has_peer(s, peer)))
			continue;
		matched++;
		s->quiet = false;
		pe_walk_wake(pe, slot);
		for (uint32_t idx = 0; idx < s->n_evs; idx++) {
			struct pe_ev *e = &s->ev[idx];

			if (e->known == KNOWN_BAD && !e->sent_ns &&
			    MRC_EV_WORD_PLANE(entry_word(pe, slot, idx)) == plane)
				e->next_ns = pe->now;
		}
	}
	return matched;
}

/* Tell TC (mrc_planes flags) so no ACK is sent into a dead link. */
static void mark_plane_link(struct probe_engine *pe, int plane, bool up)
{
	__u32 key = (__u32)plane - 1;
	struct mrc_plane mp;

	if (bpf_map_lookup_elem(pe->pins.fd[MRC_PIN_PLANES], &key, &mp))
		return;
	if (up)
		mp.flags &= ~(__u32)MRC_PLANE_F_DOWN;
	else
		mp.flags |= MRC_PLANE_F_DOWN;
	if (bpf_map_update_elem(pe->pins.fd[MRC_PIN_PLANES], &key, &mp, BPF_EXIST))
		pe_say(pe, "cannot mark plane %d %s: %s", plane, up ? "up" : "down",
		       strerror(errno));
}

void pe_on_link_change(void *arg, int ifindex, bool up)
{
	struct probe_engine *pe = arg;

	for (int i = 0; i < pe->cfg.n_planes; i++) {
		struct pe_plane *p = &pe->planes[i];

		if (p->ifindex != ifindex || p->up == up)
			continue;
		p->up = up;
		pe_say(pe, "plane %d (%s) is %s", i + 1, p->name,
		       up ? "up: probing its EVs" : "down: its EVs are ASSUMED_BAD");
		mark_plane_link(pe, i + 1, up);
		if (up)
			probe_plane_now(pe, (uint16_t)(i + 1), NULL);
		else
			demote_plane(pe, (uint16_t)(i + 1), MRC_EVR_PORT_DOWN, NULL);
		announce(pe, (uint8_t)(i + 1), up);
	}
}

void pe_reread_links(struct probe_engine *pe)
{
	for (int i = 0; i < pe->cfg.n_planes; i++)
		pe_on_link_change(pe, pe->planes[i].ifindex, link_is_up(pe->planes[i].ifindex));
}

void pe_on_port_status(struct probe_engine *pe, const uint8_t src[16],
			   const struct mrc_eph *eph)
{
	int matched;

	pe->counters[PE_PORT_STATUS_RX]++;
	if (eph->plane < 1 || eph->plane > MRC_MAX_PLANES_ABI) {
		pe->counters[PE_PORT_STATUS_IGNORED]++;
		return;
	}
	if (eph->status)
		matched = probe_plane_now(pe, eph->plane, src);
	else
		matched = demote_plane(pe, eph->plane, MRC_EVR_PEER_PORT_DOWN, src);
	if (!matched)
		pe->counters[PE_PORT_STATUS_IGNORED]++;
}
