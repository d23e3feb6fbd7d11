/*
 * stress.c - stress programs for libmemprov.so (tests/t9*.sh). Each mode
 * keeps exact count of the blocks it still holds, leaves them live, and
 * prints "live_blocks=N live_bytes=B" (its own allocations only: every
 * one is made in this file, so a report's sites whose innermost frame is
 * in stress.c must add up to the same figures).
 *
 *   stress threads T OPS       T threads at once, OPS mixed operations
 *                              each, every thread replaced by a new one
 *                              every OPS/8 operations (threads come and go)
 *   stress fork N              N children forked one after another while
 *                              4 threads allocate; child i keeps i+1
 *                              blocks and exits with status i % 7
 *   stress signal N            SIGALRM every 200 us (setitimer) whose
 *                              handler mallocs and frees, while the main
 *                              loop does N mmap/munmap operations
 *   stress cancel T            T threads in allocation loops, cancelled
 *                              (deferred) at pthread_testcancel
 *   stress longjmp DEPTH N     N times: recurse DEPTH levels allocating at
 *                              each, longjmp out from the deepest
 *   stress exhaust             1 MiB mallocs until one fails (run it under
 *                              prlimit --as), then 64 KiB ones until one
 *                              fails; prints successes and failures
 *   stress steps T FILE N      T threads; after each of N steps, every
 *                              thread's allocations of that step are done
 *                              and "step S blocks=B bytes=Y" is appended to
 *                              FILE and flushed (for SIGKILL tests)
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#define SLOTS 64

static atomic_long live_blocks, live_bytes;

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

static void count(long blocks, long bytes)
{
	atomic_fetch_add(&live_blocks, blocks);
	atomic_fetch_add(&live_bytes, bytes);
}

static void print_live(void)
{
	printf("live_blocks=%ld live_bytes=%ld\n", atomic_load(&live_blocks),
	       atomic_load(&live_bytes));
	fflush(stdout);
}

/* ---- threads: T at once, each replaced after a share of its work ---- */

struct block {
	void *p;
	size_t n;
};

struct worker {
	pthread_t t;
	unsigned seed;
	long ops_left;    /* operations this slot still has to do */
	long per_thread;  /* operations one thread does before it exits */
	struct block slot[SLOTS];
};

static void slot_free(struct block *b)
{
	if (!b->p)
		return;
	free(b->p);
	count(-1, -(long)b->n);
	b->p = NULL;
}

static void one_op(struct worker *w)
{
	unsigned r = next_rand(&w->seed);
	struct block *b = &w->slot[r % SLOTS];
	size_t n = 1 + (r >> 6) % 2000;
	void *p;

	switch ((r >> 3) % 6) {
	case 0:
	case 1:
		slot_free(b);
		p = malloc(n);
		break;
	case 2:
		slot_free(b);
		p = calloc(1, n);
		break;
	case 3:
		if (!b->p)
			return;
		p = realloc(b->p, n);
		if (!p)
			abort();
		count(0, (long)n - (long)b->n);
		b->p = p;
		b->n = n;
		return;
	case 4:
		slot_free(b);
		if (posix_memalign(&p, 64, n))
			p = NULL;
		break;
	default:
		slot_free(b);
		return;
	}
	if (!p)
		abort();
	b->p = p;
	b->n = n;
	count(1, (long)n);
}

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	long n = w->ops_left < w->per_thread ? w->ops_left : w->per_thread;

	while (n--)
		one_op(w);
	return NULL;
}

static int mode_threads(int nt, long ops)
{
	struct worker *w = calloc((size_t)nt, sizeof(*w));
	int i, running;

	count(1, (long)((size_t)nt * sizeof(*w)));
	for (i = 0; i < nt; i++) {
		w[i].seed = 1234u + (unsigned)i;
		w[i].ops_left = ops;
		w[i].per_thread = ops / 8 > 0 ? ops / 8 : 1;
		pthread_create(&w[i].t, NULL, worker_run, &w[i]);
	}
	do {
		running = 0;
		for (i = 0; i < nt; i++) {
			if (!w[i].ops_left)
				continue;
			pthread_join(w[i].t, NULL);
			w[i].ops_left -= w[i].ops_left < w[i].per_thread ? w[i].ops_left
									  : w[i].per_thread;
			if (w[i].ops_left) {
				pthread_create(&w[i].t, NULL, worker_run, &w[i]);
				running++;
			}
		}
	} while (running);
	print_live();
	return 0;
}

/* ---- fork storm ---- */

static atomic_int stop_bg;

static void *bg_alloc(void *arg)
{
	struct worker *w = arg;

	while (!atomic_load(&stop_bg))
		one_op(w);
	return NULL;
}

static int mode_fork(int n)
{
	struct worker *w = calloc(4, sizeof(*w));
	int i, bad = 0;

	count(1, 4 * (long)sizeof(*w));
	for (i = 0; i < 4; i++) {
		w[i].seed = 99u + (unsigned)i;
		pthread_create(&w[i].t, NULL, bg_alloc, &w[i]);
	}
	for (i = 0; i < n; i++) {
		pid_t pid;
		int st, j;

		fflush(stdout);
		pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			/* the child has one thread; the parent's blocks are not its own */
			atomic_store(&live_blocks, 0);
			atomic_store(&live_bytes, 0);
			for (j = 0; j <= i; j++) {
				void *p = malloc(100 + (size_t)j);

				if (!p)
					_exit(100);
				count(1, 100 + j);
				free(malloc(50));
			}
			printf("child %d ", (int)getpid());
			print_live();
			exit(i % 7);
		}
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != i % 7) {
			printf("child %d: bad status %#x\n", (int)pid, st);
			bad = 1;
		}
	}
	atomic_store(&stop_bg, 1);
	for (i = 0; i < 4; i++)
		pthread_join(w[i].t, NULL);
	printf("parent %d ", (int)getpid());
	print_live();
	return bad;
}

/* ---- a signal handler that allocates ---- */

static volatile sig_atomic_t handler_calls;

static void on_alarm(int sig)
{
	int saved = errno;
	void *p = malloc(48);

	(void)sig;
	if (p) {
		memset(p, 1, 48);
		free(p);
	}
	handler_calls++;
	errno = saved;
}

static int mode_signal(long n)
{
	struct itimerval it = { { 0, 200 }, { 0, 200 } };
	struct sigaction sa;
	void *keep[16];
	long i, kept = 0;
	unsigned seed = 7;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	/* mmap and munmap only here: async-signal-safe, unlike malloc */
	for (i = 0; i < n; i++) {
		size_t len = 4096 * (1 + next_rand(&seed) % 4);
		void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			abort();
		if (i % (n / 16 > 0 ? n / 16 : 1) == 0 && kept < 16) {
			keep[kept++] = p;
			count(1, (long)len);
			continue;
		}
		munmap(p, len);
	}
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	(void)keep;
	printf("handler_calls=%ld\n", (long)handler_calls);
	print_live();
	return 0;
}

/* ---- pthread_cancel inside allocation loops ---- */

static void *cancel_loop(void *arg)
{
	struct worker *w = arg;

	pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, NULL);
	for (;;) {
		one_op(w);
		pthread_testcancel();
	}
	return NULL;
}

static int mode_cancel(int nt)
{
	struct worker *w = calloc((size_t)nt, sizeof(*w));
	int i;

	count(1, (long)((size_t)nt * sizeof(*w)));
	for (i = 0; i < nt; i++) {
		w[i].seed = 555u + (unsigned)i;
		pthread_create(&w[i].t, NULL, cancel_loop, &w[i]);
	}
	usleep(50000);
	for (i = 0; i < nt; i++) {
		void *ret;

		pthread_cancel(w[i].t);
		pthread_join(w[i].t, &ret);
		if (ret != PTHREAD_CANCELED)
			return 1;
	}
	print_live();
	return 0;
}

/* ---- longjmp out of deep stacks ---- */

static jmp_buf jb;

static __attribute__((noinline)) void deep(int level, int depth, void **held)
{
	void *p;
	char pad[64];

	if (level >= depth)
		return;
	p = malloc(32 + (size_t)level);
	if (!p)
		abort();
	held[level] = p;
	memset(pad, level, sizeof(pad));
	if (level + 1 == depth)
		longjmp(jb, 1);
	deep(level + 1, depth, held);
	__asm__ volatile("" : : "r"(pad) : "memory");
}

static int mode_longjmp(int depth, long n)
{
	void **held = calloc((size_t)depth, sizeof(*held));
	long i;
	int j;

	count(1, (long)((size_t)depth * sizeof(*held)));
	for (i = 0; i < n; i++) {
		if (!setjmp(jb)) {
			deep(0, depth, held);
			abort();
		}
		/* keep the deepest block of every 10th round, free the rest */
		for (j = 0; j < depth; j++) {
			if (j == depth - 1 && i % 10 == 0) {
				count(1, 32 + j);
				continue;
			}
			free(held[j]);
		}
	}
	print_live();
	return 0;
}

/* ---- address space exhaustion ---- */

static long exhaust(size_t size, void ***list, long *n, long *cap)
{
	long fails = 0;

	for (;;) {
		void *p = malloc(size);

		if (!p) {
			fails++;
			break;
		}
		memset(p, 0, 64);
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 1024;
			/* this list is the program's too: a realloc that fails ends it */
			*list = realloc(*list, (size_t)*cap * sizeof(**list));
			if (!*list)
				abort();
		}
		(*list)[(*n)++] = p;
		count(1, (long)size);
	}
	return fails;
}

static int mode_exhaust(void)
{
	void **list = NULL;
	long n = 0, cap = 0, fails, big, i;

	fails = exhaust(1 << 20, &list, &n, &cap);
	big = n;
	/* free every other 1 MiB block, then fill with 64 KiB ones */
	for (i = 0; i < big; i += 2) {
		free(list[i]);
		list[i] = NULL;
		count(-1, -(1 << 20));
	}
	fails += exhaust(1 << 16, &list, &n, &cap);
	if (list)
		count(1, cap * (long)sizeof(*list));
	printf("big=%ld small=%ld failed=%ld\n", big, n - big, fails);
	print_live();
	return 0;
}

/* ---- steps, for SIGKILL at random points ---- */

struct stepper {
	pthread_t t;
	int id;
	long blocks, bytes;
};

static pthread_barrier_t step_start, step_done;

static long nsteps;

static void *step_thread(void *arg)
{
	struct stepper *s = arg;
	long step;
	int j;

	for (step = 0; step < nsteps; step++) {
		pthread_barrier_wait(&step_start);
		for (j = 0; j < 20; j++) {
			size_t n = 16 + (size_t)((step * 7 + j + s->id) % 200);
			void *p = malloc(n), *q = malloc(n);

			if (!p || !q)
				abort();
			free(q);
			s->blocks++;
			s->bytes += (long)n;
		}
		pthread_barrier_wait(&step_done);
	}
	return NULL;
}

static int mode_steps(int nt, const char *file, long n)
{
	struct stepper *s = calloc((size_t)nt, sizeof(*s));
	FILE *f = fopen(file, "w");
	long step, b, y;
	int i;

	if (!f || !s)
		return 1;
	nsteps = n;
	pthread_barrier_init(&step_start, NULL, (unsigned)nt + 1);
	pthread_barrier_init(&step_done, NULL, (unsigned)nt + 1);
	for (i = 0; i < nt; i++) {
		s[i].id = i;
		pthread_create(&s[i].t, NULL, step_thread, &s[i]);
	}
	for (step = 0; step < n; step++) {
		pthread_barrier_wait(&step_start);
		pthread_barrier_wait(&step_done);
		for (i = 0, b = y = 0; i < nt; i++) {
			b += s[i].blocks;
			y += s[i].bytes;
		}
		fprintf(f, "step %ld blocks=%ld bytes=%ld\n", step, b, y);
		fflush(f);
	}
	for (i = 0; i < nt; i++)
		pthread_join(s[i].t, NULL);
	return 0;
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "";

	if (!strcmp(m, "threads") && argc == 4)
		return mode_threads(atoi(argv[2]), atol(argv[3]));
	if (!strcmp(m, "fork") && argc == 3)
		return mode_fork(atoi(argv[2]));
	if (!strcmp(m, "signal") && argc == 3)
		return mode_signal(atol(argv[2]));
	if (!strcmp(m, "cancel") && argc == 3)
		return mode_cancel(atoi(argv[2]));
	if (!strcmp(m, "longjmp") && argc == 4)
		return mode_longjmp(atoi(argv[2]), atol(argv[3]));
	if (!strcmp(m, "exhaust") && argc == 2)
		return mode_exhaust();
	if (!strcmp(m, "steps") && argc == 5)
		return mode_steps(atoi(argv[2]), argv[3], atol(argv[4]));
	fprintf(stderr, "usage: stress threads T OPS | fork N | signal N | cancel T |\n"
			"       longjmp DEPTH N | exhaust | steps T FILE N\n");
	return 2;
}
