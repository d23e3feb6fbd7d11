/*
 * memprov.h - the public API of libmemprov.so.
 *
 * A program may call these whether or not it runs under memprov: link with
 * nothing and look the symbol up with dlsym(RTLD_DEFAULT, "memprov_mark"),
 * or declare it weak as below, so that the call is a no-op without memprov.
 * From Python: ctypes.CDLL(None).memprov_mark(b"iteration").
 */
#ifndef MEMPROV_H
#define MEMPROV_H

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Record a named instant ("mark") in the trace. Reports such as
 * `memprov growth` compare live memory across marks, so call it once per
 * iteration of the loop you suspect. label may be NULL; it is copied and
 * cut at 255 bytes. Safe from any thread; never allocates.
 */
void memprov_mark(const char *label) __attribute__((weak));

/* Nonzero when this process is being traced by libmemprov.so. */
int memprov_active(void) __attribute__((weak));

#ifdef __cplusplus
}
#endif

#endif /* MEMPROV_H */
