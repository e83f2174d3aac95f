// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Per-slot mappings of state maps held by an outer map; see state_maps.h. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "common/qpmaps.h"
#include "common/state_maps.h"

int mrc_state_maps_open(struct mrc_state_maps *sm, int outer_fd, int qps_fd,
			size_t value_size, int prot)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	sm->slot = NULL;
	sm->n = 0;
	if (bpf_obj_get_info_by_fd(outer_fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_ARRAY_OF_MAPS)
		return -EPROTO;	/* pins of another build: restart mrcd */
	sm->slot = calloc(info.max_entries ? info.max_entries : 1, sizeof(*sm->slot));
	if (!sm->slot)
		return -ENOMEM;
	sm->outer_fd = outer_fd;
	sm->qps_fd = qps_fd;
	sm->value_size = value_size;
	sm->prot = prot;
	sm->n = info.max_entries;
	return 0;
}

void mrc_state_maps_drop(struct mrc_state_maps *sm, uint32_t slot)
{
	struct mrc_state_map *m;

	if (slot >= sm->n || !sm->slot)
		return;
	m = &sm->slot[slot];
	mrc_state_unmap(m->p, sm->value_size);
	m->p = NULL;
	m->id = 0;
	m->idx = 0;
}

void mrc_state_maps_close(struct mrc_state_maps *sm)
{
	for (uint32_t i = 0; i < sm->n; i++)
		mrc_state_maps_drop(sm, i);
	free(sm->slot);
	sm->slot = NULL;
	sm->n = 0;
}

static size_t page_size(void)
{
	long page = sysconf(_SC_PAGESIZE);

	return page > 0 ? (size_t)page : 4096;
}

/* An array's entries are value_size rounded up to 8 bytes apart. */
static size_t entry_stride(size_t value_size)
{
	return (value_size + 7) & ~(size_t)7;
}

void *mrc_state_map_entry(int fd, uint32_t idx, size_t value_size, int prot)
{
	size_t page = page_size(), at = idx * entry_stride(value_size);
	size_t off = at / page * page, len;
	char *p;

	if (mrc_qpmaps_value_size(fd) != value_size) {
		errno = EPROTO;
		return NULL;
	}
	if (idx >= mrc_qpmaps_entries(fd)) {
		errno = ERANGE;
		return NULL;
	}
	len = (at - off + value_size + page - 1) / page * page;
	p = mmap(NULL, len, prot, MAP_SHARED, fd, (off_t)off);
	return p == MAP_FAILED ? NULL : p + (at - off);
}

void *mrc_state_map_fd(int fd, size_t value_size, int prot)
{
	return mrc_state_map_entry(fd, 0, value_size, prot);
}

void *mrc_state_map_slot(int outer_fd, uint32_t slot, uint32_t idx, size_t value_size,
			 int prot)
{
	int fd = mrc_qpmaps_open(outer_fd, slot);
	void *p;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	p = mrc_state_map_entry(fd, idx, value_size, prot);
	close(fd);
	return p;
}

/* The mapping starts at the page the entry is in. */
void mrc_state_unmap(void *p, size_t value_size)
{
	size_t page = page_size(), in_page;
	char *base;

	if (!p)
		return;
	in_page = (uintptr_t)p % page;
	base = (char *)p - in_page;
	munmap(base, (in_page + value_size + page - 1) / page * page);
}

/* Map entry idx of the map of that id: NULL when it is gone or not the size asked. */
static void *map_by_id(const struct mrc_state_maps *sm, uint32_t id, uint32_t idx)
{
	int fd = bpf_map_get_fd_by_id(id);
	void *p;

	if (fd < 0)
		return NULL;
	p = mrc_state_map_entry(fd, idx, sm->value_size, sm->prot);
	close(fd);
	return p;
}

void *mrc_state_maps_get(struct mrc_state_maps *sm, uint32_t slot)
{
	__u32 id = 0, idx;

	if (slot >= sm->n)
		return NULL;
	if (bpf_map_lookup_elem(sm->outer_fd, &slot, &id) || !id) {
		mrc_state_maps_drop(sm, slot);
		return NULL;
	}
	idx = sm->qps_fd >= 0 ? mrc_qp_state_idx(sm->qps_fd, slot) : 0;
	if (id == sm->slot[slot].id && idx == sm->slot[slot].idx)
		return sm->slot[slot].p;
	mrc_state_maps_drop(sm, slot);
	sm->slot[slot].p = map_by_id(sm, id, idx);
	sm->slot[slot].id = sm->slot[slot].p ? id : 0;
	sm->slot[slot].idx = idx;
	return sm->slot[slot].p;
}
