/* Finite-difference gradient checks.  Inputs are drawn with magnitudes in [0.1, 1.1] so that a
 * perturbation does not cross a kink such as ReLU's at 0; the generator is rewound before every
 * forward pass so stochastic layers (dropout) see the same mask each time. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "singa/gradcheck.h"
#include "singa/net.h"

#define EPS 1e-2
#define MAX_CHECKS 600 /* elements checked per blob, spread evenly */

static const singa_layer_type input_type = {.name = "input"};

static double objective(singa_layer *l, const singa_tensor *r, singa_rng *rng, const singa_rng *saved,
                        singa_err *err)
{
    *rng = *saved;
    if (singa_net_forward(l->net, err) < 0)
        return NAN;
    if (l->type->flags & SINGA_LAYER_LOSS)
        return singa_metrics_avg(&l->net->metrics, "loss", 0);
    double j = 0;
    for (size_t i = 0; i < l->data.size; i++)
        j += (double)l->data.data[i] * r->data[i];
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
static int check_blob(singa_layer *l, const char *blob, singa_tensor *x, const float *g,
                      const singa_tensor *r, singa_rng *rng, const singa_rng *saved,
                      singa_gradcheck_report *rep, singa_err *err)
{
    size_t step = x->size > MAX_CHECKS ? x->size / MAX_CHECKS : 1;
    for (size_t i = 0; i < x->size; i += step) {
        float keep = x->data[i];
        x->data[i] = keep + (float)EPS;
        double jp = objective(l, r, rng, saved, err);
        x->data[i] = keep - (float)EPS;
        double jm = objective(l, r, rng, saved, err);
        x->data[i] = keep;
        if (isnan(jp) || isnan(jm))
            return -1;
        compare(rep, blob, i, g[i], (jp - jm) / (2 * EPS));
    }
    return 0;
}

int singa_gradcheck(const singa_registry *reg, const singa_conf *conf,
                    const singa_gradcheck_input *inputs, int ninputs, uint64_t seed,
                    singa_gradcheck_report *rep, singa_err *err)
{
    memset(rep, 0, sizeof *rep);
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

    singa_params params;
    singa_rng rng, saved;
    singa_params_init(&params);
    singa_rng_seed(&rng, seed, 1);
    singa_net net = {.phase = SINGA_PHASE_TRAIN, .params = &params, .rng = &rng, .seed = seed};
    singa_layer in[SINGA_MAX_DIMS] = {{0}}, l = {0}, *srcs[SINGA_MAX_DIMS], *order[1] = {&l};
    singa_tensor r = {0};
    float **g = NULL;
    int rc = -1, nblobs = 0;
    if (ninputs > SINGA_MAX_DIMS) {
        singa_err_set(err, "gradcheck: at most %d inputs", SINGA_MAX_DIMS);
        goto out;
    }
    for (int i = 0; i < ninputs; i++) {
        const singa_gradcheck_input *spec = &inputs[i];
        in[i].type = &input_type;
        in[i].name = (char *)(i ? "input1" : "input0");
        in[i].net = &net;
        in[i].needs_grad = spec->label_classes == 0;
        if (singa_layer_shape(&in[i], spec->ndim, spec->shape, err) < 0)
            goto out;
        for (size_t k = 0; k < in[i].data.size; k++) {
            float u = singa_rng_uniform(&rng);
            in[i].data.data[k] = spec->label_classes
                                     ? (float)singa_rng_below(&rng, (uint64_t)spec->label_classes)
                                     : (u < 0.5f ? -1.0f : 1.0f) * (0.1f + singa_rng_uniform(&rng));
        }
        srcs[i] = &in[i];
    }
    l.type = lt;
    l.name = (char *)singa_conf_str(conf, "name", type);
    l.conf = conf;
    l.net = &net;
    l.src = srcs;
    l.nsrc = ninputs;
    l.needs_grad = true;
    if (lt->state_size && !(l.state = calloc(1, lt->state_size))) {
        singa_err_set(err, "out of memory");
        goto out;
    }
    if (lt->setup(&l, err) < 0)
        goto out;
    net.layers = order;
    net.nlayers = 1;
    if (singa_tensor_init_like(&r, &l.data, err) < 0)
        goto out;
    for (size_t k = 0; k < r.size; k++)
        r.data[k] = (float)singa_rng_gaussian(&rng);
    saved = rng;

    /* Analytic gradients. */
    if (isnan(objective(&l, &r, &rng, &saved, err)))
        goto out;
    singa_tensor_copy(&l.grad, &r);
    for (int i = 0; i < ninputs; i++)
        in[i].grad_written = false;
    if (lt->backward)
        lt->backward(&l);
    nblobs = ninputs + l.nparams;
    if (!(g = calloc((size_t)nblobs, sizeof *g))) {
        singa_err_set(err, "out of memory");
        goto out;
    }
    for (int b = 0; b < nblobs; b++) {
        singa_tensor *t = b < ninputs ? &in[b].grad : &l.params[b - ninputs]->grad;
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
        if (b < ninputs && !in[b].needs_grad)
            continue;
        singa_tensor *x = b < ninputs ? &in[b].data : &l.params[b - ninputs]->data;
        snprintf(blob, sizeof blob, "%s", b < ninputs ? in[b].name : l.params[b - ninputs]->name);
        if (check_blob(&l, blob, x, g[b], &r, &rng, &saved, rep, err) < 0)
            goto out;
    }
    rc = 0;
out:
    for (int b = 0; g && b < nblobs; b++)
        free(g[b]);
    free(g);
    if (lt->destroy && l.state)
        lt->destroy(&l);
    free(l.state);
    free(l.params);
    singa_tensor_free(&l.data);
    singa_tensor_free(&l.grad);
    singa_tensor_free(&r);
    for (int i = 0; i < ninputs; i++) {
        singa_tensor_free(&in[i].data);
        singa_tensor_free(&in[i].grad);
    }
    singa_params_free(&params);
    return rc;
}
