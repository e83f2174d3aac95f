// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcd runs a command mrcctl sent (agent_cmds.h): the table's parser,
 * then the executor. Nothing here is run by mrcctl.
 */
#include "agent/agent_cmds.h"

#include "agent/cmd_exec.h"
#include "agent/cmd_table.h"

int agent_cmd_run(const struct agent_cmd_env *env, int argc, char **argv,
		  FILE *out, FILE *err, bool *done)
{
	struct cmd_req req;
	int status;

	*done = true;
	/* What mrcctl checked is checked again: mrcd trusts no client. */
	if (!cmd_parse(argc, argv, out, err, &req, &status))
		return status;
	if (cmd_spec_of(req.id)->where != CMD_IN_MRCD)
		return cmd_failure(err, req.name, "mrcctl runs this command itself, "
				   "not mrcd (use mrcctl)");
	return cmd_exec(env, &req, out, err);
}
