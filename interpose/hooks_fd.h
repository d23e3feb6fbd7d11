/*
 * hooks_fd.h - what hooks_sandbox.c's syscall() asks of hooks_fd.c: the
 * descriptor calls made by number (syscall(SYS_close, fd), as libuv
 * does) hide memprov's descriptors as the libc functions do; and what
 * hooks_dir.c asks to leave them out of a listing of /proc/self/fd.
 */
#ifndef MEMPROV_HOOKS_FD_H
#define MEMPROV_HOOKS_FD_H

#include "sys.h"

/* 1 for the numbers mp_fd_syscall handles. */
int mp_fd_syscall_wants(long nr) MP_HIDDEN;
/* The call, or its refusal: the raw result (-errno on failure). */
long mp_fd_syscall(long nr, long a1, long a2, long a3, long a4, long a5, long a6) MP_HIDDEN;

/* 1: fd is one of memprov's, hidden from the program. */
int mp_fd_hidden(int fd) MP_HIDDEN;
/* 1: path names this process's descriptor directory (/proc/self/fd, /dev/fd, ...). */
int mp_fd_dir_named(const char *path) MP_HIDDEN;

#endif /* MEMPROV_HOOKS_FD_H */
