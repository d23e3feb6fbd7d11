#!/bin/sh
# t2142: a handler installed with SA_RESETHAND (or sysv_signal, which sets
# it) runs once; the kernel makes SIGTERM's action the default again as it
# runs it, and the next SIGTERM ends the process. memprov's death recorder
# was not put back then: the trace said "killed or still running" under
# plain LD_PRELOAD. It is put back once the handler returns (unless the
# handler installed an action of its own); the program reads back the
# default action as without memprov, and dies of the same signal. (The
# shell that runs it may say "Terminated" on the stderr given to it.)
# Putting the recorder back takes the table's lock: a handler another
# thread installed meanwhile was overwritten (the second review).
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/oneshot" ||
	test_skip "libmemprov.so, memprov or tests/bin/oneshot not built"

for how in resethand sysv reraise; do
	export how
	test_expect_success "$how: the same output and status as bare; the trace says killed by SIGTERM" '
		st=0 && "$BIN/oneshot" $how >bare.$how.out 2>bare.$how.err || st=$? &&
		test $st = 143 &&
		st=0 && env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT=$how.trace \
			"$BIN/oneshot" $how >traced.$how.out 2>traced.$how.err || st=$? &&
		test $st = 143 &&
		test_cmp bare.$how.out traced.$how.out &&
		test_cmp bare.$how.err traced.$how.err &&
		"$MEMPROV_CLI" stats $how.trace >stats.$how &&
		grep "^ended: killed by SIGTERM (signal 15)" stats.$how &&
		"$MEMPROV_CLI" leaks $how.trace >leaks.$how &&
		grep -A1 "#[0-9] heap malloc: 1 block, 4.0 KiB (4,096 B)" leaks.$how | grep "oneshot.c:[0-9]*$" &&
		grep "^reachability at death (1 of 1 threads stopped)" leaks.$how
	'
done

test_expect_success "resethand: the handler runs, then sigaction reads back SIG_DFL" '
	grep "^handled$" traced.resethand.out &&
	grep "^after: SIG_DFL flags=" traced.resethand.out
'

test_expect_success "signal() of a strict ISO C program (__sysv_signal) returns SIG_DFL as bare; chaining to it survives" '
	"$BIN/oneshot" strict >bare.strict.out &&
	env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT=strict.trace "$BIN/oneshot" strict >traced.strict.out &&
	printf "previous: SIG_DFL\nsurvived\n" >want.strict &&
	test_cmp want.strict bare.strict.out &&
	test_cmp want.strict traced.strict.out
'

test_expect_success 'a one-shot handler installed again by another thread as it runs is never lost' '
	test -x "$BIN/oneshot_race" &&
	for i in 1 2; do
		env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT=race.$i.trace "$BIN/oneshot_race" 20000 >race.$i.out &&
		cat race.$i.out &&
		grep -x "iterations=20000 lost=0" race.$i.out || exit 1
	done
'

test_done
