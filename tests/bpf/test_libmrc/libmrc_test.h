/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tests of libmrc through its public API (include/mrc/mrc.h), against the
 * real fast path: bpf/mrc.bpf.c loaded from the `mrc` skeleton, mrc_xdp_rx
 * attached to `lo` in generic (SKB) mode and mrc_tc_tx on lo's egress.
 * What the files of tests/bpf/test_libmrc/ share: the environment main.c
 * sets up and the helpers of helpers.c.
 *
 *   main.c          the isolated environment (netns, pins, attachments, context)
 *   helpers.c       addresses, the maps read directly, completions, QP pairs
 *   api_errors.c    refusals at call time: arguments, local keys, queue limits
 *   context.c       contexts: close, local addresses, QP numbers, ring slots
 *   qp_states.c     the QP state machine and its attributes
 *   write.c         WRITE and WRITE-IMM transfers over lo
 *   write_errors.c  WRITEs that fail: remote access errors, retry exhaustion
 *   conn.c          connection set-up: mrc_conn_exchange/listen/connect
 *   conn_keys.c     connection keys: drawn, required for RTR, checked
 *   hardening.c     random QP numbers and rkeys, truncated datagrams dropped
 *   ack_attacks.c   forged SACKs of undelivered PSNs: reneged, not a hang
 *
 * Data tests connect two QPs of one context to each other over lo (each
 * QP's peer address is the shared local address), with PSNs just below
 * 2^24 so the transfers cross the 24-bit PSN wrap. Every wait polls the
 * CQ (polling drives libmrc) and has a deadline: a hang is a failure.
 *
 * Tests marked "SUSPECTED BUG" in their comment encode what mrc.h
 * promises and failed against libmrc as written when they were added;
 * they stay so the fix is checked.
 *
 * Every test leaves the shared context as it found it (a test that closes
 * a second context reopens the main one), so none relies on another
 * having run first.
 *
 * The lm_ names: the BPF test fixture (tests/lib), linked into every BPF
 * test binary, defines a skel, ncpus, lo_ifindex and set_plane of its own.
 */
#ifndef MRC_TEST_LIBMRC_H
#define MRC_TEST_LIBMRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "common/qpmaps.h"
#include "mrc/abi.h"
#include "mrc/mrc.h"
#include "mrc.skel.h"
#include "test.h"

#define LOCAL4		"198.18.200.1"
#define LOCAL6		"fd00:200::1"
#define REGION		(4u << 20)	/* data test regions: 4 MiB */
#define DEADLINE_MS	10000		/* every wait for completions */
#define PSN_AB		0xFFFFF0u	/* A -> B: crosses 2^24 */
#define PSN_BA		0xFFFFF8u	/* B -> A */

/* The environment (main.c). */
extern struct mrc *lm_skel;		/* the fast path, loaded and pinned */
extern char pin_dir[64];		/* /sys/fs/bpf/mrc-libtest-<pid> */
extern int lm_ncpus;
extern int lm_lo_ifindex;
extern struct mrc_context *ctx;		/* the main context */

/* An int-returning call: -err and errno err. */
#define EXPECT_ERR(expr, err, what) do {				\
	long __r;							\
	errno = 0;							\
	__r = (long)(expr);						\
	ASSERT_EQ(__r, -(long)(err), what);				\
	ASSERT_EQ(errno, (err), what ": errno");			\
} while (0)

/* A pointer-returning call: NULL and errno err. */
#define EXPECT_NULL(expr, err, what) do {				\
	const void *__p;						\
	errno = 0;							\
	__p = (const void *)(expr);					\
	ASSERT_TRUE(__p == NULL, what ": returns NULL");		\
	ASSERT_EQ(errno, (err), what ": errno");			\
} while (0)

/* ---- small helpers ---------------------------------------------------- */

uint64_t now_ns(void);
struct sockaddr_storage ss_of(const char *ip);
/* An address as the maps hold it: IPv6 or IPv4-mapped IPv6. */
void key_of_ss(const struct sockaddr_storage *ss, uint8_t key[16]);
void key_of(const char *ip, uint8_t key[16]);
/* Same address (an IPv4 address may come back IPv4-mapped). */
bool addr_is(const struct sockaddr_storage *ss, const char *ip);
void fill_random(uint8_t *p, size_t len, uint64_t seed);

/* ---- the maps, read directly ------------------------------------------ */

int qp_info(uint32_t qpn, struct mrc_qp_info *info);
/* The pid that owns a QP number, or -ENOENT. */
long qp_owner(uint32_t qpn);
/* The local QP TC egress finds for (remote_qpn, addr), or -ENOENT. */
long peer_entry(uint32_t remote_qpn, const char *ip);
int tx_state(uint32_t qpn, struct mrc_tx_state *tx);
int rx_state(uint32_t qpn, struct mrc_rx_state *rx);
/* XDP drops for one reason, summed over the CPUs. */
uint64_t drops(size_t field_off);
int lm_set_plane(uint32_t plane, uint32_t ifindex, const char *name);
/* A QP number nobody holds and whose slot is RESET, or 0. */
uint32_t unused_qpn(void);
/* Entries of mrc_ctx_owner: the event ring slots claimed. */
int ring_slots(void);

/* ---- asynchronous events and completions ------------------------------ */

void drain_async(void);
/* Drain the events; true if one (type, qp) was among them (its status out). */
bool find_async(enum mrc_async_event_type type, struct mrc_qp *qp,
		enum mrc_wc_status *status);
/* Poll until n completions are in or the deadline passes: how many came. */
int collect(struct mrc_cq *cq, struct mrc_wc *out, int n, int timeout_ms);
/* Nothing more arrives for a while (polling all along): how many did. */
int quiet_for(struct mrc_cq *cq, int ms);

/* ---- QPs -------------------------------------------------------------- */

struct qp_conf {
	uint32_t mtu;
	bool set_retry;
	uint8_t timeout, retry_cnt, exp_retry_cnt;
	bool set_wimm;
	uint16_t max_wimm_out, max_wimm_in;
};

int set_state(struct mrc_qp *qp, enum mrc_qp_state st);
/* To RTS, whatever state it is in: RESET, INIT, RTR, RTS. */
/* dest_key MRC_KEY_INTEROP: no MRC_QP_ATTR_DEST_KEY (an interop QP). */
int connect_qp(struct mrc_qp *qp, uint32_t dest_qpn, uint32_t dest_key,
	       const char *peer, uint32_t rq_psn, uint32_t sq_psn,
	       const struct qp_conf *c);
enum mrc_qp_state qp_state(struct mrc_qp *qp);

/* Two QPs of the context, A and B, each with a CQ of its own. */
struct pair {
	struct mrc_cq *cqa, *cqb;
	struct mrc_qp *a, *b;
};

int pair_create(struct pair *p, uint32_t send_wr, uint32_t recv_wr,
		uint32_t sge);
int pair_connect(struct pair *p, const char *addr, uint32_t psn_ab,
		 uint32_t psn_ba, const struct qp_conf *c);
void pair_destroy(struct pair *p);
int post_write1(struct mrc_qp *qp, uint64_t wr_id, enum mrc_wr_opcode op,
		const void *src, uint32_t len, uint32_t lkey,
		uint64_t remote, uint32_t rkey, uint32_t imm);

/*
 * A fresh main context. Needed after a second context of this process was
 * closed: libmrc gives it the main context's event ring slot, and closing
 * it takes the main context's ring away (see libmrc.two_contexts).
 */
int reopen_ctx(void);

#endif
