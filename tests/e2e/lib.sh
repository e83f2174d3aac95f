# Shared helpers for end-to-end tests: a lab per test file, torn down on any
# exit, verdict lines for tests/run.sh, and small traffic/assert helpers.
# shellcheck shell=bash
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAB_CMD="$ROOT/tools/mrc-lab"
TRAFFIC="$ROOT/build/mrc-lab-traffic"
LAB=""
BG_PIDS=()

# One lab name per test file and process, so runs never collide.
lab_up() {
	local t0=$(now_us) rc
	LAB=${LAB_PREFIX:-e}$$
	LAB=${LAB:0:12}
	trap lab_cleanup EXIT
	"$LAB_CMD" up --name "$LAB" "$@" > /dev/null
	rc=$?
	echo "  lab up: $(secs_since "$t0") s" >&2
	return $rc
}

lab_cleanup() {
	local pid t0=$(now_us)
	for pid in "${BG_PIDS[@]}"; do kill "$pid" 2>/dev/null; done
	[ -n "$LAB" ] && "$LAB_CMD" down --name "$LAB" 2>/dev/null &&
		echo "  lab down: $(secs_since "$t0") s" >&2
	[ -n "$UNPRIV_DIR" ] && rm -rf "$UNPRIV_DIR"
}

lab() { "$LAB_CMD" "$1" --name "$LAB" "${@:2}"; }
in_host() { local h=$1; shift; ip netns exec "$LAB-$h" "$@"; }

# Wall time, for the logs: where a file's seconds go.
now_us() { echo "${EPOCHREALTIME/./}"; }
secs_since() { local d=$(($(now_us) - $1)); printf '%d.%d' $((d / 1000000)) $((d / 100000 % 10)); }
FILE_T0=$(now_us)
# mark WHAT: "at S s: WHAT" in the log, S from the file's start.
mark() { echo "  at $(secs_since "$FILE_T0") s: $*" >&2; }

# Verdicts ----------------------------------------------------------------
CURRENT=""
CURRENT_FAILS=0
CURRENT_T0=0
begin() { CURRENT=$1; CURRENT_FAILS=0; CURRENT_T0=$(now_us); }
# check DESCRIPTION COMMAND...: a failed command fails the current test.
check() {
	local what=$1
	shift
	if ! "$@"; then
		echo "  $CURRENT: $what: failed: $*" >&2
		CURRENT_FAILS=$((CURRENT_FAILS + 1))
	fi
}
end() {
	echo "  $CURRENT: $(secs_since "$CURRENT_T0") s" >&2
	if [ "$CURRENT_FAILS" -eq 0 ]; then
		echo "[$CURRENT] PASS"
	else
		echo "[$CURRENT] FAIL"
	fi
}
skip() { echo "  $1: $2" >&2; echo "[$1] SKIP"; }

# Numbers -----------------------------------------------------------------
# between VALUE LOW HIGH: integer range check with a readable failure.
between() {
	if [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; then return 0; fi
	echo "    value $1 not in [$2, $3]" >&2
	return 1
}
eq() {
	[ "$1" = "$2" ] && return 0
	echo "    expected '$2', got '$1'" >&2
	return 1
}

# Traffic -----------------------------------------------------------------
# start_recv HOST PORT OUTFILE [recv options]: a receiver in the background,
# returned once its socket is bound.
start_recv() {
	local host=$1 port=$2 out=$3 i
	shift 3
	in_host "$host" "$TRAFFIC" recv --port "$port" --json "$@" > "$out" 2> "$out.err" &
	BG_PIDS+=($!)
	RECV_PID=$!
	for ((i = 0; i < 100; i++)); do
		grep -q ready "$out.err" 2>/dev/null && { RECV_T0=$(now_us); return 0; }
		sleep 0.05
	done
	echo "    receiver on $host did not start" >&2
	return 1
}

# recv_listens_on MS: the receiver (--timeout-ms MS) listens 0.5 s more at
# least, so a packet sent before this call that was not dropped reaches
# it: what a check that nothing arrived needs of a short timeout.
recv_listens_on() {
	local ms=$((($(now_us) - RECV_T0) / 1000))
	[ $((ms + 500)) -le "$1" ] && return 0
	echo "    the send ended ${ms} ms into the receiver's $1 ms" >&2
	return 1
}

wait_recv() { wait "$RECV_PID" 2>/dev/null; }

# json FILE FILTER: one value from a JSON file.
json() { jq -r "$2" "$1"; }

stats_json() { lab stats --json; }
spine_packets() { stats_json | jq -r ".spines[] | select(.plane==$1 and .spine==$2) | .packets"; }
link_field() { stats_json | jq -r ".links[] | select(.name==\"$1\") | .$2"; }

# MRC --------------------------------------------------------------------
PERF="$ROOT/build/mrc-perf"
MRCCTL="$ROOT/build/mrcctl"
# mrc-perf of mrc_up and client runs without privileges (uid 65534: its
# QPs come from mrcd's broker, docs/SECURITY.md); MRC_PERF_USER=root in a
# test that needs a root client.
MRC_PERF_USER=${MRC_PERF_USER:-65534}
if [ "$MRC_PERF_USER" = root ]; then
	PERF_AS=()
else
	PERF_AS=(setpriv --reuid="$MRC_PERF_USER" --regid="$MRC_PERF_USER" --clear-groups)
fi
# A tree that user cannot reach (a clone under /root, 0700) has its
# programs copied to a folder it can, removed at exit (lab_cleanup).
UNPRIV_DIR=""
if [ ${#PERF_AS[@]} -gt 0 ] && ! "${PERF_AS[@]}" test -x "$PERF" 2> /dev/null; then
	UNPRIV_DIR=$(mktemp -d /tmp/mrc-unpriv.XXXXXX) && chmod 755 "$UNPRIV_DIR"
fi
# unpriv_bin PATH: where the unprivileged user runs PATH from.
unpriv_bin() {
	[ -z "$UNPRIV_DIR" ] && { echo "$1"; return; }
	install -m 755 "$1" "$UNPRIV_DIR/" && echo "$UNPRIV_DIR/${1##*/}"
}
PERF_RUN=$PERF
[ ${#PERF_AS[@]} -gt 0 ] && PERF_RUN=$(unpriv_bin "$PERF")

# peer_addrs PLANES HOST...: every plane address (IPv4 and IPv6) of the
# hosts, comma-separated, for mrcd --peers.
peer_addrs() {
	local planes=$1 h p out=()
	shift
	for h in "$@"; do
		for ((p = 1; p <= planes; p++)); do
			out+=("$(lab addr "$h" "$p")" "$(lab addr "$h" "$p" -6)")
		done
	done
	(IFS=,; echo "${out[*]}")
}

# mrc_up TMPDIR [MRCD_ARGS...]: mrcd on every host of the lab (with the
# arguments) and one mrc-perf server on h2 for the whole test file (it
# serves one client after another; its JSON lines go to
# TMPDIR/server.json). Sets H2 to h2's plane-1 address.
mrc_up() {
	MRC_TMP=$1
	shift
	lab agent start ${1:+--} "$@" > /dev/null || { echo "mrcd did not start" >&2; exit 1; }
	H2=$(lab addr h2 1)
	"$LAB_CMD" exec --name "$LAB" h2 "${PERF_AS[@]}" "$PERF_RUN" server --json \
		> "$MRC_TMP/server.json" 2> "$MRC_TMP/server.err" &
	BG_PIDS+=($!)
	# Listening, not a fixed pause (a client would retry a refused connect).
	wait_line listening "$MRC_TMP/server.err" || sed 's/^/    server: /' "$MRC_TMP/server.err" >&2
	return 0
}

# wait_line WORD FILE: until FILE has WORD, at most 10 s; 1 if it never does.
wait_line() {
	local i
	for ((i = 0; i < 200; i++)); do
		grep -q -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "    no '$1' in $2 after 10 s" >&2
	return 1
}

# client ARGS...: one mrc-perf run from h1 to $H2, its JSON in
# $MRC_TMP/c.json; the exit status is returned and stderr shown on failure.
client() {
	lab exec h1 "${PERF_AS[@]}" "$PERF_RUN" client "$H2" --json --timeout-s 60 "$@" \
		> "$MRC_TMP/c.json" 2> "$MRC_TMP/c.err"
	local rc=$?
	[ $rc -eq 0 ] || sed 's/^/    client: /' "$MRC_TMP/c.err" >&2
	return $rc
}
cj() { jq -r "$1" "$MRC_TMP/c.json"; }
