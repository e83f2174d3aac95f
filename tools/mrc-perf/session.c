// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf server, one session: read HELLO, create the regions, the CQ and
 * the n_qps QPs it asks for, exchange QP parameters (one mrc_conn_exchange
 * per QP on the control connection), then poll the CQ (placing data,
 * sending SACKs, checking immediates) while peeking at the control socket
 * for BEGIN, VERIFY and DONE. server.c runs many sessions side by side,
 * one turn of session_step() each.
 */
#include "session.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "agent/json_out.h"

/* Receives carry their QP's index in the upper bits of wr_id. */
#define RECV_ID_SHIFT		40
/* While setting up many QPs, let the other sessions progress this often. */
#define SETUP_POLL_EVERY	8

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
	s->state = SESSION_END;
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

void session_start(struct session *s, struct server *srv, const struct opts *o,
		   struct mrc_context *ctx, int fd)
{
	int ret;

	memset(s, 0, sizeof(*s));
	s->o = o;
	s->srv = srv;
	s->ctx = ctx;
	s->state = SESSION_HELLO;
	s->tl = server_timeline;
	ctl_init(&s->ctl, fd);
	s->imm_in_order = true;
	s->imm_len_ok = true;
	s->deadline_ns = now_ns() + HELLO_WAIT_MS * NSEC_PER_MSEC;
	copy_text(s->peer_str, sizeof(s->peer_str), "?");
	ret = socket_peer(fd, &s->peer);
	if (ret) {
		session_fail(s, false, "getpeername: %s", strerror(-ret));
		return;
	}
	s->family = s->peer.ss_family;
	addr_str(&s->peer, s->peer_str, sizeof(s->peer_str));
	set_socket_timeouts(fd, EXCHANGE_TIMEOUT_MS);
	report("client %s connected", s->peer_str);
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
	if (m->n_qps > MAX_QPS)
		return session_fail(s, true, "HELLO asks for %u QPs (1..%d)", m->n_qps,
				    MAX_QPS);
	if ((m->n_qps ? m->n_qps : 1) * m->length > MAX_MSG_SIZE)
		return session_fail(s, true, "HELLO asks for %u regions of %" PRIu64
				    " bytes: more than %llu bytes in all", m->n_qps,
				    m->length, MAX_MSG_SIZE);
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

/* 1 once HELLO is here and checked, 0 not yet, -1 failed. Never blocks. */
static int session_poll_hello(struct session *s)
{
	int ret = ctl_poll(&s->ctl, &s->hello);

	if (ret < 0)
		return session_ctl_fail(s, ret, "waiting for HELLO");
	if (ret == 0) {
		if (stop_requested)
			return session_fail(s, true, "interrupted");
		if (now_ns() >= s->deadline_ns)
			return session_fail(s, true, "no HELLO within %d s",
					    HELLO_WAIT_MS / 1000);
		return 0;
	}
	if (session_check_hello(s, &s->hello))
		return -1;
	s->imm = s->hello.flags & CTL_F_IMM;
	s->icrc = s->hello.flags & CTL_F_ICRC;
	s->len = s->hello.length;
	s->n_qps = s->hello.n_qps ? s->hello.n_qps : 1;
	s->deadline_ns = now_ns() +
		(uint64_t)(s->hello.timeout_s + SESSION_GRACE_S) * NSEC_PER_SEC;
	return 1;
}

static int session_post_recv(struct session *s, uint32_t i)
{
	struct sqp *q = &s->qps[i];
	struct mrc_recv_wr wr = {
		.wr_id = ((uint64_t)i << RECV_ID_SHIFT) | (q->next_recv_id++ &
							  ((1ULL << RECV_ID_SHIFT) - 1)),
	};
	int ret = mrc_post_recv(q->qp, &wr);

	if (ret)
		return session_fail(s, true, "mrc_post_recv(qp %u): %s",
				    q->local.qpn, strerror(-ret));
	return 0;
}

/* ENOSPC from mrc_create_qp: mrcd's QP table is full; say so. */
static int session_qp_create_fail(struct session *s, uint32_t i)
{
	if (errno == ENOSPC)
		return session_fail(s, true, "mrc_create_qp: this host is out of QP "
				    "numbers after %u of the %u QPs asked for "
				    "(mrcd's QP limit is reached: ENOSPC)", i, s->n_qps);
	return session_fail(s, true, "mrc_create_qp (QP %u of %u): %s", i + 1,
			    s->n_qps, strerror(errno));
}

/* The regions (slices of one buffer, one MR), the CQ, the QPs, receives. */
static int session_create_qps(struct session *s, const struct sockaddr_storage *addrs,
			      int n, uint32_t mtu)
{
	long page = sysconf(_SC_PAGESIZE);
	struct mrc_qp_init_attr qpa;
	uint64_t cqe;
	uint32_t i, r;

	s->stride = (s->len + (uint64_t)page - 1) & ~((uint64_t)page - 1);
	s->qps = calloc(s->n_qps, sizeof(*s->qps));
	s->buf = buffer_alloc(s->stride * s->n_qps, &s->map_len);
	if (!s->qps || !s->buf)
		return session_fail(s, true, "cannot allocate %u regions of %" PRIu64
				    " bytes: %s", s->n_qps, s->len, strerror(ENOMEM));
	s->mr = mrc_reg_mr(s->ctx, s->buf, s->stride * s->n_qps,
			   MRC_ACCESS_REMOTE_WRITE | MRC_ACCESS_LOCAL_WRITE);
	if (!s->mr)
		return session_fail(s, true, "mrc_reg_mr(%" PRIu64 " bytes): %s",
				    s->stride * s->n_qps, strerror(errno));

	/* Twice the client's depth: a receive is consumed when data lands,
	 * and reposted only when we poll its completion. */
	s->rq_depth = 1;
	if (s->imm)
		s->rq_depth = 2 * s->hello.depth < MAX_RECV_WR ? 2 * s->hello.depth
							       : MAX_RECV_WR;
	cqe = (uint64_t)s->n_qps * s->rq_depth + POLL_BATCH;
	s->cq = mrc_create_cq(s->ctx, cqe > MAX_CQE ? MAX_CQE : (int)cqe);
	if (!s->cq)
		return session_fail(s, true, "mrc_create_cq: %s", strerror(errno));
	memset(&qpa, 0, sizeof(qpa));
	qpa.send_cq = s->cq;
	qpa.recv_cq = s->cq;
	qpa.max_send_wr = 1;	/* the server only receives */
	qpa.max_recv_wr = s->rq_depth;
	qpa.max_sge = 1;
	qpa.flags = s->icrc ? MRC_QP_ICRC : 0;
	for (i = 0; i < s->n_qps; i++) {
		s->qps[i].qp = mrc_create_qp(s->ctx, &qpa);
		if (!s->qps[i].qp)
			return session_qp_create_fail(s, i);
		s->n_up = i + 1;
		for (r = 0; s->imm && r < s->rq_depth; r++)
			if (session_post_recv(s, i))
				return -1;
		fill_conn_params(&s->qps[i].local, s->qps[i].qp, addrs, n, mtu, s->mr,
				 s->buf + s->stride * i, s->len);
	}
	return 0;
}

/* Region, MR, CQ, QPs and receives as HELLO asked; then HELLO_ACK. */
static int session_create_resources(struct session *s)
{
	struct sockaddr_storage addrs[MRC_MAX_PLANES];
	struct ctl_msg m;
	uint32_t mtu;
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
	if (session_create_qps(s, addrs, n, mtu))
		return -1;

	ctl_msg_init(&m, CTL_HELLO_ACK);
	m.length = s->len;
	m.n_qps = s->n_qps;
	ret = ctl_send(&s->ctl, &m);
	if (ret)
		return session_fail(s, false, "cannot send HELLO_ACK: %s", strerror(-ret));
	return 0;
}

static int session_connect_qp(struct session *s, uint32_t i)
{
	struct sqp *q = &s->qps[i];
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

	ret = mrc_conn_exchange(s->ctl.fd, &q->local, &q->remote);
	if (ret)
		/* The stream is mid-exchange: an ERROR would only confuse it. */
		return session_fail(s, false, "QP parameter exchange failed: %s",
				    ret == -EAGAIN || ret == -EWOULDBLOCK ? "timed out"
									  : strerror(-ret));
	if (check_peer_params(&q->remote, why, sizeof(why)))
		return session_fail(s, true, "%s", why);
	t.path_mtu = q->local.path_mtu < q->remote.path_mtu ? q->local.path_mtu
							     : q->remote.path_mtu;
	ret = qp_bring_up(q->qp, &q->local, &q->remote, &t, &step);
	if (ret)
		return session_fail(s, true, "mrc_modify_qp(%s, qp %u): %s", step,
				    q->local.qpn, strerror(-ret));
	if (s->n_qps == 1 || i == s->n_qps - 1)
		report("client %s: %s%u -> %u, path_mtu %u, %" PRIu64 "-byte region%s%s",
		       s->peer_str, s->n_qps == 1 ? "qp " : "last qp ", q->local.qpn,
		       q->remote.qpn, t.path_mtu, s->len, s->n_qps == 1 ? "" : "s",
		       s->imm ? ", immediates" : "");
	return 0;
}

/*
 * HELLO arrived: set every QP up. The exchanges block (the client answers
 * at once: it sent HELLO and waits for our HELLO_ACK); the sessions already
 * serving are polled every few QPs so their transfers keep moving.
 */
static void session_setup(struct session *s)
{
	uint32_t i;

	if (session_create_resources(s))
		return;
	for (i = 0; i < s->n_qps; i++) {
		if (session_connect_qp(s, i))
			return;
		if (i % SETUP_POLL_EVERY == SETUP_POLL_EVERY - 1)
			server_poll_all(s->srv, s);
	}
	/* A control message ends libmrc's idle sleeps (closing the fd removes it). */
	if (mrc_add_wait_fd(s->ctx, s->ctl.fd))
		report("client %s: mrc_add_wait_fd failed: idle sleeps may be long",
		       s->peer_str);
	if (s->n_qps > 1)
		report("client %s: %u QPs up", s->peer_str, s->n_qps);
	s->state = SESSION_SERVE;
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
 * A WRITE-IMM landed: its immediate must be the QP's next op number (the
 * client counts from 0 across the whole run, per QP) and its length that
 * op's size.
 */
static void session_check_imm(struct session *s, struct sqp *q, const struct mrc_wc *wc)
{
	uint64_t op = q->next_imm_op, size;

	if (wc->imm_data != (uint32_t)op) {
		if (s->imm_in_order)
			report("client %s: qp %u: immediate %u arrived, expected %u",
			       s->peer_str, q->local.qpn, wc->imm_data, (uint32_t)op);
		s->imm_in_order = false;
		op = (op & ~0xffffffffULL) | wc->imm_data;
	}
	q->next_imm_op = op + 1;
	q->imm_count++;
	s->imm_count++;
	size = session_size_of_op(s, op);
	if (wc->byte_len != size && s->imm_len_ok) {
		s->imm_len_ok = false;
		snprintf(s->imm_len_err, sizeof(s->imm_len_err),
			 "qp %u: op %" PRIu64 " arrived with byte_len %u, expected %" PRIu64,
			 q->local.qpn, op, wc->byte_len, size);
		report("client %s: %s", s->peer_str, s->imm_len_err);
	}
}

static void session_handle_wc(struct session *s, const struct mrc_wc *wc)
{
	uint64_t i = wc->wr_id >> RECV_ID_SHIFT;

	if (wc->status != MRC_WC_SUCCESS) {
		session_fail(s, true, "%s completion failed on qp %u: %s",
			     wc->opcode == MRC_WC_RECV_WRITE_IMM ? "receive" : "WRITE",
			     wc->qp_num, status_str(wc->status));
		return;
	}
	if (wc->opcode != MRC_WC_RECV_WRITE_IMM)
		return;
	if (i >= s->n_qps || s->qps[i].local.qpn != wc->qp_num) {
		session_fail(s, true, "receive completion of an unknown QP %u (wr_id 0x%"
			     PRIx64 ")", wc->qp_num, wc->wr_id);
		return;
	}
	session_check_imm(s, &s->qps[i], wc);
	session_post_recv(s, (uint32_t)i);	/* keep rq_depth receives posted */
}

void session_progress(struct session *s)
{
	struct mrc_wc wc[POLL_BATCH];
	int i, n;

	if (s->state != SESSION_SERVE)
		return;
	n = mrc_poll_cq(s->cq, POLL_BATCH, wc);
	if (n < 0) {
		session_fail(s, true, "mrc_poll_cq: %s", strerror(-n));
		return;
	}
	for (i = 0; i < n && !s->error[0]; i++)
		session_handle_wc(s, &wc[i]);
	timeline_tick(&s->tl, s->qps[0].qp);
}

bool session_takes_event(struct session *s, const struct mrc_async_event *ev)
{
	uint32_t i;

	for (i = 0; i < s->n_up; i++) {
		if (s->qps[i].local.qpn != ev->qp_num)
			continue;
		session_fail(s, true, "%s on qp %u: %s", async_event_name(ev->type),
			     ev->qp_num, status_str(ev->status));
		return true;
	}
	return false;
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

/*
 * Checksum a range in chunks, polling the CQ after every CHECKSUM_CHUNK
 * bytes hashed (counted across ranges): hashing 1 GiB takes long enough to
 * starve the transport otherwise. Not once per range: with nothing in
 * flight a poll may sleep (libmrc's idle wait, up to 20 ms), and 4,096
 * small regions made that 80 s.
 */
static int session_checksum(struct session *s, const uint8_t *base, uint64_t len,
			    uint64_t *out)
{
	uint64_t h = CSUM_INIT, n;

	while (len) {
		n = len < CHECKSUM_CHUNK ? len : CHECKSUM_CHUNK;
		h = csum_update(h, base, n);
		base += n;
		len -= n;
		s->hashed += n;
		if (s->hashed < CHECKSUM_CHUNK)
			continue;
		s->hashed = 0;
		session_progress(s);
		if (s->error[0])
			return -1;
	}
	*out = h;
	return 0;
}

/*
 * VERIFY: QP 0's checksum for the client to compare and, when the client
 * sent its source's checksum (CTL_F_EXPECT), how many of the n_qps regions
 * match it (ops); the text names the first that does not.
 */
static void session_verify(struct session *s, const struct ctl_msg *req)
{
	uint64_t h, matched = 0;
	struct ctl_msg m;
	uint32_t i;

	ctl_msg_init(&m, CTL_VERIFY_ACK);
	if (req->offset > s->len || req->length > s->len - req->offset) {
		m.status = ERANGE;
		snprintf(m.text, sizeof(m.text), "bytes [%" PRIu64 ", %" PRIu64
			 ") are outside the %" PRIu64 "-byte region", req->offset,
			 req->offset + req->length, s->len);
		session_reply(s, &m);
		return;
	}
	for (i = 0; i < s->n_qps; i++) {
		if (session_checksum(s, s->buf + s->stride * i + req->offset,
				     req->length, &h))
			return;
		if (i == 0)
			m.checksum = h;
		if (h == req->checksum)
			matched++;
		else if (req->flags & CTL_F_EXPECT && !m.text[0])
			snprintf(m.text, sizeof(m.text), "qp %u (region %u) has checksum %016"
				 PRIx64, s->qps[i].local.qpn, i, h);
	}
	m.ops = matched;
	m.n_qps = s->n_qps;
	session_reply(s, &m);
}

/* DONE waits for the immediates still on their way, 5 s at most. */
static void session_try_answer_done(struct session *s)
{
	uint64_t now = now_ns(), want = s->done_ops * s->n_qps;
	struct ctl_msg m;

	if (s->imm && s->imm_count < want && now < s->done_deadline_ns)
		return;
	ctl_msg_init(&m, CTL_DONE_ACK);
	if (s->imm && s->imm_count < want)
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
		timeline_stop(&s->tl, s->qps[0].qp);
		s->done_pending = true;
		s->done_ops = m->ops;	/* per QP */
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
		s->state = SESSION_END;	/* the normal end */
	} else if (ret < 0) {
		session_ctl_fail(s, ret, s->done_pending ? "waiting for immediates"
							 : "the run was going on");
	} else if (stop_requested) {
		session_fail(s, true, "interrupted");
	} else if (s->done_answered && now_ns() >= s->linger_deadline_ns) {
		s->state = SESSION_END;	/* answered everything; it may keep its socket */
	} else if (now_ns() >= s->deadline_ns) {
		session_fail(s, true, "session timed out after %u s",
			     s->hello.timeout_s + SESSION_GRACE_S);
	}
}

/* Polling the CQ is what moves the transport: every turn; the socket is
 * peeked at every few turns. */
static void session_serve_turn(struct session *s)
{
	session_progress(s);
	if (s->done_pending && !s->error[0])
		session_try_answer_done(s);
	if (++s->spins % CTL_PEEK_EVERY == 0 && !s->error[0])
		session_check_control(s);
}

void session_step(struct session *s)
{
	switch (s->state) {
	case SESSION_HELLO:
		if (session_poll_hello(s) == 1)
			session_setup(s);
		break;
	case SESSION_SERVE:
		session_serve_turn(s);
		break;
	case SESSION_END:
		break;
	}
}

/* What landed and the SACKs sent, summed over the QPs; the wait
 * statistics (the context's) as the first QP reports them. */
static uint64_t session_rx_bytes(struct session *s, struct mrc_qp_counters *first)
{
	struct mrc_qp_counters cnt;
	uint64_t bytes = 0;
	uint32_t i;
	int ret;

	memset(first, 0, sizeof(*first));
	for (i = 0; i < s->n_up; i++) {
		memset(&cnt, 0, sizeof(cnt));
		ret = mrc_qp_counters(s->qps[i].qp, &cnt);
		if (ret) {
			report("client %s: mrc_qp_counters: %s", s->peer_str, strerror(-ret));
			continue;
		}
		bytes += cnt.rx_bytes;
		if (i == 0) {
			*first = cnt;
			continue;
		}
		first->sacks_sent += cnt.sacks_sent;
		first->sacks_coalesced += cnt.sacks_coalesced;
	}
	return bytes;
}

static void session_report(struct session *s)
{
	struct mrc_qp_counters cnt;
	uint64_t rx_bytes;
	bool modified;

	rx_bytes = session_rx_bytes(s, &cnt);
	modified = s->buf && buffer_is_modified(s->buf, s->stride * s->n_qps);

	report("client %s: %" PRIu64 " bytes received on %u QP%s, %" PRIu64
	       " immediates%s, region%s %s: %s", s->peer_str, rx_bytes, s->n_qps,
	       s->n_qps == 1 ? "" : "s", s->imm_count,
	       s->imm_in_order ? "" : " OUT OF ORDER", s->n_qps == 1 ? "" : "s",
	       modified ? "modified" : "untouched", s->error[0] ? s->error : "ok");
	if (!s->o->json)
		return;
	printf("{\"client\": ");
	json_string(stdout, s->peer_str);
	printf(", \"qps\": %u, \"bytes_received\": %" PRIu64 ", \"imm_received\": %" PRIu64
	       ", \"imm_in_order\": %s, \"region_modified\": %s"
	       ", \"timeline_t0_ns\": %" PRIu64, s->n_qps,
	       rx_bytes, s->imm_count, s->imm_in_order ? "true" : "false",
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
	uint32_t i;
	int ret;

	for (i = 0; i < s->n_up; i++)
		if ((ret = mrc_destroy_qp(s->qps[i].qp)))
			report("client %s: mrc_destroy_qp: %s", s->peer_str, strerror(-ret));
	if (s->cq && (ret = mrc_destroy_cq(s->cq)))
		report("client %s: mrc_destroy_cq: %s", s->peer_str, strerror(-ret));
	if (s->mr && (ret = mrc_dereg_mr(s->mr)))
		report("client %s: mrc_dereg_mr: %s", s->peer_str, strerror(-ret));
	if (s->buf)
		munmap(s->buf, s->map_len);
	if (s->ctl.fd >= 0)
		close(s->ctl.fd);
	free(s->qps);
	free(s->tl.rows);
}

bool session_finish(struct session *s)
{
	char who[ADDR_STR_LEN + 32];
	bool ok = !s->error[0];

	if (s->n_up)
		timeline_stop(&s->tl, s->qps[0].qp);	/* no DONE: it ends here */
	session_report(s);
	if (s->o->timeline) {
		snprintf(who, sizeof(who), "client %s: timeline", s->peer_str);
		if (!timeline_finish(s->o->timeline, &s->tl, who, "no data phase began"))
			ok = false;
	}
	session_cleanup(s);
	return ok;
}
