# test-lib.sh - sourced by every tests/tNNNN-*.sh script.
#
#   . "$(dirname "$0")/test-lib.sh"
#   test_expect_success 'what it checks' '
#       commands; any that fails fails the test
#   '
#   test_done
#
# Each body runs in a subshell with `set -e`, so any command that fails
# fails the test, in a scratch directory
# $TRASH (one per script, under tests/out/). Helpers:
#   test_cmp EXPECTED ACTUAL     diff -u, fails on any difference
#   test_skip 'why'              skip the rest of this script
#   test_status N CMD...         CMD exits with status N
#   not CMD...                   CMD fails
#   memprov ...                  the analyzer under test
#   $MEMPROV_LIB                 the preload object under test
#   $BIN                         tests/bin: test programs and fake CUDA
# MEMPROV_TEST_X=1 traces each body's commands into its log (set -x).
#
# What set -e does not see (POSIX): `! CMD` (write `not CMD`), and a
# command of an && or || list other than the last: in `a && b` followed
# by more lines only b's failure fails the test; make the list the body's
# last command, or end it with `|| exit 1`. A status a command must have:
# `test_status N CMD`, not `CMD; test $? = N` (a list before it that
# failed would pass).
set -u
TEST_NAME=$(basename "$0" .sh)
TOP=$(cd "$(dirname "$0")/.." && pwd)
BIN=$TOP/tests/bin
MEMPROV_LIB=$TOP/interpose/libmemprov.so
MEMPROV_CLI=$TOP/analyzer/memprov
TRASH=$TOP/tests/out/$TEST_NAME
rm -rf "$TRASH" && mkdir -p "$TRASH"
export BIN MEMPROV_LIB MEMPROV_CLI TOP TRASH
# Quiet defaults for the tests; a test may override them.
unset MEMPROV_OUTPUT MEMPROV_DEPTH LD_PRELOAD
test_count=0 test_pass=0 test_fail=0 test_skipped=0

memprov() { "$MEMPROV_CLI" "$@"; }
test_cmp() { diff -u "$1" "$2"; }
# test_status N CMD...: CMD exits with status N (CMD may be a function)
test_status() {
	test_status_want=$1
	shift
	test_status_got=0
	"$@" || test_status_got=$?
	[ "$test_status_got" = "$test_status_want" ] && return 0
	echo "test_status: exit $test_status_got, expected $test_status_want: $*" >&2
	return 1
}
# test_pythons V...: /usr/bin/python3, then the pyenv versions V installed
test_pythons() {
	echo /usr/bin/python3
	for test_pythons_v in "$@"; do
		test_pythons_p=/root/.pyenv/versions/$test_pythons_v/bin/python3
		[ -x "$test_pythons_p" ] && echo "$test_pythons_p"
	done
	return 0
}
# not CMD...: CMD fails (a `! CMD` line is not checked under set -e)
not() {
	if "$@"; then
		echo "not: succeeded: $*" >&2
		return 1
	fi
	return 0
}

test_expect_success() {
	test_count=$((test_count + 1))
	log=$TRASH/test-$test_count.log
	# Not in an if, an && list or a pipeline: there the shell ignores
	# set -e, in the subshell too, and only the body's last command
	# counted (every other line of every test was unchecked).
	(cd "$TRASH" || exit 1; set -e; [ -z "${MEMPROV_TEST_X:-}" ] || set -x; eval "$2") >"$log" 2>&1
	test_status=$?
	if [ "$test_status" = 0 ]; then
		test_pass=$((test_pass + 1))
		echo "ok $test_count - $TEST_NAME: $1"
	else
		test_fail=$((test_fail + 1))
		echo "not ok $test_count - $TEST_NAME: $1"
		sed 's/^/#   /' "$log" | tail -n 40
	fi
}

test_skip() {
	echo "skip - $TEST_NAME: $1"
	test_skipped=$((test_skipped + 1))
	test_done
}

test_done() {
	if [ -n "${MEMPROV_RESULTS:-}" ]; then
		echo "$test_pass $test_fail $test_skipped" >>"$MEMPROV_RESULTS"
	fi
	[ "$test_fail" = 0 ]
	exit $?
}
