#!/bin/sh
# t7000: the CI gate (`memprov check`, `memprov run --check`): clean
# programs pass with no options (C, both Pythons, numpy, CUDA that frees
# all), a C program that keeps its memory reachable passes unless
# --reachable, one that loses it and a ctypes leak fail naming file:line,
# without a scan the gate counts all live memory and warns (not for a
# pipeline's writer killed by SIGPIPE: not gated),
# suppression files hide with the amount said, --kind, exit codes, JUnit
# against tests/gate/junit.xsd, GitHub annotations, growth with warm-up,
# and the Parla workload: bug mode fails, fixed mode passes.
. "$(dirname "$0")/test-lib.sh"

[ -f "$MEMPROV_LIB" ] && [ -x "$MEMPROV_CLI" ] || test_skip 'libmemprov.so or memprov not built'
[ -x "$BIN/gate_leak" ] || test_skip 'tests/bin/gate_leak not built (make tests/bin/gate_leak)'
PY=/usr/bin/python3
SRC=$TOP/tests/gate/gate_leak.c
L() { grep -n "[#*] $1" "$2" | head -1 | cut -d: -f1; }
# trace NAME CMD...: run CMD under memprov, its trace in NAME.trace
trace() {
	name=$1; shift
	timeout 120 "$MEMPROV_CLI" run -o "$TRASH/$name.trace" -- "$@" >"$TRASH/$name.out" 2>&1
}
# j FILE EXPR: evaluate a Python expression on the JSON in FILE (as j)
j() { $PY -c 'import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }

test_expect_success 'clean C programs pass with no options' '
	trace true /bin/true && trace clean "$BIN/gate_leak" clean &&
	memprov check true.trace >out &&
	grep -qx "  lost at exit (definitely and indirectly): 0 B in 0 blocks (budget 0 B, all kinds)" out &&
	memprov check clean.trace >out &&
	grep -q ": ok$" out &&
	grep -q "^  reachability at exit (all kinds, before suppressions): definitely lost 0 B, indirectly lost 0 B, possibly lost 0 B, still reachable 4.0 KiB (1 block)$" out &&
	memprov check --reachable clean.trace >out &&
	grep -q ": ok$" out &&
	grep -qx "  live at exit: 0 B in 0 blocks (budget 0 B, all kinds)" out &&
	grep -qx "    4.0 KiB (4,096 B) in 1 block: leak:_IO_file_doallocate (default: glibc stdio buffers (stdout, stderr, open FILEs))" out
'

test_expect_success 'python3 -c pass passes (pyenv python3 through its shim, and /usr/bin/python3)' '
	( cd "$TRASH" && timeout 120 "$MEMPROV_CLI" run --check -o pyenv.%p.trace -- python3 -c pass >out 2>err ) &&
	test ! -s out &&
	grep -c "^memprov check: " err >n && echo 1 >one && test_cmp one n &&
	grep -q "/bin/python3 -c pass): ok$" err &&
	trace upy $PY -c pass && memprov check upy.trace >out2 && grep -q ": ok$" out2 &&
	grep -q "^  interpreter and module state: [0-9]* blocks, .* — \`--all\` gates them$" out2 &&
	test_status 1 memprov check --all upy.trace >out3
'

test_expect_success '/usr/bin/python3 -c "import numpy" passes' '
	$PY -c "import numpy" 2>/dev/null || { echo "no numpy: not checked"; exit 0; }
	trace np $PY -c "import numpy" && memprov check np.trace >out && grep -q ": ok$" out &&
	grep -qx "  live at the end of the main module: 0 B in 0 blocks (budget 0 B, all kinds)" out &&
	grep -q "^  interpreter and module state: [0-9,]* blocks, 1[0-9].[0-9] MiB — \`--all\` gates them$" out
'

test_expect_success 'a CUDA program that frees everything passes (fake runtime, shared and static)' '
	[ -x "$BIN/gate_cuda_dyn" ] || { echo "fake CUDA not built: not checked"; exit 0; }
	LD_LIBRARY_PATH=$BIN trace cudad "$BIN/gate_cuda_dyn" &&
	LD_LIBRARY_PATH=$BIN trace cudas "$BIN/gate_cuda_static" &&
	memprov check cudad.trace cudas.trace >out &&
	test "$(grep -c ": ok$" out)" = 2 &&
	LD_LIBRARY_PATH=$BIN trace cudal "$BIN/gate_cuda_dyn" leak &&
	test_status 1 memprov check --json cudal.trace >l.json &&
	test "$(j l.json "[(o[\"kind\"], o[\"bytes\"], o[\"location\"][\"line\"]) for o in j[\"traces\"][0][\"offenders\"]]")" = \
		"[('"'"'device'"'"', 4096, $(L LEAK-DEVICE "$TOP/tests/gate/gate_cuda.c"))]"
'

test_expect_success 'a leaking C program fails, naming the site and line' '
	trace leak "$BIN/gate_leak" leak &&
	test_status 1 memprov check leak.trace >out &&
	grep -qx "memprov check: leak.trace (pid [0-9]*: $BIN/gate_leak leak): FAIL" out &&
	grep -qx "  lost at exit (definitely and indirectly): 2.9 KiB (3,000 B) in 3 blocks (budget 0 B, all kinds): over budget" out &&
	grep -qx "    #1 heap malloc: 2.9 KiB in 3 blocks definitely lost at exit in leak_here at $SRC:$(L LEAK-HEAP $SRC)" out &&
	test "$(grep -c "^    #" out)" = 1
'

test_expect_success 'memory kept reachable passes; --reachable gates it, naming its class' '
	trace keep "$BIN/gate_leak" keep &&
	memprov check keep.trace >out &&
	grep -q "): ok$" out &&
	grep -q "still reachable [0-9.]* KiB ([0-9]* blocks)$" out &&
	grep -qx "  still reachable and possibly lost memory is not gated (\`--reachable\` gates all live memory)" out &&
	test_status 1 memprov check --reachable keep.trace >out &&
	grep -qx "  live at exit: 2.9 KiB (3,000 B) in 3 blocks (budget 0 B, all kinds): over budget" out &&
	grep -qx "    #1 heap malloc: 2.9 KiB in 3 blocks live at exit (still reachable) in keep_here at $SRC:$(L LEAK-KEEP $SRC)" out &&
	test_status 1 memprov check --reachable leak.trace >out &&
	grep -qx "    #1 heap malloc: 2.9 KiB in 3 blocks live at exit (definitely lost) in leak_here at $SRC:$(L LEAK-HEAP $SRC)" out
'

# `git log | head`: the writer dies of SIGPIPE once head has its lines,
# with whatever it held live and no scan; gating that would fail every
# such pipeline. Other deaths still gate all live memory.
test_expect_success 'a pipeline writer killed by SIGPIPE is not gated; a death by SIGTERM is, scanned as it comes' '
	rm -rf "$TRASH/pipe" &&
	timeout 120 "$MEMPROV_CLI" run -d "$TRASH/pipe" -- sh -c "\"$BIN/gate_leak\" pipe | head -n 1" >pipe.out &&
	echo line >expect && test_cmp expect pipe.out &&
	memprov check --json --junit pipe.xml pipe >pipe.json &&
	memprov check pipe >out && cat out &&
	grep -q "gate_leak pipe): not gated: killed by SIGPIPE (the reader of its pipe went away): no scan, no verdict$" out &&
	j pipe.json "[(t[\"status\"], t[\"reason\"]) for t in j[\"traces\"] if t[\"command\"].endswith(\"gate_leak pipe\")]" >got &&
	echo "[('"'"'skipped'"'"', '"'"'killed by SIGPIPE (the reader of its pipe went away): no scan, no verdict'"'"')]" >expect &&
	test_cmp expect got &&
	grep -q "<skipped message=\"killed by SIGPIPE (the reader of its pipe went away): no scan, no verdict\"/>" pipe.xml &&
	# a request to end (SIGTERM): the scan runs before the death, as at an
	# exit, and the gate counts what was lost (before: all it held; apt
	# ends its download methods so, and each failed on what it kept)
	! trace term "$BIN/gate_leak" term &&
	memprov check term.trace >out && cat out &&
	grep -q "^  the process was killed by SIGTERM (signal 15), a request to end: scanned as it came" out &&
	grep -q "^  reachability at death (all kinds, before suppressions): definitely lost 0 B, indirectly lost 0 B, possibly lost 0 B, still reachable 2.9 KiB (3 blocks)" out &&
	test_status 1 memprov check --reachable term.trace >out && cat out &&
	grep -q "live at end-of-trace: 2.9 KiB (3,000 B) in 3 blocks" out &&
	! trace termleak "$BIN/gate_leak" termleak &&
	test_status 1 memprov check termleak.trace >out && cat out &&
	grep -q "^memprov check: termleak.trace .*: FAIL$" out &&
	grep -q "^  reachability at death (all kinds, before suppressions): definitely lost [12].0 KiB" out &&
	grep -q "in leak_here at .*gate_leak.c:$(grep -n LEAK-HEAP "$TOP/tests/gate/gate_leak.c" | cut -d: -f1)\$" out
'

# A googletest death test (EXPECT_DEATH) forks a child that aborts on
# purpose, holding what its live frames hold: the gate counted that as
# lost (a 400 B std::vector failed every such suite). An abort and a
# fault are scanned as they come now, as a request to end is; and the
# scan runs on a stack of memprov's own: on an 8 KiB alternate signal
# stack (Rust's) it overflowed it, and SIGTERM became SIGSEGV (139).
test_expect_success 'an abort, a fault, a SIGTERM on an 8 KiB signal stack: scanned, status kept, only the lost gated' '
	hold="in hold_here at .*gate_leak.c:$(grep -n LEAK-HOLD "$TOP/tests/gate/gate_leak.c" | cut -d: -f1)" &&
	for m in "abrt 8192 134 an abort" "abrt 0 134 an abort" "segv 8192 139 a fault" \
		 "term 8192 143 a request to end"; do
		set -- $m && sig=$1 alt=$2 want=$3 && shift 3 &&
		st=0 && "$BIN/gate_leak" die $sig $alt || st=$?
		test $st = $want &&
		st=0 && trace die-$sig-$alt "$BIN/gate_leak" die $sig $alt || st=$?
		echo "die $sig $alt: bare $want, traced $st" && test $st = $want &&
		memprov check die-$sig-$alt.trace >out && cat out &&
		grep -q "^  the process was killed by SIG[A-Z]* (signal [0-9]*), $*: scanned as it came$" out &&
		grep -q "^  reachability at death (all kinds, before suppressions): definitely lost 0 B, indirectly lost 0 B" out &&
		test_status 1 memprov check --reachable die-$sig-$alt.trace >out &&
		grep -q "400 B in 1 block live at end-of-trace (still reachable) $hold\$" out || return 1
	done &&
	st=0 && trace dieleak "$BIN/gate_leak" die abrt 8192 leak || st=$?
	test $st = 134 &&
	test_status 1 memprov check dieleak.trace >out && cat out &&
	grep -q "^memprov check: dieleak.trace .*: FAIL$" out &&
	grep -q "in leak_here at .*gate_leak.c:$(grep -n LEAK-HEAP "$TOP/tests/gate/gate_leak.c" | cut -d: -f1)\$" out &&
	! grep -q "hold_here" out
'

# glibc's daemon() ends the parent with an _exit of its own, inside libc:
# no hook saw it, the parent's trace had no exit and no scan, and
# `--children` failed it on the blocks it kept (the helper sweep's
# daemon, 64 B). memprov does daemon() itself, through its fork and exit.
# wait_daemon FILE: until the daemon wrote FILE and is gone
wait_daemon() {
	n=0
	while [ ! -s "$1" ] && [ $n -lt 200 ]; do sleep 0.05; n=$((n + 1)); done
	read pid rest <"$1" || return 1
	while [ -d /proc/$pid ] && [ $n -lt 400 ]; do sleep 0.05; n=$((n + 1)); done
	test ! -d /proc/$pid
}
test_expect_success 'daemon(): the parent exits through memprov, scanned; the daemon as bare' '
	rm -f "$TRASH/d.bare" "$TRASH/d.run" && rm -rf "$TRASH/dmn" &&
	"$BIN/gate_leak" daemon "$TRASH/d.bare" && wait_daemon "$TRASH/d.bare" &&
	timeout 120 "$MEMPROV_CLI" run -d "$TRASH/dmn" --check --children -- \
		sh -c "\"$BIN/gate_leak\" daemon \"$TRASH/d.run\"" >out 2>&1 &&
	wait_daemon "$TRASH/d.run" &&
	cut -d" " -f2- d.bare >expect && cut -d" " -f2- d.run >got && test_cmp expect got &&
	echo "/ /dev/null 1" >expect && test_cmp expect got &&
	memprov check "$TRASH/dmn" >out && cat out &&
	test $(grep -c "^memprov check: .*gate_leak daemon .*: ok$" out) = 2 &&
	dpid=$(cut -d" " -f1 d.run) &&
	for pid in $(grep -o "(pid [0-9]*: [^)]*gate_leak daemon" out | cut -d" " -f2 | tr -d :); do
		test $pid != $dpid || continue
		memprov stats --json "$TRASH/dmn/memprov.$pid.trace" >st.json &&
		j st.json "(j[\"state\"], j[\"exit_status\"])" >got &&
		echo "('"'"'exited'"'"', 0)" >expect && test_cmp expect got || return 1
		echo "the parent, $pid: exited 0"
	done | grep -q "exited 0"
'

test_expect_success 'a death by SIGTERM holding only gettext state (bindtextdomain, textdomain) passes' '
	# as `timeout 1 sleep 5` leaves sleep: the default suppressions said
	# gettext, but had only the message catalogs, and failed it on 44 B
	! trace td "$BIN/gate_leak" textdomain &&
	memprov check --reachable td.trace >out && cat out &&
	grep -q "^  reachability at death (all kinds, before suppressions): definitely lost 0 B" out &&
	test_status 1 memprov check --reachable --no-default-suppressions td.trace >out2 && cat out2 &&
	grep -q "^ *set_binding_values" out2 && grep -q "^ *__textdomain" out2
'

test_expect_success 'no scan (MEMPROV_REACH=0): all live memory is gated, with a warning' '
	MEMPROV_REACH=0 trace noscan "$BIN/gate_leak" keep &&
	test_status 1 memprov check noscan.trace >out 2>err &&
	grep -qx "  the scan was switched off (MEMPROV_REACH=0): all memory live at the end is gated, as with --reachable" out &&
	grep -qx "  live at exit: 2.9 KiB (3,000 B) in 3 blocks (budget 0 B, all kinds): over budget" out &&
	grep -qx "memprov: warning: '"'"'noscan.trace'"'"': the scan was switched off (MEMPROV_REACH=0): the gate counts all memory live at the end, as with --reachable" err &&
	test_status 1 memprov check --json noscan.trace >n.json 2>/dev/null &&
	test "$(j n.json "(j[\"traces\"][0][\"rule\"], j[\"traces\"][0][\"rule_reason\"], j[\"traces\"][0][\"warning\"], j[\"traces\"][0][\"reach\"][\"status\"])")" = \
		"('"'"'live'"'"', '"'"'no-scan'"'"', '"'"'the scan was switched off (MEMPROV_REACH=0)'"'"', '"'"'off'"'"')" &&
	test_status 1 memprov check --reachable noscan.trace >out 2>err && test ! -s err
'

test_expect_success 'a suppression file hides it and says how much' '
	printf "# known leak\n\nleak:leak_h*re\n  leak:^no_such_function$  \n" >supp &&
	memprov check --suppressions supp leak.trace >out &&
	grep -qx "    2.9 KiB (3,000 B) in 3 blocks: leak:leak_h\*re (supp:3)" out &&
	grep -qx "  suppressed: 2.9 KiB (3,000 B) in 3 blocks" out &&
	memprov check --json --suppressions supp leak.trace >s.json &&
	test "$(j s.json "[(r[\"pattern\"],r[\"bytes\"],r[\"blocks\"],r[\"source\"]) for r in j[\"traces\"][0][\"suppressed\"][\"rules\"]]")" = \
		"[('"'"'leak_h*re'"'"', 3000, 3, '"'"'supp:3'"'"')]"
'

test_expect_success 'a bad suppression line is an error naming file:line (exit 2)' '
	printf "leak:a\n# fine\nleek:leak_here\n" >bad &&
	test_status 2 memprov check --suppressions bad leak.trace >out 2>err &&
	grep -qx "memprov: error: bad:3: not a suppression: '"'"'leek:leak_here'"'"' (want leak:PATTERN, growth:PATTERN or alloc:NAME)" err &&
	printf "leak:\n" >empty && test_status 2 memprov check --suppressions empty leak.trace 2>err &&
	grep -qx "memprov: error: empty:1: empty pattern" err
'

test_expect_success '--no-default-suppressions shows what the defaults hide' '
	test_status 1 memprov check --reachable --no-default-suppressions clean.trace >out &&
	grep -q "^    #1 heap malloc: 4.0 KiB in 1 block live at exit (still reachable) in main at $SRC:[0-9]*$" out &&
	grep -A1 "^    #1 " out | grep -q "^      _IO_file_doallocate "
'

test_expect_success '--kind: each kind against the budget; without it, all kinds summed' '
	trace kinds "$BIN/gate_leak" kinds &&
	test_status 1 memprov check --kind mmap kinds.trace >out &&
	grep -qx "  mmap lost at exit (definitely and indirectly): 8.0 KiB (8,192 B) in 1 block (budget 0 B): over budget" out &&
	grep -q "^    #1 mmap mmap: 8.0 KiB in 1 block definitely lost at exit in map_here at $SRC:$(L LEAK-MMAP $SRC)$" out &&
	memprov check --kind heap --max-leak 3000 kinds.trace >/dev/null &&
	test_status 1 memprov check --kind heap --max-leak 2999 kinds.trace >/dev/null &&
	memprov check --kind heap,mmap --max-leak 8K kinds.trace >/dev/null &&
	memprov check --max-leak 11192 kinds.trace >/dev/null &&
	test_status 1 memprov check --max-leak 11191 kinds.trace >/dev/null &&
	memprov check --kind device kinds.trace >/dev/null
'

test_expect_success 'exit codes: 0 within budget, 1 over, 2 usage and unreadable' '
	memprov check --max-leak 3000 leak.trace >/dev/null &&
	test_status 1 memprov check --max-leak 2999 leak.trace >/dev/null &&
	test_status 2 memprov check 2>/dev/null &&
	test_status 2 memprov check --max-leak 10Q leak.trace 2>/dev/null &&
	test_status 2 memprov check --kind gpu leak.trace 2>/dev/null &&
	test_status 2 memprov check --bogus leak.trace 2>/dev/null &&
	test_status 2 memprov check --json --annotations leak.trace 2>/dev/null &&
	test_status 2 memprov check leak.trace no-such.trace >/dev/null 2>&1 &&
	echo junk >junk.trace && test_status 2 memprov check junk.trace >/dev/null 2>&1
'

test_expect_success 'run --check: the command'"'"'s failure wins, a gate failure alone exits 23' '
	test_status 23 "$MEMPROV_CLI" run --check -o r1.trace -- "$BIN/gate_leak" leak >out 2>&1 &&
	grep -q "definitely lost at exit in leak_here at $SRC:" out &&
	"$MEMPROV_CLI" run --check -o r2.trace -- "$BIN/gate_leak" clean >/dev/null 2>&1 &&
	test_status 2 "$MEMPROV_CLI" run --check -o r3.trace -- "$BIN/gate_leak" bogus >/dev/null 2>&1 &&
	"$MEMPROV_CLI" run --check --max-leak 4K -o r4.trace -- "$BIN/gate_leak" leak >/dev/null 2>&1 &&
	test_status 9 "$MEMPROV_CLI" run --check --gate-status 9 -o r5.trace -- "$BIN/gate_leak" leak >/dev/null 2>&1 &&
	test_status 2 "$MEMPROV_CLI" run --max-leak 1K -- /bin/true 2>/dev/null &&
	test_status 2 "$MEMPROV_CLI" run --check --gate-status 0 -- /bin/true 2>/dev/null &&
	test_status 127 "$MEMPROV_CLI" run --check -o r6.trace -- /no/such/program >/dev/null 2>&1
'

test_expect_success 'JUnit: one test case per trace, validates against a JUnit schema' '
	test_status 2 memprov check --junit j.xml leak.trace clean.trace junk.trace >/dev/null 2>&1 &&
	xmllint --noout --schema "$TOP/tests/gate/junit.xsd" j.xml &&
	test "$(xmllint --xpath "string(/testsuites/testsuite/@tests)" j.xml)" = 3 &&
	test "$(xmllint --xpath "string(/testsuites/testsuite/@failures)" j.xml)" = 1 &&
	test "$(xmllint --xpath "string(/testsuites/testsuite/@errors)" j.xml)" = 1 &&
	test "$(xmllint --xpath "count(//testcase/failure)" j.xml)" = 1 &&
	xmllint --xpath "string(//testcase/failure)" j.xml | grep -q "in leak_here at $SRC:$(L LEAK-HEAP $SRC)$" &&
	sed "s/ name=\"memprov check\"//" j.xml >broken.xml &&
	! xmllint --noout --schema "$TOP/tests/gate/junit.xsd" broken.xml 2>/dev/null
'

test_expect_success 'annotations: one ::error line per offending site' '
	test_status 1 memprov check --annotations kinds.trace >out &&
	grep "^::" out >ann &&
	n=$(L LEAK-HEAP $SRC) m=$(L LEAK-MMAP $SRC) &&
	{
	echo "::error file=$SRC,line=$m,title=memprov%3A definitely lost memory over budget::memprov: memory lost: mmap mmap: 8.0 KiB in 1 block definitely lost at exit in map_here at $SRC:$m (trace kinds.trace)"
	echo "::error file=$SRC,line=$n,title=memprov%3A definitely lost memory over budget::memprov: memory lost: heap malloc: 2.9 KiB in 3 blocks definitely lost at exit in leak_here at $SRC:$n (trace kinds.trace)"
	} >expect && test_cmp expect ann
'

test_expect_success 'a Python ctypes leak still fails under the default Python suppressions' '
	trace ct $PY "$TOP/tests/gate/ctypes_leak.py" && trace ctok $PY "$TOP/tests/gate/ctypes_leak.py" clean &&
	test_status 1 memprov check ct.trace >out &&
	grep -qx "    #1 heap malloc: 4.9 KiB in 1 block live at the end of the main module in leak at $TOP/tests/gate/ctypes_leak.py:$(L LEAK-CTYPES "$TOP/tests/gate/ctypes_leak.py")" out &&
	memprov check ctok.trace >/dev/null
'

test_expect_success 'a ctypes malloc and free looked up in libc'"'"'s own handle are recorded: the leak fails, the clean run passes (getcwd'"'"'s blocks freed through it too)' '
	# dlsym(handle of libc.so.6, "malloc") returned libc'"'"'s malloc, not
	# memprov'"'"'s: the leak passed the gate (nothing recorded), and the
	# blocks getcwd allocated and this free released stayed live (the
	# clean run failed)
	trace ctl $PY "$TOP/tests/gate/ctypes_leak.py" libc && trace ctlok $PY "$TOP/tests/gate/ctypes_leak.py" clean libc &&
	test_status 1 memprov check ctl.trace >out &&
	grep -qx "    #1 heap malloc: 4.9 KiB in 1 block live at the end of the main module in leak at $TOP/tests/gate/ctypes_leak.py:$(L LEAK-CTYPES "$TOP/tests/gate/ctypes_leak.py")" out &&
	memprov check ctlok.trace
'

test_expect_success 'a trace whose process called exec stands for the programs it became (a shim, sh -c exec)' '
	# `memprov run -o x.trace -- sh -c "exec prog"` (a pyenv shim does
	# the same): x.trace is the shell'"'"'s, replaced by exec and not gated;
	# the program'"'"'s is x.1.trace, and checking x.trace alone passed its leak
	trace chain sh -c "exec sh -c \"exec \\\"$BIN/gate_leak\\\" leak\"" &&
	ls chain*.trace >names && cat names && test "$(wc -l <names)" = 3 &&
	test_status 1 memprov check chain.trace >out && cat out &&
	grep -q "^memprov check: .*chain.trace (pid [0-9]*: sh -c .*): not gated: replaced by exec" out &&
	grep -q "^memprov check: .*chain.2.trace (pid [0-9]*: .*gate_leak leak): FAIL" out &&
	grep -qx "    #1 heap malloc: 2.9 KiB in 3 blocks definitely lost at exit in leak_here at $SRC:$(L LEAK-HEAP $SRC)" out &&
	grep -qx "memprov check: 3 traces, 1 over budget, 0 unreadable" out &&
	# named with its successors, or with a directory: each trace once
	test_status 1 memprov check chain.trace chain.2.trace chain.1.trace >out2 &&
	grep -qx "memprov check: 3 traces, 1 over budget, 0 unreadable" out2 &&
	trace chainok sh -c "exec \"$BIN/gate_leak\" clean" &&
	memprov check chainok.trace >out3 && cat out3 &&
	grep -qx "memprov check: 2 traces, 0 over budget, 0 unreadable" out3
'

test_expect_success 'growth: slope per mark, warm-up skipped by --skip or --after' '
	trace grow "$BIN/gate_leak" grow 12 &&
	test_status 1 memprov check --json --max-growth 1K --skip 3 grow.trace >g.json &&
	test "$(j g.json "[(o[\"type\"], o[\"slope\"], o[\"growth_bytes\"], o[\"location\"][\"line\"]) for o in j[\"traces\"][0][\"offenders\"]]")" = \
		"[('"'"'growth'"'"', 2048.0, 16384, $(L LEAK-GROW $SRC))]" &&
	test "$(j g.json "(j[\"traces\"][0][\"growth\"][\"points\"], j[\"traces\"][0][\"leak_bytes\"])")" = "(9, 0)" &&
	test_status 1 memprov check --max-growth 1K --after "step 3" grow.trace >out &&
	grep -q "^    #1 heap malloc grows 2.0 KiB per mark (16.0 KiB over the window" out &&
	memprov check --max-growth 2K --skip 3 grow.trace >/dev/null &&
	memprov check grow.trace >/dev/null &&
	printf "growth:grow_step\n" >gs && memprov check --max-growth 1K --skip 3 --suppressions gs grow.trace >out &&
	grep -qx "    1 growing site by growth:grow_step (gs:1)" out
'

# The workload keeps its arrays in a global (WORKLOAD) until its main
# module ends, where the gate measures: the leak budget is set above its
# working set (96 MiB), and growth judges.
test_expect_success 'Parla workload: --bug fails the growth gate, --fixed passes' '
	$PY -c "import numpy" 2>/dev/null || { echo "no numpy: not checked"; exit 0; }
	P="$TOP/scripts/parla_evict.py --groups 8 --arrays-per-group 4 --rows 262144 --cols 2 --gpu-budget 33554432 --write-every 2 --iters 12" &&
	trace bug $PY $P --bug && trace fixed $PY $P --fixed &&
	test_status 1 memprov check --json --max-growth 1M --max-leak 128M --skip 4 bug.trace >b.json &&
	test "$(j b.json "[(o[\"slope\"], o[\"location\"][\"file\"].split(\"/\")[-1], o[\"python\"][0][\"function\"]) for o in j[\"traces\"][0][\"offenders\"] if o[\"type\"] == \"growth\"]")" = \
		"[(4194304.0, '"'"'parray.py'"'"', '"'"'PArray._write_back_to_host'"'"')]" &&
	test "$(j b.json "j[\"traces\"][0][\"offenders\"][0][\"location\"][\"line\"]")" = \
		"$(sed -n "s/^summary: write-back allocation at .*parray.py:\([0-9]*\) .*/\1/p" bug.out)" &&
	memprov check --max-growth 1M --max-leak 128M --skip 4 fixed.trace >out &&
	grep -qx "  growth over 8 marks: 0 sites over 1.0 MiB per mark (the first 4 marks left out by --skip)" out &&
	test_status 1 memprov check --max-growth 1M --skip 4 fixed.trace >out &&
	grep -q "^    #1 heap malloc: 64.0 MiB in 32 blocks live at the end of the main module in preallocate" out
'

test_expect_success 'threads: a C program joining 4 threads and Python'"'"'s threading pass (the DTV)' '
	"$MEMPROV_CLI" run --check -o th.trace -- "$BIN/gate_leak" threads >out 2>&1 &&
	memprov check --reachable th.trace >out &&
	grep -qx "    1.2 KiB (1,216 B) in 4 blocks: leak:ld-linux (default: dynamic loader tables (link maps, dlopen, TLS, a thread'"'"'s DTV))" out &&
	"$MEMPROV_CLI" run --check -o pyth.trace -- $PY -c \
		"import threading; t=threading.Thread(target=len,args=((),)); t.start(); t.join()" >out 2>&1 &&
	grep -q "): ok$" out
'

# A test run's marks (memprov's pytest plugin): test_a keeps 8 MB, test_b
# frees what it made, test_c keeps 3000 B; pytest's own memory (library
# frames only) is not a test's.
test_expect_success 'per test: each test on what it kept; JUnit and annotations name it' '
	"$BIN/tracegen" -o pt.trace <<-EOF &&
	header pid=9 state=exited exit=0 cmd="python3 -m pytest" start=1000
	thread 1
	pycode ts=1001 id=1 file=/app/test_x.py name=test_a
	pycode id=2 file=/app/test_x.py name=test_b
	pycode id=3 file=/usr/lib/python3/dist-packages/_pytest/runner.py name=pytest_runtest_call
	pycode id=4 file=/app/test_x.py name=test_c
	stack id=1 python=1:5,3:100
	stack id=2 python=2:9,3:100
	stack id=3 python=3:120
	stack id=4 python=4:13,3:100
	alloc addr=0x100 size=777 stack=3
	mark serial=1 label="test-start test_x.py::test_a"
	alloc addr=0x1000 size=8000000 stack=1
	alloc addr=0x2000 size=5000 stack=3
	mark serial=2 label="test-end test_x.py::test_a"
	mark serial=3 label="test-start test_x.py::test_b"
	alloc addr=0x3000 size=1000 stack=2
	free addr=0x3000
	mark serial=4 label="test-end test_x.py::test_b"
	mark serial=5 label="test-start test_x.py::test_c"
	alloc addr=0x4000 size=3000 stack=4
	mark serial=6 label="test-end test_x.py::test_c"
	mark serial=7 label="__main__ end" flags=main-end
	EOF
	test_status 1 memprov check --annotations --junit ptj.xml pt.trace >out &&
	grep -qx "  per test: 3 tests, 2 over budget (what each kept from its start to its end, budget 0 B, all kinds): over budget" out &&
	grep -qx "  FAIL test_x.py::test_a: kept 7.6 MiB in 1 block" out &&
	grep -qx "    #1 heap malloc: 7.6 MiB in 1 block kept by test test_x.py::test_a in test_a at /app/test_x.py:5" out &&
	grep -qx "  FAIL test_x.py::test_c: kept 2.9 KiB in 1 block" out &&
	! grep -q "test_b" out &&
	grep -qx "::error file=/app/test_x.py,line=13,title=memprov%3A leak in a test over budget (test_x.py%3A%3Atest_c)::memprov: a test kept memory: heap malloc: 2.9 KiB in 1 block kept by test test_x.py::test_c in test_c at /app/test_x.py:13 (trace pt.trace)" out &&
	xmllint --noout --schema "$TOP/tests/gate/junit.xsd" ptj.xml &&
	test "$(xmllint --xpath "string(/testsuites/testsuite/@tests)" ptj.xml)" = 4 &&
	test "$(xmllint --xpath "string(/testsuites/testsuite/@failures)" ptj.xml)" = 2 &&
	test "$(xmllint --xpath "count(//testcase[@classname=\"test_x.py\"])" ptj.xml)" = 3 &&
	test "$(xmllint --xpath "count(//testcase[@name=\"test_b\"]/failure)" ptj.xml)" = 0 &&
	xmllint --xpath "string(//testcase[@name=\"test_a\"]/failure)" ptj.xml | grep -q "in test_a at /app/test_x.py:5$" &&
	test_status 1 memprov check --max-leak 4K pt.trace >out &&
	grep -qx "  per test: 3 tests, 1 over budget (what each kept from its start to its end, budget 4.0 KiB, all kinds): over budget" out &&
	test_status 1 memprov check --json pt.trace >pt.json &&
	test "$(j pt.json "[(t[\"nodeid\"], t[\"status\"], t[\"kept_bytes\"]) for t in j[\"traces\"][0][\"tests\"]]")" = \
		"[('"'"'test_x.py::test_a'"'"', '"'"'fail'"'"', 8000000), ('"'"'test_x.py::test_b'"'"', '"'"'ok'"'"', 0), ('"'"'test_x.py::test_c'"'"', '"'"'fail'"'"', 3000)]"
'

test_expect_success 'growth: --after naming no mark, --skip past the end: exit 2, the marks listed' '
	st=0 && memprov check --max-growth 1M --after NOSUCH grow.trace >out 2>err || st=$? &&
	test $st = 2 &&
	grep -qx "memprov: error: no mark named '"'"'NOSUCH'"'"' in '"'"'grow.trace'"'"': the window would be empty" err &&
	grep -qx "  \"step 0\" (1)" err &&
	grep -qx "memprov check: grow.trace: the growth window is empty (see the error above)" out &&
	st=0 && memprov check --max-growth 1M --skip 99 grow.trace >out 2>err || st=$? &&
	test $st = 2 &&
	grep -qx "memprov: error: --skip 99 leaves no mark of '"'"'grow.trace'"'"' to judge (it has 12)" err &&
	st=0 && memprov check --json --max-growth 1M --after NOSUCH --junit e.xml grow.trace >e.json 2>/dev/null || st=$? &&
	test $st = 2 &&
	test "$(j e.json "j[\"traces\"][0][\"status\"]")" = error &&
	test "$(xmllint --xpath "count(//testcase/error)" e.xml)" = 1 &&
	# without --max-growth they chose nothing: a wrong label passed (a
	# helper'"'"'s sweep); now a usage error, as for run --check
	st=0 && memprov check --after NOSUCH grow.trace >out 2>err || st=$? &&
	test $st = 2 && grep -qx "memprov: error: --after chooses the growth window: it needs --max-growth SIZE" err &&
	st=0 && memprov run --check --skip 2 -o sk.trace -- sh -c ": >ran" >out 2>err || st=$? &&
	test $st = 2 && grep -qx "memprov: error: --skip chooses the growth window: it needs --max-growth SIZE" err &&
	! test -e ran
'

# One site: 3 blocks lost, 2 kept in a global. The count is the 3 lost;
# the parenthesis said "(3 definitely, 2 still reachable)" as if they
# made 5 of the 3 (a helper's sweep): now the 2 are said apart.
test_expect_success 'a site with lost and reachable blocks: the blocks the rule leaves out said apart' '
	printf "%s\n" "#include <stdlib.h>" "void *volatile keep[2];" \
		"static void *one(void) { return malloc(100); }" \
		"int main(void) { for (int i = 0; i < 5; i++) { void *p = one(); if (i < 2) keep[i] = p; } return 0; }" >mixed.c &&
	${CC:-cc} -g -O0 -o mixed mixed.c &&
	st=0 && memprov run -o mixed.trace --check -- ./mixed >out 2>&1 || st=$? &&
	cat out && test $st = 23 &&
	grep -q "#1 heap malloc: 300 B in 3 blocks lost at exit (3 definitely; not gated: 2 still reachable) in one at .*mixed.c:3$" out
'

test_expect_success 'growth without marks: judged per second, and stderr says how to add marks' '
	memprov check --max-growth 1M clean.trace >out 2>err &&
	grep -q "^memprov: warning: '"'"'clean.trace'"'"' has no marks: growth is judged per second (" err &&
	grep -q "memprov run --mark-on MODULE:FUNCTION" err &&
	grep -q "^  growth over [0-9]* instants: 0 sites over 1.0 MiB per s (no marks: " out
'

test_expect_success 'growth with one mark (--mark-on a function that ran once): stderr says a step needs two' '
	# main runs once but for some 80 ms, allocating: the window after the
	# last import then holds several instants of the coarse clock (4 ms
	# steps); with a main that returned at once it held 2 in 2 of 3 runs
	printf "import time\ndef main():\n    for i in range(40):\n        b = bytearray(200000)\n        time.sleep(0.002)\nmain()\n" >once.py &&
	timeout 120 "$MEMPROV_CLI" run --mark-on __main__:main -o "$TRASH/once.trace" -- $PY once.py >/dev/null 2>&1 &&
	memprov check --max-growth 1M once.trace >out 2>err &&
	grep -q "^memprov: warning: '"'"'once.trace'"'"' has one mark (a function --mark-on names that ran once?), and a step needs two: growth is judged per second (" err &&
	grep -q "^  growth over [0-9]* instants: 0 sites over 1.0 MiB per s (one mark: " out &&
	memprov growth once.trace >g.out 2>/dev/null &&
	grep -q "^  (one mark: " g.out
'

# A C++ container allocates in the standard library's headers, inlined
# into the program: the gate named `std::__new_allocator<int>::allocate at
# /usr/include/c++/12/bits/new_allocator.h:137` and a GitHub annotation
# pointed there. It names the program's line now, the headers' frames
# still listed.
test_expect_success 'C++ containers: the gate names the program line, not the standard library header' '
	cat >cxx.cc <<-\EOF &&
	#include <map>
	#include <string>
	#include <vector>
	struct Holder { std::vector<int> v; std::map<int, std::string> m; };
	static void fill(Holder *h)
	{
		for (int i = 0; i < 100; i++) {
			h->v.push_back(i); // VEC
			h->m[i] = std::string(100, 0x78); // MAP
		}
	}
	int main()
	{
		Holder *h = new Holder;
		fill(h);
		h = nullptr;
		return 0;
	}
	EOF
	${CXX:-c++} -g -O2 -o cxx cxx.cc &&
	trace cxx ./cxx &&
	test_status 1 memprov check --annotations cxx.trace >cxx-ann.out &&
	grep "^::" cxx-ann.out >cxx-ann && cat cxx-ann &&
	not grep "include/c++" cxx-ann &&
	test "$(grep -c "^::error file=$TRASH/cxx.cc,line=9," cxx-ann)" = 2 &&
	grep -q "^::error file=$TRASH/cxx.cc,line=8,.* in fill at $TRASH/cxx.cc:8 " cxx-ann &&
	test_status 1 memprov check cxx.trace >cxx.txt &&
	grep -q "^      std::__new_allocator<int>::allocate(unsigned long, void const\*) /usr/include/c++/" cxx.txt &&
	grep -q "#[0-9] heap operator new: 512 B in 1 block indirectly lost at exit in fill at $TRASH/cxx.cc:8$" cxx.txt
'

test_done
