#!/bin/sh
# t2110-valgrind-agree.sh - live heap at exit from `memprov leaks` equals
# valgrind's "in use at exit" (--run-libc-freeres=no, so that glibc keeps
# what it frees only for valgrind: per-thread bookkeeping, 272 B a thread
# here) on the libc_edge cases, and equals the figures known from the
# program's source. pvalloc is checked against known figures only:
# valgrind 3.19 aborts any program that calls it.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

# mode, then live bytes and blocks known from libc_edge.c. The thread
# modes add glibc's thread bookkeeping: one 272-byte DTV per thread stack
# glibc keeps cached (FACTS.md), which only --run-libc-freeres would free.
KNOWN="realloc0 30 1
memalign 300 2
pvalloc 100 1
valloc 5100 2
aligned_alloc 4224 2
posix_memalign 1100 2
calloc_overflow 40 1
reallocarray_overflow 184 2
hugefail 0 0
threads 2088 8
tlsdtor 608 4"

# vg_live MODE [PRELOAD]: "BYTES BLOCKS" in use at exit under valgrind;
# with PRELOAD, libmemprov.so is loaded too but disabled (MEMPROV_DISABLE)
vg_live() {
	if [ -n "${2:-}" ]; then
		set -- "$1" "vgp-$1.log" env LD_PRELOAD="$MEMPROV_LIB libunwind.so.8" MEMPROV_DISABLE=1
	else
		set -- "$1" "vg-$1.log"
	fi
	mode=$1 log=$2 && shift 2
	timeout 120 "$@" valgrind --run-libc-freeres=no --log-file="$log" \
		"$BIN/libc_edge" "$mode" &&
	sed -n 's/.*in use at exit: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p' \
		"$log" | tr -d ,
}

# mp_live MODE: "BYTES BLOCKS" live heap at exit under memprov
mp_live() {
	memprov run -o "mp-$1.trace" -- "$BIN/libc_edge" "$1" 2>"mp-$1.err" &&
	memprov leaks --json "mp-$1.trace" >"mp-$1.json" &&
	jget "mp-$1.json" totals.heap.bytes totals.heap.blocks | paste -sd " "
}

have_valgrind=yes
command -v valgrind >/dev/null || have_valgrind=no
export have_valgrind

while read -r mode bytes blocks; do
	export mode bytes blocks
	case $mode in threads|tlsdtor) continue ;; esac
	test_expect_success "$mode: live at exit is $bytes B in $blocks blocks (memprov)" '
		got=$(mp_live $mode) &&
		echo "memprov: $got" &&
		test "$got" = "$bytes $blocks" &&
		jget --check mp-$mode.json state=exited at=exit damaged=false
	'
	[ "$mode" = pvalloc ] && continue
	test_expect_success "$mode: valgrind agrees with memprov" '
		test $have_valgrind = yes || { echo "valgrind missing"; false; }
		vg=$(vg_live $mode) &&
		echo "valgrind: $vg" &&
		test "$vg" = "$bytes $blocks"
	'
done <<EOF_KNOWN
$KNOWN
EOF_KNOWN

# Threads: under memprov the process has more TLS modules (libmemprov.so,
# and libunwind, which a traced process opens before its first thread
# starts), and glibc's DTV grows by 16 B per module: the bare 272 B
# becomes 272 + 16 * m under memprov, a real difference that valgrind
# sees too once they are loaded. So the right figure for memprov is
# valgrind's with both preloaded and memprov disabled, less what they
# allocate themselves (measured on realloc0).
test_expect_success 'the disabled preload object'"'"'s own blocks, under valgrind' '
	test $have_valgrind = yes || { echo "valgrind missing"; false; }
	vg_live realloc0 >plain && vg_live realloc0 pre >pre &&
	echo "plain $(cat plain), with libmemprov.so disabled $(cat pre)" &&
	paste -d " " pre plain | awk "{print \$1 - \$3, \$2 - \$4}" >own &&
	awk "{exit !(\$1 >= 0 && \$2 >= 0)}" own
'

while read -r mode bytes blocks; do
	export mode bytes blocks
	case $mode in threads|tlsdtor) ;; *) continue ;; esac
	test_expect_success "$mode: valgrind says $bytes B in $blocks blocks" '
		test $have_valgrind = yes || { echo "valgrind missing"; false; }
		vg=$(vg_live $mode) &&
		echo "valgrind: $vg" &&
		test "$vg" = "$bytes $blocks"
	'
	test_expect_success "$mode: memprov agrees with valgrind (DTVs of its TLS modules counted)" '
		vgp=$(vg_live $mode pre) &&
		want=$(echo "$vgp $(cat own)" | awk "{print \$1 - \$3, \$2 - \$4}") &&
		got=$(mp_live $mode) &&
		echo "valgrind with libmemprov.so loaded, less its own: $want; memprov: $got" &&
		test "$got" = "$want" &&
		jget --check mp-$mode.json state=exited at=exit damaged=false &&
		set -- $got &&
		test "$2" = "$blocks" &&
		test $(( ($1 - bytes) % 16 )) = 0
	'
done <<EOF_KNOWN
$KNOWN
EOF_KNOWN

test_expect_success 'failed calls are failures, not live memory' '
	memprov stats --json mp-calloc_overflow.trace >s1.json &&
	jget --check s1.json functions.calloc.calls=2 functions.calloc.failed=1 \
		functions.calloc.bytes=40 kinds.heap.live_bytes=40 &&
	memprov stats --json mp-reallocarray_overflow.trace >s2.json &&
	jget --check s2.json functions.reallocarray.calls=2 \
		functions.reallocarray.failed=1 kinds.heap.live_bytes=184 \
		kinds.heap.live_blocks=2 unmatched_frees=0 &&
	memprov stats --json mp-hugefail.trace >s3.json &&
	jget --check s3.json functions.malloc.calls=2 functions.malloc.failed=2 \
		kinds.heap.live_bytes=0 kinds.heap.peak_bytes=0 &&
	memprov stats --json mp-posix_memalign.trace >s4.json &&
	jget --check s4.json functions.posix_memalign.calls=4 \
		functions.posix_memalign.failed=1
'

test_expect_success 'realloc(p, 0) frees p: one realloc call, no leak of 50 B' '
	memprov stats --json mp-realloc0.trace >s5.json &&
	jget --check s5.json functions.realloc.calls=1 functions.malloc.calls=2 \
		kinds.heap.live_blocks=1 kinds.heap.live_bytes=30 \
		kinds.heap.peak_bytes=80 unmatched_frees=0 &&
	jget --check mp-realloc0.json "=len(j[\"sites\"])==1" sites.0.bytes=30
'

test_expect_success 'memalign, valloc, pvalloc are seen (functions named)' '
	jget --check mp-memalign.json "=sorted(s[\"func\"] for s in j[\"sites\"])==[\"memalign\", \"memalign\"]" &&
	memprov stats --json mp-pvalloc.trace >s6.json &&
	jget --check s6.json functions.pvalloc.calls=2 kinds.heap.live_blocks=1 &&
	memprov stats --json mp-valloc.trace >s7.json &&
	jget --check s7.json functions.valloc.calls=3 functions.free.calls=1
'

test_done
