// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Userspace EV state changes; see ev_state.h. The counterpart of
 * demote_ev()/swap_for_backup() in bpf/mrc.bpf.c: keep the two in step.
 */
#include <errno.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "ev_state.h"

struct mrc_qp_evs *ev_table_map(int map_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	void *p;

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return NULL;
	if (info.value_size != sizeof(struct mrc_qp_evs) ||
	    info.max_entries != MRC_MAX_QPS || !(info.map_flags & BPF_F_MMAPABLE)) {
		errno = EPROTO;	/* pins of another build: restart mrcd */
		return NULL;
	}
	p = mmap(NULL, sizeof(struct mrc_qp_evs) * MRC_MAX_QPS,
		 PROT_READ | PROT_WRITE, MAP_SHARED, map_fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

void ev_table_unmap(struct mrc_qp_evs *base)
{
	if (base)
		munmap(base, sizeof(struct mrc_qp_evs) * MRC_MAX_QPS);
}

static uint32_t load_word(const struct mrc_ev_entry *e)
{
	return __atomic_load_n(&e->word, __ATOMIC_ACQUIRE);
}

static int cas_word(struct mrc_ev_entry *e, uint32_t *old, uint32_t new)
{
	return __atomic_compare_exchange_n(&e->word, old, new, 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

static int state_usable(uint8_t state)
{
	return state == MRC_EV_GOOD || state == MRC_EV_SKIP;
}

/* Take one usable entry out of the budget, unless min_active forbids it. */
static int reserve_down(struct mrc_qp_evs *evs, uint32_t n)
{
	uint32_t down = __atomic_load_n(&evs->n_down, __ATOMIC_ACQUIRE);

	do {
		if (n < down + 1 || n - down - 1 < evs->min_active)
			return -1;
	} while (!__atomic_compare_exchange_n(&evs->n_down, &down, down + 1, 0,
					      __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE));
	return 0;
}

static void release_down(struct mrc_qp_evs *evs)
{
	uint32_t down = __atomic_load_n(&evs->n_down, __ATOMIC_ACQUIRE);

	/* Never below zero, even if a table was rebuilt under us. */
	while (down && !__atomic_compare_exchange_n(&evs->n_down, &down, down - 1, 0,
						    __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		;
}

/* Activate a GOOD backup of `plane`; 0 if there was one. */
static int activate_backup(struct mrc_qp_evs *evs, uint32_t n, uint16_t plane)
{
	for (uint32_t j = 0; j < n && j < MRC_MAX_EVS; j++) {
		struct mrc_ev_entry *b = &evs->ev[j];
		uint32_t w = load_word(b);

		while (MRC_EV_WORD_PLANE(w) == plane &&
		       MRC_EV_WORD_STATE(w) == MRC_EV_GOOD &&
		       !(MRC_EV_WORD_FLAGS(w) & MRC_EV_F_ACTIVE)) {
			if (cas_word(b, &w, w | (uint32_t)MRC_EV_F_ACTIVE << 24))
				return 0;
		}
	}
	return -1;
}

enum ev_change ev_demote(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx,
			 uint8_t mark)
{
	struct mrc_ev_entry *e;
	uint32_t w, nw;
	uint8_t flags;

	if (idx >= n || idx >= MRC_MAX_EVS)
		return EV_UNCHANGED;
	e = &evs->ev[idx];
	if (!state_usable(MRC_EV_WORD_STATE(load_word(e))))
		return EV_UNCHANGED;
	if (reserve_down(evs, n))
		return EV_REFUSED;
	w = load_word(e);
	do {
		if (!state_usable(MRC_EV_WORD_STATE(w))) {
			release_down(evs);
			return EV_UNCHANGED;
		}
		flags = (MRC_EV_WORD_FLAGS(w) & ~(MRC_EV_F_ACTIVE | MRC_EV_F_OWED)) | mark;
		nw = mrc_ev_word_with(w, MRC_EV_ASSUMED_BAD, flags);
	} while (!cas_word(e, &w, nw));

	/* w is what the entry was: hand an active place over or keep it owed. */
	if ((MRC_EV_WORD_FLAGS(w) & MRC_EV_F_ACTIVE) &&
	    activate_backup(evs, n, MRC_EV_WORD_PLANE(w)))
		__atomic_fetch_or(&e->word, (uint32_t)MRC_EV_F_OWED << 24,
				  __ATOMIC_ACQ_REL);
	return EV_CHANGED;
}

enum ev_change ev_promote(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx)
{
	struct mrc_ev_entry *e;
	uint32_t w, nw;
	uint8_t flags;

	if (idx >= n || idx >= MRC_MAX_EVS)
		return EV_UNCHANGED;
	e = &evs->ev[idx];
	w = load_word(e);
	do {
		if (MRC_EV_WORD_STATE(w) != MRC_EV_ASSUMED_BAD)
			return EV_UNCHANGED;
		flags = MRC_EV_WORD_FLAGS(w) & ~MRC_EV_F_BY_TIMEOUT;
		if (flags & MRC_EV_F_OWED)
			flags = (flags & ~MRC_EV_F_OWED) | MRC_EV_F_ACTIVE;
		nw = mrc_ev_word_with(w, MRC_EV_GOOD, flags);
	} while (!cas_word(e, &w, nw));
	release_down(evs);
	return EV_CHANGED;
}

enum ev_change ev_deny(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx)
{
	struct mrc_ev_entry *e;
	uint32_t w, nw;

	if (idx >= n || idx >= MRC_MAX_EVS)
		return EV_UNCHANGED;
	e = &evs->ev[idx];
	w = load_word(e);
	do {
		if (MRC_EV_WORD_STATE(w) == MRC_EV_DENIED)
			return EV_UNCHANGED;
		/* Flags stay: an allowed EV returns to its place in the rotation. */
		nw = mrc_ev_word_with(w, MRC_EV_DENIED,
				 MRC_EV_WORD_FLAGS(w));
	} while (!cas_word(e, &w, nw));
	if (state_usable(MRC_EV_WORD_STATE(w)))
		__atomic_fetch_add(&evs->n_down, 1, __ATOMIC_ACQ_REL);
	return EV_CHANGED;
}

enum ev_change ev_allow(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx)
{
	struct mrc_ev_entry *e;
	uint32_t w, nw;

	if (idx >= n || idx >= MRC_MAX_EVS)
		return EV_UNCHANGED;
	e = &evs->ev[idx];
	w = load_word(e);
	do {
		if (MRC_EV_WORD_STATE(w) != MRC_EV_DENIED)
			return EV_UNCHANGED;
		nw = mrc_ev_word_with(w, MRC_EV_GOOD,
				 MRC_EV_WORD_FLAGS(w) & ~MRC_EV_F_OWED);
	} while (!cas_word(e, &w, nw));
	release_down(evs);
	return EV_CHANGED;
}

uint32_t ev_usable(const struct mrc_qp_evs *evs, uint32_t n)
{
	uint32_t usable = 0;

	for (uint32_t i = 0; i < n && i < MRC_MAX_EVS; i++)
		usable += state_usable(MRC_EV_WORD_STATE(load_word(&evs->ev[i])));
	return usable;
}
