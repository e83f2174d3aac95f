// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-tcp-timeline's command line: the --help text, the options of each
 * command and the checks of their values.
 */
#include "tcp_timeline.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>

void usage(FILE *f)
{
	fputs(
"Usage:\n"
"  " PROG " server [--port P] [--mptcp] [--timeline FILE] [--once] [--json]\n"
"      [--timeout-s S]\n"
"  " PROG " client HOST [--port P] [--mptcp] --bytes N [--json] [--sport PORT]\n"
"      [--bind ADDR] [--timeout-s S] [--msg-size S [--depth D]]\n"
"  " PROG " now\n"
"  " PROG " --help\n"
"\n"
"One TCP (or MPTCP) connection carries N bytes of a deterministic pattern\n"
"from the client to the server, which checks every byte and records the\n"
"bytes received per millisecond.\n"
"\n"
"server:\n"
"  --port P        TCP port to listen on (default 18600), IPv6 and IPv4\n"
"  --mptcp         listen with IPPROTO_MPTCP (plain TCP clients still work)\n"
"  --timeline FILE CSV 'time_ms,bytes': payload bytes received per ms, one\n"
"                  row per ms (0 where nothing arrived) from the ms of the\n"
"                  first payload byte (time_ms 0) to the last; the latest\n"
"                  session\n"
"  --once          serve one client, then exit (0 verified, 1 otherwise)\n"
"  --json          one JSON line per session on stdout: bytes, expected,\n"
"                  verified, seconds, gbps, t0_ns (CLOCK_MONOTONIC of the\n"
"                  first byte), mptcp, error\n"
"  --timeout-s S   a session is abandoned after S s; with --once the server\n"
"                  also gives up if no client came within S s (default 120)\n"
"client:\n"
"  --bytes N       payload bytes, k/m/g suffixes (binary), required\n"
"  --mptcp         connect with IPPROTO_MPTCP; exit 1 if the kernel has no\n"
"                  MPTCP (net.mptcp.enabled=0)\n"
"  --sport PORT    bind this source port (pins the ECMP path)\n"
"  --bind ADDR     bind this source address\n"
"  --json          one JSON object on stdout: bytes, seconds, gbps,\n"
"                  verified (the server's verdict), mptcp, subflows,\n"
"                  subflow_list (local, remote, bytes_acked, retrans)\n"
"  --timeout-s S   give up after S seconds (default 120)\n"
"  --msg-size S    message mode: the N bytes go as messages of S bytes (k/m/g;\n"
"                  the last one may be shorter), at most D unacknowledged;\n"
"                  the server acknowledges each message once all its bytes\n"
"                  arrived and were checked. A message is posted as soon as\n"
"                  fewer than D are unacknowledged (the first D at once) and\n"
"                  completes when the client reads its ack: its completion\n"
"                  time includes the wait behind earlier messages, as\n"
"                  mrc-perf's per-WRITE latency (post to completion, --depth\n"
"                  D) does. Both ends set TCP_NODELAY. --json adds msg_size,\n"
"                  depth, ops, lat_p50_us, lat_p99_us, lat_max_us\n"
"  --depth D       messages outstanding, 1..512 (default 16, as mrc-perf)\n"
"now:             print CLOCK_MONOTONIC in ns (the clock of t0_ns, of\n"
"                 mrcctl events' time_ns and of mrc-perf's timelines)\n"
"Exit status: 0 ok, 1 run-time failure (or data not verified), 2 usage.\n",
	      f);
}

static bool parse_u64_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	uint64_t mul = 1;

	if (!*s || *s == '-')
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return false;
	switch (*end) {
	case 'k': case 'K': mul = 1ull << 10; end++; break;
	case 'm': case 'M': mul = 1ull << 20; end++; break;
	case 'g': case 'G': mul = 1ull << 30; end++; break;
	case 't': case 'T': mul = 1ull << 40; end++; break;
	default: break;
	}
	if (*end || (v && mul > UINT64_MAX / v))
		return false;
	*out = v * mul;
	return true;
}

static unsigned int parse_uint(const char *opt, const char *s, unsigned int lo,
			       unsigned int hi)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || v < lo || v > hi)
		usage_error("%s: expected a number in %u..%u, got '%s'", opt, lo, hi, s);
	return (unsigned int)v;
}

enum { OPT_PORT = 256, OPT_MPTCP, OPT_JSON, OPT_TIMEOUT, OPT_TIMELINE, OPT_ONCE,
       OPT_BYTES, OPT_SPORT, OPT_BIND, OPT_MSG_SIZE, OPT_DEPTH };

void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "port", required_argument, NULL, OPT_PORT },
		{ "mptcp", no_argument, NULL, OPT_MPTCP },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "timeout-s", required_argument, NULL, OPT_TIMEOUT },
		{ "timeline", required_argument, NULL, OPT_TIMELINE },
		{ "once", no_argument, NULL, OPT_ONCE },
		{ "bytes", required_argument, NULL, OPT_BYTES },
		{ "sport", required_argument, NULL, OPT_SPORT },
		{ "bind", required_argument, NULL, OPT_BIND },
		{ "msg-size", required_argument, NULL, OPT_MSG_SIZE },
		{ "depth", required_argument, NULL, OPT_DEPTH },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	o->port = DEFAULT_PORT;
	o->timeout_s = DEFAULT_TIMEOUT;
	o->depth = DEFAULT_DEPTH;
	opterr = 0;
	optind = 2;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		bool srv_only = c == OPT_TIMELINE || c == OPT_ONCE;
		bool cli_only = c == OPT_BYTES || c == OPT_SPORT || c == OPT_BIND ||
				c == OPT_MSG_SIZE || c == OPT_DEPTH;

		if ((srv_only && !o->server) || (cli_only && !o->client))
			usage_error("%s: not an option of '%s'", argv[optind - 1],
				    o->server ? "server" : "client");
		switch (c) {
		case OPT_PORT: o->port = parse_uint("--port", optarg, 1, 65535); break;
		case OPT_MPTCP: o->mptcp = true; break;
		case OPT_JSON: o->json = true; break;
		case OPT_TIMEOUT:
			o->timeout_s = parse_uint("--timeout-s", optarg, 1, 86400);
			break;
		case OPT_TIMELINE:
			if (!*optarg)
				usage_error("--timeline: empty path");
			o->timeline = optarg;
			break;
		case OPT_ONCE: o->once = true; break;
		case OPT_BYTES:
			if (!parse_u64_size(optarg, &o->bytes) || !o->bytes ||
			    o->bytes > (1ull << 44))
				usage_error("--bytes: expected 1..16t with optional k/m/g/t, got '%s'",
					    optarg);
			o->have_bytes = true;
			break;
		case OPT_SPORT: o->sport = parse_uint("--sport", optarg, 1, 65535); break;
		case OPT_BIND: o->bind_addr = optarg; break;
		case OPT_MSG_SIZE:
			if (!parse_u64_size(optarg, &o->msg_size) || !o->msg_size ||
			    o->msg_size > (1ull << 40))
				usage_error("--msg-size: expected 1..1t with optional k/m/g/t, got '%s'",
					    optarg);
			break;
		case OPT_DEPTH:
			o->depth = parse_uint("--depth", optarg, 1, MAX_DEPTH);
			o->have_depth = true;
			break;
		case 'h': usage(stdout); exit(0);
		case ':':
			usage_error("%s needs a value", argv[optind - 1]);
		default:
			usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (o->client) {
		if (optind >= argc)
			usage_error("client: HOST is required");
		o->host = argv[optind++];
		if (!o->have_bytes)
			usage_error("client: --bytes N is required");
		if (o->have_depth && !o->msg_size)
			usage_error("--depth needs --msg-size");
		if (o->msg_size && (o->bytes + o->msg_size - 1) / o->msg_size > MAX_MSGS)
			usage_error("--msg-size: more than %u messages in --bytes", MAX_MSGS);
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
}
