// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzing loop: the state moved the way userspace moves it, one frame
 * (valid, mutated or random) through one of the object's programs, the
 * events drained, the invariants checked. A violation is printed (seed,
 * frame index, program, the frame in hex, the invariants) and saved with
 * the state before the frame, so `mrc-fuzz --replay FILE` runs it again.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fuzz.h"

#define FZ_MAGIC	"MRCFUZ01"
#define FZ_PROGS_MAX	8

struct fz_prog {
	const char *name;
	int fd;
	enum fz_hook hook;
};

static struct fz_prog progs[FZ_PROGS_MAX];
static int n_progs;

/* Every XDP and TC program of the object: a new one is fuzzed unasked. */
static int find_programs(void)
{
	struct bpf_program *p;

	n_progs = 0;
	bpf_object__for_each_program(p, skel->obj) {
		enum bpf_prog_type t = bpf_program__type(p);

		if (n_progs == FZ_PROGS_MAX)
			break;
		if (t != BPF_PROG_TYPE_XDP && t != BPF_PROG_TYPE_SCHED_CLS)
			continue;
		progs[n_progs].name = bpf_program__name(p);
		progs[n_progs].fd = bpf_program__fd(p);
		progs[n_progs].hook = t == BPF_PROG_TYPE_XDP ? FZ_XDP : FZ_TC;
		n_progs++;
	}
	return n_progs;
}

static const struct fz_prog *pick_prog(struct fz_rng *r)
{
	enum fz_hook hook = fz_chance(r, 3, 5) ? FZ_XDP : FZ_TC;
	const struct fz_prog *match[FZ_PROGS_MAX];
	int n = 0, i;

	for (i = 0; i < n_progs; i++)
		if (progs[i].hook == hook)
			match[n++] = &progs[i];
	return n ? match[fz_below(r, (__u32)n)] : &progs[fz_below(r, (__u32)n_progs)];
}

static const struct fz_prog *prog_by_name(const char *name)
{
	int i;

	for (i = 0; i < n_progs; i++)
		if (!strcmp(progs[i].name, name))
			return &progs[i];
	return NULL;
}

static double now_s(void)
{
	return (double)mono_ns() / 1e9;
}

/* CPU time of the process: the kernel's test runs count as system time. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void fz_hexdump(FILE *out, const __u8 *p, size_t len)
{
	size_t k;

	for (k = 0; k < len; k++)
		fprintf(out, "%02x%s", p[k], k % 16 == 15 || k + 1 == len ? "\n" : " ");
}

/* ---- one frame ---------------------------------------------------------------- */

/* Random bytes: sometimes not even an Ethernet header. */
static size_t random_frame(struct fz_rng *r, __u8 *buf)
{
	size_t len = fz_below(r, 160), k;

	for (k = 0; k < len; k++)
		buf[k] = (__u8)fz_rand(r);
	if (len >= ETH_LEN && fz_chance(r, 1, 2))
		put16(buf + 12, fz_chance(r, 1, 2) ? 0x0800 : 0x86DD);
	return len;
}

static size_t make_frame(struct fz_rng *r, const struct fz_snap *s, enum fz_hook hook,
			 __u8 *buf)
{
	size_t len;

	if (fz_chance(r, 1, 50))
		return random_frame(r, buf);
	len = fz_gen_frame(r, s, hook, buf);
	if (fz_chance(r, 1, 3))
		len = fz_mutate(r, buf, len);
	return len;
}

/* Userspace between frames: a QP published afresh now and then, small steps often. */
static int move_state(struct fz_rng *r, const struct fz_maps *m)
{
	int i = (int)fz_below(r, FZ_QPS);

	if (fz_chance(r, 1, 1500)) {
		fz_randomise_qp(r, m, i);
		return 1;
	}
	if (fz_chance(r, 1, 4)) {
		fz_user_step(r, m, i);
		return 1;
	}
	return 0;
}

/* The frame's events, drained from the context ring and mrc_ev_events. */
static void take_events(struct fz_events *e)
{
	drain_events();
	drain_ev_events();
	e->ev = evq;
	e->n = n_events < EVQ_MAX ? n_events : EVQ_MAX;
	e->eve = eveq;
	e->n_eve = n_ev_events < EVEQ_MAX ? n_ev_events : EVEQ_MAX;
}

/* Run one frame and judge it; the number of violations. */
static int run_and_check(const struct fz_prog *p, const __u8 *frame, size_t len,
			 const struct fz_maps *m, const struct fz_snap *before,
			 struct fz_snap *after, struct run *r, struct fz_report *rep,
			 struct fz_result *res)
{
	struct fz_frame f = { .hook = p->hook, .in = frame, .in_len = (__u32)len };
	struct fz_events e;
	int i;

	run_prog(p->fd, frame, len, 1, r);
	take_events(&e);
	for (i = 0; i < e.n; i++)
		res->events[e.ev[i].type < 6 ? e.ev[i].type : 0]++;
	res->ev_events += (__u64)e.n_eve;
	fz_snapshot(m, after, 1);
	rep->n = 0;
	if (r->err)
		return 0;	/* refused by bpf_prog_test_run (size): nothing ran */
	f.out = r->out;
	f.out_len = r->out_len;
	f.verdict = r->ret;
	return fz_check(before, after, &f, &e, rep);
}

/* ---- failures: printed and saved ------------------------------------------------ */

struct fz_case_head {
	char magic[8];
	__u64 seed, index;
	char prog[32];
	__u32 len, pad;
};

/*
 * A QP's send log as a case keeps it: each record at rec[psn %
 * MRC_WINDOW_MAX], whatever the size of the QP's log (a replay gives
 * every QP a full-sized one: the same PSNs find their records).
 */
static void save_log(__u32 slot, struct mrc_send_log *out)
{
	int n = mrc_qpmaps_read_log(MFD(mrc_send_log), slot, &log_buf);

	memset(out, 0, sizeof(*out));
	for (int i = 0; i < n; i++)
		if (log_buf.rec[i].sent_ns || log_buf.rec[i].psn)
			out->rec[log_buf.rec[i].psn % MRC_WINDOW_MAX] = log_buf.rec[i];
}

static int save_case(const char *dir, const struct fz_case_head *h, const __u8 *frame,
		     const struct fz_snap *before, char *path, size_t path_len)
{
	static struct mrc_send_log logs[FZ_QPS];
	FILE *out;
	int i, ok;

	for (i = 0; i < FZ_QPS; i++)
		save_log(mrc_qpn_to_slot(fz_qpns[i]), &logs[i]);
	snprintf(path, path_len, "%s/mrc-fuzz-%llu-%llu.case", dir,
		 (unsigned long long)h->seed, (unsigned long long)h->index);
	out = fopen(path, "wb");
	if (!out)
		return -1;
	ok = fwrite(h, sizeof(*h), 1, out) == 1 && fwrite(frame, 1, h->len, out) == h->len &&
	     fwrite(before, sizeof(*before), 1, out) == 1 &&
	     fwrite(logs, sizeof(logs), 1, out) == 1;
	return fclose(out) || !ok ? -1 : 0;
}

static void print_violation(const struct fz_case_head *h, const __u8 *frame,
			    const struct run *r, const struct fz_report *rep)
{
	int i;

	fprintf(stderr, "mrc-fuzz: VIOLATION at frame %llu (seed %llu), program %s, verdict %d\n",
		(unsigned long long)h->index, (unsigned long long)h->seed, h->prog, (int)r->ret);
	for (i = 0; i < rep->n; i++)
		fprintf(stderr, "  %s\n", rep->what[i]);
	fprintf(stderr, "frame in (%u bytes):\n", h->len);
	fz_hexdump(stderr, frame, h->len);
	if (r->out_len && (r->out_len != h->len || memcmp(r->out, frame, h->len))) {
		fprintf(stderr, "frame out (%u bytes):\n", r->out_len);
		fz_hexdump(stderr, r->out, r->out_len);
	}
}

static void report_failure(const struct fz_opts *o, __u64 index, const struct fz_prog *p,
			   const __u8 *frame, size_t len, const struct fz_snap *before,
			   const struct run *r, const struct fz_report *rep)
{
	struct fz_case_head h = { .seed = o->seed, .index = index, .len = (__u32)len };
	char path[512];

	memcpy(h.magic, FZ_MAGIC, sizeof(h.magic));
	snprintf(h.prog, sizeof(h.prog), "%s", p->name);
	print_violation(&h, frame, r, rep);
	if (save_case(o->fail_dir ? o->fail_dir : ".", &h, frame, before, path, sizeof(path)))
		fprintf(stderr, "mrc-fuzz: cannot save the case to %s: %s\n", path, strerror(errno));
	else
		fprintf(stderr, "mrc-fuzz: saved; run it again with --replay %s\n", path);
}

/* ---- the loop ---------------------------------------------------------------------- */

static int start(struct fz_maps *m)
{
	if (!find_programs()) {
		fprintf(stderr, "mrc-fuzz: no XDP or TC program in the object\n");
		return -1;
	}
	if (fz_env_setup() || fz_maps_open(m)) {
		fprintf(stderr, "mrc-fuzz: cannot map or seed the maps: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

static void count_verdict(struct fz_result *res, const struct fz_prog *p, const struct run *r)
{
	if (r->err)
		res->runs_refused++;
	else if (p->hook == FZ_XDP && r->ret < 5)
		res->verdicts[r->ret]++;
	else if (p->hook == FZ_TC)
		res->verdicts[5 + (r->ret == TC_ACT_OK ? 0 : r->ret == TC_ACT_REDIRECT ? 2 : 1)]++;
}

int fz_run(const struct fz_opts *o, struct fz_result *res)
{
	static struct fz_snap snaps[2];
	static __u8 frame[FZ_FRAME_MAX];
	static struct run r;
	struct fz_snap *before = &snaps[0], *after = &snaps[1], *t;
	struct fz_rng rng = { .s = o->seed };
	struct fz_report rep;
	struct fz_maps m = {};
	double t0 = now_s(), c0 = cpu_s();
	__u64 n;
	int i;

	memset(res, 0, sizeof(*res));
	if (start(&m))
		return res->failed = 1;
	for (i = 0; i < n_progs && !o->quiet; i++)
		printf("  fuzzing %s (%s)\n", progs[i].name, progs[i].hook == FZ_XDP ? "XDP" : "TC");
	for (i = 0; i < FZ_QPS; i++)
		fz_randomise_qp(&rng, &m, i);
	fz_snapshot(&m, after, 1);
	for (n = 0; n < o->frames && !res->failed; n++) {
		const struct fz_prog *p;
		size_t len;

		if (o->seconds > 0 && (n & 255) == 0 && now_s() - t0 > o->seconds)
			break;
		t = before, before = after, after = t;
		if (move_state(&rng, &m))
			fz_snapshot(&m, before, 0);	/* counters: only BPF moves them */
		p = pick_prog(&rng);
		len = make_frame(&rng, before, p->hook, frame);
		if (run_and_check(p, frame, len, &m, before, after, &r, &rep, res)) {
			report_failure(o, n, p, frame, len, before, &r, &rep);
			res->failed = 1;
		}
		count_verdict(res, p, &r);
		if (!res->failed && (n & 4095) == 4095 && fz_unused_slots_dirty(&m)) {
			fprintf(stderr, "mrc-fuzz: VIOLATION unused_slots_zero: slot %u written by "
				"frame %llu or before (seed %llu)\n", fz_unused_slots_dirty(&m) - 1,
				(unsigned long long)n, (unsigned long long)o->seed);
			res->failed = 1;
		}
		if (test_state.failed) {
			fprintf(stderr, "mrc-fuzz: a map access failed at frame %llu\n",
				(unsigned long long)n);
			res->failed = 1;
		}
	}
	res->frames = n;
	res->seconds = now_s() - t0;
	res->cpu_seconds = cpu_s() - c0;
	fz_maps_close(&m);
	return res->failed;
}

/* ---- --replay ------------------------------------------------------------------------ */

static int load_case(FILE *in, struct fz_case_head *h, __u8 *frame, struct fz_snap *before,
		     struct mrc_send_log *logs)
{
	if (fread(h, sizeof(*h), 1, in) != 1 || memcmp(h->magic, FZ_MAGIC, 8) ||
	    h->len > FZ_FRAME_MAX || fread(frame, 1, h->len, in) != h->len ||
	    fread(before, sizeof(*before), 1, in) != 1 ||
	    fread(logs, sizeof(*logs) * FZ_QPS, 1, in) != 1)
		return -1;
	h->prog[sizeof(h->prog) - 1] = 0;
	return 0;
}

int fz_replay(const char *path)
{
	static struct mrc_send_log logs[FZ_QPS];
	static struct fz_snap saved, before, after;
	static __u8 frame[FZ_FRAME_MAX];
	static struct run r;
	struct fz_result res;
	struct fz_case_head h;
	const struct fz_prog *p;
	struct fz_report rep;
	struct fz_maps m = {};
	FILE *in = fopen(path, "rb");
	int i, bad;

	if (!in || load_case(in, &h, frame, &saved, logs)) {
		fprintf(stderr, "mrc-fuzz: %s: not a case file\n", path);
		if (in)
			fclose(in);
		return 2;
	}
	fclose(in);
	if (start(&m) || !(p = prog_by_name(h.prog))) {
		fprintf(stderr, "mrc-fuzz: cannot replay on program %s\n", h.prog);
		return 2;
	}
	fz_restore(&m, &saved);
	for (i = 0; i < FZ_QPS; i++) {
		__u32 slot = mrc_qpn_to_slot(fz_qpns[i]);

		publish_qp_maps(slot, MRC_WINDOW_MAX, MRC_MAX_EVS);
		write_log_of(slot, &logs[i]);
	}
	fz_snapshot(&m, &before, 1);
	printf("replaying frame %llu of seed %llu on %s (%u bytes)\n",
	       (unsigned long long)h.index, (unsigned long long)h.seed, h.prog, h.len);
	bad = run_and_check(p, frame, h.len, &m, &before, &after, &r, &rep, &res);
	if (bad)
		print_violation(&h, frame, &r, &rep);
	else
		printf("no violation (verdict %d, err %d)\n", (int)r.ret, r.err);
	fz_maps_close(&m);
	return bad ? 1 : 0;
}
