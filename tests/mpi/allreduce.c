// mpi-allreduce: MPI_Allreduce over every rank, every result checked.
//
// Two modes:
//   sweep (default)  sizes MIN, 2*MIN, ... MAX bytes, REPS allreduces each
//   steps            a training-like loop: STEPS allreduces of SIZE bytes,
//                    one after the other, each step timed (--csv)
// Every rank fills its buffer with values that depend on the rank, the
// element and the step, so a result that is stale, short, misplaced or
// summed wrongly differs from the expected sum somewhere; every rank
// checks every element of every result. Exit status: 0 every result
// right, 1 a wrong result (the first ones are printed), 2 usage error.
#include <errno.h>
#include <inttypes.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PROG "mpi-allreduce"
// Rank offsets are multiples of a prime above every element value, so a
// sum of P ranks identifies each rank's contribution.
#define SPREAD 1000003LL

struct options {
	size_t min_bytes, max_bytes, size;
	int reps, steps;
	const char *csv;
	int json;
	int inject_error;	// rank 1 spoils one element of its first result
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [--min BYTES] [--max BYTES] [--reps N] [--json]\n"
		"       " PROG " --steps N --size BYTES [--csv FILE] [--json]\n"
		"  sweep: MPI_Allreduce (MPI_INT64_T, MPI_SUM) of MIN (default 1k),\n"
		"  2*MIN, ... MAX (default 64m) bytes, N (default 2) times each;\n"
		"  steps: N allreduces of BYTES, rank 0 writes one CSV line per step\n"
		"  (step,start_unix_ms,step_ms,ok). Sizes take k/m/g suffixes and\n"
		"  must be multiples of 8. Every result is checked on every rank.\n"
		"  --inject-error: rank 1 changes one element of its first result\n"
		"  before the check (tests show that the check catches it).\n");
}

static int parse_size(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || s[0] == '-')
		return -1;
	switch (*end) {
	case 'k': case 'K': v <<= 10; end++; break;
	case 'm': case 'M': v <<= 20; end++; break;
	case 'g': case 'G': v <<= 30; end++; break;
	}
	if (*end || v == 0 || v % 8 || v > (1ULL << 31))
		return -1;
	*out = v;
	return 0;
}

static int parse_count(const char *s, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 1 || v > 100000000)
		return -1;
	*out = (int)v;
	return 0;
}

// 0 ok, 2 usage error (printed by rank 0 only).
static int parse_args(int argc, char **argv, struct options *o, int rank)
{
	*o = (struct options){ .min_bytes = 1024, .max_bytes = 64 << 20, .reps = 2 };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		int bad = 0;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			if (rank == 0)
				usage(stdout);
			return 1;
		} else if (!strcmp(a, "--json")) {
			o->json = 1;
			continue;
		} else if (!strcmp(a, "--inject-error")) {
			o->inject_error = 1;
			continue;
		} else if (!v) {
			bad = 1;
		} else if (!strcmp(a, "--min")) {
			bad = parse_size(v, &o->min_bytes);
		} else if (!strcmp(a, "--max")) {
			bad = parse_size(v, &o->max_bytes);
		} else if (!strcmp(a, "--size")) {
			bad = parse_size(v, &o->size);
		} else if (!strcmp(a, "--reps")) {
			bad = parse_count(v, &o->reps);
		} else if (!strcmp(a, "--steps")) {
			bad = parse_count(v, &o->steps);
		} else if (!strcmp(a, "--csv")) {
			o->csv = v;
		} else {
			bad = 1;
		}
		if (bad) {
			if (rank == 0)
				fprintf(stderr, PROG ": bad or incomplete option '%s'\n", a);
			return 2;
		}
		i++;
	}
	if (o->min_bytes > o->max_bytes || (o->steps && !o->size) || (o->size && !o->steps)) {
		if (rank == 0)
			fprintf(stderr, PROG ": need MIN <= MAX, and --steps with --size\n");
		return 2;
	}
	return 0;
}

static double now_ms(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// The value of element i on a rank before the reduction: it depends on
// the element and the step (the rank adds whole SPREADs on top).
static int64_t base_value(size_t i, int step)
{
	return (int64_t)((i * 2654435761ULL + (uint64_t)step * 97) % (uint64_t)SPREAD);
}

static void fill(int64_t *buf, size_t n, int rank, int step)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = base_value(i, step) + rank * SPREAD;
}

// Wrong elements of a result over P ranks; the first few are printed.
static long check(const int64_t *buf, size_t n, int ranks, int step, int rank, size_t bytes)
{
	const int64_t offsets = SPREAD * ranks * (ranks - 1) / 2;
	long wrong = 0;
	for (size_t i = 0; i < n; i++) {
		int64_t want = ranks * base_value(i, step) + offsets;
		if (buf[i] == want)
			continue;
		if (wrong++ < 3)
			fprintf(stderr, PROG ": rank %d, %zu bytes, step %d: element %zu is %" PRId64
				", expected %" PRId64 "\n", rank, bytes, step, i, buf[i], want);
	}
	return wrong;
}

static int spoil_next;	// --inject-error: change the next result once

// One checked allreduce of n elements; returns the wrong elements here.
static long allreduce_once(int64_t *in, int64_t *out, size_t n, int ranks, int rank, int step)
{
	fill(in, n, rank, step);
	memset(out, 0xa5, n * sizeof(*out));	// no stale result can pass
	int rc = MPI_Allreduce(in, out, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
	if (rc != MPI_SUCCESS) {
		fprintf(stderr, PROG ": rank %d: MPI_Allreduce failed (%d)\n", rank, rc);
		return (long)n;
	}
	if (spoil_next) {
		out[n / 2] += 1;
		spoil_next = 0;
	}
	return check(out, n, ranks, step, rank, n * sizeof(*out));
}

// Wrong elements summed over every rank (a zero means every rank agreed).
static long total_wrong(long mine)
{
	long all = 0;
	MPI_Allreduce(&mine, &all, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	return all;
}

static long run_sweep(const struct options *o, int64_t *in, int64_t *out, int ranks, int rank)
{
	long wrong_all = 0;
	int sizes = 0;
	for (size_t bytes = o->min_bytes; bytes <= o->max_bytes; bytes *= 2) {
		size_t n = bytes / sizeof(int64_t);
		long wrong = 0;
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = now_ms(CLOCK_MONOTONIC);
		for (int r = 0; r < o->reps; r++)
			wrong += allreduce_once(in, out, n, ranks, rank, sizes * o->reps + r);
		double ms = (now_ms(CLOCK_MONOTONIC) - t0) / o->reps;
		wrong = total_wrong(wrong);
		wrong_all += wrong;
		sizes++;
		if (rank == 0 && !o->json)
			printf("allreduce %10zu bytes x %d on %d ranks: %s, %.3f ms each (with the check)\n",
			       bytes, o->reps, ranks, wrong ? "WRONG" : "ok", ms);
		if (rank == 0 && o->json)
			printf("{\"bytes\": %zu, \"reps\": %d, \"ranks\": %d, \"ok\": %s, \"ms\": %.3f}\n",
			       bytes, o->reps, ranks, wrong ? "false" : "true", ms);
		if (bytes > o->max_bytes / 2)
			break;
	}
	if (rank == 0)
		printf("%s: %d sizes, %zu..%zu bytes, %d ranks: %s\n", PROG, sizes, o->min_bytes,
		       o->max_bytes, ranks, wrong_all ? "WRONG RESULTS" : "every result right");
	return wrong_all;
}

static long run_steps(const struct options *o, int64_t *in, int64_t *out, int ranks, int rank)
{
	size_t n = o->size / sizeof(int64_t);
	FILE *csv = NULL;
	long wrong = 0;
	if (rank == 0 && o->csv) {
		csv = fopen(o->csv, "w");
		if (!csv) {	// the steps would go unrecorded: stop every rank
			fprintf(stderr, PROG ": %s: %s\n", o->csv, strerror(errno));
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		fprintf(csv, "step,start_unix_ms,step_ms,ok\n");
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double first = now_ms(CLOCK_MONOTONIC);
	for (int s = 0; s < o->steps; s++) {
		double wall = now_ms(CLOCK_REALTIME), t0 = now_ms(CLOCK_MONOTONIC);
		long w = allreduce_once(in, out, n, ranks, rank, s);
		double ms = now_ms(CLOCK_MONOTONIC) - t0;
		wrong += w;
		if (csv) {
			fprintf(csv, "%d,%.3f,%.3f,%d\n", s, wall, ms, w == 0);
			fflush(csv);	// a run cut short still leaves its steps
		}
	}
	double total_s = (now_ms(CLOCK_MONOTONIC) - first) / 1e3;
	wrong = total_wrong(wrong);
	if (csv)
		fclose(csv);
	if (rank == 0 && o->json)
		printf("{\"ranks\": %d, \"steps\": %d, \"size\": %zu, \"seconds\": %.3f, "
		       "\"wrong_elements\": %ld, \"verified\": %s}\n", ranks, o->steps, o->size,
		       total_s, wrong, wrong ? "false" : "true");
	else if (rank == 0)
		printf("%s: %d steps of %zu bytes on %d ranks in %.2f s: %s\n", PROG, o->steps,
		       o->size, ranks, total_s, wrong ? "WRONG RESULTS" : "every result right");
	return wrong;
}

// Rank 0 says where the ranks run ("ranks on: h1 h2 ..."): a test checks
// that they spread over the hosts.
static void print_hosts(int rank, int ranks)
{
	char name[MPI_MAX_PROCESSOR_NAME] = "", *all = NULL;
	int len;
	MPI_Get_processor_name(name, &len);
	if (rank == 0 && !(all = calloc(ranks, MPI_MAX_PROCESSOR_NAME))) {
		fprintf(stderr, PROG ": out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Gather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
		   0, MPI_COMM_WORLD);
	if (rank != 0 || !all)
		return;
	printf("ranks on:");
	for (int r = 0; r < ranks; r++)
		printf(" %.*s", MPI_MAX_PROCESSOR_NAME, all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
	printf("\n");
	fflush(stdout);
	free(all);
}

int main(int argc, char **argv)
{
	int rank, ranks;
	struct options o;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &ranks);
	int rc = parse_args(argc, argv, &o, rank);
	if (rc) {
		MPI_Finalize();
		return rc == 1 ? 0 : 2;
	}
	print_hosts(rank, ranks);
	spoil_next = o.inject_error && rank == 1;
	size_t bytes = o.steps ? o.size : o.max_bytes;
	int64_t *in = malloc(bytes), *out = malloc(bytes);
	if (!in || !out) {
		fprintf(stderr, PROG ": rank %d: cannot allocate 2 x %zu bytes\n", rank, bytes);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	long wrong = o.steps ? run_steps(&o, in, out, ranks, rank)
			     : run_sweep(&o, in, out, ranks, rank);
	free(in);
	free(out);
	MPI_Finalize();
	return wrong ? 1 : 0;
}
