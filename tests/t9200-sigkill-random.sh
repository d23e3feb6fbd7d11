#!/bin/sh
# t9200-sigkill-random.sh - SIGKILL at random points of a 4-thread run,
# 10 times (MEMPROV_KILL_RUNS): each trace is readable, whole (not
# damaged), and holds at least every block the program had announced
# (steps are announced, flushed, only after every thread's allocations of
# the step returned), with no free unmatched.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/stress" ||
	test_skip "interpose/libmemprov.so, analyzer/memprov or tests/bin/stress not built"
RUNS=${MEMPROV_KILL_RUNS:-10}
OWN='=" ".join(str(sum(s[k] for s in j["sites"] if s["frames"] and os.path.basename(s["frames"][0]["file"] or "") == "stress.c" and s["frames"][0]["function"] == "step_thread")) for k in ("blocks", "bytes"))'
export RUNS OWN

wait_lines() {
	timeout 60 sh -c 'until [ -f "$1" ] && [ $(wc -l <"$1") -ge $2 ]; do sleep 0.01; done' \
		- "$1" "$2"
}

test_expect_success "SIGKILL at random points, $RUNS runs: every announced block present" '
	i=0 &&
	while [ $i -lt $RUNS ]; do
		i=$((i + 1))
		n=$(shuf -i 1-400 -n 1)
		ms=$(shuf -i 0-30 -n 1)
		env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/k$i.trace \
			"$BIN/stress" steps 4 steps$i.log 1000000 &
		pid=$! &&
		wait_lines steps$i.log $n && sleep 0.0$ms &&
		kill -9 $pid && { wait $pid || :; } &&
		set -- $(tail -n 1 steps$i.log | sed "s/^step \([0-9]*\) blocks=\([0-9]*\) bytes=\([0-9]*\)$/\1 \2 \3/") &&
		timeout 60 "$MEMPROV_CLI" leaks --json k$i.trace >k$i.json &&
		got=$(jget k$i.json "$OWN") &&
		echo "run $i: killed after step $1 (+${ms} ms): announced $2 blocks $3 B, trace has $got" &&
		jget --check k$i.json state=running damaged=false &&
		test ${got% *} -ge $2 && test ${got#* } -ge $3 &&
		test $2 = $((80 * ($1 + 1))) &&
		timeout 60 "$MEMPROV_CLI" stats --json k$i.trace >k$i.stats &&
		jget --check k$i.stats unmatched_frees=0 threads=5 || exit 1
	done
'

test_done
