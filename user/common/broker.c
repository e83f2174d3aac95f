// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The broker protocol's two ends share this (broker.h): where the apps
 * socket is and how one message with its descriptors goes.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/broker.h"

int mrc_broker_sock_path(const char *ctl_sock_path, char *out, size_t len)
{
	size_t n = strlen(ctl_sock_path);
	const char *ext = ".sock";

	if (n < strlen(ext) || strcmp(ctl_sock_path + n - strlen(ext), ext))
		return -EINVAL;
	n -= strlen(ext);
	if ((size_t)snprintf(out, len, "%.*s%s", (int)n, ctl_sock_path,
			     MRC_BROKER_SOCK_SUFFIX) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int mrc_broker_send(int sock, const void *msg, size_t len, const int *fds,
		    unsigned int n_fds)
{
	char ctl[CMSG_SPACE(sizeof(int) * MRC_BROKER_MAX_FDS)] = {};
	struct iovec iov = { .iov_base = (void *)msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;
	ssize_t n;

	if (n_fds > MRC_BROKER_MAX_FDS)
		return -EINVAL;
	if (n_fds) {
		mh.msg_control = ctl;
		mh.msg_controllen = CMSG_SPACE(sizeof(int) * n_fds);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * n_fds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * n_fds);
	}
	n = sendmsg(sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/* Keep the descriptors a message brought, up to max; close the rest. */
static unsigned int take_fds(struct msghdr *mh, int *fds, unsigned int max)
{
	unsigned int got = 0;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t n;
		int tmp;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			memcpy(&tmp, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (got < max)
				fds[got++] = tmp;
			else
				close(tmp);
		}
	}
	return got;
}

int mrc_broker_recv(int sock, void *msg, size_t len, int *fds,
		    unsigned int max_fds, unsigned int *n_fds)
{
	char ctl[CMSG_SPACE(sizeof(int) * MRC_BROKER_MAX_FDS)];
	struct iovec iov = { .iov_base = msg, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	unsigned int got;
	ssize_t n;

	for (unsigned int i = 0; i < max_fds; i++)
		fds[i] = -1;
	n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC | MSG_TRUNC);
	if (n < 0)
		return -errno;
	got = take_fds(&mh, fds, max_fds);
	if (n_fds)
		*n_fds = got;
	if (n == 0)
		return -ECONNRESET;
	if ((size_t)n != len || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
		for (unsigned int i = 0; i < got; i++) {
			close(fds[i]);
			fds[i] = -1;
		}
		return -EPROTO;
	}
	return 0;
}
