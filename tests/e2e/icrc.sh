#!/usr/bin/env bash
# RoCEv2 ICRC end to end (issue 18): mrc-perf --icrc makes both ends' QPs
# MRC_QP_ICRC; a verified transfer crosses a two-plane lab, and a capture
# on the sender (dumpcap, as tshark's capture engine) has a good ICRC on
# every DATA packet, checked by tests/tools/mrc-icrc-check against a
# bit-by-bit reference. The same capture without --icrc has none good, so
# the check can fail. tshark reads the capture as RoCEv2 (InfiniBand over
# UDP 4791): the BTH it decodes is ours.
. "$(dirname "$0")/lib.sh"

TESTS=(icrc.transfer_verified icrc.capture_every_icrc_good
	icrc.without_icrc_none_good icrc.tshark_reads_bth)
if ! command -v dumpcap > /dev/null || ! command -v tshark > /dev/null; then
	for t in "${TESTS[@]}"; do skip "$t" "tshark/dumpcap not installed (tools/install-deps.sh)"; done
	exit 0
fi

LAB_PREFIX=icrc lab_up --hosts 2 --planes 2 --spines 1
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
mrc_up "$tmp"
CHECK="$ROOT/build/tests/mrc-icrc-check"
export HOME="$tmp" XDG_CONFIG_HOME="$tmp"	# no personal Wireshark profile

# capture NAME CLIENT_ARGS...: a transfer from h1 while dumpcap records up
# to 400 MRC packets leaving h1's plane-1 interface into $tmp/NAME.pcap
# (classic pcap, whole frames). The sender's side: the tap sees a packet
# after TC egress wrote its EV and ICRC; at the receiver, XDP has already
# steered it to the socket's port.
capture() {
	local name=$1 pid i
	shift
	lab exec h1 dumpcap -q -P -i p1 -s 0 -c 400 -a duration:30 \
		-f "udp dst port 4791" -w "$tmp/$name.pcap" 2> "$tmp/$name.dumpcap" &
	pid=$!
	BG_PIDS+=("$pid")
	# dumpcap says "Capturing on" once its filter is in place.
	for ((i = 0; i < 50; i++)); do
		grep -q "Capturing on" "$tmp/$name.dumpcap" 2>/dev/null && break
		sleep 0.1
	done
	client "$@"
	local rc=$?
	sleep 0.5
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return $rc
}

begin icrc.transfer_verified
check "64 MiB of 64 KiB WRITEs with --icrc, verified" capture on --icrc --size 64k --bytes 64m --verify
check "verified" eq "$(cj .verified)" true
check "no GSO bursts with ICRC" eq "$(cj .tx_gso_sends)" 0
echo "    $(cj .gbps) Gb/s with ICRC" >&2
end

begin icrc.capture_every_icrc_good
read -r _ data _ good _ bad < <("$CHECK" "$tmp/on.pcap")
echo "    captured $data DATA packets: $good good ICRC, $bad bad" >&2
check "DATA captured" between "${data:-0}" 50 400
check "every ICRC good" eq "${bad:-x}" 0
end

begin icrc.without_icrc_none_good
check "the same transfer without --icrc" capture off --size 64k --bytes 64m --verify
check "verified" eq "$(cj .verified)" true
read -r _ data _ good _ bad < <("$CHECK" "$tmp/off.pcap")
echo "    captured $data DATA packets: $good good ICRC, $bad bad" >&2
check "DATA captured" between "${data:-0}" 50 400
check "no trailer: no ICRC good" eq "${good:-x}" 0
end

# Our opcodes are InfiniBand's manufacturer-specific ones: tshark 4.0's
# dissector decodes the BTH (opcode, destination QP) but neither the rest
# nor the ICRC of such packets, and checks no ICRC of any packet.
begin icrc.tshark_reads_bth
ops=$(tshark -r "$tmp/on.pcap" -d udp.port==4791,infiniband -T fields \
	-e infiniband.bth.opcode 2>/dev/null | sort -u | tr '\n' ' ')
echo "    BTH opcodes tshark decoded: $ops" >&2
check "tshark decodes the BTH of WRITE_MIDDLE (199) or ONLY (202)" \
	grep -Eq '(^| )(199|202)( |$)' <<< "$ops"
end
