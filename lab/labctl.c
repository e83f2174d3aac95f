// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-labctl: the BPF half of tools/mrc-lab. The shell script builds the
 * namespaces and veth links; this program loads the switch emulation
 * (lab/lab_fabric.bpf.c) once per lab, attaches it to every fabric port in
 * its namespace, and reads or writes the fault configuration and counters
 * through the maps pinned in the lab's folder.
 *
 * The port table (one line per attachment point) is written by mrc-lab and
 * is the only description of the topology this program needs:
 *   port_id link_id link_name netns dev hook flags spine
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <net/if.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lab_abi.h"
#include "common/parse.h"
#include "lab_fabric.skel.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

/* Our filters' identity on a clsact hook, so we only ever touch our own. */
#define LAB_TC_HANDLE	0x4d52
#define LAB_TC_PRIO	0x4d52

struct port_row {
	unsigned int port_id, link_id, flags;
	char link[32], netns[64], dev[IFNAMSIZ], hook[16], spine[32];
};

/* The one logger of mrc-labctl: every message starts with its name. */
__attribute__((format(printf, 1, 2)))
static void log_err(const char *fmt, ...)
{
	va_list ap;

	fputs("mrc-labctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: mrc-labctl COMMAND PINDIR ...\n"
"  load   PINDIR [--mrc-port N]           load the switch emulation, pin it\n"
"  attach PINDIR PORTS                    attach to every port in the table\n"
"  set    PINDIR LINK_ID KEY=VALUE...     configure a link; keys:\n"
"         rate=RATE|0 drop=PCT blackhole=0|1 ecn=BYTES|0 trim=BYTES|0 queue=BYTES\n"
"  show   PINDIR LINK_ID                  print a link's configuration\n"
"  stats  PINDIR PORTS [--json] [--reset] counters per link and spine\n"
"  parse-rate RATE                        print RATE in bit/s\n"
"(internal helper of mrc-lab; see mrc-lab --help)\n");
}

static int pin_path(char *buf, size_t len, const char *dir, const char *name)
{
	int n = snprintf(buf, len, "%s/%s", dir, name);

	if (n < 0 || (size_t)n >= len) {
		log_err("pin path too long: %s/%s\n", dir, name);
		return -ENAMETOOLONG;
	}
	return 0;
}

static int open_pinned(const char *dir, const char *name)
{
	char path[512];
	int fd;

	if (pin_path(path, sizeof(path), dir, name))
		return -1;
	fd = bpf_obj_get(path);
	if (fd < 0)
		log_err("cannot open %s: %s (is the lab up?)\n",
			path, strerror(errno));
	return fd;
}

/* ---- load ---------------------------------------------------------------- */

static int pin_all(struct lab_fabric *skel, const char *dir)
{
	struct bpf_map *map;
	char path[512];
	int err;

	bpf_object__for_each_map(map, skel->obj) {
		if (pin_path(path, sizeof(path), dir, bpf_map__name(map)))
			return -1;
		err = bpf_map__pin(map, path);
		if (err) {
			log_err("pin %s: %s\n", path, strerror(-err));
			return err;
		}
	}
	if (pin_path(path, sizeof(path), dir, "prog_ingress") ||
	    bpf_program__pin(skel->progs.lab_port_ingress, path))
		return -1;
	if (pin_path(path, sizeof(path), dir, "prog_egress") ||
	    bpf_program__pin(skel->progs.lab_port_egress, path))
		return -1;
	return 0;
}

static int cmd_load(int argc, char **argv)
{
	struct lab_global_cfg global = {
		.mrc_udp_port = MRC_UDP_PORT_DEFAULT,
		.dscp_trimmed = MRC_DSCP_TRIMMED,
		.dscp_trimmed_lasthop = MRC_DSCP_TRIMMED_LASTHOP,
	};
	struct lab_fabric *skel;
	__u32 zero = 0;
	uint64_t port;
	int err;

	if (argc == 3 && !strcmp(argv[1], "--mrc-port")) {
		if (parse_u64(argv[2], 65535, &port) || !port) {
			log_err("--mrc-port: '%s' is not a port\n", argv[2]);
			return 2;
		}
		global.mrc_udp_port = (__u16)port;
	} else if (argc != 1) {
		usage(stderr);
		return 2;
	}
	skel = lab_fabric__open_and_load();
	if (!skel) {
		log_err("loading the lab BPF program failed: %s\n",
			strerror(errno));
		return 1;
	}
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.lab_global), &zero,
				  &global, BPF_ANY);
	if (!err)
		err = pin_all(skel, argv[0]);
	lab_fabric__destroy(skel);
	return err ? 1 : 0;
}

/* ---- port table ------------------------------------------------------------ */

static int read_port(FILE *f, struct port_row *r)
{
	char line[512];

	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%u %u %31s %63s %15s %15s %u %31s", &r->port_id,
			   &r->link_id, r->link, r->netns, r->dev, r->hook,
			   &r->flags, r->spine) != 8 ||
		    r->port_id >= LAB_MAX_PORTS || r->link_id >= LAB_MAX_LINKS) {
			log_err("bad port table line: %s", line);
			return -EINVAL;
		}
		return 1;
	}
	return 0;
}

static FILE *open_ports(const char *path)
{
	FILE *f = fopen(path, "r");

	if (!f)
		log_err("cannot read port table %s: %s\n",
			path, strerror(errno));
	return f;
}

static libbpf_print_fn_t libbpf_print_default;

/* ---- attach ---------------------------------------------------------------- */

static int enter_netns(const char *name)
{
	char path[256];
	int fd, err;

	snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		log_err("no namespace %s: %s\n", name, strerror(errno));
		return -1;
	}
	err = setns(fd, CLONE_NEWNET);
	if (err)
		log_err("setns %s: %s\n", name, strerror(errno));
	close(fd);
	return err;
}

/* The kernel's name for the current network namespace, as BPF sees it. */
static int current_netns_cookie(__u64 *cookie)
{
	socklen_t len = sizeof(*cookie);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int err;

	if (fd < 0)
		return -errno;
	err = getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len);
	err = err ? -errno : 0;
	close(fd);
	return err;
}

static int attach_port(const struct port_row *r, int prog_in, int prog_eg,
		       int ports_fd)
{
	int egress = !strcmp(r->hook, "egress");
	struct lab_port_key key = { .hook = egress ? LAB_HOOK_EGRESS : LAB_HOOK_INGRESS };
	struct lab_port val = { .port_id = r->port_id, .link_id = r->link_id,
				.flags = r->flags };
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook,
			    .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, opts, .handle = LAB_TC_HANDLE,
			    .priority = LAB_TC_PRIO,
			    .prog_fd = egress ? prog_eg : prog_in);
	int err;

	if (enter_netns(r->netns))
		return -1;
	hook.ifindex = (int)if_nametoindex(r->dev);
	if (!hook.ifindex) {
		log_err("no device %s in %s\n", r->dev, r->netns);
		return -1;
	}
	/* The second hook on a device finds clsact there already; libbpf
	 * would print the kernel's complaint about that, which is expected. */
	libbpf_set_print(NULL);
	err = bpf_tc_hook_create(&hook);
	libbpf_set_print(libbpf_print_default);
	if (err && err != -EEXIST) {
		log_err("clsact on %s/%s: %s\n", r->netns, r->dev,
			strerror(-err));
		return err;
	}
	opts.flags = BPF_TC_F_REPLACE;
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		log_err("attach on %s/%s %s: %s\n", r->netns,
			r->dev, r->hook, strerror(-err));
		return err;
	}
	key.ifindex = (__u32)hook.ifindex;
	err = current_netns_cookie(&key.netns_cookie);
	if (err) {
		log_err("netns cookie: %s\n", strerror(-err));
		return err;
	}
	return bpf_map_update_elem(ports_fd, &key, &val, BPF_ANY);
}

static int cmd_attach(int argc, char **argv)
{
	int prog_in, prog_eg, ports_fd, self_ns, n = 0, err = 0;
	struct port_row r;
	FILE *f;

	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	libbpf_print_default = libbpf_set_print(NULL);
	libbpf_set_print(libbpf_print_default);
	prog_in = open_pinned(argv[0], "prog_ingress");
	prog_eg = open_pinned(argv[0], "prog_egress");
	ports_fd = open_pinned(argv[0], "lab_ports");
	f = open_ports(argv[1]);
	self_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (prog_in < 0 || prog_eg < 0 || ports_fd < 0 || !f || self_ns < 0)
		return 1;
	while ((err = read_port(f, &r)) > 0) {
		err = attach_port(&r, prog_in, prog_eg, ports_fd);
		if (setns(self_ns, CLONE_NEWNET) && !err)
			err = -errno;
		if (err)
			break;
		n++;
	}
	fclose(f);
	if (err) {
		log_err("attach stopped after %d ports\n", n);
		return 1;
	}
	return 0;
}

/* ---- set / show ------------------------------------------------------------ */

static int set_field(struct lab_link_cfg *cfg, const char *kv)
{
	const char *eq = strchr(kv, '=');
	const char *v = eq ? eq + 1 : "";
	size_t klen = eq ? (size_t)(eq - kv) : strlen(kv);
	uint64_t n = 0;
	int err;

#define KEY_IS(name) (klen == strlen(name) && !strncmp(kv, name, klen))
	if (KEY_IS("rate")) {
		if (!strcmp(v, "0")) {
			cfg->rate_bps = 0;
			return 0;
		}
		err = parse_rate_bps(v, &n);
		cfg->rate_bps = err ? cfg->rate_bps : n;
		return err;
	}
	if (KEY_IS("drop"))
		return parse_percent_ppm(v, &cfg->drop_ppm);
	if (KEY_IS("blackhole")) {
		err = parse_u64(v, 1, &n);
		if (!err)
			cfg->blackhole = (__u32)n;
		return err;
	}
	if (KEY_IS("ecn") || KEY_IS("trim") || KEY_IS("queue")) {
		err = parse_size(v, &n);
		if (err || n > UINT32_MAX)
			return err ? err : -ERANGE;
		if (KEY_IS("ecn"))
			cfg->ecn_thresh = (__u32)n;
		else if (KEY_IS("trim"))
			cfg->trim_thresh = (__u32)n;
		else
			cfg->queue_limit = (__u32)n;
		return 0;
	}
#undef KEY_IS
	return -ENOENT;
}

/* What a setting's value should look like, for error messages. */
static const char *setting_hint(const char *kv)
{
	if (!strncmp(kv, "rate=", 5))
		return "a rate such as 500mbit or 1gbit";
	if (!strncmp(kv, "drop=", 5))
		return "a percentage from 0 to 100 (up to 4 decimals)";
	if (!strncmp(kv, "blackhole=", 10))
		return "0 or 1";
	return "a size in bytes such as 30000 or 64k";
}

static int parse_link_id(const char *s, __u32 *id)
{
	uint64_t n;

	if (parse_u64(s, LAB_MAX_LINKS - 1, &n)) {
		log_err("'%s' is not a link id (0..%d)\n", s,
			LAB_MAX_LINKS - 1);
		return -1;
	}
	*id = (__u32)n;
	return 0;
}

/*
 * Look up one link's configuration. Returns the lab_links map fd, or the
 * negated exit status: -2 for a bad link id, -1 when the map is unreadable.
 */
static int read_link_cfg(const char *dir, const char *link, __u32 *id,
			 struct lab_link_cfg *cfg)
{
	int fd;

	if (parse_link_id(link, id))
		return -2;
	fd = open_pinned(dir, "lab_links");
	if (fd < 0 || bpf_map_lookup_elem(fd, id, cfg))
		return -1;
	return fd;
}

static int cmd_set(int argc, char **argv)
{
	struct lab_link_cfg cfg;
	int fd, i, err;
	__u32 id;

	if (argc < 3) {
		usage(stderr);
		return 2;
	}
	fd = read_link_cfg(argv[0], argv[1], &id, &cfg);
	if (fd < 0)
		return -fd;
	for (i = 2; i < argc; i++) {
		err = set_field(&cfg, argv[i]);
		if (err == -ENOENT) {
			log_err("unknown setting '%s' (rate, drop, "
				"blackhole, ecn, trim, queue)\n", argv[i]);
			return 2;
		}
		if (err) {
			log_err("bad value in '%s': want %s\n",
				argv[i], setting_hint(argv[i]));
			return 2;
		}
	}
	if (bpf_map_update_elem(fd, &id, &cfg, BPF_EXIST)) {
		log_err("update link %u: %s\n", id, strerror(errno));
		return 1;
	}
	return 0;
}

static int cmd_show(int argc, char **argv)
{
	struct lab_link_cfg cfg;
	__u32 id;
	int fd;

	if (argc != 2) {
		usage(stderr);
		return 2;
	}
	fd = read_link_cfg(argv[0], argv[1], &id, &cfg);
	if (fd < 0)
		return -fd;
	printf("rate_bps %llu drop_ppm %u blackhole %u ecn %u trim %u queue %u\n",
	       (unsigned long long)cfg.rate_bps, cfg.drop_ppm, cfg.blackhole,
	       cfg.ecn_thresh, cfg.trim_thresh, cfg.queue_limit);
	return 0;
}

/* ---- stats ----------------------------------------------------------------- */

struct counter_row {
	char name[32];
	int plane, index;	/* parsed from pP-sS / pP-hH */
	struct lab_port_stats s;
};

struct stats_table {
	struct counter_row links[LAB_MAX_LINKS];
	struct counter_row spines[LAB_MAX_LINKS];
	int n_links, n_spines;
};

static void stats_add(struct lab_port_stats *dst, const struct lab_port_stats *src)
{
	dst->packets += src->packets;
	dst->bytes += src->bytes;
	dst->drop_fault += src->drop_fault;
	dst->drop_queue += src->drop_queue;
	dst->ecn_marked += src->ecn_marked;
	dst->trimmed += src->trimmed;
	dst->malformed += src->malformed;
}

static struct counter_row *row_for(struct counter_row *rows, int *n,
				   const char *name)
{
	char kind;
	int i;

	for (i = 0; i < *n; i++)
		if (!strcmp(rows[i].name, name))
			return &rows[i];
	if (*n >= LAB_MAX_LINKS)
		return NULL;
	memset(&rows[*n], 0, sizeof(rows[*n]));
	snprintf(rows[*n].name, sizeof(rows[*n].name), "%s", name);
	if (sscanf(name, "p%d-%c%d", &rows[*n].plane, &kind, &rows[*n].index) != 3)
		rows[*n].plane = rows[*n].index = 0;
	return &rows[(*n)++];
}

/* Sum one port's per-CPU counters; zero them too when resetting. */
static int read_port_stats(int fd, __u32 id, int reset, struct lab_port_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	struct lab_port_stats *percpu;
	int err;

	if (ncpu <= 0)
		return -EINVAL;
	percpu = calloc((size_t)ncpu, sizeof(*percpu));
	if (!percpu)
		return -ENOMEM;
	err = bpf_map_lookup_elem(fd, &id, percpu);
	if (!err && reset) {
		memset(percpu, 0, (size_t)ncpu * sizeof(*percpu));
		err = bpf_map_update_elem(fd, &id, percpu, BPF_ANY);
	}
	memset(sum, 0, sizeof(*sum));
	for (i = 0; !err && i < ncpu; i++)
		stats_add(sum, &percpu[i]);
	free(percpu);
	return err ? -errno : 0;
}

static void print_row_json(const struct counter_row *r, int is_spine, int last)
{
	if (is_spine)
		printf("    {\"plane\": %d, \"spine\": %d, \"packets\": %llu, \"bytes\": %llu}%s\n",
		       r->plane, r->index, (unsigned long long)r->s.packets,
		       (unsigned long long)r->s.bytes, last ? "" : ",");
	else
		printf("    {\"name\": \"%s\", \"packets\": %llu, \"bytes\": %llu, "
		       "\"dropped\": %llu, \"drop_fault\": %llu, \"drop_queue\": %llu, "
		       "\"ecn_marked\": %llu, \"trimmed\": %llu, \"malformed\": %llu}%s\n",
		       r->name, (unsigned long long)r->s.packets,
		       (unsigned long long)r->s.bytes,
		       (unsigned long long)(r->s.drop_fault + r->s.drop_queue),
		       (unsigned long long)r->s.drop_fault,
		       (unsigned long long)r->s.drop_queue,
		       (unsigned long long)r->s.ecn_marked,
		       (unsigned long long)r->s.trimmed,
		       (unsigned long long)r->s.malformed, last ? "" : ",");
}

static void print_stats_json(const struct stats_table *t)
{
	int i;

	printf("{\n  \"spines\": [\n");
	for (i = 0; i < t->n_spines; i++)
		print_row_json(&t->spines[i], 1, i == t->n_spines - 1);
	printf("  ],\n  \"links\": [\n");
	for (i = 0; i < t->n_links; i++)
		print_row_json(&t->links[i], 0, i == t->n_links - 1);
	printf("  ]\n}\n");
}

static void print_stats_text(const struct stats_table *t)
{
	const struct counter_row *r;
	int i;

	printf("%-10s %12s %14s %9s %9s %9s\n", "link", "packets", "bytes",
	       "dropped", "ecn", "trimmed");
	for (i = 0; i < t->n_links; i++) {
		r = &t->links[i];
		printf("%-10s %12llu %14llu %9llu %9llu %9llu\n", r->name,
		       (unsigned long long)r->s.packets, (unsigned long long)r->s.bytes,
		       (unsigned long long)(r->s.drop_fault + r->s.drop_queue),
		       (unsigned long long)r->s.ecn_marked,
		       (unsigned long long)r->s.trimmed);
	}
	printf("\n%-10s %12s %14s\n", "spine", "packets", "bytes");
	for (i = 0; i < t->n_spines; i++) {
		r = &t->spines[i];
		printf("%-10s %12llu %14llu\n", r->name,
		       (unsigned long long)r->s.packets, (unsigned long long)r->s.bytes);
	}
}

static int collect_stats(FILE *f, int fd, int reset, struct stats_table *t)
{
	struct lab_port_stats s;
	struct counter_row *row;
	struct port_row r;
	int err;

	while ((err = read_port(f, &r)) > 0) {
		err = read_port_stats(fd, r.port_id, reset, &s);
		if (err) {
			log_err("stats of port %u: %s\n", r.port_id,
				strerror(-err));
			return err;
		}
		row = row_for(t->links, &t->n_links, r.link);
		if (row)
			stats_add(&row->s, &s);
		/* A spine's traffic is what leaves it: each packet exactly once. */
		if (strcmp(r.spine, "-")) {
			row = row_for(t->spines, &t->n_spines, r.spine);
			if (row)
				stats_add(&row->s, &s);
		}
	}
	return err;
}

static int cmd_stats(int argc, char **argv)
{
	int json = 0, reset = 0, fd, i, err;
	struct stats_table *t;
	FILE *f;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	for (i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--json"))
			json = 1;
		else if (!strcmp(argv[i], "--reset"))
			reset = 1;
		else {
			log_err("stats: unknown option %s\n", argv[i]);
			return 2;
		}
	}
	fd = open_pinned(argv[0], "lab_stats");
	f = open_ports(argv[1]);
	t = calloc(1, sizeof(*t));
	if (fd < 0 || !f || !t)
		return 1;
	err = collect_stats(f, fd, reset, t);
	fclose(f);
	if (!err && !reset)
		json ? print_stats_json(t) : print_stats_text(t);
	free(t);
	return err ? 1 : 0;
}

/* Lets the shell side use the same rate syntax as the BPF side. */
static int cmd_parse_rate(const char *s)
{
	uint64_t bps;

	if (parse_rate_bps(s, &bps)) {
		log_err("bad rate '%s' (e.g. 500mbit, 1gbit)\n", s);
		return 2;
	}
	printf("%llu\n", (unsigned long long)bps);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "load", cmd_load }, { "attach", cmd_attach }, { "set", cmd_set },
		{ "show", cmd_show }, { "stats", cmd_stats },
	};
	size_t i;

	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (argc == 3 && !strcmp(argv[1], "parse-rate"))
		return cmd_parse_rate(argv[2]);
	if (argc < 3) {
		log_err("%s needs the lab's pin folder\n", argv[1]);
		return 2;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 2, argv + 2);
	log_err("unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
