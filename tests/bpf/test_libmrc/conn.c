// SPDX-License-Identifier: GPL-2.0
/*
 * Connection set-up (G): mrc_conn_exchange() over a socketpair and over
 * TCP (mrc_conn_listen / mrc_conn_connect), with peers that misbehave.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "libmrc_test.h"

/* ====================================================================== */
/* G. Connection set-up                                                   */
/* ====================================================================== */

struct xchg {
	int fd;
	struct mrc_conn_params local, remote;
	int ret, err;
};

static void *xchg_thread(void *arg)
{
	struct xchg *x = arg;

	x->ret = mrc_conn_exchange(x->fd, &x->local, &x->remote);
	x->err = errno;
	return NULL;
}

static void set_timeouts(int fd)
{
	struct timeval tv = { .tv_sec = 5 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

static void expect_same_params(const struct mrc_conn_params *got,
			       const struct mrc_conn_params *want, const char *who)
{
	int bad = 0;

	bad += !ASSERT_EQ(got->qpn, want->qpn, "qpn");
	bad += !ASSERT_EQ(got->psn, want->psn, "psn");
	bad += !ASSERT_EQ(got->rkey, want->rkey, "rkey");
	bad += !ASSERT_EQ(got->path_mtu, want->path_mtu, "path_mtu");
	bad += !ASSERT_EQ(got->vaddr, want->vaddr, "vaddr");
	bad += !ASSERT_EQ(got->length, want->length, "length");
	bad += !ASSERT_EQ(got->n_addrs, want->n_addrs, "n_addrs");
	bad += !ASSERT_EQ(got->key, want->key, "key");
	for (int i = 0; i < want->n_addrs && i < got->n_addrs; i++) {
		const struct sockaddr_storage *g = &got->addrs[i], *w = &want->addrs[i];

		bad += !ASSERT_EQ(g->ss_family, w->ss_family, "address family");
		if (w->ss_family == AF_INET)
			bad += !ASSERT_MEM_EQ(&((const struct sockaddr_in *)g)->sin_addr,
					      &((const struct sockaddr_in *)w)->sin_addr,
					      4, "IPv4 address");
		else
			bad += !ASSERT_MEM_EQ(&((const struct sockaddr_in6 *)g)->sin6_addr,
					      &((const struct sockaddr_in6 *)w)->sin6_addr,
					      16, "IPv6 address");
	}
	if (bad)
		fprintf(stderr, "  ... in what %s received\n", who);
}

static void fill_params(struct xchg *x1, struct xchg *x2)
{
	memset(&x1->local, 0, sizeof(x1->local));
	memset(&x2->local, 0, sizeof(x2->local));
	x1->local = (struct mrc_conn_params){
		.qpn = 17, .psn = 0xABCDEF, .rkey = 0xDEADBEEF, .path_mtu = 4096,
		.vaddr = 0x00007fff12345678ull, .length = 1ull << 33, .n_addrs = 2,
		.key = 0x89ABCDEF,
	};
	x1->local.addrs[0] = ss_of(LOCAL4);
	x1->local.addrs[1] = ss_of(LOCAL6);
	x2->local = (struct mrc_conn_params){
		.qpn = 0xFFFFFF, .psn = 1, .rkey = 0, .path_mtu = 9000,
		.vaddr = 0xFFFFFFFFFFFFF000ull, .length = 4096, .n_addrs = 3,
		.key = 0x01020304,
	};
	x2->local.addrs[0] = ss_of("::1");
	x2->local.addrs[1] = ss_of("10.1.2.3");
	x2->local.addrs[2] = ss_of("fe80::1234:5678");
}

/* Both ends exchange at once on fds a and b. */
static void exchange_pair(int a, int b, const char *what)
{
	struct xchg x1 = { .fd = a }, x2 = { .fd = b };
	pthread_t t;

	fill_params(&x1, &x2);
	memset(&x1.remote, 0xEE, sizeof(x1.remote));
	memset(&x2.remote, 0xEE, sizeof(x2.remote));
	if (!ASSERT_EQ(pthread_create(&t, NULL, xchg_thread, &x2), 0, "thread"))
		return;
	xchg_thread(&x1);
	pthread_join(t, NULL);
	ASSERT_EQ(x1.ret, 0, what);
	ASSERT_EQ(x2.ret, 0, what);
	if (x1.ret || x2.ret)
		fprintf(stderr, "  errors: %s / %s\n", strerror(x1.err), strerror(x2.err));
	expect_same_params(&x1.remote, &x2.local, "side 1");
	expect_same_params(&x2.remote, &x1.local, "side 2");
}

TEST_CASE(test_conn_exchange, "libmrc.conn_exchange")
{
	int sv[2];
	uint8_t junk[1024];
	struct mrc_conn_params local, remote;

	/* Over a socketpair: a stream is all it needs. */
	if (!ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0,
		       "socketpair"))
		return;
	set_timeouts(sv[0]);
	set_timeouts(sv[1]);
	exchange_pair(sv[0], sv[1], "exchange over a socketpair");
	/* The same stream can carry a second exchange. */
	exchange_pair(sv[1], sv[0], "second exchange on the same stream");

	/* A peer that sends garbage: -EPROTO. */
	memset(junk, 0xA5, sizeof(junk));
	memset(&local, 0, sizeof(local));
	local.qpn = 1;
	ASSERT_EQ(write(sv[1], junk, sizeof(junk)), (long)sizeof(junk), "send garbage");
	EXPECT_ERR(mrc_conn_exchange(sv[0], &local, &remote), EPROTO,
		   "garbage from the peer");
	close(sv[0]);
	close(sv[1]);

	/* A peer that stops half-way: an error, not a hang. */
	if (!ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0,
		       "socketpair"))
		return;
	set_timeouts(sv[0]);
	ASSERT_EQ(write(sv[1], junk, 10), 10, "send 10 bytes");
	shutdown(sv[1], SHUT_WR);
	errno = 0;
	ASSERT_TRUE(mrc_conn_exchange(sv[0], &local, &remote) < 0,
		    "short message then EOF: an error");
	ASSERT_TRUE(errno != 0, "errno set");
	close(sv[0]);
	close(sv[1]);

	/* Too many addresses to send: refused before anything is sent. */
	if (ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0,
		      "socketpair")) {
		ssize_t n;

		set_timeouts(sv[0]);
		local.n_addrs = MRC_MAX_PLANES + 1;
		EXPECT_ERR(mrc_conn_exchange(sv[0], &local, &remote), EINVAL,
			   "n_addrs 9");
		n = recv(sv[1], junk, sizeof(junk), MSG_DONTWAIT);
		ASSERT_TRUE(n < 0 && errno == EAGAIN, "nothing was sent");
		close(sv[0]);
		close(sv[1]);
	}

	/* Over TCP, with mrc_conn_listen / mrc_conn_connect, IPv4 and IPv6. */
	{
		struct sockaddr_in6 sa;
		socklen_t len = sizeof(sa);
		const char *hosts[] = { "127.0.0.1", "::1", LOCAL4, LOCAL6 };
		int lfd = mrc_conn_listen(0);

		if (!ASSERT_TRUE(lfd >= 0, "mrc_conn_listen"))
			return;
		if (!ASSERT_EQ(getsockname(lfd, (struct sockaddr *)&sa, &len), 0,
			       "getsockname")) {
			close(lfd);
			return;
		}
		for (size_t i = 0; i < sizeof(hosts) / sizeof(hosts[0]); i++) {
			int c = mrc_conn_connect(hosts[i], ntohs(sa.sin6_port), 2000);
			int s;

			if (!ASSERT_TRUE(c >= 0, "mrc_conn_connect")) {
				fprintf(stderr, "  to %s: %s\n", hosts[i], strerror(-c));
				continue;
			}
			s = accept(lfd, NULL, NULL);
			if (ASSERT_TRUE(s >= 0, "accept")) {
				set_timeouts(s);
				set_timeouts(c);
				exchange_pair(c, s, "exchange over TCP");
				close(s);
			}
			close(c);
		}
		close(lfd);
		/* Nobody listens there any more. */
		errno = 0;
		{
			int c = mrc_conn_connect("127.0.0.1", ntohs(sa.sin6_port), 2000);

			ASSERT_EQ(c, -ECONNREFUSED, "connect to a closed port");
			ASSERT_EQ(errno, ECONNREFUSED, "errno ECONNREFUSED");
			if (c >= 0)
				close(c);
		}
	}
}

/*
 * A peer of set-up version 1 (an MRC-XDP without connection keys) sends a
 * 200-byte message: refused with EPROTONOSUPPORT as soon as its header is
 * read, without waiting for the 4 bytes of key it never sends.
 */
TEST_CASE(test_conn_exchange_version1_peer, "libmrc.conn_exchange_version1_peer")
{
	uint8_t v1[200] = { 'M', 'R', 'C', 'X', 0, 1, 1, 0 };
	struct mrc_conn_params local, remote;
	uint8_t ours[512];
	ssize_t n;
	int sv[2];

	if (!ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0,
		       "socketpair"))
		return;
	set_timeouts(sv[0]);
	memset(&local, 0, sizeof(local));
	local.qpn = 3;
	local.key = 0x11223344;
	v1[8 + 3] = 9;			/* its qpn */
	ASSERT_EQ(write(sv[1], v1, sizeof(v1)), (long)sizeof(v1), "send a version-1 message");
	EXPECT_ERR(mrc_conn_exchange(sv[0], &local, &remote), EPROTONOSUPPORT,
		   "version-1 peer refused");
	n = recv(sv[1], ours, sizeof(ours), MSG_DONTWAIT);
	ASSERT_EQ(n, 204, "we sent a version-2 message: 200 bytes + the key");
	if (n >= 6)
		ASSERT_EQ(ours[4] << 8 | ours[5], 2, "version 2");
	close(sv[0]);
	close(sv[1]);
}

/*
 * SUSPECTED BUG: mrc.h says mrc_conn_exchange() returns 0 or -errno. When
 * the peer has already closed the connection, the write() in libmrc
 * raises SIGPIPE, whose default action kills the calling process instead
 * of returning -EPIPE (libmrc neither uses send(MSG_NOSIGNAL) nor
 * SO_NOSIGPIPE-like protection). Run in a child with the default SIGPIPE
 * disposition, as an application that never heard of SIGPIPE has it.
 */
TEST_CASE(test_conn_exchange_peer_closed, "libmrc.conn_exchange_peer_closed")
{
	int sv[2], status = 0;
	pid_t pid;

	if (!ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0,
		       "socketpair"))
		return;
	close(sv[1]);
	pid = fork();
	if (pid == 0) {
		struct mrc_conn_params l, r;
		int ret;

		pin_dir[0] = 0;	/* the parent's: never ours to remove */

		memset(&l, 0, sizeof(l));
		signal(SIGPIPE, SIG_DFL);
		ret = mrc_conn_exchange(sv[0], &l, &r);
		_exit(ret == -EPIPE ? 0 : ret < 0 ? 2 : 3);
	}
	close(sv[0]);
	if (!ASSERT_TRUE(pid > 0, "fork"))
		return;
	ASSERT_EQ(waitpid(pid, &status, 0), pid, "waitpid");
	if (WIFSIGNALED(status))
		fprintf(stderr, "  the process was killed by signal %d (%s)\n",
			WTERMSIG(status), strsignal(WTERMSIG(status)));
	ASSERT_TRUE(WIFEXITED(status), "mrc_conn_exchange returned (not killed by a signal)");
	if (WIFEXITED(status))
		ASSERT_EQ(WEXITSTATUS(status), 0, "it returned -EPIPE");
}
