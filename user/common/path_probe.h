/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * EV path discovery: which spine each EV of a table crosses (path_probe.c
 * says how). libmrc runs it for a privileged process; mrcd runs it for
 * the applications it brokers (common/broker.h), since it needs raw
 * sockets.
 */
#ifndef MRC_COMMON_PATH_PROBE_H
#define MRC_COMMON_PATH_PROBE_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

#include "mrc/abi.h"

/*
 * Probe the n entries of `evs` (EVs of wire format `format`) towards the
 * peer's addresses (peers[p] on plane p + 1; IPv4 as IPv4-mapped), to MRC
 * port dport, and label each answered entry with its spine (path 1, 2,
 * ... per plane). With `balance`, also keep as many active EVs per spine
 * on every plane and make the surplus backups. planes_fd: mrc_planes.
 * 1 if any spine answered; 0 (evs unchanged) when none did or raw
 * sockets are not allowed.
 */
int mrc_path_probe(int planes_fd, const struct in6_addr *peers, uint32_t n_peers,
		   uint16_t dport, struct mrc_qp_evs *evs, uint32_t n,
		   uint8_t format, bool balance);

#endif /* MRC_COMMON_PATH_PROBE_H */
