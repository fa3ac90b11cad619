/* kDropout: in the training phase zeroes each feature with probability dropout_ratio and scales
 * the rest by 1 / (1 - ratio) (inverted dropout, so other phases pass features through). */
#include "layers/ctx.h"
#include "layers/layers.h"
#include "onnx/graph.h"
#include "singa/net.h"

typedef struct dropout_state {
    float ratio;
    singa_tensor mask; /* 0 or 1 / (1 - ratio) */
} dropout_state;

static const singa_field fields[] = {{"dropout_ratio", SINGA_FIELD_NUM}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    dropout_state *s = l->state;
    double r = singa_conf_num(l->conf, "dropout_ratio", 0.5);
    if (!(r >= 0 && r < 1))
        return singa_layer_err(l, err, "field 'dropout_ratio' must be in [0, 1), got %g", r);
    s->ratio = (float)r;
    if (singa_layer_setup_like_src(l, err) < 0)
        return -1;
    return singa_tensor_init_like(&s->mask, &l->data, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    dropout_state *s = l->state;
    const float *x = l->src[0]->data.data;
    float *y = l->data.data, *m = s->mask.data, keep = 1.0f / (1.0f - s->ratio);
    if (phase != SINGA_PHASE_TRAIN) {
        singa_tensor_copy(&l->data, &l->src[0]->data);
        return 0;
    }
    for (size_t i = 0; i < l->data.size; i++) {
        m[i] = singa_rng_uniform(l->ctx->rng) >= s->ratio ? keep : 0.0f;
        y[i] = x[i] * m[i];
    }
    return 0;
}

static void backward(singa_layer *l)
{
    dropout_state *s = l->state;
    singa_layer *src = l->src[0];
    if (!src->needs_grad)
        return;
    float beta = singa_layer_grad_beta(src), *dx = src->grad.data;
    for (size_t i = 0; i < l->data.size; i++)
        dx[i] = beta * dx[i] + l->grad.data[i] * s->mask.data[i];
}

static void destroy(singa_layer *l)
{
    dropout_state *s = l->state;
    singa_tensor_free(&s->mask);
}

const singa_layer_type singa_dropout_layer = {
    .name = "kDropout", .flags = SINGA_LAYER_FEATURE_WISE | SINGA_LAYER_FEATURE_PARTS, .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(dropout_state), .setup = setup, .forward = forward,
    .backward = backward, .destroy = destroy,
    .export_onnx = singa_ox_identity,
};
