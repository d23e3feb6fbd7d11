/*
 * debuginfo.c - the symbolizer's file opening and its own debug-file
 * search, done the way libdwfl's standard search does it (build-id
 * directory, then the debuglink or NAME.debug beside the module, in its
 * .debug directory and under /usr/lib/debug; dwz files by build-id and
 * by the name the DWARF gives), but opening each candidate through
 * debuginfo_open, and checking build-ids before any file is used.
 */
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "debuginfo.h"
#include "util.h"

#define DEBUG_DIR "/usr/lib/debug"
#define ELF_MIN 64          /* an ELF header */

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif

/* /proc, /sys and their like: files that look regular but are not data. */
static int pseudo_fs(const char *path)
{
	struct statfs sf;

	if (statfs(path, &sf) < 0)
		return 0;
	return sf.f_type == PROC_SUPER_MAGIC || sf.f_type == SYSFS_MAGIC ||
	       sf.f_type == DEBUGFS_MAGIC || sf.f_type == TRACEFS_MAGIC;
}

int debuginfo_open(const char *path, off_t min_size)
{
	struct stat before, after;
	int fd;

	if (stat(path, &before) < 0)
		return -1;
	if (!S_ISREG(before.st_mode) || before.st_size < min_size || pseudo_fs(path)) {
		errno = EINVAL;
		return -1;
	}
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* swapped between the check and the open: not what was checked */
	if (fstat(fd, &after) < 0 || !S_ISREG(after.st_mode) || after.st_dev != before.st_dev ||
	    after.st_ino != before.st_ino || after.st_size < min_size) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

/* ---- checks on a candidate ---- */

/* Does the ELF file on fd carry this build-id? */
static int has_build_id(int fd, const void *id, size_t len, int need_dwarf)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *p;
	ssize_t n;
	int ok = 0;

	if (!e)
		return 0;
	n = dwelf_elf_gnu_build_id(e, &p);
	if (n > 0 && (size_t)n == len && !memcmp(p, id, len)) {
		ok = 1;
		if (need_dwarf) {
			Dwarf *dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);

			ok = dw != NULL;
			if (dw)
				dwarf_end(dw);
		}
	}
	elf_end(e);
	return ok;
}

/* The CRC-32 .gnu_debuglink records (zlib's polynomial), of all of fd. */
static int file_crc(int fd, uint32_t *out)
{
	static uint32_t table[256];
	unsigned char buf[65536];
	uint32_t crc = 0xffffffffu;
	off_t off = 0;
	ssize_t n;
	int i, j;

	if (!table[1])
		for (i = 0; i < 256; i++) {
			uint32_t c = (uint32_t)i;

			for (j = 0; j < 8; j++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		for (i = 0; i < n; i++)
			crc = table[(crc ^ buf[i]) & 0xff] ^ (crc >> 8);
		off += n;
	}
	*out = crc ^ 0xffffffffu;
	return n < 0 ? -1 : 0;
}

/* What a debug file must match: the module's build-id, else the debuglink's CRC. */
struct want {
	const unsigned char *id;
	size_t id_len;
	int check_crc;
	uint32_t crc;
	int need_dwarf;         /* dwz files: DWARF that libdw can read */
	dev_t dev;              /* the module itself (not its own debug file) */
	ino_t ino;
};

/* Open candidate path if it is a debug file that w wants; -1 if not. */
static int try_candidate(const char *path, const struct want *w, char **name)
{
	struct stat st;
	uint32_t crc;
	int fd = debuginfo_open(path, ELF_MIN), ok;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) == 0 && st.st_dev == w->dev && st.st_ino == w->ino)
		ok = 0;
	else if (w->id_len)
		ok = has_build_id(fd, w->id, w->id_len, w->need_dwarf);
	else if (w->check_crc)
		ok = file_crc(fd, &crc) == 0 && crc == w->crc;
	else
		ok = 1;
	if (!ok) {
		close(fd);
		return -1;
	}
	*name = xstrdup(path);
	return fd;
}

static int try_build_id(const struct want *w, char **name)
{
	char path[sizeof(DEBUG_DIR "/.build-id/") + 3 + 2 * 64 + sizeof(".debug")];
	size_t i, n;

	if (w->id_len < 2 || w->id_len > 64)
		return -1;
	n = (size_t)sprintf(path, "%s/.build-id/%02x/", DEBUG_DIR, w->id[0]);
	for (i = 1; i < w->id_len; i++)
		n += (size_t)sprintf(path + n, "%02x", w->id[i]);
	strcpy(path + n, ".debug");
	return try_candidate(path, w, name);
}

static int try_join(const char *a, const char *b, const char *c, const struct want *w, char **name)
{
	char *path = xmalloc(strlen(a) + strlen(b) + strlen(c) + 3);
	int fd;

	sprintf(path, "%s%s%s%s%s", a, *b ? "/" : "", b, *c ? "/" : "", c);
	fd = try_candidate(path, w, name);
	free(path);
	return fd;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* NAME in the module's directory dir, its .debug and under /usr/lib/debug. */
static int try_dir(const char *dir, const char *name, const struct want *w, char **out)
{
	int fd = try_join(dir, "", name, w, out);

	if (fd < 0)
		fd = try_join(dir, ".debug", name, w, out);
	if (fd < 0 && dir[0] == '/')
		fd = try_join(DEBUG_DIR, dir + 1, name, w, out);
	return fd;
}

/* The module's directories: as named, and as resolved when a symlink. */
static int try_dirs(const char *file_name, const char *name, const struct want *w, char **out)
{
	char *dir = xstrndup(file_name, (size_t)(base_name(file_name) - file_name)), *real;
	int fd;

	if (dir[0] && dir[1])
		dir[strlen(dir) - 1] = 0; /* "/a/b/" -> "/a/b" */
	fd = try_dir(dir[0] ? dir : ".", name, w, out);
	real = fd < 0 ? realpath(file_name, NULL) : NULL;
	if (real && strcmp(real, file_name)) {
		char *rdir = xstrndup(real, (size_t)(base_name(real) - real));

		if (rdir[0] && rdir[1])
			rdir[strlen(rdir) - 1] = 0;
		fd = try_dir(rdir, name, w, out);
		free(rdir);
	}
	free(real);
	free(dir);
	return fd;
}

/* The separate debug file of the module. */
static int find_debug(Dwfl_Module *mod, const char *file_name, const char *link, GElf_Word crc,
		      char **out)
{
	struct want w;
	struct stat st;
	GElf_Addr vaddr;
	const unsigned char *bits = NULL;
	char *made = NULL;
	int n = dwfl_module_build_id(mod, &bits, &vaddr), fd;

	memset(&w, 0, sizeof(w));
	if (n > 0) {
		w.id = bits;
		w.id_len = (size_t)n;
	}
	w.check_crc = link != NULL;
	w.crc = crc;
	if (file_name && stat(file_name, &st) == 0) {
		w.dev = st.st_dev;
		w.ino = st.st_ino;
	}
	fd = try_build_id(&w, out);
	if (fd >= 0 || !file_name)
		return fd;
	if (!link) {
		made = xmalloc(strlen(base_name(file_name)) + sizeof(".debug"));
		sprintf(made, "%s.debug", base_name(file_name));
	}
	/* a debuglink names a file, not a path: nothing of it climbs out */
	fd = try_dirs(file_name, link ? base_name(link) : made, &w, out);
	free(made);
	return fd;
}

/* The dwz file the module's DWARF refers to (.gnu_debugaltlink). */
static int find_alt(Dwfl_Module *mod, struct debuginfo_state *st, const char *file_name, char **out)
{
	struct want w;
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	const char *altname;
	const void *id;
	ssize_t n = dw ? dwelf_dwarf_gnu_debugaltlink(dw, &altname, &id) : -1;
	int fd;

	if (n <= 0)
		return -1;
	memset(&w, 0, sizeof(w));
	w.id = id;
	w.id_len = (size_t)n;
	w.need_dwarf = 1;
	fd = try_build_id(&w, out);
	if (fd < 0 && altname[0] == '/')
		fd = try_candidate(altname, &w, out);
	if (fd < 0 && altname[0] != '/' && file_name)
		fd = try_dirs(file_name, altname, &w, out);
	if (fd < 0)
		fd = try_join(DEBUG_DIR, ".dwz", base_name(altname), &w, out);
	if (fd >= 0)
		st->alt_found = 1;
	return fd;
}

int debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name)
{
	struct debuginfo_state *st = userdata ? *userdata : NULL;
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Word crc = 0;
	const char *link = elf ? dwelf_elf_gnu_debuglink(elf, &crc) : NULL;

	(void)modname;
	(void)base;
	errno = 0;
	if (!st)
		return -1;
	/* libdwfl asks for the dwz file with the name the DWARF gives */
	if (debuglink_file && !(link && !strcmp(link, debuglink_file) && crc == debuglink_crc))
		return find_alt(mod, st, file_name, debuginfo_file_name);
	if (st->done)
		return -1;
	st->done = 1;
	return find_debug(mod, file_name, link, crc, debuginfo_file_name);
}

int debuginfo_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       char **file_name, Elf **elfp)
{
	(void)mod;
	(void)userdata;
	(void)modname;
	(void)base;
	(void)file_name;
	*elfp = NULL;
	errno = 0;
	return -1;
}
