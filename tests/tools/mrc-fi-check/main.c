// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * mrc-fi-check: what fi_pingpong does not exercise in the libfabric
 * provider `mrc`, end to end (tests/e2e/libfabric.sh runs both sides):
 *
 *   fi_reject with CM data      -> the client's EQ error FI_ECONNREFUSED + data
 *   fi_connect / fi_accept data -> CONNREQ and CONNECTED carry it
 *   fi_write 1 MiB, fi_writedata -> placed at the target, FI_REMOTE_CQ_DATA
 *   fi_read 1 MiB               -> the target's bytes, via the emulated read
 *   fi_read with a wrong key    -> a CQ error entry FI_EACCES
 *   fi_shutdown                 -> FI_SHUTDOWN on the target's EQ
 *   the peer killed (idle-server, waiting-client)
 *                               -> a CQ error entry and FI_SHUTDOWN
 *   rdm-peer (mrc;ofi_rxm)      -> both sides send first: rxm's crossed
 *                                  connects settle, tagged messages arrive
 *
 * Usage: mrc-fi-check server PORT | mrc-fi-check client HOST PORT, or
 * mrc-fi-check idle-server PORT | mrc-fi-check waiting-client HOST PORT.
 * Prints "ok NAME" per check, "FAIL NAME: why" and exits 1 on the first
 * failure.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <unistd.h>

#define BUF_LEN		(1u << 20)
#define CM_HELLO	"hello-mrc-0123456789abcdef"	/* 26 bytes: >= rxm's 24 */
#define CM_WELCOME	"welcome"
#define CM_GO_AWAY	"go away"
#define WDATA		0xC0FFEEull
#define TIMEOUT_MS	10000

struct ctx {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_ep *ep;
	struct fid_mr *mr;
	uint8_t *buf;
	uint8_t ctrl[64];
};

static void fail(const char *name, const char *why, long code)
{
	printf("FAIL %s: %s (%ld: %s)\n", name, why, code,
	       code ? fi_strerror((int)-code) : "");
	exit(1);
}

static void ok(const char *name)
{
	printf("ok %s\n", name);
	fflush(stdout);
}

static uint8_t pattern(size_t i)
{
	return (uint8_t)(i * 7 + 3);
}

/* The server's own bytes, which the client reads back. */
static uint8_t server_pattern(size_t i)
{
	return (uint8_t)(255 - pattern(i));
}

static struct fi_info *get_info(const char *node, const char *service, uint64_t flags)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	int ret;

	hints->ep_attr->type = FI_EP_MSG;
	hints->caps = FI_MSG | FI_RMA;
	hints->domain_attr->mr_mode = FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY;
	hints->fabric_attr->prov_name = strdup("mrc");
	ret = fi_getinfo(FI_VERSION(1, 17), node, service, flags, hints, &info);
	fi_freeinfo(hints);
	if (ret)
		fail("getinfo", "fi_getinfo", ret);
	return info;
}

/* The next EQ event, which must be `want`; its CM data into `data`. */
static void expect_event(struct ctx *c, uint32_t want, const char *name,
			 struct fi_eq_cm_entry *entry, size_t len)
{
	uint32_t event;
	ssize_t rd = fi_eq_sread(c->eq, &event, entry, len, TIMEOUT_MS, 0);

	if (rd < 0)
		fail(name, "fi_eq_sread", rd);
	if (event != want)
		fail(name, "unexpected EQ event", event);
}

static void wait_cq(struct ctx *c, const char *name, struct fi_cq_data_entry *out)
{
	struct fi_cq_err_entry err;
	ssize_t ret;

	do {
		ret = fi_cq_sread(c->cq, out, 1, NULL, TIMEOUT_MS);
	} while (ret == -FI_EAGAIN);
	if (ret == -FI_EAVAIL) {
		memset(&err, 0, sizeof(err));
		fi_cq_readerr(c->cq, &err, 0);
		fail(name, "CQ error entry", -err.err);
	}
	if (ret != 1)
		fail(name, "fi_cq_sread", ret);
}

static void open_endpoint(struct ctx *c, struct fi_info *info)
{
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_DATA, .size = 64 };
	int ret;

	if (!c->domain && (ret = fi_domain(c->fabric, info, &c->domain, NULL)))
		fail("domain", "fi_domain", ret);
	if (!c->cq && (ret = fi_cq_open(c->domain, &cq_attr, &c->cq, NULL)))
		fail("cq", "fi_cq_open", ret);
	if ((ret = fi_endpoint(c->domain, info, &c->ep, NULL)) ||
	    (ret = fi_ep_bind(c->ep, &c->eq->fid, 0)) ||
	    (ret = fi_ep_bind(c->ep, &c->cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_enable(c->ep)))
		fail("endpoint", "fi_endpoint/bind/enable", ret);
	if (!c->buf) {
		c->buf = calloc(1, BUF_LEN);
		if ((ret = fi_mr_reg(c->domain, c->buf, BUF_LEN, 0, 0, 0, 0, &c->mr, NULL)))
			fail("mr", "fi_mr_reg", ret);
	}
}

static void open_fabric(struct ctx *c)
{
	struct fi_eq_attr eq_attr = { .wait_obj = FI_WAIT_UNSPEC };
	int ret;

	if ((ret = fi_fabric(c->info->fabric_attr, &c->fabric, NULL)) ||
	    (ret = fi_eq_open(c->fabric, &eq_attr, &c->eq, NULL)))
		fail("fabric", "fi_fabric/fi_eq_open", ret);
}

static void post_recv(struct ctx *c)
{
	ssize_t ret = fi_recv(c->ep, c->ctrl, sizeof(c->ctrl), NULL, 0, NULL);

	if (ret)
		fail("recv", "fi_recv", ret);
}

static void send_ctrl(struct ctx *c, const void *p, size_t len)
{
	struct fi_cq_data_entry e;
	ssize_t ret = fi_send(c->ep, p, len, NULL, 0, NULL);

	if (ret)
		fail("send", "fi_send", ret);
	wait_cq(c, "send", &e);
}

/* ---- server --------------------------------------------------------------- */

static int server(const char *port)
{
	struct ctx c = { 0 };
	uint8_t ebuf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *entry = (void *)ebuf;
	struct fi_cq_data_entry e;
	struct fid_pep *pep;
	uint64_t rkey[2];
	uint8_t verdict;
	int ret;

	c.info = get_info(NULL, port, FI_SOURCE);
	open_fabric(&c);
	if ((ret = fi_passive_ep(c.fabric, c.info, &pep, NULL)) ||
	    (ret = fi_pep_bind(pep, &c.eq->fid, 0)) || (ret = fi_listen(pep)))
		fail("listen", "fi_passive_ep/bind/listen", ret);
	printf("ready\n");
	fflush(stdout);

	expect_event(&c, FI_CONNREQ, "reject", entry, sizeof(ebuf));
	if ((ret = fi_reject(pep, entry->info->handle, CM_GO_AWAY, sizeof(CM_GO_AWAY))))
		fail("reject", "fi_reject", ret);
	fi_freeinfo(entry->info);

	expect_event(&c, FI_CONNREQ, "connreq_data", entry, sizeof(ebuf));
	if (memcmp(entry->data, CM_HELLO, sizeof(CM_HELLO)))
		fail("connreq_data", "CONNREQ without the client's CM data", 0);
	ok("connreq_data");
	open_endpoint(&c, entry->info);
	post_recv(&c);
	if ((ret = fi_accept(c.ep, CM_WELCOME, sizeof(CM_WELCOME))))
		fail("accept", "fi_accept", ret);
	expect_event(&c, FI_CONNECTED, "accept", entry, sizeof(ebuf));
	fi_freeinfo(entry->info);

	for (size_t i = 0; i < BUF_LEN; i++)
		c.buf[i] = server_pattern(i);
	rkey[0] = (uint64_t)(uintptr_t)c.buf;
	rkey[1] = fi_mr_key(c.mr);
	send_ctrl(&c, rkey, sizeof(rkey));

	/* The client's fi_writedata comes after its 1 MiB fi_write. */
	wait_cq(&c, "writedata", &e);
	if (!(e.flags & FI_REMOTE_CQ_DATA) || e.data != WDATA)
		fail("writedata", "no FI_REMOTE_CQ_DATA with the data", (long)e.data);
	ok("writedata");
	verdict = 1;
	for (size_t i = 0; i < BUF_LEN; i++)
		if (c.buf[i] != pattern(i))
			verdict = 0;
	/* New bytes of ours for the client to read back. */
	for (size_t i = 0; i < BUF_LEN; i++)
		c.buf[i] = server_pattern(i);
	send_ctrl(&c, &verdict, 1);
	/* Serve the client's reads (manual progress) until it shuts down. */
	for (int i = 0; i < 2000; i++) {
		uint32_t event;

		fi_cq_read(c.cq, &e, 1);
		if (fi_eq_read(c.eq, &event, entry, sizeof(ebuf), 0) > 0 &&
		    event == FI_SHUTDOWN) {
			ok("shutdown_event");
			return 0;
		}
		fi_cq_sread(c.cq, &e, 1, NULL, 5);
	}
	fail("shutdown_event", "no FI_SHUTDOWN after the client's fi_shutdown", 0);
	return 1;
}

/* ---- client ----------------------------------------------------------------- */

static void client_rejected(struct ctx *c)
{
	struct fi_eq_err_entry err = { 0 };
	uint8_t ebuf[sizeof(struct fi_eq_cm_entry) + 256];
	uint8_t data[64] = { 0 };
	uint32_t event;
	ssize_t rd;

	open_endpoint(c, c->info);
	if (fi_connect(c->ep, NULL, "first", 5))
		fail("reject", "fi_connect", 0);
	rd = fi_eq_sread(c->eq, &event, ebuf, sizeof(ebuf), TIMEOUT_MS, 0);
	if (rd != -FI_EAVAIL)
		fail("reject", "no EQ error entry for a rejected connect", rd);
	err.err_data = data;
	err.err_data_size = sizeof(data);
	fi_eq_readerr(c->eq, &err, 0);
	if (err.err != FI_ECONNREFUSED || err.err_data_size != sizeof(CM_GO_AWAY) ||
	    memcmp(data, CM_GO_AWAY, sizeof(CM_GO_AWAY)))
		fail("reject", "not FI_ECONNREFUSED with the reject data", err.err);
	ok("reject");
	fi_close(&c->ep->fid);
	c->ep = NULL;
}

static void rma(struct ctx *c, int read, size_t len, uint64_t addr, uint64_t key,
		uint64_t data, const char *name)
{
	struct fi_cq_data_entry e;
	void *desc = fi_mr_desc(c->mr);
	ssize_t ret;

	if (read)
		ret = fi_read(c->ep, c->buf, len, desc, 0, addr, key, NULL);
	else if (data)
		ret = fi_writedata(c->ep, c->buf, len, desc, data, 0, addr, key, NULL);
	else
		ret = fi_write(c->ep, c->buf, len, desc, 0, addr, key, NULL);
	if (ret)
		fail(name, "posting", ret);
	wait_cq(c, name, &e);
}

static int client(const char *host, const char *port)
{
	struct ctx c = { 0 };
	uint8_t ebuf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *entry = (void *)ebuf;
	struct fi_cq_data_entry e;
	struct fi_cq_err_entry err = { 0 };
	uint64_t raddr, rkey;
	ssize_t ret;

	c.info = get_info(host, port, 0);
	open_fabric(&c);
	client_rejected(&c);

	open_endpoint(&c, c.info);
	post_recv(&c);
	if ((ret = fi_connect(c.ep, NULL, CM_HELLO, sizeof(CM_HELLO))))
		fail("connect", "fi_connect", ret);
	expect_event(&c, FI_CONNECTED, "connect", entry, sizeof(ebuf));
	if (memcmp(entry->data, CM_WELCOME, sizeof(CM_WELCOME)))
		fail("connected_data", "CONNECTED without the server's CM data", 0);
	ok("connected_data");

	wait_cq(&c, "ctrl", &e);
	memcpy(&raddr, c.ctrl, 8);
	memcpy(&rkey, c.ctrl + 8, 8);
	post_recv(&c);

	for (size_t i = 0; i < BUF_LEN; i++)
		c.buf[i] = pattern(i);
	rma(&c, 0, BUF_LEN, raddr, rkey, 0, "write");
	rma(&c, 0, 16, raddr, rkey, WDATA, "writedata");
	wait_cq(&c, "write_placed", &e);
	if (c.ctrl[0] != 1)
		fail("write_placed", "the server found other bytes", 0);
	ok("write_placed");

	memset(c.buf, 0, BUF_LEN);
	rma(&c, 1, BUF_LEN, raddr, rkey, 0, "read");
	for (size_t i = 0; i < BUF_LEN; i++)
		if (c.buf[i] != server_pattern(i))
			fail("read", "other bytes than the server's", (long)i);
	ok("read");

	if ((ret = fi_read(c.ep, c.buf, 64, fi_mr_desc(c.mr), 0, raddr, rkey ^ 1, NULL)))
		fail("read_bad_key", "posting", ret);
	do {
		ret = fi_cq_sread(c.cq, &e, 1, NULL, TIMEOUT_MS);
	} while (ret == -FI_EAGAIN);
	if (ret != -FI_EAVAIL || fi_cq_readerr(c.cq, &err, 0) != 1 ||
	    err.err != FI_EACCES)
		fail("read_bad_key", "no CQ error FI_EACCES", ret == -FI_EAVAIL ? err.err : ret);
	ok("read_bad_key");

	/* Still connected after a refused read. */
	rma(&c, 1, 4096, raddr, rkey, 0, "read_after_error");
	ok("read_after_error");
	fi_shutdown(c.ep, 0);
	return 0;
}

/* ---- a peer that dies ------------------------------------------------------ */

/* Accept one connection, say so, and wait to be killed. */
static int idle_server(const char *port)
{
	struct ctx c = { 0 };
	uint8_t ebuf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *entry = (void *)ebuf;
	struct fid_pep *pep;
	int ret;

	c.info = get_info(NULL, port, FI_SOURCE);
	open_fabric(&c);
	if ((ret = fi_passive_ep(c.fabric, c.info, &pep, NULL)) ||
	    (ret = fi_pep_bind(pep, &c.eq->fid, 0)) || (ret = fi_listen(pep)))
		fail("listen", "fi_passive_ep/bind/listen", ret);
	printf("ready\n");
	fflush(stdout);
	expect_event(&c, FI_CONNREQ, "idle_connreq", entry, sizeof(ebuf));
	open_endpoint(&c, entry->info);
	if ((ret = fi_accept(c.ep, NULL, 0)))
		fail("idle_accept", "fi_accept", ret);
	expect_event(&c, FI_CONNECTED, "idle_accept", entry, sizeof(ebuf));
	ok("connected");
	/* Until killed; a minute at most. */
	for (int i = 0; i < 600; i++) {
		struct fi_cq_data_entry e;

		fi_cq_sread(c.cq, &e, 1, NULL, 100);
	}
	return 1;
}

/*
 * Connect, post a receive that will never be matched, and wait: once the
 * server is killed, the receive must complete in error and the EQ must
 * say FI_SHUTDOWN.
 */
static int waiting_client(const char *host, const char *port)
{
	struct ctx c = { 0 };
	uint8_t ebuf[sizeof(struct fi_eq_cm_entry) + 256];
	struct fi_eq_cm_entry *entry = (void *)ebuf;
	struct fi_cq_err_entry err = { 0 };
	struct fi_cq_data_entry e;
	bool cq_error = false, shutdown = false;
	ssize_t ret;

	c.info = get_info(host, port, 0);
	open_fabric(&c);
	open_endpoint(&c, c.info);
	post_recv(&c);
	if ((ret = fi_connect(c.ep, NULL, NULL, 0)))
		fail("connect", "fi_connect", ret);
	expect_event(&c, FI_CONNECTED, "connect", entry, sizeof(ebuf));
	ok("connected");
	for (int i = 0; i < 3000 && !(cq_error && shutdown); i++) {
		uint32_t event;

		ret = fi_cq_read(c.cq, &e, 1);
		if (ret == -FI_EAVAIL && fi_cq_readerr(c.cq, &err, 0) == 1) {
			printf("cq error: %s, prov_errno %d (%s)\n", fi_strerror(err.err),
			       err.prov_errno, fi_cq_strerror(c.cq, err.prov_errno,
							      NULL, NULL, 0));
			cq_error = true;
		}
		if (fi_eq_read(c.eq, &event, entry, sizeof(ebuf), 0) > 0 &&
		    event == FI_SHUTDOWN)
			shutdown = true;
		fi_cq_sread(c.cq, &e, 1, NULL, 10);
	}
	if (!cq_error)
		fail("peer_death_cq_error", "the receive did not fail", 0);
	ok("peer_death_cq_error");
	if (!shutdown)
		fail("peer_death_shutdown", "no FI_SHUTDOWN on the EQ", 0);
	ok("peer_death_shutdown");
	return 0;
}

/* ---- FI_EP_RDM through ofi_rxm, both sides at once ---------------------------- */

#define RDM_MSGS	8
#define RDM_LEN		(100u << 10)	/* above rxm's eager limit: rendezvous */

static uint8_t rdm_byte(int from_me, int msg, size_t i)
{
	return (uint8_t)(i * 13 + (size_t)msg * 5 + (from_me ? 1 : 101));
}

/* Our name to `out`, the peer's from `in` (written by the other side). */
static size_t swap_names(const void *name, size_t len, const char *out,
			 const char *in, uint8_t *peer, size_t max)
{
	char tmp[512];
	FILE *f;
	size_t n = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	f = fopen(tmp, "wb");
	if (!f || fwrite(name, 1, len, f) != len || fclose(f) || rename(tmp, out))
		fail("rdm_names", "cannot write our name", 0);
	for (int i = 0; i < 200 && !n; i++) {
		f = fopen(in, "rb");
		if (f) {
			n = fread(peer, 1, max, f);
			fclose(f);
		}
		if (!n)
			usleep(50000);
	}
	if (!n)
		fail("rdm_names", "the peer wrote no name", 0);
	return n;
}

/*
 * Two RDM endpoints (mrc;ofi_rxm) that both send first: rxm connects
 * both ways at once and must settle on one connection (it rejects the
 * other with CM data). Each side sends RDM_MSGS tagged messages of
 * RDM_LEN bytes and checks those it receives.
 */
static int rdm_peer(const char *out, const char *in, int side)
{
	struct fi_info *hints = fi_allocinfo(), *info = NULL;
	struct fi_cq_attr cq_attr = { .format = FI_CQ_FORMAT_TAGGED, .size = 128 };
	struct fi_av_attr av_attr = { .type = FI_AV_MAP };
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_cq *cq;
	struct fid_av *av;
	struct fid_ep *ep;
	uint8_t name[256], peer[256];
	size_t len = sizeof(name), done_tx = 0, done_rx = 0;
	uint8_t *tx = malloc(RDM_MSGS * RDM_LEN), *rx = calloc(RDM_MSGS, RDM_LEN);
	fi_addr_t dest;
	int ret;

	hints->ep_attr->type = FI_EP_RDM;
	hints->caps = FI_TAGGED | FI_MSG;
	hints->fabric_attr->prov_name = strdup("mrc;ofi_rxm");
	hints->domain_attr->mr_mode = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
				      FI_MR_PROV_KEY;
	if ((ret = fi_getinfo(FI_VERSION(1, 17), NULL, NULL, 0, hints, &info)))
		fail("rdm_getinfo", "fi_getinfo mrc;ofi_rxm", ret);
	if ((ret = fi_fabric(info->fabric_attr, &fabric, NULL)) ||
	    (ret = fi_domain(fabric, info, &domain, NULL)) ||
	    (ret = fi_cq_open(domain, &cq_attr, &cq, NULL)) ||
	    (ret = fi_av_open(domain, &av_attr, &av, NULL)) ||
	    (ret = fi_endpoint(domain, info, &ep, NULL)) ||
	    (ret = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) ||
	    (ret = fi_ep_bind(ep, &av->fid, 0)) || (ret = fi_enable(ep)) ||
	    (ret = fi_getname(&ep->fid, name, &len)))
		fail("rdm_open", "fabric/domain/cq/av/ep", ret);
	len = swap_names(name, len, out, in, peer, sizeof(peer));
	if (fi_av_insert(av, peer, 1, &dest, 0, NULL) != 1)
		fail("rdm_av", "fi_av_insert", 0);
	for (int m = 0; m < RDM_MSGS; m++) {
		for (size_t i = 0; i < RDM_LEN; i++)
			tx[(size_t)m * RDM_LEN + i] = rdm_byte(side, m, i);
		if ((ret = fi_trecv(ep, rx + (size_t)m * RDM_LEN, RDM_LEN, NULL, dest,
				    (uint64_t)m, 0, NULL)))
			fail("rdm_trecv", "fi_trecv", ret);
	}
	for (int m = 0; m < RDM_MSGS; m++) {
		do {
			ret = (int)fi_tsend(ep, tx + (size_t)m * RDM_LEN, RDM_LEN, NULL,
					    dest, (uint64_t)m, NULL);
			if (ret == -FI_EAGAIN) {
				struct fi_cq_tagged_entry e;

				if (fi_cq_read(cq, &e, 1) == 1)
					e.flags & FI_SEND ? done_tx++ : done_rx++;
			}
		} while (ret == -FI_EAGAIN);
		if (ret)
			fail("rdm_tsend", "fi_tsend", ret);
	}
	for (int i = 0; i < 200000 && (done_tx < RDM_MSGS || done_rx < RDM_MSGS); i++) {
		struct fi_cq_tagged_entry e;
		struct fi_cq_err_entry err = { 0 };

		ret = (int)fi_cq_read(cq, &e, 1);
		if (ret == 1)
			e.flags & FI_SEND ? done_tx++ : done_rx++;
		else if (ret == -FI_EAVAIL && fi_cq_readerr(cq, &err, 0) == 1)
			fail("rdm_cq", "CQ error entry", -err.err);
		else if (ret == -FI_EAGAIN)
			usleep(10);
	}
	if (done_tx < RDM_MSGS || done_rx < RDM_MSGS)
		fail("rdm_both_ways", "not every message completed", (long)(done_tx + done_rx));
	for (int m = 0; m < RDM_MSGS; m++)
		for (size_t i = 0; i < RDM_LEN; i++)
			if (rx[(size_t)m * RDM_LEN + i] != rdm_byte(!side, m, i))
				fail("rdm_both_ways", "other bytes than the peer sent", m);
	ok("rdm_both_ways");
	/* Let the peer finish its reads of our buffers before we go. */
	for (int i = 0; i < 100; i++) {
		struct fi_cq_tagged_entry e;

		fi_cq_read(cq, &e, 1);
		usleep(10000);
	}
	(void)len;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 5 && !strcmp(argv[1], "rdm-peer"))
		return rdm_peer(argv[2], argv[3], atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3]);
	if (argc == 3 && !strcmp(argv[1], "idle-server"))
		return idle_server(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "waiting-client"))
		return waiting_client(argv[2], argv[3]);
	fprintf(stderr, "usage: mrc-fi-check server PORT | client HOST PORT |\n"
		"       idle-server PORT | waiting-client HOST PORT |\n"
		"       rdm-peer OUR_NAME_FILE PEER_NAME_FILE SIDE(0|1)\n");
	return 2;
}
