#!/usr/bin/env bash
# Connection keys end to end (issue 16): mrc-perf WRITEs from h1 into h2's
# memory, verified by checksum, while forged MRC packets for the live QPs
# (right QP numbers, PSNs in the window, the server's real region and
# rkey, but a guessed key) arrive from
#   (a) an unprivileged process (uid 65534) on each peer host, sending
#       from the peer's own address: fatal NACKs, SACKs acking everything
#       and probes to the client's QP, WRITEs into the server's region;
#   (b) an off-path host (h3) spoofing the peers' addresses (raw socket).
# Expected: the transfer verified, no QP error, every forged packet that
# reached XDP counted as bad_key. The control: the same fatal NACKs with
# the QP's real key (read from the maps as root) do fail a connection, so
# the forgeries were live packets that only the key kept out.
. "$(dirname "$0")/lib.sh"

FORGE="$ROOT/build/tests/mrc-forge"
NOBODY=65534

LAB_PREFIX=ath lab_up --hosts 3 --planes 1 --spines 1 --mtu 1500 ||
	{ echo "[auth.lab_up] FAIL"; exit 1; }
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
mrc_up "$tmp"
H1=$(lab addr h1 1)

# bad_key HOST: XDP's bad_key drops on HOST, summed over CPUs.
bad_key() {
	lab exec "$1" bpftool map dump pinned /sys/fs/bpf/mrc/mrc_drops |
		jq '[.[0].values[] | .value.bad_key] | add'
}
# qp_field HOST QPN FILTER: one field of `mrcctl qp list --json`.
qp_field() {
	lab exec "$1" "$MRCCTL" qp list --json | jq -r ".[] | select(.qpn == $2) | $3"
}
# forge HOST [unpriv] ARGS...: mrc-forge in HOST (as uid 65534 with
# "unpriv"); prints how many packets it sent.
forge() {
	local host=$1 run=()
	shift
	if [ "$1" = unpriv ]; then
		run=(setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups)
		shift
	fi
	lab exec "$host" "${run[@]}" "$FORGE" "$@" 2>> "$tmp/forge.err" |
		sed -n 's/^sent //p'
}
wait_for() { for ((i = 0; i < 200; i++)); do grep -q "$1" "$2" 2>/dev/null && return 0; sleep 0.05; done; return 1; }
# The numbers of the "connected" line: client QP, server QP, region, rkey.
conn_info() {
	sed -n 's/.*: qp \([0-9]*\) -> \([0-9]*\),.*server region \(0x[0-9a-f]*\) rkey \(0x[0-9a-f]*\).*/\1 \2 \3 \4/p' \
		"$MRC_TMP/c.err" | head -n 1
}

# One WRITE of 4 KiB (3 packets) in flight at a time: the PSNs move slowly
# enough that forgeries sweeping [snd_una, snd_una + 8000) at 100000
# packets/s cross the live window, so every kind is live (control below).
# 100,000 WRITEs outlast the forgeries (a few seconds) several times over;
# the QP's state read after them says so.
SLOW=(--size 4096 --iters 100000 --depth 1 --verify)

begin auth.forged_packets_refused
mark "client started"
client "${SLOW[@]}" &
cpid=$!
check "client connected" wait_for connected "$MRC_TMP/c.err"
read -r CQP SQP VADDR RKEY <<< "$(conn_info)"
check "QP numbers and region read" test -n "$RKEY"
CQP=${CQP:-1}
SQP=${SQP:-1}
sleep 0.3
una=$(qp_field h1 "$CQP" .tx.snd_una)
nxt=$(qp_field h1 "$CQP" .tx.snd_nxt)
cack=$(qp_field h2 "$SQP" .rx.cack)
echo "    client QP $CQP (snd_una $una, snd_nxt $nxt), server QP $SQP (cack $cack)" >&2
k1=$(bad_key h1)
k2=$(bad_key h2)

to_client=(--dst "$H1" --qpn "$CQP" --psn "$una" --spread 8000 --count 8000 --pps 100000)
to_server=(--dst "$H2" --qpn "$SQP" --psn $((cack + 1)) --spread 8000 --count 8000
	--pps 100000 --vaddr "$VADDR" --rkey "$RKEY" --len 512)
# (a) unprivileged, from the peers' own addresses.
a_nack=$(forge h2 unpriv "${to_client[@]}" --kind nack --src "$H2")
a_sack=$(forge h2 unpriv "${to_client[@]}" --kind sack --src "$H2")
a_probe=$(forge h2 unpriv "${to_client[@]}" --kind probe --src "$H2")
a_write=$(forge h1 unpriv "${to_server[@]}" --kind write --src "$H1")
# (b) off path: h3 with the peers' addresses as source.
b_nack=$(forge h3 "${to_client[@]}" --kind nack --spoof-src "$H2")
b_sack=$(forge h3 "${to_client[@]}" --kind sack --spoof-src "$H2")
b_write=$(forge h3 "${to_server[@]}" --kind write --spoof-src "$H1")
check "forgers ran (stderr: $(tr '\n' ' ' < "$tmp/forge.err"))" \
	test -n "$a_nack$a_sack$a_probe$a_write$b_nack$b_sack$b_write"
mark "forgeries sent"
check "client QP still RTS after the forgeries" eq "$(qp_field h1 "$CQP" .state)" RTS
echo "    client QP now at snd_una $(qp_field h1 "$CQP" .tx.snd_una)" >&2
d1=$(( $(bad_key h1) - k1 ))
d2=$(( $(bad_key h2) - k2 ))
n1=$(( ${a_nack:-0} + ${a_sack:-0} + ${a_probe:-0} + ${b_nack:-0} + ${b_sack:-0} ))
n2=$(( ${a_write:-0} + ${b_write:-0} ))
echo "    h1: $d1 bad_key drops of $n1 forged; h2: $d2 of $n2 forged" >&2
wait "$cpid"
rc=$?
mark "client done"
check "transfer completes" eq "$rc" 0
check "verified" eq "$(cj .verified)" true
check "no error" eq "$(cj .error)" null
check "forged to the client: 40000 sent" eq "$n1" 40000
check "forged to the server: 16000 sent" eq "$n2" 16000
# h1's direction carries only SACKs: nothing is lost on the way. Forged
# WRITEs share h2's congested queue with the data: a few may be dropped
# there and never reach XDP; the trimmed ones do and count.
check "every forgery at h1 counted as bad_key" between "$d1" "$n1" "$n1"
check "forgeries at h2 counted as bad_key" between "$d2" $((n2 * 9 / 10)) "$n2"
end

# The server reports the session once the client has gone.
begin auth.server_session_clean
for ((i = 0; i < 100; i++)); do [ -s "$tmp/server.json" ] && break; sleep 0.05; done
check "server session without error" eq "$(tail -n 1 "$tmp/server.json" | jq -r .error)" null
end

# The control: with the QP's real key (root reads it from mrc_qps), a
# fatal NACK ends the connection; without it, they did nothing above. A
# server of its own is stopped (SIGSTOP) so the client's window stands
# still while its retries run: the NACK names a PSN surely in it.
begin auth.right_key_control
lab exec h2 sh -c 'echo $$ > "$1"; exec "$0" server --port 18600 --once --json' \
	"$PERF" "$tmp/spid" > "$tmp/server2.json" 2> "$tmp/server2.err" &
BG_PIDS+=($!)
for ((i = 0; i < 100; i++)); do [ -s "$tmp/spid" ] && break; sleep 0.05; done
spid=$(cat "$tmp/spid" 2>/dev/null)
check "control server started" test -n "$spid"
sleep 0.5
client --port 18600 --size 1m --bytes 3g --verify &
cpid=$!
check "client connected" wait_for connected "$MRC_TMP/c.err"
read -r CQP SQP VADDR RKEY <<< "$(conn_info)"
CQP=${CQP:-1}
sleep 0.2
[ -n "$spid" ] && kill -STOP "$spid"
sleep 0.1
una=$(qp_field h1 "$CQP" .tx.snd_una)
nxt=$(qp_field h1 "$CQP" .tx.snd_nxt)
# The slot (QP number - 1) as the 4 bytes of a little-endian __u32 key.
slot=$((CQP - 1))
key=$(lab exec h1 bpftool -j map lookup pinned /sys/fs/bpf/mrc/mrc_qps \
	key $((slot & 255)) $((slot >> 8 & 255)) $((slot >> 16 & 255)) $((slot >> 24)) |
	jq -r '.formatted.value.local_key // empty')
check "the client QP's key read (keys are never 0)" test "${key:-0}" != 0
check "the window is open" test "$nxt" -gt "$una"
# First a guessed key: still nothing; then the real one.
guess=$(forge h2 unpriv --dst "$H1" --qpn "$CQP" --psn "$una" --count 10 \
	--kind nack --src "$H2")
sleep 0.1
check "guessed-key NACKs: client QP still RTS" eq "$(qp_field h1 "$CQP" .state)" RTS
sent=$(forge h2 unpriv --dst "$H1" --qpn "$CQP" --psn "$una" --count 10 \
	--kind nack --src "$H2" --key "${key:-0}")
wait "$cpid"
rc=$?
[ -n "$spid" ] && kill -CONT "$spid" && kill "$spid" 2>/dev/null
check "10 + 10 NACKs sent" eq "$guess:$sent" 10:10
check "the client fails" eq "$rc" 1
check "with the peer's refusal" grep -q "remote access error" "$MRC_TMP/c.err"
end
