// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-forge: test-only forger of MRC packets (tests/e2e/auth.sh), built
 * into build/tests/, never installed.
 *
 *   mrc-forge --dst ADDR --qpn N --kind sack|nack|write|probe --psn P
 *             [--spread S] [--count C] [--pps R] [--key K]
 *             [--src ADDR] [--spoof-src ADDR] [--vaddr V --rkey R --len L]
 *
 * Sends C packets to ADDR:4791, each a well-formed MRC packet for the live
 * QP N, PSNs P, P+1, ... P+S-1 in turn, with a guessed connection key (a
 * fresh getrandom() value per packet unless --key): what a sender knows
 * that sees the QP number and the PSNs but not the key.
 *   sack   cumulative ack = the PSN, every bit of the bitmap set
 *   nack   fatal (REMOTE_ACCESS) NACK of the PSN, cumulative ack PSN - 1
 *   write  WRITE_ONLY of --len bytes (0xEE) at --vaddr with --rkey
 *   probe  reliability probe
 * From an ordinary UDP socket (any user; --src binds its address), or,
 * with --spoof-src (IPv4, needs CAP_NET_RAW), from a raw socket with a
 * forged source address: an off-path sender. Prints "sent N".
 * Exit 0, 1 on a runtime error, 2 on a usage error.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mrc/wire_build.h"

#define MRC_PORT	4791
#define MAX_LEN		4096

enum kind { K_SACK, K_NACK, K_WRITE, K_PROBE };

struct opts {
	const char *dst, *src, *spoof;
	uint32_t qpn, psn, spread, count, pps, rkey, len;
	uint64_t vaddr;
	int kind, fixed_key;
	uint32_t key;
};

static void usage(int rc)
{
	fprintf(rc ? stderr : stdout,
		"usage: mrc-forge --dst ADDR --qpn N --kind sack|nack|write|probe --psn P\n"
		"                 [--spread S] [--count C] [--pps R] [--key K] [--src ADDR]\n"
		"                 [--spoof-src ADDR] [--vaddr V --rkey R --len L]\n");
	exit(rc);
}

static uint32_t guessed_key(const struct opts *o)
{
	uint32_t k;

	if (o->fixed_key)
		return o->key;
	if (getrandom(&k, sizeof(k), 0) != sizeof(k)) {
		perror("getrandom");
		exit(1);
	}
	return k;
}

/* The MRC headers and payload of packet i: its length. */
static size_t build(uint8_t *m, const struct opts *o, uint32_t i)
{
	uint32_t psn = (o->psn + i % o->spread) & MRC_PSN_MASK, key = guessed_key(o);

	switch (o->kind) {
	case K_SACK: {
		struct mrc_sack_pkt p;

		mrc_wire_sack(&p, &(struct mrc_sack_fields){
			.bitmap = ~0ull, .dqpn = o->qpn, .psn = psn + 1, .cack = psn,
			.ev = 0xc000, .key = key });
		memcpy(m, &p, sizeof(p));
		return sizeof(p);
	}
	case K_NACK: {
		struct mrc_nack_pkt p;

		mrc_wire_nack(&p, &(struct mrc_nack_fields){
			.dqpn = o->qpn, .psn = psn, .cack = psn - 1, .ev = 0xc000,
			.key = key, .reason = MRC_NACK_REMOTE_ACCESS });
		memcpy(m, &p, sizeof(p));
		return sizeof(p);
	}
	case K_WRITE: {
		struct mrc_bth bth;
		struct mrc_meth meth = { 0, 0 };
		struct mrc_reth reth = { .vaddr = htobe64(o->vaddr), .rkey = htonl(o->rkey),
					 .length = htonl(o->len) };
		size_t n = 0;

		mrc_wire_bth(&bth, MRC_OP_WRITE_ONLY, key, o->qpn, psn, 0);
		memcpy(m + n, &bth, sizeof(bth));
		n += sizeof(bth);
		memcpy(m + n, &meth, sizeof(meth));
		n += sizeof(meth);
		memcpy(m + n, &reth, sizeof(reth));
		n += sizeof(reth);
		memset(m + n, 0xEE, o->len);
		return n + o->len;
	}
	default: {
		struct mrc_bth bth;

		mrc_wire_bth(&bth, MRC_OP_PROBE, key, o->qpn, psn, MRC_BTH_F_ACK_REQ);
		memcpy(m, &bth, sizeof(bth));
		return sizeof(bth);
	}
	}
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

static uint32_t csum_add(uint32_t sum, const uint8_t *p, size_t len)
{
	for (size_t i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)p[i] << 8 | p[i + 1];
	if (len & 1)
		sum += (uint32_t)p[len - 1] << 8;
	return sum;
}

/* IPv4 + UDP around the MRC bytes, from `src` (host order checksums). */
static size_t spoofed_frame(uint8_t *f, struct in_addr src, struct in_addr dst,
			    const uint8_t *m, size_t mlen, uint16_t sport)
{
	size_t ulen = 8 + mlen, tot = 20 + ulen;
	uint8_t *u = f + 20;
	uint32_t sum;
	uint16_t c;

	memset(f, 0, 28);
	f[0] = 0x45;
	f[2] = (uint8_t)(tot >> 8);
	f[3] = (uint8_t)tot;
	f[6] = 0x40;			/* DF */
	f[8] = 64;
	f[9] = IPPROTO_UDP;
	memcpy(f + 12, &src, 4);
	memcpy(f + 16, &dst, 4);
	c = csum_fold(csum_add(0, f, 20));
	f[10] = (uint8_t)(c >> 8);
	f[11] = (uint8_t)c;
	u[0] = (uint8_t)(sport >> 8);
	u[1] = (uint8_t)sport;
	u[2] = MRC_PORT >> 8;
	u[3] = MRC_PORT & 0xff;
	u[4] = (uint8_t)(ulen >> 8);
	u[5] = (uint8_t)ulen;
	memcpy(u + 8, m, mlen);
	sum = csum_add(0, f + 12, 8) + IPPROTO_UDP + (uint32_t)ulen;
	c = csum_fold(csum_add(sum, u, ulen));
	if (!c)
		c = 0xffff;
	u[6] = (uint8_t)(c >> 8);
	u[7] = (uint8_t)c;
	return tot;
}

static void pace(const struct opts *o, uint32_t i, const struct timespec *t0)
{
	struct timespec now, until;
	uint64_t due_ns;

	if (!o->pps)
		return;
	due_ns = (uint64_t)i * 1000000000ull / o->pps;
	until.tv_sec = t0->tv_sec + (time_t)(due_ns / 1000000000ull);
	until.tv_nsec = t0->tv_nsec + (long)(due_ns % 1000000000ull);
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (now.tv_sec < until.tv_sec ||
	    (now.tv_sec == until.tv_sec && now.tv_nsec < until.tv_nsec))
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL);
}

static int open_socket(const struct opts *o, struct sockaddr_in *to)
{
	int one = 1, s;

	memset(to, 0, sizeof(*to));
	to->sin_family = AF_INET;
	to->sin_port = htons(MRC_PORT);
	if (inet_pton(AF_INET, o->dst, &to->sin_addr) != 1) {
		fprintf(stderr, "mrc-forge: --dst %s: not an IPv4 address\n", o->dst);
		exit(2);
	}
	if (o->spoof) {
		s = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
		if (s >= 0 && setsockopt(s, IPPROTO_IP, IP_HDRINCL, &one, sizeof(one)))
			s = -1;
		return s;
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s >= 0 && o->src) {
		struct sockaddr_in from = { .sin_family = AF_INET };

		if (inet_pton(AF_INET, o->src, &from.sin_addr) != 1 ||
		    bind(s, (struct sockaddr *)&from, sizeof(from))) {
			fprintf(stderr, "mrc-forge: --src %s: cannot bind\n", o->src);
			exit(1);
		}
	}
	return s;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "dst", 1, 0, 'd' }, { "qpn", 1, 0, 'q' }, { "kind", 1, 0, 'k' },
		{ "psn", 1, 0, 'p' }, { "spread", 1, 0, 'S' }, { "count", 1, 0, 'c' },
		{ "pps", 1, 0, 'r' }, { "key", 1, 0, 'K' }, { "src", 1, 0, 's' },
		{ "spoof-src", 1, 0, 'f' }, { "vaddr", 1, 0, 'v' }, { "rkey", 1, 0, 'R' },
		{ "len", 1, 0, 'l' }, { "help", 0, 0, 'h' }, { 0, 0, 0, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->kind = -1;
	o->spread = 1;
	o->count = 1;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'd': o->dst = optarg; break;
		case 'q': o->qpn = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'p': o->psn = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'S': o->spread = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'c': o->count = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'r': o->pps = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'K': o->key = (uint32_t)strtoul(optarg, NULL, 0); o->fixed_key = 1; break;
		case 's': o->src = optarg; break;
		case 'f': o->spoof = optarg; break;
		case 'v': o->vaddr = strtoull(optarg, NULL, 0); break;
		case 'R': o->rkey = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'l': o->len = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'k':
			o->kind = !strcmp(optarg, "sack") ? K_SACK : !strcmp(optarg, "nack") ? K_NACK :
				  !strcmp(optarg, "write") ? K_WRITE : !strcmp(optarg, "probe") ? K_PROBE : -1;
			break;
		case 'h': usage(0); break;
		default: usage(2);
		}
	}
	if (!o->dst || !o->qpn || o->kind < 0 || !o->spread || o->len > 1024)
		usage(2);
}

int main(int argc, char **argv)
{
	uint8_t m[MAX_LEN], frame[MAX_LEN + 28];
	struct sockaddr_in to;
	struct in_addr spoof = { 0 };
	struct timespec t0;
	struct opts o;
	uint32_t sent = 0;
	int s;

	parse(argc, argv, &o);
	if (o.spoof && inet_pton(AF_INET, o.spoof, &spoof) != 1)
		usage(2);
	s = open_socket(&o, &to);
	if (s < 0) {
		fprintf(stderr, "mrc-forge: socket: %s\n", strerror(errno));
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (uint32_t i = 0; i < o.count; i++) {
		size_t len = build(m, &o, i);
		ssize_t n;

		pace(&o, i, &t0);
		if (o.spoof) {
			len = spoofed_frame(frame, spoof, to.sin_addr, m, len,
					    (uint16_t)(0xc000 | (i & 0x3fff)));
			n = sendto(s, frame, len, 0, (struct sockaddr *)&to, sizeof(to));
		} else {
			n = sendto(s, m, len, 0, (struct sockaddr *)&to, sizeof(to));
		}
		sent += n == (ssize_t)len;
	}
	printf("sent %u\n", sent);
	close(s);
	return sent == o.count ? 0 : 1;
}
