// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-udp-blast: plain UDP between two hosts at the best the kernel can
 * do (UDP GSO on send, UDP GRO on receive), verified, to give bench the
 * machine's limit per packet and per byte (docs/PERFORMANCE.md, "limit").
 *
 *   main.c     the command line, signals
 *   net.c      addresses, sockets, the segment layout and its pattern
 *   send.c     the sender: GSO sends round-robin over its sockets,
 *              a window of segments the receiver's credits open
 *   recv.c     the receiver: GRO reads, every segment checked, credits,
 *              one JSON line at the end
 *
 * Wire: every UDP datagram (a GSO segment on the wire) is one segment:
 * struct blast_hdr, then data_len bytes of pattern (pattern_slot(index %
 * BLAST_CYCLE)). The receiver answers every BLAST_CREDIT_EVERY segments,
 * and at the end, with a struct blast_credit to the segment's source.
 */
#ifndef MRC_UDP_BLAST_H
#define MRC_UDP_BLAST_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>

#define PROG			"mrc-udp-blast"
#define DEFAULT_PORT		18600
#define MAX_SOCKS		8		/* one per plane */
#define BLAST_MAGIC		0x4d524355u	/* "UCRM" little-endian */
#define CREDIT_MAGIC		0x4d524343u
#define BLAST_CYCLE		64		/* pattern slots; a GSO send has at most 64 segments */
#define MAX_SEG			9216		/* bytes of one segment (UDP payload) */
#define MIN_SEG			256
#define MAX_GSO_BYTES		65000		/* one GSO send: UDP payload under 64 KiB */
#define MAX_SEGMENTS		(1ull << 28)
#define BLAST_CREDIT_EVERY	32
#define DEFAULT_WINDOW		512		/* segments ahead of the receiver's credit */
#define CREDIT_STALL_MS		3000		/* no credit for this long: give up */
#define DEFAULT_IDLE_MS		2000		/* receiver: silence after the first segment ends it */
#define DEFAULT_TIMEOUT_S	60

struct blast_hdr {
	uint32_t magic;
	uint32_t data_len;	/* pattern bytes after this header */
	uint64_t index;		/* segment number, 0.. */
	uint64_t total;		/* segments in the transfer */
} __attribute__((packed));

struct blast_credit {
	uint32_t magic;
	uint32_t pad;
	uint64_t next;		/* highest index seen + 1 */
	uint64_t received;	/* segments received, good or bad */
} __attribute__((packed));

struct opts {
	bool send, json;
	uint16_t port;
	int n_to, n_from, n_on;
	struct sockaddr_storage to[MAX_SOCKS], from[MAX_SOCKS], on[MAX_SOCKS];
	uint64_t bytes;
	uint32_t seg;		/* 0: from the path MTU */
	uint32_t gso_segs;	/* segments per send; 1 = no GSO */
	uint32_t window;
	uint32_t timeout_s, idle_ms;
};

extern volatile sig_atomic_t stop_flag;

void __attribute__((format(printf, 1, 2))) report(const char *fmt, ...);
void __attribute__((noreturn, format(printf, 1, 2))) usage_error(const char *fmt, ...);
void usage(FILE *f);
void parse_args(int argc, char **argv, struct opts *o);

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* net.c */
int parse_addr_list(const char *s, uint16_t port, struct sockaddr_storage *out, int max);
socklen_t addr_len(const struct sockaddr_storage *ss);
int blast_socket(const struct sockaddr_storage *bind_to, const struct sockaddr_storage *peer);
uint32_t path_seg_bytes(int fd, int family);
/* The data bytes of pattern slot s (s < BLAST_CYCLE), MAX_SEG of them. */
void pattern_slot(uint32_t s, uint8_t *out, size_t len);

int run_send(const struct opts *o);
int run_recv(const struct opts *o);

#endif /* MRC_UDP_BLAST_H */
