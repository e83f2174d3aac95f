// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "base" (see LAYERS and host.h): the host's shared maps, written
 * directly or through mrcd's broker.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/broker.h"
#include "common/run_paths.h"
#include "host.h"

/* ---- choosing --------------------------------------------------------- */

bool mrc_host_wants_broker(void)
{
	const char *v = getenv("MRC_VIA_MRCD");

	if (v && *v)
		return strcmp(v, "0") != 0;
	return geteuid() != 0;
}

/* ---- the broker's end -------------------------------------------------- */

/* One request, one answer (with up to max_fds descriptors, kept in fds). */
static int call(struct mrc_context *ctx, struct mrc_broker_req *req,
		struct mrc_broker_rep *rep, int *fds, unsigned int max_fds)
{
	int tmp[MRC_BROKER_MAX_FDS];
	struct pollfd pfd = { .fd = ctx->broker_fd, .events = POLLIN };
	unsigned int got = 0;
	int err;

	req->magic = MRC_BROKER_MAGIC;
	req->version = MRC_BROKER_VERSION;
	err = mrc_broker_send(ctx->broker_fd, req, sizeof(*req), NULL, 0);
	if (!err && poll(&pfd, 1, MRC_BROKER_TIMEOUT_MS) != 1)
		err = -ETIMEDOUT;
	if (!err)
		err = mrc_broker_recv(ctx->broker_fd, rep, sizeof(*rep), tmp,
				      MRC_BROKER_MAX_FDS, &got);
	if (!err && (rep->magic != MRC_BROKER_MAGIC || rep->op != req->op))
		err = -EPROTO;
	if (err) {
		mrc_log(MRC_LOG_ERROR, "mrcd's broker: %s%s", strerror(-err),
			err == -ECONNRESET || err == -EPIPE ?
			" (mrcd stopped or restarted: open a new context)" : "");
	} else if (rep->status) {
		err = rep->status;
		rep->msg[sizeof(rep->msg) - 1] = 0;
		mrc_log(MRC_LOG_ERROR, "mrcd refused: %s", rep->msg);
	}
	if (!err && got < max_fds) {
		mrc_log(MRC_LOG_ERROR, "mrcd's broker sent %u descriptors, not %u",
			got, max_fds);
		err = -EPROTO;
	}
	for (unsigned int i = 0; i < got; i++) {
		if (!err && i < max_fds)
			fds[i] = tmp[i];
		else
			close(tmp[i]);
	}
	return err;
}

static int broker_socket(struct mrc_context *ctx, char *path, size_t len)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct agent_paths paths;
	char err[300];
	int fd;

	if (agent_paths_resolve(ctx->pin_dir, &paths, err, sizeof(err))) {
		mrc_log(MRC_LOG_ERROR, "%s", err);
		return -EINVAL;
	}
	if (mrc_broker_sock_path(paths.sock_path, path, len) ||
	    strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int mrc_host_connect(struct mrc_context *ctx)
{
	static const enum mrc_pin shared[] = {
		MRC_PIN_PLANES, MRC_PIN_EV_PROFILES, MRC_PIN_CC_PROFILES, MRC_PIN_CFG,
	};
	struct mrc_broker_req req = { .op = MRC_BROKER_HELLO,
				      .arg = { MRC_ABI_VERSION } };
	struct mrc_broker_rep rep;
	int fds[MRC_BROKER_FD__COUNT];
	char path[PATH_MAX];
	int err, fd = broker_socket(ctx, path, sizeof(path));

	if (fd < 0) {
		mrc_log(MRC_LOG_ERROR, "cannot reach mrcd's broker at %s: %s (is mrcd "
			"running for %s? a process without privileges opens its "
			"context through it)", path, strerror(-fd), ctx->pin_dir);
		return fd;
	}
	ctx->broker_fd = fd;
	err = call(ctx, &req, &rep, fds, MRC_BROKER_FD__COUNT);
	if (err)
		return err;
	ctx->ctx_slot = rep.val[0];
	ctx->pins.max_qps = rep.val[1];
	ctx->pins.max_ctx = rep.val[2];
	ctx->ring_fd = fds[MRC_BROKER_FD_RING];
	ctx->sock = fds[MRC_BROKER_FD_SOCKET];
	for (size_t i = 0; i < sizeof(shared) / sizeof(shared[0]); i++)
		ctx->pins.fd[shared[i]] = fds[MRC_BROKER_FD_PLANES + i];
	return 0;
}

void mrc_host_disconnect(struct mrc_context *ctx)
{
	if (ctx->broker_fd >= 0)
		close(ctx->broker_fd);
	ctx->broker_fd = -1;
}

/* ---- direct: the pinned maps ------------------------------------------- */

/*
 * A QP number peers cannot predict, among the host's 1..max_qps (mrcd's
 * --max-qps), claimed in mrc_qp_owner so no other QP of any process has
 * it. -ENOSPC, said with the limit, when all are.
 */
static int claim_qpn(struct mrc_context *ctx, uint32_t *qpn)
{
	int err = mrc_claim_random(mrc_map_fd(ctx, MRC_PIN_QP_OWNER),
				   mrc_slot_to_qpn(0), ctx->pins.max_qps, ctx->pid, qpn);

	if (err == -ENOSPC)
		mrc_log(MRC_LOG_ERROR, "cannot create a QP: all %u QP numbers of this "
			"host are in use (mrcd --max-qps %u)", ctx->pins.max_qps,
			ctx->pins.max_qps);
	return err;
}

static int direct_qp_create(struct mrc_context *ctx, uint32_t *qpn,
			    struct mrc_qp_state_fds *fds)
{
	int err = claim_qpn(ctx, qpn);

	if (err)
		return err;
	/* A dead process's QP may have left its inner maps: fresh ones. */
	mrc_qpmaps_remove(&ctx->qpmaps, mrc_qpn_to_slot(*qpn));
	err = mrc_qp_state_create(&ctx->qpmaps, &ctx->state_blocks, mrc_qpn_to_slot(*qpn),
				  *qpn, fds);
	if (err)
		bpf_map_delete_elem(mrc_map_fd(ctx, MRC_PIN_QP_OWNER), qpn);
	return err;
}

static int direct_qp_maps(struct mrc_context *ctx, uint32_t slot, uint32_t qpn,
			  uint32_t window, uint32_t n_evs, bool log_only, int *log_fd)
{
	struct mrc_rev_evs zero_rev = {};
	int err = log_only ? mrc_qpmaps_publish_log(&ctx->qpmaps, slot, qpn, window) :
			     mrc_qpmaps_publish(&ctx->qpmaps, slot, qpn, window, n_evs);

	if (!err && !log_only &&
	    bpf_map_update_elem(mrc_map_fd(ctx, MRC_PIN_REV_EVS), &slot, &zero_rev,
				BPF_ANY))
		err = -errno;
	if (!err) {
		*log_fd = mrc_qpmaps_open(ctx->qpmaps.log_fd, slot);
		if (*log_fd < 0)
			err = *log_fd;
	}
	return err;
}

/*
 * A window slot of the host's (one per QP it may have, mrcd's --max-qps),
 * claimed in mrc_cc_owner like QP numbers: ENOSPC, said with the limit,
 * when all are taken.
 */
static int direct_cc_claim(struct mrc_context *ctx, const struct mrc_cc_state *st,
			   uint32_t *slot, int *view_fd)
{
	int owner_fd = mrc_map_fd(ctx, MRC_PIN_CC_OWNER);
	int err = mrc_claim_random(owner_fd, 0, ctx->pins.max_qps, ctx->pid, slot);

	if (err == -ENOSPC)
		mrc_log(MRC_LOG_ERROR, "cannot give the QP a congestion window: all %u "
			"window slots of this host are in use (mrcd --max-qps %u)",
			ctx->pins.max_qps, ctx->pins.max_qps);
	if (err)
		return err;
	if (bpf_map_update_elem(mrc_map_fd(ctx, MRC_PIN_CC), slot, st, BPF_ANY))
		err = -errno;
	if (!err) {
		*view_fd = mrc_cc_view_create(&ctx->qpmaps, mrc_map_fd(ctx, MRC_PIN_CC_VIEW),
					      *slot);
		if (*view_fd < 0)
			err = *view_fd;
	}
	if (err)
		bpf_map_delete_elem(owner_fd, slot);
	return err;
}

/* ---- one interface ------------------------------------------------------ */

int mrc_host_qp_create(struct mrc_context *ctx, uint32_t *qpn,
		       struct mrc_qp_state_fds *fds)
{
	struct mrc_broker_req req = { .op = MRC_BROKER_QP_CREATE };
	struct mrc_broker_rep rep;
	int got[3], err;

	if (!mrc_host_brokered(ctx))
		return direct_qp_create(ctx, qpn, fds);
	err = call(ctx, &req, &rep, got, 3);
	if (err)
		return err;
	*qpn = rep.val[0];
	fds->rx = got[0];
	fds->tx = got[1];
	fds->evs = got[2];
	fds->idx = rep.val[2];	/* the broker keeps the blocks */
	fds->block = 0;
	return 0;
}

void mrc_host_qp_destroy(struct mrc_context *ctx, const struct mrc_qp *qp)
{
	struct mrc_broker_req req = { .op = MRC_BROKER_QP_DESTROY, .slot = qp->slot };
	struct mrc_broker_rep rep;
	uint32_t qpn = qp->qpn;

	if (mrc_host_brokered(ctx)) {
		call(ctx, &req, &rep, NULL, 0);
		return;
	}
	/* Its maps go from the slot, its entry is freed, then its number. */
	mrc_qpmaps_remove(&ctx->qpmaps, qp->slot);
	mrc_qp_state_release(&ctx->state_blocks, qp->state_block, qp->state_idx);
	bpf_map_delete_elem(mrc_map_fd(ctx, MRC_PIN_QP_OWNER), &qpn);
}

int mrc_host_qp_publish(struct mrc_context *ctx, uint32_t slot,
			const struct mrc_qp_info *info)
{
	struct mrc_broker_req req = { .op = MRC_BROKER_QP_PUBLISH, .slot = slot,
				      .u.info = *info };
	struct mrc_broker_rep rep;

	if (mrc_host_brokered(ctx))
		return call(ctx, &req, &rep, NULL, 0);
	return bpf_map_update_elem(mrc_map_fd(ctx, MRC_PIN_QPS), &slot, info,
				   BPF_ANY) ? -errno : 0;
}

int mrc_host_peers_set(struct mrc_context *ctx, uint32_t slot, uint32_t qpn,
		       uint32_t remote_qpn, uint32_t n, uint8_t (*addrs)[16])
{
	struct mrc_broker_req req = { .op = MRC_BROKER_PEERS_SET, .slot = slot,
				      .arg = { remote_qpn }, .u.peers.n = n };
	struct mrc_peer_key key = { .remote_qpn = remote_qpn };
	struct mrc_broker_rep rep;

	if (n > MRC_MAX_PEER_ADDRS)
		return -EINVAL;
	if (mrc_host_brokered(ctx)) {
		memcpy(req.u.peers.addr, addrs, n * 16);
		return call(ctx, &req, &rep, NULL, 0);
	}
	for (uint32_t i = 0; i < n; i++) {
		memcpy(key.addr, addrs[i], 16);
		if (bpf_map_update_elem(mrc_map_fd(ctx, MRC_PIN_PEERS), &key, &qpn, BPF_ANY))
			return -errno;
	}
	return 0;
}

void mrc_host_peers_clear(struct mrc_context *ctx, uint32_t slot, uint32_t qpn,
			  uint32_t remote_qpn, uint32_t n, uint8_t (*addrs)[16])
{
	struct mrc_broker_req req = { .op = MRC_BROKER_PEERS_CLEAR, .slot = slot };
	struct mrc_peer_key key = { .remote_qpn = remote_qpn };
	struct mrc_broker_rep rep;

	(void)qpn;
	if (mrc_host_brokered(ctx)) {
		call(ctx, &req, &rep, NULL, 0);
		return;
	}
	for (uint32_t i = 0; i < n && i < MRC_MAX_PEER_ADDRS; i++) {
		memcpy(key.addr, addrs[i], 16);
		bpf_map_delete_elem(mrc_map_fd(ctx, MRC_PIN_PEERS), &key);
	}
}

int mrc_host_qp_maps(struct mrc_context *ctx, uint32_t slot, uint32_t qpn,
		     uint32_t window, uint32_t n_evs, bool log_only, int *log_fd)
{
	struct mrc_broker_req req = { .op = MRC_BROKER_QP_MAPS, .slot = slot,
				      .arg = { window, n_evs, log_only } };
	struct mrc_broker_rep rep;
	int got[3], err;

	if (!mrc_host_brokered(ctx))
		return direct_qp_maps(ctx, slot, qpn, window, n_evs, log_only, log_fd);
	err = call(ctx, &req, &rep, got, log_only ? 1 : 3);
	if (err)
		return err;
	*log_fd = got[0];
	/* The per-EV counters are mrcctl's to read; the fast path holds them. */
	if (!log_only) {
		close(got[1]);
		close(got[2]);
	}
	return 0;
}

int mrc_host_cc_claim(struct mrc_context *ctx, const struct mrc_cc_state *st,
		      uint32_t *slot, int *view_fd)
{
	struct mrc_broker_req req = { .op = MRC_BROKER_CC_CLAIM, .u.cc = *st };
	struct mrc_broker_rep rep;
	int err;

	if (!mrc_host_brokered(ctx))
		return direct_cc_claim(ctx, st, slot, view_fd);
	err = call(ctx, &req, &rep, view_fd, 1);
	if (!err)
		*slot = rep.val[0];
	return err;
}

void mrc_host_cc_release(struct mrc_context *ctx, uint32_t slot)
{
	struct mrc_broker_req req = { .op = MRC_BROKER_CC_RELEASE, .slot = slot };
	struct mrc_broker_rep rep;

	if (mrc_host_brokered(ctx)) {
		call(ctx, &req, &rep, NULL, 0);
		return;
	}
	bpf_map_delete_elem(mrc_map_fd(ctx, MRC_PIN_CC_VIEW), &slot);
	bpf_map_delete_elem(mrc_map_fd(ctx, MRC_PIN_CC_OWNER), &slot);
}

int mrc_host_discover(struct mrc_context *ctx, const struct in6_addr *peers,
		      uint32_t n_peers, struct mrc_qp_evs *evs, uint32_t n,
		      uint8_t format, bool balance)
{
	struct mrc_broker_req *req = calloc(1, sizeof(*req));	/* 2.5 KiB */
	struct mrc_broker_rep *rep = calloc(1, sizeof(*rep));
	int answered = 0;

	if (req && rep && n_peers <= MRC_MAX_PLANES_ABI && n <= MRC_MAX_EVS) {
		req->op = MRC_BROKER_DISCOVER;
		req->u.discover = (struct mrc_broker_discover){
			.n_peers = n_peers, .n = n, .dport = ctx->udp_port,
			.format = format, .balance = balance };
		memcpy(req->u.discover.peers, peers, n_peers * 16);
		memcpy(req->u.discover.ev, evs->ev, n * sizeof(evs->ev[0]));
		if (!call(ctx, req, rep, NULL, 0) && rep->val[0]) {
			memcpy(evs->ev, rep->u.ev, n * sizeof(evs->ev[0]));
			answered = 1;
		}
	}
	free(req);
	free(rep);
	return answered;
}
