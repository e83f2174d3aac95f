/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Builders of the MRC headers both sides send (docs/WIRE.md): the BTH,
 * and the NACK and SACK a responder answers with. Pure: they write the
 * bytes of the headers from host-order fields, nothing else (no maps, no
 * helpers, no libc), so the XDP program (bpf/mrc/trim_nack.h answers
 * trimmed packets with a NACK) and libmrc (user/libmrc/recv.c) compile
 * this very code and cannot encode a field two ways. Every field of the
 * headers is written, reserved ones as 0: no memset needed before.
 * tests/unit/test_wire_build.c checks them byte by byte.
 */
#ifndef MRC_WIRE_BUILD_H
#define MRC_WIRE_BUILD_H

#include "abi.h"

#ifdef __bpf__
#define WIRE_INLINE static __always_inline
#else
#define WIRE_INLINE static inline
#endif

/* Host to network byte order, the same on both sides (no htonl in BPF). */
WIRE_INLINE __u16 mrc_wire_be16(__u16 v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap16(v);
#else
	return v;
#endif
}

WIRE_INLINE __u32 mrc_wire_be32(__u32 v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(v);
#else
	return v;
#endif
}

/*
 * BTH: opcode, the destination QP's connection key (bytes 1-4;
 * MRC_KEY_INTEROP for an interop QP), destination QP and PSN (low 24
 * bits each), and the flags byte before the PSN (MRC_BTH_F_*; 0 for SACK
 * and NACK). The key's last byte shares the dqpn word: dqpn first.
 */
WIRE_INLINE void mrc_wire_bth(struct mrc_bth *bth, __u8 opcode, __u32 key,
			      __u32 dqpn, __u32 psn, __u8 flags)
{
	bth->opcode = opcode;
	bth->dqpn = mrc_wire_be32(dqpn & MRC_QPN_MASK);
	mrc_bth_set_key(bth, key);
	bth->psn = mrc_wire_be32((psn & MRC_PSN_MASK) | (__u32)flags << 24);
}

/* A NACK as it follows the UDP header: 24 bytes. */
struct mrc_nack_pkt {
	struct mrc_bth bth;
	struct mrc_nackh nh;
};
MRC_ABI_ASSERT_SIZE(struct mrc_nack_pkt, 24);

/* What a NACK says, host order. */
struct mrc_nack_fields {
	__u32 dqpn;	/* the requester's QP */
	__u32 psn;	/* the PSN refused (low 24 bits go out) */
	__u32 cack;	/* the responder's cumulative ack (low 24 bits) */
	__u32 ev;	/* the refused packet's EV (its UDP source port) */
	__u32 key;	/* the requester QP's connection key */
	__u16 ts_echo;	/* its TSETH send_ts; 0 without one */
	__u8 reason;	/* enum mrc_nack_reason */
	__u8 m;		/* enum mrc_sack_m: the receiver's verdict on the EV */
};

WIRE_INLINE void mrc_wire_nack(struct mrc_nack_pkt *pkt,
			       const struct mrc_nack_fields *f)
{
	mrc_wire_bth(&pkt->bth, MRC_OP_NACK, f->key, f->dqpn, f->psn, 0);
	pkt->nh.cack = mrc_wire_be32(f->cack & MRC_PSN_MASK);
	pkt->nh.ev = mrc_wire_be32(f->ev);
	pkt->nh.reason = f->reason;
	pkt->nh.m = f->m;
	pkt->nh.ts_echo = mrc_wire_be16(f->ts_echo);
}

/* A SACK as it follows the UDP header: 44 bytes. */
struct mrc_sack_pkt {
	struct mrc_bth bth;
	struct mrc_sackh sh;
};
MRC_ABI_ASSERT_SIZE(struct mrc_sack_pkt, 44);

/* What a SACK says, host order (struct mrc_sackh explains each field). */
struct mrc_sack_fields {
	__u64 bitmap;		/* bit i acks PSN cack + 1 + bitmap_off + i */
	__u32 dqpn;		/* the requester's QP */
	__u32 psn;		/* the trigger's PSN */
	__u32 cack;		/* low 24 bits go out */
	__u32 ev;		/* the trigger's EV */
	__u32 rcv_bytes;	/* in 256-byte units, as sent */
	__u32 key;		/* the requester QP's connection key */
	__u16 bitmap_off;
	__u16 ts_echo;
	__u16 ooo_count;
	__u16 hold;		/* MRC_TS_UNIT_NS units, saturated by the caller */
	__u8 m;			/* enum mrc_sack_m */
	__u8 penalty;
};

WIRE_INLINE void mrc_wire_sack(struct mrc_sack_pkt *pkt,
			       const struct mrc_sack_fields *f)
{
	mrc_wire_bth(&pkt->bth, MRC_OP_SACK, f->key, f->dqpn, f->psn, 0);
	pkt->sh.cack = mrc_wire_be32(f->cack & MRC_PSN_MASK);
	pkt->sh.ev = mrc_wire_be32(f->ev);
	pkt->sh.bitmap_off = mrc_wire_be16(f->bitmap_off);
	pkt->sh.m = f->m;
	pkt->sh.rsvd = 0;
	pkt->sh.bitmap_hi = mrc_wire_be32((__u32)(f->bitmap >> 32));
	pkt->sh.bitmap_lo = mrc_wire_be32((__u32)f->bitmap);
	pkt->sh.ts_echo = mrc_wire_be16(f->ts_echo);
	pkt->sh.ooo_count = mrc_wire_be16(f->ooo_count);
	pkt->sh.rcv_bytes = mrc_wire_be32(f->rcv_bytes);
	pkt->sh.penalty = f->penalty;
	pkt->sh.rsvd2 = 0;
	pkt->sh.hold = mrc_wire_be16(f->hold);
}

#endif /* MRC_WIRE_BUILD_H */
