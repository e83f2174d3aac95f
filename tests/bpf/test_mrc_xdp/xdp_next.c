// SPDX-License-Identifier: GPL-2.0
/*
 * The chain to a second XDP program (mrc_xdp_next, for kernels without
 * libxdp's dispatcher): packets that are not MRC's go to the program in
 * slot 0 (here bpf/port_drop.bpf.c, dropping the ports in its map) and
 * nowhere else; MRC's own packets - valid, or malformed and dropped by
 * MRC - never reach it; with the slot empty they pass up untouched.
 */
#include "mrc_xdp_test.h"
#include "port_drop.skel.h"

#define DROP_PORT	5001
#define OTHER_PORT	5002

static struct port_drop *pd;

/* port_drop loaded, dropping DROP_PORT and the MRC port, in slot 0. */
static int chain_port_drop(void)
{
	__u16 ports[] = { DROP_PORT, MRC_UDP_PORT_DEFAULT };
	__u64 zero = 0;
	__u32 slot = 0;
	int fd;

	if (!pd)
		pd = port_drop__open_and_load();
	ASSERT_TRUE(pd != NULL, "port_drop loads");
	if (!pd)
		return -1;
	for (unsigned int i = 0; i < 2; i++)
		ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(pd->maps.port_drop_ports),
					      &ports[i], &zero, BPF_ANY), 0, "drop port set");
	fd = bpf_program__fd(pd->progs.xdp_port_drop);
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_xdp_next), &slot, &fd, BPF_ANY), 0,
		  "port_drop chained in mrc_xdp_next");
	return 0;
}

static __u64 dropped(__u16 port)
{
	__u64 n = 0;

	bpf_map_lookup_elem(bpf_map__fd(pd->maps.port_drop_ports), &port, &n);
	return n;
}

static size_t udp_to(__u8 *pkt, struct hdrs h, __u16 port)
{
	static const __u8 payload[32] = { 1, 2, 3 };

	h.dport = port;
	return build_udp(&h, payload, sizeof(payload), pkt);
}

TEST_CASE(test_xdp_next_empty, "mrc.xdp_next_empty_passes")
{
	__u8 pkt[PKT_MAX];
	struct run r;
	size_t len;

	setup_qp(2);
	len = udp_to(pkt, rx4(), DROP_PORT);
	run_xdp(pkt, len, &r);
	expect_untouched(&r, pkt, len, XDP_PASS);
}

TEST_CASE(test_xdp_next_non_mrc, "mrc.xdp_next_gets_non_mrc")
{
	__u8 pkt[PKT_MAX];
	struct run r;
	size_t len;

	setup_qp(2);
	if (chain_port_drop())
		return;
	len = udp_to(pkt, rx4(), DROP_PORT);
	run_xdp(pkt, len, &r);
	ASSERT_EQ(r.ret, XDP_DROP, "UDP to the dropped port: the next program's XDP_DROP");
	ASSERT_EQ(dropped(DROP_PORT), 1, "the next program counted it");
	len = udp_to(pkt, rx6(), DROP_PORT);
	run_xdp(pkt, len, &r);
	ASSERT_EQ(r.ret, XDP_DROP, "over IPv6 too");
	ASSERT_EQ(dropped(DROP_PORT), 2, "counted");
	len = udp_to(pkt, rx4(), OTHER_PORT);
	run_xdp(pkt, len, &r);
	expect_untouched(&r, pkt, len, XDP_PASS);
	expect_drops(&no_drops);
}

TEST_CASE(test_xdp_next_not_mrc_packets, "mrc.xdp_next_never_gets_mrc")
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 64);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	struct run r;
	size_t len;

	setup_qp(2);
	if (chain_port_drop())
		return;
	/* port_drop would drop the MRC port: MRC's packets must not reach it. */
	len = data_frame(pkt, &h, &d);
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	/* A malformed one to the MRC port is MRC's to drop, and counted so. */
	d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 1, 64);
	d.key = QP_KEY ^ 1;
	len = data_frame(pkt, &h, &d);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	ASSERT_EQ(dropped(MRC_UDP_PORT_DEFAULT), 0, "the next program saw no MRC packet");
}
