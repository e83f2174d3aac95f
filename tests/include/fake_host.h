/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Every map mrcd pins, created here (bpf_map_create) at the sizes of
 * given limits and pinned in a private bpffs folder, with mrc_cfg's ABI
 * version written: what mrcctl, doctor and the probe engine see of a host
 * with that many QPs, without mrcd, programs or a lab. The tests fill
 * the maps with the QPs they need.
 */
#ifndef MRC_TEST_FAKE_HOST_H
#define MRC_TEST_FAKE_HOST_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/pins.h"
#include "mrc/abi.h"
#include "pindir.h"

struct fake_host {
	char dir[96];
	uint32_t max_qps, max_ctx;
	int fd[MRC_PIN__COUNT];
	int inner[2];		/* rings held by mrc_events (contexts 0 and 1) */
};

static inline int fake_ring(void)
{
	return bpf_map_create(BPF_MAP_TYPE_RINGBUF, "fake_ring", 0, 0, 4096, NULL);
}

static inline int fake_map(const struct mrc_pin_spec *s, uint32_t max_qps,
			   uint32_t max_ctx)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = s->flags);
	int tmpl = -1, fd;

	if (s->inner_value_size) {
		LIBBPF_OPTS(bpf_map_create_opts, io, .map_flags = s->inner_flags);

		tmpl = bpf_map_create(BPF_MAP_TYPE_ARRAY, "fake_state", sizeof(__u32),
				      s->inner_value_size, 1, &io);
		if (tmpl < 0)
			return -errno;
		o.inner_map_fd = tmpl;
	} else if (s->type == BPF_MAP_TYPE_ARRAY_OF_MAPS) {
		tmpl = fake_ring();
		if (tmpl < 0)
			return -errno;
		o.inner_map_fd = tmpl;
	}
	fd = bpf_map_create(s->type, s->name, s->key_size, s->value_size,
			    mrc_pin_entries(s, max_qps, max_ctx), &o);
	if (fd < 0)
		fd = -errno;
	if (tmpl >= 0)
		close(tmpl);
	return fd;
}

static inline void fake_host_destroy(struct fake_host *h)
{
	for (int i = 0; i < MRC_PIN__COUNT; i++)
		if (h->fd[i] >= 0)
			close(h->fd[i]);
	for (int i = 0; i < 2; i++)
		if (h->inner[i] >= 0)
			close(h->inner[i]);
	pin_dir_remove(h->dir, sizeof(h->dir));
}

/*
 * The maps in only[n_only] (every map when only is NULL: at 65,536 QPs
 * the send logs alone would take 4 GiB). 0, or -errno with the step that
 * failed printed.
 */
static inline int fake_host_create(struct fake_host *h, const char *tag,
				   uint32_t max_qps, uint32_t max_ctx,
				   const enum mrc_pin *only, size_t n_only)
{
	struct mrc_global_cfg cfg = { .abi_version = MRC_ABI_VERSION };
	char path[160];
	__u32 zero = 0;

	memset(h, 0, sizeof(*h));
	for (int i = 0; i < MRC_PIN__COUNT; i++)
		h->fd[i] = -1;
	h->inner[0] = h->inner[1] = -1;
	h->max_qps = max_qps;
	h->max_ctx = max_ctx;
	snprintf(h->dir, sizeof(h->dir), "/sys/fs/bpf/mrc-test-%s-%d", tag, (int)getpid());
	if (mkdir(h->dir, 0700)) {
		fprintf(stderr, "mkdir %s: %s\n", h->dir, strerror(errno));
		h->dir[0] = 0;
		return -errno;
	}
	for (int i = 0; i < MRC_PIN__COUNT; i++) {
		const struct mrc_pin_spec *s = mrc_pin_spec((enum mrc_pin)i);
		bool wanted = !only;

		for (size_t k = 0; k < n_only; k++)
			wanted |= only[k] == (enum mrc_pin)i;
		if (!wanted)
			continue;
		h->fd[i] = fake_map(s, max_qps, max_ctx);
		snprintf(path, sizeof(path), "%s/%s", h->dir, s->name);
		if (h->fd[i] < 0 || bpf_obj_pin(h->fd[i], path)) {
			fprintf(stderr, "creating %s: %s\n", path, strerror(errno));
			return -errno;
		}
	}
	/* Two contexts' event rings, as libmrc's would be. */
	for (__u32 k = 0; k < 2 && h->fd[MRC_PIN_EVENTS] >= 0; k++) {
		h->inner[k] = fake_ring();
		if (h->inner[k] < 0 ||
		    bpf_map_update_elem(h->fd[MRC_PIN_EVENTS], &k, &h->inner[k], BPF_ANY))
			return -errno;
	}
	return bpf_map_update_elem(h->fd[MRC_PIN_CFG], &zero, &cfg, BPF_ANY) ? -errno : 0;
}

#endif /* MRC_TEST_FAKE_HOST_H */
