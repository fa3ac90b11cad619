/* kInnerProduct: h = v W^T + b with W of shape num_output x input (SINGA's layout, as in
 * PyTorch's Linear); transpose = true stores W as input x num_output instead. */
#include "layers/layers.h"
#include "onnx/graph.h"

typedef struct ip_state {
    bool transpose, bias;
} ip_state;

static const singa_field fields[] = {
    {"num_output", SINGA_FIELD_INT}, {"bias_term", SINGA_FIELD_BOOL},
    {"transpose", SINGA_FIELD_BOOL}, {NULL, 0},
};

static int setup(singa_layer *l, singa_err *err)
{
    ip_state *s = l->state;
    int all = singa_conf_int(l->conf, "num_output", 0);
    int in = singa_tensor_cols(&l->src[0]->data), batch = singa_tensor_rows(&l->src[0]->data);
    if (all <= 0)
        return singa_layer_err(l, err, "field 'num_output' must be a positive integer");
    int out = singa_layer_part_size(l, "num_output", all, err); /* a part on the features: its rows of W */
    if (out < 0)
        return -1;
    s->transpose = singa_conf_bool(l->conf, "transpose", false);
    s->bias = singa_conf_bool(l->conf, "bias_term", true);
    int wshape[2] = {s->transpose ? in : all, s->transpose ? all : in};
    if (!singa_layer_param_split(l, 0, "weight", 2, wshape, s->transpose, in, all, "kUniformSqrtFanIn", err))
        return -1;
    if (s->bias && !singa_layer_param_value(l, 1, "bias", 1, &all, 0, in, all, "kConstant", 0.0, err))
        return -1;
    int shape[2] = {batch, out};
    return singa_layer_shape(l, 2, shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    ip_state *s = l->state;
    singa_tensor x = singa_tensor_view_matrix(&l->src[0]->data);
    float beta = 0.0f;
    if (s->bias) {
        int cols = singa_tensor_cols(&l->data);
        for (int r = 0; r < singa_tensor_rows(&l->data); r++)
            for (int c = 0; c < cols; c++)
                l->data.data[(size_t)r * (size_t)l->data.ld + (size_t)c] = l->params[1]->data.data[c];
        beta = 1.0f;
    }
    singa_tensor_gemm(false, !s->transpose, 1.0f, &x, &l->params[0]->data, beta, &l->data);
    return 0;
}

static void backward(singa_layer *l)
{
    ip_state *s = l->state;
    singa_layer *src = l->src[0];
    singa_tensor x = singa_tensor_view_matrix(&src->data);
    singa_param *w = l->params[0];
    /* dx first: an updater may change W as soon as its gradient is reported ready. */
    if (src->needs_grad) {
        singa_tensor dx = singa_tensor_view_matrix(&src->grad);
        singa_tensor_gemm(false, s->transpose, 1.0f, &l->grad, &w->data,
                          singa_layer_grad_beta(src), &dx);
    }
    if (s->transpose)
        singa_param_grad_gemm(w, true, &x, false, &l->grad);
    else
        singa_param_grad_gemm(w, true, &l->grad, false, &x);
    if (s->bias) {
        singa_param *b = l->params[1];
        singa_param_grad_begin(b);
        singa_tensor_sum_rows(&l->grad, b->grad_alpha, b->grad_beta, b->grad.data);
        singa_param_grad_done(b);
    }
}

static int export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    char flat[SINGA_OX_NAME_LEN];
    const char *in = singa_ox_src_matrix(x, l, 0, flat);
    const char *w = singa_ox_param(x, l->params[0], 0, NULL);
    bool bias = l->nparams > 1;
    size_t n = singa_ox_begin(x, "Gemm", l->name, bias ? 3 : 2, in, w, bias ? singa_ox_param(x, l->params[1], 0, NULL) : NULL);
    /* W is num_output x input (transB), or input x num_output with `transpose`. */
    singa_ox_attr_i(x, "transB", singa_conf_bool(l->conf, "transpose", false) ? 0 : 1);
    singa_ox_end(x, n);
    return 0;
}

const singa_layer_type singa_inner_product_layer = {
    .name = "kInnerProduct", .flags = SINGA_LAYER_FEATURE_PARTS, .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(ip_state), .setup = setup, .forward = forward, .backward = backward,
    .export_onnx = export_onnx,
};
