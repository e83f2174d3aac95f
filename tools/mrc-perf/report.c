// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's output: the client's table (a line per size), its summary,
 * and its --json object; json_error(), the "error" member of both roles.
 */
#include "perf.h"

#include <inttypes.h>

#include "agent/json_out.h"
#include "client.h"

/* "null" or the string: the JSON "error" field of both roles. */
void json_error(FILE *f, const char *err)
{
	if (err && *err)
		json_string(f, err);
	else
		fputs("null", f);
}

void print_size_header(void)
{
	printf(" #bytes     #iterations    BW[Gb/s]    MsgRate[Mpps]   lat_p50[us]  lat_p99[us]  lat_max[us]\n");
	fflush(stdout);
}

/* The "sizes" array's entries of --json, comma-separated. */
void print_size_results_json(const struct size_result *res, int n)
{
	for (int i = 0; i < n; i++) {
		const struct size_result *r = &res[i];

		printf("%s{\"size\": %" PRIu64 ", \"ops\": %" PRIu64 ", \"gbps\": %.6f, "
		       "\"mpps\": %.6f, \"lat_p50_us\": %.3f, \"lat_p99_us\": %.3f, "
		       "\"lat_max_us\": %.3f}",
		       i ? ", " : "", r->size, r->ops, r->gbps, r->mpps, r->p50_us,
		       r->p99_us, r->max_us);
	}
}

void print_size_line(const struct size_result *r)
{
	printf(" %-10" PRIu64 " %-14" PRIu64 " %-11.2f %-15.6f %-12.2f %-12.2f %.2f\n",
	       r->size, r->ops, r->gbps, r->mpps, r->p50_us, r->p99_us, r->max_us);
	fflush(stdout);
}

static bool client_all_verified(const struct client *c)
{
	return c->n_verified == c->n_sizes;
}

void size_results_totals(const struct size_result *res, int n, uint64_t *bytes,
			 double *seconds)
{
	*bytes = 0;
	*seconds = 0;
	for (int i = 0; i < n; i++) {
		*bytes += res[i].size * res[i].ops;
		*seconds += res[i].seconds;
	}
}

void print_total_line(uint64_t bytes, double seconds, const char *verified)
{
	printf(" total: %" PRIu64 " bytes in %.6f s, %.2f Gb/s, verified: %s\n",
	       bytes, seconds, seconds > 0 ? (double)bytes * 8 / seconds / 1e9 : 0,
	       verified);
}

static void client_totals(const struct client *c, uint64_t *bytes, double *seconds)
{
	size_results_totals(c->results, c->n_results, bytes, seconds);
}

void client_print_summary(const struct client *c)
{
	uint64_t bytes;
	double seconds;

	client_totals(c, &bytes, &seconds);
	print_total_line(bytes, seconds, !c->o->verify ? "not checked" :
			 client_all_verified(c) ? "yes" : "no");
	if (c->have_ccv)
		printf(" cc: window %u (%s), cwnd %u bytes, rtt min %.3f us p50 %.3f us "
		       "p99 %.3f us, avg delay %.3f us; md %" PRIu64 ", qa %" PRIu64
		       ", trims %" PRIu64 ", losses %" PRIu64 ", %" PRIu64
		       " packets retransmitted\n", c->cc.slot, cc_algo_name(c->ccv.algo),
		       c->ccv.cwnd, c->ccv.min_rtt_ns / 1e3,
		       cc_rtt_percentile_ns(&c->ccv, 50) / 1e3,
		       cc_rtt_percentile_ns(&c->ccv, 99) / 1e3, c->ccv.avg_delay_ns / 1e3,
		       (uint64_t)c->ccv.n_md, (uint64_t)c->ccv.n_qa,
		       (uint64_t)c->ccv.n_trims, (uint64_t)c->ccv.n_losses,
		       (uint64_t)c->cnt.tx_retransmits);
}

/* "cc": the window at the end (agent/cc_view.c's members), or null. */
static void client_print_cc_json(const struct client *c)
{
	if (!c->have_ccv) {
		fputs("null", stdout);
		return;
	}
	printf("{\"slot\": %u, ", c->cc.slot);
	cc_view_json_members(stdout, &c->ccv);
	printf(", \"tx_retransmits\": %" PRIu64 "}", (uint64_t)c->cnt.tx_retransmits);
}

void json_wait_stats(FILE *f, const struct mrc_qp_counters *cnt)
{
	const struct mrc_wait_stats *w = &cnt->wait;

	fprintf(f, ", \"wait\": {\"spins\": %" PRIu64 ", \"spin_ns\": %" PRIu64
		", \"sleeps\": %" PRIu64 ", \"sleep_ns\": %" PRIu64 ", \"woken\": %" PRIu64
		", \"pace_sleeps\": %" PRIu64 ", \"yields\": %" PRIu64
		", \"spin_limit_ns\": %" PRIu64 ", \"socket_full_sleeps\": %" PRIu64
		", \"ring_publishes\": %" PRIu64 "}",
		(uint64_t)w->spins, (uint64_t)w->spin_ns, (uint64_t)w->sleeps,
		(uint64_t)w->sleep_ns, (uint64_t)w->woken, (uint64_t)w->pace_sleeps,
		(uint64_t)w->yields, (uint64_t)w->spin_limit_ns,
		(uint64_t)w->socket_full_sleeps, (uint64_t)w->ring_publishes);
}

void client_print_json(const struct client *c)
{
	uint64_t bytes;
	double seconds;

	client_totals(c, &bytes, &seconds);
	printf("{\"bytes\": %" PRIu64 ", \"seconds\": %.6f, \"gbps\": %.6f, \"verified\": %s, "
	       "\"qps\": 1, \"servers\": 1, \"setup_seconds\": %.6f, \"qps_in_error\": %d, "
	       "\"qps_verify_failed\": %d, \"sizes\": [", bytes, seconds,
	       seconds > 0 ? (double)bytes * 8 / seconds / 1e9 : 0,
	       !c->o->verify ? "null" : client_all_verified(c) ? "true" : "false",
	       c->setup_seconds, c->qp_failed ? 1 : 0,
	       c->o->verify && c->n_results > c->n_verified ? 1 : 0);
	print_size_results_json(c->results, c->n_results);
	printf("], \"imm\": %s, \"tx_retransmits\": %" PRIu64 ", \"retx_bytes\": %" PRIu64
	       ", \"tx_packets\": %" PRIu64 ", \"sack_reneges\": %" PRIu64
	       ", \"timeouts\": %" PRIu64 ", \"fast_retransmits\": %" PRIu64
	       ", \"cc_blocked\": %" PRIu64 ", \"cc_paced\": %" PRIu64
	       ", \"cc_sleeps\": %" PRIu64 ", \"tx_gso_sends\": %" PRIu64
	       ", \"gso_fallbacks\": %" PRIu64 ", \"cc_timeline_t0_ns\": %" PRIu64
	       ", \"idle_s\": %u, \"cc\": ",
	       c->o->imm ? "true" : "false", (uint64_t)c->cnt.tx_retransmits,
	       (uint64_t)c->cnt.retx_bytes, (uint64_t)c->cnt.tx_packets,
	       (uint64_t)c->cnt.sack_reneges, (uint64_t)c->cnt.timeouts,
	       (uint64_t)c->cnt.fast_retransmits, (uint64_t)c->cnt.cc_blocked,
	       (uint64_t)c->cnt.cc_paced, (uint64_t)c->cnt.cc_sleeps,
	       (uint64_t)c->cnt.tx_gso_sends, (uint64_t)c->cnt.gso_fallbacks, c->cctl.t0_ns,
	       c->o->idle_s);
	client_print_cc_json(c);
	json_wait_stats(stdout, &c->cnt);
	printf(", \"tail_probes\": %" PRIu64 ", \"resends_held\": %" PRIu64
	       ", \"plane_sends_refused\": %" PRIu64,
	       (uint64_t)c->cnt.tail_probes, (uint64_t)c->cnt.resends_held,
	       (uint64_t)c->cnt.plane_sends_refused);
	printf(", \"error\": ");
	json_error(stdout, c->error);
	printf("}\n");
}
