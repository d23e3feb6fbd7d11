#!/bin/sh
# t2205-run-wrappers.sh - a command that is a launcher (env, sh -c, a
# pyenv shim) execs the real program: `memprov run` names the trace of
# the program its pid finally became and sums up the other traces in one
# line; a report on a trace whose process exec'd says which trace
# continues it; `run --check` writes its JSON to --json-file, never into
# the program's stdout.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$BIN/leak3" || test_skip "libmemprov.so or tests/bin/leak3 not built"

# command_of TRACE: the command line its header names
command_of() { memprov stats "$1" | sed -n "s/^pid: [0-9]*, command: //p"; }

test_expect_success 'env then sh -c then the program: the program'\''s trace is named' '
	memprov run -o w.trace -- env sh -c "exec \"$BIN/leak3\"" >out 2>err &&
	sed -n "s/^memprov: trace written to //p" err >named &&
	echo w.2.trace >expect && test_cmp expect named &&
	command_of w.2.trace >cmd && echo "$BIN/leak3" >expect && test_cmp expect cmd &&
	grep -x "memprov: other traces of this run: w.trace (replaced by exec), w.1.trace (replaced by exec)" err &&
	test $(grep -c "^memprov:" err) = 2
'

test_expect_success 'a report on an exec'\''d trace says which trace continues it' '
	memprov leaks w.trace >leaks.txt &&
	grep -x "ended: replaced by exec (a new trace continues)" leaks.txt &&
	grep -x "continued by: w.1.trace (its execs end in w.2.trace)" leaks.txt &&
	memprov leaks w.1.trace | grep -x "continued by: w.2.trace" &&
	! memprov leaks w.2.trace | grep "continued by" &&
	memprov leaks --json w.trace >leaks.json &&
	/usr/bin/python3 -c "import json; print(json.load(open(\"leaks.json\"))[\"continued_by\"])" >next &&
	echo w.1.trace >expect && test_cmp expect next &&
	if /usr/bin/python3 -c "import jsonschema" 2>/dev/null; then
		memprov growth --json w.trace >growth.json &&
		memprov stats --json w.trace >stats.json &&
		"$TOP/tests/helper/validate-json.py" leaks.json growth.json stats.json
	fi
'

test_expect_success 'an exec'\''d trace with no continuation beside it says so' '
	mkdir alone && cp w.trace alone/ &&
	memprov growth alone/w.trace >g.txt &&
	grep -x "continued by: no trace of the same pid beside this one" g.txt
'

SHIM=$(command -v python3)
case "$SHIM" in
*/shims/python3)
	export SHIM
	test_expect_success 'a pyenv shim: Python'\''s trace is named, the launcher'\''s in one line' '
		timeout 120 "$MEMPROV_CLI" run -o py.trace -- python3 -c "kept = bytearray(3_000_000)" >out 2>err &&
		name=$(sed -n "s/^memprov: trace written to //p" err) &&
		command_of "$name" >cmd &&
		grep "python3.* -c kept = bytearray(3_000_000)$" cmd && ! grep -q "bash" cmd &&
		memprov leaks --all --json "$name" >leaks.json &&
		/usr/bin/python3 -c "
import json
d = json.load(open(\"leaks.json\"))
print(d[\"at\"], sum(s[\"bytes\"] for s in d[\"sites\"] if s[\"bytes\"] == 3000001))
" >at && echo "main-end 3000001" >expect && test_cmp expect at &&
		test $(grep -c "^memprov:" err) = 2 &&
		grep "^memprov: [0-9]* other traces of this run in \.: [1-9][0-9]* of programs replaced by exec on the way" err
	'
	;;
*)
	echo "skip - $TEST_NAME: python3 on PATH is not a pyenv shim"
	;;
esac

test_expect_success 'run --check --json is refused: it would go into the program'\''s stdout' '
	st=0 && memprov run --check --json -o j.trace -- "$BIN/leak3" >out 2>err || st=$? &&
	test $st = 2 && grep -F -- "--json would go into the output of CMD: give --json-file FILE" err &&
	! test -e j.trace
'

test_expect_success 'run --check: the gate report on stderr, the command'\''s stdout untouched' '
	st=0 && memprov run --check -o r.trace -- sh -c "echo hello; exec \"$BIN/gate_leak\" leak" >out 2>err || st=$? &&
	test $st = 23 &&
	echo hello >expect && test_cmp expect out &&
	grep "leak_here" err && grep -i "fail" err
'

test_expect_success 'run --check --json-file: the JSON in the file, the output untouched' '
	st=0 && memprov run --check --reachable --json-file gate.json -o k.trace -- sh -c "echo hello; exec \"$BIN/leak3\"" >out 2>err || st=$? &&
	test $st = 23 &&
	echo hello >expect && test_cmp expect out &&
	grep -x "memprov: gate report (JSON) written to gate.json" err &&
	/usr/bin/python3 -c "import json; d = json.load(open(\"gate.json\")); print(d[\"traces\"][0][\"status\"], d[\"traces\"][0][\"leak_bytes\"])" >pass &&
	echo "fail 300" >expect && test_cmp expect pass
'

test_expect_success 'run --check --json-file that cannot be written: exit 2, the command not run' '
	st=0 && memprov run --check --json-file nodir/gate.json -o m.trace -- sh -c ": >ran" 2>err || st=$? &&
	test $st = 2 && grep -F "cannot write '\''nodir/gate.json'\''" err && ! test -e ran
'

# a helper's sweep: these were found only after the command had run
test_expect_success 'run --check with a bad suppression file or an unwritable --junit: exit 2, the command not run' '
	st=0 && memprov run --check --suppressions none.supp -o m.trace -- sh -c ": >ran" 2>err || st=$? &&
	test $st = 2 && grep -F "cannot open suppression file '\''none.supp'\''" err && ! test -e ran &&
	echo "bogus line" >bad.supp &&
	st=0 && memprov run --check --suppressions bad.supp -o m.trace -- sh -c ": >ran" 2>err || st=$? &&
	test $st = 2 && grep -F "bad.supp:1: not a suppression" err && ! test -e ran &&
	st=0 && memprov run --check --junit nodir/j.xml -o m.trace -- sh -c ": >ran" 2>err || st=$? &&
	test $st = 2 && grep -F "cannot write the JUnit file '\''nodir/j.xml'\''" err && ! test -e ran &&
	printf "leak:nothing_here\nalloc:my_alloc\n" >good.supp &&
	memprov run --check --suppressions good.supp --junit j.xml -o m.trace -- sh -c ": >ran" 2>err &&
	test -e ran && grep -q "failures=\"0\"" j.xml
'

test_expect_success 'a command that cannot be traced: run says why (a static executable), --check exits 2' '
	# it said only "the command may not have started under
	# libmemprov.so" (a helper'"'"'s sweep: gojq, shfmt, gcc -static)
	printf "int main(void) { return 0; }\n" >st.c &&
	{ ${CC:-cc} -static -o st st.c 2>/dev/null || { echo "no static libc: not checked"; exit 0; }; } &&
	./st &&
	st=0 && memprov run -d std --check -- ./st 2>st.err || st=$? &&
	cat st.err && test $st = 2 &&
	grep -q "^memprov: no trace at .*: ./st is statically linked: no dynamic loader runs in it to load libmemprov.so$" st.err &&
	memprov run -d std2 -- sh -c true 2>sh.err && ! grep -q "no trace at" sh.err
'

test_done
