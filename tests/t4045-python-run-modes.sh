#!/bin/sh
# t4045: Python as people run it: `-c`, `-m package`, `-m unittest`,
# `-m pytest`, runpy.run_path, sys.exit. Each keeps 8 MB in a module
# global; the end of the main module is marked before finalization frees
# it, so `leaks --all` (measured there) shows exactly that block at its
# line: as the program's own when a function made it (unittest, pytest),
# as module state when a module's top-level code did (-c, -m package,
# run_path, sys.exit at the top level),
# on Debian's python3 and the pyenv Pythons (3.10 to 3.13), in walk mode
# and in profile mode; and through the pyenv shim first on PATH, where the
# trace `memprov run` names must be Python's, not the launcher's.
# An application embedding CPython (tests/progs/embedpy.c) is a native
# program.
. "$(dirname "$0")/test-lib.sh"

RM=$TOP/tests/py/runmodes
PYENV=/root/.pyenv/versions
export RM

# kept_at MODE PYTHON STATUS ARGS...: run in $RM, then write in kept.txt
# the report's instant and where the live 8 MB block is (function, line)
kept_at() {
	mode=$1 py=$2 want=$3
	shift 3
	rm -f "$TRASH/t.trace"
	st=0
	(cd "$RM" && timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/t.trace" \
		MEMPROV_PYTHON_MODE="$mode" PYTHONDONTWRITEBYTECODE=1 "$py" "$@") >out.txt 2>err.txt || st=$?
	test "$st" = "$want" || { echo "exit status $st"; cat err.txt; return 1; }
	memprov leaks --all --json "$TRASH/t.trace" >leaks.json &&
	/usr/bin/python3 -c "
import json
d = json.load(open(\"leaks.json\"))
print(\"at\", d[\"at\"])
for s in d[\"sites\"]:
    py = s.get(\"python\") or []
    if 8000001 <= s[\"bytes\"] < 8100000 and py:
        print(py[0][\"function\"], py[0][\"line\"], s[\"category\"])
" >kept.txt
}

# expect FUNCTION LINE [CATEGORY]: kept.txt says main-end and the 8 MB at
# FUNCTION:LINE, set apart as module state unless CATEGORY says otherwise
# (the site may hold a small block or two the interpreter made there)
expect() {
	printf "at main-end\n%s %s %s\n" "$1" "$2" "${3:-state}" >expect && test_cmp expect kept.txt
}

line_of() { grep -n "# KEEP$" "$RM/$1" | cut -d: -f1; }
pkg=$(line_of mainpkg/__main__.py)
unit=$(line_of test_unit_keep.py)
ex3=$(line_of exit3.py)
pyt=$(line_of test_pytest_keep.py)
export pkg unit ex3 pyt

pythons=/usr/bin/python3
for v in 3.10.13 3.11.7 3.12.1 3.13.0; do
	if [ -x "$PYENV/$v/bin/python3" ]; then
		pythons="$pythons $PYENV/$v/bin/python3"
	else
		echo "skip - $TEST_NAME: no Python $v"
	fi
done

for py in $pythons; do
	for mode in walk profile; do
		export py mode
		test_expect_success "-c, $py, $mode" '
			kept_at $mode "$py" 0 -c "kept = [bytearray(8_000_000)]" &&
			expect "<module>" 1
		'
		test_expect_success "-m package, $py, $mode" '
			kept_at $mode "$py" 0 -m mainpkg && expect "<module>" "$pkg"
		'
		test_expect_success "-m unittest, $py, $mode" '
			kept_at $mode "$py" 0 -m unittest -q test_unit_keep &&
			expect "Keep.test_keep" "$unit" program ||
			expect "test_keep" "$unit" program
		'
		test_expect_success "sys.exit(3) at the end of the script, $py, $mode" '
			kept_at $mode "$py" 3 exit3.py && expect "<module>" "$ex3"
		'
	done
	test_expect_success "runpy.run_path as __main__, $py" '
		kept_at walk "$py" 0 runpath.py && expect "<module>" "$pkg"
	'
done

# through the launcher people have first on PATH (a pyenv shim here): the
# trace `memprov run` names is Python's, with the 8 MB at main-end
case "$(command -v python3)" in
*/shims/python3)
	test_expect_success "-m unittest through the pyenv shim, as memprov run names it" '
		(cd "$RM" && timeout 120 env PYTHONDONTWRITEBYTECODE=1 "$MEMPROV_CLI" run -o "$TRASH/s.trace" -- \
			python3 -m unittest -q test_unit_keep) >out.txt 2>err.txt &&
		name=$(sed -n "s/^memprov: trace written to //p" err.txt) &&
		memprov leaks --json "$name" >leaks.json &&
		/usr/bin/python3 -c "
import json
d = json.load(open(\"leaks.json\"))
print(\"at\", d[\"at\"])
for s in d[\"sites\"]:
    py = s.get(\"python\") or []
    if 8000001 <= s[\"bytes\"] < 8100000 and py:
        print(py[0][\"function\"], py[0][\"line\"], s[\"category\"])
" >kept.txt &&
		expect "Keep.test_keep" "$unit" program
	'
	;;
*)
	echo "skip - $TEST_NAME: python3 on PATH is not a pyenv shim"
	;;
esac

if /usr/bin/python3 -c 'import pytest' 2>/dev/null; then
	for mode in walk profile; do
		export mode
		test_expect_success "-m pytest, /usr/bin/python3, $mode" '
			kept_at $mode /usr/bin/python3 0 -m pytest -q -p no:cacheprovider test_pytest_keep.py &&
			expect test_keep "$pyt" program
		'
	done
else
	echo "skip - $TEST_NAME: /usr/bin/python3 has no pytest"
fi

# An application that embeds CPython (tests/progs/embedpy.c, as gdb does:
# libpython loaded at start, snippets run in __main__) is a native
# program: no end of a main module, its own leak lost at exit. The same
# executable named python* is taken for CPython's.
PYLIB=/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0
if [ -e "$PYLIB" ] && [ -x "$BIN/embedpy" ]; then
	test_expect_success 'an application embedding CPython is a native program' '
		rm -f "$TRASH/e.trace" &&
		env LD_PRELOAD="$MEMPROV_LIB $PYLIB" MEMPROV_OUTPUT="$TRASH/e.trace" "$BIN/embedpy" >out.txt &&
		test "$(cat out.txt)" = 15 &&
		memprov dump "$TRASH/e.trace" >e.dump &&
		! grep -q "flags=main-end" e.dump &&
		test_status 1 memprov check --json "$TRASH/e.trace" >e.json &&
		/usr/bin/python3 "$TOP/tests/progs/json_get.py" --check e.json traces.0.rule=lost traces.0.rule_reason=native \
			traces.0.leak_bytes=4321 traces.0.offenders.0.bytes=4321 &&
		cp "$BIN/embedpy" "$TRASH/python-embed" &&
		rm -f "$TRASH/p.trace" &&
		env LD_PRELOAD="$MEMPROV_LIB $PYLIB" MEMPROV_OUTPUT="$TRASH/p.trace" "$TRASH/python-embed" >/dev/null &&
		memprov dump "$TRASH/p.trace" | grep -q "flags=main-end"
	'
else
	echo "skip - $TEST_NAME: no $PYLIB (Debian package libpython3.11)"
fi

test_done
