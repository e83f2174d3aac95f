/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The one way to open the maps mrcd pins (libmrc, mrcd, mrcctl, the probe
 * engine and doctor all use it).
 *
 * Every pinned map is listed once, with the shape this build expects:
 * type, key and value size, entry count, flags. Opening a map checks its
 * shape, and opening a set checks mrc_cfg's ABI version word, so a program
 * built from another version of MRC-XDP than the mrcd that loaded the fast
 * path fails with a message that says so, instead of misreading memory
 * through an mmap of the wrong size.
 */
#ifndef MRC_COMMON_PINS_H
#define MRC_COMMON_PINS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Append-only: the order is the listing order of mrcctl doctor. */
enum mrc_pin {
	MRC_PIN_CFG,
	MRC_PIN_QP_OWNER,
	MRC_PIN_CTX_OWNER,
	MRC_PIN_PLANES,
	MRC_PIN_QPS,
	MRC_PIN_PEERS,
	MRC_PIN_QP_EVS,
	MRC_PIN_RX,
	MRC_PIN_TX,
	MRC_PIN_EV_STATS,
	MRC_PIN_SEND_LOG,
	MRC_PIN_REV_EVS,
	MRC_PIN_PLANE_OF,
	MRC_PIN_EV_PROFILES,
	MRC_PIN_CC_PROFILES,
	MRC_PIN_EVENTS,
	MRC_PIN_QP_STATS,
	MRC_PIN_DROPS,
	MRC_PIN_EV_EVENTS,
	MRC_PIN_CTL_STATS,
	MRC_PIN_CC,
	MRC_PIN_CC_OWNER,
	MRC_PIN_CC_VIEW,
	MRC_PIN_KNOWN_PEERS,
	MRC_PIN_PROBE_PORTS,
	MRC_PIN_EV_TX,
	MRC_PIN_XDP_NEXT,
	MRC_PIN__COUNT
};

/*
 * How a map's entry count follows the limits mrcd was started with
 * (--max-qps, --max-contexts): a set learns the limits from mrc_qps and
 * mrc_ctx_owner and checks every other map against them.
 */
enum mrc_pin_scale {
	MRC_PIN_FIXED,		/* max_entries as listed */
	MRC_PIN_PER_QP,		/* one entry per QP (or per window slot) */
	MRC_PIN_PER_QP_ADDR,	/* MRC_MAX_PEER_ADDRS entries per QP */
	MRC_PIN_PER_CTX,	/* one entry per context (process) */
};

/* What this build expects of one pinned map. */
struct mrc_pin_spec {
	const char *name;	/* file name under the pin folder */
	uint32_t type;		/* enum bpf_map_type */
	uint32_t key_size;
	uint32_t value_size;	/* per CPU for per-CPU maps */
	/* Bytes for a ring buffer; the build's default for scaled maps. */
	uint32_t max_entries;
	uint32_t flags;		/* map_flags that matter (BPF_F_MMAPABLE) */
	uint32_t scale;		/* enum mrc_pin_scale */
	/*
	 * A map of per-slot state maps (user/common/qpmaps.h): the value size
	 * of its BPF_F_MMAPABLE inner maps; 0 for every other map. Their
	 * flags: the QP state's are blocks of entries (BPF_F_INNER_MAP too),
	 * a window's view has one entry.
	 */
	uint32_t inner_value_size;
	uint32_t inner_flags;
};

/* The entry count a map of spec s has under the limits max_qps, max_ctx. */
uint32_t mrc_pin_entries(const struct mrc_pin_spec *s, uint32_t max_qps,
			 uint32_t max_ctx);

const struct mrc_pin_spec *mrc_pin_spec(enum mrc_pin id);

/* The map whose file name is name, or MRC_PIN__COUNT. */
enum mrc_pin mrc_pin_by_name(const char *name);

/* "DIR/NAME" into buf; -ENAMETOOLONG (with a message) if it does not fit. */
int mrc_pin_path(char *buf, size_t len, const char *dir, enum mrc_pin id,
		 char *err, size_t errlen);

/*
 * Check an open map against the spec: 0, or -EPROTO with a message naming
 * the field that differs and what to do. A scaled map's entry count is
 * only checked against the limits' range here (mrc_pins_open checks it
 * against the limits the set learned).
 */
int mrc_pin_check(int fd, enum mrc_pin id, const char *dir, char *err,
		  size_t errlen);

/*
 * Open one pinned map and check its shape: the fd, or -errno with a
 * message (a missing map says whether mrcd is running).
 */
int mrc_pin_open(const char *dir, enum mrc_pin id, char *err, size_t errlen);

/*
 * Check mrc_cfg's ABI version word against this build's: 0, -EPROTO on a
 * mismatch, -ENODATA when mrcd has not configured the fast path yet.
 */
int mrc_pins_check_abi(int cfg_fd, const char *dir, char *err, size_t errlen);

/*
 * A set of open maps: fd[id], -1 where not opened, and the limits mrcd
 * sized the maps for (learned from the maps themselves at open).
 */
struct mrc_pins {
	int fd[MRC_PIN__COUNT];
	uint32_t max_qps;	/* QP numbers are 1..max_qps */
	uint32_t max_ctx;	/* processes (contexts) at once */
};

void mrc_pins_init(struct mrc_pins *p);

/*
 * Open the n maps in which (every map when which is NULL), each checked,
 * and mrc_cfg's ABI version; learn max_qps and max_ctx from mrc_qps and
 * mrc_ctx_owner (always opened). On failure nothing stays open and the
 * message names the first map that failed.
 */
int mrc_pins_open(struct mrc_pins *p, const char *dir,
		  const enum mrc_pin *which, size_t n, char *err, size_t errlen);

/* Close every open map of the set (safe on an initialised set). */
void mrc_pins_close(struct mrc_pins *p);

#endif /* MRC_COMMON_PINS_H */
