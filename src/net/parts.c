/* A partitioned net's locations, each computed by its own thread (see parts.h).  Threads meet
 * only at bridges: every layer another location waits for records the pass it finished under one
 * lock, and waiters sleep on one condition variable (a pass signals a handful of bridges, so one
 * lock costs nothing measurable).  Replicas of a layer cut on the batch write their gradients
 * into buffers of their own, summed into the whole param after the pass in location order, so
 * the result does not depend on which thread ran first.  Each location runs its layers in an
 * order that sends as early and receives as late as the graph allows (parts_order.c).
 *
 * Pipelined (parts_state.h, pipeline.c), every location has a copy of its net per micro-batch,
 * and a pass runs each location's schedule of micro-batches; the rules above hold per copy.
 *
 * A param's gradient sink is the worker's, which sends the gradient through a socket only the
 * lead's thread may use: during a backward pass the parts take it over, mark a param final in whatever
 * thread finishes it, and the lead tells the worker between its own layers and while it waits, so
 * gradients still leave as soon as they are final; replicated params once summed.
 *
 * Placed among processes (see parts.h), a layer whose blob another process waits for has it sent
 * by the lead, whose thread alone may use the worker's socket: at once when it computed the
 * layer, else between its layers and while it waits, as with gradients.  What the remote puts
 * here counts as the sender's layer finished. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "net/parts_state.h"
#include "singa/layer.h"
#include "singa/param.h"

/* The index of net's first layer. */
static int first_of(const singa_parts *pp, const singa_net *net)
{
    int j = 0;
    while (j < pp->m - 1 && singa_parts_copy(pp, j, net->location) != net)
        j++;
    return j * pp->per_copy + pp->base[net->location];
}

static int index_of(const singa_parts *pp, const singa_layer *l)
{
    const singa_net *net = l->net;
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i] == l)
            return first_of(pp, net) + i;
    return -1;
}

static singa_layer *layer_at(const singa_parts *pp, int x)
{
    int j = x / pp->per_copy, k = pp->n - 1;
    x -= j * pp->per_copy;
    while (pp->base[k] > x)
        k--;
    return singa_parts_copy(pp, j, k)->layers[x - pp->base[k]];
}

/* Appends v to a -1-ended list. */
int singa_parts_list_push(int **list, int v)
{
    int n = 0;
    while (*list && (*list)[n] >= 0)
        n++;
    int *l = realloc(*list, (size_t)(n + 2) * sizeof *l);
    if (!l)
        return -1;
    l[n] = v;
    l[n + 1] = -1;
    *list = l;
    return 0;
}

/* Appends y to x's list of layers to wait for in direction d. */
static int add_wait(singa_parts *pp, int d, int x, int y)
{
    pp->signals[d][y] = true;
    return singa_parts_list_push(&pp->waits[d][x], y);
}

/* Forward, a layer waits for its sources elsewhere; backward, a source waits for the layers
 * elsewhere that write its gradient. */
static int link_locations(singa_parts *pp)
{
    for (int x = 0; x < pp->nlayers; x++) {
        singa_layer *l = layer_at(pp, x);
        for (int e = 0; e < l->nsrc; e++) {
            if (l->src[e]->net == l->net)
                continue;
            int y = index_of(pp, l->src[e]);
            if (add_wait(pp, 0, x, y) < 0 || add_wait(pp, 1, y, x) < 0)
                return -1;
        }
    }
    return 0;
}

/* Views of a param cut on the batch get gradient buffers of their own. */
static int own_replica_grads(singa_parts *pp, singa_err *err)
{
    for (int x = 0; x < pp->nlayers; x++) {
        singa_layer *l = layer_at(pp, x);
        for (int k = 0; k < l->nparams; k++) {
            singa_param *v = l->params[k];
            const singa_param_view *pv = singa_param_view_of(v);
            if (!pv || pv->disjoint)
                continue;
            replica *r = realloc(pp->reps, (size_t)(pp->nreps + 1) * sizeof *r);
            if (!r)
                return singa_err_set(err, "out of memory");
            pp->reps = r;
            r = &pp->reps[pp->nreps];
            if (singa_tensor_init_like(&r->grad, &v->grad, err) < 0)
                return -1;
            pp->nreps++;
            r->view = v;
            r->whole = pv->whole;
            r->location = l->net->location;
            v->grad = r->grad;
            v->grad.owns = false;
        }
    }
    return 0;
}

static int run_location(singa_parts *pp, int k, int mode, singa_err *err)
{
    singa_net *net = pp->nets[k];
    if (pp->m > 1)
        return singa_pipeline_run(pp, k, mode, err);
    if (mode == PARTS_BACKWARD)
        return singa_net_backward_layers(net, err);
    if (k > 0)
        singa_metrics_reset(&net->metrics);
    return singa_net_forward_layers(net, err);
}

/* Records the first failure and wakes everyone waiting, so no location waits for it forever. */
static void fail(singa_parts *pp, const singa_err *err)
{
    if (!pp->failed) {
        pp->failed = true;
        pp->err = *err;
    }
    pthread_cond_broadcast(&pp->cv);
}

static void *executor_main(void *arg)
{
    executor *e = arg;
    singa_parts *pp = e->pp;
    long seen = 0;
    pthread_mutex_lock(&pp->lock);
    for (;;) {
        while (pp->pass == seen && !pp->quit)
            pthread_cond_wait(&pp->cv, &pp->lock);
        if (pp->quit)
            break;
        seen = pp->pass;
        int mode = pp->mode;
        pthread_mutex_unlock(&pp->lock);
        singa_err err = {{0}};
        int rc = run_location(pp, e->location, mode, &err);
        pthread_mutex_lock(&pp->lock);
        if (rc < 0) {
            singa_err_prefix(&err, "worker %d of the group: ", e->location);
            fail(pp, &err);
        }
        if (--pp->busy == 0)
            pthread_cond_broadcast(&pp->cv);
    }
    pthread_mutex_unlock(&pp->lock);
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A param final in some location's thread: the lead will tell its worker.  Pipelined, a param
 * of its own is written once per micro-batch, final at the last, unless its layer defers its
 * gradient (pipeline.c: written once); views report their whole once all of them (every
 * copy's) are final. */
static void mark_ready(void *ud, singa_param *p, size_t begin, size_t end)
{
    singa_parts *pp = ud;
    held *h = &pp->held[p->id];
    if (begin != 0 || end != p->grad.size || h->summed)
        return; /* the rest are told at the end of the pass */
    int writes = singa_param_state_of(p)->nviews > 0 || (pp->once && pp->once[p->id]) ? 1 : pp->m;
    pthread_mutex_lock(&pp->lock);
    if (!h->ready && ++h->calls >= writes) {
        h->ready = true;
        atomic_fetch_add(&pp->nready, 1);
        pthread_cond_broadcast(&pp->cv);
    }
    pthread_mutex_unlock(&pp->lock);
}

static const singa_grad_sink parts_sink = {.ready = mark_ready};

/* The lead, holding the lock: tells the workers of the params final so far (unlocked meanwhile). */
static void tell_ready(singa_parts *pp)
{
    for (int i = 0; i < pp->nheld && atomic_load(&pp->nready) > 0; i++) {
        held *h = &pp->held[i];
        if (!h->ready || h->told)
            continue;
        h->told = true;
        atomic_fetch_sub(&pp->nready, 1);
        singa_param *p = pp->nets[0]->params->items[i];
        pthread_mutex_unlock(&pp->lock);
        h->sink->ready(h->ud, p, 0, p->grad.size);
        pthread_mutex_lock(&pp->lock);
    }
}

/* The lead: layer x's blob of this pass to the processes waiting for it. */
static int send_remote(singa_parts *pp, int x, bool backward, singa_err *err)
{
    return pp->remote.send(pp->remote.ud, x, backward, pp->pass, err);
}

/* The lead, holding the lock: sends one blob finished by another thread here, or tells its worker
 * of the params final so far (unlocked meanwhile).  Whether there was anything to do. */
static bool serve(singa_parts *pp)
{
    if (pp->nsent < pp->nout) {
        int x = pp->outbox[pp->nsent++];
        singa_err err = {{0}};
        pthread_mutex_unlock(&pp->lock);
        int rc = send_remote(pp, x / 2, x % 2, &err);
        pthread_mutex_lock(&pp->lock);
        if (rc < 0)
            fail(pp, &err);
        return true;
    }
    if (pp->mode != PARTS_FORWARD && atomic_load(&pp->nready) > 0) {
        tell_ready(pp);
        return true;
    }
    return false;
}

int singa_parts_wait(singa_parts *pp, const singa_net *net, int i, bool backward, singa_err *err)
{
    const int *waits = pp->waits[backward][first_of(pp, net) + i];
    bool lead = net->location == pp->lead;
    if (!waits)
        return 0;
    double t0 = pp->remote.count ? now() : 0;
    pthread_mutex_lock(&pp->lock);
    for (const int *w = waits; *w >= 0 && !pp->failed; w++)
        while (pp->done[backward][*w] < pp->pass && !pp->failed)
            if (!(lead && serve(pp))) /* while it waits, the lead sends what is done */
                pthread_cond_wait(&pp->cv, &pp->lock);
    bool failed = pp->failed;
    pthread_mutex_unlock(&pp->lock);
    if (failed)
        return singa_err_set(err, "another worker of the group failed");
    if (pp->remote.count) {
        double waited = now() - t0;
        for (; *waits >= 0; waits++, waited = 0)
            pp->remote.count(pp->remote.ud, net->layers[i], layer_at(pp, *waits), backward, waited);
    }
    return 0;
}

void singa_parts_signal(singa_parts *pp, const singa_net *net, int i, bool backward)
{
    int x = first_of(pp, net) + i;
    bool lead = net->location == pp->lead, remote = pp->placed && pp->remote.sends(pp->remote.ud, x, backward);
    singa_err err = {{0}};
    int rc = remote && lead ? send_remote(pp, x, backward, &err) : 0;
    bool tell = backward && lead && atomic_load(&pp->nready) > 0;
    if (!pp->signals[backward][x] && !tell && !remote)
        return;
    pthread_mutex_lock(&pp->lock);
    if (pp->signals[backward][x]) {
        pp->done[backward][x] = pp->pass;
        pthread_cond_broadcast(&pp->cv);
    }
    if (remote && !lead) {
        pp->outbox[pp->nout++] = 2 * x + backward;
        pthread_cond_broadcast(&pp->cv);
    }
    if (rc < 0)
        fail(pp, &err);
    if (tell)
        tell_ready(pp);
    pthread_mutex_unlock(&pp->lock);
}

/* Before a backward pass: replicas write their own buffers afresh, and the parts take over every
 * gradient sink (see the top). */
static int hold_sinks(singa_parts *pp, singa_err *err)
{
    singa_params *ps = pp->nets[0]->params;
    if (pp->m > 1 && singa_pipeline_hold(pp) < 0)
        return singa_err_set(err, "out of memory");
    for (int i = 0; i < pp->n * pp->m; i++)
        singa_net_backward_begin(pp->nets[i]);
    for (int i = 0; pp->views_elsewhere && i < ps->n; i++) /* final there: never reported here */
        __atomic_store_n(&singa_param_state_of(ps->items[i])->nviews_done, pp->views_elsewhere[i], __ATOMIC_RELAXED);
    for (int r = 0; r < pp->nreps; r++) {
        singa_param *v = pp->reps[r].view;
        v->grad_alpha = pp->reps[r].whole->grad_alpha;
        v->grad_beta = 0.0f;
    }
    if (ps->n > pp->nheld) {
        held *h = realloc(pp->held, (size_t)ps->n * sizeof *h);
        if (!h)
            return singa_err_set(err, "out of memory");
        pp->held = h;
        pp->nheld = ps->n;
    }
    for (int i = 0; i < ps->n; i++) {
        singa_param *p = ps->items[i];
        const singa_param_state *s = singa_param_state_of(p);
        held *h = &pp->held[i];
        *h = (held){.sink = s->sink && s->sink->ready ? s->sink : NULL, .ud = s->sink_ud};
        for (int r = 0; r < pp->nreps && !h->summed; r++)
            h->summed = pp->reps[r].whole == p;
        if (h->sink)
            singa_param_set_sink(p, &parts_sink, pp);
    }
    atomic_store(&pp->nready, 0);
    return 0;
}

/* After a backward pass: every sink back to its param, called for the params not told yet
 * unless the pass failed. */
static void release_sinks(singa_parts *pp, bool call)
{
    singa_params *ps = pp->nets[0]->params;
    if (pp->m > 1)
        singa_pipeline_release(pp);
    for (int i = 0; i < pp->nheld && i < ps->n; i++) {
        singa_param *p = ps->items[i];
        held *h = &pp->held[i];
        if (!h->sink)
            continue;
        singa_param_set_sink(p, h->sink, h->ud);
        if (call && !h->told)
            h->sink->ready(h->ud, p, 0, p->grad.size);
        h->sink = NULL;
    }
}

static bool rep_here(const singa_parts *pp, int r)
{
    return pp->here[pp->reps[r].location];
}

static void sum_replicas(singa_parts *pp)
{
    for (int r = 0; r < pp->nreps; r++) {
        singa_param *v = pp->reps[r].view, *w = pp->reps[r].whole;
        if (!rep_here(pp, r))
            continue;
        bool first = true;
        for (int q = 0; q < r && first; q++)
            first = pp->reps[q].whole != w || !rep_here(pp, q);
        if (first && w->grad_beta == 0.0f) {
            memcpy(w->grad.data, v->grad.data, w->grad.size * sizeof(float));
            continue;
        }
        if (first && w->grad_beta != 1.0f)
            singa_tensor_scale(&w->grad, w->grad_beta);
        singa_tensor_axpy(1.0f, &v->grad, &w->grad);
    }
}

/* Starts the threads of the locations here other than the lead's, before the first pass. */
static int start_threads(singa_parts *pp, singa_err *err)
{
    for (int k = 0; k < pp->n; k++) {
        if (!pp->here[k] || k == pp->lead || pp->started[k])
            continue;
        pp->execs[k] = (executor){pp, k};
        if (pthread_create(&pp->threads[k], NULL, executor_main, &pp->execs[k]) != 0)
            return singa_err_set(err, "cannot start the thread of worker %d of the group", k);
        pp->started[k] = true;
        pp->nthreads++;
    }
    return 0;
}

/* Whether the lead still waits for other processes' metrics of this forward pass. */
static bool metrics_missing(const singa_parts *pp)
{
    return pp->placed && pp->remote.waiting(pp->remote.ud, pp->pass);
}

/* After a forward pass: the metrics of every location, in location order in location 0's net;
 * where another process computes location 0, the remote sends them there. */
static int gather_metrics(singa_parts *pp, singa_err *err)
{
    singa_metrics *all = &pp->nets[0]->metrics;
    for (int k = 1; k < pp->n; k++) {
        const singa_metrics *m = pp->here[k] ? &pp->nets[k]->metrics
                                 : pp->placed ? pp->remote.metrics(pp->remote.ud, k) : NULL;
        if (m)
            singa_metrics_merge(all, m);
    }
    if (pp->placed && !pp->here[0])
        return pp->remote.gathered(pp->remote.ud, all, pp->pass, err);
    return 0;
}

static int run_pass(singa_parts *pp, int mode, singa_err *err)
{
    bool fw = mode != PARTS_BACKWARD, bw = mode != PARTS_FORWARD;
    if (!pp->up) {
        pp->up = true;
        if (start_threads(pp, err) < 0) {
            pthread_mutex_lock(&pp->lock);
            fail(pp, err);
            pthread_mutex_unlock(&pp->lock);
        }
    }
    if (pp->m > 1)
        singa_pipeline_begin(pp);
    if (bw && hold_sinks(pp, err) < 0)
        return -1;
    pthread_mutex_lock(&pp->lock);
    bool failed = pp->failed;
    if (!failed) {
        pp->pass++;
        pp->mode = mode;
        pp->busy = pp->nthreads;
        pp->nout = pp->nsent = 0;
        if (pp->placed)
            pp->remote.begin(pp->remote.ud, pp->pass);
        pthread_cond_broadcast(&pp->cv);
        pthread_mutex_unlock(&pp->lock);
        singa_err mine = {{0}};
        int rc = run_location(pp, pp->lead, mode, &mine);
        pthread_mutex_lock(&pp->lock);
        if (rc < 0)
            fail(pp, &mine);
        while (pp->busy > 0 || (!pp->failed && (pp->nsent < pp->nout || (bw && atomic_load(&pp->nready) > 0) ||
                                                (fw && metrics_missing(pp)))))
            if (pp->failed || !serve(pp))
                pthread_cond_wait(&pp->cv, &pp->lock);
        failed = pp->failed;
    }
    pthread_mutex_unlock(&pp->lock);
    if (failed) {
        if (bw)
            release_sinks(pp, false);
        *err = pp->err;
        return -1;
    }
    if (pp->m > 1)
        singa_pipeline_end(pp);
    if (bw) {
        sum_replicas(pp);
        release_sinks(pp, true);
    }
    return fw ? gather_metrics(pp, err) : 0;
}

int singa_parts_pass(singa_parts *pp, bool backward, singa_err *err)
{
    return run_pass(pp, backward ? PARTS_BACKWARD : PARTS_FORWARD, err);
}

int singa_parts_step(singa_parts *pp, singa_err *err)
{
    if (pp->m > 1)
        return run_pass(pp, PARTS_STEP, err);
    return run_pass(pp, PARTS_FORWARD, err) < 0 ? -1 : run_pass(pp, PARTS_BACKWARD, err);
}

/* pp's arrays, and its layers numbered (parts_state.h); -1 when out of memory. */
static int alloc_parts(singa_parts *pp)
{
    int n = pp->n;
    if (!(pp->base = calloc((size_t)n, sizeof *pp->base)) || !(pp->rngs = calloc((size_t)n, sizeof *pp->rngs)) ||
        !(pp->execs = calloc((size_t)n, sizeof *pp->execs)) || !(pp->threads = calloc((size_t)n, sizeof *pp->threads)) ||
        !(pp->started = calloc((size_t)n, sizeof *pp->started)) || !(pp->here = calloc((size_t)n, sizeof *pp->here)))
        return -1;
    for (int k = 0; k < n; k++) {
        pp->base[k] = pp->per_copy;
        pp->per_copy += pp->nets[k]->nlayers;
        pp->here[k] = true;
    }
    pp->nlayers = pp->per_copy * pp->m;
    for (int d = 0; d < 2; d++)
        if (!(pp->done[d] = calloc((size_t)pp->nlayers, sizeof *pp->done[d])) ||
            !(pp->waits[d] = calloc((size_t)pp->nlayers, sizeof *pp->waits[d])) ||
            !(pp->signals[d] = calloc((size_t)pp->nlayers, sizeof *pp->signals[d])))
            return -1;
    return 0;
}

int singa_parts_start(singa_net **nets, int n, int m, singa_err *err)
{
    singa_parts *pp = calloc(1, sizeof *pp);
    if (!pp)
        return singa_err_set(err, "out of memory");
    pp->n = n;
    pp->m = m;
    pp->nets = nets;
    pthread_mutex_init(&pp->lock, NULL);
    pthread_cond_init(&pp->cv, NULL);
    int rc = alloc_parts(pp);
    for (int x = 0; x < n * m && rc == 0; x++) /* each copy's locations among themselves */
        rc = singa_parts_order(nets + x / n * n, n, nets[x]);
    for (int x = 0; x < n * m && rc == 0; x++)
        nets[x]->parts = pp;
    if (rc < 0 || link_locations(pp) < 0)
        rc = singa_err_set(err, "out of memory");
    if (rc == 0)
        rc = own_replica_grads(pp, err);
    for (int k = 1; k < n && rc == 0; k++)
        singa_rng_seed(&pp->rngs[k], nets[0]->seed, 1000 + (uint64_t)k);
    for (int x = 0; x < n * m && rc == 0; x++) /* a location's copies run in turn: one generator */
        nets[x]->rng = x % n ? &pp->rngs[x % n] : nets[0]->rng;
    if (rc == 0 && m > 1)
        rc = singa_pipeline_prepare(pp, err);
    if (rc < 0) {
        pp->n = pp->m = 1; /* the caller frees the nets */
        singa_parts_free(pp);
        for (int x = 0; x < n * m; x++)
            nets[x]->parts = NULL;
        return -1;
    }
    return 0;
}

void singa_parts_abort(singa_parts *pp, const char *why)
{
    singa_err err;
    singa_err_set(&err, "%s", why);
    pthread_mutex_lock(&pp->lock);
    fail(pp, &err);
    pthread_mutex_unlock(&pp->lock);
}

void singa_parts_free(singa_parts *pp)
{
    if (!pp)
        return;
    pthread_mutex_lock(&pp->lock);
    pp->quit = true;
    pthread_cond_broadcast(&pp->cv);
    pthread_mutex_unlock(&pp->lock);
    for (int k = 0; k < pp->n; k++)
        if (pp->started && pp->started[k])
            pthread_join(pp->threads[k], NULL);
    for (int x = 1; x < pp->n * pp->m; x++) {
        pp->nets[x]->parts = NULL; /* a copy of location 0 would free the parts again */
        singa_net_free(pp->nets[x]);
    }
    if (pp->n * pp->m > 1)
        free(pp->nets);
    for (int r = 0; r < pp->nreps; r++)
        singa_tensor_free(&pp->reps[r].grad);
    if (pp->remote.free)
        pp->remote.free(pp->remote.ud);
    for (int d = 0; d < 2; d++) {
        for (int x = 0; x < pp->nlayers && pp->waits[d]; x++)
            free(pp->waits[d][x]);
        free(pp->waits[d]);
        free(pp->done[d]);
        free(pp->signals[d]);
    }
    free(pp->outbox);
    free(pp->views_elsewhere);
    free(pp->reps);
    free(pp->held);
    free(pp->base);
    free(pp->rngs);
    free(pp->execs);
    free(pp->threads);
    free(pp->started);
    free(pp->here);
    free(pp->warm);
    free(pp->alpha);
    free(pp->beta);
    free(pp->once);
    free(pp->copies);
    free(pp->stage);
    pthread_mutex_destroy(&pp->lock);
    pthread_cond_destroy(&pp->cv);
    free(pp);
}

int singa_net_nlocations(const singa_net *net)
{
    return net->parts ? net->parts->n : 1;
}

singa_net *singa_net_location(const singa_net *net, int location)
{
    return net->parts ? net->parts->nets[location] : (singa_net *)net;
}

int singa_parts_batchsize(const singa_parts *pp)
{
    for (int k = 0; k < pp->n; k++)
        for (int i = 0; i < pp->nets[k]->nlayers; i++)
            if (pp->nets[k]->layers[i]->type->flags & SINGA_LAYER_INPUT)
                return singa_layer_batch(pp->nets[k]->layers[i]) * pp->m; /* a copy reads a micro-batch */
    return 0;
}

void singa_parts_set_remote(singa_parts *pp, const singa_parts_remote *remote) { pp->remote = *remote; }

void *singa_parts_remote_ud(const singa_parts *pp) { return pp->remote.ud; }

int singa_parts_place(singa_parts *pp, const bool *here, singa_err *err)
{
    singa_params *ps = pp->nets[0]->params;
    pp->lead = -1;
    for (int k = 0; k < pp->n; k++) {
        pp->here[k] = here[k];
        if (here[k] && pp->lead < 0)
            pp->lead = k;
    }
    if (!(pp->outbox = malloc(2 * (size_t)pp->nlayers * sizeof *pp->outbox)) ||
        !(pp->views_elsewhere = calloc((size_t)ps->n, sizeof *pp->views_elsewhere)))
        return singa_err_set(err, "out of memory");
    if (pp->lead < 0)
        return singa_err_set(err, "no worker of the group computes here");
    for (int x = 0; x < pp->n * pp->m; x++) /* every copy's views */
        for (int i = 0; !pp->here[x % pp->n] && i < pp->nets[x]->nlayers; i++)
            for (int j = 0; j < pp->nets[x]->layers[i]->nparams; j++) {
                const singa_param_view *v = singa_param_view_of(pp->nets[x]->layers[i]->params[j]);
                if (v)
                    pp->views_elsewhere[v->whole->id]++;
            }
    pp->placed = true;
    return 0;
}

bool singa_parts_here(const singa_parts *pp, int location) { return pp->here[location]; }

singa_net *singa_parts_net(const singa_parts *pp, int location) { return pp->nets[location]; }

int singa_parts_nlayers(const singa_parts *pp) { return pp->nlayers; }

singa_layer *singa_parts_layer(const singa_parts *pp, int x) { return layer_at(pp, x); }

int singa_parts_index(const singa_parts *pp, const singa_layer *l) { return index_of(pp, l); }

long singa_parts_lock(singa_parts *pp)
{
    pthread_mutex_lock(&pp->lock);
    return pp->pass;
}

void singa_parts_unlock(singa_parts *pp) { pthread_mutex_unlock(&pp->lock); }

bool singa_parts_is_done(const singa_parts *pp, int x, bool backward, long pass)
{
    return pp->done[backward][x] >= pass;
}

void singa_parts_done(singa_parts *pp, int x, bool backward, long pass)
{
    pp->done[backward][x] = pass;
    pthread_cond_broadcast(&pp->cv);
}

void singa_parts_wake(singa_parts *pp) { pthread_cond_broadcast(&pp->cv); }

int singa_parts_micro_batches(const singa_parts *pp) { return pp->m; }

double singa_parts_stage_seconds(const singa_parts *pp, int location)
{
    return pp->stage ? pp->stage[location] : 0;
}
