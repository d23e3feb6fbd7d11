#!/bin/sh
# t4032: an extension's call of the interpreter's allocator keeps its
# native frames. Under Python code the walk stops at the first frame in
# the interpreter, and the interpreter's PyMem_Malloc is that frame when
# an extension module calls it: the block had no native frame, and a
# default suppression naming the extension (zoneinfo's cache of zones)
# could not match. Now at most MP_UNWIND_LEAD leading interpreter frames
# are walked past when a frame outside follows (interpose/unwind.h).
# extlib.so stands for an extension (no Python headers needed): loaded
# with ctypes.PyDLL, it calls PyMem_Malloc and PyType_GenericAlloc (a
# tuple of 1,000 items: four interpreter frames on 3.10) with the GIL held.
. "$(dirname "$0")/test-lib.sh"

[ -f "$MEMPROV_LIB" ] && [ -x "$MEMPROV_CLI" ] || test_skip 'libmemprov.so or memprov not built'
[ -x /usr/bin/python3 ] || test_skip 'no /usr/bin/python3'
PYENV=/root/.pyenv/versions

cat >"$TRASH/extlib.c" <<'EOF'
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

typedef void *(*alloc_fn)(size_t);

void *ext_keep(size_t n)
{
	alloc_fn f = (alloc_fn)dlsym(RTLD_DEFAULT, "PyMem_Malloc");
	void *p = f(n); /* EXT-ALLOC */

	memset(p, 1, n);
	return p;
}

typedef void *(*type_alloc_fn)(void *, long);

/* a tuple of n items, made as an extension's tp_alloc makes one (kept) */
void *ext_tuple(long n)
{
	type_alloc_fn f = (type_alloc_fn)dlsym(RTLD_DEFAULT, "PyType_GenericAlloc");
	void *o = f(dlsym(RTLD_DEFAULT, "PyTuple_Type"), n); /* EXT-TUPLE */

	return o;
}
EOF
cat >"$TRASH/ext.py" <<'EOF'
import ctypes
import sys

lib = ctypes.PyDLL(sys.argv[1])
lib.ext_keep.restype = ctypes.c_void_p
lib.ext_keep.argtypes = [ctypes.c_size_t]
lib.ext_tuple.restype = ctypes.c_void_p
lib.ext_tuple.argtypes = [ctypes.c_long]
kept = []


def main():
    for _ in range(3):
        kept.append(lib.ext_keep(5000))  # EXT-CALL
    kept.append(lib.ext_tuple(1000))  # TUPLE-CALL
    kept.append([0] * 100000)  # LIST-LINE


main()
print(len(kept))
EOF
cat >"$TRASH/zones.py" <<'EOF'
import zoneinfo


def main():
    for key in ("UTC", "Europe/Berlin"):
        print(zoneinfo.ZoneInfo(key))


main()
EOF
cat >"$TRASH/sites.py" <<'EOF'
# the program's sites: "bytes blocks api first-native-frame|-"
import json, sys
for s in json.load(open(sys.argv[1]))["sites"]:
    if s["category"] != "program":
        continue
    f = s["frames"][0] if s["frames"] else None
    where = "%s@%s:%s" % (f.get("function"), f.get("file", "").rsplit("/", 1)[-1], f.get("line")) if f else "-"
    print(s["bytes"], s["blocks"], s["api"], where)
EOF
EXT_LINE=$(grep -n "EXT-ALLOC" "$TRASH/extlib.c" | cut -d: -f1)
TUPLE_LINE=$(grep -n "EXT-TUPLE" "$TRASH/extlib.c" | cut -d: -f1)
export EXT_LINE TUPLE_LINE

test_expect_success 'build extlib.so' '
	cc -g -O0 -shared -fPIC extlib.c -o extlib.so -ldl
'

for py in /usr/bin/python3 $PYENV/3.12.1/bin/python3 $PYENV/3.13.0/bin/python3 \
	  $PYENV/3.10.13/bin/python3; do
	[ -x "$py" ] || continue
	export py
	test_expect_success "the extension's blocks name its line; the interpreter's list has no native frame: $py" '
		d=$(echo "$py" | tr / _) &&
		st=0 && memprov run -d "$d" --check -- "$py" ext.py ./extlib.so >out 2>err || st=$?
		cat err && test $st = 23 && test "$(cat out)" = 5 &&
		memprov leaks --json "$d"/*.trace >leaks.json &&
		/usr/bin/python3 sites.py leaks.json >sites && cat sites &&
		test $(wc -l <sites) = 3 &&
		grep -Eq "^15000 3 (PyMem|PyObject)_Malloc ext_keep@extlib.c:$EXT_LINE$" sites &&
		grep -Eq "^80[0-9][0-9] 1 PyType_GenericAlloc ext_tuple@extlib.c:$TUPLE_LINE$" sites &&
		grep -q "^800000 1 malloc -$" sites
	'
done

test_expect_success 'the fast walk and libunwind cut the same frames (MEMPROV_UNWIND_CHECK)' '
	MEMPROV_UNWIND_CHECK=1 MEMPROV_OUTPUT="$TRASH/uc.trace" LD_PRELOAD="$MEMPROV_LIB" \
		/usr/bin/python3 ext.py ./extlib.so >out 2>err &&
	cat err && grep -q "unwind check: [1-9][0-9]* captures, .* 0 mismatches$" err
'

test_expect_success 'zoneinfo: the zones ZoneInfo keeps are set apart by its module; the gate passes' '
	memprov run -d zones --check -- /usr/bin/python3 zones.py >out 2>err &&
	cat err && test "$(cat out)" = "UTC
Europe/Berlin" &&
	grep -q "): ok$" err &&
	grep -q "in [1-9][0-9]* blocks: leak:_zoneinfo.cpython (default: zoneinfo.s time zones, kept by ZoneInfo.s cache)$" err &&
	st=0 && memprov check --no-default-suppressions zones >nd 2>&1 || st=$?
	cat nd && test $st = 1 && grep -q "_zoneinfo.cpython" nd
'

test_done
