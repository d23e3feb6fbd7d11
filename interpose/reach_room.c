/*
 * reach_room.c - how much memory the scan at exit may take without being
 * the thing that pushes the process over a memory limit: the room left
 * under its memory cgroup's limit (v2 memory.max, v1
 * memory.limit_in_bytes; the tightest of the cgroup and those above it),
 * counting the file pages it could reclaim (inactive_file) as room, and
 * the system's MemAvailable. A program at 142 MB under a 300 MB cgroup
 * limit, with 3 million live blocks, was killed at exit by the scan's
 * 400 MB (status 137, its buffered output lost) before.
 *
 * Read with raw system calls and stack buffers: no malloc, no stdio.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#include <fcntl.h>
#include <stdint.h>
#include <string.h>

#include "reach_int.h"
#include "sys.h"

#define LINE_MAX_LEN 4096
#define PATH_LEN 1024
#define LEVELS_MAX 32 /* cgroup directories walked up at most */

/* Each line of fd (cut at LINE_MAX_LEN), NUL-terminated, until fn returns nonzero. */
static int each_line(int fd, int (*fn)(char *line, void *arg), void *arg)
{
	char buf[LINE_MAX_LEN + 1];
	size_t have = 0, got;
	uint64_t off = 0;
	int skip = 0, r = 0;

	while (!r && (got = mp_sys_pread(fd, off, buf + have, LINE_MAX_LEN - have)) > 0) {
		size_t start = 0, i;

		off += got;
		have += got;
		for (i = 0; !r && i < have; i++) {
			if (buf[i] != '\n')
				continue;
			buf[i] = 0;
			if (!skip)
				r = fn(buf + start, arg);
			skip = 0;
			start = i + 1;
		}
		if (start == 0 && have == LINE_MAX_LEN) { /* a line too long: its rest is dropped */
			skip = 1;
			have = 0;
			continue;
		}
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	if (!r && have && !skip) {
		buf[have] = 0;
		r = fn(buf, arg);
	}
	return r;
}

static uint64_t parse_u64(const char *s, int *ok)
{
	uint64_t v = 0;
	int n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	for (; *s >= '0' && *s <= '9' && n < 20; s++, n++)
		v = v * 10 + (uint64_t)(*s - '0');
	*ok = n > 0;
	return v;
}

/* A file's first number ("max", or none: UINT64_MAX). */
static uint64_t file_u64(const char *path)
{
	char buf[64];
	size_t n;
	int fd = mp_sys_open(path, O_RDONLY | O_CLOEXEC, 0), ok;
	uint64_t v;

	if (fd < 0)
		return UINT64_MAX;
	n = mp_sys_pread(fd, 0, buf, sizeof(buf) - 1);
	mp_sys_close(fd);
	buf[n] = 0;
	v = parse_u64(buf, &ok);
	return ok ? v : UINT64_MAX;
}

struct stat_find {
	const char *key;
	size_t len;
	uint64_t value;
};

static int stat_line(char *line, void *arg)
{
	struct stat_find *f = arg;
	int ok;

	if (strncmp(line, f->key, f->len) || line[f->len] != ' ')
		return 0;
	f->value = parse_u64(line + f->len + 1, &ok);
	return 1;
}

/* memory.stat's value for key (0 when absent). */
static uint64_t stat_u64(const char *path, const char *key)
{
	struct stat_find f = { key, strlen(key), 0 };
	int fd = mp_sys_open(path, O_RDONLY | O_CLOEXEC, 0);

	if (fd < 0)
		return 0;
	each_line(fd, stat_line, &f);
	mp_sys_close(fd);
	return f.value;
}

static size_t append(char *dst, size_t at, size_t cap, const char *s)
{
	size_t n = strlen(s);

	if (at + n + 1 > cap)
		return cap; /* too long: the caller sees at == cap */
	memcpy(dst + at, s, n + 1);
	return at + n;
}

/* The room under one cgroup directory's limit: UINT64_MAX without one. */
static uint64_t level_room(const char *dir, size_t len, int v2)
{
	char path[PATH_LEN + 64];
	uint64_t limit, usage, inactive;

	memcpy(path, dir, len);
	append(path, len, sizeof(path), v2 ? "/memory.max" : "/memory.limit_in_bytes");
	limit = file_u64(path);
	if (limit >= (1ull << 60)) /* v1 says "no limit" with a huge number */
		return UINT64_MAX;
	append(path, len, sizeof(path), v2 ? "/memory.current" : "/memory.usage_in_bytes");
	usage = file_u64(path);
	if (usage == UINT64_MAX)
		return UINT64_MAX;
	append(path, len, sizeof(path), "/memory.stat");
	inactive = stat_u64(path, v2 ? "inactive_file" : "total_inactive_file");
	usage = usage > inactive ? usage - inactive : 0;
	return limit > usage ? limit - usage : 0;
}

/* The tightest room from dir up to the mount point (mlen bytes of it). */
static uint64_t cgroup_room(char *dir, size_t len, size_t mlen, int v2)
{
	uint64_t room = UINT64_MAX;
	int k;

	for (k = 0; k < LEVELS_MAX; k++) {
		uint64_t r = level_room(dir, len, v2);

		if (r < room)
			room = r;
		if (len <= mlen)
			break; /* the mount's root (a cgroup namespace's own cgroup) done */
		while (len > mlen && dir[len - 1] != '/')
			len--;
		if (len > mlen)
			len--; /* the '/' */
		dir[len] = 0;
	}
	return room;
}

struct cg {
	char v1_path[PATH_LEN], v2_path[PATH_LEN]; /* from /proc/self/cgroup */
	int have_v1, have_v2;
	uint64_t room;
};

/* "ID:controllers:path" */
static int cgroup_line(char *line, void *arg)
{
	struct cg *c = arg;
	char *a = strchr(line, ':'), *b = a ? strchr(a + 1, ':') : NULL;
	char *ctl;

	if (!b)
		return 0;
	*b = 0;
	ctl = a + 1;
	if (!*ctl && !c->have_v2 && append(c->v2_path, 0, PATH_LEN, b + 1) < PATH_LEN)
		c->have_v2 = 1;
	for (a = ctl; a && *a; a = strchr(a, ',') ? strchr(a, ',') + 1 : NULL)
		if (!strncmp(a, "memory", 6) && (a[6] == ',' || !a[6]) && !c->have_v1 &&
		    append(c->v1_path, 0, PATH_LEN, b + 1) < PATH_LEN)
			c->have_v1 = 1;
	return 0;
}

/* The next space-separated field of a mountinfo line, cut in place (*s moves past it). */
static char *field(char **s)
{
	char *f = *s, *e;

	if (!f)
		return NULL;
	e = strchr(f, ' ');
	if (e) {
		*e = 0;
		*s = e + 1;
	} else {
		*s = NULL;
	}
	return f;
}

/* A cgroup mount: room under the limits of the process's cgroup in it. */
static int mount_line(char *line, void *arg)
{
	struct cg *c = arg;
	static char none[1];
	char *s = line, *f[5], *fstype, *super, *rest, *p;
	char dir[PATH_LEN * 2 + 2];
	size_t rlen, mlen, len;
	int i, v2;

	for (i = 0; i < 5; i++)
		if (!(f[i] = field(&s)))
			return 0;
	/* the mount options and optional fields, until " - " */
	rest = s ? strstr(s, " - ") : NULL;
	if (!rest)
		return 0;
	rest += 3;
	fstype = field(&rest);
	field(&rest); /* the source */
	super = rest ? rest : none;
	if (!fstype)
		return 0;
	v2 = !strcmp(fstype, "cgroup2");
	if (!v2 && (strcmp(fstype, "cgroup") || !c->have_v1))
		return 0;
	if (v2 && !c->have_v2)
		return 0;
	if (!v2) {
		for (p = super; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
			if (!strncmp(p, "memory", 6) && (p[6] == ',' || !p[6] || p[6] == ' '))
				break;
		if (!p || !*p)
			return 0;
	}
	p = v2 ? c->v2_path : c->v1_path;
	/* the mount's root (f[3]) is a prefix of the path, or the path is unseen */
	rlen = strlen(f[3]);
	if (!strcmp(f[3], "/"))
		rlen = 0;
	else if (strncmp(p, f[3], rlen) || (p[rlen] && p[rlen] != '/'))
		return 0;
	mlen = append(dir, 0, sizeof(dir), f[4]);
	len = append(dir, mlen, sizeof(dir), p + rlen);
	if (mlen >= sizeof(dir) || len >= sizeof(dir))
		return 0;
	while (len > mlen && dir[len - 1] == '/')
		dir[--len] = 0;
	{
		uint64_t r = cgroup_room(dir, len, mlen, v2);

		if (r < c->room)
			c->room = r;
	}
	return 0;
}

static int meminfo_line(char *line, void *arg)
{
	uint64_t *avail = arg;
	int ok;

	if (strncmp(line, "MemAvailable:", 13))
		return 0;
	*avail = parse_u64(line + 13, &ok) << 10;
	if (!ok)
		*avail = UINT64_MAX;
	return 1;
}

uint64_t rroom_bytes(void)
{
	struct cg c;
	uint64_t avail = UINT64_MAX;
	long fd;

	memset(&c, 0, sizeof(c));
	c.room = UINT64_MAX;
	fd = mp_proc_sysopen("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		each_line((int)fd, meminfo_line, &avail);
		mp_sys_close((int)fd);
	}
	fd = mp_proc_open("cgroup", 0);
	if (fd >= 0) {
		each_line((int)fd, cgroup_line, &c);
		mp_sys_close((int)fd);
	}
	if (c.have_v1 || c.have_v2) {
		fd = mp_proc_open("mountinfo", 0);
		if (fd >= 0) {
			each_line((int)fd, mount_line, &c);
			mp_sys_close((int)fd);
		}
	}
	return c.room < avail ? c.room : avail;
}
