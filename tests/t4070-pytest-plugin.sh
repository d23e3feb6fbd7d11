#!/bin/sh
# t4070: the pytest plugin shipped with memprov (python/memprov_pytest.py).
# `memprov run --pytest` and `-p memprov_pytest` give a mark
# "test-start NODEID" before each test and "test-end NODEID" after it, in
# the order the tests ran; a node id longer than a label keeps its end,
# cut on a character boundary at 255 bytes; pytest's own output is the
# same as without memprov; without memprov the plugin does nothing.
. "$(dirname "$0")/test-lib.sh"

/usr/bin/python3 -c 'import pytest' 2>/dev/null || test_skip "/usr/bin/python3 has no pytest (python3-pytest)"
PT=$TOP/tests/py/pytest
PLUGIN_DIR=$TOP/python
export PT PLUGIN_DIR

# expect_marks: the labels expected, in the order pytest runs the tests
# (node ids from pytest itself: it escapes non-ASCII parameters), cut
# from the front of the node id to 255 bytes
expect_marks() {
	/usr/bin/python3 -m pytest -q -p no:cacheprovider --collect-only test_plugin_demo.py |
		grep "::" >ids.txt &&
	/usr/bin/python3 -c "
import sys
out = []
for nodeid in open(\"ids.txt\").read().split():
    for prefix in (\"test-start \", \"test-end \"):
        b = (prefix + nodeid).encode()
        if len(b) > 255:
            b = prefix.encode() + nodeid.encode()[-(255 - len(prefix)):]
        out.append(\"%d %s\" % (len(b), b.decode()))
out.append(\"12 __main__ end\")
print(\"\\n\".join(out))
" >expect-marks &&
	test $(wc -l <expect-marks) = 7
}

# pytest's report without its timing
untimed() { sed 's/ in [0-9.]*s\b//' "$1"; }

test_expect_success 'run --pytest: a mark at the start and end of each test' '
	cp "$PT/test_plugin_demo.py" . &&
	expect_marks &&
	timeout 120 "$MEMPROV_CLI" run --pytest -o "$TRASH/p.trace" -- \
		/usr/bin/python3 -m pytest -q -p no:cacheprovider test_plugin_demo.py >out.txt 2>err.txt &&
	memprov timeline --json "$TRASH/p.trace" >tl.json &&
	/usr/bin/python3 "$TOP/tests/py/marks_of.py" tl.json >marks.txt &&
	test_cmp expect-marks marks.txt &&
	grep -q "^255 test-start " marks.txt
'

test_expect_success 'pytest prints the same with and without the plugin under memprov' '
	timeout 120 /usr/bin/python3 -m pytest -q -p no:cacheprovider test_plugin_demo.py >bare.txt 2>&1 &&
	untimed bare.txt >bare-u.txt && untimed out.txt >out-u.txt &&
	test_cmp bare-u.txt out-u.txt
'

test_expect_success '-p memprov_pytest with LD_PRELOAD set by hand: the same marks' '
	rm -f "$TRASH/q.trace" &&
	timeout 120 env PYTHONPATH="$PLUGIN_DIR" LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/q.trace" \
		/usr/bin/python3 -m pytest -q -p no:cacheprovider -p memprov_pytest test_plugin_demo.py >out.txt 2>&1 &&
	memprov timeline --json "$TRASH/q.trace" >tl.json &&
	/usr/bin/python3 "$TOP/tests/py/marks_of.py" tl.json >marks.txt &&
	test_cmp expect-marks marks.txt
'

test_expect_success 'a label keeps the end of the node id, cut between characters' '
	env PYTHONPATH="$PLUGIN_DIR" /usr/bin/python3 -c "
import memprov_pytest as m
nodeid = \"t.py::test[\" + \"\\u00e9\" * 200 + \"-end]\"
b = m.label(\"test-end \", nodeid)
print(len(b), b.decode().startswith(\"test-end \\u00e9\"), b.decode().endswith(\"-end]\"))
print(len(m.label(\"test-start \", \"short::id\")))
" >label.txt &&
	printf "254 True True\n20\n" >expect && test_cmp expect label.txt
'

test_expect_success 'without memprov the plugin loads and does nothing' '
	timeout 120 env PYTHONPATH="$PLUGIN_DIR" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
		-p memprov_pytest test_plugin_demo.py >plain.txt 2>&1 &&
	untimed plain.txt >plain-u.txt && test_cmp bare-u.txt plain-u.txt &&
	env PYTHONPATH="$PLUGIN_DIR" /usr/bin/python3 -c "import memprov_pytest as m; print(m._find_mark())" >found.txt &&
	echo None >expect && test_cmp expect found.txt
'

test_expect_success 'the 1 MB test_keeps keeps is made between its own marks' '
	memprov leaks --json "$TRASH/p.trace" >leaks.json &&
	/usr/bin/python3 "$TOP/tests/py/sites.py" leaks.json test_plugin_demo.py >sites.txt &&
	grep -x "heap 1 1000001 test_keeps@test_plugin_demo.py:9" sites.txt &&
	memprov dump "$TRASH/p.trace" >dump.txt &&
	start=$(grep "label=\"test-start test_plugin_demo.py::test_keeps\"" dump.txt | cut -d" " -f1) &&
	end=$(grep "label=\"test-end test_plugin_demo.py::test_keeps\"" dump.txt | cut -d" " -f1) &&
	at=$(grep " alloc .* size=1000001 " dump.txt | cut -d" " -f1) &&
	test -n "$start" && test -n "$end" && test -n "$at" &&
	test "$start" -lt "$at" && test "$at" -le "$end" &&
	# one thread: the dump keeps its order, the mark after the block
	test $(grep -n " size=1000001 " dump.txt | cut -d: -f1) -lt \
		$(grep -n "label=\"test-end test_plugin_demo.py::test_keeps\"" dump.txt | cut -d: -f1)
'

test_expect_success 'run --pytest keeps PYTHONPATH and PYTEST_PLUGINS the command had' '
	timeout 60 env PYTHONPATH=/nonexistent PYTEST_PLUGINS=other "$MEMPROV_CLI" run --pytest -o "$TRASH/e.trace" -- \
		/bin/sh -c "echo \"\$PYTHONPATH|\$PYTEST_PLUGINS\"" >env.txt 2>/dev/null &&
	echo "$PLUGIN_DIR:/nonexistent|memprov_pytest,other" >expect && test_cmp expect env.txt &&
	timeout 60 env PYTEST_PLUGINS=a,memprov_pytest "$MEMPROV_CLI" run --pytest -o "$TRASH/e.trace" -- \
		/bin/sh -c "echo \"\$PYTEST_PLUGINS\"" >env.txt 2>/dev/null &&
	echo "a,memprov_pytest" >expect && test_cmp expect env.txt &&
	timeout 60 env PYTEST_PLUGINS=memprov_pytest_x "$MEMPROV_CLI" run --pytest -o "$TRASH/e.trace" -- \
		/bin/sh -c "echo \"\$PYTEST_PLUGINS\"" >env.txt 2>/dev/null &&
	echo "memprov_pytest,memprov_pytest_x" >expect && test_cmp expect env.txt
'

test_expect_success 'failing and xfail tests, cycles old enough to be in the oldest generation, a module fixture torn down: nothing kept' '
	# pytest keeps a failure in sys.last_traceback (the test'"'"'s frame and
	# locals) until the next test: the plugin lets it go before the mark;
	# the young collection it makes suffices unless something the test made
	# reached the oldest generation, where the full one finds it
	mkdir -p fx && cat >fx/test_fx.py <<-\EOF &&
	import pytest
	class C:
	    pass
	@pytest.mark.xfail(reason="known")
	def test_xfail():
	    buf = bytearray(50000)
	    assert len(buf) == 1
	def test_fail():
	    big = bytearray(100000)
	    assert len(big) == 2
	def test_old_cycle():
	    c = C()
	    c.me = c
	    c.buf = bytearray(30000)
	    del c
	    many = [[i] for i in range(20000)]
	    assert len(many) == 20000
	def test_keeps_too():
	    test_keeps_too.kept = bytearray(70000)
	class Client:
	    def __init__(self):
	        self.me = self
	        self.cache = []
	@pytest.fixture(scope="module")
	def client():
	    yield Client()
	def test_client_first(client):
	    assert client.cache == []
	def test_client_second(client):
	    # the client is in the oldest generation by now; torn down after this test
	    client.cache.append(bytearray(70000))
	EOF
	(cd fx && test_status 1 timeout 120 "$MEMPROV_CLI" run --pytest -o "$TRASH/fx.trace" -- \
		/usr/bin/python3 -m pytest -q -p no:cacheprovider test_fx.py >../fx.out 2>/dev/null) &&
	grep "1 failed, 4 passed, 1 xfailed" fx.out &&
	test_status 1 memprov check "$TRASH/fx.trace" >fx.check &&
	grep "per test: 6 tests, 1 over budget" fx.check &&
	grep "FAIL test_fx.py::test_keeps_too: kept 68.4 KiB" fx.check
'

# One string a library call made, kept by each test in a global: test by
# test it is one block of library state, but the line holds one from each
# test; judged on what the line holds then, every test after the first
# fails (all 10 passed: the review).
cat >"$TRASH/test_keep_each.py" <<\EOF
import base64, pytest
KEEP = []
@pytest.mark.parametrize("i", range(10))
def test_keep(i):
    KEEP.append(base64.b64encode(bytes(150000 + i)))
EOF
test_expect_success 'per test: one library-made block a test, kept by every test, fails after the first' '
	rm -rf ke &&
	timeout 120 "$MEMPROV_CLI" run --pytest -d ke -- \
		/usr/bin/python3 -m pytest -q -p no:cacheprovider test_keep_each.py >ke.out 2>&1 &&
	! "$MEMPROV_CLI" check ke >ke.check &&
	grep "per test: 10 tests, 9 over budget" ke.check &&
	grep "FAIL test_keep_each.py::test_keep\[9\]: kept 195.4 KiB in 1 block" ke.check
'

# A module or session fixture is set up in the setup of the first test
# that asks for it and outlives that test: what it made was charged to
# that test (a module fixture's 100 KB buffer: FAIL test_a, kept 146 KiB
# with the session one). The plugin marks the setup of such a fixture
# and the check sets what grew there aside; a function fixture that keeps
# something in a global is still the test's.
test_expect_success 'module and session fixtures are not kept by the first test that asks for them' '
	mkdir -p sf && cat >sf/test_sf.py <<-\EOF &&
	import pytest
	KEEP = []
	@pytest.fixture(scope="module")
	def big():
	    return bytearray(100000)
	@pytest.fixture(scope="session")
	def table():
	    return [bytearray(50000)]
	@pytest.fixture
	def leaky():
	    KEEP.append(bytearray(30000))
	    return 1
	def test_a(big, table):
	    assert len(big) == 100000
	def test_b(big, table):
	    assert len(table) == 1
	def test_c(leaky):
	    assert leaky == 1
	EOF
	(cd sf && timeout 120 "$MEMPROV_CLI" run --pytest -o "$TRASH/sf.trace" -- \
		/usr/bin/python3 -m pytest -q -p no:cacheprovider test_sf.py >../sf.out 2>/dev/null) &&
	grep "3 passed" sf.out &&
	memprov dump sf.trace | grep -c " mark .*fixture-start " >nfix &&
	test "$(cat nfix)" = 2 &&
	test_status 1 memprov check sf.trace >sf.check &&
	cat sf.check &&
	grep "per test: 3 tests, 1 over budget" sf.check &&
	grep "FAIL test_sf.py::test_c: kept 29.3 KiB" sf.check &&
	not grep "FAIL test_sf.py::test_a" sf.check
'

test_done
