/*
 * embedpy.c - an application that embeds CPython, as gdb does: it loads
 * libpython3.11 (dlopen: no Python headers needed), runs four snippets in
 * __main__ and finalizes the interpreter; one block of 4321 B of its own
 * (EMBED-LEAK) is leaked before the interpreter starts, so that its
 * address was never an object's: made after Py_FinalizeEx, it took the
 * place of a freed object that a stale word in a live obmalloc arena
 * still named, and the scan (conservative, as valgrind's) called it
 * reachable (libpython3.11 3.11.2-6+deb12u9). Its executable is not
 * CPython's: the snippets' end is not the program's (t4045).
 * Exit 3: libpython could not be loaded.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *keep;

static __attribute__((noinline)) void leak_here(void)
{
	char *p = malloc(4321); /* EMBED-LEAK */

	if (p)
		memset(p, 1, 4321);
	keep = p;
	keep = NULL;
}

int main(void)
{
	void *py = dlopen("libpython3.11.so.1.0", RTLD_NOW | RTLD_GLOBAL);
	void (*init)(void);
	int (*run)(const char *);
	int (*fin)(void);

	if (!py)
		return 3;
	init = (void (*)(void))dlsym(py, "Py_Initialize");
	run = (int (*)(const char *))dlsym(py, "PyRun_SimpleString");
	fin = (int (*)(void))dlsym(py, "Py_FinalizeEx");
	if (!init || !run || !fin)
		return 3;
	leak_here();
	init();
	/* several snippets: memprov's Python hooks are installed during the
	 * first (a pending call), and see the ones after */
	if (run("kept = [bytearray(1000) for _ in range(10)]") ||
	    run("for i in range(200000): kept.append(i) if i % 50000 == 0 else None") ||
	    run("kept.append(bytearray(1000))") || run("print(len(kept))"))
		return 1;
	fflush(stdout);
	if (fin())
		return 1;
	return 0;
}
