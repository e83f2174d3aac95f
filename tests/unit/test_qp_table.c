// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcctl at thousands of QPs, without mrcd: every map mrcd pins is
 * created at 4,096 QPs in a private bpffs folder (tests/include/
 * fake_host.h) and filled with QPs here; then the bulk reader
 * (agent/qp_table.c), the summary (agent/qp_summary.c), the map memory
 * sum (agent/map_bulk.c) and the commands mrcd runs (`qp list --json`,
 * `status`, `stats`, `qp show`) are checked against what was written.
 * The time `qp list --json` takes is printed, never asserted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "agent/agent_cmds.h"
#include "agent/agent_ipc.h"
#include "agent/cmd_exec.h"
#include "agent/doctor.h"
#include "agent/map_bulk.h"
#include "agent/qp_summary.h"
#include "agent/qp_table.h"
#include "common/qpmaps.h"
#include "fake_host.h"
#include "test.h"

TEST_STATE_DEFINE;

#define MAX_QPS		4096
#define MAX_CTX		64
#define N_EVS		128

static struct fake_host host;
static bool host_ok;

/* A test without its maps fails (it could check nothing). */
#define NEED_HOST() do { if (!ASSERT_TRUE(host_ok, "the fake host")) return; } while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* What the test wrote, to check what is read against. */
static struct {
	uint32_t n;			/* QPs not in RESET */
	uint32_t owned;			/* entries of mrc_qp_owner */
	uint32_t by_state[MRC_QPS_ERROR + 1];
	uint32_t with_bad, bad_evs;
	uint32_t counted_dead;		/* RESET slots with counters */
} want;

/* Slots in use: three in four; a few more every 7th are in ERROR, some have bad EVs. */
static bool slot_used(uint32_t s) { return s % 4 != 3; }
static uint32_t state_of(uint32_t s)
{
	return s % 7 == 0 ? MRC_QPS_ERROR : s % 5 == 0 ? MRC_QPS_INIT :
	       s % 11 == 0 ? MRC_QPS_RTR : MRC_QPS_RTS;
}
static uint32_t bad_of(uint32_t s) { return s % 13 == 0 ? 1 + s % 17 : 0; }

static int put_qp(uint32_t slot)
{
	struct mrc_qp_info qi = {
		.state = state_of(slot), .remote_qpn = slot + 7, .n_evs = N_EVS,
		.n_peer_addrs = 2, .cc_slot = slot % 2 ? slot + 1 : 0,
		.state_idx = slot % 3,	/* entries past the first: read at an offset */
	};
	struct mrc_qp_evs *evs = calloc(1, sizeof(*evs));
	uint32_t qpn = mrc_slot_to_qpn(slot), pid = 1000 + slot;
	int rc = 0;

	if (!evs)
		return -ENOMEM;
	qi.peer_addrs[0][15] = (uint8_t)slot;
	for (uint32_t i = 0; i < N_EVS; i++) {
		evs->ev[i].ev = 0x1000 + i;
		evs->ev[i].plane = 1 + i % 2;
		evs->ev[i].state = i < bad_of(slot) ? MRC_EV_ASSUMED_BAD : MRC_EV_GOOD;
		evs->ev[i].flags = MRC_EV_F_ACTIVE;
	}
	if (bpf_map_update_elem(host.fd[MRC_PIN_QPS], &slot, &qi, BPF_ANY) ||
	    bpf_map_update_elem(host.fd[MRC_PIN_QP_OWNER], &qpn, &pid, BPF_ANY))
		rc = -errno;
	if (!rc)	/* the QP's own EV table map */
		rc = mrc_qp_state_write(host.fd[MRC_PIN_QP_EVS], slot, qi.state_idx, evs,
					sizeof(*evs));
	free(evs);
	return rc;
}

/* The per-CPU counters of a slot: rx_data = slot + 1 on every CPU. */
static int put_counters(uint32_t slot)
{
	int cpus = libbpf_num_possible_cpus();
	size_t stride = (sizeof(struct mrc_qp_stats) + 7) & ~(size_t)7;
	char *v = calloc((size_t)cpus, stride);
	int rc;

	if (!v)
		return -ENOMEM;
	for (int c = 0; c < cpus; c++)
		((struct mrc_qp_stats *)(v + (size_t)c * stride))->rx_data = slot + 1;
	rc = bpf_map_update_elem(host.fd[MRC_PIN_QP_STATS], &slot, v, BPF_ANY) ? -errno : 0;
	free(v);
	return rc;
}

static int fill(void)
{
	int rc = 0;

	for (uint32_t s = 0; s < MAX_QPS && !rc; s++) {
		if (!slot_used(s)) {
			/* Every 8th unused slot: a QP that died after counting. */
			if (s % 8 == 7 && !(rc = put_counters(s)))
				want.counted_dead++;
			continue;
		}
		rc = put_qp(s);
		if (!rc)
			rc = put_counters(s);
		want.n++;
		want.owned++;
		want.by_state[state_of(s)]++;
		want.with_bad += bad_of(s) > 0;
		want.bad_evs += bad_of(s);
	}
	for (uint32_t k = 0; k < 3 && !rc; k++) {
		uint32_t pid = 77 + k;

		rc = bpf_map_update_elem(host.fd[MRC_PIN_CTX_OWNER], &k, &pid, BPF_ANY) ? -errno : 0;
	}
	return rc;
}

static struct qp_table_maps all_maps(void)
{
	return (struct qp_table_maps){
		.qps = host.fd[MRC_PIN_QPS], .qp_owner = host.fd[MRC_PIN_QP_OWNER],
		.qp_evs = host.fd[MRC_PIN_QP_EVS], .tx = host.fd[MRC_PIN_TX],
		.rx = host.fd[MRC_PIN_RX], .cc_view = host.fd[MRC_PIN_CC_VIEW],
		.qp_stats = host.fd[MRC_PIN_QP_STATS], .ctx_owner = host.fd[MRC_PIN_CTX_OWNER],
	};
}


static struct agent_cmd_env host_env(void)
{
	struct agent_cmd_env env = {
		.pin_dir = host.dir,
		.pid = 1,
		.maps = {
			.cfg = host.fd[MRC_PIN_CFG], .planes = host.fd[MRC_PIN_PLANES],
			.plane_of = host.fd[MRC_PIN_PLANE_OF], .qps = host.fd[MRC_PIN_QPS],
			.qp_owner = host.fd[MRC_PIN_QP_OWNER], .qp_evs = host.fd[MRC_PIN_QP_EVS],
			.ev_stats = host.fd[MRC_PIN_EV_STATS],
			.ev_profiles = host.fd[MRC_PIN_EV_PROFILES],
			.cc_profiles = host.fd[MRC_PIN_CC_PROFILES],
			.qp_stats = host.fd[MRC_PIN_QP_STATS], .drops = host.fd[MRC_PIN_DROPS],
			.rx = host.fd[MRC_PIN_RX], .tx = host.fd[MRC_PIN_TX],
			.ctl_stats = host.fd[MRC_PIN_CTL_STATS], .cc = host.fd[MRC_PIN_CC],
			.cc_view = host.fd[MRC_PIN_CC_VIEW],
		},
	};

	return env;
}

/* mrcd's answer to a command line, on the fake host's maps. */
static int run(const char *line, char **out, char **err)
{
	struct agent_cmd_env env = host_env();
	char *copy = strdup(line), *argv[16], *save = NULL;
	size_t out_len = 0, err_len = 0;
	FILE *fo = open_memstream(out, &out_len), *fe = open_memstream(err, &err_len);
	bool done = false;
	int argc = 0, status;

	for (char *w = strtok_r(copy, " ", &save); w && argc < 15; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	argv[argc] = NULL;
	status = agent_cmd_run(&env, argc, argv, fo, fe, &done);
	fclose(fo);
	fclose(fe);
	free(copy);
	return status;
}

static unsigned int count_of(const char *s, const char *what)
{
	unsigned int n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static unsigned int lines_of(const char *s)
{
	return count_of(s, "\n");
}

/* ---- the tests ---------------------------------------------------------- */

TEST_CASE(test_bulk_read, "qp_table.bulk_read_matches_the_maps")
{
	struct qp_table_maps m = all_maps();
	struct qp_table t;
	char err[256] = "";
	bool owners_ok = true, sorted = true;

	NEED_HOST();
	double t0 = now_s();
	ASSERT_EQ(qp_table_read(&t, &m, QPT_LIVE, err, sizeof(err)), 0, err);
	printf("  bulk read: %u QPs of %u in %.1f ms\n", t.n, t.max_qps, (now_s() - t0) * 1e3);
	ASSERT_EQ(t.max_qps, MAX_QPS, "max_qps from mrc_qps");
	ASSERT_EQ(t.max_ctx, MAX_CTX, "max_ctx from mrc_ctx_owner");
	ASSERT_EQ(t.n, want.n, "every live QP, once");
	ASSERT_EQ(t.qps_in_use, want.owned, "QP numbers claimed");
	ASSERT_EQ(t.ctx_in_use, 3, "contexts");
	for (uint32_t r = 0; r < t.n; r++) {
		owners_ok &= t.owner[r] == 1000 + t.slot[r];
		sorted &= !r || t.slot[r - 1] < t.slot[r];
	}
	ASSERT_TRUE(owners_ok, "each QP's owner pid");
	ASSERT_TRUE(sorted, "rows by slot");
	ASSERT_TRUE(t.counters && t.counters[QPT_COUNTERS] ==
		    (uint64_t)(t.slot[1] + 1) * libbpf_num_possible_cpus(),
		    "counters summed over CPUs");
	qp_table_free(&t);

	ASSERT_EQ(qp_table_read(&t, &m, QPT_LIVE_OR_COUNTED, err, sizeof(err)), 0, err);
	ASSERT_EQ(t.n, want.n + want.counted_dead, "live and counted dead QPs");
	qp_table_free(&t);
}

TEST_CASE(test_summary, "qp_table.summary_counts_and_worst")
{
	struct qp_table_maps m = all_maps();
	struct qp_summary s;
	struct qp_table t;
	char err[256] = "";

	NEED_HOST();
	ASSERT_EQ(qp_table_read(&t, &m, QPT_LIVE, err, sizeof(err)), 0, err);
	qp_summarise(&t, &s);
	for (uint32_t st = MRC_QPS_INIT; st <= MRC_QPS_ERROR; st++)
		ASSERT_EQ(s.by_state[st], want.by_state[st], "QPs by state");
	ASSERT_EQ(s.total, want.n, "total");
	ASSERT_EQ(s.in_error, want.by_state[MRC_QPS_ERROR], "in ERROR");
	ASSERT_EQ(s.with_bad_evs, want.with_bad, "with ASSUMED_BAD EVs");
	ASSERT_EQ(s.bad_evs, want.bad_evs, "ASSUMED_BAD EVs");
	ASSERT_EQ(s.n_worst, QP_WORST_MAX, "the worst few named");
	/* ERROR first (lowest QP numbers first among equals), then most bad EVs. */
	ASSERT_EQ(s.worst[0].state, MRC_QPS_ERROR, "an ERROR QP first");
	for (unsigned int i = 1; i < s.n_worst; i++)
		ASSERT_TRUE(s.worst[i - 1].state == MRC_QPS_ERROR ||
			    s.worst[i].state != MRC_QPS_ERROR, "ERROR before the rest");
	qp_table_free(&t);
}

TEST_CASE(test_worst_order, "qp_table.worst_order_without_errors")
{
	static const uint32_t bad[] = { 0, 3, 9, 1, 9, 4, 2, 7 };
	struct mrc_qp_evs *evs = calloc(8, sizeof(*evs));
	const struct mrc_qp_evs *evs_of[8];
	struct mrc_qp_info info[8] = {};
	uint32_t slot[8];
	struct qp_table t = { .n = 8, .slot = slot, .info = info, .evs = evs_of };
	struct qp_summary s;

	ASSERT_TRUE(evs != NULL, "memory");
	if (!evs)
		return;
	for (uint32_t r = 0; r < 8; r++) {
		slot[r] = r;
		evs_of[r] = &evs[r];
		info[r] = (struct mrc_qp_info){ .state = MRC_QPS_RTS, .n_evs = 16 };
		for (uint32_t i = 0; i < 16; i++)
			evs[r].ev[i].state = i < bad[r] ? MRC_EV_ASSUMED_BAD : MRC_EV_GOOD;
	}
	qp_summarise(&t, &s);
	ASSERT_EQ(s.with_bad_evs, 7, "seven with bad EVs");
	ASSERT_EQ(s.n_worst, QP_WORST_MAX, "five named");
	ASSERT_EQ(s.worst[0].qpn, 3, "9 bad, lower QP number first");
	ASSERT_EQ(s.worst[1].qpn, 5, "9 bad");
	ASSERT_EQ(s.worst[2].qpn, 8, "7 bad");
	ASSERT_EQ(s.worst[3].qpn, 6, "4 bad");
	ASSERT_EQ(s.worst[4].qpn, 2, "3 bad");
	free(evs);
}

TEST_CASE(test_limit_near, "qp_table.limit_near_above_90_percent")
{
	ASSERT_TRUE(!limit_near(230, 256), "230 of 256 is under 90%");
	ASSERT_TRUE(limit_near(231, 256), "231 of 256 is over 90%");
	ASSERT_TRUE(!limit_near(90, 100), "exactly 90%");
	ASSERT_TRUE(limit_near(65536, 65536), "full");
	ASSERT_TRUE(!limit_near(5, 0), "no limit known");
}

/* For comparison: the maps read QP by QP, a lookup per map (as `qp show` does). */
static void print_per_qp_time(void)
{
	struct agent_cmd_env env = host_env();
	struct ctx c = { .env = &env, .out = stdout, .err = stderr, .name = "bench" };
	struct qp_view *v = malloc(sizeof(*v));
	double t0 = now_s();
	uint32_t n = 0;

	for (uint32_t qpn = 1; v && qpn <= MAX_QPS; qpn++)
		n += !cmd_read_qp_view(&c, qpn, v) && v->info.state != MRC_QPS_RESET;
	printf("  the same QPs read with a lookup per map per QP: %u in %.1f ms\n", n,
	       (now_s() - t0) * 1e3);
	free(v);
}

TEST_CASE(test_qp_list_json, "qp_table.qp_list_json_has_every_qp")
{
	char *out = NULL, *err = NULL;
	double t0 = now_s(), dt;
	int status = run("qp list --json", &out, &err);
	char probe[48];
	bool all = true;

	dt = now_s() - t0;
	NEED_HOST();
	ASSERT_EQ(status, 0, err ? err : "qp list");
	ASSERT_TRUE(out && out[0] == '[' && strstr(out, "]\n") == out + strlen(out) - 2,
		    "one JSON array");
	ASSERT_EQ(count_of(out, "{\"qpn\": "), want.n, "one object per QP");
	for (uint32_t s = 0; s < MAX_QPS; s++) {
		snprintf(probe, sizeof(probe), "{\"qpn\": %u, ", mrc_slot_to_qpn(s));
		if (slot_used(s) != (strstr(out, probe) != NULL))
			all = false;
	}
	ASSERT_TRUE(all, "exactly the live QPs, by number");
	ASSERT_TRUE(strstr(out, "\"owner_pid\": 1000, ") != NULL, "owner of slot 0");
	printf("  qp list --json: %u QPs of %u in %.1f ms (%zu bytes)\n", want.n, MAX_QPS,
	       dt * 1e3, strlen(out));
	print_per_qp_time();
	free(out);
	free(err);
}

TEST_CASE(test_status, "qp_table.status_summarises_and_has_limits")
{
	char *out = NULL, *err = NULL, want_lim[160];
	uint64_t sum = 0;
	unsigned int n = 0;

	NEED_HOST();
	ASSERT_EQ(run("status", &out, &err), 0, err ? err : "status");
	/* A few lines whatever the number of QPs (no planes here). */
	ASSERT_TRUE(lines_of(out) <= 8, out);
	snprintf(want_lim, sizeof(want_lim), "limits: QPs %u of %u in use (mrcd --max-qps), "
		 "contexts 3 of %u (mrcd --max-contexts); maps ", want.owned, MAX_QPS, MAX_CTX);
	ASSERT_TRUE(strstr(out, want_lim) != NULL, out);
	ASSERT_TRUE(strstr(out, "worst: ") != NULL, "the worst QPs named");
	free(out);
	free(err);
	out = err = NULL;

	ASSERT_EQ(run("status --all", &out, &err), 0, "status --all");
	ASSERT_TRUE(lines_of(out) > want.n, "--all lists every QP");
	free(out);
	free(err);
	out = err = NULL;

	ASSERT_EQ(run("status --json", &out, &err), 0, "status --json");
	snprintf(want_lim, sizeof(want_lim), "\"limits\": {\"max_qps\": %u, \"qps_in_use\": "
		 "%u, \"max_contexts\": %u, \"contexts_in_use\": 3}", MAX_QPS, want.owned,
		 MAX_CTX);
	ASSERT_TRUE(strstr(out, want_lim) != NULL, out);
	ASSERT_EQ(map_bytes_of_dir(host.dir, &sum, &n, NULL, 0), 0, "map bytes");
	snprintf(want_lim, sizeof(want_lim), "\"map_bytes\": %llu, ", (unsigned long long)sum);
	ASSERT_TRUE(strstr(out, want_lim) != NULL, out);
	free(out);
	free(err);
}

/* Memlock of every state map (user/common/qpmaps.h) the host's QPs have. */
static uint64_t state_maps_memlock(unsigned int *n)
{
	static const enum mrc_pin outer[] = {
		MRC_PIN_QP_EVS, MRC_PIN_RX, MRC_PIN_TX, MRC_PIN_CC_VIEW,
	};
	uint64_t sum = 0;

	*n = 0;
	for (size_t i = 0; i < sizeof(outer) / sizeof(outer[0]); i++)
		for (uint32_t s = 0; s < MAX_QPS; s++) {
			int fd = mrc_qpmaps_open(host.fd[outer[i]], s);

			if (fd < 0)
				continue;
			sum += map_memlock(fd);
			(*n)++;
			close(fd);
		}
	return sum;
}

TEST_CASE(test_map_bytes, "qp_table.map_bytes_counts_inner_maps")
{
	uint64_t sum = 0, pinned = 0, inner = 0, states;
	unsigned int n = 0, n_states = 0;

	NEED_HOST();
	for (int i = 0; i < MRC_PIN__COUNT; i++)
		pinned += map_memlock(host.fd[i]);
	inner = map_memlock(host.inner[0]) + map_memlock(host.inner[1]);
	states = state_maps_memlock(&n_states);
	ASSERT_TRUE(pinned > 0, "memlock read");
	ASSERT_TRUE(inner > 0, "inner rings have memlock");
	ASSERT_EQ(n_states, want.n, "an EV table map per QP");
	ASSERT_TRUE(states >= (uint64_t)want.n * sizeof(struct mrc_qp_evs),
		    "the QPs' state maps have memlock");
	ASSERT_EQ(map_bytes_of_dir(host.dir, &sum, &n, NULL, 0), 0, "sum");
	ASSERT_EQ(sum, pinned + inner + states, "every pinned map and the inner maps");
	ASSERT_EQ(n, MRC_PIN__COUNT + 2 + n_states, "maps counted once each");
}

/*
 * An outer map of 4,096 inner maps (per-QP inner maps, as the send logs
 * may become) in a folder of its own: each counted once, and the time
 * printed (status runs in mrcd's loop).
 */
TEST_CASE(test_map_bytes_many, "qp_table.map_bytes_many_inner_maps")
{
	LIBBPF_OPTS(bpf_map_create_opts, o);
	char dir[96], path[160];
	uint64_t sum = 0, want_sum;
	unsigned int n = 0;
	int tmpl, outer, rc = 0;
	double t0;

	snprintf(dir, sizeof(dir), "/sys/fs/bpf/mrc-test-inner-%d", (int)getpid());
	if (!ASSERT_EQ(mkdir(dir, 0700), 0, "mkdir"))
		return;
	tmpl = bpf_map_create(BPF_MAP_TYPE_ARRAY, "tmpl", 4, 64, 16, NULL);
	o.inner_map_fd = tmpl;
	outer = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "outer", 4, 4, MAX_QPS, &o);
	want_sum = map_memlock(outer);
	snprintf(path, sizeof(path), "%s/outer", dir);
	ASSERT_TRUE(tmpl >= 0 && outer >= 0 && !bpf_obj_pin(outer, path), "outer map");
	for (uint32_t k = 0; k < MAX_QPS && !rc; k++) {
		int in = bpf_map_create(BPF_MAP_TYPE_ARRAY, "in", 4, 64, 16, NULL);

		rc = in < 0 || bpf_map_update_elem(outer, &k, &in, BPF_ANY);
		want_sum += map_memlock(in);
		if (in >= 0)
			close(in);
	}
	ASSERT_EQ(rc, 0, "inner maps");
	t0 = now_s();
	ASSERT_EQ(map_bytes_of_dir(dir, &sum, &n, NULL, 0), 0, "sum");
	printf("  map_bytes: %u maps (%u inner) in %.1f ms\n", n, MAX_QPS, (now_s() - t0) * 1e3);
	ASSERT_EQ(n, MAX_QPS + 1, "the outer map and each inner map");
	ASSERT_EQ(sum, want_sum, "their bytes_memlock");
	close(outer);
	close(tmpl);
	pin_dir_remove(dir, sizeof(dir));
}

TEST_CASE(test_stats, "qp_table.stats_rows")
{
	char *out = NULL, *err = NULL;

	NEED_HOST();
	ASSERT_EQ(run("stats --json", &out, &err), 0, err ? err : "stats");
	ASSERT_EQ(count_of(out, "{\"qpn\": "), want.n + want.counted_dead,
		  "live QPs and dead ones that counted");
	free(out);
	free(err);
}

TEST_CASE(test_qp_out_of_range, "qp_table.qp_number_beyond_the_host_limit")
{
	char *out = NULL, *err = NULL, line[32], msg[128];

	NEED_HOST();
	snprintf(line, sizeof(line), "qp show %u", MAX_QPS + 1);
	ASSERT_EQ(run(line, &out, &err), AGENT_EXIT_FAIL, "refused");
	snprintf(msg, sizeof(msg), "QP %u is out of range (1..%u, mrcd --max-qps)",
		 MAX_QPS + 1, MAX_QPS);
	ASSERT_TRUE(err && strstr(err, msg), err ? err : "no message");
	free(out);
	free(err);
	out = err = NULL;
	snprintf(line, sizeof(line), "ev list --qp %u", MAX_QPS + 1);
	ASSERT_EQ(run(line, &out, &err), AGENT_EXIT_FAIL, "ev list refused");
	ASSERT_TRUE(err && strstr(err, msg), err ? err : "no message");
	free(out);
	free(err);
	out = err = NULL;
	ASSERT_EQ(run("qp show 1", &out, &err), 0, "a QP within the limit");
	free(out);
	free(err);
}

/* doctor's report on the fake host, JSON; the detail of check `name` in buf. */
static const char *doctor_check(const char *name, char *buf, size_t len)
{
	char *out = NULL, *err = NULL, key[64];
	size_t out_len = 0, err_len = 0;
	FILE *fo = open_memstream(&out, &out_len), *fe = open_memstream(&err, &err_len);
	const char *p;

	doctor_run(host.dir, true, fo, fe);
	fclose(fo);
	fclose(fe);
	snprintf(key, sizeof(key), "{\"name\": \"%s\", ", name);
	p = out ? strstr(out, key) : NULL;
	snprintf(buf, len, "%s", p ? p : "(no such check)");
	if (strchr(buf, '}'))
		*strchr(buf, '}') = 0;
	free(out);
	free(err);
	return buf;
}

/* The QP in ERROR with the most ASSUMED_BAD EVs (the lowest number among equals). */
static uint32_t worst_error_qpn(void)
{
	uint32_t best = 0, most = 0;

	for (uint32_t s = 0; s < MAX_QPS; s++)
		if (slot_used(s) && state_of(s) == MRC_QPS_ERROR && (!best || bad_of(s) > most)) {
			best = mrc_slot_to_qpn(s);
			most = bad_of(s);
		}
	return best;
}

/* Every 7th slot was put in ERROR, and 3 in 4 slots are claimed: QPs warn, limits not. */
TEST_CASE(test_doctor, "qp_table.doctor_limits_and_qps")
{
	char buf[1024], want_detail[128];
	uint32_t pid = 1, added = 0, target;
	int rc = 0;

	NEED_HOST();
	doctor_check("limits", buf, sizeof(buf));
	ASSERT_TRUE(strstr(buf, "\"status\": \"ok\"") != NULL, buf);
	doctor_check("QPs", buf, sizeof(buf));
	snprintf(want_detail, sizeof(want_detail), "%u in ERROR, %u with ASSUMED_BAD EVs "
		 "(%u EVs); worst: %u ERROR, ", want.by_state[MRC_QPS_ERROR], want.with_bad,
		 want.bad_evs, worst_error_qpn());
	ASSERT_TRUE(strstr(buf, "\"status\": \"warn\"") && strstr(buf, want_detail), buf);
	/* Claim QP numbers until just over 90% of the limit. */
	target = MAX_QPS * LIMIT_WARN_PERCENT / 100 + 1;
	for (uint32_t s = 0; s < MAX_QPS && want.owned + added < target && !rc; s++) {
		uint32_t qpn = mrc_slot_to_qpn(s);

		if (slot_used(s))
			continue;
		rc = bpf_map_update_elem(host.fd[MRC_PIN_QP_OWNER], &qpn, &pid, BPF_NOEXIST);
		added++;
	}
	ASSERT_EQ(rc, 0, "claimed");
	doctor_check("limits", buf, sizeof(buf));
	snprintf(want_detail, sizeof(want_detail), "QPs %u of %u in use (over 90%%), contexts 3 of %u",
		 target, MAX_QPS, MAX_CTX);
	ASSERT_TRUE(strstr(buf, "\"status\": \"warn\"") && strstr(buf, want_detail), buf);
	ASSERT_TRUE(strstr(buf, "mrcd --max-qps N") && !strstr(buf, "--max-contexts N"), buf);
	/* Back as it was, for the other tests. */
	for (uint32_t s = 0, k = 0; s < MAX_QPS && k < added; s++) {
		uint32_t qpn = mrc_slot_to_qpn(s);

		if (!slot_used(s) && !bpf_map_delete_elem(host.fd[MRC_PIN_QP_OWNER], &qpn))
			k++;
	}
}

/* A reply too big for the IPC is refused whole, never clipped into bad JSON. */
TEST_CASE(test_reply_too_big, "qp_table.reply_too_big_refused_whole")
{
	struct agent_reply r;
	char *out = malloc(1), *err = strdup("x"), want[96];

	/* Only the lengths count: the texts are owned and freed, not read. */
	agent_reply_init(&r, 0, out, AGENT_REPLY_MAX, err, 2);
	ASSERT_EQ(r.status, AGENT_EXIT_FAIL, "a failure");
	ASSERT_TRUE(!r.out && !r.out_len, "no clipped stdout");
	snprintf(want, sizeof(want), "is %u bytes, more than the %u one reply carries",
		 (unsigned int)AGENT_REPLY_MAX + 2, (unsigned int)AGENT_REPLY_MAX);
	ASSERT_TRUE(r.err && strstr(r.err, want), r.err ? r.err : "no message");
	agent_reply_free(&r);
	out = malloc(1);
	agent_reply_init(&r, 0, out, AGENT_REPLY_MAX, NULL, 0);
	ASSERT_EQ(r.status, 0, "exactly the limit goes");
	ASSERT_EQ(r.out_len, AGENT_REPLY_MAX, "whole");
	agent_reply_free(&r);
}

int main(void)
{
	int rc = fake_host_create(&host, "qptable", MAX_QPS, MAX_CTX, NULL, 0);

	if (!rc)
		rc = fill();
	host_ok = !rc;
	if (rc)
		fprintf(stderr, "fake host: %s\n", strerror(-rc));
	RUN_REGISTERED_TESTS();
	fake_host_destroy(&host);
	return host_ok ? TEST_EXIT() : 1;
}
