// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Executors of `qp list` and `qp show`: a QP as the maps hold it (state,
 * owner, EV counts, PSNs, counters, its congestion window).
 */
#include "agent/cmd_exec.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "agent/cc_view.h"
#include "agent/map_bulk.h"
#include "agent/qp_table.h"
#include "common/qpmaps.h"

static void count_evs(struct qp_view *v, const struct mrc_qp_evs *evs)
{
	struct qp_ev_counts n;

	qp_ev_counts(evs, cmd_n_evs_of(&v->info), &n);
	v->good = n.good;
	v->skip = n.skip;
	v->bad = n.bad;
	v->denied = n.denied;
	v->backup = n.backup;
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
	int err;

	v->cc = QP_CC_UNREADABLE;
	if (!slot)
		v->cc = QP_CC_NONE;
	else if (m->cc_view < 0)
		snprintf(v->cc_err, sizeof(v->cc_err), "mrc_cc_view is missing: the "
			 "fast path mrcd loaded has no congestion control");
	else if (slot > map_max_entries(m->cc_view))
		snprintf(v->cc_err, sizeof(v->cc_err), "window %u is beyond the %u of "
			 "mrc_cc_view", slot, map_max_entries(m->cc_view));
	else if ((err = mrc_qp_state_read(m->cc_view, key, 0, &v->ccv, sizeof(v->ccv))))
		snprintf(v->cc_err, sizeof(v->cc_err), "reading window %u of "
			 "mrc_cc_view: %s", slot, err == -ENOENT ?
			 "it has no view (its process gave it back)" : strerror(-err));
	else
		v->cc = QP_CC_OK;
	/* The resolved parameters are a bonus: the view is what matters. */
	if (v->cc == QP_CC_OK && m->cc >= 0 &&
	    !bpf_map_lookup_elem_flags(m->cc, &key, &st, BPF_F_LOCK)) {
		v->ccp = st.nscc.p;
		v->have_ccp = true;
	}
}

int cmd_read_qp_view(struct ctx *c, uint32_t qpn, struct qp_view *v)
{
	const struct agent_maps *m = &c->env->maps;
	uint32_t slot = mrc_qpn_to_slot(qpn), idx;
	struct mrc_qp_evs *evs;
	int rc;

	memset(v, 0, sizeof(*v));
	v->qpn = qpn;
	rc = cmd_read_qp_info(c, qpn, &v->info);
	if (rc)
		return rc;
	if (bpf_map_lookup_elem(m->qp_owner, &qpn, &v->owner))
		v->owner = 0;
	/* Each from the QP's entry in its maps; a QP without them reads as zero. */
	idx = v->info.state_idx;
	evs = malloc(sizeof(*evs));
	if (evs && !mrc_qp_state_read(m->qp_evs, slot, idx, evs, sizeof(*evs)))
		count_evs(v, evs);
	free(evs);
	if (mrc_qp_state_read(m->tx, slot, idx, &v->tx, sizeof(v->tx)))
		memset(&v->tx, 0, sizeof(v->tx));
	if (mrc_qp_state_read(m->rx, slot, idx, &v->rx, sizeof(v->rx)))
		memset(&v->rx, 0, sizeof(v->rx));
	cmd_sum_percpu(m->qp_stats, slot, sizeof(struct mrc_qp_stats), v->counters);
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
				 cmd_addr_str(qi->peer_addrs[i], a, sizeof(a)));

		if (n < 0 || (size_t)n >= len - off)
			break;
		off += (size_t)n;
	}
	return off ? buf : "-";
}

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
		/* The members mrc-perf prints too (agent/cc_view.c). */
		fputs(", ", j->f);
		cc_view_json_members(j->f, &v->ccv);
		if (full && v->have_ccp) {
			j_obj(j, "params");
			cmd_cc_params_json(j, &v->ccp);
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
	j_str(j, "state", cmd_qp_state_name(v->info.state));
	if (v->owner)
		j_u64(j, "owner_pid", v->owner);
	else
		j_null(j, "owner_pid");
	j_u64(j, "remote_qpn", v->info.remote_qpn);
	j_arr(j, "peers");
	for (i = 0; i < v->info.n_peer_addrs && i < MRC_MAX_PEER_ADDRS; i++)
		j_str(j, NULL, cmd_addr_str(v->info.peer_addrs[i], a, sizeof(a)));
	j_arr_end(j);
	j_str(j, "ev_format", cmd_ev_format_name(v->info.ev_format));
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
		j_str(j, "state", cmd_qp_state_name(v->tx.state));
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
		j_u64(j, cmd_qp_counter_name(k, buf, sizeof(buf)), v->counters[k]);
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
		v->qpn, cmd_qp_state_name(v->info.state), v->owner ? owner : "-",
		v->info.remote_qpn, peers_str(&v->info, peers, sizeof(peers)), evs,
		v->tx.snd_una, v->tx.snd_nxt, v->rx.cack,
		v->counters[QP_COUNTER(rx_data)], v->counters[QP_COUNTER(tx_stamped)],
		v->counters[QP_COUNTER(losses)], qp_cwnd_str(v, cwnd, sizeof(cwnd)));
}

/* The window of row r from the mmapped mrc_cc_view (`qp list` needs no params). */
static void row_cc(const struct qp_table *t, uint32_t r, struct qp_view *v)
{
	uint32_t w = v->info.cc_slot;

	v->cc = QP_CC_UNREADABLE;
	if (!w)
		v->cc = QP_CC_NONE;
	else if (!t->ccv)
		snprintf(v->cc_err, sizeof(v->cc_err), "mrc_cc_view is missing: the "
			 "fast path mrcd loaded has no congestion control");
	else if (w > t->n_ccv)
		snprintf(v->cc_err, sizeof(v->cc_err), "window %u is beyond the %u of "
			 "mrc_cc_view", w, t->n_ccv);
	else if (!t->ccv[r])
		snprintf(v->cc_err, sizeof(v->cc_err), "window %u has no view: "
			 "its process gave it back", w);
	else {
		memcpy(&v->ccv, t->ccv[r], sizeof(v->ccv));
		v->cc = QP_CC_OK;
	}
}

/* Row r of the table as `qp list` shows it (what it does not show stays zero). */
static void row_view(const struct qp_table *t, uint32_t r, struct qp_view *v)
{
	uint32_t slot = t->slot[r];

	v->qpn = mrc_slot_to_qpn(slot);
	v->info = t->info[r];
	v->owner = t->owner[r];
	v->good = v->skip = v->bad = v->denied = v->backup = 0;
	if (t->evs && t->evs[r])
		count_evs(v, t->evs[r]);
	/* Only the fields `qp list` prints: the rest of mrc_tx is kilobytes. */
	v->tx.snd_una = t->tx && t->tx[r] ?
			__atomic_load_n(&t->tx[r]->snd_una, __ATOMIC_RELAXED) : 0;
	v->tx.snd_nxt = t->tx && t->tx[r] ?
			__atomic_load_n(&t->tx[r]->snd_nxt, __ATOMIC_RELAXED) : 0;
	v->rx.cack = t->rx && t->rx[r] ? __atomic_load_n(&t->rx[r]->cack, __ATOMIC_RELAXED) : 0;
	if (t->counters)
		memcpy(v->counters, t->counters + (size_t)r * QPT_COUNTERS, sizeof(v->counters));
	else
		memset(v->counters, 0, sizeof(v->counters));
	row_cc(t, r, v);
}

/* The QP maps of env as the bulk reader takes them. */
void cmd_qp_table_maps(const struct ctx *c, struct qp_table_maps *m)
{
	const struct agent_maps *a = &c->env->maps;

	*m = (struct qp_table_maps){
		.qps = a->qps, .qp_owner = a->qp_owner, .qp_evs = a->qp_evs,
		.tx = a->tx, .rx = a->rx, .cc_view = a->cc_view,
		.qp_stats = a->qp_stats, .ctx_owner = -1,
	};
}

/*
 * Every QP in a few syscalls (agent/qp_table.h): batch lookups and the
 * mmapped arrays, not one lookup per map per QP.
 */
int cmd_print_qp_list(struct ctx *c, bool json)
{
	struct json j = { .f = c->out };
	struct qp_table_maps m;
	struct qp_table t;
	struct qp_view *v;
	char msg[256];
	int rc;

	cmd_qp_table_maps(c, &m);
	v = calloc(1, sizeof(*v));
	if (!v)
		return failure(c, "out of memory");
	rc = qp_table_read(&t, &m, QPT_LIVE, msg, sizeof(msg));
	if (rc) {
		qp_table_free(&t);
		free(v);
		return failure(c, "%s", msg);
	}
	if (json)
		j_arr(&j, NULL);
	else
		qp_list_header(c);
	for (uint32_t r = 0; r < t.n; r++) {
		row_view(&t, r, v);
		if (json)
			qp_json(&j, v, false);
		else
			qp_list_row(c, v);
	}
	if (json)
		j_arr_end(&j);
	qp_table_free(&t);
	free(v);
	return 0;
}

CMD_EXECUTOR(cmd_exec_qp_list)
{
	(void)req;
	return cmd_print_qp_list(c, c->json);
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
		cmd_cc_params_text(c, &v->ccp, "      ");
	}
}

static void qp_show_text(struct ctx *c, const struct qp_view *v)
{
	char peers[8 * (INET6_ADDRSTRLEN + 1)], buf[32];

	fprintf(c->out, "qp %u: %s\n", v->qpn, cmd_qp_state_name(v->info.state));
	if (v->owner)
		fprintf(c->out, "  owner pid    %u\n", v->owner);
	else
		fprintf(c->out, "  owner pid    -\n");
	fprintf(c->out, "  remote qpn   %u\n", v->info.remote_qpn);
	fprintf(c->out, "  peers        %s\n", peers_str(&v->info, peers, sizeof(peers)));
	fprintf(c->out, "  mpr          %u PSNs\n", v->info.mpr);
	fprintf(c->out, "  EVs          %u (%s): active %u GOOD, %u SKIP, %u ASSUMED_BAD, "
		"%u DENIED; %u backup\n", v->info.n_evs,
		cmd_ev_format_name(v->info.ev_format), v->good, v->skip, v->bad,
		v->denied, v->backup);
	fprintf(c->out, "  tx           snd_una %u snd_nxt %u sack_max %u wr %u..%u\n",
		v->tx.snd_una, v->tx.snd_nxt, v->tx.sack_max, v->tx.wr_head,
		v->tx.wr_tail);
	fprintf(c->out, "  rx           cack %u mpr %u sack_pending %u\n",
		v->rx.cack, v->rx.mpr, v->rx.sack_pending);
	fprintf(c->out, "  counters\n");
	for (size_t k = 0; k < N_QP_COUNTERS; k++)
		fprintf(c->out, "    %-14s %" PRIu64 "\n",
			cmd_qp_counter_name(k, buf, sizeof(buf)), v->counters[k]);
	qp_cc_text(c, v);
}

CMD_EXECUTOR(cmd_exec_qp_show)
{
	struct json j = { .f = c->out };
	uint32_t qpn = req->u.qp.qpn;
	struct qp_view *v;
	int rc;

	if (cmd_check_qpn(c, qpn))
		return AGENT_EXIT_FAIL;
	v = malloc(sizeof(*v));
	if (!v)
		return failure(c, "out of memory");
	rc = cmd_read_qp_view(c, qpn, v);
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
