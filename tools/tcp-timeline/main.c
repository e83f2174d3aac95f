// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-tcp-timeline: one TCP or MPTCP stream of a deterministic byte
 * pattern, verified byte for byte by the server, with the bytes received
 * per millisecond as CSV (the format of `mrc-perf server --timeline`), so
 * TCP and MPTCP runs can be compared with MRC runs on the same lab.
 *
 *   mrc-tcp-timeline server [--port P] [--mptcp] [--timeline FILE] [--once]
 *       [--json] [--timeout-s S]
 *   mrc-tcp-timeline client HOST [--port P] [--mptcp] --bytes N [--json]
 *       [--sport PORT] [--bind ADDR] [--timeout-s S] [--msg-size S [--depth D]]
 *   mrc-tcp-timeline now
 *
 * Wire protocol (one connection = one session):
 *   client -> server: "MRCTTL01" + u64 BE byte count N, then N bytes of
 *                     pattern (byte i = byte i%8 of the LE word w(i/8));
 *                     message mode: "MRCTTM01" + u64 BE N + u64 BE message
 *                     size S, then the same N bytes
 *   server -> client: message mode only, while the data arrives: u64 BE
 *                     (1 << 63 | M) each time the count M of messages whose
 *                     every byte arrived and was checked grows (cumulative;
 *                     the last message may be shorter than S)
 *   server -> client: "MRCTTL01" + u64 BE bytes received + u64 BE flags
 *                     (bit 0: verified); the server then waits for one
 *                     byte from the client before it closes, so the
 *                     server ends in TIME_WAIT and the client's port can
 *                     be reused at once (benchmarks pin the source port to
 *                     pin the ECMP path). An ack record has its top bit
 *                     set, the verdict's first byte ('M') does not.
 *
 * This file: signal handling and the commands. tcp_timeline.h lists the
 * other files and what each does.
 */
#include "tcp_timeline.h"

#include <inttypes.h>
#include <stdlib.h>

volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	struct sigaction sa = { .sa_handler = on_signal };

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "now")) {
		if (argc != 2)
			usage_error("now takes no arguments");
		printf("%" PRIu64 "\n", now_ns());
		return 0;
	}
	if (!strcmp(argv[1], "server"))
		o.server = true;
	else if (!strcmp(argv[1], "client"))
		o.client = true;
	else
		usage_error("unknown command '%s' (server, client, now)", argv[1]);
	parse_args(argc, argv, &o);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return o.server ? run_server(&o) : run_client(&o);
}
