/*
 * python_api.h - the few pieces of the CPython C API that python.c uses,
 * declared here rather than taken from Python.h: libmemprov.so is built
 * once and must work with whichever CPython 3.9+ it finds itself in, so
 * every function is looked up with dlsym at run time (python.c) and only
 * types whose layout is the same in every version are spelled out.
 */
#ifndef MEMPROV_PYTHON_API_H
#define MEMPROV_PYTHON_API_H

#include <sys/types.h>

#include "recorder.h"

/* The few CPython types we need, opaque: no Python.h, any version. */
typedef struct py_object PyObject;
typedef struct py_frame PyFrameObject;
typedef struct py_tstate PyThreadState;
typedef struct py_interp PyInterpreterState;
typedef ssize_t Py_ssize_t;
typedef int (*py_tracefunc)(PyObject *obj, PyFrameObject *f, int what, PyObject *arg);

/* PyMethodDef, the same layout in every CPython 3. */
struct py_methoddef {
	const char *ml_name;
	PyObject *(*ml_meth)(PyObject *self, PyObject *args);
	int ml_flags;
	const char *ml_doc;
};
#define PY_METH_VARARGS 0x1
#define PY_METH_NOARGS 0x4

/* PyMemAllocatorEx and PyObjectArenaAllocator, the same since 3.5. */
struct py_mem_allocator {
	void *ctx;
	void *(*malloc)(void *ctx, size_t size);
	void *(*calloc)(void *ctx, size_t nelem, size_t elsize);
	void *(*realloc)(void *ctx, void *ptr, size_t new_size);
	void (*free)(void *ctx, void *ptr);
};

struct py_arena_allocator {
	void *ctx;
	void *(*alloc)(void *ctx, size_t size);
	void (*free)(void *ctx, void *ptr, size_t size);
};

/* PyMemAllocatorDomain */
enum py_mem_domain { PY_DOMAIN_RAW = 0, PY_DOMAIN_MEM = 1, PY_DOMAIN_OBJ = 2 };

/* Py_tracefunc "what" values, stable since 2.x. */
#define PY_TRACE_CALL 0
#define PY_TRACE_RETURN 3

/* co_flags bits of generator-like code. */
#define PY_CO_GENLIKE (0x20 | 0x80 | 0x200)

/* The interpreter API, resolved once. X(ret, name, args, required) */
#define PY_API(X)                                                             \
	X(int, Py_IsInitialized, (void), 1)                                   \
	X(int, Py_AddPendingCall, (int (*)(void *), void *), 1)               \
	X(void, PyEval_SetProfile, (py_tracefunc, PyObject *), 1)             \
	X(void, PyEval_SetProfileAllThreads, (py_tracefunc, PyObject *), 0)   \
	X(int, _PyEval_SetProfile, (PyThreadState *, py_tracefunc, PyObject *), 0) \
	X(PyThreadState *, PyThreadState_Get, (void), 1)                      \
	X(PyInterpreterState *, PyThreadState_GetInterpreter, (PyThreadState *), 1) \
	X(PyInterpreterState *, PyInterpreterState_Main, (void), 1)           \
	X(PyThreadState *, PyInterpreterState_ThreadHead, (PyInterpreterState *), 1) \
	X(PyThreadState *, PyThreadState_Next, (PyThreadState *), 1)          \
	X(PyObject *, PyFrame_GetCode, (PyFrameObject *), 1)                  \
	X(PyFrameObject *, PyFrame_GetBack, (PyFrameObject *), 1)             \
	X(int, PyFrame_GetLineNumber, (PyFrameObject *), 1)                   \
	X(PyObject *, PyFrame_GetGlobals, (PyFrameObject *), 0)               \
	X(PyObject *, PyObject_GetAttrString, (PyObject *, const char *), 1)  \
	X(int, PyObject_SetAttrString, (PyObject *, const char *, PyObject *), 1) \
	X(const char *, PyUnicode_AsUTF8AndSize, (PyObject *, Py_ssize_t *), 1) \
	X(int, PyUnicode_CompareWithASCIIString, (PyObject *, const char *), 1) \
	X(long, PyLong_AsLong, (PyObject *), 1)                               \
	X(PyObject *, PyDict_GetItemString, (PyObject *, const char *), 1)    \
	X(PyObject *, PyImport_GetModuleDict, (void), 1)                      \
	X(PyObject *, PyImport_ImportModule, (const char *), 1)               \
	X(PyObject *, PyObject_CallFunctionObjArgs, (PyObject *, ...), 1)     \
	X(PyObject *, PyTuple_GetItem, (PyObject *, Py_ssize_t), 1)           \
	X(Py_ssize_t, PyTuple_Size, (PyObject *), 1)                          \
	X(PyObject *, PyTuple_New, (Py_ssize_t), 0)                           \
	X(PyObject *, PyDict_New, (void), 0)                                  \
	X(int, PyDict_SetItemString, (PyObject *, const char *, PyObject *), 0) \
	X(PyObject *, PyObject_Call, (PyObject *, PyObject *, PyObject *), 0) \
	X(PyObject *, PyCFunction_NewEx, (struct py_methoddef *, PyObject *, PyObject *), 1) \
	X(PyObject *, PyCapsule_New, (void *, const char *, void (*)(PyObject *)), 0) \
	X(void, Py_IncRef, (PyObject *), 1)                                   \
	X(void, Py_DecRef, (PyObject *), 1)                                   \
	X(void, PyErr_Fetch, (PyObject **, PyObject **, PyObject **), 1)      \
	X(void, PyErr_Restore, (PyObject *, PyObject *, PyObject *), 1)       \
	X(void, PyErr_Clear, (void), 1)                                       \
	X(const char *, Py_GetVersion, (void), 1)                             \
	X(PyThreadState *, PyGILState_GetThisThreadState, (void), 0)          \
	X(PyFrameObject *, PyThreadState_GetFrame, (PyThreadState *), 0)      \
	X(int, PyCode_Addr2Line, (PyObject *, int), 0)                        \
	X(void, PyMem_GetAllocator, (int, struct py_mem_allocator *), 0)      \
	X(void, PyMem_SetAllocator, (int, struct py_mem_allocator *), 0)      \
	X(void, PyObject_GetArenaAllocator, (struct py_arena_allocator *), 0) \
	X(void, PyObject_SetArenaAllocator, (struct py_arena_allocator *), 0)

struct py_api {
#define PY_API_FIELD(ret, name, args, req) ret(*name) args;
	PY_API(PY_API_FIELD)
#undef PY_API_FIELD
	/* co_extra: renamed PyUnstable_* in 3.12, same signatures. */
	Py_ssize_t (*request_extra)(void (*freefunc)(void *));
	int (*get_extra)(PyObject *code, Py_ssize_t index, void **extra);
	int (*set_extra)(PyObject *code, Py_ssize_t index, void *extra);
	PyObject *none;
};

/*
 * python_walk.c: Python frames read from the thread's own frame chain.
 * pywalk_setup at load (0: this version has a known layout); pywalk_verify
 * at install, GIL held (0: the walk agrees with the C API); then
 * pywalk_capture in hooks, as mp_python_capture does.
 */
int pywalk_setup(const struct py_api *api, int minor) MP_HIDDEN;
int pywalk_verify(void) MP_HIDDEN;
int pywalk_capture(struct mp_pyframe *out, int max, uint64_t *hash) MP_HIDDEN;
/*
 * The frames of thread state ts (any thread's; GIL held, not in a hook),
 * innermost first, and its kernel thread id in *tid (0: not known).
 */
int pywalk_capture_thread(const void *ts, struct mp_pyframe *out, int max, uint32_t *tid) MP_HIDDEN;
void pywalk_fork_child(void) MP_HIDDEN;

/*
 * python_alloc.c: CPython's allocators. pyalloc_arenas at load, before
 * the interpreter starts (pymalloc's arenas recorded under their own
 * function ids); pyalloc_objects at install, GIL held (every block of the
 * "mem" and "object" domains, MEMPROV_PYTHON_OBJECTS=1). 0 on success.
 */
int pyalloc_arenas(const struct py_api *api) MP_HIDDEN;
int pyalloc_objects(const struct py_api *api) MP_HIDDEN;

#endif /* MEMPROV_PYTHON_API_H */
