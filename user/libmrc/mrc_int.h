/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc internals: the objects behind the opaque handles of mrc.h and the
 * functions the library's files share. Nothing here is API.
 */
#ifndef MRC_INT_H
#define MRC_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <netinet/in.h>
#include <bpf/libbpf.h>

#include "mrc/abi.h"
#include "common/ev_state.h"
#include "mrc/mrc.h"

#define MRC_MAX_SGE		16
#define MRC_MAX_PKT		9216	/* largest datagram we send or take */
#define MRC_RX_BATCH		32	/* datagrams per recvmmsg */
#define MRC_TX_BATCH		32	/* datagrams per sendmmsg */
#define MRC_ACK_EVERY		16	/* ACK_REQ / SACK at least every N packets */
#define MRC_PKEY_DEFAULT	0xffff

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

struct mrc_mr {
	struct mrc_context *ctx;
	uint8_t *addr;
	size_t length;
	unsigned int access;
	uint32_t key;		/* lkey == rkey */
	bool in_use;
};

struct mrc_cq {
	struct mrc_context *ctx;
	struct mrc_wc *ring;
	uint32_t cap;		/* power of two, grows when full */
	uint32_t head, tail;
	int refs;		/* QPs using it */
};

/* A posted WRITE, kept until acknowledged: retransmission reads from it. */
struct mrc_send_wqe {
	uint64_t wr_id;
	enum mrc_wr_opcode opcode;
	uint64_t remote_addr;
	uint64_t length;
	uint32_t rkey;
	uint32_t imm;
	uint32_t first_psn;	/* 32-bit PSN space */
	uint32_t npkts;
	uint32_t mtu;		/* path MTU when posted: fixes the segmentation */
	uint16_t msn;
	uint16_t wimm_msn;
	int num_sge;
	struct mrc_sge sge[MRC_MAX_SGE];
	uint8_t *sge_addr[MRC_MAX_SGE];
};

#define MRC_EV_MARK_SLOTS	256	/* receiver verdict table, power of 2 */

/* A congestion window of this context: one per destination (cc.c). */
struct mrc_cc_group {
	uint8_t peer[16];		/* the destination (its first plane address) */
	uint32_t slot;			/* index into mrc_cc and mrc_cc_view */
	uint32_t refs;			/* QPs sharing it; 0 = free */
	uint64_t inflight;		/* bytes, summed over those QPs */
	bool pacing;			/* spread new packets over the RTT */
	uint64_t pace_next_ns;		/* the next paced packet's departure */
	struct mrc_cc_view *view;	/* mmapped */
};

struct mrc_qp {
	struct mrc_context *ctx;
	uint32_t qpn;
	uint32_t slot;
	enum mrc_qp_state state;
	struct mrc_qp_init_attr init;
	struct mrc_qp_attr attr;
	struct mrc_qp_counters counters;
	struct sockaddr_in6 peers[MRC_MAX_PLANES];	/* data goes to peers[0] */
	uint8_t peer_keys[MRC_MAX_PLANES][16];	/* as the maps hold them */
	uint8_t n_peers;
	bool maps_installed;
	uint32_t n_evs;			/* entries in the QP's EV table */
	uint8_t ev_format;		/* enum mrc_ev_format */

	/* requester */
	struct mrc_tx_state *tx;	/* mmapped, shared with XDP */
	struct mrc_send_wqe *sq;
	uint32_t sq_cap;		/* power of two */
	uint32_t sq_head;		/* oldest not completed */
	uint32_t sq_send;		/* first with packets never sent */
	uint32_t sq_tail;
	uint32_t sq_next_pkt;		/* packet index within sq[sq_send] */
	uint32_t next_psn;		/* next PSN to assign at post time */
	uint32_t snd_nxt;		/* next new PSN to put on the wire */
	uint16_t msn, wimm_msn;
	uint32_t wimm_out;		/* WRITE-IMMs posted, not completed */
	uint32_t *retx;			/* queue of PSNs to resend */
	uint32_t retx_head, retx_tail;	/* ring of MRC_WINDOW_MAX */
	__u64 *retx_queued;		/* bitmap by psn % window */
	uint32_t una_seen;		/* snd_una at the last timer check */
	uint64_t rto_deadline_ns;
	uint32_t retries;
	struct mrc_cc_group *cc;	/* the destination's window, NULL = none */
	uint64_t cc_inflight;		/* this QP's bytes in it */
	bool cc_blocked;		/* the window held a send back this round */

	/* responder */
	struct mrc_rx_state *rx;	/* mmapped, shared with XDP */
	uint32_t rcv_cack;		/* 32-bit PSN space */
	uint32_t rcv_highest;		/* highest PSN placed */
	uint32_t ooo_count;
	uint64_t rcv_bytes;
	uint32_t *imm_val;		/* by psn % window */
	uint32_t *imm_len;
	__u64 *imm_pending;		/* bitmap by psn % window */
	uint32_t imm_reserved;		/* IMMs placed, not yet delivered */
	uint64_t *recv_wr;		/* posted receives, ring */
	uint32_t recv_cap, recv_head, recv_tail;
	uint32_t pkts_since_sack;
	uint32_t sack_hole_off;		/* the last hole window shown, from cack + 1 */
	bool sack_due;
	struct {			/* what the next SACK echoes */
		uint32_t psn;
		uint32_t ev;
		uint16_t ts;
		uint8_t m;
		int peer;		/* index into peers */
		uint64_t arrival_ns;	/* CLOCK_REALTIME; 0 = unknown */
	} trigger;
	/*
	 * Marked arrivals in a row per EV (CE or mid-path trim), for the
	 * ALWAYS_SKIP verdict: direct-mapped by the EV's low bits, tagged.
	 */
	struct {
		uint32_t ev;
		uint32_t marks;
	} ev_marks[MRC_EV_MARK_SLOTS];
};

struct mrc_context {
	char pin_dir[256];
	uint16_t udp_port;
	pid_t pid;

	int fd_qps, fd_qp_owner, fd_ctx_owner, fd_peers, fd_qp_evs;
	int fd_events, fd_planes, fd_rx, fd_tx, fd_qp_stats;
	int fd_ev_profiles, fd_ev_stats, fd_send_log, fd_rev_evs;
	uint8_t *rx_map, *tx_map;
	/* EV tables (mrc_qp_evs), changed entry by entry with CAS. */
	struct mrc_qp_evs *evs_map;
	size_t rx_map_len, tx_map_len;

	uint32_t ctx_slot;
	bool ctx_claimed;
	int ring_fd;
	struct ring_buffer *ring;

	int sock;
	uint16_t sock_port;

	struct mrc_qp *qps[MRC_MAX_QPS];	/* by slot, ours only */
	struct mrc_mr **mrs;
	int n_mrs, cap_mrs;

	void *rx_scratch;		/* receive batch buffers (recv.c) */
	unsigned int idle_polls;

	/* congestion windows (cc.c) */
	int fd_cc, fd_cc_owner, fd_cc_view, fd_cc_profiles, cc_epfd;
	struct mrc_cc_view *cc_view;	/* mmapped mrc_cc_view */
	struct mrc_cc_group cc[MRC_MAX_CC];
	uint64_t cc_sleeps;

	struct mrc_async_event async[64];
	uint32_t async_head, async_tail;
};

/* context.c */
int mrc_claim_slot(int owner_fd, uint32_t key, pid_t pid);
size_t mrc_array_map_len(size_t value_size, size_t entries);
struct mrc_mr *mrc_find_mr(struct mrc_context *ctx, uint32_t key);
void mrc_push_async(struct mrc_context *ctx, struct mrc_qp *qp,
		    enum mrc_async_event_type type, enum mrc_wc_status status);
uint64_t mrc_now_ns(void);
static inline uint64_t mrc_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ull + (uint64_t)ts->tv_nsec;
}
struct mrc_rx_state *mrc_rx_state_of(struct mrc_context *ctx, uint32_t slot);
struct mrc_tx_state *mrc_tx_state_of(struct mrc_context *ctx, uint32_t slot);

/* cq.c */
int mrc_cq_push(struct mrc_cq *cq, const struct mrc_wc *wc);

/* cc.c */
int mrc_cc_open(struct mrc_context *ctx);
void mrc_cc_close(struct mrc_context *ctx);
int mrc_cc_attach(struct mrc_qp *qp);
void mrc_cc_detach(struct mrc_qp *qp);
uint32_t mrc_cc_slot(const struct mrc_qp *qp);
void mrc_cc_refresh(struct mrc_qp *qp);
bool mrc_cc_has_room(const struct mrc_qp *qp);
bool mrc_cc_may_send(struct mrc_qp *qp);
bool mrc_cc_nearly_full(const struct mrc_qp *qp);
void mrc_cc_sent(struct mrc_qp *qp);
bool mrc_idle_wait(struct mrc_context *ctx);

/* qp.c */
void mrc_qp_to_error(struct mrc_qp *qp, enum mrc_wc_status first_status,
		     uint32_t psn);
int mrc_qp_publish_state(struct mrc_qp *qp);

/* paths.c */
void mrc_balance_evs(struct mrc_qp *qp, struct mrc_qp_evs *evs, uint32_t n);

/* send.c */
bool mrc_tx_wants_cpu(struct mrc_qp *qp);
bool mrc_tx_deadline(const struct mrc_qp *qp, uint64_t *deadline_ns);
void mrc_tx_progress(struct mrc_qp *qp);
void mrc_tx_handle_event(struct mrc_context *ctx, const struct mrc_event *evt);
void mrc_tx_reset(struct mrc_qp *qp);

/* recv.c */
int mrc_rx_progress(struct mrc_context *ctx);	/* packets taken */
void mrc_rx_send_acks(struct mrc_qp *qp);
int mrc_send_ctrl(struct mrc_context *ctx, const struct sockaddr_in6 *to,
		  const void *buf, size_t len);

/* The event-ring callback of libbpf's ring_buffer. */
int mrc_on_event(void *ctx, void *data, size_t size);

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

#endif /* MRC_INT_H */
