// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The periodic check of the planes: is our XDP program still what each
 * plane runs, and our TC filter still on its egress? An operator's
 * `xdp-loader unload`, `ip link set dev IF xdp off` or `tc filter del`
 * (or another program put in our place) would otherwise leave a plane
 * silently without MRC. What is gone is logged once, counted for
 * `mrcctl status` (and doctor sees the plane itself), and attached again
 * unless mrcd was started with --no-repair.
 */
#define _GNU_SOURCE
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mrcd/mrcd.h"

/*
 * What the device runs now, for the log: "none" or "program N (name)".
 * Returns the program's id, 0 for none.
 */
static __u32 describe_xdp_now(const struct plane *p, char *buf, size_t len)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	int fd;

	if (bpf_xdp_query(p->ifindex, 0, &q) || !q.prog_id) {
		snprintf(buf, len, "none");
		return 0;
	}
	fd = bpf_prog_get_fd_by_id(q.prog_id);
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &info_len))
		snprintf(buf, len, "program %u (%s)", q.prog_id, info.name);
	else
		snprintf(buf, len, "program %u", q.prog_id);
	if (fd >= 0)
		close(fd);
	return q.prog_id;
}

static bool xdp_still_attached(const struct agent *a, const struct plane *p)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	if (p->xdp_via == XDP_VIA_LIBXDP && p->xdp_dispatcher)
		return xdp_program__is_attached(p->xdp_prog, p->ifindex) != XDP_MODE_UNSPEC;
	return !bpf_xdp_query(p->ifindex, 0, &q) && q.prog_id &&
	       q.prog_id == expected_xdp_id(a, p);
}

static void note_repair(struct plane *p, const char *what, int err)
{
	if (!err) {
		p->repairs++;
		p->repair_failed = false;
		pr_err("%s: %s attached again\n", p->name, what);
	} else if (!p->repair_failed) {
		p->repair_failed = true;
		pr_err("%s: cannot attach %s again (%s); trying again every %d ms\n",
		       p->name, what, strerror(-err), WATCH_INTERVAL_MS);
	}
}

static void watch_xdp(struct agent *a, struct plane *p)
{
	char now[64];
	__u32 other;
	int err;

	if (p->xdp_via != XDP_VIA_NONE && xdp_still_attached(a, p)) {
		if (p->xdp_missing)
			pr_err("%s: our XDP program is attached again\n", p->name);
		p->xdp_missing = false;
		p->repair_failed = false;
		return;
	}
	other = describe_xdp_now(p, now, sizeof(now));
	if (!p->xdp_missing) {
		p->xdp_missing = true;
		p->xdp_losses++;
		pr_err("%s: our XDP program was taken off the plane (it runs %s "
		       "now): %s\n", p->name, now, a->opt.no_repair ?
		       "not attaching it again (--no-repair)" : "attaching it again");
	}
	if (a->opt.no_repair)
		return;
	/* Someone else's program: never removed by us; said once. */
	if (other) {
		if (!p->repair_failed)
			pr_err("%s: it runs %s, not ours: not replacing it; MRC is off "
			       "this plane until it is removed\n", p->name, now);
		p->repair_failed = true;
		return;
	}
	forget_xdp(p);
	err = attach_xdp(a, p);
	if (!err)
		p->xdp_missing = false;
	note_repair(p, "the XDP program", err);
}

static void watch_tc(struct agent *a, struct plane *p)
{
	__u32 id = tc_prog_id(p->ifindex);
	int err;

	if (id && id == p->tc_prog_id) {
		if (p->tc_missing)
			pr_err("%s: our TC egress filter is attached again\n", p->name);
		p->tc_missing = false;
		return;
	}
	if (!p->tc_missing) {
		p->tc_missing = true;
		p->tc_losses++;
		pr_err("%s: our TC egress filter (handle 0x%x prio 0x%x) was %s: %s\n",
		       p->name, MRCD_TC_HANDLE, MRCD_TC_PRIO,
		       id ? "replaced by another program" : "removed",
		       a->opt.no_repair ? "not attaching it again (--no-repair)" :
		       "attaching it again");
	}
	if (a->opt.no_repair)
		return;
	err = attach_tc(a, p);
	if (!err)
		p->tc_missing = false;
	note_repair(p, "the TC egress filter", err);
}

void watch_planes(struct agent *a)
{
	static long long next_ms;
	long long now = now_ms();
	int i;

	if (now < next_ms)
		return;
	next_ms = now + WATCH_INTERVAL_MS;
	for (i = 0; i < a->n_planes; i++) {
		struct plane *p = &a->planes[i];

		/* A device that went away is the link monitor's news, not ours. */
		if (!plane_exists(p))
			continue;
		log_quiet_libs(true);
		watch_xdp(a, p);
		watch_tc(a, p);
		log_quiet_libs(false);
	}
}
