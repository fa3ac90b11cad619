/* Finite-difference gradient checks.  Inputs are drawn with magnitudes in [0.1, 1.1] so that a
 * perturbation does not cross a kink such as ReLU's at 0; the generator is rewound before every
 * forward pass so stochastic layers (dropout) see the same mask each time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/layer_ctx.h"
#include "singa/gradcheck.h"
#include "singa/partition.h"
#include "singa/net.h"

#define EPS 1e-2
#define MAX_CHECKS 600 /* elements checked per blob, spread evenly */

static const singa_layer_type input_type = {.name = "input"};

static int dst_forward(singa_layer *l, singa_phase phase, singa_err *err) { return 0; }

/* Stands in for a layer that reads the checked layer's output. */
static const singa_layer_type dst_type = {.name = "destination", .forward = dst_forward};

/* A one-layer net: inputs, the layer, and optionally destinations reading it.  Members point at
 * each other, so a harness lives where it was opened. */
typedef struct harness {
    singa_params params;
    singa_rng rng, saved;
    singa_net net;
    singa_layer_ctx ctx;
    singa_layer in[SINGA_MAX_DIMS], l, dst[SINGA_GRADCHECK_MAX_DSTS];
    singa_layer *srcs[SINGA_MAX_DIMS], *dst_src[SINGA_GRADCHECK_MAX_DSTS];
    singa_layer *order[1 + SINGA_GRADCHECK_MAX_DSTS];
    int ninputs, ndst;
    singa_tensor r[SINGA_GRADCHECK_MAX_DSTS]; /* the objective's weights, one per output */
} harness;

static int nouts(const harness *h) { return h->ndst ? h->ndst : 1; }

/* The layer whose data blob destination k reads (the checked layer itself, or a stand-in such
 * as a kSlice part). */
static singa_layer *out_layer(harness *h, int k) { return h->ndst ? h->dst[k].src[0] : &h->l; }

static void harness_close(harness *h)
{
    const singa_layer_type *lt = h->l.type;
    if (lt && lt->destroy && h->l.state)
        lt->destroy(&h->l);
    free(h->l.state);
    free(h->l.params);
    singa_tensor_free(&h->l.data);
    singa_tensor_free(&h->l.grad);
    singa_tensor_free(&h->l.aux); /* input layers' labels */
    for (int k = 0; k < SINGA_GRADCHECK_MAX_DSTS; k++)
        singa_tensor_free(&h->r[k]);
    for (int i = 0; i < h->ninputs; i++) {
        singa_tensor_free(&h->in[i].data);
        singa_tensor_free(&h->in[i].grad);
    }
    singa_params_free(&h->params);
}

/* The inputs, drawn from the harness's generator unless given. */
static int add_inputs(harness *h, const singa_gradcheck_input *inputs, int ninputs, singa_err *err)
{
    static const char *const input_names[SINGA_MAX_DIMS] = {"input0", "input1", "input2", "input3"};
    for (int i = 0; i < ninputs; i++) {
        const singa_gradcheck_input *spec = &inputs[i];
        singa_layer *in = &h->in[i];
        in->type = &input_type;
        in->name = (char *)input_names[i];
        in->net = &h->net;
        in->ctx = &h->ctx;
        in->needs_grad = spec->label_classes == 0;
        h->ninputs = i + 1;
        if (singa_layer_shape(in, spec->ndim, spec->shape, err) < 0)
            return -1;
        for (size_t k = 0; k < in->data.size; k++) {
            float u = singa_rng_uniform(&h->rng);
            in->data.data[k] = spec->values ? spec->values[k]
                               : spec->label_classes
                                   ? (float)singa_rng_below(&h->rng, (uint64_t)spec->label_classes)
                                   : (u < 0.5f ? -1.0f : 1.0f) * (0.1f + singa_rng_uniform(&h->rng));
        }
        h->srcs[i] = in;
    }
    return 0;
}

static int harness_open(harness *h, const singa_registry *reg, const singa_conf *conf,
                        const singa_gradcheck_input *inputs, int ninputs, int ndst, uint64_t seed,
                        singa_err *err)
{
    static const char *const dst_names[SINGA_GRADCHECK_MAX_DSTS] = {"dst0", "dst1", "dst2", "dst3",
                                                                    "dst4", "dst5", "dst6", "dst7"};
    memset(h, 0, sizeof *h);
    singa_params_init(&h->params);
    const char *type = singa_conf_str(conf, "type", "");
    const singa_layer_type *lt = singa_registry_find(reg, type);
    if (!lt)
        return singa_err_set(err, "gradcheck: unknown layer type '%s'", type);
    const singa_field *const schemas[] = {singa_layer_common_fields, lt->fields, NULL};
    if (singa_conf_check(conf, schemas, "gradcheck layer", err) < 0)
        return -1;
    if (ninputs < lt->min_src || (lt->max_src >= 0 && ninputs > lt->max_src))
        return singa_err_set(err, "gradcheck: %s takes %d to %d sources, got %d", type, lt->min_src,
                             lt->max_src, ninputs);
    if (ninputs > SINGA_MAX_DIMS)
        return singa_err_set(err, "gradcheck: at most %d inputs", SINGA_MAX_DIMS);
    if (ndst < 0 || ndst > SINGA_GRADCHECK_MAX_DSTS)
        return singa_err_set(err, "gradcheck: 0 to %d destinations, not %d", SINGA_GRADCHECK_MAX_DSTS, ndst);

    singa_rng_seed(&h->rng, seed, 1);
    h->net = (singa_net){.phase = SINGA_PHASE_TRAIN, .params = &h->params, .rng = &h->rng, .seed = seed,
                        .split = {0, 1, 0, 1}, .layer_ctx = &h->ctx};
    if (add_inputs(h, inputs, ninputs, err) < 0)
        return -1;
    h->l.type = lt;
    h->l.name = (char *)singa_conf_str(conf, "name", type);
    h->l.conf = conf;
    h->l.net = &h->net;
    h->l.ctx = &h->ctx;
    h->l.src = h->srcs;
    h->l.nsrc = ninputs;
    h->l.needs_grad = true;
    h->order[0] = &h->l;
    for (int k = 0; k < ndst; k++) {
        singa_layer *d = &h->dst[k];
        d->type = &dst_type;
        d->name = (char *)dst_names[k];
        d->net = &h->net;
        d->ctx = &h->ctx;
        d->src = &h->dst_src[k];
        d->nsrc = 1;
        d->needs_grad = true;
        h->dst_src[k] = &h->l;
        h->order[1 + k] = d;
    }
    h->ndst = ndst;
    /* The destinations are in the net before setup, as in a real net, for layers that look. */
    h->net.layers = h->order;
    h->net.nlayers = 1 + ndst;
    if (lt->state_size && !(h->l.state = calloc(1, lt->state_size)))
        return singa_err_set(err, "out of memory");
    singa_net_ctx_sync(&h->net);
    return lt->setup(&h->l, err);
}

static double objective(harness *h, singa_err *err)
{
    h->rng = h->saved;
    if (singa_net_forward(&h->net, err) < 0)
        return NAN;
    if (h->l.type->flags & SINGA_LAYER_LOSS)
        return singa_metrics_avg(&h->net.metrics, "loss", 0);
    double j = 0;
    for (int k = 0; k < nouts(h); k++) {
        const singa_tensor *out = &out_layer(h, k)->data;
        for (size_t i = 0; i < out->size; i++)
            j += (double)out->data[i] * h->r[k].data[i];
    }
    return j;
}

static void compare(singa_gradcheck_report *rep, const char *blob, size_t i, double a, double n)
{
    double rel = fabs(a - n) / fmax(fabs(a) + fabs(n), 1e-2);
    rep->checked++;
    if (rel > rep->max_rel_err) {
        rep->max_rel_err = rel;
        snprintf(rep->worst, sizeof rep->worst, "%s[%zu]: analytic %.6g, numeric %.6g", blob, i, a, n);
    }
}

/* Perturbs every checked element of `x`, comparing with the analytic gradient `g`. */
static int check_blob(harness *h, const char *blob, singa_tensor *x, const float *g,
                      singa_gradcheck_report *rep, singa_err *err)
{
    size_t step = x->size > MAX_CHECKS ? x->size / MAX_CHECKS : 1;
    for (size_t i = 0; i < x->size; i += step) {
        float keep = x->data[i];
        x->data[i] = keep + (float)EPS;
        double jp = objective(h, err);
        x->data[i] = keep - (float)EPS;
        double jm = objective(h, err);
        x->data[i] = keep;
        if (isnan(jp) || isnan(jm))
            return -1;
        compare(rep, blob, i, g[i], (jp - jm) / (2 * EPS));
    }
    return 0;
}

/* Analytic gradients: each output's gradient is its R, added up where outputs coincide. */
static int analytic(harness *h, singa_err *err)
{
    if (isnan(objective(h, err)))
        return -1;
    for (int i = 0; i < h->ninputs; i++)
        h->in[i].grad_written = false;
    for (int k = 0; k < nouts(h); k++)
        out_layer(h, k)->grad_written = false;
    for (int k = 0; k < nouts(h); k++) {
        singa_layer *o = out_layer(h, k);
        float beta = singa_layer_grad_beta(o);
        for (size_t i = 0; i < o->grad.size; i++)
            o->grad.data[i] = beta * o->grad.data[i] + h->r[k].data[i];
    }
    if (h->l.type->backward)
        h->l.type->backward(&h->l);
    return 0;
}

int singa_gradcheck(const singa_registry *reg, const singa_conf *conf,
                    const singa_gradcheck_input *inputs, int ninputs, int ndst, uint64_t seed,
                    singa_gradcheck_report *rep, singa_err *err)
{
    memset(rep, 0, sizeof *rep);
    harness *h = malloc(sizeof *h);
    float **g = NULL;
    int rc = -1, nblobs = 0;
    if (!h)
        return singa_err_set(err, "out of memory");
    if (harness_open(h, reg, conf, inputs, ninputs, ndst, seed, err) < 0)
        goto out;
    for (int k = 0; k < nouts(h); k++) {
        if (singa_tensor_init_like(&h->r[k], &out_layer(h, k)->data, err) < 0)
            goto out;
        for (size_t i = 0; i < h->r[k].size; i++)
            h->r[k].data[i] = (float)singa_rng_gaussian(&h->rng);
    }
    h->saved = h->rng;

    if (analytic(h, err) < 0)
        goto out;
    nblobs = ninputs + h->l.nparams;
    if (!(g = calloc((size_t)nblobs, sizeof *g))) {
        singa_err_set(err, "out of memory");
        goto out;
    }
    for (int b = 0; b < nblobs; b++) {
        singa_tensor *t = b < ninputs ? &h->in[b].grad : &h->l.params[b - ninputs]->grad;
        if (!t->data)
            continue;
        if (!(g[b] = malloc(t->size * sizeof(float)))) {
            singa_err_set(err, "out of memory");
            goto out;
        }
        memcpy(g[b], t->data, t->size * sizeof(float));
    }
    for (int b = 0; b < nblobs; b++) {
        char blob[96];
        if (b < ninputs ? !h->in[b].needs_grad : h->l.params[b - ninputs]->state) /* state: no gradient */
            continue;
        singa_tensor *x = b < ninputs ? &h->in[b].data : &h->l.params[b - ninputs]->data;
        snprintf(blob, sizeof blob, "%s", b < ninputs ? h->in[b].name : h->l.params[b - ninputs]->name);
        if (check_blob(h, blob, x, g[b], rep, err) < 0)
            goto out;
    }
    rc = 0;
out:
    for (int b = 0; g && b < nblobs; b++)
        free(g[b]);
    free(g);
    harness_close(h);
    free(h);
    return rc;
}

int singa_layer_probe(const singa_registry *reg, const singa_conf *conf,
                      const singa_gradcheck_input *inputs, int ninputs, int ndst, uint64_t seed,
                      singa_tensor *outs, singa_metrics *metrics, singa_err *err)
{
    harness *h = malloc(sizeof *h);
    int rc = -1, k = 0;
    if (!h)
        return singa_err_set(err, "out of memory");
    if (harness_open(h, reg, conf, inputs, ninputs, ndst, seed, err) < 0 ||
        singa_net_forward(&h->net, err) < 0)
        goto out;
    for (; k < nouts(h); k++) {
        if (singa_tensor_init_like(&outs[k], &out_layer(h, k)->data, err) < 0)
            goto out;
        singa_tensor_copy(&outs[k], &out_layer(h, k)->data);
    }
    *metrics = h->net.metrics;
    rc = 0;
out:
    while (rc < 0 && k > 0)
        singa_tensor_free(&outs[--k]);
    harness_close(h);
    free(h);
    return rc;
}

/* Rewinds every input layer and the generator to where they were when `save` ran. */
typedef struct net_rewind {
    int64_t (*cursor)[SINGA_CURSOR_LEN];
    singa_rng rng;
} net_rewind;

static void rewind_save(singa_net *net, net_rewind *r)
{
    r->rng = *net->rng;
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i]->type->get_cursor)
            net->layers[i]->type->get_cursor(net->layers[i], r->cursor[i]);
}

static double net_objective(singa_net *net, const net_rewind *r, singa_err *err)
{
    *net->rng = r->rng;
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i]->type->set_cursor && net->layers[i]->type->set_cursor(net->layers[i], r->cursor[i], err) < 0)
            return NAN;
    if (singa_net_forward(net, err) < 0)
        return NAN;
    return singa_metrics_avg(&net->metrics, "loss", NAN);
}

/* The losses the objective averages: the parts of a loss cut on the batch report one loss
 * between them (their gradients are already scaled to the whole batch). */
static double loss_count(const singa_net *net)
{
    double losses = 0;
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i]->type->flags & SINGA_LAYER_LOSS)
            losses += 1.0 / (net->layers[i]->part.count > 1 ? net->layers[i]->part.count : 1);
    for (int m = 0; m < net->metrics.n && losses == 0; m++) /* losses from layers of other kinds */
        if (strcmp(net->metrics.name[m], "loss") == 0)
            losses = net->metrics.count[m];
    return losses;
}

/* The check of a built training net whose params are in `params`. */
static int check_net(singa_net *net, singa_params *params, singa_gradcheck_report *rep, singa_err *err)
{
    net_rewind rw = {0};
    float *g = NULL;
    int rc = -1;
    if (!(rw.cursor = calloc((size_t)net->nlayers, sizeof *rw.cursor))) {
        singa_err_set(err, "out of memory");
        goto out;
    }
    rewind_save(net, &rw);
    if (isnan(net_objective(net, &rw, err))) {
        if (!err || !err->msg[0])
            singa_err_set(err, "gradcheck: the net reports no \"loss\"");
        goto out;
    }
    double losses = loss_count(net);
    if (singa_net_backward(net, err) < 0)
        goto out;
    for (int i = 0; i < params->n; i++) {
        singa_param *p = params->items[i];
        if (p->owner || !p->trained)
            continue;
        /* The analytic gradient of the mean loss: summed over sharers, over the loss count. */
        free(g);
        if (!(g = malloc(p->data.size * sizeof *g))) {
            singa_err_set(err, "out of memory");
            goto out;
        }
        for (size_t k = 0; k < p->data.size; k++) {
            double sum = p->grad.data[k];
            for (int j = 0; j < params->n; j++)
                if (params->items[j]->owner == p)
                    sum += params->items[j]->grad.data[k];
            g[k] = (float)(sum / losses);
        }
        size_t step = p->data.size > MAX_CHECKS ? p->data.size / MAX_CHECKS : 1;
        for (size_t k = 0; k < p->data.size; k += step) {
            float keep = p->data.data[k];
            p->data.data[k] = keep + (float)EPS;
            double jp = net_objective(net, &rw, err);
            p->data.data[k] = keep - (float)EPS;
            double jm = net_objective(net, &rw, err);
            p->data.data[k] = keep;
            if (isnan(jp) || isnan(jm))
                goto out;
            compare(rep, p->name, k, g[k], (jp - jm) / (2 * EPS));
        }
    }
    rc = 0;
out:
    free(g);
    free(rw.cursor);
    return rc;
}

int singa_gradcheck_net(const singa_registry *reg, const singa_conf *netconf, uint64_t seed,
                        singa_gradcheck_report *rep, singa_err *err)
{
    return singa_gradcheck_net_parts(reg, netconf, 1, seed, rep, err);
}

int singa_gradcheck_net_parts(const singa_registry *reg, const singa_conf *netconf, int nworkers, uint64_t seed,
                              singa_gradcheck_report *rep, singa_err *err)
{
    memset(rep, 0, sizeof *rep);
    singa_params params;
    singa_rng rng;
    singa_net *net = NULL;
    singa_graph g = {0};
    singa_params_init(&params);
    singa_rng_seed(&rng, seed, 1);
    int rc = nworkers > 1 ? singa_graph_build(&g, netconf, SINGA_PHASE_TRAIN, nworkers, reg, err) : 0;
    if (rc == 0)
        rc = nworkers > 1 ? singa_net_create_graph(&net, &g, reg, &params, &rng, seed, NULL, err)
                          : singa_net_create(&net, netconf, SINGA_PHASE_TRAIN, reg, &params, &rng, seed, NULL, err);
    if (rc == 0)
        rc = check_net(net, &params, rep, err);
    singa_net_free(net);
    singa_graph_free(&g);
    singa_params_free(&params);
    return rc;
}
