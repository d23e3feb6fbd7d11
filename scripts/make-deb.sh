#!/bin/sh
# make-deb.sh - what `make deb` runs after `make install` into a staging
# directory: compress the man page, write DEBIAN/control, and build
# memprov_VERSION_ARCH.deb with dpkg-deb in the current directory.
#
#   scripts/make-deb.sh STAGE VERSION ARCH
#
# ARCH is the compiler's (x86_64, aarch64, ...). The package's Depends
# come from the libraries the installed programs need (readelf's NEEDED
# entries), mapped to Debian's runtime packages; an unknown library
# stops the build. Nothing is fetched; dpkg-query is not needed.
set -eu

[ $# = 3 ] || { echo "usage: scripts/make-deb.sh STAGE VERSION ARCH" >&2; exit 2; }
stage=$1 version=$2 arch=$3

case $arch in
x86_64) debarch=amd64 ;;
aarch64) debarch=arm64 ;;
i?86) debarch=i386 ;;
*) debarch=$arch ;;
esac

die() { echo "make-deb.sh: $*" >&2; exit 1; }
command -v dpkg-deb >/dev/null || die "dpkg-deb is missing (Debian package dpkg)"
command -v readelf >/dev/null || die "readelf is missing (Debian package binutils)"
[ -x "$stage/usr/bin/memprov" ] || die "$stage/usr/bin/memprov is missing: run make install DESTDIR=$stage PREFIX=/usr first"

# Depends: one Debian package per library the programs are linked with,
# and libunwind8, which libmemprov.so opens when a stack needs it
# (interpose/unwind_lib.c).
deps=libunwind8
for f in "$stage/usr/bin/memprov" "$stage/usr/lib/libmemprov.so"; do
	[ -f "$f" ] || continue
	for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
		case $lib in
		libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*) pkg="libc6 (>= 2.34)" ;;
		libunwind*.so.8) pkg=libunwind8 ;;
		libgcc_s.so.1) pkg=libgcc-s1 ;;
		libdw.so.1) pkg=libdw1 ;;
		libelf.so.1) pkg=libelf1 ;;
		ld-linux*) continue ;;
		*) die "$f needs $lib: add its Debian package to scripts/make-deb.sh" ;;
		esac
		case ", $deps, " in *", $pkg, "*) ;; *) deps="${deps:+$deps, }$pkg" ;; esac
	done
done

gzip -9nf "$stage/usr/share/man/man1/memprov.1"
mkdir -p "$stage/DEBIAN"
size=$(du -sk "$stage/usr" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOF
Package: memprov
Version: $version
Architecture: $debarch
Maintainer: memprov developers <memprov@localhost>
Installed-Size: $size
Depends: $deps
Section: devel
Priority: optional
Description: find leaked and growing memory in Python and native programs
 memprov records every allocation (malloc family, anonymous mmap, CUDA
 runtime and driver) with its native and Python stack into a trace, through
 a preloaded library, and reports what leaked at exit and what keeps
 growing, with the file and line that allocated it.
EOF
out=memprov_${version}_$debarch.deb
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out" >/dev/null
echo "memprov: wrote $out" >&2
