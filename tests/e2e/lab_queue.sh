#!/usr/bin/env bash
# The emulated switch queue of a rate-limited link: ECN marks and trims only
# above their thresholds (a paced flow below the link rate sees none, a
# burst sees them), CE marks only in the core (never on the last hop),
# trims keep exactly the MRC headers with valid checksums and the right
# DSCP (last hop vs mid-path), and the queue tail-drops.
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=que lab_up --hosts 2 --planes 1 --spines 2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
DST=$(lab addr h2 1)
MRC_PORT=4791
n=0

# flow OUT COUNT PORT [send options]: send h1 -> h2, receiver JSON to OUT.
flow() {
	local out=$1 count=$2 port=$3
	shift 3
	start_recv h2 "$port" "$out" --timeout-ms 15000 --idle-ms 800 || return 1
	in_host h1 "$TRAFFIC" send --dst "$DST" --port "$port" --count "$count" \
		--sport-range 20000:20999 "$@" > /dev/null
	wait_recv
}

begin lab.rate_installs_real_queue
lab fault p1-h2 rate 50mbit
check "HTB on the leaf's host port" bash -c "tc -n $LAB-p1-l2 qdisc show dev h | grep -q htb"
check "HTB on the host NIC" bash -c "tc -n $LAB-h2 qdisc show dev p1 | grep -q htb"
lab stats --reset
flow "$tmp/burst.json" 3000 7100 --size 1400
qdrops=$(link_field p1-h2 drop_queue)
got=$(json "$tmp/burst.json" .received)
echo "    burst of 4.2 MB into 50 Mbit/s: received $got, queue drops $qdrops" >&2
check "a burst overflows the 512k queue" between "$qdrops" 1 3000
check "every packet received or counted" eq "$((got + qdrops))" 3000
end

begin lab.ecn_only_above_threshold
# CE marks come from the core: plane 1's spines are the bottleneck here.
lab fault p1-h2 clear
for s in 1 2; do
	lab fault "p1-s$s" rate 50mbit
	lab fault "p1-s$s" ecn 20k
done
spine_marks() {
	echo $(( $(link_field p1-s1 ecn_marked) + $(link_field p1-s2 ecn_marked) ))
}
lab stats --reset
flow "$tmp/paced.json" 300 7101 --size 1000 --tos 2 --pps 1000
check "paced ECT flow: no CE" eq "$(json "$tmp/paced.json" .ce)" 0
check "paced flow all received" eq "$(json "$tmp/paced.json" .received)" 300
check "no marks counted" eq "$(spine_marks)" 0
flow "$tmp/ect.json" 1000 7102 --size 1000 --tos 2
ce=$(json "$tmp/ect.json" .ce) marked=$(spine_marks)
echo "    ECT burst: ce $ce, spine links marked $marked" >&2
check "burst gets CE" between "$ce" 1 1000
check "receiver saw every mark" eq "$ce" "$marked"
lab stats --reset
flow "$tmp/noect.json" 1000 7103 --size 1000 --tos 0
check "non-ECT packets are never marked" eq "$(spine_marks)" 0
check "non-ECT burst: no CE" eq "$(json "$tmp/noect.json" .ce)" 0
for s in 1 2; do lab fault "p1-s$s" clear; done
end

begin lab.ecn_never_on_last_hop
# The last hop (leaf to host) trims and drops but never marks: its
# congestion is an incast no other path avoids.
lab fault p1-h2 rate 50mbit
lab fault p1-h2 ecn 20k
lab stats --reset
flow "$tmp/lh.json" 2000 7105 --size 1000 --tos 2
dropped=$(link_field p1-h2 dropped)
echo "    ECT burst into the last hop: dropped $dropped (queue over 512k)," \
	"marked $(link_field p1-h2 ecn_marked), ce $(json "$tmp/lh.json" .ce)" >&2
check "the burst filled the last hop's queue far past the threshold" between "$dropped" 1 2000
check "the last hop marked nothing" eq "$(link_field p1-h2 ecn_marked)" 0
check "no CE received" eq "$(json "$tmp/lh.json" .ce)" 0
end

begin lab.queue_model_follows_real_queue
# The model drains at the nominal rate; when the real queue (HTB) drains
# slower (here: its rate cut behind the model's back to 2 Mbit/s, as when
# the lab's CPUs are late), marks follow the real backlog. The same paced
# flow as above, 4 Mbit/s per spine, far below the model's 50 Mbit/s.
for s in 1 2; do
	lab fault "p1-s$s" rate 50mbit
	lab fault "p1-s$s" ecn 20k
	# The data class has its own assured rate: slow it, not just its parent.
	tc -n "$LAB-p1-s$s" class change dev l2 parent 1:1 classid 1:20 htb \
		rate 2mbit ceil 2mbit burst 32k cburst 32k
done
lab stats --reset
flow "$tmp/slow.json" 300 7106 --size 1000 --tos 2 --pps 1000
ce=$(json "$tmp/slow.json" .ce) marked=$(spine_marks)
echo "    paced ECT flow into a real queue 25 x slower than the model: ce $ce," \
	"marked $marked, received $(json "$tmp/slow.json" .received)" >&2
check "the real queue's backlog marks" between "$ce" 1 300
check "receiver saw every mark" eq "$ce" "$marked"
check "every packet received" eq "$(json "$tmp/slow.json" .received)" 300
check "payloads intact" eq "$(json "$tmp/slow.json" .pattern_errors)" 0
for s in 1 2; do lab fault "p1-s$s" clear; done
end

begin lab.trim_lasthop_only_above_threshold
lab fault p1-h2 clear
lab fault p1-h2 rate 50mbit
lab fault p1-h2 trim 20k
lab stats --reset
flow "$tmp/tpaced.json" 300 $MRC_PORT --size 1000 --mrc-data --pps 1000
check "paced MRC flow: no trims" eq "$(link_field p1-h2 trimmed)" 0
check "paced MRC flow: full size" eq "$(json "$tmp/tpaced.json" .min_size)" 1000
flow "$tmp/tburst.json" 2000 $MRC_PORT --size 1000 --mrc-data
trimmed=$(link_field p1-h2 trimmed)
lasthop=$(json "$tmp/tburst.json" '.dscp["45"] // 0')
echo "    MRC burst: trimmed $trimmed, received with last-hop DSCP $lasthop" >&2
check "burst is trimmed" between "$trimmed" 1 2000
check "trimmed headers arrive with valid checksums and DSCP 45" eq "$lasthop" "$trimmed"
check "a trimmed packet is exactly the MRC headers (32 B)" eq "$(json "$tmp/tburst.json" .min_size)" 32
check "nothing lost: trimming replaces dropping" eq "$(json "$tmp/tburst.json" .received)" 2000
check "payloads intact" eq "$(json "$tmp/tburst.json" .pattern_errors)" 0
lab stats --reset
flow "$tmp/notmrc.json" 2000 7104 --size 1000
check "non-MRC traffic is never trimmed" eq "$(link_field p1-h2 trimmed)" 0
lab fault p1-h2 clear
end

begin lab.trim_midpath_marks_dscp44
for s in 1 2; do
	lab fault "p1-s$s" rate 50mbit
	lab fault "p1-s$s" trim 20k
done
lab stats --reset
flow "$tmp/mid.json" 2000 $MRC_PORT --size 1000 --mrc-data
trimmed=$(( $(link_field p1-s1 trimmed) + $(link_field p1-s2 trimmed) ))
mid=$(json "$tmp/mid.json" '.dscp["44"] // 0')
echo "    mid-path: trimmed $trimmed, received with DSCP 44: $mid" >&2
check "core links trim" between "$trimmed" 1 2000
check "mid-path trims carry DSCP 44" eq "$mid" "$trimmed"
check "no last-hop trims" eq "$(json "$tmp/mid.json" '.dscp["45"] // 0')" 0
for s in 1 2; do lab fault "p1-s$s" clear; done
check "clear removes the queue" bash -c "! tc -n $LAB-p1-s1 qdisc show dev l1 | grep -q htb"
end
