// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf client: the run from start to end. Connect to the server, set
 * up buffer, MR, CQ and QP, HELLO and the QP exchange, bring the QP up,
 * hand over to the data phase (sweep.c), DONE, then the output (report.c)
 * and the clean-up. Every wait polls the CQ: libmrc only progresses there.
 */
#include "perf.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "client.h"
#include "latency.h"

int __attribute__((format(printf, 2, 3)))
client_fail(struct client *c, const char *fmt, ...)
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

int client_ctl_fail(struct client *c, int err, const char *while_doing)
{
	char why[ERR_LEN];

	ctl_describe_error(&c->ctl, err, "server", why, sizeof(why));
	return client_fail(c, "%s while %s", why, while_doing);
}

int client_check_alive(struct client *c, const char *while_doing)
{
	if (stop_requested)
		return client_fail(c, "interrupted while %s", while_doing);
	if (now_ns() >= c->deadline_ns)
		return client_fail(c, "timed out after %u s (--timeout-s) while %s",
				   c->o->timeout_s, while_doing);
	return 0;
}

static int client_remaining_ms(const struct client *c)
{
	uint64_t now = now_ns();
	uint64_t ms = now >= c->deadline_ns ? 0 : (c->deadline_ns - now) / NSEC_PER_MSEC;

	return ms > INT_MAX ? INT_MAX : (int)ms;
}

static int client_init(struct client *c, const struct opts *o)
{
	char why[ERR_LEN];
	uint32_t i;

	memset(c, 0, sizeof(*c));
	c->o = o;
	c->ctl.fd = -1;
	c->cc.fd_qps = c->cc.fd_view = -1;
	c->cctl = client_cc_timeline;
	c->deadline_ns = now_ns() + (uint64_t)o->timeout_s * NSEC_PER_SEC;
	c->n_sizes = plan_sizes(o->size_min, o->size_max, c->sizes);
	c->max_size = o->size_max;
	c->slots = calloc(o->depth, sizeof(*c->slots));
	c->free_slots = calloc(o->depth, sizeof(*c->free_slots));
	c->hist = calloc(1, sizeof(*c->hist));
	if (!c->slots || !c->free_slots || !c->hist)
		return client_fail(c, "out of memory");
	for (i = 0; i < o->depth; i++)
		c->free_slots[i] = o->depth - 1 - i;
	c->n_free = o->depth;
	c->ctx = open_context(o->pin_dir, why, sizeof(why));
	if (!c->ctx)
		return client_fail(c, "%s", why);
	return 0;
}

static int client_connect(struct client *c)
{
	const struct opts *o = c->o;
	uint64_t retry_until = now_ns() + CONNECT_RETRY_MS * NSEC_PER_MSEC;
	int fd, ret, ms;

	for (;;) {
		if (client_check_alive(c, "connecting"))
			return -1;
		ms = client_remaining_ms(c);
		fd = mrc_conn_connect(o->host, o->port,
				      ms < CONNECT_TIMEOUT_MS ? ms : CONNECT_TIMEOUT_MS);
		if (fd >= 0)
			break;
		/* A server started a moment ago may not be listening yet. */
		if (fd == -ECONNREFUSED && now_ns() < retry_until) {
			sleep_ms(CONNECT_PAUSE_MS);
			continue;
		}
		return client_fail(c, "cannot connect to %s port %u: %s (is '" PROG
				   " server' running there?)", o->host, o->port,
				   strerror(-fd));
	}
	ctl_init(&c->ctl, fd);
	ret = socket_peer(fd, &c->peer);
	if (ret)
		return client_fail(c, "getpeername: %s", strerror(-ret));
	c->family = c->peer.ss_family;
	addr_str(&c->peer, c->peer_str, sizeof(c->peer_str));
	return 0;
}

/* Source buffer, MR, CQ and QP; and what to tell the server about them. */
static int client_create_resources(struct client *c)
{
	const struct opts *o = c->o;
	struct sockaddr_storage addrs[MRC_MAX_PLANES];
	struct mrc_qp_init_attr qpa;
	uint32_t mtu = o->mtu;
	int n;

	n = mrc_local_addrs(c->ctx, c->family, addrs, MRC_MAX_PLANES);
	if (n < 0)
		return client_fail(c, "mrc_local_addrs: %s", strerror(-n));
	if (n == 0)
		return client_fail(c, "no MRC plane address of this family (%s, as the "
				   "connection to %s): is mrcd running with --planes?",
				   family_name(c->family), c->peer_str);
	if (n > MRC_MAX_PLANES)
		n = MRC_MAX_PLANES;
	if (!mtu) {
		mtu = detect_path_mtu(&c->peer, c->family, addrs, n);
		if (!mtu) {
			report("cannot tell the MTU towards %s: using path_mtu %d",
			       c->peer_str, MTU_FALLBACK);
			mtu = MTU_FALLBACK;
		}
	}

	c->buf = buffer_alloc(c->max_size, &c->map_len);
	if (!c->buf)
		return client_fail(c, "cannot allocate %" PRIu64 " bytes: %s",
				   c->max_size, strerror(errno));
	c->mr = mrc_reg_mr(c->ctx, c->buf, c->max_size, MRC_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		return client_fail(c, "mrc_reg_mr(%" PRIu64 " bytes): %s",
				   c->max_size, strerror(errno));
	c->cq = mrc_create_cq(c->ctx, (int)o->depth + POLL_BATCH);
	if (!c->cq)
		return client_fail(c, "mrc_create_cq: %s", strerror(errno));
	memset(&qpa, 0, sizeof(qpa));
	qpa.send_cq = c->cq;
	qpa.recv_cq = c->cq;
	qpa.max_send_wr = o->depth;
	qpa.max_recv_wr = 1;	/* the client receives no immediates */
	qpa.max_sge = 2;
	qpa.flags = o->icrc ? MRC_QP_ICRC : 0;
	c->qp = mrc_create_qp(c->ctx, &qpa);
	if (!c->qp)
		return client_fail(c, "mrc_create_qp: %s", strerror(errno));
	fill_conn_params(&c->local, c->qp, addrs, n, mtu, NULL, NULL, 0);
	return 0;
}

int client_send(struct client *c, const struct ctl_msg *m)
{
	int ret = ctl_send(&c->ctl, m);

	if (ret)
		return client_fail(c, "cannot send %s to the server: %s",
				   ctl_type_name(m->type), strerror(-ret));
	return 0;
}

/*
 * Nothing of ours is in flight while we wait for the server, but libmrc
 * only progresses in mrc_poll_cq(), so keep calling it; a completion now
 * can only be an error.
 */
static int client_idle_progress(struct client *c)
{
	struct mrc_wc wc[POLL_BATCH];
	int i, n;

	if (!c->cq)
		return 0;
	n = mrc_poll_cq(c->cq, POLL_BATCH, wc);
	if (n < 0)
		return client_fail(c, "mrc_poll_cq: %s", strerror(-n));
	cc_timeline_tick(c);
	for (i = 0; i < n; i++)
		if (wc[i].status != MRC_WC_SUCCESS)
			return client_fail(c, "WRITE failed: %s (wr_id %" PRIu64
					   ", late completion, qp %u)",
					   status_str(wc[i].status), wc[i].wr_id,
					   wc[i].qp_num);
	return 0;
}

int client_await(struct client *c, uint16_t type, struct ctl_msg *m,
		 const char *while_doing)
{
	int ret;

	for (;;) {
		if (client_idle_progress(c))
			return -1;
		ret = ctl_poll(&c->ctl, m);
		if (ret < 0)
			return client_ctl_fail(c, ret, while_doing);
		if (ret == 1) {
			if (m->type == CTL_ERROR)
				return client_fail(c, "server error: %s", m->text);
			if (m->type != type)
				return client_fail(c, "protocol error: the server sent %s, "
						   "expected %s", ctl_type_name(m->type),
						   ctl_type_name(type));
			return 0;
		}
		if (client_check_alive(c, while_doing))
			return -1;
	}
}

static int client_hello(struct client *c)
{
	const struct opts *o = c->o;
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_HELLO);
	m.flags = (o->imm ? CTL_F_IMM : 0) | (o->icrc ? CTL_F_ICRC : 0);
	m.length = c->max_size;	/* --offset is not included, on purpose */
	m.depth = o->depth;
	m.timeout_s = o->timeout_s;
	m.ack_timeout = o->ack_timeout;
	m.retry_cnt = o->retry_cnt;
	m.exp_retry_cnt = o->exp_retry_cnt;
	m.mpr_units = o->mpr_units;
	if (client_send(c, &m))
		return -1;
	return client_await(c, CTL_HELLO_ACK, &m, "waiting for the server's HELLO_ACK");
}

static int client_exchange(struct client *c)
{
	char why[ERR_LEN];
	int ms = client_remaining_ms(c), ret;

	set_socket_timeouts(c->ctl.fd, ms < EXCHANGE_TIMEOUT_MS ? ms : EXCHANGE_TIMEOUT_MS);
	ret = mrc_conn_exchange(c->ctl.fd, &c->local, &c->remote);
	/* A control message ends libmrc's idle sleeps. */
	if (!ret)
		ret = mrc_add_wait_fd(c->ctx, c->ctl.fd);
	if (ret) {
		if (client_check_alive(c, "exchanging QP parameters"))
			return -1;
		return client_fail(c, "QP parameter exchange with the server failed: %s",
				   ret == -EAGAIN || ret == -EWOULDBLOCK ? "timed out"
									: strerror(-ret));
	}
	if (check_peer_params(&c->remote, why, sizeof(why)))
		return client_fail(c, "server: %s", why);
	if (!c->remote.rkey || c->remote.length < c->max_size)
		return client_fail(c, "server offered a region of %" PRIu64 " bytes "
				   "(rkey 0x%x), asked for %" PRIu64, c->remote.length,
				   c->remote.rkey, c->max_size);
	return 0;
}

static int client_bring_up_qp(struct client *c)
{
	const struct opts *o = c->o;
	struct qp_tuning t = client_qp_tuning(o, c->local.path_mtu, c->remote.path_mtu);
	const char *step;
	int ret;

	c->path_mtu = t.path_mtu;
	ret = qp_bring_up(c->qp, &c->local, &c->remote, &t, &step);
	if (ret)
		return client_fail(c, "mrc_modify_qp(%s): %s", step, strerror(-ret));
	report("connected to %s port %u: qp %u -> %u, path_mtu %u (ours %u, server's %u), "
	       "depth %u, %u/%u plane addresses, server region 0x%" PRIx64 " rkey 0x%x",
	       c->peer_str, o->port, c->local.qpn,
	       c->remote.qpn, c->path_mtu, c->local.path_mtu, c->remote.path_mtu,
	       o->depth, c->local.n_addrs, c->remote.n_addrs, c->remote.vaddr,
	       c->remote.rkey);
	if (c->max_size + o->offset > c->remote.length || o->offset > c->remote.length)
		report("note: --offset %" PRIu64 " takes WRITEs past the server's "
		       "%" PRIu64 "-byte region", o->offset, c->remote.length);
	return 0;
}

/*
 * The QP is up and nothing is posted (--idle, --linger-s). Poll the CQ as
 * an idle application must (mrc.h: libmrc progresses only there; it
 * sleeps when no QP has anything to do), peek at the control socket now
 * and then (the server may fail), until the time is up.
 */
static int client_stay_idle(struct client *c, uint32_t seconds, const char *what)
{
	uint64_t end = now_ns() + (uint64_t)seconds * NSEC_PER_SEC;
	unsigned int spins = 0;
	struct ctl_msg m;
	int ret;

	report("%s for %u s", what, seconds);
	while (!stop_requested && now_ns() < end) {
		if (client_idle_progress(c) || client_check_alive(c, what))
			return -1;
		if (++spins % CTL_PEEK_EVERY)
			continue;
		ret = ctl_poll(&c->ctl, &m);
		if (ret < 0)
			return client_ctl_fail(c, ret, what);
		if (ret == 1)
			return client_fail(c, m.type == CTL_ERROR ? "server error: %s" :
					   "protocol error: the server sent %s while idle",
					   m.type == CTL_ERROR ? m.text : ctl_type_name(m.type));
	}
	return 0;
}

/* --idle: connected, no transfer at all: what an idle QP costs. */
static int client_idle(struct client *c)
{
	return client_stay_idle(c, c->o->idle_s, "idle");
}

/* --settle-s: before the first WRITE, so a measurement can start in between. */
static int client_settle(struct client *c)
{
	if (!c->o->settle_s)
		return 0;
	return client_stay_idle(c, c->o->settle_s, "settle");
}

/* --linger-s: after the transfer, connected and idle: libmrc must sleep. */
static int client_linger(struct client *c)
{
	if (!c->o->linger_s)
		return 0;
	return client_stay_idle(c, c->o->linger_s, "linger");
}

/* The end: every immediate the server saw, in order, none missing. */
static int client_done(struct client *c)
{
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_DONE);
	m.ops = c->next_op;
	if (client_send(c, &m) ||
	    client_await(c, CTL_DONE_ACK, &m, "waiting for the server's DONE_ACK"))
		return -1;
	if (client_check_imm_flags(c, &m))
		return -1;
	if (c->o->imm && m.imm_count != c->next_op)
		return client_fail(c, "immediates count mismatch: the server received %"
				   PRIu64 ", %" PRIu64 " were posted%s", m.imm_count,
				   c->next_op, m.flags & CTL_F_GAVE_UP ?
				   " (it stopped waiting after 5 s)" : "");
	return 0;
}

/* Tell a live server why we stop, so it cleans up at once. */
static void client_abort(struct client *c)
{
	struct ctl_msg m;

	if (!ctl_alive(&c->ctl))
		return;
	ctl_msg_init(&m, CTL_ABORT);
	copy_text(m.text, sizeof(m.text), c->error);
	ctl_send(&c->ctl, &m);	/* best effort: the server may be gone */
}

static void client_cleanup(struct client *c)
{
	int ret;

	/* QP before CQ before MR: each is in use by the one before. */
	if (c->qp && (ret = mrc_destroy_qp(c->qp)))
		report("mrc_destroy_qp: %s", strerror(-ret));
	if (c->cq && (ret = mrc_destroy_cq(c->cq)))
		report("mrc_destroy_cq: %s", strerror(-ret));
	if (c->mr && (ret = mrc_dereg_mr(c->mr)))
		report("mrc_dereg_mr: %s", strerror(-ret));
	if (c->buf)
		munmap(c->buf, c->map_len);
	if (c->ctl.fd >= 0)
		close(c->ctl.fd);
	if (c->ctx && (ret = mrc_close(c->ctx)))
		report("mrc_close: %s", strerror(-ret));
	free(c->slots);
	free(c->free_slots);
	free(c->hist);
	free(c->cctl.rows);
	cc_view_close(&c->cc);
}

/* Create the QP and bring it up with the server's: setup_seconds. */
static int client_setup_qp(struct client *c)
{
	uint64_t start = now_ns();

	if (client_create_resources(c) || client_hello(c) || client_exchange(c) ||
	    client_bring_up_qp(c))
		return -1;
	c->setup_seconds = (double)(now_ns() - start) / 1e9;
	return 0;
}

int run_client(const struct opts *o)
{
	struct client *c;
	char why[ERR_LEN];
	int ret;

	if (o->n_qps || strchr(o->host, ','))
		return run_multi_client(o);
	/* A FILE we cannot write is a mistake on the command line. */
	if (o->cc_timeline &&
	    timeline_write(o->cc_timeline, &client_cc_timeline, why, sizeof(why))) {
		report("--cc-timeline: %s", why);
		return EXIT_USAGE;
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		report("out of memory");
		return EXIT_RUNTIME;
	}
	if (!client_init(c, o) && !client_connect(c) &&
	    !client_setup_qp(c)) {
		c->started = true;
		if (!(c->o->idle_s ? client_idle(c) :
		      client_settle(c) || client_run_sizes(c))) {
			cc_timeline_end(c);
			if (!client_linger(c))
				client_done(c);
		}
	}
	cc_timeline_end(c);
	client_cc_snapshot(c);
	if (c->error[0])
		client_abort(c);
	if (o->json)
		client_print_json(c);
	else if (c->started)
		client_print_summary(c);
	fflush(stdout);
	ret = c->error[0] ? EXIT_RUNTIME : 0;
	if (o->cc_timeline && !timeline_finish(o->cc_timeline, &c->cctl, "--cc-timeline",
					       c->cc_err[0] ? c->cc_err :
					       "no data phase began") && !ret)
		ret = EXIT_RUNTIME;
	client_cleanup(c);
	free(c);
	return ret;
}
