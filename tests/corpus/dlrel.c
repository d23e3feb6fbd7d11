/*
 * dlrel.c - a program that dlopens its libraries by relative path, one of
 * them with RTLD_DEEPBIND (t2310). Run from tests/bin:
 *   corpus-dlrel            dlopen("./libcorpus-dlrel.so") and
 *                           dlopen("./libcorpus-deep.so", RTLD_DEEPBIND);
 *                           each library churns (strdup/free, malloc/free)
 *                           and keeps one block
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

static void *use(const char *path, int mode)
{
	void *h = dlopen(path, mode);
	void (*churn)(int);
	char *(*keep)(void);

	if (!h) {
		fprintf(stderr, "%s\n", dlerror());
		return NULL;
	}
	churn = (void (*)(int))dlsym(h, "churn");
	keep = (char *(*)(void))dlsym(h, "keep");
	churn(100);
	keep();
	return h;
}

int main(void)
{
	if (!use("./libcorpus-dlrel.so", RTLD_NOW))
		return 1;
	if (!use("./libcorpus-deep.so", RTLD_NOW | RTLD_DEEPBIND))
		return 1;
	return 0;
}
