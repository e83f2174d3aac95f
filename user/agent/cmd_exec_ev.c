// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Executors of `ev list` (a QP's EV table with per-EV counters) and
 * `ev deny` / `ev allow` (state changes on the shared, mmapped table).
 */
#include "agent/cmd_exec.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <bpf/bpf.h>

#include "common/ev_state.h"
#include "common/qpmaps.h"
#include "common/state_maps.h"

struct ev_tables {
	struct mrc_qp_info info;
	struct mrc_qp_evs evs;
	struct mrc_qp_ev_stats stats;
};

/*
 * A snapshot of QP qpn's record and EV table (EVs and planes never change
 * in place), or NULL with *rc set and the reason said.
 */
static struct ev_tables *read_ev_table(struct ctx *c, uint32_t qpn, int *rc)
{
	uint32_t slot = mrc_qpn_to_slot(qpn);
	struct ev_tables *t = calloc(1, sizeof(*t));
	int err;

	if (!t) {
		*rc = failure(c, "out of memory");
		return NULL;
	}
	if (cmd_find_qp(c, qpn, &t->info)) {
		*rc = AGENT_EXIT_FAIL;
	} else if ((err = mrc_qp_state_read(c->env->maps.qp_evs, slot,
					     t->info.state_idx, &t->evs, sizeof(t->evs)))) {
		*rc = failure(c, "reading the EV table of QP %u: %s", qpn, strerror(-err));
	} else {
		return t;
	}
	free(t);
	return NULL;
}

CMD_EXECUTOR(cmd_exec_ev_list)
{
	struct json j = { .f = c->out };
	uint32_t qpn = req->u.qp.qpn, slot, i, n;
	struct ev_tables *t;
	int rc = 0;

	t = read_ev_table(c, qpn, &rc);
	if (!t)
		return rc;
	slot = mrc_qpn_to_slot(qpn);
	/*
	 * Counters are a bonus: an EV table without them is still worth
	 * showing. They are the QP's inner maps, read through the outer
	 * maps (user/common/qpmaps.h); read_ev_stats zeroes what it lacks.
	 */
	if (c->env->maps.ev_stats < 0 || c->env->maps.ev_tx < 0 ||
	    mrc_qpmaps_read_ev_stats(c->env->maps.ev_stats, c->env->maps.ev_tx, slot,
				     &t->stats) < 0)
		memset(&t->stats, 0, sizeof(t->stats));
	n = cmd_n_evs_of(&t->info);
	if (c->json)
		j_arr(&j, NULL);
	else
		fprintf(c->out, "qp %u: %u EVs (%s)\n%-5s %-10s %-5s %-4s %-11s %-6s %12s %14s %12s %8s %8s %8s %9s\n",
			qpn, n, cmd_ev_format_name(t->info.ev_format), "INDEX", "EV",
			"PLANE", "PATH", "STATE", "ROLE", "PACKETS", "BYTES", "ACKED", "ECN",
			"TRIMS", "LOSSES", "RTT_US");
	for (i = 0; i < n; i++) {
		const struct mrc_ev_entry *e = &t->evs.ev[i];
		const struct mrc_ev_counters ctr = mrc_ev_counters_of(&t->stats, i);
		const struct mrc_ev_counters *s = &ctr;
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
			j_str(&j, "state", cmd_ev_state_name(e->state));
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
			"%8llu %9s\n", i, ev, e->plane, e->path, cmd_ev_state_name(e->state),
			active ? "active" : "backup", (unsigned long long)s->packets,
			(unsigned long long)s->bytes, (unsigned long long)s->acked,
			(unsigned long long)s->ecn, (unsigned long long)s->trims,
			(unsigned long long)s->losses, rtt_s);
	}
	if (c->json)
		j_arr_end(&j);
	free(t);
	return rc;
}

/* Mark the selected entries in pick[]; a failure names what matched nothing. */
static int select_entries(struct ctx *c, const struct ev_tables *t,
			  const struct cmd_ev_select_req *sel, bool *pick)
{
	uint32_t i, n = cmd_n_evs_of(&t->info), qpn = sel->qpn;
	unsigned int k;
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
	for (k = 0; k < sel->n_items; k++) {
		uint32_t v = sel->items[k];

		if (sel->by_index) {
			if (v >= n)
				return failure(c, "QP %u has EVs 0..%d: no index %" PRIu32,
					       qpn, (int)n - 1, v);
			pick[v] = true;
			continue;
		}
		for (found = false, i = 0; i < n; i++)
			if (t->evs.ev[i].ev == v)
				found = pick[i] = true;
		if (!found)
			return failure(c, "EV 0x%x is not in QP %u's table (see mrcctl ev list "
				       "--qp %u)", v, qpn, qpn);
	}
	return 0;
}

static int ev_set_state(struct ctx *c, const struct cmd_ev_select_req *sel,
			bool deny)
{
	bool pick[MRC_MAX_EVS];
	struct json j = { .f = c->out };
	struct mrc_qp_evs *evs;
	struct ev_tables *t;
	uint32_t qpn = sel->qpn, slot, i, changed = 0;
	int rc = 0;

	t = read_ev_table(c, qpn, &rc);	/* a snapshot to select from */
	if (!t)
		return rc;
	slot = mrc_qpn_to_slot(qpn);
	if (select_entries(c, t, sel, pick)) {
		rc = AGENT_EXIT_FAIL;
		goto out;
	}
	/*
	 * One compare-and-swap per entry on the QP's own table (mapped for
	 * this), as XDP, TC and libmrc change entries: nobody's concurrent
	 * change is undone.
	 */
	evs = mrc_state_map_slot(c->env->maps.qp_evs, slot, t->info.state_idx,
				 sizeof(*evs), PROT_READ | PROT_WRITE);
	if (!evs) {
		rc = failure(c, "cannot map the EV table of QP %u: %s", qpn,
			     strerror(errno));
		goto out;
	}
	for (i = 0; i < cmd_n_evs_of(&t->info); i++) {
		if (!pick[i])
			continue;
		if ((deny ? ev_deny : ev_allow)(evs, cmd_n_evs_of(&t->info), i) == EV_CHANGED)
			changed++;
	}
	mrc_state_unmap(evs, sizeof(*evs));
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

CMD_EXECUTOR(cmd_exec_ev_deny)
{
	return ev_set_state(c, &req->u.ev_select, true);
}

CMD_EXECUTOR(cmd_exec_ev_allow)
{
	return ev_set_state(c, &req->u.ev_select, false);
}
