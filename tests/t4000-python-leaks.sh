#!/bin/sh
# t4000: Python provenance with no change to the script. A script keeps 5
# of 10 buffers made in make(); `memprov leaks` (measured at the end of the
# main module) must show exactly those 5 blocks under script:LINE make, on
# Debian's python3 (libpython in the executable, numpy) and on pyenv
# Pythons with a shared libpython (bytearray), from the main thread and
# from a worker thread.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }

PY=$TOP/tests/py
PYENV=/root/.pyenv/versions
export PY PYENV

# run_leaks PYTHON SCRIPT [ARGS]: trace it, write leaks.json and sites.txt
run_leaks() {
	py=$1 script=$2
	shift 2
	rm -f "$TRASH/t.trace"
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/t.trace" \
		"$py" "$PY/$script" "$@" >out.txt 2>err.txt
	test_cmp /dev/null err.txt
	echo 5 >expect-out.txt && test_cmp expect-out.txt out.txt
	memprov leaks --json "$TRASH/t.trace" >leaks.json
	/usr/bin/python3 "$PY/sites.py" leaks.json "$script" >sites.txt
	echo "at main-end" >expect-at.txt && head -n 1 sites.txt >at.txt &&
	test_cmp expect-at.txt at.txt
}

# the line of make() that allocates
np_line=$(grep -n 'np.empty(1_000_000)' "$PY/leak_np.py" | cut -d: -f1)
pure_line=$(grep -n 'return bytearray(8_000_000)' "$PY/leak_pure.py" | cut -d: -f1)
np_work=$(grep -n '        a = make()' "$PY/leak_np.py" | cut -d: -f1)
pure_work=$(grep -n '        a = make()' "$PY/leak_pure.py" | cut -d: -f1)
np_main=$(grep -n '^    work()' "$PY/leak_np.py" | cut -d: -f1)
pure_main=$(grep -n '^    work()' "$PY/leak_pure.py" | cut -d: -f1)
export np_line pure_line np_work pure_work np_main pure_main

if /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
	test_expect_success 'numpy arrays under make, /usr/bin/python3' '
		run_leaks /usr/bin/python3 leak_np.py &&
		grep "make@" sites.txt >make.txt &&
		echo "heap 5 40000000 make@leak_np.py:$np_line < work@leak_np.py:$np_work < <module>@leak_np.py:$np_main" >expect &&
		test_cmp expect make.txt
	'
	test_expect_success 'numpy arrays under make, worker thread' '
		run_leaks /usr/bin/python3 leak_np.py thread &&
		grep "make@" sites.txt >make.txt &&
		echo "heap 5 40000000 make@leak_np.py:$np_line < work@leak_np.py:$np_work" >expect &&
		test_cmp expect make.txt
	'
else
	echo "skip - $TEST_NAME: /usr/bin/python3 has no numpy"
fi

for v in 3.11.7 3.12.1 3.10.13 3.13.0; do
	if ! [ -x "$PYENV/$v/bin/python3" ]; then
		echo "skip - $TEST_NAME: no Python $v"
		continue
	fi
	export v
	test_expect_success "bytearrays under make, Python $v" '
		run_leaks "$PYENV/$v/bin/python3" leak_pure.py &&
		grep "make@" sites.txt >make.txt &&
		echo "heap 5 40000005 make@leak_pure.py:$pure_line < work@leak_pure.py:$pure_work < <module>@leak_pure.py:$pure_main" >expect &&
		test_cmp expect make.txt
	'
	test_expect_success "bytearrays under make, worker thread, Python $v" '
		run_leaks "$PYENV/$v/bin/python3" leak_pure.py thread &&
		grep "make@" sites.txt >make.txt &&
		echo "heap 5 40000005 make@leak_pure.py:$pure_line < work@leak_pure.py:$pure_work" >expect &&
		test_cmp expect make.txt
	'
done

# One big block a library call made and returned, kept by the program
# (a string json.dumps made, one base64.b64encode made): the program's,
# not library state (one block of any size was taken for a library's
# cache and passed the gate, 2.5 MB of it). Library state is one block
# of at most 256 KiB, or a few small ones.
cat >"$TRASH/keep_big.py" <<\EOF
import base64, json
KEEP = {}
def main():
    KEEP["b64"] = base64.b64encode(bytes(1_000_000))
    KEEP["json"] = json.dumps(list(range(100_000)))
main()
EOF
test_expect_success 'one big string a library call returned, kept in a global, fails the gate' '
	rm -rf kb &&
	"$MEMPROV_CLI" run -d kb -- /usr/bin/python3 keep_big.py >/dev/null 2>&1 &&
	! "$MEMPROV_CLI" check kb >kb.check &&
	# named at the program'"'"'s own line (what a CI annotation can point at),
	# the library'"'"'s frames below it
	grep "#1 heap realloc: 1.3 MiB in 1 block live at the end of the main module in main at .*keep_big.py:4$" kb.check &&
	grep "#2 heap malloc: 672.8 KiB in 1 block live at the end of the main module in main at .*keep_big.py:5$" kb.check &&
	grep "^      b64encode .*base64.py:[0-9]*$" kb.check &&
	grep "^      JSONEncoder.encode .*encoder.py:[0-9]*$" kb.check &&
	"$MEMPROV_CLI" check --json kb >kb.json || :
	jget kb.json traces.0.offenders.0.location.line traces.0.offenders.0.python.0.function >out &&
	printf "4\nb64encode\n" >expect && test_cmp expect out
'

# Code a library generated from a string (a dataclass's __init__, run by
# dataclasses.replace) is not where the program can act: the site is
# named at the program's own line (the review).
/usr/bin/python3 - >"$TRASH/dcl.py" <<\EOF
print("import dataclasses")
print("@dataclasses.dataclass")
print("class Big:")
for i in range(100):
    print("    f%d: int = 0" % i)
print("KEEP = []")
print("def main():")
print("    b = Big()")
print("    for i in range(50):")
print("        KEEP.append(dataclasses.replace(b, f1=i))")
print("main()")
EOF
test_expect_success 'a dataclass a library made kept by the program: named at the program'"'"'s line' '
	rm -rf dcl &&
	test_status 23 "$MEMPROV_CLI" run --check -d dcl -- /usr/bin/python3 dcl.py >/dev/null 2>dcl.err &&
	grep "#1 heap malloc: .* in 50 blocks live at the end of the main module in main at .*dcl.py:108$" dcl.err &&
	grep "^      __create_fn__.<locals>.__init__ <string>:[0-9]*$" dcl.err
'

test_done
