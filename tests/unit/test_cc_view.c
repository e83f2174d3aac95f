// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * Unit tests of user/agent/cc_view: the RTT percentiles mrcctl `qp show` and
 * mrc-perf's "cc" read from a window's histogram, the JSON members
 * both print, and opening a window's view without pins.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/cc_view.h"
#include "test.h"

TEST_STATE_DEFINE;

static void add(struct mrc_cc_view *v, uint64_t rtt_ns, uint64_t n)
{
	v->rtt_hist[mrc_rtt_bucket(rtt_ns)] += n;
}

TEST_CASE(test_no_samples, "cc_view.no_samples")
{
	struct mrc_cc_view v = {};

	ASSERT_EQ(cc_rtt_samples(&v), 0, "samples");
	ASSERT_EQ(cc_rtt_percentile_ns(&v, 50), 0, "p50 without samples");
	ASSERT_EQ(cc_rtt_percentile_ns(&v, 99), 0, "p99 without samples");
}

TEST_CASE(test_one_bucket, "cc_view.one_bucket")
{
	struct mrc_cc_view v = {};
	uint64_t top;

	add(&v, 20000, 7);
	top = cc_rtt_percentile_ns(&v, 50);
	ASSERT_EQ(cc_rtt_samples(&v), 7, "samples");
	ASSERT_EQ(top, mrc_rtt_bucket_top_ns(mrc_rtt_bucket(20000)), "p50: its bucket");
	ASSERT_EQ(cc_rtt_percentile_ns(&v, 99), top, "p99: the same bucket");
	/* An upper bound, at most 1/16 above (16 buckets per octave). */
	ASSERT_TRUE(top >= 20000 && top <= 20000 + 20000 / 16 + 1024, "20 us bucket edge");
}

TEST_CASE(test_tail, "cc_view.tail")
{
	struct mrc_cc_view v = {};
	uint64_t fast = mrc_rtt_bucket_top_ns(mrc_rtt_bucket(10000));
	uint64_t slow = mrc_rtt_bucket_top_ns(mrc_rtt_bucket(1000000));

	/* 99 of 100 at 10 us: p99 is still 10 us; a 98/2 split moves it. */
	add(&v, 10000, 99);
	add(&v, 1000000, 1);
	ASSERT_EQ(cc_rtt_percentile_ns(&v, 50), fast, "p50 of 99/1");
	ASSERT_EQ(cc_rtt_percentile_ns(&v, 99), fast, "p99 of 99/1");
	ASSERT_EQ(cc_rtt_percentile_ns(&v, 100), slow, "p100 of 99/1");
	memset(&v, 0, sizeof(v));
	add(&v, 10000, 98);
	add(&v, 1000000, 2);
	ASSERT_EQ(cc_rtt_percentile_ns(&v, 99), slow, "p99 of 98/2");
	/* The median of 1 fast and 2 slow samples is slow. */
	memset(&v, 0, sizeof(v));
	add(&v, 10000, 1);
	add(&v, 1000000, 2);
	ASSERT_EQ(cc_rtt_percentile_ns(&v, 50), slow, "p50 of 1/2");
}

TEST_CASE(test_overflow_bucket, "cc_view.overflow_bucket")
{
	struct mrc_cc_view v = {};

	add(&v, 10ULL * 1000000000, 3);	/* 10 s: the last bucket takes it */
	ASSERT_EQ(cc_rtt_percentile_ns(&v, 50), mrc_rtt_bucket_top_ns(MRC_RTT_BUCKETS - 1),
		  "above the histogram");
}

TEST_CASE(test_json_members, "cc_view.json_members")
{
	struct mrc_cc_view v = { .cwnd = 262144, .algo = MRC_CC_NSCC, .inflight = 4096,
				 .min_rtt_ns = 9000, .n_md = 3, .acked_bytes = 1 << 20 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	add(&v, 20000, 2);
	ASSERT_TRUE(f != NULL, "memstream");
	if (!f)
		return;
	cc_view_json_members(f, &v);
	fclose(f);
	ASSERT_TRUE(!strncmp(buf, "\"algo\": \"nscc\", \"cwnd\": 262144, \"inflight\": 4096",
			     strlen("\"algo\": \"nscc\", \"cwnd\": 262144, \"inflight\": 4096")),
		    "starts with algo, cwnd, inflight");
	ASSERT_TRUE(strstr(buf, "\"n_md\": 3") != NULL, "n_md");
	ASSERT_TRUE(strstr(buf, "\"acked_bytes\": 1048576") != NULL, "acked_bytes");
	ASSERT_TRUE(strstr(buf, "\"rtt_samples\": 2") != NULL, "rtt_samples");
	ASSERT_TRUE(strstr(buf, "\"rtt_p99_us\": ") != NULL, "rtt_p99_us");
	ASSERT_TRUE(buf[len - 1] != ',' && buf[0] == '"', "members only, no braces");
	free(buf);
	ASSERT_TRUE(!strcmp(cc_algo_name(MRC_CC_NONE), "none") &&
		    !strcmp(cc_algo_name(MRC_CC_NSCC), "nscc") &&
		    !strcmp(cc_algo_name(7), "?"), "algorithm names");
}

/* Through user/common/pins.h: no pins, no fds, and a message that says why. */
TEST_CASE(test_open_without_pins, "cc_view.open_without_pins")
{
	struct cc_view_src src;
	char err[512] = "";
	int rc = cc_view_open(&src, "/nonexistent/mrc-test-cc-view", 1, err, sizeof(err));

	ASSERT_EQ(rc, -ENOENT, "no pin folder");
	ASSERT_TRUE(strstr(err, "is mrcd running?") != NULL, err);
	ASSERT_TRUE(src.fd_qps == -1 && src.fd_view == -1, "nothing open");
	cc_view_close(&src);
}

int main(void)
{
	RUN_REGISTERED_TESTS();
	return TEST_EXIT();
}
