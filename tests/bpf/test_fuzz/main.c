// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzer's tests (tests/fuzz/, docs/SECURITY.md "Fuzzing"):
 *   checker.c  the invariant checker catches each kind of corruption it
 *              names, on hand-corrupted snapshots (no kernel involved)
 *   short.c    a short fixed-seed run through every XDP and TC program
 *              (fuzz.short): what CI runs of `make fuzz`
 * This file loads the skeleton (the fixture) and runs them all.
 */
#include <stdio.h>

#include "mrc_fixture.h"
#include "fuzz.h"

TEST_STATE_DEFINE;

int main(void)
{
	if (fixture_setup("mrc-fuzz-test")) {
		printf("[fuzz.load] FAIL\n");
		fixture_cleanup();
		return 1;
	}
	RUN_REGISTERED_TESTS();
	fixture_cleanup();
	return TEST_EXIT();
}
