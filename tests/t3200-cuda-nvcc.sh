#!/bin/sh
# t3200: programs built by the machine's real nvcc (static runtime, the
# default, and -cudart shared) under libmemprov.so. Without a GPU their
# calls fail (35): same output and exit status with and without memprov,
# and the shared runtime's failures are in `memprov stats`. Pointed at the
# fake libcuda.so.1, the real runtime's every cuGetProcAddress call comes
# through memprov's wrappers (FAKECUDA_LOG names the caller's object).
. "$(dirname "$0")/test-lib.sh"

[ -x "$BIN/cuda-nvcc-static" ] && [ -x "$BIN/cuda-nvcc-shared" ] ||
	test_skip 'nvcc programs not built (needs /usr/local/cuda/bin/nvcc)'
[ -f "$MEMPROV_LIB" ] && [ -x "$MEMPROV_CLI" ] || test_skip 'libmemprov.so or memprov not built'
if [ -e /dev/nvidia0 ] || ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
	test_skip 'a CUDA driver is installed: tests/gpu/run.sh covers the real GPU'
fi
PY=/usr/bin/python3

for v in static shared; do
	test_expect_success "nvcc $v runtime, no GPU: output and exit status unchanged" '
		set +e
		timeout 60 "$BIN/cuda-nvcc-'$v'" >plain; rc1=$?
		timeout 60 env MEMPROV_OUTPUT="$TRASH/'$v'.trace" LD_PRELOAD="$MEMPROV_LIB" \
			"$BIN/cuda-nvcc-'$v'" >traced; rc2=$?
		set -e
		test "$rc1" = 7 && test "$rc2" = 7 && test_cmp plain traced &&
		grep -q "^cudaMalloc 35$" traced
	'
done

test_expect_success 'shared runtime: the failed calls are in stats with code 35' '
	memprov stats --json shared.trace >stats.json &&
	$PY -c "
import json
d = json.load(open(\"stats.json\"))
for f in sorted(d[\"failures\"], key=lambda f: (f[\"func\"], f[\"size\"])):
    print(f[\"func\"], f[\"kind\"], f[\"size\"], f[\"result\"], f[\"count\"])
" >actual &&
	cat >expect <<-X &&
	cudaHostAlloc pinned 4096 35 1
	cudaMalloc device 1048576 35 1
	cudaMalloc device 2097152 35 1
	X
	test_cmp expect actual &&
	memprov leaks --json shared.trace >leaks.json &&
	$PY -c "
import json
t = json.load(open(\"leaks.json\"))[\"totals\"]
print(t[\"device\"][\"bytes\"], t[\"pinned\"][\"bytes\"])" >live &&
	echo "0 0" >zero && test_cmp zero live
'

for v in static shared; do
	test_expect_success "real $v runtime on the fake driver: lookups go through memprov" '
		rm -f gpa.log &&
		set +e
		timeout 60 env FAKECUDA_LOG="$TRASH/gpa.log" LD_LIBRARY_PATH="$BIN" \
			MEMPROV_OUTPUT="$TRASH/fake-'$v'.trace" LD_PRELOAD="$MEMPROV_LIB" \
			"$BIN/cuda-nvcc-'$v'" >traced; rc=$?
		timeout 60 env LD_LIBRARY_PATH="$BIN" "$BIN/cuda-nvcc-'$v'" >plain; rc0=$?
		set -e
		test "$rc" = "$rc0" && test_cmp plain traced &&
		grep -q "gpa cuMemAlloc " gpa.log &&
		grep -c "caller=libmemprov.so" gpa.log >n && wc -l <gpa.log >all &&
		test_cmp all n && test "$(cat n)" -ge 100
	'
done

test_done
