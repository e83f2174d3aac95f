// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Serving mrcctl: the listening socket, one request and one reply per
 * command (run by agent/agent_cmds.c against our map fds), and the
 * streams of `mrcctl events` and `mrcctl probe`. Every socket is
 * non-blocking and every client has a deadline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/agent_cmds.h"
#include "agent/ev_events.h"
#include "mrcd/mrcd.h"
#include "mrc.skel.h"

/* ---- the listening socket ---------------------------------------------- */

void close_listener(struct agent *a, bool unlink_path)
{
	if (a->listen_fd < 0)
		return;
	close(a->listen_fd);
	a->listen_fd = -1;
	if (unlink_path)
		unlink(a->paths.sock_path);
}

/* mrcctl's socket; a re-exec keeps the one its previous image listened on. */
int open_listener(struct agent *a)
{
	char err[PATH_MAX + 64];

	if (a->opt.inherited_listen_fd >= 0) {
		a->listen_fd = a->opt.inherited_listen_fd;
		return 0;
	}
	if (agent_listen(a->paths.sock_path, &a->listen_fd, err, sizeof(err))) {
		pr_err("%s\n", err);
		return -1;
	}
	return 0;
}

/* ---- serving mrcctl --------------------------------------------------- */

static void plane_info(const struct agent *a, int i, struct agent_plane_info *pi)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	const struct plane *p = &a->planes[i];

	memset(pi, 0, sizeof(*pi));
	snprintf(pi->name, sizeof(pi->name), "%s", p->name);
	pi->ifindex = p->ifindex;
	pi->xdp_mode = p->xdp_via == XDP_VIA_NONE ? "none" : mode_name(p->xdp_mode);
	pi->xdp_how = p->xdp_via == XDP_VIA_NETLINK ? "direct" :
		      p->xdp_via == XDP_VIA_ADOPTED ? "adopted" :
		      p->xdp_via == XDP_VIA_NONE ? "none" :
		      p->xdp_dispatcher ? "libxdp dispatcher" : "libxdp";
	pi->xdp_prog_id = expected_xdp_id(a, p);
	pi->tc_adopted = p->tc_adopted;
	pi->xdp_missing = p->xdp_missing;
	pi->tc_missing = p->tc_missing;
	pi->xdp_losses = p->xdp_losses;
	pi->tc_losses = p->tc_losses;
	pi->repairs = p->repairs;
	if (!bpf_xdp_query(p->ifindex, 0, &q))
		pi->xdp_attached_id = q.prog_id ? q.prog_id :
				      q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
	pi->tc_prog_id = tc_prog_id(p->ifindex);
}

static void command_env(const struct agent *a, struct agent_cmd_env *env,
			struct pe_status *probing, struct agent_stream *stream)
{
	const struct mrc *s = a->skel;
	int i;

	memset(env, 0, sizeof(*env));
	env->pin_dir = a->paths.pin_dir;
	env->pid = (int)getpid();
	env->n_planes = (unsigned int)a->n_planes;
	env->repair = !a->opt.no_repair;
	for (i = 0; i < a->n_planes; i++)
		plane_info(a, i, &env->planes[i]);
	env->maps = (struct agent_maps){
		.cfg = bpf_map__fd(s->maps.mrc_cfg),
		.planes = bpf_map__fd(s->maps.mrc_planes),
		.plane_of = bpf_map__fd(s->maps.mrc_plane_of),
		.qps = bpf_map__fd(s->maps.mrc_qps),
		.qp_owner = bpf_map__fd(s->maps.mrc_qp_owner),
		.qp_evs = bpf_map__fd(s->maps.mrc_qp_evs),
		.ev_stats = bpf_map__fd(s->maps.mrc_ev_stats),
		.ev_profiles = bpf_map__fd(s->maps.mrc_ev_profiles),
		.cc_profiles = bpf_map__fd(s->maps.mrc_cc_profiles),
		.qp_stats = bpf_map__fd(s->maps.mrc_qp_stats),
		.drops = bpf_map__fd(s->maps.mrc_drops),
		.rx = bpf_map__fd(s->maps.mrc_rx),
		.tx = bpf_map__fd(s->maps.mrc_tx),
		.ctl_stats = bpf_map__fd(s->maps.mrc_ctl_stats),
		.cc = bpf_map__fd(s->maps.mrc_cc),
		.cc_view = bpf_map__fd(s->maps.mrc_cc_view),
		.ev_tx = bpf_map__fd(s->maps.mrc_ev_tx),
	};
	memset(stream, 0, sizeof(*stream));
	env->stream = stream;
	if (a->pe) {
		pe_status(a->pe, probing);
		env->probing = probing;
		env->events = pe_log(a->pe);
	}
}

static void reply_text(struct client *cl, int status, const char *msg)
{
	char *err = strdup(msg);

	agent_reply_init(&cl->reply, status, NULL, 0, err, err ? strlen(err) : 0);
	cl->replying = true;
}

static int n_streams(const struct agent *a)
{
	int n = 0;

	for (int i = 0; i < a->n_clients; i++)
		n += a->clients[i].mode != CLIENT_COMMAND;
	return n;
}

/*
 * Turn the client into the stream the command asked for. False (with the
 * client answered) when it cannot be started.
 */
static bool start_stream(const struct agent *a, struct client *cl,
			 const struct agent_stream *st)
{
	const struct ev_log *log = pe_log(a->pe);
	char err[256], msg[320];

	if (n_streams(a) >= AGENT_MAX_STREAMS) {
		snprintf(msg, sizeof(msg), "mrcctl: %d event and probe commands are "
			 "running already: try again later\n", AGENT_MAX_STREAMS);
		reply_text(cl, AGENT_EXIT_FAIL, msg);
		return false;
	}
	if (st->kind == AGENT_STREAM_PROBE) {
		cl->job = pe_job_start(a->pe, &st->probe, err, sizeof(err));
		if (!cl->job) {
			snprintf(msg, sizeof(msg), "mrcctl probe: %s\n", err);
			reply_text(cl, AGENT_EXIT_FAIL, msg);
			return false;
		}
		cl->mode = CLIENT_PROBE;
	} else {
		cl->mode = CLIENT_EVENTS;
		cl->next_seq = st->backlog ? ev_log_first(log) : ev_log_end(log);
		cl->left = st->count;
		cl->limited = st->count != 0;
	}
	cl->json = st->json;
	cl->last_sent_ms = now_ms();
	return true;
}

/* Run the command in memory, then hand the text to the reply. */
static void run_command(const struct agent *a, struct client *cl, int argc,
			char **argv)
{
	char *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0;
	struct agent_stream stream;
	struct pe_status probing;
	struct agent_cmd_env env;
	FILE *fo, *fe;
	bool done;
	int status;

	fo = open_memstream(&out, &out_len);
	fe = open_memstream(&err, &err_len);
	if (!fo || !fe) {
		if (fo)
			fclose(fo);
		if (fe)
			fclose(fe);
		free(out);
		free(err);
		reply_text(cl, AGENT_EXIT_FAIL, "mrcd: out of memory\n");
		return;
	}
	command_env(a, &env, &probing, &stream);
	status = agent_cmd_run(&env, argc, argv, fo, fe, &done);
	fclose(fo);
	fclose(fe);
	if (!status && stream.kind != AGENT_STREAM_NONE && a->pe) {
		free(out);
		free(err);
		start_stream(a, cl, &stream);
		return;
	}
	agent_reply_init(&cl->reply, status, out, out_len, err, err_len);
	cl->replying = true;
}

static bool peer_allowed(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	return !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) &&
	       (cr.uid == 0 || cr.uid == geteuid());
}

/* 0 to go on (maybe still waiting), -1 to drop the client. */
static int read_request(const struct agent *a, struct client *cl)
{
	static char buf[AGENT_REQ_MAX + 1];
	char *argv[AGENT_ARGS_MAX + 1], err[256], msg[300];
	ssize_t n;
	int argc;

	n = recv(cl->fd, buf, AGENT_REQ_MAX, MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	if (!peer_allowed(cl->fd)) {
		reply_text(cl, AGENT_EXIT_FAIL, "mrcctl: permission denied: mrcd "
			   "takes commands from root only\n");
	} else if (n > AGENT_REQ_MAX) {
		reply_text(cl, AGENT_EXIT_USAGE, "mrcctl: the command line is too long\n");
	} else if (agent_req_parse(buf, (size_t)n, &argc, argv, err, sizeof(err))) {
		snprintf(msg, sizeof(msg), "mrcctl: %s\n", err);
		reply_text(cl, AGENT_EXIT_FAIL, msg);
	} else {
		run_command(a, cl, argc, argv);
	}
	cl->deadline_ms = now_ms() + AGENT_TIMEOUT_MS;
	return 0;
}

/* 0 to go on, 1 when answered in full, -1 to drop the client. */
static int client_step(const struct agent *a, struct client *cl)
{
	int rc;

	if (!cl->replying) {
		if (read_request(a, cl))
			return -1;
		if (!cl->replying)
			return 0;	/* the request is not there yet */
	}
	rc = agent_reply_send(cl->fd, &cl->reply);
	return rc > 0 ? 1 : rc < 0 ? -1 : 0;
}

void client_close(struct agent *a, int i)
{
	struct client *cl = &a->clients[i];

	if (cl->job)
		pe_job_end(a->pe, cl->job);
	close(cl->fd);
	agent_reply_free(&cl->reply);
	a->clients[i] = a->clients[--a->n_clients];
}

/*
 * With every slot taken, a newcomer replaces the client that has waited
 * longest without sending its request: idle connections cannot lock
 * mrcctl out. False when every client is being answered.
 */
static bool make_room(struct agent *a)
{
	int i, oldest = -1;

	if (a->n_clients < AGENT_MAX_CLIENTS)
		return true;
	for (i = 0; i < a->n_clients; i++)
		if (!a->clients[i].replying && a->clients[i].mode == CLIENT_COMMAND &&
		    (oldest < 0 || a->clients[i].deadline_ms < a->clients[oldest].deadline_ms))
			oldest = i;
	if (oldest < 0)
		return false;
	client_close(a, oldest);
	return true;
}

void accept_clients(struct agent *a)
{
	struct client *cl;
	int fd;

	while (make_room(a)) {
		fd = accept4(a->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				pr_err("accept: %s\n", strerror(errno));
			return;
		}
		cl = &a->clients[a->n_clients++];
		memset(cl, 0, sizeof(*cl));
		cl->fd = fd;
		cl->deadline_ms = now_ms() + AGENT_TIMEOUT_MS;
	}
}

bool can_accept(const struct agent *a)
{
	int i;

	if (a->n_clients < AGENT_MAX_CLIENTS)
		return true;
	for (i = 0; i < a->n_clients; i++)
		if (!a->clients[i].replying && a->clients[i].mode == CLIENT_COMMAND)
			return true;
	return false;
}

/* ---- streams ---------------------------------------------------------- */

/* The stream is over: answer with its exit status, like any command. */
static void stream_finish(const struct agent *a, struct client *cl, int status)
{
	if (cl->job) {
		pe_job_end(a->pe, cl->job);
		cl->job = NULL;
	}
	agent_reply_init(&cl->reply, status, NULL, 0, NULL, 0);
	cl->replying = true;
	cl->deadline_ms = now_ms() + AGENT_TIMEOUT_MS;
}

/*
 * Events from next_seq on, as many lines to a message as fit. A reader
 * that fell further behind than the log keeps has missed some: they are
 * counted (every later event's `dropped` says so) and it goes on with the
 * oldest kept. 1 when all is sent, 0 when the socket is full, -1 on error.
 */
static int events_flush(const struct agent *a, struct client *cl)
{
	static char buf[AGENT_MSG_TEXT_MAX];
	struct ev_log *log = pe_log(a->pe);
	uint64_t seq, first = ev_log_first(log), end = ev_log_end(log), k;
	size_t len, n;
	int rc;

	if (cl->next_seq < first) {
		pe_count(a->pe, PE_EVENTS_SLOW_READER, first - cl->next_seq);
		cl->next_seq = first;
	}
	while (cl->next_seq < end && (!cl->limited || cl->left)) {
		for (len = 0, k = 0, seq = cl->next_seq;
		     seq < end && (!cl->limited || k < cl->left); seq++, k++) {
			n = ev_record_format(ev_log_get(log, seq), log->start_ns, 0,
					     cl->json, buf + len, sizeof(buf) - len);
			if (!n)
				break;
			len += n;
		}
		rc = agent_send_msg(cl->fd, AGENT_MSG_OUT, buf, len, 0);
		if (rc <= 0)
			return rc < 0 ? -1 : 0;
		cl->next_seq = seq;
		cl->left -= cl->limited ? k : 0;
		cl->last_sent_ms = now_ms();
	}
	if (cl->limited && !cl->left)
		stream_finish(a, cl, 0);
	return 1;
}

/* The probe lines produced so far; the exit status once all probes ended. */
static int probe_flush(const struct agent *a, struct client *cl)
{
	const char *text;
	size_t len, n;
	int rc, status;

	text = pe_job_output(cl->job, cl->job_sent, &len);
	while (len) {
		n = len < AGENT_MSG_TEXT_MAX ? len : AGENT_MSG_TEXT_MAX;
		rc = agent_send_msg(cl->fd, AGENT_MSG_OUT, text, n, 0);
		if (rc <= 0)
			return rc < 0 ? -1 : 0;
		cl->job_sent += n;
		text += n;
		len -= n;
		cl->last_sent_ms = now_ms();
	}
	if (pe_job_done(cl->job, &status))
		stream_finish(a, cl, status);
	return 1;
}

/* An empty stdout message now and then: mrcctl knows we are alive. */
static int heartbeat(struct client *cl)
{
	int rc;

	if (now_ms() - cl->last_sent_ms < AGENT_HEARTBEAT_MS)
		return 1;
	rc = agent_send_msg(cl->fd, AGENT_MSG_OUT, "", 0, 0);
	if (rc > 0)
		cl->last_sent_ms = now_ms();
	return rc < 0 ? -1 : rc;
}

/* mrcctl went away: its end of the connection is closed. */
static bool stream_hung_up(struct client *cl, short revents)
{
	char c;

	if (revents & (POLLHUP | POLLERR))
		return true;
	return (revents & POLLIN) && recv(cl->fd, &c, 1, MSG_DONTWAIT) == 0;
}

/* One round of a stream: 0 to go on (maybe answered by now), -1 to drop. */
static int stream_step(const struct agent *a, struct client *cl, short revents)
{
	int rc;

	if (stream_hung_up(cl, revents))
		return -1;
	if (revents & POLLOUT)
		cl->blocked = false;
	if (cl->blocked) {
		/* A reader that takes nothing for this long is gone for us. */
		return now_ms() - cl->blocked_since_ms > AGENT_TIMEOUT_MS ? -1 : 0;
	}
	rc = cl->mode == CLIENT_EVENTS ? events_flush(a, cl) : probe_flush(a, cl);
	if (rc > 0 && !cl->replying)
		rc = heartbeat(cl);
	if (rc < 0)
		return -1;
	if (!rc) {
		cl->blocked = true;
		cl->blocked_since_ms = now_ms();
	}
	return 0;
}

/*
 * mrcd stops or restarts: tell each stream why it ends (best effort: a
 * full socket just sees the connection close).
 */
void end_streams(struct agent *a, const char *why)
{
	char msg[128];

	for (int i = 0; i < a->n_clients; i++) {
		struct client *cl = &a->clients[i];

		if (cl->mode == CLIENT_COMMAND || cl->replying)
			continue;
		snprintf(msg, sizeof(msg), "mrcctl %s: %s\n",
			 cl->mode == CLIENT_EVENTS ? "events" : "probe", why);
		agent_send_msg(cl->fd, AGENT_MSG_ERR, msg, strlen(msg), 0);
		agent_send_msg(cl->fd, AGENT_MSG_EXIT, NULL, 0,
			       cl->mode == CLIENT_EVENTS ? 0 : AGENT_EXIT_FAIL);
	}
}

bool is_stream(const struct client *cl)
{
	return cl->mode != CLIENT_COMMAND && !cl->replying;
}

short client_events(const struct client *cl)
{
	if (is_stream(cl))
		return POLLIN | (cl->blocked ? POLLOUT : 0);
	return cl->replying ? POLLOUT : POLLIN;
}

/* 0 to keep the client, anything else to close it. */
int serve_client(struct agent *a, struct client *cl, short revents)
{
	int rc = 0;

	if (is_stream(cl))
		return stream_step(a, cl, revents);
	if (revents)
		rc = client_step(a, cl);
	if (!rc && is_stream(cl))
		return stream_step(a, cl, 0);	/* just started: first output */
	if (!rc && now_ms() >= cl->deadline_ms)
		rc = -1;	/* too slow: mrcctl gives up too */
	return rc;
}
