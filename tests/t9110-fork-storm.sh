#!/bin/sh
# t9110-fork-storm.sh - a process forks 20 children one after another
# while 4 threads allocate: every child writes its own trace with exactly
# the blocks it kept, exits with its own status (i % 7), the parent's
# trace holds the parent's figures, and nothing deadlocks (bounded by a
# timeout; a child forked while another thread is inside libunwind must
# not wait for a lock that no thread of the child will release).
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/stress" ||
	test_skip "interpose/libmemprov.so, analyzer/memprov or tests/bin/stress not built"
OWN='=" ".join(str(sum(s[k] for s in j["sites"] if s["frames"] and os.path.basename(s["frames"][0]["file"] or "") == "stress.c")) for k in ("blocks", "bytes"))'
export OWN

test_expect_success 'fork storm x 5 runs: no deadlock, statuses kept, one trace per process' '
	for run in 1 2 3 4 5; do
		mkdir -p r$run &&
		timeout -k 5 60 env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/r$run/%p.trace \
			"$BIN/stress" fork 20 >r$run/out 2>r$run/err ||
			{ echo "run $run: status $? (124: deadlock)"; cat r$run/out; exit 1; }
		test ! -s r$run/err &&
		test $(grep -c "^child " r$run/out) = 20 &&
		test $(ls r$run | grep -c "\.trace$") = 21 || exit 1
	done
'

test_expect_success 'each child trace: its own blocks exactly, its exit status' '
	i=0 &&
	grep "^child " r1/out | while read who pid rest; do
		want=$(echo "$rest" | sed "s/live_blocks=\([0-9]*\) live_bytes=\([0-9]*\)/\1 \2/") &&
		"$MEMPROV_CLI" leaks --json r1/$pid.trace >c.json &&
		got=$(jget c.json "$OWN") &&
		test "$got" = "$want" &&
		jget --check c.json state=exited exit_status=$((i % 7)) || exit 1
		i=$((i + 1))
	done
'

test_expect_success 'parent trace: its own figures, every fork recorded' '
	set -- $(grep "^parent " r1/out) &&
	want=$(echo "$3 $4" | sed "s/live_blocks=\([0-9]*\) live_bytes=\([0-9]*\)/\1 \2/") &&
	"$MEMPROV_CLI" leaks --json r1/$2.trace >p.json &&
	got=$(jget p.json "$OWN") &&
	echo "parent: program $want, memprov $got" && test "$got" = "$want" &&
	test $("$MEMPROV_CLI" dump r1/$2.trace | grep -ci "fork") -ge 20
'

test_done
