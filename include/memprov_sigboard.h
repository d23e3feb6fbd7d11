/*
 * memprov_sigboard.h - the signal board `memprov run` shares with its
 * command, so that it passes on a signal only when the command did not
 * get it already.
 *
 * memprov run stands between its caller and the command. A signal sent
 * to memprov's pid alone (`kill $!`) must reach the command; one sent to
 * the whole process group (timeout(1), `kill 0`, a shell's `kill %1`)
 * reaches the command by itself, and passing it on too made it arrive
 * twice (a second SIGTERM is "quit now" to many programs); one the command
 * sent its parent (`kill -USR1 $PPID`) is meant for memprov's parent. No
 * siginfo field tells these apart, so the command says what it got: its
 * preloaded libmemprov.so notes, for each signal another process sent it
 * (si_code <= 0) and that it handles, who sent it and when. memprov run
 * waits a little for that note before it decides.
 *
 * The board is one shared page (a memfd of memprov run's); the command
 * finds it through MEMPROV_RUN_SIGNALS="/proc/RUNPID/fd/FD:CMDPID" and
 * writes to it only while its pid is CMDPID (its own children, which
 * inherit the variable and the mapping, do not).
 */
#ifndef MEMPROV_SIGBOARD_H
#define MEMPROV_SIGBOARD_H

#include <stdint.h>

#define MP_SIGBOARD_ENV "MEMPROV_RUN_SIGNALS"
#define MP_SIGBOARD_MAGIC 0x4d505347u /* "MPSG" */
#define MP_SIGBOARD_SIGS 65

struct mp_sigboard_slot {
	uint64_t ns;     /* CLOCK_MONOTONIC when the command got the signal last */
	int32_t sender;  /* its si_pid */
	uint32_t count;  /* how many it got, written last */
};

struct mp_sigboard {
	uint32_t magic;
	int32_t pid;     /* the command's pid: only it writes */
	struct mp_sigboard_slot slot[MP_SIGBOARD_SIGS];
};

#endif /* MEMPROV_SIGBOARD_H */
