/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The EV state machine: which changes an EV table entry may make, as pure
 * functions of its 32-bit state word (plane, path, state, flags; struct
 * mrc_ev_entry in include/mrc/abi.h). No maps, no atomics, no helpers:
 * the callers load the word, ask a rule for the new one, and install it
 * with a compare-and-swap, retrying on a changed word. The fast path
 * (bpf/mrc/ev_state.h, bpf/mrc/tc_spray.h) and userspace
 * (user/common/ev_state.c: libmrc timeouts, mrcd probes, port status and
 * the controller's deny/allow) compile this very file, so the two sides
 * cannot drift; tests/unit/test_ev_rules.c checks it rule by rule.
 *
 *   GOOD ----skip_once----> SKIP ----end_skip (its turn passed)----> GOOD
 *   GOOD, SKIP ---demote---> ASSUMED_BAD ---promote (probes)---> GOOD
 *   any ------deny--------> DENIED ------allow---------------------> GOOD
 *
 * Flags: ACTIVE (in the rotation; otherwise a backup), OWED (demoted
 * while ACTIVE with no backup to take its place: ACTIVE again on
 * promotion), BY_TIMEOUT (demoted by libmrc's timer, for mrcd's report).
 *
 * Each rule returns 1 and writes the new word to *nw when the change
 * applies to w, else 0 (w is in a state the change does not leave from).
 */
#ifndef MRC_EV_RULES_H
#define MRC_EV_RULES_H

#include "abi.h"

#ifdef __bpf__
#define EV_RULE static __always_inline
#else
#define EV_RULE static inline
#endif

/* A flag of enum mrc_ev_flags where it lies in the state word. */
#define MRC_EV_WORD_FLAG(f)	((__u32)(f) << 24)

/* GOOD and SKIP entries may carry data (SKIP after losing one turn). */
EV_RULE int mrc_ev_state_usable(__u8 state)
{
	return state == MRC_EV_GOOD || state == MRC_EV_SKIP;
}

/* ASSUMED_BAD (a loss, a timeout, port status) or DENIED (controller). */
EV_RULE int mrc_ev_state_out_of_service(__u8 state)
{
	return state == MRC_EV_ASSUMED_BAD || state == MRC_EV_DENIED;
}

/* In the rotation and usable: what a swap for a backup may retire. */
EV_RULE int mrc_ev_in_rotation(__u32 w)
{
	return (MRC_EV_WORD_FLAGS(w) & MRC_EV_F_ACTIVE) &&
	       mrc_ev_state_usable(MRC_EV_WORD_STATE(w));
}

/* May carry this packet: ACTIVE and GOOD (TC's rotation). */
EV_RULE int mrc_ev_carries(__u32 w)
{
	return (MRC_EV_WORD_FLAGS(w) & MRC_EV_F_ACTIVE) &&
	       MRC_EV_WORD_STATE(w) == MRC_EV_GOOD;
}

/*
 * One more entry down (n_down -> n_down + 1) still leaves at least
 * min_active of the n entries usable: the floor automatic demotion keeps.
 */
EV_RULE int mrc_ev_may_take_down(__u32 n, __u32 n_down, __u32 min_active)
{
	return !(n < n_down + 1 || n - n_down - 1 < min_active);
}

/*
 * GOOD or SKIP -> ASSUMED_BAD: out of the rotation and owing nothing
 * (the caller hands an ACTIVE entry's place to a backup, or marks it
 * OWED, see mrc_ev_demotion_owes()); `mark` (e.g. MRC_EV_F_BY_TIMEOUT)
 * is added to the flags.
 */
EV_RULE int mrc_ev_rule_demote(__u32 w, __u8 mark, __u32 *nw)
{
	__u8 flags;

	if (!mrc_ev_state_usable(MRC_EV_WORD_STATE(w)))
		return 0;
	flags = (MRC_EV_WORD_FLAGS(w) & ~(MRC_EV_F_ACTIVE | MRC_EV_F_OWED)) | mark;
	*nw = mrc_ev_word_with(w, MRC_EV_ASSUMED_BAD, flags);
	return 1;
}

/* A demoted entry that was ACTIVE (w, before the demotion) leaves a place. */
EV_RULE int mrc_ev_demotion_owes(__u32 old_w)
{
	return (MRC_EV_WORD_FLAGS(old_w) & MRC_EV_F_ACTIVE) != 0;
}

/*
 * ASSUMED_BAD -> GOOD (probes say it works again): BY_TIMEOUT cleared,
 * an owed place in the rotation taken back (OWED -> ACTIVE).
 */
EV_RULE int mrc_ev_rule_promote(__u32 w, __u32 *nw)
{
	__u8 flags;

	if (MRC_EV_WORD_STATE(w) != MRC_EV_ASSUMED_BAD)
		return 0;
	flags = MRC_EV_WORD_FLAGS(w) & ~MRC_EV_F_BY_TIMEOUT;
	if (flags & MRC_EV_F_OWED)
		flags = (flags & ~MRC_EV_F_OWED) | MRC_EV_F_ACTIVE;
	*nw = mrc_ev_word_with(w, MRC_EV_GOOD, flags);
	return 1;
}

/*
 * Controller: any state but DENIED -> DENIED. Flags stay: an allowed EV
 * returns to its place in the rotation.
 */
EV_RULE int mrc_ev_rule_deny(__u32 w, __u32 *nw)
{
	if (MRC_EV_WORD_STATE(w) == MRC_EV_DENIED)
		return 0;
	*nw = mrc_ev_word_with(w, MRC_EV_DENIED, MRC_EV_WORD_FLAGS(w));
	return 1;
}

/* Controller: DENIED -> GOOD, no place owed. */
EV_RULE int mrc_ev_rule_allow(__u32 w, __u32 *nw)
{
	if (MRC_EV_WORD_STATE(w) != MRC_EV_DENIED)
		return 0;
	*nw = mrc_ev_word_with(w, MRC_EV_GOOD,
			       MRC_EV_WORD_FLAGS(w) & ~MRC_EV_F_OWED);
	return 1;
}

/* GOOD -> SKIP for one turn (ECN echo, mid-path trim). */
EV_RULE int mrc_ev_rule_skip_once(__u32 w, __u32 *nw)
{
	if (MRC_EV_WORD_STATE(w) != MRC_EV_GOOD)
		return 0;
	*nw = mrc_ev_word_with(w, MRC_EV_SKIP, MRC_EV_WORD_FLAGS(w));
	return 1;
}

/* SKIP -> GOOD: the entry lost its turn in the rotation. */
EV_RULE int mrc_ev_rule_end_skip(__u32 w, __u32 *nw)
{
	if (MRC_EV_WORD_STATE(w) != MRC_EV_SKIP)
		return 0;
	*nw = mrc_ev_word_with(w, MRC_EV_GOOD, MRC_EV_WORD_FLAGS(w));
	return 1;
}

/*
 * A GOOD backup (not ACTIVE) of `plane` joins the rotation in place of a
 * demoted or retired entry of that plane.
 */
EV_RULE int mrc_ev_rule_activate_backup(__u32 w, __u32 plane, __u32 *nw)
{
	if (MRC_EV_WORD_PLANE(w) != plane ||
	    MRC_EV_WORD_STATE(w) != MRC_EV_GOOD ||
	    (MRC_EV_WORD_FLAGS(w) & MRC_EV_F_ACTIVE))
		return 0;
	*nw = w | MRC_EV_WORD_FLAG(MRC_EV_F_ACTIVE);
	return 1;
}

/*
 * An entry that keeps being marked leaves the rotation once a backup took
 * its place: it stays usable (SKIP -> GOOD, whatever its mark) as a backup
 * that may serve again later. Applies to any word: the caller checked
 * mrc_ev_in_rotation() before activating the backup, and a change since
 * then (say a demotion) keeps its state; only ACTIVE goes.
 */
EV_RULE __u32 mrc_ev_rule_retire(__u32 w)
{
	__u8 state = MRC_EV_WORD_STATE(w);

	if (state == MRC_EV_SKIP)
		state = MRC_EV_GOOD;
	return mrc_ev_word_with(w, state, MRC_EV_WORD_FLAGS(w) & ~MRC_EV_F_ACTIVE);
}

#endif /* MRC_EV_RULES_H */
