#!/bin/sh
# t1042-cli-conventions.sh - memprov behaves as a Unix tool: --version and
# version; options before or after the traces for every subcommand (one
# rule; -- ends the options; run's command keeps its own options); every
# file written named on stderr; every error with the system's reason and a
# non-zero status (run -o into a missing directory fails before the
# command runs); colour on a terminal only (NO_COLOR, --color); the man
# page covers every subcommand and option; bash completion completes them.
. "$(dirname "$0")/test-lib.sh"

[ -x "$BIN/grow" ] || test_skip "tests/bin/grow not built (make test)"

test_expect_success 'memprov --version and memprov version: version, trace format, schemas' '
	memprov --version >v1 && memprov version >v2 && test_cmp v1 v2 &&
	printf "memprov %s\ntrace format %s\nJSON reports: memprov.REPORT/1\n" "$(cat "$TOP/VERSION")" \
		"$(sed -n "s/^#define MP_VERSION \([0-9]*\).*/\1/p" "$TOP/include/memprov_trace.h")" >want &&
	test_cmp want v1 &&
	st=0 && memprov version extra 2>err || st=$? && test $st = 2 &&
	grep -F "version takes no argument" err
'

test_expect_success 'options after the trace: the same output as before it, for every report' '
	timeout 60 env MEMPROV_OUTPUT=$TRASH/g.trace LD_PRELOAD=$MEMPROV_LIB "$BIN/grow" 20 &&
	timeout 60 env MEMPROV_OUTPUT=$TRASH/h.trace LD_PRELOAD=$MEMPROV_LIB "$BIN/grow" 10 noleak &&
	for args in "leaks --json" "leaks --all --native" "stats --json" "growth --min-bytes 1 --json" \
		"growth --folded --skip 2" "peak --json" "timeline --points 5 --json" "dump --color=never"; do
		memprov $args g.trace >before 2>/dev/null &&
		memprov ${args%% *} g.trace ${args#* } >after 2>/dev/null &&
		test_cmp before after || exit 1
	done &&
	memprov diff --json g.trace h.trace >before &&
	memprov diff g.trace --json h.trace >after && test_cmp before after &&
	memprov diff g.trace h.trace --min-bytes 1K --json >after2 && test_cmp before after2 &&
	st=0 && memprov check g.trace --max-leak 1K --reachable >out || st=$? && test $st = 1 &&
	memprov check g.trace --max-leak 1M >out &&
	memprov html g.trace -o page.html --points 5 2>err && test -s page.html &&
	POSIXLY_CORRECT=1 memprov leaks g.trace --json >after && memprov leaks --json g.trace >before &&
	test_cmp before after
'

test_expect_success '-- ends the options; run: the command keeps its own options' '
	cp g.trace ./--json &&
	memprov leaks -- --json >out && grep -F "trace: --json" out &&
	MEMPROV_LIB=$MEMPROV_LIB memprov run -o r.trace sh -c "echo \"\$@\" >args" sh --json -o x 2>err &&
	echo "--json -o x" >want && test_cmp want args &&
	MEMPROV_LIB=$MEMPROV_LIB memprov run -o r2.trace -- sh -c "echo \"\$@\" >args" sh --help 2>err &&
	echo "--help" >want && test_cmp want args
'

test_expect_success 'every file written is named on stderr' '
	memprov html -o p.html g.trace 2>err &&
	echo "memprov: HTML report written to p.html" >want && test_cmp want err &&
	st=0 && memprov check --reachable --junit j.xml g.trace >/dev/null 2>err || st=$? && test $st = 1 &&
	echo "memprov: JUnit file written to j.xml" >want && test_cmp want err &&
	memprov run -o t.trace -- /bin/true 2>err &&
	echo "memprov: trace written to t.trace" >want && test_cmp want err
'

test_expect_success 'errors: the system'"'"'s reason and a non-zero status' '
	st=0 && memprov run -o /nonexistent/dir/x.trace -- sh -c ": >ran" 2>err || st=$? &&
	test $st = 1 && test ! -e ran &&
	echo "memprov: error: cannot write the trace '"'"'/nonexistent/dir/x.trace'"'"' in '"'"'/nonexistent/dir'"'"': No such file or directory" >want &&
	test_cmp want err &&
	st=0 && memprov run -o g.trace/x -- sh -c ": >ran" 2>err || st=$? &&
	test $st = 1 && test ! -e ran && grep -F ": Not a directory" err &&
	st=0 && memprov leaks nosuch.trace 2>err || st=$? && test $st = 1 &&
	grep -Fx "memprov: error: cannot open '"'"'nosuch.trace'"'"': No such file or directory" err &&
	st=0 && memprov leaks g.trace >/dev/full 2>err || st=$? && test $st = 1 &&
	grep -Fx "memprov: error: cannot write the report to stdout: No space left on device" err &&
	st=0 && memprov html -o /nonexistent/p.html g.trace 2>err || st=$? && test $st = 1 &&
	grep -F "cannot write '"'"'/nonexistent/p.html'"'"': No such file or directory" err &&
	st=0 && memprov check --reachable --junit /nonexistent/j.xml g.trace >/dev/null 2>err || st=$? && test $st = 2 &&
	grep -F "/nonexistent/j.xml'"'"': No such file or directory" err &&
	MEMPROV_OUTPUT=/nonexistent/x.trace LD_PRELOAD=$MEMPROV_LIB /bin/true 2>err &&
	grep -Fx "memprov: cannot create the trace file /nonexistent/x.trace: No such file or directory" err
'

test_expect_success 'colour: never in a pipe, on a terminal unless NO_COLOR, --color forces' '
	esc=$(printf "\033") &&
	test_status 1 memprov leaks nosuch.trace 2>err && not grep -F "$esc" err &&
	test_status 1 memprov --color=always leaks nosuch.trace 2>err && grep -F "${esc}[1;31merror:${esc}[m" err &&
	test_status 1 memprov leaks --color=always nosuch.trace 2>err && grep -F "$esc" err &&
	test_status 1 memprov leaks nosuch.trace --color 2>err && grep -F "$esc" err &&
	command -v script >/dev/null || exit 0 &&
	TERM=xterm script -qec "$MEMPROV_CLI leaks nosuch.trace" /dev/null >tty.out || : &&
	grep -F "$esc" tty.out &&
	NO_COLOR=1 TERM=xterm script -qec "$MEMPROV_CLI leaks nosuch.trace" /dev/null >tty.out || : &&
	not grep -F "$esc" tty.out &&
	TERM=xterm script -qec "$MEMPROV_CLI leaks --color=never nosuch.trace" /dev/null >tty.out || : &&
	not grep -F "$esc" tty.out &&
	NO_COLOR=1 TERM=xterm script -qec "$MEMPROV_CLI --color=always leaks nosuch.trace" /dev/null >tty.out || : &&
	grep -F "$esc" tty.out &&
	st=0 && memprov leaks --color=sometimes g.trace 2>err || st=$? && test $st = 2 &&
	grep -F "auto, always or never" err
'

test_expect_success 'the man page names every subcommand and option, and renders' '
	man=$TOP/docs/memprov.1 &&
	grep -F ".TH MEMPROV 1 " "$man" | grep -F "\"memprov $(cat "$TOP/VERSION")\"" &&
	memprov --help | sed -n "s/^  memprov \([a-z]*\).*/\1/p" | sort -u >subs &&
	test $(wc -l <subs) -ge 12 &&
	while read -r sub; do
		grep -q "^\.SS \"memprov $sub\b\|^\.BR* *$sub\b\|memprov $sub\b" "$man" || { echo "no $sub"; exit 1; }
		memprov help $sub 2>/dev/null | grep -o -- "--[a-z][a-z-]*" | sort -u | while read -r opt; do
			grep -qF -- "$(echo "$opt" | sed "s/-/\\\\-/g")" "$man" || { echo "no $opt ($sub)"; exit 1; }
		done || exit 1
	done <subs &&
	if command -v man >/dev/null; then
		MANWIDTH=80 man --warnings -l "$man" >man.txt 2>warn && test ! -s warn &&
		grep -F "memprov - find leaked and growing memory" man.txt
	fi
'

test_expect_success 'bash completion: subcommands, options, kinds, traces' '
	command -v bash >/dev/null || exit 0 &&
	PATH=$(dirname "$MEMPROV_CLI"):$PATH bash -c "
		. \"$TOP/scripts/memprov-completion.bash\"
		c() { COMP_WORDS=(\"\$@\"); COMP_CWORD=\$((\${#COMP_WORDS[@]} - 1)); _memprov; echo \"\${COMPREPLY[*]}\"; }
		c memprov le
		c memprov leaks --js
		c memprov check --kind dev
		c memprov g.tr
		c memprov leaks g.tr
		c memprov help ti
		c memprov growth x --aft
	" >got &&
	printf "%s\n" leaks --json device "" g.trace timeline --after >want &&
	test_cmp want got
'

test_expect_success 'many traces: an unreadable operand is an error, the others are still reported' '
	mkdir -p empty one && cp g.trace one/ &&
	st=0 && memprov leaks g.trace nosuch.trace >many.out 2>many.err || st=$? && test $st = 1 &&
	grep -F "cannot read '"'"'nosuch.trace'"'"' as a memprov trace" many.err &&
	grep -x "1 trace, 1 process (images replaced by exec not counted)" many.out &&
	st=0 && memprov leaks empty >none.out 2>none.err || st=$? && test $st = 1 &&
	test ! -s none.out && grep -Fx "memprov: error: no memprov trace in '"'"'empty'"'"'" none.err &&
	st=0 && memprov stats g.trace nosuch.trace >tree.out 2>/dev/null || st=$? && test $st = 1 &&
	grep "^process tree: 1 trace, 1 process" tree.out &&
	memprov stats --json one >one.json && memprov stats --json g.trace >g.json &&
	sed "s|\"trace\":\"one/g.trace\"|\"trace\":\"g.trace\"|" one.json >one2.json && test_cmp g.json one2.json &&
	st=0 && memprov stats --json empty 2>err || st=$? && test $st = 1 &&
	grep -F "no memprov trace in" err
'

test_expect_success 'conflicting options, empty windows and a full stdout are errors with status 2' '
	st=0 && memprov leaks --native --python-only g.trace 2>err || st=$? && test $st = 2 &&
	grep -F "native and --python-only do not go together" err &&
	st=0 && memprov html -o nope.html --after nosuch g.trace 2>err || st=$? && test $st = 2 &&
	test ! -e nope.html && grep -F "no mark named '"'"'nosuch'"'"'" err &&
	st=0 && memprov html -o many.html --skip 100000 g.trace h.trace 2>err || st=$? && test $st = 2 &&
	test ! -e many.html &&
	st=0 && memprov diff --growth --skip 100000 g.trace h.trace >out 2>err || st=$? && test $st = 2 &&
	test ! -s out && grep -F "leaves no" err &&
	st=0 && memprov check --max-leak 1M g.trace >/dev/full 2>err || st=$? && test $st = 2 &&
	grep -Fx "memprov: error: cannot write the report to stdout: No space left on device" err &&
	st=0 && MEMPROV_LIB=$MEMPROV_LIB memprov run --check --json-file /dev/full -o jf.trace -- /bin/true 2>err ||
		st=$? && test $st = 2 &&
	grep -Fx "memprov: error: cannot write the gate report (JSON) to /dev/full: No space left on device" err &&
	! grep "written to /dev/full" err
'

# Running out of memory: the analyzer exported its error(fmt, ...), which
# took the place of glibc's error(3) that libdw calls when it runs out of
# memory: SIGSEGV under a 20 MB address-space limit. And check exited 1
# ("over budget") when it ran out of memory itself; errors are 2.
test_expect_success 'out of memory: no signal at any address-space limit; check says 2 for its own' '
	! nm -D --defined-only "$MEMPROV_CLI" | grep -v "@" &&
	"$MEMPROV_CLI" run -o oom.trace -- /bin/ls / >/dev/null 2>&1 &&
	ours=0 &&
	for mb in 14 16 18 20 22 24 26 28 30 34 40; do
		rc=0 && prlimit --as=$((mb * 1000000)) "$MEMPROV_CLI" check --max-leak 10G oom.trace \
			>/dev/null 2>oom.$mb.err || rc=$? &&
		echo "$mb MB: $rc $(head -c 100 oom.$mb.err)" &&
		test $rc -lt 128 || exit 1
		if grep -q "^memprov: out of memory" oom.$mb.err; then
			test $rc = 2 || exit 1
			ours=1
		fi
	done &&
	test $ours = 1
'

test_done
