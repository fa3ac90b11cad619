/* The bridges of a cut net across processes (bridge.h): the remote a partitioned net's parts
 * ask (net/parts.h), kept per parts and made at the first call that needs it.
 *
 * Every process builds every location's net; the ones computed elsewhere stand in for them.
 * Forward, the features of a layer here go to each process reading them (once per process);
 * backward, the gradients a layer here writes into sources elsewhere go back.  Blobs arrive in
 * whatever thread receives them and count as the sender's layer finished.  One that comes before
 * its pass began (a fast sender's next pass) waits in a copy: a gradient written before the pass
 * begins would be taken for stale.  This process's gradient of a param is then its part of the
 * group's (zero where only other processes compute), and the servers sum the processes'.
 *
 * The state below that changes during a pass (staged copies, other processes' metrics) is
 * guarded by the parts' lock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/param_state.h"
#include "runtime/bridge.h"
#include "runtime/runtime.h"

typedef struct inbound { /* a blob another process sends here */
    int x, e;     /* its layer, and -1 (the layer's features) or the edge of its source (its gradient) */
    float *stage; /* a copy that came before its pass began */
    long staged;  /* that pass; 0: none */
} inbound;

typedef struct rt_bridge {
    singa_parts *pp;
    int n;              /* locations */
    singa_stats *stats; /* where bridges count what they carry, or NULL */
    /* Linked to other processes. */
    singa_parts_peers link;
    int *owner;       /* per location: its process; NULL when not linked */
    int **sends[2];   /* per layer and direction: forward, one location per process its features
                       * go to; backward, the edges of the sources whose gradient goes back; -1 ends */
    inbound *in;
    int nin;
    bool *reports;    /* per location: the first of another process, whose metrics location 0's awaits */
    singa_metrics *theirs; /* per location: those metrics */
    long *theirs_pass;
} rt_bridge;

static singa_layer *layer_at(const rt_bridge *b, int x) { return singa_parts_layer(b->pp, x); }

static int location_of(const rt_bridge *b, int x) { return layer_at(b, x)->net->location; }

/* A bridge's blob arrived: counted as received from the worker that computed it (forward, a
 * kBridgeDst reads its source's features; backward, a kBridgeSrc gets its gradient). */
static void bridge_count(void *ud, const singa_layer *l, const singa_layer *y, bool backward, double waited)
{
    rt_bridge *b = ud;
    char peer[40];
    int k = y->net->location;
    snprintf(peer, sizeof peer, "worker %d.%d", l->net->split.group, k);
    bool remote = b->owner && b->owner[k] != b->link.self; /* its bytes are the stub's to count */
    while (remote && k > 0 && b->owner[k - 1] == b->owner[k]) /* named as the stub names it: */
        k--;                                                    /* its process's sender */
    if (remote)
        snprintf(peer, sizeof peer, "worker %d.%d (rank %d)", l->net->split.group, k, b->owner[k]);
    size_t floats = remote ? 0 : backward ? l->grad.size : y->data.size;
    singa_stats_count(b->stats, backward ? "bridge-grad" : "bridge", peer, false, floats * sizeof(float), 0, waited);
    /* The step times count the waits of the location its worker's thread runs (the first of its
     * process); the others' threads wait beside it.  A pipeline's stages each count their own
     * (singa_parts_count_stages). */
    int me = l->net->location, first = me;
    while (b->owner && first > 0 && b->owner[first - 1] == b->owner[me])
        first--;
    if (me == (b->owner ? first : 0) || singa_parts_micro_batches(b->pp) > 1)
        singa_stats_bridge_wait(b->stats, l->net->split.group, me, waited);
}

void singa_parts_count_stages(singa_parts *pp, int group)
{
    const rt_bridge *b = singa_parts_remote_ud(pp);
    int lead = -1;
    for (int k = 0; b && b->stats && singa_parts_micro_batches(pp) > 1 && k < b->n; k++) {
        if (!singa_parts_here(pp, k))
            continue;
        if (lead >= 0) /* the lead's step is its worker's */
            singa_stats_step(b->stats, group, k, singa_parts_stage_seconds(pp, k), 0, 0);
        else
            lead = k;
    }
}

static bool bridge_sends(void *ud, int x, bool backward)
{
    const rt_bridge *b = ud;
    return b->sends[backward][x] != NULL;
}

/* The lead: layer x's blob of this pass to the processes waiting for it. */
static int bridge_send(void *ud, int x, bool backward, long pass, singa_err *err)
{
    rt_bridge *b = ud;
    const singa_parts_peers *k = &b->link;
    singa_layer *l = layer_at(b, x);
    for (const int *t = b->sends[backward][x]; *t >= 0; t++) {
        const singa_tensor *blob = backward ? &l->src[*t]->grad : &l->data;
        int to = backward ? l->src[*t]->net->location : *t;
        if (k->send(k->ud, to, x, backward ? *t : -1, pass, blob->data, blob->size, backward ? NULL : l->aux.data,
                    backward ? 0 : l->aux.size, err) < 0)
            return -1;
    }
    return 0;
}

/* Holding the parts' lock: a blob of pass `pass` where it belongs, its layer then done. */
static void bridge_apply(rt_bridge *b, const inbound *in, const void *data, long pass)
{
    singa_layer *l = layer_at(b, in->x);
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
    singa_parts_done(b->pp, in->x, in->e >= 0, pass);
}

static void bridge_begin(void *ud, long pass)
{
    rt_bridge *b = ud;
    for (int i = 0; i < b->nin; i++)
        if (b->in[i].staged == pass) {
            bridge_apply(b, &b->in[i], b->in[i].stage, pass);
            b->in[i].staged = 0;
        }
}

static bool bridge_waiting(void *ud, long pass)
{
    const rt_bridge *b = ud;
    for (int k = 0; b->reports && k < b->n; k++)
        if (b->reports[k] && b->theirs_pass[k] < pass)
            return true;
    return false;
}

static const singa_metrics *bridge_metrics(void *ud, int location)
{
    const rt_bridge *b = ud;
    return b->reports && b->reports[location] ? &b->theirs[location] : NULL;
}

static int bridge_gathered(void *ud, const singa_metrics *all, long pass, singa_err *err)
{
    rt_bridge *b = ud;
    return b->link.send_metrics(b->link.ud, 0, pass, all, err);
}

static void bridge_free(void *ud)
{
    rt_bridge *b = ud;
    for (int d = 0; d < 2; d++) {
        for (int x = 0; x < singa_parts_nlayers(b->pp) && b->sends[d]; x++)
            free(b->sends[d][x]);
        free(b->sends[d]);
    }
    for (int i = 0; i < b->nin; i++)
        free(b->in[i].stage);
    free(b->in);
    free(b->owner);
    free(b->reports);
    free(b->theirs);
    free(b->theirs_pass);
    free(b);
}

/* Hands pp the bridge's functions, counting traffic once there are stats to count it in. */
static void hand_over(rt_bridge *b)
{
    singa_parts_remote r = {.ud = b, .free = bridge_free, .sends = bridge_sends, .send = bridge_send,
                            .begin = bridge_begin, .waiting = bridge_waiting, .metrics = bridge_metrics,
                            .gathered = bridge_gathered, .count = b->stats ? bridge_count : NULL};
    singa_parts_set_remote(b->pp, &r);
}

/* The bridge of pp, made when it has none yet; NULL when out of memory. */
static rt_bridge *bridge_of(singa_parts *pp)
{
    rt_bridge *b = singa_parts_remote_ud(pp);
    if (b || !(b = calloc(1, sizeof *b)))
        return b;
    b->pp = pp;
    b->n = singa_net_nlocations(singa_parts_net(pp, 0));
    hand_over(b);
    return b;
}

int singa_parts_count_traffic(singa_parts *pp, singa_stats *stats, singa_err *err)
{
    rt_bridge *b = bridge_of(pp);
    if (!b)
        return singa_err_set(err, "out of memory");
    b->stats = stats;
    hand_over(b);
    return 0;
}

static int add_inbound(rt_bridge *b, int x, int e)
{
    for (int i = 0; i < b->nin; i++)
        if (b->in[i].x == x && b->in[i].e == e) /* features come once, however many read them */
            return 0;
    inbound *in = realloc(b->in, (size_t)(b->nin + 1) * sizeof *in);
    if (!in)
        return -1;
    b->in = in;
    b->in[b->nin++] = (inbound){.x = x, .e = e};
    return 0;
}

/* Whether layer y (here) is read by another layer than x in x's process: the gradients it sends
 * back would then be summed there, each message carrying the sum so far. */
static const singa_layer *second_reader(const rt_bridge *b, int x, const singa_layer *y)
{
    int there = b->owner[location_of(b, x)];
    for (int z = 0; z < singa_parts_nlayers(b->pp); z++) {
        const singa_layer *l = layer_at(b, z);
        for (int f = 0; z != x && b->owner[l->net->location] == there && f < l->nsrc; f++)
            if (l->src[f] == y)
                return l;
    }
    return NULL;
}

/* What crosses between this process and the others: forward, features of layers here to the
 * processes reading them, and of layers elsewhere read here; backward, the other way. */
static int link_bridges(rt_bridge *b, singa_err *err)
{
    singa_parts *pp = b->pp;
    for (int x = 0; x < singa_parts_nlayers(pp); x++) {
        singa_layer *l = layer_at(b, x);
        for (int e = 0; e < l->nsrc; e++) {
            singa_layer *src = l->src[e];
            int y = singa_parts_index(pp, src), kx = l->net->location, ky = src->net->location;
            if (src->net == l->net || singa_parts_here(pp, kx) == singa_parts_here(pp, ky))
                continue;
            if (singa_parts_here(pp, ky)) {
                const singa_layer *z = second_reader(b, x, src);
                if (z)
                    return singa_err_set(err, "layer '%s' is read by '%s' and '%s' in one other process", src->name,
                                         l->name, z->name);
                bool sent = false;
                for (const int *t = b->sends[0][y]; t && *t >= 0 && !sent; t++)
                    sent = b->owner[*t] == b->owner[kx];
                if ((!sent && singa_parts_list_push(&b->sends[0][y], kx) < 0) || add_inbound(b, x, e) < 0)
                    return singa_err_set(err, "out of memory");
            } else if (singa_parts_list_push(&b->sends[1][x], e) < 0 || add_inbound(b, y, -1) < 0) {
                return singa_err_set(err, "out of memory");
            }
        }
    }
    return 0;
}

int singa_parts_link(singa_parts *pp, const singa_parts_peers *link, singa_err *err)
{
    rt_bridge *b = bridge_of(pp);
    bool *here = b ? malloc((size_t)b->n * sizeof *here) : NULL;
    if (!here || !(b->owner = malloc((size_t)b->n * sizeof *b->owner))) {
        free(here);
        return singa_err_set(err, "out of memory");
    }
    b->link = *link;
    for (int d = 0; d < 2; d++)
        if (!(b->sends[d] = calloc((size_t)singa_parts_nlayers(pp), sizeof *b->sends[d]))) {
            free(here);
            return singa_err_set(err, "out of memory");
        }
    for (int k = 0; k < b->n; k++) {
        b->owner[k] = link->owner[k];
        here[k] = link->owner[k] == link->self;
    }
    int rc = singa_parts_place(pp, here, err);
    free(here);
    if (rc < 0)
        return -1;
    if (singa_parts_here(pp, 0)) {
        if (!(b->reports = calloc((size_t)b->n, sizeof *b->reports)) ||
            !(b->theirs = calloc((size_t)b->n, sizeof *b->theirs)) ||
            !(b->theirs_pass = calloc((size_t)b->n, sizeof *b->theirs_pass)))
            return singa_err_set(err, "out of memory");
        for (int k = 1; k < b->n; k++)
            b->reports[k] = !singa_parts_here(pp, k) && b->owner[k] != b->owner[k - 1];
    }
    return link_bridges(b, err);
}

/* The floats of a blob from elsewhere. */
static size_t inbound_size(const rt_bridge *b, const inbound *in)
{
    const singa_layer *l = layer_at(b, in->x);
    return in->e < 0 ? l->data.size + l->aux.size : l->src[in->e]->grad.size;
}

size_t singa_parts_inbound_bytes(const singa_parts *pp)
{
    const rt_bridge *b = singa_parts_remote_ud(pp);
    size_t most = 0;
    for (int i = 0; b && i < b->nin; i++)
        if (inbound_size(b, &b->in[i]) > most)
            most = inbound_size(b, &b->in[i]);
    return most * sizeof(float);
}

/* The elements a view covers within its whole param, [*begin, *end): a row range, or from the
 * first to the last element of a column range. */
static void view_extent(const singa_param_view *v, size_t *begin, size_t *end)
{
    const singa_tensor *t = &v->st.p.data;
    *begin = (size_t)(t->data - v->whole->data.data);
    *end = *begin + (singa_tensor_contiguous(t) ? t->size
                                                : (size_t)(singa_tensor_rows(t) - 1) * (size_t)t->ld +
                                                      (size_t)singa_tensor_cols(t));
}

void singa_parts_span(const singa_parts *pp, const singa_param *p, size_t *begin, size_t *end)
{
    singa_parts_span_of(pp, p, NULL, -1, begin, end);
}

void singa_parts_span_of(const singa_parts *pp, const singa_param *p, const int *owner, int proc, size_t *begin,
                         size_t *end)
{
    size_t lo = p->data.size, hi = 0;
    int n = singa_net_nlocations(singa_parts_net(pp, 0));
    for (int k = 0; k < n; k++) {
        const singa_net *net = singa_parts_net(pp, k);
        bool computed = owner ? owner[k] == proc : singa_parts_here(pp, k);
        for (int i = 0; computed && i < net->nlayers; i++)
            for (int j = 0; j < net->layers[i]->nparams; j++) {
                singa_param *v = net->layers[i]->params[j];
                const singa_param_view *pv = singa_param_view_of(v);
                const singa_param *w = singa_param_whole(v);
                size_t a = 0, b = p->data.size;
                if (pv && pv->disjoint && !w->owner)
                    view_extent(pv, &a, &b);
                while (w->owner) /* a copy's gradient is added to its owner's, all of it */
                    w = w->owner;
                if (w != p)
                    continue;
                lo = a < lo ? a : lo;
                hi = b > hi ? b : hi;
            }
    }
    *begin = lo < hi ? lo : 0;
    *end = lo < hi ? hi : 0;
}

size_t singa_parts_profile_get(const singa_parts *pp, double *out)
{
    double passes = (double)singa_parts_net(pp, 0)->profiled_passes;
    int nloc = singa_net_nlocations(singa_parts_net(pp, 0));
    size_t n = 0;
    for (int k = 0; k < nloc; k++) {
        const singa_net *net = singa_parts_net(pp, k);
        for (int i = 0; singa_parts_here(pp, k) && i < net->nlayers; i++, n += 2)
            if (out) {
                out[n] = passes > 0 ? net->layers[i]->forward_seconds / passes : 0;
                out[n + 1] = passes > 0 ? net->layers[i]->backward_seconds / passes : 0;
            }
    }
    return n;
}

int singa_parts_profile_put(singa_parts *pp, int from, const void *data, size_t nbytes)
{
    const rt_bridge *b = singa_parts_remote_ud(pp);
    size_t n = 0;
    for (int k = 0; b && b->owner && k < b->n; k++)
        n += b->owner[k] == from && !singa_parts_here(pp, k) ? 2 * (size_t)singa_parts_net(pp, k)->nlayers : 0;
    if (n == 0 || nbytes != n * sizeof(double))
        return -1;
    double t[2];
    for (size_t j = 0; j < n; j++) {
        memcpy(t, (const char *)data + j * sizeof(double), sizeof(double));
        if (!(t[0] >= 0 && t[0] < 1e6))
            return -1;
    }
    double passes = (double)singa_parts_net(pp, 0)->profiled_passes;
    const char *p = data;
    for (int k = 0; k < b->n; k++) {
        singa_net *net = singa_parts_net(pp, k);
        for (int i = 0; b->owner[k] == from && !singa_parts_here(pp, k) && i < net->nlayers; i++, p += sizeof t) {
            memcpy(t, p, sizeof t);
            net->layers[i]->forward_seconds = t[0] * passes;
            net->layers[i]->backward_seconds = t[1] * passes;
        }
    }
    return 0;
}

static inbound *find_inbound(rt_bridge *b, int x, int e)
{
    for (int i = 0; i < b->nin; i++)
        if (b->in[i].x == x && b->in[i].e == e)
            return &b->in[i];
    return NULL;
}

int singa_parts_deliver(singa_parts *pp, int from, int x, int e, long pass, const void *data, size_t nbytes)
{
    rt_bridge *b = singa_parts_remote_ud(pp);
    if (!b || !b->owner)
        return -1;
    int rc = -1;
    long now = singa_parts_lock(pp);
    inbound *in = x >= 0 && x < singa_parts_nlayers(pp) ? find_inbound(b, x, e) : NULL;
    if (in && b->owner[location_of(b, x)] == from) {
        if (nbytes != inbound_size(b, in) * sizeof(float))
            ;
        else if (pass == now && !singa_parts_is_done(pp, x, e >= 0, pass)) {
            bridge_apply(b, in, data, pass);
            rc = 0;
        } else if (pass == now + 1 && !in->staged &&
                   (in->stage || (in->stage = malloc(nbytes ? nbytes : 1)))) { /* its pass has not begun here */
            if (nbytes)
                memcpy(in->stage, data, nbytes);
            in->staged = pass;
            rc = 0;
        }
    }
    singa_parts_unlock(pp);
    return rc;
}

int singa_parts_deliver_metrics(singa_parts *pp, int from, long pass, const singa_metrics *m)
{
    rt_bridge *b = singa_parts_remote_ud(pp);
    if (!b)
        return -1;
    int rc = -1;
    long now = singa_parts_lock(pp);
    for (int k = 1; b->reports && k < b->n; k++)
        if (b->reports[k] && b->owner[k] == from) {
            if ((pass == now || pass == now + 1) && b->theirs_pass[k] < pass) {
                b->theirs[k] = *m;
                b->theirs_pass[k] = pass;
                singa_parts_wake(pp);
                rc = 0;
            }
            break;
        }
    singa_parts_unlock(pp);
    return rc;
}
