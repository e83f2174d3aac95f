// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of the mrcctl command table and parsers (user/agent/
 * cmd_table.c, cmd_parse_*.c): every command has one row, argv becomes
 * the typed request the executors expect, --help and usage errors are
 * answered by the parser, and mrcd (agent_cmd_run) answers a bad command
 * as mrcctl would and refuses the commands mrcctl runs itself.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "agent/agent_cmds.h"
#include "agent/cmd_cc_params.h"
#include "agent/cmd_table.h"
#include "test.h"

TEST_STATE_DEFINE;

/* The outcome of parsing one command line. */
struct parsed {
	bool ready;
	int status;
	char *out, *err;	/* what the parser printed */
	struct cmd_req req;
};

/* Parse the words of `line` (space-separated, at most 31). */
static void parse_line(const char *line, struct parsed *p)
{
	char *copy = strdup(line), *argv[32], *w, *rest = copy;
	size_t out_len = 0, err_len = 0;
	FILE *out, *err;
	int argc = 0;

	while ((w = strsep(&rest, " ")) && argc < 31)
		if (*w)
			argv[argc++] = w;
	argv[argc] = NULL;
	memset(p, 0, sizeof(*p));
	out = open_memstream(&p->out, &out_len);
	err = open_memstream(&p->err, &err_len);
	p->ready = cmd_parse(argc, argv, out, err, &p->req, &p->status);
	fclose(out);
	fclose(err);
	free(copy);
}

static void parsed_free(struct parsed *p)
{
	free(p->out);
	free(p->err);
}

TEST_CASE(test_table_rows, "cmd_table.one_row_per_command")
{
	for (int id = 0; id < CMD__COUNT; id++) {
		const struct cmd_spec *s = cmd_spec_of((enum cmd_id)id);

		if (!ASSERT_TRUE(s, "a row for every command"))
			continue;
		ASSERT_EQ(s->id, id, "row id");
		ASSERT_TRUE(s->parse && s->synopsis && s->path, "row filled in");
	}
	ASSERT_EQ(cmd_spec_of(CMD_EV_EXPAND)->where, CMD_IN_MRCCTL, "ev expand in mrcctl");
	ASSERT_EQ(cmd_spec_of(CMD_DOCTOR)->where, CMD_IN_MRCCTL, "doctor in mrcctl");
	ASSERT_EQ(cmd_spec_of(CMD_QP_SHOW)->where, CMD_IN_MRCD, "qp show in mrcd");
}

TEST_CASE(test_parse_requests, "cmd_table.typed_requests")
{
	struct parsed p;

	parse_line("qp show 3 --json", &p);
	ASSERT_TRUE(p.ready, "qp show ready");
	ASSERT_EQ(p.req.id, CMD_QP_SHOW, "qp show id");
	ASSERT_EQ(p.req.u.qp.qpn, 3, "qp show qpn");
	ASSERT_TRUE(p.req.json, "qp show --json");
	ASSERT_TRUE(!strcmp(p.req.name, "mrcctl qp show"), "qp show name");
	parsed_free(&p);

	parse_line("ev deny --index 0,5 --qp 2", &p);
	ASSERT_TRUE(p.ready, "ev deny ready");
	ASSERT_EQ(p.req.u.ev_select.qpn, 2, "ev deny qpn");
	ASSERT_TRUE(p.req.u.ev_select.by_index, "ev deny by index");
	ASSERT_EQ(p.req.u.ev_select.n_items, 2, "ev deny items");
	ASSERT_EQ(p.req.u.ev_select.items[1], 5, "ev deny second index");
	parsed_free(&p);

	parse_line("profile ev set 1 --ev 0x10@2,20 --count 8", &p);
	ASSERT_TRUE(p.ready, "profile ev set ready");
	ASSERT_EQ(p.req.u.ev_profile.n_explicit, 2, "explicit EVs");
	ASSERT_EQ(p.req.u.ev_profile.explicit_evs[0].ev, 0x10, "first EV");
	ASSERT_EQ(p.req.u.ev_profile.explicit_evs[0].plane, 2, "first EV's plane");
	ASSERT_EQ(p.req.u.ev_profile.explicit_evs[1].ev, 0x20, "second EV (hex)");
	ASSERT_TRUE(p.req.u.ev_profile.has_count && p.req.u.ev_profile.count == 8, "count");
	ASSERT_TRUE(!p.req.u.ev_profile.has_min_active, "no min-active");
	parsed_free(&p);

	parse_line("profile cc create 4 --gamma 0.5 --disable", &p);
	ASSERT_TRUE(p.ready, "profile cc create ready");
	ASSERT_EQ(p.req.u.cc_profile.id, 4, "cc profile id");
	ASSERT_EQ(p.req.u.cc_profile.edit.algo, MRC_CC_NONE, "--disable");
	for (size_t i = 0; i < N_CC_PARAMS; i++)
		if (!strcmp(cc_params[i].opt, "gamma")) {
			ASSERT_TRUE(p.req.u.cc_profile.edit.set[i], "gamma set");
			ASSERT_EQ(p.req.u.cc_profile.edit.val[i], 500, "gamma value");
		}
	parsed_free(&p);

	parse_line("events --no-follow --count 5", &p);
	ASSERT_TRUE(p.ready && !p.req.u.events.follow && p.req.u.events.all, "events");
	ASSERT_EQ(p.req.u.events.count, 5, "events count");
	parsed_free(&p);
}

TEST_CASE(test_parse_answers, "cmd_table.help_and_usage_errors")
{
	struct parsed p;

	parse_line("qp show --help", &p);
	ASSERT_TRUE(!p.ready, "help is answered");
	ASSERT_EQ(p.status, 0, "help status");
	ASSERT_TRUE(!strncmp(p.out, "usage: mrcctl qp show N [--json]\n", 33), "help text");
	parsed_free(&p);

	parse_line("qp show 0", &p);
	ASSERT_TRUE(!p.ready, "usage error is answered");
	ASSERT_EQ(p.status, AGENT_EXIT_USAGE, "usage status");
	ASSERT_TRUE(!strcmp(p.err, "mrcctl qp show: '0' is not a QP number (1..65536 "
			    "at most, mrcd --max-qps)\n"
			    "try 'mrcctl qp show --help'\n"), "usage message");
	parsed_free(&p);

	/* The host's limit is mrcd's: the parser refuses only what none can have. */
	parse_line("qp show 65537", &p);
	ASSERT_EQ(p.status, AGENT_EXIT_USAGE, "beyond MRC_QPS_LIMIT");
	parsed_free(&p);
	parse_line("qp show 65536", &p);
	ASSERT_TRUE(p.ready, "MRC_QPS_LIMIT parses");
	ASSERT_EQ(p.req.u.qp.qpn, 65536, "the number");
	parsed_free(&p);
	parse_line("status --all", &p);
	ASSERT_TRUE(p.ready && p.req.u.status.all, "status --all");
	parsed_free(&p);
	parse_line("status", &p);
	ASSERT_TRUE(p.ready && !p.req.u.status.all, "status without --all");
	parsed_free(&p);

	parse_line("qp frob", &p);
	ASSERT_EQ(p.status, AGENT_EXIT_USAGE, "unknown subcommand");
	ASSERT_TRUE(!strncmp(p.err, "mrcctl qp: unknown subcommand 'frob'\n", 37),
		    "unknown subcommand message");
	parsed_free(&p);
}

/* What mrcd answers to argv (no maps needed for these). */
static int agent_answer(int argc, char **argv, char **err)
{
	struct agent_cmd_env env = { .pin_dir = "/nonexistent" };
	char *out = NULL;
	size_t out_len = 0, err_len = 0;
	FILE *fo = open_memstream(&out, &out_len);
	FILE *fe = open_memstream(err, &err_len);
	bool done = false;
	int status;

	status = agent_cmd_run(&env, argc, argv, fo, fe, &done);
	fclose(fo);
	fclose(fe);
	free(out);
	ASSERT_TRUE(done, "agent_cmd_run answers in full");
	return status;
}

TEST_CASE(test_agent_side, "cmd_table.mrcd_checks_what_it_gets")
{
	char *bad[] = { "ev", "list", "--qp", "x", NULL };
	char *local[] = { "ev", "expand", "--fmt-fields", "16", "--field", "width=16",
			  "--ev", "1", NULL };
	char *err = NULL;

	ASSERT_EQ(agent_answer(4, bad, &err), AGENT_EXIT_USAGE, "bad input: usage");
	ASSERT_TRUE(!strcmp(err, "mrcctl ev list: 'x' is not a QP number (1..65536 at most, "
			    "mrcd --max-qps)\n"
			    "try 'mrcctl ev list --help'\n"), "bad input: message");
	free(err);
	err = NULL;
	ASSERT_EQ(agent_answer(8, local, &err), AGENT_EXIT_FAIL, "local command refused");
	ASSERT_TRUE(err && strstr(err, "mrcctl runs this command itself"), "refusal says why");
	free(err);
}

int main(void)
{
	RUN_REGISTERED_TESTS();
	return TEST_EXIT();
}
