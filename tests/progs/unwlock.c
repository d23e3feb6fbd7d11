/*
 * unwlock.c - a thread that maps memory while its allocator holds its
 * lock, as jemalloc does when it makes an arena (rustc hung so under
 * memprov, found by a sweep). If memprov's mmap hook takes that stack
 * with libunwind (its walk gave up, or MEMPROV_UNWIND_CHECK=1) for the
 * first time on the thread, glibc allocates libunwind's thread-local
 * storage then, with malloc. Run with tests/bin/liblockalloc.so
 * preloaded after libmemprov.so: it counts the allocator's calls made
 * while the "lock" is held, printed at the end (none without it).
 *   unwlock check   the mapping made on the thread's own stack
 *   unwlock ctx     made on a makecontext stack (memprov's walk gives up)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>

static int *holding, *reentered;

static void map_locked(void)
{
	void *m;

	if (holding)
		*holding = 1;
	m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (holding)
		*holding = 0;
	if (m != MAP_FAILED)
		munmap(m, 1 << 20);
}

static ucontext_t back, there;

static void *worker(void *arg)
{
	static char stack[256 << 10];

	if (!strcmp(arg, "ctx")) {
		getcontext(&there);
		there.uc_stack.ss_sp = stack;
		there.uc_stack.ss_size = sizeof(stack);
		there.uc_link = &back;
		makecontext(&there, map_locked, 0);
		swapcontext(&back, &there);
	} else {
		map_locked();
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;

	holding = dlsym(RTLD_DEFAULT, "lockalloc_holding");
	reentered = dlsym(RTLD_DEFAULT, "lockalloc_reentered");
	if (argc < 2 || pthread_create(&t, NULL, worker, argv[1]) || pthread_join(t, NULL))
		return 2;
	printf("allocator: %s, called while it held its lock: %d\n",
	       holding ? "liblockalloc.so" : "libc's", reentered ? *reentered : 0);
	return 0;
}
