/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * mrcd's side of the mrcctl commands: what mrcd knows (its maps, planes,
 * event log and probing) and the one call that runs a command mrcctl
 * sent. The commands themselves are a table (cmd_table.h) whose parsers
 * turn argv into a typed request, and executors (cmd_exec.h) that run a
 * request against the maps; mrcctl parses, mrcd parses again what it
 * receives and executes.
 *
 * Exit statuses: 0 success, 1 failure, 2 usage error. Text goes to `out`,
 * errors to `err`; with --json, `out` gets exactly one JSON document.
 */
#ifndef MRC_AGENT_CMDS_H
#define MRC_AGENT_CMDS_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mrc/abi.h"
#include "agent/ev_events.h"
#include "agent/probe_engine.h"

/* AGENT_EXIT_OK, AGENT_EXIT_FAIL, AGENT_EXIT_USAGE */
#include "agent/cmd_table.h"

/* What mrcd knows about a plane beyond the mrc_planes map. */
struct agent_plane_info {
	char name[IFNAMSIZ];
	int ifindex;
	const char *xdp_mode;		/* "native", "skb", "none" */
	const char *xdp_how;		/* "libxdp dispatcher", "libxdp", "direct" */
	uint32_t xdp_prog_id;		/* our mrc_xdp_rx; 0 = not attached */
	uint32_t xdp_attached_id;	/* what the device runs (may be a dispatcher) */
	uint32_t tc_prog_id;		/* program of our TC filter; 0 = none */
	bool tc_adopted;		/* the filter was attached before mrcd (tc) */
	/* mrcd's watch: our programs found taken off the plane */
	bool xdp_missing, tc_missing;	/* right now */
	unsigned int xdp_losses, tc_losses, repairs;	/* since start */
};

/*
 * The pinned maps, by fd (-1 where a map is missing: cc and cc_view, the
 * congestion windows, are absent from a fast path older than NSCC).
 */
struct agent_maps {
	int cfg, planes, plane_of, qps, qp_owner, qp_evs, ev_stats;
	int ev_profiles, cc_profiles, qp_stats, drops, rx, tx, ctl_stats;
	int cc, cc_view;
	/* Outer maps of TC's per-EV counters (XDP's: ev_stats), see qpmaps.h. */
	int ev_tx;
};

/*
 * Commands that go on after agent_cmd_run returns (`events` that follows,
 * `probe`): the command checks its arguments and says here what mrcd is
 * to run; mrcd streams the output.
 */
enum agent_stream_kind {
	AGENT_STREAM_NONE,
	AGENT_STREAM_EVENTS,
	AGENT_STREAM_PROBE,
};

struct agent_stream {
	enum agent_stream_kind kind;
	bool json;
	/* EVENTS */
	bool backlog;			/* --all: the kept events first */
	uint64_t count;			/* end after this many; 0 = never */
	/* PROBE */
	struct pe_job_req probe;
};

struct agent_cmd_env {
	const char *pin_dir;
	int pid;			/* mrcd's */
	unsigned int n_planes;
	bool repair;			/* mrcd re-attaches what is taken off (no --no-repair) */
	struct agent_plane_info planes[MRC_MAX_PLANES_ABI];
	struct agent_maps maps;
	const struct ev_log *events;	/* the EV event log */
	const struct pe_status *probing;	/* probing config, links, counters */
	struct agent_stream *stream;	/* out: a stream to run */
};

/*
 * Run the command argv[0..argc-1] (the words after "mrcctl", e.g. "qp",
 * "show", "3", "--json") as mrcctl sent it: parse it (a bad command gets
 * the usage error mrcctl would have printed) and execute it. Returns the
 * exit status; *done is always set (the command was answered in full).
 * Commands mrcctl runs itself (ev expand, doctor) are refused.
 */
int agent_cmd_run(const struct agent_cmd_env *env, int argc, char **argv,
		  FILE *out, FILE *err, bool *done);

#endif
