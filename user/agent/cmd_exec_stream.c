// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Executors of `events` and `probe`: both go on after the command
 * returns, so they tell mrcd (env->stream) what to stream; `events
 * --no-follow` prints the kept events and is done.
 */
#include "agent/cmd_exec.h"

#include <string.h>

#include "agent/ev_events.h"

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

CMD_EXECUTOR(cmd_exec_events)
{
	const struct cmd_events_req *r = &req->u.events;

	if (!c->env->events || !c->env->stream)
		return failure(c, "this mrcd keeps no EV events");
	if (!r->follow) {
		print_backlog(c, r->count);
		return 0;
	}
	*c->env->stream = (struct agent_stream){
		.kind = AGENT_STREAM_EVENTS,
		.json = c->json,
		.backlog = r->all,
		.count = r->count,
	};
	return 0;
}

CMD_EXECUTOR(cmd_exec_probe)
{
	struct pe_job_req probe = req->u.probe;

	if (probe.plane > c->env->n_planes)
		return failure(c, "there is no plane %u (this host has planes 1..%u)",
			       probe.plane, c->env->n_planes);
	if (!c->env->stream)
		return failure(c, "this mrcd cannot send probes");
	probe.json = c->json;
	*c->env->stream = (struct agent_stream){
		.kind = AGENT_STREAM_PROBE,
		.json = c->json,
		.probe = probe,
	};
	return 0;
}
