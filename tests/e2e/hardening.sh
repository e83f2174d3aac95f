#!/usr/bin/env bash
# mrcd's folders only root may write in: a pin folder, /run/mrc (its lock
# and socket) owned by another user, writable by group or others, or a
# symbolic link is refused, with the folder, its owner and mode and the
# fix said, exit status 1, nothing pinned into it; the lab mounts each
# host's bpffs 0700. The run folder cases run in a private mount namespace
# with a tmpfs on /run, so the machine's /run/mrc is never touched.
. "$(dirname "$0")/lib.sh"

MRCD="$ROOT/build/mrcd"
NOBODY=65534

LAB_PREFIX=hrd lab_up --hosts 2 --planes 2 --spines 1 ||
	{ echo "[hardening.lab_up] FAIL"; exit 1; }

tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT

# Run in the lab host with its bpffs on /sys/fs/bpf.
hx() { lab exec h1 -- "$@"; }

# mrcd_in DIR OUT: mrcd with --pin-dir DIR in h1; its exit status.
mrcd_in() {
	hx "$MRCD" --planes p1,p2 --pin-dir "$1" > "$2" 2>&1
}
says() { grep -q -- "$2" "$1" || { echo "    $1 says:" >&2; cat "$1" >&2; return 1; }; }
empty_dir() { [ -z "$(hx sh -c "ls -A '$1' 2>/dev/null")" ]; }

begin lab.bpffs_0700
check "host bpffs mode" eq "$(hx stat -c %a /sys/fs/bpf)" 700
check "host bpffs owner" eq "$(hx stat -c %u /sys/fs/bpf)" 0
end

begin mrcd.pin_dir_other_owner_refused
D=/sys/fs/bpf/byother
hx sh -c "mkdir -m 0755 $D && chown $NOBODY $D"
mrcd_in $D "$tmp/owner.out"
check "exit 1" eq "$?" 1
check "names the folder, owner and mode" says "$tmp/owner.out" \
	"pin folder $D is owned by uid $NOBODY with mode 0755: refused"
check "says the fix" says "$tmp/owner.out" "chown root: $D && chmod go-w $D"
check "nothing pinned into it" empty_dir $D
check "folder left as it was" eq "$(hx stat -c %u:%a $D)" "$NOBODY:755"
hx rmdir $D
end

begin mrcd.pin_dir_writable_refused
for mode in 0777 0775 1777; do
	D=/sys/fs/bpf/writable$mode
	hx sh -c "mkdir $D && chmod $mode $D"
	mrcd_in $D "$tmp/w$mode.out"
	check "$mode: exit 1" eq "$?" 1
	check "$mode: names the folder and mode" says "$tmp/w$mode.out" \
		"pin folder $D is owned by uid 0 with mode $mode: refused"
	check "$mode: nothing pinned into it" empty_dir $D
	hx rmdir $D
done
end

begin mrcd.pin_dir_symlink_refused
hx sh -c "mkdir -m 0700 /sys/fs/bpf/real && ln -s /sys/fs/bpf/real /sys/fs/bpf/link"
mrcd_in /sys/fs/bpf/link "$tmp/link.out"
check "exit 1" eq "$?" 1
check "says it is a link" says "$tmp/link.out" \
	"pin folder /sys/fs/bpf/link is a symbolic link: refused"
check "nothing pinned where it points" empty_dir /sys/fs/bpf/real
check "the link stays" hx test -L /sys/fs/bpf/link
hx rm -f /sys/fs/bpf/link
hx rmdir /sys/fs/bpf/real
end

# A root-owned 0755 folder made in advance is still taken.
begin mrcd.pin_dir_root_accepted
D=/sys/fs/bpf/byroot
hx mkdir -m 0755 $D
hx "$MRCD" --planes p1,p2 --pin-dir $D --daemon --log "$tmp/root.log" \
	> "$tmp/root.out" 2>&1
check "starts" eq "$?" 0
check "pins there" hx test -e $D/mrc_cfg
hx "$MRCD" --detach --pin-dir $D > "$tmp/root.det" 2>&1
check "detaches" eq "$?" 0
hx rmdir $D 2>/dev/null
end

# run_case NAME SETUP: mrcd in h1 with a fresh tmpfs on /run, SETUP run
# there first (sh -c); its output in $tmp/NAME.out, its status returned.
run_case() {
	hx unshare -m sh -c '
		mount -t tmpfs -o mode=0755 tmpfs /run || exit 99
		sh -c "$1" || exit 98
		exec "$0" --planes p1,p2 --pin-dir /sys/fs/bpf/runcase' \
		"$MRCD" "$2" > "$tmp/$1.out" 2>&1
}

begin mrcd.run_dir_other_owner_refused
run_case rowner "mkdir -m 0755 /run/mrc && chown $NOBODY /run/mrc"
check "exit 1" eq "$?" 1
check "names the folder, owner and mode" says "$tmp/rowner.out" \
	"run folder /run/mrc is owned by uid $NOBODY with mode 0755: refused"
check "says the fix" says "$tmp/rowner.out" "chown root: /run/mrc && chmod go-w /run/mrc"
check "no pin folder made" hx test ! -e /sys/fs/bpf/runcase
end

begin mrcd.run_dir_writable_refused
run_case rwritable "mkdir -m 1777 /run/mrc"
check "exit 1" eq "$?" 1
check "names the folder and mode" says "$tmp/rwritable.out" \
	"run folder /run/mrc is owned by uid 0 with mode 1777: refused"
check "no pin folder made" hx test ! -e /sys/fs/bpf/runcase
end

begin mrcd.run_dir_symlink_refused
run_case rlink "mkdir -m 0700 /run/elsewhere && ln -s /run/elsewhere /run/mrc"
check "exit 1" eq "$?" 1
check "says it is a link" says "$tmp/rlink.out" \
	"run folder /run/mrc is a symbolic link: refused"
check "no pin folder made" hx test ! -e /sys/fs/bpf/runcase
end

begin mrcd.lock_symlink_refused
# The lock's name comes from the bpffs and the folder: learn it from a
# run with a clean /run/mrc, then plant a link under that name.
lockname=$(hx unshare -m sh -c '
	mount -t tmpfs -o mode=0755 tmpfs /run
	mkdir -m 0755 /run/mrc
	"$0" --planes p1,p2 --pin-dir /sys/fs/bpf/runcase --daemon --log /dev/null >/dev/null 2>&1
	ls /run/mrc | grep "\.lock$"
	"$0" --detach --pin-dir /sys/fs/bpf/runcase >/dev/null 2>&1' "$MRCD")
check "lock name learnt" test -n "$lockname"
run_case rlock "mkdir -m 0755 /run/mrc && touch /run/target && ln -s /run/target /run/mrc/$lockname"
check "exit 1" eq "$?" 1
check "says why" says "$tmp/rlock.out" "cannot open lock /run/mrc/$lockname"
check "no pin folder made" hx test ! -e /sys/fs/bpf/runcase
end

# mrcctl believes only root's mrcd: a socket at the agent's path that
# another user listens on is refused (SO_PEERCRED), nothing sent to it.
begin mrcctl.impostor_socket_refused
out=$(unshare -m sh -c '
	mount -t tmpfs -o mode=0755 tmpfs /run || exit 99
	mkdir -m 0755 /run/mrc /run/imp && chown '$NOBODY' /run/imp
	name=$(/usr/bin/python3 -c "
import os
d = os.stat(\"/sys/fs/bpf\").st_dev
h = 0xcbf29ce484222325
for c in b\"/sys/fs/bpf/impostor\":
    h = ((h ^ c) * 0x100000001b3) % 2**64
print(\"mrcd-%x.%x-%016x.sock\" % (os.major(d), os.minor(d), h))")
	setpriv --reuid '$NOBODY' --regid '$NOBODY' --clear-groups /usr/bin/python3 -c "
import socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.bind(\"/run/imp/s\"); s.listen(4); time.sleep(5)" &
	for i in 1 2 3 4 5 6 7 8 9 10; do [ -S /run/imp/s ] && break; sleep 0.2; done
	mv /run/imp/s "/run/mrc/$name"
	"$0" --pin-dir /sys/fs/bpf/impostor status 2>&1
	echo "rc=$?"
	kill $! 2>/dev/null' "$ROOT/build/mrcctl")
echo "$out" > "$tmp/imp.out"
check "exit non-zero" says "$tmp/imp.out" "^rc=[1-9]"
check "says who serves it" says "$tmp/imp.out" \
	"is served by uid $NOBODY, not root: refused"
end
