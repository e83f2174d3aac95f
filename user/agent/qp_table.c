// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Every QP at once, in bulk (see qp_table.h). mrc_qps is read in chunks
 * so that a host sized for 65,536 QPs costs a few megabytes at most here,
 * whatever it holds.
 */
#include "agent/qp_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <bpf/libbpf.h>

#include "agent/map_bulk.h"
#include "common/errmsg.h"
#include "common/state_maps.h"

#define CHUNK	4096	/* slots read per batch */

static size_t percpu_stride(void)
{
	return (sizeof(struct mrc_qp_stats) + 7) & ~(size_t)7;
}

static int n_cpus(void)
{
	int n = libbpf_num_possible_cpus();

	return n > 0 ? n : 1;
}

/* Room for one more row. */
static int grow(struct qp_table *t, uint32_t *cap, bool counters)
{
	uint32_t c = *cap ? *cap * 2 : 256;
	void *p;

	if (t->n < *cap)
		return 0;
	if (!(p = realloc(t->slot, c * sizeof(*t->slot))))
		return -ENOMEM;
	t->slot = p;
	if (!(p = realloc(t->info, c * sizeof(*t->info))))
		return -ENOMEM;
	t->info = p;
	if (counters) {
		if (!(p = realloc(t->counters, (size_t)c * QPT_COUNTERS * sizeof(uint64_t))))
			return -ENOMEM;
		t->counters = p;
	}
	*cap = c;
	return 0;
}

/* A per-CPU value summed over the CPUs. */
static void sum_cpus(const uint64_t *vals, int cpus, uint64_t *sum)
{
	size_t words = percpu_stride() / 8;

	memset(sum, 0, QPT_COUNTERS * sizeof(*sum));
	for (int cpu = 0; cpu < cpus; cpu++)
		for (size_t k = 0; k < QPT_COUNTERS; k++)
			sum[k] += vals[(size_t)cpu * words + k];
}

static bool all_zero(const uint64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i])
			return false;
	return true;
}

struct chunk_buf {
	struct mrc_qp_info *info;
	uint64_t *stats;	/* per-CPU values, or NULL */
	uint64_t sum[QPT_COUNTERS];
};

static int read_chunk(struct qp_table *t, const struct qp_table_maps *m,
		      enum qp_table_rows rows, struct chunk_buf *b, uint32_t first,
		      uint32_t count, uint32_t *cap)
{
	size_t value_bytes = percpu_stride() * (size_t)n_cpus();
	int rc = map_read_range(m->qps, first, count, sizeof(*b->info), b->info);

	if (!rc && b->stats)
		rc = map_read_range(m->qp_stats, first, count, value_bytes, b->stats);
	for (uint32_t i = 0; !rc && i < count; i++) {
		bool live = b->info[i].state != MRC_QPS_RESET;

		if (b->stats)
			sum_cpus(b->stats + i * value_bytes / 8, n_cpus(), b->sum);
		if (!live && !(rows == QPT_LIVE_OR_COUNTED && b->stats &&
			       !all_zero(b->sum, QPT_COUNTERS)))
			continue;
		rc = grow(t, cap, b->stats != NULL);
		if (rc)
			break;
		t->slot[t->n] = first + i;
		t->info[t->n] = b->info[i];
		if (b->stats)
			memcpy(t->counters + (size_t)t->n * QPT_COUNTERS, b->sum, sizeof(b->sum));
		t->n++;
	}
	return rc;
}

static int read_rows(struct qp_table *t, const struct qp_table_maps *m,
		     enum qp_table_rows rows)
{
	struct chunk_buf b = {};
	uint32_t cap = 0;
	int rc = 0;

	b.info = malloc(CHUNK * sizeof(*b.info));
	if (m->qp_stats >= 0)
		b.stats = malloc(CHUNK * percpu_stride() * (size_t)n_cpus());
	if (!b.info || (m->qp_stats >= 0 && !b.stats))
		rc = -ENOMEM;
	for (uint32_t first = 0; !rc && first < t->max_qps; first += CHUNK) {
		uint32_t count = t->max_qps - first < CHUNK ? t->max_qps - first : CHUNK;

		rc = read_chunk(t, m, rows, &b, first, count, &cap);
	}
	free(b.info);
	free(b.stats);
	return rc;
}

long qp_table_find(const struct qp_table *t, uint32_t slot)
{
	long lo = 0, hi = (long)t->n - 1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (t->slot[mid] == slot)
			return mid;
		if (t->slot[mid] < slot)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* Every entry of a u32 -> u32 hash: their number, and the pairs if asked. */
static int read_owners(int fd, uint32_t **keys, uint32_t **vals, uint32_t *n)
{
	uint32_t max = map_max_entries(fd);
	int rc;

	*keys = malloc((max ? max : 1) * sizeof(uint32_t));
	*vals = malloc((max ? max : 1) * sizeof(uint32_t));
	if (!*keys || !*vals)
		return -ENOMEM;
	rc = map_read_all(fd, sizeof(uint32_t), sizeof(uint32_t), max, *keys, *vals, n);
	return rc;
}

static int read_qp_owners(struct qp_table *t, const struct qp_table_maps *m)
{
	uint32_t *keys = NULL, *pids = NULL, n = 0;
	int rc = read_owners(m->qp_owner, &keys, &pids, &n);

	if (!rc) {
		t->owner = calloc(t->n ? t->n : 1, sizeof(*t->owner));
		if (!t->owner)
			rc = -ENOMEM;
	}
	for (uint32_t i = 0; !rc && i < n; i++) {
		long row = keys[i] ? qp_table_find(t, mrc_qpn_to_slot(keys[i])) : -1;

		if (row >= 0)
			t->owner[row] = pids[i];
	}
	t->qps_in_use = n;
	free(keys);
	free(pids);
	return rc;
}

static int read_contexts(struct qp_table *t, int fd)
{
	uint32_t *keys = NULL, *vals = NULL, n = 0;
	int rc = read_owners(fd, &keys, &vals, &n);

	t->max_ctx = map_max_entries(fd);
	t->ctx_in_use = n;
	free(keys);
	free(vals);
	return rc;
}

/*
 * Read-only mappings of each row's entry in outer fd (at the row's slot,
 * its entry state_idx; for the views at its window), when the fd is given:
 * a QP gone since its row was read leaves NULL.
 */
static int map_rows(const struct qp_table *t, int fd, size_t value_size, bool by_window,
		    const void ***out)
{
	const void **p;

	if (fd < 0)
		return 0;
	p = calloc(t->n ? t->n : 1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (uint32_t r = 0; r < t->n; r++) {
		uint32_t w = t->info[r].cc_slot;

		if (by_window && !w)
			continue;
		p[r] = by_window ? mrc_state_map_slot(fd, w - 1, 0, value_size, PROT_READ) :
			mrc_state_map_slot(fd, t->slot[r], t->info[r].state_idx, value_size,
					   PROT_READ);
	}
	*out = p;
	return 0;
}

static int map_arrays(struct qp_table *t, const struct qp_table_maps *m, char *err,
		      size_t errlen)
{
	int rc = map_rows(t, m->qp_evs, sizeof(**t->evs), false, (const void ***)&t->evs);

	if (!rc)
		rc = map_rows(t, m->tx, sizeof(**t->tx), false, (const void ***)&t->tx);
	if (!rc)
		rc = map_rows(t, m->rx, sizeof(**t->rx), false, (const void ***)&t->rx);
	if (!rc)
		rc = map_rows(t, m->cc_view, sizeof(**t->ccv), true, (const void ***)&t->ccv);
	if (rc)
		return fail(rc, err, errlen, "mapping the QPs' state: %s", strerror(-rc));
	t->n_ccv = m->cc_view >= 0 ? map_max_entries(m->cc_view) : 0;
	return 0;
}

int qp_table_read(struct qp_table *t, const struct qp_table_maps *m,
		  enum qp_table_rows rows, char *err, size_t errlen)
{
	int rc;

	memset(t, 0, sizeof(*t));
	t->max_qps = map_max_entries(m->qps);
	if (!t->max_qps)
		return fail(-errno, err, errlen, "reading the size of mrc_qps: %s",
			    strerror(errno));
	rc = read_rows(t, m, rows);
	if (rc)
		return fail(rc, err, errlen, "reading mrc_qps%s: %s",
			    m->qp_stats >= 0 ? " and mrc_qp_stats" : "", strerror(-rc));
	rc = read_qp_owners(t, m);
	if (rc)
		return fail(rc, err, errlen, "reading mrc_qp_owner: %s", strerror(-rc));
	if (m->ctx_owner >= 0 && (rc = read_contexts(t, m->ctx_owner)))
		return fail(rc, err, errlen, "reading mrc_ctx_owner: %s", strerror(-rc));
	return map_arrays(t, m, err, errlen);
}

static void unmap_rows(const struct qp_table *t, const void **p, size_t value_size)
{
	for (uint32_t r = 0; p && r < t->n; r++)
		mrc_state_unmap((void *)p[r], value_size);
	free(p);
}

void qp_table_free(struct qp_table *t)
{
	unmap_rows(t, (const void **)t->evs, sizeof(**t->evs));
	unmap_rows(t, (const void **)t->tx, sizeof(**t->tx));
	unmap_rows(t, (const void **)t->rx, sizeof(**t->rx));
	unmap_rows(t, (const void **)t->ccv, sizeof(**t->ccv));
	free(t->slot);
	free(t->info);
	free(t->owner);
	free(t->counters);
	memset(t, 0, sizeof(*t));
}

void qp_ev_counts(const struct mrc_qp_evs *evs, uint32_t n_evs,
		  struct qp_ev_counts *out)
{
	uint32_t n = n_evs < MRC_MAX_EVS ? n_evs : MRC_MAX_EVS;

	memset(out, 0, sizeof(*out));
	/*
	 * ASSUMED_BAD and DENIED entries are out of the rotation whether they
	 * were active or backups (a demoted active one hands its place over):
	 * count them by state; backups are the usable entries not in rotation.
	 */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t w = __atomic_load_n(&evs->ev[i].word, __ATOMIC_RELAXED);
		uint8_t st = MRC_EV_WORD_STATE(w);

		if (st == MRC_EV_ASSUMED_BAD)
			out->bad++;
		else if (st == MRC_EV_DENIED)
			out->denied++;
		else if (!(MRC_EV_WORD_FLAGS(w) & MRC_EV_F_ACTIVE))
			out->backup++;
		else if (st == MRC_EV_GOOD)
			out->good++;
		else if (st == MRC_EV_SKIP)
			out->skip++;
	}
}
