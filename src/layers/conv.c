/* kConvolution on N x C x H x W blobs.  The whole batch is unfolded (im2col) into one
 * CKK x (N * OH * OW) matrix, so each pass is a single large GEMM instead of N small ones, which
 * is what keeps the BLAS kernels busy on small nets such as LeNet.  Weights are
 * num_filters x (C * kernel_y * kernel_x), SINGA's (and Caffe's) layout. */
#include <string.h>

#include "layers/ctx.h"
#include "core/simd.h"
#include "core/vmath.h"
#include "layers/layers.h"
#include "onnx/graph.h"
#include "singa/net.h"

typedef struct conv_state {
    int c, h, w;          /* input */
    int f, oh, ow;        /* output */
    int ky, kx, py, px, sy, sx;
    bool bias;
    singa_tensor col;     /* CKK x N*OH*OW: the unfolded input */
    singa_tensor dcol;    /* the same shape, for the input gradient */
    singa_tensor tmp;     /* F x N*OH*OW: output (or its gradient) grouped by filter */
} conv_state;

static const singa_field fields[] = {
    {"num_filters", SINGA_FIELD_INT}, {"kernel", SINGA_FIELD_INT},   {"kernel_x", SINGA_FIELD_INT},
    {"kernel_y", SINGA_FIELD_INT},    {"pad", SINGA_FIELD_INT},      {"pad_x", SINGA_FIELD_INT},
    {"pad_y", SINGA_FIELD_INT},       {"stride", SINGA_FIELD_INT},   {"stride_x", SINGA_FIELD_INT},
    {"stride_y", SINGA_FIELD_INT},    {"bias_term", SINGA_FIELD_BOOL}, {NULL, 0},
};

static int setup(singa_layer *l, singa_err *err)
{
    conv_state *s = l->state;
    const singa_tensor *in = &l->src[0]->data;
    if (in->ndim != 4) {
        char b[64];
        return singa_layer_err(l, err, "needs a N x C x H x W input, '%s' gives %s", l->src[0]->name,
                               singa_tensor_shape_str(in, b, sizeof b));
    }
    int n = in->shape[0];
    s->c = in->shape[1];
    s->h = in->shape[2];
    s->w = in->shape[3];
    int all = singa_conf_int(l->conf, "num_filters", 0);
    if (all <= 0)
        return singa_layer_err(l, err, "field 'num_filters' must be a positive integer");
    if ((s->f = singa_layer_part_size(l, "num_filters", all, err)) < 0) /* a part on the features: its filters */
        return -1;
    singa_layer_conf_xy(l, "kernel", 0, &s->kx, &s->ky);
    singa_layer_conf_xy(l, "pad", 0, &s->px, &s->py);
    singa_layer_conf_xy(l, "stride", 1, &s->sx, &s->sy);
    s->bias = singa_conf_bool(l->conf, "bias_term", true);
    if (singa_layer_window(l, s->h, s->w, s->ky, s->kx, s->py, s->px, s->sy, s->sx, &s->oh, &s->ow, err) < 0)
        return -1;
    int ckk = s->c * s->ky * s->kx, cols = n * s->oh * s->ow;
    int wshape[2] = {all, ckk};
    if (!singa_layer_param_split(l, 0, "weight", 2, wshape, 0, ckk, all * s->ky * s->kx, "kUniformSqrtFanIn", err))
        return -1;
    if (s->bias && !singa_layer_param_value(l, 1, "bias", 1, &all, 0, ckk, all, "kConstant", 0.0, err))
        return -1;
    if (singa_tensor_init2(&s->col, ckk, cols, err) < 0 || singa_tensor_init2(&s->tmp, s->f, cols, err) < 0 ||
        (l->src[0]->needs_grad && singa_tensor_init2(&s->dcol, ckk, cols, err) < 0))
        return singa_layer_err(l, err, "%s", err->msg);
    int shape[4] = {n, s->f, s->oh, s->ow};
    return singa_layer_shape(l, 4, shape, err);
}

/* The output columns [*ox0, *ox1) whose input column ox * stride - pad + kj lies inside the
 * image; the others read padding. */
static void valid_cols(const conv_state *s, int kj, int *ox0, int *ox1)
{
    int lo = s->px - kj, hi = s->w + s->px - kj; /* ox * sx must lie in [lo, hi) */
    *ox0 = lo <= 0 ? 0 : (lo + s->sx - 1) / s->sx;
    *ox1 = hi <= 0 ? 0 : (hi + s->sx - 1) / s->sx;
    *ox1 = *ox1 < s->ow ? *ox1 : s->ow;
    *ox0 = *ox0 < *ox1 ? *ox0 : *ox1;
}

/* Unfolds image x (C x H x W) into columns [off, off + OH*OW) of col. */
SINGA_KERNEL static void im2col(const conv_state *s, const float *x, float *col, size_t ld, size_t off)
{
    for (int c = 0; c < s->c; c++)
        for (int ki = 0; ki < s->ky; ki++)
            for (int kj = 0; kj < s->kx; kj++) {
                float *row = col + ((size_t)(c * s->ky + ki) * (size_t)s->kx + (size_t)kj) * ld + off;
                const float *plane = x + (size_t)c * (size_t)(s->h * s->w);
                int ox0, ox1;
                valid_cols(s, kj, &ox0, &ox1);
                for (int oy = 0; oy < s->oh; oy++) {
                    int iy = oy * s->sy - s->py + ki;
                    float *out = row + (size_t)oy * (size_t)s->ow;
                    if (iy < 0 || iy >= s->h) {
                        memset(out, 0, (size_t)s->ow * sizeof *out);
                        continue;
                    }
                    const float *line = plane + (size_t)iy * (size_t)s->w - s->px + kj;
                    for (int ox = 0; ox < ox0; ox++)
                        out[ox] = 0.0f;
                    if (s->sx == 1)
                        memcpy(out + ox0, line + ox0, (size_t)(ox1 - ox0) * sizeof *out);
                    else
                        for (int ox = ox0; ox < ox1; ox++)
                            out[ox] = line[ox * s->sx];
                    for (int ox = ox1; ox < s->ow; ox++)
                        out[ox] = 0.0f;
                }
            }
}

/* The adjoint of im2col: adds columns [off, off + OH*OW) of col into image dx. */
SINGA_KERNEL static void col2im(const conv_state *s, const float *col, size_t ld, size_t off, float *dx)
{
    for (int c = 0; c < s->c; c++)
        for (int ki = 0; ki < s->ky; ki++)
            for (int kj = 0; kj < s->kx; kj++) {
                const float *row = col + ((size_t)(c * s->ky + ki) * (size_t)s->kx + (size_t)kj) * ld + off;
                float *plane = dx + (size_t)c * (size_t)(s->h * s->w);
                int ox0, ox1;
                valid_cols(s, kj, &ox0, &ox1);
                for (int oy = 0; oy < s->oh; oy++) {
                    int iy = oy * s->sy - s->py + ki;
                    if (iy < 0 || iy >= s->h)
                        continue;
                    const float *in = row + (size_t)oy * (size_t)s->ow;
                    float *line = plane + (size_t)iy * (size_t)s->w - s->px + kj;
                    if (s->sx == 1)
                        for (int ox = ox0; ox < ox1; ox++)
                            line[ox] += in[ox];
                    else
                        for (int ox = ox0; ox < ox1; ox++)
                            line[ox * s->sx] += in[ox];
                }
            }
}

/* The per-image stages of a pass, each run over a range of images by the job's threads. */
typedef struct conv_pass {
    singa_layer *l;
    conv_state *s;
    size_t plane, img, ld; /* OH*OW, C*H*W, N*OH*OW */
    float beta;            /* for the input gradient: 0 overwrites, 1 adds */
} conv_pass;

static conv_pass pass_of(singa_layer *l)
{
    conv_state *s = l->state;
    return (conv_pass){.l = l, .s = s, .plane = (size_t)(s->oh * s->ow),
                       .img = (size_t)(s->c * s->h * s->w), .ld = (size_t)s->col.ld};
}

static void unfold(void *ctx, size_t b, size_t e)
{
    const conv_pass *c = ctx;
    for (size_t i = b; i < e; i++)
        im2col(c->s, c->l->src[0]->data.data + i * c->img, c->s->col.data, c->ld, i * c->plane);
}

/* F x (N * OH*OW) back to N x F x OH*OW, adding the bias on the way. */
static void regroup_output(void *ctx, size_t b, size_t e)
{
    const conv_pass *c = ctx;
    const conv_state *s = c->s;
    for (size_t i = b; i < e; i++)
        for (int f = 0; f < s->f; f++) {
            const float *src = s->tmp.data + (size_t)f * c->ld + i * c->plane;
            float *dst = c->l->data.data + (i * (size_t)s->f + (size_t)f) * c->plane;
            float bias = s->bias ? c->l->params[1]->data.data[f] : 0.0f;
            for (size_t p = 0; p < c->plane; p++)
                dst[p] = src[p] + bias;
        }
}

/* N x F x OH*OW gradient into F x (N * OH*OW). */
static void regroup_grad(void *ctx, size_t b, size_t e)
{
    const conv_pass *c = ctx;
    const conv_state *s = c->s;
    for (size_t i = b; i < e; i++)
        for (int f = 0; f < s->f; f++)
            memcpy(s->tmp.data + (size_t)f * c->ld + i * c->plane,
                   c->l->grad.data + (i * (size_t)s->f + (size_t)f) * c->plane, c->plane * sizeof(float));
}

static void fold(void *ctx, size_t b, size_t e)
{
    const conv_pass *c = ctx;
    float *dx = c->l->src[0]->grad.data;
    for (size_t i = b; i < e; i++) {
        if (c->beta == 0.0f)
            memset(dx + i * c->img, 0, c->img * sizeof *dx);
        col2im(c->s, c->s->dcol.data, c->ld, i * c->plane, dx + i * c->img);
    }
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    conv_state *s = l->state;
    conv_pass c = pass_of(l);
    size_t n = (size_t)singa_tensor_rows(&l->data);
    singa_pool_for(l->ctx->pool, n, 1, unfold, &c);
    singa_tensor_gemm(false, false, 1.0f, &l->params[0]->data, &s->col, 0.0f, &s->tmp);
    singa_pool_for(l->ctx->pool, n, 1, regroup_output, &c);
    return 0;
}

static void backward(singa_layer *l)
{
    conv_state *s = l->state;
    singa_layer *src = l->src[0];
    conv_pass c = pass_of(l);
    size_t n = (size_t)singa_tensor_rows(&l->data);
    singa_pool_for(l->ctx->pool, n, 1, regroup_grad, &c);
    singa_param *w = l->params[0];
    /* The input gradient first: an updater may change W once its gradient is reported ready. */
    if (src->needs_grad) {
        singa_tensor_gemm(true, false, 1.0f, &w->data, &s->tmp, 0.0f, &s->dcol);
        c.beta = singa_layer_grad_beta(src);
        singa_pool_for(l->ctx->pool, n, 1, fold, &c);
    }
    singa_param_grad_gemm(w, false, &s->tmp, true, &s->col);
    if (s->bias) {
        singa_param *b = l->params[1];
        singa_param_grad_begin(b);
        for (int f = 0; f < s->f; f++) {
            float sum = singa_vsum(s->tmp.data + (size_t)f * c.ld, c.ld);
            b->grad.data[f] = b->grad_beta * b->grad.data[f] + b->grad_alpha * sum;
        }
        singa_param_grad_done(b);
    }
}

static void destroy(singa_layer *l)
{
    conv_state *s = l->state;
    singa_tensor_free(&s->col);
    singa_tensor_free(&s->dcol);
    singa_tensor_free(&s->tmp);
}

static int export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    const singa_param *w = l->params[0];
    int kx, ky;
    singa_layer_conf_xy(l, "kernel", 0, &kx, &ky);
    /* num_filters x (C * ky * kx) is, in memory, ONNX's F x C x ky x kx. */
    int64_t dims[4] = {w->data.shape[0], l->src[0]->data.shape[1], ky, kx};
    bool bias = l->nparams > 1;
    const char *wn = singa_ox_param(x, w, 4, dims);
    size_t n = singa_ox_begin(x, "Conv", l->name, bias ? 3 : 2, l->src[0]->name, wn,
                          bias ? singa_ox_param(x, l->params[1], 0, NULL) : NULL);
    singa_layer_onnx_window(x, l);
    singa_ox_end(x, n);
    return 0;
}

const singa_layer_type singa_conv_layer = {
    .name = "kConvolution", .flags = SINGA_LAYER_FEATURE_PARTS, .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(conv_state), .setup = setup, .forward = forward, .backward = backward,
    .destroy = destroy,
    .export_onnx = export_onnx,
};
