// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcd's fault tolerance engine; see probe_engine.h.
 *
 * Per QP slot the engine keeps what it knows of each EV (GOOD, ASSUMED_BAD
 * or DENIED) and the EV's probe state. It learns of slots from XDP's
 * events, from port status, and from a cheap look at every table's
 * `n_down` each tick; it forgets a slot when its QP leaves RTS or is
 * created anew (mrc_tx generation), both read from the mmapped mrc_tx.
 * mrc_qps (one syscall) is read only when a slot is first looked at.
 */
#define _GNU_SOURCE
#include "agent/probe_engine.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <arpa/inet.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/ev_state.h"
#include "agent/probe_net.h"

#define MS_NS		1000000ull
#define PE_ANNOUNCES	16
#define PE_MAX_DESTS	512	/* distinct (plane, peer address) for port status */
#define PE_IDLE_FORGET_NS	(30000 * MS_NS)	/* quiet slots are let go after this */
#define PE_MASK_REFRESH_NS	(1000 * MS_NS)
#define PE_MAX_CANDIDATES	4096

const char *const pe_counter_names[PE_N_COUNTERS] = {
	[PE_PROBES_SENT] = "probes_sent",
	[PE_PROBES_ANSWERED] = "probes_answered",
	[PE_PROBES_TIMED_OUT] = "probes_timed_out",
	[PE_PROBES_SEND_FAILED] = "probes_send_failed",
	[PE_PROBE_ANSWERS_STALE] = "probe_answers_stale",
	[PE_PROMOTIONS] = "promotions",
	[PE_DEMOTIONS_PORT_DOWN] = "demotions_port_down",
	[PE_DEMOTIONS_PEER_PORT_DOWN] = "demotions_peer_port_down",
	[PE_DEMOTE_REFUSED] = "demote_refused",
	[PE_FOUND_UNREPORTED] = "found_unreported",
	[PE_PORT_STATUS_SENT] = "port_status_sent",
	[PE_PORT_STATUS_RX] = "port_status_rx",
	[PE_PORT_STATUS_IGNORED] = "port_status_ignored",
	[PE_EVENTS] = "events",
	[PE_EVENTS_MASKED] = "events_masked",
	[PE_EVENTS_SLOW_READER] = "events_slow_reader",
	[PE_MANUAL_PROBES_SENT] = "manual_probes_sent",
	[PE_MANUAL_PROBES_ANSWERED] = "manual_probes_answered",
};

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
static const uint64_t announce_at_ms[] = { 0, 5, 20 };
#define ANNOUNCE_TIMES	(sizeof(announce_at_ms) / sizeof(announce_at_ms[0]))

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

struct probe_engine {
	struct pe_setup cfg;
	struct pe_plane planes[MRC_MAX_PLANES_ABI];
	int timer_fd, link_fd, ctl_fd;
	uint16_t agent_port;
	struct ring_buffer *ring;
	struct mrc_qp_evs *evs;
	const struct mrc_tx_state *tx;
	size_t tx_map_len;
	struct pe_slot *slots[MRC_MAX_QPS];
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
};

__attribute__((format(printf, 3, 4)))
static void say(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- the tables --------------------------------------------------------- */

static uint32_t tx_state(const struct probe_engine *pe, uint32_t slot)
{
	return __atomic_load_n(&pe->tx[slot].state, __ATOMIC_ACQUIRE);
}

static uint32_t tx_generation(const struct probe_engine *pe, uint32_t slot)
{
	return __atomic_load_n(&pe->tx[slot].generation, __ATOMIC_ACQUIRE);
}

static uint32_t entry_word(const struct probe_engine *pe, uint32_t slot, uint32_t idx)
{
	return __atomic_load_n(&pe->evs[slot].ev[idx].word, __ATOMIC_ACQUIRE);
}

static uint8_t known_of(uint8_t state)
{
	return state == MRC_EV_ASSUMED_BAD ? KNOWN_BAD :
	       state == MRC_EV_DENIED ? KNOWN_DENIED : KNOWN_GOOD;
}

static void forget_slot(struct probe_engine *pe, uint32_t slot)
{
	free(pe->slots[slot]);
	pe->slots[slot] = NULL;
}

/*
 * Start following a live QP. ASSUMED_BAD entries are taken as not
 * reported yet: the next scan reports them (their cause is unknown to us)
 * and probes them. DENIED ones are the controller's and stay as they are.
 */
static struct pe_slot *watch_slot(struct probe_engine *pe, uint32_t slot)
{
	struct mrc_qp_info info;
	struct pe_slot *s;
	uint32_t gen, i;

	if (tx_state(pe, slot) != MRC_QPS_RTS)
		return NULL;
	gen = tx_generation(pe, slot);
	if (bpf_map_lookup_elem(pe->cfg.fd_qps, &slot, &info) ||
	    info.state != MRC_QPS_RTS)
		return NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->generation = gen;
	s->info = info;
	s->n_evs = info.n_evs < MRC_MAX_EVS ? info.n_evs : MRC_MAX_EVS;
	s->active_ns = pe->now;
	for (i = 0; i < s->n_evs; i++) {
		uint8_t st = MRC_EV_WORD_STATE(entry_word(pe, slot, i));

		s->ev[i].known = st == MRC_EV_DENIED ? KNOWN_DENIED : KNOWN_GOOD;
	}
	pe->slots[slot] = s;
	return s;
}

static bool slot_current(const struct probe_engine *pe, uint32_t slot,
			 const struct pe_slot *s)
{
	return tx_state(pe, slot) == MRC_QPS_RTS &&
	       tx_generation(pe, slot) == s->generation;
}

/* The slot's record if its QP is live (followed from now on), else NULL. */
static struct pe_slot *slot_get(struct probe_engine *pe, uint32_t slot)
{
	struct pe_slot *s = pe->slots[slot];

	if (s && slot_current(pe, slot, s))
		return s;
	if (s)
		forget_slot(pe, slot);
	return watch_slot(pe, slot);
}

static bool slot_has_peer(const struct pe_slot *s, const uint8_t addr[16])
{
	for (int k = 0; k < s->info.n_peer_addrs && k < MRC_MAX_PEER_ADDRS; k++)
		if (!memcmp(s->info.peer_addrs[k], addr, 16))
			return true;
	return false;
}

/* ---- events ------------------------------------------------------------- */

static uint64_t xdp_events_lost(struct probe_engine *pe)
{
	size_t stride = (sizeof(struct mrc_ctl_stats) + 7) & ~(size_t)7;
	uint32_t key = 0;
	uint64_t sum = 0;

	/* A per-CPU lookup is a syscall: once a tick is plenty. */
	if (pe->now - pe->xdp_lost_read_ns < PE_TICK_MS * MS_NS)
		return pe->xdp_lost;
	pe->xdp_lost_read_ns = pe->now;
	if (bpf_map_lookup_elem(pe->cfg.fd_ctl_stats, &key, pe->percpu))
		return pe->xdp_lost;
	for (int cpu = 0; cpu < pe->n_cpus; cpu++) {
		const struct mrc_ctl_stats *cs =
			(const void *)((const char *)pe->percpu + (size_t)cpu * stride);

		sum += cs->ev_events_lost;
	}
	pe->xdp_lost = sum;
	return sum;
}

/* The profile's event_mask, re-read at most once a second (it may change). */
static uint32_t profile_mask(struct probe_engine *pe, uint16_t id)
{
	struct profile_mask *m;
	uint32_t key = id;

	if (id >= MRC_MAX_PROFILES)
		return 0;
	m = &pe->masks[id];
	if (m->read_ns && pe->now - m->read_ns < PE_MASK_REFRESH_NS)
		return m->mask;
	m->read_ns = pe->now;
	m->mask = bpf_map_lookup_elem(pe->cfg.fd_ev_profiles, &key, pe->prof_buf) ?
		  0 : pe->prof_buf->event_mask;
	return m->mask;
}

static void record(struct probe_engine *pe, struct ev_record *r)
{
	if (!ev_mask_reports(profile_mask(pe, r->profile), r->state)) {
		pe->counters[PE_EVENTS_MASKED]++;
		return;
	}
	r->dropped = xdp_events_lost(pe) + pe->log.sub_dropped;
	ev_log_add(&pe->log, r);
	pe->counters[PE_EVENTS]++;
}

/* An event about entry idx of a slot, from what the table says now. */
static void record_change(struct probe_engine *pe, uint32_t slot, uint32_t idx,
			  uint8_t state, uint8_t prev, uint8_t reason)
{
	const struct mrc_qp_evs *evs = &pe->evs[slot];
	uint32_t w = entry_word(pe, slot, idx);
	struct ev_record r = {
		.time_ns = pe->now,
		.qpn = slot + 1,
		.ev = evs->ev[idx].ev,
		.idx = (uint16_t)idx,
		.plane = MRC_EV_WORD_PLANE(w),
		.profile = evs->profile,
		.state = state,
		.prev_state = prev,
		.reason = reason,
	};

	record(pe, &r);
}

/* ---- probing state ------------------------------------------------------ */

static uint64_t interval_ns(const struct probe_engine *pe, const struct pe_ev *e)
{
	return ((uint64_t)pe->cfg.probe_interval_ms * MS_NS) << e->shift;
}

static uint64_t timeout_ns(const struct probe_engine *pe)
{
	uint64_t t = 4 * pe->best_rtt_ns;

	return t > PE_TIMEOUT_MIN_MS * MS_NS ? t : PE_TIMEOUT_MIN_MS * MS_NS;
}

/*
 * The EV is ASSUMED_BAD now (and reported). Probing starts one interval
 * later; an EV that fails again soon after it recovered is flapping, and
 * waits twice as long each time (every calm PE_CALM_MS undoes a doubling).
 */
static void on_demoted(struct probe_engine *pe, struct pe_slot *s, uint32_t idx)
{
	struct pe_ev *e = &s->ev[idx];
	uint64_t since, calm;

	e->known = KNOWN_BAD;
	e->successes = 0;
	e->sent_ns = 0;
	if (e->promoted_ns) {
		since = pe->now - e->promoted_ns;
		calm = since / (PE_CALM_MS * MS_NS);
		e->shift = e->shift > calm ? (uint8_t)(e->shift - calm) : 0;
		if (since < PE_FLAP_WINDOW_MS * MS_NS && e->shift < PE_MAX_SHIFT)
			e->shift++;
	}
	e->next_ns = pe->now + interval_ns(pe, e);
	s->active_ns = pe->now;
}

/* Demote entry idx for `reason`; true when it changed. */
static bool demote(struct probe_engine *pe, uint32_t slot, struct pe_slot *s,
		   uint32_t idx, uint8_t reason, enum pe_counter counter)
{
	uint8_t before = MRC_EV_WORD_STATE(entry_word(pe, slot, idx));

	switch (ev_demote(&pe->evs[slot], s->n_evs, idx, 0)) {
	case EV_CHANGED:
		on_demoted(pe, s, idx);
		pe->counters[counter]++;
		record_change(pe, slot, idx, MRC_EV_ASSUMED_BAD,
			      before == MRC_EV_SKIP ? MRC_EV_SKIP : MRC_EV_GOOD, reason);
		return true;
	case EV_REFUSED:
		pe->counters[PE_DEMOTE_REFUSED]++;
		return false;
	default:
		return false;
	}
}

static void promote(struct probe_engine *pe, uint32_t slot, struct pe_slot *s,
		    uint32_t idx)
{
	struct pe_ev *e = &s->ev[idx];

	e->successes = 0;
	e->next_ns = 0;
	if (ev_promote(&pe->evs[slot], s->n_evs, idx) != EV_CHANGED) {
		/* Denied (or allowed) meanwhile: the controller decides. */
		e->known = known_of(MRC_EV_WORD_STATE(entry_word(pe, slot, idx)));
		return;
	}
	e->known = KNOWN_GOOD;
	e->promoted_ns = pe->now;
	pe->counters[PE_PROMOTIONS]++;
	record_change(pe, slot, idx, MRC_EV_GOOD, MRC_EV_ASSUMED_BAD,
		      MRC_EVR_PROBES_OK);
}

/* ---- sending probes ----------------------------------------------------- */

static int plane_sock(const struct pe_plane *p, const uint8_t addr[16], uint16_t *port)
{
	if (addr_is_v4mapped(addr)) {
		*port = p->port4;
		return p->sock4;
	}
	*port = p->port6;
	return p->sock6;
}

static int send_ep(struct probe_engine *pe, int fd, const uint8_t dst[16],
		   const uint8_t *pkt)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_to_sockaddr(dst, pe->cfg.udp_port, &ss);

	if (sendto(fd, pkt, EP_PKT_LEN, MSG_DONTWAIT, (struct sockaddr *)&ss, len) < 0)
		return -errno;
	return 0;
}

/* req_id of an automatic probe: slot, entry and a tag against stale answers. */
static uint32_t probe_req_id(uint32_t slot, uint32_t idx, uint16_t tag)
{
	return slot << 24 | idx << 16 | tag;
}

static int send_ev_probe(struct probe_engine *pe, uint32_t slot, struct pe_slot *s,
			 uint32_t idx, uint16_t plane)
{
	uint8_t pkt[EP_PKT_LEN];
	struct pe_ev *e = &s->ev[idx];
	const struct pe_plane *p;
	uint16_t port;
	int fd, rc;

	if (plane < 1 || plane > pe->cfg.n_planes || plane > s->info.n_peer_addrs)
		return -ENOENT;
	p = &pe->planes[plane - 1];
	if (!p->up)
		return -ENETDOWN;	/* the link's return will call the probes */
	fd = plane_sock(p, s->info.peer_addrs[plane - 1], &port);
	if (fd < 0)
		return -EAFNOSUPPORT;
	e->tag++;
	ep_build_probe(pkt, probe_req_id(slot, idx, e->tag), pe->evs[slot].ev[idx].ev,
		       (uint8_t)plane, port);
	rc = send_ep(pe, fd, s->info.peer_addrs[plane - 1], pkt);
	if (rc) {
		pe->counters[PE_PROBES_SEND_FAILED]++;
		return rc;
	}
	e->sent_ns = pe->now;
	pe->budget--;
	pe->counters[PE_PROBES_SENT]++;
	return 0;
}

/* One ASSUMED_BAD entry we know of: time out its probe, or send the next. */
static void probe_step(struct probe_engine *pe, uint32_t slot, struct pe_slot *s,
		       uint32_t idx, uint32_t word)
{
	struct pe_ev *e = &s->ev[idx];

	if (e->sent_ns) {
		if (pe->now - e->sent_ns < timeout_ns(pe))
			return;
		pe->counters[PE_PROBES_TIMED_OUT]++;
		e->sent_ns = 0;
		e->successes = 0;
		e->next_ns = pe->now + interval_ns(pe, e);
		return;
	}
	if (!e->next_ns)
		e->next_ns = pe->now + interval_ns(pe, e);
	if (pe->now < e->next_ns || pe->budget <= 0)
		return;
	if (send_ev_probe(pe, slot, s, idx, MRC_EV_WORD_PLANE(word)))
		e->next_ns = pe->now + interval_ns(pe, e);
}

static void note_rtt(struct probe_engine *pe, uint64_t rtt)
{
	if (rtt && (!pe->best_rtt_ns || rtt < pe->best_rtt_ns))
		pe->best_rtt_ns = rtt;
}

/* RTT from the wire-edge stamps, or our own clock if TC/XDP left them out. */
static uint64_t answer_rtt(const struct mrc_eph *eph, uint64_t sent_ns, uint64_t now)
{
	if (eph->t_tx_ns && eph->t_rx_ns > eph->t_tx_ns)
		return eph->t_rx_ns - eph->t_tx_ns;
	return now > sent_ns ? now - sent_ns : 1;
}

static void on_probe_answer(struct probe_engine *pe, const struct mrc_eph *eph)
{
	uint32_t slot = eph->req_id >> 24, idx = (eph->req_id >> 16) & 0xff;
	struct pe_slot *s = pe->slots[slot];
	struct pe_ev *e;

	if (!s || idx >= s->n_evs || !s->ev[idx].sent_ns ||
	    s->ev[idx].tag != (eph->req_id & 0xffff) ||
	    pe->evs[slot].ev[idx].ev != eph->ev) {
		pe->counters[PE_PROBE_ANSWERS_STALE]++;
		return;
	}
	e = &s->ev[idx];
	note_rtt(pe, answer_rtt(eph, e->sent_ns, pe->now));
	e->sent_ns = 0;
	pe->counters[PE_PROBES_ANSWERED]++;
	if (++e->successes < pe->cfg.probe_successes) {
		e->next_ns = pe->now + PE_SUCCESS_GAP_MS * MS_NS;
		return;
	}
	promote(pe, slot, s, idx);
}

/* ---- the scan ----------------------------------------------------------- */

struct candidate {
	uint8_t slot, idx;
};

/*
 * Compare a slot's table with what we know: probe what we know is down,
 * note ASSUMED_BAD entries nobody told us about, follow deny/allow.
 */
static void scan_slot(struct probe_engine *pe, uint32_t slot, struct pe_slot *s,
		      struct candidate *cand, int *n_cand)
{
	for (uint32_t idx = 0; idx < s->n_evs; idx++) {
		uint32_t w = entry_word(pe, slot, idx);
		uint8_t known = known_of(MRC_EV_WORD_STATE(w));
		struct pe_ev *e = &s->ev[idx];

		if (known == KNOWN_BAD && e->known != KNOWN_BAD) {
			if (*n_cand < PE_MAX_CANDIDATES)
				cand[(*n_cand)++] = (struct candidate){ (uint8_t)slot,
									(uint8_t)idx };
		} else if (known == KNOWN_BAD) {
			probe_step(pe, slot, s, idx, w);
		} else if (e->known != known) {
			e->known = known;
			e->next_ns = e->sent_ns = 0;
			e->successes = 0;
		}
	}
}

/*
 * Entries found ASSUMED_BAD without an event, after draining the ring once
 * more (XDP writes its event just after its compare-and-swap): libmrc's
 * timeouts mark theirs, anything else is of unknown cause.
 */
static void report_unreported(struct probe_engine *pe, const struct candidate *cand,
			      int n_cand)
{
	for (int i = 0; i < n_cand; i++) {
		uint32_t slot = cand[i].slot, idx = cand[i].idx, w;
		struct pe_slot *s = pe->slots[slot];
		uint8_t prev;

		if (!s)
			continue;
		w = entry_word(pe, slot, idx);
		if (MRC_EV_WORD_STATE(w) != MRC_EV_ASSUMED_BAD ||
		    s->ev[idx].known == KNOWN_BAD)
			continue;
		prev = s->ev[idx].known == KNOWN_DENIED ? MRC_EV_DENIED : MRC_EV_GOOD;
		pe->counters[PE_FOUND_UNREPORTED]++;
		on_demoted(pe, s, idx);
		record_change(pe, slot, idx, MRC_EV_ASSUMED_BAD, prev,
			      MRC_EV_WORD_FLAGS(w) & MRC_EV_F_BY_TIMEOUT ?
			      MRC_EVR_TIMEOUT : MRC_EVR_UNKNOWN);
	}
}

/* Which slots deserve a look this tick, and the look. */
static void scan_slots(struct probe_engine *pe, struct candidate *cand, int *n_cand)
{
	for (uint32_t slot = 0; slot < MRC_MAX_QPS; slot++) {
		uint32_t down = __atomic_load_n(&pe->evs[slot].n_down, __ATOMIC_ACQUIRE);
		struct pe_slot *s = pe->slots[slot];

		if (s && !slot_current(pe, slot, s)) {
			forget_slot(pe, slot);
			s = NULL;
		}
		if (!s && !down)
			continue;
		if (s && s->quiet && !down) {
			/* Kept a while for the flapping backoff, then let go. */
			if (pe->now - s->active_ns > PE_IDLE_FORGET_NS)
				forget_slot(pe, slot);
			continue;
		}
		if (!s && !(s = watch_slot(pe, slot)))
			continue;
		scan_slot(pe, slot, s, cand, n_cand);
		s->quiet = !down;
		if (down)
			s->active_ns = pe->now;
	}
}

/* ---- XDP's events ------------------------------------------------------- */

static int on_ring_event(void *ctx, void *data, size_t size)
{
	struct probe_engine *pe = ctx;
	const struct mrc_ev_event *x = data;
	uint32_t slot;
	struct pe_slot *s;
	struct ev_record r;

	if (size < sizeof(*x) || !x->qpn || x->qpn > MRC_MAX_QPS)
		return 0;
	slot = x->qpn - 1;
	s = slot_get(pe, slot);
	if (s && x->idx < s->n_evs) {
		struct pe_ev *e = &s->ev[x->idx];

		/* Already reported from the table, before this event came. */
		if (x->state == MRC_EV_ASSUMED_BAD && e->known == KNOWN_BAD)
			return 0;
		if (x->state == MRC_EV_ASSUMED_BAD)
			on_demoted(pe, s, x->idx);
		else
			e->known = known_of(x->state);
		s->quiet = false;
	}
	r = (struct ev_record){
		.time_ns = x->time_ns,
		.qpn = x->qpn,
		.ev = x->ev,
		.psn = x->psn,
		.sent_ns = x->sent_ns,
		.idx = x->idx,
		.plane = x->plane,
		.profile = x->profile,
		.state = x->state,
		.prev_state = MRC_EV_GOOD,
		.reason = x->reason,
	};
	record(pe, &r);
	return 0;
}

static void drain_ring(struct probe_engine *pe)
{
	ring_buffer__consume(pe->ring);
}

/* ---- plane links and port status ---------------------------------------- */

struct dest {
	uint8_t plane;
	uint8_t addr[16];
};

static int add_dest(struct dest *d, int n, uint8_t plane, const uint8_t addr[16])
{
	for (int i = 0; i < n; i++)
		if (d[i].plane == plane && !memcmp(d[i].addr, addr, 16))
			return n;
	if (n >= PE_MAX_DESTS)
		return n;
	d[n].plane = plane;
	memcpy(d[n].addr, addr, 16);
	return n + 1;
}

/*
 * Every peer of a live QP, on every plane of ours that is up (but the one
 * that went down): the status reaches the peer over the planes that work.
 */
static int port_status_dests(struct probe_engine *pe, uint8_t changed,
			     uint8_t status, struct dest *d)
{
	int n = 0;

	for (uint32_t slot = 0; slot < MRC_MAX_QPS; slot++) {
		struct pe_slot *s = slot_get(pe, slot);

		for (int q = 1; s && q <= s->info.n_peer_addrs && q <= pe->cfg.n_planes; q++) {
			if ((q == changed && !status) || !pe->planes[q - 1].up ||
			    addr_is_zero(s->info.peer_addrs[q - 1]))
				continue;
			n = add_dest(d, n, (uint8_t)q, s->info.peer_addrs[q - 1]);
		}
	}
	return n;
}

static void send_port_status(struct probe_engine *pe, uint8_t plane, uint8_t status)
{
	static struct dest d[PE_MAX_DESTS];
	uint8_t pkt[EP_PKT_LEN];
	uint16_t port;
	int n = port_status_dests(pe, plane, status, d), fd;

	ep_build_port_status(pkt, plane, status);
	for (int i = 0; i < n; i++) {
		fd = plane_sock(&pe->planes[d[i].plane - 1], d[i].addr, &port);
		if (fd >= 0 && !send_ep(pe, fd, d[i].addr, pkt))
			pe->counters[PE_PORT_STATUS_SENT]++;
		else
			pe->counters[PE_PROBES_SEND_FAILED]++;
	}
}

static void announce_step(struct probe_engine *pe)
{
	for (int i = 0; i < PE_ANNOUNCES; i++) {
		struct pe_announce *a = &pe->announce[i];

		while (a->t0 && a->sent < ANNOUNCE_TIMES &&
		       pe->now >= a->t0 + announce_at_ms[a->sent] * MS_NS) {
			send_port_status(pe, a->plane, a->status);
			a->sent++;
		}
	}
}

/* A newer status of a plane replaces the repeats of the older one. */
static void announce(struct probe_engine *pe, uint8_t plane, uint8_t status)
{
	struct pe_announce *slot = NULL;

	for (int i = 0; i < PE_ANNOUNCES; i++) {
		struct pe_announce *a = &pe->announce[i];

		if (a->t0 && a->plane == plane)
			a->t0 = 0;
		if (!a->t0 || a->sent >= ANNOUNCE_TIMES)
			slot = slot ? slot : a;
	}
	if (!slot)
		slot = &pe->announce[0];
	*slot = (struct pe_announce){ .t0 = pe->now, .plane = plane, .status = status };
	announce_step(pe);
}

/*
 * Demote the EVs on `plane` of every live QP (to `peer`, if given); how
 * many QPs were concerned.
 */
static int demote_plane(struct probe_engine *pe, uint16_t plane, uint8_t reason,
			const uint8_t *peer)
{
	enum pe_counter counter = reason == MRC_EVR_PORT_DOWN ?
		PE_DEMOTIONS_PORT_DOWN : PE_DEMOTIONS_PEER_PORT_DOWN;
	int matched = 0;

	for (uint32_t slot = 0; slot < MRC_MAX_QPS; slot++) {
		struct pe_slot *s = slot_get(pe, slot);

		if (!s || (peer && !slot_has_peer(s, peer)))
			continue;
		matched++;
		s->quiet = false;
		for (uint32_t idx = 0; idx < s->n_evs; idx++)
			if (MRC_EV_WORD_PLANE(entry_word(pe, slot, idx)) == plane)
				demote(pe, slot, s, idx, reason, counter);
	}
	return matched;
}

/* Probe the ASSUMED_BAD EVs on `plane` (of QPs to `peer`) at once. */
static int probe_plane_now(struct probe_engine *pe, uint16_t plane, const uint8_t *peer)
{
	int matched = 0;

	for (uint32_t slot = 0; slot < MRC_MAX_QPS; slot++) {
		struct pe_slot *s = slot_get(pe, slot);

		if (!s || (peer && !slot_has_peer(s, peer)))
			continue;
		matched++;
		s->quiet = false;
		for (uint32_t idx = 0; idx < s->n_evs; idx++) {
			struct pe_ev *e = &s->ev[idx];

			if (e->known == KNOWN_BAD && !e->sent_ns &&
			    MRC_EV_WORD_PLANE(entry_word(pe, slot, idx)) == plane)
				e->next_ns = pe->now;
		}
	}
	return matched;
}

/* Tell TC (mrc_planes flags) so no ACK is sent into a dead link. */
static void mark_plane_link(struct probe_engine *pe, int plane, bool up)
{
	__u32 key = (__u32)plane - 1;
	struct mrc_plane mp;

	if (bpf_map_lookup_elem(pe->cfg.fd_planes, &key, &mp))
		return;
	if (up)
		mp.flags &= ~(__u32)MRC_PLANE_F_DOWN;
	else
		mp.flags |= MRC_PLANE_F_DOWN;
	if (bpf_map_update_elem(pe->cfg.fd_planes, &key, &mp, BPF_EXIST))
		fprintf(stderr, "mrcd: cannot mark plane %d %s: %s\n", plane,
			up ? "up" : "down", strerror(errno));
}

static void on_link_change(void *arg, int ifindex, bool up)
{
	struct probe_engine *pe = arg;

	for (int i = 0; i < pe->cfg.n_planes; i++) {
		struct pe_plane *p = &pe->planes[i];

		if (p->ifindex != ifindex || p->up == up)
			continue;
		p->up = up;
		fprintf(stderr, "mrcd: plane %d (%s) is %s\n", i + 1, p->name,
			up ? "up: probing its EVs" : "down: its EVs are ASSUMED_BAD");
		mark_plane_link(pe, i + 1, up);
		if (up)
			probe_plane_now(pe, (uint16_t)(i + 1), NULL);
		else
			demote_plane(pe, (uint16_t)(i + 1), MRC_EVR_PORT_DOWN, NULL);
		announce(pe, (uint8_t)(i + 1), up);
	}
}

static void reread_links(struct probe_engine *pe)
{
	for (int i = 0; i < pe->cfg.n_planes; i++)
		on_link_change(pe, pe->planes[i].ifindex, link_is_up(pe->planes[i].ifindex));
}

static void on_port_status(struct probe_engine *pe, const uint8_t src[16],
			   const struct mrc_eph *eph)
{
	int matched;

	pe->counters[PE_PORT_STATUS_RX]++;
	if (eph->plane < 1 || eph->plane > MRC_MAX_PLANES_ABI) {
		pe->counters[PE_PORT_STATUS_IGNORED]++;
		return;
	}
	if (eph->status)
		matched = probe_plane_now(pe, eph->plane, src);
	else
		matched = demote_plane(pe, eph->plane, MRC_EVR_PEER_PORT_DOWN, src);
	if (!matched)
		pe->counters[PE_PORT_STATUS_IGNORED]++;
}

/* ---- sockets ------------------------------------------------------------ */

/* Receive what is queued on fd: fn per endpoint packet. */
static void read_ep(struct probe_engine *pe, int fd,
		    void (*fn)(struct probe_engine *pe, const uint8_t src[16],
			       uint8_t opcode, const struct mrc_eph *eph, void *arg),
		    void *arg)
{
	uint8_t buf[256], src[16];
	struct sockaddr_storage ss;
	struct mrc_eph eph;
	socklen_t len;
	uint8_t opcode;
	ssize_t n;

	for (int i = 0; i < 256; i++) {
		len = sizeof(ss);
		n = recvfrom(fd, buf, sizeof(buf), MSG_DONTWAIT, (struct sockaddr *)&ss, &len);
		if (n < 0)
			return;
		pe->now = mono_ns();
		if (ep_parse(buf, (size_t)n, &opcode, &eph))
			continue;
		addr_from_sockaddr(&ss, src);
		fn(pe, src, opcode, &eph, arg);
	}
}

static void ctl_packet(struct probe_engine *pe, const uint8_t src[16], uint8_t opcode,
		       const struct mrc_eph *eph, void *arg)
{
	(void)arg;
	if (opcode == MRC_OP_EP_REQUEST && eph->kind == MRC_EP_PORT_STATUS)
		on_port_status(pe, src, eph);
}

static void plane_packet(struct probe_engine *pe, const uint8_t src[16], uint8_t opcode,
			 const struct mrc_eph *eph, void *arg)
{
	(void)src;
	(void)arg;
	if (opcode == MRC_OP_EP_RESPONSE && eph->kind == MRC_EP_EV_PROBE)
		on_probe_answer(pe, eph);
}

/* ---- `mrcctl probe` ----------------------------------------------------- */

__attribute__((format(printf, 2, 3)))
static void job_print(struct pe_job *job, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = job->out_cap - job->out_len;

		va_start(ap, fmt);
		n = vsnprintf(job->out + job->out_len, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			job->out_len += (size_t)n;
			return;
		}
		char *bigger = realloc(job->out, job->out_cap * 2 + (size_t)n);

		if (!bigger)
			return;
		job->out = bigger;
		job->out_cap = job->out_cap * 2 + (size_t)n;
	}
}

static void job_json(struct pe_job *job)
{
	char to[INET6_ADDRSTRLEN];

	job_print(job, "{\"to\": \"%s\", \"ev\": %u, \"plane\": %u, \"sent\": %u, "
		  "\"answered\": %u, ", addr_text(job->req.to, to, sizeof(to)),
		  job->req.ev, job->req.plane, job->sent, job->answered);
	if (job->answered)
		job_print(job, "\"rtt_min_ns\": %" PRIu64 ", \"rtt_avg_ns\": %" PRIu64
			  ", \"rtt_max_ns\": %" PRIu64 ", ", job->rtt_min,
			  job->rtt_sum / job->answered, job->rtt_max);
	else
		job_print(job, "\"rtt_min_ns\": null, \"rtt_avg_ns\": null, "
			  "\"rtt_max_ns\": null, ");
	job_print(job, "\"probes\": [");
	for (uint32_t i = 0; i < job->sent; i++) {
		if (job->rtt[i])
			job_print(job, "%s{\"seq\": %u, \"rtt_ns\": %" PRIu64
				  ", \"service_ns\": %u}", i ? ", " : "", i + 1,
				  job->rtt[i], job->service[i]);
		else
			job_print(job, "%s{\"seq\": %u, \"lost\": true}", i ? ", " : "",
				  i + 1);
	}
	job_print(job, "]}\n");
}

static void job_finish(struct pe_job *job)
{
	job->done = true;
	if (job->req.json) {
		job_json(job);
		return;
	}
	if (job->answered)
		job_print(job, "%u sent, %u answered, rtt min/avg/max %" PRIu64 "/%" PRIu64
			  "/%" PRIu64 " ns\n", job->sent, job->answered, job->rtt_min,
			  job->rtt_sum / job->answered, job->rtt_max);
	else
		job_print(job, "%u sent, 0 answered\n", job->sent);
}

/* The probe we waited for is over (answered or not): plan the next one. */
static void job_probe_over(struct probe_engine *pe, struct pe_job *job)
{
	job->waiting = false;
	job->next_ns = pe->now + (uint64_t)job->req.interval_ms * MS_NS;
	if (job->sent >= job->req.count)
		job_finish(job);
}

static void job_send(struct probe_engine *pe, struct pe_job *job)
{
	const struct pe_plane *p = &pe->planes[job->req.plane - 1];
	uint8_t pkt[EP_PKT_LEN];

	ep_build_probe(pkt, job->base_id + job->sent, job->req.ev,
		       (uint8_t)job->req.plane, job->port);
	job->sent++;
	job->waiting = true;
	job->sent_ns = pe->now;
	pe->counters[PE_MANUAL_PROBES_SENT]++;
	if (!p->up || send_ep(pe, job->fd, job->req.to, pkt))
		pe->counters[PE_PROBES_SEND_FAILED]++;	/* counts as unanswered */
}

static void job_step(struct probe_engine *pe, struct pe_job *job)
{
	if (job->done)
		return;
	if (job->waiting && pe->now - job->sent_ns >= PE_JOB_TIMEOUT_MS * MS_NS) {
		if (!job->req.json)
			job_print(job, "probe %u: no answer in %u ms\n", job->sent,
				  PE_JOB_TIMEOUT_MS);
		job_probe_over(pe, job);
	}
	if (!job->done && !job->waiting && pe->now >= job->next_ns)
		job_send(pe, job);
}

static void job_packet(struct probe_engine *pe, const uint8_t src[16], uint8_t opcode,
		       const struct mrc_eph *eph, void *arg)
{
	struct pe_job *job = arg;
	uint32_t i = job->sent - 1;
	uint64_t rtt;

	(void)src;
	if (opcode != MRC_OP_EP_RESPONSE || eph->kind != MRC_EP_EV_PROBE ||
	    !job->waiting || eph->req_id != job->base_id + i || eph->ev != job->req.ev)
		return;
	rtt = answer_rtt(eph, job->sent_ns, pe->now);
	job->rtt[i] = rtt;
	job->service[i] = eph->service_ns;
	job->answered++;
	job->rtt_sum += rtt;
	job->rtt_min = job->answered == 1 || rtt < job->rtt_min ? rtt : job->rtt_min;
	job->rtt_max = rtt > job->rtt_max ? rtt : job->rtt_max;
	pe->counters[PE_MANUAL_PROBES_ANSWERED]++;
	if (!job->req.json)
		job_print(job, "probe %u: rtt %" PRIu64 " ns (responder %u ns)\n",
			  i + 1, rtt, eph->service_ns);
	job_probe_over(pe, job);
	job_step(pe, job);
}

static int job_check(const struct probe_engine *pe, const struct pe_job_req *req,
		     char *err, size_t errlen)
{
	const struct pe_plane *p;
	char to[INET6_ADDRSTRLEN];
	bool v4 = addr_is_v4mapped(req->to);

	if (req->plane < 1 || (int)req->plane > pe->cfg.n_planes) {
		say(err, errlen, "there is no plane %u (this host has planes 1..%d)",
		    req->plane, pe->cfg.n_planes);
		return -ENODEV;
	}
	p = &pe->planes[req->plane - 1];
	if (!p->up) {
		say(err, errlen, "plane %u (%s) is down: no probe can leave on it",
		    req->plane, p->name);
		return -ENETDOWN;
	}
	if ((v4 && !p->has4) || (!v4 && !p->has6)) {
		say(err, errlen, "plane %u (%s) has no %s address to probe %s from",
		    req->plane, p->name, v4 ? "IPv4" : "IPv6",
		    addr_text(req->to, to, sizeof(to)));
		return -EADDRNOTAVAIL;
	}
	return 0;
}

static struct pe_job *job_alloc(const struct pe_job_req *req)
{
	struct pe_job *job = calloc(1, sizeof(*job));

	if (!job)
		return NULL;
	job->req = *req;
	job->fd = -1;
	job->out_cap = 256;
	job->out = malloc(job->out_cap);
	job->rtt = calloc(req->count, sizeof(*job->rtt));
	job->service = calloc(req->count, sizeof(*job->service));
	if (!job->out || !job->rtt || !job->service) {
		free(job->out);
		free(job->rtt);
		free(job->service);
		free(job);
		return NULL;
	}
	return job;
}

static void job_free(struct pe_job *job)
{
	if (job->fd >= 0)
		close(job->fd);
	free(job->out);
	free(job->rtt);
	free(job->service);
	free(job);
}

struct pe_job *pe_job_start(struct probe_engine *pe, const struct pe_job_req *req,
			    char *err, size_t errlen)
{
	const struct pe_plane *p;
	struct pe_job *job;
	int free_slot = -1;
	bool v4;

	for (int i = 0; i < PE_MAX_JOBS && free_slot < 0; i++)
		if (!pe->jobs[i])
			free_slot = i;
	if (free_slot < 0) {
		say(err, errlen, "%d probe commands are running already: try again later",
		    PE_MAX_JOBS);
		return NULL;
	}
	if (!req->count || req->count > PE_JOB_MAX_COUNT) {
		say(err, errlen, "%u probes: the count is 1..%d", req->count,
		    PE_JOB_MAX_COUNT);
		return NULL;
	}
	if (job_check(pe, req, err, errlen))
		return NULL;
	job = job_alloc(req);
	if (!job) {
		say(err, errlen, "out of memory");
		return NULL;
	}
	p = &pe->planes[req->plane - 1];
	v4 = addr_is_v4mapped(req->to);
	job->fd = plane_socket_open(p->name, v4 ? AF_INET : AF_INET6,
				    v4 ? p->addr4 : p->addr6, &job->port, err, errlen);
	if (job->fd < 0) {
		job_free(job);
		return NULL;
	}
	/* Ids differ between jobs, so a late answer to another job never matches. */
	job->base_id = (uint32_t)(mono_ns() >> 10) ^ (++pe->job_ids << 20);
	pe->now = mono_ns();
	pe->jobs[free_slot] = job;
	job_send(pe, job);
	return job;
}

const char *pe_job_output(const struct pe_job *job, size_t from, size_t *len)
{
	*len = from < job->out_len ? job->out_len - from : 0;
	return job->out + (from < job->out_len ? from : job->out_len);
}

bool pe_job_done(const struct pe_job *job, int *status)
{
	*status = job->answered ? 0 : 1;
	return job->done;
}

void pe_job_end(struct probe_engine *pe, struct pe_job *job)
{
	for (int i = 0; i < PE_MAX_JOBS; i++)
		if (pe->jobs[i] == job)
			pe->jobs[i] = NULL;
	job_free(job);
}

/* ---- the loop ----------------------------------------------------------- */

static void tick(struct probe_engine *pe)
{
	static struct candidate cand[PE_MAX_CANDIDATES];
	int n_cand = 0;

	pe->now = mono_ns();
	drain_ring(pe);
	announce_step(pe);
	for (int i = 0; i < PE_MAX_JOBS; i++)
		if (pe->jobs[i])
			job_step(pe, pe->jobs[i]);
	pe->budget = PE_PROBES_PER_TICK;
	scan_slots(pe, cand, &n_cand);
	if (n_cand) {
		drain_ring(pe);
		report_unreported(pe, cand, n_cand);
	}
}

static bool job_live(const struct probe_engine *pe, const struct pe_job *job)
{
	for (int i = 0; i < PE_MAX_JOBS; i++)
		if (pe->jobs[i] == job)
			return true;
	return false;
}

static int add_fd(struct probe_engine *pe, struct pollfd *pfd, int n, int fd,
		  struct pe_fd what)
{
	if (fd < 0 || n >= PE_MAX_FDS)
		return n;
	pfd[n] = (struct pollfd){ .fd = fd, .events = POLLIN };
	pe->fds[n] = what;
	return n + 1;
}

int pe_pollfds(struct probe_engine *pe, struct pollfd *pfd)
{
	int n = 0;

	n = add_fd(pe, pfd, n, pe->timer_fd, (struct pe_fd){ .kind = FD_TIMER });
	n = add_fd(pe, pfd, n, ring_buffer__epoll_fd(pe->ring), (struct pe_fd){ .kind = FD_RING });
	n = add_fd(pe, pfd, n, pe->link_fd, (struct pe_fd){ .kind = FD_LINK });
	n = add_fd(pe, pfd, n, pe->ctl_fd, (struct pe_fd){ .kind = FD_CTL });
	for (int i = 0; i < pe->cfg.n_planes; i++) {
		n = add_fd(pe, pfd, n, pe->planes[i].sock4, (struct pe_fd){ .kind = FD_PLANE, .plane = i });
		n = add_fd(pe, pfd, n, pe->planes[i].sock6, (struct pe_fd){ .kind = FD_PLANE, .plane = i });
	}
	for (int i = 0; i < PE_MAX_JOBS; i++)
		if (pe->jobs[i])
			n = add_fd(pe, pfd, n, pe->jobs[i]->fd,
				   (struct pe_fd){ .kind = FD_JOB, .job = pe->jobs[i] });
	return n;
}

static void process_one(struct probe_engine *pe, const struct pollfd *p,
			const struct pe_fd *what)
{
	uint64_t expirations;

	pe->now = mono_ns();
	switch (what->kind) {
	case FD_TIMER:
		if (read(p->fd, &expirations, sizeof(expirations)) > 0)
			tick(pe);
		break;
	case FD_RING:
		drain_ring(pe);
		break;
	case FD_LINK:
		if (link_watch_read(p->fd, on_link_change, pe) == -ENOBUFS)
			reread_links(pe);
		break;
	case FD_CTL:
		read_ep(pe, p->fd, ctl_packet, NULL);
		break;
	case FD_PLANE:
		read_ep(pe, p->fd, plane_packet, NULL);
		break;
	case FD_JOB:
		if (job_live(pe, what->job))
			read_ep(pe, p->fd, job_packet, what->job);
		break;
	}
}

void pe_process(struct probe_engine *pe, const struct pollfd *pfd, int n)
{
	for (int i = 0; i < n && i < PE_MAX_FDS; i++)
		if (pfd[i].revents)
			process_one(pe, &pfd[i], &pe->fds[i]);
}

/* ---- set-up ------------------------------------------------------------- */

static int map_tables(struct probe_engine *pe, char *err, size_t errlen)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	void *p;

	pe->evs = ev_table_map(pe->cfg.fd_qp_evs);
	if (!pe->evs) {
		say(err, errlen, "mapping the EV tables (mrc_qp_evs): %s%s", strerror(errno),
		    errno == EPROTO ? " (pins of another build: mrcd --detach first)" : "");
		return -1;
	}
	if (bpf_obj_get_info_by_fd(pe->cfg.fd_tx, &info, &len) ||
	    info.value_size != sizeof(struct mrc_tx_state) ||
	    info.max_entries != MRC_MAX_QPS || !(info.map_flags & BPF_F_MMAPABLE)) {
		say(err, errlen, "mrc_tx is not the mmapable array this mrcd expects");
		return -1;
	}
	pe->tx_map_len = sizeof(struct mrc_tx_state) * MRC_MAX_QPS;
	p = mmap(NULL, pe->tx_map_len, PROT_READ, MAP_SHARED, pe->cfg.fd_tx, 0);
	if (p == MAP_FAILED) {
		say(err, errlen, "mapping mrc_tx: %s", strerror(errno));
		return -1;
	}
	pe->tx = p;
	return 0;
}

/* Plane addresses as mrcd wrote them to mrc_planes, and their sockets. */
static int open_plane(struct probe_engine *pe, int i, char *err, size_t errlen)
{
	struct pe_plane *p = &pe->planes[i];
	struct mrc_plane mp = {};
	uint32_t key = (uint32_t)i;
	static const uint8_t zero[16];

	snprintf(p->name, sizeof(p->name), "%s", pe->cfg.planes[i].name);
	p->ifindex = pe->cfg.planes[i].ifindex;
	p->sock4 = p->sock6 = -1;
	p->up = link_is_up(p->ifindex);
	if (bpf_map_lookup_elem(pe->cfg.fd_planes, &key, &mp))
		memset(&mp, 0, sizeof(mp));
	memcpy(p->addr4, mp.addr4, 4);
	memcpy(p->addr6, mp.addr6, 16);
	p->has4 = memcmp(p->addr4, zero, 4);
	p->has6 = memcmp(p->addr6, zero, 16);
	if (p->has4) {
		p->sock4 = plane_socket_open(p->name, AF_INET, p->addr4, &p->port4, err, errlen);
		if (p->sock4 < 0)
			return -1;
	}
	if (p->has6) {
		p->sock6 = plane_socket_open(p->name, AF_INET6, p->addr6, &p->port6, err,
					     errlen);
		if (p->sock6 < 0)
			return -1;
	}
	return 0;
}

static int open_timer(struct probe_engine *pe, char *err, size_t errlen)
{
	struct itimerspec its = {
		.it_interval = { .tv_nsec = PE_TICK_MS * 1000000L },
		.it_value = { .tv_nsec = PE_TICK_MS * 1000000L },
	};

	pe->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (pe->timer_fd < 0 || timerfd_settime(pe->timer_fd, 0, &its, NULL)) {
		say(err, errlen, "timerfd: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int open_ring(struct probe_engine *pe, char *err, size_t errlen)
{
	pe->ring = ring_buffer__new(pe->cfg.fd_ev_events, on_ring_event, pe, NULL);
	if (!pe->ring) {
		say(err, errlen, "reading the EV event ring (mrc_ev_events): %s",
		    strerror(errno));
		return -1;
	}
	return 0;
}

static int alloc_buffers(struct probe_engine *pe, char *err, size_t errlen)
{
	size_t stride = (sizeof(struct mrc_ctl_stats) + 7) & ~(size_t)7;

	pe->n_cpus = libbpf_num_possible_cpus();
	if (pe->n_cpus < 1)
		pe->n_cpus = 1;
	pe->percpu = calloc((size_t)pe->n_cpus, stride);
	pe->prof_buf = malloc(sizeof(*pe->prof_buf));
	if (!pe->percpu || !pe->prof_buf) {
		say(err, errlen, "out of memory");
		return -1;
	}
	return 0;
}

struct probe_engine *pe_open(const struct pe_setup *setup, char *err, size_t errlen)
{
	struct probe_engine *pe = calloc(1, sizeof(*pe));
	int i;

	if (!pe) {
		say(err, errlen, "out of memory");
		return NULL;
	}
	pe->cfg = *setup;
	pe->timer_fd = pe->link_fd = pe->ctl_fd = -1;
	for (i = 0; i < MRC_MAX_PLANES_ABI; i++)
		pe->planes[i].sock4 = pe->planes[i].sock6 = -1;
	pe->now = mono_ns();
	ev_log_init(&pe->log, pe->now);
	if (alloc_buffers(pe, err, errlen) || map_tables(pe, err, errlen) ||
	    open_timer(pe, err, errlen) || open_ring(pe, err, errlen))
		goto fail;
	pe->link_fd = link_watch_open(err, errlen);
	if (pe->link_fd < 0)
		goto fail;
	pe->ctl_fd = ctl_socket_open(&pe->agent_port, err, errlen);
	if (pe->ctl_fd < 0)
		goto fail;
	for (i = 0; i < pe->cfg.n_planes; i++)
		if (open_plane(pe, i, err, errlen))
			goto fail;
	return pe;
fail:
	pe_close(pe);
	return NULL;
}

static void close_fd(int fd)
{
	if (fd >= 0)
		close(fd);
}

void pe_close(struct probe_engine *pe)
{
	if (!pe)
		return;
	for (int i = 0; i < PE_MAX_JOBS; i++)
		if (pe->jobs[i])
			job_free(pe->jobs[i]);
	for (int i = 0; i < MRC_MAX_PLANES_ABI; i++) {
		close_fd(pe->planes[i].sock4);
		close_fd(pe->planes[i].sock6);
	}
	for (uint32_t s = 0; s < MRC_MAX_QPS; s++)
		free(pe->slots[s]);
	close_fd(pe->timer_fd);
	close_fd(pe->link_fd);
	close_fd(pe->ctl_fd);
	ring_buffer__free(pe->ring);
	ev_table_unmap(pe->evs);
	if (pe->tx)
		munmap((void *)pe->tx, pe->tx_map_len);
	free(pe->percpu);
	free(pe->prof_buf);
	free(pe);
}

uint16_t pe_agent_port(const struct probe_engine *pe)
{
	return pe->agent_port;
}

struct ev_log *pe_log(struct probe_engine *pe)
{
	return &pe->log;
}

void pe_count(struct probe_engine *pe, enum pe_counter c, uint64_t n)
{
	if (c < PE_N_COUNTERS)
		pe->counters[c] += n;
	if (c == PE_EVENTS_SLOW_READER)
		pe->log.sub_dropped += n;
}

void pe_status(const struct probe_engine *pe, struct pe_status *st)
{
	memset(st, 0, sizeof(*st));
	st->probe_successes = pe->cfg.probe_successes;
	st->probe_interval_ms = pe->cfg.probe_interval_ms;
	st->agent_port = pe->agent_port;
	st->best_rtt_ns = pe->best_rtt_ns;
	st->n_planes = pe->cfg.n_planes;
	for (int i = 0; i < pe->cfg.n_planes; i++)
		st->link_up[i] = pe->planes[i].up;
	for (uint32_t s = 0; s < MRC_MAX_QPS; s++)
		for (uint32_t i = 0; pe->slots[s] && i < pe->slots[s]->n_evs; i++)
			st->bad_evs += pe->slots[s]->ev[i].known == KNOWN_BAD;
	memcpy(st->counters, pe->counters, sizeof(st->counters));
}
