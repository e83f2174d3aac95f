// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Loading the fast path: the skeleton opened with our pin folder as its
 * pin root, so libbpf pins every map by name there (or reuses the pins an
 * earlier mrcd left: adoption), its maps sized for our limits first
 * (sizing.c), and the two programs pinned next to them.
 * What we pin and unpin is user/common/pins.c's list of the maps (checked
 * against the object at start-up) and the two programs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "common/pins.h"
#include "mrcd/mrcd.h"
#include "mrc.skel.h"

int make_pin_dir(struct agent *a)
{
	struct stat st;

	if (!mkdir(a->paths.pin_dir, 0700) ||
	    (errno == EEXIST && !lstat(a->paths.pin_dir, &st) &&
	     (S_ISDIR(st.st_mode) || S_ISLNK(st.st_mode)))) {
		/* Ours, or one only root may write in (checked, not followed). */
		if (check_private_dir("pin folder", a->paths.pin_dir, false))
			return -1;
		a->pin_dir_ours = true;
		return 0;
	}
	pr_err("cannot create pin folder %s: %s\n", a->paths.pin_dir,
	       errno == EEXIST ? "exists and is not a folder" : strerror(errno));
	return -1;
}

static int pin_path(char *buf, size_t len, const struct agent *a,
		    const char *name)
{
	int n = snprintf(buf, len, "%s/%s", a->paths.pin_dir, name);

	if (n < 0 || (size_t)n >= len) {
		pr_err("pin path too long: %s/%s\n", a->paths.pin_dir, name);
		return -ENAMETOOLONG;
	}
	return 0;
}

static void unpin(const struct agent *a, const char *name)
{
	char path[PATH_MAX];

	if (pin_path(path, sizeof(path), a, name))
		return;
	if (unlink(path) && errno != ENOENT)
		pr_err("cannot remove pin %s: %s\n", path, strerror(errno));
}

static bool pinned(const struct agent *a, const char *name)
{
	char path[PATH_MAX];

	return !pin_path(path, sizeof(path), a, name) && !access(path, F_OK);
}

/*
 * Remove every pin this agent owns: one per map of the pinned-map list
 * (the object's maps, see check_pin_list), and the two programs. Only
 * those names: the folder may hold other things (the lab pins its fabric
 * in a sub-folder of the default one).
 */
void unpin_all(const struct agent *a)
{
	for (unsigned int i = 0; i < MRC_PIN__COUNT; i++)
		unpin(a, mrc_pin_spec(i)->name);
	unpin(a, PROG_PIN_XDP);
	unpin(a, PROG_PIN_TC);
}

/* Pins of an earlier mrcd: any of our maps or programs. */
bool found_our_pins(const struct agent *a)
{
	for (unsigned int i = 0; i < MRC_PIN__COUNT; i++)
		if (pinned(a, mrc_pin_spec(i)->name))
			return true;
	return pinned(a, PROG_PIN_XDP) || pinned(a, PROG_PIN_TC);
}

/*
 * The maps libbpf pins for us (PIN_BY_NAME) must be the pinned-map list,
 * which is what we unpin and what every other program opens. Always so in
 * a consistent build (tests/bpf/test_pins_match.c checks it too).
 */
static int check_pin_list(struct mrc *skel)
{
	const struct bpf_map *map;
	unsigned int n = 0;

	bpf_object__for_each_map(map, skel->obj) {
		if (bpf_map__is_internal(map))
			continue;	/* .rodata, .bss: never pinned */
		n++;
		if (mrc_pin_by_name(bpf_map__name(map)) == MRC_PIN__COUNT) {
			pr_err("internal error: map %s of the BPF object is not in "
			       "the pinned-map list (user/common/pins.c)\n",
			       bpf_map__name(map));
			return -1;
		}
	}
	if (n != MRC_PIN__COUNT) {
		pr_err("internal error: the BPF object has %u maps, the pinned-map "
		       "list %d (user/common/pins.c)\n", n, MRC_PIN__COUNT);
		return -1;
	}
	return 0;
}

static int pin_program(const struct agent *a, struct bpf_program *prog,
		       const char *name)
{
	char path[PATH_MAX];
	int err;

	err = pin_path(path, sizeof(path), a, name);
	if (err)
		return err;
	/* An adopted pin names the old program: ours replaces it. */
	unpin(a, name);
	err = bpf_program__pin(prog, path);
	if (err)
		pr_err("pin %s: %s\n", path, strerror(-err));
	return err;
}

int load_fast_path(struct agent *a)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .pin_root_path = a->paths.pin_dir);
	int err;

	a->skel = mrc__open_opts(&opts);
	if (!a->skel) {
		pr_err("opening the BPF object failed: %s\n", strerror(errno));
		return -1;
	}
	if (check_pin_list(a->skel))
		return -1;
	/*
	 * Our pins hold live QPs: libbpf reuses every pinned map whose
	 * definition still matches (PIN_BY_NAME), so load on top of them.
	 */
	a->adopting = found_our_pins(a);
	if (a->adopting)
		pr_err("adopting the fast path left in %s (maps and QPs kept)\n",
		       a->paths.pin_dir);
	else
		unpin_all(a);
	/* Sized for --max-qps/--max-contexts, and the memory for that there. */
	if (size_maps(a, a->skel->obj) || (a->adopting && check_adopted_sizes(a)) ||
	    check_map_memory(a))
		return -1;
	err = mrc__load(a->skel);
	if (err) {
		pr_err("loading the BPF programs failed: %s%s\n", strerror(-err),
		       log_verbose() ? "" : " (-v shows libbpf's messages)");
		explain_load_failure(a, err);
		if (a->adopting)
			pr_err("the maps pinned in %s may be from an incompatible "
			       "mrcd: 'mrcd --detach --pin-dir %s' removes them "
			       "(and ends their QPs)\n", a->paths.pin_dir,
			       a->paths.pin_dir);
		return err;
	}
	return 0;
}

int configure_fast_path(const struct agent *a)
{
	int err = write_config(a);

	if (!err)
		err = pin_program(a, a->skel->progs.mrc_xdp_rx, PROG_PIN_XDP);
	if (!err)
		err = pin_program(a, a->skel->progs.mrc_tc_tx, PROG_PIN_TC);
	return err;
}
