#!/usr/bin/env bash
# `make demo`: bring up a 2-host, 4-plane, 2-spine lab, show its topology,
# spray UDP over 1000 source ports on every plane and show how ECMP spread
# it over the spines, blackhole one spine and show the damage, then tear
# the lab down. (The MRC transport joins the demo as it lands.)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LAB=demo$$
LAB=${LAB:0:12}
MRC_LAB="$ROOT/tools/mrc-lab"
TRAFFIC="$ROOT/build/mrc-lab-traffic"
trap '"$MRC_LAB" down --name "$LAB"' EXIT

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
echo
echo "demo done: lab $LAB removed"
