/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The lab fabric's ABI: what lab/lab_fabric.bpf.c and mrc-labctl share.
 * Nothing here ships with MRC-XDP: the installed headers (include/mrc/)
 * describe the transport only. The lab needs the transport's ABI for the
 * MRC headers it trims (mrc_data_header_len()), hence the include.
 */
#ifndef MRC_LAB_ABI_H
#define MRC_LAB_ABI_H

#include "mrc/abi.h"

#define LAB_MAX_PORTS	4096	/* attachment points (one direction of a link) */
#define LAB_MAX_LINKS	1024	/* logical links: pP-hH and pP-sS */

/* Which attachment point a packet is seen at: netns + ifindex + hook. */
struct lab_port_key {
	__u64	netns_cookie;
	__u32	ifindex;
	__u32	hook;		/* enum lab_hook */
};
MRC_ABI_ASSERT_SIZE(struct lab_port_key, 16);

enum lab_hook {
	LAB_HOOK_INGRESS = 0,
	LAB_HOOK_EGRESS	 = 1,
};

enum lab_port_flags {
	/* Forget the sender's socket flow hash so ECMP hashes the headers. */
	LAB_PORT_REHASH		= 1 << 0,
	/* The port faces a host: trims here are last-hop trims. */
	LAB_PORT_LASTHOP	= 1 << 1,
};

struct lab_port {
	__u32	port_id;	/* index into lab_queues and lab_stats */
	__u32	link_id;	/* index into lab_links (fault config) */
	__u32	flags;		/* enum lab_port_flags */
	__u32	pad;
};
MRC_ABI_ASSERT_SIZE(struct lab_port, 16);

/* Fault and queue configuration of one logical link, set by mrc-lab. */
struct lab_link_cfg {
	__u64	rate_bps;	/* emulated queue drain rate; 0 = no queue */
	__u32	drop_ppm;	/* random drop, parts per million */
	__u32	blackhole;	/* 1 = drop everything, link stays up */
	__u32	ecn_thresh;	/* mark CE above this backlog (bytes); 0 = off */
	__u32	trim_thresh;	/* trim MRC data above this backlog; 0 = off */
	__u32	queue_limit;	/* tail-drop above this backlog (bytes) */
	__u32	pad;
};
MRC_ABI_ASSERT_SIZE(struct lab_link_cfg, 32);

/*
 * A UDP GSO burst trimmed at a port leaves as one trimmed header per
 * segment: the port sends copies (bpf_clone_redirect to itself) carrying
 * this mark, which its egress program lets pass unjudged. At most
 * LAB_GSO_TRIM_MAX segments are trimmed; a larger burst is tail-dropped.
 */
#define LAB_MARK_TRIM_COPY	0x4c616254u	/* "LabT" */
#define LAB_GSO_TRIM_MAX	MRC_GSO_BURST_MAX
#define LAB_MRC_HDR_MAX		40	/* longest MRC data header (BTH..IMM) */

/* Global lab settings (single-entry array). */
struct lab_global_cfg {
	__u16	mrc_udp_port;	/* which UDP port carries MRC */
	__u8	dscp_trimmed;
	__u8	dscp_trimmed_lasthop;
	__u32	pad;
};
MRC_ABI_ASSERT_SIZE(struct lab_global_cfg, 8);

/*
 * Per-port counters, in a per-CPU array. Append-only: tools read fields by
 * name through BTF, scripts by position.
 */
struct lab_port_stats {
	__u64	packets;	/* forwarded */
	__u64	bytes;		/* forwarded, as sent (after trimming) */
	__u64	drop_fault;	/* drop PCT or blackhole */
	__u64	drop_queue;	/* emulated queue over its limit */
	__u64	ecn_marked;
	__u64	trimmed;
	__u64	malformed;	/* could not be parsed or rewritten */
	__u64	pad;
};
MRC_ABI_ASSERT_SIZE(struct lab_port_stats, 64);

/*
 * Emulated switch queue of one port: the backlog a queue draining at
 * rate_bps would hold. Shared by all CPUs, hence the lock.
 */
struct lab_queue {
	struct bpf_spin_lock lock;
	__u32	pad;
	__u64	backlog;	/* bytes */
	__u64	last_ns;	/* when backlog was last drained */
};
MRC_ABI_ASSERT_SIZE(struct lab_queue, 24);

/*
 * Traffic classes the lab's HTB qdiscs define: control packets and trimmed
 * headers jump the data queue, as on a switch with a priority class.
 */
#define LAB_TC_HANDLE_MAJOR	1
#define LAB_TC_CLASS_PRIO	0x10
#define LAB_TC_CLASS_DATA	0x20

#endif /* MRC_LAB_ABI_H */
