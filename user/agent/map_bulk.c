// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Maps read whole (see map_bulk.h): batch lookups, read-only mmaps, and
 * the memory a pin folder's maps take.
 */
#include "agent/map_bulk.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
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

/* The ids of the maps counted so far: each map once. */
struct id_set {
	uint32_t *ids;
	size_t n, cap;
};

/* 1 if id is new (now added), 0 if seen, -ENOMEM. */
static int id_add(struct id_set *s, uint32_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->ids[i] == id)
			return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		uint32_t *p = realloc(s->ids, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		s->ids = p;
		s->cap = cap;
	}
	s->ids[s->n++] = id;
	return 1;
}

struct mem_sum {
	struct id_set seen;
	uint64_t bytes;
	unsigned int n_maps;
};

static void count_map(struct mem_sum *m, const struct fdinfo *fi)
{
	if (id_add(&m->seen, fi->id) == 1) {
		m->bytes += fi->memlock;
		m->n_maps++;
	}
}

/* The inner map ids a map of maps holds (a lookup from userspace gives the id). */
static void count_inner(struct mem_sum *m, int outer, uint32_t key_size,
			uint32_t max)
{
	uint64_t key[8], next[8];
	void *prev = NULL;
	uint32_t id;

	if (key_size > sizeof(key))
		return;
	for (uint32_t i = 0; i < max && !bpf_map_get_next_key(outer, prev, next); i++) {
		struct fdinfo fi;
		int fd;

		memcpy(key, next, key_size);
		prev = key;
		if (bpf_map_lookup_elem(outer, key, &id) || !id)
			continue;
		fd = bpf_map_get_fd_by_id(id);
		if (fd < 0)
			continue;
		read_fdinfo(fd, &fi);
		close(fd);
		if (fi.is_map)
			count_map(m, &fi);
	}
}

static void count_pinned(struct mem_sum *m, int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct fdinfo fi;

	read_fdinfo(fd, &fi);
	if (!fi.is_map)
		return;		/* a pinned program or link */
	count_map(m, &fi);
	if ((fi.type == BPF_MAP_TYPE_ARRAY_OF_MAPS || fi.type == BPF_MAP_TYPE_HASH_OF_MAPS) &&
	    !bpf_obj_get_info_by_fd(fd, &info, &len))
		count_inner(m, fd, info.key_size, info.max_entries);
}

int map_bytes_of_dir(const char *dir, uint64_t *bytes, unsigned int *n_maps,
		     char *err, size_t errlen)
{
	struct mem_sum m = {};
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);

	*bytes = 0;
	*n_maps = 0;
	if (!d)
		return fail(-errno, err, errlen, "cannot list %s: %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		int fd;

		if (e->d_name[0] == '.')
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) >= (int)sizeof(path))
			continue;
		fd = bpf_obj_get(path);
		if (fd < 0)
			continue;
		count_pinned(&m, fd);
		close(fd);
	}
	closedir(d);
	free(m.seen.ids);
	*bytes = m.bytes;
	*n_maps = m.n_maps;
	return 0;
}
