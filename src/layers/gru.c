/* kGRU: a gated recurrent unit (Cho et al. 2014), one time step per copy of the unrolled layer:
 *   z = sigmoid(x Wz + h Uz + bz)      r = sigmoid(x Wr + h Ur + br)
 *   c = tanh(x Wc + (r * h) Uc + bc)   h' = (1 - z) * c + z * h
 * with h the previous copy's output (zero for copy 0).  Nine params, as SINGA's GRU layer:
 * <name>_{z,r,c}_{hx,hh,b}; W is input x dim_hidden and U dim_hidden x dim_hidden, so every
 * gate is one GEMM of the step's batch. */

#include <stdio.h>
#include <string.h>

#include "core/vmath.h"
#include "layers/layers.h"
#include "onnx/graph.h"

enum { Z, R, C, GATES };

typedef struct gru_state {
    int hidden;
    bool bias;
    singa_tensor gate[GATES]; /* activations z, r, c (batch x hidden) */
    singa_tensor rh;          /* r * h */
    singa_tensor dgate[GATES];
    singa_tensor drh;
} gru_state;

static const singa_field fields[] = {
    {"dim_hidden", SINGA_FIELD_INT}, {"bias_term", SINGA_FIELD_BOOL}, {NULL, 0},
};

static const char *const names[GATES][3] = {
    {"z_hx", "z_hh", "z_b"}, {"r_hx", "r_hh", "r_b"}, {"c_hx", "c_hh", "c_b"},
};

static singa_param *p_hx(singa_layer *l, int g) { return l->params[g * 3]; }
static singa_param *p_hh(singa_layer *l, int g) { return l->params[g * 3 + 1]; }
static singa_param *p_b(singa_layer *l, int g) { return l->params[g * 3 + 2]; }

/* The previous step's state, or NULL for the first copy. */
static singa_layer *prev(const singa_layer *l) { return l->nsrc > 1 ? l->src[l->nsrc - 1] : NULL; }

static int setup(singa_layer *l, singa_err *err)
{
    gru_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    int batch = singa_tensor_rows(x), in = singa_tensor_cols(x);
    s->hidden = singa_conf_int(l->conf, "dim_hidden", 0);
    s->bias = singa_conf_bool(l->conf, "bias_term", true);
    if (s->hidden <= 0)
        return singa_layer_err(l, err, "field 'dim_hidden' must be a positive integer");
    if (!s->bias)
        return singa_layer_err(l, err, "bias_term = false is not supported: the nine params include three biases");
    singa_layer *h = prev(l);
    if (h && (singa_tensor_rows(&h->data) != batch || singa_tensor_cols(&h->data) != s->hidden))
        return singa_layer_err(l, err, "the previous step '%s' does not give %d x %d states", h->name, batch, s->hidden);
    int wx[2] = {in, s->hidden}, wh[2] = {s->hidden, s->hidden};
    for (int g = 0; g < GATES; g++)
        if (!singa_layer_param(l, 3 * g, names[g][0], 2, wx, in, s->hidden, "kUniformSqrtFanIn", err) ||
            !singa_layer_param(l, 3 * g + 1, names[g][1], 2, wh, s->hidden, s->hidden, "kUniformSqrtFanIn", err) ||
            !singa_layer_param_value(l, 3 * g + 2, names[g][2], 1, &s->hidden, -1, in, s->hidden, "kConstant", 0.0, err))
            return -1;
    int shape[2] = {batch, s->hidden};
    for (int g = 0; g < GATES; g++)
        if (singa_tensor_init(&s->gate[g], 2, shape, err) < 0 || singa_tensor_init(&s->dgate[g], 2, shape, err) < 0)
            return singa_layer_err(l, err, "%s", err->msg);
    if (singa_tensor_init(&s->rh, 2, shape, err) < 0 || singa_tensor_init(&s->drh, 2, shape, err) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
    return singa_layer_shape(l, 2, shape, err);
}

/* gate = x W + b (+ hsrc U when there is a previous state). */
static void preact(singa_layer *l, int g, const singa_tensor *x, const singa_tensor *hsrc, singa_tensor *out)
{
    int cols = singa_tensor_cols(out);
    for (int r = 0; r < singa_tensor_rows(out); r++)
        memcpy(out->data + (size_t)r * (size_t)cols, p_b(l, g)->data.data, (size_t)cols * sizeof(float));
    singa_tensor_gemm(false, false, 1.0f, x, &p_hx(l, g)->data, 1.0f, out);
    if (hsrc)
        singa_tensor_gemm(false, false, 1.0f, hsrc, &p_hh(l, g)->data, 1.0f, out);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    gru_state *s = l->state;
    singa_tensor x = singa_tensor_view_matrix(&l->src[0]->data);
    singa_layer *hl = prev(l);
    const float *h = hl ? hl->data.data : NULL;
    size_t n = l->data.size;
    for (int g = Z; g <= R; g++) {
        preact(l, g, &x, hl ? &hl->data : NULL, &s->gate[g]);
        singa_vsigmoid(s->gate[g].data, s->gate[g].data, n);
    }
    for (size_t k = 0; k < n; k++)
        s->rh.data[k] = h ? s->gate[R].data[k] * h[k] : 0.0f;
    preact(l, C, &x, hl ? &s->rh : NULL, &s->gate[C]);
    singa_vtanh(s->gate[C].data, s->gate[C].data, n, 1.0f, 1.0f);
    const float *z = s->gate[Z].data, *c = s->gate[C].data;
    for (size_t k = 0; k < n; k++)
        l->data.data[k] = (1.0f - z[k]) * c[k] + (h ? z[k] * h[k] : 0.0f);
    return 0;
}

/* dW += x^T dgate, dU += hsrc^T dgate, db += column sums, all through the params' alpha/beta. */
static void param_grads(singa_layer *l, int g, const singa_tensor *x, const singa_tensor *hsrc)
{
    gru_state *s = l->state;
    singa_param_grad_gemm(p_hx(l, g), true, x, false, &s->dgate[g]);
    singa_param *u = p_hh(l, g), *b = p_b(l, g);
    if (hsrc) {
        singa_param_grad_gemm(u, true, hsrc, false, &s->dgate[g]);
    } else { /* no previous state: U gets no gradient from this step */
        singa_tensor_scale(&u->grad, u->grad_beta);
        singa_param_grad_done(u);
    }
    singa_tensor_sum_rows(&s->dgate[g], b->grad_alpha, b->grad_beta, b->grad.data);
    singa_param_grad_done(b);
}

static void backward(singa_layer *l)
{
    gru_state *s = l->state;
    singa_layer *src = l->src[0], *hl = prev(l);
    singa_tensor x = singa_tensor_view_matrix(&src->data);
    const float *h = hl ? hl->data.data : NULL, *dy = l->grad.data;
    const float *z = s->gate[Z].data, *r = s->gate[R].data, *c = s->gate[C].data;
    float *dz = s->dgate[Z].data, *dr = s->dgate[R].data, *dc = s->dgate[C].data;
    size_t n = l->data.size;
    for (size_t k = 0; k < n; k++) {
        float hk = h ? h[k] : 0.0f;
        dz[k] = dy[k] * (hk - c[k]) * z[k] * (1.0f - z[k]);
        dc[k] = dy[k] * (1.0f - z[k]) * (1.0f - c[k] * c[k]);
    }
    /* d(r * h) = dgate_c Uc^T, then dr through the sigmoid. */
    if (hl) {
        singa_tensor_gemm(false, true, 1.0f, &s->dgate[C], &p_hh(l, C)->data, 0.0f, &s->drh);
        for (size_t k = 0; k < n; k++)
            dr[k] = s->drh.data[k] * h[k] * r[k] * (1.0f - r[k]);
    } else {
        memset(dr, 0, n * sizeof *dr);
    }
    /* Input and state gradients before the params' (an updater may change them once ready). */
    if (src->needs_grad) {
        singa_tensor dx = singa_tensor_view_matrix(&src->grad);
        float beta = singa_layer_grad_beta(src);
        for (int g = 0; g < GATES; g++, beta = 1.0f)
            singa_tensor_gemm(false, true, 1.0f, &s->dgate[g], &p_hx(l, g)->data, beta, &dx);
    }
    if (hl && hl->needs_grad) {
        float beta = singa_layer_grad_beta(hl), *dh = hl->grad.data;
        for (size_t k = 0; k < n; k++)
            dh[k] = beta * dh[k] + dy[k] * z[k] + s->drh.data[k] * r[k];
        singa_tensor_gemm(false, true, 1.0f, &s->dgate[Z], &p_hh(l, Z)->data, 1.0f, &hl->grad);
        singa_tensor_gemm(false, true, 1.0f, &s->dgate[R], &p_hh(l, R)->data, 1.0f, &hl->grad);
    }
    param_grads(l, Z, &x, hl ? &hl->data : NULL);
    param_grads(l, R, &x, hl ? &hl->data : NULL);
    param_grads(l, C, &x, hl ? &s->rh : NULL);
}

static void destroy(singa_layer *l)
{
    gru_state *s = l->state;
    for (int g = 0; g < GATES; g++) {
        singa_tensor_free(&s->gate[g]);
        singa_tensor_free(&s->dgate[g]);
    }
    singa_tensor_free(&s->rh);
    singa_tensor_free(&s->drh);
}

/* One gate's pre-activation, x W + b (+ h U): gru.c's preact. */
static void gru_preact(singa_onnx_graph *x, const singa_layer *l, int g, const char *in, const char *h, const char *out)
{
    char xw[SINGA_OX_NAME_LEN], xwb[SINGA_OX_NAME_LEN], hu[SINGA_OX_NAME_LEN], what[32];
    static const char gate[] = "zrc";
    snprintf(what, sizeof what, "%c_xw", gate[g]);
    singa_ox_node(x, "MatMul", singa_ox_name(xw, l, what), 2, in, singa_ox_param(x, l->params[3 * g], 0, NULL), NULL);
    if (!h) {
        singa_ox_node(x, "Add", out, 2, xw, singa_ox_param(x, l->params[3 * g + 2], 0, NULL), NULL);
        return;
    }
    snprintf(what, sizeof what, "%c_xwb", gate[g]);
    singa_ox_node(x, "Add", singa_ox_name(xwb, l, what), 2, xw, singa_ox_param(x, l->params[3 * g + 2], 0, NULL), NULL);
    snprintf(what, sizeof what, "%c_hu", gate[g]);
    singa_ox_node(x, "MatMul", singa_ox_name(hu, l, what), 2, h, singa_ox_param(x, l->params[3 * g + 1], 0, NULL), NULL);
    singa_ox_node(x, "Add", out, 2, xwb, hu, NULL);
}

static int export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    char flat[SINGA_OX_NAME_LEN], pz[SINGA_OX_NAME_LEN], pr[SINGA_OX_NAME_LEN], pc[SINGA_OX_NAME_LEN], z[SINGA_OX_NAME_LEN], r[SINGA_OX_NAME_LEN], c[SINGA_OX_NAME_LEN];
    char rh[SINGA_OX_NAME_LEN], one[SINGA_OX_NAME_LEN], zc[SINGA_OX_NAME_LEN], a[SINGA_OX_NAME_LEN], zh[SINGA_OX_NAME_LEN];
    const char *in = singa_ox_src_matrix(x, l, 0, flat);
    const char *h = l->nsrc > 1 ? l->src[l->nsrc - 1]->name : NULL; /* the previous copy */
    gru_preact(x, l, 0, in, h, singa_ox_name(pz, l, "z_pre"));
    singa_ox_node(x, "Sigmoid", singa_ox_name(z, l, "z"), 1, pz, NULL, NULL);
    gru_preact(x, l, 1, in, h, singa_ox_name(pr, l, "r_pre"));
    singa_ox_node(x, "Sigmoid", singa_ox_name(r, l, "r"), 1, pr, NULL, NULL);
    if (h)
        singa_ox_node(x, "Mul", singa_ox_name(rh, l, "rh"), 2, r, h, NULL);
    gru_preact(x, l, 2, in, h ? rh : NULL, singa_ox_name(pc, l, "c_pre"));
    singa_ox_node(x, "Tanh", singa_ox_name(c, l, "c"), 1, pc, NULL, NULL);
    /* h' = (1 - z) c + z h */
    singa_ox_scalar(x, singa_ox_name(one, l, "one"), 1.0f);
    singa_ox_node(x, "Sub", singa_ox_name(zc, l, "1-z"), 2, one, z, NULL);
    if (!h) {
        singa_ox_node(x, "Mul", l->name, 2, zc, c, NULL);
        return 0;
    }
    singa_ox_node(x, "Mul", singa_ox_name(a, l, "(1-z)c"), 2, zc, c, NULL);
    singa_ox_node(x, "Mul", singa_ox_name(zh, l, "zh"), 2, z, h, NULL);
    singa_ox_node(x, "Add", l->name, 2, a, zh, NULL);
    return 0;
}

const singa_layer_type singa_gru_layer = {
    .name = "kGRU", .fields = fields, .min_src = 1, .max_src = 1,
    .flags = SINGA_LAYER_RECURRENT, .state_size = sizeof(gru_state),
    .setup = setup, .forward = forward, .backward = backward, .destroy = destroy,
    .export_onnx = export_onnx,
};
