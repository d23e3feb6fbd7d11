#!/bin/sh
# t2136-run-dir.sh - `memprov run -d DIR`: every process's trace in DIR
# (created 0700) and DIR/index, one line per process event appended by
# the preload object from every process (start, exec, exit, killed), and
# reports over a forked pool's children see what they inherited.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

test_expect_success 'run -d: a pool of 4: five traces and an index in a 0700 directory' '
	timeout 60 "$MEMPROV_CLI" run -d run1 -- "$BIN/forkinherit" pool 4 2 >out &&
	test "$(stat -c %a run1)" = 700 &&
	ls run1 >files &&
	test $(grep -c "^memprov\.[0-9]*\.trace$" files) = 5 &&
	grep -qx index files
'

test_expect_success 'the index: a start and an exit line per process, parent first, with statuses' '
	parent=$(awk -F"\t" "\$1 == \"start\" && \$5 == \"new\" { print \$2 }" run1/index) &&
	test -n "$parent" &&
	test $(awk -F"\t" "\$1 == \"start\"" run1/index | wc -l) = 5 &&
	test $(awk -F"\t" "\$1 == \"start\" && \$5 == \"fork\" && \$3 == $parent" run1/index | wc -l) = 4 &&
	test "$(awk -F"\t" "\$1 == \"exit\" && \$3 == $parent { print \$5 }" run1/index | sort | tr "\n" " ")" = "0 1 2 3 " &&
	test "$(awk -F"\t" "\$1 == \"exit\" && \$2 == $parent { print \$5 }" run1/index)" = 0 &&
	test $(awk -F"\t" "NF != 6" run1/index | wc -l) = 0 &&
	for c in $(sed -n "s/^child=//p" out); do
		grep -q "^start	$c	$parent	[0-9]*	fork	.*forkinherit pool 4 2$" run1/index || exit 1
	done
'

test_expect_success 'the index: exec and killed lines' '
	timeout 60 "$MEMPROV_CLI" run -d run2 -- sh -c "exec \"$BIN/forkinherit\" inherit >/dev/null" &&
	cat run2/index &&
	test $(grep -c "^exec	" run2/index) = 1 &&
	test $(grep -c "^start	[0-9]*	[0-9]*	[0-9]*	new	.*forkinherit inherit$" run2/index) = 1 &&
	test_status 143 timeout 60 "$MEMPROV_CLI" run -d run3 -- sh -c "kill -TERM \$\$" &&
	grep "^killed	[0-9]*	[0-9]*	[0-9]*	15	sh -c" run3/index
'

test_expect_success 'the leaking worker inherited the parent block: 1000 B inherited, 12288 B its own' '
	leaker=$(sed -n "s/^child=//p" out | sed -n 3p) &&
	memprov leaks --json "run1/memprov.$leaker.trace" >leaker.json &&
	jget --check leaker.json inherited.held.bytes=1000 totals.heap.bytes=13288 \
		"=[(s[\"bytes\"], s[\"frames\"][0][\"function\"]) for s in j[\"sites\"]]==[[12288, \"worker_leaks\"]]"
'

test_expect_success 'run -d refuses a directory that is not empty, and -d with -o' '
	test_status 1 memprov run -d run1 -- true 2>err &&
	grep "is not empty" err &&
	test_status 2 memprov run -d run4 -o x.trace -- true 2>err &&
	grep "choose one" err &&
	! test -e run4
'

# a '%' in DIR's own name is the directory's, not a pid to fill in: every
# process failed with "cannot create the trace file .../run<pid>/..."
test_expect_success 'run -d with a % in the directory name: the traces go there' '
	rm -rf "run%p" &&
	timeout 60 "$MEMPROV_CLI" run -d "run%p" -- sh -c "ls >/dev/null; echo hi" >pct.out 2>pct.err &&
	echo hi >expect && test_cmp expect pct.out &&
	! grep -q "cannot create" pct.err &&
	test $(ls "run%p" | grep -c "^memprov\.[0-9]*\.trace$") = 2
'

test_done
