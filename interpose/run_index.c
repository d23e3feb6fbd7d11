/*
 * run_index.c - the index of a run directory (`memprov run -d DIR`,
 * MEMPROV_RUN_INDEX=DIR/index): every traced process of the run appends
 * one line per event, so the file says which process started when, from
 * which parent, what it exec'd and how it ended, even for processes
 * killed before their trace says so.
 *
 *   EVENT \t PID \t PPID \t MONO_NS \t VALUE \t COMMAND \n
 *
 * EVENT start (VALUE fork: a forked child, new: a new image, after exec
 * or the first process), exec (about to exec; VALUE -), exec-failed,
 * exit (VALUE the status, or ? when not known) or killed (VALUE the
 * signal). MONO_NS is CLOCK_MONOTONIC, as in the traces. COMMAND is the
 * argv joined by spaces, tabs and newlines made spaces.
 *
 * Many processes append at once: each line is one write(2) on a
 * descriptor opened with O_APPEND, which the kernel applies whole at the
 * file's end (lines are at most INDEX_LINE bytes). The descriptor is
 * opened once per image, moved high (sys.c's owned descriptors), checked
 * before each use and inherited by forked children. No stdio, no malloc,
 * no lock: a line is built on the stack.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../include/memprov_trace.h"
#include "run_index.h"

#define INDEX_LINE 2048

static struct mp_owned_fd index_fd = { .fd = -1 };
/* descriptors scarce (mp_fds_scarce): the index is opened at each event */
static char index_path[4096] MP_BIG_BSS;

static int index_sys_open(const char *path)
{
	return mp_sys_open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
}

void mp_index_open(const char *path)
{
	int fd;

	if (!path || !path[0] || index_fd.fd >= 0 || index_path[0])
		return;
	fd = index_sys_open(path);
	if (fd >= 0 && mp_fds_scarce() && strlen(path) < sizeof(index_path)) {
		mp_sys_close(fd);
		mp_strlcpy(index_path, path, sizeof(index_path));
		return;
	}
	if (fd < 0 || mp_fd_adopt(&index_fd, fd) < 0)
		mp_warn("cannot open the run directory's index: ", path);
}

/* Append s to the line at *p (bounded by end), tabs and newlines as spaces. */
static void put(char **p, char *end, const char *s)
{
	while (*s && *p < end) {
		char c = *s++;

		*(*p)++ = c == '\t' || c == '\n' || c == '\r' ? ' ' : c;
	}
}

static void sep(char **p, char *end)
{
	if (*p < end)
		*(*p)++ = '\t';
}

static void put_num(char **p, char *end, int64_t v)
{
	char buf[24], *b = buf;

	if (v < 0) {
		*b++ = '-';
		v = -v;
	}
	mp_utoa(b, (uint64_t)v);
	put(p, end, buf);
}

void mp_index_event(const char *event, int32_t pid, int32_t ppid, uint64_t mono_ns,
		    const char *value, const char *cmd)
{
	char line[INDEX_LINE], *p = line, *end = line + sizeof(line) - 1;
	int fd = __atomic_load_n(&index_fd.fd, __ATOMIC_ACQUIRE);
	int saved = errno, each = 0;
	struct mp_xfsz x;
	long r;

	if (index_path[0]) {
		fd = index_sys_open(index_path);
		each = 1;
	}
	if (fd < 0 || (!each && !mp_fd_ours(&index_fd))) {
		errno = saved;
		return;
	}
	put(&p, end, event);
	sep(&p, end);
	put_num(&p, end, pid);
	sep(&p, end);
	put_num(&p, end, ppid);
	sep(&p, end);
	put_num(&p, end, (int64_t)mono_ns);
	sep(&p, end);
	put(&p, end, value);
	sep(&p, end);
	put(&p, end, cmd ? cmd : "");
	*p++ = '\n';
	/* one write: the kernel appends it whole (under the program's file-size limit too) */
	mp_xfsz_hold(&x);
	r = mp_syscall(SYS_write, fd, line, (size_t)(p - line));
	mp_xfsz_release(&x, r < 0 && errno == EFBIG);
	if (each)
		mp_sys_close(fd);
	errno = saved;
}

void mp_index_header_event(const struct mp_file_header *h, const char *event, const char *value)
{
	if (h)
		mp_index_event(event, h->pid, h->ppid, mp_now(), value,
			       h->cmdline[0] ? h->cmdline : h->exe);
}

/* A number as VALUE ("3", "-1"), in buf. */
const char *mp_index_num(char *buf, int64_t v)
{
	char *p = buf, *end = buf + 23;

	put_num(&p, end, v);
	*p = 0;
	return buf;
}
