/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * mrcd's own header: the agent's state and what its files call in each
 * other. Not installed, not used outside user/mrcd/.
 *
 *   main.c     options, --help, start-up and teardown, the poll loop
 *   log.c      the one logger (pr_err/pr_info) and libbpf's/libxdp's output
 *   daemon.c   lock, pidfile, --daemon, SIGHUP re-exec, --detach
 *   load.c     skeleton open/load on top of our pins, pinning, unpinning
 *   sizing.c   the maps sized for --max-qps/--max-contexts, memory checks
 *   config.c   mrc_cfg, the plane table, ifindex -> plane
 *   attach.c   XDP and TC attach, replace in place, detach
 *   probing.c  the probe engine (user/agent/probe_engine.h) set up for us
 *   ctl.c      mrcctl's socket: commands and streams
 *   apps.c     the applications' socket: contexts without privileges
 */
#ifndef MRCD_MRCD_H
#define MRCD_MRCD_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <net/if.h>

#include <xdp/libxdp.h>

#include "mrc/abi.h"
#include "common/broker.h"
#include "common/qpmaps.h"
#include "agent/agent_ipc.h"
#include "agent/clock.h"
#include "agent/probe_engine.h"

#define EXIT_RUNTIME	1
#define EXIT_USAGE	2

#define PROG_PIN_XDP	"prog_xdp"
#define PROG_PIN_TC	"prog_tc"
#define XDP_SECTION	"xdp"
#define ADOPT_OPT	"--adopt-fds="	/* internal: lock and socket fds of a re-exec */
#define DETACH_WAIT_MS	15000		/* --detach: how long a stopping agent may take */
#define PROBE_SUCCESSES_MAX	100
#define PROBE_INTERVAL_MAX_MS	60000
#define MRCD_MAX_QPS_DEFAULT	4096	/* --max-qps: an all-to-all of a large job */
#define MRCD_MAX_CTX_DEFAULT	256	/* --max-contexts */

/*
 * Our filter's identity on a clsact hook ("MC"), so we only ever replace
 * or delete our own. mrc-labctl uses 0x4d52 on the lab's fabric ports.
 */
#define MRCD_TC_HANDLE	0x4d43
#define MRCD_TC_PRIO	0x4d43

enum xdp_choice {
	XDP_CHOICE_AUTO,
	XDP_CHOICE_NATIVE,
	XDP_CHOICE_SKB,
};

/* How the XDP program ended up on a plane, so detaching undoes that. */
enum xdp_via {
	XDP_VIA_NONE,
	XDP_VIA_LIBXDP,		/* by libxdp: in its dispatcher, or alone */
	XDP_VIA_NETLINK,	/* attached directly with bpf_xdp_attach() */
	XDP_VIA_ADOPTED,	/* ours, attached by another loader: kept */
};

struct app;	/* apps.c */

struct plane {
	char name[IFNAMSIZ];
	int ifindex;
	enum xdp_via xdp_via;
	enum xdp_attach_mode xdp_mode;
	struct xdp_program *xdp_prog;	/* XDP_VIA_LIBXDP */
	struct bpf_object *xdp_obj;	/* the object xdp_prog came from */
	__u32 xdp_flags;		/* XDP_VIA_NETLINK: mode flags used */
	bool xdp_dispatcher;		/* XDP_VIA_LIBXDP: shares the device */
	int xdp_adopted_fd;		/* XDP_VIA_ADOPTED: the program kept; 0 = none */
	bool tc_attached;
	bool tc_adopted;		/* the filter was there, ours, and kept */
	__u32 tc_prog_id;		/* what our filter runs */
	/* watch.c: what the periodic check found taken off the plane */
	bool xdp_missing, tc_missing;
	bool repair_failed;		/* said once, tried again on every check */
	unsigned int xdp_losses, tc_losses, repairs;
};

struct options {
	const char *pin_dir_arg;
	const char *pidfile;
	const char *log_file;
	__u16 port;
	__u32 probe_successes;		/* answered probes that bring an EV back */
	__u32 probe_interval_ms;	/* first probe after a demotion */
	/* --peers: served without a QP (map addresses, see pe_setup.peers) */
	int n_peers;
	uint8_t peers[PE_MAX_CONFIGURED_PEERS][16];
	enum xdp_choice xdp_choice;
	/* --max-qps, --max-contexts: the maps are sized for them at load */
	__u32 max_qps;
	__u32 max_ctx;
	bool daemon;
	bool detach;
	bool no_repair;			/* --no-repair: report, never re-attach */
	const char *app_group;		/* --app-group: who may open contexts */
	const char *write_object;	/* --write-object FILE */
	int inherited_lock_fd;		/* re-exec: -1 otherwise */
	int inherited_listen_fd;
};

enum client_mode {
	CLIENT_COMMAND,		/* one request, one reply */
	CLIENT_EVENTS,		/* `mrcctl events`: EV events as they come */
	CLIENT_PROBE,		/* `mrcctl probe`: lines as the probes end */
};

/*
 * An mrcctl connection: waiting for its request, being answered, or a
 * stream (until it ends, then it is answered with its exit status).
 */
struct client {
	int fd;
	long long deadline_ms;
	bool replying;
	struct agent_reply reply;
	enum client_mode mode;
	bool json;
	bool blocked;			/* stream: socket full, wait for POLLOUT */
	long long blocked_since_ms;
	long long last_sent_ms;		/* stream: for the heartbeat */
	uint64_t next_seq;		/* EVENTS: next event to send */
	uint64_t left;			/* EVENTS --count: events still to send */
	bool limited;			/* EVENTS: --count given */
	struct pe_job *job;		/* PROBE */
	size_t job_sent;		/* PROBE: output sent so far */
};

struct agent {
	struct options opt;
	struct plane planes[MRC_MAX_PLANES_ABI];
	int n_planes;
	struct agent_paths paths;	/* pin folder, lock, socket */
	int lock_fd;
	bool pin_dir_ours;		/* locked and created/checked by us */
	bool wrote_pidfile;
	bool adopting;			/* found our pins: reuse, never wipe */
	struct mrc *skel;
	struct probe_engine *pe;
	int listen_fd;
	int sig_fd;
	struct client clients[AGENT_MAX_CLIENTS];
	int n_clients;
	/* apps.c: contexts of applications without privileges */
	int apps_listen_fd;
	char apps_sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	struct app **apps;
	uint32_t n_apps;
	struct mrc_qpmaps qpmaps;	/* the QPs' inner maps, made for them */
	char **argv;			/* for the re-exec */
	int argc;
};

/* ---- apps.c ------------------------------------------------------------ */

/* Connections beyond --max-contexts, for those that have not said HELLO. */
#define APPS_SPARE	8

int apps_open(struct agent *a);
void apps_close(struct agent *a, bool unlink_path);
int apps_max_pollfds(const struct agent *a);
int apps_pollfds(const struct agent *a, struct pollfd *pfd);
void apps_process(struct agent *a, const struct pollfd *pfd, int n);

/* ---- log.c: the one logger, "mrcd: " and the message, on stderr -------- */

enum mrcd_level {
	MRCD_ERR,	/* always said: errors, and what an operator should know */
	MRCD_INFO,	/* -v only */
};

__attribute__((format(printf, 2, 3)))
void mrcd_log(enum mrcd_level level, const char *fmt, ...);

#define pr_err(fmt, ...)	mrcd_log(MRCD_ERR, fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...)	mrcd_log(MRCD_INFO, fmt, ##__VA_ARGS__)

void log_set_verbose(bool on);
/* Said after "mrcd: " in every message until reset with NULL. */
void log_set_context(const char *where);
bool log_verbose(void);
/*
 * Set while we try something that has a fallback: libbpf's and libxdp's
 * warnings about that attempt would read like a failure when it is not.
 */
void log_quiet_libs(bool on);
/* Route libbpf's and libxdp's messages through the rules above. */
void log_install_lib_printers(void);

/* The clock of every deadline and stream timer (CLOCK_MONOTONIC). */
static inline long long now_ms(void)
{
	return (long long)(mono_ns() / 1000000);
}

/* ---- daemon.c ---------------------------------------------------------- */

int resolve_paths(struct agent *a);
int check_bpffs(const struct agent *a);
int check_private_dir(const char *what, const char *path, bool missing_ok);
int take_lock(struct agent *a);
void release_lock(struct agent *a);
int write_pidfile(struct agent *a);
int daemonize(int *ready_fd);
int detach_stdio(const struct agent *a);
void restart(struct agent *a);
int run_detach(struct agent *a);

/* ---- load.c ------------------------------------------------------------ */

int make_pin_dir(struct agent *a);
void unpin_all(const struct agent *a);
bool found_our_pins(const struct agent *a);
int load_fast_path(struct agent *a);
int configure_fast_path(const struct agent *a);

/* ---- sizing.c ---------------------------------------------------------- */

struct bpf_object;
int size_maps(const struct agent *a, struct bpf_object *obj);
/* export.c: --write-object */
int write_sized_object(const struct agent *a, const char *path);
int check_map_memory(const struct agent *a);
int check_adopted_sizes(const struct agent *a);
void explain_load_failure(const struct agent *a, int err);
void describe_map_memory(const struct agent *a, char *buf, size_t len);

/* ---- config.c ---------------------------------------------------------- */

int write_config(const struct agent *a);
bool is_our_ifindex(const struct agent *a, __u32 ifindex);
int read_old_planes(const struct agent *a, struct mrc_plane *old);
int set_agent_port(const struct agent *a, __u16 port);

/* ---- attach.c ---------------------------------------------------------- */

const char *mode_name(enum xdp_attach_mode mode);
__u32 tc_prog_id(int ifindex);
/* attach.c, for watch.c: attach again, and which program is ours */
int attach_xdp(const struct agent *a, struct plane *p);
int attach_tc(const struct agent *a, struct plane *p);
void forget_xdp(struct plane *p);
__u32 expected_xdp_id(const struct agent *a, const struct plane *p);
__u32 prog_id_of_fd(int fd);
bool plane_exists(const struct plane *p);
/* watch.c: notice programs taken off the planes, re-attach them */
#define WATCH_INTERVAL_MS	500
void watch_planes(struct agent *a);
bool remove_plane_leftovers(const struct mrc_plane *old);
int attach_planes(struct agent *a);
void detach_planes(struct agent *a);

/* ---- probing.c --------------------------------------------------------- */

int start_probing(struct agent *a);
void stop_probing(struct agent *a, bool clean);

/* ---- ctl.c ------------------------------------------------------------- */

int open_listener(struct agent *a);
void close_listener(struct agent *a, bool unlink_path);
bool can_accept(const struct agent *a);
void accept_clients(struct agent *a);
bool is_stream(const struct client *cl);
short client_events(const struct client *cl);
int serve_client(struct agent *a, struct client *cl, short revents);
void client_close(struct agent *a, int i);
void end_streams(struct agent *a, const char *why);

#endif
