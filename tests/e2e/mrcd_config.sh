#!/usr/bin/env bash
# mrcd --config FILE (mrcd(8), "CONFIGURATION FILE"), the file of
# mrcd.service: every kind of bad file stops mrcd with exit 2 and
# FILE:LINE before it touches anything; a good one sets the planes (a
# blank-separated list) and the limits; options apply in order, so the
# command line after --config overrides the file and before it is
# overridden; SIGHUP (systemctl reload) reads the file again. Needs
# build/mrcd and build/mrcctl.
. "$(dirname "$0")/lib.sh"

MRCD="$ROOT/build/mrcd"
LAB_PREFIX=cfg lab_up --hosts 2 --planes 2 --spines 1
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT

hx() { local h=$1; shift; lab exec "$h" -- "$@"; }
conf() { printf '%s\n' "$@" > "$tmp/mrcd.conf"; chmod 0644 "$tmp/mrcd.conf"; }
status() { hx h1 "$MRCCTL" status --json; }

# bad_file DESCRIPTION EXPECTED_MESSAGE LINE...: mrcd refuses the file.
bad_file() {
	local what=$1 want=$2
	shift 2
	conf "$@"
	hx h1 "$MRCD" --config "$tmp/mrcd.conf" > "$tmp/err" 2>&1
	check "$what: exit 2" eq "$?" 2
	if ! grep -qF -- "$want" "$tmp/err"; then
		check "$what: says '$want'" false
		sed 's/^/    mrcd: /' "$tmp/err" >&2
	fi
}

begin mrcd_config.bad_files
bad_file "unknown key" "mrcd.conf:2: unknown key 'plane'" "# comment" "plane = p1"
bad_file "daemon is not a key" "mrcd.conf:2: unknown key 'daemon'" "planes = p1" "daemon = yes"
bad_file "bad value" "mrcd.conf:3: --max-qps: '0' is not a number in 1..65536" \
	"planes = p1" "" "max-qps = 0"
bad_file "bad flag value" "mrcd.conf:1: verbose: 'loud' is not yes or no" "verbose = loud"
bad_file "key twice" "mrcd.conf:3: 'planes' is given twice (first on line 1)" \
	"planes = p1" "port = 4791" "planes = p2"
bad_file "no =" "mrcd.conf:1: expected 'key = value'" "planes p1"
bad_file "no planes anywhere" "(or 'planes' in the --config file) is required" "port = 4791"
bad_file "unknown interface in the list" "--planes: no interface 'p9'" "planes = p1 p9"
conf "planes = p1"
chmod 0666 "$tmp/mrcd.conf"
hx h1 "$MRCD" --config "$tmp/mrcd.conf" > "$tmp/err" 2>&1
check "world-writable file: exit 2" eq "$?" 2
check "world-writable file: says so" grep -q "group or others may write it" "$tmp/err"
hx h1 "$MRCD" --config "$tmp/none.conf" > "$tmp/err" 2>&1
check "missing file: exit 2" eq "$?" 2
check "missing file: named" grep -qF "$tmp/none.conf: No such file or directory" "$tmp/err"
check "nothing attached by the failures" eq \
	"$(in_host h1 bpftool -j net show dev p1 | jq '.[0].xdp | length')" 0
end

# start_with ARGS...: mrcd in h1 with the arguments, until ready.
start_with() {
	local i
	"$LAB_CMD" exec --name "$LAB" h1 -- "$MRCD" "$@" > "$tmp/mrcd.log" 2>&1 &
	MRCD_PID=$!
	BG_PIDS+=($!)
	for ((i = 0; i < 100; i++)); do
		grep -q '^mrcd: ready' "$tmp/mrcd.log" && return 0
		kill -0 "$MRCD_PID" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/    mrcd: /' "$tmp/mrcd.log" >&2
	return 1
}
stop_mrcd() { kill -TERM "$MRCD_PID"; wait "$MRCD_PID"; }

begin mrcd_config.file_sets_options
conf "# h1's planes" "planes = p1, p2" "max-qps = 32" "max-contexts = 8" \
	"probe-successes = 4" "probe-interval-ms = 20" "port = 4791" "verbose = yes"
check "mrcd starts from the file" start_with --config "$tmp/mrcd.conf"
status > "$tmp/s.json"
check "planes" eq "$(jq -r '[.planes[].name] | join(",")' "$tmp/s.json")" p1,p2
check "max-qps" eq "$(jq -r .limits.max_qps "$tmp/s.json")" 32
check "max-contexts" eq "$(jq -r .limits.max_contexts "$tmp/s.json")" 8
check "probe-successes" eq "$(jq -r .probing.successes "$tmp/s.json")" 4
check "probe-interval-ms" eq "$(jq -r .probing.interval_ms "$tmp/s.json")" 20
check "verbose: attach details said" grep -q "p1: XDP" "$tmp/mrcd.log"
end

begin mrcd_config.reload_reads_the_file
conf "planes = p1 p2" "max-qps = 32" "max-contexts = 8" "probe-successes = 6"
kill -HUP "$MRCD_PID"
for ((i = 0; i < 100; i++)); do
	(( $(grep -c '^mrcd: ready' "$tmp/mrcd.log") >= 2 )) && break
	sleep 0.1
done
check "ready again after SIGHUP" eq "$(grep -c '^mrcd: ready' "$tmp/mrcd.log")" 2
check "probe-successes changed by the reload" eq "$(status | jq -r .probing.successes)" 6
check "same pid" eq "$(status | jq -r .pid)" "$MRCD_PID"
check "clean stop" stop_mrcd
end

begin mrcd_config.command_line_order
conf "planes = p1 p2" "max-qps = 32"
check "mrcd starts" start_with --config "$tmp/mrcd.conf" --max-qps 48 --planes p2
status > "$tmp/s.json"
check "after --config: command line wins (max-qps)" eq "$(jq -r .limits.max_qps "$tmp/s.json")" 48
check "after --config: command line wins (planes)" eq "$(jq -r '[.planes[].name] | join(",")' "$tmp/s.json")" p2
check "clean stop" stop_mrcd
check "mrcd starts" start_with --max-qps 48 --config "$tmp/mrcd.conf"
check "before --config: the file wins" eq "$(status | jq -r .limits.max_qps)" 32
check "clean stop" stop_mrcd
end
