/* cluster.shrink = "share": the survivors of a group that shrank train the lost workers' rows
 * of each batch too (reshare.c). */
#ifndef SINGA_RUNTIME_RESHARE_H
#define SINGA_RUNTIME_RESHARE_H

#include "runtime/runtime.h"

/* Before w's `step`: the lost workers (bit id) whose rows it trains too, in w->takes; none under
 * cluster.shrink = "batch". */
void rt_reshare_step(rt_worker *w, int step);
/* After w's own pass of the step: a pass over the rows of each worker of w->takes, their
 * params' gradients added to the step's. */
int rt_reshare_run(rt_worker *w, singa_err *err);
/* The log's words for what becomes of the lost workers' rows of group g, into buf. */
void rt_reshare_describe(const rt_ctx *rt, int g, char *buf, size_t cap);

#endif
