#!/bin/bash
# run.sh - memprov's benchmarks: each workload bare, under memprov, under
# heaptrack and (where a -fsanitize=leak build exists) under LeakSanitizer,
# interleaved, BENCH_RUNS times; then the analyzers on the traces of the
# last run. Writes bench/RESULTS.md and prints it. `make bench` runs
# this after building; run it alone with `bench/run.sh` once that is done.
#
# Settings (environment):
#   BENCH_RUNS=N         interleaved rounds per workload (5; 2 with BENCH_QUICK)
#   BENCH_QUICK=1        small workloads: a smoke run of about two minutes
#   BENCH_WORKLOADS=...  the workloads to run, space-separated (all:
#                        churn1 churn2 bigarray pycalls numpy parla shell sqlite
#                        pytest)
#   BENCH_TIMEOUT=S      seconds before one command is killed (300)
#   BENCH_VMEM_MB=M      address-space cap for heaptrack, heaptrack_print and
#                        memprov's analysis (4096; 0: none)
#   BENCH_PARLA_ARGS=... flags for scripts/parla_evict.py besides --bug
#   BENCH_RESULTS=FILE   where to write the table (bench/RESULTS.md)
#   BENCH_LIB=PATH       the preload object to measure (interpose/libmemprov.so)
#   BENCH_CLI=PATH       the analyzer to time and count events with (analyzer/memprov)
# MEMPROV_* variables set by the caller reach the traced runs unchanged.
#
# Nothing here fails for a missing piece: a column whose tool is absent or
# failed reads "n/a" and the notes below the table say why. Exit status is
# 0 unless the bench itself could not run (2).
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
cd "$TOP" || exit 2

QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then
	RUNS=${BENCH_RUNS:-2}
	CHURN_OPS=400000 BIG_COUNT=50 PY_ROUNDS=300 NP_STEPS=150
	PARLA_DEFAULT="--rows 250000 --iters 20"
	SHELL_CMDS=50 SQL_ROWS=50000
else
	RUNS=${BENCH_RUNS:-5}
	CHURN_OPS=1000000 BIG_COUNT=150 PY_ROUNDS=800 NP_STEPS=400
	PARLA_DEFAULT="--rows 500000 --iters 30"
	SHELL_CMDS=200 SQL_ROWS=200000
fi
WORKLOADS=${BENCH_WORKLOADS:-churn1 churn2 bigarray pycalls numpy parla shell sqlite pytest}
TIMEOUT=${BENCH_TIMEOUT:-300}
VMEM_MB=${BENCH_VMEM_MB:-4096}
PARLA_ARGS=${BENCH_PARLA_ARGS-$PARLA_DEFAULT}
RESULTS=${BENCH_RESULTS:-$TOP/bench/RESULTS.md}
PY=/usr/bin/python3
LIB=${BENCH_LIB:-$TOP/interpose/libmemprov.so}
CLI=${BENCH_CLI:-$TOP/analyzer/memprov}
MEASURE=$TOP/bench/bin/measure
OUT=$TOP/bench/out
unset LD_PRELOAD MEMPROV_OUTPUT

case "$RUNS" in '' | *[!0-9]* | 0) echo "run.sh: BENCH_RUNS must be a positive number" >&2; exit 2 ;; esac
for p in churn bigarray measure; do
	if [ ! -x bench/bin/$p ]; then
		echo "run.sh: bench/bin/$p is missing: run 'make bench'" >&2
		exit 2
	fi
done
rm -rf "$OUT" && mkdir -p "$OUT" || exit 2

NOTES=()
note() { NOTES+=("$*"); }
log() { printf '%s\n' "$*" >&2; }

# ---- what is available ---------------------------------------------------

HAVE_LIB=0 HAVE_CLI=0 HAVE_HT=0
HAVE_LEAKS=0 HAVE_GROWTH=0 HAVE_STATS=0 HAVE_CHECK=0
if [ -f "$LIB" ]; then HAVE_LIB=1; else note "memprov runs: n/a: $LIB is not built"; fi
if [ -x "$CLI" ]; then
	HAVE_CLI=1
	for sub in leaks growth stats check; do
		if "$CLI" help $sub >/dev/null 2>&1; then
			eval "HAVE_${sub^^}=1"
		else
			note "memprov $sub: n/a: this analyzer/memprov has no '$sub' subcommand yet"
		fi
	done
else
	note "memprov analysis and events: n/a: analyzer/memprov is not built"
fi
if ! command -v heaptrack >/dev/null || ! command -v heaptrack_print >/dev/null; then
	log "run.sh: heaptrack is missing; trying scripts/install-deps.sh bench"
	scripts/install-deps.sh bench >&2 || log "run.sh: install-deps.sh bench failed"
fi
if command -v heaptrack >/dev/null && command -v heaptrack_print >/dev/null; then
	HAVE_HT=1
else
	note "heaptrack: n/a: not installed and scripts/install-deps.sh bench could not install it"
fi

# ---- workloads -------------------------------------------------------------

declare -A CMD WHAT
CMD[churn1]="bench/bin/churn 1 $CHURN_OPS"
WHAT[churn1]="malloc/free churn, 1 thread, 20-deep stacks, 50 sites, 16 B-64 KiB exact sizes, 10k live"
CMD[churn2]="bench/bin/churn 2 $CHURN_OPS"
WHAT[churn2]="the same, 2 threads ($CHURN_OPS ops each)"
CMD[bigarray]="bench/bin/bigarray $BIG_COUNT"
WHAT[bigarray]="$BIG_COUNT blocks of 1-64 MiB, every page written, 4 live"
CMD[pycalls]="$PY bench/pycalls.py $PY_ROUNDS"
WHAT[pycalls]="call-heavy pure Python, $PY_ROUNDS rounds"
CMD[numpy]="$PY bench/numpy_script.py $NP_STEPS"
WHAT[numpy]="numpy array churn, 1 KiB-8 MiB arrays, $NP_STEPS steps"
if [ -f scripts/parla_evict.py ]; then
	CMD[parla]="$PY scripts/parla_evict.py --bug $PARLA_ARGS"
	WHAT[parla]="the Parla PArray eviction leak, host backend (its RSS lines are not compared)"
fi
CMD[shell]="sh bench/shell_loop.sh $SHELL_CMDS"
WHAT[shell]="a shell loop of $SHELL_CMDS short commands (ls, cat, date, expr): a trace per process"
if command -v sqlite3 >/dev/null; then
	CMD[sqlite]="sh bench/sqlite_insert.sh $OUT/sqlite.db $SQL_ROWS"
	WHAT[sqlite]="sqlite3 inserting $SQL_ROWS rows, one INSERT each, in one transaction, into a fresh on-disk database"
fi

if $PY -c 'import numpy, pytest' 2>/dev/null; then
	CMD[pytest]="sh bench/pytest_numpy.sh $OUT/pytest.log"
	WHAT[pytest]="numpy's own core/tests/test_nditer.py under pytest: every allocation 50-70 Python frames deep"
fi

# heaptrack follows one process: `heaptrack sh SCRIPT` records the shell
# and nothing of what it execs (its file is empty). HT_WRAP names the
# variable through which a script execs its program under heaptrack;
# HT_NA says why heaptrack is not run.
declare -A HT_WRAP HT_NA
HT_WRAP[sqlite]=SQLITE_WRAP
HT_WRAP[pytest]=PYTEST_WRAP
HT_NA[shell]="heaptrack records one process, not the $SHELL_CMDS a shell loop starts"

# LeakSanitizer: clang -fsanitize=leak builds (bench/bench.mk) of the C
# workloads; it captures a stack on every allocation too.
declare -A LSAN
LSAN[churn1]="bench/bin/churn-lsan 1 $CHURN_OPS"
LSAN[churn2]="bench/bin/churn-lsan 2 $CHURN_OPS"
LSAN[bigarray]="bench/bin/bigarray-lsan $BIG_COUNT"
HAVE_LSAN=1
[ -x bench/bin/churn-lsan ] && [ -x bench/bin/bigarray-lsan ] || {
	HAVE_LSAN=0
	note "LeakSanitizer: n/a: bench/bin/*-lsan are not built (make bench builds them with clang-14 -fsanitize=leak)"
}

# ---- helpers ---------------------------------------------------------------

# median of the numbers given as arguments (empty when none)
median() {
	[ $# -gt 0 ] || return 0
	printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {
		if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
fmt() { [ -n "$2" ] && LC_ALL=C printf "$1" "$2" || printf 'n/a'; }
div() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.6f", a / b }'; }
# an analyzer run that did not produce a report: killed, crashed or silent
no_report() { case $2 in '' | *[!0-9]*) return 0 ;; esac; [ "$2" -ge 128 ] || [ ! -s "$1" ]; }

# run_one DIR NAME CAP_MB CMD... : run under measure; sets M_WALL M_RSS M_ST
run_one() {
	local dir=$1 name=$2 cap=$3
	shift 3
	"$MEASURE" -o "$dir/$name.m" -t "$TIMEOUT" -m "$cap" -- "$@" \
		>"$dir/$name.out" 2>"$dir/$name.err"
	read -r M_WALL M_RSS M_ST <"$dir/$name.m" || { M_WALL= M_RSS= M_ST=missing; }
}

# why DIR NAME STATUS : a short reason for a failed run
why() {
	local f=$1/$2.err st=$3 line
	line=$(grep -m 1 -i 'error' "$f" 2>/dev/null || grep -v '^$' "$f" 2>/dev/null | tail -n 1)
	line=$(printf '%s' "$line" | cut -c1-120)
	if grep -q 'bad_alloc' "$f" 2>/dev/null; then
		echo "std::bad_alloc (address space capped at $VMEM_MB MiB)"
	elif [ "$st" = timeout ]; then
		echo "killed after ${TIMEOUT}s"
	elif [ "$st" -gt 128 ] 2>/dev/null; then
		echo "died of signal $((st - 128))${line:+: $line}"
	else
		echo "exit $st${line:+: $line}"
	fi
}

# same_output REF OUT : every line the bare run printed, but RSS figures,
# is in OUT (heaptrack adds its own lines to the program's stdout)
same_output() {
	awk 'NR == FNR { if ($0 !~ /rss/) want[$0] = 1; next } { delete want[$0] }
		END { for (k in want) exit 1 }' "$1" "$2"
}

# the largest file matching a glob pattern (a trace, a heaptrack file)
largest() { ls -S $1 2>/dev/null | head -n 1; }

# ---- one workload ----------------------------------------------------------

declare -A R_BARE R_MPX R_HTX R_RSS R_MPR R_HTR R_EV R_MPSZ R_BPE R_HTSZ R_LSX R_LSR R_NTR R_SCAN R_SCANMEM
declare -A A_LEAK A_GROW A_HTP A_CHECK

bench_workload() {
	local wl=$1 dir=$OUT/$1 r cmd mode st ref
	local bare=() mpx=() htx=() rss=() mpr=() htr=() lsx=() lsr=() lcmd=()
	local mp_fail=0 ht_fail=0 ls_fail=0 mp_ok= ht_ok=
	read -r -a cmd <<<"${CMD[$wl]}"
	[ $HAVE_LSAN = 1 ] && [ -n "${LSAN[$wl]:-}" ] && read -r -a lcmd <<<"${LSAN[$wl]}"
	mkdir -p "$dir"
	# the sqlite workload writes its SQL once, before anything is timed
	[ "$wl" = sqlite ] && SQLITE_PREPARE_ONLY=1 "${cmd[@]}" >/dev/null
	for ((r = 1; r <= RUNS; r++)); do
		log "  $wl: round $r/$RUNS"
		run_one "$dir" "bare.$r" 0 "${cmd[@]}"
		if [ "$M_ST" != 0 ]; then
			note "$wl: the bare run failed ($(why "$dir" "bare.$r" "$M_ST")); workload skipped"
			return 1
		fi
		local bw=$M_WALL br=$M_RSS
		ref=$dir/bare.1.out
		bare+=("$bw") rss+=("$br")

		if [ $HAVE_LIB = 1 ] && [ $mp_fail = 0 ]; then
			rm -rf "$dir/mp" && mkdir -p "$dir/mp"
			run_one "$dir" "mp.$r" 0 env LD_PRELOAD="$LIB" \
				MEMPROV_OUTPUT="$dir/mp/memprov.%p.trace" "${cmd[@]}"
			if [ "$M_ST" != 0 ]; then
				note "$wl: memprov run $r failed: $(why "$dir" "mp.$r" "$M_ST")"
				mp_fail=1
			elif ! same_output "$ref" "$dir/mp.$r.out"; then
				note "$wl: under memprov the program printed '$(head -c 80 "$dir/mp.$r.out")' instead of '$(head -c 80 "$ref")'"
				mp_fail=1
			else
				mpx+=("$(div "$M_WALL" "$bw")") mpr+=("$(div "$M_RSS" "$br")")
				rm -rf "$dir/mp.keep" && mv "$dir/mp" "$dir/mp.keep"
				mp_ok=1
			fi
		fi

		if [ $HAVE_HT = 1 ] && [ $ht_fail = 0 ] && [ -n "${HT_NA[$wl]:-}" ] && [ $r = 1 ]; then
			note "$wl: heaptrack: n/a: ${HT_NA[$wl]}"
		fi
		if [ $HAVE_HT = 1 ] && [ $ht_fail = 0 ] && [ -z "${HT_NA[$wl]:-}" ]; then
			rm -f "$dir"/ht.*.zst "$dir"/ht.*.gz
			if [ -n "${HT_WRAP[$wl]:-}" ]; then
				# the program the script execs runs under heaptrack
				run_one "$dir" "ht.$r" "$VMEM_MB" env "${HT_WRAP[$wl]}=heaptrack -o $dir/ht.$r" "${cmd[@]}"
			else
				run_one "$dir" "ht.$r" "$VMEM_MB" heaptrack -o "$dir/ht.$r" "${cmd[@]}"
			fi
			if [ "$M_ST" != 0 ]; then
				note "$wl: heaptrack run $r failed: $(why "$dir" "ht.$r" "$M_ST"); later heaptrack rounds skipped"
				ht_fail=1
			elif ! same_output "$ref" "$dir/ht.$r.out"; then
				note "$wl: under heaptrack the program's output differs from the bare run"
				ht_fail=1
			else
				htx+=("$(div "$M_WALL" "$bw")") htr+=("$(div "$M_RSS" "$br")")
				rm -f "$dir"/ht.keep.*
				for f in "$dir/ht.$r".*; do
					case $f in *.zst | *.gz) mv "$f" "$dir/ht.keep.${f##*.}" ;; esac
				done
				ht_ok=1
			fi
		fi

		if [ ${#lcmd[@]} -gt 0 ] && [ $ls_fail = 0 ]; then
			# no address-space cap: a sanitizer reserves terabytes of it
			run_one "$dir" "ls.$r" 0 "${lcmd[@]}"
			if [ "$M_ST" != 0 ]; then
				note "$wl: LeakSanitizer run $r failed: $(why "$dir" "ls.$r" "$M_ST")"
				ls_fail=1
			elif ! same_output "$ref" "$dir/ls.$r.out"; then
				note "$wl: the -fsanitize=leak build printed something else than the bare run"
				ls_fail=1
			else
				lsx+=("$(div "$M_WALL" "$bw")") lsr+=("$(div "$M_RSS" "$br")")
			fi
		fi
	done

	R_BARE[$wl]=$(median "${bare[@]}")
	R_RSS[$wl]=$(median "${rss[@]}")
	R_MPX[$wl]=$(median "${mpx[@]}")
	R_MPR[$wl]=$(median "${mpr[@]}")
	R_HTX[$wl]=$(median "${htx[@]}")
	R_HTR[$wl]=$(median "${htr[@]}")
	R_LSX[$wl]=$(median "${lsx[@]}")
	R_LSR[$wl]=$(median "${lsr[@]}")
	[ ${#mpx[@]} = "$RUNS" ] || [ $HAVE_LIB = 0 ] || [ -z "$mp_ok" ] ||
		note "$wl: memprov figures are the median of ${#mpx[@]} of $RUNS rounds"
	[ ${#htx[@]} = "$RUNS" ] || [ $HAVE_HT = 0 ] || [ -z "$ht_ok" ] ||
		note "$wl: heaptrack figures are the median of ${#htx[@]} of $RUNS rounds"

	analyze "$wl" "$dir" "$mp_ok" "$ht_ok"
}

# analyze WL DIR MP_OK HT_OK : trace size, events, and the analyzers' cost
analyze() {
	local wl=$1 dir=$2 mp_ok=$3 ht_ok=$4 trace= htf= r n
	local leak=() leakr=() grow=() growr=() htp=() htpr=() chk=() chkr=()
	local leak_na= grow_na= htp_na= chk_na= f size ev sns smem
	local tsize=0 tev=0 tscan=0 tmem=0
	[ -n "$mp_ok" ] && trace=$(largest "$dir/mp.keep/*.trace")
	[ -n "$ht_ok" ] && htf=$(largest "$dir/ht.keep.*")
	if [ -n "$trace" ]; then
		# every process's trace: sizes and events summed
		R_NTR[$wl]=0
		for f in "$dir"/mp.keep/*.trace; do
			size=$(stat -c %s "$f") && tsize=$((tsize + size))
			R_NTR[$wl]=$((R_NTR[$wl] + 1))
			[ $HAVE_STATS = 1 ] || continue
			"$CLI" stats --json "$f" >"$dir/stats.json" 2>"$dir/stats.err"
			ev=$(grep -o '"events": *[0-9]*' "$dir/stats.json" | head -n 1 | grep -o '[0-9]*$')
			tev=$((tev + ${ev:-0}))
			# the scan at exit: its time summed, its memory at most
			sns=$(grep -o '"scan_ns": *[0-9]*' "$dir/stats.json" | head -n 1 | grep -o '[0-9]*$')
			smem=$(grep -o '"mem_bytes": *[0-9]*' "$dir/stats.json" | head -n 1 | grep -o '[0-9]*$')
			tscan=$((tscan + ${sns:-0}))
			[ "${smem:-0}" -le "$tmem" ] || tmem=$smem
		done
		if [ "$tscan" -gt 0 ]; then
			R_SCAN[$wl]=$(div "$tscan" 1000000)
			R_SCANMEM[$wl]=$(div "$tmem" 1048576)
		fi
		R_MPSZ[$wl]=$tsize
		if [ "$tev" -gt 0 ]; then
			R_EV[$wl]=$tev
			R_BPE[$wl]=$(div "$tsize" "$tev")
		elif [ $HAVE_STATS = 1 ]; then
			note "$wl: events n/a: 'memprov stats --json' gave no \"events\" ($(head -n 1 "$dir/stats.err" | cut -c1-100))"
		fi
	fi
	[ -n "$htf" ] && R_HTSZ[$wl]=$(stat -c %s "$htf")

	n=$RUNS
	[ "$n" -le 3 ] || n=3
	for ((r = 1; r <= n; r++)); do
		if [ -n "$trace" ] && [ $HAVE_LEAKS = 1 ] && [ -z "$leak_na" ]; then
			run_one "$dir" "leaks.$r" "$VMEM_MB" "$CLI" leaks "$trace"
			if no_report "$dir/leaks.$r.out" "$M_ST"; then
				leak_na=$(why "$dir" "leaks.$r" "$M_ST")
			else
				leak+=("$M_WALL") leakr+=("$M_RSS")
			fi
		fi
		if [ -n "$trace" ] && [ $HAVE_GROWTH = 1 ] && [ -z "$grow_na" ]; then
			run_one "$dir" "growth.$r" "$VMEM_MB" "$CLI" growth "$trace"
			if no_report "$dir/growth.$r.out" "$M_ST"; then
				grow_na=$(why "$dir" "growth.$r" "$M_ST")
			else
				grow+=("$M_WALL") growr+=("$M_RSS")
			fi
		fi
		if [ -n "$trace" ] && [ $HAVE_CHECK = 1 ] && [ -z "$chk_na" ]; then
			run_one "$dir" "check.$r" "$VMEM_MB" "$CLI" check "$trace"
			if no_report "$dir/check.$r.out" "$M_ST"; then
				chk_na=$(why "$dir" "check.$r" "$M_ST")
			else
				chk+=("$M_WALL") chkr+=("$M_RSS")
			fi
		fi
		if [ -n "$htf" ] && [ -z "$htp_na" ]; then
			run_one "$dir" "htp.$r" "$VMEM_MB" heaptrack_print "$htf"
			if [ "$M_ST" != 0 ]; then
				htp_na=$(why "$dir" "htp.$r" "$M_ST")
			else
				htp+=("$M_WALL") htpr+=("$M_RSS")
			fi
		fi
	done
	[ -z "$leak_na" ] || note "$wl: memprov leaks n/a: $leak_na"
	[ -z "$grow_na" ] || note "$wl: memprov growth n/a: $grow_na"
	[ -z "$htp_na" ] || note "$wl: heaptrack_print n/a: $htp_na"
	[ -z "$chk_na" ] || note "$wl: memprov check n/a: $chk_na"
	A_CHECK[$wl]="$(median "${chk[@]}") $(median "${chkr[@]}")"
	A_LEAK[$wl]="$(median "${leak[@]}") $(median "${leakr[@]}")"
	A_GROW[$wl]="$(median "${grow[@]}") $(median "${growr[@]}")"
	A_HTP[$wl]="$(median "${htp[@]}") $(median "${htpr[@]}")"
}

# ---- the report ------------------------------------------------------------

ver() { "$@" 2>&1 | grep -v '^$' | head -n 1; }

report() {
	local wl t r
	echo "# memprov benchmarks"
	echo
	echo "Generated by \`make bench\` (bench/run.sh) on $(date -u '+%Y-%m-%d %H:%M UTC')."
	[ "$QUICK" = 1 ] && echo "**Quick run (BENCH_QUICK=1): small workloads, not for comparison.**"
	echo
	echo "- machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
		"$(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo), Linux $(uname -r)," \
		"load average at start $LOAD0, at end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- memprov: git $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet HEAD -- interpose analyzer include 2>/dev/null || echo ' (modified)')" \
		"$([ $HAVE_CLI = 1 ] && "$CLI" --version >/dev/null 2>&1 && ver "$CLI" --version)"
	echo "- heaptrack: $([ $HAVE_HT = 1 ] && ver heaptrack --version || echo absent);" \
		"$(ver "$CC_NAME" --version); $(ver ldd --version | sed 's/^ldd //');" \
		"python $($PY -c 'import sys; print(sys.version.split()[0])')," \
		"numpy $($PY -c 'import numpy; print(numpy.__version__)' 2>/dev/null || echo absent)"
	echo "- LeakSanitizer: $([ $HAVE_LSAN = 1 ] && ver "${BENCH_LSAN_CC:-clang-14}" --version || echo absent)"
	echo "- rounds: $RUNS, interleaved (bare, memprov, heaptrack, LeakSanitizer, bare, ...);" \
		"analysis rounds: $((RUNS < 3 ? RUNS : 3)); timeout ${TIMEOUT}s;" \
		"address-space cap for heaptrack and the analyzers: $([ "$VMEM_MB" = 0 ] && echo none || echo "$VMEM_MB MiB")"
	echo
	echo "## Recording"
	echo
	echo "Wall time and peak RSS as ratios to the bare run of the same round (median over rounds),"
	echo "and memprov's trace bytes per recorded event (all its traces: file sizes over events)."
	echo "memprov: LD_PRELOAD=interpose/libmemprov.so with default settings (full stacks, Python frames)."
	echo "heaptrack: \`heaptrack -o FILE CMD\` (record and interpret, as shipped). LeakSanitizer: the"
	echo "program built with \`clang-14 -fsanitize=leak\` (bench/bin/*-lsan), a stack on every allocation"
	echo "and the leak check at exit; n/a where there is no such build. Peak RSS is that of the largest"
	echo "process (heaptrack's interpreter runs beside the program). memprov's trace pages leave its"
	echo "address space once written: its RSS holds a few chunks of trace per thread, not the trace."
	echo
	echo "| workload | bare s | bare RSS MiB | memprov time × | memprov RSS × | memprov B/event | heaptrack time × | heaptrack RSS × | LSan time × | LSan RSS × |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for wl in $WORKLOADS; do
		[ -n "${R_BARE[$wl]:-}" ] || continue
		echo "| $wl | $(fmt %.3f "${R_BARE[$wl]}") | $(fmt %.1f "$(div "${R_RSS[$wl]}" 1024)")" \
			"| $(fmt %.2f "${R_MPX[$wl]}") | $(fmt %.2f "${R_MPR[$wl]}") | $(fmt %.1f "${R_BPE[$wl]:-}")" \
			"| $(fmt %.2f "${R_HTX[$wl]}") | $(fmt %.2f "${R_HTR[$wl]}")" \
			"| $(fmt %.2f "${R_LSX[$wl]:-}") | $(fmt %.2f "${R_LSR[$wl]:-}") |"
	done
	echo
	echo "## Traces"
	echo
	echo "Events are memprov's records of every kind (\`memprov stats --json\` \"events\");"
	echo "heaptrack's file is compressed (zstd), so its size is for scale only. \"scan ms\" is the"
	echo "reachability scan at exit (\`memprov stats --json\` \"reach\"), summed over the run's traces,"
	echo "and \"scan MiB\" the most memory one scan mapped (both part of memprov's recording time above)."
	echo
	echo "| workload | memprov traces | events | trace MiB | bytes/event | scan ms | scan MiB | heaptrack file MiB |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for wl in $WORKLOADS; do
		[ -n "${R_BARE[$wl]:-}" ] || continue
		echo "| $wl | ${R_NTR[$wl]:-n/a} | ${R_EV[$wl]:-n/a} | $(fmt %.1f "$(div "${R_MPSZ[$wl]:-}" 1048576)")" \
			"| $(fmt %.1f "${R_BPE[$wl]:-}") | $(fmt %.1f "${R_SCAN[$wl]:-}") | $(fmt %.1f "${R_SCANMEM[$wl]:-}")" \
			"| $(fmt %.2f "$(div "${R_HTSZ[$wl]:-}" 1048576)") |"
	done
	echo
	echo "## Analysis"
	echo
	echo "Seconds and peak RSS (MiB) of each analyzer on the largest trace of the last good round;"
	echo "median over the analysis rounds. \"leaks / print\" is memprov leaks' time over heaptrack_print's;"
	echo "\"check / leaks\" is the gate's time over leaks' on the same trace."
	echo
	echo "| workload | memprov leaks s | RSS MiB | memprov growth s | RSS MiB | memprov check s | check / leaks | heaptrack_print s | RSS MiB | leaks / print |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for wl in $WORKLOADS; do
		[ -n "${R_BARE[$wl]:-}" ] || continue
		local l g h c
		read -r l lr <<<"${A_LEAK[$wl]:-}"
		read -r g gr <<<"${A_GROW[$wl]:-}"
		read -r c cr <<<"${A_CHECK[$wl]:-}"
		read -r h hr <<<"${A_HTP[$wl]:-}"
		echo "| $wl | $(fmt %.3f "${l:-}") | $(fmt %.1f "$(div "${lr:-}" 1024)")" \
			"| $(fmt %.3f "${g:-}") | $(fmt %.1f "$(div "${gr:-}" 1024)")" \
			"| $(fmt %.3f "${c:-}") | $(fmt %.2f "$(div "${c:-}" "${l:-}")")" \
			"| $(fmt %.3f "${h:-}") | $(fmt %.1f "$(div "${hr:-}" 1024)")" \
			"| $(fmt %.2f "$(div "${l:-}" "${h:-}")") |"
	done
	echo
	echo "## Workloads"
	echo
	for wl in $WORKLOADS; do
		[ -n "${CMD[$wl]:-}" ] || continue
		echo "- $wl: \`${CMD[$wl]}\`: ${WHAT[$wl]}"
	done
	echo
	echo "## Notes"
	echo
	if [ ${#NOTES[@]} = 0 ]; then
		echo "- none: every run and every analysis succeeded."
	else
		for t in "${NOTES[@]}"; do
			echo "- $t"
		done
	fi
}

# ---- main ------------------------------------------------------------------

CC_NAME=${CC:-cc}
LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
list=
for wl in $WORKLOADS; do
	if [ -z "${CMD[$wl]:-}" ]; then
		case $wl in
		parla) note "parla: n/a: scripts/parla_evict.py is not present" ;;
		sqlite) note "sqlite: n/a: sqlite3 is not installed (scripts/install-deps.sh bench)" ;;
		pytest) note "pytest: n/a: numpy or pytest is missing for $PY (scripts/install-deps.sh bench)" ;;
		*) note "$wl: n/a: unknown workload (known: churn1 churn2 bigarray pycalls numpy parla shell sqlite pytest)" ;;
		esac
		continue
	fi
	list="$list $wl"
done
start=$(date +%s)
for wl in $list; do
	log "run.sh: $wl: ${CMD[$wl]}"
	bench_workload "$wl"
done
log "run.sh: done in $(($(date +%s) - start))s"
report >"$RESULTS.tmp" && mv "$RESULTS.tmp" "$RESULTS"
cat "$RESULTS"
