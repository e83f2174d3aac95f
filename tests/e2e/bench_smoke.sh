#!/usr/bin/env bash
# tools/bench --smoke: the benchmark runs end to end (its own lab, 4 planes,
# goodput CPU-bound and rate-limited, the BPF run-time stats, a 4 KiB
# sweep, the contended, idle, limit and scale sections) and writes a results.json
# with the headline keys as numbers, every transfer verified; a section
# left out gives null keys, never a made-up number.
# Only that: performance is measured by benchmarks, never asserted in tests.
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d) skip=$(mktemp -d)
# The bench runs with kernel.bpf_stats_enabled off whatever it finds: on
# here, so the run shows it turns it off and puts it back.
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
sysctl -q kernel.bpf_stats_enabled=1
trap 'rm -rf "$tmp" "$skip"; sysctl -q kernel.bpf_stats_enabled="$stats_was"' EXIT
J=$tmp/results.json
jqt() { jq -e "$@" > /dev/null; }

begin bench_smoke_runs
# Shorter measurements than --smoke's own (rate-limited runs 0.5 s, not 1;
# 64 MiB CPU-bound runs, not 128; the idle section 1 s a figure, not 2):
# the checks are about what is run and reported, never about the figures.
"$ROOT/tools/bench" --smoke --seconds 0.5 --bytes 64m --idle-seconds 1 --out "$tmp" \
	--name "bsm$$" > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
check "exit status 0 (got $rc)" test "$rc" -eq 0
[ $rc -eq 0 ] || tail -n 20 "$tmp/stderr" | sed 's/^/    /' >&2
check "results.json is JSON" jqt 'type == "object"' "$J"
check "bpf_stats_enabled found on, recorded" jqt '.machine.bpf_stats_enabled_found == 1' "$J"
check "bpf_stats_enabled: turned off for the run (said so)" grep -q 'bpf_stats_enabled was 1: off for this run' "$tmp/stderr"
check "bpf_stats_enabled back on after the run" test "$(sysctl -n kernel.bpf_stats_enabled)" = 1
check "the table was printed" grep -q "== headline" "$tmp/stdout"
check "goodput.png" test -s "$tmp/goodput.png"
check "systems.png" test -s "$tmp/systems.png"
for t in "== contended" "== idle" "== limit"; do
	check "the table '$t' was printed" grep -q "$t" "$tmp/stdout"
done
end

begin bench_smoke_keys
for k in goodput_vs_mptcp goodput_vs_capacity; do
	check "$k is a number" jqt --arg k "$k" '.[$k] | type == "number"' "$J"
done
# Failover is not part of --smoke: the key is there, null.
check "stall_ratio_mptcp_over_mrc present" jqt 'has("stall_ratio_mptcp_over_mrc")' "$J"
for p in mrc_xdp_rx_data mrc_xdp_rx_sack mrc_tc_tx_data xdp_pass tc_pass; do
	check "ns_per_packet.$p.live_ns is a number" \
		jqt --arg p "$p" '.ns_per_packet[$p].live_ns | type == "number"' "$J"
	check "ns_per_packet.$p has test_run_ns" jqt --arg p "$p" '.ns_per_packet[$p] | has("test_run_ns")' "$J"
done
end

# Issue 15's keys (docs/PERFORMANCE.md defines each).
ISSUE15_KEYS="goodput_vs_tcp goodput_vs_mptcp cpu_per_gb_tcp_over_mrc
	cpu_per_gb_tcp_over_mrc_best_round
	rate_limited_cpu_per_gb_mptcp_over_mrc small_write_goodput_vs_tcp
	small_write_p50_tcp_over_mrc contended_goodput_vs_capacity
	contended_goodput_vs_capacity_mptcp idle_qp_cpu_percent idle_server_cpu_percent
	idle_agent_cpu_percent goodput_vs_udp_limit cpu_per_gb_udp_limit_over_mrc"
begin bench_smoke_issue15_keys
for k in $ISSUE15_KEYS; do
	check "headline.$k is a number >= 0" jqt --arg k "$k" '.headline[$k] | type == "number" and . >= 0' "$J"
done
check "idle.server_cpu_percent and idle.qp_cpu_percent are numbers, idle.ok" \
	jqt '.idle.ok and (.idle.server_cpu_percent | type == "number") and (.idle.qp_cpu_percent | type == "number")' "$J"
check "idle_qp_cpu_percent is both ends' sum" \
	jqt '(.idle.qp_client_cpu_percent + .idle.qp_server_cpu_percent - .idle.qp_cpu_percent | fabs) < 0.01' "$J"
check "idle: each host's mrcd measured (it runs: more than 0), agent_cpu_percent the busier" \
	jqt '.idle | .agent_h1_cpu_percent > 0 and .agent_h2_cpu_percent > 0 and .agent_cpu_percent == ([.agent_h1_cpu_percent, .agent_h2_cpu_percent] | max)' "$J"
check "contended: mrc, mptcp and tcp, each verified, with the hog" \
	jqt '[.runs[] | select(.section == "contended" and .verified and .hog != null) | .system] | sort == ["mptcp", "mrc", "tcp"]' "$J"
check "contended: capacity 4 x rate for mrc" jqt '.contended.systems.mrc.capacity_gbps == 4 * .goodput.rate_bps / 1e9' "$J"
check "small writes: the sweep ran 4 KiB at depth 16" jqt '.sweep.depth == 16 and .sweep.systems.mrc["4096"].verified and .sweep.systems.tcp["4096"].verified' "$J"
check "limit: UDP with GSO over 4 planes and 1, without over 1, verified" \
	jqt '.limit.udp_gso["4"].verified and .limit.udp_gso["1"].verified and .limit.udp_no_gso["1"].verified' "$J"
check "limit: says whether GRO happened (segments per read)" \
	jqt '.limit.udp_gso["4"] | (.gro | type == "boolean") and (.segs_per_call | type == "number")' "$J"
check "limit: CPU per GB and per segment" \
	jqt '.limit.udp_gso["1"] | (.total_cpu_s_per_gb > 0) and (.cpu_ns_per_segment > 0)' "$J"
check "cpu: total = sender + receiver + softirq" \
	jqt '.cpu.cpu_bound_4_planes.mrc | (.sender_cpu_s_per_gb + .receiver_cpu_s_per_gb + .softirq_s_per_gb - .total_cpu_s_per_gb | fabs) < 0.02' "$J"
end

# Issue 17's scale section: --smoke runs 1 and 64 QPs (tools/bench-scale.sh).
begin bench_smoke_scale
check "scale.png" test -s "$tmp/scale.png"
check "the table '== scale' was printed" grep -q "== scale" "$tmp/stdout"
check "scale: qps [1, 64] ran" jqt '.scale.qps == [1, 64]' "$J"
for k in map_bytes ns_per_data_packet ns_per_sack goodput_gbps setup_seconds; do
	check "scale.$k: one number per point" \
		jqt --arg k "$k" '.scale as $s | ($s[$k] | length) == ($s.qps | length) and all($s[$k][]; type == "number" and . > 0)' "$J"
done
check "scale.agent_idle_cpu_percent: one number per point (the mrcds with the QPs idle)" \
	jqt '.scale as $s | ($s.agent_idle_cpu_percent | length) == ($s.qps | length) and all($s.agent_idle_cpu_percent[]; type == "number" and . >= 0)' "$J"
check "scale: every point verified" jqt '.scale.verified == true' "$J"
check "headline.scale_ns_per_packet_4096_over_1 is there, a number or null" \
	jqt '.headline | has("scale_ns_per_packet_4096_over_1") and (.scale_ns_per_packet_4096_over_1 | type == "number" or . == null)' "$J"
check "scale: the 4096 point was not asked for, so the ratio is null" \
	jqt '.headline.scale_ns_per_packet_4096_over_1 == null' "$J"
end

# The same results without the idle, contended and limit sections (as
# `--only goodput,cpu` would give): their keys are null, the rest stays.
begin bench_smoke_skipped_sections_are_null
cp -r "$tmp/." "$skip"
rm -f "$skip/idle.json"
for f in "$skip/runs/"[0-9][0-9][0-9].json; do
	jq -e '.section == "contended" or .section == "limit"' "$f" > /dev/null && rm -f "$f"
done
"$ROOT/tools/bench" --report --out "$skip" > /dev/null 2>&1
check "bench --report exit 0" eq "$?" 0
check "the sections are null" jqt '.idle == null and .contended == null and .limit == null' "$skip/results.json"
rm -f "$skip/scale.json"
"$ROOT/tools/bench" --report --out "$skip" > /dev/null 2>&1
check "without scale.json: scale null, its headline key null" \
	jqt '.scale == null and (.headline | has("scale_ns_per_packet_4096_over_1")) and .headline.scale_ns_per_packet_4096_over_1 == null' "$skip/results.json"
for k in contended_goodput_vs_capacity contended_goodput_vs_capacity_mptcp idle_qp_cpu_percent \
	idle_server_cpu_percent idle_agent_cpu_percent goodput_vs_udp_limit cpu_per_gb_udp_limit_over_mrc; do
	check "headline.$k null" jqt --arg k "$k" '.headline | has($k) and .[$k] == null' "$skip/results.json"
done
check "headline.goodput_vs_tcp still a number" jqt '.headline.goodput_vs_tcp | type == "number"' "$skip/results.json"
end

begin bench_smoke_machine
for k in kernel cores cpu_model date git_commit; do
	check "machine.$k" jqt --arg k "$k" '.machine[$k] != null' "$J"
done
for s in mrc mrc1ev mptcp tcp; do
	check "goodput $s (4 planes, CPU-bound) is a number" \
		jqt --arg s "$s" '.goodput.cpu_bound["4"][$s].gbps | type == "number"' "$J"
	check "CPU per GB of $s" \
		jqt --arg s "$s" '.cpu.cpu_bound_4_planes[$s].hosts_cpu_s_per_gb | type == "number"' "$J"
done
end

# Every MRC-XDP transfer verified. A TCP/MPTCP baseline may fail only by
# the kernel handing its receiver wrong bytes (MPTCP does, now and then),
# and then the run is on record in failed_runs and replaced by a verified one.
begin bench_smoke_verified
check "runs recorded" jqt '.runs | length >= 9' "$J"
check "every MRC-XDP transfer verified" \
	jqt '[.runs[] | select(.system == "mrc" or .system == "mrc1ev") | .verified] | all' "$J"
check "a failed baseline run is wrong bytes, listed, and replaced by a verified run" \
	jqt '.runs as $R | [.runs[] | select(.verified | not) | . as $f
		| (.error | test("^receiver: byte [0-9]+ differs from the pattern"))
		  and ([$R[] | select(.rerun_of == $f.id and .verified)] | length == 1)] | all' "$J"
check "failed_runs lists exactly the unverified runs" \
	jqt '([.runs[] | select(.verified | not) | .id] | sort) == ([.failed_runs[].id] | sort)' "$J"
check "top-level verified" jqt '.verified == true' "$J"
bad=$(jq -r '.runs[] | select(.verified | not) | "\(.id) \(.system) \(.planes)p \(.mode): \(.error)"' "$J" 2>/dev/null)
[ -z "$bad" ] || echo "    not verified: $bad" >&2
end
