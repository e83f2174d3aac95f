/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzzer of the fast path (issue 16): random and mutated frames
 * through every XDP and TC program of bpf/mrc.bpf.c with
 * bpf_prog_test_run, QP state randomised through the maps as its
 * userspace writers would set it, and the state invariants checked after
 * every frame. Built on the BPF tests' fixture (tests/lib/mrc_fixture.c:
 * skeleton with a pin root of its own, packet builders, runs).
 *
 *   rng      (this header)  a seeded generator: a run is a function of --seed
 *   frames.c  valid frames, one writer per header, of every opcode
 *   mutate.c  the one mutation engine (bytes, lengths, fields, checksums)
 *   state.c   the fuzzed QPs: maps mmapped, set up and randomised the way
 *             libmrc, mrcd and the controller write them; snapshots
 *   check.c   the invariants, on two snapshots and one program run
 *   run.c     the loop, the report, failure files and --replay
 *
 * build/mrc-fuzz (tests/fuzz/mrc_fuzz/, `make fuzz`) runs it at length;
 * build/tests/test_fuzz (tests/bpf/test_fuzz/) runs a short fixed-seed
 * version and checks that the checker catches corrupted states.
 */
#ifndef MRC_FUZZ_H
#define MRC_FUZZ_H

#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#include "mrc/abi.h"
#include "mrc/nscc.h"
#include "mrc_fixture.h"

/* ---- the generator ------------------------------------------------------ */

/* splitmix64: small, fast, and every seed gives a full-period stream. */
struct fz_rng {
	__u64 s;
};

static inline __u64 fz_rand(struct fz_rng *r)
{
	__u64 z = (r->s += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); n = 0 gives 0. */
static inline __u32 fz_below(struct fz_rng *r, __u32 n)
{
	return n ? (__u32)(fz_rand(r) % n) : 0;
}

/* True with probability num / den. */
static inline int fz_chance(struct fz_rng *r, __u32 num, __u32 den)
{
	return fz_below(r, den) < num;
}

/* ---- the fuzzed QPs ----------------------------------------------------- */

/* QPs installed: slot boundaries included (the first and the last QPN). */
#define FZ_QPS		4
extern const __u32 fz_qpns[FZ_QPS];
extern const __u32 fz_remote_qpns[FZ_QPS];

/* Everything the invariants look at, for the fuzzed QPs. */
struct fz_qp_snap {
	struct mrc_qp_info info;	/* as written (userspace is its writer) */
	struct mrc_nscc_params cc;	/* the window's parameters, if cc_slot */
	struct mrc_tx_state tx;
	struct mrc_rx_state rx;
	struct mrc_qp_evs evs;
	struct mrc_cc_view view;	/* window cc_slot - 1, if any */
	struct mrc_qp_stats stats;
};

struct fz_snap {
	struct fz_qp_snap qp[FZ_QPS];
	struct mrc_drop_stats drops;
	struct mrc_ctl_stats ctl;
};

/* The mmapped per-QP arrays (as libmrc and mrcd map them). */
/* Each fuzzed QP's state maps (by QP index) and windows 1..FZ_QPS, mapped. */
struct fz_maps {
	struct mrc_tx_state *tx[FZ_QPS];
	struct mrc_rx_state *rx[FZ_QPS];
	struct mrc_qp_evs *evs[FZ_QPS];
	struct mrc_cc_view *view[FZ_QPS];
};

int fz_maps_open(struct fz_maps *m);
void fz_maps_close(struct fz_maps *m);
/* Planes, port settings, peers, the context-0 ring: the host around the QPs. */
int fz_env_setup(void);
/* Publish QP i afresh (libmrc at RTR/RTS, with a random but legal state). */
void fz_randomise_qp(struct fz_rng *r, const struct fz_maps *m, int i);
/* One small step a userspace writer takes between packets (libmrc, mrcd, cmd). */
void fz_user_step(struct fz_rng *r, const struct fz_maps *m, int i);
/* Copy the mmapped state (and, with counters, the per-CPU counters). */
void fz_snapshot(const struct fz_maps *m, struct fz_snap *s, int counters);
/* Write a snapshot's QPs back into the maps (--replay). */
void fz_restore(const struct fz_maps *m, const struct fz_snap *s);
/*
 * No slot but the fuzzed QPs' holds state maps, no window past theirs a
 * view (the fast path created none); 0 or the first bad slot + 1.
 */
__u32 fz_unused_slots_dirty(const struct fz_maps *m);

/* ---- frames --------------------------------------------------------------- */

enum fz_hook {
	FZ_XDP,
	FZ_TC,
};

#define FZ_FRAME_MAX	1600

/* A frame for `hook`, valid or not, built from the current state. */
size_t fz_gen_frame(struct fz_rng *r, const struct fz_snap *s, enum fz_hook hook,
		    __u8 *buf);
/* Mutate buf[0..len) in place (at most FZ_FRAME_MAX bytes); the new length. */
size_t fz_mutate(struct fz_rng *r, __u8 *buf, size_t len);
/* Correct IPv4 header and UDP checksums where the lengths allow. */
void fz_fix_checksums(__u8 *buf, size_t len);

/* Checksums of a frame: 1 valid, 0 wrong, -1 cannot tell (not IP/UDP, short). */
int fz_ip4_csum_state(const __u8 *f, size_t len);
int fz_udp_csum_state(const __u8 *f, size_t len);

/* ---- the invariants --------------------------------------------------------- */

/* One program run, as the checker sees it. */
struct fz_frame {
	enum fz_hook hook;
	const __u8 *in;
	__u32 in_len;
	const __u8 *out;
	__u32 out_len;
	__u32 verdict;
	/* TC changed skb fields: the rotation may move (XDP must not touch it). */
};

/* Events the run wrote to the context ring and to mrc_ev_events. */
struct fz_events {
	const struct mrc_event *ev;
	int n;
	const struct mrc_ev_event *eve;
	int n_eve;
};

#define FZ_REPORT_MAX	8
struct fz_report {
	int n;
	char what[FZ_REPORT_MAX][256];	/* "invariant: details" */
};

/* Check every invariant of a run from `before` to `after`; violations found. */
int fz_check(const struct fz_snap *before, const struct fz_snap *after,
	     const struct fz_frame *f, const struct fz_events *e,
	     struct fz_report *rep);
/* Does the report name this invariant? */
int fz_report_has(const struct fz_report *rep, const char *invariant);

/* ---- the run ------------------------------------------------------------------ */

struct fz_opts {
	__u64 seed;
	__u64 frames;
	double seconds;		/* 0 = no cap */
	const char *fail_dir;	/* where a failing case goes ("." by default) */
	int quiet;
};

struct fz_result {
	__u64 frames;		/* frames run */
	__u64 runs_refused;	/* bpf_prog_test_run refused the frame (size) */
	__u64 verdicts[8];	/* XDP verdicts 0..4, TC: OK, SHOT, REDIRECT */
	__u64 events[6];	/* context-ring events by type (how deep frames got) */
	__u64 ev_events;	/* EV state changes XDP reported */
	double seconds;
	double cpu_seconds;	/* user + system time of the process (test_run included) */
	int failed;
};

/* Needs fixture_setup() done. 0, or 1 after a violation (printed, saved). */
int fz_run(const struct fz_opts *o, struct fz_result *res);
/* Run a saved case again: 0 when it passes now, 1 when it still fails. */
int fz_replay(const char *path);

void fz_hexdump(FILE *out, const __u8 *p, size_t len);

#endif /* MRC_FUZZ_H */
