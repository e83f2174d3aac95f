#!/usr/bin/env bash
# How libmrc waits and acknowledges (issue 15), by its counters, not by
# the clock: an idle connected QP sleeps (both ends) instead of polling,
# a responder answers the ack requests of a receive batch with one SACK,
# and a sender held by the responder's window sleeps until a share of it
# is acked; the event ring wakes only a reader that is about to sleep.
# The CPU these save is the benchmark's to measure (tools/bench).
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=wts lab_up --hosts 2 --planes 2 --spines 2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
mrc_up "$tmp"

# sj N FILTER: the server's JSON line of its Nth client (1-based).
sj() { sed -n "${1}p" "$tmp/server.json" | jq -r "$2"; }
# server_lines: how many clients the server has reported.
server_lines() { awk 'END { print NR }' "$tmp/server.json"; }
# wait_server_line N: the server's line of its Nth client (5 s at most).
wait_server_line() {
	local i
	for ((i = 0; i < 50; i++)); do
		[ "$(server_lines)" -ge "$1" ] && return 0
		sleep 0.1
	done
	echo "    no server line $1" >&2
	return 1
}

# An idle connected QP: 2 s with nothing to send or receive. Both ends
# must have spent most of it asleep in epoll (sleep_ns), in long sleeps
# (nothing in flight: up to 20 ms each; the 1 ms bound of a QP with
# packets out would take some 2000 of them).
begin waits.idle_qp_sleeps
check "transfer, then 2 s idle" client --size 64k --iters 64 --verify --linger-s 2
check "verified" eq "$(cj .verified)" true
check "client slept" test "$(cj .wait.sleeps)" -ge 1
check "client asleep most of the linger (> 1 s)" \
	test "$(cj .wait.sleep_ns)" -gt 1000000000
check "client's sleeps are long (at most 400 in 2 s)" test "$(cj .wait.sleeps)" -le 400
check "server reported" wait_server_line 1
check "server slept" test "$(sj 1 .wait.sleeps)" -ge 1
check "server asleep most of the linger (> 1 s)" \
	test "$(sj 1 .wait.sleep_ns)" -gt 1000000000
end

# 4 KiB WRITEs, 16 outstanding: each is one packet asking for an ack.
# Without coalescing the server sends a SACK per WRITE (4096); with it,
# the requests of one receive batch share a SACK, and every WRITE still
# completes and every byte arrives.
begin waits.sacks_coalesced
check "4096 small WRITEs" client --size 4096 --iters 4096 --depth 16 --verify
check "verified" eq "$(cj .verified)" true
check "server reported" wait_server_line 2
sent=$(sj 2 .sacks_sent)
coalesced=$(sj 2 .sacks_coalesced)
check "some requests coalesced" test "$coalesced" -gt 0
check "fewer SACKs than WRITEs" test "$sent" -lt 4096
check "every request answered (sent + coalesced >= 4096)" \
	test $((sent + coalesced)) -ge 4096
# The 4096 completions came through the event ring while the client
# polled: it told the kernel it had read them (which lets the next one
# wake it) only before it slept, or after a quarter of the ring, so not
# once a completion (libbpf's reader did: an irq_work each).
pubs=$(cj .wait.ring_publishes)
echo "    client: $pubs ring publishes, $(cj .wait.sleeps) sleeps, $(cj .wait.yields) yields" >&2
# A look before a sleep publishes; one that found work gives the sleep up
# and yields instead (progress.c idle_round). So every publish is a sleep
# or a yield: with the 50 us spin the client sleeps little here (its
# completions come 40-55 us apart) and gives up more looks.
check "ring publishes only around sleeps (and looks given up)" \
	test "$pubs" -le $((2 * $(cj .wait.sleeps) + $(cj .wait.yields) + 8))
check "far fewer publishes than completions" test $((pubs * 8)) -lt 4096
end

# A stream, CPU-bound: the receiver's packets come microseconds apart, so
# its idle spells end within the spin budget. Judged by when it woke (a
# VM's wakeup alone outlasts the budget), the budget sat at its floor and
# the receiver slept for nearly every datagram (16,133 sleeps for 17,476
# datagrams in one GiB), each wakeup an IPI for the sender; judged by the
# packets' arrival stamps it spins them through.
begin waits.streaming_receiver_spins
check "512 MiB, CPU-bound" client --size 1m --bytes 512m --verify
check "verified" eq "$(cj .verified)" true
check "server reported" wait_server_line 3
packets=$(cj .tx_packets)
sleeps=$(sj 3 .wait.sleeps)
echo "    server: $sleeps sleeps for $packets packets; its waits: $(sj 3 '.wait | tojson')" >&2
check "the sender sent packets" test "$packets" -gt 0
check "receiver slept for fewer than 1 in 8 packets ($sleeps of $packets)" \
	test $((sleeps * 8)) -lt "$packets"
end

# A sender held by the responder's window: h1's links at 500 Mb/s, so the
# window fills with packets queued at the shapers. It must sleep until a
# share of what is out is acked (view.wake_acked): neither poll (yields:
# a QP without pacing once took a pace deadline long past for work and
# never slept) nor wake on every SACK the responder sends; and when its
# socket's buffer is full, sleep until it has room.
begin waits.window_full_sleeps
for p in 1 2; do lab fault "p$p-h1" rate 500mbit > /dev/null; done
check "128 MiB through 2 x 500 Mb/s" client --size 4m --bytes 128m --verify
check "verified" eq "$(cj .verified)" true
echo "    client's waits: $(jq -c .wait "$MRC_TMP/c.json")" >&2
check "client slept" test "$(cj .wait.sleeps)" -ge 1
check "client hardly polled (< 10000 idle rounds: $(cj .wait.spins))" \
	test "$(cj .wait.spins)" -lt 10000
check "client hardly yielded (< 1000: $(cj .wait.yields))" test "$(cj .wait.yields)" -lt 1000
# 128 MiB into 2 x 500 Mb/s fills the socket's 8 MiB buffer (the packets
# wait at the shapers): the sender waited for room instead of retrying.
check "client slept on its full socket" test "$(cj .wait.socket_full_sleeps)" -ge 1
check "server reported" wait_server_line 4
sacks=$(sj 4 .sacks_sent)
woken=$(cj .wait.woken)
check "client woken less than once per 4 SACKs ($woken woken, $sacks SACKs)" \
	test $((woken * 4)) -lt "$sacks"
for p in 1 2; do lab fault "p$p-h1" clear > /dev/null; done
end
