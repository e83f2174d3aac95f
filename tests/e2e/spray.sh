#!/usr/bin/env bash
# Multi-plane spraying end to end: one QP sprays its packets over every
# plane and every spine (TC egress picks the EV and moves packets between
# planes), data verified by checksum; a single UDP flow with one source
# port, for contrast, stays on one spine per plane.
. "$(dirname "$0")/lib.sh"

PERF="$ROOT/build/mrc-perf"
LAB_PREFIX=spr lab_up --hosts 2 --planes 4 --spines 2
tmp=$(mktemp -d)
SERVER_PID=""
cleanup() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
	lab agent stop > /dev/null 2>&1
	lab_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT

lab agent start > /dev/null || { echo "mrcd did not start" >&2; exit 1; }
H2=$(lab addr h2 1)
lab exec h2 "$PERF" server --json > "$tmp/server.json" 2> "$tmp/server.err" &
SERVER_PID=$!
BG_PIDS+=("$SERVER_PID")
sleep 0.5

client() {
	lab exec h1 "$PERF" client "$H2" --json --timeout-s 60 "$@" > "$tmp/c.json" 2> "$tmp/c.err"
	local rc=$?
	[ $rc -eq 0 ] || sed 's/^/    client: /' "$tmp/c.err" >&2
	return $rc
}
cj() { jq -r "$1" "$tmp/c.json"; }

# Jain's fairness index of the numbers on stdin, x1000 (1000 = perfectly even).
jain_milli() { jq -s '(add * add) / (length * (map(. * .) | add)) * 1000 | floor'; }
# Largest deviation from the mean, in percent.
max_dev_pct() { jq -s '(add / length) as $m | map((. - $m) / $m * 100 | fabs) | max | floor'; }

begin spray.one_qp_all_planes_all_spines
lab stats --reset
check "1 GiB, one QP, verified" client --size 1m --bytes 1g --verify
check "verified" eq "$(cj .verified)" true
stats_json > "$tmp/stats.json"
spines=$(jq '[.spines[] | select(.bytes > 100000000)] | length' "$tmp/stats.json")
planes=$(jq '[.links[] | select(.name | test("-h1$")) | select(.bytes > 200000000)] | length' "$tmp/stats.json")
jain=$(jq '.spines[].bytes' "$tmp/stats.json" | jain_milli)
dev=$(jq '.spines[].bytes' "$tmp/stats.json" | max_dev_pct)
pdev=$(jq '.links[] | select(.name | test("-h1$")) | .bytes' "$tmp/stats.json" | max_dev_pct)
echo "    $(cj .gbps) Gb/s; spines carrying >100 MB: $spines of 8, planes: $planes of 4;" \
	"Jain x1000 $jain, spine deviation max ${dev}%, plane deviation max ${pdev}%" >&2
check "every spine of every plane carries the QP" eq "$spines" 8
check "every plane carries the QP" eq "$planes" 4
check "planes within 10% of their mean" between "$pdev" 0 10
check "spines fair (Jain >= 0.99)" between "$jain" 990 1000
end

begin spray.single_udp_flow_one_spine_per_plane
lab stats --reset
for p in 1 2 3 4; do
	in_host h1 "$TRAFFIC" send --dst "$(lab addr h2 "$p")" --port 9 --sport 40000 \
		--count 2000 --size 1000 > /dev/null
done
stats_json > "$tmp/stats.json"
used=$(jq '[.spines[] | select(.packets > 1000)] | length' "$tmp/stats.json")
check "one spine per plane" eq "$used" 4
end

begin spray.ipv6
H2=$(lab addr h2 1 -6)
check "1 GiB over IPv6, verified" client --size 1m --bytes 256m --verify --imm
check "verified" eq "$(cj .verified)" true
H2=$(lab addr h2 1)
end
