// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcd's configuration file: `key = value` lines (conf_file.h). Every
 * problem is an error naming the file and line, never a guess: a key
 * given twice, a line without '=', an over-long line are all refused, so
 * what the operator wrote is exactly what runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "agent/conf_file.h"

struct reader {
	const char *path;
	char *err;
	size_t err_len;
	char keys[CONF_KEYS_MAX][CONF_KEY_MAX + 1];	/* seen so far */
	unsigned int key_lines[CONF_KEYS_MAX];
	int n_keys;
};

__attribute__((format(printf, 3, 4)))
static int fail_at(struct reader *r, unsigned int line, const char *fmt, ...)
{
	int n = line ? snprintf(r->err, r->err_len, "%s:%u: ", r->path, line)
		     : snprintf(r->err, r->err_len, "%s: ", r->path);
	va_list ap;

	if (n < 0 || (size_t)n >= r->err_len)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(r->err + n, r->err_len - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static char *trim(char *s)
{
	char *end;

	while (is_blank(*s))
		s++;
	end = s + strlen(s);
	while (end > s && is_blank(end[-1]))
		*--end = '\0';
	return s;
}

static bool key_chars_ok(const char *k)
{
	if (!*k)
		return false;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= '0' && *k <= '9') || *k == '-'))
			return false;
	return true;
}

/* A key once only: a second `planes` line is a mistake, not an override. */
static int remember_key(struct reader *r, const char *key, unsigned int line)
{
	int i;

	for (i = 0; i < r->n_keys; i++)
		if (!strcmp(r->keys[i], key))
			return fail_at(r, line, "'%s' is given twice (first on line %u)",
				       key, r->key_lines[i]);
	if (r->n_keys >= CONF_KEYS_MAX)
		return fail_at(r, line, "more than %d keys", CONF_KEYS_MAX);
	snprintf(r->keys[r->n_keys], sizeof(r->keys[0]), "%s", key);
	r->key_lines[r->n_keys++] = line;
	return 0;
}

/* One line, without its newline: skipped, an entry, or an error. */
static int parse_line(struct reader *r, char *text, unsigned int line,
		      conf_entry_fn fn, void *arg)
{
	char *s = trim(text), *eq, *key, *value;
	struct conf_entry e;
	int err;

	if (!*s || *s == '#')
		return 0;
	eq = strchr(s, '=');
	if (!eq)
		return fail_at(r, line, "expected 'key = value', got '%s'", s);
	*eq = '\0';
	key = trim(s);
	value = trim(eq + 1);
	if (strlen(key) > CONF_KEY_MAX)
		return fail_at(r, line, "key longer than %d characters", CONF_KEY_MAX);
	if (!key_chars_ok(key))
		return fail_at(r, line, "'%s' is not a key (letters a-z, digits, '-')",
			       key);
	if (!*value)
		return fail_at(r, line, "'%s' has no value", key);
	err = remember_key(r, key, line);
	if (err)
		return err;
	e = (struct conf_entry){ .key = key, .value = value, .line = line };
	return fn(&e, arg);
}

static int check_file_mode(struct reader *r, FILE *f)
{
	struct stat st;

	if (fstat(fileno(f), &st))
		return fail_at(r, 0, "%s", strerror(errno));
	if (!S_ISREG(st.st_mode))
		return fail_at(r, 0, "not a regular file");
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return fail_at(r, 0, "group or others may write it: chmod go-w");
	return 0;
}

static int read_lines(struct reader *r, FILE *f, conf_entry_fn fn, void *arg)
{
	unsigned int line = 0;
	size_t cap = 0;
	char *buf = NULL;
	ssize_t len;
	int err = 0;

	while (!err && (len = getline(&buf, &cap, f)) >= 0) {
		line++;
		if (len && buf[len - 1] == '\n')
			buf[--len] = '\0';
		if (memchr(buf, '\0', (size_t)len))
			err = fail_at(r, line, "contains a NUL byte");
		else if (len > CONF_LINE_MAX)
			err = fail_at(r, line, "longer than %d characters", CONF_LINE_MAX);
		else
			err = parse_line(r, buf, line, fn, arg);
	}
	if (!err && ferror(f))
		err = fail_at(r, line, "read error");
	free(buf);
	return err;
}

int conf_file_read(const char *path, conf_entry_fn fn, void *arg,
		   char *err, size_t err_len)
{
	struct reader r;
	FILE *f;
	int rc;

	r = (struct reader){ .path = path, .err = err, .err_len = err_len };
	if (err_len)
		err[0] = '\0';
	f = fopen(path, "re");
	if (!f) {
		rc = -errno;
		fail_at(&r, 0, "%s", strerror(-rc));
		return rc;
	}
	rc = check_file_mode(&r, f);
	if (!rc)
		rc = read_lines(&r, f, fn, arg);
	fclose(f);
	return rc;
}

int conf_list_to_commas(const char *value, char *out, size_t out_len)
{
	size_t n = 0;
	bool sep = false;

	if (!out_len)
		return -E2BIG;
	for (; *value; value++) {
		if (*value == ',' || is_blank(*value)) {
			sep = n > 0;
			continue;
		}
		if (n + (sep ? 2 : 1) >= out_len)
			return -E2BIG;
		if (sep)
			out[n++] = ',';
		sep = false;
		out[n++] = *value;
	}
	out[n] = '\0';
	return 0;
}
