/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of build/tests/test_mrc_xdp share: the plane-2 namespace
 * main.c builds, the checks every role's tests make (verdicts, steering,
 * counters, context-ring events) and the packet runs used by more than one
 * role (SACK/NACK from the peer, TC DATA frames). Code in helpers.c.
 *
 * The files mirror the roles of bpf/mrc.bpf.c's fast path (tests register
 * with TEST_CASE and run in link order: file names alphabetically, then
 * definition order):
 *   data_rx.c                DATA receive: steering, PROBE, what is not MRC
 *   data_validation_table.c  DATA refused (malformed, QP, source, window) as
 *                            one table {case, mutation, QP state, verdict,
 *                            drop counters}
 *   trim_nack.c              trimmed DATA answered with a NACK (XDP_TX)
 *   conn_key.c               connection keys: a wrong key changes nothing
 *   ack_checks.c             acks checked against the sent window (NACK
 *                            range, sack_max/loss_mark, live RTT triggers,
 *                            EV index bounds, completions on a full ring)
 *   ack_rate.c               a NACK acts once per send of a PSN (storms
 *                            gated); a SACKed una shown missing is reneged
 *   ack_rx.c                 ACK receive: SACK/NACK, completions, event ring
 *   loss.c                   loss detection (RACK, same-EV rule, give-up)
 *   ev_feedback.c            reverse-EV learning, per-EV feedback of ACKs
 *   ev_demotion.c            EV demotion (ASSUMED_BAD, OWED, min_active,
 *                            same path, ALWAYS_SKIP) and its EV events
 *   cc.c                     congestion control: the NSCC window in XDP
 *   probes.c                 probes and endpoint messages (XDP and TC)
 *   srv6.c                   SRv6 EVs: the envelope on (TC), off (XDP)
 *   tc_spray.c               TC spraying: EV rotation, send log, stamping
 *   tc_planes.c              TC spraying over planes, ACK spraying
 *   helpers.c                what several of them use (this header)
 *   main.c                   the namespace, the skeleton, the run
 *
 * Every test starts from setup_qp() (or setup_table(), setup_cc()), which
 * resets every map the tests touch: no test relies on another having run.
 */
#ifndef MRC_XDP_TEST_H
#define MRC_XDP_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mrc/abi.h"
#include "mrc/nscc.h"
#include "mrc.skel.h"
#include "test.h"
#include "packet.h"
#include "mrc_fixture.h"

/*
 * A SACK hole's LOSS event names the EV the send log says the PSN went out
 * on (not the EV the SACK echoes); without a record for the PSN, 0.
 */
#define UNLOGGED_EV	0

/* Sources that are no peer of the test QP. */
extern const __u8 stranger4[4];
extern const __u8 stranger6[16];

/* ---- the private namespace (main.c) -------------------------------------- */

/* Plane 2: the veth "mrcp2"; its other end is an interface but no plane. */
extern unsigned int plane2_ifindex, notplane_ifindex;
extern char netns_err[160];	/* why plane 2 is missing, when it is */

/* ---- packet builders ------------------------------------------------------ */

/* A NACK: BTH (the refused PSN) + struct mrc_nackh. */
size_t nack_frame(__u8 *buf, const struct hdrs *h, __u32 dqpn, __u32 psn,
		  __u32 cack, __u8 reason);
/* Change the UDP length field (and only it) of a built frame. */
void set_udp_len(__u8 *pkt, __u16 len);
/* The fixture QP with or without MRC_QP_F_ICRC (RoCEv2 ICRC trailers). */
void set_icrc_flag(int on);

/* ---- program runs and verdicts -------------------------------------------- */

/* mrc_tc_tx with an __sk_buff context (in->ifindex, in->mark); *out back. */
void run_tc_skb(const void *pkt, size_t len, const struct __sk_buff *in,
		struct __sk_buff *out, struct run *r);
/* mrc_xdp_rx on a packet that arrived on interface `ifindex`. */
void run_xdp_on(const void *pkt, size_t len, __u32 ifindex, struct run *r);
/* The packet left the program exactly as it came in, with `verdict`. */
int expect_untouched(const struct run *r, const __u8 *pkt, size_t len,
		     __u32 verdict);
void expect_xdp_drop(const struct run *r);
/* XDP_PASS, UDP dport now the owner's socket, only the checksum else. */
void expect_steered(const struct run *r, const __u8 *in, size_t len);

/* ---- maps, events, counters ------------------------------------------------ */

int bit_of(const __u64 *bm, __u32 psn);
void set_bit_of(__u64 *bm, __u32 psn);
void set_qp_state(__u32 state);
/* Context-ring event i (after drain_events()) is this one. */
void expect_event(int i, __u32 type, __u32 psn, __u32 ev,
		  __u32 reason);

/* mrc_ctl_stats, summed over the CPUs. */
struct mrc_ctl_stats read_ctl(void);
/* Counters since setup; fields not named must be zero. */
void expect_ctl(const struct mrc_ctl_stats *want);
void expect_drops(const struct mrc_drop_stats *want);
void expect_qp_stats(const struct mrc_qp_stats *want);

extern const struct mrc_drop_stats no_drops;
extern const struct mrc_qp_stats no_qp_stats;

/* ---- ACKs from the peer (XDP) --------------------------------------------- */

extern struct mrc_tx_state tx;	/* read back after SACKs/NACKs */

void run_sack(const struct sack_spec *s, struct run *r);
/*
 * A NACK from the peer for psn. A NACK answers a send TC logged, so when
 * psn has no send record of its own, run_nack() writes one first (EV
 * index UNLOGGED_EV, plane 1, sent 1 s ago); run_nack_unlogged() does not.
 */
void run_nack(__u32 psn, __u32 cack, __u8 reason, struct run *r);
void run_nack_unlogged(__u32 psn, __u32 cack, __u8 reason, struct run *r);
/* A SACK from the peer triggered by `psn`, acking nothing new (cack 999). */
void run_trigger_sack(__u32 psn, __u8 m, struct run *r);
/* Number of ACTIVE entries of plane `plane` among the first n. */
int active_on_plane(const struct mrc_qp_evs *e, __u32 n, __u16 plane);

/* ---- EV demotion (XDP) ----------------------------------------------------- */

/* Give the test QP's EV table a profile, ev_min_active and n_down. */
void set_evs_meta(__u16 profile, __u16 min_active, __u32 n_down);
/* The reorder windows of test_xdp_rack_losses: plane ~1 ms, give up ~2 s. */
void set_wide_windows(void);
/*
 * EV event i is the demotion of entry idx to ASSUMED_BAD, written in
 * [t0, t1]; sent_ns is the lost packet's send time (LOSS), 0 otherwise.
 */
void expect_ev_event(int i, __u16 idx, __u32 ev, __u16 plane, __u16 profile,
		     __u8 reason, __u32 psn, __u64 sent_ns, __u64 t0, __u64 t1);
/* The 32-bit word of entry i (plane, state, flags) as XDP left it. */
__u32 ev_word(const struct mrc_qp_evs *e, __u32 i);

/* ---- DATA to the peer (TC) ------------------------------------------------- */

#define TC_PSN	2000

size_t tc_data_psn(__u8 *buf, const struct hdrs *h, __u32 psn, __u8 flags);
size_t tc_data_frame(__u8 *buf, const struct hdrs *h);

/* ---- UDP GSO super-packets (TC) ------------------------------------------ */

#define GSO_PAYLOAD	300	/* payload bytes of each segment (tc_data_psn) */

/* How to spoil segment `seg` of a burst (0 = a good burst). */
enum gso_fault {
	GSO_OK = 0,
	GSO_PSN_GAP,		/* its PSN skips one */
	GSO_OTHER_QP,		/* addressed to another QP */
	GSO_OTHER_KEY,		/* another key */
	GSO_NOT_DATA,		/* opcode ACK-like (not DATA) */
};

size_t gso_frame(__u8 *buf, const struct hdrs *h, __u32 psn, __u32 n,
		 enum gso_fault fault, __u32 bad_seg, int retx_seg, __u32 *seg_len);
/* mrc_tc_tx on a GSO skb of segs segments of size bytes. */
void run_gso(const __u8 *pkt, size_t len, __u32 segs, __u32 size, struct run *r);
/* TC_ACT_OK, UDP sport `sport`, checksum valid, nothing else but sport,
 * checksum and (IPv6) the flow label changed: to 0, or with flow_changed
 * (STEV) to what the caller checks. */
void copy_flow_label(__u8 *exp, const __u8 *out, int stev);
void expect_stamped(const struct run *r, const __u8 *in, size_t len,
		    __u16 sport, int flow_changed);
/* Which of ev[0..n-1] the output's UDP sport is, or -1. */
int sport_index(const struct run *r, const __u8 *in, const __u32 *ev, __u32 n);

#endif /* MRC_XDP_TEST_H */
