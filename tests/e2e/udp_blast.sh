#!/usr/bin/env bash
# mrc-udp-blast, bench's physical limit: plain UDP from h1 to h2, GSO on
# send (UDP_SEGMENT) and GRO on receive (UDP_GRO), one socket per plane,
# every segment checked against its pattern, a window opened by credits.
# A transfer arrives whole and verified; a stranger's datagram is counted
# and ignored; a segment with a right header and wrong bytes fails the run.
. "$(dirname "$0")/lib.sh"

BLAST="$ROOT/build/mrc-udp-blast"
LAB_PREFIX=ubl lab_up --hosts 2 --planes 2 --spines 2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
ON="$(lab addr h2 1),$(lab addr h2 2)"
FROM="$(lab addr h1 1),$(lab addr h1 2)"
jqt() { jq -e "$@" > /dev/null; }

# blast NAME BYTES [send options]: a receiver on both of h2's planes, a
# sender from h1; the exit statuses in RC_S and RC_R.
blast() {
	local name=$1 bytes=$2 i rp
	shift 2
	in_host h2 timeout 60 "$BLAST" recv --on "$ON" --json --timeout-s 30 \
		> "$tmp/$name.r.json" 2> "$tmp/$name.r.err" &
	rp=$!
	BG_PIDS+=("$rp")
	for ((i = 0; i < 100; i++)); do grep -q listening "$tmp/$name.r.err" 2>/dev/null && break; sleep 0.05; done
	in_host h1 timeout 60 "$BLAST" send --to "$ON" --from "$FROM" --bytes "$bytes" --json "$@" \
		> "$tmp/$name.s.json" 2> "$tmp/$name.s.err"
	RC_S=$?
	wait "$rp"
	RC_R=$?
	[ $RC_S -eq 0 ] && [ $RC_R -eq 0 ] || cat "$tmp/$name.s.err" "$tmp/$name.r.err" | sed 's/^/    /' >&2
}

begin udp_blast.gso_gro_two_planes
blast gso 64m
R=$tmp/gso.r.json S=$tmp/gso.s.json
check "sender exit 0" eq "$RC_S" 0
check "receiver exit 0" eq "$RC_R" 0
check "verified" jqt '.verified == true and .error == null' "$R"
check "every byte: 64 MiB" jqt '.bytes == 67108864' "$R"
check "every segment once, none lost or wrong" \
	jqt '.segments == .expected_segments and .lost_segments == 0 and .bad == 0 and .duplicates == 0' "$R"
check "the sender sent what arrived" jqt --slurpfile r "$R" '.segments == $r[0].segments and .bytes == 67108864' "$S"
check "GSO: several segments per sendmsg" jqt '.gso == true and .segs_per_send > 1' "$S"
check "segments of the path MTU (9000 - 28)" jqt '.seg_bytes == 8972' "$S"
# The lab segments UDP GSO skbs at the last hop (a NIC's USO) and a veth
# does not GRO forwarded packets: the receiver reads wire-sized segments.
echo "    receiver: $(jq -c "{gro, max_segs_per_call, segments}" "$R")" >&2
check "segmented at the last hop: one segment per read, no GRO" jqt '.gro == false and .max_segs_per_call == 1' "$R"
check "the receiver's last credit confirmed everything" jqt '.confirmed == true' "$S"
end

begin udp_blast.no_gso_odd_size
blast nogso 1000001 --gso-segs 1
R=$tmp/nogso.r.json
check "exit 0 both" eq "$RC_S$RC_R" 00
check "one segment per sendmsg" jqt '.gso == false and .sends == .segments' "$tmp/nogso.s.json"
check "every byte, the last segment short" jqt '.verified and .bytes == 1000001' "$R"
check "one segment per read" jqt '.max_segs_per_call == 1 and .gro == false' "$R"
end

# A stranger's datagram (no magic) is counted, not trusted; one with our
# header and wrong bytes fails the transfer it claims to belong to.
begin udp_blast.checks_every_byte
in_host h2 timeout 30 "$BLAST" recv --on "$(lab addr h2 1)" --json --timeout-s 10 --idle-ms 500 \
	> "$tmp/bad.r.json" 2> "$tmp/bad.r.err" &
rp=$!
BG_PIDS+=("$rp")
for ((i = 0; i < 100; i++)); do grep -q listening "$tmp/bad.r.err" 2>/dev/null && break; sleep 0.05; done
to=/dev/udp/$(lab addr h2 1)/18600
in_host h1 bash -c "printf 'hello' > $to"
# magic, data_len 16, index 0, total 1 (little-endian), 16 zero bytes.
in_host h1 bash -c "printf '\x55\x43\x52\x4d\x10\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00' > $to"
wait "$rp"
rc=$?
check "exit 1: not verified" eq "$rc" 1
check "the stranger counted as foreign" jqt '.foreign == 1' "$tmp/bad.r.json"
check "the wrong bytes counted as bad, nothing accepted" jqt '.bad == 1 and .segments == 0 and .verified == false' "$tmp/bad.r.json"
check "the error says so" jqt '.error | test("0 of 1 segments intact")' "$tmp/bad.r.json"
end

begin udp_blast.usage
"$BLAST" send --to 198.18.1.2 --from 198.18.1.1,198.18.2.1 > /dev/null 2>&1
check "--from and --to of different lengths: exit 2" eq "$?" 2
"$BLAST" recv --on not-an-address > /dev/null 2>&1
check "a bad address: exit 2" eq "$?" 2
"$BLAST" send --to 198.18.1.2 --gso-segs 65 > /dev/null 2>&1
check "--gso-segs 65: exit 2" eq "$?" 2
"$BLAST" --help | grep -q -- "--gso-segs"
check "--help lists the options" eq "$?" 0
end
