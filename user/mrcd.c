// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcd: the MRC host agent. It owns the fast path of one host:
 *
 *   - loads bpf/mrc.bpf.c and pins its maps in the pin folder (default
 *     /sys/fs/bpf/mrc), where libmrc finds them;
 *   - writes the global configuration (UDP port) and the plane table;
 *   - attaches mrc_xdp_rx to every plane interface (through libxdp's
 *     dispatcher when it can, so other XDP programs keep working) and
 *     mrc_tc_tx to their clsact egress hook;
 *   - waits for SIGTERM/SIGINT/SIGHUP and then undoes all of it.
 *
 * Whatever a run leaves in the kernel (pins, XDP and TC attachments all
 * outlive the process) is removed by the next run before it loads, so
 * state of a crashed agent never leaks into a new one.
 *
 * usage: mrcd --planes IF[,IF...] [--daemon] [--pin-dir DIR] [--port N]
 *             [--pidfile FILE] [--log FILE] [--xdp-mode native|skb|auto] [-v]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "mrc/abi.h"
#include "lib/parse.h"
#include "mrc.skel.h"

#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define PIN_DIR_DEFAULT	"/sys/fs/bpf/mrc"
#define LOCK_DIR	"/run/mrc"
#define PROG_PIN_XDP	"prog_xdp"
#define PROG_PIN_TC	"prog_tc"
#define XDP_SECTION	"xdp"

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
	enum xdp_choice xdp_choice;
	bool daemon;
};

struct agent {
	struct options opt;
	struct plane planes[MRC_MAX_PLANES_ABI];
	int n_planes;
	char pin_dir[PATH_MAX];
	char pin_parent[PATH_MAX];	/* must be on a bpffs */
	char lock_path[PATH_MAX];
	int lock_fd;
	bool pin_dir_ours;		/* locked and created/checked by us */
	bool wrote_pidfile;
	struct mrc *skel;
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
"  --planes IF,...      plane interfaces, plane 1 first (at most %d)\n"
"  --daemon             run in the background; returns once attached\n"
"  --pin-dir DIR        where the maps are pinned (default %s)\n"
"  --port PORT          MRC UDP port (default %d)\n"
"  --pidfile FILE       write the agent's pid there\n"
"  --log FILE           with --daemon: keep messages in FILE\n"
"  --xdp-mode MODE      native, skb or auto (default auto)\n"
"  -v, --verbose        say how each plane was attached\n",
		MRC_MAX_PLANES_ABI, PIN_DIR_DEFAULT, MRC_UDP_PORT_DEFAULT);
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

/* ---- arguments -------------------------------------------------------- */

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
		{ "verbose",  no_argument,       NULL, 'v' },
		{ "help",     no_argument,       NULL, 'h' },
		{}
	};
	const char *planes = NULL;
	uint64_t port;
	int c;

	a->opt.pin_dir_arg = PIN_DIR_DEFAULT;
	a->opt.port = MRC_UDP_PORT_DEFAULT;
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

/*
 * Make the pin folder absolute and find its parent, which must exist and
 * be a bpffs: pins anywhere else fail, and we mount nothing ourselves.
 */
static int resolve_pin_dir(struct agent *a)
{
	char buf[PATH_MAX], *slash, *base;
	const char *parent;
	size_t len;

	snprintf(buf, sizeof(buf), "%s", a->opt.pin_dir_arg);
	len = strlen(buf);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	slash = strrchr(buf, '/');
	base = slash ? slash + 1 : buf;
	if (!*base || !strcmp(base, ".") || !strcmp(base, "..")) {
		pr_err("--pin-dir: '%s' does not name a folder to create\n",
		       a->opt.pin_dir_arg);
		return -EINVAL;
	}
	if (slash) {
		*slash = '\0';
		parent = slash == buf ? "/" : buf;
	} else {
		parent = ".";
	}
	if (!realpath(parent, a->pin_parent)) {
		pr_err("--pin-dir: %s: %s\n", parent, strerror(errno));
		return -errno;
	}
	if (snprintf(a->pin_dir, sizeof(a->pin_dir), "%s/%s",
		     strcmp(a->pin_parent, "/") ? a->pin_parent : "", base) >=
	    (int)sizeof(a->pin_dir)) {
		pr_err("--pin-dir: path too long\n");
		return -ENAMETOOLONG;
	}
	return 0;
}

static int check_bpffs(const struct agent *a)
{
	struct statfs fs;

	if (statfs(a->pin_parent, &fs)) {
		pr_err("%s: %s\n", a->pin_parent, strerror(errno));
		return -errno;
	}
	if ((unsigned long)fs.f_type != BPF_FS_MAGIC) {
		pr_err("%s is not a BPF filesystem, so %s cannot hold pins "
		       "(mount one: mount -t bpf bpf /sys/fs/bpf)\n",
		       a->pin_parent, a->pin_dir);
		return -ENOTSUP;
	}
	return 0;
}

static __u64 fnv1a(const char *s)
{
	__u64 h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/*
 * One agent per pin folder. The lock cannot live in the bpffs (it holds
 * only BPF objects), so it goes to /run, named after the bpffs instance
 * (its device) and the folder: lab hosts each have their own bpffs at the
 * same path, and each may run an agent.
 */
static int lock_path_for(struct agent *a)
{
	struct stat st;

	if (stat(a->pin_parent, &st)) {
		pr_err("%s: %s\n", a->pin_parent, strerror(errno));
		return -errno;
	}
	snprintf(a->lock_path, sizeof(a->lock_path), "%s/mrcd-%x.%x-%016llx.lock",
		 LOCK_DIR, major(st.st_dev), minor(st.st_dev),
		 (unsigned long long)fnv1a(a->pin_dir));
	return 0;
}

static bool same_file(int fd, const char *path)
{
	struct stat held, now;

	return !fstat(fd, &held) && !stat(path, &now) &&
	       held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

static int take_lock(struct agent *a)
{
	int fd;

	if (lock_path_for(a))
		return -1;
	if (mkdir(LOCK_DIR, 0755) && errno != EEXIST) {
		pr_err("cannot create %s: %s\n", LOCK_DIR, strerror(errno));
		return -1;
	}
	for (;;) {
		fd = open(a->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
		if (fd < 0) {
			pr_err("cannot open lock %s: %s\n", a->lock_path, strerror(errno));
			return -1;
		}
		if (flock(fd, LOCK_EX | LOCK_NB)) {
			if (errno == EWOULDBLOCK)
				pr_err("mrcd is already running for %s (lock %s)\n",
				       a->pin_dir, a->lock_path);
			else
				pr_err("lock %s: %s\n", a->lock_path, strerror(errno));
			close(fd);
			return -1;
		}
		/*
		 * The holder unlinks the file as it exits; if we locked the
		 * unlinked one, the next agent would lock a new file and run
		 * next to us. Only a lock on the file at the path counts.
		 */
		if (same_file(fd, a->lock_path))
			break;
		close(fd);
	}
	if (!ftruncate(fd, 0))
		dprintf(fd, "%d\n", (int)getpid());
	a->lock_fd = fd;
	return 0;
}

static void release_lock(struct agent *a)
{
	if (a->lock_fd < 0)
		return;
	unlink(a->lock_path);
	close(a->lock_fd);
	a->lock_fd = -1;
}

static int make_pin_dir(struct agent *a)
{
	struct stat st;

	if (!mkdir(a->pin_dir, 0700) ||
	    (errno == EEXIST && !stat(a->pin_dir, &st) && S_ISDIR(st.st_mode))) {
		a->pin_dir_ours = true;
		return 0;
	}
	pr_err("cannot create pin folder %s: %s\n", a->pin_dir,
	       errno == EEXIST ? "exists and is not a folder" : strerror(errno));
	return -1;
}

static int pin_path(char *buf, size_t len, const struct agent *a,
		    const char *name)
{
	int n = snprintf(buf, len, "%s/%s", a->pin_dir, name);

	if (n < 0 || (size_t)n >= len) {
		pr_err("pin path too long: %s/%s\n", a->pin_dir, name);
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

/* ---- loading ---------------------------------------------------------- */

static int write_config(const struct agent *a)
{
	struct mrc_global_cfg cfg = { .udp_port = a->opt.port };
	struct mrc_plane plane;
	__u32 key = 0;
	int i, err;

	err = bpf_map__update_elem(a->skel->maps.mrc_cfg, &key, sizeof(key),
				   &cfg, sizeof(cfg), BPF_ANY);
	for (i = 0; !err && i < a->n_planes; i++) {
		memset(&plane, 0, sizeof(plane));
		plane.ifindex = (__u32)a->planes[i].ifindex;
		memcpy(plane.name, a->planes[i].name, sizeof(plane.name));
		key = (__u32)i;		/* plane i + 1 */
		err = bpf_map__update_elem(a->skel->maps.mrc_planes, &key,
					   sizeof(key), &plane, sizeof(plane),
					   BPF_ANY);
	}
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
	err = bpf_program__pin(prog, path);
	if (err)
		pr_err("pin %s: %s\n", path, strerror(-err));
	return err;
}

static int load_fast_path(struct agent *a)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = a->pin_dir);
	int err;

	a->skel = mrc__open_opts(&opts);
	if (!a->skel) {
		pr_err("opening the BPF object failed: %s\n", strerror(errno));
		return -1;
	}
	/* Stale pins would be reused by libbpf: old state in a new run. */
	unpin_all(a);
	err = mrc__load(a->skel);
	if (err) {
		pr_err("loading the BPF programs failed: %s%s\n", strerror(-err),
		       verbose ? "" : " (-v shows libbpf's messages)");
		return err;
	}
	err = write_config(a);
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
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = a->pin_dir,
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

/*
 * Only our filter goes; the clsact qdisc stays, since other filters may
 * hang off it (and an empty clsact costs nothing).
 */
static void detach_tc(struct plane *p)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = p->ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = MRCD_TC_HANDLE,
		    .priority = MRCD_TC_PRIO);
	int err;

	if (!p->tc_attached)
		return;
	p->tc_attached = false;
	if (!plane_exists(p))
		return;
	err = bpf_tc_detach(&hook, &opts);
	if (err && err != -ENOENT)
		pr_err("%s: detaching TC: %s\n", p->name, strerror(-err));
}

/* ---- life cycle ------------------------------------------------------- */

static int attach_planes(struct agent *a)
{
	struct plane *p;
	int i;

	for (i = 0; i < a->n_planes; i++) {
		p = &a->planes[i];
		remove_stale_xdp(p);
		if (attach_xdp(a, p) || attach_tc(a, p))
			return -1;
	}
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

/* Undo everything start() did, in reverse; safe after a partial start. */
static void teardown(struct agent *a)
{
	detach_planes(a);
	if (a->skel) {
		unpin_all(a);
		mrc__destroy(a->skel);
		a->skel = NULL;
	}
	/* A crashed agent's folder goes too; one with other things stays. */
	if (a->pin_dir_ours && rmdir(a->pin_dir) && errno != ENOTEMPTY &&
	    errno != ENOENT)
		pr_err("cannot remove %s: %s\n", a->pin_dir, strerror(errno));
	if (a->wrote_pidfile)
		unlink(a->opt.pidfile);
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

static int start(struct agent *a)
{
	if (resolve_pin_dir(a) || check_bpffs(a) || take_lock(a) ||
	    make_pin_dir(a) || load_fast_path(a) || attach_planes(a) ||
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
	fprintf(stderr, " port %u pins %s\n", a->opt.port, a->pin_dir);
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

static void wait_for_stop_signal(const sigset_t *stop)
{
	siginfo_t info;
	int sig;

	do
		sig = sigwaitinfo(stop, &info);
	while (sig < 0 && errno == EINTR);
	pr_info("%s: detaching\n", sig > 0 ? strsignal(sig) : "sigwaitinfo failed");
}

int main(int argc, char **argv)
{
	struct agent a = { .lock_fd = -1 };
	bool help = false;
	int ready_fd = -1, rc;
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

	if (a.opt.daemon && daemonize(&ready_fd))
		return EXIT_RUNTIME;
	/*
	 * Blocked from here on, so a stop request that comes while we attach
	 * waits for sigwaitinfo() and still gets a clean teardown.
	 */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (start(&a)) {
		teardown(&a);
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
	wait_for_stop_signal(&stop);
	teardown(&a);
	return 0;
}
