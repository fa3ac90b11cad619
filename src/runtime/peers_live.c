/* Heartbeats and liveness of the other processes (peers.h): from the meeting on, any message
 * counts as a sign of life; a heartbeat goes to every peer each fifth of the timeout, so a process
 * silent for the whole timeout is dead (or stopped), and one whose connection closed and did not
 * come back within CLOSED_WAIT is dead sooner (peers.c watches the connections).
 * A hung process still beats, so every heartbeat also says whether its workers and servers are
 * busy and how far they got: one busy without progress for the timeout, while this process had
 * nothing to do as long (it waited, for that one among others), is stuck in a computation and
 * lost.  Waiting for a message, paused or ended, a thread is not busy.
 * Heartbeats to rank 0 carry the sender's traffic counters, so rank 0 (and its workbench) sees
 * every process's; rank 0's carry its host's pause and lr scale, so they steer every process. */
#include <stdio.h>
#include <string.h>

#include "runtime/peers.h"

/* Seconds a peer's closed connection may stay closed before its process counts as dead. */
static const double CLOSED_WAIT = 0.5;

/* Process r's heartbeat: whether it is busy and how far it got; rank 0's steers this process, the
 * others' carry their traffic to rank 0.  2 as rt_peers_recv returns, or 1 when dropped. */
int peers_take_beat(rt_peers *p, int r, zmq_msg_t *payload)
{
    msg_heartbeat h;
    int beat = msg_heartbeat_decode(&h, zmq_msg_data(payload), zmq_msg_size(payload), r == 0);
    if (beat == -1)
        return 1;
    if (!h.busy)
        p->still[r] = 0;
    else if (h.progress != p->progress[r] || !p->still[r])
        p->still[r] = p->seen[r];
    p->progress[r] = h.progress;
    if (beat < 0)
        return 1;
    if (h.carries == MSG_BEAT_CONTROL) { /* the others hear rank 0's host */
        atomic_store(&p->rt->from_rank0.pause, h.pause);
        if (h.stop) /* never unset: a stop is for good */
            atomic_store(&p->rt->from_rank0.stop, true);
        atomic_store(&p->rt->from_rank0.lr_scale, h.lr_scale);
    } else if (h.carries == MSG_BEAT_TRAFFIC) { /* rank 0 hears the sender's traffic */
        if (p->rt->rank != 0)
            return 1;
        singa_stats_put(p->rt->stats, r, h.rows, h.nrows);
        singa_stats_put_workers(p->rt->stats, r, h.workers, h.nworkers);
    }
    return 2;
}

static bool paused(const rt_ctx *rt) { return rt->control && atomic_load(&rt->control->pause); }

double rt_peers_tick(rt_peers *p)
{
    const rt_ctx *rt = p->rt;
    double t = rt_now(), interval = rt->c->heartbeat_timeout / 5;
    if (t >= p->next_beat) {
        msg_heartbeat own = {.progress = atomic_load(&rt->progress),
                             .busy = atomic_load(&rt->busy) > 0 && !paused(rt)}; /* paused, it waits for the host */
        uint8_t life[MSG_HEARTBEAT_MAX], more[MSG_HEARTBEAT_MAX];
        size_t nlife = msg_heartbeat_encode(&own, life), nmore = 0;
        if (rt->rank) {
            own.carries = MSG_BEAT_TRAFFIC;
            own.nrows = singa_stats_own(rt->stats, own.rows, MSG_HEARTBEAT_ROWS);
            own.nworkers = singa_stats_own_workers(rt->stats, own.workers, MSG_HEARTBEAT_WORKERS);
        } else if (rt->control) {
            own.carries = MSG_BEAT_CONTROL;
            own.pause = atomic_load(&rt->control->pause);
            own.stop = atomic_load(&rt->control->stop);
            own.lr_scale = atomic_load(&rt->control->lr_scale);
        }
        if (own.carries != MSG_BEAT_LIFE)
            nmore = msg_heartbeat_encode(&own, more);
        for (int r = 0; r < rt->nprocs; r++) {
            msg m = {.type = MSG_HEARTBEAT, .src = {ENT_STUB, 0, 0, (uint16_t)rt->rank}, .dst = {ENT_STUB, 0, 0, (uint16_t)r}};
            bool with = nmore && (rt->rank == 0 || r == 0);
            rt_peers_send(p, r, &m, with ? more : life, with ? nmore : nlife);
        }
        p->next_beat = t + interval;
    }
    double wait = p->next_beat - t;
    for (int r = 0; r < rt->nprocs; r++)
        if (p->closed[r] && !p->dead[r] && p->closed[r] + CLOSED_WAIT - t < wait)
            wait = p->closed[r] + CLOSED_WAIT - t;
    return wait > 0 ? wait : 0;
}

/* A hung process still listens: it learns why the job ends, so its stuck thread gives up. */
static void tell_hung(rt_peers *p, int r, double timeout)
{
    char why[256];
    int n = snprintf(why, sizeof why, "rank %d found this process (rank %d) hung: busy for %g s (heartbeat_timeout) "
                     "without progress while the others waited", p->rt->rank, r, timeout);
    msg m = {.type = MSG_STOP, .src = {ENT_STUB, 0, 0, (uint16_t)p->rt->rank}, .dst = {ENT_STUB, 0, 0, (uint16_t)r}};
    msg_send(p->dealer[r], NULL, &m, why, (size_t)n);
    p->hung[r] = true;
}

int rt_peers_lost(rt_peers *p, rt_loss *why)
{
    double t = rt_now();
    int events = 0;
    size_t len = sizeof events;
    /* what a peer sent before its connection closed is read first: its last words may be the
     * job's end */
    bool unread = zmq_getsockopt(p->router, ZMQ_EVENTS, &events, &len) == 0 && (events & ZMQ_POLLIN);
    double timeout = p->rt->c->heartbeat_timeout;
    unsigned own = atomic_load(&p->rt->progress);
    if (atomic_load(&p->rt->busy) > 0 || paused(p->rt))
        p->idle = 0;
    else if (own != p->own || !p->idle)
        p->idle = t;
    p->own = own;
    for (int r = 0; r < p->rt->nprocs; r++) {
        if (r == p->rt->rank || p->dead[r])
            continue;
        if (p->gone[r])
            *why = RT_LOST_BEFORE;
        else if (t - p->seen[r] > timeout)
            *why = RT_LOST_SILENT;
        else if (p->closed[r] && t - p->closed[r] >= CLOSED_WAIT && !unread)
            *why = RT_LOST_CLOSED;
        else if (p->still[r] && t - p->still[r] > timeout && p->idle && t - p->idle > timeout &&
                 t - p->seen[r] < timeout / 2) /* still beating: one that fell silent is stopped, not hung */
            *why = RT_LOST_HUNG;
        else
            continue;
        if (*why == RT_LOST_HUNG && p->dealer[r])
            tell_hung(p, r, timeout);
        p->dead[r] = true;
        if (!p->gone[r]) /* else counted when the list came */
            singa_stats_lost(p->rt->stats, r);
        return r;
    }
    return -1;
}
