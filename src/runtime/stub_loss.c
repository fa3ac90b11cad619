/* The stub meets a lost process (peers.c finds it): the job ends, or goes on without it, its
 * groups leaving the staleness bound, a checkpoint's or the final flush's waiting for it ended.
 * Rank 0 admits a lost process that asks to rejoin while the job trains.
 *
 * A process that rejoined (SINGA_REJOIN) tells its servers of every loss: a Hogwild server's fetch
 * of the newest values (server.c) must not wait for a lost group. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/rejoin_sync.h"
#include "runtime/stub.h"

/* Rank 0: answers worker 0.0 for server i (group * per + id), lost before it wrote its shard. */
void stub_ckpt_lost(rt_stub *s, int i)
{
    s->ckpt[i] = CKPT_IDLE;
    msg m = {.type = MSG_CKPT_REPLY, .src = stub_addr(s, 0), .dst = stub_lead_addr(s->rt), .step = s->ckpt_step,
             .server = i, .lost = true};
    stub_route(s, &m, NULL, 0);
}

void stub_on_lost(rt_stub *s, int r, rt_loss why)
{
    rt_ctx *rt = s->rt;
    if (s->ending && r != s->ender) { /* done before this process: only the final values are still coming */
        if (s->ender == rt->rank && --s->byes_due <= 0) /* the coordinator (stub_end.c) */
            s->stop = true;
        return;
    }
    char role[160];
    rt_role(rt, r, role, sizeof role);
    singa_err e;
    if (why == RT_LOST_CLOSED)
        singa_err_set(&e, "rank %d (%s) at %s died: its connection closed and it does not answer", r, role,
                      rt_peers_endpoint(s->peers, r));
    else if (why == RT_LOST_HUNG)
        singa_err_set(&e, "rank %d (%s) at %s hung: busy for %g s (heartbeat_timeout) without progress while the "
                          "others waited (an endless loop, in a kLua updater or schedule?)",
                      r, role, rt_peers_endpoint(s->peers, r), rt->c->heartbeat_timeout);
    else if (why == RT_LOST_BEFORE)
        singa_err_set(&e, "rank %d (%s) at %s was lost before this process rejoined", r, role,
                      rt_peers_endpoint(s->peers, r));
    else
        singa_err_set(&e, "rank %d (%s) at %s sent nothing for %g s (heartbeat_timeout): it died, hung or was stopped",
                      r, role, rt_peers_endpoint(s->peers, r), rt->c->heartbeat_timeout);
    if (stub_may_shrink(s, r)) { /* cluster.replicas: the synchronous group goes on (membership.c) */
        if (stub_majority_left(s, r, why, &e)) /* takeover.c */
            stub_shrink(s, r, e.msg);
        else
            stub_fail_everywhere(s, &e, true);
        return;
    }
    if (rt_loss_ends_job(rt, r)) {
        stub_fail_everywhere(s, &e, true);
        return;
    }
    rt_log(rt, "%s; the job goes on without it", e.msg);
    if (rt->launch.rejoin && rt->c->nserver_groups > 1) /* a server here may wait for r's values */
        stub_to_servers(s, (msg){.type = MSG_LOST, .src = stub_addr(s, 0)}, NULL, 0);
    for (int g = 0; s->bound && g < rt->c->nworker_groups; g++)
        if (rt_worker_proc(rt, g, 0) == r) { /* a lost group leaves the bound */
            rt_log(rt, "worker group %d leaves the staleness bound at step %d", g, rt_bound_done(s->bound, g));
            stub_bound_note(s, g, INT_MAX);
        }
    if (rt->rank == 0) {
        int per = rt->c->nservers_per_group;
        for (int i = 0; i < rt->c->nserver_groups * per; i++)
            if (s->ckpt[i] == CKPT_ASKED && rt_server_proc(rt, i / per, i % per) == r)
                stub_ckpt_lost(s, i);
        rt_ckpt_name_incomplete(rt, r);
        rt_ckpt_drop_lost_tmp(rt, r);
        stub_flush_lost(s, r); /* when the flush is on; else proc_done may begin it, without r */
        stub_proc_done(s, r);
    }
}

/* Rank 0: a lost process asks to rejoin (peers.c checked who it is).  Its workers train on, so
 * the job waits for them again; once every process is done it is too late. */
void stub_on_rejoin(rt_stub *s)
{
    rt_ctx *rt = s->rt;
    int step, r = rt_peers_joining(s->peers, &step);
    char role[160];
    rt_role(rt, r, role, sizeof role);
    if (s->end != END_TRAINING) {
        rt_peers_refuse(s->peers, "the job is ending: every other process is done");
        return;
    }
    singa_err e;
    bool sync = rt->c->nworker_groups == 1; /* a synchronous group that shrank grows (rejoin_sync.c) */
    int rc = sync ? rt_rejoin_sync_admit(s, r, &e) : rt_peers_admit(s->peers, &e);
    if (rc > 0) /* refused, naming why */
        return;
    if (rc < 0) {
        rt_log(rt, "rank %d (%s) asked to rejoin, but: %s", r, role, e.msg);
        return;
    }
    if (s->proc_done[r]) {
        s->proc_done[r] = false;
        s->procs_done--;
    }
    if (!sync) /* else the group's line says from which step */
        rt_log(rt, "rank %d (%s) rejoined at step %d", r, role, step);
}
