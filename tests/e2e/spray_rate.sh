#!/usr/bin/env bash
# Spraying against real bottlenecks: every plane rate-limited to 500 Mbit/s
# (HTB queues). One QP must fill the sum of the planes, and a congested,
# ECN-marking spine must lose share (its EVs skip turns on each CE echo)
# while the QP keeps its goodput.
. "$(dirname "$0")/lib.sh"

RATE_MBIT=500
LAB_PREFIX=spt lab_up --hosts 2 --planes 4 --spines 2 --rate "${RATE_MBIT}mbit"
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
mrc_up "$tmp"
SUM_MBIT=$((4 * RATE_MBIT))

# Goodput in percent of the planes' sum.
pct_of_sum() { jq -n "$(cj .gbps) * 1000 / $SUM_MBIT * 100 | floor"; }
spine_mb() { stats_json | jq ".spines[] | select(.plane == $1 and .spine == $2) | .bytes / 1e6 | floor"; }

begin spray_rate.fills_four_planes
check "1 GiB over 4 x ${RATE_MBIT} Mbit/s, verified" client --size 1m --bytes 1g --mpr 2 --verify
check "verified" eq "$(cj .verified)" true
pct=$(pct_of_sum)
echo "    $(cj .gbps) Gb/s = ${pct}% of ${SUM_MBIT} Mbit/s" >&2
check "goodput >= 90% of the sum" between "$pct" 90 100
end

begin spray_rate.ecn_spine_loses_share
# Spine 1 of plane 2 becomes a hot path: 200 Mbit/s, CE marks above 20 KB.
lab fault p2-s1 rate 200mbit
lab fault p2-s1 ecn 20k
lab stats --reset
check "512 MiB with a marking spine, verified" client --size 1m --bytes 512m --mpr 2 --verify
check "verified" eq "$(cj .verified)" true
s1=$(spine_mb 2 1) s2=$(spine_mb 2 2)
marks=$(stats_json | jq '[.links[].ecn_marked] | add')
share=$((s1 * 100 / (s1 + s2)))
pct=$(pct_of_sum)
echo "    marked spine: ${s1} MB vs ${s2} MB (${share}% of plane 2), ${marks} CE marks; $(cj .gbps) Gb/s = ${pct}%" >&2
check "the spine was marking" between "$marks" 1 100000000
check "its share of the plane dropped below 45%" between "$share" 0 44
check "goodput >= 85% of the sum" between "$pct" 85 100
lab fault p2-s1 clear
end
