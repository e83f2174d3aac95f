// SPDX-License-Identifier: GPL-2.0
/*
 * BPF unit tests of bpf/mrc.bpf.c, the MRC fast path: mrc_xdp_rx (DATA and
 * PROBE validation and steering, trimmed DATA answered with a NACK built
 * in place (XDP_TX, bpf/mrc/trim_nack.h), reverse-EV learning, SACK and NACK
 * processing with per-EV feedback, the congestion window (NSCC) those
 * SACKs and NACKs feed (mrc_cc, mrc_cc_view, MRC_EVT_WINDOW wake-ups),
 * EV demotion to ASSUMED_BAD with its
 * events on mrc_ev_events, endpoint control: EV probes answered with
 * XDP_TX, probe responses and port status steered to mrcd) and mrc_tc_tx
 * (multi-plane spraying: the EV rotation over `perm`, the send log, plane
 * moves, ACK spraying, EV probe stamping).
 *
 * Every test runs a program on crafted packets through
 * bpf_prog_test_run_opts(): no traffic, deterministic (where the program
 * draws random numbers, the tests check properties, not sequences). The
 * maps are pinned by name, so the skeleton is opened with a pin root of
 * its own (/sys/fs/bpf/mrc-unit-<pid>), never the /sys/fs/bpf/mrc of a
 * running mrcd, and that directory is emptied and removed at exit.
 *
 * The program runs in a private network namespace (unshare at the start of
 * main): lo is plane 1, a veth "mrcp2" (198.18.2.1/24, fd00:2::1/64, with
 * permanent neighbours 198.18.2.2 and fd00:2::2) is plane 2, a real
 * interface for XDP's ingress_ifindex and TC's skb device, with the routes
 * and neighbours a redirect to it would use; nothing touches the host's
 * namespace.
 *
 * Each test starts from setup_qp(): all maps reset, one QP installed
 * (qpn 5, slot 4, RTS, peer 198.18.1.2 [and fd00:1::2]), responder state
 * cack 999 / mpr 1024, requester state snd_una 1000 / snd_nxt 1100 with
 * three posted WRITEs ending at PSNs 1004, 1009 and 1050, and a fresh
 * event ring at context 0. TC tests add an EV table (setup_table()),
 * window tests a congestion window (setup_cc(); the QP has none
 * otherwise, and every window is zeroed).
 * mrc_cfg (agent_port included) and mrc_ctl_stats are zeroed and the
 * pinned EV event ring mrc_ev_events is drained, so no test sees another's
 * counters or events.
 *
 * The packet builders, the QP set-up and the skeleton loading are the
 * fixture tests/lib/mrc_fixture.c (tests/include/mrc_fixture.h), shared
 * with build/mrc-bpf-cost. The tests live in this folder's files, one per
 * role of the fast path (mrc_xdp_test.h lists them), each registered by
 * TEST_CASE; this file sets up the namespace and the skeleton and runs
 * them all.
 *
 * Tests marked "SUSPECTED BUG" in their comment encode what the program's
 * own documentation promises and failed against bpf/mrc.bpf.c as written
 * when they were added; they stay so the fix is checked.
 */
#define _GNU_SOURCE		/* unshare() */
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrc_xdp_test.h"

TEST_STATE_DEFINE;

/* Plane 2 (the veth "mrcp2" of the private namespace) and the peer on it. */
#define PLANE2_DEV	"mrcp2"
#define PLANE2_PEER_DEV	"mrcp2b"	/* the veth's other end: not a plane */

unsigned int plane2_ifindex, notplane_ifindex;
char netns_err[160];	/* why plane 2 is missing, when it is */

/*
 * A private network namespace: lo up (plane 1), and the veth mrcp2 as
 * plane 2 with addresses, routes and permanent neighbours (what a
 * bpf_redirect_neigh() to it resolves with). Without it the plane tests
 * skip.
 */
static void netns_init(void)
{
	static const char *const cmds[] = {
		"ip link set lo up",
		"ip link add " PLANE2_DEV " type veth peer name " PLANE2_PEER_DEV,
		"ip link set " PLANE2_DEV " address 02:00:00:00:02:01",
		"ip addr add 198.18.2.1/24 dev " PLANE2_DEV,
		"ip -6 addr add fd00:2::1/64 dev " PLANE2_DEV " nodad",
		"ip link set " PLANE2_DEV " up",
		"ip link set " PLANE2_PEER_DEV " up",
		"ip neigh add 198.18.2.2 lladdr 02:00:00:00:02:02 nud permanent dev " PLANE2_DEV,
		"ip -6 neigh add fd00:2::2 lladdr 02:00:00:00:02:02 nud permanent dev " PLANE2_DEV,
	};
	char cmd[256];
	size_t i;

	if (unshare(CLONE_NEWNET)) {
		snprintf(netns_err, sizeof(netns_err), "unshare(CLONE_NEWNET): %s",
			 strerror(errno));
		return;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		snprintf(cmd, sizeof(cmd), "%s >&2", cmds[i]);
		if (system(cmd)) {
			snprintf(netns_err, sizeof(netns_err), "'%s' failed", cmds[i]);
			return;
		}
	}
	lo_ifindex = if_nametoindex("lo");
	plane2_ifindex = if_nametoindex(PLANE2_DEV);
	notplane_ifindex = if_nametoindex(PLANE2_PEER_DEV);
	if (!lo_ifindex || !plane2_ifindex || !notplane_ifindex) {
		snprintf(netns_err, sizeof(netns_err), "interfaces not found");
		lo_ifindex = 1;
		plane2_ifindex = 0;
	}
}

int main(void)
{
	/* Before loading, so everything the tests create lives in the namespace. */
	netns_init();
	if (netns_err[0])
		fprintf(stderr, "plane 2 unavailable, plane tests skip: %s\n", netns_err);
	if (fixture_setup("mrc-unit")) {
		/* Without the program every test is a failure, not a skip. */
		printf("[mrc.load] FAIL\n");
		fixture_cleanup();
		return 1;
	}
	/* Every TEST_CASE of this folder's files, in link order. */
	RUN_REGISTERED_TESTS();
	fixture_cleanup();
	return TEST_EXIT();
}
