/* The stub: one per process, the only thread that routes.  Workers and servers of the process
 * talk to its ROUTER over inproc; other processes' stubs over tcp (peers.c).  It sums the
 * gradients of a group's local workers before sending one update per slice (SINGA's
 * aggregation, unless the workers added them up themselves: history.c), tells those workers once
 * every slice of a param is fresh, puts and gets the params before training starts, and stops
 * every thread when the workers are done or one thread fails.  What it accepts, from whom and
 * how, is its table of legs (protocol.h); a message no leg takes is dropped and counted.
 *
 * The end of a job: each process tells rank 0 once its workers are done; rank 0 then fetches the
 * newest values for worker 0.0's final test and hands its result to every process with the
 * stop.  A failure anywhere, or a process gone silent in a synchronous job, stops every process
 * with the reason; an asynchronous job goes on without a lost worker group.
 *
 * With several server groups (Hogwild) no group alone holds the model, so before that fetch rank
 * 0 runs the final flush (server.c): every server still alive sends its slices' outstanding
 * changes to their masters, which report once all are in; worker 0.0 then reads each slice from
 * its master.  A server group lost with its process cannot flush: it is left out (its changes
 * since its last sync are lost), its slices gathered by a stand-in, and a loss during the flush
 * only narrows whom the masters wait for, so nothing hangs on it.
 *
 * Rank 0's end of the job (stub_end), a machine of its own:
 *   TRAINING --every process done, one server group-------> FETCHING  get_all(0)
 *   TRAINING --every process done, several server groups--> FLUSHING  flush_begin: a flush word
 *                                                                      to every server alive
 *   FLUSHING --a server's report, or its process lost-----> FLUSHING  (narrowed; flush_lost)
 *   FLUSHING --the last report------------------------------> FETCHING each slice from its flush
 *                                                                      master (fetch_flushed)
 *   FETCHING --worker 0.0's FINISHED-------------------------> the stop of every thread
 * A process other than rank 0 stays in TRAINING until rank 0's FINISHED or a STOP.
 *
 * A group's fetch (stub_fetch), what its gets are for; one at a time:
 *   NONE --every thread said hello----------------> START  READY to every worker of the group here
 *   NONE --worker 0.0's GET (a test, cut net)-----> TEST   READY to worker 0.0 alone
 *   NONE --rank 0 enters FETCHING (group 0)-------> FINAL  READY to worker 0.0 alone
 *   any  --the last slice's reply-----------------> NONE
 *
 * A process that rejoined (SINGA_REJOIN) tells its servers of every loss: a Hogwild server's fetch
 * of the newest values (server.c) must not wait for a lost group.
 *
 * Checkpoints: worker 0.0's request to every server passes through here like any message; rank
 * 0's stub notes which answers worker 0.0 waits for and answers itself (lost) for a server whose
 * process is lost, so an asynchronous job that goes on without it does not wait forever. */
#include <cblas.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/bridge.h"
#include "runtime/compress.h"
#include "runtime/protocol.h"
#include "runtime/runtime.h"

typedef enum { END_TRAINING, END_FLUSHING, END_FETCHING } stub_end;
typedef enum { FETCH_NONE, FETCH_START, FETCH_TEST, FETCH_FINAL } stub_fetch;
/* Rank 0, per server: worker 0.0's checkpoint request passed on (ASKED) until the server's
 * answer, or the stub's own when the server's process is lost, goes back (IDLE). */
typedef enum { CKPT_IDLE, CKPT_ASKED } stub_ckpt;

/* What the stub keeps of a worker group with workers in this process. */
typedef struct stub_group {
    int nlocal;            /* its workers here; 0 for a group elsewhere */
    int *arrived;          /* per param: local gradients summed this step */
    int *step;
    float **agg;           /* per param: the gradient the others are summed into */
    msg_loan *lent;        /* per param: agg's slices lent to ZeroMQ on their way to other processes */
    size_t (*span)[2];     /* per param: the elements its workers here compute (all, unless cut) */
    int *slices_left;      /* per param: slices whose update is not yet answered */
    int gets_left;         /* slices to fetch before the group may train */
    stub_fetch fetch;      /* what they are for */
} stub_group;

struct rt_stub {
    rt_ctx *rt;
    singa_trace_buf *trace; /* this thread's, or NULL */
    void *router;
    rt_peers *peers;     /* the other processes, when there are any */
    stub_group *groups;
    int hellos, threads;   /* threads here, and how many said hello */
    int done;              /* workers here that finished training */
    bool *proc_done;       /* rank 0: processes whose workers are all done (or lost) */
    int procs_done;
    stub_end end;
    bool stop;
    /* Rank 0, several server groups: the final flush. */
    uint64_t *flush_live;  /* per server id: the server groups taking part and not lost */
    bool *flush_wait;      /* per server (group * nservers_per_group + id): its report is awaited */
    int flush_left;
    int *fetch_from;       /* per slice: the server group its final values come from, -1 once in */
    /* Rank 0: the checkpoint worker 0.0 waits for, and each server's part (group * per + id). */
    int ckpt_step;
    uint8_t *ckpt;         /* stub_ckpt */
    rt_bound *bound;       /* cluster.staleness: the steps the groups finished (NULL: unbounded) */
    /* cluster.compress: an update to another process encoded, an answer from one decoded. */
    float *unpacked;
    uint8_t *packed;
};

int rt_stub_create(rt_ctx *rt, singa_err *err)
{
    rt_stub *s = calloc(1, sizeof *s);
    if (!s || !(s->groups = calloc((size_t)rt->c->nworker_groups, sizeof *s->groups)) ||
        !(s->proc_done = calloc((size_t)rt->nprocs, sizeof *s->proc_done)))
        goto oom;
    rt->stub = s;
    s->rt = rt;
    s->threads = rt->nworkers + rt->nservers;
    for (int i = 0; i < rt->nworkers; i++)
        s->groups[rt->workers[i].group].nlocal++;
    for (int g = 0; g < rt->c->nworker_groups; g++) {
        stub_group *sg = &s->groups[g];
        if (!sg->nlocal)
            continue;
        size_t n = (size_t)rt->nparams;
        if (!(sg->arrived = calloc(n, sizeof *sg->arrived)) || !(sg->step = calloc(n, sizeof *sg->step)) ||
            !(sg->agg = calloc(n, sizeof *sg->agg)) || !(sg->lent = calloc(n, sizeof *sg->lent)) ||
            !(sg->slices_left = calloc(n, sizeof *sg->slices_left)) || !(sg->span = calloc(n, sizeof *sg->span)))
            goto oom;
    }
    if (rt->c->compress.kind != SINGA_COMPRESS_NONE && rt_compress_buffers(rt, &s->unpacked, &s->packed) < 0)
        goto oom;
    for (int i = 0; i < rt->nworkers; i++) { /* a cut group has one here, the one that sends */
        const rt_worker *w = &rt->workers[i];
        const singa_parts *parts = singa_job_train_net(w->job)->parts;
        for (int k = 0; k < rt->nparams; k++) {
            size_t *span = s->groups[w->group].span[k];
            span[0] = 0;
            span[1] = rt->params[k].size;
            if (parts)
                singa_parts_span(parts, w->params[k], &span[0], &span[1]);
        }
    }
    const singa_cluster *c = rt->c;
    if (rt->rank == 0 && c->nserver_groups > 1 &&
        (!(s->flush_live = calloc((size_t)c->nservers_per_group, sizeof *s->flush_live)) ||
         !(s->flush_wait = calloc((size_t)(c->nserver_groups * c->nservers_per_group), sizeof *s->flush_wait)) ||
         !(s->fetch_from = calloc((size_t)rt->nslices, sizeof *s->fetch_from))))
        goto oom;
    size_t nservers = (size_t)(c->nserver_groups * c->nservers_per_group);
    if (rt->rank == 0 && !(s->ckpt = calloc(nservers, sizeof *s->ckpt)))
        goto oom;
    if (c->staleness >= 0 && !(s->bound = rt_bound_new(c->nworker_groups, rt->resume_step)))
        goto oom;
    return 0;
oom:
    if (s && !rt->stub) {
        free(s->groups);
        free(s);
    }
    return singa_err_set(err, "out of memory");
}

void rt_stub_free(rt_stub *s)
{
    if (!s)
        return;
    for (int g = 0; g < s->rt->c->nworker_groups; g++) {
        free(s->groups[g].arrived);
        free(s->groups[g].step);
        free(s->groups[g].agg);
        free(s->groups[g].lent);
        free(s->groups[g].slices_left);
        free(s->groups[g].span);
    }
    free(s->unpacked);
    free(s->packed);
    free(s->groups);
    free(s->proc_done);
    free(s->flush_live);
    free(s->flush_wait);
    free(s->fetch_from);
    free(s->ckpt);
    rt_bound_free(s->bound);
    free(s);
}

/* A message's other end: a thread, named with its process when it lives in another one. */
static void peer_name(char *buf, size_t len, const msg_addr *a, int rank)
{
    if (a->kind == ENT_STUB)
        snprintf(buf, len, "rank %d", a->proc);
    else if (a->proc == rank)
        snprintf(buf, len, "%s %d.%d", a->kind == ENT_WORKER ? "worker" : "server", a->group, a->id);
    else
        snprintf(buf, len, "%s %d.%d (rank %d)", a->kind == ENT_WORKER ? "worker" : "server", a->group, a->id, a->proc);
}

/* The bytes a message delivers, counted the same however its values travel: its header and
 * payload frame, or the values it hands over by address in this process (a worker's gradient,
 * an update to a server here), or already in place in the group's replica (a server's reply to a
 * group sharing its values, the stub telling a worker that its param is fresh).  Without this a
 * reply's two legs disagreed by the values' size: the server's counted them, the worker's not. */
static size_t carried(const rt_ctx *rt, const msg *m, size_t nbytes)
{
    size_t values = 0;
    if (m->flags & MSG_F_PACKED)
        return MSG_HEADER_BYTES + nbytes;
    if (m->src.kind == ENT_WORKER && m->type == MSG_UPDATE && (m->flags & MSG_F_PTR))
        values = m->param >= 0 && m->param < rt->nparams ? rt->params[m->param].size : 0; /* the whole gradient */
    else if (m->flags & MSG_F_PTR)
        values = m->len;
    else if (m->src.kind == ENT_SERVER && (m->type == MSG_UPDATE_REPLY || m->type == MSG_GET_REPLY))
        values = m->len; /* in the frame, or written into the shared replica */
    else if (m->src.kind == ENT_STUB && m->dst.kind == ENT_WORKER && m->type == MSG_UPDATE_REPLY)
        values = m->param >= 0 && m->param < rt->nparams ? rt->params[m->param].size : 0;
    return MSG_HEADER_BYTES + (values ? values * sizeof(float) : nbytes);
}

/* Sends m where it is addressed: a thread here, or the stub of its process. */
static void route(rt_stub *s, const msg *m, const void *payload, size_t nbytes)
{
    char id[32], peer[32];
    peer_name(peer, sizeof peer, &m->dst, s->rt->rank);
    int pending = m->type == MSG_UPDATE || m->type == MSG_GET ? 1 : 0;
    singa_stats_count(s->rt->stats, msg_type_name(m->type), peer, true, carried(s->rt, m, nbytes), pending, 0);
    if (m->dst.proc != s->rt->rank) {
        singa_stats_link(s->rt->stats, m->dst.proc, true, MSG_HEADER_BYTES + nbytes);
        if (s->peers)
            rt_peers_send(s->peers, m->dst.proc, m, payload, nbytes);
        return;
    }
    rt_identity(id, sizeof id, m->dst.kind, m->dst.group, m->dst.id);
    msg_send(s->router, id, m, payload, nbytes);
}

static msg_addr stub_addr(const rt_stub *s, int group)
{
    return (msg_addr){ENT_STUB, (uint16_t)group, 0, (uint16_t)s->rt->rank};
}

static msg_addr server_addr(const rt_ctx *rt, int group, int id)
{
    return (msg_addr){ENT_SERVER, (uint16_t)group, (uint16_t)id, (uint16_t)rt_server_proc(rt, group, id)};
}

/* Sends a message to every local worker of group g. */
static void to_workers(rt_stub *s, int g, msg m)
{
    for (int i = 0; i < s->rt->nworkers; i++) {
        rt_worker *w = &s->rt->workers[i];
        if (w->group != g)
            continue;
        m.dst = (msg_addr){ENT_WORKER, (uint16_t)g, (uint16_t)w->id, (uint16_t)s->rt->rank};
        route(s, &m, NULL, 0);
    }
}

/* Group g finished `step` (INT_MAX: it left the bound); the workers here hear when the floor rises. */
static void bound_note(rt_stub *s, int g, int step)
{
    if (!rt_bound_note(s->bound, g, step))
        return;
    msg m = {.type = MSG_GROUP_STEP, .src = stub_addr(s, 0), .step = rt_bound_floor(s->bound)};
    for (int h = 0; h < s->rt->c->nworker_groups; h++)
        if (s->groups[h].nlocal)
            to_workers(s, h, m);
}

/* Sends m to every server here. */
static void to_servers(rt_stub *s, msg m, const void *payload, size_t nbytes)
{
    for (int g = 0; g < s->rt->c->nserver_groups; g++)
        for (int j = 0; j < s->rt->c->nservers_per_group; j++)
            if (rt_server_proc(s->rt, g, j) == s->rt->rank) {
                m.dst = server_addr(s->rt, g, j);
                route(s, &m, payload, nbytes);
            }
}

static void stop_all(rt_stub *s, const char *why)
{
    msg m = {.type = MSG_STOP, .src = stub_addr(s, 0)};
    size_t n = why ? strlen(why) : 0;
    for (int i = 0; i < s->rt->nworkers; i++) {
        rt_worker *w = &s->rt->workers[i];
        m.dst = (msg_addr){ENT_WORKER, (uint16_t)w->group, (uint16_t)w->id, (uint16_t)s->rt->rank};
        route(s, &m, why, n);
        struct singa_parts *parts = singa_job_train_net(w->job)->parts;
        if (why && parts) /* a worker may wait at a bridge, not at its socket */
            singa_parts_abort(parts, why);
    }
    to_servers(s, m, why, n);
    s->stop = true;
}

/* Sends m to the stub of every other process. */
static void to_peers(rt_stub *s, msg m, const void *payload, size_t nbytes)
{
    for (int r = 0; r < s->rt->nprocs; r++)
        if (r != s->rt->rank) {
            m.dst = (msg_addr){ENT_STUB, 0, 0, (uint16_t)r};
            route(s, &m, payload, nbytes);
        }
}

/* A failure here ends the job everywhere, each process naming where it began. */
static void fail_everywhere(rt_stub *s, const singa_err *e, bool lost)
{
    char why[sizeof e->msg + 16];
    rt_fail_as(s->rt, e, lost);
    stop_all(s, e->msg);
    snprintf(why, sizeof why, "rank %d: %s", s->rt->rank, e->msg);
    to_peers(s, (msg){.type = MSG_STOP, .src = stub_addr(s, 0), .lost = lost}, why, strlen(why));
}

/* A slice's values in group g's copy here. */
static float *replica_at(rt_ctx *rt, int g, const rt_slice *sl)
{
    return rt->replica[g][sl->param]->data.data + sl->offset;
}

/* Asks group g's servers for every slice. */
static void get_all(rt_stub *s, int g, stub_fetch why)
{
    rt_ctx *rt = s->rt;
    for (int k = 0; k < rt->nslices; k++) {
        msg m = {.type = MSG_GET, .src = stub_addr(s, g),
                 .dst = server_addr(rt, singa_cluster_server_group(rt->c, g), rt->slices[k].server), .slice = k,
                 .step = rt->resume_step};
        route(s, &m, NULL, 0);
    }
    s->groups[g].gets_left = rt->nslices;
    s->groups[g].fetch = why;
}

/* A put or an update to a server: the values' address when it is here, else the values (none
 * when len is 0), lent from `loan` when one is given (else copied). */
static void send_slice(rt_stub *s, msg *m, float *values, size_t len, msg_loan *loan)
{
    bool here = m->dst.proc == s->rt->rank;
    const singa_compress *c = &s->rt->c->compress;
    if (!here && len && m->type == MSG_UPDATE && c->kind != SINGA_COMPRESS_NONE) { /* encoded, then copied */
        float *const *residual = s->rt->residual ? s->rt->residual[m->src.group] : NULL;
        m->flags |= MSG_F_VALUES | MSG_F_PACKED;
        rt_compress_encode(c, values, len, residual ? residual[m->slice] + m->offset : NULL, s->unpacked, s->packed);
        route(s, m, s->packed, rt_compress_bytes(c, len));
        return;
    }
    m->flags |= here ? MSG_F_PTR : MSG_F_VALUES;
    m->ptr = here ? (uint64_t)(uintptr_t)values : 0;
    m->loan = here || !len ? NULL : loan;
    route(s, m, here || !len ? NULL : values, here ? 0 : len * sizeof(float));
}

/* Puts (the first group of each server group) and gets every slice, once every thread is here. */
static void start(rt_stub *s)
{
    rt_ctx *rt = s->rt;
    int per = rt->c->nworker_groups / rt->c->nserver_groups;
    for (int g = 0; g < rt->c->nworker_groups; g++) {
        stub_group *sg = &s->groups[g];
        if (!sg->nlocal)
            continue;
        int server_group = singa_cluster_server_group(rt->c, g);
        for (int k = 0; k < rt->nslices; k++) {
            const rt_slice *sl = &rt->slices[k];
            msg m = {.type = MSG_PUT, .src = stub_addr(s, g), .dst = server_addr(rt, server_group, sl->server), .slice = k,
                     .step = rt->resume_step};
            /* Sharded, a process holds the initial values of its own servers' slices only. */
            if (g % per == 0 && (!rt->c->shard_params || m.dst.proc == rt->rank))
                send_slice(s, &m, replica_at(rt, g, sl), sl->len, NULL);
        }
        get_all(s, g, FETCH_START);
    }
}

/* A value reply for group g: copies its values (those of [offset, offset + len) of the slice)
 * unless they are already in place; sharded, only those of the elements its workers here hold.
 * Halves decode straight into place; int8 changes (in blocks) are decoded whole, then added. */
static int take_values(rt_stub *s, int g, const msg *m, zmq_msg_t *payload)
{
    const rt_slice *sl = &s->rt->slices[m->slice];
    singa_compress c = rt_compress_of_values(&s->rt->c->compress);
    const uint8_t *in = zmq_msg_data(payload);
    bool packed = m->flags & MSG_F_PACKED;
    if (!(m->flags & MSG_F_VALUES))
        return 0;
    if (m->offset > sl->len || m->len > sl->len - m->offset ||
        zmq_msg_size(payload) != (packed ? rt_compress_bytes(&c, m->len) : m->len * sizeof(float)))
        return -1;
    size_t a = sl->offset + m->offset, b = a + m->len;
    if (s->rt->c->shard_params) {
        const size_t *span = s->groups[g].span[sl->param];
        a = a > span[0] ? a : span[0];
        b = b < span[1] ? b : span[1];
    }
    if (a >= b) /* an empty payload's data may be NULL */
        return 0;
    float *to = replica_at(s->rt, g, sl) + (a - sl->offset);
    size_t skip = a - sl->offset - m->offset, n = b - a;
    if (!packed) {
        memcpy(to, (const float *)(const void *)in + skip, n * sizeof(float));
        return 0;
    }
    if (c.kind != SINGA_COMPRESS_INT8)
        return rt_compress_decode(&c, in + rt_compress_bytes(&c, skip), rt_compress_bytes(&c, n), to, n);
    if (!s->unpacked || rt_compress_decode(&c, in, zmq_msg_size(payload), s->unpacked, m->len) < 0)
        return -1;
    rt_compress_add(to, s->unpacked + skip, n); /* changes to what it holds */
    return 0;
}

/* What group g's updates of `step` tell the other processes: it is the group's last, or the
 * host asked for a checkpoint at the start of the next; and the servers: a checkpoint starts the
 * next step, so the values go back exact. */
static uint8_t step_flags(const rt_ctx *rt, int g, int step)
{
    bool asked = rt_ckpt_due(rt, step + 1);
    bool ckpt = rt->c->nworker_groups == 1 && asked; /* several: on_ckpt_word */
    bool exact = asked || (rt->nworkers && singa_job_ckpt_fires(rt->workers[0].job, step + 1));
    return (rt_last_step(rt, g, step) ? MSG_F_LAST : 0) | (ckpt ? MSG_F_CKPT : 0) | (exact ? MSG_F_EXACT : 0);
}

/* A local worker's gradient of param k: summed with the others of its group here; once all are
 * in, one update per slice goes to the group's servers, with the part of the slice computed here
 * (of a cut group's net, the rest of this process's gradient is zero; it may be nothing, and
 * the server still waits for that word).  Those in other processes get the sum lent, not
 * copied: its workers write it again only in their next backward pass, after they hear the
 * param is fresh, which on_update_reply tells them once ZeroMQ has given it back. */
static void on_worker_update(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    rt_ctx *rt = s->rt;
    int g = m->src.group, k = m->param;
    stub_group *sg = &s->groups[g];
    float *grad = (float *)(uintptr_t)m->ptr;
    size_t n = rt->params[k].size;
    if (sg->arrived[k]++ == 0) {
        sg->agg[k] = grad;
        sg->step[k] = m->step;
    } else if (!rt->params[k].hist) { /* else every worker added its own (history.c) */
        cblas_saxpy((int)n, 1.0f, grad, 1, sg->agg[k], 1);
    }
    if (sg->arrived[k] < sg->nlocal)
        return;
    sg->arrived[k] = 0;
    sg->slices_left[k] = rt->params[k].nslices;
    int server_group = singa_cluster_server_group(rt->c, g);
    for (int i = 0; i < rt->params[k].nslices; i++) {
        int idx = rt->params[k].first_slice + i;
        const rt_slice *sl = &rt->slices[idx];
        size_t a = sl->offset > sg->span[k][0] ? sl->offset : sg->span[k][0];
        size_t b = sl->offset + sl->len < sg->span[k][1] ? sl->offset + sl->len : sg->span[k][1];
        if (b < a)
            a = b = sl->offset;
        msg u = {.type = MSG_UPDATE, .flags = step_flags(rt, g, sg->step[k]),
                 .src = stub_addr(s, g), .dst = server_addr(rt, server_group, sl->server), .slice = idx,
                 .step = sg->step[k], .count = (uint32_t)sg->nlocal, .offset = a - sl->offset, .len = b - a};
        send_slice(s, &u, sg->agg[k] + a, b - a, &sg->lent[k]);
    }
}

static void on_update_reply(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    rt_ctx *rt = s->rt;
    int g = m->dst.group;
    const rt_slice *sl = &rt->slices[m->slice];
    stub_group *sg = &s->groups[g];
    if (sg->slices_left[sl->param] <= 0 || take_values(s, g, m, payload) < 0) {
        singa_stats_drop(rt->stats);
        return;
    }
    if (m->flags & MSG_F_LAST) /* another process of the group stops after this step */
        rt_stop_before(rt, g, m->step);
    if (m->flags & MSG_F_CKPT) /* or checkpoints before the next */
        rt_ckpt_at(rt, m->step);
    if (--sg->slices_left[sl->param] > 0)
        return;
    /* Every slice's answer is in, so each server had the last byte of its update: the frames
     * lent are closed or about to be. */
    msg_loan_wait(&sg->lent[sl->param]);
    to_workers(s, g, (msg){.type = MSG_UPDATE_REPLY, .src = stub_addr(s, g), .param = sl->param,
                           .step = sg->step[sl->param]});
}

static void on_get_reply(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    int g = m->dst.group;
    stub_group *sg = &s->groups[g];
    if (sg->fetch == FETCH_FINAL && s->rt->c->nserver_groups > 1) { /* each slice once, from where it was asked */
        if (s->fetch_from[m->slice] != m->src.group) {
            singa_stats_drop(s->rt->stats);
            return;
        }
        s->fetch_from[m->slice] = -1;
    }
    if (sg->gets_left <= 0 || take_values(s, g, m, payload) < 0) { /* nothing asked for: no write */
        singa_stats_drop(s->rt->stats);
        return;
    }
    if (--sg->gets_left > 0)
        return;
    msg ready = {.type = MSG_READY, .src = stub_addr(s, g), .dst = {ENT_WORKER, (uint16_t)g, 0, (uint16_t)s->rt->rank}};
    if (sg->fetch == FETCH_START)
        to_workers(s, g, ready);
    else
        route(s, &ready, NULL, 0);
    sg->fetch = FETCH_NONE;
}

static bool proc_lost(const rt_stub *s, int r)
{
    return s->peers && rt_peers_dead(s->peers, r);
}

/* Asks for slice k's final values from the group that gathered its final deltas. */
static void fetch_flushed(rt_stub *s, int k)
{
    rt_ctx *rt = s->rt;
    int j = rt->slices[k].server;
    s->fetch_from[k] = msg_flush_master(k, rt->c->nserver_groups, s->flush_live[j]);
    msg m = {.type = MSG_GET, .src = stub_addr(s, 0), .dst = server_addr(rt, s->fetch_from[k], j), .slice = k,
             .step = rt->resume_step};
    route(s, &m, NULL, 0);
}

/* Every report is in: worker 0.0's final values come from each slice's flush master. */
static void flush_done(rt_stub *s)
{
    s->end = END_FETCHING;
    s->groups[0].gets_left = s->rt->nslices;
    s->groups[0].fetch = FETCH_FINAL;
    for (int k = 0; k < s->rt->nslices; k++)
        fetch_flushed(s, k);
}

static void send_flush(rt_stub *s, int g, int j)
{
    uint8_t mask[MSG_FLUSH_MASK_BYTES];
    msg_flush_mask_encode(s->flush_live[j], mask);
    msg m = {.type = MSG_FLUSH, .src = stub_addr(s, 0), .dst = server_addr(s->rt, g, j)};
    route(s, &m, mask, sizeof mask);
}

/* Every server whose process lives flushes; a lost one is left out, and the others learn so. */
static void flush_begin(rt_stub *s)
{
    rt_ctx *rt = s->rt;
    int nsg = rt->c->nserver_groups, per = rt->c->nservers_per_group;
    s->end = END_FLUSHING;
    for (int j = 0; j < per; j++)
        for (int g = 0; g < nsg; g++) {
            int r = rt_server_proc(rt, g, j);
            if (proc_lost(s, r)) {
                rt_log(rt, "the final flush goes on without server %d.%d (rank %d, lost): its changes since its "
                             "last sync are lost", g, j, r);
                continue;
            }
            s->flush_live[j] |= 1ull << g;
            s->flush_wait[g * per + j] = true;
            s->flush_left++;
        }
    for (int j = 0; j < per; j++)
        for (int g = 0; g < nsg; g++)
            if (s->flush_wait[g * per + j])
                send_flush(s, g, j);
    if (s->flush_left == 0)
        flush_done(s);
}

/* A server's report: its final deltas are all in. */
static void on_flush_report(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    int i = m->src.group * s->rt->c->nservers_per_group + m->src.id;
    if (!s->flush_wait[i]) {
        singa_stats_drop(s->rt->stats);
        return;
    }
    s->flush_wait[i] = false;
    if (--s->flush_left == 0)
        flush_done(s);
}

/* Process r was lost during the flush: its servers are waited for no more, the masters still
 * waiting hear whom they wait for, and a final value asked of it is asked of a stand-in. */
static void flush_lost(rt_stub *s, int r)
{
    rt_ctx *rt = s->rt;
    int nsg = rt->c->nserver_groups, per = rt->c->nservers_per_group;
    if (!s->flush_live || s->end == END_TRAINING) /* no flush, or not yet */
        return;
    for (int j = 0; j < per; j++) {
        bool narrowed = false;
        for (int g = 0; g < nsg; g++)
            if ((s->flush_live[j] >> g & 1) && rt_server_proc(rt, g, j) == r) {
                s->flush_live[j] &= ~(1ull << g);
                narrowed = true;
                if (s->flush_wait[g * per + j]) {
                    s->flush_wait[g * per + j] = false;
                    s->flush_left--;
                }
                rt_log(rt, "server %d.%d (rank %d) was lost during the final flush: what it had not sent is lost", g,
                         j, r);
            }
        for (int g = 0; narrowed && s->end == END_FLUSHING && g < nsg; g++)
            if (s->flush_wait[g * per + j])
                send_flush(s, g, j);
    }
    if (s->end == END_FETCHING) {
        for (int k = 0; k < rt->nslices; k++)
            if (s->fetch_from[k] >= 0 && rt_server_proc(rt, s->fetch_from[k], rt->slices[k].server) == r)
                fetch_flushed(s, k);
    } else if (s->flush_left == 0) {
        flush_done(s);
    }
}

/* Rank 0: process r's workers are done (or lost); once every process's are, worker 0.0 (always
 * here) gets the newest values for its final test, after the flush when there is one. */
static void proc_done(rt_stub *s, int r)
{
    if (s->proc_done[r])
        return;
    s->proc_done[r] = true;
    if (++s->procs_done < s->rt->nprocs)
        return;
    if (s->rt->c->nserver_groups > 1) {
        flush_begin(s);
        return;
    }
    s->end = END_FETCHING;
    get_all(s, 0, FETCH_FINAL);
}

/* Every worker here trained (or none lives here). */
static void local_done(rt_stub *s)
{
    if (s->rt->rank == 0)
        proc_done(s, 0);
    else
        route(s, &(msg){.type = MSG_DONE, .src = stub_addr(s, 0), .dst = {ENT_STUB, 0, 0, 0}}, NULL, 0);
}

/* Rank 0: answers worker 0.0 for server i (group * per + id), lost before it wrote its shard. */
static void ckpt_lost(rt_stub *s, int i)
{
    s->ckpt[i] = CKPT_IDLE;
    msg m = {.type = MSG_CKPT_REPLY, .src = stub_addr(s, 0), .dst = {ENT_WORKER, 0, 0, 0}, .step = s->ckpt_step,
             .server = i, .lost = true};
    route(s, &m, NULL, 0);
}

static void on_lost(rt_stub *s, int r, rt_loss why)
{
    rt_ctx *rt = s->rt;
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
    if (rt_loss_ends_job(rt, r)) {
        fail_everywhere(s, &e, true);
        return;
    }
    rt_log(rt, "%s; the job goes on without it", e.msg);
    if (rt->launch.rejoin && rt->c->nserver_groups > 1) /* a server here may wait for r's values */
        to_servers(s, (msg){.type = MSG_LOST, .src = stub_addr(s, 0)}, NULL, 0);
    for (int g = 0; s->bound && g < rt->c->nworker_groups; g++)
        if (rt_worker_proc(rt, g, 0) == r) { /* a lost group leaves the bound */
            rt_log(rt, "worker group %d leaves the staleness bound at step %d", g, rt_bound_done(s->bound, g));
            bound_note(s, g, INT_MAX);
        }
    if (rt->rank == 0) {
        int per = rt->c->nservers_per_group;
        for (int i = 0; i < rt->c->nserver_groups * per; i++)
            if (s->ckpt[i] == CKPT_ASKED && rt_server_proc(rt, i / per, i % per) == r)
                ckpt_lost(s, i);
        rt_ckpt_name_incomplete(rt, r);
        flush_lost(s, r); /* when the flush is on; else proc_done may begin it, without r */
        proc_done(s, r);
    }
}

/* Rank 0: a lost process asks to rejoin (peers.c checked who it is).  Its workers train on, so
 * the job waits for them again; once every process is done it is too late. */
static void on_rejoin(rt_stub *s)
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
    if (rt_peers_admit(s->peers, &e) < 0) {
        rt_log(rt, "rank %d (%s) asked to rejoin, but: %s", r, role, e.msg);
        return;
    }
    if (s->proc_done[r]) {
        s->proc_done[r] = false;
        s->procs_done--;
    }
    rt_log(rt, "rank %d (%s) rejoined at step %d", r, role, step);
}

/* The legs of the stub's protocol (protocol.h): the checks beyond a row's columns, then the
 * handlers, which act on a message that passed them. */

static bool is_lead(const msg_addr *a)
{
    return a->kind == ENT_WORKER && a->group == 0 && a->id == 0;
}

static bool server_exists(const rt_ctx *rt, const msg_addr *a)
{
    return a->group < rt->c->nserver_groups && a->id < rt->c->nservers_per_group &&
           a->proc == rt_server_proc(rt, a->group, a->id);
}

static int server_index(const rt_ctx *rt, const msg_addr *a)
{
    return a->group * rt->c->nservers_per_group + a->id;
}

static bool server_here(const rt_stub *s, const msg *m)
{
    return server_exists(s->rt, &m->dst) && m->dst.proc == s->rt->rank;
}

static bool at_rank0(const rt_stub *s, const msg *m)
{
    return s->rt->rank == 0;
}

static bool from_rank0(const rt_stub *s, const msg *m)
{
    return m->src.proc == 0;
}

static bool from_lead(const rt_stub *s, const msg *m)
{
    return is_lead(&m->src);
}

static bool slice_ok(const rt_stub *s, const msg *m)
{
    return m->slice >= 0 && m->slice < s->rt->nslices;
}

/* A server's answer for a group with workers here. */
static bool reply_ok(const rt_stub *s, const msg *m)
{
    return m->dst.group < s->rt->c->nworker_groups && s->groups[m->dst.group].nlocal && slice_ok(s, m);
}

static bool final_values_ok(const rt_stub *s, const msg *m)
{
    return m->src.proc == 0 && slice_ok(s, m);
}

/* A worker's gradient, by address, of a param of its group. */
static bool gradient_ok(const rt_stub *s, const msg *m)
{
    return (m->flags & MSG_F_PTR) && m->ptr && m->src.group < s->rt->c->nworker_groups &&
           s->groups[m->src.group].nlocal && m->param >= 0 && m->param < s->rt->nparams;
}

/* Worker 0.0's fetch for a test, once the one before is in. */
static bool test_fetch_ok(const rt_stub *s, const msg *m)
{
    return is_lead(&m->src) && s->groups[0].gets_left == 0;
}

static bool flush_report_ok(const rt_stub *s, const msg *m)
{
    return s->rt->rank == 0 && s->end == END_FLUSHING && m->src.group < s->rt->c->nserver_groups &&
           m->src.id < s->rt->c->nservers_per_group;
}

/* Rank 0's word to flush. */
static bool flush_word_ok(const rt_stub *s, const msg *m)
{
    return server_here(s, m) && m->src.proc == 0;
}

/* Worker 0.0's checkpoint request from rank 0, to a server here. */
static bool ckpt_ok(const rt_stub *s, const msg *m)
{
    return server_here(s, m) && is_lead(&m->src) && m->src.proc == 0;
}

static bool ckpt_word_ok(const rt_stub *s, const msg *m)
{
    return s->rt->c->nworker_groups > 1 && m->step > 0 && (m->src.kind == ENT_STUB ? m->src.proc == 0 : is_lead(&m->src));
}

/* Rank 0: worker 0.0's checkpoint request, to a server anywhere. */
static bool ckpt_request_ok(const rt_stub *s, const msg *m)
{
    return s->rt->rank == 0 && is_lead(&m->src) && server_exists(s->rt, &m->dst);
}

/* Rank 0: a server's answer to the checkpoint request worker 0.0 waits for. */
static bool ckpt_reply_ok(const rt_stub *s, const msg *m)
{
    const rt_ctx *rt = s->rt;
    if (rt->rank != 0 || !is_lead(&m->dst) || !server_exists(rt, &m->src))
        return false;
    int i = server_index(rt, &m->src);
    return m->server == i && m->step == s->ckpt_step && s->ckpt[i] == CKPT_ASKED && !m->lost;
}

/* The metrics of a worker to the leader here of a group training whole copies. */
static bool worker_metrics_ok(const rt_stub *s, const msg *m)
{
    const rt_ctx *rt = s->rt;
    const singa_cluster *c = rt->c;
    return !rt->cut && m->dst.group < c->nworker_groups && m->dst.id == 0 &&
           rt_worker_proc(rt, m->dst.group, 0) == rt->rank && m->src.group == m->dst.group && m->src.id > 0 &&
           m->src.id < c->nworkers_per_group && m->src.proc == rt_worker_proc(rt, m->src.group, m->src.id);
}

/* The parts here that a bridge's message from another process is for, or NULL: the sender is
 * the worker sending for its process in the same group, and the addressee the one here. */
static singa_parts *bridge_parts(const rt_stub *s, const msg *m)
{
    const rt_ctx *rt = s->rt;
    const msg_addr *a = &m->src, *b = &m->dst;
    if (a->kind != ENT_WORKER || a->group != b->group || a->group >= rt->c->nworker_groups ||
        a->id >= rt->c->nworkers_per_group || !rt_sends(rt, a->group, a->id) || a->proc == rt->rank ||
        a->proc != rt_worker_proc(rt, a->group, a->id))
        return NULL;
    for (int i = 0; i < rt->nworkers; i++)
        if (rt->workers[i].group == b->group && rt->workers[i].id == b->id)
            return singa_job_train_net(rt->workers[i].job)->parts;
    return NULL;
}

static bool bridge_ok(const rt_stub *s, const msg *m)
{
    return bridge_parts(s, m) != NULL;
}

/* A group's step, from its leader here or from the stub of its leader's process. */
static bool group_step_ok(const rt_stub *s, const msg *m)
{
    const rt_ctx *rt = s->rt;
    return s->bound && m->src.group < rt->c->nworker_groups &&
           (m->src.kind == ENT_STUB || m->src.id == 0) && m->src.proc == rt_worker_proc(rt, m->src.group, 0);
}

/* A thread's message for another process. */
static bool relay_ok(const rt_stub *s, const msg *m)
{
    return m->dst.proc < s->rt->nprocs && !(m->flags & MSG_F_PTR);
}

/* Passes a message received from elsewhere on with its payload frame itself, not a copy, when
 * its values lie where floats may: servers read them in place, and ZeroMQ may put a small frame
 * from tcp anywhere in its receive buffer (such a frame is copied, which is cheap). */
static void forward(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    msg f = *m;
    void *data = zmq_msg_data(payload);
    size_t len = zmq_msg_size(payload);
    f.frame = len && (uintptr_t)data % _Alignof(float) == 0 ? payload : NULL;
    route(s, &f, len ? data : NULL, len);
}

/* Every thread here said hello: the params are put and fetched. */
static void on_hello(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    if (++s->hellos < s->threads)
        return;
    if (rt_failed(s->rt)) { /* before every thread could hear it */
        stop_all(s, s->rt->err.msg);
        return;
    }
    start(s);
    if (s->rt->nworkers == 0)
        local_done(s);
}

static void on_abort(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    singa_err e;
    singa_err_set(&e, "%.*s", (int)zmq_msg_size(payload), (const char *)zmq_msg_data(payload));
    fail_everywhere(s, &e, false);
}

static void on_stop(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    singa_err e;
    size_t len = zmq_msg_size(payload);
    singa_err_set(&e, "%.*s", (int)len, len ? (const char *)zmq_msg_data(payload) : "another process stopped the job");
    rt_fail_as(s->rt, &e, m->lost);
    stop_all(s, e.msg);
}

static void on_worker_done(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    if (++s->done == s->rt->nworkers)
        local_done(s);
}

static void on_proc_done(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    proc_done(s, m->src.proc);
}

static void on_group_step(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    if (!remote)
        to_peers(s, (msg){.type = MSG_GROUP_STEP, .src = stub_addr(s, m->src.group), .step = m->step}, NULL, 0);
    bound_note(s, m->src.group, m->step);
}

static void on_test_fetch(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    get_all(s, 0, FETCH_TEST);
}

static void on_ckpt_request(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    int i = server_index(s->rt, &m->dst);
    s->ckpt_step = m->step;
    s->ckpt[i] = CKPT_ASKED;
    if (m->dst.proc != s->rt->rank && proc_lost(s, m->dst.proc)) /* it will never answer */
        ckpt_lost(s, i);
    else
        route(s, m, NULL, 0);
}

/* The host's checkpoint in a job of several groups: from worker 0.0 to rank 0's stub, which
 * tells every other process's. */
static void on_ckpt_word(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    rt_ckpt_at(s->rt, m->step);
    if (!remote)
        to_peers(s, (msg){.type = MSG_CKPT, .src = stub_addr(s, 0), .step = m->step}, NULL, 0);
}

static void on_ckpt_reply(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    s->ckpt[server_index(s->rt, &m->src)] = CKPT_IDLE;
    route(s, m, NULL, 0);
}

static void on_bridge(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    singa_parts *parts = bridge_parts(s, m);
    const void *data = zmq_msg_data(payload);
    size_t len = zmq_msg_size(payload);
    singa_metrics metrics;
    int rc = m->type == MSG_BRIDGE_PROFILE ? singa_parts_profile_put(parts, m->src.proc, data, len)
             : m->type != MSG_BRIDGE_METRICS
                 ? singa_parts_deliver(parts, m->src.proc, m->layer, m->type == MSG_BRIDGE ? -1 : m->edge, m->step,
                                       data, len)
             : msg_metrics_decode(&metrics, data, len) == 0
                 ? singa_parts_deliver_metrics(parts, m->src.proc, m->step, &metrics)
                 : -1;
    if (rc < 0)
        singa_stats_drop(s->rt->stats);
}

/* The job ended well: rank 0 hands the final values, slice by slice, and its result (the
 * payload) to every other process, whose script then sees what rank 0's sees. */
static void on_finished(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    rt_ctx *rt = s->rt;
    const void *result = zmq_msg_data(payload);
    size_t len = zmq_msg_size(payload);
    for (int k = 0; !remote && !rt->c->shard_params && k < rt->nslices; k++) /* sharded: no process holds them all */
        to_peers(s, (msg){.type = MSG_FINAL_VALUES, .flags = MSG_F_VALUES, .src = stub_addr(s, 0), .slice = k},
                 replica_at(rt, 0, &rt->slices[k]), rt->slices[k].len * sizeof(float));
    if (!remote)
        to_peers(s, (msg){.type = MSG_FINISHED, .src = stub_addr(s, 0)}, result, len);
    else if (msg_result_decode(&s->rt->final, result, len) < 0) {
        singa_err e;
        singa_err_set(&e, "rank 0 sent a malformed result at the end of the job");
        rt_fail(s->rt, &e);
    }
    stop_all(s, NULL);
}

static void on_final_values(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    const rt_slice *sl = &s->rt->slices[m->slice];
    size_t len = zmq_msg_size(payload);
    if (len == sl->len * sizeof(float))
        memcpy(s->rt->final_params[sl->param]->data.data + sl->offset, zmq_msg_data(payload), len);
    else
        singa_stats_drop(s->rt->stats);
}

/* A group leader's record in another process. */
static void on_metric(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    singa_record r;
    singa_metrics metrics;
    if (msg_record_decode(&r, &metrics, zmq_msg_data(payload), zmq_msg_size(payload)) == 0)
        rt_record(s->rt, &r, m->of_step);
    else
        singa_stats_drop(s->rt->stats);
}

typedef struct stub_leg {
    uint8_t type, to, from, via;
    bool (*check)(const rt_stub *s, const msg *m);
    void (*handle)(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote);
} stub_leg;

#define LEG(type, to, from, via, check, handle) {type, to, from, via, check, handle},
static const stub_leg legs[] = {RT_STUB_LEGS(LEG)};
#undef LEG

/* The first leg whose columns match m, or NULL. */
static const stub_leg *leg_of(const rt_stub *s, const msg *m, bool remote)
{
    int via = remote ? RT_PEER : m->dst.proc == s->rt->rank ? RT_HERE : RT_OUT;
    for (size_t i = 0; i < sizeof legs / sizeof *legs; i++) {
        const stub_leg *l = &legs[i];
        if ((l->type == 0 || l->type == m->type) && (l->to >> m->dst.kind & 1) && (l->from >> m->src.kind & 1) &&
            (l->via & via))
            return l;
    }
    return NULL;
}

/* A message received counts on its row, and an answer takes its request off the pending. */
static void count_received(rt_stub *s, const msg *m, size_t len)
{
    char peer[32];
    peer_name(peer, sizeof peer, &m->src, s->rt->rank);
    singa_stats_count(s->rt->stats, msg_type_name(m->type), peer, false, carried(s->rt, m, len), 0, 0);
    if (m->type == MSG_UPDATE_REPLY || m->type == MSG_GET_REPLY)
        singa_stats_count(s->rt->stats, msg_type_name(m->type == MSG_UPDATE_REPLY ? MSG_UPDATE : MSG_GET), peer,
                       true, 0, -1, 0);
}

/* Acts on a message from a thread here or (remote) from another process's stub through its leg;
 * one no leg takes is dropped. */
static void handle(rt_stub *s, const msg *m, zmq_msg_t *payload, bool remote)
{
    count_received(s, m, zmq_msg_size(payload));
    if (remote)
        singa_stats_link(s->rt->stats, m->src.proc, false, MSG_HEADER_BYTES + zmq_msg_size(payload));
    const stub_leg *leg = leg_of(s, m, remote);
    if (!leg || (leg->check && !leg->check(s, m))) {
        singa_stats_drop(s->rt->stats);
        return;
    }
    leg->handle(s, m, payload, remote);
}

/* Receives one message from a socket with something to read. */
static int receive(rt_stub *s, bool remote)
{
    char id[32];
    msg m;
    zmq_msg_t payload;
    int rc = remote ? rt_peers_recv(s->peers, &m, &payload) : msg_recv(s->router, true, id, sizeof id, &m, &payload);
    if (rc == 0) {
        double t0 = rt_now();
        handle(s, &m, &payload, remote);
        if (m.step > 0) /* not the life of the processes (heartbeats, hellos) */
            singa_trace_step(s->trace, m.step);
        singa_trace_span(s->trace, "stub", msg_type_name(m.type), t0, rt_now());
    }
    else if (rc == 3)
        on_rejoin(s);
    else if (rc == 1)
        singa_stats_drop(s->rt->stats);
    zmq_msg_close(&payload);
    return rc < 0 ? -1 : 0;
}

/* The router the threads here connect to. */
static int open_router(rt_stub *s, singa_err *e)
{
    const rt_ctx *rt = s->rt;
    int one = 1, zero = 0;
    s->router = zmq_socket(rt->zmq, ZMQ_ROUTER);
    if (!s->router || zmq_setsockopt(s->router, ZMQ_LINGER, &zero, sizeof zero) < 0 ||
        zmq_setsockopt(s->router, ZMQ_ROUTER_MANDATORY, &one, sizeof one) < 0 ||
        zmq_setsockopt(s->router, ZMQ_SNDHWM, &zero, sizeof zero) < 0 ||
        zmq_setsockopt(s->router, ZMQ_RCVHWM, &zero, sizeof zero) < 0 || zmq_bind(s->router, rt->endpoint) < 0) {
        singa_err_set(e, "stub: cannot listen on %s: %s", rt->endpoint, zmq_strerror(zmq_errno()));
        if (s->router)
            zmq_close(s->router);
        return -1;
    }
    return 0;
}

void *rt_stub_main(void *arg)
{
    rt_ctx *rt = arg;
    rt_stub *s = rt->stub;
    singa_err e;
    s->trace = singa_trace_thread(rt->trace, "stub");
    if (open_router(s, &e) < 0) {
        rt_fail(rt, &e);
        return NULL;
    }
    if (rt->nprocs > 1 && rt_peers_open(rt, &s->peers, &e) < 0) {
        rt_fail(rt, &e); /* the threads hear it once all have said hello */
        rt_peers_close(s->peers);
        s->peers = NULL;
    }
    rt_announce(rt, s->peers ? rt_peers_endpoint(s->peers, rt->rank) : NULL);
    if (s->threads == 0)
        s->stop = true;
    zmq_pollitem_t *it = calloc((size_t)rt->nprocs + 1, sizeof *it);
    if (!it) {
        singa_err_set(&e, "out of memory");
        rt_fail(rt, &e);
        s->stop = true;
    }
    while (!s->stop) {
        it[0] = (zmq_pollitem_t){s->router, 0, ZMQ_POLLIN, 0};
        /* other processes are heard once every thread here is, so none of their messages finds
         * its addressee missing */
        bool remote = s->peers && s->hellos == s->threads;
        int n = 1 + (remote ? rt_peers_items(s->peers, it + 1) : 0);
        long timeout = s->peers ? (long)(rt_peers_tick(s->peers) * 1000) + 1 : -1;
        if (zmq_poll(it, n, timeout) < 0 && zmq_errno() != EINTR)
            break;
        if ((it[0].revents & ZMQ_POLLIN) && receive(s, false) < 0)
            break;
        if (remote && !s->stop && (it[1].revents & ZMQ_POLLIN) && receive(s, true) < 0)
            break;
        if (remote)
            rt_peers_watch(s->peers, it + 1);
        rt_loss why;
        for (int r; remote && !s->stop && (r = rt_peers_lost(s->peers, &why)) >= 0;)
            on_lost(s, r, why);
    }
    free(it);
    rt_peers_close(s->peers);
    zmq_close(s->router);
    return NULL;
}
