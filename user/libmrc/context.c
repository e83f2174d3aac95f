// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Contexts, memory regions and completion queues.
 *
 * A context attaches a process to the fast path mrcd loaded: it opens the
 * pinned maps, mmaps the per-QP rx/tx state arrays, claims an event ring
 * slot (a ring buffer of its own, placed in the mrc_events map-in-map so
 * XDP writes this process's completions there) and opens the UDP socket
 * its data travels through.
 */
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "mrc_int.h"

uint64_t mrc_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return mrc_timespec_ns(&ts);
}

static int open_pinned(struct mrc_context *ctx, const char *name, int *fd)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", ctx->pin_dir, name);
	*fd = bpf_obj_get(path);
	if (*fd < 0) {
		int err = errno;

		fprintf(stderr, "libmrc: cannot open %s: %s%s\n", path,
			strerror(err),
			err == ENOENT ? " (is mrcd running?)" : "");
		return -err;
	}
	return 0;
}

static int open_maps(struct mrc_context *ctx)
{
	const struct { const char *name; int *fd; } maps[] = {
		{ "mrc_qps", &ctx->fd_qps },
		{ "mrc_qp_owner", &ctx->fd_qp_owner },
		{ "mrc_ctx_owner", &ctx->fd_ctx_owner },
		{ "mrc_peers", &ctx->fd_peers },
		{ "mrc_qp_evs", &ctx->fd_qp_evs },
		{ "mrc_events", &ctx->fd_events },
		{ "mrc_planes", &ctx->fd_planes },
		{ "mrc_rx", &ctx->fd_rx },
		{ "mrc_tx", &ctx->fd_tx },
		{ "mrc_qp_stats", &ctx->fd_qp_stats },
		{ "mrc_ev_profiles", &ctx->fd_ev_profiles },
		{ "mrc_ev_stats", &ctx->fd_ev_stats },
		{ "mrc_send_log", &ctx->fd_send_log },
		{ "mrc_rev_evs", &ctx->fd_rev_evs },
		{ "mrc_cc", &ctx->fd_cc },
		{ "mrc_cc_owner", &ctx->fd_cc_owner },
		{ "mrc_cc_view", &ctx->fd_cc_view },
		{ "mrc_cc_profiles", &ctx->fd_cc_profiles },
	};

	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		int err = open_pinned(ctx, maps[i].name, maps[i].fd);

		if (err)
			return err;
	}
	return 0;
}

/* Element stride of a BPF array, as the kernel lays out a mmapped one. */
size_t mrc_array_map_len(size_t value_size, size_t entries)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = ((value_size + 7) & ~(size_t)7) * entries;

	return (len + page - 1) & ~(page - 1);
}

static int map_state_arrays(struct mrc_context *ctx)
{
	ctx->rx_map_len = mrc_array_map_len(sizeof(struct mrc_rx_state), MRC_MAX_QPS);
	ctx->tx_map_len = mrc_array_map_len(sizeof(struct mrc_tx_state), MRC_MAX_QPS);
	ctx->rx_map = mmap(NULL, ctx->rx_map_len, PROT_READ | PROT_WRITE,
			   MAP_SHARED, ctx->fd_rx, 0);
	if (ctx->rx_map == MAP_FAILED) {
		ctx->rx_map = NULL;
		return -errno;
	}
	ctx->tx_map = mmap(NULL, ctx->tx_map_len, PROT_READ | PROT_WRITE,
			   MAP_SHARED, ctx->fd_tx, 0);
	if (ctx->tx_map == MAP_FAILED) {
		ctx->tx_map = NULL;
		return -errno;
	}
	ctx->evs_map = ev_table_map(ctx->fd_qp_evs);
	if (!ctx->evs_map) {
		int err = errno;

		fprintf(stderr, "libmrc: cannot map mrc_qp_evs: %s%s\n",
			strerror(err),
			err == EPROTO ? " (pins of an older mrcd: restart it)" : "");
		return -err;
	}
	return 0;
}

struct mrc_rx_state *mrc_rx_state_of(struct mrc_context *ctx, uint32_t slot)
{
	return (struct mrc_rx_state *)(ctx->rx_map +
				       slot * sizeof(struct mrc_rx_state));
}

struct mrc_tx_state *mrc_tx_state_of(struct mrc_context *ctx, uint32_t slot)
{
	return (struct mrc_tx_state *)(ctx->tx_map +
				       slot * sizeof(struct mrc_tx_state));
}

/*
 * Claim a key of an owner map (QP numbers, ring slots): insert our pid
 * unless present; reclaim entries of processes that died without cleanup.
 */
int mrc_claim_slot(int owner_fd, uint32_t key, pid_t pid)
{
	uint32_t owner, me = (uint32_t)pid;

	if (!bpf_map_update_elem(owner_fd, &key, &me, BPF_NOEXIST))
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (bpf_map_lookup_elem(owner_fd, &key, &owner))
		return -EBUSY;
	/* Ours already (another QP or context of this process), or alive. */
	if (owner == me || kill((pid_t)owner, 0) == 0 || errno != ESRCH)
		return -EBUSY;
	/* The owner is gone: take the slot over. */
	bpf_map_delete_elem(owner_fd, &key);
	if (bpf_map_update_elem(owner_fd, &key, &me, BPF_NOEXIST))
		return -EBUSY;
	return 0;
}

static int claim_event_ring(struct mrc_context *ctx)
{
	uint32_t start = (uint32_t)ctx->pid % MRC_MAX_CTX;

	for (uint32_t i = 0; i < MRC_MAX_CTX; i++) {
		uint32_t slot = (start + i) % MRC_MAX_CTX;

		if (mrc_claim_slot(ctx->fd_ctx_owner, slot, ctx->pid))
			continue;
		ctx->ctx_slot = slot;
		ctx->ctx_claimed = true;
		break;
	}
	if (!ctx->ctx_claimed)
		return -EMFILE;

	ctx->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "mrc_ctx_ring", 0,
				      0, MRC_CTX_RING_BYTES, NULL);
	if (ctx->ring_fd < 0)
		return -errno;
	if (bpf_map_update_elem(ctx->fd_events, &ctx->ctx_slot, &ctx->ring_fd,
				BPF_ANY))
		return -errno;
	ctx->ring = ring_buffer__new(ctx->ring_fd, mrc_on_event, ctx, NULL);
	if (!ctx->ring)
		return -errno;
	return 0;
}

/* One dual-stack UDP socket: XDP steers our QPs' packets to its port. */
static int open_socket(struct mrc_context *ctx)
{
	struct sockaddr_in6 addr = { .sin6_family = AF_INET6 };
	socklen_t len = sizeof(addr);
	int off = 0, on = 1, size = 8 << 20, rcv_size = 64 << 20, ect0 = 0x02;

	ctx->sock = socket(AF_INET6, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
			   0);
	if (ctx->sock < 0)
		return -errno;
	setsockopt(ctx->sock, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	/*
	 * Room for every QP's whole window at once: when the process is off
	 * the CPU for a few ms, a full socket would drop packets, which the
	 * sender must take for losses on the paths that carried them and
	 * demote good EVs. 64 MiB (a cap, not an allocation) holds 4096
	 * 9000-byte packets at the kernel's accounting of about 2x.
	 */
	setsockopt(ctx->sock, SOL_SOCKET, SO_RCVBUFFORCE, &rcv_size, sizeof(rcv_size));
	setsockopt(ctx->sock, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size));
	/* ECN-capable, so congested switches mark (CE) instead of dropping. */
	setsockopt(ctx->sock, IPPROTO_IP, IP_TOS, &ect0, sizeof(ect0));
	setsockopt(ctx->sock, IPPROTO_IPV6, IPV6_TCLASS, &ect0, sizeof(ect0));
	setsockopt(ctx->sock, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
	setsockopt(ctx->sock, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof(on));
	/* Arrival times, so SACKs can tell how long we held their trigger. */
	setsockopt(ctx->sock, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
	if (bind(ctx->sock, (struct sockaddr *)&addr, sizeof(addr)) ||
	    getsockname(ctx->sock, (struct sockaddr *)&addr, &len))
		return -errno;
	ctx->sock_port = ntohs(addr.sin6_port);
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void context_free(struct mrc_context *ctx)
{
	for (int i = 0; i < MRC_MAX_QPS; i++)
		if (ctx->qps[i])
			mrc_destroy_qp(ctx->qps[i]);
	for (int i = 0; i < ctx->n_mrs; i++)
		free(ctx->mrs[i]);
	free(ctx->mrs);
	free(ctx->rx_scratch);
	mrc_cc_close(ctx);
	if (ctx->ring)
		ring_buffer__free(ctx->ring);
	if (ctx->ctx_claimed) {
		bpf_map_delete_elem(ctx->fd_events, &ctx->ctx_slot);
		bpf_map_delete_elem(ctx->fd_ctx_owner, &ctx->ctx_slot);
	}
	close_fd(&ctx->ring_fd);
	if (ctx->rx_map)
		munmap(ctx->rx_map, ctx->rx_map_len);
	if (ctx->tx_map)
		munmap(ctx->tx_map, ctx->tx_map_len);
	ev_table_unmap(ctx->evs_map);
	close_fd(&ctx->sock);
	int *fds[] = { &ctx->fd_qps, &ctx->fd_qp_owner, &ctx->fd_ctx_owner,
		       &ctx->fd_peers, &ctx->fd_qp_evs, &ctx->fd_events,
		       &ctx->fd_planes, &ctx->fd_rx, &ctx->fd_tx,
		       &ctx->fd_qp_stats, &ctx->fd_ev_profiles,
		       &ctx->fd_ev_stats, &ctx->fd_send_log, &ctx->fd_rev_evs };
	for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
		close_fd(fds[i]);
	free(ctx);
}

struct mrc_context *mrc_open(const struct mrc_context_attr *attr)
{
	struct mrc_context *ctx = calloc(1, sizeof(*ctx));
	const char *dir = attr && attr->pin_dir ? attr->pin_dir :
			  MRC_DEFAULT_PIN_DIR;
	int err;

	if (!ctx)
		return mrc_err_ptr(ENOMEM);
	if (strlen(dir) >= sizeof(ctx->pin_dir)) {
		free(ctx);
		return mrc_err_ptr(ENAMETOOLONG);
	}
	strcpy(ctx->pin_dir, dir);
	ctx->udp_port = attr && attr->udp_port ? attr->udp_port :
			MRC_UDP_PORT_DEFAULT;
	ctx->pid = getpid();
	/* Keys and QP numbers must differ between processes and runs. */
	srandom((unsigned int)(mrc_now_ns() ^ (uint64_t)ctx->pid << 16));
	ctx->sock = ctx->ring_fd = -1;
	ctx->fd_qps = ctx->fd_qp_owner = ctx->fd_ctx_owner = ctx->fd_peers = -1;
	ctx->fd_qp_evs = ctx->fd_events = ctx->fd_planes = ctx->fd_rx = -1;
	ctx->fd_tx = ctx->fd_qp_stats = -1;
	ctx->fd_ev_profiles = ctx->fd_ev_stats = ctx->fd_send_log = -1;
	ctx->fd_rev_evs = -1;
	ctx->fd_cc = ctx->fd_cc_owner = ctx->fd_cc_view = ctx->fd_cc_profiles = -1;
	ctx->cc_epfd = -1;

	err = open_maps(ctx);
	if (!err)
		err = map_state_arrays(ctx);
	if (!err)
		err = claim_event_ring(ctx);
	if (!err)
		err = open_socket(ctx);
	if (!err)
		err = mrc_cc_open(ctx);
	if (err) {
		context_free(ctx);
		return mrc_err_ptr(-err);
	}
	return ctx;
}

int mrc_close(struct mrc_context *ctx)
{
	if (!ctx)
		return mrc_err(EINVAL);
	context_free(ctx);
	return 0;
}

int mrc_local_addrs(struct mrc_context *ctx, int family,
		    struct sockaddr_storage *out, int max)
{
	struct ifaddrs *ifa_list, *ifa;
	int n = 0;

	if (!ctx || max < 0 || (max && !out) ||
	    (family != AF_INET && family != AF_INET6 && family != AF_UNSPEC))
		return mrc_err(EINVAL);
	if (getifaddrs(&ifa_list))
		return mrc_err(errno);

	for (uint32_t plane = 0; plane < MRC_MAX_PLANES_ABI && n < max; plane++) {
		struct mrc_plane p;

		if (bpf_map_lookup_elem(ctx->fd_planes, &plane, &p) || !p.ifindex)
			continue;
		for (ifa = ifa_list; ifa && n < max; ifa = ifa->ifa_next) {
			int fam;

			if (!ifa->ifa_addr || if_nametoindex(ifa->ifa_name) != p.ifindex)
				continue;
			fam = ifa->ifa_addr->sa_family;
			if (fam != AF_INET && fam != AF_INET6)
				continue;
			if (family != AF_UNSPEC && fam != family)
				continue;
			if (fam == AF_INET6 && IN6_IS_ADDR_LINKLOCAL(
				    &((struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr))
				continue;
			memset(&out[n], 0, sizeof(out[n]));
			memcpy(&out[n], ifa->ifa_addr,
			       fam == AF_INET ? sizeof(struct sockaddr_in) :
						sizeof(struct sockaddr_in6));
			n++;
		}
	}
	freeifaddrs(ifa_list);
	return n;
}

/* ---- asynchronous events ----------------------------------------------- */

void mrc_push_async(struct mrc_context *ctx, struct mrc_qp *qp,
		    enum mrc_async_event_type type, enum mrc_wc_status status)
{
	uint32_t cap = sizeof(ctx->async) / sizeof(ctx->async[0]);
	struct mrc_async_event *ev;

	if (ctx->async_tail - ctx->async_head >= cap)
		ctx->async_head++;	/* keep the newest */
	ev = &ctx->async[ctx->async_tail++ % cap];
	ev->type = type;
	ev->qp = qp;
	ev->qp_num = qp ? qp->qpn : 0;
	ev->status = status;
}

int mrc_get_async_event(struct mrc_context *ctx, struct mrc_async_event *ev)
{
	uint32_t cap;

	if (!ctx || !ev)
		return mrc_err(EINVAL);
	cap = sizeof(ctx->async) / sizeof(ctx->async[0]);
	if (ctx->async_head == ctx->async_tail)
		return mrc_err(EAGAIN);
	*ev = ctx->async[ctx->async_head++ % cap];
	return 0;
}

/* ---- memory regions ---------------------------------------------------- */

struct mrc_mr *mrc_find_mr(struct mrc_context *ctx, uint32_t key)
{
	for (int i = 0; i < ctx->n_mrs; i++)
		if (ctx->mrs[i]->key == key)
			return ctx->mrs[i];
	return NULL;
}

static uint32_t new_key(struct mrc_context *ctx)
{
	uint32_t key;

	do {
		key = (uint32_t)random() ^ ((uint32_t)random() << 16);
	} while (key == 0 || mrc_find_mr(ctx, key));
	return key;
}

struct mrc_mr *mrc_reg_mr(struct mrc_context *ctx, void *addr, size_t length,
			  unsigned int access)
{
	struct mrc_mr *mr;

	if (!ctx || !addr || !length ||
	    access & ~(unsigned int)(MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE) ||
	    (uintptr_t)addr + length < (uintptr_t)addr)
		return mrc_err_ptr(EINVAL);
	if (ctx->n_mrs == ctx->cap_mrs) {
		int cap = ctx->cap_mrs ? 2 * ctx->cap_mrs : 16;
		struct mrc_mr **mrs = realloc(ctx->mrs, cap * sizeof(*mrs));

		if (!mrs)
			return mrc_err_ptr(ENOMEM);
		ctx->mrs = mrs;
		ctx->cap_mrs = cap;
	}
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return mrc_err_ptr(ENOMEM);
	mr->ctx = ctx;
	mr->addr = addr;
	mr->length = length;
	mr->access = access;
	mr->key = new_key(ctx);
	ctx->mrs[ctx->n_mrs++] = mr;
	return mr;
}

int mrc_dereg_mr(struct mrc_mr *mr)
{
	struct mrc_context *ctx;

	if (!mr)
		return mrc_err(EINVAL);
	ctx = mr->ctx;
	for (int i = 0; i < ctx->n_mrs; i++) {
		if (ctx->mrs[i] != mr)
			continue;
		ctx->mrs[i] = ctx->mrs[--ctx->n_mrs];
		free(mr);
		return 0;
	}
	return mrc_err(EINVAL);
}

uint32_t mrc_mr_lkey(const struct mrc_mr *mr)
{
	return mr ? mr->key : 0;
}

uint32_t mrc_mr_rkey(const struct mrc_mr *mr)
{
	return mr ? mr->key : 0;
}

/* ---- completion queues ------------------------------------------------- */

struct mrc_cq *mrc_create_cq(struct mrc_context *ctx, int depth)
{
	struct mrc_cq *cq;
	uint32_t cap = 16;

	if (!ctx || depth <= 0 || depth > (1 << 20))
		return mrc_err_ptr(EINVAL);
	while (cap < (uint32_t)depth)
		cap <<= 1;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return mrc_err_ptr(ENOMEM);
	cq->ring = calloc(cap, sizeof(*cq->ring));
	if (!cq->ring) {
		free(cq);
		return mrc_err_ptr(ENOMEM);
	}
	cq->ctx = ctx;
	cq->cap = cap;
	return cq;
}

int mrc_destroy_cq(struct mrc_cq *cq)
{
	if (!cq)
		return mrc_err(EINVAL);
	if (cq->refs)
		return mrc_err(EBUSY);
	free(cq->ring);
	free(cq);
	return 0;
}

/* Completions never get lost: the ring grows instead of overflowing. */
int mrc_cq_push(struct mrc_cq *cq, const struct mrc_wc *wc)
{
	if (cq->tail - cq->head == cq->cap) {
		struct mrc_wc *ring = calloc(2 * cq->cap, sizeof(*ring));

		if (!ring)
			return -ENOMEM;
		for (uint32_t i = 0; i < cq->cap; i++)
			ring[i] = cq->ring[(cq->head + i) & (cq->cap - 1)];
		free(cq->ring);
		cq->ring = ring;
		cq->head = 0;
		cq->tail = cq->cap;
		cq->cap *= 2;
	}
	cq->ring[cq->tail++ & (cq->cap - 1)] = *wc;
	return 0;
}

/* Drive every QP of the context: events, receive, send, timers. */
static void progress(struct mrc_context *ctx)
{
	bool busy = ring_buffer__consume(ctx->ring) > 0;

	busy |= mrc_rx_progress(ctx) > 0;
	for (int i = 0; i < MRC_MAX_QPS; i++) {
		struct mrc_qp *qp = ctx->qps[i];

		if (!qp)
			continue;
		mrc_rx_send_acks(qp);
		mrc_tx_progress(qp);
	}
	ring_buffer__consume(ctx->ring);
	if (busy) {
		ctx->idle_polls = 0;
		return;
	}
	if (++ctx->idle_polls < 16)
		return;
	/*
	 * Nothing arrived for a while: sleep when no QP can do anything (XDP
	 * or the socket wakes us), otherwise let the kernel's softirq and
	 * NAPI threads run, they carry our packets (busy polling on few
	 * cores otherwise starves them).
	 */
	if (!mrc_idle_wait(ctx))
		sched_yield();
	ctx->idle_polls = 0;
}

int mrc_poll_cq(struct mrc_cq *cq, int n, struct mrc_wc *wc)
{
	int got = 0;

	if (!cq || n < 0 || (n && !wc))
		return mrc_err(EINVAL);
	if (cq->head == cq->tail)
		progress(cq->ctx);
	while (got < n && cq->head != cq->tail)
		wc[got++] = cq->ring[cq->head++ & (cq->cap - 1)];
	return got;
}

const char *mrc_wc_status_str(enum mrc_wc_status status)
{
	switch (status) {
	case MRC_WC_SUCCESS:		return "success";
	case MRC_WC_RETRY_EXC_ERR:	return "retry exceeded";
	case MRC_WC_REM_ACCESS_ERR:	return "remote access error";
	case MRC_WC_WR_FLUSH_ERR:	return "flushed";
	case MRC_WC_REM_OP_ERR:		return "remote operation error";
	case MRC_WC_LOC_PROT_ERR:	return "local protection error";
	}
	return "unknown status";
}
