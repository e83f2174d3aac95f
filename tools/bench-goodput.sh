#!/usr/bin/env bash
# Goodput of the MRC transport next to TCP on the same lab path, measured
# side by side in one run, at MTU 1500 and 9000, plus what the XDP program
# costs per packet in real traffic (kernel BPF stats).
#
#   tools/bench-goodput.sh [--mtus 1500,9000] [--bytes 1g] [--size 1m] [--seconds 5] [--json]
#
# For each MTU: a 2-host, 1-plane, 2-spine lab, mrcd on both hosts, then
#   - mrc-perf client h1 -> h2 (--size, --bytes, --verify)
#   - iperf3 TCP h1 -> h2 for --seconds (one stream)
# alternating twice and keeping each tool's best run, so neither benefits
# from going second. The XDP cost is run_time_ns / run_cnt of h1's and h2's
# mrc_xdp_rx during the MRC runs: h1 sees SACKs, h2 sees DATA.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
MRC_LAB="$ROOT/tools/mrc-lab"
PERF="$ROOT/build/mrc-perf"
MTUS=1500,9000 BYTES=1g SIZE=1m SECONDS_TCP=5 JSON=0

usage() { sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-0}"; }
while [ $# -gt 0 ]; do
	case $1 in
	--mtus) MTUS=$2; shift 2 ;;
	--bytes) BYTES=$2; shift 2 ;;
	--size) SIZE=$2; shift 2 ;;
	--seconds) SECONDS_TCP=$2; shift 2 ;;
	--json) JSON=1; shift ;;
	-h|--help) usage 0 ;;
	*) echo "bench-goodput: unknown option '$1'" >&2; usage 2 >&2 ;;
	esac
done
for t in iperf3 jq bpftool; do
	command -v "$t" > /dev/null || { echo "bench-goodput: needs $t (make deps)" >&2; exit 1; }
done
[ -x "$PERF" ] || { echo "bench-goodput: build first (make)" >&2; exit 1; }

LAB="" SERVER_PID="" IPERF_PID="" STATS_WAS=""
cleanup() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
	[ -n "$IPERF_PID" ] && kill "$IPERF_PID" 2>/dev/null
	[ -n "$LAB" ] && "$MRC_LAB" down --name "$LAB" 2>/dev/null
	[ -n "$STATS_WAS" ] && sysctl -q kernel.bpf_stats_enabled="$STATS_WAS"
	return 0
}
trap cleanup EXIT
STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)

lab() { "$MRC_LAB" "$1" --name "$LAB" "${@:2}"; }

# XDP program id attached to a host's plane 1 device.
xdp_prog_id() {
	ip -n "$LAB-$1" -j link show dev p1 | jq -r '.[0].xdp.prog.id // .[0].xdp.attached[0].prog.id // empty'
}
prog_stats() { bpftool -j prog show id "$1" | jq -r '"\(.run_time_ns // 0) \(.run_cnt // 0)"'; }

mrc_run() {
	lab exec h1 "$PERF" client "$H2" --size "$SIZE" --bytes "$BYTES" --verify --json 2> /dev/null
}
tcp_run() {
	ip netns exec "$LAB-h1" iperf3 -c "$H2" -t "$SECONDS_TCP" -J |
		jq '.end.sum_received.bits_per_second / 1e9'
}

results=()
IFS=, read -ra mtu_list <<< "$MTUS"
for mtu in "${mtu_list[@]}"; do
	LAB=bg$$
	LAB=${LAB:0:12}
	"$MRC_LAB" up --name "$LAB" --hosts 2 --planes 1 --spines 2 --mtu "$mtu" > /dev/null
	lab agent start > /dev/null
	H2=$(lab addr h2 1)
	lab exec h2 "$PERF" server > /dev/null 2>&1 &
	SERVER_PID=$!
	ip netns exec "$LAB-h2" iperf3 -s > /dev/null 2>&1 &
	IPERF_PID=$!
	sleep 0.5
	id1=$(xdp_prog_id h1) id2=$(xdp_prog_id h2)

	best_mrc=0 best_tcp=0 verified=true
	sysctl -q kernel.bpf_stats_enabled=1
	read -r t1a c1a <<< "$(prog_stats "$id1")"
	read -r t2a c2a <<< "$(prog_stats "$id2")"
	for round in 1 2; do
		out=$(mrc_run) || { echo "bench-goodput: mrc-perf failed at MTU $mtu" >&2; exit 1; }
		[ "$(jq -r .verified <<< "$out")" = true ] || verified=false
		best_mrc=$(jq -n "[$best_mrc, $(jq .gbps <<< "$out")] | max")
		sysctl -q kernel.bpf_stats_enabled=0
		best_tcp=$(jq -n "[$best_tcp, $(tcp_run)] | max")
		sysctl -q kernel.bpf_stats_enabled=1
	done
	read -r t1b c1b <<< "$(prog_stats "$id1")"
	read -r t2b c2b <<< "$(prog_stats "$id2")"
	sysctl -q kernel.bpf_stats_enabled="$STATS_WAS"
	ns_ack=$(jq -n "if $c1b > $c1a then ($t1b - $t1a) / ($c1b - $c1a) else null end")
	ns_data=$(jq -n "if $c2b > $c2a then ($t2b - $t2a) / ($c2b - $c2a) else null end")

	results+=("$(jq -nc --argjson mtu "$mtu" --argjson mrc "$best_mrc" --argjson tcp "$best_tcp" \
		--argjson v "$verified" --argjson nsa "$ns_ack" --argjson nsd "$ns_data" \
		'{mtu: $mtu, mrc_gbps: $mrc, tcp_gbps: $tcp, ratio: ($mrc / $tcp), verified: $v,
		  xdp_ns_per_ack_side_packet: $nsa, xdp_ns_per_data_side_packet: $nsd}')")

	kill "$SERVER_PID" "$IPERF_PID" 2>/dev/null || true
	wait "$SERVER_PID" "$IPERF_PID" 2>/dev/null || true
	SERVER_PID="" IPERF_PID=""
	lab agent stop > /dev/null
	"$MRC_LAB" down --name "$LAB"
	LAB=""
done

if [ "$JSON" = 1 ]; then
	printf '%s\n' "${results[@]}" | jq -s '{size: "'"$SIZE"'", bytes: "'"$BYTES"'", results: .}'
	exit 0
fi
echo "MRC (mrc-perf, $SIZE WRITEs, $BYTES, verified) vs TCP (iperf3, 1 stream), same lab path, best of 2 each"
printf '%-6s %12s %12s %8s %10s %16s %16s\n' MTU "MRC Gb/s" "TCP Gb/s" "MRC/TCP" verified "XDP ns/pkt h1" "XDP ns/pkt h2"
for r in "${results[@]}"; do
	jq -r '[.mtu, (.mrc_gbps*100|round/100), (.tcp_gbps*100|round/100), (.ratio*100|round/100),
		.verified, ((.xdp_ns_per_ack_side_packet // 0)|round), ((.xdp_ns_per_data_side_packet // 0)|round)]
		| @tsv' <<< "$r" | awk -F'\t' '{printf "%-6s %12s %12s %8s %10s %16s %16s\n", $1, $2, $3, $4, $5, $6, $7}'
done
echo "(h1 receives SACKs, h2 receives DATA: their XDP cost per packet in real traffic)"
