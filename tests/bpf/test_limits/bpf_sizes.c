// SPDX-License-Identifier: GPL-2.0
/*
 * mrc_xdp_rx with maps of LIMITS_QPS QPs and LIMITS_CTX contexts: QPs,
 * window slots and event rings past the built sizes work like the first
 * ones; a QP number past the maps' size (but inside the QP number space,
 * MRC_QPS_LIMIT) is a counted unknown_qp drop, never an access past a map.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/map_plan.h"
#include "limits_test.h"
#include "mrc/nscc.h"

#define CC_MTU		4000

/* Copy the fixture QP's (QP 5) state map of a per-QP outer map to QP qpn's. */
static void copy_slot(int fd, __u32 qpn, size_t value_size, const char *what)
{
	static __u8 buf[1 << 15];

	if (!ASSERT_TRUE(value_size <= sizeof(buf), what))
		return;
	get_state_of(fd, SLOT, buf, value_size, what);
	put_state_of(fd, mrc_qpn_to_slot(qpn), buf, value_size, what);
}

/*
 * The fixture's QP (setup_qp) installed again as QP qpn, context ctx:
 * its state; its send log and EV counters are empty (reset_maps) anyway.
 */
static void install_qp_as(__u32 qpn, __u32 ctx, __u32 cc_slot)
{
	struct mrc_qp_info q;
	__u32 slot = mrc_qpn_to_slot(qpn);

	copy_slot(MFD(mrc_rx), qpn, sizeof(struct mrc_rx_state), "copy mrc_rx");
	copy_slot(MFD(mrc_tx), qpn, sizeof(struct mrc_tx_state), "copy mrc_tx");
	copy_slot(MFD(mrc_qp_evs), qpn, sizeof(struct mrc_qp_evs), "copy mrc_qp_evs");
	get_qp(&q);
	q.ctx = ctx;
	q.cc_slot = cc_slot;
	q.state_idx = fx_idx_of(slot);	/* the copies' entry (put_state_of) */
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_qps), &slot, &q, BPF_ANY), 0,
		  "write mrc_qps of the QP");
}

static void data_to(__u32 dqpn, struct run *r, __u8 *pkt, size_t *len)
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 256);
	struct hdrs h = rx4();

	d.dqpn = dqpn;
	*len = data_frame(pkt, &h, &d);
	run_xdp(pkt, *len, r);
}

static __u16 udp_dport(const __u8 *pkt)
{
	const __u8 *udp = pkt + 14 + 20;	/* rx4(): Ethernet, IPv4 */

	return (__u16)(udp[2] << 8 | udp[3]);
}

/* QP 1000 and the last QP (LIMITS_QPS) get their DATA steered, counted. */
TEST_CASE(test_data_past_built_size, "limits.data_past_built_size")
{
	static const __u32 qpns[] = { 1000, LIMITS_QPS };
	struct mrc_drop_stats drops;
	__u8 pkt[PKT_MAX];
	struct run r;
	size_t len;

	setup_qp(1);
	for (size_t i = 0; i < sizeof(qpns) / sizeof(qpns[0]); i++) {
		install_qp_as(qpns[i], 0, 0);
		data_to(qpns[i], &r, pkt, &len);
		ASSERT_EQ(r.err, 0, "test_run");
		ASSERT_EQ(r.ret, XDP_PASS, "DATA to a QP past 256: XDP_PASS");
		ASSERT_EQ(udp_dport(r.out), SOCK_PORT, "steered to the owner's socket");
		ASSERT_EQ(read_qp_stats(mrc_qpn_to_slot(qpns[i])).rx_data, 1,
			  "counted on the QP's own slot");
	}
	drops = read_drops();
	ASSERT_EQ(drops.unknown_qp, 0, "no unknown_qp drop");
	ASSERT_EQ(read_qp_stats(SLOT).rx_data, 0, "QP 5 saw none of it");
}

/*
 * QP numbers past the maps (LIMITS_QPS + 1, up to the number space and
 * past it): each a counted unknown_qp drop.
 */
TEST_CASE(test_data_past_map_size, "limits.data_past_map_size")
{
	static const __u32 qpns[] = { LIMITS_QPS + 1, 4096, MRC_QPS_LIMIT,
				      MRC_QPS_LIMIT + 1, MRC_QPN_MASK };
	__u8 pkt[PKT_MAX];
	struct run r;
	size_t len;

	setup_qp(1);
	for (size_t i = 0; i < sizeof(qpns) / sizeof(qpns[0]); i++) {
		data_to(qpns[i], &r, pkt, &len);
		ASSERT_EQ(r.err, 0, "test_run");
		ASSERT_EQ(r.ret, XDP_DROP, "DATA past the maps: XDP_DROP");
	}
	ASSERT_EQ(read_drops().unknown_qp, sizeof(qpns) / sizeof(qpns[0]),
		  "each counted as unknown_qp");
}

/* Window slot k (0-based) initialised for NSCC, as libmrc's new_group does. */
static void init_window(__u32 k)
{
	struct mrc_nscc_params p = {
		.mtu = CC_MTU, .base_rtt_ns = 1000000000u, .target_ns = 1000,
		.adjust_period_ns = 1000000000u, .adjust_bytes = 1000000,
		.max_cwnd = 100000, .min_cwnd = CC_MTU, .alpha_bytes = 1000,
		.fi_bytes = 500, .eta_bytes = 100, .fi_scale_milli = 250,
		.gamma_milli = 800, .md_jump_milli = 500, .qa_gate = 3,
		.algo = MRC_CC_NSCC,
	};
	static struct mrc_cc_state st;
	struct mrc_cc_view v = { .algo = MRC_CC_NSCC, .cwnd = 100000 };

	memset(&st, 0, sizeof(st));
	nscc_init(&st.nscc, &p, mono_ns());
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_cc), &k, &st, BPF_ANY), 0, "write mrc_cc");
	put_state_of(MFD(mrc_cc_view), k, &v, sizeof(v), "write mrc_cc_view");
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct mrc_event *e = data;
	int *n = ctx;

	if (size == sizeof(*e) && e->qpn == 1000)
		(*n)++;
	return 0;
}

/*
 * A SACK for QP 1000 of context 99 with window slot 1000: the QP's
 * requester state moves, its window (mrc_cc[999]) counts the acked
 * bytes, and the WRITE it completes reaches context 99's ring. All three
 * are past the built sizes (256 QPs and windows, 64 contexts).
 */
TEST_CASE(test_sack_past_built_size, "limits.sack_past_built_size")
{
	static struct mrc_tx_state tx;
	struct mrc_cc_state st;
	struct ring_buffer *rb;
	__u32 ctx = LIMITS_CTX - 1, slot = mrc_qpn_to_slot(1000), k = 999;
	struct sack_spec s = sspec(1004, 0);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	int ring, got = 0;
	struct run r;
	size_t len;

	setup_qp(1);
	install_qp_as(1000, ctx, k + 1);
	init_window(k);
	ring = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "limits_ring", 0, 0,
			      MRC_CTX_RING_BYTES, NULL);
	if (!ASSERT_TRUE(ring >= 0, "ring for context 99"))
		return;
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_events), &ctx, &ring, BPF_ANY), 0,
		  "context 99's ring in mrc_events");
	s.dqpn = 1000;
	s.psn = 1004;
	len = sack_frame(pkt, &h, &s);
	run_xdp(pkt, len, &r);
	ASSERT_EQ(r.err, 0, "test_run");
	ASSERT_EQ(r.ret, XDP_DROP, "a SACK is consumed in XDP");
	get_state_of(MFD(mrc_tx), slot, &tx, sizeof(tx), "read mrc_tx");
	ASSERT_EQ(tx.snd_una, 1005, "QP 1000's snd_una past the cumulative ack");
	ASSERT_EQ(bpf_map_lookup_elem(MFD(mrc_cc), &k, &st), 0, "read mrc_cc");
	ASSERT_EQ(st.nscc.acked_bytes, 5 * CC_MTU, "window 999 counts PSNs 1000-1004");
	ASSERT_EQ(read_drops().ring_full, 0, "no event lost");
	rb = ring_buffer__new(ring, on_event, &got, NULL);
	if (ASSERT_TRUE(rb != NULL, "read context 99's ring")) {
		ring_buffer__consume(rb);
		ASSERT_TRUE(got >= 1, "the completion reached context 99's ring");
		ring_buffer__free(rb);
	}
	bpf_map_delete_elem(MFD(mrc_events), &ctx);
	close(ring);
}

/*
 * What mrcd plans for the maps (map_plan.c, its memory check and start-up
 * line) is what the kernel charges for them (bytes_memlock), map by map:
 * within the map's own struct and a page.
 */
TEST_CASE(test_planned_bytes, "limits.planned_bytes")
{
	const struct bpf_map *map;
	__u64 planned_sum = 0, actual_sum = 0;

	bpf_object__for_each_map(map, skel->obj) {
		const struct mrc_pin_spec *s = mrc_pin_spec(mrc_pin_by_name(bpf_map__name(map)));
		__u64 planned, actual;

		if (!s)
			continue;
		planned = mrc_plan_map_bytes(s, bpf_map__max_entries(map), (unsigned int)ncpus);
		actual = mrc_plan_fd_bytes(bpf_map__fd(map));
		planned_sum += planned;
		actual_sum += actual;
		if (!ASSERT_TRUE(actual >= planned && actual - planned <= 8192,
				 "planned bytes within 8 KiB below the kernel's"))
			fprintf(stderr, "  %s: planned %llu, bytes_memlock %llu\n", s->name,
				(unsigned long long)planned, (unsigned long long)actual);
	}
	ASSERT_EQ(planned_sum, mrc_plan_bytes(LIMITS_QPS, LIMITS_CTX, (unsigned int)ncpus),
		  "the sum is mrc_plan_bytes()");
	fprintf(stderr, "  maps at %d QPs, %d contexts: planned %llu, bytes_memlock %llu\n",
		LIMITS_QPS, LIMITS_CTX, (unsigned long long)planned_sum,
		(unsigned long long)actual_sum);
}

/* The memlock of the inner map an outer map holds at slot (0: none). */
static __u64 inner_bytes(int outer_fd, __u32 slot)
{
	int fd = mrc_qpmaps_open(outer_fd, slot);
	__u64 n;

	if (fd < 0)
		return 0;
	n = mrc_plan_fd_bytes(fd);
	close(fd);
	return n;
}

/* The memlock of a context's state blocks, as the kernel charges them. */
static __u64 blocks_bytes(const struct mrc_state_blocks *sb)
{
	__u64 n = 0;

	for (__u32 i = 0; i < sb->n; i++)
		n += mrc_plan_fd_bytes(sb->b[i].rx) + mrc_plan_fd_bytes(sb->b[i].tx) +
		     mrc_plan_fd_bytes(sb->b[i].evs);
	return n;
}

/*
 * One context's QPs' state maps (blocks) and their windows' views as the
 * kernel charges them stay within what mrcd's plan counts
 * (mrc_plan_state_bytes: an upper bound), and not far below it once the
 * blocks are past the first: 1, 9 (a second block opened) and 200 QPs.
 */
TEST_CASE(test_planned_state_bytes, "limits.planned_state_bytes")
{
	static const __u32 counts[] = { 1, 9, 200 };
	__u64 view;

	setup_qp(1);	/* window 0's view */
	view = inner_bytes(MFD(mrc_cc_view), 0);
	for (unsigned int c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
		struct mrc_state_blocks sb = {};
		struct mrc_qp_state_fds fds;
		__u32 n = counts[c], slot = 100;
		__u64 actual, planned = mrc_plan_state_bytes(n, 1);

		for (__u32 i = 0; i < n; i++, slot++) {
			if (!ASSERT_EQ(mrc_qp_state_create(&fx_qpmaps, &sb, slot, slot + 1, &fds),
				       0, "a QP's state entry"))
				break;
			close(fds.rx);
			close(fds.tx);
			close(fds.evs);
		}
		actual = blocks_bytes(&sb) + n * view;
		if (!ASSERT_TRUE(actual <= planned && (n < 100 || planned <= 2 * actual),
				 "the plan bounds the blocks and the views, closely"))
			fprintf(stderr, "  %u QPs: planned %llu, bytes_memlock %llu\n", n,
				(unsigned long long)planned, (unsigned long long)actual);
		for (slot = 100; slot < 100 + n; slot++)
			mrc_qpmaps_remove(&fx_qpmaps, slot);
		mrc_state_blocks_fini(&sb);
	}
	ASSERT_EQ(mrc_plan_state_bytes(1000, 0), 1000 * mrc_plan_state_bytes(1, 0),
		  "linear in the QPs");
}
