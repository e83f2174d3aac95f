// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The connection manager over a TCP side channel (docs/LIBFABRIC.md,
 * "Connection manager"):
 *
 *   client                                   server (passive endpoint)
 *   fi_connect: TCP connect, REQ  ------->   FI_CONNREQ (info->handle)
 *                                            fi_accept: QP to RTS, ACCEPT
 *   FI_CONNECTED, QP to RTS, RTU  <-------
 *                                 ------->   FI_CONNECTED
 *   fi_shutdown / close: BYE      <------>   FI_SHUTDOWN at the peer
 *
 * REQ and ACCEPT carry the QP (number, first PSN, key, MTU, plane
 * addresses), the receive ring (address, key, slots) and up to 256 bytes
 * of CM data (proto.h). The socket stays open while connected: an end
 * of file without a BYE means the peer died, and its QP is failed
 * at once (CQ errors, FI_SHUTDOWN) instead of waiting for retries that
 * may never come (a receiver waiting for a message sends nothing).
 */
#define _GNU_SOURCE	/* accept4 */
#include "mrcfi.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define CM_IO_TIMEOUT_S		5

/* ---- socket helpers ------------------------------------------------------ */

static void set_cm_socket_options(int fd)
{
	struct timeval tv = { .tv_sec = CM_IO_TIMEOUT_S };
	int one = 1;

	/* Bounded blocking reads of the few CM messages: a silent peer fails. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int read_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int mfi_send_cm(int fd, struct mfi_cm_msg *m)
{
	uint8_t buf[MFI_CM_WIRE_LEN];
	size_t off = 0;
	int ret = mfi_cm_encode(m, buf);

	if (ret)
		return ret;
	while (off < sizeof(buf)) {
		ssize_t n = send(fd, buf + off, sizeof(buf) - off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		off += (size_t)n;
	}
	return 0;
}

static int recv_cm(int fd, struct mfi_cm_msg *m)
{
	uint8_t buf[MFI_CM_WIRE_LEN];
	int ret = read_all(fd, buf, sizeof(buf));

	return ret ? ret : mfi_cm_decode(buf, m);
}

/* Is a byte (or an end of file) waiting on fd? */
static bool readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0;
}

/* ---- local addresses and MTU --------------------------------------------- */

int mfi_local_plane_addrs(struct mfi_fabric *fab, struct sockaddr_storage *out,
			  int max)
{
	int ret = mfi_fabric_ctx(fab);

	if (ret)
		return ret;
	return mrc_local_addrs(fab->ctx, AF_INET, out, max);
}

static int iface_mtu(const char *name)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int mtu = -1;

	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (!ioctl(fd, SIOCGIFMTU, &ifr))
		mtu = ifr.ifr_mtu;
	close(fd);
	return mtu;
}

/*
 * MRC payload bytes per packet: the smallest interface MTU of our plane
 * addresses, less IPv4, UDP and the largest MRC header, in 64-byte steps.
 */
#define MRC_HDR_ROOM	(20 + 8 + 40)

static uint32_t plane_path_mtu(const struct sockaddr_storage *addrs, int n)
{
	struct ifaddrs *list, *ifa;
	uint32_t best = 0;

	if (getifaddrs(&list))
		return 1024;
	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != AF_INET)
			continue;
		for (int i = 0; i < n; i++) {
			const struct sockaddr_in *a = (const void *)&addrs[i];
			const struct sockaddr_in *b = (const void *)ifa->ifa_addr;
			long v;

			if (a->sin_addr.s_addr != b->sin_addr.s_addr)
				continue;
			v = iface_mtu(ifa->ifa_name) - MRC_HDR_ROOM;
			v = v > 9000 ? 9000 : v < 256 ? 256 : v;
			v &= ~63L;
			if (!best || (uint32_t)v < best)
				best = (uint32_t)v;
		}
	}
	freeifaddrs(list);
	return best ? best : 1024;
}

/* Our half of REQ or ACCEPT: the QP, the ring, the plane addresses. */
static int fill_cm(struct mfi_ep *ep, struct mfi_cm_msg *m, enum mfi_cm_type type,
		   const void *param, size_t paramlen)
{
	int n;

	memset(m, 0, sizeof(*m));
	if (paramlen > MFI_CM_DATA_MAX || (paramlen && !param))
		return -FI_EINVAL;
	n = mfi_local_plane_addrs(ep->dom->fab, m->addrs, MFI_CM_MAX_ADDRS);
	if (n <= 0)
		return n < 0 ? n : -FI_EADDRNOTAVAIL;
	m->type = type;
	m->n_addrs = (uint8_t)n;
	m->qpn = ep->qpn;
	m->psn = ep->psn;
	m->key = mrc_qp_key(ep->qp);
	ep->path_mtu = plane_path_mtu(m->addrs, n);
	m->path_mtu = ep->path_mtu;
	m->ring_addr = (uint64_t)(uintptr_t)ep->ring;
	m->ring_rkey = mrc_mr_rkey(ep->ring_mr);
	m->slot_size = ep->slot_size;
	m->nslots = ep->nslots;
	m->cm_len = (uint16_t)paramlen;
	if (paramlen)
		memcpy(m->cm_data, param, paramlen);
	return 0;
}

/* The peer's ring must be the shape of ours: one credit count serves both. */
static bool peer_ring_fits(const struct mfi_ep *ep, const struct mfi_cm_msg *p)
{
	return p->nslots == ep->nslots && p->slot_size == ep->slot_size;
}

/* ---- passive endpoint ---------------------------------------------------- */

static int pep_close(struct fid *fid)
{
	struct mfi_pep *pep = (struct mfi_pep *)fid;
	struct mfi_fabric *fab = pep->fab;
	struct mfi_pep **pp;

	mfi_lock(fab);
	for (pp = &fab->peps; *pp; pp = &(*pp)->next)
		if (*pp == pep) {
			*pp = pep->next;
			break;
		}
	if (pep->eq)
		pep->eq->refs--;
	fab->refs--;
	mfi_unlock(fab);
	if (pep->fd >= 0)
		close(pep->fd);
	fi_freeinfo(pep->info);
	free(pep);
	return 0;
}

static int pep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
	struct mfi_pep *pep = (struct mfi_pep *)fid;

	(void)flags;
	if (!bfid || bfid->fclass != FI_CLASS_EQ)
		return -FI_EINVAL;
	mfi_lock(pep->fab);
	if (pep->eq)
		pep->eq->refs--;
	pep->eq = (struct mfi_eq *)bfid;
	pep->eq->refs++;
	mfi_unlock(pep->fab);
	return 0;
}

static int no_control(struct fid *fid, int command, void *arg)
{
	(void)fid; (void)command; (void)arg;
	return -FI_ENOSYS;
}

static struct fi_ops pep_fi_ops = {
	.size = sizeof(struct fi_ops),
	.close = pep_close,
	.bind = pep_bind,
	.control = no_control,
	.ops_open = mfi_no_ops_open,
};

static int pep_setname(fid_t fid, void *addr, size_t addrlen)
{
	struct mfi_pep *pep = (struct mfi_pep *)fid;

	if (addrlen < sizeof(struct sockaddr_in) ||
	    ((struct sockaddr *)addr)->sa_family != AF_INET)
		return -FI_EINVAL;
	if (pep->fd >= 0)
		return -FI_EOPBADSTATE;
	memcpy(&pep->addr, addr, sizeof(pep->addr));
	return 0;
}

/*
 * The address peers connect to. Listening on the wildcard address, name
 * the first MRC plane address instead: what the name is for is being
 * handed to a peer, and 0.0.0.0 would send it to itself.
 */
static int pep_getname(fid_t fid, void *addr, size_t *addrlen)
{
	struct mfi_pep *pep = (struct mfi_pep *)fid;
	struct sockaddr_in sin = pep->addr;
	size_t want = sizeof(sin);

	if (sin.sin_addr.s_addr == htonl(INADDR_ANY)) {
		struct sockaddr_storage planes[MFI_CM_MAX_ADDRS];
		int n;

		mfi_lock(pep->fab);
		n = mfi_local_plane_addrs(pep->fab, planes, MFI_CM_MAX_ADDRS);
		mfi_unlock(pep->fab);
		if (n > 0)
			sin.sin_addr = ((struct sockaddr_in *)&planes[0])->sin_addr;
	}
	if (*addrlen < want) {
		*addrlen = want;
		return -FI_ETOOSMALL;
	}
	memcpy(addr, &sin, want);
	*addrlen = want;
	return 0;
}

static int pep_listen(struct fid_pep *fid)
{
	struct mfi_pep *pep = (struct mfi_pep *)fid;
	socklen_t len = sizeof(pep->addr);
	int one = 1, fd;

	if (pep->fd >= 0)
		return 0;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	pep->addr.sin_family = AF_INET;
	if (bind(fd, (struct sockaddr *)&pep->addr, sizeof(pep->addr)) ||
	    listen(fd, 128) || getsockname(fd, (struct sockaddr *)&pep->addr, &len)) {
		int err = -errno;

		close(fd);
		return err;
	}
	pep->fd = fd;
	return 0;
}

static void connreq_free(struct mfi_connreq *cr)
{
	if (cr->fd >= 0)
		close(cr->fd);
	free(cr);
}

static int pep_reject(struct fid_pep *fid, fid_t handle, const void *param,
		      size_t paramlen)
{
	struct mfi_connreq *cr = (struct mfi_connreq *)handle;
	struct mfi_cm_msg m = { .type = MFI_CM_REJECT };
	int ret;

	(void)fid;
	if (!cr || cr->fid.fclass != FI_CLASS_CONNREQ || paramlen > MFI_CM_DATA_MAX)
		return -FI_EINVAL;
	m.cm_len = (uint16_t)paramlen;
	if (paramlen)
		memcpy(m.cm_data, param, paramlen);
	ret = mfi_send_cm(cr->fd, &m);
	connreq_free(cr);
	return ret;
}

static int pep_getopt(fid_t fid, int level, int optname, void *optval,
		      size_t *optlen)
{
	(void)fid;
	if (level != FI_OPT_ENDPOINT || optname != FI_OPT_CM_DATA_SIZE)
		return -FI_ENOPROTOOPT;
	if (*optlen < sizeof(size_t))
		return -FI_ETOOSMALL;
	*(size_t *)optval = MFI_CM_DATA_MAX;
	*optlen = sizeof(size_t);
	return 0;
}

static int no_connect(struct fid_ep *ep, const void *addr, const void *param,
		      size_t len)
{
	(void)ep; (void)addr; (void)param; (void)len;
	return -FI_ENOSYS;
}

static int no_accept(struct fid_ep *ep, const void *param, size_t len)
{
	(void)ep; (void)param; (void)len;
	return -FI_ENOSYS;
}

static int no_shutdown(struct fid_ep *ep, uint64_t flags)
{
	(void)ep; (void)flags;
	return -FI_ENOSYS;
}

static int no_getpeer(struct fid_ep *ep, void *addr, size_t *len)
{
	(void)ep; (void)addr; (void)len;
	return -FI_ENOSYS;
}

static int no_join(struct fid_ep *ep, const void *addr, uint64_t flags,
		   struct fid_mc **mc, void *context)
{
	(void)ep; (void)addr; (void)flags; (void)mc; (void)context;
	return -FI_ENOSYS;
}

static struct fi_ops_cm pep_cm_ops = {
	.size = sizeof(struct fi_ops_cm),
	.setname = pep_setname,
	.getname = pep_getname,
	.getpeer = no_getpeer,
	.connect = no_connect,
	.listen = pep_listen,
	.accept = no_accept,
	.reject = pep_reject,
	.shutdown = no_shutdown,
	.join = no_join,
};

static ssize_t no_cancel(fid_t fid, void *context)
{
	(void)fid; (void)context;
	return -FI_ENOSYS;
}

static int no_setopt(fid_t fid, int level, int optname, const void *optval,
		     size_t optlen)
{
	(void)fid; (void)level; (void)optname; (void)optval; (void)optlen;
	return -FI_ENOPROTOOPT;
}

static struct fi_ops_ep pep_ep_ops = {
	.size = sizeof(struct fi_ops_ep),
	.cancel = no_cancel,
	.getopt = pep_getopt,
	.setopt = no_setopt,
};

int mfi_passive_ep(struct fid_fabric *fabric, struct fi_info *info,
		   struct fid_pep **out, void *context)
{
	struct mfi_fabric *fab = (struct mfi_fabric *)fabric;
	struct mfi_pep *pep;

	if (!info || (info->ep_attr && info->ep_attr->type != FI_EP_MSG &&
		      info->ep_attr->type != FI_EP_UNSPEC))
		return -FI_EINVAL;
	pep = calloc(1, sizeof(*pep));
	if (!pep)
		return -FI_ENOMEM;
	pep->info = fi_dupinfo(info);
	if (!pep->info) {
		free(pep);
		return -FI_ENOMEM;
	}
	pep->fd = -1;
	pep->addr.sin_family = AF_INET;
	if (info->src_addr && info->src_addrlen >= sizeof(pep->addr))
		memcpy(&pep->addr, info->src_addr, sizeof(pep->addr));
	pep->fab = fab;
	pep->pep.fid.fclass = FI_CLASS_PEP;
	pep->pep.fid.context = context;
	pep->pep.fid.ops = &pep_fi_ops;
	pep->pep.ops = &pep_ep_ops;
	pep->pep.cm = &pep_cm_ops;
	mfi_lock(fab);
	pep->next = fab->peps;
	fab->peps = pep;
	fab->refs++;
	mfi_unlock(fab);
	*out = &pep->pep;
	return 0;
}

/* ---- the server: a connection request arrives ---------------------------- */

static struct fi_info *connreq_info(struct mfi_pep *pep, struct mfi_connreq *cr)
{
	struct fi_info *info = fi_dupinfo(pep->info);

	if (!info)
		return NULL;
	free(info->dest_addr);
	info->dest_addr = malloc(sizeof(cr->peer_addr));
	if (info->dest_addr)
		memcpy(info->dest_addr, &cr->peer_addr, sizeof(cr->peer_addr));
	info->dest_addrlen = info->dest_addr ? sizeof(cr->peer_addr) : 0;
	info->handle = &cr->fid;
	return info;
}

static void accept_one(struct mfi_pep *pep, int fd, const struct sockaddr_in *from)
{
	struct mfi_connreq *cr = calloc(1, sizeof(*cr));
	struct fi_info *info;

	if (!cr) {
		close(fd);
		return;
	}
	cr->fd = fd;
	cr->fid.fclass = FI_CLASS_CONNREQ;
	cr->peer_addr = *from;
	set_cm_socket_options(fd);
	/* A peer that sends no sane REQ is dropped here, never reported. */
	if (recv_cm(fd, &cr->peer) || cr->peer.type != MFI_CM_REQ) {
		FI_WARN(&mfi_prov, FI_LOG_EP_CTRL, "dropped a bad connection request\n");
		connreq_free(cr);
		return;
	}
	info = connreq_info(pep, cr);
	if (!info || mfi_eq_push(pep->eq, FI_CONNREQ, &pep->pep.fid, info,
				 cr->peer.cm_data, cr->peer.cm_len)) {
		fi_freeinfo(info);
		connreq_free(cr);
	}
}

static void pep_progress(struct mfi_pep *pep)
{
	for (int i = 0; i < 16; i++) {
		struct sockaddr_in from;
		socklen_t len = sizeof(from);
		int fd = accept4(pep->fd, (struct sockaddr *)&from, &len, SOCK_CLOEXEC);

		if (fd < 0)
			return;
		accept_one(pep, fd, &from);
	}
}

/* ---- the client: fi_connect and the answer ------------------------------- */

static int tcp_connect(const struct sockaddr_in *to)
{
	struct pollfd p;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int err = 0;
	socklen_t len = sizeof(err);

	if (fd < 0)
		return -errno;
	if (connect(fd, (const struct sockaddr *)to, sizeof(*to)) && errno != EINPROGRESS)
		goto fail;
	p.fd = fd;
	p.events = POLLOUT;
	if (poll(&p, 1, MFI_CONNECT_TIMEOUT_MS) != 1) {
		errno = ETIMEDOUT;
		goto fail;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
		errno = err ? err : errno;
		goto fail;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	set_cm_socket_options(fd);
	return fd;
fail:
	err = -errno;
	close(fd);
	return err;
}

int mfi_ep_connect(struct fid_ep *fid, const void *addr, const void *param,
		   size_t paramlen)
{
	struct mfi_ep *ep = (struct mfi_ep *)fid;
	const struct sockaddr_in *to = addr ? addr : ep->info->dest_addr;
	struct mfi_cm_msg m;
	int ret, fd;

	if (!to || to->sin_family != AF_INET)
		return -FI_EINVAL;
	mfi_lock(ep->dom->fab);
	if (!ep->enabled || ep->state != MFI_EP_IDLE || !ep->eq) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	ret = fill_cm(ep, &m, MFI_CM_REQ, param, paramlen);
	if (ret)
		goto out;
	ep->peer_addr = *to;
	fd = tcp_connect(to);
	if (fd < 0) {
		/* As RDMA CM does: the refusal comes as an EQ error entry. */
		ret = mfi_eq_push_err(ep->eq, &ep->ep.fid, ep->ep.fid.context,
				      -fd, 0, NULL, 0);
		goto out;
	}
	ret = mfi_send_cm(fd, &m);
	if (ret) {
		close(fd);
		ret = mfi_eq_push_err(ep->eq, &ep->ep.fid, ep->ep.fid.context,
				      -ret, 0, NULL, 0);
		goto out;
	}
	ep->fd = fd;
	ep->state = MFI_EP_CONNECTING;
out:
	mfi_unlock(ep->dom->fab);
	return ret;
}

static void connect_failed(struct mfi_ep *ep, int err, const void *data, size_t len)
{
	close(ep->fd);
	ep->fd = -1;
	ep->state = MFI_EP_IDLE;
	mfi_eq_push_err(ep->eq, &ep->ep.fid, ep->ep.fid.context, err, 0, data, len);
}

static void client_progress(struct mfi_ep *ep)
{
	struct mfi_cm_msg m, rtu = { .type = MFI_CM_RTU };

	if (!readable(ep->fd))
		return;
	if (recv_cm(ep->fd, &m)) {
		connect_failed(ep, FI_ECONNREFUSED, NULL, 0);
		return;
	}
	if (m.type == MFI_CM_REJECT) {
		connect_failed(ep, FI_ECONNREFUSED, m.cm_data, m.cm_len);
		return;
	}
	if (m.type != MFI_CM_ACCEPT || !peer_ring_fits(ep, &m)) {
		connect_failed(ep, MFI_EPROTO, NULL, 0);
		return;
	}
	ep->peer = m;
	if (mfi_ep_qp_up(ep) || mfi_send_cm(ep->fd, &rtu)) {
		connect_failed(ep, FI_ECONNABORTED, NULL, 0);
		return;
	}
	ep->state = MFI_EP_CONNECTED;
	mrc_add_wait_fd(ep->dom->fab->ctx, ep->fd);
	mfi_eq_push(ep->eq, FI_CONNECTED, &ep->ep.fid, NULL, m.cm_data, m.cm_len);
}

/* ---- the server: fi_accept and the client's RTU --------------------------- */

int mfi_ep_accept(struct fid_ep *fid, const void *param, size_t paramlen)
{
	struct mfi_ep *ep = (struct mfi_ep *)fid;
	struct mfi_connreq *cr = ep->connreq;
	struct mfi_cm_msg m;
	int ret;

	mfi_lock(ep->dom->fab);
	if (!cr || !ep->enabled || ep->state != MFI_EP_IDLE || !ep->eq) {
		ret = -FI_EOPBADSTATE;
		goto out;
	}
	if (!peer_ring_fits(ep, &cr->peer)) {
		ret = -MFI_EPROTO;
		goto out;
	}
	ret = fill_cm(ep, &m, MFI_CM_ACCEPT, param, paramlen);
	if (ret)
		goto out;
	ep->peer = cr->peer;
	ep->peer_addr = cr->peer_addr;
	ret = mfi_ep_qp_up(ep);
	if (ret)
		goto out;
	ep->fd = cr->fd;
	cr->fd = -1;
	ep->connreq = NULL;
	connreq_free(cr);
	ret = mfi_send_cm(ep->fd, &m);
	if (!ret)
		ep->state = MFI_EP_ACCEPTING;
out:
	mfi_unlock(ep->dom->fab);
	return ret;
}

static void server_progress(struct mfi_ep *ep)
{
	struct mfi_cm_msg m;

	if (!readable(ep->fd))
		return;
	if (recv_cm(ep->fd, &m) || m.type != MFI_CM_RTU) {
		mfi_ep_fail(ep, FI_ECONNABORTED, 0);
		return;
	}
	ep->state = MFI_EP_CONNECTED;
	mrc_add_wait_fd(ep->dom->fab->ctx, ep->fd);
	mfi_eq_push(ep->eq, FI_CONNECTED, &ep->ep.fid, NULL, NULL, 0);
}

/* ---- shutdown, and peers that die ----------------------------------------- */

int mfi_ep_shutdown(struct fid_ep *fid, uint64_t flags)
{
	struct mfi_ep *ep = (struct mfi_ep *)fid;
	struct mfi_cm_msg bye = { .type = MFI_CM_BYE };

	(void)flags;
	mfi_lock(ep->dom->fab);
	bye.psn = ep->cr.tx_seq;
	if (ep->fd >= 0 && ep->state == MFI_EP_CONNECTED) {
		mfi_send_cm(ep->fd, &bye);
		ep->state = MFI_EP_SHUTDOWN;
		close(ep->fd);
		ep->fd = -1;
	}
	mfi_unlock(ep->dom->fab);
	return 0;
}

/*
 * A BYE overtakes the peer's last fragments (TCP versus MRC): report
 * FI_SHUTDOWN only once every fragment it wrote arrived and was
 * delivered, as a stream's end of file comes after its data (ofi_rxm
 * closes the endpoint on FI_SHUTDOWN), or after MFI_BYE_DRAIN_NS when
 * the application posts no receive for them.
 */
void mfi_bye_progress(struct mfi_ep *ep)
{
	bool drained = (int32_t)(ep->cr.rx_seq - ep->bye_frags) >= 0 &&
		       ep->rx_proc_seq == ep->cr.rx_seq;

	if (!ep->bye_pending || (!drained && mfi_now_ns() < ep->bye_deadline_ns))
		return;
	ep->bye_pending = false;
	mfi_eq_push(ep->eq, FI_SHUTDOWN, &ep->ep.fid, NULL, NULL, 0);
}

/*
 * While connected, the side channel carries nothing but a final BYE.
 * BYE: the peer ended the connection (FI_SHUTDOWN, what it sent before
 * stays deliverable). End of file or a reset without BYE: it died, and
 * its QP will never answer: fail ours now.
 */
void mfi_check_peer_alive(struct mfi_ep *ep)
{
	struct mfi_cm_msg m;

	mfi_bye_progress(ep);
	if (ep->state != MFI_EP_CONNECTED || ep->fd < 0 || !readable(ep->fd))
		return;
	if (!recv_cm(ep->fd, &m) && m.type == MFI_CM_BYE) {
		ep->state = MFI_EP_SHUTDOWN;
		close(ep->fd);
		ep->fd = -1;
		ep->bye_pending = true;
		ep->bye_frags = m.psn;
		ep->bye_deadline_ns = mfi_now_ns() + MFI_BYE_DRAIN_NS;
		mfi_bye_progress(ep);
		return;
	}
	/* Its requests are flushed, as by a QP gone to ERROR. */
	mfi_ep_fail(ep, FI_ECONNRESET, MRC_WC_WR_FLUSH_ERR);
}

void mfi_cm_progress(struct mfi_fabric *fab, struct mfi_eq *eq)
{
	for (struct mfi_pep *pep = fab->peps; pep; pep = pep->next)
		if (pep->eq == eq && pep->fd >= 0)
			pep_progress(pep);
	for (struct mfi_ep *ep = fab->eps; ep; ep = ep->next) {
		if (ep->eq == eq)
			mfi_bye_progress(ep);
		if (ep->eq != eq || ep->fd < 0)
			continue;
		if (ep->state == MFI_EP_CONNECTING)
			client_progress(ep);
		else if (ep->state == MFI_EP_ACCEPTING)
			server_progress(ep);
		else
			mfi_check_peer_alive(ep);
	}
}

int mfi_cm_poll_fds(struct mfi_fabric *fab, struct mfi_eq *eq,
		    struct pollfd *fds, int max)
{
	int n = 0;

	for (struct mfi_pep *pep = fab->peps; pep && n < max; pep = pep->next)
		if (pep->eq == eq && pep->fd >= 0)
			fds[n++] = (struct pollfd){ .fd = pep->fd, .events = POLLIN };
	for (struct mfi_ep *ep = fab->eps; ep && n < max; ep = ep->next)
		if (ep->eq == eq && ep->fd >= 0)
			fds[n++] = (struct pollfd){ .fd = ep->fd, .events = POLLIN };
	return n;
}
