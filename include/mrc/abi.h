/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * MRC-XDP ABI: every constant, map key/value and record shared by the BPF
 * programs and userspace. This is the only place these layouts are written
 * down; both sides include it, so a change here rebuilds both.
 *
 * Rules: fixed-width types only, explicit padding, and a static assertion on
 * every struct size so a layout change is a compile error, not a silent
 * mismatch between kernel and userspace.
 */
#ifndef MRC_ABI_H
#define MRC_ABI_H

#ifdef __bpf__
/* BPF side: vmlinux.h already defines __u8..__u64. */
#else
#include <linux/types.h>
#include <linux/bpf.h>	/* struct bpf_spin_lock */
#include <assert.h>
#ifndef _Static_assert
#define _Static_assert static_assert
#endif
#endif

#define MRC_ABI_ASSERT_SIZE(type, size) \
	_Static_assert(sizeof(type) == (size), #type " layout changed")

/* ---------------------------------------------------------------------- */
/* Wire format (byte by byte in docs/WIRE.md)                             */
/* ---------------------------------------------------------------------- */

#define MRC_UDP_PORT_DEFAULT	4791

/* Opcodes live in the manufacturer range of the InfiniBand opcode space. */
enum mrc_opcode {
	MRC_OP_WRITE_FIRST	= 0xC6,
	MRC_OP_WRITE_MIDDLE	= 0xC7,
	MRC_OP_WRITE_LAST	= 0xC8,
	MRC_OP_WRITE_LAST_IMM	= 0xC9,
	MRC_OP_WRITE_ONLY	= 0xCA,
	MRC_OP_WRITE_ONLY_IMM	= 0xCB,
	MRC_OP_ACK		= 0xD1,
	MRC_OP_EP_REQUEST	= 0xD8,
	MRC_OP_EP_RESPONSE	= 0xD9,
	MRC_OP_SACK		= 0xDC,
	MRC_OP_NACK		= 0xDD,
	MRC_OP_PROBE		= 0xDE,
};

/* Flags in byte 8 of the BTH (the byte before the PSN). */
#define MRC_BTH_F_ACK_REQ	0x80	/* responder must answer with a SACK */
#define MRC_BTH_F_RETX		0x40	/* this is a retransmission */
#define MRC_BTH_F_TS		0x20	/* a TSETH follows the METH */

/* Base transport header: 12 bytes, network byte order. */
struct mrc_bth {
	__u8	opcode;
	__u8	flags0;		/* reserved, sent as 0 */
	__u16	pkey;
	__u32	dqpn;		/* low 24 bits: destination QP number */
	__u32	psn;		/* top 8 bits: MRC_BTH_F_*, low 24: PSN */
};
MRC_ABI_ASSERT_SIZE(struct mrc_bth, 12);

/* MRC extended transport header: message numbers. */
struct mrc_meth {
	__u16	wimm_msn;	/* WRITE-with-IMMEDIATE message number */
	__u16	msn;		/* message number */
};
MRC_ABI_ASSERT_SIZE(struct mrc_meth, 4);

/* Timestamp extension: send time in 128 ns units (wraps every 8.4 ms). */
struct mrc_tseth {
	__u16	send_ts;
	__u16	reserved;
};
MRC_ABI_ASSERT_SIZE(struct mrc_tseth, 4);

/* RDMA extended transport header: where this packet's payload goes. */
struct mrc_reth {
	__u64	vaddr;
	__u32	rkey;
	__u32	length;		/* total length of the message */
};
MRC_ABI_ASSERT_SIZE(struct mrc_reth, 16);

#define MRC_IMM_LEN		4

static inline int mrc_opcode_is_data(__u8 op)
{
	return op >= MRC_OP_WRITE_FIRST && op <= MRC_OP_WRITE_ONLY_IMM;
}

static inline int mrc_opcode_has_imm(__u8 op)
{
	return op == MRC_OP_WRITE_LAST_IMM || op == MRC_OP_WRITE_ONLY_IMM;
}

/*
 * Length of the MRC headers of a data packet: what a trimming switch keeps.
 * `bth_flags` is the flags byte in front of the PSN.
 */
static inline __u32 mrc_data_header_len(__u8 op, __u8 bth_flags)
{
	__u32 len = sizeof(struct mrc_bth) + sizeof(struct mrc_meth) +
		    sizeof(struct mrc_reth);

	if (bth_flags & MRC_BTH_F_TS)
		len += sizeof(struct mrc_tseth);
	if (mrc_opcode_has_imm(op))
		len += MRC_IMM_LEN;
	return len;
}

/* DSCP code points a trimming switch sets on the header it forwards. */
#define MRC_DSCP_TRIMMED		0x2C	/* trimmed mid-path: penalise the EV */
#define MRC_DSCP_TRIMMED_LASTHOP	0x2D	/* trimmed at the last hop: incast */

/* ---------------------------------------------------------------------- */
/* The lab fabric (tools/mrc-lab, bpf/lab_fabric.bpf.c)                   */
/* ---------------------------------------------------------------------- */

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

#endif /* MRC_ABI_H */
