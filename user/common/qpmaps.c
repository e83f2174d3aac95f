// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The per-QP inner maps: created sized by the QP, swapped into the outer
 * maps in one update each, read back through the outer maps by id (see
 * qpmaps.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <linux/bpf.h>

#include "common/qpmaps.h"

static uint32_t struct_id(const struct btf *btf, const char *name)
{
	int id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);

	return id > 0 ? (uint32_t)id : 0;
}

/* The BTF the fast path was loaded with, by way of one of its maps. */
static void find_btf(struct mrc_qpmaps *m, int src_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct btf *btf;
	int id;

	if (src_fd < 0 || bpf_obj_get_info_by_fd(src_fd, &info, &len) || !info.btf_id)
		return;
	btf = btf__load_from_kernel_by_id(info.btf_id);
	if (!btf)
		return;
	id = btf__find_by_name_kind(btf, "unsigned int", BTF_KIND_INT);
	m->key_type = id > 0 ? (uint32_t)id : 0;
	m->log_type = struct_id(btf, "mrc_send_rec");
	m->rx_type = struct_id(btf, "mrc_ev_rx_counters");
	m->tx_type = struct_id(btf, "mrc_ev_tx_counters");
	m->rx_state_type = struct_id(btf, "mrc_rx_state");
	m->tx_state_type = struct_id(btf, "mrc_tx_state");
	m->evs_type = struct_id(btf, "mrc_qp_evs");
	m->cc_view_type = struct_id(btf, "mrc_cc_view");
	btf__free(btf);
	if (m->key_type && m->log_type && m->rx_type && m->tx_type)
		m->btf_fd = bpf_btf_get_fd_by_id(info.btf_id);
	if (m->btf_fd < 0)
		m->btf_fd = -1;
}

void mrc_qpmaps_init(struct mrc_qpmaps *m, int log_fd, int rx_fd, int tx_fd,
		     const struct mrc_qp_state_outer *state, int btf_src_fd)
{
	memset(m, 0, sizeof(*m));
	m->log_fd = log_fd;
	m->rx_fd = rx_fd;
	m->tx_fd = tx_fd;
	m->rx_state_fd = state ? state->rx : -1;
	m->tx_state_fd = state ? state->tx : -1;
	m->evs_fd = state ? state->evs : -1;
	m->btf_fd = -1;
	m->qps_fd = -1;
	find_btf(m, btf_src_fd);
}

void mrc_qpmaps_set_qps(struct mrc_qpmaps *m, int qps_fd)
{
	m->qps_fd = qps_fd;
}

/* The slot's record: RESET, naming the entry (before the maps go in). */
static int name_entry(const struct mrc_qpmaps *m, uint32_t slot, uint32_t idx)
{
	struct mrc_qp_info reset = { .state = MRC_QPS_RESET, .state_idx = idx };

	if (!m || m->qps_fd < 0)
		return 0;
	return bpf_map_update_elem(m->qps_fd, &slot, &reset, BPF_ANY) ? -errno : 0;
}

void mrc_qpmaps_fini(struct mrc_qpmaps *m)
{
	if (m->btf_fd >= 0)
		close(m->btf_fd);
	m->btf_fd = -1;
}

/*
 * An inner map: an array of n values of type value_type, typed when the
 * BTF is known. The flags match the templates' (bpf/mrc/maps.h), which
 * the kernel checks when the map goes into the outer map.
 */
static int create_map(const struct mrc_qpmaps *m, const char *name, __u32 flags,
		      uint32_t value_size, uint32_t value_type, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = flags);
	int fd;

	if (m && m->btf_fd >= 0 && value_type) {
		o.btf_fd = (__u32)m->btf_fd;
		o.btf_key_type_id = m->key_type;
		o.btf_value_type_id = value_type;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(__u32), value_size, n, &o);
	if (fd < 0 && o.btf_fd) {
		/* A kernel that refuses the types still gets the map. */
		o.btf_fd = 0;
		o.btf_key_type_id = 0;
		o.btf_value_type_id = 0;
		fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, name, sizeof(__u32), value_size,
				    n, &o);
	}
	return fd < 0 ? -errno : fd;
}

static int create_inner(const struct mrc_qpmaps *m, const char *name,
			uint32_t value_size, uint32_t value_type, uint32_t n)
{
	return create_map(m, name, BPF_F_INNER_MAP, value_size, value_type, n);
}

/* Put a new inner map into outer[slot]; the map's fd is closed either way. */
static int install(int outer_fd, uint32_t slot, int inner_fd)
{
	__u32 v = (__u32)inner_fd;
	int err = bpf_map_update_elem(outer_fd, &slot, &v, BPF_ANY) ? -errno : 0;

	close(inner_fd);
	return err;
}

int mrc_qpmaps_publish_log(const struct mrc_qpmaps *m, uint32_t slot, uint32_t qpn,
			   uint32_t window)
{
	char name[BPF_OBJ_NAME_LEN];
	int fd;

	if (window < 1 || window > MRC_WINDOW_MAX)
		return -EINVAL;
	snprintf(name, sizeof(name), "mrc_log_%u", qpn);
	fd = create_inner(m, name, sizeof(struct mrc_send_rec), m->log_type,
			  mrc_send_log_entries(window));
	return fd < 0 ? fd : install(m->log_fd, slot, fd);
}

int mrc_qpmaps_publish(const struct mrc_qpmaps *m, uint32_t slot, uint32_t qpn,
		       uint32_t window, uint32_t n_evs)
{
	char name[BPF_OBJ_NAME_LEN];
	int fd, err;

	if (n_evs > MRC_MAX_EVS)
		return -EINVAL;
	if (n_evs == 0)
		n_evs = 1;	/* no array is empty; nothing uses the entry */
	err = mrc_qpmaps_publish_log(m, slot, qpn, window);
	if (err)
		return err;
	snprintf(name, sizeof(name), "mrc_evrx_%u", qpn);
	fd = create_inner(m, name, sizeof(struct mrc_ev_rx_counters), m->rx_type, n_evs);
	err = fd < 0 ? fd : install(m->rx_fd, slot, fd);
	if (err)
		return err;
	snprintf(name, sizeof(name), "mrc_evtx_%u", qpn);
	fd = create_inner(m, name, sizeof(struct mrc_ev_tx_counters), m->tx_type, n_evs);
	return fd < 0 ? fd : install(m->tx_fd, slot, fd);
}

void mrc_qpmaps_remove(const struct mrc_qpmaps *m, uint32_t slot)
{
	/* ENOENT (nothing there) is what we want anyway. */
	bpf_map_delete_elem(m->log_fd, &slot);
	bpf_map_delete_elem(m->rx_fd, &slot);
	bpf_map_delete_elem(m->tx_fd, &slot);
	bpf_map_delete_elem(m->rx_state_fd, &slot);
	bpf_map_delete_elem(m->tx_state_fd, &slot);
	bpf_map_delete_elem(m->evs_fd, &slot);
}

/* Put the map fd into outer at slot, the fd staying the caller's. */
static int put_state(int outer_fd, uint32_t slot, int fd)
{
	__u32 v = (__u32)fd;

	return bpf_map_update_elem(outer_fd, &slot, &v, BPF_ANY) ? -errno : 0;
}

/* A one-entry state map (a window's view) in outer at slot: its fd or -errno. */
static int create_state(const struct mrc_qpmaps *m, int outer_fd, uint32_t slot,
			const char *name, uint32_t value_size, uint32_t value_type)
{
	int fd = create_map(m, name, BPF_F_MMAPABLE, value_size, value_type, 1);
	int err = fd < 0 ? fd : put_state(outer_fd, slot, fd);

	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}

static void close_state_fds(struct mrc_qp_state_fds *s)
{
	if (s->rx >= 0)
		close(s->rx);
	if (s->tx >= 0)
		close(s->tx);
	if (s->evs >= 0)
		close(s->evs);
	s->rx = s->tx = s->evs = -1;
}

#define ENTRY_IN_USE	UINT64_MAX
#define STATE_FLAGS	(BPF_F_MMAPABLE | BPF_F_INNER_MAP)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The three maps of a state block, by name prefix, size and type. */
struct block_map {
	const char *prefix;
	size_t size;
	uint32_t type;
	int *fd;
	int outer_fd;
};

static void block_maps(const struct mrc_qpmaps *m, struct mrc_state_block *b,
		       struct block_map out[3])
{
	out[0] = (struct block_map){ "mrc_rx", sizeof(struct mrc_rx_state),
				     m ? m->rx_state_type : 0, &b->rx, m ? m->rx_state_fd : -1 };
	out[1] = (struct block_map){ "mrc_tx", sizeof(struct mrc_tx_state),
				     m ? m->tx_state_type : 0, &b->tx, m ? m->tx_state_fd : -1 };
	out[2] = (struct block_map){ "mrc_evs", sizeof(struct mrc_qp_evs),
				     m ? m->evs_type : 0, &b->evs, m ? m->evs_fd : -1 };
}

static void close_block(struct mrc_state_block *b)
{
	struct mrc_qp_state_fds fds = { .rx = b->rx, .tx = b->tx, .evs = b->evs };

	close_state_fds(&fds);
	b->rx = b->tx = b->evs = -1;
	free(b->freed_ns);
	b->freed_ns = NULL;
}

/* A new block, twice the last one (MRC_STATE_BLOCK_MIN..MAX entries). */
static int add_block(const struct mrc_qpmaps *m, struct mrc_state_blocks *sb)
{
	uint32_t cap = sb->n ? sb->b[sb->n - 1].cap * 2 : MRC_STATE_BLOCK_MIN;
	struct mrc_state_block *b;
	struct block_map maps[3];
	char name[BPF_OBJ_NAME_LEN];

	if (cap > MRC_STATE_BLOCK_MAX)
		cap = MRC_STATE_BLOCK_MAX;
	if (sb->n == sb->cap) {
		uint32_t want = sb->cap ? sb->cap * 2 : 4;
		void *p = realloc(sb->b, want * sizeof(*sb->b));

		if (!p)
			return -ENOMEM;
		sb->b = p;
		sb->cap = want;
	}
	b = &sb->b[sb->n];
	*b = (struct mrc_state_block){ .rx = -1, .tx = -1, .evs = -1, .cap = cap };
	b->freed_ns = calloc(cap, sizeof(*b->freed_ns));
	if (!b->freed_ns)
		return -ENOMEM;
	block_maps(m, b, maps);
	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "%s_b%u", maps[i].prefix, sb->n);
		*maps[i].fd = create_map(m, name, STATE_FLAGS, (uint32_t)maps[i].size,
					       maps[i].type, cap);
		if (*maps[i].fd < 0) {
			int err = *maps[i].fd;

			close_block(b);
			return err;
		}
	}
	sb->n++;
	return 0;
}

/* A fresh entry, or one released long enough ago: its block, or -1. */
static int find_entry(struct mrc_state_blocks *sb, uint32_t *idx)
{
	uint64_t now = now_ns();

	for (uint32_t i = 0; i < sb->n; i++)
		if (sb->b[i].fresh < sb->b[i].cap) {
			*idx = sb->b[i].fresh++;
			return (int)i;
		}
	for (uint32_t i = 0; i < sb->n; i++)
		for (uint32_t e = 0; e < sb->b[i].cap; e++) {
			uint64_t t = sb->b[i].freed_ns[e];

			if (t != ENTRY_IN_USE && now - t >= MRC_STATE_REUSE_NS) {
				*idx = e;
				return (int)i;
			}
		}
	return -1;
}

/* Zero an entry used before (a new block's are zero already). */
static int zero_entry(struct mrc_state_block *b, uint32_t idx)
{
	static const union {
		struct mrc_rx_state rx;
		struct mrc_tx_state tx;
		struct mrc_qp_evs evs;
	} zero;
	int fds[3] = { b->rx, b->tx, b->evs };

	for (int i = 0; i < 3; i++)
		if (bpf_map_update_elem(fds[i], &idx, &zero, BPF_ANY))
			return -errno;
	return 0;
}

/* Fds of the block's maps for the caller, in the outer maps at slot. */
static int hand_out(const struct mrc_qpmaps *m, struct mrc_state_block *b,
		    uint32_t slot, struct mrc_qp_state_fds *out)
{
	struct block_map maps[3];
	int *outs[3] = { &out->rx, &out->tx, &out->evs };

	block_maps(m, b, maps);
	for (int i = 0; i < 3; i++) {
		int err = put_state(maps[i].outer_fd, slot, *maps[i].fd);

		if (!err) {
			*outs[i] = fcntl(*maps[i].fd, F_DUPFD_CLOEXEC, 0);
			err = *outs[i] < 0 ? -errno : 0;
		}
		if (err) {
			*outs[i] = -1;
			close_state_fds(out);
			return err;
		}
	}
	return 0;
}

int mrc_qp_state_create(const struct mrc_qpmaps *m, struct mrc_state_blocks *sb,
			uint32_t slot, uint32_t qpn, struct mrc_qp_state_fds *out)
{
	uint32_t idx = 0;
	int block = find_entry(sb, &idx), err;

	(void)qpn;	/* the blocks are named after the owner's count */
	out->rx = out->tx = out->evs = -1;
	if (block < 0) {
		err = add_block(m, sb);
		if (err)
			return err;
		block = (int)sb->n - 1;
		idx = sb->b[block].fresh++;
	} else if (sb->b[block].freed_ns[idx]) {
		err = zero_entry(&sb->b[block], idx);
		if (err)
			return err;
	}
	err = name_entry(m, slot, idx);
	if (!err)
		err = hand_out(m, &sb->b[block], slot, out);
	if (err) {
		/* Never handed out: free at once, zeroed or fresh either way. */
		sb->b[block].freed_ns[idx] = sb->b[block].freed_ns[idx] ? 1 : 0;
		return err;
	}
	sb->b[block].freed_ns[idx] = ENTRY_IN_USE;
	out->idx = idx;
	out->block = (uint32_t)block;
	return 0;
}

void mrc_qp_state_release(struct mrc_state_blocks *sb, uint32_t block, uint32_t idx)
{
	if (block < sb->n && idx < sb->b[block].cap &&
	    sb->b[block].freed_ns[idx] == ENTRY_IN_USE)
		sb->b[block].freed_ns[idx] = now_ns();
}

void mrc_state_blocks_fini(struct mrc_state_blocks *sb)
{
	for (uint32_t i = 0; i < sb->n; i++)
		close_block(&sb->b[i]);
	free(sb->b);
	*sb = (struct mrc_state_blocks){};
}

uint32_t mrc_qp_state_idx(int qps_fd, uint32_t slot)
{
	struct mrc_qp_info info = {};

	return bpf_map_lookup_elem(qps_fd, &slot, &info) ? 0 : info.state_idx;
}

int mrc_cc_view_create(const struct mrc_qpmaps *m, int outer_fd, uint32_t slot)
{
	char name[BPF_OBJ_NAME_LEN];

	snprintf(name, sizeof(name), "mrc_ccv_%u", slot);
	return create_state(m, outer_fd, slot, name, sizeof(struct mrc_cc_view),
			    m ? m->cc_view_type : 0);
}

int mrc_qp_state_read(int outer_fd, uint32_t slot, uint32_t idx, void *buf, size_t size)
{
	int fd = mrc_qpmaps_open(outer_fd, slot), err = 0;

	if (fd < 0)
		return fd;
	/* The value size is the map's, not the caller's guess. */
	if (size != mrc_qpmaps_value_size(fd))
		err = -EINVAL;
	else if (bpf_map_lookup_elem(fd, &idx, buf))
		err = -errno;
	close(fd);
	return err;
}

/*
 * An untyped state map for a writer that found none (tests, tools): a
 * block of n entries, or a one-entry map where the outer map takes no
 * block (mrc_cc_view). Its fd or -errno.
 */
static int create_untyped(int outer_fd, uint32_t slot, uint32_t n, size_t size)
{
	int fd = create_map(NULL, "mrc_state", STATE_FLAGS, (uint32_t)size, 0, n);
	int err = fd < 0 ? fd : put_state(outer_fd, slot, fd);

	if (err == -EINVAL && n == 1) {
		close(fd);
		return create_state(NULL, outer_fd, slot, "mrc_state", (uint32_t)size, 0);
	}
	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}

int mrc_qp_state_write(int outer_fd, uint32_t slot, uint32_t idx, const void *buf,
		       size_t size)
{
	int fd = mrc_qpmaps_open(outer_fd, slot), err = 0;

	if (fd == -ENOENT)
		fd = create_untyped(outer_fd, slot, idx + 1, size);
	if (fd < 0)
		return fd;
	if (size != mrc_qpmaps_value_size(fd))
		err = -EINVAL;
	else if (bpf_map_update_elem(fd, &idx, buf, BPF_ANY))
		err = -errno;
	close(fd);
	return err;
}

int mrc_qpmaps_open(int outer_fd, uint32_t slot)
{
	__u32 id = 0;
	int fd;

	if (bpf_map_lookup_elem(outer_fd, &slot, &id))
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	return fd < 0 ? -errno : fd;
}

uint32_t mrc_qpmaps_entries(int map_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(map_fd, &info, &len) ? 0 : info.max_entries;
}

size_t mrc_qpmaps_value_size(int map_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(map_fd, &info, &len) ? 0 : info.value_size;
}

/*
 * Copy up to max values of an inner map (value_size each, packed) into
 * out: how many it has, or -errno. One batch call where the kernel has
 * it, else one lookup per entry.
 */
/* Up to max values of the open inner map fd into out: how many, or -errno. */
static int read_inner(int fd, void *out, size_t value_size, uint32_t max)
{
	uint32_t n = mrc_qpmaps_entries(fd), i;
	__u32 *keys, batch = 0, count;
	int err = 0;

	if (n > max)
		n = max;
	keys = calloc(n ? n : 1, sizeof(*keys));
	count = n;
	if (!keys) {
		err = -ENOMEM;
	} else if (bpf_map_lookup_batch(fd, NULL, &batch, keys, out, &count, NULL) &&
		   !(errno == ENOENT && count == n)) {
		for (i = 0; i < n && !err; i++)
			if (bpf_map_lookup_elem(fd, &i, (char *)out + i * value_size))
				err = -errno;
	}
	free(keys);
	return err ? err : (int)n;
}

static int read_all(int outer_fd, uint32_t slot, void *out, size_t value_size,
		    uint32_t max)
{
	int fd = mrc_qpmaps_open(outer_fd, slot);
	int n;

	if (fd < 0)
		return fd;
	n = read_inner(fd, out, value_size, max);
	close(fd);
	return n;
}

int mrc_qpmaps_read_log_fd(int log_fd, struct mrc_send_log *log)
{
	memset(log, 0, sizeof(*log));
	return read_inner(log_fd, log->rec, sizeof(log->rec[0]), MRC_WINDOW_MAX);
}

int mrc_qpmaps_read_log(int log_outer_fd, uint32_t slot, struct mrc_send_log *log)
{
	memset(log, 0, sizeof(*log));
	return read_all(log_outer_fd, slot, log->rec, sizeof(log->rec[0]), MRC_WINDOW_MAX);
}

int mrc_qpmaps_read_ev_stats(int rx_outer_fd, int tx_outer_fd, uint32_t slot,
			     struct mrc_qp_ev_stats *s)
{
	int n_rx, n_tx;

	memset(s, 0, sizeof(*s));
	n_rx = read_all(rx_outer_fd, slot, s->rx, sizeof(s->rx[0]), MRC_MAX_EVS);
	if (n_rx < 0)
		return n_rx;
	n_tx = read_all(tx_outer_fd, slot, s->tx, sizeof(s->tx[0]), MRC_MAX_EVS);
	if (n_tx < 0)
		return n_tx;
	return n_rx < n_tx ? n_rx : n_tx;
}
