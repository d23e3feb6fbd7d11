#!/bin/sh
# t2190-exit-status.sh - memprov run returns the program's exit status
# (128 + signal when a signal killed it), and the program's stdout is byte
# for byte what it is without memprov.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

for c in "0 0" "3 3" "return3 3" "kill 143" "abort 134" "sysexit7 7" "255 255"; do
	how=${c% *} want=${c#* }
	export how want
	test_expect_success "exitcode $how: memprov run returns $want, same stdout" '
		st=0 && "$BIN/exitcode" $how >bare.out 2>/dev/null || st=$? &&
		test $st = $want &&
		st=0 && timeout 30 "$MEMPROV_CLI" run -o $how.trace -- "$BIN/exitcode" $how \
			>run.out 2>run.err || st=$? &&
		cat run.err &&
		test $st = $want &&
		cmp bare.out run.out &&
		grep "^memprov: trace written to .*$how.trace" run.err &&
		memprov stats --json $how.trace >stats.json &&
		jget --check stats.json functions.realloc.calls=200
	'
done

test_expect_success 'exit(3) is recorded as status 3' '
	jget --check stats.json state=exited exit_status=255 &&
	memprov stats --json 3.trace >s3.json &&
	jget --check s3.json state=exited exit_status=3
'

test_expect_success 'syscall(SYS_exit_group, 7) is recorded as an exit with status 7, scanned: the gate passes' '
	# it ran no hook: the trace said "killed, or still running", and the
	# gate counted every block still reachable
	memprov stats --json sysexit7.trace >s7.json &&
	jget --check s7.json state=exited exit_status=7 &&
	memprov stats sysexit7.trace >s7.txt &&
	grep "^reachability at exit (1 of 1 threads stopped)" s7.txt &&
	memprov check sysexit7.trace
'

test_expect_success 'a pipe as stdout: same bytes as without memprov' '
	"$BIN/fill" | cat >bare.pipe || :
	memprov run -o pipe.trace -- "$BIN/fill" 2>/dev/null | cat >run.pipe || :
	cmp bare.pipe run.pipe && test $(wc -l <run.pipe) = 51
'

test_expect_success 'memprov run: arguments reach the program untouched' '
	st=0 && memprov run -o args.trace -- "$BIN/exitcode" "3" >/dev/null 2>&1 || st=$? &&
	test $st = 3 &&
	memprov run -o args2.trace -- sh -c "exit 42" 2>/dev/null || st=$? &&
	test $st = 42
'

test_done
