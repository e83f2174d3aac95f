/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Writing one JSON document with the commas and nesting kept track of:
 * what the command executors (and mrcctl's local commands) print --json
 * with.
 */
#ifndef MRC_CMD_JSON_H
#define MRC_CMD_JSON_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "agent/json_out.h"

#define JSON_DEPTH	8

struct json {
	FILE *f;
	int depth;
	bool first[JSON_DEPTH];
};

/* The comma before a value and, inside an object, its key. */
static inline void j_key(struct json *j, const char *key)
{
	if (j->depth > 0) {
		if (!j->first[j->depth])
			fputs(", ", j->f);
		j->first[j->depth] = false;
	}
	if (key) {
		json_string(j->f, key);
		fputs(": ", j->f);
	}
}

static inline void j_open(struct json *j, const char *key, char brace)
{
	j_key(j, key);
	fputc(brace, j->f);
	if (j->depth + 1 < JSON_DEPTH)
		j->depth++;
	j->first[j->depth] = true;
}

static inline void j_close(struct json *j, char brace)
{
	fputc(brace, j->f);
	if (j->depth > 0)
		j->depth--;
	if (!j->depth)
		fputc('\n', j->f);
}

#define j_obj(j, key)	j_open(j, key, '{')
#define j_end(j)	j_close(j, '}')
#define j_arr(j, key)	j_open(j, key, '[')
#define j_arr_end(j)	j_close(j, ']')

static inline void j_str(struct json *j, const char *key, const char *s)
{
	j_key(j, key);
	json_string(j->f, s);
}

static inline void j_u64(struct json *j, const char *key, uint64_t v)
{
	j_key(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

static inline void j_int(struct json *j, const char *key, long long v)
{
	j_key(j, key);
	fprintf(j->f, "%lld", v);
}

static inline void j_hex(struct json *j, const char *key, uint32_t v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "0x%x", v);
	j_str(j, key, buf);
}

static inline void j_bool(struct json *j, const char *key, bool v)
{
	j_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

static inline void j_null(struct json *j, const char *key)
{
	j_key(j, key);
	fputs("null", j->f);
}

static inline void j_dbl(struct json *j, const char *key, double v)
{
	j_key(j, key);
	fprintf(j->f, "%.3f", v);
}

#endif
