/* A lost process that rejoins a synchronous job (SINGA_REJOIN, one worker group), and the group
 * that grows back: rejoin_sync.c. */
#ifndef SINGA_RUNTIME_REJOIN_SYNC_H
#define SINGA_RUNTIME_REJOIN_SYNC_H

#include "runtime/runtime.h"

/* Whether this process was started to rejoin a synchronous job. */
bool rt_rejoin_sync(const rt_ctx *rt);
/* Whether process q's part of `step` is not awaited: it was lost, or it rejoins from a later step. */
bool rt_absent(const rt_ctx *rt, int q, int step);
/* Before the meeting, in the process that asks: only a job that went on without it may take it
 * back; 0, or -1 with the reason in err. */
int rt_rejoin_sync_check(const rt_ctx *rt, singa_err *err);
/* Rank 0: the rank whose rejoin peers.c let through (the same job, net and plugins) is refused,
 * naming why (1), or admitted, every process told the step it trains from (0); -1 on failure. */
int rt_rejoin_sync_admit(rt_stub *s, int r, singa_err *err);
/* Rank 0, once its workers are done: the rank admitted for a step the group stopped before (the
 * workbench's stop, or early_stop, came between its admission and that step), which trained no
 * step, so the end waits for it no more (it ends at the FINISHED, as every process); 0: none. */
int rt_rejoin_sync_missed(rt_ctx *rt);
/* The rejoined process's stub, once every thread here said hello (it hears the others from then
 * on): its group's values are awaited from the holders, unasked. */
void stub_rejoin_start(rt_stub *s);
/* Every stub: rank 0's word that a process rejoins from a step (MSG_GROW). */
void stub_on_grow(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);
/* A holder applied group g's `step` of slice x: before the rejoin's step, it sends the rejoined
 * process's replicas their state and its stub the values. */
struct srv_slice;
void srv_grow_push(rt_server *s, struct srv_slice *x, int g, int step);
/* A worker before `step`: rank 0's worker 0.0 sends the rejoined workers its state; the rejoined
 * process logs its heal time after its first step. */
int rt_rejoin_sync_step(rt_worker *w, int step, singa_err *err);
/* A rejoined worker takes rank 0's worker 0.0's state (MSG_WORKER_STATE): 1 when taken, 0 when
 * dropped, -1 on failure. */
int rt_rejoin_sync_take_state(rt_worker *w, const msg *m, zmq_msg_t *payload, singa_err *err);

#endif
