// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Parsers of the ev commands: ev list, ev deny / ev allow (a QP and a
 * selector) and ev expand (a layout and compact EVs).
 */
#define _GNU_SOURCE
#include "agent/cmd_parse.h"

#include <stdlib.h>

#include "common/parse.h"

CMD_PARSER(cmd_parse_ev_list)
{
	static const struct option opts[] = {
		{ "qp", required_argument, NULL, 'q' }, COMMON_OPTS, {}
	};
	uint32_t *qpn = &req->u.qp.qpn;
	int o;

	while ((o = cmd_next_opt(io, req, argc, argv, opts)) != -1) {
		if (o == '?' || (o == 'q' && cmd_parse_qpn(io, optarg, qpn)))
			return AGENT_EXIT_USAGE;
	}
	if (cmd_no_positionals(io, argc, argv))
		return AGENT_EXIT_USAGE;
	if (!*qpn)
		return usage_error(io, "--qp N is required");
	return 0;
}

/* Which entries of an EV table `ev deny` / `ev allow` act on, as typed. */
struct ev_selector {
	const char *ev_list, *index_list;
	uint32_t plane;			/* 0 = not given */
	int n_given;
};

/* Exactly one selector, every item of its list valid: into r. */
static int check_selector(const struct cmd_parse_io *io,
			  const struct ev_selector *sel, struct cmd_ev_select_req *r)
{
	char *copy = NULL, *items[MRC_MAX_EVS];
	int n = 0, i, rc = 0;

	if (sel->n_given != 1)
		return usage_error(io, "give exactly one of --ev HEX[,HEX..], --plane P, "
				   "--index I[,I..]");
	r->plane = sel->plane;
	if (sel->ev_list) {
		rc = cmd_split_list(io, "--ev", sel->ev_list, &copy, items, MRC_MAX_EVS, &n);
		for (i = 0; !rc && i < n; i++)
			if (cmd_parse_hex32(items[i], &r->items[i]))
				rc = usage_error(io, "--ev: '%s' is not a hex EV", items[i]);
	} else if (sel->index_list) {
		r->by_index = true;
		rc = cmd_split_list(io, "--index", sel->index_list, &copy, items,
				MRC_MAX_EVS, &n);
		for (i = 0; !rc && i < n; i++) {
			uint64_t idx;

			if (parse_u64(items[i], MRC_MAX_EVS - 1, &idx))
				rc = usage_error(io, "--index: '%s' is not an index (0..%d)",
						 items[i], MRC_MAX_EVS - 1);
			else
				r->items[i] = (uint32_t)idx;
		}
	}
	r->n_items = (unsigned int)n;
	free(copy);
	return rc;
}

/* ev deny, ev allow */
CMD_PARSER(cmd_parse_ev_select)
{
	static const struct option opts[] = {
		{ "qp", required_argument, NULL, 'q' },
		{ "ev", required_argument, NULL, 'e' },
		{ "plane", required_argument, NULL, 'p' },
		{ "index", required_argument, NULL, 'i' },
		COMMON_OPTS, {}
	};
	struct cmd_ev_select_req *r = &req->u.ev_select;
	struct ev_selector sel = {};
	int o;

	while ((o = cmd_next_opt(io, req, argc, argv, opts)) != -1) {
		switch (o) {
		case 'q':
			if (cmd_parse_qpn(io, optarg, &r->qpn))
				return AGENT_EXIT_USAGE;
			break;
		case 'e':
			sel.ev_list = optarg;
			sel.n_given++;
			break;
		case 'i':
			sel.index_list = optarg;
			sel.n_given++;
			break;
		case 'p':
			if (cmd_parse_u32_arg(io, "--plane", optarg, MRC_MAX_PLANES_ABI,
					  &sel.plane))
				return AGENT_EXIT_USAGE;
			if (!sel.plane)
				return usage_error(io, "--plane: planes are 1..%d",
						   MRC_MAX_PLANES_ABI);
			sel.n_given++;
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
	}
	if (cmd_no_positionals(io, argc, argv))
		return AGENT_EXIT_USAGE;
	if (!r->qpn)
		return usage_error(io, "--qp N is required");
	if (check_selector(io, &sel, r))
		return AGENT_EXIT_USAGE;
	return 0;
}

/* ---- ev expand ----------------------------------------------------------- */

static int add_field_spec(const struct cmd_parse_io *io, struct ev_layout *l,
			  const char *spec)
{
	char err[EV_ERR_LEN];

	if (l->n_fields >= EV_MAX_FIELDS)
		return usage_error(io, "at most %d --field options", EV_MAX_FIELDS);
	if (ev_parse_field_spec(spec, &l->fields[l->n_fields], err, sizeof(err)))
		return usage_error(io, "--field %s: %s", spec, err);
	l->n_fields++;
	return 0;
}

/* Compact EVs from --ev lists and the words after them. */
static int add_compact_evs(const struct cmd_parse_io *io, const char *list,
			   uint32_t *evs, unsigned int *n)
{
	char *copy = NULL, *items[MRC_MAX_EVS];
	int k, n_items, rc;

	rc = cmd_split_list(io, "--ev", list, &copy, items, MRC_MAX_EVS, &n_items);
	for (k = 0; !rc && k < n_items; k++) {
		if (*n >= MRC_MAX_EVS)
			rc = usage_error(io, "at most %d EVs at a time", MRC_MAX_EVS);
		else if (cmd_parse_hex32(items[k], &evs[*n]))
			rc = usage_error(io, "'%s' is not a hex EV", items[k]);
		else
			(*n)++;
	}
	free(copy);
	return rc;
}

CMD_PARSER(cmd_parse_ev_expand)
{
	static const struct option opts[] = {
		{ "fmt-fields", required_argument, NULL, 'w' },
		{ "field", required_argument, NULL, 'f' },
		{ "ev", required_argument, NULL, 'e' },
		COMMON_OPTS, {}
	};
	struct cmd_ev_expand_req *r = &req->u.ev_expand;
	struct ev_layout *l = &r->layout;
	char err[EV_ERR_LEN];
	bool have_fmt = false, have_ev = false;
	int o;

	while ((o = cmd_next_opt(io, req, argc, argv, opts)) != -1) {
		switch (o) {
		case 'w':
			if (ev_parse_fmt_fields(optarg, l->fmt, EV_MAX_FIELDS, &l->n_fmt,
						err, sizeof(err)))
				return usage_error(io, "--fmt-fields %s: %s", optarg, err);
			have_fmt = true;
			break;
		case 'f':
			if (add_field_spec(io, l, optarg))
				return AGENT_EXIT_USAGE;
			break;
		case 'e':
			if (add_compact_evs(io, optarg, r->evs, &r->n_evs))
				return AGENT_EXIT_USAGE;
			have_ev = true;
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
	}
	/* `--ev A B C`: the words after --ev are more EVs. */
	for (; optind < argc; optind++) {
		if (!have_ev)
			return usage_error(io, "unexpected argument '%s'", argv[optind]);
		if (add_compact_evs(io, argv[optind], r->evs, &r->n_evs))
			return AGENT_EXIT_USAGE;
	}
	if (!have_fmt)
		return usage_error(io, "--fmt-fields W[,W..] is required (e.g. 16,16 for STEV)");
	if (!l->n_fields)
		return usage_error(io, "at least one --field width=W,... is required");
	if (!r->n_evs)
		return usage_error(io, "--ev HEX [HEX...] is required");
	if (ev_layout_validate(l, 32, 1, err, sizeof(err)))
		return usage_error(io, "the layout is not valid: %s", err);
	return 0;
}
