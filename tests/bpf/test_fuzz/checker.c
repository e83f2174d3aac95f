// SPDX-License-Identifier: GPL-2.0
/*
 * The invariant checker can fail: from a consistent state and a clean run
 * (no violation: checked first, so the corruptions below are the only
 * cause), each case corrupts one thing the way a buggy program would and
 * expects fz_check() to name exactly that invariant.
 */
#include <string.h>

#include "mrc_fixture.h"
#include "fuzz.h"

static struct fz_snap before, after;
static __u8 in[256], out[256];
static struct fz_frame frame;
static struct mrc_event events[2];
static struct fz_events evs;

/* QP 0 with 4 GOOD active entries, a window, 100 PSNs in flight. */
static void consistent_state(void)
{
	struct fz_qp_snap *q = &before.qp[0];
	struct sack_spec s = sspec(999, 0);
	struct hdrs h = rx4();
	__u32 k;

	memset(&before, 0, sizeof(before));
	q->info.state = MRC_QPS_RTS;
	q->info.n_evs = 4;
	q->info.cc_slot = 1;
	q->cc.algo = MRC_CC_NSCC;
	q->cc.mtu = 4096;
	q->cc.min_cwnd = 4096;
	q->cc.max_cwnd = 100000;
	q->view.cwnd = 50000;
	q->tx.snd_una = q->tx.sack_max = q->tx.loss_mark = 1000;
	q->tx.snd_nxt = 1100;
	q->tx.wr[0].last_psn = 1004;
	q->tx.wr_tail = 1;
	q->rx.cack = 999;
	q->rx.mpr = 1024;
	for (k = 0; k < 4; k++) {
		q->evs.ev[k].ev = 1000 + k;
		q->evs.ev[k].plane = 1;
		q->evs.ev[k].flags = MRC_EV_F_ACTIVE;
		q->evs.perm[k] = (__u8)k;
	}
	after = before;
	/* A SACK steered up (a stand-in for any frame the program rewrites). */
	memset(&frame, 0, sizeof(frame));
	frame.hook = FZ_XDP;
	frame.in = in;
	frame.in_len = (__u32)sack_frame(in, &h, &s);
	memcpy(out, in, frame.in_len);
	put16(out + ETH_LEN + IP4_LEN + 2, SOCK_PORT);
	fz_fix_checksums(out, frame.in_len);
	frame.out = out;
	frame.out_len = frame.in_len;
	frame.verdict = 2;		/* XDP_PASS */
	memset(&evs, 0, sizeof(evs));
	evs.ev = events;
}

static void perm_duplicate(void) { after.qp[0].evs.perm[1] = 0; }
static void acked_past_sent(void) { after.qp[0].tx.snd_una = 1200; }
static void sack_max_past_sent(void) { after.qp[0].tx.sack_max = 1101; }
static void una_backwards(void) { after.qp[0].tx.snd_una = 999; }
static void udp_csum_broken(void) { out[frame.out_len - 1] ^= 0x40; }
static void ip_csum_broken(void) { out[ETH_LEN + 8] ^= 1; }
static void output_longer(void) { frame.out_len = frame.in_len + 4; }
static void aborted(void) { frame.verdict = 0; }
static void ev_state_bad(void) { after.qp[0].evs.ev[2].state = 7; }
static void cwnd_above_max(void) { after.qp[0].view.cwnd = 100001; }
static void counter_down(void) { before.drops.malformed = 5; }
static void lib_cack_written(void) { after.qp[0].rx.cack = 1000; }
static void perm_by_xdp(void) { after.qp[0].evs.next = 3; }

static void promoted_by_xdp(void)
{
	before.qp[0].evs.ev[1].state = MRC_EV_ASSUMED_BAD;
	before.qp[0].evs.ev[1].flags = 0;
	before.qp[0].evs.n_down = 1;
	after.qp[0].evs.ev[1].flags = 0;
	after.qp[0].evs.n_down = 0;
}

static void n_down_wrong(void)
{
	after.qp[0].evs.ev[1].state = MRC_EV_ASSUMED_BAD;
	after.qp[0].evs.ev[1].flags = 0;
}

static void silent_drop(void)
{
	frame.verdict = 1;		/* XDP_DROP, no counter moved */
}

static void sacked_unsent(void)
{
	after.qp[0].tx.sacked[(1100 % MRC_WINDOW_MAX) / 64] |= 1ULL << (1100 % 64);
}

static void wr_past_tail(void) { after.qp[0].tx.wr_head = 2; }

static void completion_unacked(void)
{
	events[0].type = MRC_EVT_COMPLETION;
	events[0].qpn = fz_qpns[0];
	events[0].psn = 1004;		/* snd_una is 1000: not acked */
	evs.n = 1;
}

static void loss_unsent(void)
{
	events[0].type = MRC_EVT_LOSS;
	events[0].qpn = fz_qpns[0];
	events[0].psn = 1100;
	evs.n = 1;
}

struct corruption {
	const char *what;
	const char *invariant;
	void (*apply)(void);
};

static const struct corruption cases[] = {
	{ "perm names entry 0 twice", "perm_permutation", perm_duplicate },
	{ "snd_una past snd_nxt", "acked_le_sent", acked_past_sent },
	{ "sack_max past snd_nxt", "sack_max_le_sent", sack_max_past_sent },
	{ "snd_una went back", "acks_monotone", una_backwards },
	{ "UDP checksum broken on the way", "udp_checksum", udp_csum_broken },
	{ "IPv4 header checksum broken", "ipv4_checksum", ip_csum_broken },
	{ "frame grew", "output_not_longer", output_longer },
	{ "XDP_ABORTED", "verdict_legal", aborted },
	{ "EV state 7", "ev_state_legal", ev_state_bad },
	{ "XDP promoted an ASSUMED_BAD entry", "ev_transition", promoted_by_xdp },
	{ "n_down not following a demotion", "ev_n_down", n_down_wrong },
	{ "cwnd above max_cwnd", "cwnd_bounds", cwnd_above_max },
	{ "a drop counter went down", "counters_monotone", counter_down },
	{ "a frame dropped without a counter", "drop_counted", silent_drop },
	{ "cack written by the program", "lib_words", lib_cack_written },
	{ "XDP moved the rotation cursor", "rotation_owner", perm_by_xdp },
	{ "a PSN never sent SACKed", "sacked_only_sent", sacked_unsent },
	{ "WR head past the tail", "wr_ring", wr_past_tail },
	{ "completion of an unacked WRITE", "completion_acked", completion_unacked },
	{ "loss of a PSN never sent", "loss_in_window", loss_unsent },
};

TEST_CASE(test_checker_clean, "fuzz.checker_clean_state_passes")
{
	struct fz_report rep;
	int i;

	consistent_state();
	ASSERT_EQ(fz_check(&before, &after, &frame, &evs, &rep), 0, "no violation");
	for (i = 0; i < rep.n; i++)
		fprintf(stderr, "  unexpected: %s\n", rep.what[i]);
}

TEST_CASE(test_checker_catches, "fuzz.checker_catches_each_corruption")
{
	struct fz_report rep;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int before_failed = test_state.failed;

		consistent_state();
		cases[i].apply();
		fz_check(&before, &after, &frame, &evs, &rep);
		ASSERT_TRUE(fz_report_has(&rep, cases[i].invariant), cases[i].invariant);
		if (test_state.failed != before_failed)
			fprintf(stderr, "  (%s: %d other violations%s%s)\n", cases[i].what,
				rep.n, rep.n ? ", first: " : "", rep.n ? rep.what[0] : "");
	}
}
