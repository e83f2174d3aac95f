// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Layer "progress" (see LAYERS and progress.h): the one progress engine,
 * on top of send and receive. mrc_poll_cq() drives every QP of the
 * context: the event ring XDP writes (completions, losses, fatal NACKs,
 * handed to the send side), the socket (the receive side), SACKs owed,
 * timers and sends; and when nothing moves for a while, it sleeps.
 *
 * Nothing below calls up into here: what the lower layers need driven
 * (the ring read after a fatal NACK, waking on a window) happens here.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "cc.h"
#include "progress.h"
#include "qp_state.h"
#include "recv.h"
#include "send.h"

/* Longest sleep on a full window: the retransmission timer must still run. */
#define CC_MAX_SLEEP_NS		1000000ull
/*
 * A pace gap shorter than PACE_SPIN_NS is waited out by polling, not by
 * sleeping (a timer wakeup costs about that much).
 */
#define PACE_SPIN_NS		20000ull

/* ---- the event ring ---------------------------------------------------- */

/* The event-ring callback of libbpf's ring_buffer: events go to the sender. */
static int on_event(void *ctx, void *data, size_t size)
{
	if (size >= sizeof(struct mrc_event))
		mrc_tx_handle_event(ctx, data);
	return 0;
}

int mrc_progress_open_ring(struct mrc_context *ctx)
{
	ctx->ring = ring_buffer__new(ctx->ring_fd, on_event, ctx, NULL);
	if (!ctx->ring)
		return -errno;
	return 0;
}

/* The event ring and the socket: what can end a sleep on a full window. */
int mrc_progress_open_waits(struct mrc_context *ctx)
{
	struct epoll_event ev = { .events = EPOLLIN };

	ctx->idle_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ctx->idle_epfd < 0)
		return -errno;
	ev.data.fd = ring_buffer__epoll_fd(ctx->ring);
	if (epoll_ctl(ctx->idle_epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno;
	ev.data.fd = ctx->sock;
	if (epoll_ctl(ctx->idle_epfd, EPOLL_CTL_ADD, ctx->sock, &ev))
		return -errno;
	return 0;
}

void mrc_progress_close(struct mrc_context *ctx)
{
	if (ctx->idle_epfd >= 0)
		close(ctx->idle_epfd);
	ctx->idle_epfd = -1;
	if (ctx->ring)
		ring_buffer__free(ctx->ring);
	ctx->ring = NULL;
}

/* ---- sleeping when there is nothing to do ------------------------------ */

/* Does any QP of the context need the CPU now (sends, resends, SACKs)? */
static bool context_wants_cpu(struct mrc_context *ctx)
{
	for (int i = 0; i < MRC_MAX_QPS; i++) {
		struct mrc_qp *qp = ctx->qps[i];

		if (qp && (qp->sack_due || mrc_tx_wants_cpu(qp)))
			return true;
	}
	return false;
}

/*
 * Ask XDP to wake us on the next ack for every window with a QP that has
 * packets queued or out (an ack may open the MPR window or the cwnd, or
 * complete something), and find the nearest retransmission deadline.
 */
static uint64_t arm_wakeups(struct mrc_context *ctx, uint64_t now)
{
	uint64_t sleep_ns = CC_MAX_SLEEP_NS, deadline;

	for (int i = 0; i < MRC_MAX_QPS; i++) {
		struct mrc_qp *qp = ctx->qps[i];

		if (!qp)
			continue;
		if (mrc_cc_pace_deadline(qp, &deadline)) {
			if (deadline <= now + PACE_SPIN_NS)
				return 0;
			if (deadline - now < sleep_ns)
				sleep_ns = deadline - now;
		}
		if (!mrc_tx_deadline(qp, &deadline))
			continue;
		mrc_cc_arm_wakeup(qp);
		if (deadline <= now)
			return 0;
		if (deadline - now < sleep_ns)
			sleep_ns = deadline - now;
	}
	return sleep_ns;
}

/*
 * Nothing arrived for a while and no QP can do anything: sleep until XDP
 * says an ack came for a waiting window (a WINDOW event) or writes any
 * other event, a packet arrives for the socket, or, at the latest, the
 * nearest retransmission deadline or CC_MAX_SLEEP_NS. Busy polling on a
 * full window would take the CPU from the very softirq that carries the
 * acks (and, in a lab, from the other hosts). Returns true when it slept.
 */
static bool idle_wait(struct mrc_context *ctx)
{
	struct epoll_event ev[2];
	struct timespec ts;
	uint64_t sleep_ns;

	if (ctx->idle_epfd < 0 || context_wants_cpu(ctx))
		return false;
	sleep_ns = arm_wakeups(ctx, mrc_now_ns());
	/* An ack between our look and the flags woke nobody: look again. */
	if (!sleep_ns || context_wants_cpu(ctx)) {
		mrc_cc_disarm_wakeups(ctx);
		return false;
	}
	ts.tv_sec = 0;
	ts.tv_nsec = (long)sleep_ns;
	epoll_pwait2(ctx->idle_epfd, ev, 2, &ts, NULL);
	mrc_cc_disarm_wakeups(ctx);
	ctx->cc_sleeps++;
	return true;
}

/* ---- the poll loop ----------------------------------------------------- */

/* One QP's turn: SACKs it owes, then its sends and timers. */
static void drive_qp(struct mrc_context *ctx, struct mrc_qp *qp)
{
	mrc_rx_send_acks(qp);
	/*
	 * XDP marks the QP failed only when a fatal NACK's event was lost
	 * (ring full): read what the ring holds, then fail anyway.
	 */
	if (mrc_qp_failed_by_peer(qp)) {
		ring_buffer__consume(ctx->ring);
		if (qp->state == MRC_QP_RTS)
			mrc_qp_to_error(qp, MRC_WC_REM_OP_ERR, 0);
		return;
	}
	mrc_tx_progress(qp);
}

/* Drive every QP of the context: events, receive, send, timers. */
static void progress(struct mrc_context *ctx)
{
	bool busy = ring_buffer__consume(ctx->ring) > 0;

	busy |= mrc_rx_progress(ctx) > 0;
	for (int i = 0; i < MRC_MAX_QPS; i++)
		if (ctx->qps[i])
			drive_qp(ctx, ctx->qps[i]);
	ring_buffer__consume(ctx->ring);
	if (busy) {
		ctx->idle_polls = 0;
		return;
	}
	if (++ctx->idle_polls < 16)
		return;
	/*
	 * Nothing arrived for a while: sleep when no QP can do anything (XDP
	 * or the socket wakes us), otherwise let the kernel's softirq and
	 * NAPI threads run, they carry our packets (busy polling on few
	 * cores otherwise starves them).
	 */
	if (!idle_wait(ctx))
		sched_yield();
	ctx->idle_polls = 0;
}

int mrc_poll_cq(struct mrc_cq *cq, int n, struct mrc_wc *wc)
{
	int got = 0;

	if (!cq || n < 0 || (n && !wc))
		return mrc_err(EINVAL);
	if (cq->head == cq->tail)
		progress(cq->ctx);
	while (got < n && cq->head != cq->tail)
		wc[got++] = cq->ring[cq->head++ & (cq->cap - 1)];
	return got;
}
