// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The pinned maps, listed once with the shape this build expects, and the
 * one way to open them (see pins.h for why the shapes are checked).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "common/errmsg.h"
#include "common/pins.h"
#include "mrc/abi.h"

#define U32 sizeof(__u32)
#define SPEC(id, n, t, k, v, e, f) \
	[id] = { .name = n, .type = t, .key_size = k, .value_size = v, \
		 .max_entries = e, .flags = f, .scale = scale_of(id) }
#define ARRAY(id, n, v, e)	SPEC(id, n, BPF_MAP_TYPE_ARRAY, U32, v, e, 0)
#define HASH(id, n, k, v, e)	SPEC(id, n, BPF_MAP_TYPE_HASH, k, v, e, 0)
/* Per-QP maps of maps (the inner maps: user/common/qpmaps.h). */
#define OUTER(id, n, e)		SPEC(id, n, BPF_MAP_TYPE_ARRAY_OF_MAPS, U32, U32, e, 0)
/* Per-slot state: a map of mmapable maps (blocks of one owner's QPs) of v bytes each. */
#define STATE(id, n, v, e) \
	[id] = { .name = n, .type = BPF_MAP_TYPE_ARRAY_OF_MAPS, .key_size = U32, \
		 .value_size = U32, .max_entries = e, .scale = scale_of(id), \
		 .inner_value_size = v, .inner_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP }
/* A window's view: a map of one-entry mmapable maps. */
#define VIEW(id, n, v, e) \
	[id] = { .name = n, .type = BPF_MAP_TYPE_ARRAY_OF_MAPS, .key_size = U32, \
		 .value_size = U32, .max_entries = e, .scale = scale_of(id), \
		 .inner_value_size = v, .inner_flags = BPF_F_MMAPABLE }
#define PERCPU(id, n, v, e)	SPEC(id, n, BPF_MAP_TYPE_PERCPU_ARRAY, U32, v, e, 0)
/*
 * Entry counts that follow mrcd's limits: written QPS, QP_ADDRS, CTX in
 * the list (the build's defaults), and scale_of() says which maps they are.
 */
#define QPS		MRC_MAX_QPS
#define QP_ADDRS	(MRC_MAX_QPS * MRC_MAX_PEER_ADDRS)
#define CTX		MRC_MAX_CTX
#define scale_of(id) \
	((id) == MRC_PIN_PEERS ? MRC_PIN_PER_QP_ADDR : \
	 (id) == MRC_PIN_CTX_OWNER || (id) == MRC_PIN_EVENTS ? MRC_PIN_PER_CTX : \
	 (id) == MRC_PIN_QP_OWNER || (id) == MRC_PIN_QPS || (id) == MRC_PIN_QP_EVS || \
	 (id) == MRC_PIN_RX || (id) == MRC_PIN_TX || (id) == MRC_PIN_EV_STATS || \
	 (id) == MRC_PIN_SEND_LOG || (id) == MRC_PIN_EV_TX || (id) == MRC_PIN_REV_EVS || \
	 (id) == MRC_PIN_QP_STATS || (id) == MRC_PIN_CC || (id) == MRC_PIN_CC_OWNER || \
	 (id) == MRC_PIN_CC_VIEW ? MRC_PIN_PER_QP : MRC_PIN_FIXED)

/* Must match bpf/mrc.bpf.c's map definitions (tests/e2e/doctor.sh checks). */
static const struct mrc_pin_spec specs[MRC_PIN__COUNT] = {
	ARRAY(MRC_PIN_CFG, "mrc_cfg", sizeof(struct mrc_global_cfg), 1),
	HASH(MRC_PIN_QP_OWNER, "mrc_qp_owner", U32, U32, QPS),
	HASH(MRC_PIN_CTX_OWNER, "mrc_ctx_owner", U32, U32, CTX),
	ARRAY(MRC_PIN_PLANES, "mrc_planes", sizeof(struct mrc_plane), MRC_MAX_PLANES_ABI),
	ARRAY(MRC_PIN_QPS, "mrc_qps", sizeof(struct mrc_qp_info), QPS),
	HASH(MRC_PIN_PEERS, "mrc_peers", sizeof(struct mrc_peer_key), U32,
	     QP_ADDRS),
	STATE(MRC_PIN_QP_EVS, "mrc_qp_evs", sizeof(struct mrc_qp_evs), QPS),
	STATE(MRC_PIN_RX, "mrc_rx", sizeof(struct mrc_rx_state), QPS),
	STATE(MRC_PIN_TX, "mrc_tx", sizeof(struct mrc_tx_state), QPS),
	OUTER(MRC_PIN_EV_STATS, "mrc_ev_stats", QPS),
	OUTER(MRC_PIN_SEND_LOG, "mrc_send_log", QPS),
	ARRAY(MRC_PIN_REV_EVS, "mrc_rev_evs", sizeof(struct mrc_rev_evs), QPS),
	HASH(MRC_PIN_PLANE_OF, "mrc_plane_of", U32, U32, MRC_MAX_PLANES_ABI),
	HASH(MRC_PIN_EV_PROFILES, "mrc_ev_profiles", U32,
	     sizeof(struct mrc_ev_profile_rec), MRC_MAX_PROFILES),
	HASH(MRC_PIN_CC_PROFILES, "mrc_cc_profiles", U32,
	     sizeof(struct mrc_cc_profile_rec), MRC_MAX_PROFILES),
	SPEC(MRC_PIN_EVENTS, "mrc_events", BPF_MAP_TYPE_ARRAY_OF_MAPS, U32, U32,
	     CTX, 0),
	PERCPU(MRC_PIN_QP_STATS, "mrc_qp_stats", sizeof(struct mrc_qp_stats), QPS),
	PERCPU(MRC_PIN_DROPS, "mrc_drops", sizeof(struct mrc_drop_stats), 1),
	SPEC(MRC_PIN_EV_EVENTS, "mrc_ev_events", BPF_MAP_TYPE_RINGBUF, 0, 0,
	     MRC_EV_EVENTS_BYTES, 0),
	PERCPU(MRC_PIN_CTL_STATS, "mrc_ctl_stats", sizeof(struct mrc_ctl_stats), 1),
	ARRAY(MRC_PIN_CC, "mrc_cc", sizeof(struct mrc_cc_state), QPS),
	HASH(MRC_PIN_CC_OWNER, "mrc_cc_owner", U32, U32, QPS),
	VIEW(MRC_PIN_CC_VIEW, "mrc_cc_view", sizeof(struct mrc_cc_view), QPS),
	HASH(MRC_PIN_KNOWN_PEERS, "mrc_known_peers", sizeof(struct mrc_known_peer_key),
	     sizeof(struct mrc_known_peer), MRC_MAX_KNOWN_PEERS),
	HASH(MRC_PIN_PROBE_PORTS, "mrc_probe_ports", U32, U32, MRC_MAX_PROBE_PORTS),
	OUTER(MRC_PIN_EV_TX, "mrc_ev_tx", QPS),
	SPEC(MRC_PIN_XDP_NEXT, "mrc_xdp_next", BPF_MAP_TYPE_PROG_ARRAY, U32, U32, 1, 0),
};

const struct mrc_pin_spec *mrc_pin_spec(enum mrc_pin id)
{
	return (unsigned int)id < MRC_PIN__COUNT ? &specs[id] : NULL;
}

enum mrc_pin mrc_pin_by_name(const char *name)
{
	unsigned int i;

	for (i = 0; i < MRC_PIN__COUNT; i++)
		if (!strcmp(specs[i].name, name))
			return i;
	return MRC_PIN__COUNT;
}

int mrc_pin_path(char *buf, size_t len, const char *dir, enum mrc_pin id,
		 char *err, size_t errlen)
{
	int n = snprintf(buf, len, "%s/%s", dir, specs[id].name);

	if (n < 0 || (size_t)n >= len)
		return fail(-ENAMETOOLONG, err, errlen, "pin path too long: %s/%s",
			    dir, specs[id].name);
	return 0;
}

/* The message every shape mismatch ends with: what to do about it. */
#define VERSION_HINT "mrcd and this program come from different builds of " \
	"MRC-XDP: restart mrcd from this build (or rebuild this program)"

static int shape_differs(const char *dir, const char *name, const char *what,
			 unsigned int have, unsigned int want, char *err,
			 size_t errlen)
{
	return fail(-EPROTO, err, errlen, "%s/%s: %s is %u, this build expects %u: "
		    VERSION_HINT, dir, name, what, have, want);
}

uint32_t mrc_pin_entries(const struct mrc_pin_spec *s, uint32_t max_qps,
			 uint32_t max_ctx)
{
	switch (s->scale) {
	case MRC_PIN_PER_QP:
		return max_qps;
	case MRC_PIN_PER_QP_ADDR:
		return max_qps * MRC_MAX_PEER_ADDRS;
	case MRC_PIN_PER_CTX:
		return max_ctx;
	default:
		return s->max_entries;
	}
}

/* Is n an entry count a map of spec s can have under some limits? */
static bool entries_possible(const struct mrc_pin_spec *s, uint32_t n)
{
	switch (s->scale) {
	case MRC_PIN_PER_QP:
		return n >= 1 && n <= MRC_QPS_LIMIT;
	case MRC_PIN_PER_QP_ADDR:
		return n >= MRC_MAX_PEER_ADDRS && n % MRC_MAX_PEER_ADDRS == 0 &&
		       n / MRC_MAX_PEER_ADDRS <= MRC_QPS_LIMIT;
	case MRC_PIN_PER_CTX:
		return n >= 1 && n <= MRC_CTX_LIMIT;
	default:
		return n == s->max_entries;
	}
}

/* Type, sizes and flags of the map behind fd; its info into *info. */
static int check_shape(int fd, const struct mrc_pin_spec *s, const char *dir,
		       struct bpf_map_info *info, char *err, size_t errlen)
{
	__u32 len = sizeof(*info);

	memset(info, 0, sizeof(*info));
	if (bpf_obj_get_info_by_fd(fd, info, &len))
		return fail(-errno, err, errlen, "%s/%s: cannot read the map's info: %s",
			    dir, s->name, strerror(errno));
	if (info->type != s->type)
		return shape_differs(dir, s->name, "the map type", info->type, s->type,
				     err, errlen);
	if (info->key_size != s->key_size)
		return shape_differs(dir, s->name, "the key size", info->key_size,
				     s->key_size, err, errlen);
	if (info->value_size != s->value_size)
		return shape_differs(dir, s->name, "the value size", info->value_size,
				     s->value_size, err, errlen);
	if ((info->map_flags & BPF_F_MMAPABLE) != s->flags)
		return shape_differs(dir, s->name, "the mmapable flag",
				     !!(info->map_flags & BPF_F_MMAPABLE), !!s->flags,
				     err, errlen);
	return 0;
}

int mrc_pin_check(int fd, enum mrc_pin id, const char *dir, char *err,
		  size_t errlen)
{
	const struct mrc_pin_spec *s = &specs[id];
	struct bpf_map_info info;
	int rc = check_shape(fd, s, dir, &info, err, errlen);

	if (rc)
		return rc;
	if (!entries_possible(s, info.max_entries))
		return shape_differs(dir, s->name, "the entry count", info.max_entries,
				     s->max_entries, err, errlen);
	return 0;
}

/*
 * A scaled map sized for other limits than the set's (a map left by
 * another mrcd, or pins replaced while the set was opened).
 */
static int check_entries(int fd, enum mrc_pin id, const char *dir,
			 const struct mrc_pins *p, char *err, size_t errlen)
{
	const struct mrc_pin_spec *s = &specs[id];
	uint32_t want = mrc_pin_entries(s, p->max_qps, p->max_ctx);
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return fail(-errno, err, errlen, "%s/%s: cannot read the map's info: %s",
			    dir, s->name, strerror(errno));
	if (info.max_entries == want)
		return 0;
	return fail(-EPROTO, err, errlen, "%s/%s: the entry count is %u, but mrc_qps "
		    "says %u QPs and mrc_ctx_owner %u contexts: the pinned maps come "
		    "from different mrcd runs; restart mrcd", dir, s->name,
		    info.max_entries, p->max_qps, p->max_ctx);
}

int mrc_pin_open(const char *dir, enum mrc_pin id, char *err, size_t errlen)
{
	char path[4096];
	int fd, rc;

	rc = mrc_pin_path(path, sizeof(path), dir, id, err, errlen);
	if (rc)
		return rc;
	fd = bpf_obj_get(path);
	if (fd < 0) {
		rc = -errno;
		return fail(rc, err, errlen, "cannot open %s: %s%s", path, strerror(-rc),
			    rc == -ENOENT ? " (is mrcd running?)" : "");
	}
	rc = mrc_pin_check(fd, id, dir, err, errlen);
	if (rc) {
		close(fd);
		return rc;
	}
	return fd;
}

int mrc_pins_check_abi(int cfg_fd, const char *dir, char *err, size_t errlen)
{
	struct mrc_global_cfg cfg = {};
	__u32 key = 0;

	if (bpf_map_lookup_elem(cfg_fd, &key, &cfg))
		return fail(-errno, err, errlen, "%s/mrc_cfg: cannot read it: %s", dir,
			    strerror(errno));
	if (!cfg.abi_version)
		return fail(-ENODATA, err, errlen, "%s/mrc_cfg: no ABI version: the fast "
			    "path is not configured yet (is mrcd starting?)", dir);
	if (cfg.abi_version != MRC_ABI_VERSION)
		return shape_differs(dir, "mrc_cfg", "the ABI version", cfg.abi_version,
				     MRC_ABI_VERSION, err, errlen);
	return 0;
}

void mrc_pins_init(struct mrc_pins *p)
{
	unsigned int i;

	for (i = 0; i < MRC_PIN__COUNT; i++)
		p->fd[i] = -1;
	p->max_qps = p->max_ctx = 0;
}

void mrc_pins_close(struct mrc_pins *p)
{
	unsigned int i;

	for (i = 0; i < MRC_PIN__COUNT; i++) {
		if (p->fd[i] >= 0)
			close(p->fd[i]);
		p->fd[i] = -1;
	}
}

static int open_listed(struct mrc_pins *p, const char *dir,
		       const enum mrc_pin *which, size_t n, char *err,
		       size_t errlen)
{
	size_t i;

	for (i = 0; i < (which ? n : MRC_PIN__COUNT); i++) {
		enum mrc_pin id = which ? which[i] : (enum mrc_pin)i;
		int fd;

		if ((unsigned int)id >= MRC_PIN__COUNT)
			return fail(-EINVAL, err, errlen, "no pinned map number %u", id);
		if (p->fd[id] >= 0)
			continue;
		fd = mrc_pin_open(dir, id, err, errlen);
		if (fd < 0)
			return fd;
		p->fd[id] = fd;
		if (p->max_qps && p->max_ctx) {
			int rc = check_entries(fd, id, dir, p, err, errlen);

			if (rc)
				return rc;
		}
	}
	return 0;
}

static uint32_t entries_of(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.max_entries;
}

/* mrcd's limits, from the maps that define them: one entry per QP, per context. */
static int learn_limits(struct mrc_pins *p, const char *dir, char *err,
			size_t errlen)
{
	const enum mrc_pin sizing[] = { MRC_PIN_QPS, MRC_PIN_CTX_OWNER };
	int rc = open_listed(p, dir, sizing, 2, err, errlen);

	if (rc)
		return rc;
	p->max_qps = entries_of(p->fd[MRC_PIN_QPS]);
	p->max_ctx = entries_of(p->fd[MRC_PIN_CTX_OWNER]);
	if (!p->max_qps || !p->max_ctx)
		return fail(-errno, err, errlen, "%s: cannot read the entry counts of "
			    "mrc_qps and mrc_ctx_owner: %s", dir, strerror(errno));
	return 0;
}

int mrc_pins_open(struct mrc_pins *p, const char *dir,
		  const enum mrc_pin *which, size_t n, char *err, size_t errlen)
{
	const enum mrc_pin cfg = MRC_PIN_CFG;
	int rc;

	mrc_pins_init(p);
	rc = open_listed(p, dir, &cfg, 1, err, errlen);
	if (!rc)
		rc = mrc_pins_check_abi(p->fd[MRC_PIN_CFG], dir, err, errlen);
	if (!rc)
		rc = learn_limits(p, dir, err, errlen);
	if (!rc)
		rc = open_listed(p, dir, which, n, err, errlen);
	if (rc)
		mrc_pins_close(p);
	return rc;
}
