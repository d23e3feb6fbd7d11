#!/bin/sh
# t2220-reach-valgrind.sh - the reachability scan at exit agrees with
# valgrind (--leak-check=full --run-libc-freeres=no) on definitely and
# indirectly lost bytes and blocks: on the test programs with known
# classes (tests/progs/reach.c, libc_edge.c's thread modes, whose cached
# thread stacks valgrind and memprov both treat as dead below their TLS),
# and on everyday programs: ls, seq, sort (16 B definitely lost in 1
# block), git --version, sqlite3 and make on a small project. Each run is
# `memprov run --check` with no options: the gate passes the everyday
# programs, fails sort on its 16 B, and the definitely and indirectly lost
# figures it reports are valgrind's.
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

# the same figures, and "leak_bytes rule", from the gate's JSON
gate_lost() {
	/usr/bin/python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))["traces"][0]
c = t["reach"]["classes"]
print(c["definitely_lost"]["bytes"], c["definitely_lost"]["blocks"],
      c["indirectly_lost"]["bytes"], c["indirectly_lost"]["blocks"], t["leak_bytes"], t["rule"])' "$1"
}

# agree NAME CMD...: the same run under memprov (run --check, its status in
# NAME.rc) and under valgrind (stdin: /dev/null); leaks and the gate both
# give valgrind's figures
agree() {
	name=$1; shift
	rc=0
	timeout 120 "$MEMPROV_CLI" run --check --json-file "$name.gate.json" -o "$TRASH/$name.trace" -- \
		"$@" >"$name.out" 2>"$name.err" </dev/null || rc=$?
	echo $rc >"$name.rc"
	timeout 300 valgrind --leak-check=full --run-libc-freeres=no --log-file="$name.vg" \
		"$@" >"$name.vgout" 2>&1 </dev/null || true
	m=$(mp_lost "$name") && v=$(vg_lost "$name.vg") && g=$(gate_lost "$name.gate.json") &&
	echo "$name: memprov $m, valgrind $v, gate $g (status $rc)" &&
	test -n "$v" && test "$m" = "$v" && test "${g% * *}" = "$v"
}

# gate NAME STATUS: run --check exited STATUS (0 passed, 23 failed), the
# gate judged lost memory and counted valgrind's definitely and indirectly
# lost bytes (no default suppression hides them)
gate() {
	test "$(cat "$1.rc")" = "$2" &&
	set -- $(gate_lost "$1.gate.json") &&
	test "$6" = lost && test "$5" = $(($1 + $3))
}

for args in "basic" "basic exit" "list 10" "cycle" "interior" "stalelist" "threads" \
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

test_expect_success 'the gate fails the test programs that lose memory, on what valgrind counts' '
	gate reach-basic 23 && gate reach-list-10 23 && gate reach-cycle 23 &&
	test "$(gate_lost reach-basic.gate.json)" = "300 3 0 0 300 lost"
'

test_expect_success 'ls /usr: nothing lost, as valgrind says; the gate passes' '
	agree ls ls /usr && gate ls 0
'

test_expect_success 'seq 1 1000: nothing lost, as valgrind says; the gate passes' '
	agree seq seq 1 1000 && gate seq 0
'

test_expect_success 'sort /etc/passwd: the 16 B valgrind calls definitely lost fail the gate' '
	agree sort sort /etc/passwd &&
	test "$(mp_lost sort)" = "16 1 0 0" &&
	gate sort 23 &&
	st=0 && memprov check sort.trace >sort.gate || st=$? && test $st = 1 &&
	grep -q "^    #1 heap reallocarray: 16 B in 1 block definitely lost at exit in " sort.gate
'

test_expect_success 'git --version: nothing lost, as valgrind says; the gate passes' '
	command -v git >/dev/null || { echo "no git: not checked"; exit 0; }
	agree git git --version && gate git 0
'

test_expect_success 'sqlite3: nothing lost, as valgrind says; the gate passes' '
	command -v sqlite3 >/dev/null || { echo "no sqlite3: not checked"; exit 0; }
	agree sqlite sqlite3 :memory: "create table t(a, b); insert into t values (1, 2), (3, 4);
		select a + b from t; select count(*) from t;" && gate sqlite 0 &&
	agree sqlite1 sqlite3 :memory: "select 1" && gate sqlite1 0
'

test_expect_success 'make on a small project: nothing lost, as valgrind says; the gate passes' '
	command -v make >/dev/null && command -v cc >/dev/null || { echo "no make or cc: not checked"; exit 0; }
	mkdir -p proj && printf "int main(void) { return 0; }\n" >proj/a.c &&
	printf "all: a\na: a.o\n\t\$(CC) -o \$@ a.o\na.o: a.c\n\t\$(CC) -c a.c\n" >proj/Makefile &&
	agree make make -B -C proj && gate make 0 && test -x proj/a
'

test_done
