// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-perf's control protocol: encoding and decoding the messages of ctl.h,
 * sending them, and peeking at the socket for the next one.
 */
#include "perf.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "ctl.h"

const char *ctl_type_name(uint16_t type)
{
	static const char *const names[] = {
		[CTL_HELLO] = "HELLO", [CTL_HELLO_ACK] = "HELLO_ACK",
		[CTL_BEGIN] = "BEGIN", [CTL_BEGIN_ACK] = "BEGIN_ACK",
		[CTL_VERIFY] = "VERIFY", [CTL_VERIFY_ACK] = "VERIFY_ACK",
		[CTL_DONE] = "DONE", [CTL_DONE_ACK] = "DONE_ACK",
		[CTL_ABORT] = "ABORT", [CTL_ERROR] = "ERROR",
	};

	if (type < sizeof(names) / sizeof(names[0]) && names[type])
		return names[type];
	return "an unknown message";
}

void ctl_msg_init(struct ctl_msg *m, uint16_t type)
{
	memset(m, 0, sizeof(*m));
	m->type = type;
}

static void ctl_encode(const struct ctl_msg *m, struct ctl_wire *w)
{
	memset(w, 0, sizeof(*w));
	w->magic = htonl(CTL_MAGIC);
	w->version = htons(CTL_VERSION);
	w->type = htons(m->type);
	w->status = htonl(m->status);
	w->flags = htonl(m->flags);
	w->length = htobe64(m->length);
	w->offset = htobe64(m->offset);
	w->ops = htobe64(m->ops);
	w->imm_count = htobe64(m->imm_count);
	w->checksum = htobe64(m->checksum);
	w->depth = htonl(m->depth);
	w->timeout_s = htonl(m->timeout_s);
	w->n_qps = htonl(m->n_qps);
	w->ack_timeout = m->ack_timeout;
	w->retry_cnt = m->retry_cnt;
	w->exp_retry_cnt = m->exp_retry_cnt;
	w->mpr_units = m->mpr_units;
	copy_text(w->text, sizeof(w->text), m->text);
}

/* 0, -EBADMSG (not our protocol) or -EPROTONOSUPPORT (other version). */
static int ctl_decode(const uint8_t *buf, struct ctl_msg *m)
{
	struct ctl_wire w;

	memcpy(&w, buf, sizeof(w));
	memset(m, 0, sizeof(*m));
	if (ntohl(w.magic) != CTL_MAGIC)
		return -EBADMSG;
	m->version = ntohs(w.version);
	if (m->version != CTL_VERSION)
		return -EPROTONOSUPPORT;
	m->type = ntohs(w.type);
	m->status = ntohl(w.status);
	m->flags = ntohl(w.flags);
	m->length = be64toh(w.length);
	m->offset = be64toh(w.offset);
	m->ops = be64toh(w.ops);
	m->imm_count = be64toh(w.imm_count);
	m->checksum = be64toh(w.checksum);
	m->depth = ntohl(w.depth);
	m->timeout_s = ntohl(w.timeout_s);
	m->n_qps = ntohl(w.n_qps);
	m->ack_timeout = w.ack_timeout;
	m->retry_cnt = w.retry_cnt;
	m->exp_retry_cnt = w.exp_retry_cnt;
	m->mpr_units = w.mpr_units;
	w.text[sizeof(w.text) - 1] = '\0';
	copy_text(m->text, sizeof(m->text), w.text);
	return 0;
}

void ctl_init(struct ctl_conn *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->fd = fd;
}

bool ctl_alive(const struct ctl_conn *c)
{
	return c->fd >= 0 && !c->closed;
}

/* Sends are small and the socket has SO_SNDTIMEO: they cannot hang. */
int ctl_send(struct ctl_conn *c, const struct ctl_msg *m)
{
	struct ctl_wire w;
	size_t off = 0;
	ssize_t n;

	if (!ctl_alive(c))
		return -ENOTCONN;
	ctl_encode(m, &w);
	while (off < sizeof(w)) {
		n = send(c->fd, (const uint8_t *)&w + off, sizeof(w) - off,
			 MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		off += (size_t)n;
	}
	return 0;
}

/*
 * Peek at the socket without blocking: 1 and *m when a whole message has
 * arrived, 0 when not yet, -ECONNRESET once the peer closed, or the error
 * of ctl_decode(). Reads stop at a message boundary, so the bytes of
 * mrc_conn_exchange() that follow HELLO_ACK stay in the socket for it.
 */
int ctl_poll(struct ctl_conn *c, struct ctl_msg *m)
{
	ssize_t n;
	int ret;

	if (!ctl_alive(c))
		return -ECONNRESET;
	n = recv(c->fd, c->rbuf + c->have, sizeof(c->rbuf) - c->have, MSG_DONTWAIT);
	if (n == 0) {
		c->closed = true;
		return -ECONNRESET;
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
			return 0;
		c->closed = true;
		return -errno;
	}
	c->have += (size_t)n;
	if (c->have < sizeof(c->rbuf))
		return 0;
	c->have = 0;
	/* On a decode error the connection stays open so the server can still
	 * answer ERROR with its own version; callers end the session. */
	ret = ctl_decode(c->rbuf, m);
	c->peer_version = m->version;
	return ret ? ret : 1;
}

/* Why a control read failed, as a phrase about `who`. */
void ctl_describe_error(const struct ctl_conn *c, int err, const char *who,
			char *buf, size_t len)
{
	if (err == -ECONNRESET)
		snprintf(buf, len, "%s closed the control connection", who);
	else if (err == -EBADMSG)
		snprintf(buf, len, "%s does not speak the mrc-perf control protocol (bad magic)",
			 who);
	else if (err == -EPROTONOSUPPORT)
		snprintf(buf, len, "%s speaks control protocol version %u, this mrc-perf speaks %u",
			 who, c->peer_version, CTL_VERSION);
	else
		snprintf(buf, len, "control connection to %s: %s", who, strerror(-err));
}
