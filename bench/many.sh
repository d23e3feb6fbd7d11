#!/bin/bash
# bench/many.sh - the analyzer over a job of many processes: a fork-per-task
# Python pool (bench/pool_tasks.py) traced with `memprov run -d` into
# N+1 traces (N tasks, default 255, and the parent), then the time and
# peak RSS of `memprov leaks DIR` with one worker and with one per CPU, of
# the map step alone (`leaks --json` per trace) and of `memprov merge` of
# the summaries. Writes bench/RESULTS-many.md and prints it; `make bench`
# runs it after bench/run.sh.
#
#   BENCH_TASKS=N        tasks (255: 256 traces)
#   BENCH_RESULTS_MANY=FILE  where to write the table
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 1
MEMPROV=$TOP/analyzer/memprov
N=${BENCH_TASKS:-255}
OUT=$TOP/bench/out/many
RESULTS=${BENCH_RESULTS_MANY:-$TOP/bench/RESULTS-many.md}
PY=/usr/bin/python3
[ -x "$MEMPROV" ] || { echo "many.sh: build memprov first (make)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "many.sh: needs GNU time (Debian package time)" >&2; exit 1; }

rm -rf "$OUT" && mkdir -p "$OUT/sums" || exit 1
"$MEMPROV" run -d "$OUT/dir" -- "$PY" bench/pool_tasks.py "$N" >"$OUT/run.out" 2>"$OUT/run.err" || {
	echo "many.sh: the traced pool failed:" >&2; cat "$OUT/run.err" >&2; exit 1; }
traces=$(ls "$OUT"/dir/*.trace | wc -l)
size=$(du -sk "$OUT/dir" | cut -f1)

# measure NAME CMD...: wall seconds and peak RSS (KiB) of CMD, stdout to $OUT/NAME.out
measure() {
	local name=$1
	shift
	/usr/bin/time -f '%e %M' -o "$OUT/$name.time" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
	read -r "T_$name" "M_$name" <"$OUT/$name.time"
}
cpus=$(nproc)
measure j1 "$MEMPROV" leaks --jobs 1 "$OUT/dir"
measure jn "$MEMPROV" leaks "$OUT/dir"
measure map bash -c 'for t in "$1"/dir/*.trace; do "$2" leaks --json "$t" >"$1/sums/$(basename "$t").json" || exit 1; done' \
	- "$OUT" "$MEMPROV"
measure merge "$MEMPROV" merge "$OUT"/sums/*.json
same=no
cmp -s "$OUT/jn.out" "$OUT/merge.out" && cmp -s "$OUT/j1.out" "$OUT/jn.out" && same=yes
sumk=$(du -sk "$OUT/sums" | cut -f1)
site=$(grep -m1 '^  #1 ' "$OUT/jn.out")

{
	echo "# memprov over a job of many processes"
	echo
	echo "$(date -u +%Y-%m-%d), $(uname -m), $cpus CPUs, memprov $("$MEMPROV" --version | head -1 | cut -d' ' -f2)."
	echo "bench/pool_tasks.py $N: a fork-per-task pool of 4 (maxtasksperchild=1);"
	echo "$traces traces, $((size / 1024)) MiB in the run directory."
	echo
	echo "| step | wall s | peak RSS MiB |"
	echo "| --- | --- | --- |"
	echo "| leaks DIR --jobs 1 | $T_j1 | $((M_j1 / 1024)) |"
	echo "| leaks DIR (--jobs $cpus) | $T_jn | $((M_jn / 1024)) |"
	echo "| map alone: leaks --json per trace, one after the other | $T_map | $((M_map / 1024)) |"
	echo "| merge of the $traces summaries ($((sumk / 1024)) MiB) | $T_merge | $((M_merge / 1024)) |"
	echo
	echo "Peak RSS is the largest process of the step (GNU time's %M: the reducing"
	echo "process, or one worker). Reports identical (1 worker, $cpus workers, merge): $same."
	echo "The merged report's first site: \`${site#  }\`."
} >"$RESULTS"
cat "$RESULTS"
[ "$same" = yes ]
