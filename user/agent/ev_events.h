/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * mrcd's EV event log: every GOOD <-> ASSUMED_BAD change of an EV, from
 * XDP's ring (loss, ALWAYS_SKIP), from the tables (libmrc's timeouts,
 * changes nobody reported) and from mrcd itself (port status, probes).
 * The last EV_LOG_KEEP events stay in memory for `mrcctl events`; each
 * has a sequence number that only grows while mrcd runs, so a reader
 * that falls behind knows exactly how many it missed.
 */
#ifndef MRC_EV_EVENTS_H
#define MRC_EV_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrc/abi.h"

#define EV_LOG_KEEP	4096

/*
 * The profile's event_mask: which changes are reported. 0 = all of them
 * (ev_profile.c gives the mask no other meaning).
 */
#define EV_MASK_BAD	(1u << 0)	/* changes to ASSUMED_BAD */
#define EV_MASK_GOOD	(1u << 1)	/* changes back to GOOD */

struct ev_record {
	uint64_t seq;		/* 1, 2, ... */
	uint64_t time_ns;	/* CLOCK_MONOTONIC (= bpf_ktime_get_ns) */
	uint64_t dropped;	/* events lost before this one */
	uint32_t qpn;
	uint32_t ev;
	uint32_t psn;		/* MRC_EVR_LOSS only */
	uint64_t sent_ns;	/* MRC_EVR_LOSS: when the lost packet was sent */
	uint16_t idx;
	uint16_t plane;
	uint16_t profile;
	uint8_t state;		/* enum mrc_ev_state: the new one */
	uint8_t prev_state;
	uint8_t reason;		/* enum mrc_ev_reason */
};

struct ev_log {
	struct ev_record rec[EV_LOG_KEEP];
	uint64_t next_seq;	/* the next record's seq */
	uint64_t start_ns;	/* mrcd's start: text times count from here */
	uint64_t sub_dropped;	/* events slow subscribers never got */
};

void ev_log_init(struct ev_log *log, uint64_t start_ns);

/* Append (r->seq is assigned); returns the stored record. */
const struct ev_record *ev_log_add(struct ev_log *log, const struct ev_record *r);

/* Oldest kept seq and one past the newest; equal when empty. */
uint64_t ev_log_first(const struct ev_log *log);
static inline uint64_t ev_log_end(const struct ev_log *log)
{
	return log->next_seq;
}

/* The record with this seq, or NULL when it is not kept (any more). */
const struct ev_record *ev_log_get(const struct ev_log *log, uint64_t seq);

/* Whether a profile with this event_mask reports a change to `state`. */
bool ev_mask_reports(uint32_t mask, uint8_t state);

const char *ev_reason_name(uint8_t reason);
const char *ev_state_label(uint8_t state);

/*
 * One line, '\n' included, for `mrcctl events`: text or a JSON object.
 * `extra_dropped` adds what this reader missed. Returns the length, or
 * 0 when it does not fit in `len`.
 */
size_t ev_record_format(const struct ev_record *r, uint64_t start_ns,
			uint64_t extra_dropped, bool json, char *buf, size_t len);

#endif
