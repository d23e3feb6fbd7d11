/*
 * cfi.h - unwind rules read from .eh_frame (cfi.c), for unwind.c's walk.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls no other file of memprov.
 */
#ifndef MEMPROV_CFI_H
#define MEMPROV_CFI_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

#include "sys.h"

/*
 * A rule, 17 bits:
 *
 *   bit 16      CFA is rbp + offset (else rsp + offset)
 *   bits 15..4  offset / 8, 1..4095 (frames of up to 32 KiB)
 *   bits 3..0   rbp: 0 unchanged, 15 unknown, k: saved at CFA - 8k
 *
 * Offset 0 never occurs in a real rule: with the rbp bit set, it encodes
 * the special rules (so the walk's common case, an rsp-based CFA, needs
 * no test for them). An rsp-based rule saves rbp inside its frame
 * (8k <= offset): the walk reads it without a bound check.
 *
 * A frame of more than 32 KiB (a function with a 64 KiB buffer on its
 * stack, such as CPython's start-up) has a wide rule: offset bits 15..4
 * zero, offset / 8 in bits 31..17 (up to 256 KiB), R_WIDE_OFF(r) bytes.
 * Only cfi.c's rules can be wide; the walk's cache holds R_BIG for them
 * and keeps the offset aside (unwind.c).
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
#define R_BIG (R_CFA_RBP | 2u)   /* in the walk's cache: see the wide rules */
#define R_WIDE_SHIFT 17
#define R_WIDE_MAX 0x7fffu
#define R_WIDE_OFF(r) ((uint64_t)((r) >> R_WIDE_SHIFT) * 8)

/*
 * A bounded reader: any read past end sets bad and returns 0. The byte at
 * p lies at address p + bias in the module (not 0 for a copy read from
 * the module's file), which pc-relative pointers are relative to.
 */
struct mp_rd {
	const uint8_t *p, *end;
	int bad;
	intptr_t bias;
};

int mp_rd_need(struct mp_rd *r, size_t n) MP_HIDDEN;
uint64_t mp_rd_uint(struct mp_rd *r, size_t n) MP_HIDDEN;  /* n bytes, little-endian */
uint64_t mp_rd_uleb(struct mp_rd *r) MP_HIDDEN;
int64_t mp_rd_sleb(struct mp_rd *r) MP_HIDDEN;
uint64_t mp_rd_enc(struct mp_rd *r, uint8_t enc) MP_HIDDEN; /* a DW_EH_PE pointer */

/* The rule of target (return address - 1) from the FDE at fde, its CIE
 * and instructions inside [lo, hi); R_FALLBACK when not simple. */
unsigned mp_cfi_fde_rule(const uint8_t *fde, const uint8_t *lo, const uint8_t *hi,
			 uintptr_t target) MP_HIDDEN;

/*
 * A module whose FDEs and CIEs are read from its file with pread, not
 * from its mapping: each page of a file mapping the lookup touches stays
 * mapped, 64 KiB around it at a time (the kernel's fault-around), and
 * counts in the program's resident memory; python3.11's 400 KiB of
 * .eh_frame and libc's 150 KiB were most of memprov's share of a Python
 * script's RSS. unwind.c opens the file and checks it is the one mapped;
 * .eh_frame_hdr's table is still read in memory (the binary search needs
 * it at every step; it is a fifth of .eh_frame's size).
 *
 * A lookup changes cie[] (the CIEs read last): one caller at a time
 * (unwind.c looks up with the loader's lock held). An FDE or CIE longer
 * than the buffers, a read that fails, and an FDE whose rule is not
 * simple (what bytes that are not an FDE give) are read in memory
 * instead, and counted in from_memory.
 */
#define MP_CFI_CIES 4
#define MP_CFI_CIE_MAX 128
#define MP_CFI_SAMPLES 64
struct mp_cfi_file {
	int fd;
	uint32_t serial;  /* names its pages in cfi.c's page cache (never 0) */
	uintptr_t lo, hi; /* the PT_LOAD holding .eh_frame: its file-backed bytes */
	uint64_t off;     /* the file offset of lo */
	unsigned cie_next;
	struct {
		uintptr_t at; /* 0: empty */
		uint16_t len;
		uint8_t b[MP_CFI_CIE_MAX];
	} cie[MP_CFI_CIES];
	uint64_t from_memory; /* FDEs read in memory all the same */
	/* .eh_frame_hdr's table sampled: entry i * count / MP_CFI_SAMPLES's
	 * start address, read once (bit i of samp_have), so that a search
	 * reads one or two pages of the table, not some 20 entries */
	uint64_t samp_have;
	int32_t samp[MP_CFI_SAMPLES];
};

/* The size of the module's .eh_frame_hdr (8 bytes per FDE), 0 if none. */
size_t mp_cfi_hdr_size(const struct dl_phdr_info *info) MP_HIDDEN;

/*
 * Set f up to read the .eh_frame of module info from fd, its file: 0, or
 * -1 when fd does not read as the module does (the start of its
 * .eh_frame_hdr and its notes, the build-id among them, differ).
 */
int mp_cfi_file_init(struct mp_cfi_file *f, const struct dl_phdr_info *info, int fd) MP_HIDDEN;

/* Whether target lies in one of the module's loaded segments: cheap
 * enough to ask of every module before mp_cfi_module_rule. */
int mp_cfi_covers(const struct dl_phdr_info *info, uintptr_t target) MP_HIDDEN;

/*
 * The rule for target, which the module info holds (mp_cfi_covers).
 * file: where its .eh_frame is read (NULL: in memory).
 */
unsigned mp_cfi_module_rule(const struct dl_phdr_info *info, uintptr_t target,
			    struct mp_cfi_file *file) MP_HIDDEN;

#endif /* MEMPROV_CFI_H */
