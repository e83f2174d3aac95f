#!/usr/bin/env bash
# mrcctl, the operator's CLI, against mrcd in a 2-host 2-plane lab: usage
# errors and `ev expand` without an agent; status, qp, ev and stats while an
# mrc-perf client runs (text and --json, checked with jq); EV deny/allow;
# EV and CC profile life cycles in the pinned maps; `mrc-lab agent restart`
# under a live verified transfer; `mrcd --detach` with a live and a dead
# agent. Needs build/mrcd, build/mrcctl, build/mrc-perf, build/mrc-labctl.
. "$(dirname "$0")/lib.sh"

CTL="$ROOT/build/mrcctl"
MRCD="$ROOT/build/mrcd"
PERF="$ROOT/build/mrc-perf"
PINS=/sys/fs/bpf/mrc
STATE=${MRC_LAB_STATE:-/run/mrc-lab}

# 500 Mbit/s links: a 2 GiB client runs long enough to be looked at.
LAB_PREFIX=ctl lab_up --hosts 2 --planes 2 --spines 1 --rate 500mbit
tmp=$(mktemp -d)
SERVER_PID="" CLIENT_PID=""
cleanup() {
	[ -n "$CLIENT_PID" ] && kill "$CLIENT_PID" 2>/dev/null
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
	lab agent stop > /dev/null 2>&1
	lab_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT

# ctl HOST ARGS...: mrcctl in a lab host; stdout in $tmp/out, stderr in
# $tmp/err, its exit status returned (and in $RC).
ctl() {
	local h=$1
	shift
	lab exec "$h" -- "$CTL" "$@" > "$tmp/out" 2> "$tmp/err"
	RC=$?
	return $RC
}
out() { cat "$tmp/out"; }
err_has() { grep -q -- "$1" "$tmp/err" || { echo "    stderr: $(cat "$tmp/err")" >&2; return 1; }; }
out_has() { grep -q -- "$1" "$tmp/out" || { echo "    stdout: $(cat "$tmp/out")" >&2; return 1; }; }
# jqo FILTER: a value of the last --json output.
jqo() { jq -r "$1" "$tmp/out"; }
valid_json() { jq -e . "$tmp/out" > /dev/null; }
rc_is() { eq "$RC" "$1"; }

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
xdp_count() { in_host "$1" bpftool -j net show dev "$2" | jq '.[0].xdp | length'; }
tc_count() { in_host "$1" tc filter show dev "$2" egress | grep -c 'handle 0x4d43 mrc_tc_tx'; }
no_pins() { [ -z "$(lab exec "$1" -- sh -c "ls -d $PINS 2>/dev/null")" ]; }
has_pins() { ! no_pins "$1"; }
agent_pid() { sed -n "${1#h}p" "$STATE/$LAB/agent.pids"; }

# The worked example of tests/unit/test_ev_profile.c (STEV, two fields).
EXPAND=(ev expand --fmt-fields "16,16" --field "width=16,init=0x8207,mask=0x0F0A"
	--field "width=12,init=0x0F0,mask=0x813")

# --------------------------------------------------------------------------
begin mrcctl.without_agent
ctl h1 status
check "status: exit 1" rc_is 1
check "status: says how to start mrcd" err_has \
	"mrcd is not running for $PINS: start it with mrcd --planes"
ctl h1 qp list --json
check "qp list: exit 1" rc_is 1
check "qp list: nothing on stdout" eq "$(out)" ""
ctl h1 --pin-dir /sys/fs/bpf/other status
check "--pin-dir named in the hint" err_has "not running for /sys/fs/bpf/other: .* --pin-dir /sys/fs/bpf/other"
ctl h1 "${EXPAND[@]}" --ev 0x2D6
check "ev expand needs no mrcd" rc_is 0
check "ev expand: worked example" eq "$(out)" "0x2d6 -> 0x8b0700f2"
ctl h1 "${EXPAND[@]}" --ev 0x2D6 0 0x3ff --json
check "ev expand --json" eq "$(jq -c . "$tmp/out")" \
	'[{"compact":"0x2d6","wire":"0x8b0700f2"},{"compact":"0x0","wire":"0x800500e0"},{"compact":"0x3ff","wire":"0x8f0f08f3"}]'
ctl h1 ev expand --fmt-fields 16,16 --field width=16,init=0x8207,mask=0x0F0A \
	--field width=12,init=0x0F0,max=0x0F0,mask=0x813 --ev 0x2D6,0x2D0
check "ev expand: an invalid EV is exit 1" rc_is 1
check "ev expand: says why" eq "$(out)" "$(printf '%s\n' \
	'0x2d6 -> invalid: field 2: value 0xf2 outside [0x0, 0xf0]' '0x2d0 -> 0x8b0700e0')"
end

# --------------------------------------------------------------------------
begin mrcctl.usage
usage_exit() {
	ctl h1 "$@"
	[ "$RC" = 2 ] || { echo "    mrcctl $*: exit $RC, not 2" >&2; return 1; }
}
check "no command" usage_exit
check "unknown command" usage_exit frobnicate
check "unknown subcommand" usage_exit qp frob
check "qp show without N" usage_exit qp show
check "qp show 0" usage_exit qp show 0
check "qp show 257" usage_exit qp show 257
check "ev list without --qp" usage_exit ev list
check "ev deny without selector" usage_exit ev deny --qp 1
check "ev deny with two selectors" usage_exit ev deny --qp 1 --index 0 --plane 1
check "ev deny --index 256" usage_exit ev deny --qp 1 --index 256
check "ev deny --ev not hex" usage_exit ev deny --qp 1 --ev 0xZZ
check "unknown option" usage_exit status --frob
check "profile id 64" usage_exit profile ev create 64 --type auto
check "profile without --type" usage_exit profile ev create 1
check "profile bad type" usage_exit profile ev create 1 --type magic
check "bad field spec" usage_exit profile ev set 1 --field width=40
check "cc gamma 1.5" usage_exit profile cc create 1 --gamma 1.5
check "ev expand bad layout" usage_exit ev expand --fmt-fields 8 --field width=16 --ev 1
ctl h1 qp show 0
check "names the mistake" err_has "'0' is not a QP number (1..256)"
check "points at help" err_has "try 'mrcctl qp show --help'"
ctl h1 --help
check "--help: exit 0" rc_is 0
check "--help lists commands" out_has "profile ev create|set|online|offline|show|delete"
ctl h1 profile ev --help
check "group help" out_has "usage: mrcctl profile ev set ID"
ctl h1 ev deny --help
check "command help" out_has "Take EVs out of service"
end

# --------------------------------------------------------------------------
begin mrcctl.status
check "agent starts" lab agent start
ctl h1 status
check "status: exit 0" rc_is 0
check "status text: plane 1" out_has "^1 *p1 .*198\.18\.1\.1 *fd00:1::1"
check "status text: drops" out_has "unknown_qp 0"
ctl h1 status --json
check "status --json is JSON" valid_json
check "two planes" eq "$(jqo '.planes | length')" 2
check "plane names" eq "$(jqo '[.planes[].name] | join(",")')" p1,p2
check "plane 1 IPv4" eq "$(jqo '.planes[0].addr4')" "$(lab addr h1 1)"
check "plane 2 IPv6" eq "$(jqo '.planes[1].addr6')" "$(lab addr h1 2 -6)"
check "plane ifindex" eq "$(jqo '.planes[0].ifindex')" \
	"$(in_host h1 ip -j link show dev p1 | jq '.[0].ifindex')"
check "XDP mode" eq "$(jqo '.planes[0].xdp_mode')" skb
check "XDP program id" test "$(jqo '.planes[0].xdp_prog_id')" -gt 0
check "what the device runs" eq "$(jqo '.planes[0].xdp_attached_id')" \
	"$(in_host h1 bpftool -j net show dev p1 | jq '.[0].xdp[0].id')"
check "TC program id" eq "$(jqo '.planes[0].tc_prog_id')" \
	"$(in_host h1 bpftool -j net show dev p1 | jq '.[0].tc[0].id')"
check "no QPs yet" eq "$(jqo '.qps.total')" 0
check "drops have named fields" eq "$(jqo '.drops | has("unknown_qp") and has("malformed") and has("ring_full")')" true
check "mrc_plane_of filled" eq "$(lab exec h1 -- bpftool -j map dump pinned $PINS/mrc_plane_of |
	jq -c '[.[] | .formatted.value] | sort')" "[1,2]"
end

# --------------------------------------------------------------------------
begin mrcctl.live_qp
H2=$(lab addr h2 1)
# Simple commands, so $! is mrc-perf itself (mrc-lab exec execs it).
"$LAB_CMD" exec --name "$LAB" h2 -- "$PERF" server > "$tmp/server.out" 2>&1 &
SERVER_PID=$!
sleep 0.5
"$LAB_CMD" exec --name "$LAB" h1 -- "$PERF" client "$H2" --size 64k --bytes 2g \
	--timeout-s 60 > "$tmp/client1.out" 2>&1 &
CLIENT_PID=$!
qpn=""
for ((i = 0; i < 100; i++)); do
	ctl h1 qp list --json
	qpn=$(jqo '[.[] | select(.state == "RTS")][0].qpn // empty' 2>/dev/null)
	[ -n "$qpn" ] && break
	sleep 0.1
done
check "the client's QP is RTS on h1" test -n "$qpn"
qpn=${qpn:-1}
ctl h1 qp list --json
check "qp list --json is JSON" valid_json
q="(.[] | select(.qpn == $qpn))"
check "owner is the client" eq "$(jqo "$q.owner_pid")" "$CLIENT_PID"
check "peers are h2's plane addresses" eq "$(jqo "$q.peers | join(\",\")")" \
	"$(lab addr h2 1),$(lab addr h2 2)"
check "EVs counted" test "$(jqo "$q | .evs.good + .evs.backup")" -ge 1
check "snd_nxt >= snd_una" test "$(jqo "$q.tx.snd_nxt")" -ge "$(jqo "$q.tx.snd_una")"
check "has counters" eq "$(jqo "$q.counters | has(\"tx_stamped\") and has(\"rx_sack\")")" true
remote=$(jqo "$q.remote_qpn")
ctl h2 qp list --json
check "h2 has the peer QP, pointing back" eq \
	"$(jqo ".[] | select(.qpn == $remote) | .remote_qpn")" "$qpn"
check "h2's peer is h1" eq "$(jqo ".[] | select(.qpn == $remote) | .peers[0]")" "$(lab addr h1 1)"
ctl h1 qp list
check "qp list text" out_has "^$qpn *RTS *$CLIENT_PID *$remote "
ctl h1 qp show "$qpn"
check "qp show text" out_has "^qp $qpn: RTS"
check "qp show: all counters" out_has "completions"
ctl h1 qp show "$qpn" --json
check "qp show --json" eq "$(jqo '.qpn, .state' | tr '\n' ' ')" "$qpn RTS "
check "qp show: full tx state" eq "$(jqo '.tx | has("wr_head")')" true
ctl h1 qp list --json
free=$(jqo '[.[].qpn] as $used | [range(1; 257)] - $used | .[0]')
ctl h1 qp show "$free"
check "qp show of a free QP: exit 1" rc_is 1
check "says there is no such QP" err_has "there is no QP $free"

ctl h1 ev list --qp "$qpn" --json
check "ev list --json is JSON" valid_json
n_evs=$(jqo 'length')
check "one row per EV" test "$n_evs" -ge 1
check "rows are indexed" eq "$(jqo '.[0].index')" 0
check "EVs in hex" bash -c "[[ \$(jq -r '.[0].ev' '$tmp/out') =~ ^0x[0-9a-f]+\$ ]]"
# The fast path may move EVs between GOOD, SKIP and ASSUMED_BAD; only we deny.
check "states" eq "$(jqo '[.[].state] - ["GOOD", "SKIP", "ASSUMED_BAD"] | length')" 0
check "per-EV counters" eq "$(jqo '.[0] | has("packets") and has("rtt_us")')" true
ctl h1 ev list --qp "$qpn"
check "ev list text" out_has "^0 *0x[0-9a-f]* *[0-9] *[0-9]* *[A-Z_]* *\(active\|backup\) "

check "ev deny by index" ctl h1 ev deny --qp "$qpn" --index 0,1
check "says how many" eq "$(out)" "qp $qpn: 2 EVs denied"
ctl h1 ev list --qp "$qpn" --json
check "entries 0 and 1 DENIED" eq "$(jqo '[.[0].state, .[1].state] | join(",")')" DENIED,DENIED
if [ "$n_evs" -ge 3 ]; then
	check "entry 2 untouched" test "$(jqo '.[2].state')" != DENIED
fi
ctl h1 qp show "$qpn" --json
check "qp show counts DENIED" eq "$(jqo '.evs.denied')" 2
ctl h1 ev deny --qp "$qpn" --index 0 --json
check "deny again changes nothing" eq "$(jqo .changed)" 0
ev0=$(ctl h1 ev list --qp "$qpn" --json && jqo '.[0].ev')
check "ev allow by EV" ctl h1 ev allow --qp "$qpn" --ev "$ev0" --json
check "one allowed" eq "$(jqo .changed)" 1
check "ev allow by index" ctl h1 ev allow --qp "$qpn" --index 1
ctl h1 ev list --qp "$qpn" --json
check "none DENIED any more" eq "$(jqo '[.[] | select(.state == "DENIED")] | length')" 0
check "entry 0 out of DENIED" test "$(jqo '.[0].state')" != DENIED
ctl h1 ev deny --qp "$qpn" --ev 0x1
check "unknown EV: exit 1" rc_is 1
check "unknown EV named" err_has "EV 0x1 is not in QP $qpn's table"
ctl h1 ev deny --qp "$qpn" --index 255
if [ "$n_evs" -lt 256 ]; then
	check "index past the table: exit 1" rc_is 1
fi

ctl h1 stats --json
check "stats --json is JSON" valid_json
check "stats: named drops" eq "$(jqo '.drops | has("duplicate")')" true
check "stats: the QP's counters" test "$(jqo ".qps[] | select(.qpn == $qpn) | .counters.tx_stamped")" -gt 0
check "stats: totals" test "$(jqo '.total.tx_stamped')" -gt 0
ctl h1 stats
check "stats text" out_has "^total "
ctl h1 status --json
check "status counts the QP" eq "$(jqo '.qps.RTS')" 1

check "the client is still running" alive "$CLIENT_PID"
kill "$CLIENT_PID" 2>/dev/null
wait "$CLIENT_PID" 2>/dev/null
CLIENT_PID=""
end

# --------------------------------------------------------------------------
begin mrcctl.ev_profiles
check "create" ctl h1 profile ev create 3 --type generated --format stev --count 64 --backups 2
check "create says so" out_has "ev profile 3 created: GENERATED, STEV, INIT"
ctl h1 profile ev create 3 --type auto
check "create twice: exit 1" rc_is 1
check "create twice: says so" err_has "exists already"
check "set fields" ctl h1 profile ev set 3 --fmt-fields 16,16 \
	--field width=16,init=0x8207,mask=0x0F0A --field width=12,init=0x0F0,mask=0x813
ctl h1 profile ev show 3 --json
check "show --json" eq "$(jqo '[.id, .type, .state, .format, .ev_count, .backups_per_plane] | join(",")')" \
	"3,GENERATED,INIT,STEV,64,2"
check "fields kept" eq "$(jqo '[.fields[].init] | join(",")')" "0x8207,0xf0"
ctl h1 profile ev online 3
check "INIT -> ONLINE refused" rc_is 1
check "says the way" err_has "INIT -> OFFLINE"
check "offline" ctl h1 profile ev offline 3
check "online" ctl h1 profile ev online 3
check "online says so" eq "$(out)" "ev profile 3 is ONLINE"
ctl h1 profile ev set 3 --count 32
check "edit while ONLINE: exit 1" rc_is 1
check "edit while ONLINE: says ONLINE and OFFLINE" err_has "ONLINE: take it OFFLINE"
ctl h1 profile ev delete 3
check "delete while ONLINE: exit 1" rc_is 1
check "delete while ONLINE: says so" err_has "ONLINE"
check "event mask may change while ONLINE" ctl h1 profile ev set 3 --event-mask 0x3
check "in the pinned map for libmrc" bash -c \
	"'$LAB_CMD' exec --name $LAB h1 -- bpftool -j map dump pinned $PINS/mrc_ev_profiles |
	 jq -e '.[] | select(.formatted.key == 3) | .formatted.value.state == 2' > /dev/null"
check "offline again" ctl h1 profile ev offline 3
check "edit when OFFLINE" ctl h1 profile ev set 3 --count 32
ctl h1 profile ev show 3 --json
check "count changed, min-active follows" eq "$(jqo '[.ev_count, .min_active] | join(",")')" 32,16
check "explicit profile" ctl h1 profile ev create 4 --type explicit
check "explicit EVs" ctl h1 profile ev set 4 --ev 0xc000@1,0xc001@2,0xc002 --count 3 --min-active 3
ctl h1 profile ev show --json
check "show all" eq "$(jqo '[.[].id] | join(",")')" 3,4
check "explicit list" eq "$(jqo '.[1].explicit | map("\(.ev)@\(.plane)") | join(",")')" \
	"0xc000@1,0xc001@2,0xc002@0"
ctl h1 profile ev show
check "show text" out_has "ev profile 4: EXPLICIT, UDP, INIT"
check "delete" ctl h1 profile ev delete 3
ctl h1 profile ev show 3
check "deleted" rc_is 1
end

# --------------------------------------------------------------------------
begin mrcctl.cc_profiles
check "cc create" ctl h1 profile cc create 1 --base-rtt-us 20 --max-cwnd 256k
ctl h1 profile cc show 1 --json
check "defaults" eq "$(jqo '[.gamma, .max_md_jump, .qa_gate, .enabled, .state] | join(",")')" \
	"0.8,0.5,3,true,INIT"
check "values" eq "$(jqo '[.base_rtt_ns, .max_cwnd_bytes, .target_delay_ns] | join(",")')" \
	"20000,262144,0"
check "cc create disabled" ctl h1 profile cc create 2 --disable --gamma 0.25
ctl h1 profile cc show --json
check "cc show all" eq "$(jqo '[.[] | "\(.id):\(.enabled):\(.gamma)"] | join(",")')" \
	"1:true:0.8,2:false:0.25"
ctl h1 profile cc show 1
check "cc show text" out_has "cc profile 1: INIT, enabled"
check "cc set" ctl h1 profile cc set 1 --gamma 0.5 --qa-gate 4
check "cc offline" ctl h1 profile cc offline 1
check "cc online" ctl h1 profile cc online 1
ctl h1 profile cc set 1 --qa-gate 5
check "cc edit while ONLINE: exit 1" rc_is 1
check "cc edit while ONLINE: says so" err_has "ONLINE: take it OFFLINE"
ctl h1 profile cc delete 1
check "cc delete while ONLINE: exit 1" rc_is 1
check "cc delete" ctl h1 profile cc delete 2
end

# --------------------------------------------------------------------------
begin mrcctl.agent_restart_live
pid1=$(agent_pid h1)
map1=$(lab exec h1 -- bpftool -j map show pinned $PINS/mrc_qps | jq .id)
"$LAB_CMD" exec --name "$LAB" h1 -- "$PERF" client "$H2" --size 64k --bytes 1g \
	--verify --json --timeout-s 60 > "$tmp/client2.json" 2> "$tmp/client2.err" &
CLIENT_PID=$!
sleep 2
check "the transfer is under way" alive "$CLIENT_PID"
check "agent restart succeeds" lab agent restart
check "same agent pid" eq "$(agent_pid h1)" "$pid1"
check "h1's agent alive" alive "$pid1"
check "ready again" eq "$(grep -c '^mrcd: ready' "$STATE/$LAB/mrcd-h1.log")" 2
check "same maps" eq "$(lab exec h1 -- bpftool -j map show pinned $PINS/mrc_qps | jq .id)" "$map1"
for p in p1 p2; do
	check "h1/$p: one XDP program" eq "$(xdp_count h1 $p)" 1
	check "h1/$p: one TC filter" eq "$(tc_count h1 $p)" 1
done
ctl h1 qp list --json
check "the QP lives on" eq "$(jqo '[.[] | select(.owner_pid == '"$CLIENT_PID"')][0].state')" RTS
check "profiles survive" ctl h1 profile ev show 4
check "cc profiles survive" ctl h1 profile cc show 1
wait "$CLIENT_PID"
rc=$?
CLIENT_PID=""
check "the client completes" eq "$rc" 0
[ "$rc" = 0 ] || sed 's/^/    client: /' "$tmp/client2.err" >&2
check "verified" eq "$(jq -r .verified "$tmp/client2.json")" true
check "lat_max_us reported" eq "$(jq -r '.sizes[0] | has("lat_max_us")' "$tmp/client2.json")" true
max=$(jq -r '.sizes[0].lat_max_us' "$tmp/client2.json")
echo "    completion latency max across the restart: $max us" >&2
check "lat_max_us under 2 s" jq -e '.sizes[0].lat_max_us < 2000000' "$tmp/client2.json" \
	> /dev/null
end

# --------------------------------------------------------------------------
begin mrcctl.not_answering
pid1=$(agent_pid h1)
kill -STOP "$pid1"
start=$(date +%s%N)
ctl h1 status
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
kill -CONT "$pid1"
check "a stopped agent: exit 1" rc_is 1
check "says mrcd is not answering" err_has "mrcd is not answering"
check "gives up after about 5 s" between "$elapsed_ms" 4500 8000
check "the agent answers again" ctl h1 status
end

# --------------------------------------------------------------------------
begin mrcctl.detach
pid2=$(agent_pid h2)
lab exec h2 -- "$MRCD" --detach > "$tmp/detach2" 2>&1
check "detach a running agent: exit 0" eq "$?" 0
check "it stopped" wait_gone "$pid2"
check "h2: no pins" no_pins h2
for p in p1 p2; do
	check "h2/$p: no XDP" eq "$(xdp_count h2 $p)" 0
	check "h2/$p: no TC" eq "$(tc_count h2 $p)" 0
done
ctl h2 status
check "mrcctl then says not running" err_has "mrcd is not running"
pid1=$(agent_pid h1)
kill -KILL "$pid1"
check "h1's agent killed" wait_gone "$pid1"
check "a dead agent leaves pins" has_pins h1
lab exec h1 -- "$MRCD" --detach > "$tmp/detach1" 2>&1
check "detach a dead agent's leftovers: exit 0" eq "$?" 0
check "h1: no pins" no_pins h1
for p in p1 p2; do
	check "h1/$p: no XDP" eq "$(xdp_count h1 $p)" 0
	check "h1/$p: no TC" eq "$(tc_count h1 $p)" 0
done
lab exec h1 -- "$MRCD" --detach > "$tmp/detach3" 2>&1
check "detach when nothing is left: exit 0" eq "$?" 0
end
