#!/bin/sh
# t2144: a deadly signal that a thread takes only while a wait unblocks it
# (sigsuspend, ppoll, pselect, epoll_pwait with SIGUSR1 blocked otherwise)
# ends the process, as bare: status 138, and the trace says killed by
# SIGUSR1 with the block live at the death. memprov's death recorder sent
# the signal again and returned; the wait then put the thread's mask back,
# the signal stayed pending, and the program went on ("survived", status
# 0). The recorder now unblocks the signal it sent, so that the process
# ends inside it, whatever mask its return would restore.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/sigmaskdie" ||
	test_skip "libmemprov.so, memprov or tests/bin/sigmaskdie not built"

for how in sigsuspend ppoll pselect epoll_pwait; do
	export how
	test_expect_success "$how: killed by SIGUSR1 as bare, no output past the signal; the trace says so" '
		st=0 && "$BIN/sigmaskdie" $how >bare.$how.out || st=$? &&
		test $st = 138 &&
		st=0 && env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT=$how.trace \
			"$BIN/sigmaskdie" $how >traced.$how.out || st=$? &&
		echo "status $st" && cat traced.$how.out &&
		test $st = 138 &&
		test_cmp bare.$how.out traced.$how.out &&
		"$MEMPROV_CLI" stats $how.trace >stats.$how &&
		grep "^ended: killed by SIGUSR1 (signal 10)" stats.$how &&
		"$MEMPROV_CLI" leaks $how.trace >leaks.$how &&
		grep -A1 "#1 heap malloc: 1 block, 4.0 KiB (4,096 B)" leaks.$how | grep "sigmaskdie.c:[0-9]*$"
	'
done

test_done
