// SPDX-License-Identifier: GPL-2.0
/*
 * libmrc on maps of LIMITS_QPS QPs and LIMITS_CTX contexts: it learns the
 * limits from the maps, draws QP numbers over all of 1..LIMITS_QPS, never
 * takes one a live process holds, and when none is left fails with
 * ENOSPC and a message naming mrcd's limit; a context finds every ring
 * slot held and fails with EMFILE naming --max-contexts.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "limits_test.h"
#include "mrc/mrc.h"

static char last_msg[512];

static void keep_message(int level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

/* The fast path as mrcd leaves it for libmrc: configured, nothing owned. */
static struct mrc_context *open_context(void)
{
	struct mrc_global_cfg cfg = { .udp_port = MRC_UDP_PORT_DEFAULT,
				      .abi_version = MRC_ABI_VERSION };
	__u32 zero = 0;

	ASSERT_EQ(bpf_map_update_elem(MFD(mrc_cfg), &zero, &cfg, BPF_ANY), 0,
		  "write mrc_cfg");
	return mrc_open(&(struct mrc_context_attr){ .pin_dir = fixture_pin_dir() });
}

/* Owner map entries first..last held by pid 1, a live process not us. */
static void hold_keys(int fd, __u32 first, __u32 last, int hold)
{
	__u32 owner = 1;

	for (__u32 k = first; k <= last; k++) {
		if (hold)
			ASSERT_EQ(bpf_map_update_elem(fd, &k, &owner, BPF_ANY), 0,
				  "hold an owner entry");
		else
			bpf_map_delete_elem(fd, &k);
	}
}

/*
 * With QP numbers 1..HELD held by another live process, a context gets
 * exactly the other LIMITS_QPS - HELD, all distinct, none held, some past
 * the built 256; the next is ENOSPC and the message names the limit.
 */
TEST_CASE(test_qp_numbers_to_the_limit, "limits.qp_numbers_to_the_limit")
{
	enum { HELD = 512, FREE = LIMITS_QPS - HELD };
	static struct mrc_qp *qps[LIMITS_QPS + 1];
	static __u8 seen[LIMITS_QPS + 1];
	struct mrc_context *c;
	struct mrc_cq *cq;
	int n = 0, dups = 0, bad = 0, past_built = 0;
	char want[64];

	reset_maps();
	memset(seen, 0, sizeof(seen));
	hold_keys(MFD(mrc_qp_owner), 1, HELD, 1);
	c = open_context();
	if (!ASSERT_TRUE(c != NULL, "mrc_open on maps sized for 1024 QPs"))
		goto out;
	cq = mrc_create_cq(c, 16);
	if (!ASSERT_TRUE(cq != NULL, "create CQ"))
		goto out;
	for (n = 0; n <= FREE; n++) {
		__u32 qpn;

		qps[n] = mrc_create_qp(c, &(struct mrc_qp_init_attr){
			.send_cq = cq, .recv_cq = cq, .max_send_wr = 1 });
		if (!qps[n])
			break;
		qpn = mrc_qp_num(qps[n]);
		if (qpn <= HELD || qpn > LIMITS_QPS)
			bad++;
		else if (seen[qpn]++)
			dups++;
		past_built += qpn > MRC_MAX_QPS;
	}
	ASSERT_EQ(n, FREE, "every free QP number handed out, no more");
	ASSERT_EQ(errno, ENOSPC, "then ENOSPC");
	ASSERT_EQ(bad, 0, "no number held by the other process, none past the limit");
	ASSERT_EQ(dups, 0, "no number handed out twice");
	ASSERT_TRUE(past_built > 0, "numbers past the built 256 used");
	snprintf(want, sizeof(want), "mrcd --max-qps %d", LIMITS_QPS);
	if (!ASSERT_TRUE(strstr(last_msg, want) != NULL, "the message names the limit"))
		fprintf(stderr, "  message: %s\n", last_msg);
	while (n > 0)
		mrc_destroy_qp(qps[--n]);
	mrc_destroy_cq(cq);
out:
	if (c)
		mrc_close(c);
	hold_keys(MFD(mrc_qp_owner), 1, HELD, 0);
}

/*
 * Every ring slot but one held by a live process: one context opens, on
 * the free slot (past the built 64), the next gets EMFILE naming
 * --max-contexts.
 */
TEST_CASE(test_contexts_to_the_limit, "limits.contexts_to_the_limit")
{
	struct mrc_context *c1, *c2;
	__u32 free_slot = LIMITS_CTX - 1, owner = 0;
	char want[64];

	reset_maps();
	hold_keys(MFD(mrc_ctx_owner), 0, free_slot - 1, 1);
	c1 = open_context();
	ASSERT_TRUE(c1 != NULL, "a context on the one free slot");
	ASSERT_EQ(bpf_map_lookup_elem(MFD(mrc_ctx_owner), &free_slot, &owner), 0,
		  "the last slot (99) claimed");
	ASSERT_EQ(owner, (__u32)getpid(), "by us");
	last_msg[0] = '\0';
	errno = 0;
	c2 = open_context();
	ASSERT_TRUE(c2 == NULL, "no second context");
	ASSERT_EQ(errno, EMFILE, "EMFILE");
	snprintf(want, sizeof(want), "mrcd --max-contexts %d", LIMITS_CTX);
	if (!ASSERT_TRUE(strstr(last_msg, want) != NULL, "the message names the limit"))
		fprintf(stderr, "  message: %s\n", last_msg);
	if (c2)
		mrc_close(c2);
	if (c1)
		mrc_close(c1);
	hold_keys(MFD(mrc_ctx_owner), 0, free_slot - 1, 0);
}

__attribute__((constructor)) static void capture_messages(void)
{
	mrc_set_log_fn(keep_message, NULL);
}
