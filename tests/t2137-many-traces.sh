#!/bin/sh
# t2137-many-traces.sh - reports over a job of many processes: `leaks`
# on a run directory merges every process's sites by their frames and
# names the leaking line once, with the processes that hold it (1 of 5),
# `--per-process` lists them apart, `stats` prints the process tree with
# how each process ended; a C pool and a Python multiprocessing pool.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

test_expect_success 'a C pool of 4, worker 2 leaks: leaks DIR names worker_leaks once, 1 process of 5' '
	timeout 60 "$MEMPROV_CLI" run -d pool -- "$BIN/forkinherit" pool 4 2 >out &&
	memprov leaks pool >leaks.txt &&
	cat leaks.txt &&
	grep "^5 traces, 5 processes" leaks.txt &&
	grep "^1 site of the programs" leaks.txt &&
	grep "^  #1 heap malloc: 1 process of 5, 3 blocks, 12.0 KiB (12,288 B): 3 definitely lost$" leaks.txt &&
	test $(grep -c "worker_leaks .*forkinherit.c:" leaks.txt) = 1 &&
	leaker=$(sed -n "s/^child=//p" out | sed -n 3p) &&
	grep "^      pid $leaker: 3 blocks, 12.0 KiB (12,288 B)" leaks.txt
'

test_expect_success 'the same traces named one by one give the same report' '
	memprov leaks pool/memprov.*.trace >leaks2.txt &&
	test_cmp leaks.txt leaks2.txt
'

test_expect_success '--per-process: the leaking worker alone has sites of its own' '
	memprov leaks --per-process pool >pp.txt &&
	test $(grep -c "^pid [0-9]* (.*), exited with status [0-9]*: [0-9]* sites* of its own:" pp.txt) = 1 &&
	grep "^pid $(sed -n "s/^child=//p" out | sed -n 3p) (.*), exited with status 2: 1 site of its own:" pp.txt
'

test_expect_success 'stats DIR: the tree, the parent and its 4 children with their exit statuses' '
	memprov stats pool >tree.txt &&
	cat tree.txt &&
	parent=$(sed -n "s/^  \([0-9]*\) .*/\1/p" tree.txt) &&
	test $(echo "$parent" | wc -l) = 1 &&
	grep "^  $parent .*: exited with status 0, peak 1,000 B, live at the end 0 B of its own$" tree.txt &&
	test "$(sed -n "s/^    [0-9]* .*: exited with status \([0-9]\), .*(+1,000 B inherited)$/\1/p" tree.txt | sort | tr "\n" " ")" = "0 1 2 3 "
'

test_expect_success 'a Python multiprocessing pool of 4: the leaking line once, 1 process of 5' '
	timeout 120 "$MEMPROV_CLI" run -d mp -- /usr/bin/python3 "$TOP/tests/py/mp_pool.py" &&
	memprov leaks mp >mp.txt &&
	cat mp.txt &&
	grep "^  #1 heap malloc: 1 process of 5, 3 blocks, 11.4 MiB (12,000,003 B)$" mp.txt &&
	test $(grep -c "^      task .*mp_pool.py:14$" mp.txt) = 1 &&
	memprov stats mp >mptree.txt &&
	test $(grep -c "^    [0-9]* .*mp_pool.py: exited with status 0" mptree.txt) = 4
'

# A Python worker's scan does not read its parent's trace: Python programs
# are judged by what is live, and marking a whole inherited interpreter at
# every worker's exit is what a pool cannot afford.
test_expect_success 'a Python worker inherits its parent interpreter: set apart in one line, not listed' '
	worker=$(sed -n "s/^    \([0-9]*\) .*mp_pool.py: exited with status 0.*/\1/p" mptree.txt | head -1) &&
	memprov leaks --json mp/memprov.$worker.trace >w.json &&
	/usr/bin/python3 "$TOP/tests/progs/json_get.py" --check w.json inherited.known=true \
		"=len(j[\"inherited_sites\"])==0" \
		"=j[\"inherited_set_apart\"][\"blocks\"]>500==true" \
		"=j[\"inherited_set_apart\"][\"bytes\"]==j[\"inherited\"][\"held\"][\"bytes\"]==true" \
		"=\"inherited\" not in j[\"reach\"][\"notes\"]==true" &&
	memprov leaks mp/memprov.$worker.trace >w.txt &&
	grep "^inherited and still held, not the program.s own (the parent.s interpreter and module state, arenas, suppressed): [0-9,]* blocks" w.txt &&
	memprov leaks --all --json mp/memprov.$worker.trace >wall.json &&
	/usr/bin/python3 "$TOP/tests/progs/json_get.py" --check wall.json \
		"=len(j[\"inherited_sites\"])>100==true" inherited_set_apart.blocks=0
'

test_expect_success 'children started by vfork (subprocess) and posix_spawn sit under their parent' '
	timeout 60 "$MEMPROV_CLI" run -d sp -- /usr/bin/python3 -c "
import subprocess, os
subprocess.run([\"/bin/true\"])
os.posix_spawn(\"/bin/echo\", [\"/bin/echo\", \"spawned\"], os.environ)
os.wait()
" >/dev/null 2>&1 &&
	memprov stats sp >sp.txt &&
	cat sp.txt &&
	grep "^process tree: 3 traces, 3 processes$" sp.txt &&
	grep "^  [0-9]* /usr/bin/python3 -c" sp.txt &&
	grep "^    [0-9]* /bin/true: exited with status 0" sp.txt &&
	grep "^    [0-9]* /bin/echo spawned: exited with status 0" sp.txt
'

test_expect_success 'check DIR: each process on its own, the leaking worker over budget' '
	test_status 1 memprov check --max-leak 0 pool >check.txt &&
	grep "^memprov check: 5 traces, 1 over budget, 0 unreadable$" check.txt &&
	test $(grep -c ": FAIL$" check.txt) = 1 &&
	memprov check --max-leak 12288 pool
'

test_expect_success 'a directory without traces, or an unreadable operand, is an error' '
	mkdir empty &&
	test_status 1 memprov leaks empty 2>err && grep "no memprov trace in" err &&
	test_status 1 memprov stats pool nothere.trace 2>err && grep "nothere.trace" err
'

test_done
