/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * libmrc layer "paths" (see LAYERS): EV path discovery, which spine each
 * EV of a QP's table crosses (discover.c says how).
 */
#ifndef MRC_DISCOVER_H
#define MRC_DISCOVER_H

#include <stdbool.h>
#include <stdint.h>

#include "base.h"

/*
 * Probe the n entries of the QP's table `evs` (EVs of wire format
 * `format`) towards the QP's peer addresses, IPv4 or IPv6, and label each
 * answered entry with its spine (path 1, 2, ... per plane). With
 * `balance`, also keep as many active EVs per spine on every plane and
 * make the surplus backups. Changes nothing where no spine answers or
 * raw sockets are not allowed. The outcome is kept for a few seconds: a
 * QP with the same table towards the same addresses (thousands of QPs
 * between two hosts) gets it without probing again, since its packets
 * carry the same headers and so take the same paths.
 */
void mrc_discover_paths(struct mrc_qp *qp, struct mrc_qp_evs *evs, uint32_t n,
			uint8_t format, bool balance);

/* Forget the context's recent discoveries (at close). */
void mrc_discover_cache_free(struct mrc_context *ctx);

#endif /* MRC_DISCOVER_H */
