// SPDX-License-Identifier: GPL-2.0
/*
 * Loss detection on SACKs (XDP): a hole is lost only once a SACK shows it
 * missing and a trigger overtook it, on its plane beyond the plane's
 * reorder window (RACK) or on the same EV by more than MRC_EV_REORDER_NS,
 * or once it is older than the give-up window; stale and lost SACKs
 * decide nothing.
 */
#include "mrc_xdp_test.h"

/*
 * Holes with a send-log record that the SACK shows missing are lost only
 * when overtaken on their own plane: the SACK's trigger was sent on that
 * plane more than the reorder window (srtt / 8, at least
 * MRC_REORDER_MIN_NS) after the hole; or when older than the give-up
 * window (2 x rtt_peak, at least 4 x MRC_REORDER_MIN_NS). The first hole
 * not yet lost ends the report. Holes and triggers are on different EVs,
 * so the per-EV rule (MRC_EV_REORDER_NS) never applies. The planes' acked
 * send times (tx.acked_sent_ns) are still kept but decide nothing.
 */
TEST_CASE(test_xdp_rack_losses, "mrc.xdp_rack_losses")
{
	/* The later packets go on EV 2: same plane as EV 0, another path. */
	static const struct mrc_ev_entry tab[] = { ACT(0xA0, 1), ACT(0xB0, 2),
						   ACT(0xA1, 1), ACT(0xB1, 2) };
	/* Bit i = PSN 1010 + i: PSNs 1012..1020 acked, holes 1010 and 1011. */
	struct sack_spec s = sspec(1009, 0x7FCULL);
	__u64 t0;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 4, NULL);
	get_tx(&tx);
	tx.srtt_ns = 8000000;			/* reorder window ~1 ms */
	tx.rttvar_ns = 1000000;
	tx.rtt_peak_ns = 1000000000;		/* give up after ~2 s */
	put_tx(&tx);
	t0 = mono_ns() - 5000000;
	put_rec(1010, 0, 1, 0, t0);		/* hole on plane 1 */
	put_rec(1011, 1, 2, 0, t0);		/* hole on plane 2 */

	/* Trigger on plane 1 but sent only 0.5 ms after the holes: reordering. */
	put_rec(1020, 2, 1, 0, t0 + 500000);
	s.psn = 1020;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 2, "completions only: holes may be reordered");
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, TX_UNA, "nothing reported");
	ASSERT_EQ(tx.acked_sent_ns[0], t0 + 500000, "plane 1 acked send time (kept)");

	/* Sent 2 ms after: the plane-1 hole is lost, the plane-2 one waits. */
	put_rec(1019, 2, 1, 0, t0 + 2000000);
	s.psn = 1019;
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 1, "one loss");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA0, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1011, "report stops at the plane-2 hole");
	ASSERT_EQ(ev_ctr(0).losses, 1, "ev_stats[0].losses");
	ASSERT_EQ(ev_ctr(1).losses, 0, "ev_stats[1].losses");

	/* A trigger on plane 2 sent as late overtakes the plane-2 hole. */
	put_rec(1018, 3, 2, 0, t0 + 2000000);
	s.psn = 1018;
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 1, "the plane-2 hole is lost now");
	expect_event(0, MRC_EVT_LOSS, 1011, 0xB0, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1018, "loss_mark at sack_max - DUPTHRESH");
	ASSERT_EQ(ev_ctr(1).losses, 1, "ev_stats[1].losses");

	/*
	 * The window never shrinks below MRC_REORDER_MIN_NS: with srtt 80 us
	 * (srtt / 8 = 10 us) a trigger sent MRC_REORDER_MIN_NS after the hole
	 * does not overtake it, one sent 1 ns later does (not the second
	 * hole, sent 10 us after the first). The triggers are resends: they
	 * take no RTT sample, so srtt stays.
	 */
	setup_table(MRC_EVF_UDP, tab, 4, NULL);
	get_tx(&tx);
	tx.srtt_ns = 80000;
	tx.rtt_peak_ns = 1000000000;
	put_tx(&tx);
	t0 = mono_ns() - 5000000;
	put_rec(1010, 0, 1, 0, t0);
	put_rec(1011, 0, 1, 0, t0 + 10000);
	put_rec(1020, 2, 1, MRC_BTH_F_RETX, t0 + MRC_REORDER_MIN_NS);
	s.psn = 1020;
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 2, "MRC_REORDER_MIN_NS later is within the minimum window");
	put_rec(1019, 2, 1, MRC_BTH_F_RETX, t0 + MRC_REORDER_MIN_NS + 1);
	s.psn = 1019;
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 1, "1 ns more overtakes the first hole only");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA0, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1011, "the second hole waits");
	ASSERT_EQ(tx.srtt_ns, 80000, "resends took no RTT sample");

	/* Without overtaking: lost once older than 2 x rtt_peak (10 ms). */
	setup_table(MRC_EVF_UDP, tab, 4, NULL);
	get_tx(&tx);
	tx.rtt_peak_ns = 5000000;
	put_tx(&tx);
	put_rec(1010, 1, 2, 0, mono_ns() - 50000000);	/* 50 ms old */
	put_rec(1011, 1, 2, 0, mono_ns() - 1000000);	/* 1 ms old */
	s.psn = 1020;					/* no record */
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 3, "one loss, two completions");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xB0, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1011, "the young hole waits");
}

/*
 * Per-EV overtaking (before the per-plane rule): one EV is one FIFO path,
 * so a hole the SACK shows missing is lost as soon as the SACK's trigger
 * was sent on the SAME EV more than MRC_EV_REORDER_NS after it, even
 * though the plane's reorder window (srtt 8 ms / 8 = 1 ms) is larger. A
 * trigger on the same EV sent exactly MRC_EV_REORDER_NS later, or on
 * another EV of the plane within the plane window, does not overtake.
 * SACKs still raise the trigger EV's acked_sent_ns (never lower it), which
 * no longer decides losses. The triggers are resends: no RTT sample moves
 * srtt.
 */
TEST_CASE(test_xdp_ev_reorder_rule, "mrc.xdp_ev_reorder_rule")
{
	static const struct mrc_ev_entry tab[] = {
		ACT(0xA0, 1), ACT(0xA1, 1), BAK(0xB1, 1, MRC_EV_GOOD),
	};
	struct sack_spec s = sspec(1009, 0x7FEULL);	/* hole 1010 */
	struct mrc_qp_evs evs;
	__u64 t0, a, b;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 3, NULL);
	set_wide_windows();
	t0 = mono_ns() - 5000000;
	put_rec(1010, 0, 1, 0, t0);

	/* Another EV of the plane, half the EV slack later: inside the plane window. */
	put_rec(1018, 1, 1, MRC_BTH_F_RETX, t0 + MRC_EV_REORDER_NS / 2);
	s.psn = 1018;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 2, "completions only: other EV within the plane window");
	ASSERT_EQ(ev_ctr(1).acked_sent_ns, t0 + MRC_EV_REORDER_NS / 2, "ev_stats[1].acked_sent_ns");

	/* Same EV, exactly MRC_EV_REORDER_NS later: not past the slack. */
	put_rec(1019, 0, 1, MRC_BTH_F_RETX, t0 + MRC_EV_REORDER_NS);
	s.psn = 1019;
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 0, "same EV within MRC_EV_REORDER_NS: no loss");
	ASSERT_EQ(ev_ctr(0).acked_sent_ns, t0 + MRC_EV_REORDER_NS,
		  "ev_stats[0].acked_sent_ns updated by the SACK");
	get_evs(&evs);
	ASSERT_EQ(evs.ev[0].state, MRC_EV_GOOD, "EV still GOOD");

	/* An older packet's SACK (its trigger overtakes nothing) does not
	 * move acked_sent_ns back. */
	put_rec(1017, 0, 1, MRC_BTH_F_RETX, t0 + 1000);
	s.psn = 1017;
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 0, "still no loss");
	ASSERT_EQ(ev_ctr(0).acked_sent_ns, t0 + MRC_EV_REORDER_NS,
		  "acked_sent_ns only grows");

	/* Same EV, 1 us more: the hole is lost, the EV demoted. */
	put_rec(1020, 0, 1, MRC_BTH_F_RETX, t0 + MRC_EV_REORDER_NS + 1000);
	s.psn = 1020;
	a = mono_ns();
	run_sack(&s, &r);
	b = mono_ns();
	ASSERT_EQ(drain_events(), 1, "lost by the per-EV rule");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA0, 0);
	ASSERT_EQ(ev_ctr(0).acked_sent_ns, t0 + MRC_EV_REORDER_NS + 1000,
		  "ev_stats[0].acked_sent_ns");
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1018, "loss_mark at sack_max - DUPTHRESH");
	ASSERT_EQ(tx.srtt_ns, 8000000, "resends took no RTT sample");
	/*
	 * The plane rule alone would not have fired: the trigger was sent
	 * MRC_EV_REORDER_NS + 1 us after the hole, inside this plane window.
	 */
	ASSERT_TRUE(MRC_EV_REORDER_NS + 1000 < 8000000 / MRC_REORDER_FRACTION,
		    "the same-EV slack is below this plane window");
	get_evs(&evs);
	ASSERT_EQ(evs.ev[0].state, MRC_EV_ASSUMED_BAD, "EV demoted");
	ASSERT_EQ(drain_ev_events(), 1, "one EV event");
	expect_ev_event(0, 0, 0xA0, 1, 0, MRC_EVR_LOSS, 1010, t0, a, b);
}

/*
 * Loss evidence needs a SACK that shows the hole missing: a zero bit of
 * its window (clipped to [una, snd_nxt)) or its cack + 1, which the
 * cumulative ack implies missing. A hole below sack_max that no arriving
 * SACK showed is not lost, however far the triggers overtook it and
 * however old it is (its SACKs may have been lost on a failed return
 * path; libmrc's timeout covers it); logged or not. Shown missing, an
 * unlogged hole is lost at once, a logged one once the trigger overtook
 * it. Holes and triggers are on EV 0 (plane 1); the triggers are resends
 * (no RTT sample), the plane window ~1 ms, the give-up window ~2 s.
 */
TEST_CASE(test_loss_needs_shown_missing, "mrc.loss_needs_shown_missing")
{
	static const struct mrc_ev_entry tab[] = { ACT(0xA0, 1), ACT(0xA1, 1) };
	/* cack 1009, off 20: window 1030..1093, 1030..1040 acked. */
	struct sack_spec s = sspec(1009, 0x7FFULL);
	__u64 t0;
	__u32 psn;
	int i;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 2, NULL);
	set_wide_windows();
	t0 = mono_ns() - 100000000;			/* 100 ms ago */
	for (psn = 1010; psn < 1030; psn++)
		if (psn != 1012)			/* 1012: no record */
			put_rec(psn, 0, 1, 0, t0);
	put_rec(1040, 0, 1, MRC_BTH_F_RETX, t0 + 50000000);	/* 50 ms later */
	s.off = 20;
	s.psn = 1040;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 1 + 2, "one loss, two completions");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA0, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.sack_max, 1041, "sack_max");
	ASSERT_EQ(tx.loss_mark, 1011, "cack + 1 lost; 1011, not shown, ends the report");
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 0, "overtaken by 50 ms but never shown missing");
	/* Not even past the give-up window (2 x 1 ms). */
	get_tx(&tx);
	tx.rtt_peak_ns = 1000000;
	put_tx(&tx);
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 0, "past the give-up window, never shown missing");
	set_wide_windows();

	/* cack 1010, off 5 (window 1016..1079): 1011 implied missing. */
	s = sspec(1010, 0x7FFULL << 14);		/* 1030..1040 */
	s.off = 5;
	s.psn = 1040;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 1, "cack + 1 lost");
	expect_event(0, MRC_EVT_LOSS, 1011, 0xA0, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1012, "unlogged 1012, not shown, ends the report");

	/*
	 * Off 0 (window 1011..1074): 1012..1029 shown missing, but this
	 * trigger went out 1 us after them: the unlogged 1012 is lost, 1013
	 * (not overtaken) ends the report.
	 */
	put_rec(1039, 0, 1, MRC_BTH_F_RETX, t0 + 1000);
	s = sspec(1010, 0x7FFULL << 19);		/* 1030..1040 */
	s.psn = 1039;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 1, "shown missing is all an unlogged hole needs");
	expect_event(0, MRC_EVT_LOSS, 1012, UNLOGGED_EV, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1013, "shown missing but not overtaken: waits");

	/* The same window with the late trigger: shown and overtaken. */
	s.psn = 1040;
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 1030 - 1013, "1013..1029 lost");
	for (i = 0, psn = 1013; psn < 1030; psn++)
		expect_event(i++, MRC_EVT_LOSS, psn, 0xA0, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1038, "loss_mark at sack_max - DUPTHRESH");
	ASSERT_EQ(read_qp_stats(SLOT).losses, 20, "qp_stats.losses: each hole once");
}

/*
 * Evidence is never combined across SACKs. SACKs are sprayed too and
 * arrive out of order: a late SACK (older cack and window, its trigger
 * sent early) shows missing a PSN that arrived after it was sent. Its own
 * trigger did not overtake that PSN, so it is not lost, although a newer
 * SACK, processed before it, had a trigger sent 50 ms later. That newer
 * trigger's send time is what the plane's and the EV's acked_sent_ns
 * hold, which is why they decide nothing. All on EV 0 (plane 1); plane
 * window ~1 ms, give-up window ~2 s.
 */
TEST_CASE(test_loss_stale_sack, "mrc.loss_stale_sack")
{
	static const struct mrc_ev_entry tab[] = { ACT(0xA0, 1), ACT(0xA1, 1) };
	/* The newer SACK: cack 1009, off 2 (window 1012..1075), 1012..1030 acked. */
	struct sack_spec s = sspec(1009, 0x7FFFFULL);
	__u64 t0;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 2, NULL);
	set_wide_windows();
	t0 = mono_ns() - 100000000;
	put_rec(1010, 0, 1, 0, t0);
	put_rec(1011, 0, 1, 0, t0 + 10000);
	put_rec(1015, 0, 1, MRC_BTH_F_RETX, t0 + 50000);	/* the old SACK's trigger */
	put_rec(1030, 0, 1, MRC_BTH_F_RETX, t0 + 50000000);	/* the new one's */
	s.off = 2;
	s.psn = 1030;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 1 + 2, "one loss, two completions");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA0, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.sack_max, 1031, "sack_max");
	ASSERT_EQ(tx.loss_mark, 1011, "1011, not shown by the newer SACK, waits");
	ASSERT_EQ(tx.acked_sent_ns[0], t0 + 50000000, "plane 1: newest acked send time");
	ASSERT_EQ(ev_ctr(0).acked_sent_ns, t0 + 50000000, "EV 0: newest acked send time");

	/*
	 * The late SACK: cack 1009, off 0 (window 1010..1073), 1013..1015
	 * acked, 1011 shown missing; its trigger 1015 went out 40 us after
	 * 1011 (< MRC_EV_REORDER_NS).
	 */
	s = sspec(1009, 0x38ULL);
	s.psn = 1015;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 0, "its own trigger did not overtake 1011");
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1011, "loss_mark unchanged");
	ASSERT_EQ(tx.sack_max, 1031, "sack_max never goes back");
	ASSERT_EQ(tx.acked_sent_ns[0], t0 + 50000000, "acked send time only grows");

	/* 1011 had arrived in between: the next SACK acks up to 1030. */
	s = sspec(1030, 0);
	s.psn = 1030;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 0, "1011 never reported (1050 not yet complete)");
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1031, "snd_una");
	ASSERT_EQ(read_qp_stats(SLOT).losses, 1, "qp_stats.losses: 1010 only");
}

/*
 * A lost SACK is no evidence. 1011..1019 arrived but the SACKs showing
 * them acked were lost (a failed return path); the SACKs that arrive show
 * windows above them (off 10), with triggers sent 50 ms after them. They
 * are never shown missing, so never reported, and a later SACK's window
 * shows them acked. And a trigger on another plane and another EV
 * overtakes nothing: a hole a SACK shows missing is lost through it only
 * once older than the give-up window (2 x rtt_peak).
 */
TEST_CASE(test_loss_lost_sack, "mrc.loss_lost_sack")
{
	static const struct mrc_ev_entry tab[] = {
		ACT(0xA0, 1), ACT(0xA1, 1), ACT(0xB0, 2), ACT(0xB1, 2),
	};
	struct sack_spec s;
	__u64 t0, a, b;
	__u32 psn;
	int i;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 4, NULL);
	set_wide_windows();
	t0 = mono_ns() - 100000000;
	for (psn = 1010; psn < 1020; psn++)
		put_rec(psn, 0, 1, 0, t0);
	for (i = 0; i < 5; i++) {
		/* cack 1009, window 1020..1083: 1020..1025+i acked, trigger 1025+i. */
		s = sspec(1009, (1ULL << (6 + i)) - 1);
		s.off = 10;
		s.psn = 1025 + i;
		put_rec(s.psn, 0, 1, MRC_BTH_F_RETX, t0 + 50000000 + i);
		run_sack(&s, &r);
		expect_xdp_drop(&r);
	}
	ASSERT_EQ(drain_events(), 1 + 2, "cack + 1 lost, two completions");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA0, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.sack_max, 1030, "sack_max");
	ASSERT_EQ(tx.loss_mark, 1011, "1011..1019 never shown missing: not lost");

	/* A later SACK, off 0: 1011..1029 acked (1010's resend not yet). */
	s = sspec(1009, 0xFFFFEULL);
	s.psn = 1029;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 0, "1011..1019 never reported");
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1027, "loss_mark at sack_max - DUPTHRESH");
	ASSERT_EQ(read_qp_stats(SLOT).losses, 1, "qp_stats.losses: 1010 only");

	/* Hole 1010 on EV 0 (plane 1), trigger on EV 2 (plane 2) 50 ms later. */
	setup_table(MRC_EVF_UDP, tab, 4, NULL);
	set_wide_windows();
	t0 = mono_ns() - 100000000;
	put_rec(1010, 0, 1, 0, t0);
	put_rec(1020, 2, 2, MRC_BTH_F_RETX, t0 + 50000000);
	s = sspec(1009, 0x7FEULL);			/* 1011..1020 acked */
	s.psn = 1020;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 2, "completions only: another plane overtakes nothing");
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, TX_UNA, "nothing reported");
	/* Give up after 2 x 10 ms: the 100 ms old hole is lost. */
	tx.rtt_peak_ns = 10000000;
	put_tx(&tx);
	a = mono_ns();
	run_sack(&s, &r);
	b = mono_ns();
	ASSERT_EQ(drain_events(), 1, "lost past the give-up window");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA0, 0);
	ASSERT_EQ(drain_ev_events(), 1, "one EV event");
	expect_ev_event(0, 0, 0xA0, 1, 0, MRC_EVR_LOSS, 1010, t0, a, b);
}

/*
 * The same-EV rule at its edge: a hole the SACK shows missing is lost when
 * its trigger went out on the same EV more than MRC_EV_REORDER_NS after it
 * (one path is FIFO; the slack is for the hosts' per-CPU backlogs).
 * Exactly MRC_EV_REORDER_NS is not enough, 1 ns more is: the hole is
 * reported and its EV demoted, the EV event (reason LOSS) carrying the
 * hole's PSN and send time. The plane window (~1 ms) and the give-up
 * window (~2 s) are far; the triggers are resends (no RTT sample).
 */
TEST_CASE(test_loss_same_ev_rule, "mrc.loss_same_ev_rule")
{
	static const struct mrc_ev_entry tab[] = {
		ACT(0xA0, 1), ACT(0xA1, 1), BAK(0xB1, 1, MRC_EV_GOOD),
	};
	struct sack_spec s = sspec(1009, 0x7FEULL);	/* hole 1010 */
	struct mrc_ctl_stats want_ctl = { .ev_events = 1 };
	struct mrc_qp_evs evs;
	__u64 sent, a, b;
	struct run r;

	ASSERT_TRUE(MRC_EV_REORDER_NS + 1 < 8000000 / MRC_REORDER_FRACTION,
		    "the same-EV slack is below this plane window");
	setup_table(MRC_EVF_UDP, tab, 3, NULL);
	set_evs_meta(6, 1, 0);
	set_wide_windows();
	sent = mono_ns() - 5000000;
	put_rec(1010, 1, 1, 0, sent);
	put_rec(1020, 1, 1, MRC_BTH_F_RETX, sent + MRC_EV_REORDER_NS);
	s.psn = 1020;
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 2, "exactly MRC_EV_REORDER_NS later: completions only");
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, TX_UNA, "nothing reported");
	get_evs(&evs);
	ASSERT_EQ(ev_word(&evs, 1), mrc_ev_word(1, MRC_EV_GOOD, MRC_EV_F_ACTIVE),
		  "EV still GOOD and ACTIVE");
	ASSERT_EQ(drain_ev_events(), 0, "no EV event");

	put_rec(1019, 1, 1, MRC_BTH_F_RETX, sent + MRC_EV_REORDER_NS + 1);
	s.psn = 1019;
	a = mono_ns();
	run_sack(&s, &r);
	b = mono_ns();
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 1, "1 ns more: lost");
	expect_event(0, MRC_EVT_LOSS, 1010, 0xA1, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1018, "loss_mark at sack_max - DUPTHRESH");
	ASSERT_EQ(tx.srtt_ns, 8000000, "resends took no RTT sample");
	get_evs(&evs);
	ASSERT_EQ(ev_word(&evs, 1), mrc_ev_word(1, MRC_EV_ASSUMED_BAD, 0),
		  "EV demoted, its place given to the backup");
	ASSERT_EQ(evs.ev[2].flags, MRC_EV_F_ACTIVE, "backup ACTIVE");
	ASSERT_EQ(drain_ev_events(), 1, "one EV event");
	expect_ev_event(0, 1, 0xA1, 1, 6, MRC_EVR_LOSS, 1010, sent, a, b);
	expect_ctl(&want_ctl);
}
