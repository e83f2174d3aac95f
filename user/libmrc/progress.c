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
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <linux/sockios.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "cc.h"
#include "progress.h"
#include "qp_state.h"
#include "recv.h"
#include "send.h"
#include "worklist.h"

/* Longest sleep with packets queued or out: the retransmission timer must run. */
#define CC_MAX_SLEEP_NS		1000000ull
/*
 * Longest sleep with nothing queued or out anywhere: only a packet, an
 * event or a wait fd (mrc_add_wait_fd) can bring work, and each of them
 * ends the sleep; the bound only keeps mrc_poll_cq() returning now and then.
 */
#define IDLE_MAX_SLEEP_NS	20000000ull
/*
 * The spin before a sleep: a sleep and its wakeup cost microseconds of CPU
 * (15 us of the sleeper's own in this project's VM, and an IPI for the
 * waker) and as much latency, so a spell that is likely to end sooner is
 * spun through. The budget adapts between MRC_SPIN_MIN_NS and
 * MRC_SPIN_MAX_NS (progress.h): it doubles when the spin found work, or
 * when what ended a sleep came soon enough for a spin to have caught it
 * (mrc_spin_would_have_paid), and halves otherwise (the spin was wasted:
 * an idle QP soon spins a microsecond per wakeup).
 */
#define SPIN_START_NS		MRC_SPIN_MAX_NS
/*
 * A pace gap shorter than PACE_SPIN_NS is waited out by polling, not by
 * sleeping (a timer wakeup costs about that much).
 */
#define PACE_SPIN_NS		20000ull
/* Rounds in a row that read nothing before a sched_yield() (yield_if_deaf). */
#define SPIN_YIELD_EVERY	16u
/*
 * A context with at most VISIT_ALL_QPS QPs visits every one each round.
 * Above, a round visits the QPs on its lists (worklist.h): the ready ones,
 * the waiters of windows with room, and slices of two lists: OUT_SLICE of
 * the QPs with packets out (their share of the window, their timer, una
 * moving) and SWEEP_SLICE of all, which catches what nothing signals (a
 * SACK XDP owes after a duplicate, a fatal NACK whose event was lost,
 * completions XDP could not write).
 */
#define VISIT_ALL_QPS		16u
#define OUT_SLICE		128u
#define SWEEP_SLICE		16u

/* ---- the event ring ---------------------------------------------------- */

/*
 * A duplicate XDP dropped left a SACK owed (rx->sack_pending): the QP gets
 * a turn, whose mrc_rx_send_acks sends it. Without the wakeup only the
 * sweep would find it, a round or a sleep later, and the requester, whose
 * resend it was, times out again.
 */
static void on_sack_due(struct mrc_context *ctx, const struct mrc_event *evt)
{
	struct mrc_qp *qp = mrc_qp_by_num(ctx, evt->qpn);

	if (qp)
		mrc_qp_wake(qp);
}

/*
 * The event ring's callback (common/event_ring.h): events go to the
 * sender, but for SACK_DUE, the responder's.
 */
static void on_event(void *ctx, const void *data, size_t size)
{
	const struct mrc_event *evt = data;

	if (size < sizeof(struct mrc_event))
		return;
	if (evt->type == MRC_EVT_SACK_DUE)
		on_sack_due(ctx, evt);
	else
		mrc_tx_handle_event(ctx, evt);
}

int mrc_progress_open_ring(struct mrc_context *ctx)
{
	return mrc_event_ring_open(&ctx->ring, ctx->ring_fd, on_event, ctx);
}

/* The events XDP wrote since the last look: how many. */
static int read_events(struct mrc_context *ctx)
{
	int n = mrc_event_ring_consume(&ctx->ring);

	return n > 0 ? n : 0;
}

/*
 * The data socket's readiness the idle wait sleeps on: a packet in, and
 * while the socket is full, room to send (see ctx->sock_full). A UDP
 * socket has room nearly always, so EPOLLOUT is asked only then.
 */
static int watch_socket(struct mrc_context *ctx, bool room_too)
{
	struct epoll_event ev = {
		.events = EPOLLIN | (room_too ? EPOLLOUT : 0),
		.data.fd = ctx->sock,
	};

	return epoll_ctl(ctx->idle_epfd, EPOLL_CTL_MOD, ctx->sock, &ev);
}

/* The event ring and the socket: what can end an idle sleep. */
int mrc_progress_open_waits(struct mrc_context *ctx)
{
	struct epoll_event ev = { .events = EPOLLIN };

	ctx->spin_limit_ns = SPIN_START_NS;
	ctx->idle_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ctx->idle_epfd < 0)
		return -errno;
	ev.data.fd = ctx->ring_fd;
	if (epoll_ctl(ctx->idle_epfd, EPOLL_CTL_ADD, ev.data.fd, &ev))
		return -errno;
	ev.data.fd = ctx->sock;
	if (epoll_ctl(ctx->idle_epfd, EPOLL_CTL_ADD, ctx->sock, &ev))
		return -errno;
	return 0;
}

int mrc_add_wait_fd(struct mrc_context *ctx, int fd)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.fd = fd };

	if (!ctx || fd < 0 || ctx->idle_epfd < 0)
		return mrc_err(EINVAL);
	if (epoll_ctl(ctx->idle_epfd, EPOLL_CTL_ADD, fd, &ev))
		return mrc_err(errno);
	return 0;
}

void mrc_progress_close(struct mrc_context *ctx)
{
	if (ctx->idle_epfd >= 0)
		close(ctx->idle_epfd);
	ctx->idle_epfd = -1;
	mrc_event_ring_close(&ctx->ring);
}

/* ---- sleeping when there is nothing to do ------------------------------ */

static bool visits_all(const struct mrc_context *ctx)
{
	return ctx->n_own <= VISIT_ALL_QPS;
}

/* Has a window QPs waiting for it and room for the first of them? */
static bool window_open(struct mrc_cc_group *g)
{
	return g->waiters.head && mrc_cc_has_room(g->waiters.head);
}

/* Listed QPs: a ready one, or a window that would let a waiter send. */
static bool lists_want_cpu(struct mrc_context *ctx)
{
	if (ctx->ready.n)
		return true;
	for (uint32_t i = 0; i < ctx->n_cc; i++)
		if (window_open(ctx->cc[i]))
			return true;
	return false;
}

/* Does any QP of the context need the CPU now (sends, resends, SACKs)? */
static bool context_wants_cpu(struct mrc_context *ctx)
{
	/* Everything left to do is a send the full socket refuses. */
	if (ctx->sock_full)
		return false;
	if (!visits_all(ctx))
		return lists_want_cpu(ctx);
	for (uint32_t i = 0; i < ctx->n_own; i++) {
		struct mrc_qp *qp = ctx->own[i];

		/* sack_pending: XDP dropped a duplicate, a SACK is owed. */
		if ((qp->sack_due ||
			   __atomic_load_n(&qp->rx->sack_pending, __ATOMIC_RELAXED) ||
			   mrc_tx_wants_cpu(qp)))
			return true;
	}
	return false;
}

/*
 * The pace's deadline of a QP that waits for it, not for the responder's
 * window (an ack, which wakes the sleep by itself).
 */
static bool waits_for_pace(struct mrc_qp *qp, uint64_t *deadline_ns)
{
	return !mrc_tx_peer_window_full(qp) && mrc_cc_pace_deadline(qp, deadline_ns);
}

/*
 * Ask XDP to wake us on the next ack for every window with a QP that has
 * packets queued or out (an ack may open the MPR window or the cwnd, or
 * complete something), and find the nearest deadline: a retransmission
 * timer or a paced send (*paced says it is the pace's). 0: do not sleep.
 */
static uint64_t arm_wakeups(struct mrc_context *ctx, uint64_t now, bool *paced)
{
	uint64_t sleep_ns = IDLE_MAX_SLEEP_NS, deadline;
	/* Above VISIT_ALL_QPS: the QPs with packets out, and the waiters. */
	bool all = visits_all(ctx);
	uint32_t n = all ? ctx->n_own : ctx->n_out;

	*paced = false;
	for (uint32_t i = 0; i < ctx->n_cc && !all; i++) {
		struct mrc_qp *qp = ctx->cc[i]->waiters.head;

		if (!qp || !waits_for_pace(qp, &deadline))
			continue;
		if (deadline <= now + PACE_SPIN_NS)
			return 0;
		if (deadline - now < sleep_ns) {
			sleep_ns = deadline - now;
			*paced = true;
		}
	}
	for (uint32_t i = 0; i < n; i++) {
		struct mrc_qp *qp = all ? ctx->own[i] : ctx->out[i];

		if (waits_for_pace(qp, &deadline)) {
			if (deadline <= now + PACE_SPIN_NS)
				return 0;
			if (deadline - now < sleep_ns) {
				sleep_ns = deadline - now;
				*paced = true;
			}
		}
		if (!mrc_tx_deadline(qp, &deadline))
			continue;
		mrc_cc_arm_wakeup(qp, mrc_tx_wake_after(qp));
		if (deadline <= now)
			return 0;
		if (sleep_ns > CC_MAX_SLEEP_NS)
			sleep_ns = CC_MAX_SLEEP_NS;
		if (deadline - now < sleep_ns) {
			sleep_ns = deadline - now;
			*paced = false;
		}
	}
	return sleep_ns;
}

/* The spin budget after a spin that paid (or not): see SPIN_START_NS. */
static void adapt_spin(struct mrc_context *ctx, bool spin_paid)
{
	uint64_t limit = ctx->spin_limit_ns;

	if (spin_paid)
		limit = limit * 2 < MRC_SPIN_MAX_NS ? limit * 2 : MRC_SPIN_MAX_NS;
	else
		limit = limit / 2 > MRC_SPIN_MIN_NS ? limit / 2 : MRC_SPIN_MIN_NS;
	ctx->spin_limit_ns = limit;
}

/*
 * No QP can do anything: sleep until XDP says an ack came for a waiting
 * window (a WINDOW event) or writes any other event, a packet arrives for
 * the socket, a wait fd is readable, or, at the latest, the nearest
 * deadline (arm_wakeups). Busy polling on a full window would take the
 * CPU from the very softirq that carries the acks (and, in a lab, from the
 * other hosts). Returns true when it slept.
 */
static bool idle_wait(struct mrc_context *ctx, uint64_t now)
{
	struct epoll_event ev[4];
	struct timespec ts;
	uint64_t sleep_ns, slept;
	bool paced, full;
	int n;

	if (ctx->idle_epfd < 0 || context_wants_cpu(ctx))
		return false;
	sleep_ns = arm_wakeups(ctx, now, &paced);
	/*
	 * An ack between our look and the flags woke nobody: look again. The
	 * ring's records from now on wake us (read, they are work: no sleep).
	 */
	if (!sleep_ns || mrc_event_ring_prepare_sleep(&ctx->ring) > 0 ||
	    context_wants_cpu(ctx)) {
		mrc_cc_disarm_wakeups(ctx);
		return false;
	}
	ctx->spell_start_real_ns = mrc_realtime_ns() - (now - ctx->idle_since_ns);
	ts.tv_sec = (time_t)(sleep_ns / 1000000000ull);
	ts.tv_nsec = (long)(sleep_ns % 1000000000ull);
	full = ctx->sock_full && !watch_socket(ctx, true);
	n = epoll_pwait2(ctx->idle_epfd, ev, 4, &ts, NULL);
	mrc_cc_disarm_wakeups(ctx);
	if (full) {
		/* Woken or not, the next round tries the socket again. */
		watch_socket(ctx, false);
		ctx->sock_full = false;
		ctx->wait.socket_full_sleeps++;
	}
	slept = mrc_now_ns() - now;
	ctx->wait.sleeps++;
	ctx->wait.sleep_ns += slept;
	if (n > 0) {
		ctx->wait.woken++;
		ctx->wake_slept_ns = slept ? slept : 1;	/* judge_wake() */
	} else {
		adapt_spin(ctx, false);
	}
	if (paced)
		ctx->wait.pace_sleeps++;
	return true;
}

bool mrc_spin_would_have_paid(uint64_t spell_start_real_ns, uint64_t arrival_ns,
			      uint64_t slept_ns)
{
	if (arrival_ns && arrival_ns >= spell_start_real_ns)
		return arrival_ns - spell_start_real_ns < MRC_SPIN_MAX_NS;
	return slept_ns < MRC_SPIN_MAX_NS;
}

/*
 * After a sleep that something ended: the budget adapts to it, judged by
 * the round's first packet's stamp, or by the sleep's length without one.
 */
static void judge_wake(struct mrc_context *ctx)
{
	uint64_t slept = ctx->wake_slept_ns;

	if (!slept)
		return;
	ctx->wake_slept_ns = 0;
	adapt_spin(ctx, mrc_spin_would_have_paid(ctx->spell_start_real_ns,
						 ctx->rx_first_arrival_ns, slept));
}

/*
 * A round did work: the idle spell (if any) is over. Work found while
 * spinning (not just after a wakeup) means the spin paid.
 */
static void end_idle_spell(struct mrc_context *ctx)
{
	uint64_t now;

	if (!ctx->idle_since_ns)
		return;
	now = mrc_now_ns();
	ctx->wait.spin_ns += now - ctx->spin_from_ns;
	if (!ctx->woke_from_sleep)
		adapt_spin(ctx, true);
	ctx->idle_since_ns = 0;
}

/*
 * A round found nothing to do: spin on while the spell is younger than
 * the budget, then sleep if no QP can do anything (else yield).
 */
static void idle_round(struct mrc_context *ctx)
{
	uint64_t now = mrc_now_ns();

	ctx->wait.spins++;
	if (!ctx->idle_since_ns) {
		ctx->idle_since_ns = ctx->spin_from_ns = now;
		ctx->woke_from_sleep = false;
	}
	if (now - ctx->spin_from_ns < ctx->spin_limit_ns)
		return;
	ctx->wait.spin_ns += now - ctx->spin_from_ns;
	if (idle_wait(ctx, now)) {
		ctx->woke_from_sleep = true;
	} else {
		sched_yield();
		ctx->wait.yields++;
	}
	ctx->spin_from_ns = mrc_now_ns();
}

/* ---- the poll loop ----------------------------------------------------- */

/* What a QP put on the wire so far: a round that grew it did work. */
static uint64_t qp_output(const struct mrc_qp *qp)
{
	return qp->counters.tx_packets + qp->counters.sacks_sent +
	       qp->counters.nacks_sent;
}

/* One QP's turn: SACKs it owes, then its sends and timers. */
static void drive_qp(struct mrc_context *ctx, struct mrc_qp *qp)
{
	mrc_rx_send_acks(qp);
	/*
	 * XDP marks the QP failed only when a fatal NACK's event was lost
	 * (ring full): read what the ring holds, then fail anyway.
	 */
	if (mrc_qp_failed_by_peer(qp)) {
		read_events(ctx);
		if (qp->state == MRC_QP_RTS)
			mrc_qp_to_error(qp, MRC_WC_REM_OP_ERR, 0);
		return;
	}
	mrc_tx_progress(qp);
}

/*
 * Every SPIN_YIELD_EVERY rounds in a row that read nothing (no event, no
 * packet), sending or not, let the kernel's softirq and NAPI threads run:
 * they carry our own packets and acks, and on few cores a sender that
 * never yields starves them (acks late, RTT samples and timers off).
 */
static void yield_if_deaf(struct mrc_context *ctx, bool input)
{
	if (input) {
		ctx->deaf_rounds = 0;
		return;
	}
	if (++ctx->deaf_rounds % SPIN_YIELD_EVERY)
		return;
	sched_yield();
	ctx->wait.yields++;
}

/* One QP's turn; true when it put something on the wire. */
static bool take_turn(struct mrc_context *ctx, struct mrc_qp *qp)
{
	uint64_t before = qp_output(qp);

	drive_qp(ctx, qp);
	return qp_output(qp) != before;
}

/* Every QP, in turn (contexts of at most VISIT_ALL_QPS QPs). */
static bool drive_all(struct mrc_context *ctx)
{
	bool busy = false;

	/* The lists are not used here: empty the ready one. */
	while (mrc_ready_pop(ctx))
		;
	for (uint32_t i = 0; i < ctx->n_own; i++)
		busy |= take_turn(ctx, ctx->own[i]);
	return busy;
}

/*
 * After its turn, where the QP waits for the next one: the ready list
 * (the CPU), its window's waiters, or an ack (una moving, which the slice
 * of the QPs with packets out notices, as it does their timers).
 */
static void file_qp(struct mrc_qp *qp)
{
	if (qp->state != MRC_QP_RTS)
		return;
	if (__atomic_load_n(&qp->tx->snd_una, __ATOMIC_ACQUIRE) != qp->snd_nxt &&
	    mrc_out_add(qp))
		mrc_qp_wake(qp);	/* no memory for the list: poll it */
	switch (mrc_tx_need(qp)) {
	case MRC_TX_NOW:
		mrc_qp_wake(qp);
		break;
	case MRC_TX_WINDOW:
		if (qp->cc)
			mrc_wait_push(qp->cc, qp);
		break;
	default:
		break;
	}
}

/*
 * A slice of the QPs with packets out: bring their share of the window up
 * to date (XDP acks without telling us), and give a turn to those whose
 * una moved (the responder's window opened, the timer restarts) or whose
 * timer is due. A QP with nothing out, seen since, leaves the list.
 */
static void scan_out(struct mrc_context *ctx, uint64_t now)
{
	uint32_t seen = 0;

	while (seen < OUT_SLICE && seen < ctx->n_out) {
		struct mrc_qp *qp;
		uint32_t una;
		uint64_t deadline;

		if (ctx->out_cursor >= ctx->n_out)
			ctx->out_cursor = 0;
		qp = ctx->out[ctx->out_cursor];
		seen++;
		mrc_cc_refresh(qp);
		una = __atomic_load_n(&qp->tx->snd_una, __ATOMIC_ACQUIRE);
		if (qp->state != MRC_QP_RTS ||
		    (una == qp->snd_nxt && una == qp->una_seen)) {
			mrc_out_remove(qp);	/* the last takes its index */
			continue;
		}
		if (una != qp->una_seen ||
		    (mrc_tx_deadline(qp, &deadline) && deadline <= now))
			mrc_qp_wake(qp);
		ctx->out_cursor++;
	}
}

/* A slice of every QP gets a turn (see SWEEP_SLICE). */
static void sweep(struct mrc_context *ctx)
{
	for (uint32_t i = 0; i < SWEEP_SLICE && i < ctx->n_own; i++) {
		if (ctx->sweep_cursor >= ctx->n_own)
			ctx->sweep_cursor = 0;
		mrc_qp_wake(ctx->own[ctx->sweep_cursor++]);
	}
}

/* Turns for the waiters of each window, while it has room. */
static bool serve_waiters(struct mrc_context *ctx)
{
	bool busy = false;

	for (uint32_t i = 0; i < ctx->n_cc; i++) {
		struct mrc_cc_group *g = ctx->cc[i];
		uint32_t left = g->waiters.n;

		while (left-- && window_open(g)) {
			struct mrc_qp *qp = mrc_wait_pop(g);

			busy |= take_turn(ctx, qp);
			file_qp(qp);
			if (qp->wait_link.on)
				break;	/* held back again: the window is full */
		}
	}
	return busy;
}

/* The QPs on the lists (contexts of more than VISIT_ALL_QPS QPs). */
static bool drive_listed(struct mrc_context *ctx)
{
	bool busy = false;
	uint32_t n;

	scan_out(ctx, mrc_now_ns());
	sweep(ctx);
	/* Those the round found ready; a QP filed ready again waits a round. */
	for (n = ctx->ready.n; n; n--) {
		struct mrc_qp *qp = mrc_ready_pop(ctx);

		if (!qp)
			break;
		busy |= take_turn(ctx, qp);
		file_qp(qp);
	}
	return serve_waiters(ctx) || busy;
}

/*
 * A full data socket (ctx->sock_full) takes sends again once an eighth of
 * its buffer is free: asked once a round while it is full, never
 * otherwise. (The kernel's EPOLLOUT waits for half, which left the link
 * idle at times: see docs/PERFORMANCE.md.)
 */
static void check_socket_room(struct mrc_context *ctx)
{
	int queued = 0, sndbuf = 0;
	socklen_t len = sizeof(sndbuf);

	if (!ctx->sock_full)
		return;
	if (ioctl(ctx->sock, SIOCOUTQ, &queued) ||
	    getsockopt(ctx->sock, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) ||
	    queued <= sndbuf - sndbuf / 8)
		ctx->sock_full = false;
}

/* Drive the QPs of the context: events, receive, send, timers. */
static void progress(struct mrc_context *ctx)
{
	bool input = read_events(ctx) > 0, busy;

	check_socket_room(ctx);

	input |= mrc_rx_progress(ctx) > 0;
	judge_wake(ctx);
	/* The receive batch's SACKs go now, not after every QP's sends. */
	mrc_rx_flush_acks(ctx);
	busy = input;
	busy |= visits_all(ctx) ? drive_all(ctx) : drive_listed(ctx);
	/* The round's batches: their SACKs count as the round's work. */
	mrc_tx_flush(ctx);
	if (mrc_rx_flush_acks(ctx) > 0)
		busy = true;
	busy |= read_events(ctx) > 0;
	yield_if_deaf(ctx, input);
	if (busy)
		end_idle_spell(ctx);
	else
		idle_round(ctx);
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
