/*
 * intern.c - the stacks already written to the trace: a lock-free
 * open-addressing table from a stack's 64-bit hash to its small id (1, 2,
 * ... in the order stacks are first seen: the trace names a stack in one
 * or two bytes), CAS insert. Two levels, mapped with MAP_NORESERVE (pages
 * cost memory only once touched): 2^10 slots first, two pages that hold
 * the stacks of a short-lived process (a new stack in a big table touches
 * a new page: a page fault each), then 2^20 slots for the hashes whose
 * probe run in the first level is full. A run never empties, so a hash is
 * looked for in the second level only once its run in the first is full,
 * and is never in both. A slot holds the hash's top 40 bits and the id.
 * When a probe run of the second level is full, or the ids run out, the
 * stack gets no id: stack.c then names it by its hash and writes it again
 * each time (readers deduplicate by id).
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#include <sys/mman.h>

#include "atomic.h"
#include "intern.h"

#define SMALL_SIZE (1u << 10)
#define INTERN_BITS 20
#define INTERN_SIZE (1u << INTERN_BITS)
#define MAP_SLOTS (SMALL_SIZE + INTERN_SIZE)
#define INTERN_PROBES 32
#define ID_BITS 24
#define ID_MASK ((1ull << ID_BITS) - 1)

static uint64_t *set;           /* SMALL_SIZE slots, then INTERN_SIZE */
static uint32_t last_id;        /* ids handed out so far */

int mp_intern_init(void)
{
	if (set)
		mp_sys_munmap(set, MAP_SLOTS * sizeof(uint64_t));
	last_id = 0;
	set = mp_sys_mmap(NULL, MAP_SLOTS * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (set == MAP_FAILED) {
		set = NULL;
		return -1;
	}
	return 0;
}

/*
 * Look hash up in one level (size slots from t): its id, found or given
 * now (*is_new), or 0 when its probe run is full or the ids ran out.
 */
static uint32_t level_id(uint64_t *t, uint32_t size, uint64_t hash, int *is_new)
{
	uint64_t tag = hash & ~ID_MASK;
	uint32_t i = (uint32_t)hash & (size - 1);
	int probe;

	for (probe = 0; probe < INTERN_PROBES; probe++) {
		uint64_t *slot = &t[(i + (uint32_t)probe) & (size - 1)];
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
	uint32_t id;

	*is_new = 0;
	if (!set)
		return 0;
	id = level_id(set, SMALL_SIZE, hash, is_new);
	if (id || last_id > ID_MASK)
		return id;
	return level_id(set + SMALL_SIZE, INTERN_SIZE, hash, is_new);
}
