#!/bin/sh
# install-deps.sh - check what memprov needs by trying it (compiling and
# linking against each library, running each command, importing each
# Python module), and install what is missing with apt-get.
#
#   scripts/install-deps.sh [--check] [build] [test] [bench] [html] [fuzz] [deb]
#
# build: a C compiler and make, the C library's headers, libunwind, uthash,
# elfutils' libdw and libelf (what `make` needs; nothing else);
# test: what the test suite runs (Debian's /usr/bin/python3 with numpy,
# psutil, pytest and jsonschema, valgrind, xmllint, strace, prlimit and setpriv,
# sqlite3 and git for the reachability comparison with valgrind, and gdb);
# bench: heaptrack, GNU time, perf, sqlite3, hypothesis (numpy's tests), and clang 14 with its
# LeakSanitizer runtime (the bench's third column); html: chromium for the HTML page's
# tests; fuzz: clang 14 and its libFuzzer runtime; deb: dpkg-deb.
#
# Nothing is done when everything works; no package database is asked
# (dpkg-query may be absent). When something is missing: with --check,
# or on a machine without apt-get, it lists what is missing (with the
# Debian package that has it) and exits 1; as root with apt-get it
# installs those packages; otherwise it prints the apt-get command to run
# and exits 1. CC is the compiler the build uses (default cc).
set -u

CC=${CC:-cc}
PY=/usr/bin/python3
tmp=

cleanup() { [ -z "$tmp" ] || rm -rf "$tmp"; }
trap cleanup EXIT

# compiles HEADER [LIB]: a program including HEADER compiles and links
# (with -lLIB).
compiles() {
	[ -n "$tmp" ] || tmp=$(mktemp -d "${TMPDIR:-/tmp}/memprov-deps.XXXXXX") || return 1
	printf '#include <%s>\nint main(void) { return 0; }\n' "$1" >"$tmp/t.c"
	"$CC" -o "$tmp/t" "$tmp/t.c" ${2:+-l$2} >/dev/null 2>&1
}

has() { command -v "$1" >/dev/null 2>&1; }
pyhas() { [ -x "$PY" ] && "$PY" -c "import $1" >/dev/null 2>&1; }
clang_lsan() { ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.lsan-x86_64.a >/dev/null 2>&1; }
clang_fuzzer() { ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; }

# One requirement per line: what (as a person reads it), its Debian
# package, and the probe that says it is there.
reqs_build='
a C compiler ($CC)|gcc|has "$CC"
make|make|has make
the C library headers|libc6-dev|compiles stdio.h
libunwind (libunwind.h, -lunwind)|libunwind-dev|compiles libunwind.h unwind
uthash (uthash.h)|uthash-dev|compiles uthash.h
elfutils libdw (elfutils/libdwfl.h, -ldw)|libdw-dev|compiles elfutils/libdwfl.h dw
libelf (gelf.h, -lelf)|libelf-dev|compiles gelf.h elf'
reqs_test='
Python 3 at /usr/bin/python3|python3|[ -x "$PY" ]
numpy for /usr/bin/python3|python3-numpy|pyhas numpy
psutil for /usr/bin/python3|python3-psutil|pyhas psutil
pytest for /usr/bin/python3|python3-pytest|pyhas pytest
coverage for /usr/bin/python3 (t4017)|python3-coverage|pyhas coverage
jsonschema for /usr/bin/python3|python3-jsonschema|pyhas jsonschema
CPython as a shared library (an application embedding it)|libpython3.11|[ -e /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0 ]
valgrind|valgrind|has valgrind
xmllint|libxml2-utils|has xmllint
strace|strace|has strace
prlimit and setpriv|util-linux|has prlimit && has setpriv
sqlite3|sqlite3|has sqlite3
git|git|has git
gdb (a breakpoint in a traced program, t9500)|gdb|has gdb'
reqs_bench='
heaptrack|heaptrack|has heaptrack && has heaptrack_print
GNU time (/usr/bin/time)|time|[ -x /usr/bin/time ]
perf|linux-perf|has perf
sqlite3|sqlite3|has sqlite3
clang 14|clang-14|has clang-14
the LeakSanitizer runtime of clang 14|libclang-rt-14-dev|clang_lsan
hypothesis for /usr/bin/python3 (numpy'"'"'s conftest.py imports it: the pytest workload)|python3-hypothesis|pyhas hypothesis'
reqs_html='
chromium|chromium|has chromium'
reqs_fuzz='
clang 14|clang-14|has clang-14
the libFuzzer runtime of clang 14|libclang-rt-14-dev|clang_fuzzer'
reqs_deb='
dpkg-deb|dpkg|has dpkg-deb'

check_only=0
[ "${1:-}" = --check ] && { check_only=1; shift; }
[ $# -gt 0 ] || set -- build
want=
for set in "$@"; do
	case "$set" in
	build) want="$want$reqs_build" ;;
	test) want="$want$reqs_build$reqs_test" ;;
	bench) want="$want$reqs_build$reqs_test$reqs_bench" ;;
	html) want="$want$reqs_html" ;;
	fuzz) want="$want$reqs_build$reqs_fuzz" ;;
	deb) want="$want$reqs_deb" ;;
	*) echo "install-deps.sh: unknown set '$set' (build, test, bench, html, fuzz, deb)" >&2; exit 2 ;;
	esac
done

# Try each requirement once; collect what fails.
missing= pkgs= seen='|'
nl='
'
IFS_SAVE=$IFS
IFS=$nl
for line in $want; do
	[ -n "$line" ] || continue
	case "$seen" in *"|$line|"*) continue ;; esac
	seen="$seen$line|"
	what=${line%%|*}
	rest=${line#*|}
	pkg=${rest%%|*}
	probe=${rest#*|}
	IFS=$IFS_SAVE
	if ! eval "$probe"; then
		missing="$missing$nl  $(eval "echo \"$what\"") (Debian package $pkg)"
		case " $pkgs " in *" $pkg "*) ;; *) pkgs="$pkgs $pkg" ;; esac
	fi
	IFS=$nl
done
IFS=$IFS_SAVE
[ -n "$pkgs" ] || exit 0

cmd="apt-get install -y --no-install-recommends$pkgs"
if [ "$check_only" = 1 ] || ! has apt-get; then
	echo "memprov: missing for 'scripts/install-deps.sh $*':$missing" >&2
	if has apt-get; then
		echo "as root, scripts/install-deps.sh $* installs them (apt-get update && $cmd)" >&2
	else
		echo "this machine has no apt-get: install the same with its package manager" >&2
	fi
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "memprov: missing:$missing" >&2
	echo "run as root: apt-get update && $cmd" >&2
	exit 1
fi
echo "install-deps.sh: installing$pkgs" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists: update once, then install.
if ! apt-get install -y -qq --no-install-recommends $pkgs >/dev/null 2>&1; then
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $pkgs >/dev/null
fi
