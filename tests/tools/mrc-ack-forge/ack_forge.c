// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-ack-forge: forged acknowledgements for tests/e2e/ack_attacks.sh
 * (test-only: built into build/tests/, never installed).
 *
 * Runs on the responder's host, as an attacker there could: it finds the
 * responder QP in RTS in the pinned maps, reads its cumulative ack, and
 * sends the requester (the QP's first peer address, UDP 4791, from this
 * host's address) acknowledgements that are otherwise valid (right QP
 * number, PSN in the sent window):
 *   nack  NACKs with a reason (default TRIMMED): a NACK storm, in turn
 *         for cack + 1 .. cack + SPREAD (--spread, default 1): the PSNs
 *         the responder lacks, in flight or lost
 *   sack  SACKs acking the 64 PSNs above the cack, older cack and trigger
 *         (no evidence against the bits, no RTT sample): PSNs not
 *         delivered (lost, in flight) look acknowledged
 * at --rate packets per second until --count are sent or --seconds pass.
 * Prints one JSON line {"sent": N, "qpn": Q} at the end.
 *
 * It plays a peer that misbehaves, not a blind one: it carries the
 * requester's connection key (the responder QP's peer_key, read from the
 * maps as root), so the packets pass XDP's key check and exercise the
 * rules behind it. Blind forgers are tests/e2e/auth.sh's. Every BTH is
 * built by forge_bth() alone.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "mrc/abi.h"
#include "mrc/wire_build.h"
#include "common/qpmaps.h"

struct opts {
	const char *mode, *pin_dir;
	unsigned long count, rate, spread;
	double seconds, wait_s;
	unsigned reason;
};

struct target {
	int rx_fd;
	__u32 slot, remote_qpn;
	__u32 state_idx;	/* its entry in mrc_rx's block */
	__u32 key;		/* the requester QP's connection key */
	struct sockaddr_in6 to;
};

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* The one place a forged packet's BTH is written. */
static void forge_bth(struct mrc_bth *bth, const struct target *t, __u8 opcode,
		      __u32 psn)
{
	mrc_wire_bth(bth, opcode, t->key, t->remote_qpn, psn, 0);
}

static int open_pin(const char *dir, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bpf_obj_get(path);
}

/* The first responder QP in RTS; 0, or -1 when there is none (yet). */
static int find_target(const struct opts *o, struct target *t)
{
	int qps = open_pin(o->pin_dir, "mrc_qps");
	struct bpf_map_info mi = {};
	__u32 len = sizeof(mi);
	int err = -1;

	if (qps < 0)
		return -1;
	/* As many slots as mrcd sized the map for (--max-qps). */
	if (bpf_obj_get_info_by_fd(qps, &mi, &len))
		mi.max_entries = 0;
	for (__u32 slot = 0; slot < mi.max_entries && err; slot++) {
		struct mrc_qp_info info;

		if (bpf_map_lookup_elem(qps, &slot, &info) ||
		    info.state != MRC_QPS_RTS || !info.n_peer_addrs)
			continue;
		t->slot = slot;
		t->state_idx = info.state_idx;
		t->remote_qpn = info.remote_qpn;
		t->key = info.peer_key;
		memset(&t->to, 0, sizeof(t->to));
		t->to.sin6_family = AF_INET6;
		t->to.sin6_port = htons(MRC_UDP_PORT_DEFAULT);
		memcpy(&t->to.sin6_addr, info.peer_addrs[0], 16);
		err = 0;
	}
	close(qps);
	return err;
}

static int read_cack(const struct target *t, __u32 *cack)
{
	struct mrc_rx_state rx;

	/* The QP's entry of its rx state map, through mrc_rx by id. */
	if (mrc_qp_state_read(t->rx_fd, t->slot, t->state_idx, &rx, sizeof(rx)))
		return -1;
	*cack = rx.cack;
	return 0;
}

static size_t build_nack(void *buf, const struct opts *o, const struct target *t,
			 __u32 cack, unsigned long n)
{
	struct mrc_nack_fields f = {
		.dqpn = t->remote_qpn, .psn = cack + 1 + (__u32)(n % o->spread),
		.cack = cack,
		.reason = (__u8)o->reason, .key = t->key,
	};
	struct mrc_nack_pkt *p = buf;

	mrc_wire_nack(p, &f);
	forge_bth(&p->bth, t, MRC_OP_NACK, f.psn);
	return sizeof(*p);
}

/*
 * Bits for cack + 1 .. cack + 64 under a cumulative ack 8 older than the
 * responder's: the requester's snd_una is past that one, so the SACK
 * contradicts nothing it knows; its trigger is as old (no RTT sample).
 */
static size_t build_sack(void *buf, const struct target *t, __u32 cack)
{
	struct mrc_sack_fields f = {
		.dqpn = t->remote_qpn, .psn = cack - 8, .cack = cack - 8,
		.bitmap = ~0ULL, .bitmap_off = 8, .key = t->key,
	};
	struct mrc_sack_pkt *p = buf;

	mrc_wire_sack(p, &f);
	forge_bth(&p->bth, t, MRC_OP_SACK, f.psn);
	return sizeof(*p);
}

static int usage(void)
{
	fprintf(stderr,
		"usage: mrc-ack-forge nack|sack [--pin-dir DIR] [--count N] [--rate PPS]\n"
		"       [--spread N] [--seconds S] [--wait-s S] [--reason R]\n");
	return 2;
}

static int parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .pin_dir = "/sys/fs/bpf/mrc", .count = 1000,
			    .rate = 10000, .spread = 1, .seconds = 10, .wait_s = 10,
			    .reason = MRC_NACK_TRIMMED };
	if (argc < 2 || (strcmp(argv[1], "nack") && strcmp(argv[1], "sack")))
		return -1;
	o->mode = argv[1];
	for (int i = 2; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];

		if (!strcmp(k, "--pin-dir"))
			o->pin_dir = v;
		else if (!strcmp(k, "--count"))
			o->count = strtoul(v, NULL, 0);
		else if (!strcmp(k, "--rate"))
			o->rate = strtoul(v, NULL, 0);
		else if (!strcmp(k, "--spread"))
			o->spread = strtoul(v, NULL, 0);
		else if (!strcmp(k, "--seconds"))
			o->seconds = strtod(v, NULL);
		else if (!strcmp(k, "--wait-s"))
			o->wait_s = strtod(v, NULL);
		else if (!strcmp(k, "--reason"))
			o->reason = (unsigned)strtoul(v, NULL, 0);
		else
			return -1;
	}
	if (argc % 2 || !o->rate || !o->spread || o->spread > 4096 || o->reason > 0xff)
		return -1;
	return 0;
}

/* Wait (bounded) for the QP under attack to reach RTS. */
static int wait_target(const struct opts *o, struct target *t)
{
	__u64 end = mono_ns() + (__u64)(o->wait_s * 1e9);

	while (find_target(o, t)) {
		if (mono_ns() > end)
			return -1;
		usleep(1000);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct target t;
	unsigned long sent = 0;
	__u64 t0, end, gap;
	int fd;

	if (parse(argc, argv, &o))
		return usage();
	if (wait_target(&o, &t)) {
		fprintf(stderr, "mrc-ack-forge: no QP in RTS in %s\n", o.pin_dir);
		return 1;
	}
	t.rx_fd = open_pin(o.pin_dir, "mrc_rx");
	fd = socket(AF_INET6, SOCK_DGRAM, 0);
	if (t.rx_fd < 0 || fd < 0) {
		perror("mrc-ack-forge: mrc_rx or socket");
		return 1;
	}
	t0 = mono_ns();
	end = t0 + (__u64)(o.seconds * 1e9);
	gap = 1000000000ull / o.rate;
	while (sent < o.count) {
		__u8 buf[64];
		__u64 now = mono_ns(), due = t0 + sent * gap;
		__u32 cack;
		size_t len;

		if (now > end)
			break;
		if (now < due) {
			struct timespec ts = { 0, (long)(due - now) };

			nanosleep(&ts, NULL);
		}
		if (read_cack(&t, &cack))
			break;
		len = !strcmp(o.mode, "nack") ? build_nack(buf, &o, &t, cack, sent) :
						 build_sack(buf, &t, cack);
		if (sendto(fd, buf, len, 0, (struct sockaddr *)&t.to, sizeof(t.to)) < 0 &&
		    errno != ENOBUFS && errno != EAGAIN)
			break;
		sent++;
	}
	printf("{\"sent\": %lu, \"qpn\": %u, \"seconds\": %.3f}\n", sent, t.remote_qpn,
	       (mono_ns() - t0) / 1e9);
	close(fd);
	close(t.rx_fd);
	return 0;
}
