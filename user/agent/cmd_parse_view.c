// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Parsers of the commands that only look: status, stats, qp list, qp
 * show, doctor.
 */
#include "agent/cmd_parse.h"

/* status, stats, qp list, doctor: --json at most. */
CMD_PARSER(cmd_parse_no_args)
{
	static const struct option opts[] = { COMMON_OPTS, {} };

	if (cmd_next_opt(io, req, argc, argv, opts) != -1 || cmd_no_positionals(io, argc, argv))
		return AGENT_EXIT_USAGE;
	return 0;
}

CMD_PARSER(cmd_parse_qp_show)
{
	static const struct option opts[] = { COMMON_OPTS, {} };

	if (cmd_next_opt(io, req, argc, argv, opts) != -1)
		return AGENT_EXIT_USAGE;
	if (optind >= argc)
		return usage_error(io, "which QP? (mrcctl qp show N)");
	if (cmd_parse_qpn(io, argv[optind++], &req->u.qp.qpn) ||
	    cmd_no_positionals(io, argc, argv))
		return AGENT_EXIT_USAGE;
	return 0;
}

/* status [--all] [--json] */
CMD_PARSER(cmd_parse_status)
{
	enum { OPT_ALL = OPT_HELP + 1 };
	static const struct option opts[] = {
		COMMON_OPTS, { "all", no_argument, NULL, OPT_ALL }, {}
	};
	int o;

	while ((o = cmd_next_opt(io, req, argc, argv, opts)) == OPT_ALL)
		req->u.status.all = true;
	if (o != -1 || cmd_no_positionals(io, argc, argv))
		return AGENT_EXIT_USAGE;
	return 0;
}
