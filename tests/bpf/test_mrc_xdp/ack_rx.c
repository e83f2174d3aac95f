// SPDX-License-Identifier: GPL-2.0
/*
 * ACK receive in mrc_xdp_rx (we are the requester): SACKs move snd_una
 * and complete WRs on the context's event ring, report the holes as
 * losses once, read the bitmap at its offset, and are refused when they
 * ack what was never sent or are stale; NACKs by reason (loss or fatal),
 * truncated, stale or bad; the event ring missing or full. Ends with the
 * cost of one SACK (information, not a check).
 */
#include "mrc_xdp_test.h"

/* ====================================================================== */
/* Tests: SACK                                                            */
/* ====================================================================== */

TEST_CASE(test_sack_cumulative_completions, "mrc.sack_cumulative_completions")
{
	struct sack_spec s = sspec(1009, 0);
	struct mrc_qp_stats want_qp = { .rx_sack = 1, .completions = 2 };
	struct run r;

	setup_qp(1);
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	expect_drops(&no_drops);
	expect_qp_stats(&want_qp);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "snd_una after cack 1009");
	ASSERT_EQ(tx.wr_head, 2, "wr_head advanced past two WRITEs");
	ASSERT_EQ(tx.wr_tail, 3, "wr_tail untouched");
	ASSERT_EQ(tx.sack_max, 1010, "sack_max follows snd_una");
	ASSERT_EQ(tx.loss_mark, TX_UNA, "no loss reported");
	ASSERT_EQ(tx.snd_nxt, TX_NXT, "snd_nxt untouched");
	ASSERT_EQ(drain_events(), 2, "two events");
	expect_event(0, MRC_EVT_COMPLETION, 1004, 0, 0);
	expect_event(1, MRC_EVT_COMPLETION, 1009, 0, 0);

	/* The same SACK again completes nothing more. */
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 0, "no events from a repeated SACK");
	get_tx(&tx);
	ASSERT_EQ(tx.wr_head, 2, "wr_head unchanged");

	/* cack 1050 completes the third one: last_psn 1050 needs una 1051. */
	s = sspec(1049, 0);
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 0, "WRITE ending at 1050 not complete at una 1050");
	s = sspec(1050, 0);
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 1, "one event");
	expect_event(0, MRC_EVT_COMPLETION, 1050, 0, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1051, "snd_una after cack 1050");
	ASSERT_EQ(tx.wr_head, 3, "wr ring empty");
}

TEST_CASE(test_sack_gaps_losses_once, "mrc.sack_gaps_losses_once")
{
	/* Bit i = PSN 1010 + i: PSNs 1012..1020. */
	struct sack_spec s = sspec(1009, 0x7FCULL);
	struct mrc_qp_stats want_qp = { .rx_sack = 1, .losses = 2, .completions = 2 };
	__u32 psn;
	struct run r;

	setup_qp(1);
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	expect_drops(&no_drops);
	expect_qp_stats(&want_qp);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "snd_una");
	for (psn = 1005; psn < 1030; psn++) {
		char what[48];

		snprintf(what, sizeof(what), "sacked bit of PSN %u", psn);
		ASSERT_EQ(bit_of(tx.sacked, psn), psn >= 1012 && psn <= 1020, what);
	}
	ASSERT_EQ(tx.sack_max, 1021, "sack_max one past 1020");
	ASSERT_EQ(tx.loss_mark, 1018, "loss_mark at sack_max - DUPTHRESH");
	ASSERT_EQ(drain_events(), 4, "two losses, two completions");
	expect_event(0, MRC_EVT_LOSS, 1010, UNLOGGED_EV, 0);
	expect_event(1, MRC_EVT_LOSS, 1011, UNLOGGED_EV, 0);
	expect_event(2, MRC_EVT_COMPLETION, 1004, 0, 0);
	expect_event(3, MRC_EVT_COMPLETION, 1009, 0, 0);

	/* Again: the holes were reported once. */
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 0, "no new events from the same SACK");
	want_qp.rx_sack = 2;
	expect_qp_stats(&want_qp);
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1018, "loss_mark unchanged");
}

/*
 * bitmap_off moves the bitmap; bits land in two ring words. A SACK shows
 * missing only its cack + 1 and the zero bits of its window, so the holes
 * between them are not reported; a SACK whose window covers the holes
 * reports them, MRC_LOSS_BURST PSNs per SACK, the next SACK the rest. Bits
 * at or past snd_nxt are ignored. The holes have no send-log record: shown
 * missing is all they need to be lost.
 */
TEST_CASE(test_sack_bitmap_offset_burst, "mrc.sack_bitmap_offset_burst")
{
	struct sack_spec s = sspec(1009, 1ULL | 1ULL << 40);
	__u32 psn;
	int i, n;
	struct run r;

	setup_qp(1);
	s.off = 5;				/* bit 0 = PSN 1015, bit 40 = 1055 */
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	get_tx(&tx);
	ASSERT_EQ(bit_of(tx.sacked, 1015), 1, "sacked 1015 (word 15, bit 55)");
	ASSERT_EQ(bit_of(tx.sacked, 1055), 1, "sacked 1055 (word 16, bit 31)");
	ASSERT_EQ(tx.sacked[15], 1ULL << 55, "ring word 15");
	ASSERT_EQ(tx.sacked[16], 1ULL << 31, "ring word 16");
	ASSERT_EQ(tx.sack_max, 1056, "sack_max");
	/* 1010 is cack + 1; 1011..1014 lie below the window (1015..1078). */
	ASSERT_EQ(tx.loss_mark, 1011, "report stops at 1011, below the window");
	ASSERT_EQ(drain_events(), 1 + 2, "one loss and 2 completions");
	expect_event(0, MRC_EVT_LOSS, 1010, UNLOGGED_EV, 0);
	expect_event(1, MRC_EVT_COMPLETION, 1004, 0, 0);
	expect_event(2, MRC_EVT_COMPLETION, 1009, 0, 0);
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 0, "1011..1014 never shown missing: not lost");
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1011, "loss_mark unchanged");

	/* Window 1010..1073 (off 0), the same two acks: it shows the holes. */
	s.off = 0;
	s.bitmap = 1ULL << 5 | 1ULL << 45;	/* 1015, 1055 */
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	get_tx(&tx);
	ASSERT_EQ(tx.sacked[15], 1ULL << 55, "ring word 15 (off 0)");
	ASSERT_EQ(tx.sacked[16], 1ULL << 31, "ring word 16 (off 0)");
	/* Holes 1011..1052 minus 1015; one SACK reports 1011..1042. */
	ASSERT_EQ(tx.loss_mark, 1011 + MRC_LOSS_BURST, "loss_mark after one burst");
	n = drain_events();
	ASSERT_EQ(n, MRC_LOSS_BURST - 1, "a burst of losses but 1015");
	for (i = 0, psn = 1011; psn < 1011 + MRC_LOSS_BURST; psn++) {
		if (psn == 1015)
			continue;
		expect_event(i++, MRC_EVT_LOSS, psn, UNLOGGED_EV, 0);
	}
	/* The next SACK reports the rest, up to sack_max - DUPTHRESH. */
	run_sack(&s, &r);
	n = drain_events();
	ASSERT_EQ(n, 1053 - 1043, "rest of the holes");
	for (i = 0, psn = 1043; psn < 1053; psn++)
		expect_event(i++, MRC_EVT_LOSS, psn, UNLOGGED_EV, 0);
	get_tx(&tx);
	ASSERT_EQ(tx.loss_mark, 1053, "loss_mark at sack_max - DUPTHRESH");
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 0, "nothing left to report");
	ASSERT_EQ(read_qp_stats(SLOT).losses, MRC_LOSS_BURST - 1 + 1 + 10,
		  "qp_stats.losses: each hole once");

	/* snd_nxt 1040: bits for 1040 and later are not ours to record. */
	setup_qp(1);
	get_tx(&tx);
	tx.snd_nxt = 1040;
	tx.wr[2].last_psn = 1039;
	put_tx(&tx);
	s = sspec(1009, 1ULL << 5 | 1ULL << 29 | 1ULL << 30 | 1ULL << 45);
	/* 1015 1039 1040 1055 */
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	get_tx(&tx);
	ASSERT_EQ(bit_of(tx.sacked, 1015), 1, "sacked 1015");
	ASSERT_EQ(bit_of(tx.sacked, 1039), 1, "sacked 1039");
	ASSERT_EQ(bit_of(tx.sacked, 1040), 0, "1040 >= snd_nxt ignored");
	ASSERT_EQ(bit_of(tx.sacked, 1055), 0, "1055 >= snd_nxt ignored");
	ASSERT_EQ(tx.sack_max, 1040, "sack_max capped at snd_nxt");
	ASSERT_EQ(tx.loss_mark, 1037, "loss_mark");
	ASSERT_EQ(drain_events(), 1037 - 1010 - 1 + 2, "26 losses, 2 completions");
}

TEST_CASE(test_sack_beyond_snd_nxt, "mrc.sack_beyond_snd_nxt")
{
	struct sack_spec s = sspec(1200, 0);
	struct mrc_drop_stats want = { .bad_ack = 1 };
	struct mrc_qp_stats want_qp = { .rx_bad = 1 };
	struct run r;

	setup_qp(1);
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
	expect_qp_stats(&want_qp);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, TX_UNA, "snd_una unchanged");
	ASSERT_EQ(tx.wr_head, 0, "nothing completed");
	ASSERT_EQ(drain_events(), 0, "no events");

	/* Boundary: cack = snd_nxt is one too far ... */
	s = sspec(TX_NXT, 0);
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	want.bad_ack = 2;
	expect_drops(&want);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, TX_UNA, "snd_una unchanged at cack = snd_nxt");

	/* ... cack = snd_nxt - 1 acks everything. */
	s = sspec(TX_NXT - 1, 0);
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, TX_NXT, "all acked");
	ASSERT_EQ(tx.wr_head, 3, "all three WRITEs complete");
	ASSERT_EQ(drain_events(), 3, "three completions");
}

TEST_CASE(test_sack_rejects, "mrc.sack_rejects")
{
	struct sack_spec s = sspec(1009, 0);
	struct mrc_drop_stats want = {};
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	/* From a stranger. */
	setup_qp(1);
	h.src = stranger4;
	len = sack_frame(pkt, &h, &s);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.bad_source = 1;
	expect_drops(&want);

	/* For a QP that is not there. */
	h = rx4();
	s.dqpn = 77;
	len = sack_frame(pkt, &h, &s);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.unknown_qp = 1;
	expect_drops(&want);
	s.dqpn = 0;
	len = sack_frame(pkt, &h, &s);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.unknown_qp = 2;
	expect_drops(&want);

	/* Truncated: the frame ends inside the SACK header ... */
	s.dqpn = QPN;
	{
		__u8 m[128];

		build_sack(m, &s);
		len = build_udp(&h, m, BTH_LEN + 31, pkt);
	}
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.malformed = 1;
	expect_drops(&want);
	/* ... or the UDP length does, with the bytes present. */
	len = sack_frame(pkt, &h, &s);
	set_udp_len(pkt, UDP_LEN + BTH_LEN + 31);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.malformed = 2;
	expect_drops(&want);

	/* A QP not yet sending (INIT, RTR) takes no acks. */
	len = sack_frame(pkt, &h, &s);
	set_qp_state(MRC_QPS_INIT);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	set_qp_state(MRC_QPS_RTR);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.qp_not_ready = 2;
	expect_drops(&want);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, TX_UNA, "no rejected SACK moved snd_una");
	ASSERT_EQ(drain_events(), 0, "no events from rejected SACKs");
	ASSERT_EQ(read_qp_stats(SLOT).rx_sack, 0, "qp_stats.rx_sack");

	/* A QP in ERROR still takes acks (completions drain). */
	set_qp_state(MRC_QPS_ERROR);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "SACK applied in ERROR");
	ASSERT_EQ(drain_events(), 2, "completions in ERROR");
}

TEST_CASE(test_sack_stale, "mrc.sack_stale")
{
	struct sack_spec s = sspec(1009, 0);
	struct run r;

	setup_qp(1);
	run_sack(&s, &r);
	ASSERT_EQ(drain_events(), 2, "two completions");
	/* Stale cack 1005, bitmap from 1006: bit 2 = 1008 (acked already),
	 * bit 5 = 1011 (new). */
	s = sspec(1005, 1ULL << 2 | 1ULL << 5);
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "snd_una never moves back");
	ASSERT_EQ(bit_of(tx.sacked, 1008), 0, "bit below snd_una not recorded");
	ASSERT_EQ(bit_of(tx.sacked, 1011), 1, "new selective ack recorded");
	ASSERT_EQ(tx.sack_max, 1012, "sack_max");
	ASSERT_EQ(tx.wr_head, 2, "wr_head unchanged");
	ASSERT_EQ(drain_events(), 0, "no events (no hole 3 below sack_max)");
	ASSERT_EQ(read_qp_stats(SLOT).rx_sack, 2, "qp_stats.rx_sack");
	ASSERT_EQ(read_drops().bad_ack, 0, "a stale ack is not a bad ack");
}

/* ====================================================================== */
/* Tests: NACK                                                            */
/* ====================================================================== */

TEST_CASE(test_nack_loss_reasons, "mrc.nack_loss_reasons")
{
	static const __u8 reasons[] = {
		MRC_NACK_TRIMMED, MRC_NACK_TRIMMED_LASTHOP, MRC_NACK_NO_BITMAP,
		MRC_NACK_NO_PKT_BUFFER, MRC_NACK_NO_RESOURCE, MRC_NACK_PSN_OOR_WINDOW,
	};
	struct mrc_qp_stats want_qp = { .rx_nack = 1, .losses = 1 };
	size_t i;
	struct run r;

	for (i = 0; i < sizeof(reasons); i++) {
		int before = test_state.failed;

		setup_qp(1);
		run_nack(1010, RX_CACK, reasons[i], &r);	/* cack 999: no progress */
		expect_xdp_drop(&r);
		expect_drops(&no_drops);
		expect_qp_stats(&want_qp);
		ASSERT_EQ(drain_events(), 1, "one event");
		expect_event(0, MRC_EVT_LOSS, 1010, ACK_EV, reasons[i]);
		get_tx(&tx);
		ASSERT_EQ(tx.state, MRC_QPS_RTS, "QP still RTS");
		ASSERT_EQ(tx.snd_una, TX_UNA, "snd_una unchanged");
		if (test_state.failed != before)
			fprintf(stderr, "  (reason 0x%02x)\n", reasons[i]);
	}

	/* A NACK's cack acks too: what it acked completes first, then the
	 * loss is reported. */
	setup_qp(1);
	run_nack(1010, 1009, MRC_NACK_TRIMMED, &r);
	expect_xdp_drop(&r);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "snd_una from the NACK's cack");
	ASSERT_EQ(tx.wr_head, 2, "wr_head");
	ASSERT_EQ(drain_events(), 3, "two completions and a loss");
	expect_event(0, MRC_EVT_COMPLETION, 1004, 0, 0);
	expect_event(1, MRC_EVT_COMPLETION, 1009, 0, 0);
	expect_event(2, MRC_EVT_LOSS, 1010, ACK_EV, MRC_NACK_TRIMMED);
}

TEST_CASE(test_nack_fatal_reasons, "mrc.nack_fatal_reasons")
{
	static const __u8 reasons[] = { MRC_NACK_REMOTE_ACCESS, MRC_NACK_UNEXP_EVENT };
	struct mrc_qp_stats want_qp = { .rx_nack = 1 };
	size_t i;
	struct run r;

	for (i = 0; i < sizeof(reasons); i++) {
		int before = test_state.failed;

		setup_qp(1);
		run_nack(1010, RX_CACK, reasons[i], &r);
		expect_xdp_drop(&r);
		expect_drops(&no_drops);
		expect_qp_stats(&want_qp);
		ASSERT_EQ(drain_events(), 1, "one event");
		expect_event(0, MRC_EVT_QP_FATAL, 1010, ACK_EV, reasons[i]);
		/* One signal: the event; libmrc writes the state. */
		get_tx(&tx);
		ASSERT_EQ(tx.state, MRC_QPS_RTS, "tx state left to libmrc");
		if (test_state.failed != before)
			fprintf(stderr, "  (reason 0x%02x)\n", reasons[i]);
	}
	/* Completions of what the NACK's cack acked come before the fatal
	 * event: those WRITEs succeeded. */
	setup_qp(1);
	run_nack(1010, 1009, MRC_NACK_UNEXP_EVENT, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 3, "two completions and the fatal event");
	expect_event(0, MRC_EVT_COMPLETION, 1004, 0, 0);
	expect_event(1, MRC_EVT_COMPLETION, 1009, 0, 0);
	expect_event(2, MRC_EVT_QP_FATAL, 1010, ACK_EV, MRC_NACK_UNEXP_EVENT);
	ASSERT_EQ(read_qp_stats(SLOT).losses, 0, "a fatal NACK is not a loss");

	/* Not for a PSN below snd_una: stale or forged, dropped (issue 16). */
	setup_qp(1);
	run_nack(TX_UNA - 5, RX_CACK, MRC_NACK_REMOTE_ACCESS, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 0, "no fatal event for an old PSN");
	ASSERT_EQ(read_drops().stale_ack, 1, "counted as a stale ack");
	get_tx(&tx);
	ASSERT_EQ(tx.state, MRC_QPS_RTS, "tx state left to libmrc");
}

/* A fatal NACK whose event is lost: the state word is the signal left. */
TEST_CASE(test_nack_fatal_ring_full, "mrc.nack_fatal_ring_full")
{
	struct mrc_drop_stats want = { .ring_full = 1 };
	__u32 zero = 0;
	struct run r;

	setup_qp(1);
	ASSERT_EQ(bpf_map_delete_elem(MFD(mrc_events), &zero), 0, "remove ring");
	run_nack(1010, RX_CACK, MRC_NACK_REMOTE_ACCESS, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
	get_tx(&tx);
	ASSERT_EQ(tx.state, MRC_QPS_ERROR, "tx state ERROR");
}

TEST_CASE(test_nack_truncated, "mrc.nack_truncated")
{
	struct mrc_drop_stats want = { .malformed = 1 };
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX], m[64];
	size_t len;
	struct run r;

	setup_qp(1);
	len = nack_frame(pkt, &h, QPN, 1010, RX_CACK, MRC_NACK_TRIMMED);
	memcpy(m, pkt + l4_off(pkt) + UDP_LEN, BTH_LEN + 12);
	len = build_udp(&h, m, BTH_LEN + 11, pkt);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
	len = nack_frame(pkt, &h, QPN, 1010, RX_CACK, MRC_NACK_TRIMMED);
	set_udp_len(pkt, UDP_LEN + BTH_LEN + 11);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.malformed = 2;
	expect_drops(&want);
	ASSERT_EQ(drain_events(), 0, "no events");
	ASSERT_EQ(read_qp_stats(SLOT).rx_nack, 0, "qp_stats.rx_nack");
}

TEST_CASE(test_nack_stale_bad_ack_rejects, "mrc.nack_stale_bad_ack_rejects")
{
	struct mrc_drop_stats want = { .stale_ack = 1 };
	struct mrc_qp_stats want_qp = { .rx_bad = 1 };
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	/* Refusing a PSN that is already acknowledged: stale. */
	setup_qp(1);
	run_nack(TX_UNA - 5, RX_CACK, MRC_NACK_TRIMMED, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
	expect_qp_stats(&want_qp);
	ASSERT_EQ(drain_events(), 0, "no loss for a stale NACK");

	/* Acking PSNs never sent. */
	setup_qp(1);
	run_nack(1010, 1200, MRC_NACK_TRIMMED, &r);
	expect_xdp_drop(&r);
	memset(&want, 0, sizeof(want));
	want.bad_ack = 1;
	expect_drops(&want);
	ASSERT_EQ(drain_events(), 0, "no loss from a bad NACK");
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, TX_UNA, "snd_una unchanged");

	/* Stranger, unknown QP, QP not sending. */
	setup_qp(1);
	memset(&want, 0, sizeof(want));
	h.src = stranger4;
	len = nack_frame(pkt, &h, QPN, 1010, RX_CACK, MRC_NACK_TRIMMED);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.bad_source = 1;
	h = rx4();
	len = nack_frame(pkt, &h, 77, 1010, RX_CACK, MRC_NACK_TRIMMED);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.unknown_qp = 1;
	set_qp_state(MRC_QPS_INIT);
	len = nack_frame(pkt, &h, QPN, 1010, RX_CACK, MRC_NACK_TRIMMED);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.qp_not_ready = 1;
	expect_drops(&want);
	ASSERT_EQ(drain_events(), 0, "no events from rejected NACKs");
}

/*
 * SUSPECTED BUG: a NACK refusing a PSN at or past snd_nxt names a packet
 * that was never sent. abi.h defines MRC_DROP_BAD_ACK as "SACK/NACK acking
 * PSNs never sent" and handle_nack() checks the NACK's cack against
 * snd_nxt, but not its PSN: the program emits a LOSS asking libmrc to
 * resend a PSN it never sent.
 */
TEST_CASE(test_nack_psn_never_sent, "mrc.nack_psn_never_sent")
{
	struct mrc_drop_stats want = { .bad_ack = 1 };
	struct run r;

	/* Boundary: snd_nxt - 1 was sent. */
	setup_qp(1);
	run_nack(TX_NXT - 1, RX_CACK, MRC_NACK_TRIMMED, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 1, "loss of the last sent PSN");
	expect_event(0, MRC_EVT_LOSS, TX_NXT - 1, ACK_EV, MRC_NACK_TRIMMED);
	expect_drops(&no_drops);

	setup_qp(1);
	run_nack(TX_NXT, RX_CACK, MRC_NACK_TRIMMED, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 0, "no LOSS for PSN snd_nxt (never sent)");
	expect_drops(&want);

	setup_qp(1);
	run_nack(TX_NXT + 1000, RX_CACK, MRC_NACK_NO_BITMAP, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(drain_events(), 0, "no LOSS for PSN snd_nxt + 1000 (never sent)");
	expect_drops(&want);
}

/* ====================================================================== */
/* Tests: event ring problems                                             */
/* ====================================================================== */

TEST_CASE(test_ring_missing, "mrc.ring_missing")
{
	struct sack_spec s = sspec(1009, 0);
	/* Once per SACK: the first WRITE it cannot report stops the retiring. */
	struct mrc_drop_stats want = { .ring_full = 1 };
	struct mrc_qp_info q;
	__u32 zero = 0;
	struct run r;

	/* No ring at the QP's context. */
	setup_qp(1);
	ASSERT_EQ(bpf_map_delete_elem(MFD(mrc_events), &zero), 0, "remove ring");
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "SACK still applied");
	/* No ring, no retirement: the completion waits for a ring (issue 16). */
	ASSERT_EQ(tx.wr_head, 0, "WRITEs not retired without a ring");
	run_nack(1020, RX_CACK, MRC_NACK_TRIMMED, &r);
	expect_xdp_drop(&r);
	want.ring_full = 3;
	expect_drops(&want);
	ASSERT_EQ(drain_events(), 0, "nothing in the detached ring");

	/* A context index past the array. */
	setup_qp(1);
	get_qp(&q);
	q.ctx = MRC_MAX_CTX;
	put_qp(&q);
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	want.ring_full = 1;
	expect_drops(&want);
	ASSERT_EQ(drain_events(), 0, "nothing in ring 0");
}

/*
 * A ring that really fills: records of 8 + 24 bytes, and the kernel keeps
 * the producer strictly less than the ring's size ahead of the consumer,
 * so 1 MiB holds 32767 of them; send 786 more than fit. Fatal NACKs fill
 * it: one NACK acts per send of a PSN, a fatal one always reports.
 */
TEST_CASE(test_ring_full, "mrc.ring_full")
{
	const __u32 fits = (MRC_CTX_RING_BYTES - 1) / (8 + sizeof(struct mrc_event));
	const __u32 repeat = fits + 786;
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;
	int n;

	setup_qp(1);
	len = nack_frame(pkt, &h, QPN, 1010, RX_CACK, MRC_NACK_REMOTE_ACCESS);
	run_prog(bpf_program__fd(skel->progs.mrc_xdp_rx), pkt, len, repeat, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(read_drops().ring_full, repeat - fits, "drops.ring_full");
	ASSERT_EQ(read_qp_stats(SLOT).rx_nack, repeat, "qp_stats.rx_nack");
	n = drain_events();
	ASSERT_EQ(n, fits, "events that fit");
	expect_event(0, MRC_EVT_QP_FATAL, 1010, ACK_EV, MRC_NACK_REMOTE_ACCESS);
	/* Drained, the ring takes events again. */
	run_nack(1010, RX_CACK, MRC_NACK_TRIMMED, &r);
	ASSERT_EQ(drain_events(), 1, "event after draining");
	ASSERT_EQ(read_drops().ring_full, repeat - fits, "no new ring_full");
}

/* ====================================================================== */
/* Information: cost of one SACK                                          */
/* ====================================================================== */

TEST_CASE(test_perf_sack, "mrc.perf_sack")
{
	struct sack_spec s = sspec(1009, 0x7FCULL);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	/* As in service: the trigger PSN has a send-log record (feedback runs). */
	s.psn = 1020;
	put_rec(s.psn, 0, 1, 0, mono_ns());
	len = sack_frame(pkt, &h, &s);
	run_prog(bpf_program__fd(skel->progs.mrc_xdp_rx), pkt, len, 100000, &r);
	expect_xdp_drop(&r);
	printf("ns per SACK: %u\n", r.duration);
	fflush(stdout);
	drain_events();
}
