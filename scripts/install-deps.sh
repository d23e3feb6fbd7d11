#!/bin/sh
# install-deps.sh - install the Debian packages memprov needs, when absent.
#
#   scripts/install-deps.sh [build] [test] [bench] [html] [fuzz]
#
# build: compilers' libraries (libunwind, uthash, elfutils' libdw);
# test: what the test suite runs (python3-numpy, python3-psutil, valgrind,
# xmllint, strace, prlimit/setpriv); bench: heaptrack, perf, clang's
# LeakSanitizer runtime and sqlite3; html:
# chromium for the HTML report test; fuzz: clang and its libFuzzer runtime.
# Nothing is done when everything is there. Without root it prints the
# exact apt-get command to run and fails.
set -e

pkgs_build="gcc make libc6-dev libunwind-dev uthash-dev libdw-dev libelf-dev"
pkgs_test="python3 python3-numpy python3-psutil valgrind libxml2-utils strace util-linux"
pkgs_bench="heaptrack time linux-perf clang-14 libclang-rt-14-dev sqlite3"
pkgs_html="chromium"
pkgs_fuzz="clang-14 libclang-rt-14-dev"

[ $# -gt 0 ] || set -- build
want=
for set in "$@"; do
	case "$set" in
	build) want="$want $pkgs_build" ;;
	test) want="$want $pkgs_build $pkgs_test" ;;
	bench) want="$want $pkgs_build $pkgs_test $pkgs_bench" ;;
	html) want="$want $pkgs_html" ;;
	fuzz) want="$want $pkgs_build $pkgs_fuzz" ;;
	*) echo "install-deps.sh: unknown package set '$set' (build, test, bench, html, fuzz)" >&2; exit 2 ;;
	esac
done

missing=
for p in $want; do
	case " $missing " in *" $p "*) continue ;; esac
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing="$missing $p"
done
[ -n "$missing" ] || exit 0

cmd="apt-get install -y --no-install-recommends$missing"
if [ "$(id -u)" != 0 ]; then
	echo "memprov needs these Debian packages:$missing" >&2
	echo "run as root: apt-get update && $cmd" >&2
	exit 1
fi
echo "install-deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists: update once, then install.
if ! apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
