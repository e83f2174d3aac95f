#!/usr/bin/env bash
# The libfabric provider `mrc` (build/libfabric/libmrc-fi.so) end to end,
# with libfabric's own stock client fi_pingpong between two lab hosts:
# fi_info lists it (and ofi_rxm layered on it), fi_pingpong runs every
# size 0 B..6 MiB with its data checked (-c) over FI_EP_MSG (`mrc`) and
# FI_EP_RDM (`mrc;ofi_rxm`), beside `tcp` and `tcp;ofi_rxm` in the same
# run (a table of usec/xfer, docs/LIBFABRIC.md); RMA, CM data and error
# entries with tests/tools/mrc-fi-check; and a server killed in the middle
# of a run ends the client with a CQ error instead of a hang; and a spine
# blackholed under a run is survived.
. "$(dirname "$0")/lib.sh"

if ! command -v fi_pingpong > /dev/null || ! command -v fi_info > /dev/null; then
	skip libfabric.stock_clients "fi_pingpong/fi_info missing (package libfabric-bin)"
	exit 0
fi
FI_PROV_DIR="$ROOT/build/libfabric"
[ -f "$FI_PROV_DIR/libmrc-fi.so" ] || { echo "build/libfabric/libmrc-fi.so missing: make" >&2; exit 1; }
export FI_PROVIDER_PATH="$FI_PROV_DIR"

LAB_PREFIX=lfab lab_up --hosts 2 --planes 2 --spines 2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
lab agent start > /dev/null || { echo "mrcd did not start" >&2; exit 1; }
H2=$(lab addr h2 1)
PORT=47600

# pingpong NAME PROVIDER EPTYPE [ARGS]: server on h2, client on h1, both
# checked; the client's table in $tmp/NAME.out. Each run gets its own
# control port (a killed server's may linger).
pingpong() {
	local name=$1 prov=$2 ep=$3 spid rc src
	shift 3
	PORT=$((PORT + 1))
	"$LAB_CMD" exec --name "$LAB" h2 timeout 120 fi_pingpong -p "$prov" -e "$ep" \
		-B "$PORT" "$@" > "$tmp/$name.srv" 2>&1 &
	spid=$!
	BG_PIDS+=("$spid")
	sleep 0.3
	"$LAB_CMD" exec --name "$LAB" h1 timeout 120 fi_pingpong -p "$prov" -e "$ep" \
		-P "$PORT" "$@" "$H2" > "$tmp/$name.out" 2>&1
	rc=$?
	wait "$spid"
	src=$?
	if [ $rc -ne 0 ] || [ $src -ne 0 ]; then
		echo "    $name: client exit $rc, server exit $src" >&2
		sed 's/^/    client: /' "$tmp/$name.out" | tail -5 >&2
		sed 's/^/    server: /' "$tmp/$name.srv" | tail -5 >&2
		return 1
	fi
}

# every_size_acked FILE: lines for 1 B, 64 B, 4 KiB, 64 KiB and 1 MiB,
# each with as many acks as sends ("=N"); none short.
every_size_acked() {
	local s
	for s in 1 64 4k 64k 1m; do
		grep -Eq "^$s +[0-9k]+ +=[0-9k]+ " "$1" || { echo "    no acked line for $s in $1" >&2; return 1; }
	done
	! grep -Eq '^[0-9.]+[kmg]? +[0-9k]+ +[-+]' "$1" || { echo "    unacked sends in $1" >&2; return 1; }
}

begin libfabric.fi_info_lists_mrc
fi_info -p mrc > "$tmp/info" 2>&1
check "fi_info -p mrc lists provider mrc" grep -q '^provider: mrc$' "$tmp/info"
check "an FI_EP_MSG endpoint" grep -q 'type: FI_EP_MSG' "$tmp/info"
fi_info -p "mrc;ofi_rxm" -t FI_EP_RDM > "$tmp/info.rxm" 2>&1
check "ofi_rxm layers FI_EP_RDM on it" grep -q '^provider: mrc;ofi_rxm$' "$tmp/info.rxm"
fi_info -p mrc -t FI_EP_MSG -v > "$tmp/info.v" 2>&1
check "it claims no tagged messages of its own" eq "$(grep -c 'FI_TAGGED' "$tmp/info.v")" 0
end

begin libfabric.pingpong_mrc_msg
check "fi_pingpong -p mrc -e msg -S all -c" pingpong mrc-msg mrc msg -S all -c
check "1 B .. 1 MiB acked, data checked" every_size_acked "$tmp/mrc-msg.out"
end

begin libfabric.pingpong_mrc_rxm_rdm
check "fi_pingpong -p 'mrc;ofi_rxm' -e rdm -S all -c" pingpong mrc-rdm "mrc;ofi_rxm" rdm -S all -c
check "1 B .. 1 MiB acked, data checked" every_size_acked "$tmp/mrc-rdm.out"
end

begin libfabric.pingpong_tcp_baselines
check "fi_pingpong -p tcp -e msg" pingpong tcp-msg tcp msg -S all -c
check "fi_pingpong -p 'tcp;ofi_rxm' -e rdm" pingpong tcp-rdm "tcp;ofi_rxm" rdm -S all -c
check "tcp: every size acked" every_size_acked "$tmp/tcp-msg.out"
check "tcp;ofi_rxm: every size acked" every_size_acked "$tmp/tcp-rdm.out"
end

# The table docs/LIBFABRIC.md shows: usec per transfer (half a round trip).
{
	printf '    %-8s %12s %14s %12s %14s   (usec/xfer)\n' bytes mrc-msg "mrc;ofi_rxm" tcp-msg "tcp;ofi_rxm"
	for s in 1 64 1k 4k 64k 256k 1m 4m; do
		row=()
		for f in mrc-msg mrc-rdm tcp-msg tcp-rdm; do
			row+=("$(awk -v s="$s" '$1 == s { print $7 }' "$tmp/$f.out" 2> /dev/null)")
		done
		printf '    %-8s %12s %14s %12s %14s\n' "$s" "${row[@]}"
	done
} >&2

# What fi_pingpong leaves out (tests/tools/mrc-fi-check): reject with
# CM data, CM data both ways, 1 MiB fi_write placed, fi_writedata's CQ
# data, 1 MiB fi_read, a read with a wrong key as a CQ error FI_EACCES,
# and FI_SHUTDOWN at the peer after fi_shutdown.
begin libfabric.rma_cm_errors
PORT=$((PORT + 1))
"$LAB_CMD" exec --name "$LAB" h2 timeout 60 "$ROOT/build/tests/mrc-fi-check" server "$PORT" \
	> "$tmp/check.srv" 2>&1 &
spid=$!
BG_PIDS+=("$spid")
for ((i = 0; i < 50; i++)); do grep -q ready "$tmp/check.srv" && break; sleep 0.1; done
"$LAB_CMD" exec --name "$LAB" h1 timeout 60 "$ROOT/build/tests/mrc-fi-check" client "$H2" "$PORT" \
	> "$tmp/check.cli" 2>&1
check "mrc-fi-check client" eq "$?" 0
wait "$spid"
check "mrc-fi-check server" eq "$?" 0
for c in reject connected_data write_placed read read_bad_key read_after_error; do
	check "client: $c" grep -qx "ok $c" "$tmp/check.cli"
done
for c in connreq_data writedata shutdown_event; do
	check "server: $c" grep -qx "ok $c" "$tmp/check.srv"
done
grep -h FAIL "$tmp/check.cli" "$tmp/check.srv" | sed 's/^/    /' >&2
end

# FI_EP_RDM both ways at once (mrc;ofi_rxm, as an MPI rank pair would):
# both sides send first, so rxm connects in both directions at the same
# time and settles on one connection (a reject with CM data); 8 tagged
# 100 KiB messages (rxm's rendezvous, our emulated read) each way, checked.
begin libfabric.rdm_both_ways
rm -f "$tmp/n1" "$tmp/n2"
"$LAB_CMD" exec --name "$LAB" h2 timeout 60 "$ROOT/build/tests/mrc-fi-check" rdm-peer \
	"$tmp/n2" "$tmp/n1" 1 > "$tmp/rdm2.out" 2>&1 &
p2=$!
BG_PIDS+=("$p2")
"$LAB_CMD" exec --name "$LAB" h1 timeout 60 "$ROOT/build/tests/mrc-fi-check" rdm-peer \
	"$tmp/n1" "$tmp/n2" 0 > "$tmp/rdm1.out" 2>&1
check "h1's peer" eq "$?" 0
wait "$p2"
check "h2's peer" eq "$?" 0
check "h1 received h2's messages" grep -qx "ok rdm_both_ways" "$tmp/rdm1.out"
check "h2 received h1's messages" grep -qx "ok rdm_both_ways" "$tmp/rdm2.out"
grep -h FAIL "$tmp/rdm1.out" "$tmp/rdm2.out" | sed 's/^/    /' >&2
end

# What MRC is for: a spine of plane 1 blackholed for a second in the
# middle of fi_pingpong over mrc (64 KiB messages, data checked); the QP
# routes around it and the run completes with every message acked.
begin libfabric.spine_blackhole_survived
PORT=$((PORT + 1))
"$LAB_CMD" exec --name "$LAB" h2 timeout 120 fi_pingpong -p mrc -e msg -B "$PORT" -c \
	-S 65536 -I 6000 > "$tmp/bh.srv" 2>&1 &
spid=$!
BG_PIDS+=("$spid")
sleep 0.3
"$LAB_CMD" exec --name "$LAB" h1 timeout 120 fi_pingpong -p mrc -e msg -P "$PORT" -c \
	-S 65536 -I 6000 "$H2" > "$tmp/bh.out" 2>&1 &
cpid=$!
BG_PIDS+=("$cpid")
sleep 1
lab fault p1-s1 blackhole
sleep 1
lab fault p1-s1 clear
wait "$cpid"
check "the client completed" eq "$?" 0
wait "$spid"
check "the server completed" eq "$?" 0
check "every message acked, data checked" grep -Eq '^64k +6k +=6k ' "$tmp/bh.out"
secs=$(awk '$1 == "64k" { sub("s", "", $5); print int($5 * 1000) }' "$tmp/bh.out")
echo "    6000 round trips of 64 KiB in ${secs:-?} ms, spine 1 of plane 1 blackholed for 1 s of them" >&2
check "the fault fell inside the run (it lasted over 2 s)" between "${secs:-0}" 2000 120000
end

# A peer that dies: the server is killed in the middle of 1 MiB messages;
# the client's pending receive must end in a CQ error (the side channel
# closed without a BYE fails the QP), not wait forever.
begin libfabric.peer_killed_cq_error
PORT=$((PORT + 1))
"$LAB_CMD" exec --name "$LAB" h2 fi_pingpong -p mrc -e msg -B "$PORT" -S 1048576 -I 100000 \
	> "$tmp/kill.srv" 2>&1 &
spid=$!
BG_PIDS+=("$spid")
sleep 0.3
"$LAB_CMD" exec --name "$LAB" h1 timeout 60 fi_pingpong -p mrc -e msg -P "$PORT" \
	-S 1048576 -I 100000 "$H2" > "$tmp/kill.out" 2>&1 &
cpid=$!
BG_PIDS+=("$cpid")
sleep 2
kill -9 "$spid" 2> /dev/null
t0=$(date +%s%N)
wait "$cpid"
rc=$?
ms=$((($(date +%s%N) - t0) / 1000000))
echo "    client ended ${ms} ms after the server was killed (exit $rc):" \
	"$(grep -m1 -E 'cq_readerr|error' "$tmp/kill.out")" >&2
check "the client failed (not success, not the 60 s timeout)" between "$rc" 1 123
check "with a CQ error entry" grep -q 'cq_readerr' "$tmp/kill.out"
check "within 5 s" between "$ms" 0 5000
end

# The same with the EQ: a client waiting for a message from a server that
# is killed gets both the CQ error and FI_SHUTDOWN.
begin libfabric.peer_killed_eq_shutdown
PORT=$((PORT + 1))
"$LAB_CMD" exec --name "$LAB" h2 "$ROOT/build/tests/mrc-fi-check" idle-server "$PORT" \
	> "$tmp/idle.srv" 2>&1 &
spid=$!
BG_PIDS+=("$spid")
for ((i = 0; i < 50; i++)); do grep -q ready "$tmp/idle.srv" && break; sleep 0.1; done
"$LAB_CMD" exec --name "$LAB" h1 timeout 60 "$ROOT/build/tests/mrc-fi-check" waiting-client \
	"$H2" "$PORT" > "$tmp/wait.cli" 2>&1 &
cpid=$!
BG_PIDS+=("$cpid")
for ((i = 0; i < 50; i++)); do grep -q connected "$tmp/wait.cli" && break; sleep 0.1; done
kill -9 "$spid" 2> /dev/null
wait "$cpid"
check "mrc-fi-check waiting-client" eq "$?" 0
check "the receive failed" grep -qx "ok peer_death_cq_error" "$tmp/wait.cli"
check "the EQ said FI_SHUTDOWN" grep -qx "ok peer_death_shutdown" "$tmp/wait.cli"
grep -h -E "cq error|FAIL" "$tmp/wait.cli" | sed 's/^/    /' >&2
end
