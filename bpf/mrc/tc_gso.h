/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * UDP GSO super-packets at TC egress. libmrc hands the kernel several
 * consecutive DATA packets of one QP as one datagram with UDP_SEGMENT
 * (user/libmrc/send.c): one skb whose UDP payload is the packets back to
 * back, segment i at offset i * gso_size, each with its own BTH; the NIC
 * (or the kernel, at the first device without UDP segmentation offload)
 * cuts it into ordinary packets that copy the outer headers. So the
 * whole burst takes one EV, one stamp and one plane move (tc_spray.h),
 * and every PSN in it gets its send-log record here.
 *
 * A super-packet is checked whole before anything is logged: every
 * segment a DATA packet of the same destination QP and key, PSNs
 * consecutive from the first, the lengths those of gso_segs segments.
 * Anything else is dropped (MRC_DROP_BAD_GSO): a wrong log would blame
 * the wrong paths.
 */
#ifndef MRC_BPF_TC_GSO_H
#define MRC_BPF_TC_GSO_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "parsing.h"
#include "mrc/maps.h"
#include "mrc/ev_log.h"

/* What TC parses of a GSO skb: Ethernet, IPv6 (the longer), UDP, BTH. */
#define TC_GSO_PULL_LEN	(14 + 40 + 8 + 12)

struct gso_walk {
	struct __sk_buff *skb;
	void *log;		/* the QP's send log (inner map) */
	__u32 off;		/* UDP payload of segment 0, from the frame's start */
	__u32 size;		/* gso_size: UDP payload of every segment but the last */
	__u32 psn;		/* 32-bit PSN of segment 0 */
	__u32 dqpn;		/* segment 0's BTH dqpn word (key byte 3, QP) */
	__u8 key_hi[3];		/* segment 0's BTH key bytes 0-2 */
	__u8 idx, plane;	/* the EV (table index) and plane the skb took */
	__u64 retx;		/* bit i: segment i is a resend */
	__u64 sent_ns;
	int bad;		/* a segment failed gso_check_seg */
};

/* Segment i: DATA to the same QP and key, PSN psn + i. 0 = go on. */
static long gso_check_seg(__u32 i, void *data)
{
	struct gso_walk *g = data;
	struct mrc_bth bth;
	__u32 word;

	g->bad = 1;
	if (bpf_skb_load_bytes(g->skb, g->off + i * g->size, &bth, sizeof(bth)))
		return 1;
	word = bpf_ntohl(bth.psn);
	if (!mrc_opcode_is_data(bth.opcode) || bth.dqpn != g->dqpn ||
	    bth.key_hi[0] != g->key_hi[0] || bth.key_hi[1] != g->key_hi[1] ||
	    bth.key_hi[2] != g->key_hi[2] ||
	    (word & MRC_PSN_MASK) != ((g->psn + i) & MRC_PSN_MASK))
		return 1;
	g->bad = 0;
	if ((word >> 24) & MRC_BTH_F_RETX)
		g->retx |= 1ull << (i & 63);
	return 0;
}

/* Segment i's send-log record: the burst's EV, plane and send time. */
static long gso_log_seg(__u32 i, void *data)
{
	struct gso_walk *g = data;
	__u32 psn = g->psn + i;
	struct mrc_send_rec *rec;
	__u8 flags = (g->retx >> (i & 63)) & 1 ? MRC_BTH_F_RETX : 0;

	if (!g->log)
		return 1;
	rec = log_rec(g->log, psn);
	if (!rec)
		return 1;
	/* As for a single packet (tc_spray.h): the time, then the head. */
	rec->sent_ns = g->sent_ns;
	WRITE_ONCE(rec->head, mrc_send_rec_head(psn, g->idx, g->plane, flags, 0));
	return 0;
}

/*
 * Is the GSO skb (segs segments) a well-formed burst whose segment 0 is
 * the parsed packet p, PSN psn? Fills g for gso_log_all. segs is at most
 * MRC_GSO_BURST_MAX: the bound of both walks.
 */
static __always_inline int gso_check(struct __sk_buff *skb,
				     const struct l4_info *l4,
				     const struct mrc_bth *bth0, __u32 psn,
				     __u32 segs, struct gso_walk *g)
{
	__u32 size = skb->gso_size, payload;

	g->skb = skb;
	g->off = l4->l4_off + sizeof(struct udphdr);
	g->size = size;
	g->psn = psn;
	g->retx = 0;
	if (segs > MRC_GSO_BURST_MAX || size < sizeof(struct mrc_bth) ||
	    skb->len <= g->off)
		return 0;
	/* Every segment but the last is gso_size long, the last 1..gso_size. */
	payload = skb->len - g->off;
	if (payload <= (segs - 1) * size || payload > segs * size)
		return 0;
	g->dqpn = bth0->dqpn;
	g->key_hi[0] = bth0->key_hi[0];
	g->key_hi[1] = bth0->key_hi[1];
	g->key_hi[2] = bth0->key_hi[2];
	g->bad = 0;
	return bpf_loop(segs, gso_check_seg, g, 0) == (long)segs && !g->bad;
}

/* Log every PSN of a checked burst with the EV and plane it took. */
static __always_inline void gso_log_all(__u32 slot, __u32 segs,
					struct gso_walk *g, __u8 idx, __u8 plane)
{
	g->log = send_log_of(slot);
	g->idx = idx;
	g->plane = plane;
	g->sent_ns = bpf_ktime_get_ns();
	bpf_loop(segs, gso_log_seg, g, 0);
}

#endif /* MRC_BPF_TC_GSO_H */
