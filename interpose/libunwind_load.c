/*
 * libunwind_load.c - libunwind's functions, as memprov calls them, and
 * why libgcc_s comes before libunwind in libmemprov.so's dependencies.
 *
 * libunwind also defines the _Unwind_* functions of the C++ and Rust
 * exception ABI (_Unwind_RaiseException, _Unwind_Backtrace, ...), which
 * the program expects from libgcc_s. A preloaded object's dependencies
 * join the program's global scope after the program's own, so wherever
 * the program did not list libgcc_s itself (a C program calling a C++
 * library, Python importing a C++ extension, rustc's driver) libunwind
 * came first and defined them: libstdc++'s throws went to libunwind's
 * unwinder, and some runs hung (rustc on a missing source file: a mmap
 * of libunwind's, memprov's hook, unw_backtrace on the lock its thread
 * held; a throw on a makecontext stack) or aborted (a C++ throw out of a
 * SIGSEGV handler). libmemprov.so therefore lists libgcc_s.so.1 before
 * libunwind.so.8 (Makefile, LIB_LIBS): the program's _Unwind_* are
 * libgcc_s's, as bare. (Opening libunwind with RTLD_LOCAL from the
 * constructor instead hid it entirely, but the loader's dlopen then
 * allocated 6.4 KiB in the program's heap before main.)
 *
 * Layer: 2 walk (docs/ARCHITECTURE.md): calls nothing of memprov's.
 */
#include "libunwind_load.h"

struct mp_libunwind mp_unw;

int mp_libunwind_load(void)
{
	mp_unw.backtrace = unw_backtrace;
	mp_unw.getcontext = unw_tdep_getcontext;
	mp_unw.init_local = unw_init_local;
	mp_unw.get_reg = unw_get_reg;
	mp_unw.step = unw_step;
	return 0;
}
