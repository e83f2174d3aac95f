// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The probe engine (agent/probe_engine.h) in mrcd: started once the fast
 * path is configured, on the pinned maps, with mrcd's logger; stopped at
 * teardown (and told XDP nobody listens for port status any more).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "common/ev_state.h"
#include "mrcd/mrcd.h"
#include "mrc.skel.h"

/* The engine's messages are ours: "mrcd: " and the line. */
static void engine_says(void *arg, const char *msg)
{
	(void)arg;
	pr_err("%s\n", msg);
}

static void probe_setup(const struct agent *a, struct pe_setup *ps)
{
	memset(ps, 0, sizeof(*ps));
	ps->n_planes = a->n_planes;
	for (int i = 0; i < a->n_planes; i++) {
		snprintf(ps->planes[i].name, sizeof(ps->planes[i].name), "%s",
			 a->planes[i].name);
		ps->planes[i].ifindex = a->planes[i].ifindex;
	}
	ps->probe_successes = a->opt.probe_successes;
	ps->probe_interval_ms = a->opt.probe_interval_ms;
	ps->udp_port = a->opt.port;
	ps->n_peers = a->opt.n_peers;
	memcpy(ps->peers, a->opt.peers, sizeof(ps->peers));
	/* Pinned (and mrc_cfg's ABI version written) by now: load.c, config.c. */
	ps->pin_dir = a->paths.pin_dir;
	ps->log = engine_says;
}

int start_probing(struct agent *a)
{
	struct pe_setup ps;
	char err[PATH_MAX + 256];

	probe_setup(a, &ps);
	a->pe = pe_open(&ps, err, sizeof(err));
	if (!a->pe) {
		pr_err("probing: %s\n", err);
		return -1;
	}
	return set_agent_port(a, pe_agent_port(a->pe));
}

/* `clean`: we stop for good, so XDP must stop steering status to us. */
void stop_probing(struct agent *a, bool clean)
{
	if (clean && a->pe && a->skel)
		set_agent_port(a, 0);
	pe_close(a->pe);
	a->pe = NULL;
}
