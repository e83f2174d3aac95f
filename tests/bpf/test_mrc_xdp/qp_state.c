// SPDX-License-Identifier: GPL-2.0
/*
 * Each QP's state is a map of its own (bpf/mrc/maps.h, user/common/qpmaps.h):
 * mrc_rx, mrc_tx and mrc_qp_evs hold, at the QP's slot, a one-entry map
 * libmrc created and mapped; mrc_cc_view holds a window's view likewise.
 * A slot whose QP record is there but whose state map is not (a QP being
 * created or torn down) is no QP to XDP: its packets are dropped and
 * counted; and a map swapped for a fresh one is what the next packet sees.
 */
#include <errno.h>
#include <unistd.h>

#include "mrc_xdp_test.h"

/* Take the test QP's map out of an outer map (as mrc_qpmaps_remove does). */
static void remove_state(int outer_fd)
{
	__u32 slot = SLOT;

	ASSERT_EQ(bpf_map_delete_elem(outer_fd, &slot), 0, "remove a state map");
	ASSERT_EQ(mrc_qpmaps_open(outer_fd, SLOT), -ENOENT, "the slot holds none");
}

/* Entry 0 of a map by fd (the old map, no longer in the outer map). */
static void read_entry(int fd, void *value, const char *what)
{
	__u32 key = 0;

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
