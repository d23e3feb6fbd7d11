#!/bin/sh
# t2130-fork-exec.sh - process life cycle: a forked child writes its own
# trace named by its pid and the parent's trace has none of the child's
# allocations; exec with LD_PRELOAD inherited gives a second, traced image
# and the first trace says "exec"; _exit ends the trace cleanly with its
# status; a program that defines its own malloc neither hangs nor fails.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

# sizes BYTES_OF_EACH_SITE for a leaks report, sorted: "111 333"
sizes() { jget "$1" '=" ".join(str(s["bytes"]) for s in sorted(j["sites"], key=lambda s: s["bytes"]) if s["kind"] == "heap")'; }

test_expect_success 'fork: parent and child each write a trace named by pid' '
	mkdir fork &&
	timeout 30 env MEMPROV_OUTPUT=$TRASH/fork/%p.trace \
		LD_PRELOAD=$MEMPROV_LIB "$BIN/forkexec" fork >out &&
	child=$(sed -n "s/^child=//p" out) &&
	test -n "$child" &&
	ls fork >files && cat files &&
	test $(wc -l <files) = 2 &&
	test -s "fork/$child.trace"
'

test_expect_success 'fork: the parent trace has 111 + 333, nothing of the child' '
	parent=$(ls fork | grep -v "^$(sed -n "s/^child=//p" out)\.trace$") &&
	memprov leaks --json "fork/$parent" >parent.json &&
	jget --check parent.json totals.heap.blocks=2 totals.heap.bytes=444 \
		state=exited &&
	test "$(sizes parent.json)" = "111 333" &&
	jget --check parent.json \
		"=sorted(s[\"frames\"][0][\"function\"] for s in j[\"sites\"])==[\"after_fork\", \"before_fork\"]"
'

test_expect_success 'fork: the child trace shows its own leak (222 in in_child)' '
	child=$(sed -n "s/^child=//p" out) &&
	memprov leaks --json "fork/$child.trace" >child.json &&
	jget --check child.json pid=$child state=exited exit_status=0 &&
	jget --check child.json \
		"=[(s[\"bytes\"], s[\"blocks\"]) for s in j[\"sites\"] if s[\"frames\"][0][\"function\"] == \"in_child\"]==[[222, 1]]" &&
	! sizes child.json | grep -w 333
'

test_expect_success 'exec: two traces, the first says exec (444), the second is the new image (555)' '
	mkdir exec &&
	timeout 30 env MEMPROV_OUTPUT=$TRASH/exec/%p.trace \
		LD_PRELOAD=$MEMPROV_LIB "$BIN/forkexec" exec &&
	ls exec >files && cat files &&
	test $(wc -l <files) = 2 &&
	for f in $(cat files); do
		memprov leaks --json "exec/$f" >"$f.json" || exit 1
		echo "$f: $(jget "$f.json" state) $(sizes "$f.json")"
	done >states &&
	cat states &&
	grep -q ": exec 444$" states &&
	grep -q ": exited 555$" states
'

test_expect_success 'exec: the new image names exec_child and its command line' '
	f=$(grep ": exited 555$" states | cut -d: -f1) &&
	jget --check "$f.json" sites.0.frames.0.function=exec_child \
		"=\"exec-child\" in j[\"command\"]==true" \
		totals.heap.blocks=1 totals.heap.bytes=555
'

test_expect_success 'a forked child takes few page faults in the fork handlers: under 100 (178 when they read the whole 512 KiB segment table)' '
	test -x "$BIN/pagefaults" &&
	timeout 30 env MEMPROV_OUTPUT=$TRASH/pf.%p LD_PRELOAD=$MEMPROV_LIB "$BIN/pagefaults" fork >pf.out &&
	n=$(sed -n "s/^child_faults=//p" pf.out) && echo "child faults: $n" &&
	test -n "$n" && test "$n" -lt 100
'

test_expect_success '_exit: the trace ends cleanly, with status 7 and the leak' '
	st=0 && memprov run -o exit.trace -- "$BIN/forkexec" _exit 2>err || st=$? &&
	test $st = 7 &&
	memprov leaks --json exit.trace >exit.json &&
	jget --check exit.json state=exited exit_status=7 damaged=false \
		totals.heap.blocks=1 totals.heap.bytes=666 \
		sites.0.frames.0.function=before_exit &&
	memprov stats --json exit.trace >exit-stats.json &&
	jget --check exit-stats.json state=exited exit_status=7 cut=false
'

test_expect_success 'a program with its own malloc runs to the end under memprov run' '
	timeout 30 "$MEMPROV_CLI" run -o own.trace -- "$BIN/ownmalloc" >own.out 2>own.err &&
	echo "ownmalloc ok 1000" >expect &&
	test_cmp expect own.out &&
	memprov leaks --json own.trace >own.json &&
	jget --check own.json state=exited totals.heap.blocks=0 &&
	memprov check own.trace >own.check &&
	grep -q "not gated: the heap was not traced: the program.s malloc is that of a library preloaded before libmemprov.so (put libmemprov.so first in LD_PRELOAD), or its own: no verdict" own.check
'

test_expect_success 'a program with its own malloc runs to the end with LD_PRELOAD' '
	echo "ownmalloc ok 1000" >expect &&
	timeout 30 env LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=$TRASH/own2.trace \
		"$BIN/ownmalloc" >own2.out 2>own2.err &&
	test_cmp expect own2.out &&
	test ! -s own2.err
'

# A start-up reads no /proc file for the command line (argv, as the
# constructor gets it) nor for the executable (the module scan's path),
# nor /proc/self/maps for the modules' paths (each from its link in
# /proc/self/map_files); a forked child takes its parent's modules,
# executable and command line from memory (it read the map, cmdline and
# exe at its start before). Each reads the map once, for its scan at exit.
hdr_exe() { /usr/bin/python3 -c 'import sys; print(open(sys.argv[1], "rb").read()[96:608].split(b"\0")[0].decode())' "$1"; }
test_expect_success 'start-up and a forked child: command line, executable and modules without /proc reads' '
	command -v strace >/dev/null || { echo "no strace: not checked"; exit 0; }
	mkdir fk &&
	timeout 60 strace -f -e trace=openat,open,readlink -o fk.st env MEMPROV_OUTPUT=$TRASH/fk/%p.trace \
		LD_PRELOAD=$MEMPROV_LIB "$BIN/forkexec" fork >fk.out &&
	child=$(sed -n "s/^child=//p" fk.out) && test -n "$child" &&
	parent=$(ls fk | grep -v "^$child\.trace$" | sed "s/\.trace$//") &&
	for p in $parent $child; do
		m=$(grep "^$p " fk.st | grep -c "/proc/self/maps" || :)
		c=$(grep "^$p " fk.st | grep -c "/proc/self/cmdline" || :)
		e=$(grep "^$p " fk.st | grep -c "readlink(\"/proc/self/exe\"" || :)
		echo "$p: maps $m cmdline $c exe $e"
		test "$c" = 0 && test "$e" = 0 || return 1
		test "$m" = 1 || return 1
	done &&
	memprov stats --json fk/$parent.trace >fkp.json && memprov stats --json fk/$child.trace >fkc.json &&
	jget --check fkp.json "command=$BIN/forkexec fork" && jget --check fkc.json "command=$BIN/forkexec fork" &&
	exe=$(readlink -f "$BIN/forkexec") &&
	test "$(hdr_exe fk/$parent.trace)" = "$exe" && test "$(hdr_exe fk/$child.trace)" = "$exe" &&
	memprov dump fk/$parent.trace | grep " module " | cut -d" " -f4- >mods.p &&
	memprov dump fk/$child.trace | grep " module " | cut -d" " -f4- >mods.c &&
	test -s mods.p && test_cmp mods.p mods.c
'

# A process's trace holds the header and the chunks it took: a shell
# child that execs at once writes one chunk of one block, and so does ls
# (on ext4 and XFS each chunk's space is written as the chunk is taken;
# with fallocate, two blocks are reserved first), and grows when it
# writes more.
test_expect_success 'a process starts with a small trace file; it grows when it writes more' '
	child=$(sed -n "s/^child=//p" fk.out) && parent=$(ls fk | grep -v "^$child\.trace$") &&
	ps=$(stat -c %s fk/$parent) && cs=$(stat -c %s fk/$child.trace) &&
	echo "parent $ps child $cs" &&
	case $(stat -f -c %T .) in
	ext2/ext3|xfs) small=8192 ;;
	*) small=12288 ;;
	esac &&
	test "$ps" = $small && test "$cs" = $small &&
	cat >grow.c <<-\EOF &&
	#include <stdlib.h>
	#include <unistd.h>
	#include <sys/wait.h>
	void *volatile keep;
	int main(void)
	{
		int i, st;
		pid_t p = fork();
		if (p == 0) {
			for (i = 0; i < 20000; i++) {
				keep = malloc(16 + i % 64);
				free(keep);
			}
			return 0;
		}
		waitpid(p, &st, 0);
		return WEXITSTATUS(st);
	}
	EOF
	cc -O1 -o grow grow.c && mkdir gr &&
	env MEMPROV_OUTPUT=$TRASH/gr/%p.trace LD_PRELOAD=$MEMPROV_LIB ./grow &&
	for f in gr/*.trace; do
		memprov stats --json $f >g.json &&
		echo "$(jget g.json state events | tr "\n" " ")$(stat -c %s $f)" || return 1
	done >g.out &&
	cat g.out && test "$(grep -c "^exited 400[0-9][0-9] " g.out)" = 1 &&
	test "$(grep "^exited 400[0-9][0-9] " g.out | cut -d" " -f3)" -gt 12288
'

test_done
