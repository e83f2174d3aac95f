// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of libmrc's idle-spin rule (progress.c): whether a spin
 * would have caught what ended a sleep is judged by the packet's arrival
 * stamp, not by when the sleeper woke, so a slow wakeup (a VM's 10-20 us)
 * does not hold the budget at its floor while packets come close together.
 */
#include <stdbool.h>
#include <stdint.h>

#include "libmrc/progress.h"
#include "test.h"

TEST_STATE_DEFINE;

#define US 1000ull
/* Any CLOCK_REALTIME-like origin for the spell's start. */
#define SPELL_START (1700000000ull * 1000000000ull)

TEST_CASE(test_packet_soon_after_a_slow_wakeup, "spin_rule.packet_soon_after_a_slow_wakeup")
{
	/*
	 * The packet came 10 us into the spell, the sleeper woke 60 us after
	 * it went to sleep. By the wakeup the spin was wasted; by the
	 * arrival a spin would have caught it.
	 */
	ASSERT_TRUE(mrc_spin_would_have_paid(SPELL_START, SPELL_START + 10 * US,
					     60 * US),
		    "a packet 10 us into the spell, a 60 us wakeup: the spin pays");
}

TEST_CASE(test_packet_late, "spin_rule.packet_late")
{
	/* A packet past the largest budget: no spin would have caught it. */
	ASSERT_TRUE(!mrc_spin_would_have_paid(SPELL_START,
					      SPELL_START + MRC_SPIN_MAX_NS + US, 10 * US),
		    "a packet past MRC_SPIN_MAX_NS: the spin does not pay, "
		    "however soon the sleeper woke");
	ASSERT_TRUE(!mrc_spin_would_have_paid(SPELL_START, SPELL_START + 5000 * US,
					      5000 * US),
		    "a packet 5 ms into the spell (rate-limited gaps, an idle QP)");
}

TEST_CASE(test_no_stamp, "spin_rule.no_stamp_judged_by_the_sleep")
{
	/*
	 * An event or a wait fd ended it: the sleep against the ceiling, not
	 * against the budget it followed (at 1 us no wakeup beat that).
	 */
	ASSERT_TRUE(mrc_spin_would_have_paid(SPELL_START, 0, 30 * US),
		    "an event 30 us into the sleep (a batch's completions): pays");
	ASSERT_TRUE(!mrc_spin_would_have_paid(SPELL_START, 0, MRC_SPIN_MAX_NS),
		    "an event after the ceiling: does not");
	ASSERT_TRUE(!mrc_spin_would_have_paid(SPELL_START, 0, 4000 * US),
		    "a window share acked after 4 ms: does not");
}

TEST_CASE(test_stamp_before_spell, "spin_rule.stamp_before_the_spell")
{
	/*
	 * A packet stamped before the spell began (queued while the round
	 * decided to sleep, or a clock step): its stamp says nothing about
	 * the spell, so the sleep decides, as without a stamp.
	 */
	ASSERT_TRUE(mrc_spin_would_have_paid(SPELL_START, SPELL_START - 2 * US, 1 * US),
		    "woken at once by a packet already there: pays");
	ASSERT_TRUE(!mrc_spin_would_have_paid(SPELL_START, SPELL_START - 2 * US, 60 * US),
		    "a stale stamp and a long sleep: does not");
}

TEST_CASE(test_bounds, "spin_rule.bounds")
{
	ASSERT_TRUE(MRC_SPIN_MIN_NS < MRC_SPIN_MAX_NS, "min below max");
	ASSERT_TRUE(mrc_spin_would_have_paid(SPELL_START, SPELL_START + MRC_SPIN_MAX_NS - 1,
					     MRC_SPIN_MAX_NS * 4),
		    "just inside MRC_SPIN_MAX_NS pays");
	ASSERT_TRUE(!mrc_spin_would_have_paid(SPELL_START, SPELL_START + MRC_SPIN_MAX_NS, 1),
		    "exactly MRC_SPIN_MAX_NS does not, however short the sleep");
}

int main(void)
{
	RUN_REGISTERED_TESTS();
	return TEST_EXIT();
}
