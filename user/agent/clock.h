/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The agent's one clock: CLOCK_MONOTONIC in ns, the clock of
 * bpf_ktime_get_ns(), so times mrcd takes and times XDP stamps compare.
 * mrcd (deadlines, streams) and the probe engine (probes, events) use it.
 */
#ifndef MRC_AGENT_CLOCK_H
#define MRC_AGENT_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif
