// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf server: accept clients one after the other and serve each in a
 * session: read HELLO, create the region, CQ and QP it asks for, exchange
 * QP parameters, then poll the CQ without pause (placing data, sending
 * SACKs, checking immediates) while peeking at the control socket for
 * BEGIN, VERIFY and DONE. One line on stderr (and with --json one on
 * stdout) per session.
 */
#include "perf.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/json_out.h"
#include "ctl.h"
#include "timeline.h"

/* Ops [first_op, first_op + ops) are WRITEs of `size` bytes. */
struct size_range {
	uint64_t first_op, ops, size;
};

/* One client, from accept() to close. */
struct session {
	const struct opts *o;
	struct mrc_context *ctx;
	struct ctl_conn ctl;
	struct sockaddr_storage peer;
	char peer_str[ADDR_STR_LEN];
	int family;
	uint64_t deadline_ns;

	struct ctl_msg hello;
	bool imm;
	uint8_t *buf;
	uint64_t len;
	size_t map_len;
	struct mrc_mr *mr;
	struct mrc_cq *cq;
	struct mrc_qp *qp;
	struct mrc_conn_params local, remote;
	uint32_t rq_depth;
	uint64_t next_recv_id;

	struct size_range ranges[MAX_SIZES];
	int n_ranges;
	uint64_t imm_count;
	uint64_t next_imm_op;		/* the op number we expect next */
	bool imm_in_order, imm_len_ok;
	char imm_len_err[CTL_TEXT_LEN];	/* the first byte_len mismatch */

	bool done_pending, done_answered;
	uint64_t done_ops, done_deadline_ns, linger_deadline_ns;
	bool finished;
	char error[ERR_LEN];

	struct timeline tl;		/* --timeline */
};

/*
 * Record the session's first failure and print every one. With
 * `tell_client` the client hears it too (ERROR), unless it is gone.
 */
static int __attribute__((format(printf, 3, 4)))
session_fail(struct session *s, bool tell_client, const char *fmt, ...)
{
	char msg[ERR_LEN];
	struct ctl_msg m;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	report("client %s: %s", s->peer_str, msg);
	if (s->error[0])
		return -1;
	copy_text(s->error, sizeof(s->error), msg);
	if (tell_client && ctl_alive(&s->ctl)) {
		ctl_msg_init(&m, CTL_ERROR);
		m.status = EPROTO;
		copy_text(m.text, sizeof(m.text), msg);
		ctl_send(&s->ctl, &m);
	}
	return -1;
}

static int session_ctl_fail(struct session *s, int err, const char *while_doing)
{
	char why[ERR_LEN];

	ctl_describe_error(&s->ctl, err, "client", why, sizeof(why));
	/* A peer that speaks another version deserves to hear ours. */
	return session_fail(s, err == -EPROTONOSUPPORT || err == -EBADMSG,
			    "%s while %s", why, while_doing);
}

static int session_init(struct session *s, const struct opts *o,
			struct mrc_context *ctx, int fd)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->ctx = ctx;
	s->tl = server_timeline;
	ctl_init(&s->ctl, fd);
	s->imm_in_order = true;
	s->imm_len_ok = true;
	s->deadline_ns = now_ns() + HELLO_WAIT_MS * NSEC_PER_MSEC;
	copy_text(s->peer_str, sizeof(s->peer_str), "?");
	ret = socket_peer(fd, &s->peer);
	if (ret)
		return session_fail(s, false, "getpeername: %s", strerror(-ret));
	s->family = s->peer.ss_family;
	addr_str(&s->peer, s->peer_str, sizeof(s->peer_str));
	set_socket_timeouts(fd, EXCHANGE_TIMEOUT_MS);
	report("client %s connected", s->peer_str);
	return 0;
}

static int session_check_hello(struct session *s, const struct ctl_msg *m)
{
	/* A client can fail before HELLO (no plane address of the family). */
	if (m->type == CTL_ABORT)
		return session_fail(s, false, "client aborted: %s",
				    m->text[0] ? m->text : "?");
	if (m->type != CTL_HELLO)
		return session_fail(s, true, "protocol error: %s before HELLO",
				    ctl_type_name(m->type));
	if (!m->length || m->length > MAX_MSG_SIZE)
		return session_fail(s, true, "HELLO asks for a %" PRIu64 "-byte region "
				    "(1..%llu)", m->length, MAX_MSG_SIZE);
	if (!m->depth || m->depth > MAX_SEND_WR)
		return session_fail(s, true, "HELLO has depth %u (1..%d)", m->depth,
				    MAX_SEND_WR);
	if (m->mpr_units < MPR_MIN || m->mpr_units > MPR_MAX ||
	    m->ack_timeout < ACK_TIMEOUT_MIN || m->ack_timeout > ACK_TIMEOUT_MAX ||
	    m->retry_cnt > RETRY_MAX || m->exp_retry_cnt > EXP_RETRY_MAX)
		return session_fail(s, true, "HELLO has QP attributes out of range "
				    "(mpr %u, timeout %u, retry %u, exp-retry %u)",
				    m->mpr_units, m->ack_timeout, m->retry_cnt,
				    m->exp_retry_cnt);
	if (!m->timeout_s || m->timeout_s > MAX_TIMEOUT_S)
		return session_fail(s, true, "HELLO has timeout %u s (1..%d)",
				    m->timeout_s, MAX_TIMEOUT_S);
	return 0;
}

/*
 * Before HELLO the context holds no QP, so there is no transport to drive
 * and a short blocking poll() is fine here (and only here).
 */
static int session_read_hello(struct session *s)
{
	struct pollfd pfd = { .fd = s->ctl.fd, .events = POLLIN };
	int ret;

	for (;;) {
		ret = ctl_poll(&s->ctl, &s->hello);
		if (ret == 1)
			break;
		if (ret < 0)
			return session_ctl_fail(s, ret, "waiting for HELLO");
		if (stop_requested)
			return session_fail(s, true, "interrupted");
		if (now_ns() >= s->deadline_ns)
			return session_fail(s, true, "no HELLO within %d s",
					    HELLO_WAIT_MS / 1000);
		poll(&pfd, 1, 100);
	}
	if (session_check_hello(s, &s->hello))
		return -1;
	s->imm = s->hello.flags & CTL_F_IMM;
	s->len = s->hello.length;
	s->deadline_ns = now_ns() +
		(uint64_t)(s->hello.timeout_s + SESSION_GRACE_S) * NSEC_PER_SEC;
	return 0;
}

static int session_post_recv(struct session *s)
{
	struct mrc_recv_wr wr = { .wr_id = s->next_recv_id++ };
	int ret = mrc_post_recv(s->qp, &wr);

	if (ret)
		return session_fail(s, true, "mrc_post_recv: %s", strerror(-ret));
	return 0;
}

/* Region, MR, CQ, QP and receives as HELLO asked; then HELLO_ACK. */
static int session_create_resources(struct session *s)
{
	struct sockaddr_storage addrs[MRC_MAX_PLANES];
	struct mrc_qp_init_attr qpa;
	struct ctl_msg m;
	uint32_t mtu, i;
	int n, ret;

	n = mrc_local_addrs(s->ctx, s->family, addrs, MRC_MAX_PLANES);
	if (n < 0)
		return session_fail(s, true, "mrc_local_addrs: %s", strerror(-n));
	if (n == 0)
		return session_fail(s, true, "no MRC plane address of this family (%s): "
				    "is mrcd running with --planes?",
				    family_name(s->family));
	if (n > MRC_MAX_PLANES)
		n = MRC_MAX_PLANES;
	/* Unknown here means "no limit from this side": the client's choice
	 * (its --mtu, or its own detection) decides. */
	mtu = detect_path_mtu(&s->peer, s->family, addrs, n);
	if (!mtu)
		mtu = MTU_MAX;

	s->buf = buffer_alloc(s->len, &s->map_len);
	if (!s->buf)
		return session_fail(s, true, "cannot allocate a %" PRIu64 "-byte region: %s",
				    s->len, strerror(errno));
	s->mr = mrc_reg_mr(s->ctx, s->buf, s->len,
			   MRC_ACCESS_REMOTE_WRITE | MRC_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		return session_fail(s, true, "mrc_reg_mr(%" PRIu64 " bytes): %s", s->len,
				    strerror(errno));

	/* Twice the client's depth: a receive is consumed when data lands,
	 * and reposted only when we poll its completion. */
	s->rq_depth = 1;
	if (s->imm)
		s->rq_depth = 2 * s->hello.depth < MAX_RECV_WR ? 2 * s->hello.depth
							       : MAX_RECV_WR;
	s->cq = mrc_create_cq(s->ctx, (int)s->rq_depth + POLL_BATCH);
	if (!s->cq)
		return session_fail(s, true, "mrc_create_cq: %s", strerror(errno));
	memset(&qpa, 0, sizeof(qpa));
	qpa.send_cq = s->cq;
	qpa.recv_cq = s->cq;
	qpa.max_send_wr = 1;	/* the server only receives */
	qpa.max_recv_wr = s->rq_depth;
	qpa.max_sge = 1;
	s->qp = mrc_create_qp(s->ctx, &qpa);
	if (!s->qp)
		return session_fail(s, true, "mrc_create_qp: %s", strerror(errno));
	for (i = 0; s->imm && i < s->rq_depth; i++)
		if (session_post_recv(s))
			return -1;
	fill_conn_params(&s->local, s->qp, addrs, n, mtu, s->mr, s->buf, s->len);

	ctl_msg_init(&m, CTL_HELLO_ACK);
	m.length = s->len;
	ret = ctl_send(&s->ctl, &m);
	if (ret)
		return session_fail(s, false, "cannot send HELLO_ACK: %s", strerror(-ret));
	return 0;
}

static int session_connect_qp(struct session *s)
{
	struct qp_tuning t = {
		.mpr_units = s->hello.mpr_units,
		.ack_timeout = s->hello.ack_timeout,
		.retry_cnt = s->hello.retry_cnt,
		.exp_retry_cnt = s->hello.exp_retry_cnt,
		.imm = s->imm,
		.wimm_out = 1,
		.wimm_in = (uint16_t)s->rq_depth,
		.cc_profile = s->o->cc_profile,
		.ev_profile = s->o->ev_profile,
	};
	const char *step;
	char why[ERR_LEN];
	int ret;

	ret = mrc_conn_exchange(s->ctl.fd, &s->local, &s->remote);
	/* A control message ends libmrc's idle sleeps (closing the fd removes it). */
	if (!ret)
		ret = mrc_add_wait_fd(s->ctx, s->ctl.fd);
	if (ret)
		/* The stream is mid-exchange: an ERROR would only confuse it. */
		return session_fail(s, false, "QP parameter exchange failed: %s",
				    ret == -EAGAIN || ret == -EWOULDBLOCK ? "timed out"
									  : strerror(-ret));
	if (check_peer_params(&s->remote, why, sizeof(why)))
		return session_fail(s, true, "%s", why);
	t.path_mtu = s->local.path_mtu < s->remote.path_mtu ? s->local.path_mtu
							     : s->remote.path_mtu;
	ret = qp_bring_up(s->qp, &s->local, &s->remote, &t, &step);
	if (ret)
		return session_fail(s, true, "mrc_modify_qp(%s): %s", step, strerror(-ret));
	report("client %s: qp %u -> %u, path_mtu %u, %" PRIu64 "-byte region%s",
	       s->peer_str, s->local.qpn, s->remote.qpn, t.path_mtu, s->len,
	       s->imm ? ", immediates" : "");
	return 0;
}

static uint64_t session_size_of_op(const struct session *s, uint64_t op)
{
	int i;

	for (i = 0; i < s->n_ranges; i++)
		if (op >= s->ranges[i].first_op &&
		    op - s->ranges[i].first_op < s->ranges[i].ops)
			return s->ranges[i].size;
	return 0;
}

/*
 * A WRITE-IMM landed: its immediate must be the next op number (the client
 * counts from 0 across the whole run) and its length that op's size.
 */
static void session_check_imm(struct session *s, const struct mrc_wc *wc)
{
	uint64_t op = s->next_imm_op, size;

	if (wc->imm_data != (uint32_t)op) {
		if (s->imm_in_order)
			report("client %s: immediate %u arrived, expected %u",
			       s->peer_str, wc->imm_data, (uint32_t)op);
		s->imm_in_order = false;
		op = (op & ~0xffffffffULL) | wc->imm_data;
	}
	s->next_imm_op = op + 1;
	s->imm_count++;
	size = session_size_of_op(s, op);
	if (wc->byte_len != size && s->imm_len_ok) {
		s->imm_len_ok = false;
		snprintf(s->imm_len_err, sizeof(s->imm_len_err),
			 "op %" PRIu64 " arrived with byte_len %u, expected %" PRIu64,
			 op, wc->byte_len, size);
		report("client %s: %s", s->peer_str, s->imm_len_err);
	}
}

static void session_handle_wc(struct session *s, const struct mrc_wc *wc)
{
	if (wc->status != MRC_WC_SUCCESS) {
		session_fail(s, true, "%s completion failed: %s",
			     wc->opcode == MRC_WC_RECV_WRITE_IMM ? "receive" : "WRITE",
			     status_str(wc->status));
		return;
	}
	if (wc->opcode != MRC_WC_RECV_WRITE_IMM)
		return;
	session_check_imm(s, wc);
	session_post_recv(s);	/* keep rq_depth receives posted */
}

/* Drive libmrc: place data, send SACKs, consume immediates. */
static void session_progress(struct session *s)
{
	struct mrc_wc wc[POLL_BATCH];
	int i, n = mrc_poll_cq(s->cq, POLL_BATCH, wc);

	if (n < 0) {
		session_fail(s, true, "mrc_poll_cq: %s", strerror(-n));
		return;
	}
	for (i = 0; i < n && !s->error[0]; i++)
		session_handle_wc(s, &wc[i]);
	timeline_tick(&s->tl, s->qp);
}

/* Events of our QP end the session; others are leftovers of old ones. */
static void session_check_async_events(struct session *s)
{
	struct mrc_async_event ev;
	int n;

	for (n = 0; n < ASYNC_DRAIN_MAX && mrc_get_async_event(s->ctx, &ev) == 0; n++) {
		if (s->qp && ev.qp_num == s->local.qpn)
			session_fail(s, true, "%s on qp %u: %s", async_event_name(ev.type),
				     ev.qp_num, status_str(ev.status));
		else
			report("async event: %s on qp %u (not this session's): %s",
			       async_event_name(ev.type), ev.qp_num,
			       status_str(ev.status));
	}
}

static int session_reply(struct session *s, struct ctl_msg *m)
{
	int ret;

	m->imm_count = s->imm_count;
	m->flags |= (s->imm_in_order ? CTL_F_IMM_IN_ORDER : 0) |
		    (s->imm_len_ok ? CTL_F_IMM_LEN_OK : 0);
	if (!s->imm_len_ok && !m->text[0])
		copy_text(m->text, sizeof(m->text), s->imm_len_err);
	ret = ctl_send(&s->ctl, m);
	if (ret)
		return session_fail(s, false, "cannot send %s: %s",
				    ctl_type_name(m->type), strerror(-ret));
	return 0;
}

static void session_begin(struct session *s, const struct ctl_msg *req)
{
	struct size_range *r;
	struct ctl_msg m;

	if (s->n_ranges == MAX_SIZES) {
		session_fail(s, true, "more than %d sizes in one run", MAX_SIZES);
		return;
	}
	if (!req->length || req->length > s->len) {
		session_fail(s, true, "BEGIN for %" PRIu64 "-byte WRITEs, HELLO said at "
			     "most %" PRIu64, req->length, s->len);
		return;
	}
	/* The client's first data phase starts: time_ms 0 of --timeline. */
	if (s->o->timeline && !s->tl.started)
		timeline_start(&s->tl, 0);	/* rx_bytes starts at 0 with the QP */
	r = &s->ranges[s->n_ranges++];
	r->first_op = req->offset;
	r->ops = req->ops;
	r->size = req->length;
	ctl_msg_init(&m, CTL_BEGIN_ACK);
	session_reply(s, &m);
}

/* Checksum a range in chunks, polling the CQ between them: hashing 1 GiB
 * takes long enough to starve the transport otherwise. */
static int session_checksum(struct session *s, uint64_t off, uint64_t len,
			    uint64_t *out)
{
	uint64_t h = CSUM_INIT, n;

	while (len) {
		n = len < CHECKSUM_CHUNK ? len : CHECKSUM_CHUNK;
		h = csum_update(h, s->buf + off, n);
		off += n;
		len -= n;
		session_progress(s);
		if (s->error[0])
			return -1;
	}
	*out = h;
	return 0;
}

static void session_verify(struct session *s, const struct ctl_msg *req)
{
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_VERIFY_ACK);
	if (req->offset > s->len || req->length > s->len - req->offset) {
		m.status = ERANGE;
		snprintf(m.text, sizeof(m.text), "bytes [%" PRIu64 ", %" PRIu64
			 ") are outside the %" PRIu64 "-byte region", req->offset,
			 req->offset + req->length, s->len);
	} else if (session_checksum(s, req->offset, req->length, &m.checksum)) {
		return;
	}
	session_reply(s, &m);
}

/* DONE waits for the immediates still on their way, 5 s at most. */
static void session_try_answer_done(struct session *s)
{
	struct ctl_msg m;
	uint64_t now = now_ns();

	if (s->imm && s->imm_count < s->done_ops && now < s->done_deadline_ns)
		return;
	ctl_msg_init(&m, CTL_DONE_ACK);
	if (s->imm && s->imm_count < s->done_ops)
		m.flags |= CTL_F_GAVE_UP;
	s->done_pending = false;
	s->done_answered = true;
	s->linger_deadline_ns = now + LINGER_MS * NSEC_PER_MSEC;
	session_reply(s, &m);
}

static void session_handle_msg(struct session *s, const struct ctl_msg *m)
{
	switch (m->type) {
	case CTL_BEGIN:
		session_begin(s, m);
		break;
	case CTL_VERIFY:
		session_verify(s, m);
		break;
	case CTL_DONE:
		/* Every WRITE completed at the client, so every byte is placed. */
		timeline_stop(&s->tl, s->qp);
		s->done_pending = true;
		s->done_ops = m->ops;
		s->done_deadline_ns = now_ns() + DONE_GRACE_MS * NSEC_PER_MSEC;
		break;
	case CTL_ABORT:
		session_fail(s, false, "client aborted: %s", m->text[0] ? m->text : "?");
		break;
	default:
		session_fail(s, true, "protocol error: unexpected %s",
			     ctl_type_name(m->type));
		break;
	}
}

/* Peek at the control socket: messages, a close, the deadlines. */
static void session_check_control(struct session *s)
{
	struct ctl_msg m;
	int ret = ctl_poll(&s->ctl, &m);

	if (ret == 1) {
		session_handle_msg(s, &m);
	} else if (ret == -ECONNRESET && s->done_answered) {
		s->finished = true;	/* the normal end */
	} else if (ret < 0) {
		session_ctl_fail(s, ret, s->done_pending ? "waiting for immediates"
							 : "the run was going on");
	} else if (stop_requested) {
		session_fail(s, true, "interrupted");
	} else if (s->done_answered && now_ns() >= s->linger_deadline_ns) {
		s->finished = true;	/* answered everything; it may keep its socket */
	} else if (now_ns() >= s->deadline_ns) {
		session_fail(s, true, "session timed out after %u s",
			     s->hello.timeout_s + SESSION_GRACE_S);
	}
}

/*
 * The session's main loop. Polling the CQ is what moves the transport, so
 * it runs all the time; the socket is peeked at every few polls.
 */
static void session_serve(struct session *s)
{
	unsigned int spins = 0;

	while (!s->error[0] && !s->finished) {
		session_progress(s);
		if (s->done_pending && !s->error[0])
			session_try_answer_done(s);
		if (++spins % CTL_PEEK_EVERY == 0 && !s->error[0]) {
			session_check_async_events(s);
			if (!s->error[0])
				session_check_control(s);
		}
	}
}

static void session_report(struct session *s)
{
	struct mrc_qp_counters cnt;
	bool modified;
	int ret;

	memset(&cnt, 0, sizeof(cnt));
	if (s->qp) {
		session_check_async_events(s);
		ret = mrc_qp_counters(s->qp, &cnt);
		if (ret)
			report("client %s: mrc_qp_counters: %s", s->peer_str, strerror(-ret));
	}
	modified = s->buf && buffer_is_modified(s->buf, s->len);

	report("client %s: %" PRIu64 " bytes received, %" PRIu64 " immediates%s, "
	       "region %s: %s", s->peer_str, (uint64_t)cnt.rx_bytes, s->imm_count,
	       s->imm_in_order ? "" : " OUT OF ORDER",
	       modified ? "modified" : "untouched", s->error[0] ? s->error : "ok");
	if (!s->o->json)
		return;
	printf("{\"client\": ");
	json_string(stdout, s->peer_str);
	printf(", \"bytes_received\": %" PRIu64 ", \"imm_received\": %" PRIu64
	       ", \"imm_in_order\": %s, \"region_modified\": %s"
	       ", \"timeline_t0_ns\": %" PRIu64,
	       (uint64_t)cnt.rx_bytes, s->imm_count, s->imm_in_order ? "true" : "false",
	       modified ? "true" : "false", s->tl.t0_ns);
	printf(", \"sacks_sent\": %" PRIu64 ", \"sacks_coalesced\": %" PRIu64,
	       (uint64_t)cnt.sacks_sent, (uint64_t)cnt.sacks_coalesced);
	json_wait_stats(stdout, &cnt);
	printf(", \"error\": ");
	json_error(stdout, s->error);
	printf("}\n");
	fflush(stdout);
}

static void session_cleanup(struct session *s)
{
	int ret;

	if (s->qp && (ret = mrc_destroy_qp(s->qp)))
		report("client %s: mrc_destroy_qp: %s", s->peer_str, strerror(-ret));
	if (s->cq && (ret = mrc_destroy_cq(s->cq)))
		report("client %s: mrc_destroy_cq: %s", s->peer_str, strerror(-ret));
	if (s->mr && (ret = mrc_dereg_mr(s->mr)))
		report("client %s: mrc_dereg_mr: %s", s->peer_str, strerror(-ret));
	if (s->buf)
		munmap(s->buf, s->map_len);
	if (s->ctl.fd >= 0)
		close(s->ctl.fd);
	free(s->tl.rows);
	/* Whatever the dead QP still reports must not blame the next client. */
	print_async_events(s->ctx);
}

/* --timeline after the session (see timeline_finish() in timeline.c). */
static bool session_write_timeline(struct session *s)
{
	char who[ADDR_STR_LEN + 32];

	snprintf(who, sizeof(who), "client %s: timeline", s->peer_str);
	return timeline_finish(s->o->timeline, &s->tl, who, "no data phase began");
}

/* Serve one client to the end; false if its session failed. */
static bool serve_client(const struct opts *o, struct mrc_context *ctx, int fd)
{
	struct session *s = calloc(1, sizeof(*s));
	char why[ERR_LEN];
	bool ok, tl_ok = true;

	if (!s) {
		report("out of memory");
		close(fd);
		return false;
	}
	/* --timeline holds the most recent session: no stale rows meanwhile. */
	if (o->timeline && timeline_write(o->timeline, &server_timeline, why, sizeof(why))) {
		report("timeline: %s", why);
		tl_ok = false;
	}
	if (!session_init(s, o, ctx, fd) && !session_read_hello(s) &&
	    !session_create_resources(s) && !session_connect_qp(s))
		session_serve(s);
	if (s->qp)
		timeline_stop(&s->tl, s->qp);	/* no DONE: it ends here */
	session_report(s);
	if (o->timeline && !session_write_timeline(s))
		tl_ok = false;
	ok = !s->error[0] && tl_ok;
	session_cleanup(s);
	free(s);
	return ok;
}

/* The next client's socket, -1 on a fatal error, -2 when asked to stop. */
static int server_accept(int lfd)
{
	struct pollfd pfd = { .fd = lfd, .events = POLLIN };
	int fd, n;

	while (!stop_requested) {
		n = poll(&pfd, 1, ACCEPT_POLL_MS);
		if (n < 0 && errno != EINTR) {
			report("poll: %s", strerror(errno));
			return -1;
		}
		if (n <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			return fd;
		/* The client may have given up between poll() and accept(). */
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
		    errno == ECONNABORTED || errno == EPROTO)
			continue;
		report("accept: %s", strerror(errno));
		return -1;
	}
	return -2;
}

int run_server(const struct opts *o)
{
	char why[ERR_LEN];
	struct mrc_context *ctx;
	int lfd, fd, ret = 0, flags;

	/* A FILE we cannot write is a mistake on the command line: say so
	 * now, not after the first client. */
	if (o->timeline && timeline_write(o->timeline, &server_timeline, why, sizeof(why))) {
		report("--timeline: %s", why);
		return EXIT_USAGE;
	}
	ctx = open_context(o->pin_dir, why, sizeof(why));
	if (!ctx) {
		report("%s", why);
		return EXIT_RUNTIME;
	}
	lfd = mrc_conn_listen(o->port);
	if (lfd < 0) {
		report("cannot listen on TCP port %u: %s", o->port, strerror(-lfd));
		mrc_close(ctx);
		return EXIT_RUNTIME;
	}
	/* Non-blocking, so a client that vanishes before accept() cannot
	 * leave us stuck in it. */
	flags = fcntl(lfd, F_GETFL);
	if (flags >= 0)
		fcntl(lfd, F_SETFL, flags | O_NONBLOCK);
	report("server listening on TCP port %u", o->port);

	for (;;) {
		fd = server_accept(lfd);
		if (fd == -2)
			break;	/* SIGINT/SIGTERM: a normal end */
		if (fd < 0) {
			ret = EXIT_RUNTIME;
			break;
		}
		if (!serve_client(o, ctx, fd) && o->once)
			ret = EXIT_RUNTIME;
		if (o->once || stop_requested)
			break;
	}
	close(lfd);
	mrc_close(ctx);
	return ret;
}
