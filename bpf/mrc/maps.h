/* SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause) */
/*
 * Every map of the fast path, defined once. Names, types, sizes and pinning
 * are an ABI: libmrc, mrcd, mrcctl and the tests open these maps by name
 * (values described in include/mrc/abi.h), so the one object bpf/mrc.bpf.c
 * defines them all and its role headers share them.
 */
#ifndef MRC_BPF_MAPS_H
#define MRC_BPF_MAPS_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_core_read.h>
#include "mrc/abi.h"

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

/*
 * Each QP's state (by slot) lives in maps of its owner's, so that mrcd can
 * hand an application the fds of its own QPs' state and nothing else:
 * libmrc (or mrcd's broker for it) creates the three maps as blocks of
 * entries (BPF_F_MMAPABLE), one entry per QP, mrc_qp_info.state_idx, and
 * maps each QP's entry; it and mrcd change entries with compare-and-swap.
 * One owner's QPs side by side share pages: with a page per QP, a packet
 * of one of thousands of QPs cost a TLB miss (docs/PERFORMANCE.md, "The
 * regression's cause"). Blocks grow with the owner, so their sizes differ
 * (BPF_F_INNER_MAP). A slot without a map, or whose map has no entry
 * state_idx, reads as NULL.
 */
struct mrc_qp_evs_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mrc_qp_evs);
};

struct mrc_rx_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mrc_rx_state);
};

struct mrc_tx_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mrc_tx_state);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	PIN;
	__array(values, struct mrc_qp_evs_map);
} mrc_qp_evs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	PIN;
	__array(values, struct mrc_rx_map);
} mrc_rx SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	PIN;
	__array(values, struct mrc_tx_map);
} mrc_tx SEC(".maps");

/*
 * Per-EV counters and send log of each QP (by slot): an inner map per QP,
 * which libmrc creates sized by the QP (include/mrc/abi.h) when it
 * publishes the QP's EV table and removes when the QP goes; a slot
 * without one (no QP, or not yet published) reads as NULL. The templates
 * below give the shape; BPF_F_INNER_MAP lets the sizes differ (and makes
 * lookups real calls that check the key against the inner map's size).
 */
struct mrc_ev_rx_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP);
	__uint(max_entries, MRC_MAX_EVS);
	__type(key, __u32);
	__type(value, struct mrc_ev_rx_counters);
};

struct mrc_ev_tx_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP);
	__uint(max_entries, MRC_MAX_EVS);
	__type(key, __u32);
	__type(value, struct mrc_ev_tx_counters);
};

struct mrc_send_log_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_INNER_MAP);
	__uint(max_entries, MRC_WINDOW_MAX);
	__type(key, __u32);
	__type(value, struct mrc_send_rec);
};

/*
 * clang 14 writes a struct that an inner map's template names only as a
 * forward declaration into BTF, and libbpf cannot size the template then.
 * This function (called by no program, so never loaded) asks for the
 * local BTF ids of the inner maps' value types, which makes clang write their
 * full definitions (also into the BTF libmrc gives the inner maps, so
 * bpftool shows their fields).
 */
__attribute__((unused)) int mrc_btf_inner_values(void)
{
	return (int)(bpf_core_type_id_local(struct mrc_send_rec) +
		     bpf_core_type_id_local(struct mrc_ev_rx_counters) +
		     bpf_core_type_id_local(struct mrc_ev_tx_counters) +
		     bpf_core_type_id_local(struct mrc_rx_state) +
		     bpf_core_type_id_local(struct mrc_tx_state) +
		     bpf_core_type_id_local(struct mrc_qp_evs) +
		     bpf_core_type_id_local(struct mrc_cc_view));
}

/* XDP's per-EV counters (per SACK and NACK). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	PIN;
	__array(values, struct mrc_ev_rx_map);
} mrc_ev_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	PIN;
	__array(values, struct mrc_send_log_map);
} mrc_send_log SEC(".maps");

/* TC's per-EV counters (per packet): apart from XDP's, see abi.h. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MRC_MAX_QPS);
	__type(key, __u32);
	PIN;
	__array(values, struct mrc_ev_tx_map);
} mrc_ev_tx SEC(".maps");

/* Reverse EVs of each QP (by slot). */
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

/* Each window's view (by cc slot): an inner map per window, like a QP's state. */
struct mrc_cc_view_map {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mrc_cc_view);
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, MRC_MAX_CC);
	__type(key, __u32);
	PIN;
	__array(values, struct mrc_cc_view_map);
} mrc_cc_view SEC(".maps");

/*
 * Who endpoint messages are served from, and where probe responses may go
 * (include/mrc/abi.h); mrcd keeps both.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MRC_MAX_KNOWN_PEERS);
	__type(key, struct mrc_known_peer_key);
	__type(value, struct mrc_known_peer);
	PIN;
} mrc_known_peers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MRC_MAX_PROBE_PORTS);
	__type(key, __u32);
	__type(value, __u32);
	PIN;
} mrc_probe_ports SEC(".maps");

/*
 * The XDP program that gets the packets which are not MRC's, when the
 * kernel cannot run libxdp's dispatcher (docs/OPERATIONS.md): slot 0, set
 * by the operator (bpftool map update pinned .../mrc_xdp_next key 0 0 0 0
 * value pinned PROG); empty, such packets go up the stack (XDP_PASS).
 * Sizes, not types: a program array takes no BTF key or value.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
	PIN;
} mrc_xdp_next SEC(".maps");

/*
 * The one entry of a per-slot inner map. The key is a constant in .rodata,
 * not a stack slot: the XDP frame has no bytes to spare.
 */
static const __u32 mrc_inner_key;

static __always_inline void *inner_entry(void *outer, __u32 slot)
{
	void *inner = bpf_map_lookup_elem(outer, &slot);

	return inner ? bpf_map_lookup_elem(inner, &mrc_inner_key) : NULL;
}

/*
 * A QP's entry of a state map by slot; NULL when the slot has no QP (no
 * map, or no entry state_idx). The key is the QP's own mrc_qps value: no
 * stack either.
 */
static __always_inline void *qp_state_entry(void *outer, __u32 slot)
{
	struct mrc_qp_info *info = bpf_map_lookup_elem(&mrc_qps, &slot);
	void *inner;

	if (!info)
		return NULL;
	inner = bpf_map_lookup_elem(outer, &slot);
	return inner ? bpf_map_lookup_elem(inner, &info->state_idx) : NULL;
}

static __always_inline struct mrc_rx_state *qp_rx_state(__u32 slot)
{
	return qp_state_entry(&mrc_rx, slot);
}

static __always_inline struct mrc_tx_state *qp_tx_state(__u32 slot)
{
	return qp_state_entry(&mrc_tx, slot);
}

static __always_inline struct mrc_qp_evs *qp_ev_table(__u32 slot)
{
	return qp_state_entry(&mrc_qp_evs, slot);
}

/* A window's view by cc slot; NULL when no process claimed the window. */
static __always_inline struct mrc_cc_view *cc_view_of(__u32 slot)
{
	return inner_entry(&mrc_cc_view, slot);
}

#endif /* MRC_BPF_MAPS_H */
