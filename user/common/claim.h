/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Claiming keys of the fast path's owner maps (QP numbers, context and
 * window slots): libmrc does it for a process that opens the maps itself,
 * mrcd for the applications it brokers (common/broker.h). An owner map
 * holds the claiming process's pid, so a slot whose process died without
 * cleaning up can be taken over.
 */
#ifndef MRC_COMMON_CLAIM_H
#define MRC_COMMON_CLAIM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * `len` bytes from the kernel's CSPRNG (getrandom(2)): what peers must not
 * guess (QP numbers, rkeys, keys) never comes from libc's random(). 0 or
 * -errno.
 */
int mrc_getrandom(void *buf, size_t len);

/*
 * Claim `key` for pid: insert it unless present; take over the entry of a
 * process that died without cleanup. 0, -EBUSY when a live process (or
 * pid itself) holds it, or -errno.
 */
int mrc_claim_slot(int owner_fd, uint32_t key, pid_t pid);

/*
 * A free key in first..first+n-1: a few drawn at random (unpredictable
 * numbers), then every key from a random start. -ENOSPC when all are held.
 */
int mrc_claim_random(int owner_fd, uint32_t first, uint32_t n, pid_t pid,
		     uint32_t *key);

#endif /* MRC_COMMON_CLAIM_H */
