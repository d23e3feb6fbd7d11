#!/bin/sh
# t2140-sigkill.sh - a process killed with SIGKILL leaves a readable
# trace: `memprov leaks` reports what was live at the point of death (at
# least what the program had committed and announced), state "running";
# a trace can also be read while its process still runs.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

# wait_lines FILE N: wait (bounded) until FILE has at least N lines
wait_lines() {
	timeout 60 sh -c 'until [ -f "$1" ] && [ $(wc -l <"$1") -ge $2 ]; do sleep 0.02; done' \
		- "$1" "$2"
}

test_expect_success 'killed mid-run: live at death >= the last announced step, consistent' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/kill.trace \
		"$BIN/steps" steps.log 1000000 &
	pid=$! && echo $pid >>"$TRASH/pids" &&
	wait_lines steps.log 2000 &&
	kill -9 $pid &&
	{ wait $pid || :; } &&
	tail -n 1 steps.log >last && cat last &&
	step=$(sed -n "s/^step \([0-9]*\) live=.*/\1/p" last) &&
	live=$(sed -n "s/.* live=\([0-9]*\) .*/\1/p" last) &&
	blocks=$(sed -n "s/.* blocks=\([0-9]*\)$/\1/p" last) &&
	test -n "$step" &&
	timeout 60 "$MEMPROV_CLI" leaks --json kill.trace >kill.json &&
	jget --check kill.json state=running exit_status=null at=end-of-trace &&
	got=$(jget kill.json totals.heap.bytes totals.heap.blocks | paste -sd " ") &&
	echo "announced: $live B in $blocks blocks; memprov: $got" &&
	set -- $got &&
	test "$1" -ge "$live" && test "$2" -ge "$blocks" &&
	test "$1" = $(( ($2 - 1) * 100 + 1000001 * 8 ))
'

test_expect_success 'killed mid-run: stats works and agrees with leaks' '
	timeout 60 "$MEMPROV_CLI" stats --json kill.trace >stats.json &&
	jget --check stats.json state=running exit_status=null unmatched_frees=0 \
		threads=1 functions.calloc.calls=1 \
		"=j[\"functions\"][\"malloc\"][\"calls\"]-j[\"kinds\"][\"heap\"][\"live_blocks\"]==-1" &&
	test "$(jget stats.json kinds.heap.live_bytes)" = "$(jget kill.json totals.heap.bytes)"
'

test_expect_success 'read while running, then killed: exact figures both times' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/pause.trace \
		"$BIN/steps" pause.log 500 &
	pid=$! && echo $pid >>"$TRASH/pids" &&
	wait_lines pause.log 500 &&
	timeout 60 "$MEMPROV_CLI" leaks --json pause.trace >alive.json &&
	kill -9 $pid &&
	{ wait $pid || :; } &&
	timeout 60 "$MEMPROV_CLI" leaks --json pause.trace >dead.json &&
	for f in alive.json dead.json; do
		jget --check $f state=running totals.heap.blocks=501 \
			totals.heap.bytes=$((500 * 100 + 501 * 8)) || exit 1
	done &&
	jget --check dead.json \
		"=sorted((s[\"frames\"][0][\"function\"], s[\"blocks\"]) for s in j[\"sites\"])==[[\"main\", 1], [\"step_alloc\", 500]]"
'

# a failed test may have left a traced program running
for pid in $(cat "$TRASH/pids" 2>/dev/null); do
	grep -q "tests/bin/steps" "/proc/$pid/cmdline" 2>/dev/null &&
		kill -9 "$pid" 2>/dev/null
done
# memprov run sees in the status what the killed command could not write:
# before, its trace said running and the reports "killed or still running"
test_expect_success 'memprov run: the command killed with SIGKILL: its trace says so, and its index' '
	rm -rf kdir &&
	"$MEMPROV_CLI" run -d kdir -- "$BIN/steps" kdir.log 1000000 2>kdir.err &
	run=$! && echo $run >>"$TRASH/pids" &&
	wait_lines kdir.log 1000 &&
	child=$(pgrep -P $run) && test -n "$child" &&
	kill -9 $child &&
	{ st=0; wait $run || st=$?; } && test "$st" = 137 &&
	t=$(ls kdir/memprov.*.trace) &&
	timeout 60 "$MEMPROV_CLI" stats --json "$t" >kdir.json &&
	jget --check kdir.json state=killed signal=9 &&
	"$MEMPROV_CLI" stats "$t" | grep -x "ended: killed by SIGKILL (signal 9): live at point of death" &&
	{ "$MEMPROV_CLI" check "$t" >kdir-check.txt || :; } &&
	grep -x "  the process was killed by SIGKILL (signal 9): live at the point of death" kdir-check.txt &&
	test "$(cut -f1,5 kdir/index | tail -n 1)" = "$(printf "killed\t9")" &&
	timeout 60 "$MEMPROV_CLI" leaks --json "$t" >kdir-leaks.json &&
	test "$(jget kdir-leaks.json totals.heap.blocks)" -ge 1000
'

test_expect_success 'memprov run: a command that exits is not marked killed' '
	"$MEMPROV_CLI" run -o "$TRASH/ok.trace" -- /bin/true &&
	"$MEMPROV_CLI" stats --json ok.trace >ok.json &&
	jget --check ok.json state=exited exit_status=0
'

test_expect_success 'memprov run: the killed line of a command with tabs and newlines in its arguments has six fields, as the library'"'"'s' '
	rm -rf tabdir &&
	printf "#include <signal.h>\nint main(void) { raise(SIGKILL); return 0; }\n" >k9.c &&
	cc -o k9 k9.c &&
	{ st=0; "$MEMPROV_CLI" run -d tabdir -- ./k9 "$(printf "a\nb\tc")" "$(printf "d\te\nf")" 2>tab.err || st=$?; } &&
	test "$st" = 137 &&
	cat -A tabdir/index &&
	test "$(wc -l <tabdir/index)" = 2 &&
	awk -F"\t" "NF != 6 { exit 1 }" tabdir/index &&
	test "$(cut -f1,5,6 tabdir/index | tail -n 1)" = "$(printf "killed\t9\t./k9 a b c d e f")" &&
	test "$(cut -f6 tabdir/index | sort -u | wc -l)" = 1
'

test_done
