// SPDX-License-Identifier: GPL-2.0
/*
 * TC spraying (mrc_tc_tx on our DATA): the EV rotation over `perm` (a
 * new permutation at each wrap), EV states in and out of the rotation,
 * resends avoiding the EV that lost them, the send log, the EV stamped as
 * UDP source port (STEV in the IPv6 flow label) with valid checksums,
 * and everything not ours left untouched.
 */
#include "mrc_xdp_test.h"

/* ====================================================================== */
/* Tests: TC egress, the EV rotation                                      */
/* ====================================================================== */

/* Put the cursor at `next` and the rotation order back to the identity. */
static void rewind_rotation(__u32 next)
{
	struct mrc_qp_info q;
	__u32 i;

	get_qp(&q);
	get_evs(&evs_buf);
	evs_buf.next = next;
	for (i = 0; i < q.n_evs && i < MRC_MAX_EVS; i++)
		evs_buf.perm[i] = (__u8)i;
	put_evs(&evs_buf);
}

/* perm[0..n-1] holds every index below n exactly once; perm[n..] untouched. */
static int expect_perm(const struct mrc_qp_evs *e, __u32 n)
{
	int seen[MRC_MAX_EVS] = { 0 }, ok = 1;
	__u32 i;

	for (i = 0; i < n; i++) {
		if (e->perm[i] >= n) {
			ok = ASSERT_TRUE(0, "perm entry below n_evs") && ok;
			fprintf(stderr, "  (perm[%u] = %u, n %u)\n", i, e->perm[i], n);
			continue;
		}
		seen[e->perm[i]]++;
	}
	for (i = 0; i < n; i++)
		if (seen[i] != 1) {
			ok = ASSERT_EQ(seen[i], 1, "index appears once in perm") && ok;
			fprintf(stderr, "  (index %u)\n", i);
		}
	for (i = n; i < MRC_MAX_EVS; i++)
		if (e->perm[i] != PERM_MARK) {
			ok = ASSERT_EQ(e->perm[i], PERM_MARK, "perm past n_evs untouched") && ok;
			break;
		}
	return ok;
}

/*
 * Identity order first: EV[0], EV[1], EV[2]. The wrap redraws the order,
 * so the next pass is some permutation: every EV exactly once.
 */
TEST_CASE(test_tc_rotation_ipv4, "mrc.tc_rotation_ipv4")
{
	static const __u32 ev[] = { 0x1111, 0x2222, 0x3333 };
	int count[3] = { 0 };
	struct mrc_qp_evs evs;
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	size_t i, len;
	struct run r;

	setup_tc(MRC_EVF_UDP, ev, NULL, 3);
	len = tc_data_frame(pkt, &h);
	if (!ASSERT_TRUE(udp_csum_ok(pkt), "input UDP checksum valid"))
		return;
	for (i = 0; i < 3; i++) {
		int before = test_state.failed;

		run_tc(pkt, len, &r);
		expect_stamped(&r, pkt, len, (__u16)ev[i], 0);
		if (test_state.failed != before)
			fprintf(stderr, "  (at packet %zu)\n", i);
	}
	for (i = 0; i < 3; i++) {
		int k;

		run_tc(pkt, len, &r);
		k = sport_index(&r, pkt, ev, 3);
		if (!ASSERT_TRUE(k >= 0, "second pass: sport is one of the EVs"))
			continue;
		expect_stamped(&r, pkt, len, (__u16)ev[k], 0);
		count[k]++;
	}
	ASSERT_TRUE(count[0] == 1 && count[1] == 1 && count[2] == 1,
		    "second pass uses every EV exactly once");
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 6, "qp_stats.tx_stamped");
	get_evs(&evs);
	ASSERT_EQ(evs.next, 6, "rotation cursor");
	ASSERT_EQ(evs.shuffles, 2, "one reshuffle per wrap");
	expect_drops(&no_drops);

	/* A socket port that already equals the EV: stamped, checksum kept. */
	rewind_rotation(0);
	h.sport = 0x1111;
	len = tc_data_frame(pkt, &h);
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 7, "qp_stats.tx_stamped");
}

/*
 * The rotation walks perm exactly: perm 2,0,1 gives EV[2], EV[0], EV[1].
 * The wrap (after the packet at the last position) redraws perm; every
 * later pass follows the new perm, which stays a permutation of 0..n-1
 * and leaves perm[n..] alone.
 */
TEST_CASE(test_tc_perm_order, "mrc.tc_perm_order")
{
	static const struct mrc_ev_entry tab3[] = {
		ACT(0x1000, 1), ACT(0x1001, 1), ACT(0x1002, 1),
	};
	static const __u8 perm3[] = { 2, 0, 1 };
	struct mrc_ev_entry tab16[16];
	struct mrc_qp_evs evs;
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX], first[16];
	size_t len;
	__u32 i, pass, changed = 0;
	struct run r;

	setup_table(MRC_EVF_UDP, tab3, 3, perm3);
	len = tc_data_frame(pkt, &h);
	for (i = 0; i < 3; i++) {
		run_tc(pkt, len, &r);
		expect_stamped(&r, pkt, len, (__u16)tab3[perm3[i]].ev, 0);
		get_evs(&evs);
		ASSERT_EQ(evs.next, i + 1, "cursor");
		ASSERT_EQ(evs.shuffles, i == 2 ? 1 : 0, "reshuffled only at the wrap");
	}
	expect_perm(&evs, 3);
	for (pass = 0; pass < 8; pass++) {
		__u8 p[3];

		get_evs(&evs);
		memcpy(p, evs.perm, 3);
		for (i = 0; i < 3; i++) {
			int before = test_state.failed;

			run_tc(pkt, len, &r);
			expect_stamped(&r, pkt, len, (__u16)tab3[p[i]].ev, 0);
			if (test_state.failed != before)
				fprintf(stderr, "  (pass %u, packet %u, perm %u %u %u)\n",
					pass, i, p[0], p[1], p[2]);
		}
		get_evs(&evs);
		ASSERT_EQ(evs.shuffles, pass + 2, "shuffles counts the wraps");
		expect_perm(&evs, 3);
	}

	/* 16 EVs: each pass follows its perm, and the order does change. */
	for (i = 0; i < 16; i++) {
		tab16[i].ev = 0x2000 + i;
		tab16[i].plane = 1;
		tab16[i].state = MRC_EV_GOOD;
		tab16[i].flags = MRC_EV_F_ACTIVE;
	}
	setup_table(MRC_EVF_UDP, tab16, 16, NULL);
	get_evs(&evs);
	memcpy(first, evs.perm, 16);
	for (pass = 0; pass < 6; pass++) {
		__u8 p[16];
		int before = test_state.failed;

		get_evs(&evs);
		memcpy(p, evs.perm, 16);
		if (memcmp(p, first, 16))
			changed++;
		for (i = 0; i < 16; i++) {
			run_tc(pkt, len, &r);
			ASSERT_EQ(get16(r.out + l4_off(pkt)), 0x2000 + p[i], "EV of perm[pos]");
		}
		get_evs(&evs);
		ASSERT_EQ(evs.shuffles, pass + 1, "shuffles");
		expect_perm(&evs, 16);
		if (test_state.failed != before) {
			fprintf(stderr, "  (16 EVs, pass %u)\n", pass);
			break;
		}
	}
	ASSERT_TRUE(changed >= 4, "reshuffles change the order (16! orders)");
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 96, "qp_stats.tx_stamped");
}

/*
 * Only ACTIVE entries in GOOD carry data. A SKIP entry loses one turn and
 * is GOOD again; ASSUMED_BAD and DENIED entries and backups (not ACTIVE,
 * whatever their state) are passed over and left as they are.
 */
TEST_CASE(test_tc_ev_states, "mrc.tc_ev_states")
{
	static const struct mrc_ev_entry tab[] = {
		ACT(0x1111, 1),				/* 0 */
		BAK(0x2222, 1, MRC_EV_GOOD),		/* 1 backup */
		ACT_S(0x3333, 1, MRC_EV_ASSUMED_BAD),	/* 2 */
		ACT_S(0x4444, 1, MRC_EV_DENIED),	/* 3 */
		ACT_S(0x5555, 1, MRC_EV_SKIP),		/* 4 */
		BAK(0x6666, 1, MRC_EV_SKIP),		/* 5 backup in SKIP */
	};
	static const __u8 perm[] = { 4, 1, 2, 3, 5, 0 };
	static const __u32 ev[] = { 0x1111, 0x2222, 0x3333, 0x4444, 0x5555, 0x6666 };
	static const __u16 all_bad[] = { MRC_EV_ASSUMED_BAD, MRC_EV_DENIED,
					 MRC_EV_ASSUMED_BAD, MRC_EV_DENIED };
	int count[6] = { 0 };
	struct mrc_qp_evs evs;
	struct mrc_send_rec rec;
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	__u32 i;
	struct run r;

	setup_table(MRC_EVF_UDP, tab, 6, perm);
	len = tc_data_frame(pkt, &h);
	/* 4 SKIP (-> GOOD), 1 backup, 2 bad, 3 denied, 5 backup, 0 GOOD. */
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, 0x1111, 0);
	get_evs(&evs);
	/* The cursor moves one position a packet; the walk past unusable
	 * entries stays in the cursor's plane column without moving it. */
	ASSERT_EQ(evs.next, 1, "one position per packet");
	ASSERT_EQ(evs.ev[4].state, MRC_EV_GOOD, "SKIP entry lost its turn, now GOOD");
	ASSERT_EQ(evs.ev[5].state, MRC_EV_SKIP, "a backup's SKIP is not consumed");

	for (i = 0; i < 240; i++) {
		int k;

		run_tc(pkt, len, &r);
		k = sport_index(&r, pkt, ev, 6);
		if (!ASSERT_TRUE(k >= 0, "sport is an EV of the table"))
			break;
		count[k]++;
	}
	ASSERT_EQ(count[1] + count[2] + count[3] + count[5], 0,
		  "backups, ASSUMED_BAD and DENIED never used");
	/*
	 * Both usable entries carry a fair share over many passes. Not one
	 * each per pass: a cursor on an unusable entry walks on to the next
	 * usable one, so each redrawn pass splits unevenly; only the long run
	 * is fair (binomial, p = 1/2: below 80 of 240 is > 5 sigma away).
	 */
	ASSERT_EQ(count[0] + count[4], 240, "every packet on a usable entry");
	ASSERT_TRUE(count[0] >= 80 && count[4] >= 80,
		    "the two usable entries share the load");
	get_evs(&evs);
	for (i = 0; i < 6; i++) {
		char what[48];

		snprintf(what, sizeof(what), "ev[%u] flags unchanged", i);
		ASSERT_EQ(evs.ev[i].flags, tab[i].flags, what);
	}
	ASSERT_EQ(evs.ev[0].state, MRC_EV_GOOD, "ev[0] GOOD");
	ASSERT_EQ(evs.ev[1].state, MRC_EV_GOOD, "ev[1] backup GOOD");
	ASSERT_EQ(evs.ev[2].state, MRC_EV_ASSUMED_BAD, "ev[2] still ASSUMED_BAD");
	ASSERT_EQ(evs.ev[3].state, MRC_EV_DENIED, "ev[3] still DENIED");
	ASSERT_EQ(evs.ev[4].state, MRC_EV_GOOD, "ev[4] GOOD after its skip");
	ASSERT_EQ(evs.ev[5].state, MRC_EV_SKIP, "ev[5] backup still SKIP");
	for (i = 1; i < 6; i++) {
		char what[48];

		if (i == 4)
			continue;
		snprintf(what, sizeof(what), "ev_stats[%u].packets", i);
		ASSERT_EQ(ev_ctr(i).packets, 0, what);
	}
	ASSERT_EQ(ev_ctr(0).packets + ev_ctr(4).packets, 241, "packets counted on the used EVs");
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 241, "qp_stats.tx_stamped");

	/* No usable EV: the socket's port stays, nothing is logged. */
	setup_tc(MRC_EVF_UDP, ev, all_bad, 4);
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 0, "qp_stats.tx_stamped");
	get_evs(&evs);
	ASSERT_EQ(evs.next, 2, "next_ev gives up after two columns of 16");
	rec = get_rec(TC_PSN);
	ASSERT_EQ(rec.psn, 0, "no send-log record without an EV");
	ASSERT_EQ(rec.sent_ns, 0, "no send-log record without an EV");

	/* Only backups: the same. */
	{
		static const struct mrc_ev_entry baks[] = {
			BAK(0x7001, 1, MRC_EV_GOOD), BAK(0x7002, 1, MRC_EV_GOOD),
		};

		setup_table(MRC_EVF_UDP, baks, 2, NULL);
		run_tc(pkt, len, &r);
		expect_untouched(&r, pkt, len, TC_ACT_OK);
	}
}

/*
 * A retransmission (BTH RETX) of a PSN whose send-log record names EV
 * index k never goes out on k. The record must be about that PSN: a record
 * of another PSN in the same ring slot, or no RETX flag, avoids nothing.
 */
TEST_CASE(test_tc_retx_avoids_lost_ev, "mrc.tc_retx_avoids_lost_ev")
{
	static const __u32 ev[] = { 0x1111, 0x2222 };
	struct mrc_send_rec rec;
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	__u32 i;
	struct run r;

	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	len = tc_data_psn(pkt, &h, TC_PSN, MRC_BTH_F_RETX);
	for (i = 0; i < 40; i++) {
		__u8 k = (__u8)((i * 5 / 3) % 2);	/* 0 1 1 0 0 0 1 1 ... */
		int before = test_state.failed;

		put_rec(TC_PSN, k, 1, 0, 1);
		run_tc(pkt, len, &r);
		expect_stamped(&r, pkt, len, (__u16)ev[1 - k], 0);
		rec = get_rec(TC_PSN);
		ASSERT_EQ(rec.ev_idx, 1 - k, "log names the EV of the resend");
		ASSERT_EQ(rec.flags, MRC_BTH_F_RETX, "log marks the resend");
		if (test_state.failed != before) {
			fprintf(stderr, "  (resend %u, lost on %u)\n", i, k);
			break;
		}
	}

	/* The slot's record is about PSN + 4096: nothing to avoid. */
	put_rec_as(TC_PSN, TC_PSN + MRC_WINDOW_MAX, 0, 1, 0, 1);
	rewind_rotation(0);
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, 0x1111, 0);

	/* Not a resend: the record of an earlier send avoids nothing. */
	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	put_rec(TC_PSN, 0, 1, 0, 1);
	len = tc_data_psn(pkt, &h, TC_PSN, 0);
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, 0x1111, 0);
}

/*
 * A resend also avoids the other EVs of the lost EV's path (the spine path
 * discovery labelled): EVs 0 and 1 cross path 1, EVs 2 and 3 path 2;
 * lost on 0, the resend takes 2 or 3, never 1. When only the lost path is
 * left (2 and 3 out of service), another EV of it still beats none.
 */
TEST_CASE(test_tc_retx_avoids_lost_path, "mrc.tc_retx_avoids_lost_path")
{
	static const __u32 ev[] = { 0x1111, 0x2222, 0x3333, 0x4444 };
	static const __u16 down[] = { MRC_EV_GOOD, MRC_EV_GOOD, MRC_EV_ASSUMED_BAD,
				      MRC_EV_ASSUMED_BAD };
	struct mrc_qp_evs *evs = malloc(sizeof(*evs));
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	if (!ASSERT_TRUE(evs != NULL, "memory"))
		return;
	setup_tc(MRC_EVF_UDP, ev, NULL, 4);
	get_evs(evs);
	for (int i = 0; i < 4; i++)
		evs->ev[i].path = (__u8)(1 + i / 2);
	put_evs(evs);
	len = tc_data_psn(pkt, &h, TC_PSN, MRC_BTH_F_RETX);
	for (int i = 0; i < 40; i++) {
		__u16 sport;

		put_rec(TC_PSN, 0, 1, 0, 1);
		run_tc(pkt, len, &r);
		sport = get16(r.out + l4_off(r.out));
		if (!ASSERT_TRUE(sport == 0x3333 || sport == 0x4444,
				 "the resend takes path 2 (EV 2 or 3)")) {
			fprintf(stderr, "  (resend %d went on 0x%x)\n", i, sport);
			break;
		}
	}

	setup_tc(MRC_EVF_UDP, ev, down, 4);
	get_evs(evs);
	for (int i = 0; i < 4; i++)
		evs->ev[i].path = (__u8)(1 + i / 2);
	put_evs(evs);
	put_rec(TC_PSN, 0, 1, 0, 1);
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, 0x2222, 0);
	free(evs);
}

/*
 * Each stamped DATA packet leaves a send-log record at psn % 4096: the
 * 32-bit PSN (extended from snd_una), EV index, plane, RETX flag only, and
 * the send time; the EV's packet and byte counters grow.
 */
TEST_CASE(test_tc_send_log, "mrc.tc_send_log")
{
	static const __u32 ev[] = { 0x1111, 0x2222 };
	struct mrc_send_rec rec;
	struct mrc_ev_counters c;
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX], pkt2[PKT_MAX];
	size_t len, len2;
	__u64 t0, t1;
	struct run r;

	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	len = tc_data_psn(pkt, &h, TC_PSN, MRC_BTH_F_ACK_REQ);
	t0 = mono_ns();
	run_tc(pkt, len, &r);
	t1 = mono_ns();
	expect_stamped(&r, pkt, len, 0x1111, 0);
	rec = get_rec(TC_PSN);
	ASSERT_EQ(rec.psn, TC_PSN, "record psn");
	ASSERT_EQ(rec.ev_idx, 0, "record ev_idx");
	ASSERT_EQ(rec.plane, 1, "record plane (lo is plane 1)");
	ASSERT_EQ(rec.flags, 0, "record flags: not a resend (ACK_REQ not kept)");
	ASSERT_TRUE(rec.sent_ns >= t0 && rec.sent_ns <= t1, "sent_ns is the send time");
	c = ev_ctr(0);
	ASSERT_EQ(c.packets, 1, "ev_stats[0].packets");
	ASSERT_EQ(c.bytes, len, "ev_stats[0].bytes (whole frame)");
	ASSERT_EQ(ev_ctr(1).packets, 0, "ev_stats[1].packets");

	/* A resend with TSETH and ACK_REQ: only RETX is recorded. */
	len2 = tc_data_psn(pkt2, &h, TC_PSN + 1,
			   MRC_BTH_F_RETX | MRC_BTH_F_TS | MRC_BTH_F_ACK_REQ);
	run_tc(pkt2, len2, &r);
	expect_stamped(&r, pkt2, len2, 0x2222, 0);
	rec = get_rec(TC_PSN + 1);
	ASSERT_EQ(rec.psn, TC_PSN + 1, "record psn");
	ASSERT_EQ(rec.ev_idx, 1, "record ev_idx");
	ASSERT_EQ(rec.flags, MRC_BTH_F_RETX, "record flags: RETX only");
	ASSERT_TRUE(rec.sent_ns >= t1, "sent_ns");
	c = ev_ctr(1);
	ASSERT_EQ(c.packets, 1, "ev_stats[1].packets");
	ASSERT_EQ(c.bytes, len2, "ev_stats[1].bytes");
	rec = get_rec(TC_PSN);
	ASSERT_EQ(rec.ev_idx, 0, "earlier record kept");
	/* No ACK direction counters from TC. */
	c = ev_ctr(0);
	ASSERT_EQ(c.acked + c.ecn + c.trims + c.losses + c.rtt_samples, 0,
		  "TC counts only packets and bytes");

	/* 32-bit PSNs: the wire's 24 bits extended around snd_una. */
	get_tx(&tx);
	tx.snd_una = 0x01FFFFF0;
	put_tx(&tx);
	len = tc_data_psn(pkt, &h, 0x000005, 0);
	run_tc(pkt, len, &r);
	rec = get_rec(0x02000005);
	ASSERT_EQ(rec.psn, 0x02000005, "PSN past the 24-bit wrap");
	len = tc_data_psn(pkt, &h, 0xFFFFF8, 0);
	run_tc(pkt, len, &r);
	rec = get_rec(0x01FFFFF8);
	ASSERT_EQ(rec.psn, 0x01FFFFF8, "PSN before the 24-bit wrap");
}

/* ====================================================================== */
/* Tests: TC egress, stamping                                             */
/* ====================================================================== */

/*
 * Many EV values, UDP and STEV formats, IPv4 and IPv6: the UDP checksum is
 * valid after every rewrite (each input has a full, valid checksum).
 */
TEST_CASE(test_tc_stamp_checksums, "mrc.tc_stamp_checksums")
{
	static const __u32 evs[] = { 0x00000001, 0x0000FFFF, 0xFFFF0001, 0x80008000,
				     0x12345678, 0xDEADBEEF, 0x0001FFFE, 0x7FFF8235 };
	static const struct { __u8 format; int ipv6; } cases[] = {
		{ MRC_EVF_UDP, 0 }, { MRC_EVF_UDP, 1 }, { MRC_EVF_STEV, 1 }, { MRC_EVF_STEV, 0 },
	};
	__u8 pkt[PKT_MAX];
	size_t c, i, len;
	struct run r;

	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (i = 0; i < sizeof(evs) / sizeof(evs[0]); i++) {
			struct hdrs h = cases[c].ipv6 ? tx6() : tx4();
			int stev6 = cases[c].format == MRC_EVF_STEV && cases[c].ipv6;
			int before = test_state.failed;

			setup_tc(cases[c].format, &evs[i], NULL, 1);
			len = tc_data_frame(pkt, &h);
			run_tc(pkt, len, &r);
			expect_stamped(&r, pkt, len, (__u16)evs[i], stev6);
			if (cases[c].ipv6)
				ASSERT_EQ(get32(r.out + ETH_LEN),
					  stev6 ? 0x60000000u | evs[i] >> 16 : 0x60000000u,
					  "IPv6 word 0: flow label = EV >> 16 (STEV), else 0");
			if (test_state.failed != before) {
				fprintf(stderr, "  (format %u, ipv6 %d, ev 0x%08x)\n",
					cases[c].format, cases[c].ipv6, evs[i]);
				return;
			}
		}
	}
}

/* A rewrite whose checksum comes out as 0 must send 0xffff ("none" is 0). */
TEST_CASE(test_tc_checksum_folds_to_ffff, "mrc.tc_checksum_folds_to_ffff")
{
	static const __u32 ev = 0x1234;
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	size_t len, l4, tail;
	__u16 ulen;
	__u32 s;
	struct run r;

	setup_tc(MRC_EVF_UDP, &ev, NULL, 1);
	len = tc_data_frame(pkt, &h);
	l4 = l4_off(pkt);
	ulen = get16(pkt + l4 + 4);
	tail = len - 2;
	put16(pkt + l4, (__u16)ev);		/* as it will leave */
	put16(pkt + l4 + 6, 0);
	put16(pkt + tail, 0);
	s = csum_add(udp_pseudo_sum(pkt, ulen), pkt + l4, ulen);
	put16(pkt + tail, csum_fold(s));
	ASSERT_EQ(csum_fold(csum_add(udp_pseudo_sum(pkt, ulen), pkt + l4, ulen)), 0,
		  "constructed sum folds to zero");
	put16(pkt + l4, LOCAL_SPORT);		/* as the socket sent it */
	udp_csum_fill(pkt);
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, (__u16)ev, 0);
	ASSERT_EQ(get16(r.out + l4 + 6), 0xffff, "zero checksum sent as 0xffff");
}

TEST_CASE(test_tc_stev_ipv6, "mrc.tc_stev_ipv6")
{
	static const __u32 ev[] = { 0xABCD1234 };
	struct hdrs h = tx6();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_tc(MRC_EVF_STEV, ev, NULL, 1);
	len = tc_data_frame(pkt, &h);
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, 0x1234, 1);
	/* Version 6, tclass 0, flow label 0x0ABCD (the socket's 0x57777 gone). */
	ASSERT_EQ(get32(r.out + ETH_LEN), 0x6000ABCD, "IPv6 word 0 (flow label 0x0ABCD)");
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 1, "qp_stats.tx_stamped");

	/* UDP format on IPv6: flow label 0, whatever the socket chose. */
	setup_tc(MRC_EVF_UDP, ev, NULL, 1);
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, 0x1234, 1);
	ASSERT_EQ(get32(r.out + ETH_LEN), 0x60000000, "IPv6 word 0: flow label 0");

	/* STEV on IPv4: the port only. */
	setup_tc(MRC_EVF_STEV, ev, NULL, 1);
	h = tx4();
	len = tc_data_frame(pkt, &h);
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, 0x1234, 0);
}

TEST_CASE(test_tc_untouched, "mrc.tc_untouched")
{
	static const __u32 ev[] = { 0x1111, 0x2222 };
	struct mrc_qp_evs evs;
	struct sack_spec s = sspec(1009, 0);
	struct mrc_qp_info q;
	struct hdrs h;
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_tc(MRC_EVF_UDP, ev, NULL, 2);

	/* Unknown peer address. */
	h = tx4();
	h.dst = stranger4;
	len = tc_data_frame(pkt, &h);
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);
	h = tx6();
	h.dst = stranger6;
	len = tc_data_frame(pkt, &h);
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);

	/* Known address, another remote QP. */
	{
		struct data_spec d = dspec(MRC_OP_WRITE_ONLY, 2000, 300);

		h = tx4();
		d.dqpn = REMOTE_QPN + 1;
		len = data_frame(pkt, &h, &d);
		run_tc(pkt, len, &r);
		expect_untouched(&r, pkt, len, TC_ACT_OK);
	}

	/* Not MRC: another port. No verdict: the next filter's, or pass. */
	h = tx4();
	h.dport = 9999;
	len = tc_data_frame(pkt, &h);
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, (__u32)TC_ACT_UNSPEC);

	/* Control packets keep the socket's port: a SACK to the peer. */
	h = tx4();
	s.dqpn = REMOTE_QPN;
	s.key = PEER_KEY;
	len = sack_frame(pkt, &h, &s);
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);

	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 0, "qp_stats.tx_stamped");
	get_evs(&evs);
	ASSERT_EQ(evs.next, 0, "rotation cursor untouched");

	/* A QP without EVs, or with a corrupt count. */
	get_qp(&q);
	q.n_evs = 0;
	put_qp(&q);
	h = tx4();
	len = tc_data_frame(pkt, &h);
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);
	q.n_evs = MRC_MAX_EVS + 1;
	put_qp(&q);
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 0, "qp_stats.tx_stamped");
}
