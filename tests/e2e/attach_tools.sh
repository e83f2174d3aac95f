#!/usr/bin/env bash
# MRC's programs attached with the standard tools, then adopted by mrcd:
# `mrcd --write-object` writes the object with its maps declared at mrcd's
# sizes; xdp-loader (pins in /sys/fs/bpf/mrc) or ip link ... xdpgeneric +
# tc filter (pins in iproute2's /sys/fs/bpf/tc/globals) attach it; mrcd
# started after that keeps those programs (same ids) and a transfer is
# verified. A second XDP program (bpf/port_drop.bpf.c, dropping a port)
# runs beside MRC's on the same interface through MRC's chain
# (mrc_xdp_next): its port is dropped, other UDP passes, an MRC transfer
# is verified. While mrcd runs, programs taken off a plane are noticed,
# shown by mrcctl status and doctor, and attached again - or, with
# --no-repair, only reported. Needs build/mrcd, build/mrcctl, mrc-perf,
# xdp-loader and tc.
. "$(dirname "$0")/lib.sh"

MRCD="$ROOT/build/mrcd"
TC_PREF=0x4d43		# mrcd's TC filter priority and handle (mrcd(8))

if ! command -v xdp-loader > /dev/null; then
	skip attach_tools.all "xdp-loader (xdp-tools) not installed"
	exit 0
fi

LAB_PREFIX=att lab_up --hosts 2 --planes 1 --spines 1 --mtu 1500
tmp=$(mktemp -d)
cleanup() {
	lab agent stop > /dev/null 2>&1
	lab_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT
OBJ=$tmp/mrc-sized.o
H2=$(lab addr h2 1)

hx() { local h=$1; shift; lab exec "$h" -- "$@"; }
log_of() { cat "$(lab_state)/mrcd-$1.log"; }
# log_has HOST PATTERN: mrcd's log on HOST has the line (shown if not).
log_has() {
	grep -q -- "$2" "$(lab_state)/mrcd-$1.log" && return 0
	sed "s/^/    $1: /" "$(lab_state)/mrcd-$1.log" >&2
	return 1
}
lab_state() { echo "${MRC_LAB_STATE:-/run/mrc-lab}/$LAB"; }
xdp_id() { in_host "$1" bpftool -j net show dev p1 | jq '.[0].xdp[0].id // 0'; }
# The program id of the TC filter at mrcd's handle, 0 = none.
tc_id() {
	local id
	id=$(in_host "$1" tc filter show dev p1 egress |
		sed -n "s/.*handle $TC_PREF .* id \([0-9]*\) .*/\1/p")
	echo "${id:-0}"
}
status_json() { hx "$1" "$MRCCTL" ${PIN_ARGS[@]+"${PIN_ARGS[@]}"} status --json; }
plane_field() { status_json "$1" | jq -r ".planes[0].$2"; }
# until_eq SECONDS WANT CMD...: CMD's output becomes WANT within SECONDS.
until_eq() {
	local t=$1 want=$2 got i
	shift 2
	for ((i = 0; i < t * 10; i++)); do
		got=$("$@")
		[ "$got" = "$want" ] && return 0
		sleep 0.1
	done
	echo "    expected '$want', got '$got' from: $*" >&2
	return 1
}

# One verified transfer h1 -> h2 through the programs now attached.
transfer_verified() {
	local rc
	hx h2 "$PERF" server --once --json ${PIN_ARGS[@]+"${PIN_ARGS[@]}"} \
		> "$tmp/server.json" 2> "$tmp/server.err" &
	BG_PIDS+=($!)
	sleep 0.5
	hx h1 "$PERF" client "$H2" --json --timeout-s 30 --size 1m --iters 64 \
		--verify ${PIN_ARGS[@]+"${PIN_ARGS[@]}"} > "$tmp/c.json" 2> "$tmp/c.err"
	rc=$?
	wait "${BG_PIDS[-1]}" 2>/dev/null
	[ $rc -eq 0 ] || { sed 's/^/    client: /' "$tmp/c.err" >&2; return 1; }
	[ "$(jq -r .verified "$tmp/c.json")" = true ] ||
		{ echo "    not verified: $(cat "$tmp/c.json")" >&2; return 1; }
}

agents() { lab agent "$@" > /dev/null; }

# --------------------------------------------------------------------------
begin attach_tools.write_object
check "mrcd --write-object" "$MRCD" --write-object "$OBJ"
check "scaled map declared at mrcd's 4096 QPs" bash -c \
	"bpftool btf dump file '$OBJ' | grep -q 'nr_elems=4096'"
"$MRCD" --write-object "$tmp/x.o" --planes p1 > /dev/null 2>&1
check "--write-object with --planes is a usage error" eq "$?" 2
end

# --------------------------------------------------------------------------
begin attach_tools.xdp_loader_adopted
PIN_ARGS=()
for h in h1 h2; do
	hx "$h" mkdir -m 700 -p /sys/fs/bpf/mrc
	check "$h: xdp-loader load -m skb -p /sys/fs/bpf/mrc" \
		hx "$h" xdp-loader load -m skb -p /sys/fs/bpf/mrc p1 "$OBJ"
done
before=$(xdp_id h1)
check "xdp-loader attached mrc_xdp_rx" test "$before" -gt 0
check "mrcd starts" agents start
check "says it adopted the XDP program" log_has h1 "p1: adopted the XDP program attached before mrcd started"
check "the same program still runs" eq "$(xdp_id h1)" "$before"
check "status: xdp_attach adopted" eq "$(plane_field h1 xdp_attach)" adopted
check "status: xdp_prog_id is it" eq "$(plane_field h1 xdp_prog_id)" "$before"
check "transfer verified" transfer_verified
end

# --------------------------------------------------------------------------
begin attach_tools.unload_repaired
check "xdp-loader unload" hx h1 xdp-loader unload --all p1
check "noticed in the log" until_eq 5 1 bash -c \
	"grep -c 'p1: our XDP program was taken off the plane (it runs none now): attaching it again' '$(lab_state)/mrcd-h1.log'"
check "status: taken off once" until_eq 5 1 plane_field h1 xdp_taken_off
check "status: attached again" until_eq 5 false plane_field h1 xdp_missing
check "status: reattached counted" test "$(plane_field h1 reattached)" -ge 1
check "status text says so" bash -c "'$LAB_CMD' exec --name $LAB h1 -- '$MRCCTL' status | grep -q '^p1: taken off: XDP 1 times'"
check "a program runs again" test "$(xdp_id h1)" -gt 0
tc_before=$(tc_id h1)
check "tc filter del" in_host h1 tc filter del dev p1 egress pref $TC_PREF handle $TC_PREF bpf
check "TC noticed" until_eq 5 1 plane_field h1 tc_taken_off
check "TC back" until_eq 5 false plane_field h1 tc_missing
check "TC filter there again" test "$(tc_id h1)" -gt 0
check "transfer verified after the repairs" transfer_verified
check "agents stop" agents stop
check "stop leaves no XDP" eq "$(xdp_id h1)" 0
end

# --------------------------------------------------------------------------
begin attach_tools.ip_tc_adopted
# iproute2 pins LIBBPF_PIN_BY_NAME maps in /sys/fs/bpf/tc/globals, for
# XDP too as long as /sys/fs/bpf/xdp is its symlink to tc/ (libxdp makes
# a folder of that name: then XDP's maps would go to xdp/globals, apart
# from TC's). mrcd and its clients are pointed there.
PIN_ARGS=(--pin-dir /sys/fs/bpf/tc/globals)
for h in h1 h2; do
	hx "$h" sh -c '[ -L /sys/fs/bpf/xdp ] || rm -rf /sys/fs/bpf/xdp'
	check "$h: ip link set xdpgeneric obj" \
		hx "$h" ip link set dev p1 xdpgeneric obj "$OBJ" sec xdp
	in_host "$h" tc qdisc add dev p1 clsact 2> /dev/null
	check "$h: tc filter add egress bpf da obj" \
		hx "$h" tc filter add dev p1 egress pref $TC_PREF handle $TC_PREF bpf da obj "$OBJ" sec tc
done
xdp_before=$(xdp_id h1)
tc_before=$(tc_id h1)
check "ip attached XDP" test "$xdp_before" -gt 0
check "tc attached" test "$tc_before" -gt 0
check "mrcd starts on iproute2's pins" agents start -- "${PIN_ARGS[@]}"
check "says XDP adopted" log_has h1 "p1: adopted the XDP program"
check "says TC adopted" log_has h1 "p1: adopted the TC egress filter"
check "same XDP program" eq "$(xdp_id h1)" "$xdp_before"
check "same TC program" eq "$(tc_id h1)" "$tc_before"
check "status: tc_attach adopted" eq "$(plane_field h1 tc_attach)" adopted
check "transfer verified" transfer_verified
check "ip link set xdp off" in_host h1 ip link set dev p1 xdpgeneric off
check "repaired" until_eq 5 1 plane_field h1 reattached
check "transfer verified after the repair" transfer_verified
check "agents stop" agents stop
end

# --------------------------------------------------------------------------
begin attach_tools.no_repair
PIN_ARGS=()
check "mrcd --no-repair starts" agents start -- --no-repair
check "status: repair false" eq "$(status_json h1 | jq .repair)" false
check "xdp-loader unload" hx h1 xdp-loader unload --all p1
check "status: XDP missing" until_eq 5 true plane_field h1 xdp_missing
check "log says not repairing" until_eq 5 1 bash -c \
	"grep -c 'taken off the plane (it runs none now): not attaching it again (--no-repair)' '$(lab_state)/mrcd-h1.log'"
sleep 1.5
check "still not attached" eq "$(xdp_id h1)" 0
check "status: reattached 0" eq "$(plane_field h1 reattached)" 0
hx h1 "$MRCCTL" doctor > "$tmp/doctor" 2>&1
check "doctor fails the plane" grep -q '^FAIL  plane 1 p1: .*no XDP program' "$tmp/doctor"
check "doctor: XDP multi-program checked" grep -qE '^(ok|WARN) +XDP multi-program: ' "$tmp/doctor"
check "agents stop" agents stop
end

# --------------------------------------------------------------------------
begin attach_tools.foreign_program_kept
# Another program put in MRC's place: reported, never removed by mrcd;
# once it is gone, MRC's is attached again.
PIN_ARGS=()
check "mrcd starts (skb mode)" agents start -- --xdp-mode skb
# (iproute2 wants its own /sys/fs/bpf/xdp: see ip_tc_adopted)
hx h1 sh -c '[ -L /sys/fs/bpf/xdp ] || rm -rf /sys/fs/bpf/xdp'
check "ip -force replaces MRC's XDP program" hx h1 ip -force link set dev p1 \
	xdpgeneric obj "$ROOT/build/bpf/port_drop.bpf.o" sec xdp
foreign=$(xdp_id h1)
check "noticed" until_eq 5 true plane_field h1 xdp_missing
check "says it does not replace it" until_eq 5 1 bash -c \
	"grep -c 'it runs program $foreign (xdp_port_drop), not ours: not replacing it' '$(lab_state)/mrcd-h1.log'"
sleep 1.5
check "the other program stays" eq "$(xdp_id h1)" "$foreign"
hx h1 "$MRCCTL" doctor > "$tmp/doctor2" 2>&1
check "doctor: not MRC's" grep -q "^FAIL  plane 1 p1: .*XDP prog $foreign xdp_port_drop .*the XDP program is not MRC's" "$tmp/doctor2"
check "ip link set xdpgeneric off" in_host h1 ip link set dev p1 xdpgeneric off
check "MRC's attached again" until_eq 5 false plane_field h1 xdp_missing
check "it runs mrc_xdp_rx" eq "$(bpftool -j prog show id "$(xdp_id h1)" | jq -r .name)" mrc_xdp_rx
check "agents stop" agents stop
end

# --------------------------------------------------------------------------
begin attach_tools.coexistence
# libxdp's dispatcher cannot run on this kernel (doctor says why), so the
# second program goes into MRC's chain: MRC's XDP program hands it every
# packet that is not MRC's.
PIN_ARGS=()
PD=/sys/fs/bpf/port-drop
check "mrcd starts" agents start
check "xdp-loader cannot add a second program here" \
	bash -c "! '$LAB_CMD' exec --name $LAB h2 -- xdp-loader load -m skb p1 '$ROOT/build/bpf/port_drop.bpf.o' 2> /dev/null"
check "MRC's program still the only one" eq "$(in_host h2 bpftool -j net show dev p1 | jq '.[0].xdp | length')" 1
hx h2 mkdir -p "$PD"
check "port_drop loaded (bpftool)" hx h2 bpftool prog loadall "$ROOT/build/bpf/port_drop.bpf.o" \
	"$PD/progs" pinmaps "$PD"
# port 5001 in host order, little-endian: 0x89 0x13.
check "drop port 5001" hx h2 bpftool map update pinned "$PD/port_drop_ports" \
	key 0x89 0x13 value 0 0 0 0 0 0 0 0
check "chained after MRC" hx h2 bpftool map update pinned /sys/fs/bpf/mrc/mrc_xdp_next \
	key 0 0 0 0 value pinned "$PD/progs/xdp_port_drop"
start_recv h2 5001 "$tmp/r1.json" --expect 200 --timeout-ms 1500 --idle-ms 1500
in_host h1 "$TRAFFIC" send --dst "$H2" --port 5001 --count 200 --size 200 > /dev/null
check "port 5001: sent while the receiver listens" recv_listens_on 1500
wait_recv
check "port 5001: nothing received" eq "$(json "$tmp/r1.json" .received)" 0
# dropped LO HI: port_drop's count for the port (little-endian bytes).
dropped() {
	hx h2 bpftool -j map lookup pinned "$PD/port_drop_ports" key "$1" "$2" |
		jq '.formatted.value // .value | if type == "array" then -1 else . end'
}
check "port_drop dropped all 200" eq "$(dropped 0x89 0x13)" 200
start_recv h2 5002 "$tmp/r2.json" --expect 200 --timeout-ms 5000
in_host h1 "$TRAFFIC" send --dst "$H2" --port 5002 --count 200 --size 200 > /dev/null
wait_recv
check "port 5002: all received" eq "$(json "$tmp/r2.json" .received)" 200
# port_drop would drop MRC's port 4791 too: MRC's packets never reach it.
check "drop port 4791 as well" hx h2 bpftool map update pinned "$PD/port_drop_ports" \
	key 0xb7 0x12 value 0 0 0 0 0 0 0 0
check "MRC transfer verified beside it" transfer_verified
check "no MRC packet reached port_drop" eq "$(dropped 0xb7 0x12)" 0
hx h2 rm -rf "$PD"

# TC: a second egress filter after MRC's (clsact priority order) sees
# every packet that is not MRC's (MRC's gives no verdict on those).
in_host h1 tc filter add dev p1 egress pref 49152 handle 0x70 bpf da \
	obj "$ROOT/build/bpf/port_drop.bpf.o" sec tc
tc2=$(in_host h1 tc filter show dev p1 egress | sed -n 's/.*handle 0x70 .* id \([0-9]*\) .*/\1/p')
check "port_drop's TC filter after MRC's" test "${tc2:-0}" -gt 0
tc2_map=$(bpftool -j prog show id "${tc2:-0}" | jq '.map_ids[0] // 0')
check "its TC map drops port 5004" bpftool map update id "$tc2_map" key 0x8c 0x13 value 0 0 0 0 0 0 0 0
start_recv h2 5004 "$tmp/r5.json" --expect 100 --timeout-ms 1500 --idle-ms 1500
in_host h1 "$TRAFFIC" send --dst "$H2" --port 5004 --count 100 --size 200 > /dev/null
check "port 5004: sent while the receiver listens" recv_listens_on 1500
wait_recv
check "port 5004: dropped at h1's egress" eq "$(json "$tmp/r5.json" .received)" 0
check "port_drop's TC filter counted 100" eq "$(bpftool -j map lookup id "$tc2_map" key 0x8c 0x13 |
	jq '.formatted.value // .value')" 100
check "MRC transfer verified beside the TC filter" transfer_verified
in_host h1 tc filter del dev p1 egress pref 49152 handle 0x70 bpf
end

# --------------------------------------------------------------------------
begin attach_tools.coexistence_xdp_filter
# xdp-filter (xdp-tools) beside MRC: xdp-filter 1.3.1 only configures a
# filter it has loaded on an interface, so it is loaded on a spare veth and
# its program chained after MRC's on p1 by id (the chain holds it).
in_host h2 ip link add xf0 type veth peer name xf1
in_host h2 ip link set xf0 up
check "xdp-filter load on the spare veth" hx h2 xdp-filter load -m skb xf0
check "xdp-filter port 5003 dst udp" hx h2 xdp-filter port 5003 -m dst -p udp
xf_id=$(in_host h2 bpftool -j net show dev xf0 | jq '.[0].xdp[0].id // 0')
check "xdp-filter's program chained after MRC" hx h2 bpftool map update pinned \
	/sys/fs/bpf/mrc/mrc_xdp_next key 0 0 0 0 value id "$xf_id"
start_recv h2 5003 "$tmp/r3.json" --expect 200 --timeout-ms 1500 --idle-ms 1500
in_host h1 "$TRAFFIC" send --dst "$H2" --port 5003 --count 200 --size 200 > /dev/null
check "port 5003: sent while the receiver listens" recv_listens_on 1500
wait_recv
check "port 5003: nothing received" eq "$(json "$tmp/r3.json" .received)" 0
check "xdp-filter counted 200 hits" eq "$(hx h2 xdp-filter status 2>/dev/null |
	awk '$1 == "5003" && $2 == "dst,udp" {print $3}')" 200
start_recv h2 5002 "$tmp/r4.json" --expect 200 --timeout-ms 5000
in_host h1 "$TRAFFIC" send --dst "$H2" --port 5002 --count 200 --size 200 > /dev/null
wait_recv
check "port 5002: all received" eq "$(json "$tmp/r4.json" .received)" 200
check "MRC transfer verified beside xdp-filter" transfer_verified
check "MRC's program still p1's only one" eq "$(in_host h2 bpftool -j net show dev p1 | jq '.[0].xdp | length')" 1
hx h2 xdp-filter unload --all > /dev/null 2>&1
in_host h2 ip link del xf0
check "agents stop" agents stop
end
