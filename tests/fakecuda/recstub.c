/*
 * recstub.c - a stand-in for libmemprov.so's recorder (interpose/recorder.h)
 * that prints each CUDA event as one text line, so the CUDA hooks can be
 * tested alone: tests/bin/libmemprov_cudastub.so = hooks_cuda.c +
 * hooks_dlsym.c + this file. Lines go to the file named by RECSTUB_OUT
 * (appended; nothing when unset):
 *
 *   alloc FUNC KIND size=N stream=S dev=D result=R extra=E flags=F addr=A
 *   free FUNC KIND stream=S dev=D result=R flags=F addr=A
 *   reset FUNC dev=D
 *
 * FUNC and KIND are names, stream/addr hex, the rest decimal.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../interpose/hooks_cxx.h"
#include "../../interpose/hooks_libc.h"
#include "../../interpose/hooks_sandbox.h"
#include "../../interpose/recorder.h"

__thread struct mp_thread mp_self __attribute__((tls_model("initial-exec")));
volatile int mp_tracing;
static int out_fd = -1;

static const char *fn_name(enum mp_func fn)
{
	switch (fn) {
#define FN_CASE(id, name) case MP_FN_##name: return #name;
	MP_FUNCS(FN_CASE)
#undef FN_CASE
	default: return "?";
	}
}

static const char *kind_name(enum mp_kind k)
{
	static const char *const names[] = {
#define KIND_NAME(id, name, NAME) [id] = #name,
		MP_KINDS(KIND_NAME)
#undef KIND_NAME
	};

	return k < MP_KIND_COUNT ? names[k] : "?";
}

static void emit(const char *line, int n)
{
	if (out_fd >= 0 && write(out_fd, line, n) != n)
		out_fd = -1;
}

__attribute__((constructor)) static void recstub_init(void)
{
	const char *path = getenv("RECSTUB_OUT");

	if (path)
		out_fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	mp_tracing = 1;
}

/* A hook reached while the recorder was busy: "skipped FUNC". */
void mp_count_skipped(enum mp_func fn)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "skipped %s\n", fn_name(fn));

	emit(line, n);
}

void mp_record_gpu_alloc(enum mp_func fn, enum mp_kind kind, uint64_t addr, uint64_t size,
			 uint64_t stream, int device, int result, uint64_t extra,
			 unsigned flags)
{
	char line[256];
	int n = snprintf(line, sizeof(line),
			 "alloc %s %s size=%llu stream=%#llx dev=%d result=%d extra=%llu "
			 "flags=%u addr=%#llx\n",
			 fn_name(fn), kind_name(kind), (unsigned long long)size,
			 (unsigned long long)stream, device, result,
			 (unsigned long long)extra, flags, (unsigned long long)addr);

	emit(line, n);
}

void mp_record_gpu_free(enum mp_func fn, enum mp_kind kind, uint64_t addr, uint64_t stream,
			int device, int result, unsigned flags)
{
	char line[256];
	int n = snprintf(line, sizeof(line),
			 "free %s %s stream=%#llx dev=%d result=%d flags=%u addr=%#llx\n",
			 fn_name(fn), kind_name(kind), (unsigned long long)stream, device,
			 result, flags, (unsigned long long)addr);

	emit(line, n);
}

void mp_record_ctx_reset(enum mp_func fn, int device)
{
	char line[128];
	int n = snprintf(line, sizeof(line), "reset %s dev=%d\n", fn_name(fn), device);

	emit(line, n);
}

/* hooks_dlsym.c's heap path: this object hooks no heap function. */
int mp_heap_hook_wants(const char *name)
{
	(void)name;
	return 0;
}

void *mp_heap_hook_for(const char *name, void *found)
{
	(void)name;
	return found;
}

/* hooks_dlsym.c's prctl and syscall path: this object hooks neither. */
int mp_sandbox_hook_wants(const char *name)
{
	(void)name;
	return 0;
}

void *mp_sandbox_hook_for(const char *name, void *found)
{
	(void)name;
	return found;
}

/* hooks_dlsym.c's jemalloc path: this object wraps no jemalloc function. */
int mp_cxx_hook_wants(const char *name)
{
	(void)name;
	return 0;
}

void *mp_cxx_hook_for(const char *name, void *found)
{
	(void)name;
	return found;
}
