// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the libmrc tests: addresses, the fast path's maps read
 * directly, asynchronous events, completions with deadlines, QPs and the
 * A/B pair most data tests use.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "libmrc_test.h"

uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct sockaddr_storage ss_of(const char *ip)
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
void key_of_ss(const struct sockaddr_storage *ss, uint8_t key[16])
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

void key_of(const char *ip, uint8_t key[16])
{
	struct sockaddr_storage ss = ss_of(ip);

	key_of_ss(&ss, key);
}

/* Same address (an IPv4 address may come back IPv4-mapped). */
bool addr_is(const struct sockaddr_storage *ss, const char *ip)
{
	uint8_t a[16], b[16];

	if (ss->ss_family != AF_INET && ss->ss_family != AF_INET6)
		return false;
	key_of_ss(ss, a);
	key_of(ip, b);
	return !memcmp(a, b, 16);
}

void fill_random(uint8_t *p, size_t len, uint64_t seed)
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

int qp_info(uint32_t qpn, struct mrc_qp_info *info)
{
	uint32_t slot = mrc_qpn_to_slot(qpn);

	memset(info, 0, sizeof(*info));
	return bpf_map_lookup_elem(bpf_map__fd(lm_skel->maps.mrc_qps), &slot, info) ?
		-errno : 0;
}

/* The pid that owns a QP number, or -ENOENT. */
long qp_owner(uint32_t qpn)
{
	uint32_t pid;

	if (bpf_map_lookup_elem(bpf_map__fd(lm_skel->maps.mrc_qp_owner), &qpn, &pid))
		return -errno;
	return pid;
}

/* The local QP TC egress finds for (remote_qpn, addr), or -ENOENT. */
long peer_entry(uint32_t remote_qpn, const char *ip)
{
	struct mrc_peer_key key = { .remote_qpn = remote_qpn };
	uint32_t qpn;

	key_of(ip, key.addr);
	if (bpf_map_lookup_elem(bpf_map__fd(lm_skel->maps.mrc_peers), &key, &qpn))
		return -errno;
	return qpn;
}

/* A QP's entry in its state maps, as libmrc published it (mrc_qps). */
static uint32_t state_idx_of(uint32_t slot)
{
	return mrc_qp_state_idx(bpf_map__fd(lm_skel->maps.mrc_qps), slot);
}

int tx_state(uint32_t qpn, struct mrc_tx_state *tx)
{
	uint32_t slot = mrc_qpn_to_slot(qpn);

	return mrc_qp_state_read(bpf_map__fd(lm_skel->maps.mrc_tx), slot, state_idx_of(slot),
				 tx, sizeof(*tx));
}

int rx_state(uint32_t qpn, struct mrc_rx_state *rx)
{
	uint32_t slot = mrc_qpn_to_slot(qpn);

	return mrc_qp_state_read(bpf_map__fd(lm_skel->maps.mrc_rx), slot, state_idx_of(slot),
				 rx, sizeof(*rx));
}

/* XDP drops for one reason, summed over the CPUs. */
uint64_t drops(size_t field_off)
{
	struct mrc_drop_stats *v = calloc((size_t)lm_ncpus, sizeof(*v));
	uint32_t zero = 0;
	uint64_t sum = 0;

	if (!v)
		return 0;
	if (!bpf_map_lookup_elem(bpf_map__fd(lm_skel->maps.mrc_drops), &zero, v))
		for (int c = 0; c < lm_ncpus; c++)
			sum += *(uint64_t *)((uint8_t *)&v[c] + field_off);
	free(v);
	return sum;
}

int lm_set_plane(uint32_t plane, uint32_t ifindex, const char *name)
{
	struct mrc_plane p = { .ifindex = ifindex };

	snprintf(p.name, sizeof(p.name), "%s", name);
	return bpf_map_update_elem(bpf_map__fd(lm_skel->maps.mrc_planes), &plane, &p,
				   BPF_ANY) ? -errno : 0;
}

/* A QP number nobody holds and whose slot is RESET, or 0. */
uint32_t unused_qpn(void)
{
	struct mrc_qp_info info;

	for (uint32_t n = MRC_MAX_QPS; n >= 1; n--)
		if (qp_owner(n) == -ENOENT && !qp_info(n, &info) &&
		    info.state == MRC_QPS_RESET)
			return n;
	return 0;
}

/* ---- asynchronous events --------------------------------------------- */

void drain_async(void)
{
	struct mrc_async_event ev;

	while (!mrc_get_async_event(ctx, &ev))
		;
}

/* Drain the events; true if one (type, qp) was among them (its status out). */
bool find_async(enum mrc_async_event_type type, struct mrc_qp *qp,
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
int collect(struct mrc_cq *cq, struct mrc_wc *out, int n, int timeout_ms)
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
int quiet_for(struct mrc_cq *cq, int ms)
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

int set_state(struct mrc_qp *qp, enum mrc_qp_state st)
{
	struct mrc_qp_attr a = { .qp_state = st };

	return mrc_modify_qp(qp, &a, MRC_QP_ATTR_STATE);
}

/* Whatever state it is in: RESET, INIT, RTR, RTS. */
int connect_qp(struct mrc_qp *qp, uint32_t dest_qpn, uint32_t dest_key,
	       const char *peer, uint32_t rq_psn, uint32_t sq_psn,
	       const struct qp_conf *c)
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
	a.dest_key = dest_key;
	a.rq_psn = rq_psn;
	a.n_peer_addrs = 1;
	a.peer_addrs[0] = ss_of(peer);
	a.path_mtu = c && c->mtu ? c->mtu : 1024;
	mask = MRC_QP_ATTR_STATE | MRC_QP_ATTR_DEST_QPN | MRC_QP_ATTR_RQ_PSN |
	       MRC_QP_ATTR_PEER_ADDRS | MRC_QP_ATTR_PATH_MTU;
	if (dest_key != MRC_KEY_INTEROP)	/* an interop QP takes none */
		mask |= MRC_QP_ATTR_DEST_KEY;
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

enum mrc_qp_state qp_state(struct mrc_qp *qp)
{
	struct mrc_qp_attr a;

	memset(&a, 0, sizeof(a));
	a.qp_state = (enum mrc_qp_state)-1;
	if (mrc_query_qp(qp, &a))
		return (enum mrc_qp_state)-1;
	return a.qp_state;
}

int pair_create(struct pair *p, uint32_t send_wr, uint32_t recv_wr,
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

int pair_connect(struct pair *p, const char *addr, uint32_t psn_ab,
			uint32_t psn_ba, const struct qp_conf *c)
{
	int err = connect_qp(p->a, mrc_qp_num(p->b), mrc_qp_key(p->b), addr, psn_ba, psn_ab, c);

	if (!err)
		err = connect_qp(p->b, mrc_qp_num(p->a), mrc_qp_key(p->a), addr, psn_ab, psn_ba, c);
	return err;
}

void pair_destroy(struct pair *p)
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

int post_write1(struct mrc_qp *qp, uint64_t wr_id, enum mrc_wr_opcode op,
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
int ring_slots(void)
{
	int fd = bpf_map__fd(lm_skel->maps.mrc_ctx_owner), n = 0;
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
int reopen_ctx(void)
{
	if (ctx)
		mrc_close(ctx);
	ctx = mrc_open(&(struct mrc_context_attr){ .pin_dir = pin_dir });
	if (!ctx)
		fprintf(stderr, "  reopening the context: %s\n", strerror(errno));
	return ctx ? 0 : -1;
}
