#!/usr/bin/env bash
# mrcctl doctor, the host check, in a 2-host 2-plane lab: with mrcd running
# every check passes (tracefs may only warn) and each plane shows its XDP
# program and TC egress filter; with the agent stopped it exits 1 with a
# FAIL for mrcd and for the pinned maps, and a fix line under each failure
# (text and --json). It runs in mrcctl itself: no mrcd needed to answer.
# Needs build/mrcd, build/mrcctl, build/mrc-labctl.
. "$(dirname "$0")/lib.sh"

CTL="$ROOT/build/mrcctl"

LAB_PREFIX=doc lab_up --hosts 2 --planes 2 --spines 1
tmp=$(mktemp -d)
cleanup() {
	lab agent stop > /dev/null 2>&1
	lab_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT

# ctl HOST ARGS...: mrcctl in a lab host; stdout in $tmp/out, stderr in
# $tmp/err, its exit status in $RC.
ctl() {
	local h=$1
	shift
	lab exec "$h" -- "$CTL" "$@" > "$tmp/out" 2> "$tmp/err"
	RC=$?
	return $RC
}
out_has() { grep -q -- "$1" "$tmp/out" || { echo "    stdout: $(cat "$tmp/out")" >&2; return 1; }; }
jqo() { jq -r "$1" "$tmp/out"; }
valid_json() { jq -e . "$tmp/out" > /dev/null || { echo "    stdout: $(cat "$tmp/out")" >&2; return 1; }; }
rc_is() { eq "$RC" "$1"; }
status_of() { jqo ".checks[] | select(.name == \"$1\") | .status"; }
# Every WARN/FAIL line of the text output is followed by a fix: line.
fixes_follow() {
	awk '/^(WARN|FAIL)  /{want=1; next} want{if ($1 != "fix:") bad=1; want=0}
	     END{exit bad || want}' "$tmp/out" ||
		{ echo "    stdout: $(cat "$tmp/out")" >&2; return 1; }
}

# --------------------------------------------------------------------------
begin doctor.with_agent
if ! lab agent start > /dev/null; then
	check "mrcd starts" false
else
	ctl h1 doctor --json
	check "exit 0" rc_is 0
	check "one JSON document" valid_json
	check "no failures" eq "$(jqo .failed)" 0
	check "all ok but tracefs and XDP multi-program" eq "$(jqo '[.checks[] | select(.status != "ok" and .name != "tracefs" and .name != "XDP multi-program")] | length')" 0
	check "XDP multi-program ok, or warn naming what the kernel refuses" grep -qE '^(ok|warn .*the kernel refuses .*\(.+\))' <<< "$(jqo '.checks[] | select(.name == "XDP multi-program") | "\(.status) \(.detail)"')"
	for name in "kernel BTF" bpffs libbpf libxdp privileges mrcd "pinned maps"; do
		check "$name ok" eq "$(status_of "$name")" ok
	done
	check "tracefs ok or warn" grep -qE '^(ok|warn)$' <<< "$(status_of tracefs)"
	check "maps: all 27 with BTF" grep -q "all 27 maps" <<< "$(status_of "pinned maps"; jqo '.checks[] | select(.name == "pinned maps") | .detail')"
	check "two planes" eq "$(jqo '[.checks[] | select(.plane)] | length')" 2
	check "planes ok" eq "$(jqo '[.checks[] | select(.plane and .status == "ok")] | length')" 2
	check "planes: XDP attached" eq "$(jqo '[.checks[] | select(.plane.xdp_prog_id > 0)] | length')" 2
	check "planes: TC attached" eq "$(jqo '[.checks[] | select(.plane.tc_prog_id > 0)] | length')" 2
	check "planes: link up" eq "$(jqo '[.checks[] | select(.plane.oper == "up")] | length')" 2
	check "ok checks have no fix" eq "$(jqo '[.checks[] | select(.status == "ok" and .fix != null)] | length')" 0

	ctl h2 doctor
	check "text: exit 0" rc_is 0
	check "text: mrcd ok" out_has '^ok    mrcd: answers on '
	check "text: plane lines" out_has '^ok    plane 2 .*XDP prog [1-9][0-9]* .*TC egress prog [1-9]'
	check "text: summary" out_has '^0 failed, [0-2] warnings\?$'
	check "text: fix under any warning" fixes_follow
fi
end

# --------------------------------------------------------------------------
begin doctor.without_agent
check "agent stops" lab agent stop
ctl h1 doctor --json
check "exit 1" rc_is 1
check "one JSON document" valid_json
check "mrcd fails" eq "$(status_of mrcd)" fail
check "pinned maps fail" eq "$(status_of "pinned maps")" fail
check "mrcd fix says how to start it" grep -q 'mrcd --planes IF\[,IF..\] --daemon' <<< "$(jqo '.checks[] | select(.name == "mrcd") | .fix')"
check "maps fix present" grep -q 'mrcd' <<< "$(jqo '.checks[] | select(.name == "pinned maps") | .fix')"
check "every failure has a fix" eq "$(jqo '[.checks[] | select(.status != "ok" and (.fix == null or .fix == ""))] | length')" 0
check "failed counted" eq "$(jqo .failed)" "$(jqo '[.checks[] | select(.status == "fail")] | length')"
check "host checks still ok" eq "$(status_of "kernel BTF")$(status_of bpffs)$(status_of privileges)" okokok

ctl h1 doctor
check "text: exit 1" rc_is 1
check "text: FAIL mrcd" out_has '^FAIL  mrcd: not running'
check "text: FAIL maps" out_has '^FAIL  pinned maps: none of the 27 maps'
check "text: fix lines" out_has '^      fix: mrcd --planes IF\[,IF..\] --daemon'
check "text: fix under every failure" fixes_follow

ctl h1 --pin-dir /sys/fs/bpf/other doctor
check "--pin-dir: exit 1" rc_is 1
check "--pin-dir: named in the fix" out_has 'fix: .*--pin-dir /sys/fs/bpf/other'

ctl h1 doctor extra
check "usage error: exit 2" rc_is 2
end
