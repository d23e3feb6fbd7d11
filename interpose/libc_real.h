/*
 * libc_real.h - the libc functions libmemprov.so interposes, listed once,
 * and the real ones behind them.
 *
 * MP_LIBC_HOOKS(X) expands X(return type, name, parameter types) for each
 * hooked function; libc_real.c expands it for the real-function pointers
 * and their resolution (the next definition after libmemprov.so, as
 * dlsym(RTLD_NEXT, ...) would find it, but read from the symbol tables:
 * no failing dlsym leaves an error buffer in the program's heap).
 * hooks_libc.c defines the memory hooks, hooks_signal.c the signal ones,
 * hooks_fd.c and hooks_dir.c the descriptor ones, init.c the process
 * hooks (exit, fork, exec).
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): libc_real.c calls elfsym and sys.
 */
#ifndef MEMPROV_LIBC_REAL_H
#define MEMPROV_LIBC_REAL_H

#include <dirent.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "sys.h"

#define MP_LIBC_HOOKS(X)                                                  \
	X(void *, malloc, (size_t))                                       \
	X(void, free, (void *))                                           \
	X(void *, calloc, (size_t, size_t))                               \
	X(void *, realloc, (void *, size_t))                              \
	X(void *, reallocarray, (void *, size_t, size_t))                 \
	X(int, posix_memalign, (void **, size_t, size_t))                 \
	X(void *, aligned_alloc, (size_t, size_t))                        \
	X(void *, memalign, (size_t, size_t))                             \
	X(void *, valloc, (size_t))                                       \
	X(void *, pvalloc, (size_t))                                      \
	X(void, free_sized, (void *, size_t))                             \
	X(void, free_aligned_sized, (void *, size_t, size_t))             \
	X(void *, mmap, (void *, size_t, int, int, int, off_t))           \
	X(void *, mmap64, (void *, size_t, int, int, int, off_t))         \
	X(int, munmap, (void *, size_t))                                  \
	X(void *, mremap, (void *, size_t, size_t, int, ...))             \
	X(void *, dlopen, (const char *, int))                            \
	X(int, dlclose, (void *))                                         \
	X(void, exit, (int))                                              \
	X(void, _exit, (int))                                             \
	X(void, _Exit, (int))                                             \
	X(pid_t, fork, (void))                                            \
	X(int, execve, (const char *, char *const *, char *const *))      \
	X(int, execvpe, (const char *, char *const *, char *const *))     \
	X(int, fexecve, (int, char *const *, char *const *))             \
	X(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
			     const posix_spawnattr_t *, char *const *, char *const *)) \
	X(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
			      const posix_spawnattr_t *, char *const *, char *const *)) \
	X(void, quick_exit, (int))                                        \
	X(int, sigaction, (int, const struct sigaction *, struct sigaction *)) \
	X(sighandler_t, signal, (int, sighandler_t))                      \
	X(sighandler_t, sysv_signal, (int, sighandler_t))                 \
	X(sighandler_t, __sysv_signal, (int, sighandler_t))               \
	X(sighandler_t, bsd_signal, (int, sighandler_t))                  \
	X(int, sigtimedwait, (const sigset_t *, siginfo_t *, const struct timespec *)) \
	X(int, sigaltstack, (const stack_t *, stack_t *))                 \
	X(void, longjmp, (struct __jmp_buf_tag *, int))                   \
	X(void, _longjmp, (struct __jmp_buf_tag *, int))                  \
	X(void, siglongjmp, (struct __jmp_buf_tag *, int))                \
	X(void, __longjmp_chk, (struct __jmp_buf_tag *, int))             \
	X(int, prctl, (int, ...))                                         \
	X(void *, sbrk, (intptr_t))                                       \
	X(int, brk, (void *))                                             \
	X(long, syscall, (long, ...))                                     \
	X(int, fcntl, (int, int, ...))                                    \
	X(int, fcntl64, (int, int, ...))                                  \
	X(int, dup, (int))                                                \
	X(int, dup2, (int, int))                                          \
	X(int, dup3, (int, int, int))                                     \
	X(int, close, (int))                                              \
	X(int, close_range, (unsigned, unsigned, int))                    \
	X(void, closefrom, (int))                                         \
	X(int, fstat, (int, struct stat *))                               \
	X(int, fstat64, (int, struct stat64 *))                           \
	X(int, fstatat, (int, const char *, struct stat *, int))          \
	X(int, fstatat64, (int, const char *, struct stat64 *, int))      \
	X(int, statx, (int, const char *, int, unsigned int, struct statx *)) \
	X(int, open, (const char *, int, ...))                            \
	X(int, open64, (const char *, int, ...))                          \
	X(int, openat, (int, const char *, int, ...))                     \
	X(int, openat64, (int, const char *, int, ...))                   \
	X(int, __open_2, (const char *, int))                             \
	X(int, __open64_2, (const char *, int))                           \
	X(int, __openat_2, (int, const char *, int))                      \
	X(int, __openat64_2, (int, const char *, int))                    \
	X(int, creat, (const char *, mode_t))                             \
	X(int, creat64, (const char *, mode_t))                           \
	X(FILE *, fopen, (const char *, const char *))                    \
	X(FILE *, fopen64, (const char *, const char *))                  \
	X(FILE *, freopen, (const char *, const char *, FILE *))          \
	X(FILE *, freopen64, (const char *, const char *, FILE *))        \
	X(int, truncate, (const char *, off_t))                           \
	X(int, truncate64, (const char *, off64_t))                       \
	X(int, ftruncate, (int, off_t))                                   \
	X(int, ftruncate64, (int, off64_t))                               \
	X(int, fallocate, (int, int, off_t, off_t))                       \
	X(int, fallocate64, (int, int, off64_t, off64_t))                 \
	X(DIR *, opendir, (const char *))                                 \
	X(DIR *, fdopendir, (int))                                        \
	X(struct dirent *, readdir, (DIR *))                              \
	X(struct dirent64 *, readdir64, (DIR *))                          \
	X(int, closedir, (DIR *))                                         \
	X(int, pthread_create, (pthread_t *, const pthread_attr_t *,      \
				void *(*)(void *), void *))               \
	X(int, __libc_start_main, (int (*)(int, char **, char **), int,  \
				   char **, void (*)(void), void (*)(void), \
				   void (*)(void), void *))

#define MP_REAL_DECL(ret, name, params) extern ret(*mp_real_##name) params MP_HIDDEN;
MP_LIBC_HOOKS(MP_REAL_DECL)
#undef MP_REAL_DECL

/* 1 once mp_hooks_resolve has run (acquire). */
extern int mp_hooks_ready MP_HIDDEN;

/*
 * Where an object ahead of libmemprov.so in the lookup scope defines
 * malloc (an allocator preloaded before it, or the program's own), the
 * program's calls bind to that object's, not to memprov's hooks, and
 * mp_heap_ahead names it ("" the program); else NULL. The real functions
 * stay the next ones after memprov (a library ahead that wraps malloc
 * calls memprov's next, and memprov must not call it back); a hook the
 * object left to memprov (jemalloc defines no reallocarray) forwards to
 * the same function after memprov, whose own calls bind to the object.
 */
extern const char *mp_heap_ahead MP_HIDDEN;

void mp_hooks_resolve(void) MP_HIDDEN;

static inline void mp_hooks_need(void)
{
	if (MP_UNLIKELY(!__atomic_load_n(&mp_hooks_ready, __ATOMIC_ACQUIRE)))
		mp_hooks_resolve();
}

/* Not declared by glibc 2.36 (C23, and the old BSD name). */
sighandler_t bsd_signal(int sig, sighandler_t h);
void __longjmp_chk(struct __jmp_buf_tag env[1], int val) __attribute__((noreturn));
void free_sized(void *p, size_t size);
void free_aligned_sized(void *p, size_t align, size_t size);

#endif /* MEMPROV_LIBC_REAL_H */
