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

/*
 * Shared state is laid out by writer: a 64-byte cache line that a hot path
 * writes has one writer (docs/ARCHITECTURE.md, "Who writes which shared
 * word"), and a struct that holds such lines is a whole number of lines,
 * so that slots of an array never share one either.
 */
#define MRC_CACHE_LINE	64
#define MRC_ABI_ASSERT_LINE(type, field) \
	_Static_assert(__builtin_offsetof(type, field) % MRC_CACHE_LINE == 0, \
		       #type "." #field " must start a cache line")
#define MRC_ABI_ASSERT_LINES(type) \
	_Static_assert(sizeof(type) % MRC_CACHE_LINE == 0, \
		       #type " must be a whole number of cache lines")

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

/*
 * Base transport header: 12 bytes, network byte order. Bytes 1-4 are the
 * 32-bit big-endian connection key of the destination QP (docs/WIRE.md
 * section 10): where InfiniBand has a reserved byte, the partition key
 * and the reserved top byte of the QP word. Read and write it only with
 * mrc_bth_key() / mrc_bth_set_key(): it straddles the dqpn word, so
 * whoever writes dqpn writes it first and the key after, and whoever
 * reads dqpn masks it with MRC_QPN_MASK.
 */
struct mrc_bth {
	__u8	opcode;
	__u8	key_hi[3];	/* key bytes 0-2 (most significant first) */
	__u32	dqpn;		/* top 8 bits: key byte 3; low 24: destination QP */
	__u32	psn;		/* top 8 bits: MRC_BTH_F_*, low 24: PSN */
};
MRC_ABI_ASSERT_SIZE(struct mrc_bth, 12);

/*
 * The key bytes an interop QP sends, as InfiniBand has them: reserved 0,
 * partition key 0xFFFF, reserved 0. A keyed QP never draws this value
 * (nor 0), so a packet carrying it is never taken for a keyed one's.
 */
#define MRC_KEY_INTEROP		0x00ffff00u

/* Byte-wise: the BTH sits 2 bytes off a 4-byte boundary behind UDP. */
#ifdef __bpf__
#define MRC_ABI_INLINE	static inline __attribute__((always_inline))
#else
#define MRC_ABI_INLINE	static inline
#endif

MRC_ABI_INLINE __u32 mrc_bth_key(const struct mrc_bth *bth)
{
	const __u8 *b = (const __u8 *)bth;

	return (__u32)b[1] << 24 | (__u32)b[2] << 16 | (__u32)b[3] << 8 | b[4];
}

MRC_ABI_INLINE void mrc_bth_set_key(struct mrc_bth *bth, __u32 key)
{
	__u8 *b = (__u8 *)bth;

	b[1] = (__u8)(key >> 24);
	b[2] = (__u8)(key >> 16);
	b[3] = (__u8)(key >> 8);
	b[4] = (__u8)key;
}

/* MRC extended transport header: message numbers. */
struct mrc_meth {
	__u16	wimm_msn;	/* WRITE-with-IMMEDIATE message number */
	__u16	msn;		/* message number */
};
MRC_ABI_ASSERT_SIZE(struct mrc_meth, 4);

/* Wire time unit of TSETH send_ts and the SACK's hold: 128 ns. */
#define MRC_TS_SHIFT		7
#define MRC_TS_UNIT_NS		(1u << MRC_TS_SHIFT)

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
/* Acknowledgements and control packets                                   */
/* ---------------------------------------------------------------------- */

/* M field of a SACK or NACK: what the receiver says about the echoed EV. */
enum mrc_sack_m {
	MRC_M_NONE		= 0,
	MRC_M_SKIP_ONCE		= 1,	/* that packet was ECN CE marked */
	MRC_M_ALWAYS_SKIP	= 2,	/* the receiver judges the path bad */
};

/*
 * SACK extension header, after a BTH with opcode MRC_OP_SACK whose PSN is
 * the PSN of the packet that triggered the SACK. 32 bytes.
 * Bit i of the bitmap acknowledges PSN cack + 1 + bitmap_off + i. The
 * bitmap is split in two words so every field is naturally aligned.
 */
struct mrc_sackh {
	__u32	cack;		/* low 24 bits: cumulative ack PSN */
	__u32	ev;		/* echoed entropy value */
	__u16	bitmap_off;	/* in PSNs, from cack + 1 */
	__u8	m;		/* enum mrc_sack_m (low 2 bits) */
	__u8	rsvd;
	__u32	bitmap_hi;	/* bits 63..32 */
	__u32	bitmap_lo;	/* bits 31..0 */
	__u16	ts_echo;	/* TSETH send_ts of the trigger, 0 when none */
	__u16	ooo_count;	/* packets received out of order so far */
	__u32	rcv_bytes;	/* bytes received, in 256-byte units (wraps) */
	__u8	penalty;	/* receiver window penalty, 0 = none */
	__u8	rsvd2;
	/*
	 * How long the responder held the trigger before this SACK left, in
	 * MRC_TS_UNIT_NS units (saturates at 0xffff; 0 = not measured). The
	 * requester takes it off the trigger's RTT for congestion control,
	 * which wants the fabric's delay, not the responder's scheduling: a
	 * NIC acks at once, our responder acks from userspace.
	 */
	__u16	hold;
};
MRC_ABI_ASSERT_SIZE(struct mrc_sackh, 32);

/* NACK reason codes. The values follow the public MRC material. */
enum mrc_nack_reason {
	MRC_NACK_TRIMMED	 = 0x01,	/* trimmed mid-path: penalise the EV */
	MRC_NACK_TRIMMED_LASTHOP = 0x02,	/* trimmed at the last hop: incast */
	MRC_NACK_NO_BITMAP	 = 0x06,
	MRC_NACK_NO_PKT_BUFFER	 = 0x07,
	MRC_NACK_NO_RESOURCE	 = 0x0A,	/* e.g. no receive posted for an IMM */
	MRC_NACK_PSN_OOR_WINDOW	 = 0x0B,
	MRC_NACK_REMOTE_ACCESS	 = 0x13,	/* our choice: bad key/bounds/rights */
	MRC_NACK_UNEXP_EVENT	 = 0x19,	/* QP in error: do not retry */
};

/*
 * NACK extension header, after a BTH with opcode MRC_OP_NACK whose PSN is
 * the PSN being refused. 12 bytes.
 */
struct mrc_nackh {
	__u32	cack;		/* low 24 bits: cumulative ack PSN */
	__u32	ev;		/* echoed entropy value */
	__u8	reason;		/* enum mrc_nack_reason */
	__u8	m;		/* enum mrc_sack_m */
	__u16	ts_echo;
};
MRC_ABI_ASSERT_SIZE(struct mrc_nackh, 12);

/*
 * Endpoint control packets: a BTH with opcode MRC_OP_EP_REQUEST or
 * MRC_OP_EP_RESPONSE, destination QP 0, PSN 0, then this header (40 B).
 *
 * EV probe: the requester (mrcd) sends a request from its socket on the
 * plane under test to the peer's address on that plane. TC egress on the
 * requester stamps the EV into the packet (UDP source port, and the flow
 * label for STEV), saves the socket's port in reply_port and the time in
 * t_tx_ns. The responder's XDP answers in place: it swaps the addresses,
 * turns the opcode into a response, fills service_ns and sends it back
 * out of the interface it came in on (XDP_TX). The requester's XDP stamps
 * t_rx_ns and steers the response to reply_port. RTT = t_rx - t_tx, both
 * read from the requester's clock at the wire edge.
 *
 * Port status: mrcd tells a peer that one of its planes went down or came
 * back, over the planes still up. The peer's XDP hands it to the peer's
 * mrcd (mrc_global_cfg.agent_port), which demotes or re-probes the EVs of
 * that plane of every QP to the sender.
 */
enum mrc_ep_kind {
	MRC_EP_EV_PROBE		= 1,
	MRC_EP_PORT_STATUS	= 2,
};

struct mrc_eph {
	__u8	kind;		/* enum mrc_ep_kind */
	__u8	plane;		/* EV_PROBE: plane probed; PORT_STATUS: plane that changed (1-based) */
	__u8	status;		/* PORT_STATUS: 1 = up, 0 = down */
	__u8	flags;		/* MRC_EPH_F_* */
	__u32	req_id;		/* chosen by the requester, echoed */
	__u32	ev;		/* EV_PROBE: the entropy value probed */
	__u16	reply_port;	/* requester's socket port (TC fills it in) */
	__u16	rsvd;
	__u32	service_ns;	/* responder: time from arrival to XDP_TX */
	__u32	srv6_block;	/* MRC_EPH_F_SRV6: locator block (network order), else 0 */
	__u64	t_tx_ns;	/* requester TC egress time (bpf_ktime_get_ns) */
	__u64	t_rx_ns;	/* requester XDP ingress time of the response */
};
MRC_ABI_ASSERT_SIZE(struct mrc_eph, 40);

/* eph.flags: the EV is in STEV format (high 16 bits go in the flow label). */
#define MRC_EPH_F_STEV	0x01
/*
 * eph.flags: the EV is in SRv6 format (high 16 bits are the uSID); srv6_block
 * holds the locator block (network byte order). TC puts the request in
 * its SRv6 envelope, the responder's XDP answers in one over the same uSID.
 */
#define MRC_EPH_F_SRV6	0x02

/*
 * A reliability probe (MRC_OP_PROBE) is a bare BTH with ACK_REQ set and the
 * PSN of the oldest unacknowledged packet; the responder answers it with a
 * SACK. It asks "what do you have?" without resending data.
 */

#define MRC_PSN_MASK		0x00ffffffu
#define MRC_QPN_MASK		0x00ffffffu

/* ---------------------------------------------------------------------- */
/* Transport state shared by the XDP program and libmrc                   */
/* ---------------------------------------------------------------------- */

/*
 * QP numbers are 1..max_qps on a host (mrcd --max-qps, at most
 * MRC_QPS_LIMIT); slot = qpn - 1 indexes every per-QP array. A QP number
 * is claimed by inserting into mrc_qp_owner.
 */
/*
 * The version of everything in this file that crosses the pinned maps:
 * bump it whenever a shared struct, a map's size or a meaning changes.
 * mrcd stores it in mrc_cfg; user/common/pins.c checks it.
 */
#define MRC_ABI_VERSION		8	/* 8: QP state in blocks (mrc_qp_info.state_idx); 7: per-QP state inner maps (mrc_rx, mrc_tx, mrc_qp_evs, mrc_cc_view); 6: SRv6 EVs */

/*
 * How many QPs and processes a host serves is mrcd's choice (--max-qps,
 * --max-contexts), made when it sizes the maps; MRC_MAX_QPS and
 * MRC_MAX_CTX are only the sizes the BPF object is built with (its
 * defaults). Nothing that reads the maps may assume them: it learns the
 * limits from the maps (user/common/pins.h). The limits are bounded by
 * the QP number space and by what a map may hold.
 */
#define MRC_MAX_QPS		256
#define MRC_MAX_CTX		64	/* processes using libmrc at once */
#define MRC_QPS_LIMIT		65536
#define MRC_CTX_LIMIT		4096
#define MRC_MAX_PEER_ADDRS	8	/* one per plane, plane order */
#define MRC_MAX_PLANES_ABI	8
#define MRC_MAX_EVS		256	/* EV table of one QP */
#define MRC_CTX_RING_BYTES	(1u << 20)	/* event ring of one context */

/*
 * The largest window. Receive and send bitmaps are rings of this many
 * PSNs, so a QP's MPR may not exceed it. A QP's send log is sized by its
 * own window (mrc_send_log_entries), this many records at most.
 */
#define MRC_WINDOW_MAX		4096
#define MRC_BITMAP_WORDS	(MRC_WINDOW_MAX / 64)
#define MRC_MPR_UNIT		128	/* MPR is configured in units of this */
#define MRC_WR_RING		512	/* outstanding WRITEs per QP */
#define MRC_DUPTHRESH		3	/* a hole this far below the highest SACK is lost */
#define MRC_LOSS_BURST		32	/* loss reports one SACK may emit */
#define MRC_COMPL_BURST		32	/* completions one SACK may emit */

/* QP states, as in verbs. */
enum mrc_qp_state_code {
	MRC_QPS_RESET	= 0,
	MRC_QPS_INIT	= 1,
	MRC_QPS_RTR	= 2,
	MRC_QPS_RTS	= 3,
	MRC_QPS_ERROR	= 4,
};

/* How the EV rides in the packet. */
enum mrc_ev_format {
	MRC_EVF_UDP	= 0,	/* UDP source port only (IPv4 and IPv6) */
	MRC_EVF_STEV	= 1,	/* low 16 bits UDP sport, high 16 in the flow label */
	/*
	 * IPv6 only: low 16 bits UDP sport, high 16 the micro-SID (uSID) of
	 * the node the packet must cross (the spine). TC puts the packet in
	 * an SRv6 envelope (docs/WIRE.md section 13) whose uSID carrier is
	 * the QP's srv6_block followed by that uSID; the receiver's XDP
	 * takes it out.
	 */
	MRC_EVF_SRV6	= 2,
};

/*
 * The SRv6 envelope TC puts in front of the inner IPv6 header: an outer
 * IPv6 header (40 bytes) and a segment routing header with two segments
 * (8 + 2 x 16 bytes): segment 1 the uSID carrier, segment 0 the
 * destination, Segments Left 1.
 */
#define MRC_SRV6_ENCAP_LEN	80
#define MRC_SRV6_SRH_LEN	40
#define MRC_SRV6_SEGS		2
#define MRC_SRV6_ROUTING_TYPE	4	/* IPv6 routing header type: SRH */

/*
 * Static description of a QP, written by libmrc when the QP reaches RTR,
 * read by XDP (validation, steering) and TC (EV stamping). Addresses are
 * IPv6 or IPv4-mapped IPv6, network byte order.
 */
struct mrc_qp_info {
	__u32	state;		/* enum mrc_qp_state_code */
	__u32	ctx;		/* event ring index of the owning context */
	__u32	remote_qpn;
	__u32	mpr;		/* responder window, PSNs */
	__u16	sock_port;	/* local UDP port of the owner's socket (host order) */
	__u8	n_peer_addrs;
	__u8	ev_format;	/* enum mrc_ev_format */
	__u32	n_evs;		/* entries used in mrc_qp_evs */
	__u8	peer_addrs[MRC_MAX_PEER_ADDRS][16];
	__u32	cc_slot;	/* 1-based window (mrc_cc); 0 = none */
	/*
	 * Connection keys (docs/WIRE.md section 10). With MRC_QP_F_KEYED,
	 * XDP drops (BAD_KEY) every packet addressed to this QP whose BTH
	 * key is not local_key, before it changes any state. peer_key is
	 * what packets to the peer's QP carry: XDP writes it into the NACK
	 * it builds for a trimmed packet. An interop QP (flag clear) checks
	 * nothing and has peer_key = MRC_KEY_INTEROP.
	 */
	__u32	local_key;
	__u32	peer_key;
	__u32	flags;		/* enum mrc_qp_info_flags */
	/*
	 * MRC_EVF_SRV6: the uSID locator block, the carrier's first 32 bits
	 * (network byte order, e.g. fd00:5::/32 is 0xfd000005 big endian).
	 */
	__u32	srv6_block;
	/*
	 * The QP's entry in its state maps (mrc_rx, mrc_tx, mrc_qp_evs at
	 * its slot): one owner's QPs share blocks of entries, side by side,
	 * so the fast path does not take a page (and a TLB miss) per QP.
	 * Set by the entry's allocator (libmrc, or mrcd's broker, which
	 * overrides what an application asks); a slot's map has no such
	 * entry: no state (the lookup fails).
	 */
	__u32	state_idx;
};
MRC_ABI_ASSERT_SIZE(struct mrc_qp_info, 176);

/* The RoCEv2 ICRC trailer, and the BTH bytes it masks (mrc/icrc.h). */
#define MRC_ICRC_LEN		4
#define MRC_ICRC_BTH_LEN	12

enum mrc_qp_info_flags {
	MRC_QP_F_KEYED	= 1 << 0,	/* check the key of arriving packets */
	/*
	 * RoCEv2 invariant CRC on data packets (docs/WIRE.md section 12):
	 * libmrc appends MRC_ICRC_LEN placeholder bytes, TC fills them, XDP
	 * drops (BAD_ICRC) a data packet whose trailer is not its ICRC.
	 */
	MRC_QP_F_ICRC	= 1 << 1,
	/*
	 * libmrc sends each datagram to the peer's address on a plane of its
	 * own rotation (one plane after the other, as the EV table goes
	 * round them): TC takes an EV of the plane the packet is already on
	 * (mrc/tc_spray.h sender_column), so it needs no move to another
	 * plane. Without the flag TC's cursor picks the plane.
	 */
	MRC_QP_F_SENDER_PLANE = 1 << 2,
};

/*
 * TC egress finds the local QP of an outgoing packet from its destination:
 * the peer's QP number and address. Value: the local QP number.
 */
struct mrc_peer_key {
	__u32	remote_qpn;
	__u8	addr[16];
};
MRC_ABI_ASSERT_SIZE(struct mrc_peer_key, 20);

/* Path states: only GOOD (and SKIP for one turn) EVs carry data. */
enum mrc_ev_state {
	MRC_EV_GOOD		= 0,
	MRC_EV_SKIP		= 1,
	MRC_EV_ASSUMED_BAD	= 2,
	MRC_EV_DENIED		= 3,
};

/* Flags of an EV table entry. */
enum mrc_ev_flags {
	MRC_EV_F_ACTIVE	= 1 << 0,	/* in the rotation; otherwise a backup */
	/*
	 * Demoted while ACTIVE with no GOOD backup of its plane to take its
	 * place: it gets its place in the rotation back when it recovers, so
	 * the plane regains its share.
	 */
	MRC_EV_F_OWED	= 1 << 1,
	/*
	 * Demoted by a retransmission timeout in libmrc, which has no event
	 * ring to mrcd: mrcd finds the entry in the table and reports it with
	 * reason TIMEOUT. Cleared on recovery.
	 */
	MRC_EV_F_BY_TIMEOUT = 1 << 2,
};

/*
 * One path of a QP: an entropy value, the plane it leaves on and, when
 * path discovery found it, which of the plane's spines it crosses.
 * plane, path, state and flags share one 32-bit word so that XDP, TC,
 * libmrc and mrcd change them together with one compare-and-swap
 * (`word`): a state change never undoes another CPU's or process's change.
 */
struct mrc_ev_entry {
	__u32	ev;
	union {
		struct {
			__u8	plane;		/* 1-based */
			/*
			 * 1-based index of the spine (first router) the EV
			 * crosses in its plane, from libmrc's path discovery;
			 * 0 = unknown. EVs sharing a path fail together.
			 */
			__u8	path;
			__u8	state;		/* enum mrc_ev_state */
			__u8	flags;		/* enum mrc_ev_flags */
		};
		__u32	word;
	};
};
MRC_ABI_ASSERT_SIZE(struct mrc_ev_entry, 8);

/* A fresh word (path unknown), little endian. */
static inline __u32 mrc_ev_word(__u8 plane, __u8 state, __u8 flags)
{
	return (__u32)plane | (__u32)state << 16 | (__u32)flags << 24;
}

/* Word `w` with another state and flags, plane and path kept. */
static inline __u32 mrc_ev_word_with(__u32 w, __u8 state, __u8 flags)
{
	return (w & 0xffff) | (__u32)state << 16 | (__u32)flags << 24;
}
#define MRC_EV_WORD_PLANE(w)	((__u8)((w) & 0xff))
#define MRC_EV_WORD_PATH(w)	((__u8)((w) >> 8))
#define MRC_EV_WORD_STATE(w)	((__u8)((w) >> 16))
#define MRC_EV_WORD_FLAGS(w)	((__u8)((w) >> 24))

/*
 * A QP's paths, entry mrc_qp_info.state_idx of the BPF_F_MMAPABLE map
 * mrc_qp_evs holds at the QP's slot (a block of its owner's QPs). TC egress walks `perm` (a permutation of 0..n_evs-1,
 * reshuffled each time the cursor wraps) and sends on the entry it names
 * if that entry is ACTIVE and GOOD; an entry in SKIP loses this turn and
 * becomes GOOD again. XDP moves entries between states from the SACKs.
 */
struct mrc_qp_evs {
	/* Line 0: set at RTR by libmrc; then only n_down changes (demotions). */
	/*
	 * Redraws only swap positions `stride` apart (0 or 1: any two).
	 * libmrc lays the table out plane by plane in turn and sets stride to
	 * the number of planes, so consecutive packets keep visiting the
	 * planes in turn and no plane's queue gets a burst.
	 */
	__u32	stride;
	__u16	profile;	/* EV profile the table was built from */
	/*
	 * ev_min_active of that profile: automatic demotion (loss, timeout,
	 * ALWAYS_SKIP, port status) never leaves fewer usable entries (GOOD
	 * or SKIP, active or backup) than this. Only the controller's deny
	 * goes below it.
	 */
	__u16	min_active;
	__u32	n_down;		/* entries in ASSUMED_BAD or DENIED (atomic) */
	__u32	_pad0[13];
	/* Line 1: TC's, per packet. */
	__u32	next;		/* rotation cursor */
	__u32	shuffles;	/* times the permutation was redrawn */
	__u32	_pad1[14];
	/* Entry words: CAS by their owners (ARCHITECTURE.md, EV table). */
	struct mrc_ev_entry ev[MRC_MAX_EVS];
	__u8	perm[MRC_MAX_EVS];	/* TC's (redrawn on each wrap) */
};
MRC_ABI_ASSERT_SIZE(struct mrc_qp_evs, 2 * MRC_CACHE_LINE + 9 * MRC_MAX_EVS);
MRC_ABI_ASSERT_LINE(struct mrc_qp_evs, next);
MRC_ABI_ASSERT_LINE(struct mrc_qp_evs, ev);
MRC_ABI_ASSERT_LINES(struct mrc_qp_evs);

/* Marks in a row after which an EV is swapped for a backup of its plane. */
#define MRC_EV_SWAP_MARKS	8

/*
 * The receiver's ALWAYS_SKIP verdict: this many packets in a row arriving
 * on one EV CE-marked (no clean packet between; trimmed headers never
 * reach libmrc: XDP answers them, and the sender counts mid-path trims
 * itself) and the SACK they trigger says M = ALWAYS_SKIP; the sender demotes the EV to
 * ASSUMED_BAD. Twice the sender's own swap threshold: the verdict is the
 * backstop for when the sender's view (its SKIP_ONCE echoes) is incomplete.
 */
#define MRC_ALWAYS_SKIP_MARKS	16

/* Consecutive answered probes that bring an ASSUMED_BAD EV back (default). */
#define MRC_PROBE_SUCCESSES_DEFAULT	3

/*
 * Per-EV counters of one QP, as readers see them (mrcctl ev list, tests):
 * mrc_ev_counters_of() assembles them from the two blocks of
 * struct mrc_qp_ev_stats, which are split by writer.
 */
struct mrc_ev_counters {
	__u64	packets;	/* sent on this EV (TC) */
	__u64	bytes;
	__u64	acked;		/* SACKs triggered by a packet on this EV */
	__u64	ecn;		/* SACKs echoing a CE mark (M = SKIP_ONCE) */
	__u64	trims;		/* NACK TRIMMED of a packet on this EV */
	__u64	losses;		/* holes and NACKs attributed to this EV */
	__u64	rtt_sum_ns;	/* over acked, not retransmitted packets */
	__u32	rtt_samples;
	__u32	marks_in_row;	/* ECN/trim marks since the last clean SACK */
	/* Send time of the newest packet on this EV that was SACKed (XDP). */
	__u64	acked_sent_ns;
	/* When a loss last took this EV out (XDP), for the same-path rule. */
	__u64	lost_ns;
};
MRC_ABI_ASSERT_SIZE(struct mrc_ev_counters, 80);

/*
 * Two EVs of one spine lost within this long: the spine is failing, and
 * its other EVs go too. Lone losses further apart are not a pattern.
 */
#define MRC_SAME_PATH_WINDOW_NS	20000000

/* What TC counts per EV, per packet sent. */
struct mrc_ev_tx_counters {
	__u64	packets;
	__u64	bytes;
};
MRC_ABI_ASSERT_SIZE(struct mrc_ev_tx_counters, 16);

/* What XDP counts per EV from the SACKs and NACKs: one cache line. */
struct mrc_ev_rx_counters {
	__u64	acked;
	__u64	ecn;
	__u64	trims;
	__u64	losses;
	__u64	rtt_sum_ns;
	__u32	rtt_samples;
	__u32	marks_in_row;
	__u64	acked_sent_ns;
	__u64	lost_ns;
};
MRC_ABI_ASSERT_SIZE(struct mrc_ev_rx_counters, MRC_CACHE_LINE);

/*
 * Per-EV counters of one QP, in two inner maps by writer (BPF_MAP_TYPE_
 * ARRAY, key: the EV's index in mrc_qp_evs, n_evs entries, created by
 * libmrc when it publishes the QP's EV table): mrc_ev_stats[slot] holds
 * struct mrc_ev_rx_counters (XDP's, per SACK), mrc_ev_tx[slot] struct
 * mrc_ev_tx_counters (TC's, per packet). Two maps are two allocations, so
 * TC's per-packet adds and XDP's per-SACK updates never touch one cache
 * line, and each block is as long as the QP's table, not MRC_MAX_EVS.
 *
 * struct mrc_qp_ev_stats is no map value: it is a reader's copy of both
 * inner maps of a QP (user/common/qpmaps.h), room for the largest table.
 */
struct mrc_qp_ev_stats {
	struct mrc_ev_rx_counters rx[MRC_MAX_EVS];	/* XDP */
	struct mrc_ev_tx_counters tx[MRC_MAX_EVS];	/* TC */
};
MRC_ABI_ASSERT_SIZE(struct mrc_qp_ev_stats, 80 * MRC_MAX_EVS);

/* The counters of entry idx, both blocks together. */
static inline struct mrc_ev_counters
mrc_ev_counters_of(const struct mrc_qp_ev_stats *s, __u32 idx)
{
	const struct mrc_ev_rx_counters *rx = &s->rx[idx % MRC_MAX_EVS];
	struct mrc_ev_counters c = {
		.packets = s->tx[idx % MRC_MAX_EVS].packets,
		.bytes = s->tx[idx % MRC_MAX_EVS].bytes,
		.acked = rx->acked, .ecn = rx->ecn, .trims = rx->trims,
		.losses = rx->losses, .rtt_sum_ns = rx->rtt_sum_ns,
		.rtt_samples = rx->rtt_samples, .marks_in_row = rx->marks_in_row,
		.acked_sent_ns = rx->acked_sent_ns, .lost_ns = rx->lost_ns,
	};

	return c;
}

/*
 * Send log of one QP: which EV and plane carried a PSN's latest
 * transmission and when, for the ACK path. An inner map per QP
 * (mrc_send_log[slot], BPF_MAP_TYPE_ARRAY of struct mrc_send_rec) that
 * libmrc creates when it publishes the QP's EV table, sized by the QP's
 * window (mrc_send_log_entries): PSN psn lives in record
 * psn & (max_entries - 1). A sender has at most its window (MPR) in
 * flight, so the records of the PSNs in flight never collide; a record
 * names its full PSN, so one that a newer PSN took over is never taken
 * for the older one.
 */
struct mrc_send_rec {
	union {
		struct {
			__u32	psn;	/* full 32-bit PSN this record is about */
			__u8	ev_idx;	/* index into mrc_qp_evs.ev */
			__u8	plane;
			__u8	flags;	/* MRC_BTH_F_RETX when a retransmission */
			__u8	nacked;	/* a NACK acted on this send (XDP sets, TC clears) */
		};
		__u64	head;		/* the fields above as one word: one store, one CAS */
	};
	__u64	sent_ns;
};
MRC_ABI_ASSERT_SIZE(struct mrc_send_rec, 16);

/* A record's head word from its fields (byte order left to the compiler). */
static inline __u64 mrc_send_rec_head(__u32 psn, __u8 ev_idx, __u8 plane,
				      __u8 flags, __u8 nacked)
{
	struct mrc_send_rec r = {
		.psn = psn, .ev_idx = ev_idx, .plane = plane,
		.flags = flags, .nacked = nacked,
	};

	return r.head;
}

/* Records in the send log of a QP with this window (PSNs): a power of two. */
static inline __u32 mrc_send_log_entries(__u32 window)
{
	__u32 n = MRC_MPR_UNIT;

	while (n < window && n < MRC_WINDOW_MAX)
		n <<= 1;
	return n;
}

/*
 * No map value: a reader's copy of one QP's send log, room for the
 * largest (record i of a log of n records at rec[i], i < n).
 */
struct mrc_send_log {
	struct mrc_send_rec rec[MRC_WINDOW_MAX];
};

/*
 * EVs the responder learned from the data direction, per plane, for its
 * SACKs and NACKs: a small ring per plane that XDP fills from the source
 * ports of arriving DATA and TC egress picks from.
 */
#define MRC_REV_EVS	8
struct mrc_rev_evs {
	/* XDP's, per DATA packet. */
	__u32	next[MRC_MAX_PLANES_ABI];	/* fill cursor per plane */
	__u32	ev[MRC_MAX_PLANES_ABI][MRC_REV_EVS];
	__u32	_pad0[8];
	/* TC's, per ACK. */
	__u32	pick;				/* plane rotation for ACKs */
	__u32	_pad1[15];
};
MRC_ABI_ASSERT_SIZE(struct mrc_rev_evs, 6 * MRC_CACHE_LINE);
MRC_ABI_ASSERT_LINE(struct mrc_rev_evs, pick);

/*
 * Responder state of one QP, entry mrc_qp_info.state_idx of the
 * BPF_F_MMAPABLE map mrc_rx holds at the QP's slot: libmrc writes it
 * as it places data, XDP reads it to drop duplicates and out-of-window
 * packets before they cost a socket wake-up. libmrc stays authoritative.
 * PSNs here are 32-bit extensions of the 24-bit wire PSN.
 */
struct mrc_rx_state {
	/* Line 0: libmrc's, per placed packet. */
	__u32	cack;		/* every PSN <= cack has been placed */
	__u32	mpr;		/* window: accept (cack, cack + mpr) */
	__u32	generation;	/* bumped when the QP is (re)initialised */
	__u32	_pad0[13];
	/* Line 1: XDP sets it on a duplicate, libmrc clears it. */
	__u32	sack_pending;	/* XDP saw a duplicate: libmrc owes a SACK */
	__u32	_pad1[15];
	__u64	placed[MRC_BITMAP_WORDS];	/* ring of placed PSNs above cack (libmrc) */
};
MRC_ABI_ASSERT_SIZE(struct mrc_rx_state, 2 * MRC_CACHE_LINE + 8 * MRC_BITMAP_WORDS);
MRC_ABI_ASSERT_LINE(struct mrc_rx_state, sack_pending);
MRC_ABI_ASSERT_LINE(struct mrc_rx_state, placed);
MRC_ABI_ASSERT_LINES(struct mrc_rx_state);

/*
 * A posted WRITE, as XDP needs it to complete it: only where it ends.
 * libmrc keeps the rest (the WR id, the opcode) in its own queue and
 * matches completions by PSN, so nothing else makes the round trip.
 */
struct mrc_wr_rec {
	__u32	last_psn;	/* completed once snd_una is past this */
};
MRC_ABI_ASSERT_SIZE(struct mrc_wr_rec, 4);

/*
 * Requester state of one QP, entry mrc_qp_info.state_idx of the
 * BPF_F_MMAPABLE map mrc_tx holds at the QP's slot. libmrc writes
 * snd_nxt and the WR ring tail; XDP advances snd_una, sack_max, loss_mark
 * and wr_head with atomic compare-and-swap, because SACKs of one QP can be
 * processed on several CPUs at once. XDP only sets `sacked` bits (for
 * PSNs in [snd_una, snd_nxt)); libmrc clears a PSN's slot before it sends
 * that PSN for the first time, which frees slots for reuse.
 */
struct mrc_tx_state {
	/* Line 0: XDP's, per SACK (libmrc resets it at RTS). */
	__u32	snd_una;	/* oldest PSN not cumulatively acked */
	__u32	sack_max;	/* one past the highest selectively acked PSN */
	__u32	loss_mark;	/* holes below this were already reported */
	__u32	wr_head;	/* next WR record to complete (XDP) */
	__u32	srtt_ns;	/* smoothed RTT of SACK triggers (XDP) */
	__u32	rttvar_ns;	/* its mean deviation */
	__u32	rtt_peak_ns;	/* recent largest RTT, decaying 1/64 a sample */
	__u32	rtt_min_ns;	/* smallest fabric RTT sample (no hold), 0 = none */
	__u32	_pad0[8];
	/* Line 1: XDP's. Send time of the newest packet SACKed on each plane. */
	__u64	acked_sent_ns[MRC_MAX_PLANES_ABI];
	/* Line 2: libmrc's, per packet and per post. */
	__u32	snd_nxt;	/* next new PSN (libmrc) */
	__u32	wr_tail;	/* next free WR record (libmrc) */
	__u32	state;		/* enum mrc_qp_state_code; XDP sets ERROR */
	__u32	generation;
	__u32	_pad2[12];
	/*
	 * XDP sets bits, libmrc clears a PSN's bit before its first send: two
	 * writers by design (they free slots for reuse), on different bits.
	 */
	__u64	sacked[MRC_BITMAP_WORDS];	/* ring of SACKed PSNs */
	struct mrc_wr_rec wr[MRC_WR_RING];	/* libmrc writes, XDP reads */
};
MRC_ABI_ASSERT_SIZE(struct mrc_tx_state,
		    3 * MRC_CACHE_LINE + 8 * MRC_BITMAP_WORDS + 4 * MRC_WR_RING);
MRC_ABI_ASSERT_LINE(struct mrc_tx_state, acked_sent_ns);
MRC_ABI_ASSERT_LINE(struct mrc_tx_state, snd_nxt);
MRC_ABI_ASSERT_LINE(struct mrc_tx_state, sacked);
MRC_ABI_ASSERT_LINE(struct mrc_tx_state, wr);
MRC_ABI_ASSERT_LINES(struct mrc_tx_state);

/*
 * Loss detection tolerates reordering (RACK): a hole that a SACK's bitmap
 * shows missing is lost when the packet that triggered that SACK was sent
 * on the same plane more than srtt / MRC_REORDER_FRACTION (at least
 * MRC_REORDER_MIN_NS) after the hole (each plane is nearly FIFO, while
 * planes differ in delay by their queues), or once it is older than twice
 * the recent peak RTT (a plane that stopped acknowledging altogether).
 */
#define MRC_REORDER_FRACTION	8
#define MRC_REORDER_MIN_NS	1000000
/*
 * On one EV (one path, FIFO queues) a hole is lost once the trigger was
 * sent on the same EV this much later. The slack is not for the fabric
 * but for the host: packets sent from two CPUs go through two per-CPU
 * backlogs, and a busy CPU holds its backlog back for a while (0.2-6 ms
 * measured in the 2-core lab).
 */
#define MRC_EV_REORDER_NS	500000

/* Records XDP writes to a context's event ring. */
enum mrc_event_type {
	MRC_EVT_COMPLETION	= 1,	/* a WRITE is acknowledged */
	MRC_EVT_LOSS		= 2,	/* resend psn (SACK hole or NACK) */
	MRC_EVT_QP_FATAL	= 3,	/* the peer refused: QP to ERROR */
	MRC_EVT_WINDOW		= 4,	/* a full window opened (wakes libmrc) */
	MRC_EVT_SACK_DUE	= 5,	/* a duplicate made a SACK owed: wakes libmrc */
};

struct mrc_event {
	__u32	type;		/* enum mrc_event_type */
	__u32	qpn;		/* local QP */
	/* COMPLETION: the WRITE's last PSN; LOSS/FATAL: the PSN */
	__u32	psn;
	__u32	ev;		/* LOSS: EV the loss was reported on */
	__u32	reason;		/* LOSS/FATAL: enum mrc_nack_reason, 0 = SACK hole */
	/*
	 * LOSS from a NACK of a resend: how long libmrc holds the next
	 * resend (ns), so that one PSN leaves at most once per minimum RTT
	 * whatever NACKs say (ack_rx.h nack_may_act); 0 = resend at once.
	 */
	__u32	hold_ns;
};
MRC_ABI_ASSERT_SIZE(struct mrc_event, 24);

/* Why the XDP program dropped a packet: index of mrc_drop_stats. */
enum mrc_drop_reason {
	MRC_DROP_NONE = 0,
	MRC_DROP_MALFORMED,	/* too short, bad lengths, IP options... */
	MRC_DROP_BAD_OPCODE,
	MRC_DROP_UNKNOWN_QP,
	MRC_DROP_QP_NOT_READY,	/* QP not in RTR/RTS */
	MRC_DROP_BAD_SOURCE,	/* not one of the peer's addresses */
	MRC_DROP_OUT_OF_WINDOW,
	MRC_DROP_DUPLICATE,
	MRC_DROP_BAD_ACK,	/* SACK/NACK acking PSNs never sent */
	MRC_DROP_STALE_ACK,	/* NACK of a PSN already acked */
	MRC_DROP_RING_FULL,	/* event ring full: the event is lost */
	MRC_DROP_BAD_KEY,	/* BTH key is not the QP's connection key */
	MRC_DROP_BAD_GSO,	/* TC: a malformed UDP GSO burst (mrc/tc_gso.h) */
	MRC_DROP_BAD_ICRC,	/* ICRC QP: trailer missing or wrong (mrc/icrc.h) */
	MRC_DROP_REASONS,
};

/*
 * Drops of the XDP program by reason, one named field per enum
 * mrc_drop_reason (same order), in a single-entry per-CPU array so
 * `bpftool map dump` prints names.
 */
struct mrc_drop_stats {
	__u64	none;
	__u64	malformed;
	__u64	bad_opcode;
	__u64	unknown_qp;
	__u64	qp_not_ready;
	__u64	bad_source;
	__u64	out_of_window;
	__u64	duplicate;
	__u64	bad_ack;
	__u64	stale_ack;
	__u64	ring_full;
	__u64	bad_key;
	__u64	bad_gso;
	__u64	bad_icrc;
};
MRC_ABI_ASSERT_SIZE(struct mrc_drop_stats, 8 * MRC_DROP_REASONS);

/*
 * A plane interface mrcd serves (array indexed by plane - 1), with the
 * source addresses TC egress writes when it moves a packet to this plane.
 */
enum mrc_plane_flags {
	/* The link is down (mrcd's link watch): TC sends no ACK this way. */
	MRC_PLANE_F_DOWN	= 1 << 0,
};

struct mrc_plane {
	__u32	ifindex;	/* 0 = unused */
	__u32	flags;		/* enum mrc_plane_flags */
	char	name[16];
	__u8	addr4[4];	/* network order; 0 = none */
	__u8	addr6[16];	/* 0 = none */
};
MRC_ABI_ASSERT_SIZE(struct mrc_plane, 44);

/* Per-QP counters, in a per-CPU array indexed by slot. Append-only. */
struct mrc_qp_stats {
	__u64	rx_data;	/* DATA passed to the owner */
	__u64	rx_data_bytes;
	__u64	rx_dup;
	__u64	rx_oow;		/* out of window */
	__u64	rx_bad;		/* other validation drops */
	__u64	rx_sack;
	__u64	rx_nack;
	__u64	losses;		/* loss reports emitted */
	__u64	completions;	/* completions emitted */
	__u64	tx_stamped;	/* packets TC gave an EV */
	/*
	 * Acknowledgements that could amplify or stall (issue 16): NACKs in
	 * the window left without effect because a NACK already acted on
	 * the same send of the PSN, or the send is younger than an eighth
	 * of the QP's minimum RTT (no resend, no feedback); of them, the TRIMMED
	 * ones (no window cut); SACKed PSNs a cumulative ack showed missing
	 * (the bit is cleared, the PSN may be resent).
	 */
	__u64	nacks_gated;
	__u64	trim_cuts_gated;
	__u64	sacks_reneged;
	/*
	 * Path bookkeeping skipped (each look that found nothing: a SACK may
	 * look twice): the QP had no send log or per-EV counters (its EV
	 * table was not published: no inner maps), or an EV index lay
	 * beyond its counters. The packet itself goes on as without them.
	 */
	__u64	ev_maps_missing;
};
MRC_ABI_ASSERT_SIZE(struct mrc_qp_stats, 112);

/*
 * Profiles, kept by mrcd in pinned hash maps (key: profile id) so libmrc
 * builds a QP's EV table from the profile the QP names, and bpftool shows
 * them. Profile 0 is the built-in AUTO profile when no profile 0 exists.
 */
#define MRC_MAX_PROFILES	64
#define MRC_EV_MAX_FIELDS	8

struct mrc_ev_field_rec {
	__u32	width, init, min, max, mask;
};

struct mrc_ev_explicit_rec {
	__u32	ev;
	__u16	plane;		/* 0 = spread over planes */
	__u16	pad;
};

struct mrc_ev_profile_rec {
	__u16	id;
	__u8	type;		/* 0 EXPLICIT, 1 GENERATED, 2 AUTO */
	__u8	state;		/* 0 INIT, 1 OFFLINE, 2 ONLINE */
	__u32	format;		/* enum mrc_ev_format */
	__u32	ev_count;
	__u32	ev_min_active;
	__u32	event_mask;
	__u32	backups_per_plane;
	__u8	n_fmt;
	__u8	fmt[MRC_EV_MAX_FIELDS];	/* wire field widths */
	__u8	n_fields;
	__u16	n_explicit;
	struct mrc_ev_field_rec field[MRC_EV_MAX_FIELDS];
	struct mrc_ev_explicit_rec explicit_evs[MRC_MAX_EVS];
	__u32	gso_burst;	/* packets of one EV per UDP GSO send (send.c) */
	__u32	srv6_block;	/* MRC_EVF_SRV6: locator block, network order */
};
MRC_ABI_ASSERT_SIZE(struct mrc_ev_profile_rec, 204 + 8 * MRC_MAX_EVS);
/* At most UDP_MAX_SEGMENTS of old kernels; TC's loops walk this many. */
#define MRC_GSO_BURST_MAX	64
#define MRC_GSO_BURST_DEFAULT	1


/* skb->mark bit TC egress sets on a packet it moved to another plane. */
#define MRC_SKB_MARK_SPRAYED	0x4d520000u

/* Global settings of the fast path (single-entry array). */
struct mrc_global_cfg {
	__u16	udp_port;	/* host order; 0 = MRC_UDP_PORT_DEFAULT */
	/*
	 * Port of mrcd's control socket (host order): XDP steers port status
	 * requests there. 0 = no agent: they are dropped and counted.
	 */
	__u16	agent_port;
	__u32	flags;
	/*
	 * MRC_ABI_VERSION of the mrcd that loaded the fast path, written with
	 * the rest of this record. A program built against another version
	 * refuses the maps (user/common/pins.c) instead of misreading them.
	 * 0 = not configured yet.
	 */
	__u32	abi_version;
	__u32	_reserved;
};
MRC_ABI_ASSERT_SIZE(struct mrc_global_cfg, 16);

/*
 * EV events: every GOOD <-> ASSUMED_BAD change. XDP writes the ones it
 * makes (loss, ALWAYS_SKIP) to the pinned ring buffer mrc_ev_events; mrcd
 * reads it, adds the changes made in userspace (timeouts in libmrc, its
 * own port status and probe results) and serves them to `mrcctl events`.
 */
enum mrc_ev_reason {
	MRC_EVR_LOSS		= 1,	/* SACK evidence: a packet on it was lost */
	MRC_EVR_TIMEOUT		= 2,	/* retransmission timeout (libmrc) */
	MRC_EVR_ALWAYS_SKIP	= 3,	/* the receiver's verdict */
	MRC_EVR_PORT_DOWN	= 4,	/* local plane link down (mrcd) */
	MRC_EVR_PEER_PORT_DOWN	= 5,	/* the peer's port status (mrcd) */
	MRC_EVR_PROBES_OK	= 6,	/* N consecutive probes answered (mrcd) */
	MRC_EVR_UNKNOWN		= 7,	/* seen in the table, cause not reported */
	MRC_EVR_SAME_PATH	= 8,	/* a loss on another EV of its path (spine) */
};

#define MRC_EV_EVENTS_BYTES	(256u << 10)

struct mrc_ev_event {
	__u64	time_ns;	/* bpf_ktime_get_ns / CLOCK_MONOTONIC */
	__u32	qpn;
	__u32	ev;
	__u16	idx;		/* entry in the QP's table */
	__u16	plane;
	__u16	profile;
	__u8	state;		/* new state: enum mrc_ev_state */
	__u8	reason;		/* enum mrc_ev_reason */
	__u32	psn;		/* LOSS: the PSN found lost */
	__u32	pad;
	/*
	 * LOSS: when the lost packet was sent; time_ns - sent_ns bounds how
	 * long the path was bad before the sender stopped using it.
	 */
	__u64	sent_ns;
};
MRC_ABI_ASSERT_SIZE(struct mrc_ev_event, 40);

/* Counters of the control paths (single-entry per-CPU array mrc_ctl_stats). */
struct mrc_ctl_stats {
	__u64	ev_events;		/* EV events written by XDP */
	__u64	ev_events_lost;		/* ... not written: ring full */
	__u64	demote_refused;		/* demotions refused by ev_min_active */
	__u64	probes_answered;	/* EV probe requests answered (XDP_TX) */
	__u64	probe_responses;	/* EV probe responses steered to mrcd */
	__u64	probes_stamped;		/* EV probe requests stamped by TC */
	__u64	port_status_rx;		/* port status requests passed to mrcd */
	__u64	ep_dropped;		/* malformed or unserved control packets */
	__u64	trim_nacks;		/* trimmed DATA answered with a NACK (XDP_TX) */
	__u64	trim_nacks_lasthop;	/* ... of them trimmed at the last hop */
	__u64	cc_wakeups;		/* full windows that opened (libmrc woken) */
	/*
	 * DATA packets TC moved to the plane of their EV (bpf_redirect_neigh):
	 * those libmrc sent on another plane than the EV's (without
	 * MRC_QP_F_SENDER_PLANE, or a plane with no usable EV).
	 */
	__u64	plane_moves;
	/*
	 * Endpoint messages refused (each also counted in ep_dropped): EV
	 * probes and port status from an address that is no known peer
	 * (mrc_known_peers), probe responses from one, and responses naming
	 * a UDP port that is none of mrcd's probe sockets (mrc_probe_ports).
	 */
	__u64	probes_refused;
	__u64	port_status_refused;
	__u64	responses_refused;	/* unknown source */
	__u64	responses_bad_port;
};
MRC_ABI_ASSERT_SIZE(struct mrc_ctl_stats, 128);

/*
 * Who XDP serves endpoint messages (EV probes, port status, probe
 * responses) from: mrc_known_peers, a hash keyed by the address (IPv6 or
 * IPv4-mapped IPv6, as peers are stored), written by mrcd alone. The
 * value says why mrcd knows the address (MRC_KNOWN_*): XDP answers EV
 * probes and passes port status only from QP and configured peers, and
 * takes probe responses from any known peer (the target of a running
 * `mrcctl probe` included).
 */
#define MRC_KNOWN_QP		0x1	/* a peer address of a QP in RTR/RTS */
#define MRC_KNOWN_CONFIGURED	0x2	/* mrcd --peers */
#define MRC_KNOWN_PROBED	0x4	/* target of a running `mrcctl probe` */
#define MRC_KNOWN_SERVED	(MRC_KNOWN_QP | MRC_KNOWN_CONFIGURED)
#define MRC_MAX_KNOWN_PEERS	4096

struct mrc_known_peer_key {
	__u8	addr[16];
};
MRC_ABI_ASSERT_SIZE(struct mrc_known_peer_key, 16);

struct mrc_known_peer {
	__u32	why;		/* MRC_KNOWN_* */
	__u32	pad;
};
MRC_ABI_ASSERT_SIZE(struct mrc_known_peer, 8);

/*
 * The UDP ports of mrcd's probe sockets (one per plane and address
 * family, one per running `mrcctl probe`): mrc_probe_ports, a hash keyed
 * by the port (host order, in a __u32), value MRC_PROBE_PORT_*. XDP
 * steers an EV probe response only to one of these; mrcd writes it.
 */
#define MRC_PROBE_PORT_PLANE	1
#define MRC_PROBE_PORT_JOB	2
#define MRC_MAX_PROBE_PORTS	64

/* 24-bit PSN on the wire -> 32-bit PSN nearest to `ref`. */
static inline __u32 mrc_psn_extend(__u32 ref, __u32 psn24)
{
	__s32 delta = (__s32)((psn24 - ref) << 8) >> 8;

	return ref + (__u32)delta;
}

static inline int mrc_psn_before(__u32 a, __u32 b)
{
	return (__s32)(a - b) < 0;
}

/*
 * QP number <-> slot: QP numbers are 1..max_qps (0 names no QP), and
 * slot = qpn - 1 indexes every per-QP array (mrc_qps, mrc_rx, mrc_tx,
 * mrc_qp_evs, ...). Convert only through these, so the rule lives here.
 * mrc_qpn_valid() checks the number space only (1..MRC_QPS_LIMIT): how
 * many QPs a host has is mrcd's run-time choice, so every array lookup by
 * slot bound-checks against the map's own size (a failed lookup).
 */
static inline int mrc_qpn_valid(__u32 qpn)
{
	return qpn != 0 && qpn <= MRC_QPS_LIMIT;
}

static inline __u32 mrc_qpn_to_slot(__u32 qpn)
{
	return qpn - 1;
}

static inline __u32 mrc_slot_to_qpn(__u32 slot)
{
	return slot + 1;
}

/* Congestion control (NSCC): its windows, views and RTT histogram. */
#include "mrc/abi_cc.h"

#endif /* MRC_ABI_H */
