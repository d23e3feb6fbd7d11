/*
 * test-cfi.c - the .eh_frame readers of interpose/cfi.c, linked alone, on
 * crafted input (t1080): LEB128 and pointer encodings (including
 * truncated and over-long input), and the rule a CIE + FDE give at each
 * address (prologue steps, frame pointer, remember/restore state, DWARF
 * expressions, signal-frame CIEs, addresses outside the FDE). Prints one
 * line per failed check and "cfi: N checks, F failed"; exits 1 on a
 * failure.
 */
#include <stdio.h>
#include <string.h>

#include "../../interpose/cfi.h"

static int checks, failed;

#define CHECK(cond, ...)                                  \
	do {                                              \
		checks++;                                 \
		if (!(cond)) {                            \
			failed++;                         \
			printf("FAIL %s:%d: ", __FILE__, __LINE__); \
			printf(__VA_ARGS__);              \
			printf("\n");                     \
		}                                         \
	} while (0)

static void leb(void)
{
	static const struct {
		unsigned char in[12];
		size_t len;
		uint64_t u;
		int64_t s;
		int bad;
	} t[] = {
		{ { 0x00 }, 1, 0, 0, 0 },
		{ { 0x7f }, 1, 127, -1, 0 },
		{ { 0x80, 0x01 }, 2, 128, 128, 0 },
		{ { 0x80, 0x7f }, 2, 16256, -128, 0 },
		{ { 0xe5, 0x8e, 0x26 }, 3, 624485, 624485, 0 },
		{ { 0xc0, 0xbb, 0x78 }, 3, 1973696, -123456, 0 },
		{ { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01 }, 10,
		  UINT64_MAX, -1, 0 },
		{ { 0x80 }, 1, 0, 0, 1 },       /* the input ends inside the number */
		{ { 0xff, 0xff }, 2, 0, 0, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct mp_rd r = { t[i].in, t[i].in + t[i].len, 0, 0 };
		uint64_t u = mp_rd_uleb(&r);

		CHECK(r.bad == t[i].bad, "uleb case %zu: bad %d", i, r.bad);
		if (!t[i].bad) {
			CHECK(u == t[i].u, "uleb case %zu: %llu", i, (unsigned long long)u);
			CHECK(r.p == t[i].in + t[i].len, "uleb case %zu: consumed", i);
			r.p = t[i].in;
			CHECK(mp_rd_sleb(&r) == t[i].s, "sleb case %zu", i);
		}
	}
}

static void encodings(void)
{
	unsigned char b[16];
	struct mp_rd r;
	int16_t s16 = -2;
	int32_t s32 = -100;

	memcpy(b, &s16, 2);
	r = (struct mp_rd){ b, b + 2, 0, 0 };
	CHECK((int64_t)mp_rd_enc(&r, 0x0a) == -2 && !r.bad, "sdata2");
	memcpy(b, &s32, 4);
	r = (struct mp_rd){ b, b + 4, 0, 0 };
	CHECK((int64_t)mp_rd_enc(&r, 0x0b) == -100, "sdata4");
	r = (struct mp_rd){ b, b + 4, 0, 0 };
	CHECK(mp_rd_enc(&r, 0x1b) == (uint64_t)(uintptr_t)b - 100, "pcrel sdata4");
	/* a copy read from the file: pc-relative to where the bytes lie in the module */
	r = (struct mp_rd){ b, b + 4, 0, 0x1000 };
	CHECK(mp_rd_enc(&r, 0x1b) == (uint64_t)(uintptr_t)b + 0x1000 - 100, "pcrel sdata4, bias");
	r = (struct mp_rd){ b, b + 3, 0, 0 };
	mp_rd_enc(&r, 0x03);
	CHECK(r.bad, "udata4 with 3 bytes left must fail");
	r = (struct mp_rd){ b, b + 8, 0, 0 };
	mp_rd_enc(&r, 0x33); /* datarel: not in .eh_frame */
	CHECK(r.bad, "datarel must be refused");
	r = (struct mp_rd){ b, b + 8, 0, 0 };
	CHECK(mp_rd_enc(&r, 0xff) == 0 && r.p == b && !r.bad, "omit");
}

/*
 * One CIE then one FDE, laid out as the linker lays .eh_frame out. The
 * CIE: augmentation aug ("zR" or "zRS"), code align 1, data align -8, RA
 * column 16, pointers absptr (8 bytes); its instructions: CFA = rsp + 8,
 * RA at CFA - 8. The FDE covers [BEGIN, BEGIN + 64) with program insn.
 */
#define BEGIN 0x400000ul

static size_t build(unsigned char *buf, const char *aug, const unsigned char *insn,
		    size_t ninsn)
{
	unsigned char *p = buf, *len_at, *cie = buf;
	uint32_t v32;
	uint64_t v64;

	len_at = p;
	p += 4;
	v32 = 0;
	memcpy(p, &v32, 4), p += 4;                  /* CIE id */
	*p++ = 1;                                    /* version */
	memcpy(p, aug, strlen(aug) + 1), p += strlen(aug) + 1;
	*p++ = 1;                                    /* code align */
	*p++ = 0x78;                                 /* data align -8 */
	*p++ = 16;                                   /* RA column */
	*p++ = 1;                                    /* augmentation data length */
	*p++ = 0x00;                                 /* R: absptr */
	*p++ = 0x0c, *p++ = 7, *p++ = 8;             /* def_cfa rsp+8 */
	*p++ = 0x90, *p++ = 1;                       /* offset r16, 1*-8 */
	while ((p - buf) % 8)
		*p++ = 0;                            /* nop */
	v32 = (uint32_t)(p - len_at - 4);
	memcpy(len_at, &v32, 4);

	len_at = p;
	p += 4;
	v32 = (uint32_t)(p - cie);                   /* back to the CIE */
	memcpy(p, &v32, 4), p += 4;
	v64 = BEGIN;
	memcpy(p, &v64, 8), p += 8;
	v64 = 64;
	memcpy(p, &v64, 8), p += 8;
	*p++ = 0;                                    /* augmentation data length */
	memcpy(p, insn, ninsn), p += ninsn;
	while ((p - buf) % 8)
		*p++ = 0;
	v32 = (uint32_t)(p - len_at - 4);
	memcpy(len_at, &v32, 4);
	return (size_t)(len_at - buf); /* where the FDE starts */
}

static unsigned rule_at(const char *aug, const unsigned char *insn, size_t n, uintptr_t at)
{
	static unsigned char buf[512];
	size_t fde;

	memset(buf, 0, sizeof(buf));
	fde = build(buf, aug, insn, n);
	return mp_cfi_fde_rule(buf + fde, buf, buf + sizeof(buf), at);
}

#define RULE(cfa_rbp, off, bp) (((cfa_rbp) ? R_CFA_RBP : 0u) | (unsigned)((off) / 8) << 4 | (bp))

static void rules(void)
{
	/* push rbp; mov rsp,rbp; ... the usual prologue */
	static const unsigned char prologue[] = {
		0x41,             /* advance 1 */
		0x0e, 0x10,       /* def_cfa_offset 16 */
		0x86, 0x02,       /* offset r6 (rbp), 2*-8 */
		0x43,             /* advance 3 */
		0x0d, 0x06,       /* def_cfa_register rbp */
		0x4a,             /* advance 10 */
		0x0a,             /* remember_state */
		0x0c, 0x07, 0x08, /* def_cfa rsp+8 (an epilogue) */
		0xc6,             /* restore r6 */
		0x41,             /* advance 1 */
		0x0b,             /* restore_state */
	};
	static const unsigned char expr[] = {
		0x41,
		0x0f, 0x02, 0x77, 0x08, /* def_cfa_expression (2 bytes) */
	};
	static const unsigned char bad_op[] = { 0x41, 0x3f }; /* unknown opcode */
	/* a 64 KiB buffer: CFA rsp+65600, then rsp+300000 (past wide rules) */
	static const unsigned char wide[] = {
		0x41, 0x0e, 0xc0, 0x80, 0x04,       /* advance 1; def_cfa_offset 65600 */
		0x41, 0x0e, 0xe0, 0xa7, 0x12,       /* advance 1; def_cfa_offset 300000 */
	};
	unsigned r;

	r = rule_at("zR", prologue, sizeof(prologue), BEGIN);
	CHECK(r == RULE(0, 8, 0), "entry: CFA rsp+8, rbp same (got %#x)", r);
	r = rule_at("zR", prologue, sizeof(prologue), BEGIN + 1);
	CHECK(r == RULE(0, 16, 2), "after push: CFA rsp+16, rbp at CFA-16 (got %#x)", r);
	r = rule_at("zR", prologue, sizeof(prologue), BEGIN + 4);
	CHECK(r == R_FRAME_POINTER, "after mov: the frame-pointer rule (got %#x)", r);
	r = rule_at("zR", prologue, sizeof(prologue), BEGIN + 14);
	CHECK(r == RULE(0, 8, 0), "epilogue: CFA rsp+8, rbp restored (got %#x)", r);
	r = rule_at("zR", prologue, sizeof(prologue), BEGIN + 15);
	CHECK(r == R_FRAME_POINTER, "after restore_state (got %#x)", r);
	r = rule_at("zR", prologue, sizeof(prologue), BEGIN + 64);
	/* code no FDE holds: its frame pointer, as libunwind assumes there */
	CHECK(r == R_FRAME_POINTER, "past the FDE's range (got %#x)", r);
	r = rule_at("zR", prologue, sizeof(prologue), BEGIN - 1);
	CHECK(r == R_FRAME_POINTER, "before the FDE (got %#x)", r);
	r = rule_at("zR", expr, sizeof(expr), BEGIN + 2);
	CHECK(r == R_FALLBACK, "a DWARF expression CFA (got %#x)", r);
	r = rule_at("zR", expr, sizeof(expr), BEGIN);
	CHECK(r == RULE(0, 8, 0), "before the expression (got %#x)", r);
	r = rule_at("zRS", prologue, sizeof(prologue), BEGIN + 4);
	CHECK(r == R_FALLBACK, "a signal frame's CIE (got %#x)", r);
	r = rule_at("zR", bad_op, sizeof(bad_op), BEGIN + 2);
	CHECK(r == R_FALLBACK, "an unknown opcode (got %#x)", r);
	r = rule_at("zR", wide, sizeof(wide), BEGIN + 1);
	CHECK(r == (65600u / 8) << R_WIDE_SHIFT && R_WIDE_OFF(r) == 65600,
	      "a 64 KiB frame: a wide rule, CFA rsp+65600 (got %#x)", r);
	r = rule_at("zR", wide, sizeof(wide), BEGIN + 2);
	CHECK(r == R_FALLBACK, "a frame of 300,000 bytes: past the wide rules (got %#x)", r);
}

/* An FDE cut short anywhere never reads past the buffer and falls back. */
static void truncated(void)
{
	static const unsigned char prologue[] = { 0x41, 0x0e, 0x10, 0x86, 0x02 };
	unsigned char buf[256], cut[256];
	size_t fde, n, end;
	uint32_t len;

	memset(buf, 0, sizeof(buf));
	fde = build(buf, "zR", prologue, sizeof(prologue));
	memcpy(&len, buf + fde, 4);
	end = fde + 4 + len;
	for (n = fde; n < end; n++) {
		unsigned r;

		memcpy(cut, buf, n);
		r = mp_cfi_fde_rule(cut + fde, cut, cut + n, BEGIN + 1);
		CHECK(r == R_FALLBACK, "FDE cut at %zu of %zu: %#x", n, end, r);
	}
}

int main(void)
{
	leb();
	encodings();
	rules();
	truncated();
	printf("cfi: %d checks, %d failed\n", checks, failed);
	return failed ? 1 : 0;
}
