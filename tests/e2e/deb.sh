#!/usr/bin/env bash
# The Debian package (`make deb`, packaging/): its contents, control data
# and lintian's verdict (when installed); installed with dpkg into a
# scratch root (its own dpkg database; the maintainer scripts run without
# chroot and must leave this system alone); a lab brought up by the
# installed mrc-lab, the installed mrcd started there the way
# mrcd.service starts it (its ExecStart re-rooted, reading the installed
# /etc/mrc/mrcd.conf, with the unit's capability bounding set and
# no_new_privs); a verified transfer with the installed mrc-perf,
# mrcctl's view of the configuration, a reload (ExecReload), an
# application built with `pkg-config --cflags --libs mrc` against the
# scratch root and run against the live mrcd; removal and purge. Needs
# dpkg-dev and pkg-config.
. "$(dirname "$0")/lib.sh"

for tool in dpkg-deb dpkg-shlibdeps pkg-config gcc; do
	command -v "$tool" > /dev/null || { skip deb "$tool missing (tools/install-deps.sh)"; exit 0; }
done

tmp=$(mktemp -d)
trap 'lab_cleanup; rm -rf "$tmp"' EXIT
VERSION=$(cat "$ROOT/VERSION")
ARCH=$(dpkg --print-architecture)
TRIPLET=$(gcc -print-multiarch)
R=$tmp/root			# the scratch root
LIBDIR=/usr/lib/$TRIPLET
UNIT=/usr/lib/systemd/system/mrcd.service
CONF=/etc/mrc/mrcd.conf

# --- the package ---------------------------------------------------------
begin deb.build
make -C "$ROOT" --no-print-directory deb > "$tmp/make.out" 2>&1
rc=$?
check "make deb succeeds" eq "$rc" 0
[ $rc -eq 0 ] || sed 's/^/    make: /' "$tmp/make.out" | tail -20 >&2
PKG=$(tail -n 1 "$tmp/make.out")
check "make deb names the package" eq "$PKG" "$ROOT/build/mrc-xdp_${VERSION}_$ARCH.deb"
end
[ -f "$PKG" ] || exit 1

# Every file the package must carry, from the source tree where it can be.
expected_files() {
	local p h
	for p in mrcd mrcctl mrc-perf mrc-lab mrc-labctl mrc-lab-traffic mrc-tcp-timeline; do
		echo "usr/lib/mrc-xdp/$p"
	done
	printf '%s\n' usr/sbin/mrcd usr/bin/mrcctl usr/bin/mrc-perf usr/bin/mrc-lab
	for p in "$ROOT"/bpf/*.bpf.c "$ROOT"/lab/*.bpf.c; do
		p=$(basename "$p" .c)
		[ "$p" = trivial.bpf ] || echo "usr/lib/mrc-xdp/bpf/$p.o"
	done
	for p in mrcd mrcctl mrc-perf mrc-lab; do echo "usr/share/man/man8/$p.8.gz"; done
	for h in "$ROOT"/include/mrc/*.h; do echo "usr/include/mrc/$(basename "$h")"; done
	printf '%s\n' "${LIBDIR#/}/libmrc.so.0" "${LIBDIR#/}/libmrc.so" "${LIBDIR#/}/libmrc.a" \
		"${LIBDIR#/}/pkgconfig/mrc.pc" "${UNIT#/}" "${CONF#/}" \
		usr/share/doc/mrc-xdp/copyright usr/share/doc/mrc-xdp/changelog.gz
}

begin deb.contents
dpkg-deb -c "$PKG" > "$tmp/contents"
missing=$(expected_files | while read -r f; do
	grep -qE " \./$f( -> .*)?\$" "$tmp/contents" || echo "$f"
done)
check "every program, object, man page, header, library, .pc, unit, conffile" eq "$missing" ""
check "every file owned by root" eq "$(awk '$2 != "root/root"' "$tmp/contents")" ""
check "package name" eq "$(dpkg-deb -f "$PKG" Package)" mrc-xdp
check "version from VERSION" eq "$(dpkg-deb -f "$PKG" Version)" "$VERSION"
check "architecture" eq "$(dpkg-deb -f "$PKG" Architecture)" "$ARCH"
check "conffiles" eq "$(dpkg-deb -I "$PKG" conffiles)" "$CONF"
dpkg-deb -e "$PKG" "$tmp/DEBIAN"
soname=$(objdump -p "$ROOT/build/libmrc.so.0" | awk '$1 == "SONAME" { print $2 }')
check "shlibs names libmrc's soname" eq "$(cat "$tmp/DEBIAN/shlibs")" \
	"libmrc ${soname#libmrc.so.} mrc-xdp (>= $VERSION)"
check "ldconfig trigger" eq "$(cat "$tmp/DEBIAN/triggers")" "activate-noawait ldconfig"
for s in postinst prerm postrm; do
	check "$s is a dash script" dash -n "$tmp/DEBIAN/$s"
done
end

begin deb.lintian
if command -v lintian > /dev/null; then
	lintian --fail-on error,warning "$PKG" > "$tmp/lintian.out" 2>&1
	rc=$?
	check "lintian finds no error or warning" eq "$rc" 0
	[ $rc -eq 0 ] || grep -E '^[EW]:' "$tmp/lintian.out" | sed 's/^/    /' >&2
else
	echo "  lintian missing: package not linted" >&2
fi
end

# --- installed into a scratch root ---------------------------------------
begin deb.install_scratch_root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
: > "$R/var/lib/dpkg/status"
: > "$R/var/lib/dpkg/available"
# The scratch root has no libbpf1 etc.: this system's are used.
dpkg --root="$R" --force-script-chrootless --force-depends --log=/dev/null \
	-i "$PKG" > "$tmp/dpkg.out" 2>&1
rc=$?
check "dpkg --root -i succeeds" eq "$rc" 0
[ $rc -eq 0 ] || sed 's/^/    dpkg: /' "$tmp/dpkg.out" >&2
check "installed in the scratch database" eq \
	"$(dpkg-query --admindir="$R/var/lib/dpkg" -W -f='${Status}' mrc-xdp)" "install ok installed"
missing=$(expected_files | while read -r f; do [ -e "$R/$f" ] || echo "$f"; done)
check "every file in place (links resolve)" eq "$missing" ""
check "installed mrcd runs" eq "$("$R/usr/sbin/mrcd" --version)" "mrcd $VERSION"
end

# Every dependency the package's ELF files need is one its Depends names.
begin deb.depends
depends=$(dpkg-deb -f "$PKG" Depends)
bad=""
for so in $(find "$R/usr" -type f -exec sh -c 'head -c4 "$1" | grep -q ELF' _ {} \; -print0 |
	    xargs -0 objdump -p 2>/dev/null | awk '$1 == "NEEDED" { print $2 }' | sort -u); do
	case $so in ld-linux*|libmrc.so*) continue ;; esac
	path=$(ldconfig -p | awk -v so="$so" '$1 == so { print $NF; exit }')
	pkg=$(dpkg -S "$path" 2>/dev/null | head -1 | cut -d: -f1)
	[ -z "$pkg" ] && pkg=$(dpkg -S "$(readlink -f "$path")" 2>/dev/null | head -1 | cut -d: -f1)
	[[ -n $pkg && ", $depends," == *", $pkg "* ]] || bad+=" $so($pkg)"
done
check "Depends covers every NEEDED library ($depends)" eq "$bad" ""
end

begin deb.unit_file
if command -v systemd-analyze > /dev/null; then
	# Re-rooted: its programs exist only in the scratch root.
	sed -e "s|^ExecStart=/|ExecStart=$R/|" -e "s| /etc/| $R/etc/|g" \
		"$R$UNIT" > "$tmp/mrcd.service"
	check "systemd-analyze verify finds nothing" systemd-analyze verify --man=no "$tmp/mrcd.service"
	check "ExecStart reads $CONF" grep -qx "ExecStart=/usr/sbin/mrcd --config $CONF" "$R$UNIT"
else
	echo "  systemd-analyze missing: unit not verified" >&2
fi
end

# --- headers, pkg-config, an application ---------------------------------
pc() { PKG_CONFIG_SYSROOT_DIR="$R" PKG_CONFIG_LIBDIR="$R$LIBDIR/pkgconfig" pkg-config "$@"; }

cat > "$tmp/app.c" <<'C'
/* Prints libmrc's version and the plane addresses mrcd serves here. */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <mrc/mrc.h>

int main(void)
{
	struct sockaddr_storage addrs[2 * MRC_MAX_PLANES];
	struct mrc_context *ctx;
	char text[INET6_ADDRSTRLEN];
	int i, n;

	printf("version %s\n", mrc_version());
	ctx = mrc_open(NULL);
	if (!ctx) {
		perror("mrc_open");
		return 1;
	}
	n = mrc_local_addrs(ctx, AF_INET, addrs, 2 * MRC_MAX_PLANES);
	for (i = 0; i < n; i++) {
		const struct sockaddr_in *in = (const void *)&addrs[i];
		printf("addr %s\n", inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text)));
	}
	return mrc_close(ctx) ? 1 : 0;
}
C

begin deb.pkg_config
check "modversion" eq "$(pc --modversion mrc)" "$VERSION"
cflags=$(pc --cflags mrc)
check "cflags point into the root" eq "${cflags% }" "-I$R/usr/include"
bad=""
for h in "$R"/usr/include/mrc/*.h; do
	# shellcheck disable=SC2046 # pkg-config's words are separate arguments
	echo "#include <mrc/$(basename "$h")>" |
		gcc -std=gnu11 -Wall -Wextra -Werror $(pc --cflags mrc) -fsyntax-only -x c - ||
		bad+=" $(basename "$h")"
done
check "every installed header compiles alone" eq "$bad" ""
# shellcheck disable=SC2046 # pkg-config's words are separate arguments
gcc -Wall -Werror "$tmp/app.c" $(pc --cflags --libs mrc) -o "$tmp/app" 2> "$tmp/cc.err"
check "application builds with pkg-config --cflags --libs mrc" test -x "$tmp/app"
sed 's/^/    cc: /' "$tmp/cc.err" >&2
check "it links libmrc.so.0" eq "$(objdump -p "$tmp/app" | awk '$1 == "NEEDED" && $2 ~ /^libmrc/ { print $2 }')" libmrc.so.0
# Statically, with what Libs.private lists.
# shellcheck disable=SC2046
gcc "$tmp/app.c" $(pc --cflags mrc) "$R$LIBDIR/libmrc.a" \
	$(pc --static --libs mrc | tr ' ' '\n' | grep -v -e '^-lmrc$' -e '^-L') -o "$tmp/app-static" 2> "$tmp/cc-static.err"
check "application links libmrc.a with --static's libraries" test -x "$tmp/app-static"
sed 's/^/    cc: /' "$tmp/cc-static.err" >&2
# The library exports mrc.h's functions and nothing else.
extra=$(nm -D --defined-only "$R$LIBDIR/libmrc.so.0" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' |
	while read -r sym; do grep -qE "[ *]$sym\(" "$R/usr/include/mrc/mrc.h" || echo "$sym"; done)
check "only mrc.h's functions exported" eq "$extra" ""
end

# --- the installed mrcd in a lab -----------------------------------------
# The lab itself from the installed mrc-lab (it finds the installed
# mrc-labctl next to itself).
LAB_CMD=$R/usr/bin/mrc-lab
LAB_PREFIX=deb lab_up --hosts 2 --planes 2 --spines 1
check_lab_up() { [[ $("$LAB_CMD" list 2>/dev/null) == *"$LAB: 2 hosts"* ]]; }
trap 'lab_cleanup; rm -rf "$tmp"' EXIT

# The operator's edit: planes set, a limit changed, the documented
# defaults uncommented (so each of them must be valid).
begin deb.conf_file
sed -e 's/^#\([a-z-]* = \)/\1/' -e 's/^planes = .*/planes = p1 p2/' \
	-e 's/^max-qps = .*/max-qps = 64/' -e '/^peers = /d' "$R$CONF" > "$tmp/mrcd.conf"
check "the shipped file sets planes, max-qps" eq "$(grep -cE '^(planes|max-qps) = ' "$tmp/mrcd.conf")" 2
install -m 0644 "$tmp/mrcd.conf" "$R$CONF"
end

# The unit's ExecStart with every absolute path re-rooted.
exec_start=()
for w in $(sed -n 's/^ExecStart=//p' "$R$UNIT"); do
	[[ $w == /* ]] && w=$R$w
	exec_start+=("$w")
done
MRCCTL_I=$R/usr/bin/mrcctl
PERF_I=$R/usr/bin/mrc-perf
declare -A MRCD_PID

ready_lines() { grep -c '^mrcd: ready' "$tmp/mrcd-$1.log" 2>/dev/null; }
wait_ready() {
	local h=$1 want=$2 i
	for ((i = 0; i < 100; i++)); do
		(( $(ready_lines "$h") >= want )) && return 0
		kill -0 "${MRCD_PID[$h]}" 2>/dev/null || break
		sleep 0.1
	done
	sed 's/^/    mrcd: /' "$tmp/mrcd-$h.log" >&2
	return 1
}

# h1's mrcd as the unit confines it: only the capabilities of its
# CapabilityBoundingSet, NoNewPrivileges (what setpriv can do of the unit's
# sandbox without systemd; its reload below needs them too).
unit_caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$R$UNIT" | tr ' ' '\n' |
	sed -n 's/^CAP_\(.*\)/+\1/p' | tr '[:upper:]' '[:lower:]' | paste -sd, -)
confine_h1=(setpriv --no-new-privs --bounding-set "-all,$unit_caps" --inh-caps -all)
grep -qx 'NoNewPrivileges=yes' "$R$UNIT" || confine_h1=("${confine_h1[@]:1}")

begin deb.installed_mrcd
check "the unit names capabilities" test -n "$unit_caps"
for h in h1 h2; do
	confine=()
	[ "$h" = h1 ] && confine=("${confine_h1[@]}")
	# Not through lab(): $! must be mrcd itself (mrc-lab execs into it).
	"$LAB_CMD" exec --name "$LAB" "$h" -- "${confine[@]}" "${exec_start[@]}" \
		> "$tmp/mrcd-$h.log" 2>&1 &
	MRCD_PID[$h]=$!
	BG_PIDS+=($!)
done
check "h1's mrcd ready" wait_ready h1 1
check "h1's mrcd runs with no_new_privs" grep -qP '^NoNewPrivs:\t1$' "/proc/${MRCD_PID[h1]}/status"
check "h1's mrcd has a smaller bounding set" test \
	"$(grep CapBnd "/proc/${MRCD_PID[h1]}/status")" != "$(grep CapBnd /proc/self/status)"
check "h2's mrcd ready" wait_ready h2 1
lab exec h1 -- "$MRCCTL_I" status --json > "$tmp/status.json"
check "planes from the file" eq "$(jq -r '[.planes[].name] | join(",")' "$tmp/status.json")" p1,p2
check "the pid started is mrcd's" eq "$(jq -r .pid "$tmp/status.json")" "${MRCD_PID[h1]}"
check "max-qps from the file" eq "$(jq -r .limits.max_qps "$tmp/status.json")" 64
check "port (a default uncommented)" eq "$(jq -r .port "$tmp/status.json")" 4791
end

begin deb.installed_transfer
lab exec h2 -- "$PERF_I" server --json > "$tmp/server.json" 2> "$tmp/server.err" &
BG_PIDS+=($!)
sleep 0.5
lab exec h1 -- "$PERF_I" client "$(lab addr h2 1)" --json --timeout-s 60 \
	--size 1m --iters 64 --verify > "$tmp/c.json" 2> "$tmp/c.err"
rc=$?
check "64 MiB with the installed mrc-perf" eq "$rc" 0
[ $rc -eq 0 ] || sed 's/^/    client: /' "$tmp/c.err" >&2
check "verified" eq "$(jq -r .verified "$tmp/c.json")" true
end

begin deb.application
out=$(lab exec h1 -- env LD_LIBRARY_PATH="$R$LIBDIR" "$tmp/app" 2> "$tmp/app.err")
check "application runs against the live mrcd" eq "$?" 0
sed 's/^/    app: /' "$tmp/app.err" >&2
check "mrc_version()" eq "$(sed -n 's/^version //p' <<< "$out")" "$VERSION"
check "the planes' addresses" eq "$(sed -n 's/^addr //p' <<< "$out" | sort | tr '\n' ' ')" \
	"$(printf '%s\n' "$(lab addr h1 1)" "$(lab addr h1 2)" | sort | tr '\n' ' ')"
check "libmrc from the scratch root" grep -q "$R$LIBDIR/libmrc.so.0" \
	<(LD_LIBRARY_PATH="$R$LIBDIR" ldd "$tmp/app")
end

begin deb.reload_and_stop
reload=$(sed -n 's/^ExecReload=//p' "$R$UNIT")
check "ExecReload signals HUP" eq "$reload" '/bin/kill -HUP $MAINPID'
pid=$(jq -r .pid "$tmp/status.json")
${reload//\$MAINPID/$pid}
check "h1's mrcd ready again after the reload" wait_ready h1 2
check "same pid" eq "$(lab exec h1 -- "$MRCCTL_I" status --json | jq -r .pid)" "$pid"
for h in h1 h2; do kill -TERM "${MRCD_PID[$h]}"; done
for h in h1 h2; do
	wait "${MRCD_PID[$h]}"
	check "$h's mrcd stops cleanly" eq "$?" 0
done
check "no XDP program left on h1's p1" eq \
	"$(in_host h1 bpftool -j net show dev p1 | jq '.[0].xdp | length')" 0
end

# --- removal and purge ----------------------------------------------------
begin deb.remove_purge
# Down with the installed mrc-lab while it is there.
check "the installed mrc-lab brought the lab up" check_lab_up
lab_cleanup
LAB=""
dpkg --root="$R" --force-script-chrootless --log=/dev/null -r mrc-xdp > "$tmp/rm.out" 2>&1
check "dpkg -r succeeds" eq "$?" 0
check "programs gone" test ! -e "$R/usr/lib/mrc-xdp/mrcd"
check "conffile kept" test -f "$R$CONF"
dpkg --root="$R" --force-script-chrootless --log=/dev/null -P mrc-xdp > "$tmp/purge.out" 2>&1
check "dpkg -P succeeds" eq "$?" 0
check "conffile purged" test ! -e "$R$CONF"
check "nothing left but the dpkg database" eq \
	"$(find "$R" -path "$R/var" -prune -o \( -type f -o -type l \) -print)" ""
end
