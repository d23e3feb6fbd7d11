/*
 * modules.c - record the objects loaded in the process (MP_REC_MODULE:
 * path, load bias, PT_LOAD range, GNU build-id) at start-up and after each
 * dlopen/dlclose, and MP_REC_UNLOAD for those that went away, so that the
 * analyzer can symbolize offline. The path is the file the kernel mapped
 * (absolute, links resolved), not the name the object was loaded by. A
 * fixed table remembers what was already recorded: no malloc.
 *
 * Layer: 4 capture (docs/ARCHITECTURE.md): calls trace_writer, trace_file (the
 * header's executable), unwind and sys.
 */
#include <elf.h>
#include <link.h>
#include <pthread.h>
#include <fcntl.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "modules.h"
#include "trace_file.h"
#include "unwind.h"
#include "writer.h"

#define MAX_MODULES 4096

struct known {
	uintptr_t base, lo;
	int seen;
	int written;       /* its MP_REC_MODULE is in this process's trace */
	uint32_t path_at;  /* its path in paths[] (path_len 0: not kept) */
	uint32_t path_len;
};

static struct known mods[MAX_MODULES] MP_BIG_BSS;
static int nmods;

/*
 * The paths recorded, kept for a forked child: its objects are its
 * parent's, and its trace records them again from here without reading
 * /proc/self/maps (a quarter of a forked child's start-up: a shell's
 * fork before each exec paid it). Bytes are used as paths are added.
 */
#define PATHS_MAX (64u << 10)
static char paths[PATHS_MAX] MP_BIG_BSS;
static uint32_t paths_used;
static pthread_mutex_t mods_lock = PTHREAD_MUTEX_INITIALIZER;
static char exe_path[512];

/*
 * The paths of the modules a scan will record, read from /proc/self/maps
 * in one pass before it (with mods_lock held): a process starts with half
 * a dozen objects, and a read of the maps per object cost a short-lived
 * process a quarter of a millisecond.
 */
#define BATCH 32
#define BATCH_PATH 512
static struct {
	uintptr_t lo;
	int found;             /* 1: path is it; 0: no file there; -1: too long, ask again */
	char path[BATCH_PATH];
} batch[BATCH] MP_BIG_BSS;
static int n_batch;

static void range_of(const struct dl_phdr_info *info, uintptr_t *lo, uintptr_t *hi,
		     int exec_only)
{
	int i;

	*lo = UINTPTR_MAX;
	*hi = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD || (exec_only && !(ph->p_flags & PF_X)))
			continue;
		if (a < *lo)
			*lo = a;
		if (a + ph->p_memsz > *hi)
			*hi = a + ph->p_memsz;
	}
	if (*lo > *hi)
		*lo = *hi = 0;
}

/*
 * The descriptor of the note OWNER/TYPE in the PT_NOTE segments (*len:
 * its length), or NULL.
 */
static const uint8_t *find_note(const struct dl_phdr_info *info, const char *owner,
				uint32_t type, uint32_t *len)
{
	uint32_t owner_len = (uint32_t)strlen(owner) + 1;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p, *end;

		if (ph->p_type != PT_NOTE)
			continue;
		p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
			const char *name = p + sizeof(*nh);
			const uint8_t *desc = (const uint8_t *)name + ((nh->n_namesz + 3) & ~3u);

			if ((const char *)desc + nh->n_descsz > end)
				break;
			/* the name NUL-terminated, perhaps padded: Go's "Go" has 4 */
			if (nh->n_type == type && nh->n_namesz >= owner_len &&
			    !memcmp(name, owner, owner_len)) {
				*len = nh->n_descsz;
				return desc;
			}
			p = (const char *)desc + ((nh->n_descsz + 3) & ~3u);
		}
	}
	return NULL;
}

/* Copy the GNU build-id; returns its length. */
static int build_id(const struct dl_phdr_info *info, uint8_t *out)
{
	uint32_t len;
	const uint8_t *desc = find_note(info, "GNU", NT_GNU_BUILD_ID, &len);
	int n = desc ? (len > 32 ? 32 : (int)len) : 0;

	if (n)
		memcpy(out, desc, (size_t)n);
	return n;
}

/*
 * A Go program carries Go's build ID note (owner "Go", type 4) in a
 * PT_NOTE segment, linked by Go itself or by the system linker (cgo).
 */
#define NT_GO_BUILD_ID 4

static int go_program(const struct dl_phdr_info *info)
{
	uint32_t len;

	return find_note(info, "Go", NT_GO_BUILD_ID, &len) != NULL;
}

MP_REALIGN static void emit_module(const struct dl_phdr_info *info, const char *path)
{
	size_t plen = strnlen(path, 4000) + 1;
	union {
		struct mp_rec_module m;
		char buf[sizeof(struct mp_rec_module) + 4008];
	} r;
	uintptr_t lo, hi;

	range_of(info, &lo, &hi, 0);
	memset(&r, 0, sizeof(r.m) + MP_REC_ALIGN(plen));
	r.m.h.type = MP_REC_MODULE;
	r.m.h.size = (uint16_t)(sizeof(r.m) + MP_REC_ALIGN(plen));
	r.m.base = info->dlpi_addr;
	r.m.lo = lo;
	r.m.hi = hi;
	r.m.build_id_len = (uint8_t)build_id(info, r.m.build_id);
	r.m.path_len = (uint16_t)plen;
	memcpy(r.m.path, path, plen - 1);
	mp_write_record(&r.m.h);
}

/*
 * The kernel names a file deleted since it was mapped "PATH (deleted)":
 * PATH is what the object was. A file whose own name ends so (it exists
 * under that name) keeps it.
 */
static void strip_deleted(char *path)
{
	size_t n = strlen(path);
	struct stat st;

	if (n > 10 && !strcmp(path + n - 10, " (deleted)") &&
	    mp_rsys(SYS_newfstatat, AT_FDCWD, (long)path, (long)&st, 0, 0, 0) < 0)
		path[n - 10] = 0;
}

struct mapped {
	uintptr_t addr;
	char *out;
	size_t size;
};

static int mapped_line(uintptr_t lo, uintptr_t hi, const char *rest, void *arg)
{
	struct mapped *m = arg;
	const char *slash = strchr(rest, '/');

	if (m->addr < lo || m->addr >= hi || !slash)
		return 0;
	mp_strlcpy(m->out, slash, m->size);
	strip_deleted(m->out);
	return 1;
}

/*
 * The file the kernel has mapped at addr, from /proc/self/maps: absolute,
 * with symbolic links and $ORIGIN resolved, whatever name the object was
 * loaded by ("./libleaky.so" from dlopen, a relative DT_NEEDED path).
 * 1 and out filled, or 0 (no file there: the vDSO).
 */
static int mapped_path(uintptr_t addr, char *out, size_t size)
{
	struct mapped m = { addr, out, size };
	int i;

	for (i = 0; i < n_batch; i++)
		if (batch[i].lo == addr && batch[i].found >= 0) {
			if (batch[i].found)
				mp_strlcpy(out, batch[i].path, size);
			return batch[i].found;
		}
	return mp_maps_each(mapped_line, &m);
}

/* The recorded object at (base, lo): its index in mods, or -1. */
static int find_mod(uintptr_t base, uintptr_t lo)
{
	int i;

	for (i = 0; i < nmods; i++)
		if (mods[i].base == base && mods[i].lo == lo)
			return i;
	return -1;
}

/* "/proc/self/map_files/LO-HI": the link to the file mapped at [lo, hi). */
static void map_file_link(char *out, uintptr_t lo, uintptr_t hi)
{
	static const char digits[] = "0123456789abcdef";
	char *p = out + mp_strlcpy(out, "/proc/self/map_files/", 24);
	int k;

	for (k = 0; k < 2; k++) {
		uintptr_t v = k ? hi : lo;
		int shift = 60;

		while (shift > 0 && !(v >> shift))
			shift -= 4; /* as the kernel names it: no leading zeros */
		for (; shift >= 0; shift -= 4)
			*p++ = digits[(v >> shift) & 15];
		*p++ = k ? 0 : '-';
	}
}

/*
 * The file mapped at info's first PT_LOAD segment, read from its link in
 * /proc/self/map_files: the mapping's exact range names it, and that is
 * where the loader (and the kernel, for the program) put the segment's
 * file bytes, from its page to the page after its last file byte. The
 * same path as /proc/self/maps gives, for one system call: reading the
 * whole map was half of a short process's start-up scan (`ls`: 50 of
 * 100 microseconds), and every dlopen read it again. 1 and out filled,
 * or 0 (another layout, a /proc without the links): the map is read.
 */
static int link_path(const struct dl_phdr_info *info, char *out, size_t size)
{
	const ElfW(Phdr) *first = NULL;
	char link[64];
	uintptr_t lo, hi;
	long n;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && (!first || ph->p_vaddr < first->p_vaddr))
			first = ph;
	}
	if (!first || !first->p_filesz)
		return 0;
	lo = (info->dlpi_addr + first->p_vaddr) & ~(uintptr_t)4095;
	hi = (info->dlpi_addr + first->p_vaddr + first->p_filesz + 4095) & ~(uintptr_t)4095;
	map_file_link(link, lo, hi);
	n = mp_syscall(SYS_readlinkat, AT_FDCWD, link, out, size - 1);
	if (n <= 0 || (size_t)n >= size - 1 || out[0] != '/')
		return 0;
	out[n] = 0;
	strip_deleted(out);
	return 1;
}

static int need_maps; /* a module of the batch has no path from its link */

MP_REALIGN static int want_path(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t lo, hi;

	(void)size;
	(void)arg;
	range_of(info, &lo, &hi, 0);
	if (lo < hi && n_batch < BATCH && find_mod(info->dlpi_addr, lo) < 0) {
		/* the vDSO has no file: neither a link nor a map line names one */
		int vdso = lo == getauxval(AT_SYSINFO_EHDR);

		batch[n_batch].lo = lo;
		batch[n_batch].found =
			!vdso && link_path(info, batch[n_batch].path, sizeof(batch[n_batch].path));
		need_maps |= !batch[n_batch].found && !vdso;
		n_batch++;
	}
	return 0;
}

static int batch_line(uintptr_t lo, uintptr_t hi, const char *rest, void *arg)
{
	const char *slash = strchr(rest, '/');
	int i;

	(void)arg;
	if (!slash)
		return 0;
	for (i = 0; i < n_batch; i++) {
		struct mapped m = { batch[i].lo, batch[i].path, sizeof(batch[i].path) };

		if (batch[i].found || batch[i].lo < lo || batch[i].lo >= hi)
			continue;
		mapped_line(lo, hi, rest, &m);
		batch[i].found = strlen(batch[i].path) + 1 < sizeof(batch[i].path) ? 1 : -1;
	}
	return 0;
}

MP_REALIGN static int scan_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *path = info->dlpi_name;
	char real[4096];
	uintptr_t lo, hi;
	int i;

	(void)size;
	(void)arg;
	range_of(info, &lo, &hi, 0);
	if ((i = find_mod(info->dlpi_addr, lo)) >= 0) {
		mods[i].seen = 1;
		if (!mods[i].written) {
			/* a forked child's: its parent's path (mp_modules_reset) */
			mods[i].written = 1;
			emit_module(info, paths + mods[i].path_at);
			mp_unwind_add_file(info, paths + mods[i].path_at);
		}
		return 0;
	}
	if (lo < hi && mapped_path(lo, real, sizeof(real)))
		path = real;
	else if (!path || !*path) {
		if (!exe_path[0])
			mp_self_exe(exe_path, sizeof(exe_path));
		path = exe_path;
	}
	if (!info->dlpi_name || !info->dlpi_name[0]) {
		mp_trace_set_exe(path); /* the program's own: the header names it */
		if (go_program(info))
			mp_trace_add_flags(MP_HF_GO);
	}
	if (nmods < MAX_MODULES) {
		size_t plen = strlen(path) + 1;

		memset(&mods[nmods], 0, sizeof(mods[nmods]));
		mods[nmods].base = info->dlpi_addr;
		mods[nmods].lo = lo;
		mods[nmods].seen = 1;
		mods[nmods].written = 1;
		if (plen > 1 && plen <= PATHS_MAX - paths_used) {
			memcpy(paths + paths_used, path, plen);
			mods[nmods].path_at = paths_used;
			mods[nmods].path_len = (uint32_t)plen;
			paths_used += (uint32_t)plen;
		}
		nmods++;
	}
	emit_module(info, path);
	if (path != info->dlpi_name)
		mp_unwind_add_file(info, path);
	return 0;
}

/* Record new modules and the unloading of those gone since the last scan. */
void mp_modules_scan(void)
{
	struct mp_rec_unload r;
	mp_sigset old;
	int blocked;
	int i, j;

	/* no handler may leave by longjmp while the locks are held */
	blocked = mp_signals_block(&old);
	pthread_mutex_lock(&mods_lock);
	for (i = 0; i < nmods; i++)
		mods[i].seen = 0;
	n_batch = 0;
	need_maps = 0;
	dl_iterate_phdr(want_path, NULL);
	if (need_maps)
		mp_maps_each(batch_line, NULL);
	dl_iterate_phdr(scan_one, NULL);
	n_batch = 0;
	for (i = j = 0; i < nmods; i++) {
		if (mods[i].seen) {
			mods[j++] = mods[i];
			continue;
		}
		mp_unwind_forget_file(mods[i].base);
		if (!mods[i].written)
			continue;
		memset(&r, 0, sizeof(r));
		r.h.type = MP_REC_UNLOAD;
		r.h.size = sizeof(r);
		r.base = mods[i].base;
		mp_write_record(&r.h);
	}
	nmods = j;
	pthread_mutex_unlock(&mods_lock);
	mp_signals_restore(&old, blocked);
}

void mp_modules_reset(void)
{
	int busy = pthread_mutex_trylock(&mods_lock) != 0, i, j;

	pthread_mutex_init(&mods_lock, NULL);
	if (busy) {
		/* another thread was scanning at the fork: the table may be half
		 * updated; the child's scan finds every object anew */
		nmods = 0;
		return;
	}
	/* the objects stay, to be written again; one whose path was not kept is found anew */
	for (i = j = 0; i < nmods; i++) {
		if (!mods[i].path_len)
			continue;
		mods[j] = mods[i];
		mods[j++].written = 0;
	}
	nmods = j;
}
