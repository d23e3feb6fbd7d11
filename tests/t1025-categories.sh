#!/bin/sh
# t1025-categories.sh - what the reports set apart from the program's own
# memory, on synthetic traces: interpreter and module state (an import, the
# interpreter with no Python frame, a module's top-level code, comprehension
# included, one block library code made for itself, CPython 3.10's free
# lists), pymalloc arenas (1 MiB mapped by the interpreter, stack cut at
# it), the loader's DTV (a FIRST rule) and the environment; one summary
# line each in leaks and peak, never a growth suspect, shown by --all.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

# modules, code objects and stacks shared by the traces below
prelude() {
	cat <<-EOF
	thread 1
	module ts=1001 base=0x7e0000000000 lo=0x7e0000000000 hi=0x7e0000400000 path=/nonexistent/libpython3.$1.so.1.0
	module ts=1001 base=0x7c0000000000 lo=0x7c0000000000 hi=0x7c0000100000 path=/nonexistent/ld-linux-x86-64.so.2
	module ts=1001 base=0x7b0000000000 lo=0x7b0000000000 hi=0x7b0000100000 path=/nonexistent/libc.so.6
	pycode ts=1002 id=1 file=/app/main.py name=<module>
	pycode ts=1002 id=2 file=/app/main.py name=work
	pycode ts=1002 id=3 file="<frozen importlib._bootstrap>" name=_find_and_load
	pycode ts=1002 id=4 file=/app/helper.py name=<module>
	pycode ts=1002 id=5 file=/usr/lib/python3.$1/json/decoder.py name=JSONDecoder.raw_decode
	pycode ts=1002 id=6 file=/usr/lib/python3.$1/threading.py name=Thread.start
	pycode ts=1002 id=7 file=/app/main.py name=<listcomp>
	stack ts=1003 id=1 python=4:3,3:1178,1:1
	stack ts=1003 id=2 native=0x7e0000000100,0x7e0000000200
	stack ts=1003 id=3 python=2:10,1:20
	stack ts=1003 id=4 python=1:5
	stack ts=1003 id=5 python=2:11,1:20
	stack ts=1003 id=6 python=5:88,2:12,1:20
	stack ts=1003 id=7 native=0x7c0000000010,0x7b0000000020 python=6:957,2:13,1:20
	stack ts=1003 id=8 python=7:30,1:30
	stack ts=1003 id=9 python=5:88,2:14,1:20
	EOF
}

test_expect_success 'leaks: the program'"'"'s sites listed, the rest one line each' '
	{
		echo "header pid=7 state=exited exit=0 cmd=\"python3 main.py\" start=1000"
		prelude 11
		cat <<-EOF
		alloc ts=1010 addr=0x1000 size=5000 stack=1
		alloc ts=1011 addr=0x2000 size=7000 stack=2
		alloc ts=1012 addr=0x3000 size=100000 stack=3
		alloc ts=1013 addr=0x4000 size=3000 stack=4
		alloc ts=1014 func=mmap kind=mmap addr=0x100000 size=1048576 stack=5
		alloc ts=1015 func=mmap kind=mmap addr=0x300000 size=1048576 stack=5
		alloc ts=1016 addr=0x5000 size=32768 stack=6
		alloc ts=1017 func=calloc addr=0x6000 size=304 stack=7
		alloc ts=1018 addr=0x7000 size=2000 stack=8
		alloc ts=1019 addr=0x8000 size=20000 stack=9
		alloc ts=1020 addr=0x9000 size=20000 stack=9
		alloc ts=1021 addr=0xa000 size=20000 stack=9
		mark ts=1030 serial=1 label="__main__ end" flags=main-end
		free ts=1040 addr=0x3000
		EOF
	} | "$TRACEGEN" -o cat.trace &&
	memprov leaks cat.trace >out &&
	sed -n "/^interpreter/,\$p" out >tail &&
	cat >expect <<-EOF &&
	interpreter and module state: 5 blocks, 48.6 KiB — \`--all\` shows them
	Python arenas (pymalloc'"'"'s small objects, of every line): 2 arenas, 2.0 MiB — \`--all\` shows them
	kept until exit on purpose (default suppressions): 1 block, 304 B — \`--no-default-suppressions\` shows them
	2 sites of the program'"'"'s own:
	  #1 heap malloc: 1 block, 97.7 KiB (100,000 B)
	      work /app/main.py:10
	      <module> /app/main.py:20
	  #2 heap malloc: 3 blocks, 58.6 KiB (60,000 B)
	      JSONDecoder.raw_decode /usr/lib/python3.11/json/decoder.py:88
	      work /app/main.py:14
	      <module> /app/main.py:20
	EOF
	test_cmp expect tail &&
	memprov leaks --json cat.trace >c.json &&
	jget c.json set_apart.state.import.bytes set_apart.state.interpreter.bytes \
		set_apart.state.top_level.bytes set_apart.state.library.bytes set_apart.arenas.blocks \
		set_apart.suppressed.rules.0.pattern "=len(j[\"sites\"])" >out &&
	printf "5000\n7000\n5000\n32768\n2\nld-linux\n2\n" >expect && test_cmp expect out &&
	memprov growth --json cat.trace >g.json &&
	jget g.json set_apart.suppressed.blocks set_apart.suppressed.rules.0.pattern \
		set_apart.suppressed.rules.0.blocks set_apart.suppressed.rules.0.bytes >out &&
	printf "1\nld-linux\n1\n304\n" >expect && test_cmp expect out
'

test_expect_success '--all lists them by category; --no-default-suppressions counts the DTV' '
	memprov leaks --all cat.trace >all &&
	grep -Fx "interpreter and module state, 5 sites:" all &&
	grep -Fx "Python arenas (pymalloc: small objects of every line, charged to the one that needed a new arena), 1 site:" all &&
	grep -Fx "kept until exit on purpose (default suppressions), 1 site:" all &&
	memprov leaks --json --all cat.trace >a.json &&
	jget a.json "=sorted(set(s[\"category\"] for s in j[\"sites\"]))" "=len(j[\"sites\"])" >out &&
	printf "%s\n9\n" "[\"arena\", \"program\", \"state\", \"suppressed\"]" >expect && test_cmp expect out &&
	memprov leaks --no-default-suppressions cat.trace >nd &&
	grep -Fx "3 sites of the program'"'"'s own:" nd &&
	grep -Fx "  #3 heap calloc: 1 block, 304 B" nd
'

test_expect_success 'the gate: the program'"'"'s memory only; --all counts the state too' '
	test_status 1 memprov check cat.trace >out &&
	grep -Fx "  live at the end of the main module: 156.2 KiB (160,000 B) in 4 blocks (budget 0 B, all kinds): over budget" out &&
	grep -Fx "    304 B in 1 block: leak:ld-linux (default: dynamic loader tables (link maps, dlopen, TLS, a thread'"'"'s DTV))" out &&
	memprov check --max-leak 160000 cat.trace >/dev/null &&
	test_status 1 memprov check --all --max-leak 160000 cat.trace >/dev/null
'

# Native frames are recorded only up to the interpreter under Python code:
# a stack with Python frames and no native frame outside the allocator is
# the interpreter's asking.
test_expect_success 'leak:<python-interpreter> matches stacks cut at the interpreter' '
	printf "leak:<python-interpreter>\n" >pi.supp &&
	memprov check --suppressions pi.supp cat.trace >out &&
	grep -Fx "    156.2 KiB (160,000 B) in 4 blocks: leak:<python-interpreter> (pi.supp:1)" out
'

test_expect_success 'peak: start-up, imports and arenas in one line each, top level kept' '
	memprov peak cat.trace >out &&
	grep -F "interpreter and module state: 2 blocks, 11.7 KiB" out &&
	grep -F "Python arenas (pymalloc" out &&
	grep -Fx "      <module> /app/main.py:5" out
'

# CPython 3.10 keeps a freed frame per function and deque blocks on free
# lists: a few small blocks under a line are set apart; more are not.
test_expect_success 'CPython 3.10: a few small blocks are its free lists' '
	{
		echo "header pid=7 state=exited exit=0 start=1000"
		prelude 10
		echo "alloc ts=1010 addr=0x1000 size=528 stack=3"
		echo "alloc ts=1011 addr=0x2000 size=552 stack=3"
		i=0
		while [ $i -lt 17 ]; do
			echo "alloc ts=$((1020 + i)) addr=$((0x10000 + 4096 * i)) size=600 stack=5"
			i=$((i + 1))
		done
		echo "mark ts=1100 serial=1 label=end flags=main-end"
	} | "$TRACEGEN" -o f310.trace &&
	memprov leaks f310.trace >out &&
	grep -Fx "interpreter and module state: 2 blocks, 1.1 KiB — \`--all\` shows them" out &&
	grep -Fx "  #1 heap malloc: 17 blocks, 10.0 KiB (10,200 B)" out &&
	sed "s/libpython3.10/libpython3.11/" f310.trace >f311.trace &&
	memprov leaks f311.trace >out &&
	grep -Fx "2 sites of the program'"'"'s own:" out
'

test_expect_success 'growth: state is never a suspect; --all shows it apart' '
	{
		echo "header pid=7 state=exited exit=0 start=1000"
		prelude 11
		i=0
		while [ $i -lt 10 ]; do
			echo "alloc ts=$((2000 + 100 * i)) addr=$((0x10000 + 4096 * i)) size=4000 stack=1"
			echo "alloc ts=$((2001 + 100 * i)) addr=$((0x80000 + 4096 * i)) size=2000 stack=3"
			echo "mark ts=$((2050 + 100 * i)) serial=$((i + 1)) label=step"
			i=$((i + 1))
		done
	} | "$TRACEGEN" -o gs.trace &&
	memprov growth gs.trace >out &&
	grep -Fx "interpreter and module state: 10 blocks, 39.1 KiB — \`--all\` shows them" out &&
	grep -F "1 growing site" out &&
	grep -Fx "      work /app/main.py:10" out &&
	! grep -F "helper.py" out &&
	memprov growth --all gs.trace >all &&
	grep -Fx "interpreter and module state (never a suspect):" all &&
	grep -F "      <module> /app/helper.py:3" all
'

# Library state asked for by library native code: a system library or an
# installed extension module under library Python code (matplotlib's
# fonts, libgomp's thread pool, a pandas cache of numpy arrays) is set
# apart, one block; an extension built in the program's own tree is the
# program's, and so are 8 blocks at one line.
test_expect_success 'library state asked for by a system library or an installed extension, not the program'"'"'s own' '
	{
		echo "header pid=7 state=exited exit=0 cmd=\"python3 main.py\" start=1000"
		prelude 11
		cat <<-EOF
		module ts=1001 base=0x7a0000000000 lo=0x7a0000000000 hi=0x7a0000100000 path=/usr/lib/x86_64-linux-gnu/libnotthere.so.1
		module ts=1001 base=0x790000000000 lo=0x790000000000 hi=0x790000100000 path=/home/u/app/build/_own.cpython-311-x86_64-linux-gnu.so
		module ts=1001 base=0x780000000000 lo=0x780000000000 hi=0x780000100000 path=/usr/lib/python3/dist-packages/pkg/_native.cpython-311-x86_64-linux-gnu.so
		pycode ts=1002 id=20 file=/usr/lib/python3/dist-packages/pkg/cache.py name=get_font
		stack ts=1003 id=20 native=0x7a0000000010 python=20:5,2:10,1:20
		stack ts=1003 id=21 native=0x790000000010 python=20:5,2:11,1:20
		stack ts=1003 id=22 native=0x780000000010 python=20:5,2:12,1:20
		stack ts=1003 id=23 native=0x7a0000000010 python=20:6,2:13,1:20
		alloc ts=1010 addr=0x1000 size=30000 stack=20
		alloc ts=1011 addr=0x10000 size=20000 stack=21
		alloc ts=1012 addr=0x20000 size=10000 stack=22
		EOF
		i=0
		while [ $i -lt 8 ]; do
			echo "alloc ts=$((1020 + i)) addr=$((0x100000 + 4096 * i)) size=2000 stack=23"
			i=$((i + 1))
		done
		echo "mark ts=1030 serial=1 label=\"__main__ end\" flags=main-end"
	} | "$TRACEGEN" -o libasked.trace &&
	memprov leaks --json libasked.trace >la.json &&
	jget la.json set_apart.state.library.bytes "=len(j[\"sites\"])" sites.0.bytes sites.0.python.0.line \
		sites.1.bytes sites.1.python.0.line >out &&
	printf "40000\n2\n20000\n5\n16000\n6\n" >expect && test_cmp expect out
'

# matplotlib's fonts (FreeType under its ft2font module, under
# matplotlib's code: 1.4 MiB in 10,889 blocks after one PDF), scipy's
# HiGHS executor (512 KiB made on the first linprog) and scipy.fft's plans
# (446 KiB after 100 lengths) are kept by default rules, whatever line drew text or solved; fonts the program's own line
# made with ft2font, and a file of its own named test_ft2font.py, are the
# program's (the review: 22.7 MiB of kept fonts passed).
test_expect_success 'default rules: matplotlib'"'"'s fonts (ft2font) and scipy'"'"'s HiGHS executor' '
	{
		echo "header pid=7 state=exited exit=0 cmd=\"python3 main.py\" start=1000"
		prelude 11
		cat <<-EOF
		module ts=1001 base=0x7a0000000000 lo=0x7a0000000000 hi=0x7a0000100000 path=/usr/lib/x86_64-linux-gnu/libfreetype.so.6
		module ts=1001 base=0x790000000000 lo=0x790000000000 hi=0x790000100000 path=/usr/lib/python3/dist-packages/matplotlib/ft2font.cpython-311-x86_64-linux-gnu.so
		module ts=1001 base=0x780000000000 lo=0x780000000000 hi=0x780000100000 path=/usr/lib/python3/dist-packages/scipy/optimize/_highs/_highs_wrapper.cpython-311-x86_64-linux-gnu.so
		module ts=1001 base=0x770000000000 lo=0x770000000000 hi=0x770000100000 path=/usr/lib/python3/dist-packages/scipy/fft/_pocketfft/pypocketfft.cpython-311-x86_64-linux-gnu.so
		pycode ts=1002 id=31 file=/usr/lib/python3/dist-packages/matplotlib/font_manager.py name=_get_font
		pycode ts=1002 id=32 file=/app/test_ft2font.py name=test_keep
		stack ts=1003 id=30 native=0x7a0000000010,0x790000000010 python=31:1550,2:15,1:20
		stack ts=1003 id=31 native=0x780000000010 python=2:16,1:20
		stack ts=1003 id=32 python=2:17,1:20
		stack ts=1003 id=33 native=0x7a0000000010,0x790000000010 python=2:18,1:20
		stack ts=1003 id=34 python=32:5,1:21
		stack ts=1003 id=35 native=0x770000000010 python=2:19,1:20
		alloc ts=1015 addr=0x20000 size=16000 stack=35
		alloc ts=1016 addr=0x30000 size=24000 stack=35
		alloc ts=1017 addr=0x40000 size=32000 stack=35
		alloc ts=1010 addr=0x100000 size=524608 stack=31
		alloc ts=1011 addr=0x1000 size=777 stack=32
		alloc ts=1012 addr=0x2000 size=600 stack=33
		alloc ts=1013 addr=0x3000 size=600 stack=33
		alloc ts=1014 addr=0x10000 size=5000 stack=34
		EOF
		i=0
		while [ $i -lt 50 ]; do
			echo "alloc ts=$((1020 + i)) addr=$((0x200000 + 4096 * i)) size=140 stack=30"
			i=$((i + 1))
		done
		echo "mark ts=1080 serial=1 label=\"__main__ end\" flags=main-end"
	} | "$TRACEGEN" -o mplhighs.trace &&
	memprov leaks --json mplhighs.trace >mh.json &&
	jget mh.json "=len(j[\"sites\"])" sites.0.bytes set_apart.suppressed.blocks \
		"=sorted(r[\"pattern\"] for r in j[\"set_apart\"][\"suppressed\"][\"rules\"] if r[\"blocks\"])" >out &&
	printf "3\n5000\n54\n[\"_highs_wrapper\", \"ft2font\", \"pypocketfft\"]\n" >expect && test_cmp expect out
'

test_done
