/*
 * intern.c - the set of stack ids already written to the trace: a
 * lock-free open-addressing table of 64-bit ids, CAS insert, 2^20 slots
 * mapped with MAP_NORESERVE (pages cost memory only once touched). When a
 * probe run is full the id is reported new again and its stack written
 * again: readers deduplicate by id.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#include <sys/mman.h>

#include "atomic.h"
#include "intern.h"

#define INTERN_BITS 20
#define INTERN_SIZE (1u << INTERN_BITS)
#define INTERN_PROBES 32

static uint64_t *set;

int mp_intern_init(void)
{
	if (set)
		mp_sys_munmap(set, INTERN_SIZE * sizeof(uint64_t));
	set = mp_sys_mmap(NULL, INTERN_SIZE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (set == MAP_FAILED) {
		set = NULL;
		return -1;
	}
	return 0;
}

void mp_intern_range(uintptr_t *addr, size_t *len)
{
	*addr = (uintptr_t)set;
	*len = set ? INTERN_SIZE * sizeof(uint64_t) : 0;
}

int mp_intern_insert(uint64_t id)
{
	uint32_t i = (uint32_t)id & (INTERN_SIZE - 1);
	int probe;

	if (!set)
		return 1;
	for (probe = 0; probe < INTERN_PROBES; probe++) {
		uint64_t *slot = &set[(i + (uint32_t)probe) & (INTERN_SIZE - 1)];
		uint64_t v = mp_atomic_load_relaxed_u64(slot);

		if (v == id)
			return 0;
		if (!v) {
			if (mp_atomic_cas_relaxed_u64(slot, 0, id))
				return 1;
			if (mp_atomic_load_relaxed_u64(slot) == id)
				return 0;
		}
	}
	return 1;
}
