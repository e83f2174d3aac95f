// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Probing an ASSUMED_BAD EV back to GOOD (see probe_int.h): when the next
 * probe goes (interval, flapping backoff), sending it on the EV's plane,
 * the answer's RTT, and the promotion after enough answers in a row.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "common/ev_state.h"
#include "agent/probe_int.h"
#include "agent/probe_net.h"

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
void pe_on_demoted(struct probe_engine *pe, struct pe_slot *s, uint32_t idx)
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
bool pe_demote(struct probe_engine *pe, uint32_t slot, struct pe_slot *s,
		   uint32_t idx, uint8_t reason, enum pe_counter counter)
{
	uint8_t before = MRC_EV_WORD_STATE(entry_word(pe, slot, idx));
	struct mrc_qp_evs *evs = qp_evs(pe, slot);

	if (!evs)
		return false;	/* the QP went */
	switch (ev_demote(evs, s->n_evs, idx, 0)) {
	case EV_CHANGED:
		pe_on_demoted(pe, s, idx);
		pe->counters[counter]++;
		pe_record_change(pe, slot, idx, MRC_EV_ASSUMED_BAD,
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
	struct mrc_qp_evs *evs = qp_evs(pe, slot);

	e->successes = 0;
	e->next_ns = 0;
	if (!evs || ev_promote(evs, s->n_evs, idx) != EV_CHANGED) {
		/* Denied (or allowed) meanwhile: the controller decides. */
		e->known = known_of(MRC_EV_WORD_STATE(entry_word(pe, slot, idx)));
		return;
	}
	e->known = KNOWN_GOOD;
	e->promoted_ns = pe->now;
	pe->counters[PE_PROMOTIONS]++;
	pe_record_change(pe, slot, idx, MRC_EV_GOOD, MRC_EV_ASSUMED_BAD,
		      MRC_EVR_PROBES_OK);
}

/* ---- sending probes ----------------------------------------------------- */

int pe_plane_sock(const struct pe_plane *p, const uint8_t addr[16], uint16_t *port)
{
	if (addr_is_v4mapped(addr)) {
		*port = p->port4;
		return p->sock4;
	}
	*port = p->port6;
	return p->sock6;
}

int pe_send_ep(struct probe_engine *pe, int fd, const uint8_t dst[16],
		   const uint8_t *pkt)
{
	struct sockaddr_storage ss;
	socklen_t len = addr_to_sockaddr(dst, pe->cfg.udp_port, &ss);

	if (sendto(fd, pkt, EP_PKT_LEN, MSG_DONTWAIT, (struct sockaddr *)&ss, len) < 0)
		return -errno;
	return 0;
}

/*
 * req_id of an automatic probe: slot (16 bits: up to MRC_QPS_LIMIT QPs),
 * entry (8 bits: MRC_MAX_EVS) and the low 8 bits of a tag against stale
 * answers (an answer counts only from the probed peer, for the EV probed,
 * so the tag only has to tell the last few probes of an entry apart).
 */
#define REQ_SLOT(id)	((id) >> 16)
#define REQ_IDX(id)	(((id) >> 8) & 0xff)
#define REQ_TAG(id)	((id) & 0xff)
_Static_assert(MRC_QPS_LIMIT <= 1 << 16 && MRC_MAX_EVS <= 1 << 8,
	       "a probe's req_id holds a slot in 16 bits and an entry in 8");

static uint32_t probe_req_id(uint32_t slot, uint32_t idx, uint16_t tag)
{
	return slot << 16 | idx << 8 | (tag & 0xff);
}

static int send_ev_probe(struct probe_engine *pe, uint32_t slot, struct pe_slot *s,
			 uint32_t idx, uint16_t plane)
{
	uint8_t pkt[EP_PKT_LEN];
	struct pe_ev *e = &s->ev[idx];
	const struct mrc_qp_evs *evs = qp_evs(pe, slot);
	const struct pe_plane *p;
	uint16_t port;
	int fd, rc;

	if (!evs)
		return -ENOENT;	/* the QP went */
	if (plane < 1 || plane > pe->cfg.n_planes || plane > s->info.n_peer_addrs)
		return -ENOENT;
	p = &pe->planes[plane - 1];
	if (!p->up)
		return -ENETDOWN;	/* the link's return will call the probes */
	fd = pe_plane_sock(p, s->info.peer_addrs[plane - 1], &port);
	if (fd < 0)
		return -EAFNOSUPPORT;
	e->tag++;
	ep_build_probe(pkt, probe_req_id(slot, idx, e->tag), evs->ev[idx].ev,
		       (uint8_t)plane, port, s->info.ev_format, s->info.srv6_block);
	rc = pe_send_ep(pe, fd, s->info.peer_addrs[plane - 1], pkt);
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
void pe_probe_step(struct probe_engine *pe, uint32_t slot, struct pe_slot *s,
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
uint64_t pe_answer_rtt(const struct mrc_eph *eph, uint64_t sent_ns, uint64_t now)
{
	if (eph->t_tx_ns && eph->t_rx_ns > eph->t_tx_ns)
		return eph->t_rx_ns - eph->t_tx_ns;
	return now > sent_ns ? now - sent_ns : 1;
}

/* Was the probe of entry idx sent to src? (its plane's peer address) */
static bool probed_address(struct probe_engine *pe, uint32_t slot,
			   const struct pe_slot *s, uint32_t idx, const uint8_t src[16])
{
	uint16_t plane = MRC_EV_WORD_PLANE(entry_word(pe, slot, idx));

	return plane >= 1 && plane <= s->info.n_peer_addrs &&
	       plane <= MRC_MAX_PEER_ADDRS &&
	       !memcmp(s->info.peer_addrs[plane - 1], src, 16);
}

void pe_on_probe_answer(struct probe_engine *pe, const uint8_t src[16],
			const struct mrc_eph *eph)
{
	uint32_t slot = REQ_SLOT(eph->req_id), idx = REQ_IDX(eph->req_id);
	/* The answer comes from the network: its slot is checked like any input. */
	struct pe_slot *s = slot < pe->max_qps ? pe->slots[slot] : NULL;
	struct pe_ev *e;

	if (!s || idx >= s->n_evs || !s->ev[idx].sent_ns ||
	    (s->ev[idx].tag & 0xff) != REQ_TAG(eph->req_id) ||
	    !qp_evs(pe, slot) || qp_evs(pe, slot)->ev[idx].ev != eph->ev) {
		pe->counters[PE_PROBE_ANSWERS_STALE]++;
		return;
	}
	/* Our socket's port is no secret: an answer counts from the peer alone. */
	if (!probed_address(pe, slot, s, idx, src)) {
		pe->counters[PE_PROBE_ANSWERS_FOREIGN]++;
		return;
	}
	e = &s->ev[idx];
	note_rtt(pe, pe_answer_rtt(eph, e->sent_ns, pe->now));
	e->sent_ns = 0;
	pe->counters[PE_PROBES_ANSWERED]++;
	if (++e->successes < pe->cfg.probe_successes) {
		e->next_ns = pe->now + PE_SUCCESS_GAP_MS * MS_NS;
		return;
	}
	promote(pe, slot, s, idx);
}
