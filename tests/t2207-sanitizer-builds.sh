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
# first argument when that is a number
cat >"$TRASH/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
void *volatile keep;
int main(int argc, char **argv)
{
	char *p = malloc(100);
	p[0] = 1;
	keep = malloc(5);
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
	test $st = 2 && test "$(cat chk.out)" = ran
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

test_done
