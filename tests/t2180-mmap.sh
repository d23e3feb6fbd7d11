#!/bin/sh
# t2180-mmap.sh - anonymous mmap, munmap (whole and partial) and mremap
# are kind "mmap", never "heap"; a file-backed mapping is not counted;
# MEMPROV_MMAP=0 turns the kind off.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"
PG=$(getconf PAGESIZE)
export PG

test_expect_success 'mmaps: live at exit is 2 mappings, 6 pages, kind mmap' '
	memprov run -o mmaps.trace -- "$BIN/mmaps" &&
	memprov leaks --json mmaps.trace >leaks.json &&
	jget --check leaks.json totals.mmap.blocks=2 totals.mmap.bytes=$((6 * PG)) \
		totals.heap.blocks=0 totals.heap.bytes=0 state=exited
'

test_expect_success 'mmaps: the sites are the mmap of A (3 pages left) and the mremap of C' '
	jget --check leaks.json \
		"=sorted((s[\"kind\"], s[\"func\"], s[\"bytes\"], s[\"blocks\"]) for s in j[\"sites\"])==[[\"mmap\", \"mmap\", $((3 * PG)), 1], [\"mmap\", \"mremap\", $((3 * PG)), 1]]" &&
	jget --check leaks.json sites.0.frames.0.function=main sites.1.frames.0.function=main
'

test_expect_success 'mmaps: stats counts calls and the 7-page peak' '
	memprov stats --json mmaps.trace >stats.json &&
	jget --check stats.json kinds.mmap.peak_bytes=$((7 * PG)) \
		kinds.mmap.peak_blocks=3 kinds.mmap.live_bytes=$((6 * PG)) \
		kinds.mmap.live_blocks=2 functions.munmap.calls=2 \
		functions.mremap.calls=1 unmatched_frees=0 \
		kinds.heap.live_bytes=0 kinds.heap.peak_bytes=0
'

test_expect_success 'MEMPROV_MMAP=0: no mmap kind recorded' '
	MEMPROV_MMAP=0 memprov run -o nommap.trace -- "$BIN/mmaps" &&
	memprov leaks --json nommap.trace >nommap.json &&
	jget --check nommap.json totals.mmap.blocks=0 totals.mmap.bytes=0 \
		"=len(j[\"sites\"])==0"
'

test_done
