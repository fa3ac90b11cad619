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
 * gradients still leave as soon as they are final; replicated params once summed.
 *
 * Linked to other processes (see parts.h), a layer whose blob another process waits for has it
 * sent by the lead, which alone may use the worker's socket: at once when it computed the layer,
 * else between its layers and while it waits, as with gradients.  Blobs from elsewhere arrive in
 * whatever thread receives them and count as the sender's layer finished.  One that comes before
 * its pass began (a fast sender's next pass) waits in a copy: a gradient written before the pass
 * begins would be taken for stale.  This process's gradient of a param is then its part of the
 * group's (zero where only other processes compute), and the servers sum the processes'. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"
#include "net/parts.h"
#include "singa/layer.h"
#include "singa/param.h"

typedef struct replica {
    singa_param *view;
    singa_tensor grad; /* the view's own gradient buffer */
    int location;      /* its layer's */
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

typedef struct inbound { /* a blob another process sends here */
    int x, e;     /* its layer, and -1 (the layer's features) or the edge of its source (its gradient) */
    float *stage; /* a copy that came before its pass began */
    long staged;  /* that pass; 0: none */
} inbound;

struct singa_parts {
    int n;
    singa_net **nets;
    singa_rng *rngs; /* the other locations' generators (dropout masks and the like) */
    executor *execs;
    pthread_t *threads;
    bool *started;  /* per location: its thread runs */
    int nthreads;
    bool up;        /* the threads were started (at the first pass, once linked or not) */
    int lead;       /* the location the caller computes */
    bool *here;     /* per location: computed in this process */
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
    /* Linked to other processes. */
    singa_parts_peers link;
    int *owner;       /* per location: its process; NULL when not linked */
    int **sends[2];   /* per layer and direction: forward, one location per process its features
                       * go to; backward, the edges of the sources whose gradient goes back; -1 ends */
    int *outbox;      /* this pass: layers finished here by others than the lead, to be sent */
    int nout, nsent;
    inbound *in;
    int nin;
    bool *reports;    /* per location: the first of another process, whose metrics location 0's awaits */
    singa_metrics *theirs; /* per location: those metrics */
    long *theirs_pass;
    int *views_elsewhere; /* by param id: views computed by other processes */
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

/* Appends v to a -1-ended list. */
static int push(int **list, int v)
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

static int location_of(const singa_parts *pp, int x)
{
    return layer_at(pp, x)->net->location;
}

/* Appends y to x's list of layers to wait for in direction d. */
static int add_wait(singa_parts *pp, int d, int x, int y)
{
    pp->signals[d][y] = true;
    return push(&pp->waits[d][x], y);
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
            r->location = l->net->location;
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
        char peer[40];
        int k = y->net->location;
        snprintf(peer, sizeof peer, "worker %d.%d", l->net->split.group, k);
        bool remote = pp->owner && pp->owner[k] != pp->link.self; /* its bytes are the stub's to count */
        while (remote && k > 0 && pp->owner[k - 1] == pp->owner[k]) /* named as the stub names it: */
            k--;                                                       /* its process's sender */
        if (remote)
            snprintf(peer, sizeof peer, "worker %d.%d (rank %d)", l->net->split.group, k, pp->owner[k]);
        size_t floats = remote ? 0 : backward ? l->grad.size : y->data.size;
        rt_stats_count(pp->stats, backward ? "bridge-grad" : "bridge", peer, false, floats * sizeof(float), 0,
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

/* The lead: layer x's blob of this pass to the processes waiting for it. */
static int send_remote(singa_parts *pp, int x, bool backward, singa_err *err)
{
    const singa_parts_peers *k = &pp->link;
    singa_layer *l = layer_at(pp, x);
    for (const int *t = pp->sends[backward][x]; *t >= 0; t++) {
        const singa_tensor *blob = backward ? &l->src[*t]->grad : &l->data;
        int to = backward ? l->src[*t]->net->location : *t;
        if (k->send(k->ud, to, x, backward ? *t : -1, pp->pass, blob->data, blob->size, backward ? NULL : l->aux.data,
                    backward ? 0 : l->aux.size, err) < 0)
            return -1;
    }
    return 0;
}

/* The lead, holding the lock: sends one blob finished by another thread here, or tells its worker
 * of the params final so far (unlocked meanwhile).  Whether there was anything to do. */
static bool serve(singa_parts *pp, bool backward)
{
    if (pp->nsent < pp->nout) {
        int x = pp->outbox[pp->nsent++];
        singa_err err = {{0}};
        pthread_mutex_unlock(&pp->lock);
        int rc = send_remote(pp, x, backward, &err);
        pthread_mutex_lock(&pp->lock);
        if (rc < 0)
            fail(pp, &err);
        return true;
    }
    if (backward && atomic_load(&pp->nready) > 0) {
        tell_ready(pp);
        return true;
    }
    return false;
}

int singa_parts_wait(singa_parts *pp, const singa_net *net, int i, bool backward, singa_err *err)
{
    const int *waits = pp->waits[backward][pp->base[net->location] + i];
    bool lead = net->location == pp->lead;
    if (!waits)
        return 0;
    double t0 = pp->stats ? now() : 0;
    pthread_mutex_lock(&pp->lock);
    for (const int *w = waits; *w >= 0 && !pp->failed; w++)
        while (pp->done[backward][*w] < pp->pass && !pp->failed)
            if (!(lead && serve(pp, backward))) /* while it waits, the lead sends what is done */
                pthread_cond_wait(&pp->cv, &pp->lock);
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
    bool lead = net->location == pp->lead, remote = pp->owner && pp->sends[backward][x];
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
        pp->outbox[pp->nout++] = x;
        pthread_cond_broadcast(&pp->cv);
    }
    if (rc < 0)
        fail(pp, &err);
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
    for (int i = 0; pp->views_elsewhere && i < ps->n; i++) /* final there: never reported here */
        __atomic_store_n(&ps->items[i]->nviews_done, pp->views_elsewhere[i], __ATOMIC_RELAXED);
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

static bool rep_here(const singa_parts *pp, int r)
{
    return pp->here[pp->reps[r].location];
}

static void sum_replicas(singa_parts *pp)
{
    for (int r = 0; r < pp->nreps; r++) {
        singa_param *v = pp->reps[r].view, *w = v->whole;
        if (!rep_here(pp, r))
            continue;
        bool first = true;
        for (int q = 0; q < r && first; q++)
            first = pp->reps[q].view->whole != w || !rep_here(pp, q);
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

static void apply(singa_parts *pp, inbound *in, const void *data, long pass)
{
    singa_layer *l = layer_at(pp, in->x);
    if (in->e < 0) { /* features, then their rows' labels */
        if (l->data.size) /* a blob may be empty: the message still says the layer is done */
            memcpy(l->data.data, data, l->data.size * sizeof(float));
        if (l->aux.size)
            memcpy(l->aux.data, (const char *)data + l->data.size * sizeof(float), l->aux.size * sizeof(float));
    } else { /* as a layer here writing its source's gradient would */
        singa_layer *src = l->src[in->e];
        if (src->grad_written) /* data from a socket may lie anywhere */
            for (size_t i = 0; i < src->grad.size; i++) {
                float v;
                memcpy(&v, (const char *)data + i * sizeof v, sizeof v);
                src->grad.data[i] += v;
            }
        else if (src->grad.size)
            memcpy(src->grad.data, data, src->grad.size * sizeof(float));
        src->grad_written = true;
    }
    pp->done[in->e >= 0][in->x] = pass;
    pthread_cond_broadcast(&pp->cv);
}

/* Whether location 0's process still waits for another's metrics of this pass. */
static bool metrics_missing(const singa_parts *pp)
{
    for (int k = 0; pp->reports && k < pp->n; k++)
        if (pp->reports[k] && pp->theirs_pass[k] < pp->pass)
            return true;
    return false;
}

/* After a forward pass: the metrics of every location, in location 0's net; another process's
 * part sends its own to location 0's. */
static int gather_metrics(singa_parts *pp, singa_err *err)
{
    singa_metrics *all = &pp->nets[0]->metrics;
    for (int k = 1; k < pp->n; k++)
        if (pp->here[k])
            singa_metrics_merge(all, &pp->nets[k]->metrics);
        else if (pp->reports && pp->reports[k])
            singa_metrics_merge(all, &pp->theirs[k]);
    if (pp->owner && !pp->here[0])
        return pp->link.send_metrics(pp->link.ud, 0, pp->pass, all, err);
    return 0;
}

int singa_parts_pass(singa_parts *pp, bool backward, singa_err *err)
{
    if (!pp->up) {
        pp->up = true;
        if (start_threads(pp, err) < 0) {
            pthread_mutex_lock(&pp->lock);
            fail(pp, err);
            pthread_mutex_unlock(&pp->lock);
        }
    }
    if (backward && hold_grad_ready(pp, err) < 0)
        return -1;
    pthread_mutex_lock(&pp->lock);
    bool failed = pp->failed;
    if (!failed) {
        pp->pass++;
        pp->backward = backward;
        pp->busy = pp->nthreads;
        pp->nout = pp->nsent = 0;
        for (int i = 0; i < pp->nin; i++)
            if (pp->in[i].staged == pp->pass) {
                apply(pp, &pp->in[i], pp->in[i].stage, pp->pass);
                pp->in[i].staged = 0;
            }
        pthread_cond_broadcast(&pp->cv);
        pthread_mutex_unlock(&pp->lock);
        singa_err mine = {{0}};
        int rc = run_location(pp, pp->lead, backward, &mine);
        pthread_mutex_lock(&pp->lock);
        if (rc < 0)
            fail(pp, &mine);
        while (pp->busy > 0 || (!pp->failed && (pp->nsent < pp->nout || (backward && atomic_load(&pp->nready) > 0) ||
                                                (!backward && metrics_missing(pp)))))
            if (pp->failed || !serve(pp, backward))
                pthread_cond_wait(&pp->cv, &pp->lock);
        failed = pp->failed;
    }
    pthread_mutex_unlock(&pp->lock);
    if (failed) {
        if (backward)
            release_grad_ready(pp, false);
        *err = pp->err;
        return -1;
    }
    if (!backward)
        return gather_metrics(pp, err);
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
                     (pp->threads = calloc((size_t)n, sizeof *pp->threads)) &&
                     (pp->started = calloc((size_t)n, sizeof *pp->started)) &&
                     (pp->here = calloc((size_t)n, sizeof *pp->here))
                 ? 0
                 : -1;
    for (int k = 0; k < n && rc == 0; k++) {
        pp->base[k] = pp->nlayers;
        pp->nlayers += nets[k]->nlayers;
        pp->here[k] = true;
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

static int add_inbound(singa_parts *pp, int x, int e)
{
    for (int i = 0; i < pp->nin; i++)
        if (pp->in[i].x == x && pp->in[i].e == e) /* features come once, however many read them */
            return 0;
    inbound *in = realloc(pp->in, (size_t)(pp->nin + 1) * sizeof *in);
    if (!in)
        return -1;
    pp->in = in;
    pp->in[pp->nin++] = (inbound){.x = x, .e = e};
    return 0;
}

/* Whether layer y (here) is read by another layer than x in x's process: the gradients it sends
 * back would then be summed there, each message carrying the sum so far. */
static const singa_layer *second_reader(const singa_parts *pp, int x, const singa_layer *y)
{
    int there = pp->owner[location_of(pp, x)];
    for (int z = 0; z < pp->nlayers; z++) {
        const singa_layer *l = layer_at(pp, z);
        for (int f = 0; z != x && pp->owner[l->net->location] == there && f < l->nsrc; f++)
            if (l->src[f] == y)
                return l;
    }
    return NULL;
}

/* What crosses between this process and the others: forward, features of layers here to the
 * processes reading them, and of layers elsewhere read here; backward, the other way. */
static int link_bridges(singa_parts *pp, singa_err *err)
{
    for (int x = 0; x < pp->nlayers; x++) {
        singa_layer *l = layer_at(pp, x);
        for (int e = 0; e < l->nsrc; e++) {
            singa_layer *src = l->src[e];
            int y = index_of(pp, src), kx = l->net->location, ky = src->net->location;
            if (src->net == l->net || pp->here[kx] == pp->here[ky])
                continue;
            if (pp->here[ky]) {
                const singa_layer *z = second_reader(pp, x, src);
                if (z)
                    return singa_err_set(err, "layer '%s' is read by '%s' and '%s' in one other process", src->name,
                                         l->name, z->name);
                bool sent = false;
                for (const int *t = pp->sends[0][y]; t && *t >= 0 && !sent; t++)
                    sent = pp->owner[*t] == pp->owner[kx];
                if ((!sent && push(&pp->sends[0][y], kx) < 0) || add_inbound(pp, x, e) < 0)
                    return singa_err_set(err, "out of memory");
            } else if (push(&pp->sends[1][x], e) < 0 || add_inbound(pp, y, -1) < 0) {
                return singa_err_set(err, "out of memory");
            }
        }
    }
    return 0;
}

int singa_parts_link(singa_parts *pp, const singa_parts_peers *link, singa_err *err)
{
    singa_params *ps = pp->nets[0]->params;
    pp->link = *link;
    pp->lead = -1;
    if (!(pp->owner = malloc((size_t)pp->n * sizeof *pp->owner)) || !(pp->outbox = malloc((size_t)pp->nlayers * sizeof *pp->outbox)) ||
        !(pp->views_elsewhere = calloc((size_t)ps->n, sizeof *pp->views_elsewhere)))
        return singa_err_set(err, "out of memory");
    for (int d = 0; d < 2; d++)
        if (!(pp->sends[d] = calloc((size_t)pp->nlayers, sizeof *pp->sends[d])))
            return singa_err_set(err, "out of memory");
    for (int k = 0; k < pp->n; k++) {
        pp->owner[k] = link->owner[k];
        pp->here[k] = link->owner[k] == link->self;
        if (pp->here[k] && pp->lead < 0)
            pp->lead = k;
    }
    if (pp->lead < 0)
        return singa_err_set(err, "no worker of the group computes here");
    if (pp->here[0]) {
        if (!(pp->reports = calloc((size_t)pp->n, sizeof *pp->reports)) ||
            !(pp->theirs = calloc((size_t)pp->n, sizeof *pp->theirs)) ||
            !(pp->theirs_pass = calloc((size_t)pp->n, sizeof *pp->theirs_pass)))
            return singa_err_set(err, "out of memory");
        for (int k = 1; k < pp->n; k++)
            pp->reports[k] = !pp->here[k] && pp->owner[k] != pp->owner[k - 1];
    }
    for (int k = 0; k < pp->n; k++)
        for (int i = 0; !pp->here[k] && i < pp->nets[k]->nlayers; i++)
            for (int j = 0; j < pp->nets[k]->layers[i]->nparams; j++) {
                const singa_param *v = pp->nets[k]->layers[i]->params[j];
                if (v->whole)
                    pp->views_elsewhere[v->whole->id]++;
            }
    return link_bridges(pp, err);
}

/* The floats of a blob from elsewhere. */
static size_t inbound_size(const singa_parts *pp, const inbound *in)
{
    const singa_layer *l = layer_at(pp, in->x);
    return in->e < 0 ? l->data.size + l->aux.size : l->src[in->e]->grad.size;
}

size_t singa_parts_inbound_bytes(const singa_parts *pp)
{
    size_t most = 0;
    for (int i = 0; i < pp->nin; i++)
        if (inbound_size(pp, &pp->in[i]) > most)
            most = inbound_size(pp, &pp->in[i]);
    return most * sizeof(float);
}

/* The elements a view covers within its whole param, [*begin, *end): a row range, or from the
 * first to the last element of a column range. */
static void view_extent(const singa_param *v, size_t *begin, size_t *end)
{
    const singa_tensor *t = &v->data;
    *begin = (size_t)(t->data - v->whole->data.data);
    *end = *begin + (singa_tensor_contiguous(t) ? t->size
                                                : (size_t)(singa_tensor_rows(t) - 1) * (size_t)t->ld +
                                                      (size_t)singa_tensor_cols(t));
}

void singa_parts_span(const singa_parts *pp, const singa_param *p, size_t *begin, size_t *end)
{
    size_t lo = p->data.size, hi = 0;
    for (int k = 0; k < pp->n; k++)
        for (int i = 0; pp->here[k] && i < pp->nets[k]->nlayers; i++)
            for (int j = 0; j < pp->nets[k]->layers[i]->nparams; j++) {
                const singa_param *v = pp->nets[k]->layers[i]->params[j], *w = v->whole ? v->whole : v;
                size_t a = 0, b = p->data.size;
                if (v->whole && v->disjoint && !w->owner)
                    view_extent(v, &a, &b);
                while (w->owner) /* a copy's gradient is added to its owner's, all of it */
                    w = w->owner;
                if (w != p)
                    continue;
                lo = a < lo ? a : lo;
                hi = b > hi ? b : hi;
            }
    *begin = lo < hi ? lo : 0;
    *end = lo < hi ? hi : 0;
}

size_t singa_parts_profile_get(const singa_parts *pp, double *out)
{
    double passes = (double)pp->nets[0]->profiled_passes;
    size_t n = 0;
    for (int k = 0; k < pp->n; k++)
        for (int i = 0; pp->here[k] && i < pp->nets[k]->nlayers; i++, n += 2)
            if (out) {
                out[n] = passes > 0 ? pp->nets[k]->layers[i]->forward_seconds / passes : 0;
                out[n + 1] = passes > 0 ? pp->nets[k]->layers[i]->backward_seconds / passes : 0;
            }
    return n;
}

int singa_parts_profile_put(singa_parts *pp, int from, const void *data, size_t nbytes)
{
    size_t n = 0;
    for (int k = 0; pp->owner && k < pp->n; k++)
        n += pp->owner[k] == from && !pp->here[k] ? 2 * (size_t)pp->nets[k]->nlayers : 0;
    if (n == 0 || nbytes != n * sizeof(double))
        return -1;
    double t[2];
    for (size_t j = 0; j < n; j++) {
        memcpy(t, (const char *)data + j * sizeof(double), sizeof(double));
        if (!(t[0] >= 0 && t[0] < 1e6))
            return -1;
    }
    double passes = (double)pp->nets[0]->profiled_passes;
    const char *p = data;
    for (int k = 0; k < pp->n; k++)
        for (int i = 0; pp->owner[k] == from && !pp->here[k] && i < pp->nets[k]->nlayers; i++, p += sizeof t) {
            memcpy(t, p, sizeof t);
            pp->nets[k]->layers[i]->forward_seconds = t[0] * passes;
            pp->nets[k]->layers[i]->backward_seconds = t[1] * passes;
        }
    return 0;
}

static inbound *find_inbound(singa_parts *pp, int x, int e)
{
    for (int i = 0; i < pp->nin; i++)
        if (pp->in[i].x == x && pp->in[i].e == e)
            return &pp->in[i];
    return NULL;
}

int singa_parts_deliver(singa_parts *pp, int from, int x, int e, long pass, const void *data, size_t nbytes)
{
    int rc = -1;
    pthread_mutex_lock(&pp->lock);
    inbound *in = x >= 0 && x < pp->nlayers ? find_inbound(pp, x, e) : NULL;
    if (in && pp->owner[location_of(pp, x)] == from) {
        if (nbytes != inbound_size(pp, in) * sizeof(float))
            ;
        else if (pass == pp->pass && pp->done[e >= 0][x] < pass) {
            apply(pp, in, data, pass);
            rc = 0;
        } else if (pass == pp->pass + 1 && !in->staged &&
                   (in->stage || (in->stage = malloc(nbytes ? nbytes : 1)))) { /* its pass has not begun here */
            if (nbytes)
                memcpy(in->stage, data, nbytes);
            in->staged = pass;
            rc = 0;
        }
    }
    pthread_mutex_unlock(&pp->lock);
    return rc;
}

int singa_parts_deliver_metrics(singa_parts *pp, int from, long pass, const singa_metrics *m)
{
    int rc = -1;
    pthread_mutex_lock(&pp->lock);
    for (int k = 1; pp->reports && k < pp->n; k++)
        if (pp->reports[k] && pp->owner[k] == from) {
            if ((pass == pp->pass || pass == pp->pass + 1) && pp->theirs_pass[k] < pass) {
                pp->theirs[k] = *m;
                pp->theirs_pass[k] = pass;
                pthread_cond_broadcast(&pp->cv);
                rc = 0;
            }
            break;
        }
    pthread_mutex_unlock(&pp->lock);
    return rc;
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
    for (int k = 1; k < pp->n; k++)
        singa_net_free(pp->nets[k]);
    if (pp->n > 1)
        free(pp->nets);
    for (int r = 0; r < pp->nreps; r++)
        singa_tensor_free(&pp->reps[r].grad);
    for (int d = 0; d < 2; d++) {
        for (int x = 0; x < pp->nlayers && pp->waits[d]; x++)
            free(pp->waits[d][x]);
        for (int x = 0; x < pp->nlayers && pp->sends[d]; x++)
            free(pp->sends[d][x]);
        free(pp->waits[d]);
        free(pp->sends[d]);
        free(pp->done[d]);
        free(pp->signals[d]);
    }
    for (int i = 0; i < pp->nin; i++)
        free(pp->in[i].stage);
    free(pp->in);
    free(pp->owner);
    free(pp->outbox);
    free(pp->reports);
    free(pp->theirs);
    free(pp->theirs_pass);
    free(pp->views_elsewhere);
    free(pp->reps);
    free(pp->held);
    free(pp->base);
    free(pp->rngs);
    free(pp->execs);
    free(pp->threads);
    free(pp->started);
    free(pp->here);
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
