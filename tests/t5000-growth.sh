#!/bin/sh
# t5000-growth.sh - `memprov growth`, `peak` and `diff` on tests/growth/grow.c
# (a leak at leak_a, a bounded cache at cache_b, churn at churn_c, a mark per
# iteration) run under libmemprov.so, and on traces made by tracegen: growth
# without marks (--points), --after/--skip, the --min-bytes floor, a sawtooth.
. "$(dirname "$0")/test-lib.sh"
. "$TOP/tests/helper/lib-trace.sh"

[ -x "$BIN/grow" ] || test_skip "tests/bin/grow not built (make test)"
LEAK_LINE=$(grep -n "return malloc(4096)" "$TOP/tests/growth/grow.c" | cut -d: -f1)

run_grow() {
	timeout 60 env MEMPROV_OUTPUT=$TRASH/$1.trace LD_PRELOAD=$MEMPROV_LIB "$BIN/grow" 50 ${2:-}
}

test_expect_success 'growth names leak_a alone: 4096 B and 1 block per mark' '
	run_grow leak &&
	memprov growth --json leak.trace >g.json &&
	jget g.json by unit "=len(j[\"suspects\"])" suspects.0.frames.0.function \
		suspects.0.frames.0.line suspects.0.slope_bytes suspects.0.slope_blocks \
		suspects.0.growth_bytes suspects.0.end_bytes suspects.0.end_blocks \
		suspects.0.start.ordinal suspects.0.r2 suspects.0.rose window.steps >out &&
	printf "marks\nmark\n1\nleak_a\n$LEAK_LINE\n4096\n1\n200704\n204800\n50\n0\n1.0\n1.0\n49\n" >expect &&
	test_cmp expect out
'

test_expect_success 'the bounded cache and the churn are not suspects; --all shows the cache flat' '
	memprov growth --all --json leak.trace >a.json &&
	jget a.json "=[s[\"frames\"][0][\"function\"] for s in j[\"others\"]]" \
		"=[s[\"end_bytes\"] for s in j[\"others\"]]" >out &&
	printf "[\"cache_b\"]\n[8000]\n" >expect &&
	test_cmp expect out
'

test_expect_success 'text report: slope, start and end figures' '
	memprov growth leak.trace >g.txt &&
	grep -F "1 growing site (growth of at least 1.0 KiB over the window), biggest first:" g.txt &&
	grep -Fx "  #1 heap malloc: +196.0 KiB (+200,704 B) over the window, 4.0 KiB (4,096 B) per mark, 1 block per mark" g.txt &&
	grep -F "since mark #0 \"iter\"; 200.0 KiB (204,800 B) in 50 blocks at the window'"'"'s end; confidence 1.00" g.txt &&
	grep -F "leak_a $TOP/tests/growth/grow.c:$LEAK_LINE" g.txt
'

test_expect_success '--folded: one line, outermost frame first, growth bytes' '
	memprov growth --folded leak.trace >f.txt &&
	test $(wc -l <f.txt) = 1 &&
	grep -E "^main \(grow.c:[0-9]+\);leak_a \(grow.c:$LEAK_LINE\) 200704$" f.txt
'

test_expect_success 'peak: exact total and sites live then' '
	memprov peak --json leak.trace >p.json &&
	jget p.json peak.bytes peak.kinds.heap kinds.heap.peak_bytes "=len(j[\"sites\"])" \
		"=[(s[\"frames\"][0][\"function\"], s[\"blocks\"], s[\"bytes\"]) for s in j[\"sites\"]]" >out &&
	cat >expect <<-EOF &&
	214312
	214312
	214312
	3
	[["leak_a", 50, 204800], ["cache_b", 9, 9000], ["churn_c", 1, 512]]
	EOF
	test_cmp expect out &&
	memprov peak leak.trace >p.txt &&
	grep -F "peak of live memory, all kinds: 209.3 KiB (214,312 B)" p.txt
'

test_expect_success 'diff against a run without the leak shows leak_a alone' '
	run_grow noleak noleak &&
	memprov diff --json leak.trace noleak.trace >d.json &&
	jget d.json by "=len(j[\"sites\"])" sites.0.frames.0.function sites.0.delta_bytes \
		sites.0.delta_blocks sites.0.a.bytes sites.0.b.bytes >out &&
	printf "end\n1\nleak_a\n-204800\n-50\n204800\n0\n" >expect &&
	test_cmp expect out &&
	memprov diff --growth --json leak.trace noleak.trace >dg.json &&
	jget dg.json "=len(j[\"sites\"])" sites.0.frames.0.function sites.0.a.slope_bytes \
		sites.0.b.suspect >out &&
	printf "1\nleak_a\n4096.0\nfalse\n" >expect &&
	test_cmp expect out &&
	memprov growth --json noleak.trace >n.json &&
	jget n.json "=len(j[\"suspects\"])" >out && echo 0 >expect && test_cmp expect out
'

# No marks: 100 B leaked every 10 ns from stack 1 over 1000..2000 ns; stack 2
# saws (five 50 B blocks, then all freed); stack 3 grows 8 B per step. The
# last record is at 2000 ns: the 10 instants fall on stack 1's records.
gen_nomarks() {
	{
		echo "header state=exited start=1000"
		echo "thread 1"
		echo "stack ts=1001 id=1 native=0x1001"
		echo "stack ts=1002 id=2 native=0x2002"
		echo "stack ts=1003 id=3 native=0x3003"
		i=1
		while [ $i -le 100 ]; do
			ts=$((1000 + 10 * i))
			echo "alloc ts=$((ts - 3)) addr=$((0x300000 + i * 256)) size=8 stack=3"
			echo "alloc ts=$((ts - 2)) addr=$((0x200000 + i * 256)) size=50 stack=2"
			if [ $((i % 5)) = 0 ]; then
				j=$((i - 4))
				while [ $j -le $i ]; do
					echo "free ts=$((ts - 1)) addr=$((0x200000 + j * 256))"
					j=$((j + 1))
				done
			fi
			echo "alloc ts=$ts addr=$((0x100000 + i * 256)) size=100 stack=1"
			i=$((i + 1))
		done
	} | "$TRACEGEN" -o nomarks.trace
}

test_expect_success 'without marks: evenly spaced instants, slope per second' '
	gen_nomarks &&
	memprov growth --points 10 --json nomarks.trace >t.json &&
	jget t.json by unit "=len(j[\"points\"])" "=len(j[\"suspects\"])" \
		suspects.0.frames.0.address suspects.0.slope_bytes suspects.0.slope_blocks \
		suspects.0.growth_bytes suspects.0.end_bytes >out &&
	printf "time\ns\n10\n1\n0x1001\n10000000000\n100000000\n9000\n10000\n" >expect &&
	test_cmp expect out
'

test_expect_success 'the --min-bytes floor: 8 B per step shows only when asked' '
	memprov growth --points 10 --min-bytes 100 --json nomarks.trace >t2.json &&
	jget t2.json "=[s[\"frames\"][0][\"address\"] for s in j[\"suspects\"]]" \
		"=[s[\"growth_bytes\"] for s in j[\"suspects\"]]" >out &&
	printf "[\"0x1001\", \"0x3003\"]\n[9000, 720]\n" >expect &&
	test_cmp expect out
'

test_expect_success '--after LABEL and --skip start the window later' '
	{
		echo "header state=exited start=1000"
		echo "thread 1"
		i=0
		while [ $i -lt 12 ]; do
			ts=$((2000 + 100 * i))
			[ $i -lt 4 ] && echo "alloc ts=$ts addr=$((0x500000 + i * 4096)) size=3000 stack=7"
			echo "alloc ts=$((ts + 1)) addr=$((0x600000 + i * 4096)) size=2048 stack=8"
			label=warm; [ $i -ge 4 ] && label=steady
			echo "mark ts=$((ts + 50)) serial=$((i + 1)) label=$label"
			i=$((i + 1))
		done
	} | "$TRACEGEN" -o warm.trace &&
	memprov growth --after steady --json warm.trace >w.json &&
	jget w.json window.first window.steps "=len(j[\"suspects\"])" suspects.0.slope_bytes \
		suspects.0.growth_bytes suspects.0.start.label >out &&
	printf "4\n7\n1\n2048\n14336\nsteady\n" >expect &&
	test_cmp expect out &&
	memprov growth --skip 10 --json warm.trace >s.json &&
	jget s.json window.first window.steps "=len(j[\"suspects\"])" >out &&
	printf "10\n1\n0\n" >expect && test_cmp expect out &&
	st=0 && memprov growth --after nosuch warm.trace >x.txt 2>x.err || st=$? &&
	test $st = 2 &&
	cat >expect <<-\EOF &&
	memprov: error: no mark named '"'"'nosuch'"'"' in '"'"'warm.trace'"'"': the window would be empty
	memprov: the marks of '"'"'warm.trace'"'"':
	  "warm" (4)
	  "steady" (8)
	EOF
	test_cmp expect x.err &&
	st=0 && memprov growth --skip 12 warm.trace >x.txt 2>x.err || st=$? &&
	test $st = 2 &&
	grep -Fx "memprov: error: --skip 12 leaves no mark of '"'"'warm.trace'"'"' to judge (it has 12)" x.err
'

test_expect_success 'the window ends at the end of the Python main module' '
	gen me <<-EOF &&
	header state=exited start=1000
	thread 1
	alloc ts=1010 addr=0x10 size=2000 stack=1
	mark ts=1020 serial=1 label=it
	alloc ts=1030 addr=0x20 size=2000 stack=1
	mark ts=1040 serial=2 label=it
	alloc ts=1050 addr=0x30 size=2000 stack=1
	mark ts=1060 serial=3 label=it
	mark ts=1070 serial=4 label=__main__ flags=main-end
	free ts=1080 addr=0x10
	mark ts=1090 serial=5 label=it
	EOF
	memprov growth --json me.trace >m.json &&
	jget m.json marks main_end "=len(j[\"points\"])" suspects.0.slope_bytes >out &&
	printf "3\ntrue\n3\n2000\n" >expect && test_cmp expect out &&
	# a mark window ends at its last mark: the text said it ended at
	# the end of the main module, beside figures of the last mark
	memprov growth me.trace >m.txt &&
	grep -q "^  (every mark before the end of the Python main module)$" m.txt &&
	! grep -q "^window ends at" m.txt
'

# Without marks, only steady growth: imports all along the run are state,
# a warm-up cache and a late one-off result are no trend; a site that
# rises all along is a suspect. The window starts after the last import
# of the first half.
test_expect_success 'without marks: steady growth only, after the last import' '
	{
		echo "header state=exited start=1000"
		echo "thread 1"
		echo "pycode ts=1001 id=1 file=\"<frozen importlib._bootstrap>\" name=_find_and_load"
		echo "pycode ts=1001 id=2 file=/app/main.py name=warm"
		echo "pycode ts=1001 id=3 file=/app/main.py name=step"
		echo "pycode ts=1001 id=4 file=/app/main.py name=result"
		echo "pycode ts=1001 id=5 file=/app/main.py name=<module>"
		echo "stack ts=1002 id=1 python=1:1178,5:1"
		echo "stack ts=1002 id=2 python=2:5,5:9"
		echo "stack ts=1002 id=3 python=3:7,5:10"
		echo "stack ts=1002 id=4 python=4:8,5:11"
		i=0
		while [ $i -lt 200 ]; do
			ts=$((2000 + 100 * i))
			[ $((i % 10)) = 0 ] && echo "alloc ts=$ts addr=$((0x100000 + i * 4096)) size=5000 stack=1"
			[ $i -lt 30 ] && echo "alloc ts=$((ts + 1)) addr=$((0x2000000 + i * 4096)) size=3000 stack=2"
			[ $((i % 2)) = 0 ] && echo "alloc ts=$((ts + 2)) addr=$((0x4000000 + i * 4096)) size=1000 stack=3"
			[ $i = 170 ] && echo "alloc ts=$((ts + 3)) addr=0x8000000 size=500000 stack=4"
			i=$((i + 1))
		done
	} | "$TRACEGEN" -o steady.trace &&
	memprov growth --json steady.trace >st.json &&
	jget st.json by "=[s[\"python\"][0][\"function\"] for s in j[\"suspects\"]]" window.first \
		"=j[\"window\"][\"why\"].startswith(\"from the first instant after the last import, at \")" >out &&
	printf "time\n[\"step\"]\n9\ntrue\n" >expect && test_cmp expect out &&
	memprov growth steady.trace >st.txt &&
	grep -q "^  (no marks: from the first instant after the last import, at " st.txt &&
	grep -Fx "interpreter and module state: 20 blocks, 97.7 KiB — \`--all\` shows them" st.txt
'

test_expect_success 'without marks: a table that doubles (one block, every rise x2) is not a suspect' '
	{
		echo "header state=exited start=0 end=20000"
		echo "thread 1"
		echo "stack ts=1 id=1 native=0x1000"
		echo "stack ts=1 id=2 native=0x2000"
		echo "stack ts=1 id=3 native=0x3000"
		prev=0 size=4096 ts=100
		while [ $ts -lt 20000 ]; do
			# records everywhere, so that the instants fall where asked
			echo "alloc ts=$ts addr=0x7000000 size=16 stack=3"
			echo "free ts=$((ts + 10)) addr=0x7000000"
			case $ts in
			100 | 2500 | 4500 | 6500 | 13500)   # the table: 4, 8, 16, 32, 64 KiB
				[ $prev = 0 ] || echo "free ts=$((ts + 20)) addr=$prev"
				prev=$((0x9000000 + ts * 16))
				echo "alloc ts=$((ts + 20)) addr=$prev size=$size stack=1"
				size=$((size * 2)) ;;
			esac
			[ $((ts % 1000)) = 500 ] &&   # a steady leak: 2000 B per microsecond
				echo "alloc ts=$((ts + 30)) addr=$((0x4000000 + ts * 16)) size=2000 stack=2"
			ts=$((ts + 100))
		done
	} | "$TRACEGEN" -o table.trace &&
	memprov growth --points 11 --all --json table.trace >tb.json &&
	jget tb.json "=[s[\"frames\"][0][\"address\"] for s in j[\"suspects\"]]" \
		"=[(s[\"frames\"][0][\"address\"], s[\"rose\"], s[\"end_blocks\"]) for s in j[\"others\"] if s[\"growth_bytes\"]]" >out &&
	printf "[\"0x2000\"]\n[[\"0x1000\", 0.4, 1]]\n" >expect && test_cmp expect out
'

# The end figure is what was live at the window'"'"'s end: without marks, the
# end of the Python main module, not the last evenly spaced instant.
test_expect_success 'without marks: the end figure is at the end of the main module' '
	{
		echo "header state=exited start=1000 end=21000"
		echo "thread 1"
		i=0
		while [ $i -lt 180 ]; do
			echo "alloc ts=$((2000 + 100 * i)) addr=$((0x100000 + i * 4096)) size=1000 stack=1"
			i=$((i + 1))
		done
		echo "mark ts=19990 serial=1 label=__main__ flags=main-end"
		echo "free ts=20500 addr=0x100000"
		echo "alloc ts=21000 addr=0x10 size=8 stack=2"
	} | "$TRACEGEN" -o endfig.trace &&
	memprov growth --json endfig.trace >ef.json &&
	jget ef.json suspects.0.end_blocks suspects.0.end_bytes "=j[\"points\"][-1][\"ns\"]" >out &&
	printf "180\n180000\n18990\n" >expect && test_cmp expect out
'

test_expect_success 'bad options are usage errors (status 2)' '
	test_expect_code() { want=$1; shift; set +e; "$@"; got=$?; set -e; test "$got" = "$want"; } &&
	test_expect_code 2 memprov growth --points 1 leak.trace &&
	test_expect_code 2 memprov growth --min-bytes lots leak.trace &&
	test_expect_code 2 memprov growth --json --folded leak.trace &&
	test_expect_code 2 memprov growth &&
	test_expect_code 2 memprov diff leak.trace &&
	test_expect_code 1 memprov growth nonexistent.trace
'

test_done
