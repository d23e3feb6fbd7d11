#!/bin/sh
# t2100-leak-sites.sh - `memprov leaks` and `memprov stats` give exact
# figures for programs with known allocation patterns: leak3 (3 x 100 B
# from leaky_fn at a known line) and stats (a fixed sequence of calls).
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

LEAK_LINE=$(grep -n 'malloc(100); /\* LEAK-LINE' "$TOP/tests/progs/leak3.c" | cut -d: -f1)
export LEAK_LINE

test_expect_success 'memprov run traces leak3, says where, keeps its status' '
	memprov run -o leak3.trace -- "$BIN/leak3" 2>err &&
	grep "^memprov: trace written to .*leak3.trace" err &&
	test -s leak3.trace
'

test_expect_success 'leaks --json: exactly 3 blocks, 300 bytes, all heap' '
	memprov leaks --json leak3.trace >leaks.json &&
	jget --check leaks.json state=exited at=exit damaged=false \
		totals.heap.blocks=3 totals.heap.bytes=300 \
		totals.mmap.blocks=0 totals.mmap.bytes=0 \
		totals.pinned.bytes=0 totals.device.bytes=0 \
		totals.managed.bytes=0 totals.registered.bytes=0 \
		"=len(j[\"sites\"])==1"
'

test_expect_success 'leaks --json: the one site is malloc in leaky_fn at leak3.c:LEAK-LINE' '
	jget --check leaks.json sites.0.kind=heap sites.0.func=malloc \
		sites.0.blocks=3 sites.0.bytes=300 \
		sites.0.frames.0.function=leaky_fn \
		"=os.path.basename(j[\"sites\"][0][\"frames\"][0][\"file\"])==leak3.c" \
		sites.0.frames.0.line=$LEAK_LINE \
		sites.0.frames.1.function=main
'

test_expect_success 'leaks (text) names leaky_fn, leak3.c:LINE and 300 bytes' '
	memprov leaks leak3.trace >leaks.txt &&
	cat leaks.txt &&
	grep -q "leaky_fn" leaks.txt &&
	grep -q "leak3.c:$LEAK_LINE\\b" leaks.txt &&
	grep -qw "300" leaks.txt &&
	! grep -q "tidy_fn" leaks.txt
'

test_expect_success 'stats --json: calls, bytes and failures per function are exact' '
	memprov run -o stats.trace -- "$BIN/stats" &&
	memprov stats --json stats.trace >stats.json &&
	jget --check stats.json \
		functions.malloc.calls=7 functions.malloc.failed=1 \
		functions.malloc.bytes=1710 \
		functions.calloc.calls=2 functions.calloc.failed=1 \
		functions.calloc.bytes=100 \
		functions.realloc.calls=1 functions.realloc.failed=0 \
		functions.realloc.bytes=400 \
		functions.free.calls=6 \
		state=exited cut=false cut_at=null damaged=false \
		unmatched_frees=0 threads=1
'

test_expect_success 'stats --json: heap peak and live are exact' '
	jget --check stats.json kinds.heap.peak_bytes=1910 \
		kinds.heap.peak_blocks=6 kinds.heap.live_bytes=60 \
		kinds.heap.live_blocks=1 &&
	memprov leaks --json stats.trace >leaks2.json &&
	jget --check leaks2.json totals.heap.blocks=1 totals.heap.bytes=60
'

test_expect_success 'stats (text) shows the calls per function' '
	memprov stats stats.trace >stats.txt &&
	cat stats.txt &&
	grep -Eq "^ *malloc +7 +1,710 +1$" stats.txt &&
	grep -Eq "^ *calloc +2 +100 +1$" stats.txt &&
	grep -Eq "^ *free +6 " stats.txt
'

test_done
