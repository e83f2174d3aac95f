/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The one way user/common and user/agent report an error to its caller: a return code plus
 * a message in the caller's buffer (which may be NULL), so the caller
 * decides where it is printed.
 */
#ifndef MRC_ERRMSG_H
#define MRC_ERRMSG_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* Write the message into err (if any) and return rc. */
__attribute__((format(printf, 4, 5)))
static inline int fail(int rc, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err && errlen) {
		va_start(ap, fmt);
		vsnprintf(err, errlen, fmt, ap);
		va_end(ap);
	}
	return rc;
}

#endif
