// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The mrcctl commands (see agent_cmds.h): a table of commands, their
 * option parsing and help, and what each one reads from or writes to the
 * pinned maps.
 */
#define _GNU_SOURCE
#include "agent/agent_cmds.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mrc/nscc.h"
#include "agent/cc_view.h"
#include "agent/doctor.h"
#include "common/ev_profile.h"
#include "common/ev_state.h"
#include "agent/probe_net.h"
#include "common/parse.h"
#include "agent/json_out.h"

struct ctx {
	const struct agent_cmd_env *env;
	FILE *out, *err;
	char name[64];		/* "mrcctl qp show", for messages */
	bool json;
	bool done;		/* dry run: completed here, do not forward */
};

/* ---- messages --------------------------------------------------------- */

__attribute__((format(printf, 2, 3)))
static int usage_error(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(c->err, "%s: ", c->name);
	va_start(ap, fmt);
	vfprintf(c->err, fmt, ap);
	va_end(ap);
	fprintf(c->err, "\ntry '%s --help'\n", c->name);
	c->done = true;
	return AGENT_EXIT_USAGE;
}

__attribute__((format(printf, 2, 3)))
static int failure(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	fprintf(c->err, "%s: ", c->name);
	va_start(ap, fmt);
	vfprintf(c->err, fmt, ap);
	va_end(ap);
	fputc('\n', c->err);
	c->done = true;
	return AGENT_EXIT_FAIL;
}

/* ---- JSON output ------------------------------------------------------ */

#define JSON_DEPTH	8

struct json {
	FILE *f;
	int depth;
	bool first[JSON_DEPTH];
};

/* The comma before a value and, inside an object, its key. */
static void j_key(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (!j->first[j->depth])
			fputs(", ", j->f);
		j->first[j->depth] = false;
	}
	if (key) {
		json_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void j_open(struct json *j, const char *key, char brace)
{
	j_key(j, key);
	fputc(brace, j->f);
	if (j->depth + 1 < JSON_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static void j_close(struct json *j, char brace)
{
	fputc(brace, j->f);
	if (j->depth > 0)
		j->depth--;
	if (!j->depth)
		fputc('\n', j->f);
}

#define j_obj(j, key)	j_open(j, key, '{')
#define j_end(j)	j_close(j, '}')
#define j_arr(j, key)	j_open(j, key, '[')
#define j_arr_end(j)	j_close(j, ']')

static void j_str(struct json *j, const char *key, const char *s)
{
	j_key(j, key);
	json_string(j->f, s);
}

static void j_u64(struct json *j, const char *key, uint64_t v)
{
	j_key(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

static void j_int(struct json *j, const char *key, long long v)
{
	j_key(j, key);
	fprintf(j->f, "%lld", v);
}

static void j_hex(struct json *j, const char *key, uint32_t v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "0x%x", v);
	j_str(j, key, buf);
}

static void j_bool(struct json *j, const char *key, bool v)
{
	j_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

static void j_null(struct json *j, const char *key)
{
	j_key(j, key);
	fputs("null", j->f);
}

static void j_dbl(struct json *j, const char *key, double v)
{
	j_key(j, key);
	fprintf(j->f, "%.3f", v);
}

/* ---- names ------------------------------------------------------------ */

static const char *qp_state_name(uint32_t s)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "ERROR" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static const char *ev_state_name(uint8_t s)
{
	static const char *const names[] = { "GOOD", "SKIP", "ASSUMED_BAD", "DENIED" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

static const char *ev_format_name(uint32_t f)
{
	return f == MRC_EVF_UDP ? "UDP" : f == MRC_EVF_STEV ? "STEV" :
	       f == EV_FMT_SRV6 ? "SRV6" : "?";
}

/* Fields of struct mrc_drop_stats, in order (enum mrc_drop_reason). */
static const char *const drop_names[] = {
	"none", "malformed", "bad_opcode", "unknown_qp", "qp_not_ready",
	"bad_source", "out_of_window", "duplicate", "bad_ack", "stale_ack",
	"ring_full",
};

/* Fields of struct mrc_qp_stats, in order. */
static const char *const qp_counter_names[] = {
	"rx_data", "rx_data_bytes", "rx_dup", "rx_oow", "rx_bad", "rx_sack",
	"rx_nack", "losses", "completions", "tx_stamped",
};

#define N_DROPS		(sizeof(struct mrc_drop_stats) / sizeof(uint64_t))
#define N_QP_COUNTERS	(sizeof(struct mrc_qp_stats) / sizeof(uint64_t))
/* Index of a struct mrc_qp_stats field in a counters[] array. */
#define QP_COUNTER(field)	(offsetof(struct mrc_qp_stats, field) / sizeof(uint64_t))

/*
 * Both structs are append-only: a field added to abi.h before it gets a
 * name here is still shown, as counter_N.
 */
static const char *counter_name(const char *const *names, size_t n_names,
				size_t i, char *buf, size_t len)
{
	if (i < n_names)
		return names[i];
	snprintf(buf, len, "counter_%zu", i);
	return buf;
}

static const char *drop_name(size_t i, char *buf, size_t len)
{
	return counter_name(drop_names, sizeof(drop_names) / sizeof(drop_names[0]),
			    i, buf, len);
}

static const char *qp_counter_name(size_t i, char *buf, size_t len)
{
	return counter_name(qp_counter_names,
			    sizeof(qp_counter_names) / sizeof(qp_counter_names[0]),
			    i, buf, len);
}

/* An address of the maps (IPv6, or IPv4 mapped into IPv6) as text. */
static const char *addr_str(const uint8_t a[16], char *buf, size_t len)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(a, mapped, sizeof(mapped)))
		return inet_ntop(AF_INET, a + 12, buf, (socklen_t)len);
	return inet_ntop(AF_INET6, a, buf, (socklen_t)len);
}

static bool all_zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	while (len--)
		if (*b++)
			return false;
	return true;
}

/* ---- argument parsing ------------------------------------------------- */

enum { OPT_JSON = 0x1000, OPT_HELP };

#define COMMON_OPTS \
	{ "json", no_argument, NULL, OPT_JSON }, \
	{ "help", no_argument, NULL, OPT_HELP }

/*
 * getopt_long with our messages and the options every command has.
 * Returns the next option, -1 at the end, or '?' after a usage error.
 */
static int next_opt(struct ctx *c, int argc, char **argv,
		    const struct option *opts)
{
	for (;;) {
		int o = getopt_long(argc, argv, ":", opts, NULL);

		if (o == OPT_JSON) {
			c->json = true;
			continue;
		}
		if (o == ':') {
			usage_error(c, "%s needs a value", argv[optind - 1]);
			return '?';
		}
		if (o == '?') {
			usage_error(c, "unknown option '%s'", argv[optind - 1]);
			return '?';
		}
		return o;
	}
}

/* Reset getopt for a fresh argument vector (GNU: optind 0 reinitialises). */
static void opt_start(void)
{
	optind = 0;
	opterr = 0;
}

static int no_positionals(struct ctx *c, int argc, char **argv)
{
	if (optind < argc)
		return usage_error(c, "unexpected argument '%s'", argv[optind]);
	return 0;
}

static int parse_qpn(struct ctx *c, const char *s, uint32_t *qpn)
{
	uint64_t v;

	if (parse_u64(s, MRC_MAX_QPS, &v) || !v)
		return usage_error(c, "'%s' is not a QP number (1..%d)", s, MRC_MAX_QPS);
	*qpn = (uint32_t)v;
	return 0;
}

/* Hex with or without 0x, as `ev list` prints EVs. */
static int parse_hex32(const char *s, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!isxdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 16);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

static int parse_u32_arg(struct ctx *c, const char *opt, const char *s,
			 uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(s, max, &v))
		return usage_error(c, "%s: '%s' is not a number in 0..%u", opt, s, max);
	*out = (uint32_t)v;
	return 0;
}

/*
 * Split a comma-separated list into items[max]; empty items are errors.
 * The pointers point into `copy`, which the caller frees.
 */
static int split_list(struct ctx *c, const char *opt, const char *s,
		      char **copy, char **items, int max, int *n)
{
	char *rest, *item;

	*n = 0;
	*copy = strdup(s);
	if (!*copy)
		return failure(c, "out of memory");
	rest = *copy;
	while ((item = strsep(&rest, ","))) {
		if (!*item)
			return usage_error(c, "%s: empty item in '%s'", opt, s);
		if (*n >= max)
			return usage_error(c, "%s: more than %d items", opt, max);
		items[(*n)++] = item;
	}
	return 0;
}

/* ---- reading the maps ------------------------------------------------- */

static int n_cpus(void)
{
	static int n;

	if (!n)
		n = libbpf_num_possible_cpus();
	return n > 0 ? n : 1;
}

/* A per-CPU value of u64 counters, summed over the CPUs. */
static int sum_percpu(int fd, uint32_t key, size_t value_size, uint64_t *sum)
{
	size_t stride = (value_size + 7) & ~(size_t)7, n = value_size / 8;
	uint64_t *vals = calloc((size_t)n_cpus(), stride);
	int cpu, rc = 0;

	if (!vals)
		return -ENOMEM;
	memset(sum, 0, n * sizeof(*sum));
	if (bpf_map_lookup_elem(fd, &key, vals)) {
		rc = -errno;
	} else {
		for (cpu = 0; cpu < n_cpus(); cpu++)
			for (size_t i = 0; i < n; i++)
				sum[i] += vals[cpu * stride / 8 + i];
	}
	free(vals);
	return rc;
}

static int read_qp_info(struct ctx *c, uint32_t qpn, struct mrc_qp_info *qi)
{
	uint32_t slot = qpn - 1;

	if (bpf_map_lookup_elem(c->env->maps.qps, &slot, qi))
		return -errno;
	return 0;
}

/* The QP, or a failure saying it does not exist. */
static int find_qp(struct ctx *c, uint32_t qpn, struct mrc_qp_info *qi)
{
	int rc = read_qp_info(c, qpn, qi);

	if (rc)
		return failure(c, "reading QP %u: %s", qpn, strerror(-rc));
	if (qi->state == MRC_QPS_RESET)
		return failure(c, "there is no QP %u (in use: mrcctl qp list)", qpn);
	return 0;
}

static uint32_t n_evs_of(const struct mrc_qp_info *qi)
{
	return qi->n_evs < MRC_MAX_EVS ? qi->n_evs : MRC_MAX_EVS;
}

/* Everything `qp list` and `qp show` say about a QP. */
struct qp_view {
	uint32_t qpn;
	struct mrc_qp_info info;
	uint32_t owner;			/* pid; 0 = unknown */
	unsigned int good, skip, bad, denied, backup;
	struct mrc_tx_state tx;
	struct mrc_rx_state rx;
	uint64_t counters[N_QP_COUNTERS];
	/* The QP's congestion window (info.cc_slot), when it has one. */
	enum { QP_CC_NONE, QP_CC_OK, QP_CC_UNREADABLE } cc;
	char cc_err[128];		/* UNREADABLE: why */
	struct mrc_cc_view ccv;
	bool have_ccp;			/* ccp read from mrc_cc */
	struct mrc_nscc_params ccp;
};

static void count_evs(struct qp_view *v, const struct mrc_qp_evs *evs)
{
	uint32_t i, n = n_evs_of(&v->info);

	/*
	 * ASSUMED_BAD and DENIED entries are out of the rotation whether they
	 * were active or backups (a demoted active one hands its place over):
	 * count them by state; backups are the usable entries not in rotation.
	 */
	for (i = 0; i < n; i++) {
		const struct mrc_ev_entry *e = &evs->ev[i];

		if (e->state == MRC_EV_ASSUMED_BAD)
			v->bad++;
		else if (e->state == MRC_EV_DENIED)
			v->denied++;
		else if (!(e->flags & MRC_EV_F_ACTIVE))
			v->backup++;
		else if (e->state == MRC_EV_GOOD)
			v->good++;
		else if (e->state == MRC_EV_SKIP)
			v->skip++;
	}
}

/*
 * The window of the QP, if it has one (several QPs to one destination
 * share it). A fast path without congestion control has no mrc_cc_view:
 * that is said, not a failure of the command.
 */
static void read_qp_cc(struct ctx *c, struct qp_view *v)
{
	const struct agent_maps *m = &c->env->maps;
	uint32_t slot = v->info.cc_slot, key = slot - 1;
	struct mrc_cc_state st;

	v->cc = QP_CC_UNREADABLE;
	if (!slot)
		v->cc = QP_CC_NONE;
	else if (m->cc_view < 0)
		snprintf(v->cc_err, sizeof(v->cc_err), "mrc_cc_view is missing: the "
			 "fast path mrcd loaded has no congestion control");
	else if (slot > MRC_MAX_CC)
		snprintf(v->cc_err, sizeof(v->cc_err), "window %u is beyond the %d of "
			 "mrc_cc_view", slot, MRC_MAX_CC);
	else if (bpf_map_lookup_elem(m->cc_view, &key, &v->ccv))
		snprintf(v->cc_err, sizeof(v->cc_err), "reading window %u of "
			 "mrc_cc_view: %s", slot, strerror(errno));
	else
		v->cc = QP_CC_OK;
	/* The resolved parameters are a bonus: the view is what matters. */
	if (v->cc == QP_CC_OK && m->cc >= 0 &&
	    !bpf_map_lookup_elem_flags(m->cc, &key, &st, BPF_F_LOCK)) {
		v->ccp = st.nscc.p;
		v->have_ccp = true;
	}
}

/* The parts a QP may lack (owner gone, counters) are left at zero. */
static int read_qp_view(struct ctx *c, uint32_t qpn, struct qp_view *v)
{
	const struct agent_maps *m = &c->env->maps;
	uint32_t slot = qpn - 1;
	struct mrc_qp_evs *evs;
	int rc;

	memset(v, 0, sizeof(*v));
	v->qpn = qpn;
	rc = read_qp_info(c, qpn, &v->info);
	if (rc)
		return rc;
	if (bpf_map_lookup_elem(m->qp_owner, &qpn, &v->owner))
		v->owner = 0;
	evs = malloc(sizeof(*evs));
	if (evs && !bpf_map_lookup_elem(m->qp_evs, &slot, evs))
		count_evs(v, evs);
	free(evs);
	if (bpf_map_lookup_elem(m->tx, &slot, &v->tx))
		memset(&v->tx, 0, sizeof(v->tx));
	if (bpf_map_lookup_elem(m->rx, &slot, &v->rx))
		memset(&v->rx, 0, sizeof(v->rx));
	sum_percpu(m->qp_stats, slot, sizeof(struct mrc_qp_stats), v->counters);
	read_qp_cc(c, v);
	return 0;
}

static const char *peers_str(const struct mrc_qp_info *qi, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < qi->n_peer_addrs && i < MRC_MAX_PEER_ADDRS; i++) {
		int n = snprintf(buf + off, len - off, "%s%s", i ? "," : "",
				 addr_str(qi->peer_addrs[i], a, sizeof(a)));

		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
	return off ? buf : "-";
}

/* ---- status and stats ------------------------------------------------- */

static void json_drops(struct json *j, const uint64_t *drops)
{
	char buf[32];

	j_obj(j, "drops");
	for (size_t i = 0; i < N_DROPS; i++)
		j_u64(j, drop_name(i, buf, sizeof(buf)), drops[i]);
	j_end(j);
}

static void text_drops(struct ctx *c, const uint64_t *drops)
{
	char buf[32];

	fprintf(c->out, "drops:");
	/* "none" is index 0, never counted: skip it in text. */
	for (size_t i = 1; i < N_DROPS; i++)
		fprintf(c->out, "%s %s %" PRIu64, i > 1 ? "," : "",
			drop_name(i, buf, sizeof(buf)), drops[i]);
	fputc('\n', c->out);
}

static int read_drops(struct ctx *c, uint64_t *drops)
{
	int rc = sum_percpu(c->env->maps.drops, 0, sizeof(struct mrc_drop_stats),
			    drops);

	if (rc)
		return failure(c, "reading mrc_drops: %s", strerror(-rc));
	return 0;
}

struct plane_row {
	unsigned int plane;
	struct mrc_plane map;
	const struct agent_plane_info *info;
	char addr4[INET_ADDRSTRLEN], addr6[INET6_ADDRSTRLEN];
};

static void read_plane_row(struct ctx *c, unsigned int i, struct plane_row *r)
{
	uint32_t key = i;

	memset(r, 0, sizeof(*r));
	r->plane = i + 1;
	r->info = &c->env->planes[i];
	if (bpf_map_lookup_elem(c->env->maps.planes, &key, &r->map))
		memset(&r->map, 0, sizeof(r->map));
	if (!all_zero(r->map.addr4, sizeof(r->map.addr4)))
		inet_ntop(AF_INET, r->map.addr4, r->addr4, sizeof(r->addr4));
	if (!all_zero(r->map.addr6, sizeof(r->map.addr6)))
		inet_ntop(AF_INET6, r->map.addr6, r->addr6, sizeof(r->addr6));
}

static uint16_t configured_port(struct ctx *c)
{
	struct mrc_global_cfg cfg;
	uint32_t key = 0;

	if (bpf_map_lookup_elem(c->env->maps.cfg, &key, &cfg) || !cfg.udp_port)
		return MRC_UDP_PORT_DEFAULT;
	return cfg.udp_port;
}

static void count_qp_states(struct ctx *c, unsigned int *by_state,
			    unsigned int n_states)
{
	struct mrc_qp_info qi;
	uint32_t qpn;

	memset(by_state, 0, n_states * sizeof(*by_state));
	for (qpn = 1; qpn <= MRC_MAX_QPS; qpn++)
		if (!read_qp_info(c, qpn, &qi) && qi.state < n_states)
			by_state[qi.state]++;
}

static const char *link_name(struct ctx *c, unsigned int i)
{
	const struct pe_status *st = c->env->probing;

	if (!st || (int)i >= st->n_planes)
		return "?";
	return st->link_up[i] ? "up" : "down";
}

static void probing_json(struct ctx *c, struct json *j)
{
	const struct pe_status *st = c->env->probing;

	j_obj(j, "probing");
	j_u64(j, "successes", st->probe_successes);
	j_u64(j, "interval_ms", st->probe_interval_ms);
	j_u64(j, "agent_port", st->agent_port);
	j_u64(j, "assumed_bad_evs", st->bad_evs);
	if (st->best_rtt_ns)
		j_u64(j, "best_rtt_ns", st->best_rtt_ns);
	else
		j_null(j, "best_rtt_ns");
	j_end(j);
}

static void probing_text(struct ctx *c)
{
	const struct pe_status *st = c->env->probing;
	char rtt[32] = "-";

	if (st->best_rtt_ns)
		snprintf(rtt, sizeof(rtt), "%" PRIu64 " ns", st->best_rtt_ns);
	fprintf(c->out, "probing: ASSUMED_BAD EVs back after %u answered probes in a "
		"row, first probe after %u ms; %u EVs probed now, best RTT %s; "
		"port status on UDP %u\n", st->probe_successes, st->probe_interval_ms,
		st->bad_evs, rtt, st->agent_port);
}

static void status_json(struct ctx *c, const uint64_t *drops,
			const unsigned int *by_state)
{
	struct json j = { .f = c->out };
	struct plane_row r;
	unsigned int i, total = 0;

	j_obj(&j, NULL);
	j_str(&j, "pin_dir", c->env->pin_dir);
	j_int(&j, "pid", c->env->pid);
	j_u64(&j, "port", configured_port(c));
	j_arr(&j, "planes");
	for (i = 0; i < c->env->n_planes; i++) {
		read_plane_row(c, i, &r);
		j_obj(&j, NULL);
		j_u64(&j, "plane", r.plane);
		j_str(&j, "name", r.info->name);
		j_int(&j, "ifindex", r.info->ifindex);
		if (*r.addr4)
			j_str(&j, "addr4", r.addr4);
		else
			j_null(&j, "addr4");
		if (*r.addr6)
			j_str(&j, "addr6", r.addr6);
		else
			j_null(&j, "addr6");
		j_str(&j, "xdp_mode", r.info->xdp_mode);
		j_str(&j, "xdp_attach", r.info->xdp_how);
		j_u64(&j, "xdp_prog_id", r.info->xdp_prog_id);
		j_u64(&j, "xdp_attached_id", r.info->xdp_attached_id);
		j_u64(&j, "tc_prog_id", r.info->tc_prog_id);
		if (c->env->probing)
			j_str(&j, "link", link_name(c, i));
		j_end(&j);
	}
	j_arr_end(&j);
	if (c->env->probing)
		probing_json(c, &j);
	j_obj(&j, "qps");
	for (i = MRC_QPS_INIT; i <= MRC_QPS_ERROR; i++) {
		j_u64(&j, qp_state_name(i), by_state[i]);
		total += by_state[i];
	}
	j_u64(&j, "total", total);
	j_end(&j);
	json_drops(&j, drops);
	j_end(&j);
}

static void status_text(struct ctx *c, const uint64_t *drops,
			const unsigned int *by_state)
{
	struct plane_row r;
	unsigned int i, total = 0;
	char xdp[40];

	fprintf(c->out, "mrcd pid %d, pins %s, UDP port %u\n", c->env->pid,
		c->env->pin_dir, configured_port(c));
	fprintf(c->out, "%-6s %-10s %-8s %-5s %-16s %-26s %-22s %-8s %-8s\n", "PLANE",
		"NAME", "IFINDEX", "LINK", "IPV4", "IPV6", "XDP", "XDP_ID", "TC_ID");
	for (i = 0; i < c->env->n_planes; i++) {
		read_plane_row(c, i, &r);
		snprintf(xdp, sizeof(xdp), "%s (%s)", r.info->xdp_mode, r.info->xdp_how);
		fprintf(c->out, "%-6u %-10s %-8d %-5s %-16s %-26s %-22s %-8u %-8u\n",
			r.plane, r.info->name, r.info->ifindex, link_name(c, i),
			*r.addr4 ? r.addr4 : "-", *r.addr6 ? r.addr6 : "-", xdp,
			r.info->xdp_prog_id, r.info->tc_prog_id);
	}
	if (c->env->probing)
		probing_text(c);
	for (i = MRC_QPS_INIT; i <= MRC_QPS_ERROR; i++)
		total += by_state[i];
	fprintf(c->out, "QPs: %u (INIT %u, RTR %u, RTS %u, ERROR %u)\n", total,
		by_state[MRC_QPS_INIT], by_state[MRC_QPS_RTR],
		by_state[MRC_QPS_RTS], by_state[MRC_QPS_ERROR]);
	text_drops(c, drops);
}

static int cmd_status(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, {} };
	unsigned int by_state[MRC_QPS_ERROR + 1];
	uint64_t drops[N_DROPS];

	if (next_opt(c, argc, argv, opts) != -1 || no_positionals(c, argc, argv))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;
	if (read_drops(c, drops))
		return AGENT_EXIT_FAIL;
	count_qp_states(c, by_state, MRC_QPS_ERROR + 1);
	if (c->json)
		status_json(c, drops, by_state);
	else
		status_text(c, drops, by_state);
	return 0;
}

/* QPs worth a line in `stats`: live ones, and dead ones that counted. */
static bool qp_has_stats(const struct qp_view *v)
{
	return v->info.state != MRC_QPS_RESET ||
	       !all_zero(v->counters, sizeof(v->counters));
}

static void stats_counters_json(struct json *j, const char *key,
				const uint64_t *counters)
{
	char buf[32];

	j_obj(j, key);
	for (size_t i = 0; i < N_QP_COUNTERS; i++)
		j_u64(j, qp_counter_name(i, buf, sizeof(buf)), counters[i]);
	j_end(j);
}

static void stats_header(struct ctx *c)
{
	char buf[32];

	fprintf(c->out, "%-5s %-6s", "QPN", "STATE");
	for (size_t i = 0; i < N_QP_COUNTERS; i++)
		fprintf(c->out, " %14s", qp_counter_name(i, buf, sizeof(buf)));
	fputc('\n', c->out);
}

static void stats_row(struct ctx *c, const char *qpn, const char *state,
		      const uint64_t *counters)
{
	fprintf(c->out, "%-5s %-6s", qpn, state);
	for (size_t i = 0; i < N_QP_COUNTERS; i++)
		fprintf(c->out, " %14" PRIu64, counters[i]);
	fputc('\n', c->out);
}

/* Fields of struct mrc_ctl_stats, in order. */
static const char *const ctl_counter_names[] = {
	"ev_events", "ev_events_lost", "demote_refused", "probes_answered",
	"probe_responses", "probes_stamped", "port_status_rx", "ep_dropped",
	"trim_nacks", "trim_nacks_lasthop", "cc_wakeups",
};

#define N_CTL_COUNTERS	(sizeof(struct mrc_ctl_stats) / sizeof(uint64_t))

static const char *ctl_counter_name(size_t i, char *buf, size_t len)
{
	return counter_name(ctl_counter_names,
			    sizeof(ctl_counter_names) / sizeof(ctl_counter_names[0]),
			    i, buf, len);
}

/* XDP's and TC's control-path counters; false when there are none. */
static bool read_ctl_stats(struct ctx *c, uint64_t *ctl)
{
	return c->env->maps.ctl_stats >= 0 &&
	       !sum_percpu(c->env->maps.ctl_stats, 0, sizeof(struct mrc_ctl_stats), ctl);
}

static void control_stats_json(struct ctx *c, struct json *j)
{
	const struct pe_status *st = c->env->probing;
	uint64_t ctl[N_CTL_COUNTERS];
	char buf[32];

	if (read_ctl_stats(c, ctl)) {
		j_obj(j, "control");
		for (size_t i = 0; i < N_CTL_COUNTERS; i++)
			j_u64(j, ctl_counter_name(i, buf, sizeof(buf)), ctl[i]);
		j_end(j);
	}
	if (!st)
		return;
	j_obj(j, "probing");
	for (size_t i = 0; i < PE_N_COUNTERS; i++)
		j_u64(j, pe_counter_names[i], st->counters[i]);
	j_end(j);
}

static void control_stats_text(struct ctx *c)
{
	const struct pe_status *st = c->env->probing;
	uint64_t ctl[N_CTL_COUNTERS];
	char buf[32];

	if (read_ctl_stats(c, ctl)) {
		fprintf(c->out, "control (XDP, TC):");
		for (size_t i = 0; i < N_CTL_COUNTERS; i++)
			fprintf(c->out, "%s %s %" PRIu64, i ? "," : "",
				ctl_counter_name(i, buf, sizeof(buf)), ctl[i]);
		fputc('\n', c->out);
	}
	if (!st)
		return;
	fprintf(c->out, "probing (mrcd):");
	for (size_t i = 0; i < PE_N_COUNTERS; i++)
		fprintf(c->out, "%s %s %" PRIu64, i ? "," : "", pe_counter_names[i],
			st->counters[i]);
	fputc('\n', c->out);
}

static int cmd_stats(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, {} };
	uint64_t drops[N_DROPS], total[N_QP_COUNTERS] = {};
	struct json j = { .f = c->out };
	struct qp_view *v;
	char qpn[12];
	uint32_t n;

	if (next_opt(c, argc, argv, opts) != -1 || no_positionals(c, argc, argv))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;
	if (read_drops(c, drops))
		return AGENT_EXIT_FAIL;
	v = malloc(sizeof(*v));
	if (!v)
		return failure(c, "out of memory");
	if (c->json) {
		j_obj(&j, NULL);
		json_drops(&j, drops);
		j_arr(&j, "qps");
	} else {
		text_drops(c, drops);
		stats_header(c);
	}
	for (n = 1; n <= MRC_MAX_QPS; n++) {
		if (read_qp_view(c, n, v) || !qp_has_stats(v))
			continue;
		for (size_t i = 0; i < N_QP_COUNTERS; i++)
			total[i] += v->counters[i];
		if (c->json) {
			j_obj(&j, NULL);
			j_u64(&j, "qpn", n);
			j_str(&j, "state", qp_state_name(v->info.state));
			stats_counters_json(&j, "counters", v->counters);
			j_end(&j);
		} else {
			snprintf(qpn, sizeof(qpn), "%u", n);
			stats_row(c, qpn, qp_state_name(v->info.state), v->counters);
		}
	}
	if (c->json) {
		j_arr_end(&j);
		stats_counters_json(&j, "total", total);
		control_stats_json(c, &j);
		j_end(&j);
	} else {
		stats_row(c, "total", "", total);
		control_stats_text(c);
	}
	free(v);
	return 0;
}

/* ---- congestion windows: resolved parameters -------------------------- */

/* The members of resolved parameters (`show --derive`, `qp show`). */
static void cc_params_json(struct json *j, const struct mrc_nscc_params *p)
{
	j_str(j, "algo", cc_algo_name(p->algo));
	j_u64(j, "mtu", p->mtu);
	j_u64(j, "base_rtt_ns", p->base_rtt_ns);
	j_u64(j, "target_ns", p->target_ns);
	j_u64(j, "max_cwnd_bytes", p->max_cwnd);
	j_u64(j, "min_cwnd_bytes", p->min_cwnd);
	j_u64(j, "fi_bytes", p->fi_bytes);
	j_dbl(j, "fi_scale", p->fi_scale_milli / 1000.0);
	j_u64(j, "eta_bytes", p->eta_bytes);
	j_u64(j, "alpha_bytes", p->alpha_bytes);
	j_u64(j, "qa_threshold_ns", p->qa_threshold_ns);
	j_u64(j, "adjust_bytes", p->adjust_bytes);
	j_u64(j, "adjust_period_ns", p->adjust_period_ns);
	j_u64(j, "fast_delay_ns", p->fast_delay_ns);
	j_dbl(j, "gamma", p->gamma_milli / 1000.0);
	j_dbl(j, "max_md_jump", p->md_jump_milli / 1000.0);
	j_u64(j, "qa_gate", p->qa_gate);
	j_bool(j, "quick_adapt", !(p->flags & MRC_CC_F_DISABLE_QA));
	j_bool(j, "pacing", !(p->flags & MRC_CC_F_NO_PACING));
}

/* ns as text; 0 as `zero`. */
static const char *ns_str(uint32_t ns, const char *zero, char *buf, size_t len)
{
	if (!ns)
		return zero;
	snprintf(buf, len, "%.6g us", ns / 1e3);
	return buf;
}

static void cc_params_text(struct ctx *c, const struct mrc_nscc_params *p,
			   const char *indent)
{
	char b1[32], b2[32], b3[32], b4[32];

	fprintf(c->out, "%salgo %s, MTU %u bytes, window %u..%u bytes\n", indent,
		cc_algo_name(p->algo), p->mtu, p->min_cwnd, p->max_cwnd);
	fprintf(c->out, "%sbase RTT %s, target delay %s, queue empty below %s\n",
		indent, ns_str(p->base_rtt_ns, "measured", b1, sizeof(b1)),
		ns_str(p->target_ns, "0.75 x the measured base RTT", b2, sizeof(b2)),
		ns_str(p->fast_delay_ns, "target / 8", b3, sizeof(b3)));
	fprintf(c->out, "%salpha %u bytes, fi %u bytes, fi_scale %.3f, eta %u bytes, "
		"paid out every %u bytes or %s\n", indent, p->alpha_bytes, p->fi_bytes,
		p->fi_scale_milli / 1000.0, p->eta_bytes, p->adjust_bytes,
		ns_str(p->adjust_period_ns, "base RTT", b4, sizeof(b4)));
	fprintf(c->out, "%sgamma %.3f, max_md_jump %.3f, quick adapt %s (below "
		"max_cwnd >> %u, also checked above %s delay)\n", indent,
		p->gamma_milli / 1000.0, p->md_jump_milli / 1000.0,
		p->flags & MRC_CC_F_DISABLE_QA ? "off" : "on", p->qa_gate,
		ns_str(p->qa_threshold_ns, "4 x target", b1, sizeof(b1)));
	fprintf(c->out, "%spacing %s\n", indent, p->flags & MRC_CC_F_NO_PACING ?
		"off (a window's room leaves at once)" : "on (packets spread over the RTT)");
}

/* ---- qp list / qp show ------------------------------------------------ */

/* "cc": null without a window; with one, the view (and params in full). */
static void qp_cc_json(struct json *j, const struct qp_view *v, bool full)
{
	if (v->cc == QP_CC_NONE) {
		j_null(j, "cc");
		return;
	}
	j_obj(j, "cc");
	j_u64(j, "slot", v->info.cc_slot);
	if (v->cc == QP_CC_UNREADABLE) {
		j_str(j, "error", v->cc_err);
	} else {
		/* The members mrc-perf prints too (lib/cc_view.c). */
		fputs(", ", j->f);
		cc_view_json_members(j->f, &v->ccv);
		if (full && v->have_ccp) {
			j_obj(j, "params");
			cc_params_json(j, &v->ccp);
			j_end(j);
		}
	}
	j_end(j);
}

static void qp_json(struct json *j, const struct qp_view *v, bool full)
{
	char a[INET6_ADDRSTRLEN], buf[32];
	int i;

	j_obj(j, NULL);
	j_u64(j, "qpn", v->qpn);
	j_str(j, "state", qp_state_name(v->info.state));
	if (v->owner)
		j_u64(j, "owner_pid", v->owner);
	else
		j_null(j, "owner_pid");
	j_u64(j, "remote_qpn", v->info.remote_qpn);
	j_arr(j, "peers");
	for (i = 0; i < v->info.n_peer_addrs && i < MRC_MAX_PEER_ADDRS; i++)
		j_str(j, NULL, addr_str(v->info.peer_addrs[i], a, sizeof(a)));
	j_arr_end(j);
	j_str(j, "ev_format", ev_format_name(v->info.ev_format));
	j_u64(j, "n_evs", v->info.n_evs);
	j_obj(j, "evs");
	j_u64(j, "good", v->good);
	j_u64(j, "skip", v->skip);
	j_u64(j, "assumed_bad", v->bad);
	j_u64(j, "denied", v->denied);
	j_u64(j, "backup", v->backup);
	j_end(j);
	j_obj(j, "tx");
	j_u64(j, "snd_una", v->tx.snd_una);
	j_u64(j, "snd_nxt", v->tx.snd_nxt);
	if (full) {
		j_u64(j, "sack_max", v->tx.sack_max);
		j_u64(j, "loss_mark", v->tx.loss_mark);
		j_u64(j, "wr_head", v->tx.wr_head);
		j_u64(j, "wr_tail", v->tx.wr_tail);
		j_str(j, "state", qp_state_name(v->tx.state));
	}
	j_end(j);
	j_obj(j, "rx");
	j_u64(j, "cack", v->rx.cack);
	if (full) {
		j_u64(j, "mpr", v->rx.mpr);
		j_u64(j, "sack_pending", v->rx.sack_pending);
		j_u64(j, "generation", v->rx.generation);
	}
	j_end(j);
	if (full) {
		j_u64(j, "mpr", v->info.mpr);
		j_u64(j, "ctx", v->info.ctx);
		j_u64(j, "sock_port", v->info.sock_port);
	}
	j_obj(j, "counters");
	for (size_t k = 0; k < N_QP_COUNTERS; k++)
		j_u64(j, qp_counter_name(k, buf, sizeof(buf)), v->counters[k]);
	j_end(j);
	qp_cc_json(j, v, full);
	j_end(j);
}

static void qp_list_header(struct ctx *c)
{
	fprintf(c->out, "%-5s %-6s %-8s %-7s %-32s %-18s %-10s %-10s %-10s %-10s %-10s %-8s %s\n",
		"QPN", "STATE", "OWNER", "REMOTE", "PEERS", "EVS g/s/b/d/bk",
		"SND_UNA", "SND_NXT", "CACK", "RX_DATA", "TX_STAMPED", "LOSSES", "CWND");
}

/* The CWND column: bytes, "-" without a window, "off" with algorithm none. */
static const char *qp_cwnd_str(const struct qp_view *v, char *buf, size_t len)
{
	if (v->cc == QP_CC_NONE)
		return "-";
	if (v->cc == QP_CC_UNREADABLE)
		return "?";
	if (v->ccv.algo == MRC_CC_NONE)
		return "off";
	snprintf(buf, len, "%u", v->ccv.cwnd);
	return buf;
}

static void qp_list_row(struct ctx *c, const struct qp_view *v)
{
	char peers[8 * (INET6_ADDRSTRLEN + 1)], evs[48], owner[12], cwnd[16];

	snprintf(evs, sizeof(evs), "%u/%u/%u/%u/%u", v->good, v->skip, v->bad,
		 v->denied, v->backup);
	snprintf(owner, sizeof(owner), "%u", v->owner);
	fprintf(c->out, "%-5u %-6s %-8s %-7u %-32s %-18s %-10u %-10u %-10u %-10" PRIu64
		" %-10" PRIu64 " %-8" PRIu64 " %s\n",
		v->qpn, qp_state_name(v->info.state), v->owner ? owner : "-",
		v->info.remote_qpn, peers_str(&v->info, peers, sizeof(peers)), evs,
		v->tx.snd_una, v->tx.snd_nxt, v->rx.cack,
		v->counters[QP_COUNTER(rx_data)], v->counters[QP_COUNTER(tx_stamped)],
		v->counters[QP_COUNTER(losses)], qp_cwnd_str(v, cwnd, sizeof(cwnd)));
}

static int cmd_qp_list(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, {} };
	struct json j = { .f = c->out };
	struct qp_view *v;
	uint32_t n;

	if (next_opt(c, argc, argv, opts) != -1 || no_positionals(c, argc, argv))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;
	v = malloc(sizeof(*v));
	if (!v)
		return failure(c, "out of memory");
	if (c->json)
		j_arr(&j, NULL);
	else
		qp_list_header(c);
	for (n = 1; n <= MRC_MAX_QPS; n++) {
		if (read_qp_view(c, n, v) || v->info.state == MRC_QPS_RESET)
			continue;
		if (c->json)
			qp_json(&j, v, false);
		else
			qp_list_row(c, v);
	}
	if (c->json)
		j_arr_end(&j);
	free(v);
	return 0;
}

static void qp_cc_text(struct ctx *c, const struct qp_view *v)
{
	const struct mrc_cc_view *w = &v->ccv;
	char cwnd[32];

	if (v->cc == QP_CC_NONE) {
		fprintf(c->out, "  cc           none (no window)\n");
		return;
	}
	if (v->cc == QP_CC_UNREADABLE) {
		fprintf(c->out, "  cc           window %u: %s\n", v->info.cc_slot, v->cc_err);
		return;
	}
	if (w->algo == MRC_CC_NONE)
		snprintf(cwnd, sizeof(cwnd), "unlimited");
	else
		snprintf(cwnd, sizeof(cwnd), "%u bytes", w->cwnd);
	fprintf(c->out, "  cc           window %u: %s, cwnd %s, inflight %u bytes%s\n",
		v->info.cc_slot, cc_algo_name(w->algo), cwnd, w->inflight,
		w->waiting ? " (sender waiting)" : "");
	fprintf(c->out, "    rtt        base %.3f us (min %.3f us), p50 %.3f us, p99 %.3f us "
		"(%" PRIu64 " samples)\n", w->base_rtt_ns / 1e3, w->min_rtt_ns / 1e3,
		cc_rtt_percentile_ns(w, 50) / 1e3, cc_rtt_percentile_ns(w, 99) / 1e3,
		cc_rtt_samples(w));
	fprintf(c->out, "    delay      avg %.3f us, target %.3f us\n",
		w->avg_delay_ns / 1e3, w->target_ns / 1e3);
	fprintf(c->out, "    events     md %" PRIu64 ", fast %" PRIu64 ", qa %" PRIu64
		", trims %" PRIu64 ", losses %" PRIu64 "; %" PRIu64 " bytes acked\n",
		(uint64_t)w->n_md, (uint64_t)w->n_fast, (uint64_t)w->n_qa,
		(uint64_t)w->n_trims, (uint64_t)w->n_losses, (uint64_t)w->acked_bytes);
	if (v->have_ccp) {
		fprintf(c->out, "    params\n");
		cc_params_text(c, &v->ccp, "      ");
	}
}

static void qp_show_text(struct ctx *c, const struct qp_view *v)
{
	char peers[8 * (INET6_ADDRSTRLEN + 1)], buf[32];

	fprintf(c->out, "qp %u: %s\n", v->qpn, qp_state_name(v->info.state));
	if (v->owner)
		fprintf(c->out, "  owner pid    %u\n", v->owner);
	else
		fprintf(c->out, "  owner pid    -\n");
	fprintf(c->out, "  remote qpn   %u\n", v->info.remote_qpn);
	fprintf(c->out, "  peers        %s\n", peers_str(&v->info, peers, sizeof(peers)));
	fprintf(c->out, "  mpr          %u PSNs\n", v->info.mpr);
	fprintf(c->out, "  EVs          %u (%s): active %u GOOD, %u SKIP, %u ASSUMED_BAD, "
		"%u DENIED; %u backup\n", v->info.n_evs,
		ev_format_name(v->info.ev_format), v->good, v->skip, v->bad,
		v->denied, v->backup);
	fprintf(c->out, "  tx           snd_una %u snd_nxt %u sack_max %u wr %u..%u\n",
		v->tx.snd_una, v->tx.snd_nxt, v->tx.sack_max, v->tx.wr_head,
		v->tx.wr_tail);
	fprintf(c->out, "  rx           cack %u mpr %u sack_pending %u\n",
		v->rx.cack, v->rx.mpr, v->rx.sack_pending);
	fprintf(c->out, "  counters\n");
	for (size_t k = 0; k < N_QP_COUNTERS; k++)
		fprintf(c->out, "    %-14s %" PRIu64 "\n",
			qp_counter_name(k, buf, sizeof(buf)), v->counters[k]);
	qp_cc_text(c, v);
}

static int cmd_qp_show(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, {} };
	struct json j = { .f = c->out };
	struct qp_view *v;
	uint32_t qpn = 0;
	int rc;

	if (next_opt(c, argc, argv, opts) != -1)
		return AGENT_EXIT_USAGE;
	if (optind >= argc)
		return usage_error(c, "which QP? (mrcctl qp show N)");
	if (parse_qpn(c, argv[optind++], &qpn) || no_positionals(c, argc, argv))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;
	v = malloc(sizeof(*v));
	if (!v)
		return failure(c, "out of memory");
	rc = read_qp_view(c, qpn, v);
	if (rc)
		rc = failure(c, "reading QP %u: %s", qpn, strerror(-rc));
	else if (v->info.state == MRC_QPS_RESET)
		rc = failure(c, "there is no QP %u (in use: mrcctl qp list)", qpn);
	else if (c->json)
		qp_json(&j, v, true);
	else
		qp_show_text(c, v);
	free(v);
	return rc;
}

/* ---- ev list / deny / allow ------------------------------------------- */

struct ev_tables {
	struct mrc_qp_info info;
	struct mrc_qp_evs evs;
	struct mrc_qp_ev_stats stats;
};

static int cmd_ev_list(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "qp", required_argument, NULL, 'q' }, COMMON_OPTS, {}
	};
	struct json j = { .f = c->out };
	struct ev_tables *t;
	uint32_t qpn = 0, slot, i, n;
	int o, rc = 0;

	while ((o = next_opt(c, argc, argv, opts)) != -1) {
		if (o == '?' || (o == 'q' && parse_qpn(c, optarg, &qpn)))
			return AGENT_EXIT_USAGE;
	}
	if (no_positionals(c, argc, argv))
		return AGENT_EXIT_USAGE;
	if (!qpn)
		return usage_error(c, "--qp N is required");
	if (c->env->dry_run)
		return 0;
	t = calloc(1, sizeof(*t));
	if (!t)
		return failure(c, "out of memory");
	slot = qpn - 1;
	if (find_qp(c, qpn, &t->info)) {
		rc = AGENT_EXIT_FAIL;
		goto out;
	}
	if (bpf_map_lookup_elem(c->env->maps.qp_evs, &slot, &t->evs)) {
		rc = failure(c, "reading the EV table of QP %u: %s", qpn, strerror(errno));
		goto out;
	}
	/* Counters are a bonus: an EV table without them is still worth showing. */
	if (c->env->maps.ev_stats < 0 ||
	    bpf_map_lookup_elem(c->env->maps.ev_stats, &slot, &t->stats))
		memset(&t->stats, 0, sizeof(t->stats));
	n = n_evs_of(&t->info);
	if (c->json)
		j_arr(&j, NULL);
	else
		fprintf(c->out, "qp %u: %u EVs (%s)\n%-5s %-10s %-5s %-4s %-11s %-6s %12s %14s %12s %8s %8s %8s %9s\n",
			qpn, n, ev_format_name(t->info.ev_format), "INDEX", "EV",
			"PLANE", "PATH", "STATE", "ROLE", "PACKETS", "BYTES", "ACKED", "ECN",
			"TRIMS", "LOSSES", "RTT_US");
	for (i = 0; i < n; i++) {
		const struct mrc_ev_entry *e = &t->evs.ev[i];
		const struct mrc_ev_counters *s = &t->stats.ev[i];
		bool active = e->flags & MRC_EV_F_ACTIVE;
		double rtt = s->rtt_samples ? (double)s->rtt_sum_ns / s->rtt_samples / 1e3 : 0;
		char ev[16], rtt_s[24];

		snprintf(ev, sizeof(ev), "0x%x", e->ev);
		if (c->json) {
			j_obj(&j, NULL);
			j_u64(&j, "index", i);
			j_str(&j, "ev", ev);
			j_u64(&j, "plane", e->plane);
			/* The spine path discovery found (1-based), 0 = unknown. */
			j_u64(&j, "path", e->path);
			j_str(&j, "state", ev_state_name(e->state));
			j_bool(&j, "active", active);
			j_u64(&j, "packets", s->packets);
			j_u64(&j, "bytes", s->bytes);
			j_u64(&j, "acked", s->acked);
			j_u64(&j, "ecn", s->ecn);
			j_u64(&j, "trims", s->trims);
			j_u64(&j, "losses", s->losses);
			if (s->rtt_samples)
				j_dbl(&j, "rtt_us", rtt);
			else
				j_null(&j, "rtt_us");
			j_end(&j);
			continue;
		}
		if (s->rtt_samples)
			snprintf(rtt_s, sizeof(rtt_s), "%.1f", rtt);
		else
			snprintf(rtt_s, sizeof(rtt_s), "-");
		fprintf(c->out, "%-5u %-10s %-5u %-4u %-11s %-6s %12llu %14llu %12llu %8llu %8llu "
			"%8llu %9s\n", i, ev, e->plane, e->path, ev_state_name(e->state),
			active ? "active" : "backup", (unsigned long long)s->packets,
			(unsigned long long)s->bytes, (unsigned long long)s->acked,
			(unsigned long long)s->ecn, (unsigned long long)s->trims,
			(unsigned long long)s->losses, rtt_s);
	}
	if (c->json)
		j_arr_end(&j);
out:
	free(t);
	return rc;
}

/* Which entries of an EV table `ev deny` / `ev allow` act on. */
struct ev_selector {
	const char *ev_list, *index_list;
	uint32_t plane;			/* 0 = not given */
	int n_given;
};

static int check_selector(struct ctx *c, const struct ev_selector *sel)
{
	char *copy = NULL, *items[MRC_MAX_EVS];
	int n, i, rc = 0;
	uint32_t v;

	if (sel->n_given != 1)
		return usage_error(c, "give exactly one of --ev HEX[,HEX..], --plane P, "
				   "--index I[,I..]");
	if (sel->ev_list) {
		rc = split_list(c, "--ev", sel->ev_list, &copy, items, MRC_MAX_EVS, &n);
		for (i = 0; !rc && i < n; i++)
			if (parse_hex32(items[i], &v))
				rc = usage_error(c, "--ev: '%s' is not a hex EV", items[i]);
	} else if (sel->index_list) {
		rc = split_list(c, "--index", sel->index_list, &copy, items,
				MRC_MAX_EVS, &n);
		for (i = 0; !rc && i < n; i++) {
			uint64_t idx;

			if (parse_u64(items[i], MRC_MAX_EVS - 1, &idx))
				rc = usage_error(c, "--index: '%s' is not an index (0..%d)",
						 items[i], MRC_MAX_EVS - 1);
		}
	}
	free(copy);
	return rc;
}

/* Mark the selected entries in pick[]; a failure names what matched nothing. */
static int select_entries(struct ctx *c, uint32_t qpn, const struct ev_tables *t,
			  const struct ev_selector *sel, bool *pick)
{
	uint32_t i, n = n_evs_of(&t->info), v;
	char *copy = NULL, *items[MRC_MAX_EVS];
	int k, n_items = 0, rc = 0;
	bool found;

	memset(pick, 0, MRC_MAX_EVS * sizeof(*pick));
	if (sel->plane) {
		for (found = false, i = 0; i < n; i++)
			if (t->evs.ev[i].plane == sel->plane)
				found = pick[i] = true;
		if (!found)
			return failure(c, "QP %u has no EV on plane %u (see mrcctl ev list --qp %u)",
				       qpn, sel->plane, qpn);
		return 0;
	}
	rc = split_list(c, sel->ev_list ? "--ev" : "--index",
			sel->ev_list ? sel->ev_list : sel->index_list, &copy, items,
			MRC_MAX_EVS, &n_items);
	for (k = 0; !rc && k < n_items; k++) {
		if (sel->index_list) {
			uint64_t idx = 0;

			parse_u64(items[k], MRC_MAX_EVS - 1, &idx);
			if (idx >= n)
				rc = failure(c, "QP %u has EVs 0..%d: no index %" PRIu64,
					     qpn, (int)n - 1, idx);
			else
				pick[idx] = true;
			continue;
		}
		parse_hex32(items[k], &v);
		for (found = false, i = 0; i < n; i++)
			if (t->evs.ev[i].ev == v)
				found = pick[i] = true;
		if (!found)
			rc = failure(c, "EV 0x%x is not in QP %u's table (see mrcctl ev list "
				     "--qp %u)", v, qpn, qpn);
	}
	free(copy);
	return rc;
}

static int ev_set_state(struct ctx *c, int argc, char **argv, bool deny)
{
	static const struct option opts[] = {
		{ "qp", required_argument, NULL, 'q' },
		{ "ev", required_argument, NULL, 'e' },
		{ "plane", required_argument, NULL, 'p' },
		{ "index", required_argument, NULL, 'i' },
		COMMON_OPTS, {}
	};
	struct ev_selector sel = {};
	bool pick[MRC_MAX_EVS];
	struct json j = { .f = c->out };
	struct mrc_qp_evs *evs;
	struct ev_tables *t;
	uint32_t qpn = 0, slot, i, changed = 0;
	int o, rc = 0;

	while ((o = next_opt(c, argc, argv, opts)) != -1) {
		switch (o) {
		case 'q':
			if (parse_qpn(c, optarg, &qpn))
				return AGENT_EXIT_USAGE;
			break;
		case 'e':
			sel.ev_list = optarg;
			sel.n_given++;
			break;
		case 'i':
			sel.index_list = optarg;
			sel.n_given++;
			break;
		case 'p':
			if (parse_u32_arg(c, "--plane", optarg, MRC_MAX_PLANES_ABI,
					  &sel.plane))
				return AGENT_EXIT_USAGE;
			if (!sel.plane)
				return usage_error(c, "--plane: planes are 1..%d",
						   MRC_MAX_PLANES_ABI);
			sel.n_given++;
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
	}
	if (no_positionals(c, argc, argv))
		return AGENT_EXIT_USAGE;
	if (!qpn)
		return usage_error(c, "--qp N is required");
	if (check_selector(c, &sel))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;

	if (!c->env->ev_tables)
		return failure(c, "the EV tables are not mapped in mrcd");
	t = calloc(1, sizeof(*t));
	if (!t)
		return failure(c, "out of memory");
	slot = qpn - 1;
	if (find_qp(c, qpn, &t->info)) {
		rc = AGENT_EXIT_FAIL;
		goto out;
	}
	/* A snapshot to select from (EVs and planes never change in place). */
	if (bpf_map_lookup_elem(c->env->maps.qp_evs, &slot, &t->evs)) {
		rc = failure(c, "reading the EV table of QP %u: %s", qpn, strerror(errno));
		goto out;
	}
	if (select_entries(c, qpn, t, &sel, pick)) {
		rc = AGENT_EXIT_FAIL;
		goto out;
	}
	/*
	 * One compare-and-swap per entry on the shared table, as XDP, TC and
	 * libmrc change entries: nobody's concurrent change is undone.
	 */
	evs = ev_table_at(c->env->ev_tables, slot);
	for (i = 0; i < n_evs_of(&t->info); i++) {
		if (!pick[i])
			continue;
		if ((deny ? ev_deny : ev_allow)(evs, n_evs_of(&t->info), i) == EV_CHANGED)
			changed++;
	}
	if (c->json) {
		j_obj(&j, NULL);
		j_u64(&j, "qpn", qpn);
		j_str(&j, "action", deny ? "deny" : "allow");
		j_u64(&j, "changed", changed);
		j_end(&j);
	} else {
		fprintf(c->out, "qp %u: %u EV%s %s\n", qpn, changed, changed == 1 ? "" : "s",
			deny ? "denied" : "allowed again");
	}
out:
	free(t);
	return rc;
}

static int cmd_ev_deny(struct ctx *c, int argc, char **argv)
{
	return ev_set_state(c, argc, argv, true);
}

static int cmd_ev_allow(struct ctx *c, int argc, char **argv)
{
	return ev_set_state(c, argc, argv, false);
}

/* ---- ev expand (local) ------------------------------------------------ */

static int add_field_spec(struct ctx *c, struct ev_layout *l, const char *spec)
{
	char err[EV_ERR_LEN];

	if (l->n_fields >= EV_MAX_FIELDS)
		return usage_error(c, "at most %d --field options", EV_MAX_FIELDS);
	if (ev_parse_field_spec(spec, &l->fields[l->n_fields], err, sizeof(err)))
		return usage_error(c, "--field %s: %s", spec, err);
	l->n_fields++;
	return 0;
}

/* Compact EVs from --ev lists and the words after them. */
static int add_compact_evs(struct ctx *c, const char *list, uint32_t *evs,
			   unsigned int *n)
{
	char *copy = NULL, *items[MRC_MAX_EVS];
	int k, n_items, rc;

	rc = split_list(c, "--ev", list, &copy, items, MRC_MAX_EVS, &n_items);
	for (k = 0; !rc && k < n_items; k++) {
		if (*n >= MRC_MAX_EVS)
			rc = usage_error(c, "at most %d EVs at a time", MRC_MAX_EVS);
		else if (parse_hex32(items[k], &evs[*n]))
			rc = usage_error(c, "'%s' is not a hex EV", items[k]);
		else
			(*n)++;
	}
	free(copy);
	return rc;
}

static void expand_report(struct ctx *c, struct json *j, const struct ev_layout *l,
			  uint32_t compact, int *invalid)
{
	unsigned int digits = (ev_layout_wire_bits(l) + 3) / 4;
	char err[EV_ERR_LEN], wire_s[16];
	uint32_t wire;

	if (ev_layout_expand(l, compact, &wire, err, sizeof(err))) {
		(*invalid)++;
		if (c->json) {
			j_obj(j, NULL);
			j_hex(j, "compact", compact);
			j_null(j, "wire");
			j_str(j, "error", err);
			j_end(j);
		} else {
			fprintf(c->out, "0x%x -> invalid: %s\n", compact, err);
		}
		return;
	}
	snprintf(wire_s, sizeof(wire_s), "0x%0*x", (int)digits, wire);
	if (c->json) {
		j_obj(j, NULL);
		j_hex(j, "compact", compact);
		j_str(j, "wire", wire_s);
		j_end(j);
	} else {
		fprintf(c->out, "0x%x -> %s\n", compact, wire_s);
	}
}

static int cmd_ev_expand(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "fmt-fields", required_argument, NULL, 'w' },
		{ "field", required_argument, NULL, 'f' },
		{ "ev", required_argument, NULL, 'e' },
		COMMON_OPTS, {}
	};
	struct json j = { .f = c->out };
	char err[EV_ERR_LEN];
	struct ev_layout l = {};
	uint32_t evs[MRC_MAX_EVS];
	unsigned int n_evs = 0, i;
	bool have_fmt = false, have_ev = false;
	int o, invalid = 0;

	/* Pure computation: done here even when mrcd is not running. */
	c->done = true;
	while ((o = next_opt(c, argc, argv, opts)) != -1) {
		switch (o) {
		case 'w':
			if (ev_parse_fmt_fields(optarg, l.fmt, EV_MAX_FIELDS, &l.n_fmt,
						err, sizeof(err)))
				return usage_error(c, "--fmt-fields %s: %s", optarg, err);
			have_fmt = true;
			break;
		case 'f':
			if (add_field_spec(c, &l, optarg))
				return AGENT_EXIT_USAGE;
			break;
		case 'e':
			if (add_compact_evs(c, optarg, evs, &n_evs))
				return AGENT_EXIT_USAGE;
			have_ev = true;
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
	}
	/* `--ev A B C`: the words after --ev are more EVs. */
	for (; optind < argc; optind++) {
		if (!have_ev)
			return usage_error(c, "unexpected argument '%s'", argv[optind]);
		if (add_compact_evs(c, argv[optind], evs, &n_evs))
			return AGENT_EXIT_USAGE;
	}
	if (!have_fmt)
		return usage_error(c, "--fmt-fields W[,W..] is required (e.g. 16,16 for STEV)");
	if (!l.n_fields)
		return usage_error(c, "at least one --field width=W,... is required");
	if (!n_evs)
		return usage_error(c, "--ev HEX [HEX...] is required");
	if (ev_layout_validate(&l, 32, 1, err, sizeof(err)))
		return usage_error(c, "the layout is not valid: %s", err);

	if (c->json)
		j_arr(&j, NULL);
	for (i = 0; i < n_evs; i++)
		expand_report(c, &j, &l, evs[i], &invalid);
	if (c->json)
		j_arr_end(&j);
	return invalid ? AGENT_EXIT_FAIL : 0;
}

/* ---- profiles: common ------------------------------------------------- */

static int parse_profile_id(struct ctx *c, int argc, char **argv, uint32_t *id)
{
	uint64_t v;

	if (optind >= argc)
		return usage_error(c, "which profile? (an ID in 0..%d)", MRC_MAX_PROFILES - 1);
	if (parse_u64(argv[optind], MRC_MAX_PROFILES - 1, &v))
		return usage_error(c, "'%s' is not a profile ID (0..%d)", argv[optind],
				   MRC_MAX_PROFILES - 1);
	optind++;
	*id = (uint32_t)v;
	return no_positionals(c, argc, argv);
}

/* Profile ids in the map, sorted. */
static int profile_ids(int fd, uint32_t *ids, int max)
{
	uint32_t key, next;
	int n = 0, i, k;
	bool first = true;

	while (n < max && !bpf_map_get_next_key(fd, first ? NULL : &key, &next)) {
		ids[n++] = next;
		key = next;
		first = false;
	}
	for (i = 1; i < n; i++)
		for (k = i; k > 0 && ids[k - 1] > ids[k]; k--) {
			uint32_t tmp = ids[k];

			ids[k] = ids[k - 1];
			ids[k - 1] = tmp;
		}
	return n;
}

/* ---- profile ev ------------------------------------------------------- */

struct ev_profile_edit {
	const char *type, *format, *fmt_fields, *ev_list, *count, *min_active;
	const char *backups, *event_mask;
	const char *fields[EV_MAX_FIELDS];
	unsigned int n_fields;
	bool any;
};

static int parse_ev_profile_opts(struct ctx *c, int argc, char **argv,
				 struct ev_profile_edit *e, bool create)
{
	static const struct option opts[] = {
		{ "type", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'F' },
		{ "fmt-fields", required_argument, NULL, 'w' },
		{ "field", required_argument, NULL, 'f' },
		{ "ev", required_argument, NULL, 'e' },
		{ "event-mask", required_argument, NULL, 'm' },
		{ "count", required_argument, NULL, 'n' },
		{ "min-active", required_argument, NULL, 'a' },
		{ "backups", required_argument, NULL, 'b' },
		COMMON_OPTS, {}
	};
	int o;

	while ((o = next_opt(c, argc, argv, opts)) != -1) {
		switch (o) {
		case 't': e->type = optarg; break;
		case 'F': e->format = optarg; break;
		case 'w': e->fmt_fields = optarg; break;
		case 'e': e->ev_list = optarg; break;
		case 'm': e->event_mask = optarg; break;
		case 'n': e->count = optarg; break;
		case 'a': e->min_active = optarg; break;
		case 'b': e->backups = optarg; break;
		case 'f':
			if (e->n_fields >= EV_MAX_FIELDS)
				return usage_error(c, "at most %d --field options", EV_MAX_FIELDS);
			e->fields[e->n_fields++] = optarg;
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
		e->any = true;
	}
	if (create && !e->type)
		return usage_error(c, "--type explicit|generated|auto is required");
	if (create && (e->fmt_fields || e->n_fields || e->ev_list || e->event_mask))
		return usage_error(c, "create takes --type, --format, --count, "
				   "--min-active and --backups; the rest is for "
				   "'mrcctl profile ev set'");
	if (!create && e->type)
		return usage_error(c, "--type is fixed at create (delete and create again)");
	return 0;
}

static int parse_type(struct ctx *c, const char *s, enum ev_profile_type *t)
{
	if (!strcasecmp(s, "explicit"))
		*t = EV_PROFILE_EXPLICIT;
	else if (!strcasecmp(s, "generated"))
		*t = EV_PROFILE_GENERATED;
	else if (!strcasecmp(s, "auto"))
		*t = EV_PROFILE_AUTO;
	else
		return usage_error(c, "--type: '%s' is not explicit, generated or auto", s);
	return 0;
}

static int parse_format(struct ctx *c, const char *s, uint32_t *f)
{
	if (!strcasecmp(s, "udp"))
		*f = MRC_EVF_UDP;
	else if (!strcasecmp(s, "stev"))
		*f = MRC_EVF_STEV;
	else if (!strcasecmp(s, "srv6"))
		*f = EV_FMT_SRV6;	/* refused by ev_profile.c, with its reason */
	else
		return usage_error(c, "--format: '%s' is not udp or stev", s);
	return 0;
}

/* The syntax checks of an edit, possible without the profile itself. */
static int check_ev_profile_edit(struct ctx *c, const struct ev_profile_edit *e)
{
	char err[EV_ERR_LEN], *copy = NULL, *items[MRC_MAX_EVS];
	enum ev_profile_type t;
	struct ev_field f;
	uint8_t widths[EV_MAX_FIELDS];
	uint32_t v;
	unsigned int n, i;
	int k, n_items, rc = 0;

	if (e->type && parse_type(c, e->type, &t))
		return AGENT_EXIT_USAGE;
	if (e->format && parse_format(c, e->format, &v))
		return AGENT_EXIT_USAGE;
	if (e->fmt_fields && ev_parse_fmt_fields(e->fmt_fields, widths, EV_MAX_FIELDS,
						 &n, err, sizeof(err)))
		return usage_error(c, "--fmt-fields %s: %s", e->fmt_fields, err);
	for (i = 0; i < e->n_fields; i++)
		if (ev_parse_field_spec(e->fields[i], &f, err, sizeof(err)))
			return usage_error(c, "--field %s: %s", e->fields[i], err);
	if (e->count && parse_u32_arg(c, "--count", e->count, MRC_MAX_EVS, &v))
		return AGENT_EXIT_USAGE;
	if (e->min_active && parse_u32_arg(c, "--min-active", e->min_active,
					   MRC_MAX_EVS, &v))
		return AGENT_EXIT_USAGE;
	if (e->backups && parse_u32_arg(c, "--backups", e->backups, MRC_MAX_EVS, &v))
		return AGENT_EXIT_USAGE;
	if (e->event_mask && parse_u32_arg(c, "--event-mask", e->event_mask,
					   UINT32_MAX, &v))
		return AGENT_EXIT_USAGE;
	if (!e->ev_list)
		return 0;
	rc = split_list(c, "--ev", e->ev_list, &copy, items, MRC_MAX_EVS, &n_items);
	for (k = 0; !rc && k < n_items; k++) {
		char *at = strchr(items[k], '@');
		uint64_t plane;

		if (at)
			*at++ = '\0';
		if (parse_hex32(items[k], &v))
			rc = usage_error(c, "--ev: '%s' is not a hex EV", items[k]);
		else if (at && parse_u64(at, EV_MAX_PLANES, &plane))
			rc = usage_error(c, "--ev: plane '%s' is not 0..%d", at, EV_MAX_PLANES);
	}
	free(copy);
	return rc;
}

static int read_ev_profile(struct ctx *c, uint32_t id, struct ev_profile *p,
			   uint32_t *backups)
{
	struct mrc_ev_profile_rec *rec = malloc(sizeof(*rec));
	int rc = 0;

	if (!rec)
		return failure(c, "out of memory");
	if (bpf_map_lookup_elem(c->env->maps.ev_profiles, &id, rec))
		rc = errno == ENOENT ?
			failure(c, "there is no EV profile %u (create it: mrcctl profile "
				"ev create %u --type ...)", id, id) :
			failure(c, "reading EV profile %u: %s", id, strerror(errno));
	else if (ev_profile_from_rec(rec, p, backups))
		rc = failure(c, "EV profile %u in the map is damaged: delete it "
			     "(mrcctl profile ev delete %u)", id, id);
	free(rec);
	return rc;
}

static int write_ev_profile(struct ctx *c, const struct ev_profile *p,
			    uint32_t backups, uint64_t flags)
{
	struct mrc_ev_profile_rec *rec = malloc(sizeof(*rec));
	uint32_t id = p->id;
	int rc = 0;

	if (!rec)
		return failure(c, "out of memory");
	ev_profile_to_rec(p, backups, rec);
	if (bpf_map_update_elem(c->env->maps.ev_profiles, &id, rec, flags))
		rc = errno == EEXIST ?
			failure(c, "EV profile %u exists already (change it with "
				"mrcctl profile ev set %u, or delete it first)", id, id) :
		     errno == E2BIG ?
			failure(c, "no room for EV profile %u: %d profiles exist", id,
				MRC_MAX_PROFILES) :
			failure(c, "writing EV profile %u: %s", id, strerror(errno));
	free(rec);
	return rc;
}

static void ev_profile_json(struct json *j, const struct ev_profile *p,
			    uint32_t backups)
{
	unsigned int i;

	j_obj(j, NULL);
	j_u64(j, "id", p->id);
	j_str(j, "type", ev_profile_type_name(p->type));
	j_str(j, "state", ev_profile_state_name(p->state));
	j_str(j, "format", ev_format_name(p->format));
	j_u64(j, "ev_count", p->ev_count);
	j_u64(j, "min_active", p->ev_min_active);
	j_u64(j, "backups_per_plane", backups);
	j_u64(j, "event_mask", p->event_mask);
	j_arr(j, "fmt_fields");
	for (i = 0; i < p->layout.n_fmt && i < EV_MAX_FIELDS; i++)
		j_u64(j, NULL, p->layout.fmt[i]);
	j_arr_end(j);
	j_arr(j, "fields");
	for (i = 0; i < p->layout.n_fields && i < EV_MAX_FIELDS; i++) {
		const struct ev_field *f = &p->layout.fields[i];

		j_obj(j, NULL);
		j_u64(j, "width", f->width);
		j_hex(j, "init", f->init);
		j_hex(j, "min", f->min);
		j_hex(j, "max", f->max);
		j_hex(j, "mask", f->mask);
		j_end(j);
	}
	j_arr_end(j);
	j_arr(j, "explicit");
	for (i = 0; i < p->n_explicit && i < MRC_MAX_EVS; i++) {
		j_obj(j, NULL);
		j_hex(j, "ev", p->explicit_evs[i].ev);
		j_u64(j, "plane", p->explicit_evs[i].plane);
		j_end(j);
	}
	j_arr_end(j);
	j_end(j);
}

static void ev_profile_text(struct ctx *c, const struct ev_profile *p,
			    uint32_t backups)
{
	unsigned int i;

	fprintf(c->out, "ev profile %u: %s, %s, %s\n", p->id,
		ev_profile_type_name(p->type), ev_format_name(p->format),
		ev_profile_state_name(p->state));
	fprintf(c->out, "  ev_count %u, min_active %u, backups/plane %u, event_mask 0x%x\n",
		p->ev_count, p->ev_min_active, backups, p->event_mask);
	fprintf(c->out, "  fmt-fields ");
	for (i = 0; i < p->layout.n_fmt && i < EV_MAX_FIELDS; i++)
		fprintf(c->out, "%s%u", i ? "," : "", p->layout.fmt[i]);
	fputc('\n', c->out);
	for (i = 0; i < p->layout.n_fields && i < EV_MAX_FIELDS; i++) {
		const struct ev_field *f = &p->layout.fields[i];

		fprintf(c->out, "  field %u: width=%u,init=0x%x,min=0x%x,max=0x%x,mask=0x%x\n",
			i + 1, f->width, f->init, f->min, f->max, f->mask);
	}
	if (p->type == EV_PROFILE_EXPLICIT) {
		fprintf(c->out, "  explicit EVs (%u):", p->n_explicit);
		for (i = 0; i < p->n_explicit && i < MRC_MAX_EVS; i++)
			fprintf(c->out, "%s0x%x@%u", i % 8 ? " " : "\n    ",
				p->explicit_evs[i].ev, p->explicit_evs[i].plane);
		fputc('\n', c->out);
	}
}

static void print_ev_profile(struct ctx *c, const struct ev_profile *p,
			     uint32_t backups)
{
	struct json j = { .f = c->out };

	if (c->json)
		ev_profile_json(&j, p, backups);
	else
		ev_profile_text(c, p, backups);
}

static int apply_explicit_list(struct ctx *c, struct ev_profile *p, const char *list)
{
	char err[EV_ERR_LEN], *copy = NULL, *items[MRC_MAX_EVS];
	int k, n_items, rc;

	rc = split_list(c, "--ev", list, &copy, items, MRC_MAX_EVS, &n_items);
	if (!rc && ev_profile_clear_explicit(p, err, sizeof(err)))
		rc = failure(c, "%s", err);
	for (k = 0; !rc && k < n_items; k++) {
		char *at = strchr(items[k], '@');
		uint64_t plane = 0;
		uint32_t ev = 0;

		if (at) {
			*at++ = '\0';
			parse_u64(at, EV_MAX_PLANES, &plane);
		}
		parse_hex32(items[k], &ev);
		if (ev_profile_add_explicit(p, ev, (uint16_t)plane, err, sizeof(err)))
			rc = failure(c, "%s", err);
	}
	free(copy);
	return rc;
}

static int apply_fields(struct ctx *c, struct ev_profile *p,
			const struct ev_profile_edit *e)
{
	char err[EV_ERR_LEN];
	struct ev_field f;
	unsigned int i;

	if (ev_profile_clear_fields(p, err, sizeof(err)))
		return failure(c, "%s", err);
	for (i = 0; i < e->n_fields; i++) {
		ev_parse_field_spec(e->fields[i], &f, err, sizeof(err));
		if (ev_profile_add_field(p, &f, err, sizeof(err)))
			return failure(c, "%s", err);
	}
	return 0;
}

static int apply_counts(struct ctx *c, struct ev_profile *p,
			const struct ev_profile_edit *e)
{
	uint32_t count = p->ev_count, min_active = p->ev_min_active;
	char err[EV_ERR_LEN];

	if (e->count) {
		parse_u32_arg(c, "--count", e->count, MRC_MAX_EVS, &count);
		/* A new count without --min-active takes the default for it. */
		min_active = EV_MIN_ACTIVE_DEFAULT;
	}
	if (e->min_active)
		parse_u32_arg(c, "--min-active", e->min_active, MRC_MAX_EVS, &min_active);
	if (ev_profile_set_counts(p, count, min_active, err, sizeof(err)))
		return failure(c, "%s", err);
	return 0;
}

/*
 * Apply every edit to `p`, in an order where later ones see earlier ones
 * (the format resets the wire fields). Nothing is written on failure.
 */
static int apply_ev_profile_edit(struct ctx *c, struct ev_profile *p,
				 uint32_t *backups, const struct ev_profile_edit *e)
{
	char err[EV_ERR_LEN];
	uint8_t widths[EV_MAX_FIELDS];
	uint32_t v;
	unsigned int n;

	if (p->state == EV_PROFILE_STATE_ONLINE &&
	    (e->format || e->fmt_fields || e->n_fields || e->ev_list || e->count ||
	     e->min_active || e->backups))
		return failure(c, "profile %u is ONLINE: take it OFFLINE to edit it "
			       "(mrcctl profile ev offline %u)", p->id, p->id);
	if (e->format) {
		parse_format(c, e->format, &v);
		if (ev_profile_set_format(p, v, err, sizeof(err)))
			return failure(c, "%s", err);
	}
	if (e->fmt_fields) {
		ev_parse_fmt_fields(e->fmt_fields, widths, EV_MAX_FIELDS, &n, err,
				    sizeof(err));
		if (ev_profile_set_fmt_fields(p, widths, n, err, sizeof(err)))
			return failure(c, "%s", err);
	}
	if (e->n_fields && apply_fields(c, p, e))
		return AGENT_EXIT_FAIL;
	if (e->ev_list && apply_explicit_list(c, p, e->ev_list))
		return AGENT_EXIT_FAIL;
	if ((e->count || e->min_active) && apply_counts(c, p, e))
		return AGENT_EXIT_FAIL;
	if (e->event_mask) {
		parse_u32_arg(c, "--event-mask", e->event_mask, UINT32_MAX, &v);
		ev_profile_set_event_mask(p, v);
	}
	if (e->backups)
		parse_u32_arg(c, "--backups", e->backups, MRC_MAX_EVS, backups);
	return 0;
}

static int cmd_profile_ev_create(struct ctx *c, int argc, char **argv)
{
	struct ev_profile_edit e = {};
	enum ev_profile_type type;
	uint32_t id, format = MRC_EVF_UDP, backups = 0;
	char err[EV_ERR_LEN];
	struct ev_profile *p;
	int rc;

	if (parse_ev_profile_opts(c, argc, argv, &e, true) ||
	    parse_profile_id(c, argc, argv, &id) || check_ev_profile_edit(c, &e))
		return AGENT_EXIT_USAGE;
	parse_type(c, e.type, &type);
	if (e.format)
		parse_format(c, e.format, &format);
	if (c->env->dry_run)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return failure(c, "out of memory");
	rc = ev_profile_init(p, (uint16_t)id, type, format, err, sizeof(err));
	if (rc)
		rc = failure(c, "%s", err);
	e.format = NULL;	/* done by ev_profile_init */
	if (!rc)
		rc = apply_ev_profile_edit(c, p, &backups, &e);
	if (!rc)
		rc = write_ev_profile(c, p, backups, BPF_NOEXIST);
	if (!rc && c->json)
		print_ev_profile(c, p, backups);
	else if (!rc)
		fprintf(c->out, "ev profile %u created: %s, %s, INIT\n", id,
			ev_profile_type_name(p->type), ev_format_name(p->format));
	free(p);
	return rc;
}

static int cmd_profile_ev_set(struct ctx *c, int argc, char **argv)
{
	struct ev_profile_edit e = {};
	struct ev_profile *p;
	uint32_t id, backups;
	int rc;

	if (parse_ev_profile_opts(c, argc, argv, &e, false) ||
	    parse_profile_id(c, argc, argv, &id) || check_ev_profile_edit(c, &e))
		return AGENT_EXIT_USAGE;
	if (!e.any)
		return usage_error(c, "nothing to change: give --fmt-fields, --field, "
				   "--ev, --event-mask, --count, --min-active or --backups");
	if (c->env->dry_run)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return failure(c, "out of memory");
	rc = read_ev_profile(c, id, p, &backups);
	if (!rc)
		rc = apply_ev_profile_edit(c, p, &backups, &e);
	if (!rc)
		rc = write_ev_profile(c, p, backups, BPF_EXIST);
	if (!rc)
		print_ev_profile(c, p, backups);
	free(p);
	return rc;
}

/*
 * Going ONLINE: the profile must be valid, and it must be able to build a
 * QP's EV table on this host's planes with its backups.
 */
static int check_generates(struct ctx *c, const struct ev_profile *p,
			   uint32_t backups)
{
	struct ev_table_entry *table = calloc(MRC_MAX_EVS, sizeof(*table));
	unsigned int n_planes = c->env->n_planes ? c->env->n_planes : 1, n;
	char err[EV_ERR_LEN];
	int rc = 0;

	if (!table)
		return failure(c, "out of memory");
	if (ev_profile_generate(p, n_planes, backups, table, MRC_MAX_EVS, &n, err,
				sizeof(err)))
		rc = failure(c, "profile %u cannot build an EV table on %u plane%s: %s",
			     p->id, n_planes, n_planes == 1 ? "" : "s", err);
	free(table);
	return rc;
}

static int profile_ev_state(struct ctx *c, int argc, char **argv,
			    enum ev_profile_state to)
{
	static const struct option opts[] = { COMMON_OPTS, {} };
	char err[EV_ERR_LEN];
	struct ev_profile *p;
	uint32_t id, backups;
	int rc;

	if (next_opt(c, argc, argv, opts) != -1 || parse_profile_id(c, argc, argv, &id))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return failure(c, "out of memory");
	rc = read_ev_profile(c, id, p, &backups);
	if (!rc && ev_profile_set_state(p, to, err, sizeof(err)))
		rc = failure(c, "profile %u: %s", id, err);
	if (!rc && to == EV_PROFILE_STATE_ONLINE)
		rc = check_generates(c, p, backups);
	if (!rc)
		rc = write_ev_profile(c, p, backups, BPF_EXIST);
	if (!rc && c->json)
		print_ev_profile(c, p, backups);
	else if (!rc)
		fprintf(c->out, "ev profile %u is %s\n", id, ev_profile_state_name(p->state));
	free(p);
	return rc;
}

static int cmd_profile_ev_online(struct ctx *c, int argc, char **argv)
{
	return profile_ev_state(c, argc, argv, EV_PROFILE_STATE_ONLINE);
}

static int cmd_profile_ev_offline(struct ctx *c, int argc, char **argv)
{
	return profile_ev_state(c, argc, argv, EV_PROFILE_STATE_OFFLINE);
}

static int cmd_profile_ev_show(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, {} };
	struct json j = { .f = c->out };
	uint32_t ids[MRC_MAX_PROFILES], id, backups;
	struct ev_profile *p;
	bool one = false;
	int n, i, rc = 0;

	if (next_opt(c, argc, argv, opts) != -1)
		return AGENT_EXIT_USAGE;
	if (optind < argc) {
		if (parse_profile_id(c, argc, argv, &id))
			return AGENT_EXIT_USAGE;
		one = true;
	}
	if (c->env->dry_run)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return failure(c, "out of memory");
	if (one) {
		rc = read_ev_profile(c, id, p, &backups);
		if (!rc)
			print_ev_profile(c, p, backups);
		free(p);
		return rc;
	}
	n = profile_ids(c->env->maps.ev_profiles, ids, MRC_MAX_PROFILES);
	if (c->json)
		j_arr(&j, NULL);
	else if (!n)
		fprintf(c->out, "no EV profiles (QPs use the built-in AUTO profile)\n");
	for (i = 0; i < n; i++) {
		if (read_ev_profile(c, ids[i], p, &backups)) {
			rc = AGENT_EXIT_FAIL;
			continue;
		}
		if (c->json)
			ev_profile_json(&j, p, backups);
		else
			ev_profile_text(c, p, backups);
	}
	if (c->json)
		j_arr_end(&j);
	free(p);
	return rc;
}

static int cmd_profile_ev_delete(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, {} };
	struct json j = { .f = c->out };
	struct ev_profile *p;
	uint32_t id, backups;
	int rc;

	if (next_opt(c, argc, argv, opts) != -1 || parse_profile_id(c, argc, argv, &id))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return failure(c, "out of memory");
	rc = read_ev_profile(c, id, p, &backups);
	if (!rc && p->state == EV_PROFILE_STATE_ONLINE)
		rc = failure(c, "profile %u is ONLINE: take it OFFLINE before deleting it "
			     "(mrcctl profile ev offline %u)", id, id);
	if (!rc && bpf_map_delete_elem(c->env->maps.ev_profiles, &id))
		rc = failure(c, "deleting EV profile %u: %s", id, strerror(errno));
	free(p);
	if (rc)
		return rc;
	if (c->json) {
		j_obj(&j, NULL);
		j_u64(&j, "deleted", id);
		j_end(&j);
	} else {
		fprintf(c->out, "ev profile %u deleted\n", id);
	}
	return 0;
}

/* ---- profile cc ------------------------------------------------------- */

#define CC_GAMMA_DEFAULT	800
#define CC_MAX_MD_JUMP_DEFAULT	500
#define CC_QA_GATE_DEFAULT	3
#define CC_QA_GATE_MAX		31		/* a shift of max_cwnd */
#define CC_FACTOR_MAX		1000000		/* fi-scale: 1000 x, in thousandths */
#define CC_LINK_MBPS_MAX	10000000u	/* 10 Tb/s per plane */
#define CC_US_MAX		(UINT32_MAX / 1000)	/* times are ns in 32 bits */
#define CC_MTU_MIN		256		/* libmrc's path MTUs */
#define CC_MTU_MAX		9000
#define CC_BASE_RTTS_MAX	100		/* target, adjust period: base RTTs */

/* How a profile parameter is typed on the command line, stored and shown. */
enum cc_unit {
	CC_US,		/* microseconds typed, ns stored */
	CC_BYTES,	/* a size (64k), below 4 GiB */
	CC_FRACTION,	/* (0, 1] with 3 decimals, stored x 1000 */
	CC_FACTOR,	/* 0..1000 with 3 decimals, stored x 1000 */
	CC_SHIFT,	/* 0..31 */
	CC_MBPS,	/* Mb/s */
};

struct cc_param {
	const char *opt;	/* the option, without "--" */
	const char *key;	/* JSON key */
	const char *name;	/* text label */
	enum cc_unit unit;
	size_t off;		/* its __u32 in struct mrc_cc_profile_rec */
	const char *zero;	/* what 0 stands for; NULL: 0 is a plain value */
	const char *example;
};

#define CC_REC(f)	offsetof(struct mrc_cc_profile_rec, f)

/* In the order show prints them; JSON keys as in struct mrc_cc_profile_rec. */
static const struct cc_param cc_params[] = {
	{ "base-rtt-us", "base_rtt_ns", "base_rtt", CC_US, CC_REC(base_rtt_ns),
	  "the smallest RTT measured", "20" },
	{ "target-delay-us", "target_delay_ns", "target_delay", CC_US,
	  CC_REC(target_delay_ns), "0.75 x base RTT", "15" },
	{ "max-cwnd", "max_cwnd_bytes", "max_cwnd", CC_BYTES, CC_REC(max_cwnd_bytes),
	  "1.5 x BDP", "256k" },
	{ "link-mbps", "link_mbps", "link", CC_MBPS, CC_REC(link_mbps),
	  "the slowest plane device's speed", "100000" },
	{ "gamma", "gamma", "gamma", CC_FRACTION, CC_REC(gamma_milli), "0.8", "0.8" },
	{ "max-md-jump", "max_md_jump", "max_md_jump", CC_FRACTION,
	  CC_REC(max_md_jump_milli), "0.5", "0.5" },
	{ "qa-gate", "qa_gate", "qa_gate", CC_SHIFT, CC_REC(qa_gate), "3", "3" },
	{ "qa-threshold-us", "qa_threshold_ns", "qa_threshold", CC_US,
	  CC_REC(qa_threshold_ns), "4 x target delay", "60" },
	{ "fi", "fi_bytes", "fi", CC_BYTES, CC_REC(fi_bytes), "5 MTU x a", "32k" },
	{ "fi-scale", "fi_scale", "fi_scale", CC_FACTOR, CC_REC(fi_scale_milli),
	  "0.25 x a", "0.25 or 2.5" },
	{ "eta", "eta_bytes", "eta", CC_BYTES, CC_REC(eta_bytes), "0.15 MTU x a", "1k" },
	{ "alpha", "alpha_bytes", "alpha", CC_BYTES, CC_REC(alpha_bytes),
	  "4 a b MTU", "64k" },
	{ "adjust-bytes", "adjust_bytes", "adjust_bytes", CC_BYTES, CC_REC(adjust_bytes),
	  "8 MTU", "32k" },
	{ "adjust-period-us", "adjust_period_ns", "adjust_period", CC_US,
	  CC_REC(adjust_period_ns), "base RTT", "20" },
};

#define N_CC_PARAMS	(sizeof(cc_params) / sizeof(cc_params[0]))

static uint32_t cc_value(const struct mrc_cc_profile_rec *r, const struct cc_param *p)
{
	uint32_t v;

	memcpy(&v, (const char *)r + p->off, sizeof(v));
	return v;
}

/* A parameter's option argument -> its stored value, or a usage error. */
static int parse_cc_value(struct ctx *c, const struct cc_param *p, const char *s,
			  uint32_t *out)
{
	uint64_t v;

	switch (p->unit) {
	case CC_US:
		if (parse_u64(s, CC_US_MAX, &v))
			return usage_error(c, "--%s: '%s' is not a number of us (0..%u; "
					   "0 = %s)", p->opt, s, CC_US_MAX, p->zero);
		*out = (uint32_t)v * 1000;
		return 0;
	case CC_BYTES:
		if (parse_size(s, &v) || v > UINT32_MAX)
			return usage_error(c, "--%s: '%s' is not a size in bytes below 4g "
					   "(e.g. %s; 0 = %s)", p->opt, s, p->example, p->zero);
		*out = (uint32_t)v;
		return 0;
	case CC_FRACTION:
		if (parse_milli(s, 1000, out) || !*out)
			return usage_error(c, "--%s: '%s' is not a fraction in (0, 1], e.g. %s",
					   p->opt, s, p->example);
		return 0;
	case CC_FACTOR:
		if (parse_milli(s, CC_FACTOR_MAX, out))
			return usage_error(c, "--%s: '%s' is not a factor in 0..1000 with up "
					   "to 3 decimals, e.g. %s (0 = %s)", p->opt, s,
					   p->example, p->zero);
		return 0;
	case CC_SHIFT:
		if (parse_u64(s, CC_QA_GATE_MAX, &v))
			return usage_error(c, "--%s: '%s' is not a shift in 0..%d", p->opt, s,
					   CC_QA_GATE_MAX);
		*out = (uint32_t)v;
		return 0;
	case CC_MBPS:
		if (parse_u64(s, CC_LINK_MBPS_MAX, &v))
			return usage_error(c, "--%s: '%s' is not a speed in Mb/s (0..%u; "
					   "0 = %s)", p->opt, s, CC_LINK_MBPS_MAX, p->zero);
		*out = (uint32_t)v;
		return 0;
	}
	return usage_error(c, "--%s: unknown unit", p->opt);
}

/* A value for text: with its unit, or what it stands for when 0. */
static const char *cc_value_str(const struct cc_param *p, uint32_t v, char *buf,
				size_t len)
{
	if (!v && p->zero)
		snprintf(buf, len, "(derived: %s)", p->zero);
	else if (p->unit == CC_US)
		snprintf(buf, len, "%.6g us", v / 1e3);
	else if (p->unit == CC_BYTES)
		snprintf(buf, len, "%u bytes", v);
	else if (p->unit == CC_FRACTION || p->unit == CC_FACTOR)
		snprintf(buf, len, "%.3f", v / 1000.0);
	else if (p->unit == CC_MBPS)
		snprintf(buf, len, "%u Mb/s", v);
	else
		snprintf(buf, len, "%u", v);
	return buf;
}

enum {
	CC_OPT_ALGO = 0x2000, CC_OPT_ENABLE, CC_OPT_DISABLE, CC_OPT_QA_ON,
	CC_OPT_QA_OFF, CC_OPT_PACE_ON, CC_OPT_PACE_OFF, CC_OPT_PARAM = 0x2100,
};

/* create's and set's options: one per parameter, and the switches. */
static const struct option *cc_edit_options(void)
{
	static struct option opts[N_CC_PARAMS + 10];
	size_t i, n = 0;

	if (opts[0].name)
		return opts;
	for (i = 0; i < N_CC_PARAMS; i++)
		opts[n++] = (struct option){ cc_params[i].opt, required_argument, NULL,
					     CC_OPT_PARAM + (int)i };
	opts[n++] = (struct option){ "algo", required_argument, NULL, CC_OPT_ALGO };
	opts[n++] = (struct option){ "enable", no_argument, NULL, CC_OPT_ENABLE };
	opts[n++] = (struct option){ "disable", no_argument, NULL, CC_OPT_DISABLE };
	opts[n++] = (struct option){ "enable-qa", no_argument, NULL, CC_OPT_QA_ON };
	opts[n++] = (struct option){ "disable-qa", no_argument, NULL, CC_OPT_QA_OFF };
	opts[n++] = (struct option){ "enable-pacing", no_argument, NULL, CC_OPT_PACE_ON };
	opts[n++] = (struct option){ "disable-pacing", no_argument, NULL, CC_OPT_PACE_OFF };
	opts[n++] = (struct option){ "json", no_argument, NULL, OPT_JSON };
	opts[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	return opts;
}

struct cc_profile_edit {
	bool set[N_CC_PARAMS];
	uint32_t val[N_CC_PARAMS];
	int algo;		/* enum mrc_cc_algo; -1 = unchanged */
	const char *algo_opt;	/* the option that chose it */
	int qa;			/* quick adapt: 1 on, 0 off, -1 unchanged */
	const char *qa_opt;
	int pacing;		/* 1 on, 0 off, -1 unchanged */
	const char *pacing_opt;
	bool any;
};

/* Switches may repeat, but not disagree (--enable --algo none). */
static int cc_choose(struct ctx *c, int *cur, const char **cur_opt, int v,
		     const char *opt)
{
	if (*cur >= 0 && *cur != v)
		return usage_error(c, "%s and %s contradict each other", *cur_opt, opt);
	*cur = v;
	*cur_opt = opt;
	return 0;
}

static int parse_cc_algo(struct ctx *c, const char *s, struct cc_profile_edit *e)
{
	if (!strcasecmp(s, "nscc"))
		return cc_choose(c, &e->algo, &e->algo_opt, MRC_CC_NSCC, "--algo nscc");
	if (!strcasecmp(s, "none"))
		return cc_choose(c, &e->algo, &e->algo_opt, MRC_CC_NONE, "--algo none");
	return usage_error(c, "--algo: '%s' is not an algorithm (nscc or none)", s);
}

static int parse_cc_opts(struct ctx *c, int argc, char **argv,
			 struct cc_profile_edit *e)
{
	const struct option *opts = cc_edit_options();
	int o, rc;

	memset(e, 0, sizeof(*e));
	e->algo = e->qa = e->pacing = -1;
	while ((o = next_opt(c, argc, argv, opts)) != -1) {
		switch (o) {
		case CC_OPT_ALGO:
			rc = parse_cc_algo(c, optarg, e);
			break;
		case CC_OPT_ENABLE:
			rc = cc_choose(c, &e->algo, &e->algo_opt, MRC_CC_NSCC, "--enable");
			break;
		case CC_OPT_DISABLE:
			rc = cc_choose(c, &e->algo, &e->algo_opt, MRC_CC_NONE, "--disable");
			break;
		case CC_OPT_QA_ON:
			rc = cc_choose(c, &e->qa, &e->qa_opt, 1, "--enable-qa");
			break;
		case CC_OPT_QA_OFF:
			rc = cc_choose(c, &e->qa, &e->qa_opt, 0, "--disable-qa");
			break;
		case CC_OPT_PACE_ON:
			rc = cc_choose(c, &e->pacing, &e->pacing_opt, 1, "--enable-pacing");
			break;
		case CC_OPT_PACE_OFF:
			rc = cc_choose(c, &e->pacing, &e->pacing_opt, 0, "--disable-pacing");
			break;
		default:
			if (o < CC_OPT_PARAM || o >= CC_OPT_PARAM + (int)N_CC_PARAMS)
				return AGENT_EXIT_USAGE;
			rc = parse_cc_value(c, &cc_params[o - CC_OPT_PARAM], optarg,
					    &e->val[o - CC_OPT_PARAM]);
			e->set[o - CC_OPT_PARAM] = true;
			break;
		}
		if (rc)
			return rc;
		e->any = true;
	}
	return 0;
}

static void apply_cc_edit(struct mrc_cc_profile_rec *r, const struct cc_profile_edit *e)
{
	for (size_t i = 0; i < N_CC_PARAMS; i++)
		if (e->set[i])
			memcpy((char *)r + cc_params[i].off, &e->val[i], sizeof(e->val[i]));
	if (e->algo >= 0)
		r->algo = (uint8_t)e->algo;
	if (e->qa == 0)
		r->flags |= MRC_CC_F_DISABLE_QA;
	else if (e->qa == 1)
		r->flags &= ~(uint32_t)MRC_CC_F_DISABLE_QA;
	if (e->pacing == 0)
		r->flags |= MRC_CC_F_NO_PACING;
	else if (e->pacing == 1)
		r->flags &= ~(uint32_t)MRC_CC_F_NO_PACING;
}

static int read_cc_profile(struct ctx *c, uint32_t id, struct mrc_cc_profile_rec *r)
{
	if (!bpf_map_lookup_elem(c->env->maps.cc_profiles, &id, r))
		return 0;
	if (errno == ENOENT)
		return failure(c, "there is no CC profile %u (create it: mrcctl profile cc "
			       "create %u)", id, id);
	return failure(c, "reading CC profile %u: %s", id, strerror(errno));
}

static int write_cc_profile(struct ctx *c, const struct mrc_cc_profile_rec *r,
			    uint64_t flags)
{
	uint32_t id = r->id;

	if (!bpf_map_update_elem(c->env->maps.cc_profiles, &id, r, flags))
		return 0;
	if (errno == EEXIST)
		return failure(c, "CC profile %u exists already (change it with mrcctl "
			       "profile cc set %u, or delete it first)", id, id);
	if (errno == E2BIG)
		return failure(c, "no room for CC profile %u: %d profiles exist", id,
			       MRC_MAX_PROFILES);
	return failure(c, "writing CC profile %u: %s", id, strerror(errno));
}

/* `show --derive`: the parameters a window of this host would run with. */
struct cc_derived {
	uint32_t planes, link_mbps;
	char link_from[IFNAMSIZ + 16];	/* "--link-mbps", "profile", "device p1" */
	uint64_t bdp;
	struct mrc_nscc_params p;
};

static void cc_profile_json(struct json *j, const struct mrc_cc_profile_rec *r,
			    const struct cc_derived *d)
{
	j_obj(j, NULL);
	j_u64(j, "id", r->id);
	j_str(j, "state", ev_profile_state_name((enum ev_profile_state)r->state));
	j_str(j, "algo", cc_algo_name(r->algo));
	j_bool(j, "enabled", r->algo == MRC_CC_NSCC);
	for (size_t i = 0; i < N_CC_PARAMS; i++) {
		const struct cc_param *p = &cc_params[i];

		if (p->unit == CC_FRACTION || p->unit == CC_FACTOR)
			j_dbl(j, p->key, cc_value(r, p) / 1000.0);
		else
			j_u64(j, p->key, cc_value(r, p));
	}
	j_bool(j, "quick_adapt", !(r->flags & MRC_CC_F_DISABLE_QA));
	j_bool(j, "pacing", !(r->flags & MRC_CC_F_NO_PACING));
	j_u64(j, "flags", r->flags);
	if (d) {
		j_obj(j, "derived");
		j_u64(j, "planes", d->planes);
		j_u64(j, "link_mbps", d->link_mbps);
		j_str(j, "link_from", d->link_from);
		j_u64(j, "bdp_bytes", d->bdp);
		cc_params_json(j, &d->p);
		j_end(j);
	}
	j_end(j);
}

static void cc_profile_text(struct ctx *c, const struct mrc_cc_profile_rec *r,
			    const struct cc_derived *d)
{
	char buf[64];

	fprintf(c->out, "cc profile %u: %s, algo %s%s\n", r->id,
		ev_profile_state_name((enum ev_profile_state)r->state),
		cc_algo_name(r->algo), r->algo == MRC_CC_NONE ?
		" (the window never limits: only the responder's does)" : "");
	for (size_t i = 0; i < N_CC_PARAMS; i++)
		fprintf(c->out, "  %-14s %s\n", cc_params[i].name,
			cc_value_str(&cc_params[i], cc_value(r, &cc_params[i]), buf,
				     sizeof(buf)));
	fprintf(c->out, "  %-14s %s\n", "quick_adapt",
		r->flags & MRC_CC_F_DISABLE_QA ? "off (--disable-qa)" : "on");
	fprintf(c->out, "  %-14s %s\n", "pacing",
		r->flags & MRC_CC_F_NO_PACING ? "off (--disable-pacing)" : "on");
	if (!d)
		return;
	fprintf(c->out, "derived for MTU %u, %u planes of %u Mb/s (%s): BDP %" PRIu64
		" bytes\n", d->p.mtu, d->planes, d->link_mbps, d->link_from, d->bdp);
	cc_params_text(c, &d->p, "  ");
}

static void print_cc_profile(struct ctx *c, const struct mrc_cc_profile_rec *r,
			     const struct cc_derived *d)
{
	struct json j = { .f = c->out };

	if (c->json)
		cc_profile_json(&j, r, d);
	else
		cc_profile_text(c, r, d);
}

static int cmd_profile_cc_create(struct ctx *c, int argc, char **argv)
{
	struct cc_profile_edit e;
	struct mrc_cc_profile_rec r = {
		.state = EV_PROFILE_STATE_INIT,
		.algo = MRC_CC_NSCC,
		.gamma_milli = CC_GAMMA_DEFAULT,
		.max_md_jump_milli = CC_MAX_MD_JUMP_DEFAULT,
		.qa_gate = CC_QA_GATE_DEFAULT,
	};
	uint32_t id;

	if (parse_cc_opts(c, argc, argv, &e) || parse_profile_id(c, argc, argv, &id))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;
	r.id = (uint16_t)id;
	apply_cc_edit(&r, &e);
	if (write_cc_profile(c, &r, BPF_NOEXIST))
		return AGENT_EXIT_FAIL;
	if (c->json)
		print_cc_profile(c, &r, NULL);
	else
		fprintf(c->out, "cc profile %u created: INIT\n", id);
	return 0;
}

static int cmd_profile_cc_set(struct ctx *c, int argc, char **argv)
{
	struct cc_profile_edit e;
	struct mrc_cc_profile_rec r;
	uint32_t id;

	if (parse_cc_opts(c, argc, argv, &e) || parse_profile_id(c, argc, argv, &id))
		return AGENT_EXIT_USAGE;
	if (!e.any)
		return usage_error(c, "nothing to change (see --help for the options)");
	if (c->env->dry_run)
		return 0;
	if (read_cc_profile(c, id, &r))
		return AGENT_EXIT_FAIL;
	if (r.state == EV_PROFILE_STATE_ONLINE)
		return failure(c, "profile %u is ONLINE: take it OFFLINE to edit it "
			       "(mrcctl profile cc offline %u)", id, id);
	apply_cc_edit(&r, &e);
	if (write_cc_profile(c, &r, BPF_EXIST))
		return AGENT_EXIT_FAIL;
	print_cc_profile(c, &r, NULL);
	return 0;
}

/* What ONLINE promises: parameters a window can run with. */
static int check_cc_profile(struct ctx *c, const struct mrc_cc_profile_rec *r)
{
	uint64_t base = r->base_rtt_ns, target = r->target_delay_ns ? r->target_delay_ns :
						  base * 3 / 4;

	if (r->algo != MRC_CC_NONE && r->algo != MRC_CC_NSCC)
		return failure(c, "profile %u: unknown algorithm %u (nscc or none)", r->id,
			       r->algo);
	if (r->flags & ~(uint32_t)MRC_CC_F_ALL)
		return failure(c, "profile %u: unknown flags 0x%x", r->id,
			       r->flags & ~(uint32_t)MRC_CC_F_ALL);
	if (!r->gamma_milli || r->gamma_milli > 1000)
		return failure(c, "profile %u: gamma %.3f is outside (0, 1]", r->id,
			       r->gamma_milli / 1000.0);
	if (!r->max_md_jump_milli || r->max_md_jump_milli > 1000)
		return failure(c, "profile %u: max_md_jump %.3f is outside (0, 1]", r->id,
			       r->max_md_jump_milli / 1000.0);
	if (r->qa_gate > CC_QA_GATE_MAX)
		return failure(c, "profile %u: qa_gate %u is above %d", r->id, r->qa_gate,
			       CC_QA_GATE_MAX);
	if (r->fi_scale_milli > CC_FACTOR_MAX)
		return failure(c, "profile %u: fi_scale %.3f is above 1000", r->id,
			       r->fi_scale_milli / 1000.0);
	if (r->link_mbps > CC_LINK_MBPS_MAX)
		return failure(c, "profile %u: link %u Mb/s is above %u", r->id,
			       r->link_mbps, CC_LINK_MBPS_MAX);
	if (base && r->target_delay_ns > CC_BASE_RTTS_MAX * base)
		return failure(c, "profile %u: target delay %u ns is over 100 base RTTs",
			       r->id, r->target_delay_ns);
	if (base && r->adjust_period_ns > CC_BASE_RTTS_MAX * base)
		return failure(c, "profile %u: adjust period %u ns is over 100 base RTTs",
			       r->id, r->adjust_period_ns);
	if (r->qa_threshold_ns && r->qa_threshold_ns < target)
		return failure(c, "profile %u: qa_threshold %u ns is below the target "
			       "delay %" PRIu64 " ns (quick adapt is for delays far above it)",
			       r->id, r->qa_threshold_ns, target);
	if (r->max_cwnd_bytes && r->max_cwnd_bytes < 2 * CC_MTU_MIN)
		return failure(c, "profile %u: max_cwnd %u bytes is less than two packets "
			       "of the smallest MTU (%d bytes)", r->id, r->max_cwnd_bytes,
			       CC_MTU_MIN);
	if (r->max_cwnd_bytes && r->adjust_bytes > r->max_cwnd_bytes)
		return failure(c, "profile %u: adjust_bytes %u is above max_cwnd %u bytes "
			       "(a window would never ack that much between increases)",
			       r->id, r->adjust_bytes, r->max_cwnd_bytes);
	if (r->max_cwnd_bytes && r->eta_bytes > r->max_cwnd_bytes)
		return failure(c, "profile %u: eta %u bytes is above max_cwnd %u bytes",
			       r->id, r->eta_bytes, r->max_cwnd_bytes);
	return 0;
}

static int profile_cc_state(struct ctx *c, int argc, char **argv,
			    enum ev_profile_state to)
{
	static const struct option opts[] = { COMMON_OPTS, {} };
	struct mrc_cc_profile_rec r;
	char err[EV_ERR_LEN];
	uint32_t id;

	if (next_opt(c, argc, argv, opts) != -1 || parse_profile_id(c, argc, argv, &id))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;
	if (read_cc_profile(c, id, &r))
		return AGENT_EXIT_FAIL;
	/* CC profiles follow the EV profiles' state machine. */
	if (ev_profile_check_transition((enum ev_profile_state)r.state, to, err,
					sizeof(err)))
		return failure(c, "profile %u: %s", id, err);
	if (to == EV_PROFILE_STATE_ONLINE && check_cc_profile(c, &r))
		return AGENT_EXIT_FAIL;
	r.state = (uint8_t)to;
	if (write_cc_profile(c, &r, BPF_EXIST))
		return AGENT_EXIT_FAIL;
	if (c->json)
		print_cc_profile(c, &r, NULL);
	else
		fprintf(c->out, "cc profile %u is %s\n", id, ev_profile_state_name(to));
	return 0;
}

static int cmd_profile_cc_online(struct ctx *c, int argc, char **argv)
{
	return profile_cc_state(c, argc, argv, EV_PROFILE_STATE_ONLINE);
}

static int cmd_profile_cc_offline(struct ctx *c, int argc, char **argv)
{
	return profile_cc_state(c, argc, argv, EV_PROFILE_STATE_OFFLINE);
}

/* A device's speed in Mb/s as sysfs says it; 0 when it does not. */
static uint32_t device_mbps(const char *ifname)
{
	char path[64 + IFNAMSIZ];
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifname);
	f = fopen(path, "re");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v > 0 && v <= (long)CC_LINK_MBPS_MAX ? (uint32_t)v : 0;
}

/* --derive's options; 0 = not given. */
struct cc_derive_req {
	bool on;
	uint32_t mtu, planes, link_mbps;
};

/*
 * What nscc_defaults() makes of the profile for `req`: planes default to
 * this host's, the link speed to the profile's, then to the slowest plane
 * device that reports one.
 */
static int derive_cc(struct ctx *c, const struct mrc_cc_profile_rec *r,
		     const struct cc_derive_req *req, struct cc_derived *d)
{
	uint64_t base = r->base_rtt_ns ? r->base_rtt_ns : MRC_NSCC_ASSUMED_BASE_RTT_NS;
	unsigned int i;

	memset(d, 0, sizeof(*d));
	d->planes = req->planes ? req->planes : c->env->n_planes;
	if (!d->planes)
		return failure(c, "this mrcd serves no planes: give --planes N");
	d->link_mbps = req->link_mbps;
	snprintf(d->link_from, sizeof(d->link_from), "--link-mbps");
	if (!d->link_mbps && r->link_mbps) {
		d->link_mbps = r->link_mbps;
		snprintf(d->link_from, sizeof(d->link_from), "profile");
	}
	for (i = 0; !d->link_mbps && i < c->env->n_planes; i++) {
		uint32_t mbps = device_mbps(c->env->planes[i].name);

		if (mbps && (!d->link_mbps || mbps < d->link_mbps)) {
			d->link_mbps = mbps;
			snprintf(d->link_from, sizeof(d->link_from), "device %s",
				 c->env->planes[i].name);
		}
	}
	if (!d->link_mbps)
		return failure(c, "no plane device reports its speed: give --link-mbps N "
			       "(or set it in the profile)");
	nscc_defaults(r, req->mtu, d->planes, d->link_mbps, &d->p);
	/* The BDP the defaults start from, as nscc_defaults() computes it. */
	d->bdp = (uint64_t)d->planes * d->link_mbps * 125000 / 1000 * base / 1000000;
	if (d->bdp < req->mtu)
		d->bdp = req->mtu;
	return 0;
}

static int parse_derive_opts(struct ctx *c, int argc, char **argv,
			     struct cc_derive_req *req)
{
	static const struct option opts[] = {
		{ "derive", no_argument, NULL, 'D' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "planes", required_argument, NULL, 'p' },
		{ "link-mbps", required_argument, NULL, 'l' },
		COMMON_OPTS, {}
	};
	int o;

	memset(req, 0, sizeof(*req));
	while ((o = next_opt(c, argc, argv, opts)) != -1) {
		switch (o) {
		case 'D':
			req->on = true;
			break;
		case 'm':
			if (parse_u32_arg(c, "--mtu", optarg, CC_MTU_MAX, &req->mtu))
				return AGENT_EXIT_USAGE;
			if (req->mtu < CC_MTU_MIN)
				return usage_error(c, "--mtu: path MTUs are %d..%d bytes",
						   CC_MTU_MIN, CC_MTU_MAX);
			break;
		case 'p':
			if (parse_u32_arg(c, "--planes", optarg, MRC_MAX_PLANES_ABI,
					  &req->planes))
				return AGENT_EXIT_USAGE;
			if (!req->planes)
				return usage_error(c, "--planes: 1..%d", MRC_MAX_PLANES_ABI);
			break;
		case 'l':
			if (parse_u32_arg(c, "--link-mbps", optarg, CC_LINK_MBPS_MAX,
					  &req->link_mbps))
				return AGENT_EXIT_USAGE;
			if (!req->link_mbps)
				return usage_error(c, "--link-mbps: a speed of 1..%u Mb/s",
						   CC_LINK_MBPS_MAX);
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
	}
	if (!req->on && (req->mtu || req->planes || req->link_mbps))
		return usage_error(c, "--mtu, --planes and --link-mbps go with --derive");
	if (req->on && optind >= argc)
		return usage_error(c, "--derive needs a profile ID");
	if (req->on && !req->mtu)
		return usage_error(c, "--derive needs --mtu BYTES (the QPs' path MTU, "
				   "%d..%d)", CC_MTU_MIN, CC_MTU_MAX);
	return 0;
}

static int cmd_profile_cc_show(struct ctx *c, int argc, char **argv)
{
	struct json j = { .f = c->out };
	uint32_t ids[MRC_MAX_PROFILES], id;
	struct mrc_cc_profile_rec r;
	struct cc_derive_req req;
	struct cc_derived d;
	int n, i, rc = 0;

	if (parse_derive_opts(c, argc, argv, &req))
		return AGENT_EXIT_USAGE;
	if (optind < argc) {
		if (parse_profile_id(c, argc, argv, &id))
			return AGENT_EXIT_USAGE;
		if (c->env->dry_run)
			return 0;
		if (read_cc_profile(c, id, &r))
			return AGENT_EXIT_FAIL;
		if (req.on && derive_cc(c, &r, &req, &d))
			return AGENT_EXIT_FAIL;
		print_cc_profile(c, &r, req.on ? &d : NULL);
		return 0;
	}
	if (c->env->dry_run)
		return 0;
	n = profile_ids(c->env->maps.cc_profiles, ids, MRC_MAX_PROFILES);
	if (c->json)
		j_arr(&j, NULL);
	else if (!n)
		fprintf(c->out, "no CC profiles\n");
	for (i = 0; i < n; i++) {
		if (read_cc_profile(c, ids[i], &r)) {
			rc = AGENT_EXIT_FAIL;
			continue;
		}
		if (c->json)
			cc_profile_json(&j, &r, NULL);
		else
			cc_profile_text(c, &r, NULL);
	}
	if (c->json)
		j_arr_end(&j);
	return rc;
}

static int cmd_profile_cc_delete(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, {} };
	struct json j = { .f = c->out };
	struct mrc_cc_profile_rec r;
	uint32_t id;

	if (next_opt(c, argc, argv, opts) != -1 || parse_profile_id(c, argc, argv, &id))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;
	if (read_cc_profile(c, id, &r))
		return AGENT_EXIT_FAIL;
	if (r.state == EV_PROFILE_STATE_ONLINE)
		return failure(c, "profile %u is ONLINE: take it OFFLINE before deleting "
			       "it (mrcctl profile cc offline %u)", id, id);
	if (bpf_map_delete_elem(c->env->maps.cc_profiles, &id))
		return failure(c, "deleting CC profile %u: %s", id, strerror(errno));
	if (c->json) {
		j_obj(&j, NULL);
		j_u64(&j, "deleted", id);
		j_end(&j);
	} else {
		fprintf(c->out, "cc profile %u deleted\n", id);
	}
	return 0;
}

/* ---- events ----------------------------------------------------------- */

/* The kept events, oldest first (at most `count` of them; 0 = all). */
static void print_backlog(struct ctx *c, uint64_t count)
{
	const struct ev_log *log = c->env->events;
	char line[512];
	size_t n;

	for (uint64_t seq = ev_log_first(log); seq < ev_log_end(log); seq++) {
		if (count && !count--)
			break;
		n = ev_record_format(ev_log_get(log, seq), log->start_ns, 0, c->json,
				     line, sizeof(line));
		fwrite(line, 1, n, c->out);
	}
}

static int cmd_events(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "no-follow", no_argument, NULL, 'n' },
		{ "count", required_argument, NULL, 'c' },
		COMMON_OPTS, {}
	};
	bool all = false, follow = true;
	uint64_t count = 0;
	int o;

	while ((o = next_opt(c, argc, argv, opts)) != -1) {
		switch (o) {
		case 'a':
			all = true;
			break;
		case 'n':
			follow = false;
			all = true;
			break;
		case 'c':
			if (parse_u64(optarg, UINT32_MAX, &count) || !count)
				return usage_error(c, "--count: '%s' is not a number of "
						   "events (1..%u)", optarg, UINT32_MAX);
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
	}
	if (no_positionals(c, argc, argv))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;
	if (!c->env->events || !c->env->stream)
		return failure(c, "this mrcd keeps no EV events");
	if (!follow) {
		print_backlog(c, count);
		return 0;
	}
	*c->env->stream = (struct agent_stream){
		.kind = AGENT_STREAM_EVENTS,
		.json = c->json,
		.backlog = all,
		.count = count,
	};
	return 0;
}

/* ---- probe ------------------------------------------------------------ */

#define PROBE_COUNT_DEFAULT	3
#define PROBE_INTERVAL_DEFAULT	10
#define PROBE_INTERVAL_MAX	60000

/* An EV for the UDP format: what fits a UDP source port. */
static int parse_probe_ev(struct ctx *c, const char *s, uint32_t *ev)
{
	uint64_t v;

	if (parse_u64(s, 65535, &v) || !v)
		return usage_error(c, "--ev: '%s' is not an EV of the UDP format "
				   "(1..65535, decimal or 0x-hex)", s);
	*ev = (uint32_t)v;
	return 0;
}

static int parse_probe_opts(struct ctx *c, int argc, char **argv,
			    struct pe_job_req *req)
{
	static const struct option opts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "ev", required_argument, NULL, 'e' },
		{ "plane", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'n' },
		{ "interval-ms", required_argument, NULL, 'i' },
		COMMON_OPTS, {}
	};
	const char *to = NULL;
	int o;

	req->count = PROBE_COUNT_DEFAULT;
	req->interval_ms = PROBE_INTERVAL_DEFAULT;
	while ((o = next_opt(c, argc, argv, opts)) != -1) {
		switch (o) {
		case 't':
			to = optarg;
			if (addr_parse(optarg, req->to))
				return usage_error(c, "--to: '%s' is not an IPv4 or IPv6 "
						   "address", optarg);
			break;
		case 'e':
			if (parse_probe_ev(c, optarg, &req->ev))
				return AGENT_EXIT_USAGE;
			break;
		case 'p':
			if (parse_u32_arg(c, "--plane", optarg, MRC_MAX_PLANES_ABI,
					  &req->plane))
				return AGENT_EXIT_USAGE;
			if (!req->plane)
				return usage_error(c, "--plane: planes are 1..%d",
						   MRC_MAX_PLANES_ABI);
			break;
		case 'n':
			if (parse_u32_arg(c, "--count", optarg, PE_JOB_MAX_COUNT, &req->count))
				return AGENT_EXIT_USAGE;
			if (!req->count)
				return usage_error(c, "--count: at least 1 probe");
			break;
		case 'i':
			if (parse_u32_arg(c, "--interval-ms", optarg, PROBE_INTERVAL_MAX,
					  &req->interval_ms))
				return AGENT_EXIT_USAGE;
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
	}
	if (no_positionals(c, argc, argv))
		return AGENT_EXIT_USAGE;
	if (!to)
		return usage_error(c, "--to HOST is required (the peer's address on "
				   "the plane)");
	if (!req->ev)
		return usage_error(c, "--ev VALUE is required");
	if (!req->plane)
		return usage_error(c, "--plane P is required");
	return 0;
}

static int cmd_probe(struct ctx *c, int argc, char **argv)
{
	struct pe_job_req req = {};

	if (parse_probe_opts(c, argc, argv, &req))
		return AGENT_EXIT_USAGE;
	if (c->env->dry_run)
		return 0;
	if (req.plane > c->env->n_planes)
		return failure(c, "there is no plane %u (this host has planes 1..%u)",
			       req.plane, c->env->n_planes);
	if (!c->env->stream)
		return failure(c, "this mrcd cannot send probes");
	req.json = c->json;
	*c->env->stream = (struct agent_stream){
		.kind = AGENT_STREAM_PROBE,
		.json = c->json,
		.probe = req,
	};
	return 0;
}

/* ---- doctor (local) --------------------------------------------------- */

static int cmd_doctor(struct ctx *c, int argc, char **argv)
{
	static const struct option opts[] = { COMMON_OPTS, {} };

	/* Checks the host, mrcd included: done here, with or without it. */
	c->done = true;
	if (next_opt(c, argc, argv, opts) != -1)
		return AGENT_EXIT_USAGE;
	if (no_positionals(c, argc, argv))
		return AGENT_EXIT_USAGE;
	return doctor_run(c->env->pin_dir, c->json, c->out, c->err);
}

/* ---- the command table ------------------------------------------------ */

struct command {
	const char *path;	/* the words naming it */
	int (*run)(struct ctx *c, int argc, char **argv);
	const char *synopsis;	/* what follows the words */
	const char *help;	/* more lines, may be NULL */
};

#define EV_PROFILE_OPTS \
	"  --format udp|stev      how the EV rides in packets (default udp)\n" \
	"  --count N              EVs in a QP's table, 1..256 (default 256)\n" \
	"  --min-active N         fewest active EVs (default count / 2)\n" \
	"  --backups N            backup EVs per plane (default 0)\n"

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

static const struct command commands[] = {
	{ "status", cmd_status, "[--json]",
	  "Planes (addresses, XDP mode, XDP and TC program ids), QPs by state and\n"
	  "the XDP drop counters." },
	{ "stats", cmd_stats, "[--json]",
	  "XDP drop counters, and the counters of every QP summed over CPUs." },
	{ "qp list", cmd_qp_list, "[--json]",
	  "QPs not in RESET: state, owner pid, remote QP and addresses, EV counts\n"
	  "(active GOOD/SKIP, all ASSUMED_BAD/DENIED, usable backups), send and\n"
	  "receive PSNs, the main counters and the congestion window (CWND: bytes,\n"
	  "'-' without a window, 'off' with algorithm none)." },
	{ "qp show", cmd_qp_show, "N [--json]",
	  "One QP (N is its QP number), with all its counters and its congestion\n"
	  "window: algorithm, cwnd, bytes in flight, base and smallest RTT, RTT p50\n"
	  "and p99 (upper bucket edges), average delay and target, how often it was\n"
	  "cut (md), grew fast, quick-adapted (qa), saw trims and losses, bytes\n"
	  "acked, and the parameters it runs with; 'none (no window)' without one." },
	{ "ev list", cmd_ev_list, "--qp N [--json]",
	  "The EV table of QP N: index, EV, plane, state, active or backup, and\n"
	  "per-EV packets, bytes, acks, ECN marks, trims, losses and mean RTT." },
	{ "ev deny", cmd_ev_deny, "--qp N (--ev HEX[,HEX..] | --plane P | --index I[,I..]) [--json]",
	  "Take EVs out of service: their state becomes DENIED, which only\n"
	  "'mrcctl ev allow' undoes. --ev picks every entry with that EV." },
	{ "ev allow", cmd_ev_allow, "--qp N (--ev HEX[,HEX..] | --plane P | --index I[,I..]) [--json]",
	  "Put DENIED EVs back in service (state GOOD); other states are left alone." },
	{ "ev expand", cmd_ev_expand,
	  "--fmt-fields W[,W..] --field SPEC [--field SPEC]... --ev HEX [HEX...] [--json]",
	  "Expand compact EVs into wire EVs with a GENERATED layout, computed here\n"
	  "(no mrcd needed). SPEC is width=W,init=X,min=X,max=X,mask=X (width\n"
	  "required; init, min default to 0, max and mask to all ones). Prints\n"
	  "'COMPACT -> WIRE' per EV, or why it is invalid (then exit 1).\n"
	  "Example: mrcctl ev expand --fmt-fields 16,16 \\\n"
	  "    --field width=16,init=0x8207,mask=0x0f0a \\\n"
	  "    --field width=12,init=0x0f0,mask=0x813 --ev 0x2d6" },
	{ "events", cmd_events, "[--all] [--no-follow] [--count N] [--json]",
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
	{ "probe", cmd_probe,
	  "--to HOST --ev VALUE --plane P [--count N] [--interval-ms MS] [--json]",
	  "Send EV probes from plane P to HOST (the peer's address on that plane,\n"
	  "IPv4 or IPv6, or a name) with EV VALUE (1..65535, decimal or 0x-hex: a\n"
	  "UDP source port), one after the other: the next after the answer or a\n"
	  "1 s timeout, --interval-ms apart (default 10). No QP is needed; the\n"
	  "peer's XDP answers. Prints the round-trip time of each probe (and the\n"
	  "responder's service time), then a summary. --count 1..1000 (default 3).\n"
	  "Exit status 1 when no probe was answered." },
	{ "doctor", cmd_doctor, "[--json]",
	  "Check this host for what MRC-XDP needs, computed here (no mrcd needed):\n"
	  "kernel BTF, bpffs, libbpf and libxdp, privileges, whether mrcd answers,\n"
	  "the pinned maps (present, with BTF), every plane (link up, XDP program\n"
	  "and TC egress filter attached) and tracefs. One line per check,\n"
	  "'ok|WARN|FAIL  NAME: DETAIL', and a 'fix:' line under each WARN and\n"
	  "FAIL. Exit status 1 when a check failed." },
	{ "profile ev create", cmd_profile_ev_create,
	  "ID --type explicit|generated|auto [--format udp|stev] [--count N]\n"
	  "                  [--min-active N] [--backups N] [--json]",
	  "Create EV profile ID (0..63) in state INIT.\n" EV_PROFILE_OPTS },
	{ "profile ev set", cmd_profile_ev_set,
	  "ID [--format udp|stev] [--fmt-fields W,W..] [--field SPEC]...\n"
	  "                  [--ev EV[@PLANE][,...]] [--event-mask X] [--count N]\n"
	  "                  [--min-active N] [--backups N] [--json]",
	  "Change a profile that is not ONLINE (--event-mask may change any time).\n"
	  "--field replaces all fields (GENERATED), --ev the EV list (EXPLICIT;\n"
	  "EVs in hex, PLANE 0 or absent = spread over the planes).\n" EV_PROFILE_OPTS },
	{ "profile ev online", cmd_profile_ev_online, "ID [--json]",
	  "Validate the profile and make it usable by QPs (from OFFLINE)." },
	{ "profile ev offline", cmd_profile_ev_offline, "ID [--json]",
	  "INIT -> OFFLINE (ready to go online), or ONLINE -> OFFLINE to edit it." },
	{ "profile ev show", cmd_profile_ev_show, "[ID] [--json]",
	  "One EV profile, or all of them." },
	{ "profile ev delete", cmd_profile_ev_delete, "ID [--json]",
	  "Delete an EV profile that is not ONLINE." },
	{ "profile cc create", cmd_profile_cc_create, "ID " CC_PROFILE_SYNOPSIS,
	  "Create CC profile ID (0..63) in state INIT. Defaults: algo nscc, gamma 0.8,\n"
	  "max-md-jump 0.5, qa-gate 3, quick adapt on; every other parameter 0 =\n"
	  "derived when a QP connects, from the base RTT, the planes' speed and the\n"
	  "MTU (what they come to: 'profile cc show ID --derive --mtu BYTES').\n" CC_PROFILE_OPTS },
	{ "profile cc set", cmd_profile_cc_set, "ID " CC_PROFILE_SYNOPSIS,
	  "Change a CC profile that is not ONLINE.\n" CC_PROFILE_OPTS },
	{ "profile cc online", cmd_profile_cc_online, "ID [--json]",
	  "Check the parameters and make the profile usable (from OFFLINE)." },
	{ "profile cc offline", cmd_profile_cc_offline, "ID [--json]",
	  "INIT -> OFFLINE, or ONLINE -> OFFLINE to edit it." },
	{ "profile cc show", cmd_profile_cc_show,
	  "[ID] [--derive --mtu BYTES [--planes N] [--link-mbps N]] [--json]",
	  "One CC profile, or all of them; every parameter, '(derived: ...)' for 0.\n"
	  "  --derive         also the parameters a window would run with: what\n"
	  "                   the defaults make of the profile (nscc_defaults())\n"
	  "  --mtu BYTES      the QPs' path MTU, 256..9000 (required with --derive)\n"
	  "  --planes N       planes, 1..8 (default: this host's; a QP counts the\n"
	  "                   plane addresses of its peer)\n"
	  "  --link-mbps N    one plane's speed (default: the profile's link-mbps,\n"
	  "                   else the slowest plane device's speed)" },
	{ "profile cc delete", cmd_profile_cc_delete, "ID [--json]",
	  "Delete a CC profile that is not ONLINE." },
};

#define N_COMMANDS	(sizeof(commands) / sizeof(commands[0]))

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

static void command_usage(FILE *f, const struct command *cmd, bool full)
{
	fprintf(f, "usage: mrcctl %s %s\n", cmd->path, cmd->synopsis);
	if (full && cmd->help)
		fprintf(f, "%s%s", cmd->help,
			cmd->help[strlen(cmd->help) - 1] == '\n' ? "" : "\n");
}

void agent_cmd_usage(FILE *f)
{
	fprintf(f,
"usage: mrcctl [--pin-dir DIR] COMMAND [ARGS] [--json]\n"
"\n"
"Inspect and steer the MRC fast path of this host through its agent, mrcd.\n"
"\n"
"  status                       planes, QPs by state, XDP drop counters\n"
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

static bool wants_help(int argc, char **argv)
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
static int group_error(struct ctx *c, int argc, char **argv, int n, bool help)
{
	int i;

	c->done = true;
	if (n == 0 && !help) {
		fprintf(c->err, "mrcctl: unknown command '%s'\ntry 'mrcctl --help'\n",
			argc ? argv[0] : "");
		return AGENT_EXIT_USAGE;
	}
	if (n == 0) {
		agent_cmd_usage(c->out);
		return 0;
	}
	if (help) {
		group_usage(c->out, n, argv);
		return 0;
	}
	fprintf(c->err, "mrcctl");
	for (i = 0; i < n; i++)
		fprintf(c->err, " %s", argv[i]);
	if (n < argc && argv[n][0] != '-')
		fprintf(c->err, ": unknown subcommand '%s'\n", argv[n]);
	else
		fprintf(c->err, ": which one?\n");
	group_usage(c->err, n, argv);
	return AGENT_EXIT_USAGE;
}

int agent_cmd_run(const struct agent_cmd_env *env, int argc, char **argv,
		  FILE *out, FILE *err, bool *done)
{
	struct ctx c = { .env = env, .out = out, .err = err };
	const struct command *cmd = NULL;
	int best = 0, n, rc;
	bool whole, help = wants_help(argc, argv);
	size_t i;

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
		rc = group_error(&c, argc, argv, best, help);
		*done = true;
		return rc;
	}
	snprintf(c.name, sizeof(c.name), "mrcctl %s", cmd->path);
	if (help) {
		command_usage(out, cmd, true);
		*done = true;
		return 0;
	}
	/* getopt wants the program name first: the command's words stand in. */
	opt_start();
	rc = cmd->run(&c, argc - best + 1, argv + best - 1);
	*done = c.done;
	return rc;
}

/* ---- mrcctl's part ---------------------------------------------------- */

/* `host` as a numeric address in a new string; NULL after a message. */
static char *resolve_host(const char *host, FILE *err)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_DGRAM };
	struct addrinfo *res = NULL;
	char buf[INET6_ADDRSTRLEN];
	uint8_t a[16];
	const void *in;
	int rc;

	if (!addr_parse(host, a))
		return strdup(host);
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc || !res) {
		fprintf(err, "mrcctl probe: cannot resolve '%s': %s\n", host,
			rc ? gai_strerror(rc) : "no address");
		return NULL;
	}
	in = res->ai_family == AF_INET ?
		(const void *)&((struct sockaddr_in *)res->ai_addr)->sin_addr :
		(const void *)&((struct sockaddr_in6 *)res->ai_addr)->sin6_addr;
	inet_ntop(res->ai_family, in, buf, sizeof(buf));
	freeaddrinfo(res);
	return strdup(buf);
}

int agent_cmd_resolve_names(int argc, char **argv, FILE *err)
{
	char *numeric, *joined;
	int i;

	if (argc < 1 || strcmp(argv[0], "probe") || wants_help(argc, argv))
		return 0;
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--to") && i + 1 < argc) {
			numeric = resolve_host(argv[++i], err);
			if (!numeric)
				return AGENT_EXIT_FAIL;
			argv[i] = numeric;	/* lives as long as mrcctl */
		} else if (!strncmp(argv[i], "--to=", 5)) {
			numeric = resolve_host(argv[i] + 5, err);
			if (!numeric || asprintf(&joined, "--to=%s", numeric) < 0)
				return AGENT_EXIT_FAIL;
			free(numeric);
			argv[i] = joined;
		}
	}
	return 0;
}

bool agent_cmd_is_events(int argc, char **argv)
{
	return argc >= 1 && !strcmp(argv[0], "events");
}
