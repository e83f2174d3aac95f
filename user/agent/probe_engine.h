/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * mrcd's fault tolerance engine: it keeps the EV event log, probes the
 * ASSUMED_BAD EVs of live QPs until they answer, reacts to plane links
 * going down and up (its own, and its peers' through port status), and
 * runs the connectionless probes `mrcctl probe` asks for.
 *
 * Everything runs from mrcd's poll loop: the engine hands out its file
 * descriptors (a 2 ms timer, XDP's event ring, rtnetlink, the control
 * socket, one probe socket per plane and address family, one per manual
 * probe job) and does its work when they are ready. Nothing blocks.
 *
 * What the engine knows about an EV (GOOD or ASSUMED_BAD) is what it has
 * reported: a table entry in ASSUMED_BAD that it never heard about was
 * demoted without an event (libmrc's timeouts, a full ring), and gets
 * one (reason TIMEOUT or UNKNOWN) when the engine finds it.
 */
#ifndef MRC_PROBE_ENGINE_H
#define MRC_PROBE_ENGINE_H

#include <net/if.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mrc/abi.h"
#include "agent/ev_events.h"

#define PE_INTERVAL_MS_DEFAULT	50
#define PE_SUCCESS_GAP_MS	10	/* next probe after an answered one */
#define PE_TIMEOUT_MIN_MS	20	/* a probe is lost after max(this, 4 x best RTT) */
#define PE_FLAP_WINDOW_MS	1000	/* demoted this soon after recovery: back off */
#define PE_CALM_MS		5000	/* each of these GOOD halves the backoff */
#define PE_MAX_SHIFT		5	/* the interval grows to 32 x at most */
#define PE_TICK_MS		2
/*
 * With nothing to probe, announce or follow (no slot with an EV down, no
 * QP being set up, no `mrcctl probe`), the engine ticks every 20 ms: the
 * 2 ms tick cost an mrcd without QPs 1.1% of a CPU (a poll over its
 * sockets 500 times a second; 0.5-0.7% now). Any event, packet, link
 * change or request brings the 2 ms tick back at once.
 */
#define PE_IDLE_TICK_MS		20
#define PE_PROBES_PER_TICK	512
#define PE_MAX_JOBS		16	/* `mrcctl probe` at once */
#define PE_JOB_MAX_COUNT	1000
#define PE_JOB_TIMEOUT_MS	1000
#define PE_MAX_FDS		(4 + 2 * MRC_MAX_PLANES_ABI + PE_MAX_JOBS)
#define PE_MAX_CONFIGURED_PEERS	256	/* mrcd --peers */

/* Counters `mrcctl stats` shows, in this order (pe_counter_names). */
enum pe_counter {
	PE_PROBES_SENT,
	PE_PROBES_ANSWERED,
	PE_PROBES_TIMED_OUT,
	PE_PROBES_SEND_FAILED,
	PE_PROBE_ANSWERS_STALE,	/* answer to no probe we still wait for */
	PE_PROMOTIONS,
	PE_DEMOTIONS_PORT_DOWN,
	PE_DEMOTIONS_PEER_PORT_DOWN,
	PE_DEMOTE_REFUSED,	/* by ev_min_active */
	PE_FOUND_UNREPORTED,	/* ASSUMED_BAD entries without an event */
	PE_PORT_STATUS_SENT,
	PE_PORT_STATUS_RX,
	PE_PORT_STATUS_IGNORED,	/* from an address that is no QP's peer */
	PE_EVENTS,		/* recorded in the log */
	PE_EVENTS_MASKED,	/* not recorded: the profile's event_mask */
	PE_EVENTS_SLOW_READER,	/* a subscriber missed them */
	PE_MANUAL_PROBES_SENT,
	PE_MANUAL_PROBES_ANSWERED,
	/* a probe answer at our sockets from another address than probed */
	PE_PROBE_ANSWERS_FOREIGN,
	/* mrc_known_peers / mrc_probe_ports writes that failed (map full?) */
	PE_PEER_MAP_ERRORS,
	PE_TICKS,		/* the engine's ticks */
	PE_IDLE_TICKS,		/* of which at the idle interval */
	PE_N_COUNTERS,
};

extern const char *const pe_counter_names[PE_N_COUNTERS];

struct pe_plane_cfg {
	char name[IFNAMSIZ];
	int ifindex;
};

/*
 * What the engine has to say as it runs (a plane's link went down or up,
 * a map it could not write), one line without its '\n': the program
 * prints it, the engine never does.
 */
typedef void (*pe_log_fn)(void *arg, const char *msg);

struct pe_setup {
	int n_planes;
	struct pe_plane_cfg planes[MRC_MAX_PLANES_ABI];
	uint32_t probe_successes;
	uint32_t probe_interval_ms;
	uint16_t udp_port;		/* MRC's, where probes and status go */
	/*
	 * Peers XDP serves without a QP to them (EV probes answered, port
	 * status passed): mrcd --peers, map addresses (IPv6 or v4-mapped).
	 * The peers of live QPs are served anyway (mrc_known_peers).
	 */
	int n_peers;
	uint8_t peers[PE_MAX_CONFIGURED_PEERS][16];
	/*
	 * The pin folder: the engine opens the maps it uses there (its own
	 * fds, user/common/pins.h, checked), only during pe_open().
	 */
	const char *pin_dir;
	pe_log_fn log;			/* NULL: say nothing */
	void *log_arg;
};

/* What `mrcctl status` shows of the engine. */
struct pe_status {
	uint32_t probe_successes;
	uint32_t probe_interval_ms;
	uint16_t agent_port;
	uint64_t best_rtt_ns;		/* 0 = none yet */
	uint32_t bad_evs;		/* ASSUMED_BAD EVs being probed */
	int n_planes;
	bool link_up[MRC_MAX_PLANES_ABI];
	uint64_t counters[PE_N_COUNTERS];
};

struct probe_engine;

/* NULL with the reason in err (pinned maps of another build among them). */
struct probe_engine *pe_open(const struct pe_setup *setup, char *err, size_t errlen);
void pe_close(struct probe_engine *pe);

/* The port XDP steers port status to (mrc_global_cfg.agent_port). */
uint16_t pe_agent_port(const struct probe_engine *pe);

/* Fill pfd[] (up to PE_MAX_FDS) with what to wait for; returns how many. */
int pe_pollfds(struct probe_engine *pe, struct pollfd *pfd);
/* After poll: the entries pe_pollfds filled, with their revents. */
void pe_process(struct probe_engine *pe, const struct pollfd *pfd, int n);

struct ev_log *pe_log(struct probe_engine *pe);
void pe_count(struct probe_engine *pe, enum pe_counter c, uint64_t n);
void pe_status(const struct probe_engine *pe, struct pe_status *st);

/* ---- `mrcctl probe` ----------------------------------------------------- */

struct pe_job_req {
	uint8_t to[16];			/* map address */
	uint32_t ev;
	uint32_t plane;			/* 1-based */
	uint32_t count;
	uint32_t interval_ms;
	bool json;
};

struct pe_job;

/* NULL with the reason in err (no such plane, link down, no address...). */
struct pe_job *pe_job_start(struct probe_engine *pe, const struct pe_job_req *req,
			    char *err, size_t errlen);
/*
 * Output produced so far, from `from` on (text: a line per probe as it
 * ends; JSON: the whole document at the end). *len is its length.
 */
const char *pe_job_output(const struct pe_job *job, size_t from, size_t *len);
/* Finished: *status is the exit status (0 when any probe was answered). */
bool pe_job_done(const struct pe_job *job, int *status);
void pe_job_end(struct probe_engine *pe, struct pe_job *job);

#endif
