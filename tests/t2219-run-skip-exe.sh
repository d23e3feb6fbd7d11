#!/bin/sh
# t2219-run-skip-exe.sh - `memprov run --skip-exe PATTERN` (MEMPROV_SKIP_EXE):
# no process of a program it names is traced, its children still are,
# as valgrind's --trace-children-skip. The tools a build runs keep their
# memory until exit (valgrind agrees): a clean cmake project under
# `run --check --children` failed on 12 traces of cc, as, ld and collect2.
# Here: reach (300 B lost) under two names, one skipped; the patterns
# (`*`, `?`, a path, the name run by, the file it resolves to); a skipped
# command whose child is gated; a command that execs a skipped program;
# the gate's hint on build tools, and `check --skip-exe` on traces made.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/reach" ||
	test_skip "libmemprov.so, memprov or tests/bin/reach not built"

cp "$BIN/reach" "$TRASH/other" && ln -s "$BIN/reach" "$TRASH/alias" || exit 1

# commands DIR: the command line of each trace in DIR, sorted
commands() {
	for t in "$1"/*.trace; do
		memprov stats "$t" | sed -n "s/^pid: [0-9]*, command: //p"
	done | sort
}

test_expect_success 'without --skip-exe: both leaking programs fail the gate' '
	st=0 && memprov run -d all --check --children -- \
		sh -c "\"$BIN/reach\" basic; ./other basic" >bare.out 2>err || st=$?
	cat err && test $st = 23 && test $(grep -c "): FAIL$" err) = 2 &&
	test $(ls all/*.trace | wc -l) = 3
'

test_expect_success '--skip-exe reach: reach is not traced, other still fails; the output is the same' '
	st=0 && memprov run -d skip --check --children --skip-exe reach -- \
		sh -c "\"$BIN/reach\" basic; ./other basic" >out 2>err || st=$?
	cat err && test $st = 23 && test_cmp bare.out out &&
	test $(ls skip/*.trace | wc -l) = 2 &&
	commands skip >cmds && cat cmds &&
	test $(wc -l <cmds) = 2 && grep -qx "./other basic" cmds && grep -q "^sh -c " cmds &&
	test $(grep -c "): FAIL$" err) = 1 && grep "): FAIL$" err | grep -q "other basic"
'

test_expect_success 'patterns: * and ?, a path, the name it was run by, the file it resolves to' '
	for p in "rea?h" "re*" "*/bin/reach" "$BIN/reach" "alias" "./alias" "ali*,nothing"; do
		rm -rf p && memprov run -d p --skip-exe "$p" -- sh -c "./alias basic" >/dev/null 2>err &&
		commands p >cmds && echo "$p: $(cat cmds)" && test "$(cat cmds)" = "sh -c ./alias basic" ||
		exit 1
	done &&
	for p in "reac" "*/reac?h" "alia" "/*/alias"; do
		rm -rf p && memprov run -d p --skip-exe "$p" -- sh -c "./alias basic" >/dev/null 2>err &&
		test $(ls p/*.trace | wc -l) = 2 || exit 1
	done
'

test_expect_success 'a skipped command: its child is gated, and stderr says why the command left no trace' '
	st=0 && memprov run -d kid --check --children --skip-exe sh -- sh -c "\"$BIN/reach\" basic" \
		>out 2>err || st=$?
	cat err && test $st = 23 &&
	grep -q "^memprov: no trace at .*: --skip-exe sh may name the command" err &&
	grep -qx "memprov check: the command left no trace (why: above): its children alone are gated" err &&
	test $(grep -c "): FAIL$" err) = 1 &&
	# with -o too: the command'"'"'s children are found by their parent pid
	st=0 && memprov run -o "$TRASH/o.%p.trace" --check --children --skip-exe sh -- \
		sh -c "\"$BIN/reach\" basic; true" >out 2>err || st=$?
	cat err && test $st = 23 &&
	grep -qx "memprov check: the command left no trace (why: above): its children alone are gated" err &&
	test $(grep -c "): FAIL$" err) = 1 && grep "): FAIL$" err | grep -q "reach basic"
'

test_expect_success 'a command that execs a skipped program: nothing checked, exit 2, the reason said' '
	st=0 && memprov run -d ex --check --skip-exe reach -- sh -c "exec \"$BIN/reach\" basic" \
		>out 2>err || st=$?
	cat err && test $st = 2 &&
	grep -qx "memprov: the program the command became by exec left no trace: --skip-exe reach may name it" err &&
	grep -q "^memprov check: nothing was checked" err
'

test_expect_success 'MEMPROV_SKIP_EXE with LD_PRELOAD: no trace file; other programs traced' '
	MEMPROV_SKIP_EXE="x,reach" MEMPROV_OUTPUT="$TRASH/env.%p.trace" LD_PRELOAD="$MEMPROV_LIB" \
		"$BIN/reach" basic >out 2>err &&
	test_cmp /dev/null err && ! ls env.*.trace 2>/dev/null &&
	MEMPROV_SKIP_EXE="x,reach" MEMPROV_OUTPUT="$TRASH/env.%p.trace" LD_PRELOAD="$MEMPROV_LIB" \
		./other basic >out 2>err &&
	test $(ls env.*.trace | wc -l) = 1
'

test_expect_success 'the gate names the build tools among the traces over budget, and the option that leaves them out' '
	cp "$BIN/reach" as && cp "$BIN/reach" x86_64-linux-gnu-gcc-12 &&
	st=0 && memprov run -d tools --check --children -- \
		sh -c "./as basic; ./x86_64-linux-gnu-gcc-12 basic; ./other basic" >/dev/null 2>err || st=$?
	cat err && test $st = 23 && test $(grep -c "): FAIL$" err) = 3 &&
	grep -qx "memprov check: 2 traces over budget are of tools a build runs (as,x86_64-linux-gnu-gcc-12), which keep their memory until exit: --skip-exe .as,x86_64-linux-gnu-gcc-12. leaves them out (run: untraced)" err &&
	st=0 && memprov check tools >out 2>&1 || st=$?
	test $st = 1 && grep -q "^memprov check: 2 traces over budget are of tools" out &&
	# check --skip-exe: the same traces, no verdict on the tools
	st=0 && memprov check --skip-exe "as,*-gcc-*" tools >out 2>&1 || st=$?
	cat out && test $st = 1 &&
	test $(grep -c "): not gated: --skip-exe names its program: no verdict$" out) = 2 &&
	test $(grep -c "): FAIL$" out) = 1 && grep "): FAIL$" out | grep -q "other basic" &&
	! grep -q "tools a build runs" out &&
	memprov check --skip-exe "as,*-gcc-*,other" tools >out 2>&1 &&
	grep -qx "memprov check: 4 traces, 0 over budget, 0 unreadable" out &&
	st=0 && memprov check --skip-exe "a,,b" tools 2>err || st=$?
	test $st = 2 && grep -q "^memprov: error: --skip-exe wants PATTERN" err &&
	st=0 && memprov run -d tools2 --check --children --skip-exe "as,x86_64-linux-gnu-gcc-12" -- \
		sh -c "./as basic; ./x86_64-linux-gnu-gcc-12 basic; ./other basic" >/dev/null 2>err || st=$?
	cat err && test $st = 23 && test $(grep -c "): FAIL$" err) = 1 &&
	! grep -q "tools a build runs" err
'

test_expect_success 'usage: an empty pattern is refused (exit 2)' '
	for p in "" "a,,b" ",a" "a,"; do
		st=0 && memprov run --skip-exe "$p" -- true 2>err || st=$?
		test $st = 2 && grep -q "^memprov: error: --skip-exe wants PATTERN" err || exit 1
	done
'

test_done
