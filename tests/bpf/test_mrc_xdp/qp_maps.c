// SPDX-License-Identifier: GPL-2.0
/*
 * The per-QP inner maps (bpf/mrc/ev_log.h, user/common/qpmaps.h): a QP's
 * send log sized by its window, its per-EV counters by its EV count. A
 * small log reuses its records sooner, and a record of a newer PSN is
 * never taken for the older one; an EV index past the counters and a QP
 * without inner maps skip the bookkeeping, counted in ev_maps_missing,
 * and the packet goes on as it would.
 */
#include <errno.h>
#include <unistd.h>

#include "mrc_xdp_test.h"

#define SMALL_WINDOW	128

/* Entries of the inner map an outer map holds at the test QP's slot. */
static __u32 inner_entries(int outer_fd)
{
	int fd = mrc_qpmaps_open(outer_fd, SLOT);
	__u32 n;

	if (fd < 0)
		return 0;
	n = mrc_qpmaps_entries(fd);
	close(fd);
	return n;
}

static __u64 maps_missing(void)
{
	return read_qp_stats(SLOT).ev_maps_missing;
}

/* TC sends psn and stamps it with EV value `sport`. */
static void send_psn(__u32 psn, __u16 sport)
{
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	size_t len = tc_data_psn(pkt, &h, psn, 0);
	struct run r;

	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, sport, 0);
}

/*
 * Window 128: PSN p and p + 128 share one record, the newer send takes it
 * over; a SACK whose trigger is p then judges no path (the record is not
 * about p), one whose trigger is p + 128 credits the EV that carried it.
 */
TEST_CASE(test_qpmaps_small_window_log, "mrc.qpmaps_small_window_log")
{
	static const __u32 ev[] = { 0x1111, 0x2222 };
	static struct mrc_tx_state tx;
	const __u32 p = 1010, q = p + SMALL_WINDOW;
	struct mrc_send_rec rec;
	struct run r;
	int n, used = 0;

	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	publish_qp_maps(SLOT, SMALL_WINDOW, 2);
	ASSERT_EQ(inner_entries(MFD(mrc_send_log)), SMALL_WINDOW, "log of 128 records");
	ASSERT_EQ(inner_entries(MFD(mrc_ev_stats)), 2, "XDP's counters: 2 EVs");
	ASSERT_EQ(inner_entries(MFD(mrc_ev_tx)), 2, "TC's counters: 2 EVs");
	get_tx(&tx);
	tx.snd_nxt = q + 10;		/* both sends in flight */
	put_tx(&tx);

	send_psn(p, 0x1111);
	rec = get_rec(p);
	ASSERT_EQ(rec.psn, p, "p logged");
	ASSERT_EQ(rec.ev_idx, 0, "on EV 0");
	send_psn(q, 0x2222);
	rec = get_rec(p);
	ASSERT_EQ(rec.psn, q, "p + 128 took p's record");
	ASSERT_EQ(rec.ev_idx, 1, "on EV 1");
	n = read_log_of(SLOT, &log_buf);
	ASSERT_EQ(n, SMALL_WINDOW, "the whole log read");
	for (int i = 0; i < n; i++)
		used += log_buf.rec[i].psn != 0;
	ASSERT_EQ(used, 1, "one record used for both sends");
	ASSERT_EQ(log_buf.rec[p % SMALL_WINDOW].psn, q, "record p % 128");

	/* The stale trigger p: consumed, no EV credited. */
	run_trigger_sack(p, MRC_M_SKIP_ONCE, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(ev_ctr(0).acked + ev_ctr(0).ecn, 0, "EV 0 not credited for p");
	ASSERT_EQ(ev_ctr(1).acked + ev_ctr(1).ecn, 0, "EV 1 not blamed for p");
	/* The live trigger p + 128: its EV. */
	run_trigger_sack(q, MRC_M_NONE, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(ev_ctr(1).acked, 1, "EV 1 acked for p + 128");
	ASSERT_EQ(ev_ctr(1).packets, 1, "EV 1 sent one packet");
	ASSERT_EQ(ev_ctr(0).packets, 1, "EV 0 sent one packet");
	ASSERT_EQ(maps_missing(), 0, "nothing missing");
	expect_drops(&no_drops);
}

/*
 * Counters for 8 EVs: a send record naming EV 200 (no such counter) is
 * acked, resent and NACKed without a crash, counted, and the counters of
 * the 8 EVs stay as they were; TC stamping an EV past the counters (a
 * table longer than its counters) still sends, counted.
 */
TEST_CASE(test_qpmaps_ev_past_counters, "mrc.qpmaps_ev_past_counters")
{
	static const __u32 ev[16] = { 0x1001, 0x1002, 0x1003, 0x1004, 0x1005,
				      0x1006, 0x1007, 0x1008, 0x1009, 0x100a,
				      0x100b, 0x100c, 0x100d, 0x100e, 0x100f, 0x1010 };
	struct run r;
	__u32 i;

	setup_tc(MRC_EVF_UDP, ev, NULL, 8);
	publish_qp_maps(SLOT, 1024, 8);
	ASSERT_EQ(inner_entries(MFD(mrc_ev_stats)), 8, "XDP's counters: 8 EVs");
	ASSERT_EQ(inner_entries(MFD(mrc_send_log)), 1024, "log of 1024 records");

	put_rec(1010, 200, 1, 0, mono_ns() - 1000000);
	run_trigger_sack(1010, MRC_M_SKIP_ONCE, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(maps_missing(), 1, "EV 200's counters missing: counted");
	for (i = 0; i < 8; i++)
		ASSERT_EQ(ev_ctr(i).acked + ev_ctr(i).ecn, 0, "no other EV credited");
	expect_drops(&no_drops);

	/* A table of 16 over counters of 8: EVs 8-15 send, uncounted. */
	setup_tc(MRC_EVF_UDP, ev, NULL, 16);
	publish_qp_maps(SLOT, 1024, 8);
	for (i = 0; i < 16; i++) {
		send_psn(2000 + i, (__u16)ev[i]);
	}
	ASSERT_EQ(maps_missing(), 8, "8 sends past the counters: counted");
	for (i = 0; i < 8; i++)
		ASSERT_EQ(ev_ctr(i).packets, 1, "EVs 0-7 counted once each");
	ASSERT_EQ(get_rec(2015).ev_idx, 15, "the log still names EV 15");
}

/*
 * A QP whose EV table was never published has no inner maps: TC leaves
 * its packets as they are (no EV, no record), XDP consumes its SACKs
 * without path feedback; each skip counted, nothing dropped.
 */
TEST_CASE(test_qpmaps_unpublished, "mrc.qpmaps_unpublished")
{
	static const __u32 ev[] = { 0x1111, 0x2222 };
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	__u64 missing;
	size_t len;
	struct run r;

	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	remove_log_maps(SLOT);
	ASSERT_EQ(mrc_qpmaps_open(MFD(mrc_send_log), SLOT), -ENOENT, "no send log");
	ASSERT_EQ(mrc_qpmaps_open(MFD(mrc_ev_stats), SLOT), -ENOENT, "no counters");

	len = tc_data_psn(pkt, &h, TC_PSN, 0);
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);
	ASSERT_EQ(maps_missing(), 1, "TC: no log, counted");
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 0, "nothing stamped");

	run_trigger_sack(1010, MRC_M_SKIP_ONCE, &r);
	expect_xdp_drop(&r);
	/* Each look at the log counts (feedback, then the loss scan). */
	missing = maps_missing();
	ASSERT_TRUE(missing > 1, "XDP: no log, counted");
	ASSERT_EQ(read_qp_stats(SLOT).rx_sack, 1, "the SACK was consumed");
	expect_drops(&no_drops);

	/* Published again: fresh, zeroed maps, and TC stamps. */
	publish_qp_maps(SLOT, 1024, 2);
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, 0x1111, 0);
	ASSERT_EQ(get_rec(TC_PSN).psn, TC_PSN, "logged after publishing");
	ASSERT_EQ(maps_missing(), missing, "nothing more missing");
}
