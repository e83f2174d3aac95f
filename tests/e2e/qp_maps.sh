#!/usr/bin/env bash
# Per-QP inner maps (issue 17): a QP's send log is sized by its window and
# its per-EV counters by its EV table, created when it connects and freed
# when it goes. A client with --mpr 1 (128 PSNs) holds less map memory
# (bytes_memlock of its inner maps) than one with --mpr 32 (4096); both
# transfers verify; bpftool shows the records' fields (the inner maps
# carry the fast path's BTF); nothing is left once the client has exited.
# A QP's state (mrc_rx, mrc_tx, mrc_qp_evs) is an entry of blocks its
# process's QPs share (ABI 8: mrc_qp_info.state_idx names it), its
# window's view (mrc_cc_view) a map of its own: there while the QPs live,
# with their fields in bpftool, and gone (freed) after them.
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=qpm lab_up --hosts 2 --planes 2 --spines 2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
mrc_up "$tmp"
PINS=/sys/fs/bpf/mrc

# Inner map ids the outer map OUTER of h1 holds, one a line.
inner_ids() {
	lab exec h1 bpftool -j map dump pinned "$PINS/$1" |
		jq -r '.[].value | map(.[2:]) | reverse | join("")' |
		while read -r hex; do echo $((16#$hex)); done
}
# FIELD of map ID (bpftool map show), 0 if there is no such map.
map_field() { bpftool -j map show id "$1" 2>/dev/null | jq -r ".$2 // 0"; }
# Wait (up to 3 s) until none of the map ids in FILE exists any more: a
# reader's mapping (mrcd's probe engine) lets go at its next walk refresh.
maps_freed() {
	local i id left
	for ((i = 0; i < 60; i++)); do
		left=0
		for id in $(cat "$1"); do
			[ "$(map_field "$id" id)" = 0 ] || left=$((left + 1))
		done
		[ "$left" -eq 0 ] && return 0
		sleep 0.05
	done
	echo "    $left of the maps $(tr '\n' ' ' < "$1")still exist" >&2
	return 1
}

# Wait (up to 5 s) until the client whose stderr is FILE has connected:
# its QP has its inner maps from then on.
wait_connected() {
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q connected "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	return 1
}

# run_client MPR: a client in the background, its inner maps read while it
# is connected (it lingers 4 s, a few times what the reads take: `lab
# exec` takes a while each; checked: it still runs after them):
# "LOG_ENTRIES EV_ENTRIES MEMLOCK" into $tmp/maps.MPR; then waits.
run_client() {
	local mpr=$1 pid i ids=() state=() log rx tx mem
	lab exec h1 "$PERF" client "$H2" --json --timeout-s 60 --size 1m \
		--bytes 256m --verify --mpr "$mpr" --linger-s 4 \
		> "$tmp/c$mpr.json" 2> "$tmp/c$mpr.err" &
	pid=$!
	BG_PIDS+=("$pid")
	check "client with --mpr $mpr connected" wait_connected "$tmp/c$mpr.err"
	log=$(inner_ids mrc_send_log) rx=$(inner_ids mrc_ev_stats) tx=$(inner_ids mrc_ev_tx)
	ids=($log $rx $tx)
	check "one QP, three inner maps" eq "${#ids[@]}" 3
	mem=0
	for i in "${ids[@]}"; do mem=$((mem + $(map_field "$i" bytes_memlock))); done
	echo "$(map_field "${ids[0]:-0}" max_entries) $(map_field "${ids[1]:-0}" max_entries)" \
		"$mem ${ids[0]:-0}" > "$tmp/maps.$mpr"
	state=($(inner_ids mrc_rx) $(inner_ids mrc_tx) $(inner_ids mrc_qp_evs))
	check "one QP, three state maps" eq "${#state[@]}" 3
	state+=($(inner_ids mrc_cc_view))
	printf '%s\n' "${state[@]}" >> "$tmp/state_ids"
	check "the maps were read while the client ran" kill -0 "$pid"
	wait "$pid"
	check "transfer with --mpr $mpr finished" eq "$?" 0
	check "verified" eq "$(jq -r .verified "$tmp/c$mpr.json")" true
}

begin qp_maps.sized_by_window
run_client 1
run_client 32
read -r log1 evs1 mem1 _ < "$tmp/maps.1"
read -r log32 evs32 mem32 _ < "$tmp/maps.32"
echo "    --mpr 1: log $log1 records, $evs1 EVs, $mem1 B;" \
	"--mpr 32: log $log32 records, $evs32 EVs, $mem32 B" >&2
check "--mpr 1: a log of 128 records" eq "$log1" 128
check "--mpr 32: a log of 4096 records" eq "$log32" 4096
check "counters for the QP's EV table, both times" eq "$evs1" "$evs32"
check "--mpr 1 holds less map memory than --mpr 32" between "$mem1" 1 $((mem32 - 1))
end

# One process's QPs share their state blocks: the slots of its 12 QPs
# hold one map per state (blocks of 8 and 16 entries: two), each QP has an
# entry of its own, which its mrc_qps record names.
begin qp_maps.qps_share_blocks
lab exec h1 "$PERF" client "$H2" --qps 12 --json --timeout-s 60 --size 16384 \
	--iters 8 --verify --linger-s 3 > "$tmp/q12.json" 2> "$tmp/q12.err" &
pid=$!
BG_PIDS+=("$pid")
for ((i = 0; i < 300; i++)); do
	grep -q "linger for" "$tmp/q12.err" 2> /dev/null && break
	sleep 0.1
done
check "client with 12 QPs done, lingering" grep -q "linger for" "$tmp/q12.err"
check "12 slots hold rx state" eq "$(inner_ids mrc_rx | wc -l)" 12
check "in two blocks" eq "$(inner_ids mrc_rx | sort -u | wc -l)" 2
check "the tx state too" eq "$(inner_ids mrc_tx | sort -u | wc -l)" 2
used=0
for id in $(inner_ids mrc_rx | sort -u); do
	used=$((used + $(bpftool -j map dump id "$id" |
		jq '[.. | objects | select(has("cack") and .mpr > 0)] | length')))
done
check "12 entries in use, one per QP" eq "$used" 12
check "mrc_qps names entries 0-7 and 0-3" eq "$(lab exec h1 bpftool -j map dump \
	pinned "$PINS/mrc_qps" | jq -c '[.. | objects | select(has("state_idx") and
		.state == 3) | .state_idx] | sort')" "[0,0,1,1,2,2,3,3,4,5,6,7]"
check "the maps were read while the client ran" kill -0 "$pid"
wait "$pid"
check "12-QP client verified" eq "$(jq -r .verified "$tmp/q12.json")" true
end

begin qp_maps.freed_at_exit
check "no send log left" eq "$(inner_ids mrc_send_log | wc -l)" 0
check "no XDP counters left" eq "$(inner_ids mrc_ev_stats | wc -l)" 0
check "no TC counters left" eq "$(inner_ids mrc_ev_tx | wc -l)" 0
check "no QP state left" eq "$(inner_ids mrc_rx; inner_ids mrc_tx; inner_ids mrc_qp_evs)" ""
check "no window view left" eq "$(inner_ids mrc_cc_view | wc -l)" 0
check "the QPs' state maps seen" between "$(wc -l < "$tmp/state_ids")" 6 8
check "and freed" maps_freed "$tmp/state_ids"
end

begin qp_maps.bpftool_shows_fields
# A client that stays connected (linger) while its log is dumped.
lab exec h1 "$PERF" client "$H2" --json --timeout-s 60 --size 1m --bytes 64m \
	--verify --linger-s 3 > "$tmp/cl.json" 2> "$tmp/cl.err" &
pid=$!
BG_PIDS+=("$pid")
check "client connected" wait_connected "$tmp/cl.err"
sleep 0.5
id=$(inner_ids mrc_send_log | head -1)
check "a send log while connected" test -n "$id"
check "records dumped with their fields" eq "$(bpftool -j map dump id "${id:-0}" |
	jq '[.. | objects | select(has("psn") and has("ev_idx"))] |
		length > 0')" true
id=$(inner_ids mrc_rx | head -1)
check "the QP's rx state, a block of its process's" test -n "$id"
check "named as the process's first block" eq "$(map_field "${id:-0}" name)" mrc_rx_b0
check "every entry's fields dumped by name" eq "$(bpftool -j map dump id "${id:-0}" |
	jq '[.. | objects | select(has("cack") and has("mpr") and has("placed"))] |
		length')" "$(map_field "${id:-0}" max_entries)"
check "one entry in use: the QP's window" eq "$(bpftool -j map dump id "${id:-0}" |
	jq '[.. | objects | select(has("cack") and .mpr > 0)] | length')" 1
check "the maps were read while the client ran" kill -0 "$pid"
wait "$pid"
check "lingering client verified" eq "$(jq -r .verified "$tmp/cl.json")" true
end
