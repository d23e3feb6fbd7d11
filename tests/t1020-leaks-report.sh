#!/bin/sh
# t1020-leaks-report.sh - `memprov leaks`: the text report, sites with
# Python frames first and native frames up to the interpreter, --native,
# --python-only, the top 20 and --all, the JSON shape, and what the
# default suppressions hide (one line; --no-default-suppressions shows it).
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

# Two stacks that differ only inside libpython (one site by default), one
# with another Python line, one native-only.
test_expect_success 'text report: header, kinds, sites merged past the interpreter' '
	gen py <<-EOF &&
	header pid=99 state=running cmd="python3 app.py" start=1000
	thread 1
	module ts=1001 base=0x7e0000000000 lo=0x7e0000000000 hi=0x7e0000400000 path=/nonexistent/libpython3.11.so.1.0
	module ts=1001 base=0x7d0000000000 lo=0x7d0000000000 hi=0x7d0000100000 path=/nonexistent/_multiarray_umath.so
	pycode ts=1002 id=1 file=/app/app.py name=grow
	pycode ts=1002 id=2 file=/app/app.py name=<module>
	stack ts=1003 id=1 native=0x7d0000000010,0x7d0000000020,0x7e0000000100,0x7e0000000200 python=1:10,2:30
	stack ts=1003 id=2 native=0x7d0000000010,0x7d0000000020,0x7e0000000300 python=1:10,2:30
	stack ts=1003 id=3 native=0x7e0000000400 python=1:11,2:30
	stack ts=1003 id=4 native=0x7d0000000050
	alloc ts=1010 addr=0x1 size=1000 stack=1
	alloc ts=1011 addr=0x2 size=1000 stack=2
	alloc ts=1012 addr=0x3 size=64 stack=3
	alloc ts=1013 func=calloc addr=0x4 size=16 stack=4
	EOF
	memprov leaks --no-default-suppressions py.trace >out &&
	cat >expect <<-EOF &&
	trace: py.trace
	pid: 99, command: python3 app.py
	ended: killed or still running: live at point of death
	at: end of the trace, 13 ns after start

	live memory by kind:
	  heap                4 blocks  2.0 KiB (2,080 B)

	reachability at exit: not computed: no scan: the process did not exit normally (killed, or still running)

	3 sites of the program'"'"'s own:
	  #1 heap malloc: 2 blocks, 2.0 KiB (2,000 B)
	      grow /app/app.py:10
	      <module> /app/app.py:30
	      _multiarray_umath.so+0x10
	      _multiarray_umath.so+0x20
	  #2 heap malloc: 1 block, 64 B
	      grow /app/app.py:11
	      <module> /app/app.py:30
	  #3 heap calloc: 1 block, 16 B
	      _multiarray_umath.so+0x50
	EOF
	test_cmp expect out
'

# numpy'"'"'s small blocks (average 1 KiB at most) asked by _multiarray_umath
# are its caches: a default rule hides them, and the report says so.
test_expect_success 'the default suppressions hide numpy'"'"'s small blocks, in one line' '
	memprov leaks py.trace >out &&
	grep -Fx "kept until exit on purpose (default suppressions): 3 blocks, 2.0 KiB \
— \`--no-default-suppressions\` shows them" out &&
	grep -Fx "1 site of the program'"'"'s own:" out &&
	grep -Fx "  #1 heap malloc: 1 block, 64 B" out &&
	memprov leaks --json py.trace >d.json &&
	jget d.json "=len(j[\"sites\"])" set_apart.suppressed.blocks set_apart.suppressed.bytes \
		set_apart.suppressed.rules.0.pattern >out &&
	printf "1\n3\n2016\n_multiarray_umath\n" >expect && test_cmp expect out &&
	memprov leaks --all py.trace >all &&
	grep -Fx "kept until exit on purpose (default suppressions), 2 sites:" all
'

# numpy's cache keeps at most 7 freed blocks of each size: a line with 8
# blocks of one size keeps arrays (the rule once hid any number of them),
# one with 7 of a size and many sizes may be the cache.
test_expect_success 'numpy'"'"'s rule hides at most 7 blocks of one size at a line' '
	{
		echo "header pid=99 state=running cmd=\"python3 app.py\" start=1000" &&
		echo "thread 1" &&
		echo "module ts=1001 base=0x7e0000000000 lo=0x7e0000000000 hi=0x7e0000400000 path=/nonexistent/libpython3.11.so.1.0" &&
		echo "module ts=1001 base=0x7d0000000000 lo=0x7d0000000000 hi=0x7d0000100000 path=/nonexistent/_multiarray_umath.so" &&
		echo "pycode ts=1002 id=1 file=/app/app.py name=keep" &&
		echo "pycode ts=1002 id=2 file=/app/app.py name=temps" &&
		echo "stack ts=1003 id=1 native=0x7d0000000010,0x7e0000000100 python=1:5" &&
		echo "stack ts=1003 id=2 native=0x7d0000000010,0x7e0000000100 python=2:9" &&
		i=1 && while [ $i -le 8 ]; do
			echo "alloc ts=$((2000 + i)) addr=$((4096 * i)) size=800 stack=1"
			i=$((i + 1))
		done &&
		i=1 && while [ $i -le 42 ]; do
			echo "alloc ts=$((3000 + i)) addr=$((1048576 + 4096 * i)) size=$((100 + 8 * (i % 6))) stack=2"
			i=$((i + 1))
		done
	} >few.txt &&
	gen few <few.txt &&
	memprov leaks --json few.trace >few.json &&
	jget few.json "=len(j[\"sites\"])" sites.0.blocks sites.0.bytes sites.0.python.0.function \
		set_apart.suppressed.blocks >out &&
	printf "1\n8\n6400\nkeep\n42\n" >expect && test_cmp expect out &&
	sed "/size=800 stack=1/{/ts=2008/d}" few.txt >seven.txt &&
	gen seven <seven.txt &&
	memprov leaks --json seven.trace >seven.json &&
	jget seven.json "=len(j[\"sites\"])" set_apart.suppressed.blocks >out &&
	printf "0\n49\n" >expect && test_cmp expect out
'

# Growth: points keep no sizes; a line whose blocks numpy's cache keeps
# (many sizes, at most 7 of each at the end) is not growth, as leaks says;
# the same line keeping 8 blocks of one size a step is.
test_expect_success 'numpy'"'"'s rule in growth: sizes as the end of the run has them' '
	for same in 0 1; do
		{
			echo "header pid=99 state=exited exit=0 cmd=\"python3 app.py\" start=1000" &&
			echo "thread 1" &&
			echo "module ts=1001 base=0x7e0000000000 lo=0x7e0000000000 hi=0x7e0000400000 path=/nonexistent/libpython3.11.so.1.0" &&
			echo "module ts=1001 base=0x7d0000000000 lo=0x7d0000000000 hi=0x7d0000100000 path=/nonexistent/_multiarray_umath.so" &&
			echo "pycode ts=1002 id=1 file=/app/app.py name=step" &&
			echo "stack ts=1003 id=1 native=0x7d0000000010,0x7e0000000100 python=1:5" &&
			m=0 && while [ $m -lt 10 ]; do
				j=0 && while [ $j -lt 8 ]; do
					echo "alloc ts=$((2000 + 100 * m + j)) addr=$((4096 * (8 * m + j + 1))) size=$((same ? 400 : 100 + 8 * (8 * m + j))) stack=1"
					j=$((j + 1))
				done
				echo "mark ts=$((2000 + 100 * m + 50)) serial=$((m + 1)) label=step"
				m=$((m + 1))
			done &&
			echo "mark ts=3500 serial=11 label=\"__main__ end\" flags=main-end"
		} >grow$same.txt &&
		gen grow$same <grow$same.txt || return 1
	done &&
	memprov check --max-growth 100 grow0.trace >g0.out &&
	grep "1 growing site by growth:_multiarray_umath (default)" g0.out &&
	memprov leaks grow0.trace >l0.out && grep -x "no site of the program'"'"'s own" l0.out &&
	! memprov check --max-growth 100 grow1.trace >g1.out &&
	grep "grows 3.1 KiB per mark" g1.out
'

test_expect_success '--native keeps interpreter frames: the stacks stay apart' '
	memprov leaks --native --json --no-default-suppressions py.trace >n.json &&
	jget n.json "=len(j[\"sites\"])" sites.0.frames.2.function sites.0.frames.2.module \
		sites.0.frames.2.address sites.0.frames.2.file sites.0.frames.2.line >out &&
	cat >expect <<-EOF &&
	4
	libpython3.11.so.1.0+0x100
	/nonexistent/libpython3.11.so.1.0
	0x7e0000000100
	null
	null
	EOF
	test_cmp expect out
'

test_expect_success '--python-only shows Python frames only' '
	memprov leaks --python-only --no-default-suppressions py.trace >out &&
	! grep "_multiarray" out &&
	grep -Fx "  #1 heap malloc: 2 blocks, 2.0 KiB (2,000 B)" out &&
	grep -F "(no Python frames)" out
'

test_expect_success 'JSON shape: header fields, totals of every kind, sites' '
	memprov leaks --json --no-default-suppressions py.trace >l.json &&
	jget l.json trace pid command state exit_status at at_ns damaged \
		totals.heap.blocks totals.heap.bytes totals.device.bytes totals.registered.blocks \
		sites.0.kind sites.0.func sites.0.blocks sites.0.bytes \
		sites.0.python.0.function sites.0.python.0.file sites.0.python.0.line \
		sites.0.frames.0.function "=len(j[\"sites\"][0][\"frames\"])" sites.2.func >out &&
	cat >expect <<-EOF &&
	py.trace
	99
	python3 app.py
	running
	null
	end-of-trace
	13
	false
	4
	2080
	0
	0
	heap
	malloc
	2
	2000
	grow
	/app/app.py
	10
	_multiarray_umath.so+0x10
	2
	calloc
	EOF
	test_cmp expect out
'

test_expect_success 'the top 20 sites unless --all; JSON always lists all of the program'"'"'s' '
	{
		echo "thread 1"
		i=1
		while [ $i -le 25 ]; do
			echo "stack ts=$((1000 + i)) id=$i native=$((4096 * i))"
			echo "alloc ts=$((2000 + i)) addr=$i size=$((100 * i)) stack=$i"
			i=$((i + 1))
		done
	} >many.txt &&
	gen many <many.txt &&
	memprov leaks many.trace >out &&
	grep -F "top 20 of 25 sites of the program'"'"'s own (--all shows every site):" out &&
	test $(grep -c "^  #" out) = 20 &&
	grep -Fx "  #1 heap malloc: 1 block, 2.4 KiB (2,500 B)" out &&
	memprov leaks --all many.trace >all &&
	test $(grep -c "^  #" all) = 25 &&
	grep -Fx "  #25 heap malloc: 1 block, 100 B" all &&
	memprov leaks --json many.trace >m.json &&
	jget m.json "=len(j[\"sites\"])" sites.24.bytes >out &&
	printf "25\n100\n" >expect && test_cmp expect out
'

test_expect_success 'how the process ended: exited, exec, stopped' '
	gen ex <<-EOF &&
	header state=exited exit=3
	thread 1
	alloc ts=1010 addr=0x1 size=5
	EOF
	memprov leaks ex.trace >out &&
	grep -Fx "ended: exited with status 3" out && grep -Fx "at: exit, 10 ns after start" out &&
	gen exu <<-EOF &&
	header state=exited exit=-2147483648
	EOF
	memprov leaks --json exu.trace >j && jget j state exit_status at >out &&
	printf "exited\nnull\nexit\n" >expect && test_cmp expect out &&
	gen exe <<-EOF &&
	header state=exec
	EOF
	memprov leaks exe.trace | grep -Fx "ended: replaced by exec (a new trace continues)" &&
	gen stp <<-EOF &&
	header state=stopped stop=1 stop_msg="no space left on device"
	EOF
	memprov leaks stp.trace | grep -Fx "ended: tracing stopped: no space left on device" &&
	memprov leaks --json stp.trace >j && jget j state at >out &&
	printf "stopped\nend-of-trace\n" >expect && test_cmp expect out
'

test_expect_success 'usage errors exit 2 with the usage' '
	st=0 && memprov leaks --bogus x.trace 2>err || st=$? &&
	test $st = 2 &&
	head -n 1 err >first && echo "memprov: error: unknown option '\''--bogus'\''" >expect &&
	test_cmp expect first &&
	grep -F "usage: memprov leaks" err &&
	st=0 && memprov leaks 2>err || st=$? && test $st = 2 &&
	grep -F "no trace given" err
'

test_expect_success 'JSON strings: quotes escaped, UTF-8 kept, other bytes as U+FFFD' '
	printf "thread 1\npycode ts=5 id=1 file=\"/a \\\"q\\\" \303\251 \377.py\" name=f\nstack ts=6 id=1 python=1:2\nalloc ts=7 addr=0x1 size=1 stack=1\n" >esc.txt &&
	gen esc <esc.txt &&
	memprov leaks --json esc.trace >e.json &&
	cat >chk.py <<-\EOF &&
	import json
	s = json.load(open("e.json"))["sites"][0]["python"][0]["file"]
	assert s == "/a \"q\" \u00e9 \ufffd.py", ascii(s)
	EOF
	/usr/bin/python3 chk.py
'

test_done
