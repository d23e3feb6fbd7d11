#!/bin/sh
# t3110: a CUDA runtime that a library brought (tests/bin/libcudaplug.so,
# opened with dlopen as Python opens an extension) under libmemprov.so:
# the runtime hooks reach it though it is in no global scope (RTLD_LOCAL),
# they follow it when it is unloaded and loaded again elsewhere, a program
# without a runtime in its global scope does not find memprov's, and a
# free or reset that fails leaves the blocks live; a driver opened and
# closed again and again has every allocation recorded. The program's
# output, stderr and status are the bare run's in each case.
. "$(dirname "$0")/test-lib.sh"

[ -x "$BIN/cuda-plugin" ] || test_skip 'fake CUDA not built (needs /usr/local/cuda/include)'
[ -f "$MEMPROV_LIB" ] && [ -x "$MEMPROV_CLI" ] || test_skip 'libmemprov.so or memprov not built'
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }

# both MODE: the scenario bare, then traced into MODE.trace; the same stdout and status
both() {
	st=0 && LD_LIBRARY_PATH="$BIN" timeout 60 "$BIN/cuda-plugin" "$1" >"$1.bare" 2>"$1.bare.err" || st=$?
	tst=0 && LD_LIBRARY_PATH="$BIN" timeout 60 env MEMPROV_OUTPUT="$TRASH/$1.trace" \
		LD_PRELOAD="$MEMPROV_LIB" "$BIN/cuda-plugin" "$1" >"$1.traced" 2>"$1.traced.err" || tst=$?
	test "$st" = 0 && test "$tst" = 0 && test_cmp "$1.bare" "$1.traced" &&
	test_cmp "$1.bare.err" "$1.traced.err"
}

# device MODE BLOCKS BYTES: what leaks --json counts live on the device, all under cudaMalloc
device() {
	memprov leaks --json "$1.trace" >"$1.json" &&
	/usr/bin/python3 - "$1.json" "$2" "$3" <<-\EOF
	import json, sys
	d = json.load(open(sys.argv[1]))
	got = (d["totals"]["device"]["blocks"], d["totals"]["device"]["bytes"])
	assert got == (int(sys.argv[2]), int(sys.argv[3])), got
	assert {s["api"] for s in d["sites"] if s["kind"] == "device"} == {"cudaMalloc"}, d["sites"]
	EOF
}

test_expect_success 'a runtime opened RTLD_LOCAL: reached, recorded; the global scope has none' '
	both reload &&
	grep -c "in the global scope: none" reload.bare >n && echo 2 >want && test_cmp want n &&
	grep -c "^cudaMalloc([0-9]*) = 0$" reload.bare >n && test_cmp want n &&
	device reload 2 3000
'

test_expect_success 'a runtime unloaded and loaded again elsewhere: the hooks follow it' '
	both reload-global &&
	grep -c "^cudaMalloc([0-9]*) = 0$" reload-global.bare >n && echo 2 >want && test_cmp want n &&
	device reload-global 2 3000
'

test_expect_success 'a runtime reloaded, then 65,533 dlopens and dlcloses: the hooks still follow it' '
	both reload-wrap &&
	device reload-wrap 2 3000
'

test_expect_success 'two plugins with a runtime each (RTLD_LOCAL): each reaches its own' '
	# the second runtime'"'"'s device is 1: its allocation is made, and
	# recorded, there; the first plugin'"'"'s on device 0
	both two &&
	memprov dump two.trace | sed -n "s/.*gpu_alloc cudaMalloc device .* size=\([0-9]*\) .* device=\([0-9]*\) .*/\1 \2/p" >got &&
	printf "1000 1\n2000 0\n" >want && test_cmp want got
'

test_expect_success 'a cudaFree that fails leaves its block live, counted once' '
	both failfree &&
	grep -x "cudaFree = 999" failfree.bare &&
	device failfree 1 1000 &&
	memprov stats --json failfree.trace >st.json &&
	jget --check st.json functions.cudaFree.calls=1 functions.cudaFree.failed=1 unmatched_frees=0
'

test_expect_success 'a cudaDeviceReset that fails leaves every block live' '
	both failreset &&
	grep -x "cudaDeviceReset = 999" failreset.bare &&
	device failreset 2 3000
'

test_expect_success 'a driver opened and closed six times: every allocation recorded, nothing said' '
	both driver &&
	grep -c "^cuMemAlloc_v2(100) = 0$" driver.bare >n && echo 6 >want && test_cmp want n &&
	# each fresh fake driver hands out the same address: calls are counted, not live blocks
	memprov stats --json driver.trace >driver.json &&
	jget --check driver.json functions.cuMemAlloc.calls=6 functions.cuMemAlloc.bytes=600 \
		functions.cuMemAlloc.failed=0
'

test_done
