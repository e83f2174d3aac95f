// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's command line: the --help text (docs/man/mrc-perf.8 and the
 * README hold the same words: tests/e2e/help_matches.sh), the option
 * table, and the checks of every value. Parsing only: nothing here opens
 * libmrc or a socket.
 */
#include "perf.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"
#include "mrc/abi.h"

static const char usage_text[] =
"Usage:\n"
"  " PROG " server [--port P] [--once] [--json] [--pin-dir DIR] [--timeline FILE]\n"
"      [--cc-profile N] [--ev-profile N]\n"
"  " PROG " client HOST[,HOST...] [--qps N] [--port P] [--size BYTES | --sweep MIN:MAX]\n"
"      [--iters N] [--bytes TOTAL] [--imm] [--icrc] [--verify] [--json] [--depth N]\n"
"      [--mtu BYTES] [--offset BYTES] [--ack-timeout T] [--retry N] [--exp-retry N]\n"
"      [--mpr UNITS] [--timeout-s S] [--pin-dir DIR] [--cc-profile N]\n"
"      [--ev-profile N] [--cc-timeline FILE] [--idle S] [--linger-s S]\n"
"      [--settle-s S]\n"
"  " PROG " --help\n"
"\n"
"RDMA WRITE bandwidth and latency over MRC, like perftest's ib_write_bw.\n"
"The server waits for clients on TCP port P (default 18515) and gives each a\n"
"zero-filled region; the client WRITEs into it and prints one line per size.\n"
"One server process serves many clients at once, each with many QPs.\n"
"\n"
"server:\n"
"  --port P        TCP port to listen on (default 18515); also a client\n"
"                  option, the server's port\n"
"  --once          serve one client, then exit (1 if its session failed)\n"
"  --json          one JSON line per client on stdout\n"
"  --pin-dir DIR   where mrcd pinned its maps (default " MRC_DEFAULT_PIN_DIR ")\n"
"  --cc-profile N  the QP's CC profile (mrcctl profile cc), 0..63 (default:\n"
"                  libmrc's); also a client option\n"
"  --ev-profile N  the QP's EV profile (mrcctl profile ev), 0..63 (default\n"
"                  0): its paths and UDP GSO burst (a profile of burst 1\n"
"                  sprays per packet); also a client option\n"
"  --timeline FILE the payload placed in the region per millisecond, as CSV:\n"
"                  a header 'time_ms,bytes', then one row per ms (0 where\n"
"                  nothing arrived) from the ms the client's first BEGIN\n"
"                  arrived (time_ms 0) to its DONE, 10 minutes at most.\n"
"                  FILE holds the latest session: just the header while one\n"
"                  runs, its rows when it ends. Exit 2 if FILE is not writable\n"
"client:\n"
"  HOST[,HOST...]  the server, or several: the QPs are spread round robin\n"
"  --qps N         N QPs from this one process, 1..65536 (at least one per\n"
"                  HOST), each with its own region on its server, all\n"
"                  progressed through one CQ. --size, --iters, --bytes and\n"
"                  --depth apply to each QP; --json adds qps, servers,\n"
"                  setup_seconds (create and connect until all are RTS),\n"
"                  qps_in_error, qps_verify_failed; gbps is the aggregate.\n"
"                  Not with --idle, --cc-timeline. Exit 1 with\n"
"                  a clear message when a host runs out of QPs (ENOSPC)\n"
"  --size BYTES    WRITE size, k/m/g suffixes, 1..1g (default 65536)\n"
"  --sweep MIN:MAX every power of two from MIN to MAX, both included\n"
"  --iters N       WRITEs per size (default 1000)\n"
"  --bytes TOTAL   WRITEs per size = max(1, TOTAL / size), overrides --iters\n"
"  --imm           WRITE with immediate; the server checks order and count\n"
"  --icrc          the QPs of both ends send and check the RoCEv2 invariant\n"
"                  CRC (MRC_QP_ICRC): one packet per datagram, no GSO bursts\n"
"  --verify        after each size, compare checksums of source and region\n"
"  --json          one JSON object on stdout at the end, nothing else\n"
"  --depth N       WRITEs outstanding (default 16, at most 512)\n"
"  --mtu BYTES     path MTU, payload bytes per packet, 256..9000 (default:\n"
"                  from the interfaces towards HOST and of the MRC planes)\n"
"  --offset BYTES  added to the remote address (to test refused WRITEs)\n"
"  --ack-timeout T ACK timeout 1.024 us * 2^T, 1..24 (default 14)\n"
"  --retry N       retries at a fixed interval, 0..7 (default 7)\n"
"  --exp-retry N   doubling retries, 0..25 (default 7)\n"
"  --mpr UNITS     window in units of 128 packets, 1..32 (default 8)\n"
"  --timeout-s S   give up after S seconds (default 120)\n"
"  --cc-profile N  the QP's CC profile (mrcctl profile cc), 0..63 (default:\n"
"                  libmrc's). --json then has \"cc\": the window at the end\n"
"                  (cwnd, min_rtt_ns, avg_delay_ns, rtt_p50_us, rtt_p99_us,\n"
"                  n_md, n_qa, n_trims, n_losses, ...; null without one)\n"
"  --cc-timeline FILE  the QP's congestion window, at most once per ms, as\n"
"                  CSV 'time_ms,acked_bytes,cwnd,inflight': time_ms from the\n"
"                  first BEGIN (--json: cc_timeline_t0_ns, CLOCK_MONOTONIC),\n"
"                  bytes acked since then, cwnd and bytes in flight; ms in\n"
"                  which the loop did not run have no row. Written at the\n"
"                  end, 10 minutes at most. Exit 2 if FILE is not writable\n"
"  --idle S        connect and bring the QP up, then post nothing for S\n"
"                  seconds (polling the CQ as an idle application must),\n"
"                  then end cleanly: what an idle QP costs. Less than\n"
"                  --timeout-s; not with --verify or --imm\n"
"  --linger-s S    after the last WRITE, stay connected S seconds (0..60)\n"
"                  with the QP idle, still polling (what an idle QP costs:\n"
"                  --json \"wait\" counts its spins and sleeps)\n"
"  --settle-s S    every QP up, stay connected S seconds (0..60) with the\n"
"                  QPs idle, still polling, before the first WRITE (says\n"
"                  \"settle for S s\"): a measurement can start between set-up\n"
"                  and the data\n"
"Exit status: 0 ok, 1 run-time failure, 2 usage error.\n";

/*
 * Options before OPT_ONCE apply to both roles, OPT_ONCE..OPT_TIMELINE are
 * the server's, the rest the client's.
 */
enum {
	OPT_PORT = 256, OPT_JSON, OPT_PIN_DIR, OPT_CC_PROFILE, OPT_EV_PROFILE,
	OPT_ONCE, OPT_TIMELINE,
	OPT_SIZE, OPT_SWEEP, OPT_ITERS, OPT_BYTES, OPT_IMM, OPT_ICRC, OPT_VERIFY,
	OPT_DEPTH, OPT_MTU, OPT_OFFSET, OPT_ACK_TIMEOUT, OPT_RETRY,
	OPT_EXP_RETRY, OPT_MPR, OPT_TIMEOUT_S, OPT_CC_TIMELINE, OPT_IDLE, OPT_LINGER_S,
	OPT_SETTLE_S,
	OPT_QPS,
};

static const struct option long_opts[] = {
	{ "port", required_argument, NULL, OPT_PORT },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "pin-dir", required_argument, NULL, OPT_PIN_DIR },
	{ "cc-profile", required_argument, NULL, OPT_CC_PROFILE },
	{ "ev-profile", required_argument, NULL, OPT_EV_PROFILE },
	{ "once", no_argument, NULL, OPT_ONCE },
	{ "timeline", required_argument, NULL, OPT_TIMELINE },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "sweep", required_argument, NULL, OPT_SWEEP },
	{ "iters", required_argument, NULL, OPT_ITERS },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "imm", no_argument, NULL, OPT_IMM },
	{ "icrc", no_argument, NULL, OPT_ICRC },
	{ "verify", no_argument, NULL, OPT_VERIFY },
	{ "depth", required_argument, NULL, OPT_DEPTH },
	{ "mtu", required_argument, NULL, OPT_MTU },
	{ "offset", required_argument, NULL, OPT_OFFSET },
	{ "ack-timeout", required_argument, NULL, OPT_ACK_TIMEOUT },
	{ "retry", required_argument, NULL, OPT_RETRY },
	{ "exp-retry", required_argument, NULL, OPT_EXP_RETRY },
	{ "mpr", required_argument, NULL, OPT_MPR },
	{ "timeout-s", required_argument, NULL, OPT_TIMEOUT_S },
	{ "cc-timeline", required_argument, NULL, OPT_CC_TIMELINE },
	{ "idle", required_argument, NULL, OPT_IDLE },
	{ "linger-s", required_argument, NULL, OPT_LINGER_S },
	{ "settle-s", required_argument, NULL, OPT_SETTLE_S },
	{ "qps", required_argument, NULL, OPT_QPS },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* Report getopt failures ourselves so the message names the bad argument. */
static void __attribute__((noreturn)) bad_option(int c, char **argv)
{
	const char *arg = argv[optind - 1];

	if (c == ':')
		usage_error("option '%s' needs a value", arg);
	usage_error("unknown option '%s'%s", arg,
		    strchr(arg, '=') ? " (or it takes no value)" : "");
}

/* A plain integer in [min, max]. */
static uint64_t parse_number(const char *opt, const char *s, uint64_t min,
			     uint64_t max)
{
	uint64_t v;
	int err;

	if (s[0] == '-')
		usage_error("%s: '%s' is negative", opt, s);
	err = parse_u64(s, max, &v);
	if (err == -EINVAL)
		usage_error("%s: '%s' is not a number", opt, s);
	if (err || v < min)
		usage_error("%s: %s is out of range (%" PRIu64 "..%" PRIu64 ")",
			    opt, s, min, max);
	return v;
}

/* A byte count with an optional k/m/g suffix, in [min, max]. */
static uint64_t parse_bytes(const char *opt, const char *s, uint64_t min,
			    uint64_t max)
{
	uint64_t v;
	int err;

	if (s[0] == '-')
		usage_error("%s: '%s' is negative", opt, s);
	err = parse_size(s, &v);
	if (err == -EINVAL)
		usage_error("%s: '%s' is not a size (e.g. 4096, 64k, 1m, 1g)",
			    opt, s);
	if (err == -ERANGE || v > max)
		usage_error("%s: %s is too large (maximum %" PRIu64 ")",
			    opt, s, max);
	if (v < min)
		usage_error("%s: %s is too small (minimum %" PRIu64 ")",
			    opt, s, min);
	return v;
}

static void parse_sweep(const char *s, struct opts *o)
{
	const char *colon = strchr(s, ':');
	char min[64];
	size_t n = colon ? (size_t)(colon - s) : 0;

	if (!colon || n == 0 || n >= sizeof(min) || !colon[1])
		usage_error("--sweep: '%s' is not of the form MIN:MAX", s);
	memcpy(min, s, n);
	min[n] = '\0';
	o->size_min = parse_bytes("--sweep", min, 1, MAX_MSG_SIZE);
	o->size_max = parse_bytes("--sweep", colon + 1, 1, MAX_MSG_SIZE);
	if (o->size_min > o->size_max)
		usage_error("--sweep: '%s' has MIN > MAX", s);
}

static void apply_option(struct opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_PORT:
		o->port = (uint16_t)parse_number("--port", arg, 1, 65535);
		break;
	case OPT_JSON:
		o->json = true;
		break;
	case OPT_PIN_DIR:
		if (!*arg)
			usage_error("--pin-dir: empty path");
		o->pin_dir = arg;
		break;
	case OPT_CC_PROFILE:
		o->cc_profile = (int)parse_number("--cc-profile", arg, 0,
						  MRC_MAX_PROFILES - 1);
		break;
	case OPT_EV_PROFILE:
		o->ev_profile = (int)parse_number("--ev-profile", arg, 0,
						  MRC_MAX_PROFILES - 1);
		break;
	case OPT_ONCE:
		o->once = true;
		break;
	case OPT_TIMELINE:
		if (!*arg)
			usage_error("--timeline: empty path");
		o->timeline = arg;
		break;
	case OPT_SIZE:
		o->size_min = o->size_max = parse_bytes("--size", arg, 1, MAX_MSG_SIZE);
		break;
	case OPT_SWEEP:
		parse_sweep(arg, o);
		break;
	case OPT_ITERS:
		o->iters = parse_number("--iters", arg, 1, MAX_ITERS);
		break;
	case OPT_BYTES:
		o->bytes_total = parse_bytes("--bytes", arg, 1, UINT64_MAX);
		break;
	case OPT_IMM:
		o->imm = true;
		break;
	case OPT_ICRC:
		o->icrc = true;
		break;
	case OPT_VERIFY:
		o->verify = true;
		break;
	case OPT_DEPTH:
		o->depth = (uint32_t)parse_number("--depth", arg, 1, UINT32_MAX);
		break;
	case OPT_MTU:
		o->mtu = (uint32_t)parse_bytes("--mtu", arg, MTU_MIN, MTU_MAX);
		break;
	case OPT_OFFSET:
		o->offset = parse_bytes("--offset", arg, 0, UINT64_MAX);
		break;
	case OPT_ACK_TIMEOUT:
		o->ack_timeout = (uint8_t)parse_number("--ack-timeout", arg,
						       ACK_TIMEOUT_MIN, ACK_TIMEOUT_MAX);
		break;
	case OPT_RETRY:
		o->retry_cnt = (uint8_t)parse_number("--retry", arg, 0, RETRY_MAX);
		break;
	case OPT_EXP_RETRY:
		o->exp_retry_cnt = (uint8_t)parse_number("--exp-retry", arg, 0,
							 EXP_RETRY_MAX);
		break;
	case OPT_MPR:
		o->mpr_units = (uint8_t)parse_number("--mpr", arg, MPR_MIN, MPR_MAX);
		break;
	case OPT_TIMEOUT_S:
		o->timeout_s = (uint32_t)parse_number("--timeout-s", arg, 1,
						      MAX_TIMEOUT_S);
		break;
	case OPT_LINGER_S:
		o->linger_s = (uint32_t)parse_number("--linger-s", arg, 0, 60);
		break;
	case OPT_SETTLE_S:
		o->settle_s = (uint32_t)parse_number("--settle-s", arg, 0, 60);
		break;
	case OPT_CC_TIMELINE:
		if (!*arg)
			usage_error("--cc-timeline: empty path");
		o->cc_timeline = arg;
		break;
	case OPT_QPS:
		o->n_qps = (uint32_t)parse_number("--qps", arg, 1, MAX_QPS);
		break;
	case OPT_IDLE:
		o->idle_s = (uint32_t)parse_number("--idle", arg, 1, MAX_TIMEOUT_S);
		break;
	}
}

static void set_defaults(struct opts *o)
{
	memset(o, 0, sizeof(*o));
	o->port = DEFAULT_PORT;
	o->size_min = o->size_max = DEFAULT_SIZE;
	o->iters = DEFAULT_ITERS;
	o->depth = DEFAULT_DEPTH;
	o->ack_timeout = DEFAULT_ACK_TIMEOUT;
	o->retry_cnt = DEFAULT_RETRY;
	o->exp_retry_cnt = DEFAULT_EXP_RETRY;
	o->mpr_units = DEFAULT_MPR;
	o->timeout_s = DEFAULT_TIMEOUT_S;
	o->cc_profile = -1;
	o->ev_profile = -1;
}

/* HOST,HOST,... and --qps: the many-QP client's constraints. */
static void check_many_qps(const struct opts *o)
{
	unsigned int hosts = 1;
	const char *s;

	for (s = o->host; *s; s++)
		hosts += *s == ',';
	if (o->host[0] == ',' || s[-1] == ',' || strstr(o->host, ",,"))
		usage_error("client: empty name in the HOST list '%s'", o->host);
	if (hosts > MAX_HOSTS)
		usage_error("client: %u hosts, at most %d", hosts, MAX_HOSTS);
	if (hosts == 1 && !o->n_qps)
		return;
	if (o->n_qps && o->n_qps < hosts)
		usage_error("--qps %u: fewer QPs than the %u hosts (one each at least)",
			    o->n_qps, hosts);
	if (!o->n_qps)
		usage_error("client: several hosts need --qps N (at least %u)", hosts);
	if (o->idle_s || o->cc_timeline)
		usage_error("--qps and HOST lists exclude --idle and --cc-timeline "
			    "(one QP's views)");
}

void parse_args(int argc, char **argv, struct opts *o)
{
	const char *role_opt = NULL, *size_opt = NULL;
	int c, idx;

	set_defaults(o);
	if (argc < 2)
		usage_error("missing command: 'server' or 'client HOST'");
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		fputs(usage_text, stdout);
		exit(0);
	}
	if (!strcmp(argv[1], "server"))
		o->server = true;
	else if (strcmp(argv[1], "client"))
		usage_error("unknown command '%s': use 'server' or 'client HOST'",
			    argv[1]);

	/* getopt takes argv[0] for the program name: let it be the command. */
	argc--;
	argv++;
	opterr = 0;
	for (;;) {
		idx = -1;
		c = getopt_long(argc, argv, ":h", long_opts, &idx);
		if (c == -1)
			break;
		if (c == '?' || c == ':')
			bad_option(c, argv);
		if (c == 'h') {
			fputs(usage_text, stdout);
			exit(0);
		}
		/* Remember the first option the other role owns, to refuse it. */
		if (!role_opt && idx >= 0 &&
		    (o->server ? c > OPT_TIMELINE
			       : c >= OPT_ONCE && c <= OPT_TIMELINE))
			role_opt = long_opts[idx].name;
		if (c == OPT_SIZE || c == OPT_SWEEP) {
			if (size_opt && strcmp(size_opt, long_opts[idx].name))
				usage_error("--size and --sweep exclude each other");
			size_opt = long_opts[idx].name;
		}
		apply_option(o, c, optarg);
	}
	if (role_opt)
		usage_error("--%s is not an option of '%s'", role_opt,
			    o->server ? "server" : "client");

	if (o->server) {
		if (optind < argc)
			usage_error("server: unexpected argument '%s'", argv[optind]);
		return;
	}
	if (optind >= argc)
		usage_error("client: missing HOST");
	if (optind + 1 < argc)
		usage_error("client: unexpected argument '%s'", argv[optind + 1]);
	o->host = argv[optind];
	if (!*o->host)
		usage_error("client: empty HOST");
	check_many_qps(o);
	if (o->idle_s && (o->verify || o->imm))
		usage_error("--idle excludes --verify and --imm: nothing is written");
	if (o->idle_s && o->idle_s >= o->timeout_s)
		usage_error("--idle %u: must be less than --timeout-s (%u)", o->idle_s,
			    o->timeout_s);
	if (o->depth > MAX_SEND_WR) {
		report("--depth %u is more than a QP's max_send_wr: using %u",
		       o->depth, MAX_SEND_WR);
		o->depth = MAX_SEND_WR;
	}
}
