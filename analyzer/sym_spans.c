/*
 * sym_spans.c - libdwfl's symbol of an address, once per span of
 * addresses (sym_spans.h).
 *
 * Slots: the bounds sorted and unique, b[0] < ... < b[n-1]; slot 2k is
 * the open span between b[k-1] and b[k] (below b[0] for k = 0, above
 * b[n-1] for k = n), slot 2k + 1 the bound b[k] itself.
 *
 * Most addresses need no call at all: where exactly one symbol with a
 * size covers the address (of those libdwfl weighs: named, defined, not
 * a section, file or TLS symbol), libdwfl answers that symbol, whatever
 * else it weighs (a symbol without a size counts only when none with a
 * size covers the address, or, in libdwfl 0.158 and later, a global one
 * at exactly the address stops its search of the local ones: such
 * bounds are left to libdwfl). A sweep over the bounds counts, for each,
 * the sized symbols that cover it and the span after it (the same ones:
 * no symbol starts or ends in between), and keeps the XOR of their
 * indices, which is the symbol's index where the count is one.
 */
#include <elfutils/libdw.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "sym_spans.h"
#include "util.h"
#include <uthash.h>

/* Fewer symbols than this: libdwfl's own scan is as quick. */
#define SPANS_MIN_SYMBOLS 64

/* libdwfl's answer for one slot, asked once (few slots need it). */
struct span_answer {
	UT_hash_handle hh;
	size_t slot;
	const char *name;   /* libdwfl's, valid while the module is */
	GElf_Addr base;     /* the address less its offset: the symbol's start */
};

/* Where a sized symbol starts (+) or ends (-), or a sizeless one is (0). */
struct span_event {
	GElf_Addr at;
	int32_t index;      /* the symbol's; 0: a section's bound */
	int8_t what;        /* +1 start, -1 end, 0 a bound only, 2 a sizeless symbol */
};

struct sym_spans {
	GElf_Addr *b;
	size_t n;
	uint32_t *cover;         /* per bound: sized symbols covering it and the span after */
	uint32_t *xor;           /* per bound: the XOR of their indices */
	uint8_t *sizeless;       /* per bound: a sizeless symbol is there */
	struct span_answer *ans; /* by slot */
};

struct events {
	struct span_event *e;
	size_t n, cap;
};

static void push(struct events *ev, GElf_Addr at, int index, int what)
{
	if (ev->n == ev->cap) {
		ev->cap = ev->cap ? 2 * ev->cap : 1024;
		ev->e = xrealloc(ev->e, ev->cap * sizeof(*ev->e));
	}
	ev->e[ev->n].at = at;
	ev->e[ev->n].index = index;
	ev->e[ev->n].what = (int8_t)what;
	ev->n++;
}

static int event_cmp(const void *x, const void *y)
{
	GElf_Addr a = ((const struct span_event *)x)->at, b = ((const struct span_event *)y)->at;

	return a < b ? -1 : a > b;
}

/* The bounds of elf's sections, where the module puts them (+ bias). */
static void push_sections(struct events *ev, Elf *elf, GElf_Addr bias)
{
	Elf_Scn *scn = NULL;

	while (elf && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (sh) {
			push(ev, sh->sh_addr + bias, 0, 0);
			push(ev, sh->sh_addr + sh->sh_size + bias, 0, 0);
		}
	}
}

/* Does libdwfl weigh this symbol for an address at or above it? */
static int weighed(const char *name, const GElf_Sym *sym)
{
	unsigned type = GELF_ST_TYPE(sym->st_info);

	return name && name[0] && sym->st_shndx != SHN_UNDEF && type != STT_SECTION &&
	       type != STT_FILE && type != STT_TLS;
}

struct sym_spans *sym_spans_new(Dwfl_Module *mod)
{
	int n = dwfl_module_getsymtab(mod), i;
	struct events ev = { 0 };
	struct sym_spans *sp;
	Dwarf_Addr bias = 0;
	uint32_t cover = 0, x = 0;
	Dwarf *dw;
	Elf *elf;
	size_t k;

	if (n < SPANS_MIN_SYMBOLS)
		return NULL;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);

		if (!name)
			continue;
		if (!weighed(name, &sym)) {
			push(&ev, addr, 0, 0);
			push(&ev, addr + sym.st_size, 0, 0);
		} else if (sym.st_size) {
			push(&ev, addr, i, 1);
			push(&ev, addr + sym.st_size, i, -1);
		} else {
			push(&ev, addr, i, 2);
		}
	}
	elf = dwfl_module_getelf(mod, &bias); /* sets bias: not in the same call */
	push_sections(&ev, elf, bias);
	dw = dwfl_module_getdwarf(mod, &bias);
	if (dw)
		push_sections(&ev, dwarf_getelf(dw), bias);
	qsort(ev.e, ev.n, sizeof(*ev.e), event_cmp);
	sp = xcalloc(1, sizeof(*sp));
	sp->b = xmalloc((ev.n + 1) * sizeof(*sp->b));
	sp->cover = xmalloc((ev.n + 1) * sizeof(*sp->cover));
	sp->xor = xmalloc((ev.n + 1) * sizeof(*sp->xor));
	sp->sizeless = xcalloc(ev.n + 1, 1);
	for (k = 0; k < ev.n; k++) {
		const struct span_event *e = &ev.e[k];

		if (!sp->n || sp->b[sp->n - 1] != e->at)
			sp->b[sp->n++] = e->at;
		if (e->what == 1 || e->what == -1) {
			cover += (uint32_t)e->what;
			x ^= (uint32_t)e->index;
		}
		if (e->what == 2)
			sp->sizeless[sp->n - 1] = 1;
		sp->cover[sp->n - 1] = cover; /* after every event at this bound */
		sp->xor[sp->n - 1] = x;
	}
	free(ev.e);
	return sp;
}

void sym_spans_free(struct sym_spans *sp)
{
	struct span_answer *a, *tmp;

	if (!sp)
		return;
	HASH_ITER(hh, sp->ans, a, tmp) {
		HASH_DEL(sp->ans, a);
		free(a);
	}
	free(sp->b);
	free(sp->cover);
	free(sp->xor);
	free(sp->sizeless);
	free(sp);
}

/* How many bounds are at or below a. */
static size_t bounds_upto(const struct sym_spans *sp, GElf_Addr a)
{
	size_t lo = 0, hi = sp->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sp->b[mid] <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const char *sym_spans_addrinfo(struct sym_spans *sp, Dwfl_Module *mod, GElf_Addr a,
			       GElf_Off *off)
{
	struct span_answer *ans;
	const char *name;
	GElf_Sym sym;
	size_t k, slot;
	int at;

	if (!sp)
		return dwfl_module_addrinfo(mod, a, off, &sym, NULL, NULL, NULL);
	k = bounds_upto(sp, a);
	at = k && sp->b[k - 1] == a;
	if (k && sp->cover[k - 1] == 1 && !(at && sp->sizeless[k - 1])) {
		GElf_Addr value;

		name = dwfl_module_getsym_info(mod, (int)sp->xor[k - 1], &sym, &value, NULL, NULL,
					       NULL);
		if (name) {
			*off = a - value;
			return name;
		}
	}
	slot = at ? 2 * k - 1 : 2 * k;
	HASH_FIND(hh, sp->ans, &slot, sizeof(slot), ans);
	if (!ans) {
		GElf_Off o = 0;

		ans = xcalloc(1, sizeof(*ans));
		ans->slot = slot;
		ans->name = dwfl_module_addrinfo(mod, a, &o, &sym, NULL, NULL, NULL);
		ans->base = a - o;
		HASH_ADD(hh, sp->ans, slot, sizeof(ans->slot), ans);
	}
	name = ans->name;
	*off = name ? a - ans->base : 0;
	return name;
}
