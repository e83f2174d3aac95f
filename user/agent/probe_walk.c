// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The slots a probe engine tick goes over (see probe_int.h): the QP
 * numbers claimed in mrc_qp_owner, read in one batch every
 * PE_WALK_REFRESH_TICKS ticks or more, and the slots the engine still holds
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
	w->pos = calloc(n, sizeof(*w->pos));
	w->hot = calloc(n, sizeof(*w->hot));
	w->keys = calloc(n, sizeof(*w->keys));
	w->vals = calloc(n, sizeof(*w->vals));
	w->owner = calloc(n, sizeof(*w->owner));
	w->owned_at = calloc(n, sizeof(*w->owned_at));
	w->parts_now = 1;
	return w->slot && w->pos && w->hot && w->keys && w->vals && w->owner && w->owned_at ?
	       0 : -1;
}

void pe_walk_close(struct probe_engine *pe)
{
	struct pe_walk *w = &pe->walk;

	free(w->slot);
	free(w->pos);
	free(w->hot);
	free(w->keys);
	free(w->vals);
	free(w->owner);
	free(w->owned_at);
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

static uint32_t remap_every(const struct pe_walk *w)
{
	uint32_t every = w->n / PE_REMAPS_PER_REFRESH;

	return every > PE_REMAP_REFRESHES ? every : PE_REMAP_REFRESHES;
}

/*
 * At a refresh: the slot's maps are looked up again (a system call) when
 * its QP number left mrc_qp_owner (gone, or going), when its QP read
 * RESET at its last look (pe_peers_tick: gone cleanly, perhaps created
 * anew), when another process claimed it (owner_moved()), and otherwise
 * only now and then (remap_every()). Nothing here reads the QP's own
 * pages: at 4,096 QPs that alone was 4,096 page walks a refresh.
 */
static void refresh_tables(struct probe_engine *pe, uint32_t i)
{
	struct pe_walk *w = &pe->walk;
	uint32_t slot = w->slot[i];

	if (w->owned_at[slot] != w->refreshes ||
	    pe->peers.seen_state[slot] == MRC_QPS_RESET) {
		map_tables(pe, slot);
		w->hot[i] = 1;	/* its state and peers looked at next tick */
	} else if ((slot + w->refreshes) % remap_every(w) == 0) {
		map_tables(pe, slot);
	}
}

/*
 * Note which slots are claimed now; a walked slot claimed by another
 * process since the last refresh (a dead process's QP number taken by
 * another) gets its maps now.
 */
static void owner_moved(struct probe_engine *pe, uint32_t n_owned)
{
	struct pe_walk *w = &pe->walk;

	for (uint32_t i = 0; i < n_owned; i++) {
		uint32_t qpn = w->keys[i], slot;

		if (!qpn || qpn > pe->max_qps)
			continue;
		slot = mrc_qpn_to_slot(qpn);
		w->owned_at[slot] = w->refreshes;
		if (w->owner[slot] == w->vals[i])
			continue;
		w->owner[slot] = w->vals[i];
		if (w->pos[slot])
			map_tables(pe, slot);
	}
}

static void unmap_tables(struct probe_engine *pe, uint32_t slot)
{
	mrc_state_maps_drop(&pe->evs, slot);
	mrc_state_maps_drop(&pe->tx, slot);
}

/* Enough parts (a power of two) that each holds about PE_SLICE slots. */
static void set_parts(struct pe_walk *w)
{
	uint32_t parts = 1;

	while (parts * PE_SLICE < w->n)
		parts *= 2;
	w->part_mask = parts - 1;
	w->part &= w->part_mask;
}

void pe_walk_add(struct probe_engine *pe, uint32_t slot)
{
	struct pe_walk *w = &pe->walk;

	if (slot >= pe->max_qps || w->pos[slot])
		return;
	w->slot[w->n] = slot;
	w->hot[w->n] = 1;	/* new: looked at next tick, whatever its turn */
	w->pos[slot] = ++w->n;
	map_tables(pe, slot);
	set_parts(w);
}

void pe_walk_wake(struct probe_engine *pe, uint32_t slot)
{
	if (slot < pe->max_qps && pe->walk.pos[slot])
		pe->walk.hot[pe->walk.pos[slot] - 1] = 1;
}

void pe_walk_settle(struct probe_engine *pe, uint32_t i)
{
	uint32_t slot = pe->walk.slot[i], seen = pe->peers.seen_state[slot];
	const struct pe_slot *s = pe->slots[slot];

	pe->walk.hot[i] = (s && !s->quiet) ||
			  (seen != MRC_QPS_RTR && seen != MRC_QPS_RTS);
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

	w->refreshes++;
	if (map_read_all(pe->pins.fd[MRC_PIN_QP_OWNER], sizeof(uint32_t), sizeof(uint32_t),
			 pe->max_qps, w->keys, w->vals, &n_owned))
		return;	/* keep the walk we have; the next refresh tries again */
	owner_moved(pe, n_owned);
	/* Keep what the engine holds, drop the rest, then add every claimed slot. */
	for (uint32_t i = 0; i < w->n; i++) {
		uint32_t slot = w->slot[i];

		/* Still claimed: kept as it is (dropping and adding it back
		 * would unmap and map its tables: 4 system calls a refresh). */
		if (w->owned_at[slot] == w->refreshes || holds(pe, slot)) {
			w->hot[kept] = w->hot[i];
			w->slot[kept++] = slot;
			w->pos[slot] = kept;
			refresh_tables(pe, kept - 1);
		} else {
			w->pos[slot] = 0;
			w->owner[slot] = 0;
			unmap_tables(pe, slot);
		}
	}
	w->n = kept;
	set_parts(w);
	for (uint32_t i = 0; i < n_owned; i++)
		if (w->keys[i])
			pe_walk_add(pe, mrc_qpn_to_slot(w->keys[i]));
	/* The next one a period after this one ends, however long it took. */
	w->refreshed_ns = mono_ns();
}

/* Ticks between refreshes: PE_WALK_REFRESH_TICKS, more for a long walk. */
static uint32_t refresh_ticks(const struct pe_walk *w)
{
	uint32_t t = w->n / PE_WALK_QPS_PER_TICK;

	if (t < PE_WALK_REFRESH_TICKS)
		return PE_WALK_REFRESH_TICKS;
	return t < PE_WALK_REFRESH_TICKS_MAX ? t : PE_WALK_REFRESH_TICKS_MAX;
}

void pe_walk_tick(struct probe_engine *pe)
{
	struct pe_walk *w = &pe->walk;

	if (pe->now >= w->refreshed_ns + refresh_ticks(w) * PE_TICK_MS * MS_NS)
		pe_walk_refresh(pe);
	w->part = (w->part + w->parts_now) & w->part_mask;
	w->parts_now = pe->tick_ms > PE_TICK_MS ? pe->tick_ms / PE_TICK_MS : 1;
}
