// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of user/common/pins.c: a pinned map of the wrong shape, or
 * an mrc_cfg from another ABI version, is refused with a message that
 * names it; the right ones open. Maps are created here (bpf_map_create)
 * and pinned in a private folder of the bpffs: no program, no mrcd.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "common/pins.h"
#include "fake_host.h"
#include "mrc/abi.h"
#include "pindir.h"
#include "test.h"

TEST_STATE_DEFINE;

static char dir[64];

/*
 * Create and pin a map of spec's shape, with value_size changed by delta
 * and sized for max_qps QPs and max_ctx contexts where it scales.
 */
static int pin_sized(enum mrc_pin id, int value_delta, uint32_t max_qps,
		     uint32_t max_ctx)
{
	const struct mrc_pin_spec *s = mrc_pin_spec(id);
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = s->flags);
	char path[128];
	int fd, rc;

	if (s->inner_value_size) {	/* a map of state maps: like fake_host's */
		fd = value_delta ? -EINVAL : fake_map(s, max_qps, max_ctx);
		if (fd < 0)
			return fd;
	} else {
		fd = bpf_map_create(s->type, s->name, s->key_size,
				    s->value_size + value_delta,
				    mrc_pin_entries(s, max_qps, max_ctx), &o);
		if (fd < 0)
			return -errno;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, s->name);
	unlink(path);
	rc = bpf_obj_pin(fd, path) ? -errno : 0;
	close(fd);
	return rc;
}

static int pin_like(enum mrc_pin id, int value_delta)
{
	return pin_sized(id, value_delta, MRC_MAX_QPS, MRC_MAX_CTX);
}

static int set_abi_version(__u32 version)
{
	struct mrc_global_cfg cfg = { .abi_version = version };
	char err[256];
	__u32 key = 0;
	int fd = mrc_pin_open(dir, MRC_PIN_CFG, err, sizeof(err)), rc;

	if (fd < 0)
		return fd;
	rc = bpf_map_update_elem(fd, &key, &cfg, BPF_ANY) ? -errno : 0;
	close(fd);
	return rc;
}

TEST_CASE(test_spec_names_unique, "pins.spec_names_unique")
{
	for (unsigned int i = 0; i < MRC_PIN__COUNT; i++) {
		ASSERT_TRUE(mrc_pin_spec(i) && mrc_pin_spec(i)->name, "named");
		ASSERT_EQ(mrc_pin_by_name(mrc_pin_spec(i)->name), i, "found by name");
	}
	ASSERT_EQ(mrc_pin_by_name("mrc_nothing"), MRC_PIN__COUNT, "unknown name");
}

TEST_CASE(test_missing_map_says_mrcd, "pins.missing_map_names_mrcd")
{
	char err[256] = "";
	int fd = mrc_pin_open(dir, MRC_PIN_TX, err, sizeof(err));

	ASSERT_EQ(fd, -ENOENT, "missing map");
	ASSERT_TRUE(strstr(err, "mrc_tx") && strstr(err, "is mrcd running?"), err);
}

TEST_CASE(test_wrong_value_size_refused, "pins.wrong_value_size_refused")
{
	char err[256] = "";
	int fd;

	ASSERT_EQ(pin_like(MRC_PIN_REV_EVS, 64), 0, "pin a bigger mrc_rev_evs");
	fd = mrc_pin_open(dir, MRC_PIN_REV_EVS, err, sizeof(err));
	ASSERT_EQ(fd, -EPROTO, "refused");
	ASSERT_TRUE(strstr(err, "value size") && strstr(err, "different builds"), err);
	ASSERT_EQ(pin_like(MRC_PIN_REV_EVS, 0), 0, "pin the right mrc_rev_evs");
	fd = mrc_pin_open(dir, MRC_PIN_REV_EVS, err, sizeof(err));
	ASSERT_TRUE(fd >= 0, "right shape opens");
	if (fd >= 0)
		close(fd);
}

/*
 * ABI 6 had each QP's state in one mmapable array of all QPs; an mrcd of
 * that build left such an mrc_tx: refused by its type, with what to do.
 */
TEST_CASE(test_whole_state_array_refused, "pins.abi6_state_array_refused")
{
	const struct mrc_pin_spec *s = mrc_pin_spec(MRC_PIN_TX);
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);
	char err[256] = "", path[128];
	int fd;

	ASSERT_TRUE(s->inner_value_size == sizeof(struct mrc_tx_state),
		    "mrc_tx's inner maps hold a mrc_tx_state");
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, s->name, sizeof(__u32),
			    sizeof(struct mrc_tx_state), MRC_MAX_QPS, &o);
	ASSERT_TRUE(fd >= 0, "create an ABI 6 mrc_tx");
	if (fd < 0)
		return;
	snprintf(path, sizeof(path), "%s/%s", dir, s->name);
	unlink(path);
	ASSERT_EQ(bpf_obj_pin(fd, path), 0, "pin it");
	close(fd);
	fd = mrc_pin_open(dir, MRC_PIN_TX, err, sizeof(err));
	ASSERT_EQ(fd, -EPROTO, "refused");
	ASSERT_TRUE(strstr(err, "map type") && strstr(err, "restart mrcd"), err);
	ASSERT_EQ(pin_like(MRC_PIN_TX, 0), 0, "pin this build's mrc_tx");
	fd = mrc_pin_open(dir, MRC_PIN_TX, err, sizeof(err));
	ASSERT_TRUE(fd >= 0, "right shape opens");
	if (fd >= 0)
		close(fd);
}

TEST_CASE(test_abi_version_checked, "pins.abi_version_checked")
{
	const enum mrc_pin which[] = { MRC_PIN_TX };
	struct mrc_pins p;
	char err[256] = "";

	ASSERT_EQ(pin_like(MRC_PIN_CFG, 0), 0, "pin mrc_cfg");
	ASSERT_EQ(pin_like(MRC_PIN_QPS, 0), 0, "pin mrc_qps");
	ASSERT_EQ(pin_like(MRC_PIN_CTX_OWNER, 0), 0, "pin mrc_ctx_owner");
	ASSERT_EQ(pin_like(MRC_PIN_TX, 0), 0, "pin mrc_tx");
	ASSERT_EQ(mrc_pins_open(&p, dir, which, 1, err, sizeof(err)), -ENODATA,
		  "unconfigured");
	ASSERT_TRUE(strstr(err, "not configured") != NULL, err);
	ASSERT_EQ(p.fd[MRC_PIN_CFG], -1, "nothing left open");
	ASSERT_EQ(set_abi_version(MRC_ABI_VERSION + 1), 0, "newer version");
	ASSERT_EQ(mrc_pins_open(&p, dir, which, 1, err, sizeof(err)), -EPROTO,
		  "other version");
	ASSERT_TRUE(strstr(err, "ABI version") != NULL, err);
	ASSERT_EQ(set_abi_version(MRC_ABI_VERSION), 0, "this version");
	ASSERT_EQ(mrc_pins_open(&p, dir, which, 1, err, sizeof(err)), 0, err);
	ASSERT_TRUE(p.fd[MRC_PIN_TX] >= 0 && p.fd[MRC_PIN_CFG] >= 0, "both open");
	ASSERT_EQ(p.fd[MRC_PIN_RX], -1, "only what was asked");
	mrc_pins_close(&p);
	ASSERT_EQ(p.fd[MRC_PIN_TX], -1, "closed");
}

/* The limits come from the maps; a map sized for other limits is refused. */
TEST_CASE(test_limits_learned, "pins.limits_learned_from_maps")
{
	const enum mrc_pin which[] = { MRC_PIN_TX, MRC_PIN_PEERS, MRC_PIN_QP_OWNER };
	struct mrc_pins p;
	char err[256] = "";
	int fd;

	ASSERT_EQ(pin_like(MRC_PIN_CFG, 0), 0, "pin mrc_cfg");
	ASSERT_EQ(set_abi_version(MRC_ABI_VERSION), 0, "this version");
	ASSERT_EQ(pin_sized(MRC_PIN_QPS, 0, 1000, 7), 0, "mrc_qps for 1000");
	ASSERT_EQ(pin_sized(MRC_PIN_CTX_OWNER, 0, 1000, 7), 0, "mrc_ctx_owner for 7");
	ASSERT_EQ(pin_sized(MRC_PIN_TX, 0, 1000, 7), 0, "mrc_tx for 1000");
	ASSERT_EQ(pin_sized(MRC_PIN_PEERS, 0, 1000, 7), 0, "mrc_peers for 1000");
	ASSERT_EQ(pin_sized(MRC_PIN_QP_OWNER, 0, 1000, 7), 0, "mrc_qp_owner for 1000");
	ASSERT_EQ(mrc_pins_open(&p, dir, which, 3, err, sizeof(err)), 0, err);
	ASSERT_EQ(p.max_qps, 1000, "max_qps learned");
	ASSERT_EQ(p.max_ctx, 7, "max_ctx learned");
	mrc_pins_close(&p);

	ASSERT_EQ(pin_sized(MRC_PIN_TX, 0, 999, 7), 0, "mrc_tx for 999");
	ASSERT_EQ(mrc_pins_open(&p, dir, which, 3, err, sizeof(err)), -EPROTO,
		  "sizes differ");
	ASSERT_TRUE(strstr(err, "mrc_tx") && strstr(err, "1000 QPs"), err);
	ASSERT_EQ(p.fd[MRC_PIN_QPS], -1, "nothing left open");
	/* Alone, a scaled map opens at any size a limit allows. */
	fd = mrc_pin_open(dir, MRC_PIN_TX, err, sizeof(err));
	ASSERT_TRUE(fd >= 0, err);
	if (fd >= 0)
		close(fd);
	ASSERT_EQ(pin_sized(MRC_PIN_TX, 0, MRC_QPS_LIMIT + 1, 7), 0, "mrc_tx too big");
	ASSERT_EQ(mrc_pin_open(dir, MRC_PIN_TX, err, sizeof(err)), -EPROTO, "over the limit");
	ASSERT_TRUE(strstr(err, "entry count") != NULL, err);
}

/* The build's map sizes are the defaults of the scaled maps. */
TEST_CASE(test_scaled_specs, "pins.scaled_specs_use_defaults")
{
	for (unsigned int i = 0; i < MRC_PIN__COUNT; i++) {
		const struct mrc_pin_spec *s = mrc_pin_spec(i);

		ASSERT_EQ(mrc_pin_entries(s, MRC_MAX_QPS, MRC_MAX_CTX), s->max_entries,
			  s->name);
	}
	ASSERT_EQ(mrc_pin_spec(MRC_PIN_QPS)->scale, MRC_PIN_PER_QP, "mrc_qps per QP");
	ASSERT_EQ(mrc_pin_spec(MRC_PIN_CTX_OWNER)->scale, MRC_PIN_PER_CTX, "ctx");
	ASSERT_EQ(mrc_pin_spec(MRC_PIN_PEERS)->scale, MRC_PIN_PER_QP_ADDR, "peers");
	ASSERT_EQ(mrc_pin_spec(MRC_PIN_PLANES)->scale, MRC_PIN_FIXED, "planes");
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/sys/fs/bpf/mrc-test-pins-%d", (int)getpid());
	if (mkdir(dir, 0700)) {
		fprintf(stderr, "mkdir %s: %s\n", dir, strerror(errno));
		printf("[pins.setup] FAIL\n");
		return 1;
	}
	RUN_REGISTERED_TESTS();
	pin_dir_remove(dir, sizeof(dir));
	return TEST_EXIT();
}
