#!/usr/bin/env bash
# Applications without privileges (issue 16): mrc-perf runs as uid 65534
# on both hosts and gets its QPs through mrcd's broker (common/broker.h),
# never opening the pinned maps. Each case says what it expects:
#   - a transfer between two unprivileged processes, verified by checksum,
#     its EVs labelled with their spines (path discovery run by mrcd);
#   - the pinned maps stay out of reach (bpffs and pin folder 0700), and
#     libmrc told to open them itself fails with a clear message;
#   - another unprivileged context cannot take, change or free the live
#     transfer's QP, window or peers, nor lie about its own context, and
#     malformed requests get an error or a closed connection (the
#     transfer stays verified, mrcd keeps serving);
#   - a context killed with SIGKILL leaves nothing: mrcd takes its QPs,
#     windows and context slot back;
#   - mrcd --app-group keeps users outside the group out, with a message.
NOBODY=65534
MRC_PERF_USER=$NOBODY	# whatever the caller says: this file is about it
. "$(dirname "$0")/lib.sh"

# Run from where uid 65534 can reach them (lib.sh: copies if need be).
POKE=$(unpriv_bin "$ROOT/build/tests/mrc-broker-poke")
HOLD=$(unpriv_bin "$ROOT/build/tests/mrc-hold-qps")

LAB_PREFIX=upv lab_up --hosts 2 --planes 2 --spines 2 --mtu 1500 ||
	{ echo "[unprivileged.lab_up] FAIL"; exit 1; }
tmp=$(mktemp -d)
chmod 755 "$tmp"
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
# mrcd on both hosts, an mrc-perf server on h2 as uid 65534 (lib.sh).
mrc_up "$tmp"

qps_json() { lab exec "$1" "$MRCCTL" qp list --json; }
owner_uid() { awk '/^Uid:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

begin unprivileged.transfer_verified
check "the client's transfer" client --size 1m --iters 64 --depth 4 --verify
check "verified" eq "$(cj .verified)" true
check "goodput above 0 ($(cj .gbps) Gb/s)" awk -v g="$(cj .gbps)" \
	'BEGIN { exit !(g + 0 > 0) }'
end

begin unprivileged.paths_discovered_by_mrcd
# A slow transfer keeps the QP alive while we look at its EV table.
client --size 4096 --iters 4000 --depth 1 --verify &
cpid=$!
labelled=0 uid=""
for ((i = 0; i < 100; i++)); do
	# The QP and its owner in one look, the owner's uid at once (the
	# transfer may end soon after).
	row=$(qps_json h1 | jq -r '[.[] | select(.state == "RTS")][0] // empty |
		"\(.qpn) \(.owner_pid)"')
	if [ -n "$row" ]; then
		qpn=${row% *}
		uid=$(owner_uid "${row#* }")
		labelled=$(lab exec h1 "$MRCCTL" ev list --qp "$qpn" --json |
			jq "[.[] | select(.path > 0)] | length")
		[ "${labelled:-0}" -gt 0 ] && [ -n "$uid" ] && break
	fi
	sleep 0.05
done
check "the QP's owner runs as uid $NOBODY" eq "$uid" $NOBODY
echo "    QP $qpn: $labelled EVs labelled with a spine" >&2
check "EVs labelled with a spine ($labelled)" test "${labelled:-0}" -gt 0
wait $cpid
check "the client's transfer" eq $? 0
end

begin unprivileged.maps_out_of_reach
out=$(lab exec h1 "${PERF_AS[@]}" bpftool map show pinned /sys/fs/bpf/mrc/mrc_qps 2>&1)
check "uid $NOBODY cannot open mrc_qps ($out)" test $? -ne 0
lab exec h1 env MRC_VIA_MRCD=0 "${PERF_AS[@]}" "$PERF_RUN" client "$H2" \
	--size 4096 --iters 1 > /dev/null 2> "$tmp/direct.err"
check "no direct context as uid $NOBODY" test $? -ne 0
check "a clear message ($(head -c 300 "$tmp/direct.err"))" \
	grep -q "cannot open /sys/fs/bpf/mrc" "$tmp/direct.err"
end

begin unprivileged.broker_refuses_others
# The victim: a live unprivileged transfer; the attacker: another context.
client --size 4096 --iters 20000 --depth 2 --verify &
cpid=$!
victim=""
for ((i = 0; i < 100; i++)); do
	victim=$(qps_json h1 | jq -c '[.[] | select(.state == "RTS" and .cc != null)][0] // empty')
	[ -n "$victim" ] && break
	sleep 0.05
done
check "a live QP to attack" test -n "$victim"
vqpn=$(echo "$victim" | jq -r .qpn)
lab exec h1 "${PERF_AS[@]}" "$POKE" --victim-slot $((vqpn - 1)) \
	--victim-window "$(($(echo "$victim" | jq -r .cc.slot) - 1))" \
	--victim-peer "$(echo "$victim" | jq -r '.peers[0]')" \
	--victim-remote-qpn "$(echo "$victim" | jq -r .remote_qpn)" \
	> "$tmp/poke.json" 2> "$tmp/poke.err"
check "mrc-broker-poke ran ($(cat "$tmp/poke.err"))" eq $? 0
poke() { jq -r ".$1" "$tmp/poke.json"; }
echo "    mrc-broker-poke: $(cat "$tmp/poke.json")" >&2
for k in publish_other_slot destroy_other_slot maps_other_slot release_other_window \
	publish_other_context publish_other_port publish_other_window; do
	check "$k refused" eq "$(poke $k)" EPERM
done
check "peers of another QP kept" eq "$(poke peers_take_other)" EADDRINUSE
check "counts out of range refused" eq "$(poke publish_out_of_range)" EINVAL
check "its own QP's entry taken" eq "$(poke publish_own)" OK
check "a second HELLO refused" eq "$(poke hello_twice)" EALREADY
check "a request before HELLO refused" eq "$(poke before_hello)" EPROTO
check "another ABI refused" eq "$(poke wrong_abi)" EPROTO
check "garbage: connection closed" eq "$(poke garbage_dropped)" ECONNRESET
# The victim's QP is as it was, and its transfer ends verified.
check "the victim QP still RTS" \
	eq "$(qps_json h1 | jq -r ".[] | select(.qpn == $vqpn) | .state")" RTS
wait $cpid
check "the victim's transfer" eq $? 0
check "verified" eq "$(cj .verified)" true
end

begin unprivileged.killed_context_cleaned_up
before=$(qps_json h1 | jq length)
lab exec h1 "${PERF_AS[@]}" "$HOLD" --count 20 --rts 10 --peer "$H2" \
	> "$tmp/hold.out" 2> "$tmp/hold.err" &
hpid=$!
for ((i = 0; i < 100; i++)); do
	grep -q holding "$tmp/hold.out" && break
	sleep 0.05
done
during=$(qps_json h1 | jq length)
check "20 more QPs while it holds them" eq "$during" $((before + 20))
# SIGKILL: no cleanup of its own; mrcd sees the connection close.
pkill -KILL -P $hpid 2> /dev/null; kill -KILL $hpid 2> /dev/null
wait $hpid 2> /dev/null
for ((i = 0; i < 100; i++)); do
	[ "$(qps_json h1 | jq length)" = "$before" ] && break
	sleep 0.05
done
check "no QP left behind" eq "$(qps_json h1 | jq length)" "$before"
check "a context after the kill" client --size 4096 --iters 8 --verify
end

begin unprivileged.app_group
has() { echo "$1" | grep -q -- "$2"; }
lab agent stop > /dev/null
out=$(lab agent start -- --app-group mrcupv-none 2>&1)
check "mrcd refuses a group that does not exist" test $? -ne 0
check "and says so ($out)" has "$out" "no such group"
lab agent stop > /dev/null 2>&1
groupadd -f mrcupv 2> /dev/null
lab agent start -- --app-group mrcupv > /dev/null
# The newest: this lab's mrcds just started (another lab's may be up).
sock=$(ls -t /run/mrc/mrcd-*-apps.sock 2> /dev/null | head -n 1)
check "the socket's mode and group" eq "$(stat -c %a:%G "$sock")" 660:mrcupv
lab exec h1 "${PERF_AS[@]}" "$PERF_RUN" client "$H2" --size 4096 --iters 1 \
	> /dev/null 2> "$tmp/group.err"
check "no context for uid $NOBODY outside the group" test $? -ne 0
check "a clear message ($(head -c 300 "$tmp/group.err"))" \
	grep -q "cannot reach mrcd's broker.*Permission denied" "$tmp/group.err"
lab agent stop > /dev/null
groupdel mrcupv 2> /dev/null
end
