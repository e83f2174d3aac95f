#!/usr/bin/env bash
# tools/bench-allreduce with tiny sizes: both systems (libfabric over the
# provider of tests/mpi/provider.sh, and btl tcp) run their allreduce
# steps with a spine blackholed in the middle, every result verified; the
# JSON has every key as a number, says which provider ran, and its
# figures agree with the per-step CSVs; the plot is there. Only that:
# performance is measured by benchmarks, never asserted in tests.
. "$(dirname "$0")/lib.sh"
. "$ROOT/tests/mpi/provider.sh"

TESTS="bench_allreduce.runs bench_allreduce.keys bench_allreduce.consistent bench_allreduce.bad_provider"
missing=$(mpi_missing)
if [ -n "$missing" ]; then
	for t in $TESTS; do skip "$t" "needs $missing (tools/install-deps.sh, make)"; done
	exit 0
fi
PROV=$(mpi_provider)
echo "  bench-allreduce over libfabric provider '$PROV'" >&2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
J=$tmp/results.json
jqt() { jq -e "$@" > /dev/null; }
# 64 KiB steps take 10-20 ms over btl tcp, 2 ms over MRC-XDP: the fault
# after 40 steps leaves 160 to overlap it, whatever the fault's delay.
STEPS=200 FAULT_AT=40

begin bench_allreduce.runs
"$ROOT/tools/bench-allreduce" --json --provider "$PROV" --steps $STEPS --fault-at $FAULT_AT --warmup 1 --size 64k \
	--fault-s 0.5 --planes 1 --out "$tmp" --name "bar$$" > "$tmp/stdout" 2> "$tmp/stderr"
rc=$?
check "exit status 0 (got $rc)" eq "$rc" 0
[ $rc -eq 0 ] || tail -n 20 "$tmp/stderr" | sed 's/^/    /' >&2
check "stdout is the results.json" cmp -s "$tmp/stdout" "$J"
check "allreduce.png" test -s "$tmp/allreduce.png"
check "says which provider ran" jqt --arg p "$PROV" '.provider == $p and .systems.mrc.provider == $p and .headline.provider == $p' "$J"
check "over_mrc_xdp only for an MRC provider" \
	jqt --argjson m "$(is_mrc_provider "$PROV" && echo true || echo false)" '.over_mrc_xdp == $m and .headline.over_mrc_xdp == $m' "$J"
check "both systems verified" jqt '.verified and .systems.mrc.verified and .systems.tcp.verified' "$J"
end

begin bench_allreduce.keys
for s in mrc tcp; do
	for k in steps step_ms_p50 step_ms_p99 step_ms_max fault_steps_ms_max goodput_gbps; do
		check "$s.$k is a number > 0" jqt --arg s "$s" --arg k "$k" '.systems[$s][$k] | type == "number" and . > 0' "$J"
	done
	check "$s: $STEPS steps, 1 of them warm-up" jqt --arg s "$s" --argjson n $STEPS \
		'.systems[$s] | .steps == $n - 1 and .warmup_steps == 1 and .steps_wanted == $n' "$J"
	check "$s: the fault window was recorded" jqt --arg s "$s" '.systems[$s].fault_window_ms >= 500' "$J"
done
for k in step_max_ratio_tcp_over_mrc fault_step_slowdown_mrc fault_step_slowdown_tcp; do
	check "headline.$k is a number > 0" jqt --arg k "$k" '.headline[$k] | type == "number" and . > 0' "$J"
done
check "headline.goal_met is a boolean" jqt '.headline.goal_met | type == "boolean"' "$J"
end

# The figures come from the steps the CSVs recorded (rank 0's clock).
begin bench_allreduce.consistent
for s in mrc tcp; do
	csv=$tmp/$s.csv
	check "$s.csv has $STEPS steps, each ok" eq "$(awk -F, 'NR > 1 && $4 == 1' "$csv" | wc -l)" $STEPS
	max=$(awk -F, 'NR > 2 && $3 > m { m = $3 } END { printf "%.3f", m }' "$csv")
	check "$s: step_ms_max is the CSV's slowest step after warm-up ($max)" \
		jqt --arg s "$s" --argjson m "$max" '(.systems[$s].step_ms_max - $m | fabs) < 0.002' "$J"
	check "$s: fault steps within all steps" jqt --arg s "$s" \
		'.systems[$s] | .fault_steps >= 1 and .fault_steps_ms_max <= .step_ms_max' "$J"
	check "$s: slowdown = fault max / median outside" jqt --arg s "$s" \
		'.systems[$s] | (.fault_step_slowdown - .fault_steps_ms_max / .median_ms_outside_fault | fabs) < 0.01' "$J"
done
check "step_max_ratio = tcp max / mrc max" \
	jqt '(.headline.step_max_ratio_tcp_over_mrc - .systems.tcp.step_ms_max / .systems.mrc.step_ms_max | fabs) < 0.01' "$J"
end

begin bench_allreduce.bad_provider
"$ROOT/tools/bench-allreduce" --provider "nosuch;ofi_rxm" --steps 8 --size 8k --planes 1 --spines 1 \
	--systems mrc --out "$tmp/bad" --name "bab$$" > /dev/null 2> "$tmp/bad.err"
rc=$?
check "exit status 1 (got $rc)" eq "$rc" 1
check "says the provider is not found" grep -q "provider 'nosuch;ofi_rxm' not found" "$tmp/bad.err"
check "no results.json" test ! -e "$tmp/bad/results.json"
end
