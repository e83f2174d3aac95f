// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's one logger: every error, warning and progress line goes
 * through report() as "mrc-perf: <message>" on stderr; usage_error() adds
 * the --help hint and exits 2. stdout carries only results (the client's
 * table, the JSON lines).
 */
#include "perf.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static void vreport(const char *fmt, va_list ap)
{
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void __attribute__((format(printf, 1, 2))) report(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
}

void __attribute__((noreturn, format(printf, 1, 2)))
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	fputs("Try '" PROG " --help' for more information.\n", stderr);
	exit(EXIT_USAGE);
}

/* Truncating copy that always terminates `dst`. */
void copy_text(char *dst, size_t dst_len, const char *src)
{
	size_t n = strlen(src);

	if (n >= dst_len)
		n = dst_len - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}
