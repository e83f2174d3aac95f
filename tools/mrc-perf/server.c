// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf server: one process, one libmrc context, many clients at once.
 * Each accepted control connection is a session (session.c) with the QPs
 * its client asked for; the loop here accepts without blocking while any
 * session serves, gives every session one turn in round robin (a CQ poll,
 * now and then a peek at its socket), routes async events to the session
 * whose QP they name, and reports and frees the sessions that ended. One
 * line on stderr (and with --json one on stdout) per session. Sockets: one
 * per client, whatever its QP count, so RLIMIT_NOFILE bounds clients, not
 * QPs.
 */
#include "session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

struct server {
	const struct opts *o;
	struct mrc_context *ctx;
	int lfd;
	bool accepting;			/* false after --once's client */
	bool failed;			/* --once: its session failed */
	struct session *sessions[MAX_SESSIONS];
	int n;
	int max_sessions;		/* MAX_SESSIONS, less under RLIMIT_NOFILE */
	unsigned int spins;
};

void server_poll_all(struct server *srv, const struct session *except)
{
	int i;

	for (i = 0; i < srv->n; i++)
		if (srv->sessions[i] != except)
			session_progress(srv->sessions[i]);
}

/* Events of a session's QP end that session; others are leftovers. */
static void server_route_async_events(struct server *srv)
{
	struct mrc_async_event ev;
	bool taken;
	int n, i;

	for (n = 0; n < ASYNC_DRAIN_MAX && mrc_get_async_event(srv->ctx, &ev) == 0; n++) {
		taken = false;
		for (i = 0; i < srv->n && !taken; i++)
			taken = session_takes_event(srv->sessions[i], &ev);
		if (!taken)
			report("async event: %s on qp %u (of no session): %s",
			       async_event_name(ev.type), ev.qp_num, status_str(ev.status));
	}
}

/* Sessions need a descriptor each (and libmrc a few): stay below the limit. */
static int sessions_allowed(void)
{
	struct rlimit rl;
	rlim_t n;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return MAX_SESSIONS;
	n = rl.rlim_cur > 64 ? rl.rlim_cur - 64 : 1;
	return n < MAX_SESSIONS ? (int)n : MAX_SESSIONS;
}

static void server_add(struct server *srv, int fd)
{
	struct session *s;
	char why[ERR_LEN];

	if (srv->n == srv->max_sessions) {
		report("%d clients at once already (the limit here): refusing one",
		       srv->max_sessions);
		close(fd);
		return;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		report("out of memory: refusing a client");
		close(fd);
		return;
	}
	/* --timeline holds the most recent session: no stale rows meanwhile. */
	if (srv->o->timeline &&
	    timeline_write(srv->o->timeline, &server_timeline, why, sizeof(why)))
		report("timeline: %s", why);
	session_start(s, srv, srv->o, srv->ctx, fd);
	srv->sessions[srv->n++] = s;
	if (srv->o->once)
		srv->accepting = false;
}

/*
 * Accept what is waiting. While a session serves, never wait (its QPs need
 * the CQ polled); otherwise sleep in poll() on the listening socket and
 * the sessions waiting for HELLO, up to ACCEPT_POLL_MS.
 */
static int server_accept(struct server *srv, bool may_sleep)
{
	struct pollfd pfd[1 + MAX_SESSIONS];
	int fd, n = 0, i;

	if (may_sleep) {
		pfd[n++] = (struct pollfd){ .fd = srv->accepting ? srv->lfd : -1,
					    .events = POLLIN };
		for (i = 0; i < srv->n; i++)
			pfd[n++] = (struct pollfd){ .fd = srv->sessions[i]->ctl.fd,
						    .events = POLLIN };
		if (poll(pfd, (nfds_t)n, ACCEPT_POLL_MS) < 0 && errno != EINTR) {
			report("poll: %s", strerror(errno));
			return -1;
		}
	}
	while (srv->accepting) {
		fd = accept4(srv->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0) {
			server_add(srv, fd);
			continue;
		}
		/* Nothing waiting, or the client gave up before accept(). */
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ||
		    errno == ECONNABORTED || errno == EPROTO)
			return 0;
		if (errno == EMFILE || errno == ENFILE) {
			report("accept: %s: a client waits until one ends", strerror(errno));
			return 0;
		}
		report("accept: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* Report and free the sessions that ended, keeping the others' order. */
static void server_reap(struct server *srv)
{
	int i, j = 0;

	for (i = 0; i < srv->n; i++) {
		struct session *s = srv->sessions[i];

		if (s->state != SESSION_END) {
			srv->sessions[j++] = s;
			continue;
		}
		if (!session_finish(s))
			srv->failed = true;
		free(s);
		/* Whatever the dead QPs still report must not blame the next client. */
		print_async_events(srv->ctx);
	}
	srv->n = j;
}

static bool server_any_serving(const struct server *srv)
{
	int i;

	for (i = 0; i < srv->n; i++)
		if (srv->sessions[i]->state == SESSION_SERVE)
			return true;
	return false;
}

/* The loop: accept, a turn for every session, events, the ended ones. */
static int server_loop(struct server *srv)
{
	bool serving;
	int i;

	for (;;) {
		/* While QPs need the CQ polled, accept() (a system call) only
		 * every few turns. */
		serving = server_any_serving(srv);
		if ((!serving || srv->spins % CTL_PEEK_EVERY == 0) &&
		    server_accept(srv, !serving))
			return EXIT_RUNTIME;
		for (i = 0; i < srv->n; i++)
			session_step(srv->sessions[i]);
		if (++srv->spins % CTL_PEEK_EVERY == 0)
			server_route_async_events(srv);
		server_reap(srv);
		if (!srv->n && (!srv->accepting || stop_requested))
			break;
	}
	return srv->o->once && srv->failed ? EXIT_RUNTIME : 0;
}

int run_server(const struct opts *o)
{
	struct server *srv;
	char why[ERR_LEN];
	int ret, flags;

	/* A FILE we cannot write is a mistake on the command line: say so
	 * now, not after the first client. */
	if (o->timeline && timeline_write(o->timeline, &server_timeline, why, sizeof(why))) {
		report("--timeline: %s", why);
		return EXIT_USAGE;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		report("out of memory");
		return EXIT_RUNTIME;
	}
	srv->o = o;
	srv->accepting = true;
	srv->max_sessions = sessions_allowed();
	srv->ctx = open_context(o->pin_dir, why, sizeof(why));
	if (!srv->ctx) {
		report("%s", why);
		free(srv);
		return EXIT_RUNTIME;
	}
	srv->lfd = mrc_conn_listen(o->port);
	if (srv->lfd < 0) {
		report("cannot listen on TCP port %u: %s", o->port, strerror(-srv->lfd));
		mrc_close(srv->ctx);
		free(srv);
		return EXIT_RUNTIME;
	}
	/* Non-blocking: accept() must never hold up the sessions' polling. */
	flags = fcntl(srv->lfd, F_GETFL);
	if (flags >= 0)
		fcntl(srv->lfd, F_SETFL, flags | O_NONBLOCK);
	report("server listening on TCP port %u", o->port);

	ret = server_loop(srv);
	/* SIGINT/SIGTERM: the sessions ended as "interrupted"; stop here. */
	close(srv->lfd);
	mrc_close(srv->ctx);
	free(srv);
	return ret;
}
