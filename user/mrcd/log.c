// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcd's one logger. Every message of the agent goes out here: "mrcd: "
 * and the text on stderr (a --daemon's log file, or /dev/null), in one
 * write. pr_info is for -v only. The probe engine reports through it too
 * (probing.c installs the callback); libbpf's and libxdp's own messages
 * pass through the filter below.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "mrcd/mrcd.h"

#define LOG_PREFIX	"mrcd: "

static bool verbose;
static bool quiet_libs;
static const char *context;	/* e.g. "FILE:LINE" while a file is read */

void log_set_context(const char *where)
{
	context = where;
}

void log_set_verbose(bool on)
{
	verbose = on;
}

bool log_verbose(void)
{
	return verbose;
}

void log_quiet_libs(bool on)
{
	quiet_libs = on;
}

void mrcd_log(enum mrcd_level level, const char *fmt, ...)
{
	char buf[8192];
	size_t len = sizeof(LOG_PREFIX) - 1;
	va_list ap;
	int n;

	if (level == MRCD_INFO && !verbose)
		return;
	memcpy(buf, LOG_PREFIX, len);
	if (context) {
		n = snprintf(buf + len, sizeof(buf) / 2, "%s: ", context);
		if (n > 0)
			len += (size_t)n < sizeof(buf) / 2 ? (size_t)n : sizeof(buf) / 2 - 1;
	}
	va_start(ap, fmt);
	n = vsnprintf(buf + len, sizeof(buf) - len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len += (size_t)n < sizeof(buf) - len ? (size_t)n : sizeof(buf) - len - 1;
	fwrite(buf, 1, len, stderr);
}

/* ---- library messages ------------------------------------------------- */

static int print_lib_message(bool is_warning, bool is_debug, const char *fmt,
			     va_list args)
{
	if (is_debug || (!is_warning && !verbose) || (quiet_libs && !verbose))
		return 0;
	return vfprintf(stderr, fmt, args);
}

static int print_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list args)
{
	return print_lib_message(level == LIBBPF_WARN, level == LIBBPF_DEBUG,
				 fmt, args);
}

static int print_libxdp(enum libxdp_print_level level, const char *fmt,
			va_list args)
{
	return print_lib_message(level == LIBXDP_WARN, level == LIBXDP_DEBUG,
				 fmt, args);
}

void log_install_lib_printers(void)
{
	libbpf_set_print(print_libbpf);
	libxdp_set_print(print_libxdp);
}
