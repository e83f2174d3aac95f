// SPDX-License-Identifier: GPL-2.0
/*
 * The lab_fabric tests' environment and main(): the program loaded, the
 * ports seeded in lab_ports/lab_links/lab_stats/lab_queues, one program run
 * per packet through bpf_prog_test_run_opts(). The tests register
 * themselves (TEST_CASE) in the other files of this folder.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "lab_fabric_test.h"

TEST_STATE_DEFINE;

struct lab_fabric *lf_skel;
__u64 netns_cookie;
static int ncpus;
static __u32 next_id = 1;

/* ====================================================================== */
/* Map seeding and program runs                                           */
/* ====================================================================== */

static int current_netns_cookie(__u64 *cookie)
{
	socklen_t len = sizeof(*cookie);
	int fd = socket(AF_INET, SOCK_DGRAM, 0), err;

	if (fd < 0)
		return -errno;
	err = getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len) ? -errno : 0;
	close(fd);
	return err;
}

struct lab_port_key port_key(__u32 hook)
{
	struct lab_port_key key = {
		.netns_cookie = netns_cookie, .ifindex = LO_IFINDEX, .hook = hook,
	};
	return key;
}

/* Forget both hooks' registrations, so a test sees only its own port. */
void unregister_ports(void)
{
	struct lab_port_key k;
	__u32 hook;

	for (hook = LAB_HOOK_INGRESS; hook <= LAB_HOOK_EGRESS; hook++) {
		k = port_key(hook);
		bpf_map_delete_elem(bpf_map__fd(lf_skel->maps.lab_ports), &k);
	}
}

static int zero_port_state(__u32 id)
{
	struct lab_port_stats *st = calloc((size_t)ncpus, sizeof(*st));
	struct lab_queue q = {};
	int err;

	if (!st)
		return -ENOMEM;
	err = bpf_map_update_elem(bpf_map__fd(lf_skel->maps.lab_stats), &id, st, BPF_ANY);
	if (!err)
		err = bpf_map_update_elem(bpf_map__fd(lf_skel->maps.lab_queues), &id, &q,
					  BPF_ANY);
	free(st);
	return err;
}

int prog_fd_for(__u32 hook)
{
	return bpf_program__fd(hook == LAB_HOOK_EGRESS ? lf_skel->progs.lab_port_egress :
				lf_skel->progs.lab_port_ingress);
}

/* A fresh port_id on a fresh link configured as `cfg`, state zeroed. */
struct port new_port(__u32 hook, const struct lab_link_cfg *cfg)
{
	struct port p = { .id = next_id++, .prog_fd = prog_fd_for(hook) };
	int err;

	err = bpf_map_update_elem(bpf_map__fd(lf_skel->maps.lab_links), &p.id, cfg, BPF_ANY);
	ASSERT_EQ(err, 0, "seed lab_links");
	ASSERT_EQ(zero_port_state(p.id), 0, "zero lab_stats/lab_queues");
	return p;
}

/* Make `key` (netns, device, hook) the attachment point of port `p`. */
void register_port(const struct lab_port_key *key, const struct port *p,
			  __u32 flags)
{
	struct lab_port val = { .port_id = p->id, .link_id = p->id, .flags = flags };
	int err = bpf_map_update_elem(bpf_map__fd(lf_skel->maps.lab_ports), key, &val,
				      BPF_ANY);

	ASSERT_EQ(err, 0, "seed lab_ports");
}

/* A fresh port registered on loopback at `hook`. */
static struct port add_port(__u32 hook, __u32 flags, const struct lab_link_cfg *cfg)
{
	struct port p = new_port(hook, cfg);
	struct lab_port_key key = port_key(hook);

	register_port(&key, &p, flags);
	return p;
}

/* The common case: only this port is registered. */
struct port setup_port(__u32 hook, __u32 flags, const struct lab_link_cfg *cfg)
{
	unregister_ports();
	return add_port(hook, flags, cfg);
}

/* Start a port's queue at `backlog` bytes, as if traffic had just left it. */
void seed_backlog(const struct port *p, __u64 backlog)
{
	struct lab_queue q = { .backlog = backlog };
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* bpf_ktime_get_ns() clock */
	q.last_ns = (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
	ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(lf_skel->maps.lab_queues), &p->id, &q,
				      BPF_ANY), 0, "seed lab_queues backlog");
}

struct lab_port_stats read_stats(const struct port *p)
{
	struct lab_port_stats sum = {}, *st = calloc((size_t)ncpus, sizeof(*st));
	int i;

	if (!st || bpf_map_lookup_elem(bpf_map__fd(lf_skel->maps.lab_stats), &p->id, st)) {
		ASSERT_TRUE(0, "read lab_stats");
		free(st);
		return sum;
	}
	for (i = 0; i < ncpus; i++) {
		sum.packets += st[i].packets;
		sum.bytes += st[i].bytes;
		sum.drop_fault += st[i].drop_fault;
		sum.drop_queue += st[i].drop_queue;
		sum.ecn_marked += st[i].ecn_marked;
		sum.trimmed += st[i].trimmed;
		sum.malformed += st[i].malformed;
	}
	free(st);
	return sum;
}

/* Counter expectations; fields not named must be zero. */
void expect_stats(const struct port *p, const struct lab_port_stats *want)
{
	struct lab_port_stats got = read_stats(p);

	ASSERT_EQ(got.packets, want->packets, "stats.packets");
	ASSERT_EQ(got.bytes, want->bytes, "stats.bytes");
	ASSERT_EQ(got.drop_fault, want->drop_fault, "stats.drop_fault");
	ASSERT_EQ(got.drop_queue, want->drop_queue, "stats.drop_queue");
	ASSERT_EQ(got.ecn_marked, want->ecn_marked, "stats.ecn_marked");
	ASSERT_EQ(got.trimmed, want->trimmed, "stats.trimmed");
	ASSERT_EQ(got.malformed, want->malformed, "stats.malformed");
}

/* Run the port's program once on `pkt` with the skb fields of ctx_in. */
void run_pkt_ctx(const struct port *p, const void *pkt, size_t len,
		 struct __sk_buff *ctx_in, struct run *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = pkt, .data_size_in = (__u32)len,
		    .data_out = r->out, .data_size_out = sizeof(r->out),
		    .ctx_in = ctx_in, .ctx_size_in = sizeof(*ctx_in),
		    .ctx_out = &r->ctx, .ctx_size_out = sizeof(r->ctx),
		    .repeat = 1);

	memset(&r->ctx, 0, sizeof(r->ctx));
	r->err = bpf_prog_test_run_opts(p->prog_fd, &opts);
	r->verdict = opts.retval;
	r->out_len = opts.data_size_out;
}

/* Run the port's program once on `pkt` as seen on loopback. */
void run_pkt(const struct port *p, const void *pkt, size_t len, struct run *r)
{
	struct __sk_buff ctx_in = { .ifindex = p->ifindex ? p->ifindex : LO_IFINDEX };

	run_pkt_ctx(p, pkt, len, &ctx_in, r);
}

/* Name the packet of a sequence that failed an assertion. */
void note_packet(int failed_before, int i)
{
	if (test_state.failed != failed_before)
		fprintf(stderr, "  (at packet %d of the sequence)\n", i);
}

/* The packet left the port exactly as it came in. */
int expect_forwarded_unchanged(const struct run *r, const void *pkt, size_t len)
{
	return ASSERT_EQ(r->err, 0, "test_run") &&
	       ASSERT_EQ(r->verdict, TC_ACT_OK, "verdict") &&
	       ASSERT_EQ(r->out_len, len, "output length") &&
	       ASSERT_MEM_EQ(r->out, pkt, len, "output bytes");
}

void expect_dropped(const struct run *r)
{
	ASSERT_EQ(r->err, 0, "test_run");
	ASSERT_EQ(r->verdict, TC_ACT_SHOT, "verdict");
}

/* ====================================================================== */

static int setup(void)
{
	int err;

	libbpf_set_strict_mode(LIBBPF_STRICT_ALL);
	ncpus = libbpf_num_possible_cpus();
	if (ncpus <= 0) {
		fprintf(stderr, "libbpf_num_possible_cpus: %d\n", ncpus);
		return -1;
	}
	err = current_netns_cookie(&netns_cookie);
	if (err) {
		fprintf(stderr, "SO_NETNS_COOKIE: %s\n", strerror(-err));
		return -1;
	}
	lf_skel = lab_fabric__open_and_load();
	if (!lf_skel) {
		fprintf(stderr, "loading lab_fabric: %s (run as root)\n", strerror(errno));
		return -1;
	}
	return 0;
}

int main(void)
{
	if (setup()) {
		/* Without the program every test is a failure, not a skip. */
		printf("[lab.load] FAIL\n");
		return 1;
	}
	RUN_REGISTERED_TESTS();
	unregister_ports();
	lab_fabric__destroy(lf_skel);
	return TEST_EXIT();
}
