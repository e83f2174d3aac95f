#!/usr/bin/env bash
# mrc-perf client --idle S: connect and bring the QP up, post nothing for S
# seconds while polling, then end cleanly (bench's idle section measures
# the CPU both ends take meanwhile). The server's session ends cleanly too
# and the server serves the next client.
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=pid lab_up --hosts 2 --planes 1 --spines 2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
mrc_up "$tmp"
jqt() { jq -e "$@" > /dev/null; }

begin perf_idle.connected_idle_then_clean_end
t0=$(date +%s%N)
client --idle 2
rc=$?
t1=$(date +%s%N)
check "exit 0" eq "$rc" 0
check "it stayed connected about 2 s" between $(((t1 - t0) / 1000000)) 2000 20000
check "JSON: idle_s 2, nothing written, no error" \
	jqt '.idle_s == 2 and .bytes == 0 and .sizes == [] and .error == null' "$tmp/c.json"
check "the QP was up: stderr says connected, then idle" \
	bash -c "grep -q 'connected to' '$tmp/c.err' && grep -q 'idle for 2 s' '$tmp/c.err'"
sleep 0.5
check "the server's session ended without error" \
	jqt -s 'last | .error == null and .bytes_received == 0' "$tmp/server.json"
client --size 64k --bytes 4m --verify
check "the server serves the next client (verified)" jqt '.verified == true' "$tmp/c.json"
end

begin perf_idle.usage
"$PERF" client 198.18.1.2 --idle 3 --verify > /dev/null 2>&1
check "--idle with --verify: exit 2" eq "$?" 2
"$PERF" client 198.18.1.2 --idle 10 --timeout-s 5 > /dev/null 2>&1
check "--idle not below --timeout-s: exit 2" eq "$?" 2
"$PERF" server --idle 3 > /dev/null 2>&1
check "--idle is not a server option: exit 2" eq "$?" 2
end
