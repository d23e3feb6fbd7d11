#!/bin/sh
# t2170-env.sh - malformed or out-of-range MEMPROV_* values: one warning
# naming the variable, the default used, the program's output and status
# unchanged; MEMPROV_DISABLE=1 writes no trace at all.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
walk() { /usr/bin/python3 "$TOP/tests/progs/trace_walk.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

# traced NAME VAR=VALUE...: run exitcode 5 with the preload object and the
# settings given, trace in NAME.trace, stdout in NAME.out, stderr in
# NAME.err; fails unless the status is 5
traced() {
	name=$1 && shift
	st=0
	timeout 30 env "$@" MEMPROV_OUTPUT="$TRASH/$name.trace" \
		LD_PRELOAD="$MEMPROV_LIB" "$BIN/exitcode" 5 >"$name.out" 2>"$name.err" ||
		st=$?
	cat "$name.err"
	test $st = 5
}

test_expect_success 'bare run' '
	st=0 && "$BIN/exitcode" 5 >bare.out 2>bare.err || st=$? &&
	test $st = 5 && test $(wc -l <bare.out) = 200 && test ! -s bare.err
'

test_expect_success 'good settings: no warning, values used' '
	traced good MEMPROV_DEPTH=8 MEMPROV_HEAP=1 &&
	test_cmp bare.out good.out && test ! -s good.err &&
	walk good.trace --header | grep -w "stack_depth=8"
'

for bad in MEMPROV_DEPTH=abc MEMPROV_DEPTH=100000 MEMPROV_DEPTH=0 \
	MEMPROV_DEPTH=-3 MEMPROV_DEPTH=12x \
	MEMPROV_HEAP=maybe MEMPROV_HEAP=2 MEMPROV_MMAP=yes MEMPROV_CUDA=10 \
	MEMPROV_PYTHON=-1; do
	var=${bad%%=*}
	export bad var
	test_expect_success "$bad: one warning naming $var, default used" '
		traced bad "$bad" &&
		test_cmp bare.out bad.out &&
		test $(wc -l <bad.err) = 1 &&
		grep "^memprov: .*$var" bad.err &&
		walk bad.trace --header >hdr && cat hdr &&
		grep -w "stack_depth=64" hdr &&
		flags=$(sed -n "s/.*flags=\([0-9]*\).*/\1/p" hdr) &&
		test $((flags & 3)) = 3 &&
		memprov stats --json bad.trace >stats.json &&
		jget --check stats.json functions.realloc.calls=200 state=exited \
			exit_status=5
	'
done

test_expect_success 'two bad variables: one warning each' '
	traced two MEMPROV_DEPTH=abc MEMPROV_HEAP=maybe &&
	test_cmp bare.out two.out &&
	test $(wc -l <two.err) = 2 &&
	grep -c "MEMPROV_DEPTH" two.err | grep -x 1 &&
	grep -c "MEMPROV_HEAP" two.err | grep -x 1
'

test_expect_success 'MEMPROV_DISABLE=1: no trace file, no output of ours' '
	mkdir off &&
	st=0 &&
	timeout 30 env MEMPROV_DISABLE=1 MEMPROV_OUTPUT=$TRASH/off/%p.trace \
		LD_PRELOAD=$MEMPROV_LIB "$BIN/exitcode" 5 >off.out 2>off.err ||
		st=$? &&
	test $st = 5 && test_cmp bare.out off.out && test ! -s off.err &&
	test -z "$(ls off)"
'

test_expect_success 'MEMPROV_HEAP=0: the malloc family is not recorded' '
	traced noheap MEMPROV_HEAP=0 &&
	test_cmp bare.out noheap.out && test ! -s noheap.err &&
	memprov stats --json noheap.trace >stats.json &&
	jget --check stats.json kinds.heap.allocs=0 \
		"=j[\"functions\"].get(\"realloc\", {}).get(\"calls\", 0)==0"
'

test_expect_success 'MEMPROV_OUTPUT with %p names the trace by pid' '
	mkdir pid &&
	sh -c "echo \$\$ >pid/pid; exec env MEMPROV_OUTPUT=$TRASH/pid/t-%p.trace LD_PRELOAD=$MEMPROV_LIB $BIN/exitcode 0" >/dev/null &&
	test -s "pid/t-$(cat pid/pid).trace"
'

test_done
