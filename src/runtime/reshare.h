/* cluster.shrink = "share": the survivors of a group that shrank train the lost workers' rows
 * of each batch too (reshare.c). */
#ifndef SINGA_RUNTIME_RESHARE_H
#define SINGA_RUNTIME_RESHARE_H

#include "runtime/runtime.h"

/* The lost workers (bit id) whose rows worker `id` of group g trains too, from what this
 * process knows of the losses now; 0 under cluster.shrink = "batch". */
uint64_t rt_reshare_takes(const rt_ctx *rt, int g, int id);
/* After w's own pass of the step: a pass over the rows of each worker of w->takes, their
 * params' gradients added to the step's. */
int rt_reshare_run(rt_worker *w, singa_err *err);
/* The log's words for what becomes of the lost workers' rows of group g, into buf. */
void rt_reshare_describe(const rt_ctx *rt, int g, char *buf, size_t cap);

#endif
