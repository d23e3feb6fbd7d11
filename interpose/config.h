/*
 * config.h - libmemprov.so's settings, read once from the environment at
 * start-up by config.c, and nowhere else. Every variable is documented in
 * the README; a malformed or out-of-range value gives one warning and the
 * default.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#ifndef MEMPROV_CONFIG_H
#define MEMPROV_CONFIG_H

#include <stdint.h>

#include "sys.h"

#define MP_OUTPUT_MAX 4096 /* MEMPROV_OUTPUT's longest value, its NUL included */

struct mp_config {
	int heap;                 /* MEMPROV_HEAP=0|1 (1): malloc family */
	int mmap;                 /* MEMPROV_MMAP=0|1 (1): anonymous mmap */
	int cuda;                 /* MEMPROV_CUDA=0|1 (1): CUDA runtime and driver */
	int python;               /* MEMPROV_PYTHON=0|1 (1): Python frames */
	int python_walk;          /* MEMPROV_PYTHON_MODE=walk|profile (walk): 1 walk */
	int python_objects;       /* MEMPROV_PYTHON_OBJECTS=0|1 (0): every pymalloc block */
	int depth;                /* MEMPROV_DEPTH=1..256 (64): native frames */
	unsigned rss_interval_ms; /* MEMPROV_RSS_INTERVAL_MS=0..60000 (250), 0 off */
	uint64_t sample_bytes;    /* MEMPROV_SAMPLE_BYTES (0: record everything) */
	/* the strings: copies (the program may change its environment) side by side in one buffer */
	const char *output;       /* MEMPROV_OUTPUT (memprov.%p.trace), %p = pid; < MP_OUTPUT_MAX */
	const char *run_index;    /* MEMPROV_RUN_INDEX: a run directory's index ("": none); < 4096 */
	const char *mark_on;      /* MEMPROV_MARK_ON=MODULE:FUNCTION[,...]; < 1024 */
	const char *skip_exe;     /* MEMPROV_SKIP_EXE=PATTERN[,...] (""): programs not traced; < 4096 */
	const char *run_signals;  /* MEMPROV_RUN_SIGNALS: memprov run's signal board ("": none); < 64 */
	int disable;              /* MEMPROV_DISABLE=1: trace nothing, no file */
	int native_full;          /* MEMPROV_NATIVE_FULL=0|1 (0): native frames past the interpreter */
	int fast_unwind;          /* MEMPROV_FAST_UNWIND=0|1 (1): unwind.c before libunwind */
	int unwind_check;         /* MEMPROV_UNWIND_CHECK=0|1|2 (0): test: compare with libunwind
				     (2: and count the memo's replays, unwind.c) */
	int unwind_memo;          /* MEMPROV_UNWIND_MEMO=0|1 (1): replay a thread's repeated walks */
	int ramfs_ok;             /* MEMPROV_RAMFS_OK=0|1 (0): no warning for a trace on tmpfs */
	int reach;                /* MEMPROV_REACH=0|1 (1): reachability scan at exit */
	unsigned reach_timeout_ms; /* MEMPROV_REACH_TIMEOUT_MS=0..3600000 (30000) */
	unsigned reach_memory_mb; /* MEMPROV_REACH_MEMORY_MB=1..1048576 (2048) */
	unsigned reach_inherit_mb; /* MEMPROV_REACH_INHERIT_MB=0..1048576 (1): ancestors' traces
				      a forked child's scan reads back (reach.c) */
};

extern struct mp_config mp_config MP_HIDDEN;

/* Fill mp_config from the environment (config.c); once, later calls do
 * nothing. */
void mp_config_load(void) MP_HIDDEN;
/* 1 once mp_config is filled (acquire). */
extern int mp_config_loaded MP_HIDDEN;

/* mp_config, loaded first if nothing has loaded it yet (a hook reached
 * before libmemprov.so's constructor ran). */
static inline const struct mp_config *mp_config_need(void)
{
	if (MP_UNLIKELY(!__atomic_load_n(&mp_config_loaded, __ATOMIC_ACQUIRE)))
		mp_config_load();
	return &mp_config;
}

#endif /* MEMPROV_CONFIG_H */
