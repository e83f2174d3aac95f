// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The commands mrcctl executes itself, with or without mrcd: `ev expand`
 * (pure computation on the parsed layout) and `doctor` (checks of the
 * host, mrcd included). Their parsers are the table's (cmd_table.c).
 */
#include <stdlib.h>

#include "agent/cmd_json.h"
#include "agent/doctor.h"
#include "common/ev_profile.h"
#include "mrcctl/mrcctl.h"

/* ---- ev expand ------------------------------------------------------------ */

static void expand_report(FILE *out, bool json, struct json *j,
			  const struct ev_layout *l, uint32_t compact, int *invalid)
{
	unsigned int digits = (ev_layout_wire_bits(l) + 3) / 4;
	char err[EV_ERR_LEN], wire_s[16];
	uint32_t wire;

	if (ev_layout_expand(l, compact, &wire, err, sizeof(err))) {
		(*invalid)++;
		if (json) {
			j_obj(j, NULL);
			j_hex(j, "compact", compact);
			j_null(j, "wire");
			j_str(j, "error", err);
			j_end(j);
		} else {
			fprintf(out, "0x%x -> invalid: %s\n", compact, err);
		}
		return;
	}
	snprintf(wire_s, sizeof(wire_s), "0x%0*x", (int)digits, wire);
	if (json) {
		j_obj(j, NULL);
		j_hex(j, "compact", compact);
		j_str(j, "wire", wire_s);
		j_end(j);
	} else {
		fprintf(out, "0x%x -> %s\n", compact, wire_s);
	}
}

static int exec_ev_expand(const struct cmd_req *req, const char *pin_dir,
			  FILE *out, FILE *err)
{
	const struct cmd_ev_expand_req *r = &req->u.ev_expand;
	struct json j = { .f = out };
	unsigned int i;
	int invalid = 0;

	(void)pin_dir;
	(void)err;
	if (req->json)
		j_arr(&j, NULL);
	for (i = 0; i < r->n_evs; i++)
		expand_report(out, req->json, &j, &r->layout, r->evs[i], &invalid);
	if (req->json)
		j_arr_end(&j);
	return invalid ? AGENT_EXIT_FAIL : 0;
}

/* ---- doctor --------------------------------------------------------------- */

static int exec_doctor(const struct cmd_req *req, const char *pin_dir,
		       FILE *out, FILE *err)
{
	return doctor_run(pin_dir, req->json, out, err);
}

/* ---- dispatch ------------------------------------------------------------- */

typedef int local_executor(const struct cmd_req *req, const char *pin_dir,
			   FILE *out, FILE *err);

/* What mrcctl runs for each CMD_IN_MRCCTL command. */
static local_executor *const executors[CMD__COUNT] = {
	[CMD_EV_EXPAND]	= exec_ev_expand,
	[CMD_DOCTOR]	= exec_doctor,
};

int local_exec(const struct cmd_req *req, const char *pin_dir, FILE *out,
	       FILE *err)
{
	if ((unsigned int)req->id >= CMD__COUNT || !executors[req->id])
		return cmd_failure(err, req->name, "not a command mrcctl runs itself");
	return executors[req->id](req, pin_dir, out, err);
}
