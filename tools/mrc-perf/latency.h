// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's per-WRITE latency histogram, filled by the client's data loop
 * (sweep.c) once per completion: inline, so the timed loop makes no call
 * for it.
 */
#ifndef MRC_PERF_LATENCY_H
#define MRC_PERF_LATENCY_H

#include <stdint.h>

/*
 * Latency histogram: exact below 128 ns, then 128 buckets per power of two
 * (under 1 % error). Fixed size whatever the number of WRITEs.
 */
#define LAT_SUB_BITS	7
#define LAT_SUB		(1u << LAT_SUB_BITS)
#define LAT_BUCKETS	((64 - LAT_SUB_BITS + 1) * LAT_SUB)

struct lat_hist {
	uint64_t count;
	uint64_t max_ns;	/* exact, not a bucket: outliers are the point */
	uint64_t bucket[LAT_BUCKETS];
};

static inline unsigned int lat_bucket(uint64_t ns)
{
	unsigned int e;

	if (ns < LAT_SUB)
		return (unsigned int)ns;
	e = 63 - (unsigned int)__builtin_clzll(ns);
	return (e - LAT_SUB_BITS + 1) * LAT_SUB +
	       (unsigned int)((ns >> (e - LAT_SUB_BITS)) & (LAT_SUB - 1));
}

/* The middle of a bucket's range. */
static inline uint64_t lat_bucket_value(unsigned int i)
{
	unsigned int e, shift;

	if (i < LAT_SUB)
		return i;
	e = i / LAT_SUB + LAT_SUB_BITS - 1;
	shift = e - LAT_SUB_BITS;
	return ((uint64_t)(LAT_SUB + i % LAT_SUB) << shift) +
	       ((1ULL << shift) >> 1);
}

static inline void lat_add(struct lat_hist *h, uint64_t ns)
{
	h->bucket[lat_bucket(ns)]++;
	h->count++;
	if (ns > h->max_ns)
		h->max_ns = ns;
}

static inline double lat_percentile_us(const struct lat_hist *h, unsigned int pct)
{
	uint64_t rank, seen = 0;
	unsigned int i;

	if (!h->count)
		return 0;
	rank = (h->count * pct + 99) / 100;
	if (!rank)
		rank = 1;
	for (i = 0; i < LAT_BUCKETS; i++) {
		seen += h->bucket[i];
		if (seen >= rank)
			return (double)lat_bucket_value(i) / 1e3;
	}
	return 0;
}

#endif /* MRC_PERF_LATENCY_H */
