#!/bin/sh
# t6050-demo.sh - scripts/demo.sh (what `make demo` runs), on the small
# shape: the diagnosis it prints names the write-back line and the
# expected bytes per iteration, says the fixed run has no suspect, fits in
# about 20 lines, and leaves the files it names.
. "$(dirname "$0")/test-lib.sh"

PY=/usr/bin/python3
SMALL="--groups 8 --arrays-per-group 4 --rows 262144 --cols 2 --gpu-budget 33554432 --write-every 2 --iters 12"

$PY -c 'import numpy' 2>/dev/null || test_skip "/usr/bin/python3 has no numpy (apt-get install python3-numpy)"
LINE=$(grep -n "= np.empty(.*# memprov: write-back allocation" "$TOP/scripts/parla/parray.py" | cut -d: -f1)

test_expect_success 'demo.sh DIR FLAGS: exit 0, about 20 lines' '
	timeout 120 "$TOP/scripts/demo.sh" "$TRASH/d" $SMALL >out 2>err &&
	cat out &&
	test ! -s err &&
	test "$(wc -l <out)" -le 21
'

test_expect_success 'the diagnosis: write-back line, bytes per iteration, fixed run clean' '
	grep -q "^  suspect #1: host heap grows 4194304 B per iteration (2 blocks), 32.0 MiB live at the end, confidence 1.00$" out &&
	grep -q "^    at scripts/parla/parray.py:$LINE in PArray._write_back_to_host:$" out &&
	grep -q "^        host = np.empty(self.shape, dtype=self.dtype)  # memprov: write-back allocation$" out &&
	grep -q "^    called from PArray.evict (scripts/parla/parray.py:[0-9]*) <- EvictionManager.reserve (scripts/parla/eviction.py:[0-9]*)$" out &&
	grep -q "^  other suspects: none$" out &&
	grep -q "^  expected (the workload.s summary): 2097152 B per array x 2 dirty evictions per iteration = 4194304 B per iteration$" out &&
	grep -q "^  memprov.s slope / expected = 1.000; " out &&
	grep -q "^analyzer/memprov growth --after \"iter 4\" $TRASH/d/fixed.trace: no growing site$" out &&
	grep -q "^HTML report: $TRASH/d/bug.html " out &&
	grep -q "^diagnosis: the leak is the evict write-back allocation, scripts/parla/parray.py:$LINE (PArray._write_back_to_host),$" out
'

test_expect_success 'the files it names are there; the workload output is in the logs only' '
	test -s d/bug.html && test -s d/bug.trace && test -s d/fixed.trace &&
	grep -q "^iter 11: " d/bug.log && grep -q "^iter 11: " d/fixed.log &&
	! grep -q "^iter " out &&
	grep -q "<html" d/bug.html
'

test_expect_success 'a shape that never evicts: exit 1 with a reason' '
	set +e
	timeout 120 "$TOP/scripts/demo.sh" "$TRASH/n" --groups 2 --arrays-per-group 1 --rows 1000 --iters 3 >nout 2>nerr
	rc=$?
	set -e
	test $rc = 1 &&
	grep -q "^demo: these flags never fill the GPU budget: nothing is evicted, nothing leaks$" nerr
'

test_done
