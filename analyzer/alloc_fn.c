/*
 * alloc_fn.c - which frames are allocation functions, and the API name
 * they stand for: a built-in list (README "Allocation functions" says
 * which, keep the two alike) and the names a user adds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc_fn.h"
#include "pattern.h"
#include "util.h"

enum scope {
	ANY,        /* a frame of any module */
	PYTHON,     /* a frame of the Python interpreter only */
	NUMPY,      /* a frame of numpy's _multiarray_umath module only */
};

/* name: a function's name without parameters; api: what reports call it. */
static const struct builtin { const char *name, *api; enum scope scope; } builtins[] = {
	/* libc's allocation functions and their internal names */
	{ "malloc", NULL, ANY }, { "__libc_malloc", "malloc", ANY },
	{ "calloc", NULL, ANY }, { "__libc_calloc", "calloc", ANY },
	{ "realloc", NULL, ANY }, { "__libc_realloc", "realloc", ANY },
	{ "reallocarray", NULL, ANY }, { "__libc_reallocarray", "reallocarray", ANY },
	{ "free", NULL, ANY }, { "__libc_free", "free", ANY },
	{ "memalign", NULL, ANY }, { "__libc_memalign", "memalign", ANY },
	{ "_mid_memalign", "memalign", ANY },
	{ "posix_memalign", NULL, ANY }, { "__posix_memalign", "posix_memalign", ANY },
	{ "aligned_alloc", NULL, ANY }, { "__libc_aligned_alloc", "aligned_alloc", ANY },
	{ "valloc", NULL, ANY }, { "__libc_valloc", "valloc", ANY },
	{ "pvalloc", NULL, ANY }, { "__libc_pvalloc", "pvalloc", ANY },
	{ "mmap", NULL, ANY }, { "mmap64", "mmap", ANY }, { "__mmap", "mmap", ANY },
	{ "munmap", NULL, ANY }, { "__munmap", "munmap", ANY },
	{ "mremap", NULL, ANY }, { "__mremap", "mremap", ANY },
	/* C++: every overload (sized, nothrow, aligned) */
	{ "operator new", NULL, ANY }, { "operator new[]", NULL, ANY },
	{ "operator delete", NULL, ANY }, { "operator delete[]", NULL, ANY },
	/* libc's allocating string functions */
	{ "strdup", NULL, ANY }, { "__strdup", "strdup", ANY },
	{ "strndup", NULL, ANY }, { "__strndup", "strndup", ANY },
	{ "wcsdup", NULL, ANY },
	/* CPython's allocators */
	{ "PyMem_Malloc", NULL, ANY }, { "PyMem_Calloc", NULL, ANY }, { "PyMem_Realloc", NULL, ANY },
	{ "PyMem_RawMalloc", NULL, ANY }, { "PyMem_RawCalloc", NULL, ANY },
	{ "PyMem_RawRealloc", NULL, ANY },
	{ "PyObject_Malloc", NULL, ANY }, { "PyObject_Calloc", NULL, ANY },
	{ "PyObject_Realloc", NULL, ANY },
	{ "_PyMem_RawMalloc", "PyMem_RawMalloc", ANY }, { "_PyMem_RawCalloc", "PyMem_RawCalloc", ANY },
	{ "_PyMem_RawRealloc", "PyMem_RawRealloc", ANY },
	{ "_PyObject_Malloc", "PyObject_Malloc", ANY }, { "_PyObject_Calloc", "PyObject_Calloc", ANY },
	{ "_PyObject_Realloc", "PyObject_Realloc", ANY },
	{ "pymalloc_alloc", "PyObject_Malloc", PYTHON }, { "pymalloc_realloc", "PyObject_Realloc", PYTHON },
	{ "allocate_from_new_pool", "PyObject_Malloc", PYTHON }, { "new_arena", "PyObject_Malloc", PYTHON },
	{ "_PyMem_ArenaAlloc", "PyObject_Malloc", PYTHON },
	{ "_PyObject_ArenaMmap", "PyObject_Malloc", PYTHON },
	/* CPython's object allocators, as an extension calls them (its
	 * tp_alloc; PyObject_New, PyObject_GC_New): the extension's line asked */
	{ "PyType_GenericAlloc", NULL, PYTHON }, { "_PyType_AllocNoTrack", "PyType_GenericAlloc", PYTHON },
	{ "_PyObject_New", "PyObject_New", PYTHON }, { "_PyObject_NewVar", "PyObject_NewVar", PYTHON },
	{ "_PyObject_GC_New", "PyObject_GC_New", PYTHON },
	{ "_PyObject_GC_NewVar", "PyObject_GC_NewVar", PYTHON },
	{ "gc_alloc", "PyObject_GC_New", PYTHON },
	{ "_PyObject_GC_Alloc", "PyObject_GC_New", PYTHON },
	{ "_PyObject_GC_Malloc", "PyObject_GC_New", PYTHON },
	{ "_PyObject_MallocWithType", "PyObject_Malloc", PYTHON },
	/* numpy's data allocator (array data, through its handler and cache) */
	{ "PyDataMem_NEW", NULL, ANY }, { "PyDataMem_NEW_ZEROED", NULL, ANY },
	{ "PyDataMem_RENEW", NULL, ANY }, { "PyDataMem_UserNEW", NULL, ANY },
	{ "PyDataMem_UserNEW_ZEROED", NULL, ANY }, { "PyDataMem_UserRENEW", NULL, ANY },
	{ "npy_alloc_cache", "PyDataMem_UserNEW", ANY },
	{ "npy_alloc_cache_zero", "PyDataMem_UserNEW_ZEROED", ANY },
	{ "npy_alloc_cache_dim", "npy_alloc_cache_dim", ANY },
	{ "default_malloc", "PyDataMem_UserNEW", NUMPY },
	{ "default_calloc", "PyDataMem_UserNEW_ZEROED", NUMPY },
	{ "default_realloc", "PyDataMem_UserRENEW", NUMPY },
	/* OpenSSL's allocation functions (OPENSSL_malloc and its kin are
	 * macros over these) */
	{ "CRYPTO_malloc", NULL, ANY }, { "CRYPTO_zalloc", NULL, ANY },
	{ "CRYPTO_realloc", NULL, ANY }, { "CRYPTO_clear_realloc", NULL, ANY },
	{ "CRYPTO_strdup", NULL, ANY }, { "CRYPTO_strndup", NULL, ANY },
	{ "CRYPTO_memdup", NULL, ANY }, { "CRYPTO_secure_malloc", NULL, ANY },
	{ "CRYPTO_secure_zalloc", NULL, ANY },
	/* Perl's allocation functions (Newx, safemalloc, savepv and their
	 * kin), in perl itself or in libperl.so; an XS module's calls are
	 * its own sites */
	{ "Perl_safesysmalloc", NULL, ANY }, { "Perl_safesyscalloc", NULL, ANY },
	{ "Perl_safesysrealloc", NULL, ANY }, { "Perl_safesysfree", NULL, ANY },
	{ "Perl_savepv", NULL, ANY }, { "Perl_savepvn", NULL, ANY },
	{ "Perl_savesharedpv", NULL, ANY }, { "Perl_savesharedpvn", NULL, ANY },
	/* CUDA runtime and driver entry points (the static runtime's
	 * cudaMalloc lives in the program and reaches the driver through
	 * cuGetProcAddress) */
	{ "cudaMalloc", NULL, ANY }, { "cudaMallocHost", NULL, ANY }, { "cudaHostAlloc", NULL, ANY },
	{ "cudaMallocManaged", NULL, ANY }, { "cudaMallocAsync", NULL, ANY },
	{ "cudaMallocPitch", NULL, ANY }, { "cudaMalloc3D", NULL, ANY },
	{ "cudaMallocFromPoolAsync", NULL, ANY },
	{ "cudaFree", NULL, ANY }, { "cudaFreeHost", NULL, ANY }, { "cudaFreeAsync", NULL, ANY },
	{ "cuMemAlloc", NULL, ANY }, { "cuMemAlloc_v2", "cuMemAlloc", ANY },
	{ "cuMemAllocHost", NULL, ANY }, { "cuMemAllocHost_v2", "cuMemAllocHost", ANY },
	{ "cuMemHostAlloc", NULL, ANY }, { "cuMemAllocManaged", NULL, ANY },
	{ "cuMemAllocPitch", NULL, ANY }, { "cuMemAllocPitch_v2", "cuMemAllocPitch", ANY },
	{ "cuMemAllocAsync", NULL, ANY }, { "cuMemCreate", NULL, ANY },
	{ "cudaHostRegister", NULL, ANY }, { "cuMemHostRegister", NULL, ANY },
	{ "cuMemHostRegister_v2", "cuMemHostRegister", ANY },
};

/* The user's names: pattern and the API reports give (NULL: the frame's name). */
#define MAX_USER 1024
static struct user_fn { char *pattern; char *api; } *user;
static size_t n_user, cap_user;

int alloc_fn_add(const char *name)
{
	const char *p;
	char *pat;

	if (!*name)
		return -1;
	size_t i;

	for (p = name; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == '(' || *p == ')')
			return -1;
	for (i = 0; i < n_user; i++)
		if (!strcmp(user[i].pattern + 1, name) && strlen(name) + 2 == strlen(user[i].pattern))
			return 0; /* already there */
	if (n_user == MAX_USER)
		return -1;
	ALLOC_GROW(user, n_user, cap_user);
	/* anchored at both ends: the whole name, or what '*' allows */
	pat = xmalloc(strlen(name) + 3);
	sprintf(pat, "^%s$", name);
	user[n_user].pattern = pat;
	user[n_user].api = strchr(name, '*') ? NULL : xstrdup(name);
	n_user++;
	return 0;
}

/* A name kept for the process's life: the API of a '*' pattern's match. */
static const char *intern(const char *name)
{
	static char **names;
	static size_t n, cap;
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return names[i];
	ALLOC_GROW(names, n, cap);
	names[n] = xstrdup(name);
	return names[n++];
}

/*
 * A function's name without its parameters, clone suffix or template
 * arguments of its result: "operator new" for "operator new(unsigned long)",
 * "add" for "add.constprop.0". Into buf; NULL if it does not fit.
 */
static const char *bare_name(const char *fn, char *buf, size_t len)
{
	static const char anon[] = "(anonymous namespace)";
	const char *p = fn, *end;
	size_t n;

	for (;;) {
		end = strchr(p, '(');
		if (!end || strncmp(end, anon, sizeof(anon) - 1))
			break;
		p = end + sizeof(anon) - 1;
	}
	n = end ? (size_t)(end - fn) : strlen(fn);
	if (n >= len)
		return NULL;
	memcpy(buf, fn, n);
	buf[n] = 0;
	/* C names have no '.': "foo.part.0", "foo.cold" are clones of foo */
	if (!strchr(buf, ':') && strchr(buf, '.'))
		*strchr(buf, '.') = 0;
	/* CUDA's per-thread default stream variants: cudaMallocAsync_ptsz */
	n = strlen(buf);
	if (n > 5 && !strncmp(buf, "cu", 2) &&
	    (!strcmp(buf + n - 5, "_ptsz") || !strcmp(buf + n - 5, "_ptds")))
		buf[n - 5] = 0;
	return buf;
}

static const char *base_name(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

static int in_scope(enum scope scope, const struct sym_frame *f)
{
	const char *b = base_name(f->module);

	switch (scope) {
	case PYTHON:
		return f->interpreter;
	case NUMPY:
		return b && !strncmp(b, "_multiarray_umath", 17);
	default:
		return 1;
	}
}

const char *alloc_fn_match(const struct sym_frame *f)
{
	return alloc_fn_match_name(f->function, f);
}

const char *alloc_fn_match_name(const char *function, const struct sym_frame *f)
{
	char buf[512];
	const char *name;
	size_t i;

	if (!function || !(name = bare_name(function, buf, sizeof(buf))))
		return NULL;
	for (i = 0; i < ARRAY_SIZE(builtins); i++)
		if (!strcmp(name, builtins[i].name) && in_scope(builtins[i].scope, f))
			return builtins[i].api ? builtins[i].api : builtins[i].name;
	for (i = 0; i < n_user; i++)
		if (pattern_match(user[i].pattern, name))
			return user[i].api ? user[i].api : intern(name);
	return NULL;
}
