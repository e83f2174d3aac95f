// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Serving applications that run without privileges (common/broker.h).
 *
 * mrcd does for each connected context the writes its QPs need to the
 * host's shared maps, each checked against what the context owns: its
 * context slot and socket, the QPs it created here, the windows it
 * claimed here. What the fast path shares with the application per QP
 * goes to it as file descriptors of maps that hold that QP alone. When a
 * connection closes, everything it held is taken back, so a crashed
 * application leaves nothing behind.
 *
 * Every request is a handful of map operations: they are answered at
 * once from the poll loop, and a client that does not read its answer
 * (the socket is full) is dropped, so none can hold mrcd up.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <netinet/in.h>
#include <bpf/bpf.h>

#include "common/broker.h"
#include "common/claim.h"
#include "common/data_socket.h"
#include "common/path_probe.h"
#include "common/pins.h"
#include "common/qpmaps.h"
#include "mrcd/mrcd.h"
#include "mrc.skel.h"

/* A QP created through the broker, and the peer entries it installed. */
struct app_qp {
	uint32_t slot, qpn;
	uint32_t state_block, state_idx;	/* its entry in ap->state_blocks */
	uint32_t remote_qpn;
	uint32_t n_peers;
	uint8_t peer[MRC_MAX_PEER_ADDRS][16];
};

struct app {
	int fd;
	pid_t pid;
	uid_t uid;
	long long hello_deadline_ms;
	bool hello;
	uint32_t ctx_slot;
	uint16_t sock_port;
	struct app_qp *qps;
	uint32_t n_qps, cap_qps;
	struct mrc_state_blocks state_blocks;	/* the QPs' state entries */
	uint32_t *windows;		/* cc slots claimed */
	uint32_t n_windows, cap_windows;
	/* DISCOVER's budget (a token bucket): tokens, last refill */
	uint32_t discover_tokens;
	long long discover_refill_ms;
};

#define MAP(a, name) bpf_map__fd((a)->skel->maps.name)

/* ---- the listening socket ---------------------------------------------- */

/* Mode 0666, or 0660 with the group --app-group names; said when it fails. */
static int restrict_socket(const struct agent *a, const char *path)
{
	struct group *g;

	if (!a->opt.app_group) {
		if (!chmod(path, 0666))
			return 0;
	} else {
		g = getgrnam(a->opt.app_group);
		if (!g) {
			pr_err("--app-group %s: no such group (groupadd %s, or leave "
			       "the option out to let every local user in)\n",
			       a->opt.app_group, a->opt.app_group);
			return -ENOENT;
		}
		if (!chown(path, 0, g->gr_gid) && !chmod(path, 0660))
			return 0;
	}
	pr_err("cannot open %s to applications: %s\n", path, strerror(errno));
	return -errno;
}

int apps_listen(struct agent *a)
{
	char err[256];

	if (mrc_broker_sock_path(a->paths.sock_path, a->apps_sock_path,
				 sizeof(a->apps_sock_path))) {
		pr_err("cannot name the applications' socket after %s\n",
		       a->paths.sock_path);
		return -1;
	}
	if (agent_listen(a->apps_sock_path, &a->apps_listen_fd, err, sizeof(err))) {
		pr_err("%s\n", err);
		return -1;
	}
	if (restrict_socket(a, a->apps_sock_path))
		return -1;
	pr_info("applications without privileges connect to %s\n",
		a->apps_sock_path);
	return 0;
}

/* ---- what a context holds ---------------------------------------------- */

static struct app_qp *find_qp(struct app *ap, uint32_t slot)
{
	for (uint32_t i = 0; i < ap->n_qps; i++)
		if (ap->qps[i].slot == slot)
			return &ap->qps[i];
	return NULL;
}

static bool owns_window(const struct app *ap, uint32_t slot)
{
	for (uint32_t i = 0; i < ap->n_windows; i++)
		if (ap->windows[i] == slot)
			return true;
	return false;
}

static int grow(void **arr, uint32_t n, uint32_t *cap, size_t elem)
{
	uint32_t want = *cap ? *cap * 2 : 8;
	void *p;

	if (n < *cap)
		return 0;
	p = realloc(*arr, want * elem);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = want;
	return 0;
}

/* Does the owner map still give key to pid? */
static bool still_owned(int owner_fd, uint32_t key, pid_t pid)
{
	uint32_t owner;

	return !bpf_map_lookup_elem(owner_fd, &key, &owner) && owner == (uint32_t)pid;
}

/* Delete an owner map's key only while it is still this process's. */
static void unclaim(int owner_fd, uint32_t key, pid_t pid)
{
	if (still_owned(owner_fd, key, pid))
		bpf_map_delete_elem(owner_fd, &key);
}

static void clear_peers(const struct agent *a, struct app_qp *q)
{
	struct mrc_peer_key key = { .remote_qpn = q->remote_qpn };
	uint32_t qpn;

	for (uint32_t i = 0; i < q->n_peers; i++) {
		memcpy(key.addr, q->peer[i], 16);
		/* Only an entry that still names this QP. */
		if (!bpf_map_lookup_elem(MAP(a, mrc_peers), &key, &qpn) && qpn == q->qpn)
			bpf_map_delete_elem(MAP(a, mrc_peers), &key);
	}
	q->n_peers = 0;
}

static void destroy_qp(const struct agent *a, struct app *ap, struct app_qp *q)
{
	struct mrc_qp_info reset = {};

	clear_peers(a, q);
	/*
	 * Once the process is gone, a process that claims slots itself may
	 * have taken the number over (its owner dead): then the slot is not
	 * ours to clear any more.
	 */
	if (still_owned(MAP(a, mrc_qp_owner), q->qpn, ap->pid)) {
		bpf_map_update_elem(MAP(a, mrc_qps), &q->slot, &reset, BPF_ANY);
		mrc_qpmaps_remove(&a->qpmaps, q->slot);
		bpf_map_delete_elem(MAP(a, mrc_qp_owner), &q->qpn);
	}
	/* The entry is this context's either way. */
	mrc_qp_state_release(&ap->state_blocks, q->state_block, q->state_idx);
	*q = ap->qps[--ap->n_qps];
}

static void release_window(const struct agent *a, struct app *ap, uint32_t i)
{
	uint32_t slot = ap->windows[i];

	if (still_owned(MAP(a, mrc_cc_owner), slot, ap->pid)) {
		bpf_map_delete_elem(MAP(a, mrc_cc_view), &slot);
		bpf_map_delete_elem(MAP(a, mrc_cc_owner), &slot);
	}
	ap->windows[i] = ap->windows[--ap->n_windows];
}

/* The connection closed: everything the context held goes back. */
static void app_free(struct agent *a, struct app *ap)
{
	while (ap->n_qps)
		destroy_qp(a, ap, &ap->qps[ap->n_qps - 1]);
	while (ap->n_windows)
		release_window(a, ap, ap->n_windows - 1);
	if (ap->hello && still_owned(MAP(a, mrc_ctx_owner), ap->ctx_slot, ap->pid)) {
		bpf_map_delete_elem(MAP(a, mrc_events), &ap->ctx_slot);
		bpf_map_delete_elem(MAP(a, mrc_ctx_owner), &ap->ctx_slot);
		pr_info("context %u of pid %d closed\n", ap->ctx_slot, (int)ap->pid);
	}
	mrc_state_blocks_fini(&ap->state_blocks);
	free(ap->qps);
	free(ap->windows);
	close(ap->fd);
	free(ap);
}

/* ---- requests ---------------------------------------------------------- */

struct answer {
	struct mrc_broker_rep rep;
	int fds[MRC_BROKER_MAX_FDS];
};

__attribute__((format(printf, 3, 4)))
static int refuse(struct answer *ans, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ans->rep.msg, sizeof(ans->rep.msg), fmt, ap);
	va_end(ap);
	return err;
}

static int add_fd(struct answer *ans, int fd)
{
	if (fd < 0)
		return fd;
	ans->fds[ans->rep.n_fds++] = fd;
	return 0;
}

/* A read-only descriptor of a pinned map (host configuration). */
static int open_read_only(const struct agent *a, enum mrc_pin id)
{
	LIBBPF_OPTS(bpf_obj_get_opts, o, .file_flags = BPF_F_RDONLY);
	char path[PATH_MAX + 64];
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", a->paths.pin_dir,
			     mrc_pin_spec(id)->name) >= sizeof(path))
		return -ENAMETOOLONG;
	fd = bpf_obj_get_opts(path, &o);
	return fd < 0 ? -errno : fd;
}

/* The context's UDP socket, made here so its buffers can be forced; its port. */
static int open_app_socket(uint16_t *port)
{
	struct sockaddr_in6 addr;
	socklen_t len = sizeof(addr);
	int err, fd = mrc_data_socket_open();

	if (fd < 0)
		return fd;
	if (getsockname(fd, (struct sockaddr *)&addr, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	*port = ntohs(addr.sin6_port);
	return fd;
}

static int claim_context(struct agent *a, struct app *ap, struct answer *ans)
{
	uint32_t n = a->opt.max_ctx;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = ((uint32_t)ap->pid + i) % n;

		if (!mrc_claim_slot(MAP(a, mrc_ctx_owner), slot, ap->pid)) {
			ap->ctx_slot = slot;
			return 0;
		}
	}
	return refuse(ans, -EMFILE, "all %u context slots of this host are in use "
		      "(mrcd --max-contexts %u)", n, n);
}

static int op_hello(struct agent *a, struct app *ap,
		    const struct mrc_broker_req *req, struct answer *ans)
{
	static const enum mrc_pin shared[] = {
		MRC_PIN_PLANES, MRC_PIN_EV_PROFILES, MRC_PIN_CC_PROFILES, MRC_PIN_CFG,
	};
	int ring, err;

	if (ap->hello)
		return refuse(ans, -EALREADY, "this connection has its context already");
	if (req->arg[0] != MRC_ABI_VERSION)
		return refuse(ans, -EPROTO, "libmrc of ABI %u, mrcd of ABI %u: rebuild "
			      "the application or restart mrcd", req->arg[0],
			      MRC_ABI_VERSION);
	err = claim_context(a, ap, ans);
	if (err)
		return err;
	ap->hello = true;	/* from here app_free gives the slot back */
	ring = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "mrc_ctx_ring", 0, 0,
			      MRC_CTX_RING_BYTES, NULL);
	err = add_fd(ans, ring < 0 ? -errno : ring);
	if (!err && bpf_map_update_elem(MAP(a, mrc_events), &ap->ctx_slot, &ring, BPF_ANY))
		err = -errno;
	if (!err)
		err = add_fd(ans, open_app_socket(&ap->sock_port));
	for (size_t i = 0; !err && i < sizeof(shared) / sizeof(shared[0]); i++)
		err = add_fd(ans, open_read_only(a, shared[i]));
	if (err) {
		/* Nothing half made stays: the client may say HELLO again. */
		bpf_map_delete_elem(MAP(a, mrc_events), &ap->ctx_slot);
		unclaim(MAP(a, mrc_ctx_owner), ap->ctx_slot, ap->pid);
		ap->hello = false;
		return refuse(ans, err, "cannot set the context up: %s", strerror(-err));
	}
	ans->rep.val[0] = ap->ctx_slot;
	ans->rep.val[1] = a->opt.max_qps;
	ans->rep.val[2] = a->opt.max_ctx;
	pr_info("context %u for pid %d (uid %u), port %u\n", ap->ctx_slot,
		(int)ap->pid, (unsigned int)ap->uid, ap->sock_port);
	return 0;
}

static int op_qp_create(struct agent *a, struct app *ap, struct answer *ans)
{
	struct mrc_qp_state_fds fds;
	struct app_qp *q;
	uint32_t qpn;
	int err = grow((void **)&ap->qps, ap->n_qps, &ap->cap_qps, sizeof(*ap->qps));

	if (err)
		return refuse(ans, err, "out of memory");
	err = mrc_claim_random(MAP(a, mrc_qp_owner), mrc_slot_to_qpn(0),
			       a->opt.max_qps, ap->pid, &qpn);
	if (err == -ENOSPC)
		return refuse(ans, err, "all %u QP numbers of this host are in use "
			      "(mrcd --max-qps %u)", a->opt.max_qps, a->opt.max_qps);
	if (err)
		return refuse(ans, err, "cannot claim a QP number: %s", strerror(-err));
	q = &ap->qps[ap->n_qps++];
	*q = (struct app_qp){ .slot = mrc_qpn_to_slot(qpn), .qpn = qpn };
	/* A dead process's QP may have left its maps: fresh ones. */
	mrc_qpmaps_remove(&a->qpmaps, q->slot);
	err = mrc_qp_state_create(&a->qpmaps, &ap->state_blocks, q->slot, qpn, &fds);
	if (err) {
		q->state_block = UINT32_MAX;	/* no entry to release */
		destroy_qp(a, ap, q);
		return refuse(ans, err, "cannot make the QP's maps: %s", strerror(-err));
	}
	q->state_block = fds.block;
	q->state_idx = fds.idx;
	add_fd(ans, fds.rx);
	add_fd(ans, fds.tx);
	add_fd(ans, fds.evs);
	ans->rep.val[0] = qpn;
	ans->rep.val[1] = q->slot;
	ans->rep.val[2] = fds.idx;
	return 0;
}

static struct app_qp *own_qp(struct app *ap, uint32_t slot, struct answer *ans)
{
	struct app_qp *q = find_qp(ap, slot);

	if (!q)
		refuse(ans, -EPERM, "QP slot %u is not this context's", slot);
	return q;
}

/* What the fast path trusts of a QP entry: only the context's own. */
static int check_info(const struct app *ap, const struct mrc_qp_info *info,
		      struct answer *ans)
{
	if (info->ctx != ap->ctx_slot)
		return refuse(ans, -EPERM, "context %u is not this one (%u)",
			      info->ctx, ap->ctx_slot);
	if (info->sock_port != ap->sock_port)
		return refuse(ans, -EPERM, "port %u is not this context's socket (%u)",
			      info->sock_port, ap->sock_port);
	if (info->cc_slot && !owns_window(ap, info->cc_slot - 1))
		return refuse(ans, -EPERM, "window %u is not this context's",
			      info->cc_slot - 1);
	if (info->n_peer_addrs > MRC_MAX_PEER_ADDRS || info->n_evs > MRC_MAX_EVS ||
	    info->state > MRC_QPS_ERROR)
		return refuse(ans, -EINVAL, "a QP entry out of range");
	return 0;
}

static int op_qp_publish(struct agent *a, struct app *ap,
			 const struct mrc_broker_req *req, struct answer *ans)
{
	struct app_qp *q = own_qp(ap, req->slot, ans);
	int err;

	if (!q)
		return -EPERM;
	struct mrc_qp_info info = req->u.info;

	err = check_info(ap, &info, ans);
	if (err)
		return err;
	/* The QP's entry is the one the broker gave it, whatever is asked. */
	info.state_idx = q->state_idx;
	if (bpf_map_update_elem(MAP(a, mrc_qps), &q->slot, &info, BPF_ANY))
		return refuse(ans, -errno, "mrc_qps: %s", strerror(errno));
	return 0;
}

/* A peer entry another QP holds stays its own. */
static bool peer_taken(const struct agent *a, const struct mrc_peer_key *key,
		       uint32_t qpn)
{
	uint32_t holder;

	return !bpf_map_lookup_elem(MAP(a, mrc_peers), key, &holder) && holder != qpn;
}

static int op_peers_set(struct agent *a, struct app *ap,
			const struct mrc_broker_req *req, struct answer *ans)
{
	const struct mrc_broker_peers *p = &req->u.peers;
	struct mrc_peer_key key = { .remote_qpn = req->arg[0] };
	struct app_qp *q = own_qp(ap, req->slot, ans);

	if (!q)
		return -EPERM;
	if (p->n > MRC_MAX_PEER_ADDRS)
		return refuse(ans, -EINVAL, "%u peer addresses (at most %u)", p->n,
			      MRC_MAX_PEER_ADDRS);
	for (uint32_t i = 0; i < p->n; i++) {
		memcpy(key.addr, p->addr[i], 16);
		if (peer_taken(a, &key, q->qpn))
			return refuse(ans, -EADDRINUSE, "another QP of this host is "
				      "connected to that peer QP (%u)", key.remote_qpn);
	}
	clear_peers(a, q);
	q->remote_qpn = req->arg[0];
	for (uint32_t i = 0; i < p->n; i++) {
		memcpy(key.addr, p->addr[i], 16);
		if (bpf_map_update_elem(MAP(a, mrc_peers), &key, &q->qpn, BPF_ANY))
			return refuse(ans, -errno, "mrc_peers: %s", strerror(errno));
		memcpy(q->peer[q->n_peers++], p->addr[i], 16);
	}
	return 0;
}

static int op_qp_maps(struct agent *a, struct app *ap,
		      const struct mrc_broker_req *req, struct answer *ans)
{
	struct app_qp *q = own_qp(ap, req->slot, ans);
	struct mrc_rev_evs zero_rev = {};
	bool log_only = req->arg[2] == 1;
	int err;

	if (!q)
		return -EPERM;
	if (req->arg[0] > MRC_WINDOW_MAX || req->arg[1] > MRC_MAX_EVS)
		return refuse(ans, -EINVAL, "window %u or %u EVs out of range",
			      req->arg[0], req->arg[1]);
	err = log_only ? mrc_qpmaps_publish_log(&a->qpmaps, q->slot, q->qpn, req->arg[0]) :
			 mrc_qpmaps_publish(&a->qpmaps, q->slot, q->qpn, req->arg[0],
					    req->arg[1]);
	if (!err && !log_only &&
	    bpf_map_update_elem(MAP(a, mrc_rev_evs), &q->slot, &zero_rev, BPF_ANY))
		err = -errno;
	if (!err)
		err = add_fd(ans, mrc_qpmaps_open(a->qpmaps.log_fd, q->slot));
	if (!err && !log_only)
		err = add_fd(ans, mrc_qpmaps_open(a->qpmaps.rx_fd, q->slot));
	if (!err && !log_only)
		err = add_fd(ans, mrc_qpmaps_open(a->qpmaps.tx_fd, q->slot));
	if (err)
		return refuse(ans, err, "cannot make the QP's send log and counters: %s",
			      strerror(-err));
	return 0;
}

static int op_cc_claim(struct agent *a, struct app *ap,
		       const struct mrc_broker_req *req, struct answer *ans)
{
	uint32_t slot;
	int err = grow((void **)&ap->windows, ap->n_windows, &ap->cap_windows,
		       sizeof(*ap->windows));

	if (err)
		return refuse(ans, err, "out of memory");
	err = mrc_claim_random(MAP(a, mrc_cc_owner), 0, a->opt.max_qps, ap->pid, &slot);
	if (err == -ENOSPC)
		return refuse(ans, err, "all %u window slots of this host are in use "
			      "(mrcd --max-qps %u)", a->opt.max_qps, a->opt.max_qps);
	if (err)
		return refuse(ans, err, "cannot claim a window: %s", strerror(-err));
	ap->windows[ap->n_windows++] = slot;
	if (bpf_map_update_elem(MAP(a, mrc_cc), &slot, &req->u.cc, BPF_ANY))
		err = -errno;
	if (!err)
		err = add_fd(ans, mrc_cc_view_create(&a->qpmaps, MAP(a, mrc_cc_view), slot));
	if (err) {
		release_window(a, ap, ap->n_windows - 1);
		return refuse(ans, err, "cannot set the window up: %s", strerror(-err));
	}
	ans->rep.val[0] = slot;
	return 0;
}

static int op_cc_release(struct agent *a, struct app *ap,
			 const struct mrc_broker_req *req, struct answer *ans)
{
	for (uint32_t i = 0; i < ap->n_windows; i++) {
		if (ap->windows[i] == req->slot) {
			release_window(a, ap, i);
			return 0;
		}
	}
	return refuse(ans, -EPERM, "window %u is not this context's", req->slot);
}

/* Whether the context may have mrcd probe now (it costs mrcd ~40 ms). */
static bool discover_allowed(struct app *ap)
{
	long long now = now_ms();
	long long earned = (now - ap->discover_refill_ms) * MRC_BROKER_DISCOVER_PER_S / 1000;

	if (earned > 0) {
		ap->discover_tokens += (uint32_t)(earned > MRC_BROKER_DISCOVER_BURST ?
						  MRC_BROKER_DISCOVER_BURST : earned);
		if (ap->discover_tokens > MRC_BROKER_DISCOVER_BURST)
			ap->discover_tokens = MRC_BROKER_DISCOVER_BURST;
		ap->discover_refill_ms = now;
	}
	if (!ap->discover_tokens)
		return false;
	ap->discover_tokens--;
	return true;
}

static int op_discover(struct agent *a, struct app *ap,
		       const struct mrc_broker_req *req, struct answer *ans)
{
	const struct mrc_broker_discover *d = &req->u.discover;
	struct in6_addr peers[MRC_MAX_PLANES_ABI];
	struct mrc_qp_evs *evs;

	if (d->n_peers > MRC_MAX_PLANES_ABI || d->n > MRC_MAX_EVS)
		return refuse(ans, -EINVAL, "%u peers, %u EVs: out of range",
			      d->n_peers, d->n);
	if (!discover_allowed(ap))
		return refuse(ans, -EAGAIN, "path discovery: at most %d a second",
			      MRC_BROKER_DISCOVER_PER_S);
	evs = calloc(1, sizeof(*evs));
	if (!evs)
		return refuse(ans, -ENOMEM, "out of memory");
	memcpy(peers, d->peers, d->n_peers * 16);
	memcpy(evs->ev, d->ev, d->n * sizeof(d->ev[0]));
	ans->rep.val[0] = (uint32_t)mrc_path_probe(MAP(a, mrc_planes), peers,
						   d->n_peers, d->dport, evs, d->n,
						   d->format, d->balance);
	memcpy(ans->rep.u.ev, evs->ev, d->n * sizeof(d->ev[0]));
	free(evs);
	return 0;
}

static int dispatch(struct agent *a, struct app *ap,
		    const struct mrc_broker_req *req, struct answer *ans)
{
	struct app_qp *q;

	if (!ap->hello && req->op != MRC_BROKER_HELLO)
		return refuse(ans, -EPROTO, "HELLO first");
	switch (req->op) {
	case MRC_BROKER_HELLO:
		return op_hello(a, ap, req, ans);
	case MRC_BROKER_QP_CREATE:
		return op_qp_create(a, ap, ans);
	case MRC_BROKER_QP_DESTROY:
		q = own_qp(ap, req->slot, ans);
		if (q)
			destroy_qp(a, ap, q);
		return q ? 0 : -EPERM;
	case MRC_BROKER_QP_PUBLISH:
		return op_qp_publish(a, ap, req, ans);
	case MRC_BROKER_PEERS_SET:
		return op_peers_set(a, ap, req, ans);
	case MRC_BROKER_PEERS_CLEAR:
		q = own_qp(ap, req->slot, ans);
		if (q)
			clear_peers(a, q);
		return q ? 0 : -EPERM;
	case MRC_BROKER_QP_MAPS:
		return op_qp_maps(a, ap, req, ans);
	case MRC_BROKER_CC_CLAIM:
		return op_cc_claim(a, ap, req, ans);
	case MRC_BROKER_CC_RELEASE:
		return op_cc_release(a, ap, req, ans);
	case MRC_BROKER_DISCOVER:
		return op_discover(a, ap, req, ans);
	default:
		return refuse(ans, -EOPNOTSUPP, "unknown request %u", req->op);
	}
}

/* One request answered; -1 to drop the client. */
static int serve_app(struct agent *a, struct app *ap)
{
	struct mrc_broker_req req;
	struct answer ans = { .rep = { .magic = MRC_BROKER_MAGIC,
				       .version = MRC_BROKER_VERSION } };
	int fds[MRC_BROKER_MAX_FDS];
	unsigned int n_in = 0;
	int rc = mrc_broker_recv(ap->fd, &req, sizeof(req), fds, MRC_BROKER_MAX_FDS,
				 &n_in);

	for (unsigned int i = 0; i < n_in; i++)
		close(fds[i]);		/* requests carry none */
	if (rc == -EAGAIN || rc == -EINTR)
		return 0;
	if (rc || req.magic != MRC_BROKER_MAGIC || req.version != MRC_BROKER_VERSION)
		return -1;
	ans.rep.op = req.op;
	ans.rep.status = dispatch(a, ap, &req, &ans);
	if (ans.rep.status)
		for (unsigned int i = 0; i < ans.rep.n_fds; i++)
			close(ans.fds[i]);
	if (ans.rep.status)
		ans.rep.n_fds = 0;
	rc = mrc_broker_send(ap->fd, &ans.rep, sizeof(ans.rep), ans.fds, ans.rep.n_fds);
	for (unsigned int i = 0; i < ans.rep.n_fds; i++)
		close(ans.fds[i]);
	return rc ? -1 : 0;
}

/* ---- the loop's side ---------------------------------------------------- */

static void accept_apps(struct agent *a)
{
	for (;;) {
		struct ucred cr;
		socklen_t len = sizeof(cr);
		struct app *ap;
		int fd = accept4(a->apps_listen_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return;
		if (a->n_apps >= a->opt.max_ctx + APPS_SPARE ||
		    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) ||
		    !(ap = calloc(1, sizeof(*ap)))) {
			close(fd);
			continue;
		}
		ap->fd = fd;
		ap->pid = cr.pid;
		ap->uid = cr.uid;
		ap->hello_deadline_ms = now_ms() + MRC_BROKER_TIMEOUT_MS;
		ap->discover_tokens = MRC_BROKER_DISCOVER_BURST;
		ap->discover_refill_ms = now_ms();
		a->apps[a->n_apps++] = ap;
	}
}

int apps_pollfds(const struct agent *a, struct pollfd *pfd)
{
	int n = 0;

	if (a->apps_listen_fd < 0)
		return 0;
	pfd[n++] = (struct pollfd){ .fd = a->n_apps < a->opt.max_ctx + APPS_SPARE ?
					  a->apps_listen_fd : -1, .events = POLLIN };
	for (uint32_t i = 0; i < a->n_apps; i++)
		pfd[n++] = (struct pollfd){ .fd = a->apps[i]->fd, .events = POLLIN };
	return n;
}

void apps_process(struct agent *a, const struct pollfd *pfd, int n)
{
	long long now = now_ms();

	if (!n)
		return;
	/* Backwards: a dropped client's place is taken by the last one. */
	for (int i = (int)a->n_apps - 1; i >= 0; i--) {
		struct app *ap = a->apps[i];
		bool drop = false;

		if (i + 1 < n && pfd[i + 1].revents & (POLLIN | POLLHUP | POLLERR))
			drop = serve_app(a, ap) != 0;
		if (!ap->hello && now > ap->hello_deadline_ms)
			drop = true;
		if (drop) {
			app_free(a, ap);
			a->apps[i] = a->apps[--a->n_apps];
		}
	}
	if (pfd[0].revents & POLLIN)
		accept_apps(a);
}

int apps_max_pollfds(const struct agent *a)
{
	return 1 + (int)(a->opt.max_ctx + APPS_SPARE);
}

int apps_open(struct agent *a)
{
	a->apps = calloc(a->opt.max_ctx + APPS_SPARE, sizeof(*a->apps));
	if (!a->apps)
		return -1;
	mrc_qpmaps_init(&a->qpmaps, MAP(a, mrc_send_log), MAP(a, mrc_ev_stats),
			MAP(a, mrc_ev_tx),
			&(struct mrc_qp_state_outer){ .rx = MAP(a, mrc_rx),
				.tx = MAP(a, mrc_tx), .evs = MAP(a, mrc_qp_evs) },
			MAP(a, mrc_qps));
	mrc_qpmaps_set_qps(&a->qpmaps, MAP(a, mrc_qps));
	return apps_listen(a);
}

/* mrcd stops: every context is closed and its socket removed. */
void apps_close(struct agent *a, bool unlink_path)
{
	while (a->n_apps)
		app_free(a, a->apps[--a->n_apps]);
	free(a->apps);
	a->apps = NULL;
	if (a->apps_listen_fd >= 0)
		close(a->apps_listen_fd);
	a->apps_listen_fd = -1;
	if (unlink_path && a->apps_sock_path[0])
		unlink(a->apps_sock_path);
	mrc_qpmaps_fini(&a->qpmaps);
}
