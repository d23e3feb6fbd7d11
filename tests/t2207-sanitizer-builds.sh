#!/bin/sh
# t2207-sanitizer-builds.sh - a program built with a sanitizer runs under
# memprov as it runs bare. Its runtime replaces malloc: libmemprov.so
# stands aside in it (no trace), and where the runtime refuses to start
# after a preloaded library (AddressSanitizer's libasan.so), memprov run
# and the exec hooks of a traced parent start it without libmemprov.so.
# Before: every sanitizer whose runtime was linked into the program
# (clang's default, gcc's -static-libasan) or was gcc's libtsan crashed
# before main (SIGSEGV: its set-up called dlsym, memprov's hook called a
# libc string function, the sanitizer's interceptor not yet set), and a
# libasan build started by a traced parent exited 1.
. "$(dirname "$0")/test-lib.sh"
test -f "$MEMPROV_LIB" && test -x "$MEMPROV_CLI" || test_skip "libmemprov.so or memprov not built"

# prog.c: leaks 100 bytes when given an argument "leak"; exits with its
# first argument when that is a number; "child" runs /bin/true through
# system(), "orphan" starts sleep 2 and exits without waiting for it
cat >"$TRASH/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
void *volatile keep;
int main(int argc, char **argv)
{
	char *p = malloc(100);
	p[0] = 1;
	keep = malloc(5);
	if (argc > 1 && !strcmp(argv[1], "child") && system("/bin/true"))
		return 9;
	if (argc > 1 && !strcmp(argv[1], "orphan") && !fork()) {
		execl("/bin/sleep", "sleep", "2", (char *)NULL);
		_exit(9);
	}
	if (argc > 1 && !strcmp(argv[1], "leak"))
		p = NULL;
	else
		free(p);
	puts("ran");
	return argc > 1 ? atoi(argv[1]) : 0;
}
EOF

# build NAME FLAGS...: gcc's sanitizer runtimes (libasan8, libtsan2, their
# static archives) come with Debian's gcc: a build that fails fails the test
build() { out=$1 && shift && ${CC:-cc} -g "$@" -o "$out" prog.c; }

test_expect_success 'runtime in the program (-static-libasan): as bare under LD_PRELOAD, its leak report kept, no trace' '
	build sasan -fsanitize=address -static-libasan &&
	st=0 && ./sasan leak >bare.out 2>bare.err || st=$? &&
	test $st != 0 && grep -q "SUMMARY: AddressSanitizer: 100 byte(s) leaked in 1 allocation(s)" bare.err &&
	mkdir tr &&
	st2=0 && LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$PWD/tr/t" ./sasan leak >pre.out 2>pre.err || st2=$? &&
	cat pre.err && test $st2 = $st && test_cmp bare.out pre.out &&
	grep -q "SUMMARY: AddressSanitizer: 100 byte(s) leaked in 1 allocation(s)" pre.err &&
	test -z "$(ls tr)"
'

test_expect_success 'ThreadSanitizer, its runtime linked in or gcc'"'"'s libtsan.so: as bare under LD_PRELOAD' '
	for how in "" -static-libtsan; do
		build tsan$how -fsanitize=thread $how &&
		st=0 && LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$PWD/tt" ./tsan$how 7 >out 2>err || st=$? &&
		cat err && test $st = 7 && test "$(cat out)" = ran && ! test -e tt || return 1
	done
'

test_expect_success 'memprov run on a build with the runtime linked in: as bare, says memprov stood aside; --check exits 2' '
	build sasan -fsanitize=address -static-libasan &&
	st=0 && memprov run -d r1 -- ./sasan 3 >run.out 2>run.err || st=$? &&
	cat run.err && test $st = 3 && test "$(cat run.out)" = ran &&
	grep -q "^memprov: no trace at .*: ./sasan is built with AddressSanitizer, whose runtime replaces malloc: libmemprov.so stood aside in it$" run.err &&
	st=0 && memprov run -d r2 --check -- ./sasan >chk.out 2>chk.err || st=$? &&
	cat chk.err && test $st = 2 && test "$(cat chk.out)" = ran &&
	grep -q "^memprov check: nothing was checked: the command left no trace (why: above)$" chk.err &&
	! grep -q "no finished trace" chk.err
'

# --children: the traced children of an untraced command are gated, and
# said to be all that is; where none got a verdict either (a child still
# running as the command ended, as a clang sanitizer llvm-symbolizer
# can be), nothing was checked: exit 2, not 0
test_expect_success 'run --check --children on a build with the runtime linked in: its children alone gated' '
	build sasan -fsanitize=address -static-libasan &&
	st=0 && memprov run -d r3 --check --children -- ./sasan child >c.out 2>c.err || st=$? &&
	cat c.err && test $st = 0 && test "$(cat c.out)" = ran &&
	grep -q "^memprov check: the command left no trace (why: above): its children alone are gated$" c.err &&
	grep -q "(pid [0-9]*: /bin/true): ok" c.err &&
	st=0 && memprov run -d r4 --check --children -- ./sasan orphan >o.out 2>o.err || st=$? &&
	cat o.err && test $st = 2 &&
	grep -q "(pid [0-9]*: sleep 2): not gated: still running when the command ended" o.err &&
	grep -q "^memprov check: nothing was checked: the command left no trace and no child got a verdict$" o.err
'

# gcc's libasan checks that it is the first library loaded (exit 1:
# "ASan runtime does not come first in initial library list"): run sees
# it among the executable's needed libraries and runs it without
# libmemprov.so (a helper's sweep: it exited 1 under run before).
test_expect_success 'memprov run on a libasan.so build: runs as bare, not traced; --check exits 2' '
	build asan -fsanitize=address &&
	st=0 && ./asan 3 >bare.out || st=$? && test $st = 3 &&
	st=0 && memprov run -d asd -- ./asan 3 >run.out 2>run.err || st=$? &&
	cat run.err && test $st = 3 && test_cmp bare.out run.out &&
	grep -q "^memprov: ./asan is built with AddressSanitizer (libasan\.so[.0-9]*), whose runtime refuses" run.err &&
	st=0 && memprov run -d asd2 --check -- ./asan >chk.out 2>chk.err || st=$? &&
	test $st = 2 && test_cmp bare.out chk.out
'

# The same program started by a traced one (make check of an ASan build):
# the exec hooks look at the file and leave libmemprov.so out of its
# LD_PRELOAD: by path (execve), through PATH (execvp: env), as a script's
# interpreter. The other children stay traced. Before: each exited 1.
test_expect_success 'a libasan.so build started by a traced parent: as bare; its siblings still traced' '
	build asan -fsanitize=address &&
	build plain &&
	printf "#!%s\n" "$PWD/asan" >script && chmod +x script &&
	# the script is the interpreter argument 1: atoi("./script") is 0
	st=0 && memprov run -d ch --check --children -- \
		sh -c "./asan 3; echo st=\$?; env PATH=.:\$PATH asan 4; echo st=\$?; ./script 5; echo st=\$?; ./plain" \
		>ch.out 2>ch.err || st=$? &&
	cat ch.out ch.err && test $st = 0 &&
	printf "ran\nst=3\nran\nst=4\nran\nst=0\nran\n" >want && test_cmp want ch.out &&
	! grep -q "ASan runtime does not come first" ch.err &&
	for t in ch/memprov.*.trace; do memprov stats "$t"; done >stats &&
	grep -q "command: ./plain" stats
'

# GNU make runs a recipe line without shell syntax by posix_spawn, whose
# exec inside libc is not hooked: posix_spawn is (before: make exited 2,
# the program 1).
test_expect_success 'a libasan.so build run by make (posix_spawn) under a traced make: as bare' '
	build asan -fsanitize=address &&
	printf "all:\n\t./asan 0\n\t@echo made\n" >asan.mk &&
	st=0 && memprov run -d mk --check --children -- make -s -f asan.mk >mk.out 2>mk.err || st=$? &&
	cat mk.out mk.err && test $st = 0 &&
	printf "ran\nmade\n" >want && test_cmp want mk.out
'

# A helper's sweep of the first version: each of these failed.
test_expect_success 'stands aside: no frame of libmemprov.so in a linked-in runtime'"'"'s stacks; gcc'"'"'s liblsan.so, no trace' '
	build sasan -fsanitize=address -static-libasan &&
	st=0 && LD_PRELOAD="$MEMPROV_LIB" ./sasan leak >o 2>e || st=$? &&
	test $st != 0 && grep -q "SUMMARY: AddressSanitizer: 100 byte" e && ! grep libmemprov e &&
	build lsan -fsanitize=leak &&
	st=0 && ./lsan leak >bare.out 2>bare.err || st=$? && test $st != 0 &&
	mkdir tl && st2=0 &&
	LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$PWD/tl/t" ./lsan leak >o 2>e || st2=$? &&
	test $st2 = $st && test -z "$(ls tl)" &&
	st=0 && memprov run -d lr -- ./lsan 4 2>lr.err || st=$? && test $st = 4 &&
	grep -q "./lsan is built with LeakSanitizer (liblsan\.so[.0-9]*), whose runtime replaces malloc" lr.err
'

# glibc's least thread stack is 16 KiB, its TLS inside: the environment
# without libmemprov.so was built in 32 KiB of it (SIGSEGV), and a child
# forked there died starting its trace (SIGSEGV, with any program)
cat >"$TRASH/spawner.c" <<'EOF'
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
extern char **environ;
static char *prog;
static void *run(void *how)
{
	char *argv[] = { prog, "7", NULL };
	pid_t pid;
	int st = 0, r = 0;

	if (!strcmp(how, "spawn")) {
		r = posix_spawn(&pid, prog, NULL, NULL, argv, environ);
	} else if ((pid = fork()) == 0) {
		execve(prog, argv, environ);
		_exit(127);
	}
	if (!r)
		waitpid(pid, &st, 0);
	printf("%s r=%d st=%d\n", (char *)how, r, WEXITSTATUS(st));
	return NULL;
}
int main(int argc, char **argv)
{
	pthread_attr_t a;
	pthread_t t;

	prog = argv[1];
	pthread_attr_init(&a);
	pthread_attr_setstacksize(&a, 16384);
	for (int i = 2; i < argc; i++) {
		pthread_create(&t, &a, run, argv[i]);
		pthread_join(t, NULL);
	}
	return 0;
}
EOF

test_expect_success 'a thread of 16 KiB of stack starts a libasan.so build and a plain one (posix_spawn, fork and execve): as bare' '
	build asan -fsanitize=address &&
	${CC:-cc} -o spawner spawner.c -pthread &&
	./spawner ./asan spawn exec >bare.out &&
	LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$PWD/sp.trace" ./spawner ./asan spawn exec >pre.out &&
	test_cmp bare.out pre.out && grep -q "spawn r=0 st=7" pre.out && grep -q "exec r=0 st=7" pre.out &&
	LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$PWD/sp2.trace" ./spawner ./plain spawn exec >plain.out &&
	test_cmp bare.out plain.out
'

test_expect_success 'LD_PRELOAD=libasan.so under memprov run; a libasan.so script interpreter; PATH with a directory first' '
	build asan -fsanitize=address && build plain &&
	A=$(${CC:-cc} -print-file-name=libasan.so) && test -e "$A" &&
	st=0 && ASAN_OPTIONS=detect_leaks=0 LD_PRELOAD=$A memprov run -d pr -- ./plain 3 >pr.out 2>pr.err || st=$? &&
	cat pr.err && test $st = 3 && test "$(cat pr.out)" = ran &&
	grep -q "^memprov: LD_PRELOAD names .*libasan\.so[.0-9]*, a sanitizer" pr.err &&
	printf "#!%s\n" "$PWD/asan" >script && chmod +x script &&
	st=0 && memprov run -d sr -- ./script >sr.out 2>sr.err || st=$? &&
	cat sr.err && test $st = 0 && test "$(cat sr.out)" = ran &&
	mkdir -p first/asan bin && cp asan bin/ &&
	st=0 && memprov run -d pd --check --children -- sh -c "env PATH=$PWD/first:$PWD/bin asan 6" >pd.out 2>pd.err || st=$? &&
	cat pd.err && test $st = 6 && test "$(cat pd.out)" = ran
'

test_done
