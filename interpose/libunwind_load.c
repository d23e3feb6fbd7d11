/*
 * libunwind_load.c - libunwind, loaded for memprov alone.
 *
 * libunwind also defines the _Unwind_* functions of the C++ and Rust
 * exception ABI (_Unwind_RaiseException, _Unwind_Backtrace, ...), which
 * the program expects from libgcc_s. As a DT_NEEDED of libmemprov.so it
 * joined the program's global scope ahead of libgcc_s wherever the
 * program did not link libgcc_s itself (a C program calling a C++
 * library, Python importing a C++ extension, rustc's driver): libstdc++'s
 * throws went to libunwind's unwinder, and some runs hung (rustc on a
 * missing source file; a throw on a makecontext stack). So libunwind is
 * opened with RTLD_LOCAL from memprov's constructor, where the loader
 * allows it, and its functions are looked up in its own symbol table: no
 * name of it is visible to the program, which resolves _Unwind_* as it
 * does without memprov. A process where memprov does not trace
 * (MEMPROV_DISABLE, setuid) does not load it at all.
 *
 * Layer: 2 walk (docs/ARCHITECTURE.md): calls elfsym and libc_real.
 */
#include <dlfcn.h>

#include "elfsym.h"
#include "libc_real.h"
#include "libunwind_load.h"

#define LIBUNWIND "libunwind.so.8"

struct mp_libunwind mp_unw;

int mp_libunwind_load(void)
{
	static int state; /* 0 not tried, 1 loaded, -1 not there */
	struct mp_libunwind u;

	if (state)
		return state > 0 ? 0 : -1;
	state = -1;
	if (!mp_real_dlopen || !mp_real_dlopen(LIBUNWIND, RTLD_NOW | RTLD_LOCAL))
		return -1;
	/* the names libunwind.h's macros give for local unwinding on x86-64 */
	*(void **)&u.backtrace = mp_dlsym_in_object(LIBUNWIND, "unw_backtrace");
	*(void **)&u.getcontext = mp_dlsym_in_object(LIBUNWIND, "_Ux86_64_getcontext");
	*(void **)&u.init_local = mp_dlsym_in_object(LIBUNWIND, "_ULx86_64_init_local");
	*(void **)&u.get_reg = mp_dlsym_in_object(LIBUNWIND, "_ULx86_64_get_reg");
	*(void **)&u.step = mp_dlsym_in_object(LIBUNWIND, "_ULx86_64_step");
	if (!u.backtrace || !u.getcontext || !u.init_local || !u.get_reg || !u.step)
		return -1;
	mp_unw = u;
	state = 1;
	return 0;
}
