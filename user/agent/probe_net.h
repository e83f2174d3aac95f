/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * The network side of mrcd's probing: endpoint control packets (EV probes
 * and port status, include/mrc/abi.h struct mrc_eph), the sockets they
 * leave from, map addresses (IPv6 or IPv4-mapped, 16 bytes) and an
 * rtnetlink watch of the plane links.
 */
#ifndef MRC_PROBE_NET_H
#define MRC_PROBE_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "mrc/abi.h"

/* UDP payload of an endpoint packet: BTH + EPH. */
#define EP_PKT_LEN	(sizeof(struct mrc_bth) + sizeof(struct mrc_eph))

/*
 * An EV probe request. reply_port is filled with our socket's port
 * (network order) although TC egress writes the same there: a probe that
 * TC did not stamp still finds its way back. format is the QP table's
 * (enum mrc_ev_format): an SRv6 EV's probe carries the locator block
 * (srv6_block_be) for TC's envelope.
 */
void ep_build_probe(uint8_t *buf, uint32_t req_id, uint32_t ev, uint8_t plane,
		    uint16_t reply_port, uint8_t format, uint32_t srv6_block_be);
void ep_build_port_status(uint8_t *buf, uint8_t plane, uint8_t status);

/*
 * Check an endpoint packet and copy its header out, the fields in host
 * order (req_id, ev, reply_port; the time stamps are host order already).
 * 0, or -EINVAL for anything that is not one.
 */
int ep_parse(const void *buf, size_t len, uint8_t *opcode, struct mrc_eph *eph);

/* ---- addresses ---------------------------------------------------------- */

bool addr_is_v4mapped(const uint8_t a[16]);
bool addr_is_zero(const uint8_t a[16]);
/* A map address as a socket address with `port`; returns its length. */
socklen_t addr_to_sockaddr(const uint8_t a[16], uint16_t port,
			   struct sockaddr_storage *ss);
/* A socket address (IPv4, IPv6 or v4-mapped IPv6) as a map address. */
void addr_from_sockaddr(const struct sockaddr_storage *ss, uint8_t a[16]);
/* A numeric IPv4 or IPv6 address as a map address; -EINVAL if it is not one. */
int addr_parse(const char *s, uint8_t a[16]);
const char *addr_text(const uint8_t a[16], char *buf, size_t len);

/* ---- sockets ------------------------------------------------------------ */

/*
 * A non-blocking UDP socket that sends on interface `ifname` from `addr`
 * (4 bytes for AF_INET, 16 for AF_INET6), any port. Its port in *port.
 * -errno with the reason in err.
 */
int plane_socket_open(const char *ifname, int family, const uint8_t *addr,
		      uint16_t *port, char *err, size_t errlen);

/* mrcd's control socket: dual-stack, any address, any port. */
int ctl_socket_open(uint16_t *port, char *err, size_t errlen);

/* ---- plane links -------------------------------------------------------- */

/*
 * A link carries traffic when it is up (IFF_UP), running and has carrier
 * (IFF_RUNNING, IFF_LOWER_UP): a cable pulled at the far end, or the
 * switch port down, clears the last two.
 */
bool link_flags_up(unsigned int flags);
bool link_is_up(int ifindex);

/* An rtnetlink socket subscribed to link changes (non-blocking). */
int link_watch_open(char *err, size_t errlen);

typedef void (*link_change_fn)(void *arg, int ifindex, bool up);

/*
 * Read what is queued: cb per link message. -ENOBUFS when the kernel
 * dropped messages (the caller re-reads every link), else 0.
 */
int link_watch_read(int fd, link_change_fn cb, void *arg);

#endif
