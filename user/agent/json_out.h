/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * JSON output shared by mrcctl/mrcd (cmd_exec_*.c, doctor.c) and mrc-perf:
 * one string writer, so every tool escapes the same way.
 */
#ifndef MRC_JSON_OUT_H
#define MRC_JSON_OUT_H

#include <stdio.h>

/* s as a JSON string: quotes, backslashes and control characters escaped. */
static inline void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

#endif
