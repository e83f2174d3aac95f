/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * How an application without privileges gets its QPs from mrcd.
 *
 * Why: the fast path's maps are root's (the pin folder is 0700), and an
 * application that could open them could read and write every QP of the
 * host. So mrcd holds the privileges and does, for each application, the
 * few writes a QP's life needs to the shared maps (its QP number, its
 * entry in mrc_qps, its peers, its window), after checking that the QP,
 * the context and the window named are the application's own. What the
 * fast path and the application share per QP (rx, tx and EV table, send
 * log, per-EV counters, congestion view, event ring) lives in maps of the
 * QP's or the context's own, and mrcd passes the application their file
 * descriptors and nothing else (SCM_RIGHTS).
 *
 * Where: one Unix socket per agent next to mrcctl's (agent_ipc.h), named
 * like it with "-apps" before ".sock", mode 0666 or 0660 with mrcd's
 * --app-group. One connection is one context: when it closes (the
 * process ended or closed its context) mrcd takes back everything the
 * context held.
 *
 * Protocol (SOCK_SEQPACKET, synchronous): the application sends one
 * struct mrc_broker_req and waits for one struct mrc_broker_rep, which
 * carries up to MRC_BROKER_MAX_FDS descriptors. status is 0 or -errno;
 * msg says why in words when the request was refused. HELLO comes first
 * and once.
 */
#ifndef MRC_COMMON_BROKER_H
#define MRC_COMMON_BROKER_H

#include <stdint.h>
#include <sys/types.h>

#include "mrc/abi.h"

#define MRC_BROKER_MAGIC	0x4252434du	/* "MCRB" */
#define MRC_BROKER_VERSION	1
#define MRC_BROKER_MAX_FDS	6
#define MRC_BROKER_TIMEOUT_MS	5000
#define MRC_BROKER_SOCK_SUFFIX	"-apps.sock"

enum mrc_broker_op {
	/*
	 * arg[0] = the client's MRC_ABI_VERSION. Reply: val[0] the context
	 * slot, val[1] max QPs, val[2] max contexts; fds: the event ring,
	 * the UDP socket (bound, buffers sized), and read-only mrc_planes,
	 * mrc_ev_profiles, mrc_cc_profiles, mrc_cfg.
	 */
	MRC_BROKER_HELLO = 1,
	/*
	 * Reply: val[0] QP number, val[1] slot, val[2] the QP's entry in its
	 * state maps (mrc_qp_info.state_idx); fds: rx, tx, EV table (blocks).
	 */
	MRC_BROKER_QP_CREATE,
	/* slot: the QP goes, with its peers and inner maps. */
	MRC_BROKER_QP_DESTROY,
	/* slot, u.info: what XDP and TC see of the QP (checked). */
	MRC_BROKER_QP_PUBLISH,
	/* slot, arg[0] remote QP, u.peers: the QP's peer entries (replaced). */
	MRC_BROKER_PEERS_SET,
	MRC_BROKER_PEERS_CLEAR,
	/*
	 * slot, arg[0] window (PSNs), arg[1] EV count, arg[2] 1 = the send
	 * log alone. Fresh send log and per-EV counters (and reverse EVs);
	 * fds: the send log, then XDP's and TC's per-EV counters.
	 */
	MRC_BROKER_QP_MAPS,
	/* u.cc: the window's first state. Reply: val[0] slot; fd: its view. */
	MRC_BROKER_CC_CLAIM,
	/* slot: a window given back. */
	MRC_BROKER_CC_RELEASE,
	/*
	 * u.discover: label the EV entries with their spines (path
	 * discovery needs raw sockets, common/path_probe.h); the entries come
	 * back in the reply's u.ev, val[0] = 1 if any spine answered. At most
	 * MRC_BROKER_DISCOVER_BURST at once, MRC_BROKER_DISCOVER_PER_S a
	 * second after that, per context (-EAGAIN beyond).
	 */
	MRC_BROKER_DISCOVER,
	MRC_BROKER_OP__COUNT
};

/* HELLO's descriptors, in this order. */
enum mrc_broker_hello_fd {
	MRC_BROKER_FD_RING,
	MRC_BROKER_FD_SOCKET,
	MRC_BROKER_FD_PLANES,
	MRC_BROKER_FD_EV_PROFILES,
	MRC_BROKER_FD_CC_PROFILES,
	MRC_BROKER_FD_CFG,
	MRC_BROKER_FD__COUNT
};

struct mrc_broker_peers {
	uint32_t n;
	uint8_t addr[MRC_MAX_PEER_ADDRS][16];
};

#define MRC_BROKER_DISCOVER_BURST	16
#define MRC_BROKER_DISCOVER_PER_S	20

struct mrc_broker_discover {
	uint32_t n_peers;
	uint32_t n;		/* entries of ev */
	uint16_t dport;		/* the peers' MRC port */
	uint8_t format;		/* enum mrc_ev_format */
	uint8_t balance;
	uint8_t peers[MRC_MAX_PLANES_ABI][16];
	struct mrc_ev_entry ev[MRC_MAX_EVS];
};

struct mrc_broker_req {
	uint32_t magic;		/* MRC_BROKER_MAGIC */
	uint16_t version;	/* MRC_BROKER_VERSION */
	uint16_t op;		/* enum mrc_broker_op */
	uint32_t slot;
	uint32_t arg[3];
	union {
		struct mrc_qp_info info;
		struct mrc_broker_peers peers;
		struct mrc_cc_state cc;
		struct mrc_broker_discover discover;
	} u;
};

struct mrc_broker_rep {
	uint32_t magic;
	uint16_t version;
	uint16_t op;		/* the request's */
	int32_t status;		/* 0 or -errno */
	uint32_t val[3];
	uint32_t n_fds;
	char msg[200];		/* why, when refused */
	union {
		struct mrc_ev_entry ev[MRC_MAX_EVS];	/* DISCOVER */
	} u;
};

/* The apps socket of the agent whose mrcctl socket is ctl_sock_path. */
int mrc_broker_sock_path(const char *ctl_sock_path, char *out, size_t len);

/*
 * One message with up to MRC_BROKER_MAX_FDS descriptors; 0 or -errno.
 * send: never blocks (MSG_DONTWAIT). recv: the descriptors received (the
 * caller owns them; -1 past n_fds), EPROTO for a message of another size.
 */
int mrc_broker_send(int sock, const void *msg, size_t len, const int *fds,
		    unsigned int n_fds);
int mrc_broker_recv(int sock, void *msg, size_t len, int *fds,
		    unsigned int max_fds, unsigned int *n_fds);

#endif /* MRC_COMMON_BROKER_H */
