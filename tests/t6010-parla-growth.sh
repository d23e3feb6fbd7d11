#!/bin/sh
# t6010-parla-growth.sh - memprov diagnoses the Parla eviction leak end to
# end: in bug mode `memprov growth` names the evict write-back line first,
# with the workload's expected bytes per iteration (array bytes x dirty
# evictions); in fixed mode it names nothing.
. "$(dirname "$0")/test-lib.sh"

PY=/usr/bin/python3
WL=$TOP/scripts/parla_evict.py
# 8 groups x 4 arrays of 2 MiB; room for 16 arrays, so every iteration from
# 4 on evicts 4 copies, 2 of them dirty: 2 x 2097152 = 4194304 B leak per
# iteration over iterations 4-11 (t6000 checks the workload's own figures).
SMALL="--groups 8 --arrays-per-group 4 --rows 262144 --cols 2 --gpu-budget 33554432 --write-every 2 --iters 12"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

$PY -c 'import numpy' 2>/dev/null || test_skip "/usr/bin/python3 has no numpy (apt-get install python3-numpy)"

# j FILE EXPR: a Python expression over the JSON object s read from FILE.
j() { $PY -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"; }

PARRAY=$TOP/scripts/parla/parray.py

test_expect_success 'bug mode under memprov: runs unchanged, one mark per iteration' '
	timeout 120 "$MEMPROV_CLI" run -o "$TRASH/bug.trace" -- $PY "$WL" --bug $SMALL \
		--json-summary "$TRASH/bug.json" >bug.out 2>bug.err &&
	test "$(j bug.json s[\"prediction_matches\"])" = True &&
	test "$(j bug.json s[\"memprov_present\"])" = True &&
	test "$(j bug.json s[\"expected_leak_bytes_per_iter\"])" = 4194304 &&
	test "$(j bug.json s[\"steady_first_iter\"])" = 4 &&
	memprov growth --json bug.trace >all.json &&
	test "$(j all.json s[\"by\"])" = marks &&
	test "$(j all.json s[\"marks\"])" = 12 &&
	test "$(j all.json s[\"state\"])" = exited &&
	test "$(j all.json s[\"main_end\"])" = True
'

test_expect_success 'growth --after "iter 4": the write-back line first, exact slope' '
	memprov growth --json --after "iter 4" bug.trace >g.json &&
	test "$(j g.json "(s[\"window\"][\"first\"], s[\"window\"][\"last\"], s[\"window\"][\"steps\"])")" = "(4, 11, 7)" &&
	line=$(j bug.json s[\"write_back_site\"][\"line\"]) &&
	sed -n "${line}p" "$PARRAY" | grep -q "host = np.empty(" &&
	test "$(j g.json "s[\"suspects\"][0][\"python\"][0]")" = \
		"{'"'"'function'"'"': '"'"'PArray._write_back_to_host'"'"', '"'"'file'"'"': '"'"'$PARRAY'"'"', '"'"'line'"'"': $line}" &&
	test "$(j g.json "s[\"suspects\"][0][\"python\"][1][\"function\"]")" = PArray.evict &&
	test "$(j g.json "s[\"suspects\"][0][\"kind\"]")" = heap &&
	# memprov slope within 5% of array bytes x dirty evictions per iteration
	j g.json "s[\"suspects\"][0][\"slope_bytes\"]" >slope && cat slope &&
	$PY -c "import sys; e=4194304; s=float(sys.argv[1]); sys.exit(abs(s-e) > 0.05*e)" "$(cat slope)" &&
	# and exactly: 2 arrays of 2 MiB per iteration, 16 at the end
	test "$(j g.json "s[\"suspects\"][0][\"series\"]")" = \
		"[4194304, 8388608, 12582912, 16777216, 20971520, 25165824, 29360128, 33554432]" &&
	test "$(j g.json "s[\"suspects\"][0][\"slope_blocks\"]")" = 2 &&
	test "$(j g.json "s[\"suspects\"][0][\"end_blocks\"]")" = 16 &&
	test "$(j g.json "s[\"suspects\"][0][\"growth_bytes\"]")" = 29360128 &&
	# nothing else grows by as much as a quarter of an array
	test "$(j g.json "sum(1 for x in s[\"suspects\"] if x[\"growth_bytes\"] >= 524288)")" = 1
'

test_expect_success 'growth --skip 4 is the same window; the text report names file:line' '
	memprov growth --json --skip 4 bug.trace >skip.json &&
	test "$(j skip.json "s[\"suspects\"][0][\"python\"][0]")" = "$(j g.json "s[\"suspects\"][0][\"python\"][0]")" &&
	test "$(j skip.json "s[\"suspects\"][0][\"slope_bytes\"]")" = "$(j g.json "s[\"suspects\"][0][\"slope_bytes\"]")" &&
	memprov growth --after "iter 4" bug.trace >g.txt &&
	line=$(j bug.json s[\"write_back_site\"][\"line\"]) &&
	grep -A1 "^  #1 heap " g.txt | tail -n 1 | grep -q "^     since mark #4 \"iter 4\"; 32.0 MiB (33,554,432 B) in 16 blocks at the window'"'"'s end" &&
	grep -A2 "^  #1 heap " g.txt | tail -n 1 >first &&
	echo "      PArray._write_back_to_host $PARRAY:$line" >expect &&
	test_cmp expect first &&
	grep -q "^  #1 heap malloc: +28.0 MiB (+29,360,128 B) over the window, 4.0 MiB (4,194,304 B) per mark, 2 blocks per mark$" g.txt
'

test_expect_success 'growth without a window: the write-back line is still first' '
	test "$(j all.json "s[\"suspects\"][0][\"python\"][0][\"function\"]")" = PArray._write_back_to_host &&
	test "$(j all.json "s[\"suspects\"][0][\"end_bytes\"]")" = 33554432
'

test_expect_success 'leaks at the end of the main module: the 16 write-back arrays' '
	memprov leaks --json bug.trace >l.json &&
	j l.json "[(x[\"blocks\"], x[\"bytes\"]) for x in s[\"sites\"] if x[\"python\"] and x[\"python\"][0][\"function\"] == \"PArray._write_back_to_host\" and x[\"bytes\"] >= 2097152]" >wb &&
	echo "[(16, 33554432)]" >expect && test_cmp expect wb
'

test_expect_success 'fixed mode: no growing site, with or without the window' '
	timeout 120 "$MEMPROV_CLI" run -o "$TRASH/fixed.trace" -- $PY "$WL" --fixed $SMALL \
		--json-summary "$TRASH/fixed.json" >fixed.out 2>fixed.err &&
	test "$(j fixed.json s[\"prediction_matches\"])" = True &&
	test "$(j fixed.json s[\"evictions\"])" = "$(j bug.json s[\"evictions\"])" &&
	memprov growth --json --after "iter 4" fixed.trace >gf.json &&
	test "$(j gf.json "len(s[\"suspects\"])")" = 0 &&
	memprov growth --json fixed.trace >gfa.json &&
	test "$(j gfa.json "len(s[\"suspects\"])")" = 0 &&
	memprov growth --after "iter 4" fixed.trace >gf.txt &&
	grep -q "^no growing site (growth of at least 1.0 KiB over the window)$" gf.txt
'

test_expect_success 'diff --growth of the two runs: the write-back site is what bug mode adds' '
	memprov diff --json --growth fixed.trace bug.trace >d.json &&
	test "$(j d.json "len(s[\"sites\"])")" = 1 &&
	test "$(j d.json "s[\"sites\"][0][\"python\"][0][\"function\"]")" = PArray._write_back_to_host &&
	test "$(j d.json "(s[\"sites\"][0][\"a\"][\"suspect\"], s[\"sites\"][0][\"b\"][\"suspect\"], s[\"sites\"][0][\"b\"][\"bytes\"])")" = "(False, True, 33554432)"
'

test_done
