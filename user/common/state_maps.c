// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* Per-slot mappings of state maps held by an outer map; see state_maps.h. */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "common/qpmaps.h"
#include "common/state_maps.h"

int mrc_state_maps_open(struct mrc_state_maps *sm, int outer_fd, size_t value_size,
			int prot)
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
}

void mrc_state_maps_close(struct mrc_state_maps *sm)
{
	for (uint32_t i = 0; i < sm->n; i++)
		mrc_state_maps_drop(sm, i);
	free(sm->slot);
	sm->slot = NULL;
	sm->n = 0;
}

void *mrc_state_map_fd(int fd, size_t value_size, int prot)
{
	void *p;

	if (mrc_qpmaps_value_size(fd) != value_size) {
		errno = EPROTO;
		return NULL;
	}
	p = mmap(NULL, mrc_qp_state_map_len(value_size), prot, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

void *mrc_state_map_slot(int outer_fd, uint32_t slot, size_t value_size, int prot)
{
	int fd = mrc_qpmaps_open(outer_fd, slot);
	void *p;

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	p = mrc_state_map_fd(fd, value_size, prot);
	close(fd);
	return p;
}

void mrc_state_unmap(void *p, size_t value_size)
{
	if (p)
		munmap(p, mrc_qp_state_map_len(value_size));
}

/* Map the inner map of that id: NULL when it is gone or not the size asked. */
static void *map_by_id(const struct mrc_state_maps *sm, uint32_t id)
{
	int fd = bpf_map_get_fd_by_id(id);
	void *p;

	if (fd < 0)
		return NULL;
	p = mrc_state_map_fd(fd, sm->value_size, sm->prot);
	close(fd);
	return p;
}

void *mrc_state_maps_get(struct mrc_state_maps *sm, uint32_t slot)
{
	__u32 id = 0;

	if (slot >= sm->n)
		return NULL;
	if (bpf_map_lookup_elem(sm->outer_fd, &slot, &id) || !id) {
		mrc_state_maps_drop(sm, slot);
		return NULL;
	}
	if (id == sm->slot[slot].id)
		return sm->slot[slot].p;
	mrc_state_maps_drop(sm, slot);
	sm->slot[slot].p = map_by_id(sm, id);
	sm->slot[slot].id = sm->slot[slot].p ? id : 0;
	return sm->slot[slot].p;
}
