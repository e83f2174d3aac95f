/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Reading maps whole, in a few syscalls however many entries they hold:
 * what `mrcctl qp list`, `status`, `doctor` and the probe engine need at
 * thousands of QPs, where one lookup per entry would cost thousands of
 * syscalls. Batch lookups (BPF_MAP_LOOKUP_BATCH, arrays and hashes),
 * read-only mmaps of the BPF_F_MMAPABLE arrays, and the map memory of a
 * pin folder (bytes_memlock, inner maps of the maps of maps included).
 */
#ifndef MRC_MAP_BULK_H
#define MRC_MAP_BULK_H

#include <stddef.h>
#include <stdint.h>

/* The map's max_entries, 0 if fd is no map. */
uint32_t map_max_entries(int fd);

/*
 * Every entry of the map behind fd (array, hash or per-CPU array), in
 * batches: keys into keys[max] (key_size bytes each), values into
 * vals[max] (value_bytes each: round_up(value_size, 8) * CPUs for a
 * per-CPU map). The number read into *n; 0 or -errno.
 */
int map_read_all(int fd, uint32_t key_size, size_t value_bytes, uint32_t max,
		 void *keys, void *vals, uint32_t *n);

/*
 * Entries [first, first + count) of an array map, by batch: values into
 * vals (value_bytes each). 0 or -errno.
 */
int map_read_range(int fd, uint32_t first, uint32_t count, size_t value_bytes,
		   void *vals);

/*
 * A read-only mapping of a BPF_F_MMAPABLE array: its base, its length in
 * *len (for munmap); NULL + errno on error.
 */
const void *map_mmap_ro(int fd, size_t *len);

/* The kernel's memlock charge of the map behind fd (fdinfo); 0 if unknown. */
uint64_t map_memlock(int fd);

/*
 * The memory of the maps pinned in dir: the sum of bytes_memlock of every
 * pinned map and of the inner maps its maps of maps hold (each map counted
 * once). The number of maps counted in *n_maps. 0 or -errno with a message.
 */
int map_bytes_of_dir(const char *dir, uint64_t *bytes, unsigned int *n_maps,
		     char *err, size_t errlen);

#endif
