#!/usr/bin/env bash
# `make demo`: bring up a 2-host, 4-plane, 2-spine lab, show its topology,
# spray UDP over 1000 source ports on every plane and show how ECMP spread
# it over the spines, blackhole one spine and show the damage; then start
# mrcd on both hosts, move 1 GiB with one MRC QP sprayed over every plane
# and spine (verified), again through 1% loss, then survive a spine
# failing mid-transfer (EV events, the receiver's longest stall), show a
# live QP's EV states with mrcctl; then tear the lab down.
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
echo "== MRC: mrcd on both hosts; one QP WRITEs 1 GiB h1 -> h2, sprayed over 4 planes x 2 spines"
"$MRC_LAB" agent --name "$LAB" start
MRCCTL="$ROOT/build/mrcctl"
"$MRC_LAB" exec --name "$LAB" h2 "$PERF" server 2> /dev/null &
SERVER_PID=$!
sleep 0.5
H2=$("$MRC_LAB" addr --name "$LAB" h2 1)
"$MRC_LAB" stats --name "$LAB" --reset
"$MRC_LAB" exec --name "$LAB" h1 "$PERF" client "$H2" --size 1m --bytes 1g --verify 2> /dev/null
echo "-- bytes per plane (h1's access links) and per spine, both directions:"
"$MRC_LAB" stats --name "$LAB" --json | jq -r '
	(.links[] | select(.name | test("-h1$")) | "\(.name): \(.bytes / 1e6 | floor) MB"),
	(.spines[] | "plane \(.plane) spine \(.spine): \(.bytes / 1e6 | floor) MB")' | paste - - - -
echo
echo "== the same with 1% loss on both spine links of plane 1 (per-path loss, selective resend)"
"$MRC_LAB" fault --name "$LAB" p1-s1 drop 1
"$MRC_LAB" fault --name "$LAB" p1-s2 drop 1
"$MRC_LAB" exec --name "$LAB" h1 "$PERF" client "$H2" --size 1m --bytes 256m --verify 2> /dev/null
"$MRC_LAB" fault --name "$LAB" p1-s1 clear
"$MRC_LAB" fault --name "$LAB" p1-s2 clear
echo
echo "== a spine fails mid-transfer: blackhole spine 1 of plane 1 0.5 s into 2 GiB, clear it 1 s later"
TMPD=$(mktemp -d)
"$MRC_LAB" exec --name "$LAB" h1 "$MRCCTL" events --json > "$TMPD/ev.json" 2> /dev/null &
EVENTS_PID=$!
kill "$SERVER_PID" 2> /dev/null || true
wait "$SERVER_PID" 2> /dev/null || true
"$MRC_LAB" exec --name "$LAB" h2 "$PERF" server --timeline "$TMPD/tl.csv" --once 2> /dev/null &
SERVER_PID=$!
sleep 0.5
"$MRC_LAB" exec --name "$LAB" h1 "$PERF" client "$H2" --size 1m --bytes 2g --verify 2> /dev/null |
	grep total &
CLIENT_PID=$!
sleep 0.5
"$MRC_LAB" fault --name "$LAB" p1-s1 blackhole
sleep 1
"$MRC_LAB" fault --name "$LAB" p1-s1 clear
wait "$CLIENT_PID" 2> /dev/null || true
wait "$SERVER_PID" 2> /dev/null || true
sleep 1
kill "$EVENTS_PID" 2> /dev/null || true
wait "$EVENTS_PID" 2> /dev/null || true
jq -s -r '([.[] | select(.state == "ASSUMED_BAD")]) as $bad
	| ([.[] | select(.state == "GOOD")]) as $good
	| "EV events (mrcctl events): \($bad | length) EVs ASSUMED_BAD (planes \([$bad[].plane] | unique | map(tostring) | join(","))," +
	  " reasons \([$bad[].reason] | unique | join(","))), the first \(if ($bad | length) > 0 then ($bad | min_by(.time_ns)
	  | (.time_ns - .lost_sent_ns) / 1e6 * 10 | floor / 10) else "-" end) ms after the packet it lost was sent;" +
	  " \($good | length) back to GOOD by probes"' "$TMPD/ev.json" 2> /dev/null || true
awk -F, 'NR > 1 { if ($2 == 0) { if (seen) run++; next } if (run > max) max = run; run = 0; seen = 1 }
	END { print "receiver: longest stall " max + 0 " ms (bytes placed per ms, mrc-perf server --timeline)" }' \
	"$TMPD/tl.csv" 2> /dev/null || true
rm -rf "$TMPD"
"$MRC_LAB" exec --name "$LAB" h2 "$PERF" server 2> /dev/null &
SERVER_PID=$!
sleep 0.5
echo
echo "== EV states of a live QP (mrcctl), after 'mrcctl ev deny --plane 2'"
"$MRC_LAB" exec --name "$LAB" h1 "$PERF" client "$H2" --size 1m --bytes 64g --timeout-s 30 \
	> /dev/null 2>&1 &
CLIENT_PID=$!
QPN=""
for _ in $(seq 50); do
	QPN=$("$MRC_LAB" exec --name "$LAB" h1 "$MRCCTL" --json qp list 2> /dev/null | jq -r '.[0].qpn // empty')
	[ -n "$QPN" ] && break
	sleep 0.1
done
if [ -n "$QPN" ]; then
	"$MRC_LAB" exec --name "$LAB" h1 "$MRCCTL" ev deny --qp "$QPN" --plane 2
	sleep 0.5
	"$MRC_LAB" exec --name "$LAB" h1 "$MRCCTL" --json ev list --qp "$QPN" | jq -r '
		group_by(.plane)[] | "plane \(.[0].plane): \(length) EVs (\(map(select(.active)) | length) active, the rest backups), " +
		"states \(map(.state) | unique | join(",")), " +
		"\(map(.packets) | add) packets sent, mean RTT \(map(.rtt_us) | add / length | floor) us"'
fi
kill "$CLIENT_PID" 2> /dev/null || true
wait "$CLIENT_PID" 2> /dev/null || true
"$MRC_LAB" agent --name "$LAB" stop
echo
echo "demo done: lab $LAB removed"
