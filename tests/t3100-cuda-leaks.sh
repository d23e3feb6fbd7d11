#!/bin/sh
# t3100: the whole pipeline on the fake CUDA stack: libmemprov.so records,
# `memprov leaks --json` / `memprov stats --json` report. Device, pinned,
# managed and registered leaks apart from host leaks, exact bytes and
# blocks, at the scenario's file:line, for the shared runtime, the static
# runtime and the driver API; nothing counted twice; failures in stats.
. "$(dirname "$0")/test-lib.sh"

[ -x "$BIN/cuda-rt-dyn" ] || test_skip 'fake CUDA not built (needs /usr/local/cuda/include)'
[ -f "$MEMPROV_LIB" ] && [ -x "$MEMPROV_CLI" ] || test_skip 'libmemprov.so or memprov not built'
PY=/usr/bin/python3

# trace NAME PROG ARGS...: run under libmemprov.so, leaving NAME.trace
trace() {
	name=$1; shift
	timeout 60 env MEMPROV_OUTPUT="$TRASH/$name.trace" LD_LIBRARY_PATH="$BIN" \
		LD_PRELOAD="$MEMPROV_LIB" "$BIN/$@" >"$TRASH/$name.stdout"
}

# sites TRACE SRC: "kind func blocks bytes line" per CUDA site and per
# host site allocated directly by SRC, line = first frame in SRC, sorted;
# then "total kind blocks bytes" for the CUDA kinds
sites() {
	memprov leaks --json "$1" >"$1.json" &&
	$PY - "$1.json" "$2" <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
rows = []
for s in d["sites"]:
    line = "-"
    for f in s.get("frames", []):
        if (f.get("file") or "").endswith(sys.argv[2]):
            line = str(f.get("line"))
            break
    fr = s.get("frames") or [{}]
    direct = (fr[0].get("file") or "").endswith(sys.argv[2])
    if s["kind"] != "heap" or direct:
        rows.append("%s %s %d %d %s" % (s["kind"], s["func"], s["blocks"], s["bytes"], line))
for r in sorted(rows):
    print(r)
for k in ("pinned", "device", "managed", "registered"):
    t = d["totals"].get(k, {})
    print("total %s %d %d" % (k, t.get("blocks", 0), t.get("bytes", 0)))
P
}

L() { grep -n "$1" "$TOP/tests/cuda/$2" | head -1 | cut -d: -f1; }

rt_expect() { # $1: device name prefix style: rt or drv
	S=rt_scenario.c
	if [ "$1" = rt ]; then
		m=cudaMalloc h=cudaMallocHost mm=cudaMallocManaged p=cudaMallocPitch
		p3=cudaMalloc3D a=cudaMallocAsync r=cudaHostRegister
	else
		m=cuMemAlloc h=cuMemHostAlloc mm=cuMemAllocManaged p=cuMemAllocPitch
		p3=cuMemAllocPitch a=cuMemAllocAsync r=cuMemHostRegister
	fi
	{
	echo "device $m 1 1000 $(L LEAK_RT_DEVICE $S)"
	echo "device $p 1 5120 $(L LEAK_RT_PITCH $S)"
	echo "device $p3 1 4096 $(L LEAK_RT_3D $S)"
	echo "device $a 1 6000 $(L LEAK_RT_ASYNC $S)"
	echo "device $a 1 6500 $(L LEAK_RT_PTSZ $S)"
	echo "heap malloc 1 8192 $(L LEAK_HOST $S)"
	echo "managed $mm 1 5000 $(L LEAK_RT_MANAGED $S)"
	echo "pinned $h 1 3000 $(L LEAK_RT_PINNED $S)"
	echo "registered $r 1 8192 $(L LEAK_RT_REG $S)"
	} | sort
	echo "total pinned 1 3000"
	echo "total device 5 22716"
	echo "total managed 1 5000"
	echo "total registered 1 8192"
}

test_expect_success 'shared runtime: kinds apart, exact bytes, runtime names, file:line' '
	trace dyn cuda-rt-dyn basic &&
	sites dyn.trace rt_scenario.c >actual &&
	rt_expect rt >expect && test_cmp expect actual
'

test_expect_success 'static runtime: the same leaks under the driver names' '
	trace st cuda-rt-static basic &&
	sites st.trace rt_scenario.c >actual &&
	rt_expect drv >expect && test_cmp expect actual
'

test_expect_success 'nothing counted twice: no host block from inside the fake driver' '
	$PY -c "
import json, sys
d = json.load(open(\"dyn.trace.json\"))
bad = [s for s in d[\"sites\"] if s[\"kind\"] in (\"heap\", \"mmap\") and any(
    (f.get(\"function\") or \"\") in (\"dev_alloc\", \"host_alloc\") for f in s.get(\"frames\", []))]
sys.exit(1 if bad else 0)" &&
	$PY -c "
import json, sys
d = json.load(open(\"st.trace.json\"))
bad = [s for s in d[\"sites\"] if s[\"kind\"] in (\"heap\", \"mmap\") and any(
    (f.get(\"function\") or \"\") in (\"dev_alloc\", \"host_alloc\") for f in s.get(\"frames\", []))]
sys.exit(1 if bad else 0)"
'

test_expect_success 'driver API: device 1, mapped virtual memory live, unmapped not' '
	trace drv cuda-drv basic &&
	sites drv.trace drv_scenario.c >actual &&
	S=drv_scenario.c &&
	{
	echo "device cuMemAlloc 1 1111 $(L LEAK_DRV_DEVICE $S)"
	echo "device cuMemAlloc 1 7777 $(L LEAK_DRV_GPA $S)"
	echo "device cuMemAllocAsync 1 8888 $(L LEAK_DRV_ASYNC $S)"
	echo "device cuMemAllocPitch 1 3072 $(L LEAK_DRV_PITCH $S)"
	echo "device cuMemMap 1 2097152 $(L LEAK_DRV_MAP $S)"
	echo "heap malloc 1 4096 $(L LEAK_DRV_HOST $S)"
	echo "managed cuMemAllocManaged 1 5555 $(L LEAK_DRV_MANAGED $S)"
	echo "pinned cuMemAllocHost 1 3333 $(L LEAK_DRV_PINNED $S)"
	echo "registered cuMemHostRegister 1 4096 $(L LEAK_DRV_REG $S)"
	} | sort >expect &&
	cat >>expect <<-X &&
	total pinned 1 3333
	total device 5 2118000
	total managed 1 5555
	total registered 1 4096
	X
	test_cmp expect actual
'

test_expect_success 'context destruction and device reset free what the context owned' '
	trace ctx cuda-drv ctx && sites ctx.trace drv_scenario.c >actual &&
	cat >expect <<-X &&
	device cuMemAlloc 1 4000 $(L LEAK_DRV_AFTER_RESET drv_scenario.c)
	total pinned 0 0
	total device 1 4000
	total managed 0 0
	total registered 0 0
	X
	test_cmp expect actual &&
	trace rst cuda-rt-dyn reset && sites rst.trace rt_scenario.c >actual2 &&
	cat >expect2 <<-X &&
	device cudaMalloc 1 4444 $(L LEAK_AFTER_RESET rt_scenario.c)
	total pinned 0 0
	total device 1 4444
	total managed 0 0
	total registered 0 0
	X
	test_cmp expect2 actual2
'

test_expect_success 'out of memory: failures in stats with their code, never live' '
	FAKECUDA_MEM_BYTES=1000000 trace oom cuda-rt-dyn oom &&
	sites oom.trace rt_scenario.c >actual &&
	grep -q "^total device 1 600000$" actual &&
	memprov stats --json oom.trace >stats.json &&
	$PY -c "
import json
d = json.load(open(\"stats.json\"))
for f in sorted(d[\"failures\"], key=lambda f: (f[\"func\"], f[\"size\"])):
    print(f[\"func\"], f[\"kind\"], f[\"size\"], f[\"result\"], f[\"count\"])
print(\"cudaMalloc\", d[\"functions\"][\"cudaMalloc\"][\"calls\"], d[\"functions\"][\"cudaMalloc\"][\"failed\"])
" >failures &&
	cat >expect <<-X &&
	cudaMalloc device 600000 2 1
	cudaMallocAsync device 2000000 2 1
	cudaMalloc 2 1
	X
	test_cmp expect failures
'

test_expect_success 'eight threads: exact device total, pinned all freed' '
	trace thr cuda-rt-dyn threads && sites thr.trace rt_scenario.c >actual &&
	cat >expect <<-X &&
	device cudaMalloc 200 204800 $(L LEAK_THREAD rt_scenario.c)
	total pinned 0 0
	total device 200 204800
	total managed 0 0
	total registered 0 0
	X
	test_cmp expect actual
'

test_done
