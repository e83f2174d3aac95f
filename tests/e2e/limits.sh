#!/usr/bin/env bash
# mrcd's run-time limits (--max-qps, --max-contexts): bad values are usage
# errors naming the flag; the default sizes the maps for 4,096 QPs and 256
# contexts; with --max-qps 8 --max-contexts 2 a host gives out 8 QP numbers
# (then ENOSPC naming the limit) and 2 contexts (then EMFILE naming it),
# 8 QPs at once carry a verified transfer; a restart (SIGHUP) keeps the
# limits and the QPs; an mrcd asked for other limits than the pins it finds
# refuses, naming the map and what to do; a limit the memory cgroup cannot
# hold is refused before loading. Needs build/mrcd, build/mrc-perf,
# build/tests/mrc-qp-fill.
. "$(dirname "$0")/lib.sh"

MRCD="$ROOT/build/mrcd"
FILL="$ROOT/build/tests/mrc-qp-fill"
PINS=/sys/fs/bpf/mrc
STATE=${MRC_LAB_STATE:-/run/mrc-lab}

LAB_PREFIX=lim lab_up --hosts 2 --planes 1 --spines 1
tmp=$(mktemp -d)
CGROUP=""
cleanup() {
	exec 7>&- 8>&- 2>/dev/null
	lab_cleanup
	[ -n "$CGROUP" ] && rmdir "$CGROUP" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

hx() { local h=$1; shift; lab exec "$h" -- "$@"; }
entries() { hx "$1" bpftool -j map show pinned "$PINS/$2" | jq .max_entries; }
owned_qps() { hx "$1" bpftool -j map dump pinned "$PINS/mrc_qp_owner" | jq length; }
agent_log() { cat "$STATE/$LAB/mrcd-$1.log"; }
has() { grep -qF -- "$2" "$1" || { echo "    '$2' not in $1: $(cat "$1")" >&2; return 1; }; }
# A holder: mrc-qp-fill --hold in h1 with N QPs, fed by fd FD; its output
# in $tmp/hold-NAME once it says "holding" (or ended).
start_holder() {
	local name=$1 n=$2 fifo="$tmp/fifo-$1" i
	mkfifo "$fifo"
	hx h1 "$FILL" --qps "$n" --hold < "$fifo" > "$tmp/hold-$name" 2>&1 &
	BG_PIDS+=($!)
	eval "exec $3>\"$fifo\""
	for ((i = 0; i < 100; i++)); do
		grep -q holding "$tmp/hold-$name" && return 0
		grep -q failed "$tmp/hold-$name" && break
		sleep 0.05
	done
	echo "    holder $name: $(cat "$tmp/hold-$name")" >&2
	return 1
}

# ---- bad values: usage errors (exit 2) naming the flag ------------------------
begin limits.bad_values
for flag in --max-qps --max-contexts; do
	for v in 0 65537 4097x junk -1 ""; do
		[ "$flag" = --max-contexts ] && [ "$v" = 65537 ] && v=4097
		"$MRCD" --planes lo "$flag" "$v" > "$tmp/out" 2> "$tmp/err"
		check "$flag '$v' exits 2" eq "$?" 2
		check "$flag '$v' named" has "$tmp/err" "$flag"
	done
done
"$MRCD" --detach --max-qps 8 > /dev/null 2> "$tmp/err"
check "--detach takes no limits" eq "$?" 2
"$MRCD" --help > "$tmp/help"
check "--help lists --max-qps" has "$tmp/help" "--max-qps N"
check "--help lists --max-contexts" has "$tmp/help" "--max-contexts N"
end

# map_line_ok LOG "N QPs and M contexts" [SUFFIX]: the ready line says
# "maps for N QPs and M contexts: X MiB (planned Y MiBSUFFIX)" with the
# kernel's X within 15% of mrcd's plan Y (per-QP inner maps, created by
# libmrc, come on top of the plan when QPs exist).
map_line_ok() {
	local line x y
	line=$(grep -o "maps for $2: [0-9.]* MiB (planned [0-9.]* MiB${3:-})" "$1" | tail -1)
	[ -n "$line" ] || { echo "    no 'maps for $2: X MiB (planned Y MiB${3:-})' in $1" >&2; return 1; }
	echo "    $line" >&2
	x=$(sed 's/.*: \([0-9.]*\) MiB (planned.*/\1/' <<< "$line")
	y=$(sed 's/.*(planned \([0-9.]*\) MiB.*/\1/' <<< "$line")
	awk -v x="$x" -v y="$y" 'BEGIN { exit !(x > 0 && y > 0 && x <= y * 1.15 && y <= x * 1.15) }'
}

# ---- the default: 4,096 QPs and 256 contexts -----------------------------------
begin limits.default_sizes
if lab agent start > /dev/null; then
	check "mrc_qps has 4096 entries" eq "$(entries h1 mrc_qps)" 4096
	check "mrc_qp_owner has 4096" eq "$(entries h1 mrc_qp_owner)" 4096
	check "mrc_cc_view has 4096" eq "$(entries h1 mrc_cc_view)" 4096
	check "mrc_peers has 4096 x 8" eq "$(entries h1 mrc_peers)" 32768
	check "mrc_ctx_owner has 256" eq "$(entries h1 mrc_ctx_owner)" 256
	check "mrc_events has 256" eq "$(entries h1 mrc_events)" 256
	agent_log h1 > "$tmp/log"
	check "map memory in the ready line, as planned" map_line_ok "$tmp/log" "4096 QPs and 256 contexts"
	sed -n 's/.*\(maps for .*\)/    \1/p' "$tmp/log" >&2
	lab agent stop
else
	check "mrcd starts with the defaults" false
fi
end

# ---- 8 QPs, 2 contexts ----------------------------------------------------------
lab agent start -- --max-qps 8 --max-contexts 2 > /dev/null ||
	{ echo "mrcd --max-qps 8 did not start" >&2; exit 1; }
H2=$(lab addr h2 1)
lab exec h2 "$PERF" server --json > "$tmp/server.json" 2> "$tmp/server.err" &
BG_PIDS+=($!)

begin limits.qps_to_the_limit
check "mrc_qps has 8 entries" eq "$(entries h1 mrc_qps)" 8
hx h1 "$FILL" --qps 9 > "$tmp/fill" 2>&1
check "the 9th QP fails (exit 4)" eq "$?" 4
check "8 created" has "$tmp/fill" "created 8"
check "then ENOSPC" has "$tmp/fill" "failed: ENOSPC"
check "the message names the limit" has "$tmp/fill" "all 8 QP numbers of this host are in use (mrcd --max-qps 8)"
check "all 8 given back" eq "$(owned_qps h1)" 0
end

begin limits.eight_qps_work
# 7 held by one process, the 8th the client's: a verified transfer.
check "7 QPs held" start_holder a 7 7
check "7 numbers owned" eq "$(owned_qps h1)" 7
lab exec h1 "$PERF" client "$H2" --json --timeout-s 30 --size 65536 --iters 64 \
	--verify > "$tmp/c.json" 2> "$tmp/c.err"
check "the 8th QP carries a verified transfer" eq "$?" 0
check "verified" eq "$(jq -r .verified "$tmp/c.json")" true
end

begin limits.contexts_to_the_limit
check "a second context (1 QP: the 8th)" start_holder b 1 8
hx h1 "$FILL" --qps 1 > "$tmp/fill" 2>&1
check "a third process fails (exit 3)" eq "$?" 3
check "EMFILE" has "$tmp/fill" "failed: EMFILE"
check "the message names the limit" has "$tmp/fill" "all 2 context slots of this host are in use by live processes (mrcd --max-contexts 2)"
exec 8>&-
end

begin limits.restart_keeps_limits
before=$(grep -c '^mrcd: ready' "$STATE/$LAB/mrcd-h1.log")
check "SIGHUP restart" lab agent restart
agent_log h1 | tail -n +"$((before + 1))" > "$tmp/log"
check "adopted at 8 QPs, 2 contexts" map_line_ok "$tmp/log" "8 QPs and 2 contexts" ", adopted"
check "mrc_qps still 8" eq "$(entries h1 mrc_qps)" 8
check "the held QPs kept their numbers" eq "$(owned_qps h1)" 7
end
exec 7>&-

begin limits.other_limits_refused
# A crashed mrcd leaves its pins; one asked for other limits must not load.
pid=$(head -1 "$STATE/$LAB/agent.pids")
kill -KILL "$pid"
for ((i = 0; i < 50; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
hx h1 "$MRCD" --planes p1 > /dev/null 2> "$tmp/err"
check "exit 1" eq "$?" 1
check "names the map and its size" has "$tmp/err" "mrc_qp_owner has 8 entries, --max-qps 4096 --max-contexts 256 need 4096"
check "says which limits adopt them" has "$tmp/err" "(--max-qps 8 --max-contexts 2)"
check "says how to remove them" has "$tmp/err" "mrcd --detach --pin-dir $PINS"
check "the pins stay as they were" eq "$(entries h1 mrc_qps)" 8
hx h1 "$MRCD" --detach > /dev/null 2>&1
check "--detach removes them" eq "$(hx h1 sh -c "ls $PINS 2>/dev/null | wc -l")" 0
end
lab agent stop 2> /dev/null

# ---- memory: the memory cgroup, and RLIMIT_MEMLOCK -------------------------------
# A child of our own memory cgroup (v1, or v2 with memory delegated) with a
# 320 MiB limit: --max-qps 65536 (about 2.1 GiB of maps with every QP's
# state maps) must be refused by name, and --max-qps 64 fits, the
# verifier's moment at load included; at 96 MiB the kernel refuses the
# pinned maps of 65536 QPs (about 126 MiB) where mrcd cannot see the cgroup.
own_memory_cgroup() {
	local path base
	path=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3; exit }' /proc/self/cgroup)
	if [ -n "$path" ] && [ -f "/sys/fs/cgroup/memory$path/memory.limit_in_bytes" ]; then
		echo "/sys/fs/cgroup/memory${path%/} memory.limit_in_bytes"
		return
	fi
	path=$(awk -F: '$1 == "0" { print $3; exit }' /proc/self/cgroup)
	for base in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		if grep -qw memory "$base$path/cgroup.subtree_control" 2>/dev/null; then
			echo "$base${path%/} memory.max"
			return
		fi
	done
}

begin limits.memory_cgroup
set -- $(own_memory_cgroup)
if [ $# -ne 2 ] || ! mkdir "$1/mrc-limits-$$" 2>/dev/null; then
	skip limits.memory_cgroup "no memory cgroup of ours to make a child in"
else
	CGROUP="$1/mrc-limits-$$"
	# Room for --max-qps 64 and the verifier's moment at load (mrcd
	# reserves 192 MiB: up to 162 MiB measured), none for 65536 QPs.
	echo $((320 << 20)) > "$CGROUP/$2"
	IN_CGROUP='echo $$ > "$1/cgroup.procs" && shift && exec "$@"'
	# In h1's network namespace only (nsenter keeps /sys/fs/cgroup in
	# sight, ip netns exec remounts /sys), pins in a folder of this test.
	LPINS=/sys/fs/bpf/mrc-limits-$$
	sh -c "$IN_CGROUP" sh "$CGROUP" nsenter --net="/run/netns/$LAB-h1" \
		"$MRCD" --planes p1 --pin-dir "$LPINS" --max-qps 65536 > /dev/null 2> "$tmp/err"
	check "refused before loading: exit 1" eq "$?" 1
	check "names the limits" has "$tmp/err" "cannot size the maps for --max-qps 65536 --max-contexts 256"
	check "names the memory cgroup" has "$tmp/err" "but the memory cgroup allows"
	check "names what to lower" has "$tmp/err" "lower --max-qps"
	check "nothing pinned" eq "$(ls "$LPINS" 2>/dev/null | wc -l)" 0
	sed -n 's/^mrcd: /    /p' "$tmp/err" >&2
	# Where the cgroup is out of sight (a lab host: ip netns exec hides
	# /sys/fs/cgroup), the kernel refuses the maps, and mrcd says why. The
	# pinned maps alone are about 126 MiB at 65536 QPs (each QP's state
	# maps come with the QP, ABI 7), which 320 MiB would hold: 96 MiB here.
	# (A timeout: an mrcd that did start would wait for a signal.)
	echo $((96 << 20)) > "$CGROUP/$2"
	sh -c "$IN_CGROUP" sh "$CGROUP" timeout 60 "$LAB_CMD" exec --name "$LAB" h1 -- \
		"$MRCD" --planes p1 --max-qps 65536 > /dev/null 2> "$tmp/err"
	check "refused by the kernel: exit 1" eq "$?" 1
	check "names the limits and the bytes" grep -Eq "the maps for --max-qps 65536 --max-contexts 256 need [0-9.]+ MiB" "$tmp/err"
	check "and the memory cgroup" has "$tmp/err" "raise the memory cgroup's limit"
	check "nothing pinned in h1" eq "$(hx h1 sh -c "ls $PINS 2>/dev/null | wc -l")" 0
	echo $((320 << 20)) > "$CGROUP/$2"
	# What fits starts in the same cgroup.
	sh -c "$IN_CGROUP" sh "$CGROUP" nsenter --net="/run/netns/$LAB-h1" \
		"$MRCD" --planes p1 --pin-dir "$LPINS" --max-qps 64 > /dev/null 2> "$tmp/err" &
	pid=$!
	for ((i = 0; i < 100; i++)); do grep -q '^mrcd: ready' "$tmp/err" && break; sleep 0.1; done
	check "--max-qps 64 fits and starts" has "$tmp/err" "mrcd: ready"
	check "its maps" has "$tmp/err" "maps for 64 QPs and 256 contexts"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	check "and stops cleanly" eq "$?" 0
	check "its pins removed" eq "$(ls "$LPINS" 2>/dev/null | wc -l)" 0
	end
fi

# Kernels >= 5.11 charge BPF maps to the memory cgroup, not RLIMIT_MEMLOCK
# (what mrcd's messages and mrcd(8) say): a 64 KiB rlimit must not matter.
begin limits.memlock_not_charged
IFS=. read -r major minor _ <<< "$(uname -r)"
if [ "$major" -lt 5 ] || { [ "$major" -eq 5 ] && [ "${minor%%-*}" -lt 11 ]; }; then
	skip limits.memlock_not_charged "kernel $(uname -r) charges RLIMIT_MEMLOCK"
else
	prlimit --memlock=65536:65536 "$LAB_CMD" exec --name "$LAB" h1 -- "$MRCD" --planes p1 \
		--max-qps 64 > /dev/null 2> "$tmp/err" &
	# prlimit execs mrc-lab, which execs down to mrcd: $! is mrcd's pid.
	pid=$!
	for ((i = 0; i < 100; i++)); do grep -q '^mrcd: ready' "$tmp/err" && break; sleep 0.1; done
	check "starts under a 64 KiB RLIMIT_MEMLOCK" has "$tmp/err" "mrcd: ready"
	kill -TERM "$pid" 2>/dev/null
	wait "$pid"
	check "and stops cleanly" eq "$?" 0
	end
fi
