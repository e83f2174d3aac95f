// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's bytes: the client's source pattern (a different one per size),
 * the checksum both sides compute for --verify, and the page-aligned,
 * zero-filled regions both sides register.
 */
#include "perf.h"

#include <endian.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/*
 * The source bytes of one size: pseudo-random from a seed derived from the
 * size, so the data a previous size left in the region never verifies.
 * No byte is zero, so "region modified" holds even after a 1-byte WRITE.
 */
void fill_pattern(uint8_t *buf, uint64_t len, uint64_t size)
{
	uint64_t state = size * 0x2545f4914f6cdd1dULL, w, i;

	for (i = 0; i < len; i += 8) {
		w = splitmix64(&state) | 0x0101010101010101ULL;
		memcpy(buf + i, &w, len - i < 8 ? len - i : 8);
	}
}

/*
 * FNV-1a over little-endian 64-bit words (bytes for the tail), with an
 * xorshift so high bits feed back into low ones: eight times faster than
 * byte-wise FNV on a 1 GiB region. Chunks passed to successive calls must
 * be multiples of 8 bytes except the last.
 */
uint64_t csum_update(uint64_t h, const uint8_t *p, uint64_t len)
{
	uint64_t w;

	for (; len >= 8; p += 8, len -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ le64toh(w)) * CSUM_PRIME;
		h ^= h >> 29;
	}
	for (; len; p++, len--)
		h = (h ^ *p) * CSUM_PRIME;
	return h;
}

/* A page-aligned, zero-filled buffer, faulted in now so page faults do
 * not land in the timed phase (registration would pin it on a NIC). */
void *buffer_alloc(uint64_t len, size_t *map_len)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t n = (size_t)((len + (uint64_t)page - 1) & ~((uint64_t)page - 1));
	void *p = mmap(NULL, n, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	*map_len = n;
	return p;
}

bool buffer_is_modified(const uint8_t *buf, uint64_t len)
{
	/* All zero iff the first byte is zero and every byte equals the next. */
	return len && (buf[0] || memcmp(buf, buf + 1, len - 1));
}
