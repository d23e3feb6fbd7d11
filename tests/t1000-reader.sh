#!/bin/sh
# t1000-reader.sh - the trace reader: merge by timestamp across threads and
# chunks, bad magic and newer versions, truncated and corrupt traces.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

test_expect_success 'records of two threads and three chunks merge by timestamp' '
	gen merge <<-EOF &&
	header pid=10 state=exited
	thread 1
	alloc ts=100 addr=0x10 size=1
	alloc ts=300 addr=0x30 size=3
	thread 2
	alloc ts=200 addr=0x20 size=2
	alloc ts=250 addr=0x25 size=25
	thread 1
	newchunk
	alloc ts=400 addr=0x40 size=4
	thread 2
	alloc ts=500 addr=0x50 size=5
	EOF
	memprov dump merge.trace >out &&
	cat >expect <<-EOF &&
	# trace merge.trace pid 10 ppid 1 state exited exit_status 0 chunk_size 4096 chunks 3 threads 2
	100 T1 @4128 alloc malloc heap addr=0x10 size=1 stack=0x0
	200 T2 @8224 alloc malloc heap addr=0x20 size=2 stack=0x0
	250 T2 @8264 alloc malloc heap addr=0x25 size=25 stack=0x0
	300 T1 @4168 alloc malloc heap addr=0x30 size=3 stack=0x0
	400 T1 @12320 alloc malloc heap addr=0x40 size=4 stack=0x0
	500 T2 @8304 alloc malloc heap addr=0x50 size=5 stack=0x0
	# 6 records
	EOF
	test_cmp expect out
'

test_expect_success 'a thread chunks are read in seq order, not file order' '
	gen seq <<-EOF &&
	thread 1
	newchunk seq=1
	alloc ts=20 addr=0x2 size=2
	newchunk seq=0
	alloc ts=10 addr=0x1 size=1
	EOF
	memprov dump seq.trace | grep -v "^#" | cut -d" " -f1,2 >out &&
	printf "10 T1\n20 T1\n" >expect &&
	test_cmp expect out
'

test_expect_success 'unknown record types, reserved chunks are skipped' '
	gen unk <<-EOF &&
	thread 1
	alloc ts=10 addr=0x1 size=1
	rawrec ts=15 type=200 size=32
	alloc ts=20 addr=0x2 size=2
	emptychunk
	EOF
	memprov dump unk.trace >out 2>err &&
	grep -c " alloc " out >n && echo 2 >expect && test_cmp expect n &&
	test_must_be_empty() { ! test -s "$1"; } && test_must_be_empty err
'

test_expect_success 'bad magic: one sentence, exit 1' '
	printf "NOTATRACE-------" >bad.trace &&
	st=0 && memprov leaks bad.trace >out 2>err || st=$? &&
	test $st = 1 &&
	echo "memprov: error: '\''bad.trace'\'' is not a memprov trace: bad magic at offset 0" >expect &&
	test_cmp expect err
'

test_expect_success 'an empty file (the process killed as memprov created it): says so, exit 1' '
	: >empty.trace &&
	st=0 && memprov stats empty.trace >out 2>err || st=$? &&
	test $st = 1 &&
	echo "memprov: error: '\''empty.trace'\'' is empty: the process ended before memprov wrote its header (killed as it started?)" >expect &&
	test_cmp expect err
'

test_expect_success 'newer format version: asks for an upgrade, exit 1' '
	gen v3 <<-EOF &&
	header version=3
	EOF
	st=0 && memprov stats v3.trace >out 2>err || st=$? &&
	test $st = 1 &&
	echo "memprov: error: '\''v3.trace'\'': trace format version 3 is newer than this memprov (2): upgrade memprov" >expect &&
	test_cmp expect err
'

test_expect_success 'missing file: cannot open, exit 1' '
	st=0 && memprov dump nosuch.trace 2>err || st=$? &&
	test $st = 1 &&
	grep -F "cannot open '\''nosuch.trace'\'': No such file or directory" err
'

test_expect_success 'file cut inside a chunk: trace cut at offset N, partial figures' '
	gen cut -t 4256 <<-EOF &&
	header state=running
	thread 1
	alloc ts=10 addr=0x1 size=100
	alloc ts=20 addr=0x2 size=200
	alloc ts=30 addr=0x3 size=300
	alloc ts=40 addr=0x4 size=400
	EOF
	memprov leaks --json cut.trace >cut.json 2>err &&
	grep -F "trace cut at offset 4256" err &&
	jget cut.json totals.heap.bytes totals.heap.blocks state at >out &&
	printf "600\n3\nrunning\nend-of-trace\n" >expect &&
	test_cmp expect out &&
	memprov stats --json cut.trace >s.json 2>/dev/null &&
	jget s.json cut cut_at damaged >out &&
	printf "true\n4256\nfalse\n" >expect &&
	test_cmp expect out
'

test_expect_success 'next_chunk beyond the file: cut at the end of the file' '
	gen more <<-EOF &&
	header next_chunk=5
	thread 1
	alloc ts=10 addr=0x1 size=100
	EOF
	memprov leaks more.trace >out 2>err &&
	grep -F "warning: trace cut at offset 8192: figures are up to that point" out &&
	grep -Fx "  heap                1 block   100 B" out
'

test_expect_success 'corrupt record: offset named, the rest still reported' '
	gen bad -v <<-EOF 2>offsets &&
	thread 1
	alloc ts=10 addr=0x1 size=100
	rawrec ts=20 type=1 size=20 len=24
	alloc ts=30 addr=0x3 size=300
	thread 2
	alloc ts=15 addr=0x2 size=200
	thread 1
	newchunk
	alloc ts=40 addr=0x4 size=400
	EOF
	memprov leaks --json bad.trace >bad.json 2>err &&
	echo "memprov: warning: corrupt record at offset 4168 (chunk 0, thread 1): record size not a multiple of 8 or under 16" >expect &&
	test_cmp expect err &&
	jget bad.json damaged totals.heap.bytes totals.heap.blocks >out &&
	printf "true\n700\n3\n" >expect &&
	test_cmp expect out
'

test_expect_success 'inner lengths are checked: stack frames, module path, mark label' '
	gen inner <<-EOF &&
	thread 1
	stack ts=5 id=7 native=0x1 n_native=9
	thread 2
	module ts=6 base=0x1000 path=/x path_len=200
	thread 3
	mark ts=7 label=hello label_len=99
	thread 4
	pycode ts=8 id=1 file=a.py name=f
	alloc ts=10 addr=0x1 size=100
	EOF
	memprov dump inner.trace >out 2>err &&
	cat >expect <<-EOF &&
	memprov: warning: corrupt record at offset 4128 (chunk 0, thread 1): stack frames overrun the record
	memprov: warning: corrupt record at offset 8224 (chunk 1, thread 2): module path length out of range
	memprov: warning: corrupt record at offset 12320 (chunk 2, thread 3): mark label length out of range
	EOF
	test_cmp expect err &&
	grep -c -e " alloc " -e " pycode " out >n && echo 2 >expect && test_cmp expect n
'

test_expect_success 'a record too short for its type is corrupt' '
	gen short <<-EOF &&
	thread 1
	rawrec ts=5 type=1 size=24
	EOF
	st=0 && memprov stats short.trace >out 2>err || st=$? &&
	grep -F "corrupt record at offset 4128 (chunk 0, thread 1): record too short for its type" err &&
	test $st = 1 &&
	grep -F "nothing could be read from '\''short.trace'\''" err
'

test_expect_success 'a chunk with a bad magic is skipped with a warning' '
	gen bch <<-EOF &&
	badchunk
	thread 1
	alloc ts=10 addr=0x1 size=100
	EOF
	memprov stats --json bch.trace >s.json 2>err &&
	grep -F "corrupt chunk head at offset 4096 (chunk 0): bad magic" err &&
	jget s.json damaged kinds.heap.live_bytes >out &&
	printf "true\n100\n" >expect &&
	test_cmp expect out
'

test_expect_success 'an empty trace (nothing recorded yet) reads as empty, exit 0' '
	gen empty </dev/null &&
	memprov leaks --json empty.trace >e.json &&
	jget e.json totals.heap.bytes state >out &&
	printf "0\nrunning\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a file cut inside the header: nothing to read, exit 1' '
	gen hdr </dev/null && head -c 100 hdr.trace >h.trace &&
	st=0 && memprov stats h.trace 2>err || st=$? &&
	test $st = 1 && grep -F "cut inside its header" err
'

test_expect_success 'a header-only trace (disk full at once) reads as empty, exit 0' '
	gen ho -t 4096 <<-EOF &&
	header state=stopped stop=1
	thread 1
	alloc ts=10 addr=0x1 size=100
	EOF
	memprov stats --json ho.trace >s.json 2>err &&
	grep -F "trace cut at offset 4096" err &&
	jget s.json state events cut damaged >out &&
	printf "stopped\n0\ntrue\nfalse\n" >expect &&
	test_cmp expect out
'

test_done
