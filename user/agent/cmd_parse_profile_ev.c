// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Parsers of `profile ev create|set|online|offline|show|delete`, and of
 * the profile ID the cc profile commands share.
 */
#define _GNU_SOURCE
#include "agent/cmd_parse.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/parse.h"

/* create's and set's options as typed; checked once all are read. */
struct ev_profile_edit {
	const char *type, *format, *fmt_fields, *ev_list, *count, *min_active;
	const char *backups, *event_mask, *burst, *srv6_block;
	const char *fields[EV_MAX_FIELDS];
	unsigned int n_fields;
	bool any;
};

static int read_ev_profile_opts(const struct cmd_parse_io *io, struct cmd_req *req,
				int argc, char **argv, struct ev_profile_edit *e,
				bool create)
{
	static const struct option opts[] = {
		{ "type", required_argument, NULL, 't' },
		{ "format", required_argument, NULL, 'F' },
		{ "fmt-fields", required_argument, NULL, 'w' },
		{ "field", required_argument, NULL, 'f' },
		{ "ev", required_argument, NULL, 'e' },
		{ "event-mask", required_argument, NULL, 'm' },
		{ "count", required_argument, NULL, 'n' },
		{ "min-active", required_argument, NULL, 'a' },
		{ "backups", required_argument, NULL, 'b' },
		{ "burst", required_argument, NULL, 'B' },
		{ "srv6-block", required_argument, NULL, 'S' },
		COMMON_OPTS, {}
	};
	int o;

	while ((o = cmd_next_opt(io, req, argc, argv, opts)) != -1) {
		switch (o) {
		case 't': e->type = optarg; break;
		case 'F': e->format = optarg; break;
		case 'w': e->fmt_fields = optarg; break;
		case 'e': e->ev_list = optarg; break;
		case 'm': e->event_mask = optarg; break;
		case 'n': e->count = optarg; break;
		case 'a': e->min_active = optarg; break;
		case 'b': e->backups = optarg; break;
		case 'B': e->burst = optarg; break;
		case 'S': e->srv6_block = optarg; break;
		case 'f':
			if (e->n_fields >= EV_MAX_FIELDS)
				return usage_error(io, "at most %d --field options", EV_MAX_FIELDS);
			e->fields[e->n_fields++] = optarg;
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
		e->any = true;
	}
	if (create && !e->type)
		return usage_error(io, "--type explicit|generated|auto is required");
	if (create && (e->fmt_fields || e->n_fields || e->ev_list || e->event_mask))
		return usage_error(io, "create takes --type, --format, --srv6-block, --count, "
				   "--min-active, --backups and --burst; the rest is for "
				   "'mrcctl profile ev set'");
	if (!create && e->type)
		return usage_error(io, "--type is fixed at create (delete and create again)");
	return 0;
}

static int parse_type(const struct cmd_parse_io *io, const char *s,
		      enum ev_profile_type *t)
{
	if (!strcasecmp(s, "explicit"))
		*t = EV_PROFILE_EXPLICIT;
	else if (!strcasecmp(s, "generated"))
		*t = EV_PROFILE_GENERATED;
	else if (!strcasecmp(s, "auto"))
		*t = EV_PROFILE_AUTO;
	else
		return usage_error(io, "--type: '%s' is not explicit, generated or auto", s);
	return 0;
}

static int parse_format(const struct cmd_parse_io *io, const char *s, uint32_t *f)
{
	if (!strcasecmp(s, "udp"))
		*f = MRC_EVF_UDP;
	else if (!strcasecmp(s, "stev"))
		*f = MRC_EVF_STEV;
	else if (!strcasecmp(s, "srv6"))
		*f = MRC_EVF_SRV6;
	else
		return usage_error(io, "--format: '%s' is not udp, stev or srv6", s);
	return 0;
}

/* --ev EV[@PLANE][,...] of `set` into the request. */
static int parse_explicit_list(const struct cmd_parse_io *io, const char *list,
			       struct cmd_ev_profile_req *r)
{
	char *copy = NULL, *items[MRC_MAX_EVS];
	int k, n_items, rc;

	rc = cmd_split_list(io, "--ev", list, &copy, items, MRC_MAX_EVS, &n_items);
	for (k = 0; !rc && k < n_items; k++) {
		struct ev_explicit_entry *x = &r->explicit_evs[k];
		char *at = strchr(items[k], '@');
		uint64_t plane = 0;

		if (at)
			*at++ = '\0';
		if (cmd_parse_hex32(items[k], &x->ev))
			rc = usage_error(io, "--ev: '%s' is not a hex EV", items[k]);
		else if (at && parse_u64(at, EV_MAX_PLANES, &plane))
			rc = usage_error(io, "--ev: plane '%s' is not 0..%d", at, EV_MAX_PLANES);
		x->plane = (uint16_t)plane;
	}
	r->has_explicit = true;
	r->n_explicit = (unsigned int)n_items;
	free(copy);
	return rc;
}

/* Check every option of an edit and convert it into r. */
static int check_ev_profile_edit(const struct cmd_parse_io *io,
				 const struct ev_profile_edit *e,
				 struct cmd_ev_profile_req *r)
{
	char err[EV_ERR_LEN];
	unsigned int i;

	if (e->type && parse_type(io, e->type, &r->type))
		return AGENT_EXIT_USAGE;
	if (e->format && parse_format(io, e->format, &r->format))
		return AGENT_EXIT_USAGE;
	r->has_format = e->format != NULL;
	if (e->srv6_block && ev_parse_srv6_block(e->srv6_block, &r->srv6_block,
						 err, sizeof(err)))
		return usage_error(io, "--srv6-block: %s", err);
	r->has_srv6_block = e->srv6_block != NULL;
	if (e->fmt_fields && ev_parse_fmt_fields(e->fmt_fields, r->fmt, EV_MAX_FIELDS,
						 &r->n_fmt, err, sizeof(err)))
		return usage_error(io, "--fmt-fields %s: %s", e->fmt_fields, err);
	r->has_fmt_fields = e->fmt_fields != NULL;
	for (i = 0; i < e->n_fields; i++)
		if (ev_parse_field_spec(e->fields[i], &r->fields[i], err, sizeof(err)))
			return usage_error(io, "--field %s: %s", e->fields[i], err);
	r->n_fields = e->n_fields;
	if (e->count && cmd_parse_u32_arg(io, "--count", e->count, MRC_MAX_EVS, &r->count))
		return AGENT_EXIT_USAGE;
	r->has_count = e->count != NULL;
	if (e->min_active && cmd_parse_u32_arg(io, "--min-active", e->min_active,
					   MRC_MAX_EVS, &r->min_active))
		return AGENT_EXIT_USAGE;
	r->has_min_active = e->min_active != NULL;
	if (e->backups && cmd_parse_u32_arg(io, "--backups", e->backups, MRC_MAX_EVS,
					&r->backups))
		return AGENT_EXIT_USAGE;
	r->has_backups = e->backups != NULL;
	if (e->burst && (cmd_parse_u32_arg(io, "--burst", e->burst, MRC_GSO_BURST_MAX,
					   &r->burst) || r->burst == 0))
		return usage_error(io, "--burst: 1..%d packets", MRC_GSO_BURST_MAX);
	r->has_burst = e->burst != NULL;
	if (e->event_mask && cmd_parse_u32_arg(io, "--event-mask", e->event_mask,
					   UINT32_MAX, &r->event_mask))
		return AGENT_EXIT_USAGE;
	r->has_event_mask = e->event_mask != NULL;
	if (!e->ev_list)
		return 0;
	return parse_explicit_list(io, e->ev_list, r);
}

CMD_PARSER(cmd_parse_profile_ev_create)
{
	struct cmd_ev_profile_req *r = &req->u.ev_profile;
	struct ev_profile_edit e = {};

	if (read_ev_profile_opts(io, req, argc, argv, &e, true) ||
	    cmd_parse_profile_id(io, argc, argv, &r->id) || check_ev_profile_edit(io, &e, r))
		return AGENT_EXIT_USAGE;
	if (!e.format)
		r->format = MRC_EVF_UDP;
	return 0;
}

CMD_PARSER(cmd_parse_profile_ev_set)
{
	struct cmd_ev_profile_req *r = &req->u.ev_profile;
	struct ev_profile_edit e = {};

	if (read_ev_profile_opts(io, req, argc, argv, &e, false) ||
	    cmd_parse_profile_id(io, argc, argv, &r->id) || check_ev_profile_edit(io, &e, r))
		return AGENT_EXIT_USAGE;
	if (!e.any)
		return usage_error(io, "nothing to change: give --fmt-fields, --field, "
				   "--ev, --event-mask, --count, --min-active, --backups, --burst "
				   "or --srv6-block");
	return 0;
}

/* profile ev|cc online|offline|delete: ID [--json] */
CMD_PARSER(cmd_parse_profile_id_only)
{
	static const struct option opts[] = { COMMON_OPTS, {} };

	if (cmd_next_opt(io, req, argc, argv, opts) != -1 ||
	    cmd_parse_profile_id(io, argc, argv, &req->u.profile.id))
		return AGENT_EXIT_USAGE;
	req->u.profile.has_id = true;
	return 0;
}

/* profile ev show [ID] [--json] */
CMD_PARSER(cmd_parse_profile_show)
{
	static const struct option opts[] = { COMMON_OPTS, {} };

	if (cmd_next_opt(io, req, argc, argv, opts) != -1)
		return AGENT_EXIT_USAGE;
	if (optind < argc) {
		if (cmd_parse_profile_id(io, argc, argv, &req->u.profile.id))
			return AGENT_EXIT_USAGE;
		req->u.profile.has_id = true;
	}
	return 0;
}
