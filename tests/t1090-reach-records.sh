#!/bin/sh
# t1090-reach-records.sh - the analyzer's side of the reachability scan on
# synthetic traces (tracegen): MP_REC_REACH_BLOCKS classes the blocks it
# names, MP_REC_REACH makes the others still reachable, only blocks live
# at the scan get a class (not one allocated later at a listed address),
# a scan that did not finish gives no class, and malformed records are
# reported as corrupt and skipped.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

test_expect_success 'listed blocks get their class, the others are still reachable' '
	gen cls <<-EOF &&
	header state=exited
	thread 1
	stack ts=1 id=1 native=0x11
	stack ts=2 id=2 native=0x22
	stack ts=3 id=3 native=0x33
	stack ts=4 id=4 native=0x44
	alloc ts=10 addr=0x1000 size=100 stack=1
	alloc ts=20 addr=0x2000 size=200 stack=2
	alloc ts=30 addr=0x3000 size=300 stack=3
	gpu_alloc ts=35 func=cudaMalloc kind=device addr=0x7000 size=700 stack=4
	reach_blocks ts=50 kind=heap cls=4 scan_ts=40 addrs=0x1000
	reach_blocks ts=51 kind=heap cls=3 scan_ts=40 addrs=0x2000
	reach_blocks ts=52 kind=device cls=4 scan_ts=40 addrs=0x7000
	reach ts=53 status=0 scan_ts=40 threads=2 stopped=2
	exit ts=60 status=0
	EOF
	memprov leaks --json cls.trace >l.json &&
	jget l.json reach.status reach.shown reach.threads reach.threads_stopped \
		reach.classes.definitely_lost.bytes reach.classes.indirectly_lost.bytes \
		reach.classes.still_reachable.bytes reach.classes.unknown.bytes \
		sites.0.bytes sites.1.bytes sites.2.bytes >out &&
	printf "done\ntrue\n2\n2\n800\n200\n300\n0\n700\n100\n200\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a block allocated after the scan, at a listed address, has no class' '
	gen late <<-EOF &&
	header state=exited
	thread 1
	alloc ts=10 addr=0x1000 size=100
	free ts=45 addr=0x1000
	alloc ts=46 addr=0x1000 size=64
	alloc ts=47 addr=0x5000 size=50
	reach_blocks ts=50 kind=heap cls=4 scan_ts=40 addrs=0x1000
	reach ts=53 status=0 scan_ts=40
	EOF
	memprov leaks --json late.trace >l.json &&
	jget l.json reach.classes.definitely_lost.blocks reach.classes.unknown.blocks \
		reach.classes.unknown.bytes >out &&
	printf "0\n2\n114\n" >expect &&
	test_cmp expect out &&
	memprov leaks late.trace | grep -q "not classified  *2 blocks  *114 B  (allocated after the scan)"
'

test_expect_success 'a scan that timed out gives no class, and says so' '
	gen slow <<-EOF &&
	header state=exited
	thread 1
	alloc ts=10 addr=0x1000 size=100
	reach ts=53 status=2 scan_ts=40
	EOF
	memprov leaks --json slow.trace >l.json &&
	jget l.json reach.status reach.shown reach.classes >out &&
	printf "timeout\nfalse\nnull\n" >expect &&
	test_cmp expect out &&
	memprov leaks slow.trace | grep -q "not computed: the scan did not finish within its time bound"
'

test_expect_success 'malformed reach records: corrupt, skipped, the rest readable' '
	gen bad <<-EOF &&
	header state=exited
	thread 1
	alloc ts=10 addr=0x1000 size=100
	reach_blocks ts=50 kind=heap cls=4 scan_ts=40 addrs=0x1000 count=9
	newchunk
	reach_blocks ts=51 kind=heap cls=1 scan_ts=40 addrs=0x1000
	newchunk
	reach ts=53 status=99 scan_ts=40
	EOF
	memprov leaks --json bad.trace >l.json 2>err &&
	cat err &&
	test "$(grep -c "corrupt record" err)" = 3 &&
	grep -q "reach block addresses overrun the record" err &&
	grep -q "reach block class out of range" err &&
	grep -q "reach status out of range" err &&
	jget l.json reach.status totals.heap.bytes >out &&
	printf "absent\n100\n" >expect &&
	test_cmp expect out
'

test_expect_success 'dump shows the reach records' '
	memprov dump cls.trace >d.txt &&
	grep -q "reach_blocks heap definitely_lost scan_ts=40 count=1 0x1000" d.txt &&
	grep -q "reach status=done notes=0x0 scan_ts=40 .* threads=2 stopped=2" d.txt
'

test_done
