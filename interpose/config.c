/*
 * config.c - read libmemprov.so's settings (struct mp_config) from the
 * environment once, at start-up, without stdio or malloc. A malformed or
 * out-of-range value gives one warning naming the variable and the value,
 * and the default is used.
 *
 * Layer: 1 leaf (docs/ARCHITECTURE.md): calls only sys.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../include/memprov_trace.h"
#include "config.h"

/* the strings read "" until the settings are loaded */
struct mp_config mp_config MP_HIDDEN = { .output = "", .run_index = "", .mark_on = "",
					  .skip_exe = "", .run_signals = "" };
/* the string settings, each as long as it is: a short process touches one page */
static char strings[MP_OUTPUT_MAX + 4096 + 1024 + 4096 + 64] MP_BIG_BSS;
static size_t strings_used;

static void bad_value(const char *var, const char *val)
{
	char msg[160];
	char *p = msg;

	p += mp_strlcpy(p, "ignoring ", 16);
	p += mp_strlcpy(p, var, 48);
	p += mp_strlcpy(p, "='", 4);
	mp_strlcpy(p, val, 64);
	if (strlen(val) > 63)
		mp_strlcpy(p + 63, "...", 4);
	mp_warn(msg, "': malformed or out of range, using the default");
}

/* Parse a decimal integer in [lo, hi]; 1 and *out on success. */
static int parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	if (v < lo || v > hi)
		return 0;
	*out = v;
	return 1;
}

/*
 * var's value in the environment, or NULL. Read from environ, not through
 * getenv: a program may define getenv for itself (bash does, over its own
 * variables), and memprov's constructor would run the program's code
 * before the program had started (twenty calls in every traced bash).
 */
static const char *env_get(const char *var)
{
	char **e;

	for (e = environ; e && *e; e++) {
		const char *a = *e, *b = var;

		while (*b && *a == *b)
			a++, b++;
		if (!*b && *a == '=')
			return a + 1;
	}
	return NULL;
}

static uint64_t env_num(const char *var, uint64_t lo, uint64_t hi, uint64_t def)
{
	const char *s = env_get(var);
	uint64_t v;

	if (!s)
		return def;
	if (parse_u64(s, lo, hi, &v))
		return v;
	bad_value(var, s);
	return def;
}

/* var's value (def when unset, empty or size bytes long or more), copied to strings */
static const char *env_str(const char *var, size_t size, const char *def)
{
	const char *s = env_get(var);
	char *dst = strings + strings_used;

	if (s && !*s)
		s = NULL;
	if (s && strlen(s) >= size) {
		bad_value(var, s);
		s = NULL;
	}
	strings_used += mp_strlcpy(dst, s ? s : def, size) + 1;
	return dst;
}

/* MEMPROV_PYTHON_MODE=walk|profile: 1 for walk (the default). */
static int env_mode(const char *var)
{
	const char *m = env_get(var);

	if (!m || !*m || !strcmp(m, "walk"))
		return 1;
	if (!strcmp(m, "profile"))
		return 0;
	mp_warn("MEMPROV_PYTHON_MODE: expected walk or profile, using walk; got ", m);
	return 1;
}

int mp_config_loaded;

void mp_config_load(void)
{
	struct mp_config *c = &mp_config;

	if (__atomic_load_n(&mp_config_loaded, __ATOMIC_ACQUIRE))
		return;

	c->disable = (int)env_num("MEMPROV_DISABLE", 0, 1, 0);
	c->heap = (int)env_num("MEMPROV_HEAP", 0, 1, 1);
	c->mmap = (int)env_num("MEMPROV_MMAP", 0, 1, 1);
	c->cuda = (int)env_num("MEMPROV_CUDA", 0, 1, 1);
	c->python = (int)env_num("MEMPROV_PYTHON", 0, 1, 1);
	c->python_objects = (int)env_num("MEMPROV_PYTHON_OBJECTS", 0, 1, 0);
	c->depth = (int)env_num("MEMPROV_DEPTH", 1, MP_MAX_FRAMES, 64);
	c->rss_interval_ms = (unsigned)env_num("MEMPROV_RSS_INTERVAL_MS", 0, 60000, 250);
	c->sample_bytes = env_num("MEMPROV_SAMPLE_BYTES", 0, UINT32_MAX, 0);
	c->native_full = (int)env_num("MEMPROV_NATIVE_FULL", 0, 1, 0);
	c->fast_unwind = (int)env_num("MEMPROV_FAST_UNWIND", 0, 1, 1);
	c->unwind_check = (int)env_num("MEMPROV_UNWIND_CHECK", 0, 2, 0);
	c->unwind_memo = (int)env_num("MEMPROV_UNWIND_MEMO", 0, 1, 1);
	c->ramfs_ok = (int)env_num("MEMPROV_RAMFS_OK", 0, 1, 0);
	c->python_walk = env_mode("MEMPROV_PYTHON_MODE");
	c->reach = (int)env_num("MEMPROV_REACH", 0, 1, 1);
	c->reach_timeout_ms = (unsigned)env_num("MEMPROV_REACH_TIMEOUT_MS", 0, 3600000, 30000);
	c->reach_memory_mb = (unsigned)env_num("MEMPROV_REACH_MEMORY_MB", 1, 1048576, 2048);
	c->reach_inherit_mb = (unsigned)env_num("MEMPROV_REACH_INHERIT_MB", 0, 1048576, 1);
	c->output = env_str("MEMPROV_OUTPUT", MP_OUTPUT_MAX, "memprov.%p.trace");
	c->run_index = env_str("MEMPROV_RUN_INDEX", 4096, "");
	c->mark_on = env_str("MEMPROV_MARK_ON", 1024, "");
	c->skip_exe = env_str("MEMPROV_SKIP_EXE", 4096, "");
	c->run_signals = env_str("MEMPROV_RUN_SIGNALS", 64, "");
	__atomic_store_n(&mp_config_loaded, 1, __ATOMIC_RELEASE);
}
