/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc layer "progress" (see LAYERS): the progress engine's set-up, as
 * context open and close need it (mrc_poll_cq is its API entry).
 */
#ifndef MRC_PROGRESS_H
#define MRC_PROGRESS_H

#include "base.h"

/* The idle spin's budget, adapted within these bounds (progress.c). */
#define MRC_SPIN_MIN_NS		1000ull
/*
 * 50 us: a stream whose sender slowed (waking a sleeping receiver costs it
 * an IPI) sends its bursts some 40 us apart; a budget below that leaves
 * the receiver sleeping for each one, and the pair stuck at half speed.
 */
#define MRC_SPIN_MAX_NS		50000ull

/*
 * Would a spin of up to MRC_SPIN_MAX_NS have caught what ended a sleep?
 * A packet that proved its QP's key tells when it arrived (arrival_ns,
 * the kernel's receive stamp, CLOCK_REALTIME like spell_start_real_ns,
 * when the idle spell began), so the wakeup's own delay does not count: in a VM it takes 10-20 us, and
 * judged by the wakeup, packets 10 us apart looked too late to spin for
 * and kept the budget at its floor. Without a packet (an event, a wait
 * fd: arrival_ns 0, or a packet stamped before the spell) the sleep's
 * length decides, against the ceiling too: against the budget it
 * followed, a floor of 1 us was never beaten by a wakeup, and a sender
 * waiting 40 us for its completions slept (and paid the wakeup) for
 * every batch.
 */
bool mrc_spin_would_have_paid(uint64_t spell_start_real_ns, uint64_t arrival_ns,
			      uint64_t slept_ns);

/* Read the context's event ring (ctx->ring_fd) with the engine's callback. */
int mrc_progress_open_ring(struct mrc_context *ctx);
/* What ends an idle sleep: the ring and the socket (ctx->sock). */
int mrc_progress_open_waits(struct mrc_context *ctx);
void mrc_progress_close(struct mrc_context *ctx);

#endif /* MRC_PROGRESS_H */
