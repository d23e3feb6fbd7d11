/*
 * seccomp_eval.h - does a seccomp filter leave a process alone when it
 * makes a given system call, whatever the call's arguments?
 *
 * mp_seccomp_spares runs the filter's n instructions for each of the
 * n_nrs call numbers (x86-64's), with the arguments and the instruction
 * pointer unknown: 1 when every way through ends in ALLOW, LOG, ERRNO or
 * TRACE for all of them, 0 when one may end otherwise (kill, trap, user
 * notification) or the filter cannot be followed. scratch is caller
 * memory of MP_SECCOMP_SCRATCH bytes at least. No allocation, no system
 * call.
 */
#ifndef MEMPROV_SECCOMP_EVAL_H
#define MEMPROV_SECCOMP_EVAL_H

#include <linux/filter.h>
#include <stddef.h>

#include "sys.h"

#define MP_SECCOMP_SCRATCH (256 * 160)

int mp_seccomp_spares(const struct sock_filter *f, unsigned n, const int *nrs, unsigned n_nrs,
		      void *scratch, size_t scratch_len) MP_HIDDEN;

#endif /* MEMPROV_SECCOMP_EVAL_H */
