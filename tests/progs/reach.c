/*
 * reach.c - programs whose blocks have known reachability at exit, for the
 * scan memprov makes then (tests t2215, t2220, t1045). One mode per run:
 *
 *   basic [return|exit|_exit|errx|error|handler-errx]
 *                              5 blocks of 200 B kept in a global, 3 of
 *                              100 B whose last pointer is dropped; errx
 *                              and error leave with status 3 and 4 (libc
 *                              calls exit from inside itself); handler-
 *                              errx returns 0 from main, and an atexit
 *                              handler then calls errx(5)
 *   list N                     a list of N nodes of 48 B, head dropped:
 *                              1 definitely lost, N-1 indirectly lost
 *   cycle                      two blocks pointing at each other, nothing
 *                              else at them: 1 definitely, 1 indirectly lost
 *   interior                   a global points 8 bytes into a block:
 *                              possibly lost
 *   stalelist                  a 1,000 B block dropped, the 208 B chunk
 *                              after it freed beside another: glibc's bk
 *                              pointer to that chunk (the dropped block's
 *                              last 8 bytes) stays in the other when malloc
 *                              hands it out again, to a block kept in a
 *                              global: definitely lost, as valgrind says
 *                              (stdout: whether the pointer was left)
 *   mmap                       an anonymous mapping kept (holding the only
 *                              pointer to a 300 B block), one dropped
 *   reserve                    16 pages reserved (PROT_NONE), pages 4-7
 *                              committed with MAP_FIXED (holding the only
 *                              pointer to a 500 B block), pages 10-11
 *                              unmapped, the reservation's start kept: 4
 *                              pieces and the block still reachable; 4
 *                              pages mapped, page 1 unmapped, dropped: 1
 *                              piece definitely lost, 1 indirectly
 *   placed                     a mapping at an address given with
 *                              MAP_FIXED_NOREPLACE, one with MAP_FIXED where
 *                              nothing was, each holding the only pointer
 *                              to a block (600 B, 700 B), named by their
 *                              constant addresses alone: all reachable; a
 *                              mapping of the kernel's choice dropped
 *   threads                    a 111 B block whose only pointer is in a
 *                              register of another thread, a 222 B block
 *                              whose only pointer is on another thread's
 *                              stack, 3 blocks of 100 B dropped
 *   vecthreads                 a 333 B block whose only pointer is in xmm9 of
 *                              another thread, a 555 B block whose only
 *                              pointer is in the upper half of its ymm10
 *                              (when the CPU has AVX), 3 blocks of 100 B
 *                              dropped
 *   altstack                   a 444 B block whose only pointer is on main's
 *                              stack; exit() from a signal handler running
 *                              on an alternate stack (a heap block)
 *   seccomp                    threads, under an allow-all seccomp filter
 *   atexit                     basic, then an atexit handler keeps 777 B
 *                              (still reachable: the scan comes after it)
 *   longmaps FILE N            basic, with FILE mapped N times below the
 *                              program and once more, written, holding the
 *                              only pointer to a 640 B block
 *   forget [exit]              basic, then an atexit handler drops the 5
 *                              kept pointers: 8 blocks definitely lost, as
 *                              valgrind and LeakSanitizer say (they look
 *                              after the exit handlers)
 *   forgetdtor [exit]          the same, from a destructor of the program
 *   big MIB                    MIB blocks of 1 MiB kept, filled with data
 *   churnkeep N                N blocks of 16..4096 B, every other one kept
 *   handoff N                  4 threads pass N blocks each through a
 *                              shared pool, free and resize each other's;
 *                              each keeps 25, drops 3
 *   spread N                   N blocks, 1,000 live at a time, many distinct
 *                              addresses; 5 kept at the end
 *   xthreads N [park]          8 threads, each replacing blocks of its own
 *                              2,000 (free then malloc, or realloc) and
 *                              passing blocks to the others through a pool
 *                              of 4,096, N rounds: 20,096 blocks live at
 *                              exit, all in globals; park: the threads are
 *                              still running when main exits
 *   inreg HOW [drop]           a 666 B block whose only pointer is in r13 (a
 *                              callee-saved register) when the program
 *                              calls HOW (exit, _exit or quick_exit);
 *                              drop: r13 cleared first
 *   lastthread                 main leaves by pthread_exit, the other
 *                              thread runs basic and returns: libc's
 *                              thread start code calls exit(0)
 *   mainleft                   main leaves by pthread_exit; once it is a
 *                              zombie another thread keeps 8 MiB (touched)
 *                              and runs basic, then exit()
 *   latefree N                 main keeps 20,000 blocks, 6 threads make N
 *                              pairs of allocations and frees each, then
 *                              main frees 10,000 of its blocks at the end
 *   forkbusy N                 4 threads replace blocks of a table of 8,000
 *                              while main forks N children (20 ms apart),
 *                              each of which replaces 5,000 and exits
 *   sbrk [down]                64 KiB taken from the break with sbrk, 100
 *                              blocks of 48 B kept only there (sbrk_keep),
 *                              one of 777 B dropped (sbrk_lost); down: the
 *                              64 KiB given back first (the 100 are lost)
 *   chroot DIR                 a 100 B block kept in a global (chroot_keep),
 *                              then chroot into DIR (no /proc there), exit:
 *                              still reachable. Status 3: chroot refused
 *   uring                      a 640 B block whose only pointer is the
 *                              user_data of an io_uring submission entry,
 *                              in the ring the kernel maps for the program:
 *                              still reachable. Status 3: no io_uring here
 *   fakeheap                   8 KiB mapped at the 64 MiB-aligned address
 *                              below the program's data, shaped like the
 *                              first heap of one of glibc's arenas; a
 *                              900 B block kept in a global above it
 *                              (fake_keep): still reachable. Status 3:
 *                              the program itself lies at that address
 */
#include <err.h>
#include <error.h>
#include <pthread.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void *keep[8];
static void *keep_interior;
static void *keep_map;
static void *keep_left;
static void **big;
static volatile int ready, stop;

struct node {
	struct node *next;
	char pad[40];
};

/* Overwrite the dead stack below the caller: no stale copy of a pointer. */
static __attribute__((noinline)) void scrub(void)
{
	volatile char buf[64 << 10];

	memset((char *)buf, 0, sizeof(buf));
}

static __attribute__((noinline)) void drop3(void)
{
	int i;

	for (i = 0; i < 3; i++) {
		char *p = malloc(100); /* DROP-LINE */

		memset(p, 1, 100);
	}
}

static void errx_handler(void)
{
	errx(5, "leaving by errx in an exit handler");
}

static void basic(const char *how)
{
	int i;

	for (i = 0; i < 5; i++)
		keep[i] = malloc(200); /* KEEP-LINE */
	drop3();
	scrub();
	if (!strcmp(how, "exit"))
		exit(0);
	if (!strcmp(how, "_exit"))
		_exit(0);
	if (!strcmp(how, "errx"))
		errx(3, "leaving by errx");
	if (!strcmp(how, "error"))
		error(4, 0, "leaving by error");
	if (!strcmp(how, "handler-errx"))
		atexit(errx_handler);
}

static __attribute__((noinline)) void list(int n)
{
	struct node *head = NULL;
	int i;

	for (i = 0; i < n; i++) {
		struct node *x = malloc(sizeof(*x)); /* LIST-LINE */

		memset(x, 0, sizeof(*x));
		x->next = head;
		head = x;
	}
	head = NULL;
}

static __attribute__((noinline)) void cycle(void)
{
	struct node *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));

	memset(a, 0, sizeof(*a));
	memset(b, 0, sizeof(*b));
	a->next = b;
	b->next = a;
}

static void interior(void)
{
	char *p = malloc(64);

	keep_interior = p + 8;
}

static void *stale_keep[9];
static char *stale_name;

/* 1 when stale_name holds the address of the chunk after the dropped block */
static __attribute__((noinline)) int stalelist_make(void)
{
	void *t[7], *p, *f1, *f2;
	int i, left;

	for (i = 0; i < 7; i++)
		t[i] = malloc(200);
	p = malloc(1000); /* STALE-LINE */
	memset(p, 1, 1000);
	f1 = malloc(200); /* right after p: its header is p + 992 */
	stale_keep[7] = malloc(16);
	f2 = malloc(200);
	stale_keep[8] = malloc(16);
	for (i = 0; i < 7; i++)
		free(t[i]); /* the tcache for 208 B chunks is full */
	free(f2);
	free(f1);
	free(malloc(3000)); /* sorts f1 and f2 into their small bin: f2's bk is f1 */
	for (i = 0; i < 7; i++)
		stale_keep[i] = malloc(200); /* the tcache empty again */
	stale_name = malloc(200); /* f2, from the small bin, with its bk */
	left = ((void **)stale_name)[1] == (char *)p + 992;
	strcpy(stale_name, "kept");
	return left;
}

static void stalelist(void)
{
	int left = stalelist_make();

	scrub();
	printf("stale list pointer %s\n", left ? "left" : "not left");
}

static void maps(void)
{
	void **m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void *lost = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m == MAP_FAILED || lost == MAP_FAILED)
		exit(2);
	m[3] = malloc(300);
	keep_map = m;
}

/*
 * Mappings at addresses the program gives, and names by those constants
 * alone: one with MAP_FIXED_NOREPLACE holding the only pointer to a
 * 600 B block, one with MAP_FIXED where nothing was mapped holding the
 * only pointer to a 700 B block; and a mapping of the kernel's choice,
 * dropped (4096 B definitely lost).
 */
#define PLACED_A ((void **)0x200000000000ul)
#define PLACED_B ((void **)0x200000100000ul)

static void placed(void)
{
	void *lost = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (mmap(PLACED_A, 8192, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != PLACED_A ||
	    mmap(PLACED_B, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0) != PLACED_B || lost == MAP_FAILED)
		exit(2);
	PLACED_A[1] = malloc(600);
	PLACED_B[2] = malloc(700);
}

static void *chroot_keep;

static void in_jail(const char *dir)
{
	chroot_keep = malloc(100);
	if (chroot(dir) || chdir("/"))
		exit(3);
}

static void uring(void)
{
	struct io_uring_params p;
	struct io_uring_sqe *sqe;
	int fd;

	memset(&p, 0, sizeof(p));
	fd = (int)syscall(SYS_io_uring_setup, 8, &p);
	if (fd < 0)
		exit(3);
	sqe = mmap(NULL, p.sq_entries * sizeof(*sqe), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_POPULATE, fd, IORING_OFF_SQES);
	if (sqe == MAP_FAILED)
		exit(3);
	sqe[1].user_data = (uint64_t)(uintptr_t)malloc(640);
}

static void *fake_keep;

static void fakeheap(void)
{
	uintptr_t a = (uintptr_t)&fake_keep & ~(((uintptr_t)64 << 20) - 1), ar = a + 32, j;
	uint64_t *h = mmap((void *)a, 8192, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	if (h != (void *)a)
		exit(3);
	h[0] = ar;   /* heap_info: the arena (right after it), prev, size, mprotect_size */
	h[2] = h[3] = 4096;
	/* the malloc_state: its top chunk in this heap, every bin empty (linked to itself) */
	*(uint64_t *)(ar + 96) = a + 4096;
	for (j = 0; j < 127; j++) {
		*(uint64_t *)(ar + 112 + 16 * j) = ar + 96 + 16 * j;
		*(uint64_t *)(ar + 120 + 16 * j) = ar + 96 + 16 * j;
	}
	fake_keep = malloc(900);
}

static void *keep_reserve;

static void reserve(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	char *r = mmap(NULL, 16 * pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *l = mmap(NULL, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	void **c;

	if (r == MAP_FAILED || l == MAP_FAILED)
		exit(2);
	c = mmap(r + 4 * pg, 4 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		 -1, 0);
	if (c == MAP_FAILED || munmap(r + 10 * pg, 2 * pg) || munmap(l + pg, pg))
		exit(2);
	c[7] = malloc(500);
	keep_reserve = r;
	__asm__ volatile("" : : "r"(l) : "memory");
}

/* Keeps its block's address only in r12, spinning until the process exits. */
static void *reg_thread(void *arg)
{
	uintptr_t hidden = (uintptr_t)malloc(111) ^ 0x5555555555555555ull;

	(void)arg;
	scrub();
	__asm__ volatile("movq %0, %%r12\n\t"
			 "xorq %1, %%r12\n\t"
			 "movl $1, %%eax\n\t"
			 "lock xaddl %%eax, (%2)\n\t"
			 "1: pause\n\t"
			 "movl (%3), %%eax\n\t"
			 "testl %%eax, %%eax\n\t"
			 "jz 1b\n\t"
			 "xorq %%r12, %%r12"
			 :
			 : "r"(hidden), "r"(0x5555555555555555ull), "r"(&ready), "r"(&stop)
			 : "r12", "rax", "memory");
	return NULL;
}

/*
 * Keeps one block's address only in xmm9, and another's only in the upper
 * half of ymm10 (AVX), spinning until the process exits. The addresses
 * are never in memory, nor in a general-purpose register once it spins.
 */
static void *vec_thread(void *arg)
{
	uintptr_t key = 0x5555555555555555ull;
	uintptr_t h1 = (uintptr_t)malloc(333) ^ key; /* VEC-XMM */
	uintptr_t h2 = __builtin_cpu_supports("avx") ? (uintptr_t)malloc(555) ^ key : key; /* VEC-YMM */

	(void)arg;
	scrub();
	__asm__ volatile("movq %0, %%rax\n\t"
			 "xorq %2, %%rax\n\t"
			 "movq %%rax, %%xmm9\n\t"
			 "xorl %%eax, %%eax\n\t"
			 : : "r"(h1), "r"(h2), "r"(key) : "rax", "xmm9", "memory");
	if (__builtin_cpu_supports("avx"))
		__asm__ volatile("movq %0, %%rax\n\t"
				 "xorq %1, %%rax\n\t"
				 "vmovq %%rax, %%xmm8\n\t"
				 "vperm2f128 $0x08, %%ymm8, %%ymm8, %%ymm10\n\t"
				 "vpxor %%xmm8, %%xmm8, %%xmm8\n\t"
				 "xorl %%eax, %%eax"
				 : : "r"(h2), "r"(key) : "rax", "xmm8", "xmm10", "memory");
	h1 = h2 = 0;
	__asm__ volatile("movl $1, %%eax\n\t"
			 "lock xaddl %%eax, (%0)\n\t"
			 "1: pause\n\t"
			 "movl (%1), %%eax\n\t"
			 "testl %%eax, %%eax\n\t"
			 "jz 1b\n\t"
			 "pxor %%xmm9, %%xmm9\n\t"
			 "pxor %%xmm10, %%xmm10"
			 : : "r"(&ready), "r"(&stop) : "rax", "xmm9", "xmm10", "memory");
	return NULL;
}

static void vecthreads(void)
{
	pthread_t a;

	if (pthread_create(&a, NULL, vec_thread, NULL))
		exit(2);
	free(malloc(1));
	drop3();
	scrub();
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < 1)
		sched_yield();
	exit(0); /* the thread still holds its blocks */
}

/* Keeps its block's address only in a local variable, sleeping. */
/*
 * graph N: a list of N blocks of assorted sizes reachable from a global,
 * each holding the next one's address in its last whole word; a lost
 * list of 100 (one definitely lost, 99 indirectly); a block pointed to
 * only from inside (possibly lost); and an idle thread, which a tracer
 * keeps the scan from stopping: every block is then read through a copy.
 */
static void *graph_root, *graph_inside;

static size_t graph_size(long i)
{
	return 16 + (size_t)((i * 37) % 700);
}

static __attribute__((noinline)) void *graph_keep(long n)
{
	char *first = NULL, *prev = NULL;
	long i;

	for (i = 0; i < n; i++) {
		size_t size = graph_size(i);
		char *p = malloc(size);

		memset(p, 0, size);
		if (prev)
			memcpy(prev + (graph_size(i - 1) & ~(size_t)7) - 8, &p, sizeof(p));
		else
			first = p;
		prev = p;
	}
	return first;
}

static __attribute__((noinline)) void graph_lose(void)
{
	struct node *head = NULL;
	int i;

	for (i = 0; i < 100; i++) {
		struct node *x = malloc(sizeof(*x));

		memset(x, 0, sizeof(*x));
		x->next = head;
		head = x;
	}
	head = NULL;
}

static __attribute__((noinline)) void graph_inner(void)
{
	char *p = malloc(64);

	graph_inside = p + 8;
}

static void *graph_idle(void *arg)
{
	for (;;)
		pause();
	return arg;
}

static void graph(long n)
{
	pthread_t t;

	if (pthread_create(&t, NULL, graph_idle, NULL))
		exit(2);
	graph_root = graph_keep(n);
	graph_lose();
	graph_inner();
	scrub();
}

static void *stack_thread(void *arg)
{
	void *volatile p = malloc(222);

	(void)arg;
	scrub();
	__atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
	while (!stop)
		usleep(1000);
	return p;
}

static void threads(void)
{
	pthread_t a, b;

	if (pthread_create(&a, NULL, reg_thread, NULL) || pthread_create(&b, NULL, stack_thread, NULL))
		exit(2);
	free(malloc(1)); /* the main thread's tcache is set up before the drop */
	drop3();
	scrub();
	while (__atomic_load_n(&ready, __ATOMIC_SEQ_CST) < 2)
		sched_yield();
	exit(0); /* the threads still hold their blocks */
}

/* A filter that allows every call: the process is "sandboxed" all the same. */
static void allow_all_filter(void)
{
	struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { 1, &allow };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0))
		exit(2);
}

static void late(void)
{
	keep[7] = malloc(777);
}

static int forget_in_dtor;

static void forget(void)
{
	memset(keep, 0, sizeof(keep));
}

static __attribute__((destructor)) void forget_dtor(void)
{
	if (forget_in_dtor)
		forget();
}

static void on_usr1(int sig)
{
	(void)sig;
	exit(0);
}

static __attribute__((noinline)) void altstack(void)
{
	void *alt = malloc(64 << 10);
	void *volatile p = malloc(444);
	stack_t ss = { .ss_sp = alt, .ss_size = 64 << 10 };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sa.sa_flags = SA_ONSTACK;
	if (!alt || sigaltstack(&ss, NULL) || sigaction(SIGUSR1, &sa, NULL))
		exit(2);
	memset(alt, 0, 64 << 10);
	scrub();
	/* no copy of p in a vector register the signal frame would keep */
	__asm__ volatile("pxor %%xmm0, %%xmm0\n\tpxor %%xmm1, %%xmm1\n\tpxor %%xmm2, %%xmm2\n\t"
			 "pxor %%xmm3, %%xmm3\n\tpxor %%xmm4, %%xmm4\n\tpxor %%xmm5, %%xmm5\n\t"
			 "pxor %%xmm6, %%xmm6\n\tpxor %%xmm7, %%xmm7\n\tpxor %%xmm8, %%xmm8\n\t"
			 "pxor %%xmm9, %%xmm9\n\tpxor %%xmm10, %%xmm10\n\tpxor %%xmm11, %%xmm11\n\t"
			 "pxor %%xmm12, %%xmm12\n\tpxor %%xmm13, %%xmm13\n\t"
			 "pxor %%xmm14, %%xmm14\n\tpxor %%xmm15, %%xmm15" ::: "memory");
	raise(SIGUSR1);
	free(p);
}

static void bigheap(long mib)
{
	long i;

	big = malloc(sizeof(*big) * (size_t)mib);
	for (i = 0; i < mib; i++) {
		big[i] = malloc(1 << 20);
		memset(big[i], (int)(i & 0x7f), 1 << 20);
	}
}

static void churnkeep(long n)
{
	long i;

	big = calloc((size_t)n, sizeof(*big));
	for (i = 0; i < n; i++) {
		void *p = malloc(16 + (size_t)(i * 7919 % 4081));

		if (i % 2)
			free(p);
		else
			big[i] = p;
	}
}

/*
 * Blocks handed between threads: each of 4 threads allocates blocks of a
 * few sizes (addresses reused all the time), passes them through a shared
 * pool and frees (some after a realloc) blocks other threads allocated;
 * then each keeps 25 blocks of 50 B (still reachable) and drops 3 (drop3).
 * The pool is emptied before exit.
 */
#define HO_THREADS 4
#define HO_KEEP 25
#define HO_POOL 64
static void *ho_pool[HO_POOL];
static unsigned ho_len;
static long ho_rounds;
static pthread_mutex_t ho_lock = PTHREAD_MUTEX_INITIALIZER;
static void *ho_keep[HO_THREADS][HO_KEEP];

static __attribute__((noinline)) void handoff_keep(long t)
{
	int i;

	for (i = 0; i < HO_KEEP; i++)
		ho_keep[t][i] = malloc(50);
}

static void *handoff_thread(void *arg)
{
	long t = (long)arg, i;

	for (i = 0; i < ho_rounds; i++) {
		void *p = malloc(16 + (size_t)((i * 31 + t * 7) % 200)), *q = NULL;

		pthread_mutex_lock(&ho_lock);
		if (ho_len == HO_POOL || (ho_len && (i + t) % 3 == 0)) {
			unsigned k = (unsigned)((i * 13 + t) % ho_len);

			q = ho_pool[k];
			ho_pool[k] = ho_pool[--ho_len];
		}
		ho_pool[ho_len++] = p;
		pthread_mutex_unlock(&ho_lock);
		if (q && i % 5 == 0)
			q = realloc(q, 300 + (size_t)(i % 64));
		free(q);
	}
	handoff_keep(t);
	drop3();
	return NULL;
}

static void handoff(long rounds)
{
	pthread_t th[HO_THREADS];
	long t;

	ho_rounds = rounds;
	for (t = 0; t < HO_THREADS; t++)
		if (pthread_create(&th[t], NULL, handoff_thread, (void *)t))
			exit(2);
	for (t = 0; t < HO_THREADS; t++)
		pthread_join(th[t], NULL);
	while (ho_len)
		free(ho_pool[--ho_len]);
}

#define XT_THREADS 8
#define XT_OWN 2000
#define XT_POOL 4096
static void *xt_own[XT_THREADS][XT_OWN];
static void *xt_pool[XT_POOL];
static unsigned xt_len;
static long xt_rounds;
static int xt_park, xt_done;
static pthread_mutex_t xt_lock = PTHREAD_MUTEX_INITIALIZER;

static void *xthreads_thread(void *arg)
{
	long t = (long)arg, i;
	unsigned long x = 88172645463325252ull ^ (unsigned long)(t * 7919);

	for (i = 0; i < xt_rounds; i++) {
		unsigned k;
		void *p, *q = NULL;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = (unsigned)((x >> 8) % XT_OWN);
		if ((x >> 30) % 4 == 0) {
			p = realloc(xt_own[t][k], 16 + (size_t)((x >> 40) % 2000));
			if (p)
				xt_own[t][k] = p;
		} else {
			free(xt_own[t][k]);
			xt_own[t][k] = malloc(16 + (size_t)((x >> 40) % 3000));
		}
		p = malloc(16 + (size_t)((x >> 20) % 500));
		pthread_mutex_lock(&xt_lock);
		if (xt_len == XT_POOL || (xt_len && (x >> 50) % 2)) {
			unsigned j = (unsigned)((x >> 12) % xt_len);

			q = xt_pool[j];
			xt_pool[j] = xt_pool[--xt_len];
		}
		xt_pool[xt_len++] = p;
		pthread_mutex_unlock(&xt_lock);
		if (q && (x >> 45) % 3 == 0) {
			void *r = realloc(q, 20 + (size_t)((x >> 33) % 700));

			if (r)
				q = r;
		}
		free(q);
	}
	__atomic_add_fetch(&xt_done, 1, __ATOMIC_SEQ_CST);
	while (xt_park)
		pause();
	return NULL;
}

static void xthreads(long rounds, int park)
{
	pthread_t th[XT_THREADS];
	long t;

	xt_rounds = rounds;
	xt_park = park;
	for (t = 0; t < XT_THREADS; t++)
		if (pthread_create(&th[t], NULL, xthreads_thread, (void *)t))
			exit(2);
	if (park) {
		while (__atomic_load_n(&xt_done, __ATOMIC_SEQ_CST) < XT_THREADS)
			usleep(1000);
		return;
	}
	for (t = 0; t < XT_THREADS; t++)
		pthread_join(th[t], NULL);
}

#define LF_KEEP 20000
#define LF_THREADS 6
static void *lf_keep[LF_KEEP];
static long lf_rounds;

static void *latefree_thread(void *arg)
{
	unsigned long x = 0x2545f4914f6cdd1dull ^ (unsigned long)(long)arg;
	long i;

	for (i = 0; i < lf_rounds; i++) {
		void *p, *q;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p = malloc(8 + (size_t)(x % 128));
		q = malloc(8 + (size_t)((x >> 20) % 128));
		free(p);
		free(q);
	}
	return NULL;
}

/*
 * Main's last frees go to the chunk it took before the threads started:
 * read early, stamped last, they wait for the horizon until the end.
 */
static void latefree(long n)
{
	pthread_t th[LF_THREADS];
	long t;
	int i;

	lf_rounds = n;
	for (i = 0; i < LF_KEEP; i++)
		lf_keep[i] = malloc(48);
	for (t = 0; t < LF_THREADS; t++)
		if (pthread_create(&th[t], NULL, latefree_thread, (void *)t))
			exit(2);
	for (t = 0; t < LF_THREADS; t++)
		pthread_join(th[t], NULL);
	for (i = 0; i < LF_KEEP; i += 2) {
		free(lf_keep[i]);
		lf_keep[i] = NULL;
	}
}

#define FB_THREADS 4
#define FB_PER 2000
static void *fb_tab[FB_THREADS * FB_PER];
static volatile int fb_stop;

static void *forkbusy_thread(void *arg)
{
	long t = (long)arg;
	unsigned long x = 0x9e3779b97f4a7c15ull ^ (unsigned long)t;

	while (!fb_stop) {
		unsigned long k;
		void *p;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = (unsigned long)t * FB_PER + x % FB_PER;
		p = malloc(8 + (size_t)((x >> 40) % 100));
		free(__atomic_exchange_n(&fb_tab[k], p, __ATOMIC_ACQ_REL));
	}
	return NULL;
}

/*
 * The child waits for the parent's word that fork returned: its FORK
 * record is written by then, so the child's scan finds it.
 */
static void forkbusy(int n)
{
	pthread_t th[FB_THREADS];
	long t;
	int c, i;

	for (i = 0; i < FB_THREADS * FB_PER; i++)
		fb_tab[i] = malloc(16);
	for (t = 0; t < FB_THREADS; t++)
		if (pthread_create(&th[t], NULL, forkbusy_thread, (void *)t))
			exit(2);
	for (c = 0; c < n; c++) {
		int fd[2];
		char b = 0;
		pid_t pid;

		usleep(20000);
		if (pipe(fd))
			exit(2);
		pid = fork();
		if (pid < 0)
			exit(2);
		if (!pid) {
			if (read(fd[0], &b, 1) != 1)
				_exit(2);
			for (i = 0; i < 5000; i++) {
				int k = (i * 7919) % (FB_THREADS * FB_PER);

				free(fb_tab[k]);
				fb_tab[k] = malloc(24);
			}
			exit(0);
		}
		if (write(fd[1], &b, 1) != 1)
			exit(2);
		close(fd[0]);
		close(fd[1]);
	}
	while (wait(NULL) > 0)
		;
	fb_stop = 1;
	for (t = 0; t < FB_THREADS; t++)
		pthread_join(th[t], NULL);
}

/*
 * n blocks of 16 B to 4 KiB, at most 1,000 live at a time, each freeing
 * a block chosen at random: the heap's free lists hand out many distinct
 * addresses (tens of thousands). All freed, then 5 kept.
 */
static void spread(long n)
{
	static void *win[1000];
	unsigned long x = 12345;
	long i;

	for (i = 0; i < n; i++) {
		unsigned k;

		x = x * 6364136223846793005ul + 1442695040888963407ul;
		k = (unsigned)(x >> 33) % 1000;
		free(win[k]);
		win[k] = malloc(16 + (size_t)((x >> 20) % 4081));
	}
	for (i = 0; i < 1000; i++)
		free(win[i]);
	for (i = 0; i < 5; i++)
		keep[i] = malloc(200); /* SPREAD-KEEP */
}

/*
 * longmaps FILE N: FILE (a path of some thousand characters) mapped N
 * times below the program, so that its lines open /proc/self/maps and the
 * scan parses past them to the program's own; once more privately and
 * writable, its first page holding the only pointer to a 640 B block.
 */
static void longmaps(const char *file, int n)
{
	int fd = open(file, O_RDWR), i;
	char *w;

	if (fd < 0 || ftruncate(fd, 8192))
		exit(3);
	for (i = 0; i < n; i++)
		if (mmap((void *)(0x10000000ul + 0x4000ul * (unsigned long)i), 4096, PROT_READ,
			 MAP_PRIVATE, fd, 0) == MAP_FAILED)
			exit(3);
	w = mmap((void *)(0x10000000ul + 0x4000ul * (unsigned long)n), 8192,
		 PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (w == MAP_FAILED)
		exit(3);
	close(fd);
	*(void **)w = malloc(640); /* LONGMAPS-LINE */
	basic("return");
}

/* Is the task whose stat file is path a zombie (or gone)? */
static int zombie(const char *path)
{
	char buf[512], *p;
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return 1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	p = strrchr(buf, ')');
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

static void *mainleft_thread(void *arg)
{
	char path[64];
	int i;

	(void)arg;
	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)getpid());
	for (i = 0; i < 5000 && !zombie(path); i++)
		usleep(1000);
	if (i == 5000)
		exit(4);
	keep_left = malloc(8 << 20);
	memset(keep_left, 1, 8 << 20);
	basic("exit");
	return NULL;
}

static void *lastthread_thread(void *arg)
{
	(void)arg;
	basic("return");
	return NULL;
}

static void lastthread(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, lastthread_thread, NULL))
		exit(3);
	pthread_exit(NULL);
}

static void mainleft(void)
{
	pthread_t t;

	if (pthread_create(&t, NULL, mainleft_thread, NULL))
		exit(3);
	pthread_exit(NULL);
}

/*
 * malloc(666), its pointer moved to r13 and no copy left in memory the
 * scan reads (what malloc's frames left lies below the stack pointer),
 * then HOW(0); all in assembly, so that the compiler keeps no copy.
 */
static void inreg(const char *how, int drop)
{
	void (*fn)(int) = !strcmp(how, "_exit") ? _exit : !strcmp(how, "quick_exit") ? quick_exit : exit;

	__asm__ volatile("andq $-16, %%rsp\n\t" /* aligned for the calls; never returns */
			 "movl $666, %%edi\n\t"
			 "call malloc@PLT\n\t"
			 "movq %%rax, %%r13\n\t"
			 "xorl %%eax, %%eax\n\t"
			 "testl %k1, %k1\n\t"
			 "jz 1f\n\t"
			 "xorl %%r13d, %%r13d\n"
			 "1:\n\t"
			 "xorl %%edi, %%edi\n\t"
			 "call *%0\n\t"
			 :
			 : "r"(fn), "r"(drop)
			 : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r13",
			   "memory", "cc");
	abort();
}

static __attribute__((noinline)) void *sbrk_keep(void)
{
	return malloc(48);
}

static __attribute__((noinline)) void *sbrk_lost(void)
{
	return malloc(777);
}

static void sbrk_mode(int down)
{
	void **area;
	int i;

	/* room in glibc's top chunk first: malloc does not move the break
	 * past the program's part (which giving it back would then cut) */
	free(malloc(100 << 10));
	area = sbrk(64 << 10);
	if (area == (void *)-1)
		exit(3);
	for (i = 0; i < 100; i++)
		area[i] = sbrk_keep();
	if (!sbrk_lost())
		exit(3);
	if (down && sbrk(-(64 << 10)) == (void *)-1)
		exit(3);
	scrub();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";

	if (!strcmp(mode, "basic"))
		basic(argc > 2 ? argv[2] : "return");
	else if (!strcmp(mode, "sbrk"))
		sbrk_mode(argc > 2 && !strcmp(argv[2], "down"));
	else if (!strcmp(mode, "inreg") && argc > 2)
		inreg(argv[2], argc > 3 && !strcmp(argv[3], "drop"));
	else if (!strcmp(mode, "lastthread"))
		lastthread();
	else if (!strcmp(mode, "mainleft"))
		mainleft();
	else if (!strcmp(mode, "list"))
		list(argc > 2 ? atoi(argv[2]) : 10);
	else if (!strcmp(mode, "cycle"))
		cycle();
	else if (!strcmp(mode, "graph"))
		graph(argc > 2 ? atol(argv[2]) : 1000);
	else if (!strcmp(mode, "interior"))
		interior();
	else if (!strcmp(mode, "stalelist"))
		stalelist();
	else if (!strcmp(mode, "mmap"))
		maps();
	else if (!strcmp(mode, "reserve"))
		reserve();
	else if (!strcmp(mode, "placed"))
		placed();
	else if (!strcmp(mode, "chroot") && argc > 2)
		in_jail(argv[2]);
	else if (!strcmp(mode, "uring"))
		uring();
	else if (!strcmp(mode, "fakeheap"))
		fakeheap();
	else if (!strcmp(mode, "threads"))
		threads();
	else if (!strcmp(mode, "vecthreads"))
		vecthreads();
	else if (!strcmp(mode, "atexit")) {
		atexit(late);
		basic("return");
	} else if (!strcmp(mode, "forget")) {
		atexit(forget);
		basic(argc > 2 ? argv[2] : "return");
	} else if (!strcmp(mode, "forgetdtor")) {
		forget_in_dtor = 1;
		basic(argc > 2 ? argv[2] : "return");
	} else if (!strcmp(mode, "seccomp")) {
		allow_all_filter();
		threads();
	} else if (!strcmp(mode, "altstack"))
		altstack();
	else if (!strcmp(mode, "big"))
		bigheap(argc > 2 ? atol(argv[2]) : 1024);
	else if (!strcmp(mode, "spread"))
		spread(argc > 2 ? atol(argv[2]) : 300000);
	else if (!strcmp(mode, "handoff"))
		handoff(argc > 2 ? atol(argv[2]) : 20000);
	else if (!strcmp(mode, "xthreads"))
		xthreads(argc > 2 ? atol(argv[2]) : 50000, argc > 3 && !strcmp(argv[3], "park"));
	else if (!strcmp(mode, "latefree"))
		latefree(argc > 2 ? atol(argv[2]) : 100000);
	else if (!strcmp(mode, "forkbusy"))
		forkbusy(argc > 2 ? atoi(argv[2]) : 4);
	else if (!strcmp(mode, "longmaps") && argc > 3)
		longmaps(argv[2], atoi(argv[3]));
	else if (!strcmp(mode, "churnkeep"))
		churnkeep(argc > 2 ? atol(argv[2]) : 100000);
	else
		return 2;
	scrub();
	return 0;
}
