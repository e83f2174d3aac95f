/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fixture of bpf/mrc.bpf.c's BPF unit tests (tests/bpf/test_mrc_xdp/)
 * and of build/mrc-bpf-cost (tools/bpf-cost): the skeleton loaded with a
 * pin root of its own, crafted packets, one QP installed in the maps, and
 * bpf_prog_test_run_opts() runs. Code in tests/lib/mrc_fixture.c.
 *
 * The maps are pinned by name, so fixture_setup() opens the skeleton with
 * the pin root /sys/fs/bpf/<name>-<pid>, never the /sys/fs/bpf/mrc of a
 * running mrcd, and fixture_cleanup() (also at exit and on SIGINT/SIGTERM)
 * unpins everything and removes that directory.
 *
 * Failures are counted with the ASSERT_* macros of test.h: a program that
 * links the fixture defines TEST_STATE_DEFINE and looks at
 * test_state.failed.
 */
#ifndef MRC_TEST_FIXTURE_H
#define MRC_TEST_FIXTURE_H

#include <stddef.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

#include "mrc/abi.h"
#include "common/qpmaps.h"
#include "mrc.skel.h"
#include "packet.h"
#include "test.h"

#define TC_ACT_UNSPEC	(-1)	/* no verdict: the next filter, or pass */
#define TC_ACT_OK	0
#define TC_ACT_SHOT	2
#define TC_ACT_REDIRECT	7

#define BTH_LEN		12
#define PKT_MAX		2048

/* The QP every test installs. */
#define QPN		5
#define SLOT		(QPN - 1)
#define REMOTE_QPN	9
/*
 * Its connection keys: packets to QP carry QP_KEY (put_bth() writes it),
 * packets to the peer's QP carry PEER_KEY (XDP's trimmed-packet NACK).
 */
#define QP_KEY		0x5eedc0deu
#define PEER_KEY	0x7a11ab1eu
#define SOCK_PORT	40000
#define PEER_SPORT	50001	/* peer's source port on inbound packets */
#define LOCAL_SPORT	33333	/* our socket's port on outbound packets */
#define RX_CACK		999
#define RX_MPR		1024
#define TX_UNA		1000
#define TX_NXT		1100
/* The fixture's three posted WRITEs end at PSNs 1004, 1009 and 1050. */
#define ACK_EV		0x00C0FFEEu		/* EV echoed in SACKs/NACKs */

extern struct mrc *skel;
extern int ncpus;
/* Plane 1's interface (lo; a test in its own namespace may set it). */
extern unsigned int lo_ifindex;
extern int ring_fd;		/* fd of the event ring of context 0 */

extern const __u8 local4[4], peer4[4], local6[16], peer6[16];

/* Load mrc.bpf.c's skeleton with the pin root /sys/fs/bpf/<name>-<pid>. */
int fixture_setup(const char *name);
/*
 * The same with the maps sized as mrcd sizes them for --max-qps max_qps
 * and --max-contexts max_ctx (0, 0: as built, MRC_MAX_QPS and MRC_MAX_CTX).
 */
int fixture_setup_sized(const char *name, __u32 max_qps, __u32 max_ctx);
/* The limits the maps were sized for, and where they are pinned. */
extern __u32 fx_max_qps, fx_max_ctx;
const char *fixture_pin_dir(void);
void fixture_cleanup(void);

/* ---- packet builders ---------------------------------------------------- */

/* Ethernet + IPv4/IPv6 + UDP around a payload. */
struct hdrs {
	int	ipv6;
	const __u8 *src;	/* 4 or 16 bytes */
	const __u8 *dst;
	__u16	sport;
	__u16	dport;
	__u32	flow;		/* IPv6 flow label (20 bits) */
	int	zero_csum;	/* UDP checksum 0 ("none") */
};

/* Peer -> us (what XDP sees) and us -> peer (what TC sees). */
struct hdrs rx4(void);
struct hdrs rx6(void);
struct hdrs tx4(void);
struct hdrs tx6(void);

size_t build_eth(__u8 *p, __u16 proto);
/* A complete frame with correct IPv4 and (unless zero_csum) UDP checksums. */
size_t build_udp(const struct hdrs *h, const __u8 *payload, size_t plen, __u8 *buf);
/* A BTH with the fixture QP's key (QP_KEY), or with `key`. */
size_t put_bth(__u8 *m, __u8 opcode, __u32 dqpn, __u8 flags, __u32 psn);
size_t put_bth_key(__u8 *m, __u8 opcode, __u32 key, __u32 dqpn, __u8 flags,
		   __u32 psn);

/* A data packet: BTH, METH, [TSETH], RETH, [IMM], payload. */
struct data_spec {
	__u8	opcode;
	__u8	flags;		/* MRC_BTH_F_* */
	__u32	dqpn;
	__u32	key;		/* BTH key: QP_KEY from dspec() */
	__u32	psn;		/* only the low 24 bits go on the wire */
	__u32	msg_len;	/* reth.length */
	__u32	payload;	/* bytes after the headers */
};

struct data_spec dspec(__u8 opcode, __u32 psn, __u32 payload);
size_t build_data(__u8 *m, const struct data_spec *d);
size_t data_frame(__u8 *buf, const struct hdrs *h, const struct data_spec *d);

/* A SACK: BTH + struct mrc_sackh. Bit i of bitmap acks cack + 1 + off + i. */
struct sack_spec {
	__u32	dqpn;
	__u32	key;		/* BTH key: QP_KEY from sspec() */
	__u32	psn;		/* trigger PSN */
	__u32	cack;
	__u32	ev;
	__u16	off;
	__u8	m;		/* enum mrc_sack_m */
	__u64	bitmap;
	__u16	hold;		/* responder's hold, MRC_TS_UNIT_NS units */
};

struct sack_spec sspec(__u32 cack, __u64 bitmap);
size_t build_sack(__u8 *m, const struct sack_spec *s);
size_t sack_frame(__u8 *buf, const struct hdrs *h, const struct sack_spec *s);

/*
 * An IPv6 frame `plain` in the SRv6 envelope of docs/WIRE.md section 13
 * as it reaches its destination (Segments Left 0, the spine's End done),
 * with uSID carrier `carrier`; MRC_SRV6_ENCAP_LEN bytes longer.
 */
size_t srv6_wrap(__u8 *out, const __u8 *plain, size_t len, const __u8 carrier[16]);

/* ---- program runs -------------------------------------------------------- */

struct run {
	int	err;		/* bpf_prog_test_run_opts() */
	__u32	ret;		/* program's return value */
	__u8	out[PKT_MAX];
	__u32	out_len;
	__u32	duration;	/* ns per run */
};

/* `repeat` runs of the program on one copy of pkt (the kernel reuses it). */
void run_prog(int prog_fd, const void *pkt, size_t len, __u32 repeat, struct run *r);
void run_xdp(const void *pkt, size_t len, struct run *r);
void run_tc(const void *pkt, size_t len, struct run *r);

/* ---- maps ------------------------------------------------------------------ */

#define MFD(name)	bpf_map__fd(skel->maps.name)

void mapped4(__u8 out[16], const __u8 a[4]);
/* Read or write the test QP's slot of a per-QP map. */
void read_slot(int map_fd, void *value, const char *what);
void write_slot(int map_fd, const void *value, const char *what);
void get_qp(struct mrc_qp_info *q);
void put_qp(const struct mrc_qp_info *q);
/* A per-slot state map's entry (user/common/qpmaps.h); put creates the map. */
void get_state_of(int outer_fd, __u32 slot, void *value, size_t size, const char *what);
void put_state_of(int outer_fd, __u32 slot, const void *value, size_t size,
		  const char *what);
/*
 * Fresh, zeroed state for the QP in slot (an entry of the fixture's
 * blocks: fx_idx_of(slot), which put_qp writes for the test QP) / a view
 * for window k. reset_maps() gives FX_NEIGHBOUR_SLOT entry 0 and the test
 * QP entry 1 of one block.
 */
void create_qp_state(__u32 slot);
__u32 fx_idx_of(__u32 slot);
#define FX_NEIGHBOUR_SLOT	1	/* QP 2: no test uses it */
void create_cc_view(__u32 k);
/* A QP whose EV table was never published: no send log, no counters. */
void remove_log_maps(__u32 slot);
/* reset_maps() leaves windows 0 .. FX_CC_VIEWS - 1 a zeroed view each. */
#define FX_CC_VIEWS	8
void get_rx(struct mrc_rx_state *rx);
void put_rx(const struct mrc_rx_state *rx);
/* mrc_tx_state is 8.7 KiB: callers keep it static. */
void get_tx(struct mrc_tx_state *tx);
void put_tx(const struct mrc_tx_state *tx);
void get_evs(struct mrc_qp_evs *e);
void put_evs(const struct mrc_qp_evs *e);
void get_rev(struct mrc_rev_evs *r);
void put_rev(const struct mrc_rev_evs *r);

/*
 * The per-QP inner maps (user/common/qpmaps.h). reset_maps() leaves the
 * test QP (SLOT) with a full-sized send log (MRC_WINDOW_MAX records, so
 * PSN psn is record psn % MRC_WINDOW_MAX) and counters for MRC_MAX_EVS
 * EVs, and every other slot without inner maps; publish_qp_maps() gives
 * a slot fresh ones of other sizes.
 */
extern struct mrc_qpmaps fx_qpmaps;
void publish_qp_maps(__u32 slot, __u32 window, __u32 n_evs);
/* Copy a slot's send log in (returns its record count) or out. */
int read_log_of(__u32 slot, struct mrc_send_log *log);
void write_log_of(__u32 slot, const struct mrc_send_log *log);

/* Copies of the test QP's send log and per-EV counters, read and written whole. */
extern struct mrc_send_log log_buf;
extern struct mrc_qp_ev_stats ev_stats_buf;
void read_log(void);
void write_log(void);
void read_ev_stats(void);
void write_ev_stats(void);
struct mrc_send_rec get_rec(__u32 psn);
/* Write the record of psn's slot (rec_psn may name another PSN there). */
void put_rec_as(__u32 slot_psn, __u32 rec_psn, __u8 ev_idx, __u8 plane,
		__u8 flags, __u64 sent_ns);
void put_rec(__u32 psn, __u8 ev_idx, __u8 plane, __u8 flags, __u64 sent_ns);
struct mrc_ev_counters ev_ctr(__u32 idx);

/* Plane `plane` (1-based) is interface ifindex with these source addresses. */
void set_plane(__u32 plane, __u32 ifindex, const __u8 *addr4, const __u8 *addr6);
void set_plane_of(__u32 ifindex, __u32 plane);
__u64 mono_ns(void);

/* Zero every entry of an array map (per-CPU values: ncpus copies). */
void zero_array(int fd, __u32 entries, size_t value_size, int percpu);
void delete_all(int fd, size_t key_size);
void reset_maps(void);

/* EV events (mrc_ev_events): eveq[0 .. n_ev_events - 1] after a drain. */
#define EVEQ_MAX	64
extern struct mrc_ev_event eveq[EVEQ_MAX];
extern int n_ev_events;
int drain_ev_events(void);
void free_ev_ring(void);

/* Context 0's event ring: evq[0 .. n_events - 1] after a drain. */
#define EVQ_MAX	256
extern struct mrc_event evq[EVQ_MAX];
extern int n_events;
void new_ring(void);
void free_ring(void);
int drain_events(void);

/* Per-CPU counters summed over the CPUs. */
void sum_percpu_u64(int fd, __u32 key, void *sum, size_t size, const char *what);
struct mrc_drop_stats read_drops(void);
struct mrc_qp_stats read_qp_stats(__u32 slot);

/* ---- the QP every test starts from ---------------------------------------- */

/*
 * Reset all maps and install QP 5 (slot 4) in RTS with `n_peers` peer
 * addresses: ::ffff:198.18.1.2, then fd00:1::2 (slot 1 is always filled,
 * n_peer_addrs says how many count); responder state cack 999 / mpr 1024,
 * requester state snd_una 1000 / snd_nxt 1100 with three posted WRITEs
 * ending at PSNs 1004, 1009 and 1050, and a fresh event ring at context 0.
 */
void setup_qp(__u8 n_peers);
void add_peer(const __u8 addr[16], __u32 remote_qpn, __u32 local_qpn);

/* EV table entries: in the rotation (ACTIVE) or a backup. */
#define ACT(v, p)		{ .ev = (v), .plane = (p), .state = MRC_EV_GOOD, .flags = MRC_EV_F_ACTIVE }
#define ACT_S(v, p, st)		{ .ev = (v), .plane = (p), .state = (st), .flags = MRC_EV_F_ACTIVE }
#define BAK(v, p, st)		{ .ev = (v), .plane = (p), .state = (st), .flags = 0 }

#define PERM_MARK	0xAB	/* perm bytes past n_evs: must stay untouched */

extern struct mrc_qp_evs evs_buf;
/*
 * The QP with the n entries of `tab` as its EV table in `format`, rotation
 * order `perm` (NULL: identity), cursor 0, reachable from TC by both peer
 * addresses, and lo known as plane 1.
 */
void setup_table(__u8 format, const struct mrc_ev_entry *tab, __u32 n,
		 const __u8 *perm);
/* The QP with n ACTIVE entries on plane 1: ev[i], state[i] (NULL: GOOD). */
void setup_tc(__u8 format, const __u32 *ev, const __u16 *state, __u32 n);

#endif /* MRC_TEST_FIXTURE_H */
