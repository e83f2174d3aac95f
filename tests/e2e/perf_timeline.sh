#!/usr/bin/env bash
# mrc-perf server --timeline: the payload placed in the server's memory per
# millisecond, as CSV. The rows must be gapless (time_ms 0, 1, 2, ...),
# add up to exactly the bytes the client sent and verified, and show an
# outage of the fabric as a run of zero rows.
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=ptl lab_up --hosts 2 --planes 1 --spines 2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
lab agent start > /dev/null || { echo "mrcd did not start" >&2; exit 1; }
H2=$(lab addr h2 1)
MiB=1048576

# start_server NAME: `mrc-perf server --once --timeline $tmp/NAME.csv` on h2,
# returned once it listens; its PID in SPID.
start_server() {
	local i
	"$LAB_CMD" exec --name "$LAB" h2 "$PERF" server --once --json \
		--timeline "$tmp/$1.csv" > "$tmp/$1.server.json" 2> "$tmp/$1.server.err" &
	SPID=$!
	BG_PIDS+=("$SPID")
	for ((i = 0; i < 100; i++)); do
		grep -q "listening" "$tmp/$1.server.err" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "    server did not start: $(cat "$tmp/$1.server.err")" >&2
	return 1
}

# wait_server: the server's exit status (124 if it does not exit in 20 s).
wait_server() {
	local i
	for ((i = 0; i < 200; i++)); do
		kill -0 "$SPID" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$SPID" 2>/dev/null; then
		kill "$SPID"
		wait "$SPID" 2>/dev/null
		return 124
	fi
	wait "$SPID"
}

# run_client NAME ARGS...: a client from h1; JSON in $tmp/NAME.json.
run_client() {
	local name=$1
	shift
	lab exec h1 "$PERF" client "$H2" --json --timeout-s 60 "$@" \
		> "$tmp/$name.json" 2> "$tmp/$name.err"
	local rc=$?
	[ $rc -eq 0 ] || sed 's/^/    client: /' "$tmp/$name.err" >&2
	return $rc
}

# Timeline readers; each prints one number (or the header line).
tl_header() { head -n 1 "$1"; }
tl_rows() { awk 'END { print NR - 1 }' "$1"; }
# Rows that are not "INTEGER,INTEGER" with time_ms one more than the last.
tl_bad_rows() {
	awk -F, 'NR > 1 && !($0 ~ /^[0-9]+,[0-9]+$/ && $1 == NR - 2) { bad++ }
		END { print bad + 0 }' "$1"
}
tl_sum() { awk -F, 'NR > 1 { s += $2 } END { printf "%.0f\n", s }' "$1"; }
tl_nonzero() { awk -F, 'NR > 1 && $2 > 0 { n++ } END { print n + 0 }' "$1"; }
# The longest run of zero rows with data before and after it: a stall
# mid-transfer (not the wait for the first WRITE or the last checksum).
tl_longest_stall() {
	awk -F, 'NR > 1 {
			if ($2 == 0) { if (seen) run++; next }
			if (run > max) max = run
			run = 0; seen = 1
		} END { print max + 0 }' "$1"
}

begin perf_timeline.rows_sum_to_verified_bytes
check "server started" start_server t1
check "client 256 MiB in 1 MiB WRITEs" run_client c1 --size 1m --bytes 256m --verify
wait_server
check "server exits 0" eq "$?" 0
check "client verified" eq "$(jq -r .verified "$tmp/c1.json")" true
check "client sent 256 MiB" eq "$(jq -r .bytes "$tmp/c1.json")" $((256 * MiB))
f=$tmp/t1.csv
check "timeline written" test -s "$f"
check "header line" eq "$(tl_header "$f")" "time_ms,bytes"
check "rows present" between "$(tl_rows "$f")" 1 600000
check "every row INTEGER,INTEGER, time_ms 0, 1, 2, ..." eq "$(tl_bad_rows "$f")" 0
check "bytes add up to the verified total" eq "$(tl_sum "$f")" "$(jq -r .bytes "$tmp/c1.json")"
check "bytes add up to 256 MiB" eq "$(tl_sum "$f")" $((256 * MiB))
check "bytes add up to the server's bytes_received" eq "$(tl_sum "$f")" \
	"$(jq -r .bytes_received "$tmp/t1.server.json")"
check "some millisecond carried data" between "$(tl_nonzero "$f")" 1 600000
gbps=$(jq -r .gbps "$tmp/c1.json")
echo "    256 MiB at $gbps Gb/s: $(tl_rows "$f") rows, $(tl_nonzero "$f") with data," \
	"longest stall $(tl_longest_stall "$f") ms" >&2
end

begin perf_timeline.outage_shows_as_zero_rows
# Long enough that the 300 ms outage falls well inside the transfer: about
# 3 s of data at the rate just measured, 2 GiB at least.
mib=$(awk -v g="$gbps" 'BEGIN { m = int(g * 1e9 * 3 / 8 / 1048576); print m < 2048 ? 2048 : m }')
check "server started" start_server t2
run_client c2 --size 1m --bytes "${mib}m" --verify &
cpid=$!
for ((i = 0; i < 100; i++)); do grep -q connected "$tmp/c2.err" 2>/dev/null && break; sleep 0.05; done
sleep 0.3
lab fault p1-s1 blackhole
lab fault p1-s2 blackhole
sleep 0.3
lab fault p1-s1 clear
lab fault p1-s2 clear
wait "$cpid"
check "transfer survives the outage" eq "$?" 0
wait_server
check "server exits 0" eq "$?" 0
check "client verified" eq "$(jq -r .verified "$tmp/c2.json")" true
f=$tmp/t2.csv
check "header line" eq "$(tl_header "$f")" "time_ms,bytes"
check "rows present" between "$(tl_rows "$f")" 1 600000
check "every row INTEGER,INTEGER, time_ms 0, 1, 2, ..." eq "$(tl_bad_rows "$f")" 0
check "bytes add up to the total" eq "$(tl_sum "$f")" $((mib * MiB))
stall=$(tl_longest_stall "$f")
echo "    $mib MiB: $(tl_rows "$f") rows, longest stall mid-transfer $stall ms" >&2
check "the outage is >= 200 zero rows between data" between "$stall" 200 600000
end

begin perf_timeline.unwritable_file
lab exec h2 "$PERF" server --once --timeline "$tmp/no/such/dir/tl.csv" \
	> /dev/null 2> "$tmp/t3.err"
check "exit 2 at start" eq "$?" 2
check "message names the file" grep -q "no/such/dir/tl.csv" "$tmp/t3.err"
end
