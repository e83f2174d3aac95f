// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's many-QP client, the data phase and its output. Every QP
 * WRITEs the same sizes, the same number of times (--iters or --bytes per
 * QP), `depth` outstanding each, into its own region on its server; one
 * loop posts on every QP that has a free slot, polls the one CQ and
 * completes WRITEs of whichever QP they belong to. A QP whose WRITE fails
 * is counted (qps_in_error) and left alone; the others go on. --verify has
 * each server checksum every one of its regions against the source's
 * checksum and say how many match.
 */
#include "multi.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "agent/json_out.h"
#include "latency.h"

/* BEGIN to every server, then every BEGIN_ACK (its QPs are RTS). */
static int mc_begin_size(struct mclient *c, uint64_t size, uint64_t first_op,
			 uint64_t ops)
{
	struct ctl_msg m;
	uint32_t i;

	for (i = 0; i < c->n_peers; i++) {
		ctl_msg_init(&m, CTL_BEGIN);
		m.length = size;
		m.offset = first_op;
		m.ops = ops;
		if (ctl_send(&c->peers[i].ctl, &m))
			return mc_fail(c, "cannot send BEGIN to %s", c->peers[i].peer_str);
	}
	for (i = 0; i < c->n_peers; i++)
		if (mc_await(c, &c->peers[i], CTL_BEGIN_ACK, &m,
			     "waiting for the server's BEGIN_ACK"))
			return -1;
	return 0;
}

static int mc_post_write(struct mclient *c, uint32_t idx, uint64_t size)
{
	const struct opts *o = c->o;
	struct mqp *q = &c->qps[idx];
	uint32_t slot = c->free_slots[(size_t)idx * o->depth + q->n_free - 1];
	uint32_t half = (uint32_t)(size / 2), lkey = mrc_mr_lkey(c->mr);
	struct mrc_sge sge[2];
	struct mrc_send_wr wr;
	int ret;

	/* Two SGEs whenever there is something to split, as the 1-QP client. */
	sge[0] = (struct mrc_sge){ .addr = (uint64_t)(uintptr_t)c->buf,
				   .length = size >= 2 ? half : (uint32_t)size,
				   .lkey = lkey };
	sge[1] = (struct mrc_sge){ .addr = (uint64_t)(uintptr_t)(c->buf + half),
				   .length = (uint32_t)size - half, .lkey = lkey };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = (uint64_t)idx * o->depth + slot;
	wr.opcode = o->imm ? MRC_WR_WRITE_WITH_IMM : MRC_WR_WRITE;
	wr.sg_list = sge;
	wr.num_sge = size >= 2 ? 2 : 1;
	wr.remote_addr = q->remote.vaddr + o->offset;
	wr.rkey = q->remote.rkey;
	wr.imm_data = (uint32_t)q->next_op;
	c->post_ns[wr.wr_id] = now_ns();
	ret = mrc_post_write(q->qp, &wr);
	if (ret)
		return ret;
	q->next_op++;
	q->posted++;
	q->n_free--;
	return 0;
}

/* A QP that may post again (a slot came back) goes on the list, once. */
static void mc_want_post(struct mclient *c, uint32_t idx)
{
	struct mqp *q = &c->qps[idx];

	if (q->to_post || q->failed)
		return;
	q->to_post = true;
	c->to_post[c->n_to_post++] = idx;
}

/* QPs with WRITEs of the size still to complete (a failed one has none). */
static uint32_t mc_count_left(const struct mclient *c, uint64_t ops)
{
	uint32_t i, left = 0;

	for (i = 0; i < c->n_qps; i++)
		if (!c->qps[i].failed && c->qps[i].done < ops)
			left++;
	return left;
}

/* Every QP on the list posts what it can; false when no QP has anything left. */
static bool mc_post_all(struct mclient *c, uint64_t size, uint64_t ops)
{
	uint32_t n = c->n_to_post;
	int ret;

	c->n_to_post = 0;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t idx = c->to_post[k];
		struct mqp *q = &c->qps[idx];

		q->to_post = false;
		if (q->failed)
			continue;
		while (q->posted < ops && q->n_free) {
			ret = mc_post_write(c, idx, size);
			if (ret == -EAGAIN)
				break;	/* send queue or WIMM limit full: poll */
			if (ret) {
				mc_qp_failed(c, q, "mrc_post_write(op %" PRIu64 "): %s",
					     q->next_op, strerror(-ret));
				break;
			}
		}
	}
	return c->qps_left > 0;
}

static void mc_complete(struct mclient *c, const struct mrc_wc *wc, uint64_t now,
			uint64_t ops)
{
	uint64_t idx = wc->wr_id / c->o->depth;
	struct mqp *q = idx < c->n_qps ? &c->qps[idx] : NULL;

	if (!q || q->local.qpn != wc->qp_num) {
		mc_fail(c, "completion for unknown wr_id %" PRIu64 " (qp %u)", wc->wr_id,
			wc->qp_num);
		return;
	}
	if (wc->status != MRC_WC_SUCCESS) {
		mc_qp_failed(c, q, "WRITE failed: %s (op %" PRIu64 ", rkey 0x%x)",
			     status_str(wc->status), q->done, q->remote.rkey);
		/* At once: with every QP failed, idle polls may sleep 20 ms each. */
		c->qps_left = mc_count_left(c, ops);
		return;
	}
	if (wc->opcode != MRC_WC_WRITE)
		return;
	lat_add(c->hist, now - c->post_ns[wc->wr_id]);
	c->free_slots[idx * c->o->depth + q->n_free++] = (uint32_t)(wc->wr_id % c->o->depth);
	if (++q->done == ops && c->qps_left)
		c->qps_left--;
	else if (q->posted < ops)
		mc_want_post(c, (uint32_t)idx);
}

/* During the timed loop: a server may report an error or vanish. */
static int mc_check_servers(struct mclient *c)
{
	struct ctl_msg m;
	uint32_t i;
	int ret;

	for (i = 0; i < c->n_peers; i++) {
		ret = ctl_poll(&c->peers[i].ctl, &m);
		if (ret < 0) {
			char why[ERR_LEN];

			ctl_describe_error(&c->peers[i].ctl, ret, "server", why, sizeof(why));
			return mc_fail(c, "%s: %s while WRITEs were in flight",
				       c->peers[i].peer_str, why);
		}
		if (ret == 1)
			return mc_fail(c, "server %s: %s", c->peers[i].peer_str,
				       m.type == CTL_ERROR ? m.text : "protocol error: "
				       "a message during the WRITEs");
	}
	return 0;
}

/* The timed phase of one size: `ops` WRITEs on every QP. */
static int mc_write_size(struct mclient *c, uint64_t size, uint64_t ops,
			 struct size_result *r)
{
	struct mrc_wc wc[POLL_BATCH];
	uint64_t start, elapsed, now, total = 0;
	unsigned int spins = 0;
	uint32_t i;
	int n, k;

	memset(c->hist, 0, sizeof(*c->hist));
	c->n_to_post = 0;
	for (i = 0; i < c->n_qps; i++) {
		c->qps[i].posted = c->qps[i].done = 0;
		c->qps[i].to_post = false;
		mc_want_post(c, i);
	}
	c->qps_left = mc_count_left(c, ops);
	start = now_ns();
	while (mc_post_all(c, size, ops)) {
		n = mrc_poll_cq(c->cq, POLL_BATCH, wc);
		if (n < 0)
			return mc_fail(c, "mrc_poll_cq: %s", strerror(-n));
		now = n ? now_ns() : 0;
		for (k = 0; k < n; k++)
			mc_complete(c, &wc[k], now, ops);
		/* A stop every turn, not every CHECK_EVERY: a turn may sleep
		 * in mrc_poll_cq() (1 ms with full windows). */
		if (++spins % CHECK_EVERY == 0 || stop_requested) {
			if (mc_check_alive(c, "WRITEs were in flight") || mc_check_servers(c))
				return -1;
			mc_drain_async(c);
			/* A QP failed by an async event leaves without a completion. */
			c->qps_left = mc_count_left(c, ops);
		}
	}
	elapsed = now_ns() - start;
	for (i = 0; i < c->n_qps; i++)
		total += c->qps[i].done;
	r->size = size;
	r->ops = total;
	r->seconds = (double)elapsed / 1e9;
	r->gbps = r->seconds > 0 ? (double)size * (double)total * 8 / r->seconds / 1e9 : 0;
	r->mpps = r->seconds > 0 ? (double)total / r->seconds / 1e6 : 0;
	r->p50_us = lat_percentile_us(c->hist, 50);
	r->p99_us = lat_percentile_us(c->hist, 99);
	r->max_us = (double)c->hist->max_ns / 1e3;
	return c->qps_in_error == c->n_qps ? -1 : 0;
}

static int mc_check_imm_flags(struct mclient *c, const struct mpeer *p,
			      const struct ctl_msg *m)
{
	if (!c->o->imm)
		return 0;
	if (!(m->flags & CTL_F_IMM_IN_ORDER))
		return mc_fail(c, "server %s: immediates out of order (it received %"
			       PRIu64 ")", p->peer_str, m->imm_count);
	if (!(m->flags & CTL_F_IMM_LEN_OK))
		return mc_fail(c, "server %s: immediate length mismatch: %s", p->peer_str,
			       m->text[0] ? m->text : "byte_len differs from the size");
	return 0;
}

/* --verify: every server checksums every one of its regions. */
static int mc_verify_size(struct mclient *c, uint64_t size)
{
	uint64_t expect = csum_update(CSUM_INIT, c->buf, size), bad;
	bool all_ok = true;
	struct ctl_msg m;
	uint32_t i;

	for (i = 0; i < c->n_peers; i++) {
		ctl_msg_init(&m, CTL_VERIFY);
		m.flags = CTL_F_EXPECT;
		m.offset = c->o->offset;
		m.length = size;
		m.checksum = expect;
		if (ctl_send(&c->peers[i].ctl, &m))
			return mc_fail(c, "cannot send VERIFY to %s", c->peers[i].peer_str);
	}
	for (i = 0; i < c->n_peers; i++) {
		struct mpeer *p = &c->peers[i];

		if (mc_await(c, p, CTL_VERIFY_ACK, &m, "waiting for the server's checksums"))
			return -1;
		if (m.status)
			return mc_fail(c, "VERIFY FAILED at size %" PRIu64 ": server %s "
				       "cannot checksum it: %s", size, p->peer_str,
				       m.text[0] ? m.text : strerror((int)m.status));
		if (mc_check_imm_flags(c, p, &m))
			return -1;
		bad = p->n_qps - (m.ops < p->n_qps ? m.ops : p->n_qps);
		if (bad > p->verify_mismatch)
			p->verify_mismatch = bad;
		if (bad) {
			all_ok = false;
			mc_fail(c, "VERIFY FAILED at size %" PRIu64 ": %" PRIu64 " of %u regions "
				"on %s differ from the source (%016" PRIx64 "): %s", size, bad,
				p->n_qps, p->peer_str, expect, m.text);
		}
	}
	if (all_ok)
		c->n_verified++;
	return 0;
}

int mc_run_sizes(struct mclient *c)
{
	const struct opts *o = c->o;
	struct size_result *r;
	uint64_t size, ops;
	int i;

	if (!o->json)
		print_size_header();
	for (i = 0; i < c->n_sizes; i++) {
		size = c->sizes[i];
		ops = ops_for_size(o, size);
		fill_pattern(c->buf, size, size);
		if (mc_begin_size(c, size, c->run_ops, ops))
			return -1;
		r = &c->results[c->n_results];
		if (mc_write_size(c, size, ops, r))
			return -1;
		c->n_results++;
		c->run_ops += ops;
		if (!o->json)
			print_size_line(r);
		if (o->verify && mc_verify_size(c, size))
			return -1;
	}
	return 0;
}

/*
 * Every QP connected and idle for `seconds`, the CQ polled as an idle
 * application must; the servers' sockets peeked at now and then (one may
 * fail). Says "WHAT for S s" first: a measurement waits for that line.
 */
static int mc_stay_idle(struct mclient *c, uint32_t seconds, const char *what,
			const char *while_doing)
{
	uint64_t end = now_ns() + (uint64_t)seconds * NSEC_PER_SEC;
	unsigned int spins = 0;

	if (!seconds)
		return 0;
	report("%s for %u s", what, seconds);
	while (!stop_requested && now_ns() < end) {
		if (mc_progress_idle(c) || mc_check_alive(c, while_doing))
			return -1;
		if (++spins % CTL_PEEK_EVERY == 0 && mc_check_servers(c))
			return -1;
	}
	return 0;
}

/* --linger-s: after the last WRITE. What a measurement of the QPs at rest reads. */
int mc_linger(struct mclient *c)
{
	return mc_stay_idle(c, c->o->linger_s, "linger", "lingering");
}

/* --settle-s: before the first WRITE, so a measurement can start in between. */
int mc_settle(struct mclient *c)
{
	return mc_stay_idle(c, c->o->settle_s, "settle", "settling");
}

/* DONE to every server: each saw every immediate of its QPs, in order. */
int mc_done(struct mclient *c)
{
	uint64_t posted;
	struct ctl_msg m;
	uint32_t i, k;

	for (i = 0; i < c->n_peers; i++) {
		ctl_msg_init(&m, CTL_DONE);
		m.ops = c->run_ops;	/* per QP */
		if (ctl_send(&c->peers[i].ctl, &m))
			return mc_fail(c, "cannot send DONE to %s", c->peers[i].peer_str);
	}
	for (i = 0; i < c->n_peers; i++) {
		struct mpeer *p = &c->peers[i];

		if (mc_await(c, p, CTL_DONE_ACK, &m, "waiting for the server's DONE_ACK") ||
		    mc_check_imm_flags(c, p, &m))
			return -1;
		for (posted = 0, k = i; k < c->n_qps; k += c->n_peers)
			posted += c->qps[k].next_op;
		if (c->o->imm && m.imm_count != posted)
			return mc_fail(c, "server %s: immediates count mismatch: it received %"
				       PRIu64 ", %" PRIu64 " were posted%s", p->peer_str,
				       m.imm_count, posted, m.flags & CTL_F_GAVE_UP ?
				       " (it stopped waiting after 5 s)" : "");
	}
	return 0;
}

static void mc_totals(const struct mclient *c, uint64_t *bytes, double *seconds)
{
	size_results_totals(c->results, c->n_results, bytes, seconds);
}

static bool mc_verified(const struct mclient *c)
{
	return c->n_verified == c->n_sizes && !c->qps_in_error;
}

static uint64_t mc_verify_failed_qps(const struct mclient *c)
{
	uint64_t n = 0;
	uint32_t i;

	for (i = 0; i < c->n_peers; i++)
		n += c->peers[i].verify_mismatch;
	return n;
}

void mc_print_summary(const struct mclient *c)
{
	uint64_t bytes;
	double seconds;

	mc_totals(c, &bytes, &seconds);
	print_total_line(bytes, seconds, !c->o->verify ? "not checked" :
			 mc_verified(c) ? "yes" : "no");
	printf(" qps: %u to %u server%s, set up in %.3f s, %u in error\n", c->n_qps,
	       c->n_peers, c->n_peers == 1 ? "" : "s", c->setup_seconds, c->qps_in_error);
}

/* The 1-QP client's keys (report.c), and qps, servers, setup_seconds,
 * qps_in_error, qps_verify_failed. Counters are summed over the QPs. */
void mc_print_json(struct mclient *c)
{
	uint64_t bytes;
	double seconds;

	mc_totals(c, &bytes, &seconds);
	printf("{\"bytes\": %" PRIu64 ", \"seconds\": %.6f, \"gbps\": %.6f, \"verified\": %s, "
	       "\"qps\": %u, \"servers\": %u, \"setup_seconds\": %.6f, \"qps_in_error\": %u, "
	       "\"qps_verify_failed\": %" PRIu64 ", \"sizes\": [", bytes, seconds,
	       seconds > 0 ? (double)bytes * 8 / seconds / 1e9 : 0,
	       !c->o->verify ? "null" : mc_verified(c) ? "true" : "false",
	       c->n_qps, c->n_peers, c->setup_seconds, c->qps_in_error,
	       mc_verify_failed_qps(c));
	print_size_results_json(c->results, c->n_results);
	printf("], \"imm\": %s, \"tx_retransmits\": %" PRIu64 ", \"retx_bytes\": %" PRIu64
	       ", \"tx_packets\": %" PRIu64 ", \"sack_reneges\": %" PRIu64
	       ", \"timeouts\": %" PRIu64 ", \"fast_retransmits\": %" PRIu64
	       ", \"cc_blocked\": %" PRIu64 ", \"cc_paced\": %" PRIu64
	       ", \"cc_sleeps\": %" PRIu64 ", \"tx_gso_sends\": %" PRIu64
	       ", \"gso_fallbacks\": %" PRIu64 ", \"cc_timeline_t0_ns\": 0"
	       ", \"idle_s\": 0, \"cc\": null",
	       c->o->imm ? "true" : "false", (uint64_t)c->cnt.tx_retransmits,
	       (uint64_t)c->cnt.retx_bytes, (uint64_t)c->cnt.tx_packets,
	       (uint64_t)c->cnt.sack_reneges, (uint64_t)c->cnt.timeouts,
	       (uint64_t)c->cnt.fast_retransmits, (uint64_t)c->cnt.cc_blocked,
	       (uint64_t)c->cnt.cc_paced, (uint64_t)c->cnt.cc_sleeps,
	       (uint64_t)c->cnt.tx_gso_sends, (uint64_t)c->cnt.gso_fallbacks);
	json_wait_stats(stdout, &c->cnt);
	printf(", \"tail_probes\": %" PRIu64 ", \"resends_held\": %" PRIu64
	       ", \"plane_sends_refused\": %" PRIu64,
	       (uint64_t)c->cnt.tail_probes, (uint64_t)c->cnt.resends_held,
	       (uint64_t)c->cnt.plane_sends_refused);
	printf(", \"error\": ");
	json_error(stdout, c->error);
	printf("}\n");
}
