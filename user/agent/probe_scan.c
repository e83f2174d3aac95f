// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The probe engine's view of the tables (see probe_int.h): the QP slots it
 * follows, the scan that compares every table with what it knows, XDP's
 * event ring, and the event log they feed.
 */
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/ev_state.h"
#include "agent/probe_int.h"

/* ---- the tables --------------------------------------------------------- */

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
	if (bpf_map_lookup_elem(pe->pins.fd[MRC_PIN_QPS], &slot, &info) ||
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
	pe_walk_add(pe, slot);
	pe_walk_wake(pe, slot);
	return s;
}

static bool slot_current(const struct probe_engine *pe, uint32_t slot,
			 const struct pe_slot *s)
{
	return tx_state(pe, slot) == MRC_QPS_RTS &&
	       tx_generation(pe, slot) == s->generation;
}

/* The slot's record if its QP is live (followed from now on), else NULL. */
struct pe_slot *pe_slot_get(struct probe_engine *pe, uint32_t slot)
{
	struct pe_slot *s = pe->slots[slot];

	if (s && slot_current(pe, slot, s))
		return s;
	if (s)
		forget_slot(pe, slot);
	return watch_slot(pe, slot);
}

bool pe_slot_has_peer(const struct pe_slot *s, const uint8_t addr[16])
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
	if (bpf_map_lookup_elem(pe->pins.fd[MRC_PIN_CTL_STATS], &key, pe->percpu))
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
	m->mask = bpf_map_lookup_elem(pe->pins.fd[MRC_PIN_EV_PROFILES], &key, pe->prof_buf) ?
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
void pe_record_change(struct probe_engine *pe, uint32_t slot, uint32_t idx,
			  uint8_t state, uint8_t prev, uint8_t reason)
{
	const struct mrc_qp_evs *evs = qp_evs(pe, slot);
	uint32_t w = entry_word(pe, slot, idx);
	struct ev_record r = {
		.time_ns = pe->now,
		.qpn = mrc_slot_to_qpn(slot),
		.ev = evs ? evs->ev[idx].ev : 0,
		.idx = (uint16_t)idx,
		.plane = MRC_EV_WORD_PLANE(w),
		.profile = evs ? evs->profile : 0,
		.state = state,
		.prev_state = prev,
		.reason = reason,
	};

	record(pe, &r);
}

/* ---- the scan ----------------------------------------------------------- */

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
				cand[(*n_cand)++] = (struct candidate){ slot,
									(uint16_t)idx };
		} else if (known == KNOWN_BAD) {
			pe_probe_step(pe, slot, s, idx, w);
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
void pe_report_unreported(struct probe_engine *pe, const struct candidate *cand,
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
		pe_on_demoted(pe, s, idx);
		pe_record_change(pe, slot, idx, MRC_EV_ASSUMED_BAD, prev,
			      MRC_EV_WORD_FLAGS(w) & MRC_EV_F_BY_TIMEOUT ?
			      MRC_EVR_TIMEOUT : MRC_EVR_UNKNOWN);
	}
}

static void look_at_slot(struct probe_engine *pe, uint32_t slot, struct candidate *cand,
			 int *n_cand)
{
	const struct mrc_qp_evs *evs = qp_evs(pe, slot);
	uint32_t down = evs ? __atomic_load_n(&evs->n_down, __ATOMIC_ACQUIRE) : 0;
	struct pe_slot *s = pe->slots[slot];

	if (s && !slot_current(pe, slot, s)) {
		forget_slot(pe, slot);
		s = NULL;
	}
	if (!s && !down)
		return;
	if (s && s->quiet && !down) {
		/* Kept a while for the flapping backoff, then let go. */
		if (pe->now - s->active_ns > PE_IDLE_FORGET_NS)
			forget_slot(pe, slot);
		return;
	}
	if (!s && !(s = watch_slot(pe, slot)))
		return;
	scan_slot(pe, slot, s, cand, n_cand);
	s->quiet = !down;
	if (down)
		s->active_ns = pe->now;
}

/*
 * Which slots deserve a look this tick, and the look: the followed slots
 * with something down, and this tick's part of the walk (an ASSUMED_BAD
 * entry without an event, e.g. libmrc's timeout, is found within a turn).
 */
void pe_scan_slots(struct probe_engine *pe, struct candidate *cand, int *n_cand)
{
	uint32_t hot = 0;

	for (uint32_t w = 0; w < pe->walk.n; w++) {
		if (!pe_walk_due(pe, w))
			continue;
		look_at_slot(pe, pe->walk.slot[w], cand, n_cand);
		pe_walk_settle(pe, w);
		hot += pe->walk.hot[w];
	}
	pe->walk.n_hot = hot;
}

/* ---- XDP's events ------------------------------------------------------- */

int pe_on_ring_event(void *ctx, void *data, size_t size)
{
	struct probe_engine *pe = ctx;
	const struct mrc_ev_event *x = data;
	uint32_t slot;
	struct pe_slot *s;
	struct ev_record r;

	if (size < sizeof(*x) || !x->qpn || x->qpn > pe->max_qps)
		return 0;
	slot = mrc_qpn_to_slot(x->qpn);
	s = pe_slot_get(pe, slot);
	if (s && x->idx < s->n_evs) {
		struct pe_ev *e = &s->ev[x->idx];

		/* Already reported from the table, before this event came. */
		if (x->state == MRC_EV_ASSUMED_BAD && e->known == KNOWN_BAD)
			return 0;
		if (x->state == MRC_EV_ASSUMED_BAD)
			pe_on_demoted(pe, s, x->idx);
		else
			e->known = known_of(x->state);
		s->quiet = false;
		pe_walk_wake(pe, slot);
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

void pe_drain_ring(struct probe_engine *pe)
{
	ring_buffer__consume(pe->ring);
}
