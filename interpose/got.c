/*
 * got.c - redirect a loaded object's calls to given functions through its
 * GOT (see got.h). The relocations read are the object's own PLT and
 * GLOB_DAT ones (DT_JMPREL, DT_RELA), against its dynamic symbol table;
 * a GOT entry inside the object's RELRO segment is made writable for the
 * write and read-only again after. Only x86-64 RELA relocations are
 * understood; anything else leaves the object untouched.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#include <elf.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "got.h"

struct dyn {
	const ElfW(Rela) *jmprel, *rela;
	size_t jmprel_sz, rela_sz;
	const ElfW(Sym) *symtab;
	const char *strtab;
	int pltrel_rela;
};

static uintptr_t fix_ptr(uintptr_t base, uintptr_t v)
{
	/* ld.so relocates these in place on most targets; not everywhere. */
	return v < base ? v + base : v;
}

static int read_dyn(const struct dl_phdr_info *info, struct dyn *d, uintptr_t *relro_lo,
		    uintptr_t *relro_hi)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t b = info->dlpi_addr;
	int i;

	memset(d, 0, sizeof(*d));
	d->pltrel_rela = 1;
	*relro_lo = *relro_hi = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(b + ph->p_vaddr);
		if (ph->p_type == PT_GNU_RELRO) {
			*relro_lo = b + ph->p_vaddr;
			*relro_hi = *relro_lo + ph->p_memsz;
		}
	}
	if (!dyn)
		return -1;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = fix_ptr(b, dyn->d_un.d_ptr);

		switch (dyn->d_tag) {
		case DT_JMPREL: d->jmprel = (const ElfW(Rela) *)p; break;
		case DT_PLTRELSZ: d->jmprel_sz = dyn->d_un.d_val; break;
		case DT_PLTREL: d->pltrel_rela = dyn->d_un.d_val == DT_RELA; break;
		case DT_RELA: d->rela = (const ElfW(Rela) *)p; break;
		case DT_RELASZ: d->rela_sz = dyn->d_un.d_val; break;
		case DT_SYMTAB: d->symtab = (const ElfW(Sym) *)p; break;
		case DT_STRTAB: d->strtab = (const char *)p; break;
		}
	}
	if (!d->symtab || !d->strtab || !d->pltrel_rela)
		return -1;
	return 0;
}

/* Store v at slot, making its page writable first if it is read-only. */
static void store(uintptr_t slot, void *v, uintptr_t relro_lo, uintptr_t relro_hi)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t pg = slot & ~(uintptr_t)(page - 1);
	int ro = slot >= relro_lo && slot < relro_hi;

	if (ro && mp_syscall(SYS_mprotect, pg, (size_t)page, PROT_READ | PROT_WRITE))
		return;
	__atomic_store_n((void **)slot, v, __ATOMIC_RELEASE);
	if (ro)
		mp_syscall(SYS_mprotect, pg, (size_t)page, PROT_READ);
}

/*
 * Does slot hold only, or an address inside the object that is not its
 * own definition of the symbol s (lazy binding's stub, not yet bound)?
 */
static int holds(const struct dl_phdr_info *info, uintptr_t slot, const void *only,
		 const ElfW(Sym) *s)
{
	uintptr_t v = (uintptr_t)__atomic_load_n((void **)slot, __ATOMIC_ACQUIRE);
	int i;

	if (v == (uintptr_t)only)
		return 1;
	if (s->st_shndx != SHN_UNDEF && v == info->dlpi_addr + s->st_value)
		return 0; /* bound to its own (-Bsymbolic, RTLD_DEEPBIND): left so */
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && v >= a && v < a + ph->p_memsz)
			return 1;
	}
	return 0;
}

static int redirect(const struct dl_phdr_info *info, const struct dyn *d,
		    const ElfW(Rela) *r, size_t bytes, const struct mp_got_fn *fns,
		    const void *const *only, int n, uintptr_t relro_lo, uintptr_t relro_hi)
{
	size_t i, count = bytes / sizeof(*r);
	int done = 0, k;

	for (i = 0; r && i < count; i++) {
		unsigned type = (unsigned)ELF64_R_TYPE(r[i].r_info);
		const ElfW(Sym) *s;
		const char *name;

		if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
			continue;
		s = &d->symtab[ELF64_R_SYM(r[i].r_info)];
		/*
		 * A function the object defines itself is left, but under only:
		 * libstdc++ defines operator new and its own calls to it were
		 * bound to a replacement's, whose blocks its deletes then freed
		 * unrecorded
		 */
		if (!s->st_name || (s->st_shndx != SHN_UNDEF && !only))
			continue;
		name = d->strtab + s->st_name;
		for (k = 0; k < n; k++) {
			if (strcmp(name, fns[k].name))
				continue;
			if (only && (!only[k] || !holds(info, info->dlpi_addr + r[i].r_offset, only[k], s)))
				break;
			store(info->dlpi_addr + r[i].r_offset, fns[k].addr, relro_lo, relro_hi);
			done++;
			break;
		}
	}
	return done;
}

MP_REALIGN int mp_got_redirect_bound(const struct dl_phdr_info *info, const struct mp_got_fn *fns,
				     const void *const *only, int n)
{
	struct dyn d;
	uintptr_t relro_lo, relro_hi;

	if (read_dyn(info, &d, &relro_lo, &relro_hi))
		return -1;
	return redirect(info, &d, d.jmprel, d.jmprel_sz, fns, only, n, relro_lo, relro_hi) +
	       redirect(info, &d, d.rela, d.rela_sz, fns, only, n, relro_lo, relro_hi);
}

int mp_got_redirect(const struct dl_phdr_info *info, const struct mp_got_fn *fns, int n)
{
	return mp_got_redirect_bound(info, fns, NULL, n);
}
