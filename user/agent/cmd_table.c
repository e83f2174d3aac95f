// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The mrcctl commands (cmd_table.h): their words, synopsis, help, parser
 * and where they run, in one table; finding a command's row from argv;
 * --help; the messages every command prints its errors with.
 */
#define _GNU_SOURCE
#include "agent/cmd_table.h"

#include <stdlib.h>
#include <string.h>

#include "agent/cmd_parse.h"

/* ---- messages ------------------------------------------------------------ */

void cmd_vmsg(FILE *f, const char *name, const char *fmt, va_list ap)
{
	fprintf(f, "%s: ", name);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
}

int cmd_failure(FILE *f, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vmsg(f, name, fmt, ap);
	va_end(ap);
	return AGENT_EXIT_FAIL;
}

int cmd_usage_error(FILE *f, const char *name, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	cmd_vmsg(f, name, fmt, ap);
	va_end(ap);
	fprintf(f, "try '%s --help'\n", name);
	return AGENT_EXIT_USAGE;
}

/* ---- the table ------------------------------------------------------------ */

#define EV_PROFILE_OPTS \
	"  --format udp|stev|srv6 how the EV rides in packets (default udp); srv6:\n" \
	"                         EV = uSID << 16 | UDP port, in an SRv6 envelope\n" \
	"  --srv6-block PREFIX    srv6: the uSID locator block, an IPv6 /32\n" \
	"                         (e.g. fd00:5::/32)\n" \
	"  --count N              EVs in a QP's table, 1..256 (default 256)\n" \
	"  --min-active N         fewest active EVs (default count / 2)\n" \
	"  --backups N            backup EVs per plane (default 0)\n" \
	"  --burst N              packets of one EV per UDP GSO send, 1..64\n" \
	"                         (default 1: every packet its own path)\n"

#define CC_PROFILE_SYNOPSIS \
	"[--algo nscc|none] [--base-rtt-us N] [--target-delay-us N]\n" \
	"                  [--max-cwnd BYTES] [--link-mbps N] [--gamma X] [--max-md-jump X]\n" \
	"                  [--qa-gate N] [--qa-threshold-us N] [--fi BYTES] [--fi-scale X]\n" \
	"                  [--eta BYTES] [--alpha BYTES] [--adjust-bytes BYTES]\n" \
	"                  [--adjust-period-us N] [--enable-qa|--disable-qa]\n" \
	"                  [--enable-pacing|--disable-pacing] [--json]"

#define CC_PROFILE_OPTS \
	"  --algo nscc|none       congestion control (none: the window never limits,\n" \
	"                         only the responder's does)\n" \
	"  --enable               the same as --algo nscc\n" \
	"  --disable              the same as --algo none\n" \
	"  --base-rtt-us N        base RTT; 0 = the smallest RTT measured\n" \
	"  --target-delay-us N    queueing delay aimed at; 0 = 0.75 x base RTT\n" \
	"  --max-cwnd BYTES       largest and first window; 0 = 1.5 x BDP\n" \
	"  --link-mbps N          one plane's speed in Mb/s; 0 = the slowest\n" \
	"                         plane device's\n" \
	"  --gamma X              decrease gain, (0, 1]\n" \
	"  --max-md-jump X        smallest decrease factor, (0, 1]\n" \
	"  --qa-gate N            quick adapt below max_cwnd >> N, 1..31; 0 = 3\n" \
	"  --qa-threshold-us N    a delay above it also checks quick adapt;\n" \
	"                         0 = 4 x target delay\n" \
	"  --fi BYTES             fair increase per RTT; 0 = 5 MTU x a\n" \
	"  --fi-scale X           fast increase factor, 0..1000 with up to 3\n" \
	"                         decimals (0.25, 2.5); 0 = 0.25 x a\n" \
	"  --eta BYTES            added per increase, once per base RTT;\n" \
	"                         0 = 0.15 MTU x a\n" \
	"  --alpha BYTES          proportional increase per RTT at zero delay;\n" \
	"                         0 = 4 a b MTU\n" \
	"  --adjust-bytes BYTES   increases are paid out every BYTES acked;\n" \
	"                         0 = 8 MTU\n" \
	"  --adjust-period-us N   ... or every N us; 0 = base RTT\n" \
	"  --disable-qa           no quick adapt\n" \
	"  --enable-qa            quick adapt (the default)\n" \
	"  --disable-pacing       libmrc sends what the window frees at once\n" \
	"  --enable-pacing        libmrc spreads a window's packets over the RTT\n" \
	"                         (the default)\n" \
	"BDP = planes x link speed x base RTT, a = BDP / 150 KB, b = target / 12 us.\n" \
	"BYTES take k/m/g suffixes (64k = 65536); times are typed in us, kept in ns.\n"

/*
 * Every command. `where` says who executes it: mrcd (cmd_exec.h) or
 * mrcctl itself (mrcctl/local.c); both parse with `parse`.
 */
static const struct cmd_spec commands[] = {
	{ "status", CMD_STATUS, CMD_IN_MRCD, cmd_parse_status,
	  "[--all] [--json]",
	  "Planes (addresses, XDP mode, XDP and TC program ids), QPs by state, the\n"
	  "limits and their use (QPs of mrcd --max-qps, contexts of --max-contexts),\n"
	  "the memory of the maps, the QPs in ERROR or with ASSUMED_BAD EVs (counts\n"
	  "and the worst few by QP number) and the XDP drop counters. --all adds\n"
	  "every QP (as mrcctl qp list shows them) to the text." },
	{ "stats", CMD_STATS, CMD_IN_MRCD, cmd_parse_no_args,
	  "[--json]",
	  "XDP drop counters, and the counters of every QP summed over CPUs." },
	{ "qp list", CMD_QP_LIST, CMD_IN_MRCD, cmd_parse_no_args,
	  "[--json]",
	  "QPs not in RESET: state, owner pid, remote QP and addresses, EV counts\n"
	  "(active GOOD/SKIP, all ASSUMED_BAD/DENIED, usable backups), send and\n"
	  "receive PSNs, the main counters and the congestion window (CWND: bytes,\n"
	  "'-' without a window, 'off' with algorithm none)." },
	{ "qp show", CMD_QP_SHOW, CMD_IN_MRCD, cmd_parse_qp_show,
	  "N [--json]",
	  "One QP (N is its QP number), with all its counters and its congestion\n"
	  "window: algorithm, cwnd, bytes in flight, base and smallest RTT, RTT p50\n"
	  "and p99 (upper bucket edges), average delay and target, how often it was\n"
	  "cut (md), grew fast, quick-adapted (qa), saw trims and losses, bytes\n"
	  "acked, and the parameters it runs with; 'none (no window)' without one." },
	{ "ev list", CMD_EV_LIST, CMD_IN_MRCD, cmd_parse_ev_list,
	  "--qp N [--json]",
	  "The EV table of QP N: index, EV, plane, state, active or backup, and\n"
	  "per-EV packets, bytes, acks, ECN marks, trims, losses and mean RTT." },
	{ "ev deny", CMD_EV_DENY, CMD_IN_MRCD, cmd_parse_ev_select,
	  "--qp N (--ev HEX[,HEX..] | --plane P | --index I[,I..]) [--json]",
	  "Take EVs out of service: their state becomes DENIED, which only\n"
	  "'mrcctl ev allow' undoes. --ev picks every entry with that EV." },
	{ "ev allow", CMD_EV_ALLOW, CMD_IN_MRCD, cmd_parse_ev_select,
	  "--qp N (--ev HEX[,HEX..] | --plane P | --index I[,I..]) [--json]",
	  "Put DENIED EVs back in service (state GOOD); other states are left alone." },
	{ "ev expand", CMD_EV_EXPAND, CMD_IN_MRCCTL, cmd_parse_ev_expand,
	  "--fmt-fields W[,W..] --field SPEC [--field SPEC]... --ev HEX [HEX...] [--json]",
	  "Expand compact EVs into wire EVs with a GENERATED layout, computed here\n"
	  "(no mrcd needed). SPEC is width=W,init=X,min=X,max=X,mask=X (width\n"
	  "required; init, min default to 0, max and mask to all ones). min and\n"
	  "max bound the field's counter bits (what the mask receives), as in the\n"
	  "OCP reference: init=0x100,mask=0xff,max=255 gives 0x100..0x1ff. Prints\n"
	  "'COMPACT -> WIRE' per EV, or why it is invalid (then exit 1).\n"
	  "Example: mrcctl ev expand --fmt-fields 16,16 \\\n"
	  "    --field width=16,init=0x8207,mask=0x0f0a \\\n"
	  "    --field width=12,init=0x0f0,mask=0x813 --ev 0x2d6" },
	{ "events", CMD_EVENTS, CMD_IN_MRCD, cmd_parse_events,
	  "[--all] [--no-follow] [--count N] [--json]",
	  "EV state changes (GOOD <-> ASSUMED_BAD) as mrcd records them, one line\n"
	  "each: time in ms since mrcd started, QP, profile, entry, EV, plane,\n"
	  "old and new state, reason (loss timeout always_skip port_down\n"
	  "peer_port_down probes_ok unknown), the lost PSN (loss) and how many\n"
	  "events were lost so far. Follows until interrupted.\n"
	  "  --all        first the events mrcd kept (the last 4096)\n"
	  "  --no-follow  the kept events only, then exit (implies --all)\n"
	  "  --count N    exit after N events\n"
	  "  --json       one JSON object per line (seq, time_ns, qpn, profile,\n"
	  "               idx, ev, plane, state, prev_state, reason, psn, dropped)" },
	{ "probe", CMD_PROBE, CMD_IN_MRCD, cmd_parse_probe,
	  "--to HOST --ev VALUE --plane P [--count N] [--interval-ms MS] [--json]",
	  "Send EV probes from plane P to HOST (the peer's address on that plane,\n"
	  "IPv4 or IPv6, or a name) with EV VALUE (1..65535, decimal or 0x-hex: a\n"
	  "UDP source port; up to 0xffffffff towards IPv6: an STEV EV, its high\n"
	  "16 bits in the flow label), one after the other: the next after the answer or a\n"
	  "1 s timeout, --interval-ms apart (default 10). No QP is needed; the\n"
	  "peer's XDP answers. Prints the round-trip time of each probe (and the\n"
	  "responder's service time), then a summary. --count 1..1000 (default 3).\n"
	  "Exit status 1 when no probe was answered." },
	{ "doctor", CMD_DOCTOR, CMD_IN_MRCCTL, cmd_parse_no_args,
	  "[--json]",
	  "Check this host for what MRC-XDP needs, computed here (no mrcd needed):\n"
	  "kernel BTF, bpffs, libbpf and libxdp, privileges, whether mrcd answers,\n"
	  "the pinned maps (present, with BTF), every plane (link up, XDP program\n"
	  "and TC egress filter attached) and tracefs. One line per check,\n"
	  "'ok|WARN|FAIL  NAME: DETAIL', and a 'fix:' line under each WARN and\n"
	  "FAIL. Exit status 1 when a check failed." },
	{ "profile ev create", CMD_PROFILE_EV_CREATE, CMD_IN_MRCD, cmd_parse_profile_ev_create,
	  "ID --type explicit|generated|auto [--format udp|stev|srv6]\n"
	  "                  [--srv6-block PREFIX] [--count N] [--min-active N]\n"
	  "                  [--backups N] [--burst N] [--json]",
	  "Create EV profile ID (0..63) in state INIT.\n" EV_PROFILE_OPTS },
	{ "profile ev set", CMD_PROFILE_EV_SET, CMD_IN_MRCD, cmd_parse_profile_ev_set,
	  "ID [--format udp|stev|srv6] [--srv6-block PREFIX] [--fmt-fields W,W..]\n"
	  "                  [--field SPEC]... [--ev EV[@PLANE][,...]] [--event-mask X]\n"
	  "                  [--count N] [--min-active N] [--backups N] [--burst N] [--json]",
	  "Change a profile that is not ONLINE (--event-mask may change any time).\n"
	  "--field replaces all fields (GENERATED), --ev the EV list (EXPLICIT;\n"
	  "EVs in hex, PLANE 0 or absent = spread over the planes).\n" EV_PROFILE_OPTS },
	{ "profile ev online", CMD_PROFILE_EV_ONLINE, CMD_IN_MRCD, cmd_parse_profile_id_only,
	  "ID [--json]",
	  "Validate the profile and make it usable by QPs (from OFFLINE)." },
	{ "profile ev offline", CMD_PROFILE_EV_OFFLINE, CMD_IN_MRCD, cmd_parse_profile_id_only,
	  "ID [--json]",
	  "INIT -> OFFLINE (ready to go online), or ONLINE -> OFFLINE to edit it." },
	{ "profile ev show", CMD_PROFILE_EV_SHOW, CMD_IN_MRCD, cmd_parse_profile_show,
	  "[ID] [--json]",
	  "One EV profile, or all of them." },
	{ "profile ev delete", CMD_PROFILE_EV_DELETE, CMD_IN_MRCD, cmd_parse_profile_id_only,
	  "ID [--json]",
	  "Delete an EV profile that is not ONLINE." },
	{ "profile cc create", CMD_PROFILE_CC_CREATE, CMD_IN_MRCD, cmd_parse_profile_cc_create,
	  "ID " CC_PROFILE_SYNOPSIS,
	  "Create CC profile ID (0..63) in state INIT. Defaults: algo nscc, gamma 0.8,\n"
	  "max-md-jump 0.5, qa-gate 3, quick adapt on; every other parameter 0 =\n"
	  "derived when a QP connects, from the base RTT, the planes' speed and the\n"
	  "MTU (what they come to: 'profile cc show ID --derive --mtu BYTES').\n" CC_PROFILE_OPTS },
	{ "profile cc set", CMD_PROFILE_CC_SET, CMD_IN_MRCD, cmd_parse_profile_cc_set,
	  "ID " CC_PROFILE_SYNOPSIS,
	  "Change a CC profile that is not ONLINE.\n" CC_PROFILE_OPTS },
	{ "profile cc online", CMD_PROFILE_CC_ONLINE, CMD_IN_MRCD, cmd_parse_profile_id_only,
	  "ID [--json]",
	  "Check the parameters and make the profile usable (from OFFLINE)." },
	{ "profile cc offline", CMD_PROFILE_CC_OFFLINE, CMD_IN_MRCD, cmd_parse_profile_id_only,
	  "ID [--json]",
	  "INIT -> OFFLINE, or ONLINE -> OFFLINE to edit it." },
	{ "profile cc show", CMD_PROFILE_CC_SHOW, CMD_IN_MRCD, cmd_parse_profile_cc_show,
	  "[ID] [--derive --mtu BYTES [--planes N] [--link-mbps N]] [--json]",
	  "One CC profile, or all of them; every parameter, '(derived: ...)' for 0.\n"
	  "  --derive         also the parameters a window would run with: what\n"
	  "                   the defaults make of the profile (nscc_defaults())\n"
	  "  --mtu BYTES      the QPs' path MTU, 256..9000 (required with --derive)\n"
	  "  --planes N       planes, 1..8 (default: this host's; a QP counts the\n"
	  "                   plane addresses of its peer)\n"
	  "  --link-mbps N    one plane's speed (default: the profile's link-mbps,\n"
	  "                   else the slowest plane device's speed)" },
	{ "profile cc delete", CMD_PROFILE_CC_DELETE, CMD_IN_MRCD, cmd_parse_profile_id_only,
	  "ID [--json]",
	  "Delete a CC profile that is not ONLINE." },
};

#define N_COMMANDS	(sizeof(commands) / sizeof(commands[0]))

const struct cmd_spec *cmd_spec_of(enum cmd_id id)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (commands[i].id == id)
			return &commands[i];
	return NULL;
}

/* ---- finding the command ------------------------------------------------ */

/*
 * How many of argv's leading words spell the start of `path`; *whole
 * says they spell all of it.
 */
static int match_words(const char *path, int argc, char **argv, bool *whole)
{
	const char *p = path;
	int n = 0;

	*whole = false;
	while (n < argc) {
		size_t len = strcspn(p, " ");

		if (strlen(argv[n]) != len || strncmp(argv[n], p, len))
			break;
		n++;
		p += len;
		if (!*p) {
			*whole = true;
			break;
		}
		p++;
	}
	return n;
}

static void command_usage(FILE *f, const struct cmd_spec *cmd, bool full)
{
	fprintf(f, "usage: mrcctl %s %s\n", cmd->path, cmd->synopsis);
	if (full && cmd->help)
		fprintf(f, "%s%s", cmd->help,
			cmd->help[strlen(cmd->help) - 1] == '\n' ? "" : "\n");
}

void cmd_usage_overview(FILE *f)
{
	fprintf(f,
"usage: mrcctl [--pin-dir DIR] COMMAND [ARGS] [--json]\n"
"\n"
"Inspect and steer the MRC fast path of this host through its agent, mrcd.\n"
"\n"
"  status [--all]               planes, QPs by state, limits, map memory,\n"
"                               XDP drop counters (--all: every QP too)\n"
"  stats                        drop counters and per-QP counter sums\n"
"  qp list                      QPs that are not in RESET\n"
"  qp show N                    one QP with all its counters and its window\n"
"  ev list --qp N               a QP's EV table with per-EV counters\n"
"  ev deny --qp N SELECTOR      take EVs out of service (state DENIED)\n"
"  ev allow --qp N SELECTOR     put DENIED EVs back (state GOOD)\n"
"                               SELECTOR: --ev HEX[,HEX..] | --plane P | --index I[,I..]\n"
"  ev expand --fmt-fields W,.. --field SPEC... --ev HEX [HEX...]\n"
"                               compact -> wire EVs (computed here, no mrcd)\n"
"  events [--all] [--no-follow] [--count N]\n"
"                               EV state changes as they happen\n"
"  probe --to HOST --ev VALUE --plane P [--count N] [--interval-ms MS]\n"
"                               round-trip times of one path\n"
"  doctor                       check the host, say what to fix (no mrcd)\n"
"  profile ev create|set|online|offline|show|delete ...   EV profiles\n"
"  profile cc create|set|online|offline|show|delete ...   CC (NSCC) profiles\n"
"\n"
"  --pin-dir DIR   the agent's pin folder (default %s)\n"
"  --json          print one JSON document\n"
"  -h, --help      this text; after a command, that command's usage\n"
"\n"
"Exit status: 0 success, 1 failure, 2 usage error.\n",
		"/sys/fs/bpf/mrc");
}

/* Usage of every command under the words argv[0..n-1] ("qp", "profile ev"). */
static void group_usage(FILE *f, int n, char **argv)
{
	bool whole;
	size_t i;

	for (i = 0; i < N_COMMANDS; i++)
		if (match_words(commands[i].path, n, argv, &whole) == n)
			command_usage(f, &commands[i], false);
}

bool cmd_wants_help(int argc, char **argv)
{
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return true;
	}
	return false;
}

/* No command matched all its words: say which group and what it has. */
static int group_error(FILE *out, FILE *err, int argc, char **argv, int n,
		       bool help)
{
	int i;

	if (n == 0 && !help) {
		fprintf(err, "mrcctl: unknown command '%s'\ntry 'mrcctl --help'\n",
			argc ? argv[0] : "");
		return AGENT_EXIT_USAGE;
	}
	if (n == 0) {
		cmd_usage_overview(out);
		return 0;
	}
	if (help) {
		group_usage(out, n, argv);
		return 0;
	}
	fprintf(err, "mrcctl");
	for (i = 0; i < n; i++)
		fprintf(err, " %s", argv[i]);
	if (n < argc && argv[n][0] != '-')
		fprintf(err, ": unknown subcommand '%s'\n", argv[n]);
	else
		fprintf(err, ": which one?\n");
	group_usage(err, n, argv);
	return AGENT_EXIT_USAGE;
}

bool cmd_parse(int argc, char **argv, FILE *out, FILE *err,
	       struct cmd_req *req, int *status)
{
	const struct cmd_spec *cmd = NULL;
	struct cmd_parse_io io = { .err = err };
	int best = 0, n;
	bool whole, help = cmd_wants_help(argc, argv);
	size_t i;

	memset(req, 0, sizeof(*req));
	for (i = 0; i < N_COMMANDS; i++) {
		n = match_words(commands[i].path, argc, argv, &whole);
		if (whole) {
			cmd = &commands[i];
			best = n;
			break;
		}
		if (n > best)
			best = n;
	}
	if (!cmd) {
		*status = group_error(out, err, argc, argv, best, help);
		return false;
	}
	if (help) {
		command_usage(out, cmd, true);
		*status = 0;
		return false;
	}
	req->id = cmd->id;
	snprintf(req->name, sizeof(req->name), "mrcctl %s", cmd->path);
	io.name = req->name;
	/* getopt wants the program name first: the command's words stand in. */
	cmd_opt_start();
	*status = cmd->parse(&io, argc - best + 1, argv + best - 1, req);
	return *status == 0;
}
