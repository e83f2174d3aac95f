#!/usr/bin/env bash
# The reliable transport end to end: mrc-perf WRITEs from h1 into h2's
# memory over one plane, every byte verified by checksum at the server,
# through loss, a temporary and a permanent blackhole, a bad remote
# address and garbage aimed at the MRC port.
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=trn lab_up --hosts 3 --planes 1 --spines 2 --mtu 1500
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
mrc_up "$tmp"

begin transport.sizes_verified
for size in 1 4096 1m 64m; do
	iters=20
	[ "$size" = 64m ] && iters=2
	check "size $size completes" client --size "$size" --iters "$iters" --verify
	check "size $size verified" eq "$(cj .verified)" true
	check "size $size no error" eq "$(cj .error)" null
done
end

begin transport.ipv6
H2_V4=$H2
H2=$(lab addr h2 1 -6)
check "WRITE-IMMs over IPv6" client --size 1m --iters 20 --imm --verify
check "verified" eq "$(cj .verified)" true
H2=$H2_V4
end

begin transport.one_gib
check "1 GiB in 1 MiB WRITEs" client --size 1m --bytes 1g --verify
check "verified" eq "$(cj .verified)" true
check "all bytes" eq "$(cj .bytes)" 1073741824
echo "    1 GiB: $(cj .gbps) Gb/s" >&2
end

begin transport.write_imm_order
check "WRITE-IMM run" client --size 64k --iters 500 --imm --verify
check "verified, immediates in order" eq "$(cj .verified)" true
check "sweep with IMM" client --sweep 1:256k --iters 50 --imm --verify
check "sweep verified" eq "$(cj .verified)" true
check "sweep sizes" eq "$(cj '.sizes | length')" 19
end

begin transport.drop_5pct
lab fault p1-s1 drop 5
lab fault p1-s2 drop 5
check "transfer through 5% loss" client --size 1m --bytes 64m --verify
check "verified" eq "$(cj .verified)" true
lab fault p1-s1 clear
lab fault p1-s2 clear
end

begin transport.blackhole_300ms
client --size 1m --bytes 512m --verify &
cpid=$!
sleep 0.4
lab fault p1-s1 blackhole
lab fault p1-s2 blackhole
sleep 0.3
lab fault p1-s1 clear
lab fault p1-s2 clear
wait "$cpid"
rc=$?
check "transfer survives a 300 ms outage" eq "$rc" 0
check "verified" eq "$(cj .verified)" true
end

begin transport.blackhole_permanent
# Budget: 3 x 4.2 ms + 4.2 ms x (2 + 4 + 8) = ~72 ms of retries. The
# blackhole comes after set-up (the control connection crosses it too).
client --size 64k --bytes 4g --ack-timeout 12 --retry 3 --exp-retry 3 --timeout-s 30 &
cpid=$!
wait_for() { for ((i = 0; i < 100; i++)); do grep -q "$1" "$2" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
check "client connected" wait_for connected "$MRC_TMP/c.err"
sleep 0.3
start=$(date +%s%N)
lab fault p1-s1 blackhole
lab fault p1-s2 blackhole
wait "$cpid"
rc=$?
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "    permanent blackhole: rc $rc after $ms ms: $(cj .error)" >&2
check "client fails" eq "$rc" 1
check "error names the retries" grep -q "retry exceeded" "$MRC_TMP/c.err"
check "ERROR within the retry budget (+ slack)" between "$ms" 50 1500
lab fault p1-s1 clear
lab fault p1-s2 clear
check "fabric usable again" client --size 4096 --iters 10 --verify
end

begin transport.out_of_region
# The server's region is as large as the largest message: --offset moves
# every WRITE past its end. The count starts once the server has reported
# the sessions before (its report of the last one may still be on its way).
sessions=-1
for ((i = 0; i < 40; i++)); do
	now=$(wc -l < "$tmp/server.json")
	[ "$now" = "$sessions" ] && break
	sessions=$now
	sleep 0.5
done
client --size 4096 --iters 4 --offset 4096
rc=$?
check "client fails" eq "$rc" 1
check "remote access error reported" grep -q "remote access error" "$MRC_TMP/c.err"
client --size 4096 --iters 4 --offset 2048
check "straddling the end fails too" eq "$?" 1
# The server reports a session when it notices the client has gone (20 s
# at most: on a loaded machine 5 s were once not enough).
for ((i = 0; i < 400; i++)); do
	[ "$(wc -l < "$tmp/server.json")" -ge $((sessions + 2)) ] && break
	sleep 0.05
done
check "server reported both sessions" between "$(wc -l < "$tmp/server.json")" $((sessions + 2)) $((sessions + 2))
check "server memory untouched" eq \
	"$(tail -n 2 "$tmp/server.json" | jq -rs '[.[].region_modified] | unique | tostring')" '[false]'
check "server saw the access errors" eq \
	"$(tail -n 2 "$tmp/server.json" | jq -rs '[.[].error != null] | unique | tostring')" '[true]'
check "server still serving" client --size 4096 --iters 10 --verify
end

begin transport.garbage_to_port
all_drops() { lab exec h2 bpftool map dump pinned /sys/fs/bpf/mrc/mrc_drops |
	jq '[.[0].values[] | .value | .malformed + .bad_opcode + .unknown_qp +
		.qp_not_ready + .bad_source + .bad_ack] | add'; }
before=$(all_drops)
# Random bytes from the peer host itself and MRC-looking data from a host
# that is not the peer: XDP must drop all of it and count it.
lab exec h1 "$TRAFFIC" send --dst "$H2" --port 4791 --count 10000 --size 100 \
	--random --sport-range 30000:30999 --pps 20000 > /dev/null &
g1=$!
lab exec h3 "$TRAFFIC" send --dst "$H2" --port 4791 --count 10000 --size 200 \
	--mrc-data --sport-range 30000:30999 --pps 20000 > /dev/null &
g2=$!
check "transfer during garbage" client --size 256k --bytes 128m --verify
wait "$g1" "$g2"
check "verified" eq "$(cj .verified)" true
after=$(all_drops)
echo "    garbage drops counted: $((after - before)) of 20000" >&2
check "garbage counted and dropped" between "$((after - before))" 19990 20100
end

begin transport.capture_decodes
if ! command -v tshark > /dev/null; then
	skip transport.capture_decodes "tshark not installed"
else
	# Capture at h1's leaf, where both directions pass unmodified, and
	# decode with our dissector.
	pcap=$tmp/cap.pcap
	HOME=$tmp XDG_CONFIG_HOME=$tmp ip netns exec "$LAB-p1-l1" tshark -q -i h -f "udp port 4791" \
		-c 20000 -a duration:15 -w "$pcap" 2> "$tmp/tshark.err" &
	tpid=$!
	for ((i = 0; i < 100; i++)); do grep -q "Capturing on" "$tmp/tshark.err" && break; sleep 0.05; done
	check "small transfer" client --size 64k --iters 20 --imm --verify
	sleep 0.5
	kill -INT "$tpid" 2>/dev/null
	wait "$tpid" 2>/dev/null
	decoded=$(HOME=$tmp XDG_CONFIG_HOME=$tmp tshark -n -X "lua_script:$ROOT/tools/mrc.lua" -r "$pcap" \
		-T fields -e mrc.opcode 2>&1)
	check "no Lua error" eq "$(grep -ci 'lua' <<< "$decoded")" 0
	check "WRITE packets decoded" between "$(grep -ciE '^0x0*c[6-9ab]$' <<< "$decoded")" 20 100000
	check "SACKs decoded" between "$(grep -ci '^0x0*dc$' <<< "$decoded")" 1 100000
	end
fi
