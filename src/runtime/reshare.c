/* cluster.shrink = "share" (the default): once a synchronous group goes on without a lost
 * process (membership.c), each lost worker's rows of every batch are trained by one survivor, an
 * extra pass of its own net over them (train/share.c), so every step still trains the whole
 * global batch.  The survivor sends its passes' summed gradient as that many contributions
 * (MSG_UPDATE's count), and the servers apply the sum over the contributions divided by their
 * number (server.c), as for the whole group: each pass's gradient is the mean over one worker's
 * rows, so the step's is the mean over the same rows as without the loss.
 *
 * Who takes whose rows depends only on which processes are lost, the same in every survivor:
 * the k-th lost worker (by id) goes to the k-th live one, round the live ones again when fewer
 * live than lost.  So a survivor's net keeps its size and buffers (no reshape mid-run), and a
 * step takes as long as its busiest survivor's passes.  A worker decides at the start of each
 * step from what its process knew at the start of the step before (rt_reshare_step): the step
 * in flight at the loss, and the next when the news comes during it, are applied as
 * membership.c says (the live contributions, averaged over them). */
#include <limits.h>
#include <stdio.h>

#include "layers/records.h"
#include "runtime/rejoin_sync.h"
#include "runtime/reshare.h"

/* Whether a group that shrinks here can train the lost rows: data parallelism (not a cut net),
 * every gradient summed by the servers (not into a shared history, nor applied by each replica),
 * input layers that can read another worker's rows (a plugin's may not). */
static bool can_share(const rt_ctx *rt)
{
    const singa_cluster *c = rt->c;
    const singa_net *net = rt->job ? singa_job_train_net(rt->job) : NULL;
    if (c->shrink != SINGA_SHRINK_SHARE || rt->cut || c->nworker_groups != 1 || rt->self_update || !net)
        return false;
    for (int k = 0; k < rt->nparams; k++)
        if (rt->params[k].hist)
            return false;
    for (int i = 0; i < net->nlayers; i++)
        if ((net->layers[i]->type->flags & SINGA_LAYER_INPUT) && !singa_records_of(net->layers[i]))
            return false;
    return true;
}

/* The live worker that trains lost worker j's rows at `step` (-1: j trains them, or none can):
 * absent at the step, as a process that rejoins is until the step it trains from. */
static int taker(const rt_ctx *rt, int g, int j, int step)
{
    int n = rt->c->nworkers_per_group, nlive = 0, k = 0;
    if (j >= 64 || !rt_absent(rt, rt_worker_proc(rt, g, j), step))
        return -1;
    for (int i = 0; i < n; i++) {
        bool lost = rt_absent(rt, rt_worker_proc(rt, g, i), step);
        nlive += !lost;
        k += lost && i < j; /* j is the k-th lost */
    }
    for (int i = 0, at = nlive ? k % nlive : -1; i < n && at >= 0; i++)
        if (!rt_absent(rt, rt_worker_proc(rt, g, i), step) && at-- == 0)
            return i;
    return -1;
}

/* The lost workers whose rows worker id of group g trains at `step`, by what this process knows
 * now. */
static uint64_t assigned(const rt_ctx *rt, int g, int id, int step)
{
    if (!can_share(rt))
        return 0;
    uint64_t mine = 0;
    for (int j = 0; j < rt->c->nworkers_per_group && j < 64; j++)
        if (taker(rt, g, j, step) == id)
            mine |= 1ULL << j;
    return mine;
}

/* Only rows given to w at the step before too: a worker first known lost at this step may have
 * sent its gradient of it (it needed only the step before to be complete) before it died, and
 * the servers would count its rows twice and wait for ever; a worker known lost before this step
 * began could not, as the step before waited for this worker's gradient, sent after the news. */
void rt_reshare_step(rt_worker *w, int step)
{
    uint64_t now = assigned(w->rt, w->group, w->id, step);
    w->takes = now & w->assigned;
    w->assigned = now;
}

int rt_reshare_run(rt_worker *w, singa_err *err)
{
    double t0 = rt_now();
    for (int j = 0; j < 64; j++)
        if ((w->takes >> j & 1) && singa_job_train_share(w->job, j, err) < 0)
            return singa_err_prefix(err, "worker %d.%d: ", w->group, w->id);
    singa_trace_span(w->trace, "reshare", "the lost workers' rows", t0, rt_now());
    return 0;
}

void rt_reshare_describe(const rt_ctx *rt, int g, char *buf, size_t cap)
{
    if (!can_share(rt)) {
        snprintf(buf, cap, "the lost workers' rows of each batch are left out");
        return;
    }
    snprintf(buf, cap, "the lost workers' rows of each batch are shared out, the global batch whole:");
    for (int j = 0, n = 0; j < rt->c->nworkers_per_group && j < 64; j++) {
        int t = taker(rt, g, j, INT_MAX); /* the membership now */
        if (t >= 0)
            singa_appendf(buf, cap, "%s %d.%d trains %d.%d's too", n++ ? "," : "", g, t, g, j);
    }
}
