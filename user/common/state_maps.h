/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Mappings of other processes' per-slot state maps (user/common/qpmaps.h:
 * mrc_qp_evs, mrc_tx, ...), for a reader that changes entries in place
 * with compare-and-swap (mrcd's probe engine, ev deny/allow) or reads a
 * live word. One mapping per slot (the pages of the slot's entry), made
 * when the slot is first asked for and made again when the slot holds
 * another map or entry (a new QP); dropped when the slot is empty.
 */
#ifndef MRC_COMMON_STATE_MAPS_H
#define MRC_COMMON_STATE_MAPS_H

#include <stddef.h>
#include <stdint.h>

struct mrc_state_map {
	uint32_t id;		/* the inner map's id; 0: none mapped */
	uint32_t idx;		/* the entry mapped */
	void *p;
};

struct mrc_state_maps {
	int outer_fd;		/* the caller's, kept open */
	int qps_fd;		/* mrc_qps, for a QP's entry; -1: entry 0 */
	size_t value_size;
	int prot;		/* PROT_READ, or with PROT_WRITE */
	uint32_t n;		/* slots: the outer map's max_entries */
	struct mrc_state_map *slot;
};

/*
 * 0 or -errno (-EPROTO: outer_fd is not a map of maps). qps_fd (kept open
 * by the caller) names each slot's entry (mrc_qp_info.state_idx) for the
 * QP state maps; -1 for maps of one entry (mrc_cc_view).
 */
int mrc_state_maps_open(struct mrc_state_maps *sm, int outer_fd, int qps_fd,
			size_t value_size, int prot);
void mrc_state_maps_close(struct mrc_state_maps *sm);

/*
 * The slot's entry as the outer map (and mrc_qps) hold it now (a lookup
 * or two), mapped again if the slot changed maps or entry; NULL when it
 * holds none (or on error).
 */
void *mrc_state_maps_get(struct mrc_state_maps *sm, uint32_t slot);

/* The mapping the last get left for the slot (no system call); NULL: none. */
static inline void *mrc_state_maps_peek(const struct mrc_state_maps *sm, uint32_t slot)
{
	return slot < sm->n && sm->slot ? sm->slot[slot].p : NULL;
}

/* Let go of the slot's mapping. */
void mrc_state_maps_drop(struct mrc_state_maps *sm, uint32_t slot);

/*
 * One entry of a state map mapped (the pages that hold it): entry idx of
 * the map fd, or of the one outer_fd holds at slot; mrc_state_map_fd maps
 * entry 0 (a window's view). NULL + errno (ENOENT: the slot holds none;
 * EPROTO: not value_size; ERANGE: no entry idx). Unmap with the same
 * value_size.
 */
void *mrc_state_map_entry(int fd, uint32_t idx, size_t value_size, int prot);
void *mrc_state_map_fd(int fd, size_t value_size, int prot);
void *mrc_state_map_slot(int outer_fd, uint32_t slot, uint32_t idx, size_t value_size,
			 int prot);
void mrc_state_unmap(void *p, size_t value_size);

#endif /* MRC_COMMON_STATE_MAPS_H */
