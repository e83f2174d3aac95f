// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of user/common/ev_state.c: the EV state changes libmrc (timeouts)
 * and mrcd (probes, port status, deny/allow) make on a QP's EV table. The
 * rules must match the BPF side (tests/bpf/test_mrc_xdp/ checks those):
 * backups of the same plane take a demoted EV's place, an owed place is
 * given back on recovery, ev_min_active is a floor for automatic
 * demotion, and DENIED is reached and left only through deny/allow.
 */
#include <stdint.h>
#include <string.h>

#include "common/ev_state.h"
#include "test.h"

TEST_STATE_DEFINE;

static struct mrc_qp_evs evs;

static void entry(uint32_t i, uint32_t ev, uint16_t plane, uint8_t state,
		  uint8_t flags)
{
	evs.ev[i].ev = ev;
	evs.ev[i].plane = plane;
	evs.ev[i].state = state;
	evs.ev[i].flags = flags;
}

/*
 * Plane 1: 0 and 1 active, 2 a backup. Plane 2: 3 active, 4 a backup in
 * ASSUMED_BAD (not usable as a replacement). n_down starts at 1 (entry 4).
 */
static void setup(uint16_t min_active)
{
	memset(&evs, 0, sizeof(evs));
	entry(0, 0xA0, 1, MRC_EV_GOOD, MRC_EV_F_ACTIVE);
	entry(1, 0xA1, 1, MRC_EV_SKIP, MRC_EV_F_ACTIVE);
	entry(2, 0xA2, 1, MRC_EV_GOOD, 0);
	entry(3, 0xB0, 2, MRC_EV_GOOD, MRC_EV_F_ACTIVE);
	entry(4, 0xB1, 2, MRC_EV_ASSUMED_BAD, 0);
	evs.n_down = 1;
	evs.min_active = min_active;
}

static void test_demote_takes_backup(void)
{
	setup(0);
	ASSERT_EQ(ev_demote(&evs, 5, 0, 0), EV_CHANGED, "GOOD active entry demoted");
	ASSERT_EQ(evs.ev[0].state, MRC_EV_ASSUMED_BAD, "state");
	ASSERT_EQ(evs.ev[0].flags, 0, "no longer ACTIVE, nothing owed");
	ASSERT_EQ(evs.ev[2].flags, MRC_EV_F_ACTIVE, "plane-1 backup took its place");
	ASSERT_EQ(evs.ev[2].state, MRC_EV_GOOD, "backup stays GOOD");
	ASSERT_EQ(evs.n_down, 2, "n_down counts it");
	ASSERT_EQ(ev_demote(&evs, 5, 0, 0), EV_UNCHANGED, "demoting again changes nothing");
	ASSERT_EQ(evs.n_down, 2, "n_down unchanged");
	ASSERT_EQ(ev_usable(&evs, 5), 3, "entries 1, 2 and 3 usable");
}

static void test_demote_skip_and_owed(void)
{
	setup(0);
	/* Plane 2 has no GOOD backup (entry 4 is bad): the place is owed. */
	ASSERT_EQ(ev_demote(&evs, 5, 3, MRC_EV_F_BY_TIMEOUT), EV_CHANGED, "demoted");
	ASSERT_EQ(evs.ev[3].flags, MRC_EV_F_OWED | MRC_EV_F_BY_TIMEOUT,
		  "owed, marked as a timeout's");
	ASSERT_EQ(evs.ev[4].flags, 0, "the bad backup was not activated");
	/* A SKIP entry is usable, so it can be demoted. */
	ASSERT_EQ(ev_demote(&evs, 5, 1, 0), EV_CHANGED, "SKIP entry demoted");
	ASSERT_EQ(evs.ev[1].state, MRC_EV_ASSUMED_BAD, "SKIP -> ASSUMED_BAD");
	/* Recovery gives the owed place back and clears the timeout mark. */
	ASSERT_EQ(ev_promote(&evs, 5, 3), EV_CHANGED, "promoted");
	ASSERT_EQ(evs.ev[3].state, MRC_EV_GOOD, "GOOD again");
	ASSERT_EQ(evs.ev[3].flags, MRC_EV_F_ACTIVE, "ACTIVE again, nothing owed");
	ASSERT_EQ(evs.n_down, 2, "entries 1 and 4 still down");
	ASSERT_EQ(ev_promote(&evs, 5, 3), EV_UNCHANGED, "a GOOD entry is not promoted");
}

static void test_min_active_floor(void)
{
	/* 5 entries, 1 down, floor 3: one more may go, the next may not. */
	setup(3);
	ASSERT_EQ(ev_demote(&evs, 5, 0, 0), EV_CHANGED, "4 usable -> 3");
	ASSERT_EQ(ev_demote(&evs, 5, 3, 0), EV_REFUSED, "3 usable is the floor");
	ASSERT_EQ(evs.ev[3].state, MRC_EV_GOOD, "refused entry stays GOOD");
	ASSERT_EQ(evs.ev[3].flags, MRC_EV_F_ACTIVE, "and in rotation");
	ASSERT_EQ(evs.n_down, 2, "n_down unchanged by a refusal");
	/* The controller's deny ignores the floor. */
	ASSERT_EQ(ev_deny(&evs, 5, 3), EV_CHANGED, "deny below the floor");
	ASSERT_EQ(evs.n_down, 3, "denied entries count as down");
}

static void test_deny_allow(void)
{
	setup(0);
	ASSERT_EQ(ev_deny(&evs, 5, 4), EV_CHANGED, "ASSUMED_BAD -> DENIED");
	ASSERT_EQ(evs.n_down, 1, "already counted as down");
	ASSERT_EQ(ev_promote(&evs, 5, 4), EV_UNCHANGED, "probes never lift a deny");
	ASSERT_EQ(ev_demote(&evs, 5, 4, 0), EV_UNCHANGED, "nor does a loss change it");
	ASSERT_EQ(ev_deny(&evs, 5, 0), EV_CHANGED, "GOOD -> DENIED");
	ASSERT_EQ(evs.ev[0].flags, MRC_EV_F_ACTIVE, "keeps its place for allow");
	ASSERT_EQ(evs.n_down, 2, "n_down");
	ASSERT_EQ(ev_deny(&evs, 5, 0), EV_UNCHANGED, "deny twice");
	ASSERT_EQ(ev_allow(&evs, 5, 0), EV_CHANGED, "DENIED -> GOOD");
	ASSERT_EQ(evs.ev[0].state, MRC_EV_GOOD, "GOOD");
	ASSERT_EQ(evs.n_down, 1, "n_down");
	ASSERT_EQ(ev_allow(&evs, 5, 1), EV_UNCHANGED, "allow of a SKIP entry");
}

static void test_bounds(void)
{
	setup(0);
	ASSERT_EQ(ev_demote(&evs, 5, 5, 0), EV_UNCHANGED, "index past n");
	ASSERT_EQ(ev_promote(&evs, 5, MRC_MAX_EVS), EV_UNCHANGED, "index past the table");
	ASSERT_EQ(ev_deny(&evs, 0, 0), EV_UNCHANGED, "empty table");
	ASSERT_EQ(evs.n_down, 1, "nothing counted");
	/* n_down never goes below zero, even if the table was rebuilt. */
	evs.n_down = 0;
	ASSERT_EQ(ev_promote(&evs, 5, 4), EV_CHANGED, "promote with n_down 0");
	ASSERT_EQ(evs.n_down, 0, "n_down stays 0");
}

int main(void)
{
	RUN_TEST("ev_state.demote_takes_backup", test_demote_takes_backup);
	RUN_TEST("ev_state.demote_skip_and_owed", test_demote_skip_and_owed);
	RUN_TEST("ev_state.min_active_floor", test_min_active_floor);
	RUN_TEST("ev_state.deny_allow", test_deny_allow);
	RUN_TEST("ev_state.bounds", test_bounds);
	return TEST_EXIT();
}
