// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-hold-qps: create many QPs with libmrc in one process and hold them
 * until SIGTERM, for the e2e tests of mrcctl at scale (tests/e2e/
 * mrcctl_scale.sh). No traffic: --rts M of them are brought to RTS
 * towards --peer (a QP number and key made up: nothing is sent), --error
 * K more are put in ERROR, the rest stay in INIT.
 *
 * usage: mrc-hold-qps --count N [--rts M] [--error K] [--peer ADDR]
 *                     [--pin-dir DIR]
 * Prints "holding N QPs" once they all exist, or what failed (exit 1).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mrc/mrc.h"

struct opts {
	unsigned long count, rts, error;
	const char *peer, *pin_dir;
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "count", required_argument, NULL, 'n' },
		{ "rts", required_argument, NULL, 'r' },
		{ "error", required_argument, NULL, 'e' },
		{ "peer", required_argument, NULL, 'p' },
		{ "pin-dir", required_argument, NULL, 'd' },
		{}
	};
	int c;

	memset(o, 0, sizeof(*o));
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'n': o->count = strtoul(optarg, NULL, 0); break;
		case 'r': o->rts = strtoul(optarg, NULL, 0); break;
		case 'e': o->error = strtoul(optarg, NULL, 0); break;
		case 'p': o->peer = optarg; break;
		case 'd': o->pin_dir = optarg; break;
		default: return -1;
		}
	}
	if (!o->count || o->rts + o->error > o->count || (o->rts && !o->peer)) {
		fprintf(stderr, "usage: mrc-hold-qps --count N [--rts M --peer ADDR] "
			"[--error K] [--pin-dir DIR]\n");
		return -1;
	}
	return 0;
}

static int to_state(struct mrc_qp *qp, enum mrc_qp_state st)
{
	struct mrc_qp_attr a = { .qp_state = st };

	return mrc_modify_qp(qp, &a, MRC_QP_ATTR_STATE);
}

/* INIT -> RTR -> RTS towards a made-up QP of the peer (nothing is sent). */
static int to_rts(struct mrc_qp *qp, const struct sockaddr_storage *peer, uint32_t n)
{
	struct mrc_qp_attr a = {
		.qp_state = MRC_QP_RTR, .path_mtu = 1024, .dest_qpn = n, .rq_psn = n,
		.dest_key = 0x1234567u + n, .mpr_units = 1, .n_peer_addrs = 1,
	};
	int rc;

	a.peer_addrs[0] = *peer;
	rc = mrc_modify_qp(qp, &a, MRC_QP_ATTR_STATE | MRC_QP_ATTR_PATH_MTU |
			   MRC_QP_ATTR_RQ_PSN | MRC_QP_ATTR_DEST_QPN | MRC_QP_ATTR_DEST_KEY |
			   MRC_QP_ATTR_PEER_ADDRS | MRC_QP_ATTR_MPR);
	if (rc)
		return rc;
	memset(&a, 0, sizeof(a));
	a.qp_state = MRC_QP_RTS;
	a.sq_psn = n;
	return mrc_modify_qp(qp, &a, MRC_QP_ATTR_STATE | MRC_QP_ATTR_SQ_PSN);
}

static int peer_addr(const char *s, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &in->sin_addr) == 1) {
		in->sin_family = AF_INET;
		return 0;
	}
	if (inet_pton(AF_INET6, s, &in6->sin6_addr) == 1) {
		in6->sin6_family = AF_INET6;
		return 0;
	}
	return -1;
}

int main(int argc, char **argv)
{
	struct mrc_context_attr ca = {};
	struct sockaddr_storage peer;
	struct mrc_context *ctx;
	struct mrc_qp **qps;
	struct mrc_cq *cq;
	struct opts o;
	unsigned long i;
	int rc = 0;

	if (parse(argc, argv, &o) || (o.peer && peer_addr(o.peer, &peer))) {
		if (o.peer)
			fprintf(stderr, "mrc-hold-qps: '%s' is no address\n", o.peer);
		return 2;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	ca.pin_dir = o.pin_dir;
	ctx = mrc_open(&ca);
	cq = ctx ? mrc_create_cq(ctx, 64) : NULL;
	qps = calloc(o.count, sizeof(*qps));
	if (!ctx || !cq || !qps) {
		fprintf(stderr, "mrc-hold-qps: mrc_open/mrc_create_cq: %s\n", strerror(errno));
		return 1;
	}
	for (i = 0; i < o.count && !rc; i++) {
		struct mrc_qp_init_attr qa = { .send_cq = cq, .recv_cq = cq,
					       .max_send_wr = 4, .max_recv_wr = 4,
					       .max_sge = 1 };

		qps[i] = mrc_create_qp(ctx, &qa);
		if (!qps[i]) {
			rc = -errno;
			break;
		}
		rc = to_state(qps[i], MRC_QP_INIT);
		if (!rc && i < o.rts)
			rc = to_rts(qps[i], &peer, (uint32_t)i + 1);
		else if (!rc && i < o.rts + o.error)
			rc = to_state(qps[i], MRC_QP_ERROR);
	}
	if (rc) {
		fprintf(stderr, "mrc-hold-qps: QP %lu of %lu: %s\n", i + 1, o.count,
			strerror(-rc));
	} else {
		printf("holding %lu QPs\n", o.count);
		fflush(stdout);
		while (!stop)
			pause();
	}
	for (i = 0; i < o.count; i++)
		if (qps[i])
			mrc_destroy_qp(qps[i]);
	mrc_destroy_cq(cq);
	mrc_close(ctx);
	free(qps);
	return rc ? 1 : 0;
}
