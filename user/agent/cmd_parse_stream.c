// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Parsers of the commands whose output mrcd streams: events, probe.
 */
#include "agent/cmd_parse.h"

#include "agent/probe_net.h"
#include "common/parse.h"

CMD_PARSER(cmd_parse_events)
{
	static const struct option opts[] = {
		{ "all", no_argument, NULL, 'a' },
		{ "no-follow", no_argument, NULL, 'n' },
		{ "count", required_argument, NULL, 'c' },
		COMMON_OPTS, {}
	};
	struct cmd_events_req *r = &req->u.events;
	int o;

	r->follow = true;
	while ((o = cmd_next_opt(io, req, argc, argv, opts)) != -1) {
		switch (o) {
		case 'a':
			r->all = true;
			break;
		case 'n':
			r->follow = false;
			r->all = true;
			break;
		case 'c':
			if (parse_u64(optarg, UINT32_MAX, &r->count) || !r->count)
				return usage_error(io, "--count: '%s' is not a number of "
						   "events (1..%u)", optarg, UINT32_MAX);
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
	}
	if (cmd_no_positionals(io, argc, argv))
		return AGENT_EXIT_USAGE;
	return 0;
}

#define PROBE_COUNT_DEFAULT	3
#define PROBE_INTERVAL_DEFAULT	10
#define PROBE_INTERVAL_MAX	60000

/*
 * An EV: a UDP source port (1..65535), or an STEV EV (up to 32 bits: the
 * high 16 go in the IPv6 flow label, so only towards an IPv6 address).
 */
static int parse_probe_ev(const struct cmd_parse_io *io, const char *s, uint32_t *ev)
{
	uint64_t v;

	if (parse_u64(s, UINT32_MAX, &v) || !v)
		return usage_error(io, "--ev: '%s' is not an EV (1..65535 for a UDP "
				   "source port, up to 0xffffffff for STEV over IPv6; "
				   "decimal or 0x-hex)", s);
	*ev = (uint32_t)v;
	return 0;
}

/*
 * --to takes numeric addresses only: mrcctl looks names up before it
 * parses (mrcctl/resolve.c), so mrcd never waits on a name server.
 */
CMD_PARSER(cmd_parse_probe)
{
	static const struct option opts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "ev", required_argument, NULL, 'e' },
		{ "plane", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'n' },
		{ "interval-ms", required_argument, NULL, 'i' },
		COMMON_OPTS, {}
	};
	struct pe_job_req *r = &req->u.probe;
	const char *to = NULL;
	int o;

	r->count = PROBE_COUNT_DEFAULT;
	r->interval_ms = PROBE_INTERVAL_DEFAULT;
	while ((o = cmd_next_opt(io, req, argc, argv, opts)) != -1) {
		switch (o) {
		case 't':
			to = optarg;
			if (addr_parse(optarg, r->to))
				return usage_error(io, "--to: '%s' is not an IPv4 or IPv6 "
						   "address", optarg);
			break;
		case 'e':
			if (parse_probe_ev(io, optarg, &r->ev))
				return AGENT_EXIT_USAGE;
			break;
		case 'p':
			if (cmd_parse_u32_arg(io, "--plane", optarg, MRC_MAX_PLANES_ABI,
					  &r->plane))
				return AGENT_EXIT_USAGE;
			if (!r->plane)
				return usage_error(io, "--plane: planes are 1..%d",
						   MRC_MAX_PLANES_ABI);
			break;
		case 'n':
			if (cmd_parse_u32_arg(io, "--count", optarg, PE_JOB_MAX_COUNT, &r->count))
				return AGENT_EXIT_USAGE;
			if (!r->count)
				return usage_error(io, "--count: at least 1 probe");
			break;
		case 'i':
			if (cmd_parse_u32_arg(io, "--interval-ms", optarg, PROBE_INTERVAL_MAX,
					  &r->interval_ms))
				return AGENT_EXIT_USAGE;
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
	}
	if (cmd_no_positionals(io, argc, argv))
		return AGENT_EXIT_USAGE;
	if (!to)
		return usage_error(io, "--to HOST is required (the peer's address on "
				   "the plane)");
	if (!r->ev)
		return usage_error(io, "--ev VALUE is required");
	if (r->ev > 0xffff && addr_is_v4mapped(r->to))
		return usage_error(io, "--ev 0x%x is an STEV EV (its high 16 bits ride "
				   "in the IPv6 flow label): --to must be IPv6", r->ev);
	if (!r->plane)
		return usage_error(io, "--plane P is required");
	return 0;
}
