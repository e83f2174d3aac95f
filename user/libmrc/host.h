/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Layer "base" (see LAYERS): how a context reaches the host's shared
 * maps. Two ways, one interface:
 *
 *   direct    a privileged process (root, or MRC_VIA_MRCD=0) opens the
 *             pinned maps and writes them itself;
 *   brokered  any other process (or MRC_VIA_MRCD=1) asks mrcd over its
 *             applications' socket (common/broker.h): mrcd checks each
 *             request against what the context owns and hands back only
 *             the descriptors of the context's own maps.
 *
 * Either way the data path is the same: the QP's rx/tx/EV-table maps and
 * the context's event ring are mmapped, the socket is the context's own.
 * Every function returns 0 or -errno; a refusal is logged with mrcd's
 * reason.
 */
#ifndef MRC_LIBMRC_HOST_H
#define MRC_LIBMRC_HOST_H

#include "base.h"
#include "common/qpmaps.h"

static inline bool mrc_host_brokered(const struct mrc_context *ctx)
{
	return ctx->broker_fd >= 0;
}

/*
 * Brokered: connect to mrcd and open the context (its slot, the limits,
 * the event ring, the socket, read-only host configuration maps: ctx->pins
 * holds those). Direct: nothing (context.c opens the pins itself).
 */
int mrc_host_connect(struct mrc_context *ctx);
void mrc_host_disconnect(struct mrc_context *ctx);

/* Should this context be brokered? (euid, MRC_VIA_MRCD) */
bool mrc_host_wants_broker(void);

/* A QP number, its slot, and its rx, tx and EV-table maps. */
int mrc_host_qp_create(struct mrc_context *ctx, uint32_t *qpn,
		       struct mrc_qp_state_fds *fds);
/* The QP's maps go, its state entry is freed; its number is given back. */
void mrc_host_qp_destroy(struct mrc_context *ctx, const struct mrc_qp *qp);
/* What XDP and TC see of the QP (mrc_qps[slot]). */
int mrc_host_qp_publish(struct mrc_context *ctx, uint32_t slot,
			const struct mrc_qp_info *info);
/* The QP's peer entries (mrc_peers: (address, remote QP) -> qpn). */
int mrc_host_peers_set(struct mrc_context *ctx, uint32_t slot, uint32_t qpn,
		       uint32_t remote_qpn, uint32_t n, uint8_t (*addrs)[16]);
void mrc_host_peers_clear(struct mrc_context *ctx, uint32_t slot, uint32_t qpn,
			  uint32_t remote_qpn, uint32_t n, uint8_t (*addrs)[16]);
/*
 * Fresh send log (for `window` PSNs) and, unless log_only, per-EV
 * counters for n_evs EVs and zeroed reverse EVs. *log_fd: the log's map.
 */
int mrc_host_qp_maps(struct mrc_context *ctx, uint32_t slot, uint32_t qpn,
		     uint32_t window, uint32_t n_evs, bool log_only, int *log_fd);
/* A congestion window slot with its first state, and its view's map. */
int mrc_host_cc_claim(struct mrc_context *ctx, const struct mrc_cc_state *st,
		      uint32_t *slot, int *view_fd);
void mrc_host_cc_release(struct mrc_context *ctx, uint32_t slot);
/*
 * Brokered only: mrcd's path discovery for a table (common/path_probe.h
 * mrc_path_probe, whose return this is; 0 when refused).
 */
int mrc_host_discover(struct mrc_context *ctx, const struct in6_addr *peers,
		      uint32_t n_peers, struct mrc_qp_evs *evs, uint32_t n,
		      uint8_t format, bool balance);

#endif /* MRC_LIBMRC_HOST_H */
