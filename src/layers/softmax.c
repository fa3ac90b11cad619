/* kSoftmax: a softmax over the features of each instance (each row of the matrix view), and the
 * row softmax kSoftmaxLoss uses too.  The gradient goes through it:
 * dx = y * (dy - sum(dy * y)) per row. */
#include <math.h>

#include "core/vmath.h"
#include "layers/layers.h"
#include "onnx/graph.h"

double singa_softmax_row(float *p, const float *x, int k)
{
    float mx = x[0];
    for (int c = 1; c < k; c++)
        mx = x[c] > mx ? x[c] : mx;
    float sum = singa_vexp_shift(p, x, (size_t)k, mx), inv = 1.0f / sum;
    for (int c = 0; c < k; c++)
        p[c] *= inv;
    return (double)mx + log(sum);
}

static const singa_field fields[] = {{NULL, 0}};

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const singa_tensor *x = &l->src[0]->data;
    int k = singa_tensor_cols(x);
    for (int r = 0; r < singa_tensor_rows(x); r++)
        singa_softmax_row(l->data.data + (size_t)r * (size_t)k, x->data + (size_t)r * (size_t)x->ld, k);
    return 0;
}

static void backward(singa_layer *l)
{
    singa_layer *src = l->src[0];
    if (!src->needs_grad)
        return;
    int k = singa_tensor_cols(&l->data);
    float beta = singa_layer_grad_beta(src);
    for (int r = 0; r < singa_tensor_rows(&l->data); r++) {
        const float *y = l->data.data + (size_t)r * (size_t)k, *dy = l->grad.data + (size_t)r * (size_t)k;
        float *dx = src->grad.data + (size_t)r * (size_t)src->grad.ld, dot = 0.0f;
        for (int c = 0; c < k; c++)
            dot += dy[c] * y[c];
        for (int c = 0; c < k; c++)
            dx[c] = beta * dx[c] + y[c] * (dy[c] - dot);
    }
}

/* Softmax over each instance's features: of source 0's matrix view, in l's shape. */
static void softmax_rows(singa_onnx_graph *x, const singa_layer *l)
{
    char flat[SINGA_OX_NAME_LEN], sm[SINGA_OX_NAME_LEN];
    const char *in = singa_ox_src_matrix(x, l, 0, flat);
    bool matrix = l->data.ndim <= 2;
    size_t n = singa_ox_begin(x, "Softmax", matrix ? l->name : singa_ox_name(sm, l, "softmax"), 1, in);
    singa_ox_attr_i(x, "axis", 1);
    singa_ox_end(x, n);
    if (!matrix)
        singa_ox_reshape_to(x, l, sm);
}

int singa_softmax_export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    softmax_rows(x, l);
    return 0;
}

const singa_layer_type singa_softmax_layer = {
    .name = "kSoftmax", .fields = fields, .min_src = 1, .max_src = 1,
    .setup = singa_layer_setup_like_src, .forward = forward, .backward = backward,
    .export_onnx = singa_softmax_export_onnx,
};
