#!/bin/sh
# tests/gpu/run.sh - memprov's CUDA tracking on a machine with a real GPU.
#
# Builds (with the machine's nvcc) and runs under libmemprov.so:
#   1. tests/cuda/nvcc_gpu.cu, static runtime (nvcc's default)
#   2. the same with -cudart shared
#   3. tests/cuda/rt_scenario.c basic/reset/threads against the REAL
#      libcudart.so (not the fake) and the real driver
#   4. CuPy and 5. PyTorch allocations, when they import
# and checks the device and pinned bytes `memprov leaks --json` reports
# live against what each program left allocated. Ends with a summary line
# "gpu: N passed, N failed, N skipped"; exit 1 when anything failed.
# Run from the repository root after `make`; takes well under 5 minutes.
cd "$(dirname "$0")/../.." || exit 2
TOP=$(pwd)
LIB=$TOP/interpose/libmemprov.so
CLI=$TOP/analyzer/memprov
CUDA=${CUDA_HOME:-/usr/local/cuda}
NVCC=$CUDA/bin/nvcc
OUT=${GPU_OUT:-$TOP/tests/out/gpu}
PY=${PYTHON:-python3}
rm -rf "$OUT" && mkdir -p "$OUT"
pass=0 fail=0 skip=0

ok() { pass=$((pass + 1)); echo "ok - $1"; }
bad() { fail=$((fail + 1)); echo "FAIL - $1"; }
skipped() { skip=$((skip + 1)); echo "skip - $1"; }

[ -f "$LIB" ] && [ -x "$CLI" ] || { echo "build first: make"; exit 2; }
command -v nvidia-smi >/dev/null && nvidia-smi -L | head -4

# totals TRACE: "device_bytes device_blocks pinned_bytes pinned_blocks"
totals() {
	"$CLI" leaks --json "$1" | "${JSONPY:-/usr/bin/python3}" -c '
import json, sys
t = json.load(sys.stdin)["totals"]
print(t["device"]["bytes"], t["device"]["blocks"], t["pinned"]["bytes"], t["pinned"]["blocks"])'
}

# check NAME EXPECTED CMD...: run CMD under memprov, compare totals
check() {
	name=$1 want=$2; shift 2
	timeout 120 env MEMPROV_OUTPUT="$OUT/$name.trace" LD_PRELOAD="$LIB" "$@" \
		>"$OUT/$name.out" 2>&1
	rc=$?
	if [ "$rc" != 0 ]; then
		bad "$name: exit status $rc (see $OUT/$name.out)"
		tail -5 "$OUT/$name.out"
		return
	fi
	got=$(totals "$OUT/$name.trace")
	if [ "$got" = "$want" ]; then
		ok "$name: live device/pinned bytes,blocks = $got"
	else
		bad "$name: live device/pinned = '$got', expected '$want'"
	fi
}

# 1, 2: nvcc programs, static and shared runtime. The program leaves
# 3 MiB device (2 blocks) and 8192 pinned (1 block); a kernel runs.
cat >"$OUT/nvcc_gpu.cu" <<'X'
#include <cstdio>
#include <cuda_runtime.h>
__global__ void fill(char *p, size_t n) { size_t i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = 1; }
int main()
{
	void *a, *b, *c, *h, *h2, *m;
	cudaStream_t s;
	if (cudaMalloc(&a, 1 << 20) || cudaMalloc(&b, 2 << 20) || cudaMalloc(&c, 4 << 20)) return 3;
	if (cudaHostAlloc(&h, 8192, 0) || cudaMallocHost(&h2, 4096)) return 4;
	if (cudaMallocManaged(&m, 65536)) return 5;
	fill<<<8, 128>>>((char *)a, 1 << 20);
	if (cudaDeviceSynchronize()) return 6;
	cudaFree(c); cudaFreeHost(h2); cudaFree(m);
	if (cudaStreamCreate(&s)) return 7;
	void *x, *y;
	if (cudaMallocAsync(&x, 1 << 20, s) || cudaMallocAsync(&y, 1 << 20, s)) return 8;
	cudaFreeAsync(x, s); cudaFreeAsync(y, s);
	cudaStreamSynchronize(s);
	printf("done\n");
	return 0;
}
X
if [ -x "$NVCC" ]; then
	if "$NVCC" -o "$OUT/nvcc-static" "$OUT/nvcc_gpu.cu" &&
	   "$NVCC" -cudart shared -o "$OUT/nvcc-shared" "$OUT/nvcc_gpu.cu"; then
		check nvcc-static "3145728 2 8192 1" "$OUT/nvcc-static"
		check nvcc-shared "3145728 2 8192 1" "$OUT/nvcc-shared"
	else
		bad "nvcc build failed"
	fi
else
	skipped "no nvcc at $NVCC"
fi

# 3: the fake-CUDA scenario program, against the real runtime and driver.
if cc -std=gnu11 -O0 -g -D_GNU_SOURCE -I"$CUDA/include" -o "$OUT/rt-real" \
	tests/cuda/rt_scenario.c -L"$CUDA/lib64" -lcudart -lpthread \
	-Wl,-rpath,"$CUDA/lib64" 2>"$OUT/rt-real.build"; then
	# real pitch differs from the fake's 512: read it from the program
	timeout 120 env MEMPROV_OUTPUT="$OUT/rt-basic.trace" LD_PRELOAD="$LIB" \
		"$OUT/rt-real" basic >"$OUT/rt-basic.out" 2>&1
	rc=$?
	set -- $(sed -n 's/^pitch //p' "$OUT/rt-basic.out")
	if [ "$rc" = 0 ] && [ $# = 2 ]; then
		want=$((1000 + $1 * 10 + $2 * 8 + 6000 + 6500))
		got=$(totals "$OUT/rt-basic.trace")
		if [ "$got" = "$want 5 3000 1" ]; then ok "rt-basic (real runtime): $got"
		else bad "rt-basic (real runtime): '$got', expected '$want 5 3000 1'"; fi
	else
		bad "rt-basic (real runtime): exit $rc"; tail -5 "$OUT/rt-basic.out"
	fi
	check rt-reset "4444 1 0 0" "$OUT/rt-real" reset
	check rt-threads "204800 200 0 0" "$OUT/rt-real" threads
else
	bad "rt_scenario.c against the real runtime did not build"
fi

# 4: CuPy. Pools hide frees: disable them so live bytes are exact.
cat >"$OUT/cupy_t.py" <<'X'
import cupy
cupy.cuda.set_allocator(None)
cupy.cuda.set_pinned_memory_allocator(None)
keep = [cupy.zeros(1 << 20, dtype=cupy.uint8), cupy.ones(3 << 20, dtype=cupy.uint8)]
tmp = cupy.zeros(5 << 20, dtype=cupy.uint8); del tmp
pinned = cupy.cuda.alloc_pinned_memory(65536)
cupy.cuda.Device().synchronize()
import os; os._exit(0)  # live at exit: what the script still holds
X
if "$PY" -c 'import cupy; cupy.zeros(1)' >/dev/null 2>&1; then
	check cupy "4194304 2 65536 1" "$PY" "$OUT/cupy_t.py"
else
	skipped "cupy does not import"
fi

# 5: PyTorch. The caching allocator rounds and keeps segments: compare
# with what torch itself reserved (torch.cuda.memory_reserved).
cat >"$OUT/torch_t.py" <<'X'
import os, torch
keep = [torch.zeros(1 << 20, dtype=torch.uint8, device="cuda"), torch.ones(3 << 20, dtype=torch.uint8, device="cuda")]
pin = torch.empty(1 << 16, dtype=torch.uint8).pin_memory()
torch.cuda.synchronize()
open(os.environ["TORCH_RESERVED"], "w").write("%d\n" % torch.cuda.memory_reserved())
os._exit(0)
X
if "$PY" -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1; then
	timeout 180 env TORCH_RESERVED="$OUT/torch.reserved" MEMPROV_OUTPUT="$OUT/torch.trace" \
		LD_PRELOAD="$LIB" "$PY" "$OUT/torch_t.py" >"$OUT/torch.out" 2>&1
	rc=$?
	got=$(totals "$OUT/torch.trace" 2>/dev/null)
	reserved=$(cat "$OUT/torch.reserved" 2>/dev/null)
	dev=${got%% *}
	pinned=$(echo "$got" | cut -d" " -f3)
	# device: cudaMalloc'd segments = reserved, plus the runtime's own
	# (cuBLAS workspace etc. are not allocated by this script)
	if [ "$rc" = 0 ] && [ -n "$reserved" ] && [ "$dev" -ge "$reserved" ] && [ "$pinned" -ge 65536 ]; then
		ok "torch: live device $dev >= reserved $reserved, pinned $pinned >= 65536"
	else
		bad "torch: exit $rc, totals '$got', reserved '$reserved'"; tail -5 "$OUT/torch.out"
	fi
else
	skipped "torch does not import or sees no GPU"
fi

echo "gpu: $pass passed, $fail failed, $skip skipped"
[ "$fail" = 0 ]
