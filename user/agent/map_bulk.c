// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Maps read whole (see map_bulk.h): batch lookups, read-only mmaps, and
 * the memory a pin folder's maps take.
 */
#include "agent/map_bulk.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "common/errmsg.h"

uint32_t map_max_entries(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.max_entries;
}

/*
 * One batch after the token `in` (NULL: from the start): up to *count
 * entries; *count becomes what was read. 1 when the map has no more, 0
 * when it may have, -errno on error.
 */
static int batch_once(int fd, void *in, void *out, void *keys, void *vals,
		      uint32_t *count)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	int rc = bpf_map_lookup_batch(fd, in, out, keys, vals, count, &o);

	if (rc < 0 && errno == ENOENT)
		return 1;
	return rc < 0 ? -errno : 0;
}

/* Batch ops missing (an older kernel, a map type without them). */
static bool no_batch(int rc)
{
	return rc == -EINVAL || rc == -EOPNOTSUPP || rc == -524 /* ENOTSUPP */;
}

/*
 * The same key by key: a syscall or two per entry. An entry deleted
 * meanwhile is skipped (its key stays the cursor); the steps are bounded,
 * as a hash restarts from its first key after a missing one.
 */
static int read_one_by_one(int fd, uint32_t key_size, size_t value_bytes,
			   uint32_t max, void *keys, void *vals, uint32_t *n)
{
	void *prev = NULL;

	*n = 0;
	for (uint64_t step = 0; *n < max && step < 2 * (uint64_t)max + 2; step++) {
		char *key = (char *)keys + (size_t)*n * key_size;

		if (bpf_map_get_next_key(fd, prev, key))
			return errno == ENOENT ? 0 : -errno;
		prev = key;
		if (!bpf_map_lookup_elem(fd, key, (char *)vals + (size_t)*n * value_bytes))
			(*n)++;
		else if (errno != ENOENT)
			return -errno;
	}
	return 0;
}

int map_read_all(int fd, uint32_t key_size, size_t value_bytes, uint32_t max,
		 void *keys, void *vals, uint32_t *n)
{
	/* The batch token: a key for arrays, a bucket number for hashes. */
	uint64_t token[2][8];
	void *in = NULL;
	int rc = 0, t = 0;

	*n = 0;
	if (key_size > sizeof(token[0]))
		return -EINVAL;
	while (*n < max && rc == 0) {
		uint32_t count = max - *n;

		rc = batch_once(fd, in, token[t], (char *)keys + (size_t)*n * key_size,
				(char *)vals + (size_t)*n * value_bytes, &count);
		if (rc < 0 && !in && no_batch(rc))
			return read_one_by_one(fd, key_size, value_bytes, max, keys, vals, n);
		if (rc < 0)
			return rc;
		*n += count;
		if (!count)
			break;
		in = token[t];
		t ^= 1;
	}
	return 0;
}

int map_read_range(int fd, uint32_t first, uint32_t count, size_t value_bytes,
		   void *vals)
{
	uint32_t before = first - 1, token, done = 0, *keys;
	int rc = 0;

	keys = malloc((size_t)count * sizeof(*keys));
	if (!keys)
		return -ENOMEM;
	while (done < count && rc == 0) {
		uint32_t n = count - done;

		rc = batch_once(fd, first + done ? &before : NULL, &token, keys,
				(char *)vals + (size_t)done * value_bytes, &n);
		if (rc < 0)
			break;
		done += n;
		before = first + done - 1;
		if (!n)
			break;
	}
	free(keys);
	if (rc >= 0 && done < count)
		rc = -ERANGE;	/* past the end of the array */
	return rc < 0 ? rc : 0;
}

const void *map_mmap_ro(int fd, size_t *len)
{
	struct bpf_map_info info = {};
	__u32 ilen = sizeof(info);
	void *p;

	if (bpf_obj_get_info_by_fd(fd, &info, &ilen))
		return NULL;
	if (!(info.map_flags & BPF_F_MMAPABLE) || !info.max_entries) {
		errno = EINVAL;
		return NULL;
	}
	/* Array values are laid out 8-byte aligned. */
	*len = (size_t)((info.value_size + 7) & ~7u) * info.max_entries;
	p = mmap(NULL, *len, PROT_READ, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* ---- map memory ------------------------------------------------------------ */

struct fdinfo {
	uint32_t type, id;
	uint64_t memlock;
	int is_map;
};

static void read_fdinfo(int fd, struct fdinfo *fi)
{
	char path[64], line[256];
	FILE *f;

	memset(fi, 0, sizeof(*fi));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long v;

		if (sscanf(line, "map_type: %llu", &v) == 1)
			fi->type = (uint32_t)v, fi->is_map = 1;
		else if (sscanf(line, "map_id: %llu", &v) == 1)
			fi->id = (uint32_t)v;
		else if (sscanf(line, "memlock: %llu", &v) == 1)
			fi->memlock = v;
	}
	fclose(f);
}

uint64_t map_memlock(int fd)
{
	struct fdinfo fi;

	read_fdinfo(fd, &fi);
	return fi.memlock;
}

/* Map ids, gathered, then sorted and counted once each. */
struct id_list {
	uint32_t *ids;
	size_t n, cap;
};

static int id_push(struct id_list *l, uint32_t id)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		uint32_t *p = realloc(l->ids, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		l->ids = p;
		l->cap = cap;
	}
	l->ids[l->n++] = id;
	return 0;
}

static int id_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The inner map ids a map of maps holds (from userspace a lookup gives
 * the id): in batches where the kernel has them, else key by key.
 */
static int push_inner(struct id_list *l, int outer, uint32_t key_size, uint32_t max)
{
	uint64_t key[8], next[8];
	uint32_t *keys = NULL, *vals = NULL, n = 0, id;
	void *prev = NULL;
	int rc = 0;

	if (key_size == sizeof(uint32_t)) {
		keys = malloc((max ? max : 1) * sizeof(*keys));
		vals = malloc((max ? max : 1) * sizeof(*vals));
		if (keys && vals &&
		    !map_read_all(outer, key_size, sizeof(*vals), max, keys, vals, &n)) {
			for (uint32_t i = 0; i < n && !rc; i++)
				rc = vals[i] ? id_push(l, vals[i]) : 0;
			free(keys);
			free(vals);
			return rc;
		}
		free(keys);
		free(vals);
	}
	if (key_size > sizeof(key))
		return 0;
	for (uint32_t i = 0; i < max && !rc && !bpf_map_get_next_key(outer, prev, next); i++) {
		memcpy(key, next, key_size);
		prev = key;
		if (!bpf_map_lookup_elem(outer, key, &id) && id)
			rc = id_push(l, id);
	}
	return rc;
}

/* A pinned map's id, and its inner maps' if it is a map of maps. */
static int push_pinned(struct id_list *l, int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct fdinfo fi;
	int rc;

	read_fdinfo(fd, &fi);
	if (!fi.is_map)
		return 0;	/* a pinned program or link */
	rc = id_push(l, fi.id);
	if (!rc && (fi.type == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
		    fi.type == BPF_MAP_TYPE_HASH_OF_MAPS) &&
	    !bpf_obj_get_info_by_fd(fd, &info, &len))
		rc = push_inner(l, fd, info.key_size, info.max_entries);
	return rc;
}

/*
 * The memlock charge depends on the map's shape only: maps of one shape
 * (per-QP inner maps made from one template) are read from fdinfo once.
 */
struct shape_memo {
	struct bpf_map_info shape;
	uint64_t memlock;
};

static bool same_shape(const struct bpf_map_info *a, const struct bpf_map_info *b)
{
	return a->type == b->type && a->key_size == b->key_size &&
	       a->value_size == b->value_size && a->max_entries == b->max_entries &&
	       a->map_flags == b->map_flags;
}

#define SHAPES	16

static uint64_t memlock_of_id(uint32_t id, struct shape_memo *memo, unsigned int *n_memo)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	uint64_t bytes = 0;
	int fd = bpf_map_get_fd_by_id(id);

	if (fd < 0)
		return 0;	/* gone since it was listed */
	if (!bpf_obj_get_info_by_fd(fd, &info, &len)) {
		for (unsigned int i = 0; i < *n_memo; i++)
			if (same_shape(&memo[i].shape, &info)) {
				close(fd);
				return memo[i].memlock;
			}
	}
	bytes = map_memlock(fd);
	if (*n_memo < SHAPES && info.type != BPF_MAP_TYPE_UNSPEC)
		memo[(*n_memo)++] = (struct shape_memo){ .shape = info, .memlock = bytes };
	close(fd);
	return bytes;
}

int map_bytes_of_dir(const char *dir, uint64_t *bytes, unsigned int *n_maps,
		     char *err, size_t errlen)
{
	struct shape_memo memo[SHAPES];
	struct id_list l = {};
	unsigned int n_memo = 0;
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	int rc = 0;

	*bytes = 0;
	*n_maps = 0;
	if (!d)
		return fail(-errno, err, errlen, "cannot list %s: %s", dir, strerror(errno));
	while (!rc && (e = readdir(d))) {
		int fd;

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		rc = push_pinned(&l, fd);
		close(fd);
	}
	closedir(d);
	if (rc) {
		free(l.ids);
		return fail(rc, err, errlen, "listing the maps of %s: %s", dir, strerror(-rc));
	}
	qsort(l.ids, l.n, sizeof(*l.ids), id_cmp);
	for (size_t i = 0; i < l.n; i++) {
		if (i && l.ids[i] == l.ids[i - 1])
			continue;
		*bytes += memlock_of_id(l.ids[i], memo, &n_memo);
		(*n_maps)++;
	}
	free(l.ids);
	return 0;
}
