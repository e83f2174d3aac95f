#!/bin/sh
# mkdeb.sh STAGE VERSION: build the Debian package mrc-xdp from the built
# tree (`make deb` runs it after `make all lib`): `make install` with
# PREFIX=/usr into STAGE, then DEBIAN/ (control with the dependencies
# dpkg-shlibdeps finds, conffiles, md5sums, triggers, shlibs, maintainer
# scripts) and
# dpkg-deb --build. Prints the path of the package, next to STAGE:
# build/mrc-xdp_VERSION_ARCH.deb.
set -eu

VERSION=$2
HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$(dirname "$1")"
OUT_DIR=$(cd "$(dirname "$1")" && pwd)
STAGE=$OUT_DIR/$(basename "$1")
LOG=$OUT_DIR/deb.log
# Maintainer: MAINTAINER, else DEBFULLNAME/DEBEMAIL (as dch), else git's
# user, else a placeholder lintian will flag.
maintainer() {
	name=${DEBFULLNAME:-$(git -C "$HERE/.." config user.name 2>/dev/null || true)}
	mail=${DEBEMAIL:-$(git -C "$HERE/.." config user.email 2>/dev/null || true)}
	if [ -n "$name" ] && [ -n "$mail" ]; then
		echo "$name <$mail>"
	else
		echo "MRC-XDP developers <mrc-xdp@invalid>"
	fi
}
MAINTAINER=${MAINTAINER:-$(maintainer)}

die() { echo "mkdeb: $*" >&2; exit 1; }

for tool in dpkg-deb dpkg-shlibdeps; do
	command -v "$tool" >/dev/null 2>&1 ||
		die "$tool is missing (package dpkg-dev): run 'make deps'"
done
ARCH=$(dpkg --print-architecture)
PKG=$OUT_DIR/mrc-xdp_${VERSION}_$ARCH.deb

# The files, as `make install` puts them.
stage_files() {
	rm -rf "$STAGE"
	mkdir -p "$STAGE"
	${MAKE:-make} --no-print-directory -C "$HERE/.." install PREFIX=/usr \
		DESTDIR="$STAGE" > "$LOG" 2>&1 ||
		{ cat "$LOG" >&2; die "make install failed"; }
}

# The shared libraries the ELF files need, as Debian package names with
# their minimum versions (dpkg-shlibdeps wants a debian/control to read).
shlib_depends() {
	tmp=$(mktemp -d)
	mkdir "$tmp/debian"
	printf 'Source: mrc-xdp\n\nPackage: mrc-xdp\nArchitecture: any\n' \
		> "$tmp/debian/control"
	elves=$(find "$STAGE" -type f \( -perm -u+x -o -name '*.so.*' -o -name '*-fi.so' \) \
		-exec sh -c 'head -c4 "$1" | grep -q "ELF"' _ {} \; -print)
	# shellcheck disable=SC2046 # one argument per file, no blanks in them
	deps=$(cd "$tmp" && dpkg-shlibdeps -O $(for f in $elves; do echo "-e$f"; done) \
		2>> "$LOG") || { rm -rf "$tmp"; cat "$LOG" >&2; die "dpkg-shlibdeps failed"; }
	rm -rf "$tmp"
	deps=${deps#shlibs:Depends=}
	[ -n "$deps" ] || die "dpkg-shlibdeps found no dependency"
	echo "$deps"
}

# DEBIAN/: control, conffiles, md5sums, the maintainer scripts.
write_debian() {
	deps=$(shlib_depends)
	size=$(du -sk "$STAGE" | cut -f1)
	mkdir -p "$STAGE/DEBIAN"
	sed -e "s|@VERSION@|$VERSION|" -e "s|@ARCH@|$ARCH|" \
	    -e "s|@MAINTAINER@|$MAINTAINER|" -e "s|@SIZE@|$size|" \
	    -e "s|@DEPENDS@|$deps|" "$HERE/debian/control.in" > "$STAGE/DEBIAN/control"
	(cd "$STAGE" && find etc -type f | sed 's|^|/|' | sort) > "$STAGE/DEBIAN/conffiles"
	(cd "$STAGE" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -print |
		sed 's|^\./||' | sort | xargs md5sum) > "$STAGE/DEBIAN/md5sums"
	# libmrc: dpkg runs ldconfig after installing it (libc-bin's trigger),
	# and a package linking it depends on this one (shlibs).
	echo "activate-noawait ldconfig" > "$STAGE/DEBIAN/triggers"
	so=$(find "$STAGE" -name 'libmrc.so.*' -type f | head -n 1)
	[ -n "$so" ] || die "no libmrc.so.N in $STAGE"
	echo "libmrc ${so##*.so.} mrc-xdp (>= $VERSION)" > "$STAGE/DEBIAN/shlibs"
	chmod 0644 "$STAGE/DEBIAN/triggers" "$STAGE/DEBIAN/shlibs"
	for s in postinst prerm postrm; do
		install -m 0755 "$HERE/debian/$s" "$STAGE/DEBIAN/$s"
	done
	chmod 0644 "$STAGE/DEBIAN/control" "$STAGE/DEBIAN/conffiles" "$STAGE/DEBIAN/md5sums"
}

# Programs and libmrc.so stripped as Debian ships them (the BPF objects
# keep their BTF: libbpf needs it); doc: copyright, changelog, overrides.
finish_files() {
	find "$STAGE/usr/lib" -type f \( -perm -u+x -o -name '*.so.*' -o -name '*-fi.so' \) |
	while read -r f; do
		head -c4 "$f" | grep -q ELF || continue
		strip --strip-unneeded --remove-section=.comment --remove-section=.note "$f"
	done
	doc=$STAGE/usr/share/doc/mrc-xdp
	install -d "$doc" "$STAGE/usr/share/lintian/overrides"
	install -m 0644 "$HERE/debian/copyright" "$doc/copyright"
	install -m 0644 "$HERE/debian/lintian-overrides" \
		"$STAGE/usr/share/lintian/overrides/mrc-xdp"
	# A native package's changelog: this build, dated by its commit.
	when=$(git -C "$HERE/.." log -1 --format=%cD 2>/dev/null || date -R)
	commit=$(git -C "$HERE/.." rev-parse --short HEAD 2>/dev/null || echo unknown)
	printf 'mrc-xdp (%s) unstable; urgency=medium\n\n  * Built from the source tree, commit %s.\n\n -- %s  %s\n' \
		"$VERSION" "$commit" "$MAINTAINER" "$when" | gzip -9n > "$doc/changelog.gz"
	chmod 0644 "$doc/changelog.gz"
}

stage_files
finish_files
write_debian
dpkg-deb --root-owner-group -Zxz --build "$STAGE" "$PKG" >> "$LOG" 2>&1 ||
	{ cat "$LOG" >&2; die "dpkg-deb --build failed"; }
echo "$PKG"
