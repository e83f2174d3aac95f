// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-tcp-timeline's one logger: every error, warning and progress line
 * goes through report() as "mrc-tcp-timeline: <message>" on stderr;
 * usage_error() adds the --help hint and exits 2. stdout carries only the
 * JSON lines (json_string() writes their strings) and `now`.
 */
#include "tcp_timeline.h"

#include <stdarg.h>
#include <stdlib.h>

static void vreport(const char *fmt, va_list ap)
{
	fputs(PROG ": ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void report(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
}

void __attribute__((noreturn)) usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vreport(fmt, ap);
	va_end(ap);
	fputs("try '" PROG " --help'\n", stderr);
	exit(2);
}

void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}
