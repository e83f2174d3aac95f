// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The EV event log; see ev_events.h.
 */
#include "agent/ev_events.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void ev_log_init(struct ev_log *log, uint64_t start_ns)
{
	memset(log, 0, sizeof(*log));
	log->next_seq = 1;
	log->start_ns = start_ns;
}

const struct ev_record *ev_log_add(struct ev_log *log, const struct ev_record *r)
{
	struct ev_record *slot = &log->rec[log->next_seq % EV_LOG_KEEP];

	*slot = *r;
	slot->seq = log->next_seq++;
	return slot;
}

uint64_t ev_log_first(const struct ev_log *log)
{
	return log->next_seq > EV_LOG_KEEP ? log->next_seq - EV_LOG_KEEP : 1;
}

const struct ev_record *ev_log_get(const struct ev_log *log, uint64_t seq)
{
	if (seq < ev_log_first(log) || seq >= log->next_seq)
		return NULL;
	return &log->rec[seq % EV_LOG_KEEP];
}

bool ev_mask_reports(uint32_t mask, uint8_t state)
{
	if (!(mask & (EV_MASK_BAD | EV_MASK_GOOD)))
		return true;
	if (state == MRC_EV_ASSUMED_BAD)
		return mask & EV_MASK_BAD;
	return mask & EV_MASK_GOOD;
}

const char *ev_reason_name(uint8_t reason)
{
	static const char *const names[] = {
		[MRC_EVR_LOSS] = "loss",
		[MRC_EVR_TIMEOUT] = "timeout",
		[MRC_EVR_ALWAYS_SKIP] = "always_skip",
		[MRC_EVR_PORT_DOWN] = "port_down",
		[MRC_EVR_PEER_PORT_DOWN] = "peer_port_down",
		[MRC_EVR_PROBES_OK] = "probes_ok",
		[MRC_EVR_UNKNOWN] = "unknown",
		[MRC_EVR_SAME_PATH] = "same_path",
	};

	if (reason < sizeof(names) / sizeof(names[0]) && names[reason])
		return names[reason];
	return "unknown";
}

const char *ev_state_label(uint8_t state)
{
	static const char *const names[] = { "GOOD", "SKIP", "ASSUMED_BAD", "DENIED" };

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

static size_t format_text(const struct ev_record *r, uint64_t start_ns,
			  uint64_t dropped, char *buf, size_t len)
{
	uint64_t t = r->time_ns > start_ns ? r->time_ns - start_ns : 0;
	char psn[24] = "";
	int n;

	if (r->reason == MRC_EVR_LOSS)
		snprintf(psn, sizeof(psn), " psn=%u", r->psn);
	n = snprintf(buf, len, "%" PRIu64 ".%03" PRIu64 " qp=%u profile=%u idx=%u "
		     "ev=0x%x plane=%u %s->%s reason=%s%s dropped=%" PRIu64 "\n",
		     t / 1000000, t / 1000 % 1000, r->qpn, r->profile, r->idx, r->ev,
		     r->plane, ev_state_label(r->prev_state), ev_state_label(r->state),
		     ev_reason_name(r->reason), psn, dropped);
	return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

static size_t format_json(const struct ev_record *r, uint64_t dropped,
			  char *buf, size_t len)
{
	char psn[16] = "null", sent[24] = "null";
	int n;

	if (r->reason == MRC_EVR_LOSS) {
		snprintf(psn, sizeof(psn), "%u", r->psn);
		snprintf(sent, sizeof(sent), "%" PRIu64, r->sent_ns);
	}
	n = snprintf(buf, len, "{\"seq\": %" PRIu64 ", \"time_ns\": %" PRIu64
		     ", \"qpn\": %u, \"profile\": %u, \"idx\": %u, \"ev\": %u, "
		     "\"plane\": %u, \"state\": \"%s\", \"prev_state\": \"%s\", "
		     "\"reason\": \"%s\", \"psn\": %s, \"lost_sent_ns\": %s, "
		     "\"dropped\": %" PRIu64 "}\n",
		     r->seq, r->time_ns, r->qpn, r->profile, r->idx, r->ev, r->plane,
		     ev_state_label(r->state), ev_state_label(r->prev_state),
		     ev_reason_name(r->reason), psn, sent, dropped);
	return n > 0 && (size_t)n < len ? (size_t)n : 0;
}

size_t ev_record_format(const struct ev_record *r, uint64_t start_ns,
			uint64_t extra_dropped, bool json, char *buf, size_t len)
{
	uint64_t dropped = r->dropped + extra_dropped;

	return json ? format_json(r, dropped, buf, len) :
		      format_text(r, start_ns, dropped, buf, len);
}
