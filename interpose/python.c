/*
 * python.c - Python provenance: the file, function and line of the Python
 * code under which each allocation is made, with no change to the script.
 *
 * When the process turns out to contain CPython (3.9 or later; its API is
 * found with dlsym at run time, never linked or included), the first
 * allocation after Py_IsInitialized() schedules a pending call, which runs
 * on the main thread with the GIL held, outside any hook, and installs one
 * of two ways to get frames (MEMPROV_PYTHON_MODE):
 *
 * walk (the default): python_walk.c reads the calling thread's own frame
 * chain inside the hook, with no profile function at all, so Python code
 * runs at full speed. The pending call checks the walk against the C API
 * first; if it disagrees, if this version has no known layout, or if
 * MEMPROV_MARK_ON needs call events, it uses the profile mode instead.
 *
 * profile: a C-level profile function (PyEval_SetProfile) on the existing
 * threads; threads started later through threading pick it up from a
 * small C function object stored as threading._profile_hook, which swaps
 * itself for the C profile function on its first call.
 *
 * The profile function keeps a per-thread shadow stack of (frame, code id)
 * entries: push on PyTrace_CALL, pop on PyTrace_RETURN (which also fires on
 * yield and on exception unwinding). A thread's first event seeds the stack
 * from the frames already running. Code objects are interned by content
 * (file, qualified name, first line) to u32 ids, cached in the code
 * object's co_extra slot, and an MP_REC_PYCODE is written the first time.
 *
 * mp_python_capture, called inside allocation hooks, reads only the calling
 * thread's shadow stack and asks each frame for its current line
 * (PyFrame_GetLineNumber: a walk of the line table, no allocation, no
 * Python code). Everything that allocates or calls into the interpreter
 * happens in the profile function or the pending call, never in a hook.
 *
 * Also here: the "__main__ end" mark (in both modes set up by an atexit
 * callback, which runs after non-daemon threads are joined and the
 * program's own atexit callbacks, and written once finalization has
 * collected the garbage, before it frees module globals; profile mode
 * once marked when the main module's outermost frame returned, with its
 * cyclic garbage not yet collected: clean flask, pandas, matplotlib and
 * scikit-learn programs failed the gate under --mark-on; an earlier
 * atexit mark collected the garbage itself, running finalizers before
 * sys.is_finalizing() was true) and MEMPROV_MARK_ON=MODULE:FUNCTION marks.
 *
 * At load it also has python_alloc.c wrap pymalloc's arena allocator, and
 * with MEMPROV_PYTHON_OBJECTS=1 the pending call has it hook the "mem" and
 * "object" allocator domains.
 *
 * Layer: 6 hooks (docs/ARCHITECTURE.md): calls python_walk, python_alloc, hooks_libc (its own tables come
 * from the program's allocator, through the guard), stack, trace_writer,
 * elfsym, config and sys.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "config.h"
#include "elfsym.h"
#include "python_api.h"
#include "reach.h"
#include "recorder.h"

static struct py_api api;
static int py_minor;                 /* 3.x */

enum py_state { PY_ABSENT, PY_WAITING, PY_SCHEDULED, PY_ARMED, PY_OFF };
static volatile int py_state = PY_ABSENT;

static PyInterpreterState *py_main_interp;
static Py_ssize_t py_extra_index = -1;
static int py_profile_off = -1;      /* offset of c_profilefunc in PyThreadState */
static PyObject *py_hook;            /* threading._profile_hook we install */
static int py_main_ended;
static int py_gc_enabled_at_exit = 1;
/*
 * The executable is CPython's own (python3.11, python3, python): only
 * then is a __main__ module the program's main one. An application that
 * embeds CPython runs its snippets in __main__ too (gdb: at start-up):
 * their end is not the program's.
 */
static int py_cpython_exe;
static volatile int py_forked;       /* set in a forked child until handled */
static int py_walk_wanted;           /* MEMPROV_PYTHON_MODE=walk (default) */
static int py_walk_on;               /* verified: frames come from python_walk.c */
static pthread_key_t py_key;

/* Code ids: content-interned (file, name, first line), by the profile
 * function only, with the main interpreter's GIL held. */
enum py_code_flags {
	PYC_MODULE = 1 << 0,    /* "<module>": a module's body */
	PYC_THREADING = 1 << 1, /* threading.py's body: set _profile_hook after */
	PYC_MARK = 1 << 2,      /* MEMPROV_MARK_ON names it */
	PYC_GEN = 1 << 3,       /* generator/coroutine: marks once per frame */
};

struct py_code {
	uint32_t flags;
	uint32_t mark;            /* index into py_marks */
	long start_lasti;         /* generators: f_lasti when a call starts */
};

struct py_intern {
	uint64_t hash;            /* 0: empty slot */
	uint32_t id;
	uint32_t line;
	char *key;                /* file NUL name NUL */
	size_t key_len;
};

static struct py_code *py_codes;     /* by id; id 0 unused */
static uint32_t py_ncodes, py_codes_cap;
static struct py_intern *py_table;
static uint32_t py_table_cap, py_table_used;

/* MEMPROV_MARK_ON, parsed once. */
struct py_mark {
	char *label;              /* "MODULE:FUNCTION" as given */
	char *module;
	char *function;
};
static struct py_mark *py_marks;
static int py_nmarks;

/* The per-thread shadow stack. */
struct py_ent {
	PyFrameObject *frame;     /* alive while it is on the stack */
	uint32_t code_id;
};

struct py_thread {
	PyThreadState *tstate;    /* to see whether our profile function is still set */
	uint32_t depth, cap;
	int seeded;
	int foreign;              /* runs a subinterpreter: ignored */
	struct py_ent *ent;
};

static __thread struct py_thread *py_self __attribute__((tls_model("initial-exec")));

static int py_profile(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg);

/*
 * Guard our own interpreter calls so their allocations are not the
 * user's: they pass through (guard PASS). Returns the guard to restore.
 */
static int py_guard(void)
{
	return mp_pass_begin();
}

static void py_unguard(int g)
{
	mp_pass_end(g);
}

/* Py_XDECREF through the resolved API. */
static void py_xdecref(PyObject *o)
{
	if (o)
		api.Py_DecRef(o);
}

/* May we write records now? (inside py_guard) */
static int py_can_record(void)
{
	return mp_tracing && !mp_self.disabled;
}

static uint64_t py_hash(const char *s, size_t n, uint32_t line)
{
	uint64_t h = 1469598103934665603ull ^ line;

	while (n--) {
		h ^= (unsigned char)*s++;
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

/* A string attribute as UTF-8, or "" (clears the error). */
static const char *py_attr_str(PyObject *o, const char *name, PyObject **hold,
			       Py_ssize_t *len)
{
	const char *s = NULL;

	*hold = api.PyObject_GetAttrString(o, name);
	if (*hold)
		s = api.PyUnicode_AsUTF8AndSize(*hold, len);
	if (!s) {
		api.PyErr_Clear();
		*len = 0;
		s = "";
	}
	return s;
}

static long py_attr_long(PyObject *o, const char *name)
{
	PyObject *v = api.PyObject_GetAttrString(o, name);
	long r = v ? api.PyLong_AsLong(v) : 0;

	py_xdecref(v);
	if (r == -1 || !v)
		api.PyErr_Clear();
	return r < 0 ? 0 : r;
}

static long py_attr_long_signed(PyObject *o, const char *name)
{
	PyObject *et, *ev, *tb, *v;
	long r;

	api.PyErr_Fetch(&et, &ev, &tb);
	v = api.PyObject_GetAttrString(o, name);
	r = v ? api.PyLong_AsLong(v) : 0;
	py_xdecref(v);
	api.PyErr_Clear();
	api.PyErr_Restore(et, ev, tb);
	return r;
}


static int py_table_grow(void)
{
	uint32_t i, cap = py_table_cap ? py_table_cap * 2 : 1024;
	struct py_intern *t = calloc(cap, sizeof(*t));

	if (!t)
		return -1;
	for (i = 0; i < py_table_cap; i++) {
		struct py_intern *e = &py_table[i];
		uint32_t j = (uint32_t)e->hash & (cap - 1);

		if (!e->hash)
			continue;
		while (t[j].hash)
			j = (j + 1) & (cap - 1);
		t[j] = *e;
	}
	free(py_table);
	py_table = t;
	py_table_cap = cap;
	return 0;
}

/* Name of the module a frame runs in: globals["__name__"], or NULL. */
static PyObject *py_frame_globals(PyFrameObject *frame)
{
	if (api.PyFrame_GetGlobals)
		return api.PyFrame_GetGlobals(frame);
	return api.PyObject_GetAttrString((PyObject *)frame, "f_globals");
}

static const char *py_module_name(PyFrameObject *frame, PyObject **hold)
{
	PyObject *g = py_frame_globals(frame), *n;
	const char *s = NULL;

	*hold = NULL;
	if (!g) {
		api.PyErr_Clear();
		return NULL;
	}
	n = api.PyDict_GetItemString(g, "__name__");
	if (n) {
		api.Py_IncRef(n);
		*hold = n;
		s = api.PyUnicode_AsUTF8AndSize(n, NULL);
		if (!s)
			api.PyErr_Clear();
	}
	api.Py_DecRef(g);
	return s;
}

/* Flags of a newly interned code object: which MEMPROV_MARK_ON entry. */
static uint32_t py_match_marks(PyFrameObject *frame, const char *file,
			       const char *qual, const char *name, uint32_t *mark)
{
	PyObject *hold;
	const char *mod = py_module_name(frame, &hold);
	const char *base = strrchr(file, '/');
	size_t blen;
	int i;

	base = base ? base + 1 : file;
	blen = strlen(base);
	if (blen > 3 && !strcmp(base + blen - 3, ".py"))
		blen -= 3;
	for (i = 0; i < py_nmarks; i++) {
		struct py_mark *m = &py_marks[i];
		int mod_ok = (mod && !strcmp(mod, m->module)) ||
			     (strlen(m->module) == blen && !strncmp(base, m->module, blen));

		if (mod_ok && (!strcmp(qual, m->function) || !strcmp(name, m->function))) {
			*mark = (uint32_t)i;
			break;
		}
	}
	py_xdecref(hold);
	return i < py_nmarks ? PYC_MARK : 0;
}

static int py_codes_grow(void)
{
	uint32_t cap = py_codes_cap ? py_codes_cap * 2 : 1024;
	struct py_code *c = realloc(py_codes, cap * sizeof(*c));

	if (!c)
		return -1;
	memset(c + py_codes_cap, 0, (cap - py_codes_cap) * sizeof(*c));
	py_codes = c;
	py_codes_cap = cap;
	return 0;
}

/*
 * Intern a code object by content and remember the id in its co_extra.
 * Profile function only (GIL held, not in a hook). 0 on failure.
 */
static uint32_t py_code_intern(PyObject *code, PyFrameObject *frame)
{
	PyObject *et, *ev, *tb, *hf, *hq, *hn;
	Py_ssize_t flen, qlen, nlen;
	const char *file, *qual, *name;
	uint32_t line, id = 0, j, flags = 0, mark = 0;
	struct py_intern *e;
	uint64_t h;
	int g = py_guard();

	api.PyErr_Fetch(&et, &ev, &tb);
	file = py_attr_str(code, "co_filename", &hf, &flen);
	qual = py_attr_str(code, py_minor >= 11 ? "co_qualname" : "co_name", &hq, &qlen);
	name = py_attr_str(code, "co_name", &hn, &nlen);
	line = (uint32_t)py_attr_long(code, "co_firstlineno");
	h = py_hash(file, (size_t)flen, line);
	h ^= py_hash(qual, (size_t)qlen, 0) * 31;
	h = h ? h : 1;

	if (py_table_used * 2 >= py_table_cap && py_table_grow())
		goto out;
	for (j = (uint32_t)h & (py_table_cap - 1); py_table[j].hash;
	     j = (j + 1) & (py_table_cap - 1)) {
		e = &py_table[j];
		if (e->hash == h && e->line == line &&
		    e->key_len == (size_t)(flen + qlen + 2) &&
		    !memcmp(e->key, file, (size_t)flen) &&
		    !memcmp(e->key + flen + 1, qual, (size_t)qlen)) {
			id = e->id;
			goto found;
		}
	}
	if (py_ncodes + 1 >= py_codes_cap && py_codes_grow())
		goto out;
	e = &py_table[j];
	e->key_len = (size_t)(flen + qlen + 2);
	e->key = malloc(e->key_len);
	if (!e->key)
		goto out;
	memcpy(e->key, file, (size_t)flen + 1);
	memcpy(e->key + flen + 1, qual, (size_t)qlen + 1);
	e->hash = h;
	e->line = line;
	e->id = id = ++py_ncodes;
	py_table_used++;

	if (!strcmp(name, "<module>"))
		flags |= PYC_MODULE;
	if (flags & PYC_MODULE && flen >= 12 && !strcmp(file + flen - 12, "threading.py"))
		flags |= PYC_THREADING;
	if (py_nmarks)
		flags |= py_match_marks(frame, file, qual, name, &mark);
	if (py_attr_long(code, "co_flags") & PY_CO_GENLIKE)
		flags |= PYC_GEN;
	py_codes[id].flags = flags;
	py_codes[id].mark = mark;
	py_codes[id].start_lasti = LONG_MAX;
	if (py_can_record())
		mp_write_pycode(id, line, file, (size_t)flen, qual, (size_t)qlen);
found:
	if (py_extra_index >= 0 && api.set_extra(code, py_extra_index,
						  (void *)(uintptr_t)id) < 0)
		api.PyErr_Clear();
out:
	py_xdecref(hf);
	py_xdecref(hq);
	py_xdecref(hn);
	api.PyErr_Restore(et, ev, tb);
	py_unguard(g);
	return id;
}

static int py_grow(struct py_thread *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : 256;
	struct py_ent *e;
	int g = py_guard();

	/* The guard matters: a hook that captured now would read t->ent. */
	e = realloc(t->ent, cap * sizeof(*e));
	py_unguard(g);
	if (!e)
		return -1;
	t->ent = e;
	t->cap = cap;
	return 0;
}

static void py_mark(uint32_t id, PyFrameObject *frame)
{
	struct py_code *c = &py_codes[id];
	int g;

	g = py_guard();
	if (c->flags & PYC_GEN) {
		/* Resuming a generator is a CALL event too. A call starts at
		 * the lowest f_lasti the code is ever entered at (-1 before
		 * 3.11, its first RESUME after); a resume is past a yield. */
		long lasti = py_attr_long_signed((PyObject *)frame, "f_lasti");

		if (lasti > c->start_lasti)
			goto out;
		c->start_lasti = lasti;
	}
	if (py_can_record())
		mp_record_mark(py_marks[c->mark].label, 0);
out:
	py_unguard(g);
}

/* Push a frame entered now (seed: already running when we started). */
static void py_push(struct py_thread *t, PyFrameObject *frame, int seed)
{
	PyObject *code = api.PyFrame_GetCode(frame);
	void *v = NULL;
	uint32_t id, cf;
	struct py_ent *e;

	if (!code)
		return;
	if (py_extra_index < 0 || api.get_extra(code, py_extra_index, &v) < 0 || !v)
		id = py_code_intern(code, frame);
	else
		id = (uint32_t)(uintptr_t)v;
	api.Py_DecRef(code);
	cf = id ? py_codes[id].flags : 0;
	if (MP_UNLIKELY(cf & PYC_MARK) && !seed)
		py_mark(id, frame);
	if (MP_UNLIKELY(t->depth >= t->cap) && py_grow(t)) {
		t->depth++; /* beyond the stored entries: counted only */
		return;
	}
	e = &t->ent[t->depth];
	e->frame = frame;
	e->code_id = id;
	__atomic_signal_fence(__ATOMIC_RELEASE);
	t->depth++;
}

/*
 * Just before the main module's end is marked: every other thread still
 * running Python code then (a daemon thread: the others have been
 * joined), with its frames (MP_REC_PYTHREAD), so that what its running
 * frames hold is not taken for memory left behind. Walk mode, whose walk
 * reads any thread's frames without allocating; GIL held (atexit).
 */
static void py_record_running(void)
{
	struct mp_pyframe fr[MP_MAX_PYFRAMES];
	PyThreadState *me, *ts;

	if (!py_walk_on || !api.PyInterpreterState_ThreadHead || !api.PyThreadState_Next)
		return;
	me = api.PyThreadState_Get();
	for (ts = api.PyInterpreterState_ThreadHead(py_main_interp); ts;
	     ts = api.PyThreadState_Next(ts)) {
		uint32_t tid;
		int n;

		if (ts == me)
			continue;
		n = pywalk_capture_thread(ts, fr, MP_MAX_PYFRAMES, &tid);
		if (n > 0)
			mp_write_pythread(tid, mp_stack_python(fr, n));
	}
}

/* The main module's end: its mark, once (GIL held). */
static void py_main_end(void)
{
	int g;

	if (py_main_ended || !py_cpython_exe)
		return;
	py_main_ended = 1;
	g = py_guard();
	if (py_can_record())
		mp_record_mark("__main__ end", MP_RF_MAIN_END);
	py_unguard(g);
}

/* threading.py just ran: make threads started from now on call py_hook. */
static void py_threading_loaded(PyFrameObject *frame)
{
	PyObject *g, *cur;
	int guard;

	if (!py_hook)
		return;
	guard = py_guard();
	g = py_frame_globals(frame);
	if (g) {
		cur = api.PyDict_GetItemString(g, "_profile_hook");
		if (!cur || cur == api.none) {
			PyObject *mod = api.PyDict_GetItemString(api.PyImport_GetModuleDict(),
								 "threading");
			if (mod && api.PyObject_SetAttrString(mod, "_profile_hook", py_hook))
				api.PyErr_Clear();
		}
		api.Py_DecRef(g);
	} else {
		api.PyErr_Clear();
	}
	py_unguard(guard);
}

static void py_pop(struct py_thread *t, PyFrameObject *frame)
{
	uint32_t i = t->depth;

	if (MP_UNLIKELY(i > t->cap)) { /* entries not stored */
		t->depth--;
		return;
	}
	/* Normally the top; a frame that returned without its call being
	 * seen (a generator closed with throw) matches nothing. */
	while (i > 0 && t->ent[i - 1].frame != frame)
		i--;
	if (!i)
		return;
	i--;
	if (MP_UNLIKELY(t->ent[i].code_id &&
			py_codes[t->ent[i].code_id].flags & PYC_THREADING))
		py_threading_loaded(frame);
	t->depth = i;
}

static void py_thread_free(void *p)
{
	struct py_thread *t = p;
	int g = py_guard();

	py_self = NULL;
	free(t->ent);
	free(t);
	py_unguard(g);
}

/*
 * A thread's first event: seed the shadow stack with the frames already
 * running (outermost first), then handle the event. Safe context.
 */
static void py_thread_start(PyFrameObject *frame, int what)
{
	struct py_thread *t = py_self;
	PyFrameObject **chain = NULL, *f;
	size_t n = 0, cap = 0, i;
	int g = py_guard();

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			goto out;
		py_self = t;
		pthread_setspecific(py_key, t);
	}
	t->tstate = api.PyThreadState_Get();
	t->seeded = 1;
	t->foreign = api.PyThreadState_GetInterpreter(t->tstate) != py_main_interp;
	if (t->foreign)
		goto out; /* a subinterpreter: not ours */
	t->depth = 0;
	for (f = api.PyFrame_GetBack(frame); f; f = api.PyFrame_GetBack(f)) {
		if (n == cap) {
			PyFrameObject **c;

			cap = cap ? cap * 2 : 64;
			c = realloc(chain, cap * sizeof(*c));
			if (!c)
				break;
			chain = c;
		}
		chain[n++] = f;
		api.Py_DecRef((PyObject *)f); /* its running frame keeps it */
	}
	for (i = n; i > 0; i--)
		py_push(t, chain[i - 1], 1);
	free(chain);
	if (what != PY_TRACE_RETURN)
		py_push(t, frame, what != PY_TRACE_CALL);
out:
	py_unguard(g);
}

/*
 * In a forked child its trace is new, so every code id is named again
 * (py_after_fork). And CPython remakes its own locks and thread states
 * (PyOS_AfterFork_Child: 6 blocks of 32 B in 3.11) under the Python line
 * that called os.fork, and they stay: a child forked in a function (every
 * multiprocessing worker) failed the gate on them. From the fork until
 * CPython calls the after-fork hooks (os.register_at_fork, ours first)
 * the ALLOCs are flagged the interpreter's; at most PY_FORK_REINIT of
 * them (a fork from C code never calls the hooks).
 */
#define PY_FORK_REINIT 64
static int py_fork_hook_set;

static void py_fork_child(void)
{
	py_forked = 1;
	pywalk_fork_child();
	if (py_fork_hook_set)
		mp_record_interp(PY_FORK_REINIT);
}

static PyObject *py_after_fork_call(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	mp_record_interp(0);
	api.Py_IncRef(api.none);
	return api.none;
}

static struct py_methoddef py_after_fork_def = {
	"memprov_after_fork", py_after_fork_call, PY_METH_NOARGS,
	"memprov: CPython has remade its state in a forked child",
};

/* os.register_at_fork(after_in_child=memprov_after_fork) */
static void py_register_after_fork(void)
{
	PyObject *os, *reg = NULL, *fn = NULL, *args = NULL, *kw = NULL, *r = NULL;

	if (!api.PyTuple_New || !api.PyDict_New || !api.PyDict_SetItemString || !api.PyObject_Call)
		return;
	os = api.PyImport_ImportModule("os");
	if (os && (reg = api.PyObject_GetAttrString(os, "register_at_fork")) &&
	    (fn = api.PyCFunction_NewEx(&py_after_fork_def, NULL, NULL)) &&
	    (args = api.PyTuple_New(0)) && (kw = api.PyDict_New()) &&
	    !api.PyDict_SetItemString(kw, "after_in_child", fn) &&
	    (r = api.PyObject_Call(reg, args, kw)))
		py_fork_hook_set = 1;
	py_xdecref(r);
	py_xdecref(kw);
	py_xdecref(args);
	py_xdecref(fn);
	py_xdecref(reg);
	py_xdecref(os);
	api.PyErr_Clear();
}

static void py_after_fork(void)
{
	uint32_t i;
	int g = py_guard();

	py_forked = 0;
	for (i = 0; py_can_record() && i < py_table_cap; i++) {
		struct py_intern *e = &py_table[i];
		size_t flen;

		if (!e->hash)
			continue;
		flen = strlen(e->key);
		mp_write_pycode(e->id, e->line, e->key, flen, e->key + flen + 1,
				e->key_len - flen - 2);
	}
	py_unguard(g);
}

/* The C-level profile function: the per-call path. */
static int py_profile(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	struct py_thread *t = py_self;

	(void)obj;
	(void)arg;
	if (what != PY_TRACE_CALL && what != PY_TRACE_RETURN)
		return 0;
	if (MP_UNLIKELY(py_forked))
		py_after_fork();
	if (MP_UNLIKELY(!t || !t->seeded)) {
		py_thread_start(frame, what);
		return 0;
	}
	if (MP_UNLIKELY(t->foreign))
		return 0;
	if (what == PY_TRACE_CALL)
		py_push(t, frame, 0);
	else if (t->depth)
		py_pop(t, frame);
	return 0;
}

/*
 * threading._profile_hook(frame, event, arg): called through
 * sys.setprofile in a new thread; swaps itself for py_profile.
 */
static PyObject *py_hook_call(PyObject *self, PyObject *args)
{
	PyFrameObject *frame = NULL;
	PyObject *ev = NULL;
	int what = 1;

	(void)self;
	if (api.PyTuple_Size(args) >= 2) {
		frame = (PyFrameObject *)api.PyTuple_GetItem(args, 0);
		ev = api.PyTuple_GetItem(args, 1);
	}
	api.PyEval_SetProfile(py_profile, NULL);
	if (ev && !api.PyUnicode_CompareWithASCIIString(ev, "call"))
		what = PY_TRACE_CALL;
	else if (ev && !api.PyUnicode_CompareWithASCIIString(ev, "return"))
		what = PY_TRACE_RETURN;
	if (frame && (PyObject *)frame != api.none && py_state == PY_ARMED &&
	    (!py_self || !py_self->seeded))
		py_thread_start(frame, what);
	api.PyErr_Clear();
	api.Py_IncRef(api.none);
	return api.none;
}

static struct py_methoddef py_hook_def = {
	"memprov_profile_hook", py_hook_call, PY_METH_VARARGS,
	"memprov: installs its C profile function in this thread",
};

/* obj.name() as a number; -1 when it is none or fails (error cleared). */
static long py_call_long(PyObject *obj, const char *name)
{
	PyObject *m = obj ? api.PyObject_GetAttrString(obj, name) : NULL;
	PyObject *r = m ? api.PyObject_CallFunctionObjArgs(m, NULL) : NULL;
	long v = r ? api.PyLong_AsLong(r) : -1;

	py_xdecref(r);
	py_xdecref(m);
	api.PyErr_Clear();
	return v;
}

/* obj.name(), its result and any error dropped. */
static void py_call_method(PyObject *obj, const char *name)
{
	(void)py_call_long(obj, name);
}

/*
 * gc.collect(), unless the program watches the collector (gc.callbacks,
 * gc.set_debug): it would see this collection, and finalization's find
 * nothing left to report ("collected 1" became "collected 0", a
 * DEBUG_COLLECTABLE line went missing). Then the garbage is left to
 * finalization, as bare.
 */
static void py_collect(PyObject *gc)
{
	PyObject *cbs = api.PyObject_GetAttrString(gc, "callbacks");
	long watchers = cbs ? py_call_long(cbs, "__len__") : -1;

	py_xdecref(cbs);
	api.PyErr_Clear();
	if (watchers == 0 && py_call_long(gc, "get_debug") == 0)
		py_call_method(gc, "collect");
}

/*
 * Where finalization first drops something of memprov's: the capsule
 * put in sys.__interactivehook__ dies when Py_FinalizeEx sets that to
 * None (finalize_modules_delete_special, 3.6 to 3.13: the last of the
 * sys attributes it clears before any module is torn down). By then
 * CPython has flushed sys.stdout and sys.stderr, cleared the threads
 * left running, collected garbage (when gc is enabled) and dropped
 * sys.last_traceback with the frames an uncaught exception stopped:
 * what remains is what the program kept. Only a finalizer run in that
 * collection could see the capsule; the REPL of -i, the hook's one
 * user, has ended before atexit callbacks run.
 */
static void py_capsule_gone(PyObject *capsule)
{
	(void)capsule;
	if (!py_gc_enabled_at_exit) {
		/* gc disabled: finalization collects nothing before the
		 * modules go, and cyclic garbage (1,000 objects that point at
		 * themselves: 1.4 MiB) would be counted as kept. Collected at
		 * the point an enabled gc would have been. */
		PyObject *gc = api.PyImport_ImportModule("gc");

		if (gc) {
			py_collect(gc);
			api.Py_DecRef(gc);
		}
		api.PyErr_Clear();
	}
	py_main_end();
}

/* 0 when the capsule is in place and will mark the main module's end. */
static int py_mark_at_finalization(void)
{
	static char tag;
	PyObject *sys, *gc, *cap = NULL;
	int rc = -1;

	if (!api.PyCapsule_New)
		return -1;
	gc = api.PyImport_ImportModule("gc");
	py_gc_enabled_at_exit = gc ? py_call_long(gc, "isenabled") != 0 : 1;
	py_xdecref(gc);
	sys = api.PyImport_ImportModule("sys");
	if (sys)
		cap = api.PyCapsule_New(&tag, "memprov.main_end", py_capsule_gone);
	if (cap && !api.PyObject_SetAttrString(sys, "__interactivehook__", cap))
		rc = 0;
	py_xdecref(cap); /* sys holds it */
	py_xdecref(sys);
	api.PyErr_Clear();
	return rc;
}

/*
 * Where no capsule could be placed: what finalization would free first
 * is freed now, in its order (std streams flushed, sys.last_* dropped,
 * garbage collected), and the end marked here. This runs finalizers
 * before sys.is_finalizing() is true, which bare CPython does not.
 */
static void py_free_garbage(void)
{
	static const char *const last[] = { "last_type", "last_value", "last_traceback", "last_exc" };
	PyObject *sys = api.PyImport_ImportModule("sys"), *gc, *v;
	size_t i;

	if (sys) {
		v = api.PyObject_GetAttrString(sys, "stdout");
		py_call_method(v, "flush");
		py_xdecref(v);
		v = api.PyObject_GetAttrString(sys, "stderr");
		py_call_method(v, "flush");
		py_xdecref(v);
		api.PyErr_Clear();
		for (i = 0; i < sizeof(last) / sizeof(last[0]); i++) {
			v = api.PyObject_GetAttrString(sys, last[i]);
			if (v) {
				api.Py_DecRef(v);
				api.PyObject_SetAttrString(sys, last[i], NULL);
			}
			api.PyErr_Clear();
		}
		api.Py_DecRef(sys);
	}
	gc = api.PyImport_ImportModule("gc");
	if (gc) {
		py_collect(gc);
		api.Py_DecRef(gc);
	}
	api.PyErr_Clear();
}

/*
 * atexit callback, in both modes: memprov's runs after the program's
 * own and after non-daemon threads are joined. The threads still
 * running are recorded here, while they are; the mark itself waits for
 * finalization's garbage collection (py_capsule_gone).
 */
static PyObject *py_atexit_call(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	if (!py_main_ended && py_cpython_exe) {
		int g = py_guard();

		if (py_can_record())
			py_record_running();
		py_unguard(g);
		if (py_mark_at_finalization()) {
			py_free_garbage();
			py_main_end();
		}
	}
	api.Py_IncRef(api.none);
	return api.none;
}

static struct py_methoddef py_atexit_def = {
	"memprov_main_end", py_atexit_call, PY_METH_NOARGS,
	"memprov: marks the end of the main module",
};

static void py_register_atexit(void)
{
	PyObject *mod = api.PyImport_ImportModule("atexit");
	PyObject *reg = mod ? api.PyObject_GetAttrString(mod, "register") : NULL;
	PyObject *fn = api.PyCFunction_NewEx(&py_atexit_def, NULL, NULL);
	PyObject *r = reg && fn ? api.PyObject_CallFunctionObjArgs(reg, fn, NULL) : NULL;

	py_xdecref(r);
	py_xdecref(fn);
	py_xdecref(reg);
	py_xdecref(mod);
	api.PyErr_Clear();
}

/* Where PyThreadState keeps c_profilefunc: found by looking for py_profile. */
static void py_find_profile_slot(PyThreadState *ts)
{
	void *const *p = (void *const *)ts;
	int i;

	for (i = 0; i < 32; i++) {
		if (p[i] == (void *)py_profile) {
			py_profile_off = i * (int)sizeof(void *);
			return;
		}
	}
}

static void py_parse_marks(void)
{
	char *s, *tok, *save = NULL;
	int n = 1;

	if (!mp_config.mark_on[0])
		return;
	for (const char *m = mp_config.mark_on; *m; m++)
		n += *m == ',';
	py_marks = calloc((size_t)n, sizeof(*py_marks));
	s = strdup(mp_config.mark_on);
	if (!py_marks || !s)
		return;
	for (tok = strtok_r(s, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strrchr(tok, ':');
		struct py_mark *m = &py_marks[py_nmarks];

		if (!colon || colon == tok || !colon[1]) {
			mp_warn("MEMPROV_MARK_ON: expected MODULE:FUNCTION, ignoring ", tok);
			continue;
		}
		m->label = strdup(tok);
		*colon = 0;
		m->module = tok;
		m->function = colon + 1;
		if (m->label)
			py_nmarks++;
	}
}

static int exe_is_cpython(int *known)
{
	char path[512];
	const char *b;

	*known = mp_self_exe(path, sizeof(path)) != 0;
	if (!*known)
		return 1; /* not known: as before */
	b = strrchr(path, '/');
	return !strncmp(b ? b + 1 : path, "python", 6);
}

/* Install the profile function everywhere. Pending call: main thread, GIL. */
static int py_install(void *arg)
{
	PyObject *et, *ev, *tb;
	PyThreadState *ts, *me;
	int g = py_guard(), known;

	(void)arg;
	if (!mp_tracing || py_state != PY_SCHEDULED)
		goto out_unguard;
	api.PyErr_Fetch(&et, &ev, &tb);
	me = api.PyThreadState_Get();
	py_main_interp = api.PyThreadState_GetInterpreter(me);
	if (py_main_interp != api.PyInterpreterState_Main())
		goto out; /* not the main interpreter: leave it alone */
	py_cpython_exe = exe_is_cpython(&known);
	if (py_cpython_exe && known)
		/* judged at the end of its main module (the analyzer's rule):
		 * no scan at exit, after the interpreter is gone (reach.c) */
		mp_reach_not_needed(MP_REACH_N_PYTHON);
	if (pthread_key_create(&py_key, py_thread_free) ||
	    pthread_atfork(NULL, NULL, py_fork_child))
		goto out;
	py_parse_marks();
	if (mp_config.python_objects && pyalloc_objects(&api))
		mp_warn("MEMPROV_PYTHON_OBJECTS: this interpreter's allocators cannot be hooked; ",
			"Python objects are not recorded one by one");
	if (py_walk_wanted && !py_nmarks && !pywalk_verify()) {
		/* no profile function: hooks read the frame chain itself */
		py_walk_on = 1;
		py_state = PY_ARMED;
		py_register_atexit();
		py_register_after_fork();
		goto out;
	}
	/* the profile function's cache of code ids: asked for here only,
	 * the walk needs none (its call faulted in 64 KiB of python3.11's
	 * text that nothing else runs: 0x4a0000, near PyInstanceMethod_New) */
	if (api.request_extra) {
		py_extra_index = api.request_extra(NULL);
		if (py_extra_index < 0)
			api.PyErr_Clear();
	}
	py_hook = api.PyCFunction_NewEx(&py_hook_def, NULL, NULL);
	if (!py_hook)
		api.PyErr_Clear();
	py_state = PY_ARMED;
	py_register_atexit();
	py_register_after_fork();

	api.PyEval_SetProfile(py_profile, NULL);
	py_find_profile_slot(me);
	if (api.PyEval_SetProfileAllThreads) {
		api.PyEval_SetProfileAllThreads(py_profile, NULL);
	} else if (api._PyEval_SetProfile) {
		for (ts = api.PyInterpreterState_ThreadHead(py_main_interp); ts;
		     ts = api.PyThreadState_Next(ts))
			if (ts != me)
				api._PyEval_SetProfile(ts, py_profile, NULL);
	}
	api.PyErr_Clear();
	if (py_hook) {
		PyObject *mod = api.PyDict_GetItemString(api.PyImport_GetModuleDict(),
							 "threading");
		PyObject *cur = mod ? api.PyObject_GetAttrString(mod, "_profile_hook") : NULL;

		if (cur && cur == api.none &&
		    api.PyObject_SetAttrString(mod, "_profile_hook", py_hook))
			api.PyErr_Clear();
		if (cur)
			api.Py_DecRef(cur);
		api.PyErr_Clear();
	}
out:
	api.PyErr_Restore(et, ev, tb);
out_unguard:
	py_unguard(g);
	return 0;
}

/* In an allocation hook: schedule py_install once Python is up. */
static void py_try_arm(void)
{
	int s = py_state;

	if (s != PY_WAITING)
		return;
	if (!mp_config.python) {
		py_state = PY_OFF;
		mp_python_capture = NULL;
		return;
	}
	if (!api.Py_IsInitialized())
		return;
	if (!__atomic_compare_exchange_n(&py_state, &s, PY_SCHEDULED, 0,
					 __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		return;
	if (api.Py_AddPendingCall(py_install, NULL) != 0)
		py_state = PY_WAITING; /* queue full: try again later */
}

/*
 * CPython 3.11 gives a code object its line table (2 bytes a code unit,
 * 4 past line 65,535; PyMem_Malloc) when it first calls a profile
 * function for it, before the call, with tstate->tracing raised, and
 * frees it with the code object: in profile mode, memprov's doing,
 * charged to the line that made the call (argparse.ArgumentParser() left
 * 796 B at the program's line; only tables over 512 B, past pymalloc,
 * are blocks). The allocation is told by all of: tracing raised, no
 * trace function, the current frame's code still without its table, and
 * a size of 2 or 4 bytes per code unit of it (record.c compares: the
 * code units go in mp_self.py_tracing). A trace function that removed
 * itself (sys.settrace(None)) also runs with tracing raised and none
 * set: what it keeps is the program's (the review's one-shot tracer).
 * Offsets of 3.11 (offsetof against its headers, Py_BUILD_CORE):
 * PyThreadState tracing 44, cframe 56, c_profilefunc 64, c_tracefunc 72;
 * _PyCFrame current_frame 8; _PyInterpreterFrame f_code 32;
 * PyVarObject ob_size 16; PyCodeObject _co_linearray 160.
 */
#define PY311_PROFILE_OFF 64
#define PY311_TRACING_OFF 44
#define PY311_TRACEFUNC_OFF 72
#define PY311_CFRAME_OFF 56
#define PY311_CF_CURRENT_OFF 8
#define PY311_F_CODE_OFF 32
#define PY311_OB_SIZE_OFF 16
#define PY311_LINEARRAY_OFF 160

static const void *py_code_type;      /* &PyCode_Type, found at load */

/* The code units of the code whose line table CPython is making now, or 0. */
static uint32_t py_line_table_units(const PyThreadState *ts)
{
	const char *p = (const char *)ts, *cf, *frame, *code;
	intptr_t units;

	if (*(const int *)(p + PY311_TRACING_OFF) <= 0 || *(void *const *)(p + PY311_TRACEFUNC_OFF))
		return 0;
	cf = *(const char *const *)(p + PY311_CFRAME_OFF);
	frame = cf && !((uintptr_t)cf & 7) ? *(const char *const *)(cf + PY311_CF_CURRENT_OFF) : NULL;
	code = frame && !((uintptr_t)frame & 7) ? *(const char *const *)(frame + PY311_F_CODE_OFF) : NULL;
	if (!code || ((uintptr_t)code & 7) || !py_code_type ||
	    *(const void *const *)(code + sizeof(intptr_t)) != py_code_type ||
	    *(void *const *)(code + PY311_LINEARRAY_OFF))
		return 0;
	units = *(const intptr_t *)(code + PY311_OB_SIZE_OFF);
	return units > 0 && units < (1 << 28) ? (uint32_t)units : 0;
}

/* mp_python_capture: the calling thread's Python frames, innermost first. */
static int py_capture(struct mp_pyframe *out, int max, uint64_t *hash)
{
	struct py_thread *t = py_self;
	uint32_t i;
	int n = 0;

	if (MP_UNLIKELY(py_state != PY_ARMED)) {
		py_try_arm();
		return 0;
	}
	if (py_walk_on)
		return pywalk_capture(out, max, hash);
	if (!t || !t->depth || !t->seeded || t->foreign)
		return 0;
	/* Someone replaced our profile function (sys.setprofile, cProfile):
	 * the frames we hold may be gone. */
	if (py_profile_off >= 0 &&
	    *(void **)((char *)t->tstate + py_profile_off) != (void *)py_profile) {
		t->depth = 0;
		t->seeded = 0;
		return 0;
	}
	if (py_minor == 11 && py_profile_off == PY311_PROFILE_OFF)
		mp_self.py_tracing = py_line_table_units(t->tstate);
	i = t->depth < t->cap ? t->depth : t->cap;
	while (i > 0 && n < max) {
		struct py_ent *e = &t->ent[--i];
		int line = api.PyFrame_GetLineNumber(e->frame);

		out[n].code_id = e->code_id;
		out[n].line = line > 0 ? (uint32_t)line : 0;
		n++;
	}
	*hash = mp_pyframes_hash(out, n);
	return n;
}

/* A symbol of the interpreter, without dlsym: a failing dlsym would leave
 * glibc's error buffer in the heap of every program that is not Python. */
static void *py_sym(const char *name)
{
	return mp_elf_lookup(name);
}

static int py_version(void)
{
	const unsigned long *v = py_sym("Py_Version");
	const char *s;

	if (v)
		return (int)((*v >> 16) & 0xff) | (int)((*v >> 24) << 8);
	s = api.Py_GetVersion();
	if (s[0] != '3' || s[1] != '.')
		return 0;
	return 3 << 8 | atoi(s + 2);
}

/* At load: is CPython in this process? Resolve its API; arm the capture. */
__attribute__((constructor)) static void py_init(void)
{
	int g = py_guard(), ver;

	if (!py_sym("Py_IsInitialized"))
		goto out;
#define PY_API_RESOLVE(ret, name, args, req)                           \
	*(void **)&api.name = py_sym(#name);                           \
	if (req && !api.name)                                          \
		goto out;
	PY_API(PY_API_RESOLVE)
#undef PY_API_RESOLVE
	ver = py_version();
	if ((ver >> 8) != 3 || (ver & 0xff) < 9)
		goto out; /* 3.9 has everything we use */
	py_minor = ver & 0xff;
	if (py_sym("_Py_MergeZeroLocalRefcount"))
		goto out; /* a free-threaded build: no GIL to rely on */
	api.none = py_sym("_Py_NoneStruct");
	if (!api.none)
		goto out;
	py_code_type = py_sym("PyCode_Type");
	*(void **)&api.request_extra = py_sym("PyUnstable_Eval_RequestCodeExtraIndex");
	*(void **)&api.get_extra = py_sym("PyUnstable_Code_GetExtra");
	*(void **)&api.set_extra = py_sym("PyUnstable_Code_SetExtra");
	if (!api.request_extra || !api.get_extra || !api.set_extra) {
		*(void **)&api.request_extra = py_sym("_PyEval_RequestCodeExtraIndex");
		*(void **)&api.get_extra = py_sym("_PyCode_GetExtra");
		*(void **)&api.set_extra = py_sym("_PyCode_SetExtra");
	}
	if (!api.get_extra || !api.set_extra)
		api.request_extra = NULL;
	py_walk_wanted = mp_config.python_walk && !pywalk_setup(&api, py_minor);
	py_state = PY_WAITING;
	mp_elf_text_of((const void *)api.Py_IsInitialized, &mp_python_text_lo,
		       &mp_python_text_hi);
	mp_python_capture = py_capture;
	if (mp_tracing && mp_config.python)
		pyalloc_arenas(&api);
out:
	py_unguard(g);
}
