#!/bin/sh
# t9210-output-faults.sh - where the trace goes goes wrong: its directory
# is removed while the program runs (the program goes on, same output and
# status); the output path is on a read-only filesystem (one warning, the
# program goes on, no file); a small filesystem fills up while 8 threads
# allocate (one warning, same output and status, the trace readable and
# marked stopped). t2150-fullfs.sh covers the single-threaded fill.
umount "$(dirname "$0")/out/t9210-output-faults/ro" 2>/dev/null
umount "$(dirname "$0")/out/t9210-output-faults/small" 2>/dev/null
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" && test -x "$BIN/stress" ||
	test_skip "interpose/libmemprov.so, analyzer/memprov or tests/bin/stress not built"

test_expect_success 'trace directory removed mid-run: the program goes on' '
	mkdir gone &&
	env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/gone/t.trace \
		"$BIN/stress" steps 4 gone.log 3000 >gone.out 2>gone.err &
	pid=$!
	timeout 60 sh -c "until [ -s gone.log ]; do sleep 0.01; done" &&
	rm -rf gone &&
	wait $pid &&
	test ! -s gone.err &&
	tail -n 1 gone.log >last && cat last &&
	grep "^step 2999 blocks=240000 " last
'

test_expect_success 'read-only output filesystem: one warning, program unchanged' '
	mkdir -p ro &&
	mount -t tmpfs -o ro,size=64k tmpfs ro || { echo "cannot mount a read-only tmpfs"; exit 1; }
	st=0 &&
	timeout 60 env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/ro/%p.trace \
		"$BIN/stress" longjmp 20 20 >ro.out 2>ro.err || st=$?
	umount ro &&
	cat ro.err && test $st = 0 &&
	"$BIN/stress" longjmp 20 20 >bare.out && test_cmp bare.out ro.out &&
	test $(wc -l <ro.err) = 1 && grep "^memprov: cannot create the trace file" ro.err &&
	test -z "$(ls ro)"
'

test_expect_success 'filesystem full mid-run with 8 threads: one warning, status, readable' '
	mkdir -p small &&
	mount -t tmpfs -o size=1m tmpfs small || { echo "cannot mount a 1 MiB tmpfs"; exit 1; }
	st=0 &&
	timeout 120 env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/small/t.trace MEMPROV_RAMFS_OK=1 \
		"$BIN/stress" threads 8 20000 >full.out 2>full.err || st=$?
	cp small/t.trace full.trace; umount small
	cat full.err full.out && test $st = 0 &&
	test $(wc -l <full.err) = 1 && grep "^memprov: " full.err &&
	timeout 60 "$MEMPROV_CLI" stats --json full.trace >full.json &&
	jget --check full.json state=stopped damaged=false &&
	jget --check full.json "=j[\"events\"]>1000==true" &&
	timeout 60 "$MEMPROV_CLI" leaks --json full.trace >/dev/null
'

test_done
