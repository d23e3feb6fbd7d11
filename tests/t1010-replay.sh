#!/bin/sh
# t1010-replay.sh - the replay engine: realloc pairs and failures, realloc
# to zero, partial munmap, CUDA device/managed frees, context resets,
# unmatched frees, peaks, and the instant `leaks` measures at.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

test_expect_success 'realloc moves a block: one call, old freed, new live' '
	gen re <<-EOF &&
	header state=exited
	thread 1
	alloc ts=10 addr=0x100 size=100
	free ts=20 func=realloc addr=0x100 flags=realloc
	alloc ts=30 func=realloc addr=0x900 size=300 flags=realloc
	EOF
	memprov stats --json re.trace >s.json &&
	jget s.json functions.malloc.calls functions.realloc.calls functions.realloc.bytes \
		kinds.heap.allocs kinds.heap.frees kinds.heap.live_bytes kinds.heap.peak_bytes >out &&
	printf "1\n1\n300\n2\n1\n300\n300\n" >expect &&
	test_cmp expect out
'

test_expect_success 'failed realloc restores the old block' '
	gen ref <<-EOF &&
	thread 1
	alloc ts=10 addr=0x100 size=100 stack=5
	free ts=20 func=realloc addr=0x100 flags=realloc
	stack ts=25 id=6 native=0x1
	alloc ts=30 func=realloc addr=0 size=1000000 flags=realloc,failed
	EOF
	memprov stats --json ref.trace >s.json &&
	jget s.json kinds.heap.live_bytes kinds.heap.live_blocks kinds.heap.frees \
		functions.realloc.calls functions.realloc.failed failures.0.size >out &&
	printf "100\n1\n0\n1\n1\n1000000\n" >expect &&
	test_cmp expect out &&
	memprov leaks --json ref.trace >l.json &&
	jget l.json sites.0.bytes sites.0.func >out &&
	printf "100\nmalloc\n" >expect &&
	test_cmp expect out
'

test_expect_success 'realloc to zero frees; a later record of the thread drops the stash' '
	gen re0 <<-EOF &&
	thread 1
	alloc ts=10 addr=0x100 size=100
	alloc ts=11 addr=0x200 size=50
	free ts=20 func=realloc addr=0x100 flags=realloc
	alloc ts=30 addr=0x300 size=7
	alloc ts=40 func=realloc addr=0 size=10 flags=realloc,failed
	EOF
	memprov stats --json re0.trace >s.json &&
	jget s.json kinds.heap.live_bytes kinds.heap.live_blocks functions.realloc.calls >out &&
	printf "57\n2\n2\n" >expect &&
	test_cmp expect out
'

test_expect_success 'another thread does not disturb a pending realloc' '
	gen ret <<-EOF &&
	thread 1
	alloc ts=10 addr=0x100 size=100
	free ts=20 func=realloc addr=0x100 flags=realloc
	alloc ts=40 func=realloc addr=0 size=10 flags=realloc,failed
	thread 2
	alloc ts=30 addr=0x500 size=5
	EOF
	memprov stats --json ret.trace >s.json &&
	jget s.json kinds.heap.live_bytes >out &&
	echo 105 >expect && test_cmp expect out
'

test_expect_success 'munmap trims the head, the tail, or splits an mmap block' '
	gen mm <<-EOF &&
	thread 1
	alloc ts=10 func=mmap kind=mmap addr=0x10000 size=16384
	alloc ts=11 func=mmap kind=mmap addr=0x20000 size=16384
	alloc ts=12 func=mmap kind=mmap addr=0x30000 size=16384
	alloc ts=13 func=mmap kind=mmap addr=0x40000 size=8192
	munmap ts=20 addr=0x11000 len=4096
	munmap ts=21 addr=0x20000 len=4096
	munmap ts=22 addr=0x33000 len=4096
	munmap ts=23 addr=0x40000 len=5000
	munmap ts=24 addr=0x90000 len=4096
	EOF
	memprov stats --json mm.trace >s.json &&
	jget s.json kinds.mmap.live_bytes kinds.mmap.live_blocks kinds.mmap.peak_bytes \
		kinds.mmap.frees unmatched_unmaps unmatched_frees functions.munmap.calls >out &&
	printf "36864\n4\n57344\n4\n1\n0\n5\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a device free matches a managed block; pinned is its own space' '
	gen gpu <<-EOF &&
	thread 1
	gpu_alloc ts=10 func=cudaMallocManaged kind=managed addr=0x7000 size=4096
	gpu_alloc ts=11 func=cudaMalloc kind=device addr=0x8000 size=1024
	gpu_alloc ts=12 func=cudaHostAlloc kind=pinned addr=0x8000 size=512
	gpu_free ts=20 func=cudaFree kind=device addr=0x7000
	gpu_free ts=21 func=cudaFree kind=device addr=0x8000
	gpu_alloc ts=30 func=cudaMalloc kind=device addr=0 size=999 result=2 flags=failed
	EOF
	memprov stats --json gpu.trace >s.json &&
	jget s.json kinds.managed.live_bytes kinds.device.live_bytes kinds.pinned.live_bytes \
		functions.cudaMalloc.calls functions.cudaMalloc.failed failures.0.result failures.0.kind >out &&
	printf "0\n0\n512\n2\n1\n2\ndevice\n" >expect &&
	test_cmp expect out
'

test_expect_success 'a context reset frees device, managed and pinned of its device only' '
	gen ctx <<-EOF &&
	thread 1
	gpu_alloc ts=10 kind=device addr=0x1000 size=100 device=0
	gpu_alloc ts=11 kind=managed func=cudaMallocManaged addr=0x2000 size=200 device=0
	gpu_alloc ts=12 kind=pinned func=cudaHostAlloc addr=0x3000 size=300 device=0
	gpu_alloc ts=13 kind=device addr=0x4000 size=400 device=1
	gpu_alloc ts=14 kind=registered func=cudaHostRegister addr=0x5000 size=500 device=0
	alloc ts=15 addr=0x6000 size=600
	ctx_reset ts=20 device=0
	EOF
	memprov leaks --json ctx.trace >l.json &&
	jget l.json totals.device.bytes totals.managed.bytes totals.pinned.bytes \
		totals.registered.bytes totals.heap.bytes >out &&
	printf "400\n0\n0\n500\n600\n" >expect &&
	test_cmp expect out &&
	gen ctxall <<-EOF &&
	thread 1
	gpu_alloc ts=10 kind=device addr=0x1000 size=100 device=0
	gpu_alloc ts=13 kind=device addr=0x4000 size=400 device=1
	ctx_reset ts=20 device=-1
	EOF
	memprov leaks --json ctxall.trace >l.json &&
	jget l.json totals.device.bytes >out && echo 0 >expect && test_cmp expect out
'

test_expect_success 'frees of unknown addresses are counted, not errors' '
	gen unk <<-EOF &&
	thread 1
	free ts=10 addr=0x100
	free ts=11 addr=0x200
	free ts=12 addr=0
	gpu_free ts=13 addr=0x300
	EOF
	memprov stats --json unk.trace >s.json &&
	jget s.json unmatched_frees functions.free.calls >out &&
	printf "3\n3\n" >expect && test_cmp expect out &&
	memprov stats unk.trace >s.txt &&
	grep -F "unmatched frees: 3 (frees of memory allocated before tracing started)" s.txt
'

test_expect_success 'peak bytes and blocks, and when' '
	gen peak <<-EOF &&
	header start=1000
	thread 1
	alloc ts=1100 addr=0x1 size=10
	alloc ts=1200 addr=0x2 size=1000
	free ts=1300 addr=0x2
	alloc ts=1400 addr=0x3 size=1
	alloc ts=1500 addr=0x4 size=1
	alloc ts=1600 addr=0x5 size=1
	EOF
	memprov stats --json peak.trace >s.json &&
	jget s.json kinds.heap.peak_bytes kinds.heap.peak_ns kinds.heap.peak_blocks >out &&
	printf "1010\n200\n4\n" >expect && test_cmp expect out
'

test_expect_success 'a stack written twice is one stack; ids resolve across threads' '
	gen st <<-EOF &&
	thread 2
	alloc ts=10 addr=0x1 size=10 stack=77
	alloc ts=11 addr=0x2 size=20 stack=77
	thread 1
	stack ts=20 id=77 python=1:5
	stack ts=21 id=77 python=1:5
	pycode ts=19 id=1 file=/app/m.py name=work
	EOF
	memprov leaks --json st.trace >l.json &&
	jget l.json "=len(j[\"sites\"])" sites.0.bytes sites.0.blocks sites.0.python.0.function \
		sites.0.python.0.file sites.0.python.0.line >out &&
	printf "1\n30\n2\nwork\n/app/m.py\n5\n" >expect && test_cmp expect out
'

test_expect_success 'leaks measures at the last main-end mark when there is one' '
	gen me <<-EOF &&
	header state=exited exit=0 start=1000
	thread 1
	alloc ts=1010 addr=0x1 size=10
	mark ts=1020 serial=1 label=iter
	alloc ts=1030 addr=0x2 size=20
	mark ts=1040 serial=2 label=__main__ flags=main-end
	free ts=1050 addr=0x1
	free ts=1051 addr=0x2
	exit ts=1060 status=0
	EOF
	memprov leaks --json me.trace >l.json &&
	jget l.json at at_ns totals.heap.bytes totals.heap.blocks >out &&
	printf "main-end\n40\n30\n2\n" >expect && test_cmp expect out &&
	memprov stats --json me.trace >s.json &&
	jget s.json marks kinds.heap.live_bytes >out &&
	printf "2\n0\n" >expect && test_cmp expect out
'

test_done
