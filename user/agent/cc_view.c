// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* A congestion window as the tools show it: see cc_view.h. */
#include "agent/cc_view.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "common/errmsg.h"
#include "common/pins.h"
#include "common/qpmaps.h"
#include "agent/json_out.h"
#include "agent/map_bulk.h"

const char *cc_algo_name(uint32_t algo)
{
	switch (algo) {
	case MRC_CC_NONE:
		return "none";
	case MRC_CC_NSCC:
		return "nscc";
	}
	return "?";
}

void cc_view_json_members(FILE *f, const struct mrc_cc_view *v)
{
	fputs("\"algo\": ", f);
	json_string(f, cc_algo_name(v->algo));
	fprintf(f, ", \"cwnd\": %u, \"inflight\": %u, \"waiting\": %u"
		", \"base_rtt_ns\": %u, \"min_rtt_ns\": %u, \"avg_delay_ns\": %u"
		", \"target_ns\": %u, \"n_md\": %" PRIu64 ", \"n_fast\": %" PRIu64
		", \"n_qa\": %" PRIu64 ", \"n_trims\": %" PRIu64 ", \"n_losses\": %" PRIu64
		", \"acked_bytes\": %" PRIu64 ", \"rtt_samples\": %" PRIu64
		", \"rtt_p50_us\": %.3f, \"rtt_p99_us\": %.3f",
		v->cwnd, v->inflight, v->waiting, v->base_rtt_ns, v->min_rtt_ns,
		v->avg_delay_ns, v->target_ns, (uint64_t)v->n_md, (uint64_t)v->n_fast,
		(uint64_t)v->n_qa, (uint64_t)v->n_trims, (uint64_t)v->n_losses,
		(uint64_t)v->acked_bytes, cc_rtt_samples(v),
		cc_rtt_percentile_ns(v, 50) / 1e3, cc_rtt_percentile_ns(v, 99) / 1e3);
}

/*
 * mrc_qps, through user/common/pins.h: its shape and mrc_cfg's ABI
 * version checked, so a value of another build is never misread.
 */
static int open_qps(const char *pin_dir, int *fd, char *err, size_t errlen)
{
	static const enum mrc_pin qps = MRC_PIN_QPS;
	struct mrc_pins p;
	int rc;

	rc = mrc_pins_open(&p, pin_dir, &qps, 1, err, errlen);
	if (rc)
		return rc;
	*fd = p.fd[MRC_PIN_QPS];
	p.fd[MRC_PIN_QPS] = -1;
	mrc_pins_close(&p);
	return 0;
}

static int open_view(const char *pin_dir, int *fd, char *err, size_t errlen)
{
	char path[512];
	int rc;

	rc = mrc_pin_open(pin_dir, MRC_PIN_CC_VIEW, err, errlen);
	if (rc >= 0) {
		*fd = rc;
		return 0;
	}
	if (rc == -ENOENT && !mrc_pin_path(path, sizeof(path), pin_dir,
					   MRC_PIN_CC_VIEW, NULL, 0))
		return fail(-ENOENT, err, errlen, "%s is missing: the fast path mrcd "
			    "loaded has no congestion control (an older mrcd?)", path);
	return rc;
}

int cc_view_open(struct cc_view_src *s, const char *pin_dir, uint32_t qpn,
		 char *err, size_t errlen)
{
	struct mrc_qp_info qi;
	uint32_t key = mrc_qpn_to_slot(qpn);
	int rc;

	s->fd_qps = s->fd_view = -1;
	s->slot = 0;
	rc = open_qps(pin_dir, &s->fd_qps, err, errlen);
	if (rc)
		return rc;
	memset(&qi, 0, sizeof(qi));
	if (!qpn || bpf_map_lookup_elem(s->fd_qps, &key, &qi))
		return fail(qpn ? -errno : -EINVAL, err, errlen, "reading QP %u in "
			    "mrc_qps: %s", qpn, qpn ? strerror(errno) : "no such QP");
	if (!qi.cc_slot)
		return 0;
	rc = open_view(pin_dir, &s->fd_view, err, errlen);
	if (rc)
		return rc;
	/* The windows mrcd sized mrc_cc_view for (one per QP, --max-qps). */
	if (qi.cc_slot > map_max_entries(s->fd_view))
		return fail(-ERANGE, err, errlen, "QP %u names window %u, beyond "
			    "the %u of mrc_cc_view", qpn, qi.cc_slot,
			    map_max_entries(s->fd_view));
	s->slot = qi.cc_slot;
	return 0;
}

int cc_view_read(const struct cc_view_src *s, struct mrc_cc_view *v)
{
	if (!s->slot || s->fd_view < 0)
		return -ENOENT;
	/* The window's own map (-ENOENT once its process gave it back). */
	return mrc_qp_state_read(s->fd_view, s->slot - 1, 0, v, sizeof(*v));
}

void cc_view_close(struct cc_view_src *s)
{
	if (s->fd_view >= 0)
		close(s->fd_view);
	if (s->fd_qps >= 0)
		close(s->fd_qps);
	s->fd_qps = s->fd_view = -1;
}
