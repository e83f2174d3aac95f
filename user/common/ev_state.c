// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Userspace EV state changes; see ev_state.h. The rules are
 * include/mrc/ev_rules.h, the very code the fast path runs
 * (bpf/mrc/ev_state.h); this file only adds the compare-and-swap loops
 * and the n_down budget around them.
 */
#include <errno.h>
#include <stdbool.h>

#include "ev_state.h"

static uint32_t load_word(const struct mrc_ev_entry *e)
{
	return __atomic_load_n(&e->word, __ATOMIC_ACQUIRE);
}

static int cas_word(struct mrc_ev_entry *e, uint32_t *old, uint32_t new)
{
	return __atomic_compare_exchange_n(&e->word, old, new, 0,
					   __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* Take one usable entry out of the budget, unless min_active forbids it. */
static int reserve_down(struct mrc_qp_evs *evs, uint32_t n)
{
	uint32_t down = __atomic_load_n(&evs->n_down, __ATOMIC_ACQUIRE);

	do {
		if (!mrc_ev_may_take_down(n, down, evs->min_active))
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
		uint32_t w = load_word(b), nw;

		while (mrc_ev_rule_activate_backup(w, plane, &nw)) {
			if (cas_word(b, &w, nw))
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

	if (idx >= n || idx >= MRC_MAX_EVS)
		return EV_UNCHANGED;
	e = &evs->ev[idx];
	if (!mrc_ev_state_usable(MRC_EV_WORD_STATE(load_word(e))))
		return EV_UNCHANGED;
	if (reserve_down(evs, n))
		return EV_REFUSED;
	w = load_word(e);
	do {
		if (!mrc_ev_rule_demote(w, mark, &nw)) {
			release_down(evs);
			return EV_UNCHANGED;
		}
	} while (!cas_word(e, &w, nw));

	/* w is what the entry was: hand an active place over or keep it owed. */
	if (mrc_ev_demotion_owes(w) &&
	    activate_backup(evs, n, MRC_EV_WORD_PLANE(w)))
		__atomic_fetch_or(&e->word, MRC_EV_WORD_FLAG(MRC_EV_F_OWED),
				  __ATOMIC_ACQ_REL);
	return EV_CHANGED;
}

/*
 * Apply a rule of ev_rules.h to entry idx by compare-and-swap until it
 * holds or no longer applies; *old is the word it replaced.
 */
static bool apply_rule(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx,
		       int (*rule)(__u32 w, __u32 *nw), uint32_t *old)
{
	struct mrc_ev_entry *e;
	uint32_t w, nw;

	if (idx >= n || idx >= MRC_MAX_EVS)
		return false;
	e = &evs->ev[idx];
	w = load_word(e);
	do {
		if (!rule(w, &nw))
			return false;
	} while (!cas_word(e, &w, nw));
	*old = w;
	return true;
}

enum ev_change ev_promote(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx)
{
	uint32_t w;

	if (!apply_rule(evs, n, idx, mrc_ev_rule_promote, &w))
		return EV_UNCHANGED;
	release_down(evs);
	return EV_CHANGED;
}

enum ev_change ev_deny(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx)
{
	uint32_t w;

	/* Flags stay: an allowed EV returns to its place in the rotation. */
	if (!apply_rule(evs, n, idx, mrc_ev_rule_deny, &w))
		return EV_UNCHANGED;
	if (mrc_ev_state_usable(MRC_EV_WORD_STATE(w)))
		__atomic_fetch_add(&evs->n_down, 1, __ATOMIC_ACQ_REL);
	return EV_CHANGED;
}

enum ev_change ev_allow(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx)
{
	uint32_t w;

	if (!apply_rule(evs, n, idx, mrc_ev_rule_allow, &w))
		return EV_UNCHANGED;
	release_down(evs);
	return EV_CHANGED;
}

uint32_t ev_usable(const struct mrc_qp_evs *evs, uint32_t n)
{
	uint32_t usable = 0;

	for (uint32_t i = 0; i < n && i < MRC_MAX_EVS; i++)
		usable += mrc_ev_state_usable(MRC_EV_WORD_STATE(load_word(&evs->ev[i])));
	return usable;
}
