// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Sizing the maps for mrcd's limits and what they cost (see map_plan.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <bpf/libbpf.h>
#include <linux/bpf.h>

#include "common/errmsg.h"
#include "common/map_plan.h"
#include "common/qpmaps.h"

#define MIB(b)	((double)(b) / (1024.0 * 1024.0))

int mrc_plan_size_object(struct bpf_object *obj, uint32_t max_qps,
			 uint32_t max_ctx, char *err, size_t errlen)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj) {
		enum mrc_pin id = mrc_pin_by_name(bpf_map__name(map));
		const struct mrc_pin_spec *s = mrc_pin_spec(id);
		int rc;

		if (!s || s->scale == MRC_PIN_FIXED)
			continue;	/* internal maps, fixed sizes */
		rc = bpf_map__set_max_entries(map, mrc_pin_entries(s, max_qps, max_ctx));
		if (rc)
			return fail(rc, err, errlen, "cannot size map %s: %s", s->name,
				    strerror(-rc));
	}
	return 0;
}

static uint64_t round8(uint64_t n)
{
	return (n + 7) & ~7ull;
}

static uint64_t page_align(uint64_t n)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	return (n + page - 1) / page * page;
}

static uint64_t pow2_at_least(uint64_t n)
{
	uint64_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/*
 * The kernel's own figures (kernel/bpf/arraymap.c, hashtab.c, ringbuf.c
 * map_mem_usage): a hash element has a 48-byte header, a bucket 16 bytes,
 * and a preallocated plain hash map ncpus spare elements; the map's own
 * struct (a few hundred bytes) is left out.
 */
#define HTAB_ELEM_HEADER	48u
#define HTAB_BUCKET		16u
#define HTAB_LOCKS_PER_CPU	8u

uint64_t mrc_plan_map_bytes(const struct mrc_pin_spec *s, uint32_t entries,
			    unsigned int ncpus)
{
	uint64_t n = entries, value = round8(s->value_size);

	switch (s->type) {
	case BPF_MAP_TYPE_ARRAY:
		return s->flags & BPF_F_MMAPABLE ? page_align(n * value) : n * value;
	case BPF_MAP_TYPE_PERCPU_ARRAY:
		return n * 8 + n * value * ncpus;
	case BPF_MAP_TYPE_ARRAY_OF_MAPS:
		return n * 8;
	case BPF_MAP_TYPE_HASH:
		return pow2_at_least(n) * HTAB_BUCKET + 4ull * ncpus * HTAB_LOCKS_PER_CPU +
		       (n + ncpus) * (HTAB_ELEM_HEADER + round8(s->key_size) + value);
	case BPF_MAP_TYPE_RINGBUF:
		return n + 2 * page_align(1);	/* data, consumer and producer pages */
	default:
		return n * (round8(s->key_size) + value);
	}
}

uint64_t mrc_plan_bytes(uint32_t max_qps, uint32_t max_ctx, unsigned int ncpus)
{
	uint64_t sum = 0;

	for (unsigned int i = 0; i < MRC_PIN__COUNT; i++) {
		const struct mrc_pin_spec *s = mrc_pin_spec(i);

		sum += mrc_plan_map_bytes(s, mrc_pin_entries(s, max_qps, max_ctx), ncpus);
	}
	return sum;
}

/*
 * A BPF_F_MMAPABLE array of n values: the values rounded up to pages,
 * behind a page of its own for the map's struct (kernel/bpf/arraymap.c
 * page-aligns both, so that the values can be mapped).
 */
static uint64_t mmapable_bytes(uint64_t n, uint32_t value_size)
{
	return page_align(1) + page_align(n * round8(value_size));
}

/*
 * A window's view is a one-entry map per QP. The QP state comes in
 * blocks of an owner's QPs that double as they fill (qpmaps.h): an
 * owner's blocks hold fewer than twice its QPs plus the first block, so
 * per QP twice its values and a struct page per first block's worth of
 * QPs, per context a first block.
 */
uint64_t mrc_plan_state_bytes(uint32_t max_qps, uint32_t max_ctx)
{
	uint64_t per_qp = 0, per_ctx = 0;

	for (unsigned int i = 0; i < MRC_PIN__COUNT; i++) {
		const struct mrc_pin_spec *s = mrc_pin_spec(i);
		uint32_t v = s->inner_value_size;

		if (!v)
			continue;
		if (!(s->inner_flags & BPF_F_INNER_MAP)) {
			per_qp += mmapable_bytes(1, v);
			continue;
		}
		per_qp += 2 * round8(v) + page_align(1) / MRC_STATE_BLOCK_MIN;
		per_ctx += mmapable_bytes(MRC_STATE_BLOCK_MIN, v);
	}
	return per_qp * max_qps + per_ctx * max_ctx;
}

enum mrc_pin mrc_plan_biggest(uint32_t max_qps, uint32_t max_ctx,
			      unsigned int ncpus)
{
	enum mrc_pin best = MRC_PIN_CFG;
	uint64_t most = 0;

	for (unsigned int i = 0; i < MRC_PIN__COUNT; i++) {
		const struct mrc_pin_spec *s = mrc_pin_spec(i);
		uint64_t b = mrc_plan_map_bytes(s, mrc_pin_entries(s, max_qps, max_ctx),
						ncpus);

		if (b > most) {
			most = b;
			best = i;
		}
	}
	return best;
}

uint64_t mrc_plan_fd_bytes(int fd)
{
	char path[64], line[128];
	uint64_t bytes = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "memlock: %" SCNu64, &bytes) == 1)
			break;
	fclose(f);
	return bytes;
}

/* ---- what memory there is ------------------------------------------------ */

/* Kernels >= 5.11 charge BPF memory to the memory cgroup, not the rlimit. */
static bool kernel_charges_memcg(void)
{
	struct utsname u;
	unsigned int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return true;
	return major > 5 || (major == 5 && minor >= 11);
}

/* A number from a cgroup file; "max" (v2) or v1's huge value: unlimited. */
static bool read_limit(const char *path, uint64_t *out)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) != NULL;
	fclose(f);
	if (!ok || !strncmp(buf, "max", 3))
		return false;
	*out = strtoull(buf, NULL, 10);
	return *out < (1ull << 62);
}

struct room {
	uint64_t free;		/* bytes the tightest limit still allows */
	uint64_t limit, usage;
	char where[600];	/* the cgroup file of that limit */
};

/*
 * Walk the cgroup at base/path and its ancestors: keep the tightest
 * limit - usage in *r. limit_file/usage_file: v2 or v1 names.
 */
static void walk_cgroup(const char *base, const char *path, const char *limit_file,
			const char *usage_file, struct room *r)
{
	char dir[512], file[600];

	snprintf(dir, sizeof(dir), "%s%s", base, path);
	for (;;) {
		uint64_t limit, usage = 0;
		char *slash;

		snprintf(file, sizeof(file), "%s/%s", dir, limit_file);
		if (read_limit(file, &limit)) {
			char ufile[600];

			snprintf(ufile, sizeof(ufile), "%s/%s", dir, usage_file);
			if (!read_limit(ufile, &usage))
				usage = 0;
			if (limit - (usage < limit ? usage : limit) < r->free) {
				r->free = limit - (usage < limit ? usage : limit);
				r->limit = limit;
				r->usage = usage;
				snprintf(r->where, sizeof(r->where), "%s", file);
			}
		}
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < strlen(base))
			break;
		*slash = '\0';
	}
}

static bool file_exists(const char *path)
{
	return access(path, F_OK) == 0;
}

/* The memory cgroups of this process (v1 "N:...memory...:/p", v2 "0::/p"). */
static void cgroup_room(struct room *r)
{
	char line[1024];
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *ctrl = strchr(line, ':'), *path;

		if (!ctrl || !(path = strchr(ctrl + 1, ':')))
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (!strcmp(path, "/"))
			path = "";
		ctrl++;
		if (!*ctrl) {	/* v2: unified at /sys/fs/cgroup or .../unified */
			const char *base = file_exists("/sys/fs/cgroup/cgroup.controllers") ?
					   "/sys/fs/cgroup" : "/sys/fs/cgroup/unified";

			walk_cgroup(base, path, "memory.max", "memory.current", r);
		} else if (strstr(ctrl, "memory")) {
			walk_cgroup("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes",
				    "memory.usage_in_bytes", r);
		}
	}
	fclose(f);
}

static uint64_t mem_available(void)
{
	char line[128];
	uint64_t kib = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %" SCNu64 " kB", &kib) == 1)
			break;
	fclose(f);
	return kib * 1024;
}

/*
 * What loading the programs takes besides the maps, while the kernel's
 * verifier checks them: its states are charged to the loader's memory
 * cgroup too. Measured: 162 MiB at the peak for mrcd --max-qps 64 on
 * kernel 6.18 (the maps then hold under 1 MiB), 54 MiB before ICRC on
 * acknowledgements and SRv6 envelopes; transient, freed once loaded.
 */
#define LOAD_RESERVE	(192ull << 20)

int mrc_plan_check_memory(uint64_t need, char *err, size_t errlen)
{
	struct room r = { .free = UINT64_MAX };
	struct rlimit rl;
	uint64_t avail;

	if (!kernel_charges_memcg() && !getrlimit(RLIMIT_MEMLOCK, &rl) &&
	    rl.rlim_cur != RLIM_INFINITY && need > rl.rlim_cur)
		return fail(-ENOMEM, err, errlen, "they need %.1f MiB, but RLIMIT_MEMLOCK "
			    "is %.1f MiB (this kernel charges BPF maps to it: raise it "
			    "with ulimit -l or LimitMEMLOCK=)", MIB(need), MIB(rl.rlim_cur));
	cgroup_room(&r);
	if (need + LOAD_RESERVE > r.free)
		return fail(-ENOMEM, err, errlen, "they need %.1f MiB and loading the "
			    "programs up to %.0f MiB more for a moment (the kernel's "
			    "verifier), but the memory cgroup allows %.1f MiB more (%s: "
			    "%.1f MiB, %.1f MiB in use; BPF maps and the verifier are "
			    "charged to the memory cgroup, not to RLIMIT_MEMLOCK, on "
			    "kernels >= 5.11)", MIB(need), MIB(LOAD_RESERVE), MIB(r.free),
			    r.where, MIB(r.limit), MIB(r.usage));
	avail = mem_available();
	if (avail && need > avail)
		return fail(-ENOMEM, err, errlen, "they need %.1f MiB, but only %.1f MiB "
			    "of memory is available (MemAvailable)", MIB(need), MIB(avail));
	return 0;
}
