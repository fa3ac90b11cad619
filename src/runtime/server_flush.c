/* The final flush (once every worker is done, so nobody reads values in place any more): rank 0's
 * stub tells every server that takes part (its process is not lost) which groups do.  A server
 * sends each slice's flush master (its master, or a stand-in when the master was lost) the whole
 * change the master has not seen: value - last answer, or value - snapshot when a delta is still
 * out to that master (it is on the same ordered path, so the master counts it first).  A flush
 * master adds its pending deltas at once, then every delta as it comes, and tells rank 0 once it
 * has one from every other group taking part; rank 0 then reads each slice from it.
 *
 * The server's flush (srv_flush), beside the code that moves it:
 *     SERVING  --rank 0's first word: final deltas leave (srv_on_flush_word)--> FLUSHING
 *     FLUSHING --a later word narrows the groups; a final delta comes------> FLUSHING
 *     FLUSHING --every final delta awaited is in: rank 0 hears it---------> FLUSHED
 *   Flushing, the sync is over: an answer still due is not merged. */
#include <stdlib.h>
#include <string.h>

#include "runtime/server.h"

/* The flush: a slice's final delta leaves for its flush master; the flush master itself adds the
 * deltas still pending, whose senders wait for no answer any more. */
static int flush_slice(rt_server *s, srv_slice *x)
{
    const rt_ctx *rt = s->rt;
    size_t n = rt->slices[x->slice].len;
    int nsg = rt->c->nserver_groups, master = x->slice % nsg;
    int to = msg_flush_master(x->slice, nsg, s->flush_groups);
    if (to == s->group) {
        if (x->delta_from) {
            for (size_t i = 0; i < n; i++)
                x->data[i] += x->delta[i];
            memset(x->delta, 0, n * sizeof(float));
            x->delta_from = 0;
        }
        return 0;
    }
    if (!x->master && !(x->master = malloc(n * sizeof(float))))
        return -1;
    /* What `to` has not seen: a delta out to the master gets there first, one out to a lost
     * master never does.  A slice never put (its worker group lost at once) changed nothing. */
    const float *seen = x->sync != SYNC_IDLE && to == master ? x->snap : x->last;
    for (size_t i = 0; i < n; i++)
        x->master[i] = x->ready ? x->data[i] - seen[i] : 0.0f;
    msg m = {.type = MSG_FLUSH, .flags = MSG_F_VALUES, .src = srv_self(s),
             .dst = {ENT_SERVER, (uint16_t)to, (uint16_t)s->id, (uint16_t)rt_server_proc(rt, to, s->id)},
             .slice = x->slice};
    rt_send(s->sock, &m, x->master, n * sizeof(float));
    return 0;
}

/* Tells rank 0 once every slice this server gathers has the final delta of every other group
 * still alive (a group lost during the flush is not waited for; what it sent counts). */
static void report_flushed(rt_server *s)
{
    int nsg = s->rt->c->nserver_groups;
    uint64_t others = s->flush_live & ~(1ull << s->group);
    if (s->flush != SRV_FLUSHING)
        return;
    for (int i = 0; i < s->nsl; i++)
        if (msg_flush_master(s->sl[i].slice, nsg, s->flush_groups) == s->group && (others & ~s->sl[i].flushed_from))
            return;
    s->flush = SRV_FLUSHED;
    msg m = {.type = MSG_FLUSH, .src = srv_self(s), .dst = {ENT_STUB, 0, 0, 0}};
    rt_send(s->sock, &m, NULL, 0);
}

/* Rank 0's word to flush; a later one narrows the groups. */
int srv_on_flush_word(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    if (m->src.proc != 0 || zmq_msg_size(payload) != MSG_FLUSH_MASK_BYTES)
        return 1;
    uint64_t groups = msg_flush_mask_decode(zmq_msg_data(payload));
    if (!(groups >> s->group & 1))
        return 1;
    if (s->flush != SRV_SERVING) {
        s->flush_live &= groups;
    } else {
        s->flush = SRV_FLUSHING;
        s->flush_groups = s->flush_live = groups;
        for (int i = 0; i < s->nsl; i++)
            if (flush_slice(s, &s->sl[i]) < 0)
                return singa_err_set(err, "server %d.%d: out of memory", s->group, s->id);
    }
    report_flushed(s);
    return 0;
}

/* Another server's final delta, which may come before rank 0's word: it is sent only once every
 * worker is done. */
int srv_on_final_delta(rt_server *s, srv_slice *x, const msg *m, zmq_msg_t *payload, singa_err *err)
{
    int nsg = s->rt->c->nserver_groups;
    size_t n = s->rt->slices[x->slice].len;
    int from = m->src.group;
    if (from >= nsg || from == s->group || m->src.id != s->id || s->flush == SRV_FLUSHED ||
        (x->flushed_from >> from & 1) || !(m->flags & MSG_F_VALUES) || zmq_msg_size(payload) != n * sizeof(float) ||
        (s->flush != SRV_SERVING && msg_flush_master(x->slice, nsg, s->flush_groups) != s->group))
        return 1;
    const float *v = zmq_msg_data(payload);
    for (size_t i = 0; i < n; i++)
        x->data[i] += v[i];
    x->flushed_from |= 1ull << from;
    report_flushed(s);
    return 0;
}
