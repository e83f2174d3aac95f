// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf client, the data phase: for each size (one, or every power of
 * two of a --sweep) BEGIN, then the timed loop that keeps `depth` WRITEs
 * posted and times each from post to completion, then --verify. The loop
 * polls the CQ, the clock and stop_requested (SIGINT/SIGTERM) every turn,
 * and every CHECK_EVERY turns the deadline and the control socket.
 */
#include "perf.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "client.h"
#include "latency.h"

/* MIN, every power of two strictly between, MAX. */
int plan_sizes(uint64_t min, uint64_t max, uint64_t *sizes)
{
	uint64_t p;
	int n = 0;

	sizes[n++] = min;
	for (p = 1; p < max; p <<= 1)
		if (p > min)
			sizes[n++] = p;
	if (max != min)
		sizes[n++] = max;
	return n;
}

uint64_t ops_for_size(const struct opts *o, uint64_t size)
{
	if (!o->bytes_total)
		return o->iters;
	return o->bytes_total / size ? o->bytes_total / size : 1;
}

/* Tells the server which ops carry which size; its answer also says that
 * its QP is ready, which the first BEGIN needs. */
static int client_begin_size(struct client *c, uint64_t size, uint64_t ops)
{
	struct ctl_msg m;

	cc_timeline_begin(c);
	ctl_msg_init(&m, CTL_BEGIN);
	m.length = size;
	m.offset = c->next_op;
	m.ops = ops;
	if (client_send(c, &m))
		return -1;
	return client_await(c, CTL_BEGIN_ACK, &m, "waiting for the server's BEGIN_ACK");
}

static int client_post_write(struct client *c, uint64_t size)
{
	const struct opts *o = c->o;
	uint32_t idx = c->free_slots[c->n_free - 1];
	struct wr_slot *slot = &c->slots[idx];
	uint32_t half = (uint32_t)(size / 2), lkey = mrc_mr_lkey(c->mr);
	struct mrc_send_wr wr;
	int ret;

	/* Two SGEs (the halves of the buffer) whenever there is something to
	 * split, so every run exercises scatter-gather. */
	slot->sge[0].addr = (uint64_t)(uintptr_t)c->buf;
	slot->sge[0].lkey = lkey;
	slot->sge[1].addr = (uint64_t)(uintptr_t)(c->buf + half);
	slot->sge[1].length = (uint32_t)size - half;
	slot->sge[1].lkey = lkey;
	slot->sge[0].length = size >= 2 ? half : (uint32_t)size;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = idx;
	wr.opcode = o->imm ? MRC_WR_WRITE_WITH_IMM : MRC_WR_WRITE;
	wr.sg_list = slot->sge;
	wr.num_sge = size >= 2 ? 2 : 1;
	wr.remote_addr = c->remote.vaddr + o->offset;
	wr.rkey = c->remote.rkey;
	wr.imm_data = (uint32_t)c->next_op;

	slot->post_ns = now_ns();
	ret = mrc_post_write(c->qp, &wr);
	if (ret)
		return ret;
	slot->op = c->next_op++;
	slot->busy = true;
	c->n_free--;
	return 0;
}

static void client_drain_async_events(struct client *c)
{
	if (c->ctx)
		print_async_events(c->ctx);
}

/* After a failed WRITE: if the server already said why, show it too. */
static void client_print_server_error(struct client *c)
{
	struct ctl_msg m;

	if (ctl_poll(&c->ctl, &m) == 1 && m.type == CTL_ERROR)
		report("server error: %s", m.text);
}

/* 1 when `wc` completed one of our WRITEs, -1 on failure. */
static int client_complete(struct client *c, const struct mrc_wc *wc,
			   uint64_t size, uint64_t now)
{
	const struct wr_slot *slot = wc->wr_id < c->o->depth ? &c->slots[wc->wr_id] : NULL;

	if (wc->status != MRC_WC_SUCCESS) {
		c->qp_failed = true;
		client_fail(c, "WRITE failed: %s (wr_id %" PRIu64 ", op %" PRIu64 ", %"
			    PRIu64 " bytes to 0x%" PRIx64 " rkey 0x%x, qp %u)",
			    status_str(wc->status), wc->wr_id, slot ? slot->op : 0,
			    size, c->remote.vaddr + c->o->offset, c->remote.rkey,
			    wc->qp_num);
		client_drain_async_events(c);
		client_print_server_error(c);
		return -1;
	}
	if (wc->opcode != MRC_WC_WRITE)
		return 0;
	if (!slot || !slot->busy)
		return client_fail(c, "completion for unknown wr_id %" PRIu64, wc->wr_id);
	lat_add(c->hist, now - slot->post_ns);
	c->slots[wc->wr_id].busy = false;
	c->free_slots[c->n_free++] = (uint32_t)wc->wr_id;
	return 1;
}

/* During the timed loop: the server may report an error or vanish. */
static int client_check_server(struct client *c)
{
	struct ctl_msg m;
	int ret = ctl_poll(&c->ctl, &m);

	if (ret < 0)
		return client_ctl_fail(c, ret, "WRITEs were in flight");
	if (ret == 1 && m.type == CTL_ERROR)
		return client_fail(c, "server error: %s", m.text);
	if (ret == 1)
		return client_fail(c, "protocol error: the server sent %s during the "
				   "WRITEs", ctl_type_name(m.type));
	return 0;
}

/* The timed phase of one size: `ops` WRITEs, `depth` outstanding. */
static int client_write_size(struct client *c, uint64_t size, uint64_t ops,
			     struct size_result *r)
{
	struct mrc_wc wc[POLL_BATCH];
	uint64_t posted = 0, done = 0, start, elapsed, now;
	unsigned int spins = 0;
	int i, n, ret;

	memset(c->hist, 0, sizeof(*c->hist));
	start = now_ns();
	while (done < ops) {
		while (posted < ops && c->n_free) {
			ret = client_post_write(c, size);
			if (ret == -EAGAIN)
				break;	/* send queue or WIMM limit full: poll */
			if (ret) {
				client_fail(c, "mrc_post_write(op %" PRIu64 "): %s",
					    c->next_op, strerror(-ret));
				client_drain_async_events(c);
				client_print_server_error(c);
				return -1;
			}
			posted++;
		}
		n = mrc_poll_cq(c->cq, POLL_BATCH, wc);
		if (n < 0)
			return client_fail(c, "mrc_poll_cq: %s", strerror(-n));
		cc_timeline_tick(c);
		now = n ? now_ns() : 0;
		for (i = 0; i < n; i++) {
			ret = client_complete(c, &wc[i], size, now);
			if (ret < 0)
				return -1;
			done += (uint64_t)ret;
		}
		/* A stop is looked at every turn: a turn may sleep in
		 * mrc_poll_cq() (1 ms with a full window), so CHECK_EVERY
		 * turns can be seconds. */
		if ((++spins % CHECK_EVERY == 0 || stop_requested) &&
		    (client_check_alive(c, "WRITEs were in flight") ||
		     client_check_server(c)))
			return -1;
	}
	elapsed = now_ns() - start;

	r->size = size;
	r->ops = ops;
	r->seconds = (double)elapsed / 1e9;
	r->gbps = r->seconds > 0 ? (double)size * (double)ops * 8 / r->seconds / 1e9 : 0;
	r->mpps = r->seconds > 0 ? (double)ops / r->seconds / 1e6 : 0;
	r->p50_us = lat_percentile_us(c->hist, 50);
	r->p99_us = lat_percentile_us(c->hist, 99);
	r->max_us = (double)c->hist->max_ns / 1e3;
	return 0;
}

int client_check_imm_flags(struct client *c, const struct ctl_msg *m)
{
	if (!c->o->imm)
		return 0;
	if (!(m->flags & CTL_F_IMM_IN_ORDER))
		return client_fail(c, "immediates out of order (the server received %"
				   PRIu64 ")", m->imm_count);
	if (!(m->flags & CTL_F_IMM_LEN_OK))
		return client_fail(c, "immediate length mismatch: %s",
				   m->text[0] ? m->text : "byte_len differs from the size");
	return 0;
}

/* --verify: the server's checksum of what landed against our source. */
static int client_verify_size(struct client *c, uint64_t size)
{
	uint64_t expect = csum_update(CSUM_INIT, c->buf, size);
	struct ctl_msg m;

	ctl_msg_init(&m, CTL_VERIFY);
	m.offset = c->o->offset;
	m.length = size;
	if (client_send(c, &m) ||
	    client_await(c, CTL_VERIFY_ACK, &m, "waiting for the server's checksum"))
		return -1;
	if (m.status)
		return client_fail(c, "VERIFY FAILED at size %" PRIu64 ": the server "
				   "cannot checksum it: %s", size,
				   m.text[0] ? m.text : strerror((int)m.status));
	if (client_check_imm_flags(c, &m))
		return -1;
	if (m.checksum != expect)
		return client_fail(c, "VERIFY FAILED at size %" PRIu64 ": region bytes [%"
				   PRIu64 ", %" PRIu64 ") have checksum %016" PRIx64
				   ", the source has %016" PRIx64, size, c->o->offset,
				   c->o->offset + size, m.checksum, expect);
	c->n_verified++;
	return 0;
}

int client_run_sizes(struct client *c)
{
	struct size_result *r;
	uint64_t size, ops;
	int i;

	if (!c->o->json)
		print_size_header();
	for (i = 0; i < c->n_sizes; i++) {
		size = c->sizes[i];
		ops = ops_for_size(c->o, size);
		fill_pattern(c->buf, size, size);
		if (client_begin_size(c, size, ops))
			return -1;
		r = &c->results[c->n_results];
		if (client_write_size(c, size, ops, r))
			return -1;
		c->n_results++;
		if (!c->o->json)
			print_size_line(r);
		if (c->o->verify && client_verify_size(c, size))
			return -1;
	}
	return 0;
}
