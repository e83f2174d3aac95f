// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's libmrc helpers, the same for both roles: opening the context,
 * naming completion statuses and async events, checking what the peer
 * sent in the exchange, and RESET->INIT->RTR->RTS.
 */
#include "perf.h"

#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

const char *status_str(enum mrc_wc_status status)
{
	const char *s = mrc_wc_status_str(status);

	return s ? s : "unknown status";
}

/* The one context of this process; on failure, why in `err`. */
struct mrc_context *open_context(const char *pin_dir, char *err, size_t len)
{
	struct mrc_context_attr attr = { .pin_dir = pin_dir };
	struct mrc_context *ctx = mrc_open(pin_dir ? &attr : NULL);

	if (!ctx)
		snprintf(err, len, "cannot open libmrc (maps in %s): %s: is mrcd running?",
			 pin_dir ? pin_dir : MRC_DEFAULT_PIN_DIR, strerror(errno));
	return ctx;
}

const char *async_event_name(enum mrc_async_event_type type)
{
	switch (type) {
	case MRC_EVENT_QP_FATAL:
		return "QP fatal error";
	case MRC_EVENT_QP_ACCESS_ERR:
		return "QP access error";
	}
	return "unknown event";
}

/* Print every pending asynchronous event; how many there were. */
int print_async_events(struct mrc_context *ctx)
{
	struct mrc_async_event ev;
	int n = 0;

	while (n < ASYNC_DRAIN_MAX && mrc_get_async_event(ctx, &ev) == 0) {
		report("async event: %s on qp %u: %s", async_event_name(ev.type),
		       ev.qp_num, status_str(ev.status));
		n++;
	}
	return n;
}

/* What each side needs to hear from the other before bringing its QP up. */
int check_peer_params(const struct mrc_conn_params *p, char *err, size_t len)
{
	if (!p->qpn || p->qpn > 0xffffff)
		snprintf(err, len, "peer sent an invalid QP number %u", p->qpn);
	else if (p->psn > 0xffffff)
		snprintf(err, len, "peer sent an invalid PSN 0x%x", p->psn);
	else if (!p->n_addrs || p->n_addrs > MRC_MAX_PLANES)
		snprintf(err, len, "peer sent %u plane addresses (want 1..%d)",
			 p->n_addrs, MRC_MAX_PLANES);
	else if (p->path_mtu < MTU_MIN || p->path_mtu > MTU_MAX)
		snprintf(err, len, "peer sent path_mtu %u (want %d..%d)",
			 p->path_mtu, MTU_MIN, MTU_MAX);
	else if (p->key == 0 || p->key == MRC_QP_KEY_INTEROP)
		snprintf(err, len, "peer sent no connection key (0x%08x)", p->key);
	else
		return 0;
	return -EPROTO;
}

void fill_conn_params(struct mrc_conn_params *p, struct mrc_qp *qp,
		      const struct sockaddr_storage *addrs, int n_addrs,
		      uint32_t path_mtu, const struct mrc_mr *mr,
		      const void *buf, uint64_t len)
{
	uint32_t psn;

	/* A fresh random start PSN, so a stale packet of an earlier run
	 * cannot fall into this one's window. */
	if (getrandom(&psn, sizeof(psn), GRND_NONBLOCK) != (ssize_t)sizeof(psn))
		psn = (uint32_t)now_ns() ^ ((uint32_t)getpid() * 2654435761u);
	memset(p, 0, sizeof(*p));
	p->qpn = mrc_qp_num(qp);
	p->key = mrc_qp_key(qp);
	p->psn = psn & 0xffffff;
	p->path_mtu = path_mtu;
	if (mr) {
		p->rkey = mrc_mr_rkey(mr);
		p->vaddr = (uint64_t)(uintptr_t)buf;
		p->length = len;
	}
	p->n_addrs = (uint8_t)n_addrs;
	memcpy(p->addrs, addrs, (size_t)n_addrs * sizeof(p->addrs[0]));
}

struct qp_tuning client_qp_tuning(const struct opts *o, uint32_t local_mtu,
				  uint32_t remote_mtu)
{
	struct qp_tuning t = {
		.path_mtu = local_mtu < remote_mtu ? local_mtu : remote_mtu,
		.mpr_units = o->mpr_units,
		.ack_timeout = o->ack_timeout,
		.retry_cnt = o->retry_cnt,
		.exp_retry_cnt = o->exp_retry_cnt,
		.imm = o->imm,
		.wimm_out = (uint16_t)o->depth,
		.wimm_in = 1,
		.cc_profile = o->cc_profile,
		.ev_profile = o->ev_profile,
	};

	return t;
}

/*
 * RESET->INIT->RTR->RTS as in verbs. The receive side (peer QP, PSN and
 * addresses, MTU, window) and the retry policy go with RTR, our own start
 * PSN with RTS. `step` names the transition that failed.
 */
int qp_bring_up(struct mrc_qp *qp, const struct mrc_conn_params *local,
		const struct mrc_conn_params *remote,
		const struct qp_tuning *t, const char **step)
{
	struct mrc_qp_attr attr;
	int mask, ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = MRC_QP_INIT;
	*step = "RESET->INIT";
	ret = mrc_modify_qp(qp, &attr, MRC_QP_ATTR_STATE);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = MRC_QP_RTR;
	attr.path_mtu = t->path_mtu;
	attr.rq_psn = remote->psn;
	attr.dest_qpn = remote->qpn;
	attr.dest_key = remote->key;
	attr.mpr_units = t->mpr_units;
	attr.timeout = t->ack_timeout;
	attr.retry_cnt = t->retry_cnt;
	attr.exp_retry_cnt = t->exp_retry_cnt;
	attr.n_peer_addrs = remote->n_addrs;
	memcpy(attr.peer_addrs, remote->addrs,
	       (size_t)remote->n_addrs * sizeof(attr.peer_addrs[0]));
	mask = MRC_QP_ATTR_STATE | MRC_QP_ATTR_PATH_MTU | MRC_QP_ATTR_RQ_PSN |
	       MRC_QP_ATTR_DEST_QPN | MRC_QP_ATTR_DEST_KEY |
	       MRC_QP_ATTR_PEER_ADDRS | MRC_QP_ATTR_MPR |
	       MRC_QP_ATTR_TIMEOUT | MRC_QP_ATTR_RETRY;
	if (t->imm) {
		/* Let `depth` WRITE-IMMs fly: the server posted receives for them. */
		attr.max_wimm_out = t->wimm_out;
		attr.max_wimm_in = t->wimm_in;
		mask |= MRC_QP_ATTR_WIMM;
	}
	if (t->cc_profile >= 0) {
		attr.cc_profile_id = (uint16_t)t->cc_profile;
		mask |= MRC_QP_ATTR_CC_PROFILE;
	}
	if (t->ev_profile >= 0) {
		attr.ev_profile_id = (uint16_t)t->ev_profile;
		mask |= MRC_QP_ATTR_EV_PROFILE;
	}
	*step = "INIT->RTR";
	ret = mrc_modify_qp(qp, &attr, mask);
	if (ret)
		return ret;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = MRC_QP_RTS;
	attr.sq_psn = local->psn;
	*step = "RTR->RTS";
	return mrc_modify_qp(qp, &attr, MRC_QP_ATTR_STATE | MRC_QP_ATTR_SQ_PSN);
}
