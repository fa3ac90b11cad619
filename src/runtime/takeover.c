/* Who may go on after a loss in a synchronous group that shrinks (cluster.replicas >= 2): a new
 * membership needs a majority of the last one when the loss is uncertain.
 *
 * A closed connection is the kernel's word that the peer process is gone (its sockets were
 * closed, so it exited or was killed): a partition closes nothing, so the survivors of such a
 * loss cannot be one side of a split, and they go on whatever their number (so a 3-process job
 * with replicas = 3 outlives two kill -9s, rank 0 training on alone).  A silence (nothing for
 * heartbeat_timeout) or a process found hung may be either side of a partition, or of a link
 * down: the survivors go on only as a majority of the membership they had, so two sides of a
 * split can never both go on; a minority ends the job, naming why. */
#include <stdio.h>

#include "runtime/stub.h"

/* The processes the group has now (r counted, when it is not yet left out). */
static int live_count(const rt_ctx *rt)
{
    int n = 0;
    for (int q = 0; q < rt->nprocs; q++)
        n += !rt_shrunk(rt, q);
    return n;
}

bool stub_majority_left(const rt_stub *s, int r, rt_loss why, singa_err *e)
{
    const rt_ctx *rt = s->rt;
    int last = live_count(rt), left = last - !rt_shrunk(rt, r);
    if (why == RT_LOST_CLOSED || why == RT_LOST_BEFORE || 2 * left > last)
        return true;
    singa_appendf(e->msg, sizeof e->msg, "; the job ends: the %d process%s left %s not a majority of the %d the "
                  "group had, and a silence cannot tell a lost process from a partition, whose other side may go "
                  "on (cluster.replicas: a new membership needs a majority of the last one)",
                  left, left == 1 ? "" : "es", left == 1 ? "is" : "are", last);
    return false;
}
