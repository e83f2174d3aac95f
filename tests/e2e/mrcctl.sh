#!/usr/bin/env bash
# mrcctl, the operator's CLI, against mrcd in a 2-host 2-plane lab: usage
# errors and `ev expand` without an agent; status, qp, ev and stats while an
# mrc-perf client runs (text and --json, checked with jq); EV deny/allow;
# EV and CC profile life cycles in the pinned maps, every CC parameter and
# the defaults `profile cc show --derive` works out (checked against the
# formulas of include/mrc/nscc.h, computed here); a QP's congestion window
# in `qp show` and in mrc-perf's --json and --cc-timeline; `mrc-lab agent
# restart` under a live verified transfer; `mrcd --detach` with a live and
# a dead agent. Needs build/mrcd, build/mrcctl, build/mrc-perf,
# build/mrc-labctl.
. "$(dirname "$0")/lib.sh"

CTL="$ROOT/build/mrcctl"
MRCD="$ROOT/build/mrcd"
PERF="$ROOT/build/mrc-perf"
PINS=/sys/fs/bpf/mrc
STATE=${MRC_LAB_STATE:-/run/mrc-lab}

# 500 Mbit/s links: a 16 GiB client (killed once looked at) outlives the checks
# on a loaded host too (2 GiB took 31 s, less than the checks did).
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
	--field width=12,init=0x0F0,max=5,mask=0x813 --ev 0x2D6,0x2D0
check "ev expand: an invalid EV is exit 1" rc_is 1
check "ev expand: says why" eq "$(out)" "$(printf '%s\n' \
	'0x2d6 -> invalid: field 2: counter bits 0x6 outside [min 0x0, max 0x5]' '0x2d0 -> 0x8b0700e0')"
# The OCP reference example: min/max bound the counter bits.
ctl h1 ev expand --fmt-fields 16 --field width=16,init=0x100,mask=0xff,max=255 --ev 0 0x2a 0xff
check "ev expand: reference example spans 0x100..0x1ff" eq "$(out)" "$(printf '%s\n' \
	'0x0 -> 0x0100' '0x2a -> 0x012a' '0xff -> 0x01ff')"
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
check "qp show 65537 (past any host's limit)" usage_exit qp show 65537
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
# usage_says MESSAGE ARGS...: exit 2 and MESSAGE on stderr.
usage_says() {
	local msg=$1
	shift
	usage_exit "$@" && err_has "$msg"
}
check "cc gamma 0" usage_says "--gamma: '0' is not a fraction in (0, 1], e.g. 0.8" \
	profile cc create 1 --gamma 0
check "cc max-md-jump 4 decimals" usage_says "--max-md-jump: '0.5000' is not a fraction" \
	profile cc create 1 --max-md-jump 0.5000
check "cc fi-scale above 1000" usage_says \
	"--fi-scale: '1000.001' is not a factor in 0..1000 with up to 3 decimals" \
	profile cc create 1 --fi-scale 1000.001
check "cc fi-scale 4 decimals" usage_says "--fi-scale: '0.2500' is not a factor" \
	profile cc create 1 --fi-scale 0.2500
check "cc fi-scale negative" usage_says "--fi-scale: '-1' is not a factor" \
	profile cc set 1 --fi-scale -1
check "cc algo unknown" usage_says "--algo: 'cubic' is not an algorithm (nscc or none)" \
	profile cc create 1 --algo cubic
check "cc --enable vs --algo none" usage_says "--enable and --algo none contradict each other" \
	profile cc create 1 --enable --algo none
check "cc QA on and off" usage_says "--disable-qa and --enable-qa contradict each other" \
	profile cc set 1 --disable-qa --enable-qa
check "cc max-cwnd 4g" usage_says "--max-cwnd: '4g' is not a size in bytes below 4g" \
	profile cc create 1 --max-cwnd 4g
check "cc fi not a size" usage_says "--fi: '3x' is not a size in bytes" \
	profile cc create 1 --fi 3x
check "cc eta, alpha, adjust-bytes are sizes" usage_exit profile cc create 1 --eta 1k \
	--alpha 64k --adjust-bytes 5q
check "cc qa-threshold above 32 bits of ns" usage_says \
	"--qa-threshold-us: '4294968' is not a number of us (0..4294967; 0 = 4 x target delay)" \
	profile cc create 1 --qa-threshold-us 4294968
check "cc adjust-period not a number" usage_says "--adjust-period-us: 'soon' is not a number of us" \
	profile cc create 1 --adjust-period-us soon
check "cc link-mbps too fast" usage_says "--link-mbps: '10000001' is not a speed in Mb/s" \
	profile cc create 1 --link-mbps 10000001
check "cc qa-gate 32" usage_says "--qa-gate: '32' is not a shift in 0..31" \
	profile cc create 1 --qa-gate 32
check "cc set with nothing" usage_says "nothing to change" profile cc set 1
check "derive options need --derive" usage_says "--mtu, --planes and --link-mbps go with --derive" \
	profile cc show 1 --mtu 4000
check "--derive needs an ID" usage_says "--derive needs a profile ID" \
	profile cc show --derive --mtu 4000
check "--derive needs --mtu" usage_says "--derive needs --mtu BYTES" profile cc show 1 --derive
check "--derive --mtu 100" usage_says "--mtu: path MTUs are 256..9000 bytes" \
	profile cc show 1 --derive --mtu 100
check "--derive --planes 9" usage_says "--planes: '9' is not a number in 0..8" \
	profile cc show 1 --derive --mtu 4000 --planes 9
check "--derive --link-mbps 0" usage_says "--link-mbps: a speed of 1..10000000 Mb/s" \
	profile cc show 1 --derive --mtu 4000 --link-mbps 0
check "ev expand bad layout" usage_exit ev expand --fmt-fields 8 --field width=16 --ev 1
ctl h1 qp show 0
check "names the mistake" err_has "'0' is not a QP number (1..65536 at most, mrcd --max-qps)"
check "points at help" err_has "try 'mrcctl qp show --help'"
ctl h1 --help
check "--help: exit 0" rc_is 0
check "--help lists commands" out_has "profile ev create|set|online|offline|show|delete"
ctl h1 profile ev --help
check "group help" out_has "usage: mrcctl profile ev set ID"
ctl h1 ev deny --help
check "command help" out_has "Take EVs out of service"
ctl h1 profile cc create --help
for o in --algo --base-rtt-us --target-delay-us --max-cwnd --link-mbps --gamma \
	--max-md-jump --qa-gate --qa-threshold-us --fi --fi-scale --eta --alpha \
	--adjust-bytes --adjust-period-us --disable-qa --enable-qa --disable-pacing \
	--enable-pacing --enable --disable; do
	check "cc create help: $o" out_has "^  $o[ ,]"
done
ctl h1 profile cc show --help
check "cc show help: --derive" out_has "^  --derive "
"$PERF" client 1.2.3.4 --cc-profile 64 > /dev/null 2> "$tmp/err"
check "mrc-perf --cc-profile 64: exit 2" eq "$?" 2
check "mrc-perf --cc-profile: the range" err_has "--cc-profile: 64 is out of range (0..63)"
"$PERF" server --cc-timeline "$tmp/x.csv" > /dev/null 2> "$tmp/err"
check "mrc-perf server --cc-timeline: exit 2" eq "$?" 2
check "mrc-perf: --cc-timeline is the client's" err_has "--cc-timeline is not an option of 'server'"
"$PERF" client 1.2.3.4 --cc-timeline "$tmp/no/such/dir/cc.csv" > /dev/null 2> "$tmp/err"
check "mrc-perf --cc-timeline unwritable: exit 2" eq "$?" 2
"$PERF" --help > "$tmp/out"
check "mrc-perf --help: --cc-profile" out_has "^  --cc-profile N"
check "mrc-perf --help: --cc-timeline" out_has "^  --cc-timeline FILE"
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
check "drops have named fields" eq "$(jqo '.drops | has("unknown_qp") and has("malformed") and has("ring_full") and has("bad_key")')" true
check "mrc_plane_of filled" eq "$(lab exec h1 -- bpftool -j map dump pinned $PINS/mrc_plane_of |
	jq -c '[.[] | .formatted.value] | sort')" "[1,2]"
end

# --------------------------------------------------------------------------
begin mrcctl.live_qp
H2=$(lab addr h2 1)
# Simple commands, so $! is mrc-perf itself (mrc-lab exec execs it).
"$LAB_CMD" exec --name "$LAB" h2 -- "$PERF" server > "$tmp/server.out" 2>&1 &
SERVER_PID=$!
wait_line listening "$tmp/server.out"
"$LAB_CMD" exec --name "$LAB" h1 -- "$PERF" client "$H2" --size 64k --bytes 16g \
	--timeout-s 600 > "$tmp/client1.out" 2>&1 &
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
# Without a CC profile a QP has no window ("cc": null), or one of
# algorithm none (no limit): libmrc decides.
check "qp show: no CC profile, no congestion control" \
	jq -e '.cc == null or (.cc.algo == "none" and .cc.slot >= 1)' "$tmp/out" > /dev/null
if [ "$(jqo '.cc')" = null ]; then
	ctl h1 qp show "$qpn"
	check "qp show text: no window" out_has "^  cc  *none (no window)$"
	cwnd_col="-"
else
	ctl h1 qp show "$qpn"
	check "qp show text: algorithm none" out_has "^  cc  *window [0-9]*: none, cwnd unlimited"
	cwnd_col="off"
fi
ctl h1 qp list --json
check "qp list: cc as in qp show" eq "$(jqo ".[] | select(.qpn == $qpn) | .cc.algo // \"null\"")" \
	"$([ "$cwnd_col" = - ] && echo null || echo none)"
ctl h1 qp list
check "qp list text: CWND column" out_has "^QPN .* CWND$"
check "qp list text: CWND $cwnd_col" out_has "^$qpn .* $cwnd_col$"
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
check "default algo, quick adapt, pacing" eq "$(jqo '[.algo, .quick_adapt, .pacing, .flags] | join(",")')" \
	"nscc,true,true,0"
check "values" eq "$(jqo '[.base_rtt_ns, .max_cwnd_bytes, .target_delay_ns] | join(",")')" \
	"20000,262144,0"
check "the rest derived (0)" eq "$(jqo '[.link_mbps, .fi_bytes, .fi_scale, .eta_bytes,
	.alpha_bytes, .qa_threshold_ns, .adjust_bytes, .adjust_period_ns] | join(",")')" \
	"0,0,0,0,0,0,0,0"
check "cc create disabled" ctl h1 profile cc create 2 --disable --gamma 0.25
ctl h1 profile cc show --json
check "cc show all" eq "$(jqo '[.[] | "\(.id):\(.enabled):\(.algo):\(.gamma)"] | join(",")')" \
	"1:true:nscc:0.8,2:false:none:0.25"
ctl h1 profile cc show 1
check "cc show text" out_has "^cc profile 1: INIT, algo nscc$"
check "cc show text: base RTT" out_has "^  base_rtt  *20 us$"
check "cc show text: max_cwnd" out_has "^  max_cwnd  *262144 bytes$"
check "cc show text: target derived" out_has "^  target_delay  *(derived: 0.75 x base RTT)$"
check "cc show text: fi derived" out_has "^  fi  *(derived: 5 MTU x a)$"
check "cc show text: fi_scale derived" out_has "^  fi_scale  *(derived: 0.25 x a)$"
check "cc show text: link derived" out_has "^  link  *(derived: the slowest plane device's speed)$"
check "cc show text: gamma" out_has "^  gamma  *0.800$"
check "cc show text: qa_gate" out_has "^  qa_gate  *3$"
check "cc show text: quick adapt" out_has "^  quick_adapt  *on$"
check "cc show text: pacing" out_has "^  pacing  *on$"
ctl h1 profile cc show 2
check "cc show text: algo none" out_has "^cc profile 2: INIT, algo none"
check "cc set" ctl h1 profile cc set 1 --gamma 0.5 --qa-gate 4
check "cc set --algo nscc on a disabled one" ctl h1 profile cc set 2 --algo nscc --json
check "algo nscc" eq "$(jqo '[.algo, .enabled] | join(",")')" "nscc,true"
check "cc set --algo none" ctl h1 profile cc set 2 --algo none --json
check "algo none" eq "$(jqo '[.algo, .enabled] | join(",")')" "none,false"
check "cc set --enable" ctl h1 profile cc set 2 --enable --json
check "--enable is nscc" eq "$(jqo .algo)" nscc
check "cc offline" ctl h1 profile cc offline 1
check "cc online" ctl h1 profile cc online 1
ctl h1 profile cc set 1 --qa-gate 5
check "cc edit while ONLINE: exit 1" rc_is 1
check "cc edit while ONLINE: says so" err_has "ONLINE: take it OFFLINE"
ctl h1 profile cc delete 1
check "cc delete while ONLINE: exit 1" rc_is 1
check "cc delete" ctl h1 profile cc delete 2

# Every parameter, then what the JSON and the text say.
check "cc create with every option" ctl h1 profile cc create 5 --algo nscc \
	--base-rtt-us 16 --target-delay-us 12 --max-cwnd 512k --link-mbps 75000 \
	--gamma 0.7 --max-md-jump 0.4 --qa-gate 5 --qa-threshold-us 60 --fi 32k \
	--fi-scale 2.5 --eta 1500 --alpha 64k --adjust-bytes 16k --adjust-period-us 20 \
	--disable-qa --disable-pacing --json
check "create --json is the profile" eq "$(jqo '[.id, .state] | join(",")')" "5,INIT"
ctl h1 profile cc show 5 --json
check "every value" eq "$(jqo '[.algo, .enabled, .base_rtt_ns, .target_delay_ns,
	.max_cwnd_bytes, .link_mbps, .gamma, .max_md_jump, .qa_gate, .qa_threshold_ns,
	.fi_bytes, .fi_scale, .eta_bytes, .alpha_bytes, .adjust_bytes, .adjust_period_ns,
	.quick_adapt, .pacing, .flags] | join(",")')" \
	"nscc,true,16000,12000,524288,75000,0.7,0.4,5,60000,32768,2.5,1500,65536,16384,20000,false,false,3"
ctl h1 profile cc show 5
check "text: link" out_has "^  link  *75000 Mb/s$"
check "text: fi_scale" out_has "^  fi_scale  *2.500$"
check "text: qa_threshold" out_has "^  qa_threshold  *60 us$"
check "text: adjust_period" out_has "^  adjust_period  *20 us$"
check "text: quick adapt off" out_has "^  quick_adapt  *off"
check "text: pacing off" out_has "^  pacing  *off (--disable-pacing)$"
check "cc set --enable-qa" ctl h1 profile cc set 5 --enable-qa --fi-scale 0.125 --json
check "quick adapt back on, pacing still off" eq "$(jqo '[.quick_adapt, .pacing, .flags, .fi_scale] | join(",")')" \
	"true,false,2,0.125"
check "cc set --enable-pacing" ctl h1 profile cc set 5 --enable-pacing --json
check "pacing back on" eq "$(jqo '[.pacing, .flags] | join(",")')" "true,0"
check "pacing on and off: usage error" usage_says "--enable-pacing and --disable-pacing contradict each other" \
	profile cc set 5 --enable-pacing --disable-pacing
check "fi-scale 0: derived again" ctl h1 profile cc set 5 --fi-scale 0 --fi 0 --json
check "0 is derived" eq "$(jqo '[.fi_scale, .fi_bytes] | join(",")')" "0,0"
check "cc set 5 back" ctl h1 profile cc set 5 --fi-scale 2.5 --fi 32k --disable-qa

# --derive against the formulas of nscc.h's nscc_defaults comment: BDP =
# planes x link x base RTT, a = BDP / 150 KB, b = target / 12 us; max_cwnd
# 1.5 BDP, fi 5 MTU a, eta 0.15 MTU a, fi_scale 0.25 a, alpha 4 a b MTU,
# target 0.75 base RTT, adjust every 8 MTU or one base RTT; the quick-adapt
# threshold (4 x target) and the fast-increase delay (target / 8) are left
# 0, for the window to derive from the target in force. The cases keep a
# and b whole, so the integer code has nothing to round.
# derive_expect MTU PLANES MBPS BASE_US: those values, in derive_keys order.
derive_expect() {
	awk -v mtu="$1" -v planes="$2" -v mbps="$3" -v base="$4" 'BEGIN {
		bdp = planes * mbps * 1e6 / 8 * base / 1e6
		target = 0.75 * base
		a = bdp / 150000; b = target / 12
		printf "%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f\n",
			bdp, 1.5 * bdp, mtu, 5 * mtu * a, 0.15 * mtu * a, 0.25 * a * 1000,
			4 * a * b * mtu, base * 1000, target * 1000, 0,
			8 * mtu, base * 1000, 0
	}'
}
derive_keys='[.bdp_bytes, .max_cwnd_bytes, .min_cwnd_bytes, .fi_bytes, .eta_bytes,
	(.fi_scale * 1000 | round), .alpha_bytes, .base_rtt_ns, .target_ns,
	.qa_threshold_ns, .adjust_bytes, .adjust_period_ns, .fast_delay_ns] | join(",")'
check "cc create for --derive" ctl h1 profile cc create 6 --base-rtt-us 16 --link-mbps 75000
ctl h1 profile cc show 6 --derive --mtu 4000 --json
check "derive: exit 0" rc_is 0
check "derive: the profile too" eq "$(jqo '[.id, .base_rtt_ns] | join(",")')" "6,16000"
check "derive: planes of this host, link of the profile" \
	eq "$(jqo '.derived | [.planes, .link_mbps, .link_from] | join(",")')" "2,75000,profile"
check "derive: MTU 4000, 2 x 75 Gb/s, 16 us (a = 2, b = 1)" \
	eq "$(jq -r ".derived | $derive_keys" "$tmp/out")" "$(derive_expect 4000 2 75000 16)"
check "derive: fixed defaults" eq "$(jqo '.derived | [.gamma, .max_md_jump, .qa_gate,
	.quick_adapt, .algo] | join(",")')" "0.8,0.5,3,true,nscc"
ctl h1 profile cc show 6 --derive --mtu 2000 --planes 4 --link-mbps 75000 --json
check "derive: --planes and --link-mbps win" \
	eq "$(jqo '.derived | [.planes, .link_mbps, .link_from] | join(",")')" "4,75000,--link-mbps"
check "derive: MTU 2000, 4 x 75 Gb/s, 16 us (a = 4, b = 1)" \
	eq "$(jq -r ".derived | $derive_keys" "$tmp/out")" "$(derive_expect 2000 4 75000 16)"
ctl h1 profile cc show 6 --derive --mtu 4000
check "derive text: the assumptions" out_has \
	"^derived for MTU 4000, 2 planes of 75000 Mb/s (profile): BDP 300000 bytes$"
check "derive text: the window" out_has "^  algo nscc, MTU 4000 bytes, window 4000..450000 bytes$"
check "derive text: run-time delays" out_has \
	"^  base RTT 16 us, target delay 12 us, queue empty below target / 8$"
check "derive text: the increases" out_has \
	"^  alpha 32000 bytes, fi 40000 bytes, fi_scale 0.500, eta 1200 bytes, paid out every 32000 bytes or 16 us$"
# What the profile sets is taken as it is.
ctl h1 profile cc show 5 --derive --mtu 4000 --planes 2 --json
check "derive: explicit values win" eq "$(jqo '.derived | [.max_cwnd_bytes, .fi_bytes,
	.fi_scale, .eta_bytes, .alpha_bytes, .target_ns, .qa_threshold_ns, .adjust_bytes,
	.adjust_period_ns, .gamma, .max_md_jump, .qa_gate, .quick_adapt] | join(",")')" \
	"524288,32768,2.5,1500,65536,12000,60000,16384,20000,0.7,0.4,5,false"
# No link speed anywhere but the plane devices'.
ctl h1 profile cc create 8
speed=$(in_host h1 cat /sys/class/net/p1/speed 2>/dev/null)
ctl h1 profile cc show 8 --derive --mtu 4000 --json
if [ "${speed:--1}" -gt 0 ] 2>/dev/null; then
	check "derive: the plane device's speed" eq "$(jqo '.derived | [.link_mbps,
		(.link_from | startswith("device p"))] | join(",")')" "$speed,true"
	check "derive: measured base RTT stays 0" eq "$(jqo '.derived | [.base_rtt_ns,
		.target_ns, .adjust_period_ns] | join(",")')" "0,0,0"
	check "derive: 100 us assumed for the defaults" eq "$(jqo '.derived | [.bdp_bytes,
		.max_cwnd_bytes] | join(",")')" "$(derive_expect 4000 2 "$speed" 100 | cut -d, -f1,2)"
else
	check "derive without a device speed: exit 1" rc_is 1
	check "derive: says to give --link-mbps" err_has "give --link-mbps"
fi

# ONLINE checks what the parser cannot see alone.
check "cc create 7" ctl h1 profile cc create 7 --target-delay-us 12 --qa-threshold-us 5
check "cc offline 7" ctl h1 profile cc offline 7
ctl h1 profile cc online 7
check "qa_threshold below target: exit 1" rc_is 1
check "says why" err_has "qa_threshold 5000 ns is below the target delay 12000 ns"
check "fix it" ctl h1 profile cc set 7 --qa-threshold-us 0 --max-cwnd 32k --adjust-bytes 64k
ctl h1 profile cc online 7
check "adjust_bytes above max_cwnd: exit 1" rc_is 1
check "says why" err_has "adjust_bytes 65536 is above max_cwnd 32768 bytes"
check "fix it again" ctl h1 profile cc set 7 --adjust-bytes 0 --max-cwnd 300
ctl h1 profile cc online 7
check "max_cwnd below two packets: exit 1" rc_is 1
check "says why" err_has "max_cwnd 300 bytes is less than two packets"
check "cc set 7 --base-rtt-us 10 --adjust-period-us 2000" ctl h1 profile cc set 7 \
	--max-cwnd 0 --base-rtt-us 10 --adjust-period-us 2000
ctl h1 profile cc online 7
check "adjust period over 100 base RTTs: exit 1" rc_is 1
check "says why" err_has "adjust period 2000000 ns is over 100 base RTTs"
check "every option passes ONLINE" ctl h1 profile cc offline 5
check "profile 5 ONLINE" ctl h1 profile cc online 5
for id in 6 7 8; do ctl h1 profile cc delete $id; done
end

# --------------------------------------------------------------------------
begin mrcctl.cc_window
# A client whose QP names an ONLINE CC profile has a window: qp show and
# qp list show it, mrc-perf reports it and writes its --cc-timeline.
check "cc profile 9" ctl h1 profile cc create 9 --max-cwnd 1m
check "offline" ctl h1 profile cc offline 9
check "online" ctl h1 profile cc online 9
total=$((512 * 1024 * 1024))
"$LAB_CMD" exec --name "$LAB" h1 -- "$PERF" client "$H2" --size 64k --bytes $total \
	--cc-profile 9 --cc-timeline "$tmp/cc.csv" --json --timeout-s 60 \
	> "$tmp/client3.json" 2> "$tmp/client3.err" &
CLIENT_PID=$!
qpn=""
for ((i = 0; i < 100; i++)); do
	ctl h1 qp list --json
	qpn=$(jqo "[.[] | select(.owner_pid == $CLIENT_PID and .state == \"RTS\")][0].qpn // empty" \
		2>/dev/null)
	[ -n "$qpn" ] && break
	sleep 0.1
done
check "the client's QP is RTS" test -n "$qpn"
qpn=${qpn:-1}
sleep 0.5
ctl h1 qp show "$qpn" --json
check "qp show: a window" eq "$(jqo '.cc.algo')" nscc
check "qp show: its slot" test "$(jqo '.cc.slot')" -ge 1
check "qp show: cwnd in 1..max_cwnd" between "$(jqo '.cc.cwnd')" 1 1048576
check "qp show: every field" eq "$(jqo '.cc | [has("cwnd", "inflight", "base_rtt_ns",
	"min_rtt_ns", "avg_delay_ns", "target_ns", "n_md", "n_fast", "n_qa", "n_trims",
	"n_losses", "acked_bytes", "rtt_p50_us", "rtt_p99_us")] | all')" true
check "qp show: the profile's parameters" eq "$(jqo '.cc.params.max_cwnd_bytes')" 1048576
check "qp show: acks counted" test "$(jqo '.cc.acked_bytes')" -gt 0
ctl h1 qp show "$qpn"
check "qp show text: the window" out_has "^  cc  *window [0-9]*: nscc, cwnd [0-9]* bytes"
check "qp show text: RTT percentiles" out_has "^    rtt  *base .* p50 .* p99 "
ctl h1 qp list --json
check "qp list: the window" eq "$(jqo ".[] | select(.qpn == $qpn) | .cc.algo")" nscc
ctl h1 qp list
check "qp list text: CWND" out_has "^$qpn .* [0-9][0-9]*$"
wait "$CLIENT_PID"
rc=$?
CLIENT_PID=""
check "the client completes" eq "$rc" 0
[ "$rc" = 0 ] || sed 's/^/    client: /' "$tmp/client3.err" >&2
j="$tmp/client3.json"
check "mrc-perf: cc object" eq "$(jq -r '.cc | [has("cwnd", "min_rtt_ns", "avg_delay_ns",
	"rtt_p50_us", "rtt_p99_us", "n_md", "n_qa", "n_trims", "n_losses", "tx_retransmits")]
	| all' "$j")" true
check "mrc-perf: cwnd in 1..max_cwnd" between "$(jq -r .cc.cwnd "$j")" 1 1048576
check "mrc-perf: RTT samples" test "$(jq -r .cc.rtt_samples "$j")" -gt 0
check "mrc-perf: 0 < p50 <= p99" jq -e '.cc.rtt_p50_us > 0 and .cc.rtt_p50_us <= .cc.rtt_p99_us' \
	"$j" > /dev/null
check "mrc-perf: min RTT below p50" jq -e '.cc.min_rtt_ns / 1000 <= .cc.rtt_p50_us' "$j" > /dev/null
check "mrc-perf: retransmits" jq -e '.tx_retransmits == .cc.tx_retransmits' "$j" > /dev/null
check "mrc-perf: cc_timeline_t0_ns" test "$(jq -r .cc_timeline_t0_ns "$j")" -gt 0
check "cc timeline header" eq "$(head -n 1 "$tmp/cc.csv")" "time_ms,acked_bytes,cwnd,inflight"
rows=$(($(wc -l < "$tmp/cc.csv") - 1))
check "cc timeline rows" test "$rows" -ge 10
check "cc timeline: time_ms rises, acked_bytes never falls, cwnd in 1..max_cwnd" awk -F, '
	NR > 2 && ($1 <= t || $2 < a) { bad = 1 }
	NR > 1 && ($3 < 1 || $3 > 1048576) { bad = 1 }
	NR > 1 { t = $1; a = $2 }
	END { exit bad }' "$tmp/cc.csv"
last=$(tail -n 1 "$tmp/cc.csv" | cut -d, -f2)
check "cc timeline: the transfer acked by the last row" test "$last" -ge "$((total * 99 / 100))"
end

# --------------------------------------------------------------------------
# --------------------------------------------------------------------------
begin mrcctl.agent_restart_live
pid1=$(agent_pid h1)
map1=$(lab exec h1 -- bpftool -j map show pinned $PINS/mrc_qps | jq .id)
"$LAB_CMD" exec --name "$LAB" h1 -- "$PERF" client "$H2" --size 64k --bytes 768m \
	--verify --json --timeout-s 60 > "$tmp/client2.json" 2> "$tmp/client2.err" &
CLIENT_PID=$!
# Under way: its QP in RTS, and half a second of data (768 MiB take 6.4 s
# or more at 2 x 500 Mbit/s; a restart 1-3 s).
for ((i = 0; i < 100; i++)); do
	ctl h1 qp list --json
	[ "$(jqo '[.[] | select(.owner_pid == '"$CLIENT_PID"')][0].state')" = RTS ] && break
	sleep 0.1
done
sleep 0.5
check "the transfer is under way" alive "$CLIENT_PID"
t0=$(now_us)
check "agent restart succeeds" lab agent restart
echo "    restart took $(secs_since "$t0") s" >&2
ctl h1 qp list --json
check "the QP lives on" eq "$(jqo '[.[] | select(.owner_pid == '"$CLIENT_PID"')][0].state')" RTS
check "the transfer outlived the restart" alive "$CLIENT_PID"
check "same agent pid" eq "$(agent_pid h1)" "$pid1"
check "h1's agent alive" alive "$pid1"
check "ready again" eq "$(grep -c '^mrcd: ready' "$STATE/$LAB/mrcd-h1.log")" 2
check "same maps" eq "$(lab exec h1 -- bpftool -j map show pinned $PINS/mrc_qps | jq .id)" "$map1"
for p in p1 p2; do
	check "h1/$p: one XDP program" eq "$(xdp_count h1 $p)" 1
	check "h1/$p: one TC filter" eq "$(tc_count h1 $p)" 1
done
check "profiles survive" ctl h1 profile ev show 4
check "cc profiles survive" ctl h1 profile cc show 1
wait "$CLIENT_PID"
rc=$?
CLIENT_PID=""
check "the client completes" eq "$rc" 0
[ "$rc" = 0 ] || sed 's/^/    client: /' "$tmp/client2.err" >&2
check "verified" eq "$(jq -r .verified "$tmp/client2.json")" true
check "no --cc-profile: no congestion control" \
	jq -e '.cc == null or .cc.algo == "none"' "$tmp/client2.json" > /dev/null
check "retransmits counted" jq -e '.tx_retransmits >= 0' "$tmp/client2.json" > /dev/null
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
