#!/usr/bin/env bash
# RoCEv2 ICRC end to end (issue 18): mrc-perf --icrc makes both ends' QPs
# MRC_QP_ICRC; a verified transfer crosses a two-plane lab, and captures
# (dumpcap, as tshark's capture engine) have a good ICRC on every DATA
# packet the sender sent and every SACK/NACK the receiver sent back,
# checked by tests/tools/mrc-icrc-check against a bit-by-bit reference. The same capture without --icrc has none good, so
# the check can fail. tshark reads the capture as RoCEv2 (InfiniBand over
# UDP 4791): the BTH it decodes is ours.
. "$(dirname "$0")/lib.sh"

TESTS=(icrc.transfer_verified icrc.capture_every_icrc_good
	icrc.without_icrc_none_good icrc.tshark_reads_bth icrc.tshark_checks_icrc)
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

# start_dumpcap HOST FILE: dumpcap records up to 400 packets to the MRC
# port leaving or entering HOST's plane-1 interface (classic pcap, whole
# frames), once its filter is in place ("Capturing on"); its PID is in
# $dumpcap_pid.
start_dumpcap() {
	local host=$1 file=$2 i
	lab exec "$host" dumpcap -q -P -i p1 -s 0 -c 400 -a duration:30 \
		-f "udp dst port 4791" -w "$file" 2> "$file.log" &
	dumpcap_pid=$!
	BG_PIDS+=("$dumpcap_pid")
	for ((i = 0; i < 50; i++)); do
		grep -q "Capturing on" "$file.log" 2>/dev/null && break
		sleep 0.1
	done
}

# capture NAME CLIENT_ARGS...: a transfer from h1 while h1's capture
# ($tmp/NAME.pcap) records the DATA it sends and h2's ($tmp/NAME-acks.pcap)
# the SACKs and NACKs it sends back. A tap sees a packet leaving after TC
# egress wrote its EV and ICRC; arriving, XDP has already steered DATA to
# the socket's port and consumed the acknowledgements, so each capture
# holds its host's own packets.
capture() {
	local name=$1 pid1 pid2
	shift
	start_dumpcap h1 "$tmp/$name.pcap"
	pid1=$dumpcap_pid
	start_dumpcap h2 "$tmp/$name-acks.pcap"
	pid2=$dumpcap_pid
	client "$@"
	local rc=$?
	sleep 0.5
	kill "$pid1" "$pid2" 2>/dev/null
	wait "$pid1" "$pid2" 2>/dev/null
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
read -r _ acks _ good _ bad < <("$CHECK" --acks "$tmp/on-acks.pcap")
echo "    captured $acks SACKs/NACKs: $good good ICRC, $bad bad" >&2
check "SACKs captured" between "${acks:-0}" 5 400
check "every SACK/NACK ICRC good" eq "${bad:-x}" 0
end

begin icrc.without_icrc_none_good
check "the same transfer without --icrc" capture off --size 64k --bytes 64m --verify
check "verified" eq "$(cj .verified)" true
read -r _ data _ good _ bad < <("$CHECK" "$tmp/off.pcap")
echo "    captured $data DATA packets: $good good ICRC, $bad bad" >&2
check "DATA captured" between "${data:-0}" 50 400
check "no trailer: no ICRC good" eq "${good:-x}" 0
read -r _ acks _ good _ bad < <("$CHECK" --acks "$tmp/off-acks.pcap")
echo "    captured $acks SACKs/NACKs: $good good ICRC, $bad bad" >&2
check "SACKs captured" between "${acks:-0}" 5 400
check "no trailer on SACKs: no ICRC good" eq "${good:-x}" 0
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

# tshark_icrc PCAP: "N GOOD BAD" - packets our dissector (tools/mrc.lua,
# preference mrc.icrc on) found with an ICRC, and its verdicts.
tshark_icrc() {
	tshark -n -X "lua_script:$ROOT/tools/mrc.lua" -o mrc.icrc:TRUE -r "$1" \
		-T fields -e mrc.icrc.good 2>/dev/null |
		awk '$1 != "" { n++ } $1 == "True" || $1 == "1" { g++ }
		     $1 == "False" || $1 == "0" { b++ }
		     END { printf "%d %d %d\n", n, g, b }'
}

# Wireshark's own dissector checks no ICRC (above); ours does, in tshark,
# with the preference mrc.icrc: every DATA, SACK and NACK of the --icrc
# captures good, and the captures without --icrc (whose last 4 bytes are
# payload, or SACK fields) all flagged bad.
begin icrc.tshark_checks_icrc
for f in on on-acks off off-acks; do
	read -r n good bad < <(tshark_icrc "$tmp/$f.pcap")
	echo "    tshark + mrc.lua on $f.pcap: $n with an ICRC, $good good, $bad bad" >&2
	check "$f: packets checked" between "$n" 5 400
	case $f in
	on*) check "$f: every ICRC good" eq "$good" "$n" ;;
	off*) check "$f: every ICRC bad" eq "$bad" "$n" ;;
	esac
done
end
