// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-udp-blast's command line and signals. blast.h has the overview.
 */
#include "blast.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

volatile sig_atomic_t stop_flag;

void usage(FILE *f)
{
	fputs(
"Usage:\n"
"  " PROG " recv --on ADDR[,ADDR...] [--port P] [--timeout-s S] [--idle-ms MS]\n"
"      [--json]\n"
"  " PROG " send --to ADDR[,ADDR...] [--from ADDR[,ADDR...]] [--port P]\n"
"      [--bytes N] [--seg BYTES] [--gso-segs N] [--window N] [--timeout-s S]\n"
"      [--json]\n"
"\n"
"Plain UDP at the best the kernel does: the sender hands the kernel up to\n"
"64 segments per sendmsg (UDP_SEGMENT, GSO), the receiver takes them back\n"
"coalesced (UDP_GRO) and checks every byte of every segment against its\n"
"pattern. One socket per address; the sender goes round-robin over its\n"
"sockets (one per plane). A window of segments past the receiver's credit\n"
"(sent every 32 segments) keeps the receiver's buffer from overflowing.\n"
"\n"
"  --on LIST       receiver: addresses to listen on (one socket each)\n"
"  --to LIST       sender: receiver addresses, one socket each\n"
"  --from LIST     sender: source addresses, as many as --to\n"
"  --port P        UDP port (default 18600)\n"
"  --bytes N       data bytes to send, k/m/g suffixes (default 1g)\n"
"  --seg BYTES     UDP payload per segment, 256..9216 (default: the path\n"
"                  MTU less the IP and UDP headers)\n"
"  --gso-segs N    segments per sendmsg, 1..64 (1: no GSO; default: as\n"
"                  many as fit in 64 KiB)\n"
"  --window N      segments in flight past the last credit (default 512)\n"
"  --timeout-s S   give up after S seconds (default 60)\n"
"  --idle-ms MS    receiver: end when nothing came for MS ms after the\n"
"                  first segment (default 2000)\n"
"  --json          one JSON object on stdout at the end\n"
"The receiver says 'listening' on stderr once its sockets are bound and\n"
"ends when every segment arrived (or on --idle-ms, --timeout-s). Exit\n"
"status: 0 every segment arrived intact, 1 run-time failure, loss or a\n"
"wrong byte, 2 usage error.\n", f);
}

void report(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\ntry '" PROG " --help'\n", stderr);
	exit(2);
}

static uint64_t parse_num(const char *opt, const char *s, uint64_t min, uint64_t max,
			  bool suffix)
{
	char *end;
	uint64_t v, mul = 1;

	errno = 0;
	if (!*s || *s == '-')
		usage_error("%s: bad value '%s'", opt, s);
	v = strtoull(s, &end, 10);
	if (suffix && *end && !end[1]) {
		switch (*end | 0x20) {
		case 'k': mul = 1ull << 10; end++; break;
		case 'm': mul = 1ull << 20; end++; break;
		case 'g': mul = 1ull << 30; end++; break;
		}
	}
	if (errno || *end || end == s || v > max / mul || v * mul < min)
		usage_error("%s: '%s' is not a number in %" PRIu64 "..%" PRIu64, opt, s, min, max);
	return v * mul;
}

enum { OPT_ON = 256, OPT_TO, OPT_FROM, OPT_PORT, OPT_BYTES, OPT_SEG, OPT_GSO,
       OPT_WINDOW, OPT_TIMEOUT, OPT_IDLE, OPT_JSON };

static const struct option long_opts[] = {
	{ "on", required_argument, NULL, OPT_ON },
	{ "to", required_argument, NULL, OPT_TO },
	{ "from", required_argument, NULL, OPT_FROM },
	{ "port", required_argument, NULL, OPT_PORT },
	{ "bytes", required_argument, NULL, OPT_BYTES },
	{ "seg", required_argument, NULL, OPT_SEG },
	{ "gso-segs", required_argument, NULL, OPT_GSO },
	{ "window", required_argument, NULL, OPT_WINDOW },
	{ "timeout-s", required_argument, NULL, OPT_TIMEOUT },
	{ "idle-ms", required_argument, NULL, OPT_IDLE },
	{ "json", no_argument, NULL, OPT_JSON },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The address lists need the port: kept as text until the end. */
struct lists { const char *on, *to, *from; };

static void apply(struct opts *o, struct lists *l, int c, const char *arg)
{
	switch (c) {
	case OPT_ON: l->on = arg; break;
	case OPT_TO: l->to = arg; break;
	case OPT_FROM: l->from = arg; break;
	case OPT_PORT: o->port = (uint16_t)parse_num("--port", arg, 1, 65535, false); break;
	case OPT_BYTES: o->bytes = parse_num("--bytes", arg, 1, 1ull << 40, true); break;
	case OPT_SEG: o->seg = (uint32_t)parse_num("--seg", arg, MIN_SEG, MAX_SEG, true); break;
	case OPT_GSO: o->gso_segs = (uint32_t)parse_num("--gso-segs", arg, 1, 64, false); break;
	case OPT_WINDOW: o->window = (uint32_t)parse_num("--window", arg, 1, 1u << 20, false); break;
	case OPT_TIMEOUT: o->timeout_s = (uint32_t)parse_num("--timeout-s", arg, 1, 86400, false); break;
	case OPT_IDLE: o->idle_ms = (uint32_t)parse_num("--idle-ms", arg, 1, 600000, false); break;
	case OPT_JSON: o->json = true; break;
	}
}

static int addr_list(const char *opt, const char *s, uint16_t port,
		     struct sockaddr_storage *out)
{
	int n = parse_addr_list(s, port, out, MAX_SOCKS);

	if (n == -E2BIG)
		usage_error("%s: more than %d addresses", opt, MAX_SOCKS);
	if (n <= 0)
		usage_error("%s: '%s' is not a list of IP addresses", opt, s);
	return n;
}

void parse_args(int argc, char **argv, struct opts *o)
{
	struct lists l = { 0 };
	int c, i;

	o->port = DEFAULT_PORT;
	o->bytes = 1ull << 30;
	o->window = DEFAULT_WINDOW;
	o->timeout_s = DEFAULT_TIMEOUT_S;
	o->idle_ms = DEFAULT_IDLE_MS;
	argc--;
	argv++;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", long_opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(0);
		}
		if (c == '?' || c == ':')
			usage_error("%s option '%s'", c == ':' ? "a value is missing for" : "unknown",
				    argv[optind - 1]);
		apply(o, &l, c, optarg);
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->send) {
		if (!l.to || l.on)
			usage_error("send: --to LIST, and no --on");
		o->n_to = addr_list("--to", l.to, o->port, o->to);
		if (l.from) {
			o->n_from = addr_list("--from", l.from, 0, o->from);
			if (o->n_from != o->n_to)
				usage_error("--from: %d addresses, --to has %d", o->n_from, o->n_to);
			for (i = 0; i < o->n_to; i++)
				if (o->from[i].ss_family != o->to[i].ss_family)
					usage_error("--from and --to: address %d is of another family", i + 1);
		}
		return;
	}
	if (!l.on || l.to || l.from)
		usage_error("recv: --on LIST, and no --to or --from");
	o->n_on = addr_list("--on", l.on, o->port, o->on);
}

static void on_signal(int sig)
{
	(void)sig;
	stop_flag = 1;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct sigaction sa = { .sa_handler = on_signal };

	memset(&o, 0, sizeof(o));
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "send"))
		o.send = true;
	else if (strcmp(argv[1], "recv"))
		usage_error("unknown command '%s' (send, recv)", argv[1]);
	parse_args(argc, argv, &o);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	return o.send ? run_send(&o) : run_recv(&o);
}
