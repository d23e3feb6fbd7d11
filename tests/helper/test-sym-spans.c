/*
 * test-sym-spans.c - analyzer/sym_spans.c against libdwfl itself: for
 * every FILE, the symbol and offset of addresses spread over its
 * allocated sections, and of the first byte, the last byte and the byte
 * after each of symbols spread over its symbol table, asked both ways.
 * How many: libdwfl reads the whole table per address, so about
 * 20,000,000 / (its symbols) addresses a file, half of each kind (at
 * most 20,000). Prints
 *   FILE: N addresses, M named, K differ
 * and exits 1 when any differs (t1050).
 *
 *   test-sym-spans FILE...
 */
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sym_spans.h"

static const Dwfl_Callbacks cb = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static unsigned long n_addr, n_named, n_differ;

static void check(Dwfl_Module *mod, struct sym_spans *sp, GElf_Addr a)
{
	GElf_Off o1 = 0, o2 = 0;
	GElf_Sym sym;
	const char *want = dwfl_module_addrinfo(mod, a, &o1, &sym, NULL, NULL, NULL);
	const char *got = sym_spans_addrinfo(sp, mod, a, &o2);

	n_addr++;
	n_named += want != NULL;
	if (want != got || (want && o1 != o2)) {
		if (n_differ++ < 10)
			printf("  0x%llx: libdwfl %s+%llu, spans %s+%llu\n", (unsigned long long)a,
			       want ? want : "(none)", (unsigned long long)o1, got ? got : "(none)",
			       (unsigned long long)o2);
	}
}

int main(int argc, char **argv)
{
	int i, bad = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: test-sym-spans FILE...\n");
		return 2;
	}
	for (i = 1; i < argc; i++) {
		Dwfl *dwfl = dwfl_begin(&cb);
		Dwfl_Module *mod = dwfl ? dwfl_report_offline(dwfl, "", argv[i], -1) : NULL;
		struct sym_spans *sp;
		GElf_Addr bias, total = 0, step;
		Elf *elf;
		Elf_Scn *scn = NULL;
		int n, k, each;
		long checks;

		if (!mod || dwfl_report_end(dwfl, NULL, NULL) || !(elf = dwfl_module_getelf(mod, &bias))) {
			printf("%s: cannot read\n", argv[i]);
			return 2;
		}
		n_addr = n_named = n_differ = 0;
		sp = sym_spans_new(mod);
		n = dwfl_module_getsymtab(mod);
		checks = 20000000L / (n > 1000 ? n : 1000);
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

			if (sh && (sh->sh_flags & SHF_ALLOC))
				total += sh->sh_size;
		}
		step = total / (GElf_Addr)(checks / 2 + 1) + 1;
		each = n / (int)(checks / 6 + 1) + 1;
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
			GElf_Addr a;

			if (!sh || !(sh->sh_flags & SHF_ALLOC) || !sh->sh_size)
				continue;
			for (a = sh->sh_addr; a < sh->sh_addr + sh->sh_size; a += step)
				check(mod, sp, a + bias);
		}
		for (k = 1; k < n; k += each) {
			GElf_Sym sym;
			GElf_Addr value;

			if (!dwfl_module_getsym_info(mod, k, &sym, &value, NULL, NULL, NULL))
				continue;
			check(mod, sp, value);
			if (sym.st_size > 1)
				check(mod, sp, value + sym.st_size - 1);
			check(mod, sp, value + sym.st_size);
		}
		printf("%s: %lu addresses, %lu named, %lu differ%s\n", argv[i], n_addr, n_named,
		       n_differ, sp ? "" : " (no spans: few symbols)");
		bad |= n_differ != 0;
		sym_spans_free(sp);
		dwfl_end(dwfl);
	}
	return bad;
}
