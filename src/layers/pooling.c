/* kPooling: MAX or AVG over kernel windows of each channel of N x C x H x W blobs.  MAX keeps
 * the index of each window's winner for the backward pass; AVG divides by the full window
 * (padding counts as zeros, as in Caffe and PyTorch's default). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layers/ctx.h"
#include "core/simd.h"
#include "layers/layers.h"
#include "onnx/graph.h"
#include "singa/net.h"

typedef struct pool_state {
    bool max;
    bool max2x2; /* MAX, 2x2 windows, stride 2, no padding: the common case, done directly */
    int c, h, w, oh, ow;
    int ky, kx, py, px, sy, sx;
    int *argmax; /* MAX: per output, the input offset within its channel plane */
} pool_state;

static const singa_field fields[] = {
    {"pool", SINGA_FIELD_STR},     {"kernel", SINGA_FIELD_INT},   {"kernel_x", SINGA_FIELD_INT},
    {"kernel_y", SINGA_FIELD_INT}, {"pad", SINGA_FIELD_INT},      {"pad_x", SINGA_FIELD_INT},
    {"pad_y", SINGA_FIELD_INT},    {"stride", SINGA_FIELD_INT},   {"stride_x", SINGA_FIELD_INT},
    {"stride_y", SINGA_FIELD_INT}, {NULL, 0},
};

static int setup(singa_layer *l, singa_err *err)
{
    pool_state *s = l->state;
    const singa_tensor *in = &l->src[0]->data;
    const char *pool = singa_conf_str(l->conf, "pool", "MAX");
    static const char *const kinds[] = {"MAX", "AVG"};
    if (strcmp(pool, "MAX") != 0 && strcmp(pool, "AVG") != 0) {
        char what[320];
        snprintf(what, sizeof what, "layer '%s' (%s): field 'pool'", l->name, l->type->name);
        return singa_err_unknown(err, what, "pooling method", pool, kinds, 2);
    }
    s->max = pool[0] == 'M';
    if (in->ndim != 4) {
        char b[64];
        return singa_layer_err(l, err, "needs a N x C x H x W input, '%s' gives %s", l->src[0]->name,
                               singa_tensor_shape_str(in, b, sizeof b));
    }
    s->c = in->shape[1];
    s->h = in->shape[2];
    s->w = in->shape[3];
    singa_layer_conf_xy(l, "kernel", 0, &s->kx, &s->ky);
    singa_layer_conf_xy(l, "pad", 0, &s->px, &s->py);
    singa_layer_conf_xy(l, "stride", 1, &s->sx, &s->sy);
    if (singa_layer_window(l, s->h, s->w, s->ky, s->kx, s->py, s->px, s->sy, s->sx, &s->oh, &s->ow, err) < 0)
        return -1;
    int shape[4] = {in->shape[0], s->c, s->oh, s->ow};
    if (singa_layer_shape(l, 4, shape, err) < 0)
        return -1;
    s->max2x2 = s->max && s->ky == 2 && s->kx == 2 && s->sy == 2 && s->sx == 2 && s->py == 0 && s->px == 0;
    if (s->max && !(s->argmax = malloc(l->data.size * sizeof *s->argmax)))
        return singa_layer_err(l, err, "out of memory");
    return 0;
}


/* kernel, pads and strides as kConvolution and kPooling read them. */
void singa_layer_onnx_window(singa_onnx_graph *x, const singa_layer *l)
{
    int kx, ky, px, py, sx, sy;
    singa_layer_conf_xy(l, "kernel", 0, &kx, &ky);
    singa_layer_conf_xy(l, "pad", 0, &px, &py);
    singa_layer_conf_xy(l, "stride", 1, &sx, &sy);
    int64_t k[2] = {ky, kx}, p[4] = {py, px, py, px}, s[2] = {sy, sx};
    singa_ox_attr_ints(x, "kernel_shape", 2, k);
    singa_ox_attr_ints(x, "pads", 4, p);
    singa_ox_attr_ints(x, "strides", 2, s);
}

/* The window of output (oy, ox), clipped to the input. */
static void window(const pool_state *s, int oy, int ox, int *y0, int *y1, int *x0, int *x1)
{
    *y0 = oy * s->sy - s->py;
    *x0 = ox * s->sx - s->px;
    *y1 = *y0 + s->ky < s->h ? *y0 + s->ky : s->h;
    *x1 = *x0 + s->kx < s->w ? *x0 + s->kx : s->w;
    *y0 = *y0 < 0 ? 0 : *y0;
    *x0 = *x0 < 0 ? 0 : *x0;
}

/* One output row of MAX over 2x2 windows with stride 2 (input rows r0, r1): the winner of each
 * four, and its offset in the plane; written as selects on 0/1 masks so that it vectorises. */
SINGA_KERNEL static void max2x2_row(int n, int w, int base, const float *restrict r0,
                                    const float *restrict r1, float *restrict out, int *restrict at)
{
    for (int ox = 0; ox < n; ox++) {
        float a = r0[2 * ox], b = r0[2 * ox + 1], c = r1[2 * ox], d = r1[2 * ox + 1];
        int top = b > a, bottom = d > c;
        float ab = top ? b : a, cd = bottom ? d : c;
        int lower = cd > ab;
        out[ox] = lower ? cd : ab;
        at[ox] = base + 2 * ox + (lower ? w + bottom : top);
    }
}

static void forward_max2x2(pool_state *s, const float *x, float *y, int *arg)
{
    for (int oy = 0; oy < s->oh; oy++) {
        const float *r0 = x + (size_t)(2 * oy) * (size_t)s->w;
        max2x2_row(s->ow, s->w, 2 * oy * s->w, r0, r0 + s->w, y + (size_t)oy * (size_t)s->ow,
                   arg + (size_t)oy * (size_t)s->ow);
    }
}

/* Forward over a range of channel planes (images x channels). */
static void forward_planes(void *ctx, size_t b, size_t e)
{
    singa_layer *l = ctx;
    pool_state *s = l->state;
    size_t in_plane = (size_t)(s->h * s->w), out_plane = (size_t)(s->oh * s->ow);
    float inv = 1.0f / (float)(s->ky * s->kx);
    for (size_t p = b; p < e; p++) {
        const float *x = l->src[0]->data.data + p * in_plane;
        float *y = l->data.data + p * out_plane;
        int *arg = s->argmax ? s->argmax + p * out_plane : NULL;
        if (s->max2x2) {
            forward_max2x2(s, x, y, arg);
            continue;
        }
        for (int oy = 0; oy < s->oh; oy++)
            for (int ox = 0; ox < s->ow; ox++) {
                int y0, y1, x0, x1, o = oy * s->ow + ox;
                window(s, oy, ox, &y0, &y1, &x0, &x1);
                if (!arg) {
                    float sum = 0.0f;
                    for (int iy = y0; iy < y1; iy++)
                        for (int ix = x0; ix < x1; ix++)
                            sum += x[iy * s->w + ix];
                    y[o] = sum * inv;
                    continue;
                }
                /* Selects, not branches: which element wins is unpredictable. */
                int at = y0 * s->w + x0;
                float best = x[at];
                for (int iy = y0; iy < y1; iy++)
                    for (int ix = x0; ix < x1; ix++) {
                        int k = iy * s->w + ix;
                        bool more = x[k] > best;
                        best = more ? x[k] : best;
                        at = more ? k : at;
                    }
                y[o] = best;
                arg[o] = at;
            }
    }
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    pool_state *s = l->state;
    singa_pool_for(l->ctx->pool, (size_t)(singa_tensor_rows(&l->data) * s->c), 1, forward_planes, l);
    return 0;
}

typedef struct pool_back {
    singa_layer *l;
    float beta;
} pool_back;

static void backward_planes(void *ctx, size_t b, size_t e)
{
    const pool_back *pb = ctx;
    singa_layer *l = pb->l;
    pool_state *s = l->state;
    size_t in_plane = (size_t)(s->h * s->w), out_plane = (size_t)(s->oh * s->ow);
    float inv = 1.0f / (float)(s->ky * s->kx);
    for (size_t p = b; p < e; p++) {
        float *dx = l->src[0]->grad.data + p * in_plane;
        const float *dy = l->grad.data + p * out_plane;
        if (pb->beta == 0.0f)
            memset(dx, 0, in_plane * sizeof *dx);
        if (s->argmax) {
            const int *arg = s->argmax + p * out_plane;
            for (size_t k = 0; k < out_plane; k++)
                dx[arg[k]] += dy[k];
            continue;
        }
        for (int oy = 0; oy < s->oh; oy++)
            for (int ox = 0; ox < s->ow; ox++) {
                int y0, y1, x0, x1;
                window(s, oy, ox, &y0, &y1, &x0, &x1);
                float g = dy[oy * s->ow + ox] * inv;
                for (int iy = y0; iy < y1; iy++)
                    for (int ix = x0; ix < x1; ix++)
                        dx[iy * s->w + ix] += g;
            }
    }
}

static void backward(singa_layer *l)
{
    pool_state *s = l->state;
    if (!l->src[0]->needs_grad)
        return;
    pool_back pb = {l, singa_layer_grad_beta(l->src[0])};
    singa_pool_for(l->ctx->pool, (size_t)(singa_tensor_rows(&l->data) * s->c), 1, backward_planes, &pb);
}

static void destroy(singa_layer *l)
{
    pool_state *s = l->state;
    free(s->argmax);
}

static int export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    bool max = singa_conf_str(l->conf, "pool", "MAX")[0] == 'M';
    size_t n = singa_ox_begin(x, max ? "MaxPool" : "AveragePool", l->name, 1, l->src[0]->name);
    singa_layer_onnx_window(x, l);
    if (!max) /* AVG divides by the whole window, padding counting as zeros */
        singa_ox_attr_i(x, "count_include_pad", 1);
    singa_ox_end(x, n);
    return 0;
}

const singa_layer_type singa_pooling_layer = {
    .name = "kPooling", .flags = SINGA_LAYER_FEATURE_WISE | SINGA_LAYER_FEATURE_PARTS, .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(pool_state), .setup = setup, .forward = forward, .backward = backward,
    .destroy = destroy,
    .export_onnx = export_onnx,
};
