// SPDX-License-Identifier: GPL-2.0
/*
 * EV demotion in XDP: a loss demotes the EV that carried the packet to
 * ASSUMED_BAD and activates a GOOD backup of the same plane (or sets OWED
 * when there is none), same-path demotion and its window, min_active and
 * ALWAYS_SKIP, only usable EVs demoted, NACKs that demote nothing, and
 * the EV events on mrc_ev_events (also when that ring is full).
 */
#include "mrc_xdp_test.h"

/* ====================================================================== */
/* Tests: XDP demotes EVs (ASSUMED_BAD) and reports it on mrc_ev_events   */
/* ====================================================================== */

/*
 * A SACK that makes a PSN lost by per-plane overtaking (its window shows
 * the PSN missing and its trigger, on another EV of the same plane, was
 * sent more than the plane's reorder window after it) demotes the lost
 * packet's EV: GOOD -> ASSUMED_BAD, ACTIVE cleared (no OWED: a backup took
 * its place), the first GOOD backup of the SAME plane becomes ACTIVE (not
 * the earlier backup of another plane), n_down 0 -> 1, and exactly one
 * struct mrc_ev_event (reason LOSS, the PSN, its send time, the table's
 * profile) goes to mrc_ev_events, counted in
 * ctl_stats.ev_events. The context ring still gets its LOSS event (the
 * resend). A second loss on the EV, now ASSUMED_BAD, changes nothing and
 * writes no second EV event.
 */
TEST_CASE(test_xdp_loss_demotes_ev, "mrc.xdp_loss_demotes_ev")
{
	static const struct mrc_ev_entry tab[] = {
		ACT(0xA0, 1),				/* 0: loses 1010 */
		BAK(0xB2, 2, MRC_EV_GOOD),		/* 1: backup of plane 2 */
		BAK(0xB1, 1, MRC_EV_GOOD),		/* 2: backup of plane 1 */
		ACT(0xA3, 1),				/* 3: carries the triggers */
	};
	/* Bit i = PSN 1010 + i: 1011..1020 acked, the hole is 1010. */
	struct sack_spec s = sspec(1009, 0x7FEULL);
	struct mrc_ctl_stats want_ctl = { .ev_events = 1 };
	struct mrc_qp_evs evs;
	__u64 t0, t1, sent;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 4, NULL);
	set_evs_meta(7, 1, 0);
	set_wide_windows();
	sent = mono_ns() - 5000000;
	put_rec(1010, 0, 1, 0, sent);
	/* Trigger on another EV of plane 1, sent 2 ms later (> ~1 ms window). */
	put_rec(1020, 3, 1, 0, sent + 2000000);
	s.psn = 1020;
	t0 = mono_ns();
	run_sack(&s, &r);
	t1 = mono_ns();
	expect_xdp_drop(&r);
	expect_drops(&no_drops);
	ASSERT_EQ(drain_events(), 3, "a loss and two completions");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA0, 0);
	ASSERT_EQ(ev_ctr(3).acked_sent_ns, sent + 2000000, "trigger EV's acked_sent_ns");
	ASSERT_EQ(ev_ctr(0).acked_sent_ns, 0, "lost EV: nothing acked on it");

	get_evs(&evs);
	ASSERT_EQ(evs.ev[0].state, MRC_EV_ASSUMED_BAD, "lost EV: ASSUMED_BAD");
	ASSERT_EQ(evs.ev[0].flags, 0, "lost EV: ACTIVE cleared, not OWED");
	ASSERT_EQ(evs.ev[0].plane, 1, "lost EV: plane kept");
	ASSERT_EQ(evs.ev[2].flags, MRC_EV_F_ACTIVE, "GOOD backup of plane 1 activated");
	ASSERT_EQ(evs.ev[2].state, MRC_EV_GOOD, "activated backup stays GOOD");
	ASSERT_EQ(evs.ev[1].flags, 0, "backup of plane 2 not taken");
	ASSERT_EQ(ev_word(&evs, 3), mrc_ev_word(1, MRC_EV_GOOD, MRC_EV_F_ACTIVE),
		  "trigger EV untouched");
	ASSERT_EQ(evs.n_down, 1, "n_down");
	ASSERT_EQ(active_on_plane(&evs, 4, 1), 2, "plane 1 keeps two ACTIVE EVs");
	ASSERT_EQ(drain_ev_events(), 1, "one EV event");
	expect_ev_event(0, 0, 0xA0, 1, 7, MRC_EVR_LOSS, 1010, sent, t0, t1);
	expect_ctl(&want_ctl);

	/* Another of its packets (1030) lost the same way: nothing new. */
	s.bitmap = 0x7FFFFFFEULL & ~(1ULL << 20);	/* 1011..1040 but 1030 */
	put_rec(1030, 0, 1, 0, sent);
	put_rec(1040, 3, 1, 0, sent + 2000000);
	s.psn = 1040;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 1, "the second loss is still reported (resend)");
	expect_event(0, MRC_EVT_LOSS, 1030, 0xA0, 0);
	ASSERT_EQ(ev_ctr(0).losses, 2, "ev_stats[0].losses");
	get_evs(&evs);
	ASSERT_EQ(ev_word(&evs, 0), mrc_ev_word(1, MRC_EV_ASSUMED_BAD, 0),
		  "lost EV unchanged");
	ASSERT_EQ(evs.ev[2].flags, MRC_EV_F_ACTIVE, "backup still ACTIVE");
	ASSERT_EQ(evs.n_down, 1, "n_down stays 1");
	ASSERT_EQ(drain_ev_events(), 0, "no second EV event");
	expect_ctl(&want_ctl);
}

/*
 * A spine fails as a whole: a loss on an EV whose path (spine) is known,
 * while another EV of that plane and path is already ASSUMED_BAD, takes
 * every other usable EV of that plane and path out at once (reason
 * SAME_PATH), backups included. The first loss on a path takes only its
 * own EV (a single loss may be a hiccup). Other paths of the plane, the
 * same path number on another plane and path 0 (unknown) are left alone.
 */
#define ACT_P(v, p, pa)		{ .ev = (v), .plane = (p), .path = (pa), \
				  .state = MRC_EV_GOOD, .flags = MRC_EV_F_ACTIVE }
#define BAK_P(v, p, pa)		{ .ev = (v), .plane = (p), .path = (pa), \
				  .state = MRC_EV_GOOD, .flags = 0 }

TEST_CASE(test_xdp_same_path_demotion, "mrc.xdp_same_path_demotion")
{
	static const struct mrc_ev_entry tab[] = {
		ACT_P(0xA0, 1, 1),	/* 0: loses 1010 */
		ACT_P(0xA1, 1, 1),	/* 1: loses 1011 */
		ACT_P(0xA2, 1, 1),	/* 2: same spine: goes with them */
		BAK_P(0xA3, 1, 1),	/* 3: a backup on that spine: goes too */
		ACT_P(0xB0, 1, 2),	/* 4: the plane's other spine: stays */
		BAK_P(0xB1, 1, 2),	/* 5: backup on the other spine: stays GOOD */
		ACT_P(0xC0, 2, 1),	/* 6: path 1 of plane 2: stays */
		ACT_P(0xD0, 1, 0),	/* 7: path unknown: stays; carries triggers */
	};
	/* Bit i = PSN 1010 + i: 1012..1020 acked; holes 1010 and 1011. */
	struct sack_spec s = sspec(1009, 0x7FCULL);
	struct mrc_qp_evs evs;
	__u64 sent, t0, t1;
	struct run r;
	int i;

	setup_table(MRC_EVF_UDP, tab, 8, NULL);
	set_wide_windows();
	sent = mono_ns() - 5000000;
	put_rec(1010, 0, 1, 0, sent);
	put_rec(1011, 1, 1, 0, sent + 2000000);
	/* The trigger, 1.5 ms after 1010 (window 1 ms), before 1011. */
	put_rec(1020, 7, 1, 0, sent + 1500000);
	s.psn = 1020;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	get_evs(&evs);
	ASSERT_EQ(evs.ev[0].state, MRC_EV_ASSUMED_BAD, "first loss: its EV out");
	for (i = 1; i < 8; i++) {
		char what[48];

		snprintf(what, sizeof(what), "first loss: ev[%d] still GOOD", i);
		ASSERT_EQ(evs.ev[i].state, MRC_EV_GOOD, what);
	}
	ASSERT_EQ(drain_ev_events(), 1, "one EV event for the first loss");
	drain_events();
	ASSERT_TRUE(ev_ctr(0).lost_ns >= sent, "the loss is dated (lost_ns)");

	/* The second loss on the same spine, soon after: the spine goes. */
	put_rec(1019, 7, 1, 0, sent + 4000000);
	s.psn = 1019;
	t0 = mono_ns();
	run_sack(&s, &r);
	t1 = mono_ns();
	get_evs(&evs);
	ASSERT_EQ(evs.ev[1].state, MRC_EV_ASSUMED_BAD, "second loss: its EV out");
	ASSERT_EQ(evs.ev[2].state, MRC_EV_ASSUMED_BAD, "active sibling out");
	ASSERT_EQ(evs.ev[3].state, MRC_EV_ASSUMED_BAD, "backup sibling out");
	ASSERT_EQ(evs.ev[4].state, MRC_EV_GOOD, "other spine stays");
	ASSERT_EQ(evs.ev[5].state, MRC_EV_GOOD, "other spine's backup stays");
	ASSERT_EQ(evs.ev[6].state, MRC_EV_GOOD, "path 1 of plane 2 stays");
	ASSERT_EQ(evs.ev[7].state, MRC_EV_GOOD, "unknown path stays");
	ASSERT_EQ(evs.ev[5].flags, MRC_EV_F_ACTIVE,
		  "the other spine's backup took an active place");
	ASSERT_EQ(evs.n_down, 4, "n_down: the four EVs of the spine");
	ASSERT_EQ(drain_ev_events(), 3, "events: the loss and two siblings");
	expect_ev_event(0, 1, 0xA1, 1, 0, MRC_EVR_LOSS, 1011, sent + 2000000, t0, t1);
	expect_ev_event(1, 2, 0xA2, 1, 0, MRC_EVR_SAME_PATH, 1011, sent + 2000000, t0, t1);
	expect_ev_event(2, 3, 0xA3, 1, 0, MRC_EVR_SAME_PATH, 1011, sent + 2000000, t0, t1);
}

/*
 * Lone losses far apart are no pattern: when the spine's other bad EV was
 * lost more than MRC_SAME_PATH_WINDOW_NS ago, a new loss takes only its
 * own EV.
 */
TEST_CASE(test_xdp_same_path_window, "mrc.xdp_same_path_window")
{
	static const struct mrc_ev_entry tab[] = {
		ACT_P(0xA0, 1, 1),	/* 0: lost long ago */
		ACT_P(0xA1, 1, 1),	/* 1: loses 1011 now */
		ACT_P(0xA2, 1, 1),	/* 2: same spine: stays */
		ACT_P(0xD0, 1, 0),	/* 3: carries the trigger */
	};
	struct sack_spec s = sspec(1010, 0x3FEULL);	/* 1012..1020 acked, hole 1011 */
	struct mrc_qp_evs evs;
	__u64 sent;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 4, NULL);
	set_wide_windows();
	get_evs(&evs);
	evs.ev[0].state = MRC_EV_ASSUMED_BAD;
	evs.ev[0].flags = 0;
	evs.n_down = 1;
	put_evs(&evs);
	read_ev_stats();
	ev_stats_buf.rx[0].lost_ns = mono_ns() - 2 * MRC_SAME_PATH_WINDOW_NS;
	write_ev_stats();
	sent = mono_ns() - 5000000;
	put_rec(1011, 1, 1, 0, sent);
	put_rec(1020, 3, 1, 0, sent + 2000000);
	s.psn = 1020;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	get_evs(&evs);
	ASSERT_EQ(evs.ev[1].state, MRC_EV_ASSUMED_BAD, "the lost EV goes");
	ASSERT_EQ(evs.ev[2].state, MRC_EV_GOOD, "its sibling stays: the other loss is old");
	ASSERT_EQ(drain_ev_events(), 1, "one EV event");
	drain_events();
}

/*
 * Demoting an ACTIVE EV whose plane has no GOOD backup (only a backup of
 * another plane and a SKIP one of its own) clears ACTIVE and sets OWED: it
 * gets its place back when it recovers. No backup is activated. A backup
 * (not ACTIVE) that loses a packet is demoted without OWED and activates
 * nothing either.
 */
TEST_CASE(test_xdp_demote_no_backup_owed, "mrc.xdp_demote_no_backup_owed")
{
	static const struct mrc_ev_entry tab[] = {
		ACT(0xA0, 1),				/* 0: loses 1010 */
		ACT(0xA1, 1),
		BAK(0xB2, 2, MRC_EV_GOOD),		/* 2: other plane; loses 1011 */
		BAK(0xB1, 1, MRC_EV_SKIP),		/* 3: not GOOD */
		BAK(0xB3, 2, MRC_EV_GOOD),		/* 4: plane 2 spare */
	};
	struct sack_spec s = sspec(1009, 0x7FCULL);	/* holes 1010, 1011 */
	struct mrc_ctl_stats want_ctl = { .ev_events = 2 };
	struct mrc_qp_evs evs;
	__u64 t0, t1, sent;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 5, NULL);
	set_evs_meta(3, 1, 0);
	/* Sent 10 ms ago, no RTT known: past the give-up window. */
	sent = mono_ns() - 10000000;
	put_rec(1010, 0, 1, 0, sent);
	put_rec(1011, 2, 2, 0, sent - 1000);
	s.psn = 1020;
	t0 = mono_ns();
	run_sack(&s, &r);
	t1 = mono_ns();
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 4, "two losses, two completions");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA0, 0);
	expect_event(1, MRC_EVT_LOSS, 1011, 0xB2, 0);
	get_evs(&evs);
	ASSERT_EQ(ev_word(&evs, 0), mrc_ev_word(1, MRC_EV_ASSUMED_BAD, MRC_EV_F_OWED),
		  "ACTIVE EV without a backup: ASSUMED_BAD, ACTIVE cleared, OWED");
	ASSERT_EQ(ev_word(&evs, 2), mrc_ev_word(2, MRC_EV_ASSUMED_BAD, 0),
		  "demoted backup: no OWED");
	ASSERT_EQ(evs.ev[3].flags, 0, "SKIP backup not activated");
	ASSERT_EQ(evs.ev[4].flags, 0, "other plane's backup not activated");
	ASSERT_EQ(evs.ev[1].flags, MRC_EV_F_ACTIVE, "bystander ACTIVE");
	ASSERT_EQ(evs.n_down, 2, "n_down");
	ASSERT_EQ(drain_ev_events(), 2, "two EV events");
	expect_ev_event(0, 0, 0xA0, 1, 3, MRC_EVR_LOSS, 1010, sent, t0, t1);
	expect_ev_event(1, 2, 0xB2, 2, 3, MRC_EVR_LOSS, 1011, sent - 1000, t0, t1);
	expect_ctl(&want_ctl);
}

/*
 * ev_min_active: with 3 entries and min_active 2, the first loss demotes
 * (2 usable left), the second, on another EV, is refused: that EV stays
 * GOOD and ACTIVE, ctl_stats.demote_refused counts it, no EV event is
 * written, n_down stays 1; its lost packet is still reported for resend.
 */
TEST_CASE(test_xdp_demote_min_active, "mrc.xdp_demote_min_active")
{
	static const struct mrc_ev_entry tab[] = {
		ACT(0xA0, 1), ACT(0xA1, 1), ACT(0xA2, 1),
	};
	struct sack_spec s = sspec(1009, 0x7FCULL);	/* holes 1010, 1011 */
	struct mrc_ctl_stats want_ctl = { .ev_events = 1, .demote_refused = 1 };
	struct mrc_qp_evs evs;
	__u64 t0, t1, sent;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 3, NULL);
	set_evs_meta(9, 2, 0);
	/* Sent 10 ms ago, no RTT known: past the give-up window. */
	sent = mono_ns() - 10000000;
	put_rec(1010, 0, 1, 0, sent);
	put_rec(1011, 1, 1, 0, mono_ns() - 10000000);
	s.psn = 1020;
	t0 = mono_ns();
	run_sack(&s, &r);
	t1 = mono_ns();
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 4, "both losses reported, two completions");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA0, 0);
	expect_event(1, MRC_EVT_LOSS, 1011, 0xA1, 0);
	ASSERT_EQ(read_qp_stats(SLOT).losses, 2, "qp_stats.losses");
	get_evs(&evs);
	ASSERT_EQ(evs.ev[0].state, MRC_EV_ASSUMED_BAD, "first loss demotes");
	ASSERT_EQ(ev_word(&evs, 1), mrc_ev_word(1, MRC_EV_GOOD, MRC_EV_F_ACTIVE),
		  "second loss refused: GOOD and ACTIVE");
	ASSERT_EQ(ev_word(&evs, 2), mrc_ev_word(1, MRC_EV_GOOD, MRC_EV_F_ACTIVE),
		  "bystander untouched");
	ASSERT_EQ(evs.n_down, 1, "n_down");
	ASSERT_EQ(drain_ev_events(), 1, "one EV event");
	expect_ev_event(0, 0, 0xA0, 1, 9, MRC_EVR_LOSS, 1010, sent, t0, t1);
	expect_ctl(&want_ctl);

	/* Every further loss on a usable EV is refused and counted. */
	s = sspec(1020, 0x7FEULL);			/* hole 1021 = cack + 1 */
	put_rec(1021, 2, 1, 0, mono_ns() - 10000000);
	s.psn = 1031;
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 1, "loss reported");
	expect_event(0, MRC_EVT_LOSS, 1021, 0xA2, 0);
	get_evs(&evs);
	ASSERT_EQ(evs.ev[2].state, MRC_EV_GOOD, "third EV stays GOOD");
	ASSERT_EQ(drain_ev_events(), 0, "no EV event");
	want_ctl.demote_refused = 2;
	expect_ctl(&want_ctl);
}

/*
 * M = ALWAYS_SKIP (the receiver's verdict) on a SACK demotes the trigger's
 * EV with reason ALWAYS_SKIP and the trigger PSN; a backup of its plane
 * takes its place. It is no ECN echo: ecn and marks_in_row do not count
 * it. M = SKIP_ONCE still only sets SKIP (no demotion, no EV event), and a
 * further ALWAYS_SKIP on the demoted EV writes nothing.
 */
TEST_CASE(test_xdp_always_skip_demotes, "mrc.xdp_always_skip_demotes")
{
	static const struct mrc_ev_entry tab[] = {
		ACT(0xA0, 1), BAK(0xB1, 1, MRC_EV_GOOD), ACT(0xA2, 1),
	};
	struct mrc_ctl_stats want_ctl = { .ev_events = 1 };
	struct mrc_ev_counters c;
	struct mrc_qp_evs evs;
	__u64 t0, t1;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 3, NULL);
	set_evs_meta(4, 1, 0);
	put_rec(1010, 0, 1, 0, mono_ns());
	t0 = mono_ns();
	run_trigger_sack(1010, MRC_M_ALWAYS_SKIP, &r);
	t1 = mono_ns();
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 0, "no context events (nothing acked or lost)");
	c = ev_ctr(0);
	ASSERT_EQ(c.acked, 1, "ev_stats[0].acked");
	ASSERT_EQ(c.ecn, 0, "ALWAYS_SKIP is not counted as ECN");
	ASSERT_EQ(c.marks_in_row, 0, "nor as a mark");
	get_evs(&evs);
	ASSERT_EQ(ev_word(&evs, 0), mrc_ev_word(1, MRC_EV_ASSUMED_BAD, 0),
		  "ALWAYS_SKIP: ASSUMED_BAD, out of the rotation");
	ASSERT_EQ(evs.ev[1].flags, MRC_EV_F_ACTIVE, "backup took its place");
	ASSERT_EQ(evs.n_down, 1, "n_down");
	ASSERT_EQ(drain_ev_events(), 1, "one EV event");
	expect_ev_event(0, 0, 0xA0, 1, 4, MRC_EVR_ALWAYS_SKIP, 1010, 0, t0, t1);
	expect_ctl(&want_ctl);

	/* SKIP_ONCE: a turn skipped, nothing more. */
	put_rec(1011, 2, 1, 0, mono_ns());
	run_trigger_sack(1011, MRC_M_SKIP_ONCE, &r);
	c = ev_ctr(2);
	ASSERT_EQ(c.ecn, 1, "SKIP_ONCE counts ECN");
	get_evs(&evs);
	ASSERT_EQ(ev_word(&evs, 2), mrc_ev_word(1, MRC_EV_SKIP, MRC_EV_F_ACTIVE),
		  "SKIP_ONCE: SKIP, still ACTIVE");
	ASSERT_EQ(evs.n_down, 1, "n_down unchanged");

	/* The verdict again on the demoted EV. */
	run_trigger_sack(1010, MRC_M_ALWAYS_SKIP, &r);
	get_evs(&evs);
	ASSERT_EQ(ev_word(&evs, 0), mrc_ev_word(1, MRC_EV_ASSUMED_BAD, 0),
		  "demoted EV unchanged");
	ASSERT_EQ(evs.n_down, 1, "n_down unchanged");
	ASSERT_EQ(drain_ev_events(), 0, "no further EV events");
	expect_ctl(&want_ctl);

	/*
	 * The verdict rides on a NACK too (here a mid-path trim): the NACKed
	 * PSN's EV is demoted with reason ALWAYS_SKIP, the loss reported.
	 */
	{
		struct hdrs h = rx4();
		__u8 pkt[PKT_MAX];
		size_t len;

		put_rec(1012, 2, 1, 0, mono_ns());
		len = nack_frame(pkt, &h, QPN, 1012, RX_CACK, MRC_NACK_TRIMMED);
		pkt[l4_off(pkt) + UDP_LEN + BTH_LEN + offsetof(struct mrc_nackh, m)] =
			MRC_M_ALWAYS_SKIP;
		udp_csum_fill(pkt);
		t0 = mono_ns();
		run_xdp(pkt, len, &r);
		t1 = mono_ns();
		expect_xdp_drop(&r);
		ASSERT_EQ(drain_events(), 1, "the NACK's loss is reported");
		expect_event(0, MRC_EVT_LOSS, 1012, ACK_EV, MRC_NACK_TRIMMED);
		get_evs(&evs);
		ASSERT_EQ(ev_word(&evs, 2), mrc_ev_word(1, MRC_EV_ASSUMED_BAD, MRC_EV_F_OWED),
			  "NACK with ALWAYS_SKIP: ASSUMED_BAD (no backup left: OWED)");
		ASSERT_EQ(evs.n_down, 2, "n_down");
		ASSERT_EQ(drain_ev_events(), 1, "one EV event");
		expect_ev_event(0, 2, 0xA2, 1, 4, MRC_EVR_ALWAYS_SKIP, 1012, 0, t0, t1);
		want_ctl.ev_events = 2;
		expect_ctl(&want_ctl);
	}
}

/*
 * mrc_ev_events full (256 KiB: 6553 records of 8 + 32 bytes): further
 * demotions still happen, their events are counted in
 * ctl_stats.ev_events_lost, never waited for; drained, the ring takes
 * events again.
 */
TEST_CASE(test_xdp_ev_events_ring_full, "mrc.xdp_ev_events_ring_full")
{
	static const struct mrc_ev_entry tab[] = { ACT(0xA0, 1), ACT(0xA1, 1) };
	const __u32 fits = MRC_EV_EVENTS_BYTES / (8 + sizeof(struct mrc_ev_event));
	const __u32 runs = fits + 5;
	struct mrc_ctl_stats want = { .ev_events = fits, .ev_events_lost = runs - fits };
	struct mrc_qp_evs evs;
	__u32 i;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 2, NULL);
	put_rec(1010, 0, 1, 0, mono_ns());
	for (i = 0; i < runs; i++) {
		/* EV 0 back to GOOD and ACTIVE, then the verdict again. */
		evs_buf.ev[0] = (struct mrc_ev_entry)ACT(0xA0, 1);
		evs_buf.n_down = 0;
		put_evs(&evs_buf);
		run_trigger_sack(1010, MRC_M_ALWAYS_SKIP, &r);
		if (r.err || r.ret != XDP_DROP) {
			expect_xdp_drop(&r);
			return;
		}
	}
	get_evs(&evs);
	ASSERT_EQ(evs.ev[0].state, MRC_EV_ASSUMED_BAD, "last demotion done (ring full)");
	ASSERT_EQ(evs.n_down, 1, "n_down");
	expect_ctl(&want);
	ASSERT_EQ(drain_ev_events(), fits, "events that fit");
	expect_ev_event(0, 0, 0xA0, 1, 0, MRC_EVR_ALWAYS_SKIP, 1010, 0, 0, ~0ULL);
	/* Drained, it takes events again. */
	evs_buf.ev[0] = (struct mrc_ev_entry)ACT(0xA0, 1);
	evs_buf.n_down = 0;
	put_evs(&evs_buf);
	run_trigger_sack(1010, MRC_M_ALWAYS_SKIP, &r);
	ASSERT_EQ(drain_ev_events(), 1, "event after draining");
	want.ev_events++;
	expect_ctl(&want);
}

/*
 * A NACK is no evidence that the path failed: TRIMMED is congestion (the
 * EV skips a turn), the other loss reasons say nothing about the path.
 * None demotes, however old the PSN; the loss is reported for resend.
 */
TEST_CASE(test_xdp_nack_no_demote, "mrc.xdp_nack_no_demote")
{
	static const __u8 reasons[] = {
		MRC_NACK_TRIMMED, MRC_NACK_TRIMMED_LASTHOP, MRC_NACK_NO_BITMAP,
		MRC_NACK_NO_PKT_BUFFER, MRC_NACK_NO_RESOURCE, MRC_NACK_PSN_OOR_WINDOW,
	};
	static const struct mrc_ev_entry tab[] = { ACT(0xA0, 1), BAK(0xB1, 1, MRC_EV_GOOD) };
	struct mrc_qp_evs evs;
	size_t i;
	struct run r;

	for (i = 0; i < sizeof(reasons); i++) {
		int before = test_state.failed;

		setup_table(MRC_EVF_UDP, tab, 2, NULL);
		put_rec(1010, 0, 1, 0, mono_ns() - 10000000);
		run_nack(1010, RX_CACK, reasons[i], &r);
		expect_xdp_drop(&r);
		ASSERT_EQ(drain_events(), 1, "the loss is reported");
		expect_event(0, MRC_EVT_LOSS, 1010, ACK_EV, reasons[i]);
		get_evs(&evs);
		ASSERT_EQ(ev_word(&evs, 0),
			  mrc_ev_word(1, reasons[i] == MRC_NACK_TRIMMED ? MRC_EV_SKIP :
				      MRC_EV_GOOD, MRC_EV_F_ACTIVE),
			  "NACKed EV not demoted (TRIMMED: SKIP)");
		ASSERT_EQ(evs.ev[1].flags, 0, "backup not activated");
		ASSERT_EQ(evs.n_down, 0, "n_down");
		ASSERT_EQ(drain_ev_events(), 0, "no EV event");
		expect_ctl(&(struct mrc_ctl_stats){ 0 });
		if (test_state.failed != before)
			fprintf(stderr, "  (reason 0x%02x)\n", reasons[i]);
	}
}

/*
 * Only usable entries (GOOD, SKIP) are demoted: losses on DENIED and
 * ASSUMED_BAD entries leave their word alone, activate no backup, write
 * no EV event and do not count in n_down; a SKIP entry is demoted (its
 * place goes to the first GOOD backup of its plane, only one is taken).
 */
TEST_CASE(test_xdp_demote_only_usable, "mrc.xdp_demote_only_usable")
{
	static const struct mrc_ev_entry tab[] = {
		ACT_S(0xA0, 1, MRC_EV_DENIED),		/* 0: loses 1010 */
		ACT_S(0xA1, 1, MRC_EV_ASSUMED_BAD),	/* 1: loses 1011 */
		ACT_S(0xA2, 1, MRC_EV_SKIP),		/* 2: loses 1012 */
		BAK(0xB3, 1, MRC_EV_GOOD),
		BAK(0xB4, 1, MRC_EV_GOOD),
		ACT(0xA5, 1),
	};
	/* Bit i = PSN 1010 + i: 1013..1020 acked, holes 1010..1012. */
	struct sack_spec s = sspec(1009, 0x7F8ULL);
	struct mrc_ctl_stats want_ctl = { .ev_events = 1 };
	struct mrc_qp_evs evs;
	__u64 t0, t1, sent;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 6, NULL);
	set_evs_meta(5, 1, 2);
	/* Sent 10 ms ago, no RTT known: past the give-up window. */
	sent = mono_ns() - 10000000;
	put_rec(1010, 0, 1, 0, sent);
	put_rec(1011, 1, 1, 0, sent);
	put_rec(1012, 2, 1, 0, sent + 1000);
	s.psn = 1020;
	t0 = mono_ns();
	run_sack(&s, &r);
	t1 = mono_ns();
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 5, "three losses, two completions");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA0, 0);
	expect_event(1, MRC_EVT_LOSS, 1011, 0xA1, 0);
	expect_event(2, MRC_EVT_LOSS, 1012, 0xA2, 0);
	get_evs(&evs);
	ASSERT_EQ(ev_word(&evs, 0), mrc_ev_word(1, MRC_EV_DENIED, MRC_EV_F_ACTIVE),
		  "DENIED entry untouched");
	ASSERT_EQ(ev_word(&evs, 1), mrc_ev_word(1, MRC_EV_ASSUMED_BAD, MRC_EV_F_ACTIVE),
		  "ASSUMED_BAD entry untouched");
	ASSERT_EQ(ev_word(&evs, 2), mrc_ev_word(1, MRC_EV_ASSUMED_BAD, 0),
		  "SKIP entry demoted");
	ASSERT_EQ(evs.ev[3].flags, MRC_EV_F_ACTIVE, "first GOOD backup took its place");
	ASSERT_EQ(evs.ev[4].flags, 0, "only one backup taken");
	ASSERT_EQ(evs.n_down, 3, "n_down counts the SKIP entry only");
	ASSERT_EQ(drain_ev_events(), 1, "one EV event");
	expect_ev_event(0, 2, 0xA2, 1, 5, MRC_EVR_LOSS, 1012, sent + 1000, t0, t1);
	expect_ctl(&want_ctl);
}
