// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Parsers of `profile cc create|set|show`: one option per parameter of
 * cc_params[], the switches, and show's --derive.
 */
#define _GNU_SOURCE
#include "agent/cmd_parse.h"

#include <string.h>
#include <strings.h>

#include "agent/cmd_cc_params.h"
#include "common/parse.h"

/* A parameter's option argument -> its stored value, or a usage error. */
static int parse_cc_value(const struct cmd_parse_io *io, const struct cc_param *p,
			  const char *s, uint32_t *out)
{
	uint64_t v;

	switch (p->unit) {
	case CC_US:
		if (parse_u64(s, CC_US_MAX, &v))
			return usage_error(io, "--%s: '%s' is not a number of us (0..%u; "
					   "0 = %s)", p->opt, s, CC_US_MAX, p->zero);
		*out = (uint32_t)v * 1000;
		return 0;
	case CC_BYTES:
		if (parse_size(s, &v) || v > UINT32_MAX)
			return usage_error(io, "--%s: '%s' is not a size in bytes below 4g "
					   "(e.g. %s; 0 = %s)", p->opt, s, p->example, p->zero);
		*out = (uint32_t)v;
		return 0;
	case CC_FRACTION:
		if (parse_milli(s, 1000, out) || !*out)
			return usage_error(io, "--%s: '%s' is not a fraction in (0, 1], e.g. %s",
					   p->opt, s, p->example);
		return 0;
	case CC_FACTOR:
		if (parse_milli(s, CC_FACTOR_MAX, out))
			return usage_error(io, "--%s: '%s' is not a factor in 0..1000 with up "
					   "to 3 decimals, e.g. %s (0 = %s)", p->opt, s,
					   p->example, p->zero);
		return 0;
	case CC_SHIFT:
		if (parse_u64(s, CC_QA_GATE_MAX, &v))
			return usage_error(io, "--%s: '%s' is not a shift in 0..%d", p->opt, s,
					   CC_QA_GATE_MAX);
		*out = (uint32_t)v;
		return 0;
	case CC_MBPS:
		if (parse_u64(s, CC_LINK_MBPS_MAX, &v))
			return usage_error(io, "--%s: '%s' is not a speed in Mb/s (0..%u; "
					   "0 = %s)", p->opt, s, CC_LINK_MBPS_MAX, p->zero);
		*out = (uint32_t)v;
		return 0;
	}
	return usage_error(io, "--%s: unknown unit", p->opt);
}

enum {
	CC_OPT_ALGO = 0x2000, CC_OPT_ENABLE, CC_OPT_DISABLE, CC_OPT_QA_ON,
	CC_OPT_QA_OFF, CC_OPT_PACE_ON, CC_OPT_PACE_OFF, CC_OPT_PARAM = 0x2100,
};

/* create's and set's options: one per parameter, and the switches. */
static const struct option *cc_edit_options(void)
{
	static struct option opts[N_CC_PARAMS + 10];
	size_t i, n = 0;

	if (opts[0].name)
		return opts;
	for (i = 0; i < N_CC_PARAMS; i++)
		opts[n++] = (struct option){ cc_params[i].opt, required_argument, NULL,
					     CC_OPT_PARAM + (int)i };
	opts[n++] = (struct option){ "algo", required_argument, NULL, CC_OPT_ALGO };
	opts[n++] = (struct option){ "enable", no_argument, NULL, CC_OPT_ENABLE };
	opts[n++] = (struct option){ "disable", no_argument, NULL, CC_OPT_DISABLE };
	opts[n++] = (struct option){ "enable-qa", no_argument, NULL, CC_OPT_QA_ON };
	opts[n++] = (struct option){ "disable-qa", no_argument, NULL, CC_OPT_QA_OFF };
	opts[n++] = (struct option){ "enable-pacing", no_argument, NULL, CC_OPT_PACE_ON };
	opts[n++] = (struct option){ "disable-pacing", no_argument, NULL, CC_OPT_PACE_OFF };
	opts[n++] = (struct option){ "json", no_argument, NULL, OPT_JSON };
	opts[n++] = (struct option){ "help", no_argument, NULL, OPT_HELP };
	return opts;
}

/* Switches may repeat, but not disagree (--enable --algo none). */
static int cc_choose(const struct cmd_parse_io *io, int *cur, const char **cur_opt,
		     int v, const char *opt)
{
	if (*cur >= 0 && *cur != v)
		return usage_error(io, "%s and %s contradict each other", *cur_opt, opt);
	*cur = v;
	*cur_opt = opt;
	return 0;
}

static int parse_cc_algo(const struct cmd_parse_io *io, const char *s,
			 struct cc_profile_edit *e)
{
	if (!strcasecmp(s, "nscc"))
		return cc_choose(io, &e->algo, &e->algo_opt, MRC_CC_NSCC, "--algo nscc");
	if (!strcasecmp(s, "none"))
		return cc_choose(io, &e->algo, &e->algo_opt, MRC_CC_NONE, "--algo none");
	return usage_error(io, "--algo: '%s' is not an algorithm (nscc or none)", s);
}

static int parse_cc_opts(const struct cmd_parse_io *io, struct cmd_req *req,
			 int argc, char **argv, struct cc_profile_edit *e)
{
	const struct option *opts = cc_edit_options();
	int o, rc;

	memset(e, 0, sizeof(*e));
	e->algo = e->qa = e->pacing = -1;
	while ((o = cmd_next_opt(io, req, argc, argv, opts)) != -1) {
		switch (o) {
		case CC_OPT_ALGO:
			rc = parse_cc_algo(io, optarg, e);
			break;
		case CC_OPT_ENABLE:
			rc = cc_choose(io, &e->algo, &e->algo_opt, MRC_CC_NSCC, "--enable");
			break;
		case CC_OPT_DISABLE:
			rc = cc_choose(io, &e->algo, &e->algo_opt, MRC_CC_NONE, "--disable");
			break;
		case CC_OPT_QA_ON:
			rc = cc_choose(io, &e->qa, &e->qa_opt, 1, "--enable-qa");
			break;
		case CC_OPT_QA_OFF:
			rc = cc_choose(io, &e->qa, &e->qa_opt, 0, "--disable-qa");
			break;
		case CC_OPT_PACE_ON:
			rc = cc_choose(io, &e->pacing, &e->pacing_opt, 1, "--enable-pacing");
			break;
		case CC_OPT_PACE_OFF:
			rc = cc_choose(io, &e->pacing, &e->pacing_opt, 0, "--disable-pacing");
			break;
		default:
			if (o < CC_OPT_PARAM || o >= CC_OPT_PARAM + (int)N_CC_PARAMS)
				return AGENT_EXIT_USAGE;
			rc = parse_cc_value(io, &cc_params[o - CC_OPT_PARAM], optarg,
					    &e->val[o - CC_OPT_PARAM]);
			e->set[o - CC_OPT_PARAM] = true;
			break;
		}
		if (rc)
			return rc;
		e->any = true;
	}
	return 0;
}

CMD_PARSER(cmd_parse_profile_cc_create)
{
	struct cmd_cc_profile_req *r = &req->u.cc_profile;

	if (parse_cc_opts(io, req, argc, argv, &r->edit) ||
	    cmd_parse_profile_id(io, argc, argv, &r->id))
		return AGENT_EXIT_USAGE;
	return 0;
}

CMD_PARSER(cmd_parse_profile_cc_set)
{
	struct cmd_cc_profile_req *r = &req->u.cc_profile;

	if (parse_cc_opts(io, req, argc, argv, &r->edit) ||
	    cmd_parse_profile_id(io, argc, argv, &r->id))
		return AGENT_EXIT_USAGE;
	if (!r->edit.any)
		return usage_error(io, "nothing to change (see --help for the options)");
	return 0;
}

static int parse_derive_opts(const struct cmd_parse_io *io, struct cmd_req *req,
			     int argc, char **argv, struct cc_derive_req *d)
{
	static const struct option opts[] = {
		{ "derive", no_argument, NULL, 'D' },
		{ "mtu", required_argument, NULL, 'm' },
		{ "planes", required_argument, NULL, 'p' },
		{ "link-mbps", required_argument, NULL, 'l' },
		COMMON_OPTS, {}
	};
	int o;

	memset(d, 0, sizeof(*d));
	while ((o = cmd_next_opt(io, req, argc, argv, opts)) != -1) {
		switch (o) {
		case 'D':
			d->on = true;
			break;
		case 'm':
			if (cmd_parse_u32_arg(io, "--mtu", optarg, CC_MTU_MAX, &d->mtu))
				return AGENT_EXIT_USAGE;
			if (d->mtu < CC_MTU_MIN)
				return usage_error(io, "--mtu: path MTUs are %d..%d bytes",
						   CC_MTU_MIN, CC_MTU_MAX);
			break;
		case 'p':
			if (cmd_parse_u32_arg(io, "--planes", optarg, MRC_MAX_PLANES_ABI,
					  &d->planes))
				return AGENT_EXIT_USAGE;
			if (!d->planes)
				return usage_error(io, "--planes: 1..%d", MRC_MAX_PLANES_ABI);
			break;
		case 'l':
			if (cmd_parse_u32_arg(io, "--link-mbps", optarg, CC_LINK_MBPS_MAX,
					  &d->link_mbps))
				return AGENT_EXIT_USAGE;
			if (!d->link_mbps)
				return usage_error(io, "--link-mbps: a speed of 1..%u Mb/s",
						   CC_LINK_MBPS_MAX);
			break;
		default:
			return AGENT_EXIT_USAGE;
		}
	}
	if (!d->on && (d->mtu || d->planes || d->link_mbps))
		return usage_error(io, "--mtu, --planes and --link-mbps go with --derive");
	if (d->on && optind >= argc)
		return usage_error(io, "--derive needs a profile ID");
	if (d->on && !d->mtu)
		return usage_error(io, "--derive needs --mtu BYTES (the QPs' path MTU, "
				   "%d..%d)", CC_MTU_MIN, CC_MTU_MAX);
	return 0;
}

CMD_PARSER(cmd_parse_profile_cc_show)
{
	struct cmd_cc_show_req *r = &req->u.cc_show;

	if (parse_derive_opts(io, req, argc, argv, &r->derive))
		return AGENT_EXIT_USAGE;
	if (optind < argc) {
		if (cmd_parse_profile_id(io, argc, argv, &r->which.id))
			return AGENT_EXIT_USAGE;
		r->which.has_id = true;
	}
	return 0;
}
