#!/bin/sh
# t1080-internals.sh - unit tests of the preload object's internals, each
# linked with only the file under test and the files below it
# (tests/helper/test-*.c): the unwinder against libunwind on real frames,
# the CFI and LEB128 readers on crafted input, the seccomp filter
# evaluator on crafted filters, the stack-id set under
# threads, the sampling arithmetic, the trace read back from inside
# libmemprov.so (trace_iter.c) against the analyzer, and the scan's sorts.
. "$(dirname "$0")/test-lib.sh"
for t in test-unwind test-memo test-cfi test-intern test-sample test-iter test-seccomp test-sort tracegen; do
	test -x "$BIN/$t" || test_skip "tests/bin/$t not built (make test-build)"
done

test_expect_success 'unwinder: the same frames as libunwind, or a give-up, never a wrong frame' '
	"$BIN/test-unwind" >out && cat out &&
	grep -x "unwind: 8 cases, 7 fast, 1 gave up, 0 wrong" out
'

test_expect_success 'unwinder: linked with no file above its layer' '
	nm -u "$TOP/interpose/unwind.o" | sed -n "s/^ *U mp_//p" | sort -u >used &&
	nm "$TOP/interpose/cfi.o" "$TOP/interpose/gate.o" "$TOP/interpose/sys.o" |
		sed -n "s/^[0-9a-f]* [TDB] mp_//p" | sort -u >have &&
	comm -23 used have >missing && test_cmp /dev/null missing
'

test_expect_success 'CFI and LEB128 readers on crafted input' '
	"$BIN/test-cfi" >out && cat out && grep -x "cfi: 82 checks, 0 failed" out
'

test_expect_success 'the walk memo: an entry applies only when every word its walk read, and the rbp it used, read the same' '
	"$BIN/test-memo" >out && cat out && grep -x "memo: 1800 cases, 0 failed" out
'

test_expect_success 'seccomp filters run for a call whatever its arguments: spared only where no way kills' '
	"$BIN/test-seccomp" >out && cat out && grep -x "seccomp: 35 checks, 0 failed" out
'

test_expect_success 'stack-id table: 8 threads, each hash new exactly once, one id each' '
	"$BIN/test-intern" >out && cat out &&
	test "$(grep -c "200000 new, 0 twice, 0 never, 0 differ" out)" = 2
'

test_expect_success 'the scan'"'"'s sorts: keys ascend, payloads and the multiset kept, on 400 arrays' '
	"$BIN/test-sort" >out && cat out && grep -x "sort: 400 arrays, [0-9]* elements, 0 failed" out
'

test_expect_success 'sampling: -ln within 1e-5, recorded shares as 1 - exp(-s/N)' '
	"$BIN/test-sample" >out && cat out && ! grep FAIL out
'

# figures test-iter prints, from the analyzer: records, allocations (all
# kinds, failed ones too), bytes of those that succeeded, frees, distinct
# stack ids, threads
from_analyzer() {
	"$MEMPROV_CLI" stats --json "$1" >s.json &&
	"$MEMPROV_CLI" dump "$1" >d.txt &&
	/usr/bin/python3 - s.json d.txt <<-\PY
	import json, re, sys
	j = json.load(open(sys.argv[1]))
	d = open(sys.argv[2]).read().splitlines()
	al = sum(1 for l in d if re.match(r"\d+ T\d+ @\d+ (alloc|gpu_alloc) ", l))
	fr = sum(1 for l in d if re.match(r"\d+ T\d+ @\d+ (free|gpu_free) ", l))
	by = sum(f["bytes"] for f in j["functions"].values())
	st = len({re.search(r" id=(\S+)", l).group(1) for l in d if re.match(r"\d+ T\d+ @\d+ stack ", l)})
	th = len({l.split()[1] for l in d if re.match(r"\d+ T\d+ @", l)})
	print("records %d allocs %d alloc_bytes %d frees %d stacks %d threads %d" %
	      (j["events"], al, by, fr, st, th))
	PY
}

test_expect_success 'trace read back from inside: a real trace, counted as the analyzer counts it' '
	MEMPROV_OUTPUT=real.trace LD_PRELOAD=$MEMPROV_LIB "$BIN/churn" 3 3000 >/dev/null &&
	"$BIN/test-iter" real.trace >out && cat out && head -n 1 out >got &&
	from_analyzer real.trace >want && test_cmp want got &&
	grep " threads 4$" got
'

# The scan at exit takes the compact heap records (malloc, free) in
# batches and the others one by one: the same records, in the same order
# in each thread, as the walk one by one gives (churn mixes calloc,
# realloc and frees from other threads in between)
test_expect_success 'trace read back from inside: heap records in batches, the same sequence' '
	"$BIN/test-iter" real.trace >one &&
	"$BIN/test-iter" --heap real.trace >batched && cat batched &&
	head -n 2 batched >got && test_cmp one got &&
	n=$(sed -n "s/^batched //p" batched) && records=$(sed -n "s/^records \([0-9]*\) .*/\1/p" one) &&
	test "$n" -gt $((records / 4)) && test "$n" -lt "$records"
'

# The same on the fuzzer's seeds: damaged, cut and hostile traces of both
# versions (a damaged record ends its chunk on either path)
test_expect_success 'trace read back from inside: heap batches on the fuzz seeds, the same records' '
	n=0 &&
	for f in "$TOP"/fuzz/corpus/trace/*; do
		"$BIN/test-iter" "$f" >one; a=$? &&
		"$BIN/test-iter" --heap "$f" >batched; b=$? &&
		test $a = $b && head -n 2 batched >got && test_cmp one got || return 1
		n=$((n + 1))
	done &&
	echo "$n traces" && test $n -ge 50
'

test_expect_success 'trace read back from inside: versions 1 and 2 from tracegen' '
	cat >desc <<-EOF &&
	thread 1
	stack ts=5 id=3 native=0x1,0x2
	alloc ts=10 addr=0x1000 size=100 stack=3
	alloc ts=20 addr=0x7f0000000000 size=4096 func=mmap kind=mmap
	thread 2
	alloc ts=15 addr=0x2000 size=200 func=calloc stack=3
	free ts=30 addr=0x1000
	munmap ts=40 addr=0x7f0000000000 len=4096
	gpu_alloc ts=50 addr=0x9000 size=64
	EOF
	"$BIN/tracegen" -o v1.trace <desc && TRACEGEN_VERSION=2 "$BIN/tracegen" -o v2.trace <desc &&
	"$BIN/test-iter" v1.trace >out1 && "$BIN/test-iter" v2.trace >out2 &&
	head -n 1 out1 >got1 && head -n 1 out2 >got2 &&
	echo "records 7 allocs 4 alloc_bytes 4460 frees 2 stacks 1 threads 2" >want &&
	test_cmp want got1 && test_cmp want got2 &&
	"$BIN/test-iter" --heap v2.trace >got3 && head -n 2 got3 >got4 && test_cmp out2 got4 &&
	printf "NOTATRACE" >bad.trace && ! "$BIN/test-iter" bad.trace
'

test_done
