// SPDX-License-Identifier: GPL-2.0
/*
 * The lab's switch emulation: one program attached at every fabric-side
 * port of an mrc-lab fabric (leaf and spine ends of each veth link).
 *
 * Per packet it does what a switch port of an MRC fabric would:
 *   - forget the sending socket's flow hash at leaf ingress, so ECMP picks
 *     the spine from the packet's headers alone (as real switches do);
 *   - inject faults: random drop, blackhole;
 *   - emulate an egress queue draining at the link rate, and above its
 *     thresholds ECN-mark (never at the last hop, in front of a host),
 *     trim MRC data to its headers (DSCP trim mark), or tail-drop;
 *   - count everything per port.
 * The kernel has no netem/RED, so this is how tests get loss and congestion.
 *
 * A GSO skb (TCP's TSO segments, libmrc's UDP GSO bursts) crosses the
 * fabric whole and is cut into wire packets only at the last hop (mrc-lab
 * turns UDP segmentation offload off on the leaf port facing each host).
 * Here it stands for its gso_segs packets: the queue model charges the
 * bytes they take on the wire, the counters count them, a fault or tail
 * drop loses all of them (a burst arriving at once), an ECN mark marks all
 * (the outer header is copied to each), and a trim trims each of a UDP
 * burst to its headers (lab_trim_gso).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "parsing.h"
#include "lab_abi.h"

#define NSEC_PER_SEC	1000000000ULL

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LAB_MAX_PORTS);
	__type(key, struct lab_port_key);
	__type(value, struct lab_port);
} lab_ports SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LAB_MAX_LINKS);
	__type(key, __u32);
	__type(value, struct lab_link_cfg);
} lab_links SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LAB_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct lab_queue);
} lab_queues SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, LAB_MAX_PORTS);
	__type(key, __u32);
	__type(value, struct lab_port_stats);
} lab_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lab_global_cfg);
} lab_global SEC(".maps");

/* The MRC headers of a UDP GSO burst's segments, while it is trimmed. */
struct lab_gso_hdrs {
	__u8	hdr[LAB_GSO_TRIM_MAX][LAB_MRC_HDR_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct lab_gso_hdrs);
} lab_gso_scratch SEC(".maps");

extern void *bpf_cast_to_kern_ctx(void *obj) __ksym;

/*
 * The namespace of the device the packet is on. Not bpf_get_netns_cookie():
 * that follows skb->sk, and veth keeps the sending host's socket attached
 * while a packet crosses the fabric's namespaces.
 */
static __always_inline __u64 lab_dev_netns_cookie(struct __sk_buff *ctx)
{
	struct sk_buff *skb = bpf_cast_to_kern_ctx(ctx);

	return BPF_CORE_READ(skb, dev, nd_net.net, net_cookie);
}

/*
 * Bytes the device's root qdisc holds (the lab's HTB on a rate-limited
 * egress port; 0 for noqueue). At tc egress the packet is not enqueued
 * yet: this is the real queue ahead of it.
 */
static __always_inline __u64 lab_dev_qdisc_backlog(struct __sk_buff *ctx)
{
	struct sk_buff *skb = bpf_cast_to_kern_ctx(ctx);

	return BPF_CORE_READ(skb, dev, qdisc, qstats.backlog);
}

/* What the emulated port decided for one packet. */
enum lab_verdict {
	LAB_FORWARD,
	LAB_MARK_CE,
	LAB_TRIM,
	LAB_DROP_QUEUE,
};

/* What parsing learned about a packet. */
struct lab_pkt {
	struct l4_info l4;
	__u32 segs;		/* wire packets it stands for (GSO: gso_segs) */
	__u32 wire_len;		/* their bytes on the wire */
	__u32 trimmed_len;	/* 0 unless trimmable MRC data */
	__u8  parsed;		/* IP packet we understand */
	__u8  mrc_control;	/* MRC ACK/SACK/NACK/probe: priority class */
	__u8  trimmed;		/* MRC header a switch before us trimmed: ditto */
};

static __always_inline __u16 lab_mrc_port(void)
{
	__u32 zero = 0;
	struct lab_global_cfg *g = bpf_map_lookup_elem(&lab_global, &zero);

	return g && g->mrc_udp_port ? g->mrc_udp_port : MRC_UDP_PORT_DEFAULT;
}

/* The DSCP a trim sets: mid-path (0) or at the last hop (1). */
static __always_inline __u8 lab_trim_dscp(int lasthop)
{
	__u32 zero = 0;
	struct lab_global_cfg *g = bpf_map_lookup_elem(&lab_global, &zero);

	if (lasthop)
		return g && g->dscp_trimmed_lasthop ? g->dscp_trimmed_lasthop :
						      MRC_DSCP_TRIMMED_LASTHOP;
	return g && g->dscp_trimmed ? g->dscp_trimmed : MRC_DSCP_TRIMMED;
}

/* Recognise MRC over UDP and how much of it a trimming switch keeps. */
static __always_inline void lab_parse_mrc(struct cursor *c, void *base,
					  struct lab_pkt *pkt, __u32 skb_len)
{
	struct udphdr *udp = cursor_take(c, sizeof(*udp));
	struct mrc_bth *bth;
	__u8 flags;

	if (!udp || bpf_ntohs(udp->dest) != lab_mrc_port())
		return;
	bth = cursor_take(c, sizeof(*bth));
	if (!bth)
		return;
	if (!mrc_opcode_is_data(bth->opcode)) {
		pkt->mrc_control = 1;
		return;
	}
	flags = (__u8)(bpf_ntohl(bth->psn) >> 24);
	pkt->trimmed_len = pkt->l4.l4_off + sizeof(*udp) +
			   mrc_data_header_len(bth->opcode, flags);
	/*
	 * A packet that is only headers already has nothing to cut. With a
	 * trim DSCP it was trimmed by a switch before us: it keeps jumping
	 * the data queue at every hop, as on a switch that queues by DSCP,
	 * so the receiver's NACK is not held up behind the data that caused
	 * the trim.
	 */
	if (pkt->trimmed_len >= skb_len) {
		__u8 dscp = pkt->l4.tos >> 2;

		pkt->trimmed_len = 0;
		pkt->trimmed = dscp == lab_trim_dscp(0) || dscp == lab_trim_dscp(1);
	}
}

/*
 * A UDP GSO skb stands for gso_segs packets, each with the outer headers
 * again. TCP's TSO skbs keep the lab's old accounting (one packet of
 * skb->len), so the TCP baselines run on the lab they always ran on.
 */
static __always_inline void lab_count_segments(struct __sk_buff *skb,
					       struct lab_pkt *pkt)
{
	__u32 segs = skb->gso_segs;

	pkt->segs = 1;
	pkt->wire_len = skb->len;
	if (segs < 2 || !pkt->parsed || !pkt->l4.is_udp)
		return;
	pkt->segs = segs;
	pkt->wire_len = skb->len + (segs - 1) * (pkt->l4.l4_off + sizeof(struct udphdr));
}

static __always_inline void lab_parse(struct __sk_buff *skb, struct lab_pkt *pkt)
{
	void *base = (void *)(long)skb->data;
	struct cursor c = { base, (void *)(long)skb->data_end };

	if (parse_l3(&c, base, &pkt->l4) >= 0) {
		pkt->parsed = 1;
		if (pkt->l4.is_udp)
			lab_parse_mrc(&c, base, pkt, skb->len);
	}
	lab_count_segments(skb, pkt);
}

/* Drain the emulated queue for the time that passed since its last packet. */
static __always_inline void lab_queue_drain(struct lab_queue *q, __u64 rate_bps,
					    __u64 now)
{
	__u64 elapsed = now - q->last_ns;
	__u64 drained;

	q->last_ns = now;
	/* Past a second every realistic queue is empty; this also keeps
	 * elapsed * bytes-per-second below 2^64 up to 100 Gb/s. */
	if (elapsed >= NSEC_PER_SEC) {
		q->backlog = 0;
		return;
	}
	drained = elapsed * (rate_bps / 8) / NSEC_PER_SEC;
	q->backlog = q->backlog > drained ? q->backlog - drained : 0;
}

/*
 * The switch's decision for one packet, given the backlog it finds.
 * CE marks come from the core only: congestion on the last hop (the port
 * facing the receiving host) is incast, which no other path of the
 * sender's avoids, so a mark there would only make the sender skip good
 * paths (the receiver echoes CE as SKIP_ONCE). The last hop trims
 * (DSCP 0x2D: the sender resends without penalising the path) and drops.
 */
static __always_inline enum lab_verdict
lab_queue_decide(const struct lab_link_cfg *cfg, const struct lab_pkt *pkt,
		 __u64 backlog, __u32 len, __u32 port_flags)
{
	if (cfg->trim_thresh && backlog > cfg->trim_thresh && pkt->trimmed_len)
		return LAB_TRIM;
	if (cfg->queue_limit && backlog + len > cfg->queue_limit)
		return LAB_DROP_QUEUE;
	/* ECT(0) or ECT(1); a packet already CE has nothing left to mark. */
	if (cfg->ecn_thresh && backlog > cfg->ecn_thresh && pkt->parsed &&
	    (pkt->l4.tos & ECN_MASK) && (pkt->l4.tos & ECN_MASK) != ECN_CE &&
	    !(port_flags & LAB_PORT_LASTHOP))
		return LAB_MARK_CE;
	return LAB_FORWARD;
}

/*
 * The model drains at the nominal rate; the real queue (HTB) drains only
 * when a CPU gets to it, and on two CPUs shared with every host of the lab
 * it falls behind. The model takes the real backlog when that is larger,
 * so marks, trims and drops follow the queue the packets actually wait
 * in, as on a switch, and the delay a sender measures stays bounded by the
 * trim threshold.
 */
static __always_inline enum lab_verdict
lab_queue_admit(struct lab_queue *q, const struct lab_link_cfg *cfg,
		const struct lab_pkt *pkt, __u32 len, __u32 port_flags,
		__u64 real_backlog)
{
	enum lab_verdict verdict;
	__u64 now = bpf_ktime_get_ns();

	bpf_spin_lock(&q->lock);
	lab_queue_drain(q, cfg->rate_bps, now);
	if (real_backlog > q->backlog)
		q->backlog = real_backlog;
	verdict = lab_queue_decide(cfg, pkt, q->backlog, len, port_flags);
	if (verdict == LAB_TRIM)
		q->backlog += (__u64)pkt->trimmed_len * pkt->segs;
	else if (verdict != LAB_DROP_QUEUE)
		q->backlog += len;
	bpf_spin_unlock(&q->lock);
	return verdict;
}

/* Rewrite a 16-bit word of the IPv4 header, keeping its checksum right. */
static __always_inline int ipv4_store_word(struct __sk_buff *skb, __u32 l3_off,
					   __u32 word_off, __u16 new_word)
{
	__u16 old_word;

	if (bpf_skb_load_bytes(skb, l3_off + word_off, &old_word, 2))
		return -1;
	if (bpf_l3_csum_replace(skb, l3_off + offsetof(struct iphdr, check),
				old_word, new_word, 2))
		return -1;
	return bpf_skb_store_bytes(skb, l3_off + word_off, &new_word, 2, 0);
}

/* Set the 6-bit DSCP and/or the 2-bit ECN field of the IP header. */
static __always_inline int ip_set_tos(struct __sk_buff *skb,
				      const struct l4_info *l4, __u8 tos)
{
	__u8 b[2];

	if (bpf_skb_load_bytes(skb, l4->l3_off, b, 2))
		return -1;
	if (l4->l3_proto == ETH_P_IP) {
		b[1] = tos;
		return ipv4_store_word(skb, l4->l3_off, 0, *(__u16 *)b);
	}
	/* IPv6: the traffic class straddles bytes 0 and 1. */
	b[0] = (__u8)((b[0] & 0xf0) | (tos >> 4));
	b[1] = (__u8)((b[1] & 0x0f) | (tos << 4));
	return bpf_skb_store_bytes(skb, l4->l3_off, b, 2, 0);
}

static __always_inline int lab_mark_ce(struct __sk_buff *skb,
				       const struct lab_pkt *pkt)
{
	return ip_set_tos(skb, &pkt->l4, pkt->l4.tos | ECN_CE);
}

/* Pseudo-header of the UDP checksum, for either IP version. */
struct udp_pseudo {
	__u8  addrs[32];	/* IPv4 uses the first 8 bytes */
	__u32 len;
	__u8  zero[3];
	__u8  proto;
};

/*
 * Recompute the UDP checksum of a trimmed packet from scratch: it is only
 * headers now (at most 48 bytes of UDP + MRC), so this is cheap, and the
 * receiver's stack accepts the trimmed header as a valid datagram.
 */
static __always_inline int udp_checksum_rebuild(struct __sk_buff *skb,
						const struct l4_info *l4,
						__u32 udp_len)
{
	struct udp_pseudo ph = {};
	__u8 udp[64] = {};
	__u32 ph_len;
	__s64 sum;
	__u16 csum;

	if (l4->l3_proto == ETH_P_IP) {
		if (bpf_skb_load_bytes(skb, l4->l3_off + offsetof(struct iphdr, saddr),
				       ph.addrs, 8))
			return -1;
		/* IPv4 pseudo-header: addrs, zero, proto, 16-bit length. */
		ph.addrs[9] = IPPROTO_UDP_;
		ph.addrs[10] = (__u8)(udp_len >> 8);
		ph.addrs[11] = (__u8)udp_len;
		ph_len = 12;
	} else {
		if (bpf_skb_load_bytes(skb, l4->l3_off + offsetof(struct ipv6hdr, saddr),
				       ph.addrs, 32))
			return -1;
		ph.len = bpf_htonl(udp_len);
		ph.proto = IPPROTO_UDP_;
		ph_len = sizeof(ph);
	}
	if (udp_len > sizeof(udp) || udp_len < sizeof(struct udphdr) ||
	    (udp_len & 3))
		return -1;
	if (bpf_skb_load_bytes(skb, l4->l4_off, udp, udp_len))
		return -1;
	udp[6] = 0;
	udp[7] = 0;
	sum = bpf_csum_diff(NULL, 0, (__be32 *)&ph, ph_len, 0);
	if (sum < 0)
		return -1;
	sum = bpf_csum_diff(NULL, 0, (__be32 *)udp, udp_len, (__u32)sum);
	if (sum < 0)
		return -1;
	csum = csum_fold32((__u64)(__u32)sum);
	if (csum == 0)
		csum = 0xffff;	/* 0 means "no checksum" on the wire */
	return bpf_skb_store_bytes(skb, l4->l4_off + offsetof(struct udphdr, check),
				   &csum, 2, 0);
}

/* Fix the IP and UDP length fields after the payload was cut. */
static __always_inline int lab_fix_lengths(struct __sk_buff *skb,
					   const struct l4_info *l4, __u32 len)
{
	__u16 udp_len = bpf_htons((__u16)(len - l4->l4_off));
	__u16 ip_len;

	if (l4->l3_proto == ETH_P_IP) {
		ip_len = bpf_htons((__u16)(len - l4->l3_off));
		if (ipv4_store_word(skb, l4->l3_off,
				    offsetof(struct iphdr, tot_len), ip_len))
			return -1;
	} else {
		ip_len = bpf_htons((__u16)(len - l4->l3_off - sizeof(struct ipv6hdr)));
		if (bpf_skb_store_bytes(skb, l4->l3_off +
					offsetof(struct ipv6hdr, payload_len),
					&ip_len, 2, 0))
			return -1;
	}
	return bpf_skb_store_bytes(skb, l4->l4_off + offsetof(struct udphdr, len),
				   &udp_len, 2, 0);
}

/*
 * Trim an MRC data packet to its headers, as a trimming switch does, and
 * mark it with the DSCP that tells the receiver where the trim happened.
 */
static __always_inline int lab_trim(struct __sk_buff *skb,
				    const struct lab_pkt *pkt, __u32 port_flags)
{
	__u32 len = pkt->trimmed_len;
	__u8 dscp = lab_trim_dscp(port_flags & LAB_PORT_LASTHOP);

	if (bpf_skb_change_tail(skb, len, 0))
		return -1;
	if (lab_fix_lengths(skb, &pkt->l4, len))
		return -1;
	if (udp_checksum_rebuild(skb, &pkt->l4, len - pkt->l4.l4_off))
		return -1;
	return ip_set_tos(skb, &pkt->l4, (__u8)(dscp << 2 | (pkt->l4.tos & ECN_MASK)));
}

/* A UDP GSO burst being trimmed (lab_trim_gso), for its bpf_loop steps. */
struct lab_gso_trim {
	struct __sk_buff *skb;
	struct lab_gso_hdrs *s;
	struct l4_info l4;
	__u32 off;		/* UDP payload of segment 0 */
	__u32 size;		/* gso_size */
	__u32 hlen;		/* MRC header length of segment 0 */
	__u32 trimmed_len;	/* frame length of one trimmed header */
	__u32 mark;		/* the skb's own mark, put back after each copy */
	__u32 last;		/* the last segment kept */
	__u32 sent;
	__u64 kept;		/* bit i: segment i's header saved */
	int err;
};

/* Save segment i's MRC header if it is as long as segment 0's. */
static long lab_gso_save_hdr(__u32 i, void *data)
{
	struct lab_gso_trim *t = data;
	struct mrc_bth bth;
	__u32 at = t->off + i * t->size, hlen = t->hlen;

	if (i >= LAB_GSO_TRIM_MAX || bpf_skb_load_bytes(t->skb, at, &bth, sizeof(bth)))
		return 1;
	if (!mrc_opcode_is_data(bth.opcode) ||
	    mrc_data_header_len(bth.opcode, (__u8)(bpf_ntohl(bth.psn) >> 24)) != hlen)
		return 0;
	if (hlen < sizeof(bth) || hlen > LAB_MRC_HDR_MAX ||
	    bpf_skb_load_bytes(t->skb, at, t->s->hdr[i], hlen))
		return 0;
	t->kept |= 1ull << i;
	t->last = i;
	return 0;
}

/* Send segment i's trimmed header: a copy, or (the last) the skb itself. */
static long lab_gso_send_hdr(__u32 i, void *data)
{
	struct lab_gso_trim *t = data;
	__u32 hlen = t->hlen;

	if (i >= LAB_GSO_TRIM_MAX)
		return 1;
	if (!(t->kept >> i & 1))
		return 0;
	if (hlen < 1 || hlen > LAB_MRC_HDR_MAX ||
	    bpf_skb_store_bytes(t->skb, t->off, t->s->hdr[i], hlen, 0) ||
	    udp_checksum_rebuild(t->skb, &t->l4, t->trimmed_len - t->l4.l4_off)) {
		t->err = 1;
		return 1;
	}
	if (i == t->last)
		return 1;
	t->skb->mark = LAB_MARK_TRIM_COPY;
	if (!bpf_clone_redirect(t->skb, t->skb->ifindex, 0))
		t->sent++;
	t->skb->mark = t->mark;
	return 0;
}

/*
 * Trim a UDP GSO burst: every segment becomes its own trimmed header, as
 * a switch trims each packet of a burst arriving at a full queue. The MRC
 * headers are saved, the skb is cut to segment 0's trimmed size (which
 * makes it an ordinary packet), and each header in turn goes out in it:
 * the first ones as copies sent through this port (marked, so this
 * program passes them unjudged), the last in the skb itself. A segment
 * whose header is not as long as segment 0's (a WRITE-IMM's last) cannot
 * share the trimmed skb and is lost, as if dropped. *copies gets the
 * copies sent; returns 0 when the skb carries the last header, -1 when it
 * is to be dropped.
 */
static __always_inline int lab_trim_gso(struct __sk_buff *skb,
					const struct lab_pkt *pkt, __u32 port_flags,
					__u32 *copies)
{
	__u32 zero = 0;
	__u8 dscp = lab_trim_dscp(port_flags & LAB_PORT_LASTHOP);
	struct lab_gso_trim t = {
		.skb = skb,
		.s = bpf_map_lookup_elem(&lab_gso_scratch, &zero),
		.l4 = pkt->l4,
		.off = pkt->l4.l4_off + sizeof(struct udphdr),
		.size = skb->gso_size,
		.trimmed_len = pkt->trimmed_len,
		.mark = skb->mark,
	};

	t.hlen = pkt->trimmed_len - t.off;
	if (!t.s || pkt->segs > LAB_GSO_TRIM_MAX || t.hlen > LAB_MRC_HDR_MAX)
		return -1;
	bpf_loop(pkt->segs, lab_gso_save_hdr, &t, 0);
	if (!(t.kept & 1) || bpf_skb_change_tail(skb, pkt->trimmed_len, 0) ||
	    lab_fix_lengths(skb, &pkt->l4, pkt->trimmed_len) ||
	    ip_set_tos(skb, &pkt->l4, (__u8)(dscp << 2 | (pkt->l4.tos & ECN_MASK))))
		return -1;
	t.l4.tos = (__u8)(dscp << 2 | (pkt->l4.tos & ECN_MASK));
	bpf_loop(t.last + 1, lab_gso_send_hdr, &t, 0);
	*copies = t.sent;
	return t.err ? -1 : 0;
}

static __always_inline int lab_count_drop(__u64 *counter)
{
	*counter += 1;
	return TC_ACT_SHOT;
}

static __always_inline int lab_count_drops(__u64 *counter, __u32 n)
{
	*counter += n;
	return TC_ACT_SHOT;
}

static __always_inline int lab_fault_drops(const struct lab_link_cfg *cfg)
{
	if (cfg->blackhole)
		return 1;
	return cfg->drop_ppm && bpf_get_prandom_u32() % 1000000 < cfg->drop_ppm;
}

/* HTB's own handle as skb->priority: its direct queue, sent unshaped. */
#define LAB_TC_DIRECT	0

/*
 * Steer the packet to the port's HTB class: control packets and headers
 * trimmed before this port go first (priority class). A header trimmed
 * right here skips the shaper (HTB's direct queue): the stack measured
 * the packet for the qdisc before this program cut it (qdisc_pkt_len_init
 * runs before tc egress), so in a class it would be charged its full size
 * and wait behind as much data as the trim saved; its real size is in the
 * queue model already.
 */
static __always_inline void lab_set_class(struct __sk_buff *skb,
					  const struct lab_pkt *pkt,
					  enum lab_verdict verdict)
{
	__u32 minor = verdict == LAB_TRIM ? LAB_TC_DIRECT :
		      pkt->mrc_control || pkt->trimmed ? LAB_TC_CLASS_PRIO :
		      LAB_TC_CLASS_DATA;

	skb->priority = LAB_TC_HANDLE_MAJOR << 16 | minor;
}

static __always_inline int lab_apply(struct __sk_buff *skb,
				     const struct lab_pkt *pkt,
				     enum lab_verdict verdict, __u32 port_flags,
				     struct lab_port_stats *st)
{
	__u32 packets = pkt->segs, bytes = pkt->wire_len;

	if (verdict == LAB_DROP_QUEUE)
		return lab_count_drops(&st->drop_queue, packets);
	if (verdict == LAB_TRIM && packets > 1) {
		__u32 copies = 0, segs = packets;
		int ret = lab_trim_gso(skb, pkt, port_flags, &copies);

		/* What did not leave trimmed is lost, as in a tail drop. */
		packets = copies + (ret ? 0 : 1);
		st->trimmed += packets;
		st->packets += packets;
		st->bytes += packets * pkt->trimmed_len;
		st->drop_queue += segs - packets;
		return ret ? TC_ACT_SHOT : TC_ACT_OK;
	} else if (verdict == LAB_TRIM) {
		if (lab_trim(skb, pkt, port_flags))
			return lab_count_drop(&st->malformed);
		st->trimmed++;
		bytes = skb->len;
	} else if (verdict == LAB_MARK_CE) {
		if (lab_mark_ce(skb, pkt))
			return lab_count_drop(&st->malformed);
		st->ecn_marked += packets;
	}
	st->packets += packets;
	st->bytes += bytes;
	return TC_ACT_OK;
}

static __always_inline int lab_port_run(struct __sk_buff *skb, __u32 hook)
{
	struct lab_port_key key = {
		.netns_cookie = lab_dev_netns_cookie(skb),
		.ifindex = skb->ifindex,
		.hook = hook,
	};
	enum lab_verdict verdict = LAB_FORWARD;
	struct lab_link_cfg *cfg;
	struct lab_port_stats *st;
	struct lab_pkt pkt = {};
	struct lab_queue *q;
	struct lab_port *port;
	__u32 id;

	/* A trimmed segment of a burst this port already judged (lab_trim_gso). */
	if (skb->mark == LAB_MARK_TRIM_COPY) {
		skb->mark = 0;
		return TC_ACT_OK;
	}
	/* Ports the lab did not register are not ours: leave them alone. */
	port = bpf_map_lookup_elem(&lab_ports, &key);
	if (!port)
		return TC_ACT_OK;
	if (port->flags & LAB_PORT_REHASH)
		bpf_set_hash_invalid(skb);

	id = port->port_id;
	st = bpf_map_lookup_elem(&lab_stats, &id);
	q = bpf_map_lookup_elem(&lab_queues, &id);
	id = port->link_id;
	cfg = bpf_map_lookup_elem(&lab_links, &id);
	if (!st || !q || !cfg)
		return TC_ACT_OK;

	lab_parse(skb, &pkt);
	/* A GSO burst arrives at once: a fault takes all of it. */
	if (lab_fault_drops(cfg))
		return lab_count_drops(&st->drop_fault, pkt.segs);

	if (cfg->rate_bps) {
		__u64 real = hook == LAB_HOOK_EGRESS ? lab_dev_qdisc_backlog(skb) : 0;

		verdict = lab_queue_admit(q, cfg, &pkt, pkt.wire_len, port->flags, real);
		lab_set_class(skb, &pkt, verdict);
	}
	return lab_apply(skb, &pkt, verdict, port->flags, st);
}

SEC("tc")
int lab_port_ingress(struct __sk_buff *skb)
{
	return lab_port_run(skb, LAB_HOOK_INGRESS);
}

SEC("tc")
int lab_port_egress(struct __sk_buff *skb)
{
	return lab_port_run(skb, LAB_HOOK_EGRESS);
}

char LICENSE[] SEC("license") = "GPL";
