#!/bin/sh
# t2195-raw-exit.sh - a process that exits by a raw exit_group system call
# (Go's runtime ends every Go program so) passes no hook: no exit record,
# no scan. memprov run saw the status and writes it into the trace; the
# gate gives no verdict rather than gate all that was live (a cgo
# program failed on 690 MiB of its runtime's heap, valgrind: 0 lost).
# A Go program is known by its build ID note, and its runtime's heap
# (mapped through x_cgo_mmap) is set apart by a default suppression.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"
test -x "$BIN/goexit" && test -x "$BIN/rawexit" || test_skip "tests/bin/goexit not built"

test_expect_success 'a Go program under LD_PRELOAD: no verdict without a scan, its runtime heap set apart' '
	MEMPROV_OUTPUT=pre.trace LD_PRELOAD="$MEMPROV_LIB" "$BIN/goexit" raw 0 >out &&
	test "$(cat out)" = ready &&
	memprov stats --json pre.trace >pre.json &&
	jget --check pre.json state=running &&
	memprov leaks pre.trace >pre.txt &&
	cat pre.txt &&
	grep "^ended: a Go program.s end, seen by no hook" pre.txt &&
	grep "no scan: a Go program, whose runtime exits by a raw system call" pre.txt &&
	st=0 && memprov check pre.trace >check.txt || st=$? &&
	cat check.txt && test $st = 0 &&
	grep "not gated: a Go program whose end no hook saw" check.txt
'

test_expect_success '--reachable gates what it held: the two malloc blocks, not the runtime heap' '
	st=0 && memprov check --reachable pre.trace >reach.txt || st=$? &&
	cat reach.txt && test $st = 1 &&
	grep "live at end-of-trace: 1.3 KiB (1,300 B) in 2 blocks" reach.txt &&
	grep "1.0 MiB (1,048,576 B) in 1 block: leak:^x_cgo_mmap\$ (default: the Go runtime.s heap" reach.txt &&
	memprov leaks --no-default-suppressions pre.trace >all.txt &&
	grep -A1 "mmap mmap: 1 block, 1.0 MiB" all.txt | grep "x_cgo_mmap .*goexit.c"
'

for n in 0 5; do
	export n
	test_expect_success "memprov run: a Go program's exit_group($n) is its status, written into the trace" '
		rm -rf d$n &&
		st=0 && memprov run -d d$n --check -- "$BIN/goexit" raw $n >out 2>err || st=$? &&
		cat err && test $st = $n && test "$(cat out)" = ready &&
		t=$(ls d$n/*.trace) &&
		memprov stats --json $t >s.json &&
		jget --check s.json state=exited exit_status=$n &&
		memprov leaks $t >l.txt &&
		grep "^ended: exited with status $n, past every hook (seen by memprov run)" l.txt &&
		grep "no scan: the process exited past every hook" l.txt &&
		grep "not gated: a Go program: its runtime exits by a raw system call" err &&
		pid=$(jget s.json pid) &&
		grep -P "^exit\t$pid\t[0-9]+\t[0-9]+\t$n\t" d$n/index
	'
done

test_expect_success 'a C program ending by a raw exit_group: no verdict under memprov run, all gated without it' '
	rm -rf dc &&
	memprov run -d dc --check -- "$BIN/rawexit" raw 0 >out 2>err &&
	cat err &&
	grep "not gated: it exited past every hook (a raw exit system call)" err &&
	MEMPROV_OUTPUT=c.trace LD_PRELOAD="$MEMPROV_LIB" "$BIN/rawexit" raw 0 >out &&
	st=0 && memprov check c.trace >c.txt || st=$? &&
	cat c.txt && test $st = 1 &&
	grep "the process did not exit (killed, or still running)" c.txt
'

test_done
