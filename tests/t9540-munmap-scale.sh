#!/bin/sh
# t9540-munmap-scale.sh - replaying munmap costs O(log n) in live
# mappings: a program that keeps 20,000 and then 200,000 one-page
# mappings live while it maps, punches holes in and unmaps 3 pages per
# round is reported exactly, and `leaks` on the 200k trace finishes within
# a bound that the quadratic replay (about 5 minutes here) could not meet.
# The range index itself is checked against a linear scan
# (tests/bin/test-range-index).
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/manymaps" ||
	test_skip "libmemprov.so, memprov or tests/bin/manymaps not built"
PG=$(getconf PAGESIZE)
export PG

test_expect_success 'range index: queries, inserts and removals agree with a linear scan' '
	"$BIN/test-range-index" 1 200000 &&
	"$BIN/test-range-index" 12345 200000
'

for n in 20000 200000; do
	export n
	test_expect_success "$n live mappings: leaks and stats exact, bounded in time" '
		timeout 120 "$MEMPROV_CLI" run -o m$n.trace -- "$BIN/manymaps" $n &&
		timeout 120 "$MEMPROV_CLI" leaks --json m$n.trace >leaks$n.json &&
		jget --check leaks$n.json totals.mmap.blocks=$n totals.mmap.bytes=$((n * PG)) \
			"=len(j[\"sites\"])==1" sites.0.func=mmap sites.0.frames.0.function=keep_page &&
		timeout 120 "$MEMPROV_CLI" stats --json m$n.trace >stats$n.json &&
		jget --check stats$n.json functions.munmap.calls=$((3 * n)) \
			functions.mmap.calls=$((2 * n)) kinds.mmap.frees=$((3 * n)) \
			kinds.mmap.live_blocks=$n unmatched_unmaps=0 \
			kinds.mmap.peak_blocks=$((n + 2)) kinds.mmap.peak_bytes=$(((n + 3) * PG))
	'
done

test_done
