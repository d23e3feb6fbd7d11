#!/bin/sh
# t6000-parla-workload.sh - the Parla eviction workload itself, without
# memprov: bug mode grows by array bytes x dirty evictions per iteration,
# fixed mode stays flat, the eviction counts are exactly the predicted
# ones, marks are one per iteration, both backends run, and a bug-mode run
# under an address-space limit dies with its progress printed.
. "$(dirname "$0")/test-lib.sh"

PY=/usr/bin/python3
WL=$TOP/scripts/parla_evict.py
# 8 groups x 4 arrays of 2 MiB (262144 x 2 float32); room for 16 arrays
# per GPU, so eviction starts at iteration 4; every 2nd task writes, so 4
# evictions, 2 of them dirty, per iteration; each PArray's first dirty
# eviction leaks one array: iterations 4-11 each leak 2 x 2097152 bytes.
SMALL="--groups 8 --arrays-per-group 4 --rows 262144 --cols 2 --gpu-budget 33554432 --write-every 2 --iters 12"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1

$PY -c 'import numpy' 2>/dev/null || test_skip "/usr/bin/python3 has no numpy (apt-get install python3-numpy)"

# j FILE EXPR: print a Python expression over the JSON summary s.
j() { $PY -c "import json,sys; s=json.load(open(sys.argv[1])); print($2)" "$1"; }

test_expect_success 'bug mode: exact eviction counts, one dirty eviction leaks one array' '
	timeout 120 $PY "$WL" --bug $SMALL --json-summary bug.json >out &&
	grep -q "^iter 3: .*, evictions 0 (dirty 0)$" out &&
	grep -q "^iter 4: .*, evictions 4 (dirty 2)$" out &&
	grep -q "^iter 11: .*, evictions 4 (dirty 2)$" out &&
	test "$(grep -c "^iter [0-9]*: rss " out)" = 12 &&
	test "$(j bug.json s[\"prediction_matches\"])" = True &&
	test "$(j bug.json s[\"dirty_evictions_per_iter_steady\"])" = 2 &&
	test "$(j bug.json s[\"array_bytes\"])" = 2097152 &&
	test "$(j bug.json s[\"expected_leak_bytes_per_iter\"])" = 4194304 &&
	test "$(j bug.json s[\"steady_window\"])" = "[4, 11]" &&
	test "$(j bug.json s[\"leaked_arrays\"])" = "[0, 0, 0, 0, 2, 2, 2, 2, 2, 2, 2, 2]" &&
	test "$(j bug.json s[\"displaced_host_arrays\"])" = 16 &&
	grep -q "^summary: expected leak 4194304 bytes per iteration (array bytes 2097152 x dirty evictions 2)$" out
'

test_expect_success 'bug mode: rss grows by array bytes x dirty evictions per iteration' '
	# within 15% of 4194304: a run that leaked nothing (slope ~0) or a
	# whole array more or less per iteration (+-50%) fails.
	j bug.json "int(s[\"rss_slope_bytes_per_iter\"])" >slope &&
	cat slope &&
	test "$(cat slope)" -gt 3565158 && test "$(cat slope)" -lt 4823449 &&
	# and in total over the window: 7 steps of 4 MiB
	j bug.json "s[\"rss\"][11] - s[\"rss\"][4]" >grew && cat grew &&
	test "$(cat grew)" -gt 24956108 && test "$(cat grew)" -lt 33764147
'

test_expect_success 'bug mode: the summary names the write-back line' '
	line=$(grep -n "= np.empty(.*# memprov: write-back allocation" "$TOP/scripts/parla/parray.py" | cut -d: -f1) &&
	grep -q "^summary: write-back allocation at $TOP/scripts/parla/parray.py:$line (PArray._write_back_to_host)$" out &&
	sed -n "${line}p" "$TOP/scripts/parla/parray.py" | grep -q "host = np.empty(" &&
	test "$(j bug.json s[\"write_back_site\"][\"line\"])" = "$line"
'

test_expect_success 'fixed mode: same evictions, no displaced array, flat rss' '
	timeout 120 $PY "$WL" --fixed $SMALL --json-summary fixed.json >out &&
	grep -q "^iter 11: .*, evictions 4 (dirty 2)$" out &&
	test "$(j fixed.json s[\"prediction_matches\"])" = True &&
	test "$(j fixed.json s[\"evictions\"])" = "$(j bug.json s[\"evictions\"])" &&
	test "$(j fixed.json s[\"expected_leak_bytes_per_iter\"])" = 0 &&
	test "$(j fixed.json s[\"displaced_host_arrays\"])" = 0 &&
	j fixed.json "abs(int(s[\"rss_slope_bytes_per_iter\"]))" >slope && cat slope &&
	test "$(cat slope)" -lt 1048576
'

test_expect_success 'every task writes: dirty = evictions = 4 per iteration' '
	timeout 120 $PY "$WL" $SMALL --write-every 1 --json-summary all.json >out &&
	grep -q "^iter 5: .*, evictions 4 (dirty 4)$" out &&
	test "$(j all.json s[\"expected_leak_bytes_per_iter\"])" = 8388608 &&
	test "$(j all.json s[\"prediction_matches\"])" = True
'

test_expect_success 'prediction holds off the steady path: 2 GPUs, odd budget, later rounds' '
	timeout 120 $PY "$WL" --groups 5 --arrays-per-group 3 --rows 1000 --gpus 2 \
		--gpu-budget 48000 --write-every 2 --iters 23 --json-summary two.json >out &&
	test "$(j two.json s[\"prediction_matches\"])" = True &&
	test "$(j two.json "sum(s[\"leaked_arrays\"])")" = 10 &&
	test "$(j two.json s[\"displaced_host_arrays\"])" = 10
'

test_expect_success 'one mark per iteration, labelled, and none needed without memprov' '
	cat >mark.c <<-\EOC &&
	#include <stdio.h>
	void memprov_mark(const char *label);
	void memprov_mark(const char *label)
	{
		FILE *f = fopen("marks.txt", "a");
		fprintf(f, "%s\n", label ? label : "(null)");
		fclose(f);
	}
	EOC
	cc -shared -fPIC -o libmark.so mark.c &&
	LD_PRELOAD=$TRASH/libmark.so timeout 120 $PY "$WL" --groups 2 --arrays-per-group 1 \
		--rows 1000 --iters 5 --json-summary m.json >out &&
	printf "iter %d\n" 0 1 2 3 4 >expect &&
	test_cmp expect marks.txt &&
	test "$(j m.json s[\"memprov_present\"])" = True &&
	timeout 120 $PY "$WL" --groups 2 --arrays-per-group 1 --rows 1000 --iters 2 \
		--json-summary n.json >out &&
	test "$(j n.json s[\"memprov_present\"])" = False
'

test_expect_success 'usage errors exit 2; a missing libcudart exits 1 with a message' '
	set +e
	$PY "$WL" --gpu-budget 10 >out 2>err; rc=$?
	set -e
	test $rc = 2 && grep -q "smaller than one array" err &&
	set +e
	$PY "$WL" --backend cudart --cudart "$TRASH/nonesuch.so" --iters 1 --groups 1 \
		--rows 10 >out 2>err; rc=$?
	set -e
	test $rc = 1 && grep -q "cannot load the CUDA runtime" err
'

test_expect_success 'out of host memory: dies under prlimit --as with its progress printed' '
	# The address-space peak of a fixed run plus half the bug run s total
	# leak (8 iterations x 4 arrays x 2 MiB): the bug run must die near
	# iteration 8, after printing the iterations it finished.
	OOM="--groups 8 --arrays-per-group 4 --rows 262144 --gpu-budget 33554432 --iters 40"
	timeout 120 $PY "$WL" --fixed $OOM --json-summary f.json >/dev/null &&
	limit=$(j f.json "s[\"vm_peak_bytes\"] + 32 * 2**20") &&
	set +e
	timeout 120 prlimit --as=$limit $PY "$WL" --bug $OOM >out 2>err; rc=$?
	set -e
	echo "status $rc" && tail -n 3 out err &&
	{ test $rc = 3 || test $rc -gt 128; } &&
	last=$(sed -n "s/^iter \([0-9]*\): rss .*/\1/p" out | tail -n 1) &&
	test "$last" -ge 4 && test "$last" -lt 39 &&
	if test $rc = 3; then grep -q "^parla_evict: out of host memory (MemoryError) in iteration $((last + 1))$" out; fi
'

test_expect_success 'host backend without pools runs and predicts the same counts' '
	timeout 120 $PY "$WL" $SMALL --no-device-pool --no-pinned-pool --json-summary np.json >out &&
	test "$(j np.json s[\"prediction_matches\"])" = True &&
	test "$(j np.json s[\"device_pool\"])" = False
'

# The cudart backend needs the fake CUDA runtime the CUDA tests build.
test -f "$BIN/libcudart.so" || test_skip "no $BIN/libcudart.so (the fake CUDA runtime is not built): cudart backend not tested"
# The fake runtime dlopens "libcuda.so.1" by name, as the real one does:
# the fake driver beside it must be on the loader's path.
LD_LIBRARY_PATH=$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH

test_expect_success 'cudart backend over the fake runtime: bug mode leaks, pools kept' '
	timeout 120 $PY "$WL" --bug --backend cudart --cudart "$BIN/libcudart.so" $SMALL \
		--json-summary cb.json >out &&
	test "$(j cb.json s[\"prediction_matches\"])" = True &&
	test "$(j cb.json s[\"backend_stats\"][\"device_reserved\"])" = 33554432 &&
	test "$(j cb.json s[\"backend_stats\"][\"pinned_reserved\"])" = 2097152 &&
	j cb.json "int(s[\"rss_slope_bytes_per_iter\"])" >slope && cat slope &&
	test "$(cat slope)" -gt 3565158 && test "$(cat slope)" -lt 4823449
'

test_expect_success 'cudart backend over the fake runtime: fixed mode flat, pools off' '
	timeout 120 $PY "$WL" --fixed --backend cudart --cudart "$BIN/libcudart.so" $SMALL \
		--no-device-pool --no-pinned-pool --json-summary cf.json >out &&
	test "$(j cf.json s[\"prediction_matches\"])" = True &&
	test "$(j cf.json s[\"backend_stats\"][\"pinned_reserved\"])" = 0 &&
	j cf.json "abs(int(s[\"rss_slope_bytes_per_iter\"]))" >slope && cat slope &&
	test "$(cat slope)" -lt 1048576 &&
	MEMPROV_CUDART=$BIN/libcudart.so timeout 120 $PY "$WL" --backend cudart \
		--groups 2 --arrays-per-group 1 --rows 1000 --iters 2 >out
'

test_done
