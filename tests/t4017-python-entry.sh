#!/bin/sh
# t4017: what the interpreter allocates while a function is being
# entered, before any instruction of its body ran, is not the function's
# own: a trace function's call event makes and keeps data for the code
# object (CPython 3.11 builds a line table for tracing, 532 B for a small
# test function; coverage's tracer reads bytes from the code, 565 B). Under
# `coverage run -m pytest` on 3.11 each test function "kept" 1.1 KiB at
# its def line and the gate failed a clean suite. The Python walk marks a
# frame that has not started its body (line 0 in the trace); reports show
# its first line, and such blocks the interpreter asked for count as its
# state. A one-line function's body runs after its entry: what it keeps
# still fails the gate at its line, traced or not.
. "$(dirname "$0")/test-lib.sh"

jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

# twenty functions, each entered first under a trace function, from main
cat >"$TRASH/traced.py" <<\EOF
import sys
def tracer(frame, event, arg):
    return None
# each a hundred lines long: its line table (3.11) is bigger than pymalloc's blocks
body = "".join("    x = x + %d\n" % k for k in range(100))
src = "\n".join("def f%d(x):\n%s    return x\n" % (i, body) for i in range(20))
with open("funcs.py", "w") as f:
    f.write(src)
exec(compile(src, "funcs.py", "exec"))
def g0(x):
    a = x * 2
    return a
def g1(x):
    a = x * 3
    return a
def main():
    sys.settrace(tracer)
    total = g0(1) + g1(2)
    for i in range(20):
        total += globals()["f%d" % i](i)
    sys.settrace(None)
    print("total", total)
main()
EOF

# a one-line function that keeps what it makes, traced or not
cat >"$TRASH/oneline.py" <<\EOF
import sys
_cache = []
def keep(n): _cache.append(bytearray(n))
def main():
    if len(sys.argv) > 1:
        sys.settrace(lambda *a: None)
    for i in range(40):
        keep(3000)
    sys.settrace(None)
main()
EOF

cat >"$TRASH/app.py" <<\EOF
import json
def work(n):
    out = []
    for i in range(n):
        out.append(json.dumps({"i": i}))
    return len(out)
EOF
cat >"$TRASH/test_two.py" <<\EOF
import app
def test_one():
    assert app.work(10) == 10
def test_two():
    assert app.work(5) == 5
EOF

pythons() { test_pythons 3.10.13 3.11.7 3.12.1 3.13.0; }

test_expect_success 'a trace function set in main: the code objects entered first under it are not kept by them' '
	pythons >pys
	n=0
	while read -r py; do
		n=$((n + 1))
		st=0 && memprov run -d "t$n" --check -- "$py" traced.py >out 2>err || st=$?
		cat err
		[ "$st" = 0 ]
		grep -q "^total" out
	done <pys
	[ "$n" -ge 2 ]
'

test_expect_success 'a one-line function keeps 40 x 3,000 B: fails the gate (23) at its line, traced and not' '
	pythons >pys
	n=0
	while read -r py; do
		for arg in "" traced; do
			n=$((n + 1))
			st=0 && memprov run -d "o$n" --check -- "$py" oneline.py $arg >out 2>err || st=$?
			[ "$st" = 23 ] || { cat err; exit 1; }
			grep -q "117.2 KiB (120,040 B) in 40 blocks" err
			grep -q "in keep at .*/oneline.py:3$" err
		done
	done <pys
'

test_expect_success 'coverage run -m pytest on 3.11: the gate passes; the blocks made at entry show the def line' '
	/usr/bin/python3 -c "import coverage, pytest" 2>/dev/null || {
		echo "python3-coverage or python3-pytest missing: scripts/install-deps.sh test" >&2
		exit 1
	}
	st=0 && memprov run -d cov --check -- /usr/bin/python3 -m coverage run --data-file="$TRASH/.cov" \
		-m pytest -q -p no:cacheprovider test_two.py >cov.out 2>cov.err || st=$?
	cat cov.err
	[ "$st" = 0 ]
	grep -q "2 passed" cov.out
	memprov leaks --all --json cov/*.trace >cov.json
	jget --check cov.json "=sorted(set(s[\"python\"][0][\"line\"] for s in j[\"sites\"] if s[\"python\"] and s[\"python\"][0][\"function\"] in (\"test_one\", \"test_two\")))==[2, 4]"
'

test_done
