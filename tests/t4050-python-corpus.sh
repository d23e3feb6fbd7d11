#!/bin/sh
# t4050-python-corpus.sh - memprov does not cry wolf on Python programs as
# people write them (tests/pycorpus/: standard library work with json and
# re, numpy, threads, asyncio, a multiprocessing pool, a unittest file, a
# pytest file, a script started through a launcher that execs python):
# with no options `memprov run --check` passes, and neither `leaks` nor
# `growth` names a line of theirs. Each has a leaking twin (a growing dict
# of small strings, a module-global list of numpy arrays, a cache never
# evicted, ...) that fails the gate at its "# LEAK" line. On Debian's
# python3 and pyenv's 3.10, 3.12 and 3.13 (numpy and pytest where
# installed). The README's CI recipe, pasted as written, passes the clean
# unittest file and fails its twin.
. "$(dirname "$0")/test-lib.sh"

[ -f "$MEMPROV_LIB" ] && [ -x "$MEMPROV_CLI" ] || test_skip 'libmemprov.so or memprov not built'
C=$TOP/tests/pycorpus
PYENV=/root/.pyenv/versions
# L FILE: the line marked "# LEAK" in tests/pycorpus/FILE
L() { grep -n "# LEAK$" "$C/$1" | head -1 | cut -d: -f1; }

# clean TAG PY NAME [ARGS]: the gate passes; leaks and growth name no line of NAME.py
clean() {
	tag=$1 py=$2 name=$3
	shift 3
	timeout 300 "$MEMPROV_CLI" run --check -o "$TRASH/$tag.trace" -- "$py" "$C/$name.py" "$@" \
		>"$tag.out" 2>&1 &&
	grep -q "): ok$" "$tag.out" &&
	memprov leaks "$tag.trace" >"$tag.leaks" &&
	grep -qx "no site of the program's own" "$tag.leaks" &&
	! grep -q "pycorpus/$name.py:" "$tag.leaks" &&
	memprov growth "$tag.trace" >"$tag.growth" &&
	! grep -q "pycorpus/$name.py:" "$tag.growth"
}

# twin TAG PY NAME: the gate fails (23), its first annotation at NAME.py's LEAK line
twin() {
	tag=$1 py=$2 name=$3
	st=0
	timeout 300 "$MEMPROV_CLI" run --check --annotations -o "$TRASH/$tag.trace" -- "$py" "$C/$name.py" \
		>"$tag.out" 2>&1 || st=$?
	test $st = 23 &&
	grep -m1 "^::error " "$tag.out" >"$tag.first" &&
	grep -q "^::error file=$C/$name.py,line=$(L $name.py),title=memprov%3A leak over budget::" "$tag.first"
}

for py in /usr/bin/python3 $PYENV/3.10.13/bin/python3 $PYENV/3.12.1/bin/python3 \
	  $PYENV/3.13.0/bin/python3; do
	[ -x "$py" ] || continue
	v=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
	export py v
	test_expect_success "clean programs pass and no report names their lines: Python $v" '
		clean std-$v "$py" stdlib_work && clean thr-$v "$py" threads_work &&
		clean aio-$v "$py" asyncio_work && clean pool-$v "$py" pool_work &&
		clean ut-$v "$py" unittest_work
	'
	test_expect_success "their twins fail at the LEAK line: Python $v" '
		twin ldict-$v "$py" leak_dict && twin lcache-$v "$py" leak_cache &&
		twin laio-$v "$py" leak_asyncio && twin lpool-$v "$py" leak_pool &&
		twin lut-$v "$py" leak_unittest
	'
	if "$py" -c 'import numpy' 2>/dev/null; then
		test_expect_success "numpy: clean passes, a global list of arrays fails: Python $v" '
			clean np-$v "$py" numpy_work && twin lnp-$v "$py" leak_numpy &&
			grep -q "in step at $C/leak_numpy.py:$(L leak_numpy.py) (trace " lnp-$v.first
		'
	fi
	test_expect_success "a launcher script that execs python: Python $v" '
		PY=$py && export PY &&
		timeout 300 "$MEMPROV_CLI" run --check -o "$TRASH/wrap-$v.%p.trace" -- "$C/wrapper.sh" \
			"$C/stdlib_work.py" >wrap-$v.out 2>&1 &&
		test "$(grep -c "^memprov check: .*): ok$" wrap-$v.out)" = 1 &&
		st=0 && timeout 300 "$MEMPROV_CLI" run --check -o "$TRASH/wrapl-$v.%p.trace" -- \
			"$C/wrapper.sh" "$C/leak_dict.py" >wrapl-$v.out 2>&1 || st=$? &&
		test $st = 23 &&
		grep -q "^    #1 heap malloc: .* live at the end of the main module in register at $C/leak_dict.py:$(L leak_dict.py)$" wrapl-$v.out
	'
done

# The interpreter's own and the environment's memory are not the program's.
test_expect_success 'a thread, os.environ and a class at top level pass the gate' '
	"$MEMPROV_CLI" run --check -o "$TRASH/thr1.trace" -- /usr/bin/python3 -c \
		"import threading; t=threading.Thread(target=len,args=((),)); t.start(); t.join()" >thr1.out 2>&1 &&
	"$MEMPROV_CLI" run --check -o "$TRASH/env.trace" -- /usr/bin/python3 -c "
import os
class Config:
    pass
def main():
    for i in range(50):
        os.environ[\"MEMPROV_T4050_%d\" % i] = \"x\" * 100
main()" >env.out 2>&1 &&
	grep -q "leak:^__add_to_environ\$ (default: the process environment" env.out &&
	printf "keep = []\nfor i in range(30000):\n    keep.append((i, str(i), [i]))\n" >keep.py &&
	"$MEMPROV_CLI" run --check -o "$TRASH/keep.trace" -- /usr/bin/python3 keep.py >keep.out 2>&1 &&
	grep -q "^  Python arenas (pymalloc.s small objects, of every line): [0-9]* arenas, " keep.out &&
	memprov leaks keep.trace >keep.leaks && ! grep -q "keep.py:" keep.leaks
'

test_expect_success 'json, numpy at the end: one summary line, no site' '
	/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "no numpy: not checked"; exit 0; }
	memprov run -o "$TRASH/jn.trace" -- /usr/bin/python3 -c "import json, numpy" 2>/dev/null &&
	memprov leaks jn.trace >out &&
	grep -c "^interpreter and module state: [0-9,]* blocks, 1[0-9].[0-9] MiB — \`--all\` shows them$" out >n &&
	echo 1 >one && test_cmp one n &&
	grep -qx "no site of the program'"'"'s own" out &&
	memprov leaks --json jn.trace >jn.json &&
	test "$(/usr/bin/python3 -c "import json; j = json.load(open(\"jn.json\")); print(len(j[\"sites\"]), j[\"set_apart\"][\"state\"][\"bytes\"] > 10 << 20)")" = "0 True" &&
	memprov growth jn.trace >g.out &&
	! grep -q "^  #" g.out
'

# Code a library generates at run time, under a file name it makes up
# (numpy 1.x wraps each array function in "<__array_function__
# internals>"), is its caller's: what a library keeps through it is set
# apart, and a program's leak through it is named at the program's line.
test_expect_success 'generated code counts as its caller: a library passes, a leak is named at the program line' '
	mkdir -p lib/site-packages &&
	cat >lib/site-packages/genlib.py <<-\EOF &&
	SRC = "def make(n):\n    return bytearray(n)\n"
	NS = {}
	exec(compile(SRC, "<genlib generated>", "exec"), NS)
	make = NS["make"]
	CACHE = []
	def keep_own():
	    CACHE.append(make(300000))
	EOF
	cat >gen_user.py <<-\EOF &&
	import sys
	sys.path.insert(0, sys.argv[1])
	import genlib
	KEPT = []
	def work():
	    KEPT.append(genlib.make(200000))
	genlib.keep_own()
	if len(sys.argv) > 2:
	    work()
	EOF
	"$MEMPROV_CLI" run --check -o "$TRASH/gen.trace" -- /usr/bin/python3 gen_user.py \
		"$TRASH/lib/site-packages" >gen.out 2>&1 &&
	grep -q "): ok$" gen.out &&
	st=0 && "$MEMPROV_CLI" run --check --annotations -o "$TRASH/genl.trace" -- /usr/bin/python3 \
		gen_user.py "$TRASH/lib/site-packages" leak >genl.out 2>&1 || st=$? &&
	cat genl.out && test $st = 23 &&
	test "$(grep -c "^::error " genl.out)" = 1 &&
	grep -q "^::error file=$TRASH/gen_user.py,line=6,title=memprov%3A leak over budget::.* in work at $TRASH/gen_user.py:6 (trace " genl.out
'

# pytest: per test with test marks (a stand-in for memprov's plugin puts
# them), else the process at the end of its main module.
if /usr/bin/python3 -c 'import pytest' 2>/dev/null; then
	test_expect_success 'pytest: a clean file passes, with and without test marks' '
		PYTHONPATH=$C && export PYTHONPATH &&
		( cd "$C" && timeout 300 "$MEMPROV_CLI" run --check -o "$TRASH/pt.trace" -- /usr/bin/python3 \
			-m pytest -q -p no:cacheprovider test_pytest_work.py ) >pt.out 2>&1 &&
		grep -q "): ok$" pt.out &&
		( cd "$C" && timeout 300 "$MEMPROV_CLI" run --check --junit "$TRASH/ptj.xml" -o "$TRASH/ptm.trace" -- \
			/usr/bin/python3 -m pytest -q -p no:cacheprovider -p memprov_marks_standin \
			test_pytest_work.py ) >ptm.out 2>&1 &&
		grep -qx "  per test: 3 tests, 0 over budget (what each kept from its start to its end, budget 0 B, all kinds)" ptm.out &&
		test "$(xmllint --xpath "count(//testcase[@classname=\"test_pytest_work.py\"])" ptj.xml)" = 3
	'
	test_expect_success 'pytest: a test that keeps 8 MB fails, named with its line' '
		PYTHONPATH=$C && export PYTHONPATH &&
		st=0 && ( cd "$C" && timeout 300 "$MEMPROV_CLI" run --check -o "$TRASH/ptl.trace" -- /usr/bin/python3 \
			-m pytest -q -p no:cacheprovider test_pytest_leak.py ) >ptl.out 2>&1 || st=$? &&
		test $st = 23 &&
		grep -q "^    #1 heap malloc: 7.6 MiB in 1 block live at the end of the main module in test_keeps at $C/test_pytest_leak.py:$(L test_pytest_leak.py)$" ptl.out &&
		st=0 && ( cd "$C" && timeout 300 "$MEMPROV_CLI" run --check --annotations --junit "$TRASH/ptlj.xml" \
			-o "$TRASH/ptlm.trace" -- /usr/bin/python3 -m pytest -q -p no:cacheprovider \
			-p memprov_marks_standin test_pytest_leak.py ) >ptlm.out 2>&1 || st=$? &&
		test $st = 23 &&
		grep -qx "  FAIL test_pytest_leak.py::test_keeps: kept 7.6 MiB in 1 block" ptlm.out &&
		grep -q "^::error file=$C/test_pytest_leak.py,line=$(L test_pytest_leak.py),title=memprov%3A leak in a test over budget (test_pytest_leak.py%3A%3Atest_keeps)::" ptlm.out &&
		xmllint --noout --schema "$TOP/tests/gate/junit.xsd" ptlj.xml &&
		test "$(xmllint --xpath "count(//testcase[@name=\"test_keeps\"]/failure)" ptlj.xml)" = 1 &&
		test "$(xmllint --xpath "count(//testcase/failure)" ptlj.xml)" = 1
	'
fi

# The README's CI step, as written (python3 and memprov from PATH).
test_expect_success 'the README CI recipe passes a clean unittest file and fails its twin' '
	command -v python3 >/dev/null || { echo "no python3 on PATH: not checked"; exit 0; }
	sed -n "/^- name: tests under the memory gate/,/^- uses/p" "$TOP/README.md" |
		sed -n "/^    memprov run/,/python3 tests.py$/p" | sed "s/^    //" >recipe.sh &&
	grep -q "memprov run --check" recipe.sh &&
	mkdir -p ci && cp "$C/unittest_work.py" ci/tests.py &&
	( cd ci && PATH=$(dirname "$MEMPROV_CLI"):$PATH && timeout 300 sh ../recipe.sh ) >ci.out 2>&1 &&
	xmllint --noout ci/memprov-junit.xml &&
	rm -rf ci && mkdir ci && cp "$C/leak_unittest.py" ci/tests.py &&
	st=0 && ( cd ci && PATH=$(dirname "$MEMPROV_CLI"):$PATH && timeout 300 sh ../recipe.sh ) >cil.out 2>&1 || st=$? &&
	test $st = 23 &&
	grep -q "^::error file=$TRASH/ci/tests.py,line=$(L leak_unittest.py),title=memprov%3A" cil.out
'

test_done
