/*
 * jumpstamp.c - a record abandoned by siglongjmp must not leave its
 * thread owning the coarse clock without its takeover stamp
 * (trace_writer.c, mp_stamp_abandon). Each round: thread C maps and
 * unmaps address X_i (so C owns the clock); then the main thread makes
 * one probe mmap, its first record of the round (it takes the clock
 * over), while a sender thread keeps sending it SIGUSR1, whose handler
 * siglongjmps out of whatever it interrupted, memprov's record included;
 * then the main thread maps X_i and keeps it to the end. Its mapping is
 * after C's unmapping, and must be stamped after it, or the trace has
 * X_i freed at the end. With MEMPROV_RSS_INTERVAL_MS=2 the probe is timed
 * to be the first record past an RSS sample's due time, so a read of
 * /proc/self/statm lies between its stamp and its commit (a wider
 * window). Prints "jumps=J live_maps=N" (N mappings still held).
 *
 *   jumpstamp [ROUNDS]     (default 1000)
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define BASE 0x6f0000000000ul

static int rounds = 1000, round_no;
static long interval_us = 2000;
static volatile int armed, done;
static int phase; /* 0: C maps and unmaps; 1: main's probe; 2: main mapped; 3: next round */
static volatile pid_t main_tid;
static sigjmp_buf env;
static long jumps;

static void *addr_of(int i)
{
	return (void *)(BASE + (unsigned long)i * 65536ul);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void wait_phase(int want)
{
	while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) != want)
		sched_yield();
}

static void on_usr1(int sig)
{
	(void)sig;
	if (armed) {
		armed = 0;
		jumps++;
		siglongjmp(env, 1);
	}
}

static void *mapper(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < rounds; i++) {
		void *p;

		wait_phase(0);
		p = mmap(addr_of(i), 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != addr_of(i)) {
			fprintf(stderr, "jumpstamp: thread C: mmap at %p failed\n", addr_of(i));
			abort();
		}
		munmap(p, 4096);
		__atomic_store_n(&phase, 1, __ATOMIC_RELEASE);
		wait_phase(2);
		__atomic_store_n(&phase, 3, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *sender(void *arg)
{
	(void)arg;
	while (!done)
		if (armed)
			syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
	return NULL;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	pthread_t c, s;
	uint64_t last;
	long kept = 0;
	const char *iv = getenv("MEMPROV_RSS_INTERVAL_MS");

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (rounds < 1 || rounds > 100000) {
		fprintf(stderr, "usage: jumpstamp [ROUNDS(1-100000)]\n");
		return 2;
	}
	if (iv && atoi(iv) > 0)
		interval_us = atol(iv) * 1000;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	main_tid = (pid_t)syscall(SYS_gettid);
	phase = 3;
	if (pthread_create(&s, NULL, sender, NULL) || pthread_create(&c, NULL, mapper, NULL))
		return 1;
	last = now_ns();
	for (round_no = 0; round_no < rounds; round_no++) {
		uint64_t due = last + (uint64_t)interval_us * 1000u;
		void *p, *q;

		while (now_ns() + 60000 < due)
			sched_yield();
		__atomic_store_n(&phase, 0, __ATOMIC_RELEASE);
		wait_phase(1);
		while (now_ns() < due + 30000)
			sched_yield();
		last = now_ns();
		sigsetjmp(env, 1);
		armed = 1;
		q = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); /* the probe */
		armed = 0;
		if (q != MAP_FAILED)
			munmap(q, 4096);
		p = mmap(addr_of(round_no), 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != addr_of(round_no)) {
			fprintf(stderr, "jumpstamp: main: mmap at %p failed\n", addr_of(round_no));
			abort();
		}
		kept++;
		__atomic_store_n(&phase, 2, __ATOMIC_RELEASE);
		wait_phase(3);
	}
	pthread_join(c, NULL);
	done = 1;
	pthread_join(s, NULL);
	printf("jumps=%ld live_maps=%ld\n", jumps, kept);
	return 0;
}
