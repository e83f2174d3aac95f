// SPDX-License-Identifier: GPL-2.0
/*
 * The libmrc tests' environment and main(); the tests register themselves
 * (TEST_CASE) in the other files of this folder.
 *
 * Isolation: main() first moves the process into a network namespace of
 * its own (unshare(CLONE_NEWNET)), brings its `lo` up and adds
 * 198.18.200.1/32 and fd00:200::1/128 to it, so the traffic, the XDP and
 * TC attachments and the listening sockets touch nothing of the host or
 * of the labs. The maps are pinned in /sys/fs/bpf/mrc-libtest-<pid>
 * (bpffs is a mount, not bound to a netns), never the /sys/fs/bpf/mrc of a
 * running mrcd; the folder is emptied and removed at exit, also after a
 * failure or a signal. The context is opened on that folder; the plane
 * table says plane 1 is `lo`, so mrc_local_addrs() sees lo's addresses.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libmrc_test.h"
#include "pindir.h"

TEST_STATE_DEFINE;

struct mrc *lm_skel;
char pin_dir[64];
int lm_ncpus;
int lm_lo_ifindex;
struct mrc_context *ctx;

static bool xdp_attached, tc_attached;

/* ====================================================================== */
/* Setup and cleanup                                                      */
/* ====================================================================== */

static void remove_pin_dir(void)
{
	pin_dir_remove(pin_dir, sizeof(pin_dir));
}

static void cleanup(void)
{
	if (ctx) {
		mrc_close(ctx);
		ctx = NULL;
	}
	if (tc_attached) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = lm_lo_ifindex,
			    .attach_point = BPF_TC_EGRESS);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1);

		bpf_tc_detach(&hook, &opts);
		tc_attached = false;
	}
	if (xdp_attached) {
		bpf_xdp_detach(lm_lo_ifindex, XDP_FLAGS_SKB_MODE, NULL);
		xdp_attached = false;
	}
	if (lm_skel) {
		struct bpf_map *map;

		bpf_object__for_each_map(map, lm_skel->obj)
			if (bpf_map__is_pinned(map))
				bpf_map__unpin(map, NULL);
		mrc__destroy(lm_skel);
		lm_skel = NULL;
	}
	remove_pin_dir();
}

/*
 * On a signal only the pins matter (the netns, its attachments and the
 * maps' last references go with the process).
 */
static void on_signal(int sig)
{
	remove_pin_dir();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr))
		err = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(fd, SIOCSIFFLAGS, &ifr))
		err = -errno;
	close(fd);
	return err;
}

static int setup(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = pin_dir);
	int err, sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV,
			    SIGBUS, SIGFPE, SIGILL };

	/* A network of our own before anything is loaded or opened. */
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "unshare(CLONE_NEWNET): %s (root?)\n", strerror(errno));
		return -1;
	}
	err = lo_up();
	if (err) {
		fprintf(stderr, "bringing lo up: %s\n", strerror(-err));
		return -1;
	}
	if (system("ip addr add " LOCAL4 "/32 dev lo && "
		   "ip -6 addr add " LOCAL6 "/128 dev lo nodad")) {
		fprintf(stderr, "adding addresses to lo failed\n");
		return -1;
	}
	lm_lo_ifindex = (int)if_nametoindex("lo");
	if (!lm_lo_ifindex) {
		fprintf(stderr, "no lo: %s\n", strerror(errno));
		return -1;
	}

	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	lm_ncpus = libbpf_num_possible_cpus();
	if (lm_ncpus <= 0) {
		fprintf(stderr, "libbpf_num_possible_cpus: %d\n", lm_ncpus);
		return -1;
	}
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/mrc-libtest-%d", (int)getpid());
	if (mkdir(pin_dir, 0700)) {
		fprintf(stderr, "mkdir %s: %s (bpffs mounted? root?)\n", pin_dir,
			strerror(errno));
		pin_dir[0] = 0;
		return -1;
	}
	atexit(cleanup);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
	signal(SIGPIPE, SIG_IGN);

	lm_skel = mrc__open_opts(&oo);
	if (!lm_skel) {
		fprintf(stderr, "opening mrc: %s\n", strerror(errno));
		return -1;
	}
	err = mrc__load(lm_skel);
	if (err) {
		fprintf(stderr, "loading mrc: %s (run as root)\n", strerror(-err));
		return -1;
	}
	/* What mrcd writes at start: libmrc refuses maps of another ABI. */
	{
		struct mrc_global_cfg cfg = { .abi_version = MRC_ABI_VERSION };
		__u32 key = 0;

		err = bpf_map_update_elem(bpf_map__fd(lm_skel->maps.mrc_cfg), &key,
					  &cfg, BPF_ANY);
		if (err) {
			fprintf(stderr, "writing mrc_cfg: %s\n", strerror(errno));
			return -1;
		}
	}

	err = bpf_xdp_attach(lm_lo_ifindex, bpf_program__fd(lm_skel->progs.mrc_xdp_rx),
			     XDP_FLAGS_SKB_MODE, NULL);
	if (err) {
		fprintf(stderr, "attaching XDP to lo: %s\n", strerror(-err));
		return -1;
	}
	xdp_attached = true;
	{
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = lm_lo_ifindex,
			    .attach_point = BPF_TC_EGRESS);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1,
			    .prog_fd = bpf_program__fd(lm_skel->progs.mrc_tc_tx));

		err = bpf_tc_hook_create(&hook);
		if (err && err != -EEXIST) {
			fprintf(stderr, "clsact on lo: %s\n", strerror(-err));
			return -1;
		}
		err = bpf_tc_attach(&hook, &opts);
		if (err) {
			fprintf(stderr, "attaching TC to lo: %s\n", strerror(-err));
			return -1;
		}
		tc_attached = true;
	}
	err = lm_set_plane(0, (uint32_t)lm_lo_ifindex, "lo");
	if (err) {
		fprintf(stderr, "writing mrc_planes: %s\n", strerror(-err));
		return -1;
	}
	ctx = mrc_open(&(struct mrc_context_attr){ .pin_dir = pin_dir });
	if (!ctx) {
		fprintf(stderr, "mrc_open(%s): %s\n", pin_dir, strerror(errno));
		return -1;
	}
	return 0;
}

int main(void)
{
	if (setup()) {
		printf("[libmrc.setup] FAIL\n");
		cleanup();
		return 1;
	}
	RUN_REGISTERED_TESTS();
	cleanup();
	return TEST_EXIT();
}
