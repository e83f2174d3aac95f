/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * `mrcctl doctor`: checks of the host environment MRC-XDP needs, run in
 * mrcctl itself (no mrcd needed): kernel BTF, bpffs, libbpf and libxdp,
 * privileges, the agent's socket, the pinned maps, the limits mrcd was
 * started with against their use (a warning above 90% of --max-qps or
 * --max-contexts), the QPs (in ERROR: a warning; with ASSUMED_BAD EVs:
 * counted; the worst few named), the planes with their XDP and TC
 * programs, and tracefs.
 *
 * Text: one line per check, `ok|WARN|FAIL  NAME: DETAIL`, and for WARN
 * and FAIL a second line `      fix: WHAT TO RUN`, then a summary line.
 * JSON: {"checks":[{"name","status":"ok|warn|fail","detail","fix"}],
 *        "failed":N,"warnings":N}  (fix is null for ok; plane checks
 * also carry a "plane" object).
 */
#ifndef MRC_DOCTOR_H
#define MRC_DOCTOR_H

#include <stdbool.h>
#include <stdio.h>

/* Run every check for the agent of `pin_dir`; 0 when none failed, else 1. */
int doctor_run(const char *pin_dir, bool json, FILE *out, FILE *err);

#endif
