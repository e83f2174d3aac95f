#!/usr/bin/env bash
# The receiver's ALWAYS_SKIP verdict, end to end: a path whose every packet
# arrives CE-marked is judged bad by the receiver (libmrc: 16 marked in a
# row on one EV), the verdict rides in a SACK (M = ALWAYS_SKIP) and the
# sender's XDP takes the EV out (ASSUMED_BAD, reason always_skip); mrcd's
# probes bring it back. With its usual 256 EVs the sender swaps a marked
# EV for a backup after 8 echoes and the verdict never comes (it is the
# backstop), so h1's QPs get a profile of 4 EVs, one per plane and no
# backups, and both spines of plane 2 mark everything.
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=ask lab_up --hosts 2 --planes 4 --spines 2 --rate 1gbit
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
mrc_up "$tmp"

begin always_skip.marked_plane_demoted
check "profile 0: 4 EVs" lab exec h1 "$MRCCTL" profile ev create 0 --type auto \
	--count 4 --min-active 1 > /dev/null
check "profile 0 offline" lab exec h1 "$MRCCTL" profile ev offline 0 > /dev/null
check "profile 0 online" lab exec h1 "$MRCCTL" profile ev online 0 > /dev/null
lab fault p2-s1 ecn 1 > /dev/null
lab fault p2-s2 ecn 1 > /dev/null
lab exec h1 "$MRCCTL" events --json > "$tmp/ev.json" 2> "$tmp/ev.err" &
EPID=$!
BG_PIDS+=("$EPID")
sleep 0.2
check "512 MiB through a plane that marks every packet, verified" \
	client --size 1m --bytes 512m --verify
check "verified" eq "$(cj .verified)" true
sleep 0.5
kill "$EPID" 2> /dev/null
wait "$EPID" 2> /dev/null
marks=$(stats_json | jq '[.links[].ecn_marked] | add')
verdicts=$(jq -s '[.[] | select(.reason == "always_skip")] | length' "$tmp/ev.json")
elsewhere=$(jq -s '[.[] | select(.reason == "always_skip" and .plane != 2)] | length' "$tmp/ev.json")
back=$(jq -s '[.[] | select(.reason == "probes_ok" and .plane == 2)] | length' "$tmp/ev.json")
echo "    $marks CE marks, $verdicts ALWAYS_SKIP demotions (plane 2), $back recoveries by probes" >&2
check "packets were marked" between "$marks" 16 100000000
check "the verdict demoted plane 2's EV" between "$verdicts" 1 10000
check "no verdict on the other planes" eq "$elsewhere" 0
check "probes brought it back at least once" between "$back" 1 10000
check "events state ASSUMED_BAD" eq "$(jq -s '[.[] | select(.reason == "always_skip" and .state != "ASSUMED_BAD")] | length' "$tmp/ev.json")" 0
end
