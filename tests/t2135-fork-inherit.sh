#!/bin/sh
# t2135-fork-inherit.sh - a forked child's reports include what it
# inherited: the parent's trace beside the child's (or named with
# --parent) is replayed up to its fork record, the blocks then live seed
# the child's live set (marked inherited, with the parent's stacks), the
# child's frees of them match, and the gate holds the child to its own.
# Without the parent's trace, one line says the inherited blocks are
# unknown. The child's scan at exit reads its parent's trace up to the
# fork, so its inherited blocks are classified like its own and a block
# hung on one is still reachable (a grandchild too). The fork
# is found by its serial (the child's header, the parent's record) even
# when the parent recorded it after the child's end, and a reused pid
# takes the right fork.
. "$(dirname "$0")/test-lib.sh"
jget() { /usr/bin/python3 "$TOP/tests/progs/json_get.py" "$@"; }
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" ||
	test_skip "interpose/libmemprov.so or analyzer/memprov not built"

test_expect_success 'a forked child: 1000 B inherited and kept, 200 B inherited and freed, 3 x 50 B leaked' '
	mkdir fi &&
	timeout 30 env MEMPROV_OUTPUT=$TRASH/fi/%p.trace \
		LD_PRELOAD=$MEMPROV_LIB "$BIN/forkinherit" inherit >out &&
	child=$(sed -n "s/^child=//p" out) &&
	test -s "fi/$child.trace" &&
	test $(ls fi | wc -l) = 2
'

test_expect_success 'leaks: 1150 B in 4 blocks live at exit, 1000 B of them inherited' '
	child=$(sed -n "s/^child=//p" out) &&
	memprov leaks --json "fi/$child.trace" >child.json &&
	jget --check child.json totals.heap.bytes=1150 totals.heap.blocks=4 \
		inherited.known=true inherited.held.bytes=1000 inherited.held.blocks=1 \
		inherited.at_fork.bytes=1200 inherited.at_fork.blocks=2 \
		inherited.freed.bytes=200 inherited.freed.blocks=1 \
		"inherited.parent_trace=fi/$(ls fi | grep -v "^$child\.")" \
		"=len(j[\"inherited_sites\"])==1" \
		inherited_sites.0.bytes=1000 inherited_sites.0.frames.0.function=parent_keeps \
		"=[(s[\"bytes\"], s[\"frames\"][0][\"function\"]) for s in j[\"sites\"]]==[[150, \"child_leaks\"]]" &&
	memprov leaks "fi/$child.trace" >child.txt &&
	grep "inherited from pid .* at the fork: 1.2 KiB (1,200 B) in 2 blocks; still held: 1,000 B in 1 block" child.txt &&
	grep "^  heap  *4 blocks  1.1 KiB (1,150 B)$" child.txt
'

test_expect_success 'stats: the free of the inherited block matches it (no unmatched free)' '
	child=$(sed -n "s/^child=//p" out) &&
	memprov stats --json "fi/$child.trace" >stats.json &&
	jget --check stats.json unmatched_frees=0 inherited.freed.blocks=1 inherited.held.bytes=1000
'

test_expect_success 'check --max-leak 0 fails the child on its own 150 B, and says 1000 B were inherited' '
	child=$(sed -n "s/^child=//p" out) &&
	test_status 1 memprov check --max-leak 0 "fi/$child.trace" >check.txt &&
	cat check.txt &&
	grep "lost at exit (definitely and indirectly): 150 B in 3 blocks (budget 0 B" check.txt &&
	grep "still held: 1,000 B in 1 block" check.txt &&
	memprov check --max-leak 150 "fi/$child.trace" &&
	test_status 1 memprov check --json --max-leak 0 "fi/$child.trace" >check.json &&
	jget --check check.json traces.0.leak_bytes=150 traces.0.inherited.held.bytes=1000
'

test_expect_success 'without the parent trace: one line says inherited blocks are unknown; --parent names it' '
	child=$(sed -n "s/^child=//p" out) &&
	mkdir alone && cp "fi/$child.trace" alone/ &&
	memprov leaks "alone/$child.trace" >alone.txt &&
	test $(grep -c "inherited blocks unknown" alone.txt) = 1 &&
	grep "^  heap  *3 blocks  150 B$" alone.txt &&
	memprov leaks --json "alone/$child.trace" >alone.json &&
	jget --check alone.json inherited.known=false inherited.parent_trace=null totals.heap.bytes=150 &&
	parent=$(ls fi | grep -v "^$child\.") &&
	memprov leaks --json --parent "fi/$parent" "alone/$child.trace" >given.json &&
	jget --check given.json inherited.known=true totals.heap.bytes=1150 &&
	test_status 1 memprov check --json --parent "fi/$parent" "alone/$child.trace" >cgiven.json &&
	jget --check cgiven.json traces.0.inherited.known=true traces.0.inherited.held.bytes=1000 &&
	memprov leaks --parent "alone/$child.trace" "alone/$child.trace" >self.txt 2>self.err &&
	grep "did not fork pid $child" self.err
'

test_expect_success 'the parent itself inherits nothing and keeps its own figures' '
	child=$(sed -n "s/^child=//p" out) &&
	parent=$(ls fi | grep -v "^$child\.") &&
	memprov leaks --json "fi/$parent" >parent.json &&
	jget --check parent.json inherited=null totals.heap.bytes=0
'

test_expect_success 'reach: the child scans its inherited blocks; a block hung on one is still reachable' '
	mkdir re &&
	timeout 30 env MEMPROV_OUTPUT=$TRASH/re/%p.trace \
		LD_PRELOAD=$MEMPROV_LIB "$BIN/forkinherit" reach >out2 &&
	child=$(sed -n "s/^child=//p" out2) &&
	memprov leaks --json "re/$child.trace" >re.json &&
	jget --check re.json reach.status=done \
		"=\"inherited\" in j[\"reach\"][\"notes\"]==true" \
		inherited_sites.0.reach.still_reachable.bytes=1000 \
		inherited_sites.0.reach.unknown.bytes=0 \
		reach.classes.unknown.bytes=0 \
		reach.classes.definitely_lost.bytes=150 \
		"=[(s[\"frames\"][0][\"function\"], s[\"reach\"][\"still_reachable\"][\"bytes\"]) for s in j[\"sites\"] if s[\"frames\"][0][\"function\"] == \"child_hangs\"]==[[\"child_hangs\", 40]]" &&
	memprov leaks "re/$child.trace" >re.txt &&
	grep "note: a forked child: the blocks it inherited were scanned with its own" re.txt &&
	! grep "did not see the inherited" re.txt &&
	{ memprov check --max-leak 150 "re/$child.trace" >re-check.txt; } &&
	test_status 1 memprov check --max-leak 149 "re/$child.trace" >/dev/null
'

test_expect_success 'reach: a grandchild scans what it inherited from its grandparent too' '
	cat >gc.c <<-\EOF &&
	#include <stdlib.h>
	#include <sys/wait.h>
	#include <unistd.h>
	struct node { struct node *next; char pad[56]; };
	static struct node *head;
	int main(void)
	{
		head = malloc(sizeof(*head));          /* the grandparent s */
		head->next = NULL;
		if (fork() == 0) {
			if (fork() == 0) {
				head->next = malloc(sizeof(*head)); /* hung on the inherited node */
				head->next->next = NULL;
				exit(0);
			}
			wait(NULL);
			exit(0);
		}
		wait(NULL);
		free(head);
		return 0;
	}
	EOF
	${CC:-cc} -g -O0 -o gc gc.c &&
	timeout 30 "$MEMPROV_CLI" run -d gcdir -- ./gc 2>/dev/null &&
	test $(ls gcdir/*.trace | wc -l) = 3 &&
	memprov check --max-leak 0 gcdir >gc-check.txt &&
	grep "3 traces, 0 over budget" gc-check.txt &&
	gchild=$(ls gcdir/*.trace | sort -V | tail -1) &&
	memprov leaks --json "$gchild" >gc.json &&
	jget --check gc.json reach.classes.still_reachable.bytes=128 reach.classes.definitely_lost.bytes=0 \
		"=\"inherited\" in j[\"reach\"][\"notes\"]==true"
'

test_expect_success 'the fork by its serial: recorded after the child ended, and a reused pid' '
	mkdir serial &&
	"$BIN/tracegen" -o serial/100.trace <<-\EOF &&
	header pid=100 ppid=1 state=exited exit=0 start=100 end=1000
	thread 1
	stack ts=100 id=1 native=0x1000
	alloc ts=110 addr=0x1000 size=100 stack=1
	fork ts=500 child=200 serial=1
	free ts=600 addr=0x1000
	alloc ts=700 addr=0x2000 size=300 stack=1
	fork ts=800 child=200 serial=2
	exit ts=1000 status=0
	EOF
	"$BIN/tracegen" -o serial/200a.trace <<-\EOF &&
	header pid=200 ppid=100 state=exited exit=0 start=150 end=300 flags=64 fork_serial=1
	thread 1
	stack ts=150 id=1 native=0x1000
	alloc ts=160 addr=0x3000 size=50 stack=1
	exit ts=300 status=0
	EOF
	"$BIN/tracegen" -o serial/200b.trace <<-\EOF &&
	header pid=200 ppid=100 state=exited exit=0 start=810 end=900 flags=64 fork_serial=2
	thread 1
	stack ts=810 id=1 native=0x1000
	exit ts=900 status=0
	EOF
	memprov leaks --json serial/200a.trace >a.json &&
	jget --check a.json inherited.known=true inherited.held.bytes=100 totals.heap.bytes=150 &&
	memprov leaks --json serial/200b.trace >b.json &&
	jget --check b.json inherited.known=true inherited.held.bytes=300 totals.heap.bytes=300 &&
	mkdir old &&
	"$BIN/tracegen" -o old/200.trace <<-\EOF &&
	header pid=200 ppid=100 state=exited exit=0 start=150 end=300 flags=64
	thread 1
	exit ts=300 status=0
	EOF
	cp serial/100.trace old/ &&
	memprov leaks --json old/200.trace >old.json 2>/dev/null &&
	jget --check old.json inherited.known=false
'

# A parent that forked many children is read once for all of them: its
# fork records indexed once, its replay kept where the last child's fork
# stopped it and carried on to the next (before: each child read the
# parent's trace twice, and every trace beside it once; 52 MB parent, 30
# children: 12.8 s to check, now 1.0 s). Children checked out of order
# start a new replay: the same figures.
test_expect_success 'ladder of 8 children: each inherits its own step; the parent opened 5 times, not 26' '
	mkdir lad &&
	timeout 30 env MEMPROV_OUTPUT=$TRASH/lad/%p.trace LD_PRELOAD=$MEMPROV_LIB \
		"$BIN/forkinherit" ladder 8 >lad.out &&
	sed -n "s/^child=//p" lad.out >kids && test $(wc -l <kids) = 8 &&
	fwd= && rev= && for k in $(cat kids); do fwd="$fwd lad/$k.trace" && rev="lad/$k.trace $rev"; done &&
	memprov check --json $fwd >fwd.json &&
	jget --check fwd.json "=[t[\"inherited\"][\"at_fork\"][\"bytes\"] for t in j[\"traces\"]]==[100, 300, 600, 1000, 1500, 2100, 2800, 3600]" &&
	memprov check --json $rev >rev.json &&
	jget --check rev.json "=[t[\"inherited\"][\"at_fork\"][\"bytes\"] for t in j[\"traces\"]]==[3600, 2800, 2100, 1500, 1000, 600, 300, 100]" &&
	sed "s/\$/.trace/" kids >kidnames &&
	parent=$(ls lad | grep -v -x -F -f kidnames) && test $(echo "$parent" | wc -l) = 1 &&
	strace -f -e trace=openat -o opens.txt "$MEMPROV_CLI" check lad >/dev/null &&
	n=$(grep -c "lad/$parent\"" opens.txt) && echo "parent opened $n times" &&
	test $n -le 5
'

# Under the lost rule too a forked child is held to what it allocated
# itself: a block only another thread of the parent held is lost in the
# child (it has no such thread), and was gated there (827 B before: the
# 777 B of the parent's and the child's own 50 B).
test_expect_success 'a parent block only its other thread held: lost in the child, said, not gated' '
	mkdir th &&
	timeout 30 env MEMPROV_OUTPUT=$TRASH/th/%p.trace LD_PRELOAD=$MEMPROV_LIB \
		"$BIN/forkinherit" threadheld >th.out &&
	child=$(sed -n "s/^child=//p" th.out) &&
	st=0 && memprov check --max-leak 0 "th/$child.trace" >th.txt || st=$? &&
	cat th.txt && test $st = 1 &&
	grep "lost at exit (definitely and indirectly): 50 B in 1 block (budget 0 B" th.txt &&
	grep "of them lost in this process, not gated (the parent allocated them; .*: 777 B in 1 block$" th.txt &&
	memprov check --max-leak 50 "th/$child.trace" >/dev/null &&
	st=0 && memprov check --json --max-leak 0 "th/$child.trace" >th.json || st=$? && test $st = 1 &&
	jget --check th.json traces.0.leak_bytes=50 traces.0.inherited.lost.bytes=777 \
		traces.0.inherited.lost.blocks=1
'

# A child reads its parent's trace back only while the parent had written
# at most 1 MiB before the fork: past that (a shell with a 100,000-entry
# array had written 61 MB, and each $(...) paid 0.2 s reading it back at
# its exit), or with an ancestor's trace let go, the inherited blocks are
# not in its live set and the allocator's memory is scanned as roots
# (MEMPROV_REACH_INHERIT_MB=64 reads it back, as before): a
# block hung on an inherited one stays reachable (it was called lost past
# the old 64 MiB limit), the child's own dropped block is still lost.
# Only the pages the child wrote since the fork are read (the others are
# still shared with the parent): 34 KB of roots, not the 14.5 MB heap.
test_expect_success 'reach: a parent trace over 1 MiB is not read back: the heap is a root, the own leak still lost' '
	cat >big.c <<-\EOF &&
	#include <stdio.h>
	#include <stdlib.h>
	#include <string.h>
	#include <sys/wait.h>
	#include <unistd.h>
	struct node { struct node *next; char pad[24]; };
	struct node *head;
	static struct node *tail;
	__attribute__((noinline)) static void child_hangs(void)
	{
		tail->next = calloc(1, 4000);
	}
	__attribute__((noinline)) static void child_drops(void)
	{
		char *p = malloc(5000);
		memset(p, 1, 5000);
		__asm__ volatile("" : : "r"(p) : "memory");
	}
	int main(int argc, char **argv)
	{
		int i, n = atoi(argv[1]);
		pid_t pid;
		for (i = 0; i < n; i++) {
			struct node *p = calloc(1, sizeof(*p));
			if (tail) tail->next = p; else head = p;
			tail = p;
		}
		pid = fork();
		if (pid == 0) {
			child_hangs();
			child_drops();
			exit(0);
		}
		waitpid(pid, NULL, 0);
		printf("child=%d head=%d\n", (int)pid, head != NULL);
		return 0;
	}
	EOF
	${CC:-cc} -g -O1 -o big big.c &&
	for n in 10 300000; do
		mkdir big$n &&
		timeout 60 env MEMPROV_OUTPUT=$TRASH/big$n/%p.trace LD_PRELOAD=$MEMPROV_LIB \
			./big $n >big$n.out &&
		child=$(sed -n "s/^child=\([0-9]*\).*/\1/p" big$n.out) &&
		memprov leaks --json "big$n/$child.trace" >big$n.json &&
		memprov leaks "big$n/$child.trace" >big$n.txt || exit 1
	done &&
	parent=$(ls big300000 | grep -v "^$child\.") &&
	test $(wc -c <"big300000/$parent") -gt 1048576 &&
	jget --check big10.json reach.status=done \
		"=\"inherited\" in j[\"reach\"][\"notes\"]==true" \
		"=\"heap-roots\" in j[\"reach\"][\"notes\"]==false" \
		reach.classes.definitely_lost.bytes=5000 &&
	jget --check big300000.json reach.status=done \
		"=\"inherited\" in j[\"reach\"][\"notes\"]==false" \
		"=\"heap-roots\" in j[\"reach\"][\"notes\"]==true" \
		reach.classes.definitely_lost.bytes=5000 reach.classes.definitely_lost.blocks=1 \
		reach.classes.unknown.blocks=300000 inherited.held.blocks=300000 \
		"=[(s[\"frames\"][0][\"function\"], s[\"reach\"][\"still_reachable\"][\"bytes\"]) for s in j[\"sites\"] if s[\"frames\"][0][\"function\"] == \"child_hangs\"]==[[\"child_hangs\", 4000]]" &&
	grep "note: the scan at exit did not classify the inherited blocks" big300000.txt &&
	grep "note: a forked child: the blocks it inherited were not scanned one by one" big300000.txt &&
	not grep "did not see the inherited" big300000.txt &&
	rb=$(memprov dump "big300000/$child.trace" | sed -n "s/.* reach .*root_bytes=\([0-9]*\).*/\1/p") &&
	echo "root bytes read: $rb" && test "$rb" -lt 1000000 &&
	test_status 1 memprov check --max-leak 4999 "big300000/$child.trace" >big-check.txt &&
	grep "definitely lost at exit in child_drops" big-check.txt &&
	memprov check --max-leak 5000 "big300000/$child.trace" &&
	mkdir bigread &&
	timeout 60 env MEMPROV_OUTPUT=$TRASH/bigread/%p.trace LD_PRELOAD=$MEMPROV_LIB \
		MEMPROV_REACH_INHERIT_MB=64 ./big 300000 >bigread.out &&
	child=$(sed -n "s/^child=\([0-9]*\).*/\1/p" bigread.out) &&
	memprov leaks --json "bigread/$child.trace" >bigread.json &&
	jget --check bigread.json "=\"inherited\" in j[\"reach\"][\"notes\"]==true" \
		"=\"heap-roots\" in j[\"reach\"][\"notes\"]==false" \
		reach.classes.unknown.blocks=0 reach.classes.definitely_lost.bytes=5000
'

test_expect_success 'reach: ten forks deep, the oldest ancestor let go: a block hung on its node is reachable' '
	cat >deep.c <<-\EOF &&
	#include <stdlib.h>
	#include <sys/wait.h>
	#include <unistd.h>
	struct node { struct node *next; char pad[56]; };
	struct node *head;
	int main(void)
	{
		int depth;
		head = calloc(1, sizeof(*head));
		for (depth = 0; depth < 10; depth++) {
			pid_t pid = fork();
			if (pid)
				_exit(waitpid(pid, NULL, 0) == pid ? 0 : 1);
		}
		head->next = calloc(1, 3000); /* the tenth child: hung on the first node */
		exit(head->next ? 0 : 1);
	}
	EOF
	${CC:-cc} -g -O0 -o deep deep.c &&
	timeout 60 "$MEMPROV_CLI" run -d deepdir -- ./deep 2>/dev/null &&
	test $(ls deepdir/*.trace | wc -l) = 11 &&
	last=$(ls deepdir/*.trace | sort -V | tail -1) &&
	memprov leaks --json "$last" >deep.json &&
	jget --check deep.json reach.status=done reach.classes.definitely_lost.bytes=0 \
		"=\"heap-roots\" in j[\"reach\"][\"notes\"]==true" &&
	memprov check --max-leak 0 "$last"
'

test_done
