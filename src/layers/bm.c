/* kBM: batch normalisation (SINGA's BMLayer / CudnnBMLayer), per feature of an N x F input and
 * per channel of an N x C x H x W one, over the m = N (or N * H * W) values of each.
 *   kTrain:  y = scale * xhat + bias,  xhat = (x - mean) * inv,  inv = 1 / sqrt(var + eps),
 *            with the batch's mean and (biased) variance; then
 *            running_mean   = (1 - momentum) running_mean   + momentum mean
 *            running_invvar = (1 - momentum) running_invvar + momentum inv
 *   others:  y = scale * (x - running_mean) * running_invvar + bias.
 * The four params are SINGA's: bnScale, bnBias, resultRunningMean and resultRunningInvVariance,
 * the last being, as in cuDNN v4 which SINGA called, the moving average of 1 / sqrt(var + eps).
 * The running statistics are layer state (singa_layer_state): shared with the test net and
 * checkpointed, never trained.  SINGA's cuDNN layer fixed the averaging factor at 1 (the last
 * batch's statistics); ours is the field `momentum`, PyTorch's default 0.1, and `eps` is 1e-5
 * (CUDNN_BN_MIN_EPSILON, as SINGA used, and PyTorch's default).
 * The backward pass (kTrain only):
 *   dbias = sum dy,  dscale = sum dy xhat,  dx = scale inv / m (m dy - dbias - xhat dscale). */
#include <math.h>
#include <stdlib.h>

#include "layers/ctx.h"
#include "layers/layers.h"
#include "onnx/graph.h"
#include "singa/net.h"

typedef struct bm_state {
    int c, plane;         /* channels (features of a 2-d input) and values per channel of an instance */
    float momentum, eps;
    bool train;           /* the phase of the current pass */
    singa_tensor xhat;    /* kTrain: the normalised input, for the backward pass */
    float *mean, *inv;    /* kTrain: this batch's statistics per channel */
    double *s1, *s2;      /* per-channel sums */
    float dx_beta;        /* backward: 0 overwrites the source's gradient, 1 adds */
} bm_state;

static const singa_field fields[] = {
    {"momentum", SINGA_FIELD_NUM}, {"eps", SINGA_FIELD_NUM}, {NULL, 0},
};

static int setup(singa_layer *l, singa_err *err)
{
    bm_state *s = l->state;
    const singa_tensor *in = &l->src[0]->data;
    if (in->ndim != 2 && in->ndim != 4) {
        char b[64];
        return singa_layer_err(l, err, "needs a N x F or N x C x H x W input, '%s' gives %s", l->src[0]->name,
                               singa_tensor_shape_str(in, b, sizeof b));
    }
    double momentum = singa_conf_num(l->conf, "momentum", 0.1), eps = singa_conf_num(l->conf, "eps", 1e-5);
    if (!(momentum >= 0 && momentum <= 1))
        return singa_layer_err(l, err, "field 'momentum' must be in [0, 1], got %g", momentum);
    if (!(eps > 0))
        return singa_layer_err(l, err, "field 'eps' must be positive, got %g", eps);
    s->momentum = (float)momentum;
    s->eps = (float)eps;
    s->c = in->shape[1];
    s->plane = in->ndim == 4 ? in->shape[2] * in->shape[3] : 1;
    if (!singa_layer_param_value(l, 0, "scale", 1, &s->c, -1, s->c, s->c, "kConstant", 1.0, err) ||
        !singa_layer_param_value(l, 1, "bias", 1, &s->c, -1, s->c, s->c, "kConstant", 0.0, err) ||
        !singa_layer_state(l, 2, "running_mean", 1, &s->c, 0.0f, err) ||
        !singa_layer_state(l, 3, "running_invvar", 1, &s->c, 1.0f, err))
        return -1;
    if (singa_layer_setup_like_src(l, err) < 0)
        return -1;
    if (singa_tensor_init_like(&s->xhat, &l->data, err) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
    size_t n = (size_t)s->c;
    if (!(s->mean = malloc(n * sizeof *s->mean)) || !(s->inv = malloc(n * sizeof *s->inv)) ||
        !(s->s1 = malloc(n * sizeof *s->s1)) || !(s->s2 = malloc(n * sizeof *s->s2)))
        return singa_layer_err(l, err, "out of memory");
    return 0;
}

/* Row n, channel c of tensor t (rows ld apart, channels `plane` apart). */
static inline float *at(const singa_tensor *t, const bm_state *s, int n, int c)
{
    return t->data + (size_t)n * (size_t)t->ld + (size_t)c * (size_t)s->plane;
}

/* The forward pass for channels [b, e): each thread owns its channels' sums and statistics, so
 * the result does not depend on how the channels are split. */
static void forward_channels(void *ctx, size_t b, size_t e)
{
    singa_layer *l = ctx;
    bm_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    int rows = singa_tensor_rows(x), P = s->plane;
    const float *gamma = l->params[0]->data.data, *beta = l->params[1]->data.data;
    float *rmean = l->params[2]->data.data, *rinv = l->params[3]->data.data;
    if (!s->train) {
        for (int n = 0; n < rows; n++)
            for (size_t c = b; c < e; c++) {
                const float *xr = at(x, s, n, (int)c);
                float *y = at(&l->data, s, n, (int)c), k = gamma[c] * rinv[c], m = rmean[c];
                for (int p = 0; p < P; p++)
                    y[p] = k * (xr[p] - m) + beta[c];
            }
        return;
    }
    double m = (double)rows * P;
    for (size_t c = b; c < e; c++)
        s->s1[c] = s->s2[c] = 0;
    for (int n = 0; n < rows; n++)
        for (size_t c = b; c < e; c++) {
            const float *xr = at(x, s, n, (int)c);
            double sum = 0;
            for (int p = 0; p < P; p++)
                sum += xr[p];
            s->s1[c] += sum;
        }
    for (size_t c = b; c < e; c++)
        s->mean[c] = (float)(s->s1[c] / m);
    for (int n = 0; n < rows; n++) /* a second pass: no cancellation in E[x^2] - E[x]^2 */
        for (size_t c = b; c < e; c++) {
            const float *xr = at(x, s, n, (int)c);
            double sum = 0;
            for (int p = 0; p < P; p++) {
                double d = (double)xr[p] - s->mean[c];
                sum += d * d;
            }
            s->s2[c] += sum;
        }
    float mom = s->momentum;
    for (size_t c = b; c < e; c++) {
        s->inv[c] = (float)(1.0 / sqrt(s->s2[c] / m + s->eps));
        rmean[c] = (1 - mom) * rmean[c] + mom * s->mean[c];
        rinv[c] = (1 - mom) * rinv[c] + mom * s->inv[c];
    }
    for (int n = 0; n < rows; n++)
        for (size_t c = b; c < e; c++) {
            const float *xr = at(x, s, n, (int)c);
            float *xh = at(&s->xhat, s, n, (int)c), *y = at(&l->data, s, n, (int)c);
            float mu = s->mean[c], inv = s->inv[c];
            for (int p = 0; p < P; p++) {
                xh[p] = (xr[p] - mu) * inv;
                y[p] = gamma[c] * xh[p] + beta[c];
            }
        }
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    bm_state *s = l->state;
    s->train = phase == SINGA_PHASE_TRAIN;
    singa_pool_for(l->ctx->pool, (size_t)s->c, 1, forward_channels, l);
    return 0;
}

static void backward_channels(void *ctx, size_t b, size_t e)
{
    singa_layer *l = ctx;
    bm_state *s = l->state;
    singa_layer *src = l->src[0];
    int rows = singa_tensor_rows(&l->data), P = s->plane;
    double m = (double)rows * P;
    for (size_t c = b; c < e; c++)
        s->s1[c] = s->s2[c] = 0;
    for (int n = 0; n < rows; n++)
        for (size_t c = b; c < e; c++) {
            const float *dy = at(&l->grad, s, n, (int)c), *xh = at(&s->xhat, s, n, (int)c);
            double db = 0, dg = 0;
            for (int p = 0; p < P; p++) {
                db += dy[p];
                dg += (double)dy[p] * xh[p];
            }
            s->s1[c] += db;
            s->s2[c] += dg;
        }
    /* dx before the params' gradients: an updater may change scale once they are reported. */
    if (src->needs_grad) {
        const float *gamma = l->params[0]->data.data;
        for (int n = 0; n < rows; n++)
            for (size_t c = b; c < e; c++) {
                const float *dy = at(&l->grad, s, n, (int)c), *xh = at(&s->xhat, s, n, (int)c);
                float *dx = at(&src->grad, s, n, (int)c);
                float k = (float)(gamma[c] * s->inv[c] / m), mf = (float)m;
                float db = (float)s->s1[c], dg = (float)s->s2[c];
                for (int p = 0; p < P; p++)
                    dx[p] = s->dx_beta * dx[p] + k * (mf * dy[p] - db - xh[p] * dg);
            }
    }
    singa_param *ps = l->params[0], *pb = l->params[1];
    for (size_t c = b; c < e; c++) {
        ps->grad.data[c] = ps->grad_alpha * (float)s->s2[c] + ps->grad_beta * ps->grad.data[c];
        pb->grad.data[c] = pb->grad_alpha * (float)s->s1[c] + pb->grad_beta * pb->grad.data[c];
    }
}

static void backward(singa_layer *l)
{
    bm_state *s = l->state;
    if (l->src[0]->needs_grad)
        s->dx_beta = singa_layer_grad_beta(l->src[0]);
    singa_pool_for(l->ctx->pool, (size_t)s->c, 1, backward_channels, l);
    singa_param_grad_done(l->params[0]);
    singa_param_grad_done(l->params[1]);
}

static void destroy(singa_layer *l)
{
    bm_state *s = l->state;
    singa_tensor_free(&s->xhat);
    free(s->mean);
    free(s->inv);
    free(s->s1);
    free(s->s2);
}

static int export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    const float eps = (float)singa_conf_num(l->conf, "eps", 1e-5);
    const singa_param *invvar = l->params[3];
    int c = invvar->data.shape[0];
    float *var = malloc((size_t)c * sizeof *var);
    if (!var) {
        x->oom = true; /* the export says so */
        return 0;
    }
    /* The layer keeps 1 / sqrt(var + eps); ONNX wants var. */
    for (int i = 0; i < c; i++) {
        double inv = invvar->data.data[i], v = 1.0 / (inv * inv) - eps;
        var[i] = v > 0 ? (float)v : 0.0f;
    }
    char vn[SINGA_OX_NAME_LEN];
    int64_t dim = c;
    singa_ox_floats(x, singa_ox_name(vn, l, "running_var"), 1, &dim, var, (size_t)c);
    free(var);
    const char *scale = singa_ox_param(x, l->params[0], 0, NULL), *bias = singa_ox_param(x, l->params[1], 0, NULL);
    const char *mean = singa_ox_param(x, l->params[2], 0, NULL);
    const char *ins[] = {l->src[0]->name, scale, bias, mean, vn};
    size_t at = singa_ox_begin_list(x, "BatchNormalization", l->name, 5, ins);
    singa_ox_attr_f(x, "epsilon", eps);
    singa_ox_end(x, at);
    return 0;
}

const singa_layer_type singa_bm_layer = {
    .name = "kBM", .flags = SINGA_LAYER_FEATURE_WISE | SINGA_LAYER_WHOLE_BATCH, .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(bm_state), .setup = setup, .forward = forward, .backward = backward,
    .destroy = destroy,
    .export_onnx = export_onnx,
};
