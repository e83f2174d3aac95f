#!/usr/bin/env bash
# The source tree keeps the shape docs/ARCHITECTURE.md describes ("Source
# tree"): no source file over 1,200 lines; every header compiles on its
# own (includes what it uses); libmrc's layers call only downwards
# (tools/check-layers.sh); only the objects that embed a skeleton are
# rebuilt when it changes; installed programs link no test code. Needs a
# built tree (make all), no lab and no root.
. "$(dirname "$0")/lib.sh"

cd "$ROOT" || exit 1
BUILD=${BUILD:-build}
MAX_LINES=1200
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Source files: C, headers, shell and the extension-less scripts in tools/
# and lab/ (bash). Docs, data and generated files are not source.
source_files() {
	if git rev-parse --is-inside-work-tree > /dev/null 2>&1; then
		git ls-files
	else
		find . -path ./build -prune -o -path ./.git -prune -o -type f -print |
			sed 's|^\./||'
	fi | while read -r f; do
		[ -f "$f" ] && [ ! -L "$f" ] || continue
		case $f in
		*.c | *.h | *.sh | *.lua) echo "$f" ;;
		tools/* | lab/*) head -n 1 "$f" | grep -q '^#!' && echo "$f" ;;
		esac
	done
}

begin structure.no_source_over_1200_lines
source_files > "$tmp/files"
check "source files found" test -s "$tmp/files"
# One wc for many files: "LINES NAME" lines (and wc's "total" lines).
tr '\n' '\0' < "$tmp/files" | xargs -0 wc -l > "$tmp/lines"
check "every source file counted" eq "$(awk '$2 != "total"' "$tmp/lines" | wc -l)" \
	"$(wc -l < "$tmp/files")"
while read -r n f; do
	[ "$f" = total ] && continue
	if [ "$n" -gt "$MAX_LINES" ]; then
		echo "    $f: $n lines (at most $MAX_LINES)" >&2
		check "$f under $MAX_LINES lines" false
	fi
done < "$tmp/lines"
end

# compile_alone COMPILER FLAGS... -- HEADER: a file that includes only the
# header compiles. Up to $(nproc) at once (compile_start), each judged
# with compile_check in the order started.
compile_alone() {
	local hdr=${*: -1} n=$(($# - 1)) f
	f=$tmp/alone.$(printf '%s' "$hdr" | tr '/.' '__')
	printf '#include "%s"\n' "$hdr" > "$f.c"
	"${@:1:$n}" -fsyntax-only "$f.c" 2> "$f.err"
}
ALONE=()
JOBS=$(nproc 2> /dev/null || echo 2)
compile_start() {
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n; done
	compile_alone "$@" &
	ALONE+=("$!:${*: -1}")
}
compile_check_all() {
	local a pid hdr f rc
	for a in "${ALONE[@]}"; do
		pid=${a%%:*} hdr=${a#*:}
		wait "$pid"
		rc=$?
		f=$tmp/alone.$(printf '%s' "$hdr" | tr '/.' '__')
		[ $rc -eq 0 ] || sed 's/^/    /' "$f.err" | head -n 5 >&2
		check "${hdr#"$PWD/"} compiles alone${1:-}" eq "$rc" 0
	done
	ALONE=()
}

begin structure.headers_stand_alone
cc_flags=(-std=gnu11 -Wall -Werror -Iinclude -Iuser -Ilab -Itests/include -I"$BUILD/skel"
	  $(pkg-config --cflags libbpf libxdp libfabric 2> /dev/null))
for h in include/mrc/*.h user/common/*.h user/agent/*.h user/libmrc/*.h \
	 user/mrcd/*.h user/mrcctl/*.h user/libfabric/*.h lab/*.h; do
	[ -f "$h" ] || continue
	compile_start "${CC:-cc}" "${cc_flags[@]}" "$PWD/$h"
done
compile_check_all
CLANG=$(sed -n 's/^CLANG *?\?= *//p' Makefile > /dev/null; for c in clang-19 clang-16 clang-15 clang-14 clang; do
	command -v "$c" > /dev/null && { echo "$c"; break; }; done)
arch=$(uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')
bpf_flags=(-target bpf -mcpu=v3 -Wall -Werror -D__TARGET_ARCH_$arch -I"$BUILD" -Iinclude
	   -Ibpf -Ibpf/include -Ilab)
if [ -z "$CLANG" ] || [ ! -f "$BUILD/vmlinux.h" ]; then
	check "clang and $BUILD/vmlinux.h (make all) present" false
else
	# The role headers of the fast path; the shared ABI headers are
	# checked above (for BPF they come after vmlinux.h by design).
	for h in bpf/*.h bpf/*/*.h; do
		[ -f "$h" ] || continue
		compile_start "$CLANG" "${bpf_flags[@]}" "$PWD/$h"
	done
	compile_check_all " for BPF"
fi
end

begin structure.libmrc_layers
if [ -x tools/check-layers.sh ]; then
	check "tools/check-layers.sh" sh tools/check-layers.sh
else
	check "tools/check-layers.sh exists" false
fi
end

# The objects make would rebuild if a skeleton changed (-W: as if it were
# new, without touching it), and whether each one uses that skeleton: it
# includes NAME.skel.h, or (mrc) the BPF tests' fixture, which embeds it,
# itself or through a header of its own folder.
uses_skeleton() {
	local src=$1 skel=$2 pat h
	pat="\"$skel\\.skel\\.h\""
	[ "$skel" = mrc ] && pat="$pat\\|\"mrc_fixture\\.h\""
	grep -q "#include $pat" "$src" && return 0
	for h in $(sed -n 's/^#include "\([a-z_]*\.h\)".*/\1/p' "$src"); do
		[ -f "$(dirname "$src")/$h" ] && grep -q "#include $pat" "$(dirname "$src")/$h" &&
			return 0
	done
	return 1
}

begin structure.skeleton_deps
for skel in mrc lab_fabric; do
	make -s -n -W "$BUILD/skel/$skel.skel.h" BUILD="$BUILD" all 2> /dev/null |
		grep -o -- "-c [^ ]*\.c" | sed 's/^-c //' | sort -u > "$tmp/rebuilt.$skel"
	check "$skel.skel.h: some object depends on it" test -s "$tmp/rebuilt.$skel"
	while read -r src; do
		check "$src rebuilt for $skel.skel.h uses it" uses_skeleton "$src" "$skel"
	done < "$tmp/rebuilt.$skel"
done
check "mrcctl does not wait for a skeleton" \
	bash -c "! grep -q '^user/mrcctl/' '$tmp/rebuilt.mrc'"
check "libmrc does not wait for a skeleton" \
	bash -c "! grep -q '^user/libmrc/' '$tmp/rebuilt.mrc'"
end

begin structure.installed_programs_link_no_test_code
for p in mrcd mrcctl mrc-perf mrc-labctl mrc-lab-traffic mrc-tcp-timeline; do
	if [ ! -x "$BUILD/$p" ]; then
		check "$BUILD/$p built" false
		continue
	fi
	check "$p has no fixture or test symbols" \
		bash -c "! nm '$BUILD/$p' 2>/dev/null | grep -qw 'fixture_setup\|test_state\|test_registry'"
done
check "mrc-bpf-cost is not installed" \
	bash -c "! make -s -n install DESTDIR=/nonexistent BUILD='$BUILD' 2>/dev/null | grep -q 'mrc-bpf-cost'"
check "mrc-fuzz is not installed" \
	bash -c "! make -s -n install DESTDIR=/nonexistent BUILD='$BUILD' 2>/dev/null | grep -q 'mrc-fuzz'"
end
