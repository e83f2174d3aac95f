// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcctl: the operator's view of the MRC fast path of one host.
 *
 * mrcctl parses the command line with the command table (agent/cmd_table.h:
 * usage errors and --help need no agent). The commands the table marks
 * CMD_IN_MRCCTL (`ev expand`, pure computation, and `doctor`) run here
 * (local.c); every other one runs inside mrcd, which owns the pinned
 * maps: mrcctl sends the command line over mrcd's Unix socket and prints
 * what comes back, exiting with mrcd's status. The protocol is in
 * agent/agent_ipc.h, the executors in agent/cmd_exec*.c.
 *
 * `events` and `probe` stream: their output comes as mrcd has it, for as
 * long as it lasts. SIGINT or SIGTERM ends mrcctl quietly (status 0 for
 * `events`, whose normal end that is; 130 otherwise), and so does a closed
 * output pipe (`mrcctl events | head`).
 *
 * usage: mrcctl [--pin-dir DIR] COMMAND [ARGS] [--json]
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_ipc.h"
#include "agent/cmd_table.h"
#include "mrcctl/mrcctl.h"

void mrcctl_log(const char *cmd, const char *fmt, ...)
{
	char name[64];
	va_list ap;

	snprintf(name, sizeof(name), "mrcctl%s%s", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	cmd_vmsg(stderr, name, fmt, ap);
	va_end(ap);
}

struct global_opts {
	const char *pin_dir;
	bool json;
	int first_word;		/* argv index of the command */
};

/* Options before the command; the command parses its own. */
static int parse_global(int argc, char **argv, struct global_opts *g)
{
	int i;

	g->pin_dir = AGENT_PIN_DIR_DEFAULT;
	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--pin-dir")) {
			if (++i >= argc) {
				mrcctl_log(NULL, "--pin-dir needs a value");
				return AGENT_EXIT_USAGE;
			}
			g->pin_dir = argv[i];
		} else if (!strncmp(argv[i], "--pin-dir=", 10)) {
			g->pin_dir = argv[i] + 10;
		} else if (!strcmp(argv[i], "--json")) {
			g->json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cmd_usage_overview(stdout);
			exit(0);
		} else {
			mrcctl_log(NULL, "unknown option '%s'\ntry 'mrcctl --help'",
				   argv[i]);
			return AGENT_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		mrcctl_log(NULL, "which command?");
		cmd_usage_overview(stderr);
		return AGENT_EXIT_USAGE;
	}
	g->first_word = i;
	return 0;
}

#define EXIT_INTERRUPTED	130

static volatile sig_atomic_t stop_requested;

static void on_stop_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

/* No SA_RESTART: the wait for mrcd's next message ends on the signal. */
static void catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_stop_signal };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* A closed stdout shows as a write error, handled where it happens. */
	signal(SIGPIPE, SIG_IGN);
}

static void not_running(const char *pin_dir, bool default_dir)
{
	mrcctl_log(NULL, "mrcd is not running for %s: start it with "
		   "mrcd --planes IF[,IF...]%s%s", pin_dir,
		   default_dir ? "" : " --pin-dir ", default_dir ? "" : pin_dir);
}

/* The command in mrcd: its output, its exit status. */
static int forward(const struct global_opts *g, const struct cmd_req *req,
		   int argc, char **argv)
{
	bool default_dir = !strcmp(g->pin_dir, AGENT_PIN_DIR_DEFAULT);
	enum agent_call_result res;
	struct agent_paths paths;
	char err[256];
	int status = AGENT_EXIT_FAIL;

	/* No parent folder, no bpffs there, no agent. */
	if (agent_paths_resolve(g->pin_dir, &paths, err, sizeof(err))) {
		not_running(g->pin_dir, default_dir);
		return AGENT_EXIT_FAIL;
	}
	res = agent_call(paths.sock_path, argc, argv, stdout, stderr, &status,
			 &stop_requested, err, sizeof(err));
	fflush(stdout);
	switch (res) {
	case AGENT_CALL_OK:
		return status;
	case AGENT_CALL_INTERRUPTED:
		return req->id == CMD_EVENTS ? 0 : EXIT_INTERRUPTED;
	case AGENT_CALL_OUTPUT_CLOSED:
		return 0;
	case AGENT_CALL_NOT_RUNNING:
		not_running(paths.pin_dir, default_dir);
		break;
	case AGENT_CALL_TIMEOUT:
		mrcctl_log(NULL, "mrcd is not answering (%s, %d s): is it stopped "
			   "or stuck? (its socket: %s)", paths.pin_dir,
			   AGENT_TIMEOUT_MS / 1000, paths.sock_path);
		break;
	case AGENT_CALL_FAILED:
		mrcctl_log(NULL, "%s", err);
		break;
	}
	return AGENT_EXIT_FAIL;
}

/* The command's words and options, plus a --json given before them. */
static void command_args(int argc, char **argv, const struct global_opts *g,
			 char **args, int *n)
{
	static char json[] = "--json";

	*n = argc - g->first_word;
	memcpy(args, argv + g->first_word, (size_t)*n * sizeof(*args));
	if (g->json)
		args[(*n)++] = json;
	args[*n] = NULL;
}

int main(int argc, char **argv)
{
	struct global_opts g = {};
	struct cmd_req *req;
	char **args;
	int n, rc;

	rc = parse_global(argc, argv, &g);
	if (rc)
		return rc;
	args = calloc((size_t)argc + 2, sizeof(*args));
	req = malloc(sizeof(*req));
	if (!args || !req) {
		mrcctl_log(NULL, "out of memory");
		free(args);
		free(req);
		return AGENT_EXIT_FAIL;
	}
	catch_signals();
	/* mrcd takes addresses only: names are looked up here. */
	rc = resolve_names(argc - g.first_word, argv + g.first_word);
	if (rc)
		goto out;
	command_args(argc, argv, &g, args, &n);
	if (!cmd_parse(n, args, stdout, stderr, req, &rc))
		goto out;	/* --help, or a usage error */
	if (cmd_spec_of(req->id)->where == CMD_IN_MRCCTL) {
		rc = local_exec(req, g.pin_dir, stdout, stderr);
	} else {
		/* Parsing reordered args (getopt does): send them as typed. */
		command_args(argc, argv, &g, args, &n);
		rc = forward(&g, req, n, args);
	}
out:
	free(req);
	free(args);
	return rc;
}
