#!/bin/sh
# t9505-scan-memory-limit.sh - the scan at exit never pushes the program
# over its memory cgroup's limit: it takes at most half the memory the
# process has left (the cgroup's limit less what it uses, reclaimable file
# pages counted as room; the system's MemAvailable). A program keeping 2
# million small blocks, its bare peak plus 96 MiB as its cgroup's limit:
# the scan's table alone is bigger than that (about 130 B a block); it was
# killed at exit (status 137, its buffered output lost). Now it exits as
# bare, and the trace says why there are no classes. Needs a memory cgroup
# this test may create (root, cgroup v1 or v2 with the memory controller).
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

# The directory of this shell's memory cgroup, v2 first (empty: none).
own_cgroup() {
	v2=$(sed -n "s/^0:://p" /proc/self/cgroup)
	if [ -n "$v2" ] && [ -f "/sys/fs/cgroup$v2/memory.max" ] 2>/dev/null &&
		grep -qw memory "/sys/fs/cgroup$v2/cgroup.subtree_control" 2>/dev/null; then
		echo "/sys/fs/cgroup$v2 2"
		return
	fi
	v1=$(sed -n "s/^[0-9]*:\([^:]*,\)\{0,1\}memory\(,[^:]*\)\{0,1\}://p" /proc/self/cgroup)
	for m in /sys/fs/cgroup/memory /sys/fs/cgroup/memory,cpu; do
		if [ -n "$v1" ] && [ -f "$m$v1/memory.limit_in_bytes" ]; then
			echo "$m$v1 1"
			return
		fi
	done
}
set -- $(own_cgroup)
CG=${1:-} CGV=${2:-}
CHILD="$CG/memprov-t9505-$$"
test -n "$CG" && mkdir "$CHILD" 2>/dev/null ||
	test_skip "no memory cgroup this test can create (not root, or no memory controller)"
rmdir "$CHILD"
export CHILD CGV

cat >"$TRASH/keep.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
void **keep;
int main(int argc, char **argv)
{
	int i, n = atoi(argv[1]);
	struct rusage ru;
	keep = malloc(n * sizeof(*keep));
	for (i = 0; i < n; i++)
		keep[i] = calloc(1, 32);
	getrusage(RUSAGE_SELF, &ru);
	printf("kept %d, peak %ld KiB\n", n, ru.ru_maxrss); /* buffered: lost if killed */
	return 0;
}
EOF

# Run "$@" in a fresh cgroup limited to $1 bytes; its status on stdout's last line.
in_cgroup() {
	lim=$1 && shift &&
	mkdir "$CHILD" &&
	if [ "$CGV" = 2 ]; then echo "$lim" >"$CHILD/memory.max"; echo 0 >"$CHILD/memory.swap.max" 2>/dev/null; else
		echo "$lim" >"$CHILD/memory.limit_in_bytes"; fi &&
	st=0 && sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$CHILD" "$@" || st=$?
	rmdir "$CHILD" 2>/dev/null
	echo "status $st"
}

test_expect_success 'a program near its cgroup limit: exits as bare, the trace says the room was too small' '
	${CC:-cc} -O1 -o keep keep.c &&
	./keep 2000000 >bare.out &&
	peak=$(sed -n "s/.*peak \([0-9]*\) KiB/\1/p" bare.out) &&
	lim=$(( (peak + 96 * 1024) * 1024 )) &&
	in_cgroup $lim ./keep 2000000 >bare-cg.out &&
	grep "^kept 2000000" bare-cg.out && tail -1 bare-cg.out | grep "^status 0$" &&
	in_cgroup $lim env MEMPROV_OUTPUT=$TRASH/k.trace LD_PRELOAD=$MEMPROV_LIB \
		./keep 2000000 >traced.out 2>traced.err &&
	cat traced.out traced.err &&
	grep "^kept 2000000" traced.out && tail -1 traced.out | grep "^status 0$" &&
	memprov leaks --json k.trace >k.json &&
	jget --check k.json reach.status=memory "=\"memory-room\" in j[\"reach\"][\"notes\"]==true" \
		"=j[\"reach\"][\"mem_bytes\"]<96*1024*1024==true" &&
	memprov leaks k.trace >k.txt &&
	grep "takes at most half the memory the process had left" k.txt
'

test_expect_success 'with room to spare the same program is scanned: its 2 million blocks, the array, stdout buffer reachable' '
	in_cgroup $((4096 * 1024 * 1024)) env MEMPROV_OUTPUT=$TRASH/k4.trace \
		LD_PRELOAD=$MEMPROV_LIB ./keep 2000000 >roomy.out &&
	tail -1 roomy.out | grep "^status 0$" &&
	memprov leaks --json k4.trace >k4.json &&
	jget --check k4.json reach.status=done reach.classes.still_reachable.blocks=2000002 \
		"=\"memory-room\" in j[\"reach\"][\"notes\"]==false"
'

test_done
