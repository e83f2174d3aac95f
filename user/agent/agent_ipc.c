// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcd <-> mrcctl: paths and the message protocol (see agent_ipc.h).
 */
#define _GNU_SOURCE
#include "agent/agent_ipc.h"
#include "agent/cmd_table.h"
#include "common/errmsg.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>


static int sockaddr_for(const char *path, struct sockaddr_un *sa,
			char *err, size_t errlen)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return fail(-ENAMETOOLONG, err, errlen, "socket path %s too long", path);
	strcpy(sa->sun_path, path);
	return 0;
}

/* ---- mrcd's side -------------------------------------------------------- */

int agent_listen(const char *path, int *fd_out, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	mode_t old_mask;
	int fd, rc;

	rc = sockaddr_for(path, &sa, err, errlen);
	if (rc)
		return rc;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail(-errno, err, errlen, "socket: %s", strerror(errno));
	/* The caller holds the agent lock: whatever is at the path is stale. */
	unlink(path);
	/* Commands change the fast path: only root (and our user) may send them. */
	old_mask = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old_mask);
	if (rc || listen(fd, AGENT_MAX_CLIENTS)) {
		rc = -errno;
		close(fd);
		return fail(rc, err, errlen, "cannot listen on %s: %s", path,
			    strerror(-rc));
	}
	*fd_out = fd;
	return 0;
}

int agent_req_parse(char *buf, size_t len, int *argc, char **argv,
		    char *err, size_t errlen)
{
	struct agent_req req;
	char *p, *end;
	int i;

	if (len < sizeof(req))
		return fail(-EPROTO, err, errlen, "short request (%zu bytes)", len);
	memcpy(&req, buf, sizeof(req));
	if (req.magic != AGENT_REQ_MAGIC)
		return fail(-EPROTO, err, errlen, "not an mrcctl request");
	if (req.version != AGENT_PROTO_VERSION)
		return fail(-EPROTO, err, errlen,
			    "mrcctl speaks protocol %u, this mrcd speaks %u: "
			    "use the mrcctl that came with this mrcd",
			    req.version, AGENT_PROTO_VERSION);
	if (req.argc > AGENT_ARGS_MAX)
		return fail(-E2BIG, err, errlen, "%u arguments, at most %d",
			    req.argc, AGENT_ARGS_MAX);
	if (req.args_len != len - sizeof(req))
		return fail(-EPROTO, err, errlen, "request length mismatch");
	p = buf + sizeof(req);
	end = buf + len;
	*end = '\0';	/* the spare byte: a missing final NUL stays harmless */
	for (i = 0; i < req.argc; i++) {
		char *nul = memchr(p, '\0', (size_t)(end - p));

		if (!nul || nul == end)
			return fail(-EPROTO, err, errlen, "argument %d is cut short", i + 1);
		argv[i] = p;
		p = nul + 1;
	}
	if (p != end)
		return fail(-EPROTO, err, errlen, "bytes after the last argument");
	argv[req.argc] = NULL;
	*argc = req.argc;
	return 0;
}

/*
 * An answer too big for one reply is refused whole, with a message: a
 * clipped JSON document would be silently invalid.
 */
static void reply_too_big(struct agent_reply *r, size_t len)
{
	char msg[160];
	int n = snprintf(msg, sizeof(msg), "mrcd: the answer is %zu bytes, more than "
			 "the %u one reply carries (AGENT_REPLY_MAX)\n", len,
			 (unsigned int)AGENT_REPLY_MAX);

	free(r->out);
	free(r->err);
	r->out = NULL;
	r->out_len = 0;
	r->err = strdup(msg);
	r->err_len = r->err && n > 0 ? (size_t)n : 0;
	r->status = AGENT_EXIT_FAIL;
}

void agent_reply_init(struct agent_reply *r, int status, char *out,
		      size_t out_len, char *err, size_t err_len)
{
	memset(r, 0, sizeof(*r));
	r->status = status;
	r->out = out;
	r->err = err;
	r->out_len = out ? out_len : 0;
	r->err_len = err ? err_len : 0;
	if (r->out_len > AGENT_REPLY_MAX || r->err_len > AGENT_REPLY_MAX - r->out_len)
		reply_too_big(r, r->out_len + r->err_len);
}

/* The next message of the reply into msg[AGENT_MSG_MAX]; its length. */
static size_t reply_next_msg(const struct agent_reply *r, char *msg,
			     size_t *advance)
{
	struct agent_msg h = {
		.magic = AGENT_MSG_MAGIC,
		.version = AGENT_PROTO_VERSION,
	};
	const char *text = r->phase == 0 ? r->out : r->err;
	size_t left = (r->phase == 0 ? r->out_len : r->err_len) - r->off;
	size_t n = 0;

	if (r->phase == 2) {
		h.type = AGENT_MSG_EXIT;
		h.status = r->status;
	} else {
		h.type = r->phase == 0 ? AGENT_MSG_OUT : AGENT_MSG_ERR;
		n = left < AGENT_MSG_MAX - sizeof(h) ? left : AGENT_MSG_MAX - sizeof(h);
		memcpy(msg + sizeof(h), text + r->off, n);
	}
	h.len = (uint32_t)n;
	memcpy(msg, &h, sizeof(h));
	*advance = n;
	return sizeof(h) + n;
}

/* Skip empty texts: stdout, stderr, exit, done. */
static void reply_settle(struct agent_reply *r)
{
	while ((r->phase == 0 && r->off >= r->out_len) ||
	       (r->phase == 1 && r->off >= r->err_len)) {
		r->phase++;
		r->off = 0;
	}
}

int agent_send_msg(int fd, enum agent_msg_type type, const char *text,
		   size_t len, int status)
{
	static char msg[AGENT_MSG_MAX];
	struct agent_msg h = {
		.magic = AGENT_MSG_MAGIC,
		.version = AGENT_PROTO_VERSION,
		.type = (uint8_t)type,
		.status = status,
	};
	ssize_t n;

	if (len > AGENT_MSG_TEXT_MAX)
		return -EMSGSIZE;
	h.len = (uint32_t)len;
	memcpy(msg, &h, sizeof(h));
	if (len)
		memcpy(msg + sizeof(h), text, len);
	n = send(fd, msg, sizeof(h) + len, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -errno;
	return 1;
}

int agent_reply_send(int fd, struct agent_reply *r)
{
	static char msg[AGENT_MSG_MAX];
	size_t len, advance;
	ssize_t n;

	for (reply_settle(r); r->phase < 3; reply_settle(r)) {
		len = reply_next_msg(r, msg, &advance);
		n = send(fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return -errno;
		if (r->phase == 2)
			r->phase = 3;
		else
			r->off += advance;
	}
	return 1;
}

void agent_reply_free(struct agent_reply *r)
{
	free(r->out);
	free(r->err);
	r->out = r->err = NULL;
}

/* ---- mrcctl's side ------------------------------------------------------ */

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int build_request(int argc, char *const *argv, char **buf, size_t *len,
			 char *err, size_t errlen)
{
	struct agent_req req = {
		.magic = AGENT_REQ_MAGIC,
		.version = AGENT_PROTO_VERSION,
		.argc = (uint16_t)argc,
	};
	size_t args_len = 0, off;
	int i;

	if (argc > AGENT_ARGS_MAX)
		return fail(-E2BIG, err, errlen, "%d arguments, at most %d",
			    argc, AGENT_ARGS_MAX);
	for (i = 0; i < argc; i++)
		args_len += strlen(argv[i]) + 1;
	if (sizeof(req) + args_len > AGENT_REQ_MAX)
		return fail(-E2BIG, err, errlen,
			    "the command line is too long (%zu bytes, at most %d)",
			    args_len, AGENT_REQ_MAX - (int)sizeof(req));
	req.args_len = (uint32_t)args_len;
	*buf = malloc(sizeof(req) + args_len);
	if (!*buf)
		return fail(-ENOMEM, err, errlen, "out of memory");
	memcpy(*buf, &req, sizeof(req));
	off = sizeof(req);
	for (i = 0; i < argc; i++) {
		size_t n = strlen(argv[i]) + 1;

		memcpy(*buf + off, argv[i], n);
		off += n;
	}
	*len = off;
	return 0;
}

/*
 * Wait for `events` on fd until `deadline` (ms): 1 ready, 0 timed out,
 * -EINTR once *stop is set, -errno.
 */
static int wait_fd(int fd, short events, int64_t deadline,
		   volatile sig_atomic_t *stop)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int64_t left;
	int n;

	for (;;) {
		if (stop && *stop)
			return -EINTR;
		left = deadline - now_ms();
		if (left <= 0)
			return 0;
		n = poll(&pfd, 1, (int)left);
		if (n > 0)
			return 1;
		if (n < 0 && errno != EINTR)
			return -errno;
	}
}

/* Text for our stdout or stderr; false when it cannot be written. */
static bool copy_text(FILE *f, const char *text, size_t len)
{
	if (len && fwrite(text, 1, len, f) != len)
		return false;
	return fflush(f) == 0;
}

static enum agent_call_result connect_agent(const char *sock_path, int *fd_out,
					    int64_t deadline, char *err,
					    size_t errlen)
{
	struct timespec pause = { .tv_nsec = 20 * 1000 * 1000 };
	struct sockaddr_un sa;
	int fd, e;

	if (sockaddr_for(sock_path, &sa, err, errlen))
		return AGENT_CALL_FAILED;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		fail(0, err, errlen, "socket: %s", strerror(errno));
		return AGENT_CALL_FAILED;
	}
	/* A full backlog says EAGAIN (mrcd is busy or re-executing): retry. */
	while (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		e = errno;
		if ((e == EAGAIN || e == EINTR) && now_ms() < deadline) {
			nanosleep(&pause, NULL);
			continue;
		}
		close(fd);
		if (e == ENOENT || e == ECONNREFUSED)
			return AGENT_CALL_NOT_RUNNING;
		if (e == EAGAIN)
			return AGENT_CALL_TIMEOUT;
		fail(0, err, errlen, "cannot connect to %s: %s", sock_path, strerror(e));
		return AGENT_CALL_FAILED;
	}
	/*
	 * Only root's mrcd (or one of our own user) is believed: another
	 * user's process listening at the path would be an impostor.
	 */
	{
		struct ucred cred;
		socklen_t clen = sizeof(cred);

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) ||
		    (cred.uid != 0 && cred.uid != geteuid())) {
			close(fd);
			fail(0, err, errlen, "%s is served by uid %d, not root: "
			     "refused (remove it)", sock_path,
			     clen == sizeof(cred) ? (int)cred.uid : -1);
			return AGENT_CALL_FAILED;
		}
	}
	*fd_out = fd;
	return AGENT_CALL_OK;
}

static enum agent_call_result send_request(int fd, const char *req, size_t len,
					   int64_t deadline, char *err,
					   size_t errlen)
{
	for (;;) {
		ssize_t n = send(fd, req, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		int rc;

		if (n == (ssize_t)len)
			return AGENT_CALL_OK;
		if (n >= 0 || (errno != EAGAIN && errno != EWOULDBLOCK)) {
			fail(0, err, errlen, "sending the command to mrcd: %s",
			     n >= 0 ? "short write" : strerror(errno));
			return AGENT_CALL_FAILED;
		}
		rc = wait_fd(fd, POLLOUT, deadline, NULL);
		if (rc == 0)
			return AGENT_CALL_TIMEOUT;
		if (rc < 0) {
			fail(0, err, errlen, "poll: %s", strerror(-rc));
			return AGENT_CALL_FAILED;
		}
	}
}

static bool msg_valid(const struct agent_msg *h, ssize_t n)
{
	return (size_t)n >= sizeof(*h) && (size_t)n <= AGENT_MSG_MAX &&
	       h->magic == AGENT_MSG_MAGIC && h->version == AGENT_PROTO_VERSION &&
	       h->len == (size_t)n - sizeof(*h);
}

/*
 * Messages until the exit status. The deadline is for silence: every
 * message (a stream's heartbeat too) moves it.
 */
static enum agent_call_result read_reply(int fd, FILE *out, FILE *errf,
					 int *status, volatile sig_atomic_t *stop,
					 char *err, size_t errlen)
{
	static char msg[AGENT_MSG_MAX];
	int64_t deadline = now_ms() + AGENT_TIMEOUT_MS;
	struct agent_msg h;
	ssize_t n;
	int rc;

	for (;;) {
		rc = wait_fd(fd, POLLIN, deadline, stop);
		if (rc == -EINTR)
			return AGENT_CALL_INTERRUPTED;
		if (rc == 0)
			return AGENT_CALL_TIMEOUT;
		n = rc < 0 ? -1 : recv(fd, msg, sizeof(msg), MSG_DONTWAIT | MSG_TRUNC);
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0) {
			fail(0, err, errlen, "reading mrcd's answer: %s", strerror(errno));
			return AGENT_CALL_FAILED;
		}
		if (n == 0) {
			fail(0, err, errlen, "mrcd closed the connection before it "
			     "answered (was it restarting? try again; a stream "
			     "reader that reads nothing for %d s is dropped too)",
			     AGENT_TIMEOUT_MS / 1000);
			return AGENT_CALL_FAILED;
		}
		memcpy(&h, msg, (size_t)n < sizeof(h) ? (size_t)n : sizeof(h));
		if (!msg_valid(&h, n)) {
			fail(0, err, errlen, "mrcd sent a malformed answer "
			     "(is mrcctl from the same build as mrcd?)");
			return AGENT_CALL_FAILED;
		}
		deadline = now_ms() + AGENT_TIMEOUT_MS;
		switch (h.type) {
		case AGENT_MSG_OUT:
			if (!copy_text(out, msg + sizeof(h), h.len))
				return AGENT_CALL_OUTPUT_CLOSED;
			break;
		case AGENT_MSG_ERR:
			copy_text(errf, msg + sizeof(h), h.len);
			break;
		case AGENT_MSG_EXIT:
			*status = h.status;
			return AGENT_CALL_OK;
		default:
			fail(0, err, errlen, "mrcd sent an answer of unknown type %u",
			     h.type);
			return AGENT_CALL_FAILED;
		}
	}
}

enum agent_call_result agent_call(const char *sock_path, int argc,
				  char *const *argv, FILE *out, FILE *errf,
				  int *status, volatile sig_atomic_t *stop,
				  char *err, size_t errlen)
{
	int64_t deadline = now_ms() + AGENT_TIMEOUT_MS;
	enum agent_call_result res;
	char *req = NULL;
	size_t len = 0;
	int fd = -1;

	if (build_request(argc, argv, &req, &len, err, errlen))
		return AGENT_CALL_FAILED;
	res = connect_agent(sock_path, &fd, deadline, err, errlen);
	if (res == AGENT_CALL_OK)
		res = send_request(fd, req, len, deadline, err, errlen);
	if (res == AGENT_CALL_OK)
		res = read_reply(fd, out, errf, status, stop, err, errlen);
	if (fd >= 0)
		close(fd);
	free(req);
	return res;
}
