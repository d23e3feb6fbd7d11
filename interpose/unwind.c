/*
 * unwind.c - a fast native stack walker for the allocation hooks (x86-64).
 *
 * libunwind's unw_backtrace costs ~85 instructions a frame; most frames
 * only need "CFA = rsp+N or rbp+N, return address at CFA-8, rbp unchanged
 * or saved at CFA-k". This file computes that rule for a return address
 * from its module's .eh_frame (found through .eh_frame_hdr's sorted table,
 * PT_GNU_EH_FRAME, with dl_iterate_phdr) with a small CFI interpreter, and
 * caches it in a lock-free table: one 64-bit word per entry holding the
 * address and the rule, so that a reader never sees half an entry.
 *
 * Anything beyond the simple rules (a signal frame, a DWARF expression, a
 * CFA in another register, an unknown opcode, an address with no FDE)
 * gives the rule "fallback": the walk returns -1 and stack.c captures the
 * whole stack with unw_backtrace. The walk reads memory only inside the
 * calling thread's stack, found once per thread from /proc/self/maps (raw
 * system calls: no lock, no malloc), and only at aligned addresses between
 * the current stack pointer and the stack's top; it stops at the
 * outermost frame (return address undefined in the CFI) or at a zero
 * return address.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "atomic.h"
#include "internal.h"
#include "reach.h"
#include "unwind.h"

/*
 * A rule, 17 bits:
 *
 *   bit 16      CFA is rbp + offset (else rsp + offset)
 *   bits 15..4  offset / 8, 1..4095 (frames of up to 32 KiB)
 *   bits 3..0   rbp: 0 unchanged, 15 unknown, k: saved at CFA - 8k
 *
 * Offset 0 never occurs in a real rule: with the rbp bit set, it encodes
 * the two special rules (so the walk's common case, an rsp-based CFA,
 * needs no test for them). An rsp-based rule saves rbp inside its frame
 * (8k <= offset): the walk reads it without a bound check.
 */
#define R_CFA_RBP 0x10000u
#define R_FALLBACK R_CFA_RBP
#define R_END (R_CFA_RBP | 1u)  /* outermost frame: return address undefined */
#define R_FRAME_POINTER (R_CFA_RBP | 2u << 4 | 2u) /* CFA = rbp + 16, rbp at CFA - 16 */
#define R_OFF(r) (((r) >> 4) & 0xfffu)
#define R_OFF_MAX 0xfffu
#define R_BP(r) ((r)&0xfu)
#define R_BP_UNKNOWN 15u
#define R_BITS 17

/* Cache: entry = ip << 17 | rule; ip < 2^47 (user space) and never 0,
 * so an entry in use is never 0. */
#define CACHE_BITS 16
#define CACHE_SIZE (1u << CACHE_BITS)
#define CACHE_PROBES 4
#define IP_MAX ((uintptr_t)1 << 47)
#define OWN_MAX 32 /* memprov's own frames above a capture, at most */

static uint64_t *cache;
static uintptr_t interp_lo, interp_hi;

/* This thread's stack: reads are allowed in [sp, hi); sp must be >= lo. */
static __thread uintptr_t stk_lo, stk_hi;
static __thread int stk_state; /* 0 not known yet, 1 known, -1 unusable */

static inline uint32_t cache_slot(uintptr_t ip)
{
	/* the multiplier of mix() below: one constant register in the walk */
	return (uint32_t)(((uint64_t)ip * 0xff51afd7ed558ccdull) >> (64 - CACHE_BITS));
}

/* ------------------------------------------------------------------ */
/* Bounded reads of .eh_frame / .eh_frame_hdr                          */

struct rd {
	const uint8_t *p, *end;
	int bad;
};

static int rd_need(struct rd *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n || r->p > r->end) {
		r->bad = 1;
		return 0;
	}
	return 1;
}

static uint64_t rd_uint(struct rd *r, size_t n)
{
	uint64_t v = 0;

	if (!rd_need(r, n))
		return 0;
	memcpy(&v, r->p, n); /* little-endian */
	r->p += n;
	return v;
}

/* LEB128: *shift ends as the bits read, *last as the last byte. */
static uint64_t rd_leb(struct rd *r, unsigned *shift, uint8_t *last)
{
	uint64_t v = 0;
	uint8_t b;

	*shift = 0;
	do {
		if (!rd_need(r, 1))
			return 0;
		b = *r->p++;
		if (*shift < 64)
			v |= (uint64_t)(b & 0x7f) << *shift;
		*shift += 7;
	} while (b & 0x80);
	*last = b;
	return v;
}

static uint64_t rd_uleb(struct rd *r)
{
	unsigned shift;
	uint8_t last;

	return rd_leb(r, &shift, &last);
}

static int64_t rd_sleb(struct rd *r)
{
	unsigned shift;
	uint8_t last = 0;
	uint64_t v = rd_leb(r, &shift, &last);

	if (shift < 64 && (last & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A DW_EH_PE-encoded pointer: absptr/udata/sdata 2,4,8, pcrel or absolute. */
static uint64_t rd_enc(struct rd *r, uint8_t enc)
{
	uintptr_t at = (uintptr_t)r->p;
	uint64_t v;

	if (enc == 0xff) /* DW_EH_PE_omit */
		return 0;
	switch (enc & 0x0f) {
	case 0x00: /* absptr */
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		v = rd_uint(r, 8);
		break;
	case 0x02: /* udata2 */
		v = rd_uint(r, 2);
		break;
	case 0x0a: /* sdata2 */
		v = (uint64_t)(int64_t)(int16_t)rd_uint(r, 2);
		break;
	case 0x03: /* udata4 */
		v = rd_uint(r, 4);
		break;
	case 0x0b: /* sdata4 */
		v = (uint64_t)(int64_t)(int32_t)rd_uint(r, 4);
		break;
	case 0x01: /* uleb128 */
		v = rd_uleb(r);
		break;
	case 0x09: /* sleb128 */
		v = (uint64_t)rd_sleb(r);
		break;
	default:
		r->bad = 1;
		return 0;
	}
	switch (enc & 0x70) {
	case 0x00:
		break;
	case 0x10: /* pcrel */
		v += at;
		break;
	default: /* textrel, datarel, funcrel, aligned: not in .eh_frame on x86-64 */
		r->bad = 1;
	}
	return v;
}

/* ------------------------------------------------------------------ */
/* The CFI interpreter                                                  */

enum { DWREG_RBP = 6, DWREG_RSP = 7, DWREG_RA = 16 };
enum reg_how { HOW_SAME, HOW_OFF, HOW_UNDEF, HOW_BAD };

struct row {
	int cfa_reg;       /* DWARF number; -1: expression or unusable */
	int64_t cfa_off;
	uint8_t bp_how, ra_how;
	int64_t bp_off, ra_off;
};

struct cie {
	int64_t data_align;
	uint64_t code_align;
	uint8_t fde_enc;
	int has_z;
	const uint8_t *insn, *end;
};

#define STATE_DEPTH 8

static void set_reg(struct row *w, uint64_t reg, uint8_t how, int64_t off)
{
	if (reg == DWREG_RBP) {
		w->bp_how = how;
		w->bp_off = off;
	} else if (reg == DWREG_RA) {
		w->ra_how = how;
		w->ra_off = off;
	}
}

static void restore_reg(struct row *w, const struct row *init, uint64_t reg)
{
	if (reg == DWREG_RBP)
		set_reg(w, reg, init->bp_how, init->bp_off);
	else if (reg == DWREG_RA)
		set_reg(w, reg, init->ra_how, init->ra_off);
}

/*
 * Run CFI instructions from r until the location passes target (loc
 * starts at *loc). init: the CIE's row, for DW_CFA_restore (NULL while
 * running the CIE itself). 0 ok, -1 on anything not understood.
 */
static int cfi_run(struct rd *r, const struct cie *c, struct row *w,
		   const struct row *init, uintptr_t *loc, uintptr_t target)
{
	struct row stack[STATE_DEPTH];
	int depth = 0;
	uint64_t reg, n;

	while (r->p < r->end && !r->bad) {
		uint8_t op = *r->p++;
		uint64_t delta = 0;

		switch (op >> 6) {
		case 1: /* advance_loc */
			delta = op & 0x3f;
			goto advance;
		case 2: /* offset */
			set_reg(w, op & 0x3f, HOW_OFF, (int64_t)rd_uleb(r) * c->data_align);
			continue;
		case 3: /* restore */
			if (!init)
				return -1;
			restore_reg(w, init, op & 0x3f);
			continue;
		}
		switch (op) {
		case 0x00: /* nop */
			break;
		case 0x01: /* set_loc */
			*loc = rd_enc(r, c->fde_enc);
			if (*loc > target)
				return 0;
			break;
		case 0x02:
			delta = rd_uint(r, 1);
			goto advance;
		case 0x03:
			delta = rd_uint(r, 2);
			goto advance;
		case 0x04:
			delta = rd_uint(r, 4);
			goto advance;
		case 0x05: /* offset_extended */
			reg = rd_uleb(r);
			set_reg(w, reg, HOW_OFF, (int64_t)rd_uleb(r) * c->data_align);
			break;
		case 0x06: /* restore_extended */
			reg = rd_uleb(r);
			if (!init)
				return -1;
			restore_reg(w, init, reg);
			break;
		case 0x07: /* undefined */
			set_reg(w, rd_uleb(r), HOW_UNDEF, 0);
			break;
		case 0x08: /* same_value */
			set_reg(w, rd_uleb(r), HOW_SAME, 0);
			break;
		case 0x09: /* register */
			reg = rd_uleb(r);
			rd_uleb(r);
			set_reg(w, reg, HOW_BAD, 0);
			break;
		case 0x0a: /* remember_state */
			if (depth == STATE_DEPTH)
				return -1;
			stack[depth++] = *w;
			break;
		case 0x0b: /* restore_state */
			if (!depth)
				return -1;
			*w = stack[--depth];
			break;
		case 0x0c: /* def_cfa */
			w->cfa_reg = (int)rd_uleb(r);
			w->cfa_off = (int64_t)rd_uleb(r);
			break;
		case 0x0d: /* def_cfa_register */
			reg = rd_uleb(r);
			if (w->cfa_reg >= 0)
				w->cfa_reg = (int)reg;
			break;
		case 0x0e: /* def_cfa_offset */
			w->cfa_off = (int64_t)rd_uleb(r);
			break;
		case 0x0f: /* def_cfa_expression */
			n = rd_uleb(r);
			if (!rd_need(r, n))
				return -1;
			r->p += n;
			w->cfa_reg = -1;
			break;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = rd_uleb(r);
			n = rd_uleb(r);
			if (!rd_need(r, n))
				return -1;
			r->p += n;
			set_reg(w, reg, HOW_BAD, 0);
			break;
		case 0x11: /* offset_extended_sf */
			reg = rd_uleb(r);
			set_reg(w, reg, HOW_OFF, rd_sleb(r) * c->data_align);
			break;
		case 0x12: /* def_cfa_sf */
			w->cfa_reg = (int)rd_uleb(r);
			w->cfa_off = rd_sleb(r) * c->data_align;
			break;
		case 0x13: /* def_cfa_offset_sf */
			w->cfa_off = rd_sleb(r) * c->data_align;
			break;
		case 0x14: /* val_offset */
			reg = rd_uleb(r);
			rd_uleb(r);
			set_reg(w, reg, HOW_BAD, 0);
			break;
		case 0x15: /* val_offset_sf */
			reg = rd_uleb(r);
			rd_sleb(r);
			set_reg(w, reg, HOW_BAD, 0);
			break;
		case 0x2e: /* GNU_args_size */
			rd_uleb(r);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = rd_uleb(r);
			set_reg(w, reg, HOW_OFF, -(int64_t)rd_uleb(r) * c->data_align);
			break;
		default:
			return -1;
		}
		continue;
advance:
		*loc += delta * c->code_align;
		if (*loc > target)
			return 0;
	}
	return r->bad ? -1 : 0;
}

/* Parse the CIE at p (inside [lo, hi)). 0 ok, -1 unsupported. */
static int cie_parse(const uint8_t *p, const uint8_t *lo, const uint8_t *hi,
		     struct cie *c)
{
	struct rd r = { p, hi, 0 };
	const char *aug;
	uint64_t len, ra;
	uint8_t ver;
	const uint8_t *aug_end = NULL;

	if (p < lo)
		return -1;
	len = rd_uint(&r, 4);
	if (len == 0 || len == 0xffffffffu || !rd_need(&r, len))
		return -1;
	r.end = r.p + len;
	if (rd_uint(&r, 4) != 0) /* CIE id */
		return -1;
	ver = (uint8_t)rd_uint(&r, 1);
	if (ver != 1 && ver != 3)
		return -1;
	aug = (const char *)r.p;
	while (rd_need(&r, 1) && *r.p)
		r.p++;
	if (!rd_need(&r, 1))
		return -1;
	r.p++;
	c->code_align = rd_uleb(&r);
	c->data_align = rd_sleb(&r);
	ra = ver == 1 ? rd_uint(&r, 1) : rd_uleb(&r);
	if (ra != DWREG_RA)
		return -1;
	c->fde_enc = 0; /* absptr */
	c->has_z = aug[0] == 'z';
	if (aug[0] && !c->has_z)
		return -1;
	if (c->has_z) {
		uint64_t alen = rd_uleb(&r);

		if (!rd_need(&r, alen))
			return -1;
		aug_end = r.p + alen;
		for (aug++; *aug; aug++) {
			uint8_t enc;

			switch (*aug) {
			case 'R':
				c->fde_enc = (uint8_t)rd_uint(&r, 1);
				break;
			case 'L':
				rd_uint(&r, 1);
				break;
			case 'P':
				enc = (uint8_t)rd_uint(&r, 1);
				rd_enc(&r, enc & 0x7f); /* indirect bit: skip all the same */
				break;
			default: /* 'S' (signal frame) and anything unknown */
				return -1;
			}
		}
		if (r.bad || r.p > aug_end)
			return -1;
		r.p = aug_end;
	}
	if (r.bad)
		return -1;
	c->insn = r.p;
	c->end = r.end;
	return 0;
}

/* The row's rule, or R_FALLBACK. */
static unsigned row_rule(const struct row *w)
{
	unsigned rule, k;

	if (w->ra_how == HOW_UNDEF)
		return R_END;
	if (w->cfa_reg != DWREG_RSP && w->cfa_reg != DWREG_RBP)
		return R_FALLBACK;
	if (w->ra_how != HOW_OFF || w->ra_off != -8)
		return R_FALLBACK;
	if (w->cfa_off < 8 || w->cfa_off % 8 || w->cfa_off / 8 > R_OFF_MAX)
		return R_FALLBACK;
	rule = (w->cfa_reg == DWREG_RBP ? R_CFA_RBP : 0) | (unsigned)(w->cfa_off / 8) << 4;
	switch (w->bp_how) {
	case HOW_SAME:
		return rule;
	case HOW_UNDEF:
		return rule | R_BP_UNKNOWN;
	case HOW_OFF:
		if (w->bp_off >= 0 || -w->bp_off % 8)
			return R_FALLBACK;
		k = (unsigned)(-w->bp_off / 8);
		if (k >= R_BP_UNKNOWN)
			return R_FALLBACK;
		if (!(rule & R_CFA_RBP) && 8 * (int64_t)k > w->cfa_off)
			return R_FALLBACK;
		return rule | k;
	default:
		return R_FALLBACK;
	}
}

/* The FDE at fde for target (inside [lo, hi)): its rule. */
static unsigned fde_rule(const uint8_t *fde, const uint8_t *lo, const uint8_t *hi,
			 uintptr_t target)
{
	struct rd r = { fde, hi, 0 };
	struct cie c;
	struct row init, w;
	uint64_t len, cie_off, range;
	uintptr_t begin, loc;
	const uint8_t *cie_at;

	if (fde < lo)
		return R_FALLBACK;
	len = rd_uint(&r, 4);
	if (len == 0 || len == 0xffffffffu || !rd_need(&r, len))
		return R_FALLBACK;
	r.end = r.p + len;
	cie_at = r.p;
	cie_off = rd_uint(&r, 4);
	if (!cie_off || cie_off > (uint64_t)(cie_at - lo))
		return R_FALLBACK;
	cie_at -= cie_off;
	if (cie_parse(cie_at, lo, hi, &c))
		return R_FALLBACK;
	begin = rd_enc(&r, c.fde_enc);
	range = rd_enc(&r, c.fde_enc & 0x0f);
	if (r.bad || target < begin || target - begin >= range)
		return R_FALLBACK;
	if (c.has_z) {
		uint64_t alen = rd_uleb(&r);

		if (!rd_need(&r, alen))
			return R_FALLBACK;
		r.p += alen;
	}
	memset(&init, 0, sizeof(init));
	init.cfa_reg = -1;
	init.bp_how = HOW_SAME;
	init.ra_how = HOW_SAME; /* the CIE must say where it is */
	{
		struct rd ci = { c.insn, c.end, 0 };
		uintptr_t never = 0;

		if (cfi_run(&ci, &c, &init, NULL, &never, UINTPTR_MAX))
			return R_FALLBACK;
	}
	w = init;
	loc = begin;
	if (cfi_run(&r, &c, &w, &init, &loc, target))
		return R_FALLBACK;
	return row_rule(&w);
}

/* ------------------------------------------------------------------ */
/* Finding the FDE of an address                                        */

struct find {
	uintptr_t target;   /* return address - 1 */
	unsigned rule;
	int found;
};

/* The PT_LOAD of info holding addr: [lo, hi) of its file-backed bytes. */
static int load_range(const struct dl_phdr_info *info, uintptr_t addr,
		      uintptr_t *lo, uintptr_t *hi)
{
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && addr >= a && addr < a + ph->p_filesz) {
			*lo = a;
			*hi = a + ph->p_filesz;
			return 1;
		}
	}
	return 0;
}

/* Binary search of .eh_frame_hdr's table, then the FDE's rule. */
static unsigned hdr_rule(const struct dl_phdr_info *info, const ElfW(Phdr) *eh,
			 uintptr_t target)
{
	const uint8_t *hdr = (const uint8_t *)(info->dlpi_addr + eh->p_vaddr);
	struct rd r = { hdr, hdr + eh->p_memsz, 0 };
	uint8_t ver, ptr_enc, cnt_enc, tab_enc;
	uint64_t count, lo_i, hi_i;
	uintptr_t frame, seg_lo, seg_hi;
	const int32_t *tab;
	int64_t rel;

	ver = (uint8_t)rd_uint(&r, 1);
	ptr_enc = (uint8_t)rd_uint(&r, 1);
	cnt_enc = (uint8_t)rd_uint(&r, 1);
	tab_enc = (uint8_t)rd_uint(&r, 1);
	if (r.bad || ver != 1 || tab_enc != 0x3b) /* datarel | sdata4 */
		return R_FALLBACK;
	frame = rd_enc(&r, ptr_enc);
	count = rd_enc(&r, cnt_enc);
	if (r.bad || !count || count > (1u << 28) || (uintptr_t)r.p & 3 ||
	    !rd_need(&r, count * 8))
		return R_FALLBACK;
	if (!load_range(info, frame, &seg_lo, &seg_hi))
		return R_FALLBACK;
	tab = (const int32_t *)r.p;
	rel = (int64_t)(target - (uintptr_t)hdr);
	if (rel < tab[0])
		return R_FALLBACK;
	lo_i = 0;
	hi_i = count; /* tab[lo_i] <= rel < tab[hi_i] */
	while (hi_i - lo_i > 1) {
		uint64_t mid = lo_i + (hi_i - lo_i) / 2;

		if (tab[2 * mid] <= rel)
			lo_i = mid;
		else
			hi_i = mid;
	}
	return fde_rule(hdr + tab[2 * lo_i + 1], (const uint8_t *)seg_lo,
			(const uint8_t *)seg_hi, target);
}

/* dl_iterate_phdr callback: runs with the loader's lock held, so the
 * module cannot be unmapped while its .eh_frame is read. */
static int find_module(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	const ElfW(Phdr) *eh = NULL;
	uintptr_t lo, hi;
	int i;

	(void)size;
	if (!load_range(info, f->target, &lo, &hi))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			eh = &info->dlpi_phdr[i];
	f->found = 1;
	f->rule = eh ? hdr_rule(info, eh, f->target) : R_FALLBACK;
	return 1;
}

/* The native part of a stack's id: see unwind.h. */
#define HASH_SEED 0x9e3779b97f4a7c15ull

static inline __attribute__((always_inline)) uint64_t mix(uint64_t h, uint64_t x)
{
	h ^= x;
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 32);
}

__thread uint64_t mp_unwind_hash __attribute__((tls_model("initial-exec")));

uint64_t mp_unwind_mix(uint64_t h, uint64_t x)
{
	return mix(h, x);
}

uint64_t mp_unwind_hash_frames(void *const *ip, int n)
{
	uint64_t h = HASH_SEED;
	int i;

	for (i = 0; i < n; i++)
		h = mix(h, (uintptr_t)ip[i]);
	return h;
}

static __attribute__((noinline)) unsigned rule_miss(uintptr_t ip)
{
	struct find f = { ip - 1, R_FALLBACK, 0 };
	uint32_t i = cache_slot(ip), p;
	uint64_t e;
	sigset_t old;

	if (ip >= IP_MAX || ip <= 1)
		return R_FALLBACK; /* cannot be cached (the walk counts on 0, 1) */
	/* the loader's lock: never held across a fork, nor left held by a
	 * signal handler that interrupts us and leaves by longjmp */
	if (!mp_stack_gate_enter())
		return R_FALLBACK; /* fork from this very thread: not cached */
	mp_signals_block(&old);
	dl_iterate_phdr(find_module, &f);
	mp_signals_restore(&old);
	mp_stack_gate_leave();
	e = (uint64_t)ip << R_BITS | f.rule;
	for (p = 0; p < CACHE_PROBES; p++) {
		uint64_t *slot = &cache[(i + p) & (CACHE_SIZE - 1)];

		if (mp_atomic_cas_relaxed_u64(slot, 0, e))
			return f.rule;
	}
	__atomic_store_n(&cache[i], e, __ATOMIC_RELAXED); /* evict */
	return f.rule;
}

static inline unsigned rule_of(uintptr_t ip)
{
	uint32_t i = cache_slot(ip), p;

	for (p = 0; p < CACHE_PROBES; p++) {
		uint64_t e = mp_atomic_load_relaxed_u64(&cache[(i + p) & (CACHE_SIZE - 1)]);

		if ((e >> R_BITS) == ip)
			return (unsigned)e & ((1u << R_BITS) - 1);
		if (!e)
			break;
	}
	return rule_miss(ip);
}

void mp_unwind_flush(void)
{
	uint32_t i;

	if (!cache)
		return;
	for (i = 0; i < CACHE_SIZE; i++)
		if (mp_atomic_load_relaxed_u64(&cache[i]))
			__atomic_store_n(&cache[i], 0, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------------ */
/* This thread's stack                                                  */

static uintptr_t parse_hex(const char **s)
{
	uintptr_t v = 0;

	for (;; (*s)++) {
		char ch = **s;

		if (ch >= '0' && ch <= '9')
			v = v << 4 | (uintptr_t)(ch - '0');
		else if (ch >= 'a' && ch <= 'f')
			v = v << 4 | (uintptr_t)(ch - 'a' + 10);
		else
			return v;
	}
}

/* One line of /proc/self/maps (maybe cut): does it hold sp? */
static int maps_line(const char *s, uintptr_t sp)
{
	uintptr_t lo = parse_hex(&s), hi;

	if (*s++ != '-')
		return 0;
	hi = parse_hex(&s);
	if (sp < lo || sp >= hi)
		return 0;
	stk_hi = hi;
	stk_lo = lo;
	if (strstr(s, "[stack]")) {
		/* The main thread's stack grows down to its rlimit; nothing
		 * else is mapped in that range. */
		struct rlimit rl;
		uintptr_t room = (uintptr_t)1 << 30;

		if (!getrlimit(RLIMIT_STACK, &rl) && rl.rlim_cur < room)
			room = rl.rlim_cur;
		if (hi - room < lo)
			stk_lo = hi - room;
	}
	return 1;
}

/*
 * Find the mapping that holds this thread's stack pointer. Raw system
 * calls: not a cancellation point, no stdio, no malloc.
 */
static __attribute__((noinline)) void stack_find(void)
{
	char buf[4096], line[256];
	size_t ll = 0;
	long fd, n, i;
	int found = 0;
	sigset_t old;

	/* once per thread, and slow: a handler that interrupted it and left
	 * by longjmp would leave the state half-set for good */
	mp_signals_block(&old);
	fd = syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && !found && (n = syscall(SYS_read, fd, buf, sizeof(buf))) > 0) {
		for (i = 0; i < n && !found; i++) {
			if (buf[i] != '\n') {
				if (ll < sizeof(line) - 1)
					line[ll++] = buf[i];
				continue;
			}
			line[ll] = 0;
			ll = 0;
			found = maps_line(line, (uintptr_t)buf);
		}
	}
	if (fd >= 0)
		syscall(SYS_close, fd);
	/* A glibc thread's descriptor sits at the top of its stack: the
	 * tighter bound, should the mapping have merged with a neighbour. */
	if (found && (uintptr_t)pthread_self() > (uintptr_t)buf &&
	    (uintptr_t)pthread_self() < stk_hi)
		stk_hi = (uintptr_t)pthread_self();
	stk_state = found ? 1 : -1;
	mp_signals_restore(&old);
}

/* ------------------------------------------------------------------ */
/* The walk                                                             */

/*
 * The rule of ip, past the first cache slot (which the walk checked): the
 * other probes, then the FDE. ip is in [2, IP_MAX).
 */
static __attribute__((noinline)) unsigned rule_slow(uintptr_t ip)
{
	return rule_of(ip);
}

/*
 * The walk from frame 0 (return address ip, stack pointer sp, rbp bp):
 * out[] gets at most end - out return addresses. stop: whether to stop
 * before the first address in [stop_lo, stop_lo + stop_len) (inlined
 * twice, so that the common case has no such test).
 */
static inline __attribute__((always_inline)) int
walk(void **out, void **end, uintptr_t ip, uintptr_t sp, uintptr_t bp, uintptr_t hi,
     uintptr_t stop_lo, uintptr_t stop_len, const int stop)
{
	const uint64_t *c = cache;
	void **o = out;
	uintptr_t x, cfa, off;
	uint64_t h = HASH_SEED; /* the id's native part, as stack.c folds it */

	while (MP_LIKELY(ip < IP_MAX)) {
		if (MP_UNLIKELY(o == end) || (stop && MP_UNLIKELY(ip - stop_lo < stop_len)))
			goto done;
		*o++ = (void *)ip;
		/*
		 * Common case: the first slot holds ip; x is then its rule.
		 * No entry holds 0 or 1 (rule_miss), so neither can match:
		 * they are sorted out below, off the common path.
		 */
		x = mp_atomic_load_relaxed_u64(&c[cache_slot(ip)]) ^ ((uint64_t)ip << R_BITS);
		if (MP_LIKELY(x == R_FRAME_POINTER)) {
			/* CFA = rbp + 16, rbp saved at CFA - 16: the general
			 * case below with its bounds, for reads at rbp, rbp + 8 */
			if (MP_UNLIKELY(bp < sp || bp > hi - 16 || bp & 7))
				return -1;
			h = mix(h, ip);
			sp = bp + 16;
			ip = ((const uintptr_t *)bp)[1];
			bp = ((const uintptr_t *)bp)[0];
			continue;
		}
		if (MP_UNLIKELY(ip <= 1)) { /* 0: the outermost frame; 1: give up */
			if (ip)
				return -1;
			mp_unwind_hash = h;
			return (int)(o - out) - 1;
		}
		h = mix(h, ip);
		if (MP_UNLIKELY(x >= (1u << R_BITS)))
			x = rule_slow(ip);
		off = (x >> 1) & (R_OFF_MAX << 3);
		if (MP_LIKELY(!(x & R_CFA_RBP))) {
			/* 8 <= off: sp < cfa, aligned; row_rule made 8k <= off */
			cfa = sp + off;
			if (MP_UNLIKELY(cfa > hi))
				return -1;
		} else {
			if (MP_UNLIKELY(!off)) { /* R_END or R_FALLBACK */
				if (x != R_END)
					return -1;
				mp_unwind_hash = h;
				return (int)(o - out);
			}
			/* An unknown rbp is kept as 1: misaligned, so refused. */
			cfa = bp + off;
			/* sp < cfa <= hi and aligned: the reads below are in [sp, hi). */
			if (MP_UNLIKELY(cfa - sp - 1 >= hi - sp || cfa & 7))
				return -1;
			if (MP_UNLIKELY(8 * R_BP(x) > cfa - sp && R_BP(x) != R_BP_UNKNOWN))
				return -1;
		}
		if (R_BP(x))
			bp = R_BP(x) == R_BP_UNKNOWN ? 1 : *(const uintptr_t *)(cfa - 8 * R_BP(x));
		sp = cfa;
		ip = *(const uintptr_t *)(cfa - 8);
	}
	/* An address that cannot be cached gives up if it is to be looked up. */
	if (o != end && !(stop && ip - stop_lo < stop_len))
		return -1;
done:
	/* 0: the outermost frame; 1: give up */
	if (ip == 1)
		return -1;
	mp_unwind_hash = h;
	return (int)(o - out);
}

int __attribute__((noinline)) mp_unwind(void **out, int max, const struct mp_unwind_args *a)
{
	/*
	 * Built with frame pointers: each of memprov's own frames is [saved
	 * rbp, return address], and the saved rbp is the caller's frame. The
	 * first return address outside memprov is frame 0; its caller's
	 * stack pointer is just above it, its rbp is the one saved below it.
	 * This is what the CFI of our own code says at each call.
	 */
	uintptr_t f = (uintptr_t)__builtin_frame_address(0), next, ip, hi;
	uintptr_t skip_lo = a->skip_lo, skip_len = a->skip_hi - a->skip_lo;
	uintptr_t stop_lo = a->stop_lo, stop_len = a->stop_hi - a->stop_lo;
	int own;

	if (MP_UNLIKELY(stk_state <= 0)) {
		if (stk_state < 0 || !cache)
			return -1;
		stack_find();
		if (stk_state < 0)
			return -1;
	}
	hi = stk_hi;
	if (f < stk_lo || f > hi - 16 || f & 7) /* on another stack (sigaltstack, coroutine) */
		return -1;
	for (own = 0;; own++) {
		ip = ((const uintptr_t *)f)[1];
		if (ip - skip_lo >= skip_len)
			break;
		next = ((const uintptr_t *)f)[0];
		if (MP_UNLIKELY(own == OWN_MAX || next <= f || next > hi - 16 || next & 7))
			return -1;
		f = next;
	}
	if (stop_len)
		return walk(out, out + max, ip, f + 16, ((const uintptr_t *)f)[0], hi,
			    stop_lo, stop_len, 1);
	return walk(out, out + max, ip, f + 16, ((const uintptr_t *)f)[0], hi, 0, 0, 0);
}

/* ------------------------------------------------------------------ */
/* Set-up                                                               */

struct text_find {
	uintptr_t addr, lo, hi;
};

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text_find *t = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && ph->p_flags & PF_X &&
		    t->addr >= a && t->addr < a + ph->p_memsz) {
			t->lo = a;
			t->hi = a + ph->p_memsz;
			return 1;
		}
	}
	return 0;
}

void mp_unwind_interp(uintptr_t *lo, uintptr_t *hi)
{
	*lo = interp_lo;
	*hi = interp_hi;
}

/* Called at start-up (constructor) and again in a forked child. */
int mp_unwind_init(void)
{
	if (!interp_hi) {
		struct text_find t = { (uintptr_t)dlsym(RTLD_DEFAULT, "Py_IsInitialized"), 0, 0 };

		if (t.addr) {
			dl_iterate_phdr(find_text, &t);
			interp_lo = t.lo;
			interp_hi = t.hi;
		}
	}
	if (cache)
		return 0; /* the child keeps the parent's rules: same mappings */
	cache = mp_sys_mmap(NULL, CACHE_SIZE * sizeof(uint64_t), PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (cache == MAP_FAILED) {
		cache = NULL;
		return -1;
	}
	mp_reach_own(cache, CACHE_SIZE * sizeof(uint64_t));
	return 0;
}
