/* kMnist: pixels to features, x / norm_a - norm_b; images gain a channel axis (N x 1 x H x W).
 * SINGA's mnist_conf also declared elastic distortion fields that its MnistLayer never read:
 * accepted at their default 0, refused otherwise rather than silently doing nothing. */
#include "layers/layers.h"
#include "onnx/graph.h"

typedef struct mnist_state {
    float inv_a, b;
} mnist_state;

static const char *const unused[] = {"kernel", "sigma", "alpha", "beta", "gamma", "resize", "elastic_freq"};

static const singa_field fields[] = {
    {"norm_a", SINGA_FIELD_NUM}, {"norm_b", SINGA_FIELD_NUM}, {"kernel", SINGA_FIELD_NUM},
    {"sigma", SINGA_FIELD_NUM},  {"alpha", SINGA_FIELD_NUM},  {"beta", SINGA_FIELD_NUM},
    {"gamma", SINGA_FIELD_NUM},  {"resize", SINGA_FIELD_NUM}, {"elastic_freq", SINGA_FIELD_NUM},
    {NULL, 0},
};

static int setup(singa_layer *l, singa_err *err)
{
    mnist_state *s = l->state;
    for (size_t i = 0; i < sizeof unused / sizeof unused[0]; i++)
        if (singa_conf_num(l->conf, unused[i], 0.0) != 0)
            return singa_layer_err(l, err, "field '%s' (SINGA's elastic distortion) is not supported: SINGA's MnistLayer "
                                           "never applied it either; remove it", unused[i]);
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

static int export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    char a[SINGA_OX_NAME_LEN], b[SINGA_OX_NAME_LEN], scaled[SINGA_OX_NAME_LEN], shifted[SINGA_OX_NAME_LEN];
    double norm_a = singa_conf_num(l->conf, "norm_a", 1.0);
    /* The layer's own float constants, so the products round as its forward pass does. */
    singa_ox_scalar(x, singa_ox_name(a, l, "inv_norm_a"), (float)(1.0 / norm_a));
    singa_ox_scalar(x, singa_ox_name(b, l, "norm_b"), (float)singa_conf_num(l->conf, "norm_b", 0.0));
    singa_ox_node(x, "Mul", singa_ox_name(scaled, l, "scaled"), 2, l->src[0]->name, a, NULL);
    if (l->data.ndim == l->src[0]->data.ndim) {
        singa_ox_node(x, "Sub", l->name, 2, scaled, b, NULL);
        return 0;
    }
    singa_ox_node(x, "Sub", singa_ox_name(shifted, l, "shifted"), 2, scaled, b, NULL);
    singa_ox_reshape_to(x, l, shifted);
    return 0;
}

const singa_layer_type singa_mnist_layer = {
    .name = "kMnist", .flags = SINGA_LAYER_FEATURE_WISE | SINGA_LAYER_FEATURE_PARTS, .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(mnist_state), .setup = setup, .forward = forward,
    .export_onnx = export_onnx,
};
