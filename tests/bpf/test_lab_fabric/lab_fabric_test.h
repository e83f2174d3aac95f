/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BPF unit tests of lab/lab_fabric.bpf.c, the lab's switch-port emulator.
 *
 * Every test runs the tc programs on crafted packets through
 * bpf_prog_test_run_opts(): no devices, no traffic, deterministic. The
 * kernel runs tc test packets on the loopback device of the current netns,
 * so each test registers the port (netns cookie, ifindex 1, hook) in
 * lab_ports with a port_id and link_id of its own, so that queue and
 * counter state never leaks from one test into the next.
 *
 * What the files of tests/bpf/test_lab_fabric/ share:
 *
 *   main.c             the program loaded, ports seeded in the maps, runs, main()
 *   packets.c          packets built, and the rewrites expected of the program
 *   forward.c          port registration, plain forwarding, faults, the queue
 *   ecn_trim.c         congestion signals: ECN marking and packet trimming
 *   class_malformed.c  traffic classes; what the program does not understand
 *
 * The lf_ names: the BPF test fixture (tests/lib), linked into every BPF
 * test binary, defines a skel and a build_eth of its own.
 */
#ifndef MRC_TEST_LAB_FABRIC_H
#define MRC_TEST_LAB_FABRIC_H

#include <stddef.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lab_abi.h"
#include "lab_fabric.skel.h"
#include "test.h"
#include "packet.h"

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

/* The program (main.c). */
extern struct lab_fabric *lf_skel;
extern __u64 netns_cookie;	/* the netns the tc test runs happen in */

/* ---- packets (packets.c) ---------------------------------------------- */

struct pkt_spec {
	int	ipv6;
	__u8	tos;		/* IPv4 TOS or IPv6 traffic class */
	__u16	dport;
	int	mrc;		/* MRC headers after UDP */
	__u8	opcode;
	__u8	bth_flags;	/* MRC_BTH_F_* */
	__u32	payload;	/* bytes after the last header */
};

size_t lf_build_eth(__u8 *p, __u16 proto);
/* A complete Ethernet frame with correct IPv4 and UDP checksums. */
size_t build_pkt(const struct pkt_spec *s, __u8 *buf);
/* A UDP frame of exactly `len` bytes to a non-MRC port. */
size_t build_udp_frame(__u8 *buf, int ipv6, __u8 tos, size_t len);
struct pkt_spec mrc_spec(int ipv6, __u8 opcode, __u8 flags, __u32 payload);
__u8 pkt_tos(const __u8 *pkt);
/* Set TOS/traffic class, keeping the IPv4 header checksum right. */
void set_tos(__u8 *pkt, __u8 tos);

/* ---- ports and runs (main.c) ------------------------------------------- */

struct port {
	__u32 id;	/* port_id and link_id: one of each per test */
	int prog_fd;
	__u32 ifindex;	/* device test_run sets on the skb; 0 = loopback */
};

struct lab_port_key port_key(__u32 hook);
/* Forget both hooks' registrations, so a test sees only its own port. */
void unregister_ports(void);
int prog_fd_for(__u32 hook);
/* A fresh port_id on a fresh link configured as `cfg`, state zeroed. */
struct port new_port(__u32 hook, const struct lab_link_cfg *cfg);
/* Make `key` (netns, device, hook) the attachment point of port `p`. */
void register_port(const struct lab_port_key *key, const struct port *p,
		   __u32 flags);
/* The common case: only this port is registered. */
struct port setup_port(__u32 hook, __u32 flags, const struct lab_link_cfg *cfg);
/* Start a port's queue at `backlog` bytes, as if traffic had just left it. */
void seed_backlog(const struct port *p, __u64 backlog);
struct lab_port_stats read_stats(const struct port *p);
/* Counter expectations; fields not named must be zero. */
void expect_stats(const struct port *p, const struct lab_port_stats *want);

struct run {
	int err;		/* bpf_prog_test_run_opts() */
	__u32 verdict;
	__u8 out[PKT_MAX];
	__u32 out_len;
	struct __sk_buff ctx;	/* ctx_out: priority the program set */
};

/* Run the port's program once on `pkt` as seen on loopback. */
void run_pkt(const struct port *p, const void *pkt, size_t len, struct run *r);
void run_pkt_ctx(const struct port *p, const void *pkt, size_t len,
		 struct __sk_buff *ctx_in, struct run *r);
/* Name the packet of a sequence that failed an assertion. */
void note_packet(int failed_before, int i);
/* The packet left the port exactly as it came in. */
int expect_forwarded_unchanged(const struct run *r, const void *pkt, size_t len);
void expect_dropped(const struct run *r);
/* `r` is the trim of `in` to `len` bytes with `dscp`, valid checksums (packets.c). */
void expect_trimmed(const struct run *r, const __u8 *in, size_t len, __u8 dscp);

#endif
