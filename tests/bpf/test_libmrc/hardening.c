// SPDX-License-Identifier: GPL-2.0
/*
 * What a peer must not guess or abuse: QP numbers and rkeys come from
 * getrandom(), not from libc's random() (whose state anyone can re-seed),
 * and a datagram over the receive buffer is dropped and counted, never
 * placed truncated.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "libmrc_test.h"

/*
 * libc's random() restarted from one seed repeats itself; keys and QP
 * numbers must not: re-seeding before each draw changes nothing.
 */
TEST_CASE(test_keys_not_from_random, "libmrc.keys_not_from_random")
{
	enum { ROUNDS = 4 };
	static uint8_t buf[4096];
	uint32_t keys[ROUNDS], qpns[ROUNDS];
	struct mrc_cq *cq = mrc_create_cq(ctx, 4);
	int same_key = 0, same_qpn = 0;

	if (!ASSERT_TRUE(cq != NULL, "create CQ"))
		return;
	for (int i = 0; i < ROUNDS; i++) {
		struct mrc_mr *mr;
		struct mrc_qp *qp;

		srandom(42);
		mr = mrc_reg_mr(ctx, buf, sizeof(buf), MRC_ACCESS_REMOTE_WRITE);
		if (!ASSERT_TRUE(mr != NULL, "reg MR"))
			break;
		keys[i] = mrc_mr_rkey(mr);
		mrc_dereg_mr(mr);
		srandom(42);
		qp = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 1 });
		if (!ASSERT_TRUE(qp != NULL, "create QP"))
			break;
		qpns[i] = mrc_qp_num(qp);
		mrc_destroy_qp(qp);
		if (i) {
			same_key += keys[i] == keys[0];
			same_qpn += qpns[i] == qpns[0];
		}
	}
	ASSERT_EQ(same_key, 0, "rkeys differ after the same srandom()");
	/* 256 numbers: one repeat can be chance, every one cannot. */
	ASSERT_TRUE(same_qpn < ROUNDS - 1, "QP numbers differ after the same srandom()");
	mrc_destroy_cq(cq);
}

/* Many QPs at once: their numbers are not one run of consecutive numbers. */
TEST_CASE(test_qpns_not_a_sequence, "libmrc.qpns_not_a_sequence")
{
	enum { N = 16 };
	struct mrc_qp *qps[N] = { NULL };
	struct mrc_cq *cq = mrc_create_cq(ctx, 4);
	int created = 0, steps = 0;

	if (!ASSERT_TRUE(cq != NULL, "create CQ"))
		return;
	for (; created < N; created++) {
		qps[created] = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 1 });
		if (!qps[created])
			break;
		if (created && mrc_qp_num(qps[created]) ==
			       mrc_qp_num(qps[created - 1]) + 1)
			steps++;
	}
	ASSERT_EQ(created, N, "16 QPs created");
	ASSERT_TRUE(steps < N / 2, "QP numbers are not a sequence");
	for (int i = created - 1; i >= 0; i--)
		mrc_destroy_qp(qps[i]);
	mrc_destroy_cq(cq);
}

/* The UDP port of this process's IPv6 datagram sockets (the context's). */
static int udp_ports(uint16_t *ports, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		struct sockaddr_in6 a;
		socklen_t len = sizeof(a);
		int fd = atoi(e->d_name), type = 0;
		socklen_t tl = sizeof(type);

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) ||
		    type != SOCK_DGRAM ||
		    getsockname(fd, (struct sockaddr *)&a, &len) ||
		    a.sin6_family != AF_INET6 || !a.sin6_port)
			continue;
		ports[n++] = ntohs(a.sin6_port);
	}
	closedir(d);
	return n;
}

/*
 * A datagram larger than libmrc's receive buffer (MRC_MAX_PKT, 9216) that
 * starts like any other: the kernel cuts it (MSG_TRUNC); libmrc drops and
 * counts it (rx_truncated in every QP's counters), places nothing.
 */
TEST_CASE(test_truncated_datagram_dropped, "libmrc.truncated_datagram_dropped")
{
	static uint8_t big[16384];
	struct mrc_qp_counters before, after;
	struct mrc_wc wc;
	uint16_t ports[8];
	struct pair p;
	int n, s, sent = 0;

	memset(&p, 0, sizeof(p));
	if (!ASSERT_EQ(pair_create(&p, 4, 1, 1), 0, "QP pair"))
		return;
	mrc_qp_counters(p.b, &before);
	n = udp_ports(ports, 8);
	s = socket(AF_INET6, SOCK_DGRAM, 0);
	if (!ASSERT_TRUE(n > 0 && s >= 0, "the context's socket found"))
		goto out;
	fill_random(big, sizeof(big), now_ns());
	for (int i = 0; i < n; i++) {
		struct sockaddr_in6 to = { .sin6_family = AF_INET6,
					   .sin6_port = htons(ports[i]),
					   .sin6_addr = IN6ADDR_LOOPBACK_INIT };

		sent += sendto(s, big, sizeof(big), 0, (struct sockaddr *)&to,
			       sizeof(to)) == (ssize_t)sizeof(big);
	}
	ASSERT_TRUE(sent > 0, "oversized datagram sent");
	quiet_for(p.cqb, 50);	/* polling drives the receive path */
	mrc_qp_counters(p.b, &after);
	ASSERT_TRUE(after.rx_truncated >= before.rx_truncated + 1,
		    "the datagram counted in rx_truncated");
	ASSERT_EQ(after.rx_packets, before.rx_packets, "and not taken as a packet");
	ASSERT_EQ(mrc_poll_cq(p.cqb, 1, &wc), 0, "no completion from it");
out:
	if (s >= 0)
		close(s);
	pair_destroy(&p);
}
