/*
 * elfsym.c - symbols and address ranges of the loaded objects, read from
 * their dynamic sections through dl_iterate_phdr: the real dlsym/dlvsym
 * (from libc's, or before glibc 2.34 libdl's, symbol table: never the
 * public dlsym, which is memprov's own hook), look-ups by name that leave
 * nothing behind (a failing dlsym makes glibc allocate an error buffer in
 * the program's heap), and the text range of an object.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys. Nothing here
 * allocates.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "elfsym.h"

/* Read by hooks_dlsym.c's assembly entry points: keep the names in step. */
void *mp_dlsym_ptr;
void *mp_dlvsym_ptr;

typedef void *(*dlsym_fn)(void *, const char *);
typedef void *(*dlvsym_fn)(void *, const char *, const char *);

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

/* The tables of the object loaded at b whose dynamic section is dyn. */
static int elf_syms_at(struct elf_syms *es, uintptr_t b, const ElfW(Dyn) *dyn)
{
	*es = (struct elf_syms){ 0 };
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

static int elf_syms_init(struct elf_syms *es, const struct dl_phdr_info *info)
{
	const ElfW(Dyn) *dyn = NULL;

	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	return elf_syms_at(es, info->dlpi_addr, dyn);
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
			return mp_streq(es->strtab + va->vda_name, version);
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
	if (!mp_streq(es->strtab + s->st_name, name) || !version_ok(es, idx, version))
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

typedef int (*iterate_cb)(struct dl_phdr_info *, size_t, void *);
typedef int (*iterate_fn)(iterate_cb, void *);
static iterate_fn real_iterate;

/*
 * libc's dl_iterate_phdr, found through the loader's own list of objects
 * (_r_debug): the program may define one of its own, and a sanitizer's
 * does, which calls through a pointer its runtime has not yet set when
 * memprov first looks (before its set-up, during it: its dlsym calls).
 */
static int dl_iterate(iterate_cb cb, void *data)
{
	iterate_fn f = __atomic_load_n(&real_iterate, __ATOMIC_RELAXED);

	if (!f) {
		for (const struct link_map *l = _r_debug.r_map; l && !f; l = l->l_next) {
			struct elf_syms es;

			if (l->l_name && mp_streq(mp_basename(l->l_name), "libc.so.6") &&
			    !elf_syms_at(&es, l->l_addr, l->l_ld))
				f = (iterate_fn)elf_lookup(&es, "dl_iterate_phdr", NULL);
		}
		if (!f)
			f = dl_iterate_phdr;
		__atomic_store_n(&real_iterate, f, __ATOMIC_RELAXED);
	}
	return f(cb, data);
}

static int name_is(const char *path, const char *base)
{
	return mp_streq(mp_basename(path), base);
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
		dl_iterate(find_real_cb, &fr);
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

MP_REALIGN void mp_elf_resolve_dlsym(void)
{
	if (__builtin_expect(!__atomic_load_n(&mp_dlsym_ptr, __ATOMIC_ACQUIRE), 0))
		resolve_real();
}

void *mp_real_dlsym(void *handle, const char *name)
{
	mp_elf_resolve_dlsym();
	return ((dlsym_fn)mp_dlsym_ptr)(handle, name);
}

void *mp_real_dlvsym(void *handle, const char *name, const char *version)
{
	mp_elf_resolve_dlsym();
	return ((dlvsym_fn)mp_dlvsym_ptr)(handle, name, version);
}

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

struct next_after_each {
	uintptr_t caller;
	const char *const *names;
	void **found;
	size_t n, left;
	int seen;
	const char **ahead_obj; /* the first object ahead of the caller's that defines
				   names[0] ("" the program), or NULL; not looked for if NULL */
};

static int next_after_each_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct next_after_each *na = data;
	struct elf_syms es;
	size_t i;

	(void)size;
	if (!na->seen) {
		na->seen = contains(info, na->caller);
		if (na->seen || !na->ahead_obj || *na->ahead_obj || !na->n ||
		    elf_syms_init(&es, info))
			return 0;
		if (elf_lookup(&es, na->names[0], NULL))
			*na->ahead_obj = info->dlpi_name ? info->dlpi_name : "";
		return 0;
	}
	if (elf_syms_init(&es, info))
		return 0;
	for (i = 0; i < na->n; i++)
		if (!na->found[i] && (na->found[i] = elf_lookup(&es, na->names[i], NULL)))
			na->left--;
	return na->left == 0;
}

/*
 * One walk of the loaded objects, each object's dynamic section read
 * once, instead of one walk per name: memprov's 38 libc hooks cost a
 * short-lived process 38 walks and 38 reads of each object's table.
 */
void mp_dlsym_next_after_each(const void *caller, const char *const *names, void **found,
			      size_t n)
{
	mp_dlsym_next_after_each_ahead(caller, names, found, n, NULL);
}

/*
 * The same, and *ahead_obj (if not NULL) the name of the first object
 * ahead of the caller's in the lookup scope (the program, a library
 * preloaded before it) that defines names[0], or NULL if none does: the
 * one the program's own calls of that name bind to.
 */
void mp_dlsym_next_after_each_ahead(const void *caller, const char *const *names, void **found,
				    size_t n, const char **ahead_obj)
{
	struct next_after_each na = { (uintptr_t)caller, names, found, n, n, 0, ahead_obj };
	size_t i;

	for (i = 0; i < n; i++)
		found[i] = NULL;
	if (ahead_obj)
		*ahead_obj = NULL;
	dl_iterate(next_after_each_cb, &na);
}

void *mp_dlsym_next_after(const void *caller, const char *name)
{
	void *found;

	mp_dlsym_next_after_each(caller, &name, &found, 1);
	return found;
}

#define SCOPE_NEEDED 32 /* DT_NEEDED entries of the calling object looked at, at most */

struct in_scope {
	uintptr_t caller;
	const char *name;
	int found_caller;                  /* pass 1: the calling object was seen */
	void *found;                       /* its own definition, or one of a needed object's */
	const char *needed[SCOPE_NEEDED];  /* pass 1: the names it needs */
	void *in_needed[SCOPE_NEEDED];     /* pass 2: what each defines */
	int n_needed;
};

/* Pass 1: the calling object, its own definition and its DT_NEEDED names. */
static int scope_caller(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct in_scope *sc = arg;
	const ElfW(Dyn) *dyn = NULL;
	struct elf_syms es;

	(void)size;
	if (!contains(info, sc->caller))
		return 0;
	sc->found_caller = 1;
	if (elf_syms_init(&es, info))
		return 1;
	sc->found = elf_lookup(&es, sc->name, NULL);
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	for (; dyn && dyn->d_tag != DT_NULL && sc->n_needed < SCOPE_NEEDED; dyn++)
		if (dyn->d_tag == DT_NEEDED)
			sc->needed[sc->n_needed++] = es.strtab + dyn->d_un.d_val;
	return 1;
}

/* The base name of the object's file, or NULL (the program, the vDSO). */
static const char *file_base(const struct dl_phdr_info *info)
{
	if (!info->dlpi_name || !info->dlpi_name[0])
		return NULL;
	return mp_basename(info->dlpi_name);
}

/* Pass 2: what each needed object (by its file's base name) defines. */
static int scope_needed(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct in_scope *sc = arg;
	const char *base = file_base(info);
	struct elf_syms es;

	(void)size;
	if (!base)
		return 0;
	for (int k = 0; k < sc->n_needed; k++)
		if (!sc->in_needed[k] && mp_streq(base, sc->needed[k]) && !elf_syms_init(&es, info))
			sc->in_needed[k] = elf_lookup(&es, sc->name, NULL);
	return 0;
}

void *mp_dlsym_in_scope(const void *caller, const char *name)
{
	struct in_scope sc;

	memset(&sc, 0, sizeof(sc));
	sc.caller = (uintptr_t)caller;
	sc.name = name;
	dl_iterate(scope_caller, &sc);
	if (!sc.found_caller || sc.found)
		return sc.found;
	dl_iterate(scope_needed, &sc);
	for (int k = 0; k < sc.n_needed; k++)
		if (sc.in_needed[k])
			return sc.in_needed[k]; /* the first needed that defines it, in their order */
	return NULL;
}

static uint64_t dl_generation; /* dlopens and dlcloses so far */
static int cache_writing;      /* a cache word is being written */

void mp_dl_changed(void)
{
	__atomic_add_fetch(&dl_generation, 1, __ATOMIC_ACQ_REL);
}

static void *next_after(const void *self, const char *name)
{
	return mp_dlsym_next_after(self, name);
}

void *mp_next_cached(mp_sym_cache *c, const void *self, const char *name)
{
	return mp_sym_cached(c, next_after, self, name);
}

void *mp_sym_cached(mp_sym_cache *c, void *(*find)(const void *arg, const char *name),
		    const void *arg, const char *name)
{
	uint64_t want = __atomic_load_n(&dl_generation, __ATOMIC_ACQUIRE) + 1, g;
	void *p;

	g = __atomic_load_n(&c->gen, __ATOMIC_ACQUIRE);
	if (g == want) {
		p = __atomic_load_n(&c->p, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (__atomic_load_n(&c->gen, __ATOMIC_RELAXED) == g)
			return p;
	}
	p = find(arg, name);
	if (!__atomic_exchange_n(&cache_writing, 1, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&c->gen, 0, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_RELEASE);
		__atomic_store_n(&c->p, p, __ATOMIC_RELAXED);
		__atomic_store_n(&c->gen, want, __ATOMIC_RELEASE);
		__atomic_store_n(&cache_writing, 0, __ATOMIC_RELEASE);
	}
	return p; /* another thread writing one: used, not kept */
}

struct in_object {
	const char *prefix;
	const char *name;
	void *found;
};

static int in_object_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct in_object *io = data;
	const char *base = file_base(info);
	struct elf_syms es;

	(void)size;
	if (!base || !mp_starts(base, io->prefix) || elf_syms_init(&es, info))
		return 0;
	io->found = elf_lookup(&es, io->name, NULL);
	return io->found != NULL;
}

void *mp_dlsym_in_object(const char *prefix, const char *name)
{
	struct in_object io = { prefix, name, NULL };

	dl_iterate(in_object_cb, &io);
	return io.found;
}

struct at_base {
	uintptr_t base;
	const char *const *names;
	void **found;
	size_t n;
};

static int at_base_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct at_base *ab = data;
	struct elf_syms es;
	size_t i;

	(void)size;
	if (info->dlpi_addr != ab->base || elf_syms_init(&es, info))
		return 0;
	for (i = 0; i < ab->n; i++)
		ab->found[i] = elf_lookup(&es, ab->names[i], NULL);
	return 1;
}

void mp_dlsym_at_each(uintptr_t base, const char *const *names, void **found, size_t n)
{
	struct at_base ab = { base, names, found, n };

	memset(found, 0, n * sizeof(*found));
	dl_iterate(at_base_cb, &ab);
}

struct first_def {
	const char *name;
	void *found;
};

static int first_def_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct first_def *fd = data;
	struct elf_syms es;

	(void)size;
	if (elf_syms_init(&es, info))
		return 0;
	fd->found = elf_lookup(&es, fd->name, NULL);
	return fd->found != NULL;
}

void *mp_elf_lookup(const char *name)
{
	struct first_def fd = { name, NULL };

	dl_iterate(first_def_cb, &fd);
	return fd.found;
}

/*
 * A sanitizer's runtime, found by the function that starts it: linked
 * into the program (clang's default) or a library of its own (gcc's
 * libasan, libtsan). Its interceptors are the program's malloc and
 * string functions, and until it has set itself up they call through
 * pointers still NULL: the lookups that run before then (the real dlsym,
 * the sanitizer's own dlsym calls, this search) use no libc string
 * function.
 */
static const char *const sanitizers[][2] = {
	{ "__asan_init", "AddressSanitizer" },
	{ "__hwasan_init", "HWAddressSanitizer" },
	{ "__tsan_init", "ThreadSanitizer" },
	{ "__msan_init", "MemorySanitizer" },
	{ "__lsan_init", "LeakSanitizer" }, /* alone: AddressSanitizer's has one too */
};

/* How many entries the dynamic symbol table has (its hash tables say). */
static uint32_t count_syms(const struct elf_syms *es)
{
	const uint32_t *gh = es->gnu_hash;
	uint32_t nbuckets, symoffset, last = 0;
	const uint32_t *buckets, *chain;

	if (es->hash)
		return es->hash[1]; /* nchain */
	nbuckets = gh[0];
	symoffset = gh[1];
	buckets = (const uint32_t *)((const ElfW(Addr) *)&gh[4] + gh[2]);
	chain = buckets + nbuckets;
	for (uint32_t b = 0; b < nbuckets; b++)
		if (buckets[b] > last)
			last = buckets[b];
	if (last < symoffset)
		return symoffset;
	while (!(chain[last - symoffset] & 1))
		last++;
	return last + 1;
}

/*
 * A runtime linked into the program by gcc (-static-libasan,
 * -static-libtsan) exports its interceptors (malloc, strcmp, ...) but
 * not the function that starts it: what tells it is the hooks it looks
 * for, undefined weak symbols named __sanitizer_* or __lsan_*. Looked
 * for only in a program that defines malloc itself.
 */
static int refers_to_sanitizer(const struct elf_syms *es)
{
	uint32_t n;

	if (!elf_lookup(es, "malloc", NULL))
		return 0;
	n = count_syms(es);
	for (uint32_t i = 1; i < n && i < (1u << 20); i++) {
		const ElfW(Sym) *s = &es->symtab[i];

		if (s->st_shndx == SHN_UNDEF && ELF64_ST_BIND(s->st_info) == STB_WEAK &&
		    (mp_starts(es->strtab + s->st_name, "__sanitizer_") ||
		     mp_starts(es->strtab + s->st_name, "__lsan_")))
			return 1;
	}
	return 0;
}

struct sanitizer_find {
	int found;  /* 1 + index in sanitizers[], or SANITIZER_UNNAMED */
	int object; /* objects seen: the first is the program */
};

#define SANITIZER_UNNAMED ((int)(sizeof(sanitizers) / sizeof(sanitizers[0])) + 1)

static int sanitizer_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct sanitizer_find *sf = data;
	struct elf_syms es;
	int program = !sf->object++;

	(void)size;
	if (elf_syms_init(&es, info))
		return 0;
	for (int i = 0; i < SANITIZER_UNNAMED - 1; i++)
		if (elf_lookup(&es, sanitizers[i][0], NULL)) {
			sf->found = i + 1;
			return 1;
		}
	if (program && refers_to_sanitizer(&es))
		sf->found = SANITIZER_UNNAMED; /* a named one later wins */
	return 0;
}

const char *mp_elf_sanitizer(void)
{
	static int known; /* 0: not looked yet; -1: none; else sanitizer_find's found */
	int k = __atomic_load_n(&known, __ATOMIC_RELAXED);

	if (!k) {
		struct sanitizer_find sf = { 0, 0 };

		dl_iterate(sanitizer_cb, &sf);
		k = sf.found ? sf.found : -1;
		__atomic_store_n(&known, k, __ATOMIC_RELAXED);
	}
	return k == SANITIZER_UNNAMED ? "a sanitizer" : k > 0 ? sanitizers[k - 1][1] : NULL;
}

struct text_find {
	uintptr_t addr, lo, hi;
};

static int find_text(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct text_find *t = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	int i, in = 0;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (t->addr >= a && t->addr < a + ph->p_memsz)
			in = 1;
		if (!(ph->p_flags & PF_X))
			continue;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (!in || lo >= hi)
		return 0;
	t->lo = lo;
	t->hi = hi;
	return 1;
}

int mp_elf_text_of(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
	struct text_find t = { (uintptr_t)addr, 0, 0 };

	*lo = *hi = 0;
	if (!addr)
		return -1;
	dl_iterate(find_text, &t);
	*lo = t.lo;
	*hi = t.hi;
	return t.hi ? 0 : -1;
}
