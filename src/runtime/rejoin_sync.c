/* A lost process that asks to rejoin a synchronous job (SINGA_REJOIN, one worker group).
 *
 * Only a job with cluster.replicas >= 2, whose group shrinks, goes on without a lost process
 * (membership.c); any other ended when it lost one, and no live process holds the lost one's
 * state, so a process of such a job is refused before it meets (rt_rejoin_check).  With
 * replicas it needs no checkpoint: it meets rank 0, whose peers.c first checks that it runs the
 * same job (the configuration's digest, its net included, and the plugins), as for any rejoin.
 * The synchronous group does not grow back yet: rank 0 then refuses it, naming the reason, and
 * the job trains on without it, undisturbed.  (Growing needs the holders to copy the process's
 * replicas their values and updater state, a worker its state, and every survivor to count it
 * again from one step on: see docs/03-clusters.md.) */
#include <stdio.h>

#include "runtime/rejoin_sync.h"

bool rt_rejoin_sync(const rt_ctx *rt) { return rt->launch.rejoin && rt->c->nworker_groups == 1; }

int rt_rejoin_sync_check(const rt_ctx *rt, singa_err *err)
{
    const singa_cluster *c = rt->c;
    if (c->replicas < 2)
        return singa_err_set(err, "SINGA_REJOIN: the job is synchronous (one worker group) without cluster.replicas: "
                                  "losing a process ended it, and no live process holds the lost one's state, so no "
                                  "process can rejoin it (resume it from its checkpoint instead)");
    if (rt->cut || c->shard_params)
        return singa_err_set(err, "SINGA_REJOIN: the job is synchronous and %s: losing a process ended it, though it "
                                  "has cluster.replicas, so no process can rejoin it (resume it from its checkpoint "
                                  "instead)", rt->cut ? "its net is cut among the workers" : "shards its params");
    return 0;
}

void rt_rejoin_sync_refuse(rt_peers *p, int r)
{
    char why[256];
    snprintf(why, sizeof why, "the job is synchronous: with cluster.replicas its group went on without rank %d, but a "
                              "synchronous group does not take a lost process back yet; it trains on without it", r);
    rt_peers_refuse(p, why);
}
