/*
 * unwind_abi - which object defines the exception ABI's _Unwind_* names in
 * the program's global scope, and one raise through it. A C program that
 * loads libgcc_s itself, as one that calls a C++ library does: the names
 * must come from libgcc_s.so.1 as they do bare, never from a library the
 * preload object brought in (libunwind defines them too).
 *
 * Prints the defining object of _Unwind_RaiseException and of
 * _Unwind_Backtrace (base names), then
 * raises a foreign exception with no handler on a makecontext stack and
 * prints what the raise returned (5, _URC_END_OF_STACK).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unwind.h>

static ucontext_t uc_main, uc_co;
static _Unwind_Reason_Code (*raise_fn)(struct _Unwind_Exception *);
static struct _Unwind_Exception exc;
static int rc = -1;

static const char *object_of(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	Dl_info di;
	const char *slash;

	if (!p || !dladdr(p, &di) || !di.dli_fname)
		return "none";
	slash = strrchr(di.dli_fname, '/');
	return slash ? slash + 1 : di.dli_fname;
}

static void co(void)
{
	rc = raise_fn(&exc);
}

int main(void)
{
	if (!dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_GLOBAL)) {
		fprintf(stderr, "unwind_abi: %s\n", dlerror());
		return 2;
	}
	printf("_Unwind_RaiseException %s\n", object_of("_Unwind_RaiseException"));
	printf("_Unwind_Backtrace %s\n", object_of("_Unwind_Backtrace"));
	*(void **)&raise_fn = dlsym(RTLD_DEFAULT, "_Unwind_RaiseException");
	memset(&exc, 0, sizeof(exc));
	exc.exception_class = 0x4d454d50524f5600ull; /* "MEMPROV\0": nobody's */
	getcontext(&uc_co);
	uc_co.uc_stack.ss_sp = malloc(1 << 20);
	uc_co.uc_stack.ss_size = 1 << 20;
	uc_co.uc_link = &uc_main;
	makecontext(&uc_co, co, 0);
	swapcontext(&uc_main, &uc_co);
	printf("raise returned %d\n", rc);
	free(uc_co.uc_stack.ss_sp);
	return 0;
}
