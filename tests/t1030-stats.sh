#!/bin/sh
# t1030-stats.sh - `memprov stats`: the text report and its JSON, with
# exact figures for calls, kinds, failures, threads, marks and the cut.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

test_expect_success 'stats text: functions, kinds, failures' '
	gen s <<-EOF &&
	header pid=5 state=exited exit=0 start=1000 end=3000 cmd="prog"
	thread 1
	alloc ts=1100 addr=0x1 size=100
	alloc ts=1200 func=calloc addr=0x2 size=2048
	free ts=1300 addr=0x1
	alloc ts=1400 addr=0 size=99999999 flags=failed
	mark ts=1500 serial=1 label=step
	thread 2
	gpu_alloc ts=1600 func=cudaMalloc kind=device addr=0 size=1073741824 result=2 flags=failed
	gpu_alloc ts=1610 func=cudaMalloc kind=device addr=0 size=1073741824 result=2 flags=failed
	gpu_alloc ts=1700 func=cudaHostAlloc kind=pinned addr=0x9000 size=4096
	EOF
	memprov stats s.trace >out &&
	cat >expect <<-EOF &&
	trace: s.trace
	pid: 5, command: prog
	ended: exited with status 0
	duration: 2.0 µs, threads: 2, events: 8, marks: 1
	trace: complete
	unmatched frees: 0 (frees of memory allocated before tracing started)

	functions:
	  function                      calls          bytes   failed
	  malloc                            2            100        1
	  calloc                            1          2,048        0
	  free                              1              0        0
	  cudaMalloc                        2              0        2
	  cudaHostAlloc                     1          4,096        0

	kinds:
	  heap       allocs 2, frees 1, peak 2.1 KiB (2,148 B) at 200 ns, 2 blocks at most; live at end 2.0 KiB (2,048 B) in 1 block
	  pinned     allocs 1, frees 0, peak 4.0 KiB (4,096 B) at 700 ns, 1 block at most; live at end 4.0 KiB (4,096 B) in 1 block

	reachability at exit: not computed: no scan in this trace (an exit memprov does not see, or a trace from an older memprov)

	failed calls:
	  malloc (heap) of 95.4 MiB (99,999,999 B): 1 time
	  cudaMalloc (device) of 1.0 GiB (1,073,741,824 B), error 2: 2 times
	EOF
	test_cmp expect out
'

test_expect_success 'stats JSON: every documented field' '
	memprov stats --json s.trace >s.json &&
	jget s.json trace pid command state exit_status duration_ns threads events marks cut cut_at \
		damaged unmatched_frees functions.calloc.bytes functions.malloc.failed \
		kinds.heap.allocs kinds.heap.frees kinds.heap.peak_bytes kinds.heap.peak_blocks \
		kinds.heap.live_bytes kinds.heap.live_blocks kinds.device.allocs \
		failures.1.func failures.1.kind failures.1.size failures.1.result failures.1.count \
		"=len(j[\"failures\"])" >out &&
	cat >expect <<-EOF &&
	s.trace
	5
	prog
	exited
	0
	2000
	2
	8
	1
	false
	null
	false
	0
	2048
	1
	2
	1
	2148
	2
	2048
	1
	0
	cudaMalloc
	device
	1073741824
	2
	2
	2
	EOF
	test_cmp expect out
'

test_expect_success 'a running trace cut short: duration to the last record, cut offset' '
	gen r -t 4208 <<-EOF &&
	header state=running start=1000
	thread 1
	alloc ts=1100 addr=0x1 size=100
	alloc ts=1200 addr=0x2 size=100
	alloc ts=1300 addr=0x3 size=100
	EOF
	memprov stats --json r.trace >r.json 2>err &&
	jget r.json state exit_status duration_ns events cut cut_at >out &&
	printf "running\nnull\n200\n2\ntrue\n4208\n" >expect &&
	test_cmp expect out &&
	memprov stats r.trace 2>/dev/null | grep -Fx "trace: cut at offset 4208"
'

# A Python program is judged at the end of its main module: stats says
# what each kind held then beside "live at end" (the trace's end, after
# finalization freed most of it), as leaks does.
test_expect_success 'stats: what each kind held at the end of the Python main module' '
	gen pm <<-\EOF &&
	header pid=7 state=exited exit=0 start=1000 end=5000 cmd="python3 app.py"
	thread 1
	stack ts=1000 id=1 native=0x1000
	alloc ts=1100 func=malloc kind=heap addr=0x10 size=100 stack=1
	alloc ts=1200 func=malloc kind=heap addr=0x20 size=200 stack=1
	alloc ts=1300 func=mmap kind=mmap addr=0x100000 size=4096 stack=1
	mark ts=2000 serial=2 label="__main__ end" flags=main-end
	free ts=3000 func=free kind=heap addr=0x20
	munmap ts=3100 addr=0x100000 len=4096
	EOF
	memprov stats pm.trace >pm.txt &&
	grep -x "  at the end of the Python main module, 1.0 µs (what leaks and check judge): heap 300 B in 2 blocks; mmap 4.0 KiB (4,096 B) in 1 block" pm.txt &&
	grep "^  heap .*live at end 100 B in 1 block$" pm.txt &&
	memprov stats --json pm.trace >pm.json &&
	jget pm.json main_end.at_ns main_end.kinds.heap.live_bytes main_end.kinds.heap.live_blocks \
		main_end.kinds.mmap.live_bytes kinds.heap.live_bytes >out &&
	printf "1000\n300\n2\n4096\n100\n" >expect && test_cmp expect out &&
	memprov stats --json s.trace >s2.json &&
	jget s2.json main_end >out && echo null >expect && test_cmp expect out
'

test_done
