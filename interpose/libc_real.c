/*
 * libc_real.c - the real functions behind memprov's libc hooks (see
 * libc_real.h), found once, before anything else runs in memprov.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls elfsym and sys.
 */
#include "elfsym.h"
#include "libc_real.h"

#define MP_REAL_DEF(ret, name, params) ret(*mp_real_##name) params;
MP_LIBC_HOOKS(MP_REAL_DEF)
#undef MP_REAL_DEF

int mp_hooks_ready;
const char *mp_heap_ahead;
static __thread volatile int resolving __attribute__((tls_model("initial-exec")));

/*
 * The next definition after libmemprov.so of each hooked name, and
 * whether malloc's is ahead of it (libc_real.h: mp_heap_ahead). A name
 * libc lacks (free_sized before glibc 2.38) stays NULL: its hook then
 * fails as the missing function would.
 */
void mp_hooks_resolve(void)
{
#define MP_NAME(ret, name, params) #name,
	static const char *const names[] = { MP_LIBC_HOOKS(MP_NAME) };
#undef MP_NAME
	void *found[sizeof(names) / sizeof(names[0])];
	size_t i = 0;

	if (resolving)
		return;
	resolving = 1;
	mp_dlsym_next_after_each_ahead((const void *)mp_hooks_resolve, names, found,
				       sizeof(names) / sizeof(names[0]), &mp_heap_ahead);
#define MP_RESOLVE(ret, name, params) *(void **)&mp_real_##name = found[i++];
	MP_LIBC_HOOKS(MP_RESOLVE)
#undef MP_RESOLVE
	resolving = 0;
	__atomic_store_n(&mp_hooks_ready, 1, __ATOMIC_RELEASE);
}
