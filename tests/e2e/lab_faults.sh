#!/usr/bin/env bash
# Fault injection acts on the named link only: drop PCT drops that share,
# blackhole drops everything while the link stays up, down/up flip the
# kernel link state, clear restores the fabric.
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=flt lab_up --hosts 2 --planes 2 --spines 2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT

# send_plane PLANE COUNT PORT [TIMEOUT_MS]: COUNT packets over 1000 source
# ports h1 -> h2 on PLANE; prints how many arrived ("late" if the send
# ended less than 0.5 s before the receiver's timeout, default 8 s: a dark
# plane, where nothing comes, waits all of it).
send_plane() {
	local p=$1 count=$2 port=$3 ms=${4:-8000}
	start_recv h2 "$port" "$tmp/r$port.json" --expect "$count" --timeout-ms "$ms" --idle-ms 700 ||
		return 1
	in_host h1 "$TRAFFIC" send --dst "$(lab addr h2 "$p")" --port "$port" \
		--sport-range 20000:20999 --count "$count" --size 200 --pps 20000 > /dev/null
	recv_listens_on "$ms" || { wait_recv; echo late; return; }
	wait_recv
	json "$tmp/r$port.json" .received
}

other_links_clean() {
	local except=$1 bad
	bad=$(stats_json | jq -r ".links[] | select(.name != \"$except\" and .dropped > 0) | .name")
	[ -z "$bad" ] || { echo "    drops on other links: $bad" >&2; return 1; }
}

begin lab.fault_drop_10pct
lab stats --reset
lab fault p1-h1 drop 10
got=$(send_plane 1 5000 7001)
got2=$(send_plane 2 2000 7002)
dropped=$(link_field p1-h1 dropped)
echo "    drop 10: received $got of 5000, link dropped $dropped; plane 2 $got2 of 2000" >&2
check "10% +/- 3 lost end to end" between "$got" 4350 4650
check "link counted the drops" between "$dropped" 350 650
check "only that link drops" other_links_clean p1-h1
check "plane 2 unaffected" eq "$got2" 2000
lab fault p1-h1 clear
check "clear restores" eq "$(send_plane 1 1000 7003)" 1000
end

begin lab.fault_blackhole_spine
lab stats --reset
lab fault p1-s1 blackhole
got=$(send_plane 1 2000 7004)
s1=$(link_field p1-s1 dropped)
state=$(ip -n "$LAB-p1-s1" -br link show dev l1 | awk '{print $2}')
echo "    blackhole s1: received $got of 2000, p1-s1 dropped $s1, link $state" >&2
check "spine 1's share lost" between "$got" 700 1300
# The kernel may add a stray control packet or two to the count.
check "everything into spine 1 dropped" between "$((got + s1))" 2000 2004
check "nothing forwarded by spine 1" eq "$(spine_packets 1 1)" 0
check "link stays up" eq "$state" UP
check "only that link drops" other_links_clean p1-s1
check "plane 2 unaffected" eq "$(send_plane 2 1000 7005)" 1000
lab fault p1-s1 clear
check "clear restores" eq "$(send_plane 1 1000 7006)" 1000
end

begin lab.fault_down_up_host_link
lab fault p1-h2 down
check "host sees its carrier go away" bash -c "ip -n $LAB-h2 link show dev p1 | grep -q NO-CARRIER"
check "plane 1 unreachable" bash -c "! ip netns exec $LAB-h1 ping -c1 -W1 -q $(lab addr h2 1) >/dev/null"
check "plane 2 still reachable" in_host h1 ping -c1 -W2 -q "$(lab addr h2 2)" > /dev/null
lab fault p1-h2 up
check "plane 1 back (v4)" in_host h1 ping -c1 -W2 -q "$(lab addr h2 1)" > /dev/null
check "plane 1 back (v6)" in_host h1 ping -6 -c1 -W2 -q "$(lab addr h2 1 -6)" > /dev/null
end

begin lab.fault_down_spine_reroutes
lab fault p1-s1 down
lab stats --reset
got=$(send_plane 1 1000 7007)
echo "    spine 1 down: received $got of 1000, spine1 $(spine_packets 1 1) spine2 $(spine_packets 1 2)" >&2
check "ECMP skips the dead spine: nothing lost" eq "$got" 1000
check "dead spine carries nothing" eq "$(spine_packets 1 1)" 0
lab fault p1-s1 up
lab stats --reset
check "all back after up" eq "$(send_plane 1 1000 7008)" 1000
check "spine 1 used again" between "$(spine_packets 1 1)" 300 700
end

begin lab.fault_whole_plane
lab fault p2 blackhole
check "plane 2 dark" eq "$(send_plane 2 500 7009 1500)" 0
check "plane 1 fine" eq "$(send_plane 1 500 7010)" 500
lab fault p2 clear
check "plane 2 back" eq "$(send_plane 2 500 7011)" 500
end
