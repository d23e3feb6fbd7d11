/*
 * sym_call.c - decode the call before a return address (x86-64 only:
 * `call rel32`, `call *disp32(%rip)`) and the PLT stub it may go through
 * (`jmp *disp32(%rip)`, after an optional endbr64 and bnd prefix), then
 * name the target from the relocation of its GOT slot or from the
 * module's symbols. Everything read is the module's own ELF file, already
 * open in libdwfl; nothing is executed or opened.
 */
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdint.h>
#include <string.h>

#include "sym_call.h"

/* len bytes of the module's loaded image at ELF address a, or NULL. */
static const unsigned char *code_at(Elf *elf, GElf_Addr a, size_t len, const char **secname)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) < 0)
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC))
			continue;
		if (a < sh.sh_addr || a + len > sh.sh_addr + sh.sh_size || a + len < a)
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || a - sh.sh_addr + len > d->d_size)
			return NULL;
		if (secname)
			*secname = elf_strptr(elf, shstrndx, sh.sh_name);
		return (const unsigned char *)d->d_buf + (a - sh.sh_addr);
	}
	return NULL;
}

static int32_t rel32(const unsigned char *p)
{
	uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;

	return (int32_t)v;
}

/* The symbol whose relocation fills the GOT slot at ELF address slot. */
static const char *slot_symbol(Elf *elf, GElf_Addr slot)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh, symsh;
		Elf_Data *d, *syms;
		Elf_Scn *symscn;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !sh.sh_entsize)
			continue;
		symscn = elf_getscn(elf, sh.sh_link);
		if (!symscn || !gelf_getshdr(symscn, &symsh) || !(d = elf_getdata(scn, NULL)) ||
		    !(syms = elf_getdata(symscn, NULL)))
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (i = 0; i < n; i++) {
			GElf_Rela rela;
			GElf_Sym sym;

			if (!gelf_getrela(d, (int)i, &rela) || rela.r_offset != slot)
				continue;
			if (!GELF_R_SYM(rela.r_info) ||
			    !gelf_getsym(syms, (int)GELF_R_SYM(rela.r_info), &sym))
				return NULL;
			return elf_strptr(elf, symsh.sh_link, sym.st_name);
		}
	}
	return NULL;
}

/* A PLT stub at target: the GOT slot it jumps through, or 0. */
static GElf_Addr plt_slot(Elf *elf, GElf_Addr target)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	const unsigned char *p = code_at(elf, target, 16, NULL);
	size_t k = 0;

	if (!p)
		return 0;
	if (!memcmp(p, endbr64, sizeof(endbr64)))
		k += sizeof(endbr64);
	if (p[k] == 0xf2) /* bnd */
		k++;
	if (p[k] != 0xff || p[k + 1] != 0x25)
		return 0;
	return target + k + 6 + (GElf_Addr)(int64_t)rel32(p + k + 2);
}

const char *sym_call_target(Dwfl_Module *mod, struct sym_spans *sp, Dwarf_Addr ip)
{
	GElf_Addr bias, a, target;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	const unsigned char *p;
	const char *sec = NULL, *name;
	GElf_Off off;
	GElf_Ehdr eh;

	if (!elf || !gelf_getehdr(elf, &eh) || eh.e_machine != EM_X86_64 || ip - bias < 6)
		return NULL;
	a = ip - bias;
	p = code_at(elf, a - 6, 6, NULL);
	if (!p)
		return NULL;
	if (p[0] == 0xff && p[1] == 0x15) /* call *disp32(%rip): -fno-plt */
		return slot_symbol(elf, a + (GElf_Addr)(int64_t)rel32(p + 2));
	if (p[1] != 0xe8)
		return NULL;
	target = a + (GElf_Addr)(int64_t)rel32(p + 2);
	if (!code_at(elf, target, 1, &sec))
		return NULL;
	if (sec && !strncmp(sec, ".plt", 4)) {
		GElf_Addr slot = plt_slot(elf, target);

		return slot ? slot_symbol(elf, slot) : NULL;
	}
	name = sym_spans_addrinfo(sp, mod, target + bias, &off);
	return name && off == 0 ? name : NULL;
}
