// SPDX-License-Identifier: GPL-2.0
/*
 * The fixture of the BPF unit tests of bpf/mrc.bpf.c and of
 * build/mrc-bpf-cost: see tests/include/mrc_fixture.h.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/map_plan.h"
#include "mrc_fixture.h"
#include "pindir.h"

struct mrc *skel;
static char pin_dir[64];
__u32 fx_max_qps = MRC_MAX_QPS, fx_max_ctx = MRC_MAX_CTX;
int ncpus;
unsigned int lo_ifindex = 1;
int ring_fd = -1;	/* the context-0 event ring (tests move it) */
static struct ring_buffer *rb;

const __u8 local4[4] = { 198, 18, 1, 1 };
const __u8 peer4[4] = { 198, 18, 1, 2 };
const __u8 local6[16] = { 0xfd, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
const __u8 peer6[16] = { 0xfd, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2 };

/* ---- packet builders ---------------------------------------------------- */

struct hdrs rx4(void)
{
	struct hdrs h = { .src = peer4, .dst = local4, .sport = PEER_SPORT,
			  .dport = MRC_UDP_PORT_DEFAULT };
	return h;
}

struct hdrs rx6(void)
{
	struct hdrs h = { .ipv6 = 1, .src = peer6, .dst = local6, .sport = PEER_SPORT,
			  .dport = MRC_UDP_PORT_DEFAULT, .flow = 0x12345 };
	return h;
}

struct hdrs tx4(void)
{
	struct hdrs h = { .src = local4, .dst = peer4, .sport = LOCAL_SPORT,
			  .dport = MRC_UDP_PORT_DEFAULT };
	return h;
}

struct hdrs tx6(void)
{
	/* High flow-label nibble 0x5: STEV must keep it. */
	struct hdrs h = { .ipv6 = 1, .src = local6, .dst = peer6, .sport = LOCAL_SPORT,
			  .dport = MRC_UDP_PORT_DEFAULT, .flow = 0x57777 };
	return h;
}

size_t build_eth(__u8 *p, __u16 proto)
{
	static const __u8 mac_dst[6] = { 0x02, 0, 0, 0, 0, 0x02 };
	static const __u8 mac_src[6] = { 0x02, 0, 0, 0, 0, 0x01 };

	memcpy(p, mac_dst, 6);
	memcpy(p + 6, mac_src, 6);
	put16(p + 12, proto);
	return ETH_LEN;
}

/* A complete frame with correct IPv4 and (unless zero_csum) UDP checksums. */
size_t build_udp(const struct hdrs *h, const __u8 *payload, size_t plen, __u8 *buf)
{
	size_t l3 = build_eth(buf, h->ipv6 ? 0x86DD : 0x0800);
	size_t l4 = l3 + (h->ipv6 ? IP6_LEN : IP4_LEN);
	size_t n = l4 + UDP_LEN + plen;
	__u8 *ip = buf + l3, *udp = buf + l4;

	if (h->ipv6) {
		memset(ip, 0, IP6_LEN);
		put32(ip, 6u << 28 | (h->flow & 0xFFFFF));
		put16(ip + 4, (__u16)(n - l4));
		ip[6] = 17;
		ip[7] = 64;
		memcpy(ip + 8, h->src, 16);
		memcpy(ip + 24, h->dst, 16);
	} else {
		memset(ip, 0, IP4_LEN);
		ip[0] = 0x45;
		put16(ip + 2, (__u16)(n - l3));
		put16(ip + 4, 0x1234);
		put16(ip + 6, 0x4000);		/* DF */
		ip[8] = 64;
		ip[9] = 17;
		memcpy(ip + 12, h->src, 4);
		memcpy(ip + 16, h->dst, 4);
		ipv4_csum_fill(buf);
	}
	put16(udp, h->sport);
	put16(udp + 2, h->dport);
	put16(udp + 4, (__u16)(n - l4));
	put16(udp + 6, 0);
	memcpy(udp + UDP_LEN, payload, plen);
	if (!h->zero_csum)
		udp_csum_fill(buf);
	return n;
}

size_t put_bth_key(__u8 *m, __u8 opcode, __u32 key, __u32 dqpn, __u8 flags,
		   __u32 psn)
{
	m[0] = opcode;
	put32(m + 1, key);				/* bytes 1-4 */
	put16(m + 5, (__u16)(dqpn >> 8));		/* dqpn: low 24 bits */
	m[7] = (__u8)dqpn;
	put32(m + 8, (__u32)flags << 24 | (psn & MRC_PSN_MASK));
	return BTH_LEN;
}

size_t put_bth(__u8 *m, __u8 opcode, __u32 dqpn, __u8 flags, __u32 psn)
{
	return put_bth_key(m, opcode, QP_KEY, dqpn, flags, psn);
}

struct data_spec dspec(__u8 opcode, __u32 psn, __u32 payload)
{
	struct data_spec d = { .opcode = opcode, .dqpn = QPN, .key = QP_KEY, .psn = psn,
			       .msg_len = 65536, .payload = payload };
	return d;
}

size_t build_data(__u8 *m, const struct data_spec *d)
{
	size_t n = put_bth_key(m, d->opcode, d->key, d->dqpn, d->flags, d->psn);
	__u32 i;

	put16(m + n, 7);				/* wimm_msn */
	put16(m + n + 2, 9);				/* msn */
	n += 4;
	if (d->flags & MRC_BTH_F_TS) {
		put16(m + n, 0x4321);
		put16(m + n + 2, 0);
		n += 4;
	}
	put32(m + n, 0x00007f00);			/* vaddr */
	put32(m + n + 4, 0x12340000);
	put32(m + n + 8, 0xcafe);			/* rkey */
	put32(m + n + 12, d->msg_len);
	n += 16;
	if (mrc_opcode_has_imm(d->opcode)) {
		put32(m + n, 0xfeedf00d);
		n += 4;
	}
	for (i = 0; i < d->payload; i++)
		m[n + i] = (__u8)(i * 7 + 3);
	return n + d->payload;
}

size_t data_frame(__u8 *buf, const struct hdrs *h, const struct data_spec *d)
{
	__u8 m[PKT_MAX];
	size_t mlen = build_data(m, d);

	return build_udp(h, m, mlen, buf);
}

struct sack_spec sspec(__u32 cack, __u64 bitmap)
{
	struct sack_spec s = { .dqpn = QPN, .key = QP_KEY, .psn = cack + 1, .cack = cack,
			       .ev = ACK_EV, .bitmap = bitmap };
	return s;
}

size_t build_sack(__u8 *m, const struct sack_spec *s)
{
	size_t n = put_bth_key(m, MRC_OP_SACK, s->key, s->dqpn, 0, s->psn);

	memset(m + n, 0, sizeof(struct mrc_sackh));
	put32(m + n, s->cack & MRC_PSN_MASK);
	put32(m + n + 4, s->ev);
	put16(m + n + 8, s->off);
	m[n + 10] = s->m;
	put32(m + n + 12, (__u32)(s->bitmap >> 32));
	put32(m + n + 16, (__u32)s->bitmap);
	put16(m + n + 20, 0x4321);			/* ts_echo */
	put32(m + n + 24, 77);				/* rcv_bytes */
	put16(m + n + offsetof(struct mrc_sackh, hold), s->hold);
	return n + sizeof(struct mrc_sackh);
}

size_t sack_frame(__u8 *buf, const struct hdrs *h, const struct sack_spec *s)
{
	__u8 m[128];
	size_t mlen = build_sack(m, s);

	return build_udp(h, m, mlen, buf);
}

/* ---- program runs -------------------------------------------------------- */

void run_prog(int prog_fd, const void *pkt, size_t len, __u32 repeat, struct run *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = pkt, .data_size_in = (__u32)len,
		    .data_out = r->out, .data_size_out = sizeof(r->out),
		    .repeat = repeat);

	memset(r->out, 0, sizeof(r->out));
	r->err = bpf_prog_test_run_opts(prog_fd, &opts);
	r->ret = opts.retval;
	r->out_len = opts.data_size_out;
	r->duration = opts.duration;
}

void run_xdp(const void *pkt, size_t len, struct run *r)
{
	run_prog(bpf_program__fd(skel->progs.mrc_xdp_rx), pkt, len, 1, r);
}

void run_tc(const void *pkt, size_t len, struct run *r)
{
	run_prog(bpf_program__fd(skel->progs.mrc_tc_tx), pkt, len, 1, r);
}

/* ---- maps ------------------------------------------------------------------ */

void mapped4(__u8 out[16], const __u8 a[4])
{
	memset(out, 0, 16);
	out[10] = 0xff;
	out[11] = 0xff;
	memcpy(out + 12, a, 4);
}

/* Read or write the test QP's slot of a per-QP map. */
void read_slot(int map_fd, void *value, const char *what)
{
	__u32 k = SLOT;

	ASSERT_EQ(bpf_map_lookup_elem(map_fd, &k, value), 0, what);
}

void write_slot(int map_fd, const void *value, const char *what)
{
	__u32 k = SLOT;

	ASSERT_EQ(bpf_map_update_elem(map_fd, &k, value, BPF_ANY), 0, what);
}

void get_qp(struct mrc_qp_info *q) { read_slot(MFD(mrc_qps), q, "read mrc_qps"); }

/* The QP's entries in the fixture's state blocks (create_qp_state). */
struct mrc_state_blocks fx_blocks;
static __u32 fx_state_idx[MRC_QPS_LIMIT];

__u32 fx_idx_of(__u32 slot)
{
	return slot < MRC_QPS_LIMIT ? fx_state_idx[slot] : 0;
}

/* The test QP's entry, whatever the test built: its state is there. */
void put_qp(const struct mrc_qp_info *q)
{
	struct mrc_qp_info with_entry = *q;

	with_entry.state_idx = fx_idx_of(SLOT);
	write_slot(MFD(mrc_qps), &with_entry, "write mrc_qps");
}

/*
 * The slot's entry of a state map (mrc_rx, mrc_tx, mrc_qp_evs: the
 * QP's entry, fx_idx_of; mrc_cc_view: its one entry; user/common/
 * qpmaps.h); a write creates the map when the slot has none.
 */
static __u32 entry_of(int outer_fd, __u32 slot)
{
	return outer_fd == MFD(mrc_cc_view) ? 0 : fx_idx_of(slot);
}

void get_state_of(int outer_fd, __u32 slot, void *value, size_t size, const char *what)
{
	ASSERT_EQ(mrc_qp_state_read(outer_fd, slot, entry_of(outer_fd, slot), value, size),
		  0, what);
}

void put_state_of(int outer_fd, __u32 slot, const void *value, size_t size,
		  const char *what)
{
	ASSERT_EQ(mrc_qp_state_write(outer_fd, slot, entry_of(outer_fd, slot), value,
				     size), 0, what);
}

void get_rx(struct mrc_rx_state *rx)
{
	get_state_of(MFD(mrc_rx), SLOT, rx, sizeof(*rx), "read mrc_rx");
}

void put_rx(const struct mrc_rx_state *rx)
{
	put_state_of(MFD(mrc_rx), SLOT, rx, sizeof(*rx), "write mrc_rx");
}

/* mrc_tx_state is 8.7 KiB: callers keep it static. */
void get_tx(struct mrc_tx_state *tx)
{
	get_state_of(MFD(mrc_tx), SLOT, tx, sizeof(*tx), "read mrc_tx");
}

void put_tx(const struct mrc_tx_state *tx)
{
	put_state_of(MFD(mrc_tx), SLOT, tx, sizeof(*tx), "write mrc_tx");
}

void get_evs(struct mrc_qp_evs *e)
{
	get_state_of(MFD(mrc_qp_evs), SLOT, e, sizeof(*e), "read mrc_qp_evs");
}

void put_evs(const struct mrc_qp_evs *e)
{
	put_state_of(MFD(mrc_qp_evs), SLOT, e, sizeof(*e), "write mrc_qp_evs");
}

/* The QP's send log and per-EV counters gone, its state maps kept. */
void remove_log_maps(__u32 slot)
{
	bpf_map_delete_elem(fx_qpmaps.log_fd, &slot);
	bpf_map_delete_elem(fx_qpmaps.rx_fd, &slot);
	bpf_map_delete_elem(fx_qpmaps.tx_fd, &slot);
}

/* A fresh, zeroed view for window k. */
void create_cc_view(__u32 k)
{
	int fd = mrc_cc_view_create(&fx_qpmaps, MFD(mrc_cc_view), k);

	if (ASSERT_TRUE(fd >= 0, "create a window's view"))
		close(fd);
}

/*
 * A fresh, zeroed state for the QP in slot: an entry of the fixture's
 * blocks (all three maps), whose index the QP's mrc_qps entry must name
 * (put_qp does for the test QP).
 */
void create_qp_state(__u32 slot)
{
	struct mrc_qp_state_fds fds;

	if (!ASSERT_EQ(mrc_qp_state_create(&fx_qpmaps, &fx_blocks, slot, slot + 1, &fds),
		       0, "create a QP's state maps"))
		return;
	if (slot < MRC_QPS_LIMIT)
		fx_state_idx[slot] = fds.idx;
	close(fds.rx);
	close(fds.tx);
	close(fds.evs);
}
void get_rev(struct mrc_rev_evs *r) { read_slot(MFD(mrc_rev_evs), r, "read mrc_rev_evs"); }
void put_rev(const struct mrc_rev_evs *r) { write_slot(MFD(mrc_rev_evs), r, "write mrc_rev_evs"); }

/* ---- per-QP inner maps (user/common/qpmaps.h) ------------------------- */

struct mrc_qpmaps fx_qpmaps;

/* Copies of the test QP's send log and per-EV counters. */
struct mrc_send_log log_buf;
struct mrc_qp_ev_stats ev_stats_buf;

void publish_qp_maps(__u32 slot, __u32 window, __u32 n_evs)
{
	ASSERT_EQ(mrc_qpmaps_publish(&fx_qpmaps, slot, slot + 1, window, n_evs), 0,
		  "publish the QP's inner maps");
}

int read_log_of(__u32 slot, struct mrc_send_log *log)
{
	int n = mrc_qpmaps_read_log(MFD(mrc_send_log), slot, log);

	ASSERT_TRUE(n > 0, "read a send log");
	return n;
}

/* Write an inner map whole from values (max of them at most). */
static void write_inner(int outer_fd, __u32 slot, const void *values,
			size_t value_size, __u32 max, const char *what)
{
	static __u32 keys[MRC_WINDOW_MAX];
	int fd = mrc_qpmaps_open(outer_fd, slot);
	__u32 n, i, count;

	if (!ASSERT_TRUE(fd >= 0, what))
		return;
	n = mrc_qpmaps_entries(fd);
	if (n > max)
		n = max;
	for (i = 0; i < n && i < MRC_WINDOW_MAX; i++)
		keys[i] = i;
	/* One call (mrc-bpf-cost resets the log before each timed run). */
	count = n;
	if (bpf_map_update_batch(fd, keys, values, &count, NULL) || count != n)
		for (i = 0; i < n; i++)
			if (!ASSERT_EQ(bpf_map_update_elem(fd, &i, (const char *)values +
							   i * value_size, BPF_ANY), 0, what))
				break;
	close(fd);
}

void write_log_of(__u32 slot, const struct mrc_send_log *log)
{
	write_inner(MFD(mrc_send_log), slot, log->rec, sizeof(log->rec[0]),
		    MRC_WINDOW_MAX, "write a send log");
}

void read_log(void) { read_log_of(SLOT, &log_buf); }
void write_log(void) { write_log_of(SLOT, &log_buf); }

void read_ev_stats(void)
{
	ASSERT_TRUE(mrc_qpmaps_read_ev_stats(MFD(mrc_ev_stats), MFD(mrc_ev_tx), SLOT,
					     &ev_stats_buf) > 0, "read per-EV counters");
}

void write_ev_stats(void)
{
	write_inner(MFD(mrc_ev_stats), SLOT, ev_stats_buf.rx, sizeof(ev_stats_buf.rx[0]),
		    MRC_MAX_EVS, "write XDP's per-EV counters");
	write_inner(MFD(mrc_ev_tx), SLOT, ev_stats_buf.tx, sizeof(ev_stats_buf.tx[0]),
		    MRC_MAX_EVS, "write TC's per-EV counters");
}

/*
 * The test QP's send log, and the record psn lives in (the log's size is
 * a power of two): one record a call, so a test's clock barely moves.
 */
static int log_rec_fd(__u32 psn, __u32 *key)
{
	int fd = mrc_qpmaps_open(MFD(mrc_send_log), SLOT);
	__u32 n = fd >= 0 ? mrc_qpmaps_entries(fd) : 0;

	ASSERT_TRUE(n > 0, "the test QP's send log");
	*key = n ? psn & (n - 1) : 0;
	return fd;
}

struct mrc_send_rec get_rec(__u32 psn)
{
	struct mrc_send_rec rec = {};
	__u32 key;
	int fd = log_rec_fd(psn, &key);

	if (fd >= 0) {
		ASSERT_EQ(bpf_map_lookup_elem(fd, &key, &rec), 0, "read a send record");
		close(fd);
	}
	return rec;
}

/* Write the record of psn's slot (rec_psn may name another PSN there). */
void put_rec_as(__u32 slot_psn, __u32 rec_psn, __u8 ev_idx, __u8 plane,
		__u8 flags, __u64 sent_ns)
{
	struct mrc_send_rec rec = {
		.psn = rec_psn, .ev_idx = ev_idx, .plane = plane, .flags = flags,
		.nacked = 0,	/* a new send, as TC writes it: no NACK acted on it */
		.sent_ns = sent_ns,
	};
	__u32 key;
	int fd = log_rec_fd(slot_psn, &key);

	if (fd >= 0) {
		ASSERT_EQ(bpf_map_update_elem(fd, &key, &rec, BPF_ANY), 0,
			  "write a send record");
		close(fd);
	}
}

void put_rec(__u32 psn, __u8 ev_idx, __u8 plane, __u8 flags, __u64 sent_ns)
{
	put_rec_as(psn, psn, ev_idx, plane, flags, sent_ns);
}

struct mrc_ev_counters ev_ctr(__u32 idx)
{
	read_ev_stats();
	return mrc_ev_counters_of(&ev_stats_buf, idx);
}

/* Plane `plane` (1-based) is interface ifindex with these source addresses. */
void set_plane(__u32 plane, __u32 ifindex, const __u8 *addr4, const __u8 *addr6)
{
	struct mrc_plane pl = { .ifindex = ifindex };
	__u32 k = plane - 1;

	snprintf(pl.name, sizeof(pl.name), "plane%u", plane);
	if (addr4)
		memcpy(pl.addr4, addr4, 4);
	if (addr6)
		memcpy(pl.addr6, addr6, 16);
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_planes), &k, &pl, BPF_ANY), 0,
		  "write mrc_planes");
}

void set_plane_of(__u32 ifindex, __u32 plane)
{
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_plane_of), &ifindex, &plane, BPF_ANY), 0,
		  "write mrc_plane_of");
}

__u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* Zero every entry of an array map (per-CPU values: ncpus copies). */
void zero_array(int fd, __u32 entries, size_t value_size, int percpu)
{
	size_t sz = percpu ? (size_t)ncpus * ((value_size + 7) & ~(size_t)7) : value_size;
	void *zero = calloc(1, sz);
	__u32 k;

	if (!zero) {
		ASSERT_TRUE(0, "calloc");
		return;
	}
	for (k = 0; k < entries; k++) {
		if (bpf_map_update_elem(fd, &k, zero, BPF_ANY)) {
			ASSERT_TRUE(0, "zero array map entry");
			break;
		}
	}
	free(zero);
}

void delete_all(int fd, size_t key_size)
{
	__u8 key[64], next[64];

	while (!bpf_map_get_next_key(fd, NULL, next)) {
		memcpy(key, next, key_size);
		if (bpf_map_delete_elem(fd, key)) {
			ASSERT_TRUE(0, "delete hash entry");
			break;
		}
	}
}

/* ---- EV event ring (mrc_ev_events, pinned, shared by every test) -------- */

struct mrc_ev_event eveq[EVEQ_MAX];
int n_ev_events;
static int n_bad_ev_events;
static struct ring_buffer *ev_rb;

static int on_ev_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (size != sizeof(struct mrc_ev_event)) {
		n_bad_ev_events++;
		return 0;
	}
	if (n_ev_events < EVEQ_MAX)
		memcpy(&eveq[n_ev_events], data, sizeof(struct mrc_ev_event));
	n_ev_events++;
	return 0;
}

/* Read every EV event written since the last drain; returns how many. */
int drain_ev_events(void)
{
	n_ev_events = 0;
	n_bad_ev_events = 0;
	if (!ev_rb) {
		ev_rb = ring_buffer__new(MFD(mrc_ev_events), on_ev_event, NULL, NULL);
		if (!ASSERT_TRUE(ev_rb != NULL, "ring_buffer__new(mrc_ev_events)"))
			return 0;
	}
	ring_buffer__consume(ev_rb);
	ASSERT_EQ(n_bad_ev_events, 0, "EV events of the wrong size");
	return n_ev_events;
}

void free_ev_ring(void)
{
	ring_buffer__free(ev_rb);
	ev_rb = NULL;
}

void reset_maps(void)
{
	__u32 k;

	zero_array(MFD(mrc_cfg), 1, sizeof(struct mrc_global_cfg), 0);
	zero_array(MFD(mrc_qps), fx_max_qps, sizeof(struct mrc_qp_info), 0);
	zero_array(MFD(mrc_qp_stats), fx_max_qps, sizeof(struct mrc_qp_stats), 1);
	zero_array(MFD(mrc_drops), 1, sizeof(struct mrc_drop_stats), 1);
	zero_array(MFD(mrc_planes), MRC_MAX_PLANES_ABI, sizeof(struct mrc_plane), 0);
	/*
	 * No QP has inner maps but the test QP, whose are full-sized and
	 * zero; no window has a view but the first FX_CC_VIEWS, zero.
	 */
	for (k = 0; k < fx_max_qps; k++) {
		mrc_qpmaps_remove(&fx_qpmaps, k);
		bpf_map_delete_elem(MFD(mrc_cc_view), &k);
	}
	publish_qp_maps(SLOT, MRC_WINDOW_MAX, MRC_MAX_EVS);
	/*
	 * Fresh blocks, whose first entry a neighbour QP takes: the test QP's
	 * is entry 1, beside another QP's, as a process's QPs are.
	 */
	mrc_state_blocks_fini(&fx_blocks);
	memset(fx_state_idx, 0, sizeof(fx_state_idx));
	create_qp_state(FX_NEIGHBOUR_SLOT);
	create_qp_state(SLOT);
	for (k = 0; k < FX_CC_VIEWS; k++)
		create_cc_view(k);
	zero_array(MFD(mrc_rev_evs), fx_max_qps, sizeof(struct mrc_rev_evs), 0);
	zero_array(MFD(mrc_cc), fx_max_qps, sizeof(struct mrc_cc_state), 0);
	delete_all(MFD(mrc_cc_owner), sizeof(__u32));
	delete_all(MFD(mrc_peers), sizeof(struct mrc_peer_key));
	delete_all(MFD(mrc_plane_of), sizeof(__u32));
	delete_all(MFD(mrc_known_peers), sizeof(struct mrc_known_peer_key));
	delete_all(MFD(mrc_probe_ports), sizeof(__u32));
	for (k = 0; k < fx_max_ctx; k++)
		bpf_map_delete_elem(MFD(mrc_events), &k);	/* ENOENT is fine */
	k = 0;
	bpf_map_delete_elem(MFD(mrc_xdp_next), &k);	/* no program chained */
	/* Control-path counters and EV events of earlier tests. */
	zero_array(MFD(mrc_ctl_stats), 1, sizeof(struct mrc_ctl_stats), 1);
	drain_ev_events();
}

/* ---- event ring -------------------------------------------------------- */

struct mrc_event evq[EVQ_MAX];
int n_events;
static int n_bad_events;

static int on_event(void *ctx, void *data, size_t size)
{
	(void)ctx;
	if (size != sizeof(struct mrc_event)) {
		n_bad_events++;
		return 0;
	}
	if (n_events < EVQ_MAX)
		memcpy(&evq[n_events], data, sizeof(struct mrc_event));
	n_events++;
	return 0;
}

void free_ring(void)
{
	ring_buffer__free(rb);
	rb = NULL;
	if (ring_fd >= 0)
		close(ring_fd);
	ring_fd = -1;
}

/* A fresh ring at context 0 of mrc_events. */
void new_ring(void)
{
	__u32 zero = 0;

	free_ring();
	ring_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, NULL, 0, 0, MRC_CTX_RING_BYTES, NULL);
	if (!ASSERT_TRUE(ring_fd >= 0, "create ringbuf"))
		return;
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_events), &zero, &ring_fd, BPF_ANY), 0,
		  "insert ring into mrc_events[0]");
	rb = ring_buffer__new(ring_fd, on_event, NULL, NULL);
	ASSERT_TRUE(rb != NULL, "ring_buffer__new");
}

/* Read every event written since the last drain; returns how many. */
int drain_events(void)
{
	n_events = 0;
	n_bad_events = 0;
	if (rb)
		ring_buffer__consume(rb);
	ASSERT_EQ(n_bad_events, 0, "events of the wrong size");
	return n_events;
}

/*
 * A per-CPU map value made only of __u64 counters, summed over the CPUs
 * into `sum` (size bytes); all zero, and a failed assertion, if unreadable.
 */
void sum_percpu_u64(int fd, __u32 key, void *sum, size_t size, const char *what)
{
	__u64 *out = sum, *v = calloc((size_t)ncpus, size);
	size_t n = size / sizeof(__u64);

	memset(sum, 0, size);
	if (!v || bpf_map_lookup_elem(fd, &key, v)) {
		ASSERT_TRUE(0, what);
		free(v);
		return;
	}
	for (int cpu = 0; cpu < ncpus; cpu++)
		for (size_t i = 0; i < n; i++)
			out[i] += v[(size_t)cpu * n + i];
	free(v);
}

struct mrc_drop_stats read_drops(void)
{
	struct mrc_drop_stats sum;

	sum_percpu_u64(MFD(mrc_drops), 0, &sum, sizeof(sum), "read mrc_drops");
	return sum;
}

struct mrc_qp_stats read_qp_stats(__u32 slot)
{
	struct mrc_qp_stats sum;

	sum_percpu_u64(MFD(mrc_qp_stats), slot, &sum, sizeof(sum), "read mrc_qp_stats");
	return sum;
}

/* ---- the QP every test starts from ---------------------------------------- */

/*
 * Reset all maps and install QP 5 (slot 4) in RTS with `n_peers` peer
 * addresses: ::ffff:198.18.1.2, then fd00:1::2 (slot 1 is always filled,
 * n_peer_addrs says how many count).
 */
void setup_qp(__u8 n_peers)
{
	struct mrc_qp_info q = {
		.state = MRC_QPS_RTS, .ctx = 0, .remote_qpn = REMOTE_QPN,
		.mpr = RX_MPR, .sock_port = SOCK_PORT, .n_peer_addrs = n_peers,
		.ev_format = MRC_EVF_UDP, .local_key = QP_KEY, .peer_key = PEER_KEY,
		.flags = MRC_QP_F_KEYED,
	};
	struct mrc_rx_state rx = { .cack = RX_CACK, .mpr = RX_MPR };
	static struct mrc_tx_state tx;

	reset_maps();
	mapped4(q.peer_addrs[0], peer4);
	memcpy(q.peer_addrs[1], peer6, 16);
	put_qp(&q);
	put_rx(&rx);

	memset(&tx, 0, sizeof(tx));
	tx.snd_una = TX_UNA;
	tx.snd_nxt = TX_NXT;
	tx.sack_max = TX_UNA;
	tx.loss_mark = TX_UNA;
	tx.state = MRC_QPS_RTS;
	tx.wr[0].last_psn = 1004;
	tx.wr[1].last_psn = 1009;
	tx.wr[2].last_psn = 1050;
	tx.wr_head = 0;
	tx.wr_tail = 3;
	put_tx(&tx);

	new_ring();
	drain_events();
}

void add_peer(const __u8 addr[16], __u32 remote_qpn, __u32 local_qpn)
{
	struct mrc_peer_key k = { .remote_qpn = remote_qpn };

	memcpy(k.addr, addr, 16);
	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_peers), &k, &local_qpn, BPF_ANY), 0,
		  "seed mrc_peers");
}

struct mrc_qp_evs evs_buf;

/*
 * The QP with the n entries of `tab` as its EV table in `format`, rotation
 * order `perm` (NULL: identity), cursor 0, reachable from TC by both peer
 * addresses, and lo known as plane 1.
 */
void setup_table(__u8 format, const struct mrc_ev_entry *tab, __u32 n,
		 const __u8 *perm)
{
	struct mrc_qp_info q;
	__u8 a[16];
	__u32 i;

	setup_qp(2);
	get_qp(&q);
	q.n_evs = n;
	q.ev_format = format;
	put_qp(&q);
	memset(&evs_buf, 0, sizeof(evs_buf));
	memset(evs_buf.perm, PERM_MARK, sizeof(evs_buf.perm));
	for (i = 0; i < n && i < MRC_MAX_EVS; i++) {
		evs_buf.ev[i] = tab[i];
		evs_buf.perm[i] = (__u8)(perm ? perm[i] : i);
	}
	put_evs(&evs_buf);
	mapped4(a, peer4);
	add_peer(a, REMOTE_QPN, QPN);
	add_peer(peer6, REMOTE_QPN, QPN);
	set_plane_of(lo_ifindex, 1);
}

/* The QP with n ACTIVE entries on plane 1: ev[i], state[i] (NULL: GOOD). */
void setup_tc(__u8 format, const __u32 *ev, const __u16 *state, __u32 n)
{
	struct mrc_ev_entry tab[MRC_MAX_EVS];
	__u32 i;

	memset(tab, 0, sizeof(tab));
	for (i = 0; i < n && i < MRC_MAX_EVS; i++) {
		tab[i].ev = ev[i];
		tab[i].plane = 1;
		tab[i].state = (__u8)(state ? state[i] : MRC_EV_GOOD);
		tab[i].flags = MRC_EV_F_ACTIVE;
	}
	setup_table(format, tab, n, NULL);
}

/* ---- the skeleton, with a pin root of its own ---------------------------- */

static void remove_pin_dir(void)
{
	pin_dir_remove(pin_dir, sizeof(pin_dir));
}

void fixture_cleanup(void)
{
	free_ring();
	free_ev_ring();
	if (skel) {
		struct bpf_map *map;

		bpf_object__for_each_map(map, skel->obj)
			if (bpf_map__is_pinned(map))
				bpf_map__unpin(map, NULL);
		mrc__destroy(skel);
		skel = NULL;
		mrc_qpmaps_fini(&fx_qpmaps);
		mrc_state_blocks_fini(&fx_blocks);
	}
	remove_pin_dir();
}

static void on_signal(int sig)
{
	fixture_cleanup();
	signal(sig, SIG_DFL);
	raise(sig);
}

const char *fixture_pin_dir(void)
{
	return pin_dir;
}

int fixture_setup(const char *name)
{
	return fixture_setup_sized(name, 0, 0);
}

int fixture_setup_sized(const char *name, __u32 max_qps, __u32 max_ctx)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = pin_dir);
	char why[256];
	int err;

	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "libbpf_num_possible_cpus: %d\n", ncpus);
		return -1;
	}
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/%s-%d", name, (int)getpid());
	if (mkdir(pin_dir, 0700)) {
		fprintf(stderr, "mkdir %s: %s (bpffs mounted? root?)\n", pin_dir,
			strerror(errno));
		pin_dir[0] = 0;
		return -1;
	}
	atexit(fixture_cleanup);
	/*
	 * Whatever ends the run takes the pins with it: ^C, the runner's
	 * timeout, a closed terminal, or a reader that stopped reading
	 * (`| head`: the next verdict line gets SIGPIPE).
	 */
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, on_signal);
	skel = mrc__open_opts(&oo);
	if (!skel) {
		fprintf(stderr, "opening mrc: %s\n", strerror(errno));
		return -1;
	}
	/* Sized as mrcd sizes them for --max-qps/--max-contexts (map_plan.h). */
	if (max_qps && max_ctx) {
		if (mrc_plan_size_object(skel->obj, max_qps, max_ctx, why, sizeof(why))) {
			fprintf(stderr, "%s\n", why);
			return -1;
		}
		fx_max_qps = max_qps;
		fx_max_ctx = max_ctx;
	}
	err = mrc__load(skel);
	if (err) {
		fprintf(stderr, "loading mrc: %s (run as root)\n", strerror(-err));
		return -1;
	}
	mrc_qpmaps_init(&fx_qpmaps, MFD(mrc_send_log), MFD(mrc_ev_stats), MFD(mrc_ev_tx),
			&(struct mrc_qp_state_outer){ .rx = MFD(mrc_rx), .tx = MFD(mrc_tx),
						      .evs = MFD(mrc_qp_evs) },
			MFD(mrc_qps));
	return 0;
}

/*
 * `plain` (an Ethernet frame with IPv6) in the envelope as it arrives at
 * the destination: the spine's End made segment 0 the destination, so
 * Segments Left is 0 and the outer destination is the inner one.
 */
size_t srv6_wrap(__u8 *out, const __u8 *plain, size_t len, const __u8 carrier[16])
{
	const __u8 *in = plain + ETH_LEN;
	__u8 *o = out + ETH_LEN, *srh = o + IP6_LEN;

	memcpy(out, plain, ETH_LEN);
	memcpy(o, in, IP6_LEN);
	put16(o + 4, (__u16)(get16(in + 4) + IP6_LEN + MRC_SRV6_SRH_LEN));
	o[6] = 43;				/* next header: routing */
	srh[0] = 41;				/* next header: IPv6 */
	srh[1] = 4;				/* 2 segments x 16 bytes / 8 */
	srh[2] = 4;				/* routing type: SRH */
	srh[3] = 0;				/* segments left */
	srh[4] = 1;				/* last entry */
	srh[5] = 0;				/* flags */
	put16(srh + 6, 0);			/* tag */
	memcpy(srh + 8, in + 24, 16);		/* segment 0: the destination */
	memcpy(srh + 24, carrier, 16);		/* segment 1: the carrier */
	memcpy(out + ETH_LEN + MRC_SRV6_ENCAP_LEN, in, len - ETH_LEN);
	return len + MRC_SRV6_ENCAP_LEN;
}
