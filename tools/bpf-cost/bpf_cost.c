// SPDX-License-Identifier: GPL-2.0
/*
 * mrc-bpf-cost: what each program of the fast path (bpf/mrc.bpf.c) costs
 * per packet, measured by the kernel: bpf_prog_test_run_opts() with
 * repeat = N runs a program N times on one packet and reports the mean
 * duration of a run. Next to MRC's programs it measures programs that do
 * nothing (bpf/trivial.bpf.c) on the same packets with the same N, so the
 * harness's own cost per run is visible.
 *
 * It loads a private copy of the programs and maps from the skeletons,
 * with the maps pinned under /sys/fs/bpf/mrc-cost-<pid> (removed at exit),
 * exactly as the BPF unit tests do (tests/lib/mrc_fixture.c, whose packet
 * builders and QP set-up it shares): a running mrcd and its maps in
 * /sys/fs/bpf/mrc are never touched, and nothing is attached anywhere.
 *
 * What is measured, on the fixture's QP (QP 5, RTS, peer 198.18.1.2) with
 * 256 ACTIVE EVs on plane 1 (lo) and an NSCC window:
 *   mrc_xdp_rx_data   a WRITE ONLY of 1 KiB, valid, steered (XDP_PASS).
 *                     The QP's socket port is the MRC port itself: the
 *                     kernel runs every repetition on the same buffer, and
 *                     a packet steered to another port would be a non-MRC
 *                     packet from the second run on. So the few
 *                     instructions of the port rewrite are left out.
 *   mrc_xdp_rx_sack   a SACK acking PSNs 1000-1009 cumulatively and
 *                     1012-1020 selectively (1010-1011 missing, reordered,
 *                     not lost), triggered by PSN 1020, with a send log
 *                     for every PSN in flight: per-EV feedback, RTT
 *                     sample, NSCC update (mrc_cc_update), loss scan,
 *                     completions; consumed (XDP_DROP). The first run of
 *                     a batch finds new acks; the other N - 1 find them
 *                     done, so ns_per_sack is the cost of a SACK that
 *                     brings an RTT sample and the window update but no
 *                     new acks (its RTT grows through a batch, since the
 *                     send times stay: NSCC sees a queue building and
 *                     checks quick adapt). The state is reset before
 *                     every batch.
 *                     ns_first_sack is a SACK with new acks (it completes
 *                     two WRITEs): the mean of single runs (repeat = 1),
 *                     each on fresh state, with the event ring's reader
 *                     behind (no wakeup); ns_first_sack_wakeup the same
 *                     with the reader caught up, so the completions wake
 *                     it (ring buffer irq_work: a self-IPI, costly in a
 *                     VM). A single run also carries the harness's own
 *                     overhead per call and caches cooled by the reset in
 *                     between: xdp_pass.ns_single_run shows the former.
 *   mrc_xdp_rx_other  a UDP datagram to port 53: the early XDP_PASS.
 *   mrc_tc_tx_data    an outgoing WRITE ONLY of 1 KiB: next EV of the
 *                     rotation (a reshuffle every 256), source port
 *                     stamped, send-log record, counters (TC_ACT_OK). The
 *                     EVs are on the skb's own plane: a move to another
 *                     plane (address rewrite, bpf_redirect_neigh) cannot be
 *                     repeated, since the first run rewrites the addresses
 *                     and marks the skb, which the next run passes as is.
 *   mrc_xdp_rx_data_icrc, mrc_tc_tx_data_icrc  the same two DATA packets
 *                     on a QP with MRC_QP_F_ICRC, each with a 4-byte
 *                     trailer: XDP checks the RoCEv2 ICRC (CRC-32 over
 *                     the 1,076 bytes after Ethernet), TC computes and
 *                     writes it (bpf/mrc/icrc.h).
 *   mrc_xdp_rx_sack_icrc  the SACK on that QP, its ICRC behind it: the
 *                     same steady state as mrc_xdp_rx_sack's ns_per_sack,
 *                     plus the check over its 96 bytes after Ethernet.
 *   xdp_pass, tc_pass the trivial programs, on the DATA packets.
 *   srv6              SRv6 EVs (bpf/mrc/srv6.h): the same DATA over IPv6,
 *                     plain and in the envelope, XDP taking it off and TC
 *                     putting it on (EVs with uSID 0x1001, block
 *                     fd00:5::/32). A run changes the packet's length, so
 *                     the kernel's repeat would run the next ones on the
 *                     changed packet: these are means of SRV6_RUNS single
 *                     runs each (harness overhead included, the same for
 *                     plain and enveloped), and the difference is the
 *                     envelope's cost.
 *
 * Each figure is the median of --batches batches of --repeat runs. After
 * every batch the verdict and the counters are checked (every run must
 * have taken the path named above); anything else is an error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mrc_fixture.h"
#include "mrc/nscc.h"
#include "common/parse.h"
#include "trivial.skel.h"
#include "icrc_ref.h"

#define PROG "mrc-bpf-cost"

TEST_STATE_DEFINE;

#define DEFAULT_REPEAT	100000
#define MAX_REPEAT	100000000
#define DEFAULT_BATCHES	5
#define MAX_BATCHES	101
#define SINGLE_RUNS	20	/* single runs averaged per batch */
#define SRV6_RUNS	2000	/* single runs per SRv6 figure and batch */

#define SCENE_EVS	256
#define EV_BASE		0xC000
#define CC_SLOT		0	/* mrc_cc index; mrc_qp_info.cc_slot is 1-based */
#define CC_MTU		4096
#define CC_PLANES	4
#define CC_LINK_MBPS	100000
#define CC_BASE_RTT_NS	20000
#define PAYLOAD		1024
#define DATA_PSN	(RX_CACK + 1)
#define TC_PSN		1050	/* in flight: snd_una 1000, snd_nxt 1100 */
#define SACK_CACK	1009
#define SACK_BITMAP	0x7FCULL	/* PSNs 1012-1020 */
#define SACK_TRIGGER	1020
#define SACK_UNA	(SACK_CACK + 1)
#define OTHER_PORT	53

struct opts {
	__u32	repeat;
	__u32	batches;
	int	json;
};

static struct trivial *triv;

static void usage(FILE *f)
{
	fputs(
"Usage: " PROG " [--repeat N] [--batches B] [--json]\n"
"       " PROG " --help\n"
"\n"
"Per-packet cost of each BPF program of the MRC fast path, from\n"
"bpf_prog_test_run (repeat mode: the kernel runs a program N times on one\n"
"packet and reports the mean time of a run), next to programs that only\n"
"return XDP_PASS / TC_ACT_OK, measured on the same packets. Loads its own\n"
"copy of the programs and maps (pinned under /sys/fs/bpf/mrc-cost-PID,\n"
"removed at exit): a running mrcd is not touched. Needs root.\n"
"\n"
"  mrc_xdp_rx_data   mrc_xdp_rx on a valid DATA packet (XDP_PASS)\n"
"  mrc_xdp_rx_sack   mrc_xdp_rx on a SACK: feedback, RTT, NSCC window,\n"
"                    loss scan (XDP_DROP); ns_first_sack: one with new acks\n"
"                    (ns_first_sack_wakeup: waking the event ring's reader)\n"
"  mrc_xdp_rx_other  mrc_xdp_rx on a non-MRC packet (early XDP_PASS)\n"
"  mrc_tc_tx_data    mrc_tc_tx on an outgoing DATA packet: EV stamping\n"
"  mrc_xdp_rx_data_icrc, mrc_tc_tx_data_icrc, mrc_xdp_rx_sack_icrc\n"
"                    the same DATA and SACK on a QP with the RoCEv2 ICRC:\n"
"                    checked by XDP, computed and written by TC\n"
"  xdp_pass, tc_pass the trivial programs\n"
"\n"
"Options:\n"
"  --repeat N    runs per batch (default 100000)\n"
"  --batches B   batches per figure; each figure is their median (default 5)\n"
"  --json        one JSON object: repeat, batches, programs.NAME.\n"
"                ns_per_packet (the SACK: ns_per_sack, ns_first_sack,\n"
"                ns_first_sack_wakeup; xdp_pass also ns_single_run),\n"
"                verdict, batches_ns\n"
"  -h, --help    this text\n"
"\n"
"Every verdict and counter is checked after each batch; an unexpected one\n"
"is an error. The numbers vary with the machine's load: compare figures\n"
"of one run. Exit status: 0 ok, 1 failure, 2 usage.\n",
	      f);
}

/* Exit 1 (a failure) or 2 (a usage error, with the hint) after a message. */
static void __attribute__((noreturn, format(printf, 2, 3))) quit(int status,
								 const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: %s", PROG, status == 2 ? "" : "error: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", status == 2 ? "try '" PROG " --help'\n" : "");
	exit(status);	/* the fixture's atexit handler unpins the maps */
}

#define die(...)		quit(1, __VA_ARGS__)
#define usage_error(...)	quit(2, __VA_ARGS__)

static __u32 parse_count(const char *opt, const char *s, __u32 max)
{
	uint64_t v;

	if (parse_u64(s, max, &v) || v == 0)
		usage_error("%s: expected a number in 1..%u, got '%s'", opt, max, s);
	return (__u32)v;
}

static void parse_args(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "repeat", required_argument, NULL, 'r' },
		{ "batches", required_argument, NULL, 'b' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int c;

	o->repeat = DEFAULT_REPEAT;
	o->batches = DEFAULT_BATCHES;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", lo, NULL)) != -1) {
		switch (c) {
		case 'r': o->repeat = parse_count("--repeat", optarg, MAX_REPEAT); break;
		case 'b': o->batches = parse_count("--batches", optarg, MAX_BATCHES); break;
		case 'j': o->json = 1; break;
		case 'h': usage(stdout); exit(0);
		case ':': usage_error("%s: needs a value", argv[optind - 1]);
		default: usage_error("%s: unknown option", argv[optind - 1]);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
}

/* ---- the scene: one QP, its EVs, its window, its packets --------------------- */

static __u8 data_pkt[PKT_MAX], sack_pkt[PKT_MAX], other_pkt[PKT_MAX], tc_pkt[PKT_MAX];
static size_t data_len, sack_len, other_len, tc_len;
static __u8 data_icrc_pkt[PKT_MAX], tc_icrc_pkt[PKT_MAX], sack_icrc_pkt[PKT_MAX];
static size_t data_icrc_len, tc_icrc_len, sack_icrc_len;

/* The SACK's state as set up, written back before each batch. */
static struct mrc_tx_state pristine_tx;
static struct mrc_send_log pristine_log;
static struct mrc_cc_state pristine_cc;
static struct mrc_cc_view pristine_view;

static void check_setup(const char *what)
{
	if (test_state.failed)
		die("setting up %s failed (see above)", what);
}

static void map_put(int fd, __u32 key, const void *value, const char *what)
{
	if (bpf_map_update_elem(fd, &key, value, BPF_ANY))
		die("writing %s: %s", what, strerror(errno));
}

static void map_get(int fd, __u32 key, void *value, const char *what)
{
	if (bpf_map_lookup_elem(fd, &key, value))
		die("reading %s: %s", what, strerror(errno));
}

/* An NSCC window as libmrc opens one: the CC profile's defaults, full open. */
static void setup_window(void)
{
	struct mrc_cc_profile_rec prof = {
		.algo = MRC_CC_NSCC, .base_rtt_ns = CC_BASE_RTT_NS,
		.link_mbps = CC_LINK_MBPS,
	};
	struct mrc_nscc_params p;

	nscc_defaults(&prof, CC_MTU, CC_PLANES, CC_LINK_MBPS, &p);
	memset(&pristine_cc, 0, sizeof(pristine_cc));
	nscc_init(&pristine_cc.nscc, &p, mono_ns());
	memset(&pristine_view, 0, sizeof(pristine_view));
	pristine_view.algo = p.algo;
	pristine_view.cwnd = p.max_cwnd;
	pristine_view.base_rtt_ns = p.base_rtt_ns;
	pristine_view.target_ns = p.target_ns;
}

/*
 * Every PSN in flight (1000-1099) has a send record: EV (psn - 1000) mod
 * 256, plane 1, sent 1 us apart, the newest 1 us ago. The SACK's holes
 * (1010, 1011) went out 10 us before its trigger: reordering, not loss.
 */
static void fill_send_log(void)
{
	__u32 psn, mask = mrc_send_log_entries(RX_MPR) - 1;
	__u64 now = mono_ns();

	/* The QP's inner maps as libmrc sizes them: its window, its EVs. */
	publish_qp_maps(SLOT, RX_MPR, SCENE_EVS);
	memset(&log_buf, 0, sizeof(log_buf));
	for (psn = TX_UNA; psn < TX_NXT; psn++) {
		struct mrc_send_rec *rec = &log_buf.rec[psn & mask];

		rec->psn = psn;
		rec->ev_idx = (__u8)((psn - TX_UNA) % SCENE_EVS);
		rec->plane = 1;
		rec->sent_ns = now - (__u64)(TX_NXT - psn) * 1000;
	}
	write_log();
}

/* MRC bytes m (mlen) as an ICRC QP sends them: its ICRC behind them. */
static size_t with_icrc(__u8 *buf, const struct hdrs *h, __u8 *m, size_t mlen)
{
	size_t len;

	memset(m + mlen, 0, MRC_ICRC_LEN);
	len = build_udp(h, m, mlen + MRC_ICRC_LEN, buf);
	icrc_put_trailer(buf, icrc_ref(buf));
	udp_csum_fill(buf);
	return len;
}

/* DATA as an ICRC QP sends it: payload, then a 4-byte trailer. */
static size_t icrc_frame(__u8 *buf, const struct hdrs *h, const struct data_spec *d)
{
	__u8 m[PKT_MAX];

	return with_icrc(buf, h, m, build_data(m, d));
}

/* The scene's SACK as an ICRC QP's peer sends it, its ICRC behind. */
static size_t sack_icrc_frame(__u8 *buf, const struct hdrs *h)
{
	struct sack_spec s = sspec(SACK_CACK, SACK_BITMAP);
	__u8 m[PKT_MAX];

	s.psn = SACK_TRIGGER;
	return with_icrc(buf, h, m, build_sack(m, &s));
}

static void build_icrc_packets(void)
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, DATA_PSN, PAYLOAD);
	struct hdrs h = rx4();

	data_icrc_len = icrc_frame(data_icrc_pkt, &h, &d);
	sack_icrc_len = sack_icrc_frame(sack_icrc_pkt, &h);
	h = tx4();
	d = dspec(MRC_OP_WRITE_ONLY, TC_PSN, PAYLOAD);
	d.dqpn = REMOTE_QPN;
	d.key = PEER_KEY;
	tc_icrc_len = icrc_frame(tc_icrc_pkt, &h, &d);
}

/* The scene's QP with or without MRC_QP_F_ICRC. */
static void set_icrc(int on)
{
	struct mrc_qp_info q;

	get_qp(&q);
	q.flags = on ? q.flags | MRC_QP_F_ICRC : q.flags & ~(__u32)MRC_QP_F_ICRC;
	put_qp(&q);
}

static void build_packets(void)
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, DATA_PSN, PAYLOAD);
	struct sack_spec s = sspec(SACK_CACK, SACK_BITMAP);
	struct hdrs h = rx4();
	__u8 junk[64] = { 0 };

	data_len = data_frame(data_pkt, &h, &d);
	s.psn = SACK_TRIGGER;
	sack_len = sack_frame(sack_pkt, &h, &s);
	h.dport = OTHER_PORT;
	other_len = build_udp(&h, junk, sizeof(junk), other_pkt);
	h = tx4();
	d = dspec(MRC_OP_WRITE_ONLY, TC_PSN, PAYLOAD);
	d.dqpn = REMOTE_QPN;
	d.key = PEER_KEY;
	tc_len = data_frame(tc_pkt, &h, &d);
	build_icrc_packets();
}

static void setup_scene(void)
{
	static struct mrc_ev_entry tab[SCENE_EVS];
	struct mrc_qp_info q;
	__u32 i;

	for (i = 0; i < SCENE_EVS; i++) {
		struct mrc_ev_entry e = ACT(EV_BASE + i, 1);

		tab[i] = e;
	}
	setup_table(MRC_EVF_UDP, tab, SCENE_EVS, NULL);
	set_plane(1, lo_ifindex, local4, local6);
	get_qp(&q);
	q.sock_port = MRC_UDP_PORT_DEFAULT;	/* see the top of this file */
	q.cc_slot = CC_SLOT + 1;
	put_qp(&q);
	fill_send_log();
	check_setup("the QP");

	setup_window();
	map_put(MFD(mrc_cc), CC_SLOT, &pristine_cc, "mrc_cc");
	put_state_of(MFD(mrc_cc_view), CC_SLOT, &pristine_view, sizeof(pristine_view),
		     "mrc_cc_view");
	get_tx(&pristine_tx);
	read_log_of(SLOT, &pristine_log);
	check_setup("the SACK's state");
	build_packets();
}

/*
 * The QP's requester side and window as set up: the SACK is new again.
 * With `drain`, the event rings are read empty too (their reader is then
 * caught up, and the next completion wakes it).
 */
static void reset_sack_state(int drain)
{
	put_tx(&pristine_tx);
	write_log_of(SLOT, &pristine_log);
	memset(&ev_stats_buf, 0, sizeof(ev_stats_buf));
	write_ev_stats();
	map_put(MFD(mrc_cc), CC_SLOT, &pristine_cc, "mrc_cc");
	put_state_of(MFD(mrc_cc_view), CC_SLOT, &pristine_view, sizeof(pristine_view),
		     "mrc_cc_view");
	if (drain) {
		drain_events();
		drain_ev_events();
	}
	check_setup("the SACK's state (reset)");
}

/* ---- checks ------------------------------------------------------------------- */

static const char *verdict_name(int tc, __u32 ret)
{
	static const char *const xdp[] = { "XDP_ABORTED", "XDP_DROP", "XDP_PASS",
					   "XDP_TX", "XDP_REDIRECT" };
	static char buf[32];

	if (tc && ret == TC_ACT_OK)
		return "TC_ACT_OK";
	if (tc && ret == TC_ACT_REDIRECT)
		return "TC_ACT_REDIRECT";
	if (!tc && ret < sizeof(xdp) / sizeof(xdp[0]))
		return xdp[ret];
	snprintf(buf, sizeof(buf), "%u", ret);
	return buf;
}

static void expect_run(const char *name, const struct run *r, int tc, __u32 want)
{
	if (r->err)
		die("%s: bpf_prog_test_run: %s", name, strerror(-r->err));
	if (r->ret != want)
		die("%s: verdict %s, expected %s", name, verdict_name(tc, r->ret),
		    verdict_name(tc, want));
}

static __u64 drops_total(void)
{
	struct mrc_drop_stats d = read_drops();
	const __u64 *v = (const __u64 *)&d;
	__u64 sum = 0;

	for (size_t i = 0; i < sizeof(d) / sizeof(__u64); i++)
		sum += v[i];
	return sum;
}

static void expect_count(const char *name, const char *what, __u64 got, __u64 want)
{
	if (got != want)
		die("%s: %s: %llu, expected %llu: not every run took the measured path",
		    name, what, (unsigned long long)got, (unsigned long long)want);
}

static void expect_no_drops(const char *name)
{
	__u64 n = drops_total();

	if (n)
		die("%s: %llu packets dropped and counted in mrc_drops", name,
		    (unsigned long long)n);
}

/* ---- measurements --------------------------------------------------------------- */

enum meas_id { M_DATA, M_SACK, M_OTHER, M_TC, M_DATA_ICRC, M_TC_ICRC, M_SACK_ICRC,
	       M_XDP_PASS, M_TC_PASS, M_N };

struct meas {
	const char *key;	/* JSON name */
	const char *prog;
	const char *what;
	const char *unit;	/* ns_per_packet or ns_per_sack */
	int	tc;
	__u32	verdict;
	double	*batch;		/* ns per run, one per batch */
	double	*single;	/* mean of single runs, one per batch */
	double	*wake;		/* the same, SACK with the ring's reader woken */
	double	median, single_median, wake_median;
};

static struct meas meas[M_N] = {
	[M_DATA] = { "mrc_xdp_rx_data", "mrc_xdp_rx", "DATA, steered (XDP_PASS)",
		     "ns_per_packet", 0, XDP_PASS },
	[M_SACK] = { "mrc_xdp_rx_sack", "mrc_xdp_rx", "SACK, consumed (XDP_DROP)",
		     "ns_per_sack", 0, XDP_DROP },
	[M_OTHER] = { "mrc_xdp_rx_other", "mrc_xdp_rx", "not MRC (XDP_PASS)",
		      "ns_per_packet", 0, XDP_PASS },
	[M_TC] = { "mrc_tc_tx_data", "mrc_tc_tx", "DATA, EV stamped (TC_ACT_OK)",
		   "ns_per_packet", 1, TC_ACT_OK },
	[M_DATA_ICRC] = { "mrc_xdp_rx_data_icrc", "mrc_xdp_rx", "DATA, ICRC checked (XDP_PASS)",
			  "ns_per_packet", 0, XDP_PASS },
	[M_TC_ICRC] = { "mrc_tc_tx_data_icrc", "mrc_tc_tx", "DATA, ICRC filled (TC_ACT_OK)",
			"ns_per_packet", 1, TC_ACT_OK },
	[M_SACK_ICRC] = { "mrc_xdp_rx_sack_icrc", "mrc_xdp_rx", "SACK, ICRC checked (XDP_DROP)",
			  "ns_per_sack", 0, XDP_DROP },
	[M_XDP_PASS] = { "xdp_pass", "xdp_pass", "DATA, returns XDP_PASS",
			 "ns_per_packet", 0, XDP_PASS },
	[M_TC_PASS] = { "tc_pass", "tc_pass", "DATA, returns TC_ACT_OK",
			"ns_per_packet", 1, TC_ACT_OK },
};

static struct run run_buf;

static void one_batch(enum meas_id id, __u32 repeat, __u32 b)
{
	struct meas *m = &meas[id];
	struct run *r = &run_buf;
	struct mrc_qp_stats before = read_qp_stats(SLOT), after;
	__u64 drops_before = drops_total();

	switch (id) {
	case M_DATA:
		run_prog(bpf_program__fd(skel->progs.mrc_xdp_rx), data_pkt, data_len,
			 repeat, r);
		expect_run(m->key, r, 0, m->verdict);
		after = read_qp_stats(SLOT);
		expect_count(m->key, "qp_stats.rx_data", after.rx_data - before.rx_data,
			     repeat);
		expect_no_drops(m->key);
		break;
	case M_SACK:
		reset_sack_state(1);
		before = read_qp_stats(SLOT);
		run_prog(bpf_program__fd(skel->progs.mrc_xdp_rx), sack_pkt, sack_len,
			 repeat, r);
		expect_run(m->key, r, 0, m->verdict);
		after = read_qp_stats(SLOT);
		expect_count(m->key, "qp_stats.rx_sack", after.rx_sack - before.rx_sack,
			     repeat);
		expect_count(m->key, "qp_stats.completions",
			     after.completions - before.completions, 2);
		expect_count(m->key, "qp_stats.losses", after.losses - before.losses, 0);
		expect_count(m->key, "acks counted on the trigger's EV",
			     ev_ctr((SACK_TRIGGER - TX_UNA) % SCENE_EVS).acked, repeat);
		{
			static struct mrc_tx_state tx;
			struct mrc_cc_state cc;
			struct mrc_cc_view v;
			__u64 samples = 0;

			get_tx(&tx);
			expect_count(m->key, "snd_una", tx.snd_una, SACK_UNA);
			map_get(MFD(mrc_cc), CC_SLOT, &cc, "mrc_cc");
			get_state_of(MFD(mrc_cc_view), CC_SLOT, &v, sizeof(v), "mrc_cc_view");
			if (cc.nscc.acked_bytes == 0 || v.algo != MRC_CC_NSCC)
				die("%s: the NSCC window was not updated", m->key);
			/* Every run hands the window an RTT sample. */
			for (int i = 0; i < MRC_RTT_BUCKETS; i++)
				samples += v.rtt_hist[i];
			expect_count(m->key, "RTT samples given to the window", samples,
				     repeat);
		}
		expect_no_drops(m->key);
		break;
	case M_OTHER:
		run_prog(bpf_program__fd(skel->progs.mrc_xdp_rx), other_pkt, other_len,
			 repeat, r);
		expect_run(m->key, r, 0, m->verdict);
		if (r->out_len != other_len || memcmp(r->out, other_pkt, other_len))
			die("%s: the packet was changed", m->key);
		after = read_qp_stats(SLOT);
		if (memcmp(&after, &before, sizeof(after)))
			die("%s: counted on the QP", m->key);
		expect_no_drops(m->key);
		break;
	case M_TC:
		run_prog(bpf_program__fd(skel->progs.mrc_tc_tx), tc_pkt, tc_len, repeat, r);
		expect_run(m->key, r, 1, m->verdict);
		after = read_qp_stats(SLOT);
		expect_count(m->key, "qp_stats.tx_stamped",
			     after.tx_stamped - before.tx_stamped, repeat);
		if (get16(r->out + l4_off(r->out)) < EV_BASE ||
		    get16(r->out + l4_off(r->out)) >= EV_BASE + SCENE_EVS)
			die("%s: source port %u is none of the QP's EVs", m->key,
			    get16(r->out + l4_off(r->out)));
		break;
	case M_DATA_ICRC:
		set_icrc(1);
		run_prog(bpf_program__fd(skel->progs.mrc_xdp_rx), data_icrc_pkt,
			 data_icrc_len, repeat, r);
		set_icrc(0);
		expect_run(m->key, r, 0, m->verdict);
		after = read_qp_stats(SLOT);
		expect_count(m->key, "qp_stats.rx_data", after.rx_data - before.rx_data,
			     repeat);
		expect_no_drops(m->key);
		break;
	case M_TC_ICRC:
		set_icrc(1);
		run_prog(bpf_program__fd(skel->progs.mrc_tc_tx), tc_icrc_pkt, tc_icrc_len,
			 repeat, r);
		set_icrc(0);
		expect_run(m->key, r, 1, m->verdict);
		if (icrc_of_trailer(r->out) != icrc_ref(r->out))
			die("%s: the ICRC TC wrote is wrong", m->key);
		break;
	case M_SACK_ICRC:
		reset_sack_state(1);
		before = read_qp_stats(SLOT);
		set_icrc(1);
		run_prog(bpf_program__fd(skel->progs.mrc_xdp_rx), sack_icrc_pkt,
			 sack_icrc_len, repeat, r);
		set_icrc(0);
		expect_run(m->key, r, 0, m->verdict);
		after = read_qp_stats(SLOT);
		expect_count(m->key, "qp_stats.rx_sack", after.rx_sack - before.rx_sack,
			     repeat);
		expect_count(m->key, "qp_stats.completions",
			     after.completions - before.completions, 2);
		expect_no_drops(m->key);
		break;
	case M_XDP_PASS:
		run_prog(bpf_program__fd(triv->progs.xdp_pass), data_pkt, data_len, repeat, r);
		expect_run(m->key, r, 0, m->verdict);
		break;
	case M_TC_PASS:
		run_prog(bpf_program__fd(triv->progs.tc_pass), tc_pkt, tc_len, repeat, r);
		expect_run(m->key, r, 1, m->verdict);
		break;
	default:
		break;
	}
	if (id != M_SACK && drops_total() != drops_before)
		die("%s: packets dropped", m->key);
	m->batch[b] = r->duration;
}

/*
 * Mean of SINGLE_RUNS runs with repeat = 1. The SACK runs on fresh state
 * each time; with `wake` its event ring is read empty before each run.
 */
static double single_runs(enum meas_id id, int wake)
{
	struct meas *m = &meas[id];
	struct mrc_qp_stats before, after;
	double sum = 0;

	if (id == M_SACK && !wake) {
		/* A record left unread: the reader is behind, no wakeups. */
		reset_sack_state(1);
		run_prog(bpf_program__fd(skel->progs.mrc_xdp_rx), sack_pkt, sack_len,
			 1, &run_buf);
	}
	before = read_qp_stats(SLOT);
	for (int i = 0; i < SINGLE_RUNS; i++) {
		if (id == M_SACK) {
			reset_sack_state(wake);
			run_prog(bpf_program__fd(skel->progs.mrc_xdp_rx), sack_pkt,
				 sack_len, 1, &run_buf);
		} else {
			run_prog(bpf_program__fd(triv->progs.xdp_pass), data_pkt,
				 data_len, 1, &run_buf);
		}
		expect_run(m->key, &run_buf, 0, m->verdict);
		sum += run_buf.duration;
	}
	/* Fresh state each time: every single SACK completes two WRITEs. */
	after = read_qp_stats(SLOT);
	if (id == M_SACK)
		expect_count(m->key, "qp_stats.completions (single runs)",
			     after.completions - before.completions, 2 * SINGLE_RUNS);
	drain_events();
	return sum / SINGLE_RUNS;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(const double *v, __u32 n)
{
	double s[MAX_BATCHES];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* ---- output ------------------------------------------------------------------------ */

/* ---- SRv6: plain vs enveloped, single runs ---------------------------------------- */

enum srv6_id { S_XDP_PLAIN, S_XDP_ENV, S_TC_PLAIN, S_TC_ENV, S_N };
static const char *const srv6_key[S_N] = {
	"xdp_data_ipv6", "xdp_data_srv6", "tc_data_ipv6", "tc_data_srv6" };
static double *srv6_batch[S_N], srv6_median[S_N];
static __u8 s6_rx[PKT_MAX], s6_rx_env[PKT_MAX], s6_tx[PKT_MAX];
static size_t s6_rx_len, s6_rx_env_len, s6_tx_len;

static void srv6_packets(void)
{
	static const __u8 carrier[16] = { 0xfd, 0x00, 0x00, 0x05, 0x10, 0x01 };
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, DATA_PSN, PAYLOAD);
	struct hdrs h = rx6();

	s6_rx_len = data_frame(s6_rx, &h, &d);
	s6_rx_env_len = srv6_wrap(s6_rx_env, s6_rx, s6_rx_len, carrier);
	h = tx6();
	d = dspec(MRC_OP_WRITE_ONLY, TC_PSN, PAYLOAD);
	d.dqpn = REMOTE_QPN;
	d.key = PEER_KEY;
	s6_tx_len = data_frame(s6_tx, &h, &d);
}

/* The QP's EVs with uSID 0x1001 and format SRv6 (on), or as set up (off). */
static void srv6_scene(int on)
{
	static struct mrc_qp_evs evs;
	struct mrc_qp_info q;

	get_evs(&evs);
	for (__u32 i = 0; i < SCENE_EVS; i++)
		evs.ev[i].ev = (on ? 0x1001u << 16 : 0) | (EV_BASE + i);
	put_evs(&evs);
	get_qp(&q);
	q.ev_format = on ? MRC_EVF_SRV6 : MRC_EVF_UDP;
	q.srv6_block = on ? htonl(0xfd000005) : 0;
	put_qp(&q);
}

static double srv6_runs(enum srv6_id id)
{
	int tc = id == S_TC_PLAIN || id == S_TC_ENV;
	const __u8 *pkt = id == S_XDP_PLAIN ? s6_rx : id == S_XDP_ENV ? s6_rx_env : s6_tx;
	size_t len = id == S_XDP_PLAIN ? s6_rx_len : id == S_XDP_ENV ? s6_rx_env_len : s6_tx_len;
	int prog = bpf_program__fd(tc ? skel->progs.mrc_tc_tx : skel->progs.mrc_xdp_rx);
	size_t want_len = id == S_TC_ENV ? s6_tx_len + MRC_SRV6_ENCAP_LEN :
			  id == S_XDP_ENV ? s6_rx_len : len;
	__u64 drops = drops_total();
	double sum = 0;

	srv6_scene(id == S_TC_ENV);
	for (int i = 0; i < SRV6_RUNS; i++) {
		run_prog(prog, pkt, len, 1, &run_buf);
		expect_run(srv6_key[id], &run_buf, tc, tc ? TC_ACT_OK : XDP_PASS);
		if (run_buf.out_len != want_len)
			die("%s: %u bytes out, not %zu", srv6_key[id], run_buf.out_len, want_len);
		sum += run_buf.duration;
	}
	srv6_scene(0);
	if (drops_total() != drops)
		die("%s: packets dropped", srv6_key[id]);
	return sum / SRV6_RUNS;
}

static void print_text(const struct opts *o)
{
	printf("%s: bpf_prog_test_run, %u runs a batch, median of %u batch%s "
	       "(ns per run; noisy on a busy machine)\n", PROG, o->repeat, o->batches,
	       o->batches == 1 ? "" : "es");
	for (int i = 0; i < M_N; i++) {
		const struct meas *m = &meas[i];

		printf("  %-17s %-11s %-30s %8.1f %s", m->key, m->prog, m->what, m->median,
		       strcmp(m->unit, "ns_per_sack") ? "ns/packet" : "ns/SACK");
		if (i == M_SACK)
			printf("   with new acks (single runs): %.1f ns, %.1f ns waking "
			       "the ring's reader", m->single_median, m->wake_median);
		if (i == M_XDP_PASS)
			printf("   single runs: %.1f ns", m->single_median);
		putchar('\n');
	}
	printf("  SRv6 EVs (means of %d single runs, IPv6 DATA of 1 KiB): XDP %.1f ns plain, "
	       "%.1f ns taking the envelope off (+%.1f); TC %.1f ns plain, %.1f ns putting "
	       "it on (+%.1f)\n", SRV6_RUNS, srv6_median[S_XDP_PLAIN], srv6_median[S_XDP_ENV],
	       srv6_median[S_XDP_ENV] - srv6_median[S_XDP_PLAIN], srv6_median[S_TC_PLAIN],
	       srv6_median[S_TC_ENV], srv6_median[S_TC_ENV] - srv6_median[S_TC_PLAIN]);
}

static void print_json(const struct opts *o)
{
	printf("{\"repeat\": %u, \"batches\": %u, \"programs\": {", o->repeat, o->batches);
	for (int i = 0; i < M_N; i++) {
		const struct meas *m = &meas[i];

		printf("%s\"%s\": {\"%s\": %.1f", i ? ", " : "", m->key, m->unit, m->median);
		if (i == M_SACK)
			printf(", \"ns_first_sack\": %.1f, \"ns_first_sack_wakeup\": %.1f",
			       m->single_median, m->wake_median);
		if (i == M_XDP_PASS)
			printf(", \"ns_single_run\": %.1f", m->single_median);
		printf(", \"verdict\": \"%s\", \"batches_ns\": [", verdict_name(m->tc, m->verdict));
		for (__u32 b = 0; b < o->batches; b++)
			printf("%s%.1f", b ? ", " : "", m->batch[b]);
		printf("]}");
	}
	printf("}, \"srv6_single_runs\": {");
	for (int i = 0; i < S_N; i++)
		printf("%s\"%s\": %.1f", i ? ", " : "", srv6_key[i], srv6_median[i]);
	printf("}}\n");
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	int err;

	parse_args(argc, argv, &o);
	if (fixture_setup("mrc-cost"))
		die("cannot load the MRC programs (root? bpffs on /sys/fs/bpf?)");
	triv = trivial__open();
	if (!triv)
		die("opening the trivial programs: %s", strerror(errno));
	err = trivial__load(triv);
	if (err)
		die("loading the trivial programs: %s", strerror(-err));
	setup_scene();
	srv6_packets();

	for (int i = 0; i < M_N; i++) {
		meas[i].batch = calloc(o.batches, sizeof(double));
		meas[i].single = calloc(o.batches, sizeof(double));
		meas[i].wake = calloc(o.batches, sizeof(double));
		if (!meas[i].batch || !meas[i].single || !meas[i].wake)
			die("out of memory");
	}
	for (int i = 0; i < S_N; i++)
		if (!(srv6_batch[i] = calloc(o.batches, sizeof(double))))
			die("out of memory");
	/* Batches interleaved across programs: load changes hit all alike. */
	for (__u32 b = 0; b < o.batches; b++) {
		for (int i = 0; i < M_N; i++)
			one_batch(i, o.repeat, b);
		meas[M_SACK].single[b] = single_runs(M_SACK, 0);
		meas[M_SACK].wake[b] = single_runs(M_SACK, 1);
		meas[M_XDP_PASS].single[b] = single_runs(M_XDP_PASS, 0);
		for (int i = 0; i < S_N; i++)
			srv6_batch[i][b] = srv6_runs(i);
	}
	for (int i = 0; i < S_N; i++)
		srv6_median[i] = median(srv6_batch[i], o.batches);
	for (int i = 0; i < M_N; i++) {
		meas[i].median = median(meas[i].batch, o.batches);
		meas[i].single_median = median(meas[i].single, o.batches);
		meas[i].wake_median = median(meas[i].wake, o.batches);
	}
	if (o.json)
		print_json(&o);
	else
		print_text(&o);
	trivial__destroy(triv);
	for (int i = 0; i < M_N; i++) {
		free(meas[i].batch);
		free(meas[i].single);
		free(meas[i].wake);
	}
	for (int i = 0; i < S_N; i++)
		free(srv6_batch[i]);
	return 0;
}
