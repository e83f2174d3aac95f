#!/bin/sh
# SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
#
# libmrc is layered (user/libmrc/LAYERS): a file may use its own layer and
# lower ones, never a higher one, so the layers cannot call each other in
# a circle. This checks it:
#
#   1. every user/libmrc/*.c and *.h is listed in LAYERS (a new file must
#      be given a layer), and every listed file exists;
#   2. no file includes the internal header of a higher layer, or of
#      another layer of its own rank;
#   3. when the objects are built (build/obj/user/libmrc/*.o) and nm is
#      there: no object calls a function or uses a variable that an object
#      of a higher layer (or of another layer of its own rank) defines.
#      The includes alone would miss a prototype written by hand.
#
# Usage: tools/check-layers.sh [-o OBJDIR] [LIBDIR]
#   LIBDIR  the library's sources (default user/libmrc), LAYERS in it
#   OBJDIR  its objects (default build/obj/LIBDIR; skipped when absent)
# Paths are relative to the repository's top (the script goes there).
# Prints "check-layers: ..." lines; exit 0 when the layering holds, 1 with
# one line per violation on stderr otherwise, 2 on a usage error.
# POSIX sh and awk (dash and mawk will do).

set -u

cd "$(dirname "$0")/.." || exit 2

objdir=
while getopts o: opt; do
	case $opt in
	o) objdir=$OPTARG ;;
	*) echo "usage: $0 [-o OBJDIR] [LIBDIR]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
libdir=${1:-user/libmrc}
[ -n "$objdir" ] || objdir=build/obj/$libdir
layers=$libdir/LAYERS

if [ ! -f "$layers" ]; then
	echo "check-layers: no $layers" >&2
	exit 2
fi

# The awk half that reads LAYERS, always the first file (NR == FNR):
# rank[file], layer[file].
LAYERS_AWK='
NR == FNR && /^[ \t]*(#|$)/ { next }
NR == FNR && (NF < 3 || $1 !~ /^[0-9]+$/) {
	printf "check-layers: %s:%d: want \"RANK LAYER FILE...\"\n", FILENAME, FNR > "/dev/stderr"
	bad = 1
	next
}
NR == FNR {
	for (i = 3; i <= NF; i++) {
		if ($i in rank) {
			printf "check-layers: %s:%d: %s is listed twice\n", FILENAME, FNR, $i > "/dev/stderr"
			bad = 1
		}
		rank[$i] = $1 + 0
		layer[$i] = $2
	}
	next
}
function describe(f) {
	return f " (layer " layer[f] ", rank " rank[f] ")"
}
# 1 when `user` may not use `used`: a higher rank, or a peer layer.
function goes_up(user, used) {
	if (rank[used] > rank[user])
		return 1
	return rank[used] == rank[user] && layer[used] != layer[user]
}
'

fail=0

# 1. Every source listed, every listed file there.
listed=$(awk "$LAYERS_AWK"'
END { for (f in rank) print f; exit bad }' "$layers") || fail=1
for f in $listed; do
	if [ ! -f "$libdir/$f" ]; then
		echo "check-layers: $layers lists $f, which is not in $libdir" >&2
		fail=1
	fi
done
nfiles=0
for path in "$libdir"/*.c "$libdir"/*.h; do
	[ -f "$path" ] || continue
	nfiles=$((nfiles + 1))
	f=${path##*/}
	case " $(echo $listed) " in
	*" $f "*) ;;
	*)	echo "check-layers: $path has no layer: add it to $layers" >&2
		fail=1 ;;
	esac
done

# 2. Includes: '#include "x.h"' where x.h is one of the listed headers.
awk "$LAYERS_AWK"'
$1 == "#include" && $2 ~ /^"/ {
	hdr = $2
	gsub(/"/, "", hdr)
	user = FILENAME
	sub(/.*\//, "", user)
	if (!(hdr in rank) || !(user in rank))
		next	# not ours (mrc/abi.h, common/...), or unlisted (reported)
	if (goes_up(user, hdr)) {
		printf "check-layers: %s:%d: %s includes %s, a layer it may not use\n",
		       FILENAME, FNR, describe(user), describe(hdr) > "/dev/stderr"
		bad = 1
	}
	includes++
}
END { printf "check-layers: %d includes of internal headers checked\n", includes; exit bad }
' "$layers" "$libdir"/*.c "$libdir"/*.h || fail=1

# 3. Symbols: who defines what, who uses it.
nobj=0
syms=
if [ -d "$objdir" ] && command -v nm >/dev/null 2>&1; then
	syms=$(mktemp) || exit 2
	trap 'rm -f "$syms"' EXIT
	for f in $listed; do
		case $f in *.c) ;; *) continue ;; esac
		o=$objdir/${f%.c}.o
		if [ ! -f "$o" ]; then
			echo "check-layers: no $o (build first, or pass -o)" >&2
			fail=1
			continue
		fi
		nobj=$((nobj + 1))
		nm -g --defined-only "$o" | awk -v f="$f" 'NF >= 3 { print "D", f, $3 }' >>"$syms"
		nm -u "$o" | awk -v f="$f" 'NF >= 2 { print "U", f, $2 }' >>"$syms"
	done
	awk "$LAYERS_AWK"'
	$1 == "D" { owner[$3] = $2; next }
	$1 == "U" { n++; user[n] = $2; sym[n] = $3; next }
	END {
		for (i = 1; i <= n; i++) {
			if (!(sym[i] in owner))
				continue	# libc, libbpf, user/common
			calls++
			if (goes_up(user[i], owner[sym[i]])) {
				printf "check-layers: %s uses %s of %s, a layer it may not use\n",
				       describe(user[i]), sym[i], describe(owner[sym[i]]) > "/dev/stderr"
				bad = 1
			}
		}
		printf "check-layers: %d uses of symbols between objects checked\n", calls
		exit bad
	}' "$layers" "$syms" || fail=1
else
	echo "check-layers: no objects in $objdir (or no nm): symbols not checked"
fi

if [ "$fail" -ne 0 ]; then
	echo "check-layers: FAIL: $libdir is not layered as $layers says" >&2
	exit 1
fi
echo "check-layers: OK: $nfiles files of $libdir ($nobj objects), no layer uses a higher one"
exit 0
