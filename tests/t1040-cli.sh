#!/bin/sh
# t1040-cli.sh - the command line: help, usage errors (exit 2), and
# `memprov run`: environment given to the command, trace paths reported
# (children too), exit status like a shell's, signals forwarded. The run
# tests preload a harmless system library instead of libmemprov.so.
. "$(dirname "$0")/test-lib.sh"

LIBM=$(realpath /lib/x86_64-linux-gnu/libm.so.6 2>/dev/null || :)
[ -n "$LIBM" ] && [ -f "$LIBM" ] || test_skip "no libm.so.6 to preload"
export LIBM

test_expect_success 'memprov --help and memprov help SUBCOMMAND: exit 0' '
	memprov --help >out &&
	grep -F "memprov leaks [--json] [--native|--python-only] [--alloc-fn NAME]... [--all] [--no-default-suppressions] [--parent TRACE] [--per-process] [--jobs N] TRACE|DIR..." out &&
	grep -F "memprov run [-o PATH | -d DIR] [--no-clobber] [--mark-on MODULE:FUNCTION]... [--skip-exe PATTERN]... [--python-objects] [--pytest] [--check [CHECK OPTIONS] [--json-file FILE]] -- CMD [ARGS...]" out &&
	memprov help stats >out &&
	head -n 1 out >first && echo "usage: memprov stats [--json] [--parent TRACE] TRACE|DIR..." >expect &&
	test_cmp expect first &&
	memprov leaks --help | grep -F -- "--python-only"
'

test_expect_success 'unknown subcommand, option, help topic: exit 2, one line and the usage' '
	st=0 && memprov frobnicate 2>err || st=$? && test $st = 2 &&
	head -n 1 err >first && echo "memprov: error: unknown subcommand '\''frobnicate'\''" >expect &&
	test_cmp expect first && grep -F "usage: memprov [--color=WHEN] SUBCOMMAND" err &&
	st=0 && memprov --frob 2>err || st=$? && test $st = 2 &&
	st=0 && memprov help frob 2>err || st=$? && test $st = 2 &&
	st=0 && memprov 2>err || st=$? && test $st = 2 &&
	st=0 && memprov stats --frob x 2>err || st=$? && test $st = 2 &&
	st=0 && memprov dump a b 2>err || st=$? && test $st = 2 &&
	grep -F "more than one trace given" err
'

test_expect_success 'run: LD_PRELOAD, MEMPROV_OUTPUT (made absolute), MEMPROV_MARK_ON; trace path reported' '
	LD_PRELOAD= MEMPROV_LIB=$LIBM memprov run -o "o.%p.trace" --mark-on app:step --mark-on m.n:f -- \
		sh -c "echo \"\$LD_PRELOAD|\$MEMPROV_OUTPUT|\$MEMPROV_MARK_ON\" >env.txt; echo \$\$ >pid; : >o.\$\$.trace" 2>err &&
	echo "$LIBM|$(pwd)/o.%p.trace|app:step,m.n:f" >expect && test_cmp expect env.txt &&
	echo "memprov: trace written to o.$(cat pid).trace" >expect && test_cmp expect err
'

test_expect_success 'run: an existing LD_PRELOAD is kept after the library' '
	ASAN_OPTIONS=verify_asan_link_order=0 LD_PRELOAD=$LIBM MEMPROV_LIB=$LIBM memprov run -o x -- sh -c "echo \"\$LD_PRELOAD\" >pre" 2>/dev/null &&
	echo "$LIBM $LIBM" >expect && test_cmp expect pre
'

test_expect_success 'run: traces of child processes are named too' '
	MEMPROV_LIB=$LIBM memprov run -o "c.%p.trace" -- \
		sh -c "sh -c \": >c.\\\$\\\$.trace; echo \\\$\\\$ >kid\"; : >c.\$\$.trace; echo \$\$ >pid" 2>err &&
	printf "memprov: trace written to c.%s.trace\nmemprov: other trace of this run: c.%s.trace (another process)\n" \
		"$(cat pid)" "$(cat kid)" >expect &&
	test_cmp expect err
'

test_expect_success 'run: exit status of the command; 128+N when killed; 127 when not found' '
	st=0 && MEMPROV_LIB=$LIBM memprov run -o x -- sh -c "exit 7" 2>/dev/null || st=$? && test $st = 7 &&
	st=0 && MEMPROV_LIB=$LIBM memprov run -o x -- sh -c "kill -9 \$\$" 2>/dev/null || st=$? && test $st = 137 &&
	st=0 && MEMPROV_LIB=$LIBM memprov run -o x -- nosuch-cmd-t1040 2>err || st=$? && test $st = 127 &&
	echo "memprov: error: cannot run '\''nosuch-cmd-t1040'\'': No such file or directory" >expect &&
	test_cmp expect err
'

test_expect_success 'run: usage errors exit 2; a missing library exits 1 with what to do' '
	st=0 && memprov run 2>err || st=$? && test $st = 2 && grep -F "no command given" err &&
	st=0 && memprov run --bogus -- true 2>err || st=$? && test $st = 2 &&
	st=0 && memprov run --mark-on nocolon -- true 2>err || st=$? && test $st = 2 &&
	st=0 && MEMPROV_LIB=/nonexistent/libmemprov.so memprov run -- true 2>err || st=$? && test $st = 1 &&
	grep -F "MEMPROV_LIB is '\''/nonexistent/libmemprov.so'\'', which is not a readable file" err
'

test_expect_success 'run: SIGTERM to memprov reaches the command' '
	MEMPROV_LIB=$LIBM "$MEMPROV_CLI" run -o x -- sh -c ": >ready; exec sleep 60" 2>/dev/null &
	mp=$! &&
	timeout 20 sh -c "while [ ! -e ready ]; do sleep 0.05; done" &&
	kill -TERM $mp &&
	st=0 && wait $mp || st=$? &&
	test $st = 143
'

test_done
