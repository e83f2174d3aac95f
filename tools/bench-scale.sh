# shellcheck shell=bash
# Sourced by tools/bench (not run on its own): the "scale" section. In its
# own lab (2 hosts, 4 planes x 2 spines, mrcd on both), for each QP count
# of SCALE_QPS one mrc-perf client on h1 drives that many QPs (--qps N)
# into one mrc-perf server on h2, every region verified, and the section
# reads:
#   map_bytes           bytes_memlock of every map of h2's mrcd: the maps
#                       pinned under h2's bpffs (one count per map id) plus
#                       the inner maps the map-in-map ones hold, read while
#                       the QPs are up (the client lingers after its WRITEs)
#   ns_per_data_packet  h2's mrc_xdp_rx (XDP on h2's plane interfaces: the
#                       DATA it receives): run_time_ns / run_cnt deltas
#                       from every QP up (set-up's path probes excluded)
#   ns_per_sack         h1's mrc_xdp_rx (the SACKs h1 receives), the same
#                       (kernel.bpf_stats_enabled=1; from the client's "up
#                       in" line to its "linger for" line: the data phase)
#   goodput_gbps        the client's aggregate gbps over all its QPs
#   setup_seconds       the client's: first HELLO until every QP is RTS
# QP counts above what mrcd allows (the max_entries of h2's mrc_qps) run
# at that limit, once, and are recorded as such (qps holds what ran,
# qps_requested what was asked, capped_at the limit).
# Uses bench's globals and helpers (say, in_lab, in_host, kill_tree,
# wait_pid, LOG, OUT, PERF, PRESET, SECTION_FAILED, STATS_WAS).

SCALE_QPS=(1 64 512 4096)
SCALE_SIZE=16384			# each WRITE; every QP WRITEs its share
SCALE_LINGER_S=4			# QPs up and idle: map_bytes and the mrcds' CPU are read then
SCALE_SETTLE_S=1			# QPs up, before the WRITEs: the stats start then
SCALE_PORT=18700

# scale_map_bytes LAB HOST: the sum of bytes_memlock of HOST's mrcd maps,
# the inner maps of its map-in-map maps (per-QP send logs and EV counters,
# per-context event rings) included: what `mrcctl status --json` reports as
# map_bytes (bpftool 7.1 prints no inner map ids for maps without BTF).
scale_map_bytes() {
	"$LAB_CMD" exec --name "$1" "$2" -- "$MRCCTL" --json status 2>> "$LOG" |
		jq '.map_bytes // null' 2>> "$LOG" || echo null
}

# scale_xdp_ids LAB HOST: ids of the mrc_xdp_rx programs on HOST's interfaces.
scale_xdp_ids() {
	local names
	names=$(bpftool -j prog show 2>/dev/null | jq -c 'map({key: (.id | tostring), value: .name}) | from_entries')
	ip netns exec "$1-$2" bpftool net show -j 2>/dev/null |
		jq -c --argjson n "${names:-{\}}" '[.[0].xdp[]? | .id | select($n[tostring] == "mrc_xdp_rx")] | unique'
}

# scale_prog_stats IDS_JSON: {"time": run_time_ns, "cnt": run_cnt} summed.
scale_prog_stats() {
	bpftool -j prog show 2>/dev/null | jq -c --argjson ids "$1" '
		[.[] | select(.id as $i | $ids | index($i))] |
		{time: (map(.run_time_ns // 0) | add // 0), cnt: (map(.run_cnt // 0) | add // 0)}'
}

# scale_qp_limit LAB: max_entries of h2's mrc_qps (what mrcd allows), or empty.
scale_qp_limit() {
	local f
	f=$(find "/run/mrc-lab/$1/bpffs/h2" -type f -name mrc_qps 2>/dev/null | head -n 1)
	[ -n "$f" ] && bpftool -j map show pinned "$f" 2>/dev/null | jq -r '.max_entries // empty'
}

# scale_wait_line FILE TEXT PID: until FILE has TEXT, PID ends, or the
# section's timeout.
scale_wait_line() {
	local i
	for ((i = 0; i < SCALE_TIMEOUT_S * 10; i++)); do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# scale_point LAB N REQUESTED: one run of N QPs; a JSON line into $SOUT/points.jsonl.
scale_point() {
	local lab=$1 n=$2 req=$3 h2 iters cpid spid b1 a1 b2 a2 ids1 ids2 mb=null agents=() ag1= ag2=
	local cj=$SOUT/client$n.json ce=$SOUT/client$n.err port=$((SCALE_PORT + n % 1000))
	h2=$("$LAB_CMD" addr --name "$lab" h2 1)
	# The same bytes in all (SCALE_BYTES) whatever N, at least one WRITE a QP.
	iters=$((SCALE_BYTES / SCALE_SIZE / n))
	((iters >= 1)) || iters=1
	say "  $n QPs (asked: $req): $iters WRITEs of $SCALE_SIZE bytes per QP"
	"$LAB_CMD" exec --name "$lab" h2 -- "$PERF" server --once --json --port "$port" \
		> "$SOUT/server$n.json" 2> "$SOUT/server$n.err" &
	spid=$!
	PIDS+=("$spid")
	sleep 0.3
	ids1=$(scale_xdp_ids "$lab" h1) ids2=$(scale_xdp_ids "$lab" h2)
	"$LAB_CMD" exec --name "$lab" h1 -- "$PERF" client "$h2" --port "$port" --qps "$n" \
		--size "$SCALE_SIZE" --iters "$iters" --verify --json --linger-s "$SCALE_LINGER_S" \
		--settle-s "$SCALE_SETTLE_S" \
		--timeout-s "$SCALE_TIMEOUT_S" > "$cj" 2> "$ce" &
	cpid=$!
	PIDS+=("$cpid")
	# The stats start when every QP is up: set-up's path probes (one per
	# EV of every QP) are not DATA. The client then settles (idle, no
	# DATA) for SCALE_SETTLE_S before its first WRITE: the snapshot falls
	# in between, however short the data phase.
	scale_wait_line "$ce" "settle for" "$cpid"
	b1=$(scale_prog_stats "$ids1") b2=$(scale_prog_stats "$ids2")
	# The last WRITE completed when the client starts to linger.
	scale_wait_line "$ce" "linger for" "$cpid"
	a1=$(scale_prog_stats "$ids1") a2=$(scale_prog_stats "$ids2")
	if grep -q "linger for" "$ce" 2>/dev/null; then
		mb=$(scale_map_bytes "$lab" h2)
		# The QPs up and idle: what each host's mrcd costs now (1 s, schedstat).
		mapfile -t agents < "${MRC_LAB_STATE:-/run/mrc-lab}/$lab/agent.pids" 2> /dev/null
		((${#agents[@]} >= 2)) && read -r -d '' ag1 ag2 < <(cpu_percent 1 "${agents[@]:0:2}")
	fi
	wait_pid "$cpid" $((SCALE_TIMEOUT_S + 10)) >> "$LOG" 2>&1
	wait_pid "$spid" 15 >> "$LOG" 2>&1
	sed "s/^/  client $n: /" "$ce" >> "$LOG"
	jq -n -c --argjson n "$n" --argjson req "$req" --argjson mb "${mb:-null}" \
		--argjson ag1 "${ag1:-null}" --argjson ag2 "${ag2:-null}" \
		--argjson b1 "${b1:-null}" --argjson a1 "${a1:-null}" \
		--argjson b2 "${b2:-null}" --argjson a2 "${a2:-null}" \
		--slurpfile c "$cj" '
		def per(a; b): if a == null or b == null or (a.cnt - b.cnt) <= 0 then null
			else ((a.time - b.time) / (a.cnt - b.cnt) * 10 | round / 10) end;
		($c[0] // {}) as $C
		| {qps: $n, requested: $req, map_bytes: $mb,
		   ns_per_data_packet: per($a2; $b2), data_packets: (if $a2 and $b2 then $a2.cnt - $b2.cnt else null end),
		   ns_per_sack: per($a1; $b1), sacks: (if $a1 and $b1 then $a1.cnt - $b1.cnt else null end),
		   sack_ns_per_data_packet: (if $a1 and $b1 and $a2 and $b2 and ($a2.cnt - $b2.cnt) > 0
			then (($a1.time - $b1.time) / ($a2.cnt - $b2.cnt) * 10 | round / 10) else null end),
		   goodput_gbps: ($C.gbps // null), setup_seconds: ($C.setup_seconds // null),
		   verified: ($C.verified == true and $C.qps_in_error == 0), qps_in_error: ($C.qps_in_error // null),
		   bytes: ($C.bytes // null), client_tx_packets: ($C.tx_packets // null),
		   agent_idle_cpu_percent: (if $ag1 != null and $ag2 != null then ([$ag1, $ag2] | max) else null end),
		   error: (if $c[0] == null then "no JSON from the client" else $C.error end)}' \
		>> "$SOUT/points.jsonl" 2>> "$LOG" ||
		echo "{\"qps\": $n, \"requested\": $req, \"verified\": false, \"error\": \"no result\"}" >> "$SOUT/points.jsonl"
	say "    $(tail -n 1 "$SOUT/points.jsonl" | jq -r '"map \(.map_bytes) B, \(.ns_per_data_packet) ns/DATA, \(.ns_per_sack) ns/SACK, \(.goodput_gbps) Gb/s, set-up \(.setup_seconds) s, mrcd idle \(.agent_idle_cpu_percent) %, verified \(.verified)\(if .error then ": " + .error else "" end)"')"
}

# scale_best_runs FILE: per QP count (in the order first run), the run with
# the best goodput, verified runs first, with how many runs it had
# ("runs") and whether they all verified ("all_verified"); one JSON line each.
scale_best_runs() {
	jq -s -c '. as $P | [$P[] | .qps] | reduce .[] as $q ([]; if index([$q]) then . else . + [$q] end)
		| .[] as $q | [$P[] | select(.qps == $q)] as $R
		| ($R | sort_by([(.verified | not), -(.goodput_gbps // 0)]) | .[0])
		+ {runs: ($R | length), all_verified: ($R | all(.verified)),
		   goodput_runs: [$R[] | .goodput_gbps]}' "$1"
}

scale_section() {
	local lab=bsc$$ limit req n ran=() reqs=() round i
	SCALE_LAB=$lab	# bench's cleanup takes it down should we die
	SOUT=$OUT/scale
	rm -rf "$SOUT"
	mkdir -p "$SOUT"
	case $PRESET in
	# Enough bytes that the data phase outlasts the stats snapshot taken
	# when every QP is up (16 MiB could be over before it, leaving no DATA).
	smoke) SCALE_QPS=(1 64) SCALE_BYTES=$((128 << 20)) ;;
	quick) SCALE_BYTES=$((128 << 20)) ;;
	*) SCALE_BYTES=$((512 << 20)) ;;
	esac
	SCALE_TIMEOUT_S=300
	say "== scale: mrc-perf --qps N, h1 -> h2, QPs ${SCALE_QPS[*]} (lab $lab)"
	"$LAB_CMD" up --name "$lab" --hosts 2 --planes 4 --spines 2 >> "$LOG" 2>&1 &&
		"$LAB_CMD" agent --name "$lab" start >> "$LOG" 2>&1 || {
		say "  lab or mrcd did not start (see $LOG): no scale figures"
		"$LAB_CMD" down --name "$lab" >> "$LOG" 2>&1
		SECTION_FAILED=1
		echo null > "$OUT/scale.json"
		return
	}
	limit=$(scale_qp_limit "$lab")
	STATS_WAS=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -q kernel.bpf_stats_enabled=1
	for req in "${SCALE_QPS[@]}"; do
		n=$req
		[ -n "$limit" ] && ((n > limit)) && n=$limit
		# A count capped to one already run is that point again: run it once.
		[[ " ${ran[*]} " == *" $n "* ]] && continue
		ran+=("$n")
		reqs+=("$req")
	done
	# --rounds: every point that many times, in turns; each keeps its best
	# run (goodput), as the goodput section keeps its best round: one run
	# of 4,096 QPs moved 4.9-7.7 Gb/s within minutes on this VM.
	for ((round = 1; round <= ROUNDS; round++)); do
		((ROUNDS > 1)) && say "  round $round of $ROUNDS"
		for ((i = 0; i < ${#ran[@]}; i++)); do
			scale_point "$lab" "${ran[i]}" "${reqs[i]}"
		done
	done
	sysctl -q kernel.bpf_stats_enabled="$STATS_WAS"
	STATS_WAS=
	"$LAB_CMD" down --name "$lab" >> "$LOG" 2>&1
	SCALE_LAB=
	scale_best_runs "$SOUT/points.jsonl" > "$SOUT/best.jsonl"
	jq -s -c --argjson req "$(printf '%s\n' "${SCALE_QPS[@]}" | jq -s -c .)" \
		--argjson rounds "$ROUNDS" --argjson limit "${limit:-null}" --argjson size "$SCALE_SIZE" --argjson total "$SCALE_BYTES" '
		. as $P | def col(k): [$P[] | .[k]];
		def at(n; k): ([$P[] | select(.qps == n)][0] // {})[k];
		{qps: col("qps"), map_bytes: col("map_bytes"), ns_per_data_packet: col("ns_per_data_packet"),
		 ns_per_sack: col("ns_per_sack"), goodput_gbps: col("goodput_gbps"),
		 setup_seconds: col("setup_seconds"), agent_idle_cpu_percent: col("agent_idle_cpu_percent"),
		 verified: ($P | length > 0 and all(.all_verified)), rounds: $rounds,
		 qps_requested: $req, capped_at: (if $limit != null and ($req | max) > $limit then $limit else null end),
		 qp_limit: $limit, points: $P,
		 ns_per_packet_4096_over_1: (if at(4096; "ns_per_data_packet") != null and at(1; "ns_per_data_packet") != null
			then (at(4096; "ns_per_data_packet") / at(1; "ns_per_data_packet") * 100 | round / 100) else null end),
		 ns_per_sack_4096_over_1: (if at(4096; "ns_per_sack") != null and at(1; "ns_per_sack") != null
			then (at(4096; "ns_per_sack") / at(1; "ns_per_sack") * 100 | round / 100) else null end),
		 goodput_4096_over_1: (if at(4096; "goodput_gbps") != null and (at(1; "goodput_gbps") // 0) > 0
			then (at(4096; "goodput_gbps") / at(1; "goodput_gbps") * 100 | round / 100) else null end),
		 config: {write_size: $size, bytes_per_point: $total, lab: "2 hosts, 4 planes x 2 spines, MTU 9000",
			client: "one mrc-perf client on h1 (--qps N, --verify), one server on h2"},
		 definition: "map_bytes: bytes_memlock of the maps pinned under h2s bpffs plus the inner maps of its map-in-map maps, while the QPs are up; ns_per_data_packet: run_time_ns / run_cnt of mrc_xdp_rx on h2s interfaces (DATA), ns_per_sack: the same on h1 (SACKs), kernel.bpf_stats_enabled=1, deltas from every QP up to the last WRITE; goodput_gbps: aggregate of all QPs; each point is the best of its runs by goodput (--rounds, in turns; points[].runs, goodput_runs); setup_seconds: first HELLO until every QP is RTS; agent_idle_cpu_percent: the busier of the two hosts mrcds over 1 s with the QPs up and idle, per cent of one CPU (docs/PERFORMANCE.md)"}' \
		"$SOUT/best.jsonl" > "$OUT/scale.json" 2>> "$LOG" || echo null > "$OUT/scale.json"
	jq -e '.verified' "$OUT/scale.json" > /dev/null 2>&1 || SECTION_FAILED=1
}

# Lines for bench's table formatter ("#TITLE", tab-separated rows, "@@").
scale_table() {
	jq -r 'def f: if . == null then "-" elif type == "number" then (. * 100 | round / 100 | tostring) else tostring end;
	  .scale as $S | if $S == null then empty else
	    "#== scale: one client h1 -> h2 with N QPs\(if $S.capped_at then " (asked \($S.qps_requested | map(tostring) | join(", ")); mrcd allows \($S.capped_at))" else "" end), ns/DATA 4096/1: \($S.ns_per_packet_4096_over_1 | f), Gb/s 4096/1: \($S.goodput_4096_over_1 | f)",
	    (["QPs", "map MiB", "ns/DATA", "ns/SACK", "Gb/s", "set-up s", "mrcd idle %", "verified"] | @tsv),
	    ($S.points[] | [(.qps | f), (if .map_bytes then .map_bytes / 1048576 else null end | f),
	      (.ns_per_data_packet | f), (.ns_per_sack | f), (.goodput_gbps | f), (.setup_seconds | f),
	      (.agent_idle_cpu_percent | f), (.verified | f)] | @tsv),
	    "@@" end' "$1"
}

# scale.png: ns per DATA packet and per SACK, and map MiB, against QPs (log x).
scale_plot() {
	local r=$OUT/results.json
	jq -e '.scale.qps | length > 0' "$r" > /dev/null 2>&1 || return 0
	jq -r '.scale.points[] | [.qps, (.ns_per_data_packet // "NaN"), (.ns_per_sack // "NaN"),
		(if .map_bytes then .map_bytes / 1048576 else "NaN" end), (.goodput_gbps // "NaN")] |
		map(tostring) | join(" ")' \
		"$r" > "$OUT/scale.dat"
	{
		echo "set terminal pngcairo size 900,500"
		echo "set output '$OUT/scale.png'"
		echo "set title 'bench: scale, one client h1 -> h2 with N QPs ($(date -u +%F))'"
		echo "set logscale x 2; set xlabel 'QPs'; set grid"
		echo "set ylabel 'BPF ns per packet'; set y2label 'map MiB (h2 mrcd)'"
		echo "set ytics nomirror; set y2tics; set yrange [0:*]; set y2range [0:*]; set key center right"
		echo "plot '$OUT/scale.dat' using 1:2 with linespoints title 'ns / DATA (h2 XDP)', \\"
		echo "     '' using 1:3 with linespoints title 'ns / SACK (h1 XDP)', \\"
		echo "     '' using 1:4 axes x1y2 with linespoints title 'map MiB', \\"
		echo "     '' using 1:(\$5 * 100) with linespoints title 'Gb/s x 100 (client, all QPs)'"
	} > "$OUT/scale.gp"
	gnuplot "$OUT/scale.gp" 2>> "$LOG" || say "  warning: gnuplot failed for scale.png (see $LOG)"
}
