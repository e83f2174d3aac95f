#!/usr/bin/env bash
# mrc-tcp-timeline: one TCP or MPTCP stream of a deterministic pattern,
# verified byte for byte by the server, with a per-millisecond receive
# timeline in the CSV format of `mrc-perf server --timeline` (the TCP and
# MPTCP baselines of tools/bench-failover). MPTCP gets one subflow per
# plane: the server announces its other planes' addresses (`signal`
# endpoints) and the client opens a subflow to each from its own address
# on that plane (the host routes pick it). Message mode (--msg-size) gives
# per-message completion times (the sweep of tools/bench).
. "$(dirname "$0")/lib.sh"

TT="$ROOT/build/mrc-tcp-timeline"
PLANES=2
LAB_PREFIX=ttl lab_up --hosts 2 --planes $PLANES --spines 2 --rate 1gbit
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
H2=$(lab addr h2 1)
MiB=1048576

# start_server NAME ARGS...: `mrc-tcp-timeline server --once` on h2 with
# its timeline in $tmp/NAME.csv, returned once it listens; PID in SPID.
start_server() {
	local name=$1 i
	shift
	in_host h2 "$TT" server --once --json --timeout-s 60 --timeline "$tmp/$name.csv" "$@" \
		> "$tmp/$name.server.json" 2> "$tmp/$name.server.err" &
	SPID=$!
	BG_PIDS+=("$SPID")
	for ((i = 0; i < 100; i++)); do
		grep -q listening "$tmp/$name.server.err" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "    server did not start: $(cat "$tmp/$name.server.err")" >&2
	return 1
}

# wait_server: its exit status, 124 if it is still running after 20 s.
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

run_client() {
	local name=$1
	shift
	in_host h1 timeout 60 "$TT" client "$H2" --json "$@" > "$tmp/$name.json" 2> "$tmp/$name.err"
	local rc=$?
	[ $rc -eq 0 ] || sed 's/^/    client: /' "$tmp/$name.err" >&2
	return $rc
}

tl_header() { head -n 1 "$1"; }
tl_rows() { awk 'END { print NR - 1 }' "$1"; }
tl_bad_rows() {
	awk -F, 'NR > 1 && !($0 ~ /^[0-9]+,[0-9]+$/ && $1 == NR - 2) { bad++ }
		END { print bad + 0 }' "$1"
}
tl_sum() { awk -F, 'NR > 1 { s += $2 } END { printf "%.0f\n", s }' "$1"; }

# check_timeline NAME BYTES: the CSV of a verified session.
check_timeline() {
	local f=$tmp/$1.csv
	check "timeline written" test -s "$f"
	check "header line" eq "$(tl_header "$f")" "time_ms,bytes"
	check "rows present" between "$(tl_rows "$f")" 1 600000
	check "every row INTEGER,INTEGER, time_ms 0, 1, 2, ..." eq "$(tl_bad_rows "$f")" 0
	check "rows add up to the bytes sent" eq "$(tl_sum "$f")" "$2"
	check "first row carries data" test "$(sed -n 2p "$f" | cut -d, -f2)" -gt 0
	check "last row carries data" test "$(tail -n 1 "$f" | cut -d, -f2)" -gt 0
}

begin tcp_timeline.tcp_verified
check "server started" start_server t1
check "client 256 MiB over TCP" run_client c1 --bytes 256m
wait_server
check "server exits 0" eq "$?" 0
check "client: verified (server's verdict)" eq "$(jq -r .verified "$tmp/c1.json")" true
check "server: verified" eq "$(jq -r .verified "$tmp/t1.server.json")" true
check "server: 256 MiB" eq "$(jq -r .bytes "$tmp/t1.server.json")" $((256 * MiB))
check "plain TCP" eq "$(jq -r .mptcp "$tmp/t1.server.json")" false
check "t0_ns is CLOCK_MONOTONIC ns" test "$(jq -r .t0_ns "$tmp/t1.server.json")" -gt 0
check_timeline t1 $((256 * MiB))
echo "    TCP: $(jq -r .gbps "$tmp/c1.json") Gb/s, $(tl_rows "$tmp/t1.csv") rows" >&2
end

begin tcp_timeline.mptcp_one_subflow_per_plane
for h in h1 h2; do in_host "$h" ip mptcp limits set subflow 8 add_addr_accepted 8; done
for ((p = 2; p <= PLANES; p++)); do
	in_host h2 ip mptcp endpoint add "$(lab addr h2 $p)" dev "p$p" signal
done
check "server started" start_server t2 --mptcp
check "client 512 MiB over MPTCP" run_client c2 --bytes 512m --mptcp
wait_server
check "server exits 0" eq "$?" 0
check "client: verified" eq "$(jq -r .verified "$tmp/c2.json")" true
check "server: verified" eq "$(jq -r .verified "$tmp/t2.server.json")" true
check "MPTCP on both ends" eq "$(jq -r .mptcp "$tmp/c2.json")/$(jq -r .mptcp "$tmp/t2.server.json")" true/true
check "one subflow per plane" eq "$(jq -r .subflows "$tmp/c2.json")" $PLANES
planes=$(jq -r '[.subflow_list[] | .local | capture("^198\\.18\\.(?<p>[0-9]+)\\.").p] | unique | length' "$tmp/c2.json")
check "subflows on $PLANES different planes" eq "$planes" $PLANES
busy=$(jq -r '[.subflow_list[] | select(.bytes_acked > 32 * 1048576)] | length' "$tmp/c2.json")
check "every subflow carried > 32 MiB" eq "$busy" $PLANES
check_timeline t2 $((512 * MiB))
echo "    MPTCP: $(jq -r .gbps "$tmp/c2.json") Gb/s;" \
	"$(jq -r '[.subflow_list[] | "\(.local) \(.bytes_acked / 1048576 | floor) MiB"] | join(", ")' "$tmp/c2.json")" >&2
end

begin tcp_timeline.cut_short_is_not_verified
check "server started" start_server t3
in_host h1 timeout 0.5 "$TT" client "$H2" --bytes 10g > /dev/null 2>&1
wait_server
check "server exits 1" eq "$?" 1
check "not verified" eq "$(jq -r .verified "$tmp/t3.server.json")" false
check "error says how far it got" grep -q "after" "$tmp/t3.server.json"
check "timeline still written" eq "$(tl_bad_rows "$tmp/t3.csv")" 0
check "timeline = bytes received" eq "$(tl_sum "$tmp/t3.csv")" "$(jq -r .bytes "$tmp/t3.server.json")"
end

# Message mode: messages of S bytes, D outstanding, the receiving
# application acknowledges each once all its bytes arrived and were checked;
# per-message completion times (post to ack) in the client's JSON.
begin tcp_timeline.messages_with_completion_times
check "server started" start_server t6
check "client 64 MiB as 1 MiB messages, depth 4" run_client c6 --bytes 64m --msg-size 1m --depth 4
wait_server
check "server exits 0" eq "$?" 0
check "client: verified" eq "$(jq -r .verified "$tmp/c6.json")" true
check "server: verified, message size 1 MiB" eq "$(jq -r '"\(.verified) \(.msg_size)"' "$tmp/t6.server.json")" "true $MiB"
check "64 messages, depth 4" eq "$(jq -r '"\(.ops) \(.depth) \(.msg_size)"' "$tmp/c6.json")" "64 4 $MiB"
check "0 < p50 <= p99 <= max" eq "$(jq -r '.lat_p50_us > 0 and .lat_p50_us <= .lat_p99_us and .lat_p99_us <= .lat_max_us' "$tmp/c6.json")" true
check_timeline t6 $((64 * MiB))
check "server started" start_server t7
check "client: 1000 bytes as 300-byte messages (the last one shorter)" run_client c7 --bytes 1000 --msg-size 300
wait_server
check "4 messages, verified" eq "$(jq -r '"\(.ops) \(.verified)"' "$tmp/c7.json")" "4 true"
"$TT" client "$H2" --bytes 1m --depth 4 > /dev/null 2>&1
check "--depth without --msg-size: exit 2" eq "$?" 2
"$TT" client "$H2" --bytes 1m --msg-size 0 > /dev/null 2>&1
check "--msg-size 0: exit 2" eq "$?" 2
echo "    1 MiB messages, depth 4: $(jq -r '"\(.gbps) Gb/s, p50 \(.lat_p50_us) us, p99 \(.lat_p99_us) us"' "$tmp/c6.json")" >&2
end

# A wrong block in the stream is named: the stream's bytes from another
# offset (misplaced data, as a transport that reorders wrongly delivers)
# or foreign bytes. A crafted client sends the header and the pattern
# with one 4 KiB block replaced.
CRAFT='
import socket, struct, sys
host, port, n, at, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
M = (1 << 64) - 1
def word(i):
    x = (i * 0x9e3779b97f4a7c15 + 0x632be59bd9b4e019) & M
    return x ^ (x >> 29)
def stream(off, ln):
    w0 = off // 8
    b = b"".join(struct.pack("<Q", word(w)) for w in range(w0, (off + ln + 7) // 8 + 1))
    return b[off - 8 * w0: off - 8 * w0 + ln]
data = bytearray(stream(0, n))
data[at:at + 4096] = stream(at + 40960 + 3, 4096) if kind == "misplaced" else bytes(range(256)) * 16
s = socket.create_connection((host, port))
s.sendall(b"MRCTTL01" + struct.pack(">Q", n) + bytes(data))
s.recv(64)
'
begin tcp_timeline.wrong_bytes_are_named
for kind in misplaced foreign; do
	check "server started ($kind)" start_server "w$kind" --port 18702
	in_host h1 timeout 20 python3 -c "$CRAFT" "$H2" 18702 262144 100001 "$kind" 2> "$tmp/w$kind.err"
	wait_server
	check "server exits 1 ($kind)" eq "$?" 1
	check "not verified ($kind)" eq "$(jq -r .verified "$tmp/w$kind.server.json")" false
	echo "    $kind: $(jq -r .error "$tmp/w$kind.server.json")" >&2
done
check "first wrong byte found" grep -q "byte 100001 differs" "$tmp/wmisplaced.server.json"
check "misplaced block: its source offset named" \
	grep -q "stream's bytes from offset 140964: misplaced data" "$tmp/wmisplaced.server.json"
check "foreign block: said so" grep -q "byte 100001 differs.*not bytes of the stream" \
	"$tmp/wforeign.server.json"
end

begin tcp_timeline.bounded_and_usage
t0=$("$TT" now)
in_host h2 "$TT" server --once --timeout-s 1 --port 18700 > /dev/null 2>&1
rc=$?
t1=$("$TT" now)
check "server without client exits 1" eq "$rc" 1
check "... after about 1 s" between $(((t1 - t0) / 1000000)) 900 3000
check "now prints increasing ns" test "$t1" -gt "$t0"
in_host h2 "$TT" server --once --timeline "$tmp/no/such/dir/tl.csv" > /dev/null 2> "$tmp/t5.err"
check "unwritable timeline: exit 2" eq "$?" 2
"$TT" client "$H2" > /dev/null 2>&1
check "client without --bytes: exit 2" eq "$?" 2
in_host h1 "$TT" client "$H2" --port 18701 --bytes 1k > /dev/null 2>&1
check "nobody listening: exit 1" eq "$?" 1
end
