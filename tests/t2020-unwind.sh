#!/bin/sh
# t2020: memprov's own unwinder (interpose/unwind.c) gives the same native
# frames as libunwind. MEMPROV_UNWIND_CHECK=1 captures every stack both
# ways and prints at exit "memprov: unwind check: N captures, F fast,
# B fallback, M mismatches" (fallback: unwind.c gave up, libunwind's
# stack was used). Also: the early stop at the interpreter when Python
# frames exist, MEMPROV_NATIVE_FULL=1, MEMPROV_FAST_UNWIND=0, and reports
# that do not change with the unwinder.
. "$(dirname "$0")/test-lib.sh"

PYENV=/root/.pyenv/versions

# checked PROG ARGS...: run with the check on; its report line in check.txt
checked() {
	rm -f "$TRASH"/c.*.trace
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_UNWIND_CHECK=1 \
		MEMPROV_OUTPUT="$TRASH/c.%p.trace" "$@" >out.txt 2>err.txt
	grep "^memprov: unwind check: " err.txt >check.txt
	! grep -v "^memprov: unwind check: " err.txt
}

# field N: the N-th figure of every check line (1 captures .. 4 mismatches)
field() { awk -v n="$1" '{print $(4 + 2 * (n - 1))}' check.txt | tr -d ,; }

test_expect_success 'churn, 1 and 2 threads: every capture fast and equal' '
	checked "$BIN/uw-churn" 1 20000 &&
	echo "memprov: unwind check: 20004 captures, 20004 fast, 0 fallback, 0 mismatches" >expect &&
	test_cmp expect check.txt &&
	checked "$BIN/uw-churn" 2 20000 &&
	echo "memprov: unwind check: 40006 captures, 40006 fast, 0 fallback, 0 mismatches" >expect &&
	test_cmp expect check.txt
'

test_expect_success 'C++ exceptions: allocations while unwinding, in catch blocks' '
	checked "$BIN/uw-cxxthrow" &&
	echo 43076 >expect && test_cmp expect out.txt &&
	test "$(field 4)" = 0 && test "$(field 3)" = 0 && test "$(field 1)" -ge 600
'

test_expect_success 'signal handlers: 20 captures across a signal frame fall back, none differ' '
	checked "$BIN/uw-sigalloc" &&
	echo "memprov: unwind check: 31 captures, 11 fast, 20 fallback, 0 mismatches" >expect &&
	test_cmp expect check.txt &&
	memprov leaks "$TRASH"/c.*.trace | grep -A2 "heap malloc: 10 blocks, 320 B" >got &&
	grep -q "leak_one .*sigalloc.c:" got && grep -q "main .*sigalloc.c:" got
'

test_expect_success 'libunwind is opened when a stack first needs it, inside a handler here, not before' '
	# not linked (nor libgcc_s): a program whose stacks unwind.c walks never maps it
	! readelf -d "$MEMPROV_LIB" | grep -E "NEEDED.*(libunwind|libgcc_s)" &&
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/maps.trace" \
		cat /proc/self/maps >maps.txt &&
	grep -q "/libmemprov\.so" maps.txt && ! grep -E "libunwind|liblzma" maps.txt &&
	# a handler'"'"'s allocation: its walk crosses the signal frame, so
	# libunwind is opened there, and takes the whole stack down to main
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/lazy.trace" \
		"$BIN/uw-sigalloc" >out.txt 2>err.txt &&
	echo ok >expect && test_cmp expect out.txt && test ! -s err.txt &&
	memprov dump lazy.trace >dump.txt &&
	s=$(sed -n "s/.* alloc malloc heap .* size=110 stack=\(0x[0-9a-f]*\)\$/\1/p" dump.txt | head -n 1) &&
	test -n "$s" &&
	n=$(sed -n "s/.* stack id=$s native=\([0-9]*\) .*/\1/p" dump.txt) &&
	test "$n" -ge 8
'

# A thread inside dlopen (the loader's lock held) runs a library
# constructor that takes the program's mutex M; the main thread holds M
# and allocates on a coroutine's stack, which memprov's walk cannot take.
# Opened there, libunwind waited for the loader's lock: both threads hung.
cat >"$TRASH/dllock.c" <<'CEOF'
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>
pthread_mutex_t M = PTHREAD_MUTEX_INITIALIZER;
volatile int in_ctor;
static volatile int go;
static ucontext_t back, coro;
static int mapped(const char *what)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int r = 0;

	while (f && fgets(line, sizeof(line), f))
		r |= strstr(line, what) != NULL;
	if (f)
		fclose(f);
	return r;
}
static void *opener(void *arg)
{
	(void)arg;
	while (!go)
		usleep(100);
	if (!dlopen("./libctorlock.so", RTLD_NOW))
		exit(2);
	return NULL;
}
static void on_coroutine(void)
{
	void *volatile p = malloc(64);
	free(p);
}
int main(void)
{
	static char stack[256 << 10];
	pthread_t t;

	printf("libunwind before the thread: %d\n", mapped("libunwind"));
	pthread_create(&t, NULL, opener, NULL);
	printf("libunwind after: %d\n", mapped("libunwind"));
	pthread_mutex_lock(&M);
	go = 1;
	while (!in_ctor)
		usleep(100);
	getcontext(&coro);
	coro.uc_stack.ss_sp = stack;
	coro.uc_stack.ss_size = sizeof(stack);
	coro.uc_link = &back;
	makecontext(&coro, on_coroutine, 0);
	swapcontext(&back, &coro);
	pthread_mutex_unlock(&M);
	pthread_join(t, NULL);
	puts("joined");
	return 0;
}
CEOF
cat >"$TRASH/ctorlock.c" <<'CEOF'
#include <pthread.h>
extern pthread_mutex_t M;
extern volatile int in_ctor;
__attribute__((constructor)) static void take_m(void)
{
	in_ctor = 1;
	pthread_mutex_lock(&M);
	pthread_mutex_unlock(&M);
}
CEOF

test_expect_success 'libunwind is opened before the first thread starts, never while another thread may hold the loader (no deadlock)' '
	cc -shared -fPIC -o libctorlock.so ctorlock.c &&
	cc -O1 -rdynamic -o dllock dllock.c -lpthread -ldl &&
	timeout 20 ./dllock >bare.out &&
	timeout 20 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/dll.trace" ./dllock >out.txt 2>err.txt &&
	test ! -s err.txt &&
	printf "libunwind before the thread: 0\nlibunwind after: 1\njoined\n" >expect && test_cmp expect out.txt &&
	memprov stats dll.trace >dll.stats && grep -qx "ended: exited with status 0" dll.stats
'

test_expect_success 'setjmp/longjmp, threads (own stack too), -fomit-frame-pointer, alloca' '
	checked "$BIN/uw-jmpthreads" &&
	echo "memprov: unwind check: 384 captures, 384 fast, 0 fallback, 0 mismatches" >expect &&
	test_cmp expect check.txt
'

test_expect_success 'frames of 40, 64 and 100 KiB (wide rules): walked, as libunwind does' '
	checked "$BIN/uw-bigframe" 100 &&
	echo 14850 >expect && test_cmp expect out.txt &&
	echo "memprov: unwind check: 201 captures, 201 fast, 0 fallback, 0 mismatches" >expect &&
	test_cmp expect check.txt
'

test_expect_success 'CFA = rsp + 8, 16, .. 320 (the offsets the walk branches on and beyond): walked' '
	# one frame of each offset (tests/unwind/offsets.c); a case of the
	# walk that got its CFA wrong made all 300 captures fall back
	checked "$BIN/uw-offsets" 100 &&
	echo 300 >expect && test_cmp expect out.txt &&
	echo "memprov: unwind check: 301 captures, 301 fast, 0 fallback, 0 mismatches" >expect &&
	test_cmp expect check.txt &&
	memprov dump "$TRASH"/c.*.trace >dump.txt &&
	# leaf, off_40 .. off_1, main and what calls main: the deepest stack
	n=$(sed -n "s/.* stack id=.* native=\([0-9]*\) .*/\1/p" dump.txt | sort -n | tail -n 1) &&
	test "$n" -ge 43
'

test_expect_success 'frames no CFI describes (assembly without FDE, JIT code): the frame-pointer rule, as libunwind' '
	# before, each of those 200 stacks went to libunwind (as 5,459 of
	# node'"'"'s 452,812 did, at V8'"'"'s builtins)
	checked "$BIN/uw-nocfi" 100 &&
	echo "kept 200" >expect && test_cmp expect out.txt &&
	echo "memprov: unwind check: 203 captures, 203 fast, 0 fallback, 0 mismatches" >expect &&
	test_cmp expect check.txt &&
	memprov leaks "$TRASH"/c.*.trace >nocfi.leaks &&
	# past the trampoline: the C function that called it, then main
	grep -A4 "heap malloc: 100 blocks, 9.8 KiB (10,000 B)" nocfi.leaks >text.site &&
	sed -n 2p text.site | grep "alloc_one .*nocfi.c:[0-9]*$" &&
	sed -n 3p text.site | grep "nocfi_call+0x[0-9a-f]* (uw-nocfi)$" &&
	sed -n 4p text.site | grep "via_text .*nocfi.c:[0-9]*$" &&
	grep -A4 "heap malloc: 100 blocks, 9.9 KiB (10,100 B)" nocfi.leaks >jit.site &&
	sed -n 3p jit.site | grep "^ *0x[0-9a-f]*$" &&
	sed -n 4p jit.site | grep "via_jit .*nocfi.c:[0-9]*$"
'

test_expect_success 'libunwind inside the program'"'"'s allocator (its lock held, as jemalloc maps an arena): it is not called again' '
	# glibc allocates libunwind'"'"'s thread-local storage at its first use
	# on a thread: from the allocator that held its lock (rustc hung)
	for m in check ctx; do
		env LD_PRELOAD="$MEMPROV_LIB $BIN/liblockalloc.so" MEMPROV_OUTPUT="$TRASH/lock.%p.trace" \
			MEMPROV_UNWIND_CHECK=$(test $m = check && echo 1 || echo 0) \
			timeout 60 "$BIN/unwlock" $m >out-$m.txt 2>err-$m.txt || return 1
		echo "allocator: liblockalloc.so, called while it held its lock: 0" >expect &&
		test_cmp expect out-$m.txt || return 1
	done &&
	grep -q "^memprov: unwind check: [1-9][0-9]* captures, .* 0 mismatches$" err-check.txt
'

test_expect_success 'the same allocator built into the executable (rustc'"'"'s jemalloc): not called again, the stacks as libunwind'"'"'s' '
	# the loader allocates with it, not with memprov'"'"'s malloc: libunwind
	# is stepped there, never unw_backtrace (1 call in each mode before;
	# rustc hung under MEMPROV_UNWIND_CHECK=1)
	for m in check ctx; do
		timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/lockexe.$m.%p.trace" \
			MEMPROV_UNWIND_CHECK=$(test $m = check && echo 1 || echo 0) \
			"$BIN/uw-lockexe" $m >exe-$m.txt 2>exe-err-$m.txt || return 1
		echo "allocator: liblockalloc.so, called while it held its lock: 0" >expect &&
		test_cmp expect exe-$m.txt || return 1
	done &&
	grep "^memprov: unwind check: 1 captures, 1 fast, 0 fallback, 0 mismatches$" exe-err-check.txt &&
	# the makecontext stack, which the walk gives up on: libunwind stepped it
	memprov peak "$TRASH"/lockexe.ctx.*.trace >exe-ctx.peak &&
	grep -A1 "#1 mmap mmap: 1 block, 1.0 MiB" exe-ctx.peak | grep "map_locked .*unwlock.c:[0-9]*$"
'

test_expect_success 'a signal handler that allocates while memprov is inside libunwind: its blocks are the program'"'"'s, recorded' '
	# before, those served from memprov'"'"'s arena went unrecorded: 46 of 66,
	# 41 of 65, 34 of 68 (tests/progs/unwsig.c, its loop then of malloc,
	# which a handler'"'"'s malloc may corrupt: 21 of 200 bare runs crashed);
	# with the loop of mmap, 198, 195, 194 of 200 recorded with 1604a44
	rm -f "$TRASH"/sig.*.trace &&
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_UNWIND_CHECK=1 \
		MEMPROV_OUTPUT="$TRASH/sig.%p.trace" "$BIN/unwsig" >out.txt 2>err.txt &&
	h=$(sed -n "s/^handler blocks \([0-9]*\), after 100\$/\1/p" out.txt) &&
	test "$h" -gt 0 &&
	memprov dump "$TRASH"/sig.*.trace >dump.txt &&
	test "$(grep -c " alloc malloc heap .* size=40 " dump.txt)" = "$h" &&
	test "$(grep -c " alloc malloc heap .* size=48 " dump.txt)" = 100
'

test_expect_success 'the same leak report with unwind.c and with libunwind only' '
	# the check opens libunwind at start in both runs: loaded in one only,
	# it made the threads'"'"' TLS vectors (allocate_dtv) 16 B longer there
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/fast.trace" \
		MEMPROV_UNWIND_CHECK=1 "$BIN/uw-jmpthreads" >/dev/null 2>err-fast.txt &&
	echo "memprov: unwind check: 384 captures, 384 fast, 0 fallback, 0 mismatches" >expect &&
	test_cmp expect err-fast.txt &&
	timeout 60 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/slow.trace" \
		MEMPROV_FAST_UNWIND=0 MEMPROV_UNWIND_CHECK=1 "$BIN/uw-jmpthreads" >/dev/null 2>err.txt &&
	echo "memprov: unwind check: 384 captures, 0 fast, 384 fallback, 0 mismatches" >expect &&
	test_cmp expect err.txt &&
	memprov leaks --native fast.trace | sed 1,5d >fast.txt &&
	memprov leaks --native slow.trace | sed 1,5d >slow.txt &&
	test_cmp slow.txt fast.txt &&
	grep -A3 "heap malloc: 100 blocks, 4.7 KiB (4,800 B)" fast.txt >got &&
	grep -q "work .*jmpthreads.c:" got && grep -q "start_thread " got &&
	grep -A2 "heap malloc: 50 blocks, 2.3 KiB (2,400 B)" fast.txt >got &&
	grep -q "work .*jmpthreads.c:" got && grep -q "main .*jmpthreads.c:" got
'

# the memo of a thread's walks (unwind.c): a walk from the same start
# whose stack words all read the same is replayed, not walked again
test_expect_success 'memo: 4 threads, sites reached by several chains, a timer handler: replays equal libunwind' '
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/memo.%p.trace" \
		MEMPROV_UNWIND_CHECK=2 "$BIN/uw-memo" 20000 >out.txt 2>err.txt &&
	grep -qx "memo ok" out.txt &&
	cat err.txt &&
	grep "^memprov: unwind check: " err.txt >check.txt &&
	test "$(field 4)" = 0 &&
	# 80,004 allocations in the loops and main, the handler'"'"'s across its signal frame
	test "$(field 1)" = $((80004 + $(field 3))) && test "$(field 2)" = 80004 &&
	line=$(grep "^memprov: unwind memo: " err.txt) &&
	replayed=$(echo "$line" | awk "{print \$4}") && through=$(echo "$line" | awk "{print \$6}") &&
	# after the first 4,096 walks of each thread, nearly all replayed
	test "$through" -ge 60000 && test $((replayed * 100)) -ge $((through * 95))
'

test_expect_success 'memo: none under an address-space limit (its reservation is not taken from the program)' '
	(ulimit -v 1000000 && timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/memo.%p.trace" \
		MEMPROV_UNWIND_CHECK=2 "$BIN/uw-memo" 20000 >out.txt 2>err.txt) &&
	grep -qx "memo ok" out.txt &&
	grep "^memprov: unwind check: " err.txt >check.txt && test "$(field 4)" = 0 &&
	grep -qx "memprov: unwind memo: 0 of 0 walks through it replayed" err.txt
'

test_expect_success 'memo: the same leak report with it and without (MEMPROV_UNWIND_MEMO=0)' '
	for m in 0 1; do
		rm -rf "m$m" && mkdir "m$m" &&
		timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/m$m/m.%p.trace" \
			MEMPROV_UNWIND_MEMO=$m "$BIN/uw-memo" 20000 >/dev/null &&
		memprov leaks --native m$m/*.trace | sed 1,5d >leaks$m.txt || exit 1
	done &&
	test_cmp leaks0.txt leaks1.txt &&
	grep -q "definitely lost          32 blocks" leaks1.txt &&
	grep -q "right .*memo.c:" leaks1.txt && grep -q "work .*memo.c:" leaks1.txt
'

for py in /usr/bin/python3 $PYENV/3.11.7/bin/python3 $PYENV/3.12.1/bin/python3; do
	[ -x "$py" ] || continue
	export py
	test_expect_success "Python: no mismatch, native frames cut at the interpreter: $py" '
		checked "$py" "$TOP/tests/py/stacks.py" &&
		echo 4 >expect && test_cmp expect out.txt &&
		test "$(field 4)" = 0 &&
		test "$(field 3)" -le 10
	'
done

# Two Python runs differ in what imports leave live; the leaked arrays'
# site must read the same.
test_expect_success 'numpy: no mismatch; the leak site the same as with MEMPROV_NATIVE_FULL=1' '
	/usr/bin/python3 -c "import numpy" 2>/dev/null || { echo "no numpy"; exit 0; } &&
	checked /usr/bin/python3 "$TOP/tests/py/leak_np.py" &&
	echo 5 >expect && test_cmp expect out.txt &&
	test "$(field 4)" = 0 && test "$(field 3)" -le 10 &&
	mv "$TRASH"/c.*.trace cut.trace &&
	MEMPROV_NATIVE_FULL=1 && export MEMPROV_NATIVE_FULL &&
	checked /usr/bin/python3 "$TOP/tests/py/leak_np.py" &&
	test "$(field 4)" = 0 &&
	mv "$TRASH"/c.*.trace full.trace &&
	memprov leaks cut.trace | grep -A4 "heap malloc: 5 blocks, 38.1 MiB" >cut.txt &&
	memprov leaks full.trace | grep -A4 "heap malloc: 5 blocks, 38.1 MiB" >full.txt &&
	test_cmp full.txt cut.txt &&
	grep -q "make .*leak_np.py:" cut.txt &&
	memprov leaks --native cut.trace | sed -n "/5 blocks, 38.1 MiB/,/#2 /p" >cutn.txt &&
	memprov leaks --native full.trace | sed -n "/#1 heap malloc: /,/#2 /p" >fulln.txt &&
	test "$(grep -c "python3.11+\|_PyEval_EvalFrameDefault" cutn.txt)" = 0 &&
	test "$(grep -c _PyEval_EvalFrameDefault fulln.txt)" -gt 0 &&
	test "$(grep -c "_multiarray_umath.*so+" cutn.txt)" = 5
'

# cfi.h: the FDEs of a module with a big unwind table are read from its
# file, not its mapping, so that they do not stay resident (64 KiB a
# fault) in the program's RSS. tests/py/eh_resident.py counts the
# resident pages of python3.11's and libc's .eh_frame: 1 or 0 bare, 49
# and 39 when memprov read them in memory; now python3.11's 1 and libc's
# 1 to 14 (the fault-around window of libc's .eh_frame_hdr, still read
# in memory, reaches into .eh_frame; the kernel maps what it finds there).
test_expect_success 'python3.11 and libc: .eh_frame read from the files stays out of RSS; stacks as libunwind' '
	/usr/bin/python3 "$TOP/tests/py/eh_resident.py" >bare.txt &&
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/eh.trace" \
		/usr/bin/python3 "$TOP/tests/py/eh_resident.py" >traced.txt &&
	cat bare.txt traced.txt &&
	read x exe y libc <traced.txt && test "$exe" -le 16 && test "$libc" -le 24 &&
	checked /usr/bin/python3 "$TOP/tests/py/eh_resident.py" &&
	test "$(field 4)" = 0 && test "$(field 1)" -gt 10000
'

# A program that puts another file over memprov's descriptor (dup2 onto a
# high number): the descriptor is no longer memprov's (sys.c checks its
# inode before each use), and the FDEs are read in memory again: libc's
# .eh_frame becomes resident, and no stack differs.
test_expect_success 'a descriptor taken over by the program (libc'"'"'s dup2 through dlsym on a handle): FDEs read in memory again, stacks the same' '
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/eh2.trace" \
		/usr/bin/python3 "$TOP/tests/py/eh_resident.py" rawdup2 >traced.txt &&
	cat traced.txt &&
	read x exe y libc <traced.txt && test "$libc" -gt 24 &&
	checked /usr/bin/python3 "$TOP/tests/py/eh_resident.py" rawdup2 &&
	test "$(field 4)" = 0 && test "$(field 1)" -gt 10000
'

test_expect_success 'libc'"'"'s dup2 onto the descriptor moves it: FDEs still read from the file, stacks the same' '
	# the moved descriptor was read through its old number, the
	# program'"'"'s file from then on (cfi.c kept a copy of the number)
	timeout 120 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/eh3.trace" \
		/usr/bin/python3 "$TOP/tests/py/eh_resident.py" dup2 >traced.txt &&
	cat traced.txt &&
	read x exe y libc <traced.txt && test "$libc" -le 24 &&
	checked /usr/bin/python3 "$TOP/tests/py/eh_resident.py" dup2 &&
	test "$(field 4)" = 0 && test "$(field 1)" -gt 10000
'

# Under a small descriptor limit the tables are read in memory: the
# program keeps its descriptors.
test_expect_success 'descriptors on python3.11 and libc, none under ulimit -n 64' '
	# by number: the listing of /proc/self/fd leaves memprov'"'"'s out (hooks_dir.c)
	cat >fds.py <<-\EOF &&
	import os
	fds = ["/proc/self/fd/%d" % n for n in range(3, os.sysconf("SC_OPEN_MAX"))]
	print(sum(os.path.basename(os.readlink(f)) in ("python3.11", "libc.so.6")
	          for f in fds if os.path.lexists(f)))
	EOF
	env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/fd1.trace" /usr/bin/python3 fds.py >n1 &&
	(ulimit -n 64 && env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/fd2.trace" \
		/usr/bin/python3 fds.py >n2) &&
	echo 2 >expect && test_cmp expect n1 &&
	echo 0 >expect && test_cmp expect n2
'

test_expect_success '/bin/true and python3 -c pass: nothing on stderr' '
	timeout 30 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/t.trace" /bin/true 2>err.txt &&
	test_cmp /dev/null err.txt &&
	timeout 30 env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/t.trace" \
		/usr/bin/python3 -c "import numpy" 2>err.txt &&
	test_cmp /dev/null err.txt
'

# The unwind cache's misses take the loader's lock; signals are held off
# around it only once the program has a handler of its own (one that
# leaves by longjmp could leave the lock held). `ls` installs none: no
# rt_sigprocmask of memprov's (171 in `ls -d /` when every miss blocked
# them); python3 installs SIGINT's: its misses still block them.
test_expect_success 'no handler of the program: misses block no signals; with one, they do' '
	command -v strace >/dev/null || { echo "no strace: not checked"; exit 0; }
	strace -f -e trace=rt_sigprocmask -o ls.st env LD_PRELOAD="$MEMPROV_LIB" \
		MEMPROV_OUTPUT="$TRASH/sm.%p.trace" ls -d / >/dev/null &&
	n=$(grep -c "rt_sigprocmask(SIG_BLOCK, ~\[" ls.st || :) &&
	strace -f -e trace=rt_sigprocmask -o py.st env LD_PRELOAD="$MEMPROV_LIB" \
		MEMPROV_OUTPUT="$TRASH/sm.%p.trace" /usr/bin/python3 -c "import json" &&
	p=$(grep -c "rt_sigprocmask(SIG_BLOCK, ~\[" py.st || :) &&
	echo "ls: $n blocks of every signal, python3: $p" &&
	test "$n" -le 4 && test "$p" -ge 20
'

# The main thread's stack is bounded by where the program's stack started
# (__libc_stack_end): /proc/self/maps is read for the scan at exit only,
# not for the first stack walk (3 reads before), nor for the modules'
# paths at start (their /proc/self/map_files links: 2 reads before);
# leak3 reads none of its own.
test_expect_success 'main thread: its stack known without reading /proc/self/maps' '
	command -v strace >/dev/null || { echo "no strace: not checked"; exit 0; }
	strace -e trace=openat -o maps.st env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_UNWIND_CHECK=1 \
		MEMPROV_OUTPUT="$TRASH/mm.%p.trace" "$BIN/leak3" >/dev/null 2>check.err &&
	cat check.err && grep -q " 0 mismatches" check.err &&
	n=$(grep -c "/proc/self/maps" maps.st || :) && echo "maps read $n times" &&
	test "$n" = 1
'

# The FDEs of a big module are read from its file a page at a time, and
# the last 16 pages are kept: `ls -d /` read libc's .eh_frame 47 times
# (512 bytes each, from 8 pages) before they were; python3's start-up
# 441 times from 34 pages.
test_expect_success 'FDEs read from a module file: each page once while it is kept' '
	command -v strace >/dev/null || { echo "no strace: not checked"; exit 0; }
	strace -y -e trace=pread64 -o fde.st env LD_PRELOAD="$MEMPROV_LIB" \
		MEMPROV_OUTPUT="$TRASH/fde.%p.trace" ls -d / >/dev/null &&
	grep "pread64([0-9]*</[^>]*/libc\.so\.6>" fde.st |
		sed -n "s/.*, \([0-9]*\), \([0-9]*\)) = [0-9]*$/\1 \2/p" >fde.reads &&
	n=$(wc -l <fde.reads) && pages=$(awk "\$1 == 4096" fde.reads | wc -l) &&
	twice=$(awk "\$1 == 4096 { print \$2 }" fde.reads | sort | uniq -d | wc -l) &&
	echo "preads of libc: $n, of whole pages: $pages, pages read twice: $twice" &&
	test "$pages" -ge 1 && test "$n" -le 20 && test "$twice" = 0
'

# python3.11's .eh_frame_hdr (76 KiB) is searched in its file, not in
# place: read there, the search faulted in 64 KiB of the module's mapping
# around each entry it read (the kernel's fault-around), 16 pages of the
# table resident that the program never reads (64 KiB of pycalls' RSS).
# Its stacks are the same as libunwind's (which reads the table in place:
# the check's run is not the one measured).
test_expect_success 'python3.11: its unwind table searched in the file, stacks equal' '
	py=$(readlink -f /usr/bin/python3) &&
	if ! od -An -tu2 -j16 -N2 "$py" | grep -qw 2; then echo "not ET_EXEC: not checked"; exit 0; fi &&
	set -- $(readelf -SW "$py" | sed -n "s/.*\.eh_frame_hdr *PROGBITS *\([0-9a-f]*\) [0-9a-f]* \([0-9a-f]*\) .*/\1 \2/p") &&
	test -n "$2" && test $((0x$2)) -gt 65536 &&
	cat >hdr.py <<-EOF &&
	import struct
	def deep(n):
	    return deep(n - 1) if n else [bytearray(64 * k) for k in range(1, 300)]
	for d in range(1, 120):
	    deep(d)
	lo, hi = 0x$1 // 4096, (0x$1 + 0x$2 - 1) // 4096 + 1
	with open("/proc/self/pagemap", "rb") as f:
	    f.seek(lo * 8)
	    b = f.read((hi - lo) * 8)
	print(sum(struct.unpack_from("Q", b, 8 * i)[0] >> 63 for i in range(hi - lo)))
	EOF
	/usr/bin/python3 hdr.py >bare.n &&
	checked /usr/bin/python3 hdr.py && cat check.txt &&
	test "$(field 4)" = 0 && test "$(field 1)" -ge 1000 &&
	env LD_PRELOAD="$MEMPROV_LIB" MEMPROV_OUTPUT="$TRASH/h.%p.trace" \
		/usr/bin/python3 hdr.py >mp.n &&
	echo "table pages resident: bare $(cat bare.n), under memprov $(cat mp.n)" &&
	test "$(cat mp.n)" -le "$(cat bare.n)"
'

test_done
