#!/usr/bin/env bash
# The test runner behind `make test`: C unit tests, BPF unit tests
# (bpf_prog_test_run with crafted packets), then end-to-end tests in labs.
# Every test prints "[name] PASS|FAIL|SKIP"; this script counts them and
# ends with "N passed, N failed, N skipped"; after each file's verdicts
# "-- NAME: S s" gives its wall time. Usage: tests/run.sh [PATTERN]
# runs only the test files whose name contains PATTERN.
set -uo pipefail

cd "$(dirname "$0")/.."
PATTERN=${1:-}
PER_FILE_TIMEOUT=${MRC_TEST_TIMEOUT:-900}
LOG_DIR=build/test-logs
mkdir -p "$LOG_DIR"

passed=0 failed=0 skipped=0
failed_names=()

# Run one test file, echo its verdict lines, count them.
run_one() {
	local name=$1 log
	shift
	log="$LOG_DIR/$name.log"
	echo "== $name"
	local t0=$SECONDS
	timeout --kill-after=30 "$PER_FILE_TIMEOUT" "$@" > "$log.out" 2> "$log"
	local rc=$? lines
	local secs=$((SECONDS - t0))
	lines=$(grep -E '^\[[^]]+\] (PASS|FAIL|SKIP)' "$log.out")
	[ -n "$lines" ] && echo "$lines"
	passed=$((passed + $(grep -c ' PASS$' <<< "$lines")))
	skipped=$((skipped + $(grep -c ' SKIP$' <<< "$lines")))
	local f
	f=$(grep ' FAIL$' <<< "$lines" | sed 's/^\[\(.*\)\] FAIL$/\1/')
	if [ -n "$f" ]; then
		failed=$((failed + $(wc -l <<< "$f")))
		mapfile -t -O "${#failed_names[@]}" failed_names <<< "$f"
	fi
	# A file that died without saying FAIL still failed.
	if [ $rc -ne 0 ] && [ -z "$f" ]; then
		echo "[$name] FAIL (exit $rc)"
		failed=$((failed + 1))
		failed_names+=("$name")
	fi
	if [ $rc -ne 0 ] || [ -n "$f" ]; then
		echo "-- $name stderr (last 40 lines, full log $log):"
		tail -n 40 "$log" | sed 's/^/   /'
	fi
	echo "-- $name: $secs s"
}

mountpoint -q /sys/fs/bpf || mount -t bpf bpf /sys/fs/bpf

for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	[[ -z $PATTERN || $name == *"$PATTERN"* ]] || continue
	run_one "$name" "$t"
done

for t in tests/e2e/*.sh; do
	name=$(basename "$t" .sh)
	[[ $name == lib ]] && continue
	[[ -z $PATTERN || $name == *"$PATTERN"* ]] || continue
	run_one "$name" bash "$t"
done

if [ ${#failed_names[@]} -gt 0 ]; then
	echo "failed: ${failed_names[*]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
