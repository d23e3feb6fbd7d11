# test-lib.sh - sourced by every tests/tNNNN-*.sh script.
#
#   . "$(dirname "$0")/test-lib.sh"
#   test_expect_success 'what it checks' '
#       commands; the last status decides
#   '
#   test_done
#
# Each body runs in a subshell with `set -e`, in a scratch directory
# $TRASH (one per script, under tests/out/). Helpers:
#   test_cmp EXPECTED ACTUAL     diff -u, fails on any difference
#   test_skip 'why'              skip the rest of this script
#   memprov ...                  the analyzer under test
#   $MEMPROV_LIB                 the preload object under test
#   $BIN                         tests/bin: test programs and fake CUDA
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

test_expect_success() {
	test_count=$((test_count + 1))
	log=$TRASH/test-$test_count.log
	if (cd "$TRASH" && set -e && eval "$2") >"$log" 2>&1; then
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
