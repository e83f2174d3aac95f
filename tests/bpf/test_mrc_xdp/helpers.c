// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers the role files of test_mrc_xdp share (declared in
 * mrc_xdp_test.h): packet builders and program runs beyond the fixture's,
 * the verdict and counter checks, and the SACK/NACK and TC DATA runs used
 * by more than one role.
 */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "mrc_xdp_test.h"

const __u8 stranger4[4] = { 198, 18, 1, 99 };
const __u8 stranger6[16] = { 0xfd, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x99 };

/* ====================================================================== */
/* Packet builders                                                        */
/* ====================================================================== */

/* A NACK: BTH (the refused PSN) + struct mrc_nackh. */
size_t nack_frame(__u8 *buf, const struct hdrs *h, __u32 dqpn, __u32 psn,
			 __u32 cack, __u8 reason)
{
	__u8 m[64];
	/* To the peer's QP (what TC sends) it carries the peer's key. */
	size_t n = put_bth_key(m, MRC_OP_NACK, dqpn == REMOTE_QPN ? PEER_KEY : QP_KEY,
			       dqpn, 0, psn);

	put32(m + n, cack & MRC_PSN_MASK);
	put32(m + n + 4, ACK_EV);
	m[n + 8] = reason;
	m[n + 9] = MRC_M_NONE;
	put16(m + n + 10, 0x4321);
	return build_udp(h, m, n + sizeof(struct mrc_nackh), buf);
}

/* Change the UDP length field (and only it) of a built frame. */
void set_udp_len(__u8 *pkt, __u16 len)
{
	put16(pkt + l4_off(pkt) + 4, len);
}

/* The fixture QP with or without MRC_QP_F_ICRC (RoCEv2 ICRC trailers). */
void set_icrc_flag(int on)
{
	struct mrc_qp_info q;

	get_qp(&q);
	q.flags = on ? q.flags | MRC_QP_F_ICRC : q.flags & ~(__u32)MRC_QP_F_ICRC;
	put_qp(&q);
}

/* ====================================================================== */
/* Program runs                                                           */
/* ====================================================================== */

/*
 * mrc_tc_tx with an __sk_buff context: in->ifindex picks the device the
 * skb is on (0 or 1: lo), in->mark its mark; *out gets the context back
 * (the kernel copies mark, ifindex, priority... out after the run).
 */
void run_tc_skb(const void *pkt, size_t len, const struct __sk_buff *in,
		       struct __sk_buff *out, struct run *r)
{
	struct __sk_buff ctx_in = *in;
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = pkt, .data_size_in = (__u32)len,
		    .data_out = r->out, .data_size_out = sizeof(r->out),
		    .ctx_in = &ctx_in, .ctx_size_in = sizeof(ctx_in),
		    .ctx_out = out, .ctx_size_out = sizeof(*out),
		    .repeat = 1);

	memset(r->out, 0, sizeof(r->out));
	memset(out, 0, sizeof(*out));
	r->err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.mrc_tc_tx), &opts);
	r->ret = opts.retval;
	r->out_len = opts.data_size_out;
	r->duration = opts.duration;
}

/* mrc_xdp_rx on a packet that arrived on interface `ifindex`. */
void run_xdp_on(const void *pkt, size_t len, __u32 ifindex, struct run *r)
{
	struct xdp_md ctx = { .data = 0, .data_end = (__u32)len,
			      .ingress_ifindex = ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		    .data_in = pkt, .data_size_in = (__u32)len,
		    .data_out = r->out, .data_size_out = sizeof(r->out),
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx),
		    .repeat = 1);

	memset(r->out, 0, sizeof(r->out));
	r->err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.mrc_xdp_rx), &opts);
	r->ret = opts.retval;
	r->out_len = opts.data_size_out;
	r->duration = opts.duration;
}

/* The packet left the program exactly as it came in, with `verdict`. */
int expect_untouched(const struct run *r, const __u8 *pkt, size_t len,
			    __u32 verdict)
{
	return ASSERT_EQ(r->err, 0, "test_run") &&
	       ASSERT_EQ(r->ret, verdict, "verdict") &&
	       ASSERT_EQ(r->out_len, len, "output length") &&
	       ASSERT_MEM_EQ(r->out, pkt, len, "output bytes");
}

void expect_xdp_drop(const struct run *r)
{
	ASSERT_EQ(r->err, 0, "test_run");
	ASSERT_EQ(r->ret, XDP_DROP, "verdict XDP_DROP");
}

/*
 * XDP_PASS with the UDP destination port now the owner's socket and
 * nothing else changed but the UDP checksum, which is still valid (or
 * still 0 when the input had none).
 */
void expect_steered(const struct run *r, const __u8 *in, size_t len)
{
	size_t l4 = l4_off(in);
	__u8 exp[PKT_MAX];

	if (!ASSERT_EQ(r->err, 0, "test_run") ||
	    !ASSERT_EQ(r->ret, XDP_PASS, "verdict XDP_PASS") ||
	    !ASSERT_EQ(r->out_len, len, "output length"))
		return;
	ASSERT_EQ(get16(r->out + l4 + 2), SOCK_PORT, "UDP dport steered to owner");
	memcpy(exp, in, len);
	put16(exp + l4 + 2, SOCK_PORT);
	memcpy(exp + l4 + 6, r->out + l4 + 6, 2);	/* checked below */
	ASSERT_MEM_EQ(r->out, exp, len, "only dport and checksum changed");
	if (get16(in + l4 + 6) == 0)
		ASSERT_EQ(get16(r->out + l4 + 6), 0, "absent checksum stays 0");
	else
		ASSERT_TRUE(udp_csum_ok(r->out), "UDP checksum valid after steering");
}

/* ====================================================================== */
/* Maps                                                                   */
/* ====================================================================== */

int bit_of(const __u64 *bm, __u32 psn)
{
	__u32 idx = psn % MRC_WINDOW_MAX;

	return (int)((bm[idx / 64] >> (idx % 64)) & 1);
}

void set_bit_of(__u64 *bm, __u32 psn)
{
	__u32 idx = psn % MRC_WINDOW_MAX;

	bm[idx / 64] |= 1ULL << (idx % 64);
}

void set_qp_state(__u32 state)
{
	struct mrc_qp_info q;

	get_qp(&q);
	q.state = state;
	put_qp(&q);
}

void expect_event(int i, __u32 type, __u32 psn, __u32 ev, __u32 reason)
{
	char what[64];
	const struct mrc_event *e = &evq[i];

	snprintf(what, sizeof(what), "event %d present", i);
	if (!ASSERT_TRUE(i < n_events && i < EVQ_MAX, what))
		return;
	snprintf(what, sizeof(what), "event %d type", i);
	ASSERT_EQ(e->type, type, what);
	snprintf(what, sizeof(what), "event %d qpn", i);
	ASSERT_EQ(e->qpn, QPN, what);
	snprintf(what, sizeof(what), "event %d psn", i);
	ASSERT_EQ(e->psn, psn, what);
	snprintf(what, sizeof(what), "event %d ev", i);
	ASSERT_EQ(e->ev, ev, what);
	snprintf(what, sizeof(what), "event %d reason", i);
	ASSERT_EQ(e->reason, reason, what);
}

/* ---- counters ------------------------------------------------------------ */

#define DROP_FIELDS(X) X(none) X(malformed) X(bad_opcode) X(unknown_qp) \
	X(qp_not_ready) X(bad_source) X(out_of_window) X(duplicate) X(bad_ack) \
	X(stale_ack) X(ring_full) X(bad_key) X(bad_gso) X(bad_icrc)
#define QP_STAT_FIELDS(X) X(rx_data) X(rx_data_bytes) X(rx_dup) X(rx_oow) \
	X(rx_bad) X(rx_sack) X(rx_nack) X(losses) X(completions) X(tx_stamped)

#define CTL_FIELDS(X) X(ev_events) X(ev_events_lost) X(demote_refused) \
	X(probes_answered) X(probe_responses) X(probes_stamped) X(port_status_rx) \
	X(ep_dropped) X(trim_nacks) X(trim_nacks_lasthop) X(cc_wakeups) \
	X(plane_moves) \
	X(probes_refused) X(port_status_refused) X(responses_refused) \
	X(responses_bad_port)

/* mrc_ctl_stats, summed over the CPUs. */
struct mrc_ctl_stats read_ctl(void)
{
	struct mrc_ctl_stats sum;

	sum_percpu_u64(MFD(mrc_ctl_stats), 0, &sum, sizeof(sum), "read mrc_ctl_stats");
	return sum;
}

/* Control-path counters since setup; fields not named must be zero. */
void expect_ctl(const struct mrc_ctl_stats *want)
{
	struct mrc_ctl_stats got = read_ctl();

#define CMP(f) ASSERT_EQ(got.f, want->f, "ctl_stats." #f);
	CTL_FIELDS(CMP)
#undef CMP
}

/* Drop counters since setup; fields not named must be zero. */
void expect_drops(const struct mrc_drop_stats *want)
{
	struct mrc_drop_stats got = read_drops();

#define CMP(f) ASSERT_EQ(got.f, want->f, "drops." #f);
	DROP_FIELDS(CMP)
#undef CMP
}

/* QP counters of the test QP's slot; fields not named must be zero. */
void expect_qp_stats(const struct mrc_qp_stats *want)
{
	struct mrc_qp_stats got = read_qp_stats(SLOT);

#define CMP(f) ASSERT_EQ(got.f, want->f, "qp_stats." #f);
	QP_STAT_FIELDS(CMP)
#undef CMP
}

const struct mrc_drop_stats no_drops;
const struct mrc_qp_stats no_qp_stats;

/* ====================================================================== */
/* ACKs from the peer (XDP)                                               */
/* ====================================================================== */

struct mrc_tx_state tx;		/* read back after SACKs/NACKs */

void run_sack(const struct sack_spec *s, struct run *r)
{
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len = sack_frame(pkt, &h, s);

	run_xdp(pkt, len, r);
}

void run_nack_unlogged(__u32 psn, __u32 cack, __u8 reason, struct run *r)
{
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	size_t len = nack_frame(pkt, &h, QPN, psn, cack, reason);

	run_xdp(pkt, len, r);
}

void run_nack(__u32 psn, __u32 cack, __u8 reason, struct run *r)
{
	struct mrc_send_rec rec = get_rec(psn);

	/* The peer can only NACK what left: TC logged the send (1 s ago). */
	if (rec.psn != psn || !rec.sent_ns)
		put_rec(psn, UNLOGGED_EV, 1, 0, mono_ns() - 1000000000ull);
	run_nack_unlogged(psn, cack, reason, r);
}

/* ====================================================================== */
/* DATA to the peer (TC)                                                  */
/* ====================================================================== */

size_t tc_data_psn(__u8 *buf, const struct hdrs *h, __u32 psn, __u8 flags)
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, psn, 300);

	d.dqpn = REMOTE_QPN;
	d.key = PEER_KEY;
	d.flags = flags;
	return data_frame(buf, h, &d);
}

size_t tc_data_frame(__u8 *buf, const struct hdrs *h)
{
	return tc_data_psn(buf, h, TC_PSN, 0);
}

/*
 * Into exp, the output's IPv6 flow label (20 bits: the low nibble of byte
 * 1 and bytes 2-3 of the header), the traffic class kept. TC writes the
 * whole label: with stev (STEV EVs) the caller checks its value, else it
 * must be 0 (the socket's label gone).
 */
void copy_flow_label(__u8 *exp, const __u8 *out, int stev)
{
	if (!pkt_is_ipv6(exp))
		return;
	if (!stev)
		ASSERT_EQ(get32(out + ETH_LEN) & 0xfffff, 0, "IPv6 flow label 0 (UDP EVs)");
	exp[ETH_LEN + 1] = (__u8)((exp[ETH_LEN + 1] & 0xf0) | (out[ETH_LEN + 1] & 0x0f));
	memcpy(exp + ETH_LEN + 2, out + ETH_LEN + 2, 2);
}

/* TC_ACT_OK with UDP sport `sport`, the checksum valid, nothing else but
 * sport, checksum and (IPv6) the flow label changed: to 0, or with
 * flow_changed (STEV) to what the caller checks. */
void expect_stamped(const struct run *r, const __u8 *in, size_t len,
			   __u16 sport, int flow_changed)
{
	size_t l4 = l4_off(in);
	__u8 exp[PKT_MAX];

	if (!ASSERT_EQ(r->err, 0, "test_run") ||
	    !ASSERT_EQ(r->ret, TC_ACT_OK, "verdict TC_ACT_OK") ||
	    !ASSERT_EQ(r->out_len, len, "output length"))
		return;
	ASSERT_EQ(get16(r->out + l4), sport, "UDP sport = EV");
	ASSERT_TRUE(udp_csum_ok(r->out), "UDP checksum valid after stamping");
	memcpy(exp, in, len);
	put16(exp + l4, sport);
	memcpy(exp + l4 + 6, r->out + l4 + 6, 2);
	copy_flow_label(exp, r->out, flow_changed);
	ASSERT_MEM_EQ(r->out, exp, len, "nothing else changed");
}

/* Which of ev[0..n-1] the output's UDP sport is, or -1. */
int sport_index(const struct run *r, const __u8 *in, const __u32 *ev, __u32 n)
{
	__u16 sport = get16(r->out + l4_off(in));
	__u32 i;

	for (i = 0; i < n; i++)
		if ((__u16)ev[i] == sport)
			return (int)i;
	return -1;
}

/* ====================================================================== */
/* Per-EV feedback (XDP)                                                  */
/* ====================================================================== */

/* A SACK from the peer triggered by `psn`, acking nothing new (cack 999). */
void run_trigger_sack(__u32 psn, __u8 m, struct run *r)
{
	struct sack_spec s = sspec(RX_CACK, 0);

	s.psn = psn;
	s.m = m;
	run_sack(&s, r);
}

/* Number of ACTIVE entries of plane `plane` among the first n. */
int active_on_plane(const struct mrc_qp_evs *e, __u32 n, __u16 plane)
{
	int k = 0;
	__u32 i;

	for (i = 0; i < n; i++)
		if (e->ev[i].plane == plane && (e->ev[i].flags & MRC_EV_F_ACTIVE))
			k++;
	return k;
}

/* ====================================================================== */
/* EV demotion (XDP) and its events on mrc_ev_events                      */
/* ====================================================================== */

/* Give the test QP's EV table a profile, ev_min_active and n_down. */
void set_evs_meta(__u16 profile, __u16 min_active, __u32 n_down)
{
	get_evs(&evs_buf);
	evs_buf.profile = profile;
	evs_buf.min_active = min_active;
	evs_buf.n_down = n_down;
	put_evs(&evs_buf);
}

/* The reorder windows of test_xdp_rack_losses: plane ~1 ms, give up ~2 s. */
void set_wide_windows(void)
{
	get_tx(&tx);
	tx.srtt_ns = 8000000;
	tx.rttvar_ns = 1000000;
	tx.rtt_peak_ns = 1000000000;
	put_tx(&tx);
}

/*
 * EV event i is the demotion of entry idx to ASSUMED_BAD, written in
 * [t0, t1]; sent_ns is the lost packet's send time (LOSS), 0 otherwise.
 */
void expect_ev_event(int i, __u16 idx, __u32 ev, __u16 plane, __u16 profile,
			    __u8 reason, __u32 psn, __u64 sent_ns, __u64 t0, __u64 t1)
{
	const struct mrc_ev_event *e = &eveq[i];
	char what[64];

	snprintf(what, sizeof(what), "EV event %d present", i);
	if (!ASSERT_TRUE(i < n_ev_events && i < EVEQ_MAX, what))
		return;
#define EV_FIELD(f, want) \
	snprintf(what, sizeof(what), "EV event %d " #f, i); \
	ASSERT_EQ(e->f, want, what);
	EV_FIELD(qpn, QPN)
	EV_FIELD(ev, ev)
	EV_FIELD(idx, idx)
	EV_FIELD(plane, plane)
	EV_FIELD(profile, profile)
	EV_FIELD(state, MRC_EV_ASSUMED_BAD)
	EV_FIELD(reason, reason)
	EV_FIELD(psn, psn)
	EV_FIELD(sent_ns, sent_ns)
#undef EV_FIELD
	snprintf(what, sizeof(what), "EV event %d time_ns in the test's window", i);
	ASSERT_TRUE(e->time_ns >= t0 && e->time_ns <= t1, what);
}

/* The 32-bit word of entry i (plane, state, flags) as XDP left it. */
__u32 ev_word(const struct mrc_qp_evs *e, __u32 i)
{
	return e->ev[i].word;
}

/* ====================================================================== */
/* UDP GSO super-packets to the peer (TC)                                 */
/* ====================================================================== */

/*
 * A super-packet of n segments from PSN psn: the outer headers of segment
 * 0, then the UDP payload (MRC headers + data) of each segment back to
 * back, IP and UDP lengths of the whole, as the kernel builds it from a
 * UDP_SEGMENT send. *seg_len gets the gso_size; retx_seg >= 0 marks that
 * segment a resend.
 */
size_t gso_frame(__u8 *buf, const struct hdrs *h, __u32 psn, __u32 n,
			enum gso_fault fault, __u32 bad_seg, int retx_seg,
			__u32 *seg_len)
{
	__u8 one[PKT_MAX];
	size_t len = 0, off = 0;

	for (__u32 i = 0; i < n; i++) {
		struct data_spec d = dspec(MRC_OP_WRITE_MIDDLE, psn + i, GSO_PAYLOAD);
		size_t l;

		d.dqpn = REMOTE_QPN;
		d.key = PEER_KEY;
		d.flags = (int)i == retx_seg ? MRC_BTH_F_RETX : 0;
		if (fault && i == bad_seg) {
			if (fault == GSO_PSN_GAP)
				d.psn++;
			else if (fault == GSO_OTHER_QP)
				d.dqpn = REMOTE_QPN + 1;
			else if (fault == GSO_OTHER_KEY)
				d.key = PEER_KEY ^ 1;
			else
				d.opcode = MRC_OP_SACK;
		}
		l = data_frame(one, h, &d);
		if (i == 0) {
			memcpy(buf, one, l);
			off = l4_off(one) + 8;
			len = l;
			*seg_len = (__u32)(l - off);
			continue;
		}
		memcpy(buf + len, one + off, l - off);
		len += l - off;
	}
	set_udp_len(buf, (__u16)(len - l4_off(buf)));
	if (!pkt_is_ipv6(buf)) {
		put16(buf + ETH_LEN + 2, (__u16)(len - ETH_LEN));
		ipv4_csum_fill(buf);
	} else
		put16(buf + ETH_LEN + 4, (__u16)(len - ETH_LEN - 40));
	return len;
}

void run_gso(const __u8 *pkt, size_t len, __u32 segs, __u32 size,
		    struct run *r)
{
	struct __sk_buff in = { .gso_segs = segs, .gso_size = size }, out;

	run_tc_skb(pkt, len, &in, &out, r);
}

