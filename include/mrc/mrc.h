/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc: the application interface of MRC-XDP.
 *
 * Verbs-like and deliberately small: a context, memory regions, completion
 * queues and reliable-connection QPs that do RDMA WRITE and WRITE with
 * immediate. The concepts follow MRC (QP states, MPR window, ACK timeout,
 * linear + exponential retries, WRITE-IMM limits, EV and CC profiles); the
 * names and layouts are our own.
 *
 * Conventions
 *  - Functions returning int return 0 on success or a negative errno (and
 *    also set errno). Functions returning a pointer return NULL and set
 *    errno. No function crashes on NULL or out-of-range arguments: it
 *    returns -EINVAL.
 *  - Progress is driven by the caller: mrc_poll_cq() sends queued packets,
 *    places received data, answers with SACKs and runs retransmission
 *    timers for every QP of the context. An application that waits must
 *    keep polling; when nothing moves, mrc_poll_cq() itself spins briefly
 *    and then sleeps until there is work (see mrc_add_wait_fd).
 *  - A context is not thread-safe: use one per thread.
 *  - mrcd must be running on the host: libmrc finds the fast path's maps
 *    pinned under /sys/fs/bpf/mrc/.
 */
#ifndef MRC_MRC_H
#define MRC_MRC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

struct mrc_context;
struct mrc_mr;
struct mrc_cq;
struct mrc_qp;

#define MRC_DEFAULT_PIN_DIR	"/sys/fs/bpf/mrc"
#define MRC_MAX_PLANES		8

/* ---- context ----------------------------------------------------------- */

struct mrc_context_attr {
	const char *pin_dir;	/* NULL = MRC_DEFAULT_PIN_DIR */
	uint16_t udp_port;	/* peers' MRC port; 0 = 4791 */
};

/*
 * Attach the process to the fast path mrcd loaded. NULL with errno on
 * failure: EMFILE when every context slot of the host is held by a live
 * process (mrcd --max-contexts, default 256; a message names the limit),
 * ENOENT when mrcd is not running, EPROTO for maps of another build.
 *
 * A root process opens mrcd's pinned maps itself; any other process needs
 * no privilege: it opens its context through mrcd's applications' socket
 * and gets its own QPs' maps only (docs/SECURITY.md, "Applications without
 * privileges"); the context then lives as long as that connection (a
 * restart of mrcd ends it). The environment variable MRC_VIA_MRCD=1 makes
 * a root process go through mrcd too, MRC_VIA_MRCD=0 makes any process
 * open the maps itself (EACCES without the privilege).
 */
struct mrc_context *mrc_open(const struct mrc_context_attr *attr);
int mrc_close(struct mrc_context *ctx);

/*
 * The addresses of the planes mrcd serves on this host, IPv4 and IPv6,
 * `family` AF_INET, AF_INET6 or AF_UNSPEC. Returns how many were stored.
 */
int mrc_local_addrs(struct mrc_context *ctx, int family,
		    struct sockaddr_storage *out, int max);

/* ---- memory regions ---------------------------------------------------- */

enum mrc_access_flags {
	MRC_ACCESS_LOCAL_WRITE	= 1 << 0,
	MRC_ACCESS_REMOTE_WRITE	= 1 << 1,	/* peers may WRITE into it */
};

/*
 * The key is drawn with getrandom() (never 0, unique in the context); NULL
 * and errno from getrandom if the kernel cannot give one.
 */
struct mrc_mr *mrc_reg_mr(struct mrc_context *ctx, void *addr, size_t length,
			  unsigned int access);
int mrc_dereg_mr(struct mrc_mr *mr);
uint32_t mrc_mr_lkey(const struct mrc_mr *mr);
uint32_t mrc_mr_rkey(const struct mrc_mr *mr);

/* ---- completion queues ------------------------------------------------- */

enum mrc_wc_status {
	MRC_WC_SUCCESS		= 0,
	MRC_WC_RETRY_EXC_ERR	= 1,	/* the peer stopped answering */
	MRC_WC_REM_ACCESS_ERR	= 2,	/* the peer refused the key or range */
	MRC_WC_WR_FLUSH_ERR	= 3,	/* the QP went to ERROR first */
	MRC_WC_REM_OP_ERR	= 4,	/* the peer's QP is in error */
	MRC_WC_LOC_PROT_ERR	= 5,	/* bad local key or range */
};

enum mrc_wc_opcode {
	MRC_WC_WRITE		= 0,	/* a WRITE or WRITE-IMM we sent */
	MRC_WC_RECV_WRITE_IMM	= 1,	/* a peer's WRITE-IMM arrived */
};

struct mrc_wc {
	uint64_t wr_id;
	enum mrc_wc_status status;
	enum mrc_wc_opcode opcode;
	uint32_t qp_num;
	uint32_t byte_len;	/* RECV_WRITE_IMM: message length */
	uint32_t imm_data;	/* RECV_WRITE_IMM: the immediate, host order */
};

struct mrc_cq *mrc_create_cq(struct mrc_context *ctx, int depth);
int mrc_destroy_cq(struct mrc_cq *cq);
/* Up to `n` completions; returns how many (0 if none) or -errno. */
int mrc_poll_cq(struct mrc_cq *cq, int n, struct mrc_wc *wc);
/*
 * When nothing is in flight, mrc_poll_cq() may sleep (up to 20 ms) until a
 * packet or event arrives. A file descriptor of the application's (e.g.
 * its control socket) added here ends such a sleep when it is readable.
 */
int mrc_add_wait_fd(struct mrc_context *ctx, int fd);
const char *mrc_wc_status_str(enum mrc_wc_status status);

/* ---- queue pairs ------------------------------------------------------- */

/* Same values as enum mrc_qp_state_code in include/mrc/abi.h. */
enum mrc_qp_state {
	MRC_QP_RESET	= 0,
	MRC_QP_INIT	= 1,
	MRC_QP_RTR	= 2,
	MRC_QP_RTS	= 3,
	MRC_QP_ERROR	= 4,
};

/*
 * Connection keys. Every QP draws a 32-bit key with getrandom() when it is
 * created (mrc_qp_key()); every packet addressed to the QP must carry it
 * in its BTH (docs/WIRE.md section 10), or the fast path drops it before
 * it changes anything. The peer learns it at connection set-up
 * (mrc_conn_params.key) and hands it to mrc_modify_qp() as dest_key.
 * Only someone who knows the key (the two QPs' processes, or whoever
 * reads their packets on the path) can inject packets into a connection;
 * a sender who only guesses hits with probability 2^-32 per packet.
 */
enum mrc_qp_create_flags {
	/*
	 * Interop mode, for a peer that knows no connection keys: the QP
	 * sends the InfiniBand bytes (reserved 0, partition key 0xFFFF,
	 * reserved 0) and checks nothing on receipt. It gives up the
	 * protection above: anyone who can send from the peer's address
	 * (another process on the peer host, an off-path sender spoofing it)
	 * can then ack, refuse or write into the connection.
	 */
	MRC_QP_INTEROP_NO_KEY	= 1 << 0,
	/*
	 * RoCEv2 invariant CRC (docs/WIRE.md section 12), for a peer (a NIC)
	 * that requires it: every DATA, SACK, NACK and PROBE packet carries
	 * a 4-byte ICRC trailer, filled by the fast path after the EV is
	 * chosen, and such a packet from the peer without a good one is
	 * dropped (drop reason bad_icrc). Both ends must agree. Its packets go one per datagram (no UDP GSO
	 * bursts: a burst's segments cannot carry an ICRC each).
	 */
	MRC_QP_ICRC		= 1 << 1,
};

/* The key bytes an interop QP sends (and mrc_qp_key() of one). */
#define MRC_QP_KEY_INTEROP	0x00ffff00u

struct mrc_qp_init_attr {
	struct mrc_cq *send_cq;
	struct mrc_cq *recv_cq;
	uint32_t max_send_wr;	/* outstanding WRITEs, <= 512 */
	uint32_t max_recv_wr;	/* posted receives for immediates */
	uint32_t max_sge;	/* scatter-gather entries per WRITE, <= 16 */
	uint32_t flags;		/* enum mrc_qp_create_flags; 0 = keyed */
};

struct mrc_qp_attr {
	enum mrc_qp_state qp_state;
	uint32_t path_mtu;		/* payload bytes per packet, 256..9000 */
	uint32_t sq_psn;		/* first PSN we send (24 bits) */
	uint32_t rq_psn;		/* first PSN we expect (24 bits) */
	uint32_t dest_qpn;
	uint8_t mpr_units;		/* window = mpr_units * 128 PSNs, 1..32 */
	uint8_t timeout;		/* local ACK timeout 1.024 us * 2^timeout, 0..24; 0 = none */
	uint8_t retry_cnt;		/* retries at a fixed interval, 0..7 */
	uint8_t exp_retry_cnt;		/* doubling retries, 0..25 (25 = forever) */
	uint16_t max_wimm_out;		/* WRITE-IMMs in flight we send */
	uint16_t max_wimm_in;		/* WRITE-IMMs in flight we accept */
	uint16_t ev_profile_id;
	uint16_t cc_profile_id;
	uint8_t n_peer_addrs;		/* the peer's plane addresses, plane 1 first:
					 * packets sprayed to plane p go to [p - 1] */
	struct sockaddr_storage peer_addrs[MRC_MAX_PLANES];
	uint32_t dest_key;		/* the peer QP's connection key (its
					 * mrc_qp_key()); needed for RTR unless
					 * the QP is MRC_QP_INTEROP_NO_KEY */
	uint32_t qp_key;		/* mrc_query_qp(): this QP's own key
					 * (read-only, as mrc_qp_key()) */
};

/* Which fields of struct mrc_qp_attr mrc_modify_qp() applies. */
enum mrc_qp_attr_mask {
	MRC_QP_ATTR_STATE	= 1 << 0,
	MRC_QP_ATTR_PATH_MTU	= 1 << 1,
	MRC_QP_ATTR_SQ_PSN	= 1 << 2,
	MRC_QP_ATTR_RQ_PSN	= 1 << 3,
	MRC_QP_ATTR_DEST_QPN	= 1 << 4,
	MRC_QP_ATTR_MPR		= 1 << 5,
	MRC_QP_ATTR_TIMEOUT	= 1 << 6,
	MRC_QP_ATTR_RETRY	= 1 << 7,	/* retry_cnt and exp_retry_cnt */
	MRC_QP_ATTR_WIMM	= 1 << 8,	/* max_wimm_out and max_wimm_in */
	MRC_QP_ATTR_EV_PROFILE	= 1 << 9,
	MRC_QP_ATTR_CC_PROFILE	= 1 << 10,
	MRC_QP_ATTR_PEER_ADDRS	= 1 << 11,
	MRC_QP_ATTR_DEST_KEY	= 1 << 12,
};

/*
 * The QP number is a free one of the host's 1..N, N being mrcd's
 * --max-qps (default 4096), drawn with getrandom() and claimed in
 * mrc_qp_owner, never one another live QP holds; ENOSPC (and a logged
 * message naming the limit) when all are taken. A QP's congestion window
 * takes one of N window slots too: ENOSPC from mrc_modify_qp to RTS when
 * none is left.
 */
struct mrc_qp *mrc_create_qp(struct mrc_context *ctx,
			     const struct mrc_qp_init_attr *attr);
int mrc_destroy_qp(struct mrc_qp *qp);
/*
 * Transitions as in verbs: RESET->INIT, INIT->RTR (needs DEST_QPN, RQ_PSN,
 * PEER_ADDRS, and DEST_KEY unless the QP is MRC_QP_INTEROP_NO_KEY),
 * RTR->RTS (needs SQ_PSN), any->ERROR, any->RESET (which forgets
 * dest_key; the QP's own key stays). A forbidden transition or a missing
 * attribute returns -EINVAL (with a log message saying which); so does a
 * dest_key of 0 or 0x00FFFF00 (no keyed QP draws them), or DEST_KEY on an
 * interop QP.
 */
int mrc_modify_qp(struct mrc_qp *qp, const struct mrc_qp_attr *attr, int mask);
int mrc_query_qp(struct mrc_qp *qp, struct mrc_qp_attr *attr);
uint32_t mrc_qp_num(const struct mrc_qp *qp);
/*
 * The key packets to this QP must carry: drawn with getrandom() at
 * creation, never 0 nor 0x00FFFF00; 0x00FFFF00 for an interop QP.
 */
uint32_t mrc_qp_key(const struct mrc_qp *qp);

/* ---- work requests ----------------------------------------------------- */

struct mrc_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

enum mrc_wr_opcode {
	MRC_WR_WRITE		= 0,
	MRC_WR_WRITE_WITH_IMM	= 1,
};

struct mrc_send_wr {
	uint64_t wr_id;
	enum mrc_wr_opcode opcode;
	const struct mrc_sge *sg_list;
	int num_sge;
	uint64_t remote_addr;
	uint32_t rkey;
	uint32_t imm_data;	/* host order */
};

/* Queue one WRITE. -EAGAIN when the send queue is full, -ENOTCONN unless RTS. */
int mrc_post_write(struct mrc_qp *qp, const struct mrc_send_wr *wr);

struct mrc_recv_wr {
	uint64_t wr_id;
};

/* A receive is consumed by each WRITE-IMM that arrives. */
int mrc_post_recv(struct mrc_qp *qp, const struct mrc_recv_wr *wr);

/* ---- asynchronous events ----------------------------------------------- */

enum mrc_async_event_type {
	MRC_EVENT_QP_FATAL	= 1,	/* the QP went to ERROR (retries, peer) */
	MRC_EVENT_QP_ACCESS_ERR	= 2,	/* a peer's WRITE was refused here */
};

struct mrc_async_event {
	enum mrc_async_event_type type;
	uint32_t qp_num;
	struct mrc_qp *qp;
	enum mrc_wc_status status;	/* why */
};

/* Next pending event: 0, or -EAGAIN when there is none. */
int mrc_get_async_event(struct mrc_context *ctx, struct mrc_async_event *ev);

/* ---- transport statistics of one QP ------------------------------------ */

/*
 * How a context waited inside mrc_poll_cq() (all its QPs): a round that
 * finds nothing to do starts an idle spell; the context polls (spins) for
 * a short, adaptive time, then sleeps in epoll until an event, a packet,
 * a wait fd (mrc_add_wait_fd), a pace or retransmission deadline.
 */
struct mrc_wait_stats {
	uint64_t spins;			/* rounds that found nothing to do */
	uint64_t spin_ns;		/* time spent in them, before work or a sleep */
	uint64_t sleeps;		/* epoll sleeps */
	uint64_t sleep_ns;		/* time asleep */
	uint64_t woken;			/* sleeps ended by a packet, event or wait fd */
	uint64_t pace_sleeps;		/* sleeps until a pacing deadline */
	uint64_t spin_limit_ns;		/* the spin budget now (adaptive) */
	uint64_t yields;		/* sched_yield() calls while spinning */
	uint64_t socket_full_sleeps;	/* sleeps until the full data socket had room */
	/*
	 * Times the event ring's reader told the kernel it had caught up
	 * (before a sleep, or a quarter of the ring read): only then may the
	 * next event cost a wakeup; while the context polls, events wake
	 * nobody.
	 */
	uint64_t ring_publishes;
};

struct mrc_qp_counters {
	uint64_t tx_packets, tx_bytes, tx_retransmits;
	uint64_t timeouts, fast_retransmits;
	uint64_t rx_packets, rx_bytes, rx_duplicates;
	uint64_t sacks_sent, nacks_sent;
	uint64_t ev_timeouts;		/* EVs a timeout demoted to ASSUMED_BAD */
	uint64_t always_skip_sent;	/* SACKs carrying the ALWAYS_SKIP verdict */
	uint64_t cc_blocked;		/* sends held back by the congestion window */
	uint64_t retx_bytes;		/* payload bytes resent */
	uint32_t cc_slot;		/* the QP's window: 1-based mrc_cc_view slot, 0 none */
	uint32_t pad;
	uint64_t cc_sleeps;		/* = wait.sleeps (all its QPs) */
	uint64_t cc_paced;		/* sends the pacing held back (window had room) */
	uint64_t rx_truncated;		/* the context dropped datagrams over its receive
					 * buffer (MSG_TRUNC), unplaced (all its QPs) */
	uint64_t completions_reclaimed;	/* WRITEs libmrc retired itself, all acked (XDP's ring full) */
	uint64_t rx_bad_key;		/* packets that reached libmrc's socket with
					 * a wrong key, dropped (XDP counts its own
					 * drops as BAD_KEY) */
	uint64_t sack_reneges;		/* timeouts that found snd_una SACKed yet not
					 * cumulatively acked, and resent it anyway */
	uint64_t sacks_coalesced;	/* ack requests answered by a later SACK of the
					 * same receive batch */
	uint64_t tx_gso_sends;		/* UDP GSO datagrams of 2 or more packets
					 * (one EV each; EV profile gso_burst) */
	uint64_t gso_fallbacks;		/* the kernel refused UDP_SEGMENT: the context
					 * sends one packet a datagram from then on */
	struct mrc_wait_stats wait;	/* the context's waits (all its QPs) */
	uint64_t tail_probes;		/* times the newest unacked packets were resent
					 * after a probe timeout (2 x smoothed RTT)
					 * without progress, before the retransmission
					 * timeout: a lost tail has no later packet
					 * whose SACK would show it missing */
	uint64_t resends_held;		/* resends a NACK of a resend asked for, held
					 * until a minimum RTT after that resend (one
					 * send of a PSN per RTT, whatever NACKs say) */
	uint64_t plane_sends_refused;	/* datagrams to the peer on a plane of the QP's
					 * own rotation that the route refused (the
					 * link down): the context passes that plane
					 * over for MRC_PLANE_RETRY_MS, the packets go
					 * again on the others */
};
/* How long a plane whose route refused a send is passed over. */
#define MRC_PLANE_RETRY_MS	100
int mrc_qp_counters(struct mrc_qp *qp, struct mrc_qp_counters *out);

/* ---- messages ---------------------------------------------------------- */

enum mrc_log_level {
	MRC_LOG_ERROR	= 0,
	MRC_LOG_WARN	= 1,
	MRC_LOG_INFO	= 2,
	MRC_LOG_DEBUG	= 3,
};

/*
 * libmrc says what a return code cannot (which pinned map is missing,
 * which profile to create) in one-line messages: `msg` has no "libmrc: "
 * prefix and no newline. By default each is printed to stderr as
 * "libmrc: MSG\n". mrc_set_log_fn() hands them to `fn` instead, for the
 * whole process (every context); fn NULL restores the default. Set it
 * before mrc_open(): the setting is not synchronised with threads using
 * libmrc at the same time.
 */
typedef void (*mrc_log_fn)(int level, const char *msg, void *arg);
void mrc_set_log_fn(mrc_log_fn fn, void *arg);

/*
 * The version of libmrc, e.g. "0.18.0" (the VERSION file of the source
 * tree; mrcd --version prints the same for the agent).
 */
const char *mrc_version(void);

/* ---- out-of-band connection set-up over TCP ---------------------------- */

/* What each side tells the other to connect one QP and one region. */
struct mrc_conn_params {
	uint32_t qpn;
	uint32_t psn;		/* first PSN this side will send */
	uint32_t rkey;		/* region the peer may write, 0 = none */
	uint32_t path_mtu;
	uint64_t vaddr;
	uint64_t length;
	uint8_t n_addrs;
	struct sockaddr_storage addrs[MRC_MAX_PLANES];
	uint32_t key;		/* this side's mrc_qp_key(): the peer's dest_key */
};

/*
 * Sends ours, receives theirs on a connected TCP socket. 0 or -errno;
 * -EPROTONOSUPPORT (and a log message) when the peer speaks another
 * version of the exchange, e.g. an MRC-XDP without connection keys.
 */
int mrc_conn_exchange(int fd, const struct mrc_conn_params *local,
		      struct mrc_conn_params *remote);
/* A listening TCP socket on `port` (IPv6, also accepting IPv4). */
int mrc_conn_listen(uint16_t port);
/* A TCP connection to host:port (name or address). fd or -errno. */
int mrc_conn_connect(const char *host, uint16_t port, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif /* MRC_MRC_H */
