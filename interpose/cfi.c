/*
 * cfi.c - the unwind rule of a return address, from its module's
 * .eh_frame: the FDE found through .eh_frame_hdr's sorted table
 * (PT_GNU_EH_FRAME), its CIE, and a small CFI interpreter that runs the
 * instructions up to the address and turns the row into a rule (cfi.h).
 * Every read is bounded by the segment it lies in; anything beyond the
 * simple rules (a signal frame, a DWARF expression, a CFA in another
 * register, an unknown opcode, an address with no FDE) gives R_FALLBACK.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls no other file of memprov.
 */
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cfi.h"

/* ------------------------------------------------------------------ */
/* Bounded reads of .eh_frame / .eh_frame_hdr                          */

int mp_rd_need(struct mp_rd *r, size_t n)
{
	if (r->bad || (size_t)(r->end - r->p) < n || r->p > r->end) {
		r->bad = 1;
		return 0;
	}
	return 1;
}

uint64_t mp_rd_uint(struct mp_rd *r, size_t n)
{
	uint64_t v = 0;

	if (!mp_rd_need(r, n))
		return 0;
	memcpy(&v, r->p, n); /* little-endian */
	r->p += n;
	return v;
}

/* LEB128: *shift ends as the bits read, *last as the last byte. */
static uint64_t rd_leb(struct mp_rd *r, unsigned *shift, uint8_t *last)
{
	uint64_t v = 0;
	uint8_t b;

	*shift = 0;
	do {
		if (!mp_rd_need(r, 1))
			return 0;
		b = *r->p++;
		if (*shift < 64)
			v |= (uint64_t)(b & 0x7f) << *shift;
		*shift += 7;
	} while (b & 0x80);
	*last = b;
	return v;
}

uint64_t mp_rd_uleb(struct mp_rd *r)
{
	unsigned shift;
	uint8_t last;

	return rd_leb(r, &shift, &last);
}

int64_t mp_rd_sleb(struct mp_rd *r)
{
	unsigned shift;
	uint8_t last = 0;
	uint64_t v = rd_leb(r, &shift, &last);

	if (shift < 64 && (last & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A DW_EH_PE-encoded pointer: absptr/udata/sdata 2,4,8, pcrel or absolute. */
uint64_t mp_rd_enc(struct mp_rd *r, uint8_t enc)
{
	uintptr_t at = (uintptr_t)r->p + (uintptr_t)r->bias;
	uint64_t v;

	if (enc == 0xff) /* DW_EH_PE_omit */
		return 0;
	switch (enc & 0x0f) {
	case 0x00: /* absptr */
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		v = mp_rd_uint(r, 8);
		break;
	case 0x02: /* udata2 */
		v = mp_rd_uint(r, 2);
		break;
	case 0x0a: /* sdata2 */
		v = (uint64_t)(int64_t)(int16_t)mp_rd_uint(r, 2);
		break;
	case 0x03: /* udata4 */
		v = mp_rd_uint(r, 4);
		break;
	case 0x0b: /* sdata4 */
		v = (uint64_t)(int64_t)(int32_t)mp_rd_uint(r, 4);
		break;
	case 0x01: /* uleb128 */
		v = mp_rd_uleb(r);
		break;
	case 0x09: /* sleb128 */
		v = (uint64_t)mp_rd_sleb(r);
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
	intptr_t bias; /* of insn: see struct mp_rd */
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
static int cfi_run(struct mp_rd *r, const struct cie *c, struct row *w,
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
			set_reg(w, op & 0x3f, HOW_OFF, (int64_t)mp_rd_uleb(r) * c->data_align);
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
			*loc = mp_rd_enc(r, c->fde_enc);
			if (*loc > target)
				return 0;
			break;
		case 0x02:
			delta = mp_rd_uint(r, 1);
			goto advance;
		case 0x03:
			delta = mp_rd_uint(r, 2);
			goto advance;
		case 0x04:
			delta = mp_rd_uint(r, 4);
			goto advance;
		case 0x05: /* offset_extended */
			reg = mp_rd_uleb(r);
			set_reg(w, reg, HOW_OFF, (int64_t)mp_rd_uleb(r) * c->data_align);
			break;
		case 0x06: /* restore_extended */
			reg = mp_rd_uleb(r);
			if (!init)
				return -1;
			restore_reg(w, init, reg);
			break;
		case 0x07: /* undefined */
			set_reg(w, mp_rd_uleb(r), HOW_UNDEF, 0);
			break;
		case 0x08: /* same_value */
			set_reg(w, mp_rd_uleb(r), HOW_SAME, 0);
			break;
		case 0x09: /* register */
			reg = mp_rd_uleb(r);
			mp_rd_uleb(r);
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
			w->cfa_reg = (int)mp_rd_uleb(r);
			w->cfa_off = (int64_t)mp_rd_uleb(r);
			break;
		case 0x0d: /* def_cfa_register */
			reg = mp_rd_uleb(r);
			if (w->cfa_reg >= 0)
				w->cfa_reg = (int)reg;
			break;
		case 0x0e: /* def_cfa_offset */
			w->cfa_off = (int64_t)mp_rd_uleb(r);
			break;
		case 0x0f: /* def_cfa_expression */
			n = mp_rd_uleb(r);
			if (!mp_rd_need(r, n))
				return -1;
			r->p += n;
			w->cfa_reg = -1;
			break;
		case 0x10: /* expression */
		case 0x16: /* val_expression */
			reg = mp_rd_uleb(r);
			n = mp_rd_uleb(r);
			if (!mp_rd_need(r, n))
				return -1;
			r->p += n;
			set_reg(w, reg, HOW_BAD, 0);
			break;
		case 0x11: /* offset_extended_sf */
			reg = mp_rd_uleb(r);
			set_reg(w, reg, HOW_OFF, mp_rd_sleb(r) * c->data_align);
			break;
		case 0x12: /* def_cfa_sf */
			w->cfa_reg = (int)mp_rd_uleb(r);
			w->cfa_off = mp_rd_sleb(r) * c->data_align;
			break;
		case 0x13: /* def_cfa_offset_sf */
			w->cfa_off = mp_rd_sleb(r) * c->data_align;
			break;
		case 0x14: /* val_offset */
			reg = mp_rd_uleb(r);
			mp_rd_uleb(r);
			set_reg(w, reg, HOW_BAD, 0);
			break;
		case 0x15: /* val_offset_sf */
			reg = mp_rd_uleb(r);
			mp_rd_sleb(r);
			set_reg(w, reg, HOW_BAD, 0);
			break;
		case 0x2e: /* GNU_args_size */
			mp_rd_uleb(r);
			break;
		case 0x2f: /* GNU_negative_offset_extended */
			reg = mp_rd_uleb(r);
			set_reg(w, reg, HOW_OFF, -(int64_t)mp_rd_uleb(r) * c->data_align);
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

/* Parse the CIE at r.p (bytes up to r.end). 0 ok, -1 unsupported. */
static int cie_parse(struct mp_rd r, struct cie *c)
{
	const char *aug;
	uint64_t len, ra;
	uint8_t ver;
	const uint8_t *aug_end = NULL;

	len = mp_rd_uint(&r, 4);
	if (len == 0 || len == 0xffffffffu || !mp_rd_need(&r, len))
		return -1;
	r.end = r.p + len;
	if (mp_rd_uint(&r, 4) != 0) /* CIE id */
		return -1;
	ver = (uint8_t)mp_rd_uint(&r, 1);
	if (ver != 1 && ver != 3)
		return -1;
	aug = (const char *)r.p;
	while (mp_rd_need(&r, 1) && *r.p)
		r.p++;
	if (!mp_rd_need(&r, 1))
		return -1;
	r.p++;
	c->code_align = mp_rd_uleb(&r);
	c->data_align = mp_rd_sleb(&r);
	ra = ver == 1 ? mp_rd_uint(&r, 1) : mp_rd_uleb(&r);
	if (ra != DWREG_RA)
		return -1;
	c->fde_enc = 0; /* absptr */
	c->has_z = aug[0] == 'z';
	if (aug[0] && !c->has_z)
		return -1;
	if (c->has_z) {
		uint64_t alen = mp_rd_uleb(&r);

		if (!mp_rd_need(&r, alen))
			return -1;
		aug_end = r.p + alen;
		for (aug++; *aug; aug++) {
			uint8_t enc;

			switch (*aug) {
			case 'R':
				c->fde_enc = (uint8_t)mp_rd_uint(&r, 1);
				break;
			case 'L':
				mp_rd_uint(&r, 1);
				break;
			case 'P':
				enc = (uint8_t)mp_rd_uint(&r, 1);
				mp_rd_enc(&r, enc & 0x7f); /* indirect bit: skip all the same */
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
	c->bias = r.bias;
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
	if (w->cfa_off < 8 || w->cfa_off % 8 || w->cfa_off / 8 > R_WIDE_MAX)
		return R_FALLBACK;
	rule = (w->cfa_reg == DWREG_RBP ? R_CFA_RBP : 0);
	if (w->cfa_off / 8 > R_OFF_MAX)
		rule |= (unsigned)(w->cfa_off / 8) << R_WIDE_SHIFT; /* a wide rule */
	else
		rule |= (unsigned)(w->cfa_off / 8) << 4;
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

/* The rule of target from the FDE read by r (past its CIE pointer), of CIE c. */
MP_REALIGN static unsigned fde_rule(struct mp_rd *r, const struct cie *c, uintptr_t target)
{
	struct row init, w;
	uint64_t range;
	uintptr_t begin, loc;

	begin = mp_rd_enc(r, c->fde_enc);
	range = mp_rd_enc(r, c->fde_enc & 0x0f);
	if (r->bad)
		return R_FALLBACK;
	if (target < begin || target - begin >= range)
		return R_FRAME_POINTER; /* no FDE holds it: see hdr_rule */
	if (c->has_z) {
		uint64_t alen = mp_rd_uleb(r);

		if (!mp_rd_need(r, alen))
			return R_FALLBACK;
		r->p += alen;
	}
	memset(&init, 0, sizeof(init));
	init.cfa_reg = -1;
	init.bp_how = HOW_SAME;
	init.ra_how = HOW_SAME; /* the CIE must say where it is */
	{
		struct mp_rd ci = { c->insn, c->end, 0, c->bias };
		uintptr_t never = 0;

		if (cfi_run(&ci, c, &init, NULL, &never, UINTPTR_MAX))
			return R_FALLBACK;
	}
	w = init;
	loc = begin;
	if (cfi_run(r, c, &w, &init, &loc, target))
		return R_FALLBACK;
	return row_rule(&w);
}

/* The FDE at fde for target (inside [lo, hi)): its rule. */
MP_REALIGN unsigned mp_cfi_fde_rule(const uint8_t *fde, const uint8_t *lo, const uint8_t *hi,
			 uintptr_t target)
{
	struct mp_rd r = { fde, hi, 0, 0 };
	struct cie c;
	uint64_t len, cie_off;
	const uint8_t *cie_at;

	if (fde < lo)
		return R_FALLBACK;
	len = mp_rd_uint(&r, 4);
	if (len == 0 || len == 0xffffffffu || !mp_rd_need(&r, len))
		return R_FALLBACK;
	r.end = r.p + len;
	cie_at = r.p;
	cie_off = mp_rd_uint(&r, 4);
	if (!cie_off || cie_off > (uint64_t)(cie_at - lo))
		return R_FALLBACK;
	cie_at -= cie_off;
	if (cie_parse((struct mp_rd){ cie_at, hi, 0, 0 }, &c))
		return R_FALLBACK;
	return fde_rule(&r, &c, target);
}

/* ------------------------------------------------------------------ */
/* FDEs and CIEs read from the module's file                            */


/*
 * The pages of the files read last, shared by all files. FDEs of nearby
 * functions lie side by side and a function's FDE is read again for each
 * of its return addresses: `ls -d /` read libc's .eh_frame 47 times, 512
 * bytes at a time, from 8 pages; a Python start-up 441 times from 34.
 * Each page read is kept here (anonymous memory, at most FILE_PAGES of
 * it resident, where reading .eh_frame in place would fault in 64 KiB
 * of the file's mapping at a time), named by the file's serial (a new
 * one at each mp_cfi_file_init: a descriptor number that another file
 * takes later never finds the first one's pages) and its page number.
 * One caller at a time, as for cie[] (the loader's lock); a caller that
 * finds them busy (a signal handler that came in while they were read)
 * reads the file directly.
 */
#define FILE_PAGE 4096
#define FILE_PAGES 16

static struct {
	uint32_t serial; /* 0: empty */
	uint32_t len;    /* bytes read (less than a page at the end of the file) */
	uint64_t page;   /* file offset / FILE_PAGE */
	uint64_t used;   /* file_clock at the last use: the least recent goes */
} pages[FILE_PAGES];
static uint8_t page_data[FILE_PAGES][FILE_PAGE] MP_BIG_BSS;
static uint64_t file_clock;
static uint32_t file_serials;
static volatile int pages_busy;

/* The slot holding page pg of f, read now if it was not kept; -1 on an error. */
static int file_page(const struct mp_cfi_file *f, uint64_t pg)
{
	int i, old = 0;
	size_t got;

	for (i = 0; i < FILE_PAGES; i++) {
		if (pages[i].serial == f->serial && pages[i].page == pg) {
			pages[i].used = ++file_clock;
			return i;
		}
		if (pages[i].used < pages[old].used)
			old = i;
	}
	pages[old].serial = 0;
	got = mp_sys_pread(f->fd, pg * FILE_PAGE, page_data[old], FILE_PAGE);
	if (!got)
		return -1;
	pages[old].serial = f->serial;
	pages[old].page = pg;
	pages[old].len = (uint32_t)got;
	pages[old].used = ++file_clock;
	return old;
}

/* Up to n bytes at address at (inside [f->lo, f->hi)) into buf: how many. */
static size_t file_read(struct mp_cfi_file *f, uintptr_t at, uint8_t *buf, size_t n)
{
	uint64_t off;
	size_t done = 0;

	if (at < f->lo || at >= f->hi)
		return 0;
	if (n > f->hi - at)
		n = f->hi - at;
	off = f->off + (at - f->lo);
	if (pages_busy || !f->serial)
		return mp_sys_pread(f->fd, off, buf, n);
	pages_busy = 1;
	__asm__ volatile("" ::: "memory"); /* a handler that comes in now sees it */
	while (done < n) {
		uint64_t o = off + done;
		size_t in = (size_t)(o % FILE_PAGE), k;
		int s = file_page(f, o / FILE_PAGE);

		if (s < 0 || pages[s].len <= in)
			break;
		k = pages[s].len - in;
		if (k > n - done)
			k = n - done;
		memcpy(buf + done, page_data[s] + in, k);
		done += k;
		if (pages[s].len < FILE_PAGE)
			break; /* the end of the file */
	}
	__asm__ volatile("" ::: "memory");
	pages_busy = 0;
	return done;
}

/* The whole CIE at at (length field included), *n bytes, from the few
 * kept or read now; NULL when it cannot be read whole. */
static const uint8_t *file_cie(struct mp_cfi_file *f, uintptr_t at, size_t *n)
{
	unsigned i = f->cie_next % MP_CFI_CIES, k;
	uint32_t len;
	size_t got;

	for (k = 0; k < MP_CFI_CIES; k++)
		if (f->cie[k].at == at && f->cie[k].len) {
			*n = f->cie[k].len;
			return f->cie[k].b;
		}
	f->cie[i].at = 0;
	got = file_read(f, at, f->cie[i].b, sizeof(f->cie[i].b));
	if (got < 4)
		return NULL;
	memcpy(&len, f->cie[i].b, 4);
	if (len == 0 || len > got - 4)
		return NULL;
	f->cie[i].at = at;
	f->cie[i].len = (uint16_t)(len + 4);
	f->cie_next++;
	*n = len + 4;
	return f->cie[i].b;
}

#define FILE_FDE_MAX 512 /* python3.11's longest FDE is 380 bytes, libc's 196 */

/* The rule of the FDE at address fde for target, read from the file;
 * R_FALLBACK for anything else, which the caller reads in memory again. */
MP_REALIGN static unsigned file_fde_rule(struct mp_cfi_file *f, uintptr_t fde, uintptr_t target)
{
	uint8_t b[FILE_FDE_MAX];
	struct mp_rd r = { b, b, 0, (intptr_t)(fde - (uintptr_t)b) };
	const uint8_t *cb;
	struct cie c;
	size_t n, cn;
	uint64_t len, cie_off;
	uintptr_t cie_at;

	n = file_read(f, fde, b, sizeof(b));
	if (n < 8)
		return R_FALLBACK;
	r.end = b + n;
	len = mp_rd_uint(&r, 4);
	if (len == 0 || len > n - 4) /* 0xffffffff (64-bit), or longer than the buffer */
		return R_FALLBACK;
	r.end = r.p + len;
	cie_off = mp_rd_uint(&r, 4);
	if (!cie_off || cie_off > fde + 4 - f->lo)
		return R_FALLBACK;
	cie_at = fde + 4 - cie_off;
	cb = file_cie(f, cie_at, &cn);
	if (!cb || cie_parse((struct mp_rd){ cb, cb + cn, 0, (intptr_t)(cie_at - (uintptr_t)cb) }, &c))
		return R_FALLBACK;
	return fde_rule(&r, &c, target);
}

/* ------------------------------------------------------------------ */
/* Finding the FDE of an address                                        */

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

/*
 * Entry i of .eh_frame_hdr's table, read from the file where it can be
 * (else in memory). The search reads entries pages apart: in place, each
 * faults in 64 KiB of the module's mapping around it (the kernel's
 * fault-around), 64 KiB more of Python's resident memory under memprov
 * for the table of python3.11 (76 KiB), which the program never reads.
 * From the file they are the page cache's; a search first narrows the
 * range with the file's samples (read once each), then reads one or two
 * pages of the table. A table of at most HDR_IN_PLACE bytes (the
 * kernel's window: libc's 29 KiB, git's 46 KiB) is read in place: it
 * faults in a window or two, where reading it from the file made some
 * 50 more preads a process (git --version: 58, 108 so; python3 -c pass:
 * 84 in place, 122 now, 186 with every table read entry by entry).
 */
#define HDR_IN_PLACE (64 * 1024)

static int32_t tab_at(struct mp_cfi_file *file, const int32_t *tab, uint64_t i)
{
	int32_t v;

	if (file && file_read(file, (uintptr_t)&tab[i], (uint8_t *)&v, sizeof(v)) == sizeof(v))
		return v;
	return tab[i];
}

static int32_t sample_at(struct mp_cfi_file *file, const int32_t *tab, uint64_t count, unsigned j)
{
	uint64_t bit = 1ull << j;

	if (!(file->samp_have & bit)) {
		file->samp[j] = tab_at(file, tab, 2 * (j * count / MP_CFI_SAMPLES));
		__asm__ volatile("" ::: "memory"); /* the value before its bit */
		file->samp_have |= bit;
	}
	return file->samp[j];
}

/*
 * Binary search of .eh_frame_hdr's table, then the FDE's rule. Code that
 * no FDE covers (V8's builtins, built into node's text without CFI;
 * assembly written without it) gets the frame-pointer rule: what
 * libunwind falls back to there too, so the walk need not hand the whole
 * stack to it (node: 5,459 of 452,812 stacks, each some 50 us in
 * libunwind). The walk checks rbp's bounds as for any rule; where they
 * fail, libunwind takes the stack as before.
 */
static unsigned hdr_rule(const struct dl_phdr_info *info, const ElfW(Phdr) *eh,
			 uintptr_t target, struct mp_cfi_file *file)
{
	const uint8_t *hdr = (const uint8_t *)(info->dlpi_addr + eh->p_vaddr);
	struct mp_rd r = { hdr, hdr + eh->p_memsz, 0, 0 };
	unsigned rule;
	uint8_t ver, ptr_enc, cnt_enc, tab_enc;
	uint64_t count, lo_i, hi_i;
	uintptr_t frame, seg_lo, seg_hi;
	const int32_t *tab;
	struct mp_cfi_file *table; /* where the table is read: NULL in memory */
	const uint8_t *fde;
	int64_t rel;

	ver = (uint8_t)mp_rd_uint(&r, 1);
	ptr_enc = (uint8_t)mp_rd_uint(&r, 1);
	cnt_enc = (uint8_t)mp_rd_uint(&r, 1);
	tab_enc = (uint8_t)mp_rd_uint(&r, 1);
	if (r.bad || ver != 1 || tab_enc != 0x3b) /* datarel | sdata4 */
		return R_FALLBACK;
	frame = mp_rd_enc(&r, ptr_enc);
	count = mp_rd_enc(&r, cnt_enc);
	if (r.bad || !count || count > (1u << 28) || (uintptr_t)r.p & 3 ||
	    !mp_rd_need(&r, count * 8))
		return R_FALLBACK;
	if (!load_range(info, frame, &seg_lo, &seg_hi))
		return R_FALLBACK;
	tab = (const int32_t *)r.p;
	if (file && (file->lo != seg_lo || file->hi != seg_hi))
		file = NULL;
	table = count * 8 > HDR_IN_PLACE ? file : NULL;
	rel = (int64_t)(target - (uintptr_t)hdr);
	if (rel < tab_at(table, tab, 0))
		return R_FRAME_POINTER;
	lo_i = 0;
	hi_i = count; /* tab[lo_i] <= rel < tab[hi_i] */
	if (table) {
		unsigned lo_j = 0, hi_j = MP_CFI_SAMPLES; /* the same, over samples */

		while (hi_j - lo_j > 1) {
			unsigned mid = lo_j + (hi_j - lo_j) / 2;

			if (sample_at(table, tab, count, mid) <= rel)
				lo_j = mid;
			else
				hi_j = mid;
		}
		lo_i = lo_j * count / MP_CFI_SAMPLES;
		if (hi_j < MP_CFI_SAMPLES)
			hi_i = hi_j * count / MP_CFI_SAMPLES;
	}
	while (hi_i - lo_i > 1) {
		uint64_t mid = lo_i + (hi_i - lo_i) / 2;

		if (tab_at(table, tab, 2 * mid) <= rel)
			lo_i = mid;
		else
			hi_i = mid;
	}
	fde = hdr + tab_at(table, tab, 2 * lo_i + 1);
	if (file) {
		/* a rule that is not simple, as any bytes that are not an FDE
		 * give, is read again in memory: the same rule whatever the
		 * descriptor reads (unwind.c then checks it is still its own) */
		rule = file_fde_rule(file, (uintptr_t)fde, target);
		if (rule != R_FALLBACK)
			return rule;
		file->from_memory++;
		fde = hdr + tab[2 * lo_i + 1];
	}
	return mp_cfi_fde_rule(fde, (const uint8_t *)seg_lo, (const uint8_t *)seg_hi, target);
}

/* The module's PT_GNU_EH_FRAME, or NULL. */
static const ElfW(Phdr) *eh_phdr(const struct dl_phdr_info *info)
{
	const ElfW(Phdr) *eh = NULL;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
			eh = &info->dlpi_phdr[i];
	return eh;
}

/* Whether the first bytes (up to 256) at file offset off equal those at mem. */
static int file_same(int fd, uint64_t off, const void *mem, size_t n)
{
	uint8_t b[256];

	if (n > sizeof(b))
		n = sizeof(b);
	return mp_sys_pread(fd, off, b, n) == n && !memcmp(b, mem, n);
}

size_t mp_cfi_hdr_size(const struct dl_phdr_info *info)
{
	const ElfW(Phdr) *eh = eh_phdr(info);

	return eh ? eh->p_memsz : 0;
}

int mp_cfi_file_init(struct mp_cfi_file *f, const struct dl_phdr_info *info, int fd)
{
	const ElfW(Phdr) *eh = eh_phdr(info);
	const uint8_t *hdr;
	struct mp_rd r;
	uintptr_t frame;
	int i;

	memset(f, 0, sizeof(*f));
	f->fd = fd;
	f->serial = ++file_serials ? file_serials : ++file_serials;
	if (!eh || eh->p_filesz < eh->p_memsz)
		return -1;
	hdr = (const uint8_t *)(info->dlpi_addr + eh->p_vaddr);
	r = (struct mp_rd){ hdr, hdr + eh->p_memsz, 0, 0 };
	if (mp_rd_uint(&r, 1) != 1)
		return -1;
	{
		uint8_t ptr_enc = (uint8_t)mp_rd_uint(&r, 1);

		mp_rd_uint(&r, 2);
		frame = mp_rd_enc(&r, ptr_enc);
	}
	if (r.bad || !load_range(info, frame, &f->lo, &f->hi))
		return -1;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && info->dlpi_addr + ph->p_vaddr == f->lo)
			f->off = ph->p_offset;
	}
	/* the file is the one mapped: its unwind table's start and its notes
	 * (the build-id among them) read the same as in memory */
	if (!file_same(fd, eh->p_offset, hdr, eh->p_memsz))
		return -1;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE && ph->p_filesz == ph->p_memsz &&
		    !file_same(fd, ph->p_offset, (const void *)(info->dlpi_addr + ph->p_vaddr),
			       ph->p_memsz))
			return -1;
	}
	return 0;
}

int mp_cfi_covers(const struct dl_phdr_info *info, uintptr_t target)
{
	uintptr_t lo, hi;

	return load_range(info, target, &lo, &hi);
}

unsigned mp_cfi_module_rule(const struct dl_phdr_info *info, uintptr_t target,
			    struct mp_cfi_file *file)
{
	const ElfW(Phdr) *eh = eh_phdr(info);

	return eh ? hdr_rule(info, eh, target, file) : R_FALLBACK;
}
