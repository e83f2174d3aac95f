// SPDX-License-Identifier: GPL-2.0
/*
 * Acknowledgements cannot amplify traffic or hang a transfer (issue 16):
 * a NACK acts (resend event, window cut, EV feedback) once per send of
 * its PSN and not sooner than an eighth of the minimum RTT after a first
 * send, half of it after a resend; the rest are counted in nacks_gated /
 * trim_cuts_gated. The resend a NACK of a resend asks for is held until a
 * whole minimum RTT after that resend (the event's hold_ns). A SACKed PSN
 * that a cumulative ack then shows missing loses its bit and is resent.
 */
#include "mrc_xdp_test.h"

#define STORM		100
#define MIN_RTT_NS	10000000u	/* 10 ms: the gate waits 1.25 ms */

/* setup_qp(1) with a minimum RTT of MIN_RTT_NS measured. */
static void setup_rtt_qp(void)
{
	setup_qp(1);
	get_tx(&tx);
	tx.rtt_min_ns = MIN_RTT_NS;
	put_tx(&tx);
}

/* How many events of `type` the last drain_events() read (n of them). */
static int events_of(int n, __u32 type)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += evq[i].type == type;
	return k;
}

/* STORM NACKs for one send of a PSN: one resend, the rest gated. */
TEST_CASE(test_nack_storm_one_resend, "mrc.nack_storm_one_resend")
{
	static const __u8 reasons[] = { MRC_NACK_TRIMMED, MRC_NACK_TRIMMED_LASTHOP,
					MRC_NACK_NO_BITMAP, MRC_NACK_PSN_OOR_WINDOW };
	struct run r;

	for (size_t i = 0; i < sizeof(reasons); i++) {
		int trim = reasons[i] == MRC_NACK_TRIMMED ||
			   reasons[i] == MRC_NACK_TRIMMED_LASTHOP;
		struct mrc_qp_stats q;
		int n;

		setup_rtt_qp();
		/* Sent two minimum RTTs ago: a NACK for it may come now. */
		put_rec(1010, 0, 1, 0, mono_ns() - 2 * MIN_RTT_NS);
		for (int k = 0; k < STORM; k++) {
			run_nack(1010, RX_CACK, reasons[i], &r);
			expect_xdp_drop(&r);
		}
		n = drain_events();
		ASSERT_EQ(n, 1, "a NACK storm for one send: one event");
		expect_event(0, MRC_EVT_LOSS, 1010, ACK_EV, reasons[i]);
		ASSERT_EQ(evq[0].hold_ns, 0, "a first send's resend is not held");
		q = read_qp_stats(SLOT);
		ASSERT_EQ(q.rx_nack, STORM, "every NACK in the window is counted");
		ASSERT_EQ(q.losses, 1, "one loss report");
		ASSERT_EQ(q.nacks_gated, STORM - 1, "the others gated");
		ASSERT_EQ(q.trim_cuts_gated, trim ? STORM - 1 : 0,
			  "gated trims counted as cuts withheld");
		ASSERT_EQ(get_rec(1010).nacked, 1, "the send is marked NACKed");
		expect_drops(&no_drops);
		/* Another PSN is not affected by the first one's mark. */
		put_rec(1011, 0, 1, 0, mono_ns() - 2 * MIN_RTT_NS);
		run_nack(1011, RX_CACK, reasons[i], &r);
		ASSERT_EQ(drain_events(), 1, "another PSN's NACK acts");
		expect_event(0, MRC_EVT_LOSS, 1011, ACK_EV, reasons[i]);
	}
}

/*
 * A NACK sooner than an eighth of the minimum RTT after the send cannot answer
 * it; once the send is that old, the first NACK acts at once.
 */
TEST_CASE(test_nack_too_soon_after_send, "mrc.nack_too_soon_after_send")
{
	struct run r;

	setup_rtt_qp();
	put_rec(1010, 0, 1, 0, mono_ns());
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 0, "NACK right after the send: no event");
	ASSERT_EQ(read_qp_stats(SLOT).nacks_gated, 1, "gated");
	ASSERT_EQ(get_rec(1010).nacked, 0, "the send stays unclaimed");
	/* The same send, an eighth of the minimum RTT later (with margin). */
	put_rec(1010, 0, 1, 0, mono_ns() - MIN_RTT_NS / 8 - 200000);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 1, "the first NACK old enough acts");
	expect_event(0, MRC_EVT_LOSS, 1010, ACK_EV, MRC_NACK_TRIMMED);
	/* No RTT measured yet: only the one-per-send rule holds. */
	setup_qp(1);
	put_rec(1010, 0, 1, 0, mono_ns());
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 1, "no RTT yet: one NACK per send acts");
}

/*
 * After the resend (TC logs a new send, clearing the mark) and half the
 * minimum RTT, the PSN can be NACKed again; within that time it cannot:
 * NACK-driven resends of one PSN are at most two per RTT.
 */
TEST_CASE(test_nack_again_after_resend, "mrc.nack_again_after_resend")
{
	/* Two EVs: a resend never takes the one that carried the lost send. */
	static const struct mrc_ev_entry tab[] = { ACT(0x1111, 1), ACT(0x2222, 1) };
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 2, NULL);
	get_tx(&tx);
	tx.rtt_min_ns = MIN_RTT_NS;
	put_tx(&tx);
	put_rec(1010, 0, 1, 0, mono_ns() - 2 * MIN_RTT_NS);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 1, "first send: one NACK acts");

	/* libmrc resends 1010: TC logs the new send. */
	len = tc_data_psn(pkt, &h, 1010, MRC_BTH_F_RETX);
	run_tc(pkt, len, &r);
	ASSERT_EQ(r.ret, TC_ACT_OK, "TC sent the resend");
	ASSERT_EQ(get_rec(1010).psn, 1010, "resend logged");
	ASSERT_EQ(get_rec(1010).nacked, 0, "TC cleared the mark");
	ASSERT_EQ(get_rec(1010).flags, MRC_BTH_F_RETX, "as a resend");
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 0, "a NACK right after the resend: gated");
	/* A quarter of an RTT would do for a first send; a resend waits half. */
	put_rec(1010, 0, 1, MRC_BTH_F_RETX, mono_ns() - MIN_RTT_NS / 4);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 0, "a resend a quarter of an RTT old: gated");
	ASSERT_EQ(get_rec(1010).nacked, 0, "the resend stays unclaimed");

	/* An RTT after the resend, the resend may be NACKed, and resent at once. */
	put_rec(1010, 0, 1, MRC_BTH_F_RETX, get_rec(1010).sent_ns - MIN_RTT_NS);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 1, "the resend: one NACK acts");
	ASSERT_EQ(evq[0].hold_ns, 0, "an RTT after the resend: not held");
	ASSERT_EQ(read_qp_stats(SLOT).nacks_gated, 4, "one gated per step: 4");
}

/*
 * A NACK of a resend that acts before a whole minimum RTT has passed
 * since that resend asks for the next resend with a hold of the rest of
 * the RTT: one send of a PSN per RTT, whatever NACKs say.
 */
TEST_CASE(test_nack_of_resend_held, "mrc.nack_of_resend_held")
{
	__u64 sent;
	__u32 hold;
	struct run r;

	setup_rtt_qp();
	sent = mono_ns() - MIN_RTT_NS * 3 / 4;
	put_rec(1010, 0, 1, MRC_BTH_F_RETX, sent);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 1, "three quarters of an RTT old: the NACK acts");
	expect_event(0, MRC_EVT_LOSS, 1010, ACK_EV, MRC_NACK_TRIMMED);
	hold = evq[0].hold_ns;
	/* The rest of the RTT, from the NACK's time (a little after `sent`). */
	ASSERT_TRUE(hold > 0 && hold <= MIN_RTT_NS / 4, "held for the rest of the RTT");
	ASSERT_TRUE(mono_ns() + hold >= sent + MIN_RTT_NS - 1000000,
		    "released about an RTT after the resend");
	/* The same age for a first send: no hold. */
	put_rec(1011, 0, 1, 0, sent);
	run_nack(1011, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 1, "a first send's NACK acts");
	ASSERT_EQ(evq[0].hold_ns, 0, "not held");
}

/*
 * A PSN in the window whose send TC has not logged yet (libmrc counts it
 * sent before it reaches TC) cannot have been NACKed: gated.
 */
TEST_CASE(test_nack_unlogged_send_gated, "mrc.nack_unlogged_send_gated")
{
	struct run r;

	setup_rtt_qp();
	run_nack_unlogged(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 0, "no resend");
	ASSERT_EQ(read_qp_stats(SLOT).nacks_gated, 1, "gated");
	/* The slot holds the record of PSN 1010 - 4096: not this send. */
	put_rec_as(1010, 1010 - MRC_WINDOW_MAX, 0, 1, 0, mono_ns() - 2 * MIN_RTT_NS);
	run_nack_unlogged(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 0, "another PSN's record: no resend");
	put_rec(1010, 0, 1, 0, mono_ns() - 2 * MIN_RTT_NS);
	run_nack_unlogged(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 1, "once logged, the NACK acts");
}

/*
 * A fatal NACK is one signal whatever the gate says: a PSN whose send a
 * trim NACK already claimed is still failed by the peer's refusal.
 */
TEST_CASE(test_nack_fatal_not_gated, "mrc.nack_fatal_not_gated")
{
	struct run r;

	setup_rtt_qp();
	put_rec(1010, 0, 1, 0, mono_ns() - 2 * MIN_RTT_NS);
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	run_nack(1010, RX_CACK, MRC_NACK_REMOTE_ACCESS, &r);
	ASSERT_EQ(drain_events(), 2, "loss, then the fatal NACK");
	expect_event(1, MRC_EVT_QP_FATAL, 1010, ACK_EV, MRC_NACK_REMOTE_ACCESS);
}

/*
 * A forged SACK acks 1005, never delivered. When the cumulative ack
 * reaches it (cack 1004) it says the responder lacks 1005: the bit goes,
 * 1005 is reported for a resend, once.
 */
TEST_CASE(test_sack_renege_at_una, "mrc.sack_renege_at_una")
{
	struct sack_spec forged = sspec(RX_CACK, 1ULL << 5);	/* acks 1005 */
	struct sack_spec real = sspec(1004, 0);
	struct mrc_qp_stats q;
	struct run r;
	int n;

	setup_rtt_qp();
	put_rec(1005, 0, 1, 0, mono_ns() - 2 * MIN_RTT_NS);
	run_sack(&forged, &r);
	get_tx(&tx);
	ASSERT_EQ(bit_of(tx.sacked, 1005), 1, "the forged SACK set 1005's bit");
	/* It may show holes below 1005 lost (1000 .. 1002); never 1005. */
	n = drain_events();
	for (int i = 0; i < n; i++)
		ASSERT_TRUE(evq[i].psn != 1005, "no report of 1005 yet");
	ASSERT_EQ(read_qp_stats(SLOT).sacks_reneged, 0, "no renege yet");

	run_sack(&real, &r);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1005, "una 1005");
	ASSERT_EQ(bit_of(tx.sacked, 1005), 0, "bit of 1005 cleared");
	n = drain_events();
	ASSERT_EQ(events_of(n, MRC_EVT_LOSS), 1, "one resend of 1005");
	for (int i = 0; i < n; i++)
		if (evq[i].type == MRC_EVT_LOSS)
			ASSERT_EQ(evq[i].psn, 1005, "the resend is 1005");
	ASSERT_EQ(events_of(n, MRC_EVT_COMPLETION), 1, "WRITE to 1004 completes");
	q = read_qp_stats(SLOT);
	ASSERT_EQ(q.sacks_reneged, 1, "sacks_reneged");

	/* The same SACK again: the bit is gone, nothing more. */
	run_sack(&real, &r);
	ASSERT_EQ(events_of(drain_events(), MRC_EVT_LOSS), 0, "no second resend");
	ASSERT_EQ(read_qp_stats(SLOT).sacks_reneged, 1, "reneged once");
}

/* Without a SACKed una, or with the cumulative ack past it: no renege. */
TEST_CASE(test_sack_renege_needs_evidence, "mrc.sack_renege_needs_evidence")
{
	struct sack_spec s = sspec(1004, 1ULL << 3);	/* acks 1008 */
	struct run r;

	/* 1005 missing and not SACKed: nothing to renege. */
	setup_rtt_qp();
	run_sack(&s, &r);
	get_tx(&tx);
	ASSERT_EQ(bit_of(tx.sacked, 1008), 1, "1008 acked");
	ASSERT_EQ(read_qp_stats(SLOT).sacks_reneged, 0, "no renege");

	/*
	 * 1005 SACKed, then an old SACK (cack 999) arrives: its cack + 1 is
	 * not una, it says nothing about 1005.
	 */
	setup_rtt_qp();
	get_tx(&tx);
	tx.snd_una = 1005;
	set_bit_of(tx.sacked, 1005);
	tx.sack_max = 1006;
	put_tx(&tx);
	s = sspec(RX_CACK, 0);
	run_sack(&s, &r);
	get_tx(&tx);
	ASSERT_EQ(bit_of(tx.sacked, 1005), 1, "old SACK: 1005 still acked");
	ASSERT_EQ(read_qp_stats(SLOT).sacks_reneged, 0, "no renege");
	ASSERT_EQ(events_of(drain_events(), MRC_EVT_LOSS), 0, "no resend");
}

/*
 * The renege clears the bit even when the resend is gated (its send was
 * already NACKed): the timer then resends it, since it is no longer SACKed.
 */
TEST_CASE(test_sack_renege_gated_resend, "mrc.sack_renege_gated_resend")
{
	struct sack_spec s = sspec(1004, 0);
	struct run r;

	setup_rtt_qp();
	put_rec(1005, 0, 1, 0, mono_ns() - 2 * MIN_RTT_NS);
	run_nack(1005, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 1, "the trim NACK acted");
	get_tx(&tx);
	set_bit_of(tx.sacked, 1005);
	put_tx(&tx);
	run_sack(&s, &r);
	get_tx(&tx);
	ASSERT_EQ(bit_of(tx.sacked, 1005), 0, "bit cleared");
	ASSERT_EQ(events_of(drain_events(), MRC_EVT_LOSS), 0, "no second resend of that send");
	ASSERT_EQ(read_qp_stats(SLOT).sacks_reneged, 1, "counted");
}
