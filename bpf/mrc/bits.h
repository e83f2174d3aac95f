/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Bit arithmetic BPF lacks instructions for (popcount, fls) and the PSN
 * ring bitmaps of mrc_rx_state / mrc_tx_state. Pure: no maps, no helpers.
 */
#ifndef MRC_BPF_BITS_H
#define MRC_BPF_BITS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "mrc/abi.h"

static __always_inline int bitmap_test(const __u64 *bitmap, __u32 psn)
{
	__u32 idx = psn % MRC_WINDOW_MAX;

	return (bitmap[(idx / 64) & (MRC_BITMAP_WORDS - 1)] >> (idx % 64)) & 1;
}

/* Position of the highest set bit, 1-based (0 for 0): BPF has no clz. */
static __always_inline __u32 fls64(__u64 x)
{
	__u32 n = 0;

	if (x >> 32) { n += 32; x >>= 32; }
	if (x >> 16) { n += 16; x >>= 16; }
	if (x >> 8)  { n += 8;  x >>= 8; }
	if (x >> 4)  { n += 4;  x >>= 4; }
	if (x >> 2)  { n += 2;  x >>= 2; }
	if (x >> 1)  { n += 1;  x >>= 1; }
	return n + (__u32)x;
}

static __always_inline __u32 popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (__u32)((x * 0x0101010101010101ULL) >> 56);
}

#endif /* MRC_BPF_BITS_H */
