#!/bin/sh
# hot-text.sh - writes interpose/hot.txt: the functions of libmemprov.so
# that common runs execute, in three groups: those every traced process
# runs (start-up, hooks, stack walk, trace writer), those of Python
# processes, those of native ones (the scan at exit among them). The link
# puts them first in the text, in that order (scripts/text-order.sh).
#
# Why: the kernel maps a file's pages 64 KiB at a time around a fault
# (fault-around), so a process had every 64 KiB window of libmemprov.so's
# text that held one function it ran resident: all 208 KiB of it, where
# the functions a Python process runs take some 90 KiB (pycalls: 104 KiB
# of memprov's text resident with this order).
#
#   scripts/hot-text.sh        (make hot-text; after make test-build; ~1 minute)
#   HOT_KEEP=1 scripts/hot-text.sh     keeps its directory (names it)
#
# How: the workloads (bench/pycalls.py, a numpy import and a script
# opening /dev/null and /proc/self, Python processes; tests/bin/uw-churn,
# uw-cxxthrow, ls and a shell pipeline, native ones) run under a copy of
# the library built with -finstrument-functions and
# scripts/hot-text-probe.c, which notes the
# code of each function the first time it runs; then, where valgrind is
# installed, under the real library with callgrind (see run below). A
# function renamed or added since the last run is placed with the rest of
# the text: the library is correct either way, only its resident size
# changes.
set -eu
cd "$(dirname "$0")/.."
test -x tests/bin/uw-churn || { echo "hot-text: run make and make test-build first" >&2; exit 2; }
command -v gawk >/dev/null || { echo "hot-text: needs gawk (apt-get install gawk)" >&2; exit 2; }
out=interpose/hot.txt
tmp=$(mktemp -d)
trap '[ -n "${HOT_KEEP:-}" ] && echo "hot-text: kept $tmp" || rm -rf "$tmp"' EXIT

# the probe build: the Makefile's command for the library's objects, instrumented
cmd=$(make -s -B -n V=1 interpose/cfi.o | grep -- ' -c -o interpose/cfi\.o interpose/cfi\.c$') ||
	{ echo "hot-text: make -n gave no command for interpose/cfi.o" >&2; exit 2; }
cmd=${cmd% -c -o interpose/cfi.o interpose/cfi.c}
for c in interpose/*.c; do
	eval "$cmd -w -finstrument-functions -c -o \"\$tmp/$(basename "$c" .c).o\" $c" &
done
wait
cc=${cmd%% *}
$cc -O2 -fPIC -DHOT_OUT="\"$tmp/seen\"" -c -o "$tmp/probe.o" scripts/hot-text-probe.c
probe=$tmp/libmemprov-probe.so
lib=$PWD/interpose/libmemprov-syms.so
$cc -shared -Wl,-z,nodelete -Wl,-z,now -o "$probe" "$tmp"/*.o -ldl -lpthread

# names FILE OFFSETS: the functions of FILE holding the offsets (hex, one
# a line), one name a line, with every other name of the function (one of
# them its section's: mmap64 and mmap) and a clone's suffix (.constprop.0)
# cut
names() {
	nm -n -S "$1" | gawk -v seen="$2" '
		BEGIN { while ((getline w <seen) > 0) want[++nw] = strtonum("0x" w) }
		NF == 4 && $3 ~ /^[tTW]$/ {
			a = strtonum("0x" $1); sub(/\..*/, "", $4)
			lo[++nf] = a; hi[nf] = a + strtonum("0x" $2); name[nf] = $4
		}
		END {
			for (i = 1; i <= nw; i++)
				for (k = 1; k <= nf; k++)
					if (want[i] >= lo[k] && want[i] < hi[k])
						print name[k]
		}'
}

# run TAG CMD...: the functions CMD runs, one name a line, in $tmp/TAG.
# Twice: under the probe build (every function, the scan at exit among
# them, but its inlining differs: a helper it inlines may be called in
# the real build), then the real library under callgrind where valgrind
# is installed (the real build's calls, but memprov runs no scan under
# valgrind). An entry stub (MP_ENTRY_STUB, assembly, not instrumented)
# runs where the function it jumps to runs.
run() {
	tag=$1
	shift
	rm -f "$tmp/seen" "$tmp/cg".*
	mkdir -p "$tmp/t"
	env MEMPROV_OUTPUT="$tmp/t/%p.trace" LD_PRELOAD="$probe" "$@" >/dev/null 2>"$tmp/err" ||
		{ cat "$tmp/err" >&2; echo "hot-text: $* failed" >&2; exit 1; }
	names "$probe" "$tmp/seen" >"$tmp/names"
	if command -v valgrind >/dev/null; then
		valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$tmp/cg.%p" \
			env MEMPROV_OUTPUT="$tmp/t/%p.trace" LD_PRELOAD="$lib" "$@" >/dev/null 2>"$tmp/err" ||
			{ cat "$tmp/err" >&2; echo "hot-text: $* failed under valgrind" >&2; exit 1; }
		for f in "$tmp"/cg.*; do
			callgrind_annotate --threshold=100 "$f" | grep 'libmemprov-syms\.so\]' |
				sed -E "s/^ *[0-9,]+ \([^)]*\) +[^:]*:([^ ]+) .*/\1/; s/'[0-9]+$//"
		done | sort -u >"$tmp/cg-names"
		# by address: every name of each function
		nm "$lib" | gawk -v want="$tmp/cg-names" '
			BEGIN { while ((getline w <want) > 0) seen[w] = 1 }
			$2 ~ /^[tTW]$/ { at[$1] = at[$1] " " $3; if ($3 in seen) hit[$1] = 1 }
			END { for (a in hit) { k = split(at[a], all, " "); for (i = 1; i <= k; i++) { sub(/\..*/, "", all[i]); print all[i] } } }' \
			>>"$tmp/names"
	fi
	sort -u -o "$tmp/names" "$tmp/names"
	sed -n 's/^MP_ENTRY_STUB(\([A-Za-z_0-9]*\), \([A-Za-z_0-9]*\),.*/\2 \1/p' interpose/*.c |
		gawk -v names="$tmp/names" 'BEGIN { while ((getline w <names) > 0) { seen[w] = 1; print w } }
			$1 in seen { print $2 }' | sort -u >"$tmp/$tag"
	test -s "$tmp/$tag" || { echo "hot-text: no function seen in: $*" >&2; exit 1; }
}

run py /usr/bin/python3 bench/pycalls.py 20
run np /usr/bin/python3 -c 'import numpy; a = [numpy.ones(1000 * k) for k in range(50)]'
# what Python programs open beside their modules: /dev/null (subprocess)
# and /proc/self (psutil, the test that reads its own page map), which the
# open hooks look at (names_hidden): native-only before, a 64 KiB window
# past the Python group mapped in a Python process
run pyio /usr/bin/python3 -c 'import os; os.close(os.open(os.devnull, os.O_RDONLY)); open("/proc/self/statm").read()'
run churn tests/bin/uw-churn 2 2000
run cxx tests/bin/uw-cxxthrow
run ls ls -la /usr/share/doc
run sh sh -c 'cat /etc/hostname | wc -c >/dev/null; date >/dev/null'

sort -u "$tmp/py" "$tmp/np" "$tmp/pyio" >"$tmp/python"
sort -u "$tmp/churn" "$tmp/cxx" "$tmp/ls" "$tmp/sh" >"$tmp/native"
comm -12 "$tmp/python" "$tmp/native" >"$tmp/common"
comm -23 "$tmp/python" "$tmp/common" >"$tmp/python-only"
comm -23 "$tmp/native" "$tmp/common" >"$tmp/native-only"

# group NAME FILE: the group's names, under a comment
group() {
	printf '# %s: %s functions\n' "$1" "$(wc -l <"$2")"
	cat "$2"
}
{
	echo "# interpose/hot.txt - written by scripts/hot-text.sh: read it there."
	echo "# scripts/text-order.sh puts these functions first in libmemprov.so's text."
	group "every traced process" "$tmp/common"
	echo "# the C runtime's, linked in: crtbeginS.o's frame_dummy (start-up) and"
	echo "# __do_global_dtors_aux (exit), libc_nonshared.a's pthread_atfork (start-up)"
	echo "*crtbeginS.o(.text .text.*)"
	echo "*libc_nonshared.a:*(.text .text.*)"
	group "Python processes" "$tmp/python-only"
	group "native processes (the scan at exit among them)" "$tmp/native-only"
} >"$out"
echo "hot-text: $out: $(wc -l <"$tmp/common") common, $(wc -l <"$tmp/python-only") Python, $(wc -l <"$tmp/native-only") native functions"
