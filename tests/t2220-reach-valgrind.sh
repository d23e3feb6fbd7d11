#!/bin/sh
# t2220-reach-valgrind.sh - the reachability scan at exit agrees with
# valgrind (--leak-check=full --run-libc-freeres=no) on definitely and
# indirectly lost bytes and blocks: on the test programs with known
# classes (tests/progs/reach.c, libc_edge.c's thread modes, whose cached
# thread stacks valgrind and memprov both treat as dead below their TLS),
# and on everyday programs: ls, seq, sort (16 B definitely lost in 1
# block), git --version and sqlite3.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"
command -v valgrind >/dev/null || test_skip "valgrind not installed (scripts/install-deps.sh test)"
[ "$(uname -m)" = x86_64 ] || test_skip "the scan is x86-64 only"

# memprov's "definite_bytes definite_blocks indirect_bytes indirect_blocks" for NAME.trace
mp_lost() {
	memprov leaks --json "$1.trace" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)["reach"]
assert j["status"] == "done", j
c = j["classes"]
print(c["definitely_lost"]["bytes"], c["definitely_lost"]["blocks"],
      c["indirectly_lost"]["bytes"], c["indirectly_lost"]["blocks"])'
}

# the same figures from a valgrind log
vg_lost() {
	for k in "definitely lost" "indirectly lost"; do
		sed -n "s/.*$k: \([0-9,]*\) bytes in \([0-9,]*\) blocks.*/\1 \2/p" "$1" | tr -d ,
	done | paste -sd' '
}

# agree NAME CMD...: the same run under memprov and under valgrind (stdin: /dev/null)
agree() {
	name=$1; shift
	timeout 120 env MEMPROV_OUTPUT="$TRASH/$name.trace" LD_PRELOAD="$MEMPROV_LIB" \
		"$@" >"$name.out" 2>"$name.err" </dev/null || true
	timeout 300 valgrind --leak-check=full --run-libc-freeres=no --log-file="$name.vg" \
		"$@" >"$name.vgout" 2>&1 </dev/null || true
	m=$(mp_lost "$name") && v=$(vg_lost "$name.vg") &&
	echo "$name: memprov $m, valgrind $v" &&
	test -n "$v" && test "$m" = "$v"
}

for args in "basic" "basic exit" "list 10" "cycle" "interior" "threads" \
	"forget" "forgetdtor exit"; do
	test_expect_success "reach $args: definitely and indirectly lost as valgrind says" "
		agree reach-\$(echo $args | tr ' ' -) \"\$BIN/reach\" $args
	"
done

for mode in threads tlsdtor; do
	test_expect_success "libc_edge $mode: cached thread stacks, as valgrind says" "
		agree edge-$mode \"\$BIN/libc_edge\" $mode
	"
done

test_expect_success 'ls /usr: nothing lost, as valgrind says' '
	agree ls ls /usr
'

test_expect_success 'seq 1 1000: nothing lost, as valgrind says' '
	agree seq seq 1 1000
'

test_expect_success 'sort /etc/passwd: the 16 B valgrind calls definitely lost' '
	agree sort sort /etc/passwd &&
	test "$(mp_lost sort)" = "16 1 0 0"
'

test_expect_success 'git --version: nothing lost, as valgrind says' '
	command -v git >/dev/null || { echo "no git: not checked"; exit 0; }
	agree git git --version
'

test_expect_success 'sqlite3 with a few statements: nothing lost, as valgrind says' '
	command -v sqlite3 >/dev/null || { echo "no sqlite3: not checked"; exit 0; }
	agree sqlite sqlite3 :memory: "create table t(a, b); insert into t values (1, 2), (3, 4);
		select a + b from t; select count(*) from t;"
'

test_done
