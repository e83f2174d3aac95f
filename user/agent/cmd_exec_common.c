// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The executors' dispatch (cmd_exec), and what several of them use:
 * names of states and counters, reading the maps, resolved congestion
 * parameters.
 */
#define _GNU_SOURCE
#include "agent/cmd_exec.h"
#include "agent/map_bulk.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/cc_view.h"
#include "common/ev_profile.h"

/* ---- dispatch ------------------------------------------------------------- */

typedef int cmd_executor(struct ctx *c, const struct cmd_req *req);

/* What mrcd runs for each command; NULL for those mrcctl runs itself. */
static cmd_executor *const executors[CMD__COUNT] = {
	[CMD_STATUS]		 = cmd_exec_status,
	[CMD_STATS]		 = cmd_exec_stats,
	[CMD_QP_LIST]		 = cmd_exec_qp_list,
	[CMD_QP_SHOW]		 = cmd_exec_qp_show,
	[CMD_EV_LIST]		 = cmd_exec_ev_list,
	[CMD_EV_DENY]		 = cmd_exec_ev_deny,
	[CMD_EV_ALLOW]		 = cmd_exec_ev_allow,
	[CMD_EVENTS]		 = cmd_exec_events,
	[CMD_PROBE]		 = cmd_exec_probe,
	[CMD_PROFILE_EV_CREATE]	 = cmd_exec_profile_ev_create,
	[CMD_PROFILE_EV_SET]	 = cmd_exec_profile_ev_set,
	[CMD_PROFILE_EV_ONLINE]	 = cmd_exec_profile_ev_online,
	[CMD_PROFILE_EV_OFFLINE] = cmd_exec_profile_ev_offline,
	[CMD_PROFILE_EV_SHOW]	 = cmd_exec_profile_ev_show,
	[CMD_PROFILE_EV_DELETE]	 = cmd_exec_profile_ev_delete,
	[CMD_PROFILE_CC_CREATE]	 = cmd_exec_profile_cc_create,
	[CMD_PROFILE_CC_SET]	 = cmd_exec_profile_cc_set,
	[CMD_PROFILE_CC_ONLINE]	 = cmd_exec_profile_cc_online,
	[CMD_PROFILE_CC_OFFLINE] = cmd_exec_profile_cc_offline,
	[CMD_PROFILE_CC_SHOW]	 = cmd_exec_profile_cc_show,
	[CMD_PROFILE_CC_DELETE]	 = cmd_exec_profile_cc_delete,
};

int cmd_exec(const struct agent_cmd_env *env, const struct cmd_req *req,
	     FILE *out, FILE *err)
{
	struct ctx c = {
		.env = env, .out = out, .err = err, .name = req->name,
		.json = req->json,
	};

	if ((unsigned int)req->id >= CMD__COUNT || !executors[req->id])
		return failure(&c, "mrcctl runs this command itself, not mrcd");
	return executors[req->id](&c, req);
}

/* ---- names ---------------------------------------------------------------- */

const char *cmd_qp_state_name(uint32_t s)
{
	static const char *const names[] = { "RESET", "INIT", "RTR", "RTS", "ERROR" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *cmd_ev_state_name(uint8_t s)
{
	static const char *const names[] = { "GOOD", "SKIP", "ASSUMED_BAD", "DENIED" };

	return s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}

const char *cmd_ev_format_name(uint32_t f)
{
	return f == MRC_EVF_UDP ? "UDP" : f == MRC_EVF_STEV ? "STEV" :
	       f == MRC_EVF_SRV6 ? "SRV6" : "?";
}

/* Fields of struct mrc_drop_stats, in order (enum mrc_drop_reason). */
static const char *const drop_names[] = {
	"none", "malformed", "bad_opcode", "unknown_qp", "qp_not_ready",
	"bad_source", "out_of_window", "duplicate", "bad_ack", "stale_ack",
	"ring_full", "bad_key", "bad_gso", "bad_icrc",
};

/* Fields of struct mrc_qp_stats, in order. */
static const char *const qp_counter_names[] = {
	"rx_data", "rx_data_bytes", "rx_dup", "rx_oow", "rx_bad", "rx_sack",
	"rx_nack", "losses", "completions", "tx_stamped",
	"nacks_gated", "trim_cuts_gated", "sacks_reneged", "ev_maps_missing",
};

/*
 * Both structs are append-only: a field added to abi.h before it gets a
 * name here is still shown, as counter_N.
 */
static const char *counter_name(const char *const *names, size_t n_names,
				size_t i, char *buf, size_t len)
{
	if (i < n_names && names[i])
		return names[i];
	snprintf(buf, len, "counter_%zu", i);
	return buf;
}

const char *cmd_drop_name(size_t i, char *buf, size_t len)
{
	return counter_name(drop_names, sizeof(drop_names) / sizeof(drop_names[0]),
			    i, buf, len);
}

const char *cmd_qp_counter_name(size_t i, char *buf, size_t len)
{
	return counter_name(qp_counter_names,
			    sizeof(qp_counter_names) / sizeof(qp_counter_names[0]),
			    i, buf, len);
}

/* An address of the maps (IPv6, or IPv4 mapped into IPv6) as text. */
const char *cmd_addr_str(const uint8_t a[16], char *buf, size_t len)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };

	if (!memcmp(a, mapped, sizeof(mapped)))
		return inet_ntop(AF_INET, a + 12, buf, (socklen_t)len);
	return inet_ntop(AF_INET6, a, buf, (socklen_t)len);
}

bool cmd_all_zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	while (len--)
		if (*b++)
			return false;
	return true;
}

/* Fields of struct mrc_ctl_stats, in order (NULL: unnamed, counter_N). */
static const char *const ctl_counter_names[] = {
	"ev_events", "ev_events_lost", "demote_refused", "probes_answered",
	"probe_responses", "probes_stamped", "port_status_rx", "ep_dropped",
	"trim_nacks", "trim_nacks_lasthop", "cc_wakeups", "plane_moves",
	"probes_refused", "port_status_refused", "responses_refused",
	"responses_bad_port",
};

const char *cmd_ctl_counter_name(size_t i, char *buf, size_t len)
{
	return counter_name(ctl_counter_names,
			    sizeof(ctl_counter_names) / sizeof(ctl_counter_names[0]),
			    i, buf, len);
}

/* ---- reading the maps ---------------------------------------------------- */

static int n_cpus(void)
{
	static int n;

	if (!n)
		n = libbpf_num_possible_cpus();
	return n > 0 ? n : 1;
}

int cmd_sum_percpu(int fd, uint32_t key, size_t value_size, uint64_t *sum)
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

int cmd_read_qp_info(struct ctx *c, uint32_t qpn, struct mrc_qp_info *qi)
{
	uint32_t slot = mrc_qpn_to_slot(qpn);

	if (bpf_map_lookup_elem(c->env->maps.qps, &slot, qi))
		return -errno;
	return 0;
}

uint32_t cmd_max_qps(const struct ctx *c)
{
	return map_max_entries(c->env->maps.qps);
}

int cmd_check_qpn(struct ctx *c, uint32_t qpn)
{
	uint32_t max = cmd_max_qps(c);

	if (qpn >= 1 && qpn <= max)
		return 0;
	return failure(c, "QP %u is out of range (1..%u, mrcd --max-qps)", qpn, max);
}

int cmd_find_qp(struct ctx *c, uint32_t qpn, struct mrc_qp_info *qi)
{
	int rc = cmd_check_qpn(c, qpn);

	if (rc)
		return rc;
	rc = cmd_read_qp_info(c, qpn, qi);
	if (rc)
		return failure(c, "reading QP %u: %s", qpn, strerror(-rc));
	if (qi->state == MRC_QPS_RESET)
		return failure(c, "there is no QP %u (in use: mrcctl qp list)", qpn);
	return 0;
}

uint32_t cmd_n_evs_of(const struct mrc_qp_info *qi)
{
	return qi->n_evs < MRC_MAX_EVS ? qi->n_evs : MRC_MAX_EVS;
}

int cmd_profile_ids(int fd, uint32_t *ids, int max)
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

/* ---- congestion windows: resolved parameters ----------------------------- */

/* The members of resolved parameters (`show --derive`, `qp show`). */
void cmd_cc_params_json(struct json *j, const struct mrc_nscc_params *p)
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

void cmd_cc_params_text(struct ctx *c, const struct mrc_nscc_params *p,
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
