// SPDX-License-Identifier: GPL-2.0
/*
 * The fast path and libmrc with maps sized at run time, as mrcd sizes them
 * for --max-qps and --max-contexts (user/common/map_plan.h): the object
 * is loaded with LIMITS_QPS QPs and LIMITS_CTX contexts, more than it is
 * built with (MRC_MAX_QPS, MRC_MAX_CTX), so nothing may lean on the
 * built sizes.
 *
 *   bpf_sizes.c     mrc_xdp_rx on QPs, windows and contexts past the
 *                   built sizes, and QP numbers past the maps' (dropped)
 *   libmrc_limits.c libmrc learns the limits from the maps: QP numbers
 *                   over 1..max_qps, ENOSPC and EMFILE naming the limit
 *
 * Like test_mrc_xdp and test_libmrc: a private network namespace, the
 * maps pinned in a folder of their own (/sys/fs/bpf/mrc-limits-<pid>),
 * removed at exit.
 */
#define _GNU_SOURCE		/* unshare() */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "limits_test.h"

TEST_STATE_DEFINE;

int main(void)
{
	if (unshare(CLONE_NEWNET) || system("ip link set lo up >&2")) {
		printf("[limits.netns] FAIL\n");
		return 1;
	}
	if (fixture_setup_sized("mrc-limits", LIMITS_QPS, LIMITS_CTX)) {
		printf("[limits.load] FAIL\n");
		fixture_cleanup();
		return 1;
	}
	RUN_REGISTERED_TESTS();
	fixture_cleanup();
	return TEST_EXIT();
}
