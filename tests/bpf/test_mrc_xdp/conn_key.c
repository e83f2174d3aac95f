// SPDX-License-Identifier: GPL-2.0
/*
 * Connection keys (issue 16): every packet addressed to a keyed QP (DATA,
 * trimmed DATA, PROBE, SACK, NACK fatal or not) must carry the QP's key in
 * BTH bytes 1-4. One that does not, though it comes from the peer's
 * address with a live QP number and PSNs inside the window, is dropped and
 * counted as BAD_KEY before it changes anything: requester and responder
 * state, counters other than the drop, events, the trimmed-packet NACK.
 * With the key, the same packets do what they always did; an interop QP
 * checks no key and answers trims with the InfiniBand bytes.
 */
#include "mrc_xdp_test.h"

/* Packets a forger would send, each with a chosen key. */
enum forged_kind {
	FORGE_DATA,		/* WRITE into the window */
	FORGE_TRIMMED,		/* a trimmed header: XDP would answer it */
	FORGE_PROBE,
	FORGE_SACK_ALL,		/* acks everything sent */
	FORGE_NACK_FATAL,	/* would fail the QP */
	FORGE_NACK_TRIM,	/* would report a loss and cut the window */
	FORGE_KINDS,
};

static const char *const kind_name[FORGE_KINDS] = {
	"DATA", "trimmed DATA", "PROBE", "SACK", "fatal NACK", "trim NACK",
};

#define TRIM_TOS	(MRC_DSCP_TRIMMED << 2)

/* Keys a blind sender might try: near misses, the interop bytes, zero. */
static const __u32 wrong_keys[] = {
	QP_KEY ^ 1, QP_KEY ^ 0x80000000u, QP_KEY ^ 0x00ffff00u,
	MRC_KEY_INTEROP, 0, PEER_KEY,
};

static size_t nack_with_key(__u8 *buf, const struct hdrs *h, __u32 key,
			    __u32 psn, __u8 reason)
{
	__u8 m[64];
	size_t n = put_bth_key(m, MRC_OP_NACK, key, QPN, 0, psn);

	put32(m + n, RX_CACK & MRC_PSN_MASK);	/* acks nothing new */
	put32(m + n + 4, ACK_EV);
	m[n + 8] = reason;
	m[n + 9] = MRC_M_NONE;
	put16(m + n + 10, 0x4321);
	return build_udp(h, m, n + sizeof(struct mrc_nackh), buf);
}

static size_t forged_frame(__u8 *buf, enum forged_kind kind, __u32 key)
{
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, RX_CACK + 2, 256);
	struct sack_spec s = sspec(TX_NXT - 1, ~0ull);
	struct hdrs h = rx4();
	__u8 m[BTH_LEN];
	size_t len;

	d.key = key;
	s.key = key;
	switch (kind) {
	case FORGE_DATA:
		return data_frame(buf, &h, &d);
	case FORGE_TRIMMED:
		d.opcode = MRC_OP_WRITE_MIDDLE;
		d.payload = 0;
		len = data_frame(buf, &h, &d);
		buf[ETH_LEN + 1] = TRIM_TOS;
		ipv4_csum_fill(buf);
		return len;
	case FORGE_PROBE:
		put_bth_key(m, MRC_OP_PROBE, key, QPN, MRC_BTH_F_ACK_REQ, TX_UNA);
		return build_udp(&h, m, BTH_LEN, buf);
	case FORGE_SACK_ALL:
		return sack_frame(buf, &h, &s);
	case FORGE_NACK_FATAL:
		return nack_with_key(buf, &h, key, TX_UNA, MRC_NACK_REMOTE_ACCESS);
	default:
		return nack_with_key(buf, &h, key, TX_UNA + 1, MRC_NACK_TRIMMED);
	}
}

/* What a packet could have changed, read back whole. */
struct qp_snapshot {
	struct mrc_tx_state tx;
	struct mrc_rx_state rx;
	struct mrc_qp_evs evs;
	struct mrc_rev_evs rev;
	struct mrc_ctl_stats ctl;
};

static void snapshot(struct qp_snapshot *s)
{
	__u32 slot = SLOT;

	memset(s, 0, sizeof(*s));
	get_tx(&s->tx);
	get_rx(&s->rx);
	get_evs(&s->evs);
	ASSERT_EQ(bpf_map_lookup_elem(MFD(mrc_rev_evs), &slot, &s->rev), 0, "read rev_evs");
	s->ctl = read_ctl();
}

static struct qp_snapshot before, after;

/* The packet was dropped as BAD_KEY and nothing else happened. */
static void expect_refused(const struct run *r, const char *what)
{
	struct mrc_drop_stats want = { .bad_key = 1 };
	struct mrc_qp_stats want_qp = { .rx_bad = 1 };
	int failed = test_state.failed;

	expect_xdp_drop(r);
	expect_drops(&want);
	expect_qp_stats(&want_qp);
	ASSERT_EQ(drain_events(), 0, "no event");
	snapshot(&after);
	ASSERT_MEM_EQ(&after.tx, &before.tx, sizeof(before.tx), "requester state unchanged");
	ASSERT_MEM_EQ(&after.rx, &before.rx, sizeof(before.rx), "responder state unchanged");
	ASSERT_MEM_EQ(&after.evs, &before.evs, sizeof(before.evs), "EV table unchanged");
	ASSERT_MEM_EQ(&after.rev, &before.rev, sizeof(before.rev), "reverse EVs unchanged");
	ASSERT_MEM_EQ(&after.ctl, &before.ctl, sizeof(before.ctl), "ctl stats unchanged");
	if (test_state.failed != failed)
		fprintf(stderr, "  (%s)\n", what);
}

TEST_CASE(test_key_wrong_refused, "mrc.key_wrong_refused")
{
	__u8 pkt[PKT_MAX];
	char what[96];
	struct run r;

	for (int k = 0; k < FORGE_KINDS; k++) {
		for (size_t i = 0; i < sizeof(wrong_keys) / sizeof(wrong_keys[0]); i++) {
			size_t len;

			setup_qp(1);
			len = forged_frame(pkt, (enum forged_kind)k, wrong_keys[i]);
			snapshot(&before);
			run_xdp(pkt, len, &r);
			snprintf(what, sizeof(what), "%s with key 0x%08x",
				 kind_name[k], wrong_keys[i]);
			expect_refused(&r, what);
		}
	}
}

/* The same packets with the QP's key: the control, each does its work. */
TEST_CASE(test_key_right_accepted, "mrc.key_right_accepted")
{
	__u8 pkt[PKT_MAX];
	struct run r;
	size_t len;

	setup_qp(1);
	len = forged_frame(pkt, FORGE_DATA, QP_KEY);
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);
	ASSERT_EQ(read_qp_stats(SLOT).rx_data, 1, "DATA: rx_data");

	setup_qp(1);
	len = forged_frame(pkt, FORGE_TRIMMED, QP_KEY);
	run_xdp(pkt, len, &r);
	ASSERT_EQ(r.ret, XDP_TX, "trimmed DATA: answered with a NACK");
	ASSERT_EQ(read_ctl().trim_nacks, 1, "ctl.trim_nacks");

	setup_qp(1);
	len = forged_frame(pkt, FORGE_PROBE, QP_KEY);
	run_xdp(pkt, len, &r);
	expect_steered(&r, pkt, len);

	setup_qp(1);
	len = forged_frame(pkt, FORGE_SACK_ALL, QP_KEY);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	get_tx(&tx);
	ASSERT_EQ(tx.snd_una, TX_NXT, "SACK: everything acked");
	ASSERT_EQ(drain_events(), 3, "SACK: three completions");

	setup_qp(1);
	len = forged_frame(pkt, FORGE_NACK_FATAL, QP_KEY);
	run_xdp(pkt, len, &r);
	ASSERT_EQ(drain_events(), 1, "fatal NACK: one event");
	expect_event(0, MRC_EVT_QP_FATAL, TX_UNA, ACK_EV, MRC_NACK_REMOTE_ACCESS);

	setup_qp(1);
	/* A NACK answers a send TC logged (the NACK gate), as run_nack() sets up. */
	put_rec(TX_UNA + 1, UNLOGGED_EV, 1, 0, mono_ns() - 1000000000ull);
	len = forged_frame(pkt, FORGE_NACK_TRIM, QP_KEY);
	run_xdp(pkt, len, &r);
	ASSERT_EQ(drain_events(), 1, "trim NACK: one event");
	expect_event(0, MRC_EVT_LOSS, TX_UNA + 1, ACK_EV, MRC_NACK_TRIMMED);
	expect_drops(&no_drops);
}

/* Source first: a wrong key from a stranger is a BAD_SOURCE drop. */
TEST_CASE(test_key_after_source, "mrc.key_after_source")
{
	struct mrc_drop_stats want = { .bad_source = 1 };
	struct sack_spec s = sspec(TX_NXT - 1, ~0ull);
	struct hdrs h = rx4();
	__u8 pkt[PKT_MAX];
	struct run r;
	size_t len;

	setup_qp(1);
	h.src = stranger4;
	s.key = QP_KEY ^ 1;
	len = sack_frame(pkt, &h, &s);
	run_xdp(pkt, len, &r);
	expect_xdp_drop(&r);
	expect_drops(&want);
}

static void make_interop(void)
{
	struct mrc_qp_info q;

	get_qp(&q);
	q.flags = 0;
	q.local_key = MRC_KEY_INTEROP;
	q.peer_key = MRC_KEY_INTEROP;
	put_qp(&q);
}

/*
 * An interop QP takes the InfiniBand bytes (0x00 0xFFFF 0x00), and, since
 * it checks nothing, any others: what MRC_QP_INTEROP_NO_KEY gives up.
 */
TEST_CASE(test_key_interop_qp, "mrc.key_interop_qp")
{
	static const __u32 keys[] = { MRC_KEY_INTEROP, QP_KEY ^ 1, 0 };
	__u8 pkt[PKT_MAX];
	struct run r;
	size_t len;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		setup_qp(1);
		make_interop();
		len = forged_frame(pkt, FORGE_DATA, keys[i]);
		run_xdp(pkt, len, &r);
		expect_steered(&r, pkt, len);

		setup_qp(1);
		make_interop();
		len = forged_frame(pkt, FORGE_SACK_ALL, keys[i]);
		run_xdp(pkt, len, &r);
		get_tx(&tx);
		ASSERT_EQ(tx.snd_una, TX_NXT, "interop SACK: everything acked");
		ASSERT_EQ(drain_events(), 3, "interop SACK: three completions");
		expect_drops(&no_drops);
	}
}

/* XDP's NACK of a trimmed header carries the peer's key: PEER_KEY or 0x00FFFF00. */
TEST_CASE(test_key_trim_nack_peer_key, "mrc.key_trim_nack_peer_key")
{
	size_t key_off = ETH_LEN + IP4_LEN + UDP_LEN + 1;
	__u8 pkt[PKT_MAX];
	struct run r;
	size_t len;

	setup_qp(1);
	len = forged_frame(pkt, FORGE_TRIMMED, QP_KEY);
	run_xdp(pkt, len, &r);
	if (ASSERT_EQ(r.ret, XDP_TX, "keyed: NACK sent")) {
		ASSERT_EQ(get32(r.out + key_off), PEER_KEY, "keyed: the peer QP's key");
		ASSERT_EQ(get32(r.out + key_off + 3) & MRC_QPN_MASK, REMOTE_QPN,
			  "keyed: the peer's QP after it");
	}

	setup_qp(1);
	make_interop();
	len = forged_frame(pkt, FORGE_TRIMMED, MRC_KEY_INTEROP);
	run_xdp(pkt, len, &r);
	if (ASSERT_EQ(r.ret, XDP_TX, "interop: NACK sent")) {
		ASSERT_EQ(get32(r.out + key_off), MRC_KEY_INTEROP,
			  "interop: 0x00, partition key 0xFFFF, 0x00");
		ASSERT_EQ(get32(r.out + key_off + 3), REMOTE_QPN, "interop: dqpn word");
	}
}

/*
 * TC: an outgoing packet to the peer's QP without the peer's key is not
 * the QP's (any local process may send to the MRC port): left as it is,
 * not stamped, no send-log record, no counter.
 */
TEST_CASE(test_key_tc_foreign_untouched, "mrc.key_tc_foreign_untouched")
{
	static const struct mrc_ev_entry tab[] = { ACT(0xc001, 1), ACT(0xc002, 1) };
	struct data_spec d = dspec(MRC_OP_WRITE_ONLY, TC_PSN, 300);
	struct hdrs h = tx4();
	__u8 pkt[PKT_MAX];
	struct run r;
	size_t len;

	setup_table(MRC_EVF_UDP, tab, 2, NULL);
	d.dqpn = REMOTE_QPN;
	d.key = PEER_KEY ^ 0x10;
	len = data_frame(pkt, &h, &d);
	run_tc(pkt, len, &r);
	expect_untouched(&r, pkt, len, TC_ACT_OK);
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 0, "not stamped");
	/* The control: with the peer's key it is stamped. */
	d.key = PEER_KEY;
	len = data_frame(pkt, &h, &d);
	run_tc(pkt, len, &r);
	ASSERT_EQ(r.ret, TC_ACT_OK, "verdict");
	ASSERT_EQ(read_qp_stats(SLOT).tx_stamped, 1, "stamped");
}
