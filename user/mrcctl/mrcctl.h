/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Inside mrcctl: its one logger, the commands it runs itself, and the
 * name look-ups it does before parsing.
 */
#ifndef MRC_MRCCTL_H
#define MRC_MRCCTL_H

#include <stdio.h>

#include "agent/cmd_table.h"

/*
 * Every message mrcctl prints itself goes through here, to stderr:
 * "mrcctl: TEXT" or, with cmd, "mrcctl CMD: TEXT".
 */
__attribute__((format(printf, 2, 3)))
void mrcctl_log(const char *cmd, const char *fmt, ...);

/*
 * Execute a CMD_IN_MRCCTL request (ev expand, doctor) here: the exit
 * status. pin_dir is the agent's, for doctor.
 */
int local_exec(const struct cmd_req *req, const char *pin_dir, FILE *out,
	       FILE *err);

/*
 * Before parsing: host names in arguments mrcd takes as numeric addresses
 * only (`probe --to HOST`) are looked up here, so the agent never waits
 * on a name server. argv entries may be replaced. 0, or an exit status
 * after a message.
 */
int resolve_names(int argc, char **argv);

#endif
