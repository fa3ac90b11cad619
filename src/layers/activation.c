/* Element-wise activations: kReLU (negative_slope), kSigmoid, kTanh and kSTanh
 * (1.7159047 * tanh(0.6666667 x)).  Gradients are computed from the outputs. */
#include "core/vmath.h"
#include "layers/layers.h"

#define STANH_A 1.7159047f
#define STANH_B 0.6666667f

static const singa_field no_fields[] = {{NULL, 0}};
static const singa_field relu_fields[] = {{"negative_slope", SINGA_FIELD_NUM}, {NULL, 0}};

static float slope(const singa_layer *l) { return (float)singa_conf_num(l->conf, "negative_slope", 0.0); }

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const float *x = l->src[0]->data.data;
    float *y = l->data.data;
    size_t n = l->data.size;
    if (l->type == &singa_relu_layer)
        singa_vrelu(y, x, n, slope(l));
    else if (l->type == &singa_sigmoid_layer)
        singa_vsigmoid(y, x, n);
    else if (l->type == &singa_tanh_layer)
        singa_vtanh(y, x, n, 1.0f, 1.0f);
    else
        singa_vtanh(y, x, n, STANH_B, STANH_A);
    return 0;
}

static void backward(singa_layer *l)
{
    singa_layer *src = l->src[0];
    if (!src->needs_grad)
        return;
    float beta = singa_layer_grad_beta(src), *dx = src->grad.data;
    const float *dy = l->grad.data, *y = l->data.data;
    size_t n = l->data.size;
    if (l->type == &singa_relu_layer)
        singa_vrelu_grad(dx, dy, y, n, slope(l), beta);
    else if (l->type == &singa_sigmoid_layer)
        singa_vsigmoid_grad(dx, dy, y, n, beta);
    else if (l->type == &singa_tanh_layer)
        singa_vtanh_grad(dx, dy, y, n, 1.0f, 1.0f, beta);
    else
        singa_vtanh_grad(dx, dy, y, n, STANH_B, STANH_A, beta);
}

#define ACTIVATION(var, type_name, field_list)                                                    \
    const singa_layer_type var = {                                                                 \
        .name = type_name, .fields = field_list, .min_src = 1, .max_src = 1,                       \
        .setup = singa_layer_setup_like_src, .forward = forward, .backward = backward,             \
    }

ACTIVATION(singa_relu_layer, "kReLU", relu_fields);
ACTIVATION(singa_sigmoid_layer, "kSigmoid", no_fields);
ACTIVATION(singa_tanh_layer, "kTanh", no_fields);
ACTIVATION(singa_stanh_layer, "kSTanh", no_fields);
