// SPDX-License-Identifier: GPL-2.0
/*
 * TC egress on UDP GSO super-packets (bpf/mrc/tc_gso.h): libmrc's bursts
 * of consecutive DATA packets in one skb, segment i at UDP payload offset
 * i * gso_size. The skb takes one EV (one rotation step, one stamp), every
 * PSN in it is logged with that EV, the counters count its packets; a
 * malformed one is dropped (BAD_GSO) with nothing logged.
 */
#include "mrc_xdp_test.h"

/* A good burst of 4: one EV for the skb, four records, four packets. */
TEST_CASE(test_tc_gso_burst, "mrc.tc_gso_burst")
{
	static const __u32 ev[] = { 0x1111, 0x2222, 0x3333 };
	struct mrc_qp_evs evs;
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX], one[PKT_MAX];
	__u32 seg, hdr_len;
	size_t len;
	struct run r;

	setup_tc(MRC_EVF_UDP, ev, NULL, 3);
	len = gso_frame(pkt, &h, TC_PSN, 4, GSO_OK, 0, -1, &seg);
	hdr_len = (__u32)(l4_off(pkt) + 8);
	run_gso(pkt, len, 4, seg, &r);
	if (!ASSERT_EQ(r.err, 0, "test_run") ||
	    !ASSERT_EQ(r.ret, TC_ACT_OK, "verdict TC_ACT_OK"))
		return;
	ASSERT_EQ(get16(r.out + l4_off(pkt)), 0x1111, "sport = the one EV");
	for (__u32 i = 0; i < 4; i++) {
		struct mrc_send_rec rec = get_rec(TC_PSN + i);

		ASSERT_EQ(rec.psn, TC_PSN + i, "every PSN of the burst logged");
		ASSERT_EQ(rec.ev_idx, 0, "with the burst's EV");
		ASSERT_EQ(rec.plane, 1, "and its plane");
		ASSERT_EQ(rec.flags, 0, "no resend");
		ASSERT_EQ(rec.sent_ns, get_rec(TC_PSN).sent_ns, "one send time");
	}
	ASSERT_EQ(get_rec(TC_PSN + 4).psn, 0, "nothing past the burst logged");
	get_evs(&evs);
	ASSERT_EQ(evs.next, 1, "one rotation step for the skb");
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 4, "tx_stamped counts packets");
	ASSERT_EQ(ev_ctr(0).packets, 4, "EV packets: the segments");
	ASSERT_EQ(ev_ctr(0).bytes, len + 3 * hdr_len,
		  "EV bytes: the wire bytes, headers of every segment");
	ASSERT_EQ(ev_ctr(1).packets, 0, "no other EV used");
	expect_drops(&no_drops);

	/* The next packet, alone, takes the next EV. */
	len = tc_data_psn(one, &h, TC_PSN + 4, 0);
	run_tc(one, len, &r);
	expect_stamped(&r, one, len, 0x2222, 0);
	ASSERT_EQ(get_rec(TC_PSN + 4).ev_idx, 1, "single packet: next EV");
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 5, "tx_stamped");
}

/* A resend inside a burst keeps its RETX mark in its own record only. */
TEST_CASE(test_tc_gso_retx_mark, "mrc.tc_gso_retx_mark")
{
	static const __u32 ev[] = { 0x1111, 0x2222 };
	struct hdrs h = tx6();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;
	__u32 seg;

	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	len = gso_frame(pkt, &h, TC_PSN, 3, GSO_OK, 0, 1, &seg);
	run_gso(pkt, len, 3, seg, &r);
	ASSERT_EQ(r.ret, TC_ACT_OK, "verdict TC_ACT_OK (IPv6)");
	ASSERT_EQ(get_rec(TC_PSN).flags, 0, "segment 0 not a resend");
	ASSERT_EQ(get_rec(TC_PSN + 1).flags, MRC_BTH_F_RETX, "segment 1 a resend");
	ASSERT_EQ(get_rec(TC_PSN + 2).flags, 0, "segment 2 not a resend");
	ASSERT_EQ(get_rec(TC_PSN + 2).psn, TC_PSN + 2, "last segment logged");
}

/*
 * A malformed super-packet: dropped whole (BAD_GSO) before any record,
 * rotation step or counter changes.
 */
static void expect_gso_refused(const __u8 *pkt, size_t len, __u32 segs,
			       __u32 size, const char *what)
{
	struct mrc_drop_stats want = no_drops;
	struct mrc_qp_evs evs;
	struct run r;
	int before = test_state.failed;

	run_gso(pkt, len, segs, size, &r);
	ASSERT_EQ(r.err, 0, "test_run");
	ASSERT_EQ(r.ret, TC_ACT_SHOT, "malformed burst: TC_ACT_SHOT");
	want.bad_gso = 1;
	expect_drops(&want);
	for (__u32 i = 0; i < 6; i++)
		ASSERT_EQ(get_rec(TC_PSN + i).psn, 0, "nothing logged");
	get_evs(&evs);
	ASSERT_EQ(evs.next, 0, "no rotation step");
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 0, "nothing stamped");
	ASSERT_EQ(ev_ctr(0).packets, 0, "no EV counted");
	if (test_state.failed != before)
		fprintf(stderr, "  (case: %s)\n", what);
}

TEST_CASE(test_tc_gso_malformed, "mrc.tc_gso_malformed")
{
	static const __u32 ev[] = { 0x1111, 0x2222 };
	static const struct {
		enum gso_fault fault;
		__u32 seg;
		const char *what;
	} cases[] = {
		{ GSO_PSN_GAP, 2, "PSN gap at segment 2" },
		{ GSO_PSN_GAP, 3, "PSN gap at the last segment" },
		{ GSO_OTHER_QP, 1, "segment 1 to another QP" },
		{ GSO_OTHER_KEY, 3, "segment 3 with another key" },
		{ GSO_NOT_DATA, 1, "segment 1 not DATA" },
	};
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	__u32 seg;
	size_t len;

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		setup_tc(MRC_EVF_UDP, ev, NULL, 2);
		len = gso_frame(pkt, &h, TC_PSN, 4, cases[c].fault, cases[c].seg,
				-1, &seg);
		expect_gso_refused(pkt, len, 4, seg, cases[c].what);
	}

	/* Lengths that do not make gso_segs segments of gso_size. */
	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	len = gso_frame(pkt, &h, TC_PSN, 4, GSO_OK, 0, -1, &seg);
	expect_gso_refused(pkt, len, 5, seg, "one segment more than the bytes");
	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	expect_gso_refused(pkt, len, 3, seg, "one segment fewer than the bytes");
	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	expect_gso_refused(pkt, len, 4, seg - 4, "gso_size not the segments'");
	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	expect_gso_refused(pkt, len, 4, 8, "gso_size below a BTH");
	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	expect_gso_refused(pkt, len, MRC_GSO_BURST_MAX + 1, 16,
			   "more segments than the walk's bound");

	/* The same burst, well formed, passes (the cases above can pass). */
	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	{
		struct run r;

		run_gso(pkt, len, 4, seg, &r);
		ASSERT_EQ(r.ret, TC_ACT_OK, "the good burst passes");
		ASSERT_EQ(get_rec(TC_PSN + 3).psn, TC_PSN + 3, "and is logged");
		expect_drops(&no_drops);
	}
}
