/* This process's part of a distributed job: it slices the params over the servers, makes a job
 * per local worker (each reading its part of the data), lets the workers of a group share one
 * copy of the values, and runs the stub, the servers and the workers as threads until every
 * worker is done or one thread fails.
 *
 * Memory is shared where SINGA shares it: workers of a group in one process train on one copy of
 * the values (they are synchronous, so nobody reads while a server writes), and a server whose
 * group serves exactly one worker group here updates that copy in place, so its messages carry
 * no values.  Everything else travels as copies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "dist/dist.h"
#include "singa/net.h"
#include "singa/tensor.h"

void dist_fail(dist_rt *rt, const singa_err *err)
{
    pthread_mutex_lock(&rt->lock);
    if (!rt->failed) {
        rt->failed = true;
        rt->err = *err;
    }
    pthread_mutex_unlock(&rt->lock);
}

int dist_worker_proc(const dist_rt *rt, int group, int id)
{
    return singa_cluster_worker_proc(rt->c, group, id, rt->nprocs);
}

int dist_server_proc(const dist_rt *rt, int group, int id)
{
    return singa_cluster_server_proc(rt->c, group, id, rt->nprocs);
}

void dist_identity(char *buf, size_t len, int kind, int group, int id)
{
    snprintf(buf, len, "%c%d.%d", kind == ENT_WORKER ? 'w' : kind == ENT_SERVER ? 's' : 'p', group, id);
}

int dist_send(void *sock, const msg *m, const void *payload, size_t nbytes)
{
    return msg_send(sock, NULL, m, payload, nbytes);
}

/* The params servers update, in the order every process finds them, and their slices. */
static int make_slices(dist_rt *rt, singa_job *job, singa_err *err)
{
    singa_params *ps = singa_job_params(job);
    int nservers = rt->c->nservers_per_group;
    if (!(rt->params = calloc((size_t)ps->n + 1, sizeof *rt->params)) ||
        !(rt->slices = calloc((size_t)(ps->n + 1) * (size_t)nservers, sizeof *rt->slices)))
        return singa_err_set(err, "out of memory");
    size_t total = 0;
    for (int i = 0; i < ps->n; i++) {
        singa_param *p = ps->items[i];
        if (p->trained && !p->owner && !p->state)
            total += p->data.size;
    }
    size_t base = 0;
    for (int i = 0; i < ps->n; i++) {
        singa_param *p = ps->items[i];
        if (!p->trained || p->owner || p->state)
            continue;
        dist_param *d = &rt->params[rt->nparams];
        *d = (dist_param){p->name, p->layer, p->data.size, p->lr_scale, p->wd_scale, rt->nslices, 0};
        for (int j = 0; j < nservers; j++) {
            size_t lo = total * (size_t)j / (size_t)nservers, hi = total * (size_t)(j + 1) / (size_t)nservers;
            size_t a = lo > base ? lo : base, b = hi < base + d->size ? hi : base + d->size;
            if (a >= b)
                continue;
            rt->slices[rt->nslices++] = (dist_slice){rt->nparams, a - base, b - a, j};
            d->nslices++;
        }
        base += d->size;
        rt->nparams++;
    }
    if (rt->nparams == 0)
        return singa_err_set(err, "neuralnet: no layer has a trained param, so there is nothing to distribute");
    return 0;
}

/* A worker's distributed params, by index. */
static int worker_params(dist_rt *rt, dist_worker *w, singa_err *err)
{
    singa_params *ps = singa_job_params(w->job);
    if (!(w->params = calloc((size_t)rt->nparams, sizeof *w->params)) ||
        !(w->sent = calloc((size_t)rt->nparams, sizeof *w->sent)))
        return singa_err_set(err, "out of memory");
    int k = 0;
    for (int i = 0; i < ps->n && k <= rt->nparams; i++) {
        singa_param *p = ps->items[i];
        if (!p->trained || p->owner || p->state)
            continue;
        if (k == rt->nparams || strcmp(p->name, rt->params[k].name) != 0 || p->data.size != rt->params[k].size)
            return singa_err_set(err, "worker %d.%d: its net's params differ from worker 0.0's", w->group, w->id);
        w->params[k++] = p;
    }
    return 0;
}

/* Workers of a group in this process train on the first one's values. */
static int share_replicas(dist_rt *rt, singa_err *err)
{
    int ngroups = rt->c->nworker_groups;
    if (!(rt->replica = calloc((size_t)ngroups, sizeof *rt->replica)))
        return singa_err_set(err, "out of memory");
    for (int i = 0; i < rt->nworkers; i++) {
        dist_worker *w = &rt->workers[i];
        if (!rt->replica[w->group]) {
            rt->replica[w->group] = w->params;
            continue;
        }
        for (int k = 0; k < rt->nparams; k++) {
            singa_param *p = w->params[k], *r = rt->replica[w->group][k];
            singa_tensor_free(&p->data);
            p->data = r->data;
            p->data.owns = false;
        }
    }
    return 0;
}

static void hook_record(void *ud, const singa_record *r)
{
    dist_worker *w = ud;
    pthread_mutex_lock(&w->rt->lock);
    if (w->rt->rank == 0 && w->rt->hooks->record)
        w->rt->hooks->record(w->rt->hooks->ud, r);
    pthread_mutex_unlock(&w->rt->lock);
}

static void hook_step(void *ud, const singa_record *r)
{
    dist_worker *w = ud;
    if (w->id != 0 || w->rt->rank != 0 || !w->rt->hooks->step)
        return;
    pthread_mutex_lock(&w->rt->lock);
    w->rt->hooks->step(w->rt->hooks->ud, r);
    pthread_mutex_unlock(&w->rt->lock);
}

static void hook_log(void *ud, const char *line)
{
    dist_worker *w = ud;
    pthread_mutex_lock(&w->rt->lock);
    if (w->rt->hooks->log)
        w->rt->hooks->log(w->rt->hooks->ud, line);
    pthread_mutex_unlock(&w->rt->lock);
}

static int add_workers(dist_rt *rt, singa_job *lead, singa_err *err)
{
    const singa_cluster *c = rt->c;
    int total = c->nworker_groups * c->nworkers_per_group;
    if (!(rt->workers = calloc((size_t)total, sizeof *rt->workers)))
        return singa_err_set(err, "out of memory");
    for (int g = 0; g < c->nworker_groups; g++)
        for (int j = 0; j < c->nworkers_per_group; j++) {
            if (dist_worker_proc(rt, g, j) != rt->rank)
                continue;
            dist_worker *w = &rt->workers[rt->nworkers++];
            *w = (dist_worker){.rt = rt, .group = g, .id = j, .step_sent = -1};
            w->hooks = (singa_job_hooks){.ud = w, .record = hook_record, .step = hook_step, .log = hook_log};
            if (g == 0 && j == 0)
                w->job = lead;
            else if (singa_job_create_worker(&w->job, rt->conf, singa_job_registry(lead), g, j, err) < 0)
                return singa_err_prefix(err, "worker %d.%d: ", g, j);
            if (singa_job_begin(w->job, &w->hooks, err) < 0 || worker_params(rt, w, err) < 0)
                return -1;
        }
    return 0;
}

static int add_servers(dist_rt *rt, singa_err *err)
{
    const singa_cluster *c = rt->c;
    int total = c->nserver_groups * c->nservers_per_group;
    if (!(rt->servers = calloc((size_t)total, dist_server_size())))
        return singa_err_set(err, "out of memory");
    for (int g = 0; g < c->nserver_groups; g++)
        for (int j = 0; j < c->nservers_per_group; j++)
            if (dist_server_proc(rt, g, j) == rt->rank &&
                dist_server_create(rt, dist_server_at(rt, rt->nservers++), g, j, err) < 0)
                return -1;
    return 0;
}

static void free_rt(dist_rt *rt, singa_job *lead)
{
    for (int i = 0; i < rt->nworkers; i++) { /* borrowed values are views: any order will do */
        dist_worker *w = &rt->workers[i];
        if (w->job != lead)
            singa_job_free(w->job);
        free(w->params);
        free(w->sent);
    }
    for (int i = 0; i < rt->nservers; i++)
        dist_server_free(dist_server_at(rt, i));
    dist_stub_free(rt->stub);
    free(rt->workers);
    free(rt->servers);
    free(rt->replica);
    free(rt->params);
    free(rt->slices);
    pthread_mutex_destroy(&rt->lock);
}

/* Tells the stub that the runtime cannot go on (a thread did not start), from a socket of the
 * calling thread's own. */
static void abort_from_here(dist_rt *rt, const char *why)
{
    void *sock = zmq_socket(rt->zmq, ZMQ_DEALER);
    int linger = 1000;
    if (!sock)
        return;
    zmq_setsockopt(sock, ZMQ_LINGER, &linger, sizeof linger);
    if (zmq_connect(sock, rt->endpoint) == 0) {
        msg m = {.type = MSG_ABORT, .src = {ENT_STUB, 0, 0, (uint16_t)rt->rank}};
        msg_send(sock, NULL, &m, why, strlen(why));
    }
    zmq_close(sock);
}

/* Starts the stub, the servers and the workers, and waits for all of them. */
static int run_threads(dist_rt *rt, singa_err *err)
{
    int n = 1 + rt->nservers + rt->nworkers, started = 0;
    pthread_t *t = calloc((size_t)n, sizeof *t);
    if (!t)
        return singa_err_set(err, "out of memory");
    for (int i = 0; i < n; i++) {
        void *(*main_fn)(void *) = i == 0 ? dist_stub_main : i <= rt->nservers ? dist_server_main : dist_worker_main;
        void *arg = i == 0 ? (void *)rt : i <= rt->nservers ? (void *)dist_server_at(rt, i - 1)
                                                              : (void *)&rt->workers[i - 1 - rt->nservers];
        if (pthread_create(&t[i], NULL, main_fn, arg) != 0)
            break;
        started++;
    }
    if (started < n) {
        singa_err e;
        singa_err_set(&e, "cannot start thread %d of %d", started + 1, n);
        dist_fail(rt, &e);
        if (started > 0)
            abort_from_here(rt, e.msg);
    }
    for (int i = 0; i < started; i++)
        pthread_join(t[i], NULL);
    free(t);
    if (rt->failed) {
        *err = rt->err;
        return -1;
    }
    return 0;
}

int singa_dist_run(singa_job *job, const singa_job_hooks *hooks, singa_result *res, singa_err *err)
{
    static const singa_job_hooks none;
    dist_rt rt = {.c = singa_job_cluster(job), .conf = singa_job_conf(job), .rank = 0, .nprocs = 1,
                  .hooks = hooks ? hooks : &none, .stats = singa_job_stats(job)};
    pthread_mutex_init(&rt.lock, NULL);
    snprintf(rt.endpoint, sizeof rt.endpoint, "inproc://singa-stub-%p", (void *)&rt);
    int rc = -1;
    if (make_slices(&rt, job, err) < 0 || add_workers(&rt, job, err) < 0 || share_replicas(&rt, err) < 0 ||
        add_servers(&rt, err) < 0 || dist_stub_create(&rt, err) < 0)
        goto out;
    if (!(rt.zmq = zmq_ctx_new())) {
        singa_err_set(err, "cannot start ZeroMQ: %s", zmq_strerror(zmq_errno()));
        goto out;
    }
    rc = run_threads(&rt, err);
    zmq_ctx_term(rt.zmq);
    if (rc == 0 && rt.nworkers > 0) /* worker 0 of group 0, which tests, is always the first here */
        *res = rt.workers[0].res;
out:
    free_rt(&rt, job);
    return rc;
}
