// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcd: the MRC host agent. It owns the fast path of one host:
 *
 *   - loads bpf/mrc.bpf.c and pins its maps in the pin folder (default
 *     /sys/fs/bpf/mrc), where libmrc finds them;
 *   - writes the global configuration (UDP port), the plane table (with
 *     each plane's addresses) and the ifindex -> plane map;
 *   - attaches mrc_xdp_rx to every plane interface (through libxdp's
 *     dispatcher when it can, so other XDP programs keep working) and
 *     mrc_tc_tx to their clsact egress hook;
 *   - serves mrcctl on a Unix socket (lib/agent_ipc.h), from one poll loop
 *     with the signals, and never blocks on a client;
 *   - keeps the paths healthy (lib/probe_engine.h): records EV events,
 *     probes ASSUMED_BAD EVs back to GOOD, demotes the EVs of a plane whose
 *     link goes down and tells the peers (port status), and sends the
 *     probes of `mrcctl probe`, all from the same loop;
 *   - SIGTERM/SIGINT: undoes all of it and exits. SIGHUP: re-executes
 *     itself (same pid) and adopts what it left running.
 *
 * Adoption: pins, XDP and TC attachments all outlive the process, and
 * they carry live QPs (their state is in the maps). A starting mrcd that
 * finds our pins - after SIGHUP, a crash or kill -9 - reuses the pinned
 * maps as they are and swaps its programs in for the old ones without a
 * moment where no program runs: QPs keep going. `mrcd --detach` removes
 * everything, whether an agent still runs or not.
 *
 * usage: mrcd --planes IF[,IF...] [--daemon] [--pin-dir DIR] [--port N]
 *             [--pidfile FILE] [--log FILE] [--xdp-mode native|skb|auto]
 *             [--probe-successes N] [--probe-interval-ms MS] [-v]
 *        mrcd --detach [--pin-dir DIR]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <ifaddrs.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <net/if.h>
#include <netinet/in.h>
#include <linux/if_link.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "mrc/abi.h"
#include "agent/agent_cmds.h"
#include "agent/agent_ipc.h"
#include "agent/ev_events.h"
#include "common/ev_state.h"
#include "common/parse.h"
#include "agent/probe_engine.h"
#include "mrc.skel.h"

#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define PROG_PIN_XDP	"prog_xdp"
#define PROG_PIN_TC	"prog_tc"
#define XDP_SECTION	"xdp"
#define ADOPT_OPT	"--adopt-fds="	/* internal: lock and socket fds of a re-exec */
#define DETACH_WAIT_MS	15000		/* --detach: how long a stopping agent may take */
#define PROBE_SUCCESSES_MAX	100
#define PROBE_INTERVAL_MAX_MS	60000

/*
 * Our filter's identity on a clsact hook ("MC"), so we only ever replace
 * or delete our own. mrc-labctl uses 0x4d52 on the lab's fabric ports.
 */
#define MRCD_TC_HANDLE	0x4d43
#define MRCD_TC_PRIO	0x4d43

enum xdp_choice {
	XDP_CHOICE_AUTO,
	XDP_CHOICE_NATIVE,
	XDP_CHOICE_SKB,
};

/* How the XDP program ended up on a plane, so detaching undoes that. */
enum xdp_via {
	XDP_VIA_NONE,
	XDP_VIA_LIBXDP,		/* by libxdp: in its dispatcher, or alone */
	XDP_VIA_NETLINK,	/* attached directly with bpf_xdp_attach() */
};

struct plane {
	char name[IFNAMSIZ];
	int ifindex;
	enum xdp_via xdp_via;
	enum xdp_attach_mode xdp_mode;
	struct xdp_program *xdp_prog;	/* XDP_VIA_LIBXDP */
	struct bpf_object *xdp_obj;	/* the object xdp_prog came from */
	__u32 xdp_flags;		/* XDP_VIA_NETLINK: mode flags used */
	bool xdp_dispatcher;		/* XDP_VIA_LIBXDP: shares the device */
	bool tc_attached;
};

struct options {
	const char *pin_dir_arg;
	const char *pidfile;
	const char *log_file;
	__u16 port;
	__u32 probe_successes;		/* answered probes that bring an EV back */
	__u32 probe_interval_ms;	/* first probe after a demotion */
	enum xdp_choice xdp_choice;
	bool daemon;
	bool detach;
	int inherited_lock_fd;		/* re-exec: -1 otherwise */
	int inherited_listen_fd;
};

enum client_mode {
	CLIENT_COMMAND,		/* one request, one reply */
	CLIENT_EVENTS,		/* `mrcctl events`: EV events as they come */
	CLIENT_PROBE,		/* `mrcctl probe`: lines as the probes end */
};

/*
 * An mrcctl connection: waiting for its request, being answered, or a
 * stream (until it ends, then it is answered with its exit status).
 */
struct client {
	int fd;
	long long deadline_ms;
	bool replying;
	struct agent_reply reply;
	enum client_mode mode;
	bool json;
	bool blocked;			/* stream: socket full, wait for POLLOUT */
	long long blocked_since_ms;
	long long last_sent_ms;		/* stream: for the heartbeat */
	uint64_t next_seq;		/* EVENTS: next event to send */
	uint64_t left;			/* EVENTS --count: events still to send */
	bool limited;			/* EVENTS: --count given */
	struct pe_job *job;		/* PROBE */
	size_t job_sent;		/* PROBE: output sent so far */
};

struct agent {
	struct options opt;
	struct plane planes[MRC_MAX_PLANES_ABI];
	int n_planes;
	struct agent_paths paths;	/* pin folder, lock, socket */
	int lock_fd;
	bool pin_dir_ours;		/* locked and created/checked by us */
	bool wrote_pidfile;
	bool adopting;			/* found our pins: reuse, never wipe */
	struct mrc *skel;
	struct probe_engine *pe;
	struct mrc_qp_evs *ev_tables;	/* mmapped, for ev deny/allow */
	int listen_fd;
	int sig_fd;
	struct client clients[AGENT_MAX_CLIENTS];
	int n_clients;
	char **argv;			/* for the re-exec */
	int argc;
};

static bool verbose;
/*
 * Set while we try something that has a fallback: libbpf's and libxdp's
 * warnings about that attempt would read like a failure when it is not.
 */
static bool quiet_libs;

#define pr_err(fmt, ...)  fprintf(stderr, "mrcd: " fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)						\
	do {								\
		if (verbose)						\
			fprintf(stderr, "mrcd: " fmt, ##__VA_ARGS__);	\
	} while (0)

static void usage(FILE *f)
{
	fprintf(f,
"usage: mrcd --planes IF[,IF...] [options]\n"
"       mrcd --detach [--pin-dir DIR]\n"
"  --planes IF,...      plane interfaces, plane 1 first (at most %d)\n"
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
"  --detach             stop the agent of DIR, or remove what a dead one left\n"
"  -v, --verbose        say how each plane was attached\n"
"  -h, --help           this text\n"
"Signals: TERM/INT stop and remove everything; HUP restarts in place\n"
"(same pid), keeping the maps and live QPs.\n"
"Exit status: 0 after a clean stop, 1 run-time error, 2 usage error.\n",
		MRC_MAX_PLANES_ABI, AGENT_PIN_DIR_DEFAULT, MRC_UDP_PORT_DEFAULT,
		PROBE_SUCCESSES_MAX, MRC_PROBE_SUCCESSES_DEFAULT, PROBE_INTERVAL_MAX_MS,
		PE_INTERVAL_MS_DEFAULT);
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- library messages ------------------------------------------------- */

static int print_lib_message(bool is_warning, bool is_debug, const char *fmt,
			     va_list args)
{
	if (is_debug || (!is_warning && !verbose) || (quiet_libs && !verbose))
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	return print_lib_message(level == LIBBPF_WARN, level == LIBBPF_DEBUG,
				 fmt, args);
}

static int print_libxdp(enum libxdp_print_level level, const char *fmt,
			va_list args)
{
	return print_lib_message(level == LIBXDP_WARN, level == LIBXDP_DEBUG,
				 fmt, args);
}

/*
 * libxdp's older calls return NULL or an error pointer; libxdp_get_error()
 * alone would call NULL a success when errno happens to be 0.
 */
static long libxdp_ptr_error(const void *ptr)
{
	return ptr ? libxdp_get_error(ptr) : -ENOENT;
}

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

/* Returns 0, or the exit status for a usage error (or --help). */
static int parse_args(struct agent *a, int argc, char **argv, bool *help)
{
	static const struct option longopts[] = {
		{ "planes",   required_argument, NULL, 'P' },
		{ "daemon",   no_argument,       NULL, 'd' },
		{ "pin-dir",  required_argument, NULL, 'D' },
		{ "port",     required_argument, NULL, 'p' },
		{ "pidfile",  required_argument, NULL, 'f' },
		{ "log",      required_argument, NULL, 'l' },
		{ "xdp-mode", required_argument, NULL, 'm' },
		{ "probe-successes", required_argument, NULL, 'S' },
		{ "probe-interval-ms", required_argument, NULL, 'I' },
		{ "detach",   no_argument,       NULL, 'X' },
		{ "adopt-fds", required_argument, NULL, 'A' },
		{ "verbose",  no_argument,       NULL, 'v' },
		{ "help",     no_argument,       NULL, 'h' },
		{}
	};
	const char *planes = NULL;
	uint64_t port, v;
	int c;

	a->opt.pin_dir_arg = AGENT_PIN_DIR_DEFAULT;
	a->opt.port = MRC_UDP_PORT_DEFAULT;
	a->opt.probe_successes = MRC_PROBE_SUCCESSES_DEFAULT;
	a->opt.probe_interval_ms = PE_INTERVAL_MS_DEFAULT;
	a->opt.inherited_lock_fd = a->opt.inherited_listen_fd = -1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":vh", longopts, NULL)) != -1) {
		switch (c) {
		case 'P':
			planes = optarg;
			break;
		case 'd':
			a->opt.daemon = true;
			break;
		case 'D':
			a->opt.pin_dir_arg = optarg;
			break;
		case 'p':
			if (parse_u64(optarg, 65535, &port) || !port) {
				pr_err("--port: '%s' is not a UDP port (1..65535)\n", optarg);
				return EXIT_USAGE;
			}
			a->opt.port = (__u16)port;
			break;
		case 'f':
			a->opt.pidfile = optarg;
			break;
		case 'l':
			a->opt.log_file = optarg;
			break;
		case 'm':
			if (parse_xdp_mode(optarg, &a->opt.xdp_choice)) {
				pr_err("--xdp-mode: '%s' is not native, skb or auto\n", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'S':
			if (parse_u64(optarg, PROBE_SUCCESSES_MAX, &v) || !v) {
				pr_err("--probe-successes: '%s' is not a number in 1..%d\n",
				       optarg, PROBE_SUCCESSES_MAX);
				return EXIT_USAGE;
			}
			a->opt.probe_successes = (__u32)v;
			break;
		case 'I':
			if (parse_u64(optarg, PROBE_INTERVAL_MAX_MS, &v) || !v) {
				pr_err("--probe-interval-ms: '%s' is not a number of ms in "
				       "1..%d\n", optarg, PROBE_INTERVAL_MAX_MS);
				return EXIT_USAGE;
			}
			a->opt.probe_interval_ms = (__u32)v;
			break;
		case 'X':
			a->opt.detach = true;
			break;
		case 'A':
			if (parse_adopt_fds(a, optarg)) {
				pr_err("%s%s: not two open descriptors (internal option "
				       "of a restart)\n", ADOPT_OPT, optarg);
				return EXIT_USAGE;
			}
			break;
		case 'v':
			verbose = true;
			break;
		case 'h':
			*help = true;
			return 0;
		case ':':
			pr_err("%s needs a value\n", argv[optind - 1]);
			return EXIT_USAGE;
		default:
			pr_err("unknown option '%s'\n", argv[optind - 1]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		pr_err("unexpected argument '%s'\n", argv[optind]);
		return EXIT_USAGE;
	}
	if (a->opt.detach) {
		if (planes || a->opt.daemon || a->opt.pidfile || a->opt.log_file) {
			pr_err("--detach takes only --pin-dir (and -v)\n");
			return EXIT_USAGE;
		}
		return 0;
	}
	if (!planes) {
		pr_err("--planes IF[,IF...] is required\n");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (a->opt.log_file && !a->opt.daemon) {
		pr_err("--log only applies with --daemon\n");
		return EXIT_USAGE;
	}
	return parse_planes(a, planes) ? EXIT_USAGE : 0;
}

/* ---- pin folder and lock ---------------------------------------------- */

static int resolve_paths(struct agent *a)
{
	char err[PATH_MAX + 64];

	if (agent_paths_resolve(a->opt.pin_dir_arg, &a->paths, err, sizeof(err))) {
		pr_err("--pin-dir: %s\n", err);
		return -1;
	}
	return 0;
}

static int check_bpffs(const struct agent *a)
{
	struct statfs fs;

	if (statfs(a->paths.pin_parent, &fs)) {
		pr_err("%s: %s\n", a->paths.pin_parent, strerror(errno));
		return -errno;
	}
	if ((unsigned long)fs.f_type != BPF_FS_MAGIC) {
		pr_err("%s is not a BPF filesystem, so %s cannot hold pins "
		       "(mount one: mount -t bpf bpf /sys/fs/bpf)\n",
		       a->paths.pin_parent, a->paths.pin_dir);
		return -ENOTSUP;
	}
	return 0;
}

static bool same_file(int fd, const char *path)
{
	struct stat held, now;

	return !fstat(fd, &held) && !stat(path, &now) &&
	       held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

/*
 * One agent per pin folder: an flock on a file in /run (the bpffs holds
 * only BPF objects), named after the bpffs instance and the folder (see
 * agent_ipc.c). 0 when locked, -EWOULDBLOCK when an agent holds it (said
 * only if !quiet), -1 on other errors.
 */
static int try_lock(struct agent *a, bool quiet)
{
	int fd;

	if (mkdir(AGENT_RUN_DIR, 0755) && errno != EEXIST) {
		pr_err("cannot create %s: %s\n", AGENT_RUN_DIR, strerror(errno));
		return -1;
	}
	for (;;) {
		fd = open(a->paths.lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			pr_err("cannot open lock %s: %s\n", a->paths.lock_path,
			       strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			int e = errno;

			close(fd);
			if (e == EWOULDBLOCK && !quiet)
				pr_err("mrcd is already running for %s (lock %s)\n",
				       a->paths.pin_dir, a->paths.lock_path);
			else if (e != EWOULDBLOCK)
				pr_err("lock %s: %s\n", a->paths.lock_path, strerror(e));
			return e == EWOULDBLOCK ? -EWOULDBLOCK : -1;
		}
		/*
		 * The holder unlinks the file as it exits; if we locked the
		 * unlinked one, the next agent would lock a new file and run
		 * next to us. Only a lock on the file at the path counts.
		 */
		if (same_file(fd, a->paths.lock_path))
			break;
		close(fd);
	}
	if (!ftruncate(fd, 0))
		dprintf(fd, "%d\n", (int)getpid());
	a->lock_fd = fd;
	return 0;
}

/* A re-exec keeps the lock its previous image held: no gap for another agent. */
static int take_lock(struct agent *a)
{
	if (a->opt.inherited_lock_fd < 0)
		return try_lock(a, false) ? -1 : 0;
	if (!same_file(a->opt.inherited_lock_fd, a->paths.lock_path)) {
		pr_err("restart: the inherited lock is not %s\n", a->paths.lock_path);
		return -1;
	}
	a->lock_fd = a->opt.inherited_lock_fd;
	return 0;
}

static void release_lock(struct agent *a)
{
	if (a->lock_fd < 0)
		return;
	unlink(a->paths.lock_path);
	close(a->lock_fd);
	a->lock_fd = -1;
}

static int make_pin_dir(struct agent *a)
{
	struct stat st;

	if (!mkdir(a->paths.pin_dir, 0700) ||
	    (errno == EEXIST && !stat(a->paths.pin_dir, &st) && S_ISDIR(st.st_mode))) {
		a->pin_dir_ours = true;
		return 0;
	}
	pr_err("cannot create pin folder %s: %s\n", a->paths.pin_dir,
	       errno == EEXIST ? "exists and is not a folder" : strerror(errno));
	return -1;
}

static int pin_path(char *buf, size_t len, const struct agent *a,
		    const char *name)
{
	int n = snprintf(buf, len, "%s/%s", a->paths.pin_dir, name);

	if (n < 0 || (size_t)n >= len) {
		pr_err("pin path too long: %s/%s\n", a->paths.pin_dir, name);
		return -ENAMETOOLONG;
	}
	return 0;
}

static void unpin(const struct agent *a, const char *name)
{
	char path[PATH_MAX];

	if (pin_path(path, sizeof(path), a, name))
		return;
	if (unlink(path) && errno != ENOENT)
		pr_err("cannot remove pin %s: %s\n", path, strerror(errno));
}

static bool pinned(const struct agent *a, const char *name)
{
	char path[PATH_MAX];

	return !pin_path(path, sizeof(path), a, name) && !access(path, F_OK);
}

/*
 * Remove every pin this agent owns: one per map of the object, and the
 * two programs. Only those names: the folder may hold other things (the
 * lab pins its fabric in a sub-folder of the default one).
 */
static void unpin_all(const struct agent *a)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, a->skel->obj)
		unpin(a, bpf_map__name(map));
	unpin(a, PROG_PIN_XDP);
	unpin(a, PROG_PIN_TC);
}

/* Pins of an earlier mrcd: any of our maps or programs. */
static bool found_our_pins(const struct agent *a)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, a->skel->obj)
		if (pinned(a, bpf_map__name(map)))
			return true;
	return pinned(a, PROG_PIN_XDP) || pinned(a, PROG_PIN_TC);
}

/* ---- loading ---------------------------------------------------------- */

static bool ifa_is_plane(const struct ifaddrs *ifa, int ifindex)
{
	return ifa->ifa_addr && ifa->ifa_name &&
	       (int)if_nametoindex(ifa->ifa_name) == ifindex;
}

/*
 * The plane's source addresses for TC egress: its first global IPv4 and
 * its first IPv6 that is neither link-local, loopback nor multicast.
 */
static void plane_addresses(const struct ifaddrs *list, int ifindex,
			    struct mrc_plane *out)
{
	const struct ifaddrs *ifa;
	bool have4 = false, have6 = false;

	for (ifa = list; ifa; ifa = ifa->ifa_next) {
		if (!ifa_is_plane(ifa, ifindex))
			continue;
		if (ifa->ifa_addr->sa_family == AF_INET && !have4) {
			const struct in_addr *in =
				&((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr;
			__u32 h = ntohl(in->s_addr);

			if ((h >> 24) == 127 || (h >> 16) == 0xa9fe || !h)
				continue;	/* loopback, link-local, unset */
			memcpy(out->addr4, &in->s_addr, 4);
			have4 = true;
		} else if (ifa->ifa_addr->sa_family == AF_INET6 && !have6) {
			const struct in6_addr *in6 =
				&((const struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr;

			if (IN6_IS_ADDR_LINKLOCAL(in6) || IN6_IS_ADDR_LOOPBACK(in6) ||
			    IN6_IS_ADDR_MULTICAST(in6) || IN6_IS_ADDR_UNSPECIFIED(in6))
				continue;
			memcpy(out->addr6, in6, 16);
			have6 = true;
		}
	}
}

static int write_planes(const struct agent *a)
{
	struct ifaddrs *ifas = NULL;
	struct mrc_plane plane;
	__u32 key;
	int i, err = 0;

	if (getifaddrs(&ifas)) {
		pr_err("getifaddrs: %s (planes get no source addresses)\n", strerror(errno));
		ifas = NULL;
	}
	/* Every slot: an adopted table may have had more planes than we do. */
	for (i = 0; !err && i < MRC_MAX_PLANES_ABI; i++) {
		memset(&plane, 0, sizeof(plane));
		if (i < a->n_planes) {
			plane.ifindex = (__u32)a->planes[i].ifindex;
			memcpy(plane.name, a->planes[i].name, sizeof(plane.name));
			plane_addresses(ifas, a->planes[i].ifindex, &plane);
		}
		key = (__u32)i;		/* plane i + 1 */
		err = bpf_map__update_elem(a->skel->maps.mrc_planes, &key,
					   sizeof(key), &plane, sizeof(plane),
					   BPF_ANY);
	}
	if (ifas)
		freeifaddrs(ifas);
	return err;
}

static bool is_our_ifindex(const struct agent *a, __u32 ifindex)
{
	for (int i = 0; i < a->n_planes; i++)
		if ((__u32)a->planes[i].ifindex == ifindex)
			return true;
	return false;
}

/*
 * ifindex -> plane for XDP and TC. New entries go in before stale ones
 * leave, so an adopted fast path never misses a plane it still serves.
 */
static int write_plane_of(const struct agent *a)
{
	const struct bpf_map *m = a->skel->maps.mrc_plane_of;
	__u32 key, next, plane, stale[MRC_MAX_PLANES_ABI];
	int i, n_stale = 0, err = 0;
	bool first = true;

	for (i = 0; !err && i < a->n_planes; i++) {
		key = (__u32)a->planes[i].ifindex;
		plane = (__u32)i + 1;
		err = bpf_map__update_elem(m, &key, sizeof(key), &plane,
					   sizeof(plane), BPF_ANY);
	}
	while (!err && n_stale < MRC_MAX_PLANES_ABI &&
	       !bpf_map__get_next_key(m, first ? NULL : &key, &next, sizeof(next))) {
		if (!is_our_ifindex(a, next))
			stale[n_stale++] = next;
		key = next;
		first = false;
	}
	for (i = 0; i < n_stale; i++)
		bpf_map__delete_elem(m, &stale[i], sizeof(stale[i]), 0);
	return err;
}

static int write_config(const struct agent *a)
{
	struct mrc_global_cfg cfg = {
		.udp_port = a->opt.port,
		.abi_version = MRC_ABI_VERSION,
	};
	__u32 key = 0;
	int err;

	err = bpf_map__update_elem(a->skel->maps.mrc_cfg, &key, sizeof(key),
				   &cfg, sizeof(cfg), BPF_ANY);
	if (!err)
		err = write_planes(a);
	if (!err)
		err = write_plane_of(a);
	if (err)
		pr_err("writing the configuration maps failed: %s\n", strerror(-err));
	return err;
}

static int pin_program(const struct agent *a, struct bpf_program *prog,
		       const char *name)
{
	char path[PATH_MAX];
	int err;

	err = pin_path(path, sizeof(path), a, name);
	if (err)
		return err;
	/* An adopted pin names the old program: ours replaces it. */
	unpin(a, name);
	err = bpf_program__pin(prog, path);
	if (err)
		pr_err("pin %s: %s\n", path, strerror(-err));
	return err;
}

/* The planes an adopted table lists, to retire those we no longer serve. */
static int read_old_planes(const struct agent *a, struct mrc_plane *old)
{
	__u32 key;
	int n = 0;

	for (key = 0; key < MRC_MAX_PLANES_ABI; key++)
		if (!bpf_map__lookup_elem(a->skel->maps.mrc_planes, &key, sizeof(key),
					  &old[n], sizeof(old[n]), 0) && old[n].ifindex)
			n++;
	return n;
}

static int load_fast_path(struct agent *a)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = a->paths.pin_dir);
	int err;

	a->skel = mrc__open_opts(&opts);
	if (!a->skel) {
		pr_err("opening the BPF object failed: %s\n", strerror(errno));
		return -1;
	}
	/*
	 * Our pins hold live QPs: libbpf reuses every pinned map whose
	 * definition still matches (PIN_BY_NAME), so load on top of them.
	 */
	a->adopting = found_our_pins(a);
	if (a->adopting)
		pr_err("adopting the fast path left in %s (maps and QPs kept)\n",
		       a->paths.pin_dir);
	else
		unpin_all(a);
	err = mrc__load(a->skel);
	if (err) {
		pr_err("loading the BPF programs failed: %s%s\n", strerror(-err),
		       verbose ? "" : " (-v shows libbpf's messages)");
		if (a->adopting)
			pr_err("the maps pinned in %s may be from an incompatible "
			       "mrcd: 'mrcd --detach --pin-dir %s' removes them "
			       "(and ends their QPs)\n", a->paths.pin_dir,
			       a->paths.pin_dir);
		return err;
	}
	return 0;
}

static int configure_fast_path(const struct agent *a)
{
	int err = write_config(a);

	if (!err)
		err = pin_program(a, a->skel->progs.mrc_xdp_rx, PROG_PIN_XDP);
	if (!err)
		err = pin_program(a, a->skel->progs.mrc_tc_tx, PROG_PIN_TC);
	return err;
}

/* ---- XDP -------------------------------------------------------------- */

static const char *mode_name(enum xdp_attach_mode mode)
{
	switch (mode) {
	case XDP_MODE_NATIVE:
		return "native";
	case XDP_MODE_SKB:
		return "skb";
	case XDP_MODE_HW:
		return "hw";
	default:
		return "unknown";
	}
}

static bool is_our_xdp_program(const struct xdp_program *prog)
{
	const char *name = prog ? xdp_program__name(prog) : NULL;

	return name && !strcmp(name, "mrc_xdp_rx");
}

/*
 * A crashed agent's XDP program stays attached (libxdp pins dispatcher
 * links; a direct attachment belongs to the device), still working on the
 * old maps. Take every mrc_xdp_rx off the plane before attaching ours.
 */
static void remove_stale_xdp(const struct plane *p)
{
	struct xdp_program *stale[16], *prog = NULL;
	struct xdp_multiprog *mp;
	size_t n = 0;
	int err = 0;

	mp = xdp_multiprog__get_from_ifindex(p->ifindex);
	if (libxdp_ptr_error(mp))
		return;		/* nothing attached */
	if (xdp_multiprog__is_legacy(mp)) {
		if (is_our_xdp_program(xdp_multiprog__main_prog(mp))) {
			n = 1;
			err = xdp_multiprog__detach(mp);
		}
	} else {
		while ((prog = xdp_multiprog__next_prog(prog, mp)) &&
		       n < sizeof(stale) / sizeof(stale[0]))
			if (is_our_xdp_program(prog))
				stale[n++] = prog;
		if (n)
			err = xdp_program__detach_multi(stale, n, p->ifindex,
							XDP_MODE_UNSPEC, 0);
	}
	if (n)
		pr_err("%s: %s %zu XDP program(s) left by an earlier mrcd%s%s\n",
		       p->name, err ? "could not remove" : "removed", n,
		       err ? ": " : "", err ? strerror(-err) : "");
	xdp_multiprog__close(mp);
}

/*
 * libxdp falls back to attaching the program alone when the kernel cannot
 * run its dispatcher (freplace programs); then it is exclusive again.
 */
static bool has_dispatcher(int ifindex)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	bool legacy;

	if (libxdp_ptr_error(mp))
		return false;
	legacy = xdp_multiprog__is_legacy(mp);
	xdp_multiprog__close(mp);
	return !legacy;
}

/*
 * Each plane gets its own copy of the object, because a libxdp program is
 * loaded as an extension of that device's dispatcher. The copy's maps are
 * the pinned ones (same pin_root_path), so all planes share one state.
 */
static int attach_xdp_libxdp(const struct agent *a, struct plane *p,
			     enum xdp_attach_mode mode)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = a->paths.pin_dir,
		    .object_name = "mrc");
	struct bpf_program *bpf_prog;
	struct xdp_program *prog;
	struct bpf_object *obj;
	const void *elf;
	size_t size;
	int err;

	elf = mrc__elf_bytes(&size);
	obj = bpf_object__open_mem(elf, size, &opts);
	if (!obj)
		return -errno;
	/* libxdp loads the whole object; the TC program is not wanted here. */
	bpf_object__for_each_program(bpf_prog, obj)
		if (bpf_program__type(bpf_prog) != BPF_PROG_TYPE_XDP)
			bpf_program__set_autoload(bpf_prog, false);
	prog = xdp_program__from_bpf_obj(obj, XDP_SECTION);
	err = (int)libxdp_ptr_error(prog);
	if (!err) {
		err = xdp_program__attach(prog, p->ifindex, mode, 0);
		if (err)
			xdp_program__close(prog);
	}
	if (err) {
		bpf_object__close(obj);
		return err;
	}
	p->xdp_via = XDP_VIA_LIBXDP;
	p->xdp_prog = prog;
	p->xdp_obj = obj;
	p->xdp_mode = xdp_program__is_attached(prog, p->ifindex);
	if (p->xdp_mode == XDP_MODE_UNSPEC)
		p->xdp_mode = mode;
	p->xdp_dispatcher = has_dispatcher(p->ifindex);
	return 0;
}

/* Without libxdp: the skeleton's program, never replacing someone else's. */
static int attach_xdp_netlink(const struct agent *a, struct plane *p,
			      enum xdp_attach_mode mode)
{
	__u32 flags = mode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	int fd = bpf_program__fd(a->skel->progs.mrc_xdp_rx);
	int err;

	err = bpf_xdp_attach(p->ifindex, fd, flags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err)
		return err;
	p->xdp_via = XDP_VIA_NETLINK;
	p->xdp_mode = mode;
	p->xdp_flags = flags;
	return 0;
}

static int attach_xdp(const struct agent *a, struct plane *p)
{
	static const enum xdp_attach_mode auto_modes[] = { XDP_MODE_NATIVE, XDP_MODE_SKB };
	static const enum xdp_attach_mode native[] = { XDP_MODE_NATIVE };
	static const enum xdp_attach_mode skb[] = { XDP_MODE_SKB };
	const enum xdp_attach_mode *modes = auto_modes;
	size_t n = 2, i;
	int err = 0;

	if (a->opt.xdp_choice == XDP_CHOICE_NATIVE)
		modes = native, n = 1;
	else if (a->opt.xdp_choice == XDP_CHOICE_SKB)
		modes = skb, n = 1;

	/* Native fails on many devices (e.g. veth with a jumbo MTU): quiet. */
	quiet_libs = true;
	for (i = 0; i < n; i++) {
		err = attach_xdp_libxdp(a, p, modes[i]);
		if (!err)
			break;
		pr_info("%s: libxdp %s attach: %s\n", p->name, mode_name(modes[i]),
			strerror(-err));
	}
	if (err) {
		pr_err("%s: libxdp could not attach (%s); attaching mrc_xdp_rx "
		       "directly, without the dispatcher\n", p->name, strerror(-err));
		for (i = 0; i < n; i++) {
			quiet_libs = i + 1 < n;
			err = attach_xdp_netlink(a, p, modes[i]);
			if (!err)
				break;
			pr_info("%s: direct %s attach: %s\n", p->name,
				mode_name(modes[i]), strerror(-err));
		}
	}
	quiet_libs = false;
	if (err) {
		pr_err("%s: cannot attach the XDP program: %s\n", p->name, strerror(-err));
		return err;
	}
	pr_info("%s: XDP attached in %s mode (%s)\n", p->name, mode_name(p->xdp_mode),
		p->xdp_via != XDP_VIA_LIBXDP ? "direct, without libxdp" :
		p->xdp_dispatcher ? "libxdp dispatcher" :
		"libxdp, alone: no dispatcher support");
	return 0;
}

static bool plane_exists(const struct plane *p)
{
	char name[IF_NAMESIZE];

	return if_indextoname((unsigned int)p->ifindex, name) != NULL;
}

static void detach_xdp(const struct agent *a, struct plane *p)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	bool present = plane_exists(p);
	int err = 0;

	if (p->xdp_via == XDP_VIA_LIBXDP && present)
		err = xdp_program__detach(p->xdp_prog, p->ifindex, p->xdp_mode, 0);
	else if (p->xdp_via == XDP_VIA_NETLINK && present) {
		/* REPLACE with our fd: detach only if it is still ours. */
		opts.old_prog_fd = bpf_program__fd(a->skel->progs.mrc_xdp_rx);
		err = bpf_xdp_detach(p->ifindex, p->xdp_flags | XDP_FLAGS_REPLACE, &opts);
	}
	if (err)
		pr_err("%s: detaching XDP: %s\n", p->name, strerror(-err));
	xdp_program__close(p->xdp_prog);
	bpf_object__close(p->xdp_obj);
	p->xdp_prog = NULL;
	p->xdp_obj = NULL;
	p->xdp_via = XDP_VIA_NONE;
}

/* ---- TC --------------------------------------------------------------- */

static int attach_tc(const struct agent *a, struct plane *p)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = p->ifindex,
		    .attach_point = BPF_TC_EGRESS);
	/* REPLACE: a crashed agent's filter is overwritten, not doubled. */
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = MRCD_TC_HANDLE,
		    .priority = MRCD_TC_PRIO, .flags = BPF_TC_F_REPLACE,
		    .prog_fd = bpf_program__fd(a->skel->progs.mrc_tc_tx));
	int err;

	/* clsact is often there already; libbpf would warn about that. */
	quiet_libs = true;
	err = bpf_tc_hook_create(&hook);
	quiet_libs = false;
	if (err && err != -EEXIST) {
		pr_err("%s: cannot add a clsact qdisc: %s\n", p->name, strerror(-err));
		return err;
	}
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		pr_err("%s: cannot attach the TC egress program: %s\n", p->name,
		       strerror(-err));
		return err;
	}
	p->tc_attached = true;
	pr_info("%s: TC egress filter handle 0x%x prio 0x%x\n", p->name,
		MRCD_TC_HANDLE, MRCD_TC_PRIO);
	return 0;
}

/* Our filter (by handle and priority) off a device's egress hook. */
static int remove_tc_filter(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = MRCD_TC_HANDLE,
		    .priority = MRCD_TC_PRIO);
	int err;

	/* No clsact, or no filter of ours: nothing to do, nothing to say. */
	quiet_libs = true;
	err = bpf_tc_detach(&hook, &opts);
	quiet_libs = false;
	return err == -ENOENT || err == -EINVAL ? 0 : err;
}

/*
 * Only our filter goes; the clsact qdisc stays, since other filters may
 * hang off it (and an empty clsact costs nothing).
 */
static void detach_tc(struct plane *p)
{
	int err;

	if (!p->tc_attached)
		return;
	p->tc_attached = false;
	if (!plane_exists(p))
		return;
	err = remove_tc_filter(p->ifindex);
	if (err)
		pr_err("%s: detaching TC: %s\n", p->name, strerror(-err));
}

/* The id of the program our TC filter runs on a device; 0 = none. */
static __u32 tc_prog_id(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = MRCD_TC_HANDLE,
		    .priority = MRCD_TC_PRIO);

	quiet_libs = true;
	if (bpf_tc_query(&hook, &opts))
		opts.prog_id = 0;
	quiet_libs = false;
	return opts.prog_id;
}

/* ---- adopting what an earlier mrcd attached ---------------------------- */

static __u32 xdp_flags_for(enum xdp_attach_mode mode)
{
	return mode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
}

/*
 * One program owns the device (attached alone, by libxdp or directly):
 * REPLACE naming the old program swaps them in one step, and fails
 * rather than replace a program that is not the one we saw.
 */
static int replace_xdp_alone(const struct agent *a, struct plane *p,
			     const struct xdp_program *old,
			     enum xdp_attach_mode mode)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = xdp_program__fd(old));
	int fd = bpf_program__fd(a->skel->progs.mrc_xdp_rx);
	__u32 flags = xdp_flags_for(mode);
	int err;

	err = bpf_xdp_attach(p->ifindex, fd, flags | XDP_FLAGS_REPLACE, &opts);
	if (err)
		return err;
	p->xdp_via = XDP_VIA_NETLINK;
	p->xdp_mode = mode;
	p->xdp_flags = flags;
	return 0;
}

/* Take the programs with these ids out of the device's dispatcher. */
static int remove_xdp_by_id(const struct plane *p, const __u32 *ids, size_t n_ids)
{
	struct xdp_program *victims[16], *prog = NULL;
	struct xdp_multiprog *mp;
	size_t n = 0, i;
	int err = 0;

	mp = xdp_multiprog__get_from_ifindex(p->ifindex);
	if (libxdp_ptr_error(mp))
		return -ENOENT;
	while ((prog = xdp_multiprog__next_prog(prog, mp)) &&
	       n < sizeof(victims) / sizeof(victims[0]))
		for (i = 0; i < n_ids; i++)
			if (xdp_program__id(prog) == ids[i])
				victims[n++] = prog;
	if (n)
		err = xdp_program__detach_multi(victims, n, p->ifindex,
						XDP_MODE_UNSPEC, 0);
	xdp_multiprog__close(mp);
	return err;
}

/*
 * In a libxdp dispatcher: add ours (libxdp swaps in a new dispatcher
 * that runs both, atomically), then take the old one out (another atomic
 * swap). In between both run in turn; the first consumes MRC control
 * packets and steers data to its socket port, so the second finds nothing
 * of ours left to act on.
 */
static int replace_xdp_dispatched(const struct agent *a, struct plane *p,
				  const __u32 *old_ids, size_t n_old,
				  enum xdp_attach_mode mode)
{
	int err = attach_xdp_libxdp(a, p, mode);

	if (err)
		return err;
	err = remove_xdp_by_id(p, old_ids, n_old);
	if (err)
		pr_err("%s: the earlier mrc_xdp_rx stays next to ours: %s\n",
		       p->name, strerror(-err));
	return 0;
}

/*
 * Swap our XDP program in for the earlier agent's on this plane. 1 when
 * swapped, 0 when there was none of ours to swap, or a negative errno.
 */
static int adopt_xdp(const struct agent *a, struct plane *p)
{
	struct xdp_program *prog = NULL, *main_prog;
	struct xdp_multiprog *mp;
	enum xdp_attach_mode mode;
	__u32 old_ids[16];
	size_t n = 0;
	int err = 0;

	mp = xdp_multiprog__get_from_ifindex(p->ifindex);
	if (libxdp_ptr_error(mp))
		return 0;	/* nothing attached */
	mode = xdp_multiprog__attach_mode(mp);
	if (xdp_multiprog__is_legacy(mp)) {
		main_prog = xdp_multiprog__main_prog(mp);
		if (is_our_xdp_program(main_prog)) {
			n = 1;
			err = replace_xdp_alone(a, p, main_prog, mode);
		}
		xdp_multiprog__close(mp);
	} else {
		while ((prog = xdp_multiprog__next_prog(prog, mp)) &&
		       n < sizeof(old_ids) / sizeof(old_ids[0]))
			if (is_our_xdp_program(prog))
				old_ids[n++] = xdp_program__id(prog);
		xdp_multiprog__close(mp);
		if (n)
			err = replace_xdp_dispatched(a, p, old_ids, n, mode);
	}
	if (err)
		return err;
	if (n)
		pr_info("%s: XDP program replaced in place (%s mode)\n", p->name,
			mode_name(p->xdp_mode));
	return n ? 1 : 0;
}

/*
 * Take our programs off a plane an earlier agent recorded in its table.
 * False when the device is gone (or its index now names another one).
 */
static bool remove_plane_leftovers(const struct mrc_plane *old)
{
	struct plane p = { .ifindex = (int)old->ifindex };
	char name[IF_NAMESIZE];
	int err;

	snprintf(p.name, sizeof(p.name), "%.*s", (int)sizeof(old->name), old->name);
	if (!if_indextoname(old->ifindex, name) || strcmp(name, p.name))
		return false;
	remove_stale_xdp(&p);
	err = remove_tc_filter(p.ifindex);
	if (err)
		pr_err("%s: removing the earlier TC filter: %s\n", p.name, strerror(-err));
	return true;
}

/*
 * A plane of the adopted table we no longer serve (a restart with other
 * --planes): its old programs would go on working on our maps.
 */
static void retire_plane(const struct mrc_plane *old)
{
	if (remove_plane_leftovers(old))
		pr_err("%.*s is no longer a plane: detached the earlier agent's programs\n",
		       (int)sizeof(old->name), old->name);
}

/* ---- life cycle ------------------------------------------------------- */

static int attach_plane_xdp(const struct agent *a, struct plane *p)
{
	int rc;

	if (!a->adopting) {
		remove_stale_xdp(p);
		return attach_xdp(a, p);
	}
	rc = adopt_xdp(a, p);
	if (rc > 0)
		return 0;
	if (rc < 0) {
		/* A gap of a few ms beats an agent that cannot start. */
		pr_err("%s: cannot swap the XDP program in place (%s): replacing it\n",
		       p->name, strerror(-rc));
		remove_stale_xdp(p);
	}
	return attach_xdp(a, p);
}

static int attach_planes(struct agent *a)
{
	struct mrc_plane old[MRC_MAX_PLANES_ABI];
	int i, n_old = 0;

	if (a->adopting)
		n_old = read_old_planes(a, old);
	for (i = 0; i < a->n_planes; i++) {
		struct plane *p = &a->planes[i];

		if (attach_plane_xdp(a, p) || attach_tc(a, p))
			return -1;
	}
	for (i = 0; i < n_old; i++)
		if (!is_our_ifindex(a, old[i].ifindex))
			retire_plane(&old[i]);
	return 0;
}

static void detach_planes(struct agent *a)
{
	struct plane *p;
	int i;

	for (i = 0; i < a->n_planes; i++) {
		p = &a->planes[i];
		if (!plane_exists(p) && (p->tc_attached || p->xdp_via != XDP_VIA_NONE))
			pr_err("%s is gone; nothing to detach there\n", p->name);
		detach_tc(p);
		detach_xdp(a, p);
	}
}

static void close_listener(struct agent *a, bool unlink_path)
{
	if (a->listen_fd < 0)
		return;
	close(a->listen_fd);
	a->listen_fd = -1;
	if (unlink_path)
		unlink(a->paths.sock_path);
}

/* ---- probing ---------------------------------------------------------- */

/*
 * Where XDP steers port status requests (mrc_global_cfg.agent_port); the
 * UDP port and flags stay as they are. 0 = nobody listens: XDP drops them.
 */
static int set_agent_port(const struct agent *a, __u16 port)
{
	const struct bpf_map *m = a->skel->maps.mrc_cfg;
	struct mrc_global_cfg cfg = {};
	__u32 key = 0;
	int err;

	if (bpf_map__lookup_elem(m, &key, sizeof(key), &cfg, sizeof(cfg), 0))
		cfg.udp_port = a->opt.port;
	cfg.agent_port = port;
	cfg.abi_version = MRC_ABI_VERSION;
	err = bpf_map__update_elem(m, &key, sizeof(key), &cfg, sizeof(cfg), BPF_ANY);
	if (err)
		pr_err("writing the agent port to mrc_cfg: %s\n", strerror(-err));
	return err;
}

static void probe_setup(const struct agent *a, struct pe_setup *ps)
{
	const struct mrc *s = a->skel;

	memset(ps, 0, sizeof(*ps));
	ps->n_planes = a->n_planes;
	for (int i = 0; i < a->n_planes; i++) {
		snprintf(ps->planes[i].name, sizeof(ps->planes[i].name), "%s",
			 a->planes[i].name);
		ps->planes[i].ifindex = a->planes[i].ifindex;
	}
	ps->probe_successes = a->opt.probe_successes;
	ps->probe_interval_ms = a->opt.probe_interval_ms;
	ps->udp_port = a->opt.port;
	ps->fd_planes = bpf_map__fd(s->maps.mrc_planes);
	ps->fd_qps = bpf_map__fd(s->maps.mrc_qps);
	ps->fd_qp_evs = bpf_map__fd(s->maps.mrc_qp_evs);
	ps->fd_tx = bpf_map__fd(s->maps.mrc_tx);
	ps->fd_ev_profiles = bpf_map__fd(s->maps.mrc_ev_profiles);
	ps->fd_ctl_stats = bpf_map__fd(s->maps.mrc_ctl_stats);
	ps->fd_ev_events = bpf_map__fd(s->maps.mrc_ev_events);
}

static int start_probing(struct agent *a)
{
	struct pe_setup ps;
	char err[256];

	a->ev_tables = ev_table_map(bpf_map__fd(a->skel->maps.mrc_qp_evs));
	if (!a->ev_tables) {
		pr_err("mapping the EV tables (mrc_qp_evs): %s\n", strerror(errno));
		return -1;
	}
	probe_setup(a, &ps);
	a->pe = pe_open(&ps, err, sizeof(err));
	if (!a->pe) {
		pr_err("probing: %s\n", err);
		return -1;
	}
	return set_agent_port(a, pe_agent_port(a->pe));
}

/* `clean`: we stop for good, so XDP must stop steering status to us. */
static void stop_probing(struct agent *a, bool clean)
{
	if (clean && a->pe && a->skel)
		set_agent_port(a, 0);
	pe_close(a->pe);
	a->pe = NULL;
	ev_table_unmap(a->ev_tables);
	a->ev_tables = NULL;
}

/* Undo everything start() did, in reverse; safe after a partial start. */
static void teardown(struct agent *a)
{
	stop_probing(a, true);
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
	close_listener(a, true);
	for (i = 0; i < a->n_planes; i++) {
		xdp_program__close(a->planes[i].xdp_prog);
		bpf_object__close(a->planes[i].xdp_obj);
	}
	mrc__destroy(a->skel);
	a->skel = NULL;
	release_lock(a);
}

static int write_pidfile(struct agent *a)
{
	FILE *f;

	if (!a->opt.pidfile)
		return 0;
	f = fopen(a->opt.pidfile, "we");
	if (!f) {
		pr_err("cannot write pidfile %s: %s\n", a->opt.pidfile, strerror(errno));
		return -1;
	}
	fprintf(f, "%d\n", (int)getpid());
	a->wrote_pidfile = true;
	if (fclose(f)) {
		pr_err("cannot write pidfile %s: %s\n", a->opt.pidfile, strerror(errno));
		return -1;
	}
	return 0;
}

/* mrcctl's socket; a re-exec keeps the one its previous image listened on. */
static int open_listener(struct agent *a)
{
	char err[PATH_MAX + 64];

	if (a->opt.inherited_listen_fd >= 0) {
		a->listen_fd = a->opt.inherited_listen_fd;
		return 0;
	}
	if (agent_listen(a->paths.sock_path, &a->listen_fd, err, sizeof(err))) {
		pr_err("%s\n", err);
		return -1;
	}
	return 0;
}

static int start(struct agent *a)
{
	if (resolve_paths(a) || check_bpffs(a) || take_lock(a) ||
	    make_pin_dir(a) || load_fast_path(a) || configure_fast_path(a) ||
	    attach_planes(a) || start_probing(a) || open_listener(a) ||
	    write_pidfile(a))
		return -1;
	return 0;
}

static void announce_ready(const struct agent *a)
{
	int i;

	fprintf(stderr, "mrcd: ready: planes ");
	for (i = 0; i < a->n_planes; i++)
		fprintf(stderr, "%s%s", i ? "," : "", a->planes[i].name);
	fprintf(stderr, " port %u pins %s\n", a->opt.port, a->paths.pin_dir);
}

/* ---- daemon ----------------------------------------------------------- */

/*
 * The parent of --daemon: exit 0 once the child reports it is attached,
 * or with the child's own status when it gives up (its message is
 * already on our shared stderr).
 */
static int wait_for_child(pid_t child, int ready_fd)
{
	ssize_t n;
	int status;
	char c;

	do
		n = read(ready_fd, &c, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1)
		return 0;
	if (waitpid(child, &status, 0) == child && WIFEXITED(status) &&
	    WEXITSTATUS(status))
		return WEXITSTATUS(status);
	return EXIT_RUNTIME;
}

/* Returns in the child, with the write end of the readiness pipe. */
static int daemonize(int *ready_fd)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC)) {
		pr_err("pipe: %s\n", strerror(errno));
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		pr_err("fork: %s\n", strerror(errno));
		return -1;
	}
	if (pid > 0) {
		close(fds[1]);
		exit(wait_for_child(pid, fds[0]));
	}
	close(fds[0]);
	setsid();
	*ready_fd = fds[1];
	return 0;
}

/* Once ready, a daemon lets go of the terminal (or keeps a log file). */
static int detach_stdio(const struct agent *a)
{
	const char *out = a->opt.log_file ? a->opt.log_file : "/dev/null";
	int null_fd, out_fd;

	null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	out_fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (null_fd < 0 || out_fd < 0) {
		pr_err("cannot open %s: %s\n", out, strerror(errno));
		return -1;
	}
	dup2(null_fd, STDIN_FILENO);
	dup2(out_fd, STDOUT_FILENO);
	dup2(out_fd, STDERR_FILENO);
	close(null_fd);
	close(out_fd);
	setvbuf(stderr, NULL, _IOLBF, 0);
	return 0;
}

/* ---- serving mrcctl --------------------------------------------------- */

static void plane_info(const struct agent *a, int i, struct agent_plane_info *pi)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	const struct plane *p = &a->planes[i];
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	memset(pi, 0, sizeof(*pi));
	snprintf(pi->name, sizeof(pi->name), "%s", p->name);
	pi->ifindex = p->ifindex;
	pi->xdp_mode = p->xdp_via == XDP_VIA_NONE ? "none" : mode_name(p->xdp_mode);
	pi->xdp_how = p->xdp_via == XDP_VIA_NETLINK ? "direct" :
		      p->xdp_via == XDP_VIA_NONE ? "none" :
		      p->xdp_dispatcher ? "libxdp dispatcher" : "libxdp";
	if (p->xdp_via == XDP_VIA_LIBXDP)
		pi->xdp_prog_id = xdp_program__id(p->xdp_prog);
	else if (p->xdp_via == XDP_VIA_NETLINK &&
		 !bpf_obj_get_info_by_fd(bpf_program__fd(a->skel->progs.mrc_xdp_rx),
					 &info, &len))
		pi->xdp_prog_id = info.id;
	if (!bpf_xdp_query(p->ifindex, 0, &q))
		pi->xdp_attached_id = q.prog_id ? q.prog_id :
				      q.drv_prog_id ? q.drv_prog_id : q.skb_prog_id;
	pi->tc_prog_id = tc_prog_id(p->ifindex);
}

static void command_env(const struct agent *a, struct agent_cmd_env *env,
			struct pe_status *probing, struct agent_stream *stream)
{
	const struct mrc *s = a->skel;
	int i;

	memset(env, 0, sizeof(*env));
	env->pin_dir = a->paths.pin_dir;
	env->pid = (int)getpid();
	env->n_planes = (unsigned int)a->n_planes;
	for (i = 0; i < a->n_planes; i++)
		plane_info(a, i, &env->planes[i]);
	env->maps = (struct agent_maps){
		.cfg = bpf_map__fd(s->maps.mrc_cfg),
		.planes = bpf_map__fd(s->maps.mrc_planes),
		.plane_of = bpf_map__fd(s->maps.mrc_plane_of),
		.qps = bpf_map__fd(s->maps.mrc_qps),
		.qp_owner = bpf_map__fd(s->maps.mrc_qp_owner),
		.qp_evs = bpf_map__fd(s->maps.mrc_qp_evs),
		.ev_stats = bpf_map__fd(s->maps.mrc_ev_stats),
		.ev_profiles = bpf_map__fd(s->maps.mrc_ev_profiles),
		.cc_profiles = bpf_map__fd(s->maps.mrc_cc_profiles),
		.qp_stats = bpf_map__fd(s->maps.mrc_qp_stats),
		.drops = bpf_map__fd(s->maps.mrc_drops),
		.rx = bpf_map__fd(s->maps.mrc_rx),
		.tx = bpf_map__fd(s->maps.mrc_tx),
		.ctl_stats = bpf_map__fd(s->maps.mrc_ctl_stats),
		.cc = bpf_map__fd(s->maps.mrc_cc),
		.cc_view = bpf_map__fd(s->maps.mrc_cc_view),
	};
	env->ev_tables = a->ev_tables;
	memset(stream, 0, sizeof(*stream));
	env->stream = stream;
	if (a->pe) {
		pe_status(a->pe, probing);
		env->probing = probing;
		env->events = pe_log(a->pe);
	}
}

static void reply_text(struct client *cl, int status, const char *msg)
{
	char *err = strdup(msg);

	agent_reply_init(&cl->reply, status, NULL, 0, err, err ? strlen(err) : 0);
	cl->replying = true;
}

static int n_streams(const struct agent *a)
{
	int n = 0;

	for (int i = 0; i < a->n_clients; i++)
		n += a->clients[i].mode != CLIENT_COMMAND;
	return n;
}

/*
 * Turn the client into the stream the command asked for. False (with the
 * client answered) when it cannot be started.
 */
static bool start_stream(const struct agent *a, struct client *cl,
			 const struct agent_stream *st)
{
	const struct ev_log *log = pe_log(a->pe);
	char err[256], msg[320];

	if (n_streams(a) >= AGENT_MAX_STREAMS) {
		snprintf(msg, sizeof(msg), "mrcctl: %d event and probe commands are "
			 "running already: try again later\n", AGENT_MAX_STREAMS);
		reply_text(cl, AGENT_EXIT_FAIL, msg);
		return false;
	}
	if (st->kind == AGENT_STREAM_PROBE) {
		cl->job = pe_job_start(a->pe, &st->probe, err, sizeof(err));
		if (!cl->job) {
			snprintf(msg, sizeof(msg), "mrcctl probe: %s\n", err);
			reply_text(cl, AGENT_EXIT_FAIL, msg);
			return false;
		}
		cl->mode = CLIENT_PROBE;
	} else {
		cl->mode = CLIENT_EVENTS;
		cl->next_seq = st->backlog ? ev_log_first(log) : ev_log_end(log);
		cl->left = st->count;
		cl->limited = st->count != 0;
	}
	cl->json = st->json;
	cl->last_sent_ms = now_ms();
	return true;
}

/* Run the command in memory, then hand the text to the reply. */
static void run_command(const struct agent *a, struct client *cl, int argc,
			char **argv)
{
	char *out = NULL, *err = NULL;
	size_t out_len = 0, err_len = 0;
	struct agent_stream stream;
	struct pe_status probing;
	struct agent_cmd_env env;
	FILE *fo, *fe;
	bool done;
	int status;

	fo = open_memstream(&out, &out_len);
	fe = open_memstream(&err, &err_len);
	if (!fo || !fe) {
		if (fo)
			fclose(fo);
		if (fe)
			fclose(fe);
		free(out);
		free(err);
		reply_text(cl, AGENT_EXIT_FAIL, "mrcd: out of memory\n");
		return;
	}
	command_env(a, &env, &probing, &stream);
	status = agent_cmd_run(&env, argc, argv, fo, fe, &done);
	fclose(fo);
	fclose(fe);
	if (!status && stream.kind != AGENT_STREAM_NONE && a->pe) {
		free(out);
		free(err);
		start_stream(a, cl, &stream);
		return;
	}
	agent_reply_init(&cl->reply, status, out, out_len, err, err_len);
	cl->replying = true;
}

static bool peer_allowed(int fd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	return !getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) &&
	       (cr.uid == 0 || cr.uid == geteuid());
}

/* 0 to go on (maybe still waiting), -1 to drop the client. */
static int read_request(const struct agent *a, struct client *cl)
{
	static char buf[AGENT_REQ_MAX + 1];
	char *argv[AGENT_ARGS_MAX + 1], err[256], msg[300];
	ssize_t n;
	int argc;

	n = recv(cl->fd, buf, AGENT_REQ_MAX, MSG_DONTWAIT | MSG_TRUNC);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	if (!peer_allowed(cl->fd)) {
		reply_text(cl, AGENT_EXIT_FAIL, "mrcctl: permission denied: mrcd "
			   "takes commands from root only\n");
	} else if (n > AGENT_REQ_MAX) {
		reply_text(cl, AGENT_EXIT_USAGE, "mrcctl: the command line is too long\n");
	} else if (agent_req_parse(buf, (size_t)n, &argc, argv, err, sizeof(err))) {
		snprintf(msg, sizeof(msg), "mrcctl: %s\n", err);
		reply_text(cl, AGENT_EXIT_FAIL, msg);
	} else {
		run_command(a, cl, argc, argv);
	}
	cl->deadline_ms = now_ms() + AGENT_TIMEOUT_MS;
	return 0;
}

/* 0 to go on, 1 when answered in full, -1 to drop the client. */
static int client_step(const struct agent *a, struct client *cl)
{
	int rc;

	if (!cl->replying) {
		if (read_request(a, cl))
			return -1;
		if (!cl->replying)
			return 0;	/* the request is not there yet */
	}
	rc = agent_reply_send(cl->fd, &cl->reply);
	return rc > 0 ? 1 : rc < 0 ? -1 : 0;
}

static void client_close(struct agent *a, int i)
{
	struct client *cl = &a->clients[i];

	if (cl->job)
		pe_job_end(a->pe, cl->job);
	close(cl->fd);
	agent_reply_free(&cl->reply);
	a->clients[i] = a->clients[--a->n_clients];
}

/*
 * With every slot taken, a newcomer replaces the client that has waited
 * longest without sending its request: idle connections cannot lock
 * mrcctl out. False when every client is being answered.
 */
static bool make_room(struct agent *a)
{
	int i, oldest = -1;

	if (a->n_clients < AGENT_MAX_CLIENTS)
		return true;
	for (i = 0; i < a->n_clients; i++)
		if (!a->clients[i].replying && a->clients[i].mode == CLIENT_COMMAND &&
		    (oldest < 0 || a->clients[i].deadline_ms < a->clients[oldest].deadline_ms))
			oldest = i;
	if (oldest < 0)
		return false;
	client_close(a, oldest);
	return true;
}

static void accept_clients(struct agent *a)
{
	struct client *cl;
	int fd;

	while (make_room(a)) {
		fd = accept4(a->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
				pr_err("accept: %s\n", strerror(errno));
			return;
		}
		cl = &a->clients[a->n_clients++];
		memset(cl, 0, sizeof(*cl));
		cl->fd = fd;
		cl->deadline_ms = now_ms() + AGENT_TIMEOUT_MS;
	}
}

static bool can_accept(const struct agent *a)
{
	int i;

	if (a->n_clients < AGENT_MAX_CLIENTS)
		return true;
	for (i = 0; i < a->n_clients; i++)
		if (!a->clients[i].replying && a->clients[i].mode == CLIENT_COMMAND)
			return true;
	return false;
}

/* ---- streams ---------------------------------------------------------- */

/* The stream is over: answer with its exit status, like any command. */
static void stream_finish(const struct agent *a, struct client *cl, int status)
{
	if (cl->job) {
		pe_job_end(a->pe, cl->job);
		cl->job = NULL;
	}
	agent_reply_init(&cl->reply, status, NULL, 0, NULL, 0);
	cl->replying = true;
	cl->deadline_ms = now_ms() + AGENT_TIMEOUT_MS;
}

/*
 * Events from next_seq on, as many lines to a message as fit. A reader
 * that fell further behind than the log keeps has missed some: they are
 * counted (every later event's `dropped` says so) and it goes on with the
 * oldest kept. 1 when all is sent, 0 when the socket is full, -1 on error.
 */
static int events_flush(const struct agent *a, struct client *cl)
{
	static char buf[AGENT_MSG_TEXT_MAX];
	struct ev_log *log = pe_log(a->pe);
	uint64_t seq, first = ev_log_first(log), end = ev_log_end(log), k;
	size_t len, n;
	int rc;

	if (cl->next_seq < first) {
		pe_count(a->pe, PE_EVENTS_SLOW_READER, first - cl->next_seq);
		cl->next_seq = first;
	}
	while (cl->next_seq < end && (!cl->limited || cl->left)) {
		for (len = 0, k = 0, seq = cl->next_seq;
		     seq < end && (!cl->limited || k < cl->left); seq++, k++) {
			n = ev_record_format(ev_log_get(log, seq), log->start_ns, 0,
					     cl->json, buf + len, sizeof(buf) - len);
			if (!n)
				break;
			len += n;
		}
		rc = agent_send_msg(cl->fd, AGENT_MSG_OUT, buf, len, 0);
		if (rc <= 0)
			return rc < 0 ? -1 : 0;
		cl->next_seq = seq;
		cl->left -= cl->limited ? k : 0;
		cl->last_sent_ms = now_ms();
	}
	if (cl->limited && !cl->left)
		stream_finish(a, cl, 0);
	return 1;
}

/* The probe lines produced so far; the exit status once all probes ended. */
static int probe_flush(const struct agent *a, struct client *cl)
{
	const char *text;
	size_t len, n;
	int rc, status;

	text = pe_job_output(cl->job, cl->job_sent, &len);
	while (len) {
		n = len < AGENT_MSG_TEXT_MAX ? len : AGENT_MSG_TEXT_MAX;
		rc = agent_send_msg(cl->fd, AGENT_MSG_OUT, text, n, 0);
		if (rc <= 0)
			return rc < 0 ? -1 : 0;
		cl->job_sent += n;
		text += n;
		len -= n;
		cl->last_sent_ms = now_ms();
	}
	if (pe_job_done(cl->job, &status))
		stream_finish(a, cl, status);
	return 1;
}

/* An empty stdout message now and then: mrcctl knows we are alive. */
static int heartbeat(struct client *cl)
{
	int rc;

	if (now_ms() - cl->last_sent_ms < AGENT_HEARTBEAT_MS)
		return 1;
	rc = agent_send_msg(cl->fd, AGENT_MSG_OUT, "", 0, 0);
	if (rc > 0)
		cl->last_sent_ms = now_ms();
	return rc < 0 ? -1 : rc;
}

/* mrcctl went away: its end of the connection is closed. */
static bool stream_hung_up(struct client *cl, short revents)
{
	char c;

	if (revents & (POLLHUP | POLLERR))
		return true;
	return (revents & POLLIN) && recv(cl->fd, &c, 1, MSG_DONTWAIT) == 0;
}

/* One round of a stream: 0 to go on (maybe answered by now), -1 to drop. */
static int stream_step(const struct agent *a, struct client *cl, short revents)
{
	int rc;

	if (stream_hung_up(cl, revents))
		return -1;
	if (revents & POLLOUT)
		cl->blocked = false;
	if (cl->blocked) {
		/* A reader that takes nothing for this long is gone for us. */
		return now_ms() - cl->blocked_since_ms > AGENT_TIMEOUT_MS ? -1 : 0;
	}
	rc = cl->mode == CLIENT_EVENTS ? events_flush(a, cl) : probe_flush(a, cl);
	if (rc > 0 && !cl->replying)
		rc = heartbeat(cl);
	if (rc < 0)
		return -1;
	if (!rc) {
		cl->blocked = true;
		cl->blocked_since_ms = now_ms();
	}
	return 0;
}

/*
 * mrcd stops or restarts: tell each stream why it ends (best effort: a
 * full socket just sees the connection close).
 */
static void end_streams(struct agent *a, const char *why)
{
	char msg[128];

	for (int i = 0; i < a->n_clients; i++) {
		struct client *cl = &a->clients[i];

		if (cl->mode == CLIENT_COMMAND || cl->replying)
			continue;
		snprintf(msg, sizeof(msg), "mrcctl %s: %s\n",
			 cl->mode == CLIENT_EVENTS ? "events" : "probe", why);
		agent_send_msg(cl->fd, AGENT_MSG_ERR, msg, strlen(msg), 0);
		agent_send_msg(cl->fd, AGENT_MSG_EXIT, NULL, 0,
			       cl->mode == CLIENT_EVENTS ? 0 : AGENT_EXIT_FAIL);
	}
}

/* The signal signalfd has for us, or 0. */
static int read_signal(const struct agent *a)
{
	struct signalfd_siginfo si;

	if (read(a->sig_fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return 0;
	return (int)si.ssi_signo;
}

static bool is_stream(const struct client *cl)
{
	return cl->mode != CLIENT_COMMAND && !cl->replying;
}

static short client_events(const struct client *cl)
{
	if (is_stream(cl))
		return POLLIN | (cl->blocked ? POLLOUT : 0);
	return cl->replying ? POLLOUT : POLLIN;
}

/* 0 to keep the client, anything else to close it. */
static int serve_client(struct agent *a, struct client *cl, short revents)
{
	int rc = 0;

	if (is_stream(cl))
		return stream_step(a, cl, revents);
	if (revents)
		rc = client_step(a, cl);
	if (!rc && is_stream(cl))
		return stream_step(a, cl, 0);	/* just started: first output */
	if (!rc && now_ms() >= cl->deadline_ms)
		rc = -1;	/* too slow: mrcctl gives up too */
	return rc;
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
	struct pollfd pfd[2 + AGENT_MAX_CLIENTS + PE_MAX_FDS];
	int i, n, n_pe, timeout, sig, rc;
	long long now, left;

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
		n_pe = a->pe ? pe_pollfds(a->pe, pfd + n) : 0;
		if (poll(pfd, (nfds_t)(n + n_pe), timeout) < 0 && errno != EINTR) {
			pr_err("poll: %s\n", strerror(errno));
			return SIGTERM;
		}
		if (pfd[0].revents & POLLIN) {
			sig = read_signal(a);
			if (sig)
				return sig;
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
	}
}

/* ---- restart in place ------------------------------------------------- */

/*
 * The binary to run again: normally /proc/self/exe. When the file we
 * were started from has been replaced (a rebuild or an upgrade), the new
 * one at that path, which is what a restart is usually for.
 */
static const char *restart_binary(char *buf, size_t len)
{
	static const char deleted[] = " (deleted)";
	size_t dl = sizeof(deleted) - 1;
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	if (n > (ssize_t)dl) {
		buf[n] = '\0';
		if (!strcmp(buf + n - dl, deleted)) {
			buf[n - dl] = '\0';
			if (!access(buf, X_OK))
				return buf;
		}
	}
	return "/proc/self/exe";
}

static void set_cloexec(int fd, bool on)
{
	if (fd >= 0)
		fcntl(fd, F_SETFD, on ? FD_CLOEXEC : 0);
}

/*
 * SIGHUP: exec ourselves with the same arguments plus the lock and the
 * listening socket, so the pid, the lock and mrcctl's socket stay. What
 * is attached and pinned stays too; the new image adopts it. Returns only
 * if the exec failed, and then the agent goes on as it was.
 */
static void restart(struct agent *a)
{
	char fds[64], exe[PATH_MAX], **argv;
	const char *path;
	int i, n = 0;

	argv = calloc((size_t)a->argc + 2, sizeof(*argv));
	if (!argv) {
		pr_err("restart: out of memory; going on as we are\n");
		return;
	}
	for (i = 0; i < a->argc; i++)
		if (strncmp(a->argv[i], ADOPT_OPT, strlen(ADOPT_OPT)))
			argv[n++] = a->argv[i];
	snprintf(fds, sizeof(fds), ADOPT_OPT "%d,%d", a->lock_fd, a->listen_fd);
	argv[n++] = fds;
	/* Clients in progress see the connection close and may try again. */
	end_streams(a, "mrcd restarts: the stream ends");
	while (a->n_clients)
		client_close(a, a->n_clients - 1);
	path = restart_binary(exe, sizeof(exe));
	pr_info("SIGHUP: restarting %s in place\n", path);
	set_cloexec(a->lock_fd, false);
	set_cloexec(a->listen_fd, false);
	fflush(stdout);
	fflush(stderr);
	execv(path, argv);
	pr_err("restart: cannot run %s: %s; going on as we are\n", path, strerror(errno));
	set_cloexec(a->lock_fd, true);
	set_cloexec(a->listen_fd, true);
	free(argv);
}

/* ---- --detach --------------------------------------------------------- */

/* The pid the running agent wrote into its lock file; 0 if unknown. */
static pid_t lock_holder(const struct agent *a)
{
	char buf[32] = "";
	ssize_t n;
	int fd = open(a->paths.lock_path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return (pid_t)atoi(buf);
}

/* SIGTERM to the running agent, then wait until its lock is ours. */
static int stop_running_agent(struct agent *a)
{
	struct timespec pause = { .tv_nsec = 50 * 1000 * 1000 };
	long long deadline = now_ms() + DETACH_WAIT_MS;
	pid_t pid = lock_holder(a);
	int rc;

	if (pid <= 0) {
		pr_err("an mrcd holds %s but did not write its pid there\n",
		       a->paths.lock_path);
		return -1;
	}
	if (kill(pid, SIGTERM)) {
		pr_err("cannot stop mrcd (pid %d): %s\n", (int)pid, strerror(errno));
		return -1;
	}
	pr_info("stopping mrcd (pid %d) for %s\n", (int)pid, a->paths.pin_dir);
	while (now_ms() < deadline) {
		rc = try_lock(a, true);
		if (rc != -EWOULDBLOCK)
			return rc ? -1 : 0;
		nanosleep(&pause, NULL);
	}
	pr_err("mrcd (pid %d) did not stop within %d s\n", (int)pid,
	       DETACH_WAIT_MS / 1000);
	return -1;
}

/*
 * What a dead agent left behind: its programs on the planes its table
 * lists, and its pins. The pin names come from the object itself.
 */
static int remove_leftovers(struct agent *a)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = a->paths.pin_dir);
	struct mrc_plane plane;
	char path[PATH_MAX];
	__u32 key;
	int fd, rc = 0;

	if (!pin_path(path, sizeof(path), a, "mrc_planes") &&
	    (fd = bpf_obj_get(path)) >= 0) {
		for (key = 0; key < MRC_MAX_PLANES_ABI; key++)
			if (!bpf_map_lookup_elem(fd, &key, &plane) && plane.ifindex &&
			    remove_plane_leftovers(&plane))
				pr_info("%.*s: detached\n", (int)sizeof(plane.name),
					plane.name);
		close(fd);
	}
	a->skel = mrc__open_opts(&opts);
	if (!a->skel) {
		pr_err("opening the BPF object failed: %s\n", strerror(errno));
		return -1;
	}
	unpin_all(a);
	if (found_our_pins(a)) {
		pr_err("some pins in %s could not be removed\n", a->paths.pin_dir);
		rc = -1;
	}
	mrc__destroy(a->skel);
	a->skel = NULL;
	if (rmdir(a->paths.pin_dir) && errno != ENOENT && errno != ENOTEMPTY)
		pr_err("cannot remove %s: %s\n", a->paths.pin_dir, strerror(errno));
	unlink(a->paths.sock_path);
	return rc;
}

/*
 * mrcd --detach: a running agent is asked to stop (its clean stop removes
 * everything); what a dead one left is removed here. The lock is held
 * throughout, so no agent starts in the middle.
 */
static int run_detach(struct agent *a)
{
	int rc;

	if (resolve_paths(a) || check_bpffs(a))
		return EXIT_RUNTIME;
	rc = try_lock(a, true);
	if (rc == -EWOULDBLOCK)
		rc = stop_running_agent(a);
	if (rc)
		return EXIT_RUNTIME;
	rc = remove_leftovers(a);
	release_lock(a);
	return rc ? EXIT_RUNTIME : 0;
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
			   .argc = argc, .argv = argv };
	bool help = false, restarted;
	int ready_fd = -1, rc, sig;
	sigset_t stop;

	rc = parse_args(&a, argc, argv, &help);
	if (help) {
		usage(stdout);
		return 0;
	}
	if (rc)
		return rc;
	libbpf_set_print(print_libbpf);
	libxdp_set_print(print_libxdp);
	signal(SIGPIPE, SIG_IGN);
	if (a.opt.detach)
		return run_detach(&a);

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
