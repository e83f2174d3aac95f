#!/usr/bin/env bash
# Trimming end to end: congested links trim MRC data to its headers
# (lab/lab_fabric.bpf.c), the responder's XDP answers each trimmed header
# with a NACK in place (XDP_TX, bpf/mrc/trim_nack.h), the requester's XDP turns
# the NACK into a resend, and the transfer completes with its data
# verified. Once with plane 1's spines as the bottleneck (trimmed mid-path,
# DSCP 0x2C: NACK TRIMMED), once more over IPv6, once with h2's plane-1
# access link (trimmed at the last hop, DSCP 0x2D: NACK TRIMMED_LASTHOP),
# and there once more with ICRC QPs (the NACK carries its ICRC).
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=trm lab_up --hosts 2 --planes 2 --spines 2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
mrc_up "$tmp"

BOTTLENECK=200mbit
TRIM_AT=20k
# Several WRITEs in flight: their completion events, written by SACKs and
# NACKs handled on two CPUs, may reach libmrc in either order (it completes
# cumulatively).
DEPTH=16

# ctl_json HOST: mrcctl stats of HOST (XDP/TC control counters in .control,
# per-QP counter sums in .total).
ctl_json() { lab exec "$1" "$MRCCTL" stats --json; }

# snapshot NAME: both hosts' mrcctl stats and the lab's counters now.
snapshot() {
	ctl_json h1 > "$tmp/$1.h1.json"
	ctl_json h2 > "$tmp/$1.h2.json"
	stats_json > "$tmp/$1.lab.json"
}

# delta BEFORE AFTER HOST FILTER: growth of a counter between snapshots.
delta() { echo $(( $(jq "$4" "$tmp/$2.$3.json") - $(jq "$4" "$tmp/$1.$3.json") )); }

# lab_trims SNAPSHOT REGEX: trims counted on the lab links named REGEX.
lab_trims() {
	jq "[.links[] | select(.name | test(\"$2\")) | .trimmed] | add" "$tmp/$1.lab.json"
}

# bad_icrc HOST: XDP's bad_icrc drops on HOST, summed over CPUs.
bad_icrc() {
	lab exec "$1" bpftool map dump pinned /sys/fs/bpf/mrc/mrc_drops |
		jq '[.[0].values[] | .value.bad_icrc] | add'
}

# run_trimmed PHASE [BYTES [CLIENT_ARGS...]]: a transfer through the
# trimming bottleneck; sets the counters it measured.
run_trimmed() {
	local phase=$1 bytes=${2:-128m}
	shift $(($# < 2 ? $# : 2))
	lab stats --reset
	snapshot "$phase.0"
	check "$bytes through the trimming bottleneck, verified" \
		client --size 1m --bytes "$bytes" --depth "$DEPTH" --verify "$@"
	check "verified" eq "$(cj .verified)" true
	sleep 0.2
	snapshot "$phase.1"
	NACKS=$(delta "$phase.0" "$phase.1" h2 .control.trim_nacks)
	LASTHOP=$(delta "$phase.0" "$phase.1" h2 .control.trim_nacks_lasthop)
	RX_NACK=$(delta "$phase.0" "$phase.1" h1 .total.rx_nack)
	LOSSES=$(delta "$phase.0" "$phase.1" h1 .total.losses)
	GATED=$(delta "$phase.0" "$phase.1" h1 .total.nacks_gated)
}

begin trim.midpath_nacked_from_xdp
for s in 1 2; do
	lab fault "p1-s$s" rate "$BOTTLENECK"
	lab fault "p1-s$s" trim "$TRIM_AT"
done
run_trimmed mid
trimmed=$(lab_trims mid.1 '^p1-s')
lasthop_trims=$(lab_trims mid.1 '-h[0-9]+$')
echo "    $(cj .gbps) Gb/s; spines trimmed $trimmed; h2 XDP sent $NACKS trim NACKs" \
	"($LASTHOP last hop); h1 XDP took $RX_NACK NACKs, $LOSSES resends, $GATED gated;" \
	"client: $(cj .tx_retransmits) resent, $(cj .resends_held) held to a minimum RTT" >&2
check "the spines trimmed" between "$trimmed" 1 100000000
check "no trims at the last hop" eq "$lasthop_trims" 0
check "the responder's XDP answered trims" between "$NACKS" 1 "$trimmed"
check "all of them mid-path" eq "$LASTHOP" 0
check "the requester's XDP counted the NACKs" between "$RX_NACK" 1 "$NACKS"
check "each NACK was a resend or gated" between "$((LOSSES + GATED))" "$RX_NACK" 100000000
# A real trim makes one NACK per send: the gate (bpf/mrc/ack_rx.h
# nack_may_act) holds one back only when the PSN was resent meanwhile (the
# NACK came late: loss detection or the timer was first) or the NACK came
# sooner after the send than an eighth of the minimum RTT. Either way the
# trimmed PSN is resent: at least one resend per trim NACK.
check "every trimmed PSN resent" between "$(cj .tx_retransmits)" "$RX_NACK" 100000000
check "most real trim NACKs acted (gated <= 1/2)" between "$GATED" 0 $((RX_NACK / 2))
end

begin trim.midpath_ipv6
H2=$(lab addr h2 1 -6)
run_trimmed mid6 64m
H2=$(lab addr h2 1)
trimmed=$(lab_trims mid6.1 '^p1-s')
echo "    IPv6: $(cj .gbps) Gb/s; spines trimmed $trimmed; h2 XDP sent $NACKS trim" \
	"NACKs; h1 XDP took $RX_NACK, $GATED gated" >&2
check "the spines trimmed" between "$trimmed" 1 100000000
check "the responder's XDP answered trims" between "$NACKS" 1 "$trimmed"
check "all of them mid-path" eq "$LASTHOP" 0
check "the requester's XDP counted the NACKs" between "$RX_NACK" 1 "$NACKS"
for s in 1 2; do lab fault "p1-s$s" clear; done
end

begin trim.lasthop_nacked_from_xdp
lab fault p1-h2 rate "$BOTTLENECK"
lab fault p1-h2 trim "$TRIM_AT"
run_trimmed last
trimmed=$(lab_trims last.1 '^p1-h2$')
core_trims=$(lab_trims last.1 '-s[0-9]+$')
echo "    $(cj .gbps) Gb/s; h2's access link trimmed $trimmed; h2 XDP sent $NACKS" \
	"trim NACKs ($LASTHOP last hop); h1 XDP took $RX_NACK NACKs" >&2
check "the last hop trimmed" between "$trimmed" 1 100000000
check "no trims in the core" eq "$core_trims" 0
check "the responder's XDP answered trims" between "$NACKS" 1 "$trimmed"
check "all of them last-hop" eq "$LASTHOP" "$NACKS"
check "the requester's XDP counted the NACKs" between "$RX_NACK" 1 "$NACKS"
end

# ICRC QPs: the NACK XDP builds for a trimmed header carries the NACK's
# own ICRC, which the requester's XDP checks before it acts on it.
begin trim.icrc_nacks_checked
icrc0=$(bad_icrc h1)
run_trimmed icrc 64m --icrc
icrc1=$(bad_icrc h1)
echo "    ICRC: $(cj .gbps) Gb/s; h2 XDP sent $NACKS trim NACKs; h1 XDP took" \
	"$RX_NACK, bad ICRC drops $((icrc1 - icrc0))" >&2
check "the responder's XDP answered trims" between "$NACKS" 1 100000000
check "the requester's XDP took the NACKs" between "$RX_NACK" 1 "$NACKS"
check "no NACK failed its ICRC" eq "$((icrc1 - icrc0))" 0
lab fault p1-h2 clear
end
