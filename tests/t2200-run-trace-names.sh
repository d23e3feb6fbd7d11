#!/bin/sh
# t2200-run-trace-names.sh - `memprov run` names the trace the command
# really wrote: the library never overwrites a file, so a second run with
# the same -o PATH writes NAME.1.trace, and %% in the template is a '%'.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$BIN/leak3" || test_skip "libmemprov.so or tests/bin/leak3 not built"

test_expect_success 'an existing -o file: the new trace is NAME.1.trace, and run says so' '
	memprov run -o same.trace -- "$BIN/leak3" 2>err1 &&
	grep -x "memprov: trace written to same.trace" err1 &&
	memprov run -o same.trace -- "$BIN/leak3" 2>err2 &&
	grep -x "memprov: trace written to same.1.trace" err2 &&
	! grep -q "child" err2 &&
	test -s same.1.trace
'

test_expect_success '%% in the template is a percent sign in the name reported' '
	memprov run -o "pct%%.%p.trace" -- "$BIN/leak3" 2>err &&
	name=$(sed -n "s/^memprov: trace written to //p" err) &&
	case "$name" in pct%.*.trace) ;; *) echo "reported $name"; exit 1 ;; esac &&
	test -s "$name"
'

test_done
