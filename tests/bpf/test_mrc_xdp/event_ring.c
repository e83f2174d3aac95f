// SPDX-License-Identifier: GPL-2.0
/*
 * libmrc's reader of a context's event ring (user/common/event_ring.h)
 * against the kernel's ring: completions XDP writes for SACKs are read in
 * order; while the reader polls, consumer_pos lags, so a new record wakes
 * nobody (an edge-triggered epoll on the ring sees no wakeup); once it
 * prepares to sleep, the next record wakes it; the lag never passes a
 * quarter of the ring.
 */
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "common/event_ring.h"
#include "mrc_xdp_test.h"

static struct mrc_event got[512];
static int n_got, n_odd;

static void on_record(void *arg, const void *data, size_t size)
{
	(void)arg;
	if (size != sizeof(struct mrc_event)) {
		n_odd++;
		return;
	}
	if (n_got < (int)(sizeof(got) / sizeof(got[0])))
		memcpy(&got[n_got], data, sizeof(got[0]));
	n_got++;
}

/* An edge-triggered epoll on the ring: it reports wakeups, not data. */
static int wakeups_epoll(int fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET, .data.fd = fd };
	int ep = epoll_create1(EPOLL_CLOEXEC);

	if (ep >= 0 && epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		close(ep);
		ep = -1;
	}
	return ep;
}

/* Did a wakeup come (within ms)? */
static bool woken(int ep, int ms)
{
	struct epoll_event ev;

	return epoll_wait(ep, &ev, 1, ms) == 1;
}

/* WRITEs ending at TX_UNA + i for i < n, snd_nxt past them: their SACKs complete them. */
static void put_writes(__u32 n)
{
	get_tx(&tx);
	for (__u32 i = 0; i < n; i++)
		tx.wr[i].last_psn = TX_UNA + i;
	tx.wr_head = 0;
	tx.wr_tail = n;
	tx.snd_nxt = TX_UNA + n + 10;
	put_tx(&tx);
}

static void sack_through(__u32 psn)
{
	struct sack_spec s = sspec(psn, 0);
	struct run r;

	run_sack(&s, &r);
	expect_xdp_drop(&r);
}

TEST_CASE(test_ring_no_wakeup_while_polling, "mrc.event_ring_no_wakeup_while_polling")
{
	struct mrc_event_ring ring;
	int ep;

	setup_qp(1);
	put_writes(3);
	n_got = n_odd = 0;
	if (!ASSERT_EQ(mrc_event_ring_open(&ring, ring_fd, on_record, NULL), 0, "open the ring"))
		return;
	ep = wakeups_epoll(ring_fd);
	ASSERT_TRUE(ep >= 0, "an epoll on the ring");
	ASSERT_EQ(mrc_event_ring_prepare_sleep(&ring), 0, "nothing to read: sleep");

	/* Asleep: the first completion wakes the reader. */
	sack_through(TX_UNA);
	ASSERT_TRUE(woken(ep, 200), "the record after prepare_sleep woke the reader");
	ASSERT_EQ(mrc_event_ring_consume(&ring), 1, "one record read");
	ASSERT_TRUE(*ring.consumer_pos < *ring.producer_pos, "consumer_pos lags while polling");

	/* Polling: the next completion wakes nobody, and is read. */
	sack_through(TX_UNA + 1);
	ASSERT_TRUE(!woken(ep, 50), "no wakeup while the reader polls");
	ASSERT_EQ(mrc_event_ring_consume(&ring), 1, "and its record read");

	/* Before sleeping again: caught up; the next one wakes again. */
	ASSERT_EQ(mrc_event_ring_prepare_sleep(&ring), 0, "nothing new: sleep");
	ASSERT_EQ(*ring.consumer_pos, *ring.producer_pos, "consumer_pos caught up");
	sack_through(TX_UNA + 2);
	ASSERT_TRUE(woken(ep, 200), "woken after prepare_sleep");
	ASSERT_EQ(mrc_event_ring_prepare_sleep(&ring), 1,
		  "a record that came before the sleep: read, do not sleep");
	ASSERT_EQ(n_got, 3, "three completions");
	ASSERT_EQ(n_odd, 0, "no record of another size");
	for (int i = 0; i < 3 && i < n_got; i++)
		ASSERT_EQ(got[i].psn, TX_UNA + (__u32)i, "in order");
	if (ep >= 0)
		close(ep);
	mrc_event_ring_close(&ring);
}

/*
 * 200 completions into a 16 KiB ring read while polling: all of them, in
 * order, none lost to a full ring, and consumer_pos never more than a
 * quarter of the ring behind (the producer's room).
 */
TEST_CASE(test_ring_lag_bounded, "mrc.event_ring_lag_bounded")
{
	const __u32 n = 200, ring_bytes = 16384, zero = 0;
	struct mrc_event_ring ring;
	unsigned long worst = 0;
	int fd, ok = 1;

	setup_qp(1);
	put_writes(n);
	n_got = n_odd = 0;
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, ring_bytes, NULL);
	if (!ASSERT_TRUE(fd >= 0, "a small ring"))
		return;
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_events), &zero, &fd, BPF_ANY), 0,
		  "the context's ring");
	if (!ASSERT_EQ(mrc_event_ring_open(&ring, fd, on_record, NULL), 0, "open the ring")) {
		close(fd);
		return;
	}
	for (__u32 psn = TX_UNA + 9; psn < TX_UNA + n; psn += 10) {
		unsigned long lag;

		sack_through(psn);
		ok &= mrc_event_ring_consume(&ring) == 10;
		lag = *ring.producer_pos - *ring.consumer_pos;
		if (lag > worst)
			worst = lag;
	}
	ASSERT_TRUE(ok, "ten completions a SACK");
	ASSERT_EQ(n_got, (int)n, "every completion read");
	for (int i = 0; i < n_got && i < (int)n; i++)
		ok &= got[i].psn == TX_UNA + (__u32)i;
	ASSERT_TRUE(ok, "in order");
	ASSERT_TRUE(worst <= ring_bytes / 4, "consumer_pos at most a quarter behind");
	ASSERT_TRUE(ring.publishes >= 1, "published when the quarter filled");
	ASSERT_TRUE(worst > 0, "and lagging in between");
	ASSERT_EQ(read_drops().ring_full, 0, "the ring never full");
	mrc_event_ring_close(&ring);
	close(fd);
}
