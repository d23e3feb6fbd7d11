#!/bin/sh
# t2200-run-trace-names.sh - `memprov run` names the trace the command
# really wrote and never lets an old one pass for it: an older memprov
# trace at -o PATH is replaced (with its numbered siblings, the rest of
# that earlier run, and no other file), --no-clobber keeps it and the new trace is
# NAME.1.trace, a file that is not a memprov trace (or a symbolic link)
# is never touched, and %% in the template is a '%'. A relative -o PATH
# (and the default) is relative to where memprov runs, for every process
# of the command, also one that changed directory first.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$BIN/leak3" || test_skip "libmemprov.so or tests/bin/leak3 not built"

# pid_of TRACE: the pid its header names
pid_of() { memprov stats "$1" | sed -n "s/^pid: \([0-9]*\).*/\1/p"; }
# pid_of_cmd WORD TRACE...: the pid of the trace whose command holds WORD
pid_of_cmd() {
	w=$1 && shift && for t; do
		memprov stats "$t" | grep -q "^pid: .*command: .*$w" && pid_of "$t"
	done
}

test_expect_success 'an older trace at -o PATH is replaced, and run says so' '
	memprov run -o same.trace -- "$BIN/leak3" 2>err1 &&
	grep -x "memprov: trace written to same.trace" err1 &&
	first=$(pid_of same.trace) &&
	memprov run -o same.trace -- "$BIN/leak3" 2>err2 &&
	grep -x "memprov: trace written to same.trace (an older trace there was replaced)" err2 &&
	second=$(pid_of same.trace) &&
	test "$first" != "$second" &&
	! test -e same.1.trace && ! grep -q "other trace" err2
'

test_expect_success 'the older run'\''s numbered traces go with it' '
	memprov run -o fam.trace -- sh -c "\"$BIN/leak3\"; \"$BIN/leak3\"" 2>err1 &&
	test -s fam.1.trace && test -s fam.2.trace &&
	echo keep >fam.notes &&
	memprov run -o fam.trace -- "$BIN/leak3" 2>err2 &&
	! test -e fam.1.trace && ! test -e fam.2.trace &&
	test -s fam.trace && test -s fam.notes
'

# A helper's sweep: the user's copies beside the trace (fam.baseline.trace)
# and a numbered trace of another run (a pid of an LD_PRELOAD run, a later
# --no-clobber run) were removed with the older run's own traces
test_expect_success 'only the older run'\''s traces go: copies and other runs'\'' traces stay' '
	memprov run -o cp.trace -- sh -c "\"$BIN/leak3\"; exec \"$BIN/leak3\"" 2>err1 &&
	test -s cp.1.trace && test -s cp.2.trace &&
	cp cp.trace cp.baseline.trace && cp cp.2.trace cp.v2.fixed.trace &&
	LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$PWD/cp.%p.trace" "$BIN/leak3" &&
	other=$(ls cp.[0-9]*.trace | grep -v "^cp\.[12]\.trace$") && test -s "$other" &&
	memprov run --no-clobber -o cp.trace -- "$BIN/leak3" 2>err2 &&
	test -s cp.3.trace &&
	memprov run -o cp.trace -- "$BIN/leak3" 2>err3 &&
	grep -x "memprov: trace written to cp.trace (an older trace there was replaced)" err3 &&
	! test -e cp.1.trace && ! test -e cp.2.trace &&
	test -s cp.baseline.trace && test -s cp.v2.fixed.trace && test -s "$other" && test -s cp.3.trace
'

test_expect_success '--no-clobber: the older trace stays, the new one is NAME.1.trace' '
	memprov run -o keep.trace -- "$BIN/leak3" 2>err1 &&
	cp keep.trace keep.orig &&
	memprov run --no-clobber -o keep.trace -- "$BIN/leak3" 2>err2 &&
	grep -x "memprov: trace written to keep.1.trace (keep.trace was left as it was: an older trace, --no-clobber)" err2 &&
	cmp keep.trace keep.orig && test -s keep.1.trace
'

test_expect_success 'a file that is not a memprov trace is never overwritten' '
	echo "my notes" >notes.trace &&
	memprov run -o notes.trace -- "$BIN/leak3" 2>err &&
	grep -x "memprov: trace written to notes.1.trace (notes.trace was left as it was: not a memprov trace)" err &&
	echo "my notes" >expect && test_cmp expect notes.trace
'

test_expect_success 'a symbolic link at -o PATH, even to a trace, is left alone' '
	memprov run -o target.trace -- "$BIN/leak3" 2>/dev/null &&
	ln -s target.trace link.trace && cp target.trace target.orig &&
	memprov run -o link.trace -- "$BIN/leak3" 2>err &&
	grep -x "memprov: trace written to link.1.trace (link.trace was left as it was: not a regular file)" err &&
	test -L link.trace && cmp target.trace target.orig
'

test_expect_success '%% in the template is a percent sign in the name reported' '
	memprov run -o "pct%%.%p.trace" -- "$BIN/leak3" 2>err &&
	name=$(sed -n "s/^memprov: trace written to //p" err) &&
	case "$name" in pct%.*.trace) ;; *) echo "reported $name"; exit 1 ;; esac &&
	test -s "$name"
'

test_expect_success 'a directory as -o: the trace inside it is named' '
	mkdir d &&
	memprov run -o d -- "$BIN/leak3" 2>err &&
	name=$(sed -n "s/^memprov: trace written to //p" err) &&
	case "$name" in d/memprov.*.trace) ;; *) echo "reported $name"; exit 1 ;; esac &&
	test -s "$name"
'

test_expect_success 'relative -o: a child that changes directory writes its trace beside the others' '
	mkdir sub && mkdir "p%d" &&
	st=0 && memprov run -o "rel.%p.trace" --check --reachable --children -- sh -c "cd sub && \"$BIN/leak3\"" \
		>out 2>err || st=$? &&
	test $st = 23 && ! ls sub/*.trace 2>/dev/null &&
	test $(ls rel.*.trace | wc -l) = 2 &&
	grep -F "pid $(pid_of_cmd leak3 rel.*.trace)" err | grep -F ": FAIL" &&
	(cd "p%d" && memprov run -- sh -c "cd ../sub && \"$BIN/leak3\"" 2>../err2) &&
	! ls sub/*.trace 2>/dev/null && test $(ls "p%d"/memprov.*.trace | wc -l) = 2 &&
	grep -F "memprov: other trace of this run: memprov." err2
'

# a cwd near PATH_MAX: the absolute template would be too long for the
# library (it ignored it with a warning on the program's stderr, and the
# trace went to memprov.PID.trace, where run did not look): kept relative
test_expect_success 'relative -o in a cwd near PATH_MAX: kept relative, the program'"'"'s stderr as bare' '
	mkdir deep && (cd deep &&
	c=$(printf "%0200d" 0) &&
	while [ $(( ${#PWD} + 201 )) -lt 4090 ]; do mkdir $c && cd $c || return 1; done &&
	c=$(printf "%0$(( 4090 - ${#PWD} - 1 ))d" 0) && mkdir $c && cd $c &&
	test ${#PWD} = 4090 &&
	memprov run -o "x.%p.trace" -- sh -c "echo \$\$ >pid; echo hi >&2" 2>err &&
	printf "hi\nmemprov: trace written to x.%s.trace\n" "$(cat pid)" >expect &&
	test_cmp expect err && test -s "x.$(cat pid).trace")
'

test_done
