/* A lost process that asks to rejoin a synchronous job (SINGA_REJOIN, one worker group):
 * rejoin_sync.c. */
#ifndef SINGA_RUNTIME_REJOIN_SYNC_H
#define SINGA_RUNTIME_REJOIN_SYNC_H

#include "runtime/runtime.h"

/* Whether this process was started to rejoin a synchronous job. */
bool rt_rejoin_sync(const rt_ctx *rt);
/* Before the meeting, in the process that asks: only a job that went on without it may take it
 * back; 0, or -1 with the reason in err. */
int rt_rejoin_sync_check(const rt_ctx *rt, singa_err *err);
/* Rank 0: the rank whose rejoin peers.c let through (the same job, net and plugins) is told why
 * the synchronous group does not take it, and the job trains on. */
void rt_rejoin_sync_refuse(rt_peers *p, int r);

#endif
