// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The probe engine at scale, without mrcd: the maps it opens are created
 * for 65,536 QPs in a private bpffs folder (tests/include/fake_host.h),
 * a few QPs are put in RTS, the engine (agent/probe_*.c) is opened on the
 * folder with no planes and its loop run. Checked: the slots each tick
 * walks are the QPs that exist (claimed in mrc_qp_owner), new ones are
 * found and their peers given to XDP (mrc_known_peers), gone ones are let
 * go, a settled QP is looked at in its turn (PE_SLICE) and one with an EV
 * down every tick, an engine with nothing to do ticks at the idle
 * interval and one with something to do at the short one. The CPU time
 * with 8 and with 4,096 QPs (of 65,536) is printed next to what a look at
 * every slot would cost; never asserted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>

#include "agent/probe_int.h"
#include "common/qpmaps.h"
#include "common/state_maps.h"
#include "fake_host.h"
#include "test.h"

TEST_STATE_DEFINE;

#define MAX_QPS		65536
#define MAX_CTX		64

static struct fake_host host;
static bool host_ok;
static struct probe_engine *pe;
/* Each QP's mrc_tx state map, mmapped read-write (libmrc's view of it). */
static struct mrc_tx_state *tx[MAX_QPS];
static struct mrc_qpmaps qpmaps;	/* the state maps' outer maps */
/* The QPs' state entries: one process's blocks, as libmrc makes them. */
static struct mrc_state_blocks blocks;
static struct mrc_qp_state_fds entry[MAX_QPS];

#define NEED_ENGINE() do { if (!ASSERT_TRUE(host_ok && pe, "the engine on a fake host")) return; } while (0)

/* Peer address of a slot: two QPs per address (fd00:77::/96 + slot / 2). */
static void peer_of(uint32_t slot, uint8_t a[16])
{
	uint32_t n = slot / 2;

	memset(a, 0, 16);
	a[0] = 0xfd;
	a[2] = 0x77;
	a[12] = (uint8_t)(n >> 24);
	a[13] = (uint8_t)(n >> 16);
	a[14] = (uint8_t)(n >> 8);
	a[15] = (uint8_t)n;
}

/* The QP's state maps, as libmrc creates them, its tx state mapped. */
static int create_state(uint32_t slot)
{
	struct mrc_qp_state_fds fds;
	int rc;

	if (tx[slot])
		return 0;
	rc = mrc_qp_state_create(&qpmaps, &blocks, slot, mrc_slot_to_qpn(slot), &fds);
	if (rc)
		return rc;
	entry[slot] = fds;
	/* The record names the entry before the engine can find the maps. */
	if (mrc_qp_state_idx(host.fd[MRC_PIN_QPS], slot) != fds.idx) {
		fprintf(stderr, "slot %u: mrc_qps names entry %u, not %u\n", slot,
			mrc_qp_state_idx(host.fd[MRC_PIN_QPS], slot), fds.idx);
		return -EPROTO;
	}
	tx[slot] = mrc_state_map_entry(fds.tx, fds.idx, sizeof(*tx[slot]),
				       PROT_READ | PROT_WRITE);
	close(fds.rx);
	close(fds.tx);
	close(fds.evs);
	return tx[slot] ? 0 : -errno;
}

/* A QP in RTS as libmrc leaves it: claimed, mrc_qps, mrc_tx state and generation. */
static int put_rts(uint32_t slot)
{
	struct mrc_qp_info qi = { .state = MRC_QPS_RTS, .n_evs = 16, .n_peer_addrs = 1 };
	uint32_t qpn = mrc_slot_to_qpn(slot), pid = 4242;
	int rc = create_state(slot);

	if (rc)
		return rc;
	peer_of(slot, qi.peer_addrs[0]);
	qi.state_idx = entry[slot].idx;
	if (bpf_map_update_elem(host.fd[MRC_PIN_QP_OWNER], &qpn, &pid, BPF_ANY) ||
	    bpf_map_update_elem(host.fd[MRC_PIN_QPS], &slot, &qi, BPF_ANY))
		return -errno;
	__atomic_store_n(&tx[slot]->generation, tx[slot]->generation + 1, __ATOMIC_RELEASE);
	__atomic_store_n(&tx[slot]->state, MRC_QPS_RTS, __ATOMIC_RELEASE);
	return 0;
}

static void destroy_qp(uint32_t slot)
{
	struct mrc_qp_info qi = {};
	uint32_t qpn = mrc_slot_to_qpn(slot);

	__atomic_store_n(&tx[slot]->state, MRC_QPS_RESET, __ATOMIC_RELEASE);
	bpf_map_update_elem(host.fd[MRC_PIN_QPS], &slot, &qi, BPF_ANY);
	mrc_qpmaps_remove(&qpmaps, slot);
	mrc_qp_state_release(&blocks, entry[slot].block, entry[slot].idx);
	mrc_state_unmap(tx[slot], sizeof(*tx[slot]));
	tx[slot] = NULL;
	bpf_map_delete_elem(host.fd[MRC_PIN_QP_OWNER], &qpn);
}

static bool is_qp(uint32_t slot)
{
	uint32_t qpn = mrc_slot_to_qpn(slot), pid;

	return !bpf_map_lookup_elem(host.fd[MRC_PIN_QP_OWNER], &qpn, &pid);
}

static bool known_addr(const uint8_t addr[16])
{
	struct mrc_known_peer_key k;
	struct mrc_known_peer v;

	memcpy(k.addr, addr, 16);
	return !bpf_map_lookup_elem(host.fd[MRC_PIN_KNOWN_PEERS], &k, &v);
}

static bool known(uint32_t slot)
{
	uint8_t a[16];

	peer_of(slot, a);
	return known_addr(a);
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 +
	       ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static double wall_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Run the engine's loop for `secs`; the CPU it took, per cent of one CPU. */
static double run_engine(double secs)
{
	struct pollfd pfd[PE_MAX_FDS];
	double end = wall_s() + secs, c0 = cpu_s();

	while (wall_s() < end) {
		int n = pe_pollfds(pe, pfd);

		if (poll(pfd, (nfds_t)n, 10) > 0)
			pe_process(pe, pfd, n);
	}
	return (cpu_s() - c0) * 100 / secs;
}

/* The engine's ticks in `secs` of its loop. */
static uint64_t ticks_in(double secs)
{
	uint64_t t0 = pe->counters[PE_TICKS];

	run_engine(secs);
	return pe->counters[PE_TICKS] - t0;
}

/* What one look at every slot costs: n_down and mrc_tx of each, in us. */
static double every_slot_us(void)
{
	double c0 = cpu_s();
	uint64_t sum = 0;

	for (int rep = 0; rep < 50; rep++)
		for (uint32_t s = 0; s < pe->max_qps; s++) {
			const struct mrc_qp_evs *evs = qp_evs(pe, s);

			sum += (evs ? __atomic_load_n(&evs->n_down, __ATOMIC_ACQUIRE) : 0) +
			       tx_state(pe, s) + tx_generation(pe, s);
		}
	if (sum == 42)
		printf(" ");	/* keep the loads */
	return (cpu_s() - c0) * 1e6 / 50;
}

/* Where a tick's time goes: the walk itself, and a refresh (every 10th tick). */
static void print_parts(void)
{
	struct candidate cand[64];
	double c0 = cpu_s(), walk, refresh;
	int n_cand;

	for (int i = 0; i < 200; i++) {
		n_cand = 0;
		pe_peers_tick(pe);
		pe_scan_slots(pe, cand, &n_cand);
	}
	walk = (cpu_s() - c0) * 1e6 / 200;
	c0 = cpu_s();
	for (int i = 0; i < 50; i++)
		pe_walk_refresh(pe);
	refresh = (cpu_s() - c0) * 1e6 / 50;
	printf("  a tick's walk of %u slots (%u parts) %.1f us, a refresh %.1f us\n",
	       pe->walk.n, pe->walk.part_mask + 1, walk, refresh);
}

/* ---- the tests ---------------------------------------------------------- */

TEST_CASE(test_walks_what_exists, "probe_walk.walks_the_qps_that_exist")
{
	NEED_ENGINE();
	ASSERT_EQ(pe->max_qps, MAX_QPS, "the limit from the maps");
	ASSERT_EQ(pe->walk.n, 8, "the 8 QPs, not 65,536 slots");
	for (uint32_t s = 0; s < 8; s++)
		ASSERT_TRUE(known(s * 4099), "a QP's peer is known to XDP");
	printf("  engine: 8 QPs of %u: %.2f%% of a CPU (a look at every slot: %.1f us)\n",
	       MAX_QPS, run_engine(1.0), every_slot_us());
}

/* Nothing to do: the idle tick; an EV down: the short tick until it is probed back. */
TEST_CASE(test_idle_tick, "probe_walk.idle_engine_ticks_slowly")
{
	uint64_t idle, busy, idle0;
	struct mrc_qp_evs *evs;

	NEED_ENGINE();
	idle0 = pe->counters[PE_IDLE_TICKS];
	run_engine(0.1);	/* the 8 QPs settled */
	idle = ticks_in(1.0);
	ASSERT_TRUE(idle <= 1000 / PE_IDLE_TICK_MS + 10,
		    "an engine with nothing to do ticks at the idle interval");
	ASSERT_TRUE(pe->counters[PE_IDLE_TICKS] - idle0 >= idle - 2, "and counts them idle");

	/* An EV of QP 8198 ASSUMED_BAD without an event (libmrc's timeout marks so). */
	evs = qp_evs(pe, 8198);
	if (!ASSERT_TRUE(evs != NULL, "the engine maps the QP's EV table"))
		return;
	__atomic_store_n(&evs->ev[3].word, evs->ev[3].word | (MRC_EV_ASSUMED_BAD << 16),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&evs->n_down, 1, __ATOMIC_RELEASE);
	busy = ticks_in(0.5);
	ASSERT_TRUE(pe->slots[8198] && !pe->slots[8198]->quiet,
		    "the scan found the EV down in its turn");
	ASSERT_TRUE(busy >= 100, "and ticks at the short interval while it is down");
	printf("  engine: %" PRIu64 " ticks in 1 s idle, %" PRIu64 " in 0.5 s with an EV down\n",
	       idle, busy);
	__atomic_store_n(&evs->ev[3].word, evs->ev[3].word & ~(0xffu << 16), __ATOMIC_RELEASE);
	__atomic_store_n(&evs->n_down, 0, __ATOMIC_RELEASE);
}

TEST_CASE(test_finds_new_qps, "probe_walk.finds_new_and_lets_go_of_gone_qps")
{
	int rc = 0;
	uint32_t n = 0, missing = 0;

	NEED_ENGINE();
	/* 4,096 QPs in all: the 8 of before and 4,088 more, spread over the slots. */
	for (uint32_t s = 1; n < 4088 && !rc; s += 13)
		if (s % 4099) {
			rc = put_rts(s);
			n++;
		}
	ASSERT_EQ(rc, 0, "QPs added");
	run_engine(0.1);	/* five refreshes of the walk */
	ASSERT_EQ(pe->walk.n, 4096, "every QP walked");
	for (uint32_t s = 1, k = 0; k < n; s += 13)
		if (s % 4099) {
			missing += !known(s);
			k++;
		}
	ASSERT_EQ(missing, 0, "the new QPs' peers known to XDP");
	printf("  engine: 4096 QPs of %u: %.2f%% of a CPU\n", MAX_QPS, run_engine(1.0));
	print_parts();

	/* A settled QP's new peer address is seen in its turn, not later. */
	{
		struct mrc_qp_info qi;
		uint32_t slot = 1 + 13 * 100, turn_ms = (pe->walk.part_mask + 1) * PE_TICK_MS;

		ASSERT_EQ(bpf_map_lookup_elem(host.fd[MRC_PIN_QPS], &slot, &qi), 0, "a QP");
		qi.peer_addrs[0][1] = 0x42;	/* fd42:77::..., no QP's peer before */
		ASSERT_EQ(bpf_map_update_elem(host.fd[MRC_PIN_QPS], &slot, &qi, BPF_ANY), 0,
			  "its peer moved");
		__atomic_store_n(&tx[slot]->generation, tx[slot]->generation + 1,
				 __ATOMIC_RELEASE);
		run_engine(turn_ms * 1.5 / 1000);
		ASSERT_TRUE(known_addr(qi.peer_addrs[0]), "the new peer known within a turn");
		ASSERT_TRUE(!known(slot), "the old one taken back");
	}

	ASSERT_TRUE(!is_qp(4098), "4099's peer address is its own");
	ASSERT_TRUE(qp_evs(pe, 4099) && qp_tx(pe, 4099), "a QP's tables are mapped");
	destroy_qp(4099);
	/* Two refreshes (64 ms apart at 4,096 QPs): gone, then let go. */
	run_engine(0.3);
	ASSERT_TRUE(!known(4099), "a gone QP's peer is taken back");
	ASSERT_EQ(pe->walk.n, 4095, "a gone QP is let go");
	ASSERT_TRUE(!qp_evs(pe, 4099) && !qp_tx(pe, 4099),
		    "and so are its tables (their memory with them)");
}

TEST_CASE(test_stray_answer, "probe_walk.answer_naming_no_probe_ignored")
{
	struct mrc_eph eph = { .kind = MRC_EP_EV_PROBE };
	uint8_t src[16] = {};
	uint64_t stale;

	NEED_ENGINE();
	stale = pe->counters[PE_PROBE_ANSWERS_STALE];
	/* Forged answers: the last slot there is, a QP never probed. */
	eph.req_id = 0xffff0000u;
	pe_on_probe_answer(pe, src, &eph);
	eph.req_id = 7u << 16;
	pe_on_probe_answer(pe, src, &eph);
	ASSERT_EQ(pe->counters[PE_PROBE_ANSWERS_STALE], stale + 2, "counted, not followed");
}

static void say(void *arg, const char *msg)
{
	(void)arg;
	fprintf(stderr, "  engine: %s\n", msg);
}

static int open_engine(void)
{
	static const enum mrc_pin used[] = {
		MRC_PIN_CFG, MRC_PIN_QP_OWNER, MRC_PIN_CTX_OWNER, MRC_PIN_PLANES,
		MRC_PIN_QPS, MRC_PIN_QP_EVS, MRC_PIN_RX, MRC_PIN_TX, MRC_PIN_EV_PROFILES,
		MRC_PIN_CTL_STATS, MRC_PIN_EV_EVENTS, MRC_PIN_KNOWN_PEERS,
		MRC_PIN_PROBE_PORTS,
	};
	struct pe_setup setup = { .probe_successes = 3, .probe_interval_ms = 100,
				  .log = say };
	char err[256] = "";
	int rc = fake_host_create(&host, "walk", MAX_QPS, MAX_CTX, used,
				  sizeof(used) / sizeof(used[0]));

	if (rc)
		return rc;
	mrc_qpmaps_init(&qpmaps, -1, -1, -1,
			&(struct mrc_qp_state_outer){ .rx = host.fd[MRC_PIN_RX],
						      .tx = host.fd[MRC_PIN_TX],
						      .evs = host.fd[MRC_PIN_QP_EVS] }, -1);
	mrc_qpmaps_set_qps(&qpmaps, host.fd[MRC_PIN_QPS]);
	for (uint32_t s = 0; s < 8 && !rc; s++)
		rc = put_rts(s * 4099);
	if (rc)
		return rc;
	setup.pin_dir = host.dir;
	pe = pe_open(&setup, err, sizeof(err));
	if (!pe)
		fprintf(stderr, "pe_open: %s\n", err);
	return pe ? 0 : -EIO;
}

int main(void)
{
	int rc = open_engine();

	host_ok = !rc;
	if (rc)
		fprintf(stderr, "fake host: %s\n", strerror(-rc));
	RUN_REGISTERED_TESTS();
	pe_close(pe);
	for (uint32_t s = 0; s < MAX_QPS; s++)
		mrc_state_unmap(tx[s], sizeof(*tx[s]));
	mrc_state_blocks_fini(&blocks);
	fake_host_destroy(&host);
	return host_ok ? TEST_EXIT() : 1;
}
