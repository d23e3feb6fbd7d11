/*
 * exec_target.c - what an exec is about to run, read from its file just
 * before the call: does it need a sanitizer's runtime that refuses to
 * start after a preloaded library? AddressSanitizer's (gcc's libasan.so,
 * clang's libclang_rt.asan-*.so) and HWASan's check that their runtime
 * is the first library loaded and exit ("ASan runtime does not come
 * first in initial library list", exit 1) when libmemprov.so comes
 * before it in LD_PRELOAD; such a program must start without it.
 * Runtimes linked into the program, or that accept a library before
 * them (ThreadSanitizer's libtsan.so), need nothing here: libmemprov.so
 * stands aside in such a process by itself (elfsym.c).
 *
 * A script's interpreter is looked at, one level down. A command looked
 * up in PATH (execvp) is the first file of that name that opens, as
 * execvp finds it when nothing stands in the way.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys. Raw system calls
 * only, nothing allocated: it runs in a vfork child too, on the parent's
 * stack, and on a thread's that may be glibc's least (16 KiB): it takes
 * under 3 KiB of it.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec_target.h"


static void copy_bytes(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *p = src;

	while (n--)
		*d++ = *p++;
}

static int open_file(const char *path)
{
	return (int)mp_rsys(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC, 0, 0, 0);
}

static void close_file(int fd)
{
	mp_rsys(SYS_close, fd, 0, 0, 0, 0, 0);
}

/* Does the DT_NEEDED name at file offset off name a runtime that must come first? */
int mp_exec_first_runtime(const char *name, size_t n)
{
	static const char *const first[] = { "libasan.so", "libhwasan.so", "libclang_rt.asan",
					     "libclang_rt.hwasan" };

	for (unsigned i = 0; i < sizeof(first) / sizeof(first[0]); i++) {
		const char *a = name, *f = first[i];

		while (*f && a < name + n && *a == *f)
			a++, f++;
		if (!*f)
			return 1;
	}
	return 0;
}

static int first_runtime_at(int fd, uint64_t off)
{
	char name[24];
	size_t got = mp_sys_pread(fd, off, name, sizeof(name) - 1);

	name[got] = 0;
	return mp_exec_first_runtime(name, got);
}

#define MAX_LOADS 8
#define MAX_NEEDED 16
#define DYN_BATCH 16
#define DYN_MAX 1024
#define PATH_ROOM 1024 /* a longer candidate in PATH is not looked at */

/* An ELF executable's DT_NEEDED: 1 when one of them must come first.
 * head: the file's first got bytes (the program headers, most often). */
static int elf_needs_first(int fd, const char *head, size_t got)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)head;
	Elf64_Phdr ph[4];
	struct {
		uint64_t vaddr, offset, filesz;
	} loads[MAX_LOADS];
	Elf64_Dyn dyn[DYN_BATCH];
	uint64_t dyn_off = 0, dyn_size = 0, strtab = 0, needed[MAX_NEEDED], str_off = UINT64_MAX;
	int nloads = 0, nneeded = 0, done = 0;

	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr))
		return 0; /* another class: libmemprov.so is not loaded into it anyway */
	for (unsigned i = 0; i < eh->e_phnum; i += 4) {
		unsigned n = eh->e_phnum - i < 4 ? eh->e_phnum - i : 4;

		uint64_t off = eh->e_phoff + (uint64_t)i * sizeof(ph[0]);

		if (off + n * sizeof(ph[0]) <= got)
			copy_bytes(ph, head + off, n * sizeof(ph[0]));
		else if (mp_sys_pread(fd, off, ph, n * sizeof(ph[0])) != n * sizeof(ph[0]))
			return 0;
		for (unsigned k = 0; k < n; k++) {
			if (ph[k].p_type == PT_DYNAMIC) {
				dyn_off = ph[k].p_offset;
				dyn_size = ph[k].p_filesz;
			} else if (ph[k].p_type == PT_LOAD && nloads < MAX_LOADS) {
				loads[nloads].vaddr = ph[k].p_vaddr;
				loads[nloads].offset = ph[k].p_offset;
				loads[nloads++].filesz = ph[k].p_filesz;
			}
		}
	}
	for (uint64_t at = 0; !done && at < dyn_size && at < DYN_MAX * sizeof(dyn[0]);
	     at += sizeof(dyn)) {
		size_t got = mp_sys_pread(fd, dyn_off + at, dyn, sizeof(dyn)) / sizeof(dyn[0]);

		if (!got)
			break;
		for (size_t k = 0; k < got && !done; k++) {
			if (dyn[k].d_tag == DT_NULL)
				done = 1;
			else if (dyn[k].d_tag == DT_STRTAB)
				strtab = dyn[k].d_un.d_ptr;
			else if (dyn[k].d_tag == DT_NEEDED && nneeded < MAX_NEEDED)
				needed[nneeded++] = dyn[k].d_un.d_val;
		}
	}
	/* DT_STRTAB is an address: the file offset is its load segment's */
	for (int k = 0; k < nloads; k++)
		if (strtab >= loads[k].vaddr && strtab - loads[k].vaddr < loads[k].filesz)
			str_off = strtab - loads[k].vaddr + loads[k].offset;
	if (str_off == UINT64_MAX)
		return 0;
	for (int k = 0; k < nneeded; k++)
		if (first_runtime_at(fd, str_off + needed[k]))
			return 1;
	return 0;
}

/* The file open at fd: an ELF executable, or a script whose interpreter is one (depth 0). */
static int needs_first(int fd, int depth)
{
	union {
		Elf64_Ehdr eh;
		char line[768]; /* the program headers too, mostly */
	} u;
	size_t got = mp_sys_pread(fd, 0, &u, sizeof(u) - 1);

	if (got >= sizeof(u.eh) && u.line[0] == 0x7f && u.line[1] == 'E' && u.line[2] == 'L' &&
	    u.line[3] == 'F')
		return elf_needs_first(fd, u.line, got);
	if (got > 2 && u.line[0] == '#' && u.line[1] == '!' && !depth) {
		char *p = u.line + 2, *end;
		int ifd, r;

		u.line[got < 256 ? got : 256] = 0; /* the kernel reads a #! line so far (Linux 5.1) */
		while (*p == ' ' || *p == '\t')
			p++;
		for (end = p; *end && *end != ' ' && *end != '\t' && *end != '\n'; end++)
			;
		*end = 0;
		if (!*p || (ifd = open_file(p)) < 0)
			return 0;
		r = needs_first(ifd, 1);
		close_file(ifd);
		return r;
	}
	return 0;
}

/* PATH's value in env, or glibc's default when it has none. */
static const char *path_of(char *const *env)
{
	for (; env && *env; env++)
		if (mp_starts(*env, "PATH="))
			return *env + 5;
	return "/bin:/usr/bin";
}

static int has_slash(const char *s)
{
	for (; *s; s++)
		if (*s == '/')
			return 1;
	return 0;
}

/* Would execve run the file at path: a regular file we may execute? Its
 * descriptor, or -1 (execvp goes on to the next directory of PATH). */
static int open_runnable(const char *path)
{
	struct stat st;
	int fd;

	if (mp_rsys(SYS_faccessat, AT_FDCWD, (long)path, X_OK, 0, 0, 0) < 0 ||
	    (fd = open_file(path)) < 0)
		return -1;
	if (mp_rsys(SYS_fstat, fd, (long)&st, 0, 0, 0, 0) < 0 || !S_ISREG(st.st_mode)) {
		close_file(fd);
		return -1;
	}
	return fd;
}

int mp_exec_needs_first(const char *file, int fd, int search, char *const *env)
{
	char buf[PATH_ROOM];
	int r;

	if (fd >= 0) {
		char *w;

		if ((r = needs_first(fd, 0)) || mp_rsys(SYS_pread64, fd, (long)buf, 1, 0, 0, 0) != -EBADF)
			return r;
		/* an O_PATH descriptor (fexecve takes one): its file, opened for reading */
		w = buf + mp_strlcpy(buf, "/proc/self/fd/", sizeof(buf));
		mp_utoa(w, (uint64_t)fd);
		if ((fd = open_file(buf)) < 0)
			return 0;
		r = needs_first(fd, 0);
		close_file(fd);
		return r;
	}
	if (!file || !*file)
		return 0;
	if (search && !has_slash(file)) {
		const char *dirs = path_of(env), *d;
		size_t flen = 0;

		while (file[flen])
			flen++;
		for (d = dirs;; d++) {
			const char *e = d;
			size_t n;

			while (*e && *e != ':')
				e++;
			n = (size_t)(e - d);
			if (n + 1 + flen < sizeof(buf)) {
				size_t w = 0;

				for (size_t i = 0; i < n; i++)
					buf[w++] = d[i];
				if (!n) /* an empty entry is the current directory */
					buf[w++] = '.';
				buf[w++] = '/';
				for (size_t i = 0; i <= flen; i++)
					buf[w++] = file[i];
				if ((fd = open_runnable(buf)) >= 0)
					break;
			}
			if (!*e)
				return 0;
			d = e;
		}
	} else if ((fd = open_file(file)) < 0) {
		return 0;
	}
	r = needs_first(fd, 0);
	close_file(fd);
	return r;
}
