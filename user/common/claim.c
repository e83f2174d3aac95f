// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Claiming keys of the owner maps (claim.h). */
#include <errno.h>
#include <signal.h>
#include <sys/random.h>
#include <bpf/bpf.h>

#include "common/claim.h"

int mrc_getrandom(void *buf, size_t len)
{
	unsigned char *p = buf;

	while (len) {
		ssize_t n = getrandom(p, len, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int mrc_claim_slot(int owner_fd, uint32_t key, pid_t pid)
{
	uint32_t owner, me = (uint32_t)pid;

	if (!bpf_map_update_elem(owner_fd, &key, &me, BPF_NOEXIST))
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (bpf_map_lookup_elem(owner_fd, &key, &owner))
		return -EBUSY;
	/* Ours already (another QP or context of this process), or alive. */
	if (owner == me || kill((pid_t)owner, 0) == 0 || errno != ESRCH)
		return -EBUSY;
	/* The owner is gone: take the slot over. */
	bpf_map_delete_elem(owner_fd, &key);
	if (bpf_map_update_elem(owner_fd, &key, &me, BPF_NOEXIST))
		return -EBUSY;
	return 0;
}

#define CLAIM_RANDOM_TRIES 8

int mrc_claim_random(int owner_fd, uint32_t first, uint32_t n, pid_t pid,
		     uint32_t *key)
{
	uint32_t r[CLAIM_RANDOM_TRIES + 1];
	int err = n ? mrc_getrandom(r, sizeof(r)) : -ENOSPC;

	if (err)
		return err;
	for (int i = 0; i < CLAIM_RANDOM_TRIES; i++) {
		if (!mrc_claim_slot(owner_fd, first + r[i] % n, pid)) {
			*key = first + r[i] % n;
			return 0;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = first + (r[CLAIM_RANDOM_TRIES] + i) % n;

		if (!mrc_claim_slot(owner_fd, k, pid)) {
			*key = k;
			return 0;
		}
	}
	return -ENOSPC;
}
