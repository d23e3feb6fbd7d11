#!/bin/sh
# t1005-reader-v2.sh - the reader on format version 2 (compact records,
# chunks of whole blocks): every record type through tracegen in both
# versions reads back the same (dump, leaks, stats); chunks of several
# blocks and holes are walked; damage to the compact encoding is named at
# its offset and the rest is read; a cut inside a record is a cut.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

# every record type and field, values that need 1 to 10 varint bytes,
# addresses that go down as well as up, flags and functions off the
# defaults, a hashed stack id written twice
cat >"$TRASH/all.txt" <<-EOF
header pid=77 state=exited exit=3 start=1000 end=99000
thread 1
threadrec ts=1000 tid=1001 serial=1 name=main
module ts=1001 base=0x7f0000000000 lo=0x7f0000000000 hi=0x7f0000100000 buildid=0badc0de path=/lib/a.so
stack ts=1002 id=1 native=0x7f0000001000,0x7f0000000ff0,0x400100,0x7f0000050000
stack ts=1003 id=2 native=0x400200 python=7:12,8:300000
stack ts=1004 id=0x8123456789abcdef native=0x1,0xffffffffffffffff
pycode ts=1005 id=7 first=10 file=/x/a.py name=f
pycode ts=1006 id=8 first=1 file=/x/b.py name=Klass.meth
alloc ts=1100 addr=0x555500001000 size=100 stack=1
alloc ts=1100 addr=0x555500000010 size=0 stack=2 func=calloc
alloc ts=1200 addr=0x7f1200000000 size=1048576 stack=0x8123456789abcdef func=mmap kind=mmap
free ts=1300 addr=0x555500000010
free ts=1400 addr=0x555500001000 func=realloc flags=realloc
alloc ts=1400 addr=0x555500002000 size=300 stack=1 func=realloc flags=realloc
alloc ts=1500 addr=0 size=18446744073709551615 stack=1 flags=failed
munmap ts=1600 addr=0x7f1200001000 len=4096
mark ts=1700 serial=1 label=step
mark ts=1701 serial=2 label="" flags=main-end
rss ts=1800 rss=123456789 vm=987654321
gpu_alloc ts=1900 addr=0x7000000000 size=1024 stack=1 stream=5 device=1 result=0 extra=64
gpu_alloc ts=1910 addr=0 size=1 stack=2 func=cudaMallocHost kind=pinned result=2 flags=failed
gpu_free ts=2000 addr=0x7000000000 device=1 flags=stream func=cudaFreeAsync stream=5
ctx_reset ts=2100 device=-1
fork ts=2200 child=4242
stack ts=2300 id=0x8123456789abcdef native=0x1,0xffffffffffffffff
unload ts=2400 base=0x7f0000000000
thread 2
threadrec ts=1050 tid=1002 serial=2 parent=1 name=worker
alloc ts=1150 addr=0x555500003000 size=7 stack=1
free ts=1250 addr=0x555500003000
exit ts=98000 status=3 how=0
EOF

test_expect_success 'every record type reads back the same from version 1 and 2' '
	gen v1 <all.txt &&
	TRACEGEN_VERSION=2 gen v2 <all.txt &&
	/usr/bin/python3 -c "import struct, sys
print(struct.unpack_from(\"<I\", open(sys.argv[1], \"rb\").read(), 8)[0])" v2.trace >ver &&
	echo 2 >expect && test_cmp expect ver &&
	memprov dump v1.trace >d1 2>e1 && memprov dump v2.trace >d2 2>e2 &&
	test_must_be_empty() { ! test -s "$1"; } && test_must_be_empty e1 && test_must_be_empty e2 &&
	grep -c "^[0-9]" d1 >n && echo 29 >expect && test_cmp expect n &&
	sed -e "s/ @[0-9]*//" -e "/^# trace/d" d1 >s1 &&
	sed -e "s/ @[0-9]*//" -e "/^# trace/d" d2 >s2 &&
	test_cmp s1 s2 &&
	for r in leaks stats timeline peak; do
		memprov $r --json v1.trace | sed -e "s/v1.trace/T/" -e "s/\"format_version\":1/V/" >$r.1 &&
		memprov $r --json v2.trace | sed -e "s/v2.trace/T/" -e "s/\"format_version\":2/V/" >$r.2 &&
		test_cmp $r.1 $r.2 || exit 1
	done
'

test_expect_success 'a version 2 trace is smaller' '
	test $(stat -c %s v2.trace) -le $(stat -c %s v1.trace) &&
	{ echo "header"; echo "thread 1"; i=0; while [ $i -lt 400 ]; do
		echo "alloc addr=$((0x555500000000 + 48 * i)) size=$((40 + i % 7)) stack=$((1 + i % 3))";
		echo "free addr=$((0x555500000000 + 48 * i))"; i=$((i + 1)); done; } >churn.txt &&
	gen c1 <churn.txt && TRACEGEN_VERSION=2 gen c2 <churn.txt &&
	memprov dump c2.trace | grep -c " alloc " >n && echo 400 >expect && test_cmp expect n &&
	/usr/bin/python3 "$TOP/tests/progs/trace_walk.py" c2.trace >walk &&
	awk "{ n++; b += \$3 } END { if (b / n > 6) exit 1; print n, b }" walk
'

test_expect_success 'chunks of several blocks, and holes, are walked' '
	TRACEGEN_VERSION=2 gen multi <<-EOF &&
	thread 1
	newchunk size=16384
	alloc ts=10 addr=0x10 size=1
	emptychunk
	thread 2
	newchunk size=8192
	alloc ts=20 addr=0x20 size=2
	emptychunk
	emptychunk
	thread 1
	newchunk
	alloc ts=30 addr=0x30 size=3
	EOF
	test $(stat -c %s multi.trace) = $((4096 + 16384 + 4096 + 8192 + 8192 + 4096)) &&
	memprov dump multi.trace >out 2>err &&
	! test -s err &&
	grep " alloc " out | cut -d" " -f1,2,3 >got &&
	printf "10 T1 @4128\n20 T2 @24608\n30 T1 @40992\n" >expect && test_cmp expect got
'

# rawrec data= writes bytes as they are: 01 is an ALLOC tag without
# flags, then varints (ts delta, address delta, size, stack)
for how in "80 00:record tag with its reserved bit set" \
	"00:record type 0" \
	"01 ff ff ff ff ff ff ff ff ff ff 01:varint longer than 10 bytes" \
	"09 00 f0 01 00:record runs past the used bytes" \
	"43 00 ffff07 00 00 00:record function number out of range"; do
	bytes=$(echo "${how%%:*}" | tr -d " ") what=${how#*:}
	export bytes what
	test_expect_success "corrupt compact record ($what): named at its offset, the rest read" '
		TRACEGEN_VERSION=2 gen bad -v <<-EOF 2>offsets &&
		thread 1
		alloc ts=10 addr=0x1000 size=100
		rawrec data=$bytes
		alloc ts=30 addr=0x3000 size=300
		thread 2
		alloc ts=15 addr=0x2000 size=200
		EOF
		memprov leaks --json bad.trace >bad.json 2>err &&
		off=$(sed -n "s/^offset \([0-9]*\): line 3\$/\1/p" offsets) &&
		echo "memprov: warning: corrupt record at offset $off (chunk 0, thread 1): $what" >expect &&
		test_cmp expect err &&
		jget bad.json damaged totals.heap.bytes totals.heap.blocks >out &&
		printf "true\n300\n2\n" >expect &&
		test_cmp expect out
	'
done

test_expect_success 'an unknown framed record type is skipped, not an error' '
	TRACEGEN_VERSION=2 gen unk <<-EOF &&
	thread 1
	alloc ts=10 addr=0x1000 size=100
	rawrec data=3c0003aabbcc
	alloc ts=20 addr=0x2000 size=200
	EOF
	memprov leaks --json unk.trace >unk.json 2>err &&
	! test -s err &&
	jget unk.json damaged totals.heap.bytes >out &&
	printf "false\n300\n" >expect && test_cmp expect out
'

test_expect_success 'a cut inside a compact record is a cut, not damage' '
	TRACEGEN_VERSION=2 gen cut -t 4145 <<-EOF &&
	header state=running
	thread 1
	alloc ts=10 addr=0x555500001000 size=100
	alloc ts=20 addr=0x555500002000 size=200
	alloc ts=30 addr=0x555500003000 size=300
	EOF
	memprov stats --json cut.trace >s.json 2>err &&
	grep -F "trace cut at offset 4145" err &&
	jget s.json cut damaged kinds.heap.live_bytes >out &&
	printf "true\nfalse\n100\n" >expect && test_cmp expect out
'

test_expect_success 'a damaged chunk head: one warning, the walk finds the next chunk' '
	TRACEGEN_VERSION=2 gen bch <<-EOF &&
	thread 1
	newchunk size=12288
	alloc ts=10 addr=0x1 size=100
	badchunk
	thread 2
	alloc ts=20 addr=0x2 size=200
	EOF
	/usr/bin/python3 -c "import sys
f = open(sys.argv[1], \"r+b\"); f.seek(4096 + 20); f.write(bytes([1, 2, 0, 0]))" bch.trace &&
	memprov stats --json bch.trace >s.json 2>err &&
	cat err &&
	test $(grep -c "corrupt chunk head" err) = 1 &&
	grep -F "corrupt chunk head at offset 4096 (chunk 0): size not a whole number of blocks" err &&
	jget s.json damaged kinds.heap.live_bytes >out &&
	printf "true\n200\n" >expect && test_cmp expect out
'

test_done
