#!/usr/bin/env bash
# tools/bench --smoke: the benchmark runs end to end (its own lab, 4 planes,
# goodput CPU-bound and rate-limited, the BPF run-time stats) and writes a
# results.json with the headline keys as numbers, every transfer verified.
# Only that: performance is measured by benchmarks, never asserted in tests.
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
J=$tmp/results.json
jqt() { jq -e "$@" > /dev/null; }

begin bench_smoke_runs
"$ROOT/tools/bench" --smoke --out "$tmp" --name "bsm$$" > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
check "exit status 0 (got $rc)" test "$rc" -eq 0
[ $rc -eq 0 ] || tail -n 20 "$tmp/stderr" | sed 's/^/    /' >&2
check "results.json is JSON" jqt 'type == "object"' "$J"
check "the table was printed" grep -q "== headline" "$tmp/stdout"
check "goodput.png" test -s "$tmp/goodput.png"
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
