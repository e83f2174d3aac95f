/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The probe engine's insides, shared by its files (user/agent/probe_*.c);
 * probe_engine.h is its interface.
 *
 *   probe_engine.c  set-up, the poll loop and its tick, the sockets
 *   probe_scan.c    the slots it follows, the tables' scan, XDP's event
 *                   ring and the event log
 *   probe_send.c    an EV's probing: schedule, backoff, probes, answers
 *   probe_links.c   plane links, port status out and in
 *   probe_jobs.c    `mrcctl probe`
 *   probe_peers.c   who XDP serves endpoint messages for (mrc_known_peers,
 *                   mrc_probe_ports)
 *
 *   probe_walk.c    which slots exist: the walk every tick goes over
 *
 * Per QP slot the engine keeps what it knows of each EV (GOOD, ASSUMED_BAD
 * or DENIED) and the EV's probe state. It learns of slots from XDP's
 * events, from port status, and from a look at the `n_down` of each
 * table in the walk in its turn (PE_SLICE); it forgets a slot when its QP leaves
 * RTS or is created anew (mrc_tx generation), both read from the mmapped
 * mrc_tx. mrc_qps (one syscall) is read only when a slot is first looked at.
 *
 * The walk: the slots whose QP numbers are claimed in mrc_qp_owner (read
 * in one batch every PE_WALK_REFRESH_TICKS ticks' time or more) and the
 * slots the engine still holds something for. A tick looks at O(one part
 * of the QPs that exist), not O(mrcd --max-qps): a host sized for 65,536
 * QPs with ten in use looks at ten tables.
 */
#ifndef MRC_PROBE_INT_H
#define MRC_PROBE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/clock.h"
#include "agent/probe_engine.h"
#include "common/pins.h"
#include "common/state_maps.h"

#define MS_NS		1000000ull
#define PE_ANNOUNCES	16
#define PE_MAX_DESTS	512	/* distinct (plane, peer address) for port status */
#define PE_IDLE_FORGET_NS	(30000 * MS_NS)	/* quiet slots are let go after this */
#define PE_MASK_REFRESH_NS	(1000 * MS_NS)
#define PE_MAX_CANDIDATES	4096
#define ANNOUNCE_TIMES	3	/* a port status goes out 3 times */
/*
 * How often the walk learns of new QPs: every 10 ticks' time (20 ms), less
 * often above 1,280 QPs (2 ms more per 128 QPs, at most 100 ms: 64 ms at
 * 4,096), since a refresh reads the whole owner map: 1.6 ms at 4,096
 * QPs, which every 20 ms was 8% of a CPU. At the idle tick (20 ms) that
 * is a refresh every tick.
 */
#define PE_WALK_REFRESH_TICKS	10
#define PE_WALK_REFRESH_TICKS_MAX	50
#define PE_WALK_QPS_PER_TICK	128
/*
 * How many walked slots a tick looks at in turn. Each QP's tables are
 * pages of their own (per-QP state maps), so looking at every one of
 * 4,096 QPs every 2 ms tick took an mrcd 20% of a CPU (a page walk per
 * look, most of them missing the caches). A tick looks at the slots of
 * one of 2^k parts of the walk (slot & mask: QP numbers are random, so
 * the parts are even), enough parts that each holds about PE_SLICE: every
 * slot every tick up to 64 QPs, every 64 ticks (128 ms) at 4,096. An
 * idle tick (PE_IDLE_TICK_MS) looks at as many parts as the 2 ms ticks
 * it stands for, so a turn takes as long. What needs a look every tick
 * gets it anyway: a followed slot with something down, a QP being set up
 * (not yet RTR/RTS).
 */
#define PE_SLICE	64


/* What the engine has reported about an EV. */
enum known {
	KNOWN_GOOD,
	KNOWN_BAD,
	KNOWN_DENIED,	/* deny/allow report nothing: followed silently */
};

struct pe_ev {
	uint64_t next_ns;	/* next probe; 0 = none planned */
	uint64_t sent_ns;	/* the probe we wait for; 0 = none */
	uint64_t promoted_ns;	/* last return to GOOD by probes */
	uint16_t tag;		/* of the probe we wait for */
	uint8_t known;		/* enum known */
	uint8_t successes;	/* answered in a row */
	uint8_t shift;		/* interval = base << shift (flapping) */
};

struct pe_slot {
	uint32_t generation;	/* mrc_tx generation of the QP we know */
	uint32_t n_evs;
	bool quiet;		/* nothing down at the last look */
	uint64_t active_ns;	/* last time anything was down */
	struct mrc_qp_info info;
	struct pe_ev ev[MRC_MAX_EVS];
};

struct pe_plane {
	char name[IFNAMSIZ];
	int ifindex;
	bool up;
	bool has4, has6;
	uint8_t addr4[4], addr6[16];
	int sock4, sock6;
	uint16_t port4, port6;
};

/* A port status we repeat: at 0, 5 and 20 ms. */
struct pe_announce {
	uint64_t t0;
	uint8_t plane, status, sent;
};

struct pe_job {
	struct pe_job_req req;
	int fd;
	uint16_t port;
	uint32_t base_id;
	uint32_t sent, answered;
	bool waiting;
	bool done;
	uint64_t sent_ns, next_ns;
	uint64_t rtt_min, rtt_max, rtt_sum;
	uint64_t *rtt;		/* per probe; 0 = no answer */
	uint32_t *service;
	char *out;
	size_t out_len, out_cap;
};

/* An address mrcd has told XDP about (mrc_known_peers), and why. */
struct pe_known {
	uint8_t addr[16];
	uint32_t why;		/* MRC_KNOWN_* */
};

/*
 * What XDP serves endpoint messages for (probe_peers.c): the peers of the
 * QPs in RTR/RTS as last read (re-read when a slot's mmapped state or
 * generation moves), and what mrc_known_peers and mrc_probe_ports hold,
 * sorted, so that a change writes only the difference.
 */
typedef uint8_t pe_addrs_t[MRC_MAX_PEER_ADDRS][16];

struct pe_peers {
	/* Per slot, max_qps of each (allocated by size). */
	uint32_t *seen_state, *seen_gen;
	uint8_t *n_addrs;
	pe_addrs_t *addrs;
	struct pe_known installed[MRC_MAX_KNOWN_PEERS];
	struct pe_known want[MRC_MAX_KNOWN_PEERS];
	int n_installed;
	uint32_t ports[MRC_MAX_PROBE_PORTS];	/* in mrc_probe_ports */
	int n_ports;
	bool dirty;
};

struct profile_mask {
	uint64_t read_ns;
	uint32_t mask;
};

enum fd_kind { FD_TIMER, FD_RING, FD_LINK, FD_CTL, FD_PLANE, FD_JOB };

struct pe_fd {
	enum fd_kind kind;
	int plane;		/* FD_PLANE: index */
	struct pe_job *job;	/* FD_JOB */
};

/* The slots a tick goes over (probe_walk.c). */
struct pe_walk {
	uint32_t *slot;		/* [max_qps], n used */
	uint32_t n;
	uint32_t *pos;		/* [max_qps]: the slot's index in slot[] + 1; 0: not walked */
	uint8_t *hot;		/* [n], beside slot[]: looked at every tick, not in turn */
	uint32_t *keys, *vals;	/* [max_qps]: mrc_qp_owner read in batch */
	uint32_t *owner;	/* [max_qps]: the slot's mrc_qp_owner value at the last refresh */
	uint32_t *owned_at;	/* [max_qps]: the last refresh that found the slot claimed */
	uint32_t refreshes;	/* spreads the look at the slots' maps */
	uint32_t part_mask;	/* the walk's parts - 1 (a power of two; PE_SLICE) */
	uint32_t part;		/* this tick's first part: slots with slot & part_mask == part */
	uint32_t parts_now;	/* parts this tick looks at: its length in 2 ms ticks */
	uint32_t n_hot;		/* entries hot after the last tick's scan */
	uint64_t refreshed_ns;	/* when the last refresh was */
};

/*
 * A live QP's maps are looked up again (a system call) every this many
 * walk refreshes, or every walked QP / 64 refreshes if that is more: a
 * backstop only, since a QP gone cleanly reads RESET and a new owner of
 * the slot shows in mrc_qp_owner (both seen at the next refresh).
 */
#define PE_REMAP_REFRESHES	8
#define PE_REMAPS_PER_REFRESH	64

struct probe_engine {
	struct pe_setup cfg;
	uint32_t max_qps;	/* mrcd's limit, learned from the maps */
	struct mrc_pins pins;	/* the maps the engine uses, its own fds */
	struct pe_plane planes[MRC_MAX_PLANES_ABI];
	int timer_fd, link_fd, ctl_fd;
	uint32_t tick_ms;	/* the timer's interval now: PE_TICK_MS or PE_IDLE_TICK_MS */
	uint16_t agent_port;
	struct ring_buffer *ring;
	/* Each walked QP's EV table (CAS in place) and tx state, mapped. */
	struct mrc_state_maps evs;
	struct mrc_state_maps tx;
	struct pe_slot **slots;	/* [max_qps] */
	struct pe_walk walk;
	struct ev_log log;
	uint64_t counters[PE_N_COUNTERS];
	uint64_t best_rtt_ns;
	uint64_t xdp_lost, xdp_lost_read_ns;
	uint64_t *percpu;	/* mrc_ctl_stats of every CPU */
	int n_cpus;
	struct profile_mask masks[MRC_MAX_PROFILES];
	struct mrc_ev_profile_rec *prof_buf;
	struct pe_announce announce[PE_ANNOUNCES];
	struct pe_job *jobs[PE_MAX_JOBS];
	uint32_t job_ids;
	int budget;		/* probes left this tick */
	uint64_t now;		/* of the work being done */
	struct pe_fd fds[PE_MAX_FDS];
	struct pe_peers peers;
};

__attribute__((format(printf, 3, 4)))

/* An ASSUMED_BAD entry the scan found without an event. */
struct candidate {
	uint32_t slot;
	uint16_t idx;
};

/* What the engine has to say (a plane's link, a map it cannot write). */
__attribute__((format(printf, 2, 3)))
void pe_say(const struct probe_engine *pe, const char *fmt, ...);

/* ---- the tables (mmapped) ----------------------------------------------- */

/*
 * A walked slot's tables, as mapped at the last walk refresh (probe_walk.c);
 * NULL when the slot holds no QP. A slot without them reads as RESET.
 */
static inline struct mrc_qp_evs *qp_evs(const struct probe_engine *pe, uint32_t slot)
{
	return mrc_state_maps_peek(&pe->evs, slot);
}

static inline const struct mrc_tx_state *qp_tx(const struct probe_engine *pe,
					       uint32_t slot)
{
	return mrc_state_maps_peek(&pe->tx, slot);
}

static inline uint32_t tx_state(const struct probe_engine *pe, uint32_t slot)
{
	const struct mrc_tx_state *tx = qp_tx(pe, slot);

	return tx ? __atomic_load_n(&tx->state, __ATOMIC_ACQUIRE) : MRC_QPS_RESET;
}

static inline uint32_t tx_generation(const struct probe_engine *pe, uint32_t slot)
{
	const struct mrc_tx_state *tx = qp_tx(pe, slot);

	return tx ? __atomic_load_n(&tx->generation, __ATOMIC_ACQUIRE) : 0;
}

static inline uint32_t entry_word(const struct probe_engine *pe, uint32_t slot,
				  uint32_t idx)
{
	const struct mrc_qp_evs *evs = qp_evs(pe, slot);

	return evs ? __atomic_load_n(&evs->ev[idx].word, __ATOMIC_ACQUIRE) : 0;
}

static inline uint8_t known_of(uint8_t state)
{
	return state == MRC_EV_ASSUMED_BAD ? KNOWN_BAD :
	       state == MRC_EV_DENIED ? KNOWN_DENIED : KNOWN_GOOD;
}

/* ---- probe_scan.c ------------------------------------------------------- */

/* The slot's record if its QP is live (followed from now on), else NULL. */
struct pe_slot *pe_slot_get(struct probe_engine *pe, uint32_t slot);
bool pe_slot_has_peer(const struct pe_slot *s, const uint8_t addr[16]);
/* An event about entry idx of a slot, from what the table says now. */
void pe_record_change(struct probe_engine *pe, uint32_t slot, uint32_t idx,
		      uint8_t state, uint8_t prev, uint8_t reason);
/* Which slots deserve a look this tick, and the look. */
void pe_scan_slots(struct probe_engine *pe, struct candidate *cand, int *n_cand);
void pe_report_unreported(struct probe_engine *pe, const struct candidate *cand,
			  int n_cand);
/* ring_buffer__new()'s callback for mrc_ev_events. */
int pe_on_ring_event(void *ctx, void *data, size_t size);
void pe_drain_ring(struct probe_engine *pe);

/* ---- probe_walk.c ------------------------------------------------------- */

int pe_walk_open(struct probe_engine *pe);
void pe_walk_close(struct probe_engine *pe);
/* Learn of new QPs now (mrc_qp_owner), and let go of slots with nothing. */
void pe_walk_refresh(struct probe_engine *pe);
/* Each tick: a refresh every PE_WALK_REFRESH_TICKS or more, and the tick's part. */
void pe_walk_tick(struct probe_engine *pe);
/*
 * Does walk entry i get a look this tick: hot (a followed slot with
 * something down, a QP not yet RTR/RTS: pe_walk_settle()), or in this
 * tick's part of the walk (PE_SLICE)? Reads only the walk's own arrays.
 */
static inline bool pe_walk_due(const struct probe_engine *pe, uint32_t i)
{
	const struct pe_walk *w = &pe->walk;
	uint32_t part = w->slot[i] & w->part_mask;

	return w->hot[i] || ((part - w->part) & w->part_mask) < w->parts_now;
}
/* Look at the slot every tick from now on (an event, a plane's fault). */
void pe_walk_wake(struct probe_engine *pe, uint32_t slot);
/* After a tick's look at entry i: does it still need one every tick? */
void pe_walk_settle(struct probe_engine *pe, uint32_t i);
/* Make sure the slot is in the walk (a slot the engine starts following). */
void pe_walk_add(struct probe_engine *pe, uint32_t slot);

/* ---- probe_send.c ------------------------------------------------------- */

void pe_on_demoted(struct probe_engine *pe, struct pe_slot *s, uint32_t idx);
/* Demote entry idx for `reason`; true when it changed. */
bool pe_demote(struct probe_engine *pe, uint32_t slot, struct pe_slot *s,
	       uint32_t idx, uint8_t reason, enum pe_counter counter);
/* One ASSUMED_BAD entry we know of: time out its probe, or send the next. */
void pe_probe_step(struct probe_engine *pe, uint32_t slot, struct pe_slot *s,
		   uint32_t idx, uint32_t word);
/* An answer to one of our probes, from src: it counts only from the peer probed. */
void pe_on_probe_answer(struct probe_engine *pe, const uint8_t src[16],
			const struct mrc_eph *eph);
/* The plane's socket for an address's family, and its port. */
int pe_plane_sock(const struct pe_plane *p, const uint8_t addr[16], uint16_t *port);
int pe_send_ep(struct probe_engine *pe, int fd, const uint8_t dst[16],
	       const uint8_t *pkt);
/* RTT from the wire-edge stamps, or our own clock if TC/XDP left them out. */
uint64_t pe_answer_rtt(const struct mrc_eph *eph, uint64_t sent_ns, uint64_t now);

/* ---- probe_links.c ------------------------------------------------------ */

/* link_watch_read()'s callback. */
void pe_on_link_change(void *arg, int ifindex, bool up);
void pe_reread_links(struct probe_engine *pe);
void pe_on_port_status(struct probe_engine *pe, const uint8_t src[16],
		       const struct mrc_eph *eph);
void pe_announce_step(struct probe_engine *pe);

/* ---- probe_peers.c ------------------------------------------------------ */

/* Take what the maps hold (an earlier mrcd's entries are reconciled). */
void pe_peers_open(struct probe_engine *pe);
/* Each tick: re-read the QPs whose state moved; write what changed. */
void pe_peers_tick(struct probe_engine *pe);
/* Write mrc_known_peers and mrc_probe_ports now (a job starts or ends). */
void pe_peers_sync(struct probe_engine *pe);

/* ---- probe_jobs.c ------------------------------------------------------- */

void pe_job_step(struct probe_engine *pe, struct pe_job *job);
void pe_job_packet(struct probe_engine *pe, const uint8_t src[16], uint8_t opcode,
		   const struct mrc_eph *eph, void *arg);
void pe_job_free(struct pe_job *job);

#endif
