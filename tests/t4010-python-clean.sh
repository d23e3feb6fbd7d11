#!/bin/sh
# t4010: Python programs run under memprov exactly as without it: same
# stdout, stderr and exit status, no warning (`python3 -c pass`, numpy
# import, a non-zero exit, an uncaught exception). MEMPROV_PYTHON=0 turns
# Python provenance off: no code records, no Python frames.
. "$(dirname "$0")/test-lib.sh"

PYENV=/root/.pyenv/versions

# same PYTHON ARGS...: bare and traced runs must print and exit alike
same() {
	set +e
	timeout 60 "$@" >bare.out 2>bare.err
	echo $? >bare.rc
	rm -f t.trace
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/t.trace" \
		"$@" >traced.out 2>traced.err
	echo $? >traced.rc
	set -e
	test_cmp bare.out traced.out &&
	test_cmp bare.err traced.err &&
	test_cmp bare.rc traced.rc &&
	test -s t.trace
}

for py in python3 /usr/bin/python3 $PYENV/3.11.7/bin/python3 $PYENV/3.12.1/bin/python3 \
	  $PYENV/3.13.0/bin/python3; do
	command -v "$py" >/dev/null || continue
	export py
	test_expect_success "$py -c pass: same output, status 0" '
		same "$py" -c pass && echo 0 >expect && test_cmp expect traced.rc
	'
	test_expect_success "$py: exit status 3 and an uncaught exception unchanged" '
		same "$py" -c "import sys; print(\"hi\"); sys.exit(3)" &&
		echo 3 >expect && test_cmp expect traced.rc &&
		same "$py" -c "def f(): raise KeyError(1)
f()" && echo 1 >expect && test_cmp expect traced.rc
	'
done

if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	test_expect_success '/usr/bin/python3 -c "import numpy": same output, no warning' '
		same /usr/bin/python3 -c "import numpy; print(numpy.ones(3).sum())" &&
		echo 3.0 >expect && test_cmp expect traced.out
	'
fi

test_expect_success 'memprov run: same status, Python frames recorded' '
	set +e
	memprov run -o "$TRASH/r.trace" -- /usr/bin/python3 -c "import sys; x = bytearray(10**6); sys.exit(4)" >out 2>err
	echo $? >rc
	set -e
	echo 4 >expect && test_cmp expect rc &&
	memprov dump r.trace >dump &&
	grep -q " pycode " dump &&
	grep -q "python=[1-9]" dump
'

test_expect_success 'MEMPROV_PYTHON=0: no code records, no Python frames, same run' '
	MEMPROV_PYTHON=0 && export MEMPROV_PYTHON &&
	same /usr/bin/python3 -c "x = bytearray(10**6); print(len(x))" &&
	memprov dump t.trace >dump &&
	grep -c " alloc " dump >/dev/null &&
	! grep -q " pycode " dump &&
	! grep -q "python=[1-9]" dump &&
	! grep -q " mark " dump
'

test_expect_success 'a child forked in a function: CPython'"'"'s remade locks are its state, the gate passes; a leak there still fails' '
	# PyOS_AfterFork_Child remakes 6 locks (32 B each in 3.11) under the
	# line that called os.fork: every child forked in a function (every
	# multiprocessing worker) failed check on them (a helper'"'"'s sweep)
	cat >fk.py <<-\EOF &&
	import os, sys
	keep = []
	def main(leak):
	    pid = os.fork()
	    if pid == 0:
	        for i in range(leak):
	            keep.append(bytearray(10000))
	        os._exit(0)
	    os.waitpid(pid, 0)
	    print("ok")
	main(int(sys.argv[1]))
	EOF
	timeout 60 "$MEMPROV_CLI" run -d fk0 -- /usr/bin/python3 fk.py 0 >fk0.out 2>/dev/null &&
	echo ok >expect && test_cmp expect fk0.out &&
	test "$(ls fk0/*.trace | wc -l)" = 2 &&
	"$MEMPROV_CLI" check fk0 >fk0.check &&
	grep -x "memprov check: 2 traces, 0 over budget, 0 unreadable" fk0.check &&
	for t in fk0/*.trace; do "$MEMPROV_CLI" dump "$t"; done >fk0.dump &&
	test "$(grep -c "alloc .*flags=interp" fk0.dump)" -ge 1 &&
	timeout 60 "$MEMPROV_CLI" run -d fk1 -- /usr/bin/python3 fk.py 10 >/dev/null 2>&1 &&
	! "$MEMPROV_CLI" check fk1 >fk1.check &&
	grep "1 over budget" fk1.check &&
	grep "#1 heap malloc: 97.7 KiB in 10 blocks live at exit in main at .*fk.py:7$" fk1.check &&
	# forks from 8 threads: threading remakes a lock for each other Thread in
	# each child (its own after-fork hook, after memprov'"'"'s): 224 B in 7 blocks
	cat >fkt.py <<-\EOF &&
	import os, threading
	def w(i):
	    pid = os.fork()
	    if pid == 0:
	        os._exit(i)
	    os.waitpid(pid, 0)
	ts = [threading.Thread(target=w, args=(i,)) for i in range(8)]
	[t.start() for t in ts]
	[t.join() for t in ts]
	EOF
	timeout 60 "$MEMPROV_CLI" run -d fkt -- /usr/bin/python3 fkt.py >/dev/null 2>&1 &&
	"$MEMPROV_CLI" check fkt >fkt.check &&
	grep -x "memprov check: 9 traces, 0 over budget, 0 unreadable" fkt.check
'

test_expect_success 'cyclic garbage and an uncaught exception'"'"'s frames are not live at the end of the main module; finalizers print as bare' '
	# 1,000 objects that point at themselves, not yet collected (1.4 MiB),
	# and the locals of frames a traceback kept, failed the gate
	cat >cyc.py <<-\EOF &&
	import atexit, sys
	ending = False
	class Node:
	    def __init__(self):
	        self.buf = bytearray(4000)
	        self.me = self
	    def __del__(self):
	        # once, from the collection at the end: memprov'"'"'s own few Python
	        # objects move the interpreter'"'"'s automatic collections a little
	        global ending
	        if ending:
	            ending = False
	            sys.stderr.write("del\n")
	keep = []
	def work(n, kept):
	    for i in range(n):
	        Node()
	    for i in range(kept):
	        keep.append(Node())
	work(1000, int(sys.argv[1]))
	atexit.register(print, "atexit")
	print("main")
	ending = True
	if len(sys.argv) > 2:
	    big = [bytearray(100000) for _ in range(10)]
	    raise ValueError("x")
	EOF
	/usr/bin/python3 cyc.py 0 >bare.txt 2>&1 &&
	timeout 60 "$MEMPROV_CLI" run -d cy0 -- /usr/bin/python3 cyc.py 0 >traced.txt 2>&1 &&
	grep -v "^memprov: " traced.txt >traced2.txt && test_cmp bare.txt traced2.txt &&
	"$MEMPROV_CLI" check cy0 &&
	# a program that watches the collector sees what it sees bare (after a
	# collection of its own: a namespace package'"'"'s .pth file, such as
	# matplotlib'"'"'s, leaves garbage of the start-up, 52 objects)
	cat >gcw.py <<-\EOF &&
	import gc
	gc.collect()
	gc.callbacks.append(lambda ph, i: ph == "stop" and print("collected", i["collected"]))
	class C: pass
	def f():
	    c = C()
	    c.s = c
	f()
	EOF
	/usr/bin/python3 gcw.py >gcw-bare.txt 2>&1 &&
	timeout 60 "$MEMPROV_CLI" run -d gcw -- /usr/bin/python3 gcw.py >gcw.txt 2>/dev/null &&
	test_cmp gcw-bare.txt gcw.txt && grep -x "collected 1" gcw.txt &&
	test_status 1 timeout 60 "$MEMPROV_CLI" run -d cyx -- /usr/bin/python3 cyc.py 0 raise >/dev/null 2>&1 &&
	"$MEMPROV_CLI" check cyx &&
	timeout 60 "$MEMPROV_CLI" run -d cy5 -- /usr/bin/python3 cyc.py 5 >/dev/null 2>&1 &&
	! "$MEMPROV_CLI" check cy5 >cy5.check &&
	grep "#1 heap malloc: 19.5 KiB in 5 blocks live at the end of the main module in Node.__init__ at .*cyc.py:5$" cy5.check &&
	# profile mode (--mark-on) marks the end in the same atexit callback:
	# it marked when the main module returned, garbage and all (clean
	# flask, pandas, matplotlib programs failed; the regression sweep)
	timeout 60 "$MEMPROV_CLI" run --mark-on __main__:work -d cyp -- /usr/bin/python3 cyc.py 0 >tracedp.txt 2>&1 &&
	grep -v "^memprov: " tracedp.txt >tracedp2.txt && test_cmp bare.txt tracedp2.txt &&
	"$MEMPROV_CLI" check cyp &&
	timeout 60 "$MEMPROV_CLI" run --mark-on __main__:work -d cyp5 -- /usr/bin/python3 cyc.py 5 >/dev/null 2>&1 &&
	! "$MEMPROV_CLI" check cyp5 >cyp5.check &&
	grep "#1 heap malloc: 19.5 KiB in 5 blocks live at the end of the main module in Node.__init__ at .*cyc.py:5$" cyp5.check
'

test_expect_success 'code a library compiled from a string (a namedtuple'"'"'s __new__) is the library'"'"'s, not the program'"'"'s' '
	# a library keeps one namedtuple it made on first use: its __new__ is
	# "<lambda> <string>:1", which counted as the program'"'"'s own line
	mkdir -p nt/site-packages &&
	cat >nt/site-packages/ntlib.py <<-\EOF &&
	import collections
	Row = collections.namedtuple("Row", ["f%d" % i for i in range(100)])
	_default = None
	def default_row():
	    global _default
	    if _default is None:
	        _default = Row(*range(100))
	    return _default
	EOF
	printf "import ntlib\ndef main():\n    print(len(ntlib.default_row()))\nmain()\n" >usent.py &&
	PYTHONPATH=$TRASH/nt/site-packages timeout 60 "$MEMPROV_CLI" run --check -o nt.trace -- \
		/usr/bin/python3 usent.py >nt.out 2>nt.err &&
	echo 100 >want && test_cmp want nt.out &&
	# the program'"'"'s own namedtuples kept in a global still fail, at its line
	printf "import collections\nR = collections.namedtuple(\"R\", [\"f%%d\" %% i for i in range(100)])\nkeep = []\ndef main():\n    for i in range(50):\n        keep.append(R(*range(100)))\nmain()\n" >own.py &&
	test_status 23 timeout 60 "$MEMPROV_CLI" run --check -o own.trace -- /usr/bin/python3 own.py >/dev/null 2>own.err &&
	grep "live at the end of the main module in <lambda> at <string>:1$" own.err &&
	# so does a leak in a function the program made with exec that only
	# threading calls (no frame of the program'"'"'s beyond the library'"'"'s)
	cat >thr.py <<-\EOF &&
	import threading
	keep = []
	exec("def work():\n    for i in range(50):\n        keep.append(bytearray(10000))\n")
	def main():
	    t = threading.Thread(target=work)
	    t.start(); t.join()
	main()
	EOF
	test_status 23 timeout 60 "$MEMPROV_CLI" run --check -o thr.trace -- /usr/bin/python3 thr.py >/dev/null 2>thr.err &&
	grep "#1 heap malloc: 488.3 KiB in 50 blocks live at the end of the main module in work at <string>:3$" thr.err
'

# A library that compiles its patterns on first use (a lexer's tables:
# pygments' PythonLexer made 8 blocks of 5 KiB under one stack at the
# program's line that made the lexer) keeps them: library state, whatever
# their count. Patterns the program compiles and keeps itself still fail.
test_expect_success 'patterns a library compiles on first use pass the gate; the program'"'"'s own kept patterns fail' '
	rm -rf rx && mkdir -p rx/site-packages &&
	cat >rx/site-packages/lexlib.py <<-\EOF &&
	import re
	PATTERNS = ["(py%d|[a-f]{2,9}x|q+w?e*)" % i * 30 for i in range(12)]
	_tables = {}
	def table(name):
	    if name not in _tables:
	        _tables[name] = [re.compile(p) for p in PATTERNS]
	    return _tables[name]
	EOF
	printf "import lexlib\ndef main():\n    print(len(lexlib.table(\"py\")))\nmain()\n" >rxlib.py &&
	PYTHONPATH=$TRASH/rx/site-packages timeout 60 "$MEMPROV_CLI" run -d rx/lib --check -- \
		/usr/bin/python3 rxlib.py >rx.out 2>rx.err &&
	echo 12 >want && test_cmp want rx.out &&
	"$MEMPROV_CLI" leaks --json rx/lib/*.trace >rx.json &&
	test $(/usr/bin/python3 "$TOP/tests/progs/json_get.py" rx.json set_apart.state.library.blocks) -ge 12 &&
	cat >rxown.py <<-\EOF &&
	import re
	PATTERNS = ["(py%d|[a-f]{2,9}x|q+w?e*)" % i * 30 for i in range(12)]
	kept = []
	def main():
	    for p in PATTERNS:
	        kept.append(re.compile(p))
	main()
	EOF
	test_status 23 timeout 60 "$MEMPROV_CLI" run -d rx/own --check -- /usr/bin/python3 rxown.py >/dev/null 2>rxown.err &&
	grep -A1 "#1 heap malloc: [0-9.]* KiB in 12 blocks live at the end of the main module in main at .*rxown.py:6$" rxown.err >rxown.site &&
	grep "^      compile .*/re/_compiler.py:[0-9]*$" rxown.site &&
	test "$(grep -c "^    #" rxown.err)" = 1
'

# Library state a clean program grows: asyncio's set of all tasks after
# 20,000 tasks at once (a WeakSet's table, 2 MiB: never the program's),
# fnmatch's cache of 5,000 patterns (144 KiB: one block of library state
# is at most 256 KiB; a 673 KiB string kept fails, t4000).
cat >"$TRASH/grown.py" <<\EOF
import asyncio, fnmatch
async def one(i):
    await asyncio.sleep(0)
    return i
async def many():
    return sum(await asyncio.gather(*(one(i) for i in range(20000))))
def main():
    print(asyncio.run(many()))
    print(sum(fnmatch.fnmatch("x%d" % i, "x%d*" % i) for i in range(5000)))
main()
EOF
test_expect_success 'asyncio with 20,000 tasks at once and fnmatch with 5,000 patterns: the gate passes' '
	rm -rf g &&
	"$MEMPROV_CLI" run -d g -- /usr/bin/python3 grown.py >g.out 2>/dev/null &&
	printf "199990000\n5000\n" >expect && test_cmp expect g.out &&
	"$MEMPROV_CLI" check g >g.check &&
	grep "live at the end of the main module: 0 B in 0 blocks" g.check &&
	grep "[0-9.]* MiB .* leak:^WeakSet.add\$ (default: " g.check
'

# A package imported from a wheel as it is (python -m venv runs pip from
# its wheel, through ensurepip) is a library, as it is in site-packages:
# what its cache keeps till exit is not the program's (pip failed the gate
# on 149.8 KiB). The same cache in the program's own module still fails.
test_expect_success 'a package imported from a .whl is a library: its cache passes the gate' '
	rm -rf whl && mkdir -p whl/src/cachelib whl/src/mine &&
	printf "import functools\n@functools.lru_cache(maxsize=None)\ndef metadata(name):\n    return bytearray(40000)\n" \
		>whl/src/cachelib/__init__.py &&
	cp whl/src/cachelib/__init__.py whl/src/mine/__init__.py &&
	(cd whl/src && /usr/bin/python3 -m zipfile -c ../cachelib-1.0-py3-none-any.whl cachelib) &&
	printf "import sys\nsys.path.insert(0, sys.argv[1])\nimport %s\nprint(len(%s.metadata(\"x\")))\n" cachelib cachelib >whl/lib.py &&
	printf "import sys\nsys.path.insert(0, sys.argv[1])\nimport %s\nprint(len(%s.metadata(\"x\")))\n" mine mine >whl/own.py &&
	"$MEMPROV_CLI" run -d whl/r1 --check -- /usr/bin/python3 whl/lib.py "$PWD/whl/cachelib-1.0-py3-none-any.whl" >out1 2>err1 &&
	echo 40000 >expect && test_cmp expect out1 &&
	st=0 && "$MEMPROV_CLI" run -d whl/r2 --check -- /usr/bin/python3 whl/own.py "$PWD/whl/src" >out2 2>err2 || st=$? &&
	cat err2 && test "$st" = 23 && grep -q "__init__.py:4" err2
'

# Profile mode (MEMPROV_PYTHON_MODE=profile, --mark-on): CPython 3.11
# makes a code object's line table (2 bytes a code unit) the first time it
# calls memprov's profile function for it, with the caller's line on the
# stack: a function of 400 code units left 800 B at the line that called
# it (argparse.ArgumentParser() 796 B). It is the interpreter's, for
# memprov; the same function kept by the program still fails.
/usr/bin/python3 - >"$TRASH/bigfn.py" <<\EOF
print("keep = []")
print("def big(k):")
for i in range(200):
    print("    x%d = %d" % (i, i))
print("    if k:")
print("        keep.append(bytearray(5000))")
print("    return x0")
print("def main():")
print("    import sys")
print("    print(big(len(sys.argv) > 1))")
print("main()")
EOF
for py in /usr/bin/python3 $PYENV/3.11.7/bin/python3 $PYENV/3.12.1/bin/python3 $PYENV/3.10.13/bin/python3; do
	command -v "$py" >/dev/null || continue
	export py
	test_expect_success "profile mode: the line table of a function called for memprov is not the program's ($py)" '
		rm -rf bf bfk &&
		MEMPROV_PYTHON_MODE=profile "$MEMPROV_CLI" run --check -d bf -- "$py" bigfn.py >bf.out 2>bf.err ||
			{ cat bf.err; exit 1; } &&
		echo 0 >expect && test_cmp expect bf.out &&
		grep "live at the end of the main module: 0 B in 0 blocks" bf.err &&
		test_status 23 env MEMPROV_PYTHON_MODE=profile "$MEMPROV_CLI" run --check -d bfk -- "$py" bigfn.py keep \
			>/dev/null 2>bfk.err &&
		grep "#1 heap malloc: 4.9 KiB in 1 block live at the end of the main module in big at .*bigfn.py:204$" bfk.err
	'
done

# A trace function that removes itself (sys.settrace(None)) runs on with
# CPython's tracing raised and no trace function set, as the line table's
# maker does: what it keeps is still the program's (the review).
cat >"$TRASH/oneshot.py" <<\EOF
import sys
LOG = []
def tracer(frame, event, arg):
    sys.settrace(None)
    LOG.append(bytearray(100000))
def work(i):
    return i * 2
def main():
    for i in range(20):
        sys.settrace(tracer)
        work(i)
main()
EOF
test_expect_success 'profile mode: what a one-shot trace function keeps is the program'"'"'s' '
	rm -rf os &&
	test_status 23 env MEMPROV_PYTHON_MODE=profile "$MEMPROV_CLI" run --check -d os -- /usr/bin/python3 oneshot.py \
		>/dev/null 2>os.err &&
	grep "#1 heap malloc: 1.9 MiB in 20 blocks live at the end of the main module" os.err
'

test_done
