#!/bin/sh
# t6030-parla-cudart.sh - the Parla workload's cudart backend (ctypes calls
# of cudaMalloc/cudaHostAlloc) over the fake CUDA runtime and driver, under
# memprov: device and pinned memory are reported in their own kinds, once
# each (the driver's host backing is not host heap), the leak is still the
# evict write-back line in host heap, and the retention of the caching
# device pool and the pinned staging pool is not a growing site.
. "$(dirname "$0")/test-lib.sh"

PY=/usr/bin/python3
WL=$TOP/scripts/parla_evict.py
# As t6010: 16 device copies of 2 MiB fit; 2 x 2 MiB leak per iteration
# from iteration 4. The device pool ends holding 16 blocks (32 MiB), the
# pinned staging pool one 2 MiB block.
SMALL="--groups 8 --arrays-per-group 4 --rows 262144 --cols 2 --gpu-budget 33554432 --write-every 2 --iters 12"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

$PY -c 'import numpy' 2>/dev/null || test_skip "/usr/bin/python3 has no numpy (apt-get install python3-numpy)"
test -f "$BIN/libcudart.so" && test -f "$BIN/libcuda.so.1" ||
	test_skip "no fake CUDA runtime in $BIN (needs the CUDA headers to build): cudart backend not tested"
# The fake runtime dlopens "libcuda.so.1" by name, as the real one does.
LD_LIBRARY_PATH=$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH

j() { $PY -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"; }
CUDART="--backend cudart --cudart $BIN/libcudart.so"
PARRAY=$TOP/scripts/parla/parray.py
LINE=$(grep -n "= np.empty(.*# memprov: write-back allocation" "$PARRAY" | cut -d: -f1)

# by_kind FILE KIND: (blocks, bytes) of the live sites of KIND, summed.
by_kind() {
	j "$1" "(sum(x[\"blocks\"] for x in s[\"sites\"] if x[\"kind\"] == \"$2\"), sum(x[\"bytes\"] for x in s[\"sites\"] if x[\"kind\"] == \"$2\"))"
}

test_expect_success 'bug mode, pools on: runs under memprov with the predicted evictions' '
	timeout 120 "$MEMPROV_CLI" run -o "$TRASH/bug.trace" -- $PY "$WL" --bug $CUDART $SMALL \
		--json-summary "$TRASH/bug.json" >bug.out 2>bug.err &&
	test "$(j bug.json s[\"prediction_matches\"])" = True &&
	test "$(j bug.json s[\"backend_stats\"])" = \
		"{'"'"'device_reserved'"'"': 33554432, '"'"'pinned_reserved'"'"': 2097152}"
'

test_expect_success 'leaks: device and pinned memory in their own kinds, exact' '
	memprov leaks --json --all bug.trace >l.json &&
	test "$(j l.json s[\"totals\"][\"device\"])" = "{'"'"'blocks'"'"': 16, '"'"'bytes'"'"': 33554432}" &&
	test "$(j l.json s[\"totals\"][\"pinned\"])" = "{'"'"'blocks'"'"': 1, '"'"'bytes'"'"': 2097152}" &&
	test "$(by_kind l.json device)" = "(16, 33554432)" &&
	test "$(by_kind l.json pinned)" = "(1, 2097152)" &&
	# named at the Python line that asked for them, through the driver entry
	test "$(j l.json "sorted(set((x[\"func\"], x[\"python\"][0][\"function\"]) for x in s[\"sites\"] if x[\"kind\"] in (\"device\", \"pinned\")))")" = \
		"[('"'"'cuMemAlloc'"'"', '"'"'CudartBackend._raw_alloc'"'"'), ('"'"'cuMemHostAlloc'"'"', '"'"'CudartBackend._pinned_alloc'"'"')]" &&
	# the fake driver backs them with host calloc: that is not host heap here
	test "$(j l.json "sum(x[\"bytes\"] for x in s[\"sites\"] if x[\"kind\"] in (\"heap\", \"mmap\") and any(\"libcuda\" in (f.get(\"module\") or \"\") for f in x[\"frames\"]))")" -lt 65536 &&
	# and the write-back arrays are host heap: 16 of 2 MiB at the end
	j l.json "[(x[\"blocks\"], x[\"bytes\"]) for x in s[\"sites\"] if x[\"kind\"] == \"heap\" and x[\"python\"] and x[\"python\"][0][\"function\"] == \"PArray._write_back_to_host\" and x[\"bytes\"] >= 2097152]" >wb &&
	echo "[(16, 33554432)]" >expect && test_cmp expect wb
'

test_expect_success 'growth: the write-back line first, in host heap, 4194304 B per iteration' '
	memprov growth --json --after "iter 4" bug.trace >g.json &&
	test "$(j g.json "s[\"suspects\"][0][\"python\"][0]")" = \
		"{'"'"'function'"'"': '"'"'PArray._write_back_to_host'"'"', '"'"'file'"'"': '"'"'$PARRAY'"'"', '"'"'line'"'"': $LINE}" &&
	test "$(j g.json "s[\"suspects\"][0][\"kind\"]")" = heap &&
	j g.json "s[\"suspects\"][0][\"slope_bytes\"]" >slope && cat slope &&
	$PY -c "import sys; e=4194304; s=float(sys.argv[1]); sys.exit(abs(s-e) > 0.05*e)" "$(cat slope)"
'

test_expect_success 'the pools retention is no growing site, with or without the warm-up' '
	for w in 4 0; do
		if test $w = 4; then set -- --after "iter 4"; else set --; fi
		memprov growth --json --all "$@" bug.trace >gw.json &&
		# no device or pinned suspect, no other host site growing by 512 KiB
		test "$(j gw.json "[x[\"kind\"] for x in s[\"suspects\"] if x[\"kind\"] != \"heap\"]")" = "[]" &&
		test "$(j gw.json "[x[\"python\"][0][\"function\"] for x in s[\"suspects\"] if x[\"growth_bytes\"] >= 524288]")" = \
			"['"'"'PArray._write_back_to_host'"'"']" &&
		# the pools are listed, in their kinds, as not growing
		test "$(j gw.json "sum(x[\"end_bytes\"] for x in s[\"others\"] if x[\"kind\"] == \"device\")")" = 33554432 &&
		test "$(j gw.json "sum(x[\"end_bytes\"] for x in s[\"others\"] if x[\"kind\"] == \"pinned\")")" = 2097152 ||
		exit 1
	done
'

test_expect_success 'fixed mode, pools on: nothing grows by 64 KiB; the pools are still there' '
	timeout 120 "$MEMPROV_CLI" run -o "$TRASH/fixed.trace" -- $PY "$WL" --fixed $CUDART $SMALL \
		--json-summary "$TRASH/fixed.json" >fixed.out 2>fixed.err &&
	test "$(j fixed.json s[\"prediction_matches\"])" = True &&
	memprov growth --json --min-bytes 64K fixed.trace >gf.json &&
	test "$(j gf.json "len(s[\"suspects\"])")" = 0 &&
	memprov growth --json --min-bytes 64K --after "iter 4" fixed.trace >gf4.json &&
	test "$(j gf4.json "len(s[\"suspects\"])")" = 0 &&
	memprov leaks --json --all fixed.trace >lf.json &&
	test "$(by_kind lf.json device)" = "(16, 33554432)" &&
	test "$(by_kind lf.json pinned)" = "(1, 2097152)"
'

test_expect_success 'bug mode, pools off: same leak; no pinned block left; devices hold the copies' '
	timeout 120 "$MEMPROV_CLI" run -o "$TRASH/np.trace" -- $PY "$WL" --bug $CUDART $SMALL \
		--no-device-pool --no-pinned-pool --json-summary "$TRASH/np.json" >np.out 2>np.err &&
	test "$(j np.json s[\"backend_stats\"][\"pinned_reserved\"])" = 0 &&
	memprov leaks --json --all np.trace >ln.json &&
	test "$(by_kind ln.json pinned)" = "(0, 0)" &&
	test "$(by_kind ln.json device)" = "(16, 33554432)" &&
	memprov growth --json --after "iter 4" np.trace >gn.json &&
	test "$(j gn.json "s[\"suspects\"][0][\"python\"][0][\"function\"]")" = PArray._write_back_to_host &&
	test "$(j gn.json "[x[\"kind\"] for x in s[\"suspects\"] if x[\"kind\"] != \"heap\"]")" = "[]"
'

test_done
