// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * `mrcctl probe` (see probe_engine.h): connectionless probes to an
 * address on one plane, each job with its own socket, its output (a line
 * per probe, or one JSON document) kept until mrcd has sent it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/errmsg.h"
#include "agent/probe_int.h"
#include "agent/probe_net.h"

/* ---- `mrcctl probe` ----------------------------------------------------- */

__attribute__((format(printf, 2, 3)))
static void job_print(struct pe_job *job, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = job->out_cap - job->out_len;

		va_start(ap, fmt);
		n = vsnprintf(job->out + job->out_len, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			job->out_len += (size_t)n;
			return;
		}
		char *bigger = realloc(job->out, job->out_cap * 2 + (size_t)n);

		if (!bigger)
			return;
		job->out = bigger;
		job->out_cap = job->out_cap * 2 + (size_t)n;
	}
}

static void job_json(struct pe_job *job)
{
	char to[INET6_ADDRSTRLEN];

	job_print(job, "{\"to\": \"%s\", \"ev\": %u, \"plane\": %u, \"sent\": %u, "
		  "\"answered\": %u, ", addr_text(job->req.to, to, sizeof(to)),
		  job->req.ev, job->req.plane, job->sent, job->answered);
	if (job->answered)
		job_print(job, "\"rtt_min_ns\": %" PRIu64 ", \"rtt_avg_ns\": %" PRIu64
			  ", \"rtt_max_ns\": %" PRIu64 ", ", job->rtt_min,
			  job->rtt_sum / job->answered, job->rtt_max);
	else
		job_print(job, "\"rtt_min_ns\": null, \"rtt_avg_ns\": null, "
			  "\"rtt_max_ns\": null, ");
	job_print(job, "\"probes\": [");
	for (uint32_t i = 0; i < job->sent; i++) {
		if (job->rtt[i])
			job_print(job, "%s{\"seq\": %u, \"rtt_ns\": %" PRIu64
				  ", \"service_ns\": %u}", i ? ", " : "", i + 1,
				  job->rtt[i], job->service[i]);
		else
			job_print(job, "%s{\"seq\": %u, \"lost\": true}", i ? ", " : "",
				  i + 1);
	}
	job_print(job, "]}\n");
}

static void job_finish(struct pe_job *job)
{
	job->done = true;
	if (job->req.json) {
		job_json(job);
		return;
	}
	if (job->answered)
		job_print(job, "%u sent, %u answered, rtt min/avg/max %" PRIu64 "/%" PRIu64
			  "/%" PRIu64 " ns\n", job->sent, job->answered, job->rtt_min,
			  job->rtt_sum / job->answered, job->rtt_max);
	else
		job_print(job, "%u sent, 0 answered\n", job->sent);
}

/* The probe we waited for is over (answered or not): plan the next one. */
static void job_probe_over(struct probe_engine *pe, struct pe_job *job)
{
	job->waiting = false;
	job->next_ns = pe->now + (uint64_t)job->req.interval_ms * MS_NS;
	if (job->sent >= job->req.count)
		job_finish(job);
}

static void job_send(struct probe_engine *pe, struct pe_job *job)
{
	const struct pe_plane *p = &pe->planes[job->req.plane - 1];
	uint8_t pkt[EP_PKT_LEN];

	/* `mrcctl probe` names an EV, not a table: UDP or STEV probes. */
	ep_build_probe(pkt, job->base_id + job->sent, job->req.ev,
		       (uint8_t)job->req.plane, job->port, MRC_EVF_UDP, 0);
	job->sent++;
	job->waiting = true;
	job->sent_ns = pe->now;
	pe->counters[PE_MANUAL_PROBES_SENT]++;
	if (!p->up || pe_send_ep(pe, job->fd, job->req.to, pkt))
		pe->counters[PE_PROBES_SEND_FAILED]++;	/* counts as unanswered */
}

void pe_job_step(struct probe_engine *pe, struct pe_job *job)
{
	if (job->done)
		return;
	if (job->waiting && pe->now - job->sent_ns >= PE_JOB_TIMEOUT_MS * MS_NS) {
		if (!job->req.json)
			job_print(job, "probe %u: no answer in %u ms\n", job->sent,
				  PE_JOB_TIMEOUT_MS);
		job_probe_over(pe, job);
	}
	if (!job->done && !job->waiting && pe->now >= job->next_ns)
		job_send(pe, job);
}

void pe_job_packet(struct probe_engine *pe, const uint8_t src[16], uint8_t opcode,
		       const struct mrc_eph *eph, void *arg)
{
	struct pe_job *job = arg;
	uint32_t i = job->sent - 1;
	uint64_t rtt;

	if (opcode != MRC_OP_EP_RESPONSE || eph->kind != MRC_EP_EV_PROBE ||
	    !job->waiting || eph->req_id != job->base_id + i || eph->ev != job->req.ev)
		return;
	if (memcmp(src, job->req.to, 16)) {
		pe->counters[PE_PROBE_ANSWERS_FOREIGN]++;	/* not who we probed */
		return;
	}
	rtt = pe_answer_rtt(eph, job->sent_ns, pe->now);
	job->rtt[i] = rtt;
	job->service[i] = eph->service_ns;
	job->answered++;
	job->rtt_sum += rtt;
	job->rtt_min = job->answered == 1 || rtt < job->rtt_min ? rtt : job->rtt_min;
	job->rtt_max = rtt > job->rtt_max ? rtt : job->rtt_max;
	pe->counters[PE_MANUAL_PROBES_ANSWERED]++;
	if (!job->req.json)
		job_print(job, "probe %u: rtt %" PRIu64 " ns (responder %u ns)\n",
			  i + 1, rtt, eph->service_ns);
	job_probe_over(pe, job);
	pe_job_step(pe, job);
}

static int job_check(const struct probe_engine *pe, const struct pe_job_req *req,
		     char *err, size_t errlen)
{
	const struct pe_plane *p;
	char to[INET6_ADDRSTRLEN];
	bool v4 = addr_is_v4mapped(req->to);

	if (req->plane < 1 || (int)req->plane > pe->cfg.n_planes)
		return fail(-ENODEV, err, errlen, "there is no plane %u (this host has "
			    "planes 1..%d)", req->plane, pe->cfg.n_planes);
	p = &pe->planes[req->plane - 1];
	if (!p->up)
		return fail(-ENETDOWN, err, errlen, "plane %u (%s) is down: no probe "
			    "can leave on it", req->plane, p->name);
	if ((v4 && !p->has4) || (!v4 && !p->has6))
		return fail(-EADDRNOTAVAIL, err, errlen, "plane %u (%s) has no %s "
			    "address to probe %s from", req->plane, p->name,
			    v4 ? "IPv4" : "IPv6", addr_text(req->to, to, sizeof(to)));
	return 0;
}

static struct pe_job *job_alloc(const struct pe_job_req *req)
{
	struct pe_job *job = calloc(1, sizeof(*job));

	if (!job)
		return NULL;
	job->req = *req;
	job->fd = -1;
	job->out_cap = 256;
	job->out = malloc(job->out_cap);
	job->rtt = calloc(req->count, sizeof(*job->rtt));
	job->service = calloc(req->count, sizeof(*job->service));
	if (!job->out || !job->rtt || !job->service) {
		free(job->out);
		free(job->rtt);
		free(job->service);
		free(job);
		return NULL;
	}
	return job;
}

void pe_job_free(struct pe_job *job)
{
	if (job->fd >= 0)
		close(job->fd);
	free(job->out);
	free(job->rtt);
	free(job->service);
	free(job);
}

struct pe_job *pe_job_start(struct probe_engine *pe, const struct pe_job_req *req,
			    char *err, size_t errlen)
{
	const struct pe_plane *p;
	struct pe_job *job;
	int free_slot = -1;
	bool v4;

	for (int i = 0; i < PE_MAX_JOBS && free_slot < 0; i++)
		if (!pe->jobs[i])
			free_slot = i;
	if (free_slot < 0) {
		fail(0, err, errlen, "%d probe commands are running already: try "
		     "again later", PE_MAX_JOBS);
		return NULL;
	}
	if (!req->count || req->count > PE_JOB_MAX_COUNT) {
		fail(0, err, errlen, "%u probes: the count is 1..%d", req->count,
		     PE_JOB_MAX_COUNT);
		return NULL;
	}
	if (job_check(pe, req, err, errlen))
		return NULL;
	job = job_alloc(req);
	if (!job) {
		fail(0, err, errlen, "out of memory");
		return NULL;
	}
	p = &pe->planes[req->plane - 1];
	v4 = addr_is_v4mapped(req->to);
	job->fd = plane_socket_open(p->name, v4 ? AF_INET : AF_INET6,
				    v4 ? p->addr4 : p->addr6, &job->port, err, errlen);
	if (job->fd < 0) {
		pe_job_free(job);
		return NULL;
	}
	/* Ids differ between jobs, so a late answer to another job never matches. */
	job->base_id = (uint32_t)(mono_ns() >> 10) ^ (++pe->job_ids << 20);
	pe->now = mono_ns();
	pe->jobs[free_slot] = job;
	/* XDP must take the answer (target known, our port) before it can come. */
	pe_peers_sync(pe);
	job_send(pe, job);
	return job;
}

const char *pe_job_output(const struct pe_job *job, size_t from, size_t *len)
{
	*len = from < job->out_len ? job->out_len - from : 0;
	return job->out + (from < job->out_len ? from : job->out_len);
}

bool pe_job_done(const struct pe_job *job, int *status)
{
	*status = job->answered ? 0 : 1;
	return job->done;
}

void pe_job_end(struct probe_engine *pe, struct pe_job *job)
{
	for (int i = 0; i < PE_MAX_JOBS; i++)
		if (pe->jobs[i] == job)
			pe->jobs[i] = NULL;
	pe_job_free(job);
	pe_peers_sync(pe);
}
