// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The slots a probe engine tick goes over (see probe_int.h): the QP
 * numbers claimed in mrc_qp_owner, read in one batch every
 * PE_WALK_REFRESH_TICKS ticks, and the slots the engine still holds
 * something for (a followed QP, peers XDP serves, a state last seen live),
 * so that a QP that went away is seen going.
 */
#include <stdlib.h>
#include <string.h>

#include "agent/map_bulk.h"
#include "agent/probe_int.h"

int pe_walk_open(struct probe_engine *pe)
{
	struct pe_walk *w = &pe->walk;
	size_t n = pe->max_qps;

	w->slot = calloc(n, sizeof(*w->slot));
	w->in = calloc(n, sizeof(*w->in));
	w->keys = calloc(n, sizeof(*w->keys));
	w->vals = calloc(n, sizeof(*w->vals));
	return w->slot && w->in && w->keys && w->vals ? 0 : -1;
}

void pe_walk_close(struct probe_engine *pe)
{
	struct pe_walk *w = &pe->walk;

	free(w->slot);
	free(w->in);
	free(w->keys);
	free(w->vals);
	memset(w, 0, sizeof(*w));
}

/*
 * The slot's EV table and tx state as it holds them now: mapped again
 * when a new QP took the slot (both maps come new together), let go when
 * none has it (so a gone QP's memory is not held).
 */
static void map_tables(struct probe_engine *pe, uint32_t slot)
{
	void *mapped = mrc_state_maps_peek(&pe->tx, slot);

	if (mrc_state_maps_get(&pe->tx, slot) != mapped || !mapped)
		mrc_state_maps_get(&pe->evs, slot);
}

/*
 * At a refresh: a system call per walked slot would cost 4,096 of them
 * every 20 ms at 4,096 QPs, so a slot whose QP reads live is looked at
 * once every PE_REMAP_REFRESHES refreshes (a QP that went away cleanly
 * reads RESET at once; one whose process died is replaced within that).
 */
static void refresh_tables(struct probe_engine *pe, uint32_t slot)
{
	if (tx_state(pe, slot) == MRC_QPS_RESET ||
	    (slot + pe->walk.refreshes) % PE_REMAP_REFRESHES == 0)
		map_tables(pe, slot);
}

static void unmap_tables(struct probe_engine *pe, uint32_t slot)
{
	mrc_state_maps_drop(&pe->evs, slot);
	mrc_state_maps_drop(&pe->tx, slot);
}

void pe_walk_add(struct probe_engine *pe, uint32_t slot)
{
	struct pe_walk *w = &pe->walk;

	if (slot >= pe->max_qps || w->in[slot])
		return;
	w->in[slot] = 1;
	w->slot[w->n++] = slot;
	map_tables(pe, slot);
}

static bool live_state(uint32_t st)
{
	return st == MRC_QPS_RTR || st == MRC_QPS_RTS;
}

/* Does the engine hold anything for the slot it must see through? */
static bool holds(const struct probe_engine *pe, uint32_t slot)
{
	const struct pe_peers *pp = &pe->peers;

	return pe->slots[slot] || pp->n_addrs[slot] || live_state(pp->seen_state[slot]);
}

void pe_walk_refresh(struct probe_engine *pe)
{
	struct pe_walk *w = &pe->walk;
	uint32_t n_owned = 0, kept = 0;

	w->ticks = 0;
	w->refreshes++;
	if (map_read_all(pe->pins.fd[MRC_PIN_QP_OWNER], sizeof(uint32_t), sizeof(uint32_t),
			 pe->max_qps, w->keys, w->vals, &n_owned))
		return;	/* keep the walk we have; the next refresh tries again */
	/* Keep what the engine holds, drop the rest, then add every claimed slot. */
	for (uint32_t i = 0; i < w->n; i++) {
		uint32_t slot = w->slot[i];

		if (holds(pe, slot)) {
			w->slot[kept++] = slot;
			refresh_tables(pe, slot);
		} else {
			w->in[slot] = 0;
			unmap_tables(pe, slot);
		}
	}
	w->n = kept;
	for (uint32_t i = 0; i < n_owned; i++)
		if (w->keys[i])
			pe_walk_add(pe, mrc_qpn_to_slot(w->keys[i]));
}

void pe_walk_tick(struct probe_engine *pe)
{
	if (++pe->walk.ticks >= PE_WALK_REFRESH_TICKS)
		pe_walk_refresh(pe);
}
