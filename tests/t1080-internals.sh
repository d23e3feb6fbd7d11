#!/bin/sh
# t1080-internals.sh - unit tests of the preload object's internals, each
# linked with only the file under test and the files below it
# (tests/helper/test-*.c): the unwinder against libunwind on real frames,
# the CFI and LEB128 readers on crafted input, the stack-id set under
# threads, and the sampling arithmetic.
. "$(dirname "$0")/test-lib.sh"
for t in test-unwind test-cfi test-intern test-sample; do
	test -x "$BIN/$t" || test_skip "tests/bin/$t not built (make test-build)"
done

test_expect_success 'unwinder: the same frames as libunwind, or a give-up, never a wrong frame' '
	"$BIN/test-unwind" >out && cat out &&
	grep -x "unwind: 8 cases, 6 fast, 2 gave up, 0 wrong" out
'

test_expect_success 'unwinder: linked with no file above its layer' '
	nm -u "$TOP/interpose/unwind.o" | sed -n "s/^ *U mp_//p" | sort -u >used &&
	nm "$TOP/interpose/cfi.o" "$TOP/interpose/gate.o" "$TOP/interpose/sys.o" |
		sed -n "s/^[0-9a-f]* [TDB] mp_//p" | sort -u >have &&
	comm -23 used have >missing && test_cmp /dev/null missing
'

test_expect_success 'CFI and LEB128 readers on crafted input' '
	"$BIN/test-cfi" >out && cat out && grep -x "cfi: 79 checks, 0 failed" out
'

test_expect_success 'stack-id table: 8 threads, each hash new exactly once, one id each' '
	"$BIN/test-intern" >out && cat out &&
	test "$(grep -c "200000 new, 0 twice, 0 never, 0 differ" out)" = 2
'

test_expect_success 'sampling: -ln within 1e-5, recorded shares as 1 - exp(-s/N)' '
	"$BIN/test-sample" >out && cat out && ! grep FAIL out
'

test_done
