// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of libmrc through its public API (include/mrc/mrc.h), against the
 * real fast path: bpf/mrc.bpf.c loaded from the `mrc` skeleton, mrc_xdp_rx
 * attached to `lo` in generic (SKB) mode and mrc_tc_tx on lo's egress.
 *
 * Isolation: main() first moves the process into a network namespace of
 * its own (unshare(CLONE_NEWNET)), brings its `lo` up and adds
 * 198.18.200.1/32 and fd00:200::1/128 to it, so the traffic, the XDP and
 * TC attachments and the listening sockets touch nothing of the host or
 * of the labs. The maps are pinned in /sys/fs/bpf/mrc-libtest-<pid>
 * (bpffs is a mount, not bound to a netns), never the /sys/fs/bpf/mrc of a
 * running mrcd; the folder is emptied and removed at exit, also after a
 * failure or a signal. The context is opened on that folder; the plane
 * table says plane 1 is `lo`, so mrc_local_addrs() sees lo's addresses.
 *
 * Data tests connect two QPs of one context to each other over lo (each
 * QP's peer address is the shared local address), with PSNs just below
 * 2^24 so the transfers cross the 24-bit PSN wrap. Every wait polls the
 * CQ (polling drives libmrc) and has a deadline: a hang is a failure.
 *
 * Tests marked "SUSPECTED BUG" in their comment encode what mrc.h
 * promises and failed against libmrc as written when they were added;
 * they stay so the fix is checked.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/if_link.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mrc/abi.h"
#include "mrc/mrc.h"
#include "mrc.skel.h"
#include "test.h"
#include "pindir.h"

TEST_STATE_DEFINE;

#define LOCAL4		"198.18.200.1"
#define LOCAL6		"fd00:200::1"
#define REGION		(4u << 20)	/* data test regions: 4 MiB */
#define DEADLINE_MS	10000		/* every wait for completions */
#define PSN_AB		0xFFFFF0u	/* A -> B: crosses 2^24 */
#define PSN_BA		0xFFFFF8u	/* B -> A */

static struct mrc *skel;
static char pin_dir[64];
static int ncpus;
static int lo_ifindex;
static bool xdp_attached, tc_attached;
static struct mrc_context *ctx;

/* ====================================================================== */
/* Small helpers                                                          */
/* ====================================================================== */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* An int-returning call: -err and errno err. */
#define EXPECT_ERR(expr, err, what) do {				\
	long __r;							\
	errno = 0;							\
	__r = (long)(expr);						\
	ASSERT_EQ(__r, -(long)(err), what);				\
	ASSERT_EQ(errno, (err), what ": errno");			\
} while (0)

/* A pointer-returning call: NULL and errno err. */
#define EXPECT_NULL(expr, err, what) do {				\
	const void *__p;						\
	errno = 0;							\
	__p = (const void *)(expr);					\
	ASSERT_TRUE(__p == NULL, what ": returns NULL");		\
	ASSERT_EQ(errno, (err), what ": errno");			\
} while (0)

static struct sockaddr_storage ss_of(const char *ip)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (strchr(ip, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_family = AF_INET6;
		inet_pton(AF_INET6, ip, &s6->sin6_addr);
	} else {
		struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;

		s4->sin_family = AF_INET;
		inet_pton(AF_INET, ip, &s4->sin_addr);
	}
	return ss;
}

/* An address as the maps hold it: IPv6 or IPv4-mapped IPv6. */
static void key_of_ss(const struct sockaddr_storage *ss, uint8_t key[16])
{
	memset(key, 0, 16);
	if (ss->ss_family == AF_INET) {
		key[10] = 0xff;
		key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	} else if (ss->ss_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	}
}

static void key_of(const char *ip, uint8_t key[16])
{
	struct sockaddr_storage ss = ss_of(ip);

	key_of_ss(&ss, key);
}

/* Same address (an IPv4 address may come back IPv4-mapped). */
static bool addr_is(const struct sockaddr_storage *ss, const char *ip)
{
	uint8_t a[16], b[16];

	if (ss->ss_family != AF_INET && ss->ss_family != AF_INET6)
		return false;
	key_of_ss(ss, a);
	key_of(ip, b);
	return !memcmp(a, b, 16);
}

static void fill_random(uint8_t *p, size_t len, uint64_t seed)
{
	uint64_t x = seed | 1;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 24);
	}
}

/* ---- the maps, read directly ----------------------------------------- */

static int qp_info(uint32_t qpn, struct mrc_qp_info *info)
{
	uint32_t slot = qpn - 1;

	memset(info, 0, sizeof(*info));
	return bpf_map_lookup_elem(bpf_map__fd(skel->maps.mrc_qps), &slot, info) ?
		-errno : 0;
}

/* The pid that owns a QP number, or -ENOENT. */
static long qp_owner(uint32_t qpn)
{
	uint32_t pid;

	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.mrc_qp_owner), &qpn, &pid))
		return -errno;
	return pid;
}

/* The local QP TC egress finds for (remote_qpn, addr), or -ENOENT. */
static long peer_entry(uint32_t remote_qpn, const char *ip)
{
	struct mrc_peer_key key = { .remote_qpn = remote_qpn };
	uint32_t qpn;

	key_of(ip, key.addr);
	if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.mrc_peers), &key, &qpn))
		return -errno;
	return qpn;
}

static int tx_state(uint32_t qpn, struct mrc_tx_state *tx)
{
	uint32_t slot = qpn - 1;

	return bpf_map_lookup_elem(bpf_map__fd(skel->maps.mrc_tx), &slot, tx) ?
		-errno : 0;
}

static int rx_state(uint32_t qpn, struct mrc_rx_state *rx)
{
	uint32_t slot = qpn - 1;

	return bpf_map_lookup_elem(bpf_map__fd(skel->maps.mrc_rx), &slot, rx) ?
		-errno : 0;
}

/* XDP drops for one reason, summed over the CPUs. */
static uint64_t drops(size_t field_off)
{
	struct mrc_drop_stats *v = calloc((size_t)ncpus, sizeof(*v));
	uint32_t zero = 0;
	uint64_t sum = 0;

	if (!v)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(skel->maps.mrc_drops), &zero, v))
		for (int c = 0; c < ncpus; c++)
			sum += *(uint64_t *)((uint8_t *)&v[c] + field_off);
	free(v);
	return sum;
}

static int set_plane(uint32_t plane, uint32_t ifindex, const char *name)
{
	struct mrc_plane p = { .ifindex = ifindex };

	snprintf(p.name, sizeof(p.name), "%s", name);
	return bpf_map_update_elem(bpf_map__fd(skel->maps.mrc_planes), &plane, &p,
				   BPF_ANY) ? -errno : 0;
}

/* A QP number nobody holds and whose slot is RESET, or 0. */
static uint32_t unused_qpn(void)
{
	struct mrc_qp_info info;

	for (uint32_t n = MRC_MAX_QPS; n >= 1; n--)
		if (qp_owner(n) == -ENOENT && !qp_info(n, &info) &&
		    info.state == MRC_QPS_RESET)
			return n;
	return 0;
}

/* ---- asynchronous events --------------------------------------------- */

static void drain_async(void)
{
	struct mrc_async_event ev;

	while (!mrc_get_async_event(ctx, &ev))
		;
}

/* Drain the events; true if one (type, qp) was among them (its status out). */
static bool find_async(enum mrc_async_event_type type, struct mrc_qp *qp,
		       enum mrc_wc_status *status)
{
	struct mrc_async_event ev;
	bool found = false;

	while (!mrc_get_async_event(ctx, &ev)) {
		if (found || ev.type != type || ev.qp != qp ||
		    ev.qp_num != mrc_qp_num(qp))
			continue;
		found = true;
		if (status)
			*status = ev.status;
	}
	return found;
}

/* ---- completions ------------------------------------------------------ */

/* Poll until n completions are in or the deadline passes: how many came. */
static int collect(struct mrc_cq *cq, struct mrc_wc *out, int n, int timeout_ms)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;
	int got = 0;

	while (got < n) {
		int r = mrc_poll_cq(cq, n - got, out + got);

		if (r < 0)
			return r;
		got += r;
		if (got < n && now_ns() > deadline)
			break;
	}
	return got;
}

/* Nothing more arrives for a while (polling all along). */
static int quiet_for(struct mrc_cq *cq, int ms)
{
	uint64_t end = now_ns() + (uint64_t)ms * 1000000ull;
	struct mrc_wc wc;
	int extra = 0;

	while (now_ns() < end) {
		int r = mrc_poll_cq(cq, 1, &wc);

		if (r > 0) {
			fprintf(stderr, "  unexpected completion: wr_id %llu status %s opcode %d\n",
				(unsigned long long)wc.wr_id,
				mrc_wc_status_str(wc.status), wc.opcode);
			extra += r;
		}
	}
	return extra;
}

/* ---- QPs -------------------------------------------------------------- */

struct qp_conf {
	uint32_t mtu;
	bool set_retry;
	uint8_t timeout, retry_cnt, exp_retry_cnt;
	bool set_wimm;
	uint16_t max_wimm_out, max_wimm_in;
};

static int set_state(struct mrc_qp *qp, enum mrc_qp_state st)
{
	struct mrc_qp_attr a = { .qp_state = st };

	return mrc_modify_qp(qp, &a, MRC_QP_ATTR_STATE);
}

/* Whatever state it is in: RESET, INIT, RTR, RTS. */
static int connect_qp(struct mrc_qp *qp, uint32_t dest_qpn, const char *peer,
		      uint32_t rq_psn, uint32_t sq_psn, const struct qp_conf *c)
{
	struct mrc_qp_attr a;
	int mask, err;

	err = set_state(qp, MRC_QP_RESET);
	if (!err)
		err = set_state(qp, MRC_QP_INIT);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = MRC_QP_RTR;
	a.dest_qpn = dest_qpn;
	a.rq_psn = rq_psn;
	a.n_peer_addrs = 1;
	a.peer_addrs[0] = ss_of(peer);
	a.path_mtu = c && c->mtu ? c->mtu : 1024;
	mask = MRC_QP_ATTR_STATE | MRC_QP_ATTR_DEST_QPN | MRC_QP_ATTR_RQ_PSN |
	       MRC_QP_ATTR_PEER_ADDRS | MRC_QP_ATTR_PATH_MTU;
	if (c && c->set_retry) {
		a.timeout = c->timeout;
		a.retry_cnt = c->retry_cnt;
		a.exp_retry_cnt = c->exp_retry_cnt;
		mask |= MRC_QP_ATTR_TIMEOUT | MRC_QP_ATTR_RETRY;
	}
	if (c && c->set_wimm) {
		a.max_wimm_out = c->max_wimm_out;
		a.max_wimm_in = c->max_wimm_in;
		mask |= MRC_QP_ATTR_WIMM;
	}
	err = mrc_modify_qp(qp, &a, mask);
	if (err)
		return err;
	a.qp_state = MRC_QP_RTS;
	a.sq_psn = sq_psn;
	return mrc_modify_qp(qp, &a, MRC_QP_ATTR_STATE | MRC_QP_ATTR_SQ_PSN);
}

static enum mrc_qp_state qp_state(struct mrc_qp *qp)
{
	struct mrc_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = (enum mrc_qp_state)-1;
	if (mrc_query_qp(qp, &a))
		return (enum mrc_qp_state)-1;
	return a.qp_state;
}

/* Two QPs of the context, A and B, each with a CQ of its own. */
struct pair {
	struct mrc_cq *cqa, *cqb;
	struct mrc_qp *a, *b;
};

static int pair_create(struct pair *p, uint32_t send_wr, uint32_t recv_wr,
		       uint32_t sge)
{
	memset(p, 0, sizeof(*p));
	p->cqa = mrc_create_cq(ctx, 64);
	p->cqb = mrc_create_cq(ctx, 64);
	if (!p->cqa || !p->cqb)
		return -1;
	p->a = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = p->cqa, .recv_cq = p->cqa, .max_send_wr = send_wr,
		.max_recv_wr = recv_wr, .max_sge = sge });
	p->b = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = p->cqb, .recv_cq = p->cqb, .max_send_wr = send_wr,
		.max_recv_wr = recv_wr, .max_sge = sge });
	if (!p->a || !p->b)
		return -1;
	if (mrc_qp_num(p->a) == mrc_qp_num(p->b)) {
		fprintf(stderr, "  QPs A and B both got QP number %u: libmrc bug, "
			"see libmrc.qp_numbers_unique\n", mrc_qp_num(p->a));
		return -1;
	}
	return 0;
}

static int pair_connect(struct pair *p, const char *addr, uint32_t psn_ab,
			uint32_t psn_ba, const struct qp_conf *c)
{
	int err = connect_qp(p->a, mrc_qp_num(p->b), addr, psn_ba, psn_ab, c);

	if (!err)
		err = connect_qp(p->b, mrc_qp_num(p->a), addr, psn_ab, psn_ba, c);
	return err;
}

static void pair_destroy(struct pair *p)
{
	if (p->a)
		ASSERT_EQ(mrc_destroy_qp(p->a), 0, "destroy QP A");
	if (p->b)
		ASSERT_EQ(mrc_destroy_qp(p->b), 0, "destroy QP B");
	if (p->cqa)
		ASSERT_EQ(mrc_destroy_cq(p->cqa), 0, "destroy CQ A");
	if (p->cqb)
		ASSERT_EQ(mrc_destroy_cq(p->cqb), 0, "destroy CQ B");
	memset(p, 0, sizeof(*p));
}

static int post_write1(struct mrc_qp *qp, uint64_t wr_id, enum mrc_wr_opcode op,
		       const void *src, uint32_t len, uint32_t lkey,
		       uint64_t remote, uint32_t rkey, uint32_t imm)
{
	struct mrc_sge sge = { .addr = (uintptr_t)src, .length = len, .lkey = lkey };
	struct mrc_send_wr wr = {
		.wr_id = wr_id, .opcode = op, .sg_list = &sge, .num_sge = 1,
		.remote_addr = remote, .rkey = rkey, .imm_data = imm,
	};

	return mrc_post_write(qp, &wr);
}

/* Entries of mrc_ctx_owner: the event ring slots claimed. */
static int ring_slots(void)
{
	int fd = bpf_map__fd(skel->maps.mrc_ctx_owner), n = 0;
	uint32_t key, next;
	void *prev = NULL;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		n++;
		key = next;
		prev = &key;
	}
	return n;
}

/*
 * A fresh main context. Needed after a second context of this process was
 * closed: libmrc gives it the main context's event ring slot, and closing
 * it takes the main context's ring away (see libmrc.two_contexts).
 */
static int reopen_ctx(void)
{
	if (ctx)
		mrc_close(ctx);
	ctx = mrc_open(&(struct mrc_context_attr){ .pin_dir = pin_dir });
	if (!ctx)
		fprintf(stderr, "  reopening the context: %s\n", strerror(errno));
	return ctx ? 0 : -1;
}

/* ====================================================================== */
/* A. Argument checking                                                   */
/* ====================================================================== */

static void test_args(void)
{
	struct mrc_context_attr bad_dir = { .pin_dir = "/sys/fs/bpf/mrc-libtest-does-not-exist" };
	struct mrc_cq *cq, *cq2 = NULL;
	struct mrc_context *ctx2;
	struct mrc_qp *qp = NULL;
	struct mrc_qp_attr qa;
	struct mrc_wc wc[2];
	struct mrc_async_event ev;
	struct mrc_sge sge;
	struct mrc_send_wr wr;
	struct mrc_recv_wr rwr = { .wr_id = 1 };
	struct mrc_conn_params cp;
	struct sockaddr_storage addrs[4];
	static uint8_t buf[4096];

	memset(&qa, 0, sizeof(qa));
	memset(&cp, 0, sizeof(cp));

	/* context */
	EXPECT_ERR(mrc_close(NULL), EINVAL, "mrc_close(NULL)");
	EXPECT_NULL(mrc_open(&bad_dir), ENOENT, "mrc_open(missing pin_dir)");
	EXPECT_ERR(mrc_local_addrs(NULL, AF_INET, addrs, 4), EINVAL,
		   "mrc_local_addrs(NULL ctx)");
	EXPECT_ERR(mrc_local_addrs(ctx, AF_UNIX, addrs, 4), EINVAL,
		   "mrc_local_addrs(AF_UNIX)");
	EXPECT_ERR(mrc_local_addrs(ctx, 12345, addrs, 4), EINVAL,
		   "mrc_local_addrs(family 12345)");
	EXPECT_ERR(mrc_local_addrs(ctx, AF_INET, addrs, -1), EINVAL,
		   "mrc_local_addrs(max -1)");
	EXPECT_ERR(mrc_local_addrs(ctx, AF_INET, NULL, 4), EINVAL,
		   "mrc_local_addrs(NULL out)");

	/* memory regions */
	EXPECT_NULL(mrc_reg_mr(NULL, buf, sizeof(buf), MRC_ACCESS_LOCAL_WRITE),
		    EINVAL, "mrc_reg_mr(NULL ctx)");
	EXPECT_NULL(mrc_reg_mr(ctx, NULL, sizeof(buf), MRC_ACCESS_LOCAL_WRITE),
		    EINVAL, "mrc_reg_mr(NULL addr)");
	EXPECT_NULL(mrc_reg_mr(ctx, buf, 0, MRC_ACCESS_LOCAL_WRITE), EINVAL,
		    "mrc_reg_mr(length 0)");
	EXPECT_NULL(mrc_reg_mr(ctx, buf, sizeof(buf), 1u << 2), EINVAL,
		    "mrc_reg_mr(access bit 2)");
	EXPECT_NULL(mrc_reg_mr(ctx, buf, sizeof(buf), 0x80000000u), EINVAL,
		    "mrc_reg_mr(access bit 31)");
	EXPECT_NULL(mrc_reg_mr(ctx, (void *)(uintptr_t)(UINTPTR_MAX - 100), 4096,
			       MRC_ACCESS_LOCAL_WRITE), EINVAL,
		    "mrc_reg_mr(range wraps)");
	EXPECT_ERR(mrc_dereg_mr(NULL), EINVAL, "mrc_dereg_mr(NULL)");
	ASSERT_EQ(mrc_mr_lkey(NULL), 0, "mrc_mr_lkey(NULL)");
	ASSERT_EQ(mrc_mr_rkey(NULL), 0, "mrc_mr_rkey(NULL)");

	/* completion queues */
	EXPECT_NULL(mrc_create_cq(ctx, 0), EINVAL, "mrc_create_cq(depth 0)");
	EXPECT_NULL(mrc_create_cq(ctx, -5), EINVAL, "mrc_create_cq(depth -5)");
	EXPECT_NULL(mrc_create_cq(NULL, 8), EINVAL, "mrc_create_cq(NULL ctx)");
	EXPECT_ERR(mrc_destroy_cq(NULL), EINVAL, "mrc_destroy_cq(NULL)");
	cq = mrc_create_cq(ctx, 8);
	if (!ASSERT_TRUE(cq != NULL, "mrc_create_cq(8)"))
		return;
	EXPECT_ERR(mrc_poll_cq(NULL, 1, wc), EINVAL, "mrc_poll_cq(NULL cq)");
	EXPECT_ERR(mrc_poll_cq(cq, -1, wc), EINVAL, "mrc_poll_cq(n -1)");
	EXPECT_ERR(mrc_poll_cq(cq, 1, NULL), EINVAL, "mrc_poll_cq(NULL wc)");
	ASSERT_EQ(mrc_poll_cq(cq, 2, wc), 0, "mrc_poll_cq(empty)");
	ASSERT_EQ(mrc_poll_cq(cq, 0, NULL), 0, "mrc_poll_cq(n 0, NULL wc)");

	/* queue pairs: creation */
	EXPECT_NULL(mrc_create_qp(NULL, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 8 }),
		    EINVAL, "mrc_create_qp(NULL ctx)");
	EXPECT_NULL(mrc_create_qp(ctx, NULL), EINVAL, "mrc_create_qp(NULL attr)");
	EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = NULL, .recv_cq = cq, .max_send_wr = 8 }),
		    EINVAL, "mrc_create_qp(NULL send_cq)");
	EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = NULL, .max_send_wr = 8 }),
		    EINVAL, "mrc_create_qp(NULL recv_cq)");
	EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 0 }),
		    EINVAL, "mrc_create_qp(max_send_wr 0)");
	EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 513 }),
		    EINVAL, "mrc_create_qp(max_send_wr 513)");
	EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 8, .max_sge = 17 }),
		    EINVAL, "mrc_create_qp(max_sge 17)");

	/* The limits themselves are accepted. */
	qp = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 512,
		.max_recv_wr = 4, .max_sge = 16 });
	if (!ASSERT_TRUE(qp != NULL, "mrc_create_qp(max_send_wr 512, max_sge 16)")) {
		mrc_destroy_cq(cq);
		return;
	}

	/* A CQ in use cannot go. */
	EXPECT_ERR(mrc_destroy_cq(cq), EBUSY, "mrc_destroy_cq(CQ used by a QP)");

	/* modify / query */
	qa.qp_state = MRC_QP_INIT;
	EXPECT_ERR(mrc_modify_qp(NULL, &qa, MRC_QP_ATTR_STATE), EINVAL,
		   "mrc_modify_qp(NULL qp)");
	EXPECT_ERR(mrc_modify_qp(qp, NULL, MRC_QP_ATTR_STATE), EINVAL,
		   "mrc_modify_qp(NULL attr)");
	EXPECT_ERR(mrc_modify_qp(qp, &qa, MRC_QP_ATTR_STATE | (1 << 12)), EINVAL,
		   "mrc_modify_qp(mask bit 12)");
	EXPECT_ERR(mrc_modify_qp(qp, &qa, MRC_QP_ATTR_STATE | (1 << 30)), EINVAL,
		   "mrc_modify_qp(mask bit 30)");
	EXPECT_ERR(mrc_modify_qp(qp, &qa, -1), EINVAL, "mrc_modify_qp(mask -1)");
	qa.qp_state = (enum mrc_qp_state)99;
	EXPECT_ERR(mrc_modify_qp(qp, &qa, MRC_QP_ATTR_STATE), EINVAL,
		   "mrc_modify_qp(state 99)");
	qa.qp_state = (enum mrc_qp_state)-1;
	EXPECT_ERR(mrc_modify_qp(qp, &qa, MRC_QP_ATTR_STATE), EINVAL,
		   "mrc_modify_qp(state -1)");
	ASSERT_EQ(qp_state(qp), MRC_QP_RESET, "still RESET after refused modifies");
	EXPECT_ERR(mrc_query_qp(NULL, &qa), EINVAL, "mrc_query_qp(NULL qp)");
	EXPECT_ERR(mrc_query_qp(qp, NULL), EINVAL, "mrc_query_qp(NULL attr)");
	ASSERT_EQ(mrc_qp_num(NULL), 0, "mrc_qp_num(NULL)");
	EXPECT_ERR(mrc_qp_counters(NULL, &(struct mrc_qp_counters){0}), EINVAL,
		   "mrc_qp_counters(NULL qp)");
	EXPECT_ERR(mrc_qp_counters(qp, NULL), EINVAL, "mrc_qp_counters(NULL out)");
	EXPECT_ERR(mrc_destroy_qp(NULL), EINVAL, "mrc_destroy_qp(NULL)");

	/* work requests */
	memset(&sge, 0, sizeof(sge));
	memset(&wr, 0, sizeof(wr));
	sge.addr = (uintptr_t)buf;
	sge.length = 16;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = MRC_WR_WRITE;
	EXPECT_ERR(mrc_post_write(NULL, &wr), EINVAL, "mrc_post_write(NULL qp)");
	EXPECT_ERR(mrc_post_write(qp, NULL), EINVAL, "mrc_post_write(NULL wr)");
	wr.opcode = (enum mrc_wr_opcode)2;
	EXPECT_ERR(mrc_post_write(qp, &wr), EINVAL, "mrc_post_write(opcode 2)");
	wr.opcode = (enum mrc_wr_opcode)-1;
	EXPECT_ERR(mrc_post_write(qp, &wr), EINVAL, "mrc_post_write(opcode -1)");
	EXPECT_ERR(mrc_post_recv(NULL, &rwr), EINVAL, "mrc_post_recv(NULL qp)");
	EXPECT_ERR(mrc_post_recv(qp, NULL), EINVAL, "mrc_post_recv(NULL wr)");

	/* asynchronous events */
	drain_async();
	EXPECT_ERR(mrc_get_async_event(NULL, &ev), EINVAL,
		   "mrc_get_async_event(NULL ctx)");
	EXPECT_ERR(mrc_get_async_event(ctx, NULL), EINVAL,
		   "mrc_get_async_event(NULL ev)");
	EXPECT_ERR(mrc_get_async_event(ctx, &ev), EAGAIN,
		   "mrc_get_async_event(none pending)");

	/* connection set-up */
	EXPECT_ERR(mrc_conn_exchange(-1, &cp, &cp), EINVAL,
		   "mrc_conn_exchange(fd -1)");
	EXPECT_ERR(mrc_conn_exchange(0, NULL, &cp), EINVAL,
		   "mrc_conn_exchange(NULL local)");
	EXPECT_ERR(mrc_conn_exchange(0, &cp, NULL), EINVAL,
		   "mrc_conn_exchange(NULL remote)");
	EXPECT_ERR(mrc_conn_connect(NULL, 18515, 1000), EINVAL,
		   "mrc_conn_connect(NULL host)");
	EXPECT_ERR(mrc_conn_connect("", 18515, 1000), EINVAL,
		   "mrc_conn_connect(empty host)");
	EXPECT_ERR(mrc_conn_connect("127.0.0.1", 18515, 0), EINVAL,
		   "mrc_conn_connect(timeout 0)");
	EXPECT_ERR(mrc_conn_connect("127.0.0.1", 18515, -1), EINVAL,
		   "mrc_conn_connect(timeout -1)");

	ASSERT_EQ(mrc_destroy_qp(qp), 0, "destroy QP");
	ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ once unused");

	/* A CQ of another context. */
	cq = mrc_create_cq(ctx, 8);
	ctx2 = mrc_open(&(struct mrc_context_attr){ .pin_dir = pin_dir });
	if (ASSERT_TRUE(cq && ctx2, "a CQ and a second context")) {
		cq2 = mrc_create_cq(ctx2, 8);
		ASSERT_TRUE(cq2 != NULL, "CQ of the second context");
		EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
				.send_cq = cq2, .recv_cq = cq, .max_send_wr = 8 }),
			    EINVAL, "mrc_create_qp(send_cq of another context)");
		EXPECT_NULL(mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
				.send_cq = cq, .recv_cq = cq2, .max_send_wr = 8 }),
			    EINVAL, "mrc_create_qp(recv_cq of another context)");
		ASSERT_EQ(mrc_destroy_cq(cq2), 0, "destroy CQ of the second context");
	}
	if (cq)
		ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ");
	if (ctx2) {
		ASSERT_EQ(mrc_close(ctx2), 0, "close the second context");
		/* Repair what that close did to the main context (a bug). */
		if (reopen_ctx())
			test_state.failed++;
	}
}

/*
 * Closing a context releases what it holds in the shared maps: its QP
 * numbers (mrc_qp_owner), their slots (mrc_qps back to RESET, peers gone)
 * and its event ring slot.
 */
static void test_close_releases(void)
{
	struct mrc_context *c2;
	struct mrc_cq *cq;
	struct mrc_qp *qp;
	struct mrc_qp_info info;
	uint32_t qpn;

	c2 = mrc_open(&(struct mrc_context_attr){ .pin_dir = pin_dir });
	if (!ASSERT_TRUE(c2 != NULL, "mrc_open"))
		return;
	cq = mrc_create_cq(c2, 8);
	qp = cq ? mrc_create_qp(c2, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 4 }) : NULL;
	if (!ASSERT_TRUE(qp != NULL, "QP in the second context")) {
		mrc_close(c2);
		reopen_ctx();
		return;
	}
	qpn = mrc_qp_num(qp);
	ASSERT_EQ(connect_qp(qp, 77, "127.0.0.1", 1, 1, NULL), 0, "QP to RTS");
	ASSERT_EQ(peer_entry(77, "127.0.0.1"), qpn, "peer entry installed");
	ASSERT_EQ(qp_owner(qpn), getpid(), "QP number owned by us");
	ASSERT_EQ(qp_info(qpn, &info), 0, "mrc_qps lookup");
	ASSERT_EQ(info.state, MRC_QPS_RTS, "mrc_qps state RTS");

	ASSERT_EQ(mrc_close(c2), 0, "mrc_close with a QP still there");
	ASSERT_EQ(qp_owner(qpn), -ENOENT, "QP number released");
	ASSERT_EQ(qp_info(qpn, &info), 0, "mrc_qps lookup");
	ASSERT_EQ(info.state, MRC_QPS_RESET, "mrc_qps state RESET");
	ASSERT_EQ(peer_entry(77, "127.0.0.1"), -ENOENT, "peer entry removed");
	/* The CQ is the application's: still destroyable after the close. */
	ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy the CQ after the close");
	/* Repair what the close did to the main context (libmrc.two_contexts). */
	if (reopen_ctx())
		test_state.failed++;
}

/* mrc_local_addrs(): the addresses of the plane interfaces (lo here). */
static void test_local_addrs(void)
{
	struct sockaddr_storage a[8];
	bool seen[4] = { false };
	const char *want[4] = { "127.0.0.1", LOCAL4, "::1", LOCAL6 };
	int n;

	n = mrc_local_addrs(ctx, AF_INET, a, 8);
	ASSERT_EQ(n, 2, "AF_INET: 127.0.0.1 and " LOCAL4);
	for (int i = 0; i < n && i < 8; i++) {
		ASSERT_EQ(a[i].ss_family, AF_INET, "AF_INET: family");
		for (int w = 0; w < 4; w++)
			if (addr_is(&a[i], want[w]))
				seen[w] = true;
	}
	n = mrc_local_addrs(ctx, AF_INET6, a, 8);
	ASSERT_EQ(n, 2, "AF_INET6: ::1 and " LOCAL6);
	for (int i = 0; i < n && i < 8; i++) {
		ASSERT_EQ(a[i].ss_family, AF_INET6, "AF_INET6: family");
		for (int w = 0; w < 4; w++)
			if (addr_is(&a[i], want[w]))
				seen[w] = true;
	}
	for (int w = 0; w < 4; w++)
		if (!ASSERT_TRUE(seen[w], "address reported"))
			fprintf(stderr, "  missing: %s\n", want[w]);
	ASSERT_EQ(mrc_local_addrs(ctx, AF_UNSPEC, a, 8), 4, "AF_UNSPEC: all four");
	ASSERT_EQ(mrc_local_addrs(ctx, AF_UNSPEC, a, 1), 1, "max 1");
	ASSERT_EQ(mrc_local_addrs(ctx, AF_UNSPEC, NULL, 0), 0, "max 0");

	/* Without a plane there is nothing to report. */
	if (ASSERT_EQ(set_plane(0, 0, ""), 0, "clear plane 1")) {
		ASSERT_EQ(mrc_local_addrs(ctx, AF_UNSPEC, a, 8), 0, "no plane: none");
		ASSERT_EQ(set_plane(0, (uint32_t)lo_ifindex, "lo"), 0, "restore plane 1");
	}
}

/* ====================================================================== */
/* B. QP state machine                                                    */
/* ====================================================================== */

static void expect_same_attr(const struct mrc_qp_attr *a,
			     const struct mrc_qp_attr *b, const char *what)
{
	int bad = 0;

	bad += !ASSERT_EQ(a->qp_state, b->qp_state, "qp_state unchanged");
	bad += !ASSERT_EQ(a->path_mtu, b->path_mtu, "path_mtu unchanged");
	bad += !ASSERT_EQ(a->sq_psn, b->sq_psn, "sq_psn unchanged");
	bad += !ASSERT_EQ(a->rq_psn, b->rq_psn, "rq_psn unchanged");
	bad += !ASSERT_EQ(a->dest_qpn, b->dest_qpn, "dest_qpn unchanged");
	bad += !ASSERT_EQ(a->mpr_units, b->mpr_units, "mpr_units unchanged");
	bad += !ASSERT_EQ(a->timeout, b->timeout, "timeout unchanged");
	bad += !ASSERT_EQ(a->retry_cnt, b->retry_cnt, "retry_cnt unchanged");
	bad += !ASSERT_EQ(a->exp_retry_cnt, b->exp_retry_cnt, "exp_retry_cnt unchanged");
	bad += !ASSERT_EQ(a->max_wimm_out, b->max_wimm_out, "max_wimm_out unchanged");
	bad += !ASSERT_EQ(a->max_wimm_in, b->max_wimm_in, "max_wimm_in unchanged");
	bad += !ASSERT_EQ(a->ev_profile_id, b->ev_profile_id, "ev_profile_id unchanged");
	bad += !ASSERT_EQ(a->cc_profile_id, b->cc_profile_id, "cc_profile_id unchanged");
	bad += !ASSERT_EQ(a->n_peer_addrs, b->n_peer_addrs, "n_peer_addrs unchanged");
	for (int i = 0; i < a->n_peer_addrs && i < MRC_MAX_PLANES; i++) {
		uint8_t ka[16], kb[16];

		key_of_ss(&a->peer_addrs[i], ka);
		key_of_ss(&b->peer_addrs[i], kb);
		bad += !ASSERT_MEM_EQ(ka, kb, 16, "peer address unchanged");
	}
	if (bad)
		fprintf(stderr, "  ... after: %s\n", what);
}

/* A refused modify: -EINVAL, and query shows exactly what it showed before. */
static void expect_refused(struct mrc_qp *qp, const struct mrc_qp_attr *a,
			   int mask, const char *what)
{
	struct mrc_qp_attr before, after;
	struct mrc_qp_info ib, ia;

	memset(&before, 0, sizeof(before));
	memset(&after, 0, sizeof(after));
	mrc_query_qp(qp, &before);
	qp_info(mrc_qp_num(qp), &ib);
	errno = 0;
	if (!ASSERT_EQ(mrc_modify_qp(qp, a, mask), -EINVAL, what))
		return;
	ASSERT_EQ(errno, EINVAL, "errno EINVAL");
	ASSERT_EQ(mrc_query_qp(qp, &after), 0, "query");
	expect_same_attr(&after, &before, what);
	qp_info(mrc_qp_num(qp), &ia);
	ASSERT_EQ(ia.state, ib.state, "mrc_qps state unchanged");
	ASSERT_EQ(ia.remote_qpn, ib.remote_qpn, "mrc_qps remote_qpn unchanged");
	ASSERT_EQ(ia.mpr, ib.mpr, "mrc_qps mpr unchanged");
}

static void test_qp_state_machine(void)
{
	const int rtr_mask = MRC_QP_ATTR_STATE | MRC_QP_ATTR_DEST_QPN |
			     MRC_QP_ATTR_RQ_PSN | MRC_QP_ATTR_PEER_ADDRS;
	struct mrc_qp *qp, *qp2;
	struct mrc_qp_attr a, q;
	struct mrc_qp_info info;
	struct mrc_cq *cq;
	struct mrc_wc wc;
	uint32_t n1, n2;
	uint8_t key[16];
	int full;

	cq = mrc_create_cq(ctx, 16);
	if (!ASSERT_TRUE(cq != NULL, "create CQ"))
		return;
	qp = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 8, .max_recv_wr = 4,
		.max_sge = 2 });
	qp2 = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 8, .max_recv_wr = 4,
		.max_sge = 2 });
	if (!ASSERT_TRUE(qp && qp2, "create two QPs"))
		goto out;
	n1 = mrc_qp_num(qp);
	n2 = mrc_qp_num(qp2);
	ASSERT_TRUE(n1 != n2, "QP numbers differ");
	ASSERT_TRUE(n1 >= 1 && n1 <= MRC_MAX_QPS, "QP number in 1..MRC_MAX_QPS");
	ASSERT_TRUE(n2 >= 1 && n2 <= MRC_MAX_QPS, "QP number in 1..MRC_MAX_QPS");
	ASSERT_EQ(qp_owner(n1), getpid(), "mrc_qp_owner holds our pid");
	ASSERT_EQ(qp_owner(n2), getpid(), "mrc_qp_owner holds our pid (2)");
	ASSERT_EQ(qp_state(qp), MRC_QP_RESET, "new QP is RESET");
	ASSERT_EQ(qp_info(n1, &info), 0, "mrc_qps lookup");
	ASSERT_EQ(info.state, MRC_QPS_RESET, "mrc_qps: RESET");

	/* The attributes of a complete INIT->RTR, reused below. */
	memset(&a, 0, sizeof(a));
	a.qp_state = MRC_QP_RTR;
	a.dest_qpn = n2;
	a.rq_psn = 0x123456;
	a.n_peer_addrs = 1;
	a.peer_addrs[0] = ss_of(LOCAL6);
	a.path_mtu = 2048;
	a.mpr_units = 4;
	a.timeout = 10;
	a.retry_cnt = 3;
	a.exp_retry_cnt = 5;
	a.max_wimm_out = 5;
	a.max_wimm_in = 6;
	a.ev_profile_id = 2;
	a.cc_profile_id = 3;
	full = rtr_mask | MRC_QP_ATTR_PATH_MTU | MRC_QP_ATTR_MPR |
	       MRC_QP_ATTR_TIMEOUT | MRC_QP_ATTR_RETRY | MRC_QP_ATTR_WIMM |
	       MRC_QP_ATTR_EV_PROFILE | MRC_QP_ATTR_CC_PROFILE;

	/* RESET: only INIT (or RESET/ERROR) is a way on. */
	expect_refused(qp, &a, full, "RESET->RTR");
	a.qp_state = MRC_QP_RTS;
	expect_refused(qp, &a, full | MRC_QP_ATTR_SQ_PSN, "RESET->RTS");
	ASSERT_EQ(set_state(qp, MRC_QP_INIT), 0, "RESET->INIT");
	ASSERT_EQ(qp_state(qp), MRC_QP_INIT, "query: INIT");
	ASSERT_EQ(qp_info(n1, &info), 0, "mrc_qps lookup");
	ASSERT_EQ(info.state, MRC_QPS_INIT, "mrc_qps: INIT");

	/* INIT->RTR needs DEST_QPN, RQ_PSN and PEER_ADDRS. */
	a.qp_state = MRC_QP_RTR;
	expect_refused(qp, &a, full & ~MRC_QP_ATTR_PEER_ADDRS, "INIT->RTR without PEER_ADDRS");
	expect_refused(qp, &a, full & ~MRC_QP_ATTR_DEST_QPN, "INIT->RTR without DEST_QPN");
	expect_refused(qp, &a, full & ~MRC_QP_ATTR_RQ_PSN, "INIT->RTR without RQ_PSN");
	a.qp_state = MRC_QP_RTS;
	expect_refused(qp, &a, full | MRC_QP_ATTR_SQ_PSN, "INIT->RTS");
	a.qp_state = MRC_QP_RTR;
	a.n_peer_addrs = 0;
	expect_refused(qp, &a, full, "INIT->RTR with 0 peer addresses");
	a.n_peer_addrs = MRC_MAX_PLANES + 1;
	expect_refused(qp, &a, full, "INIT->RTR with 9 peer addresses");
	a.n_peer_addrs = 1;
	a.dest_qpn = 0;
	expect_refused(qp, &a, full, "INIT->RTR with dest_qpn 0");
	a.dest_qpn = 0x1000000;
	expect_refused(qp, &a, full, "INIT->RTR with dest_qpn 2^24");
	a.dest_qpn = n2;
	a.rq_psn = 0x1000000;
	expect_refused(qp, &a, full, "INIT->RTR with rq_psn 2^24");
	a.rq_psn = 0x123456;
	a.path_mtu = 100;
	expect_refused(qp, &a, full, "INIT->RTR with path_mtu 100");
	a.path_mtu = 2048;
	a.peer_addrs[0].ss_family = AF_UNIX;
	errno = 0;
	ASSERT_TRUE(mrc_modify_qp(qp, &a, full) < 0, "INIT->RTR with an AF_UNIX peer refused");
	ASSERT_EQ(qp_state(qp), MRC_QP_INIT, "still INIT");
	a.peer_addrs[0] = ss_of(LOCAL6);

	/* An EV profile id mrcd does not know: refused, still INIT. */
	a.ev_profile_id = 7;
	EXPECT_ERR(mrc_modify_qp(qp, &a, full), ENOENT, "INIT->RTR with unknown EV profile");
	ASSERT_EQ(qp_state(qp), MRC_QP_INIT, "still INIT after unknown profile");
	a.ev_profile_id = 0;	/* the built-in AUTO profile */

	/* Complete: RTR, and query returns what was set. */
	ASSERT_EQ(mrc_modify_qp(qp, &a, full), 0, "INIT->RTR");
	memset(&q, 0, sizeof(q));
	ASSERT_EQ(mrc_query_qp(qp, &q), 0, "query");
	ASSERT_EQ(q.qp_state, MRC_QP_RTR, "query: RTR");
	ASSERT_EQ(q.path_mtu, 2048, "query: path_mtu");
	ASSERT_EQ(q.mpr_units, 4, "query: mpr_units");
	ASSERT_EQ(q.timeout, 10, "query: timeout");
	ASSERT_EQ(q.retry_cnt, 3, "query: retry_cnt");
	ASSERT_EQ(q.exp_retry_cnt, 5, "query: exp_retry_cnt");
	ASSERT_EQ(q.max_wimm_out, 5, "query: max_wimm_out");
	ASSERT_EQ(q.max_wimm_in, 6, "query: max_wimm_in");
	ASSERT_EQ(q.ev_profile_id, 0, "query: ev_profile_id");
	ASSERT_EQ(q.cc_profile_id, 3, "query: cc_profile_id");
	ASSERT_EQ(q.dest_qpn, n2, "query: dest_qpn");
	ASSERT_EQ(q.rq_psn, 0x123456, "query: rq_psn");
	ASSERT_EQ(q.n_peer_addrs, 1, "query: n_peer_addrs");
	ASSERT_TRUE(addr_is(&q.peer_addrs[0], LOCAL6), "query: peer address");
	ASSERT_EQ(q.peer_addrs[0].ss_family, AF_INET6, "query: IPv6 peer family");

	/* What the fast path sees. */
	ASSERT_EQ(qp_info(n1, &info), 0, "mrc_qps lookup");
	ASSERT_EQ(info.state, MRC_QPS_RTR, "mrc_qps: RTR");
	ASSERT_EQ(info.remote_qpn, n2, "mrc_qps: remote_qpn");
	ASSERT_EQ(info.mpr, 4 * MRC_MPR_UNIT, "mrc_qps: mpr in PSNs");
	ASSERT_EQ(info.n_peer_addrs, 1, "mrc_qps: n_peer_addrs");
	ASSERT_TRUE(info.sock_port != 0, "mrc_qps: owner's socket port");
	key_of(LOCAL6, key);
	ASSERT_MEM_EQ(info.peer_addrs[0], key, 16, "mrc_qps: peer address");
	ASSERT_EQ(peer_entry(n2, LOCAL6), n1, "mrc_peers: (dest_qpn, peer) -> qpn");

	/* Not RTS yet: no WRITE. */
	{
		static uint8_t b[64];
		struct mrc_mr *mr = mrc_reg_mr(ctx, b, sizeof(b), MRC_ACCESS_LOCAL_WRITE);

		EXPECT_ERR(post_write1(qp, 1, MRC_WR_WRITE, b, 8, mrc_mr_lkey(mr),
				       0x1000, 1, 0), ENOTCONN, "post_write in RTR");
		EXPECT_ERR(post_write1(qp2, 1, MRC_WR_WRITE, b, 8, mrc_mr_lkey(mr),
				       0x1000, 1, 0), ENOTCONN, "post_write in RESET");
		if (mr)
			mrc_dereg_mr(mr);
	}

	/* RTR->RTS needs SQ_PSN. */
	a.qp_state = MRC_QP_RTS;
	expect_refused(qp, &a, MRC_QP_ATTR_STATE, "RTR->RTS without SQ_PSN");
	a.sq_psn = 0x1000000;
	expect_refused(qp, &a, MRC_QP_ATTR_STATE | MRC_QP_ATTR_SQ_PSN, "RTR->RTS with sq_psn 2^24");
	a.sq_psn = 0xABCDEF;
	/* The window comes with RTS: its CC profile (3) must exist, ONLINE. */
	EXPECT_ERR(mrc_modify_qp(qp, &a, MRC_QP_ATTR_STATE | MRC_QP_ATTR_SQ_PSN), ENOENT,
		   "RTR->RTS with an unknown CC profile");
	{
		struct mrc_cc_profile_rec cc = {
			.id = 3, .state = 1 /* OFFLINE */, .algo = MRC_CC_NSCC,
			.base_rtt_ns = 40000, .link_mbps = 1000, .qa_gate = 3,
		};
		uint32_t id = 3;
		int fd = bpf_map__fd(skel->maps.mrc_cc_profiles);

		ASSERT_EQ(bpf_map_update_elem(fd, &id, &cc, BPF_ANY), 0, "CC profile 3 OFFLINE");
		EXPECT_ERR(mrc_modify_qp(qp, &a, MRC_QP_ATTR_STATE | MRC_QP_ATTR_SQ_PSN),
			   EINVAL, "RTR->RTS with an OFFLINE CC profile");
		cc.state = 2;	/* ONLINE */
		ASSERT_EQ(bpf_map_update_elem(fd, &id, &cc, BPF_ANY), 0, "CC profile 3 ONLINE");
	}
	ASSERT_EQ(qp_state(qp), MRC_QP_RTR, "still RTR after the CC profile errors");
	ASSERT_EQ(mrc_modify_qp(qp, &a, MRC_QP_ATTR_STATE | MRC_QP_ATTR_SQ_PSN), 0,
		  "RTR->RTS");
	{
		/* BDP = 1 plane x 125e6 B/s x 40 us = 5000 B; first window 1.5 x BDP. */
		struct mrc_cc_view view;
		uint32_t slot;

		ASSERT_EQ(qp_info(n1, &info), 0, "mrc_qps lookup in RTS");
		ASSERT_TRUE(info.cc_slot != 0, "mrc_qps: RTS QP has a window");
		slot = info.cc_slot - 1;
		ASSERT_EQ(bpf_map_lookup_elem(bpf_map__fd(skel->maps.mrc_cc_view), &slot,
					      &view), 0, "mrc_cc_view lookup");
		ASSERT_EQ(view.algo, MRC_CC_NSCC, "window runs NSCC");
		ASSERT_EQ(view.cwnd, 7500, "first window = 1.5 x BDP (5000 B)");
	}
	memset(&q, 0, sizeof(q));
	ASSERT_EQ(mrc_query_qp(qp, &q), 0, "query");
	ASSERT_EQ(q.qp_state, MRC_QP_RTS, "query: RTS");
	ASSERT_EQ(q.sq_psn, 0xABCDEF, "query: sq_psn");
	ASSERT_EQ(q.path_mtu, 2048, "query: path_mtu kept through RTS");
	ASSERT_EQ(qp_info(n1, &info), 0, "mrc_qps lookup");
	ASSERT_EQ(info.state, MRC_QPS_RTS, "mrc_qps: RTS");

	/* Out of range, in RTS: refused, nothing changes. */
	{
		struct mrc_qp_attr bad;
		const struct { int mask; int field; uint32_t v; const char *what; } cases[] = {
			{ MRC_QP_ATTR_PATH_MTU, 0, 100, "path_mtu 100" },
			{ MRC_QP_ATTR_PATH_MTU, 0, 255, "path_mtu 255" },
			{ MRC_QP_ATTR_PATH_MTU, 0, 9001, "path_mtu 9001" },
			{ MRC_QP_ATTR_PATH_MTU, 0, 10000, "path_mtu 10000" },
			{ MRC_QP_ATTR_MPR, 1, 0, "mpr_units 0" },
			{ MRC_QP_ATTR_MPR, 1, 33, "mpr_units 33" },
			{ MRC_QP_ATTR_TIMEOUT, 2, 25, "timeout 25" },
			{ MRC_QP_ATTR_RETRY, 3, 8, "retry_cnt 8" },
			{ MRC_QP_ATTR_RETRY, 4, 26, "exp_retry_cnt 26" },
			{ MRC_QP_ATTR_RQ_PSN, 5, 0x1000000, "rq_psn 2^24" },
			{ MRC_QP_ATTR_SQ_PSN, 6, 0x1000000, "sq_psn 2^24" },
			{ MRC_QP_ATTR_DEST_QPN, 7, 0, "dest_qpn 0" },
		};

		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			memset(&bad, 0, sizeof(bad));
			mrc_query_qp(qp, &bad);	/* everything else valid */
			switch (cases[i].field) {
			case 0: bad.path_mtu = cases[i].v; break;
			case 1: bad.mpr_units = (uint8_t)cases[i].v; break;
			case 2: bad.timeout = (uint8_t)cases[i].v; break;
			case 3: bad.retry_cnt = (uint8_t)cases[i].v; break;
			case 4: bad.exp_retry_cnt = (uint8_t)cases[i].v; break;
			case 5: bad.rq_psn = cases[i].v; break;
			case 6: bad.sq_psn = cases[i].v; break;
			case 7: bad.dest_qpn = cases[i].v; break;
			}
			expect_refused(qp, &bad, cases[i].mask, cases[i].what);
			expect_refused(qp, &bad, cases[i].mask | MRC_QP_ATTR_STATE,
				       cases[i].what);
		}
		/* All or nothing: a good MTU with a bad timeout changes nothing. */
		memset(&bad, 0, sizeof(bad));
		mrc_query_qp(qp, &bad);
		bad.path_mtu = 4096;
		bad.mpr_units = 8;
		bad.timeout = 25;
		expect_refused(qp, &bad, MRC_QP_ATTR_PATH_MTU | MRC_QP_ATTR_MPR |
			       MRC_QP_ATTR_TIMEOUT, "good path_mtu/mpr + timeout 25");
		/* The limits themselves are fine. */
		memset(&bad, 0, sizeof(bad));
		mrc_query_qp(qp, &bad);
		bad.path_mtu = 9000;
		bad.mpr_units = 32;
		bad.timeout = 24;
		bad.retry_cnt = 7;
		bad.exp_retry_cnt = 25;
		ASSERT_EQ(mrc_modify_qp(qp, &bad, MRC_QP_ATTR_PATH_MTU | MRC_QP_ATTR_MPR |
					MRC_QP_ATTR_TIMEOUT | MRC_QP_ATTR_RETRY), 0,
			  "RTS->RTS with the largest values");
		memset(&q, 0, sizeof(q));
		mrc_query_qp(qp, &q);
		ASSERT_EQ(q.path_mtu, 9000, "query: path_mtu 9000");
		ASSERT_EQ(q.mpr_units, 32, "query: mpr_units 32");
		ASSERT_EQ(q.timeout, 24, "query: timeout 24");
		ASSERT_EQ(q.exp_retry_cnt, 25, "query: exp_retry_cnt 25");
		ASSERT_EQ(q.qp_state, MRC_QP_RTS, "query: still RTS");
	}

	/* ERROR from RTS; nothing more is accepted. */
	ASSERT_EQ(set_state(qp, MRC_QP_ERROR), 0, "RTS->ERROR");
	ASSERT_EQ(qp_state(qp), MRC_QP_ERROR, "query: ERROR");
	ASSERT_EQ(qp_info(n1, &info), 0, "mrc_qps lookup");
	ASSERT_EQ(info.state, MRC_QPS_ERROR, "mrc_qps: ERROR");
	EXPECT_ERR(mrc_post_recv(qp, &(struct mrc_recv_wr){ .wr_id = 9 }), ENOTCONN,
		   "post_recv in ERROR");
	{
		static uint8_t b[64];
		struct mrc_mr *mr = mrc_reg_mr(ctx, b, sizeof(b), MRC_ACCESS_LOCAL_WRITE);

		EXPECT_ERR(post_write1(qp, 1, MRC_WR_WRITE, b, 8, mrc_mr_lkey(mr),
				       0x1000, 1, 0), ENOTCONN, "post_write in ERROR");
		if (mr)
			mrc_dereg_mr(mr);
	}
	a.qp_state = MRC_QP_RTS;
	expect_refused(qp, &a, MRC_QP_ATTR_STATE | MRC_QP_ATTR_SQ_PSN, "ERROR->RTS");
	a.qp_state = MRC_QP_INIT;
	expect_refused(qp, &a, MRC_QP_ATTR_STATE, "ERROR->INIT");
	ASSERT_EQ(set_state(qp, MRC_QP_ERROR), 0, "ERROR->ERROR");

	/* RESET: the peer entry goes, the slot is RESET. */
	ASSERT_EQ(set_state(qp, MRC_QP_RESET), 0, "ERROR->RESET");
	ASSERT_EQ(qp_state(qp), MRC_QP_RESET, "query: RESET");
	ASSERT_EQ(qp_info(n1, &info), 0, "mrc_qps lookup");
	ASSERT_EQ(info.state, MRC_QPS_RESET, "mrc_qps: RESET");
	ASSERT_EQ(peer_entry(n2, LOCAL6), -ENOENT, "mrc_peers: entry removed on RESET");

	/* ERROR from every state, and back to RESET. */
	ASSERT_EQ(set_state(qp, MRC_QP_ERROR), 0, "RESET->ERROR");
	ASSERT_EQ(qp_state(qp), MRC_QP_ERROR, "query: ERROR (from RESET)");
	ASSERT_EQ(set_state(qp, MRC_QP_RESET), 0, "->RESET");
	ASSERT_EQ(set_state(qp, MRC_QP_INIT), 0, "RESET->INIT");
	ASSERT_EQ(set_state(qp, MRC_QP_ERROR), 0, "INIT->ERROR");
	ASSERT_EQ(qp_state(qp), MRC_QP_ERROR, "query: ERROR (from INIT)");
	ASSERT_EQ(set_state(qp, MRC_QP_RESET), 0, "->RESET");
	ASSERT_EQ(set_state(qp, MRC_QP_INIT), 0, "RESET->INIT");
	a.qp_state = MRC_QP_RTR;
	ASSERT_EQ(mrc_modify_qp(qp, &a, rtr_mask), 0, "INIT->RTR");
	ASSERT_EQ(set_state(qp, MRC_QP_ERROR), 0, "RTR->ERROR");
	ASSERT_EQ(qp_state(qp), MRC_QP_ERROR, "query: ERROR (from RTR)");
	ASSERT_EQ(set_state(qp, MRC_QP_RESET), 0, "->RESET");
	ASSERT_EQ(set_state(qp, MRC_QP_INIT), 0, "RESET->INIT");
	ASSERT_EQ(mrc_modify_qp(qp, &a, rtr_mask), 0, "INIT->RTR");
	ASSERT_EQ(set_state(qp, MRC_QP_RESET), 0, "RTR->RESET");
	ASSERT_EQ(qp_state(qp), MRC_QP_RESET, "query: RESET (from RTR)");
	ASSERT_EQ(peer_entry(n2, LOCAL6), -ENOENT, "mrc_peers: entry removed on RTR->RESET");

	/* A receive posted before connecting is flushed when the QP fails. */
	ASSERT_EQ(mrc_poll_cq(cq, 1, &wc), 0, "CQ empty");
	ASSERT_EQ(mrc_post_recv(qp, &(struct mrc_recv_wr){ .wr_id = 4242 }), 0,
		  "post_recv in RESET");
	ASSERT_EQ(set_state(qp, MRC_QP_ERROR), 0, "RESET->ERROR");
	memset(&wc, 0, sizeof(wc));
	if (ASSERT_EQ(mrc_poll_cq(cq, 1, &wc), 1, "flushed receive completes")) {
		ASSERT_EQ(wc.wr_id, 4242, "flushed receive: wr_id");
		ASSERT_EQ(wc.status, MRC_WC_WR_FLUSH_ERR, "flushed receive: status");
		ASSERT_EQ(wc.opcode, MRC_WC_RECV_WRITE_IMM, "flushed receive: opcode");
		ASSERT_EQ(wc.qp_num, n1, "flushed receive: qp_num");
	}
	ASSERT_EQ(mrc_poll_cq(cq, 1, &wc), 0, "nothing else");

	/* Destroy from RTR: the maps forget the QP. */
	ASSERT_EQ(set_state(qp, MRC_QP_RESET), 0, "->RESET");
	ASSERT_EQ(set_state(qp, MRC_QP_INIT), 0, "RESET->INIT");
	ASSERT_EQ(mrc_modify_qp(qp, &a, rtr_mask), 0, "INIT->RTR");
	ASSERT_EQ(peer_entry(n2, LOCAL6), n1, "mrc_peers: entry back");
	ASSERT_EQ(mrc_destroy_qp(qp), 0, "destroy QP in RTR");
	qp = NULL;
	ASSERT_EQ(qp_owner(n1), -ENOENT, "mrc_qp_owner: no entry after destroy");
	ASSERT_EQ(qp_info(n1, &info), 0, "mrc_qps lookup");
	ASSERT_EQ(info.state, MRC_QPS_RESET, "mrc_qps: RESET after destroy");
	ASSERT_EQ(peer_entry(n2, LOCAL6), -ENOENT, "mrc_peers: no entry after destroy");
	ASSERT_EQ(qp_owner(n2), getpid(), "the other QP keeps its number");
out:
	if (qp)
		mrc_destroy_qp(qp);
	if (qp2)
		mrc_destroy_qp(qp2);
	ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ");
}

/*
 * SUSPECTED BUG (minor): in RESET and ERROR, mrc_modify_qp() without a
 * state change returns 0 whatever the attributes: `to` defaults to the
 * current state, and the RESET and ERROR branches return before
 * apply_attrs() runs. So an out-of-range value (path_mtu 100) is not
 * refused with -EINVAL as mrc.h's conventions promise, and a valid one is
 * reported as applied but silently dropped (query still shows the old
 * value). Either -EINVAL, or applied and visible, would do.
 */
static void test_modify_in_reset_error(void)
{
	struct mrc_qp_attr a, q;
	struct mrc_qp *qp;
	struct mrc_cq *cq = mrc_create_cq(ctx, 8);
	int r;

	qp = cq ? mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 4 }) : NULL;
	if (!ASSERT_TRUE(qp != NULL, "create QP")) {
		if (cq)
			mrc_destroy_cq(cq);
		return;
	}
	for (int pass = 0; pass < 2; pass++) {
		enum mrc_qp_state st = pass ? MRC_QP_ERROR : MRC_QP_RESET;
		const char *name = pass ? "ERROR" : "RESET";

		ASSERT_EQ(set_state(qp, st), 0, "to the state under test");
		memset(&a, 0, sizeof(a));
		a.path_mtu = 100;
		errno = 0;
		r = mrc_modify_qp(qp, &a, MRC_QP_ATTR_PATH_MTU);
		if (!ASSERT_EQ(r, -EINVAL, "path_mtu 100 without a state change: -EINVAL"))
			fprintf(stderr, "  in %s\n", name);
		a.path_mtu = 2048;
		r = mrc_modify_qp(qp, &a, MRC_QP_ATTR_PATH_MTU);
		memset(&q, 0, sizeof(q));
		mrc_query_qp(qp, &q);
		if (!ASSERT_TRUE(r == -EINVAL || (r == 0 && q.path_mtu == 2048),
				 "path_mtu 2048: refused, or applied as reported"))
			fprintf(stderr, "  in %s: returned %d, query shows path_mtu %u\n",
				name, r, q.path_mtu);
		ASSERT_EQ(q.qp_state, st, "state unchanged");
	}
	ASSERT_EQ(mrc_destroy_qp(qp), 0, "destroy QP");
	ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ");
}

/* ====================================================================== */
/* C. Local protection and queue limits                                   */
/* ====================================================================== */

static void test_local_protection(void)
{
	static uint8_t buf[65536], other[4096];
	struct mrc_qp *qp = NULL, *qp2 = NULL, *qp3 = NULL;
	struct mrc_sge sge[3];
	struct mrc_send_wr wr;
	struct mrc_mr *mr;
	struct mrc_cq *cq;
	uint32_t lkey, bad_key;
	uintptr_t base = (uintptr_t)buf;

	cq = mrc_create_cq(ctx, 16);
	mr = mrc_reg_mr(ctx, buf, sizeof(buf), MRC_ACCESS_LOCAL_WRITE);
	if (!ASSERT_TRUE(cq && mr, "CQ and MR"))
		goto out;
	lkey = mrc_mr_lkey(mr);
	ASSERT_TRUE(lkey != 0, "lkey is not 0");
	ASSERT_EQ(mrc_mr_rkey(mr), lkey, "rkey");
	bad_key = lkey ^ 0x00010001u;

	qp = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 4, .max_recv_wr = 2,
		.max_sge = 2 });
	if (!ASSERT_TRUE(qp != NULL, "create QP"))
		goto out;
	/* Connected to itself; nothing here polls, so nothing is sent. */
	if (!ASSERT_EQ(connect_qp(qp, mrc_qp_num(qp), "127.0.0.1", 5, 5, NULL), 0,
		       "QP to RTS"))
		goto out;

	memset(&wr, 0, sizeof(wr));
	memset(sge, 0, sizeof(sge));
	wr.opcode = MRC_WR_WRITE;
	wr.sg_list = sge;
	wr.num_sge = 1;
	wr.remote_addr = 0x10000;
	wr.rkey = 1;

	sge[0] = (struct mrc_sge){ .addr = base, .length = 100, .lkey = bad_key };
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "unregistered lkey");
	sge[0] = (struct mrc_sge){ .addr = base + sizeof(buf) - 10, .length = 20, .lkey = lkey };
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "SGE past the end of its MR");
	sge[0] = (struct mrc_sge){ .addr = base - 1, .length = 10, .lkey = lkey };
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "SGE before the start of its MR");
	sge[0] = (struct mrc_sge){ .addr = (uintptr_t)other, .length = 10, .lkey = lkey };
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "SGE in memory outside the MR");
	sge[0] = (struct mrc_sge){ .addr = base, .length = 0xffffffffu, .lkey = lkey };
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "SGE length 4 GiB - 1");
	sge[0] = (struct mrc_sge){ .addr = base, .length = 100, .lkey = lkey };
	sge[1] = (struct mrc_sge){ .addr = base + sizeof(buf) - 50, .length = 100, .lkey = lkey };
	wr.num_sge = 2;
	EXPECT_ERR(mrc_post_write(qp, &wr), EFAULT, "second SGE past the end");
	sge[1] = (struct mrc_sge){ .addr = base + 200, .length = 100, .lkey = lkey };
	sge[2] = sge[1];
	wr.num_sge = 3;
	EXPECT_ERR(mrc_post_write(qp, &wr), EINVAL, "3 SGEs, max_sge 2");
	wr.num_sge = -1;
	EXPECT_ERR(mrc_post_write(qp, &wr), EINVAL, "num_sge -1");
	wr.num_sge = 1;
	wr.sg_list = NULL;
	EXPECT_ERR(mrc_post_write(qp, &wr), EINVAL, "num_sge 1, NULL sg_list");
	wr.sg_list = sge;

	/* The refused posts took no room: 4 fit, the 5th does not. */
	wr.num_sge = 2;
	for (int i = 0; i < 4; i++) {
		wr.wr_id = 100 + (uint64_t)i;
		ASSERT_EQ(mrc_post_write(qp, &wr), 0, "post within max_send_wr 4");
	}
	wr.wr_id = 104;
	EXPECT_ERR(mrc_post_write(qp, &wr), EAGAIN, "5th post, max_send_wr 4");
	EXPECT_ERR(mrc_post_write(qp, &wr), EAGAIN, "6th post, max_send_wr 4");

	/* Receives: max_recv_wr 2. */
	ASSERT_EQ(mrc_post_recv(qp, &(struct mrc_recv_wr){ .wr_id = 1 }), 0, "recv 1");
	ASSERT_EQ(mrc_post_recv(qp, &(struct mrc_recv_wr){ .wr_id = 2 }), 0, "recv 2");
	EXPECT_ERR(mrc_post_recv(qp, &(struct mrc_recv_wr){ .wr_id = 3 }), EAGAIN,
		   "3rd receive, max_recv_wr 2");

	/* WRITE-IMMs in flight are limited by max_wimm_out. */
	qp2 = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 8, .max_sge = 1 });
	if (ASSERT_TRUE(qp2 != NULL, "create QP 2") &&
	    ASSERT_EQ(connect_qp(qp2, mrc_qp_num(qp2), "127.0.0.1", 5, 5,
				 &(struct qp_conf){ .set_wimm = true,
						    .max_wimm_out = 2,
						    .max_wimm_in = 2 }), 0,
		      "QP 2 to RTS, max_wimm_out 2")) {
		ASSERT_EQ(post_write1(qp2, 1, MRC_WR_WRITE_WITH_IMM, buf, 10, lkey,
				      0x1000, 1, 1), 0, "WRITE-IMM 1");
		ASSERT_EQ(post_write1(qp2, 2, MRC_WR_WRITE_WITH_IMM, buf, 10, lkey,
				      0x1000, 1, 2), 0, "WRITE-IMM 2");
		EXPECT_ERR(post_write1(qp2, 3, MRC_WR_WRITE_WITH_IMM, buf, 10, lkey,
				       0x1000, 1, 3), EAGAIN, "WRITE-IMM 3, max_wimm_out 2");
		ASSERT_EQ(post_write1(qp2, 4, MRC_WR_WRITE, buf, 10, lkey,
				      0x1000, 1, 0), 0, "a plain WRITE still fits");
	}

	/* max_sge 0 means 1. */
	qp3 = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 2, .max_sge = 0 });
	if (ASSERT_TRUE(qp3 != NULL, "create QP 3, max_sge 0") &&
	    ASSERT_EQ(connect_qp(qp3, mrc_qp_num(qp3), "127.0.0.1", 5, 5, NULL), 0,
		      "QP 3 to RTS")) {
		sge[0] = (struct mrc_sge){ .addr = base, .length = 10, .lkey = lkey };
		sge[1] = sge[0];
		wr.num_sge = 2;
		EXPECT_ERR(mrc_post_write(qp3, &wr), EINVAL, "2 SGEs with max_sge 0");
		wr.num_sge = 1;
		ASSERT_EQ(mrc_post_write(qp3, &wr), 0, "1 SGE with max_sge 0");
	}
out:
	/* Destroyed unpolled: nothing of this ever goes on the wire. */
	if (qp)
		ASSERT_EQ(mrc_destroy_qp(qp), 0, "destroy QP");
	if (qp2)
		ASSERT_EQ(mrc_destroy_qp(qp2), 0, "destroy QP 2");
	if (qp3)
		ASSERT_EQ(mrc_destroy_qp(qp3), 0, "destroy QP 3");
	if (mr)
		ASSERT_EQ(mrc_dereg_mr(mr), 0, "dereg MR");
	if (cq)
		ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ");
}

/* ====================================================================== */
/* D. Loopback transfers                                                  */
/* ====================================================================== */

struct wspec {
	size_t src_off, dst_off, len;
	size_t src_off2, len2;		/* second SGE when len2 */
};

static const struct wspec writes[] = {
	{ 0x11, 0x10, 1, 0, 0 },
	{ 0x1001, 0x100, 1000, 0, 0 },
	{ 0x2003, 0x1003, 4096, 0, 0 },
	{ 0x10000, 0x10000, 65536, 0, 0 },
	{ 0x200005, 0x100007, 1u << 20, 0, 0 },
	{ 0x30001, 0x300000, 1500, 0x300009, 2500 },	/* 2 SGEs */
};
#define N_WRITES	(int)(sizeof(writes) / sizeof(writes[0]))

static const struct wspec imms[] = {
	{ 0x40000, 0x380000, 1, 0, 0 },
	{ 0x41000, 0x381000, 3000, 0, 0 },
	{ 0x50000, 0x390000, 70000, 0, 0 },
};
#define N_IMMS		(int)(sizeof(imms) / sizeof(imms[0]))

static uint32_t packets_of(size_t len, uint32_t mtu)
{
	return len ? (uint32_t)((len + mtu - 1) / mtu) : 1;
}

static void transfer(const char *addr)
{
	uint8_t *src = NULL, *dst = NULL, *expect = NULL;
	struct mrc_mr *msrc = NULL, *mdst = NULL;
	struct mrc_wc wc[16];
	struct mrc_qp_counters ca, cb;
	struct mrc_tx_state *tx = NULL;
	struct mrc_rx_state *rx = NULL;
	struct pair p;
	uint32_t lkey, rkey, pkts = 0;
	uint64_t bytes = 0;
	int got;

	fprintf(stderr, "  transfer over %s\n", addr);
	src = malloc(REGION);
	dst = calloc(1, REGION);
	expect = calloc(1, REGION);
	tx = malloc(sizeof(*tx));
	rx = malloc(sizeof(*rx));
	if (!ASSERT_TRUE(src && dst && expect && tx && rx, "buffers"))
		goto out_mem;
	fill_random(src, REGION, 0x9E3779B97F4A7C15ull ^ (uintptr_t)addr);
	msrc = mrc_reg_mr(ctx, src, REGION, MRC_ACCESS_LOCAL_WRITE);
	mdst = mrc_reg_mr(ctx, dst, REGION, MRC_ACCESS_LOCAL_WRITE | MRC_ACCESS_REMOTE_WRITE);
	if (!ASSERT_TRUE(msrc && mdst, "register the regions"))
		goto out_mem;
	lkey = mrc_mr_lkey(msrc);
	rkey = mrc_mr_rkey(mdst);

	if (!ASSERT_EQ(pair_create(&p, 16, 8, 4), 0, "create QPs A and B"))
		goto out;
	if (!ASSERT_EQ(pair_connect(&p, addr, PSN_AB, PSN_BA, NULL), 0,
		       "connect A and B"))
		goto out;
	ASSERT_EQ(qp_state(p.a), MRC_QP_RTS, "A is RTS");
	ASSERT_EQ(qp_state(p.b), MRC_QP_RTS, "B is RTS");

	/* WRITEs of every size, one with two SGEs. */
	for (int i = 0; i < N_WRITES; i++) {
		const struct wspec *w = &writes[i];
		struct mrc_sge sge[2] = {
			{ (uintptr_t)src + w->src_off, (uint32_t)w->len, lkey },
			{ (uintptr_t)src + w->src_off2, (uint32_t)w->len2, lkey },
		};
		struct mrc_send_wr wr = {
			.wr_id = 100 + (uint64_t)i, .opcode = MRC_WR_WRITE,
			.sg_list = sge, .num_sge = w->len2 ? 2 : 1,
			.remote_addr = (uintptr_t)dst + w->dst_off, .rkey = rkey,
		};

		ASSERT_EQ(mrc_post_write(p.a, &wr), 0, "post WRITE");
		memcpy(expect + w->dst_off, src + w->src_off, w->len);
		memcpy(expect + w->dst_off + w->len, src + w->src_off2, w->len2);
		pkts += packets_of(w->len + w->len2, 1024);
		bytes += w->len + w->len2;
	}
	memset(wc, 0, sizeof(wc));
	got = collect(p.cqa, wc, N_WRITES, DEADLINE_MS);
	ASSERT_EQ(got, N_WRITES, "every WRITE completes within the deadline");
	for (int i = 0; i < got; i++) {
		ASSERT_EQ(wc[i].wr_id, 100 + i, "WRITE completion: wr_id, in order");
		if (!ASSERT_EQ(wc[i].status, MRC_WC_SUCCESS, "WRITE completion: status"))
			fprintf(stderr, "  wr_id %llu: %s\n",
				(unsigned long long)wc[i].wr_id,
				mrc_wc_status_str(wc[i].status));
		ASSERT_EQ(wc[i].opcode, MRC_WC_WRITE, "WRITE completion: opcode");
		ASSERT_EQ(wc[i].qp_num, mrc_qp_num(p.a), "WRITE completion: qp_num");
	}
	ASSERT_MEM_EQ(dst, expect, REGION, "target region after the WRITEs");
	ASSERT_EQ(mrc_poll_cq(p.cqb, 4, wc), 0, "no completion at B for plain WRITEs");

	/* Exactly once: every byte placed once, the PSNs went past 2^24. */
	if (ASSERT_EQ(mrc_qp_counters(p.b, &cb), 0, "B counters")) {
		ASSERT_EQ(cb.rx_bytes, bytes, "B placed every byte once");
		ASSERT_EQ(cb.rx_packets, pkts, "B placed every packet once");
	}
	if (ASSERT_EQ(mrc_qp_counters(p.a, &ca), 0, "A counters"))
		ASSERT_TRUE(ca.tx_packets >= pkts, "A sent every packet");
	if (ASSERT_EQ(tx_state(mrc_qp_num(p.a), tx), 0, "A's mrc_tx"))
		ASSERT_EQ(tx->snd_una, PSN_AB + pkts, "A's snd_una past 2^24");
	if (ASSERT_EQ(rx_state(mrc_qp_num(p.b), rx), 0, "B's mrc_rx"))
		ASSERT_EQ(rx->cack, PSN_AB + pkts - 1, "B's cumulative ack past the wrap");

	/* WRITE-IMMs: B's receives complete in order, with the immediates. */
	for (int i = 0; i < N_IMMS; i++)
		ASSERT_EQ(mrc_post_recv(p.b, &(struct mrc_recv_wr){ .wr_id = 200 + (uint64_t)i }),
			  0, "post receive at B");
	for (int i = 0; i < N_IMMS; i++) {
		const struct wspec *w = &imms[i];

		ASSERT_EQ(post_write1(p.a, 300 + (uint64_t)i, MRC_WR_WRITE_WITH_IMM,
				      src + w->src_off, (uint32_t)w->len, lkey,
				      (uintptr_t)dst + w->dst_off, rkey, 7 + (uint32_t)i),
			  0, "post WRITE-IMM");
		memcpy(expect + w->dst_off, src + w->src_off, w->len);
	}
	memset(wc, 0, sizeof(wc));
	got = collect(p.cqa, wc, N_IMMS, DEADLINE_MS);
	ASSERT_EQ(got, N_IMMS, "A: every WRITE-IMM completes");
	for (int i = 0; i < got; i++) {
		ASSERT_EQ(wc[i].wr_id, 300 + i, "A: WRITE-IMM wr_id, in order");
		ASSERT_EQ(wc[i].status, MRC_WC_SUCCESS, "A: WRITE-IMM status");
		ASSERT_EQ(wc[i].opcode, MRC_WC_WRITE, "A: WRITE-IMM opcode");
		ASSERT_EQ(wc[i].qp_num, mrc_qp_num(p.a), "A: WRITE-IMM qp_num");
	}
	memset(wc, 0, sizeof(wc));
	got = collect(p.cqb, wc, N_IMMS, DEADLINE_MS);
	ASSERT_EQ(got, N_IMMS, "B: a receive completion per WRITE-IMM");
	for (int i = 0; i < got; i++) {
		ASSERT_EQ(wc[i].wr_id, 200 + i, "B: receive wr_id, in order");
		ASSERT_EQ(wc[i].status, MRC_WC_SUCCESS, "B: status");
		ASSERT_EQ(wc[i].opcode, MRC_WC_RECV_WRITE_IMM, "B: opcode RECV_WRITE_IMM");
		ASSERT_EQ(wc[i].imm_data, 7 + i, "B: imm_data 7, 8, 9");
		ASSERT_EQ(wc[i].byte_len, imms[i].len, "B: byte_len = message length");
		ASSERT_EQ(wc[i].qp_num, mrc_qp_num(p.b), "B: qp_num");
	}
	ASSERT_MEM_EQ(dst, expect, REGION, "target region after the WRITE-IMMs");
	ASSERT_EQ(quiet_for(p.cqa, 20) + quiet_for(p.cqb, 20), 0,
		  "no further completions");
	ASSERT_EQ(qp_state(p.a), MRC_QP_RTS, "A still RTS");
	ASSERT_EQ(qp_state(p.b), MRC_QP_RTS, "B still RTS");
out:
	pair_destroy(&p);
out_mem:
	if (msrc)
		mrc_dereg_mr(msrc);
	if (mdst)
		mrc_dereg_mr(mdst);
	free(src);
	free(dst);
	free(expect);
	free(tx);
	free(rx);
}

static void test_loopback_ipv4(void)
{
	transfer("127.0.0.1");
	transfer(LOCAL4);
}

static void test_loopback_ipv6(void)
{
	transfer(LOCAL6);
	transfer("::1");
}

/*
 * A WRITE-IMM that arrives before its receive is posted is refused (not
 * dropped for good): once the receive is there, it completes.
 */
static void test_write_imm_waits_for_receive(void)
{
	static uint8_t src[8192], dst[8192];
	struct mrc_mr *ms, *md;
	struct mrc_wc wc;
	struct pair p;

	memset(dst, 0, sizeof(dst));
	fill_random(src, sizeof(src), 42);
	ms = mrc_reg_mr(ctx, src, sizeof(src), MRC_ACCESS_LOCAL_WRITE);
	md = mrc_reg_mr(ctx, dst, sizeof(dst), MRC_ACCESS_REMOTE_WRITE);
	if (!ASSERT_TRUE(ms && md, "regions"))
		goto out_mr;
	if (!ASSERT_EQ(pair_create(&p, 8, 4, 1), 0, "create QPs") ||
	    !ASSERT_EQ(pair_connect(&p, "127.0.0.1", 0xFFFFFE, 3, NULL), 0, "connect"))
		goto out;
	ASSERT_EQ(post_write1(p.a, 1, MRC_WR_WRITE_WITH_IMM, src, 5000,
			      mrc_mr_lkey(ms), (uintptr_t)dst, mrc_mr_rkey(md), 0xCAFE),
		  0, "post WRITE-IMM without a receive at B");
	ASSERT_EQ(quiet_for(p.cqa, 100), 0, "A: no completion without a receive");
	ASSERT_EQ(mrc_poll_cq(p.cqb, 1, &wc), 0, "B: no completion without a receive");
	ASSERT_EQ(mrc_post_recv(p.b, &(struct mrc_recv_wr){ .wr_id = 55 }), 0,
		  "post the receive");
	memset(&wc, 0, sizeof(wc));
	if (ASSERT_EQ(collect(p.cqb, &wc, 1, DEADLINE_MS), 1, "B: receive completes")) {
		ASSERT_EQ(wc.wr_id, 55, "B: wr_id");
		ASSERT_EQ(wc.status, MRC_WC_SUCCESS, "B: status");
		ASSERT_EQ(wc.imm_data, 0xCAFE, "B: imm_data");
		ASSERT_EQ(wc.byte_len, 5000, "B: byte_len");
	}
	memset(&wc, 0, sizeof(wc));
	if (ASSERT_EQ(collect(p.cqa, &wc, 1, DEADLINE_MS), 1, "A: WRITE-IMM completes")) {
		ASSERT_EQ(wc.wr_id, 1, "A: wr_id");
		ASSERT_EQ(wc.status, MRC_WC_SUCCESS, "A: status");
	}
	ASSERT_MEM_EQ(dst, src, 5000, "data placed");
	ASSERT_EQ(dst[5000], 0, "nothing past the message");
out:
	pair_destroy(&p);
out_mr:
	if (ms)
		mrc_dereg_mr(ms);
	if (md)
		mrc_dereg_mr(md);
}

/*
 * One WRITE larger than the window (4 MiB = 4096 packets of 1024 bytes,
 * window 8 x 128 PSNs): the sender must wait for acknowledgements.
 */
static void test_large_write_window(void)
{
	uint8_t *src = malloc(REGION), *dst = calloc(1, REGION);
	struct mrc_mr *ms = NULL, *md = NULL;
	struct mrc_qp_counters cb;
	struct mrc_wc wc;
	struct pair p;
	uint64_t t0;

	memset(&p, 0, sizeof(p));
	if (!ASSERT_TRUE(src && dst, "buffers"))
		goto out_mem;
	fill_random(src, REGION, 99);
	ms = mrc_reg_mr(ctx, src, REGION, MRC_ACCESS_LOCAL_WRITE);
	md = mrc_reg_mr(ctx, dst, REGION, MRC_ACCESS_REMOTE_WRITE);
	if (!ASSERT_TRUE(ms && md, "regions"))
		goto out_mem;
	if (!ASSERT_EQ(pair_create(&p, 4, 1, 1), 0, "create QPs") ||
	    !ASSERT_EQ(pair_connect(&p, LOCAL4, 0xFFF000, 7, NULL), 0, "connect"))
		goto out;
	t0 = now_ns();
	ASSERT_EQ(post_write1(p.a, 1, MRC_WR_WRITE, src, REGION, mrc_mr_lkey(ms),
			      (uintptr_t)dst, mrc_mr_rkey(md), 0), 0, "post a 4 MiB WRITE");
	memset(&wc, 0, sizeof(wc));
	if (ASSERT_EQ(collect(p.cqa, &wc, 1, DEADLINE_MS), 1, "it completes")) {
		ASSERT_EQ(wc.status, MRC_WC_SUCCESS, "status");
		fprintf(stderr, "  4 MiB in %.1f ms\n", (now_ns() - t0) / 1e6);
	}
	ASSERT_MEM_EQ(dst, src, REGION, "4 MiB placed");
	if (ASSERT_EQ(mrc_qp_counters(p.b, &cb), 0, "B counters"))
		ASSERT_EQ(cb.rx_bytes, REGION, "every byte placed once");
out:
	pair_destroy(&p);
out_mem:
	if (ms)
		mrc_dereg_mr(ms);
	if (md)
		mrc_dereg_mr(md);
	free(src);
	free(dst);
}

/*
 * Many more WRITEs than the send queue and the shared WR ring hold
 * (1500 through max_send_wr 8, MRC_WR_RING 512): each posted as a slot
 * frees, all complete in order, each lands where it should.
 */
static void test_many_writes_ring_wrap(void)
{
	enum { TOTAL = 1500, DEPTH = 8, SZ = 200 };
	uint8_t *src = malloc(TOTAL * SZ), *dst = calloc(1, TOTAL * SZ);
	struct mrc_mr *ms = NULL, *md = NULL;
	struct mrc_wc wc[DEPTH];
	struct pair p;
	uint64_t deadline = now_ns() + 20ull * 1000000000ull;
	int posted = 0, done = 0, bad_order = 0, bad_status = 0;

	memset(&p, 0, sizeof(p));
	if (!ASSERT_TRUE(src && dst, "buffers"))
		goto out_mem;
	fill_random(src, TOTAL * SZ, 5);
	ms = mrc_reg_mr(ctx, src, TOTAL * SZ, MRC_ACCESS_LOCAL_WRITE);
	md = mrc_reg_mr(ctx, dst, TOTAL * SZ, MRC_ACCESS_REMOTE_WRITE);
	if (!ASSERT_TRUE(ms && md, "regions"))
		goto out_mem;
	if (!ASSERT_EQ(pair_create(&p, DEPTH, 1, 1), 0, "create QPs") ||
	    !ASSERT_EQ(pair_connect(&p, "::1", 0xFFFF00, 0, NULL), 0, "connect"))
		goto out;
	while (done < TOTAL && now_ns() < deadline) {
		int n;

		while (posted < TOTAL && posted - done < DEPTH) {
			if (post_write1(p.a, (uint64_t)posted, MRC_WR_WRITE,
					src + (size_t)posted * SZ, SZ, mrc_mr_lkey(ms),
					(uintptr_t)dst + (size_t)posted * SZ,
					mrc_mr_rkey(md), 0))
				break;
			posted++;
		}
		n = mrc_poll_cq(p.cqa, DEPTH, wc);
		if (n < 0)
			break;
		for (int i = 0; i < n; i++, done++) {
			bad_order += wc[i].wr_id != (uint64_t)done;
			bad_status += wc[i].status != MRC_WC_SUCCESS;
		}
	}
	ASSERT_EQ(done, TOTAL, "every WRITE completes");
	ASSERT_EQ(bad_order, 0, "completions in posting order");
	ASSERT_EQ(bad_status, 0, "every completion a success");
	ASSERT_MEM_EQ(dst, src, (size_t)TOTAL * SZ, "every WRITE landed");
out:
	pair_destroy(&p);
out_mem:
	if (ms)
		mrc_dereg_mr(ms);
	if (md)
		mrc_dereg_mr(md);
	free(src);
	free(dst);
}

/* WRITE and WRITE-IMM of no bytes at all (num_sge 0): both complete. */
static void test_zero_length_write(void)
{
	static uint8_t dst[64];
	struct mrc_mr *md;
	struct mrc_wc wc[2];
	struct pair p;
	struct mrc_send_wr wr = { .num_sge = 0, .sg_list = NULL };

	memset(&p, 0, sizeof(p));
	memset(dst, 0x11, sizeof(dst));
	md = mrc_reg_mr(ctx, dst, sizeof(dst), MRC_ACCESS_REMOTE_WRITE);
	if (!ASSERT_TRUE(md != NULL, "region"))
		return;
	if (!ASSERT_EQ(pair_create(&p, 4, 2, 1), 0, "create QPs") ||
	    !ASSERT_EQ(pair_connect(&p, "127.0.0.1", 0xFFFFFF, 0xFFFFFF, NULL), 0,
		       "connect"))
		goto out;
	ASSERT_EQ(mrc_post_recv(p.b, &(struct mrc_recv_wr){ .wr_id = 21 }), 0, "receive");
	wr.wr_id = 1;
	wr.opcode = MRC_WR_WRITE;
	wr.remote_addr = (uintptr_t)dst;
	wr.rkey = mrc_mr_rkey(md);
	ASSERT_EQ(mrc_post_write(p.a, &wr), 0, "post a 0-byte WRITE");
	wr.wr_id = 2;
	wr.opcode = MRC_WR_WRITE_WITH_IMM;
	wr.imm_data = 0xFEEDBEEF;
	ASSERT_EQ(mrc_post_write(p.a, &wr), 0, "post a 0-byte WRITE-IMM");
	memset(wc, 0, sizeof(wc));
	if (ASSERT_EQ(collect(p.cqa, wc, 2, DEADLINE_MS), 2, "both complete at A")) {
		ASSERT_EQ(wc[0].status, MRC_WC_SUCCESS, "0-byte WRITE: success");
		ASSERT_EQ(wc[1].status, MRC_WC_SUCCESS, "0-byte WRITE-IMM: success");
	}
	memset(wc, 0, sizeof(wc));
	if (ASSERT_EQ(collect(p.cqb, wc, 1, DEADLINE_MS), 1, "B: the immediate")) {
		ASSERT_EQ(wc[0].wr_id, 21, "B: wr_id");
		ASSERT_EQ(wc[0].status, MRC_WC_SUCCESS, "B: status");
		ASSERT_EQ(wc[0].imm_data, 0xFEEDBEEF, "B: imm_data");
		ASSERT_EQ(wc[0].byte_len, 0, "B: byte_len 0");
	}
	for (size_t i = 0; i < sizeof(dst); i++)
		if (!ASSERT_EQ(dst[i], 0x11, "region untouched"))
			break;
out:
	pair_destroy(&p);
	mrc_dereg_mr(md);
}

/*
 * SUSPECTED BUG: mrc_modify_qp() accepts path_mtu in RTS->RTS, and a
 * WRITE queued before the change never completes. A WRITE posted before
 * the change must still land intact: libmrc may refuse the change
 * (-EINVAL) or apply it to new WRITEs only, but not mangle the old one.
 * As written, mrc_post_write() computes the WRITE's packet count (npkts)
 * with the MTU of posting time while add_packet() (send.c) slices it with
 * qp->attr.path_mtu of sending time: packets past the message's end come
 * out with a header only (`wqe->length - off` underflows, no payload
 * iovec), the responder takes them for trimmed headers and NACKs them,
 * and the WRITE ends in RETRY_EXC_ERR (the QP in ERROR). Short retry
 * settings keep the failure quick.
 */
static void test_mtu_change_in_rts(void)
{
	enum { LEN = 65536 };
	uint8_t *src = malloc(2 * LEN), *dst = calloc(1, 2 * LEN);
	struct mrc_mr *ms = NULL, *md = NULL;
	struct mrc_qp_attr a;
	struct mrc_wc wc[2];
	struct pair p;
	int r, got;

	memset(&p, 0, sizeof(p));
	if (!ASSERT_TRUE(src && dst, "buffers"))
		goto out_mem;
	fill_random(src, 2 * LEN, 1234);
	ms = mrc_reg_mr(ctx, src, 2 * LEN, MRC_ACCESS_LOCAL_WRITE);
	md = mrc_reg_mr(ctx, dst, 2 * LEN, MRC_ACCESS_REMOTE_WRITE);
	if (!ASSERT_TRUE(ms && md, "regions"))
		goto out_mem;
	if (!ASSERT_EQ(pair_create(&p, 4, 1, 1), 0, "create QPs") ||
	    !ASSERT_EQ(pair_connect(&p, "127.0.0.1", 500, 600,
				    &(struct qp_conf){ .set_retry = true, .timeout = 10,
						       .retry_cnt = 3,
						       .exp_retry_cnt = 3 }), 0,
		       "connect"))
		goto out;
	ASSERT_EQ(post_write1(p.a, 1, MRC_WR_WRITE, src, LEN, mrc_mr_lkey(ms),
			      (uintptr_t)dst, mrc_mr_rkey(md), 0), 0,
		  "post a 64 KiB WRITE at path_mtu 1024");
	memset(&a, 0, sizeof(a));
	a.path_mtu = 4096;
	r = mrc_modify_qp(p.a, &a, MRC_QP_ATTR_PATH_MTU);
	fprintf(stderr, "  RTS path_mtu 1024 -> 4096 with a WRITE queued: %d\n", r);
	ASSERT_TRUE(r == 0 || r == -EINVAL, "modify: done or refused");
	ASSERT_EQ(post_write1(p.a, 2, MRC_WR_WRITE, src + LEN, LEN, mrc_mr_lkey(ms),
			      (uintptr_t)dst + LEN, mrc_mr_rkey(md), 0), 0,
		  "post a second 64 KiB WRITE");
	memset(wc, 0, sizeof(wc));
	got = collect(p.cqa, wc, 2, DEADLINE_MS);
	ASSERT_EQ(got, 2, "both WRITEs complete");
	for (int i = 0; i < got; i++)
		if (!ASSERT_EQ(wc[i].status, MRC_WC_SUCCESS, "WRITE status"))
			fprintf(stderr, "  wr_id %llu: %s\n",
				(unsigned long long)wc[i].wr_id,
				mrc_wc_status_str(wc[i].status));
	ASSERT_MEM_EQ(dst, src, LEN, "the WRITE posted before the change");
	ASSERT_MEM_EQ(dst + LEN, src + LEN, LEN, "the WRITE posted after the change");
out:
	pair_destroy(&p);
out_mem:
	if (ms)
		mrc_dereg_mr(ms);
	if (md)
		mrc_dereg_mr(md);
	free(src);
	free(dst);
}

/*
 * SUSPECTED BUG: two QPs of one process can get the same QP number.
 * claim_qpn() tries numbers from a random start with mrc_claim_slot(),
 * which treats an mrc_qp_owner entry holding the caller's own pid like
 * one of a dead process: "the owner is gone: take the slot over". So a
 * QP whose random start lands on a number this process already holds
 * takes that number too, and ctx->qps[slot] forgets the first QP. With 64
 * QPs a duplicate is all but certain (about 8 expected).
 */
static void test_qp_numbers_unique(void)
{
	enum { N = 64 };
	struct mrc_qp *qps[N] = { NULL };
	uint8_t seen[MRC_MAX_QPS + 1] = { 0 };
	struct mrc_cq *cq = mrc_create_cq(ctx, 16);
	int dups = 0, created = 0;

	if (!ASSERT_TRUE(cq != NULL, "create CQ"))
		return;
	for (int i = 0; i < N; i++) {
		uint32_t n;

		qps[i] = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 1 });
		if (!qps[i])
			break;
		created++;
		n = mrc_qp_num(qps[i]);
		if (n >= 1 && n <= MRC_MAX_QPS && seen[n]++)
			dups++;
	}
	ASSERT_EQ(created, N, "64 QPs created");
	if (!ASSERT_EQ(dups, 0, "no QP number handed out twice"))
		fprintf(stderr, "  %d of %d QPs got a number another QP of this "
			"process already held\n", dups, created);
	for (int i = created - 1; i >= 0; i--)
		mrc_destroy_qp(qps[i]);
	ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ");
	for (uint32_t n = 1; n <= MRC_MAX_QPS; n++)
		if (seen[n] && !ASSERT_EQ(qp_owner(n), -ENOENT, "every number released"))
			break;
}

/* One 4 KiB WRITE A -> B over 127.0.0.1 that must complete: 1 yes, 0 no. */
static int one_write(int timeout_ms)
{
	static uint8_t src[4096], dst[4096];
	struct mrc_mr *ms, *md;
	struct mrc_wc wc;
	struct pair p;
	int ok = 0;

	fill_random(src, sizeof(src), now_ns());
	memset(dst, 0, sizeof(dst));
	memset(&p, 0, sizeof(p));
	ms = mrc_reg_mr(ctx, src, sizeof(src), MRC_ACCESS_LOCAL_WRITE);
	md = mrc_reg_mr(ctx, dst, sizeof(dst), MRC_ACCESS_REMOTE_WRITE);
	if (ms && md && !pair_create(&p, 4, 1, 1) &&
	    !pair_connect(&p, "127.0.0.1", 1000, 2000, NULL) &&
	    !post_write1(p.a, 1, MRC_WR_WRITE, src, sizeof(src), mrc_mr_lkey(ms),
			 (uintptr_t)dst, mrc_mr_rkey(md), 0)) {
		memset(&wc, 0, sizeof(wc));
		ok = collect(p.cqa, &wc, 1, timeout_ms) == 1 &&
		     wc.status == MRC_WC_SUCCESS && !memcmp(src, dst, sizeof(src));
	}
	pair_destroy(&p);
	if (ms)
		mrc_dereg_mr(ms);
	if (md)
		mrc_dereg_mr(md);
	return ok;
}

/*
 * SUSPECTED BUG: mrc.h says "use one context per thread", so one process
 * may hold several contexts, but they share one event ring slot.
 * claim_event_ring() starts at pid % MRC_MAX_CTX and mrc_claim_slot()
 * "takes over" a slot whose owner is the caller's own pid, so a second
 * context of the process gets the first one's slot and puts its own ring
 * in mrc_events there. From then on XDP writes the first context's
 * completions into the second one's ring, where nobody looks for them
 * (its QPs are unknown there), and when the second context closes it
 * deletes the slot, leaving the first context with no ring at all: its
 * WRITEs are acknowledged on the wire but never complete, fatal NACKs
 * lose their reason (REM_OP_ERR instead of REM_ACCESS_ERR).
 */
static void test_two_contexts(void)
{
	struct mrc_context *c2;
	int before = ring_slots();

	ASSERT_EQ(before, 1, "one ring slot: the main context's");
	ASSERT_EQ(one_write(2000), 1, "a WRITE completes with one context");
	c2 = mrc_open(&(struct mrc_context_attr){ .pin_dir = pin_dir });
	if (!ASSERT_TRUE(c2 != NULL, "second context"))
		return;
	ASSERT_EQ(ring_slots(), before + 1, "the second context has a ring slot of its own");
	ASSERT_EQ(one_write(2000), 1, "a WRITE of the first context completes while a second is open");
	ASSERT_EQ(mrc_close(c2), 0, "close the second context");
	ASSERT_EQ(ring_slots(), before, "the first context keeps its ring slot");
	ASSERT_EQ(one_write(2000), 1, "a WRITE of the first context completes after the second closed");
	/* Repair for the tests that follow. */
	if (reopen_ctx())
		test_state.failed++;
}

/* ====================================================================== */
/* E. Remote access errors                                                */
/* ====================================================================== */

#define E_LEN	65536u

static void check_async_after_refusal(struct pair *p);

/*
 * A's WRITE wr_id 1 is refused by B: A gets REM_ACCESS_ERR for it and
 * WR_FLUSH_ERR for the two good WRITEs queued behind it, A goes to ERROR,
 * and the target memory is untouched. The async events are checked by
 * check_async_after_refusal().
 */
static void expect_refused_write(struct pair *p, const uint8_t *src,
				 uint32_t lkey, uint64_t remote, uint32_t len,
				 uint32_t rkey, uint8_t *dst, uint32_t good_rkey,
				 const uint8_t *copy, const char *what)
{
	struct mrc_wc wc[4];
	int got;

	fprintf(stderr, "  refused WRITE: %s\n", what);
	drain_async();
	ASSERT_EQ(post_write1(p->a, 1, MRC_WR_WRITE, src, len, lkey, remote, rkey, 0),
		  0, "post the bad WRITE");
	ASSERT_EQ(post_write1(p->a, 2, MRC_WR_WRITE, src, 8192, lkey,
			      (uintptr_t)dst, good_rkey, 0), 0, "post a good WRITE after it");
	ASSERT_EQ(post_write1(p->a, 3, MRC_WR_WRITE, src, 8192, lkey,
			      (uintptr_t)dst + 8192, good_rkey, 0), 0,
		  "post another good WRITE");
	memset(wc, 0, sizeof(wc));
	got = collect(p->cqa, wc, 3, DEADLINE_MS);
	ASSERT_EQ(got, 3, "three completions within the deadline");
	if (got >= 1) {
		ASSERT_EQ(wc[0].wr_id, 1, "first completion: the bad WRITE");
		if (!ASSERT_EQ(wc[0].status, MRC_WC_REM_ACCESS_ERR, "bad WRITE: REM_ACCESS_ERR"))
			fprintf(stderr, "  got %s\n", mrc_wc_status_str(wc[0].status));
	}
	for (int i = 1; i < got; i++) {
		ASSERT_EQ(wc[i].wr_id, 1 + i, "later WRITEs in order");
		ASSERT_EQ(wc[i].status, MRC_WC_WR_FLUSH_ERR, "later WRITEs: WR_FLUSH_ERR");
	}
	ASSERT_EQ(quiet_for(p->cqa, 20), 0, "nothing more at A");
	ASSERT_EQ(qp_state(p->a), MRC_QP_ERROR, "A in ERROR");
	ASSERT_MEM_EQ(dst, copy, E_LEN, "target region unchanged");
	EXPECT_ERR(post_write1(p->a, 9, MRC_WR_WRITE, src, 10, lkey,
			       (uintptr_t)dst, good_rkey, 0), ENOTCONN,
		   "post_write after ERROR");
	EXPECT_ERR(mrc_post_recv(p->a, &(struct mrc_recv_wr){ .wr_id = 9 }), ENOTCONN,
		   "post_recv after ERROR");
}

static void check_async_after_refusal(struct pair *p)
{
	struct mrc_async_event ev;
	bool fatal_a = false, access_b = false;

	while (!mrc_get_async_event(ctx, &ev)) {
		if (ev.type == MRC_EVENT_QP_FATAL && ev.qp == p->a &&
		    ev.qp_num == mrc_qp_num(p->a)) {
			fatal_a = true;
			ASSERT_EQ(ev.status, MRC_WC_REM_ACCESS_ERR, "QP_FATAL status REM_ACCESS_ERR");
		}
		if (ev.type == MRC_EVENT_QP_ACCESS_ERR && ev.qp == p->b &&
		    ev.qp_num == mrc_qp_num(p->b))
			access_b = true;
	}
	ASSERT_TRUE(fatal_a, "async QP_FATAL for A");
	ASSERT_TRUE(access_b, "async QP_ACCESS_ERR for B");
}

static void test_remote_access_errors(void)
{
	uint8_t *src = malloc(E_LEN), *dst = malloc(E_LEN), *copy = malloc(E_LEN);
	uint8_t *ro = malloc(E_LEN), *ro_copy = malloc(E_LEN);
	struct mrc_mr *ms = NULL, *md = NULL, *mro = NULL;
	uint32_t lkey, rkey, wrong;
	struct pair p;
	struct mrc_wc wc[4];
	int got;

	memset(&p, 0, sizeof(p));
	if (!ASSERT_TRUE(src && dst && copy && ro && ro_copy, "buffers"))
		goto out_mem;
	fill_random(src, E_LEN, 7);
	memset(dst, 0x5A, E_LEN);
	memcpy(copy, dst, E_LEN);
	memset(ro, 0x3C, E_LEN);
	memcpy(ro_copy, ro, E_LEN);
	ms = mrc_reg_mr(ctx, src, E_LEN, MRC_ACCESS_LOCAL_WRITE);
	md = mrc_reg_mr(ctx, dst, E_LEN, MRC_ACCESS_REMOTE_WRITE);
	mro = mrc_reg_mr(ctx, ro, E_LEN, MRC_ACCESS_LOCAL_WRITE);	/* no remote */
	if (!ASSERT_TRUE(ms && md && mro, "regions"))
		goto out_mem;
	lkey = mrc_mr_lkey(ms);
	rkey = mrc_mr_rkey(md);
	wrong = rkey ^ 0x5a5a5a5au;
	if (wrong == lkey || wrong == mrc_mr_rkey(mro) || wrong == 0)
		wrong ^= 0x01000000u;

	if (!ASSERT_EQ(pair_create(&p, 8, 4, 1), 0, "create QPs"))
		goto out;

	/* 1. A key B never gave out. */
	if (!ASSERT_EQ(pair_connect(&p, "127.0.0.1", PSN_AB, PSN_BA, NULL), 0, "connect"))
		goto out;
	ASSERT_EQ(mrc_post_recv(p.b, &(struct mrc_recv_wr){ .wr_id = 77 }), 0,
		  "a receive at B");
	expect_refused_write(&p, src, lkey, (uintptr_t)dst, 4096, wrong, dst, rkey,
			     copy, "wrong rkey");
	check_async_after_refusal(&p);
	/*
	 * B refused: as in verbs (and recv.c's refuse_access()), the
	 * responder QP fails too and its posted receive is flushed.
	 */
	ASSERT_EQ(qp_state(p.b), MRC_QP_ERROR, "B in ERROR after refusing");
	memset(wc, 0, sizeof(wc));
	got = collect(p.cqb, wc, 1, 1000);
	if (ASSERT_EQ(got, 1, "B's receive flushed")) {
		ASSERT_EQ(wc[0].wr_id, 77, "B: flushed receive wr_id");
		ASSERT_EQ(wc[0].status, MRC_WC_WR_FLUSH_ERR, "B: flushed receive status");
	}

	/* 2. Past the end of B's region: the last 100 bytes stay. */
	if (!ASSERT_EQ(pair_connect(&p, "127.0.0.1", 0x10, 0x20, NULL), 0,
		       "reconnect through RESET"))
		goto out;
	drain_async();
	{
		struct mrc_wc w[4];

		ASSERT_EQ(post_write1(p.a, 1, MRC_WR_WRITE, src, 4096, lkey,
				      (uintptr_t)dst + E_LEN - 100, rkey, 0), 0,
			  "post WRITE across the end of the region");
		ASSERT_EQ(post_write1(p.a, 2, MRC_WR_WRITE, src, 8192, lkey,
				      (uintptr_t)dst, rkey, 0), 0, "post a good WRITE after it");
		memset(w, 0, sizeof(w));
		got = collect(p.cqa, w, 2, DEADLINE_MS);
		ASSERT_EQ(got, 2, "two completions");
		if (got >= 1 && !ASSERT_EQ(w[0].status, MRC_WC_REM_ACCESS_ERR,
					  "WRITE past the end: REM_ACCESS_ERR"))
			fprintf(stderr, "  got %s\n", mrc_wc_status_str(w[0].status));
		if (got >= 2)
			ASSERT_EQ(w[1].status, MRC_WC_WR_FLUSH_ERR, "next WRITE flushed");
		ASSERT_MEM_EQ(dst + E_LEN - 100, copy + E_LEN - 100, 100,
			      "last 100 bytes unchanged");
		ASSERT_MEM_EQ(dst, copy, E_LEN, "whole region unchanged");
		ASSERT_EQ(qp_state(p.a), MRC_QP_ERROR, "A in ERROR");
		check_async_after_refusal(&p);
	}

	/* 3. A region registered without MRC_ACCESS_REMOTE_WRITE. */
	if (!ASSERT_EQ(pair_connect(&p, "127.0.0.1", 0x30, 0x40, NULL), 0,
		       "reconnect through RESET"))
		goto out;
	drain_async();
	{
		struct mrc_wc w[2];

		ASSERT_EQ(post_write1(p.a, 1, MRC_WR_WRITE, src, 100, lkey,
				      (uintptr_t)ro, mrc_mr_rkey(mro), 0), 0,
			  "post WRITE into a local-only region");
		memset(w, 0, sizeof(w));
		got = collect(p.cqa, w, 1, DEADLINE_MS);
		if (ASSERT_EQ(got, 1, "a completion"))
			ASSERT_EQ(w[0].status, MRC_WC_REM_ACCESS_ERR,
				  "no remote write right: REM_ACCESS_ERR");
		ASSERT_MEM_EQ(ro, ro_copy, E_LEN, "local-only region unchanged");
		check_async_after_refusal(&p);
	}

	/* 4. After all that, the pair works again. */
	if (!ASSERT_EQ(pair_connect(&p, "127.0.0.1", 0x50, 0x60, NULL), 0,
		       "reconnect through RESET"))
		goto out;
	ASSERT_EQ(post_write1(p.a, 5, MRC_WR_WRITE, src, E_LEN, lkey,
			      (uintptr_t)dst, rkey, 0), 0, "post a good WRITE");
	memset(wc, 0, sizeof(wc));
	if (ASSERT_EQ(collect(p.cqa, wc, 1, DEADLINE_MS), 1, "it completes"))
		ASSERT_EQ(wc[0].status, MRC_WC_SUCCESS, "success after reconnecting");
	ASSERT_MEM_EQ(dst, src, E_LEN, "region written after reconnecting");
out:
	pair_destroy(&p);
out_mem:
	if (ms)
		mrc_dereg_mr(ms);
	if (md)
		mrc_dereg_mr(md);
	if (mro)
		mrc_dereg_mr(mro);
	free(src);
	free(dst);
	free(copy);
	free(ro);
	free(ro_copy);
}

/* ====================================================================== */
/* F. Retry exhaustion                                                    */
/* ====================================================================== */

static void test_retry_exhaustion(void)
{
	static uint8_t buf[4096];
	struct mrc_qp_counters c;
	struct mrc_mr *mr = NULL;
	struct mrc_qp *qp = NULL;
	struct mrc_cq *cq;
	struct mrc_wc wc[4];
	enum mrc_wc_status st = (enum mrc_wc_status)-1;
	uint64_t before, t0, elapsed_ns;
	uint32_t dead;
	int got;

	cq = mrc_create_cq(ctx, 8);
	mr = mrc_reg_mr(ctx, buf, sizeof(buf), MRC_ACCESS_LOCAL_WRITE);
	if (!ASSERT_TRUE(cq && mr, "CQ and MR"))
		goto out;
	qp = mrc_create_qp(ctx, &(struct mrc_qp_init_attr){
		.send_cq = cq, .recv_cq = cq, .max_send_wr = 4, .max_sge = 1 });
	if (!ASSERT_TRUE(qp != NULL, "create QP"))
		goto out;
	dead = unused_qpn();
	if (!ASSERT_TRUE(dead != 0, "a QP number nobody holds"))
		goto out;
	if (!ASSERT_EQ(connect_qp(qp, dead, "127.0.0.1", 0, 100,
				  &(struct qp_conf){ .set_retry = true, .timeout = 8,
						     .retry_cnt = 2,
						     .exp_retry_cnt = 2 }), 0,
		       "connect to a QP that does not exist"))
		goto out;
	drain_async();
	before = drops(offsetof(struct mrc_drop_stats, unknown_qp));
	t0 = now_ns();
	ASSERT_EQ(post_write1(qp, 1, MRC_WR_WRITE, buf, 1024, mrc_mr_lkey(mr),
			      0x10000, 0x1234, 0), 0, "post WRITE 1");
	ASSERT_EQ(post_write1(qp, 2, MRC_WR_WRITE, buf, 1, mrc_mr_lkey(mr),
			      0x20000, 0x1234, 0), 0, "post WRITE 2");
	memset(wc, 0, sizeof(wc));
	got = collect(cq, wc, 2, 5000);
	elapsed_ns = now_ns() - t0;
	fprintf(stderr, "  retries exhausted after %.2f ms\n", elapsed_ns / 1e6);
	ASSERT_EQ(got, 2, "both WRITEs complete");
	if (got >= 1) {
		ASSERT_EQ(wc[0].wr_id, 1, "first: WRITE 1");
		ASSERT_EQ(wc[0].status, MRC_WC_RETRY_EXC_ERR, "first: RETRY_EXC_ERR");
	}
	if (got >= 2) {
		ASSERT_EQ(wc[1].wr_id, 2, "second: WRITE 2");
		ASSERT_EQ(wc[1].status, MRC_WC_WR_FLUSH_ERR, "second: WR_FLUSH_ERR");
	}
	ASSERT_TRUE(elapsed_ns < 1000000000ull, "within 1 s");
	/* 1 + 2 fixed + 2 doubling intervals: 9 x 262 us at the least. */
	ASSERT_TRUE(elapsed_ns >= 2000000ull, "not before the retries ran (>= 2 ms)");
	ASSERT_EQ(qp_state(qp), MRC_QP_ERROR, "QP in ERROR");
	ASSERT_TRUE(find_async(MRC_EVENT_QP_FATAL, qp, &st), "QP_FATAL event");
	ASSERT_EQ(st, MRC_WC_RETRY_EXC_ERR, "QP_FATAL status RETRY_EXC_ERR");
	if (ASSERT_EQ(mrc_qp_counters(qp, &c), 0, "counters")) {
		/* Each of retry_cnt + exp_retry_cnt retries resends both packets. */
		ASSERT_EQ(c.tx_retransmits, 2 * (2 + 2), "retransmissions: 2 packets x 4 retries");
		ASSERT_EQ(c.tx_packets, 2 + c.tx_retransmits, "packets sent");
		ASSERT_EQ(drops(offsetof(struct mrc_drop_stats, unknown_qp)) - before,
			  c.tx_packets, "XDP counted every packet as unknown_qp");
	}
	ASSERT_EQ(quiet_for(cq, 20), 0, "nothing more");
out:
	if (qp)
		ASSERT_EQ(mrc_destroy_qp(qp), 0, "destroy QP");
	if (mr)
		mrc_dereg_mr(mr);
	if (cq)
		ASSERT_EQ(mrc_destroy_cq(cq), 0, "destroy CQ");
}

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
	};
	x1->local.addrs[0] = ss_of(LOCAL4);
	x1->local.addrs[1] = ss_of(LOCAL6);
	x2->local = (struct mrc_conn_params){
		.qpn = 0xFFFFFF, .psn = 1, .rkey = 0, .path_mtu = 9000,
		.vaddr = 0xFFFFFFFFFFFFF000ull, .length = 4096, .n_addrs = 3,
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

static void test_conn_exchange(void)
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
 * SUSPECTED BUG: mrc.h says mrc_conn_exchange() returns 0 or -errno. When
 * the peer has already closed the connection, the write() in libmrc
 * raises SIGPIPE, whose default action kills the calling process instead
 * of returning -EPIPE (libmrc neither uses send(MSG_NOSIGNAL) nor
 * SO_NOSIGPIPE-like protection). Run in a child with the default SIGPIPE
 * disposition, as an application that never heard of SIGPIPE has it.
 */
static void test_conn_exchange_peer_closed(void)
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

/* ====================================================================== */
/* Setup and cleanup                                                      */
/* ====================================================================== */

static void remove_pin_dir(void)
{
	pin_dir_remove(pin_dir, sizeof(pin_dir));
}

static void cleanup(void)
{
	if (ctx) {
		mrc_close(ctx);
		ctx = NULL;
	}
	if (tc_attached) {
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = lo_ifindex,
			    .attach_point = BPF_TC_EGRESS);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1);

		bpf_tc_detach(&hook, &opts);
		tc_attached = false;
	}
	if (xdp_attached) {
		bpf_xdp_detach(lo_ifindex, XDP_FLAGS_SKB_MODE, NULL);
		xdp_attached = false;
	}
	if (skel) {
		struct bpf_map *map;

		bpf_object__for_each_map(map, skel->obj)
			if (bpf_map__is_pinned(map))
				bpf_map__unpin(map, NULL);
		mrc__destroy(skel);
		skel = NULL;
	}
	remove_pin_dir();
}

/*
 * On a signal only the pins matter (the netns, its attachments and the
 * maps' last references go with the process).
 */
static void on_signal(int sig)
{
	remove_pin_dir();
	signal(sig, SIG_DFL);
	raise(sig);
}

static int lo_up(void)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr))
		err = -errno;
	ifr.ifr_flags |= IFF_UP;
	if (!err && ioctl(fd, SIOCSIFFLAGS, &ifr))
		err = -errno;
	close(fd);
	return err;
}

static int setup(void)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .pin_root_path = pin_dir);
	int err, sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV,
			    SIGBUS, SIGFPE, SIGILL };

	/* A network of our own before anything is loaded or opened. */
	if (unshare(CLONE_NEWNET)) {
		fprintf(stderr, "unshare(CLONE_NEWNET): %s (root?)\n", strerror(errno));
		return -1;
	}
	err = lo_up();
	if (err) {
		fprintf(stderr, "bringing lo up: %s\n", strerror(-err));
		return -1;
	}
	if (system("ip addr add " LOCAL4 "/32 dev lo && "
		   "ip -6 addr add " LOCAL6 "/128 dev lo nodad")) {
		fprintf(stderr, "adding addresses to lo failed\n");
		return -1;
	}
	lo_ifindex = (int)if_nametoindex("lo");
	if (!lo_ifindex) {
		fprintf(stderr, "no lo: %s\n", strerror(errno));
		return -1;
	}

	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "libbpf_num_possible_cpus: %d\n", ncpus);
		return -1;
	}
	snprintf(pin_dir, sizeof(pin_dir), "/sys/fs/bpf/mrc-libtest-%d", (int)getpid());
	if (mkdir(pin_dir, 0700)) {
		fprintf(stderr, "mkdir %s: %s (bpffs mounted? root?)\n", pin_dir,
			strerror(errno));
		pin_dir[0] = 0;
		return -1;
	}
	atexit(cleanup);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], on_signal);
	signal(SIGPIPE, SIG_IGN);

	skel = mrc__open_opts(&oo);
	if (!skel) {
		fprintf(stderr, "opening mrc: %s\n", strerror(errno));
		return -1;
	}
	err = mrc__load(skel);
	if (err) {
		fprintf(stderr, "loading mrc: %s (run as root)\n", strerror(-err));
		return -1;
	}
	/* What mrcd writes after loading: mrc_open checks the ABI version. */
	err = bpf_map_update_elem(bpf_map__fd(skel->maps.mrc_cfg), &(__u32){ 0 },
				  &(struct mrc_global_cfg){ .abi_version = MRC_ABI_VERSION },
				  BPF_ANY);
	if (err) {
		fprintf(stderr, "writing mrc_cfg: %s\n", strerror(errno));
		return -1;
	}

	err = bpf_xdp_attach(lo_ifindex, bpf_program__fd(skel->progs.mrc_xdp_rx),
			     XDP_FLAGS_SKB_MODE, NULL);
	if (err) {
		fprintf(stderr, "attaching XDP to lo: %s\n", strerror(-err));
		return -1;
	}
	xdp_attached = true;
	{
		LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = lo_ifindex,
			    .attach_point = BPF_TC_EGRESS);
		LIBBPF_OPTS(bpf_tc_opts, opts, .handle = 1, .priority = 1,
			    .prog_fd = bpf_program__fd(skel->progs.mrc_tc_tx));

		err = bpf_tc_hook_create(&hook);
		if (err && err != -EEXIST) {
			fprintf(stderr, "clsact on lo: %s\n", strerror(-err));
			return -1;
		}
		err = bpf_tc_attach(&hook, &opts);
		if (err) {
			fprintf(stderr, "attaching TC to lo: %s\n", strerror(-err));
			return -1;
		}
		tc_attached = true;
	}
	err = set_plane(0, (uint32_t)lo_ifindex, "lo");
	if (err) {
		fprintf(stderr, "writing mrc_planes: %s\n", strerror(-err));
		return -1;
	}
	ctx = mrc_open(&(struct mrc_context_attr){ .pin_dir = pin_dir });
	if (!ctx) {
		fprintf(stderr, "mrc_open(%s): %s\n", pin_dir, strerror(errno));
		return -1;
	}
	return 0;
}

int main(void)
{
	if (setup()) {
		printf("[libmrc.setup] FAIL\n");
		cleanup();
		return 1;
	}
	RUN_TEST("libmrc.args", test_args);
	RUN_TEST("libmrc.close_releases", test_close_releases);
	RUN_TEST("libmrc.local_addrs", test_local_addrs);
	RUN_TEST("libmrc.qp_state_machine", test_qp_state_machine);
	RUN_TEST("libmrc.modify_in_reset_error", test_modify_in_reset_error);
	RUN_TEST("libmrc.local_protection", test_local_protection);
	RUN_TEST("libmrc.loopback_ipv4", test_loopback_ipv4);
	RUN_TEST("libmrc.loopback_ipv6", test_loopback_ipv6);
	RUN_TEST("libmrc.write_imm_waits_for_receive", test_write_imm_waits_for_receive);
	RUN_TEST("libmrc.large_write_window", test_large_write_window);
	RUN_TEST("libmrc.many_writes_ring_wrap", test_many_writes_ring_wrap);
	RUN_TEST("libmrc.zero_length_write", test_zero_length_write);
	RUN_TEST("libmrc.mtu_change_in_rts", test_mtu_change_in_rts);
	RUN_TEST("libmrc.qp_numbers_unique", test_qp_numbers_unique);
	RUN_TEST("libmrc.two_contexts", test_two_contexts);
	RUN_TEST("libmrc.remote_access_errors", test_remote_access_errors);
	RUN_TEST("libmrc.retry_exhaustion", test_retry_exhaustion);
	RUN_TEST("libmrc.conn_exchange", test_conn_exchange);
	RUN_TEST("libmrc.conn_exchange_peer_closed", test_conn_exchange_peer_closed);
	cleanup();
	return TEST_EXIT();
}
