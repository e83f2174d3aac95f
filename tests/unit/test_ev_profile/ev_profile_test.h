/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * What the files of test_ev_profile share: the error buffer, the message
 * buffer and the builders of fields and layouts.
 */
#ifndef EV_PROFILE_TEST_H
#define EV_PROFILE_TEST_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/ev_profile.h"
#include "test.h"

extern char err[EV_ERR_LEN];
extern char what[512];

/* The error text must contain `needle`. */
#define ASSERT_ERR_HAS(needle) ({					\
	snprintf(what, sizeof(what), "error \"%s\" mentions \"%s\"",	\
		 err, (needle));					\
	ASSERT_TRUE(strstr(err, (needle)) != NULL, what);		\
})

struct ev_field fld(uint32_t width, uint32_t init, uint32_t min, uint32_t max,
		    uint32_t mask);
/* A layout of n fields, field k written into wire field fmt[k]. */
struct ev_layout layout(unsigned int n, const uint8_t *fmt, const struct ev_field *f);
/* Expand compact with l: rc want_rc and, when 0, the wire EV want. */
void check_expand(const struct ev_layout *l, uint32_t compact, int want_rc,
		  uint32_t want);

#endif /* EV_PROFILE_TEST_H */
