#!/usr/bin/env bash
# EV path discovery (user/libmrc/discover.c) over IPv4 and IPv6: at
# connect, libmrc probes every EV of the table with a hop-limited UDP
# datagram that carries the data's addresses, ports and flow label; the
# spine's ICMP / ICMPv6 Time Exceeded names the path. Every entry gets its
# spine (path 1 or 2 on each plane), the active EVs are split evenly over
# the spines, explicit lists are labelled but not rebalanced. Over IPv6
# with STEV EVs (flow label + port): the spines carry even shares, and with
# a spine blackholed exactly the EVs labelled with it go unanswered
# (mrcd's probes carry the data's flow label too). Transfers verified.
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=pth lab_up --hosts 2 --planes 4 --spines 2
tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
mrc_up "$tmp"
H2_V4=$(lab addr h2 1)
H2_V6=$(lab addr h2 1 -6)

mrcctl1() { lab exec h1 "$MRCCTL" "$@" > /dev/null; }
# Largest deviation from the mean, in percent, and Jain's index x1000.
max_dev_pct() { jq -s '(add / length) as $m | map((. - $m) / $m * 100 | fabs) | max | floor'; }
jain_milli() { jq -s '(add * add) / (length * (map(. * .) | add)) * 1000 | floor'; }

# The QP number of h1's QP in RTS (the client's, once connected), or "".
rts_qpn() {
	lab exec h1 "$MRCCTL" --json qp list 2> /dev/null |
		jq -r '[.[] | select(.state == "RTS")][0].qpn // empty'
}

# table_of DST ARGS...: a QP to DST that stays idle for 2 s (no traffic, so
# no demotion moves the active set), and its EV table (mrcctl ev list
# --json) read meanwhile into $tmp/evs.json.
table_of() {
	local dst=$1 qpn="" i
	shift
	"$LAB_CMD" exec --name "$LAB" h1 "$PERF" client "$dst" --json --timeout-s 60 \
		--idle 2 "$@" > "$tmp/c.json" 2> "$tmp/c.err" &
	local pid=$!
	BG_PIDS+=("$pid")
	for ((i = 0; i < 100; i++)); do
		qpn=$(rts_qpn)
		[ -n "$qpn" ] && lab exec h1 "$MRCCTL" --json ev list --qp "$qpn" \
			> "$tmp/evs.json" 2> /dev/null && break
		qpn=""
		sleep 0.05
	done
	wait "$pid"
	local rc=$?
	[ $rc -eq 0 ] || sed 's/^/    client: /' "$tmp/c.err" >&2
	[ -n "$qpn" ] && [ $rc -eq 0 ]
}
unlabelled() { jq '[.[] | select(.path == 0)] | length' "$tmp/evs.json"; }
# Planes on which the entries name exactly two spines (paths 1 and 2).
two_spine_planes() {
	jq '[group_by(.plane)[] | select(([.[].path] | unique) == [1, 2])] | length' "$tmp/evs.json"
}
# Active entries per (plane, path): "even" when every plane's two spines
# have as many, else the counts.
active_split() {
	jq -r '[.[] | select(.active)] | group_by(.plane) |
		map([group_by(.path)[] | length]) |
		if all(.[]; length == 2 and .[0] == .[1]) then "even" else tostring end' "$tmp/evs.json"
}

begin paths.ipv4_labelled_and_balanced
check "table read" table_of "$H2_V4"
check "every entry has its spine" eq "$(unlabelled)" 0
check "each plane's entries name both spines" eq "$(two_spine_planes)" 4
check "active EVs split evenly over the spines" eq "$(active_split)" even
end

begin paths.ipv6_labelled_and_balanced
check "table read" table_of "$H2_V6"
check "every entry has its spine" eq "$(unlabelled)" 0
check "each plane's entries name both spines" eq "$(two_spine_planes)" 4
check "active EVs split evenly over the spines" eq "$(active_split)" even
end

# STEV: 4 flow labels x 64 source ports, per-packet spraying. ECMP hashes
# the flow label too, so a probe without the data's label would name other
# spines, the split would follow the coin and the spines' shares with it.
begin paths.ipv6_stev_spines_even
mrcctl1 profile ev create 2 --type generated --format stev --count 256 --burst 1
mrcctl1 profile ev set 2 --fmt-fields 16,16 --field width=16,init=0,mask=0x3 \
	--field width=16,init=0xc000,mask=0x3f
mrcctl1 profile ev offline 2
check "STEV profile online" mrcctl1 profile ev online 2
check "table read" table_of "$H2_V6" --ev-profile 2
# EVs are "0x..." strings: above 0xffff they have more than 4 hex digits.
check "STEV EVs carry flow label bits" eq "$(jq '[.[] | select((.ev | length) > 6)] | length > 0' "$tmp/evs.json")" true
check "every entry has its spine" eq "$(unlabelled)" 0
check "active EVs split evenly over the spines" eq "$(active_split)" even
lab stats --reset
H2=$H2_V6
check "256 MiB over IPv6, STEV, verified" client --size 1m --bytes 256m --verify --ev-profile 2
H2=$H2_V4
stats_json > "$tmp/stats.json"
dev=$(jq '.spines[].bytes' "$tmp/stats.json" | max_dev_pct)
jain=$(jq '.spines[].bytes' "$tmp/stats.json" | jain_milli)
echo "    spine deviation max ${dev}%, Jain x1000 $jain" >&2
check "spine links within 10% of their mean" between "$dev" 0 10
check "spines fair (Jain >= 0.99)" between "$jain" 990 1000
end

# The labels must name the spines the data really crosses. With spine 1
# of plane 1 blackholed, an EV probe (mrcd's, which TC stamps with the
# EV's port and flow label like data) through the dark spine goes
# unanswered, one through the other spine is answered. So every entry of
# one label must go unanswered and every entry of the other answered.
# Labels made without the data's flow label mix the two. Six entries of
# each label are probed, all twelve at once (mrcd runs up to 16 probe
# commands side by side; an unanswered probe costs its 1 s timeout).
begin paths.ipv6_stev_labels_match_data
"$LAB_CMD" exec --name "$LAB" h1 "$PERF" client "$H2_V6" --json --timeout-s 60 \
	--idle 10 --ev-profile 2 > "$tmp/idle.json" 2> "$tmp/idle.err" &
IDLE_PID=$!
BG_PIDS+=("$IDLE_PID")
QPN=""
for ((i = 0; i < 100; i++)); do
	QPN=$(rts_qpn)
	[ -n "$QPN" ] && lab exec h1 "$MRCCTL" --json ev list --qp "$QPN" \
		> "$tmp/evs.json" 2> /dev/null && break
	QPN=""
	sleep 0.05
done
check "the QP is up, its table read" test -n "$QPN"
lab fault p1-s1 blackhole
probe_pids=()
for path in 1 2; do
	for ev in $(jq -r --argjson p "$path" '[.[] | select(.plane == 1 and .path == $p)][:6][].ev' \
			"$tmp/evs.json"); do
		if lab exec h1 "$MRCCTL" probe --to "$H2_V6" --ev "$ev" --plane 1 --count 1 \
			> "$tmp/probe.$path.$ev" 2>&1; then
			echo "$path $ev answered" > "$tmp/answer.$path.$ev"
		else
			echo "$path $ev silent" > "$tmp/answer.$path.$ev"
		fi &
		probe_pids+=($!)
	done
done
wait "${probe_pids[@]}"
cat "$tmp"/answer.* > "$tmp/answers" 2> /dev/null
lab fault p1-s1 clear
# The QP must outlive the probes (the peer answers only peers of its QPs).
check "the QP outlived the probes" kill -0 "$IDLE_PID"
wait "$IDLE_PID"
check "the idle QP ended cleanly" eq "$?" 0
# Per label: "answered", "silent", or "mixed".
verdict() { awk -v p="$1" '$1 == p { n[$3]++ } END {
	if (n["answered"] && n["silent"]) print "mixed"
	else if (n["answered"]) print "answered"
	else if (n["silent"]) print "silent"
	else print "none" }' "$tmp/answers"; }
v1=$(verdict 1) v2=$(verdict 2)
echo "    with spine 1 dark: label 1 $v1, label 2 $v2 ($(wc -l < "$tmp/answers") probes)" >&2
check "every probed entry of each label fares alike" eq "$v1$v2" \
	"$([ "$v1" = silent ] && echo silentanswered || echo answeredsilent)"
end

# An explicit list is the controller's: labelled with its spines, kept as
# listed (every listed EV stays active).
begin paths.explicit_labelled_not_rebalanced
evs=
for ((i = 0; i < 64; i++)); do evs+=$(printf '%x@%d,' $((49152 + i)) $((i % 4 + 1))); done
mrcctl1 profile ev create 3 --type explicit --count 64 --burst 1
mrcctl1 profile ev set 3 --ev "${evs%,}"
mrcctl1 profile ev offline 3
check "explicit profile online" mrcctl1 profile ev online 3
check "table read" table_of "$H2_V4" --ev-profile 3
check "64 entries" eq "$(jq length "$tmp/evs.json")" 64
check "every entry has its spine" eq "$(unlabelled)" 0
check "every listed EV stays active" eq "$(jq '[.[] | select(.active | not)] | length' "$tmp/evs.json")" 0
end
