// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of include/mrc/ev_rules.h, the EV state machine the fast
 * path (bpf/mrc/ev_state.h, bpf/mrc/tc_spray.h) and userspace
 * (user/common/ev_state.c) both compile: every rule, from every state,
 * with every flag that matters, and that plane and path always survive a
 * change (they share the word the rules rewrite).
 */
#include <stdint.h>

#include "mrc/ev_rules.h"
#include "test.h"

TEST_STATE_DEFINE;

#define PLANE	3
#define PATH	7
#define ACTIVE	MRC_EV_F_ACTIVE
#define OWED	MRC_EV_F_OWED
#define BY_TO	MRC_EV_F_BY_TIMEOUT

static const uint8_t states[] = {
	MRC_EV_GOOD, MRC_EV_SKIP, MRC_EV_ASSUMED_BAD, MRC_EV_DENIED,
};

/* A word on plane PLANE, spine PATH. */
static uint32_t word(uint8_t state, uint8_t flags)
{
	return mrc_ev_word(PLANE, state, flags) | (uint32_t)PATH << 8;
}

/* Plane and path of nw are those of w: a rule changes state and flags only. */
static void assert_place_kept(uint32_t w, uint32_t nw, const char *what)
{
	ASSERT_EQ(MRC_EV_WORD_PLANE(nw), MRC_EV_WORD_PLANE(w), what);
	ASSERT_EQ(MRC_EV_WORD_PATH(nw), MRC_EV_WORD_PATH(w), what);
}

TEST_CASE(test_word_layout, "ev_rules.word_layout")
{
	struct mrc_ev_entry e = { .ev = 1 };

	e.word = word(MRC_EV_SKIP, ACTIVE | OWED);
	ASSERT_EQ(e.plane, PLANE, "plane byte");
	ASSERT_EQ(e.path, PATH, "path byte");
	ASSERT_EQ(e.state, MRC_EV_SKIP, "state byte");
	ASSERT_EQ(e.flags, ACTIVE | OWED, "flags byte");
	ASSERT_EQ(MRC_EV_WORD_FLAG(OWED), (uint32_t)OWED << 24, "flag bit in the word");
}

TEST_CASE(test_predicates, "ev_rules.predicates")
{
	ASSERT_TRUE(mrc_ev_state_usable(MRC_EV_GOOD), "GOOD usable");
	ASSERT_TRUE(mrc_ev_state_usable(MRC_EV_SKIP), "SKIP usable");
	ASSERT_TRUE(!mrc_ev_state_usable(MRC_EV_ASSUMED_BAD), "ASSUMED_BAD not usable");
	ASSERT_TRUE(!mrc_ev_state_usable(MRC_EV_DENIED), "DENIED not usable");

	ASSERT_TRUE(!mrc_ev_state_out_of_service(MRC_EV_GOOD), "GOOD in service");
	ASSERT_TRUE(!mrc_ev_state_out_of_service(MRC_EV_SKIP), "SKIP in service");
	ASSERT_TRUE(mrc_ev_state_out_of_service(MRC_EV_ASSUMED_BAD), "ASSUMED_BAD out");
	ASSERT_TRUE(mrc_ev_state_out_of_service(MRC_EV_DENIED), "DENIED out");

	ASSERT_TRUE(mrc_ev_carries(word(MRC_EV_GOOD, ACTIVE)), "active GOOD carries");
	ASSERT_TRUE(!mrc_ev_carries(word(MRC_EV_GOOD, 0)), "backup does not carry");
	ASSERT_TRUE(!mrc_ev_carries(word(MRC_EV_SKIP, ACTIVE)), "SKIP loses its turn");
	ASSERT_TRUE(!mrc_ev_carries(word(MRC_EV_ASSUMED_BAD, ACTIVE)), "bad does not carry");

	ASSERT_TRUE(mrc_ev_in_rotation(word(MRC_EV_GOOD, ACTIVE)), "GOOD active in rotation");
	ASSERT_TRUE(mrc_ev_in_rotation(word(MRC_EV_SKIP, ACTIVE)), "SKIP active in rotation");
	ASSERT_TRUE(!mrc_ev_in_rotation(word(MRC_EV_GOOD, 0)), "backup not in rotation");
	ASSERT_TRUE(!mrc_ev_in_rotation(word(MRC_EV_DENIED, ACTIVE)), "DENIED not in rotation");
}

TEST_CASE(test_min_active_floor, "ev_rules.may_take_down")
{
	ASSERT_TRUE(mrc_ev_may_take_down(4, 0, 0), "4 entries, none down, no floor");
	ASSERT_TRUE(mrc_ev_may_take_down(4, 1, 2), "leaves 2 of 4, floor 2");
	ASSERT_TRUE(!mrc_ev_may_take_down(4, 2, 2), "would leave 1 of 4, floor 2");
	ASSERT_TRUE(mrc_ev_may_take_down(1, 0, 0), "the last one, no floor");
	ASSERT_TRUE(!mrc_ev_may_take_down(1, 1, 0), "none left to take");
	ASSERT_TRUE(!mrc_ev_may_take_down(0, 0, 0), "empty table");
	ASSERT_TRUE(!mrc_ev_may_take_down(3, 5, 0), "count above the table (rebuilt)");
}

TEST_CASE(test_demote, "ev_rules.demote")
{
	uint32_t w, nw;

	for (unsigned i = 0; i < sizeof(states); i++) {
		w = word(states[i], ACTIVE | OWED);
		nw = 0xdeadbeef;
		ASSERT_EQ(mrc_ev_rule_demote(w, 0, &nw), mrc_ev_state_usable(states[i]),
			  "demote applies to GOOD and SKIP only");
		if (!mrc_ev_state_usable(states[i]))
			ASSERT_EQ(nw, 0xdeadbeef, "refused: *nw untouched");
	}
	w = word(MRC_EV_SKIP, ACTIVE | OWED);
	ASSERT_TRUE(mrc_ev_rule_demote(w, 0, &nw), "SKIP demoted");
	ASSERT_EQ(MRC_EV_WORD_STATE(nw), MRC_EV_ASSUMED_BAD, "state");
	ASSERT_EQ(MRC_EV_WORD_FLAGS(nw), 0, "ACTIVE and OWED cleared");
	assert_place_kept(w, nw, "demote keeps plane and path");
	ASSERT_TRUE(mrc_ev_demotion_owes(w), "an active entry leaves a place");

	w = word(MRC_EV_GOOD, 0);
	ASSERT_TRUE(mrc_ev_rule_demote(w, BY_TO, &nw), "GOOD backup demoted");
	ASSERT_EQ(MRC_EV_WORD_FLAGS(nw), BY_TO, "the mark added");
	ASSERT_TRUE(!mrc_ev_demotion_owes(w), "a backup leaves no place");
}

TEST_CASE(test_promote, "ev_rules.promote")
{
	uint32_t w, nw;

	for (unsigned i = 0; i < sizeof(states); i++)
		ASSERT_EQ(mrc_ev_rule_promote(word(states[i], 0), &nw),
			  states[i] == MRC_EV_ASSUMED_BAD, "promote from ASSUMED_BAD only");

	w = word(MRC_EV_ASSUMED_BAD, OWED | BY_TO);
	ASSERT_TRUE(mrc_ev_rule_promote(w, &nw), "owed entry promoted");
	ASSERT_EQ(MRC_EV_WORD_STATE(nw), MRC_EV_GOOD, "GOOD again");
	ASSERT_EQ(MRC_EV_WORD_FLAGS(nw), ACTIVE, "owed place taken back, BY_TIMEOUT cleared");
	assert_place_kept(w, nw, "promote keeps plane and path");

	w = word(MRC_EV_ASSUMED_BAD, 0);
	ASSERT_TRUE(mrc_ev_rule_promote(w, &nw), "backup promoted");
	ASSERT_EQ(MRC_EV_WORD_FLAGS(nw), 0, "a backup stays a backup");
}

TEST_CASE(test_deny_allow, "ev_rules.deny_allow")
{
	uint32_t w, nw, back;

	for (unsigned i = 0; i < sizeof(states); i++) {
		w = word(states[i], ACTIVE | BY_TO);
		ASSERT_EQ(mrc_ev_rule_deny(w, &nw), states[i] != MRC_EV_DENIED,
			  "deny from any state but DENIED");
		ASSERT_EQ(mrc_ev_rule_allow(w, &nw), states[i] == MRC_EV_DENIED,
			  "allow from DENIED only");
	}
	w = word(MRC_EV_SKIP, ACTIVE | OWED);
	ASSERT_TRUE(mrc_ev_rule_deny(w, &nw), "deny");
	ASSERT_EQ(MRC_EV_WORD_STATE(nw), MRC_EV_DENIED, "DENIED");
	ASSERT_EQ(MRC_EV_WORD_FLAGS(nw), ACTIVE | OWED, "flags kept");
	assert_place_kept(w, nw, "deny keeps plane and path");
	ASSERT_TRUE(mrc_ev_rule_allow(nw, &back), "allow");
	ASSERT_EQ(MRC_EV_WORD_STATE(back), MRC_EV_GOOD, "GOOD");
	ASSERT_EQ(MRC_EV_WORD_FLAGS(back), ACTIVE, "back in its place, nothing owed");
	assert_place_kept(w, back, "allow keeps plane and path");
}

TEST_CASE(test_skip_turn, "ev_rules.skip_once_end_skip")
{
	uint32_t w = word(MRC_EV_GOOD, ACTIVE), nw, back;

	for (unsigned i = 0; i < sizeof(states); i++) {
		ASSERT_EQ(mrc_ev_rule_skip_once(word(states[i], ACTIVE), &nw),
			  states[i] == MRC_EV_GOOD, "skip_once from GOOD only");
		ASSERT_EQ(mrc_ev_rule_end_skip(word(states[i], ACTIVE), &nw),
			  states[i] == MRC_EV_SKIP, "end_skip from SKIP only");
	}
	ASSERT_TRUE(mrc_ev_rule_skip_once(w, &nw), "skip once");
	ASSERT_EQ(nw, word(MRC_EV_SKIP, ACTIVE), "SKIP, flags kept");
	ASSERT_TRUE(mrc_ev_rule_end_skip(nw, &back), "turn passed");
	ASSERT_EQ(back, w, "GOOD again, the same word");
}

TEST_CASE(test_activate_backup, "ev_rules.activate_backup")
{
	uint32_t nw;

	ASSERT_TRUE(mrc_ev_rule_activate_backup(word(MRC_EV_GOOD, 0), PLANE, &nw),
		    "GOOD backup of the plane");
	ASSERT_EQ(nw, word(MRC_EV_GOOD, ACTIVE), "ACTIVE set, the rest kept");
	ASSERT_TRUE(!mrc_ev_rule_activate_backup(word(MRC_EV_GOOD, 0), PLANE + 1, &nw),
		    "another plane's backup");
	ASSERT_TRUE(!mrc_ev_rule_activate_backup(word(MRC_EV_GOOD, ACTIVE), PLANE, &nw),
		    "already active");
	ASSERT_TRUE(!mrc_ev_rule_activate_backup(word(MRC_EV_SKIP, 0), PLANE, &nw),
		    "SKIP is no backup to take");
	ASSERT_TRUE(!mrc_ev_rule_activate_backup(word(MRC_EV_ASSUMED_BAD, 0), PLANE, &nw),
		    "bad backup");
}

TEST_CASE(test_retire, "ev_rules.retire")
{
	uint32_t w = word(MRC_EV_SKIP, ACTIVE | OWED);

	ASSERT_EQ(mrc_ev_rule_retire(w), word(MRC_EV_GOOD, OWED),
		  "SKIP -> GOOD backup, other flags kept");
	ASSERT_EQ(mrc_ev_rule_retire(word(MRC_EV_GOOD, ACTIVE)), word(MRC_EV_GOOD, 0),
		  "GOOD -> GOOD backup");
	ASSERT_EQ(mrc_ev_rule_retire(word(MRC_EV_ASSUMED_BAD, ACTIVE)),
		  word(MRC_EV_ASSUMED_BAD, 0), "a demotion since the check keeps its state");
}

int main(void)
{
	RUN_REGISTERED_TESTS();
	return TEST_EXIT();
}
