// SPDX-License-Identifier: GPL-2.0
/*
 * Each QP's state is an entry of its owner's maps (bpf/mrc/maps.h,
 * user/common/qpmaps.h): mrc_rx, mrc_tx and mrc_qp_evs hold, at the QP's
 * slot, a block of entries libmrc created, shared with its other QPs, and
 * mrc_qp_info.state_idx names the QP's; mrc_cc_view holds a window's view,
 * a one-entry map. A slot whose QP record is there but whose state map is
 * not, or names no entry of it (a QP being created or torn down, a wrong
 * index) is no QP to XDP: its packets are dropped and counted; a map
 * swapped for a fresh one is what the next packet sees; and a packet of
 * one QP never touches its neighbour's entry.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "mrc_xdp_test.h"

/* Take the test QP's map out of an outer map (as mrc_qpmaps_remove does). */
static void remove_state(int outer_fd)
{
	__u32 slot = SLOT;

	ASSERT_EQ(bpf_map_delete_elem(outer_fd, &slot), 0, "remove a state map");
	ASSERT_EQ(mrc_qpmaps_open(outer_fd, SLOT), -ENOENT, "the slot holds none");
}

/* The test QP's entry of a map by fd (the old map, no longer in the outer map). */
static void read_entry(int fd, void *value, const char *what)
{
	__u32 key = fx_idx_of(SLOT);

	ASSERT_EQ(bpf_map_lookup_elem(fd, &key, value), 0, what);
}

TEST_CASE(test_state_missing_counted, "mrc.qp_state_missing_counted")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 256);
	struct sack_spec s = sspec(1009, 0);
	struct mrc_drop_stats want = {};
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	/* DATA for a QP in mrc_qps without its mrc_rx map. */
	setup_qp(1);
	remove_state(MFD(mrc_rx));
	len = data_frame(pkt, &h, &d);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.unknown_qp = 1;
	expect_drops(&want);
	ASSERT_EQ(read_qp_stats(SLOT).rx_data, 0, "nothing placed");

	/* A SACK for a QP without its mrc_tx map. */
	setup_qp(1);
	remove_state(MFD(mrc_tx));
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	want.unknown_qp = 1;
	expect_drops(&want);
	ASSERT_EQ(read_qp_stats(SLOT).rx_sack, 0, "the SACK judged nothing");
	ASSERT_EQ(drain_events(), 0, "and completed nothing");
}

/* TC: a QP without its EV table or tx state is not sprayed, nor stamped. */
TEST_CASE(test_state_missing_tc, "mrc.qp_state_missing_tc_untouched")
{
	static const __u32 ev[] = { 0x1111, 0x2222 };
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	len = tc_data_psn(pkt, &h, TC_PSN, 0);
	run_tc(pkt, len, &r);
	expect_stamped(&r, pkt, len, 0x1111, 0);	/* with its maps: sprayed */

	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	remove_state(MFD(mrc_qp_evs));
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);

	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	remove_state(MFD(mrc_tx));
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 0, "nothing stamped");
}

/* A window with no view (its process gave it back): SACKs still count. */
TEST_CASE(test_view_missing, "mrc.cc_view_missing_sack_processed")
{
	struct sack_spec s = sspec(1009, 0);
	struct mrc_qp_info q;
	struct run r;

	setup_qp(1);
	get_qp(&q);
	q.cc_slot = FX_CC_VIEWS + 1;	/* window FX_CC_VIEWS: no view */
	put_qp(&q);
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	expect_drops(&no_drops);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "the SACK moved snd_una");
	ASSERT_EQ(mrc_qpmaps_open(MFD(mrc_cc_view), FX_CC_VIEWS), -ENOENT,
		  "no view appeared");
	ASSERT_EQ(read_ctl().cc_wakeups, 0, "nobody woken");
}

/*
 * mrc_tx and mrc_rx swapped for fresh maps (a new QP on the slot): the
 * next SACK and DATA see the new ones, the old ones are left alone.
 */
TEST_CASE(test_state_swap_seen, "mrc.qp_state_swap_seen")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 256);
	struct mrc_drop_stats want = {};
	struct sack_spec s = sspec(1009, 0);
	static struct mrc_tx_state old_tx;
	struct mrc_rx_state rx, old_rx;
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	int old_fd;
	size_t len;
	struct run r;

	setup_qp(1);
	get_tx(&tx);
	old_fd = mrc_qpmaps_open(MFD(mrc_tx), SLOT);
	if (!ASSERT_TRUE(old_fd >= 0, "the old mrc_tx map"))
		return;
	remove_state(MFD(mrc_tx));
	put_tx(&tx);		/* a fresh map, the same state */
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "the new map's snd_una moved");
	read_entry(old_fd, &old_tx, "read the old mrc_tx");
	ASSERT_EQ(old_tx.snd_una, TX_UNA, "the old map's did not");
	close(old_fd);

	/* The new mrc_rx has PSN RX_CACK + 1 placed already: a duplicate. */
	setup_qp(1);
	get_rx(&rx);
	old_fd = mrc_qpmaps_open(MFD(mrc_rx), SLOT);
	if (!ASSERT_TRUE(old_fd >= 0, "the old mrc_rx map"))
		return;
	remove_state(MFD(mrc_rx));
	rx.cack = RX_CACK + 1;
	put_rx(&rx);
	len = data_frame(pkt, &h, &d);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.duplicate = 1;
	expect_drops(&want);
	get_rx(&rx);
	ASSERT_EQ(rx.sack_pending, 1, "the new map owes a SACK");
	read_entry(old_fd, &old_rx, "read the old mrc_rx");
	ASSERT_EQ(old_rx.sack_pending, 0, "the old one does not");
	ASSERT_EQ(old_rx.cack, RX_CACK, "and is as it was");
	close(old_fd);
}

/* The neighbour's entries, filled with a pattern nobody else writes. */
static void fill_neighbour(struct mrc_rx_state *rx, struct mrc_tx_state *t)
{
	__u32 idx = fx_idx_of(FX_NEIGHBOUR_SLOT), slot = FX_NEIGHBOUR_SLOT;

	memset(rx, 0xa5, sizeof(*rx));
	memset(t, 0x5a, sizeof(*t));
	ASSERT_EQ(mrc_qp_state_write(MFD(mrc_rx), slot, idx, rx, sizeof(*rx)), 0,
		  "the neighbour's rx entry");
	ASSERT_EQ(mrc_qp_state_write(MFD(mrc_tx), slot, idx, t, sizeof(*t)), 0,
		  "the neighbour's tx entry");
}

/*
 * Two QPs of one owner share the block (the fixture's neighbour has entry
 * 0, the test QP entry 1): DATA and a SACK of the test QP change its
 * entry, and the neighbour's stays byte for byte as it was.
 */
TEST_CASE(test_state_block_neighbours, "mrc.qp_state_block_neighbours")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 256);
	struct sack_spec s = sspec(1009, 0);
	static struct mrc_tx_state want_tx, got_tx;
	struct mrc_rx_state want_rx, got_rx, rx;
	__u32 nslot = FX_NEIGHBOUR_SLOT, nidx;
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	nidx = fx_idx_of(nslot);
	ASSERT_TRUE(fx_idx_of(SLOT) != nidx, "two entries");
	ASSERT_EQ(mrc_qpmaps_open(MFD(mrc_rx), SLOT) >= 0, 1, "the test QP's block");
	fill_neighbour(&want_rx, &want_tx);
	/* A duplicate, so that XDP writes the entry (it owes a SACK). */
	get_rx(&rx);
	rx.cack = RX_CACK + 1;
	put_rx(&rx);
	len = data_frame(pkt, &h, &d);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	get_rx(&rx);
	ASSERT_EQ(rx.sack_pending, 1, "the DATA reached the test QP's entry");
	run_sack(&s, &r);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, 1010, "the SACK moved the test QP's snd_una");
	ASSERT_EQ(mrc_qp_state_read(MFD(mrc_rx), nslot, nidx, &got_rx, sizeof(got_rx)), 0,
		  "read the neighbour's rx");
	ASSERT_EQ(mrc_qp_state_read(MFD(mrc_tx), nslot, nidx, &got_tx, sizeof(got_tx)), 0,
		  "read the neighbour's tx");
	ASSERT_TRUE(!memcmp(&got_rx, &want_rx, sizeof(got_rx)), "the neighbour's rx untouched");
	ASSERT_TRUE(!memcmp(&got_tx, &want_tx, sizeof(got_tx)), "the neighbour's tx untouched");
}

/*
 * A QP record naming an entry past its block (a corrupt or hostile
 * mrc_qps write): DATA and SACKs are counted unknown_qp drops that change
 * nothing, TC leaves the packet alone.
 */
TEST_CASE(test_state_entry_past_block, "mrc.qp_state_entry_past_block")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 256);
	static const __u32 ev[] = { 0x1111, 0x2222 };
	struct sack_spec s = sspec(1009, 0);
	struct mrc_drop_stats want = {};
	struct mrc_qp_info q;
	struct hdrs h = rx4(), th = tx4();
	__u32 slot = SLOT;
	__u8 pkt[PKT_MAX];
	size_t len;
	struct run r;

	setup_qp(1);
	get_qp(&q);
	q.state_idx = 1u << 20;	/* the block has a handful */
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_qps), &slot, &q, BPF_ANY), 0,
		  "a record past the block");
	len = data_frame(pkt, &h, &d);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.unknown_qp = 1;
	expect_drops(&want);
	run_sack(&s, &r);
	expect_xdp_drop(&r);
	want.unknown_qp = 2;
	expect_drops(&want);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, TX_UNA, "the SACK moved nothing");
	ASSERT_EQ(read_qp_stats(SLOT).rx_data, 0, "nothing placed");

	setup_tc(MRC_EVF_UDP, ev, NULL, 2);
	get_qp(&q);
	q.state_idx = 1u << 20;
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_qps), &slot, &q, BPF_ANY), 0,
		  "a record past the block");
	len = tc_data_psn(pkt, &th, TC_PSN, 0);
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 0, "nothing stamped");
}
