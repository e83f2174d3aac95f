/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc layer "base" (see LAYERS): what every other layer builds on and
 * nothing in it calls up. The clock, the logger, the error convention of
 * the API, QP number <-> slot, claiming keys of the owner maps, access to
 * the mmapped per-QP state and the PSN bitmaps shared with XDP.
 */
#ifndef MRC_BASE_H
#define MRC_BASE_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "mrc/abi.h"
#include "mrc/mrc.h"
#include "objects.h"
#include "common/claim.h"

/* Return -err and set errno, the convention of every API function. */
static inline int mrc_err(int err)
{
	errno = err;
	return -err;
}

static inline void *mrc_err_ptr(int err)
{
	errno = err;
	return NULL;
}

/* ---- clock ------------------------------------------------------------- */

static inline uint64_t mrc_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}

/* The one monotonic clock of libmrc (timers, pacing, send timestamps). */
uint64_t mrc_now_ns(void);

/*
 * CLOCK_REALTIME in ns, 0 when unreadable: only to compare with the
 * kernel's receive timestamps (SO_TIMESTAMPNS), which use that clock.
 */
uint64_t mrc_realtime_ns(void);

/* ---- logger ------------------------------------------------------------ */

/*
 * Every message libmrc prints goes through here: to the application's
 * mrc_log_fn when it set one, else to stderr as "libmrc: MSG\n".
 */
__attribute__((format(printf, 2, 3)))
void mrc_log(int level, const char *fmt, ...);

/*
 * QP numbers and slots: mrc_qpn_to_slot() / mrc_slot_to_qpn() in
 * include/mrc/abi.h, the one conversion BPF and userspace share.
 */

/* ---- owner maps and mmapped state -------------------------------------- */

/* getrandom(2), a failure logged; claiming owner keys: common/claim.h. */
int mrc_random_bytes(void *buf, size_t len);
int mrc_list_reserve(void ***list, uint32_t n, uint32_t *cap);
/* A QP into (out of) the context's lists: by slot, and dense (ctx->own). */
int mrc_own_add(struct mrc_context *ctx, struct mrc_qp *qp);
void mrc_own_remove(struct mrc_context *ctx, struct mrc_qp *qp);
/* Map / unmap entry idx of a state map of value_size bytes (an fd). */
void *mrc_map_state(int fd, uint32_t idx, size_t value_size);
void mrc_unmap_state(void *p, size_t value_size);

/*
 * A send on the data socket failed with `err`: a full send buffer (EAGAIN,
 * ENOBUFS) marks the socket full until it has room again (ctx->sock_full,
 * progress.c). Other errors (a route gone) say nothing about room.
 */
static inline void mrc_note_send_refused(struct mrc_context *ctx, int err)
{
	if (err == EAGAIN || err == EWOULDBLOCK || err == ENOBUFS)
		ctx->sock_full = true;
}

/* The open pinned map `id` of the context (struct mrc_pins). */
static inline int mrc_map_fd(const struct mrc_context *ctx, enum mrc_pin id)
{
	return ctx->pins.fd[id];
}

/* ---- PSN bitmaps (rings of MRC_WINDOW_MAX bits, shared with XDP) ------- */

static inline uint32_t mrc_bitmap_idx(uint32_t psn)
{
	return psn % MRC_WINDOW_MAX;
}

static inline bool mrc_bit_test(const __u64 *bm, uint32_t psn)
{
	uint32_t i = mrc_bitmap_idx(psn);

	return (__atomic_load_n(&bm[i / 64], __ATOMIC_ACQUIRE) >> (i % 64)) & 1;
}

static inline void mrc_bit_set(__u64 *bm, uint32_t psn)
{
	uint32_t i = mrc_bitmap_idx(psn);

	__atomic_fetch_or(&bm[i / 64], 1ULL << (i % 64), __ATOMIC_RELEASE);
}

static inline void mrc_bit_clear(__u64 *bm, uint32_t psn)
{
	uint32_t i = mrc_bitmap_idx(psn);

	__atomic_fetch_and(&bm[i / 64], ~(1ULL << (i % 64)), __ATOMIC_RELEASE);
}

#endif /* MRC_BASE_H */
