#!/bin/sh
# t9100-stress.sh - libmemprov.so under stress: threads that come and go
# (16 at once, MEMPROV_STRESS_OPS mixed operations each: 20,000 here,
# MEMPROV_STRESS_OPS=1000000 for the full run), a SIGALRM handler that
# allocates while the main loop maps and unmaps, pthread_cancel inside
# allocation loops, longjmp out of deep stacks, and malloc failing under
# prlimit --as. Every run: exit status 0 as without memprov, no deadlock
# (each bounded by timeout), live blocks and bytes of the program's own
# sites (innermost frame in stress.c) equal to what the program counted,
# no unmatched free, the trace whole; and memcheck finds no error in the
# preload object's recording (libunwind's own probing suppressed).
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/stress" ||
	test_skip "interpose/libmemprov.so, analyzer/memprov or tests/bin/stress not built"
OPS=${MEMPROV_STRESS_OPS:-20000}
OWN='=" ".join(str(sum(s[k] for s in j["sites"] if s["frames"] and os.path.basename(s["frames"][0]["file"] or "") == "stress.c")) for k in ("blocks", "bytes"))'
export OPS OWN

# check NAME: compare NAME.out (program) with NAME.trace (memprov)
check() {
	want=$(sed -n "s/^live_blocks=\([0-9]*\) live_bytes=\([0-9]*\)$/\1 \2/p" $1.out) &&
	test -n "$want" &&
	timeout 300 "$MEMPROV_CLI" leaks --json $1.trace >$1.leaks.json &&
	got=$(jget $1.leaks.json "$OWN") &&
	echo "$1: program $want, memprov $got" &&
	test "$got" = "$want" &&
	timeout 300 "$MEMPROV_CLI" stats --json $1.trace >$1.stats.json &&
	jget --check $1.stats.json unmatched_frees=0 damaged=false cut=false state=exited
}

test_expect_success "16 threads x $OPS ops, threads replaced throughout" '
	timeout 600 env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/thr.trace \
		"$BIN/stress" threads 16 $OPS >thr.out 2>thr.err &&
	cat thr.err && test ! -s thr.err && check thr &&
	jget --check thr.stats.json threads=129 \
		"=j[\"kinds\"][\"heap\"][\"allocs\"]-j[\"kinds\"][\"heap\"][\"frees\"]-j[\"kinds\"][\"heap\"][\"live_blocks\"]==0"
'

test_expect_success 'SIGALRM handler allocating while the main loop maps: every call recorded' '
	timeout 120 env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/sig.trace \
		"$BIN/stress" signal 40000 >sig.out 2>sig.err &&
	test ! -s sig.err && cat sig.out && check sig &&
	calls=$(sed -n "s/^handler_calls=//p" sig.out) &&
	mallocs=$(jget sig.stats.json functions.malloc.calls) &&
	frees=$(jget sig.stats.json functions.free.calls) &&
	echo "handler ran $calls times; memprov saw $mallocs mallocs, $frees frees" &&
	test "$calls" -gt 0 && test "$frees" = "$calls" && test "$mallocs" -gt "$calls" &&
	jget --check sig.stats.json skipped_events=0 &&
	test "$(jget sig.stats.json kinds.mmap.live_blocks)" = 16
'

test_expect_success 'pthread_cancel of 8 threads in allocation loops' '
	timeout 120 env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/can.trace \
		"$BIN/stress" cancel 8 >can.out 2>can.err &&
	cat can.err && test ! -s can.err && check can && jget --check can.stats.json threads=9
'

test_expect_success 'longjmp out of 200-deep stacks, 500 times' '
	timeout 120 env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/jmp.trace \
		"$BIN/stress" longjmp 200 500 >jmp.out 2>jmp.err &&
	test ! -s jmp.err && check jmp &&
	test "$(sed -n "s/^live_blocks=//p" jmp.out | cut -d" " -f1)" = 51
'


test_expect_success 'address space exhausted (prlimit --as): failures recorded, figures exact' '
	command -v prlimit >/dev/null || { echo "prlimit missing"; false; }
	timeout 120 prlimit --as=400000000 env LD_PRELOAD=$MEMPROV_LIB \
		MEMPROV_OUTPUT=$TRASH/as.trace "$BIN/stress" exhaust >as.out 2>as.err &&
	cat as.out as.err && check as &&
	failed=$(sed -n "s/.* failed=\([0-9]*\)$/\1/p" as.out) &&
	jget --check as.stats.json functions.malloc.failed=$failed
'

test_expect_success 'exit status unchanged by memprov in every mode' '
	for m in "threads 4 2000" "signal 2000" "cancel 2" "longjmp 10 10"; do
		timeout 60 "$BIN/stress" $m >/dev/null &&
		timeout 60 env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/st.%p.trace \
			"$BIN/stress" $m >/dev/null || exit 1
	done &&
	st=0 && timeout 60 env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/st.%p.trace \
		"$BIN/stress" bad-mode 2>/dev/null || st=$? && test $st = 2
'

test_expect_success 'memcheck: no error in the preload object under 4 threads' '
	command -v valgrind >/dev/null || { echo "valgrind missing"; false; }
	cat >unwind.supp <<-\SUPP &&
	{
	   libunwind probes addresses with write(2) to a pipe (validate_mem)
	   Memcheck:Param
	   write(buf)
	   fun:syscall
	   obj:*/libunwind.so*
	}
	SUPP
	timeout 300 env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/vg.%p.trace \
		valgrind --soname-synonyms=somalloc=nouserintercepts --suppressions=unwind.supp \
		--error-exitcode=99 --log-file=vg.log "$BIN/stress" threads 4 2000 >vg.out &&
	grep "ERROR SUMMARY: 0 errors" vg.log &&
	for t in vg.*.trace; do
		"$MEMPROV_CLI" stats --json $t >vgs.json &&
		case $(jget vgs.json command) in "$BIN/stress "*) break ;; esac
	done &&
	n=$(jget vgs.json functions.malloc.calls) &&
	echo "memprov recorded $n mallocs under valgrind" && test "$n" -gt 1000
'

test_done
