#!/bin/sh
# t2218-vfork-exit.sh - a vfork child that calls exit() (after a failed
# exec, a common pattern) runs libc's exit handlers in its parent's
# memory, mp_fini's among them, and marks them done for the parent too.
# The parent then left past every handler: no scan, no exit record, and
# the gate said "not gated: it exited past every hook" of a program that
# loses 64 B (a helper's sweep). It records its exit where it notes it.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" || test_skip "libmemprov.so or memprov not built"

# vf [exit]: a vfork child that fails to exec and calls exit(127); the
# parent then loses 64 B and returns 0 from main, or calls exit(3)
cat >"$TRASH/vf.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
int main(int argc, char **argv)
{
	int st;
	pid_t p = vfork();
	char *l;

	if (!p) {
		execlp("no-such-tool-memprov", "no-such-tool-memprov", (char *)0);
		exit(127);
	}
	waitpid(p, &st, 0);
	l = malloc(64); /* lost */
	strcpy(l, "lost");
	l = NULL;
	printf("child %d\n", WEXITSTATUS(st));
	if (argc > 1)
		exit(3);
	return 0;
}
EOF

test_expect_success 'after a vfork child exit(): the parent is scanned, its lost block fails the gate' '
	${CC:-cc} -g -O0 -o vf vf.c &&
	./vf >bare.out &&
	st=0 && memprov run -o r.trace --check -- ./vf >out 2>err || st=$? &&
	cat err && test $st = 23 && test_cmp bare.out out &&
	grep -q "#1 heap malloc: 64 B in 1 block definitely lost at exit in main at .*vf.c:$(grep -n "/\* lost \*/" vf.c | cut -d: -f1)$" err &&
	memprov stats r.trace >stats && grep -q "^ended: exited with status 0" stats
'

test_expect_success 'the same when the parent leaves by exit(3): its status kept' '
	st=0 && ./vf x >bare.out || st=$? && test $st = 3 &&
	st=0 && memprov run -o x.trace --check -- ./vf x >out 2>err || st=$? &&
	cat err && test $st = 3 && test_cmp bare.out out &&
	memprov stats x.trace >stats && grep -q "^ended: exited with status 3" stats &&
	st=0 && memprov check x.trace >chk || st=$? && test $st = 1 &&
	grep -q "64 B in 1 block definitely lost" chk
'

test_done
