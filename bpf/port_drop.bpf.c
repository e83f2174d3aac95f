// SPDX-License-Identifier: GPL-2.0
/*
 * A second XDP program to run next to MRC's on one interface: it drops
 * UDP and TCP packets to the destination ports in its map port_drop_ports
 * (key: port in host order, value: packets dropped) and passes the rest.
 *
 * Where the kernel refuses libxdp's dispatcher, a device runs one XDP
 * program; MRC's hands every packet that is not MRC's to the program in
 * its pinned program array mrc_xdp_next (a tail call), so this one runs
 * there (docs/OPERATIONS.md):
 *   bpftool prog loadall port_drop.bpf.o /sys/fs/bpf/pd/progs \
 *           pinmaps /sys/fs/bpf/pd
 *   bpftool map update pinned /sys/fs/bpf/pd/port_drop_ports \
 *           key 0x89 0x13 value 0 0 0 0 0 0 0 0          # port 5001
 *   bpftool map update pinned /sys/fs/bpf/mrc/mrc_xdp_next \
 *           key 0 0 0 0 value pinned /sys/fs/bpf/pd/progs/xdp_port_drop
 * Its TC program does the same on a TC hook, as a second filter next to
 * MRC's (which hands on every packet that is not MRC's: TC_ACT_UNSPEC).
 * It is the example and the test of that chain (tests/e2e/attach_tools.sh,
 * tests/bpf/test_mrc_xdp/xdp_next.c); mrcd does not use it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>

#define ETH_P_IP	0x0800
#define ETH_P_IPV6	0x86DD
#define IPPROTO_TCP	6
#define IPPROTO_UDP	17
#define TC_ACT_UNSPEC	(-1)
#define TC_ACT_SHOT	2

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, __u16);
	__type(value, __u64);
} port_drop_ports SEC(".maps");

/* The L4 header's offset and protocol, or 0 when not IPv4/IPv6 UDP/TCP. */
static __always_inline __u32 l4_offset(void *data, void *end, __u8 *proto)
{
	struct ethhdr *eth = data;
	struct iphdr *ip4;
	struct ipv6hdr *ip6;

	if ((void *)(eth + 1) > end)
		return 0;
	if (eth->h_proto == bpf_htons(ETH_P_IP)) {
		ip4 = (void *)(eth + 1);
		if ((void *)(ip4 + 1) > end || ip4->ihl < 5)
			return 0;
		/* A later fragment has no L4 header to read. */
		if (ip4->frag_off & bpf_htons(0x1fff))
			return 0;
		*proto = ip4->protocol;
		return sizeof(*eth) + ip4->ihl * 4u;
	}
	if (eth->h_proto == bpf_htons(ETH_P_IPV6)) {
		ip6 = (void *)(eth + 1);
		if ((void *)(ip6 + 1) > end)
			return 0;
		*proto = ip6->nexthdr;	/* extension headers: passed on */
		return sizeof(*eth) + sizeof(*ip6);
	}
	return 0;
}

/* Is the packet UDP/TCP to a port of the map? Counts it when it is. */
static __always_inline bool port_dropped(void *data, void *end)
{
	__u8 proto = 0;
	__u32 off = l4_offset(data, end, &proto);
	__u16 *dport, port;
	__u64 *dropped;

	if (!off || (proto != IPPROTO_UDP && proto != IPPROTO_TCP) || off > 128)
		return false;
	/* dest is at byte 2 of both the UDP and the TCP header. */
	dport = data + off + 2;
	if ((void *)(dport + 1) > end)
		return false;
	port = bpf_ntohs(*dport);
	dropped = bpf_map_lookup_elem(&port_drop_ports, &port);
	if (!dropped)
		return false;
	__sync_fetch_and_add(dropped, 1);
	return true;
}

SEC("xdp")
int xdp_port_drop(struct xdp_md *ctx)
{
	return port_dropped((void *)(long)ctx->data, (void *)(long)ctx->data_end) ?
	       XDP_DROP : XDP_PASS;
}

/*
 * The same at TC (e.g. egress, after MRC's filter): TC_ACT_UNSPEC lets
 * what it does not drop go on to the next filter, or pass.
 */
SEC("tc")
int tc_port_drop(struct __sk_buff *skb)
{
	return port_dropped((void *)(long)skb->data, (void *)(long)skb->data_end) ?
	       TC_ACT_SHOT : TC_ACT_UNSPEC;
}

char LICENSE[] SEC("license") = "GPL";
