// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrcd's programs on the planes: XDP through libxdp (its dispatcher when
 * the kernel can run it) or directly, TC on the clsact egress hook, the
 * swap in place of an earlier agent's programs (adoption), and detaching
 * exactly what we attached.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "mrcd/mrcd.h"
#include "mrc.skel.h"

/*
 * libxdp's older calls return NULL or an error pointer; libxdp_get_error()
 * alone would call NULL a success when errno happens to be 0.
 */
static long libxdp_ptr_error(const void *ptr)
{
	return ptr ? libxdp_get_error(ptr) : -ENOENT;
}

/* ---- XDP -------------------------------------------------------------- */

static __u32 xdp_flags_for(enum xdp_attach_mode mode)
{
	return mode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
}

const char *mode_name(enum xdp_attach_mode mode)
{
	switch (mode) {
	case XDP_MODE_NATIVE:
		return "native";
	case XDP_MODE_SKB:
		return "skb";
	case XDP_MODE_HW:
		return "hw";
	default:
		return "unknown";
	}
}

static bool is_our_xdp_program(const struct xdp_program *prog)
{
	const char *name = prog ? xdp_program__name(prog) : NULL;

	return name && !strcmp(name, "mrc_xdp_rx");
}

/*
 * A crashed agent's XDP program stays attached (libxdp pins dispatcher
 * links; a direct attachment belongs to the device), still working on the
 * old maps. Take every mrc_xdp_rx off the plane before attaching ours.
 */
static void remove_stale_xdp(const struct plane *p)
{
	struct xdp_program *stale[16], *prog = NULL;
	struct xdp_multiprog *mp;
	size_t n = 0;
	int err = 0;

	mp = xdp_multiprog__get_from_ifindex(p->ifindex);
	if (libxdp_ptr_error(mp))
		return;		/* nothing attached */
	if (xdp_multiprog__is_legacy(mp)) {
		if (is_our_xdp_program(xdp_multiprog__main_prog(mp))) {
			n = 1;
			err = xdp_multiprog__detach(mp);
		}
	} else {
		while ((prog = xdp_multiprog__next_prog(prog, mp)) &&
		       n < sizeof(stale) / sizeof(stale[0]))
			if (is_our_xdp_program(prog))
				stale[n++] = prog;
		if (n)
			err = xdp_program__detach_multi(stale, n, p->ifindex,
							XDP_MODE_UNSPEC, 0);
	}
	if (n)
		pr_err("%s: %s %zu XDP program(s) left by an earlier mrcd%s%s\n",
		       p->name, err ? "could not remove" : "removed", n,
		       err ? ": " : "", err ? strerror(-err) : "");
	xdp_multiprog__close(mp);
}

/*
 * libxdp falls back to attaching the program alone when the kernel cannot
 * run its dispatcher (freplace programs); then it is exclusive again.
 */
static bool has_dispatcher(int ifindex)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	bool legacy;

	if (libxdp_ptr_error(mp))
		return false;
	legacy = xdp_multiprog__is_legacy(mp);
	xdp_multiprog__close(mp);
	return !legacy;
}

/*
 * Each plane gets its own copy of the object, because a libxdp program is
 * loaded as an extension of that device's dispatcher. The copy's maps are
 * the pinned ones (same pin_root_path), so all planes share one state.
 */
static int attach_xdp_libxdp(const struct agent *a, struct plane *p,
			     enum xdp_attach_mode mode)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = a->paths.pin_dir,
		    .object_name = "mrc");
	struct bpf_program *bpf_prog;
	struct xdp_program *prog;
	struct bpf_object *obj;
	const void *elf;
	size_t size;
	int err;

	elf = mrc__elf_bytes(&size);
	obj = bpf_object__open_mem(elf, size, &opts);
	if (!obj)
		return -errno;
	/* Sized as the skeleton's, or libbpf would refuse the pinned maps. */
	err = size_maps(a, obj);
	if (err) {
		bpf_object__close(obj);
		return err;
	}
	/* libxdp loads the whole object; the TC program is not wanted here. */
	bpf_object__for_each_program(bpf_prog, obj)
		if (bpf_program__type(bpf_prog) != BPF_PROG_TYPE_XDP)
			bpf_program__set_autoload(bpf_prog, false);
	prog = xdp_program__from_bpf_obj(obj, XDP_SECTION);
	err = (int)libxdp_ptr_error(prog);
	if (!err) {
		err = xdp_program__attach(prog, p->ifindex, mode, 0);
		if (err)
			xdp_program__close(prog);
	}
	if (err) {
		bpf_object__close(obj);
		return err;
	}
	p->xdp_via = XDP_VIA_LIBXDP;
	p->xdp_prog = prog;
	p->xdp_obj = obj;
	p->xdp_mode = xdp_program__is_attached(prog, p->ifindex);
	if (p->xdp_mode == XDP_MODE_UNSPEC)
		p->xdp_mode = mode;
	p->xdp_dispatcher = has_dispatcher(p->ifindex);
	return 0;
}

/* Without libxdp: the skeleton's program, never replacing someone else's. */
static int attach_xdp_netlink(const struct agent *a, struct plane *p,
			      enum xdp_attach_mode mode)
{
	__u32 flags = mode == XDP_MODE_SKB ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
	int fd = bpf_program__fd(a->skel->progs.mrc_xdp_rx);
	int err;

	err = bpf_xdp_attach(p->ifindex, fd, flags | XDP_FLAGS_UPDATE_IF_NOEXIST, NULL);
	if (err)
		return err;
	p->xdp_via = XDP_VIA_NETLINK;
	p->xdp_mode = mode;
	p->xdp_flags = flags;
	return 0;
}

int attach_xdp(const struct agent *a, struct plane *p)
{
	static const enum xdp_attach_mode auto_modes[] = { XDP_MODE_NATIVE, XDP_MODE_SKB };
	static const enum xdp_attach_mode native[] = { XDP_MODE_NATIVE };
	static const enum xdp_attach_mode skb[] = { XDP_MODE_SKB };
	const enum xdp_attach_mode *modes = auto_modes;
	size_t n = 2, i;
	int err = 0;

	if (a->opt.xdp_choice == XDP_CHOICE_NATIVE)
		modes = native, n = 1;
	else if (a->opt.xdp_choice == XDP_CHOICE_SKB)
		modes = skb, n = 1;

	/* Native fails on many devices (e.g. veth with a jumbo MTU): quiet. */
	log_quiet_libs(true);
	for (i = 0; i < n; i++) {
		err = attach_xdp_libxdp(a, p, modes[i]);
		if (!err)
			break;
		pr_info("%s: libxdp %s attach: %s\n", p->name, mode_name(modes[i]),
			strerror(-err));
	}
	if (err) {
		pr_err("%s: libxdp could not attach (%s); attaching mrc_xdp_rx "
		       "directly, without the dispatcher\n", p->name, strerror(-err));
		for (i = 0; i < n; i++) {
			log_quiet_libs(i + 1 < n);
			err = attach_xdp_netlink(a, p, modes[i]);
			if (!err)
				break;
			pr_info("%s: direct %s attach: %s\n", p->name,
				mode_name(modes[i]), strerror(-err));
		}
	}
	log_quiet_libs(false);
	if (err) {
		pr_err("%s: cannot attach the XDP program: %s\n", p->name, strerror(-err));
		return err;
	}
	pr_info("%s: XDP attached in %s mode (%s)\n", p->name, mode_name(p->xdp_mode),
		p->xdp_via != XDP_VIA_LIBXDP ? "direct, without libxdp" :
		p->xdp_dispatcher ? "libxdp dispatcher" :
		"libxdp, alone: no dispatcher support");
	return 0;
}

/* ---- programs attached by xdp-loader, ip or tc: adopted ----------------- */

__u32 prog_id_of_fd(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len) ? info.id : 0;
}

/*
 * Is the program with this id ours: the same code as ours (name and tag;
 * the tag leaves out map references) working on our maps (it uses the
 * pinned mrc_cfg)? Then whoever loaded it - xdp-loader, ip, tc, an earlier
 * mrcd of this build - it does exactly what ours would.
 */
static bool is_same_program(const struct agent *a, int our_fd, __u32 id)
{
	struct bpf_prog_info ours = {}, theirs = {};
	struct bpf_map_info cfg = {};
	__u32 len = sizeof(ours), map_ids[64], i;
	bool same = false;
	int fd;

	if (!id || bpf_obj_get_info_by_fd(our_fd, &ours, &len))
		return false;
	len = sizeof(cfg);
	if (bpf_obj_get_info_by_fd(bpf_map__fd(a->skel->maps.mrc_cfg), &cfg, &len))
		return false;
	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0)
		return false;
	theirs.nr_map_ids = sizeof(map_ids) / sizeof(map_ids[0]);
	theirs.map_ids = (__u64)(unsigned long)map_ids;
	len = sizeof(theirs);
	if (!bpf_obj_get_info_by_fd(fd, &theirs, &len) &&
	    !strcmp(theirs.name, ours.name) && !memcmp(theirs.tag, ours.tag, sizeof(ours.tag)))
		for (i = 0; i < theirs.nr_map_ids && i < 64 && !same; i++)
			same = map_ids[i] == cfg.id;
	close(fd);
	return same;
}

/*
 * Our XDP program attached alone (not by a dispatcher) before we started:
 * keep it, so an operator's `xdp-loader load` or `ip link set ... xdp`
 * stays what runs. True when adopted.
 */
static bool adopt_attached_xdp(const struct agent *a, struct plane *p)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);
	int fd;

	if (bpf_xdp_query(p->ifindex, 0, &q) || q.attach_mode == XDP_ATTACHED_MULTI ||
	    q.attach_mode == XDP_ATTACHED_HW ||
	    !is_same_program(a, bpf_program__fd(a->skel->progs.mrc_xdp_rx), q.prog_id))
		return false;
	fd = bpf_prog_get_fd_by_id(q.prog_id);
	if (fd < 0)
		return false;
	p->xdp_via = XDP_VIA_ADOPTED;
	p->xdp_adopted_fd = fd;
	p->xdp_mode = q.attach_mode == XDP_ATTACHED_SKB ? XDP_MODE_SKB : XDP_MODE_NATIVE;
	p->xdp_flags = xdp_flags_for(p->xdp_mode);
	pr_err("%s: adopted the XDP program attached before mrcd started "
	       "(mrc_xdp_rx id %u, %s mode, on our maps): kept, not replaced\n",
	       p->name, q.prog_id, mode_name(p->xdp_mode));
	return true;
}

/* Our TC filter (our handle and priority) already there, running ours. */
static bool adopt_attached_tc(const struct agent *a, struct plane *p)
{
	__u32 id = tc_prog_id(p->ifindex);

	if (!is_same_program(a, bpf_program__fd(a->skel->progs.mrc_tc_tx), id))
		return false;
	p->tc_attached = true;
	p->tc_adopted = true;
	p->tc_prog_id = id;
	pr_err("%s: adopted the TC egress filter attached before mrcd started "
	       "(mrc_tc_tx id %u, handle 0x%x prio 0x%x): kept, not replaced\n",
	       p->name, id, MRCD_TC_HANDLE, MRCD_TC_PRIO);
	return true;
}

bool plane_exists(const struct plane *p)
{
	char name[IF_NAMESIZE];

	return if_indextoname((unsigned int)p->ifindex, name) != NULL;
}

static void detach_xdp(const struct agent *a, struct plane *p)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts);
	bool present = plane_exists(p);
	int err = 0;

	if (p->xdp_via == XDP_VIA_LIBXDP && present && !p->xdp_missing)
		err = xdp_program__detach(p->xdp_prog, p->ifindex, p->xdp_mode, 0);
	else if ((p->xdp_via == XDP_VIA_NETLINK || p->xdp_via == XDP_VIA_ADOPTED) &&
		 present && !p->xdp_missing) {
		/* REPLACE with our fd: detach only if it is still ours. */
		opts.old_prog_fd = p->xdp_via == XDP_VIA_ADOPTED ? p->xdp_adopted_fd :
				   bpf_program__fd(a->skel->progs.mrc_xdp_rx);
		err = bpf_xdp_detach(p->ifindex, p->xdp_flags | XDP_FLAGS_REPLACE, &opts);
	}
	if (err)
		pr_err("%s: detaching XDP: %s\n", p->name, strerror(-err));
	forget_xdp(p);
}

/* Let go of our handles on the plane's XDP program (it is not detached). */
void forget_xdp(struct plane *p)
{
	xdp_program__close(p->xdp_prog);
	bpf_object__close(p->xdp_obj);
	if (p->xdp_adopted_fd > 0)
		close(p->xdp_adopted_fd);
	p->xdp_adopted_fd = 0;
	p->xdp_prog = NULL;
	p->xdp_obj = NULL;
	p->xdp_via = XDP_VIA_NONE;
}

/* The id of the XDP program that should be running on the plane, 0 = none. */
__u32 expected_xdp_id(const struct agent *a, const struct plane *p)
{
	switch (p->xdp_via) {
	case XDP_VIA_LIBXDP:
		return xdp_program__id(p->xdp_prog);
	case XDP_VIA_NETLINK:
		return prog_id_of_fd(bpf_program__fd(a->skel->progs.mrc_xdp_rx));
	case XDP_VIA_ADOPTED:
		return prog_id_of_fd(p->xdp_adopted_fd);
	default:
		return 0;
	}
}

/* ---- TC --------------------------------------------------------------- */

int attach_tc(const struct agent *a, struct plane *p)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = p->ifindex,
		    .attach_point = BPF_TC_EGRESS);
	/* REPLACE: a crashed agent's filter is overwritten, not doubled. */
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = MRCD_TC_HANDLE,
		    .priority = MRCD_TC_PRIO, .flags = BPF_TC_F_REPLACE,
		    .prog_fd = bpf_program__fd(a->skel->progs.mrc_tc_tx));
	int err;

	/* clsact is often there already; libbpf would warn about that. */
	log_quiet_libs(true);
	err = bpf_tc_hook_create(&hook);
	log_quiet_libs(false);
	if (err && err != -EEXIST) {
		pr_err("%s: cannot add a clsact qdisc: %s\n", p->name, strerror(-err));
		return err;
	}
	err = bpf_tc_attach(&hook, &opts);
	if (err) {
		pr_err("%s: cannot attach the TC egress program: %s\n", p->name,
		       strerror(-err));
		return err;
	}
	p->tc_attached = true;
	p->tc_adopted = false;
	p->tc_prog_id = prog_id_of_fd(opts.prog_fd);
	pr_info("%s: TC egress filter handle 0x%x prio 0x%x\n", p->name,
		MRCD_TC_HANDLE, MRCD_TC_PRIO);
	return 0;
}

/* Our filter (by handle and priority) off a device's egress hook. */
static int remove_tc_filter(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = MRCD_TC_HANDLE,
		    .priority = MRCD_TC_PRIO);
	int err;

	/* No clsact, or no filter of ours: nothing to do, nothing to say. */
	log_quiet_libs(true);
	err = bpf_tc_detach(&hook, &opts);
	log_quiet_libs(false);
	return err == -ENOENT || err == -EINVAL ? 0 : err;
}

/*
 * Only our filter goes; the clsact qdisc stays, since other filters may
 * hang off it (and an empty clsact costs nothing).
 */
static void detach_tc(struct plane *p)
{
	int err;

	if (!p->tc_attached)
		return;
	p->tc_attached = false;
	if (!plane_exists(p))
		return;
	err = remove_tc_filter(p->ifindex);
	if (err)
		pr_err("%s: detaching TC: %s\n", p->name, strerror(-err));
}

/* The id of the program our TC filter runs on a device; 0 = none. */
__u32 tc_prog_id(int ifindex)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = MRCD_TC_HANDLE,
		    .priority = MRCD_TC_PRIO);

	log_quiet_libs(true);
	if (bpf_tc_query(&hook, &opts))
		opts.prog_id = 0;
	log_quiet_libs(false);
	return opts.prog_id;
}

/* ---- adopting what an earlier mrcd attached ---------------------------- */

/*
 * One program owns the device (attached alone, by libxdp or directly):
 * REPLACE naming the old program swaps them in one step, and fails
 * rather than replace a program that is not the one we saw.
 */
static int replace_xdp_alone(const struct agent *a, struct plane *p,
			     const struct xdp_program *old,
			     enum xdp_attach_mode mode)
{
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts, .old_prog_fd = xdp_program__fd(old));
	int fd = bpf_program__fd(a->skel->progs.mrc_xdp_rx);
	__u32 flags = xdp_flags_for(mode);
	int err;

	err = bpf_xdp_attach(p->ifindex, fd, flags | XDP_FLAGS_REPLACE, &opts);
	if (err)
		return err;
	p->xdp_via = XDP_VIA_NETLINK;
	p->xdp_mode = mode;
	p->xdp_flags = flags;
	return 0;
}

/* Take the programs with these ids out of the device's dispatcher. */
static int remove_xdp_by_id(const struct plane *p, const __u32 *ids, size_t n_ids)
{
	struct xdp_program *victims[16], *prog = NULL;
	struct xdp_multiprog *mp;
	size_t n = 0, i;
	int err = 0;

	mp = xdp_multiprog__get_from_ifindex(p->ifindex);
	if (libxdp_ptr_error(mp))
		return -ENOENT;
	while ((prog = xdp_multiprog__next_prog(prog, mp)) &&
	       n < sizeof(victims) / sizeof(victims[0]))
		for (i = 0; i < n_ids; i++)
			if (xdp_program__id(prog) == ids[i])
				victims[n++] = prog;
	if (n)
		err = xdp_program__detach_multi(victims, n, p->ifindex,
						XDP_MODE_UNSPEC, 0);
	xdp_multiprog__close(mp);
	return err;
}

/*
 * In a libxdp dispatcher: add ours (libxdp swaps in a new dispatcher
 * that runs both, atomically), then take the old one out (another atomic
 * swap). In between both run in turn; the first consumes MRC control
 * packets and steers data to its socket port, so the second finds nothing
 * of ours left to act on.
 */
static int replace_xdp_dispatched(const struct agent *a, struct plane *p,
				  const __u32 *old_ids, size_t n_old,
				  enum xdp_attach_mode mode)
{
	int err = attach_xdp_libxdp(a, p, mode);

	if (err)
		return err;
	err = remove_xdp_by_id(p, old_ids, n_old);
	if (err)
		pr_err("%s: the earlier mrc_xdp_rx stays next to ours: %s\n",
		       p->name, strerror(-err));
	return 0;
}

/*
 * Swap our XDP program in for the earlier agent's on this plane. 1 when
 * swapped, 0 when there was none of ours to swap, or a negative errno.
 */
static int adopt_xdp(const struct agent *a, struct plane *p)
{
	struct xdp_program *prog = NULL, *main_prog;
	struct xdp_multiprog *mp;
	enum xdp_attach_mode mode;
	__u32 old_ids[16];
	size_t n = 0;
	int err = 0;

	mp = xdp_multiprog__get_from_ifindex(p->ifindex);
	if (libxdp_ptr_error(mp))
		return 0;	/* nothing attached */
	mode = xdp_multiprog__attach_mode(mp);
	if (xdp_multiprog__is_legacy(mp)) {
		main_prog = xdp_multiprog__main_prog(mp);
		if (is_our_xdp_program(main_prog)) {
			n = 1;
			err = replace_xdp_alone(a, p, main_prog, mode);
		}
		xdp_multiprog__close(mp);
	} else {
		while ((prog = xdp_multiprog__next_prog(prog, mp)) &&
		       n < sizeof(old_ids) / sizeof(old_ids[0]))
			if (is_our_xdp_program(prog))
				old_ids[n++] = xdp_program__id(prog);
		xdp_multiprog__close(mp);
		if (n)
			err = replace_xdp_dispatched(a, p, old_ids, n, mode);
	}
	if (err)
		return err;
	if (n)
		pr_info("%s: XDP program replaced in place (%s mode)\n", p->name,
			mode_name(p->xdp_mode));
	return n ? 1 : 0;
}

/*
 * Take our programs off a plane an earlier agent recorded in its table.
 * False when the device is gone (or its index now names another one).
 */
bool remove_plane_leftovers(const struct mrc_plane *old)
{
	struct plane p = { .ifindex = (int)old->ifindex };
	char name[IF_NAMESIZE];
	int err;

	snprintf(p.name, sizeof(p.name), "%.*s", (int)sizeof(old->name), old->name);
	if (!if_indextoname(old->ifindex, name) || strcmp(name, p.name))
		return false;
	remove_stale_xdp(&p);
	err = remove_tc_filter(p.ifindex);
	if (err)
		pr_err("%s: removing the earlier TC filter: %s\n", p.name, strerror(-err));
	return true;
}

/*
 * A plane of the adopted table we no longer serve (a restart with other
 * --planes): its old programs would go on working on our maps.
 */
static void retire_plane(const struct mrc_plane *old)
{
	if (remove_plane_leftovers(old))
		pr_err("%.*s is no longer a plane: detached the earlier agent's programs\n",
		       (int)sizeof(old->name), old->name);
}

/* ---- life cycle ------------------------------------------------------- */

static int attach_plane_xdp(const struct agent *a, struct plane *p)
{
	int rc;

	if (adopt_attached_xdp(a, p))
		return 0;
	if (!a->adopting) {
		remove_stale_xdp(p);
		return attach_xdp(a, p);
	}
	rc = adopt_xdp(a, p);
	if (rc > 0)
		return 0;
	if (rc < 0) {
		/* A gap of a few ms beats an agent that cannot start. */
		pr_err("%s: cannot swap the XDP program in place (%s): replacing it\n",
		       p->name, strerror(-rc));
		remove_stale_xdp(p);
	}
	return attach_xdp(a, p);
}

int attach_planes(struct agent *a)
{
	struct mrc_plane old[MRC_MAX_PLANES_ABI];
	int i, n_old = 0;

	if (a->adopting)
		n_old = read_old_planes(a, old);
	for (i = 0; i < a->n_planes; i++) {
		struct plane *p = &a->planes[i];

		if (attach_plane_xdp(a, p) ||
		    (!adopt_attached_tc(a, p) && attach_tc(a, p)))
			return -1;
	}
	for (i = 0; i < n_old; i++)
		if (!is_our_ifindex(a, old[i].ifindex))
			retire_plane(&old[i]);
	return 0;
}

void detach_planes(struct agent *a)
{
	struct plane *p;
	int i;

	for (i = 0; i < a->n_planes; i++) {
		p = &a->planes[i];
		if (!plane_exists(p) && (p->tc_attached || p->xdp_via != XDP_VIA_NONE))
			pr_err("%s is gone; nothing to detach there\n", p->name);
		detach_tc(p);
		detach_xdp(a, p);
	}
}
