/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * EV state changes made in userspace (libmrc timeouts, mrcd probes, port
 * status, the controller's deny/allow) on a QP's EV table while XDP and TC
 * change it too. The table is the QP's own one-entry BPF_F_MMAPABLE map
 * in mrc_qp_evs (user/common/qpmaps.h, state_maps.h map it);
 * every change is a compare-and-swap of an entry's state word, by the
 * rules the BPF side follows too (include/mrc/ev_rules.h, compiled into
 * both), so no change is ever lost.
 */
#ifndef MRC_EV_STATE_H
#define MRC_EV_STATE_H

#include <stdint.h>

#include "mrc/abi.h"
#include "mrc/ev_rules.h"

enum ev_change {
	EV_CHANGED	= 1,	/* the state changed */
	EV_UNCHANGED	= 0,	/* already in that state, or not allowed from its state */
	EV_REFUSED	= -1,	/* would leave fewer usable EVs than min_active */
};

/*
 * GOOD or SKIP -> ASSUMED_BAD, unless that would leave fewer usable
 * entries than min_active. An ACTIVE entry hands its place to a GOOD
 * backup of its plane, or keeps it owed (MRC_EV_F_OWED) when there is none.
 * `mark` (e.g. MRC_EV_F_BY_TIMEOUT) is added to the entry's flags.
 */
enum ev_change ev_demote(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx,
			 uint8_t mark);

/*
 * ASSUMED_BAD -> GOOD; an owed place in the rotation is taken back and
 * MRC_EV_F_BY_TIMEOUT is cleared.
 */
enum ev_change ev_promote(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx);

/* Controller: any state -> DENIED, ignoring min_active; allow: DENIED -> GOOD. */
enum ev_change ev_deny(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx);
enum ev_change ev_allow(struct mrc_qp_evs *evs, uint32_t n, uint32_t idx);

/* Entries in GOOD or SKIP (active or backup). */
uint32_t ev_usable(const struct mrc_qp_evs *evs, uint32_t n);

#endif
