// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * What every command parser uses (cmd_parse.h): getopt with our
 * messages, QP numbers, hex EVs, bounded numbers, lists, profile IDs.
 */
#define _GNU_SOURCE
#include "agent/cmd_parse.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/parse.h"

int cmd_next_opt(const struct cmd_parse_io *io, struct cmd_req *req, int argc,
	     char **argv, const struct option *opts)
{
	for (;;) {
		int o = getopt_long(argc, argv, ":", opts, NULL);

		if (o == OPT_JSON) {
			req->json = true;
			continue;
		}
		if (o == ':') {
			usage_error(io, "%s needs a value", argv[optind - 1]);
			return '?';
		}
		if (o == '?') {
			usage_error(io, "unknown option '%s'", argv[optind - 1]);
			return '?';
		}
		return o;
	}
}

/* GNU getopt: optind 0 reinitialises. */
void cmd_opt_start(void)
{
	optind = 0;
	opterr = 0;
}

int cmd_no_positionals(const struct cmd_parse_io *io, int argc, char **argv)
{
	if (optind < argc)
		return usage_error(io, "unexpected argument '%s'", argv[optind]);
	return 0;
}

int cmd_parse_qpn(const struct cmd_parse_io *io, const char *s, uint32_t *qpn)
{
	uint64_t v;

	/*
	 * The host's limit is mrcd's (--max-qps), known from its maps: the
	 * executor checks it. Here only what no host can have is refused.
	 */
	if (parse_u64(s, MRC_QPS_LIMIT, &v) || !v)
		return usage_error(io, "'%s' is not a QP number (1..%d at most, "
				   "mrcd --max-qps)", s, MRC_QPS_LIMIT);
	*qpn = (uint32_t)v;
	return 0;
}

int cmd_parse_hex32(const char *s, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!isxdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 16);
	if (errno || *end || v > UINT32_MAX)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

int cmd_parse_u32_arg(const struct cmd_parse_io *io, const char *opt, const char *s,
		  uint32_t max, uint32_t *out)
{
	uint64_t v;

	if (parse_u64(s, max, &v))
		return usage_error(io, "%s: '%s' is not a number in 0..%u", opt, s, max);
	*out = (uint32_t)v;
	return 0;
}

int cmd_split_list(const struct cmd_parse_io *io, const char *opt, const char *s,
	       char **copy, char **items, int max, int *n)
{
	char *rest, *item;

	*n = 0;
	*copy = strdup(s);
	if (!*copy)
		return parse_failure(io, "out of memory");
	rest = *copy;
	while ((item = strsep(&rest, ","))) {
		if (!*item)
			return usage_error(io, "%s: empty item in '%s'", opt, s);
		if (*n >= max)
			return usage_error(io, "%s: more than %d items", opt, max);
		items[(*n)++] = item;
	}
	return 0;
}

int cmd_parse_profile_id(const struct cmd_parse_io *io, int argc, char **argv,
		     uint32_t *id)
{
	uint64_t v;

	if (optind >= argc)
		return usage_error(io, "which profile? (an ID in 0..%d)",
				   MRC_MAX_PROFILES - 1);
	if (parse_u64(argv[optind], MRC_MAX_PROFILES - 1, &v))
		return usage_error(io, "'%s' is not a profile ID (0..%d)", argv[optind],
				   MRC_MAX_PROFILES - 1);
	optind++;
	*id = (uint32_t)v;
	return cmd_no_positionals(io, argc, argv);
}
