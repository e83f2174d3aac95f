// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-qp-fill: test-only (tests/e2e/limits.sh), built into build/tests/,
 * never installed. Opens a libmrc context and creates QPs, to take a
 * host's QP numbers or context slots up to mrcd's limits.
 *
 *   mrc-qp-fill [--pin-dir DIR] --qps N [--hold]
 *
 * Prints "context" once the context is open and "created K" after trying
 * N QPs; when one fails, "failed: ERRNO_NAME" (libmrc's message went to
 * stderr before). --hold: after N QPs, keep them (and the context) until
 * stdin ends. Exit 0 when all N were created, 3 when the context could
 * not be opened, 4 when a QP could not be created, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mrc/mrc.h"

static const char *errno_name(int e)
{
	switch (e) {
	case ENOSPC:
		return "ENOSPC";
	case EMFILE:
		return "EMFILE";
	case ENOENT:
		return "ENOENT";
	default:
		return strerror(e);
	}
}

static void wait_for_eof(void)
{
	char buf[64];

	while (read(STDIN_FILENO, buf, sizeof(buf)) > 0)
		;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pin-dir", required_argument, NULL, 'D' },
		{ "qps", required_argument, NULL, 'n' },
		{ "hold", no_argument, NULL, 'H' },
		{}
	};
	struct mrc_context_attr attr = { 0 };
	struct mrc_context *ctx;
	struct mrc_qp **qps;
	struct mrc_cq *cq;
	int c, n = -1, made = 0, rc = 0;
	bool hold = false;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (c == 'D')
			attr.pin_dir = optarg;
		else if (c == 'n')
			n = atoi(optarg);
		else if (c == 'H')
			hold = true;
		else
			return 2;
	}
	if (n < 0 || n > 100000 || optind != argc) {
		fprintf(stderr, "usage: mrc-qp-fill [--pin-dir DIR] --qps N [--hold]\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ctx = mrc_open(&attr);
	if (!ctx) {
		printf("failed: %s\n", errno_name(errno));
		return 3;
	}
	printf("context\n");
	qps = calloc((size_t)n + 1, sizeof(*qps));
	cq = mrc_create_cq(ctx, 16);
	if (!qps || !cq) {
		printf("failed: %s\n", errno_name(errno));
		mrc_close(ctx);
		return 1;
	}
	for (made = 0; made < n; made++) {
		qps[made] = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 1 });
		if (!qps[made])
			break;
	}
	printf("created %d\n", made);
	if (made < n) {
		printf("failed: %s\n", errno_name(errno));
		rc = 4;
	} else if (hold) {
		printf("holding\n");
		wait_for_eof();
	}
	while (made > 0)
		mrc_destroy_qp(qps[--made]);
	mrc_destroy_cq(cq);
	mrc_close(ctx);
	free(qps);
	return rc;
}
