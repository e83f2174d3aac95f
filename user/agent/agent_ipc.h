/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * How mrcctl talks to mrcd.
 *
 * Where: one Unix socket per agent, next to its lock file in /run/mrc and
 * named like it after the bpffs instance (device number) that holds the
 * pin folder and the folder itself. Lab hosts each mount their own bpffs
 * at the same path and share /run, so the name must say which bpffs; the
 * derivation lives here so mrcd and mrcctl cannot disagree on it.
 *
 * Protocol (SOCK_SEQPACKET, so every send is one message, never split):
 *
 *   request  one message: struct agent_req, then `argc` NUL-terminated
 *            arguments (the command line after "mrcctl [--pin-dir D]"),
 *            AGENT_REQ_MAX bytes at most. mrcctl sends only what the
 *            command table's parser accepted; mrcd parses it again with
 *            the same parser (agent/cmd_table.h) before executing it.
 *   reply    any number of AGENT_MSG_OUT / AGENT_MSG_ERR messages (text
 *            for mrcctl's stdout / stderr, AGENT_MSG_MAX bytes at most
 *            each, AGENT_REPLY_MAX in total: a bigger answer is replaced
 *            by a message and exit status 1), then one AGENT_MSG_EXIT
 *            whose `status` is mrcctl's exit status; mrcd then closes.
 *
 * Both ends give up after AGENT_TIMEOUT_MS of silence. mrcd serves
 * clients from its poll loop without ever blocking on one: a client that
 * does not send its request or read its reply in time is dropped.
 *
 * Streams: `mrcctl events` and `mrcctl probe` go on for as long as they
 * need. mrcd sends their text as it comes (the reply has no size limit
 * then) and an empty AGENT_MSG_OUT every AGENT_HEARTBEAT_MS when it has
 * nothing to say, so mrcctl can tell a quiet stream from a dead agent.
 * A stream ends with AGENT_MSG_EXIT like any reply, or when either side
 * closes the connection.
 */
#ifndef MRC_AGENT_IPC_H
#define MRC_AGENT_IPC_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/un.h>

#include "common/run_paths.h"


#define AGENT_PROTO_VERSION	2	/* 2: streams and heartbeats */
#define AGENT_REQ_MAGIC		0x5143524du	/* "MRCQ" */
#define AGENT_MSG_MAGIC		0x5243524du	/* "MRCR" */
#define AGENT_REQ_MAX		(64 * 1024)
#define AGENT_ARGS_MAX		256
#define AGENT_MSG_MAX		(16 * 1024)	/* one reply message, header included */
/*
 * stdout + stderr text of one reply: `qp list --json` takes about 600
 * bytes a QP, 40 MB at 65,536 QPs. A bigger answer fails with a message.
 */
#define AGENT_REPLY_MAX		(128u << 20)
#define AGENT_TIMEOUT_MS	5000
#define AGENT_HEARTBEAT_MS	1000
#define AGENT_MAX_CLIENTS	32
#define AGENT_MAX_STREAMS	16	/* of the clients, streams at most */

struct agent_req {
	uint32_t magic;		/* AGENT_REQ_MAGIC */
	uint16_t version;	/* AGENT_PROTO_VERSION */
	uint16_t argc;
	uint32_t args_len;	/* bytes of arguments after this header */
	uint32_t pad;
};

enum agent_msg_type {
	AGENT_MSG_OUT	= 1,
	AGENT_MSG_ERR	= 2,
	AGENT_MSG_EXIT	= 3,
};

struct agent_msg {
	uint32_t magic;		/* AGENT_MSG_MAGIC */
	uint16_t version;
	uint8_t	 type;		/* enum agent_msg_type */
	uint8_t	 pad;
	uint32_t len;		/* bytes of text after this header */
	int32_t	 status;	/* AGENT_MSG_EXIT: the exit status */
};

/* ---- mrcd's side -------------------------------------------------------- */

/* A listening socket at `path` (replacing a stale one), mode 0600. */
int agent_listen(const char *path, int *fd, char *err, size_t errlen);

/*
 * Check a request message and point argv[0..argc-1] into `buf` (which
 * must hold one spare byte past `len`). 0, or -EPROTO / -E2BIG with a
 * reason.
 */
int agent_req_parse(char *buf, size_t len, int *argc, char **argv,
		    char *err, size_t errlen);

/*
 * A reply on its way out: the text, and how far sending has got. Sent a
 * message at a time without blocking, so a slow reader costs mrcd nothing.
 */
struct agent_reply {
	char *out, *err;	/* malloc'd; owned by the reply */
	size_t out_len, err_len;
	int status;
	int phase;		/* 0 stdout, 1 stderr, 2 exit, 3 done */
	size_t off;
};

/*
 * Take ownership of the texts; more than AGENT_REPLY_MAX together becomes
 * a failure that says so (never a clipped answer).
 */
void agent_reply_init(struct agent_reply *r, int status, char *out,
		      size_t out_len, char *err, size_t err_len);
/* 1 when all is sent, 0 when the socket is full (wait for POLLOUT), -errno. */
int agent_reply_send(int fd, struct agent_reply *r);
void agent_reply_free(struct agent_reply *r);

/*
 * One message of a stream (text of at most AGENT_MSG_TEXT_MAX bytes;
 * `status` for AGENT_MSG_EXIT), without blocking: 1 sent, 0 when the
 * socket is full, -errno.
 */
#define AGENT_MSG_TEXT_MAX	(AGENT_MSG_MAX - sizeof(struct agent_msg))
int agent_send_msg(int fd, enum agent_msg_type type, const char *text,
		   size_t len, int status);

/* ---- mrcctl's side ------------------------------------------------------ */

enum agent_call_result {
	AGENT_CALL_OK = 0,
	AGENT_CALL_NOT_RUNNING,	/* no socket, or nobody listening on it */
	AGENT_CALL_TIMEOUT,	/* mrcd was silent for AGENT_TIMEOUT_MS */
	AGENT_CALL_FAILED,	/* anything else; reason in err */
	AGENT_CALL_INTERRUPTED,	/* *stop was set (a signal) */
	AGENT_CALL_OUTPUT_CLOSED, /* writing `out` failed, e.g. a closed pipe */
};

/*
 * Send argv to the mrcd of `sock_path` and copy its reply text to `out`
 * and `errf` as it arrives (flushed message by message, for streams);
 * *status gets the exit status it sent. A signal handler that sets *stop
 * (installed without SA_RESTART) ends the call.
 */
enum agent_call_result agent_call(const char *sock_path, int argc,
				  char *const *argv, FILE *out, FILE *errf,
				  int *status, volatile sig_atomic_t *stop,
				  char *err, size_t errlen);

#endif
