// SPDX-License-Identifier: GPL-2.0
/*
 * Valid frames of every kind the fast path meets, built from the current
 * state so that PSNs, QPs and addresses land where the checks are (window
 * edges, the 24-bit wrap, live and unknown QPs, peers and strangers).
 * One writer per header: Ethernet, IP and UDP and the BTH, DATA and SACK
 * headers come from the fixture (build_udp, put_bth, build_data,
 * build_sack), the NACK and endpoint headers from here, so a change of a
 * header's layout is made in one place. mutate.c breaks them afterwards.
 */
#include <string.h>

#include "fuzz.h"

static const __u8 stranger4[4] = { 198, 19, 9, 9 };
static const __u8 stranger6[16] = { 0xfd, 0, 0, 9, [15] = 9 };

/* Where a frame goes: addresses, ports, QP and the state it aims at. */
struct target {
	int qp;			/* fuzzed QP index, -1 = none */
	__u32 dqpn;
	struct hdrs h;
	__u8 src[16], dst[16];
};

/* ---- the headers this file writes ------------------------------------- */

static size_t put_nackh(__u8 *m, __u32 cack, __u32 ev, __u8 reason, __u8 mm,
			__u16 ts_echo)
{
	put32(m, cack & MRC_PSN_MASK);
	put32(m + 4, ev);
	m[8] = reason;
	m[9] = mm;
	put16(m + 10, ts_echo);
	return sizeof(struct mrc_nackh);
}

static size_t put_eph(__u8 *m, __u8 kind, __u8 plane, __u8 status, __u8 flags,
		      __u32 ev, __u16 reply_port)
{
	memset(m, 0, sizeof(struct mrc_eph));
	m[0] = kind;
	m[1] = plane;
	m[2] = status;
	m[3] = flags;
	put32(m + 4, 0x5eed);				/* req_id */
	put32(m + 8, ev);
	put16(m + 12, reply_port);
	return sizeof(struct mrc_eph);
}

/* IPv4 TOS / IPv6 traffic class; the IPv4 header checksum follows. */
static void set_tclass(__u8 *f, __u8 tos)
{
	if (pkt_is_ipv6(f)) {
		f[ETH_LEN] = (__u8)(0x60 | tos >> 4);
		f[ETH_LEN + 1] = (__u8)((f[ETH_LEN + 1] & 0x0f) | (tos & 0x0f) << 4);
	} else {
		f[ETH_LEN + 1] = tos;
		ipv4_csum_fill(f);
	}
}

/* ---- choices from the state ----------------------------------------------- */

/* A 32-bit PSN near what the QP's state makes interesting. */
static __u32 pick_psn(struct fz_rng *r, const struct fz_qp_snap *q)
{
	__u32 una = q->tx.snd_una, nxt = q->tx.snd_nxt, cack = q->rx.cack;

	switch (fz_below(r, 9)) {
	case 0:
		return una + fz_below(r, nxt - una + 1);
	case 1:
		return una - fz_below(r, 8);
	case 2:
		return nxt + fz_below(r, 8) - 4;
	case 3:
		return cack + fz_below(r, 64) - 8;
	case 4:
		return cack + (q->rx.mpr ? q->rx.mpr : 1) + fz_below(r, 4) - 2;
	case 5:
		return cack + 1 + fz_below(r, q->rx.mpr ? q->rx.mpr : 1);
	case 6:
		return MRC_PSN_MASK - fz_below(r, 4);
	case 7:
		return una + MRC_WINDOW_MAX + fz_below(r, 4) - 2;
	default:
		return (__u32)fz_rand(r);
	}
}

/* One of the QP's peer addresses (16 bytes, IPv4 mapped), or a stranger's. */
static int pick_peer(struct fz_rng *r, const struct mrc_qp_info *q, __u8 out[16])
{
	__u32 n = q->n_peer_addrs ? q->n_peer_addrs : 1;

	if (fz_chance(r, 1, 12)) {
		if (fz_chance(r, 1, 2)) {
			mapped4(out, stranger4);
			return 0;
		}
		memcpy(out, stranger6, 16);
		return 1;
	}
	memcpy(out, q->peer_addrs[fz_below(r, n) % MRC_MAX_PEER_ADDRS], 16);
	return !(out[10] == 0xff && out[11] == 0xff && !out[0]);
}

static __u32 unknown_qpn(struct fz_rng *r)
{
	static const __u32 qpns[] = { 0, 2, 77, MRC_MAX_QPS + 1, MRC_QPN_MASK };

	return qpns[fz_below(r, sizeof(qpns) / sizeof(qpns[0]))];
}

/* XDP: from a peer (or a stranger) to us; TC: from us to a peer. */
static void pick_target(struct fz_rng *r, const struct fz_snap *s, enum fz_hook hook,
			struct target *t)
{
	const struct mrc_qp_info *q;
	int v6;

	memset(t, 0, sizeof(*t));
	t->qp = (int)fz_below(r, FZ_QPS);
	q = &s->qp[t->qp].info;
	v6 = pick_peer(r, q, hook == FZ_XDP ? t->src : t->dst);
	if (hook == FZ_XDP) {
		t->dqpn = fz_chance(r, 9, 10) ? fz_qpns[t->qp] : unknown_qpn(r);
		if (v6)
			memcpy(t->dst, local6, 16);
		else
			mapped4(t->dst, local4);
	} else {
		t->dqpn = fz_chance(r, 9, 10) ? q->remote_qpn : unknown_qpn(r);
		if (v6)
			memcpy(t->src, local6, 16);
		else
			mapped4(t->src, local4);
	}
	t->h.ipv6 = v6;
	t->h.src = v6 ? t->src : t->src + 12;
	t->h.dst = v6 ? t->dst : t->dst + 12;
	t->h.sport = hook == FZ_XDP ? (__u16)(1024 + fz_below(r, 64000)) : LOCAL_SPORT;
	t->h.dport = fz_chance(r, 31, 32) ? MRC_UDP_PORT_DEFAULT : (__u16)fz_rand(r);
	t->h.flow = (__u32)fz_rand(r) & 0xFFFFF;
	t->h.zero_csum = fz_chance(r, 1, 16);
}

/* ---- the MRC payloads ------------------------------------------------------ */

static size_t data_payload(struct fz_rng *r, const struct fz_snap *s,
			   const struct target *t, __u8 *m, __u8 *tos)
{
	struct data_spec d = dspec((__u8)(MRC_OP_WRITE_FIRST + fz_below(r, 6)),
				   pick_psn(r, &s->qp[t->qp]), 0);
	d.dqpn = t->dqpn;
	d.flags = (__u8)(fz_below(r, 8) << 5);		/* ACK_REQ, RETX, TS */
	d.msg_len = fz_chance(r, 1, 8) ? 0 : fz_chance(r, 1, 2) ? 1 + fz_below(r, 128) :
		    (__u32)fz_rand(r);
	/* A trimmed header (no data) one time in four. */
	d.payload = fz_chance(r, 1, 4) ? 0 : fz_below(r, 200);
	if (fz_chance(r, 1, 3)) {
		static const __u8 marks[] = { MRC_DSCP_TRIMMED << 2,
			MRC_DSCP_TRIMMED_LASTHOP << 2, 0x03, 0xff };

		*tos = marks[fz_below(r, sizeof(marks))];
	}
	return build_data(m, &d);
}

/* A SACK whose cumulative ack and bitmap sit around the sent window. */
static size_t sack_payload(struct fz_rng *r, const struct fz_snap *s,
			   const struct target *t, __u8 *m)
{
	const struct fz_qp_snap *q = &s->qp[t->qp];
	struct sack_spec sp = sspec(pick_psn(r, q) - 1, fz_rand(r));

	sp.dqpn = t->dqpn;
	sp.psn = pick_psn(r, q);
	sp.ev = (__u32)fz_rand(r);
	sp.off = fz_chance(r, 2, 3) ? (__u16)fz_below(r, 80) : (__u16)fz_rand(r);
	sp.m = (__u8)fz_below(r, 5);
	sp.hold = fz_chance(r, 1, 2) ? 0 : (__u16)fz_rand(r);
	if (fz_chance(r, 1, 3))
		sp.bitmap = ~0ULL >> fz_below(r, 64);
	return build_sack(m, &sp);
}

static __u8 pick_nack_reason(struct fz_rng *r)
{
	static const __u8 reasons[] = { MRC_NACK_TRIMMED, MRC_NACK_TRIMMED_LASTHOP,
		MRC_NACK_NO_BITMAP, MRC_NACK_NO_PKT_BUFFER, MRC_NACK_NO_RESOURCE,
		MRC_NACK_PSN_OOR_WINDOW, MRC_NACK_REMOTE_ACCESS, MRC_NACK_UNEXP_EVENT, 0 };

	if (fz_chance(r, 1, 10))
		return (__u8)fz_rand(r);
	return reasons[fz_below(r, sizeof(reasons))];
}

static size_t nack_payload(struct fz_rng *r, const struct fz_snap *s,
			   const struct target *t, __u8 *m)
{
	const struct fz_qp_snap *q = &s->qp[t->qp];
	size_t n = put_bth(m, MRC_OP_NACK, t->dqpn, 0, pick_psn(r, q));

	return n + put_nackh(m + n, pick_psn(r, q) - 1, (__u32)fz_rand(r),
			     pick_nack_reason(r), (__u8)fz_below(r, 5),
			     (__u16)fz_rand(r));
}

/* EV probe request or response, port status, or an unknown kind. */
static size_t ep_payload(struct fz_rng *r, __u8 *m)
{
	__u8 op = fz_chance(r, 1, 2) ? MRC_OP_EP_REQUEST : MRC_OP_EP_RESPONSE;
	__u8 kind = fz_chance(r, 9, 10) ? (__u8)(1 + fz_below(r, 2)) : (__u8)fz_rand(r);
	size_t n = put_bth(m, op, 0, 0, 0);

	return n + put_eph(m + n, kind, (__u8)fz_below(r, 4), (__u8)fz_below(r, 2),
			   (__u8)fz_below(r, 4), (__u32)fz_rand(r),
			   fz_chance(r, 1, 4) ? 0 : (__u16)(30000 + fz_below(r, 100)));
}

/* Opcodes nobody serves: the RC ACK, and the rest of the byte. */
static size_t odd_payload(struct fz_rng *r, const struct target *t, __u8 *m)
{
	__u8 op = fz_chance(r, 1, 3) ? MRC_OP_ACK : (__u8)fz_rand(r);
	size_t n = put_bth(m, op, t->dqpn, (__u8)fz_rand(r), (__u32)fz_rand(r)), k;
	size_t extra = fz_below(r, 48);

	for (k = 0; k < extra; k++)
		m[n + k] = (__u8)fz_rand(r);
	return n + extra;
}

/* ---- frames ------------------------------------------------------------------ */

/* Bytes that are not even Ethernet + IP, or IP that is not ours. */
static size_t foreign_frame(struct fz_rng *r, __u8 *buf)
{
	size_t len = ETH_LEN + fz_below(r, 120), k;

	build_eth(buf, fz_chance(r, 1, 2) ? 0x0806 : (__u16)fz_rand(r));
	for (k = ETH_LEN; k < len; k++)
		buf[k] = (__u8)fz_rand(r);
	return len;
}

size_t fz_gen_frame(struct fz_rng *r, const struct fz_snap *s, enum fz_hook hook,
		    __u8 *buf)
{
	__u8 m[FZ_FRAME_MAX], tos = 0;
	struct target t;
	size_t mlen, len;
	__u32 kind = fz_below(r, 100);

	if (kind < 3)
		return foreign_frame(r, buf);
	pick_target(r, s, hook, &t);
	if (kind < 45)
		mlen = data_payload(r, s, &t, m, &tos);
	else if (kind < 65)
		mlen = sack_payload(r, s, &t, m);
	else if (kind < 82)
		mlen = nack_payload(r, s, &t, m);
	else if (kind < 87)
		mlen = put_bth(m, MRC_OP_PROBE, t.dqpn, MRC_BTH_F_ACK_REQ,
			       pick_psn(r, &s->qp[t.qp]));
	else if (kind < 95)
		mlen = ep_payload(r, m);
	else
		mlen = odd_payload(r, &t, m);
	len = build_udp(&t.h, m, mlen, buf);
	if (tos)
		set_tclass(buf, tos);
	return len;
}
