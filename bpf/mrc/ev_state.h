/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * EV state changes the fast path makes on a QP's EV table (mrc_qp_evs):
 * demotion (and of a failing spine's siblings), backups taking an active
 * EV's place, a skipped turn. Every change is a compare-and-swap of an
 * entry's state word; the rules themselves live in include/mrc/ev_rules.h,
 * shared with userspace (user/common/ev_state.c).
 */
#ifndef MRC_BPF_EV_STATE_H
#define MRC_BPF_EV_STATE_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "mrc/ev_rules.h"
#include "parsing.h"
#include "mrc/maps.h"
#include "mrc/stats.h"
#include "mrc/ev_log.h"

/*
 * EV state changes. plane, state and flags of an entry form one 32-bit
 * word that XDP, TC, libmrc and mrcd change only by compare-and-swap, so
 * no change undoes another (user/common/ev_state.c applies the same
 * rules, include/mrc/ev_rules.h, from userspace).
 * A CAS that keeps failing gives up after a few tries: the state is
 * advisory and the next SACK tries again.
 */
#define EV_CAS_TRIES	4

/*
 * Is idx (from the send log or a packet) an entry of the QP's table of n?
 * Every index that picks an entry to change passes this first.
 */
static __always_inline int ev_idx_valid(__u32 n, __u32 idx)
{
	return n <= MRC_MAX_EVS && idx < n;
}

struct backup_ctx {
	struct mrc_qp_evs *evs;
	__u32 n;
	__u32 plane;
	__u32 found;		/* index + 1 of the backup activated, 0 = none */
};

/* Activate the first GOOD backup of the plane (one CAS per candidate). */
static long activate_backup_step(__u32 j, void *data)
{
	struct backup_ctx *bc = data;
	struct mrc_ev_entry *e;
	__u32 w, nw;

	if (j >= bc->n)
		return 1;
	e = &bc->evs->ev[j & (MRC_MAX_EVS - 1)];
	w = READ_ONCE(e->word);
	if (!mrc_ev_rule_activate_backup(w, bc->plane, &nw))
		return 0;
	if (__sync_val_compare_and_swap(&e->word, w, nw) != w)
		return 0;	/* changed under us: look further */
	bc->found = j + 1;
	return 1;
}

static __always_inline int activate_backup(struct mrc_qp_evs *evs, __u32 n,
					   __u32 plane)
{
	struct backup_ctx bc = { .evs = evs, .n = n, .plane = plane };

	bpf_loop(MRC_MAX_EVS, activate_backup_step, &bc, 0);
	return bc.found ? 0 : -1;
}

/*
 * An EV that keeps being marked is replaced by a backup EV of the same
 * plane, so the plane keeps its share of the load. It stays GOOD: as a
 * backup it may serve again later.
 */
static __always_inline void swap_for_backup(struct mrc_qp_evs *evs, __u32 n,
					    __u32 idx)
{
	struct mrc_ev_entry *e = &evs->ev[idx & (MRC_MAX_EVS - 1)];
	__u32 w;

	if (!ev_idx_valid(n, idx))
		return;
	w = READ_ONCE(e->word);

	/* Late marks for an EV already retired must not retire another. */
	if (!mrc_ev_in_rotation(w))
		return;
	if (activate_backup(evs, n, MRC_EV_WORD_PLANE(w)))
		return;
	for (int i = 0; i < EV_CAS_TRIES; i++) {
		w = READ_ONCE(e->word);
		if (__sync_val_compare_and_swap(&e->word, w,
						mrc_ev_rule_retire(w)) == w)
			return;
	}
}

/* GOOD -> SKIP for one turn (ECN echo, mid-path trim). */
static __always_inline void skip_once(struct mrc_qp_evs *evs, __u32 n, __u32 idx)
{
	struct mrc_ev_entry *e = &evs->ev[idx & (MRC_MAX_EVS - 1)];
	__u32 w, nw;

	if (!ev_idx_valid(n, idx))
		return;
	w = READ_ONCE(e->word);

	if (mrc_ev_rule_skip_once(w, &nw))
		__sync_val_compare_and_swap(&e->word, w, nw);
}

/* Tell mrcd (ring mrc_ev_events); a full ring is counted, never waited on. */
static __always_inline void emit_ev_event(__u32 slot,
					  const struct mrc_qp_evs *evs,
					  __u32 idx, __u32 word, __u8 reason,
					  __u32 psn, __u64 sent_ns)
{
	struct mrc_ctl_stats *cs = ctl_stats();
	struct mrc_ev_event evt = {
		.time_ns = bpf_ktime_get_ns(),
		.qpn = mrc_slot_to_qpn(slot),
		.ev = evs->ev[idx & (MRC_MAX_EVS - 1)].ev,
		.idx = (__u16)idx,
		.plane = MRC_EV_WORD_PLANE(word),
		.profile = evs->profile,
		.state = MRC_EV_WORD_STATE(word),
		.reason = reason,
		.psn = psn,
		.sent_ns = sent_ns,
	};

	if (bpf_ringbuf_output(&mrc_ev_events, &evt, sizeof(evt), 0)) {
		if (cs)
			cs->ev_events_lost++;
	} else if (cs) {
		cs->ev_events++;
	}
}

/* Count one more entry down, unless that breaks ev_min_active. */
static __always_inline int reserve_down(struct mrc_qp_evs *evs, __u32 n)
{
	for (int i = 0; i < EV_CAS_TRIES; i++) {
		__u32 down = READ_ONCE(evs->n_down);

		if (!mrc_ev_may_take_down(n, down, evs->min_active))
			return -1;
		if (__sync_val_compare_and_swap(&evs->n_down, down, down + 1) == down)
			return 0;
	}
	return -1;
}

/*
 * GOOD or SKIP -> ASSUMED_BAD: the EV leaves the rotation until probes
 * bring it back (mrcd). An active EV hands its place to a GOOD backup of
 * its plane, or keeps it owed when the plane has none, so load does not
 * move between planes because of one path. Refused (and counted) when it
 * would leave fewer usable EVs than ev_min_active: then the EV stays in
 * rotation and only its lost packets are resent elsewhere.
 */
static __always_inline int demote_ev(__u32 slot, struct mrc_qp_evs *evs,
				     __u32 n, __u32 idx, __u8 reason, __u32 psn,
				     __u64 sent_ns)
{
	struct mrc_ev_entry *e;
	struct mrc_ctl_stats *cs;
	__u32 w = 0, nw = 0;
	int done = 0;

	if (!ev_idx_valid(n, idx))
		return 0;
	e = &evs->ev[idx & (MRC_MAX_EVS - 1)];
	if (!mrc_ev_state_usable(MRC_EV_WORD_STATE(READ_ONCE(e->word))))
		return 0;
	if (reserve_down(evs, n)) {
		cs = ctl_stats();
		if (cs)
			cs->demote_refused++;
		return 0;
	}
	for (int i = 0; i < EV_CAS_TRIES; i++) {
		w = READ_ONCE(e->word);
		if (!mrc_ev_rule_demote(w, 0, &nw))
			break;
		if (__sync_val_compare_and_swap(&e->word, w, nw) == w) {
			done = 1;
			break;
		}
	}
	if (!done) {
		__sync_fetch_and_add(&evs->n_down, -1);
		return 0;
	}
	/* w is what the entry was: hand an active place over or keep it owed. */
	if (mrc_ev_demotion_owes(w) &&
	    activate_backup(evs, n, MRC_EV_WORD_PLANE(w)))
		__sync_fetch_and_or(&e->word, MRC_EV_WORD_FLAG(MRC_EV_F_OWED));
	emit_ev_event(slot, evs, idx, nw, reason, psn, sent_ns);
	return 1;
}

struct sibling_ctx {
	struct mrc_qp_evs *evs;
	__u64 sent_ns;
	__u64 now;
	__u32 slot, n, skip, psn;
	/* Packed: bpf_loop frames nest three deep within the 512-byte stack. */
	__u16 bad;		/* siblings lost within the window */
	__u16 other;		/* EVs of other paths lost within it */
	__u8 plane, path;
};

static long count_bad_sibling_step(__u32 j, void *data)
{
	struct sibling_ctx *sc = data;
	__u32 w;

	if (j >= sc->n)
		return 1;
	w = READ_ONCE(sc->evs->ev[j & (MRC_MAX_EVS - 1)].word);
	if (j != sc->skip && MRC_EV_WORD_STATE(w) == MRC_EV_ASSUMED_BAD) {
		struct mrc_ev_rx_counters *c = ev_counters(sc->slot, j);

		if (!c || sc->now - READ_ONCE(c->lost_ns) >= MRC_SAME_PATH_WINDOW_NS)
			return 0;
		if (MRC_EV_WORD_PLANE(w) == sc->plane && MRC_EV_WORD_PATH(w) == sc->path)
			sc->bad++;
		else
			sc->other++;
	}
	return 0;
}

static long demote_sibling_step(__u32 j, void *data)
{
	struct sibling_ctx *sc = data;
	__u32 w;

	if (j >= sc->n)
		return 1;
	w = READ_ONCE(sc->evs->ev[j & (MRC_MAX_EVS - 1)].word);
	if (j == sc->skip || MRC_EV_WORD_PLANE(w) != sc->plane ||
	    MRC_EV_WORD_PATH(w) != sc->path ||
	    !mrc_ev_state_usable(MRC_EV_WORD_STATE(w)))
		return 0;
	demote_ev(sc->slot, sc->evs, sc->n, j, MRC_EVR_SAME_PATH, sc->psn,
		  sc->sent_ns);
	return 0;
}

/*
 * A loss on an EV whose spine path discovery knows, while another EV of
 * that spine, and no EV of any other path, was taken out by a loss within
 * MRC_SAME_PATH_WINDOW_NS: the spine is failing, and the other EVs
 * through it (active ones and backups) go too, at once. A dead spine
 * would otherwise be found one EV at a time, each when it next carries a
 * packet, 10-25 ms for all of them at 50k packets/s. Two EVs, not one: a
 * single loss may be a host's hiccup, and it should not cost a spine; and
 * only that spine: losses on several paths at once are the host's (a
 * stalled CPU holds back packets of every path), not the fabric's.
 * A spine that keeps dropping loses its EVs until probes bring them back;
 * its plane runs on its other spines meanwhile.
 */
static __always_inline void demote_siblings(__u32 slot, struct mrc_qp_evs *evs,
					    __u32 n, __u32 idx, __u32 psn,
					    __u64 sent_ns)
{
	__u32 w = READ_ONCE(evs->ev[idx & (MRC_MAX_EVS - 1)].word);
	struct sibling_ctx sc = {
		.evs = evs, .sent_ns = sent_ns, .slot = slot, .n = n,
		.skip = idx, .psn = psn,
		.plane = MRC_EV_WORD_PLANE(w), .path = MRC_EV_WORD_PATH(w),
	};

	if (!sc.path || n > MRC_MAX_EVS)
		return;
	sc.now = bpf_ktime_get_ns();
	bpf_loop(MRC_MAX_EVS, count_bad_sibling_step, &sc, 0);
	if (sc.bad && !sc.other)
		bpf_loop(MRC_MAX_EVS, demote_sibling_step, &sc, 0);
}

#endif /* MRC_BPF_EV_STATE_H */
