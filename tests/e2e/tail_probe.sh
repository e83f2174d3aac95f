#!/usr/bin/env bash
# The tail loss probe end to end (user/libmrc/send.c probe_tail): one-packet
# WRITEs at depth 1 over a fabric with a spine blackholed are each the
# tail of their QP's traffic: one lost on the dead spine (or whose SACK
# is) has no later packet to show the hole. The probe resends it two
# smoothed RTTs later instead of the retransmission timeout; the test
# checks it ran and every WRITE arrived intact, and prints the latency.
# A control run on a healthy fabric probes (almost) nothing.
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=tlp lab_up --hosts 2 --planes 2 --spines 2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
mrc_up "$tmp"

ITERS=400

# run NAME: 4 KiB WRITEs at depth 1, verified; prints what the probe did.
run() {
	check "$ITERS 4 KiB WRITEs at depth 1, verified" \
		client --size 4k --iters "$ITERS" --depth 1 --verify
	check "verified" eq "$(cj .verified)" true
	echo "    $1: tail probes $(cj .tail_probes), timeouts $(cj .timeouts)," \
		"resent $(cj .tx_retransmits); latency p50 $(cj '.sizes[0].lat_p50_us') us," \
		"p99 $(cj '.sizes[0].lat_p99_us') us, max $(cj '.sizes[0].lat_max_us') us" >&2
}

begin tail_probe.healthy_fabric_quiet
run healthy
# A probe fires only after 2 x srtt (>= 2 ms) without progress: on an idle
# lab, a scheduling hiccup now and then, not one WRITE in ten.
check "few probes (< ITERS / 10)" between "$(cj .tail_probes)" 0 $((ITERS / 10 - 1))
end

begin tail_probe.dead_spine_tails_probed
lab fault p1-s1 blackhole
# The control connection goes over plane 2: on plane 1 ECMP may hash it
# onto the dead spine. The data is sprayed over both planes as ever.
H2=$(lab addr h2 2)
run "p1-s1 blackholed"
H2=$(lab addr h2 1)
check "the probe resent lost tails" between "$(cj .tail_probes)" 1 "$ITERS"
lab fault p1-s1 clear
end
