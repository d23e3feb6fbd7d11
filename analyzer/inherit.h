/*
 * inherit.h - what a forked child inherited from its parent. A child's
 * trace starts at the fork (its header has MP_HF_FORKED); the blocks its
 * parent held then are in the parent's trace, up to the MP_REC_FORK
 * record that names the child. inherit_seed() finds that trace beside the
 * child's (or the one given with --parent), replays it up to the fork and
 * hands its live set to the child's replay, each block marked inherited
 * with the parent's stack. Reports keep those blocks apart from the
 * child's own.
 */
#ifndef MEMPROV_INHERIT_H
#define MEMPROV_INHERIT_H

#include <stdio.h>

#include "replay.h"

/* --parent TRACE: the parent's trace for the next child replayed. */
void inherit_set_parent(const char *path);

/*
 * Call between replay_init and replay_run: when r's trace is a forked
 * child's, seed r with what its parent held at the fork (r->inherit says
 * what was found). Problems are warnings: the child is replayed anyway.
 */
void inherit_seed(struct replay *r);

/*
 * Move the entries of *live that were inherited into *out (NULL: drop
 * them) and count them in r->inherit.held_*: the child's own stay.
 */
void inherit_split(struct replay *r, struct replay_live **live, struct replay_live **out);

/*
 * The gate's lost rule: drop the inherited entries of *lost (the blocks
 * of the lost classes) and count them in r->inherit.lost_*: a forked
 * child is held to what it allocated itself.
 */
void inherit_drop(struct replay *r, struct replay_live **lost);

/* The same, at the end of the replay: inherited blocks still live. */
void inherit_held(struct replay *r);

/*
 * One line for a text report (nothing when r is not a forked child):
 * what was inherited and is still held, or that the parent's trace is
 * missing. indent starts the line.
 */
void inherit_text(FILE *f, const struct replay *r, const char *indent);

/* ,"inherited":{...} (or null when r is not a forked child). */
void inherit_json(FILE *f, const struct replay *r);

#endif /* MEMPROV_INHERIT_H */
