// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * `mrcctl doctor` (see doctor.h). Every check records a status, what it
 * found and, when something is wrong, the command that fixes it; nothing
 * here needs mrcd or the pinned maps to exist.
 */
#define _GNU_SOURCE
#include "agent/doctor.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <linux/if_link.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "mrc/abi.h"
#include "agent/agent_cmds.h"
#include "agent/agent_ipc.h"
#include "agent/json_out.h"
#include "agent/qp_summary.h"
#include "common/pins.h"

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC		0xcafe4a11
#endif
#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC		0x74726163
#endif
#define CAP_NET_ADMIN_BIT	12
#define CAP_SYS_ADMIN_BIT	21
#define CAP_BPF_BIT		39

/* mrcd's TC egress filter (user/mrcd/). */
#define DOCTOR_TC_HANDLE	0x4d43
#define DOCTOR_TC_PRIO		0x4d43

/* The pinned maps of bpf/mrc.bpf.c: user/common/pins.c's list. */
#define N_MAPS	((size_t)MRC_PIN__COUNT)

enum dr_status { DR_OK, DR_WARN, DR_FAIL };

struct dr_plane {
	unsigned int plane;		/* 1-based */
	char ifname[IFNAMSIZ];
	uint32_t ifindex;
	bool down_flag;			/* MRC_PLANE_F_DOWN */
	char oper[32];
	uint32_t xdp_prog_id;
	char xdp_name[16];		/* BPF_OBJ_NAME_LEN */
	const char *xdp_mode;
	uint32_t tc_prog_id;
};

struct dr_check {
	char name[48];
	enum dr_status status;
	char detail[512];
	char fix[256];
	bool has_plane;
	struct dr_plane plane;
};

#define DR_MAX_CHECKS	(16 + MRC_MAX_PLANES_ABI)

struct doctor {
	const char *pin_dir;
	bool default_dir;
	struct agent_paths paths;
	bool paths_ok;
	char paths_err[256];
	bool agent_up;
	unsigned int n;
	struct dr_check checks[DR_MAX_CHECKS];
};

__attribute__((format(printf, 4, 5)))
static struct dr_check *add(struct doctor *d, const char *name,
			    enum dr_status st, const char *fmt, ...)
{
	static struct dr_check spare;
	struct dr_check *c = d->n < DR_MAX_CHECKS ? &d->checks[d->n++] : &spare;
	va_list ap;

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->status = st;
	va_start(ap, fmt);
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap);
	va_end(ap);
	return c;
}

__attribute__((format(printf, 2, 3)))
static void set_fix(struct dr_check *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->fix, sizeof(c->fix), fmt, ap);
	va_end(ap);
}

/* " --pin-dir DIR" when not the default, for fix commands. */
static const char *pin_arg(const struct doctor *d, char *buf, size_t len)
{
	if (d->default_dir)
		return "";
	snprintf(buf, len, " --pin-dir %s", d->pin_dir);
	return buf;
}

/* ---- libraries quiet while we probe ------------------------------------ */

static int quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	(void)level; (void)fmt; (void)ap;
	return 0;
}

static int quiet_xdp_print(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	(void)level; (void)fmt; (void)ap;
	return 0;
}

/* ---- 1. kernel BTF ----------------------------------------------------- */

static void check_btf(struct doctor *d)
{
	const char *path = "/sys/kernel/btf/vmlinux";
	struct dr_check *c;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		off_t size = lseek(fd, 0, SEEK_END);

		close(fd);
		add(d, "kernel BTF", DR_OK, "%s readable (%lld bytes)", path,
		    (long long)size);
		return;
	}
	c = add(d, "kernel BTF", DR_FAIL, "%s: %s (the BPF programs need the "
		"kernel's BTF for CO-RE)", path, strerror(errno));
	if (errno == EACCES || errno == EPERM)
		set_fix(c, "run as root: sudo mrcctl doctor");
	else
		set_fix(c, "boot a kernel built with CONFIG_DEBUG_INFO_BTF=y");
}

/* ---- 2. bpffs ---------------------------------------------------------- */

static void check_bpffs(struct doctor *d)
{
	const char *dirs[2] = { "/sys/fs/bpf", NULL };
	struct dr_check *c;
	struct statfs sfs;
	int i;

	if (d->paths_ok && strcmp(d->paths.pin_parent, "/sys/fs/bpf"))
		dirs[1] = d->paths.pin_parent;
	for (i = 0; i < 2 && dirs[i]; i++) {
		if (statfs(dirs[i], &sfs)) {
			c = add(d, "bpffs", DR_FAIL, "%s: %s", dirs[i], strerror(errno));
			set_fix(c, "mkdir -p %s && mount -t bpf bpf %s", dirs[i], dirs[i]);
			return;
		}
		if ((unsigned long)sfs.f_type != BPF_FS_MAGIC) {
			c = add(d, "bpffs", DR_FAIL, "%s is not a BPF filesystem "
				"(f_type 0x%lx)", dirs[i], (unsigned long)sfs.f_type);
			set_fix(c, "mount -t bpf bpf %s", dirs[i]);
			return;
		}
	}
	if (dirs[1])
		add(d, "bpffs", DR_OK, "/sys/fs/bpf and %s are BPF filesystems", dirs[1]);
	else
		add(d, "bpffs", DR_OK, "/sys/fs/bpf is a BPF filesystem");
}

/* ---- 3. libraries ------------------------------------------------------ */

/* The file a symbol was loaded from, links resolved ("" if unknown). */
static void lib_file(void *sym, char *buf, size_t len)
{
	char real[PATH_MAX];
	Dl_info info;

	buf[0] = '\0';
	if (!dladdr(sym, &info) || !info.dli_fname)
		return;
	snprintf(buf, len, "%s", realpath(info.dli_fname, real) ? real : info.dli_fname);
}

static void check_libs(struct doctor *d)
{
	unsigned int maj = libbpf_major_version();
	char file[PATH_MAX], ver[32] = "";
	struct dr_check *c;
	const char *so;

	if (maj >= 1) {
		add(d, "libbpf", DR_OK, "%s", libbpf_version_string());
	} else {
		c = add(d, "libbpf", DR_FAIL, "%s is older than 1.0",
			libbpf_version_string());
		set_fix(c, "install libbpf 1.0 or newer (apt install libbpf1 "
			"libbpf-dev) and rebuild");
	}
	/* libxdp has no version call: the soname file tells (libxdp.so.1.3.1). */
	lib_file((void *)xdp_multiprog__get_from_ifindex, file, sizeof(file));
	so = strstr(file, ".so.");
	if (so)
		snprintf(ver, sizeof(ver), "%s", so + 4);
	if (ver[0])
		add(d, "libxdp", DR_OK, "linked, %s (version from the file name)", file);
	else
		add(d, "libxdp", DR_OK, "linked%s%s%s (no version call in libxdp)",
		    file[0] ? " (" : "", file, file[0] ? ")" : "");
}

/* ---- 4. privileges ----------------------------------------------------- */

static int cap_eff(uint64_t *caps)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	int rc = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "CapEff:", 7)) {
			*caps = strtoull(line + 7, NULL, 16);
			rc = 0;
			break;
		}
	}
	fclose(f);
	return rc;
}

static void check_privileges(struct doctor *d)
{
	uint64_t caps = 0;
	bool have, bpf, sys_admin, net_admin;
	struct dr_check *c;

	if (cap_eff(&caps)) {
		c = add(d, "privileges", geteuid() ? DR_FAIL : DR_OK,
			"euid %u, CapEff unreadable", geteuid());
		if (geteuid())
			set_fix(c, "run as root: sudo mrcctl doctor");
		return;
	}
	bpf = caps & (1ull << CAP_BPF_BIT);
	sys_admin = caps & (1ull << CAP_SYS_ADMIN_BIT);
	net_admin = caps & (1ull << CAP_NET_ADMIN_BIT);
	have = (bpf || sys_admin) && net_admin;
	if (have || !geteuid()) {
		add(d, "privileges", DR_OK, "euid %u, CAP_BPF %s, CAP_SYS_ADMIN %s, "
		    "CAP_NET_ADMIN %s", geteuid(), bpf ? "yes" : "no",
		    sys_admin ? "yes" : "no", net_admin ? "yes" : "no");
		return;
	}
	c = add(d, "privileges", DR_FAIL, "euid %u without CAP_BPF (or "
		"CAP_SYS_ADMIN) and CAP_NET_ADMIN (CapEff %016llx)", geteuid(),
		(unsigned long long)caps);
	set_fix(c, "run as root: sudo mrcctl doctor (mrcd and mrcctl need "
		"CAP_BPF and CAP_NET_ADMIN)");
}

/* ---- 5. mrcd ----------------------------------------------------------- */

static void check_agent(struct doctor *d)
{
	static volatile sig_atomic_t never;
	char *argv[] = { "status", "--json", NULL };
	char pbuf[PATH_MAX + 16], err[256];
	enum agent_call_result res;
	struct dr_check *c;
	char *out_text = NULL, *err_text = NULL, *p;
	size_t out_len = 0, err_len = 0;
	FILE *out, *errf;
	int status = AGENT_EXIT_FAIL;

	if (!d->paths_ok) {
		c = add(d, "mrcd", DR_FAIL, "no agent for %s: %s", d->pin_dir,
			d->paths_err);
		set_fix(c, "mrcd --planes IF[,IF..] --daemon%s",
			pin_arg(d, pbuf, sizeof(pbuf)));
		return;
	}
	out = open_memstream(&out_text, &out_len);
	errf = open_memstream(&err_text, &err_len);
	if (!out || !errf) {
		if (out)
			fclose(out);
		if (errf)
			fclose(errf);
		add(d, "mrcd", DR_FAIL, "out of memory");
		return;
	}
	err[0] = '\0';
	res = agent_call(d->paths.sock_path, 2, argv, out, errf, &status, &never,
			 err, sizeof(err));
	fclose(out);
	fclose(errf);
	switch (res) {
	case AGENT_CALL_OK:
		if (status == 0) {
			long pid = 0;

			p = out_text ? strstr(out_text, "\"pid\": ") : NULL;
			if (p)
				pid = strtol(p + 7, NULL, 10);
			if (pid > 0)
				add(d, "mrcd", DR_OK, "answers on %s (pid %ld)",
				    d->paths.sock_path, pid);
			else
				add(d, "mrcd", DR_OK, "answers on %s", d->paths.sock_path);
			d->agent_up = true;
		} else {
			c = add(d, "mrcd", DR_FAIL, "answers on %s but `status` "
				"failed (exit %d): %.200s", d->paths.sock_path,
				status, err_text ? err_text : "");
			set_fix(c, "restart it: mrcd --detach%s, then mrcd --planes "
				"IF[,IF..] --daemon%s", pin_arg(d, pbuf, sizeof(pbuf)),
				pbuf);
		}
		break;
	case AGENT_CALL_NOT_RUNNING:
		c = add(d, "mrcd", DR_FAIL, "not running for %s (nobody answers "
			"on %s)", d->paths.pin_dir, d->paths.sock_path);
		set_fix(c, "mrcd --planes IF[,IF..] --daemon%s",
			pin_arg(d, pbuf, sizeof(pbuf)));
		break;
	case AGENT_CALL_TIMEOUT:
		c = add(d, "mrcd", DR_FAIL, "not answering on %s within %d s "
			"(stopped or stuck?)", d->paths.sock_path,
			AGENT_TIMEOUT_MS / 1000);
		set_fix(c, "mrcd --detach%s, then mrcd --planes IF[,IF..] "
			"--daemon%s", pin_arg(d, pbuf, sizeof(pbuf)), pbuf);
		break;
	default:
		c = add(d, "mrcd", DR_FAIL, "cannot talk to it on %s: %s",
			d->paths.sock_path, err[0] ? err : "unknown error");
		set_fix(c, "mrcd --detach%s, then mrcd --planes IF[,IF..] "
			"--daemon%s", pin_arg(d, pbuf, sizeof(pbuf)), pbuf);
		break;
	}
	free(out_text);
	free(err_text);
}

/* ---- 6. pinned maps ---------------------------------------------------- */

static void append(char *buf, size_t len, const char *s)
{
	size_t used = strlen(buf);

	if (used + 1 < len)
		snprintf(buf + used, len - used, "%s%s", used ? ", " : "", s);
}

/*
 * One pinned map: present or not, its shape against this build's
 * (and, for mrc_cfg, the ABI version mrcd wrote), whether it has BTF.
 */
struct map_census {
	unsigned int present, n_missing, n_no_btf, n_typeless, n_shape;
	char missing[320], no_btf[320], shape[320];
	char first_shape_err[320];
	int first_errno;
};

static void census_one(struct map_census *m, const char *dir, enum mrc_pin id)
{
	const char *name = mrc_pin_spec(id)->name;
	char path[PATH_MAX + 64], err[320];
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int fd, rc;

	if (mrc_pin_path(path, sizeof(path), dir, id, NULL, 0))
		fd = -1, errno = ENAMETOOLONG;
	else
		fd = bpf_obj_get(path);
	if (fd < 0) {
		if (!m->first_errno)
			m->first_errno = errno;
		m->n_missing++;
		append(m->missing, sizeof(m->missing), name);
		return;
	}
	m->present++;
	rc = mrc_pin_check(fd, id, dir, err, sizeof(err));
	if (!rc && id == MRC_PIN_CFG)
		rc = mrc_pins_check_abi(fd, dir, err, sizeof(err));
	if (rc) {
		if (!m->n_shape++)
			snprintf(m->first_shape_err, sizeof(m->first_shape_err), "%s", err);
		append(m->shape, sizeof(m->shape), name);
	}
	if (bpf_obj_get_info_by_fd(fd, &info, &len)) {
		m->n_no_btf++;
		append(m->no_btf, sizeof(m->no_btf), name);
	} else if (info.type == BPF_MAP_TYPE_RINGBUF ||
		   info.type == BPF_MAP_TYPE_PERF_EVENT_ARRAY ||
		   info.type == BPF_MAP_TYPE_ARRAY_OF_MAPS ||
		   info.type == BPF_MAP_TYPE_HASH_OF_MAPS ||
		   info.type == BPF_MAP_TYPE_PROG_ARRAY) {
		/* No value type (ring buffer, map of maps, programs): no BTF. */
		m->n_typeless++;
	} else if (!info.btf_id) {
		m->n_no_btf++;
		append(m->no_btf, sizeof(m->no_btf), name);
	}
	close(fd);
}

static void check_maps(struct doctor *d)
{
	const char *dir = d->paths_ok ? d->paths.pin_dir : d->pin_dir;
	char pbuf[PATH_MAX + 16];
	struct map_census m = {};
	struct dr_check *c;
	unsigned int i;

	for (i = 0; i < MRC_PIN__COUNT; i++)
		census_one(&m, dir, (enum mrc_pin)i);
	if (!m.n_missing && !m.n_no_btf && !m.n_shape) {
		add(d, "pinned maps", DR_OK, "all %zu maps of mrc.bpf.c in %s, "
		    "with BTF (but %u ring buffers, maps of maps and program arrays, "
		    "which have none)", N_MAPS, dir,
		    m.n_typeless);
		return;
	}
	if (!m.present) {
		c = add(d, "pinned maps", DR_FAIL, "none of the %zu maps in %s "
			"(%s)", N_MAPS, dir, strerror(m.first_errno));
		if (m.first_errno == EACCES || m.first_errno == EPERM)
			set_fix(c, "run as root: sudo mrcctl doctor");
		else
			set_fix(c, "start mrcd: mrcd --planes IF[,IF..] --daemon%s",
				pin_arg(d, pbuf, sizeof(pbuf)));
		return;
	}
	if (!m.n_missing && !m.n_no_btf) {
		/* All there, but not what this build reads: another build's mrcd. */
		c = add(d, "pinned maps", DR_FAIL, "all %zu present in %s, %u of "
			"another shape than this build's: %s (%s)", N_MAPS, dir,
			m.n_shape, m.shape, m.first_shape_err);
		set_fix(c, "run mrcd and mrcctl of one build: mrcd --detach%s, then "
			"mrcd --planes IF[,IF..] --daemon%s from this build",
			pin_arg(d, pbuf, sizeof(pbuf)), pbuf);
		return;
	}
	if (m.n_missing)
		c = add(d, "pinned maps", DR_FAIL, "%u of %zu present in %s, "
			"%u missing: %s%s%s%s%s", m.present, N_MAPS, dir, m.n_missing,
			m.missing, m.n_no_btf ? "; without BTF: " : "", m.no_btf,
			m.n_shape ? "; of another shape: " : "", m.shape);
	else
		c = add(d, "pinned maps", DR_FAIL, "all %zu present in %s, %u "
			"without BTF: %s%s%s", N_MAPS, dir, m.n_no_btf, m.no_btf,
			m.n_shape ? "; of another shape: " : "", m.shape);
	/* Stale or foreign pins: clean them and start again. */
	set_fix(c, "mrcd --detach%s (removes stale pins), then mrcd --planes "
		"IF[,IF..] --daemon%s", pin_arg(d, pbuf, sizeof(pbuf)), pbuf);
}

/* ---- 7. limits and QPs ------------------------------------------------- */

#define STR_(x)	#x
#define STR(x)	STR_(x)
#define WARN_PERCENT_STR	STR(LIMIT_WARN_PERCENT) "%"

/* QPs (or contexts) near mrcd's limit: the flag that raises it. */
static void check_limits(struct doctor *d, const struct qp_table *t)
{
	bool qps = limit_near(t->qps_in_use, t->max_qps);
	bool ctx = limit_near(t->ctx_in_use, t->max_ctx);
	struct dr_check *c;

	if (!qps && !ctx) {
		add(d, "limits", DR_OK, "QPs %u of %u in use, contexts %u of %u",
		    t->qps_in_use, t->max_qps, t->ctx_in_use, t->max_ctx);
		return;
	}
	c = add(d, "limits", DR_WARN, "QPs %u of %u in use%s, contexts %u of %u%s",
		t->qps_in_use, t->max_qps, qps ? " (over " WARN_PERCENT_STR ")" : "",
		t->ctx_in_use, t->max_ctx, ctx ? " (over " WARN_PERCENT_STR ")" : "");
	set_fix(c, "restart mrcd with a higher limit:%s%s (now %u QPs, %u contexts); "
		"new QPs fail with ENOSPC at the limit", qps ? " mrcd --max-qps N" : "",
		ctx ? " mrcd --max-contexts N" : "", t->max_qps, t->max_ctx);
}

/* QPs in ERROR warn; ASSUMED_BAD EVs are counted (probing deals with them). */
static void check_qp_health(struct doctor *d, const struct qp_table *t)
{
	struct qp_summary s;
	char worst[200] = "";
	struct dr_check *c;

	qp_summarise(t, &s);
	for (unsigned int i = 0; i < s.n_worst; i++) {
		char one[48];

		snprintf(one, sizeof(one), "%s%u %s", i ? ", " : "; worst: ", s.worst[i].qpn,
			 s.worst[i].state == MRC_QPS_ERROR ? "ERROR" : "ASSUMED_BAD EVs");
		if (strlen(worst) + strlen(one) < sizeof(worst))
			strcat(worst, one);
	}
	c = add(d, "QPs", s.in_error ? DR_WARN : DR_OK, "%u QPs, %u in ERROR, %u with "
		"ASSUMED_BAD EVs (%llu EVs)%s", s.total, s.in_error, s.with_bad_evs,
		(unsigned long long)s.bad_evs, worst);
	if (s.in_error)
		set_fix(c, "look at them: mrcctl qp show N; a QP in ERROR stays until its "
			"owner destroys it");
}

/* Both from mrcd's maps; nothing to say when they are missing (see maps). */
static void check_qps(struct doctor *d)
{
	static const enum mrc_pin used[] = { MRC_PIN_QP_OWNER, MRC_PIN_QP_EVS };
	const char *dir = d->paths_ok ? d->paths.pin_dir : d->pin_dir;
	struct qp_table_maps m;
	struct mrc_pins p;
	struct qp_table t;

	if (mrc_pins_open(&p, dir, used, 2, NULL, 0))
		return;
	m = (struct qp_table_maps){
		.qps = p.fd[MRC_PIN_QPS], .qp_owner = p.fd[MRC_PIN_QP_OWNER],
		.qp_evs = p.fd[MRC_PIN_QP_EVS], .ctx_owner = p.fd[MRC_PIN_CTX_OWNER],
		.tx = -1, .rx = -1, .cc_view = -1, .qp_stats = -1,
	};
	if (!qp_table_read(&t, &m, QPT_LIVE, NULL, 0)) {
		check_limits(d, &t);
		check_qp_health(d, &t);
	}
	qp_table_free(&t);
	mrc_pins_close(&p);
}

/* ---- 8. planes and their programs -------------------------------------- */

static void read_oper(const char *ifname, char *buf, size_t len)
{
	char path[64 + IFNAMSIZ];
	FILE *f;

	snprintf(buf, len, "unknown");
	snprintf(path, sizeof(path), "/sys/class/net/%s/operstate", ifname);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* A program's name by id ("" when it cannot be read). */
static void prog_name(uint32_t id, char *buf, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	int fd = id ? bpf_prog_get_fd_by_id(id) : -1;

	buf[0] = '\0';
	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &info_len))
		snprintf(buf, len, "%s", info.name);
	close(fd);
}

static void query_xdp(struct dr_plane *p)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, q);

	p->xdp_mode = "none";
	if (bpf_xdp_query((int)p->ifindex, 0, &q))
		return;
	if (q.drv_prog_id) {
		p->xdp_prog_id = q.drv_prog_id;
		p->xdp_mode = "native";
	} else if (q.skb_prog_id) {
		p->xdp_prog_id = q.skb_prog_id;
		p->xdp_mode = "skb";
	} else if (q.hw_prog_id) {
		p->xdp_prog_id = q.hw_prog_id;
		p->xdp_mode = "hw";
	} else if (q.prog_id) {
		p->xdp_prog_id = q.prog_id;
		p->xdp_mode = "native";
	}
	prog_name(p->xdp_prog_id, p->xdp_name, sizeof(p->xdp_name));
}

static void query_tc(struct dr_plane *p)
{
	LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = (int)p->ifindex,
		    .attach_point = BPF_TC_EGRESS);
	LIBBPF_OPTS(bpf_tc_opts, opts, .handle = DOCTOR_TC_HANDLE,
		    .priority = DOCTOR_TC_PRIO);

	if (bpf_tc_query(&hook, &opts))
		opts.prog_id = 0;
	p->tc_prog_id = opts.prog_id;
}

static void check_plane(struct doctor *d, unsigned int idx, const struct mrc_plane *mp)
{
	char name[48], pbuf[PATH_MAX + 16], problems[256] = "";
	struct dr_plane pl = {};
	enum dr_status st = DR_OK;
	struct dr_check *c;
	unsigned int real;
	bool up;

	pl.plane = idx + 1;
	memcpy(pl.ifname, mp->name, sizeof(pl.ifname) - 1);
	pl.ifindex = mp->ifindex;
	pl.down_flag = mp->flags & MRC_PLANE_F_DOWN;
	snprintf(name, sizeof(name), "plane %u %s", pl.plane, pl.ifname);

	real = if_nametoindex(pl.ifname);
	read_oper(pl.ifname, pl.oper, sizeof(pl.oper));
	query_xdp(&pl);
	query_tc(&pl);

	if (!real) {
		snprintf(problems, sizeof(problems), "%s does not exist", pl.ifname);
		st = DR_FAIL;
	} else if (real != pl.ifindex) {
		snprintf(problems, sizeof(problems), "%s is ifindex %u now, the "
			 "map says %u (recreated?)", pl.ifname, real, pl.ifindex);
		st = DR_FAIL;
	}
	up = !strcmp(pl.oper, "up");
	if (st == DR_OK && !up) {
		append(problems, sizeof(problems), "link not up");
		st = DR_FAIL;
	}
	if (st == DR_OK && !pl.xdp_prog_id) {
		append(problems, sizeof(problems), "no XDP program");
		st = DR_FAIL;
	}
	/* Another program in MRC's place (libxdp's dispatcher runs ours). */
	if (st == DR_OK && pl.xdp_name[0] && strcmp(pl.xdp_name, "mrc_xdp_rx") &&
	    strcmp(pl.xdp_name, "xdp_dispatcher")) {
		append(problems, sizeof(problems), "the XDP program is not MRC's");
		st = DR_FAIL;
	}
	if (st == DR_OK && !pl.tc_prog_id) {
		append(problems, sizeof(problems), "no TC egress filter 0x4d43");
		st = DR_FAIL;
	}
	if (st == DR_OK && pl.down_flag) {
		append(problems, sizeof(problems), "marked DOWN by mrcd");
		st = DR_WARN;
	}

	c = add(d, name, st, "ifindex %u, oper %s, XDP prog %u%s%s (%s), TC egress "
		"prog %u%s%s%s", pl.ifindex, pl.oper, pl.xdp_prog_id,
		pl.xdp_name[0] ? " " : "", pl.xdp_name, pl.xdp_mode,
		pl.tc_prog_id, pl.down_flag ? ", flag DOWN" : "",
		problems[0] ? ": " : "", problems);
	c->has_plane = true;
	c->plane = pl;
	if (st == DR_OK)
		return;
	if (!real || real != pl.ifindex)
		set_fix(c, "restart mrcd on the current interfaces: mrcd --detach%s, "
			"then mrcd --planes IF[,IF..] --daemon%s",
			pin_arg(d, pbuf, sizeof(pbuf)), pbuf);
	else if (!up)
		set_fix(c, "ip link set %s up (and check its cable/peer: "
			"cat /sys/class/net/%s/carrier)", pl.ifname, pl.ifname);
	else if (strstr(problems, "not MRC's"))
		set_fix(c, "take %s off %s (xdp-loader unload %s --all) so that mrcd "
			"attaches MRC's again, and chain it after MRC's through "
			"mrc_xdp_next (docs/OPERATIONS.md)", pl.xdp_name, pl.ifname,
			pl.ifname);
	else if (!pl.xdp_prog_id || !pl.tc_prog_id)
		set_fix(c, "mrcd attaches them again within a second unless started "
			"with --no-repair; else reattach: mrcd --detach%s, then mrcd "
			"--planes IF[,IF..] --daemon%s", pin_arg(d, pbuf, sizeof(pbuf)),
			pbuf);
	else
		set_fix(c, "check the link and the fabric behind %s (mrcd clears "
			"DOWN when it comes back)", pl.ifname);
}

static void check_planes(struct doctor *d)
{
	char path[PATH_MAX + 64], pbuf[PATH_MAX + 16], err[PATH_MAX + 256];
	const char *dir = d->paths_ok ? d->paths.pin_dir : d->pin_dir;
	unsigned int used = 0;
	struct dr_check *c;
	__u32 key;
	int fd;

	snprintf(path, sizeof(path), "%s/mrc_planes", dir);
	fd = mrc_pin_open(dir, MRC_PIN_PLANES, err, sizeof(err));
	if (fd == -EPROTO) {
		/* Another build's table: its planes would be misread. */
		c = add(d, "planes", DR_FAIL, "not checked: %s", err);
		set_fix(c, "run mrcd and mrcctl of one build: mrcd --detach%s, then "
			"mrcd --planes IF[,IF..] --daemon%s from this build",
			pin_arg(d, pbuf, sizeof(pbuf)), pbuf);
		return;
	}
	if (fd < 0) {
		c = add(d, "planes", DR_FAIL, "not checked: cannot open %s (%s)",
			path, strerror(-fd));
		set_fix(c, "start mrcd: mrcd --planes IF[,IF..] --daemon%s",
			pin_arg(d, pbuf, sizeof(pbuf)));
		return;
	}
	for (key = 0; key < MRC_MAX_PLANES_ABI; key++) {
		struct mrc_plane mp = {};

		if (bpf_map_lookup_elem(fd, &key, &mp) || !mp.ifindex)
			continue;
		used++;
		check_plane(d, key, &mp);
	}
	close(fd);
	if (!used) {
		c = add(d, "planes", DR_FAIL, "no plane in %s", path);
		set_fix(c, "mrcd --detach%s, then mrcd --planes IF[,IF..] --daemon%s",
			pin_arg(d, pbuf, sizeof(pbuf)), pbuf);
	}
}

/* ---- XDP next to other XDP programs: libxdp's dispatcher ------------- */

/* The one-function BTF both probe programs share: int mrc_probe(void). */
static struct btf *probe_btf(__u32 *func_id)
{
	struct btf *btf = btf__new_empty();
	int i, proto, func;

	if (!btf)
		return NULL;
	i = btf__add_int(btf, "int", 4, BTF_INT_SIGNED);
	proto = i > 0 ? btf__add_func_proto(btf, i) : -1;
	func = proto > 0 ? btf__add_func(btf, "mrc_probe", BTF_FUNC_GLOBAL, proto) : -1;
	if (func < 0 || btf__load_into_kernel(btf)) {
		btf__free(btf);
		return NULL;
	}
	*func_id = (__u32)func;
	return btf;
}

/*
 * What libxdp's compatibility check does: load an XDP program, then an
 * extension (freplace) of its function. 0, or the -errno of the load
 * that failed (which says "the extension" in *what).
 */
static int probe_freplace(const char **what)
{
	const struct bpf_insn pass[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_func_info fi = { .insn_off = 0 };
	LIBBPF_OPTS(bpf_prog_load_opts, o, .func_info = &fi, .func_info_cnt = 1,
		    .func_info_rec_size = sizeof(fi));
	struct btf *btf = probe_btf(&fi.type_id);
	int target, ext, err = 0;

	*what = "the BTF of the probe";
	if (!btf)
		return -errno ? -errno : -EINVAL;
	o.prog_btf_fd = btf__fd(btf);
	*what = "an XDP program with BTF";
	target = bpf_prog_load(BPF_PROG_TYPE_XDP, "mrc_probe", "GPL", pass, 2, &o);
	if (target < 0) {
		err = -errno;
	} else {
		*what = "an extension (freplace) of it";
		o.attach_prog_fd = target;
		o.attach_btf_id = fi.type_id;
		ext = bpf_prog_load(BPF_PROG_TYPE_EXT, "mrc_probe", "GPL", pass, 2, &o);
		err = ext < 0 ? -errno : 0;
		if (ext >= 0)
			close(ext);
		close(target);
	}
	btf__free(btf);
	return err;
}

/* What MRC's chain (mrc_xdp_next) runs after it: "empty", "program N (name)". */
static void describe_chain(const struct doctor *d, char *buf, size_t len)
{
	const char *dir = d->paths_ok ? d->paths.pin_dir : d->pin_dir;
	struct bpf_prog_info info = {};
	__u32 key = 0, id = 0, info_len = sizeof(info);
	int fd = mrc_pin_open(dir, MRC_PIN_XDP_NEXT, NULL, 0), prog;

	snprintf(buf, len, "not pinned");
	if (fd < 0)
		return;
	if (bpf_map_lookup_elem(fd, &key, &id) || !id) {
		snprintf(buf, len, "empty");
	} else {
		prog = bpf_prog_get_fd_by_id(id);
		if (prog >= 0 && !bpf_obj_get_info_by_fd(prog, &info, &info_len))
			snprintf(buf, len, "program %u (%s)", id, info.name);
		else
			snprintf(buf, len, "program %u", id);
		if (prog >= 0)
			close(prog);
	}
	close(fd);
}

static void check_multiprog(struct doctor *d)
{
	char chain[64];
	const char *what;
	struct dr_check *c;
	int err = probe_freplace(&what);

	describe_chain(d, chain, sizeof(chain));
	if (!err) {
		add(d, "XDP multi-program", DR_OK, "the kernel loads freplace "
		    "programs: libxdp's dispatcher can run MRC next to other XDP "
		    "programs; MRC's chain mrc_xdp_next: %s", chain);
		return;
	}
	c = add(d, "XDP multi-program", DR_WARN, "libxdp's dispatcher cannot run "
		"here: the kernel refuses %s (%s), as in libxdp's compatibility "
		"check; MRC's XDP program must be each plane's only XDP program, "
		"others run after it through its chain mrc_xdp_next (now: %s)",
		what, strerror(-err), chain);
	set_fix(c, "chain another XDP program after MRC's: bpftool map update pinned "
		"PIN_DIR/mrc_xdp_next key 0 0 0 0 value pinned PROG (MRC passes it "
		"every non-MRC packet), or use a kernel that loads freplace programs "
		"(docs/OPERATIONS.md)");
}

/* ---- 9. tracefs -------------------------------------------------------- */

static void check_tracefs(struct doctor *d)
{
	const char *path = "/sys/kernel/tracing";
	struct dr_check *c;
	struct statfs sfs;

	if (!statfs(path, &sfs) && (unsigned long)sfs.f_type == TRACEFS_MAGIC) {
		add(d, "tracefs", DR_OK, "mounted at %s", path);
		return;
	}
	c = add(d, "tracefs", DR_WARN, "not mounted at %s (only bpf_printk "
		"debugging needs it)", path);
	set_fix(c, "mount -t tracefs tracefs %s", path);
}

/* ---- output ------------------------------------------------------------ */

static const char *status_word(enum dr_status st, bool json)
{
	switch (st) {
	case DR_OK:
		return "ok";
	case DR_WARN:
		return json ? "warn" : "WARN";
	default:
		return json ? "fail" : "FAIL";
	}
}

static void print_json(const struct doctor *d, FILE *f, unsigned int failed,
		       unsigned int warnings)
{
	unsigned int i;

	fputs("{\"checks\": [", f);
	for (i = 0; i < d->n; i++) {
		const struct dr_check *c = &d->checks[i];

		fputs(i ? ", {" : "{", f);
		fputs("\"name\": ", f);
		json_string(f, c->name);
		fprintf(f, ", \"status\": \"%s\", \"detail\": ", status_word(c->status, true));
		json_string(f, c->detail);
		fputs(", \"fix\": ", f);
		if (c->fix[0])
			json_string(f, c->fix);
		else
			fputs("null", f);
		if (c->has_plane) {
			const struct dr_plane *p = &c->plane;

			fprintf(f, ", \"plane\": {\"plane\": %u, \"ifname\": ", p->plane);
			json_string(f, p->ifname);
			fprintf(f, ", \"ifindex\": %u, \"oper\": ", p->ifindex);
			json_string(f, p->oper);
			fprintf(f, ", \"down\": %s, \"xdp_prog_id\": %u, \"xdp_mode\": "
				"\"%s\", \"tc_prog_id\": %u}", p->down_flag ? "true" : "false",
				p->xdp_prog_id, p->xdp_mode, p->tc_prog_id);
		}
		fputc('}', f);
	}
	fprintf(f, "], \"failed\": %u, \"warnings\": %u}\n", failed, warnings);
}

static void print_text(const struct doctor *d, FILE *f, unsigned int failed,
		       unsigned int warnings)
{
	unsigned int i;

	for (i = 0; i < d->n; i++) {
		const struct dr_check *c = &d->checks[i];

		fprintf(f, "%-4s  %s: %s\n", status_word(c->status, false), c->name,
			c->detail);
		if (c->status != DR_OK)
			fprintf(f, "      fix: %s\n", c->fix[0] ? c->fix :
				"see mrcctl(8), DOCTOR");
	}
	fprintf(f, "%u failed, %u warning%s\n", failed, warnings,
		warnings == 1 ? "" : "s");
}

int doctor_run(const char *pin_dir, bool json, FILE *out, FILE *err)
{
	struct doctor *d = calloc(1, sizeof(*d));
	libbpf_print_fn_t old_print;
	libxdp_print_fn_t old_xdp_print;
	unsigned int failed = 0, warnings = 0, i;

	if (!d) {
		fprintf(err, "mrcctl doctor: out of memory\n");
		return AGENT_EXIT_FAIL;
	}
	d->pin_dir = pin_dir ? pin_dir : AGENT_PIN_DIR_DEFAULT;
	d->default_dir = !strcmp(d->pin_dir, AGENT_PIN_DIR_DEFAULT);
	d->paths_ok = !agent_paths_resolve(d->pin_dir, &d->paths, d->paths_err,
					   sizeof(d->paths_err));
	old_print = libbpf_set_print(quiet_print);
	old_xdp_print = libxdp_set_print(quiet_xdp_print);

	check_btf(d);
	check_bpffs(d);
	check_libs(d);
	check_privileges(d);
	check_agent(d);
	check_maps(d);
	check_qps(d);
	check_planes(d);
	check_multiprog(d);
	check_tracefs(d);

	libbpf_set_print(old_print);
	libxdp_set_print(old_xdp_print);
	for (i = 0; i < d->n; i++) {
		failed += d->checks[i].status == DR_FAIL;
		warnings += d->checks[i].status == DR_WARN;
	}
	if (json)
		print_json(d, out, failed, warnings);
	else
		print_text(d, out, failed, warnings);
	free(d);
	return failed ? AGENT_EXIT_FAIL : AGENT_EXIT_OK;
}
