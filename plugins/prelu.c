/* kPReLU: y = x for x > 0, else a_c * x, with a learned slope a_c per channel (He, Zhang, Ren
 * and Sun, "Delving Deep into Rectifiers", 2015; PyTorch's nn.PReLU).  The channel is dim 1:
 * the C of an N x C x H x W input, the feature of a batch x features matrix.
 * `channel_shared = true` learns one slope for all channels (Caffe's PReLU option).  A plugin:
 * `make` builds it as plugins/prelu.so; it uses only the public API.
 *
 * The slopes are a param, "<layer>_slope" unless the param list names it, so they are shared
 * between the phases' nets, updated by the job's updater and checkpointed like weights.  They
 * start at 0.25, as in the paper, unless the param list gives an init.  Weight decay applies
 * to them as to any param (the paper used none: give the param wd_scale = 0). */
#include <stdlib.h>
#include <singa/plugin.h>

#define DEFAULT_SLOPE 0.25f

typedef struct prelu_state {
    int channels; /* slopes: 1 when shared */
    int inner;    /* elements per channel in one row (H * W) */
    float *sums;  /* backward's per-channel sums, one per slope */
} prelu_state;

static const singa_field fields[] = {{"channel_shared", SINGA_FIELD_BOOL}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    prelu_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    int cols = singa_tensor_cols(x), channels = x->ndim >= 2 ? x->shape[1] : 1;
    bool shared = singa_conf_bool(l->conf, "channel_shared", false);
    s->inner = cols / channels;
    s->channels = shared ? 1 : channels;
    if (!singa_layer_param_value(l, 0, "slope", 1, &s->channels, -1, 0, 0, "kConstant", DEFAULT_SLOPE, err))
        return -1;
    if (!(s->sums = calloc((size_t)s->channels, sizeof *s->sums)))
        return singa_layer_err(l, err, "out of memory");
    return singa_layer_shape(l, x->ndim, x->shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const prelu_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    const float *a = l->params[0]->data.data;
    int rows = singa_tensor_rows(x), cols = singa_tensor_cols(x);
    for (int r = 0; r < rows; r++) {
        const float *xr = x->data + (size_t)r * (size_t)x->ld;
        float *yr = l->data.data + (size_t)r * (size_t)l->data.ld;
        for (int c = 0; c < cols; c++) {
            float slope = a[s->channels == 1 ? 0 : c / s->inner];
            yr[c] = xr[c] > 0.0f ? xr[c] : slope * xr[c];
        }
    }
    return 0;
}

/* dx = dy (x > 0 ? 1 : a_c); da_c = sum of dy * x over the elements of channel c with x <= 0. */
static void backward(singa_layer *l)
{
    prelu_state *s = l->state;
    singa_layer *src = l->src[0];
    singa_param *p = l->params[0];
    const singa_tensor *x = &src->data;
    const float *a = p->data.data;
    int rows = singa_tensor_rows(x), cols = singa_tensor_cols(x);
    float acc = src->needs_grad ? singa_layer_grad_beta(src) : 0.0f;
    for (int k = 0; k < s->channels; k++)
        s->sums[k] = 0.0f;
    for (int r = 0; r < rows; r++) {
        const float *xr = x->data + (size_t)r * (size_t)x->ld;
        const float *dy = l->grad.data + (size_t)r * (size_t)l->grad.ld;
        float *dx = src->needs_grad ? src->grad.data + (size_t)r * (size_t)src->grad.ld : NULL;
        for (int c = 0; c < cols; c++) {
            int k = s->channels == 1 ? 0 : c / s->inner;
            float g = xr[c] > 0.0f ? dy[c] : a[k] * dy[c];
            if (xr[c] <= 0.0f)
                s->sums[k] += dy[c] * xr[c];
            if (dx)
                dx[c] = acc != 0.0f ? dx[c] + g : g; /* never 0 * an old value, which may be NaN */
        }
    }
    /* The param's gradient as the updater asked for it: grad_alpha * dL/da + grad_beta * grad. */
    for (int k = 0; k < s->channels; k++) {
        float old = p->grad_beta != 0.0f ? p->grad_beta * p->grad.data[k] : 0.0f;
        p->grad.data[k] = p->grad_alpha * s->sums[k] + old;
    }
    singa_param_grad_done(p);
}

static void destroy(singa_layer *l)
{
    prelu_state *s = l->state;
    free(s->sums);
}

/* ONNX export (ABI 1.4): PRelu, its slopes shaped C x 1 x ... to broadcast over the channel
 * (one slope: a single value). */
static int export_onnx(const singa_layer *l, singa_onnx_graph *g, singa_err *err)
{
    const prelu_state *s = l->state;
    int64_t dims[SINGA_MAX_DIMS] = {s->channels};
    int ndim = s->channels == 1 ? 1 : l->data.ndim - 1;
    for (int d = 1; d < ndim; d++)
        dims[d] = 1;
    const char *slope = singa_onnx_param(g, l->params[0], ndim, dims, err);
    const char *in[] = {l->src[0]->name, slope};
    return slope ? singa_onnx_node(g, "PRelu", l->name, 2, in, 0, NULL, err) : -1;
}

static const singa_layer_type prelu_layer = {
    .name = "kPReLU", .fields = fields, .min_src = 1, .max_src = 1,
    /* feature k's output reads feature k only; not FEATURE_PARTS: its slopes are not split */
    .flags = SINGA_LAYER_FEATURE_WISE,
    .state_size = sizeof(prelu_state), .setup = setup, .forward = forward, .backward = backward,
    .destroy = destroy, .export_onnx = export_onnx,
};

static int init(singa_plugin_ctx *ctx, singa_err *err)
{
    /* --check-plugin: three channels of 2 x 2 pixels, each channel its own random slope. */
    static const singa_plugin_example example = {
        .conf = "{ param = { { init = { type = 'kUniform', low = 0.05, high = 0.6 } } } }",
        .ninputs = 1,
        .inputs = {{.ndim = 4, .shape = {2, 3, 2, 2}}},
    };
    return singa_plugin_add_layer(ctx, &prelu_layer, &example, err);
}

SINGA_PLUGIN("prelu", "1.0.0", "kPReLU: a ReLU with a learned slope per channel for x <= 0", init);
