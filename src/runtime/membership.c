/* A synchronous group that shrinks (cluster.replicas >= 2): when a process is lost (rank 0 too,
 * takeover.c, where a silence needs a majority left), each survivor's stub, which finds the loss
 * itself (peers_live.c: a killed process within about a second), goes on without it instead of
 * ending the job:
 * - the holder of each server whose holder was there moves to its next live replica, the same in
 *   every survivor, as the map depends only on the processes lost (rt->holder, topology.h);
 * - the servers and workers here are told (MSG_SHRINK): a backup takes over, a step waits no more
 *   for the lost process's contribution or ack, the group's leader for its metrics;
 * - the updates of this step still unanswered by a lost holder go again to the new one, which
 *   answers at once when it applied that step already (its primary had sent it), so the step in
 *   flight is applied once in every holder: with the lost worker's gradient in the slices it
 *   reached before it died, without it in the others, the same in every survivor;
 * - the coordinator (rank 0, or the one that took over from it) asks the new holders for the
 *   shards of a checkpoint the lost holders had not written, and counts the lost process done.
 * The lost worker's rows of each batch are trained by a survivor too (cluster.shrink = "share",
 * reshare.c), or, with "batch", not any more: the global batch shrinks by its share.  Losses of
 * every replica of a server, or of a process of a cut net or of several groups, still end the
 * job (stub_loss.c). */
#include <stdio.h>
#include <string.h>

#include "runtime/reshare.h"
#include "runtime/stub.h"

bool stub_may_shrink(const rt_stub *s, int r)
{
    const rt_ctx *rt = s->rt;
    const singa_cluster *c = rt->c;
    if (!rt->holder || r >= 64 || c->nworker_groups != 1 || rt->cut || c->shard_params ||
        s->end != END_TRAINING || rt_shrunk(rt, r) || (s->groups[0].nlocal && s->groups[0].fetch == FETCH_START))
        return false; /* before training, the backups may not hold the values yet */
    int per = c->nservers_per_group, live = 0;
    for (int j = 0; j < per; j++) { /* some replica of every server is left */
        bool held = false;
        for (int k = 0; k < c->replicas && !held; k++) {
            int q = rt_server_proc(rt, 0, k * per + j);
            held = q != r && !rt_shrunk(rt, q);
        }
        if (!held)
            return false;
    }
    for (int j = 0; j < c->nworkers_per_group; j++) {
        int q = rt_worker_proc(rt, 0, j);
        live += q != r && !rt_shrunk(rt, q);
    }
    return live > 0;
}

/* Moves each server held in a lost process to its next live replica; bit j set in the result
 * where server j's holder changed. */
static uint64_t move_holders(rt_ctx *rt)
{
    int per = rt->c->nservers_per_group;
    uint64_t moved = 0;
    for (int j = 0; j < per; j++) {
        int k = atomic_load(&rt->holder[j]);
        while (rt_shrunk(rt, rt_server_proc(rt, 0, k * per + j)))
            k = (k + 1) % rt->c->replicas;
        if (k != atomic_load(&rt->holder[j]))
            moved |= j < 64 ? 1ULL << j : 0;
        atomic_store(&rt->holder[j], k);
    }
    return moved;
}

void rt_group_describe(const rt_ctx *rt, const char *note, char *buf, size_t len)
{
    snprintf(buf, len, "workers");
    for (int j = 0, live = 0; j < rt->c->nworkers_per_group; j++)
        if (!rt_shrunk(rt, rt_worker_proc(rt, 0, j)))
            singa_appendf(buf, len, "%s 0.%d", live++ ? "," : "", j);
    if (note)
        singa_appendf(buf, len, " (%s)", note);
    singa_appendf(buf, len, "; servers");
    for (int j = 0; j < rt->c->nservers_per_group; j++) {
        int id = rt_holder_id(rt, j);
        singa_appendf(buf, len, "%s 0.%d in rank %d%s", j ? "," : "", j, rt_server_proc(rt, 0, id),
                      id == j ? "" : " (its backup)");
    }
}

/* The log's line and the Topology panel's: who was lost, and what the group is now. */
static void log_group(rt_stub *s, int r, const char *why)
{
    rt_ctx *rt = s->rt;
    int live = 0, all = rt->c->nworkers_per_group;
    const stub_group *sg = &s->groups[0];
    int step = sg->nlocal && sg->step ? sg->step[0] : -1; /* a process of servers alone does not know it */
    for (int j = 0; j < all; j++)
        live += !rt_shrunk(rt, rt_worker_proc(rt, 0, j));
    char rows[256], note[320], group[768], from[32] = "", at[32] = "", line[1200];
    rt_reshare_describe(rt, 0, rows, sizeof rows);
    snprintf(note, sizeof note, "%d of %d: %s", live, all, rows);
    if (step >= 0) {
        snprintf(from, sizeof from, "from step %d ", step);
        snprintf(at, sizeof at, " at step %d", step);
    }
    rt_group_describe(rt, live < all ? note : NULL, group, sizeof group);
    snprintf(line, sizeof line, "%s; the job goes on without it (cluster.replicas): %sthe group is %s", why, from, group);
    rt_log_line(rt, line, true, true);
    rt_group_describe(rt, NULL, group, sizeof group);
    snprintf(line, sizeof line, "rank %d lost%s; the group: %s", r, at, group);
    singa_stats_set_group(rt->stats, line);
}

/* The threads here: a MSG_SHRINK to each server (backups too) and each worker. */
static void tell_threads(rt_stub *s, int r)
{
    msg m = {.type = MSG_SHRINK, .src = stub_addr(s, 0), .count = (uint32_t)r};
    stub_to_servers(s, m, NULL, 0);
    if (s->groups[0].nlocal)
        stub_to_workers(s, 0, m);
}

/* This process's updates still open at a server whose holder moved go to the new holder. */
static void send_again(rt_stub *s, uint64_t moved)
{
    rt_ctx *rt = s->rt;
    stub_group *sg = &s->groups[0];
    if (!sg->nlocal)
        return;
    for (int k = 0; k < rt->nslices; k++)
        if (sg->open[k] && rt->slices[k].server < 64 && (moved >> rt->slices[k].server & 1))
            stub_send_update(s, 0, k);
}

/* Rank 0: a checkpoint's shard asked of a holder now lost is asked of the new one. */
static void ask_again(rt_stub *s, uint64_t moved)
{
    rt_ctx *rt = s->rt;
    for (int j = 0; j < rt->c->nservers_per_group && j < 64; j++)
        if (s->ckpt[j] == CKPT_ASKED && (moved >> j & 1)) {
            msg m = {.type = MSG_CKPT, .src = stub_lead_addr(rt), .dst = stub_server_addr(rt, 0, j),
                     .step = s->ckpt_step};
            stub_route(s, &m, NULL, 0);
        }
}

void stub_shrink(rt_stub *s, int r, const char *why)
{
    rt_ctx *rt = s->rt;
    bool coordinated = rt_coordinator(rt) == r;
    atomic_fetch_or(&rt->shrunk, 1ULL << r);
    /* Only the coordinator, and before it asks a new holder for the shard: a backup that took over
     * writes the lost primary's file names, which another survivor's removal would pull away. */
    if (rt->rank == rt_coordinator(rt))
        rt_ckpt_drop_lost_tmp(rt, r);
    uint64_t moved = move_holders(rt);
    log_group(s, r, why);
    rt_peers_forget(s->peers, r); /* its frames lent, given back: the loans a step's end waits for */
    tell_threads(s, r);
    send_again(s, moved);
    if (coordinated) /* takeover.c */
        stub_take_over(s, r);
    if (rt->rank == rt_coordinator(rt)) {
        ask_again(s, moved);
        stub_proc_done(s, r);
    }
}
