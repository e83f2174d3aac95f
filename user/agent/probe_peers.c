// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Who XDP serves endpoint messages for (see probe_int.h): mrcd is the one
 * writer of mrc_known_peers (the peer addresses of the QPs in RTR/RTS,
 * the peers of mrcd --peers, the targets of running `mrcctl probe`s) and
 * of mrc_probe_ports (the ports of its probe sockets). XDP answers EV
 * probes and passes port status only from a QP or configured peer, and
 * steers a probe response only from a known peer to one of these ports.
 *
 * The QPs are followed through the mmapped mrc_tx: a slot whose state or
 * generation moved is re-read from mrc_qps (one syscall), and only then
 * is the set rebuilt and the difference written. A QP in RTR/RTS is
 * looked at in its turn (PE_SLICE: a page per QP), any other every tick,
 * so a new QP's peers are known at once.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "agent/probe_int.h"

#define NOT_SEEN	0xffffffffu

static int known_cmp(const void *a, const void *b)
{
	return memcmp(((const struct pe_known *)a)->addr,
		      ((const struct pe_known *)b)->addr, 16);
}

static int port_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool addr_unset(const uint8_t a[16])
{
	static const uint8_t zero[16];

	return !memcmp(a, zero, 16);
}

/* ---- what the maps hold ---------------------------------------------------- */

static void read_installed(struct probe_engine *pe)
{
	struct pe_peers *pp = &pe->peers;
	int fd = pe->pins.fd[MRC_PIN_KNOWN_PEERS];
	struct mrc_known_peer_key key, next;
	struct mrc_known_peer val;
	bool first = true;

	while (pp->n_installed < MRC_MAX_KNOWN_PEERS &&
	       !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		key = next;
		first = false;
		if (bpf_map_lookup_elem(fd, &key, &val))
			continue;
		memcpy(pp->installed[pp->n_installed].addr, key.addr, 16);
		pp->installed[pp->n_installed++].why = val.why;
	}
	qsort(pp->installed, (size_t)pp->n_installed, sizeof(pp->installed[0]), known_cmp);
}

static void read_ports(struct probe_engine *pe)
{
	struct pe_peers *pp = &pe->peers;
	int fd = pe->pins.fd[MRC_PIN_PROBE_PORTS];
	uint32_t key = 0, next;
	bool first = true;

	while (pp->n_ports < MRC_MAX_PROBE_PORTS &&
	       !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		key = next;
		first = false;
		pp->ports[pp->n_ports++] = key;
	}
	qsort(pp->ports, (size_t)pp->n_ports, sizeof(pp->ports[0]), port_cmp);
}

void pe_peers_open(struct probe_engine *pe)
{
	struct pe_peers *pp = &pe->peers;

	for (uint32_t s = 0; s < pe->max_qps; s++)
		pp->seen_state[s] = pp->seen_gen[s] = NOT_SEEN;
	read_installed(pe);
	read_ports(pe);
	pp->dirty = true;
}

/* ---- the QPs' peers ----------------------------------------------------- */

static bool serves_peers(uint32_t state)
{
	return state == MRC_QPS_RTR || state == MRC_QPS_RTS;
}

static void reread_slot(struct probe_engine *pe, uint32_t slot, uint32_t state)
{
	struct pe_peers *pp = &pe->peers;
	uint8_t addrs[MRC_MAX_PEER_ADDRS][16];
	struct mrc_qp_info info;
	uint8_t n = 0;

	if (serves_peers(state) &&
	    !bpf_map_lookup_elem(pe->pins.fd[MRC_PIN_QPS], &slot, &info) &&
	    serves_peers(info.state)) {
		for (int k = 0; k < info.n_peer_addrs && k < MRC_MAX_PEER_ADDRS; k++)
			if (!addr_unset(info.peer_addrs[k]))
				memcpy(addrs[n++], info.peer_addrs[k], 16);
	}
	if (n == pp->n_addrs[slot] && !memcmp(pp->addrs[slot], addrs, (size_t)n * 16))
		return;
	memcpy(pp->addrs[slot], addrs, (size_t)n * 16);
	pp->n_addrs[slot] = n;
	pp->dirty = true;
}

/* ---- the set XDP should serve ----------------------------------------------- */

static int add_want(struct pe_peers *pp, int n, const uint8_t addr[16], uint32_t why)
{
	if (n >= MRC_MAX_KNOWN_PEERS || addr_unset(addr))
		return n;
	memcpy(pp->want[n].addr, addr, 16);
	pp->want[n].why = why;
	return n + 1;
}

/* Everything, sorted, one entry per address with its reasons OR-ed. */
static int build_want(struct probe_engine *pe)
{
	struct pe_peers *pp = &pe->peers;
	int n = 0, out = 0;

	/* Only walked slots ever get addresses (pe_peers_tick). */
	for (uint32_t w = 0; w < pe->walk.n; w++) {
		uint32_t s = pe->walk.slot[w];

		for (int k = 0; k < pp->n_addrs[s]; k++)
			n = add_want(pp, n, pp->addrs[s][k], MRC_KNOWN_QP);
	}
	for (int i = 0; i < pe->cfg.n_peers && i < PE_MAX_CONFIGURED_PEERS; i++)
		n = add_want(pp, n, pe->cfg.peers[i], MRC_KNOWN_CONFIGURED);
	for (int i = 0; i < PE_MAX_JOBS; i++)
		if (pe->jobs[i])
			n = add_want(pp, n, pe->jobs[i]->req.to, MRC_KNOWN_PROBED);
	qsort(pp->want, (size_t)n, sizeof(pp->want[0]), known_cmp);
	for (int i = 0; i < n; i++) {
		if (out && !memcmp(pp->want[out - 1].addr, pp->want[i].addr, 16))
			pp->want[out - 1].why |= pp->want[i].why;
		else
			pp->want[out++] = pp->want[i];
	}
	return out;
}

static void put_known(struct probe_engine *pe, const struct pe_known *k)
{
	struct mrc_known_peer_key key;
	struct mrc_known_peer val = { .why = k->why };

	memcpy(key.addr, k->addr, 16);
	if (bpf_map_update_elem(pe->pins.fd[MRC_PIN_KNOWN_PEERS], &key, &val, BPF_ANY))
		pe->counters[PE_PEER_MAP_ERRORS]++;
}

static void del_known(struct probe_engine *pe, const struct pe_known *k)
{
	struct mrc_known_peer_key key;

	memcpy(key.addr, k->addr, 16);
	if (bpf_map_delete_elem(pe->pins.fd[MRC_PIN_KNOWN_PEERS], &key) && errno != ENOENT)
		pe->counters[PE_PEER_MAP_ERRORS]++;
}

/*
 * Merge the two sorted lists: new and changed entries go in first, then
 * the ones no longer wanted leave, so a peer that stays is never missing.
 */
static void sync_known(struct probe_engine *pe)
{
	struct pe_peers *pp = &pe->peers;
	int n_want = build_want(pe), i = 0, j = 0, c;

	while (i < n_want) {
		c = j < pp->n_installed ? memcmp(pp->want[i].addr, pp->installed[j].addr, 16) : -1;
		if (c > 0) {
			j++;
			continue;
		}
		if (c < 0 || pp->want[i].why != pp->installed[j].why)
			put_known(pe, &pp->want[i]);
		i++;
		if (c == 0)
			j++;
	}
	for (i = 0, j = 0; j < pp->n_installed; j++) {
		while (i < n_want && memcmp(pp->want[i].addr, pp->installed[j].addr, 16) < 0)
			i++;
		if (i >= n_want || memcmp(pp->want[i].addr, pp->installed[j].addr, 16))
			del_known(pe, &pp->installed[j]);
	}
	memcpy(pp->installed, pp->want, (size_t)n_want * sizeof(pp->want[0]));
	pp->n_installed = n_want;
}

/* ---- mrcd's probe sockets ------------------------------------------------- */

static int add_port(uint32_t *ports, int n, uint16_t port)
{
	for (int i = 0; i < n; i++)
		if (ports[i] == port)
			return n;
	if (!port || n >= MRC_MAX_PROBE_PORTS)
		return n;
	ports[n] = port;
	return n + 1;
}

static bool has_port(const uint32_t *ports, int n, uint32_t port)
{
	for (int i = 0; i < n; i++)
		if (ports[i] == port)
			return true;
	return false;
}

static void sync_ports(struct probe_engine *pe)
{
	struct pe_peers *pp = &pe->peers;
	int fd = pe->pins.fd[MRC_PIN_PROBE_PORTS], n = 0, n_plane;
	uint32_t want[MRC_MAX_PROBE_PORTS], kind;

	for (int i = 0; i < pe->cfg.n_planes; i++) {
		if (pe->planes[i].sock4 >= 0)
			n = add_port(want, n, pe->planes[i].port4);
		if (pe->planes[i].sock6 >= 0)
			n = add_port(want, n, pe->planes[i].port6);
	}
	n_plane = n;
	for (int i = 0; i < PE_MAX_JOBS; i++)
		if (pe->jobs[i] && pe->jobs[i]->fd >= 0)
			n = add_port(want, n, pe->jobs[i]->port);
	for (int i = 0; i < n; i++) {
		if (has_port(pp->ports, pp->n_ports, want[i]))
			continue;
		kind = i < n_plane ? MRC_PROBE_PORT_PLANE : MRC_PROBE_PORT_JOB;
		if (bpf_map_update_elem(fd, &want[i], &kind, BPF_ANY))
			pe->counters[PE_PEER_MAP_ERRORS]++;
	}
	for (int i = 0; i < pp->n_ports; i++)
		if (!has_port(want, n, pp->ports[i]) &&
		    bpf_map_delete_elem(fd, &pp->ports[i]) && errno != ENOENT)
			pe->counters[PE_PEER_MAP_ERRORS]++;
	memcpy(pp->ports, want, (size_t)n * sizeof(want[0]));
	pp->n_ports = n;
}

void pe_peers_sync(struct probe_engine *pe)
{
	sync_ports(pe);
	sync_known(pe);
	pe->peers.dirty = false;
}

void pe_peers_tick(struct probe_engine *pe)
{
	struct pe_peers *pp = &pe->peers;

	for (uint32_t w = 0; w < pe->walk.n; w++) {
		uint32_t s = pe->walk.slot[w], st, gen;

		/* A QP being set up is looked at every tick, a settled one in turn. */
		if (!pe_walk_due(pe, w))
			continue;
		st = tx_state(pe, s);
		gen = tx_generation(pe, s);
		if (st == pp->seen_state[s] && gen == pp->seen_gen[s])
			continue;
		pp->seen_state[s] = st;
		pp->seen_gen[s] = gen;
		reread_slot(pe, s, st);
	}
	if (pp->dirty)
		pe_peers_sync(pe);
}
