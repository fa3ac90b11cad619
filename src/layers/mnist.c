/* kMnist: pixels to features, x / norm_a - norm_b; images gain a channel axis (N x 1 x H x W). */
#include "layers/layers.h"

typedef struct mnist_state {
    float inv_a, b;
} mnist_state;

static const singa_field fields[] = {
    {"norm_a", SINGA_FIELD_NUM}, {"norm_b", SINGA_FIELD_NUM}, {NULL, 0},
};

static int setup(singa_layer *l, singa_err *err)
{
    mnist_state *s = l->state;
    double a = singa_conf_num(l->conf, "norm_a", 1.0);
    if (a == 0)
        return singa_layer_err(l, err, "field 'norm_a' must not be 0");
    s->inv_a = (float)(1.0 / a);
    s->b = (float)singa_conf_num(l->conf, "norm_b", 0.0);
    const singa_tensor *in = &l->src[0]->data;
    if (in->ndim == 3) {
        int shape[4] = {in->shape[0], 1, in->shape[1], in->shape[2]};
        return singa_layer_shape(l, 4, shape, err);
    }
    return singa_layer_setup_like_src(l, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    mnist_state *s = l->state;
    const float *x = l->src[0]->data.data;
    float *y = l->data.data;
    for (size_t i = 0; i < l->data.size; i++)
        y[i] = x[i] * s->inv_a - s->b;
    return 0;
}

const singa_layer_type singa_mnist_layer = {
    .name = "kMnist", .flags = SINGA_LAYER_FEATURE_WISE | SINGA_LAYER_FEATURE_PARTS, .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(mnist_state), .setup = setup, .forward = forward,
};
