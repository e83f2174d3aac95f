// SPDX-License-Identifier: GPL-2.0
/*
 * Acknowledgements checked against the sent window (issue 16): NACKs,
 * fatal or not, only for PSNs in [snd_una, snd_nxt); sack_max and
 * loss_mark move only on acks and never past snd_nxt; RTT samples only
 * from live triggers; EV indexes from the send log bounded by the table;
 * a completion kept, not lost, when the event ring is full.
 */
#include "mrc_xdp_test.h"

/* tx as setup_qp() leaves it, apart from what a test changed. */
static void expect_tx_untouched(const char *what)
{
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, TX_UNA, what);
	ASSERT_EQ(tx.snd_nxt, TX_NXT, what);
	ASSERT_EQ(tx.sack_max, TX_UNA, what);
	ASSERT_EQ(tx.loss_mark, TX_UNA, what);
	ASSERT_EQ(tx.wr_head, 0, what);
	ASSERT_EQ(tx.state, MRC_QPS_RTS, what);
}

/*
 * A NACK for a PSN below snd_una (stale) or at/after snd_nxt (never sent),
 * fatal or not, changes nothing, not even by its cumulative ack (1009
 * would complete two WRITEs): a counted drop.
 */
TEST_CASE(test_nack_outside_window, "mrc.nack_outside_window")
{
	static const __u8 reasons[] = {
		MRC_NACK_REMOTE_ACCESS, MRC_NACK_UNEXP_EVENT,
		MRC_NACK_TRIMMED, MRC_NACK_NO_BITMAP,
	};
	static const struct { __u32 psn; int stale; } cases[] = {
		{ TX_UNA - 1, 1 }, { TX_UNA - 5, 1 }, { TX_UNA - 900, 1 },
		{ TX_NXT, 0 }, { TX_NXT + 3, 0 }, { TX_NXT + 60000, 0 },
	};
	struct run r;

	for (size_t i = 0; i < sizeof(reasons); i++) {
		for (size_t j = 0; j < sizeof(cases) / sizeof(cases[0]); j++) {
			struct mrc_drop_stats d;
			struct mrc_qp_stats q;
			int before = test_state.failed;

			setup_qp(1);
			run_nack(cases[j].psn, 1009, reasons[i], &r);
			expect_xdp_drop(&r);
			d = read_drops();
			ASSERT_EQ(d.stale_ack, cases[j].stale ? 1 : 0, "drops.stale_ack");
			ASSERT_EQ(d.bad_ack, cases[j].stale ? 0 : 1, "drops.bad_ack");
			ASSERT_EQ(d.ring_full, 0, "drops.ring_full");
			q = read_qp_stats(SLOT);
			ASSERT_EQ(q.rx_bad, 1, "qp_stats.rx_bad");
			ASSERT_EQ(q.rx_nack + q.losses + q.completions, 0,
				  "no NACK, loss or completion counted");
			ASSERT_EQ(drain_events(), 0, "no event");
			expect_tx_untouched("tx untouched by a NACK outside the window");
			if (test_state.failed != before)
				fprintf(stderr, "  (reason 0x%02x, psn %u)\n",
					reasons[i], cases[j].psn);
		}
	}
	/* In the window, the same NACK still works: the control. */
	setup_qp(1);
	run_nack(TX_UNA, RX_CACK, MRC_NACK_REMOTE_ACCESS, &r);
	ASSERT_EQ(drain_events(), 1, "fatal NACK at snd_una: one event");
	expect_event(0, MRC_EVT_QP_FATAL, TX_UNA, ACK_EV, MRC_NACK_REMOTE_ACCESS);
	setup_qp(1);
	run_nack(TX_NXT - 1, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 1, "trim NACK at snd_nxt - 1: one event");
	expect_event(0, MRC_EVT_LOSS, TX_NXT - 1, ACK_EV, MRC_NACK_TRIMMED);
}

/* A SACK that acks nothing leaves sack_max where it was. */
TEST_CASE(test_sack_nothing_keeps_sack_max, "mrc.sack_nothing_keeps_sack_max")
{
	static const __u16 offs[] = { 0, 50, 99, 100, 5000, 65535 };
	struct run r;

	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		struct sack_spec s = sspec(RX_CACK, 0);

		setup_qp(1);
		s.off = offs[i];
		run_sack(&s, &r);
		expect_xdp_drop(&r);
		expect_drops(&no_drops);
		get_tx(&tx);
		ASSERT_EQ(tx.sack_max, TX_UNA, "empty bitmap: sack_max unchanged");
		ASSERT_EQ(tx.loss_mark, TX_UNA, "empty bitmap: loss_mark unchanged");
		/* Bits only past snd_nxt ack nothing either. */
		s.bitmap = ~0ULL;
		if (offs[i] >= TX_NXT - TX_UNA) {
			run_sack(&s, &r);
			get_tx(&tx);
			ASSERT_EQ(tx.sack_max, TX_UNA, "bits past snd_nxt: sack_max unchanged");
			ASSERT_EQ(bit_of(tx.sacked, TX_NXT), 0, "snd_nxt not acked");
		}
		ASSERT_EQ(drain_events(), 0, "no event");
	}
}

/* sack_max is one past the highest PSN acked, at most snd_nxt. */
TEST_CASE(test_sack_max_below_snd_nxt, "mrc.sack_max_below_snd_nxt")
{
	struct sack_spec s = sspec(RX_CACK, ~0ULL);
	struct run r;
	int n;

	setup_qp(1);
	s.off = 90;			/* bits for 1090 .. 1153; snd_nxt 1100 */
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	get_tx(&tx);
	ASSERT_EQ(tx.sack_max, TX_NXT, "sack_max clamped to snd_nxt");
	ASSERT_EQ(bit_of(tx.sacked, TX_NXT - 1), 1, "snd_nxt - 1 acked");
	ASSERT_EQ(bit_of(tx.sacked, TX_NXT), 0, "snd_nxt not acked");
	ASSERT_TRUE(!mrc_psn_before(TX_NXT, tx.loss_mark), "loss_mark <= snd_nxt");
	n = drain_events();
	for (int i = 0; i < n; i++)
		ASSERT_TRUE(evq[i].type != MRC_EVT_LOSS ||
			    mrc_psn_before(evq[i].psn, TX_NXT), "no loss >= snd_nxt");
}

/*
 * Whatever sack_max says (here a stale value past snd_nxt, and ring
 * slots past snd_nxt still holding old bits), neither loss_mark nor a
 * loss report reaches snd_nxt.
 */
TEST_CASE(test_no_loss_past_snd_nxt, "mrc.no_loss_past_snd_nxt")
{
	struct sack_spec s = sspec(RX_CACK, 0);
	struct run r;
	int n;

	setup_qp(1);
	get_tx(&tx);
	tx.sack_max = TX_NXT + 300;
	tx.loss_mark = 1080;
	for (__u32 psn = 1080; psn < 1200; psn++)
		set_bit_of(tx.sacked, psn);
	put_tx(&tx);
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, TX_NXT - MRC_DUPTHRESH,
		  "loss_mark stops at snd_nxt - DUPTHRESH");
	/* Holes up to snd_nxt, all shown missing by a SACK at cack 1089. */
	setup_qp(1);
	get_tx(&tx);
	tx.sack_max = TX_NXT + 300;
	put_tx(&tx);
	for (__u32 psn = 1090; psn < 1200; psn++)
		put_rec(psn, 0, 1, 0, mono_ns() - 10000000000ull);
	s = sspec(1089, 0);
	s.psn = 1099;
	run_sack(&s, &r);
	n = drain_events();
	for (int i = 0; i < n; i++)
		ASSERT_TRUE(evq[i].type != MRC_EVT_LOSS ||
			    mrc_psn_before(evq[i].psn, TX_NXT), "no loss >= snd_nxt");
	get_tx(&tx);
	ASSERT_TRUE(!mrc_psn_before(TX_NXT, tx.loss_mark), "loss_mark <= snd_nxt");
}

/*
 * A trigger acked long ago (below the snd_una the SACK found) or never
 * sent (>= snd_nxt) gives no RTT sample: srtt, rttvar and the peak stay.
 */
TEST_CASE(test_no_rtt_from_dead_trigger, "mrc.no_rtt_from_dead_trigger")
{
	static const struct mrc_ev_entry tab[] = { ACT(0xA0, 1), ACT(0xA1, 1) };
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 2, NULL);
	/* 3 s ago: a forged sample would raise the RTO floor to 6 s. */
	put_rec(TX_UNA - 10, 1, 1, 0, mono_ns() - 3000000000ull);
	run_trigger_sack(TX_UNA - 10, MRC_M_NONE, &r);
	expect_xdp_drop(&r);
	put_rec(TX_NXT + 5, 1, 1, 0, mono_ns() - 3000000000ull);
	run_trigger_sack(TX_NXT + 5, MRC_M_NONE, &r);
	expect_xdp_drop(&r);
	get_tx(&tx);
	ASSERT_EQ(tx.srtt_ns, 0, "srtt: no sample");
	ASSERT_EQ(tx.rttvar_ns, 0, "rttvar: no sample");
	ASSERT_EQ(tx.rtt_peak_ns, 0, "rtt_peak: no sample");
	ASSERT_EQ(ev_ctr(1).rtt_samples, 0, "ev_stats[1].rtt_samples");
	/* A live trigger still gives one. */
	put_rec(1010, 1, 1, 0, mono_ns() - 1000000);
	run_trigger_sack(1010, MRC_M_NONE, &r);
	get_tx(&tx);
	ASSERT_TRUE(tx.srtt_ns >= 1000000 && tx.srtt_ns < 1000000000, "live trigger: srtt");
	ASSERT_EQ(ev_ctr(1).rtt_samples, 1, "live trigger: one sample");
}

/*
 * A send-log EV index past the QP's n_evs changes no entry: ECN marks,
 * mid-path trims and losses leave entries past the table alone.
 */
TEST_CASE(test_ev_index_out_of_range, "mrc.ev_index_out_of_range")
{
	static const struct mrc_ev_entry tab[] = {
		ACT(0xA0, 1), ACT(0xA1, 1), ACT(0xA2, 1), BAK(0xB3, 1, MRC_EV_GOOD),
	};
	struct mrc_qp_evs before, after;
	struct mrc_qp_info q;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 4, NULL);
	get_qp(&q);
	q.n_evs = 2;			/* entries 2 and 3 are past the table */
	put_qp(&q);
	get_evs(&before);
	for (int i = 0; i < 2 * MRC_EV_SWAP_MARKS; i++) {
		put_rec(1010, 2, 1, 0, mono_ns());
		run_trigger_sack(1010, MRC_M_SKIP_ONCE, &r);
		expect_xdp_drop(&r);
	}
	put_rec(1011, 3, 1, 0, mono_ns());
	run_nack(1011, RX_CACK, MRC_NACK_TRIMMED, &r);
	put_rec(1012, 2, 1, 0, mono_ns());
	run_trigger_sack(1012, MRC_M_ALWAYS_SKIP, &r);
	get_evs(&after);
	for (__u32 i = 0; i < 4; i++)
		ASSERT_EQ(ev_word(&after, i), ev_word(&before, i), "entry unchanged");
	ASSERT_EQ(after.n_down, before.n_down, "n_down unchanged");
	ASSERT_EQ(drain_ev_events(), 0, "no EV event");
	/* In range, the same mark skips a turn: the control. */
	put_rec(1013, 1, 1, 0, mono_ns());
	run_trigger_sack(1013, MRC_M_SKIP_ONCE, &r);
	get_evs(&after);
	ASSERT_EQ(after.ev[1].state, MRC_EV_SKIP, "in range: GOOD -> SKIP");
}

/*
 * A full event ring keeps the WRITE unretired (wr_head stays, counted as
 * ring_full); once the ring is drained, the next SACK delivers it.
 */
TEST_CASE(test_completion_kept_ring_full, "mrc.completion_kept_ring_full")
{
	const __u32 fits = (MRC_CTX_RING_BYTES - 1) / (8 + sizeof(struct mrc_event));
	struct sack_spec s = sspec(1009, 0);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	__u64 full;
	size_t len;
	struct run r;

	setup_qp(1);
	/* Fatal NACKs fill the ring: each reports (a trim NACK acts once a send). */
	len = nack_frame(pkt, &h, QPN, 1010, RX_CACK, MRC_NACK_REMOTE_ACCESS);
	run_prog(bpf_program__fd(skel->progs.mrc_xdp_rx), pkt, len, fits, &r);
	ASSERT_EQ(read_drops().ring_full, 0, "ring exactly full");
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	full = read_drops().ring_full;
	ASSERT_EQ(full, 1, "drops.ring_full: the completion waits");
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "the ack itself applied");
	ASSERT_EQ(tx.wr_head, 0, "no WRITE retired");
	ASSERT_EQ(read_qp_stats(SLOT).completions, 0, "no completion counted");
	ASSERT_EQ(drain_events(), fits, "only the NACKs' events");
	/* Drained: the next SACK (nothing new) delivers both completions. */
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 2, "both completions after draining");
	expect_event(0, MRC_EVT_COMPLETION, 1004, 0, 0);
	expect_event(1, MRC_EVT_COMPLETION, 1009, 0, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.wr_head, 2, "two WRITEs retired");
	ASSERT_EQ(read_qp_stats(SLOT).completions, 2, "qp_stats.completions");
	ASSERT_EQ(read_drops().ring_full, full, "no new ring_full");
}
