#!/usr/bin/env bash
# Incast with and without congestion control, end to end: a short
# tools/bench-incast run (3 senders -> 1 receiver, 2 planes of 1 Gb/s links
# that trim and mark ECN, a second or so per scenario). Functional checks
# only, no performance bar (that is the benchmark's job, docs/CONGESTION.md):
# every transfer verified in both scenarios, the JSON complete, NSCC's
# windows moved, trims were NACKed and counted, and `none` had no window.
. "$(dirname "$0")/lib.sh"

BENCH=$ROOT/tools/bench-incast
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

begin incast.help_without_root
if command -v setpriv > /dev/null && setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null &&
	setpriv --reuid=65534 --regid=65534 --clear-groups test -r "$BENCH"; then
	check "--help as nobody exits 0" setpriv --reuid=65534 --regid=65534 --clear-groups \
		bash "$BENCH" --help > "$tmp/help" 2>&1
	check "--help describes the scenarios" grep -q 'hot_spine' "$tmp/help"
	check "a bad option is a usage error (2)" eq "$(setpriv --reuid=65534 --regid=65534 --clear-groups \
		bash "$BENCH" --senders x > /dev/null 2>&1; echo $?)" 2
	end
else
	skip incast.help_without_root "cannot run as nobody here (setpriv, or $BENCH not readable)"
fi

# 1 s per scenario at full goodput (longer without it; the least the
# benchmark takes); the lab is the benchmark's own and is always taken down.
LAB_NAME=inc$$
"$BENCH" --seconds 1 --warmup-s 0.25 --scenarios nscc,none --name "${LAB_NAME:0:12}" \
	--out "$tmp/out" --json > "$tmp/r.json" 2> "$tmp/err"
rc=$?
r() { jq -r "$1" "$tmp/r.json"; }
# jt FILTER: true when FILTER holds on the result.
jt() { jq -e "$1" "$tmp/r.json" > /dev/null; }

begin incast.runs
check "exit status 0 or 3 (ran; 3 = a bar check failed), got $rc" grep -qx '[03]' <<< "$rc"
check "one JSON object" jt 'type == "object"'
check "exactly nscc, none and params" eq "$(r 'keys | join(",")')" "none,nscc,params"
check "plot written" test -s "$tmp/out/incast.png"
[ "$CURRENT_FAILS" -eq 0 ] || sed 's/^/    bench: /' "$tmp/err" | tail -20 >&2
end

begin incast.json_keys
for s in nscc none; do
	for k in goodput_ratio jain jain_mean retx_ratio rtt_p99_us base_rtt_us target_us losses trims \
		lab_dropped lab_trimmed lab_ecn_marked; do
		check "$s.$k is a number" eq "$(r ".$s.$k | type")" number
	done
	check "$s.verified is a boolean" eq "$(r ".$s.verified | type")" boolean
	check "$s: base RTT > 0" jt ".$s.base_rtt_us > 0"
	check "$s: target = 0.75 x base" jt ".$s.target_us == .$s.base_rtt_us * 0.75"
done
check "the calibrated base RTT is printed in params" jt '.params.base_rtt_us > 0 and .params.base_rtt_from == "calibrated"'
end

begin incast.verified
for s in nscc none; do
	check "$s: 3 senders" eq "$(r ".$s.senders | length")" 3
	check "$s: every sender verified" eq "$(r "[.$s.senders[] | .verified] | all")" true
	check "$s: verified" eq "$(r ".$s.verified")" true
	r ".$s.senders[] | select(.verified | not) | \"    $s \\(.host): \\(.error)\"" >&2
done
end

begin incast.nscc_windows_moved
check "nscc: every sender ran NSCC" eq "$(r '[.nscc.senders[] | .algo == "nscc"] | all')" true
moves=$(r '.nscc.n_md + .nscc.n_qa + .nscc.trims')
below=$(r '[.nscc.senders[] | .window.cwnd_below_max] | any')
echo "    nscc: n_md $(r .nscc.n_md), n_qa $(r .nscc.n_qa), trims $(r .nscc.trims); cwnd below max at some time: $below" >&2
check "cuts, quick adapts or trims, or a window below max" \
	test "$moves" -gt 0 -o "$below" = true
check "a window timeline from every sender" eq "$(r '[.nscc.senders[] | .window.rows > 0] | all')" true
# Pacing (on by default in a profile): with room in the window the pace
# still held sends back; without a window there is nothing to pace.
echo "    pacing held back $(r .nscc.cc_paced) sends under NSCC, $(r .none.cc_paced) without a window" >&2
check "nscc: the pacing held sends back" jt '.nscc.cc_paced > 0'
check "none: nothing paced" eq "$(r .none.cc_paced)" 0
end

begin incast.trims_counted
echo "    none: lab trimmed $(r .none.lab_trimmed) (last hop $(r .none.lab.last_hop.trimmed)), trim NACKs" \
	"$(r .none.trim_nacks) ($(r .none.trim_nacks_lasthop) last hop), senders' trims $(r .none.trims)" >&2
check "the lab trimmed" jt '.none.lab_trimmed > 0'
check "the receiver's XDP NACKed trims" jt '.none.trim_nacks > 0'
check "the last hop trimmed (TRIMMED_LASTHOP NACKs)" jt '.none.trim_nacks_lasthop > 0'
check "the senders' windows counted trims" jt '.none.trims > 0'
check "no NACK without a trim" jt '.none.trim_nacks <= .none.lab_trimmed'
check "no ECN mark on the last hop" eq "$(r '.nscc.lab.last_hop.ecn_marked + .none.lab.last_hop.ecn_marked')" 0
end

begin incast.none_has_no_window
check "none: algo none" eq "$(r '[.none.senders[] | .algo == "none"] | all')" true
check "none: cwnd 0xffffffff" eq "$(r '[.none.senders[] | .cwnd_end == 4294967295] | all')" true
check "none: no window in the timelines" eq "$(r '[.none.senders[] | .window.no_window] | all')" true
check "nscc: a finite window" eq "$(r '[.nscc.senders[] | .cwnd_end < 4294967295] | all')" true
end
