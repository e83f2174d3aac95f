/* SPDX-License-Identifier: GPL-2.0 */
/* What the files of tests/bpf/test_limits/ share (see main.c). */
#ifndef MRC_TEST_LIMITS_H
#define MRC_TEST_LIMITS_H

#include "mrc_fixture.h"
#include "test.h"

/* Past the built sizes (256 QPs, 64 contexts), as mrcd may size them. */
#define LIMITS_QPS	1024
#define LIMITS_CTX	100

_Static_assert(LIMITS_QPS > MRC_MAX_QPS && LIMITS_CTX > MRC_MAX_CTX,
	       "the test sizes the maps past the object's built sizes");

#endif /* MRC_TEST_LIMITS_H */
