/* Which process this is and where the runtime's threads live (topology.c): the launcher's rank
 * and size, the cluster's placement of each worker and server, which workers send gradients,
 * the stub's names for them, and which losses end the job. */
#ifndef SINGA_RUNTIME_TOPOLOGY_H
#define SINGA_RUNTIME_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

#include "singa/cluster.h"
#include "singa/error.h"

typedef struct rt_ctx rt_ctx; /* runtime.h */

/* Which process this is: rank and size from `--procs` or a launcher's environment, and where
 * rank 0 (the coordinator) listens. */
typedef struct rt_launch {
    int rank, size;
    const char *from; /* the variable the rank came from */
    char coordinator[256];
    const char *bind; /* the address the others listen on: cluster.bind, $SINGA_BIND or loopback */
    bool rejoin;      /* $SINGA_REJOIN=1: a lost process of a running job, started again */
    int restart;      /* an elastic job's restart by `--procs` (0: the first run) */
    const char *lost; /* the ranks the run before lost */
} rt_launch;

/* alone: the whole cluster in this process, whatever launched it (singa_job_run_alone). */
int rt_launch_read(rt_launch *l, const singa_cluster *c, bool alone, singa_err *err);

/* Where the runtime's threads live.  Server ids from nservers_per_group on are backups
 * (cluster.replicas): id r * nservers_per_group + j is replica r of server j, r processes after
 * its primary's. */
int rt_worker_proc(const rt_ctx *rt, int group, int id);
int rt_server_proc(const rt_ctx *rt, int group, int id);
/* The id of the replica that holds server j of group 0 now: j itself but after a loss
 * (cluster.replicas, membership.c); whether process r is one a synchronous group went on without. */
int rt_holder_id(const rt_ctx *rt, int j);
bool rt_shrunk(const rt_ctx *rt, int r);
/* Who leads after losses (takeover.c): group g's leader is worker g.<rt_lead_id>, its lowest
 * worker left (0 but after a synchronous group lost its process), and the coordinator, which
 * counts the processes done, ends the job and writes the log and metrics, is that leader's
 * process: rank 0 until it is lost. */
int rt_lead_id(const rt_ctx *rt, int group);
bool rt_leads(const rt_ctx *rt, int group, int id);
int rt_coordinator(const rt_ctx *rt);
/* Whether worker (group, id) trains a job of its own and sends gradients: every worker, or, when
 * the net is cut among a group's workers, the first of the group in each process (its job computes
 * the parts of the others there, and its gradients are the process's part of the group's, which
 * the servers sum rather than average). */
bool rt_sends(const rt_ctx *rt, int group, int id);
/* How many of a group's workers send gradients; the one that sends for worker `id`. */
int rt_senders(const rt_ctx *rt, int group);
int rt_sender_of(const rt_ctx *rt, int group, int id);
/* An identity on the stub's router: "w<group>.<id>", "s<group>.<id>". */
void rt_identity(char *buf, size_t len, int kind, int group, int id);
/* What a process holds, e.g. "workers 1.0-1.1; servers 0.0". */
void rt_role(const rt_ctx *rt, int rank, char *buf, size_t len);
/* Every process says what it holds and where it listens (NULL: nowhere, it is alone). */
void rt_announce(rt_ctx *rt, const char *endpoint);
/* Whether losing process r ends the job: it held worker 0.0 or the coordinator, the job is
 * synchronous, or another process needs one of its servers or shares a worker group with it. */
bool rt_loss_ends_job(const rt_ctx *rt, int r);

#endif
