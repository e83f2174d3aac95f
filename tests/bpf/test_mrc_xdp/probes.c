// SPDX-License-Identifier: GPL-2.0
/*
 * Probes and endpoint messages: EV probes answered by mrc_xdp_rx with
 * XDP_TX, probe responses and port status steered to mrcd, malformed
 * endpoint messages dropped, and EV probes stamped by mrc_tc_tx.
 */
#include "mrc_xdp_test.h"
#include "srv6_test.h"

/* ====================================================================== */
/* Tests: endpoint control (EV probes, port status)                       */
/* ====================================================================== */

/* An endpoint control packet: BTH (QP 0, PSN 0) + struct mrc_eph. */
struct ep_spec {
	__u8	opcode;		/* MRC_OP_EP_REQUEST / MRC_OP_EP_RESPONSE */
	__u8	kind, plane, status, flags;
	__u32	req_id;		/* opaque: written big-endian */
	__u32	ev;		/* network order, as TC reads it */
	__u16	reply_port;	/* network order */
	__u32	service_ns;	/* host order, as XDP writes it */
	__u64	t_tx_ns, t_rx_ns;	/* host order (bpf_ktime_get_ns) */
};

#define EPH_LEN		((size_t)sizeof(struct mrc_eph))
#define EPH_OFF(pkt)	(l4_off(pkt) + UDP_LEN + BTH_LEN)
#define EPH_AT(pkt, f)	((pkt) + EPH_OFF(pkt) + offsetof(struct mrc_eph, f))

static size_t build_eph(__u8 *m, const struct ep_spec *e)
{
	size_t n = put_bth(m, e->opcode, 0, 0, 0);
	__u8 *h = m + n;

	memset(h, 0, EPH_LEN);
	h[offsetof(struct mrc_eph, kind)] = e->kind;
	h[offsetof(struct mrc_eph, plane)] = e->plane;
	h[offsetof(struct mrc_eph, status)] = e->status;
	h[offsetof(struct mrc_eph, flags)] = e->flags;
	put32(h + offsetof(struct mrc_eph, req_id), e->req_id);
	put32(h + offsetof(struct mrc_eph, ev), e->ev);
	put16(h + offsetof(struct mrc_eph, reply_port), e->reply_port);
	memcpy(h + offsetof(struct mrc_eph, service_ns), &e->service_ns, 4);
	memcpy(h + offsetof(struct mrc_eph, t_tx_ns), &e->t_tx_ns, 8);
	memcpy(h + offsetof(struct mrc_eph, t_rx_ns), &e->t_rx_ns, 8);
	return n + EPH_LEN;
}

static size_t ep_frame(__u8 *buf, const struct hdrs *h, const struct ep_spec *e)
{
	__u8 m[128];
	size_t mlen = build_eph(m, e);

	return build_udp(h, m, mlen, buf);
}

static __u64 get_ne64(const __u8 *p)
{
	__u64 v;

	memcpy(&v, p, 8);
	return v;
}

static __u32 get_ne32(const __u8 *p)
{
	__u32 v;

	memcpy(&v, p, 4);
	return v;
}

/* mrcd knows `addr` (16 bytes, IPv6 or IPv4-mapped) for `why` (MRC_KNOWN_*). */
static void know_peer(const __u8 addr[16], __u32 why)
{
	struct mrc_known_peer_key k;
	struct mrc_known_peer v = { .why = why };

	memcpy(k.addr, addr, 16);
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_known_peers), &k, &v, BPF_ANY), 0,
		  "mrc_known_peers update");
}

/* Both test peer addresses (peer4 mapped, peer6) are known for `why`. */
static void know_test_peers(__u32 why)
{
	__u8 a[16];

	mapped4(a, peer4);
	know_peer(a, why);
	know_peer(peer6, why);
}

/* `port` is one of mrcd's probe sockets. */
static void add_probe_port(__u32 port)
{
	__u32 kind = MRC_PROBE_PORT_PLANE;

	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_probe_ports), &port, &kind, BPF_ANY), 0,
		  "mrc_probe_ports update");
}

/* An EV probe request as it arrives at the responder (from the peer). */
static struct ep_spec probe_req(void)
{
	struct ep_spec e = {
		.opcode = MRC_OP_EP_REQUEST, .kind = MRC_EP_EV_PROBE, .plane = 1,
		.req_id = 0x11223344, .ev = 0xABCD1234, .reply_port = LOCAL_SPORT,
		.t_tx_ns = 0x0123456789ABCDEFull,
	};
	return e;
}

/* ... as mrcd's socket sends it (before TC). */
static struct ep_spec probe_out(__u32 ev, __u8 flags)
{
	struct ep_spec e = {
		.opcode = MRC_OP_EP_REQUEST, .kind = MRC_EP_EV_PROBE, .plane = 2,
		.flags = flags, .req_id = 0xCAFEF00D, .ev = ev,
	};
	return e;
}

/*
 * The responder answers an EV probe in place: XDP_TX with MACs and IP
 * addresses swapped, UDP ports unchanged (so the answer crosses the
 * fabric on the EV's return path), opcode EP_RESPONSE, req_id/ev/
 * reply_port/t_tx_ns echoed, service_ns filled (< 1 s) and a valid UDP
 * checksum; IPv4 and IPv6; counted in ctl_stats.probes_answered. The
 * request comes from a peer mrcd knows (mrc_known_peers, here as a QP
 * peer); it names no QP (dqpn 0). With an IPv4 UDP checksum of 0 ("none")
 * the answer keeps 0.
 */
TEST_CASE(test_ep_probe_answered, "mrc.ep_probe_answered")
{
	__u8 pkt[PKT_MAX], exp[PKT_MAX];
	struct mrc_ctl_stats want = {};
	size_t len, l3, l4;
	int v6, zero;
	struct run r;

	setup_qp(1);
	know_test_peers(MRC_KNOWN_QP);
	for (zero = 0; zero < 2; zero++) {
		for (v6 = 0; v6 < 2; v6++) {
			struct hdrs h = v6 ? rx6() : rx4();
			struct ep_spec e = probe_req();
			int before = test_state.failed;
			__u32 service;

			if (zero && v6)
				continue;
			h.sport = 0x1234;
			h.zero_csum = zero;
			len = ep_frame(pkt, &h, &e);
			l3 = ETH_LEN;
			l4 = l4_off(pkt);
			if (!zero && !ASSERT_TRUE(udp_csum_ok(pkt), "input UDP checksum valid"))
				return;
			run_xdp(pkt, len, &r);
			if (!ASSERT_EQ(r.err, 0, "test_run") ||
			    !ASSERT_EQ(r.ret, XDP_TX, "verdict XDP_TX") ||
			    !ASSERT_EQ(r.out_len, len, "output length"))
				return;
			/* The frame we expect, but for service_ns and the checksum. */
			memcpy(exp, pkt, len);
			memcpy(exp, pkt + 6, 6);
			memcpy(exp + 6, pkt, 6);
			if (v6) {
				memcpy(exp + l3 + 8, pkt + l3 + 24, 16);
				memcpy(exp + l3 + 24, pkt + l3 + 8, 16);
			} else {
				memcpy(exp + l3 + 12, pkt + l3 + 16, 4);
				memcpy(exp + l3 + 16, pkt + l3 + 12, 4);
			}
			exp[l4 + UDP_LEN] = MRC_OP_EP_RESPONSE;
			memcpy(EPH_AT(exp, service_ns), EPH_AT(r.out, service_ns), 4);
			memcpy(exp + l4 + 6, r.out + l4 + 6, 2);
			ASSERT_MEM_EQ(r.out, exp, len,
				      "MACs and addresses swapped, opcode EP_RESPONSE, rest echoed");
			ASSERT_EQ(get16(r.out + l4), 0x1234, "UDP sport (the EV) unchanged");
			ASSERT_EQ(get16(r.out + l4 + 2), MRC_UDP_PORT_DEFAULT, "UDP dport unchanged");
			ASSERT_EQ(get32(EPH_AT(r.out, req_id)), 0x11223344, "req_id echoed");
			ASSERT_EQ(get32(EPH_AT(r.out, ev)), 0xABCD1234, "ev echoed");
			service = get_ne32(EPH_AT(r.out, service_ns));
			ASSERT_TRUE(service < 1000000000u, "service_ns < 1 s");
			if (!v6)
				ASSERT_TRUE(ipv4_csum_ok(r.out), "IPv4 header checksum valid");
			if (zero)
				ASSERT_EQ(get16(r.out + l4 + 6), 0, "absent checksum stays 0");
			else
				ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid after answering");
			want.probes_answered++;
			expect_ctl(&want);
			expect_drops(&no_drops);
			if (test_state.failed != before) {
				fprintf(stderr, "  (ipv6 %d, zero checksum %d)\n", v6, zero);
				return;
			}
		}
	}
	/* A stale service_ns in the request is overwritten, the sum kept right. */
	{
		struct hdrs h = rx4();
		struct ep_spec e = probe_req();

		e.service_ns = 0xFFFFFFFFu;
		len = ep_frame(pkt, &h, &e);
		run_xdp(pkt, len, &r);
		ASSERT_EQ(r.ret, XDP_TX, "verdict XDP_TX (stale service_ns)");
		ASSERT_TRUE(get_ne32(EPH_AT(r.out, service_ns)) < 1000000000u,
			    "service_ns rewritten");
		ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid (stale service_ns)");
	}
	ASSERT_EQ(drain_events(), 0, "no context events");
	ASSERT_EQ(drain_ev_events(), 0, "no EV events");
}

/*
 * The answer to one of our probes: XDP stamps t_rx_ns (now, host clock)
 * and steers it to reply_port (mrcd's probing socket, in mrc_probe_ports),
 * XDP_PASS, with a valid UDP checksum and nothing else changed;
 * ctl_stats.probe_responses. The source is a known peer: here the target
 * of a `mrcctl probe` (MRC_KNOWN_PROBED), which is enough for a response.
 * reply_port 0 (nobody to give it to) or a response of another kind is
 * dropped and counted in ep_dropped.
 */
TEST_CASE(test_ep_probe_response, "mrc.ep_probe_response")
{
	__u8 pkt[PKT_MAX], exp[PKT_MAX];
	struct mrc_ctl_stats want = {};
	size_t len, l4;
	__u64 t0, t1, trx;
	int v6;
	struct run r;

	setup_qp(1);
	know_test_peers(MRC_KNOWN_PROBED);
	add_probe_port(40404);
	for (v6 = 0; v6 < 2; v6++) {
		struct hdrs h = v6 ? rx6() : rx4();
		struct ep_spec e = probe_req();
		int before = test_state.failed;

		e.opcode = MRC_OP_EP_RESPONSE;
		e.reply_port = 40404;
		e.service_ns = 1234;
		h.sport = 0x1234;
		len = ep_frame(pkt, &h, &e);
		l4 = l4_off(pkt);
		t0 = mono_ns();
		run_xdp(pkt, len, &r);
		t1 = mono_ns();
		if (!ASSERT_EQ(r.err, 0, "test_run") ||
		    !ASSERT_EQ(r.ret, XDP_PASS, "verdict XDP_PASS") ||
		    !ASSERT_EQ(r.out_len, len, "output length"))
			return;
		ASSERT_EQ(get16(r.out + l4 + 2), 40404, "steered to reply_port");
		trx = get_ne64(EPH_AT(r.out, t_rx_ns));
		ASSERT_TRUE(trx >= t0 && trx <= t1, "t_rx_ns within the test's window");
		ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid");
		memcpy(exp, pkt, len);
		put16(exp + l4 + 2, 40404);
		memcpy(exp + l4 + 6, r.out + l4 + 6, 2);
		memcpy(EPH_AT(exp, t_rx_ns), EPH_AT(r.out, t_rx_ns), 8);
		ASSERT_MEM_EQ(r.out, exp, len, "only dport, t_rx_ns and checksum changed");
		want.probe_responses++;
		expect_ctl(&want);
		if (test_state.failed != before) {
			fprintf(stderr, "  (ipv6 %d)\n", v6);
			return;
		}
	}
	/* IPv4 without a checksum: stays without. */
	{
		struct hdrs h = rx4();
		struct ep_spec e = probe_req();

		e.opcode = MRC_OP_EP_RESPONSE;
		e.reply_port = 40404;
		h.zero_csum = 1;
		len = ep_frame(pkt, &h, &e);
		run_xdp(pkt, len, &r);
		ASSERT_EQ(r.ret, XDP_PASS, "verdict XDP_PASS (no checksum)");
		ASSERT_EQ(get16(r.out + l4_off(pkt) + 6), 0, "absent checksum stays 0");
		want.probe_responses++;
		expect_ctl(&want);
	}
	/* No reply port; a response that is not an EV probe. */
	{
		struct hdrs h = rx4();
		struct ep_spec e = probe_req();

		e.opcode = MRC_OP_EP_RESPONSE;
		e.reply_port = 0;
		len = ep_frame(pkt, &h, &e);
		run_xdp(pkt, len, &r);
		expect_xdp_drop(&r);
		want.ep_dropped++;
		expect_ctl(&want);
		e.reply_port = 40404;
		e.kind = MRC_EP_PORT_STATUS;
		len = ep_frame(pkt, &h, &e);
		run_xdp(pkt, len, &r);
		expect_xdp_drop(&r);
		want.ep_dropped++;
		expect_ctl(&want);
	}
	ASSERT_EQ(drain_ev_events(), 0, "no EV events");
}

/*
 * A peer's port status request goes to our mrcd at mrc_cfg.agent_port
 * (XDP_PASS, only dport and checksum changed, checksum valid,
 * ctl_stats.port_status_rx); without an agent (agent_port 0) it is
 * dropped and counted in ep_dropped. The peer is one mrcd was configured
 * with (MRC_KNOWN_CONFIGURED).
 */
TEST_CASE(test_ep_port_status, "mrc.ep_port_status")
{
	struct mrc_global_cfg cfg = { .agent_port = 45454 };
	struct ep_spec e = {
		.opcode = MRC_OP_EP_REQUEST, .kind = MRC_EP_PORT_STATUS, .plane = 2,
		.status = 0, .req_id = 77,
	};
	struct mrc_ctl_stats want = { .ep_dropped = 1 };
	__u8 pkt[PKT_MAX], exp[PKT_MAX];
	size_t len, l4;
	__u32 zero = 0;
	int v6;
	struct run r;

	setup_qp(1);
	know_test_peers(MRC_KNOWN_CONFIGURED);
	{
		struct hdrs h = rx4();

		len = ep_frame(pkt, &h, &e);
		run_xdp(pkt, len, &r);
		expect_xdp_drop(&r);
		expect_ctl(&want);
	}
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_cfg), &zero, &cfg, BPF_ANY), 0,
		  "set mrc_cfg.agent_port");
	for (v6 = 0; v6 < 2; v6++) {
		struct hdrs h = v6 ? rx6() : rx4();

		len = ep_frame(pkt, &h, &e);
		l4 = l4_off(pkt);
		run_xdp(pkt, len, &r);
		if (!ASSERT_EQ(r.err, 0, "test_run") ||
		    !ASSERT_EQ(r.ret, XDP_PASS, "verdict XDP_PASS") ||
		    !ASSERT_EQ(r.out_len, len, "output length"))
			return;
		ASSERT_EQ(get16(r.out + l4 + 2), 45454, "steered to agent_port");
		ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid");
		memcpy(exp, pkt, len);
		put16(exp + l4 + 2, 45454);
		memcpy(exp + l4 + 6, r.out + l4 + 6, 2);
		ASSERT_MEM_EQ(r.out, exp, len, "only dport and checksum changed");
		want.port_status_rx++;
		expect_ctl(&want);
	}
	/* ... also when the MRC port is configured (agent_port is its own). */
	cfg.udp_port = 5000;
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_cfg), &zero, &cfg, BPF_ANY), 0,
		  "set mrc_cfg.udp_port");
	{
		struct hdrs h = rx4();

		h.dport = 5000;
		len = ep_frame(pkt, &h, &e);
		run_xdp(pkt, len, &r);
		ASSERT_EQ(r.ret, XDP_PASS, "verdict XDP_PASS (port 5000)");
		ASSERT_EQ(get16(r.out + l4_off(pkt) + 2), 45454, "steered to agent_port");
		ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid (port 5000)");
		want.port_status_rx++;
		expect_ctl(&want);
	}
}

/*
 * Malformed or unserved endpoint packets are dropped and counted in
 * ctl_stats.ep_dropped, never answered: a UDP payload shorter than
 * BTH + 40 (frame cut, or UDP length cut), a bare BTH, an unknown kind.
 */
TEST_CASE(test_ep_malformed, "mrc.ep_malformed")
{
	static const __u8 kinds[] = { 0, 3, 0x81, 0xFF };
	struct ep_spec e = probe_req();
	struct mrc_ctl_stats want = {};
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX], m[128];
	size_t mlen, len, i;
	struct run r;

	setup_qp(1);
	mlen = build_eph(m, &e);
	/* The frame ends one byte short of the header. */
	len = build_udp(&h, m, mlen - 1, pkt);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.ep_dropped++;
	expect_ctl(&want);
	/* The whole header is there, the UDP length says one byte less. */
	len = build_udp(&h, m, mlen, pkt);
	set_udp_len(pkt, (__u16)(UDP_LEN + BTH_LEN + EPH_LEN - 1));
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.ep_dropped++;
	expect_ctl(&want);
	/* Requests and responses with nothing after the BTH. */
	len = build_udp(&h, m, BTH_LEN, pkt);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	m[0] = MRC_OP_EP_RESPONSE;
	len = build_udp(&h, m, BTH_LEN, pkt);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	want.ep_dropped += 2;
	expect_ctl(&want);
	/* Unknown kinds. */
	for (i = 0; i < sizeof(kinds); i++) {
		e = probe_req();
		e.kind = kinds[i];
		len = ep_frame(pkt, &h, &e);
		run_xdp(pkt, len, &r);
		expect_xdp_drop(&r);
		want.ep_dropped++;
	}
	expect_ctl(&want);
	ASSERT_EQ(drain_events(), 0, "no context events");
	ASSERT_EQ(drain_ev_events(), 0, "no EV events");
}

/*
 * TC stamps an outgoing EV probe: UDP sport = the EV's low 16 bits (STEV
 * flag on IPv6: high 16 bits in the flow label's low 16, as for DATA),
 * reply_port = the socket's port (33333, network order), t_tx_ns = now,
 * the UDP checksum fully correct (the test skb has no checksum offload),
 * nothing else changed; ctl_stats.probes_stamped. No QP is needed. A port
 * status request leaves untouched.
 */
TEST_CASE(test_tc_stamp_probe, "mrc.tc_stamp_probe")
{
	static const struct { int ipv6; __u32 ev; __u8 flags; __u32 word0; } cases[] = {
		{ 0, 0xBEEF, 0, 0 },
		{ 1, 0xBEEF, 0, 0x60000000 },	/* the label is the EV's: 0 */
		{ 1, 0xABCD2222, MRC_EPH_F_STEV, 0x6000ABCD },
		{ 0, 0xABCD2222, MRC_EPH_F_STEV, 0 },		/* IPv4: port only */
		{ 1, 0xABCD2222, 0, 0x60000000 },		/* no flag: port, label 0 */
	};
	struct mrc_ctl_stats want = {};
	__u8 pkt[PKT_MAX], exp[PKT_MAX];
	size_t c, len, l4;
	__u64 t0, t1, ttx;
	struct run r;

	setup_qp(1);
	for (c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct hdrs h = cases[c].ipv6 ? tx6() : tx4();
		struct ep_spec e = probe_out(cases[c].ev, cases[c].flags);
		int before = test_state.failed;

		len = ep_frame(pkt, &h, &e);
		l4 = l4_off(pkt);
		t0 = mono_ns();
		run_tc(pkt, len, &r);
		t1 = mono_ns();
		if (!ASSERT_EQ(r.err, 0, "test_run") ||
		    !ASSERT_EQ(r.ret, TC_ACT_OK, "verdict TC_ACT_OK") ||
		    !ASSERT_EQ(r.out_len, len, "output length"))
			return;
		ASSERT_EQ(get16(r.out + l4), (__u16)cases[c].ev, "UDP sport = EV low 16 bits");
		ASSERT_EQ(get16(EPH_AT(r.out, reply_port)), LOCAL_SPORT,
			  "reply_port = the socket's port (network order)");
		ttx = get_ne64(EPH_AT(r.out, t_tx_ns));
		ASSERT_TRUE(ttx >= t0 && ttx <= t1, "t_tx_ns within the test's window");
		ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid after stamping");
		if (cases[c].ipv6)
			ASSERT_EQ(get32(r.out + ETH_LEN), cases[c].word0,
				  "IPv6 word 0 (flow label)");
		memcpy(exp, pkt, len);
		put16(exp + l4, (__u16)cases[c].ev);
		memcpy(exp + l4 + 6, r.out + l4 + 6, 2);
		put16(EPH_AT(exp, reply_port), LOCAL_SPORT);
		memcpy(EPH_AT(exp, t_tx_ns), EPH_AT(r.out, t_tx_ns), 8);
		if (cases[c].ipv6)
			put32(exp + ETH_LEN, cases[c].word0);
		ASSERT_MEM_EQ(r.out, exp, len, "nothing else changed");
		want.probes_stamped++;
		expect_ctl(&want);
		if (test_state.failed != before) {
			fprintf(stderr, "  (ipv6 %d, ev 0x%08x, flags %u)\n", cases[c].ipv6,
				cases[c].ev, cases[c].flags);
			return;
		}
	}
	/* IPv4 without a UDP checksum: stays without. */
	{
		struct hdrs h = tx4();
		struct ep_spec e = probe_out(0xBEEF, 0);

		h.zero_csum = 1;
		len = ep_frame(pkt, &h, &e);
		run_tc(pkt, len, &r);
		ASSERT_EQ(r.ret, TC_ACT_OK, "verdict TC_ACT_OK (no checksum)");
		ASSERT_EQ(get16(r.out + l4_off(pkt)), 0xBEEF, "sport stamped (no checksum)");
		ASSERT_EQ(get16(r.out + l4_off(pkt) + 6), 0, "absent checksum stays 0");
		want.probes_stamped++;
		expect_ctl(&want);
	}
	/* Port status: as mrcd sent it. */
	{
		struct hdrs h = tx4();
		struct ep_spec e = probe_out(0xBEEF, 0);

		e.kind = MRC_EP_PORT_STATUS;
		e.status = 1;
		len = ep_frame(pkt, &h, &e);
		run_tc(pkt, len, &r);
		expect_untouched(&r, pkt, len, TC_ACT_OK);
		expect_ctl(&want);
	}
	/* A request cut short of its header: left alone, not stamped. */
	{
		struct hdrs h = tx4();
		struct ep_spec e = probe_out(0xBEEF, 0);
		__u8 m[128];
		size_t mlen = build_eph(m, &e);

		len = build_udp(&h, m, mlen - 1, pkt);
		run_tc(pkt, len, &r);
		expect_untouched(&r, pkt, len, TC_ACT_OK);
		expect_ctl(&want);
	}
	/*
	 * A request whose UDP length stops short of its header while the
	 * frame goes on (found by mrc-fuzz): the bytes behind the datagram
	 * are not its own. Stamping t_tx_ns there broke the checksum the
	 * datagram's length defines; now it is left alone.
	 */
	{
		struct hdrs h = tx4();
		struct ep_spec e = probe_out(0xBEEF, 0);

		len = ep_frame(pkt, &h, &e);
		set_udp_len(pkt, (__u16)(UDP_LEN + BTH_LEN + EPH_LEN - 8));
		udp_csum_fill(pkt);
		run_tc(pkt, len, &r);
		expect_untouched(&r, pkt, len, TC_ACT_OK);
		ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum still valid");
		expect_ctl(&want);
	}
}

/* ====================================================================== */
/* Tests: endpoint messages only for known peers and mrcd's own ports     */
/* ====================================================================== */

/*
 * EV probes are answered only for peers mrcd serves (a QP's peer or one
 * it was configured with): from an address it does not know, or knows
 * only as the target of its own `mrcctl probe`, a probe is dropped, never
 * reflected, and counted in probes_refused, ep_dropped and the bad_source
 * drop reason; IPv4 and IPv6. The same probe from a QP peer is then
 * answered, its UDP checksum right when recomputed from scratch.
 */
TEST_CASE(test_ep_probe_unknown_source, "mrc.ep_probe_unknown_source")
{
	struct mrc_ctl_stats want = {};
	struct mrc_drop_stats drops = {};
	__u8 pkt[PKT_MAX];
	size_t len;
	int v6, known;
	struct run r;

	setup_qp(1);
	for (known = 0; known < 2; known++) {
		if (known)
			know_test_peers(MRC_KNOWN_PROBED);
		for (v6 = 0; v6 < 2; v6++) {
			struct hdrs h = v6 ? rx6() : rx4();
			struct ep_spec e = probe_req();

			if (!known)
				h.src = v6 ? stranger6 : stranger4;
			len = ep_frame(pkt, &h, &e);
			run_xdp(pkt, len, &r);
			expect_xdp_drop(&r);
			want.probes_refused++;
			want.ep_dropped++;
			drops.bad_source++;
			expect_ctl(&want);
			expect_drops(&drops);
		}
	}
	know_test_peers(MRC_KNOWN_QP | MRC_KNOWN_PROBED);
	for (v6 = 0; v6 < 2; v6++) {
		struct hdrs h = v6 ? rx6() : rx4();
		struct ep_spec e = probe_req();

		len = ep_frame(pkt, &h, &e);
		run_xdp(pkt, len, &r);
		ASSERT_EQ(r.ret, XDP_TX, "known peer: answered");
		ASSERT_EQ(r.out[l4_off(pkt) + UDP_LEN], MRC_OP_EP_RESPONSE, "opcode EP_RESPONSE");
		ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum right (recomputed)");
		want.probes_answered++;
		expect_ctl(&want);
		expect_drops(&drops);
	}
	ASSERT_EQ(drain_ev_events(), 0, "no EV events");
}

/*
 * A probe response is steered only when it can answer a probe mrcd sent:
 * from a known peer, naming one of mrcd's probe sockets. Naming port 22,
 * or any port that is no probe socket, it is dropped (responses_bad_port,
 * ep_dropped; not a drop reason: the packet is well formed); from an
 * unknown source it is dropped whatever it names (responses_refused,
 * ep_dropped, bad_source). Then the same response, from the peer to
 * mrcd's port, is steered there.
 */
TEST_CASE(test_ep_response_refused, "mrc.ep_response_refused")
{
	static const __u16 foreign_ports[] = { 22, 40405, MRC_UDP_PORT_DEFAULT };
	struct mrc_ctl_stats want = {};
	struct mrc_drop_stats drops = {};
	__u8 pkt[PKT_MAX];
	size_t len, i;
	int v6;
	struct run r;

	setup_qp(1);
	know_test_peers(MRC_KNOWN_QP);
	add_probe_port(40404);
	for (v6 = 0; v6 < 2; v6++) {
		for (i = 0; i < sizeof(foreign_ports) / sizeof(foreign_ports[0]); i++) {
			struct hdrs h = v6 ? rx6() : rx4();
			struct ep_spec e = probe_req();

			e.opcode = MRC_OP_EP_RESPONSE;
			e.reply_port = foreign_ports[i];
			len = ep_frame(pkt, &h, &e);
			run_xdp(pkt, len, &r);
			expect_xdp_drop(&r);
			want.responses_bad_port++;
			want.ep_dropped++;
			expect_ctl(&want);
			expect_drops(&drops);
		}
		{
			struct hdrs h = v6 ? rx6() : rx4();
			struct ep_spec e = probe_req();

			e.opcode = MRC_OP_EP_RESPONSE;
			e.reply_port = 40404;
			h.src = v6 ? stranger6 : stranger4;
			len = ep_frame(pkt, &h, &e);
			run_xdp(pkt, len, &r);
			expect_xdp_drop(&r);
			want.responses_refused++;
			want.ep_dropped++;
			drops.bad_source++;
			expect_ctl(&want);
			expect_drops(&drops);
		}
		{
			struct hdrs h = v6 ? rx6() : rx4();
			struct ep_spec e = probe_req();

			e.opcode = MRC_OP_EP_RESPONSE;
			e.reply_port = 40404;
			len = ep_frame(pkt, &h, &e);
			run_xdp(pkt, len, &r);
			ASSERT_EQ(r.ret, XDP_PASS, "peer to mrcd's port: passed");
			ASSERT_EQ(get16(r.out + l4_off(pkt) + 2), 40404, "steered to 40404");
			ASSERT_TRUE(udp_csum_ok(r.out), "UDP checksum valid");
			want.probe_responses++;
			expect_ctl(&want);
		}
	}
}

/*
 * Port status is passed to mrcd only from a peer it serves: from an
 * unknown address, or one known only as a probe target, it is dropped
 * with its destination port unchanged (no steering to the agent) and
 * counted in port_status_refused, ep_dropped and bad_source.
 */
TEST_CASE(test_ep_port_status_unknown, "mrc.ep_port_status_unknown")
{
	struct mrc_global_cfg cfg = { .agent_port = 45454 };
	struct ep_spec e = {
		.opcode = MRC_OP_EP_REQUEST, .kind = MRC_EP_PORT_STATUS, .plane = 1,
		.status = 0,
	};
	struct mrc_ctl_stats want = {};
	struct mrc_drop_stats drops = {};
	__u8 pkt[PKT_MAX];
	__u32 zero = 0;
	size_t len;
	int v6, known;
	struct run r;

	setup_qp(1);
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_cfg), &zero, &cfg, BPF_ANY), 0,
		  "set mrc_cfg.agent_port");
	for (known = 0; known < 2; known++) {
		if (known)
			know_test_peers(MRC_KNOWN_PROBED);
		for (v6 = 0; v6 < 2; v6++) {
			struct hdrs h = v6 ? rx6() : rx4();

			if (!known)
				h.src = v6 ? stranger6 : stranger4;
			len = ep_frame(pkt, &h, &e);
			run_xdp(pkt, len, &r);
			expect_xdp_drop(&r);
			ASSERT_EQ(get16(r.out + l4_off(pkt) + 2), MRC_UDP_PORT_DEFAULT,
				  "not steered to the agent");
			want.port_status_refused++;
			want.ep_dropped++;
			drops.bad_source++;
			expect_ctl(&want);
			expect_drops(&drops);
		}
	}
	know_test_peers(MRC_KNOWN_QP);
	{
		struct hdrs h = rx4();

		len = ep_frame(pkt, &h, &e);
		run_xdp(pkt, len, &r);
		ASSERT_EQ(r.ret, XDP_PASS, "QP peer: passed");
		ASSERT_EQ(get16(r.out + l4_off(pkt) + 2), 45454, "steered to agent_port");
		want.port_status_rx++;
		expect_ctl(&want);
	}
}

/* Set the IP layer's length: IPv4 total length (checksum redone), IPv6 payload. */
static void set_ip_len(__u8 *pkt, __u16 l4_bytes)
{
	__u8 *ip = pkt + ETH_LEN;

	if (pkt_is_ipv6(pkt)) {
		put16(ip + 4, l4_bytes);
	} else {
		put16(ip + 2, (__u16)(20 + l4_bytes));
		ipv4_csum_fill(pkt);
	}
}

/*
 * An EP request whose UDP length disagrees with the IP layer is malformed
 * and dropped before any answer is built (MALFORMED, ep_dropped), even
 * with a UDP checksum right for the length it claims: UDP shorter than the
 * IP payload (4 bytes the checksum does not cover), or longer than it (the
 * frame holds the bytes). An IPv6 request without a checksum is dropped
 * too. A request with 4 bytes more than the header, both lengths agreeing,
 * is answered with a UDP checksum right when recomputed from scratch.
 */
TEST_CASE(test_ep_bad_udp_length, "mrc.ep_bad_udp_length")
{
	struct mrc_ctl_stats want = {};
	struct mrc_drop_stats drops = {};
	struct ep_spec e = probe_req();
	__u8 pkt[PKT_MAX], m[128];
	size_t mlen, len;
	int v6;
	struct run r;

	setup_qp(1);
	know_test_peers(MRC_KNOWN_QP);
	mlen = build_eph(m, &e);
	memset(m + mlen, 0xA5, 4);
	for (v6 = 0; v6 < 2; v6++) {
		struct hdrs h = v6 ? rx6() : rx4();

		/* UDP says the header alone, IP carries 4 bytes more. */
		len = build_udp(&h, m, mlen + 4, pkt);
		set_udp_len(pkt, (__u16)(UDP_LEN + mlen));
		udp_csum_fill(pkt);
		run_xdp(pkt, len, &r);
		expect_xdp_drop(&r);
		want.ep_dropped++;
		drops.malformed++;
		expect_ctl(&want);
		expect_drops(&drops);
		/* UDP says 4 bytes more than the IP payload (the frame has them). */
		len = build_udp(&h, m, mlen + 4, pkt);
		set_ip_len(pkt, (__u16)(UDP_LEN + mlen));
		run_xdp(pkt, len, &r);
		expect_xdp_drop(&r);
		want.ep_dropped++;
		drops.malformed++;
		expect_ctl(&want);
		expect_drops(&drops);
		/* Both agree: answered, checksum right. */
		len = build_udp(&h, m, mlen + 4, pkt);
		ASSERT_TRUE(udp_csum_ok(pkt), "input checksum valid");
		run_xdp(pkt, len, &r);
		if (!ASSERT_EQ(r.ret, XDP_TX, "lengths agree: answered"))
			return;
		ASSERT_EQ(r.out_len, len, "output length");
		ASSERT_TRUE(udp_csum_ok(r.out), "answer's UDP checksum right (recomputed)");
		if (!v6)
			ASSERT_TRUE(ipv4_csum_ok(r.out), "IPv4 header checksum right");
		want.probes_answered++;
		expect_ctl(&want);
	}
	/* IPv6 without a UDP checksum. */
	{
		struct hdrs h = rx6();

		len = build_udp(&h, m, mlen, pkt);
		put16(pkt + l4_off(pkt) + 6, 0);
		run_xdp(pkt, len, &r);
		expect_xdp_drop(&r);
		want.ep_dropped++;
		drops.malformed++;
		expect_ctl(&want);
		expect_drops(&drops);
	}
	ASSERT_EQ(drain_ev_events(), 0, "no EV events");
}

/*
 * An EV probe in an SRv6 envelope is answered in one: the same uSID, so
 * the answer crosses the spine the request did. The inner answer is the
 * one a plain request gets (addresses swapped, EP_RESPONSE, checksum
 * valid); the envelope is a sender's (Segments Left 1, outer destination
 * the carrier, segment 0 the requester).
 */
TEST_CASE(test_srv6_ep_probe_answered, "mrc.srv6_ep_probe_answered")
{
	__u8 pkt[PKT_MAX], wrapped[PKT_MAX], inner[PKT_MAX], plain_out[PKT_MAX];
	struct mrc_ctl_stats want = { .probes_answered = 1 };
	struct ep_spec e = probe_req();
	struct hdrs h = rx6();
	size_t len, wlen, l4;
	struct run r;

	setup_qp(2);
	know_test_peers(MRC_KNOWN_QP);
	h.sport = 0x1234;
	len = ep_frame(pkt, &h, &e);
	l4 = l4_off(pkt);
	run_xdp(pkt, len, &r);
	if (!ASSERT_EQ(r.ret, XDP_TX, "plain request: XDP_TX"))
		return;
	memcpy(plain_out, r.out, len);

	wlen = srv6_wrap(wrapped, pkt, len, carrier_1001);
	run_xdp(wrapped, wlen, &r);
	if (!ASSERT_EQ(r.err, 0, "test_run") ||
	    !ASSERT_EQ(r.ret, XDP_TX, "verdict XDP_TX") ||
	    !ASSERT_EQ(r.out_len, wlen, "answer as long as the request"))
		return;
	expect_envelope(r.out, len, carrier_1001);
	ASSERT_MEM_EQ(r.out + ETH_LEN + IP6_LEN + 8, peer6, 16,
		      "segment 0: the requester");
	srv6_inner(inner, r.out, r.out_len);
	ASSERT_TRUE(udp_csum_ok(inner), "inner UDP checksum valid");
	memcpy(EPH_AT(plain_out, service_ns), EPH_AT(inner, service_ns), 4);
	memcpy(plain_out + l4 + 6, inner + l4 + 6, 2);
	ASSERT_MEM_EQ(inner, plain_out, len, "inner = the plain answer");
	want.probes_answered = 2;
	expect_ctl(&want);
	expect_drops(&no_drops);
}

/*
 * mrcd's probe of an SRv6 EV (flag MRC_EPH_F_SRV6, block in srv6_block):
 * stamped as any probe (port, label 0, reply_port, t_tx_ns), then put in
 * the envelope of the EV's uSID. Without a block it is not sent.
 */
TEST_CASE(test_srv6_tc_stamp_probe, "mrc.srv6_tc_stamp_probe")
{
	__u8 pkt[PKT_MAX], inner[PKT_MAX], carrier[16];
	struct mrc_drop_stats drops = {};
	struct ep_spec e = probe_out(0x1002BEEF, MRC_EPH_F_SRV6);
	struct hdrs h = tx6();
	size_t len, l4;
	struct run r;

	setup_qp(1);
	len = ep_frame(pkt, &h, &e);
	l4 = l4_off(pkt);
	put32(EPH_AT(pkt, srv6_block), 0xfd000005);
	udp_csum_fill(pkt);
	run_tc(pkt, len, &r);
	if (!ASSERT_EQ(r.ret, TC_ACT_OK, "verdict TC_ACT_OK") ||
	    !ASSERT_EQ(r.out_len, len + ENV_LEN, "probe in an envelope"))
		return;
	memcpy(carrier, carrier_1001, 16);
	carrier[5] = 0x02;
	expect_envelope(r.out, len, carrier);
	srv6_inner(inner, r.out, r.out_len);
	ASSERT_EQ(get16(inner + l4), 0xBEEF, "inner sport = EV low 16 bits");
	ASSERT_EQ(get32(inner + ETH_LEN), 0x60000000, "inner flow label 0");
	ASSERT_EQ(get16(EPH_AT(inner, reply_port)), LOCAL_SPORT, "reply_port saved");
	ASSERT_TRUE(udp_csum_ok(inner), "inner UDP checksum valid");

	put32(EPH_AT(pkt, srv6_block), 0);
	udp_csum_fill(pkt);
	run_tc(pkt, len, &r);
	ASSERT_EQ(r.ret, TC_ACT_SHOT, "no block: TC_ACT_SHOT");
	drops.malformed = 1;
	expect_drops(&drops);
}
