// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's many-QP client, set-up and end: connect to every server
 * (HOST,HOST,...), create the source buffer, one CQ and N QPs (QP i goes
 * to server i % n_servers), HELLO each server with its share, then take
 * the servers in whatever order their HELLO_ACKs arrive: exchange that
 * server's QP parameters (one mrc_conn_exchange per QP) and bring its QPs
 * to RTS. Taking whichever answers first matters: a server blocks in its
 * exchanges with one client at a time, so a fixed order could wait on a
 * server that waits on another client that waits on us.
 */
#include "multi.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "latency.h"

/* Failed QPs reported one by one up to this many; then only counted. */
#define MAX_QP_REPORTS	8

int mc_fail(struct mclient *c, const char *fmt, ...)
{
	char msg[ERR_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report("%s", msg);
	if (!c->error[0])
		copy_text(c->error, sizeof(c->error), msg);
	return -1;
}

/* A QP failed: count it once, say why (the first few), post no more on it. */
void mc_qp_failed(struct mclient *c, struct mqp *q, const char *fmt, ...)
{
	char msg[ERR_LEN];
	va_list ap;

	if (q->failed)
		return;
	q->failed = true;
	c->qps_in_error++;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!c->error[0])
		copy_text(c->error, sizeof(c->error), msg);
	if (++c->reported_failures <= MAX_QP_REPORTS)
		report("qp %u -> %s: %s", q->local.qpn, c->peers[q->peer].peer_str, msg);
}

int mc_check_alive(struct mclient *c, const char *while_doing)
{
	if (stop_requested)
		return mc_fail(c, "interrupted while %s", while_doing);
	if (now_ns() >= c->deadline_ns)
		return mc_fail(c, "timed out after %u s (--timeout-s) while %s",
			       c->o->timeout_s, while_doing);
	return 0;
}

static struct mqp *mc_qp_of_num(struct mclient *c, uint32_t qpn)
{
	uint32_t i;

	for (i = 0; i < c->n_created; i++)
		if (c->qps[i].local.qpn == qpn)
			return &c->qps[i];
	return NULL;
}

/* Async events: the QP they name is in error. */
void mc_drain_async(struct mclient *c)
{
	struct mrc_async_event ev;
	struct mqp *q;
	int i;

	for (i = 0; i < ASYNC_DRAIN_MAX && mrc_get_async_event(c->ctx, &ev) == 0; i++) {
		q = mc_qp_of_num(c, ev.qp_num);
		if (q)
			mc_qp_failed(c, q, "%s: %s", async_event_name(ev.type),
				     status_str(ev.status));
	}
}

/*
 * Nothing is in flight, but libmrc only progresses in mrc_poll_cq(); a
 * completion now can only be a late failure. Never in the data phase: it
 * would swallow the WRITEs' completions.
 */
int mc_progress_idle(struct mclient *c)
{
	struct mrc_wc wc[POLL_BATCH];
	struct mqp *q;
	int i, n;

	if (!c->cq)
		return 0;
	n = mrc_poll_cq(c->cq, POLL_BATCH, wc);
	if (n < 0)
		return mc_fail(c, "mrc_poll_cq: %s", strerror(-n));
	for (i = 0; i < n; i++)
		if (wc[i].status != MRC_WC_SUCCESS &&
		    (q = mc_qp_of_num(c, wc[i].qp_num)))
			mc_qp_failed(c, q, "WRITE failed: %s (late completion)",
				     status_str(wc[i].status));
	mc_drain_async(c);
	return 0;
}

static int mc_ctl_fail(struct mclient *c, struct mpeer *p, int err, const char *while_doing)
{
	char why[ERR_LEN];

	ctl_describe_error(&p->ctl, err, "server", why, sizeof(why));
	return mc_fail(c, "%s: %s while %s", p->peer_str, why, while_doing);
}

/* 1 and *m when `p` sent a message of `type`, 0 not yet, -1 failed. */
static int mc_poll_peer(struct mclient *c, struct mpeer *p, uint16_t type,
			struct ctl_msg *m, const char *while_doing)
{
	int ret = ctl_poll(&p->ctl, m);

	if (ret < 0)
		return mc_ctl_fail(c, p, ret, while_doing);
	if (ret == 0)
		return 0;
	if (m->type == CTL_ERROR)
		return mc_fail(c, "server %s: %s", p->peer_str, m->text);
	if (m->type != type)
		return mc_fail(c, "protocol error: server %s sent %s, expected %s",
			       p->peer_str, ctl_type_name(m->type), ctl_type_name(type));
	return 1;
}

int mc_await(struct mclient *c, struct mpeer *p, uint16_t type, struct ctl_msg *m,
	     const char *while_doing)
{
	int ret;

	for (;;) {
		if (mc_progress_idle(c))
			return -1;
		ret = mc_poll_peer(c, p, type, m, while_doing);
		if (ret)
			return ret < 0 ? -1 : 0;
		if (mc_check_alive(c, while_doing))
			return -1;
	}
}

/* HOST,HOST,...: one peer each; QP i belongs to peer i % n_peers. */
static int mc_init(struct mclient *c, const struct opts *o)
{
	char *tok, *save = NULL, why[ERR_LEN];
	uint32_t i, n = 1;
	const char *s;

	c->o = o;
	c->deadline_ns = now_ns() + (uint64_t)o->timeout_s * NSEC_PER_SEC;
	c->n_sizes = plan_sizes(o->size_min, o->size_max, c->sizes);
	c->max_size = o->size_max;
	for (s = o->host; *s; s++)
		n += *s == ',';
	c->hosts = strdup(o->host);
	c->peers = calloc(n, sizeof(*c->peers));
	c->n_qps = o->n_qps ? o->n_qps : 1;
	c->qps = calloc(c->n_qps, sizeof(*c->qps));
	c->post_ns = calloc((size_t)c->n_qps * o->depth, sizeof(*c->post_ns));
	c->free_slots = calloc((size_t)c->n_qps * o->depth, sizeof(*c->free_slots));
	c->to_post = calloc(c->n_qps, sizeof(*c->to_post));
	c->hist = calloc(1, sizeof(*c->hist));
	if (!c->hosts || !c->peers || !c->qps || !c->post_ns || !c->free_slots || !c->hist)
		return mc_fail(c, "out of memory for %u QPs", c->n_qps);
	for (tok = strtok_r(c->hosts, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		c->peers[c->n_peers].ctl.fd = -1;
		c->peers[c->n_peers++].host = tok;
	}
	for (i = 0; i < c->n_qps; i++)
		c->peers[i % c->n_peers].n_qps++;
	c->ctx = open_context(o->pin_dir, why, sizeof(why));
	if (!c->ctx)
		return mc_fail(c, "%s", why);
	return 0;
}

static int mc_connect_peer(struct mclient *c, struct mpeer *p)
{
	const struct opts *o = c->o;
	uint64_t retry_until = now_ns() + CONNECT_RETRY_MS * NSEC_PER_MSEC;
	int fd, ret;

	for (;;) {
		if (mc_check_alive(c, "connecting"))
			return -1;
		fd = mrc_conn_connect(p->host, o->port, CONNECT_TIMEOUT_MS);
		if (fd >= 0)
			break;
		/* A server started a moment ago may not be listening yet. */
		if (fd == -ECONNREFUSED && now_ns() < retry_until) {
			sleep_ms(CONNECT_PAUSE_MS);
			continue;
		}
		return mc_fail(c, "cannot connect to %s port %u: %s (is '" PROG
			       " server' running there?)", p->host, o->port, strerror(-fd));
	}
	ctl_init(&p->ctl, fd);
	set_socket_timeouts(fd, EXCHANGE_TIMEOUT_MS);
	ret = socket_peer(fd, &p->peer);
	if (ret)
		return mc_fail(c, "getpeername: %s", strerror(-ret));
	p->family = p->peer.ss_family;
	addr_str(&p->peer, p->peer_str, sizeof(p->peer_str));
	p->n_addrs = mrc_local_addrs(c->ctx, p->family, p->addrs, MRC_MAX_PLANES);
	if (p->n_addrs < 0)
		return mc_fail(c, "mrc_local_addrs: %s", strerror(-p->n_addrs));
	if (p->n_addrs == 0)
		return mc_fail(c, "no MRC plane address of this family (%s, as the "
			       "connection to %s): is mrcd running with --planes?",
			       family_name(p->family), p->peer_str);
	if (p->n_addrs > MRC_MAX_PLANES)
		p->n_addrs = MRC_MAX_PLANES;
	p->mtu = o->mtu ? o->mtu : detect_path_mtu(&p->peer, p->family, p->addrs,
						   p->n_addrs);
	if (!p->mtu)
		p->mtu = MTU_FALLBACK;
	return 0;
}

static int mc_send(struct mclient *c, struct mpeer *p, const struct ctl_msg *m)
{
	int ret = ctl_send(&p->ctl, m);

	if (ret)
		return mc_fail(c, "cannot send %s to %s: %s", ctl_type_name(m->type),
			       p->peer_str, strerror(-ret));
	return 0;
}

static int mc_hello(struct mclient *c, struct mpeer *p)
{
	const struct opts *o = c->o;
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_HELLO);
	m.flags = (o->imm ? CTL_F_IMM : 0) | (o->icrc ? CTL_F_ICRC : 0);
	m.length = c->max_size;	/* per QP; --offset is not included, on purpose */
	m.n_qps = p->n_qps;
	m.depth = o->depth;
	m.timeout_s = o->timeout_s;
	m.ack_timeout = o->ack_timeout;
	m.retry_cnt = o->retry_cnt;
	m.exp_retry_cnt = o->exp_retry_cnt;
	m.mpr_units = o->mpr_units;
	return mc_send(c, p, &m);
}

/* The source buffer, its MR, the CQ and every QP (ENOSPC said plainly). */
static int mc_create_qps(struct mclient *c)
{
	const struct opts *o = c->o;
	struct mrc_qp_init_attr qpa;
	uint64_t cqe = (uint64_t)c->n_qps * o->depth + POLL_BATCH;
	uint32_t i, k;

	c->buf = buffer_alloc(c->max_size, &c->map_len);
	if (!c->buf)
		return mc_fail(c, "cannot allocate %" PRIu64 " bytes: %s", c->max_size,
			       strerror(errno));
	c->mr = mrc_reg_mr(c->ctx, c->buf, c->max_size, MRC_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		return mc_fail(c, "mrc_reg_mr(%" PRIu64 " bytes): %s", c->max_size,
			       strerror(errno));
	c->cq = mrc_create_cq(c->ctx, cqe > MAX_CQE ? MAX_CQE : (int)cqe);
	if (!c->cq)
		return mc_fail(c, "mrc_create_cq: %s", strerror(errno));
	memset(&qpa, 0, sizeof(qpa));
	qpa.send_cq = c->cq;
	qpa.recv_cq = c->cq;
	qpa.max_send_wr = o->depth;
	qpa.max_recv_wr = 1;	/* the client receives no immediates */
	qpa.max_sge = 2;
	qpa.flags = o->icrc ? MRC_QP_ICRC : 0;
	for (i = 0; i < c->n_qps; i++) {
		struct mqp *q = &c->qps[i];
		struct mpeer *p = &c->peers[i % c->n_peers];

		q->qp = mrc_create_qp(c->ctx, &qpa);
		if (!q->qp && errno == ENOSPC)
			return mc_fail(c, "mrc_create_qp: this host is out of QP numbers "
				       "after %u of %u QPs (mrcd's QP limit is reached: "
				       "ENOSPC)", i, c->n_qps);
		if (!q->qp)
			return mc_fail(c, "mrc_create_qp (QP %u of %u): %s", i + 1,
				       c->n_qps, strerror(errno));
		c->n_created = i + 1;
		q->peer = i % c->n_peers;
		fill_conn_params(&q->local, q->qp, p->addrs, p->n_addrs, p->mtu,
				 NULL, NULL, 0);
		for (k = 0; k < o->depth; k++)
			c->free_slots[(size_t)i * o->depth + k] = o->depth - 1 - k;
		q->n_free = o->depth;
	}
	return 0;
}

static int mc_bring_up_qp(struct mclient *c, struct mpeer *p, struct mqp *q)
{
	struct qp_tuning t;
	const char *step;
	char why[ERR_LEN];
	int ret;

	ret = mrc_conn_exchange(p->ctl.fd, &q->local, &q->remote);
	if (ret)
		return mc_fail(c, "QP parameter exchange with %s failed: %s", p->peer_str,
			       ret == -EAGAIN || ret == -EWOULDBLOCK ? "timed out"
								     : strerror(-ret));
	if (check_peer_params(&q->remote, why, sizeof(why)))
		return mc_fail(c, "server %s: %s", p->peer_str, why);
	if (!q->remote.rkey || q->remote.length < c->max_size)
		return mc_fail(c, "server %s offered a region of %" PRIu64 " bytes "
			       "(rkey 0x%x), asked for %" PRIu64, p->peer_str,
			       q->remote.length, q->remote.rkey, c->max_size);
	t = client_qp_tuning(c->o, q->local.path_mtu, q->remote.path_mtu);
	ret = qp_bring_up(q->qp, &q->local, &q->remote, &t, &step);
	if (ret)
		return mc_fail(c, "mrc_modify_qp(%s, qp %u): %s", step, q->local.qpn,
			       strerror(-ret));
	return 0;
}

/* HELLO_ACK from `p`: exchange and bring up each of its QPs, in order. */
static int mc_peer_up(struct mclient *c, struct mpeer *p, const struct ctl_msg *ack)
{
	uint32_t i, idx = (uint32_t)(p - c->peers);

	if (ack->n_qps != p->n_qps)
		return mc_fail(c, "server %s set up %u QPs, asked for %u", p->peer_str,
			       ack->n_qps, p->n_qps);
	for (i = idx; i < c->n_qps; i += c->n_peers)
		if (mc_bring_up_qp(c, p, &c->qps[i]))
			return -1;
	/* A control message ends libmrc's idle sleeps. */
	if (mrc_add_wait_fd(c->ctx, p->ctl.fd))
		report("mrc_add_wait_fd failed: idle sleeps may be long");
	p->up = true;
	return 0;
}

/* Every server, whichever answers first, until all QPs are RTS. */
static int mc_connect_qps(struct mclient *c)
{
	uint32_t i, left = c->n_peers;
	struct ctl_msg m;
	int ret;

	while (left) {
		if (mc_progress_idle(c) || mc_check_alive(c, "setting up QPs"))
			return -1;
		for (i = 0; i < c->n_peers; i++) {
			struct mpeer *p = &c->peers[i];

			if (p->up)
				continue;
			ret = mc_poll_peer(c, p, CTL_HELLO_ACK, &m,
					   "waiting for HELLO_ACK");
			if (ret < 0 || (ret == 1 && mc_peer_up(c, p, &m)))
				return -1;
			left -= (uint32_t)ret;
		}
	}
	return 0;
}

static int mc_setup(struct mclient *c)
{
	uint64_t start;
	uint32_t i;

	for (i = 0; i < c->n_peers; i++)
		if (mc_connect_peer(c, &c->peers[i]))
			return -1;
	start = now_ns();
	for (i = 0; i < c->n_peers; i++)
		if (mc_hello(c, &c->peers[i]))
			return -1;
	if (mc_create_qps(c) || mc_connect_qps(c))
		return -1;
	c->setup_seconds = (double)(now_ns() - start) / 1e9;
	report("%u QPs to %u server%s up in %.3f s: %s%s, path_mtu %u, depth %u each",
	       c->n_qps, c->n_peers, c->n_peers == 1 ? "" : "s", c->setup_seconds,
	       c->peers[0].peer_str, c->n_peers > 1 ? ", ..." : "",
	       c->qps[0].local.path_mtu < c->qps[0].remote.path_mtu ?
	       c->qps[0].local.path_mtu : c->qps[0].remote.path_mtu, c->o->depth);
	return 0;
}

/* Tell the live servers why we stop, so they clean up at once. */
static void mc_abort(struct mclient *c)
{
	struct ctl_msg m;
	uint32_t i;

	ctl_msg_init(&m, CTL_ABORT);
	copy_text(m.text, sizeof(m.text), c->error);
	for (i = 0; i < c->n_peers; i++)
		if (ctl_alive(&c->peers[i].ctl))
			ctl_send(&c->peers[i].ctl, &m);	/* best effort */
}

/* The QPs' counters, summed: what --json reports as the run's. */
static void mc_sum_counters(struct mclient *c)
{
	struct mrc_qp_counters q;
	uint32_t i;

	memset(&c->cnt, 0, sizeof(c->cnt));
	for (i = 0; i < c->n_created; i++) {
		memset(&q, 0, sizeof(q));
		if (mrc_qp_counters(c->qps[i].qp, &q))
			continue;
		if (i == 0)
			c->cnt.wait = q.wait;	/* the context's */
		c->cnt.tx_retransmits += q.tx_retransmits;
		c->cnt.retx_bytes += q.retx_bytes;
		c->cnt.tx_packets += q.tx_packets;
		c->cnt.sack_reneges += q.sack_reneges;
		c->cnt.timeouts += q.timeouts;
		c->cnt.fast_retransmits += q.fast_retransmits;
		c->cnt.tail_probes += q.tail_probes;
		c->cnt.resends_held += q.resends_held;
		c->cnt.plane_sends_refused += q.plane_sends_refused;
		c->cnt.cc_blocked += q.cc_blocked;
		c->cnt.cc_paced += q.cc_paced;
		c->cnt.cc_sleeps += q.cc_sleeps;
		c->cnt.tx_gso_sends += q.tx_gso_sends;
		c->cnt.gso_fallbacks += q.gso_fallbacks;
	}
}

static void mc_cleanup(struct mclient *c)
{
	uint32_t i;
	int ret;

	/* QPs before the CQ before the MR: each is in use by the one before. */
	for (i = 0; i < c->n_created; i++)
		if ((ret = mrc_destroy_qp(c->qps[i].qp)))
			report("mrc_destroy_qp: %s", strerror(-ret));
	if (c->cq && (ret = mrc_destroy_cq(c->cq)))
		report("mrc_destroy_cq: %s", strerror(-ret));
	if (c->mr && (ret = mrc_dereg_mr(c->mr)))
		report("mrc_dereg_mr: %s", strerror(-ret));
	if (c->buf)
		munmap(c->buf, c->map_len);
	for (i = 0; i < c->n_peers; i++)
		if (c->peers[i].ctl.fd >= 0)
			close(c->peers[i].ctl.fd);
	if (c->ctx && (ret = mrc_close(c->ctx)))
		report("mrc_close: %s", strerror(-ret));
	free(c->qps);
	free(c->peers);
	free(c->hosts);
	free(c->post_ns);
	free(c->to_post);
	free(c->free_slots);
	free(c->hist);
}

int run_multi_client(const struct opts *o)
{
	struct mclient *c = calloc(1, sizeof(*c));
	int ret;

	if (!c) {
		report("out of memory");
		return EXIT_RUNTIME;
	}
	if (!mc_init(c, o) && !mc_setup(c)) {
		c->started = true;
		if (!mc_settle(c) && !mc_run_sizes(c) && !mc_linger(c))
			mc_done(c);
	}
	mc_sum_counters(c);
	if (c->error[0])
		mc_abort(c);
	if (o->json)
		mc_print_json(c);
	else if (c->started)
		mc_print_summary(c);
	fflush(stdout);
	ret = c->error[0] ? EXIT_RUNTIME : 0;
	mc_cleanup(c);
	free(c);
	return ret;
}
