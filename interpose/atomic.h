/*
 * atomic.h - the few atomic operations libmemprov.so uses, each named
 * with its memory ordering (mimalloc's atomic.h style). They work on plain
 * integers in the shared trace mapping, where _Atomic types cannot be
 * used for the on-disk structs.
 */
#ifndef MEMPROV_ATOMIC_H
#define MEMPROV_ATOMIC_H

#include <stdint.h>

static inline uint64_t mp_atomic_add_relaxed_u64(uint64_t *p, uint64_t v)
{
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static inline uint32_t mp_atomic_add_relaxed_u32(uint32_t *p, uint32_t v)
{
	return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);
}

static inline uint64_t mp_atomic_load_relaxed_u64(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void mp_atomic_store_release_u32(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static inline void mp_atomic_or_relaxed_u32(uint32_t *p, uint32_t v)
{
	__atomic_fetch_or(p, v, __ATOMIC_RELAXED);
}

static inline void mp_atomic_store_relaxed_u32(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

static inline void *mp_atomic_load_acquire_ptr(void *const *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void mp_atomic_store_release_ptr(void **p, void *v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

/* 1 when *p held expected and now holds desired. */
static inline int mp_atomic_cas_relaxed_u64(uint64_t *p, uint64_t expected,
					    uint64_t desired)
{
	return __atomic_compare_exchange_n(p, &expected, desired, 0,
					   __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

static inline int mp_atomic_xchg_acq_rel_int(int *p, int v)
{
	return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL);
}

#endif /* MEMPROV_ATOMIC_H */
