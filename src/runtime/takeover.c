/* No single point of failure in a synchronous group that shrinks (cluster.replicas >= 2): who
 * may go on after a loss, and who coordinates once rank 0 is lost.
 *
 * Coordination (rank 0's until it is lost) follows group 0's leader, its lowest live worker:
 * every survivor derives both from the processes lost alone, so they agree without a word.  The
 * new coordinator counts the processes done (each done survivor says so again), its leader
 * reports the records (the one it kept of the step before it led, when the lost leader had not
 * reported it: MSG_RECORDED says which it had), runs the tests, writes the checkpoints and ends
 * the job; the half-written checkpoint files of a lost process are removed.
 *
 * A new membership needs a majority of the last one when the loss is uncertain.
 * A closed connection is the kernel's word that the peer process is gone (its sockets were
 * closed, so it exited or was killed): a partition closes nothing, so the survivors of such a
 * loss cannot be one side of a split, and they go on whatever their number (so a 3-process job
 * with replicas = 3 outlives two kill -9s, rank 0 training on alone).  A silence (nothing for
 * heartbeat_timeout) or a process found hung may be either side of a partition, or of a link
 * down: the survivors go on only as a majority of the membership they had, so two sides of a
 * split can never both go on; a minority ends the job, naming why. */
#include <stdio.h>
#include <string.h>

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

int rt_lead_id(const rt_ctx *rt, int group)
{
    if (group != 0 || !atomic_load(&rt->shrunk)) /* only group 0 of a synchronous job shrinks */
        return 0;
    for (int j = 0; j < rt->c->nworkers_per_group; j++)
        if (!rt_shrunk(rt, rt_worker_proc(rt, 0, j)))
            return j;
    return 0;
}

bool rt_leads(const rt_ctx *rt, int group, int id)
{
    return id == rt_lead_id(rt, group);
}

int rt_coordinator(const rt_ctx *rt)
{
    return rt_worker_proc(rt, 0, rt_lead_id(rt, 0));
}

/* The coordinator, rank `was`, is lost and the group goes on (membership.c): the new one counts
 * the processes done, of which it knew nothing, and every survivor done says so again to it. */
void stub_take_over(rt_stub *s, int was)
{
    rt_ctx *rt = s->rt;
    int now = rt_coordinator(rt);
    const stub_group *sg = &s->groups[0];
    char line[320];
    int n = snprintf(line, sizeof line, "rank %d, the coordinator, was lost", was);
    if (sg->nlocal && sg->step)
        n += snprintf(line + n, sizeof line - (size_t)n, " at step %d", sg->step[0]);
    snprintf(line + n, sizeof line - (size_t)n, ": rank %d coordinates now (worker 0.%d leads the group: its "
             "metrics, checkpoints and the end of the job)", now, rt_lead_id(rt, 0));
    rt_log_line(rt, line, true, true);
    for (int q = 0; rt->rank == now && q < rt->nprocs; q++)
        if (rt_shrunk(rt, q))
            stub_proc_done(s, q);
    if (s->hellos == s->threads && s->done == rt->nworkers)
        stub_local_done(s);
}

singa_result rt_lead_result(const rt_ctx *rt)
{
    for (int i = 0; i < rt->nworkers; i++)
        if (rt->workers[i].group == 0 && rt_leads(rt, 0, rt->workers[i].id))
            return rt->workers[i].res;
    return rt->final;
}

/* The script of a process that took over holds no worker's job (worker 0.0's was rank 0's): the
 * final values its leader read go to the script's params too, as the other processes get them. */
void stub_final_here(rt_stub *s)
{
    rt_ctx *rt = s->rt;
    for (int k = 0; !rt->c->shard_params && rt->rank != 0 && k < rt->nslices; k++) {
        const rt_slice *sl = &rt->slices[k];
        float *from = stub_replica_at(rt, 0, sl), *to = rt->final_params[sl->param]->data.data + sl->offset;
        if (from != to)
            memcpy(to, from, sl->len * sizeof *to);
    }
}

void rt_lead_recorded(rt_worker *w, const singa_record *r)
{
    const rt_ctx *rt = w->rt;
    if (!rt->holder || r->phase != SINGA_PHASE_TRAIN || rt->rank != rt_coordinator(rt))
        return;
    for (int q = 0; q < rt->nprocs; q++)
        if (q != rt->rank && !rt_shrunk(rt, q)) {
            msg m = {.type = MSG_RECORDED, .src = {ENT_WORKER, (uint16_t)w->group, (uint16_t)w->id, (uint16_t)rt->rank},
                     .dst = {ENT_STUB, 0, 0, (uint16_t)q}, .step = r->step};
            rt_send(w->sock, &m, NULL, 0);
        }
}

bool rt_lead_record(rt_worker *w, const singa_record *r, const singa_record **first)
{
    *first = NULL;
    if (!rt_leads(w->rt, w->group, w->id)) {
        if (r->phase == SINGA_PHASE_TRAIN) {
            w->kept = *r;
            w->kept_metrics = *r->metrics;
            w->kept.metrics = &w->kept_metrics;
        }
        return false;
    }
    if (!w->led && w->kept.metrics && w->kept.step < r->step && w->kept.step >= atomic_load(&w->rt->recorded))
        *first = &w->kept;
    w->led = true;
    return true;
}

void stub_on_recorded(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    atomic_store(&s->rt->recorded, m->step + 1);
}
