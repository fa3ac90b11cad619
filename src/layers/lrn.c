/* kLRN: local response normalisation across channels of N x C x H x W blobs,
 *   b_c = a_c * s_c^-beta,  s_c = knorm + alpha / local_size * sum_{|c' - c| <= local_size / 2} a_c'^2,
 * the window clipped at the first and last channel; alpha is divided by local_size as SINGA's
 * lrn.cc, Caffe and PyTorch do, so their configurations carry over unchanged.  With a = the
 * scaled alpha and the window symmetric (c' is in c's window iff c is in c''s):
 *   da_j = dy_j s_j^-beta - 2 a beta a_j sum_{c in window(j)} dy_c a_c s_c^(-beta-1). */
#include <math.h>

#include "layers/layers.h"
#include "onnx/graph.h"

typedef struct lrn_state {
    int c, plane, half; /* channels, H * W, local_size / 2 */
    float alpha, beta, knorm;
    singa_tensor scale; /* s for every element */
    singa_tensor t, ws; /* backward, one instance: dy a s^(-beta-1) and its window sums */
} lrn_state;

static const singa_field fields[] = {
    {"local_size", SINGA_FIELD_INT}, {"alpha", SINGA_FIELD_NUM},
    {"beta", SINGA_FIELD_NUM},       {"knorm", SINGA_FIELD_NUM}, {NULL, 0},
};

static int setup(singa_layer *l, singa_err *err)
{
    lrn_state *s = l->state;
    const singa_tensor *in = &l->src[0]->data;
    if (in->ndim != 4) {
        char b[64];
        return singa_layer_err(l, err, "needs a N x C x H x W input, '%s' gives %s", l->src[0]->name,
                               singa_tensor_shape_str(in, b, sizeof b));
    }
    int size = singa_conf_int(l->conf, "local_size", 5);
    double alpha = singa_conf_num(l->conf, "alpha", 1.0), beta = singa_conf_num(l->conf, "beta", 0.75);
    double knorm = singa_conf_num(l->conf, "knorm", 1.0);
    if (size <= 0 || size % 2 == 0)
        return singa_layer_err(l, err, "field 'local_size' must be a positive odd integer, got %d", size);
    if (!(alpha >= 0))
        return singa_layer_err(l, err, "field 'alpha' must not be negative, got %g", alpha);
    if (!(beta >= 0))
        return singa_layer_err(l, err, "field 'beta' must not be negative, got %g", beta);
    if (!(knorm > 0))
        return singa_layer_err(l, err, "field 'knorm' must be positive, got %g", knorm);
    s->c = in->shape[1];
    s->plane = in->shape[2] * in->shape[3];
    s->half = size / 2;
    s->alpha = (float)(alpha / size);
    s->beta = (float)beta;
    s->knorm = (float)knorm;
    if (singa_layer_setup_like_src(l, err) < 0)
        return -1;
    if (singa_tensor_init_like(&s->scale, in, err) < 0 || singa_tensor_init2(&s->t, s->c, s->plane, err) < 0 ||
        singa_tensor_init2(&s->ws, s->c, s->plane, err) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
    return 0;
}

/* out[c] = sum of in[c'] over c's window, plane by plane, for one instance. */
static void window_sum(const lrn_state *s, const float *in, float *out, bool square)
{
    for (int c = 0; c < s->c; c++) {
        float *o = out + (size_t)c * (size_t)s->plane;
        int lo = c - s->half > 0 ? c - s->half : 0, hi = c + s->half < s->c ? c + s->half : s->c - 1;
        for (int p = 0; p < s->plane; p++)
            o[p] = 0.0f;
        for (int k = lo; k <= hi; k++) {
            const float *a = in + (size_t)k * (size_t)s->plane;
            for (int p = 0; p < s->plane; p++)
                o[p] += square ? a[p] * a[p] : a[p];
        }
    }
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    lrn_state *s = l->state;
    size_t len = (size_t)s->c * (size_t)s->plane;
    for (int n = 0; n < singa_tensor_rows(&l->data); n++) {
        const float *a = l->src[0]->data.data + (size_t)n * len;
        float *sc = s->scale.data + (size_t)n * len, *y = l->data.data + (size_t)n * len;
        window_sum(s, a, sc, true);
        for (size_t i = 0; i < len; i++) {
            sc[i] = s->knorm + s->alpha * sc[i];
            y[i] = a[i] * powf(sc[i], -s->beta);
        }
    }
    return 0;
}

static void backward(singa_layer *l)
{
    lrn_state *s = l->state;
    singa_layer *src = l->src[0];
    if (!src->needs_grad)
        return;
    float beta = singa_layer_grad_beta(src), k = -2.0f * s->alpha * s->beta;
    float *t = s->t.data, *ws = s->ws.data;
    size_t len = (size_t)s->c * (size_t)s->plane;
    for (int n = 0; n < singa_tensor_rows(&l->data); n++) {
        const float *a = src->data.data + (size_t)n * len, *sc = s->scale.data + (size_t)n * len;
        const float *dy = l->grad.data + (size_t)n * len, *y = l->data.data + (size_t)n * len;
        float *dx = src->grad.data + (size_t)n * len;
        for (size_t i = 0; i < len; i++)
            t[i] = dy[i] * y[i] / sc[i]; /* dy a s^(-beta-1) */
        window_sum(s, t, ws, false);
        for (size_t i = 0; i < len; i++)
            dx[i] = beta * dx[i] + dy[i] * powf(sc[i], -s->beta) + k * a[i] * ws[i];
    }
}

static void destroy(singa_layer *l)
{
    lrn_state *s = l->state;
    singa_tensor_free(&s->scale);
    singa_tensor_free(&s->t);
    singa_tensor_free(&s->ws);
}

static int export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    size_t n = singa_ox_begin(x, "LRN", l->name, 1, l->src[0]->name);
    /* ONNX divides alpha by size too, and its window is the same centred, clipped one. */
    singa_ox_attr_i(x, "size", singa_conf_int(l->conf, "local_size", 5));
    singa_ox_attr_f(x, "alpha", (float)singa_conf_num(l->conf, "alpha", 1.0));
    singa_ox_attr_f(x, "beta", (float)singa_conf_num(l->conf, "beta", 0.75));
    singa_ox_attr_f(x, "bias", (float)singa_conf_num(l->conf, "knorm", 1.0));
    singa_ox_end(x, n);
    return 0;
}

const singa_layer_type singa_lrn_layer = {
    .name = "kLRN", .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(lrn_state), .setup = setup, .forward = forward,
    .backward = backward, .destroy = destroy,
    .export_onnx = export_onnx,
};
