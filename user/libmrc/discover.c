// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "paths" (see LAYERS and discover.h): EV path discovery for a QP's
 * table. The probing itself is common/path_probe.c (mrcd runs it too);
 * here: who runs it (this process, or mrcd for a brokered context, which
 * has no raw sockets) and the context's recent answers, reused by QPs to
 * the same peer.
 */
#include <stdlib.h>
#include <string.h>

#include "common/path_probe.h"
#include "discover.h"
#include "host.h"

#define CACHE_SLOTS	16	/* discoveries a context remembers */
#define CACHE_TTL_NS	(10ull * 1000000000ull)	/* how long one is trusted */

/* ---- recent discoveries ---------------------------------------------------- */

/*
 * What a discovery was asked (the peer's addresses, the MRC port, the
 * table's EVs, planes and active flags, format, balance) and what it
 * found (each entry's path and active flag). Paths follow from the
 * packets' headers alone, which these determine.
 */
struct cached_discovery {
	uint64_t at_ns;			/* 0 = empty */
	struct in6_addr peers[MRC_MAX_PLANES_ABI];
	uint8_t n_peers, format, balance;
	uint16_t port;
	uint32_t n;
	struct mrc_ev_entry in[MRC_MAX_EVS], out[MRC_MAX_EVS];
};

struct mrc_path_cache {
	struct cached_discovery slot[CACHE_SLOTS];
};

void mrc_discover_cache_free(struct mrc_context *ctx)
{
	free(ctx->path_cache);
	ctx->path_cache = NULL;
}

/* The question of this discovery, into c (its answer not yet filled). */
static void describe(struct cached_discovery *c, const struct mrc_qp *qp,
		     const struct mrc_qp_evs *evs, uint32_t n, uint8_t format,
		     bool balance)
{
	memset(c, 0, sizeof(*c));
	c->n_peers = qp->n_peers < MRC_MAX_PLANES_ABI ? qp->n_peers : MRC_MAX_PLANES_ABI;
	for (uint32_t p = 0; p < c->n_peers; p++)
		c->peers[p] = qp->peers[p].sin6_addr;
	c->format = format;
	c->balance = balance;
	c->port = qp->ctx->udp_port;
	c->n = n;
	memcpy(c->in, evs->ev, n * sizeof(evs->ev[0]));
}

static bool same_question(const struct cached_discovery *a,
			  const struct cached_discovery *b)
{
	return a->n_peers == b->n_peers && a->format == b->format &&
	       a->balance == b->balance && a->port == b->port && a->n == b->n &&
	       !memcmp(a->peers, b->peers, sizeof(a->peers)) &&
	       !memcmp(a->in, b->in, a->n * sizeof(a->in[0]));
}

/* A fresh answer to question q, applied to evs: true if there was one. */
static bool from_cache(struct mrc_context *ctx, const struct cached_discovery *q,
		       struct mrc_qp_evs *evs)
{
	uint64_t now = mrc_now_ns();

	if (!ctx->path_cache)
		return false;
	for (int i = 0; i < CACHE_SLOTS; i++) {
		const struct cached_discovery *c = &ctx->path_cache->slot[i];

		if (c->at_ns && now - c->at_ns < CACHE_TTL_NS && same_question(c, q)) {
			memcpy(evs->ev, c->out, q->n * sizeof(evs->ev[0]));
			return true;
		}
	}
	return false;
}

/* Remember question q with its answer evs, in the oldest slot. */
static void remember(struct mrc_context *ctx, struct cached_discovery *q,
		     const struct mrc_qp_evs *evs)
{
	struct cached_discovery *oldest;

	if (!ctx->path_cache)
		ctx->path_cache = calloc(1, sizeof(*ctx->path_cache));
	if (!ctx->path_cache)
		return;
	oldest = &ctx->path_cache->slot[0];
	for (int i = 1; i < CACHE_SLOTS; i++)
		if (ctx->path_cache->slot[i].at_ns < oldest->at_ns)
			oldest = &ctx->path_cache->slot[i];
	memcpy(q->out, evs->ev, q->n * sizeof(evs->ev[0]));
	q->at_ns = mrc_now_ns();
	*oldest = *q;
}

/* Probe, label and balance: 1 if any spine answered. */
static int discover(struct mrc_qp *qp, struct mrc_qp_evs *evs, uint32_t n,
		    uint8_t format, bool balance)
{
	struct in6_addr peers[MRC_MAX_PLANES_ABI];
	uint32_t n_peers = qp->n_peers < MRC_MAX_PLANES_ABI ? qp->n_peers :
			   MRC_MAX_PLANES_ABI;

	for (uint32_t p = 0; p < n_peers; p++)
		peers[p] = qp->peers[p].sin6_addr;
	if (mrc_host_brokered(qp->ctx))
		return mrc_host_discover(qp->ctx, peers, n_peers, evs, n, format, balance);
	return mrc_path_probe(mrc_map_fd(qp->ctx, MRC_PIN_PLANES), peers, n_peers,
			      qp->ctx->udp_port, evs, n, format, balance);
}

void mrc_discover_paths(struct mrc_qp *qp, struct mrc_qp_evs *evs, uint32_t n,
			uint8_t format, bool balance)
{
	struct cached_discovery *q = malloc(sizeof(*q));	/* 4 KiB: not on the stack */

	if (n > MRC_MAX_EVS)
		n = MRC_MAX_EVS;
	if (!q) {
		discover(qp, evs, n, format, balance);
		return;
	}
	describe(q, qp, evs, n, format, balance);
	/* Only answered discoveries are kept: a silent fabric is asked again. */
	if (!from_cache(qp->ctx, q, evs) && discover(qp, evs, n, format, balance))
		remember(qp->ctx, q, evs);
	free(q);
}
