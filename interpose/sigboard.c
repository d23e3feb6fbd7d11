/*
 * sigboard.c - the command's side of memprov run's signal board
 * (include/memprov_sigboard.h): each signal another process sent this
 * process, when a handler of the program (or memprov's own watch of a
 * deadly signal) runs for it, is noted on the page memprov run shares.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../include/memprov_sigboard.h"
#include "sigboard.h"

static struct mp_sigboard *board;

void mp_sigboard_open(const char *spec)
{
	const char *colon = spec ? strrchr(spec, ':') : NULL;
	char path[64];
	void *p;
	long fd;

	if (!colon || (size_t)(colon - spec) >= sizeof(path) ||
	    atol(colon + 1) != (long)mp_syscall(SYS_getpid))
		return; /* not memprov run's command (its child, or no board) */
	memcpy(path, spec, (size_t)(colon - spec));
	path[colon - spec] = 0;
	fd = mp_syscall(SYS_openat, AT_FDCWD, path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return;
	/* raw calls: memprov's own file mapping is not the program's memory */
	p = mp_sys_mmap(NULL, sizeof(*board), PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	mp_syscall(SYS_close, fd);
	if ((uintptr_t)p >= (uintptr_t)-4095)
		return;
	if (((struct mp_sigboard *)p)->magic != MP_SIGBOARD_MAGIC ||
	    ((struct mp_sigboard *)p)->pid != (int32_t)mp_syscall(SYS_getpid)) {
		mp_sys_munmap(p, sizeof(*board));
		return;
	}
	__atomic_store_n(&board, (struct mp_sigboard *)p, __ATOMIC_RELEASE);
}

void mp_sigboard_note(int sig, const siginfo_t *si)
{
	struct mp_sigboard *b = __atomic_load_n(&board, __ATOMIC_ACQUIRE);
	struct mp_sigboard_slot *s;

	if (!b || !si || si->si_code > 0 || sig <= 0 || sig >= MP_SIGBOARD_SIGS ||
	    b->pid != (int32_t)mp_syscall(SYS_getpid))
		return; /* sent by the kernel (a terminal), or a child of the command */
	s = &b->slot[sig];
	__atomic_store_n(&s->ns, mp_now(), __ATOMIC_RELAXED);
	__atomic_store_n(&s->sender, (int32_t)si->si_pid, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->count, 1, __ATOMIC_RELEASE);
}
