/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The per-QP inner maps of the fast path (include/mrc/abi.h): a QP's send
 * log (mrc_send_log[slot]) and its per-EV counters, XDP's (mrc_ev_stats)
 * and TC's (mrc_ev_tx), each a BPF_MAP_TYPE_ARRAY sized by the QP, which
 * libmrc creates when it publishes a QP's EV table; a QP's state (mrc_rx,
 * mrc_tx, mrc_qp_evs), an entry of BPF_F_MMAPABLE arrays shared by its
 * owner's QPs (blocks, below), which libmrc (mrcd's broker) allocates
 * with the QP and maps; and a window's view (mrc_cc_view), a one-entry
 * BPF_F_MMAPABLE array. A QP's maps go when it goes, its state entry is
 * freed (the blocks go with the owner); readers (mrcctl, mrcd, tests,
 * tools) open them through the outer maps by id.
 */
#ifndef MRC_COMMON_QPMAPS_H
#define MRC_COMMON_QPMAPS_H

#include <stddef.h>
#include <stdint.h>

#include "mrc/abi.h"

/* The outer maps, and the BTF the inner maps are created with. */
struct mrc_qpmaps {
	int log_fd;		/* mrc_send_log */
	int rx_fd;		/* mrc_ev_stats (XDP's counters) */
	int tx_fd;		/* mrc_ev_tx (TC's counters) */
	int rx_state_fd;	/* mrc_rx */
	int tx_state_fd;	/* mrc_tx */
	int evs_fd;		/* mrc_qp_evs */
	/* The fast path's BTF, so bpftool shows the records' fields; -1: none. */
	int btf_fd;
	uint32_t key_type, log_type, rx_type, tx_type;
	uint32_t rx_state_type, tx_state_type, evs_type, cc_view_type;
	/*
	 * mrc_qps, for the allocators that create QPs (libmrc, the broker):
	 * a new QP's record names its entry before its maps are in the slot.
	 * -1 (the default): no record written.
	 */
	int qps_fd;
};

/* The outer maps of a QP's state (mrc_rx, mrc_tx, mrc_qp_evs). */
struct mrc_qp_state_outer {
	int rx, tx, evs;
};

/*
 * Take the outer maps' fds (kept open by the caller) and look up the BTF
 * of the loaded fast path through btf_src_fd, a map created with it (e.g.
 * mrc_qps). Without BTF the inner maps work the same, untyped in bpftool.
 */
void mrc_qpmaps_init(struct mrc_qpmaps *m, int log_fd, int rx_fd, int tx_fd,
		     const struct mrc_qp_state_outer *state, int btf_src_fd);
void mrc_qpmaps_fini(struct mrc_qpmaps *m);
/* mrc_qps, kept open by the caller: mrc_qp_state_create writes the record. */
void mrc_qpmaps_set_qps(struct mrc_qpmaps *m, int qps_fd);

/*
 * Fresh, zeroed inner maps for the QP in slot (QP number qpn, for their
 * names): a send log for `window` PSNs (mrc_send_log_entries), counters
 * for n_evs EVs (0..MRC_MAX_EVS; 0 gets one entry). They replace whatever the slot held,
 * whose memory the kernel frees with its last reference. 0 or -errno.
 */
int mrc_qpmaps_publish(const struct mrc_qpmaps *m, uint32_t slot, uint32_t qpn,
		       uint32_t window, uint32_t n_evs);

/*
 * A fresh send log alone, for a new window (an MPR changed after the EV
 * table was published): the records of PSNs in flight are lost, so their
 * acknowledgements judge no path.
 */
int mrc_qpmaps_publish_log(const struct mrc_qpmaps *m, uint32_t slot, uint32_t qpn,
			   uint32_t window);

/* Take the slot's inner maps out of the outer maps (none is fine). */
void mrc_qpmaps_remove(const struct mrc_qpmaps *m, uint32_t slot);

/*
 * A QP's three state maps (BPF_F_MMAPABLE blocks of its owner's QPs) and
 * its entry in them (mrc_qp_info.state_idx); block names the allocator's
 * block, for mrc_qp_state_release.
 */
struct mrc_qp_state_fds {
	int rx, tx, evs;
	uint32_t idx;
	uint32_t block;
};

/*
 * The state blocks of one owner (a libmrc context, or mrcd's broker for
 * one application): the owner's QPs' entries side by side, so the fast
 * path reads packed values, not a page per QP. Blocks grow (8, 16, ...
 * MRC_STATE_BLOCK_MAX entries) and live as long as the owner. A released
 * entry is used again only MRC_STATE_REUSE_NS later: a program on another
 * CPU, or mrcd's probe engine (which remaps a gone QP at its next refresh,
 * up to 100 ms), may still write the old QP's entry for a moment.
 */
#define MRC_STATE_BLOCK_MIN	8
#define MRC_STATE_BLOCK_MAX	1024
#define MRC_STATE_REUSE_NS	2000000000ull

struct mrc_state_block {
	int rx, tx, evs;	/* the allocator's fds */
	uint32_t cap;		/* entries */
	uint32_t fresh;		/* entries from here on were never used */
	uint64_t *freed_ns;	/* per entry: in use (~0), or when released */
};

struct mrc_state_blocks {
	struct mrc_state_block *b;
	uint32_t n, cap;
};

/*
 * An entry for the QP in slot (named after qpn) in the owner's blocks sb,
 * zeroed, with the block's maps put into mrc_rx, mrc_tx and mrc_qp_evs at
 * slot (replacing what a dead process left there). With m->qps_fd the
 * slot's mrc_qps record is first made a RESET one that names the entry:
 * a reader that finds the maps (mrcd's probe engine) finds the entry too,
 * never a dead process's index into this owner's block. out gets fds of the
 * three maps that the caller owns (to mmap the entry, then close) and the
 * entry. 0 or -errno (then no fd is open and the slot may be half filled:
 * the caller removes it).
 */
int mrc_qp_state_create(const struct mrc_qpmaps *m, struct mrc_state_blocks *sb,
			uint32_t slot, uint32_t qpn, struct mrc_qp_state_fds *out);

/* The QP's entry is free again (in MRC_STATE_REUSE_NS). */
void mrc_qp_state_release(struct mrc_state_blocks *sb, uint32_t block, uint32_t idx);

/* Close the blocks' fds (their memory goes with the outer maps' last use). */
void mrc_state_blocks_fini(struct mrc_state_blocks *sb);

/*
 * A fresh, zeroed view for the window in cc slot, put into mrc_cc_view
 * (outer_fd) at slot; typed with m's BTF when m is not NULL. The map's fd
 * (the caller's, to mmap) or -errno.
 */
int mrc_cc_view_create(const struct mrc_qpmaps *m, int outer_fd, uint32_t slot);

/*
 * For readers and writers that do not own the state (mrcctl, mrcd, tools,
 * tests): entry idx (mrc_qp_info.state_idx; 0 for a window's view) of the
 * state map outer_fd holds at slot, copied to or from buf (size bytes, the
 * map's value size). read: 0, -ENOENT (no map at slot, or no such entry)
 * or -errno. write: creates an untyped block of idx + 1 entries when the
 * slot has none; 0 or -errno.
 */
int mrc_qp_state_read(int outer_fd, uint32_t slot, uint32_t idx, void *buf, size_t size);
int mrc_qp_state_write(int outer_fd, uint32_t slot, uint32_t idx, const void *buf,
		       size_t size);

/* A QP's entry in its state maps, from mrc_qps (qps_fd); 0 when unreadable. */
uint32_t mrc_qp_state_idx(int qps_fd, uint32_t slot);

/* An fd of the inner map outer_fd holds at slot, or -errno (-ENOENT: none). */
int mrc_qpmaps_open(int outer_fd, uint32_t slot);

/* The entry count / value size of an open map, 0 if unknown. */
uint32_t mrc_qpmaps_entries(int map_fd);
size_t mrc_qpmaps_value_size(int map_fd);

/*
 * Copy a QP's send log into log (record i at rec[i]): how many records it
 * has, or -errno (-ENOENT: the QP has no log).
 */
int mrc_qpmaps_read_log(int log_outer_fd, uint32_t slot, struct mrc_send_log *log);
/* The same from the log's own map (the QP's owner holds its fd). */
int mrc_qpmaps_read_log_fd(int log_fd, struct mrc_send_log *log);

/*
 * Copy a QP's per-EV counters, both blocks, into s (EV i at rx[i], tx[i];
 * the rest zero): how many EVs they cover, or -errno (-ENOENT: none).
 */
int mrc_qpmaps_read_ev_stats(int rx_outer_fd, int tx_outer_fd, uint32_t slot,
			     struct mrc_qp_ev_stats *s);

#endif /* MRC_COMMON_QPMAPS_H */
