// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Active endpoints (FI_EP_MSG): one MRC QP each, a receive ring the peer
 * writes message fragments into, and bounce buffers our fragments are
 * sent from. fi_enable creates the QP (RESET->INIT) and the ring, and
 * posts libmrc receives for the peer's WRITE-IMMs; connecting brings the
 * QP to RTS (mfi_ep_qp_up); a QP that fails flushes everything with
 * errors and tells the EQ (mfi_ep_fail).
 */
#include "mrcfi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

/* WRITE-IMMs either way beyond the ring's: credit updates and slack. */
#define WIMM_SLACK	8

struct mfi_ep *mfi_ep_by_qpn(struct mfi_fabric *fab, uint32_t qpn)
{
	for (struct mfi_ep *ep = fab->eps; ep; ep = ep->next)
		if (ep->qp && ep->qpn == qpn)
			return ep;
	return NULL;
}

/* ---- the QP --------------------------------------------------------------- */

static void *alloc_pages(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static uint32_t random_psn(void)
{
	uint32_t psn;

	/* A fresh start PSN: a stale packet of an earlier QP misses the window. */
	if (getrandom(&psn, sizeof(psn), GRND_NONBLOCK) != (ssize_t)sizeof(psn))
		psn = (uint32_t)mfi_now_ns() ^ (uint32_t)getpid();
	return psn & 0xffffff;
}

static int post_ring_receives(struct mfi_ep *ep)
{
	struct mrc_recv_wr wr = { .wr_id = 0 };

	for (uint32_t i = 0; i < ep->nslots + WIMM_SLACK; i++) {
		int ret = mrc_post_recv(ep->qp, &wr);

		if (ret)
			return ret;
	}
	return 0;
}

static int create_qp(struct mfi_ep *ep)
{
	struct mfi_fabric *fab = ep->dom->fab;
	size_t ring_len = (size_t)ep->nslots * ep->slot_size;
	struct mrc_qp_init_attr ia = {
		.send_cq = ep->dom->mcq,
		.recv_cq = ep->dom->mcq,
		.max_send_wr = 512,
		.max_recv_wr = ep->nslots + WIMM_SLACK,
		.max_sge = 1,
	};
	struct mrc_qp_attr attr = { .qp_state = MRC_QP_INIT };

	ep->ring = alloc_pages(ring_len);
	ep->bounce = alloc_pages(ring_len);
	if (!ep->ring || !ep->bounce)
		return -FI_ENOMEM;
	ep->ring_mr = mrc_reg_mr(fab->ctx, ep->ring, ring_len,
				 MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE);
	ep->bounce_mr = mrc_reg_mr(fab->ctx, ep->bounce, ring_len,
				   MRC_ACCESS_LOCAL_WRITE);
	if (!ep->ring_mr || !ep->bounce_mr)
		return -errno;
	ep->qp = mrc_create_qp(fab->ctx, &ia);
	if (!ep->qp)
		return -errno;
	ep->qpn = mrc_qp_num(ep->qp);
	ep->psn = random_psn();
	if (mrc_modify_qp(ep->qp, &attr, MRC_QP_ATTR_STATE))
		return -errno;
	return post_ring_receives(ep);
}

/* RTR with the peer's QP and addresses, then RTS: after the CM exchange. */
int mfi_ep_qp_up(struct mfi_ep *ep)
{
	const struct mfi_cm_msg *p = &ep->peer;
	struct mrc_qp_attr attr;
	int ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = MRC_QP_RTR;
	attr.path_mtu = ep->path_mtu < p->path_mtu ? ep->path_mtu : p->path_mtu;
	attr.rq_psn = p->psn;
	attr.dest_qpn = p->qpn;
	attr.dest_key = p->key;
	attr.max_wimm_out = (uint16_t)(p->nslots + WIMM_SLACK);
	attr.max_wimm_in = (uint16_t)(ep->nslots + WIMM_SLACK);
	attr.n_peer_addrs = p->n_addrs;
	memcpy(attr.peer_addrs, p->addrs, (size_t)p->n_addrs * sizeof(attr.peer_addrs[0]));
	ret = mrc_modify_qp(ep->qp, &attr, MRC_QP_ATTR_STATE | MRC_QP_ATTR_PATH_MTU |
			    MRC_QP_ATTR_RQ_PSN | MRC_QP_ATTR_DEST_QPN |
			    MRC_QP_ATTR_DEST_KEY | MRC_QP_ATTR_PEER_ADDRS |
			    MRC_QP_ATTR_WIMM);
	if (ret)
		return ret;
	memset(&attr, 0, sizeof(attr));
	attr.qp_state = MRC_QP_RTS;
	attr.sq_psn = ep->psn;
	ret = mrc_modify_qp(ep->qp, &attr, MRC_QP_ATTR_STATE | MRC_QP_ATTR_SQ_PSN);
	if (ret)
		return ret;
	return mfi_credits_init(&ep->cr, ep->nslots);
}

/*
 * The QP failed (retries exhausted, the peer refused an access, the peer
 * died): every queued operation and posted receive completes with an
 * error, and the EQ hears FI_SHUTDOWN.
 */
void mfi_ep_fail(struct mfi_ep *ep, int fi_err, int prov_errno)
{
	struct mrc_qp_attr attr = { .qp_state = MRC_QP_ERROR };
	enum mfi_ep_state was = ep->state;

	if (was == MFI_EP_ERROR)
		return;
	FI_WARN(&mfi_prov, FI_LOG_EP_DATA, "qp %u failed: %s\n", ep->qpn,
		fi_strerror(fi_err));
	ep->state = MFI_EP_ERROR;
	ep->bye_pending = false;
	if (ep->qp)
		mrc_modify_qp(ep->qp, &attr, MRC_QP_ATTR_STATE);
	mfi_ep_flush(ep, fi_err, prov_errno);
	if (ep->fd >= 0) {
		close(ep->fd);
		ep->fd = -1;
	}
	if (was == MFI_EP_CONNECTED || was == MFI_EP_ACCEPTING ||
	    was == MFI_EP_SHUTDOWN)
		mfi_eq_push(ep->eq, FI_SHUTDOWN, &ep->ep.fid, NULL, NULL, 0);
}

/* ---- fid ops ----------------------------------------------------------------- */

static void ep_unlink(struct mfi_ep *ep)
{
	struct mfi_ep **pp;

	for (pp = &ep->dom->fab->eps; *pp; pp = &(*pp)->next)
		if (*pp == ep) {
			*pp = ep->next;
			break;
		}
}

/*
 * What the transport did for this endpoint, at FI_LOG_LEVEL=info: how a
 * run with losses (a failed path, a blackholed spine) recovered.
 */
static void log_qp_counters(const struct mfi_ep *ep)
{
	struct mrc_qp_counters c;

	if (!ep->qp || mrc_qp_counters(ep->qp, &c))
		return;
	FI_INFO(&mfi_prov, FI_LOG_EP_DATA, "qp %u: %llu packets sent, %llu resent "
		"(%llu fast, %llu tail probes, %llu timeouts, %llu EVs demoted by "
		"timeouts), %llu received, %llu duplicates\n", ep->qpn,
		(unsigned long long)c.tx_packets, (unsigned long long)c.tx_retransmits,
		(unsigned long long)c.fast_retransmits, (unsigned long long)c.tail_probes,
		(unsigned long long)c.timeouts,
		(unsigned long long)c.ev_timeouts, (unsigned long long)c.rx_packets,
		(unsigned long long)c.rx_duplicates);
}

static int ep_close(struct fid *fid)
{
	struct mfi_ep *ep = (struct mfi_ep *)fid;
	struct mfi_fabric *fab = ep->dom->fab;
	size_t ring_len = (size_t)ep->nslots * ep->slot_size;

	mfi_ep_shutdown(&ep->ep, 0);
	mfi_lock(fab);
	/* Nothing reports to the CQs any more; drop what is left silently. */
	if (ep->txcq)
		ep->txcq->refs--;
	if (ep->rxcq)
		ep->rxcq->refs--;
	ep->txcq = ep->rxcq = NULL;
	mfi_ep_flush(ep, FI_ECANCELED, 0);
	ep_unlink(ep);
	log_qp_counters(ep);
	if (ep->qp)
		mrc_destroy_qp(ep->qp);
	if (ep->ring_mr)
		mrc_dereg_mr(ep->ring_mr);
	if (ep->bounce_mr)
		mrc_dereg_mr(ep->bounce_mr);
	if (ep->eq)
		ep->eq->refs--;
	ep->dom->refs--;
	mfi_unlock(fab);
	if (ep->fd >= 0)
		close(ep->fd);
	if (ep->connreq) {
		if (ep->connreq->fd >= 0)
			close(ep->connreq->fd);
		free(ep->connreq);
	}
	if (ep->ring)
		munmap(ep->ring, ring_len);
	if (ep->bounce)
		munmap(ep->bounce, ring_len);
	fi_freeinfo(ep->info);
	free(ep);
	return 0;
}

static int bind_cq(struct mfi_ep *ep, struct mfi_cq *cq, uint64_t flags)
{
	if (flags & ~(FI_TRANSMIT | FI_RECV | FI_SELECTIVE_COMPLETION))
		return -FI_EBADFLAGS;
	if (flags & FI_TRANSMIT) {
		if (ep->txcq)
			ep->txcq->refs--;
		ep->txcq = cq;
		cq->refs++;
		ep->tx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	if (flags & FI_RECV) {
		if (ep->rxcq)
			ep->rxcq->refs--;
		ep->rxcq = cq;
		cq->refs++;
		ep->rx_selective = flags & FI_SELECTIVE_COMPLETION;
	}
	return 0;
}

static int ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct mfi_ep *ep = (struct mfi_ep *)fid;
	int ret = 0;

	if (!bfid)
		return -FI_EINVAL;
	mfi_lock(ep->dom->fab);
	switch (bfid->fclass) {
	case FI_CLASS_EQ:
		if (ep->eq)
			ep->eq->refs--;
		ep->eq = (struct mfi_eq *)bfid;
		ep->eq->refs++;
		break;
	case FI_CLASS_CQ:
		ret = bind_cq(ep, (struct mfi_cq *)bfid, flags);
		break;
	default:
		ret = -FI_ENOSYS;	/* counters, AVs: not for MSG endpoints here */
	}
	mfi_unlock(ep->dom->fab);
	return ret;
}

static int ep_enable(struct mfi_ep *ep)
{
	int ret;

	if (ep->enabled)
		return 0;
	if (!ep->txcq || !ep->rxcq)
		return -FI_ENOCQ;
	ret = create_qp(ep);
	if (ret)
		return mfi_errno_to_fi(ret);
	ep->enabled = true;
	return 0;
}

static int ep_control(struct fid *fid, int command, void *arg)
{
	struct mfi_ep *ep = (struct mfi_ep *)fid;
	int ret;

	(void)arg;
	if (command != FI_ENABLE)
		return -FI_ENOSYS;
	mfi_lock(ep->dom->fab);
	ret = ep_enable(ep);
	mfi_unlock(ep->dom->fab);
	return ret;
}

static struct fi_ops ep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = ep_close,
	.bind = ep_bind,
	.control = ep_control,
	.ops_open = mfi_no_ops_open,
};

/* ---- endpoint ops (options, sizes) --------------------------------------- */

static ssize_t ep_cancel(fid_t fid, void *context)
{
	(void)fid; (void)context;
	return -FI_ENOENT;	/* nothing is cancelled: operations run to the end */
}

static int ep_getopt(fid_t fid, int level, int optname, void *optval,
		     size_t *optlen)
{
	(void)fid;
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	if (optname == FI_OPT_CM_DATA_SIZE) {
		if (*optlen < sizeof(size_t))
			return -FI_ETOOSMALL;
		*(size_t *)optval = MFI_CM_DATA_MAX;
		*optlen = sizeof(size_t);
		return 0;
	}
	return -FI_ENOPROTOOPT;
}

static int ep_setopt(fid_t fid, int level, int optname, const void *optval,
		     size_t optlen)
{
	(void)fid; (void)optval; (void)optlen;
	if (level != FI_OPT_ENDPOINT)
		return -FI_ENOPROTOOPT;
	/* Receives are matched whole: no minimum-multi-receive to set. */
	(void)optname;
	return -FI_ENOPROTOOPT;
}

static int no_ctx(struct fid_ep *sep, int index, void *attr,
		  struct fid_ep **ep, void *context)
{
	(void)sep; (void)index; (void)attr; (void)ep; (void)context;
	return -FI_ENOSYS;
}

static int no_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr,
		     struct fid_ep **ep, void *context)
{
	return no_ctx(sep, index, attr, ep, context);
}

static int no_rx_ctx(struct fid_ep *sep, int index, struct fi_rx_attr *attr,
		     struct fid_ep **ep, void *context)
{
	return no_ctx(sep, index, attr, ep, context);
}

static ssize_t rx_size_left(struct fid_ep *fid)
{
	struct mfi_ep *ep = (struct mfi_ep *)fid;

	return (ssize_t)(MFI_RX_SIZE - ep->recv_count);
}

static ssize_t tx_size_left(struct fid_ep *fid)
{
	struct mfi_ep *ep = (struct mfi_ep *)fid;

	return (ssize_t)(MFI_TX_SIZE - ep->ops_count);
}

static struct fi_ops_ep ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = ep_cancel,
	.getopt = ep_getopt,
	.setopt = ep_setopt,
	.tx_ctx = no_tx_ctx,
	.rx_ctx = no_rx_ctx,
	.rx_size_left = rx_size_left,
	.tx_size_left = tx_size_left,
};

/* ---- connection management ops ------------------------------------------- */

static int ep_setname(fid_t fid, void *addr, size_t addrlen)
{
	(void)fid; (void)addr; (void)addrlen;
	return -FI_ENOSYS;	/* the side channel's source port is the kernel's */
}

/* Our plane address (first) and the QP number in the port: for logs. */
static int ep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct mfi_ep *ep = (struct mfi_ep *)fid;
	struct sockaddr_storage planes[MFI_CM_MAX_ADDRS];
	struct sockaddr_in sin = { .sin_family = AF_INET };
	int n;

	if (*addrlen < sizeof(sin)) {
		*addrlen = sizeof(sin);
		return -FI_ETOOSMALL;
	}
	mfi_lock(ep->dom->fab);
	n = mfi_local_plane_addrs(ep->dom->fab, planes, MFI_CM_MAX_ADDRS);
	mfi_unlock(ep->dom->fab);
	if (n > 0)
		sin.sin_addr = ((struct sockaddr_in *)&planes[0])->sin_addr;
	memcpy(addr, &sin, sizeof(sin));
	*addrlen = sizeof(sin);
	return 0;
}

static int ep_getpeer(struct fid_ep *fid, void *addr, size_t *addrlen)
{
	struct mfi_ep *ep = (struct mfi_ep *)fid;

	if (*addrlen < sizeof(ep->peer_addr)) {
		*addrlen = sizeof(ep->peer_addr);
		return -FI_ETOOSMALL;
	}
	memcpy(addr, &ep->peer_addr, sizeof(ep->peer_addr));
	*addrlen = sizeof(ep->peer_addr);
	return 0;
}

static int ep_listen(struct fid_pep *pep)
{
	(void)pep;
	return -FI_ENOSYS;
}

static int ep_reject(struct fid_pep *pep, fid_t handle, const void *param,
		     size_t paramlen)
{
	(void)pep; (void)handle; (void)param; (void)paramlen;
	return -FI_ENOSYS;
}

static int ep_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		   struct fid_mc **mc, void *context)
{
	(void)ep; (void)addr; (void)flags; (void)mc; (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_cm ep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = ep_setname,
	.getname = ep_getname,
	.getpeer = ep_getpeer,
	.connect = mfi_ep_connect,
	.listen = ep_listen,
	.accept = mfi_ep_accept,
	.reject = ep_reject,
	.shutdown = mfi_ep_shutdown,
	.join = ep_join,
};

/* ---- creation ----------------------------------------------------------------- */

int mfi_endpoint(struct fid_domain *domain, struct fi_info *info,
		 struct fid_ep **out, void *context)
{
	struct mfi_domain *dom = (struct mfi_domain *)domain;
	struct mfi_ep *ep;

	if (!info || (info->ep_attr && info->ep_attr->type != FI_EP_MSG))
		return -FI_EINVAL;
	if (info->handle && info->handle->fclass != FI_CLASS_CONNREQ)
		return -FI_EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -FI_ENOMEM;
	ep->info = fi_dupinfo(info);
	if (!ep->info) {
		free(ep);
		return -FI_ENOMEM;
	}
	ep->dom = dom;
	ep->fd = -1;
	mfi_ring_shape(&ep->nslots, &ep->slot_size);
	ep->recv_tail = &ep->recv_head;
	ep->connreq = (struct mfi_connreq *)info->handle;
	ep->ep.fid.fclass = FI_CLASS_EP;
	ep->ep.fid.context = context;
	ep->ep.fid.ops = &ep_fi_ops;
	ep->ep.ops = &ep_ops;
	ep->ep.cm = &ep_cm_ops;
	ep->ep.msg = &mfi_msg_ops;
	ep->ep.rma = &mfi_rma_ops;
	mfi_lock(dom->fab);
	ep->next = dom->fab->eps;
	dom->fab->eps = ep;
	dom->refs++;
	mfi_unlock(dom->fab);
	*out = &ep->ep;
	return 0;
}
