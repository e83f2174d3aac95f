// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Executors of `status` (planes, probing, QPs by state, drops) and
 * `stats` (drops, every QP's counters and their sum, control counters).
 */
#include "agent/cmd_exec.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "agent/map_bulk.h"
#include "agent/qp_summary.h"
#include "common/pins.h"

static void json_drops(struct json *j, const uint64_t *drops)
{
	char buf[32];

	j_obj(j, "drops");
	for (size_t i = 0; i < N_DROPS; i++)
		j_u64(j, cmd_drop_name(i, buf, sizeof(buf)), drops[i]);
	j_end(j);
}

static void text_drops(struct ctx *c, const uint64_t *drops)
{
	char buf[32];

	fprintf(c->out, "drops:");
	/* "none" is index 0, never counted: skip it in text. */
	for (size_t i = 1; i < N_DROPS; i++)
		fprintf(c->out, "%s %s %" PRIu64, i > 1 ? "," : "",
			cmd_drop_name(i, buf, sizeof(buf)), drops[i]);
	fputc('\n', c->out);
}

static int read_drops(struct ctx *c, uint64_t *drops)
{
	int rc = cmd_sum_percpu(c->env->maps.drops, 0, sizeof(struct mrc_drop_stats),
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
	if (!cmd_all_zero(r->map.addr4, sizeof(r->map.addr4)))
		inet_ntop(AF_INET, r->map.addr4, r->addr4, sizeof(r->addr4));
	if (!cmd_all_zero(r->map.addr6, sizeof(r->map.addr6)))
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

/* What status says of the QPs: read once, in bulk (agent/qp_table.h). */
struct status_view {
	struct qp_table t;
	struct qp_summary sum;
	struct host_limits lim;
	uint64_t map_bytes;
	bool have_map_bytes;
};

/* Contexts in use: mrc_ctx_owner, opened from the pin folder (mrcd's maps). */
static int ctx_owner_fd(struct ctx *c)
{
	return mrc_pin_open(c->env->pin_dir, MRC_PIN_CTX_OWNER, NULL, 0);
}

static int read_status_view(struct ctx *c, struct status_view *sv)
{
	struct qp_table_maps m;
	unsigned int n_maps;
	char msg[256];
	int rc;

	memset(sv, 0, sizeof(*sv));
	cmd_qp_table_maps(c, &m);
	m.qp_stats = m.tx = m.rx = m.cc_view = -1;	/* status shows none of them */
	m.ctx_owner = ctx_owner_fd(c);
	rc = qp_table_read(&sv->t, &m, QPT_LIVE, msg, sizeof(msg));
	if (m.ctx_owner >= 0)
		close(m.ctx_owner);
	if (rc)
		return failure(c, "%s", msg);
	qp_summarise(&sv->t, &sv->sum);
	sv->lim = (struct host_limits){
		.max_qps = sv->t.max_qps, .qps_in_use = sv->t.qps_in_use,
		.max_ctx = sv->t.max_ctx, .ctx_in_use = sv->t.ctx_in_use,
	};
	sv->have_map_bytes = !map_bytes_of_dir(c->env->pin_dir, &sv->map_bytes,
					       &n_maps, NULL, 0);
	return 0;
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

/*
 * A line per plane whose programs mrcd's watch found taken off (only
 * then: a quiet plane needs no line).
 */
static void watch_text(struct ctx *c)
{
	const struct agent_plane_info *pi;
	unsigned int i;

	for (i = 0; i < c->env->n_planes; i++) {
		pi = &c->env->planes[i];
		if (!pi->xdp_losses && !pi->tc_losses)
			continue;
		fprintf(c->out, "%s: taken off: XDP %u times, TC %u times; attached "
			"again %u times%s%s%s\n", pi->name, pi->xdp_losses, pi->tc_losses,
			pi->repairs, pi->xdp_missing ? "; XDP MISSING now" : "",
			pi->tc_missing ? "; TC MISSING now" : "",
			c->env->repair ? "" : " (--no-repair)");
	}
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

static void worst_json(struct json *j, const struct qp_summary *s)
{
	j_arr(j, "worst");
	for (unsigned int i = 0; i < s->n_worst; i++) {
		j_obj(j, NULL);
		j_u64(j, "qpn", s->worst[i].qpn);
		j_str(j, "state", cmd_qp_state_name(s->worst[i].state));
		j_u64(j, "assumed_bad_evs", s->worst[i].bad);
		j_u64(j, "n_evs", s->worst[i].n_evs);
		j_end(j);
	}
	j_arr_end(j);
}

/* "limits", "map_bytes" and "qp_health": the scale of the host at a glance. */
static void scale_json(struct json *j, const struct status_view *sv)
{
	j_obj(j, "limits");
	j_u64(j, "max_qps", sv->lim.max_qps);
	j_u64(j, "qps_in_use", sv->lim.qps_in_use);
	j_u64(j, "max_contexts", sv->lim.max_ctx);
	j_u64(j, "contexts_in_use", sv->lim.ctx_in_use);
	j_end(j);
	if (sv->have_map_bytes)
		j_u64(j, "map_bytes", sv->map_bytes);
	else
		j_null(j, "map_bytes");
	j_obj(j, "qp_health");
	j_u64(j, "in_error", sv->sum.in_error);
	j_u64(j, "with_assumed_bad_evs", sv->sum.with_bad_evs);
	j_u64(j, "assumed_bad_evs", sv->sum.bad_evs);
	worst_json(j, &sv->sum);
	j_end(j);
}

static void status_json(struct ctx *c, const uint64_t *drops,
			const struct status_view *sv)
{
	const unsigned int *by_state = sv->sum.by_state;

	struct json j = { .f = c->out };
	struct plane_row r;
	unsigned int i, total = 0;

	j_obj(&j, NULL);
	j_str(&j, "pin_dir", c->env->pin_dir);
	j_int(&j, "pid", c->env->pid);
	j_u64(&j, "port", configured_port(c));
	j_bool(&j, "repair", c->env->repair);
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
		j_str(&j, "tc_attach", r.info->tc_adopted ? "adopted" : "mrcd");
		j_bool(&j, "xdp_missing", r.info->xdp_missing);
		j_bool(&j, "tc_missing", r.info->tc_missing);
		j_u64(&j, "xdp_taken_off", r.info->xdp_losses);
		j_u64(&j, "tc_taken_off", r.info->tc_losses);
		j_u64(&j, "reattached", r.info->repairs);
		if (c->env->probing)
			j_str(&j, "link", link_name(c, i));
		j_end(&j);
	}
	j_arr_end(&j);
	if (c->env->probing)
		probing_json(c, &j);
	j_obj(&j, "qps");
	for (i = MRC_QPS_INIT; i <= MRC_QPS_ERROR; i++) {
		j_u64(&j, cmd_qp_state_name(i), by_state[i]);
		total += by_state[i];
	}
	j_u64(&j, "total", total);
	j_end(&j);
	scale_json(&j, sv);
	json_drops(&j, drops);
	j_end(&j);
}

static void mib_str(uint64_t bytes, char *buf, size_t len)
{
	snprintf(buf, len, "%.1f MiB (%" PRIu64 " bytes)", bytes / 1048576.0, bytes);
}

/* Limits and map memory, then what needs a look: a few lines however many QPs. */
static void scale_text(struct ctx *c, const struct status_view *sv)
{
	const struct qp_summary *s = &sv->sum;
	char mem[64] = "unknown";

	if (sv->have_map_bytes)
		mib_str(sv->map_bytes, mem, sizeof(mem));
	fprintf(c->out, "limits: QPs %u of %u in use (mrcd --max-qps), contexts %u of "
		"%u (mrcd --max-contexts); maps %s\n", sv->lim.qps_in_use,
		sv->lim.max_qps, sv->lim.ctx_in_use, sv->lim.max_ctx, mem);
	fprintf(c->out, "QP health: %u in ERROR, %u with ASSUMED_BAD EVs (%" PRIu64
		" EVs)", s->in_error, s->with_bad_evs, s->bad_evs);
	for (unsigned int i = 0; i < s->n_worst; i++) {
		const struct qp_worst *w = &s->worst[i];

		fprintf(c->out, "%s %u", i ? "," : "; worst:", w->qpn);
		if (w->state == MRC_QPS_ERROR)
			fprintf(c->out, " ERROR");
		else
			fprintf(c->out, " (%u/%u EVs ASSUMED_BAD)", w->bad, w->n_evs);
	}
	fputc('\n', c->out);
}

static void status_text(struct ctx *c, const uint64_t *drops,
			const struct status_view *sv)
{
	const unsigned int *by_state = sv->sum.by_state;
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
	watch_text(c);
	if (c->env->probing)
		probing_text(c);
	for (i = MRC_QPS_INIT; i <= MRC_QPS_ERROR; i++)
		total += by_state[i];
	fprintf(c->out, "QPs: %u (INIT %u, RTR %u, RTS %u, ERROR %u)\n", total,
		by_state[MRC_QPS_INIT], by_state[MRC_QPS_RTR],
		by_state[MRC_QPS_RTS], by_state[MRC_QPS_ERROR]);
	scale_text(c, sv);
	text_drops(c, drops);
}

CMD_EXECUTOR(cmd_exec_status)
{
	struct status_view *sv;
	uint64_t drops[N_DROPS];
	int rc;

	if (read_drops(c, drops))
		return AGENT_EXIT_FAIL;
	sv = malloc(sizeof(*sv));
	if (!sv)
		return failure(c, "out of memory");
	rc = read_status_view(c, sv);
	if (!rc && c->json) {
		status_json(c, drops, sv);
	} else if (!rc) {
		status_text(c, drops, sv);
		if (req->u.status.all)
			rc = cmd_print_qp_list(c, false);
	}
	qp_table_free(&sv->t);
	free(sv);
	return rc;
}

static void stats_counters_json(struct json *j, const char *key,
				const uint64_t *counters)
{
	char buf[32];

	j_obj(j, key);
	for (size_t i = 0; i < N_QP_COUNTERS; i++)
		j_u64(j, cmd_qp_counter_name(i, buf, sizeof(buf)), counters[i]);
	j_end(j);
}

static void stats_header(struct ctx *c)
{
	char buf[32];

	fprintf(c->out, "%-5s %-6s", "QPN", "STATE");
	for (size_t i = 0; i < N_QP_COUNTERS; i++)
		fprintf(c->out, " %14s", cmd_qp_counter_name(i, buf, sizeof(buf)));
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

/* XDP's and TC's control-path counters; false when there are none. */
static bool read_ctl_stats(struct ctx *c, uint64_t *ctl)
{
	return c->env->maps.ctl_stats >= 0 &&
	       !cmd_sum_percpu(c->env->maps.ctl_stats, 0, sizeof(struct mrc_ctl_stats), ctl);
}

static void control_stats_json(struct ctx *c, struct json *j)
{
	const struct pe_status *st = c->env->probing;
	uint64_t ctl[N_CTL_COUNTERS];
	char buf[32];

	if (read_ctl_stats(c, ctl)) {
		j_obj(j, "control");
		for (size_t i = 0; i < N_CTL_COUNTERS; i++)
			j_u64(j, cmd_ctl_counter_name(i, buf, sizeof(buf)), ctl[i]);
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
				cmd_ctl_counter_name(i, buf, sizeof(buf)), ctl[i]);
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

/* Rows: live QPs, and dead ones that counted (batch reads, agent/qp_table.h). */
CMD_EXECUTOR(cmd_exec_stats)
{
	uint64_t drops[N_DROPS], total[N_QP_COUNTERS] = {};
	struct json j = { .f = c->out };
	struct qp_table_maps m;
	struct qp_table t;
	char qpn[12], msg[256];

	(void)req;
	if (read_drops(c, drops))
		return AGENT_EXIT_FAIL;
	cmd_qp_table_maps(c, &m);
	m.qp_evs = m.tx = m.rx = m.cc_view = -1;
	if (qp_table_read(&t, &m, QPT_LIVE_OR_COUNTED, msg, sizeof(msg))) {
		qp_table_free(&t);
		return failure(c, "%s", msg);
	}
	if (c->json) {
		j_obj(&j, NULL);
		json_drops(&j, drops);
		j_arr(&j, "qps");
	} else {
		text_drops(c, drops);
		stats_header(c);
	}
	for (uint32_t r = 0; r < t.n; r++) {
		const uint64_t *counters = t.counters + (size_t)r * QPT_COUNTERS;
		uint32_t n = mrc_slot_to_qpn(t.slot[r]);

		for (size_t i = 0; i < N_QP_COUNTERS; i++)
			total[i] += counters[i];
		if (c->json) {
			j_obj(&j, NULL);
			j_u64(&j, "qpn", n);
			j_str(&j, "state", cmd_qp_state_name(t.info[r].state));
			stats_counters_json(&j, "counters", counters);
			j_end(&j);
		} else {
			snprintf(qpn, sizeof(qpn), "%u", n);
			stats_row(c, qpn, cmd_qp_state_name(t.info[r].state), counters);
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
	qp_table_free(&t);
	return 0;
}
