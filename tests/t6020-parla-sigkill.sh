#!/bin/sh
# t6020-parla-sigkill.sh - the OOM-killer case: a bug-mode Parla run killed
# with SIGKILL at iteration K leaves a trace that gives the same diagnosis
# (the evict write-back line first, 4194304 B per iteration) with memory
# measured at the point of death; memprov run saw the SIGKILL in the
# status and marked the trace killed (the library cannot see it: a trace
# written without memprov run says running, t2140).
. "$(dirname "$0")/test-lib.sh"

PY=/usr/bin/python3
WL=$TOP/scripts/parla_evict.py
# As t6010: leak of 2 x 2 MiB per iteration from iteration 4.
SMALL="--groups 8 --arrays-per-group 4 --rows 262144 --cols 2 --gpu-budget 33554432 --write-every 2 --iters 12"
K=8
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

$PY -c 'import numpy' 2>/dev/null || test_skip "/usr/bin/python3 has no numpy (apt-get install python3-numpy)"

j() { $PY -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"; }
PARRAY=$TOP/scripts/parla/parray.py
LINE=$(grep -n "= np.empty(.*# memprov: write-back allocation" "$PARRAY" | cut -d: -f1)

test_expect_success "SIGKILL once iteration $K is printed: memprov run reports 137" '
	# --pause-after K: the workload sleeps after printing iteration K, so
	# the kill lands at a known point (the mark of iteration K is written
	# before its line is printed).
	"$MEMPROV_CLI" run -o "$TRASH/kill.trace" -- $PY "$WL" --bug $SMALL \
		--pause-after $K >out 2>err &
	run=$! &&
	set +e
	timeout 120 sh -c "until grep -q \"^iter $K: \" out; do sleep 0.05; done"
	seen=$?
	child=$(tr -d " " </proc/$run/task/$run/children)
	grep -q "parla_evict.py" /proc/$child/cmdline && kill -KILL $child
	wait $run; rc=$?
	set -e
	test $seen = 0 &&
	echo "memprov run: status $rc" &&
	test $rc = 137 &&
	test "$(grep -c "^iter [0-9]*: rss " out)" = $((K + 1)) &&
	! grep -q "^summary:" out
'

test_expect_success 'the trace: state killed by SIGKILL, one mark per finished iteration' '
	memprov growth --json kill.trace >all.json &&
	test "$(j all.json s[\"state\"])" = killed &&
	test "$(j all.json s[\"marks\"])" = $((K + 1)) &&
	test "$(j all.json s[\"main_end\"])" = False &&
	test "$(j all.json s[\"damaged\"])" = False
'

test_expect_success 'growth --after "iter 4": the write-back line first, 4194304 B per iteration' '
	memprov growth --json --after "iter 4" kill.trace >g.json &&
	test "$(j g.json "(s[\"window\"][\"first\"], s[\"window\"][\"last\"], s[\"window\"][\"steps\"])")" = "(4, $K, $((K - 4)))" &&
	test "$(j g.json "s[\"suspects\"][0][\"python\"][0]")" = \
		"{'"'"'function'"'"': '"'"'PArray._write_back_to_host'"'"', '"'"'file'"'"': '"'"'$PARRAY'"'"', '"'"'line'"'"': $LINE}" &&
	test "$(j g.json "s[\"suspects\"][0][\"kind\"]")" = heap &&
	j g.json "s[\"suspects\"][0][\"slope_bytes\"]" >slope && cat slope &&
	$PY -c "import sys; e=4194304; s=float(sys.argv[1]); sys.exit(abs(s-e) > 0.05*e)" "$(cat slope)" &&
	test "$(j g.json "s[\"suspects\"][0][\"series\"]")" = \
		"[4194304, 8388608, 12582912, 16777216, 20971520]" &&
	test "$(j g.json "sum(1 for x in s[\"suspects\"] if x[\"growth_bytes\"] >= 524288)")" = 1
'

test_expect_success 'the text report says the process was killed and names file:line' '
	memprov growth --after "iter 4" kill.trace >g.txt &&
	grep -q "^ended: killed by SIGKILL (signal 9): live at point of death$" g.txt &&
	grep -A2 "^  #1 heap " g.txt | tail -n 1 >first &&
	echo "      PArray._write_back_to_host $PARRAY:$LINE" >expect &&
	test_cmp expect first
'

test_expect_success 'leaks at the point of death: the write-back arrays of iterations 4-8' '
	memprov leaks --json kill.trace >l.json &&
	test "$(j l.json s[\"state\"])" = killed && test "$(j l.json s[\"signal\"])" = 9 &&
	j l.json "[(x[\"blocks\"], x[\"bytes\"]) for x in s[\"sites\"] if x[\"python\"] and x[\"python\"][0][\"function\"] == \"PArray._write_back_to_host\" and x[\"bytes\"] >= 2097152]" >wb &&
	echo "[(10, 20971520)]" >expect && test_cmp expect wb
'

test_done
