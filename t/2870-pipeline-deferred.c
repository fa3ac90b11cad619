/* Deferred weight gradients of a pipeline (net/pipeline.c, layers/deferred.h): in a net cut by
 * location over 2 workers and run in m micro-batches, each kInnerProduct (with and without its
 * bias, W stored either way) writes its params' gradients once a step over all the micro-batches'
 * rows, a layer type that cannot defer writes its own per micro-batch, and every param's gradient
 * after one step equals the unpipelined net's (to 1e-5 relative), with the step's grad_alpha and
 * grad_beta (an updater's -lr and momentum) applied once.  The rows of every micro-batch differ,
 * so rows taken from the wrong micro-batch or in the wrong place show. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/deferred.h"
#include "net/parts.h"
#include "singa/singa.h"
#include "tap.h"

enum { BATCH = 12 };

/* kScaleTest: y = x s per feature, its param's gradient written per micro-batch. */
static int scale_setup(singa_layer *l, singa_err *err)
{
    int rows = singa_tensor_rows(&l->src[0]->data), cols = singa_tensor_cols(&l->src[0]->data);
    int shape[2] = {rows, cols};
    if (!singa_layer_param(l, 0, "scale", 1, &cols, cols, cols, "kUniform", err))
        return -1;
    return singa_layer_shape(l, 2, shape, err);
}

static int scale_forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    (void)phase, (void)err;
    const float *s = l->params[0]->data.data;
    int cols = singa_tensor_cols(&l->data);
    for (size_t k = 0; k < l->data.size; k++)
        l->data.data[k] = l->src[0]->data.data[k] * s[k % (size_t)cols];
    return 0;
}

static void scale_backward(singa_layer *l)
{
    singa_layer *src = l->src[0];
    singa_param *p = l->params[0];
    int cols = singa_tensor_cols(&l->data);
    if (src->needs_grad) {
        float beta = singa_layer_grad_beta(src);
        for (size_t k = 0; k < l->grad.size; k++)
            src->grad.data[k] = beta * src->grad.data[k] + l->grad.data[k] * p->data.data[k % (size_t)cols];
    }
    singa_param_grad_begin(p);
    for (int c = 0; c < cols; c++) {
        double sum = 0;
        for (int r = 0; r < singa_tensor_rows(&l->grad); r++)
            sum += (double)l->grad.data[r * cols + c] * src->data.data[r * cols + c];
        p->grad.data[c] = p->grad_beta * p->grad.data[c] + p->grad_alpha * (float)sum;
    }
    singa_param_grad_done(p);
}

static const singa_layer_type scale_type = {
    .name = "kScaleTest", .min_src = 1, .max_src = 1, .setup = scale_setup, .forward = scale_forward,
    .backward = scale_backward,
};

static const char *conf_text(const char *csv, char *buf, size_t len)
{
    snprintf(buf, len,
             "{ layer = {"
             " { name = 'data', type = 'kCSVInput', path = '%s', batchsize = %d, location = 0 },"
             " { name = 'label', type = 'kLabel', srclayer = 'data', location = 0 },"
             " { name = 'fc1', type = 'kInnerProduct', srclayer = 'data', num_output = 7, location = 0 },"
             " { name = 'act', type = 'kTanh', srclayer = 'fc1', location = 0 },"
             " { name = 'scale', type = 'kScaleTest', srclayer = 'act', location = 1 },"
             " { name = 'fc2', type = 'kInnerProduct', srclayer = 'scale', num_output = 5, transpose = true, location = 1 },"
             " { name = 'fc3', type = 'kInnerProduct', srclayer = 'fc2', num_output = 4, bias_term = false, location = 1 },"
             " { name = 'loss', type = 'kSoftmaxLoss', srclayer = { 'fc3', 'label' }, location = 1 } } }",
             csv, BATCH);
    return buf;
}

/* Every param's gradient preset, and written with an updater's alpha and beta. */
static void preset(singa_params *ps)
{
    for (int i = 0; i < ps->n; i++) {
        singa_param *p = ps->items[i];
        for (size_t k = 0; k < p->grad.size; k++)
            p->grad.data[k] = 0.01f * (float)((k * 7 + (size_t)i) % 13);
        p->grad_alpha = -0.5f;
        p->grad_beta = 0.9f;
    }
}

/* One step of the net (pipelined in m micro-batches over 2 workers when m > 0). */
static int step(const singa_registry *reg, const singa_conf *conf, int m, singa_params *ps, char *deferred,
                singa_err *err)
{
    singa_rng rng;
    singa_net *net = NULL;
    singa_graph g = {0};
    singa_params_init(ps);
    singa_rng_seed(&rng, 5, 0);
    int rc = m ? singa_graph_build(&g, conf, SINGA_PHASE_TRAIN, 2, reg, err) : 0;
    if (rc == 0)
        rc = m ? singa_net_create_pipeline(&net, &g, m, reg, ps, &rng, 5, NULL, err)
               : singa_net_create(&net, conf, SINGA_PHASE_TRAIN, reg, ps, &rng, 5, NULL, err);
    if (rc == 0)
        preset(ps);
    if (rc == 0)
        rc = m ? singa_net_forward_backward(net, err) : singa_net_forward(net, err) < 0 ? -1 : singa_net_backward(net, err);
    for (int k = 0; rc == 0 && m && k < 2; k++) { /* which layers deferred, as "fc1 fc2 ..." */
        const singa_net *at = singa_net_location(net, k);
        for (int i = 0; i < at->nlayers; i++)
            if (singa_layer_defers(at->layers[i]))
                snprintf(deferred + strlen(deferred), 64, "%s%s", *deferred ? " " : "", at->layers[i]->name);
    }
    singa_net_free(net);
    singa_graph_free(&g);
    return rc;
}

/* The largest relative difference between the params' gradients. */
static double grad_diff(const singa_params *a, const singa_params *ref)
{
    double worst = a->n == ref->n ? 0 : INFINITY;
    for (int i = 0; i < ref->n && worst < INFINITY; i++) {
        const singa_param *p = ref->items[i], *q = singa_params_find(a, p->name);
        if (!q || q->grad.size != p->grad.size)
            return INFINITY;
        double num = 0, den = 0;
        for (size_t k = 0; k < p->grad.size; k++) {
            num += fabs((double)q->grad.data[k] - p->grad.data[k]);
            den += fabs((double)p->grad.data[k]);
        }
        worst = fmax(worst, num / fmax(den, 1e-12));
    }
    return worst;
}

int main(void)
{
    char csv[] = "/tmp/singa-2870-XXXXXX", text[2048];
    int fd = mkstemp(csv);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    for (int r = 0; f && r < BATCH; r++) { /* every row its own label and features */
        fprintf(f, "%d", r % 4);
        for (int c = 0; c < 6; c++)
            fprintf(f, ",%.3f", ((r * 7 + c * 3) % 11) / 11.0 - 0.4 + 0.05 * r);
        fprintf(f, "\n");
    }
    if (!f || fclose(f) != 0)
        return printf("Bail out! cannot write %s\n", csv), 1;
    singa_registry *reg = singa_registry_new();
    singa_err err = {{0}};
    singa_conf *conf = singa_conf_parse_text(conf_text(csv, text, sizeof text), &err);
    if (!conf || singa_registry_add(reg, &scale_type, &err) < 0)
        return printf("Bail out! %s\n", err.msg), 1;
    singa_params ref;
    char none[256] = "";
    int rc = step(reg, conf, 0, &ref, none, &err);
    ok(rc == 0, "the unpipelined net's step%s%s", rc ? ": " : "", rc ? err.msg : "");
    for (int m = 2; m <= 4; m++) {
        singa_params ps;
        char deferred[256] = "";
        rc = step(reg, conf, m, &ps, deferred, &err);
        double d = rc == 0 ? grad_diff(&ps, &ref) : INFINITY;
        ok(rc == 0 && d <= 1e-5, "micro_batches = %d: every param's gradient is the unpipelined net's (worst %.1e)%s%s", m,
           d, rc ? ": " : "", rc ? err.msg : "");
        ok(strcmp(deferred, "fc1 fc2 fc3") == 0, "micro_batches = %d: the kInnerProducts deferred theirs, kScaleTest not (%s)",
           m, deferred);
        singa_params_free(&ps);
    }
    singa_params_free(&ref);
    singa_conf_free(conf);
    singa_registry_free(reg);
    remove(csv);
    return done_testing();
}
