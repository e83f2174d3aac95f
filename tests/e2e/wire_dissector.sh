#!/usr/bin/env bash
# The Wireshark dissector tools/mrc.lua decodes every header of docs/WIRE.md
# exactly: a hand-built pcap (IPv4 WRITE ONLY with IMM, IPv6 SACK, NACK,
# probe, trimmed header, 3 bytes of garbage, EV probe response, port
# status, an EV path probe and the ICMP Time Exceeded quoting it) read
# back with tshark, field by field. Needs no lab; skipped when tshark is
# not installed.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

TESTS=(wire.dissector_loads wire.dissector_data_ipv4 wire.dissector_sack_ipv6
	wire.dissector_nack wire.dissector_probe wire.dissector_trimmed
	wire.dissector_malformed wire.dissector_endpoint wire.dissector_path_probe)

if ! command -v tshark > /dev/null; then
	for t in "${TESTS[@]}"; do skip "$t" "tshark not installed (tools/install-deps.sh)"; done
	exit 0
fi
if ! tshark -v 2>/dev/null | grep -q 'with Lua'; then
	for t in "${TESTS[@]}"; do skip "$t" "this tshark is built without Lua"; done
	exit 0
fi

# Older Wireshark releases refuse -X lua_script for root unless their
# global init.lua allows it; that is the machine's choice, not a failure.
init_lua="$(tshark -G folders 2>/dev/null | awk -F'\t' '/^Global configuration/ { print $2 }')/init.lua"
if [ "$(id -u)" -eq 0 ] && [ -f "$init_lua" ] &&
	grep -Eq '^[[:space:]]*(run_user_scripts_when_superuser|enable_lua)[[:space:]]*=[[:space:]]*false' "$init_lua"; then
	for t in "${TESTS[@]}"; do skip "$t" "$init_lua disables Lua scripts for root"; done
	exit 0
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A private configuration directory: no personal preferences or plugins of
# whoever runs the test (root, usually) change the decode.
mkdir -p "$tmp/home/.config"
export HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config"
LUA="$ROOT/tools/mrc.lua"
PCAP="$tmp/mrc.pcap"

# Packet building: everything is a lowercase hex string until written out.
h8() { printf '%02x' $(($1 & 0xff)); }
h16() { printf '%04x' $(($1 & 0xffff)); }
h24() { printf '%06x' $(($1 & 0xffffff)); }
h32() { printf '%08x' $(($1 & 0xffffffff)); }
le32() { printf '%02x%02x%02x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) $(($1 >> 16 & 255)) $(($1 >> 24 & 255)); }
le64() { echo "$(le32 $(($1 & 0xffffffff)))$(le32 $(($1 >> 32)))"; }

# Internet checksum of a hex string.
csum16() {
	local h=$1 sum=0 i
	((${#h} % 4 == 0)) || h+=00
	for ((i = 0; i < ${#h}; i += 4)); do sum=$((sum + 16#${h:i:4})); done
	while ((sum >> 16)); do sum=$(((sum & 0xffff) + (sum >> 16))); done
	h16 $((~sum & 0xffff))
}

ETH_SRC=020000000001 ETH_DST=020000000002
V4_SRC=c6120101 V4_DST=c6120102                    # 198.18.1.1 -> 198.18.1.2
V6_SRC=fd000001000000000000000000000001 V6_DST=fd000001000000000000000000000002

# ipv4_udp DSCP SPORT DPORT PAYLOAD: Ethernet frame, UDP checksum 0.
ipv4_udp() {
	local dscp=$1 sport=$2 dport=$3 pl=$4 n ip
	n=$((${#pl} / 2))
	ip="45$(h8 $((dscp << 2)))$(h16 $((28 + n)))0000400040110000${V4_SRC}${V4_DST}"
	ip="${ip:0:20}$(csum16 "$ip")${ip:24}"
	echo "${ETH_DST}${ETH_SRC}0800${ip}$(h16 "$sport")$(h16 "$dport")$(h16 $((8 + n)))0000${pl}"
}

# ipv4_hdr TTL PROTO SRC DST LEN: an IPv4 header (DSCP 0, DF) with its checksum.
ipv4_hdr() {
	local ip="4500$(h16 "$5")00004000$(h8 "$1")$(h8 "$2")0000$3$4"
	echo "${ip:0:20}$(csum16 "$ip")${ip:24}"
}

# A path discovery probe (docs/WIRE.md 8a): UDP from EV 0xc0de to the MRC
# port, TTL 2, 4 zero bytes; and the spine's ICMP Time Exceeded quoting it.
PROBE_IP="$(ipv4_hdr 2 17 "$V4_SRC" "$V4_DST" 32)$(h16 0xc0de)$(h16 4791)000c000000000000"
SPINE_V4=c61200fe                                     # 198.18.0.254
icmp_time_exceeded() {
	local body="0b000000""00000000""$1"
	body="${body:0:4}$(csum16 "$body")${body:8}"
	echo "${ETH_DST}${ETH_SRC}0800$(ipv4_hdr 64 1 "$SPINE_V4" "$V4_SRC" $((20 + ${#body} / 2)))${body}"
}

# ipv6_udp TCLASS FLOWLABEL SPORT DPORT PAYLOAD: Ethernet frame, real checksum.
ipv6_udp() {
	local tc=$1 fl=$2 sport=$3 dport=$4 pl=$5 n udp c
	n=$((${#pl} / 2))
	udp="$(h16 "$sport")$(h16 "$dport")$(h16 $((8 + n)))0000${pl}"
	c=$(csum16 "${V6_SRC}${V6_DST}$(h32 $((8 + n)))00000011${udp}")
	[ "$c" = 0000 ] && c=ffff
	udp="${udp:0:12}${c}${udp:16}"
	echo "${ETH_DST}${ETH_SRC}86dd$(h32 $((6 << 28 | tc << 20 | fl)))$(h16 $((8 + n)))1140${V6_SRC}${V6_DST}${udp}"
}

# bth OPCODE DQPN FLAGS PSN (partition key 0xffff)
bth() { echo "$(h8 "$1")00ffff$(h32 "$2")$(h8 "$3")$(h24 "$4")"; }

FRAMES=()
# 1: WRITE ONLY with IMM, ACK_REQ + TS, QP 5, PSN 42, METH 3/7, send_ts
#    0x1234, RETH vaddr 0x00007f0012345678 rkey 0x0a0b0c0d length 16,
#    immediate 0xdeadbeef, 16 bytes of payload.
FRAMES+=("$(ipv4_udp 0 49153 4791 "$(bth 0xcb 5 0xa0 42)00030007""12340000""00007f0012345678""0a0b0c0d""00000010""deadbeef""000102030405060708090a0b0c0d0e0f")")
# 2: SACK over IPv6 (STEV: flow label 0x00001, sport 0xc35a) to QP 9,
#    trigger PSN 336, cack 256, EV 0x0001c35a, bitmap_off 16, M SKIP_ONCE,
#    bitmap 0x8000000000000005 -> PSNs 273, 275, 336; ts_echo 0x1234,
#    ooo 3, rcv_bytes 0x120, penalty 0.
FRAMES+=("$(ipv6_udp 0 0x00001 0xc35a 4791 "$(bth 0xdc 9 0 336)00000100""0001c35a""0010""01""00""80000000""00000005""1234""0003""00000120""00""00""00c8")")
# 3: NACK TRIMMED for PSN 0x123456 of QP 9, cack 0x123400, EV 0xc001.
FRAMES+=("$(ipv4_udp 0 49154 4791 "$(bth 0xdd 9 0 0x123456)00123400""0000c001""01""00""0042")")
# 4: reliability probe, QP 5, oldest unacknowledged PSN 41.
FRAMES+=("$(ipv4_udp 0 49155 4791 "$(bth 0xde 5 0x80 41)")")
# 5: WRITE ONLY (no TSETH, no IMM) cut to its 32 header bytes, DSCP 0x2c.
FRAMES+=("$(ipv4_udp 0x2c 49156 4791 "$(bth 0xca 5 0 7)00000008""0000000000100000""00000042""00001000")")
# 6: 3 bytes of garbage.
FRAMES+=("$(ipv4_udp 0 49157 4791 cb00ff)")
# 7: EV probe response: plane 3, request 77, EV 0xc123, reply port 40404,
#    responder 312 ns, sent at 1000 ns, back at 24456 ns (host order).
FRAMES+=("$(ipv4_udp 0 0xc123 4791 "$(bth 0xd9 0 0 0)01030000""0000004d""0000c123""9dd4""0000""$(le32 312)""00000000""$(le64 1000)""$(le64 24456)")")
# 8: port status: the sender's plane 2 went down.
FRAMES+=("$(ipv4_udp 0 49158 4791 "$(bth 0xd8 0 0 0)02020000""00000005""00000000""0000""0000""00000000""00000000""0000000000000000""0000000000000000")")
# 9: an EV path probe (EV 0xc0de, TTL 2); 10: the ICMP Time Exceeded
#    a spine sends back, quoting it.
FRAMES+=("${ETH_DST}${ETH_SRC}0800${PROBE_IP}")
FRAMES+=("$(icmp_time_exceeded "$PROBE_IP")")

{
	hex="d4c3b2a1020004000000000000000000ffff000001000000"
	for i in "${!FRAMES[@]}"; do
		f=${FRAMES[$i]}
		hex+="$(le32 $((1700000000 + i)))00000000$(le32 $((${#f} / 2)))$(le32 $((${#f} / 2)))$f"
	done
	printf '%b' "$(sed 's/../\\x&/g' <<< "$hex")"
} > "$PCAP"

TS=(tshark -n -X "lua_script:$LUA" -r "$PCAP")

FIELDS=(frame.number frame.protocols _ws.col.Info
	mrc.opcode mrc.key mrc.dqpn mrc.psn mrc.flags mrc.flags.ack_req mrc.flags.retx mrc.flags.ts
	mrc.meth.wimm_msn mrc.meth.msn mrc.tseth.send_ts
	mrc.reth.vaddr mrc.reth.rkey mrc.reth.length mrc.imm mrc.payload_len mrc.trimmed mrc.trim_mark
	mrc.sack.cack mrc.sack.ev mrc.sack.bitmap_off mrc.sack.m mrc.sack.bitmap mrc.sack.ts_echo
	mrc.sack.ooo_count mrc.sack.rcv_bytes mrc.sack.penalty mrc.sack.hold mrc.sack.hold_ns
	mrc.sack.acked_psn mrc.sack.acked_count
	mrc.nack.cack mrc.nack.ev mrc.nack.reason mrc.nack.m mrc.nack.ts_echo
	mrc.probe mrc.ep.kind mrc.ep.plane mrc.ep.status mrc.ep.req_id mrc.ep.ev mrc.ep.reply_port
	mrc.ep.service_ns mrc.ep.t_tx_ns mrc.ep.t_rx_ns
	mrc.path_probe mrc.path_probe.ev
	mrc.malformed _ws.expert.message _ws.expert.severity)

rc_fields=0 rc_verbose=0
fargs=()
for f in "${FIELDS[@]}"; do fargs+=(-e "$f"); done
"${TS[@]}" -T fields -E separator=/t -E occurrence=a -E aggregator=, "${fargs[@]}" \
	> "$tmp/fields.txt" 2> "$tmp/fields.err" || rc_fields=$?
"${TS[@]}" -V > "$tmp/verbose.txt" 2> "$tmp/verbose.err" || rc_verbose=$?

# val FRAME FIELD: one decoded value (all occurrences, comma-separated).
val() {
	local frame=$1 name=$2 i
	for i in "${!FIELDS[@]}"; do
		if [ "${FIELDS[$i]}" = "$name" ]; then
			awk -F'\t' -v r="$frame" -v c=$((i + 1)) '$1 == r { print $c }' "$tmp/fields.txt"
			return 0
		fi
	done
	echo "no such field $name" >&2
	return 1
}
no_lua_error() { ! grep -qi 'lua.\{0,2\}error' "$tmp/fields.txt" "$tmp/fields.err" "$tmp/verbose.txt" "$tmp/verbose.err"; }
# Booleans: 1/0 from tshark 4.0, True/False from later releases.
bool() { case $1 in 1 | True) echo 1 ;; 0 | False) echo 0 ;; *) echo "$1" ;; esac; }
has() { grep -q -- "$2" <<< "$1" || { echo "    '$2' not in '$1'" >&2; return 1; }; }
lacks() { ! grep -q -- "$2" <<< "$1" || { echo "    '$2' found in '$1'" >&2; return 1; }; }
starts() { [[ $1 == "$2"* ]] || { echo "    '$1' does not start with '$2'" >&2; return 1; }; }

begin wire.dissector_loads
check "tshark -T fields exits 0" eq "$rc_fields" 0
check "tshark -V exits 0" eq "$rc_verbose" 0
check "no Lua error anywhere" no_lua_error
check "ten frames decoded" eq "$(wc -l < "$tmp/fields.txt")" 10
check "MRC, not InfiniBand, owns port 4791" eq "$(awk -F'\t' '$2 ~ /:udp:mrc$/' "$tmp/fields.txt" | wc -l)" 10
# -G must come first on tshark's command line.
check "protocol registered" has "$(tshark -G protocols -X "lua_script:$LUA" 2>/dev/null | grep -w mrc)" "MRC (Multipath Reliable Connection)"
if [ "$CURRENT_FAILS" -ne 0 ]; then
	sed 's/^/    /' "$tmp/fields.err" "$tmp/verbose.err" >&2
	head -c 3000 "$tmp/verbose.txt" | sed 's/^/    /' >&2
fi
end

begin wire.dissector_data_ipv4
check "protocols" eq "$(val 1 frame.protocols)" "eth:ethertype:ip:udp:mrc"
check "info" starts "$(val 1 _ws.col.Info)" "WRITE_ONLY_IMM QP=0x000005 PSN=42"
check "opcode" eq "$(val 1 mrc.opcode)" 0xcb
check "key (interop bytes)" eq "$(val 1 mrc.key)" 0x00ffff00
check "dqpn" eq "$(val 1 mrc.dqpn)" 0x000005
check "psn" eq "$(val 1 mrc.psn)" 42
check "flags" eq "$(val 1 mrc.flags)" 0xa0
check "ack_req" eq "$(bool "$(val 1 mrc.flags.ack_req)")" 1
check "retx" eq "$(bool "$(val 1 mrc.flags.retx)")" 0
check "ts" eq "$(bool "$(val 1 mrc.flags.ts)")" 1
check "wimm_msn" eq "$(val 1 mrc.meth.wimm_msn)" 3
check "msn" eq "$(val 1 mrc.meth.msn)" 7
check "send_ts" eq "$(val 1 mrc.tseth.send_ts)" 4660
check "vaddr" eq "$(val 1 mrc.reth.vaddr)" 0x00007f0012345678
check "rkey" eq "$(val 1 mrc.reth.rkey)" 0x0a0b0c0d
check "length" eq "$(val 1 mrc.reth.length)" 16
check "immediate" eq "$(val 1 mrc.imm)" 0xdeadbeef
check "payload length" eq "$(val 1 mrc.payload_len)" 16
check "not trimmed" eq "$(val 1 mrc.trimmed)" ""
check "no expert item" eq "$(val 1 _ws.expert.message)" ""
end

begin wire.dissector_sack_ipv6
check "protocols" eq "$(val 2 frame.protocols)" "eth:ethertype:ipv6:udp:mrc"
check "info" starts "$(val 2 _ws.col.Info)" "SACK QP=0x000009 PSN=336"
check "opcode" eq "$(val 2 mrc.opcode)" 0xdc
check "dqpn" eq "$(val 2 mrc.dqpn)" 0x000009
check "psn" eq "$(val 2 mrc.psn)" 336
check "cack" eq "$(val 2 mrc.sack.cack)" 256
check "ev" eq "$(val 2 mrc.sack.ev)" 0x0001c35a
check "bitmap_off" eq "$(val 2 mrc.sack.bitmap_off)" 16
check "m" eq "$(val 2 mrc.sack.m)" 1
check "bitmap" eq "$(val 2 mrc.sack.bitmap)" 0x8000000000000005
check "ts_echo" eq "$(val 2 mrc.sack.ts_echo)" 4660
check "ooo_count" eq "$(val 2 mrc.sack.ooo_count)" 3
check "rcv_bytes" eq "$(val 2 mrc.sack.rcv_bytes)" 288
check "penalty" eq "$(val 2 mrc.sack.penalty)" 0
check "hold" eq "$(val 2 mrc.sack.hold)" 200
check "hold in ns" eq "$(val 2 mrc.sack.hold_ns)" 25600
check "acked PSNs" eq "$(val 2 mrc.sack.acked_psn)" "273,275,336"
check "acked count" eq "$(val 2 mrc.sack.acked_count)" 3
end

begin wire.dissector_nack
check "info" starts "$(val 3 _ws.col.Info)" "NACK QP=0x000009 PSN=1193046"
check "opcode" eq "$(val 3 mrc.opcode)" 0xdd
check "psn (24 bits)" eq "$(val 3 mrc.psn)" 1193046
check "cack" eq "$(val 3 mrc.nack.cack)" 1192960
check "ev" eq "$(val 3 mrc.nack.ev)" 0x0000c001
check "reason" eq "$(val 3 mrc.nack.reason)" 0x01
check "m" eq "$(val 3 mrc.nack.m)" 0
check "ts_echo" eq "$(val 3 mrc.nack.ts_echo)" 66
check "reason named in the tree" has "$(grep 'Reason:' "$tmp/verbose.txt")" "TRIMMED (0x01)"
end

begin wire.dissector_probe
check "info" starts "$(val 4 _ws.col.Info)" "PROBE QP=0x000005 PSN=41"
check "opcode" eq "$(val 4 mrc.opcode)" 0xde
check "psn" eq "$(val 4 mrc.psn)" 41
check "ack_req" eq "$(bool "$(val 4 mrc.flags.ack_req)")" 1
check "probe" eq "$(bool "$(val 4 mrc.probe)")" 1
check "no expert item" eq "$(val 4 _ws.expert.message)" ""
end

begin wire.dissector_trimmed
check "opcode" eq "$(val 5 mrc.opcode)" 0xca
check "rkey" eq "$(val 5 mrc.reth.rkey)" 0x00000042
check "length" eq "$(val 5 mrc.reth.length)" 4096
check "payload length" eq "$(val 5 mrc.payload_len)" 0
check "trimmed" eq "$(bool "$(val 5 mrc.trimmed)")" 1
check "trim mark" eq "$(val 5 mrc.trim_mark)" 0x2c
check "info" has "$(val 5 _ws.col.Info)" "\[trimmed\]"
check "not malformed" eq "$(val 5 mrc.malformed)" ""
end

begin wire.dissector_malformed
check "still MRC" eq "$(val 6 frame.protocols)" "eth:ethertype:ip:udp:mrc"
check "no BTH fields" eq "$(val 6 mrc.opcode)" ""
check "malformed expert" has "$(val 6 _ws.expert.message)" "shorter than the 12-byte BTH"
check "severity error" has "$(val 6 _ws.expert.severity)" "8388608"
check "good frames not malformed" eq "$(val 1 mrc.malformed)$(val 2 mrc.malformed)$(val 3 mrc.malformed)" ""
check "no Lua error" no_lua_error
end

begin wire.dissector_endpoint
check "response info" starts "$(val 7 _ws.col.Info)" "EP_RESPONSE QP=0x000000 PSN=0 EV probe id=77 EV=0xc123 plane=3"
check "opcode" eq "$(val 7 mrc.opcode)" 0xd9
check "kind" eq "$(val 7 mrc.ep.kind)" 1
check "plane" eq "$(val 7 mrc.ep.plane)" 3
check "req_id" eq "$(val 7 mrc.ep.req_id)" 77
check "ev" eq "$(val 7 mrc.ep.ev)" 0x0000c123
check "reply_port" eq "$(val 7 mrc.ep.reply_port)" 40404
check "service_ns" eq "$(val 7 mrc.ep.service_ns)" 312
check "t_tx_ns" eq "$(val 7 mrc.ep.t_tx_ns)" 1000
check "t_rx_ns" eq "$(val 7 mrc.ep.t_rx_ns)" 24456
check "no expert item" eq "$(val 7 _ws.expert.message)" ""
check "port status info" starts "$(val 8 _ws.col.Info)" "EP_REQUEST QP=0x000000 PSN=0 port status plane=2 down"
check "kind" eq "$(val 8 mrc.ep.kind)" 2
check "status" eq "$(val 8 mrc.ep.status)" 0
check "not malformed" eq "$(val 7 mrc.malformed)$(val 8 mrc.malformed)" ""
end

begin wire.dissector_path_probe
check "probe: still MRC's port" eq "$(val 9 frame.protocols)" "eth:ethertype:ip:udp:mrc"
check "probe: info" starts "$(val 9 _ws.col.Info)" "EV path probe EV=0xc0de"
check "probe: flagged as a path probe" eq "$(bool "$(val 9 mrc.path_probe)")" 1
check "probe: the EV" eq "$(val 9 mrc.path_probe.ev)" 0xc0de
check "probe: no BTH fields" eq "$(val 9 mrc.opcode)" ""
check "probe: not malformed" eq "$(val 9 mrc.malformed)" ""
# (IP's own note on the low TTL is expected; nothing of ours.)
check "probe: no MRC expert item" lacks "$(val 9 _ws.expert.message)" "MRC\|BTH\|Malformed"
check "ICMP quote: decoded inside the ICMP error" eq "$(val 10 frame.protocols)" "eth:ethertype:ip:icmp:ip:udp:mrc"
check "ICMP quote: the probed EV" eq "$(val 10 mrc.path_probe.ev)" 0xc0de
check "ICMP quote: not malformed" eq "$(val 10 mrc.malformed)" ""
end
