#!/bin/sh
# t2000-interpose-smoke.sh - quick checks of libmemprov.so's core (trace
# writer, libc hooks, lifecycle) with a small struct reader, independent
# of the analyzer: exact live bytes, realloc edge cases, exit paths,
# SIGKILL, fork, threads, a program with its own malloc, MEMPROV_DISABLE.
. "$(dirname "$0")/test-lib.sh"

[ -f "$MEMPROV_LIB" ] || test_skip "interpose/libmemprov.so not built"
PY=/usr/bin/python3
[ -x "$PY" ] || test_skip "no /usr/bin/python3 for the trace reader"
export PY

# Prints live HEAP/MMAP blocks and bytes, EXIT/FORK/MARK records, the
# header state, and how many ALLOC records asked for each size given.
cat >"$TRASH/rd.py" <<'PYEOF'
import struct, sys
sys.path.insert(0, sys.argv.pop(1))
import mptrace
t = mptrace.Trace(sys.argv[1])
h = t.hdr
state, exst, stop = h["state"], h["exit_status"], h["stop_reason"]
recs = [r[:6] for r in t.records()]
live = {1: {}, 2: {}}
pend = {1: None, 2: None}
sizes = []
for ts, typ, fl, fn, kind, b in recs:
    if typ == 1:
        a, s, st = struct.unpack_from('<QQQ', b)
        sizes.append(s)
        if fl & 1:
            if fl & 2 and pend[kind]:
                live[kind][pend[kind][0]] = pend[kind][1]
        else:
            live[kind][a] = s
        pend[kind] = None
    elif typ == 2:
        a, = struct.unpack_from('<Q', b)
        if fn == 15:
            ln, = struct.unpack_from('<Q', b, 8)
            for k in [k for k in live[kind] if a <= k < a + ln]:
                del live[kind][k]
            continue
        v = live[kind].pop(a, None)
        pend[kind] = (a, v) if fl & 2 and v is not None else None
    elif typ == 10:
        st, how = struct.unpack_from('<iI', b)
        print("exit-record", st, how)
    elif typ == 14:
        print("fork-record")
    elif typ == 7:
        print("mark", b[8:].split(b'\0')[0].decode())
for k, name in ((1, "heap"), (2, "mmap")):
    print(name, len(live[k]), sum(live[k].values()))
print("state", state, "exit", exst, "stop", stop)
for want in sys.argv[2:]:
    print("size", want, sizes.count(int(want)))
PYEOF
rd() { "$PY" "$TRASH/rd.py" "$TOP/tests/helper" "$@"; }

cat >"$TRASH/edge.c" <<'CEOF'
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
void memprov_mark(const char *) __attribute__((weak));
static void *keep[16];
int main(int argc, char **argv)
{
	void *p, *q;
	int i;
	keep[0] = malloc(100);
	p = malloc(50); free(p);
	p = malloc(10); keep[1] = realloc(p, 20);
	p = malloc(30); q = realloc(p, 0);
	keep[2] = reallocarray(NULL, 3, 7);
	p = malloc(8); q = reallocarray(p, 0, 8);
	q = calloc((size_t)-1 / 2, 16);
	q = malloc((size_t)1 << 62);
	p = malloc(40); q = realloc(p, (size_t)1 << 62); free(p);
	if (posix_memalign(&keep[3], 64, 200)) return 9;
	if (posix_memalign(&q, 3, 10) != EINVAL) return 9;
	keep[4] = aligned_alloc(64, 128);
	keep[5] = memalign(32, 64);
	keep[6] = valloc(10);
	keep[7] = calloc(4, 4);
	free(NULL);
	p = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	keep[8] = mremap(p, 8192, 16384, MREMAP_MAYMOVE);
	q = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(q, 4096);
	for (i = 0; i < 1000; i++) { p = malloc(3000 + i); free(p); }
	if (memprov_mark) memprov_mark("done");
	if (argc > 1 && !strcmp(argv[1], "kill")) { keep[9] = malloc(777); kill(getpid(), SIGKILL); }
	if (argc > 1 && !strcmp(argv[1], "_exit")) _exit(3);
	if (argc > 1 && !strcmp(argv[1], "exit")) exit(4);
	if (argc > 1 && !strcmp(argv[1], "fork")) {
		pid_t c = fork();
		if (c == 0) { keep[10] = malloc(222); _exit(7); }
		keep[11] = malloc(333);
		waitpid(c, NULL, 0); /* its trace is whole when we are done */
	}
	return 0;
}
CEOF
cat >"$TRASH/thr.c" <<'CEOF'
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
static void *keep[8];
static void *run(void *arg)
{
	intptr_t id = (intptr_t)arg;
	for (int i = 0; i < 20000; i++) { void *p = malloc(5000 + (size_t)(i % 7)); free(p); }
	keep[id] = malloc(9000 + (size_t)id);
	return NULL;
}
int main(void)
{
	pthread_t t[8];
	for (intptr_t i = 0; i < 8; i++) pthread_create(&t[i], NULL, run, (void *)i);
	for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
	return 0;
}
CEOF
cat >"$TRASH/own.c" <<'CEOF'
#include <stdio.h>
#include <string.h>
static char heap[1 << 20];
static size_t used;
void *malloc(size_t n) { n = (n + 15) & ~(size_t)15; if (used + n > sizeof(heap)) return NULL; used += n; return heap + used - n; }
void free(void *p) { (void)p; }
void *calloc(size_t n, size_t m) { void *p = malloc(n * m); if (p) memset(p, 0, n * m); return p; }
void *realloc(void *p, size_t n) { void *q = malloc(n); if (q && p) memcpy(q, p, n); return q; }
int main(void) { char *s = malloc(10); strcpy(s, "own"); printf("%s %s\n", s, strdup("x")); return 0; }
CEOF
# An allocator in a library after libmemprov.so in the search order (here
# a DT_NEEDED of the program): memprov's hooks must call it, the next
# definition, for the names it defines (malloc, free) and libc's for the
# others (calloc). Its counters say which malloc ran.
cat >"$TRASH/libnext.c" <<'CEOF'
#include <stddef.h>
extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
static long mallocs, frees;
void *malloc(size_t n) { mallocs++; return __libc_malloc(n); }
void free(void *p) { if (p) frees++; __libc_free(p); }
long next_mallocs(void) { return mallocs; }
long next_frees(void) { return frees; }
CEOF
cat >"$TRASH/next.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
long next_mallocs(void);
long next_frees(void);
int main(void)
{
	long m0 = next_mallocs(), f0 = next_frees();
	for (int i = 0; i < 1000; i++)
		free(malloc(24));
	char *z = calloc(3, 777);
	int ok = z && !z[0] && !z[2330];
	free(z);
	printf("%ld %ld %d\n", next_mallocs() - m0, next_frees() - f0, ok);
	return 0;
}
CEOF

test_expect_success 'build the test programs' '
	cc -O0 -fno-builtin -o edge edge.c &&
	cc -O0 -fno-builtin -pthread -o thr thr.c &&
	cc -O0 -fno-builtin -o own own.c &&
	cc -O0 -fno-builtin -shared -fPIC -o libnext.so libnext.c &&
	cc -O0 -fno-builtin -o next next.c -L. -lnext -Wl,-rpath,"$PWD"
'

# 100 + 20 + 21 + 200 + 128 + 64 + 10 + 16 = 559 (valgrind agrees); main
# returns 0, which the __libc_start_main wrapper records (how 2)
test_expect_success 'live at exit: 559 B in 8 heap blocks, 16384 B mmap; failures' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=t.trace ./edge 2>err &&
	test ! -s err &&
	rd t.trace 18446744073709551615 4611686018427387904 >out &&
	cat out &&
	grep -x "heap 8 559" out &&
	grep -x "mmap 1 16384" out &&
	grep -x "mark done" out &&
	grep -x "exit-record 0 2" out &&
	grep -x "state 1 exit 0 stop 0" out &&
	grep -x "size 18446744073709551615 1" out &&
	grep -x "size 4611686018427387904 2" out
'

test_expect_success 'exit(4) and _exit(3) are recorded with their status' '
	{ LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=e.trace ./edge exit || test $? = 4; } &&
	{ LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=u.trace ./edge _exit || test $? = 3; } &&
	rd e.trace >e.out && rd u.trace >u.out &&
	grep -x "exit-record 4 0" e.out && grep -x "state 1 exit 4 stop 0" e.out &&
	grep -x "exit-record 3 1" u.out && grep -x "state 1 exit 3 stop 0" u.out
'

test_expect_success 'SIGKILL: every committed record is in the trace' '
	{ LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=k.trace ./edge kill || test $? = 137; } &&
	rd k.trace >k.out &&
	grep -x "heap 9 1336" k.out && grep -x "state 0 exit 0 stop 0" k.out
'

test_expect_success 'fork: the child writes its own trace' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=f.%p.trace ./edge fork &&
	test $(ls f.*.trace | wc -l) = 2 &&
	for f in f.*.trace; do rd $f 222 333 >$f.out; done &&
	grep -lx "fork-record" f.*.out >parent &&
	test $(wc -l <parent) = 1 &&
	grep -x "size 333 1" $(cat parent) && grep -x "size 222 0" $(cat parent) &&
	child=$(ls f.*.out | grep -vx "$(cat parent)") &&
	grep -x "size 222 1" $child && grep -x "exit-record 7 1" $child
'

test_expect_success 'a second trace of the same name gets .1' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=same.trace ./edge &&
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=same.trace ./edge &&
	test -f same.trace && test -f same.1.trace
'

test_expect_success '8 threads: intact chunks, 160000 churn allocations, 8 leaks' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=th.trace ./thr &&
	rd th.trace 5000 5001 5002 5003 5004 5005 5006 9000 9007 >th.out &&
	s=0 && for n in 5000 5001 5002 5003 5004 5005 5006; do
		s=$((s + $(sed -n "s/^size $n //p" th.out))); done &&
	test $s = 160000 &&
	grep -x "size 9000 1" th.out && grep -x "size 9007 1" th.out
'

test_expect_success 'a program with its own malloc runs' '
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=own.trace timeout 20 ./own >out &&
	echo "own x" >expect && test_cmp expect out
'

test_expect_success 'an allocator loaded after memprov: its malloc and free run under the hooks, libc calloc' '
	./next >bare.out &&
	echo "1000 1001 1" >expect && test_cmp expect bare.out &&
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=next.trace ./next >out &&
	test_cmp expect out &&
	rd next.trace 24 2331 >nx.out &&
	grep -x "size 24 1000" nx.out && grep -x "size 2331 1" nx.out
'

test_expect_success 'MEMPROV_DISABLE=1 writes no file; a bad value warns once' '
	mkdir d && (cd d && MEMPROV_DISABLE=1 LD_PRELOAD=$MEMPROV_LIB ../edge) &&
	test -z "$(ls d)" &&
	MEMPROV_DEPTH=0 MEMPROV_OUTPUT=w.trace LD_PRELOAD=$MEMPROV_LIB /bin/true 2>err &&
	grep -c "MEMPROV_DEPTH=.0." err >n && echo 1 >one && test_cmp one n
'

test_expect_success 'ls and python3 run unchanged' '
	ls / >a.out && LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=ls.trace ls / >b.out 2>err &&
	test_cmp a.out b.out && test ! -s err &&
	LD_PRELOAD=$MEMPROV_LIB MEMPROV_OUTPUT=py.trace $PY -c "print(6*7)" >c.out 2>err &&
	echo 42 >expect && test_cmp expect c.out && test ! -s err
'

test_done
