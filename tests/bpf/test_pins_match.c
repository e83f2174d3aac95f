// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The pinned-map list of user/common/pins.c against the real object: every
 * map of bpf/mrc.bpf.c is listed, and each loaded map passes the shape
 * check that libmrc, mrcd, mrcctl and doctor apply to the pins. A map
 * added to or changed in the BPF program without the list fails here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include <sys/stat.h>
#include <unistd.h>

#include "common/pins.h"
#include "mrc.skel.h"
#include "pindir.h"
#include "test.h"

TEST_STATE_DEFINE;

static struct mrc *skel;
static char pin_dir[64];

TEST_CASE(test_every_map_listed, "pins.every_map_of_the_object_listed")
{
	struct bpf_map *map;
	unsigned int n = 0;

	bpf_object__for_each_map(map, skel->obj) {
		const char *name = bpf_map__name(map);

		/* .rodata, .bss (libbpf names them "mrc.rodata"...): never pinned */
		if (bpf_map__is_internal(map))
			continue;
		n++;
		if (!ASSERT_TRUE(mrc_pin_by_name(name) != MRC_PIN__COUNT, name))
			fprintf(stderr, "  map %s is not in user/common/pins.c\n", name);
	}
	ASSERT_EQ(n, MRC_PIN__COUNT, "as many maps as the list");
}

TEST_CASE(test_every_listed_map_matches, "pins.every_listed_map_matches")
{
	for (unsigned int i = 0; i < MRC_PIN__COUNT; i++) {
		const char *name = mrc_pin_spec(i)->name;
		struct bpf_map *map = bpf_object__find_map_by_name(skel->obj, name);
		char err[256] = "";

		if (!ASSERT_TRUE(map != NULL, name))
			continue;
		ASSERT_EQ(mrc_pin_check(bpf_map__fd(map), i, "(loaded)", err, sizeof(err)),
			  0, err[0] ? err : name);
	}
}

int main(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = pin_dir);
	int err;

	/* A private pin folder: never the bpffs root, never a running mrcd's. */
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/mrc-test-pinsm-%d", (int)getpid());
	if (mkdir(pin_dir, 0700)) {
		fprintf(stderr, "mkdir %s: %s\n", pin_dir, strerror(errno));
		printf("[pins.load] FAIL\n");
		return 1;
	}
	skel = mrc__open_opts(&oo);
	err = skel ? mrc__load(skel) : -errno;
	if (err) {
		fprintf(stderr, "loading mrc: %s (run as root)\n", strerror(-err));
		printf("[pins.load] FAIL\n");
	} else {
		RUN_REGISTERED_TESTS();
	}
	mrc__destroy(skel);
	pin_dir_remove(pin_dir, sizeof(pin_dir));
	return err ? 1 : TEST_EXIT();
}
