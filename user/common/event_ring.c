// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * A BPF ring buffer's consumer that lags on purpose while its reader
 * polls (see event_ring.h). The layout is the kernel's
 * (kernel/bpf/ringbuf.c): a consumer page the reader writes, a producer
 * page, then the data pages mapped twice in a row; each record an 8-byte
 * header (length, busy and discard bits) and the sample, 8-byte aligned.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "common/event_ring.h"

int mrc_event_ring_open(struct mrc_event_ring *r, int fd, mrc_event_ring_fn fn, void *arg)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *c, *p;

	memset(r, 0, sizeof(*r));
	r->fd = -1;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (info.type != BPF_MAP_TYPE_RINGBUF || !info.max_entries ||
	    info.max_entries & (info.max_entries - 1))
		return -EINVAL;
	r->page = page > 0 ? (size_t)page : 4096;
	r->size = info.max_entries;
	c = mmap(NULL, r->page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		return -errno;
	p = mmap(NULL, r->page + 2 * r->size, PROT_READ, MAP_SHARED, fd, (off_t)r->page);
	if (p == MAP_FAILED) {
		int err = -errno;

		munmap(c, r->page);
		return err;
	}
	r->fd = fd;
	r->consumer_pos = c;
	r->producer_pos = p;
	r->data = (const uint8_t *)p + r->page;
	r->read_pos = __atomic_load_n(r->consumer_pos, __ATOMIC_ACQUIRE);
	r->fn = fn;
	r->arg = arg;
	return 0;
}

void mrc_event_ring_close(struct mrc_event_ring *r)
{
	if (r->consumer_pos)
		munmap(r->consumer_pos, r->page);
	if (r->producer_pos)
		munmap((void *)r->producer_pos, r->page + 2 * r->size);
	memset(r, 0, sizeof(*r));
	r->fd = -1;
}

/* A record's room: its header and sample, 8-byte aligned. */
static unsigned long record_room(uint32_t len)
{
	len &= ~(BPF_RINGBUF_BUSY_BIT | BPF_RINGBUF_DISCARD_BIT);
	return ((unsigned long)len + BPF_RINGBUF_HDR_SZ + 7) & ~7ul;
}

/* Tell the kernel everything read is consumed. */
static void publish(struct mrc_event_ring *r)
{
	if (__atomic_load_n(r->consumer_pos, __ATOMIC_RELAXED) == r->read_pos)
		return;
	__atomic_store_n(r->consumer_pos, r->read_pos, __ATOMIC_RELEASE);
	r->publishes++;
}

int mrc_event_ring_consume(struct mrc_event_ring *r)
{
	unsigned long prod = __atomic_load_n(r->producer_pos, __ATOMIC_ACQUIRE);
	int n = 0;

	while (r->read_pos < prod) {
		const uint32_t *hdr = (const uint32_t *)(r->data + (r->read_pos & (r->size - 1)));
		uint32_t len = __atomic_load_n(hdr, __ATOMIC_ACQUIRE);
		unsigned long room = record_room(len);

		if (len & BPF_RINGBUF_BUSY_BIT)
			break;		/* reserved, not yet committed */
		if (room > r->size || r->read_pos + room > prod)
			return -EPROTO;
		if (!(len & BPF_RINGBUF_DISCARD_BIT)) {
			r->fn(r->arg, (const uint8_t *)hdr + BPF_RINGBUF_HDR_SZ, len);
			n++;
		}
		r->read_pos += room;
	}
	/* Unread-to-the-kernel records take room from the producer: bounded. */
	if (r->read_pos - __atomic_load_n(r->consumer_pos, __ATOMIC_RELAXED) > r->size / 4)
		publish(r);
	return n;
}

int mrc_event_ring_prepare_sleep(struct mrc_event_ring *r)
{
	publish(r);
	/*
	 * The kernel commits a record, then reads consumer_pos to decide on
	 * the wakeup; we wrote consumer_pos, now read producer_pos. With a
	 * full barrier between, one of the two sees the other: a record the
	 * kernel did not wake us for is one we read here.
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return mrc_event_ring_consume(r);
}
