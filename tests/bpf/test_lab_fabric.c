// SPDX-License-Identifier: GPL-2.0
/*
 * BPF unit tests of lab/lab_fabric.bpf.c, the lab's switch-port emulator.
 *
 * Every test runs the tc programs on crafted packets through
 * bpf_prog_test_run_opts(): no devices, no traffic, deterministic. The
 * kernel runs tc test packets on the loopback device of the current netns,
 * so each test registers the port (netns cookie, ifindex 1, hook) in
 * lab_ports with a port_id and link_id of its own, so that queue and
 * counter state never leaks from one test into the next.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lab_abi.h"
#include "lab_fabric.skel.h"
#include "test.h"
#include "packet.h"

TEST_STATE_DEFINE;

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

#define TC_ACT_OK	0
#define TC_ACT_SHOT	2

#define LO_IFINDEX	1
#define MRC_BASE_LEN	32	/* BTH + METH + RETH */
#define PKT_MAX		2048

#define PRIO_CLASS	(LAB_TC_HANDLE_MAJOR << 16 | LAB_TC_CLASS_PRIO)
#define DATA_CLASS	(LAB_TC_HANDLE_MAJOR << 16 | LAB_TC_CLASS_DATA)
/*
 * HTB's direct queue (skb->priority = the qdisc's handle): where a header
 * trimmed at this port goes, unshaped, since the qdisc would charge it the
 * length it had before the trim.
 */
#define DIRECT_CLASS	(LAB_TC_HANDLE_MAJOR << 16)

/* Slow drain: 1000 bytes/s, so the backlog barely moves during a test. */
#define SLOW_RATE	8000

static struct lab_fabric *skel;
static __u64 netns_cookie;
static int ncpus;
static __u32 next_id = 1;

/* ====================================================================== */
/* Packet builder                                                         */
/* ====================================================================== */

struct pkt_spec {
	int	ipv6;
	__u8	tos;		/* IPv4 TOS or IPv6 traffic class */
	__u16	dport;
	int	mrc;		/* MRC headers after UDP */
	__u8	opcode;
	__u8	bth_flags;	/* MRC_BTH_F_* */
	__u32	payload;	/* bytes after the last header */
};

static const __u8 mac_dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
static const __u8 mac_src[6] = { 0x02, 0, 0, 0, 0, 0x01 };

static size_t build_eth(__u8 *p, __u16 proto)
{
	memcpy(p, mac_dst, 6);
	memcpy(p + 6, mac_src, 6);
	put16(p + 12, proto);
	return ETH_LEN;
}

/* IPv4 header, DF set; its checksum is filled once the length is known. */
static size_t build_ipv4(__u8 *ip, __u8 tos, __u16 tot_len)
{
	static const __u8 addrs[8] = { 10, 9, 0, 1, 10, 9, 0, 2 };

	memset(ip, 0, IP4_LEN);
	ip[0] = 0x45;
	ip[1] = tos;
	put16(ip + 2, tot_len);
	put16(ip + 4, 0x1234);
	put16(ip + 6, 0x4000);
	ip[8] = 64;
	ip[9] = 17;
	memcpy(ip + 12, addrs, 8);
	return IP4_LEN;
}

/* IPv6 header with a non-zero flow label, so the tclass rewrite must not
 * spill into it. */
static size_t build_ipv6(__u8 *ip, __u8 tclass, __u16 payload_len)
{
	static const __u8 src[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	static const __u8 dst[16] = { 0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };
	__u32 flow = 0xABCDE;

	put32(ip, 6u << 28 | (__u32)tclass << 20 | flow);
	put16(ip + 4, payload_len);
	ip[6] = 17;
	ip[7] = 64;
	memcpy(ip + 8, src, 16);
	memcpy(ip + 24, dst, 16);
	return IP6_LEN;
}

/* MRC data/control headers: BTH, METH, [TSETH], RETH, [IMM]. */
static size_t build_mrc(__u8 *m, __u8 opcode, __u8 bth_flags)
{
	size_t n = 0;

	m[n++] = opcode;
	m[n++] = 0;
	put16(m + n, 0xffff);			n += 2;	/* pkey */
	put32(m + n, 0x00123456);		n += 4;	/* dqpn */
	put32(m + n, (__u32)bth_flags << 24 | 0x000abc); n += 4;
	put16(m + n, 7);			n += 2;	/* wimm_msn */
	put16(m + n, 9);			n += 2;	/* msn */
	if (bth_flags & MRC_BTH_F_TS) {
		put16(m + n, 0x4321);		n += 2;
		put16(m + n, 0);		n += 2;
	}
	put32(m + n, 0x00007f00);		n += 4;	/* vaddr */
	put32(m + n, 0x12340000);		n += 4;
	put32(m + n, 0xcafe);			n += 4;	/* rkey */
	put32(m + n, 65536);			n += 4;	/* length */
	if (mrc_opcode_has_imm(opcode)) {
		put32(m + n, 0xfeedf00d);	n += 4;
	}
	return n;
}

/* A complete Ethernet frame with correct IPv4 and UDP checksums. */
static size_t build_pkt(const struct pkt_spec *s, __u8 *buf)
{
	size_t l3 = build_eth(buf, s->ipv6 ? 0x86DD : 0x0800);
	size_t l4 = l3 + (s->ipv6 ? IP6_LEN : IP4_LEN);
	size_t n = l4 + UDP_LEN, i;

	if (s->mrc)
		n += build_mrc(buf + n, s->opcode, s->bth_flags);
	for (i = 0; i < s->payload; i++)
		buf[n + i] = (__u8)(i * 7 + 3);
	n += s->payload;

	put16(buf + l4, 49152);			/* sport */
	put16(buf + l4 + 2, s->dport);
	put16(buf + l4 + 4, (__u16)(n - l4));
	if (s->ipv6) {
		build_ipv6(buf + l3, s->tos, (__u16)(n - l4));
	} else {
		build_ipv4(buf + l3, s->tos, (__u16)(n - l3));
		ipv4_csum_fill(buf);
	}
	udp_csum_fill(buf);
	return n;
}

/* A UDP frame of exactly `len` bytes to a non-MRC port. */
static size_t build_udp_frame(__u8 *buf, int ipv6, __u8 tos, size_t len)
{
	struct pkt_spec s = { .ipv6 = ipv6, .tos = tos, .dport = 9999 };

	s.payload = (__u32)(len - ETH_LEN - (ipv6 ? IP6_LEN : IP4_LEN) - UDP_LEN);
	return build_pkt(&s, buf);
}

static struct pkt_spec mrc_spec(int ipv6, __u8 opcode, __u8 flags, __u32 payload)
{
	struct pkt_spec s = {
		.ipv6 = ipv6, .tos = 0x02, .dport = MRC_UDP_PORT_DEFAULT,
		.mrc = 1, .opcode = opcode, .bth_flags = flags, .payload = payload,
	};
	return s;
}

/* ====================================================================== */
/* Map seeding and program runs                                           */
/* ====================================================================== */

struct port {
	__u32 id;	/* port_id and link_id: one of each per test */
	int prog_fd;
	__u32 ifindex;	/* device test_run sets on the skb; 0 = loopback */
};

static int current_netns_cookie(__u64 *cookie)
{
	socklen_t len = sizeof(*cookie);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err;

	if (fd < 0)
		return -errno;
	err = getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len) ? -errno : 0;
	close(fd);
	return err;
}

static struct lab_port_key port_key(__u32 hook)
{
	struct lab_port_key key = {
		.netns_cookie = netns_cookie, .ifindex = LO_IFINDEX, .hook = hook,
	};
	return key;
}

/* Forget both hooks' registrations, so a test sees only its own port. */
static void unregister_ports(void)
{
	struct lab_port_key k;
	__u32 hook;

	for (hook = LAB_HOOK_INGRESS; hook <= LAB_HOOK_EGRESS; hook++) {
		k = port_key(hook);
		bpf_map_delete_elem(bpf_map__fd(skel->maps.lab_ports), &k);
	}
}

static int zero_port_state(__u32 id)
{
	struct lab_port_stats *st = calloc((size_t)ncpus, sizeof(*st));
	struct lab_queue q = {};
	int err;

	if (!st)
		return -ENOMEM;
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.lab_stats), &id, st, BPF_ANY);
	if (!err)
		err = bpf_map_update_elem(bpf_map__fd(skel->maps.lab_queues), &id, &q,
					  BPF_ANY);
	free(st);
	return err;
}

static int prog_fd_for(__u32 hook)
{
	return bpf_program__fd(hook == LAB_HOOK_EGRESS ? skel->progs.lab_port_egress :
				skel->progs.lab_port_ingress);
}

/* A fresh port_id on a fresh link configured as `cfg`, state zeroed. */
static struct port new_port(__u32 hook, const struct lab_link_cfg *cfg)
{
	struct port p = { .id = next_id++, .prog_fd = prog_fd_for(hook) };
	int err;

	err = bpf_map_update_elem(bpf_map__fd(skel->maps.lab_links), &p.id, cfg, BPF_ANY);
	ASSERT_EQ(err, 0, "seed lab_links");
	ASSERT_EQ(zero_port_state(p.id), 0, "zero lab_stats/lab_queues");
	return p;
}

/* Make `key` (netns, device, hook) the attachment point of port `p`. */
static void register_port(const struct lab_port_key *key, const struct port *p,
			  __u32 flags)
{
	struct lab_port val = { .port_id = p->id, .link_id = p->id, .flags = flags };
	int err = bpf_map_update_elem(bpf_map__fd(skel->maps.lab_ports), key, &val,
				      BPF_ANY);

	ASSERT_EQ(err, 0, "seed lab_ports");
}

/* A fresh port registered on loopback at `hook`. */
static struct port add_port(__u32 hook, __u32 flags, const struct lab_link_cfg *cfg)
{
	struct port p = new_port(hook, cfg);
	struct lab_port_key key = port_key(hook);

	register_port(&key, &p, flags);
	return p;
}

/* The common case: only this port is registered. */
static struct port setup_port(__u32 hook, __u32 flags, const struct lab_link_cfg *cfg)
{
	unregister_ports();
	return add_port(hook, flags, cfg);
}

/* Start a port's queue at `backlog` bytes, as if traffic had just left it. */
static void seed_backlog(const struct port *p, __u64 backlog)
{
	struct lab_queue q = { .backlog = backlog };
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* bpf_ktime_get_ns() clock */
	q.last_ns = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
	ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(skel->maps.lab_queues), &p->id, &q,
				      BPF_ANY), 0, "seed lab_queues backlog");
}

static struct lab_port_stats read_stats(const struct port *p)
{
	struct lab_port_stats sum = {}, *st = calloc((size_t)ncpus, sizeof(*st));
	int i;

	if (!st || bpf_map_lookup_elem(bpf_map__fd(skel->maps.lab_stats), &p->id, st)) {
		ASSERT_TRUE(0, "read lab_stats");
		free(st);
		return sum;
	}
	for (i = 0; i < ncpus; i++) {
		sum.packets += st[i].packets;
		sum.bytes += st[i].bytes;
		sum.drop_fault += st[i].drop_fault;
		sum.drop_queue += st[i].drop_queue;
		sum.ecn_marked += st[i].ecn_marked;
		sum.trimmed += st[i].trimmed;
		sum.malformed += st[i].malformed;
	}
	free(st);
	return sum;
}

/* Counter expectations; fields not named must be zero. */
static void expect_stats(const struct port *p, const struct lab_port_stats *want)
{
	struct lab_port_stats got = read_stats(p);

	ASSERT_EQ(got.packets, want->packets, "stats.packets");
	ASSERT_EQ(got.bytes, want->bytes, "stats.bytes");
	ASSERT_EQ(got.drop_fault, want->drop_fault, "stats.drop_fault");
	ASSERT_EQ(got.drop_queue, want->drop_queue, "stats.drop_queue");
	ASSERT_EQ(got.ecn_marked, want->ecn_marked, "stats.ecn_marked");
	ASSERT_EQ(got.trimmed, want->trimmed, "stats.trimmed");
	ASSERT_EQ(got.malformed, want->malformed, "stats.malformed");
}

struct run {
	int err;		/* bpf_prog_test_run_opts() */
	__u32 verdict;
	__u8 out[PKT_MAX];
	__u32 out_len;
	struct __sk_buff ctx;	/* ctx_out: priority the program set */
};

/* Run the port's program once on `pkt` as seen on loopback. */
static void run_pkt(const struct port *p, const void *pkt, size_t len, struct run *r)
{
	struct __sk_buff ctx_in = { .ifindex = p->ifindex ? p->ifindex : LO_IFINDEX };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = pkt, .data_size_in = (__u32)len,
		    .data_out = r->out, .data_size_out = sizeof(r->out),
		    .ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in),
		    .ctx_out = &r->ctx, .ctx_size_out = sizeof(r->ctx),
		    .repeat = 1);

	memset(&r->ctx, 0, sizeof(r->ctx));
	r->err = bpf_prog_test_run_opts(p->prog_fd, &opts);
	r->verdict = opts.retval;
	r->out_len = opts.data_size_out;
}

/* Name the packet of a sequence that failed an assertion. */
static void note_packet(int failed_before, int i)
{
	if (test_state.failed != failed_before)
		fprintf(stderr, "  (at packet %d of the sequence)\n", i);
}

/* The packet left the port exactly as it came in. */
static int expect_forwarded_unchanged(const struct run *r, const void *pkt, size_t len)
{
	return ASSERT_EQ(r->err, 0, "test_run") &&
	       ASSERT_EQ(r->verdict, TC_ACT_OK, "verdict") &&
	       ASSERT_EQ(r->out_len, len, "output length") &&
	       ASSERT_MEM_EQ(r->out, pkt, len, "output bytes");
}

static void expect_dropped(const struct run *r)
{
	ASSERT_EQ(r->err, 0, "test_run");
	ASSERT_EQ(r->verdict, TC_ACT_SHOT, "verdict");
}

/* ====================================================================== */
/* Expected rewrites, built independently from the input                  */
/* ====================================================================== */

static __u8 pkt_tos(const __u8 *pkt)
{
	const __u8 *ip = pkt + ETH_LEN;

	if (pkt_is_ipv6(pkt))
		return (__u8)((ip[0] & 0x0f) << 4 | ip[1] >> 4);
	return ip[1];
}

/* Set TOS/traffic class, keeping the IPv4 header checksum right. */
static void set_tos(__u8 *pkt, __u8 tos)
{
	__u8 *ip = pkt + ETH_LEN;

	if (pkt_is_ipv6(pkt)) {
		ip[0] = (__u8)((ip[0] & 0xf0) | tos >> 4);
		ip[1] = (__u8)((ip[1] & 0x0f) | tos << 4);
	} else {
		ip[1] = tos;
		ipv4_csum_fill(pkt);
	}
}

/* What a trimming switch makes of `in`: its first `len` bytes, lengths and
 * checksums fixed, the DSCP set, the ECN bits kept. */
static void expected_trim(const __u8 *in, size_t len, __u8 dscp, __u8 *exp)
{
	size_t l4 = l4_off(in);

	memcpy(exp, in, len);
	put16(exp + l4 + 4, (__u16)(len - l4));
	if (pkt_is_ipv6(exp))
		put16(exp + ETH_LEN + 4, (__u16)(len - l4));
	else
		put16(exp + ETH_LEN + 2, (__u16)(len - ETH_LEN));
	set_tos(exp, (__u8)(dscp << 2 | (pkt_tos(in) & 3)));
	udp_csum_fill(exp);
}

/* `r` is the trim of `in` to `len` bytes with `dscp`, valid checksums. */
static void expect_trimmed(const struct run *r, const __u8 *in, size_t len, __u8 dscp)
{
	__u8 exp[PKT_MAX];

	if (!ASSERT_EQ(r->err, 0, "test_run") ||
	    !ASSERT_EQ(r->verdict, TC_ACT_OK, "verdict") ||
	    !ASSERT_EQ(r->out_len, len, "trimmed length"))
		return;
	if (!pkt_is_ipv6(r->out))
		ASSERT_TRUE(ipv4_csum_ok(r->out), "IPv4 header checksum after trim");
	ASSERT_TRUE(udp_csum_ok(r->out), "UDP checksum after trim");
	ASSERT_EQ(pkt_tos(r->out) >> 2, dscp, "DSCP after trim");
	ASSERT_EQ(pkt_tos(r->out) & 3, pkt_tos(in) & 3, "ECN kept by trim");
	expected_trim(in, len, dscp, exp);
	ASSERT_MEM_EQ(r->out, exp, len, "trimmed headers");
	ASSERT_EQ(r->ctx.priority, DIRECT_CLASS, "trimmed header: HTB direct, unshaped");
}

/* ====================================================================== */
/* Tests: registration and plain forwarding                               */
/* ====================================================================== */

static const struct lab_link_cfg cfg_none;

static void test_unregistered_port_passes(void)
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
static void test_port_on_other_device(void)
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
	bpf_map_delete_elem(bpf_map__fd(skel->maps.lab_ports), &key);
}

/* Egress blackholes on another device and in another netns: every field
 * of the key must match, or loopback's packet is not ours. */
static void test_port_key_must_match(void)
{
	struct lab_link_cfg cfg = { .blackhole = 1 };
	struct lab_port_key other_dev = port_key(LAB_HOOK_EGRESS);
	struct lab_port_key other_ns = port_key(LAB_HOOK_EGRESS);
	int fd = bpf_map__fd(skel->maps.lab_ports);
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

static void test_forward_plain(void)
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

static void test_rehash_forwards_unchanged(void)
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

static void test_blackhole(void)
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

static void test_drop_all(void)
{
	struct lab_link_cfg cfg = { .drop_ppm = 1000000 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	struct lab_port_stats want = { .drop_fault = 50 };

	ASSERT_EQ(send_count_drops(&p, 50), 50, "drops at 100%");
	expect_stats(&p, &want);
}

static void test_drop_none(void)
{
	struct lab_link_cfg cfg = { .drop_ppm = 0 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	struct lab_port_stats want = { .packets = 50, .bytes = 50 * 200 };

	ASSERT_EQ(send_count_drops(&p, 50), 0, "drops at 0%");
	expect_stats(&p, &want);
}

static void test_drop_half(void)
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

static void test_queue_tail_drop(void)
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

static void test_queue_rate_zero_no_queue(void)
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

/* ====================================================================== */
/* Tests: ECN marking                                                     */
/* ====================================================================== */

static const struct lab_link_cfg cfg_ecn = {
	.rate_bps = SLOW_RATE, .ecn_thresh = 2000, .queue_limit = 1000000,
};

/* `r` is `in` with CE set and nothing else changed (checksum fixed). */
static void expect_ce_marked(const struct run *r, const __u8 *in, size_t len)
{
	__u8 exp[PKT_MAX];

	if (!ASSERT_EQ(r->err, 0, "test_run") ||
	    !ASSERT_EQ(r->verdict, TC_ACT_OK, "verdict") ||
	    !ASSERT_EQ(r->out_len, len, "output length"))
		return;
	ASSERT_EQ(pkt_tos(r->out), pkt_tos(in) | 3, "tos with CE");
	if (!pkt_is_ipv6(r->out))
		ASSERT_TRUE(ipv4_csum_ok(r->out), "IPv4 header checksum after CE");
	memcpy(exp, in, len);
	set_tos(exp, pkt_tos(in) | 3);
	ASSERT_MEM_EQ(r->out, exp, len, "CE-marked packet");
}

/* Six 1000-byte frames into an ECN port (hook, port flags): the 4th
 * (backlog 3000) and later are above the 2000-byte threshold and marked
 * if the packet is ECT. */
static void run_ecn_sequence_at(__u32 hook, __u32 flags, int ipv6, __u8 tos,
				int expect_marks)
{
	struct port p = setup_port(hook, flags, &cfg_ecn);
	struct lab_port_stats want = { .packets = 6, .bytes = 6000 };
	__u8 pkt[PKT_MAX];
	size_t len = build_udp_frame(pkt, ipv6, tos, 1000);
	struct run r;
	int i;

	for (i = 0; i < 6; i++) {
		int before = test_state.failed;

		run_pkt(&p, pkt, len, &r);
		if (i >= 3 && expect_marks)
			expect_ce_marked(&r, pkt, len);
		else
			expect_forwarded_unchanged(&r, pkt, len);
		note_packet(before, i);
	}
	want.ecn_marked = expect_marks ? 3 : 0;
	expect_stats(&p, &want);
}

/* A core port (leaf to spine, spine to leaf): egress, no flags. */
static void run_ecn_sequence(int ipv6, __u8 tos, int expect_marks)
{
	run_ecn_sequence_at(LAB_HOOK_EGRESS, 0, ipv6, tos, expect_marks);
}

static void test_ecn_ipv4(void)
{
	/* DSCP 10 + ECT(0): the DSCP bits must survive the mark. */
	run_ecn_sequence(0, 0x2A, 1);
}

static void test_ecn_ipv4_ect1(void)
{
	run_ecn_sequence(0, 0x01, 1);
}

static void test_ecn_not_ect(void)
{
	run_ecn_sequence(0, 0x28, 0);
	run_ecn_sequence(1, 0x28, 0);
}

/*
 * A packet a port before this one marked (CE already) passes unchanged
 * and is not counted again: ecn_marked counts the marks a port made, so
 * a path's marks add up to the CE marks its receiver sees.
 */
static void test_ecn_already_ce(void)
{
	run_ecn_sequence(0, 0x2B, 0);
	run_ecn_sequence(1, 0x03, 0);
}

static void test_ecn_ipv6(void)
{
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_ecn);
	__u8 pkt[PKT_MAX];
	size_t len = build_udp_frame(pkt, 1, 0x2A, 1000);
	struct run r;
	int i;

	seed_backlog(&p, 3000);
	for (i = 0; i < 2; i++) {
		run_pkt(&p, pkt, len, &r);
		expect_ce_marked(&r, pkt, len);
		/* Version 6, tclass 0x2B, flow label 0xABCDE: 62 BA BC DE. */
		ASSERT_EQ(r.out[ETH_LEN], 0x62, "IPv6 byte 0");
		ASSERT_EQ(r.out[ETH_LEN + 1], 0xBA, "IPv6 byte 1");
		ASSERT_EQ(get16(r.out + ETH_LEN + 2), 0xBCDE, "IPv6 flow label low");
	}
	ASSERT_EQ(read_stats(&p).ecn_marked, 2, "stats.ecn_marked");
}

/* ====================================================================== */
/* Tests: trimming                                                        */
/* ====================================================================== */

static const struct lab_link_cfg cfg_trim = {
	.rate_bps = SLOW_RATE, .trim_thresh = 2000, .queue_limit = 1000000,
};

static size_t hdr_len(const struct pkt_spec *s)
{
	return ETH_LEN + (s->ipv6 ? IP6_LEN : IP4_LEN) + UDP_LEN +
	       mrc_data_header_len(s->opcode, s->bth_flags);
}

/* Two full packets fill the queue past 2000 bytes; the next three are
 * trimmed to their headers, marked with `dscp`. */
static void run_trim_sequence(const struct pkt_spec *s, __u32 port_flags, __u8 dscp)
{
	struct port p = setup_port(LAB_HOOK_EGRESS, port_flags, &cfg_trim);
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(s, pkt), hlen = hdr_len(s);
	struct lab_port_stats want = {
		.packets = 5, .bytes = 2 * len + 3 * hlen, .trimmed = 3,
	};
	struct run r;
	int i;

	for (i = 0; i < 5; i++) {
		int before = test_state.failed;

		run_pkt(&p, pkt, len, &r);
		if (i < 2) {
			expect_forwarded_unchanged(&r, pkt, len);
			ASSERT_EQ(r.ctx.priority, DATA_CLASS, "data class");
		} else {
			expect_trimmed(&r, pkt, hlen, dscp);
		}
		note_packet(before, i);
	}
	expect_stats(&p, &want);
}

static void test_trim_ipv4(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 1000);

	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
}

static void test_trim_ipv4_lasthop(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 1000);

	run_trim_sequence(&s, LAB_PORT_LASTHOP, MRC_DSCP_TRIMMED_LASTHOP);
}

static void test_trim_keeps_ecn(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_FIRST, 0, 1000);

	s.tos = 0x03;	/* already CE */
	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
	s.tos = 0x00;	/* not ECN-capable */
	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
}

static void test_trim_ts_flag(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE,
				     MRC_BTH_F_TS | MRC_BTH_F_ACK_REQ, 1000);

	ASSERT_EQ(hdr_len(&s), ETH_LEN + IP4_LEN + UDP_LEN + 36, "TS header length");
	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
}

static void test_trim_imm_opcode(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_LAST_IMM, 0, 1000);

	ASSERT_EQ(hdr_len(&s), ETH_LEN + IP4_LEN + UDP_LEN + 36, "IMM header length");
	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
	/* Both extensions: 40 bytes of MRC headers. */
	s = mrc_spec(0, MRC_OP_WRITE_ONLY_IMM, MRC_BTH_F_TS, 1000);
	ASSERT_EQ(hdr_len(&s), ETH_LEN + IP4_LEN + UDP_LEN + 40, "TS+IMM header length");
	run_trim_sequence(&s, LAB_PORT_LASTHOP, MRC_DSCP_TRIMMED_LASTHOP);
}

static void test_trim_ipv6(void)
{
	struct pkt_spec s = mrc_spec(1, MRC_OP_WRITE_MIDDLE, 0, 1000);

	run_trim_sequence(&s, 0, MRC_DSCP_TRIMMED);
	s = mrc_spec(1, MRC_OP_WRITE_LAST_IMM, MRC_BTH_F_TS, 1000);
	run_trim_sequence(&s, LAB_PORT_LASTHOP, MRC_DSCP_TRIMMED_LASTHOP);
}

/*
 * CE marks come from the core only. The last hop (the leaf's port facing
 * the receiving host, LAB_PORT_LASTHOP) never marks, IPv4 or IPv6, even
 * far above the threshold: congestion there is incast, which no other
 * path of the sender avoids. The host's uplink (leaf ingress, REHASH) is
 * not the last hop and marks like the core.
 */
static void test_ecn_not_on_last_hop(void)
{
	run_ecn_sequence_at(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, 0, 0x2A, 0);
	run_ecn_sequence_at(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, 1, 0x2A, 0);
	run_ecn_sequence_at(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, 0, 0x01, 0);
	run_ecn_sequence_at(LAB_HOOK_INGRESS, LAB_PORT_REHASH, 0, 0x2A, 1);
	{
		struct port p = setup_port(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, &cfg_ecn);
		__u8 pkt[PKT_MAX];
		size_t len = build_udp_frame(pkt, 0, 0x02, 1000);
		struct run r;

		seed_backlog(&p, 400000);
		run_pkt(&p, pkt, len, &r);
		expect_forwarded_unchanged(&r, pkt, len);
		ASSERT_EQ(read_stats(&p).ecn_marked, 0, "no mark at 400 KB of backlog");
	}
}

/* ECN at 1000 bytes and trims at 3000 on one queue, MRC data (ECT(0)). */
static const struct lab_link_cfg cfg_ecn_trim = {
	.rate_bps = SLOW_RATE, .ecn_thresh = 1000, .trim_thresh = 3000,
	.queue_limit = 1000000,
};

/*
 * The same burst of MRC data into a core port and into the last hop:
 * the core marks CE between the two thresholds and trims (DSCP 0x2C)
 * above; the last hop forwards unmarked between them and trims (DSCP
 * 0x2D, ECN bits as they came) above.
 */
static void test_lasthop_trims_never_marks(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, MRC_BTH_F_TS, 1000);
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(&s, pkt), hlen = hdr_len(&s);
	int lasthop;

	for (lasthop = 0; lasthop < 2; lasthop++) {
		struct port p = setup_port(LAB_HOOK_EGRESS, lasthop ? LAB_PORT_LASTHOP : 0,
					   &cfg_ecn_trim);
		struct lab_port_stats want = {
			.packets = 5, .bytes = 3 * len + 2 * hlen, .trimmed = 2,
			.ecn_marked = lasthop ? 0 : 2,
		};
		struct run r;
		int i;

		for (i = 0; i < 5; i++) {
			int before = test_state.failed;

			run_pkt(&p, pkt, len, &r);
			if (i == 0 || (i < 3 && lasthop))
				expect_forwarded_unchanged(&r, pkt, len);
			else if (i < 3)
				expect_ce_marked(&r, pkt, len);
			else
				expect_trimmed(&r, pkt, hlen, lasthop ?
					       MRC_DSCP_TRIMMED_LASTHOP : MRC_DSCP_TRIMMED);
			note_packet(before, i);
		}
		expect_stats(&p, &want);
		if (test_state.failed)
			fprintf(stderr, "  (last hop %d)\n", lasthop);
	}
}

/* A queue with trim and tail-drop: `pkt` must never be trimmed, only
 * tail-dropped once the 5000-byte limit is reached. */
static void expect_never_trimmed(const __u8 *pkt, size_t len, __u32 want_prio)
{
	struct lab_link_cfg cfg = { .rate_bps = SLOW_RATE, .trim_thresh = 2000,
				    .queue_limit = 5000 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	int i, fit = (int)(5000 / len);
	struct lab_port_stats want = {
		.packets = (__u64)fit, .bytes = (__u64)fit * len, .drop_queue = 3,
	};
	struct run r;

	for (i = 0; i < fit + 3; i++) {
		int before = test_state.failed;

		run_pkt(&p, pkt, len, &r);
		if (i < fit) {
			expect_forwarded_unchanged(&r, pkt, len);
			ASSERT_EQ(r.ctx.priority, want_prio, "class");
		} else {
			expect_dropped(&r);
		}
		note_packet(before, i);
	}
	expect_stats(&p, &want);
}

static void test_trim_skips_non_mrc_udp(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 958);
	__u8 pkt[PKT_MAX];
	size_t len;

	s.dport = MRC_UDP_PORT_DEFAULT + 1;	/* MRC-looking, other port */
	len = build_pkt(&s, pkt);
	expect_never_trimmed(pkt, len, DATA_CLASS);
}

static void test_trim_skips_control(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_SACK, 0, 958);
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(&s, pkt);

	expect_never_trimmed(pkt, len, PRIO_CLASS);
	s = mrc_spec(1, MRC_OP_SACK, 0, 938);
	len = build_pkt(&s, pkt);
	expect_never_trimmed(pkt, len, PRIO_CLASS);
}

static void test_trim_skips_header_only(void)
{
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_trim);
	__u8 pkt[PKT_MAX];
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 0);
	size_t len = build_pkt(&s, pkt);
	struct lab_port_stats want = { .packets = 1, .bytes = len };
	struct run r;

	seed_backlog(&p, 3000);
	run_pkt(&p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	ASSERT_EQ(r.ctx.priority, DATA_CLASS, "untrimmed data class");
	expect_stats(&p, &want);
}

/*
 * A header trimmed by a switch before this one (header only, trim DSCP
 * 0x2C or 0x2D) is not cut again and keeps the priority class at every
 * later hop, so the receiver's NACK is not held up behind the data that
 * caused the trim. Header-only data without a trim DSCP (a zero-length
 * WRITE, a sender's own DSCP) stays in the data class. IPv4 and IPv6;
 * the lab's configured trim DSCPs count, not the defaults.
 */
static void test_trimmed_header_keeps_priority(void)
{
	static const struct { __u8 dscp; __u32 prio; } cases[] = {
		{ MRC_DSCP_TRIMMED, PRIO_CLASS },
		{ MRC_DSCP_TRIMMED_LASTHOP, PRIO_CLASS },
		{ 0x2E, DATA_CLASS },
		{ 0, DATA_CLASS },
	};
	struct lab_global_cfg g = { .dscp_trimmed = 0x30, .dscp_trimmed_lasthop = 0x31 },
			      zero_g = {};
	int gfd = bpf_map__fd(skel->maps.lab_global);
	struct pkt_spec s;
	__u8 pkt[PKT_MAX];
	size_t i, len;
	struct port p;
	struct run r;
	__u32 zero = 0;
	int v6;

	for (v6 = 0; v6 < 2; v6++) {
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			int before = test_state.failed;

			p = setup_port(LAB_HOOK_EGRESS, i & 1 ? LAB_PORT_LASTHOP : 0, &cfg_trim);
			seed_backlog(&p, 3000);
			s = mrc_spec(v6, MRC_OP_WRITE_MIDDLE, MRC_BTH_F_TS, 0);
			s.tos = (__u8)(cases[i].dscp << 2 | 0x2);
			len = build_pkt(&s, pkt);
			run_pkt(&p, pkt, len, &r);
			expect_forwarded_unchanged(&r, pkt, len);
			ASSERT_EQ(r.ctx.priority, cases[i].prio, "class of a header-only packet");
			ASSERT_EQ(read_stats(&p).trimmed, 0, "not trimmed again");
			if (test_state.failed != before)
				fprintf(stderr, "  (ipv6 %d, dscp 0x%02x)\n", v6, cases[i].dscp);
		}
	}
	/* With other trim DSCPs configured, those mark trimmed headers. */
	if (!ASSERT_EQ(bpf_map_update_elem(gfd, &zero, &g, BPF_ANY), 0, "set lab_global"))
		return;
	p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_trim);
	s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 0);
	s.tos = 0x31 << 2;
	len = build_pkt(&s, pkt);
	run_pkt(&p, pkt, len, &r);
	ASSERT_EQ(r.ctx.priority, PRIO_CLASS, "configured last-hop DSCP: priority");
	s.tos = MRC_DSCP_TRIMMED << 2;
	len = build_pkt(&s, pkt);
	run_pkt(&p, pkt, len, &r);
	ASSERT_EQ(r.ctx.priority, DATA_CLASS, "default DSCP no longer a trim mark");
	ASSERT_EQ(bpf_map_update_elem(gfd, &zero, &zero_g, BPF_ANY), 0, "reset lab_global");
}

/* MRC-looking bytes behind an IP header that does not say UDP. */
static void test_trim_skips_non_udp(void)
{
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_trim);
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 1000);
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(&s, pkt);
	struct lab_port_stats want = { .packets = 1, .bytes = len };
	struct run r;

	pkt[ETH_LEN + 9] = 6;	/* TCP */
	ipv4_csum_fill(pkt);
	seed_backlog(&p, 3000);
	run_pkt(&p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	expect_stats(&p, &want);
}

/* Just over the headers: four payload bytes are still cut. */
static void test_trim_smallest_payload(void)
{
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_trim);
	__u8 pkt[PKT_MAX];
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 4);
	size_t len = build_pkt(&s, pkt);
	struct lab_port_stats want = { .packets = 1, .bytes = hdr_len(&s), .trimmed = 1 };
	struct run r;

	seed_backlog(&p, 3000);
	run_pkt(&p, pkt, len, &r);
	expect_trimmed(&r, pkt, hdr_len(&s), MRC_DSCP_TRIMMED);
	expect_stats(&p, &want);
}

/* lab_global overrides the MRC port and the trim DSCPs. */
static void test_trim_global_config(void)
{
	struct lab_global_cfg g = { .mrc_udp_port = 5000, .dscp_trimmed = 0x30,
				    .dscp_trimmed_lasthop = 0x31 }, zero_g = {};
	int gfd = bpf_map__fd(skel->maps.lab_global);
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 1000);
	__u8 pkt[PKT_MAX];
	size_t len;
	struct port p;
	struct run r;
	__u32 zero = 0;

	if (!ASSERT_EQ(bpf_map_update_elem(gfd, &zero, &g, BPF_ANY), 0, "set lab_global"))
		return;
	s.dport = 5000;
	len = build_pkt(&s, pkt);
	p = setup_port(LAB_HOOK_EGRESS, 0, &cfg_trim);
	seed_backlog(&p, 3000);
	run_pkt(&p, pkt, len, &r);
	expect_trimmed(&r, pkt, hdr_len(&s), 0x30);

	p = setup_port(LAB_HOOK_EGRESS, LAB_PORT_LASTHOP, &cfg_trim);
	seed_backlog(&p, 3000);
	run_pkt(&p, pkt, len, &r);
	expect_trimmed(&r, pkt, hdr_len(&s), 0x31);

	/* The default port is plain UDP now. */
	s.dport = MRC_UDP_PORT_DEFAULT;
	len = build_pkt(&s, pkt);
	run_pkt(&p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);

	ASSERT_EQ(bpf_map_update_elem(gfd, &zero, &zero_g, BPF_ANY), 0, "reset lab_global");
}

/* ====================================================================== */
/* Tests: traffic class                                                   */
/* ====================================================================== */

static void expect_class(const struct port *p, const struct pkt_spec *s, __u32 prio)
{
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(s, pkt);
	struct run r;

	int before = test_state.failed;

	run_pkt(p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	ASSERT_EQ(r.ctx.priority, prio, "skb->priority");
	if (test_state.failed != before)
		fprintf(stderr, "  (opcode 0x%02x, dport %u)\n", s->opcode, s->dport);
}

static void test_class_priority(void)
{
	struct lab_link_cfg cfg = { .rate_bps = 100000000, .queue_limit = 1000000 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);
	static const __u8 control[] = { MRC_OP_ACK, MRC_OP_SACK, MRC_OP_NACK,
					MRC_OP_PROBE, MRC_OP_EP_REQUEST };
	static const __u8 data[] = { MRC_OP_WRITE_FIRST, MRC_OP_WRITE_MIDDLE,
				     MRC_OP_WRITE_ONLY_IMM };
	struct pkt_spec s;
	size_t i;

	for (i = 0; i < sizeof(control); i++) {
		s = mrc_spec(0, control[i], 0, 16);
		expect_class(&p, &s, PRIO_CLASS);
	}
	for (i = 0; i < sizeof(data); i++) {
		s = mrc_spec(0, data[i], 0, 512);
		expect_class(&p, &s, DATA_CLASS);
	}
	/* MRC-looking SACK on another port is just data. */
	s = mrc_spec(1, MRC_OP_SACK, 0, 16);
	s.dport = 9999;
	expect_class(&p, &s, DATA_CLASS);
}

/* ====================================================================== */
/* Tests: what the program does not understand is forwarded untouched     */
/* ====================================================================== */

/* A port that would trim and mark anything it recognised. */
static struct port malformed_port(void)
{
	struct lab_link_cfg cfg = { .rate_bps = SLOW_RATE, .trim_thresh = 1,
				    .queue_limit = 1000000 };
	struct port p = setup_port(LAB_HOOK_EGRESS, 0, &cfg);

	seed_backlog(&p, 3000);
	return p;
}

static void expect_passes_untouched(const __u8 *pkt, size_t len)
{
	struct port p = malformed_port();
	struct lab_port_stats want = { .packets = 1, .bytes = len };
	struct run r;

	run_pkt(&p, pkt, len, &r);
	expect_forwarded_unchanged(&r, pkt, len);
	expect_stats(&p, &want);
}

/*
 * Frames test_run itself may refuse with -EINVAL before the program runs:
 * under ETH_HLEN, and (since the kernel's test_run checks the IP header it
 * reads the addresses from) IPv4/IPv6 frames whose IP header is cut. A
 * clean refusal is fine; a kernel that runs them must see them forwarded.
 */
static void expect_passes_or_refused(const __u8 *pkt, size_t len)
{
	struct port p = malformed_port();
	struct lab_port_stats none = {}, want = { .packets = 1, .bytes = len };
	struct run r;

	run_pkt(&p, pkt, len, &r);
	if (r.err) {
		fprintf(stderr, "  %zu-byte frame refused by test_run (expected)\n", len);
		ASSERT_EQ(r.err, -EINVAL, "refused cleanly");
		expect_stats(&p, &none);
		return;
	}
	expect_forwarded_unchanged(&r, pkt, len);
	expect_stats(&p, &want);
}

static void test_malformed_short_eth(void)
{
	static const __u8 pkt[10] = { 0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0 };

	expect_passes_or_refused(pkt, sizeof(pkt));
}

static void test_malformed_ipv4_options(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 400);
	__u8 pkt[PKT_MAX], opt[PKT_MAX];
	size_t len = build_pkt(&s, pkt);

	/* Same datagram behind a 24-byte header (one NOP-padded option). */
	memcpy(opt, pkt, ETH_LEN + IP4_LEN);
	memset(opt + ETH_LEN + IP4_LEN, 1, 4);		/* 4 x NOP */
	memcpy(opt + ETH_LEN + IP4_LEN + 4, pkt + ETH_LEN + IP4_LEN,
	       len - ETH_LEN - IP4_LEN);
	opt[ETH_LEN] = 0x46;
	put16(opt + ETH_LEN + 2, (__u16)(len + 4 - ETH_LEN));
	ipv4_csum_fill(opt);
	expect_passes_untouched(opt, len + 4);
}

static void test_malformed_truncated_udp(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 400);
	__u8 pkt[PKT_MAX];

	build_pkt(&s, pkt);
	/* IP says UDP (and 400+ bytes) but the frame ends 4 bytes into UDP. */
	expect_passes_untouched(pkt, ETH_LEN + IP4_LEN + 4);
	/* ... or right after the IPv6 header. */
	s.ipv6 = 1;
	build_pkt(&s, pkt);
	expect_passes_untouched(pkt, ETH_LEN + IP6_LEN);
}

static void test_malformed_truncated_ip(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 400);
	__u8 pkt[PKT_MAX];

	build_pkt(&s, pkt);
	expect_passes_or_refused(pkt, ETH_LEN + 12);
	s.ipv6 = 1;
	build_pkt(&s, pkt);
	expect_passes_or_refused(pkt, ETH_LEN + 30);
}

static void test_malformed_truncated_mrc(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, MRC_BTH_F_TS, 400);
	__u8 pkt[PKT_MAX];
	size_t l4 = ETH_LEN + IP4_LEN;

	build_pkt(&s, pkt);
	/* Half a BTH, then a BTH whose RETH is cut: nothing to trim. */
	expect_passes_untouched(pkt, l4 + UDP_LEN + 6);
	expect_passes_untouched(pkt, l4 + UDP_LEN + 24);
}

static void test_malformed_fragment(void)
{
	struct pkt_spec s = mrc_spec(0, MRC_OP_WRITE_MIDDLE, 0, 1000);
	__u8 pkt[PKT_MAX];
	size_t len = build_pkt(&s, pkt);

	/* First fragment (MF): its "UDP header" is not trusted. */
	put16(pkt + ETH_LEN + 6, 0x2000);
	ipv4_csum_fill(pkt);
	expect_passes_untouched(pkt, len);
}

static void test_malformed_arp(void)
{
	__u8 pkt[42];
	size_t n = build_eth(pkt, 0x0806);

	memset(pkt + n, 0, sizeof(pkt) - n);
	put16(pkt + n, 1);		/* Ethernet */
	put16(pkt + n + 2, 0x0800);	/* IPv4 */
	pkt[n + 4] = 6;
	pkt[n + 5] = 4;
	put16(pkt + n + 6, 1);		/* request */
	expect_passes_untouched(pkt, sizeof(pkt));
}

/* ====================================================================== */

static int setup(void)
{
	int err;

	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "libbpf_num_possible_cpus: %d\n", ncpus);
		return -1;
	}
	err = current_netns_cookie(&netns_cookie);
	if (err) {
		fprintf(stderr, "SO_NETNS_COOKIE: %s\n", strerror(-err));
		return -1;
	}
	skel = lab_fabric__open_and_load();
	if (!skel) {
		fprintf(stderr, "loading lab_fabric: %s (run as root)\n", strerror(errno));
		return -1;
	}
	return 0;
}

int main(void)
{
	if (setup()) {
		/* Without the program every test is a failure, not a skip. */
		printf("[lab.load] FAIL\n");
		return 1;
	}
	RUN_TEST("lab.unregistered_port_passes", test_unregistered_port_passes);
	RUN_TEST("lab.port_key_must_match", test_port_key_must_match);
	RUN_TEST("lab.port_on_other_device", test_port_on_other_device);
	RUN_TEST("lab.forward_plain", test_forward_plain);
	RUN_TEST("lab.rehash_forwards_unchanged", test_rehash_forwards_unchanged);
	RUN_TEST("lab.blackhole", test_blackhole);
	RUN_TEST("lab.drop_all", test_drop_all);
	RUN_TEST("lab.drop_none", test_drop_none);
	RUN_TEST("lab.drop_half", test_drop_half);
	RUN_TEST("lab.queue_tail_drop", test_queue_tail_drop);
	RUN_TEST("lab.queue_rate_zero_no_queue", test_queue_rate_zero_no_queue);
	RUN_TEST("lab.ecn_ipv4", test_ecn_ipv4);
	RUN_TEST("lab.ecn_ipv4_ect1", test_ecn_ipv4_ect1);
	RUN_TEST("lab.ecn_not_ect", test_ecn_not_ect);
	RUN_TEST("lab.ecn_already_ce", test_ecn_already_ce);
	RUN_TEST("lab.ecn_ipv6", test_ecn_ipv6);
	RUN_TEST("lab.ecn_not_on_last_hop", test_ecn_not_on_last_hop);
	RUN_TEST("lab.lasthop_trims_never_marks", test_lasthop_trims_never_marks);
	RUN_TEST("lab.trim_ipv4", test_trim_ipv4);
	RUN_TEST("lab.trim_ipv4_lasthop", test_trim_ipv4_lasthop);
	RUN_TEST("lab.trim_keeps_ecn", test_trim_keeps_ecn);
	RUN_TEST("lab.trim_ts_flag", test_trim_ts_flag);
	RUN_TEST("lab.trim_imm_opcode", test_trim_imm_opcode);
	RUN_TEST("lab.trim_ipv6", test_trim_ipv6);
	RUN_TEST("lab.trim_skips_non_mrc_udp", test_trim_skips_non_mrc_udp);
	RUN_TEST("lab.trim_skips_control", test_trim_skips_control);
	RUN_TEST("lab.trim_skips_non_udp", test_trim_skips_non_udp);
	RUN_TEST("lab.trim_skips_header_only", test_trim_skips_header_only);
	RUN_TEST("lab.trimmed_header_keeps_priority", test_trimmed_header_keeps_priority);
	RUN_TEST("lab.trim_smallest_payload", test_trim_smallest_payload);
	RUN_TEST("lab.trim_global_config", test_trim_global_config);
	RUN_TEST("lab.class_priority", test_class_priority);
	RUN_TEST("lab.malformed_short_eth", test_malformed_short_eth);
	RUN_TEST("lab.malformed_ipv4_options", test_malformed_ipv4_options);
	RUN_TEST("lab.malformed_truncated_udp", test_malformed_truncated_udp);
	RUN_TEST("lab.malformed_truncated_ip", test_malformed_truncated_ip);
	RUN_TEST("lab.malformed_truncated_mrc", test_malformed_truncated_mrc);
	RUN_TEST("lab.malformed_fragment", test_malformed_fragment);
	RUN_TEST("lab.malformed_arp", test_malformed_arp);
	unregister_ports();
	lab_fabric__destroy(skel);
	return TEST_EXIT();
}
