#!/usr/bin/env bash
# mrcctl with many QPs on a host, in a 2-host 2-plane lab: mrc-hold-qps
# (tests/tools) creates half of the host's QP limit (what mrc_qps says:
# mrcd --max-qps), some in RTS, a few in ERROR, and holds them. Checked:
# `qp list --json` is valid JSON with every one of them; `status` text
# stays a few lines (a summary) and lists every QP with --all; `status
# --json` has the limits, their use and map_bytes as numbers (map_bytes
# against bpftool's bytes_memlock of every pinned map and the inner maps
# of the maps of maps); the QPs in ERROR are counted and named; `doctor`
# warns about the limit, naming --max-qps, once the host is filled past
# 90% of it; a QP number past the limit is refused with the limit named.
# The time `qp list --json` takes is printed, never asserted. Needs
# build/mrcd, build/mrcctl, build/tests/mrc-hold-qps.
. "$(dirname "$0")/lib.sh"

CTL="$ROOT/build/mrcctl"
HOLD="$ROOT/build/tests/mrc-hold-qps"
PINS=/sys/fs/bpf/mrc

LAB_PREFIX=scl lab_up --hosts 2 --planes 2 --spines 1
tmp=$(mktemp -d)
HOLD_PIDS=()
cleanup() {
	local p
	for p in "${HOLD_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	lab agent stop > /dev/null 2>&1
	lab_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT

ctl() {
	local h=$1
	shift
	lab exec "$h" -- "$CTL" "$@" > "$tmp/out" 2> "$tmp/err"
	RC=$?
	return $RC
}
jqo() { jq -r "$1" "$tmp/out"; }
valid_json() { jq -e . "$tmp/out" > /dev/null; }
out_has() { grep -q -- "$1" "$tmp/out" || { echo "    stdout: $(head -c 2000 "$tmp/out")" >&2; return 1; }; }
err_has() { grep -q -- "$1" "$tmp/err" || { echo "    stderr: $(cat "$tmp/err")" >&2; return 1; }; }
is_number() { [[ "$1" =~ ^[0-9]+$ ]] || { echo "    '$1' is no number" >&2; return 1; }; }
lines_at_most() {
	local n
	n=$(wc -l < "$tmp/out")
	[ "$n" -le "$1" ] || { echo "    $n lines (at most $1 expected)" >&2; return 1; }
}

# hold NAME ARGS...: mrc-hold-qps on h1 in the background, until it holds
# its QPs (0) or fails (1).
hold() {
	local name=$1 i
	shift
	"$LAB_CMD" exec --name "$LAB" h1 -- "$HOLD" "$@" > "$tmp/$name.out" 2> "$tmp/$name.err" &
	HOLD_PIDS+=($!)
	for ((i = 0; i < 300; i++)); do
		grep -q '^holding' "$tmp/$name.out" && return 0
		kill -0 "${HOLD_PIDS[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	echo "    mrc-hold-qps $*: $(cat "$tmp/$name.err")" >&2
	return 1
}

# bytes_memlock of every map pinned in $PINS and of the inner maps of its
# maps of maps, each once, as bpftool sees them.
bpftool_map_bytes() {
	lab exec h1 -- sh -c '
		ids=""
		for f in '"$PINS"'/*; do
			j=$(bpftool -j map show pinned "$f" 2>/dev/null) || continue
			ids="$ids $(echo "$j" | jq .id)"
			case $(echo "$j" | jq -r .type) in
			array_of_maps|hash_of_maps)
				# The id: as a number (BTF), or 4 little-endian hex bytes.
				ids="$ids $(bpftool -j map dump pinned "$f" | jq -r ".[] |
					.inner_map_id // .formatted.value //
					(\"0x\" + (.value | reverse | map(ltrimstr(\"0x\")) | join(\"\")))" |
					while read -r v; do printf "%d " "$v"; done)";;
			esac
		done
		# One listing of every map, not one bpftool a map: a QP has six.
		bpftool -j map show | jq --arg ids "$ids" "
			(\$ids | split(\" \") | map(select(length > 0) | {(.): true}) | add) as \$want |
			[.[] | select(\$want[.id | tostring]) | .bytes_memlock] | add // 0"'
}

# --------------------------------------------------------------------------
begin mrcctl_scale.qp_list
check "agent starts" lab agent start
ctl h1 status --json
MAX=$(jqo '.limits.max_qps')
check "max_qps is a number" is_number "$MAX"
MAX=${MAX:-256}
N=$((MAX / 2))
RTS=$((N / 2))
check "holder creates $N QPs" hold a --count "$N" --rts "$RTS" --error 3 --peer "$(lab addr h2 1)"
# ms of one mrcctl command in h1, lab exec included.
ms_of() {
	local t0 t1
	t0=$(date +%s%N)
	ctl h1 "$@"
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
base=$(ms_of status --json)
took=$(ms_of qp list --json)
echo "  qp list --json: $N QPs (limit $MAX) in $took ms, $(wc -c < "$tmp/out") bytes" \
	"(status --json: $base ms, the cost of lab exec included in both)" >&2
check "qp list --json: exit 0" eq "$RC" 0
check "qp list --json is JSON" valid_json
check "every QP listed" eq "$(jqo 'length')" "$N"
check "each once" eq "$(jqo '[.[].qpn] | unique | length')" "$N"
check "RTS ones" eq "$(jqo '[.[] | select(.state == "RTS")] | length')" "$RTS"
check "ERROR ones" eq "$(jqo '[.[] | select(.state == "ERROR")] | length')" 3
check "one owner, the holder" eq "$(jqo '[.[].owner_pid] | unique | length')" 1
check "QP numbers within the limit" eq "$(jqo "[.[] | select(.qpn < 1 or .qpn > $MAX)] | length")" 0
ctl h1 qp list
check "text: a header and a row per QP" eq "$(wc -l < "$tmp/out")" "$((N + 1))"
end

# --------------------------------------------------------------------------
begin mrcctl_scale.status
ctl h1 status
check "status: exit 0" eq "$RC" 0
check "status text stays short" lines_at_most 12
check "status text: limits" out_has "^limits: QPs $N of $MAX in use (mrcd --max-qps), contexts 1 of [0-9]* (mrcd --max-contexts); maps [0-9.]* MiB ([0-9]* bytes)$"
check "status text: QPs by state" out_has "^QPs: $N (INIT $((N - RTS - 3)), RTR 0, RTS $RTS, ERROR 3)$"
check "status text: health" out_has "^QP health: 3 in ERROR, "
check "status text: the ERROR ones named" out_has "worst: [0-9]* ERROR, [0-9]* ERROR, [0-9]* ERROR"
ctl h1 status --all
check "status --all lists every QP" test "$(wc -l < "$tmp/out")" -gt "$N"
ctl h1 status --json
check "status --json is JSON" valid_json
check "limits.max_qps" eq "$(jqo '.limits.max_qps')" "$MAX"
check "limits.qps_in_use" eq "$(jqo '.limits.qps_in_use')" "$N"
check "limits.max_contexts is a number" is_number "$(jqo '.limits.max_contexts')"
check "limits.contexts_in_use" eq "$(jqo '.limits.contexts_in_use')" 1
check "map_bytes is a number" is_number "$(jqo '.map_bytes')"
check "map_bytes: every pinned map and inner map" eq "$(jqo '.map_bytes')" "$(bpftool_map_bytes)"
check "qps.total kept" eq "$(jqo '.qps.total')" "$N"
check "qp_health.in_error" eq "$(jqo '.qp_health.in_error')" 3
check "qp_health.worst: ERROR first" eq "$(jqo '.qp_health.worst[0].state')" ERROR
ctl h1 qp show $((MAX + 1))
check "a QP past the limit: exit 1" eq "$RC" 1
check "names the limit" err_has "QP $((MAX + 1)) is out of range (1..$MAX, mrcd --max-qps)"
end

# --------------------------------------------------------------------------
begin mrcctl_scale.doctor_limit
ctl h1 doctor --json
check "doctor: limits ok at half" eq "$(jqo '.checks[] | select(.name == "limits") | .status')" ok
check "doctor: QPs in ERROR warn" eq "$(jqo '.checks[] | select(.name == "QPs") | .status')" warn
# Past 90% of the limit, counted from what the maps say.
MORE=$((MAX * 9 / 10 + 1 - N))
check "a second holder takes $MORE more" hold b --count "$MORE"
ctl h1 doctor --json
lim='.checks[] | select(.name == "limits")'
check "doctor: limits warn" eq "$(jqo "$lim | .status")" warn
check "doctor: says how full" grep -q "QPs $((N + MORE)) of $MAX in use (over 90%)" <<< "$(jqo "$lim | .detail")"
check "doctor: names the flag" grep -q -- "--max-qps" <<< "$(jqo "$lim | .fix")"
ctl h1 status --json
check "two contexts now" eq "$(jqo '.limits.contexts_in_use')" 2
for p in "${HOLD_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
HOLD_PIDS=()
ctl h1 qp list --json
check "QPs gone with their holders" eq "$(jqo 'length')" 0
ctl h1 doctor --json
check "doctor: limits ok again" eq "$(jqo "$lim | .status")" ok
end
