#!/bin/sh
# t3000: the CUDA hooks alone (interpose/hooks_cuda.c, hooks_dlsym.c) over
# a recorder stub that prints each event (tests/fakecuda/recstub.c), on the
# fake driver and runtime: exact event streams for the shared runtime, the
# runtime linked statically, the driver API, contexts, out-of-memory,
# threads, versioned/per-thread lookups, dlsym(RTLD_NEXT) and MEMPROV_CUDA=0.
. "$(dirname "$0")/test-lib.sh"

[ -x "$BIN/cuda-rt-dyn" ] && [ -f "$BIN/libmemprov_cudastub.so" ] ||
	test_skip 'fake CUDA not built (needs /usr/local/cuda/include)'

# stub OUT PROG ARGS...: run under the stub; events without addresses in OUT
stub() {
	out=$1; shift
	rm -f "$out.raw"
	RECSTUB_OUT=$out.raw LD_LIBRARY_PATH=$BIN LD_PRELOAD=$BIN/libmemprov_cudastub.so \
		timeout 60 "$BIN/$@" >"$out.stdout"
	rc=$?
	touch "$out.raw"
	sed 's/ addr=[^ ]*$//; s/ stream=0x[0-9a-f]*/ stream=S/' "$out.raw" >"$out"
	return $rc
}

cat >"$TRASH/rt.expect" <<'X'
alloc RT device size=1000 stream=0 dev=0 result=0 extra=0 flags=0
alloc RT device size=2000 stream=0 dev=0 result=0 extra=0 flags=0
free RTFREE device stream=0 dev=0 result=0 flags=0
alloc RTHOST pinned size=3000 stream=0 dev=0 result=0 extra=0 flags=0
alloc RTHOSTALLOC pinned size=4000 stream=0 dev=0 result=0 extra=0 flags=0
free RTFREEHOST pinned stream=0 dev=0 result=0 flags=0
alloc RTMANAGED managed size=5000 stream=0 dev=0 result=0 extra=1 flags=0
alloc RTPITCH device size=5120 stream=0 dev=0 result=0 extra=512 flags=0
alloc RT3D device size=4096 stream=0 dev=0 result=0 extra=512 flags=0
alloc RTASYNC device size=6000 stream=S dev=0 result=0 extra=0 flags=4
alloc RTASYNC device size=7000 stream=S dev=0 result=0 extra=0 flags=4
free RTFREEASYNC device stream=S dev=0 result=0 flags=4
alloc RTASYNC device size=6500 stream=S dev=0 result=0 extra=0 flags=4
alloc RTASYNC device size=7500 stream=S dev=0 result=0 extra=0 flags=4
free RTFREEASYNC device stream=S dev=0 result=0 flags=4
alloc RTREG registered size=8192 stream=0 dev=0 result=0 extra=0 flags=0
alloc RTREG registered size=4096 stream=0 dev=0 result=0 extra=0 flags=0
free RTUNREG registered stream=0 dev=0 result=0 flags=0
X

test_expect_success 'shared runtime: one event per call, under the runtime name' '
	stub ev cuda-rt-dyn basic &&
	sed "s/RTFREEASYNC/cudaFreeAsync/; s/RTFREEHOST/cudaFreeHost/; s/RTFREE/cudaFree/;
	     s/RTHOSTALLOC/cudaHostAlloc/; s/RTHOST/cudaMallocHost/; s/RTMANAGED/cudaMallocManaged/;
	     s/RTPITCH/cudaMallocPitch/; s/RT3D/cudaMalloc3D/; s/RTASYNC/cudaMallocAsync/;
	     s/RTREG/cudaHostRegister/; s/RTUNREG/cudaHostUnregister/; s/RT /cudaMalloc /" \
		"$TRASH/rt.expect" >expect &&
	test_cmp expect ev
'

test_expect_success 'static runtime: the same events, under the driver names' '
	stub ev cuda-rt-static basic &&
	sed "s/RTFREEASYNC/cuMemFreeAsync/; s/RTFREEHOST/cuMemFreeHost/; s/RTFREE/cuMemFree/;
	     s/RTHOSTALLOC/cuMemHostAlloc/; s/RTHOST/cuMemHostAlloc/; s/RTMANAGED/cuMemAllocManaged/;
	     s/RTPITCH/cuMemAllocPitch/; s/RT3D/cuMemAllocPitch/; s/RTASYNC/cuMemAllocAsync/;
	     s/RTREG/cuMemHostRegister/; s/RTUNREG/cuMemHostUnregister/; s/RT /cuMemAlloc /" \
		"$TRASH/rt.expect" >expect &&
	test_cmp expect ev
'

test_expect_success 'driver API linked directly: device 1, virtual memory, cuGetProcAddress' '
	stub ev cuda-drv basic &&
	cat >expect <<-X &&
	alloc cuMemAlloc device size=1111 stream=0 dev=1 result=0 extra=0 flags=0
	alloc cuMemAlloc device size=2222 stream=0 dev=1 result=0 extra=0 flags=0
	free cuMemFree device stream=0 dev=1 result=0 flags=0
	alloc cuMemAllocHost pinned size=3333 stream=0 dev=1 result=0 extra=0 flags=0
	alloc cuMemHostAlloc pinned size=4444 stream=0 dev=1 result=0 extra=0 flags=0
	free cuMemFreeHost pinned stream=0 dev=1 result=0 flags=0
	alloc cuMemAllocManaged managed size=5555 stream=0 dev=1 result=0 extra=1 flags=0
	alloc cuMemAllocPitch device size=3072 stream=0 dev=1 result=0 extra=1024 flags=0
	alloc cuMemHostRegister registered size=4096 stream=0 dev=1 result=0 extra=0 flags=0
	alloc cuMemMap device size=2097152 stream=0 dev=1 result=0 extra=1 flags=0
	alloc cuMemMap device size=1048576 stream=0 dev=1 result=0 extra=2 flags=0
	free cuMemUnmap device stream=0 dev=1 result=0 flags=0
	alloc cuMemAlloc device size=7777 stream=0 dev=1 result=0 extra=0 flags=0
	alloc cuMemAllocAsync device size=8888 stream=S dev=1 result=0 extra=0 flags=4
	alloc cuMemAllocAsync device size=9999 stream=S dev=1 result=0 extra=0 flags=4
	free cuMemFreeAsync device stream=S dev=1 result=0 flags=4
	X
	test_cmp expect ev
'

test_expect_success 'context destruction and primary context reset' '
	stub ev cuda-drv ctx &&
	cat >expect <<-X &&
	alloc cuMemAlloc device size=1000 stream=0 dev=0 result=0 extra=0 flags=0
	alloc cuMemAllocHost pinned size=2000 stream=0 dev=0 result=0 extra=0 flags=0
	reset cuCtxDestroy dev=0
	alloc cuMemAlloc device size=3000 stream=0 dev=1 result=0 extra=0 flags=0
	reset cuDevicePrimaryCtxReset dev=1
	alloc cuMemAlloc device size=4000 stream=0 dev=1 result=0 extra=0 flags=0
	X
	test_cmp expect ev &&
	stub ev2 cuda-rt-dyn reset &&
	cat >expect2 <<-X &&
	alloc cudaMalloc device size=1000 stream=0 dev=0 result=0 extra=0 flags=0
	alloc cudaMallocHost pinned size=2000 stream=0 dev=0 result=0 extra=0 flags=0
	alloc cudaMallocManaged managed size=3000 stream=0 dev=0 result=0 extra=1 flags=0
	reset cudaDeviceReset dev=0
	alloc cudaMalloc device size=4444 stream=0 dev=0 result=0 extra=0 flags=0
	X
	test_cmp expect2 ev2
'

test_expect_success 'out of memory: failures with the error code, no address' '
	FAKECUDA_MEM_BYTES=1000000 stub ev cuda-rt-dyn oom &&
	cat >expect <<-X &&
	alloc cudaMalloc device size=600000 stream=0 dev=0 result=0 extra=0 flags=0
	alloc cudaMalloc device size=600000 stream=0 dev=0 result=2 extra=0 flags=1
	alloc cudaMallocAsync device size=2000000 stream=0 dev=0 result=2 extra=0 flags=5
	X
	test_cmp expect ev &&
	grep -c "addr=0$" ev.raw >n && echo 2 >two && test_cmp two n &&
	FAKECUDA_MEM_BYTES=10000 stub ev2 cuda-drv oom &&
	cat >expect2 <<-X &&
	alloc cuMemAlloc device size=20000 stream=0 dev=0 result=2 extra=0 flags=1
	alloc cuMemCreate device size=30000 stream=0 dev=0 result=2 extra=0 flags=1
	X
	test_cmp expect2 ev2
'

test_expect_success 'no driver: the runtime hook records the failure (35)' '
	mkdir -p nodrv && cp "$BIN/libcudart.so" nodrv/ &&
	RECSTUB_OUT=$TRASH/nd.raw LD_LIBRARY_PATH=$TRASH/nodrv \
		LD_PRELOAD=$BIN/libmemprov_cudastub.so timeout 60 "$BIN/cuda-rt-dyn" nodriver >out &&
	echo "cudaMalloc 35" >expect && test_cmp expect out &&
	echo "alloc cudaMalloc device size=4096 stream=0 dev=-1 result=35 extra=0 flags=1 addr=0" >expect &&
	test_cmp expect nd.raw
'

test_expect_success 'eight threads at once: every event, none lost or doubled' '
	stub ev cuda-rt-dyn threads &&
	grep -c "^alloc cudaMalloc device size=1024 .*result=0" ev >n1 && echo 400 >e1 && test_cmp e1 n1 &&
	grep -c "^free cudaFree device" ev >n2 && echo 200 >e2 && test_cmp e2 n2 &&
	grep -c "^alloc cudaMallocHost pinned size=256 " ev >n3 && echo 400 >e3 && test_cmp e3 n3 &&
	grep -c "^free cudaFreeHost pinned" ev >n4 && echo 400 >e4 && test_cmp e4 n4 &&
	wc -l <ev >n5 && echo 1400 >e5 && test_cmp e5 n5
'

test_expect_success 'entry points by version and per-thread flag: own wrappers, legacy ABI untouched' '
	stub ev cuda-rt-dyn gpa &&
	cat >expect <<-X &&
	alloc cuMemAlloc device size=1234 stream=0 dev=0 result=0 extra=0 flags=0
	alloc cuMemAllocAsync device size=2345 stream=S dev=0 result=0 extra=0 flags=4
	alloc cuMemAllocAsync device size=3456 stream=S dev=0 result=0 extra=0 flags=4
	X
	test_cmp expect ev &&
	grep -q "^call legacy cuMemAlloc 801$" ev.stdout &&
	grep -q "^distinct 1$" ev.stdout
'

test_expect_success 'the runtime reaches the driver through our dlsym and cuGetProcAddress' '
	rm -f gpa.log &&
	FAKECUDA_LOG=$TRASH/gpa.log stub ev cuda-rt-dyn basic &&
	grep -c "caller=libmemprov_cudastub.so" gpa.log >n && wc -l <gpa.log >all &&
	test_cmp all n && test "$(cat n)" -ge 20
'

test_expect_success 'MEMPROV_CUDA=0: no events, same output' '
	MEMPROV_CUDA=0 stub ev cuda-rt-dyn basic && test ! -s ev &&
	LD_LIBRARY_PATH=$BIN timeout 60 "$BIN/cuda-rt-dyn" basic >plain &&
	test_cmp plain ev.stdout &&
	rm -f gpa.log && FAKECUDA_LOG=$TRASH/gpa.log MEMPROV_CUDA=0 stub ev2 cuda-rt-static basic &&
	! grep -q libmemprov gpa.log
'

# A preloaded library that finds the next definition of a function with
# dlsym(RTLD_NEXT): through our dlsym it must still get libc's, not its own.
test_expect_success 'dlsym(RTLD_NEXT) from another preloaded library finds the next definition' '
	cat >next.c <<-X &&
	#define _GNU_SOURCE
	#include <dlfcn.h>
	#include <stdio.h>
	#include <string.h>
	size_t strlen(const char *s)
	{
		size_t (*next)(const char *) = (size_t (*)(const char *))dlsym(RTLD_NEXT, "strlen");
		return next ? next(s) + 1000 : 0;
	}
	X
	cat >main.c <<-X &&
	#include <stdio.h>
	#include <string.h>
		const char *word = "abcd";
	int main(void) { printf("%zu\n", strlen(word)); return 0; }
	X
	cc -shared -fPIC -O0 -o libnext.so next.c -ldl && cc -O0 -fno-builtin -o main main.c &&
	LD_PRELOAD="$BIN/libmemprov_cudastub.so $TRASH/libnext.so" ./main >out &&
	echo 1004 >expect && test_cmp expect out &&
	LD_PRELOAD="$TRASH/libnext.so $BIN/libmemprov_cudastub.so" ./main >out2 &&
	test_cmp expect out2
'

test_done
