/*
 * reach_maps.c - the process's memory map for the reachability scan
 * (/proc/self/maps, parsed without stdio or malloc) and reading memory
 * that may not be safe to touch in place.
 *
 * Anonymous memory is read in place: the map says it is readable and the
 * other threads are stopped. File mappings can raise SIGBUS where the file
 * was truncated, so they are copied through process_vm_readv (or
 * /proc/self/mem), which fails with an error instead of a signal; so is
 * everything when some thread could not be stopped. Pages that cannot
 * hold a pointer are skipped, as /proc/self/pagemap tells: never touched
 * (neither present nor swapped), or in a private file mapping still the
 * file's page (never written); so a huge sparse reservation costs its
 * page-map entries, not its size, and a library's data costs the pages
 * the process wrote. The map itself is parsed through a small buffer.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls reach_mem and sys.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "reach_int.h"

#define SAFE_BUF (64 << 10)
#define MAPS_BUF 8192            /* the map is parsed through this */
#define PAGEMAP_MIN (8u << 10)   /* anonymous ranges this big consult the page map */
#define PM_PRESENT 63            /* /proc/self/pagemap entry bits */
#define PM_SWAPPED 62
#define PM_FILE 61               /* a file page or shared anonymous memory */
#define PM_EXCLUSIVE 56          /* mapped by this process only (Linux 4.2) */
#define PAGEMAP_BATCH 4096       /* entries per read: 16 MiB of addresses */

static uint64_t *safe_buf;
static uint64_t *pm_buf;
static uint64_t *cache_buf;                  /* the page cache, taken at its first use */
static uint64_t cache_pg[RMAPS_CACHE_PAGES]; /* the page each slot holds; 0: none */

/*
 * The page map is read a window at a time: the roots are many short
 * ranges side by side (a library's data and bss, the anonymous mapping
 * after them, ...), and each read is a system call (about 0.8 us at exit
 * here: ls made 17 reads, 336 bytes in all, 14 us; 10 now). A window of
 * PM_WINDOW entries (256 KiB of addresses, aligned) serves the other
 * ranges inside it. What the scan does meanwhile cannot make a page it
 * was told is untouched hold a pointer: it reads only touched pages, and
 * maps only memory of its own.
 */
#define PM_WINDOW 64
static uint64_t pm_lo, pm_n; /* pm_buf holds the entries of pages [pm_lo, pm_lo + pm_n) */

/* The page map's entries for pages [pg, pg + n), n <= PAGEMAP_BATCH; NULL: none. */
static const uint64_t *pm_entries(int fd, uint64_t pg, size_t n)
{
	uint64_t lo = pg & ~(uint64_t)(PM_WINDOW - 1), want;
	ssize_t got;

	if (pg >= pm_lo && pg + n <= pm_lo + pm_n)
		return pm_buf + (pg - pm_lo);
	/* the aligned window around pg: the ranges come in no particular order */
	if (pg + n - lo > PAGEMAP_BATCH)
		lo = pg;
	want = pg + n - lo < PM_WINDOW ? PM_WINDOW : pg + n - lo;
	got = pread(fd, pm_buf, want * 8, (off_t)(lo * 8));
	pm_lo = lo;
	pm_n = got > 0 ? (uint64_t)got / 8 : 0;
	return pg + n <= pm_lo + pm_n ? pm_buf + (pg - lo) : NULL;
}

int rmaps_exclusive_works(const struct rmaps *m)
{
	volatile uint64_t probe = 0x6d656d70726f76ull; /* written now: this page is ours alone */
	const uint64_t *pm;

	if (m->pagemap_fd < 0)
		return 0;
	pm = pm_entries(m->pagemap_fd, (uint64_t)(uintptr_t)&probe / 4096, 1);
	(void)probe;
	/* before Linux 4.2 the bit is 0 for every page: not to be trusted */
	return pm && ((*pm >> PM_PRESENT) & 1) && ((*pm >> PM_EXCLUSIVE) & 1);
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static const char *parse_hex(const char *p, const char *end, uint64_t *v)
{
	*v = 0;
	while (p < end && hexval(*p) >= 0)
		*v = (*v << 4) | (uint64_t)hexval(*p++);
	return p;
}

static const char *skip_field(const char *p, const char *end)
{
	while (p < end && *p != ' ' && *p != '\n')
		p++;
	while (p < end && *p == ' ')
		p++;
	return p;
}

static int has_prefix(const char *p, const char *end, const char *pre)
{
	size_t n = strlen(pre);

	return (size_t)(end - p) >= n && !memcmp(p, pre, n);
}

static unsigned type_of(const char *p, const char *end)
{
	/*
	 * io_uring's rings are memory the kernel mapped for the program:
	 * a request's user_data (a pointer, most often) stays in its
	 * submission entry. Left out, a program that exited with reads in
	 * flight had their buffers called lost (valgrind: reachable).
	 */
	if (p == end || has_prefix(p, end, "[anon:") || has_prefix(p, end, "[anon_shmem:") ||
	    has_prefix(p, end, "/dev/zero") || has_prefix(p, end, "/SYSV") ||
	    has_prefix(p, end, "anon_inode:[io_uring]"))
		return RV_ANON;
	if (has_prefix(p, end, "[heap]"))
		return RV_HEAP;
	if (has_prefix(p, end, "[stack]"))
		return RV_STACK;
	if (*p == '[' || has_prefix(p, end, "anon_inode:"))
		return RV_SKIP;
	if (has_prefix(p, end, "/dev/") && !has_prefix(p, end, "/dev/shm/"))
		return RV_SKIP; /* a device: reading it may hang or have effects */
	return RV_FILE;
}

/* One line "start-end perms offset dev inode path"; 0 if malformed. */
static int parse_line(const char *p, const char *end, struct rvma *v)
{
	memset(v, 0, sizeof(*v));
	p = parse_hex(p, end, &v->start);
	if (p >= end || *p++ != '-')
		return 0;
	p = parse_hex(p, end, &v->end);
	if (p + 5 > end || *p++ != ' ')
		return 0;
	v->prot = (uint8_t)((p[0] == 'r' ? RP_R : 0) | (p[1] == 'w' ? RP_W : 0) |
			    (p[2] == 'x' ? RP_X : 0) | (p[3] == 's' ? RP_SHARED : 0));
	p = skip_field(p, end);  /* perms */
	p = skip_field(p, end);  /* offset */
	p = skip_field(p, end);  /* dev */
	v->inode = 0;
	while (p < end && *p >= '0' && *p <= '9')
		v->inode = v->inode * 10 + (uint64_t)(*p++ - '0');
	while (p < end && *p == ' ')
		p++;
	v->type = (uint8_t)type_of(p, end);
	return v->end > v->start;
}

/* One map line into m->v; -1 when out of memory. */
static int add_line(struct rmaps *m, size_t *vcap, const char *p, const char *end)
{
	if (rmem_grow((void **)&m->v, vcap, sizeof(*m->v), m->n + 1))
		return -1;
	if (parse_line(p, end, &m->v[m->n]))
		m->n++;
	return 0;
}

/* Parse the map open on fd into m (m->n 0: it read empty); -1: out of memory. */
static int parse_maps(struct rmaps *m, int fd, char *buf, size_t cap)
{
	size_t len = 0, vcap = 0;
	int eof = 0, skip = 0;

	while (!eof || len) {
		const char *p = buf, *end, *nl;
		ssize_t n = 0;

		if (!eof && len < cap) {
			n = read(fd, buf + len, cap - len);
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				eof = 1;
			else
				len += (size_t)n;
		}
		end = buf + len;
		while (p < end) {
			int cut;

			nl = memchr(p, '\n', (size_t)(end - p));
			if (!nl && !eof && !(p == buf && len == cap))
				break; /* the rest of this line is still to be read */
			if (!nl)
				nl = end; /* the last line, or one as long as the buffer */
			cut = nl == end && !eof;
			if (!skip && add_line(m, &vcap, p, nl))
				return -1;
			skip = cut; /* the rest of a cut line is not a line */
			p = nl < end ? nl + 1 : end;
		}
		len = (size_t)(end - p);
		memmove(buf, p, len);
	}
	return 0;
}

int rmaps_read(struct rmaps *m, int vm_readv)
{
	/*
	 * Parsed as it is read, through one small buffer: a whole copy of
	 * the map (grown by doubling) cost a short process a dozen pages,
	 * each faulted in. A line is at most a path (PATH_MAX) and its
	 * fields, so one that fills the buffer is cut there: its fields
	 * and the start of its path are all the parser needs.
	 */
	char *buf = rmem_alloc(MAPS_BUF);
	struct iovec l, r;
	uint64_t probe = 0, got = 1;
	int fd, thread, err = 0;

	memset(m, 0, sizeof(*m));
	m->pagemap_fd = m->mem_fd = -1;
	if (!buf)
		return RX_NOMEM;
	/* /proc/self's map reads empty once the main thread has left */
	for (thread = 0; thread < 2 && !m->n && !err; thread++) {
		fd = mp_proc_open("maps", thread);
		if (fd < 0)
			continue;
		err = parse_maps(m, fd, buf, MAPS_BUF);
		mp_sys_close(fd);
	}
	rmem_free(buf);
	if (err)
		return RX_NOMEM;
	if (!m->n)
		return RX_NOMAPS;
	/* pages faulted as used: a small process reads a page or two of each */
	safe_buf = rmem_buffer(SAFE_BUF);
	pm_buf = rmem_buffer(PAGEMAP_BATCH * 8);
	cache_buf = NULL;
	memset(cache_pg, 0, sizeof(cache_pg));
	pm_n = 0;
	if (!safe_buf || !pm_buf)
		return RX_NOMEM;
	m->pagemap_fd = mp_proc_open_any("pagemap");
	m->tid = (int32_t)mp_syscall(SYS_gettid);
	l.iov_base = &probe;
	l.iov_len = sizeof(probe);
	r.iov_base = &got;
	r.iov_len = sizeof(got);
	m->vm_readv_ok = vm_readv &&
			 mp_syscall(SYS_process_vm_readv, m->tid, &l, 1UL, &r, 1UL, 0UL) ==
				 (long)sizeof(probe) && probe == 1;
	if (!m->vm_readv_ok)
		m->mem_fd = mp_proc_open_any("mem");
	return RX_OK;
}

void rmaps_close(struct rmaps *m)
{
	if (m->pagemap_fd >= 0)
		mp_sys_close(m->pagemap_fd);
	if (m->mem_fd >= 0)
		mp_sys_close(m->mem_fd);
	m->pagemap_fd = m->mem_fd = -1;
}

const struct rvma *rmaps_find(const struct rmaps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->v[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->n && m->v[lo].start <= addr ? &m->v[lo] : NULL;
}

/* Copy len bytes at src without faulting; bytes copied. */
static size_t safe_copy(const struct rmaps *m, void *dst, uint64_t src, size_t len)
{
	ssize_t n;

	if (m->vm_readv_ok) {
		struct iovec l = { dst, len }, r = { (void *)src, len };

		n = mp_syscall(SYS_process_vm_readv, m->tid, &l, 1UL, &r, 1UL, 0UL);
	} else if (m->mem_fd >= 0) {
		n = pread(m->mem_fd, dst, len, (off_t)src);
	} else {
		n = -1;
	}
	return n > 0 ? (size_t)n : 0;
}

/*
 * The page cache (reach_int.h): where every read is a copy, a small
 * block's pages are copied with other blocks' and the pages after them,
 * RMAPS_CACHE_PAGES at a time, in one call.
 */

int rmaps_batchable(const struct rmaps *m, uint64_t a, uint64_t b)
{
	const struct rvma *v;

	if (!m->all_safe || !m->vm_readv_ok || b <= a || b - a >= PAGEMAP_MIN)
		return 0;
	if (!cache_buf)
		cache_buf = rmem_buffer(RMAPS_CACHE_PAGES * RMAPS_PAGE);
	v = rmaps_find(m, a);
	/* what rmaps_words would read whole through one copy */
	return cache_buf && v && b <= v->end && (v->prot & RP_R) && v->type != RV_FILE &&
	       v->type != RV_SKIP;
}

const uint64_t *rmaps_cached(uint64_t page)
{
	size_t i;

	for (i = 0; i < RMAPS_CACHE_PAGES; i++)
		if (cache_pg[i] == page && page)
			return cache_buf + i * (RMAPS_PAGE / 8);
	return NULL;
}

void rmaps_fetch(const struct rmaps *m, uint64_t *pages, size_t n)
{
	struct iovec l = { cache_buf, 0 }, r[RMAPS_CACHE_PAGES];
	const struct rvma *v;
	size_t nr = 0, i, slots = 0;
	uint64_t pg[RMAPS_CACHE_PAGES], last;
	long got;

	memset(cache_pg, 0, sizeof(cache_pg));
	if (!n || n > RMAPS_CACHE_PAGES)
		return;
	/* in order (no qsort: glibc's may call malloc), a handful */
	for (i = 1; i < n; i++) {
		uint64_t x = pages[i];
		size_t j = i;

		for (; j && pages[j - 1] > x; j--)
			pages[j] = pages[j - 1];
		pages[j] = x;
	}
	/* runs of adjacent pages, one iovec each */
	for (i = 0; i < n; i++) {
		if (nr && (uint64_t)r[nr - 1].iov_base + r[nr - 1].iov_len == pages[i])
			r[nr - 1].iov_len += RMAPS_PAGE;
		else
			r[nr++] = (struct iovec){ (void *)pages[i], RMAPS_PAGE };
		pg[slots++] = pages[i];
	}
	/* the slots left read ahead: the heap is mostly handed out upwards */
	v = rmaps_find(m, pages[n - 1]);
	for (last = pages[n - 1] + RMAPS_PAGE;
	     v && slots < RMAPS_CACHE_PAGES && last + RMAPS_PAGE <= v->end; last += RMAPS_PAGE) {
		r[nr - 1].iov_len += RMAPS_PAGE;
		pg[slots++] = last;
	}
	l.iov_len = slots * RMAPS_PAGE;
	got = mp_syscall(SYS_process_vm_readv, m->tid, &l, 1UL, r, (unsigned long)nr, 0UL);
	/* the kernel reads the pages in order and stops at the first it cannot */
	for (i = 0; got > 0 && i < slots && (long)((i + 1) * RMAPS_PAGE) <= got; i++)
		cache_pg[i] = pg[i];
}

/* [a, b) through the copy buffer; 8-aligned a and b. */
static void words_safe(const struct rmaps *m, uint64_t a, uint64_t b, rwords_fn fn, void *arg,
		       uint32_t *unreadable)
{
	int bad = 0;

	if (!m->vm_readv_ok && m->mem_fd < 0) {
		(*unreadable)++;
		return;
	}
	while (a < b) {
		size_t want = b - a < SAFE_BUF ? (size_t)(b - a) : SAFE_BUF;
		size_t got = safe_copy(m, safe_buf, a, want);

		if (got >= 8)
			fn(arg, safe_buf, got / 8);
		if (got < want) {
			/* skip the page that failed */
			bad = 1;
			a = ((a + (got & ~(size_t)7)) | 4095) + 1;
			continue;
		}
		a += want;
	}
	if (bad)
		(*unreadable)++;
}

static void words_piece(const struct rmaps *m, uint64_t a, uint64_t b, int safe, rwords_fn fn,
			void *arg, uint32_t *unreadable)
{
	if (safe)
		words_safe(m, a, b, fn, arg, unreadable);
	else
		fn(arg, (const uint64_t *)a, (size_t)(b - a) / 8);
}

/*
 * [a, b) less the pages that cannot hold a pointer to a block: a page
 * that is neither present nor swapped out was never written (anonymous
 * memory reads as zeros, a private file page as the file, and no file
 * holds a heap address), and in a private file mapping (a library's data
 * and bss) a present page still shared with the file was never written
 * either. Reading such a page would only fault it in: ten microseconds a
 * page on a VM, more than the page map costs for the whole range. A
 * written page of a private file mapping is the process's own copy, no
 * longer backed by the file, so it is read in place as anonymous memory.
 * With own_pages_only, a present page of a private mapping still shared
 * (with the parent a forked child came from) is skipped too: the child
 * never wrote it, so it holds no pointer to the child's own blocks (a
 * child of a parent with 300,000 live blocks read 14.5 MB of roots at
 * its exit, 34 KB so).
 */
static void words_touched(const struct rmaps *m, const struct rvma *v, uint64_t a, uint64_t b,
			  rwords_fn fn, void *arg, uint32_t *unreadable)
{
	uint64_t page = 4096, pa;
	int priv_file = v->type == RV_FILE && !(v->prot & RP_SHARED);
	int safe = m->all_safe || (v->type == RV_FILE && !priv_file);
	/* shared memory: a page the parent maps too may hold what the child wrote */
	int own_only = m->own_pages_only && !(v->prot & RP_SHARED);

	if (m->pagemap_fd < 0 || (b - a < PAGEMAP_MIN && !priv_file)) {
		words_piece(m, a, b, safe || v->type == RV_FILE, fn, arg, unreadable);
		return;
	}
	pa = a & ~(page - 1);
	while (pa < b) {
		size_t n = (size_t)((b - pa + page - 1) / page), i;
		const uint64_t *pm;
		uint64_t run = 0;

		if (n > PAGEMAP_BATCH)
			n = PAGEMAP_BATCH;
		pm = pm_entries(m->pagemap_fd, pa / page, n);
		if (!pm) {
			/* no page map here: read it all, through the copy where a file backs it */
			words_piece(m, pa > a ? pa : a, b, safe || v->type == RV_FILE, fn, arg,
				    unreadable);
			return;
		}
		for (i = 0; i <= n; i++) {
			uint64_t e = i < n ? pm[i] : 0, p = pa + i * page;
			int touched = (e >> PM_SWAPPED) & 1;

			if ((e >> PM_PRESENT) & 1)
				touched = (!priv_file || !((e >> PM_FILE) & 1)) &&
					  (!own_only || ((e >> PM_EXCLUSIVE) & 1));
			if (touched && !run)
				run = p;
			if (!touched && run) {
				uint64_t s = run > a ? run : a, t = p < b ? p : b;

				if (t > s)
					words_piece(m, s, t, safe, fn, arg, unreadable);
				run = 0;
			}
		}
		pa += n * page;
	}
}

int rmaps_words(const struct rmaps *m, uint64_t a, uint64_t b, rwords_fn fn, void *arg,
		uint32_t *unreadable, uint64_t deadline)
{
	const struct rvma *v;

	a = (a + 7) & ~7ull;
	b &= ~7ull;
	while (a < b) {
		uint64_t e;

		v = rmaps_find(m, a);
		if (!v) {
			/* a hole: go on at the next mapping */
			size_t lo = 0, hi = m->n;

			while (lo < hi) {
				size_t mid = lo + (hi - lo) / 2;

				if (m->v[mid].start <= a)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo >= m->n || m->v[lo].start >= b)
				return RX_OK;
			a = m->v[lo].start;
			continue;
		}
		e = v->end < b ? v->end : b;
		if ((v->prot & RP_R) && v->type != RV_SKIP) {
			words_touched(m, v, a, e, fn, arg, unreadable);
		}
		if (mp_now() > deadline)
			return RX_TIMEOUT;
		a = e;
	}
	return RX_OK;
}
