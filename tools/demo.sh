#!/usr/bin/env bash
# `make demo`: bring up a 2-host, 4-plane, 2-spine lab, show its topology,
# spray UDP over 1000 source ports on every plane and show how ECMP spread
# it over the spines, blackhole one spine and show the damage; then start
# mrcd on both hosts and move verified data with the MRC transport
# (mrc-perf), cleanly and through 1% loss; then tear the lab down.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LAB=demo$$
LAB=${LAB:0:12}
MRC_LAB="$ROOT/tools/mrc-lab"
TRAFFIC="$ROOT/build/mrc-lab-traffic"
PERF="$ROOT/build/mrc-perf"
SERVER_PID=""
cleanup() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
	"$MRC_LAB" down --name "$LAB"
}
trap cleanup EXIT

"$MRC_LAB" up --name "$LAB" --hosts 2 --planes 4 --spines 2
echo
send_all_planes() {
	local p
	for p in 1 2 3 4; do
		ip netns exec "$LAB-h1" "$TRAFFIC" send --dst "198.18.$p.2" --port 9 \
			--sport-range 20000:20999 --count 1000 --size 1000 > /dev/null
	done
}
echo "== 1000 UDP source ports per plane, h1 -> h2: packets per spine"
"$MRC_LAB" stats --name "$LAB" --reset
send_all_planes
"$MRC_LAB" stats --name "$LAB" --json |
	jq -r '.spines[] | "plane \(.plane) spine \(.spine): \(.packets) packets"'
echo
echo "== blackhole spine 1 of plane 2 (link stays up), send again"
"$MRC_LAB" fault --name "$LAB" p2-s1 blackhole
"$MRC_LAB" stats --name "$LAB" --reset
send_all_planes
"$MRC_LAB" stats --name "$LAB" --json |
	jq -r '.links[] | select(.dropped > 0) | "\(.name): \(.dropped) packets dropped"'
"$MRC_LAB" fault --name "$LAB" p2-s1 clear
echo
echo "== MRC transport: mrcd on both hosts, mrc-perf WRITEs h1 -> h2 on plane 1"
"$MRC_LAB" agent --name "$LAB" start
"$MRC_LAB" exec --name "$LAB" h2 "$PERF" server 2> /dev/null &
SERVER_PID=$!
sleep 0.5
H2=$("$MRC_LAB" addr --name "$LAB" h2 1)
"$MRC_LAB" exec --name "$LAB" h1 "$PERF" client "$H2" --sweep 4k:1m --bytes 64m --verify 2> /dev/null
echo
echo "== the same with 1% loss on both spine links of plane 1 (selective resend)"
"$MRC_LAB" fault --name "$LAB" p1-s1 drop 1
"$MRC_LAB" fault --name "$LAB" p1-s2 drop 1
"$MRC_LAB" exec --name "$LAB" h1 "$PERF" client "$H2" --size 1m --bytes 256m --verify 2> /dev/null
echo
echo "== h1's fast path: per-QP counters of the XDP/TC programs (bpftool)"
"$MRC_LAB" exec --name "$LAB" h1 bpftool map dump pinned /sys/fs/bpf/mrc/mrc_qp_stats |
	jq -r '.[] | [.values[].value] as $v | select(($v | map(.tx_stamped) | add) > 0) |
		"qp \(.key + 1): packets stamped \($v | map(.tx_stamped) | add), SACKs \($v | map(.rx_sack) | add), losses reported \($v | map(.losses) | add), WRITEs completed \($v | map(.completions) | add)"'
"$MRC_LAB" agent --name "$LAB" stop
echo
echo "demo done: lab $LAB removed"
