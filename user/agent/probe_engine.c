// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcd's fault tolerance engine; see probe_engine.h for what it does and
 * probe_int.h for how its files share the work. This one: set-up on the
 * pinned maps (user/common/pins.h), the poll loop and its 2 ms tick, the
 * sockets, and what mrcd reads of the engine.
 */
#define _GNU_SOURCE
#include "agent/probe_engine.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/timerfd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/errmsg.h"
#include "agent/probe_int.h"
#include "agent/probe_net.h"

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
	[PE_PROBE_ANSWERS_FOREIGN] = "probe_answers_foreign",
	[PE_PEER_MAP_ERRORS] = "peer_map_errors",
	[PE_TICKS] = "ticks",
	[PE_IDLE_TICKS] = "idle_ticks",
};

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
		pe_on_port_status(pe, src, eph);
}

static void plane_packet(struct probe_engine *pe, const uint8_t src[16], uint8_t opcode,
			 const struct mrc_eph *eph, void *arg)
{
	(void)arg;
	if (opcode == MRC_OP_EP_RESPONSE && eph->kind == MRC_EP_EV_PROBE)
		pe_on_probe_answer(pe, src, eph);
}

/* Through the program's logger, if it gave one (pe_setup.log). */
void pe_say(const struct probe_engine *pe, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!pe->cfg.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pe->cfg.log(pe->cfg.log_arg, msg);
}

/* ---- the loop ----------------------------------------------------------- */

/* Tick every `ms` from now on (a no-op when it already does); -errno on failure. */
static int set_tick(struct probe_engine *pe, uint32_t ms)
{
	struct itimerspec its = {
		.it_interval = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L },
		.it_value = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L },
	};

	if (pe->tick_ms == ms)
		return 0;
	if (pe->timer_fd < 0 || timerfd_settime(pe->timer_fd, 0, &its, NULL))
		return -errno;
	pe->tick_ms = ms;
	return 0;
}

/* Anything to do before the next idle tick would come? */
static bool engine_busy(const struct probe_engine *pe)
{
	if (pe->walk.n_hot)
		return true;	/* an EV down, a QP being set up */
	for (int i = 0; i < PE_MAX_JOBS; i++)
		if (pe->jobs[i])
			return true;
	for (int i = 0; i < PE_ANNOUNCES; i++)
		if (pe->announce[i].t0 && pe->announce[i].sent < ANNOUNCE_TIMES)
			return true;
	return false;
}

static void tick(struct probe_engine *pe)
{
	static struct candidate cand[PE_MAX_CANDIDATES];
	int n_cand = 0;

	pe->counters[PE_TICKS]++;
	if (pe->tick_ms == PE_IDLE_TICK_MS)
		pe->counters[PE_IDLE_TICKS]++;
	pe->now = mono_ns();
	pe_drain_ring(pe);
	pe_announce_step(pe);
	for (int i = 0; i < PE_MAX_JOBS; i++)
		if (pe->jobs[i])
			pe_job_step(pe, pe->jobs[i]);
	pe->budget = PE_PROBES_PER_TICK;
	pe_walk_tick(pe);
	pe_peers_tick(pe);
	pe_scan_slots(pe, cand, &n_cand);
	if (n_cand) {
		pe_drain_ring(pe);
		pe_report_unreported(pe, cand, n_cand);
	}
	set_tick(pe, engine_busy(pe) ? PE_TICK_MS : PE_IDLE_TICK_MS);
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
		pe_drain_ring(pe);
		break;
	case FD_LINK:
		if (link_watch_read(p->fd, pe_on_link_change, pe) == -ENOBUFS)
			pe_reread_links(pe);
		break;
	case FD_CTL:
		read_ep(pe, p->fd, ctl_packet, NULL);
		break;
	case FD_PLANE:
		read_ep(pe, p->fd, plane_packet, NULL);
		break;
	case FD_JOB:
		if (job_live(pe, what->job))
			read_ep(pe, p->fd, pe_job_packet, what->job);
		break;
	}
	/* Something happened: the next tick comes soon and decides again. */
	if (what->kind != FD_TIMER)
		set_tick(pe, PE_TICK_MS);
}

void pe_process(struct probe_engine *pe, const struct pollfd *pfd, int n)
{
	for (int i = 0; i < n && i < PE_MAX_FDS; i++)
		if (pfd[i].revents)
			process_one(pe, &pfd[i], &pe->fds[i]);
}

/* ---- set-up ------------------------------------------------------------- */

/*
 * The maps the engine works on, each opened from the pin folder and
 * checked (user/common/pins.h): mrc_planes (addresses, DOWN flags),
 * mrc_qps, mrc_qp_owner (which QPs exist), mrc_qp_evs and mrc_tx
 * (mmapped), mrc_ev_profiles (event masks), mrc_ctl_stats (events XDP
 * lost), the ring mrc_ev_events, and the two it writes: mrc_known_peers
 * and mrc_probe_ports. Sized by mrcd's limit, learned from the maps.
 */
static int open_maps(struct probe_engine *pe, char *err, size_t errlen)
{
	static const enum mrc_pin used[] = {
		MRC_PIN_PLANES, MRC_PIN_QPS, MRC_PIN_QP_OWNER, MRC_PIN_QP_EVS,
		MRC_PIN_TX, MRC_PIN_EV_PROFILES, MRC_PIN_CTL_STATS, MRC_PIN_EV_EVENTS,
		MRC_PIN_KNOWN_PEERS, MRC_PIN_PROBE_PORTS,
	};
	int rc;

	rc = mrc_pins_open(&pe->pins, pe->cfg.pin_dir, used,
			   sizeof(used) / sizeof(used[0]), err, errlen);
	if (rc)
		return rc;
	pe->max_qps = pe->pins.max_qps;
	/* Each QP's, mapped slot by slot as the walk finds them (probe_walk.c). */
	rc = mrc_state_maps_open(&pe->evs, pe->pins.fd[MRC_PIN_QP_EVS],
				 pe->pins.fd[MRC_PIN_QPS], sizeof(struct mrc_qp_evs),
				 PROT_READ | PROT_WRITE);
	if (!rc)
		rc = mrc_state_maps_open(&pe->tx, pe->pins.fd[MRC_PIN_TX],
					 pe->pins.fd[MRC_PIN_QPS], sizeof(struct mrc_tx_state),
					 PROT_READ);
	if (rc)
		return fail(-1, err, errlen, "the QP state maps (mrc_qp_evs, mrc_tx): %s",
			    strerror(-rc));
	return 0;
}

/* What the engine keeps per QP slot, max_qps of each (the limit is mrcd's). */
static int alloc_per_qp(struct probe_engine *pe, char *err, size_t errlen)
{
	struct pe_peers *pp = &pe->peers;
	size_t n = pe->max_qps;

	pe->slots = calloc(n, sizeof(*pe->slots));
	pp->seen_state = calloc(n, sizeof(*pp->seen_state));
	pp->seen_gen = calloc(n, sizeof(*pp->seen_gen));
	pp->n_addrs = calloc(n, sizeof(*pp->n_addrs));
	pp->addrs = calloc(n, sizeof(*pp->addrs));
	if (!pe->slots || !pp->seen_state || !pp->seen_gen || !pp->n_addrs ||
	    !pp->addrs || pe_walk_open(pe))
		return fail(-1, err, errlen, "out of memory for %u QPs", pe->max_qps);
	return 0;
}

static void free_per_qp(struct probe_engine *pe)
{
	struct pe_peers *pp = &pe->peers;

	for (uint32_t s = 0; pe->slots && s < pe->max_qps; s++)
		free(pe->slots[s]);
	free(pe->slots);
	free(pp->seen_state);
	free(pp->seen_gen);
	free(pp->n_addrs);
	free(pp->addrs);
	pe_walk_close(pe);
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
	if (bpf_map_lookup_elem(pe->pins.fd[MRC_PIN_PLANES], &key, &mp))
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
	pe->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	pe->tick_ms = 0;
	if (pe->timer_fd < 0 || set_tick(pe, PE_TICK_MS))
		return fail(-1, err, errlen, "timerfd: %s", strerror(errno));
	return 0;
}

static int open_ring(struct probe_engine *pe, char *err, size_t errlen)
{
	pe->ring = ring_buffer__new(pe->pins.fd[MRC_PIN_EV_EVENTS], pe_on_ring_event,
				    pe, NULL);
	if (!pe->ring)
		return fail(-1, err, errlen, "reading the EV event ring (mrc_ev_events): %s",
			    strerror(errno));
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
	if (!pe->percpu || !pe->prof_buf)
		return fail(-1, err, errlen, "out of memory");
	return 0;
}

struct probe_engine *pe_open(const struct pe_setup *setup, char *err, size_t errlen)
{
	struct probe_engine *pe = calloc(1, sizeof(*pe));
	int i;

	if (!pe) {
		fail(0, err, errlen, "out of memory");
		return NULL;
	}
	pe->cfg = *setup;
	mrc_pins_init(&pe->pins);
	pe->timer_fd = pe->link_fd = pe->ctl_fd = -1;
	for (i = 0; i < MRC_MAX_PLANES_ABI; i++)
		pe->planes[i].sock4 = pe->planes[i].sock6 = -1;
	pe->now = mono_ns();
	ev_log_init(&pe->log, pe->now);
	if (alloc_buffers(pe, err, errlen) || open_maps(pe, err, errlen) ||
	    alloc_per_qp(pe, err, errlen) || open_timer(pe, err, errlen) ||
	    open_ring(pe, err, errlen))
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
	/* Before the first tick: peers and probe ports known to XDP at once. */
	pe_peers_open(pe);
	pe_walk_refresh(pe);
	pe_peers_tick(pe);
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
			pe_job_free(pe->jobs[i]);
	for (int i = 0; i < MRC_MAX_PLANES_ABI; i++) {
		close_fd(pe->planes[i].sock4);
		close_fd(pe->planes[i].sock6);
	}
	free_per_qp(pe);
	close_fd(pe->timer_fd);
	close_fd(pe->link_fd);
	close_fd(pe->ctl_fd);
	ring_buffer__free(pe->ring);
	mrc_state_maps_close(&pe->evs);
	mrc_state_maps_close(&pe->tx);
	mrc_pins_close(&pe->pins);
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
	for (uint32_t w = 0; w < pe->walk.n; w++) {
		const struct pe_slot *s = pe->slots[pe->walk.slot[w]];

		for (uint32_t i = 0; s && i < s->n_evs; i++)
			st->bad_evs += s->ev[i].known == KNOWN_BAD;
	}
	memcpy(st->counters, pe->counters, sizeof(st->counters));
}
