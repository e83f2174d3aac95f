/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Sizing the fast path's maps for mrcd's limits (--max-qps,
 * --max-contexts) before the BPF object is loaded, and what they will
 * cost: the pinned-map list (pins.h, each spec's `scale`) is the one
 * source of which maps grow and how.
 */
#ifndef MRC_COMMON_MAP_PLAN_H
#define MRC_COMMON_MAP_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "common/pins.h"

struct bpf_object;

/*
 * Set the entry count of every pinned map of obj (not loaded yet) to what
 * its spec says under max_qps and max_ctx: 0, or -errno with a message.
 */
int mrc_plan_size_object(struct bpf_object *obj, uint32_t max_qps,
			 uint32_t max_ctx, char *err, size_t errlen);

/*
 * The bytes the kernel charges for a map of spec s with that many
 * entries (its bytes_memlock, as kernels of 6.x count it: values rounded
 * to 8 bytes, per-CPU values once per possible CPU, hash maps with their
 * buckets, element headers and per-CPU spare elements).
 */
uint64_t mrc_plan_map_bytes(const struct mrc_pin_spec *s, uint32_t entries,
			    unsigned int ncpus);

/* The sum over every pinned map under max_qps and max_ctx. */
uint64_t mrc_plan_bytes(uint32_t max_qps, uint32_t max_ctx, unsigned int ncpus);

/*
 * The QPs' state maps at max_qps QPs of max_ctx contexts at most
 * (user/common/qpmaps.h: mrc_rx, mrc_tx, mrc_qp_evs in blocks of each
 * context's QPs, a window's mrc_cc_view a map of its own), which
 * mrc_plan_bytes() leaves out: they come with the QPs, not with mrcd's
 * start. An upper bound: the blocks of a context that churns QPs hold
 * released entries a moment longer (MRC_STATE_REUSE_NS).
 */
uint64_t mrc_plan_state_bytes(uint32_t max_qps, uint32_t max_ctx);

/* The biggest map under those limits (what a failure most likely hit). */
enum mrc_pin mrc_plan_biggest(uint32_t max_qps, uint32_t max_ctx,
			      unsigned int ncpus);

/* bytes_memlock the kernel reports for the map behind fd, 0 if unknown. */
uint64_t mrc_plan_fd_bytes(int fd);

/*
 * Memory that can hold `need` bytes of maps: 0, or -ENOMEM with a message
 * naming the limit that cannot (the memory cgroup's limit less its usage,
 * for cgroup v1 and v2 and their ancestors, with room for the verifier's
 * transient memory while the programs load; then MemAvailable). BPF maps
 * are charged to the memory cgroup on kernels >= 5.11, not to
 * RLIMIT_MEMLOCK; on older kernels a finite RLIMIT_MEMLOCK is checked too.
 */
int mrc_plan_check_memory(uint64_t need, char *err, size_t errlen);

#endif /* MRC_COMMON_MAP_PLAN_H */
