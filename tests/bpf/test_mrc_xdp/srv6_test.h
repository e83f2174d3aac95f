/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SRv6 envelopes for the tests (srv6.c, probes.c), built byte by byte
 * from docs/WIRE.md section 13, independently of bpf/mrc/srv6.h.
 */
#ifndef MRC_SRV6_TEST_H
#define MRC_SRV6_TEST_H

#include <arpa/inet.h>

#include "mrc_xdp_test.h"

#define ENV_LEN		MRC_SRV6_ENCAP_LEN	/* outer IPv6 + SRH */
#define SRH_LEN		MRC_SRV6_SRH_LEN	/* 8 + 2 segments */

/* fd00:5:1001:: (block fd00:5::/32, uSID 0x1001). */
extern const __u8 carrier_1001[16];

/* Ethernet + the inner packet of an enveloped frame. */
void srv6_inner(__u8 *out, const __u8 *wrapped, size_t wrapped_len);
/*
 * `out` carries the envelope a sender puts on (Segments Left 1, outer
 * destination the carrier) around an inner packet whose frame (Ethernet
 * + inner packet) is inner_frame_len bytes.
 */
void expect_envelope(const __u8 *out, size_t inner_frame_len, const __u8 carrier[16]);

#endif
