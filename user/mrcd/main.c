// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcd: the MRC host agent. It owns the fast path of one host:
 *
 *   - loads bpf/mrc.bpf.c and pins its maps in the pin folder (default
 *     /sys/fs/bpf/mrc), where libmrc finds them (load.c);
 *   - writes the global configuration (UDP port), the plane table (with
 *     each plane's addresses) and the ifindex -> plane map (config.c);
 *   - attaches mrc_xdp_rx to every plane interface (through libxdp's
 *     dispatcher when it can, so other XDP programs keep working) and
 *     mrc_tc_tx to their clsact egress hook (attach.c);
 *   - serves mrcctl on a Unix socket (agent/agent_ipc.h, ctl.c), from one
 *     poll loop with the signals (here), and never blocks on a client;
 *   - keeps the paths healthy (agent/probe_engine.h, probing.c): records EV
 *     events, probes ASSUMED_BAD EVs back to GOOD, demotes the EVs of a
 *     plane whose link goes down and tells the peers (port status), and
 *     sends the probes of `mrcctl probe`, all from the same loop;
 *   - SIGTERM/SIGINT: undoes all of it and exits. SIGHUP: re-executes
 *     itself (same pid) and adopts what it left running (daemon.c).
 *
 * Adoption: pins, XDP and TC attachments all outlive the process, and
 * they carry live QPs (their state is in the maps). A starting mrcd that
 * finds our pins - after SIGHUP, a crash or kill -9 - reuses the pinned
 * maps as they are and swaps its programs in for the old ones without a
 * moment where no program runs: QPs keep going. `mrcd --detach` removes
 * everything, whether an agent still runs or not.
 *
 * usage: mrcd --planes IF[,IF...] [--config FILE] [--daemon] [--pin-dir DIR]
 *             [--port N]
 *             [--pidfile FILE] [--log FILE] [--xdp-mode native|skb|auto]
 *             [--probe-successes N] [--probe-interval-ms MS]
 *             [--peers ADDR[,ADDR...]] [--max-qps N] [--max-contexts N]
 *             [-v] [--version]
 *        mrcd --detach [--pin-dir DIR]
 *        mrcd --write-object FILE [--max-qps N] [--max-contexts N]
 *
 * This file: the options, --help, start-up and teardown, and the loop.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <xdp/libxdp.h>

#include "common/parse.h"
#include "agent/conf_file.h"
#include "agent/probe_net.h"
#include "mrcd/mrcd.h"
#include "mrc.skel.h"

static void usage(FILE *f)
{
	fprintf(f,
"usage: mrcd --planes IF[,IF...] [options]\n"
"       mrcd --config FILE [options]\n"
"       mrcd --detach [--pin-dir DIR]\n"
"       mrcd --write-object FILE [--max-qps N] [--max-contexts N]\n"
"  --planes IF,...      plane interfaces, plane 1 first (at most %d)\n"
"  --config FILE        read options from FILE, 'key = value' lines named as\n"
"                       the long options (the service's /etc/mrc/mrcd.conf);\n"
"                       options after it on the command line override it\n"
"  --daemon             run in the background; returns once attached\n"
"  --pin-dir DIR        where the maps are pinned (default %s)\n"
"  --port PORT          MRC UDP port (default %d)\n"
"  --pidfile FILE       write the agent's pid there\n"
"  --log FILE           with --daemon: keep messages in FILE\n"
"  --xdp-mode MODE      native, skb or auto (default auto)\n"
"  --probe-successes N  answered probes in a row that bring an ASSUMED_BAD\n"
"                       EV back to GOOD (1..%d, default %d)\n"
"  --probe-interval-ms MS\n"
"                       first probe of an ASSUMED_BAD EV, and the next after\n"
"                       an unanswered one, this long after (1..%d, default %d;\n"
"                       doubled for an EV that keeps failing, up to 32 x)\n"
"  --peers ADDR,...     numeric IPv4/IPv6 addresses whose EV probes XDP\n"
"                       answers and whose port status it passes on without a\n"
"                       QP to them (for `mrcctl probe` from there; at most\n"
"                       %d, repeatable). Peers of live QPs are served anyway;\n"
"                       nobody else is\n"
"  --max-qps N          QPs this host serves at once: the maps are sized for\n"
"                       them at start (1..%d, default %d)\n"
"  --max-contexts N     processes using libmrc at once (1..%d, default %d)\n"
"  --app-group GROUP    only members of GROUP may open contexts through mrcd\n"
"                       (applications without privileges; default: every\n"
"                       local user)\n"
"  --detach             stop the agent of DIR, or remove what a dead one left\n"
"  --no-repair          report a program taken off a plane, do not re-attach\n"
"  --write-object FILE  write the BPF object with its maps declared at the\n"
"                       sizes --max-qps/--max-contexts give them, for\n"
"                       xdp-loader, ip and tc; then exit\n"
"  -v, --verbose        say how each plane was attached\n"
"  --version            print mrcd's version and exit\n"
"  -h, --help           this text\n"
"Signals: TERM/INT stop and remove everything; HUP restarts in place\n"
"(same pid), keeping the maps and live QPs.\n"
"Exit status: 0 after a clean stop, 1 run-time error, 2 usage error.\n",
		MRC_MAX_PLANES_ABI, AGENT_PIN_DIR_DEFAULT, MRC_UDP_PORT_DEFAULT,
		PROBE_SUCCESSES_MAX, MRC_PROBE_SUCCESSES_DEFAULT, PROBE_INTERVAL_MAX_MS,
		PE_INTERVAL_MS_DEFAULT, PE_MAX_CONFIGURED_PEERS, MRC_QPS_LIMIT,
		MRCD_MAX_QPS_DEFAULT, MRC_CTX_LIMIT, MRCD_MAX_CTX_DEFAULT);
}

/* ---- options ---------------------------------------------------------- */

static int add_plane(struct agent *a, const char *name)
{
	struct plane *p;
	int ifindex, i;

	if (!*name) {
		pr_err("--planes: empty interface name\n");
		return -EINVAL;
	}
	if (strlen(name) >= IFNAMSIZ) {
		pr_err("--planes: '%s' is too long for an interface name\n", name);
		return -EINVAL;
	}
	if (a->n_planes >= MRC_MAX_PLANES_ABI) {
		pr_err("--planes: at most %d planes\n", MRC_MAX_PLANES_ABI);
		return -E2BIG;
	}
	ifindex = (int)if_nametoindex(name);
	if (!ifindex) {
		pr_err("--planes: no interface '%s'\n", name);
		return -ENODEV;
	}
	/* By index, so two names of one device (altnames) count as one. */
	for (i = 0; i < a->n_planes; i++) {
		if (a->planes[i].ifindex == ifindex) {
			pr_err("--planes: '%s' is listed twice (same device as '%s')\n",
			       name, a->planes[i].name);
			return -EEXIST;
		}
	}
	p = &a->planes[a->n_planes++];
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->ifindex = ifindex;
	return 0;
}

static int parse_planes(struct agent *a, const char *list)
{
	char *copy = strdup(list), *name, *rest;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	rest = copy;
	/* strsep, not strtok: "p1,,p2" must be an error, not two planes. */
	while (!err && (name = strsep(&rest, ",")))
		err = add_plane(a, name);
	free(copy);
	return err;
}

/* --peers A,B,...: numeric addresses, added to those given before. */
static int parse_peers(struct agent *a, const char *list)
{
	char *copy = strdup(list), *item, *rest;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	rest = copy;
	while (!err && (item = strsep(&rest, ","))) {
		if (a->opt.n_peers >= PE_MAX_CONFIGURED_PEERS) {
			pr_err("--peers: at most %d addresses\n", PE_MAX_CONFIGURED_PEERS);
			err = -E2BIG;
		} else if (addr_parse(item, a->opt.peers[a->opt.n_peers])) {
			pr_err("--peers: '%s' is not a numeric IPv4 or IPv6 address\n", item);
			err = -EINVAL;
		} else {
			a->opt.n_peers++;
		}
	}
	free(copy);
	return err;
}

static int parse_xdp_mode(const char *s, enum xdp_choice *choice)
{
	if (!strcmp(s, "auto"))
		*choice = XDP_CHOICE_AUTO;
	else if (!strcmp(s, "native"))
		*choice = XDP_CHOICE_NATIVE;
	else if (!strcmp(s, "skb"))
		*choice = XDP_CHOICE_SKB;
	else
		return -EINVAL;
	return 0;
}

/* --max-qps, --max-contexts: 1..max, said with the flag's name. */
static int parse_limit(const char *flag, const char *s, uint64_t max, __u32 *out)
{
	uint64_t v;

	if (parse_u64(s, max, &v) || !v) {
		pr_err("%s: '%s' is not a number in 1..%" PRIu64 "\n", flag, s, max);
		return -EINVAL;
	}
	*out = (__u32)v;
	return 0;
}

/* ADOPT_OPT "L,S": the lock and listening socket a re-exec hands over. */
static int parse_adopt_fds(struct agent *a, const char *s)
{
	uint64_t lock_fd, listen_fd;
	char buf[64], *comma;

	snprintf(buf, sizeof(buf), "%s", s);
	comma = strchr(buf, ',');
	if (!comma)
		return -EINVAL;
	*comma = '\0';
	if (parse_u64(buf, INT_MAX, &lock_fd) || parse_u64(comma + 1, INT_MAX, &listen_fd) ||
	    fcntl((int)lock_fd, F_GETFD) < 0 || fcntl((int)listen_fd, F_GETFD) < 0)
		return -EINVAL;
	a->opt.inherited_lock_fd = (int)lock_fd;
	a->opt.inherited_listen_fd = (int)listen_fd;
	/* Not for a next exec of something else. */
	fcntl((int)lock_fd, F_SETFD, FD_CLOEXEC);
	fcntl((int)listen_fd, F_SETFD, FD_CLOEXEC);
	return 0;
}

static const struct option longopts[] = {
	{ "planes",   required_argument, NULL, 'P' },
	{ "config",   required_argument, NULL, 'c' },
	{ "daemon",   no_argument,       NULL, 'd' },
	{ "pin-dir",  required_argument, NULL, 'D' },
	{ "port",     required_argument, NULL, 'p' },
	{ "pidfile",  required_argument, NULL, 'f' },
	{ "log",      required_argument, NULL, 'l' },
	{ "xdp-mode", required_argument, NULL, 'm' },
	{ "probe-successes", required_argument, NULL, 'S' },
	{ "probe-interval-ms", required_argument, NULL, 'I' },
	{ "peers",    required_argument, NULL, 'R' },
	{ "max-qps",  required_argument, NULL, 'Q' },
	{ "max-contexts", required_argument, NULL, 'C' },
	{ "app-group", required_argument, NULL, 'G' },
	{ "detach",   no_argument,       NULL, 'X' },
	{ "write-object", required_argument, NULL, 'W' },
	{ "no-repair", no_argument,      NULL, 'N' },
	{ "adopt-fds", required_argument, NULL, 'A' },
	{ "verbose",  no_argument,       NULL, 'v' },
	{ "version",  no_argument,       NULL, 'V' },
	{ "help",     no_argument,       NULL, 'h' },
	{}
};

/* What the options say beyond struct options, checked once all are in. */
struct arg_state {
	const char *planes;
	bool limits_given;
	bool help;
	bool version;
};

static int read_config(struct agent *a, struct arg_state *st, const char *path);

/* One option, from the command line or the configuration file. */
static int apply_option(struct agent *a, struct arg_state *st, int c, const char *arg)
{
	uint64_t v;

	switch (c) {
	case 'P':
		st->planes = arg;
		break;
	case 'c':
		return read_config(a, st, arg);
	case 'd':
		a->opt.daemon = true;
		break;
	case 'D':
		a->opt.pin_dir_arg = arg;
		break;
	case 'p':
		if (parse_u64(arg, 65535, &v) || !v) {
			pr_err("--port: '%s' is not a UDP port (1..65535)\n", arg);
			return EXIT_USAGE;
		}
		a->opt.port = (__u16)v;
		break;
	case 'f':
		a->opt.pidfile = arg;
		break;
	case 'l':
		a->opt.log_file = arg;
		break;
	case 'm':
		if (parse_xdp_mode(arg, &a->opt.xdp_choice)) {
			pr_err("--xdp-mode: '%s' is not native, skb or auto\n", arg);
			return EXIT_USAGE;
		}
		break;
	case 'S':
		if (parse_u64(arg, PROBE_SUCCESSES_MAX, &v) || !v) {
			pr_err("--probe-successes: '%s' is not a number in 1..%d\n",
			       arg, PROBE_SUCCESSES_MAX);
			return EXIT_USAGE;
		}
		a->opt.probe_successes = (__u32)v;
		break;
	case 'I':
		if (parse_u64(arg, PROBE_INTERVAL_MAX_MS, &v) || !v) {
			pr_err("--probe-interval-ms: '%s' is not a number of ms in "
			       "1..%d\n", arg, PROBE_INTERVAL_MAX_MS);
			return EXIT_USAGE;
		}
		a->opt.probe_interval_ms = (__u32)v;
		break;
	case 'Q':
		if (parse_limit("--max-qps", arg, MRC_QPS_LIMIT, &a->opt.max_qps))
			return EXIT_USAGE;
		st->limits_given = true;
		break;
	case 'C':
		if (parse_limit("--max-contexts", arg, MRC_CTX_LIMIT, &a->opt.max_ctx))
			return EXIT_USAGE;
		st->limits_given = true;
		break;
	case 'G':
		a->opt.app_group = arg;
		break;
	case 'R':
		if (parse_peers(a, arg))
			return EXIT_USAGE;
		break;
	case 'X':
		a->opt.detach = true;
		break;
	case 'W':
		a->opt.write_object = arg;
		break;
	case 'N':
		a->opt.no_repair = true;
		break;
	case 'A':
		if (parse_adopt_fds(a, arg)) {
			pr_err("%s%s: not two open descriptors (internal option "
			       "of a restart)\n", ADOPT_OPT, arg);
			return EXIT_USAGE;
		}
		break;
	case 'v':
		log_set_verbose(true);
		break;
	case 'V':
		st->version = true;
		break;
	case 'h':
		st->help = true;
		break;
	}
	return 0;
}

/* ---- the configuration file (--config, mrcd(8) "CONFIGURATION FILE") --- */

/*
 * The keys a file may set: the long options that configure a running
 * agent. Not daemon/log (the service manager runs mrcd in the
 * foreground and keeps its output), nor detach, config or help.
 */
static const char *const config_keys[] = {
	"planes", "pin-dir", "port", "pidfile", "xdp-mode", "probe-successes",
	"probe-interval-ms", "peers", "max-qps", "max-contexts", "verbose",
	"no-repair", "app-group",
};

static const struct option *config_option(const char *key)
{
	const struct option *o;
	size_t i;

	for (i = 0; i < sizeof(config_keys) / sizeof(config_keys[0]); i++) {
		if (strcmp(key, config_keys[i]))
			continue;
		for (o = longopts; o->name; o++)
			if (!strcmp(o->name, key))
				return o;
	}
	return NULL;
}

/* "planes, pin-dir, ...": the keys, for the error about an unknown one. */
static const char *known_config_keys(char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < sizeof(config_keys) / sizeof(config_keys[0]) && n < len; i++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
				      config_keys[i]);
	return buf;
}

struct config_ctx {
	struct agent *a;
	struct arg_state *st;
	const char *path;
};

/* A flag's value: yes or no, so a file can say either. */
static int config_flag(const struct conf_entry *e, bool *on)
{
	if (!strcmp(e->value, "yes") || !strcmp(e->value, "true") || !strcmp(e->value, "1"))
		*on = true;
	else if (!strcmp(e->value, "no") || !strcmp(e->value, "false") || !strcmp(e->value, "0"))
		*on = false;
	else
		return -EINVAL;
	return 0;
}

static int config_entry(const struct conf_entry *e, void *arg)
{
	const struct config_ctx *cx = arg;
	const struct option *o = config_option(e->key);
	char where[PATH_MAX + 16], list[CONF_LINE_MAX + 1];
	const char *value = e->value;
	bool on;
	int rc;

	snprintf(where, sizeof(where), "%s:%u", cx->path, e->line);
	if (!o) {
		pr_err("%s: unknown key '%s' (known: %s)\n", where, e->key,
		       known_config_keys(list, sizeof(list)));
		return EXIT_USAGE;
	}
	if (o->has_arg == no_argument) {
		if (config_flag(e, &on)) {
			pr_err("%s: %s: '%s' is not yes or no\n", where, e->key, e->value);
			return EXIT_USAGE;
		}
		if (!on)
			return 0;
	} else if (o->val == 'P' || o->val == 'R') {
		/* Lists: "p1 p2" as well as "p1,p2". */
		if (conf_list_to_commas(e->value, list, sizeof(list))) {
			pr_err("%s: %s: list too long\n", where, e->key);
			return EXIT_USAGE;
		}
		value = list;
	}
	/* Values outlive the file: the options keep pointers to them. */
	value = value ? strdup(value) : NULL;
	if (o->has_arg != no_argument && !value)
		return EXIT_RUNTIME;
	log_set_context(where);
	rc = apply_option(cx->a, cx->st, o->val, value);
	log_set_context(NULL);
	return rc;
}

static int read_config(struct agent *a, struct arg_state *st, const char *path)
{
	struct config_ctx cx = { .a = a, .st = st, .path = path };
	char err[PATH_MAX + 256];
	int rc;

	rc = conf_file_read(path, config_entry, &cx, err, sizeof(err));
	if (rc < 0) {
		pr_err("%s\n", err);
		return EXIT_USAGE;
	}
	return rc;
}

/* What no single option can check: the combinations. */
static int check_args(struct agent *a, const struct arg_state *st)
{
	if (a->opt.detach) {
		if (st->planes || a->opt.daemon || a->opt.pidfile || a->opt.log_file ||
		    st->limits_given) {
			pr_err("--detach takes only --pin-dir (and -v)\n");
			return EXIT_USAGE;
		}
		return 0;
	}
	if (a->opt.write_object) {
		if (st->planes || a->opt.daemon || a->opt.pidfile || a->opt.log_file) {
			pr_err("--write-object takes only --max-qps and --max-contexts\n");
			return EXIT_USAGE;
		}
		return 0;
	}
	if (!st->planes) {
		pr_err("--planes IF[,IF...] (or 'planes' in the --config file) is "
		       "required\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (a->opt.log_file && !a->opt.daemon) {
		pr_err("--log only applies with --daemon\n");
		return EXIT_USAGE;
	}
	return parse_planes(a, st->planes) ? EXIT_USAGE : 0;
}

/*
 * Returns 0, or the exit status for a usage error (or --help). Options
 * apply in order, a --config file where it stands: what follows it on
 * the command line overrides the file.
 */
static int parse_args(struct agent *a, int argc, char **argv, struct arg_state *st)
{
	int c, rc;

	a->opt.pin_dir_arg = AGENT_PIN_DIR_DEFAULT;
	a->opt.port = MRC_UDP_PORT_DEFAULT;
	a->opt.probe_successes = MRC_PROBE_SUCCESSES_DEFAULT;
	a->opt.probe_interval_ms = PE_INTERVAL_MS_DEFAULT;
	a->opt.max_qps = MRCD_MAX_QPS_DEFAULT;
	a->opt.max_ctx = MRCD_MAX_CTX_DEFAULT;
	a->opt.inherited_lock_fd = a->opt.inherited_listen_fd = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
		if (c == ':') {
			pr_err("%s needs a value\n", argv[optind - 1]);
			return EXIT_USAGE;
		}
		if (c == '?') {
			pr_err("unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return EXIT_USAGE;
		}
		rc = apply_option(a, st, c, optarg);
		if (rc || st->help || st->version)
			return rc;
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	return check_args(a, st);
}

/* ---- start and stop ---------------------------------------------------- */

/* Undo everything start() did, in reverse; safe after a partial start. */
static void teardown(struct agent *a)
{
	stop_probing(a, true);
	apps_close(a, true);
	close_listener(a, true);
	detach_planes(a);
	if (a->skel) {
		unpin_all(a);
		mrc__destroy(a->skel);
		a->skel = NULL;
	}
	/* A crashed agent's folder goes too; one with other things stays. */
	if (a->pin_dir_ours && rmdir(a->paths.pin_dir) && errno != ENOTEMPTY &&
	    errno != ENOENT)
		pr_err("cannot remove %s: %s\n", a->paths.pin_dir, strerror(errno));
	if (a->wrote_pidfile)
		unlink(a->opt.pidfile);
	release_lock(a);
}

/*
 * A failed adoption must not wipe what it found: those programs and maps
 * carry live QPs and keep working without us. Let go of our handles only.
 */
static void let_go(struct agent *a)
{
	int i;

	stop_probing(a, false);
	apps_close(a, true);
	close_listener(a, true);
	for (i = 0; i < a->n_planes; i++) {
		xdp_program__close(a->planes[i].xdp_prog);
		bpf_object__close(a->planes[i].xdp_obj);
	}
	mrc__destroy(a->skel);
	a->skel = NULL;
	release_lock(a);
}

static int start(struct agent *a)
{
	if (resolve_paths(a) || check_bpffs(a) || take_lock(a) ||
	    make_pin_dir(a) || load_fast_path(a) || configure_fast_path(a) ||
	    attach_planes(a) || start_probing(a) || open_listener(a) ||
	    apps_open(a) || write_pidfile(a))
		return -1;
	return 0;
}

static void announce_ready(const struct agent *a)
{
	char names[MRC_MAX_PLANES_ABI * (IFNAMSIZ + 1)] = "", maps[160];
	size_t len = 0;
	int i;

	for (i = 0; i < a->n_planes; i++)
		len += (size_t)snprintf(names + len, sizeof(names) - len, "%s%s",
					i ? "," : "", a->planes[i].name);
	describe_map_memory(a, maps, sizeof(maps));
	pr_err("ready: planes %s port %u pins %s; %s\n", names, a->opt.port,
	       a->paths.pin_dir, maps);
}

/* ---- the loop ---------------------------------------------------------- */

/* The signal signalfd has for us, or 0. */
static int read_signal(const struct agent *a)
{
	struct signalfd_siginfo si;

	if (read(a->sig_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	return (int)si.ssi_signo;
}

/*
 * The agent's one loop: signals, new mrcctl connections and the ones in
 * progress, and the probe engine's sockets and timer. Every socket is
 * non-blocking and every client has a deadline (a stream: its reader must
 * keep reading), so no client can hold the agent up. Returns the signal
 * that ends it.
 */
static int serve(struct agent *a)
{
	struct pollfd *pfd = calloc((size_t)(2 + AGENT_MAX_CLIENTS + PE_MAX_FDS +
					     apps_max_pollfds(a)), sizeof(*pfd));
	int i, n, n_pe, n_apps, timeout, sig, rc;
	long long now, left;

	if (!pfd) {
		pr_err("out of memory\n");
		return SIGTERM;
	}
	for (;;) {
		now = now_ms();
		timeout = -1;
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = a->sig_fd, .events = POLLIN };
		/* When all are being answered, newcomers wait in the backlog. */
		pfd[n++] = (struct pollfd){
			.fd = can_accept(a) ? a->listen_fd : -1, .events = POLLIN };
		for (i = 0; i < a->n_clients; i++) {
			pfd[n++] = (struct pollfd){ .fd = a->clients[i].fd,
				.events = client_events(&a->clients[i]) };
			if (is_stream(&a->clients[i]))
				continue;	/* the engine's tick wakes us often */
			left = a->clients[i].deadline_ms - now;
			left = left < 0 ? 0 : left;
			if (timeout < 0 || left < timeout)
				timeout = (int)left;
		}
		/* The planes are checked every WATCH_INTERVAL_MS (watch.c). */
		if (timeout < 0 || timeout > WATCH_INTERVAL_MS)
			timeout = WATCH_INTERVAL_MS;
		n_pe = a->pe ? pe_pollfds(a->pe, pfd + n) : 0;
		n_apps = apps_pollfds(a, pfd + n + n_pe);
		if (a->n_apps && (timeout < 0 || timeout > MRC_BROKER_TIMEOUT_MS))
			timeout = MRC_BROKER_TIMEOUT_MS;	/* HELLO deadlines */
		if (poll(pfd, (nfds_t)(n + n_pe + n_apps), timeout) < 0 && errno != EINTR) {
			pr_err("poll: %s\n", strerror(errno));
			free(pfd);
			return SIGTERM;
		}
		if (pfd[0].revents & POLLIN) {
			sig = read_signal(a);
			if (sig) {
				free(pfd);
				return sig;
			}
		}
		/* The engine first: new events and probe output reach the clients now. */
		if (n_pe)
			pe_process(a->pe, pfd + n, n_pe);
		/* Backwards: closing moves the last client into the hole. */
		for (i = a->n_clients - 1; i >= 0; i--) {
			rc = serve_client(a, &a->clients[i], pfd[2 + i].revents);
			if (rc)
				client_close(a, i);
		}
		if (pfd[1].revents & POLLIN)
			accept_clients(a);
		apps_process(a, pfd + n + n_pe, n_apps);
		watch_planes(a);
	}
}

/* ---- main ------------------------------------------------------------- */

static int open_signals(struct agent *a, const sigset_t *set)
{
	a->sig_fd = signalfd(-1, set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (a->sig_fd < 0) {
		pr_err("signalfd: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct agent a = { .lock_fd = -1, .listen_fd = -1, .sig_fd = -1,
			   .apps_listen_fd = -1,
			   .argc = argc, .argv = argv };
	struct arg_state st = {};
	bool restarted;
	int ready_fd = -1, rc, sig;
	sigset_t stop;

	rc = parse_args(&a, argc, argv, &st);
	if (st.help) {
		usage(stdout);
		return 0;
	}
	if (st.version) {
		printf("mrcd %s\n", MRC_VERSION);
		return 0;
	}
	if (rc)
		return rc;
	log_install_lib_printers();
	signal(SIGPIPE, SIG_IGN);
	if (a.opt.detach)
		return run_detach(&a);
	if (a.opt.write_object)
		return write_sized_object(&a, a.opt.write_object) ? EXIT_RUNTIME : 0;

	/* A re-exec is a daemon already, if it was one: same pid, same stdio. */
	restarted = a.opt.inherited_lock_fd >= 0;
	if (a.opt.daemon && !restarted && daemonize(&ready_fd))
		return EXIT_RUNTIME;
	/*
	 * Blocked from here on (a re-exec inherits the mask and anything
	 * pending), so a stop request that comes while we attach waits for
	 * the signalfd and still gets a clean teardown.
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, NULL);

	if (start(&a) || open_signals(&a, &stop)) {
		if (a.adopting) {
			pr_err("the fast path found in %s stays as it was\n",
			       a.paths.pin_dir);
			let_go(&a);
		} else {
			teardown(&a);
		}
		return EXIT_RUNTIME;
	}
	announce_ready(&a);
	if (ready_fd >= 0) {
		if (detach_stdio(&a)) {
			teardown(&a);
			return EXIT_RUNTIME;
		}
		if (write(ready_fd, "r", 1) != 1)
			pr_err("cannot tell the parent we are ready: %s\n", strerror(errno));
		close(ready_fd);
	}
	while ((sig = serve(&a)) == SIGHUP)
		restart(&a);
	pr_info("%s: detaching\n", strsignal(sig));
	end_streams(&a, "mrcd stopped");
	teardown(&a);
	return 0;
}
