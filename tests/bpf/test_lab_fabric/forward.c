// SPDX-License-Identifier: GPL-2.0
/*
 * Port registration (which netns, device and hook a port is), plain
 * forwarding, the faults a link emulates (blackhole, drop rates) and its
 * emulated queue.
 */
#include <net/if.h>
#include <string.h>

#include "lab_fabric_test.h"

/* ====================================================================== */
/* Tests: registration and plain forwarding                               */
/* ====================================================================== */

static const struct lab_link_cfg cfg_none;

TEST_CASE(test_unregistered_port_passes, "lab.unregistered_port_passes")
{
	struct lab_link_cfg cfg = { .blackhole = 1 };
	struct lab_port_stats none = {};
	struct port p = setup_port(LAB_HOOK_INGRESS, 0, &cfg);
	struct port egress = { .id = p.id, .prog_fd = prog_fd_for(LAB_HOOK_EGRESS) };
	__u8 pkt[PKT_MAX];
	size_t len = build_udp_frame(pkt, 0, 0, 200);
	struct run r;

	/* Only ingress is registered (as a blackhole): egress is not ours. */
	run_pkt(&egress, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	ASSERT_EQ(r.ctx.priority, 0, "priority untouched");
	expect_stats(&p, &none);
}

/* Any device of this netns but loopback, or 0 if there is none. */
static __u32 other_device(void)
{
	struct if_nameindex *ifs = if_nameindex(), *i;
	__u32 found = 0;

	for (i = ifs; i && i->if_index; i++) {
		if (i->if_index != LO_IFINDEX) {
			found = i->if_index;
			break;
		}
	}
	if (ifs)
		if_freenameindex(ifs);
	return found;
}

/* The program keys ports on the skb's real device, not on loopback: a
 * blackhole on another device drops its packets and only its packets. */
TEST_CASE(test_port_on_other_device, "lab.port_on_other_device")
{
	struct lab_link_cfg cfg = { .blackhole = 1 };
	struct lab_port_key key = port_key(LAB_HOOK_EGRESS);
	struct lab_port_stats want = { .drop_fault = 1 };
	__u8 pkt[PKT_MAX];
	size_t len = build_udp_frame(pkt, 0, 0, 200);
	struct port p, lo;
	struct run r;

	key.ifindex = other_device();
	if (!key.ifindex) {
		TEST_SKIP("no device but loopback in this netns");
		return;
	}
	unregister_ports();
	p = new_port(LAB_HOOK_EGRESS, &cfg);
	register_port(&key, &p, 0);
	lo = p;
	lo.ifindex = LO_IFINDEX;
	p.ifindex = key.ifindex;
	run_pkt(&p, pkt, len, &r);
	expect_dropped(&r);
	run_pkt(&lo, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	expect_stats(&p, &want);
	bpf_map_delete_elem(bpf_map__fd(lf_skel->maps.lab_ports), &key);
}

/* Egress blackholes on another device and in another netns: every field
 * of the key must match, or loopback's packet is not ours. */
TEST_CASE(test_port_key_must_match, "lab.port_key_must_match")
{
	struct lab_link_cfg cfg = { .blackhole = 1 };
	struct lab_port_key other_dev = port_key(LAB_HOOK_EGRESS);
	struct lab_port_key other_ns = port_key(LAB_HOOK_EGRESS);
	int fd = bpf_map__fd(lf_skel->maps.lab_ports);
	struct lab_port_stats none = {};
	__u8 pkt[PKT_MAX];
	size_t len = build_udp_frame(pkt, 0, 0, 200);
	struct port p;
	struct run r;

	unregister_ports();
	p = new_port(LAB_HOOK_EGRESS, &cfg);
	other_dev.ifindex = LO_IFINDEX + 1;
	other_ns.netns_cookie = netns_cookie + 1;
	register_port(&other_dev, &p, 0);
	register_port(&other_ns, &p, 0);
	run_pkt(&p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	expect_stats(&p, &none);
	bpf_map_delete_elem(fd, &other_dev);
	bpf_map_delete_elem(fd, &other_ns);
}

TEST_CASE(test_forward_plain, "lab.forward_plain")
{
	__u32 hook;

	for (hook = LAB_HOOK_INGRESS; hook <= LAB_HOOK_EGRESS; hook++) {
		struct port p = setup_port(hook, 0, &cfg_none);
		__u8 pkt[PKT_MAX];
		size_t len = build_udp_frame(pkt, 0, 0x02, 300);
		struct lab_port_stats want = { .packets = 1, .bytes = len };
		struct run r;

		run_pkt(&p, pkt, len, &r);
		expect_forwarded_unchanged(&r, pkt, len);
		/* No queue, no class: priority stays what the sender set. */
		ASSERT_EQ(r.ctx.priority, 0, "priority untouched without a rate");
		expect_stats(&p, &want);
	}
}

TEST_CASE(test_rehash_forwards_unchanged, "lab.rehash_forwards_unchanged")
{
	struct port p = setup_port(LAB_HOOK_INGRESS, LAB_PORT_REHASH, &cfg_none);
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 500);
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(&s, pkt);
	struct lab_port_stats want = { .packets = 1, .bytes = len };
	struct run r;

	run_pkt(&p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	expect_stats(&p, &want);
}

/* ====================================================================== */
/* Tests: faults                                                          */
/* ====================================================================== */

TEST_CASE(test_blackhole, "lab.blackhole")
{
	struct lab_link_cfg cfg = { .blackhole = 1 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	struct lab_port_stats want = { .drop_fault = 1 };
	__u8 pkt[PKT_MAX];
	size_t len = build_udp_frame(pkt, 0, 0, 200);
	struct run r;

	run_pkt(&p, pkt, len, &r);
	expect_dropped(&r);
	expect_stats(&p, &want);
}

/* Send n copies of a 200-byte frame; return how many were dropped. */
static int send_count_drops(const struct port *p, int n)
{
	__u8 pkt[PKT_MAX];
	size_t len = build_udp_frame(pkt, 0, 0, 200);
	struct run r;
	int i, drops = 0;

	for (i = 0; i < n; i++) {
		run_pkt(p, pkt, len, &r);
		if (!ASSERT_EQ(r.err, 0, "test_run"))
			break;
		drops += r.verdict == TC_ACT_SHOT;
	}
	return drops;
}

TEST_CASE(test_drop_all, "lab.drop_all")
{
	struct lab_link_cfg cfg = { .drop_ppm = 1000000 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	struct lab_port_stats want = { .drop_fault = 50 };

	ASSERT_EQ(send_count_drops(&p, 50), 50, "drops at 100%");
	expect_stats(&p, &want);
}

TEST_CASE(test_drop_none, "lab.drop_none")
{
	struct lab_link_cfg cfg = { .drop_ppm = 0 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	struct lab_port_stats want = { .packets = 50, .bytes = 50 * 200 };

	ASSERT_EQ(send_count_drops(&p, 50), 0, "drops at 0%");
	expect_stats(&p, &want);
}

TEST_CASE(test_drop_half, "lab.drop_half")
{
	struct lab_link_cfg cfg = { .drop_ppm = 500000 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	int drops = send_count_drops(&p, 2000);
	struct lab_port_stats got = read_stats(&p);

	/* Binomial(2000, 0.5): sd ~22, so 800..1200 is a 9-sigma band. */
	fprintf(stderr, "  %d of 2000 dropped at 50%%\n", drops);
	ASSERT_TRUE(drops >= 800 && drops <= 1200, "drops within 40-60%");
	ASSERT_EQ(got.drop_fault, drops, "stats.drop_fault");
	ASSERT_EQ(got.packets, 2000 - drops, "stats.packets");
	ASSERT_EQ(got.drop_queue, 0, "stats.drop_queue");
}

/* ====================================================================== */
/* Tests: emulated queue                                                  */
/* ====================================================================== */

TEST_CASE(test_queue_tail_drop, "lab.queue_tail_drop")
{
	struct lab_link_cfg cfg = { .rate_bps = SLOW_RATE, .queue_limit = 5000 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	struct lab_port_stats want = { .packets = 5, .bytes = 5000, .drop_queue = 5 };
	__u8 pkt[PKT_MAX];
	size_t len = build_udp_frame(pkt, 0, 0, 1000);
	struct run r;
	int i;

	/* Backlog 0, 1000 .. 4000 fits under 5000; then the queue is full and
	 * drains by only ~1 byte per ms. */
	for (i = 0; i < 10; i++) {
		int before = test_state.failed;

		run_pkt(&p, pkt, len, &r);
		if (i < 5) {
			expect_forwarded_unchanged(&r, pkt, len);
			ASSERT_EQ(r.ctx.priority, DATA_CLASS, "data class");
		} else {
			expect_dropped(&r);
		}
		note_packet(before, i);
	}
	expect_stats(&p, &want);
}

TEST_CASE(test_queue_rate_zero_no_queue, "lab.queue_rate_zero_no_queue")
{
	struct lab_link_cfg cfg = { .rate_bps = 0, .queue_limit = 5000,
				    .ecn_thresh = 1, .trim_thresh = 1 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	struct lab_port_stats want = { .packets = 20, .bytes = 20 * 1000 };
	__u8 pkt[PKT_MAX];
	size_t len = build_udp_frame(pkt, 0, 0x02, 1000);
	struct run r;
	int i;

	for (i = 0; i < 20; i++) {
		run_pkt(&p, pkt, len, &r);
		expect_forwarded_unchanged(&r, pkt, len);
		ASSERT_EQ(r.ctx.priority, 0, "no class without a queue");
	}
	expect_stats(&p, &want);
}
