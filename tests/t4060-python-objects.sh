#!/bin/sh
# t4060: CPython's own allocators. By default pymalloc's arenas are
# recorded under their own function (PyObject_ArenaAlloc), never as a
# plain mmap charged to a line; with MEMPROV_PYTHON_OBJECTS=1 (or
# `memprov run --python-objects`) every small object is a block of its
# own: objects.py keeps exactly 10000 bytes objects of 133-byte blocks at
# its KEEP line and drops as many at its CHURN line, on Debian's python3
# (libpython in the executable) and the pyenv Pythons (shared libpython),
# in walk and profile mode, from the main thread and from four threads.
. "$(dirname "$0")/test-lib.sh"

PY=$TOP/tests/py
PYENV=/root/.pyenv/versions
export PY

keep=$(grep -n '# KEEP$' "$PY/objects.py" | cut -d: -f1)
churn=$(grep -n '# CHURN$' "$PY/objects.py" | cut -d: -f1)
export keep churn

# traced PYTHON OBJECTS MODE [ARGS]: live sites at the KEEP and CHURN lines
traced() {
	rm -f "$TRASH/t.trace"
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/t.trace" \
		MEMPROV_PYTHON_OBJECTS="$2" MEMPROV_PYTHON_MODE="$3" \
		"$1" "$PY/objects.py" ${4-} >out.txt 2>err.txt &&
	test_cmp /dev/null err.txt &&
	echo 10000 >expect-out.txt && test_cmp expect-out.txt out.txt &&
	memprov leaks --all --json "$TRASH/t.trace" >leaks.json &&
	/usr/bin/python3 "$PY/objsites.py" leaks.json objects.py "$keep" >keep.txt &&
	/usr/bin/python3 "$PY/objsites.py" leaks.json objects.py "$churn" >churn.txt
}

# by default: arenas under their own function, no object blocks
check_default() {
	traced "$1" 0 walk &&
	! grep " PyObject_Malloc \| PyObject_Calloc " keep.txt churn.txt &&
	grep -q "^mmap PyObject_ArenaAlloc " keep.txt &&
	! grep "^mmap mmap" keep.txt churn.txt
}

# with objects: the 10000 kept ones, none of the 10000 dropped ones (the
# interpreter may keep an object or two made while that line ran: the
# garbage collector runs there)
check_objects() {
	traced "$1" 1 "$2" "${3-}" &&
	grep -x "heap PyObject_Malloc 10000 1330000" keep.txt &&
	awk "/^heap PyObject_/ { n += \$3 } END { print n + 0 }" churn.txt >n.txt &&
	test "$(cat n.txt)" -le 4
}

pythons=/usr/bin/python3
for v in 3.10.13 3.11.7 3.12.1 3.13.0; do
	if [ -x "$PYENV/$v/bin/python3" ]; then
		pythons="$pythons $PYENV/$v/bin/python3"
	else
		echo "skip - $TEST_NAME: no Python $v"
	fi
done

for py in $pythons; do
	export py
	test_expect_success "arenas under PyObject_ArenaAlloc by default, $py" '
		check_default "$py"
	'
	test_expect_success "every object with MEMPROV_PYTHON_OBJECTS=1, $py" '
		check_objects "$py" walk
	'
done

test_expect_success 'objects from four threads, and in profile mode' '
	check_objects /usr/bin/python3 walk thread &&
	check_objects /usr/bin/python3 profile &&
	check_objects "$PYENV/3.13.0/bin/python3" profile thread
'

test_expect_success 'objects recorded are freed: stats counts PyObject_Free calls' '
	traced /usr/bin/python3 1 walk &&
	memprov stats --json "$TRASH/t.trace" >stats.json &&
	/usr/bin/python3 -c "
import json, sys
f = json.load(open(\"stats.json\"))[\"functions\"]
assert f[\"PyObject_Malloc\"][\"calls\"] >= 20000, f.get(\"PyObject_Malloc\")
assert f[\"PyObject_Free\"][\"calls\"] >= 10000, f.get(\"PyObject_Free\")
"
'

test_expect_success 'memprov run --python-objects sets MEMPROV_PYTHON_OBJECTS' '
	timeout 120 "$MEMPROV_CLI" run --python-objects -o "$TRASH/r.trace" -- \
		/usr/bin/python3 "$PY/objects.py" >out.txt 2>err.txt &&
	memprov leaks --all --json "$TRASH/r.trace" >leaks.json &&
	/usr/bin/python3 "$PY/objsites.py" leaks.json objects.py "$keep" >keep.txt &&
	grep -x "heap PyObject_Malloc 10000 1330000" keep.txt
'

test_expect_success 'MEMPROV_PYTHON=0: no arena hook, arenas are plain mappings' '
	rm -f "$TRASH/t.trace" &&
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/t.trace" MEMPROV_PYTHON=0 \
		MEMPROV_PYTHON_OBJECTS=1 /usr/bin/python3 "$PY/objects.py" >out.txt 2>err.txt &&
	test_cmp /dev/null err.txt &&
	memprov stats "$TRASH/t.trace" >stats.txt &&
	! grep "PyObject_" stats.txt
'

test_expect_success 'a bad MEMPROV_PYTHON_OBJECTS warns once and keeps the default' '
	rm -f "$TRASH/t.trace" &&
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/t.trace" MEMPROV_PYTHON_OBJECTS=yes \
		/usr/bin/python3 "$PY/objects.py" >out.txt 2>err.txt &&
	grep -c "MEMPROV_PYTHON_OBJECTS=.yes.: malformed or out of range" err.txt >n.txt &&
	echo 1 >expect && test_cmp expect n.txt &&
	memprov stats "$TRASH/t.trace" >stats.txt &&
	! grep "PyObject_Malloc" stats.txt
'

test_done
