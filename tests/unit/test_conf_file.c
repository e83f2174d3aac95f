// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of user/agent/conf_file.c, the reader of mrcd's
 * configuration file (/etc/mrc/mrcd.conf): what a line becomes, and every
 * malformed file refused with its line number.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/conf_file.h"
#include "test.h"

TEST_STATE_DEFINE;

#define MAX_SEEN 8

/* What the callback saw, copied (values live during the call only). */
struct seen {
	int n;
	char key[MAX_SEEN][64];
	char value[MAX_SEEN][CONF_LINE_MAX + 1];
	unsigned int line[MAX_SEEN];
	int stop_at;		/* return 7 on this entry (1-based), 0 never */
};

static int record(const struct conf_entry *e, void *arg)
{
	struct seen *s = arg;

	if (s->n < MAX_SEEN) {
		snprintf(s->key[s->n], sizeof(s->key[0]), "%s", e->key);
		snprintf(s->value[s->n], sizeof(s->value[0]), "%s", e->value);
		s->line[s->n] = e->line;
	}
	s->n++;
	return s->n == s->stop_at ? 7 : 0;
}

static char path[64];

/* A temporary file with `len` bytes of `text` and the given mode. */
static void write_file(const void *text, size_t len, mode_t mode)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_conf_file.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		perror("test_conf_file: temporary file");
		exit(1);
	}
	fchmod(fd, mode);
	close(fd);
}

/* Read `text` as a file; the result, what was seen and the error text. */
static int read_text(const char *text, mode_t mode, struct seen *s, char *err,
		     size_t err_len)
{
	int rc;

	write_file(text, strlen(text), mode);
	rc = conf_file_read(path, record, s, err, err_len);
	unlink(path);
	return rc;
}

/* The error must be "PATH:LINE: " followed by `what` somewhere. */
static void check_error(const char *text, unsigned int line, const char *what)
{
	struct seen s = {};
	char err[512], prefix[96];
	int rc = read_text(text, 0600, &s, err, sizeof(err));

	ASSERT_EQ(rc, -EINVAL, text);
	snprintf(prefix, sizeof(prefix), "%s:%u: ", path, line);
	if (!ASSERT_TRUE(!strncmp(err, prefix, strlen(prefix)), text) ||
	    !ASSERT_TRUE(strstr(err, what) != NULL, text))
		fprintf(stderr, "    error was '%s', wanted '%s...%s'\n", err, prefix, what);
}

TEST_CASE(test_entries, "conf_file.entries_in_order")
{
	struct seen s = {};
	char err[256];
	int rc = read_text("# mrcd.conf\n\n   # indented comment\nplanes = p1 p2\n"
			   "\tmax-qps=64  \r\nverbose =yes\n", 0644, &s, err, sizeof(err));

	ASSERT_EQ(rc, 0, err);
	ASSERT_EQ(s.n, 3, "entries");
	ASSERT_TRUE(!strcmp(s.key[0], "planes") && !strcmp(s.value[0], "p1 p2"), "line 4");
	ASSERT_EQ(s.line[0], 4, "line of planes");
	ASSERT_TRUE(!strcmp(s.key[1], "max-qps") && !strcmp(s.value[1], "64"), "line 5");
	ASSERT_EQ(s.line[1], 5, "line of max-qps");
	ASSERT_TRUE(!strcmp(s.key[2], "verbose") && !strcmp(s.value[2], "yes"), "line 6");
	ASSERT_EQ(s.line[2], 6, "line of verbose");
}

TEST_CASE(test_no_final_newline, "conf_file.last_line_without_newline")
{
	struct seen s = {};
	char err[256];
	int rc = read_text("port = 4791", 0600, &s, err, sizeof(err));

	ASSERT_EQ(rc, 0, err);
	ASSERT_EQ(s.n, 1, "entries");
	ASSERT_TRUE(!strcmp(s.value[0], "4791"), "value");
}

TEST_CASE(test_value_keeps_inner_equals, "conf_file.value_after_first_equals")
{
	struct seen s = {};
	char err[256];
	int rc = read_text("pidfile = /run/a=b\n", 0600, &s, err, sizeof(err));

	ASSERT_EQ(rc, 0, err);
	ASSERT_TRUE(!strcmp(s.value[0], "/run/a=b"), s.value[0]);
}

TEST_CASE(test_malformed, "conf_file.malformed_lines")
{
	check_error("planes = p1\nno equals sign\n", 2, "expected 'key = value'");
	check_error("planes =\n", 1, "'planes' has no value");
	check_error("# x\n = p1\n", 2, "is not a key");
	check_error("Planes = p1\n", 1, "is not a key");
	check_error("max_qps = 4\n", 1, "is not a key");
	check_error("planes = p1\nport = 1\nplanes = p2\n", 3,
		    "'planes' is given twice (first on line 1)");
}

TEST_CASE(test_long_line, "conf_file.long_line_refused")
{
	char text[CONF_LINE_MAX + 16];

	memset(text, 'a', sizeof(text));
	memcpy(text, "pidfile = ", 10);
	text[CONF_LINE_MAX + 1] = '\n';	/* CONF_LINE_MAX + 1 characters */
	text[CONF_LINE_MAX + 2] = '\0';
	check_error(text, 1, "longer than");
	text[CONF_LINE_MAX] = '\n';	/* exactly CONF_LINE_MAX: fine */
	text[CONF_LINE_MAX + 1] = '\0';
	{
		struct seen s = {};
		char err[256];

		ASSERT_EQ(read_text(text, 0600, &s, err, sizeof(err)), 0, err);
		ASSERT_EQ(strlen(s.value[0]), CONF_LINE_MAX - 10, "value length");
	}
}

TEST_CASE(test_nul_byte, "conf_file.nul_byte_refused")
{
	static const char text[] = "port = 1\nplanes = p1\0p2\n";
	struct seen s = {};
	char err[256];
	int rc;

	write_file(text, sizeof(text) - 1, 0600);
	rc = conf_file_read(path, record, &s, err, sizeof(err));
	unlink(path);
	ASSERT_EQ(rc, -EINVAL, "result");
	ASSERT_TRUE(strstr(err, ":2: contains a NUL byte") != NULL, err);
	ASSERT_EQ(s.n, 1, "entries before it");
}

TEST_CASE(test_mode_and_missing, "conf_file.writable_or_missing_file")
{
	struct seen s = {};
	char err[256];

	ASSERT_EQ(read_text("port = 1\n", 0620, &s, err, sizeof(err)), -EINVAL, "0620");
	ASSERT_TRUE(strstr(err, "group or others may write it") != NULL, err);
	ASSERT_EQ(read_text("port = 1\n", 0602, &s, err, sizeof(err)), -EINVAL, "0602");
	ASSERT_EQ(s.n, 0, "nothing read from a writable file");
	ASSERT_EQ(conf_file_read("/nonexistent/mrcd.conf", record, &s, err, sizeof(err)),
		  -ENOENT, "missing file");
	ASSERT_TRUE(strstr(err, "/nonexistent/mrcd.conf: ") == err, err);
}

TEST_CASE(test_callback_stops, "conf_file.callback_result_stops")
{
	struct seen s = { .stop_at = 2 };
	char err[256];

	ASSERT_EQ(read_text("a = 1\nb = 2\nc = 3\n", 0600, &s, err, sizeof(err)), 7,
		  "callback's result");
	ASSERT_EQ(s.n, 2, "entries after the stop");
}

static void check_list(const char *in, const char *want)
{
	char out[64];

	ASSERT_EQ(conf_list_to_commas(in, out, sizeof(out)), 0, in);
	if (!ASSERT_TRUE(!strcmp(out, want), in))
		fprintf(stderr, "    got '%s', wanted '%s'\n", out, want);
}

TEST_CASE(test_lists, "conf_file.lists_to_commas")
{
	char small[6];

	check_list("p1 p2", "p1,p2");
	check_list("p1, p2,\tp3", "p1,p2,p3");
	check_list("p1,p2", "p1,p2");
	check_list("  eth1  ", "eth1");
	check_list("a,,b", "a,b");
	check_list(",", "");
	ASSERT_EQ(conf_list_to_commas("ab cd", small, sizeof(small)), 0, "fits exactly");
	ASSERT_TRUE(!strcmp(small, "ab,cd"), small);
	ASSERT_EQ(conf_list_to_commas("ab cde", small, sizeof(small)), -E2BIG, "too long");
}

int main(void)
{
	RUN_REGISTERED_TESTS();
	return TEST_EXIT();
}
