// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcctl: the operator's view of the MRC fast path of one host.
 *
 * Commands run inside mrcd, which owns the pinned maps: mrcctl checks the
 * command line (so usage errors and --help need no agent), sends it over
 * mrcd's Unix socket and prints what comes back, exiting with mrcd's
 * status. `ev expand` is pure computation and runs here. The protocol is
 * in lib/agent_ipc.h, the commands in lib/agent_cmds.c.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agent_cmds.h"
#include "agent/agent_ipc.h"

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
				fprintf(stderr, "mrcctl: --pin-dir needs a value\n");
				return AGENT_EXIT_USAGE;
			}
			g->pin_dir = argv[i];
		} else if (!strncmp(argv[i], "--pin-dir=", 10)) {
			g->pin_dir = argv[i] + 10;
		} else if (!strcmp(argv[i], "--json")) {
			g->json = true;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			agent_cmd_usage(stdout);
			exit(0);
		} else {
			fprintf(stderr, "mrcctl: unknown option '%s'\ntry 'mrcctl --help'\n",
				argv[i]);
			return AGENT_EXIT_USAGE;
		}
	}
	if (i >= argc) {
		fprintf(stderr, "mrcctl: which command?\n");
		agent_cmd_usage(stderr);
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
	fprintf(stderr, "mrcctl: mrcd is not running for %s: start it with "
		"mrcd --planes IF[,IF...]%s%s\n", pin_dir,
		default_dir ? "" : " --pin-dir ", default_dir ? "" : pin_dir);
}

static int forward(const struct global_opts *g, int argc, char **argv)
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
		return agent_cmd_is_events(argc, argv) ? 0 : EXIT_INTERRUPTED;
	case AGENT_CALL_OUTPUT_CLOSED:
		return 0;
	case AGENT_CALL_NOT_RUNNING:
		not_running(paths.pin_dir, default_dir);
		break;
	case AGENT_CALL_TIMEOUT:
		fprintf(stderr, "mrcctl: mrcd is not answering (%s, %d s): is it stopped "
			"or stuck? (its socket: %s)\n", paths.pin_dir,
			AGENT_TIMEOUT_MS / 1000, paths.sock_path);
		break;
	case AGENT_CALL_FAILED:
		fprintf(stderr, "mrcctl: %s\n", err);
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
	struct agent_cmd_env check = { .dry_run = true };
	struct global_opts g = {};
	char **args;
	int n, rc;
	bool done = false;

	rc = parse_global(argc, argv, &g);
	if (rc)
		return rc;
	args = calloc((size_t)argc + 2, sizeof(*args));
	if (!args) {
		fprintf(stderr, "mrcctl: out of memory\n");
		return AGENT_EXIT_FAIL;
	}
	check.pin_dir = g.pin_dir;
	catch_signals();
	/* mrcd takes addresses only: names are looked up here. */
	rc = agent_cmd_resolve_names(argc - g.first_word, argv + g.first_word, stderr);
	if (rc) {
		free(args);
		return rc;
	}
	command_args(argc, argv, &g, args, &n);
	rc = agent_cmd_run(&check, n, args, stdout, stderr, &done);
	if (!rc && !done) {
		/* The check reordered args (getopt does): send them as typed. */
		command_args(argc, argv, &g, args, &n);
		rc = forward(&g, n, args);
	}
	free(args);
	return rc;
}
