/* A partitioned net's locations, each computed by its own thread (see parts.h).  Threads meet
 * only at bridges: every layer another location waits for records the pass it finished under one
 * lock, and waiters sleep on one condition variable (a pass signals a handful of bridges, so one
 * lock costs nothing measurable).  Replicas of a layer cut on the batch write their gradients
 * into buffers of their own, summed into the whole param after the pass in location order, so
 * the result does not depend on which thread ran first.  Each location runs its layers in an
 * order that sends as early and receives as late as the graph allows (order_for_bridges).
 *
 * A param's grad_ready is the worker's, which sends the gradient through a socket only the lead's
 * thread may use: during a backward pass the parts take it over, mark a param final in whatever
 * thread finishes it, and the lead tells the worker between its own layers and while it waits, so
 * gradients still leave as soon as they are final; replicated params once summed. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dist/dist.h"
#include "net/parts.h"
#include "singa/layer.h"
#include "singa/param.h"

typedef struct replica {
    singa_param *view;
    singa_tensor grad; /* the view's own gradient buffer */
} replica;

typedef struct held { /* a param's own grad_ready, taken over during a backward pass */
    singa_grad_ready_fn fn; /* NULL: the param has none */
    void *ud;
    bool summed;            /* a whole param with replicas: final once they are summed */
    bool ready, told;       /* this pass: final, and the worker told */
} held;

typedef struct executor {
    singa_parts *pp;
    int location;
} executor;

struct singa_parts {
    int n;
    singa_net **nets;
    singa_rng *rngs; /* the other locations' generators (dropout masks and the like) */
    executor *execs;
    pthread_t *threads;
    int nthreads;
    pthread_mutex_t lock;
    pthread_cond_t cv;
    long pass;     /* passes posted; the one under way */
    bool backward; /* its direction */
    bool quit, failed;
    int busy;      /* locations other than the lead's still in the pass */
    singa_err err; /* the first failure */
    int *base;     /* per location: its first layer's index below */
    int nlayers;
    long *done[2];    /* per layer and direction: the last pass it finished */
    int **waits[2];   /* per layer and direction: layers elsewhere it needs (-1 ends), or NULL */
    bool *signals[2]; /* per layer and direction: a layer elsewhere needs it */
    replica *reps;
    int nreps;
    held *held;  /* by param id */
    int nheld;
    atomic_int nready; /* params final and not yet told */
    singa_stats *stats; /* where bridges count what they carry, or NULL */
};

static int index_of(const singa_parts *pp, const singa_layer *l)
{
    const singa_net *net = l->net;
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i] == l)
            return pp->base[net->location] + i;
    return -1;
}

static singa_layer *layer_at(const singa_parts *pp, int x)
{
    int k = pp->n - 1;
    while (pp->base[k] > x)
        k--;
    return pp->nets[k]->layers[x - pp->base[k]];
}

/* Appends y to x's list of layers to wait for in direction d. */
static int add_wait(singa_parts *pp, int d, int x, int y)
{
    int n = 0;
    while (pp->waits[d][x] && pp->waits[d][x][n] >= 0)
        n++;
    int *w = realloc(pp->waits[d][x], (size_t)(n + 2) * sizeof *w);
    if (!w)
        return -1;
    w[n] = y;
    w[n + 1] = -1;
    pp->waits[d][x] = w;
    pp->signals[d][y] = true;
    return 0;
}

/* Whether another location reads l (it sends) or l reads another location (it receives). */
static bool read_elsewhere(singa_net **nets, int n, const singa_layer *l)
{
    for (int k = 0; k < n; k++)
        for (int i = 0; k != l->net->location && i < nets[k]->nlayers; i++)
            for (int e = 0; e < nets[k]->layers[i]->nsrc; e++)
                if (nets[k]->layers[i]->src[e] == l)
                    return true;
    return false;
}

static bool reads_elsewhere(const singa_layer *l)
{
    for (int e = 0; e < l->nsrc; e++)
        if (l->src[e]->net != l->net)
            return true;
    return false;
}

/* Orders a location's layers so that it sends as early and receives as late as it can (a
 * topological order preferring senders, then the rest, then receivers, else the graph's order):
 * in the graph's one order, a worker would wait for the other's features before sending its
 * own, and the two would take turns.  Backward runs the order reversed, so gradients go back as
 * early and are awaited as late.  Every wait is then on something the graph needs first, so
 * the workers cannot wait for each other in a circle. */
static int order_for_bridges(singa_net **nets, int n, singa_net *net)
{
    int m = net->nlayers;
    singa_layer **order = malloc((size_t)m * sizeof *order);
    bool *placed = calloc((size_t)m, sizeof *placed);
    int *prefer = malloc((size_t)m * sizeof *prefer); /* 0 senders, 1 the rest, 2 receivers */
    if (!order || !placed || !prefer) {
        free(order);
        free(placed);
        free(prefer);
        return -1;
    }
    for (int i = 0; i < m; i++)
        prefer[i] = reads_elsewhere(net->layers[i]) ? 2 : read_elsewhere(nets, n, net->layers[i]) ? 0 : 1;
    for (int k = 0; k < m; k++) {
        int best = -1;
        for (int i = 0; i < m; i++) {
            if (placed[i] || (best >= 0 && prefer[i] >= prefer[best]))
                continue;
            bool ready = true; /* its sources here placed */
            for (int e = 0; e < net->layers[i]->nsrc && ready; e++) {
                const singa_layer *src = net->layers[i]->src[e];
                bool listed = false;
                for (int j = 0; j < m && !listed; j++)
                    listed = net->layers[j] == src;
                if (!listed && src->net == net && src->nsrc == 1) /* a kSlice's slab: the kSlice */
                    src = src->src[0];
                for (int j = 0; j < m && ready; j++)
                    ready = !(net->layers[j] == src && !placed[j]);
            }
            if (ready)
                best = i;
        }
        if (best < 0) /* cannot happen in a graph without cycles; its own order is always valid */
            break;
        placed[best] = true;
        order[k] = net->layers[best];
        if (k == m - 1)
            memcpy(net->layers, order, (size_t)m * sizeof *order);
    }
    free(order);
    free(placed);
    free(prefer);
    return 0;
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
            if (!v->whole || v->disjoint)
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
            v->grad = r->grad;
            v->grad.owns = false;
        }
    }
    return 0;
}

static int run_location(singa_parts *pp, int k, bool backward, singa_err *err)
{
    singa_net *net = pp->nets[k];
    if (backward)
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
        bool backward = pp->backward;
        pthread_mutex_unlock(&pp->lock);
        singa_err err = {{0}};
        int rc = run_location(pp, e->location, backward, &err);
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

/* A bridge's blob arrived: counted as received from the worker that computed it (forward, a
 * kBridgeDst reads its source's features; backward, a kBridgeSrc gets its gradient). */
static void count(singa_parts *pp, const singa_layer *l, const int *from, bool backward, double waited)
{
    for (; *from >= 0; from++) {
        const singa_layer *y = layer_at(pp, *from);
        char peer[24];
        snprintf(peer, sizeof peer, "worker %d.%d", l->net->split.group, y->net->location);
        size_t floats = backward ? l->grad.size : y->data.size;
        dist_stats_count(pp->stats, backward ? "bridge-grad" : "bridge", peer, false, floats * sizeof(float), 0,
                         waited);
        waited = 0;
    }
}

/* A param final in some location's thread: the lead will tell its worker. */
static void mark_ready(void *ud, singa_param *p, size_t begin, size_t end)
{
    singa_parts *pp = ud;
    held *h = &pp->held[p->id];
    if (begin != 0 || end != p->grad.size || h->summed)
        return; /* the rest are told at the end of the pass */
    pthread_mutex_lock(&pp->lock);
    if (!h->ready) {
        h->ready = true;
        atomic_fetch_add(&pp->nready, 1);
        pthread_cond_broadcast(&pp->cv);
    }
    pthread_mutex_unlock(&pp->lock);
}

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
        h->fn(h->ud, p, 0, p->grad.size);
        pthread_mutex_lock(&pp->lock);
    }
}

int singa_parts_wait(singa_parts *pp, const singa_net *net, int i, bool backward, singa_err *err)
{
    const int *waits = pp->waits[backward][pp->base[net->location] + i];
    bool lead = backward && net->location == 0;
    if (!waits)
        return 0;
    double t0 = pp->stats ? now() : 0;
    pthread_mutex_lock(&pp->lock);
    for (const int *w = waits; *w >= 0 && !pp->failed; w++)
        while (pp->done[backward][*w] < pp->pass && !pp->failed) {
            if (lead && atomic_load(&pp->nready) > 0) { /* while it waits, the lead sends what is final */
                tell_ready(pp);
                continue;
            }
            pthread_cond_wait(&pp->cv, &pp->lock);
        }
    bool failed = pp->failed;
    pthread_mutex_unlock(&pp->lock);
    if (failed)
        return singa_err_set(err, "another worker of the group failed");
    if (pp->stats)
        count(pp, net->layers[i], waits, backward, now() - t0);
    return 0;
}

void singa_parts_count_traffic(singa_parts *pp, singa_stats *stats)
{
    pp->stats = stats;
}

void singa_parts_signal(singa_parts *pp, const singa_net *net, int i, bool backward)
{
    int x = pp->base[net->location] + i;
    bool tell = backward && net->location == 0 && atomic_load(&pp->nready) > 0;
    if (!pp->signals[backward][x] && !tell)
        return;
    pthread_mutex_lock(&pp->lock);
    if (pp->signals[backward][x]) {
        pp->done[backward][x] = pp->pass;
        pthread_cond_broadcast(&pp->cv);
    }
    if (tell)
        tell_ready(pp);
    pthread_mutex_unlock(&pp->lock);
}

/* Before a backward pass: replicas write their own buffers afresh, and the parts take over every
 * grad_ready (see the top). */
static int hold_grad_ready(singa_parts *pp, singa_err *err)
{
    singa_params *ps = pp->nets[0]->params;
    for (int i = 0; i < pp->n; i++)
        singa_net_backward_begin(pp->nets[i]);
    for (int r = 0; r < pp->nreps; r++) {
        singa_param *v = pp->reps[r].view;
        v->grad_alpha = v->whole->grad_alpha;
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
        held *h = &pp->held[i];
        *h = (held){.fn = p->grad_ready, .ud = p->grad_ready_ud};
        for (int r = 0; r < pp->nreps && !h->summed; r++)
            h->summed = pp->reps[r].view->whole == p;
        if (h->fn) {
            p->grad_ready = mark_ready;
            p->grad_ready_ud = pp;
        }
    }
    atomic_store(&pp->nready, 0);
    return 0;
}

/* After a backward pass: every grad_ready back to its owner, called for the params not told yet
 * unless the pass failed. */
static void release_grad_ready(singa_parts *pp, bool call)
{
    singa_params *ps = pp->nets[0]->params;
    for (int i = 0; i < pp->nheld && i < ps->n; i++) {
        singa_param *p = ps->items[i];
        held *h = &pp->held[i];
        if (!h->fn)
            continue;
        p->grad_ready = h->fn;
        p->grad_ready_ud = h->ud;
        if (call && !h->told)
            h->fn(h->ud, p, 0, p->grad.size);
        h->fn = NULL;
    }
}

static void sum_replicas(singa_parts *pp)
{
    for (int r = 0; r < pp->nreps; r++) {
        singa_param *v = pp->reps[r].view, *w = v->whole;
        bool first = true;
        for (int q = 0; q < r && first; q++)
            first = pp->reps[q].view->whole != w;
        if (first && w->grad_beta == 0.0f) {
            memcpy(w->grad.data, v->grad.data, w->grad.size * sizeof(float));
            continue;
        }
        if (first && w->grad_beta != 1.0f)
            singa_tensor_scale(&w->grad, w->grad_beta);
        singa_tensor_axpy(1.0f, &v->grad, &w->grad);
    }
}

int singa_parts_pass(singa_parts *pp, bool backward, singa_err *err)
{
    if (backward && hold_grad_ready(pp, err) < 0)
        return -1;
    pthread_mutex_lock(&pp->lock);
    bool failed = pp->failed;
    if (!failed) {
        pp->pass++;
        pp->backward = backward;
        pp->busy = pp->n - 1;
        pthread_cond_broadcast(&pp->cv);
        pthread_mutex_unlock(&pp->lock);
        singa_err mine = {{0}};
        int rc = run_location(pp, 0, backward, &mine);
        pthread_mutex_lock(&pp->lock);
        if (rc < 0)
            fail(pp, &mine);
        while (pp->busy > 0 || (backward && !pp->failed && atomic_load(&pp->nready) > 0)) {
            if (backward && !pp->failed && atomic_load(&pp->nready) > 0)
                tell_ready(pp);
            else
                pthread_cond_wait(&pp->cv, &pp->lock);
        }
        failed = pp->failed;
    }
    pthread_mutex_unlock(&pp->lock);
    if (failed) {
        if (backward)
            release_grad_ready(pp, false);
        *err = pp->err;
        return -1;
    }
    if (!backward) {
        for (int k = 1; k < pp->n; k++)
            singa_metrics_merge(&pp->nets[0]->metrics, &pp->nets[k]->metrics);
        return 0;
    }
    sum_replicas(pp);
    release_grad_ready(pp, true);
    return 0;
}

int singa_parts_start(singa_net **nets, int n, singa_err *err)
{
    singa_parts *pp = calloc(1, sizeof *pp);
    if (!pp)
        return singa_err_set(err, "out of memory");
    pp->n = n;
    pp->nets = nets;
    pthread_mutex_init(&pp->lock, NULL);
    pthread_cond_init(&pp->cv, NULL);
    int rc = (pp->base = calloc((size_t)n, sizeof *pp->base)) && (pp->rngs = calloc((size_t)n, sizeof *pp->rngs)) &&
                     (pp->execs = calloc((size_t)n, sizeof *pp->execs)) &&
                     (pp->threads = calloc((size_t)n, sizeof *pp->threads))
                 ? 0
                 : -1;
    for (int k = 0; k < n && rc == 0; k++) {
        pp->base[k] = pp->nlayers;
        pp->nlayers += nets[k]->nlayers;
    }
    for (int d = 0; d < 2 && rc == 0; d++)
        rc = (pp->done[d] = calloc((size_t)pp->nlayers, sizeof *pp->done[d])) &&
                     (pp->waits[d] = calloc((size_t)pp->nlayers, sizeof *pp->waits[d])) &&
                     (pp->signals[d] = calloc((size_t)pp->nlayers, sizeof *pp->signals[d]))
                 ? 0
                 : -1;
    for (int k = 0; k < n && rc == 0; k++)
        rc = order_for_bridges(nets, n, nets[k]);
    for (int k = 0; k < n && rc == 0; k++)
        nets[k]->parts = pp;
    if (rc < 0 || link_locations(pp) < 0)
        rc = singa_err_set(err, "out of memory");
    if (rc == 0)
        rc = own_replica_grads(pp, err);
    for (int k = 1; k < n && rc == 0; k++) {
        singa_rng_seed(&pp->rngs[k], nets[0]->seed, 1000 + (uint64_t)k);
        nets[k]->rng = &pp->rngs[k];
        pp->execs[k] = (executor){pp, k};
        if (pthread_create(&pp->threads[k], NULL, executor_main, &pp->execs[k]) != 0)
            rc = singa_err_set(err, "cannot start the thread of worker %d of the group", k);
        else
            pp->nthreads = k;
    }
    if (rc < 0) {
        pp->n = 1; /* the caller frees the nets */
        singa_parts_free(pp);
        for (int k = 0; k < n; k++)
            nets[k]->parts = NULL;
        return -1;
    }
    return 0;
}

void singa_parts_free(singa_parts *pp)
{
    if (!pp)
        return;
    pthread_mutex_lock(&pp->lock);
    pp->quit = true;
    pthread_cond_broadcast(&pp->cv);
    pthread_mutex_unlock(&pp->lock);
    for (int k = 1; k <= pp->nthreads; k++)
        pthread_join(pp->threads[k], NULL);
    for (int k = 1; k < pp->n; k++)
        singa_net_free(pp->nets[k]);
    if (pp->n > 1)
        free(pp->nets);
    for (int r = 0; r < pp->nreps; r++)
        singa_tensor_free(&pp->reps[r].grad);
    for (int d = 0; d < 2; d++) {
        for (int x = 0; x < pp->nlayers && pp->waits[d]; x++)
            free(pp->waits[d][x]);
        free(pp->waits[d]);
        free(pp->done[d]);
        free(pp->signals[d]);
    }
    free(pp->reps);
    free(pp->held);
    free(pp->base);
    free(pp->rngs);
    free(pp->execs);
    free(pp->threads);
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
                return singa_layer_batch(pp->nets[k]->layers[i]);
    return 0;
}
