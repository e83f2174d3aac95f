// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The maps sized for --max-qps and --max-contexts before the object loads
 * (user/common/map_plan.h: which maps grow and how is pins.h's list), the
 * memory they need checked against what this host allows, pins of an
 * earlier mrcd checked against the limits asked for (libbpf would only
 * say it cannot reuse them), and a failed map creation explained in terms
 * of the limits.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "common/map_plan.h"
#include "common/pins.h"
#include "mrcd/mrcd.h"
#include "mrc.skel.h"

#define MIB(b)	((double)(b) / (1024.0 * 1024.0))

static unsigned int possible_cpus(void)
{
	int n = libbpf_num_possible_cpus();

	return n > 0 ? (unsigned int)n : 1;
}

int size_maps(const struct agent *a, struct bpf_object *obj)
{
	char err[256];
	int rc = mrc_plan_size_object(obj, a->opt.max_qps, a->opt.max_ctx, err,
				      sizeof(err));

	if (rc)
		pr_err("%s\n", err);
	return rc;
}

/* The entry count of a pinned map, 0 when it is not there (or unreadable). */
static __u32 pinned_entries(const struct agent *a, enum mrc_pin id)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	char path[4096], err[256];
	int fd;

	if (mrc_pin_path(path, sizeof(path), a->paths.pin_dir, id, err, sizeof(err)))
		return 0;
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		info.max_entries = 0;
	close(fd);
	return info.max_entries;
}

/*
 * Adoption reuses the pinned maps as they are, so they must be sized for
 * the limits we were asked for: otherwise say which map differs and how
 * to go on (the same limits, or remove the old fast path).
 */
int check_adopted_sizes(const struct agent *a)
{
	for (unsigned int i = 0; i < MRC_PIN__COUNT; i++) {
		const struct mrc_pin_spec *s = mrc_pin_spec(i);
		__u32 want = mrc_pin_entries(s, a->opt.max_qps, a->opt.max_ctx);
		__u32 have = s->scale == MRC_PIN_FIXED ? 0 : pinned_entries(a, i);

		if (!have || have == want)
			continue;
		pr_err("the maps pinned in %s are sized for other limits: %s has %u "
		       "entries, --max-qps %u --max-contexts %u need %u. Start mrcd "
		       "with the limits they were made for (--max-qps %u "
		       "--max-contexts %u) to adopt them with their QPs, or remove "
		       "them with 'mrcd --detach --pin-dir %s' (ending their QPs)\n",
		       a->paths.pin_dir, s->name, have, a->opt.max_qps, a->opt.max_ctx,
		       want, pinned_entries(a, MRC_PIN_QPS),
		       pinned_entries(a, MRC_PIN_CTX_OWNER), a->paths.pin_dir);
		return -EEXIST;
	}
	return 0;
}

/* Which limit costs most: the one to name when memory runs short. */
static const char *costly_limit(const struct agent *a, unsigned int ncpus)
{
	uint64_t base = mrc_plan_bytes(1, 1, ncpus);
	uint64_t qps = mrc_plan_bytes(a->opt.max_qps, 1, ncpus) - base +
		       mrc_plan_state_bytes(a->opt.max_qps, 0);
	uint64_t ctx = mrc_plan_bytes(1, a->opt.max_ctx, ncpus) - base +
		       mrc_plan_state_bytes(0, a->opt.max_ctx);

	return qps >= ctx ? "--max-qps" : "--max-contexts";
}

int check_map_memory(const struct agent *a)
{
	unsigned int ncpus = possible_cpus();
	uint64_t state = mrc_plan_state_bytes(a->opt.max_qps, a->opt.max_ctx);
	uint64_t need = mrc_plan_bytes(a->opt.max_qps, a->opt.max_ctx, ncpus) + state;
	char err[1024];

	/* The QPs' state maps too: the host must hold them once its QPs exist. */
	pr_info("maps for --max-qps %u --max-contexts %u: %.1f MiB planned (%.1f MiB "
		"of them the QPs' state maps)\n", a->opt.max_qps, a->opt.max_ctx,
		MIB(need), MIB(state));
	if (a->adopting)
		return 0;	/* the maps exist: reused, nothing new to hold */
	if (!mrc_plan_check_memory(need, err, sizeof(err)))
		return 0;
	pr_err("cannot size the maps for --max-qps %u --max-contexts %u: %s; lower "
	       "%s (or give the memory it needs)\n", a->opt.max_qps, a->opt.max_ctx,
	       err, costly_limit(a, ncpus));
	return -ENOMEM;
}

void explain_load_failure(const struct agent *a, int err)
{
	unsigned int ncpus = possible_cpus();
	const struct mrc_pin_spec *big;

	if (err != -ENOMEM && err != -E2BIG && err != -EPERM)
		return;
	big = mrc_pin_spec(mrc_plan_biggest(a->opt.max_qps, a->opt.max_ctx, ncpus));
	pr_err("the maps for --max-qps %u --max-contexts %u need %.1f MiB (the "
	       "biggest, %s, %.1f MiB) and the kernel refused them (%s): lower %s, "
	       "or raise the memory cgroup's limit (BPF maps are charged to it)\n",
	       a->opt.max_qps, a->opt.max_ctx,
	       MIB(mrc_plan_bytes(a->opt.max_qps, a->opt.max_ctx, ncpus)), big->name,
	       MIB(mrc_plan_map_bytes(big, mrc_pin_entries(big, a->opt.max_qps,
							   a->opt.max_ctx), ncpus)),
	       strerror(-err), costly_limit(a, ncpus));
}

/*
 * What the maps take, as the kernel counts them (bytes_memlock), for the
 * ready line: "maps for N QPs and M contexts: X MiB (planned Y MiB)".
 */
void describe_map_memory(const struct agent *a, char *buf, size_t len)
{
	uint64_t planned = mrc_plan_bytes(a->opt.max_qps, a->opt.max_ctx,
					  possible_cpus());
	const struct bpf_map *map;
	uint64_t sum = 0;

	bpf_object__for_each_map(map, a->skel->obj)
		if (!bpf_map__is_internal(map))
			sum += mrc_plan_fd_bytes(bpf_map__fd(map));
	snprintf(buf, len, "maps for %u QPs and %u contexts: %.1f MiB (planned "
		 "%.1f MiB%s)", a->opt.max_qps, a->opt.max_ctx, MIB(sum), MIB(planned),
		 a->adopting ? ", adopted" : "");
}
