/* kInnerProduct: h = v W^T + b with W of shape num_output x input (SINGA's layout, as in
 * PyTorch's Linear); transpose = true stores W as input x num_output instead. */
#include "layers/deferred.h"
#include "layers/layers.h"
#include "onnx/graph.h"

typedef struct ip_state {
    bool transpose, bias;
    singa_tensor xs, gs; /* deferred (deferred.h): the step's rows of the source's data and of grad */
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

/* The params' gradients from the source's data x and the gradient g of the same rows. */
static void param_grads(singa_layer *l, const singa_tensor *x, const singa_tensor *g)
{
    ip_state *s = l->state;
    singa_param *w = l->params[0];
    if (s->transpose)
        singa_param_grad_gemm(w, true, x, false, g);
    else
        singa_param_grad_gemm(w, true, g, false, x);
    if (s->bias) {
        singa_param *b = l->params[1];
        singa_param_grad_begin(b);
        singa_tensor_sum_rows(g, b->grad_alpha, b->grad_beta, b->grad.data);
        singa_param_grad_done(b);
    }
}

static void backward(singa_layer *l)
{
    ip_state *s = l->state;
    singa_layer *src = l->src[0];
    singa_tensor x = singa_tensor_view_matrix(&src->data);
    /* dx first: an updater may change W as soon as its gradient is reported ready. */
    if (src->needs_grad) {
        singa_tensor dx = singa_tensor_view_matrix(&src->grad);
        singa_tensor_gemm(false, s->transpose, 1.0f, &l->grad, &l->params[0]->data,
                          singa_layer_grad_beta(src), &dx);
    }
    if (!singa_layer_defers(l))
        param_grads(l, &x, &l->grad);
}

/* Each copy's rows of its source's data (or of its grad) in turn, into `all`. */
static int gather(singa_layer *const *copies, int n, bool grad, singa_tensor *all, singa_err *err)
{
    int rows = 0, cols = 0;
    for (int j = 0; j < n; j++) {
        singa_tensor t = singa_tensor_view_matrix(grad ? &copies[j]->grad : &copies[j]->src[0]->data);
        rows += singa_tensor_rows(&t);
        cols = singa_tensor_cols(&t);
    }
    if (!all->data || singa_tensor_rows(all) != rows || singa_tensor_cols(all) != cols) {
        singa_tensor_free(all);
        if (singa_tensor_init2(all, rows, cols, err) < 0)
            return -1;
    }
    for (int j = 0, r = 0; j < n; j++) {
        singa_tensor t = singa_tensor_view_matrix(grad ? &copies[j]->grad : &copies[j]->src[0]->data);
        singa_tensor to = singa_tensor_view_rows(all, r, singa_tensor_rows(&t));
        singa_tensor_copy(&to, &t);
        r += singa_tensor_rows(&t);
    }
    return 0;
}

int singa_inner_product_param_grads(singa_layer *const *copies, int n, singa_err *err)
{
    ip_state *s = copies[0]->state;
    if (gather(copies, n, false, &s->xs, err) < 0 || gather(copies, n, true, &s->gs, err) < 0)
        return -1;
    param_grads(copies[0], &s->xs, &s->gs);
    return 0;
}

static void destroy(singa_layer *l)
{
    ip_state *s = l->state;
    singa_tensor_free(&s->xs);
    singa_tensor_free(&s->gs);
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
    .state_size = sizeof(ip_state), .setup = setup, .forward = forward, .backward = backward, .destroy = destroy,
    .export_onnx = export_onnx,
};
