# shellcheck shell=bash
# Sourced by tools/bench (not run on its own): the sections that are not
# plain transfers of the four systems, and their tables and plot:
#   contended  4 x RATE rate-limited with a bounded CPU hog on one core
#   idle       CPU of an idle mrc-perf server and of a connected idle QP
#   limit      the machine's limit: plain UDP with GSO/GRO (mrc-udp-blast)
#   allreduce  tools/bench-allreduce in its own lab: MPI under a fault
#   systems.png  goodput and CPU/GB of the systems side by side
# Uses bench's globals and helpers (say, in_lab, in_host, transfer, run,
# kill_tree, wait_pid, wait_for, CPUWRAP, cpu_s, softirq_s, RUNS, OUT).
# docs/PERFORMANCE.md defines every figure.

BLAST=$ROOT/build/mrc-udp-blast

# --- the CPU hog of the contended runs ---------------------------------------------
# One busy loop pinned to core 1 (core 0 on a one-core machine), started
# right before a contended transfer's server and stopped by its PID right
# after the transfer; `timeout` bounds it should bench itself die. The
# same for every system.
HOG_PID= HOG_CORE=1
hog_start() { # BOUND_SECONDS
	(($(nproc) > 1)) || HOG_CORE=0
	taskset -c "$HOG_CORE" timeout "$1" sh -c 'while :; do :; done' > /dev/null 2>&1 &
	HOG_PID=$!
	PIDS+=("$HOG_PID")
}
hog_stop() {
	[ -n "$HOG_PID" ] || return 0
	kill_tree "$HOG_PID"
	wait "$HOG_PID" 2> /dev/null
	HOG_PID=
}
# contended_block GROUP: the group's systems at MAXP planes, rate-limited,
# each with the hog (transfer_once starts and stops it for this section).
contended_block() {
	local s
	rates on
	for s in $(group_systems "$1"); do
		[ "$s" = mrc1ev ] && continue	# one path: its figure says nothing new here
		run contended "$s" "$MAXP" rate 1048576 "$(rate_bytes "$s" "$MAXP")" 1
	done
}

# --- idle: /proc/PID/stat of an idle server and of a connected idle QP ---------------
# find_proc PID NAME: PID or its first descendant whose command is NAME.
find_proc() {
	local c
	[ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ] && { echo "$1"; return 0; }
	for c in $(cat "/proc/$1/task/"*/children 2>/dev/null); do find_proc "$c" "$2" && return 0; done
	return 1
}
# proc_cpu_ns PID: the process's time on a CPU so far, in ns: the sum over
# its threads of /proc/PID/task/TID/schedstat's first field (the stat
# file's utime + stime count 10 ms ticks: 1% of one CPU over a 1 s window).
proc_cpu_ns() {
	cat "/proc/$1/task/"*/schedstat 2> /dev/null | awk '{ s += $1 } END { printf "%.0f\n", s }'
}
# cpu_percent SECONDS PID...: each process's time on a CPU over the next
# SECONDS, in percent of one CPU.
cpu_percent() {
	local s=$1 p a=() b=() w0 w1 i=0
	shift
	w0=$("$TT" now)
	for p in "$@"; do a+=("$(proc_cpu_ns "$p")"); done
	sleep "$s"
	w1=$("$TT" now)
	for p in "$@"; do b+=("$(proc_cpu_ns "$p")"); done
	for p in "$@"; do
		awk -v a="${a[$i]}" -v b="${b[$i]}" -v w0="$w0" -v w1="$w1" \
			'BEGIN { printf "%.3f\n", (b - a) / (w1 - w0) * 100 }'
		i=$((i + 1))
	done
}
idle_section() {
	local base=$RUNS/idle spid cpid sp cp srv=null cli=null qps=null rc_c=1 rc_s=1 err=
	local agents=() a1=null a2=null
	agent_on
	# The two hosts' mrcds (mrc-lab's agent.pids, h1 first): what the agent
	# costs beside an idle QP.
	mapfile -t agents < "${MRC_LAB_STATE:-/run/mrc-lab}/$LAB/agent.pids" 2> /dev/null
	evp auto
	rates off
	say "== idle: mrc-perf server, then a connected QP, ${IDLE_S} s each"
	in_lab h2 "$PERF" server --once --json > "$base.server.json" 2> "$base.server.err" &
	spid=$!
	PIDS+=("$spid")
	if wait_for "$base.server.err" listening && sp=$(find_proc "$spid" mrc-perf); then
		srv=$(cpu_percent "$IDLE_S" "$sp")
		in_lab h1 "$PERF" client "$H2" --idle $((IDLE_S + 2)) --json --timeout-s $((IDLE_S + 30)) \
			> "$base.client.json" 2> "$base.client.err" &
		cpid=$!
		PIDS+=("$cpid")
		if wait_for "$base.client.err" "idle for" && cp=$(find_proc "$cpid" mrc-perf); then
			sleep 0.5	# past the bring-up
			read -r -d '' cli qps a1 a2 < <(cpu_percent "$IDLE_S" "$cp" "$sp" "${agents[@]:0:2}")
		else
			err="the idle client did not start (see $base.client.err)"
		fi
		wait_pid "$cpid" $((IDLE_S + 40))
		rc_c=$?
	else
		err="the server did not start (see $base.server.err)"
	fi
	wait_pid "$spid" 20
	rc_s=$?
	[ -z "$err" ] && { [ $rc_c -ne 0 ] || [ $rc_s -ne 0 ]; } && err="client exit $rc_c, server exit $rc_s"
	jq -n -c --argjson s "$IDLE_S" --argjson srv "${srv:-null}" --argjson cli "${cli:-null}" \
		--argjson qps "${qps:-null}" --argjson a1 "${a1:-null}" --argjson a2 "${a2:-null}" --arg err "$err" \
		--slurpfile c <(jq -c . "$base.client.json" 2>/dev/null | tail -n 1 | grep . || echo '{}') '
		{seconds: $s, server_cpu_percent: $srv,
		 qp_cpu_percent: (if $cli != null and $qps != null then ($cli + $qps) * 1000 | round / 1000 else null end),
		 qp_client_cpu_percent: $cli, qp_server_cpu_percent: $qps,
		 agent_h1_cpu_percent: $a1, agent_h2_cpu_percent: $a2,
		 agent_cpu_percent: (if $a1 != null and $a2 != null then ([$a1, $a2] | max) else null end),
		 cc_sleeps: $c[0].cc_sleeps, ok: ($err == ""), error: (if $err == "" then null else $err end),
		 method: "time on a CPU of the process (its threads) from /proc/PID/task/*/schedstat over the window, per cent of one CPU; qp: client + server processes (both ends of one idle QP), from 0.5 s after the client went idle (mrc-perf client --idle); agent: each host'"'"'s mrcd over the same window, agent_cpu_percent the busier of the two"}' \
		> "$OUT/idle.json"
	say "  $(jq -c '{server_cpu_percent, qp_cpu_percent, qp_client_cpu_percent, qp_server_cpu_percent, agent_cpu_percent, error}' "$OUT/idle.json")"
	[ -z "$err" ] || SECTION_FAILED=1
}

# --- limit: plain UDP, GSO on send, GRO on receive ------------------------------------
# limit_run ID PLANES GSO(1|0): one verified mrc-udp-blast transfer h1 ->
# h2 over planes 1..PLANES (a socket each), its record in $RUNS/ID.json.
limit_run() {
	local id=$1 n=$2 gso=$3 base p on= from= rc src s0= s1= w0= w1= ga=() sys=udp_gso spid cpid
	((gso)) || { ga=(--gso-segs 1); sys=udp; }
	base=$RUNS/$id.$sys
	for ((p = 1; p <= n; p++)); do on+=$(lab addr h2 "$p"),; from+=$(lab addr h1 "$p"),; done
	in_host h2 bash -c "$CPUWRAP" _ "$base.server.cpu" "$BLAST" recv --on "${on%,}" --json \
		--timeout-s 120 > "$base.server.json" 2> "$base.server.err" &
	spid=$!
	PIDS+=("$spid")
	if wait_for "$base.server.err" listening; then
		s0=$(softirq_s) w0=$("$TT" now)
		in_host h1 bash -c "$CPUWRAP" _ "$base.client.cpu" "$BLAST" send --to "${on%,}" \
			--from "${from%,}" --bytes "$CPU_BYTES" --json --timeout-s 110 "${ga[@]}" \
			> "$base.client.json" 2> "$base.client.err" &
		cpid=$!
		PIDS+=("$cpid")
		wait_pid "$cpid" 130
		rc=$?
		s1=$(softirq_s) w1=$("$TT" now)
		wait_pid "$spid" 20
		src=$?
		[ $rc -eq 0 ] && rc=$src
	else
		kill_tree "$spid"
		rc=1
	fi
	jq -c -n --arg id "$id" --arg sys "$sys" --argjson planes "$n" --argjson rc "$rc" \
		--argjson wall "$(awk -v a="${w0:-0}" -v b="${w1:-0}" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')" \
		--argjson softirq "$(awk -v a="${s0:-0}" -v b="${s1:-0}" 'BEGIN { printf "%.2f", b - a }')" \
		--slurpfile c <(jq -c . "$base.client.json" 2>/dev/null | tail -n 1 | grep . || echo '{}') \
		--slurpfile r <(jq -c . "$base.server.json" 2>/dev/null | tail -n 1 | grep . || echo '{}') \
		--arg ccpu "$(cpu_s "$base.client.cpu")" --arg scpu "$(cpu_s "$base.server.cpu")" '
		def cpu(s): (s | split(" ") | map(select(. != "") | tonumber)) as $v
			| if ($v | length) == 2 then {user_s: $v[0], sys_s: $v[1], total_s: ($v[0] + $v[1])} else null end;
		$c[0] as $c | $r[0] as $r
		| {id: $id, section: "limit", system: $sys, planes: $planes, mode: "cpu", size: $c.seg_bytes,
		   round: 1, bytes: ($r.bytes // 0), verified: (($r.verified // false) and $rc == 0),
		   exit_status: $rc, seconds: ($r.seconds // 0), gbps: ($r.gbps // 0),
		   segments: $r.segments, lost_segments: $r.lost_segments, sends: $c.sends,
		   segs_per_send: $c.segs_per_send, recv_calls: $r.recv_calls, segs_per_call: $r.segs_per_call,
		   max_segs_per_call: $r.max_segs_per_call, gro: $r.gro, gso: $c.gso,
		   sender_cpu: cpu($ccpu), receiver_cpu: cpu($scpu), softirq_s: $softirq, wall_s: $wall,
		   error: ($r.error // $c.error // (if $rc != 0 then "exit \($rc)" else null end))}' \
		> "$RUNS/$id.json"
	say "  $(jq -r '"\(.system) \(.planes)p: \(.gbps * 100 | round / 100) Gb/s, \(if .verified then "verified" else "NOT VERIFIED (" + (.error // "?") + ")" end), \(.segs_per_send // "-") segments per send, \(.segs_per_call // "-") per read (GRO \(if .gro then "yes" else "no" end))"' "$RUNS/$id.json")"
	RUN_N=$((RUN_N + 1))
}
limit_section() {
	agent_off
	rates off
	if [ ! -x "$BLAST" ]; then
		say "== limit: $BLAST not built: \"limit\" has no UDP figure"
		SECTION_FAILED=1
		return
	fi
	say "== limit: plain UDP h1 -> h2 (mrc-udp-blast), GSO + GRO over $MAXP and 1 planes, then no GSO"
	limit_run "$(printf '%03d' "$RUN_N")" "$MAXP" 1
	limit_run "$(printf '%03d' "$RUN_N")" 1 1
	limit_run "$(printf '%03d' "$RUN_N")" 1 0
}

# --- allreduce: MPI allreduce steps under a blackholed spine (its own lab) ----------
# tools/bench-allreduce --json, embedded as it is: the mrc system over
# --mpi-provider, btl tcp beside it. Quick and smoke: fewer, smaller steps.
allreduce_section() {
	local args=(--json --out "$OUT/allreduce" --name "bar$$" --provider "$MPI_PROVIDER") rc
	case $PRESET in
	quick) args+=(--steps 60 --size 2m) ;;
	smoke) args+=(--steps 16 --size 256k --fault-s 1) ;;
	esac
	say "== allreduce: tools/bench-allreduce ${args[*]}"
	"$ROOT/tools/bench-allreduce" "${args[@]}" > "$OUT/allreduce.json" 2>> "$LOG"
	rc=$?
	# Exit 3: it ran, a system was not verified: the JSON says which.
	if { [ $rc -eq 0 ] || [ $rc -eq 3 ]; } && jq -e '.systems' "$OUT/allreduce.json" > /dev/null 2>&1; then
		say "  $(jq -c '.headline' "$OUT/allreduce.json")"
		[ $rc -eq 0 ] || SECTION_FAILED=1
	else
		say "  bench-allreduce failed (exit $rc, see $LOG)"
		echo null > "$OUT/allreduce.json"
		SECTION_FAILED=1
	fi
}

# --- results.json: contended, idle, limit and their headline keys -----------------
# jq definitions bench's results program includes ($R: the runs, $I: idle.json).
EXTRA_JQ='
  def totals: {bytes: (map(.bytes) | add), sender: (map(.sender_cpu.total_s // 0) | add),
	receiver: (map(.receiver_cpu.total_s // 0) | add), softirq: (map(.softirq_s) | add)};
  def total_per_gb: if .bytes > 0 then ((.sender + .receiver + .softirq) / (.bytes / 1e9) | r2) else null end;
  def contended: [$R[] | select(.section == "contended")] as $K
	| if ($K | length) == 0 then null else
	  {rate: $rate, planes: $maxp, hog: "one busy loop (sh) pinned to one core (taskset), bounded by timeout, started before the server and stopped after the transfer, the same for every system",
	   systems: ([$K | group_by(.system)[] | ([.[] | select(.verified)] | max_by(.gbps)) as $b | {key: .[0].system,
		value: (if $b == null then {gbps: null, verified: false, error: .[0].error} else
		  {gbps: ($b.gbps | r2), capacity_gbps: $b.capacity_gbps,
		   of_capacity: ($b.gbps / $b.capacity_gbps | r2), verified: true} end)}] | from_entries)} end;
  def limit_entry: (.[0] | {gbps: (.gbps | r2), verified, seg_bytes: .size, segs_per_send, segs_per_call,
	max_segs_per_call, gro, lost_segments}) + ([.[0]] | totals | {total_cpu_s_per_gb: total_per_gb})
	+ (.[0] | {cpu_ns_per_segment: (if (.segments // 0) > 0 then ((.sender_cpu.total_s + .receiver_cpu.total_s + .softirq_s) / .segments * 1e9 | round) else null end),
		   cpu_ns_per_send: (if (.sends // 0) > 0 then ((.sender_cpu.total_s + .receiver_cpu.total_s + .softirq_s) / .sends * 1e9 | round) else null end)});
  def limit($cpu; $c4): [$R[] | select(.section == "limit")] as $L
	| if ($L | length) == 0 then null else
	  ([$L[] | select(.verified)]) as $V
	  | ([$V[] | select(.system == "udp_gso")]) as $G
	  | ($cpu.mrc // null) as $m
	  | {udp_gso: ([$L[] | select(.system == "udp_gso")] | group_by(.planes) | map({key: (.[0].planes | tostring), value: limit_entry}) | from_entries),
	     udp_no_gso: ([$L[] | select(.system == "udp")] | group_by(.planes) | map({key: (.[0].planes | tostring), value: limit_entry}) | from_entries),
	     best_gbps: ([$G[] | .gbps] | max | r2),
	     best_total_cpu_s_per_gb: ([$G[] | [.] | totals | total_per_gb] | min),
	     tcp_one_stream: (if $cpu.tcp then {gbps: $c4.tcp.gbps, total_cpu_s_per_gb: $cpu.tcp.total_cpu_s_per_gb} else null end),
	     mrc: (if $m then {gbps: $c4.mrc.gbps, total_cpu_s_per_gb: $m.total_cpu_s_per_gb,
		cpu_ns_per_packet: $m.total_cpu_ns_per_packet} else null end),
	     definition: "udp_gso: mrc-udp-blast, segments of the path MTU, up to 64 KiB per sendmsg (UDP_SEGMENT) and UDP_GRO on the receiver, one socket per plane, round-robin; udp_no_gso: one datagram per sendmsg; CPU: sender + receiver processes + the machine softirq; best_*: the best UDP GSO run; in the lab a GSO skb crosses the veths and the fabric whole (per-skb cost, see PERFORMANCE.md)"} end;
  def allreduce_headline($a): {step_max_ratio_tcp_over_mrc: ($a.headline.step_max_ratio_tcp_over_mrc // null),
	fault_step_slowdown_mrc: ($a.headline.fault_step_slowdown_mrc // null),
	allreduce_provider: ($a.provider // null)};
  def extra_headline($cpu; $rcpu; $lim; $sw; $ct):
	{cpu_per_gb_tcp_over_mrc: ratio($cpu.tcp.total_cpu_s_per_gb; $cpu.mrc.total_cpu_s_per_gb),
	 cpu_per_gb_tcp_over_mrc_best_round: ratio($cpu.tcp.best_round_total_cpu_s_per_gb; $cpu.mrc.best_round_total_cpu_s_per_gb),
	 rate_limited_cpu_per_gb_mptcp_over_mrc: ratio($rcpu.mptcp.total_cpu_s_per_gb; $rcpu.mrc.total_cpu_s_per_gb),
	 small_write_goodput_vs_tcp: (if $sw != null and $sw.depth == 16 then ratio($sw.systems.mrc["4096"].gbps; $sw.systems.tcp["4096"].gbps) else null end),
	 small_write_p50_tcp_over_mrc: (if $sw != null and $sw.depth == 16 then ratio($sw.systems.tcp["4096"].lat_p50_us; $sw.systems.mrc["4096"].lat_p50_us) else null end),
	 contended_goodput_vs_capacity: $ct.systems.mrc.of_capacity,
	 contended_goodput_vs_capacity_mptcp: $ct.systems.mptcp.of_capacity,
	 idle_qp_cpu_percent: $I.qp_cpu_percent, idle_server_cpu_percent: $I.server_cpu_percent,
	 idle_agent_cpu_percent: ($I.agent_cpu_percent // null),
	 goodput_vs_udp_limit: (if $lim then ratio($lim.mrc.gbps; $lim.best_gbps) else null end),
	 cpu_per_gb_udp_limit_over_mrc: (if $lim then ratio($lim.best_total_cpu_s_per_gb; $lim.mrc.total_cpu_s_per_gb) else null end)};'

# --- tables and the plot -------------------------------------------------------------
# Lines for bench's table formatter: "#TITLE", tab-separated rows, "@@".
extra_tables() {
	jq -r 'def f: if . == null then "-" elif type == "number" then (. * 100 | round / 100 | tostring) else tostring end;
	  . as $J
	  | (if $J.contended then
	    "#== contended: \($J.contended.planes) x \($J.contended.rate), a CPU hog pinned to one core during each run",
	    (["system", "Gb/s", "capacity", "of capacity", "verified"] | @tsv),
	    ($J.contended.systems | to_entries[] | [.key, (.value.gbps | f), (.value.capacity_gbps | f),
		(.value.of_capacity | f), (.value.verified | f)] | @tsv),
	    "@@" else empty end),
	  (if $J.idle then
	    "#== idle: per cent of one CPU over \($J.idle.seconds) s (schedstat)",
	    (["idle server", "idle QP (both ends)", "client", "server", "mrcd h1", "mrcd h2", "cc_sleeps"] | @tsv),
	    ([($J.idle.server_cpu_percent | f), ($J.idle.qp_cpu_percent | f), ($J.idle.qp_client_cpu_percent | f),
	      ($J.idle.qp_server_cpu_percent | f), ($J.idle.agent_h1_cpu_percent | f),
	      ($J.idle.agent_h2_cpu_percent | f), ($J.idle.cc_sleeps | f)] | @tsv),
	    "@@" else empty end),
	  (if $J.limit then
	    "#== limit: plain UDP h1 -> h2 (mrc-udp-blast) beside MRC-XDP and one TCP stream (CPU: both processes + softirq)",
	    (["run", "Gb/s", "CPU s/GB", "ns/segment", "ns/send", "segs/send", "segs/read", "verified"] | @tsv),
	    ((["udp_gso", "udp_no_gso"][] as $k | $J.limit[$k] | to_entries[] |
	      ["\($k) \(.key)p", (.value.gbps | f), (.value.total_cpu_s_per_gb | f), (.value.cpu_ns_per_segment | f),
	       (.value.cpu_ns_per_send | f), (.value.segs_per_send | f), (.value.segs_per_call | f), (.value.verified | f)] | @tsv),
	     (["tcp (one stream) 4p", ($J.limit.tcp_one_stream.gbps | f), ($J.limit.tcp_one_stream.total_cpu_s_per_gb | f)] | @tsv),
	     (["mrc 4p", ($J.limit.mrc.gbps | f), ($J.limit.mrc.total_cpu_s_per_gb | f), ($J.limit.mrc.cpu_ns_per_packet | f)] | @tsv)),
	    "@@" else empty end),
	  (if ($J.allreduce | type) == "object" then
	    "#== allreduce (bench-allreduce, its own lab): mrc system over provider \($J.allreduce.provider)\(if $J.allreduce.over_mrc_xdp then "" else " (NOT MRC-XDP)" end), \($J.allreduce.config.fault)",
	    (["system", "steps", "p50 ms", "p99 ms", "max ms", "fault max ms", "slowdown", "Gb/s", "verified"] | @tsv),
	    ($J.allreduce.systems | to_entries[] | [.key + " (" + .value.provider + ")", (.value.steps | f),
	      (.value.step_ms_p50 | f), (.value.step_ms_p99 | f), (.value.step_ms_max | f), (.value.fault_steps_ms_max | f),
	      (.value.fault_step_slowdown | f), (.value.goodput_gbps | f), (.value.verified | f)] | @tsv),
	    "@@" else empty end),
	  (.headline as $h | "#== headline: goodput_vs_mptcp \($J.goodput_vs_mptcp | f) (mean of the rounds \($h.goodput_vs_mptcp_mean_of_rounds | f)), goodput_vs_tcp \($h.goodput_vs_tcp | f), goodput_vs_capacity \($J.goodput_vs_capacity | f), contended \($h.contended_goodput_vs_capacity | f) (MPTCP \($h.contended_goodput_vs_capacity_mptcp | f)), stall_ratio_mptcp_over_mrc \($J.stall_ratio_mptcp_over_mrc | f)",
	   "#+   cpu_per_gb_tcp_over_mrc \($h.cpu_per_gb_tcp_over_mrc | f) (best round \($h.cpu_per_gb_tcp_over_mrc_best_round | f)), rate_limited_cpu_per_gb_mptcp_over_mrc \($h.rate_limited_cpu_per_gb_mptcp_over_mrc | f), small_write_goodput_vs_tcp \($h.small_write_goodput_vs_tcp | f), small_write_p50_tcp_over_mrc \($h.small_write_p50_tcp_over_mrc | f)",
	   "#+   idle_qp_cpu_percent \($h.idle_qp_cpu_percent | f), idle_server_cpu_percent \($h.idle_server_cpu_percent | f), idle_agent_cpu_percent \($h.idle_agent_cpu_percent | f), goodput_vs_udp_limit \($h.goodput_vs_udp_limit | f), cpu_per_gb_udp_limit_over_mrc \($h.cpu_per_gb_udp_limit_over_mrc | f)",
	   "#+   step_max_ratio_tcp_over_mrc \($h.step_max_ratio_tcp_over_mrc | f), fault_step_slowdown_mrc \($h.fault_step_slowdown_mrc | f) (allreduce over \($h.allreduce_provider | f))",
	   "#+   every transfer verified: \($J.verified)\(($J.failed_runs // []) as $x | if ($x | length) > 0 then " (failed runs: " + ([$x[] | "\(.id) \(.system) \(.planes)p \(.mode)" + (if .rerun then ", run again as \(.rerun)" else "" end)] | join("; ")) + ")" else "" end)",
	   "@@")' "$1"
}
# systems.png: goodput (4 planes, CPU-bound, best round) and CPU s/GB
# (sender, receiver, softirq stacked) of each system, the UDP limit beside.
systems_plot() {
	jq -r '. as $J | ($J.cpu.cpu_bound_4_planes // {}) as $C
		| ([["mrc", "MRC-XDP"], ["mrc1ev", "MRC-1EV"], ["mptcp", "MPTCP"], ["tcp", "TCP"]][]
		   | select($J.goodput.cpu_bound["4"][.[0]] != null)
		   | [.[1], ($J.goodput.cpu_bound["4"][.[0]].gbps // "NaN"), ($C[.[0]].sender_cpu_s_per_gb // "NaN"),
		      ($C[.[0]].receiver_cpu_s_per_gb // "NaN"), ($C[.[0]].softirq_s_per_gb // "NaN")]),
		  (if $J.limit and $J.limit.udp_gso["4"] then ((($J.runs | map(select(.section == "limit" and .system == "udp_gso" and .planes == 4)) | .[0]) as $u
		   | ["UDP-GSO-limit", $u.gbps, ($u.sender_cpu.total_s / ($u.bytes / 1e9)), ($u.receiver_cpu.total_s / ($u.bytes / 1e9)),
		      ($u.softirq_s / ($u.bytes / 1e9))])) else empty end)
		| map(tostring) | join(" ")' "$OUT/results.json" > "$OUT/systems.dat" 2>> "$LOG"
	[ -s "$OUT/systems.dat" ] || return 0
	cat > "$OUT/systems.gp" <<EOF
set terminal pngcairo size 1200,520 font ',10' noenhanced
set output '$OUT/systems.png'
set multiplot layout 1,2 title 'bench: the systems side by side, 4 planes, CPU-bound, MTU 9000, best round ($(date -u +%F))'
set style data histograms; set style fill solid 0.8 border -1; set boxwidth 0.8; set grid ytics
set xtics rotate by -20; set yrange [0:*]; set key top left
set style histogram clustered gap 0.6; set title 'goodput'; set ylabel 'Gb/s'
plot '$OUT/systems.dat' using 2:xtic(stringcolumn(1)) notitle lc rgb '#3060c0'
set style histogram rowstacked; set title 'CPU per GB delivered'; set ylabel 'CPU s / GB'; set key top right
plot '$OUT/systems.dat' using 3:xtic(stringcolumn(1)) title 'sender process' lc rgb '#3060c0', '' using 4 title 'receiver process' lc rgb '#60a060', '' using 5 title 'softirq (machine)' lc rgb '#d08030'
unset multiplot
EOF
	gnuplot "$OUT/systems.gp" 2>> "$LOG" || say "  warning: gnuplot failed for systems.png (see $LOG)"
}
