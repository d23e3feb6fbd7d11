/*
 * debuginfo.h - open the files the symbolizer reads: modules named in a
 * trace, their separate debug files (build-id, .gnu_debuglink,
 * NAME.debug) and dwz's shared debug files. Every path opened is one a
 * trace can choose, so only regular files are opened, never a FIFO (it
 * would block), a device (opening some has effects), a directory or a
 * file of /proc or /sys; libdw's own search, which opens whatever it
 * finds, is replaced by debuginfo_find (a libdwfl find_debuginfo
 * callback).
 */
#ifndef MEMPROV_DEBUGINFO_H
#define MEMPROV_DEBUGINFO_H

#include <elfutils/libdwfl.h>
#include <sys/types.h>

/*
 * Open path read-only if it is a regular file of at least min_size bytes
 * outside /proc and /sys: checked before the open (so that nothing else
 * is ever opened), opened with O_NONBLOCK, checked again after (the same
 * file). Returns the descriptor, or -1 with errno set (ENOENT when there
 * is nothing, EINVAL when it is not such a file).
 */
int debuginfo_open(const char *path, off_t min_size);

/*
 * What the callback learns about a module, through its Dwfl_Module's
 * user data (dwfl_module_info): set it before anything asks libdwfl for
 * the module's DWARF or symbols.
 */
struct debuginfo_state {
	int alt_wanted;     /* the DWARF refers to a dwz file */
	int alt_found;      /* and debuginfo_find found it */
	int done;           /* the debug file was looked for: not again */
};

/* The find_debuginfo callback: debuginfo_state in the module's user data. */
int debuginfo_find(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		   const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
		   char **debuginfo_file_name);

/* The find_elf callback: modules are always reported with their fd; none more. */
int debuginfo_find_elf(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
		       char **file_name, Elf **elfp);

#endif /* MEMPROV_DEBUGINFO_H */
