#!/usr/bin/env bash
# mrcd, the host agent: `mrc-lab agent start` loads and attaches the fast
# path on every host (pins in the host's own bpffs, XDP + TC on each plane),
# `stop` removes all of it; bad arguments, a second agent, a failed start
# and a crashed agent (adopted by the next one) are handled; the object
# also loads the standard ways
# (iproute2, xdp-loader). Needs build/mrcd, build/mrc-labctl and
# build/mrc-lab-traffic.
. "$(dirname "$0")/lib.sh"

MRCD="$ROOT/build/mrcd"
OBJ="$ROOT/build/bpf/mrc.bpf.o"
PINS=/sys/fs/bpf/mrc
STATE=${MRC_LAB_STATE:-/run/mrc-lab}

LAB_PREFIX=agt lab_up --hosts 2 --planes 2 --spines 1
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT

# Run in a lab host with that host's bpffs on /sys/fs/bpf.
hx() { local h=$1; shift; lab exec "$h" -- "$@"; }

# Every map of the object (from its skeleton) and the two programs.
expected_pins() {
	{
		sed -n '/^\tstruct {$/,/} maps;/s/^\t\tstruct bpf_map \*\(mrc_[a-z0-9_]*\);$/\1/p' \
			"$ROOT/build/skel/mrc.skel.h"
		printf '%s\n' prog_xdp prog_tc
	} | LC_ALL=C sort | tr '\n' ' '
}
pins_of() { hx "$1" sh -c "ls $2 2>/dev/null" | LC_ALL=C sort | tr '\n' ' '; }
no_pins() {
	local left
	left=$(hx "$1" sh -c "ls -d ${2:-$PINS} 2>/dev/null")
	[ -z "$left" ] || { echo "    left behind: $left $(pins_of "$1" "${2:-$PINS}")" >&2; return 1; }
}

# XDP programs on a device: how many, and the name of the first.
xdp_count() { in_host "$1" bpftool -j net show dev "$2" | jq '.[0].xdp | length'; }
xdp_name() {
	local id
	id=$(in_host "$1" bpftool -j net show dev "$2" | jq '.[0].xdp[0].id // empty')
	[ -n "$id" ] && bpftool -j prog show id "$id" | jq -r .name
}
xdp_mode() { in_host "$1" bpftool -j net show dev "$2" | jq -r '.[0].xdp[0].mode // "none"'; }
# Our TC filters (handle 0x4d43) on a device's egress.
tc_count() { in_host "$1" tc filter show dev "$2" egress | grep -c 'handle 0x4d43 mrc_tc_tx'; }

map_dump() { hx "$1" bpftool -j map dump pinned "${3:-$PINS}/$2"; }
map_id() { hx "$1" bpftool -j map show pinned "${3:-$PINS}/$2" | jq .id; }
unknown_qp_drops() { map_dump "$1" mrc_drops | jq '[.[0].formatted.values[].value.unknown_qp] | add'; }
plane_names() { map_dump "$1" mrc_planes | jq -r '[.[].formatted.value | select(.ifindex != 0) | .name] | join(",")'; }
plane_ifindexes() { map_dump "$1" mrc_planes | jq -r '[.[].formatted.value | select(.ifindex != 0) | .ifindex] | join(",")'; }
real_ifindexes() {
	local p out=()
	for p in p1 p2; do out+=("$(in_host "$1" ip -j link show dev "$p" | jq '.[0].ifindex')"); done
	(IFS=,; echo "${out[*]}")
}
cfg_port() { map_dump "$1" mrc_cfg "${2:-$PINS}" | jq '.[0].formatted.value.udp_port'; }

# An MRC probe (bare BTH, opcode 0xDE) for QP 5, which nobody owns: the
# receiver's XDP program must drop it as unknown_qp.
send_probe() {
	in_host "$1" bash -c "printf '\xde\x00\xff\xff\x00\x00\x00\x05\x00\x00\x00\x01' > /dev/udp/$2/${3:-4791}"
}
# Counters are per-CPU and the drop happens in softirq: give it a moment.
wait_drops() {
	local h=$1 want=$2 i got
	for ((i = 0; i < 20; i++)); do
		got=$(unknown_qp_drops "$h")
		[ "$got" = "$want" ] && return 0
		sleep 0.1
	done
	echo "    unknown_qp drops on $h: expected $want, got $got" >&2
	return 1
}

alive() {
	local st
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "${st%% *}" != Z ]
}
wait_gone() {
	local i
	for ((i = 0; i < 100; i++)); do alive "$1" || return 0; sleep 0.1; done
	echo "    process $1 still running" >&2
	return 1
}
# Start mrcd in a host in the background; wait for its ready line.
start_bg() {
	local h=$1 log=$2 i
	shift 2
	# A simple command, so $! is mrcd itself (mrc-lab exec execs it).
	"$LAB_CMD" exec --name "$LAB" "$h" -- "$MRCD" "$@" > "$log" 2>&1 &
	BG_PIDS+=($!)
	BG=$!
	for ((i = 0; i < 100; i++)); do
		grep -q '^mrcd: ready' "$log" && return 0
		alive "$BG" || break
		sleep 0.1
	done
	echo "    mrcd in $h did not start:" >&2
	sed 's/^/      /' "$log" >&2
	return 1
}

# --------------------------------------------------------------------------
begin mrcd.agent_start
check "agent start succeeds" lab agent start
check "h1 says ready" grep -q "^mrcd: ready: planes p1,p2 port 4791 pins $PINS; maps for 4096 QPs and 256 contexts: [0-9.]* MiB (planned [0-9.]* MiB)\$" \
	"$STATE/$LAB/mrcd-h1.log"
check "h1 has every pin" eq "$(pins_of h1 $PINS)" "$(expected_pins)"
check "h2 has every pin" eq "$(pins_of h2 $PINS)" "$(expected_pins)"
check "each host has its own maps" test "$(map_id h1 mrc_cfg)" != "$(map_id h2 mrc_cfg)"
check "root bpffs untouched" test ! -e $PINS/mrc_cfg
check "plane table names" eq "$(plane_names h1)" "p1,p2"
check "plane table ifindexes" eq "$(plane_ifindexes h1)" "$(real_ifindexes h1)"
check "udp port configured" eq "$(cfg_port h1)" 4791
check "mrc_drops has named fields" bash -c \
	"'$LAB_CMD' exec --name $LAB h1 -- bpftool map dump pinned $PINS/mrc_drops | grep -q '\"unknown_qp\": 0'"
for h in h1 h2; do
	for p in p1 p2; do
		check "$h/$p has XDP mrc_xdp_rx" eq "$(xdp_name "$h" "$p")" mrc_xdp_rx
		check "$h/$p has one XDP program" eq "$(xdp_count "$h" "$p")" 1
		check "$h/$p has our TC egress filter" eq "$(tc_count "$h" "$p")" 1
	done
done
check "xdp-loader sees it" bash -c "'$LAB_CMD' exec --name $LAB h1 -- xdp-loader status p1 | grep -q mrc_xdp_rx"
# The attached programs use the pinned maps: a probe to h1 on each plane
# is dropped and counted in h1's pinned mrc_drops.
check "fresh drop counters" eq "$(unknown_qp_drops h1)" 0
send_probe h2 "$(lab addr h1 1)"
send_probe h2 "$(lab addr h1 2)"
check "XDP on both planes counts into the pinned map" wait_drops h1 2
check "h2's counters are separate" eq "$(unknown_qp_drops h2)" 0
end

# --------------------------------------------------------------------------
begin mrcd.second_instance_refused
hx h1 "$MRCD" --planes p1,p2 > "$tmp/second.out" 2>&1
rc=$?
check "second mrcd fails" eq "$rc" 1
check "says why" grep -q "mrcd is already running" "$tmp/second.out"
check "first one's pins intact" eq "$(pins_of h1 $PINS)" "$(expected_pins)"
check "first one's XDP intact" eq "$(xdp_name h1 p1)" mrc_xdp_rx
check "first one's TC intact" eq "$(tc_count h1 p1)" 1
send_probe h2 "$(lab addr h1 1)"
check "first one still counts" wait_drops h1 3
end

# --------------------------------------------------------------------------
begin mrcd.agent_stop
check "agent stop succeeds" lab agent stop
for h in h1 h2; do
	for p in p1 p2; do
		check "$h/$p: no XDP program" eq "$(xdp_count "$h" "$p")" 0
		check "$h/$p: no TC filter" eq "$(tc_count "$h" "$p")" 0
	done
	check "$h: no pins" no_pins "$h"
done
# Without -v, mrcd says only that it is ready; anything else is an error.
check "h1 logged no errors" eq "$(grep -vc '^mrcd: ready' "$STATE/$LAB/mrcd-h1.log")" 0
check "h2 logged no errors" eq "$(grep -vc '^mrcd: ready' "$STATE/$LAB/mrcd-h2.log")" 0
check "stop is idempotent" lab agent stop
end

# --------------------------------------------------------------------------
begin mrcd.bad_arguments
"$MRCD" --planes nosuchif > "$tmp/e1" 2>&1
check "unknown interface: exit 2" eq "$?" 2
check "unknown interface named" grep -q "nosuchif" "$tmp/e1"
"$MRCD" > "$tmp/e2" 2>&1
check "no --planes: exit 2" eq "$?" 2
check "no --planes: says so" grep -q -- "--planes" "$tmp/e2"
hx h1 "$MRCD" --planes p1,p2,p1 > "$tmp/e3" 2>&1
check "duplicate plane: exit 2" eq "$?" 2
check "duplicate plane named" grep -q "'p1' is listed twice" "$tmp/e3"
hx h1 "$MRCD" --planes p1 --xdp-mode turbo > "$tmp/e4" 2>&1
check "bad --xdp-mode: exit 2" eq "$?" 2
hx h1 "$MRCD" --planes p1 --port 70000 > "$tmp/e5" 2>&1
check "bad --port: exit 2" eq "$?" 2
mkdir -p "$tmp/notbpf"
hx h1 "$MRCD" --planes p1 --pin-dir "$tmp/notbpf/mrc" > "$tmp/e6" 2>&1
check "pin dir not on bpffs: exit 1" eq "$?" 1
check "pin dir not on bpffs: says how to mount" grep -q "mount -t bpf bpf /sys/fs/bpf" "$tmp/e6"
check "nothing attached by the failures" eq "$(xdp_count h1 p1)" 0
check "no pins from the failures" no_pins h1
end

# --------------------------------------------------------------------------
# A throwaway veth pair in h1 with a normal MTU, where native XDP works.
in_host h1 ip link add tv0 mtu 1500 type veth peer name tv1 mtu 1500
in_host h1 ip link set tv0 up
in_host h1 ip link set tv1 up

begin mrcd.failed_start_rolls_back
# tv0 takes native XDP, p1 (veth, jumbo MTU) cannot: the start must fail
# and leave tv0 as it was.
hx h1 "$MRCD" --planes tv0,p1 --xdp-mode native > "$tmp/rb" 2>&1
check "start fails: exit 1" eq "$?" 1
check "names the failing plane" grep -q "p1: cannot attach the XDP program" "$tmp/rb"
check "tv0: XDP rolled back" eq "$(xdp_count h1 tv0)" 0
check "tv0: TC rolled back" eq "$(tc_count h1 tv0)" 0
check "p1: nothing attached" eq "$(xdp_count h1 p1)" 0
check "pins rolled back" no_pins h1
end

begin mrcd.daemon_options
hx h1 timeout 20 "$MRCD" --daemon --planes tv0 --xdp-mode native --port 5000 \
	--pin-dir /sys/fs/bpf/mrcn --pidfile "$tmp/mrcd.pid" -v > "$tmp/daemon.out" 2>&1
check "--daemon returns 0 once ready" eq "$?" 0
check "ready line before detaching" grep -q "^mrcd: ready: planes tv0 port 5000 pins /sys/fs/bpf/mrcn; maps for " \
	"$tmp/daemon.out"
check "-v names the mode" grep -q "tv0: XDP attached in native mode" "$tmp/daemon.out"
pid=$(cat "$tmp/mrcd.pid" 2>/dev/null)
check "pidfile written" test -n "$pid"
check "daemon runs" alive "${pid:-0}"
check "native XDP on tv0" eq "$(xdp_mode h1 tv0)" driver
check "TC on tv0" eq "$(tc_count h1 tv0)" 1
check "pins in --pin-dir" eq "$(pins_of h1 /sys/fs/bpf/mrcn)" "$(expected_pins)"
check "--port configured" eq "$(cfg_port h1 /sys/fs/bpf/mrcn)" 5000
[ -n "$pid" ] && kill -TERM "$pid"
check "SIGTERM stops it" wait_gone "${pid:-0}"
check "pidfile removed" test ! -e "$tmp/mrcd.pid"
check "tv0: XDP detached" eq "$(xdp_count h1 tv0)" 0
check "tv0: TC detached" eq "$(tc_count h1 tv0)" 0
check "pins removed" no_pins h1 /sys/fs/bpf/mrcn
end

# --------------------------------------------------------------------------
begin mrcd.restart_after_crash
# A crashed agent's maps carry live QPs: the next agent adopts them (the
# same maps, their contents intact) and swaps its programs in.
check "first agent starts" start_bg h1 "$tmp/crash1.log" --planes p1,p2
first=$BG
old_cfg=$(map_id h1 mrc_cfg)
send_probe h2 "$(lab addr h1 1)"
check "first agent counts" wait_drops h1 1
{ kill -KILL "$first"; wait "$first"; } 2>/dev/null
check "first agent dead" wait_gone "$first"
check "crash leaves its pins" eq "$(pins_of h1 $PINS)" "$(expected_pins)"
check "crash leaves XDP attached" eq "$(xdp_name h1 p1)" mrc_xdp_rx
check "second agent starts" start_bg h1 "$tmp/crash2.log" --planes p1,p2
second=$BG
check "says it adopts" grep -q "adopting the fast path left in $PINS" "$tmp/crash2.log"
check "same maps" eq "$(map_id h1 mrc_cfg)" "$old_cfg"
check "what was written is still there" eq "$(unknown_qp_drops h1)" 1
for p in p1 p2; do
	check "$p: exactly one XDP program" eq "$(xdp_count h1 "$p")" 1
	check "$p: it is mrc_xdp_rx" eq "$(xdp_name h1 "$p")" mrc_xdp_rx
	check "$p: exactly one of ours in xdp-loader" eq \
		"$(hx h1 xdp-loader status "$p" | grep -c mrc_xdp_rx)" 1
	check "$p: exactly one TC filter" eq "$(tc_count h1 "$p")" 1
done
send_probe h2 "$(lab addr h1 2)"
check "new agent counts into the same map" wait_drops h1 2
kill -TERM "$second"
check "second agent stops" wait_gone "$second"
check "clean after stop" eq "$(xdp_count h1 p1)$(tc_count h1 p1)" 00
check "no pins after stop" no_pins h1
end

# --------------------------------------------------------------------------
begin mrcd.standard_loaders
# iproute2 pins LIBBPF_PIN_BY_NAME maps under /sys/fs/bpf/xdp/globals: in
# the host's own bpffs, removed below.
check "ip link set xdp obj loads" hx h1 ip link set dev tv0 xdp obj "$OBJ" sec xdp
check "iproute2 attached mrc_xdp_rx" eq "$(xdp_name h1 tv0)" mrc_xdp_rx
check "maps pinned in the host's bpffs" test -e "$STATE/$LAB/bpffs/h1/xdp/globals/mrc_cfg"
prog_id=$(in_host h1 bpftool -j net show dev tv0 | jq '.[0].xdp[0].id // 0')
cfg_id=$(hx h1 bpftool -j map show pinned /sys/fs/bpf/xdp/globals/mrc_cfg | jq .id)
check "the program uses the pinned maps" bash -c \
	"bpftool -j prog show id $prog_id | jq -e --argjson id $cfg_id '.map_ids | any(. == \$id)' > /dev/null"
check "ip link set xdp off" hx h1 ip link set dev tv0 xdp off
check "iproute2 detached" eq "$(xdp_count h1 tv0)" 0
hx h1 rm -rf /sys/fs/bpf/xdp/globals /sys/fs/bpf/tc /sys/fs/bpf/ip

check "xdp-loader load -m skb" hx h1 xdp-loader load -m skb tv0 "$OBJ"
check "xdp-loader status shows it" bash -c \
	"'$LAB_CMD' exec --name $LAB h1 -- xdp-loader status tv0 | grep -q 'mrc_xdp_rx *skb'"
check "attached in skb mode" eq "$(xdp_mode h1 tv0)" generic
check "xdp-loader unload" hx h1 xdp-loader unload --all tv0
check "xdp-loader detached" eq "$(xdp_count h1 tv0)" 0
check "nothing pinned at the top" eq "$(hx h1 sh -c 'ls /sys/fs/bpf | grep -c ^mrc_')" 0
end

# --------------------------------------------------------------------------
begin mrcd.plane_vanishes
check "agent on tv0 and p1 starts" start_bg h1 "$tmp/vanish.log" --planes tv0,p1
pid=$BG
check "tv0 attached" eq "$(tc_count h1 tv0)" 1
in_host h1 ip link del tv0
kill -TERM "$pid"
wait "$pid"
check "clean exit" eq "$?" 0
check "says tv0 is gone" grep -q "tv0 is gone" "$tmp/vanish.log"
check "p1: XDP detached" eq "$(xdp_count h1 p1)" 0
check "p1: TC detached" eq "$(tc_count h1 p1)" 0
check "pins removed" no_pins h1
end

in_host h1 ip link del tv0 2>/dev/null || true
