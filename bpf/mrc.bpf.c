// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * The MRC fast path.
 *
 * mrc_xdp_rx (XDP, every plane interface, ingress):
 *   DATA   validate (opcode, lengths, QP, peer address, window, duplicate),
 *          then steer to the owning process's UDP socket by rewriting the
 *          destination port; everything bad is dropped and counted before
 *          it costs a socket wake-up. A trimmed header is answered here
 *          with a NACK TRIMMED(_LASTHOP), XDP_TX (bpf/trim_nack.h).
 *   SACK   consumed here: advance the cumulative ack, record selective
 *          acks, report holes as losses and emit completions of WRITEs
 *          into the owning context's event ring; feed the destination's
 *          congestion window (NSCC, include/mrc/nscc.h).
 *   NACK   consumed here: loss report (resend, the window's trim rule)
 *          or fatal QP error.
 *   PROBE  steered to the owner like DATA (it answers with a SACK).
 *
 * mrc_tc_tx (TC, every plane interface, egress): the per-packet path
 *   choice. Gives each outgoing DATA packet of a QP the next entropy value
 *   of the QP's rotation (UDP source port, IPv6 flow label).
 *
 * State lives in maps shared with libmrc (include/mrc/abi.h). The rx/tx
 * state arrays are mmapped by libmrc, so updates that can race between
 * CPUs use atomic operations rather than locks.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include "mrc/abi.h"
#include "mrc/nscc.h"
#include "parsing.h"

#define PIN	__uint(pinning, LIBBPF_PIN_BY_NAME)

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mrc_global_cfg);
	PIN;
} mrc_cfg SEC(".maps");

/* Which process owns a QP number / an event ring (libmrc claims them). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	__type(value, __u32);
	PIN;
} mrc_qp_owner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MRC_MAX_CTX);
	__type(key, __u32);
	__type(value, __u32);
	PIN;
} mrc_ctx_owner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MRC_MAX_PLANES_ABI);
	__type(key, __u32);
	__type(value, struct mrc_plane);
	PIN;
} mrc_planes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	__type(value, struct mrc_qp_info);
	PIN;
} mrc_qps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MRC_MAX_QPS * MRC_MAX_PEER_ADDRS);
	__type(key, struct mrc_peer_key);
	__type(value, __u32);
	PIN;
} mrc_peers SEC(".maps");

/* Mapped by libmrc and mrcd, which change entries with compare-and-swap. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	__type(value, struct mrc_qp_evs);
	PIN;
} mrc_qp_evs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	__type(value, struct mrc_rx_state);
	PIN;
} mrc_rx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	__type(value, struct mrc_tx_state);
	PIN;
} mrc_tx SEC(".maps");

/* Per-EV counters, send log and reverse EVs of each QP (by slot). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	__type(value, struct mrc_qp_ev_stats);
	PIN;
} mrc_ev_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	__type(value, struct mrc_send_log);
	PIN;
} mrc_send_log SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	__type(value, struct mrc_rev_evs);
	PIN;
} mrc_rev_evs SEC(".maps");

/* Which plane an interface is (ifindex -> 1-based plane), for XDP and TC. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MRC_MAX_PLANES_ABI);
	__type(key, __u32);
	__type(value, __u32);
	PIN;
} mrc_plane_of SEC(".maps");

/* Profiles mrcd keeps; libmrc reads them when a QP connects. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MRC_MAX_PROFILES);
	__type(key, __u32);
	__type(value, struct mrc_ev_profile_rec);
	PIN;
} mrc_ev_profiles SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MRC_MAX_PROFILES);
	__type(key, __u32);
	__type(value, struct mrc_cc_profile_rec);
	PIN;
} mrc_cc_profiles SEC(".maps");

struct mrc_event_ring {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, MRC_CTX_RING_BYTES);
};

/* One event ring per context, so each process reads only its own. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MRC_MAX_CTX);
	__type(key, __u32);
	PIN;
	__array(values, struct mrc_event_ring);
} mrc_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	__type(value, struct mrc_qp_stats);
	PIN;
} mrc_qp_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mrc_drop_stats);
	PIN;
} mrc_drops SEC(".maps");

/* EV state changes XDP makes, for mrcd (see struct mrc_ev_event). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, MRC_EV_EVENTS_BYTES);
	PIN;
} mrc_ev_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mrc_ctl_stats);
	PIN;
} mrc_ctl_stats SEC(".maps");

/*
 * Congestion windows, one per destination (mrc_qp_info.cc_slot - 1): the
 * NSCC state under a spin lock (SACKs of several CPUs update it in turn),
 * and what libmrc needs before each send, mmapped without the lock.
 */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MRC_MAX_CC);
	__type(key, __u32);
	__type(value, struct mrc_cc_state);
	PIN;
} mrc_cc SEC(".maps");

/* Which process owns a window slot (libmrc claims them, like QP numbers). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MRC_MAX_CC);
	__type(key, __u32);
	__type(value, __u32);
	PIN;
} mrc_cc_owner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, MRC_MAX_CC);
	__type(key, __u32);
	__type(value, struct mrc_cc_view);
	PIN;
} mrc_cc_view SEC(".maps");

/* ------------------------------------------------------------------------ */
/* helpers                                                                  */
/* ------------------------------------------------------------------------ */

static __always_inline __u16 mrc_port(void)
{
	__u32 zero = 0;
	struct mrc_global_cfg *cfg = bpf_map_lookup_elem(&mrc_cfg, &zero);

	if (cfg && cfg->udp_port)
		return cfg->udp_port;
	return MRC_UDP_PORT_DEFAULT;
}

static __always_inline int count_drop(enum mrc_drop_reason reason)
{
	__u32 zero = 0;
	__u64 *stats = bpf_map_lookup_elem(&mrc_drops, &zero);

	if (stats && reason < MRC_DROP_REASONS)
		stats[reason & 15]++;
	return XDP_DROP;
}

static __always_inline struct mrc_qp_stats *qp_stats(__u32 slot)
{
	return bpf_map_lookup_elem(&mrc_qp_stats, &slot);
}

/* The QP a packet names, or NULL (counted) when it is not ours. */
static __always_inline struct mrc_qp_info *lookup_qp(__u32 qpn, __u32 *slot)
{
	struct mrc_qp_info *info;

	if (qpn == 0 || qpn > MRC_MAX_QPS)
		return NULL;
	*slot = qpn - 1;
	info = bpf_map_lookup_elem(&mrc_qps, slot);
	if (!info || info->state == MRC_QPS_RESET)
		return NULL;
	return info;
}

/*
 * The packet's source as IPv6 or IPv4-mapped IPv6, as peers are stored.
 * parse_l3() takes no VLAN tags, so the IP header is right after Ethernet.
 */
static __always_inline int packet_source(void *data, void *end,
					 const struct l4_info *l4, __u32 src[4])
{
	if (l4->l3_proto == ETH_P_IP) {
		struct iphdr *ip = data + sizeof(struct ethhdr);

		if ((void *)(ip + 1) > end)
			return -1;
		src[0] = 0;
		src[1] = 0;
		src[2] = bpf_htonl(0x0000ffff);
		src[3] = ip->saddr;
	} else {
		struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);

		if ((void *)(ip6 + 1) > end)
			return -1;
		__builtin_memcpy(src, &ip6->saddr, 16);
	}
	return 0;
}

static __always_inline int is_peer_address(const struct mrc_qp_info *info,
					   const __u32 src[4])
{
	__u32 n = info->n_peer_addrs;

	for (__u32 i = 0; i < MRC_MAX_PEER_ADDRS; i++) {
		const __u32 *a = (const __u32 *)info->peer_addrs[i];

		if (i >= n)
			break;
		if (a[0] == src[0] && a[1] == src[1] && a[2] == src[2] &&
		    a[3] == src[3])
			return 1;
	}
	return 0;
}

/*
 * Point the packet at the owner's socket. The checksum is updated
 * incrementally (RFC 1624); an IPv4 checksum of 0 means "none" and stays.
 */
static __always_inline void steer_to_owner(struct udphdr *udp, __u16 port)
{
	__u16 new_port = bpf_htons(port);
	__u16 old_port = udp->dest;
	__u32 sum;

	if (old_port == new_port)
		return;
	udp->dest = new_port;
	if (!udp->check)
		return;
	sum = (__u16)~udp->check;
	sum += (__u16)~old_port;
	sum += new_port;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	udp->check = (__u16)~sum ? (__u16)~sum : 0xffff;
}

static __always_inline void emit_event(const struct mrc_qp_info *info,
				       struct mrc_event *evt)
{
	__u32 ctx = info->ctx;
	void *ring = bpf_map_lookup_elem(&mrc_events, &ctx);

	if (!ring || bpf_ringbuf_output(ring, evt, sizeof(*evt), 0))
		count_drop(MRC_DROP_RING_FULL);
}

static __always_inline int bitmap_test(const __u64 *bitmap, __u32 psn)
{
	__u32 idx = psn % MRC_WINDOW_MAX;

	return (bitmap[(idx / 64) & (MRC_BITMAP_WORDS - 1)] >> (idx % 64)) & 1;
}

/* Position of the highest set bit, 1-based (0 for 0): BPF has no clz. */
static __always_inline __u32 fls64(__u64 x)
{
	__u32 n = 0;

	if (x >> 32) { n += 32; x >>= 32; }
	if (x >> 16) { n += 16; x >>= 16; }
	if (x >> 8)  { n += 8;  x >>= 8; }
	if (x >> 4)  { n += 4;  x >>= 4; }
	if (x >> 2)  { n += 2;  x >>= 2; }
	if (x >> 1)  { n += 1;  x >>= 1; }
	return n + (__u32)x;
}

/* ------------------------------------------------------------------------ */
/* Per-EV bookkeeping: TC logs what it sent where, XDP judges the paths     */
/* ------------------------------------------------------------------------ */

static __always_inline struct mrc_send_rec *send_rec(__u32 slot, __u32 psn)
{
	struct mrc_send_log *log = bpf_map_lookup_elem(&mrc_send_log, &slot);

	return log ? &log->rec[psn % MRC_WINDOW_MAX] : NULL;
}

static __always_inline struct mrc_ev_counters *ev_counters(__u32 slot,
							   __u32 idx)
{
	struct mrc_qp_ev_stats *es = bpf_map_lookup_elem(&mrc_ev_stats, &slot);

	return es ? &es->ev[idx & (MRC_MAX_EVS - 1)] : NULL;
}

static __always_inline void count_ev_tx(__u32 slot, int idx, __u32 bytes)
{
	struct mrc_ev_counters *c = ev_counters(slot, (__u32)idx);

	if (!c)
		return;
	__sync_fetch_and_add(&c->packets, 1);
	__sync_fetch_and_add(&c->bytes, bytes);
}

/* The send-log record of psn if it still describes psn, else NULL. */
static __always_inline struct mrc_send_rec *sent_record(__u32 slot, __u32 psn)
{
	struct mrc_send_rec *rec = send_rec(slot, psn);

	return rec && rec->psn == psn ? rec : NULL;
}

static __always_inline struct mrc_ctl_stats *ctl_stats(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&mrc_ctl_stats, &zero);
}

/*
 * EV state changes. plane, state and flags of an entry form one 32-bit
 * word that XDP, TC, libmrc and mrcd change only by compare-and-swap, so
 * no change undoes another (user/common/ev_state.c is the userspace twin).
 * A CAS that keeps failing gives up after a few tries: the state is
 * advisory and the next SACK tries again.
 */
#define EV_CAS_TRIES	4

static __always_inline int ev_state_usable(__u8 state)
{
	return state == MRC_EV_GOOD || state == MRC_EV_SKIP;
}

struct backup_ctx {
	struct mrc_qp_evs *evs;
	__u32 n;
	__u32 plane;
	__u32 found;		/* index + 1 of the backup activated, 0 = none */
};

/* Activate the first GOOD backup of the plane (one CAS per candidate). */
static long activate_backup_step(__u32 j, void *data)
{
	struct backup_ctx *bc = data;
	struct mrc_ev_entry *e;
	__u32 w;

	if (j >= bc->n)
		return 1;
	e = &bc->evs->ev[j & (MRC_MAX_EVS - 1)];
	w = READ_ONCE(e->word);
	if (MRC_EV_WORD_PLANE(w) != bc->plane ||
	    MRC_EV_WORD_STATE(w) != MRC_EV_GOOD ||
	    (MRC_EV_WORD_FLAGS(w) & MRC_EV_F_ACTIVE))
		return 0;
	if (__sync_val_compare_and_swap(&e->word, w,
					w | (__u32)MRC_EV_F_ACTIVE << 24) != w)
		return 0;	/* changed under us: look further */
	bc->found = j + 1;
	return 1;
}

static __always_inline int activate_backup(struct mrc_qp_evs *evs, __u32 n,
					   __u32 plane)
{
	struct backup_ctx bc = { .evs = evs, .n = n, .plane = plane };

	bpf_loop(MRC_MAX_EVS, activate_backup_step, &bc, 0);
	return bc.found ? 0 : -1;
}

/*
 * An EV that keeps being marked is replaced by a backup EV of the same
 * plane, so the plane keeps its share of the load. It stays GOOD: as a
 * backup it may serve again later.
 */
static __always_inline void swap_for_backup(struct mrc_qp_evs *evs, __u32 n,
					    __u32 idx)
{
	struct mrc_ev_entry *e = &evs->ev[idx & (MRC_MAX_EVS - 1)];
	__u32 w = READ_ONCE(e->word), nw;
	__u8 state;

	/* Late marks for an EV already retired must not retire another. */
	if (!(MRC_EV_WORD_FLAGS(w) & MRC_EV_F_ACTIVE) ||
	    !ev_state_usable(MRC_EV_WORD_STATE(w)))
		return;
	if (activate_backup(evs, n, MRC_EV_WORD_PLANE(w)))
		return;
	for (int i = 0; i < EV_CAS_TRIES; i++) {
		w = READ_ONCE(e->word);
		state = MRC_EV_WORD_STATE(w);
		if (state == MRC_EV_SKIP)
			state = MRC_EV_GOOD;
		nw = mrc_ev_word_with(w, state,
				 MRC_EV_WORD_FLAGS(w) & ~MRC_EV_F_ACTIVE);
		if (__sync_val_compare_and_swap(&e->word, w, nw) == w)
			return;
	}
}

/* GOOD -> SKIP for one turn (ECN echo, mid-path trim). */
static __always_inline void skip_once(struct mrc_ev_entry *e)
{
	__u32 w = READ_ONCE(e->word);

	if (MRC_EV_WORD_STATE(w) != MRC_EV_GOOD)
		return;
	__sync_val_compare_and_swap(&e->word, w,
				    mrc_ev_word_with(w, MRC_EV_SKIP,
						MRC_EV_WORD_FLAGS(w)));
}

/* Tell mrcd (ring mrc_ev_events); a full ring is counted, never waited on. */
static __always_inline void emit_ev_event(__u32 slot,
					  const struct mrc_qp_evs *evs,
					  __u32 idx, __u32 word, __u8 reason,
					  __u32 psn, __u64 sent_ns)
{
	struct mrc_ctl_stats *cs = ctl_stats();
	struct mrc_ev_event evt = {
		.time_ns = bpf_ktime_get_ns(),
		.qpn = slot + 1,
		.ev = evs->ev[idx & (MRC_MAX_EVS - 1)].ev,
		.idx = (__u16)idx,
		.plane = MRC_EV_WORD_PLANE(word),
		.profile = evs->profile,
		.state = MRC_EV_WORD_STATE(word),
		.reason = reason,
		.psn = psn,
		.sent_ns = sent_ns,
	};

	if (bpf_ringbuf_output(&mrc_ev_events, &evt, sizeof(evt), 0)) {
		if (cs)
			cs->ev_events_lost++;
	} else if (cs) {
		cs->ev_events++;
	}
}

/* Count one more entry down, unless that breaks ev_min_active. */
static __always_inline int reserve_down(struct mrc_qp_evs *evs, __u32 n)
{
	for (int i = 0; i < EV_CAS_TRIES; i++) {
		__u32 down = READ_ONCE(evs->n_down);

		if (n < down + 1 || n - down - 1 < evs->min_active)
			return -1;
		if (__sync_val_compare_and_swap(&evs->n_down, down, down + 1) == down)
			return 0;
	}
	return -1;
}

/*
 * GOOD or SKIP -> ASSUMED_BAD: the EV leaves the rotation until probes
 * bring it back (mrcd). An active EV hands its place to a GOOD backup of
 * its plane, or keeps it owed when the plane has none, so load does not
 * move between planes because of one path. Refused (and counted) when it
 * would leave fewer usable EVs than ev_min_active: then the EV stays in
 * rotation and only its lost packets are resent elsewhere.
 */
static __always_inline int demote_ev(__u32 slot, struct mrc_qp_evs *evs,
				     __u32 n, __u32 idx, __u8 reason, __u32 psn,
				     __u64 sent_ns)
{
	struct mrc_ev_entry *e;
	struct mrc_ctl_stats *cs;
	__u32 w = 0, nw = 0;
	int done = 0;

	if (n > MRC_MAX_EVS || idx >= n)
		return 0;
	e = &evs->ev[idx & (MRC_MAX_EVS - 1)];
	if (!ev_state_usable(MRC_EV_WORD_STATE(READ_ONCE(e->word))))
		return 0;
	if (reserve_down(evs, n)) {
		cs = ctl_stats();
		if (cs)
			cs->demote_refused++;
		return 0;
	}
	for (int i = 0; i < EV_CAS_TRIES; i++) {
		w = READ_ONCE(e->word);
		if (!ev_state_usable(MRC_EV_WORD_STATE(w)))
			break;
		nw = mrc_ev_word_with(w, MRC_EV_ASSUMED_BAD,
				 MRC_EV_WORD_FLAGS(w) &
				 ~(MRC_EV_F_ACTIVE | MRC_EV_F_OWED));
		if (__sync_val_compare_and_swap(&e->word, w, nw) == w) {
			done = 1;
			break;
		}
	}
	if (!done) {
		__sync_fetch_and_add(&evs->n_down, -1);
		return 0;
	}
	if ((MRC_EV_WORD_FLAGS(w) & MRC_EV_F_ACTIVE) &&
	    activate_backup(evs, n, MRC_EV_WORD_PLANE(w)))
		__sync_fetch_and_or(&e->word, (__u32)MRC_EV_F_OWED << 24);
	emit_ev_event(slot, evs, idx, nw, reason, psn, sent_ns);
	return 1;
}

struct sibling_ctx {
	struct mrc_qp_evs *evs;
	__u64 sent_ns;
	__u64 now;
	__u32 slot, n, skip, psn;
	/* Packed: bpf_loop frames nest three deep within the 512-byte stack. */
	__u16 bad;		/* siblings lost within the window */
	__u16 other;		/* EVs of other paths lost within it */
	__u8 plane, path;
};

static long count_bad_sibling_step(__u32 j, void *data)
{
	struct sibling_ctx *sc = data;
	__u32 w;

	if (j >= sc->n)
		return 1;
	w = READ_ONCE(sc->evs->ev[j & (MRC_MAX_EVS - 1)].word);
	if (j != sc->skip && MRC_EV_WORD_STATE(w) == MRC_EV_ASSUMED_BAD) {
		struct mrc_ev_counters *c = ev_counters(sc->slot, j);

		if (!c || sc->now - READ_ONCE(c->lost_ns) >= MRC_SAME_PATH_WINDOW_NS)
			return 0;
		if (MRC_EV_WORD_PLANE(w) == sc->plane && MRC_EV_WORD_PATH(w) == sc->path)
			sc->bad++;
		else
			sc->other++;
	}
	return 0;
}

static long demote_sibling_step(__u32 j, void *data)
{
	struct sibling_ctx *sc = data;
	__u32 w;

	if (j >= sc->n)
		return 1;
	w = READ_ONCE(sc->evs->ev[j & (MRC_MAX_EVS - 1)].word);
	if (j == sc->skip || MRC_EV_WORD_PLANE(w) != sc->plane ||
	    MRC_EV_WORD_PATH(w) != sc->path ||
	    !ev_state_usable(MRC_EV_WORD_STATE(w)))
		return 0;
	demote_ev(sc->slot, sc->evs, sc->n, j, MRC_EVR_SAME_PATH, sc->psn,
		  sc->sent_ns);
	return 0;
}

/*
 * A loss on an EV whose spine path discovery knows, while another EV of
 * that spine, and no EV of any other path, was taken out by a loss within
 * MRC_SAME_PATH_WINDOW_NS: the spine is failing, and the other EVs
 * through it (active ones and backups) go too, at once. A dead spine
 * would otherwise be found one EV at a time, each when it next carries a
 * packet, 10-25 ms for all of them at 50k packets/s. Two EVs, not one: a
 * single loss may be a host's hiccup, and it should not cost a spine; and
 * only that spine: losses on several paths at once are the host's (a
 * stalled CPU holds back packets of every path), not the fabric's.
 * A spine that keeps dropping loses its EVs until probes bring them back;
 * its plane runs on its other spines meanwhile.
 */
static __always_inline void demote_siblings(__u32 slot, struct mrc_qp_evs *evs,
					    __u32 n, __u32 idx, __u32 psn,
					    __u64 sent_ns)
{
	__u32 w = READ_ONCE(evs->ev[idx & (MRC_MAX_EVS - 1)].word);
	struct sibling_ctx sc = {
		.evs = evs, .sent_ns = sent_ns, .slot = slot, .n = n,
		.skip = idx, .psn = psn,
		.plane = MRC_EV_WORD_PLANE(w), .path = MRC_EV_WORD_PATH(w),
	};

	if (!sc.path || n > MRC_MAX_EVS)
		return;
	sc.now = bpf_ktime_get_ns();
	bpf_loop(MRC_MAX_EVS, count_bad_sibling_step, &sc, 0);
	if (sc.bad && !sc.other)
		bpf_loop(MRC_MAX_EVS, demote_sibling_step, &sc, 0);
}

/* ECN echo or mid-path trim on the EV at idx: skip a turn, maybe swap. */
static __always_inline void penalise_ev(__u32 slot, __u32 idx,
					struct mrc_ev_counters *c)
{
	struct mrc_qp_evs *evs = bpf_map_lookup_elem(&mrc_qp_evs, &slot);
	struct mrc_qp_info *info = bpf_map_lookup_elem(&mrc_qps, &slot);

	if (!evs || !info || idx >= MRC_MAX_EVS)
		return;
	skip_once(&evs->ev[idx & (MRC_MAX_EVS - 1)]);
	if (__sync_fetch_and_add(&c->marks_in_row, 1) + 1 >= MRC_EV_SWAP_MARKS) {
		WRITE_ONCE(c->marks_in_row, 0);
		swap_for_backup(evs, info->n_evs, idx);
	}
}

/* The receiver judges the path bad (M = ALWAYS_SKIP): demote the EV. */
static __always_inline void always_skip_ev(__u32 slot, __u32 idx, __u32 psn)
{
	struct mrc_qp_evs *evs = bpf_map_lookup_elem(&mrc_qp_evs, &slot);
	struct mrc_qp_info *info = bpf_map_lookup_elem(&mrc_qps, &slot);

	if (evs && info)
		demote_ev(slot, evs, info->n_evs, idx, MRC_EVR_ALWAYS_SKIP, psn, 0);
}

/* Flags of a window update (bits of mrc_cc_update's last argument). */
#define CC_ECN		1u	/* the SACK echoed a CE mark */
#define CC_LAST_HOP	2u	/* the trim happened at the last hop */

/* What one SACK or NACK tells the destination's window. */
struct cc_input {
	__u64 rtt;		/* the trigger's RTT; 0 = none (resent) */
	__u32 acked;		/* packets newly acked */
	__u32 trims;		/* packets trimmed (NACK TRIMMED*) */
	__u32 last_hop;		/* ... at the last hop (incast) */
	__u32 losses;		/* packets declared lost */
	__u32 ecn;		/* the trigger was CE marked */
};

/*
 * The QP's smoothed RTT and deviation (RFC 6298 gains 1/8 and 1/4), for
 * the reorder window. Updates from two CPUs may interleave; the estimate
 * stays an estimate.
 */
static __always_inline void update_rtt(struct mrc_tx_state *tx, __u64 rtt)
{
	__s64 srtt, var, err;
	__u64 peak;

	if (rtt > 0xffffffffull)
		return;
	peak = READ_ONCE(tx->rtt_peak_ns);
	peak -= peak >> 6;
	WRITE_ONCE(tx->rtt_peak_ns, rtt > peak ? (__u32)rtt : (__u32)peak);
	srtt = READ_ONCE(tx->srtt_ns);
	var = READ_ONCE(tx->rttvar_ns);
	if (!srtt) {
		WRITE_ONCE(tx->srtt_ns, (__u32)rtt);
		WRITE_ONCE(tx->rttvar_ns, (__u32)(rtt / 2));
		return;
	}
	err = (__s64)rtt - srtt;
	/* Shifts, not divisions: BPF has no signed divide before v4. */
	srtt += err >> 3;
	var += ((err < 0 ? -err : err) - var) >> 2;
	WRITE_ONCE(tx->srtt_ns, (__u32)srtt);
	WRITE_ONCE(tx->rttvar_ns, (__u32)var);
}

/* Raise *word to val unless it is already there (several CPUs). */
static __always_inline void raise_u64(__u64 *word, __u64 val)
{
	__u64 old;

	for (int i = 0; i < 4; i++) {
		old = READ_ONCE(*word);
		if (old >= val || __sync_val_compare_and_swap(word, old, val) == old)
			return;
	}
}

/* The newest send time acknowledged on the trigger's plane only grows. */
static __always_inline void note_plane_ack(struct mrc_tx_state *tx,
					   const struct mrc_send_rec *rec)
{
	__u32 plane = rec->plane;

	if (!tx || plane == 0 || plane > MRC_MAX_PLANES_ABI)
		return;
	raise_u64(&tx->acked_sent_ns[(plane - 1) & (MRC_MAX_PLANES_ABI - 1)],
		  rec->sent_ns);
}

/*
 * The RTT sample congestion control takes: the fabric's part, without the
 * time the responder held the trigger before acking it (its hold field).
 * The timers keep the whole RTT: a timeout must wait for the responder too.
 */
static __always_inline __u64 fabric_rtt(__u64 rtt, __u16 hold_wire)
{
	__u64 hold = (__u64)bpf_ntohs(hold_wire) << MRC_TS_SHIFT;

	/* A hold as long as the RTT itself cannot be right: keep the RTT. */
	return hold < rtt ? rtt - hold : rtt;
}

/* What a SACK says about the path of the packet that triggered it. */
/* Returns the trigger's RTT sample for the window, 0 when there is none. */
static __always_inline __u64 sack_feedback(struct mrc_tx_state *tx, __u32 slot,
					   __u32 psn, __u8 m, __u16 hold)
{
	struct mrc_send_rec *rec = sent_record(slot, psn);
	struct mrc_ev_counters *c;
	__u64 sample = 0;

	if (!rec)
		return 0;
	note_plane_ack(tx, rec);
	c = ev_counters(slot, rec->ev_idx);
	if (!c)
		return 0;
	__sync_fetch_and_add(&c->acked, 1);
	raise_u64(&c->acked_sent_ns, rec->sent_ns);
	/* Karn: a resent packet's RTT is ambiguous. */
	if (!(rec->flags & MRC_BTH_F_RETX)) {
		__u64 rtt = bpf_ktime_get_ns() - rec->sent_ns;

		__sync_fetch_and_add(&c->rtt_sum_ns, rtt);
		__sync_fetch_and_add(&c->rtt_samples, 1);
		update_rtt(tx, rtt);
		sample = fabric_rtt(rtt, hold);
	}
	if ((m & 3) == MRC_M_ALWAYS_SKIP) {
		always_skip_ev(slot, rec->ev_idx, psn);
	} else if ((m & 3) == MRC_M_SKIP_ONCE) {
		__sync_fetch_and_add(&c->ecn, 1);
		penalise_ev(slot, rec->ev_idx, c);
	} else if (READ_ONCE(c->marks_in_row)) {
		WRITE_ONCE(c->marks_in_row, 0);
	}
	return sample;
}

/*
 * The EV a lost PSN went out on (for the loss report), counted. With the
 * QP's table (SACK evidence, not a NACK), the EV is demoted: a path that
 * lost a packet carries nothing more until probes say it works.
 */
static __always_inline __u32 blame_loss(__u32 slot, __u32 psn,
					struct mrc_qp_evs *evs, __u32 n)
{
	struct mrc_send_rec *rec = sent_record(slot, psn);
	struct mrc_ev_counters *c;
	__u32 idx;

	if (!rec)
		return 0;
	idx = rec->ev_idx;
	c = ev_counters(slot, idx);
	if (c)
		__sync_fetch_and_add(&c->losses, 1);
	if (!evs)
		return 0;
	if (demote_ev(slot, evs, n, idx, MRC_EVR_LOSS, psn, rec->sent_ns)) {
		if (c)
			WRITE_ONCE(c->lost_ns, bpf_ktime_get_ns());
		demote_siblings(slot, evs, n, idx, psn, rec->sent_ns);
	}
	return evs->ev[idx & (MRC_MAX_EVS - 1)].ev;
}

/* A trimmed packet: mid-path trims penalise its EV, last-hop trims not. */
static __always_inline void trim_feedback(__u32 slot, __u32 psn, __u8 reason)
{
	struct mrc_send_rec *rec = sent_record(slot, psn);
	struct mrc_ev_counters *c;

	if (!rec)
		return;
	c = ev_counters(slot, rec->ev_idx);
	if (!c)
		return;
	__sync_fetch_and_add(&c->trims, 1);
	if (reason == MRC_NACK_TRIMMED)
		penalise_ev(slot, rec->ev_idx, c);
}

/* ------------------------------------------------------------------------ */
/* Congestion control: feed NSCC (include/mrc/nscc.h) from SACKs and NACKs  */
/* ------------------------------------------------------------------------ */

static __always_inline __u32 popcount64(__u64 x)
{
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (__u32)((x * 0x0101010101010101ULL) >> 56);
}

/* PSNs not SACKed among the up to 64 from *from that share one ring word. */
static __always_inline __u32 unsacked_in_word(const struct mrc_tx_state *tx,
					      __u32 *from, __u32 *n)
{
	__u32 idx = *from % MRC_WINDOW_MAX, shift = idx % 64;
	__u32 take = 64 - shift < *n ? 64 - shift : *n;
	__u64 bits = READ_ONCE(tx->sacked[(idx / 64) & (MRC_BITMAP_WORDS - 1)]) >> shift;
	__u64 mask = take >= 64 ? ~0ULL : (1ULL << take) - 1;

	*from += take;
	*n -= take;
	return take - popcount64(bits & mask);
}

/*
 * PSNs in [from, to) not selectively acked before: what a cumulative ack
 * newly acknowledges (the SACKed ones were counted when their SACK came).
 * Only the first 128 are looked at: a longer jump is a hole filled by a
 * resend below PSNs that SACKs acknowledged (and counted) long ago, so
 * the rest counts as acked before. Straight-line code: a loop here would
 * multiply the verifier's states by its rounds.
 */
static __always_inline __u32 count_unsacked(const struct mrc_tx_state *tx,
					    __u32 from, __u32 to)
{
	__u32 n = to - from, got;

	if (n > MRC_WINDOW_MAX)
		return 0;
	if (n > 128)
		n = 128;
	if (!n)
		return 0;
	got = unsacked_in_word(tx, &from, &n);
	if (n)
		got += unsacked_in_word(tx, &from, &n);
	if (n)
		got += unsacked_in_word(tx, &from, &n);
	return got;
}

/*
 * Run the algorithm and publish the result to the view, all under the
 * window's lock (plain stores to another map value are allowed there;
 * helper calls are not, so everything here is inline arithmetic).
 */
static __always_inline void cc_run(struct mrc_nscc *s, const struct cc_input *in,
				   __u64 now, struct mrc_cc_view *v)
{
	__u64 mtu = s->p.mtu ? s->p.mtu : 1;

	if (s->p.algo == MRC_CC_NSCC) {
		if (in->acked || in->rtt)
			nscc_on_ack(s, in->acked * mtu, in->rtt, in->ecn, now);
		if (in->trims)
			nscc_on_trim(s, in->trims * mtu, in->last_hop, now);
		if (in->losses)
			nscc_on_loss(s, in->losses, now);
	} else {
		/* No window, but the same measurements for mrcctl and benchmarks. */
		if (in->rtt)
			nscc_take_rtt(s, in->rtt);
		s->acked_bytes += in->acked * mtu;
		s->n_trims += in->trims;
		s->n_losses += in->losses;
	}
	if (s->p.algo != MRC_CC_NSCC)
		WRITE_ONCE(v->cwnd, 0xffffffffU);
	else
		WRITE_ONCE(v->cwnd, s->cwnd > 0xffffffffULL ? 0xffffffffU : (__u32)s->cwnd);
	WRITE_ONCE(v->algo, s->p.algo);
	WRITE_ONCE(v->base_rtt_ns, (__u32)nscc_base_rtt(s));
	WRITE_ONCE(v->min_rtt_ns, s->min_rtt_ns);
	WRITE_ONCE(v->avg_delay_ns, s->avg_delay_ns > 0xffffffffULL ? 0xffffffffU :
				    (__u32)s->avg_delay_ns);
	WRITE_ONCE(v->target_ns, (__u32)nscc_target(s));
	WRITE_ONCE(v->n_md, s->n_md);
	WRITE_ONCE(v->n_fast, s->n_fast);
	WRITE_ONCE(v->n_qa, s->n_qa);
	WRITE_ONCE(v->n_trims, s->n_trims);
	WRITE_ONCE(v->n_losses, s->n_losses);
	WRITE_ONCE(v->acked_bytes, s->acked_bytes);
}

/*
 * libmrc sleeps when the window is full and sets `waiting`; the first ack
 * that frees room clears it and wakes the context through its event ring.
 */
static __always_inline void cc_wake(struct mrc_cc_view *v, __u32 ctx, __u32 qpn)
{
	struct mrc_event evt = { .type = MRC_EVT_WINDOW, .qpn = qpn };
	void *ring = bpf_map_lookup_elem(&mrc_events, &ctx);
	struct mrc_ctl_stats *cs;

	if (!READ_ONCE(v->waiting) || __sync_val_compare_and_swap(&v->waiting, 1, 0) != 1)
		return;
	if (!ring || bpf_ringbuf_output(ring, &evt, sizeof(evt), 0))
		count_drop(MRC_DROP_RING_FULL);
	cs = ctl_stats();
	if (cs)
		cs->cc_wakeups++;
}

/*
 * A global function: the verifier checks it once, on its own, instead of
 * along every path of the SACK and NACK code that calls it (the many
 * branches of NSCC times those paths would exceed its budget), and its
 * stack frame is not stacked on the loss scan's nested callbacks. Hence
 * scalar arguments only, packed: who = cc_slot << 48 | context << 32 |
 * qpn; una_range = the cumulative ack before << 32 | after (the PSNs it
 * newly acked that no SACK had acked yet count too); counts = SACKed now
 * << 32 | trims; flags = losses << 32 | last-hop trim << 1 | ecn.
 */
__noinline int mrc_cc_update(__u64 who, __u64 una_range, __u64 rtt, __u64 counts,
			     __u64 flags)
{
	__u32 slot = (__u32)(who >> 48) - 1, qpn = (__u32)who & MRC_QPN_MASK;
	__u32 tx_slot = qpn - 1;
	struct cc_input in = {
		.rtt = rtt,
		.acked = (__u32)(counts >> 32),
		.trims = (__u32)counts,
		.losses = (__u32)(flags >> 32),
		.ecn = ((__u32)flags & CC_ECN) != 0,
		.last_hop = ((__u32)flags & CC_LAST_HOP) != 0,
	};
	struct mrc_tx_state *tx;
	struct mrc_cc_state *cs;
	struct mrc_cc_view *v;
	__u64 now;

	if (slot >= MRC_MAX_CC)
		return 0;
	tx = bpf_map_lookup_elem(&mrc_tx, &tx_slot);
	cs = bpf_map_lookup_elem(&mrc_cc, &slot);
	v = bpf_map_lookup_elem(&mrc_cc_view, &slot);
	if (!tx || !cs || !v)
		return 0;
	in.acked += count_unsacked(tx, (__u32)(una_range >> 32), (__u32)una_range);
	if (rtt)
		__sync_fetch_and_add(&v->rtt_hist[mrc_rtt_bucket(rtt) &
						  (MRC_RTT_BUCKETS - 1)], 1);
	now = bpf_ktime_get_ns();
	bpf_spin_lock(&cs->lock);
	cc_run(&cs->nscc, &in, now, v);
	bpf_spin_unlock(&cs->lock);
	if (in.acked || in.trims)
		cc_wake(v, (__u32)(who >> 32) & 0xffff, qpn);
	return 0;
}

static __always_inline void cc_update(const struct mrc_qp_info *info, __u32 qpn,
				      __u32 old_una, __u32 una, __u64 rtt,
				      __u32 sacked, __u32 trims, __u32 losses, __u32 flags)
{
	/*
	 * Only 16 bits of each fit in `who`: refuse a slot past the windows,
	 * and name a context past the rings by one that has none (the event
	 * is counted lost, as emit_event() does), rather than alias them.
	 */
	__u32 ctx = info->ctx < MRC_MAX_CTX ? info->ctx : MRC_MAX_CTX;

	if (!info->cc_slot || info->cc_slot > MRC_MAX_CC)
		return;
	mrc_cc_update((__u64)info->cc_slot << 48 | (__u64)ctx << 32 | qpn,
		      (__u64)old_una << 32 | una, rtt, (__u64)sacked << 32 | trims,
		      (__u64)losses << 32 | flags);
}

/* ------------------------------------------------------------------------ */
/* DATA and PROBE: validate, then hand to the owner                         */
/* ------------------------------------------------------------------------ */

struct mrc_pkt {
	void *data;
	void *end;
	struct l4_info l4;
	struct udphdr *udp;
	struct mrc_bth *bth;
	__u32 payload_len;	/* UDP payload, MRC headers included */
	__u32 qpn;
	__u32 psn;		/* 24 bits */
	__u8 opcode;
	__u8 flags;
	__u32 ifindex;		/* where it arrived: tells the plane */
	struct xdp_md *xdp;	/* for helpers that resize the frame */
};

/* Header lengths add up, the payload fits the message: 0 or a reason. */
static __always_inline int check_data_lengths(struct mrc_pkt *p)
{
	__u32 hdr_len = mrc_data_header_len(p->opcode, p->flags);
	struct mrc_reth *reth;
	__u32 reth_off = sizeof(struct mrc_bth) + sizeof(struct mrc_meth);
	__u32 data_len, msg_len;

	if (p->payload_len < hdr_len)
		return MRC_DROP_MALFORMED;
	if (p->flags & MRC_BTH_F_TS)
		reth_off += sizeof(struct mrc_tseth);
	reth = (void *)p->bth + reth_off;
	if ((void *)(reth + 1) > p->end)
		return MRC_DROP_MALFORMED;
	data_len = p->payload_len - hdr_len;
	msg_len = bpf_ntohl(reth->length);
	/* A packet never carries more than its whole message. */
	if (data_len > msg_len)
		return MRC_DROP_MALFORMED;
	return MRC_DROP_NONE;
}

/*
 * Responder window: PSNs in (cack, cack + mpr) that are not placed yet
 * go up; older ones and placed ones are duplicates (libmrc still owes the
 * sender a SACK for them), newer ones are out of the window.
 */
static __always_inline int check_window(struct mrc_rx_state *rx, __u32 psn24)
{
	__u32 cack = READ_ONCE(rx->cack);
	__u32 mpr = READ_ONCE(rx->mpr);
	__u32 psn = mrc_psn_extend(cack, psn24);

	if (mrc_psn_before(cack, psn) &&
	    (psn - cack >= mpr || mpr > MRC_WINDOW_MAX)) {
		WRITE_ONCE(rx->sack_pending, 1);
		return MRC_DROP_OUT_OF_WINDOW;
	}
	/* Only in-window PSNs own their bitmap slot. */
	if (!mrc_psn_before(cack, psn) || bitmap_test(rx->placed, psn)) {
		WRITE_ONCE(rx->sack_pending, 1);
		return MRC_DROP_DUPLICATE;
	}
	return MRC_DROP_NONE;
}

static __always_inline int count_qp_drop(__u32 slot, int reason)
{
	struct mrc_qp_stats *st = qp_stats(slot);

	if (st) {
		if (reason == MRC_DROP_DUPLICATE)
			st->rx_dup++;
		else if (reason == MRC_DROP_OUT_OF_WINDOW)
			st->rx_oow++;
		else
			st->rx_bad++;
	}
	return count_drop(reason);
}

static __always_inline __u32 plane_of_ifindex(__u32 ifindex)
{
	__u32 *plane = bpf_map_lookup_elem(&mrc_plane_of, &ifindex);

	return plane ? *plane : 0;
}

/*
 * Remember the EVs the peer's data arrives on, per plane: the responder's
 * SACKs go back over those paths (they are known to work).
 */
static __always_inline void learn_reverse_ev(__u32 slot, struct mrc_pkt *p)
{
	struct mrc_rev_evs *rev = bpf_map_lookup_elem(&mrc_rev_evs, &slot);
	__u32 plane = plane_of_ifindex(p->ifindex), i;

	if (!rev || plane == 0 || plane > MRC_MAX_PLANES_ABI)
		return;
	plane = (plane - 1) & (MRC_MAX_PLANES_ABI - 1);
	i = __sync_fetch_and_add(&rev->next[plane], 1) % MRC_REV_EVS;
	rev->ev[plane][i & (MRC_REV_EVS - 1)] = bpf_ntohs(p->udp->source);
}

/* Trimmed DATA: answered with a NACK right here (XDP_TX). */
#include "trim_nack.h"

static __always_inline int handle_data(struct mrc_pkt *p, int is_probe)
{
	struct mrc_qp_info *info;
	struct mrc_rx_state *rx;
	struct mrc_qp_stats *st;
	__u32 slot = 0, src[4];
	int reason;

	info = lookup_qp(p->qpn, &slot);
	if (!info)
		return count_drop(MRC_DROP_UNKNOWN_QP);
	if (info->state != MRC_QPS_RTR && info->state != MRC_QPS_RTS)
		return count_qp_drop(slot, MRC_DROP_QP_NOT_READY);
	if (packet_source(p->data, p->end, &p->l4, src) ||
	    !is_peer_address(info, src))
		return count_qp_drop(slot, MRC_DROP_BAD_SOURCE);

	if (!is_probe) {
		reason = check_data_lengths(p);
		if (reason)
			return count_qp_drop(slot, reason);
		rx = bpf_map_lookup_elem(&mrc_rx, &slot);
		if (!rx)
			return count_qp_drop(slot, MRC_DROP_UNKNOWN_QP);
		reason = check_window(rx, p->psn);
		if (reason)
			return count_qp_drop(slot, reason);
		/* A trimmed header has nothing to place: NACK it from here. */
		reason = answer_trimmed(p, slot, info, rx);
		if (reason != TRIM_NOT_TRIMMED)
			return reason;
	}

	st = qp_stats(slot);
	if (st && !is_probe) {
		st->rx_data++;
		st->rx_data_bytes += p->payload_len;
	}
	if (!is_probe)
		learn_reverse_ev(slot, p);
	steer_to_owner(p->udp, info->sock_port);
	return XDP_PASS;
}

/* ------------------------------------------------------------------------ */
/* SACK and NACK: the requester side, entirely here                         */
/* ------------------------------------------------------------------------ */

/* Raise *word to `val` unless another CPU already raised it further. */
static __always_inline int advance_u32(__u32 *word, __u32 val)
{
	__u32 old = READ_ONCE(*word);

	for (int i = 0; i < 8; i++) {
		__u32 prev;

		if (!mrc_psn_before(old, val))
			return 0;
		prev = __sync_val_compare_and_swap(word, old, val);
		if (prev == old)
			return 1;
		old = prev;
	}
	return 0;
}

/*
 * Apply a cumulative ack. Returns 0, or a drop reason when the ack names
 * PSNs we never sent.
 */
static __always_inline int ack_cumulative(struct mrc_tx_state *tx,
					  __u32 cack24, __u32 *una_out)
{
	__u32 una = READ_ONCE(tx->snd_una);
	__u32 nxt = READ_ONCE(tx->snd_nxt);
	__u32 new_una = mrc_psn_extend(una - 1, cack24 & MRC_PSN_MASK) + 1;

	if (mrc_psn_before(nxt, new_una))
		return MRC_DROP_BAD_ACK;
	advance_u32(&tx->snd_una, new_una);
	*una_out = READ_ONCE(tx->snd_una);
	return 0;
}

/*
 * Record the selective acks of bitmap (bit i = PSN base + i). Bits below
 * snd_una and at or above snd_nxt are ignored: the ring slots of old PSNs
 * belong to future ones. Returns one past the highest PSN recorded, or
 * `base` when none.
 */
/*
 * OR 64 bits starting at PSN `base` into a PSN ring bitmap; returns how
 * many of them were not set before (newly acked, for the window).
 */
static __always_inline __u32 ring_or64(__u64 *ring, __u32 base, __u64 bits)
{
	__u32 idx = base % MRC_WINDOW_MAX, word = idx / 64, shift = idx % 64;
	__u64 lo = bits << shift, old;
	__u32 fresh;

	old = __sync_fetch_and_or(&ring[word & (MRC_BITMAP_WORDS - 1)], lo);
	fresh = popcount64(lo & ~old);
	if (shift) {
		__u64 hi = bits >> (64 - shift);

		old = __sync_fetch_and_or(&ring[(word + 1) & (MRC_BITMAP_WORDS - 1)], hi);
		fresh += popcount64(hi & ~old);
	}
	return fresh;
}

/*
 * The PSNs a SACK's bitmap speaks about: 64 from `base`, clipped to
 * [una, snd_nxt). Empty (0) when the window lies outside.
 */
static __always_inline __u64 sack_window(struct mrc_tx_state *tx, __u32 base,
					 __u32 una)
{
	__u32 nxt = READ_ONCE(tx->snd_nxt);
	__u64 window = ~0ULL;

	if (mrc_psn_before(base, una)) {
		__u32 skip = una - base;

		window = skip >= 64 ? 0 : window << skip;
	}
	if (!mrc_psn_before(base, nxt))
		return 0;
	if (nxt - base < 64)
		window &= (1ULL << (nxt - base)) - 1;
	return window;
}

/*
 * Record the acked PSNs of a SACK (bits already clipped to its window);
 * returns how many were not acked before.
 */
static __always_inline __u32 record_sacks(struct mrc_tx_state *tx, __u32 base,
					  __u64 bits)
{
	return bits ? ring_or64(tx->sacked, base, bits) : 0;
}

/*
 * Loss evidence comes from one SACK at a time: its bitmap window (and
 * cack + 1) says which PSNs the responder lacked when it sent the SACK,
 * and its trigger (the packet that made the responder send it) says how
 * late that was. SACKs are sprayed and arrive out of order, and those on
 * a failed path are lost; mixing an old window with a newer SACK's
 * timing would call packets lost that arrived in between.
 */
struct loss_ctx {
	struct mrc_tx_state *tx;
	const struct mrc_qp_info *info;
	struct mrc_qp_evs *evs;
	struct mrc_qp_stats *st;
	__u64 now, reorder_ns, give_up_ns;
	__u64 trig_sent_ns;	/* 0: no send record of the trigger */
	__u32 trig_plane, trig_ev;
	__u32 implied;		/* this SACK's cack + 1 */
	__u32 win_base;
	__u64 window;		/* PSNs of its bitmap window shown missing */
	__u32 qpn, from, to;
	__u32 reported;		/* losses reported (for the window) */
};

/* Did this SACK's bitmap (or its cumulative ack) show psn missing? */
static __always_inline int shown_missing(const struct loss_ctx *lc, __u32 psn)
{
	__u32 off = psn - lc->win_base;

	if (psn == lc->implied)
		return 1;
	return off < 64 && ((lc->window >> off) & 1);
}

/*
 * Was psn's packet overtaken: sent on the trigger's EV more than
 * MRC_EV_REORDER_NS before it (one path is FIFO), on the trigger's plane
 * more than the reorder window before it (planes differ by their queues,
 * paths within one plane less), or longer ago than the give-up window?
 */
static __always_inline int overtaken(struct loss_ctx *lc,
				     const struct mrc_send_rec *rec)
{
	__u8 state;

	/*
	 * Give up on the packet when it was sent that long before the
	 * trigger: measured from the trigger, not from now, since a SACK
	 * held up on its way speaks of the time it was sent.
	 */
	if (!lc->trig_sent_ns)
		return lc->now - rec->sent_ns > lc->give_up_ns;
	if (lc->trig_sent_ns > rec->sent_ns + lc->give_up_ns)
		return 1;
	/*
	 * Its EV is already out of service (a loss, port status, the
	 * controller): a packet still missing on it is lost as soon as a
	 * trigger on any plane overtook it, so a dead plane's packets are
	 * resent without waiting for a trigger that plane cannot deliver.
	 */
	state = lc->evs ? READ_ONCE(lc->evs->ev[rec->ev_idx & (MRC_MAX_EVS - 1)].state) : 0;
	if ((state == MRC_EV_ASSUMED_BAD || state == MRC_EV_DENIED) &&
	    lc->trig_sent_ns > rec->sent_ns + lc->reorder_ns)
		return 1;
	if (rec->ev_idx == lc->trig_ev &&
	    lc->trig_sent_ns > rec->sent_ns + MRC_EV_REORDER_NS)
		return 1;
	return rec->plane == lc->trig_plane &&
	       lc->trig_sent_ns > rec->sent_ns + lc->reorder_ns;
}

/*
 * First pass: how far the holes are known losses. A hole this SACK did
 * not show, or whose packet the trigger did not overtake, ends the range:
 * it and everything after it wait for later SACKs.
 */
static long loss_scan_step(__u32 i, void *data)
{
	struct loss_ctx *lc = data;
	__u32 psn = lc->from + i;
	struct mrc_send_rec *rec;

	if (psn == lc->to)
		return 1;
	if (bitmap_test(lc->tx->sacked, psn))
		return 0;
	rec = sent_record(lc->qpn - 1, psn);
	if (!shown_missing(lc, psn) || (rec && !overtaken(lc, rec))) {
		lc->to = psn;
		return 1;
	}
	return 0;
}

/*
 * A loss report written straight into the ring (reserve, fill, submit):
 * no copy of the record on this callback's stack, which sits on top of
 * the SACK path's frame and under demote_siblings' callback.
 */
static __always_inline void emit_loss(const struct mrc_qp_info *info, __u32 qpn,
				      __u32 psn, __u32 ev)
{
	__u32 ctx = info->ctx;
	void *ring = bpf_map_lookup_elem(&mrc_events, &ctx);
	struct mrc_event *e = ring ? bpf_ringbuf_reserve(ring, sizeof(*e), 0) : NULL;

	if (!e) {
		count_drop(MRC_DROP_RING_FULL);
		return;
	}
	e->type = MRC_EVT_LOSS;
	e->qpn = qpn;
	e->wr_id = 0;
	e->psn = psn;
	e->ev = ev;
	e->reason = 0;
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
}

static long report_loss_step(__u32 i, void *data)
{
	struct loss_ctx *lc = data;
	__u32 psn = lc->from + i, ev;

	if (psn == lc->to)
		return 1;
	if (bitmap_test(lc->tx->sacked, psn))
		return 0;
	ev = blame_loss(lc->qpn - 1, psn, lc->evs, lc->info->n_evs);
	emit_loss(lc->info, lc->qpn, psn, ev);
	lc->reported++;
	if (lc->st)
		lc->st->losses++;
	return 0;
}

/*
 * Are all PSNs in [from, to) selectively acked? At most MRC_LOSS_BURST
 * (32) PSNs, so at most two bitmap words, checked whole.
 */
static __always_inline int all_sacked(struct mrc_tx_state *tx, __u32 from,
				      __u32 to)
{
	__u32 n = to - from, idx = from % MRC_WINDOW_MAX;
	__u32 w = idx / 64, b = idx % 64, first;
	__u64 mask, word;

	if (n == 0 || n > MRC_LOSS_BURST)
		return n == 0;
	first = 64 - b < n ? 64 - b : n;
	mask = (first == 64 ? ~0ULL : ((1ULL << first) - 1)) << b;
	word = READ_ONCE(tx->sacked[w & (MRC_BITMAP_WORDS - 1)]);
	if ((word & mask) != mask)
		return 0;
	if (first == n)
		return 1;
	mask = (1ULL << (n - first)) - 1;
	word = READ_ONCE(tx->sacked[(w + 1) & (MRC_BITMAP_WORDS - 1)]);
	return (word & mask) == mask;
}

/* How much later a packet on the same plane must be to overtake a hole. */
static __always_inline __u64 reorder_window(struct mrc_tx_state *tx)
{
	__u64 w = READ_ONCE(tx->srtt_ns) / MRC_REORDER_FRACTION;

	return w < MRC_REORDER_MIN_NS ? MRC_REORDER_MIN_NS : w;
}

/* After this long without an acknowledgement a hole is lost anyway. */
static __always_inline __u64 give_up_window(struct mrc_tx_state *tx)
{
	__u64 w = 2 * (__u64)READ_ONCE(tx->rtt_peak_ns);

	return w < 4 * MRC_REORDER_MIN_NS ? 4 * MRC_REORDER_MIN_NS : w;
}

/*
 * Holes below sack_max - DUPTHRESH that this SACK shows missing and whose
 * packet its trigger overtook (see overtaken()) are lost. loss_mark
 * remembers how far we reported, so each hole is reported once (a timeout in libmrc rewinds
 * it); the range is claimed with a compare-and-swap so two CPUs never
 * report the same PSN.
 */
static __always_inline __u32 report_losses(struct mrc_tx_state *tx,
					  const struct mrc_qp_info *info,
					  __u32 qpn, __u32 una, __u32 implied,
					  const struct mrc_send_rec *trig,
					  __u32 win_base, __u64 window)
{
	__u32 sack_max = READ_ONCE(tx->sack_max);
	__u32 mark = READ_ONCE(tx->loss_mark);
	__u32 limit = sack_max - MRC_DUPTHRESH, slot = qpn - 1;
	struct loss_ctx lc = { .tx = tx, .info = info, .qpn = qpn };

	lc.from = mrc_psn_before(mark, una) ? una : mark;
	if (!mrc_psn_before(lc.from, limit))
		return 0;
	lc.to = limit - lc.from > MRC_LOSS_BURST ? lc.from + MRC_LOSS_BURST : limit;
	/* The common case, no hole at all: move the mark, scan nothing. */
	if (all_sacked(tx, lc.from, lc.to)) {
		__sync_val_compare_and_swap(&tx->loss_mark, mark, lc.to);
		return 0;
	}
	lc.now = bpf_ktime_get_ns();
	lc.reorder_ns = reorder_window(tx);
	lc.give_up_ns = give_up_window(tx);
	lc.implied = implied;
	lc.win_base = win_base;
	lc.evs = bpf_map_lookup_elem(&mrc_qp_evs, &slot);
	lc.window = window;
	if (trig) {
		lc.trig_sent_ns = trig->sent_ns;
		lc.trig_plane = trig->plane;
		lc.trig_ev = trig->ev_idx;
	}
	bpf_loop(MRC_LOSS_BURST, loss_scan_step, &lc, 0);
	if (lc.to == lc.from)
		return 0;
	if (__sync_val_compare_and_swap(&tx->loss_mark, mark, lc.to) != mark)
		return 0;	/* another CPU reports this range */
	lc.st = qp_stats(slot);
	bpf_loop(MRC_LOSS_BURST, report_loss_step, &lc, 0);
	return lc.reported;
}

/* Complete, in order, every posted WRITE whose last PSN is acked. */
static __always_inline void emit_completions(struct mrc_tx_state *tx,
					     const struct mrc_qp_info *info,
					     __u32 qpn, __u32 una)
{
	struct mrc_event evt = { .type = MRC_EVT_COMPLETION, .qpn = qpn };
	struct mrc_qp_stats *st = qp_stats(qpn - 1);

	for (int i = 0; i < MRC_COMPL_BURST; i++) {
		__u32 head = READ_ONCE(tx->wr_head);
		__u32 tail = READ_ONCE(tx->wr_tail);
		struct mrc_wr_rec *rec;

		if (head == tail)
			break;
		rec = &tx->wr[head % MRC_WR_RING];
		if (!mrc_psn_before(rec->last_psn, una))
			break;
		evt.wr_id = rec->wr_id;
		evt.psn = rec->last_psn;
		if (__sync_val_compare_and_swap(&tx->wr_head, head, head + 1) != head)
			continue;	/* another CPU took it; look again */
		emit_event(info, &evt);
		if (st)
			st->completions++;
	}
}

/* Common checks of SACK and NACK: our QP, sending, from the peer. */
static __always_inline struct mrc_tx_state *
ack_target(struct mrc_pkt *p, struct mrc_qp_info **info_out, int *reason)
{
	struct mrc_qp_info *info;
	__u32 slot = 0, src[4];

	info = lookup_qp(p->qpn, &slot);
	if (!info) {
		*reason = MRC_DROP_UNKNOWN_QP;
		return NULL;
	}
	if (info->state != MRC_QPS_RTS && info->state != MRC_QPS_ERROR) {
		*reason = MRC_DROP_QP_NOT_READY;
		return NULL;
	}
	if (packet_source(p->data, p->end, &p->l4, src) ||
	    !is_peer_address(info, src)) {
		*reason = MRC_DROP_BAD_SOURCE;
		return NULL;
	}
	*info_out = info;
	return bpf_map_lookup_elem(&mrc_tx, &slot);
}

static __always_inline int handle_sack(struct mrc_pkt *p)
{
	struct mrc_sackh *sh = (void *)(p->bth + 1);
	struct mrc_qp_info *info = NULL;
	struct mrc_tx_state *tx;
	struct mrc_qp_stats *st;
	__u32 una = 0, old_una, base, top, trig_psn, sacked, lost;
	__u64 rtt;
	int reason = MRC_DROP_UNKNOWN_QP;
	__u64 bits, window;

	if ((void *)(sh + 1) > p->end ||
	    p->payload_len < sizeof(struct mrc_bth) + sizeof(*sh))
		return count_drop(MRC_DROP_MALFORMED);
	tx = ack_target(p, &info, &reason);
	if (!tx || !info)
		return p->qpn && p->qpn <= MRC_MAX_QPS ?
			count_qp_drop(p->qpn - 1, reason) : count_drop(reason);

	old_una = READ_ONCE(tx->snd_una);
	reason = ack_cumulative(tx, bpf_ntohl(sh->cack), &una);
	if (reason)
		return count_qp_drop(p->qpn - 1, reason);

	bits = (__u64)bpf_ntohl(sh->bitmap_hi) << 32 | bpf_ntohl(sh->bitmap_lo);
	base = mrc_psn_extend(una, bpf_ntohl(sh->cack) & MRC_PSN_MASK) + 1 +
	       bpf_ntohs(sh->bitmap_off);
	window = sack_window(tx, base, una);
	sacked = record_sacks(tx, base, bits & window);
	/* One past the highest PSN acked (base when none). */
	top = base + fls64(bits & window);
	advance_u32(&tx->sack_max, top);

	st = qp_stats(p->qpn - 1);
	if (st)
		st->rx_sack++;
	trig_psn = mrc_psn_extend(una, p->psn);
	rtt = sack_feedback(tx, p->qpn - 1, trig_psn, sh->m, sh->hold);
	/*
	 * The window hears of the acks before the loss scan, and of losses
	 * after it, so nothing has to live across the scan's stack frames.
	 */
	cc_update(info, p->qpn, old_una, una, rtt, sacked, 0, 0,
		  (sh->m & 3) == MRC_M_SKIP_ONCE ? CC_ECN : 0);
	/* cack + 1 of this SACK is missing, or its cack would be past it. */
	lost = report_losses(tx, info, p->qpn, una, base - bpf_ntohs(sh->bitmap_off),
			     sent_record(p->qpn - 1, trig_psn), base, window & ~bits);
	if (lost)
		cc_update(info, p->qpn, una, una, 0, 0, 0, lost, 0);
	emit_completions(tx, info, p->qpn, una);
	return XDP_DROP;	/* consumed */
}

static __always_inline int nack_is_fatal(__u8 reason)
{
	return reason == MRC_NACK_REMOTE_ACCESS || reason == MRC_NACK_UNEXP_EVENT;
}

static __always_inline int handle_nack(struct mrc_pkt *p)
{
	struct mrc_nackh *nh = (void *)(p->bth + 1);
	struct mrc_qp_info *info = NULL;
	struct mrc_tx_state *tx;
	struct mrc_qp_stats *st;
	struct mrc_event evt = {};
	__u32 una = 0, old_una, psn, trimmed = 0;
	int reason = MRC_DROP_UNKNOWN_QP;

	if ((void *)(nh + 1) > p->end ||
	    p->payload_len < sizeof(struct mrc_bth) + sizeof(*nh))
		return count_drop(MRC_DROP_MALFORMED);
	tx = ack_target(p, &info, &reason);
	if (!tx || !info)
		return p->qpn && p->qpn <= MRC_MAX_QPS ?
			count_qp_drop(p->qpn - 1, reason) : count_drop(reason);

	old_una = READ_ONCE(tx->snd_una);
	reason = ack_cumulative(tx, bpf_ntohl(nh->cack), &una);
	if (reason)
		return count_qp_drop(p->qpn - 1, reason);
	psn = mrc_psn_extend(una, p->psn);
	if (!mrc_psn_before(psn, READ_ONCE(tx->snd_nxt)))
		return count_qp_drop(p->qpn - 1, MRC_DROP_BAD_ACK);
	if (!nack_is_fatal(nh->reason) && mrc_psn_before(psn, una))
		return count_qp_drop(p->qpn - 1, MRC_DROP_STALE_ACK);

	st = qp_stats(p->qpn - 1);
	if (st)
		st->rx_nack++;
	evt.qpn = p->qpn;
	evt.psn = psn;
	evt.ev = bpf_ntohl(nh->ev);
	evt.reason = nh->reason;
	/* Completions first: what the peer acked before refusing succeeded. */
	emit_completions(tx, info, p->qpn, una);
	if (nack_is_fatal(nh->reason)) {
		evt.type = MRC_EVT_QP_FATAL;
		emit_event(info, &evt);
		/*
		 * After the event, so libmrc never sees the state without the
		 * reason; the state alone still fails the QP if the ring was full.
		 */
		WRITE_ONCE(tx->state, MRC_QPS_ERROR);
		return XDP_DROP;	/* consumed */
	}
	evt.type = MRC_EVT_LOSS;
	if (st)
		st->losses++;
	if (nh->reason == MRC_NACK_TRIMMED || nh->reason == MRC_NACK_TRIMMED_LASTHOP) {
		trim_feedback(p->qpn - 1, psn, nh->reason);
		trimmed = 1;
	}
	cc_update(info, p->qpn, old_una, una, 0, 0, trimmed, 0,
		  nh->reason == MRC_NACK_TRIMMED_LASTHOP ? CC_LAST_HOP : 0);
	if ((nh->m & 3) == MRC_M_ALWAYS_SKIP) {
		struct mrc_send_rec *rec = sent_record(p->qpn - 1, psn);

		if (rec)
			always_skip_ev(p->qpn - 1, rec->ev_idx, psn);
	}
	blame_loss(p->qpn - 1, psn, NULL, 0);
	emit_event(info, &evt);
	return XDP_DROP;	/* consumed */
}

/* ------------------------------------------------------------------------ */
/* Endpoint control: EV probes answered in place, port status to mrcd       */
/* ------------------------------------------------------------------------ */

/*
 * Ones'-complement update of a UDP checksum for 16-bit words that changed
 * (RFC 1624): sum_old and sum_new are plain sums of the old and new words.
 * An IPv4 checksum of 0 means "none" and stays 0.
 */
static __always_inline void udp_csum_update(struct udphdr *udp, __u32 sum_old,
					    __u32 sum_new)
{
	__u32 sum;

	if (!udp->check)
		return;
	sum_old = (sum_old & 0xffff) + (sum_old >> 16);
	sum_old = (sum_old & 0xffff) + (sum_old >> 16);
	sum_new = (sum_new & 0xffff) + (sum_new >> 16);
	sum_new = (sum_new & 0xffff) + (sum_new >> 16);
	sum = (__u16)~udp->check;
	sum += (__u16)~sum_old;
	sum += sum_new;
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	udp->check = (__u16)~sum ? (__u16)~sum : 0xffff;
}

/* Sum of the 16-bit words of a 32- or 64-bit field, as they lie in memory. */
static __always_inline __u32 words32(__u32 v)
{
	return (v & 0xffff) + (v >> 16);
}

static __always_inline __u32 words64(__u64 v)
{
	return words32((__u32)v) + words32((__u32)(v >> 32));
}

static __always_inline struct mrc_eph *ep_header(struct mrc_pkt *p)
{
	struct mrc_eph *eh = (void *)(p->bth + 1);

	if ((void *)(eh + 1) > p->end ||
	    p->payload_len < sizeof(struct mrc_bth) + sizeof(*eh))
		return NULL;
	return eh;
}

/*
 * An endpoint packet we will not serve: counted with the control paths,
 * and, when the packet itself is at fault, as a drop like any other bad
 * MRC packet (reason 0: a good packet that nobody here can take).
 */
static __always_inline int ep_drop(enum mrc_drop_reason reason)
{
	struct mrc_ctl_stats *cs = ctl_stats();

	if (cs)
		cs->ep_dropped++;
	return reason ? count_drop(reason) : XDP_DROP;
}

/* Send the frame back where it came from: swap MACs and IP addresses. */
static __always_inline int reflect_frame(struct mrc_pkt *p)
{
	struct ethhdr *eth = p->data;
	__u8 mac[6];	/* ETH_ALEN */

	if ((void *)(eth + 1) > p->end)
		return -1;
	__builtin_memcpy(mac, eth->h_dest, 6);
	__builtin_memcpy(eth->h_dest, eth->h_source, 6);
	__builtin_memcpy(eth->h_source, mac, 6);
	/* Swapping the addresses keeps every checksum: sums commute. */
	if (p->l4.l3_proto == ETH_P_IP) {
		struct iphdr *ip = p->data + sizeof(struct ethhdr);
		__u32 a;

		if ((void *)(ip + 1) > p->end)
			return -1;
		a = ip->saddr;
		ip->saddr = ip->daddr;
		ip->daddr = a;
	} else {
		struct ipv6hdr *ip6 = p->data + sizeof(struct ethhdr);
		struct in6_addr a;

		if ((void *)(ip6 + 1) > p->end)
			return -1;
		a = ip6->saddr;
		ip6->saddr = ip6->daddr;
		ip6->daddr = a;
	}
	return 0;
}

/*
 * An EV probe for us: answer it right here. The response keeps the UDP
 * ports (source = the EV, destination = the MRC port), so it crosses the
 * fabric on the EV's return path and reaches the requester's XDP.
 */
static __always_inline int answer_ev_probe(struct mrc_pkt *p,
					   struct mrc_eph *eh, __u64 t_arrival)
{
	struct mrc_ctl_stats *cs;
	__u16 *op_word = (__u16 *)p->bth;
	__u32 old_sum, new_sum, service;

	if (reflect_frame(p))
		return ep_drop(MRC_DROP_MALFORMED);
	old_sum = *op_word + words32(eh->service_ns);
	p->bth->opcode = MRC_OP_EP_RESPONSE;
	service = (__u32)(bpf_ktime_get_ns() - t_arrival);
	eh->service_ns = service;
	new_sum = *op_word + words32(service);
	udp_csum_update(p->udp, old_sum, new_sum);
	cs = ctl_stats();
	if (cs)
		cs->probes_answered++;
	return XDP_TX;
}

/* The answer to one of our probes: timestamp it, hand it to its socket. */
static __always_inline int take_probe_response(struct mrc_pkt *p,
					       struct mrc_eph *eh, __u64 now)
{
	struct mrc_ctl_stats *cs;
	__u16 port = bpf_ntohs(eh->reply_port);
	__u32 old_sum;

	if (eh->kind != MRC_EP_EV_PROBE)
		return ep_drop(MRC_DROP_BAD_OPCODE);
	if (!port)
		return ep_drop(MRC_DROP_MALFORMED);
	old_sum = words64(eh->t_rx_ns);
	eh->t_rx_ns = now;
	udp_csum_update(p->udp, old_sum, words64(now));
	steer_to_owner(p->udp, port);
	cs = ctl_stats();
	if (cs)
		cs->probe_responses++;
	return XDP_PASS;
}

/* A peer's port status goes to our mrcd, which knows the QPs. */
static __always_inline int take_port_status(struct mrc_pkt *p)
{
	__u32 zero = 0;
	struct mrc_global_cfg *cfg = bpf_map_lookup_elem(&mrc_cfg, &zero);
	struct mrc_ctl_stats *cs;

	if (!cfg || !cfg->agent_port)
		return ep_drop(MRC_DROP_NONE);	/* no agent to tell */
	steer_to_owner(p->udp, cfg->agent_port);
	cs = ctl_stats();
	if (cs)
		cs->port_status_rx++;
	return XDP_PASS;
}

static __always_inline int handle_ep(struct mrc_pkt *p)
{
	__u64 t_arrival = bpf_ktime_get_ns();
	struct mrc_eph *eh = ep_header(p);

	if (!eh)
		return ep_drop(MRC_DROP_MALFORMED);
	if (p->opcode == MRC_OP_EP_RESPONSE)
		return take_probe_response(p, eh, t_arrival);
	if (eh->kind == MRC_EP_EV_PROBE)
		return answer_ev_probe(p, eh, t_arrival);
	if (eh->kind == MRC_EP_PORT_STATUS)
		return take_port_status(p);
	return ep_drop(MRC_DROP_BAD_OPCODE);
}

/* ------------------------------------------------------------------------ */
/* entry points                                                             */
/* ------------------------------------------------------------------------ */

/* Parse up to the BTH; 1 = an MRC packet, 0 = not ours, <0 = drop reason. */
static __always_inline int parse_mrc(struct mrc_pkt *p)
{
	struct cursor c = { .pos = p->data, .end = p->end };
	__u32 udp_len;

	if (parse_l3(&c, p->data, &p->l4) || !p->l4.is_udp)
		return 0;
	p->udp = cursor_take(&c, sizeof(*p->udp));
	if (!p->udp || p->udp->dest != bpf_htons(mrc_port()))
		return 0;
	udp_len = bpf_ntohs(p->udp->len);
	if (udp_len < sizeof(struct udphdr) ||
	    (void *)p->udp + udp_len > p->end)
		return -MRC_DROP_MALFORMED;
	p->payload_len = udp_len - sizeof(struct udphdr);
	p->bth = cursor_take(&c, sizeof(*p->bth));
	if (!p->bth || p->payload_len < sizeof(struct mrc_bth))
		return -MRC_DROP_MALFORMED;
	p->opcode = p->bth->opcode;
	p->qpn = bpf_ntohl(p->bth->dqpn) & MRC_QPN_MASK;
	p->psn = bpf_ntohl(p->bth->psn) & MRC_PSN_MASK;
	p->flags = bpf_ntohl(p->bth->psn) >> 24;
	return 1;
}

SEC("xdp")
int mrc_xdp_rx(struct xdp_md *ctx)
{
	struct mrc_pkt p = {
		.data = (void *)(long)ctx->data,
		.end = (void *)(long)ctx->data_end,
		.ifindex = ctx->ingress_ifindex,
		.xdp = ctx,
	};
	int ret = parse_mrc(&p);

	if (ret == 0)
		return XDP_PASS;
	if (ret < 0)
		return count_drop(-ret);

	if (mrc_opcode_is_data(p.opcode))
		return handle_data(&p, 0);
	switch (p.opcode) {
	case MRC_OP_SACK:
		return handle_sack(&p);
	case MRC_OP_NACK:
		return handle_nack(&p);
	case MRC_OP_PROBE:
		return handle_data(&p, 1);
	case MRC_OP_EP_REQUEST:
	case MRC_OP_EP_RESPONSE:
		return handle_ep(&p);
	default:
		return count_drop(MRC_DROP_BAD_OPCODE);
	}
}

/* ------------------------------------------------------------------------ */
/* TC egress: spraying                                                      */
/* ------------------------------------------------------------------------ */

struct shuffle_ctx {
	struct mrc_qp_evs *evs;
	__u32 n;
	__u32 stride;
};

/*
 * One Fisher-Yates step: swap slot i = n - 1 - index with a random slot
 * at or below it that is a multiple of `stride` away (same plane slot).
 */
static long shuffle_step(__u32 index, void *data)
{
	struct shuffle_ctx *sc = data;
	__u32 i = sc->n - 1 - index, j;
	__u8 t;

	if (i == 0 || i >= MRC_MAX_EVS)
		return 1;
	j = i - sc->stride * (bpf_get_prandom_u32() % (i / sc->stride + 1));
	i &= MRC_MAX_EVS - 1;
	j &= MRC_MAX_EVS - 1;
	t = sc->evs->perm[i];
	sc->evs->perm[i] = sc->evs->perm[j];
	sc->evs->perm[j] = t;
	return 0;
}

/*
 * Redraw the rotation order when the cursor wraps, so the path sequence
 * is not periodic. bpf_loop keeps the verifier's work independent of the
 * table size.
 */
static __always_inline void reshuffle(struct mrc_qp_evs *evs, __u32 n)
{
	struct shuffle_ctx sc = { .evs = evs, .n = n, .stride = evs->stride };

	if (n < 2 || n > MRC_MAX_EVS)
		return;
	if (sc.stride == 0 || sc.stride > MRC_MAX_PLANES_ABI)
		sc.stride = 1;
	bpf_loop(n - 1, shuffle_step, &sc, 0);
	__sync_fetch_and_add(&evs->shuffles, 1);
}

/*
 * The next EV of the QP's rotation that may carry data: ACTIVE and GOOD,
 * and not `avoid` (the EV that lost the packet being resent). An entry in
 * SKIP loses this turn and goes back to GOOD. Returns the entry's index.
 *
 * The rotation visits the planes in turn (perm keeps each plane in its
 * column, positions `stride` apart). When the entry at the cursor cannot
 * be used, another EV of the SAME plane takes the turn (the positions
 * stride, 2 x stride... further on), so a plane keeps its share of the
 * packets however many of its EVs are out of service; only a plane with
 * no usable EV in reach gives its turn to the next plane.
 */
#define NEXT_EV_SAME_PLANE	16	/* tries in the cursor's plane column */
#define NEXT_EV_TRIES		(2 * NEXT_EV_SAME_PLANE)

static __always_inline int next_ev(struct mrc_qp_evs *evs, __u32 n, int avoid,
				   int *wrapped)
{
	__u32 stride = evs->stride, pos = 0;

	if (stride == 0 || stride > MRC_MAX_PLANES_ABI)
		stride = 1;
	for (int i = 0; i < NEXT_EV_TRIES; i++) {
		struct mrc_ev_entry *e;
		__u32 p, idx, w;

		if (i % NEXT_EV_SAME_PLANE == 0) {
			pos = __sync_fetch_and_add(&evs->next, 1) % n;
			if (pos == n - 1)
				*wrapped = 1;
		}
		p = (pos + (i % NEXT_EV_SAME_PLANE) * stride) % n;
		asm volatile("" : "+r"(p));
		idx = evs->perm[p & (MRC_MAX_EVS - 1)];
		/* Keep the mask: the verifier cannot follow the modulo. */
		asm volatile("" : "+r"(idx));
		idx &= MRC_MAX_EVS - 1;
		if (idx >= n)
			continue;
		e = &evs->ev[idx];
		w = READ_ONCE(e->word);
		if (!(MRC_EV_WORD_FLAGS(w) & MRC_EV_F_ACTIVE))
			continue;
		if (MRC_EV_WORD_STATE(w) == MRC_EV_SKIP) {
			__sync_val_compare_and_swap(&e->word, w,
				mrc_ev_word_with(w, MRC_EV_GOOD,
					    MRC_EV_WORD_FLAGS(w)));
			continue;
		}
		if (MRC_EV_WORD_STATE(w) == MRC_EV_GOOD && (int)idx != avoid)
			return (int)idx;
	}
	return -1;
}

static __always_inline int stamp_ev(struct __sk_buff *skb,
				    const struct l4_info *l4, __u32 ev,
				    __u8 format)
{
	__u32 port_off = l4->l4_off + offsetof(struct udphdr, source);
	__u32 csum_off = l4->l4_off + offsetof(struct udphdr, check);
	__u16 old_port, new_port = bpf_htons((__u16)ev);

	if (bpf_skb_load_bytes(skb, port_off, &old_port, 2))
		return -1;
	if (old_port != new_port) {
		if (bpf_l4_csum_replace(skb, csum_off, old_port, new_port,
					BPF_F_MARK_MANGLED_0 | 2))
			return -1;
		if (bpf_skb_store_bytes(skb, port_off, &new_port, 2, 0))
			return -1;
	}
	if (format == MRC_EVF_STEV && l4->l3_proto == ETH_P_IPV6) {
		/* High 16 EV bits in the low 16 bits of the flow label. */
		__u8 fl[2] = { (__u8)(ev >> 24), (__u8)(ev >> 16) };

		if (bpf_skb_store_bytes(skb, sizeof(struct ethhdr) + 2, fl, 2, 0))
			return -1;
	}
	/* The stack hashed the old port: make ECMP look at the new one. */
	bpf_set_hash_invalid(skb);
	return 0;
}

/* Replace one IPv4 address, fixing the IP and (pseudo-header) UDP sums. */
static __always_inline int rewrite_addr4(struct __sk_buff *skb,
					 const struct l4_info *l4, __u32 off,
					 __u32 new_addr)
{
	__u32 old_addr;

	if (bpf_skb_load_bytes(skb, off, &old_addr, 4))
		return -1;
	if (old_addr == new_addr)
		return 0;
	if (bpf_l3_csum_replace(skb, sizeof(struct ethhdr) +
				offsetof(struct iphdr, check), old_addr, new_addr, 4) ||
	    bpf_l4_csum_replace(skb, l4->l4_off + offsetof(struct udphdr, check),
				old_addr, new_addr,
				BPF_F_PSEUDO_HDR | BPF_F_MARK_MANGLED_0 | 4))
		return -1;
	return bpf_skb_store_bytes(skb, off, &new_addr, 4, 0);
}

static __always_inline int rewrite_addr6(struct __sk_buff *skb,
					 const struct l4_info *l4, __u32 off,
					 const __u8 *new_addr)
{
	__u32 old_addr[4], new[4];
	__s64 diff;

	if (bpf_skb_load_bytes(skb, off, old_addr, 16))
		return -1;
	__builtin_memcpy(new, new_addr, 16);
	diff = bpf_csum_diff(old_addr, 16, new, 16, 0);
	if (diff < 0 ||
	    bpf_l4_csum_replace(skb, l4->l4_off + offsetof(struct udphdr, check),
				0, (__u32)diff,
				BPF_F_PSEUDO_HDR | BPF_F_MARK_MANGLED_0))
		return -1;
	return bpf_skb_store_bytes(skb, off, new, 16, 0);
}

static __always_inline int peer_is_v4mapped(const __u8 *a)
{
	const __u32 *w = (const __u32 *)a;

	return w[0] == 0 && w[1] == 0 && w[2] == bpf_htonl(0x0000ffff);
}

/*
 * Move a packet to another plane: that plane's source address and the
 * peer's address on that plane; the caller then redirects it with
 * bpf_redirect_neigh(), which routes it on the plane's interface and fills
 * in the MACs (bpf_fib_lookup would need IP forwarding on the host).
 * Returns the plane's ifindex, or 0 to send the packet where it was going
 * (plane not configured, family not on that plane).
 */
static __always_inline __u32 move_to_plane(struct __sk_buff *skb,
					   const struct l4_info *l4,
					   const struct mrc_qp_info *info,
					   __u32 plane)
{
	struct mrc_plane *pl;
	__u32 key = plane - 1;
	const __u8 *peer;

	if (plane == 0 || plane > MRC_MAX_PLANES_ABI ||
	    plane > info->n_peer_addrs)
		return 0;
	pl = bpf_map_lookup_elem(&mrc_planes, &key);
	if (!pl || !pl->ifindex)
		return 0;
	peer = info->peer_addrs[key & (MRC_MAX_PLANES_ABI - 1)];

	/* The peer must have an address of the packet's family there. */
	if (peer_is_v4mapped(peer) != (l4->l3_proto == ETH_P_IP))
		return 0;
	if (l4->l3_proto == ETH_P_IP) {
		__u32 src, dst;

		__builtin_memcpy(&src, pl->addr4, 4);
		__builtin_memcpy(&dst, peer + 12, 4);
		if (!src || !dst)
			return 0;
		if (rewrite_addr4(skb, l4, sizeof(struct ethhdr) +
				  offsetof(struct iphdr, saddr), src) ||
		    rewrite_addr4(skb, l4, sizeof(struct ethhdr) +
				  offsetof(struct iphdr, daddr), dst))
			return 0;
	} else {
		__u32 src[4];

		__builtin_memcpy(src, pl->addr6, 16);
		if (!(src[0] | src[1] | src[2] | src[3]))
			return 0;
		if (rewrite_addr6(skb, l4, sizeof(struct ethhdr) +
				  offsetof(struct ipv6hdr, saddr), pl->addr6) ||
		    rewrite_addr6(skb, l4, sizeof(struct ethhdr) +
				  offsetof(struct ipv6hdr, daddr), peer))
			return 0;
	}
	/* Its egress program runs again on the new plane: let it pass. */
	skb->mark = MRC_SKB_MARK_SPRAYED;
	return pl->ifindex;
}

/* The local QP an outgoing packet belongs to: by peer QP and address. */
static __always_inline int outgoing_qp(void *data, void *end,
				       const struct l4_info *l4,
				       const struct mrc_bth *bth, __u32 *slot)
{
	struct mrc_peer_key key = {};
	__u32 *qpn;

	key.remote_qpn = bpf_ntohl(bth->dqpn) & MRC_QPN_MASK;
	if (l4->l3_proto == ETH_P_IP) {
		struct iphdr *ip = data + sizeof(struct ethhdr);

		if ((void *)(ip + 1) > end)
			return -1;
		key.addr[10] = 0xff;
		key.addr[11] = 0xff;
		__builtin_memcpy(&key.addr[12], &ip->daddr, 4);
	} else {
		struct ipv6hdr *ip6 = data + sizeof(struct ethhdr);

		if ((void *)(ip6 + 1) > end)
			return -1;
		__builtin_memcpy(key.addr, &ip6->daddr, 16);
	}
	qpn = bpf_map_lookup_elem(&mrc_peers, &key);
	if (!qpn || *qpn == 0 || *qpn > MRC_MAX_QPS)
		return -1;
	*slot = *qpn - 1;
	return 0;
}

/* DATA: next EV of the rotation, its plane, its stamp, its log entry. */
static __always_inline int spray_data(struct __sk_buff *skb,
				      const struct l4_info *l4,
				      const struct mrc_bth *bth, __u32 slot)
{
	struct mrc_qp_info *info = bpf_map_lookup_elem(&mrc_qps, &slot);
	struct mrc_qp_evs *evs = bpf_map_lookup_elem(&mrc_qp_evs, &slot);
	struct mrc_tx_state *tx = bpf_map_lookup_elem(&mrc_tx, &slot);
	__u32 raw = bpf_ntohl(bth->psn), psn, n, plane, ifindex = 0;
	__u8 flags = raw >> 24;
	struct mrc_send_rec *rec;
	struct mrc_qp_stats *st;
	struct mrc_ev_entry *e;
	int idx, avoid = -1, wrapped = 0;

	if (!info || !evs || !tx)
		return TC_ACT_OK;
	n = info->n_evs;
	if (n == 0 || n > MRC_MAX_EVS)
		return TC_ACT_OK;
	psn = mrc_psn_extend(READ_ONCE(tx->snd_una), raw & MRC_PSN_MASK);
	rec = send_rec(slot, psn);
	if (!rec)
		return TC_ACT_OK;
	/* A resend never takes the path that lost the packet. */
	if (flags & MRC_BTH_F_RETX && rec->psn == psn)
		avoid = rec->ev_idx;

	idx = next_ev(evs, n, avoid, &wrapped);
	if (wrapped)
		reshuffle(evs, n);
	if (idx < 0)
		return TC_ACT_OK;	/* nothing usable: leave the socket's port */
	e = &evs->ev[idx & (MRC_MAX_EVS - 1)];
	plane = e->plane;
	if (plane && plane != plane_of_ifindex(skb->ifindex))
		ifindex = move_to_plane(skb, l4, info, plane);
	if (!ifindex)
		plane = plane_of_ifindex(skb->ifindex);
	if (stamp_ev(skb, l4, e->ev, info->ev_format))
		return TC_ACT_OK;

	rec->psn = psn;
	rec->ev_idx = (__u8)idx;
	rec->plane = (__u8)plane;
	rec->flags = flags & MRC_BTH_F_RETX;
	rec->sent_ns = bpf_ktime_get_ns();
	count_ev_tx(slot, idx, skb->len);
	st = qp_stats(slot);
	if (st)
		st->tx_stamped++;
	return ifindex ? bpf_redirect_neigh(ifindex, NULL, 0, 0) : TC_ACT_OK;
}

/* Did mrcd see this plane's link go down? */
static __always_inline int plane_is_down(__u32 plane)
{
	__u32 key = plane - 1;
	struct mrc_plane *pl = bpf_map_lookup_elem(&mrc_planes, &key);

	return pl && (READ_ONCE(pl->flags) & MRC_PLANE_F_DOWN);
}

/*
 * SACK/NACK from the responder: spread over the planes and the EVs the
 * data direction used on each (learned by XDP), so acknowledgements take
 * working paths too and no single path carries them all. A plane whose
 * link is down is passed over.
 */
static __always_inline int spray_ack(struct __sk_buff *skb,
				     const struct l4_info *l4, __u32 slot)
{
	struct mrc_rev_evs *rev = bpf_map_lookup_elem(&mrc_rev_evs, &slot);
	struct mrc_qp_info *info = bpf_map_lookup_elem(&mrc_qps, &slot);
	__u32 plane = 0, ev = 0, ifindex = 0;

	if (!rev || !info || !info->n_peer_addrs)
		return TC_ACT_OK;
	for (int i = 0; i < MRC_MAX_PLANES_ABI; i++) {
		__u32 p = __sync_fetch_and_add(&rev->pick, 1) % info->n_peer_addrs;
		__u32 filled, slot_i;

		asm volatile("" : "+r"(p));
		p &= MRC_MAX_PLANES_ABI - 1;
		/* Only the slots the plane's data has filled so far. */
		filled = READ_ONCE(rev->next[p]);
		if (filled == 0 || plane_is_down(p + 1))
			continue;
		if (filled > MRC_REV_EVS)
			filled = MRC_REV_EVS;
		slot_i = bpf_get_prandom_u32() % filled;
		asm volatile("" : "+r"(slot_i));
		ev = rev->ev[p][slot_i & (MRC_REV_EVS - 1)];
		if (ev) {
			plane = p + 1;
			break;
		}
	}
	if (!ev)
		return TC_ACT_OK;	/* nothing learned yet */
	if (plane != plane_of_ifindex(skb->ifindex))
		ifindex = move_to_plane(skb, l4, info, plane);
	if (stamp_ev(skb, l4, ev, MRC_EVF_UDP))
		return TC_ACT_OK;
	return ifindex ? bpf_redirect_neigh(ifindex, NULL, 0, 0) : TC_ACT_OK;
}

/*
 * An EV probe mrcd sends: give it the EV it tests (source port, flow
 * label), keep the socket's port for the answer and stamp the send time
 * as late as possible, so the RTT is the wire's.
 */
static __always_inline int stamp_probe(struct __sk_buff *skb,
				       const struct l4_info *l4)
{
	__u32 eph_off = l4->l4_off + sizeof(struct udphdr) + sizeof(struct mrc_bth);
	__u32 csum_off = l4->l4_off + offsetof(struct udphdr, check);
	struct mrc_ctl_stats *cs;
	struct mrc_eph eh;
	__u16 sport;
	__u64 now;
	__s64 diff;

	if (bpf_skb_load_bytes(skb, eph_off, &eh, sizeof(eh)) ||
	    eh.kind != MRC_EP_EV_PROBE)
		return TC_ACT_OK;	/* port status goes as it is */
	if (bpf_skb_load_bytes(skb, l4->l4_off, &sport, sizeof(sport)))
		return TC_ACT_OK;
	if (bpf_l4_csum_replace(skb, csum_off, eh.reply_port, sport,
				BPF_F_MARK_MANGLED_0 | 2) ||
	    bpf_skb_store_bytes(skb, eph_off + offsetof(struct mrc_eph, reply_port),
				&sport, sizeof(sport), 0))
		return TC_ACT_OK;
	now = bpf_ktime_get_ns();
	diff = bpf_csum_diff((__be32 *)&eh.t_tx_ns, 8, (__be32 *)&now, 8, 0);
	if (bpf_l4_csum_replace(skb, csum_off, 0, (__u32)diff,
				BPF_F_MARK_MANGLED_0) ||
	    bpf_skb_store_bytes(skb, eph_off + offsetof(struct mrc_eph, t_tx_ns),
				&now, sizeof(now), 0))
		return TC_ACT_OK;
	if (stamp_ev(skb, l4, bpf_ntohl(eh.ev),
		     eh.flags & MRC_EPH_F_STEV ? MRC_EVF_STEV : MRC_EVF_UDP))
		return TC_ACT_OK;
	cs = ctl_stats();
	if (cs)
		cs->probes_stamped++;
	return TC_ACT_OK;
}

SEC("tc")
int mrc_tc_tx(struct __sk_buff *skb)
{
	void *data = (void *)(long)skb->data;
	void *end = (void *)(long)skb->data_end;
	struct cursor c = { .pos = data, .end = end };
	struct l4_info l4 = {};
	struct udphdr *udp;
	struct mrc_bth *bth;
	__u32 slot = 0;

	if (skb->mark == MRC_SKB_MARK_SPRAYED)
		return TC_ACT_OK;	/* moved here from another plane */
	if (parse_l3(&c, data, &l4) || !l4.is_udp)
		return TC_ACT_OK;
	udp = cursor_take(&c, sizeof(*udp));
	bth = cursor_take(&c, sizeof(*bth));
	if (!udp || !bth || udp->dest != bpf_htons(mrc_port()))
		return TC_ACT_OK;
	if (bth->opcode == MRC_OP_EP_REQUEST)
		return stamp_probe(skb, &l4);
	if (outgoing_qp(data, end, &l4, bth, &slot))
		return TC_ACT_OK;
	if (mrc_opcode_is_data(bth->opcode))
		return spray_data(skb, &l4, bth, slot);
	if (bth->opcode == MRC_OP_SACK || bth->opcode == MRC_OP_NACK)
		return spray_ack(skb, &l4, slot);
	return TC_ACT_OK;
}

char LICENSE[] SEC("license") = "GPL";
