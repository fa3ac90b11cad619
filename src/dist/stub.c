/* The stub: one per process, the only thread that routes.  Workers and servers of the process
 * talk to its ROUTER over inproc.  It sums the gradients of a group's local workers before
 * sending one update per slice (SINGA's aggregation), tells those workers once every slice of a
 * param is fresh, puts and gets the params before training starts, and stops every thread when
 * the workers are done or one thread fails. */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/dist.h"

/* What the stub keeps of a worker group with workers in this process. */
typedef struct stub_group {
    int nlocal;            /* its workers here; 0 for a group elsewhere */
    int *arrived;          /* per param: local gradients summed this step */
    int *step;
    float **agg;           /* per param: the gradient the others are summed into */
    int *slices_left;      /* per param: slices whose update is not yet answered */
    int gets_left;         /* slices to fetch before the group may train */
} stub_group;

struct dist_stub {
    dist_rt *rt;
    void *router;
    stub_group *groups;
    int hellos, threads;   /* threads here, and how many said hello */
    int done;              /* workers here that finished training */
    bool final_fetch;      /* fetching the newest values for worker 0.0's final test */
    bool stop;
};

int dist_stub_create(dist_rt *rt, singa_err *err)
{
    dist_stub *s = calloc(1, sizeof *s);
    if (!s || !(s->groups = calloc((size_t)rt->c->nworker_groups, sizeof *s->groups)))
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
            !(sg->agg = calloc(n, sizeof *sg->agg)) || !(sg->slices_left = calloc(n, sizeof *sg->slices_left)))
            goto oom;
    }
    return 0;
oom:
    if (s && !rt->stub)
        free(s);
    return singa_err_set(err, "out of memory");
}

void dist_stub_free(dist_stub *s)
{
    if (!s)
        return;
    for (int g = 0; g < s->rt->c->nworker_groups; g++) {
        free(s->groups[g].arrived);
        free(s->groups[g].step);
        free(s->groups[g].agg);
        free(s->groups[g].slices_left);
    }
    free(s->groups);
    free(s);
}

static void peer_name(char *buf, size_t len, const msg_addr *a)
{
    if (a->kind == ENT_STUB)
        snprintf(buf, len, "rank %d", a->proc);
    else
        snprintf(buf, len, "%s %d.%d", a->kind == ENT_WORKER ? "worker" : "server", a->group, a->id);
}

/* Sends m to the local thread it is addressed to. */
static void deliver(dist_stub *s, const msg *m, const void *payload, size_t nbytes)
{
    char id[32], peer[32];
    dist_identity(id, sizeof id, m->dst.kind, m->dst.group, m->dst.id);
    peer_name(peer, sizeof peer, &m->dst);
    int pending = m->type == MSG_UPDATE || m->type == MSG_GET ? 1 : 0;
    dist_stats_count(s->rt->stats, msg_type_name(m->type), peer, true, MSG_HEADER_BYTES + nbytes, pending, 0);
    msg_send(s->router, id, m, payload, nbytes);
}

static msg_addr stub_addr(const dist_stub *s, int group)
{
    return (msg_addr){ENT_STUB, (uint16_t)group, 0, (uint16_t)s->rt->rank};
}

static msg_addr server_addr(const dist_rt *rt, int group, int id)
{
    return (msg_addr){ENT_SERVER, (uint16_t)group, (uint16_t)id, (uint16_t)dist_server_proc(rt, group, id)};
}

/* Sends a message to every local worker of group g. */
static void to_workers(dist_stub *s, int g, msg m)
{
    for (int i = 0; i < s->rt->nworkers; i++) {
        dist_worker *w = &s->rt->workers[i];
        if (w->group != g)
            continue;
        m.dst = (msg_addr){ENT_WORKER, (uint16_t)g, (uint16_t)w->id, (uint16_t)s->rt->rank};
        deliver(s, &m, NULL, 0);
    }
}

static void stop_all(dist_stub *s, const char *why)
{
    msg m = {.type = MSG_STOP, .src = stub_addr(s, 0)};
    size_t n = why ? strlen(why) : 0;
    for (int i = 0; i < s->rt->nworkers; i++) {
        dist_worker *w = &s->rt->workers[i];
        m.dst = (msg_addr){ENT_WORKER, (uint16_t)w->group, (uint16_t)w->id, (uint16_t)s->rt->rank};
        deliver(s, &m, why, n);
    }
    for (int g = 0; g < s->rt->c->nserver_groups; g++)
        for (int j = 0; j < s->rt->c->nservers_per_group; j++)
            if (dist_server_proc(s->rt, g, j) == s->rt->rank) {
                m.dst = server_addr(s->rt, g, j);
                deliver(s, &m, why, n);
            }
    s->stop = true;
}

/* A slice's values in group g's copy here. */
static float *replica_at(dist_rt *rt, int g, const dist_slice *sl)
{
    return rt->replica[g][sl->param]->data.data + sl->offset;
}

/* Asks group g's servers for every slice. */
static void get_all(dist_stub *s, int g)
{
    dist_rt *rt = s->rt;
    for (int k = 0; k < rt->nslices; k++) {
        msg m = {.type = MSG_GET, .src = stub_addr(s, g),
                 .dst = server_addr(rt, singa_cluster_server_group(rt->c, g), rt->slices[k].server), .slice = k};
        deliver(s, &m, NULL, 0);
    }
    s->groups[g].gets_left = rt->nslices;
}

/* Puts (the first group of each server group) and gets every slice, once every thread is here. */
static void start(dist_stub *s)
{
    dist_rt *rt = s->rt;
    int per = rt->c->nworker_groups / rt->c->nserver_groups;
    for (int g = 0; g < rt->c->nworker_groups; g++) {
        stub_group *sg = &s->groups[g];
        if (!sg->nlocal)
            continue;
        int server_group = singa_cluster_server_group(rt->c, g);
        for (int k = 0; k < rt->nslices; k++) {
            const dist_slice *sl = &rt->slices[k];
            msg m = {.type = MSG_PUT, .flags = MSG_F_PTR, .src = stub_addr(s, g), .dst = server_addr(rt, server_group, sl->server),
                     .slice = k, .ptr = (uint64_t)(uintptr_t)replica_at(rt, g, sl)};
            if (g % per == 0)
                deliver(s, &m, NULL, 0);
        }
        get_all(s, g);
    }
}

/* A value reply for group g: copies the values unless they are already in place. */
static int take_values(dist_stub *s, int g, const msg *m, zmq_msg_t *payload)
{
    const dist_slice *sl = &s->rt->slices[m->slice];
    if (!(m->flags & MSG_F_VALUES))
        return 0;
    if (zmq_msg_size(payload) != sl->len * sizeof(float))
        return -1;
    memcpy(replica_at(s->rt, g, sl), zmq_msg_data(payload), sl->len * sizeof(float));
    return 0;
}

/* A local worker's gradient of param k: summed with the others of its group here; once all are
 * in, one update per slice goes to the group's servers. */
static void on_worker_update(dist_stub *s, const msg *m)
{
    dist_rt *rt = s->rt;
    int g = m->src.group, k = m->slice;
    stub_group *sg = &s->groups[g];
    float *grad = (float *)(uintptr_t)m->ptr;
    size_t n = rt->params[k].size;
    if (sg->arrived[k]++ == 0) {
        sg->agg[k] = grad;
        sg->step[k] = m->step;
    } else {
        cblas_saxpy((int)n, 1.0f, grad, 1, sg->agg[k], 1);
    }
    if (sg->arrived[k] < sg->nlocal)
        return;
    sg->arrived[k] = 0;
    sg->slices_left[k] = rt->params[k].nslices;
    int server_group = singa_cluster_server_group(rt->c, g);
    for (int i = 0; i < rt->params[k].nslices; i++) {
        int idx = rt->params[k].first_slice + i;
        const dist_slice *sl = &rt->slices[idx];
        msg u = {.type = MSG_UPDATE, .flags = MSG_F_PTR, .src = stub_addr(s, g),
                 .dst = server_addr(rt, server_group, sl->server), .slice = idx, .step = sg->step[k],
                 .count = (uint32_t)sg->nlocal, .ptr = (uint64_t)(uintptr_t)(sg->agg[k] + sl->offset)};
        deliver(s, &u, NULL, 0);
    }
}

static void on_update_reply(dist_stub *s, const msg *m, zmq_msg_t *payload)
{
    dist_rt *rt = s->rt;
    int g = m->dst.group;
    const dist_slice *sl = &rt->slices[m->slice];
    stub_group *sg = &s->groups[g];
    if (take_values(s, g, m, payload) < 0 || sg->slices_left[sl->param] <= 0) {
        dist_stats_drop(rt->stats);
        return;
    }
    if (--sg->slices_left[sl->param] == 0)
        to_workers(s, g, (msg){.type = MSG_UPDATE_REPLY, .src = stub_addr(s, g), .slice = sl->param,
                               .step = sg->step[sl->param]});
}

static void on_get_reply(dist_stub *s, const msg *m, zmq_msg_t *payload)
{
    int g = m->dst.group;
    stub_group *sg = &s->groups[g];
    if (take_values(s, g, m, payload) < 0 || sg->gets_left <= 0) {
        dist_stats_drop(s->rt->stats);
        return;
    }
    if (--sg->gets_left > 0)
        return;
    msg ready = {.type = MSG_READY, .src = stub_addr(s, g), .dst = {ENT_WORKER, (uint16_t)g, 0, (uint16_t)s->rt->rank}};
    if (s->final_fetch)
        deliver(s, &ready, NULL, 0);
    else
        to_workers(s, g, ready);
}

/* Every worker here trained: worker 0.0 (always here, in process 0) gets the newest values
 * for its final test. */
static void on_all_done(dist_stub *s)
{
    s->final_fetch = true;
    get_all(s, 0);
}

/* Whether a message from a thread of this process is one the stub can act on. */
static bool valid(const dist_stub *s, const msg *m)
{
    const dist_rt *rt = s->rt;
    const singa_cluster *c = rt->c;
    if (m->dst.kind == ENT_STUB && (m->type == MSG_UPDATE_REPLY || m->type == MSG_GET_REPLY))
        return m->dst.group < c->nworker_groups && s->groups[m->dst.group].nlocal && m->slice >= 0 &&
               m->slice < rt->nslices;
    if (m->src.kind == ENT_WORKER && m->type == MSG_UPDATE)
        return (m->flags & MSG_F_PTR) && m->ptr && m->src.group < c->nworker_groups &&
               s->groups[m->src.group].nlocal && m->slice >= 0 && m->slice < rt->nparams;
    if (m->dst.kind == ENT_SERVER && (m->type == MSG_SYNC || m->type == MSG_SYNC_REPLY))
        return m->dst.group < c->nserver_groups && m->dst.id < c->nservers_per_group;
    return m->type == MSG_HELLO || m->type == MSG_DONE || m->type == MSG_ABORT ||
           (m->type == MSG_FINISHED && m->src.kind == ENT_WORKER && m->src.group == 0 && m->src.id == 0);
}

static void handle(dist_stub *s, const msg *m, zmq_msg_t *payload)
{
    char peer[32];
    peer_name(peer, sizeof peer, &m->src);
    dist_stats_count(s->rt->stats, msg_type_name(m->type), peer, false, MSG_HEADER_BYTES + zmq_msg_size(payload), 0, 0);
    if (m->type == MSG_UPDATE_REPLY || m->type == MSG_GET_REPLY) /* answers a request: pending on its row */
        dist_stats_count(s->rt->stats, msg_type_name(m->type == MSG_UPDATE_REPLY ? MSG_UPDATE : MSG_GET), peer,
                         true, 0, -1, 0);
    if (!valid(s, m)) {
        dist_stats_drop(s->rt->stats);
        return;
    }
    switch (m->type) {
    case MSG_HELLO:
        if (++s->hellos == s->threads)
            start(s);
        break;
    case MSG_UPDATE:
        on_worker_update(s, m);
        break;
    case MSG_UPDATE_REPLY:
        on_update_reply(s, m, payload);
        break;
    case MSG_GET_REPLY:
        on_get_reply(s, m, payload);
        break;
    case MSG_SYNC:
    case MSG_SYNC_REPLY:
        deliver(s, m, zmq_msg_data(payload), zmq_msg_size(payload));
        break;
    case MSG_DONE:
        if (++s->done == s->rt->nworkers)
            on_all_done(s);
        break;
    case MSG_FINISHED:
        stop_all(s, NULL);
        break;
    case MSG_ABORT: {
        singa_err e;
        singa_err_set(&e, "%.*s", (int)zmq_msg_size(payload), (const char *)zmq_msg_data(payload));
        dist_fail(s->rt, &e);
        stop_all(s, e.msg);
        break;
    }
    }
}

void *dist_stub_main(void *arg)
{
    dist_rt *rt = arg;
    dist_stub *s = rt->stub;
    int one = 1, linger = 0;
    s->router = zmq_socket(rt->zmq, ZMQ_ROUTER);
    if (!s->router || zmq_setsockopt(s->router, ZMQ_LINGER, &linger, sizeof linger) < 0 ||
        zmq_setsockopt(s->router, ZMQ_ROUTER_MANDATORY, &one, sizeof one) < 0 || zmq_bind(s->router, rt->endpoint) < 0) {
        singa_err e;
        singa_err_set(&e, "stub: cannot listen on %s: %s", rt->endpoint, zmq_strerror(zmq_errno()));
        dist_fail(rt, &e);
        if (s->router)
            zmq_close(s->router);
        return NULL;
    }
    if (s->threads == 0)
        s->stop = true;
    while (!s->stop) {
        char id[32];
        msg m;
        zmq_msg_t payload;
        int rc = msg_recv(s->router, true, id, sizeof id, &m, &payload);
        if (rc == 0)
            handle(s, &m, &payload);
        else if (rc > 0)
            dist_stats_drop(rt->stats);
        zmq_msg_close(&payload);
        if (rc < 0)
            break;
    }
    zmq_close(s->router);
    return NULL;
}
