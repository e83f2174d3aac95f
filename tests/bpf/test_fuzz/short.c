// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz.short: what CI runs of `make fuzz`, a fixed seed and 30,000 frames
 * (a few seconds) through every XDP and TC program, every invariant
 * checked after each frame. A violation prints the frame and the
 * invariant and saves the case under build/test-logs for --replay.
 */
#include <sys/stat.h>

#include "mrc_fixture.h"
#include "fuzz.h"

#define SHORT_SEED	20250916ull
#define SHORT_FRAMES	30000ull

TEST_CASE(test_fuzz_short, "fuzz.short")
{
	struct fz_opts o = { .seed = SHORT_SEED, .frames = SHORT_FRAMES, .seconds = 25,
			     .fail_dir = "build/test-logs" };
	struct fz_result res;

	mkdir("build/test-logs", 0755);
	ASSERT_EQ(fz_run(&o, &res), 0, "no invariant violated");
	fprintf(stderr, "  %llu frames in %.2f s (%.0f frames/s), seed %llu\n",
		(unsigned long long)res.frames, res.seconds,
		res.seconds > 0 ? (double)res.frames / res.seconds : 0.0,
		(unsigned long long)o.seed);
	/* A run cut short by the time cap would test less than it claims. */
	ASSERT_EQ(res.frames, SHORT_FRAMES, "every frame run");
	/* The generator reaches the paths: each verdict kind seen. */
	ASSERT_TRUE(res.verdicts[1] > 0, "some XDP drops");
	ASSERT_TRUE(res.verdicts[2] > 0, "some XDP passes");
	ASSERT_TRUE(res.verdicts[3] > 0, "some XDP_TX answers");
	ASSERT_TRUE(res.verdicts[5] > 0, "some TC frames");
	ASSERT_TRUE(res.verdicts[7] > 0, "some TC plane moves (redirect)");
}
