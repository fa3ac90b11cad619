/* Server groups (Hogwild) keep their own copies (server.h): a server that is not a slice's
 * master sends the master its delta since the last sync every sync_freq updates and merges the
 * master's answer as value = master + (value - value when the delta left).  Values a worker group here reads in
 * place change only while that group waits for its update, so a delta or an answer that arrives
 * in between waits for the slice's next update.  A master with no such reader (values not shared,
 * or their group past its last step) adds a delta and answers it at once: a master whose group is
 * done early would otherwise leave the others training its slices unsynced to the end.
 *
 * A slice's sync (srv_sync, servers that are not its master), beside the code that moves it:
 *     IDLE     --sync_freq updates: the delta leaves (srv_sync_groups)--> OUT
 *     OUT      --the master's answer (on_sync)---------------------------> ANSWERED
 *     ANSWERED --its next update merges it (srv_sync_groups)-------------> IDLE */
#include <stdlib.h>
#include <string.h>

#include "runtime/server.h"

float *srv_copy_of(const float *src, float **dst, size_t n)
{
    if (!*dst && !(*dst = malloc(n * sizeof(float))))
        return NULL;
    memcpy(*dst, src, n * sizeof(float));
    return *dst;
}

/* Master: the slice's values to every server group whose delta was added. */
void srv_answer_deltas(rt_server *s, srv_slice *x, uint64_t groups)
{
    const rt_ctx *rt = s->rt;
    for (int g = 0; g < rt->c->nserver_groups; g++)
        if (groups >> g & 1) {
            msg m = {.type = MSG_SYNC_REPLY, .flags = MSG_F_VALUES, .src = srv_self(s),
                     .dst = {ENT_SERVER, (uint16_t)g, (uint16_t)s->id, (uint16_t)rt_server_proc(rt, g, s->id)},
                     .slice = x->slice};
            rt_send(s->sock, &m, x->data, rt->slices[x->slice].len * sizeof(float));
        }
}

/* After an update, while the group that reads the values in place waits: deltas from other
 * server groups are added and answered (master), the master's answer is merged (others), and a
 * new delta leaves every sync_freq updates. */
int srv_sync_groups(rt_server *s, srv_slice *x)
{
    const rt_ctx *rt = s->rt;
    size_t n = rt->slices[x->slice].len;
    int nsg = rt->c->nserver_groups, master = x->slice % nsg;
    if (nsg == 1)
        return 0;
    if (s->group == master) {
        if (!x->delta_from)
            return 0;
        for (size_t i = 0; i < n; i++)
            x->data[i] += x->delta[i];
        memset(x->delta, 0, n * sizeof(float));
        srv_answer_deltas(s, x, x->delta_from);
        x->delta_from = 0;
        return 0;
    }
    if (x->sync == SYNC_ANSWERED) {
        for (size_t i = 0; i < n; i++) {
            x->data[i] = x->master[i] + (x->data[i] - x->snap[i]);
            x->last[i] = x->master[i];
        }
        x->sync = SYNC_IDLE;
    }
    if (x->sync != SYNC_IDLE || ++x->since < rt->c->sync_freq)
        return 0;
    if (!srv_copy_of(x->data, &x->snap, n) || (!x->master && !(x->master = malloc(n * sizeof(float)))))
        return -1;
    for (size_t i = 0; i < n; i++) /* the delta, built in `master` until the answer overwrites it */
        x->master[i] = x->data[i] - x->last[i];
    msg m = {.type = MSG_SYNC, .flags = MSG_F_VALUES, .src = srv_self(s),
             .dst = {ENT_SERVER, (uint16_t)master, (uint16_t)s->id, (uint16_t)rt_server_proc(rt, master, s->id)},
             .slice = x->slice};
    rt_send(s->sock, &m, x->master, n * sizeof(float));
    x->since = 0;
    x->sync = SYNC_OUT;
    return 0;
}

/* The server groups in other processes that hold this server's slices and are not known lost.
 * Never none while the job runs: worker 0.0 is in rank 0, so the loss of a process holding a server
 * of worker group 0's server group ends the job (rt_loss_ends_job); that group's servers are live
 * and none is in a process that rejoined. */
static uint64_t live_groups(const rt_server *s)
{
    const rt_ctx *rt = s->rt;
    uint64_t live = 0;
    for (int g = 0; g < rt->c->nserver_groups; g++) {
        int p = rt_server_proc(rt, g, s->id);
        if (p != rt->rank && !singa_stats_rank_lost(rt->stats, p))
            live |= 1ull << g;
    }
    return live;
}

/* SINGA_REJOIN: the checkpoint's values are stale, so before its workers start a slice asks a
 * live server group in another process for the newest (a MSG_SYNC without values): its master,
 * or, when the master is in this process or its process is known lost, every live group, the
 * first answer giving the values and each taking this master back into that group's sync rounds
 * (answer_fetch).  A group that is lost before it answers is asked no more (on_lost_word). */
void srv_fetch_newest(rt_server *s, srv_slice *x)
{
    const rt_ctx *rt = s->rt;
    int nsg = rt->c->nserver_groups, master = x->slice % nsg, at = rt_server_proc(rt, master, s->id);
    uint64_t ask = live_groups(s);
    if (at != rt->rank && (ask >> master & 1))
        ask = 1ull << master;
    else if (at != rt->rank)
        rt_log(s->rt, "server %d.%d: slice %d's master, group %d (rank %d), is lost: its newest values from the "
                      "live groups instead", s->group, s->id, x->slice, master, at);
    for (int g = 0; g < nsg; g++)
        if (ask >> g & 1) {
            msg m = {.type = MSG_SYNC, .src = srv_self(s),
                     .dst = {ENT_SERVER, (uint16_t)g, (uint16_t)s->id, (uint16_t)rt_server_proc(rt, g, s->id)},
                     .slice = x->slice};
            rt_send(s->sock, &m, NULL, 0);
        }
    x->fetch_asked = ask;
}

/* A group that rejoins asks for the newest values (fetch_newest): they leave at once, read while
 * a reader here may read them in place.  When it is the slice's master, this group's sync with it
 * starts afresh from them: a delta out to its lost incarnation, or an answer from it not yet
 * merged, is dropped (the changes stay in value - last, so the next delta carries them). */
static int answer_fetch(rt_server *s, srv_slice *x, int g)
{
    int nsg = s->rt->c->nserver_groups;
    if (g == s->group || !x->ready)
        return 1;
    if (g == x->slice % nsg) {
        if (!srv_copy_of(x->data, &x->last, s->rt->slices[x->slice].len))
            return -1;
        x->sync = SYNC_IDLE;
        x->since = 0;
    }
    srv_answer_deltas(s, x, 1ull << g);
    return 0;
}

static int on_sync(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload)
{
    size_t n = s->rt->slices[x->slice].len;
    const float *v = zmq_msg_data(payload);
    if (m->type == MSG_SYNC && !(m->flags & MSG_F_VALUES) && m->src.group < s->rt->c->nserver_groups)
        return answer_fetch(s, x, m->src.group);
    if (!(m->flags & MSG_F_VALUES) || zmq_msg_size(payload) != n * sizeof(float) ||
        m->src.group >= s->rt->c->nserver_groups)
        return 1;
    if (m->type == MSG_SYNC) {
        if (x->slice % s->rt->c->nserver_groups != s->group || s->flush == SRV_FLUSHED)
            return 1;
        if (s->flush != SRV_SERVING || (x->ready && (x->shared_group < 0 || s->reader_done))) { /* nobody reads in place */
            for (size_t i = 0; i < n; i++)
                x->data[i] += v[i];
            if (s->flush == SRV_SERVING) /* in the flush, the final delta follows and nobody waits */
                srv_answer_deltas(s, x, 1ull << m->src.group);
            return 0;
        }
        if (!x->delta && !(x->delta = calloc(n, sizeof(float))))
            return 1;
        for (size_t i = 0; i < n; i++)
            x->delta[i] += v[i];
        x->delta_from |= 1ull << m->src.group;
        return 0;
    }
    if (x->fetch_asked >> m->src.group & 1) { /* fetch_newest's: the first answer gives the values */
        x->fetch_asked &= ~(1ull << m->src.group);
        if (!x->ready) {
            memcpy(x->data, v, n * sizeof(float));
            memcpy(x->last, v, n * sizeof(float));
            srv_serve_asked(s, x);
        }
        return 0;
    }
    if (s->flush != SRV_SERVING) /* the final delta counted everything since the snapshot */
        return 0;
    if (x->sync != SYNC_OUT)
        return 1;
    memcpy(x->master, v, n * sizeof(float));
    x->sync = SYNC_ANSWERED;
    return 0;
}

int srv_on_sync_msg(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    if (s->outer)
        return srv_outer_on_sync(s, x, m, payload, err);
    return on_sync(s, x, m, payload);
}

/* This process rejoined and its stub found another lost: a slice whose fetch now waits for lost
 * groups alone asks the live ones. */
int srv_on_lost_word(rt_server *s, srv_slice *unused, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    if (m->src.proc != s->rt->rank)
        return 1;
    uint64_t live = live_groups(s);
    for (int i = 0; i < s->nsl; i++) {
        srv_slice *x = &s->sl[i];
        if (x->ready || !x->fetch_asked)
            continue;
        x->fetch_asked &= live;
        if (!x->fetch_asked)
            srv_fetch_newest(s, x);
    }
    return 0;
}
