/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Inside the command parsers (cmd_parse_*.c): getopt with our messages,
 * the argument parsers every family uses, and each command's parser.
 * A parser reads argv and fills a struct cmd_req; it has no access to
 * the maps or to mrcd, so it runs the same in mrcctl and in mrcd.
 */
#ifndef MRC_CMD_PARSE_H
#define MRC_CMD_PARSE_H

#include <getopt.h>

#include "agent/cmd_table.h"

#define usage_error(io, ...)	cmd_usage_error((io)->err, (io)->name, __VA_ARGS__)
#define parse_failure(io, ...)	cmd_failure((io)->err, (io)->name, __VA_ARGS__)

enum { OPT_JSON = 0x1000, OPT_HELP };

#define COMMON_OPTS \
	{ "json", no_argument, NULL, OPT_JSON }, \
	{ "help", no_argument, NULL, OPT_HELP }

/*
 * getopt_long with our messages and the options every command has
 * (--json sets req->json). Returns the next option, -1 at the end, or
 * '?' after a usage error.
 */
int cmd_next_opt(const struct cmd_parse_io *io, struct cmd_req *req, int argc,
	     char **argv, const struct option *opts);

/* Reset getopt for a fresh argument vector. */
void cmd_opt_start(void);

/* A usage error for the first word left, if any. */
int cmd_no_positionals(const struct cmd_parse_io *io, int argc, char **argv);

int cmd_parse_qpn(const struct cmd_parse_io *io, const char *s, uint32_t *qpn);

/* Hex with or without 0x, as `ev list` prints EVs. */
int cmd_parse_hex32(const char *s, uint32_t *out);

int cmd_parse_u32_arg(const struct cmd_parse_io *io, const char *opt, const char *s,
		  uint32_t max, uint32_t *out);

/*
 * Split a comma-separated list into items[max]; empty items are errors.
 * The pointers point into `copy`, which the caller frees.
 */
int cmd_split_list(const struct cmd_parse_io *io, const char *opt, const char *s,
	       char **copy, char **items, int max, int *n);

/* The profile ID at argv[optind], and nothing after it. */
int cmd_parse_profile_id(const struct cmd_parse_io *io, int argc, char **argv,
		     uint32_t *id);

/* ---- the parsers of the table ------------------------------------------ */

#define CMD_PARSER(fn) \
	int fn(const struct cmd_parse_io *io, int argc, char **argv, struct cmd_req *req)

/* cmd_parse_view.c: status, stats, qp, doctor */
CMD_PARSER(cmd_parse_no_args);
CMD_PARSER(cmd_parse_qp_show);
CMD_PARSER(cmd_parse_status);

/* cmd_parse_ev.c */
CMD_PARSER(cmd_parse_ev_list);
CMD_PARSER(cmd_parse_ev_select);
CMD_PARSER(cmd_parse_ev_expand);

/* cmd_parse_stream.c */
CMD_PARSER(cmd_parse_events);
CMD_PARSER(cmd_parse_probe);

/* cmd_parse_profile_ev.c */
CMD_PARSER(cmd_parse_profile_ev_create);
CMD_PARSER(cmd_parse_profile_ev_set);
CMD_PARSER(cmd_parse_profile_id_only);
CMD_PARSER(cmd_parse_profile_show);

/* cmd_parse_profile_cc.c */
CMD_PARSER(cmd_parse_profile_cc_create);
CMD_PARSER(cmd_parse_profile_cc_set);
CMD_PARSER(cmd_parse_profile_cc_show);

#endif
