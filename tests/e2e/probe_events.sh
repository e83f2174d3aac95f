#!/usr/bin/env bash
# Fault tolerance through mrcd, in a 2-host 4-plane lab: `mrcctl probe`
# (connectionless EV probes answered by the peer's XDP: RTTs, --json, lost
# probes to a non-MRC address and over a blackholed plane, argument
# errors); port status (a host's plane-2 link goes down under a live QP:
# both hosts' plane-2 EVs become ASSUMED_BAD within 50 ms, reasons
# port_down and peer_port_down; after the link is back, probes bring them
# back GOOD within 2 s, reason probes_ok); and the EV event log (`mrcctl
# events`: --no-follow --json shape, increasing seq, --count, the stream's
# end on SIGINT and when mrcd stops). Needs build/mrcd, mrcctl, mrc-perf.
. "$(dirname "$0")/lib.sh"

CTL="$ROOT/build/mrcctl"

LAB_PREFIX=prb lab_up --hosts 2 --planes 4 --spines 1
tmp=$(mktemp -d)
CLIENT_PID="" STREAM_PIDS=()
cleanup() {
	local pid
	[ -n "$CLIENT_PID" ] && kill "$CLIENT_PID" 2>/dev/null
	for pid in "${STREAM_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	lab agent stop > /dev/null 2>&1
	lab_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT
# `mrcctl probe` between hosts without a QP: each serves the other's
# addresses (XDP answers probes only from known peers).
mrc_up "$tmp" --peers "$(peer_addrs 4 h1 h2)"

# ctl HOST ARGS...: mrcctl in a lab host; stdout in $tmp/out, stderr in
# $tmp/err, its exit status returned (and in $RC).
ctl() {
	local h=$1
	shift
	lab exec "$h" -- "$CTL" "$@" > "$tmp/out" 2> "$tmp/err"
	RC=$?
	return $RC
}
jqo() { jq -r "$1" "$tmp/out"; }
rc_is() { eq "$RC" "$1"; }
# jqe [-s] FILTER: the last output satisfies the filter.
jqe() { jq -e "$@" "$tmp/out" > /dev/null; }
err_has() { grep -q -- "$1" "$tmp/err" || { echo "    stderr: $(cat "$tmp/err")" >&2; return 1; }; }
out_has() { grep -q -- "$1" "$tmp/out" || { echo "    stdout: $(cat "$tmp/out")" >&2; return 1; }; }
ms_now() { date +%s%3N; }
# CLOCK_MONOTONIC in ns (the clock of event times), and realtime - monotonic.
mono_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }
MONO_OFF=$(python3 -c 'import time; print(time.time_ns() - time.monotonic_ns())')

# --------------------------------------------------------------------------
begin probe.answered
ctl h1 probe --to "$(lab addr h2 1)" --ev 0x1234 --plane 1 --count 5 --json
check "exit 0" rc_is 0
check "one JSON document" jqe .
check "5 sent" eq "$(jqo .sent)" 5
check "5 answered" eq "$(jqo .answered)" 5
check "to, ev, plane echoed" eq "$(jqo '[.to, .ev, .plane] | join(",")')" "$(lab addr h2 1),4660,1"
check "a line per probe" eq "$(jqo '[.probes[] | select(.rtt_ns > 0 and .service_ns >= 0)] | length')" 5
check "rtt min > 0" between "$(jqo .rtt_min_ns)" 1 100000000
check "rtt max < 100 ms" between "$(jqo .rtt_max_ns)" 1 100000000
echo "    plane 1: rtt min/avg/max $(jqo '"\(.rtt_min_ns)/\(.rtt_avg_ns)/\(.rtt_max_ns)"') ns" >&2
ctl h1 probe --to "$(lab addr h2 2)" --ev 4000 --plane 2
check "text: exit 0" rc_is 0
check "text: a line per probe" eq "$(grep -c '^probe [123]: rtt [0-9]* ns (responder [0-9]* ns)$' "$tmp/out")" 3
check "text: summary" out_has '^3 sent, 3 answered, rtt min/avg/max [0-9]*/[0-9]*/[0-9]* ns$'
ctl h1 probe --to "$(lab addr h2 3 -6)" --ev 9 --plane 3 --count 2 --interval-ms 0 --json
check "IPv6: answered" eq "$(jqo .answered)" 2
end

begin probe.no_answer
t0=$(ms_now)
ctl h1 probe --to "$(lab addr h2 1 | sed 's/\.2$/.254/')" --ev 7 --plane 1 --count 1
t1=$(ms_now)
check "non-MRC address: exit 1" rc_is 1
check "non-MRC address: says so" out_has '^probe 1: no answer in 1000 ms$'
check "non-MRC address: summary" out_has '^1 sent, 0 answered$'
check "non-MRC address: quick" between "$((t1 - t0))" 0 3000
lab fault p1 blackhole
t0=$(ms_now)
ctl h1 probe --to "$(lab addr h2 1)" --ev 7 --plane 1 --count 2 --interval-ms 0 --json
t1=$(ms_now)
lab fault p1 clear
check "blackholed plane: exit 1" rc_is 1
check "blackholed plane: both lost" eq "$(jqo '[.probes[] | select(.lost)] | length')" 2
check "blackholed plane: rtt null" eq "$(jqo .rtt_avg_ns)" null
check "blackholed plane: quick" between "$((t1 - t0))" 0 4000
end

begin probe.bad_arguments
ctl h1 probe --to "$(lab addr h2 1)" --ev 70000 --plane 1
check "STEV EV to IPv4: usage error" rc_is 2
check "STEV EV to IPv4: says why" err_has "is an STEV EV (its high 16 bits ride in the IPv6 flow label): --to must be IPv6"
ctl h1 probe --to "$(lab addr h2 1)" --ev 0x100000000 --plane 1
check "EV too large: usage error" rc_is 2
check "EV too large: says why" err_has "is not an EV (1..65535 for a UDP source port, up to 0xffffffff for STEV"
ctl h1 probe --to "$(lab addr h2 1)" --ev zz --plane 1
check "EV not a number" rc_is 2
ctl h1 probe --to "$(lab addr h2 1)" --ev 7
check "no plane: usage error" rc_is 2
check "no plane: says so" err_has "\-\-plane P is required"
ctl h1 probe --to "$(lab addr h2 1)" --ev 7 --plane 9
check "plane 9: usage error" rc_is 2
ctl h1 probe --to "$(lab addr h2 1)" --ev 7 --plane 5
check "plane 5 of 4: failure" rc_is 1
check "plane 5 of 4: says so" err_has "there is no plane 5 (this host has planes 1..4)"
ctl h1 probe --to no-such-host.invalid --ev 7 --plane 1
check "unresolvable: failure" rc_is 1
check "unresolvable: says so" err_has "cannot resolve 'no-such-host.invalid'"
ctl h1 probe --to "$(lab addr h2 1)" --ev 7 --plane 1 --count 1001
check "count too large" rc_is 2
ctl h1 probe --ev 7 --plane 1
check "no --to" err_has "\-\-to HOST is required"
lab fault p4-h1 down
ctl h1 probe --to "$(lab addr h2 4)" --ev 7 --plane 4
check "plane down: failure" rc_is 1
check "plane down: says so" err_has "plane 4 (p4) is down"
ctl h1 --json status
check "status: plane 4 link down" eq "$(jqo '.planes[3].link')" down
check "status: probing config" eq "$(jqo '"\(.probing.successes) \(.probing.interval_ms)"')" "3 50"
lab fault p4-h1 up
end

# --------------------------------------------------------------------------
# A long transfer h1 -> h2 and an event stream on each host.
start_long_client() {
	# Not the lab() function: backgrounded, it is a subshell, and $! would
	# not be the process that execs down to mrc-perf (kill would orphan it).
	"$LAB_CMD" exec --name "$LAB" h1 "$PERF" client "$H2" --json --timeout-s 60 --size 64k --depth 4 \
		--bytes 64g > "$tmp/long.json" 2> "$tmp/long.err" &
	CLIENT_PID=$!
	local i
	for ((i = 0; i < 100; i++)); do
		QPN1=$(lab exec h1 "$CTL" --json qp list 2> /dev/null |
			jq -r '[.[] | select(.state == "RTS")][0].qpn // empty')
		QPN2=$(lab exec h2 "$CTL" --json qp list 2> /dev/null |
			jq -r '[.[] | select(.state == "RTS")][0].qpn // empty')
		[ -n "$QPN1" ] && [ -n "$QPN2" ] && return 0
		sleep 0.05
	done
	echo "    no RTS QP on both hosts" >&2
	return 1
}
# mrc-lab exec execs down to mrcctl, so $! is mrcctl's pid (for signals).
start_stream() {
	"$LAB_CMD" exec --name "$LAB" "$1" -- "$CTL" events --json \
		> "$tmp/ev-$1.jsonl" 2> "$tmp/ev-$1.err" &
	STREAM_PIDS+=($!)
	eval "STREAM_$1=$!"
}
# not_bad HOST QPN PLANE: entries of the plane that are not ASSUMED_BAD.
not_bad() {
	lab exec "$1" "$CTL" --json ev list --qp "$2" |
		jq "[.[] | select(.plane == $3 and .state != \"ASSUMED_BAD\")] | length"
}
# unrecovered FILE REASON SINCE_NS: plane-2 entries demoted for REASON
# since then without a later probes_ok.
unrecovered() {
	jq -s --arg r "$2" --argjson t "$3" '
		[.[] | select(.plane == 2 and .time_ns >= $t)] as $e
		| ($e | map(select(.reason == $r) | "\(.qpn)/\(.idx)") | unique) as $down
		| ($e | map(select(.reason == "probes_ok") | "\(.qpn)/\(.idx)") | unique) as $ok
		| $down - $ok | length' "$1"
}
# Realtime stamp of `ip -ts monitor` ([2026-12-02T05:10:40.732905]) -> monotonic ns.
monitor_mono_ns() {
	local ts
	ts=$(grep -m1 "$1" "$tmp/mon.txt" | sed 's/^\[\([^]]*\)\].*/\1/')
	[ -n "$ts" ] || { echo 0; return; }
	echo $(( $(date -d "$ts" +%s%N) - MONO_OFF ))
}

begin probe.port_status
check "live QP on both hosts" start_long_client
start_stream h1
start_stream h2
ip -n "$LAB-h1" -ts monitor link > "$tmp/mon.txt" 2>&1 &
MON_PID=$!
STREAM_PIDS+=("$MON_PID")
sleep 0.3
t_before=$(mono_ns)
lab fault p2-h1 down
bad1=$(not_bad h1 "$QPN1" 2)
bad2=$(not_bad h2 "$QPN2" 2)
check "h1: every plane-2 EV ASSUMED_BAD" eq "$bad1" 0
check "h2: every plane-2 EV ASSUMED_BAD" eq "$bad2" 0
sleep 0.3
t_down=$(monitor_mono_ns 'p2@.*NO-CARRIER')
check "carrier loss seen" test "$t_down" -gt 0
# The last demotion on each host, after the carrier went.
last1=$(jq -s --argjson t "$t_before" '[.[] | select(.reason == "port_down" and .time_ns >= $t) | .time_ns] | max // 0' "$tmp/ev-h1.jsonl")
last2=$(jq -s --argjson t "$t_before" '[.[] | select(.reason == "peer_port_down" and .time_ns >= $t) | .time_ns] | max // 0' "$tmp/ev-h2.jsonl")
n1=$(jq -s --argjson t "$t_before" '[.[] | select(.reason == "port_down" and .time_ns >= $t)] | length' "$tmp/ev-h1.jsonl")
n2=$(jq -s --argjson t "$t_before" '[.[] | select(.reason == "peer_port_down" and .time_ns >= $t)] | length' "$tmp/ev-h2.jsonl")
echo "    link down -> h1 demoted $n1 EVs (port_down) in $(( (last1 - t_down) / 1000 )) us," \
	"h2 $n2 EVs (peer_port_down) in $(( (last2 - t_down) / 1000 )) us" >&2
check "h1: port_down events" between "$n1" 1 256
check "h2: peer_port_down events" between "$n2" 1 256
# ip monitor stamps the carrier loss when it reads the message, which on a
# busy machine may be several ms after mrcd did; so no lower bound from
# it: the demotions only have to come after the fault command started
# (the queries above count only those) and within 50 ms of the stamp.
check "h1: demoted within 50 ms" between "$(( (last1 - t_down) / 1000000 ))" -1000 50
check "h2: demoted within 50 ms" between "$(( (last2 - t_down) / 1000000 ))" -1000 50
check "h1: not before the fault command" test "$last1" -ge "$t_before"
check "h2: not before the fault command" test "$last2" -ge "$t_before"
lab fault p2-h1 up
t_up=$(mono_ns)
for ((i = 0; i < 40; i++)); do
	u1=$(unrecovered "$tmp/ev-h1.jsonl" port_down "$t_before")
	u2=$(unrecovered "$tmp/ev-h2.jsonl" peer_port_down "$t_before")
	[ "$u1" = 0 ] && [ "$u2" = 0 ] && break
	sleep 0.1
done
check "h1: all back GOOD (probes_ok)" eq "$u1" 0
check "h2: all back GOOD (probes_ok)" eq "$u2" 0
ok1=$(jq -s --argjson t "$t_before" '[.[] | select(.reason == "probes_ok" and .plane == 2 and .time_ns >= $t) | .time_ns] | max // 0' "$tmp/ev-h1.jsonl")
ok2=$(jq -s --argjson t "$t_before" '[.[] | select(.reason == "probes_ok" and .plane == 2 and .time_ns >= $t) | .time_ns] | max // 0' "$tmp/ev-h2.jsonl")
t_carrier=$(monitor_mono_ns 'p2@.*LOWER_UP')
echo "    link up -> last plane-2 EV GOOD: h1 $(( (ok1 - t_carrier) / 1000000 )) ms," \
	"h2 $(( (ok2 - t_carrier) / 1000000 )) ms (the lab restores the leaf's routes" \
	"$(( (t_up - t_carrier) / 1000000 )) ms after the link)" >&2
# The fault has cleared once `mrc-lab fault up` returns (routes restored).
check "h1: GOOD within 2 s of the fault clearing" between "$(( (ok1 - t_up) / 1000000 ))" -5000 2000
check "h2: GOOD within 2 s of the fault clearing" between "$(( (ok2 - t_up) / 1000000 ))" -5000 2000
ctl h1 --json stats
check "h1: port status sent" test "$(jqo .probing.port_status_sent)" -ge 3
check "h1: probes answered" test "$(jqo .probing.probes_answered)" -ge 1
check "h1: XDP/TC control counters" test "$(jqo .control.probes_stamped)" -ge 1
ctl h2 --json stats
check "h2: port status received" test "$(jqo .probing.port_status_rx)" -ge 1
check "h2: none ignored" eq "$(jqo .probing.port_status_ignored)" 0
kill -INT "$STREAM_h1"
wait "$STREAM_h1"
check "events stream: exit 0 on SIGINT" eq "$?" 0
kill "$CLIENT_PID" 2> /dev/null
wait "$CLIENT_PID" 2> /dev/null
CLIENT_PID=""
end

begin events.no_follow_json
ctl h1 events --no-follow --json
check "exit 0" rc_is 0
check "every line a JSON object" jqe -s 'length > 0 and all(type == "object")'
check "all keys" jqe -s 'all(has("seq") and has("time_ns") and has("qpn") and has("profile")
	and has("idx") and has("ev") and has("plane") and has("state") and has("prev_state")
	and has("reason") and has("psn") and has("lost_sent_ns") and has("dropped"))'
check "seq increases" jqe -s '[.[].seq] as $s | [range(1; $s | length) | $s[.] > $s[. - 1]] | all'
check "states named" jqe -s 'all(.state | test("^(GOOD|SKIP|ASSUMED_BAD|DENIED)$"))'
check "reasons named" jqe -s 'all(.reason | test("^(loss|timeout|always_skip|port_down|peer_port_down|probes_ok|unknown)$"))'
check "psn only for loss" jqe -s 'all((.reason == "loss") == (.psn != null))'
check "lost_sent_ns only for loss, before the event" jqe -s 'all(if .reason == "loss" then .lost_sent_ns > 0 and .lost_sent_ns <= .time_ns else .lost_sent_ns == null end)'
ctl h1 events --no-follow
check "text lines" eq "$(grep -cv '^[0-9]*\.[0-9]\{3\} qp=[0-9]* profile=[0-9]* idx=[0-9]* ev=0x[0-9a-f]* plane=[0-9] [A-Z_]*->[A-Z_]* reason=[a-z_]*\( psn=[0-9]*\)\? dropped=[0-9]*$' "$tmp/out")" 0
ctl h1 events --all --count 2 --json
check "--count 2: two events, exit 0" eq "$RC/$(wc -l < "$tmp/out")" "0/2"
# A stream ends when mrcd stops, with exit status 0 and a word why.
start_stream h2
sleep 0.3
lab agent stop > /dev/null
for ((i = 0; i < 50; i++)); do kill -0 "$STREAM_h2" 2> /dev/null || break; sleep 0.1; done
wait "$STREAM_h2"
check "stream: exit 0 when mrcd stops" eq "$?" 0
check "stream: says mrcd stopped" grep -q "mrcd stopped" "$tmp/ev-h2.err"
end
