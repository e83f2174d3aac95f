// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Data transfer over MRC, which has WRITE and WRITE-with-immediate only
 * (docs/LIBFABRIC.md):
 *
 *  - fi_send: the message is cut into fragments of at most one slot of
 *    the peer's receive ring; each is copied into our bounce slot of the
 *    same index and WRITTEN with an immediate naming the slot, whether it
 *    is the last, and credits we hand back. One credit per slot; the
 *    receiver frees a slot when it copied the fragment into a posted
 *    receive, and returns credits on its own fragments or, when half the
 *    ring is owed, in a bare credit update.
 *  - fi_write: a WRITE from the application's buffer to the peer's
 *    (FI_MR_VIRT_ADDR, the key is libmrc's rkey); fi_writedata adds a
 *    notice fragment with the 8 bytes of CQ data, after the WRITE.
 *  - fi_read: a request fragment; the target checks its region
 *    (FI_REMOTE_READ), WRITEs the range into our buffer and answers with
 *    a fragment; the read completes on the answer.
 *
 * Every posted operation is an mfi_op in the endpoint's list, in order;
 * `cursor` is the first one not fully posted (it waits for credits,
 * bounce slots or room in libmrc's send queue).
 */
#include "mrcfi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define WRID_BOUNCE	1u	/* (slot << 3) | 1: a fragment from a bounce slot */
#define WRID_CREDIT	2u	/* a bare credit update */
#define WRID_TAG_MASK	7u	/* else: the mfi_op of an RMA WRITE */

int mfi_wc_to_fi_err(enum mrc_wc_status status)
{
	switch (status) {
	case MRC_WC_SUCCESS:
		return 0;
	case MRC_WC_RETRY_EXC_ERR:
		return FI_ETIMEDOUT;
	case MRC_WC_REM_ACCESS_ERR:
		return FI_EACCES;
	case MRC_WC_WR_FLUSH_ERR:
		return FI_ECANCELED;
	case MRC_WC_REM_OP_ERR:
		return FI_EREMOTEIO;
	case MRC_WC_LOC_PROT_ERR:
		return FI_EINVAL;
	}
	return FI_EIO;
}

/* ---- operations ---------------------------------------------------------- */

static void op_link(struct mfi_ep *ep, struct mfi_op *op)
{
	op->prev = ep->ops_tail;
	if (ep->ops_tail)
		ep->ops_tail->next = op;
	else
		ep->ops_head = op;
	ep->ops_tail = op;
	if (!ep->cursor)
		ep->cursor = op;
	ep->ops_count++;
}

static void op_free(struct mfi_ep *ep, struct mfi_op *op)
{
	if (op->prev)
		op->prev->next = op->next;
	else
		ep->ops_head = op->next;
	if (op->next)
		op->next->prev = op->prev;
	else
		ep->ops_tail = op->prev;
	if (ep->cursor == op)
		ep->cursor = op->next;
	ep->ops_count--;
	if (op->tmp_mr)
		mrc_dereg_mr(op->tmp_mr);
	free(op);
}

static void op_report(struct mfi_ep *ep, struct mfi_op *op, int err, int prov_errno)
{
	if (!op->completion || !ep->txcq)
		return;
	if (err)
		mfi_cq_push_err(ep->txcq, op->context, op->cq_flags, 0, err,
				prov_errno, 0);
	else
		mfi_cq_push(ep->txcq, op->context, op->cq_flags, 0, NULL, 0);
}

static void op_maybe_done(struct mfi_ep *ep, struct mfi_op *op)
{
	if (!op->posted_all || op->pending || op->waiting_answer)
		return;
	op_report(ep, op, 0, 0);
	op_free(ep, op);
}

/* ---- posting WRITEs -------------------------------------------------------- */

static size_t gather(const struct mfi_op *op, size_t off, uint8_t *dst, size_t n)
{
	size_t done = 0;

	for (size_t i = 0; i < op->iov_count && done < n; i++) {
		size_t l = op->iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		l -= off;
		if (l > n - done)
			l = n - done;
		memcpy(dst + done, (uint8_t *)op->iov[i].iov_base + off, l);
		done += l;
		off = 0;
	}
	return done;
}

/*
 * One fragment into the peer's next slot, from our bounce slot of the same
 * index: `hdr` (CQ data or a control payload) then `n` bytes of op's data
 * from `off`. -EAGAIN when credits, the bounce slot or libmrc's queue are
 * short; nothing is consumed then.
 */
static int post_fragment(struct mfi_ep *ep, struct mfi_op *op, struct mfi_imm *imm,
			 const void *hdr, size_t hdrlen, size_t off, size_t n)
{
	uint32_t slot = ep->cr.tx_seq % ep->nslots;
	uint8_t *b = ep->bounce + (size_t)slot * ep->slot_size;
	uint32_t credits = ep->cr.rx_pending > MFI_IMM_CREDIT_MASK ?
			   MFI_IMM_CREDIT_MASK : ep->cr.rx_pending;
	struct mrc_sge sge = {
		.addr = (uint64_t)(uintptr_t)b,
		.length = (uint32_t)(hdrlen + n),
		.lkey = mrc_mr_lkey(ep->bounce_mr),
	};
	struct mrc_send_wr wr = {
		.wr_id = ((uint64_t)slot << 3) | WRID_BOUNCE,
		.opcode = MRC_WR_WRITE_WITH_IMM,
		.sg_list = &sge,
		.num_sge = 1,
		.remote_addr = ep->peer.ring_addr + (uint64_t)slot * ep->slot_size,
		.rkey = ep->peer.ring_rkey,
	};
	int ret;

	if (!ep->cr.tx_credits || ep->bounce_op[slot])
		return -EAGAIN;
	if (hdrlen)
		memcpy(b, hdr, hdrlen);
	if (n)
		gather(op, off, b + hdrlen, n);
	imm->slot = slot;
	imm->credits = credits;
	wr.imm_data = mfi_imm_encode(imm);
	ret = mrc_post_write(ep->qp, &wr);
	if (ret)
		return ret;
	mfi_tx_take_slot(&ep->cr);
	ep->cr.rx_pending -= credits;
	ep->bounce_op[slot] = op;
	op->pending++;
	return 0;
}

/* An RMA WRITE of op's buffer (iov[0], lkey) to (raddr, rkey). */
static int post_rma_write(struct mfi_ep *ep, struct mfi_op *op, uint64_t raddr,
			  uint32_t rkey)
{
	struct mrc_sge sge = {
		.addr = (uint64_t)(uintptr_t)op->iov[0].iov_base,
		.length = (uint32_t)op->len,
		.lkey = op->lkey,
	};
	struct mrc_send_wr wr = {
		.wr_id = (uint64_t)(uintptr_t)op,
		.opcode = MRC_WR_WRITE,
		.sg_list = &sge,
		.num_sge = 1,
		.remote_addr = raddr,
		.rkey = rkey,
	};
	int ret = mrc_post_write(ep->qp, &wr);

	if (!ret)
		op->pending++;
	return ret;
}

static void post_credit_update(struct mfi_ep *ep)
{
	struct mfi_imm imm = { .kind = MFI_K_CREDIT };
	struct mrc_send_wr wr = {
		.wr_id = WRID_CREDIT,
		.opcode = MRC_WR_WRITE_WITH_IMM,
		.num_sge = 0,
		.remote_addr = ep->peer.ring_addr,
		.rkey = ep->peer.ring_rkey,
	};
	uint32_t credits;

	if (ep->credit_inflight || !mfi_rx_credit_due(&ep->cr))
		return;
	credits = ep->cr.rx_pending > MFI_IMM_CREDIT_MASK ?
		  MFI_IMM_CREDIT_MASK : ep->cr.rx_pending;
	imm.credits = credits;
	wr.imm_data = mfi_imm_encode(&imm);
	if (mrc_post_write(ep->qp, &wr))
		return;		/* queue full: again at the next progress */
	ep->cr.rx_pending -= credits;
	ep->credit_inflight = true;
}

/* ---- advancing one operation ---------------------------------------------- */

static int advance_send(struct mfi_ep *ep, struct mfi_op *op)
{
	while (!op->posted_all) {
		bool first = op->stage == 0;
		size_t hdrlen = first && op->has_data ? 8 : 0;
		size_t n = op->len - op->sent;
		struct mfi_imm imm = { .kind = MFI_K_MSG };
		uint8_t hdr[8];
		int ret;

		if (n > ep->slot_size - hdrlen)
			n = ep->slot_size - hdrlen;
		imm.last = op->sent + n == op->len;
		imm.cqdata = hdrlen != 0;
		mfi_put_u64(hdr, op->data);
		ret = post_fragment(ep, op, &imm, hdr, hdrlen, op->sent, n);
		if (ret)
			return ret;
		op->sent += n;
		op->stage = 1;
		op->posted_all = imm.last;
	}
	return 0;
}

static int advance_write(struct mfi_ep *ep, struct mfi_op *op)
{
	int ret;

	if (op->stage == 0) {
		ret = post_rma_write(ep, op, op->raddr, (uint32_t)op->rkey);
		if (ret)
			return ret;
		op->stage = 1;
	}
	if (op->has_data) {
		struct mfi_imm imm = { .kind = MFI_K_WDATA };
		uint8_t hdr[8];

		mfi_put_u64(hdr, op->data);
		ret = post_fragment(ep, op, &imm, hdr, 8, 0, 0);
		if (ret)
			return ret;
	}
	op->posted_all = true;
	return 0;
}

static int advance_read(struct mfi_ep *ep, struct mfi_op *op)
{
	struct mfi_read_req req = {
		.id = op->read_id,
		.raddr = op->raddr,
		.rkey = op->rkey,
		.len = op->len,
		.laddr = (uint64_t)(uintptr_t)op->iov[0].iov_base,
		.lrkey = op->lkey,
	};
	struct mfi_imm imm = { .kind = MFI_K_READ_REQ };
	uint8_t buf[MFI_READ_REQ_LEN];
	int ret;

	mfi_read_req_encode(&req, buf);
	ret = post_fragment(ep, op, &imm, buf, sizeof(buf), 0, 0);
	if (ret)
		return ret;
	op->waiting_answer = true;
	op->posted_all = true;
	return 0;
}

/* A peer's read: the data (op's iov[0], lkey) to its buffer, then the answer. */
static int advance_read_answer(struct mfi_ep *ep, struct mfi_op *op)
{
	struct mfi_read_resp resp = { .id = op->read_id, .status = op->answer_status };
	struct mfi_imm imm = { .kind = MFI_K_READ_RESP };
	uint8_t buf[MFI_READ_RESP_LEN];
	int ret;

	if (op->stage == 0 && !op->answer_status && op->len) {
		ret = post_rma_write(ep, op, op->raddr, (uint32_t)op->rkey);
		if (ret)
			return ret;
	}
	op->stage = 1;
	mfi_read_resp_encode(&resp, buf);
	ret = post_fragment(ep, op, &imm, buf, sizeof(buf), 0, 0);
	if (ret)
		return ret;
	op->posted_all = true;
	return 0;
}

static int advance(struct mfi_ep *ep, struct mfi_op *op)
{
	switch (op->type) {
	case MFI_OP_SEND:
		return advance_send(ep, op);
	case MFI_OP_WRITE:
		return advance_write(ep, op);
	case MFI_OP_READ:
		return advance_read(ep, op);
	case MFI_OP_READ_ANSWER:
		return advance_read_answer(ep, op);
	}
	return -EINVAL;
}

static void push_ops(struct mfi_ep *ep)
{
	while (ep->cursor && ep->qp && ep->state != MFI_EP_ERROR) {
		struct mfi_op *op = ep->cursor;
		int ret = advance(ep, op);

		if (ret == -EAGAIN)
			return;
		if (ret) {
			mfi_ep_fail(ep, FI_EIO, 0);
			return;
		}
		ep->cursor = op->next;
		op_maybe_done(ep, op);
	}
}

/* ---- receiving ------------------------------------------------------------ */

static void recv_report(struct mfi_ep *ep, struct mfi_recv *r)
{
	uint64_t flags = FI_RECV | FI_MSG | (r->has_data ? FI_REMOTE_CQ_DATA : 0);

	if (ep->rxcq && r->truncated)
		mfi_cq_push_err(ep->rxcq, r->context, flags, r->total, FI_ETRUNC, 0,
				r->offset - r->total);
	else if (ep->rxcq && (!ep->rx_selective || (r->flags & FI_COMPLETION)))
		mfi_cq_push(ep->rxcq, r->context, flags, r->offset,
			    r->iov_count ? r->iov[0].iov_base : NULL, r->data);
}

/* Copy a fragment into the receive; past its end only counts (truncation). */
static void scatter(struct mfi_recv *r, const uint8_t *src, size_t n)
{
	size_t off = r->offset, done = 0;

	for (size_t i = 0; i < r->iov_count && done < n; i++) {
		size_t l = r->iov[i].iov_len;

		if (off >= l) {
			off -= l;
			continue;
		}
		l -= off;
		if (l > n - done)
			l = n - done;
		memcpy((uint8_t *)r->iov[i].iov_base + off, src + done, l);
		done += l;
		off = 0;
	}
	if (done < n)
		r->truncated = true;
	r->offset += n;
}

/* Message fragments, in ring order, into the posted receives. */
static void deliver(struct mfi_ep *ep)
{
	while (ep->rx_proc_seq != ep->cr.rx_seq && ep->state != MFI_EP_ERROR) {
		uint32_t slot = ep->rx_proc_seq % ep->nslots;
		const uint8_t *p = ep->ring + (size_t)slot * ep->slot_size;
		struct mfi_recv *r = ep->recv_head;
		struct mfi_imm imm;
		size_t hdr;

		if (!ep->slot_imm[slot]) {	/* a control message, done at arrival */
			ep->rx_proc_seq++;
			continue;
		}
		if (!r)
			return;
		mfi_imm_decode(ep->slot_imm[slot], &imm);
		hdr = imm.cqdata ? 8 : 0;
		if (imm.cqdata) {
			r->data = mfi_get_u64(p);
			r->has_data = true;
		}
		scatter(r, p + hdr, ep->slot_len[slot] - hdr);
		ep->slot_imm[slot] = 0;
		ep->rx_proc_seq++;
		mfi_rx_free(&ep->cr, slot);
		if (imm.last) {
			ep->recv_head = r->next;
			if (!ep->recv_head)
				ep->recv_tail = &ep->recv_head;
			ep->recv_count--;
			recv_report(ep, r);
			free(r);
		}
	}
}

static struct mfi_op *find_read(struct mfi_ep *ep, uint64_t id)
{
	for (struct mfi_op *op = ep->ops_head; op; op = op->next)
		if (op->type == MFI_OP_READ && op->waiting_answer && op->read_id == id)
			return op;
	return NULL;
}

static void got_read_answer(struct mfi_ep *ep, const uint8_t *p)
{
	struct mfi_read_resp resp;
	struct mfi_op *op;

	mfi_read_resp_decode(p, &resp);
	op = find_read(ep, resp.id);
	if (!op) {
		FI_WARN(&mfi_prov, FI_LOG_EP_DATA, "read answer for no read\n");
		return;
	}
	op->waiting_answer = false;
	if (resp.status) {
		op_report(ep, op, resp.status > 0 ? resp.status : FI_EIO, 0);
		op->completion = false;
	}
	op_maybe_done(ep, op);
}

/* A peer asks for a range of one of our regions: check it, queue the answer. */
static void got_read_request(struct mfi_ep *ep, const uint8_t *p)
{
	struct mfi_op *op = calloc(1, sizeof(*op));
	struct mfi_read_req req;
	struct mfi_mr *mr;

	if (!op) {
		mfi_ep_fail(ep, FI_ENOMEM, 0);
		return;
	}
	mfi_read_req_decode(p, &req);
	mr = mfi_mr_by_key(ep->dom, req.rkey);
	op->type = MFI_OP_READ_ANSWER;
	op->read_id = req.id;
	op->raddr = req.laddr;
	op->rkey = req.lrkey;
	op->len = req.len;
	if (!mr || !(mr->access & FI_REMOTE_READ) || req.len > MFI_MAX_RMA_SIZE ||
	    req.raddr < (uintptr_t)mr->addr ||
	    req.raddr + req.len > (uintptr_t)mr->addr + mr->len ||
	    req.raddr + req.len < req.raddr) {
		op->answer_status = FI_EACCES;
	} else {
		op->iov[0].iov_base = (void *)(uintptr_t)req.raddr;
		op->iov[0].iov_len = req.len;
		op->iov_count = 1;
		op->lkey = mrc_mr_lkey(mr->m);
	}
	op_link(ep, op);
}

static void got_write_data(struct mfi_ep *ep, const uint8_t *p)
{
	if (ep->rxcq)
		mfi_cq_push(ep->rxcq, NULL, FI_RMA | FI_REMOTE_WRITE | FI_REMOTE_CQ_DATA,
			    0, NULL, mfi_get_u64(p));
}

static int handle_control(struct mfi_ep *ep, const struct mfi_imm *imm,
			  const uint8_t *p, uint32_t len)
{
	switch (imm->kind) {
	case MFI_K_WDATA:
		if (len != 8)
			return -EPROTO;
		got_write_data(ep, p);
		return 0;
	case MFI_K_READ_REQ:
		if (len != MFI_READ_REQ_LEN)
			return -EPROTO;
		got_read_request(ep, p);
		return 0;
	case MFI_K_READ_RESP:
		if (len != MFI_READ_RESP_LEN)
			return -EPROTO;
		got_read_answer(ep, p);
		return 0;
	default:
		return -EPROTO;
	}
}

/* A peer's WRITE-IMM: credits, and a fragment or control message in a slot. */
static int got_immediate(struct mfi_ep *ep, const struct mrc_wc *wc)
{
	struct mrc_recv_wr rwr = { .wr_id = 0 };
	struct mfi_imm imm;

	mrc_post_recv(ep->qp, &rwr);
	if (mfi_imm_decode(wc->imm_data, &imm) || mfi_tx_grant(&ep->cr, imm.credits))
		return -EPROTO;
	if (imm.kind == MFI_K_CREDIT)
		return wc->byte_len ? -EPROTO : 0;
	if (wc->byte_len > ep->slot_size || (imm.cqdata && wc->byte_len < 8) ||
	    mfi_rx_arrive(&ep->cr, imm.slot))
		return -EPROTO;
	ep->slot_len[imm.slot] = wc->byte_len;
	ep->slot_imm[imm.slot] = wc->imm_data;
	if (imm.kind == MFI_K_MSG)
		return 0;
	ep->slot_imm[imm.slot] = 0;
	if (handle_control(ep, &imm, ep->ring + (size_t)imm.slot * ep->slot_size,
			   wc->byte_len))
		return -EPROTO;
	return mfi_rx_free(&ep->cr, imm.slot);
}

/* One of our WRITEs completed. */
static void write_done(struct mfi_ep *ep, uint64_t wr_id)
{
	struct mfi_op *op;

	if ((wr_id & WRID_TAG_MASK) == WRID_CREDIT) {
		ep->credit_inflight = false;
		return;
	}
	if ((wr_id & WRID_TAG_MASK) == WRID_BOUNCE) {
		uint32_t slot = (uint32_t)(wr_id >> 3);

		if (slot >= ep->nslots || !ep->bounce_op[slot])
			return;
		op = ep->bounce_op[slot];
		ep->bounce_op[slot] = NULL;
	} else {
		op = (struct mfi_op *)(uintptr_t)wr_id;
	}
	op->pending--;
	op_maybe_done(ep, op);
}

void mfi_ep_handle_wc(struct mfi_ep *ep, const struct mrc_wc *wc)
{
	/* After a failure everything was flushed: late completions are moot. */
	if (ep->state == MFI_EP_ERROR)
		return;
	if (wc->status != MRC_WC_SUCCESS) {
		mfi_ep_fail(ep, mfi_wc_to_fi_err(wc->status), wc->status);
		return;
	}
	if (wc->opcode == MRC_WC_RECV_WRITE_IMM) {
		if (got_immediate(ep, wc)) {
			FI_WARN(&mfi_prov, FI_LOG_EP_DATA,
				"qp %u: peer broke the protocol (imm 0x%08x, %u bytes)\n",
				ep->qpn, wc->imm_data, wc->byte_len);
			mfi_ep_fail(ep, MFI_EPROTO, 0);
		}
		return;
	}
	write_done(ep, wc->wr_id);
}

void mfi_ep_progress(struct mfi_ep *ep)
{
	if (!ep->qp || ep->state == MFI_EP_ERROR || ep->state == MFI_EP_IDLE ||
	    ep->state == MFI_EP_CONNECTING)
		return;
	deliver(ep);
	push_ops(ep);
	post_credit_update(ep);
	mfi_bye_progress(ep);
}

void mfi_ep_flush(struct mfi_ep *ep, int fi_err, int prov_errno)
{
	while (ep->ops_head) {
		struct mfi_op *op = ep->ops_head;

		if (!op->posted_all || op->pending || op->waiting_answer)
			op_report(ep, op, fi_err, prov_errno);
		op_free(ep, op);
	}
	memset(ep->bounce_op, 0, sizeof(ep->bounce_op));
	while (ep->recv_head) {
		struct mfi_recv *r = ep->recv_head;

		ep->recv_head = r->next;
		if (ep->rxcq)
			mfi_cq_push_err(ep->rxcq, r->context, FI_RECV | FI_MSG, 0,
					fi_err, prov_errno, 0);
		free(r);
	}
	ep->recv_tail = &ep->recv_head;
	ep->recv_count = 0;
}

/* ---- posting from the application ------------------------------------------- */

static int check_tx(struct mfi_ep *ep)
{
	if (ep->state == MFI_EP_ERROR || ep->state == MFI_EP_SHUTDOWN)
		return -FI_ESHUTDOWN;
	if (ep->state != MFI_EP_CONNECTED)
		return -FI_ENOTCONN;
	if (ep->ops_count >= MFI_TX_SIZE)
		return -FI_EAGAIN;
	return 0;
}

/*
 * libmrc sends what is posted when it is polled: poll once now, so that
 * an operation goes out even if the application does not read its CQ
 * again soon (fi_inject, or a last send before it waits on something
 * else). Something is in flight now, so the poll does not sleep.
 */
static ssize_t queue_op(struct mfi_ep *ep, struct mfi_op *op)
{
	op_link(ep, op);
	push_ops(ep);
	mfi_progress(ep->dom);
	return 0;
}

/* fi_inject and friends never report; otherwise FI_SELECTIVE_COMPLETION decides. */
#define MFI_SUPPRESS	(1ull << 63)

static bool wants_completion(const struct mfi_ep *ep, uint64_t flags)
{
	if (flags & MFI_SUPPRESS)
		return false;
	return !ep->tx_selective || (flags & FI_COMPLETION);
}

/* Copy an inject's data into the operation: the caller's buffer is free now. */
static int inject_copy(struct mfi_op *op, const struct iovec *iov, size_t count,
		       size_t len)
{
	size_t off = 0;

	if (len > MFI_INJECT_SIZE)
		return -FI_EMSGSIZE;
	for (size_t i = 0; i < count; i++) {
		memcpy(op->inject_buf + off, iov[i].iov_base, iov[i].iov_len);
		off += iov[i].iov_len;
	}
	op->iov[0] = (struct iovec){ op->inject_buf, len };
	op->iov_count = 1;
	return 0;
}

static size_t iov_total(const struct iovec *iov, size_t count)
{
	size_t len = 0;

	for (size_t i = 0; i < count; i++)
		len += iov[i].iov_len;
	return len;
}

static ssize_t send_common(struct mfi_ep *ep, const struct iovec *iov, size_t count,
			   void *context, uint64_t data, uint64_t flags)
{
	size_t len = iov_total(iov, count);
	struct mfi_op *op;
	ssize_t ret;

	if (count > MFI_IOV_LIMIT || (count && !iov))
		return -FI_EINVAL;
	if (len > MFI_MAX_MSG_SIZE)
		return -FI_EMSGSIZE;
	mfi_lock(ep->dom->fab);
	ret = check_tx(ep);
	if (ret)
		goto out;
	op = calloc(1, sizeof(*op));
	if (!op) {
		ret = -FI_ENOMEM;
		goto out;
	}
	op->type = MFI_OP_SEND;
	op->context = context;
	op->cq_flags = FI_SEND | FI_MSG;
	op->len = len;
	op->has_data = flags & FI_REMOTE_CQ_DATA;
	op->data = data;
	op->completion = wants_completion(ep, flags);
	if (flags & FI_INJECT) {
		ret = inject_copy(op, iov, count, len);
		if (ret) {
			free(op);
			goto out;
		}
	} else {
		memcpy(op->iov, iov, count * sizeof(*iov));
		op->iov_count = count;
	}
	ret = queue_op(ep, op);
out:
	mfi_unlock(ep->dom->fab);
	return ret;
}

static ssize_t msg_send(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			fi_addr_t dest_addr, void *context)
{
	struct iovec iov = { (void *)buf, len };

	(void)desc; (void)dest_addr;
	return send_common((struct mfi_ep *)ep, &iov, 1, context, 0, 0);
}

static ssize_t msg_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t dest_addr, void *context)
{
	(void)desc; (void)dest_addr;
	return send_common((struct mfi_ep *)ep, iov, count, context, 0, 0);
}

static ssize_t msg_sendmsg(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return send_common((struct mfi_ep *)ep, msg->msg_iov, msg->iov_count,
			   msg->context, msg->data, flags);
}

static ssize_t msg_inject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest_addr)
{
	struct iovec iov = { (void *)buf, len };

	(void)dest_addr;
	return send_common((struct mfi_ep *)ep, &iov, 1, NULL, 0,
			   FI_INJECT | MFI_SUPPRESS);
}

static ssize_t msg_senddata(struct fid_ep *ep, const void *buf, size_t len,
			    void *desc, uint64_t data, fi_addr_t dest_addr,
			    void *context)
{
	struct iovec iov = { (void *)buf, len };

	(void)desc; (void)dest_addr;
	return send_common((struct mfi_ep *)ep, &iov, 1, context, data,
			   FI_REMOTE_CQ_DATA);
}

static ssize_t msg_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr)
{
	struct iovec iov = { (void *)buf, len };

	(void)dest_addr;
	return send_common((struct mfi_ep *)ep, &iov, 1, NULL, data,
			   FI_INJECT | FI_REMOTE_CQ_DATA | MFI_SUPPRESS);
}

static ssize_t recv_common(struct mfi_ep *ep, const struct iovec *iov, size_t count,
			   void *context, uint64_t flags)
{
	struct mfi_recv *r;
	ssize_t ret = 0;

	if (count > MFI_IOV_LIMIT || (count && !iov))
		return -FI_EINVAL;
	mfi_lock(ep->dom->fab);
	if (ep->state == MFI_EP_ERROR) {
		ret = -FI_ESHUTDOWN;
		goto out;
	}
	if (ep->recv_count >= MFI_RX_SIZE) {
		ret = -FI_EAGAIN;
		goto out;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		ret = -FI_ENOMEM;
		goto out;
	}
	memcpy(r->iov, iov, count * sizeof(*iov));
	r->iov_count = count;
	r->total = iov_total(iov, count);
	r->context = context;
	r->flags = flags;
	*ep->recv_tail = r;
	ep->recv_tail = &r->next;
	ep->recv_count++;
	/* A message may be waiting in the ring for exactly this receive. */
	if (ep->qp && ep->state != MFI_EP_IDLE && ep->state != MFI_EP_CONNECTING)
		deliver(ep);
out:
	mfi_unlock(ep->dom->fab);
	return ret;
}

static ssize_t msg_recv(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, void *context)
{
	struct iovec iov = { buf, len };

	(void)desc; (void)src_addr;
	return recv_common((struct mfi_ep *)ep, &iov, 1, context, 0);
}

static ssize_t msg_recvv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t src_addr, void *context)
{
	(void)desc; (void)src_addr;
	return recv_common((struct mfi_ep *)ep, iov, count, context, 0);
}

static ssize_t msg_recvmsg(struct fid_ep *ep, const struct fi_msg *msg,
			   uint64_t flags)
{
	if (!msg)
		return -FI_EINVAL;
	return recv_common((struct mfi_ep *)ep, msg->msg_iov, msg->iov_count,
			   msg->context, flags);
}

struct fi_ops_msg mfi_msg_ops = {
	.size = sizeof(struct fi_ops_msg),
	.recv = msg_recv,
	.recvv = msg_recvv,
	.recvmsg = msg_recvmsg,
	.send = msg_send,
	.sendv = msg_sendv,
	.sendmsg = msg_sendmsg,
	.inject = msg_inject,
	.senddata = msg_senddata,
	.injectdata = msg_injectdata,
};

/* ---- RMA ----------------------------------------------------------------------- */

/*
 * The MRC key of an RMA's local buffer: the region `desc` names if it
 * covers the buffer (with remote write for a read's destination), else a
 * region registered for this operation alone.
 */
static int local_key(struct mfi_ep *ep, struct mfi_op *op, void *desc, bool peer_writes)
{
	uint8_t *p = op->iov[0].iov_base;
	struct mfi_mr *mr = desc ? mfi_mr_by_desc(ep->dom, desc) : NULL;

	if (mr && p >= mr->addr && p + op->len <= mr->addr + mr->len &&
	    (!peer_writes || (mr->access & (FI_READ | FI_REMOTE_WRITE)))) {
		op->lkey = peer_writes ? mrc_mr_rkey(mr->m) : mrc_mr_lkey(mr->m);
		return 0;
	}
	if (!op->len) {
		op->lkey = mrc_mr_lkey(ep->bounce_mr);
		op->iov[0].iov_base = ep->bounce;
		return 0;
	}
	op->tmp_mr = mrc_reg_mr(ep->dom->fab->ctx, p, op->len, MRC_ACCESS_LOCAL_WRITE |
				(peer_writes ? MRC_ACCESS_REMOTE_WRITE : 0));
	if (!op->tmp_mr)
		return -errno;
	op->lkey = peer_writes ? mrc_mr_rkey(op->tmp_mr) : mrc_mr_lkey(op->tmp_mr);
	return 0;
}

static ssize_t rma_common(struct mfi_ep *ep, enum mfi_op_type type,
			  const struct iovec *iov, void **desc, size_t count,
			  uint64_t addr, uint64_t key, void *context, uint64_t data,
			  uint64_t flags)
{
	struct mfi_op *op;
	ssize_t ret;

	if (count != 1 || !iov || iov[0].iov_len > MFI_MAX_RMA_SIZE || key > UINT32_MAX)
		return -FI_EINVAL;
	mfi_lock(ep->dom->fab);
	ret = check_tx(ep);
	if (ret)
		goto out;
	op = calloc(1, sizeof(*op));
	if (!op) {
		ret = -FI_ENOMEM;
		goto out;
	}
	op->type = type;
	op->context = context;
	op->cq_flags = FI_RMA | (type == MFI_OP_READ ? FI_READ : FI_WRITE);
	op->len = iov[0].iov_len;
	op->raddr = addr;
	op->rkey = key;
	op->data = data;
	op->has_data = flags & FI_REMOTE_CQ_DATA;
	op->completion = wants_completion(ep, flags);
	op->read_id = ++ep->next_read_id;
	if (flags & FI_INJECT)
		ret = type == MFI_OP_READ ? -FI_EINVAL : inject_copy(op, iov, 1, op->len);
	else
		op->iov[0] = iov[0], op->iov_count = 1;
	if (!ret)
		ret = local_key(ep, op, desc ? desc[0] : NULL, type == MFI_OP_READ);
	if (ret) {
		if (op->tmp_mr)
			mrc_dereg_mr(op->tmp_mr);
		free(op);
		ret = mfi_errno_to_fi((int)ret);
		goto out;
	}
	ret = queue_op(ep, op);
out:
	mfi_unlock(ep->dom->fab);
	return ret;
}

static ssize_t rma_read(struct fid_ep *ep, void *buf, size_t len, void *desc,
			fi_addr_t src_addr, uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { buf, len };

	(void)src_addr;
	return rma_common((struct mfi_ep *)ep, MFI_OP_READ, &iov, &desc, 1, addr, key,
			  context, 0, 0);
}

static ssize_t rma_readv(struct fid_ep *ep, const struct iovec *iov, void **desc,
			 size_t count, fi_addr_t src_addr, uint64_t addr,
			 uint64_t key, void *context)
{
	(void)src_addr;
	return rma_common((struct mfi_ep *)ep, MFI_OP_READ, iov, desc, count, addr,
			  key, context, 0, 0);
}

static ssize_t rma_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			   uint64_t flags)
{
	if (!msg || msg->rma_iov_count != 1)
		return -FI_EINVAL;
	return rma_common((struct mfi_ep *)ep, MFI_OP_READ, msg->msg_iov, msg->desc,
			  msg->iov_count, msg->rma_iov[0].addr, msg->rma_iov[0].key,
			  msg->context, 0, flags);
}

static ssize_t rma_write(struct fid_ep *ep, const void *buf, size_t len, void *desc,
			 fi_addr_t dest_addr, uint64_t addr, uint64_t key,
			 void *context)
{
	struct iovec iov = { (void *)buf, len };

	(void)dest_addr;
	return rma_common((struct mfi_ep *)ep, MFI_OP_WRITE, &iov, &desc, 1, addr, key,
			  context, 0, 0);
}

static ssize_t rma_writev(struct fid_ep *ep, const struct iovec *iov, void **desc,
			  size_t count, fi_addr_t dest_addr, uint64_t addr,
			  uint64_t key, void *context)
{
	(void)dest_addr;
	return rma_common((struct mfi_ep *)ep, MFI_OP_WRITE, iov, desc, count, addr,
			  key, context, 0, 0);
}

static ssize_t rma_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg,
			    uint64_t flags)
{
	if (!msg || msg->rma_iov_count != 1)
		return -FI_EINVAL;
	return rma_common((struct mfi_ep *)ep, MFI_OP_WRITE, msg->msg_iov, msg->desc,
			  msg->iov_count, msg->rma_iov[0].addr, msg->rma_iov[0].key,
			  msg->context, msg->data, flags);
}

static ssize_t rma_inject(struct fid_ep *ep, const void *buf, size_t len,
			  fi_addr_t dest_addr, uint64_t addr, uint64_t key)
{
	struct iovec iov = { (void *)buf, len };

	(void)dest_addr;
	return rma_common((struct mfi_ep *)ep, MFI_OP_WRITE, &iov, NULL, 1, addr, key,
			  NULL, 0, FI_INJECT | MFI_SUPPRESS);
}

static ssize_t rma_writedata(struct fid_ep *ep, const void *buf, size_t len,
			     void *desc, uint64_t data, fi_addr_t dest_addr,
			     uint64_t addr, uint64_t key, void *context)
{
	struct iovec iov = { (void *)buf, len };

	(void)dest_addr;
	return rma_common((struct mfi_ep *)ep, MFI_OP_WRITE, &iov, &desc, 1, addr, key,
			  context, data, FI_REMOTE_CQ_DATA);
}

static ssize_t rma_injectdata(struct fid_ep *ep, const void *buf, size_t len,
			      uint64_t data, fi_addr_t dest_addr, uint64_t addr,
			      uint64_t key)
{
	struct iovec iov = { (void *)buf, len };

	(void)dest_addr;
	return rma_common((struct mfi_ep *)ep, MFI_OP_WRITE, &iov, NULL, 1, addr, key,
			  NULL, data, FI_INJECT | FI_REMOTE_CQ_DATA | MFI_SUPPRESS);
}

struct fi_ops_rma mfi_rma_ops = {
	.size = sizeof(struct fi_ops_rma),
	.read = rma_read,
	.readv = rma_readv,
	.readmsg = rma_readmsg,
	.write = rma_write,
	.writev = rma_writev,
	.writemsg = rma_writemsg,
	.inject = rma_inject,
	.writedata = rma_writedata,
	.injectdata = rma_injectdata,
};
