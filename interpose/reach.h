/*
 * reach.h - the reachability scan at exit: which live blocks are still
 * reachable, possibly lost, indirectly lost or definitely lost (valgrind's
 * classes), computed by libmemprov.so from its own trace and a scan of the
 * process's roots, and written to the trace (MP_REC_REACH_BLOCKS,
 * MP_REC_REACH). The entry point for the rest of libmemprov.so (init.c).
 */
#ifndef MEMPROV_REACH_H
#define MEMPROV_REACH_H

#include <stddef.h>

#include "sys.h"

/*
 * Scan and record, once per process, on a normal exit path (exit, _exit,
 * return from main), before the header says EXITED; the caller holds the
 * recorder guard. Called from memprov's own exit hooks and destructor
 * only: the walk back to the program's frame stops at the first frame
 * outside libmemprov.so, unless mp_reach_note_exit kept it already.
 * MEMPROV_REACH=0 records that the scan is off and does nothing else.
 */
void mp_reach_at_exit(void) MP_HIDDEN;

/*
 * Keep the calling thread's registers and stack pointer as the program
 * had them at its call into memprov's exit hook (exit, the return from
 * main), for a scan that mp_reach_at_exit makes later on the same thread:
 * after the exit handlers and the destructors, whose frames lie below.
 */
void mp_reach_note_exit(void) MP_HIDDEN;

#endif /* MEMPROV_REACH_H */
