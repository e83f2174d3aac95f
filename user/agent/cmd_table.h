/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The mrcctl commands as a table, and the parsing of a command line into
 * a typed request. Parsing is all this half does: it never touches the
 * maps, and it needs no agent.
 *
 *   mrcctl   parses argv (usage errors and --help are answered then),
 *            runs the commands marked CMD_IN_MRCCTL itself (mrcctl/),
 *            and sends the argv of every other command to mrcd;
 *   mrcd     parses the argv it receives with the same parser (so bad
 *            input gets the same clear error, never a crash) and hands
 *            the request to the executors (cmd_exec.h).
 *
 * The table (cmd_table.c) holds each command's words, synopsis, help,
 * parser and where it runs; each side keeps its executors in an array
 * indexed by enum cmd_id.
 */
#ifndef MRC_CMD_TABLE_H
#define MRC_CMD_TABLE_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mrc/abi.h"
#include "common/ev_profile.h"
#include "agent/probe_engine.h"

#define AGENT_EXIT_OK		0
#define AGENT_EXIT_FAIL		1
#define AGENT_EXIT_USAGE	2

enum cmd_id {
	CMD_STATUS,
	CMD_STATS,
	CMD_QP_LIST,
	CMD_QP_SHOW,
	CMD_EV_LIST,
	CMD_EV_DENY,
	CMD_EV_ALLOW,
	CMD_EV_EXPAND,
	CMD_EVENTS,
	CMD_PROBE,
	CMD_DOCTOR,
	CMD_PROFILE_EV_CREATE,
	CMD_PROFILE_EV_SET,
	CMD_PROFILE_EV_ONLINE,
	CMD_PROFILE_EV_OFFLINE,
	CMD_PROFILE_EV_SHOW,
	CMD_PROFILE_EV_DELETE,
	CMD_PROFILE_CC_CREATE,
	CMD_PROFILE_CC_SET,
	CMD_PROFILE_CC_ONLINE,
	CMD_PROFILE_CC_OFFLINE,
	CMD_PROFILE_CC_SHOW,
	CMD_PROFILE_CC_DELETE,
	CMD__COUNT
};

/* Who executes a command. */
enum cmd_where {
	CMD_IN_MRCD,		/* against the maps mrcd holds */
	CMD_IN_MRCCTL,		/* computed or checked by mrcctl itself */
};

/* ---- requests: what a parser makes of a command line ------------------ */

/* `qp show N`, `ev list --qp N` */
struct cmd_qp_req {
	uint32_t qpn;
};

/* `status [--all]`: --all adds every QP to the text (JSON has the summary). */
struct cmd_status_req {
	bool all;
};

/* `ev deny|allow --qp N SELECTOR`: exactly one selector is given. */
struct cmd_ev_select_req {
	uint32_t qpn;
	uint32_t plane;			/* --plane P; 0 = not given */
	bool by_index;			/* items are --index entries, else --ev EVs */
	unsigned int n_items;
	uint32_t items[MRC_MAX_EVS];
};

/* `ev expand` */
struct cmd_ev_expand_req {
	struct ev_layout layout;
	unsigned int n_evs;
	uint32_t evs[MRC_MAX_EVS];	/* compact EVs */
};

/* `profile ev create|set`: what was given, checked and converted. */
struct cmd_ev_profile_req {
	uint32_t id;
	enum ev_profile_type type;	/* create only */
	bool has_format;
	uint32_t format;		/* enum mrc_ev_format */
	bool has_srv6_block;
	uint32_t srv6_block;		/* network order */
	bool has_fmt_fields;
	unsigned int n_fmt;
	uint8_t fmt[EV_MAX_FIELDS];
	unsigned int n_fields;		/* --field: replaces all fields when > 0 */
	struct ev_field fields[EV_MAX_FIELDS];
	bool has_explicit;		/* --ev: replaces the EV list */
	unsigned int n_explicit;
	struct ev_explicit_entry explicit_evs[MRC_MAX_EVS];
	bool has_count, has_min_active, has_backups, has_event_mask, has_burst;
	uint32_t count, min_active, backups, event_mask, burst;
};

/* `profile ev|cc online|offline|show|delete [ID]` */
struct cmd_profile_id_req {
	bool has_id;			/* show: one profile, else all */
	uint32_t id;
};

#define N_CC_PARAMS	14	/* entries of cc_params[] (cmd_cc_params.h) */

/* `profile cc create|set`: each parameter given, and the switches. */
struct cc_profile_edit {
	bool set[N_CC_PARAMS];
	uint32_t val[N_CC_PARAMS];
	int algo;		/* enum mrc_cc_algo; -1 = unchanged */
	const char *algo_opt;	/* the option that chose it */
	int qa;			/* quick adapt: 1 on, 0 off, -1 unchanged */
	const char *qa_opt;
	int pacing;		/* 1 on, 0 off, -1 unchanged */
	const char *pacing_opt;
	bool any;
};

struct cmd_cc_profile_req {
	uint32_t id;
	struct cc_profile_edit edit;
};

/* `profile cc show`: --derive's options; 0 = not given. */
struct cc_derive_req {
	bool on;
	uint32_t mtu, planes, link_mbps;
};

struct cmd_cc_show_req {
	struct cmd_profile_id_req which;
	struct cc_derive_req derive;
};

/* `events` */
struct cmd_events_req {
	bool all;			/* the kept events first */
	bool follow;
	uint64_t count;			/* end after this many; 0 = never */
};

struct cmd_req {
	enum cmd_id id;
	char name[64];			/* "mrcctl qp show", for messages */
	bool json;
	union {
		struct cmd_qp_req qp;
		struct cmd_status_req status;
		struct cmd_ev_select_req ev_select;
		struct cmd_ev_expand_req ev_expand;
		struct cmd_ev_profile_req ev_profile;
		struct cmd_profile_id_req profile;
		struct cmd_cc_profile_req cc_profile;
		struct cmd_cc_show_req cc_show;
		struct cmd_events_req events;
		struct pe_job_req probe;	/* `probe`; .json set by mrcd */
	} u;
};

/* ---- the table ---------------------------------------------------------- */

/* Where a parser writes its usage errors, and the command's name for them. */
struct cmd_parse_io {
	FILE *err;
	const char *name;
};

struct cmd_spec {
	const char *path;	/* the words naming it: "profile ev create" */
	enum cmd_id id;
	enum cmd_where where;
	/* argv[0] stands for the words; 0, or an exit status after a message. */
	int (*parse)(const struct cmd_parse_io *io, int argc, char **argv,
		     struct cmd_req *req);
	const char *synopsis;	/* what follows the words */
	const char *help;	/* more lines, may be NULL */
};

const struct cmd_spec *cmd_spec_of(enum cmd_id id);

/*
 * Parse the command argv[0..argc-1] (the words after "mrcctl [--pin-dir
 * D]", e.g. "qp", "show", "3", "--json"). True with *req ready to
 * execute; false when the parser answered the command itself (--help on
 * `out`, a usage error on `err`), with the exit status in *status.
 * getopt reorders argv; req may point into it.
 */
bool cmd_parse(int argc, char **argv, FILE *out, FILE *err,
	       struct cmd_req *req, int *status);

/* The overview `mrcctl --help` prints. */
void cmd_usage_overview(FILE *f);

/* ---- messages ------------------------------------------------------------ */

/*
 * Every message of a command, in mrcctl and in mrcd: "NAME: TEXT\n" on f.
 * NAME is "mrcctl" or "mrcctl qp show".
 */
__attribute__((format(printf, 3, 0)))
void cmd_vmsg(FILE *f, const char *name, const char *fmt, va_list ap);

/* A failure: the message, then AGENT_EXIT_FAIL. */
__attribute__((format(printf, 3, 4)))
int cmd_failure(FILE *f, const char *name, const char *fmt, ...);

/* A usage error: the message and "try 'NAME --help'", then AGENT_EXIT_USAGE. */
__attribute__((format(printf, 3, 4)))
int cmd_usage_error(FILE *f, const char *name, const char *fmt, ...);

/* Whether argv asks for help (-h or --help before any "--"). */
bool cmd_wants_help(int argc, char **argv);

#endif
