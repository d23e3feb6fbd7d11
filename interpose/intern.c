/*
 * intern.c - the stacks already written to the trace: a lock-free
 * open-addressing table from a stack's 64-bit hash to its small id (1, 2,
 * ... in the order stacks are first seen: the trace names a stack in one
 * or two bytes), CAS insert.
 *
 * In levels (levels.h) of 2^10 up to 2^20 slots (2^17 under an
 * address-space limit, below), mapped with
 * MAP_NORESERVE (pages cost memory only once touched): a process with N
 * stacks touches about 8N bytes of table, not 4 KiB per stack. A slot
 * holds the hash's top 40 bits and the id. When the last level's run is full, or
 * the ids run out, the stack gets no id: stack.c then names it by its
 * hash and writes it again each time (readers deduplicate by id).
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys (and levels.h).
 */
#include <sys/mman.h>

#include "atomic.h"
#include "intern.h"
#include "levels.h"

#define ID_BITS 24
#define ID_MASK ((1ull << ID_BITS) - 1)
#define MAP_SLOTS mp_levels_slots(last_bits)

static uint64_t *set;
static uint32_t last_id;        /* ids handed out so far */

/*
 * The last level: 2^20 slots (8 MiB of address space, touched only as
 * stacks fill it), 2^17 under an address-space limit (ulimit -v), where
 * every reserved megabyte is one the program cannot map: there the stacks
 * that find no room in the table's 205,824 slots are named by their hash
 * (written each time: a bigger trace). Chosen when the table is mapped; a
 * forked child keeps its parent's.
 */
static unsigned last_bits = 20;

int mp_intern_init(void)
{
	last_id = 0;
	/* a forked child: the parent's ids are not in its trace; the table
	 * is emptied where it lies (one call; unmapping and mapping it anew
	 * took two, and the mapping's own work) */
	if (set && madvise(set, MAP_SLOTS * sizeof(uint64_t), MADV_DONTNEED) == 0)
		goto touch;
	if (set)
		mp_sys_munmap(set, MAP_SLOTS * sizeof(uint64_t));
	last_bits = mp_as_limited() ? 17 : 20;
	set = mp_sys_mmap(NULL, MAP_SLOTS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (set == MAP_FAILED) {
		set = NULL;
		return -1;
	}
touch:
	/* level 0's pages (every process with a stack uses them), by writes:
	 * a lookup's read first would cost a read fault, then a write fault */
	for (size_t i = 0; i < (1u << 10); i += 4096 / sizeof(*set))
		__atomic_store_n(&set[i], 0, __ATOMIC_RELAXED);
	return 0;
}

void mp_intern_range(uintptr_t *addr, size_t *len)
{
	*addr = (uintptr_t)set;
	*len = set ? MAP_SLOTS * sizeof(uint64_t) : 0;
}

/*
 * Look hash up in level l: its id, found or given now (*is_new), or 0
 * when its probe run there is full or the ids ran out.
 */
static uint32_t level_id(int l, uint64_t hash, int *is_new)
{
	uint64_t tag = hash & ~ID_MASK;
	uint32_t probe;

	for (probe = 0; probe < mp_level_probes(l); probe++) {
		uint64_t *slot = &set[mp_level_slot(l, last_bits, hash, probe)];
		uint64_t v = mp_atomic_load_relaxed_u64(slot), id;

		if (v && (v & ~ID_MASK) == tag)
			return (uint32_t)(v & ID_MASK);
		if (v)
			continue;
		id = mp_atomic_add_relaxed_u32(&last_id, 1) + 1ull;
		if (id > ID_MASK)
			return 0;
		if (mp_atomic_cas_relaxed_u64(slot, 0, tag | id)) {
			*is_new = 1;
			return (uint32_t)id;
		}
		/* another thread took the slot first: perhaps for this hash
		 * (then id is never used: ids may have gaps) */
		v = mp_atomic_load_relaxed_u64(slot);
		if ((v & ~ID_MASK) == tag)
			return (uint32_t)(v & ID_MASK);
	}
	return 0;
}

uint32_t mp_intern_id(uint64_t hash, int *is_new)
{
	uint32_t id = 0;
	int l;

	*is_new = 0;
	if (!set)
		return 0;
	for (l = 0; l < MP_LEVELS && !id && last_id <= ID_MASK; l++)
		id = level_id(l, hash, is_new);
	return id;
}
