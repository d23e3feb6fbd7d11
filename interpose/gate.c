/*
 * gate.c - the fork gate.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 *
 * libunwind takes an internal lock while it walks a stack, and unwind.c's
 * rule lookup asks the loader (dl_iterate_phdr): a fork while another
 * thread holds either leaves the child a lock no one will release, and it
 * hangs at its first traced allocation. So fork's prepare handler closes
 * the gate and waits until no thread is inside the gate, which each
 * thread enters around those calls only (the walk through cached rules
 * takes no lock and needs no gate: two atomic read-modify-writes saved on
 * nearly every capture). A thread that reaches the closed gate waits
 * until the fork is done (it holds no malloc lock there: allocations are
 * recorded after the real call, frees before it), so its stack is still
 * complete. Only the forking thread itself (a signal handler that
 * allocates during fork) and a wait past GATE_WAIT_SPINS go without.
 * Each thread counts itself in one of GATE_SLOTS padded counters (its
 * thread id picks it), so threads do not share a cache line. The RMW
 * before the load of `forking` pairs with the store and loads in
 * mp_gate_close (Dekker: both sides seq_cst).
 */
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "gate.h"

#define GATE_SLOTS 64
#define GATE_WAIT_SPINS 200000 /* ~ seconds of sched_yield: never hang */

static struct {
	uint32_t n;
	char pad[60];
} gate[GATE_SLOTS] MP_BIG_BSS __attribute__((aligned(4096))); /* one page: a fork's wait touches them all */
static int forking;
static uint32_t forking_tid;
static __thread uint32_t my_tid __attribute__((tls_model("initial-exec")));

static inline uint32_t tid(void)
{
	if (__builtin_expect(!my_tid, 0))
		my_tid = (uint32_t)mp_syscall(SYS_gettid);
	return my_tid;
}

int mp_gate_enter(void)
{
	unsigned spins = 0, slot = tid() % GATE_SLOTS;

	for (;;) {
		__atomic_add_fetch(&gate[slot].n, 1, __ATOMIC_SEQ_CST);
		if (__builtin_expect(!__atomic_load_n(&forking, __ATOMIC_SEQ_CST), 1))
			return 1;
		__atomic_sub_fetch(&gate[slot].n, 1, __ATOMIC_RELEASE);
		if (tid() == __atomic_load_n(&forking_tid, __ATOMIC_RELAXED))
			return 0;
		while (__atomic_load_n(&forking, __ATOMIC_ACQUIRE))
			if (++spins > GATE_WAIT_SPINS)
				return 0;
			else
				sched_yield();
	}
}

void mp_gate_leave(void)
{
	__atomic_sub_fetch(&gate[tid() % GATE_SLOTS].n, 1, __ATOMIC_RELEASE);
}

void mp_gate_close(void)
{
	unsigned i, spins;

	__atomic_store_n(&forking_tid, tid(), __ATOMIC_RELAXED);
	__atomic_store_n(&forking, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < GATE_SLOTS; i++)
		for (spins = 0; __atomic_load_n(&gate[i].n, __ATOMIC_SEQ_CST) &&
				spins < GATE_WAIT_SPINS; spins++)
			sched_yield();
}

void mp_gate_open(void)
{
	__atomic_store_n(&forking, 0, __ATOMIC_SEQ_CST);
	my_tid = 0; /* in the child: a new thread id */
}
