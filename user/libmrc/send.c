// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The requester: WRITEs become MTU-sized packets, each carrying the address
 * it lands at, sent in sendmmsg batches straight from the application's
 * memory (no copy: the payload is an iovec into the registered buffer).
 * Consecutive new packets of equal length go several to a datagram with
 * UDP_SEGMENT (UDP GSO, up to the EV profile's gso_burst): one skb through
 * the stack and TC egress, which gives it one EV; the NIC (or the kernel
 * at the last software hop) cuts it into the ordinary packets.
 *
 * Layer "send" (see LAYERS and send.h). Acknowledgement work happens in
 * XDP (bpf/mrc.bpf.c); this side reacts to what XDP reports through the
 * context's event ring, which the progress engine reads and hands here
 * (mrc_tx_handle_event): completions, losses to resend, a fatal NACK.
 * The retransmission timer lives here: a QP that makes no progress for
 * the local ACK timeout resends what is not selectively acked, first at a
 * fixed interval, then doubling, and goes to ERROR when the retry budget
 * is spent.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <limits.h>
#include <netinet/udp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <bpf/bpf.h>

#include "mrc/wire_build.h"
#include "cc.h"
#include "common/ev_state.h"
#include "cq_mr.h"
#include "qp_state.h"
#include "send.h"
#include "worklist.h"

/* Headers of one data packet, in wire order (the longest form). */
struct data_hdr {
	struct mrc_bth bth;
	struct mrc_meth meth;
	struct mrc_tseth tseth;
	struct mrc_reth reth;
	uint32_t imm;
} __attribute__((packed));

#ifndef UDP_SEGMENT
#define UDP_SEGMENT	103
#endif

/*
 * Largest UDP payload of one GSO datagram: the IPv4 total length (65535)
 * less the IPv4 and UDP headers (the kernel's own check; IPv6 allows 20
 * bytes more).
 */
#define GSO_MAX_PAYLOAD	(65535 - 20 - 8)

/*
 * One sendmmsg: up to MRC_TX_BATCH datagrams holding up to MRC_TX_PKTS
 * packets. Datagram m holds packets first[m] .. first[m] + count[m] - 1;
 * with count > 1 it is a GSO datagram of segments seg_len[m] long (the
 * last may be shorter), its iovecs hdr0, data0..., hdr1, data1...
 */
struct tx_batch {
	int n;				/* datagrams */
	bool socket_full;		/* a flush this round could not send all */
	int npkts;			/* packets in them */
	int niov;			/* iovecs used */
	uint32_t burst;			/* most packets a datagram; 1 = no GSO */
	bool open;			/* datagram n - 1 may take the next new packet */
	struct mmsghdr msgs[MRC_TX_BATCH];
	struct mrc_qp *qp[MRC_TX_BATCH];	/* whose datagram: its counters, its resends */
	uint16_t first[MRC_TX_BATCH], count[MRC_TX_BATCH];
	uint8_t plane[MRC_TX_BATCH];	/* peers[] index it goes to */
	uint32_t seg_len[MRC_TX_BATCH];	/* UDP payload of its first packet */
	uint32_t bytes[MRC_TX_BATCH];	/* UDP payload of all its packets */
	union {
		char buf[CMSG_SPACE(sizeof(uint16_t))];
		struct cmsghdr align;
	} ctl[MRC_TX_BATCH];
	/* per packet: header, data, ICRC room */
	struct iovec iov[MRC_TX_PKTS * (2 + MRC_MAX_SGE)];
	struct data_hdr hdr[MRC_TX_PKTS];
};

/*
 * No room for another datagram, or (the last one closed) for a whole
 * burst: a burst cut short by the batch would be a small datagram at a
 * fixed place in every batch, and the EV rotation would give some paths
 * more of them than others.
 */
static bool batch_full(const struct tx_batch *b)
{
	return b->n == MRC_TX_BATCH || b->npkts == MRC_TX_PKTS ||
	       (!b->open && MRC_TX_PKTS - b->npkts < (int)b->burst);
}

static struct mrc_send_wqe *wqe_at(struct mrc_qp *qp, uint32_t idx)
{
	return &qp->sq[idx & (qp->sq_cap - 1)];
}

/* ---- posting ----------------------------------------------------------- */

static int check_sges(struct mrc_qp *qp, const struct mrc_send_wr *wr,
		      struct mrc_send_wqe *wqe)
{
	uint64_t total = 0;

	if (wr->num_sge < 0 || wr->num_sge > (int)qp->init.max_sge ||
	    (wr->num_sge && !wr->sg_list))
		return -EINVAL;
	for (int i = 0; i < wr->num_sge; i++) {
		const struct mrc_sge *sge = &wr->sg_list[i];
		struct mrc_mr *mr = mrc_find_mr(qp->ctx, sge->lkey);
		uint64_t end = sge->addr + sge->length;

		if (!mr || end < sge->addr ||
		    sge->addr < (uintptr_t)mr->addr ||
		    end > (uintptr_t)mr->addr + mr->length)
			return -EFAULT;	/* local protection */
		wqe->sge[i] = *sge;
		wqe->sge_addr[i] = (uint8_t *)(uintptr_t)sge->addr;
		total += sge->length;
	}
	wqe->num_sge = wr->num_sge;
	wqe->length = total;
	return total > UINT32_MAX ? -EMSGSIZE : 0;
}

int mrc_post_write(struct mrc_qp *qp, const struct mrc_send_wr *wr)
{
	struct mrc_send_wqe *wqe;
	struct mrc_wr_rec *rec;
	uint32_t mtu, tail;
	int err;

	if (!qp || !wr || (wr->opcode != MRC_WR_WRITE &&
			   wr->opcode != MRC_WR_WRITE_WITH_IMM))
		return mrc_err(EINVAL);
	if (qp->state != MRC_QP_RTS)
		return mrc_err(ENOTCONN);
	if (qp->sq_tail - qp->sq_head >= qp->init.max_send_wr)
		return mrc_err(EAGAIN);
	if (wr->opcode == MRC_WR_WRITE_WITH_IMM &&
	    qp->attr.max_wimm_out && qp->wimm_out >= qp->attr.max_wimm_out)
		return mrc_err(EAGAIN);

	wqe = wqe_at(qp, qp->sq_tail);
	err = check_sges(qp, wr, wqe);
	if (err)
		return mrc_err(-err);
	mtu = qp->attr.path_mtu;
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->remote_addr = wr->remote_addr;
	wqe->rkey = wr->rkey;
	wqe->imm = wr->imm_data;
	wqe->mtu = mtu;
	wqe->npkts = wqe->length ? (uint32_t)((wqe->length + mtu - 1) / mtu) : 1;
	wqe->first_psn = qp->next_psn;
	wqe->msn = qp->msn++;
	wqe->wimm_msn = qp->wimm_msn;
	if (wr->opcode == MRC_WR_WRITE_WITH_IMM) {
		qp->wimm_msn++;
		qp->wimm_out++;
	}
	qp->next_psn += wqe->npkts;

	/*
	 * Tell XDP which PSN completes this WRITE. Only that: the completion
	 * comes back as a PSN and is matched to the WQE, which keeps the
	 * wr_id (on_completion).
	 */
	tail = qp->tx->wr_tail;
	rec = &qp->tx->wr[tail % MRC_WR_RING];
	rec->last_psn = wqe->first_psn + wqe->npkts - 1;
	__atomic_store_n(&qp->tx->wr_tail, tail + 1, __ATOMIC_RELEASE);
	qp->sq_tail++;
	mrc_qp_wake(qp);
	return 0;
}

/* ---- building packets -------------------------------------------------- */

static uint8_t packet_opcode(const struct mrc_send_wqe *wqe, uint32_t k)
{
	bool imm = wqe->opcode == MRC_WR_WRITE_WITH_IMM;

	if (wqe->npkts == 1)
		return imm ? MRC_OP_WRITE_ONLY_IMM : MRC_OP_WRITE_ONLY;
	if (k == 0)
		return MRC_OP_WRITE_FIRST;
	if (k == wqe->npkts - 1)
		return imm ? MRC_OP_WRITE_LAST_IMM : MRC_OP_WRITE_LAST;
	return MRC_OP_WRITE_MIDDLE;
}

/* iovecs for bytes [off, off + len) of the WRITE's gather list. */
static int payload_iov(const struct mrc_send_wqe *wqe, uint64_t off,
		       uint32_t len, struct iovec *iov)
{
	int n = 0;

	for (int i = 0; i < wqe->num_sge && len; i++) {
		uint32_t sl = wqe->sge[i].length;
		uint32_t take;

		if (off >= sl) {
			off -= sl;
			continue;
		}
		take = sl - (uint32_t)off < len ? sl - (uint32_t)off : len;
		iov[n].iov_base = wqe->sge_addr[i] + off;
		iov[n].iov_len = take;
		n++;
		len -= take;
		off = 0;
	}
	return n;
}

/*
 * May the next packet (wire length len, niov iovecs) be one more segment
 * of the open datagram? Segments are cut at seg_len, so only the last may
 * be shorter; the kernel takes at most 64 KB and IOV_MAX iovecs.
 */
static bool may_join(const struct tx_batch *b, uint32_t len, int niov)
{
	int m = b->n - 1;

	return b->open && len <= b->seg_len[m] &&
	       b->bytes[m] + len <= GSO_MAX_PAYLOAD &&
	       b->msgs[m].msg_hdr.msg_iovlen + (size_t)niov <= IOV_MAX;
}

static void join_datagram(struct tx_batch *b, uint32_t len, int niov)
{
	int m = b->n - 1;

	b->msgs[m].msg_hdr.msg_iovlen += (size_t)niov;
	b->count[m]++;
	b->bytes[m] += len;
	/* A shorter segment ends it; so does the burst or the size limit. */
	if (len < b->seg_len[m] || b->count[m] >= b->burst ||
	    b->bytes[m] + b->seg_len[m] > GSO_MAX_PAYLOAD)
		b->open = false;
}

/*
 * Which of the peer's addresses (plane - 1) the next datagram goes to.
 * The path choice is a seam: TC egress stamps the EV. With tx_planes the
 * plane is ours: the next of the QP's rotation, as the EV table goes round
 * the planes, so the datagram reaches TC on its plane and stays there (no
 * move to another plane: a route lookup and TC a second time). A plane
 * whose route refused a datagram lately, or with no EV left in the
 * rotation (look_at_planes), is passed over.
 */
static uint8_t datagram_plane(struct mrc_qp *qp)
{
	uint32_t n = qp->tx_planes, skip = qp->ctx->planes_refused | qp->planes_unusable;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t p = qp->tx_plane_next++ % n;

		if (!(skip & (1u << p)))
			return (uint8_t)p;
	}
	return 0;
}

/* How often a QP reads its EV table for planes that lost every EV. */
#define PLANE_LOOK_NS	1000000ull

/*
 * Which planes have no EV in the rotation (ACTIVE and GOOD or SKIP), at
 * most once a PLANE_LOOK_NS: TC (a demotion, a deny) changes the table
 * under us. A plane the look missed by up to that long costs only TC's
 * move of its share to another plane, never a lost packet. With no entry
 * out of service (n_down, one load) every plane is usable: no walk, so
 * thousands of QPs on healthy paths pay nothing for it.
 */
static void look_at_planes(struct mrc_qp *qp)
{
	uint32_t usable = 0, all;
	uint64_t now;

	if (qp->tx_planes < 2)
		return;
	if (!__atomic_load_n(&qp->evs->n_down, __ATOMIC_RELAXED)) {
		qp->planes_unusable = 0;
		return;
	}
	now = mrc_now_ns();
	if (now - qp->planes_seen_ns < PLANE_LOOK_NS)
		return;
	qp->planes_seen_ns = now;
	for (uint32_t i = 0; i < qp->n_evs && i < MRC_MAX_EVS; i++) {
		uint32_t w = __atomic_load_n(&qp->evs->ev[i].word, __ATOMIC_RELAXED);
		uint32_t plane = MRC_EV_WORD_PLANE(w);

		if (plane >= 1 && plane <= qp->tx_planes && mrc_ev_in_rotation(w))
			usable |= 1u << (plane - 1);
	}
	all = (1u << qp->tx_planes) - 1;
	qp->planes_unusable = all & ~usable;
}

static void new_datagram(struct mrc_qp *qp, struct tx_batch *b,
			 struct iovec *iov, uint32_t len, int niov, bool burst)
{
	struct msghdr *mh = &b->msgs[b->n].msg_hdr;
	uint8_t plane = datagram_plane(qp);

	memset(&b->msgs[b->n], 0, sizeof(b->msgs[b->n]));
	mh->msg_iov = iov;
	mh->msg_iovlen = (size_t)niov;
	mh->msg_name = &qp->peers[plane];
	mh->msg_namelen = sizeof(qp->peers[plane]);
	b->plane[b->n] = plane;
	b->qp[b->n] = qp;
	b->first[b->n] = (uint16_t)b->npkts;
	b->count[b->n] = 1;
	b->seg_len[b->n] = b->bytes[b->n] = len;
	b->n++;
	b->open = burst && b->burst > 1;
}

/*
 * The 4 bytes after the payload that TC overwrites with the packet's ICRC
 * (bpf/mrc/icrc.h): it knows the final header (EV, plane), libmrc not.
 */
static void add_icrc_room(struct iovec *iov, int *niov)
{
	static const uint8_t room[MRC_ICRC_LEN];

	iov[*niov].iov_base = (void *)room;
	iov[*niov].iov_len = sizeof(room);
	(*niov)++;
}

static void add_packet(struct mrc_qp *qp, struct tx_batch *b,
		       const struct mrc_send_wqe *wqe, uint32_t k, bool retx,
		       bool ack_req)
{
	struct data_hdr *h = &b->hdr[b->npkts];
	struct iovec *iov = &b->iov[b->niov];
	uint32_t mtu = wqe->mtu;
	uint64_t off = (uint64_t)k * mtu;
	uint32_t len = wqe->length - off < mtu ? (uint32_t)(wqe->length - off) : mtu;
	uint32_t psn = wqe->first_psn + k;
	uint8_t op = packet_opcode(wqe, k), flags = MRC_BTH_F_TS;
	struct mrc_bth bth;
	size_t hlen;
	int niov;

	if (k == wqe->npkts - 1 || retx || ack_req || psn % MRC_ACK_EVERY == 0)
		flags |= MRC_BTH_F_ACK_REQ;
	if (retx)
		flags |= MRC_BTH_F_RETX;
	/* Built aside: the header struct is packed (no aligned pointer into it). */
	mrc_wire_bth(&bth, op, mrc_qp_dest_key(qp), qp->attr.dest_qpn, psn, flags);
	memcpy(&h->bth, &bth, sizeof(bth));
	h->meth.wimm_msn = htons(wqe->wimm_msn);
	h->meth.msn = htons(wqe->msn);
	h->tseth.send_ts = htons((uint16_t)(mrc_now_ns() >> MRC_TS_SHIFT));
	h->tseth.reserved = 0;
	h->reth.vaddr = htobe64(wqe->remote_addr + off);
	h->reth.rkey = htonl(wqe->rkey);
	h->reth.length = htonl((uint32_t)wqe->length);
	h->imm = htonl(wqe->imm);
	hlen = mrc_data_header_len(op, flags);

	iov[0].iov_base = h;
	iov[0].iov_len = hlen;
	niov = 1 + payload_iov(wqe, off, len, iov + 1);
	if (mrc_qp_icrc(qp)) {
		add_icrc_room(iov, &niov);
		/* Alone in its datagram: TC fills one ICRC per skb. */
		new_datagram(qp, b, iov, (uint32_t)(hlen + len + MRC_ICRC_LEN),
			     niov, false);
	} else if (!retx && may_join(b, (uint32_t)hlen + len, niov)) {
		/* A resend goes alone: TC gives it its own path, not the lost one. */
		join_datagram(b, (uint32_t)hlen + len, niov);
	} else {
		new_datagram(qp, b, iov, (uint32_t)hlen + len, niov, !retx);
	}
	b->niov += niov;
	b->npkts++;

	qp->counters.tx_packets++;
	qp->counters.tx_bytes += len;
	if (retx) {
		qp->counters.tx_retransmits++;
		qp->counters.retx_bytes += len;
	}
}

static void queue_retx(struct mrc_qp *qp, uint32_t psn);

/* The UDP_SEGMENT option of every datagram of more than one packet. */
static void attach_gso(struct tx_batch *b)
{
	for (int m = 0; m < b->n; m++) {
		struct msghdr *mh = &b->msgs[m].msg_hdr;
		struct cmsghdr *cm;
		uint16_t seg = (uint16_t)b->seg_len[m];

		if (b->count[m] < 2)
			continue;
		mh->msg_control = b->ctl[m].buf;
		mh->msg_controllen = sizeof(b->ctl[m].buf);
		cm = CMSG_FIRSTHDR(mh);
		cm->cmsg_level = SOL_UDP;
		cm->cmsg_type = UDP_SEGMENT;
		cm->cmsg_len = CMSG_LEN(sizeof(seg));
		memcpy(CMSG_DATA(cm), &seg, sizeof(seg));
	}
}

/*
 * Did the kernel refuse the datagram's UDP_SEGMENT (no GSO for this
 * socket or route), rather than run out of buffer?
 */
static bool gso_refused(const struct tx_batch *b, int m, int err)
{
	return b->count[m] > 1 &&
	       (err == EINVAL || err == EIO || err == EMSGSIZE || err == ENOPROTOOPT);
}

/* Did the route of a datagram to another plane than the first refuse it? */
static bool plane_refused(const struct tx_batch *b, int m, int err)
{
	return b->plane[m] != 0 &&
	       (err == ENETUNREACH || err == EHOSTUNREACH || err == ENETDOWN ||
		err == EADDRNOTAVAIL);
}

/*
 * Pass the plane over for a while: its link went down and took its routes
 * (or never had one to the peer). Its packets go again on the others; TC
 * keeps demoting and probing the plane's EVs as ever.
 */
static void refuse_plane(struct mrc_context *ctx, struct tx_batch *b, int m)
{
	ctx->planes_refused |= 1u << b->plane[m];
	ctx->planes_refused_until = mrc_now_ns() + MRC_PLANE_RETRY_MS * 1000000ull;
	b->qp[m]->counters.plane_sends_refused++;
}

/* The refused planes' time is up: try them again. */
static void retry_refused_planes(struct mrc_context *ctx)
{
	if (ctx->planes_refused && mrc_now_ns() >= ctx->planes_refused_until)
		ctx->planes_refused = 0;
}

/*
 * True when every datagram went; a full socket buffer just ends the round.
 * The packets it could not send are queued to go again next round: their
 * PSNs already count as sent, and waiting for loss detection or the
 * timer to notice would stall the window for nothing. A datagram goes
 * whole or not at all, so an unsent burst is all its PSNs. A kernel that
 * refuses UDP_SEGMENT turns the context's bursts off (counted); the
 * refused packets go again, one a datagram. A datagram whose plane's
 * route refused it has that plane passed over for a while (refuse_plane).
 */
static bool flush_batch(struct mrc_context *ctx, struct tx_batch *b)
{
	int sent = 0;
	bool all;

	attach_gso(b);
	while (sent < b->n) {
		int r = sendmmsg(ctx->sock, b->msgs + sent, b->n - sent, 0);

		if (r < 0 && gso_refused(b, sent, errno)) {
			ctx->gso_refused = true;
			b->qp[sent]->counters.gso_fallbacks++;
			b->burst = 1;
		}
		if (r < 0 && plane_refused(b, sent, errno))
			refuse_plane(ctx, b, sent);
		if (r <= 0) {
			if (r < 0)
				mrc_note_send_refused(ctx, errno);
			break;
		}
		for (int m = sent; m < sent + r; m++)
			b->qp[m]->counters.tx_gso_sends += b->count[m] > 1;
		sent += r;
	}
	for (int m = sent; m < b->n; m++) {
		struct mrc_qp *qp = b->qp[m];

		for (int i = b->first[m]; i < b->first[m] + b->count[m]; i++)
			queue_retx(qp, mrc_psn_extend(qp->snd_nxt,
						      ntohl(b->hdr[i].bth.psn) & MRC_PSN_MASK));
	}
	all = sent == b->n;
	b->socket_full |= !all;
	b->n = b->npkts = b->niov = 0;
	b->open = false;
	return all;
}

/* ---- what to send ------------------------------------------------------ */

static struct mrc_send_wqe *wqe_of_psn(struct mrc_qp *qp, uint32_t psn)
{
	uint32_t lo = qp->sq_head, hi = qp->sq_tail;

	/* PSNs grow with the queue index: binary search. */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct mrc_send_wqe *w = wqe_at(qp, mid);

		if (mrc_psn_before(psn, w->first_psn))
			hi = mid;
		else if (psn - w->first_psn >= w->npkts)
			lo = mid + 1;
		else
			return w;
	}
	return NULL;
}

static void queue_retx(struct mrc_qp *qp, uint32_t psn)
{
	if (mrc_bit_test(qp->retx_queued, psn))
		return;
	if (qp->retx_tail - qp->retx_head >= MRC_WINDOW_MAX)
		return;
	mrc_bit_set(qp->retx_queued, psn);
	qp->retx[qp->retx_tail++ % MRC_WINDOW_MAX] = psn;
}

/*
 * A resend that must wait until due_ns (a NACK of a resend: XDP's hold,
 * ack_rx.h resend_hold_ns). Holds are at most a minimum RTT and arrive in
 * nearly the order they fall due, so a ring in arrival order will do.
 */
static void hold_retx(struct mrc_qp *qp, uint32_t psn, uint64_t due_ns)
{
	uint32_t i;

	if (qp->held_tail - qp->held_head >= MRC_WINDOW_MAX) {
		queue_retx(qp, psn);	/* cannot be: one hold per send */
		return;
	}
	i = qp->held_tail++ % MRC_WINDOW_MAX;
	qp->held_psn[i] = psn;
	qp->held_due_ns[i] = due_ns;
	qp->counters.resends_held++;
}

/* The held resends whose time has come join the queue. */
static void release_held(struct mrc_qp *qp, uint64_t now)
{
	while (qp->held_head != qp->held_tail) {
		uint32_t i = qp->held_head % MRC_WINDOW_MAX;

		if (qp->held_due_ns[i] > now)
			return;
		queue_retx(qp, qp->held_psn[i]);
		qp->held_head++;
	}
}

static void send_retransmissions(struct mrc_qp *qp, struct tx_batch *b)
{
	uint32_t una = __atomic_load_n(&qp->tx->snd_una, __ATOMIC_ACQUIRE);

	while (qp->retx_head != qp->retx_tail) {
		uint32_t psn = qp->retx[qp->retx_head % MRC_WINDOW_MAX];
		struct mrc_send_wqe *wqe;

		qp->retx_head++;
		mrc_bit_clear(qp->retx_queued, psn);
		/* Acked meanwhile (cumulatively or selectively): skip. */
		if (mrc_psn_before(psn, una) || mrc_bit_test(qp->tx->sacked, psn))
			continue;
		wqe = wqe_of_psn(qp, psn);
		if (!wqe)
			continue;
		add_packet(qp, b, wqe, psn - wqe->first_psn, true, false);
		/*
		 * A socket that refuses (full, or its network gone) requeues
		 * the batch at the tail of this very queue: stop for this
		 * round, or the loop would never end.
		 */
		if (batch_full(b) && !flush_batch(qp->ctx, b))
			break;
	}
}

/*
 * The QP's new packets stop with some left, held back by a window that is
 * full or that other QPs wait for: its last packet still in the batch
 * asks for an ack. Otherwise a packet in the middle of a
 * WRITE is acked only along with a later one (the WRITE's last, or every
 * MRC_ACK_EVERY-th), which waits for the window: with thousands of QPs
 * taking turns in one window, longer than the retransmission timeout.
 */
static void ask_ack_of_last(struct tx_batch *b, const struct mrc_qp *qp)
{
	struct mrc_bth bth;

	if (!b->n || b->qp[b->n - 1] != qp || !b->npkts)
		return;		/* sent already, or none of its packets */
	/* Copied out and back: the header struct is packed. */
	memcpy(&bth, &b->hdr[b->npkts - 1].bth, sizeof(bth));
	bth.psn |= htonl((uint32_t)MRC_BTH_F_ACK_REQ << 24);
	memcpy(&b->hdr[b->npkts - 1].bth, &bth, sizeof(bth));
}

/*
 * New packets, as far as the responder's window [una, una + MPR) and the
 * destination's congestion window allow.
 */
static void send_new(struct mrc_qp *qp, struct tx_batch *b)
{
	uint32_t una = __atomic_load_n(&qp->tx->snd_una, __ATOMIC_ACQUIRE);
	uint32_t window = (uint32_t)qp->attr.mpr_units * MRC_MPR_UNIT;
	bool sent_new = false;

	while (qp->sq_send != qp->sq_tail) {
		struct mrc_send_wqe *wqe = wqe_at(qp, qp->sq_send);
		uint32_t psn = wqe->first_psn + qp->sq_next_pkt;

		if (psn - una >= window)
			break;
		if (!mrc_cc_may_send(qp)) {
			if (mrc_cc_crowded(qp))
				ask_ack_of_last(b, qp);
			break;
		}
		/* This ring slot may still hold bits of psn - window. */
		mrc_bit_clear(qp->tx->sacked, psn);
		qp->snd_nxt = psn + 1;
		sent_new = true;
		__atomic_store_n(&qp->tx->snd_nxt, qp->snd_nxt, __ATOMIC_RELEASE);
		add_packet(qp, b, wqe, qp->sq_next_pkt, false, mrc_cc_nearly_full(qp));
		mrc_cc_sent(qp);
		if (++qp->sq_next_pkt == wqe->npkts) {
			qp->sq_next_pkt = 0;
			qp->sq_send++;
		}
		if (batch_full(b) && !flush_batch(qp->ctx, b))
			break;	/* socket full: the rest goes next round */
	}
	if (sent_new)	/* the tail probe's clock (probe_deadline_ns) */
		qp->last_new_ns = mrc_now_ns();
}

/* Does the responder's window [una, una + MPR) hold the next new packet back? */
static bool peer_window_full(const struct mrc_qp *qp)
{
	uint32_t una = __atomic_load_n(&qp->tx->snd_una, __ATOMIC_ACQUIRE);
	uint32_t psn = qp->sq[qp->sq_send & (qp->sq_cap - 1)].first_psn + qp->sq_next_pkt;

	return psn - una >= (uint32_t)qp->attr.mpr_units * MRC_MPR_UNIT;
}

bool mrc_tx_peer_window_full(const struct mrc_qp *qp)
{
	return qp->sq_send != qp->sq_tail && peer_window_full(qp);
}

/*
 * New packets held back by the responder's window can wait until a
 * quarter of what is out has been acked: waking on every SACK to send the
 * few packets it freed costs a ring notification and a context switch
 * per SACK, the window stays three quarters full, and acks of that many
 * are sure to come (or a loss, which wakes at once). Anything else (a
 * congestion window, completions) wants the next ack.
 */
#define WAKE_SHARE_OF_OUT	4u

uint32_t mrc_tx_wake_after(const struct mrc_qp *qp)
{
	uint32_t una;

	if (!mrc_tx_peer_window_full(qp))
		return 0;
	una = __atomic_load_n(&qp->tx->snd_una, __ATOMIC_ACQUIRE);
	return (qp->snd_nxt - una) / WAKE_SHARE_OF_OUT;
}

/*
 * Does the QP need the CPU right now: resends queued, or a new packet that
 * both windows (the responder's MPR, the destination's cwnd) would let go?
 * Idle and window-blocked QPs do not: their context may sleep.
 */
bool mrc_tx_wants_cpu(struct mrc_qp *qp)
{
	if (qp->state != MRC_QP_RTS)
		return false;
	if (qp->retx_head != qp->retx_tail)
		return true;
	if (qp->sq_send == qp->sq_tail || peer_window_full(qp))
		return false;
	mrc_cc_refresh(qp);
	return mrc_cc_has_room(qp);
}

/*
 * Right after the QP's turn (mrc_tx_progress): cc_blocked says the window
 * held a send back in that turn (mrc_cc_refresh cleared it at its start).
 */
enum mrc_tx_need mrc_tx_need(const struct mrc_qp *qp)
{
	if (qp->state != MRC_QP_RTS)
		return MRC_TX_NOTHING;
	if (qp->retx_head != qp->retx_tail)
		return MRC_TX_NOW;
	if (qp->sq_send == qp->sq_tail)
		return MRC_TX_NOTHING;
	if (qp->cc_blocked)
		return MRC_TX_WINDOW;
	return peer_window_full(qp) ? MRC_TX_PEER : MRC_TX_NOW;
}

static uint64_t probe_deadline_ns(const struct mrc_qp *qp);
static bool tail_probe_due(const struct mrc_qp *qp);

/* Has the QP packets out that a timer may have to resend (its deadline)? */
bool mrc_tx_deadline(const struct mrc_qp *qp, uint64_t *deadline_ns)
{
	uint64_t probe;

	if (qp->state != MRC_QP_RTS || qp->attr.timeout == 0 ||
	    __atomic_load_n(&qp->tx->snd_una, __ATOMIC_ACQUIRE) == qp->snd_nxt)
		return false;
	*deadline_ns = qp->rto_deadline_ns;
	probe = probe_deadline_ns(qp);
	if (tail_probe_due(qp) && probe < *deadline_ns)
		*deadline_ns = probe;
	if (qp->held_head != qp->held_tail &&
	    qp->held_due_ns[qp->held_head % MRC_WINDOW_MAX] < *deadline_ns)
		*deadline_ns = qp->held_due_ns[qp->held_head % MRC_WINDOW_MAX];
	return true;
}

/* ---- timer ------------------------------------------------------------- */

/*
 * The local ACK timeout, 1.024 us * 2^t, but never below twice the recent
 * peak RTT XDP measures: queues deeper than the configured timeout would
 * otherwise fire it on every packet still waiting in them.
 */
static uint64_t rto_ns(const struct mrc_qp *qp)
{
	uint64_t rto = 1024ull << qp->attr.timeout;
	uint64_t peak = 2ull * __atomic_load_n(&qp->tx->rtt_peak_ns, __ATOMIC_RELAXED);

	return peak > rto ? peak : rto;
}

/*
 * Tail loss probe (the TLP of RFC 8985, on our SACKs). A lost packet with
 * later packets behind it is found within about an RTT: their SACKs show
 * the hole, and XDP reports it (loss.h). The last few of a burst, or a
 * lone small WRITE, have none behind them: lost, or their SACK lost, they
 * wait for the retransmission timeout, at least the configured timeout
 * (16.8 ms by default) and twice the peak RTT. A collective's step waits
 * for its slowest transfer, so each such tail stalls the whole step.
 * Instead, a probe timeout after the later of the last progress and the
 * last new packet, the newest packets not yet acked (as many as a SACK
 * could leave unreported, MRC_DUPTHRESH + 1) are resent once: each
 * either was lost (now resent, on another EV) or draws the SACK that acks
 * it and shows the holes below it. Twice at most per progress (the second
 * a probe timeout after the first: a resend, or the SACK it draws, may
 * cross the dead path too), and only before the first timeout: a tail
 * that stays silent is the timer's, which also blames its paths.
 */
#define PTO_MIN_NS	2000000ull	/* over a busy host's scheduling and ack delays */
#define TAIL_PROBES	2		/* per progress */

static uint64_t pto_ns(const struct mrc_qp *qp)
{
	uint64_t pto = 2ull * __atomic_load_n(&qp->tx->srtt_ns, __ATOMIC_RELAXED);

	return pto < PTO_MIN_NS ? PTO_MIN_NS : pto;
}

/* When the next tail probe is due: one more probe timeout per probe sent. */
static uint64_t probe_deadline_ns(const struct mrc_qp *qp)
{
	uint64_t since = qp->progress_ns > qp->last_new_ns ? qp->progress_ns :
			 qp->last_new_ns;

	return since + (uint64_t)(qp->tail_probed + 1) * pto_ns(qp);
}

static bool tail_probe_due(const struct mrc_qp *qp)
{
	return qp->tail_probed < TAIL_PROBES && qp->retries == 0;
}

static void probe_tail(struct mrc_qp *qp, uint32_t una)
{
	uint32_t from = qp->snd_nxt - (MRC_DUPTHRESH + 1), n = 0;

	if (mrc_psn_before(from, una))
		from = una;
	for (uint32_t psn = from; psn != qp->snd_nxt; psn++)
		if (!mrc_bit_test(qp->tx->sacked, psn)) {
			queue_retx(qp, psn);
			n++;
		}
	qp->tail_probed++;
	if (n)
		qp->counters.tail_probes++;
}

static bool retries_exhausted(const struct mrc_qp *qp)
{
	if (qp->attr.exp_retry_cnt >= 25)
		return false;	/* 25 = retry forever */
	return qp->retries > (uint32_t)qp->attr.retry_cnt + qp->attr.exp_retry_cnt;
}

static uint64_t backoff_ns(const struct mrc_qp *qp)
{
	uint32_t doublings = 0;

	if (qp->retries > qp->attr.retry_cnt)
		doublings = qp->retries - qp->attr.retry_cnt;
	if (doublings > 24)
		doublings = 24;
	return rto_ns(qp) << doublings;
}

/*
 * A second timeout in a row: the paths of the packets that waited a whole
 * timeout for an answer are suspects (not the ones just sent). An
 * EV on which nothing sent since such a packet was acknowledged either
 * goes ASSUMED_BAD (mrcd reports it and probes it); the resends then
 * avoid it. Bounded to the first TIMEOUT_BLAME_MAX holes: enough to name
 * the dead paths, cheap on a long window.
 */
#define TIMEOUT_BLAME_MAX	64

/*
 * When each EV last delivered: the newest send time of a packet on it that
 * the responder acknowledged, cumulatively (below una) or selectively,
 * from the whole send log (the trigger-only counters of XDP see one SACK
 * in 16 and would call most paths silent).
 */
static void ev_last_delivered(const struct mrc_qp *qp, const struct mrc_send_log *log,
			      uint32_t n, uint32_t una, uint64_t *last)
{
	memset(last, 0, MRC_MAX_EVS * sizeof(*last));
	for (uint32_t i = 0; i < n; i++) {
		const struct mrc_send_rec *rec = &log->rec[i];
		uint32_t psn = rec->psn;

		if (!rec->sent_ns || qp->snd_nxt - psn > n ||
		    !mrc_psn_before(psn, qp->snd_nxt))
			continue;	/* empty, or older than the ring */
		if ((mrc_psn_before(psn, una) || mrc_bit_test(qp->tx->sacked, psn)) &&
		    rec->sent_ns > last[rec->ev_idx])
			last[rec->ev_idx] = rec->sent_ns;
	}
}

static void demote_silent_evs(struct mrc_qp *qp, uint32_t una, uint64_t now)
{
	static __thread struct mrc_send_log log;	/* 64 KiB: not on the stack */
	static __thread uint64_t delivered[MRC_MAX_EVS];
	struct mrc_qp_evs *evs;
	uint32_t blamed = 0, n;
	uint64_t timeout;
	int len;

	if (!qp->evs || qp->n_evs == 0 || qp->log_fd < 0)
		return;
	/* The QP's log (an inner map of its window's size, a power of two). */
	len = mrc_qpmaps_read_log_fd(qp->log_fd, &log);
	if (len <= 0)
		return;
	n = (uint32_t)len;
	ev_last_delivered(qp, &log, n, una, delivered);
	evs = qp->evs;
	timeout = rto_ns(qp);
	for (uint32_t psn = una; psn != qp->snd_nxt && blamed < TIMEOUT_BLAME_MAX; psn++) {
		const struct mrc_send_rec *rec = &log.rec[psn & (n - 1)];

		if (mrc_bit_test(qp->tx->sacked, psn) || rec->psn != psn ||
		    now - rec->sent_ns < timeout)
			continue;
		blamed++;
		if (delivered[rec->ev_idx] >= rec->sent_ns)
			continue;	/* the path delivered later packets: not this one */
		if (ev_demote(evs, qp->n_evs, rec->ev_idx, MRC_EV_F_BY_TIMEOUT) == EV_CHANGED)
			qp->counters.ev_timeouts++;
	}
}

/*
 * Selective acks are advisory (RFC 2018: the left edge is resent after a
 * timeout, SACKed or not). A whole timeout without cumulative progress
 * while una is SACKed means the SACK was wrong (forged, or the responder
 * lost the data): una would otherwise never be resent and the transfer
 * would hang until the retries run out. Clearing only una's bit keeps the
 * cost at one packet; XDP (ack_rx.h renege_una) clears the bits above as
 * the cumulative ack reaches them.
 */
static void renege_una(struct mrc_qp *qp, uint32_t una)
{
	if (!mrc_bit_test(qp->tx->sacked, una))
		return;
	mrc_bit_clear(qp->tx->sacked, una);
	qp->counters.sack_reneges++;
}

/* Resend everything outstanding that the responder did not SACK. */
static void resend_unacked(struct mrc_qp *qp, uint32_t una)
{
	renege_una(qp, una);
	for (uint32_t psn = una; psn != qp->snd_nxt; psn++)
		if (!mrc_bit_test(qp->tx->sacked, psn))
			queue_retx(qp, psn);
	/* XDP may report these again once SACKs show new holes. */
	__atomic_store_n(&qp->tx->loss_mark, qp->snd_nxt, __ATOMIC_RELEASE);
}

static void run_timer(struct mrc_qp *qp)
{
	uint32_t una = __atomic_load_n(&qp->tx->snd_una, __ATOMIC_ACQUIRE);
	uint64_t now = mrc_now_ns();

	if (qp->attr.timeout == 0)
		return;		/* 0 = wait forever, as in verbs */
	if (una != qp->una_seen || una == qp->snd_nxt) {
		/* Progress (or nothing outstanding): restart the clock. */
		qp->una_seen = una;
		qp->retries = 0;
		qp->rto_deadline_ns = now + rto_ns(qp);
		qp->progress_ns = now;
		qp->tail_probed = 0;
		return;
	}
	if (now < qp->rto_deadline_ns) {
		/* Before the first timeout only: after it, the timer recovers. */
		if (tail_probe_due(qp) && now >= probe_deadline_ns(qp))
			probe_tail(qp, una);
		return;
	}
	qp->retries++;
	qp->counters.timeouts++;
	if (retries_exhausted(qp)) {
		mrc_qp_to_error(qp, MRC_WC_RETRY_EXC_ERR, 0);
		return;
	}
	qp->rto_deadline_ns = now + backoff_ns(qp);
	/*
	 * Not on the first timeout: a stalled window also stalls the SACKs
	 * (they follow data), so packets delivered high in the window may
	 * not have been reported yet. The first timeout's resends draw SACKs
	 * for all of them; what is still unanswered at the second is not.
	 */
	if (qp->retries >= 2)
		demote_silent_evs(qp, una, now);
	resend_unacked(qp, una);
}

/* RTS: the requester starts over at sq_psn, here and in the mmapped state. */
void mrc_tx_reset(struct mrc_qp *qp)
{
	struct mrc_tx_state *tx = qp->tx;
	uint32_t psn = qp->attr.sq_psn;

	memset(tx->sacked, 0, sizeof(tx->sacked));
	memset(tx->acked_sent_ns, 0, sizeof(tx->acked_sent_ns));
	tx->srtt_ns = tx->rttvar_ns = tx->rtt_peak_ns = tx->rtt_min_ns = 0;
	tx->wr_head = tx->wr_tail = 0;
	tx->sack_max = tx->loss_mark = psn;
	tx->snd_nxt = psn;
	__atomic_store_n(&tx->snd_una, psn, __ATOMIC_RELEASE);
	tx->generation++;
	qp->next_psn = qp->snd_nxt = qp->una_seen = psn;

	qp->sq_head = qp->sq_send = qp->sq_tail = 0;
	qp->sq_next_pkt = 0;
	qp->msn = qp->wimm_msn = 0;
	qp->wimm_out = 0;
	qp->retx_head = qp->retx_tail = 0;
	qp->held_head = qp->held_tail = 0;
	memset(qp->retx_queued, 0, MRC_BITMAP_WORDS * sizeof(uint64_t));
	qp->retries = 0;
	qp->rto_deadline_ns = 0;
	qp->progress_ns = qp->last_new_ns = 0;
	qp->tail_probed = 0;
}

static void on_completion(struct mrc_qp *qp, const struct mrc_event *evt);

/*
 * A completion XDP owes but could not write: its ring was full (counted
 * as RING_FULL), so it left the WRITE unretired for a later SACK. With
 * nothing outstanding no SACK comes, so once everything sent is acked
 * and WRITEs still wait, retire them here with the same CAS on wr_head
 * that XDP uses (emit_completions): whoever wins reports each one once,
 * and an event of XDP's arriving later is old to on_completion.
 */
static void reclaim_completions(struct mrc_qp *qp)
{
	struct mrc_tx_state *tx = qp->tx;
	uint32_t una = __atomic_load_n(&tx->snd_una, __ATOMIC_ACQUIRE);

	if (qp->sq_head == qp->sq_send || una != qp->snd_nxt)
		return;
	for (int i = 0; i < MRC_WR_RING; i++) {
		uint32_t head = __atomic_load_n(&tx->wr_head, __ATOMIC_ACQUIRE);
		uint32_t tail = __atomic_load_n(&tx->wr_tail, __ATOMIC_ACQUIRE);
		struct mrc_event evt = { .type = MRC_EVT_COMPLETION, .qpn = qp->qpn };

		if (head == tail)
			return;
		evt.psn = __atomic_load_n(&tx->wr[head % MRC_WR_RING].last_psn,
					  __ATOMIC_RELAXED);
		if (!mrc_psn_before(evt.psn, una))
			return;
		if (!__atomic_compare_exchange_n(&tx->wr_head, &head, head + 1, false,
						 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			continue;	/* XDP retired it: its event is on the way */
		qp->counters.completions_reclaimed++;
		on_completion(qp, &evt);
	}
}

/*
 * Packets per datagram this round: the EV profile's burst, within the
 * congestion window's cap; 1 once the kernel refused UDP_SEGMENT, and
 * for an ICRC QP.
 */
static uint32_t burst_of(const struct mrc_qp *qp)
{
	uint32_t burst = qp->gso_burst, cap;

	if (qp->ctx->gso_refused || burst < 2 || mrc_qp_icrc(qp))
		return 1;
	if (burst > MRC_GSO_BURST_MAX)
		burst = MRC_GSO_BURST_MAX;
	cap = mrc_cc_burst_cap(qp);
	return burst < cap ? burst : cap;
}

/*
 * The context's batch, shared by its QPs within a progress round: with
 * thousands of QPs that each have a packet or two ready, one batch per QP
 * made one sendmmsg per QP (a syscall per packet or two); shared, a
 * sendmmsg carries up to MRC_TX_BATCH datagrams of any QPs. A datagram
 * never spans QPs (each has its QP's destination and counters).
 */
static struct tx_batch *round_batch(struct mrc_context *ctx)
{
	if (!ctx->tx_batch)
		ctx->tx_batch = calloc(1, sizeof(*ctx->tx_batch));
	return ctx->tx_batch;
}

void mrc_tx_progress(struct mrc_qp *qp)
{
	struct tx_batch *b;

	/* A QP XDP failed (fatal NACK) never gets here: see progress.c drive_qp. */
	if (qp->state != MRC_QP_RTS)
		return;
	reclaim_completions(qp);
	run_timer(qp);
	if (qp->state != MRC_QP_RTS)
		return;
	b = round_batch(qp->ctx);
	/*
	 * A full socket stops the round's sending (its resends wait their
	 * turn), and the next rounds' until it has room again (progress.c):
	 * trying on while a qdisc below drains would refuse most batches, each
	 * a syscall and a batch of packets requeued.
	 */
	if (!b || b->socket_full || qp->ctx->sock_full)
		return;
	retry_refused_planes(qp->ctx);
	if (qp->sq_send != qp->sq_tail || qp->retx_head != qp->retx_tail)
		look_at_planes(qp);	/* only a QP about to send asks */
	mrc_cc_refresh(qp);
	b->open = false;	/* this QP's packets start their own datagram */
	b->burst = burst_of(qp);
	if (qp->held_head != qp->held_tail)
		release_held(qp, mrc_now_ns());
	send_retransmissions(qp, b);
	send_new(qp, b);
}

void mrc_tx_flush(struct mrc_context *ctx)
{
	struct tx_batch *b = ctx->tx_batch;

	if (!b)
		return;
	if (b->n)
		flush_batch(ctx, b);
	b->socket_full = false;
}

void mrc_tx_close(struct mrc_context *ctx)
{
	free(ctx->tx_batch);
	ctx->tx_batch = NULL;
}

/* ---- events from XDP --------------------------------------------------- */

static void on_completion(struct mrc_qp *qp, const struct mrc_event *evt)
{
	/*
	 * XDP completes WRITEs in posting order, but the events of two
	 * consecutive ones, written by SACKs on two CPUs, may reach the ring
	 * in either order. A WRITE is complete once the cumulative ack passed
	 * its last PSN, so an event for a later WRITE completes every one
	 * before it too; the earlier event, arriving after, is then old.
	 */
	while (qp->sq_head != qp->sq_send) {
		struct mrc_send_wqe *wqe = wqe_at(qp, qp->sq_head);
		struct mrc_wc wc = { .opcode = MRC_WC_WRITE, .qp_num = qp->qpn };
		uint32_t last = wqe->first_psn + wqe->npkts - 1;

		if (mrc_psn_before(evt->psn, last))
			return;		/* not this one yet, or an old event */
		wc.wr_id = wqe->wr_id;
		wc.byte_len = (uint32_t)wqe->length;
		if (wqe->opcode == MRC_WR_WRITE_WITH_IMM && qp->wimm_out)
			qp->wimm_out--;
		qp->sq_head++;
		mrc_cq_push(qp->init.send_cq, &wc);
		if (last == evt->psn)
			return;
	}
}

static void on_loss(struct mrc_qp *qp, const struct mrc_event *evt)
{
	/*
	 * A receiver without a posted receive refuses WRITE-IMMs: resending
	 * at once would spin, so the timer paces those.
	 */
	if (evt->reason == MRC_NACK_NO_RESOURCE)
		return;
	if (!mrc_psn_before(evt->psn, qp->snd_nxt))
		return;
	if (evt->hold_ns)
		hold_retx(qp, evt->psn, mrc_now_ns() + evt->hold_ns);
	else
		queue_retx(qp, evt->psn);
	qp->counters.fast_retransmits++;
}

static void on_fatal(struct mrc_qp *qp, const struct mrc_event *evt)
{
	enum mrc_wc_status st = evt->reason == MRC_NACK_REMOTE_ACCESS ?
				MRC_WC_REM_ACCESS_ERR : MRC_WC_REM_OP_ERR;

	mrc_qp_to_error(qp, st, evt->psn);
}

void mrc_tx_handle_event(struct mrc_context *ctx, const struct mrc_event *evt)
{
	struct mrc_qp *qp;

	qp = mrc_qp_by_num(ctx, evt->qpn);
	if (!qp || qp->state != MRC_QP_RTS)
		return;
	/* Its window moved, or a resend is queued: it gets a turn. */
	mrc_qp_wake(qp);
	switch (evt->type) {
	case MRC_EVT_COMPLETION:
		on_completion(qp, evt);
		break;
	case MRC_EVT_LOSS:
		on_loss(qp, evt);
		break;
	case MRC_EVT_QP_FATAL:
		on_fatal(qp, evt);
		break;
	default:
		break;
	}
}
