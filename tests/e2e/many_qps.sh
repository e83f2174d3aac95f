#!/usr/bin/env bash
# Many QPs in one process: libmrc's progress engine above 16 QPs visits the
# QPs on its lists (ready, a window's waiters, a slice of those with packets
# out, a sweep of all) instead of every QP each round. One mrc-perf client
# on h1 drives hundreds of QPs into one server on h2:
# - shared_window: 512 QPs share one NSCC window; every region verified, no
#   QP in error, and (almost) no retransmission timeout: a QP the window
#   holds back in the middle of a WRITE asks for an ack of its last packet,
#   so its packets are acked while it waits its turn (without that, 4,096
#   QPs took a timeout for one packet in seven);
# - loss_recovered: 64 QPs without a window over a plane whose spine drops
#   5% of packets: the timers and resends of the QPs off the ready list
#   recover every loss (verified, no QP in error, the loss was felt), and
#   the SACKs a duplicate makes owed leave at XDP's SACK_DUE event (resends
#   stay under 10% of packets; found by a sweep instead, they were half);
# - idle_many: 1,024 QPs up and idle cost the client < 20% of a CPU.
# Needs build/mrcd, build/mrc-perf.
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=mq lab_up --hosts 2 --planes 4 --spines 2
tmp=$(mktemp -d)
cleanup() { lab_cleanup; rm -rf "$tmp"; }
trap cleanup EXIT
mrc_up "$tmp"
for h in h1 h2; do
	lab exec "$h" "$MRCCTL" profile cc create 1 --algo nscc > /dev/null &&
		lab exec "$h" "$MRCCTL" profile cc offline 1 > /dev/null &&
		lab exec "$h" "$MRCCTL" profile cc online 1 > /dev/null ||
		echo "    cc profile 1 not online on $h" >&2
done

# many QPS ITERS ARGS...: QPS QPs of 16 KiB WRITEs, ITERS each, verified.
many() {
	local qps=$1 iters=$2
	shift 2
	client --qps "$qps" --size 16384 --iters "$iters" --verify "$@"
}

begin many_qps.shared_window
check "512 QPs, one NSCC window: transfer verified" many 512 16 --cc-profile 1
check "verified" eq "$(cj .verified)" true
check "no QP in error" eq "$(cj .qps_in_error)" 0
pkts=$(cj .tx_packets) timeouts=$(cj .timeouts)
echo "    $pkts packets, $timeouts retransmission timeouts, $(cj .gbps) Gb/s" >&2
check "every packet sent at least once" between "$pkts" $((512 * 16 * 2)) 100000000
check "timeouts under 1% of packets" between "$((timeouts * 100))" 0 "$pkts"
end

begin many_qps.loss_recovered
lab fault p1-s1 drop 5 > /dev/null
check "64 QPs over a lossy spine: transfer verified" many 64 64
lab fault p1-s1 clear > /dev/null
check "verified" eq "$(cj .verified)" true
check "no QP in error" eq "$(cj .qps_in_error)" 0
resent=$(cj .tx_retransmits)
echo "    $(cj .tx_packets) packets, $resent resent ($(cj .timeouts) by timeout)" >&2
check "the loss was felt and recovered (resends)" between "$resent" 1 100000000
# A SACK owed for a duplicate is sent when XDP's SACK_DUE event arrives,
# not when a sweep happens upon the QP: without that, resends were half
# of all packets (each late SACK let a timer resend the whole window).
check "resends under 10% of packets" between "$((resent * 10))" 0 "$(cj .tx_packets)"
end

begin many_qps.idle_many
client --qps 1024 --size 4096 --iters 1 --verify --linger-s 3 &
cpid=$!
for ((i = 0; i < 300; i++)); do
	grep -q "linger for" "$tmp/c.err" 2>/dev/null && break
	sleep 0.1
done
pid=$(pgrep -n -f "mrc-perf client $H2 --json" || true)
if [ -n "$pid" ] && grep -q "linger for" "$tmp/c.err"; then
	t0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	sleep 2
	t1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2> /dev/null || echo "$t0")
	ticks=$(getconf CLK_TCK)
	pct=$(((t1 - t0) * 100 / (2 * ticks)))
	echo "    1,024 idle QPs: ${pct}% of a CPU over 2 s" >&2
	check "idle QPs cost < 20% of a CPU" between "$pct" 0 19
else
	check "the client reached its idle phase" false
fi
wait "$cpid"
check "idle run verified" eq "$(cj .verified)" true
end
