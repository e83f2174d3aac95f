#!/usr/bin/env bash
# The lab builds a real two-tier multi-plane fabric: every host reaches every
# other host on every plane (IPv4 and IPv6), hosts get a private bpffs,
# several labs coexist, and `down` removes everything.
. "$(dirname "$0")/lib.sh"

LAB_PREFIX=top lab_up --hosts 3 --planes 4 --spines 2

begin lab.reach_all_planes_ipv4_ipv6
for src in 1 2 3; do
	for dst in 1 2 3; do
		[ $src = $dst ] && continue
		for p in 1 2 3 4; do
			a4=$(lab addr "h$dst" "$p")
			a6=$(lab addr "h$dst" "$p" -6)
			check "h$src->h$dst plane $p v4" in_host "h$src" ping -c1 -W2 -q "$a4" > /dev/null
			check "h$src->h$dst plane $p v6" in_host "h$src" ping -6 -c1 -W2 -q "$a6" > /dev/null
		done
	done
done
end

begin lab.planes_are_separate
# Plane 1's address of h2 is not reachable out of h1's plane-2 interface.
check "cross-plane unreachable" bash -c "! ip netns exec $LAB-h1 ping -c1 -W1 -q -I p2 $(lab addr h2 1) >/dev/null 2>&1"
end

begin lab.jumbo_mtu
check "9000-byte frame crosses the fabric" in_host h1 ping -c1 -W2 -q -M do -s 8972 "$(lab addr h2 1)" > /dev/null
end

begin lab.exec_has_private_bpffs
fs=$(lab exec h1 -- stat -f -c %T /sys/fs/bpf)
check "bpffs on /sys/fs/bpf in host" eq "$fs" bpf_fs
lab exec h1 -- mkdir -p /sys/fs/bpf/mrc-probe
check "pins of h1 survive across exec" lab exec h1 -- test -d /sys/fs/bpf/mrc-probe
check "h2 does not see h1's pins" lab exec h2 -- test ! -e /sys/fs/bpf/mrc-probe
lab exec h1 -- rmdir /sys/fs/bpf/mrc-probe
end

begin lab.second_lab_coexists_mtu1500
other=o$$
other=${other:0:12}
if "$LAB_CMD" up --name "$other" --hosts 2 --planes 1 --spines 1 --mtu 1500 > /dev/null; then
	check "second lab reachable" ip netns exec "$other-h1" ping -c1 -W2 -q 198.18.1.2 > /dev/null
	check "1500 MTU enforced" bash -c "! ip netns exec $other-h1 ping -c1 -W1 -q -M do -s 1473 198.18.1.2 >/dev/null 2>&1"
	check "first lab still reachable" in_host h1 ping -c1 -W2 -q "$(lab addr h2 1)" > /dev/null
	check "list shows both" bash -c "'$LAB_CMD' list | grep -q '^$other:' && '$LAB_CMD' list | grep -q '^$LAB:'"
	"$LAB_CMD" down --name "$other"
	check "down removes namespaces" bash -c "! ip netns list | grep -q '^$other-'"
	check "down removes pins" test ! -e "/sys/fs/bpf/mrc/lab/$other"
	check "down is idempotent" "$LAB_CMD" down --name "$other"
else
	check "second lab up" false
fi
end

begin lab.cli_errors
out=$("$LAB_CMD" up --name "$LAB" 2>&1); rc=$?
check "up twice refused" eq "$rc" 1
check "up twice says why" grep -q "already up" <<< "$out"
"$LAB_CMD" fault --name "$LAB" p9-s1 drop 5 > /dev/null 2>&1; rc=$?
check "unknown plane refused" eq "$rc" 1
"$LAB_CMD" fault --name "$LAB" p1-x1 drop 5 > /dev/null 2>&1; rc=$?
check "bad link refused" eq "$rc" 2
"$LAB_CMD" fault --name "$LAB" p1-s1 drop 150 > /dev/null 2>&1; rc=$?
check "bad percentage refused" eq "$rc" 2
"$LAB_CMD" fault --name "$LAB" p1-s1 wobble > /dev/null 2>&1; rc=$?
check "bad mode refused" eq "$rc" 2
"$LAB_CMD" up --name "bad-name!" > /dev/null 2>&1; rc=$?
check "bad lab name refused" eq "$rc" 2
"$LAB_CMD" up --name x$$ --planes 9 > /dev/null 2>&1; rc=$?
check "too many planes refused" eq "$rc" 2
"$LAB_CMD" stats --name nosuchlab > /dev/null 2>&1; rc=$?
check "unknown lab refused" eq "$rc" 1
end
