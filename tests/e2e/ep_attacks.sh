#!/usr/bin/env bash
# Endpoint control messages from a host that is no peer, in a 3-host
# 2-plane lab (mrcd on every host with --peers naming h1's and h2's
# addresses, so h2 is known without a QP and the counters are quiet; a QP
# h1 -> h2 for the port status part):
# h3 sends h1 EV probes, port status "plane 2 down" (to the MRC port, and
# straight to mrcd's control socket) and EV probe responses naming UDP
# port 22 or mrcd's own probe port. None is served: no answer (h1's
# probes_answered does not move), no demotion (no peer_port_down event
# on h1), nothing reaches a listener on UDP
# port 22 or mrcd's probe socket; each refusal is counted (XDP control
# counters probes_refused, port_status_refused, responses_refused; mrcd's
# port_status_ignored). The same packets from h2, h1's QP peer, are
# served: the probe answered, a response naming port 22 refused
# (responses_bad_port) but one naming mrcd's probe port steered to it
# (counted stale: no probe of mrcd's asked for it), and its port status
# demotes h1's plane-2 EVs (peer_port_down). mrc_known_peers on h1 holds
# h2's addresses (configured, and as a QP peer while the QP lives) and
# none of h3's. Needs build/mrcd, mrcctl, mrc-perf.
. "$(dirname "$0")/lib.sh"

CTL="$ROOT/build/mrcctl"
PINS=/sys/fs/bpf/mrc

LAB_PREFIX=epa lab_up --hosts 3 --planes 2 --spines 1 ||
	{ echo "[ep.lab_up] FAIL"; exit 1; }
tmp=$(mktemp -d)
CLIENT_PID="" LISTEN_PID=""
cleanup() {
	[ -n "$CLIENT_PID" ] && kill "$CLIENT_PID" 2>/dev/null
	[ -n "$LISTEN_PID" ] && kill "$LISTEN_PID" 2>/dev/null
	lab agent stop > /dev/null 2>&1
	lab_cleanup
	rm -rf "$tmp"
}
trap cleanup EXIT
mrc_up "$tmp" --peers "$(peer_addrs 2 h1 h2)"

H1=$(lab addr h1 1)
H2P1=$(lab addr h2 1)
H3P1=$(lab addr h3 1)

# ep_send HOST SRC DST DPORT OPCODE KIND PLANE STATUS REPLY_PORT [COUNT]: an
# endpoint message (BTH + 40-byte header, docs/WIRE.md) from HOST's SRC.
ep_send() {
	in_host "$1" python3 -c '
import socket, struct, sys
src, dst, dport, op, kind, plane, status, reply, count = sys.argv[1:10]
bth = struct.pack("!B11x", int(op, 0))
eph = struct.pack("!BBBBIIHHIIQQ", int(kind), int(plane), int(status), 0,
                  0x5eed, 0x1234, int(reply), 0, 0, 0, 0, 0)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((src, 0))
for _ in range(int(count)):
    s.sendto(bth + eph, (dst, int(dport)))
' "$2" "$3" "$4" "$5" "$6" "$7" "$8" "$9" "${10:-1}"
}
EP_REQ=0xd8 EP_RESP=0xd9 PROBE=1 STATUS=2

# ctl_json HOST ARGS...: mrcctl --json in the host.
ctl_json() { local h=$1; shift; lab exec "$h" "$CTL" --json "$@"; }
control() { ctl_json "$1" stats | jq -r ".control.$2"; }
probing() { ctl_json "$1" stats | jq -r ".probing.$2"; }
# wait_value HOST KIND FIELD WANT: the counter reaches WANT within 2 s.
wait_value() {
	local i got
	for ((i = 0; i < 20; i++)); do
		got=$("$2" "$1" "$3")
		[ "$got" = "$4" ] && return 0
		sleep 0.1
	done
	echo "    $1 $3: expected $4, got $got" >&2
	return 1
}
peer_port_down_events() {
	ctl_json h1 events --no-follow --all 2> /dev/null |
		jq -s '[.[] | select(.reason == "peer_port_down")] | length'
}
known_peers() { lab exec h1 bpftool -j map dump pinned "$PINS/mrc_known_peers"; }
# known_why ADDR: why h1's mrc_known_peers holds the IPv4 address (as
# ::ffff:a.b.c.d): MRC_KNOWN_* (1 QP, 2 configured), 0 if it does not.
known_why() {
	local want
	want=$(python3 -c 'import sys, ipaddress; print(list(ipaddress.IPv6Address("::ffff:" + sys.argv[1]).packed))' "$1" | tr -d ' ')
	known_peers | jq --argjson a "$want" '[.[] | select(.formatted.key.addr == $a) | .formatted.value.why][0] // 0'
}
probe_ports() {
	lab exec h1 bpftool -j map dump pinned "$PINS/mrc_probe_ports" |
		jq -r '[.[] | .formatted.key] | sort | join(",")'
}
# The port of mrcd's plane-1 IPv4 probe socket on h1 (bound to $H1).
plane1_probe_port() {
	in_host h1 ss -Hunlp src "$H1" | grep '"mrcd"' | awk '{ n = split($4, a, ":"); print a[n]; exit }'
}
client_alive() {
	kill -0 "$CLIENT_PID" 2> /dev/null && return 0
	sed 's/^/    client: /' "$tmp/long.err" >&2
	return 1
}

begin ep.known_peers
check "h2 known (configured)" eq "$(known_why "$H2P1")" 2
check "h2 plane 2 known (configured)" eq "$(known_why "$(lab addr h2 2)")" 2
check "h3 not known" eq "$(known_why "$H3P1")" 0
port=$(plane1_probe_port)
check "mrcd's plane-1 socket found" test -n "$port"
check "its port among mrc_probe_ports" eval 'case ",$(probe_ports)," in *",$port,"*) true ;; *) false ;; esac'
end

begin ep.probe_from_stranger
answered=$(control h1 probes_answered)
refused=$(control h1 probes_refused)
ep_send h3 "$H3P1" "$H1" 4791 $EP_REQ $PROBE 1 0 40000 5
check "refused, counted" wait_value h1 control probes_refused $((refused + 5))
check "not answered" eq "$(control h1 probes_answered)" "$answered"
ep_send h2 "$H2P1" "$H1" 4791 $EP_REQ $PROBE 1 0 40000 2
check "from h2 (QP peer): answered" wait_value h1 control probes_answered $((answered + 2))
check "from h2: none refused" eq "$(control h1 probes_refused)" $((refused + 5))
end

begin ep.response_to_port_22
# A listener on UDP 22 of h1: it must hear nothing.
in_host h1 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("0.0.0.0", 22))
s.settimeout(3)
try:
    s.recv(2048)
    print("received")
except socket.timeout:
    print("nothing")
' > "$tmp/port22.out" 2>&1 &
LISTEN_PID=$!
sleep 0.3
refused=$(control h1 responses_refused)
bad_port=$(control h1 responses_bad_port)
steered=$(control h1 probe_responses)
stale=$(probing h1 probe_answers_stale)
ep_send h3 "$H3P1" "$H1" 4791 $EP_RESP $PROBE 1 0 22 3
check "from h3: refused (unknown source)" wait_value h1 control responses_refused $((refused + 3))
ep_send h2 "$H2P1" "$H1" 4791 $EP_RESP $PROBE 1 0 22 3
check "from h2 naming 22: refused (not mrcd's port)" wait_value h1 control responses_bad_port $((bad_port + 3))
wait "$LISTEN_PID"
LISTEN_PID=""
check "nothing reached port 22" eq "$(cat "$tmp/port22.out")" nothing
check "none steered" eq "$(control h1 probe_responses)" "$steered"
check "mrcd read none" eq "$(probing h1 probe_answers_stale)" "$stale"
ep_send h3 "$H3P1" "$H1" 4791 $EP_RESP $PROBE 1 0 "$port" 2
check "from h3 naming mrcd's port: refused" wait_value h1 control responses_refused $((refused + 5))
check "... never reached mrcd" eq "$(probing h1 probe_answers_stale)" "$stale"
ep_send h2 "$H2P1" "$H1" 4791 $EP_RESP $PROBE 1 0 "$port" 2
check "from h2 naming mrcd's port: steered" wait_value h1 control probe_responses $((steered + 2))
check "... mrcd read them (no probe of its asked: stale)" wait_value h1 probing probe_answers_stale $((stale + 2))
end

# A live QP h1 -> h2: h1 learns h2 as its peer too.
# Not the lab() function: backgrounded, it is a subshell, and $! would
# not be the process that execs down to mrc-perf (kill would orphan it).
"$LAB_CMD" exec --name "$LAB" h1 "$PERF" client "$H2" --json --timeout-s 120 --size 4k --depth 1 \
	--bytes 64g > "$tmp/long.json" 2> "$tmp/long.err" &
CLIENT_PID=$!
for ((i = 0; i < 100; i++)); do
	QPN1=$(ctl_json h1 qp list 2> /dev/null | jq -r '[.[] | select(.state == "RTS")][0].qpn // empty')
	[ -n "$QPN1" ] && break
	sleep 0.05
done
[ -n "$QPN1" ] || { echo "[ep.live_qp] FAIL"; exit 1; }
sleep 0.1	# mrcd's 2 ms scan has seen the QP

begin ep.qp_peer_known
check "h2 known as QP peer and configured" eq "$(known_why "$H2P1")" 3
check "h3 still not known" eq "$(known_why "$H3P1")" 0
end

begin ep.port_status_from_stranger
check "the QP still runs" client_alive
events=$(peer_port_down_events)
refused=$(control h1 port_status_refused)
ignored=$(probing h1 port_status_ignored)
ep_send h3 "$H3P1" "$H1" 4791 $EP_REQ $STATUS 2 0 0 3
check "to the MRC port: refused by XDP" wait_value h1 control port_status_refused $((refused + 3))
agent_port=$(ctl_json h1 status | jq -r .probing.agent_port)
ep_send h3 "$H3P1" "$H1" "$agent_port" $EP_REQ $STATUS 2 0 0 3
check "to mrcd's socket: ignored by mrcd" wait_value h1 probing port_status_ignored $((ignored + 3))
sleep 0.2
check "no peer_port_down event" eq "$(peer_port_down_events)" "$events"
# The same status from h2, h1's QP peer, demotes: the packet is right.
ep_send h2 "$H2P1" "$H1" 4791 $EP_REQ $STATUS 2 0 0 1
for ((i = 0; i < 20; i++)); do
	[ "$(peer_port_down_events)" -gt "$events" ] && break
	sleep 0.1
done
check "from h2: plane-2 EVs demoted (peer_port_down)" test "$(peer_port_down_events)" -gt "$events"
end

begin ep.transfer_unharmed
check "the transfer ran throughout" client_alive
end
kill "$CLIENT_PID" 2> /dev/null
wait "$CLIENT_PID" 2> /dev/null
CLIENT_PID=""
