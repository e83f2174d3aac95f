// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Out-of-band connection set-up: each side sends the other what it needs
 * to bring one QP to RTS (QP number, first PSN, a region and its key, the
 * MTU and the plane addresses) over an ordinary TCP connection.
 *
 * The message is fixed-size, network byte order, with a magic and a
 * version so that a mismatched peer is an error, not a misread. The
 * header (magic, version) is read first: a peer of another version sends
 * a message of another size, and is told apart before we wait for bytes
 * it never sends.
 *
 * Version 2 adds the QP's connection key (mrc_qp_key()), which the peer
 * puts in every packet to our QP. The key crosses this TCP connection in
 * the clear: whoever can read it can read the packets too.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base.h"

#define CONN_MAGIC	0x4d524358u	/* "MRCX" */
#define CONN_VERSION	2
#define CONN_VERSION_NO_KEY	1	/* before connection keys */

struct wire_addr {
	uint8_t family;		/* 4 or 6 */
	uint8_t pad[3];
	uint8_t addr[16];
} __attribute__((packed));

/* What every version starts with. */
struct wire_head {
	uint32_t magic;
	uint16_t version;
	uint8_t n_addrs;
	uint8_t pad;
} __attribute__((packed));

struct wire_params {
	struct wire_head head;
	uint32_t qpn, psn, rkey, path_mtu;
	uint64_t vaddr, length;
	struct wire_addr addrs[MRC_MAX_PLANES];
	uint32_t key;
} __attribute__((packed));

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		/* A closed peer is an error to report, not a SIGPIPE to die of. */
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int encode(const struct mrc_conn_params *in, struct wire_params *w)
{
	memset(w, 0, sizeof(*w));
	if (in->n_addrs > MRC_MAX_PLANES)
		return -EINVAL;
	w->head.magic = htonl(CONN_MAGIC);
	w->head.version = htons(CONN_VERSION);
	w->head.n_addrs = in->n_addrs;
	w->key = htonl(in->key);
	w->qpn = htonl(in->qpn);
	w->psn = htonl(in->psn);
	w->rkey = htonl(in->rkey);
	w->path_mtu = htonl(in->path_mtu);
	w->vaddr = htobe64(in->vaddr);
	w->length = htobe64(in->length);
	for (int i = 0; i < in->n_addrs; i++) {
		const struct sockaddr_storage *ss = &in->addrs[i];

		if (ss->ss_family == AF_INET) {
			w->addrs[i].family = 4;
			memcpy(w->addrs[i].addr,
			       &((const struct sockaddr_in *)ss)->sin_addr, 4);
		} else if (ss->ss_family == AF_INET6) {
			w->addrs[i].family = 6;
			memcpy(w->addrs[i].addr,
			       &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
		} else {
			return -EAFNOSUPPORT;
		}
	}
	return 0;
}

/* Is the peer's message one we can read? 0 or -errno, said in the log. */
static int check_head(const struct wire_head *h)
{
	uint16_t version = ntohs(h->version);

	if (ntohl(h->magic) != CONN_MAGIC) {
		mrc_log(MRC_LOG_ERROR, "connection set-up: the peer sent no "
			"MRC-XDP parameters (bad magic)");
		return -EPROTO;
	}
	if (version == CONN_VERSION_NO_KEY) {
		mrc_log(MRC_LOG_ERROR, "connection set-up: peer runs an MRC-XDP "
			"without connection keys (set-up version 1, we speak %u); "
			"update it", CONN_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (version != CONN_VERSION) {
		mrc_log(MRC_LOG_ERROR, "connection set-up: peer speaks version "
			"%u, we speak %u", version, CONN_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (h->n_addrs > MRC_MAX_PLANES)
		return -EPROTO;
	return 0;
}

static int decode(const struct wire_params *w, struct mrc_conn_params *out)
{
	int err = check_head(&w->head);

	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->key = ntohl(w->key);
	out->n_addrs = w->head.n_addrs;
	out->qpn = ntohl(w->qpn);
	out->psn = ntohl(w->psn);
	out->rkey = ntohl(w->rkey);
	out->path_mtu = ntohl(w->path_mtu);
	out->vaddr = be64toh(w->vaddr);
	out->length = be64toh(w->length);
	for (int i = 0; i < w->head.n_addrs; i++) {
		struct sockaddr_storage *ss = &out->addrs[i];

		if (w->addrs[i].family == 4) {
			struct sockaddr_in *in = (struct sockaddr_in *)ss;

			in->sin_family = AF_INET;
			memcpy(&in->sin_addr, w->addrs[i].addr, 4);
		} else if (w->addrs[i].family == 6) {
			struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

			in6->sin6_family = AF_INET6;
			memcpy(&in6->sin6_addr, w->addrs[i].addr, 16);
		} else {
			return -EPROTO;
		}
	}
	return 0;
}

int mrc_conn_exchange(int fd, const struct mrc_conn_params *local,
		      struct mrc_conn_params *remote)
{
	struct wire_params out, in;
	int err;

	if (fd < 0 || !local || !remote)
		return mrc_err(EINVAL);
	err = encode(local, &out);
	if (!err)
		err = write_all(fd, &out, sizeof(out));
	if (!err)
		err = read_all(fd, &in.head, sizeof(in.head));
	if (!err)
		err = check_head(&in.head);
	if (!err)
		err = read_all(fd, (uint8_t *)&in + sizeof(in.head),
			       sizeof(in) - sizeof(in.head));
	if (!err)
		err = decode(&in, remote);
	return err ? mrc_err(-err) : 0;
}

int mrc_conn_listen(uint16_t port)
{
	struct sockaddr_in6 addr = {
		.sin6_family = AF_INET6,
		.sin6_port = htons(port),
		.sin6_addr = IN6ADDR_ANY_INIT,
	};
	int fd, on = 1, off = 0;

	fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return mrc_err(errno);
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof(off));
	if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) || listen(fd, 8)) {
		int err = errno;

		close(fd);
		return mrc_err(err);
	}
	return fd;
}

/* connect() with a deadline: a dead peer must not hang the caller. */
static int connect_timeout(int fd, const struct sockaddr *sa, socklen_t len,
			   int timeout_ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLOUT };
	int flags = fcntl(fd, F_GETFL), err = 0;
	socklen_t elen = sizeof(err);

	fcntl(fd, F_SETFL, flags | O_NONBLOCK);
	if (connect(fd, sa, len) && errno != EINPROGRESS)
		return -errno;
	if (poll(&pfd, 1, timeout_ms) != 1)
		return -ETIMEDOUT;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen) || err)
		return -(err ? err : errno);
	fcntl(fd, F_SETFL, flags);
	return 0;
}

int mrc_conn_connect(const char *host, uint16_t port, int timeout_ms)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	char service[8];
	int fd = -1, err = -EHOSTUNREACH;

	if (!host || !*host || timeout_ms <= 0)
		return mrc_err(EINVAL);
	snprintf(service, sizeof(service), "%u", port);
	if (getaddrinfo(host, service, &hints, &res))
		return mrc_err(EHOSTUNREACH);
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		err = connect_timeout(fd, ai->ai_addr, ai->ai_addrlen, timeout_ms);
		if (!err)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	return fd >= 0 ? fd : mrc_err(-err);
}
