/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The consumer of a BPF ring buffer (BPF_MAP_TYPE_RINGBUF) that XDP and
 * TC fill with a context's events, for a reader that polls while it has
 * work and sleeps (epoll) when it has none.
 *
 * Why not libbpf's ring_buffer: a BPF program's bpf_ringbuf_submit()
 * wakes the reader (an irq_work: a self-IPI, an APIC write that exits to
 * the hypervisor in a VM) whenever the reader has consumed everything
 * before the new record. A polling reader catches up every round, so
 * nearly every completion cost a wakeup nobody sleeps for (8% of the CPU
 * with 4 KiB WRITEs, docs/PERFORMANCE.md). Here the reader reads records
 * as they come but tells the kernel it consumed them (consumer_pos) only
 * before it sleeps, or when they fill a quarter of the ring: while it
 * polls, the kernel sees unread records and wakes nobody.
 */
#ifndef MRC_COMMON_EVENT_RING_H
#define MRC_COMMON_EVENT_RING_H

#include <stddef.h>
#include <stdint.h>

typedef void (*mrc_event_ring_fn)(void *arg, const void *data, size_t size);

struct mrc_event_ring {
	int fd;				/* the ring map (the caller's) */
	unsigned long *consumer_pos;	/* mapped read-write */
	const unsigned long *producer_pos;	/* mapped read-only, data behind */
	const uint8_t *data;		/* mapped twice in a row: records never wrap */
	size_t size;			/* data bytes (a power of two) */
	size_t page;
	unsigned long read_pos;		/* read so far; consumer_pos lags behind it */
	mrc_event_ring_fn fn;
	void *arg;
	uint64_t publishes;		/* consumer_pos caught up (each may cost a wakeup) */
};

/* Map the ring of fd; fn gets every record. 0 or -errno. */
int mrc_event_ring_open(struct mrc_event_ring *r, int fd, mrc_event_ring_fn fn, void *arg);
void mrc_event_ring_close(struct mrc_event_ring *r);

/*
 * Hand every complete record to fn, in order, without telling the kernel
 * (unless they reach a quarter of the ring). How many, or -errno (a
 * record that cannot be: the ring is corrupt).
 */
int mrc_event_ring_consume(struct mrc_event_ring *r);

/*
 * Before sleeping on the ring's fd: consumer_pos catches up, so that the
 * next record wakes the sleeper, and what came meanwhile is read. 0: sleep
 * (any later record wakes the fd); > 0: records were read, do not sleep.
 */
int mrc_event_ring_prepare_sleep(struct mrc_event_ring *r);

#endif /* MRC_COMMON_EVENT_RING_H */
