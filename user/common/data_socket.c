// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* A context's data socket (data_socket.h). */
#include <errno.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/data_socket.h"

int mrc_data_socket_open(void)
{
	struct sockaddr_in6 addr = { .sin6_family = AF_INET6 };
	int off = 0, size = 8 << 20, rcv_size = 64 << 20;
	int fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0), err;

	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	/*
	 * Room for every QP's whole window at once: when the process is off
	 * the CPU for a few ms, a full socket would drop packets, which the
	 * sender must take for losses on the paths that carried them and
	 * demote good EVs. 64 MiB (a cap, not an allocation) holds 4096
	 * 9000-byte packets at the kernel's accounting of about 2x.
	 */
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv_size, sizeof(rcv_size));
	setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof(size));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr))) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}
