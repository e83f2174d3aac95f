/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc internals, layer "base" (see LAYERS): the objects behind the
 * opaque handles of mrc.h. Data only: every layer reads and writes the
 * fields it owns, and the functions live in the layers' own headers.
 * Nothing here is API.
 */
#ifndef MRC_OBJECTS_H
#define MRC_OBJECTS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <netinet/in.h>
#include <bpf/libbpf.h>

#include "mrc/abi.h"
#include "common/pins.h"
#include "common/event_ring.h"
#include "common/qpmaps.h"
#include "mrc/mrc.h"

#define MRC_MAX_SGE		16
#define MRC_MAX_PKT		9216	/* largest datagram we send or take */
#define MRC_RX_BATCH		32	/* datagrams per recvmmsg */
#define MRC_TX_BATCH		32	/* datagrams per sendmmsg */
#define MRC_TX_PKTS		64	/* packets in them (UDP GSO: several a datagram) */
#define MRC_ACK_EVERY		16	/* ACK_REQ / SACK at least every N packets */

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

#define MRC_NOT_LISTED		UINT32_MAX

struct mrc_qp;

/* A QP's place on one FIFO (worklist.c): the next QP, and whether it is on. */
struct mrc_qp_link {
	struct mrc_qp *next;
	bool on;
};

/* A first-in first-out list of QPs, linked through the QPs themselves. */
struct mrc_qp_fifo {
	struct mrc_qp *head, *tail;
	uint32_t n;
};

/* A congestion window of this context: one per destination (cc.c). */
struct mrc_cc_group {
	uint8_t peer[16];		/* the destination (its first plane address) */
	uint32_t slot;			/* index into mrc_cc and mrc_cc_view */
	bool claimed;			/* slot held (host.h mrc_host_cc_claim) */
	uint32_t refs;			/* QPs sharing it (freed at 0) */
	uint64_t inflight;		/* bytes, summed over those QPs */
	bool pacing;			/* spread new packets over the RTT */
	uint64_t pace_next_ns;		/* the next paced packet's departure */
	uint32_t ack_unit;		/* bytes XDP counts per acked packet (profile MTU) */
	bool armed;			/* asked for a wakeup in this sleep, at wake_at */
	uint64_t wake_at;		/* acked bytes that end it (view.wake_acked) */
	struct mrc_cc_view *view;	/* its own map in mrc_cc_view, mmapped */
	struct mrc_qp_fifo waiters;	/* QPs the window held back (progress.c) */
};

struct mrc_qp {
	struct mrc_context *ctx;
	uint32_t qpn;
	uint32_t slot;
	uint32_t own_idx;		/* where it is in ctx->own */
	/*
	 * Where the progress engine keeps it (progress.c): on the context's
	 * ready list (something happened to it), on its window's waiters (a
	 * send the congestion window held back), on the list of QPs with
	 * packets out (their timers and window shares).
	 */
	struct mrc_qp_link ready_link;
	struct mrc_qp_link wait_link;
	uint32_t out_idx;		/* in ctx->out; MRC_NOT_LISTED when not */
	enum mrc_qp_state state;
	struct mrc_qp_init_attr init;
	struct mrc_qp_attr attr;
	struct mrc_qp_counters counters;
	/*
	 * What packets to this QP carry (MRC_KEY_INTEROP for an interop QP);
	 * what ours to the peer carry is attr.dest_key (mrc_qp_dest_key()).
	 */
	uint32_t local_key;
	struct sockaddr_in6 peers[MRC_MAX_PLANES];	/* data goes to peers[0] */
	uint8_t peer_keys[MRC_MAX_PLANES][16];	/* as the maps hold them */
	uint8_t n_peers;
	bool maps_installed;
	uint32_t n_evs;			/* entries in the QP's EV table */
	uint8_t ev_format;		/* enum mrc_ev_format */
	uint32_t srv6_block;		/* MRC_EVF_SRV6: the profile's locator block */
	/* New packets per UDP GSO send, from the EV profile; 0 or 1 = no GSO. */
	uint32_t gso_burst;
	/*
	 * Planes the QP's datagrams go round (send.c datagram_plane): each to
	 * the peer's address on the next of tx_planes planes, so it reaches
	 * TC on the plane its EV will be of (MRC_QP_F_SENDER_PLANE). 0 or 1:
	 * all to peers[0], TC moves them.
	 */
	uint8_t tx_planes;
	uint32_t tx_plane_next;
	/*
	 * Planes (bit plane - 1) with no EV that may carry data (all
	 * ASSUMED_BAD, DENIED or backups), as the EV table read at
	 * planes_seen_ns: the rotation passes them over, so TC need not move
	 * their share (send.c look_at_planes).
	 */
	uint32_t planes_unusable;
	uint64_t planes_seen_ns;

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
	/*
	 * Resends held until their time (send.c hold_retx): PSN and due time
	 * (CLOCK_MONOTONIC ns), a ring of MRC_WINDOW_MAX in arrival order.
	 */
	uint32_t *held_psn;
	uint64_t *held_due_ns;
	uint32_t held_head, held_tail;
	__u64 *retx_queued;		/* bitmap by psn % window */
	uint32_t una_seen;		/* snd_una at the last timer check */
	uint64_t rto_deadline_ns;
	uint32_t retries;
	uint64_t progress_ns;		/* when una_seen last moved (send.c's tail probe) */
	uint64_t last_new_ns;		/* when the newest new packet went out */
	uint8_t tail_probed;		/* tail probes sent since the last progress */
	struct mrc_cc_group *cc;	/* the destination's window, NULL = none */
	uint64_t cc_inflight;		/* this QP's bytes in it */
	bool cc_blocked;		/* the window held a send back this round */

	/* responder */
	struct mrc_rx_state *rx;	/* mmapped, shared with XDP */
	struct mrc_qp_evs *evs;		/* mmapped EV table, shared with TC and XDP */
	int log_fd;			/* its send log map (send.c reads it); -1: none */
	uint32_t state_idx;		/* its entry in the state maps (mrc_qp_info) */
	uint32_t state_block;		/* which of ctx->state_blocks (direct) */
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
	uint32_t acks_requested;	/* ACK_REQs the next SACK answers (recv.c) */
	uint32_t sack_hole_off;		/* the last hole window shown, from cack + 1 */
	bool sack_due;
	bool sack_listed;		/* in the receive batch's owed SACKs (recv.c) */
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

	struct mrc_pins pins;		/* the pinned maps, by enum mrc_pin */
	/* Each QP's inner maps: state, send log, per-EV counters. */
	struct mrc_qpmaps qpmaps;
	struct mrc_state_blocks state_blocks;	/* its QPs' state entries (direct) */

	uint32_t ctx_slot;
	bool ctx_claimed;
	int ring_fd;
	struct mrc_event_ring ring;	/* XDP's events; read lagging (event_ring.h) */

	int sock;
	uint16_t sock_port;
	int broker_fd;			/* mrcd's broker (host.h); -1: direct */
	bool gso_refused;		/* the kernel refused UDP_SEGMENT: bursts of 1 (send.c) */
	/*
	 * Planes whose route refused a datagram (the link is down, its routes
	 * gone): bit p - 1. The QPs' own plane choice passes them over until
	 * planes_refused_until (CLOCK_MONOTONIC ns), then tries again (send.c).
	 */
	uint32_t planes_refused;
	uint64_t planes_refused_until;

	/*
	 * Our QPs: by slot (pins.max_qps of them, mrcd's --max-qps) to find
	 * one a packet or an event names, and dense (n_own of them) for the
	 * rounds of progress, so a round costs what this context has, not
	 * what the host could have.
	 */
	struct mrc_qp **qps;
	struct mrc_qp **own;
	uint32_t n_own, cap_own;
	struct mrc_mr **mrs;
	int n_mrs, cap_mrs;
	/*
	 * What a round of progress visits (progress.c): the ready list, the
	 * windows' waiters, a slice of the QPs with packets out (out, n_out
	 * of them; out_cursor where the next slice starts) and a slice of all
	 * (sweep_cursor), so a round costs the QPs with something to do, not
	 * every QP of the context.
	 */
	struct mrc_qp_fifo ready;
	struct mrc_qp **out;
	uint32_t n_out, cap_out, out_cursor;
	uint32_t sweep_cursor;

	void *rx_scratch;		/* receive batch buffers (recv.c) */
	uint64_t rx_truncated;		/* datagrams over them, dropped (recv.c) */
	int idle_epfd;			/* what ends an idle sleep (progress.c) */
	/*
	 * The idle wait (progress.c): when the current idle spell began (0 =
	 * the last round did work), how long a spell is spun before sleeping
	 * (adapted to the spells seen), and what the waits cost, for
	 * mrc_qp_counters (mrc_wait_stats in mrc.h).
	 */
	uint64_t idle_since_ns;
	uint64_t spin_from_ns;		/* the spin's start (the spell's, or the last wakeup) */
	uint64_t spin_limit_ns;
	unsigned int deaf_rounds;	/* rounds in a row that read nothing */
	bool woke_from_sleep;		/* the spell's last spin began at a wakeup */
	/*
	 * What judge_wake() needs: a sleep a packet ended is judged by the
	 * packet's arrival (the kernel's stamp) from the spell's start, not
	 * by when we woke (in a VM a wakeup takes 10-20 us).
	 */
	uint64_t spell_start_real_ns;	/* CLOCK_REALTIME at the spell's start */
	uint64_t wake_slept_ns;		/* the sleep being judged, 0 = none */
	uint64_t rx_first_arrival_ns;	/* of the last mrc_rx_progress's first keyed packet */
	/*
	 * The data socket refused a send (its send buffer is full: the
	 * packets wait in a qdisc below a slower link). Until it has room
	 * again, sends wait and do not keep the context awake: each round
	 * asks the socket for an eighth of its buffer free, the idle wait
	 * sleeps on its EPOLLOUT (progress.c).
	 */
	bool sock_full;
	struct mrc_wait_stats wait;

	/* congestion windows (cc.c) */
	struct mrc_cc_group **cc;	/* the windows in use, n_cc of them */
	uint32_t n_cc, cap_cc;

	struct mrc_async_event async[64];
	uint32_t async_head, async_tail;

	/* Recent path discoveries, reused by QPs to the same peer (discover.c). */
	struct mrc_path_cache *path_cache;
	/* The send batch the QPs share within a progress round (send.c). */
	struct tx_batch *tx_batch;
	struct ack_batch *ack_batch;	/* and the SACKs (recv.c) */
};

#endif /* MRC_OBJECTS_H */
