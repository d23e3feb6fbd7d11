#!/bin/sh
# t7006: the shells under the gate. bash's exit builtin calls exit() with
# the command it runs still parsed, and what hangs from it is lost at exit
# (valgrind agrees): a script's `if ...; then exit 0; fi`, or pyenv's own
# scripts (`pyenv: python2: command not found` left 17 failing traces
# under --children). dash (Debian's /bin/sh, under which make runs every
# recipe line) keeps a trap's command until it exits: `trap '...' EXIT`
# lost 5 B and more. Default rules set apart what each shell's own code
# asked for; a program a script runs is still judged on its own.
. "$(dirname "$0")/test-lib.sh"

[ -f "$MEMPROV_LIB" ] && [ -x "$MEMPROV_CLI" ] || test_skip 'libmemprov.so or memprov not built'
command -v bash >/dev/null || test_skip 'no bash'
test -x "$BIN/reach" || test_skip 'tests/bin/reach not built'

cat >"$TRASH/exitif.sh" <<'EOF'
if [ -n "$HOME" ]; then
	echo hi
	exit 0
fi
EOF
cat >"$TRASH/trap.sh" <<'EOF'
trap "echo bye" EXIT
echo hi
EOF
cat >"$TRASH/runs.sh" <<EOF
if [ -n "\$HOME" ]; then
	"$BIN/reach" basic
	exit 0
fi
EOF

# lost NAME: memprov's "definitely+indirectly lost bytes blocks" for the trace in NAME/
lost() {
	memprov leaks --json "$1"/*.trace | /usr/bin/python3 -c '
import json, sys
c = json.load(sys.stdin)["reach"]["classes"]
d, i = c["definitely_lost"], c["indirectly_lost"]
print(d["bytes"] + i["bytes"], d["blocks"] + i["blocks"])'
}

# same_as_valgrind NAME CMD...: NAME/'s lost figures are valgrind's for CMD
# (definitely + indirectly lost, bytes and blocks), and not 0; true
# without valgrind
same_as_valgrind() {
	command -v valgrind >/dev/null || return 0
	name=$1; shift
	valgrind --leak-check=full --run-libc-freeres=no --log-file="$name.vg" "$@" >/dev/null &&
	v=$(for k in "definitely lost" "indirectly lost"; do
		sed -n "s/.*$k: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p" "$name.vg" | tr -d ,
	done | paste -sd" ") &&
	echo "memprov $(lost "$name"), valgrind $v" &&
	set -- $v && test "$1" -gt 0 && test "$(lost "$name")" = "$(($1 + $3)) $(($2 + $4))"
}

test_expect_success 'exit inside an if: the gate passes, bash set apart by its default rule' '
	memprov run -d ok --check -- bash exitif.sh >out 2>err &&
	cat err && test "$(cat out)" = hi &&
	grep -q "): ok$" err &&
	grep -q "in [0-9]* blocks: leak:^bash\$ (default: bash.s parsed commands and state, which its exit builtin does not free)$" err
'

test_expect_success 'what the rule sets apart is what valgrind calls lost, and fails without it' '
	set -- $(lost ok) && test "$1" -gt 0 &&
	st=0 && memprov check --no-default-suppressions ok >nd 2>&1 || st=$?
	cat nd && test $st = 1 &&
	same_as_valgrind ok bash exitif.sh
'

test_expect_success 'dash: a trap on EXIT; the gate passes, dash set apart; without the rule, valgrind'"'"'s figure fails' '
	command -v dash >/dev/null || exit 0
	memprov run -d dash --check -- dash trap.sh >out 2>err &&
	cat err && test "$(printf "hi\nbye")" = "$(cat out)" &&
	grep -q "): ok$" err &&
	grep -q ": leak:^dash\$ (default: dash.s own state (a trap.s command), kept until the shell exits)$" err &&
	st=0 && memprov check --no-default-suppressions dash >nd 2>&1 || st=$?
	cat nd && test $st = 1 &&
	same_as_valgrind dash dash trap.sh
'

test_expect_success 'a program the script runs still fails on its own leak (--children)' '
	st=0 && memprov run -d kids --check --children -- bash runs.sh >out 2>err || st=$?
	cat err && test $st = 23 &&
	test $(grep -c "): ok$" err) = 1 && test $(grep -c "): FAIL$" err) = 1 &&
	grep "): FAIL$" err | grep -q "reach basic" &&
	grep -q "^  lost at exit (definitely and indirectly): 300 B in 3 blocks" err
'

test_done
