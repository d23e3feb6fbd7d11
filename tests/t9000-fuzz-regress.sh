#!/bin/sh
# t9000-fuzz-regress.sh - every input of the fuzzers' trace corpus
# (fuzz/corpus/trace: seeds, and any input a fuzzer ever crashed on, kept
# there as crash-*) through the normal analyzer: leaks (text and JSON),
# stats, dump and timeline each end, bounded, with status 0 or 1 (never a signal
# or a sanitizer's report), and JSON output that parses.
. "$(dirname "$0")/test-lib.sh"
test -x "$MEMPROV_CLI" || test_skip "analyzer/memprov not built"
ls "$TOP"/fuzz/corpus/trace/* >/dev/null 2>&1 || test_skip "no fuzz corpus"

test_expect_success 'every corpus input: leaks, stats, dump end with 0 or 1' '
	n=0 &&
	for f in "$TOP"/fuzz/corpus/trace/*; do
		n=$((n + 1))
		for cmd in "leaks" "leaks --json" "stats --json" "dump" "timeline --json"; do
			st=0 && timeout 30 "$MEMPROV_CLI" $cmd "$f" >out 2>err </dev/null || st=$?
			if [ $st -gt 1 ]; then
				echo "$cmd $f: status $st"; tail -n 5 err; exit 1
			fi
			case "$cmd" in *json*)
				[ $st = 1 ] || /usr/bin/python3 -c "import json,sys; json.load(open(\"out\"))" ||
					{ echo "$cmd $f: bad JSON"; exit 1; } ;;
			esac
		done
	done &&
	echo "$n inputs" && test $n -ge 30
'

test_done
