// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "recv" (see LAYERS and recv.h). The responder: place each
 * arriving packet where its RETH says, in any order, after checking key,
 * rights and bounds; advance the cumulative ack over the placed bitmap
 * (shared with XDP, which drops duplicates with it); deliver WRITE-IMM
 * completions in PSN order once everything before them is placed; answer
 * with SACKs and NACKs.
 *
 * XDP has already dropped what is malformed, unknown, out of window or
 * duplicate, and answered trimmed headers with a NACK itself
 * (bpf/trim_nack.h). The checks repeat here because the socket is
 * reachable without XDP (and placement must never trust a single gate).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "mrc/wire_build.h"
#include "cq_mr.h"
#include "qp_state.h"
#include "recv.h"

struct rx_pkt {
	const uint8_t *buf;
	uint32_t len;
	const struct sockaddr_in6 *from;
	uint8_t tos;
	uint64_t arrival_ns;	/* the kernel's receive time (CLOCK_REALTIME), 0 = none */
	const struct mrc_bth *bth;
	uint8_t opcode, flags;
	uint32_t qpn, psn24;
};

struct rx_batch {
	struct mmsghdr msgs[MRC_RX_BATCH];
	struct iovec iov[MRC_RX_BATCH];
	struct sockaddr_in6 from[MRC_RX_BATCH];
	uint8_t cmsg[MRC_RX_BATCH][64];
	uint8_t buf[MRC_RX_BATCH][MRC_MAX_PKT];
};

#define ECN_CE_BITS	0x3

/*
 * SACKs of a progress round, sent together: with thousands of QPs a
 * receive batch owes a SACK to nearly every QP it touched, and one
 * sendto each cost a syscall per packet or two. They leave at the
 * round's end (mrc_rx_flush_acks), or when this many wait.
 */
#define ACK_BATCH	64

/*
 * A SACK as it leaves, with room for the ICRC an ICRC QP's packets end
 * in: TC writes it there once the EV and the plane are final
 * (bpf/mrc/icrc.h). Other QPs' SACKs go without those 4 bytes.
 */
struct sack_out {
	struct mrc_sack_pkt pkt;
	uint8_t icrc_room[MRC_ICRC_LEN];
};

/* The same for a NACK. */
struct nack_out {
	struct mrc_nack_pkt pkt;
	uint8_t icrc_room[MRC_ICRC_LEN];
};

struct ack_batch {
	int n;
	struct mrc_qp *qp[ACK_BATCH];	/* whose SACK: counted when it went */
	struct sack_out out[ACK_BATCH];
	struct sockaddr_in6 to[ACK_BATCH];
	struct iovec iov[ACK_BATCH];
	struct mmsghdr msgs[ACK_BATCH];
};

/* ---- control packets out ----------------------------------------------- */

static int send_ctrl(struct mrc_context *ctx, const struct sockaddr_in6 *to,
		     const void *buf, size_t len)
{
	if (sendto(ctx->sock, buf, len, 0, (const struct sockaddr *)to,
		   sizeof(*to)) < 0)
		return -errno;
	return 0;
}

/* The peer address to answer: where the trigger came from, if it is one. */
static const struct sockaddr_in6 *reply_to(struct mrc_qp *qp)
{
	int i = qp->trigger.peer;

	return &qp->peers[i >= 0 && i < qp->n_peers ? i : 0];
}

static uint64_t sack_bitmap(struct mrc_qp *qp, uint32_t base)
{
	uint64_t bits = 0;

	for (uint32_t i = 0; i < 64; i++) {
		uint32_t psn = base + i;

		if (!mrc_psn_before(qp->rcv_cack, psn) ||
		    !mrc_psn_before(psn, qp->rcv_highest + 1))
			continue;
		if (mrc_bit_test(qp->rx->placed, psn))
			bits |= 1ULL << i;
	}
	return bits;
}

/* Placed bits of the 64 PSNs from `base` (any alignment), bit 0 = base. */
static uint64_t placed_word(const struct mrc_qp *qp, uint32_t base)
{
	uint32_t idx = mrc_bitmap_idx(base), w = idx / 64, shift = idx % 64;
	uint64_t lo = __atomic_load_n(&qp->rx->placed[w], __ATOMIC_RELAXED);
	uint64_t hi = __atomic_load_n(&qp->rx->placed[(w + 1) % MRC_BITMAP_WORDS],
				      __ATOMIC_RELAXED);

	return shift ? lo >> shift | hi << (64 - shift) : lo;
}

/*
 * The offset (from cack + 1) of the next 64-PSN window after the last one
 * shown that holds a hole below the newest packet, going round; the next
 * window in turn when none does. Windows without holes tell the sender
 * nothing it needs to find losses, and a hole shown late is a loss found
 * late.
 */
static uint32_t next_hole_window(struct mrc_qp *qp, uint32_t first,
				 uint32_t regions)
{
	uint32_t start = qp->sack_hole_off / 64;

	for (uint32_t i = 1; i <= regions - 1; i++) {
		uint32_t r = 1 + (start - 1 + i) % (regions - 1);
		uint32_t base = first + r * 64, span = qp->rcv_highest - base + 1;
		uint64_t want = span >= 64 ? ~0ULL : (1ULL << span) - 1;

		if ((placed_word(qp, base) & want) != want)
			return r * 64;
	}
	return (1 + start % (regions - 1)) * 64;
}

/*
 * How long the trigger has waited since the kernel received it (socket
 * queue, our scheduling, this batch), in wire units, saturated; 0 when
 * unknown. The requester takes it off the RTT sample.
 */
static uint16_t trigger_hold(const struct mrc_qp *qp)
{
	uint64_t now_ns, held;

	if (!qp->trigger.arrival_ns)
		return 0;
	now_ns = mrc_realtime_ns();
	if (!now_ns || now_ns <= qp->trigger.arrival_ns)
		return 0;
	held = (now_ns - qp->trigger.arrival_ns) >> MRC_TS_SHIFT;
	return held > 0xffff ? 0xffff : (uint16_t)held;
}

/*
 * Send the SACKs waiting (how many went); one the socket refused is lost,
 * as a sendto's was.
 */
int mrc_rx_flush_acks(struct mrc_context *ctx)
{
	struct ack_batch *b = ctx->ack_batch;
	int sent = 0;

	if (!b)
		return 0;
	while (sent < b->n) {
		int r = sendmmsg(ctx->sock, b->msgs + sent, b->n - sent, 0);

		if (r <= 0) {
			if (r < 0)
				mrc_note_send_refused(ctx, errno);
			break;
		}
		for (int m = sent; m < sent + r; m++)
			b->qp[m]->counters.sacks_sent++;
		sent += r;
	}
	b->n = 0;
	return sent;
}

void mrc_rx_close(struct mrc_context *ctx)
{
	free(ctx->ack_batch);
	ctx->ack_batch = NULL;
}

/* How many bytes a control packet of `len` takes on the QP's wire. */
static size_t ctrl_len(const struct mrc_qp *qp, size_t len)
{
	return len + (mrc_qp_icrc(qp) ? MRC_ICRC_LEN : 0);
}

/* A slot for one more SACK of the round, or NULL (then it goes alone). */
static struct sack_out *ack_slot(struct mrc_qp *qp)
{
	struct mrc_context *ctx = qp->ctx;
	struct ack_batch *b = ctx->ack_batch;
	const struct sockaddr_in6 *to = reply_to(qp);
	int m;

	if (!b)
		b = ctx->ack_batch = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	if (b->n == ACK_BATCH)
		mrc_rx_flush_acks(ctx);
	m = b->n++;
	b->qp[m] = qp;
	b->to[m] = *to;
	memset(b->out[m].icrc_room, 0, MRC_ICRC_LEN);
	b->iov[m] = (struct iovec){
		.iov_base = &b->out[m],
		.iov_len = ctrl_len(qp, sizeof(b->out[m].pkt)),
	};
	memset(&b->msgs[m], 0, sizeof(b->msgs[m]));
	b->msgs[m].msg_hdr.msg_name = &b->to[m];
	b->msgs[m].msg_hdr.msg_namelen = sizeof(b->to[m]);
	b->msgs[m].msg_hdr.msg_iov = &b->iov[m];
	b->msgs[m].msg_hdr.msg_iovlen = 1;
	return &b->out[m];
}

static void send_sack(struct mrc_qp *qp)
{
	struct sack_out alone = { 0 }, *slot;
	uint32_t first = qp->rcv_cack + 1, off = 0;
	uint64_t bits;

	/*
	 * Every other SACK shows the 64 PSNs right above cack, where the
	 * holes that hold the window are; the others go round the windows
	 * above that still hold holes (next_hole_window()). Sprayed
	 * packets arrive spread over a wide range: a fixed view would leave
	 * PSNs the sender never hears about until cack passes them. The
	 * sender declares a PSN lost only once a SACK's window showed it
	 * missing, so the lowest window, shown often, decides how fast.
	 */
	if (mrc_psn_before(first, qp->rcv_highest)) {
		uint32_t regions = (qp->rcv_highest - first) / 64 + 1;

		if (regions > 1 && (qp->counters.sacks_sent & 1)) {
			off = next_hole_window(qp, first, regions);
			qp->sack_hole_off = off;
		}
	}
	if (off > 0xffff)
		off = 0xffff;
	bits = sack_bitmap(qp, first + off);

	slot = ack_slot(qp);
	mrc_wire_sack(slot ? &slot->pkt : &alone.pkt, &(struct mrc_sack_fields){
		.bitmap = bits, .dqpn = qp->attr.dest_qpn, .psn = qp->trigger.psn,
		.cack = qp->rcv_cack, .ev = qp->trigger.ev,
		.rcv_bytes = (uint32_t)(qp->rcv_bytes >> 8), .key = mrc_qp_dest_key(qp),
		.bitmap_off = (uint16_t)off, .ts_echo = qp->trigger.ts,
		.ooo_count = (uint16_t)qp->ooo_count, .hold = trigger_hold(qp),
		.m = qp->trigger.m,
	});
	if (!slot && !send_ctrl(qp->ctx, reply_to(qp), &alone,
				ctrl_len(qp, sizeof(alone.pkt))))
		qp->counters.sacks_sent++;
	if (qp->acks_requested > 1)
		qp->counters.sacks_coalesced += qp->acks_requested - 1;
	qp->acks_requested = 0;
	qp->sack_due = false;
	qp->pkts_since_sack = 0;
	qp->trigger.m = MRC_M_NONE;
}

static void send_nack(struct mrc_qp *qp, const struct rx_pkt *p,
		      uint8_t reason)
{
	struct nack_out out = { 0 };
	struct mrc_nack_fields f = {
		.dqpn = qp->attr.dest_qpn, .psn = p->psn24, .cack = qp->rcv_cack,
		.ev = ntohs(p->from->sin6_port), .key = mrc_qp_dest_key(qp),
		.reason = reason, .m = MRC_M_NONE,
	};

	if (qp->trigger.psn == p->psn24)	/* note_trigger() ran first */
		f.ts_echo = qp->trigger.ts;
	/* The verdict may fall on a trimmed packet: it rides in the NACK. */
	if (qp->trigger.m == MRC_M_ALWAYS_SKIP && qp->trigger.psn == p->psn24) {
		f.m = MRC_M_ALWAYS_SKIP;
		qp->trigger.m = MRC_M_NONE;
	}
	mrc_wire_nack(&out.pkt, &f);
	if (!send_ctrl(qp->ctx, reply_to(qp), &out, ctrl_len(qp, sizeof(out.pkt))))
		qp->counters.nacks_sent++;
}

/* SACKs owed after a receive batch, or after XDP dropped a duplicate. */
void mrc_rx_send_acks(struct mrc_qp *qp)
{
	if (qp->state != MRC_QP_RTR && qp->state != MRC_QP_RTS)
		return;
	/* Load first: the exchange would write XDP's line every round. */
	if (__atomic_load_n(&qp->rx->sack_pending, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&qp->rx->sack_pending, 0, __ATOMIC_ACQ_REL))
		qp->sack_due = true;
	if (qp->sack_due)
		send_sack(qp);
}

/* RTR: the responder starts over at rq_psn, here and in the mmapped state. */
void mrc_rx_reset(struct mrc_qp *qp)
{
	struct mrc_rx_state *rx = qp->rx;

	qp->rcv_cack = qp->attr.rq_psn - 1;
	qp->rcv_highest = qp->rcv_cack;
	qp->ooo_count = 0;
	qp->rcv_bytes = 0;
	qp->imm_reserved = 0;
	qp->pkts_since_sack = 0;
	qp->acks_requested = 0;
	qp->sack_due = false;
	memset(qp->imm_pending, 0, MRC_BITMAP_WORDS * sizeof(uint64_t));
	memset(rx->placed, 0, sizeof(rx->placed));
	rx->sack_pending = 0;
	rx->mpr = (uint32_t)qp->attr.mpr_units * MRC_MPR_UNIT;
	__atomic_store_n(&rx->cack, qp->rcv_cack, __ATOMIC_RELEASE);
	rx->generation++;
}

/* ---- placement --------------------------------------------------------- */

static int peer_index(const struct mrc_qp *qp, const struct sockaddr_in6 *from)
{
	for (int i = 0; i < qp->n_peers; i++)
		if (!memcmp(&qp->peers[i].sin6_addr, &from->sin6_addr, 16))
			return i;
	return -1;
}

/* Deliver WRITE-IMMs whose PSN the cumulative ack just passed, in order. */
static void deliver_immediates(struct mrc_qp *qp, uint32_t from, uint32_t to)
{
	for (uint32_t psn = from; psn != to; psn++) {
		struct mrc_wc wc = {
			.status = MRC_WC_SUCCESS,
			.opcode = MRC_WC_RECV_WRITE_IMM,
			.qp_num = qp->qpn,
		};
		uint32_t i = mrc_bitmap_idx(psn);

		if (!mrc_bit_test(qp->imm_pending, psn))
			continue;
		mrc_bit_clear(qp->imm_pending, psn);
		wc.imm_data = qp->imm_val[i];
		wc.byte_len = qp->imm_len[i];
		wc.wr_id = qp->recv_wr[qp->recv_head++ & (qp->recv_cap - 1)];
		qp->imm_reserved--;
		mrc_cq_push(qp->init.recv_cq, &wc);
	}
}

/* Move cack over the placed run above it; the bitmap slots become free. */
static void advance_cack(struct mrc_qp *qp)
{
	uint32_t old = qp->rcv_cack, cack = old;

	while (mrc_bit_test(qp->rx->placed, cack + 1)) {
		mrc_bit_clear(qp->rx->placed, cack + 1);
		cack++;
	}
	if (cack == old)
		return;
	qp->rcv_cack = cack;
	__atomic_store_n(&qp->rx->cack, cack, __ATOMIC_RELEASE);
	deliver_immediates(qp, old + 1, cack + 1);
}

/*
 * Key, rights and bounds. The packet's own bytes must lie in the region;
 * FIRST/ONLY and LAST packets also tell where the whole message lies, and
 * that must fit too, so a bad message is refused as early as possible.
 */
static bool access_ok(struct mrc_qp *qp, const struct rx_pkt *p,
		      const struct mrc_reth *reth, uint32_t plen)
{
	struct mrc_mr *mr = mrc_find_mr(qp->ctx, ntohl(reth->rkey));
	uint64_t va = be64toh(reth->vaddr), msg = ntohl(reth->length);
	uint64_t lo, hi, start, end;

	if (!mr || !(mr->access & MRC_ACCESS_REMOTE_WRITE))
		return false;
	lo = (uintptr_t)mr->addr;
	hi = lo + mr->length;
	start = va;
	end = va + plen;
	if (p->opcode == MRC_OP_WRITE_FIRST || p->opcode == MRC_OP_WRITE_ONLY ||
	    p->opcode == MRC_OP_WRITE_ONLY_IMM)
		end = va + msg;
	else if (p->opcode == MRC_OP_WRITE_LAST ||
		 p->opcode == MRC_OP_WRITE_LAST_IMM)
		start = va + plen - msg;
	if (end < start || start < lo || end > hi || va + plen < va)
		return false;
	return va >= lo && va + plen <= hi;
}

static void refuse_access(struct mrc_qp *qp, const struct rx_pkt *p)
{
	send_nack(qp, p, MRC_NACK_REMOTE_ACCESS);
	mrc_push_async(qp->ctx, qp, MRC_EVENT_QP_ACCESS_ERR,
		       MRC_WC_REM_ACCESS_ERR);
	/* Nothing more of this connection is placed. */
	mrc_qp_to_error(qp, MRC_WC_WR_FLUSH_ERR, 0);
}

/* A WRITE-IMM needs a posted receive; reserve it at arrival. */
static bool reserve_immediate(struct mrc_qp *qp, uint32_t psn,
			      const uint8_t *imm, uint32_t msg_len)
{
	uint32_t posted = qp->recv_tail - qp->recv_head;
	uint32_t v, i = mrc_bitmap_idx(psn);

	if (qp->imm_reserved >= posted)
		return false;
	if (qp->attr.max_wimm_in && qp->imm_reserved >= qp->attr.max_wimm_in)
		return false;
	memcpy(&v, imm, 4);
	qp->imm_val[i] = ntohl(v);
	qp->imm_len[i] = msg_len;
	mrc_bit_set(qp->imm_pending, psn);
	qp->imm_reserved++;
	return true;
}

static bool packet_marked(const struct rx_pkt *p)
{
	return (p->tos & ECN_CE_BITS) == ECN_CE_BITS ||
	       p->tos >> 2 == MRC_DSCP_TRIMMED;
}

/*
 * The receiver's verdict on the path of this packet: MRC_ALWAYS_SKIP_MARKS
 * marked arrivals on one EV in a row (CE, or trimmed mid-path) say the
 * path is persistently congested, not just busy for a moment. The
 * counter restarts after each verdict, so a path that stays bad gets one
 * every MRC_ALWAYS_SKIP_MARKS packets until the sender stops using it.
 */
static bool always_skip_verdict(struct mrc_qp *qp, uint32_t ev, bool marked)
{
	typeof(qp->ev_marks[0]) *slot = &qp->ev_marks[ev & (MRC_EV_MARK_SLOTS - 1)];

	if (slot->ev != ev) {
		slot->ev = ev;
		slot->marks = 0;
	}
	if (!marked) {
		slot->marks = 0;
		return false;
	}
	if (++slot->marks < MRC_ALWAYS_SKIP_MARKS)
		return false;
	slot->marks = 0;
	qp->counters.always_skip_sent++;
	return true;
}

static void note_trigger(struct mrc_qp *qp, const struct rx_pkt *p,
			 uint16_t ts, int peer)
{
	bool marked = packet_marked(p);

	qp->trigger.psn = p->psn24;
	qp->trigger.ev = ntohs(p->from->sin6_port);
	qp->trigger.ts = ts;
	qp->trigger.peer = peer;
	qp->trigger.arrival_ns = p->arrival_ns;
	if (always_skip_verdict(qp, qp->trigger.ev, marked))
		qp->trigger.m = MRC_M_ALWAYS_SKIP;
	else
		qp->trigger.m = (p->tos & ECN_CE_BITS) == ECN_CE_BITS ?
				MRC_M_SKIP_ONCE : MRC_M_NONE;
}

static void handle_data(struct mrc_qp *qp, const struct rx_pkt *p, int peer)
{
	uint32_t hlen = mrc_data_header_len(p->opcode, p->flags);
	const uint8_t *h = p->buf + sizeof(struct mrc_bth) + sizeof(struct mrc_meth);
	const struct mrc_reth *reth;
	uint16_t ts = 0;
	uint32_t psn, plen;
	bool in_order;

	if (p->len < hlen)
		return;
	if (p->flags & MRC_BTH_F_TS) {
		const struct mrc_tseth *t = (const void *)h;

		ts = ntohs(t->send_ts);
		h += sizeof(*t);
	}
	reth = (const void *)h;
	h += sizeof(*reth);
	plen = p->len - hlen;
	/* XDP checked the ICRC trailer (bpf/mrc/icrc.h); it is no payload. */
	if (mrc_qp_icrc(qp)) {
		if (plen < MRC_ICRC_LEN)
			return;
		plen -= MRC_ICRC_LEN;
	}
	psn = mrc_psn_extend(qp->rcv_cack, p->psn24);
	note_trigger(qp, p, ts, peer);

	/* Duplicates and out-of-window packets carry nothing: just ack. */
	if (!mrc_psn_before(qp->rcv_cack, psn) ||
	    mrc_bit_test(qp->rx->placed, psn) ||
	    psn - qp->rcv_cack >= (uint32_t)qp->attr.mpr_units * MRC_MPR_UNIT) {
		qp->counters.rx_duplicates++;
		qp->sack_due = true;
		return;
	}
	if (plen > ntohl(reth->length))
		return;
	/*
	 * A trimmed header (no data of a message that has some) never comes
	 * this way: XDP answers it with a NACK. One sent to the socket's own
	 * port bypasses XDP; it must not be placed (its PSN would be acked
	 * without its bytes). The requester resends it when a SACK shows it
	 * missing.
	 */
	if (plen == 0 && ntohl(reth->length) > 0)
		return;
	if (!access_ok(qp, p, reth, plen)) {
		refuse_access(qp, p);
		return;
	}
	if (mrc_opcode_has_imm(p->opcode) &&
	    !reserve_immediate(qp, psn, h, ntohl(reth->length))) {
		send_nack(qp, p, MRC_NACK_NO_RESOURCE);
		return;
	}

	memcpy((void *)(uintptr_t)be64toh(reth->vaddr), p->buf + hlen, plen);
	mrc_bit_set(qp->rx->placed, psn);
	qp->counters.rx_packets++;
	qp->counters.rx_bytes += plen;
	qp->rcv_bytes += plen;
	in_order = psn == qp->rcv_cack + 1;
	if (!in_order) {
		qp->ooo_count++;
		qp->sack_due = true;
	}
	if (mrc_psn_before(qp->rcv_highest, psn))
		qp->rcv_highest = psn;
	advance_cack(qp);
	if (p->flags & MRC_BTH_F_ACK_REQ)
		qp->acks_requested++;
	/*
	 * Answered now, not at the end of the batch: a CE mark (the SACK
	 * echoes the EV of the marked packet itself, so the sender steers
	 * away from that path only) and the verdict; a retransmission (the
	 * sender is recovering a loss); an ack request that arrived out of
	 * order (the SACK is loss evidence, and the requester judges a hole
	 * by how much later than it the trigger was sent: a later trigger,
	 * the batch's last packet, made the incast's senders demote EVs for
	 * reordering); and every MRC_ACK_EVERY packets (a
	 * SACK's bitmap covers 64 PSNs, so SACKs at most 16 packets apart
	 * leave no PSN the sender never hears about).
	 */
	if (p->flags & MRC_BTH_F_RETX ||
	    (!in_order && p->flags & MRC_BTH_F_ACK_REQ) ||
	    (p->tos & ECN_CE_BITS) == ECN_CE_BITS ||
	    qp->trigger.m == MRC_M_ALWAYS_SKIP ||
	    ++qp->pkts_since_sack >= MRC_ACK_EVERY) {
		send_sack(qp);
		return;
	}
	/*
	 * An in-order ack request is answered once the receive batch is placed
	 * (send_owed_sacks): one SACK for all the requests of the batch (a
	 * WRITE of one packet asks for one, so 16 small WRITEs arriving
	 * together drew 16 SACKs). Its trigger is the newest packet, whose
	 * hold time is the shortest: the RTT sample stays exact.
	 */
	if (p->flags & MRC_BTH_F_ACK_REQ)
		qp->sack_due = true;
}

/* The QP the packet was for when it left a SACK owed, else NULL. */
static struct mrc_qp *handle_packet(struct mrc_context *ctx, struct rx_pkt *p)
{
	struct mrc_qp *qp;
	int peer;

	if (p->len < sizeof(struct mrc_bth))
		return NULL;
	p->bth = (const void *)p->buf;
	p->opcode = p->bth->opcode;
	p->qpn = ntohl(p->bth->dqpn) & MRC_QPN_MASK;
	p->psn24 = ntohl(p->bth->psn) & MRC_PSN_MASK;
	p->flags = ntohl(p->bth->psn) >> 24;
	qp = mrc_qp_by_num(ctx, p->qpn);
	if (!qp || (qp->state != MRC_QP_RTR && qp->state != MRC_QP_RTS))
		return NULL;
	peer = peer_index(qp, p->from);
	if (peer < 0)
		return NULL;
	if (!mrc_qp_key_ok(qp, p->bth)) {
		qp->counters.rx_bad_key++;
		return NULL;
	}
	/* The idle spin adapts to it (progress.c judge_wake): keyed packets only. */
	if (!ctx->rx_first_arrival_ns)
		ctx->rx_first_arrival_ns = p->arrival_ns;
	if (mrc_opcode_is_data(p->opcode)) {
		handle_data(qp, p, peer);
	} else if (p->opcode == MRC_OP_PROBE) {
		note_trigger(qp, p, 0, peer);
		qp->sack_due = true;
	}
	return qp->sack_due ? qp : NULL;
}

static uint8_t packet_tos(struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if ((c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_TOS) ||
		    (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_TCLASS)) {
			if (c->cmsg_len >= CMSG_LEN(sizeof(int)) &&
			    c->cmsg_type == IPV6_TCLASS) {
				int v;

				memcpy(&v, CMSG_DATA(c), sizeof(v));
				return (uint8_t)v;
			}
			return *(uint8_t *)CMSG_DATA(c);
		}
	}
	return 0;
}

/* The kernel's receive time of the packet (SO_TIMESTAMPNS), 0 without one. */
static uint64_t packet_arrival_ns(struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SO_TIMESTAMPNS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct timespec))) {
			struct timespec ts;

			memcpy(&ts, CMSG_DATA(c), sizeof(ts));
			return mrc_timespec_ns(&ts);
		}
	}
	return 0;
}

static void prepare_batch(struct rx_batch *b)
{
	for (int i = 0; i < MRC_RX_BATCH; i++) {
		struct msghdr *mh = &b->msgs[i].msg_hdr;

		b->iov[i].iov_base = b->buf[i];
		b->iov[i].iov_len = sizeof(b->buf[i]);
		mh->msg_iov = &b->iov[i];
		mh->msg_iovlen = 1;
		mh->msg_name = &b->from[i];
		mh->msg_namelen = sizeof(b->from[i]);
		mh->msg_control = b->cmsg[i];
		mh->msg_controllen = sizeof(b->cmsg[i]);
		mh->msg_flags = 0;
	}
}

/*
 * The QPs of a receive batch that owe a SACK (ack requests, out of order
 * arrivals), each once: at most one per datagram.
 */
struct owed_sacks {
	int n;
	struct mrc_qp *qp[MRC_RX_BATCH];
};

static void note_owed_sack(struct owed_sacks *o, struct mrc_qp *qp)
{
	if (!qp || qp->sack_listed || o->n == MRC_RX_BATCH)
		return;
	qp->sack_listed = true;
	o->qp[o->n++] = qp;
}

/*
 * The end of a receive batch: the SACKs its packets made owed go now, one
 * per QP. Only the batch's QPs are visited (a walk over every QP of the
 * context cost 4,096 visits a batch); what XDP owes (a duplicate it
 * dropped, rx->sack_pending) goes when progress drives the QP.
 */
static void send_owed_sacks(struct owed_sacks *o)
{
	for (int i = 0; i < o->n; i++) {
		o->qp[i]->sack_listed = false;
		mrc_rx_send_acks(o->qp[i]);
	}
	o->n = 0;
}

/* Take what the socket holds, a bounded number of batches per call. */
int mrc_rx_progress(struct mrc_context *ctx)
{
	struct rx_batch *rx_batch = ctx->rx_scratch;
	struct owed_sacks owed = { 0 };
	int taken = 0;

	ctx->rx_first_arrival_ns = 0;
	if (!rx_batch) {
		rx_batch = ctx->rx_scratch = malloc(sizeof(*rx_batch));
		if (!rx_batch)
			return 0;
	}
	for (int round = 0; round < 8; round++) {
		int n;

		prepare_batch(rx_batch);
		n = recvmmsg(ctx->sock, rx_batch->msgs, MRC_RX_BATCH,
			     MSG_DONTWAIT, NULL);
		if (n <= 0)
			break;
		taken += n;
		for (int i = 0; i < n; i++) {
			struct rx_pkt p;

			/*
			 * Over the buffer: the tail is gone, so nothing of it
			 * is placed or acknowledged; counted and dropped.
			 */
			if (rx_batch->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
				ctx->rx_truncated++;
				continue;
			}
			p = (struct rx_pkt){
				.buf = rx_batch->buf[i],
				.len = rx_batch->msgs[i].msg_len,
				.from = &rx_batch->from[i],
				.tos = packet_tos(&rx_batch->msgs[i].msg_hdr),
				.arrival_ns = packet_arrival_ns(&rx_batch->msgs[i].msg_hdr),
			};

			note_owed_sack(&owed, handle_packet(ctx, &p));
		}
		send_owed_sacks(&owed);
		if (n < MRC_RX_BATCH)
			break;
	}
	return taken;
}
