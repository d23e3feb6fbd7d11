#!/bin/bash
# profile.sh - where memprov's recording time goes on the churn workload.
#
#   bench/profile.sh perf [THREADS OPS]        sampled CPU time (perf record -g)
#   bench/profile.sh callgrind [THREADS OPS]   instruction counts, repeatable
#   bench/profile.sh startup [RUNS [ROUNDS]]   what one short process costs
#   bench/profile.sh startup-callgrind         the same in instructions (callgrind)
#   bench/profile.sh startup-spawn [RUNS]      the same, spawned directly (bench/bin/spawn)
#
# perf prints the share of samples per object and the top functions (self
# time) of churn run under LD_PRELOAD=libmemprov.so. callgrind prints the
# instruction count bare and traced, their ratio, the top functions by
# self count and memprov's functions by inclusive count. Defaults: 1 thread,
# 1,000,000 ops for perf, 200,000 for callgrind. The preload object is
# interpose/libmemprov-syms.so (libmemprov.so's code with its symbols, so
# that memprov's functions have names); BENCH_LIB picks another. Needs
# `make bench-progs` and the library; files go to bench/out/profile/.
set -u
TOP=$(cd "$(dirname "$0")/.." && pwd)
LIB=${BENCH_LIB:-$TOP/interpose/libmemprov-syms.so}
CHURN=$TOP/bench/bin/churn
OUT=$TOP/bench/out/profile
tool=${1:-perf}
threads=${2:-1}
unset LD_PRELOAD MEMPROV_OUTPUT

for f in "$LIB" $([ "$tool" = startup ] || echo "$CHURN"); do
	[ -e "$f" ] || { echo "profile.sh: $f is missing: run 'make' and 'make bench-progs'" >&2; exit 2; }
done
rm -rf "$OUT" && mkdir -p "$OUT" || exit 2
traced() { env LD_PRELOAD="$LIB" MEMPROV_OUTPUT="$OUT/memprov.%p.trace" "$@"; }

case $tool in
perf)
	ops=${3:-1000000}
	command -v perf >/dev/null || { echo "profile.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
	echo "perf record -F 2000 -g -- env LD_PRELOAD=$LIB churn $threads $ops"
	perf record -q -F 2000 -g -o "$OUT/perf.data" -- \
		env LD_PRELOAD="$LIB" MEMPROV_OUTPUT="$OUT/memprov.%p.trace" \
		"$CHURN" "$threads" "$ops" >/dev/null || exit 1
	echo "== samples per object"
	perf report -i "$OUT/perf.data" --no-children --sort dso -g none --stdio 2>/dev/null | grep '%'
	echo "== top functions (self)"
	perf report -i "$OUT/perf.data" --no-children --sort dso,sym -g none --stdio \
		--percent-limit 0.8 2>/dev/null | grep '%'
	;;
callgrind)
	ops=${3:-200000}
	command -v valgrind >/dev/null || { echo "profile.sh: valgrind is not installed" >&2; exit 2; }
	valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.bare" \
		"$CHURN" "$threads" "$ops" >/dev/null 2>"$OUT/cg.bare.log" || exit 1
	valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$OUT/cg.%p" \
		env LD_PRELOAD="$LIB" MEMPROV_OUTPUT="$OUT/memprov.%p.trace" \
		"$CHURN" "$threads" "$ops" >/dev/null 2>"$OUT/cg.traced.log" || exit 1
	traced_out=$(ls -S "$OUT"/cg.[0-9]* | head -n 1)
	bare=$(callgrind_annotate "$OUT/cg.bare" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	tr=$(callgrind_annotate "$traced_out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	echo "instructions: bare $bare, traced $tr, ratio $(awk -v a="$tr" -v b="$bare" 'BEGIN {printf "%.2f", a / b}')"
	echo "per churn op: $(awk -v a="$tr" -v b="$bare" -v n="$((threads * ops))" 'BEGIN {printf "%.0f", (a - b) / n}') extra instructions (one free + one allocation)"
	echo "== top functions (self)"
	callgrind_annotate --inclusive=no "$traced_out" 2>/dev/null | grep '%)' | sed -n '2,16p'
	echo "== memprov and libunwind (inclusive)"
	callgrind_annotate --inclusive=yes "$traced_out" 2>/dev/null |
		grep -E '^ *[0-9,]+ \( *[0-9.]+%\) +[^=].*(libmemprov|libunwind|vdso)' | head -n 12
	;;
startup)
	# What one short process costs, phase by phase: the same command bare,
	# with the preload object loaded and idle (MEMPROV_DISABLE=1), tracing
	# without the scan at exit (MEMPROV_REACH=0), and with everything; the
	# differences are loading, recording and the scan. perf stat's mean
	# over RUNS runs (default 300), the four variants interleaved in ROUNDS
	# rounds (default 3). Elapsed time, not CPU time: the process's own
	# CPU time is what varies most between runs here.
	n=${2:-300}
	rounds=${3:-3}
	command -v perf >/dev/null || { echo "profile.sh: perf is not installed (apt-get install linux-perf)" >&2; exit 2; }
	one() { # label, then env assignments: the mean elapsed microseconds
		local label=$1 d
		shift
		d=$(mktemp -d "$OUT/run.XXXXXX") || exit 2
		perf stat -r "$n" env "$@" MEMPROV_OUTPUT="$d/m.%p.trace" /bin/ls -d / 2>&1 >/dev/null |
			awk -v l="$label" '/seconds time elapsed/ { printf "%s %.0f\n", l, $1 * 1e6 }'
		rm -rf "$d"
	}
	echo "ls -d /, $n runs a variant, $rounds rounds: microseconds a process (mean elapsed, env and ls)"
	for r in $(seq "$rounds"); do
		{
			one bare A=1
			one loaded LD_PRELOAD="$LIB" MEMPROV_DISABLE=1
			one traced LD_PRELOAD="$LIB" MEMPROV_REACH=0
			one full LD_PRELOAD="$LIB"
		} | awk -v r="$r" '{ v[$1] = $2 } END {
			printf "round %d: bare %d, loaded +%d, recording +%d, scan at exit +%d: %d us over bare\n",
				r, v["bare"], v["loaded"] - v["bare"], v["traced"] - v["loaded"],
				v["full"] - v["traced"], v["full"] - v["bare"] }'
	done
	;;
startup-spawn)
	# What one short process costs, without perf and env around each run:
	# bench/bin/spawn starts ls itself, the four variants taking turns run
	# by run, and prints each one's median (the load moves means most).
	[ -x "$TOP/bench/bin/spawn" ] || { echo "profile.sh: run make bench-progs first" >&2; exit 2; }
	d=$(mktemp -d "$OUT/spawn.XXXXXX") || exit 2
	echo "ls -d /, ${2:-500} runs a variant, interleaved run by run: microseconds a process"
	"$TOP/bench/bin/spawn" "${2:-500}" "$LIB" "$d" /bin/ls -d /
	r=$?
	rm -rf "$d"
	exit $r
	;;
startup-callgrind)
	# The instructions of one short process, bare and traced, under
	# callgrind: a figure the machine's load does not move, where the
	# times above move by a tenth between rounds. It leaves out the
	# kernel's share (system calls, page faults) and the scan at exit
	# (off under valgrind), and prints memprov's costliest functions.
	command -v valgrind >/dev/null || { echo "profile.sh: valgrind is not installed" >&2; exit 2; }
	valgrind --tool=callgrind --callgrind-out-file="$OUT/cg.bare" /bin/ls -d / \
		>/dev/null 2>"$OUT/cg.bare.log" || exit 1
	valgrind --tool=callgrind --trace-children=yes --callgrind-out-file="$OUT/cg.%p" \
		env LD_PRELOAD="$LIB" MEMPROV_OUTPUT="$OUT/memprov.%p.trace" /bin/ls -d / \
		>/dev/null 2>"$OUT/cg.traced.log" || exit 1
	traced_out=$(ls -S "$OUT"/cg.[0-9]* | head -n 1)
	bare=$(callgrind_annotate "$OUT/cg.bare" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	tr=$(callgrind_annotate "$traced_out" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1}')
	echo "ls -d /: instructions bare $bare, traced $tr: memprov adds $((tr - bare))"
	echo "== memprov (inclusive)"
	callgrind_annotate --inclusive=yes "$traced_out" 2>/dev/null |
		grep -E '^ *[0-9,]+ \( *[0-9.]+%\) +/.*interpose/[a-z_]+\.c:' |
		grep -vE 'main_wrapper|below main' | head -n 16
	;;
*)
	echo "usage: profile.sh perf|callgrind [THREADS OPS] | startup [RUNS [ROUNDS]] | startup-callgrind" >&2
	exit 2
	;;
esac
