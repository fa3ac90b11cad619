/* What every file of the runtime needs of its process (ctx.c): failing, stopping, the host's
 * checkpoint step, a thread's send and receive, the log and rank 0's host records.  It calls
 * nothing back into the other runtime files, so any of them may use it. */
#ifndef SINGA_RUNTIME_CTX_H
#define SINGA_RUNTIME_CTX_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/msg.h"
#include "singa/error.h"
#include "singa/job.h"

typedef struct rt_ctx rt_ctx; /* runtime.h */

/* Records the first failure of any thread; _as says whether it is a lost process's. */
void rt_fail(rt_ctx *rt, const singa_err *err);
void rt_fail_as(rt_ctx *rt, const singa_err *err, bool lost);
bool rt_failed(rt_ctx *rt);

/* Group g stops before `step` at the latest.  A worker that sees the host's stop before step s
 * picks s + 1 for its group in its process, which no worker of the group can have begun (each
 * needs its gradients of s first); its updates of s carry MSG_F_LAST, and the servers' replies
 * too, so the processes of the group stop at the earliest step any of them picked. */
void rt_stop_before(rt_ctx *rt, int g, int step);
bool rt_last_step(const rt_ctx *rt, int g, int step);

/* The host asked for a checkpoint: the lead, before step s, picks s + 1, as for a stop; in a job
 * of one worker group its updates of s carry MSG_F_CKPT, so every worker writes its state at the
 * start of the same step, and the lead has the servers write their shards then.  With several
 * groups rank 0's stub tells every process (worker.c: host_ckpt_owed). */
void rt_ckpt_at(rt_ctx *rt, int step);
bool rt_ckpt_due(const rt_ctx *rt, int step);

/* Sends a message to the stub from a worker's or server's socket; payload may be NULL. */
int rt_send(void *sock, const msg *m, const void *payload, size_t nbytes);
/* A worker's or server's next message, as msg_recv; the thread counts as waiting meanwhile. */
int rt_recv(rt_ctx *rt, void *sock, msg *m, zmq_msg_t *payload);

/* <workspace>/rank<r>.log, appended to, its folders made as needed (none without a workspace). */
int rt_log_open(rt_ctx *rt, singa_err *err);
/* A line for this process's log in the workspace (and rank 0's host). */
void rt_log(rt_ctx *rt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line for the log, shown by rank 0's host when `show`, by every host when `all`. */
void rt_log_line(rt_ctx *rt, const char *line, bool show, bool all);
/* Hands rank 0's host a record (step: a step's, else a result), serialised with the other hooks. */
void rt_record(rt_ctx *rt, const singa_record *r, bool step);

#endif
