// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "context" (see LAYERS), the top: opening and closing a context.
 *
 * A context attaches a process to the fast path mrcd loaded: an event
 * ring slot (a ring buffer of its own, placed in the mrc_events map-in-map
 * so XDP writes this process's completions there) and the UDP socket its
 * data travels through. A privileged process opens the pinned maps and
 * makes both itself; any other gets them from mrcd's broker (host.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "cc.h"
#include "common/ev_state.h"
#include "common/data_socket.h"
#include "discover.h"
#include "host.h"
#include "progress.h"
#include "recv.h"
#include "send.h"

/* The pinned maps libmrc uses (mrc_cfg, whose ABI word is checked, too). */
static const enum mrc_pin context_maps[] = {
	MRC_PIN_QPS, MRC_PIN_QP_OWNER, MRC_PIN_CTX_OWNER, MRC_PIN_PEERS,
	MRC_PIN_QP_EVS, MRC_PIN_EVENTS, MRC_PIN_PLANES, MRC_PIN_RX, MRC_PIN_TX,
	MRC_PIN_QP_STATS, MRC_PIN_EV_PROFILES, MRC_PIN_EV_STATS,
	MRC_PIN_SEND_LOG, MRC_PIN_REV_EVS, MRC_PIN_CC, MRC_PIN_CC_OWNER,
	MRC_PIN_CC_VIEW, MRC_PIN_CC_PROFILES, MRC_PIN_EV_TX,
};

/*
 * Open and check them (user/common/pins.c): a missing map says "cannot
 * open PATH: ERR (is mrcd running?)", a map of another build says so.
 */
static int open_maps(struct mrc_context *ctx)
{
	char err[1024];
	int rc = mrc_pins_open(&ctx->pins, ctx->pin_dir, context_maps,
			       sizeof(context_maps) / sizeof(context_maps[0]),
			       err, sizeof(err));

	if (rc)
		mrc_log(MRC_LOG_ERROR, "%s", err);
	else
		mrc_qpmaps_init(&ctx->qpmaps, mrc_map_fd(ctx, MRC_PIN_SEND_LOG),
				mrc_map_fd(ctx, MRC_PIN_EV_STATS),
				mrc_map_fd(ctx, MRC_PIN_EV_TX),
				&(struct mrc_qp_state_outer){
					.rx = mrc_map_fd(ctx, MRC_PIN_RX),
					.tx = mrc_map_fd(ctx, MRC_PIN_TX),
					.evs = mrc_map_fd(ctx, MRC_PIN_QP_EVS) },
				mrc_map_fd(ctx, MRC_PIN_QPS));
	if (!rc)
		mrc_qpmaps_set_qps(&ctx->qpmaps, mrc_map_fd(ctx, MRC_PIN_QPS));
	return rc;
}

/* Our QPs by slot, sized by mrcd's --max-qps (learned by open_maps). */
static int alloc_qp_slots(struct mrc_context *ctx)
{
	ctx->qps = calloc(ctx->pins.max_qps, sizeof(*ctx->qps));
	return ctx->qps ? 0 : -ENOMEM;
}

/*
 * An event ring slot of the host's 1..max_ctx (mrcd's --max-contexts),
 * from one the pid picks; EMFILE, said with the limit, when all are taken.
 */
static int claim_event_ring(struct mrc_context *ctx)
{
	uint32_t n = ctx->pins.max_ctx, start = (uint32_t)ctx->pid % n;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t slot = (start + i) % n;

		if (mrc_claim_slot(mrc_map_fd(ctx, MRC_PIN_CTX_OWNER), slot, ctx->pid))
			continue;
		ctx->ctx_slot = slot;
		ctx->ctx_claimed = true;
		break;
	}
	if (!ctx->ctx_claimed) {
		mrc_log(MRC_LOG_ERROR, "cannot open a context: all %u context slots of "
			"this host are in use by live processes (mrcd --max-contexts %u)",
			n, n);
		return -EMFILE;
	}

	ctx->ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "mrc_ctx_ring", 0,
				      0, MRC_CTX_RING_BYTES, NULL);
	if (ctx->ring_fd < 0)
		return -errno;
	if (bpf_map_update_elem(mrc_map_fd(ctx, MRC_PIN_EVENTS), &ctx->ctx_slot,
				&ctx->ring_fd, BPF_ANY))
		return -errno;
	return mrc_progress_open_ring(ctx);
}

/*
 * The options of the context's socket that need no privilege (a brokered
 * context's socket comes from mrcd, bound, its buffers forced), and its
 * port, which XDP steers our QPs' packets to.
 */
static int configure_socket(struct mrc_context *ctx)
{
	struct sockaddr_in6 addr;
	socklen_t len = sizeof(addr);
	int off = 0, on = 1, ect0 = 0x02;
	int flags = fcntl(ctx->sock, F_GETFL);

	if (flags < 0 || fcntl(ctx->sock, F_SETFL, flags | O_NONBLOCK))
		return -errno;
	/* ECN-capable, so congested switches mark (CE) instead of dropping. */
	setsockopt(ctx->sock, IPPROTO_IP, IP_TOS, &ect0, sizeof(ect0));
	setsockopt(ctx->sock, IPPROTO_IPV6, IPV6_TCLASS, &ect0, sizeof(ect0));
	setsockopt(ctx->sock, IPPROTO_IP, IP_RECVTOS, &on, sizeof(on));
	setsockopt(ctx->sock, IPPROTO_IPV6, IPV6_RECVTCLASS, &on, sizeof(on));
	/*
	 * No automatic IPv6 flow labels: ECMP hashes the label with the
	 * ports, so a label made from this socket's own port would move
	 * every EV to a path that path discovery (discover.c), probing with
	 * the EV's label, never saw. TC writes the label for STEV.
	 */
	setsockopt(ctx->sock, IPPROTO_IPV6, IPV6_AUTOFLOWLABEL, &off, sizeof(off));
	/* Arrival times, so SACKs can tell how long we held their trigger. */
	setsockopt(ctx->sock, SOL_SOCKET, SO_TIMESTAMPNS, &on, sizeof(on));
	if (getsockname(ctx->sock, (struct sockaddr *)&addr, &len))
		return -errno;
	ctx->sock_port = ntohs(addr.sin6_port);
	return 0;
}

/* A privileged process: the pinned maps, a ring and a socket of its own. */
static int open_direct(struct mrc_context *ctx)
{
	int err = open_maps(ctx);

	if (!err)
		err = alloc_qp_slots(ctx);
	if (!err)
		err = claim_event_ring(ctx);
	if (!err) {
		ctx->sock = mrc_data_socket_open();
		if (ctx->sock < 0) {
			err = ctx->sock;
			ctx->sock = -1;
		}
	}
	return err;
}

/* Any other: mrcd's broker gives the slot, the ring and the socket. */
static int open_brokered(struct mrc_context *ctx)
{
	int err = mrc_host_connect(ctx);

	if (!err)
		err = alloc_qp_slots(ctx);
	if (!err)
		err = mrc_progress_open_ring(ctx);
	return err;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

static void context_free(struct mrc_context *ctx)
{
	while (ctx->n_own)
		mrc_destroy_qp(ctx->own[ctx->n_own - 1]);
	free(ctx->own);
	free(ctx->out);
	free(ctx->qps);
	for (int i = 0; i < ctx->n_mrs; i++)
		free(ctx->mrs[i]);
	free(ctx->mrs);
	free(ctx->rx_scratch);
	mrc_cc_close(ctx);
	mrc_progress_close(ctx);
	mrc_discover_cache_free(ctx);
	mrc_tx_close(ctx);
	mrc_rx_close(ctx);
	if (ctx->ctx_claimed) {
		bpf_map_delete_elem(mrc_map_fd(ctx, MRC_PIN_EVENTS), &ctx->ctx_slot);
		bpf_map_delete_elem(mrc_map_fd(ctx, MRC_PIN_CTX_OWNER), &ctx->ctx_slot);
	}
	close_fd(&ctx->ring_fd);
	close_fd(&ctx->sock);
	mrc_state_blocks_fini(&ctx->state_blocks);
	mrc_qpmaps_fini(&ctx->qpmaps);
	mrc_pins_close(&ctx->pins);
	/* Last: closing the broker's connection frees what mrcd made for us. */
	mrc_host_disconnect(ctx);
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
	/*
	 * Only the first rotation orders (paths.c) use random(); keys and
	 * QP numbers come from getrandom() (mrc_random_bytes).
	 */
	srandom((unsigned int)(mrc_now_ns() ^ (uint64_t)ctx->pid << 16));
	ctx->sock = ctx->ring_fd = ctx->idle_epfd = -1;
	mrc_pins_init(&ctx->pins);
	ctx->qpmaps.btf_fd = -1;

	ctx->broker_fd = -1;
	err = mrc_host_wants_broker() ? open_brokered(ctx) : open_direct(ctx);
	if (!err)
		err = configure_socket(ctx);
	if (!err)
		err = mrc_progress_open_waits(ctx);
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

		if (bpf_map_lookup_elem(mrc_map_fd(ctx, MRC_PIN_PLANES), &plane, &p) ||
		    !p.ifindex)
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
