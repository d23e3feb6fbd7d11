/*
 * hooks_dlsym.c - interposed dlsym and dlvsym.
 *
 * The CUDA runtime (shared or linked statically into the program) reaches
 * the driver through dlsym(handle, "cuGetProcAddress_v2"); to hook the
 * driver's allocation entry points we must see that lookup (DESIGN.md
 * decision 6). Everything else must behave exactly as without us:
 *
 *  - The real dlsym/dlvsym are found by reading libc's (or, on glibc before
 *    2.34, libdl's) dynamic symbol table through dl_iterate_phdr, never by
 *    calling the public dlsym: that would be ourselves. Nothing here
 *    allocates, so the core's bootstrap may call dlsym(RTLD_NEXT, "malloc")
 *    through this hook before anything is initialized.
 *  - dlsym(RTLD_NEXT, ...) depends on the caller's return address. The
 *    x86-64 entry points are a few instructions of assembly that ask
 *    mp_dlsym_route whether the name is a CUDA one and otherwise jump to
 *    the real function, so it sees the original return address. A CUDA
 *    name looked up with RTLD_NEXT is resolved by walking the objects
 *    after the caller ourselves (mp_dlsym_next_after).
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "cuda_hooks.h"

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

/* Read by the assembly entry points: keep the names in step. */
void *mp_dlsym_ptr MP_HIDDEN;
void *mp_dlvsym_ptr MP_HIDDEN;

int mp_dlsym_route(const char *name) MP_HIDDEN;
void *mp_dlsym_cuda(void *handle, const char *name) MP_HIDDEN;
void *mp_dlvsym_cuda(void *handle, const char *name, const char *version) MP_HIDDEN;

/* One loaded object's dynamic symbol table. */
struct elf_syms {
	uintptr_t base;
	const ElfW(Sym) *symtab;
	const char *strtab;
	const uint32_t *hash;     /* DT_HASH or NULL */
	const uint32_t *gnu_hash; /* DT_GNU_HASH or NULL */
	const ElfW(Half) *versym;
	const ElfW(Verdef) *verdef;
};

static uintptr_t fix_ptr(uintptr_t base, uintptr_t v)
{
	/* ld.so relocates these in place on most targets; not everywhere. */
	return v < base ? v + base : v;
}

static int elf_syms_init(struct elf_syms *es, const struct dl_phdr_info *info)
{
	const ElfW(Dyn) *dyn = NULL;
	uintptr_t b = info->dlpi_addr;

	memset(es, 0, sizeof(*es));
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(b + info->dlpi_phdr[i].p_vaddr);
	if (!dyn)
		return -1;
	es->base = b;
	for (; dyn->d_tag != DT_NULL; dyn++) {
		uintptr_t p = fix_ptr(b, dyn->d_un.d_ptr);

		switch (dyn->d_tag) {
		case DT_SYMTAB: es->symtab = (const ElfW(Sym) *)p; break;
		case DT_STRTAB: es->strtab = (const char *)p; break;
		case DT_HASH: es->hash = (const uint32_t *)p; break;
		case DT_GNU_HASH: es->gnu_hash = (const uint32_t *)p; break;
		case DT_VERSYM: es->versym = (const ElfW(Half) *)p; break;
		case DT_VERDEF: es->verdef = (const ElfW(Verdef) *)p; break;
		}
	}
	if (!es->symtab || !es->strtab || (!es->hash && !es->gnu_hash))
		return -1;
	return 0;
}

/* Does symbol idx carry version (NULL: the default, non-hidden one)? */
static int version_ok(const struct elf_syms *es, uint32_t idx, const char *version)
{
	const ElfW(Verdef) *vd = es->verdef;
	ElfW(Half) v;

	if (!es->versym)
		return 1;
	v = es->versym[idx];
	if (!version)
		return !(v & 0x8000);
	while (vd) {
		if (vd->vd_ndx == (v & 0x7fff)) {
			const ElfW(Verdaux) *va =
				(const ElfW(Verdaux) *)((const char *)vd + vd->vd_aux);
			return strcmp(es->strtab + va->vda_name, version) == 0;
		}
		if (!vd->vd_next)
			break;
		vd = (const ElfW(Verdef) *)((const char *)vd + vd->vd_next);
	}
	return 0;
}

static void *sym_match(const struct elf_syms *es, uint32_t idx, const char *name,
		       const char *version)
{
	const ElfW(Sym) *s = &es->symtab[idx];
	int type = ELF64_ST_TYPE(s->st_info);

	if (s->st_shndx == SHN_UNDEF || !s->st_value)
		return NULL;
	if (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE)
		return NULL; /* IFUNCs would need calling: not needed here */
	if (strcmp(es->strtab + s->st_name, name) || !version_ok(es, idx, version))
		return NULL;
	return (void *)(es->base + s->st_value);
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static uint32_t sysv_hash(const char *s)
{
	uint32_t h = 0, g;

	for (; *s; s++) {
		h = (h << 4) + (unsigned char)*s;
		g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

static void *elf_lookup(const struct elf_syms *es, const char *name, const char *version)
{
	void *p;

	if (es->gnu_hash) {
		const uint32_t *gh = es->gnu_hash;
		uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_size = gh[2];
		const uint32_t *buckets =
			(const uint32_t *)((const ElfW(Addr) *)&gh[4] + bloom_size);
		const uint32_t *chain = buckets + nbuckets;
		uint32_t h = gnu_hash(name), i;

		if (!nbuckets)
			return NULL;
		i = buckets[h % nbuckets];
		if (i < symoffset)
			return NULL;
		for (;; i++) {
			uint32_t h2 = chain[i - symoffset];

			if ((h | 1) == (h2 | 1) && (p = sym_match(es, i, name, version)))
				return p;
			if (h2 & 1)
				return NULL;
		}
	}
	{
		const uint32_t *hs = es->hash;
		uint32_t nbucket = hs[0];
		const uint32_t *bucket = hs + 2, *chain = bucket + nbucket;

		for (uint32_t i = bucket[sysv_hash(name) % nbucket]; i; i = chain[i])
			if ((p = sym_match(es, i, name, version)))
				return p;
	}
	return NULL;
}

static int name_is(const char *path, const char *base)
{
	const char *slash = strrchr(path, '/');

	return strcmp(slash ? slash + 1 : path, base) == 0;
}

struct find_real {
	const char *lib;
	void *dlsym, *dlvsym;
};

static int find_real_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct find_real *fr = data;
	struct elf_syms es;

	(void)size;
	if (!info->dlpi_name || !name_is(info->dlpi_name, fr->lib))
		return 0;
	if (elf_syms_init(&es, info))
		return 0;
	fr->dlsym = elf_lookup(&es, "dlsym", NULL);
	fr->dlvsym = elf_lookup(&es, "dlvsym", NULL);
	return fr->dlsym != NULL;
}

static void *missing_dlsym(void *h, const char *name)
{
	(void)h, (void)name;
	return NULL;
}

static void *missing_dlvsym(void *h, const char *name, const char *v)
{
	(void)h, (void)name, (void)v;
	return NULL;
}

/* Find the real dlsym/dlvsym once; idempotent, so races are harmless. */
static void resolve_real(void)
{
	static const char *const libs[] = { "libc.so.6", "libdl.so.2" };
	struct find_real fr = { 0 };

	if (__atomic_load_n(&mp_dlsym_ptr, __ATOMIC_ACQUIRE))
		return;
	for (unsigned i = 0; i < sizeof(libs) / sizeof(libs[0]) && !fr.dlsym; i++) {
		fr.lib = libs[i];
		dl_iterate_phdr(find_real_cb, &fr);
	}
	if (!fr.dlsym) {
		mp_warn("cannot find the real dlsym in libc", "; dlsym returns NULL");
		fr.dlsym = (void *)missing_dlsym;
	}
	if (!fr.dlvsym)
		fr.dlvsym = (void *)missing_dlvsym;
	__atomic_store_n(&mp_dlvsym_ptr, fr.dlvsym, __ATOMIC_RELEASE);
	__atomic_store_n(&mp_dlsym_ptr, fr.dlsym, __ATOMIC_RELEASE);
}

/* Called by the entry points: 1 when name needs the CUDA path. */
int mp_dlsym_route(const char *name)
{
	if (MP_UNLIKELY(!__atomic_load_n(&mp_dlsym_ptr, __ATOMIC_ACQUIRE)))
		resolve_real();
	return name && mp_cuda_wants(name);
}

void *mp_real_dlsym(void *handle, const char *name)
{
	mp_dlsym_route(NULL);
	return ((dlsym_fn)mp_dlsym_ptr)(handle, name);
}

void *mp_real_dlvsym(void *handle, const char *name, const char *version)
{
	mp_dlsym_route(NULL);
	return ((dlvsym_fn)mp_dlvsym_ptr)(handle, name, version);
}

struct next_after {
	uintptr_t caller;
	const char *name;
	int seen;
	void *found;
};

static int contains(const struct dl_phdr_info *info, uintptr_t a)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && a >= lo && a < lo + ph->p_memsz)
			return 1;
	}
	return 0;
}

static int next_after_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct next_after *na = data;
	struct elf_syms es;

	(void)size;
	if (!na->seen) {
		na->seen = contains(info, na->caller);
		return 0;
	}
	if (elf_syms_init(&es, info))
		return 0;
	na->found = elf_lookup(&es, na->name, NULL);
	return na->found != NULL;
}

void *mp_dlsym_next_after(const void *caller, const char *name)
{
	struct next_after na = { (uintptr_t)caller, name, 0, NULL };

	dl_iterate_phdr(next_after_cb, &na);
	return na.found;
}

struct in_object {
	const char *prefix;
	const char *name;
	void *found;
};

static int in_object_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct in_object *io = data;
	const char *base;
	struct elf_syms es;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, io->prefix, strlen(io->prefix)) || elf_syms_init(&es, info))
		return 0;
	io->found = elf_lookup(&es, io->name, NULL);
	return io->found != NULL;
}

void *mp_dlsym_in_object(const char *prefix, const char *name)
{
	struct in_object io = { prefix, name, NULL };

	dl_iterate_phdr(in_object_cb, &io);
	return io.found;
}

/* The CUDA path of dlsym: the return address is still the caller's. */
void *mp_dlsym_cuda(void *handle, const char *name)
{
	void *p;

	if (handle == RTLD_NEXT)
		p = mp_dlsym_next_after(__builtin_return_address(0), name);
	else
		p = mp_real_dlsym(handle, name);
	return p ? mp_cuda_wrap_dlsym(handle, name, p) : NULL;
}

void *mp_dlvsym_cuda(void *handle, const char *name, const char *version)
{
	void *p;

	if (handle == RTLD_NEXT)
		p = mp_dlsym_next_after(__builtin_return_address(0), name);
	else
		p = mp_real_dlvsym(handle, name, version);
	return p ? mp_cuda_wrap_dlsym(handle, name, p) : NULL;
}

#if defined(__x86_64__)
/*
 * dlsym(handle, name) / dlvsym(handle, name, version): save the
 * arguments, ask mp_dlsym_route(name), restore them, then either jump to
 * the CUDA path or to the real function. Jumps, not calls: the callee
 * sees our caller's return address, which is what RTLD_NEXT needs.
 */
__asm__(
	"	.text\n"
	"	.globl dlsym\n"
	"	.type dlsym, @function\n"
	"	.p2align 4\n"
	"dlsym:\n"
	"	.cfi_startproc\n"
	"	.byte 0xf3, 0x0f, 0x1e, 0xfa\n" /* endbr64 */
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	movq %rsi, %rdi\n"
	"	call mp_dlsym_route\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testl %eax, %eax\n"
	"	jnz mp_dlsym_cuda\n"
	"	jmp *mp_dlsym_ptr(%rip)\n"
	"	.cfi_endproc\n"
	"	.size dlsym, .-dlsym\n"
	"\n"
	"	.globl dlvsym\n"
	"	.type dlvsym, @function\n"
	"	.p2align 4\n"
	"dlvsym:\n"
	"	.cfi_startproc\n"
	"	.byte 0xf3, 0x0f, 0x1e, 0xfa\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rsi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	pushq %rdx\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	movq %rsi, %rdi\n"
	"	call mp_dlsym_route\n"
	"	popq %rdx\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rsi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	testl %eax, %eax\n"
	"	jnz mp_dlvsym_cuda\n"
	"	jmp *mp_dlvsym_ptr(%rip)\n"
	"	.cfi_endproc\n"
	"	.size dlvsym, .-dlvsym\n");
#else
/*
 * Portable fallback: correct when the compiler turns the forwarding call
 * into a sibling call (it does at -O2), which keeps RTLD_NEXT right.
 */
MP_EXPORT void *dlsym(void *handle, const char *name)
{
	if (mp_dlsym_route(name))
		return mp_dlsym_cuda(handle, name);
	return ((dlsym_fn)mp_dlsym_ptr)(handle, name);
}

MP_EXPORT void *dlvsym(void *handle, const char *name, const char *version)
{
	if (mp_dlsym_route(name))
		return mp_dlvsym_cuda(handle, name, version);
	return ((dlvsym_fn)mp_dlvsym_ptr)(handle, name, version);
}
#endif
