/*
 * levels.h - where a key may sit in one of memprov's lock-free
 * open-addressing tables (stack ids, Python code ids, the Python line
 * cache). Such a table is one zeroed mapping split into levels of 2^10,
 * 2^13 and 2^16 slots and a last level of the table's own size. A key
 * probes a short run of slots in level 0 and goes to level 1 only when
 * that run is full, and so on. Keys are never removed, so a run never
 * empties and a key is never in two levels.
 *
 * Why levels: each new key in one big table lands on a page of its own
 * (a page fault, and 4 KiB of the program's resident memory, for 8 or 16
 * bytes); with levels a process with N keys touches about N slots of
 * table, packed in the first pages.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): header only, calls nothing.
 */
#ifndef MEMPROV_LEVELS_H
#define MEMPROV_LEVELS_H

#include <stddef.h>
#include <stdint.h>

#define MP_LEVELS 4
#define MP_LEVEL_FIRST_SLOTS ((1u << 10) + (1u << 13) + (1u << 16))

/* Slots in a table whose last level has 2^last_bits (> 16) slots. */
static inline size_t mp_levels_slots(unsigned last_bits)
{
	return MP_LEVEL_FIRST_SLOTS + ((size_t)1 << last_bits);
}

/* The probe run of level l: 8, 16, 32, 32 slots. */
static inline uint32_t mp_level_probes(int l)
{
	return l == 0 ? 8 : l == 1 ? 16 : 32;
}

/* The index, in the whole table, of probe p of a key hashed h in level l. */
static inline uint32_t mp_level_slot(int l, unsigned last_bits, uint64_t h, uint32_t p)
{
	static const uint32_t first[MP_LEVELS] = {
		0, 1u << 10, (1u << 10) + (1u << 13), MP_LEVEL_FIRST_SLOTS,
	};
	unsigned bits = l == 0 ? 10 : l == 1 ? 13 : l == 2 ? 16 : last_bits;

	return first[l] + (((uint32_t)h + p) & ((1u << bits) - 1));
}

#endif /* MEMPROV_LEVELS_H */
