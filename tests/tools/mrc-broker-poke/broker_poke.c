// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-broker-poke: an application that tries, through mrcd's broker
 * (common/broker.h), what it must not be able to do: change or take
 * another context's QPs, windows and peers, lie about its own context,
 * talk before HELLO, send malformed requests. For tests/e2e/unprivileged.sh,
 * run as an unprivileged user while another context's transfer goes on.
 *
 * usage: mrc-broker-poke [--pin-dir DIR] --victim-slot S --victim-window W
 *                        --victim-peer ADDR --victim-remote-qpn Q
 * Prints one JSON object: each attempt's errno name ("OK" if allowed),
 * e.g. {"publish_other_slot": "EPERM", ...}. Exit 0 once all ran.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/broker.h"
#include "common/run_paths.h"

struct opts {
	const char *pin_dir;
	uint32_t victim_slot, victim_window, victim_remote_qpn;
	uint8_t victim_peer[16];
};

struct ctx {
	int fd;
	uint32_t ctx_slot;
	uint16_t port;
	uint32_t own_slot, own_qpn;
};

static const char *errname(int err)
{
	switch (-err) {
	case 0: return "OK";
	case EPERM: return "EPERM";
	case EINVAL: return "EINVAL";
	case EPROTO: return "EPROTO";
	case EADDRINUSE: return "EADDRINUSE";
	case EALREADY: return "EALREADY";
	case ECONNRESET: return "ECONNRESET";
	case EPIPE: return "EPIPE";
	case EAGAIN: return "EAGAIN";
	default: return "OTHER";
	}
}

static int connect_broker(const char *pin_dir)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct agent_paths paths;
	char err[300];
	int fd;

	if (agent_paths_resolve(pin_dir, &paths, err, sizeof(err)) ||
	    mrc_broker_sock_path(paths.sock_path, sa.sun_path, sizeof(sa.sun_path))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "connect %s: %s\n", sa.sun_path, strerror(errno));
		return -1;
	}
	return fd;
}

/* The port of HELLO's socket, the one our QPs must name. */
static uint16_t socket_port = 0;

static void learn_port(const struct mrc_broker_rep *r, const int *fds, unsigned int n)
{
	struct sockaddr_in6 sa;
	socklen_t len = sizeof(sa);

	if (r->op == MRC_BROKER_HELLO && !r->status && n > MRC_BROKER_FD_SOCKET &&
	    !getsockname(fds[MRC_BROKER_FD_SOCKET], (struct sockaddr *)&sa, &len))
		socket_port = ntohs(sa.sin6_port);
}

/* One request; the reply's status (or a transport error); fds closed. */
static int ask(int fd, struct mrc_broker_req *req, struct mrc_broker_rep *rep)
{
	int fds[MRC_BROKER_MAX_FDS];
	unsigned int n = 0;
	int err;

	req->magic = MRC_BROKER_MAGIC;
	req->version = MRC_BROKER_VERSION;
	err = mrc_broker_send(fd, req, sizeof(*req), NULL, 0);
	if (!err)
		err = mrc_broker_recv(fd, rep, sizeof(*rep), fds, MRC_BROKER_MAX_FDS, &n);
	if (!err)
		learn_port(rep, fds, n);
	for (unsigned int i = 0; i < n; i++)
		close(fds[i]);
	return err ? err : rep->status;
}

static struct mrc_broker_req *new_req(uint16_t op, uint32_t slot)
{
	static struct mrc_broker_req req;

	memset(&req, 0, sizeof(req));
	req.op = op;
	req.slot = slot;
	return &req;
}

static struct mrc_broker_rep rep;

static int hello(struct ctx *c, uint32_t abi)
{
	struct mrc_broker_req *req = new_req(MRC_BROKER_HELLO, 0);
	int err;

	req->arg[0] = abi;
	err = ask(c->fd, req, &rep);
	if (!err)
		c->ctx_slot = rep.val[0];
	return err;
}

/* Our own QP, and the port of our socket (from HELLO's socket). */
static int own_qp(struct ctx *c)
{
	int err = ask(c->fd, new_req(MRC_BROKER_QP_CREATE, 0), &rep);

	if (!err) {
		c->own_qpn = rep.val[0];
		c->own_slot = rep.val[1];
	}
	return err;
}

static struct mrc_qp_info own_info(const struct ctx *c)
{
	return (struct mrc_qp_info){ .state = MRC_QPS_INIT, .ctx = c->ctx_slot,
				     .sock_port = c->port };
}

static void say(const char *name, int err, bool *first)
{
	printf("%s\"%s\": \"%s\"", *first ? "{" : ", ", name, errname(err));
	*first = false;
}

static void attempts(struct ctx *c, const struct opts *o, bool *first)
{
	struct mrc_broker_req *req;
	struct mrc_qp_info info;

	req = new_req(MRC_BROKER_QP_PUBLISH, o->victim_slot);
	req->u.info = own_info(c);
	say("publish_other_slot", ask(c->fd, req, &rep), first);
	say("destroy_other_slot", ask(c->fd, new_req(MRC_BROKER_QP_DESTROY,
						     o->victim_slot), &rep), first);
	req = new_req(MRC_BROKER_QP_MAPS, o->victim_slot);
	req->arg[0] = 64;
	req->arg[1] = 8;
	say("maps_other_slot", ask(c->fd, req, &rep), first);
	say("release_other_window", ask(c->fd, new_req(MRC_BROKER_CC_RELEASE,
						       o->victim_window), &rep), first);
	req = new_req(MRC_BROKER_PEERS_SET, c->own_slot);
	req->arg[0] = o->victim_remote_qpn;
	req->u.peers.n = 1;
	memcpy(req->u.peers.addr[0], o->victim_peer, 16);
	say("peers_take_other", ask(c->fd, req, &rep), first);

	info = own_info(c);
	info.ctx = c->ctx_slot + 1;
	req = new_req(MRC_BROKER_QP_PUBLISH, c->own_slot);
	req->u.info = info;
	say("publish_other_context", ask(c->fd, req, &rep), first);
	info = own_info(c);
	info.sock_port = (uint16_t)(c->port + 1);
	req->u.info = info;
	say("publish_other_port", ask(c->fd, req, &rep), first);
	info = own_info(c);
	info.cc_slot = o->victim_window + 1;
	req->u.info = info;
	say("publish_other_window", ask(c->fd, req, &rep), first);
	info = own_info(c);
	info.n_evs = MRC_MAX_EVS + 1;
	req->u.info = info;
	say("publish_out_of_range", ask(c->fd, req, &rep), first);
	req->u.info = own_info(c);
	say("publish_own", ask(c->fd, req, &rep), first);
	say("hello_twice", hello(c, MRC_ABI_VERSION), first);
}

/* A fresh connection that skips HELLO, one with the wrong ABI, garbage. */
static void protocol_attempts(const struct opts *o, bool *first)
{
	struct ctx c = { .fd = connect_broker(o->pin_dir) };
	char junk[7] = "garbage";
	int err;

	say("before_hello", c.fd < 0 ? -EIO : ask(c.fd, new_req(MRC_BROKER_QP_CREATE, 0),
						   &rep), first);
	close(c.fd);
	c.fd = connect_broker(o->pin_dir);
	say("wrong_abi", c.fd < 0 ? -EIO : hello(&c, MRC_ABI_VERSION + 100), first);
	close(c.fd);
	c.fd = connect_broker(o->pin_dir);
	err = c.fd < 0 ? -EIO : mrc_broker_send(c.fd, junk, sizeof(junk), NULL, 0);
	if (!err)
		err = mrc_broker_recv(c.fd, &rep, sizeof(rep), NULL, 0, NULL);
	say("garbage_dropped", err, first);
	close(c.fd);
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "pin-dir", required_argument, NULL, 'D' },
		{ "victim-slot", required_argument, NULL, 's' },
		{ "victim-window", required_argument, NULL, 'w' },
		{ "victim-peer", required_argument, NULL, 'p' },
		{ "victim-remote-qpn", required_argument, NULL, 'q' },
		{}
	};
	struct in_addr a4;
	int c;

	o->pin_dir = AGENT_PIN_DIR_DEFAULT;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'D': o->pin_dir = optarg; break;
		case 's': o->victim_slot = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'w': o->victim_window = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'q': o->victim_remote_qpn = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'p':
			/* IPv4 as IPv4-mapped, as the peers map keys it. */
			if (inet_pton(AF_INET, optarg, &a4) == 1) {
				o->victim_peer[10] = o->victim_peer[11] = 0xff;
				memcpy(o->victim_peer + 12, &a4, 4);
			} else if (inet_pton(AF_INET6, optarg, o->victim_peer) != 1) {
				fprintf(stderr, "--victim-peer: '%s' is not an address\n", optarg);
				return -1;
			}
			break;
		default:
			return -1;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {};
	struct ctx c;
	bool first = true;
	int err;

	if (parse(argc, argv, &o))
		return 2;
	c.fd = connect_broker(o.pin_dir);
	if (c.fd < 0)
		return 1;
	err = hello(&c, MRC_ABI_VERSION);
	if (!err)
		err = own_qp(&c);
	if (err) {
		fprintf(stderr, "hello/create: %s (%s)\n", errname(err), rep.msg);
		return 1;
	}
	c.port = socket_port;
	attempts(&c, &o, &first);
	protocol_attempts(&o, &first);
	printf("}\n");
	close(c.fd);
	return 0;
}
