// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-fuzz: random and mutated frames through every XDP and TC program of
 * the fast path, the state invariants checked after each one (the engine
 * is tests/fuzz/, see fuzz.h). A developer tool on the BPF tests' fixture:
 * built by `make`, run by `make fuzz`, never installed. Needs root (BPF).
 *
 *   mrc-fuzz [--seed N] [--frames N] [--seconds S] [--fail-dir DIR]
 *   mrc-fuzz --replay FILE
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrc_fixture.h"
#include "fuzz.h"

TEST_STATE_DEFINE;

#define DEFAULT_SEED	0x4d5243ull	/* "MRC" */
#define DEFAULT_FRAMES	1000000ull

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mrc-fuzz [--seed N] [--frames N] [--seconds S] [--fail-dir DIR]\n"
		"       mrc-fuzz --replay FILE\n"
		"Random and mutated frames through every XDP and TC program of mrc.bpf.o\n"
		"(bpf_prog_test_run), state invariants checked after each; exit 1 on a\n"
		"violation, whose frame and state are saved for --replay.\n"
		"  --seed N      the run is a function of the seed (default %llu)\n"
		"  --frames N    frames to run (default %llu)\n"
		"  --seconds S   stop after S seconds even if frames remain\n"
		"  --fail-dir D  where a failing case is saved (default .)\n"
		"  --replay F    run a saved case again: exit 0 if it passes now\n",
		(unsigned long long)DEFAULT_SEED, (unsigned long long)DEFAULT_FRAMES);
}

static int parse_u64(const char *s, unsigned long long *v)
{
	char *end;

	*v = strtoull(s, &end, 0);
	return *s && !*end ? 0 : -1;
}

static void print_result(const struct fz_opts *o, const struct fz_result *res)
{
	printf("mrc-fuzz: %llu frames in %.1f s: %.0f frames/s (%.0f per CPU second), "
	       "seed %llu, %s\n", (unsigned long long)res->frames, res->seconds,
	       res->seconds > 0 ? (double)res->frames / res->seconds : 0.0,
	       res->cpu_seconds > 0 ? (double)res->frames / res->cpu_seconds : 0.0,
	       (unsigned long long)o->seed, res->failed ? "VIOLATION" : "no violation");
	printf("  XDP: %llu aborted, %llu drop, %llu pass, %llu tx, %llu redirect; "
	       "TC: %llu ok, %llu other, %llu redirect; %llu refused by test_run\n",
	       (unsigned long long)res->verdicts[0], (unsigned long long)res->verdicts[1],
	       (unsigned long long)res->verdicts[2], (unsigned long long)res->verdicts[3],
	       (unsigned long long)res->verdicts[4], (unsigned long long)res->verdicts[5],
	       (unsigned long long)res->verdicts[6], (unsigned long long)res->verdicts[7],
	       (unsigned long long)res->runs_refused);
	printf("  events: %llu completions, %llu losses, %llu fatal, %llu window, %llu sack-due; "
	       "%llu EV state changes\n",
	       (unsigned long long)res->events[MRC_EVT_COMPLETION],
	       (unsigned long long)res->events[MRC_EVT_LOSS],
	       (unsigned long long)res->events[MRC_EVT_QP_FATAL],
	       (unsigned long long)res->events[MRC_EVT_WINDOW],
	       (unsigned long long)res->events[MRC_EVT_SACK_DUE],
	       (unsigned long long)res->ev_events);
}

int main(int argc, char **argv)
{
	struct fz_opts o = { .seed = DEFAULT_SEED, .frames = DEFAULT_FRAMES };
	const char *replay = NULL;
	struct fz_result res;
	unsigned long long v;
	int i, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!val)
			goto bad;
		if (!strcmp(a, "--seed") && !parse_u64(val, &v))
			o.seed = v;
		else if (!strcmp(a, "--frames") && !parse_u64(val, &v))
			o.frames = v;
		else if (!strcmp(a, "--seconds"))
			o.seconds = atof(val);
		else if (!strcmp(a, "--fail-dir"))
			o.fail_dir = val;
		else if (!strcmp(a, "--replay"))
			replay = val;
		else
			goto bad;
		i++;
	}
	if (fixture_setup("mrc-fuzz")) {
		fixture_cleanup();
		return 2;
	}
	if (replay) {
		rc = fz_replay(replay);
		fixture_cleanup();
		return rc;
	}
	printf("mrc-fuzz: seed %llu, %llu frames%s\n", (unsigned long long)o.seed,
	       (unsigned long long)o.frames, o.seconds > 0 ? " (time-capped)" : "");
	fflush(stdout);
	rc = fz_run(&o, &res);
	print_result(&o, &res);
	fixture_cleanup();
	return rc;
bad:
	usage(stderr);
	return 2;
}
