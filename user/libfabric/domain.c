// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Domain, memory regions and completion queues, and the progress engine:
 * every QP of a domain completes into one libmrc CQ; progress polls it
 * (which also drives libmrc: sends, placement, acks, timers), hands each
 * completion to its endpoint, and lets every endpoint move its queued
 * operations and deliver what its receive ring holds. Progress is manual:
 * it runs inside fi_cq_read/sread (and fi_eq_read for connections).
 */
#include "mrcfi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- memory regions ------------------------------------------------------ */

static int mr_close(struct fid *fid)
{
	struct mfi_mr *mr = (struct mfi_mr *)fid;
	struct mfi_domain *dom = mr->dom;
	struct mfi_mr **pp;

	mfi_lock(dom->fab);
	for (pp = &dom->mrs; *pp; pp = &(*pp)->next)
		if (*pp == mr) {
			*pp = mr->next;
			break;
		}
	mrc_dereg_mr(mr->m);
	dom->refs--;
	mfi_unlock(dom->fab);
	free(mr);
	return 0;
}

static int mr_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)arg;
	/* Nothing to enable: a region is usable once registered. */
	return command == FI_ENABLE ? 0 : -FI_ENOSYS;
}

static int mr_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	(void)fid; (void)bfid; (void)flags;
	return -FI_ENOSYS;
}

static struct fi_ops mr_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = mr_close,
	.bind = mr_bind,
	.control = mr_control,
	.ops_open = mfi_no_ops_open,
};

/*
 * Peers may WRITE into a region only if the application allows remote
 * writes, or local reads (the target of fi_read WRITEs the data into it).
 * FI_REMOTE_READ is checked by us when a read request arrives.
 */
static unsigned int mrc_access_of(uint64_t access)
{
	unsigned int a = MRC_ACCESS_LOCAL_WRITE;

	if (!access || (access & (FI_REMOTE_WRITE | FI_READ)))
		a |= MRC_ACCESS_REMOTE_WRITE;
	return a;
}

static int mr_reg(struct fid *fid, const void *buf, size_t len, uint64_t access,
		  uint64_t offset, uint64_t requested_key, uint64_t flags,
		  struct fid_mr **out, void *context)
{
	struct mfi_domain *dom = (struct mfi_domain *)fid;
	struct mfi_mr *mr;

	(void)requested_key;	/* FI_MR_PROV_KEY: the key is ours */
	if (flags || offset || !buf || !len)
		return -FI_EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -FI_ENOMEM;
	mfi_lock(dom->fab);
	mr->m = mrc_reg_mr(dom->fab->ctx, (void *)buf, len, mrc_access_of(access));
	if (!mr->m) {
		int err = -errno;

		mfi_unlock(dom->fab);
		free(mr);
		return mfi_errno_to_fi(err);
	}
	mr->dom = dom;
	mr->access = access ? access : (FI_SEND | FI_RECV | FI_READ | FI_WRITE |
					FI_REMOTE_READ | FI_REMOTE_WRITE);
	mr->addr = (uint8_t *)buf;
	mr->len = len;
	mr->mr.fid.fclass = FI_CLASS_MR;
	mr->mr.fid.context = context;
	mr->mr.fid.ops = &mr_fi_ops;
	mr->mr.mem_desc = mr;
	mr->mr.key = mrc_mr_rkey(mr->m);
	mr->next = dom->mrs;
	dom->mrs = mr;
	dom->refs++;
	mfi_unlock(dom->fab);
	*out = &mr->mr;
	return 0;
}

static int mr_regv(struct fid *fid, const struct iovec *iov, size_t count,
		   uint64_t access, uint64_t offset, uint64_t requested_key,
		   uint64_t flags, struct fid_mr **mr, void *context)
{
	if (count != 1 || !iov)
		return -FI_EINVAL;
	return mr_reg(fid, iov[0].iov_base, iov[0].iov_len, access, offset,
		      requested_key, flags, mr, context);
}

static int mr_regattr(struct fid *fid, const struct fi_mr_attr *attr,
		      uint64_t flags, struct fid_mr **mr)
{
	if (!attr)
		return -FI_EINVAL;
	return mr_regv(fid, attr->mr_iov, attr->iov_count, attr->access,
		       attr->offset, attr->requested_key, flags, mr, attr->context);
}

static struct fi_ops_mr mr_ops = {
	.size = sizeof(struct fi_ops_mr),
	.reg = mr_reg,
	.regv = mr_regv,
	.regattr = mr_regattr,
};

/* A desc handed to a data call: one of this domain's regions, or NULL. */
struct mfi_mr *mfi_mr_by_desc(struct mfi_domain *dom, void *desc)
{
	for (struct mfi_mr *mr = dom->mrs; mr; mr = mr->next)
		if (mr == desc)
			return mr;
	return NULL;
}

struct mfi_mr *mfi_mr_by_key(struct mfi_domain *dom, uint64_t key)
{
	for (struct mfi_mr *mr = dom->mrs; mr; mr = mr->next)
		if (mr->mr.key == key)
			return mr;
	return NULL;
}

/* ---- completion queues --------------------------------------------------- */

static size_t entry_size(enum fi_cq_format format)
{
	switch (format) {
	case FI_CQ_FORMAT_CONTEXT:
		return sizeof(struct fi_cq_entry);
	case FI_CQ_FORMAT_MSG:
		return sizeof(struct fi_cq_msg_entry);
	case FI_CQ_FORMAT_DATA:
		return sizeof(struct fi_cq_data_entry);
	default:
		return sizeof(struct fi_cq_tagged_entry);
	}
}

/* Completions never get lost: the ring grows when the application lags. */
static int cq_grow(struct mfi_cq *cq)
{
	size_t cap = cq->cap * 2;
	struct fi_cq_tagged_entry *r = malloc(cap * sizeof(*r));

	if (!r)
		return -FI_ENOMEM;
	for (size_t i = 0; i < cq->count; i++)
		r[i] = cq->ring[(cq->head + i) % cq->cap];
	free(cq->ring);
	cq->ring = r;
	cq->cap = cap;
	cq->head = 0;
	return 0;
}

int mfi_cq_push(struct mfi_cq *cq, void *context, uint64_t flags, size_t len,
		void *buf, uint64_t data)
{
	struct fi_cq_tagged_entry *e;

	if (cq->count == cq->cap && cq_grow(cq))
		return -FI_ENOMEM;
	e = &cq->ring[(cq->head + cq->count) % cq->cap];
	e->op_context = context;
	e->flags = flags;
	e->len = len;
	e->buf = buf;
	e->data = data;
	e->tag = 0;
	cq->count++;
	return 0;
}

int mfi_cq_push_err(struct mfi_cq *cq, void *context, uint64_t flags,
		    size_t len, int err, int prov_errno, size_t olen)
{
	struct mfi_cq_err *e = calloc(1, sizeof(*e));

	if (!e)
		return -FI_ENOMEM;
	e->e.op_context = context;
	e->e.flags = flags;
	e->e.len = len;
	e->e.err = err;
	e->e.prov_errno = prov_errno;
	e->e.olen = olen;
	*cq->errs_tail = e;
	cq->errs_tail = &e->next;
	return 0;
}

static void copy_entry(struct mfi_cq *cq, const struct fi_cq_tagged_entry *e,
		       void *out)
{
	memcpy(out, e, entry_size(cq->format));
}

static ssize_t cq_read_locked(struct mfi_cq *cq, void *buf, size_t count)
{
	size_t n = 0, esz = entry_size(cq->format);

	mfi_progress(cq->dom);
	if (cq->errs)
		return -FI_EAVAIL;
	while (n < count && cq->count) {
		copy_entry(cq, &cq->ring[cq->head], (uint8_t *)buf + n * esz);
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
		n++;
	}
	return n ? (ssize_t)n : -FI_EAGAIN;
}

static ssize_t cq_read(struct fid_cq *fid, void *buf, size_t count)
{
	struct mfi_cq *cq = (struct mfi_cq *)fid;
	ssize_t ret;

	mfi_lock(cq->dom->fab);
	ret = cq_read_locked(cq, buf, count);
	mfi_unlock(cq->dom->fab);
	return ret;
}

static ssize_t cq_readfrom(struct fid_cq *fid, void *buf, size_t count,
			   fi_addr_t *src_addr)
{
	ssize_t ret = cq_read(fid, buf, count);

	/* Connected endpoints: the source is the connection, no address. */
	for (ssize_t i = 0; src_addr && i < ret; i++)
		src_addr[i] = FI_ADDR_NOTAVAIL;
	return ret;
}

static ssize_t cq_readerr(struct fid_cq *fid, struct fi_cq_err_entry *buf,
			  uint64_t flags)
{
	struct mfi_cq *cq = (struct mfi_cq *)fid;
	struct mfi_cq_err *e;

	(void)flags;
	mfi_lock(cq->dom->fab);
	e = cq->errs;
	if (!e) {
		mfi_unlock(cq->dom->fab);
		return -FI_EAGAIN;
	}
	cq->errs = e->next;
	if (!cq->errs)
		cq->errs_tail = &cq->errs;
	mfi_unlock(cq->dom->fab);
	buf->op_context = e->e.op_context;
	buf->flags = e->e.flags;
	buf->len = e->e.len;
	buf->buf = NULL;
	buf->data = 0;
	buf->tag = 0;
	buf->olen = e->e.olen;
	buf->err = e->e.err;
	buf->prov_errno = e->e.prov_errno;
	/* No provider error data: fi_cq_strerror names prov_errno. */
	if (FI_VERSION_GE(cq->dom->fab->api_version, FI_VERSION(1, 5)))
		buf->err_data_size = 0;
	else
		buf->err_data = NULL;
	free(e);
	return 1;
}

static ssize_t cq_sread(struct fid_cq *fid, void *buf, size_t count,
			const void *cond, int timeout)
{
	struct mfi_cq *cq = (struct mfi_cq *)fid;
	uint64_t end = timeout < 0 ? UINT64_MAX :
		       mfi_now_ns() + (uint64_t)timeout * 1000000ull;
	ssize_t ret;

	(void)cond;
	/*
	 * libmrc's poll sleeps in epoll itself when nothing is in flight
	 * (up to 20 ms, woken by a packet), so this loop does not spin hot.
	 */
	do {
		ret = cq_read(fid, buf, count);
		if (ret != -FI_EAGAIN)
			return ret;
	} while (mfi_now_ns() < end);
	(void)cq;
	return -FI_EAGAIN;
}

static ssize_t cq_sreadfrom(struct fid_cq *fid, void *buf, size_t count,
			    fi_addr_t *src_addr, const void *cond, int timeout)
{
	ssize_t ret = cq_sread(fid, buf, count, cond, timeout);

	for (ssize_t i = 0; src_addr && i < ret; i++)
		src_addr[i] = FI_ADDR_NOTAVAIL;
	return ret;
}

static int cq_signal(struct fid_cq *fid)
{
	(void)fid;
	return -FI_ENOSYS;
}

static const char *cq_strerror(struct fid_cq *fid, int prov_errno,
			       const void *err_data, char *buf, size_t len)
{
	(void)fid; (void)err_data;
	return mfi_prov_strerror(prov_errno, "no MRC completion status (see err)",
				 buf, len);
}

static int cq_close(struct fid *fid)
{
	struct mfi_cq *cq = (struct mfi_cq *)fid;
	struct mfi_domain *dom = cq->dom;

	mfi_lock(dom->fab);
	if (cq->refs) {
		mfi_unlock(dom->fab);
		return -FI_EBUSY;
	}
	while (cq->errs) {
		struct mfi_cq_err *e = cq->errs;

		cq->errs = e->next;
		free(e);
	}
	dom->refs--;
	mfi_unlock(dom->fab);
	free(cq->ring);
	free(cq);
	return 0;
}

static int cq_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	/* No wait object to hand out (FI_GETWAIT): progress is manual. */
	return -FI_ENOSYS;
}

static struct fi_ops cq_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = cq_close,
	.bind = mr_bind,
	.control = cq_control,
	.ops_open = mfi_no_ops_open,
};

static struct fi_ops_cq cq_ops = {
	.size = sizeof(struct fi_ops_cq),
	.read = cq_read,
	.readfrom = cq_readfrom,
	.readerr = cq_readerr,
	.sread = cq_sread,
	.sreadfrom = cq_sreadfrom,
	.signal = cq_signal,
	.strerror = cq_strerror,
};

static int cq_open(struct fid_domain *domain, struct fi_cq_attr *attr,
		   struct fid_cq **out, void *context)
{
	struct mfi_domain *dom = (struct mfi_domain *)domain;
	struct mfi_cq *cq;

	if (attr->wait_obj != FI_WAIT_NONE && attr->wait_obj != FI_WAIT_UNSPEC)
		return -FI_ENOSYS;
	if (attr->format > FI_CQ_FORMAT_TAGGED || (attr->flags & FI_AFFINITY))
		return -FI_EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -FI_ENOMEM;
	cq->format = attr->format == FI_CQ_FORMAT_UNSPEC ? FI_CQ_FORMAT_CONTEXT :
		     attr->format;
	cq->cap = attr->size ? attr->size : 1024;
	cq->ring = calloc(cq->cap, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return -FI_ENOMEM;
	}
	cq->errs_tail = &cq->errs;
	cq->dom = dom;
	cq->cq.fid.fclass = FI_CLASS_CQ;
	cq->cq.fid.context = context;
	cq->cq.fid.ops = &cq_fi_ops;
	cq->cq.ops = &cq_ops;
	mfi_lock(dom->fab);
	dom->refs++;
	mfi_unlock(dom->fab);
	*out = &cq->cq;
	return 0;
}

/* ---- progress ------------------------------------------------------------ */

static void handle_async_events(struct mfi_fabric *fab)
{
	struct mrc_async_event ev;

	while (mrc_get_async_event(fab->ctx, &ev) == 0) {
		struct mfi_ep *ep = mfi_ep_by_qpn(fab, ev.qp_num);

		if (ep && ev.type == MRC_EVENT_QP_FATAL)
			mfi_ep_fail(ep, mfi_wc_to_fi_err(ev.status), ev.status);
	}
}

void mfi_progress(struct mfi_domain *dom)
{
	struct mfi_fabric *fab = dom->fab;
	struct mrc_wc wc[32];
	uint64_t now;
	int n;

	n = mrc_poll_cq(dom->mcq, 32, wc);
	for (int i = 0; i < n; i++) {
		struct mfi_ep *ep = mfi_ep_by_qpn(fab, wc[i].qp_num);

		if (ep)
			mfi_ep_handle_wc(ep, &wc[i]);
	}
	handle_async_events(fab);
	for (struct mfi_ep *ep = fab->eps; ep; ep = ep->next)
		if (ep->dom == dom)
			mfi_ep_progress(ep);
	/* A peer that died sends nothing more: its side channel says so. */
	now = mfi_now_ns();
	if (now >= dom->next_sock_check_ns) {
		dom->next_sock_check_ns = now + MFI_SOCK_CHECK_NS;
		for (struct mfi_ep *ep = fab->eps; ep; ep = ep->next)
			if (ep->dom == dom)
				mfi_check_peer_alive(ep);
	}
}

/* ---- domain -------------------------------------------------------------- */

static int domain_close(struct fid *fid)
{
	struct mfi_domain *dom = (struct mfi_domain *)fid;
	struct mfi_fabric *fab = dom->fab;

	mfi_lock(fab);
	if (dom->refs) {
		mfi_unlock(fab);
		return -FI_EBUSY;
	}
	mrc_destroy_cq(dom->mcq);
	fab->refs--;
	mfi_unlock(fab);
	free(dom);
	return 0;
}

static struct fi_ops domain_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = domain_close,
	.bind = mr_bind,
	.ops_open = mfi_no_ops_open,
	.control = mfi_no_control,
};

static int no_av_open(struct fid_domain *d, struct fi_av_attr *a,
		      struct fid_av **av, void *c)
{
	(void)d; (void)a; (void)av; (void)c;
	return -FI_ENOSYS;
}

static int no_scalable_ep(struct fid_domain *d, struct fi_info *i,
			  struct fid_ep **ep, void *c)
{
	(void)d; (void)i; (void)ep; (void)c;
	return -FI_ENOSYS;
}

static int no_cntr_open(struct fid_domain *d, struct fi_cntr_attr *a,
			struct fid_cntr **cntr, void *c)
{
	(void)d; (void)a; (void)cntr; (void)c;
	return -FI_ENOSYS;
}

static int no_poll_open(struct fid_domain *d, struct fi_poll_attr *a,
			struct fid_poll **p)
{
	(void)d; (void)a; (void)p;
	return -FI_ENOSYS;
}

static int no_stx_ctx(struct fid_domain *d, struct fi_tx_attr *a,
		      struct fid_stx **stx, void *c)
{
	(void)d; (void)a; (void)stx; (void)c;
	return -FI_ENOSYS;
}

static int no_srx_ctx(struct fid_domain *d, struct fi_rx_attr *a,
		      struct fid_ep **rx, void *c)
{
	(void)d; (void)a; (void)rx; (void)c;
	return -FI_ENOSYS;
}

static int no_query_atomic(struct fid_domain *d, enum fi_datatype t,
			   enum fi_op op, struct fi_atomic_attr *a, uint64_t f)
{
	(void)d; (void)t; (void)op; (void)a; (void)f;
	return -FI_ENOSYS;
}

static int no_query_collective(struct fid_domain *d, enum fi_collective_op op,
			       struct fi_collective_attr *a, uint64_t f)
{
	(void)d; (void)op; (void)a; (void)f;
	return -FI_ENOSYS;
}

static int endpoint2(struct fid_domain *d, struct fi_info *info,
		     struct fid_ep **ep, uint64_t flags, void *context)
{
	if (flags)
		return -FI_EINVAL;
	return mfi_endpoint(d, info, ep, context);
}

static struct fi_ops_domain domain_ops = {
	.size = sizeof(struct fi_ops_domain),
	.av_open = no_av_open,
	.cq_open = cq_open,
	.endpoint = mfi_endpoint,
	.scalable_ep = no_scalable_ep,
	.cntr_open = no_cntr_open,
	.poll_open = no_poll_open,
	.stx_ctx = no_stx_ctx,
	.srx_ctx = no_srx_ctx,
	.query_atomic = no_query_atomic,
	.query_collective = no_query_collective,
	.endpoint2 = endpoint2,
};

int mfi_domain_open(struct fid_fabric *fabric, struct fi_info *info,
		    struct fid_domain **out, void *context)
{
	struct mfi_fabric *fab = (struct mfi_fabric *)fabric;
	struct mfi_domain *dom;
	int ret;

	if (info && info->domain_attr && info->domain_attr->name &&
	    strcmp(info->domain_attr->name, MFI_PROV_NAME))
		return -FI_EINVAL;
	dom = calloc(1, sizeof(*dom));
	if (!dom)
		return -FI_ENOMEM;
	mfi_lock(fab);
	ret = mfi_fabric_ctx(fab);
	if (!ret) {
		dom->mcq = mrc_create_cq(fab->ctx, 4096);
		if (!dom->mcq)
			ret = -errno;
	}
	if (ret) {
		mfi_unlock(fab);
		free(dom);
		return mfi_errno_to_fi(ret);
	}
	fab->refs++;
	mfi_unlock(fab);
	dom->fab = fab;
	dom->domain.fid.fclass = FI_CLASS_DOMAIN;
	dom->domain.fid.context = context;
	dom->domain.fid.ops = &domain_fi_ops;
	dom->domain.ops = &domain_ops;
	dom->domain.mr = &mr_ops;
	*out = &dom->domain;
	return 0;
}
