/* ONNX export of a trained model (see include/singa/onnx.h).
 *
 * The model is loaded as singa.predict loads it (predict.c), so the graph is the kTest net with
 * the params singa.predict would use, and its input is what singa.predict takes: the input
 * layer's batch.  Only the layers the output depends on are written (labels, other loss layers
 * and metrics are dropped), in the net's topological order; every layer's output is the ONNX
 * value named after the layer, its helpers "<layer>/<what>", and params are initializers
 * named after the params (a shared param once, by its owner's name).
 *
 * Each layer type maps to ops that compute exactly what its forward pass does in kTest, the
 * ONNX protobuf is written by core/pbwrite.c into memory, and only a graph written whole goes to
 * the file: a layer without an ONNX form stops the export before anything is written.  A type
 * the table below does not know (a plugin's) may write itself through its export_onnx, with
 * the singa_onnx_* functions (plugin ABI 1.4).  Unrolled kGRU copies become their own
 * MatMul/Add/Sigmoid/Tanh ops, as the net computes them: a copy reads whatever its source is (a
 * kSlice's part, an embedding), which ONNX's GRU op, wanting one sequence tensor, could not
 * express without regathering the steps. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/pbwrite.h"
#include "layers/image.h"
#include "layers/layers.h"
#include "singa/onnx.h"
#include "singa/singa.h"
#include "ckpt/load.h"
#include "train/model.h"

#define IR_VERSION 7 /* ONNX 1.8's, the first to know opset 13 */
#define OPSET 13
#define NAME_LEN (SINGA_NAME_MAX + 32)

/* onnx.proto's field numbers and enums. */
enum { MODEL_IR_VERSION = 1, MODEL_PRODUCER = 2, MODEL_PRODUCER_VERSION = 3, MODEL_GRAPH = 7, MODEL_OPSET = 8 };
enum { OPSET_VERSION = 2 };
enum { GRAPH_NODE = 1, GRAPH_NAME = 2, GRAPH_INITIALIZER = 5, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12 };
enum { NODE_INPUT = 1, NODE_OUTPUT = 2, NODE_NAME = 3, NODE_OP = 4, NODE_ATTR = 5 };
enum { ATTR_NAME = 1, ATTR_F = 2, ATTR_I = 3, ATTR_INTS = 8, ATTR_TYPE = 20 };
enum { ATTR_FLOAT = 1, ATTR_INT = 2, ATTR_INTS_TYPE = 7 };
enum { TENSOR_DIMS = 1, TENSOR_TYPE = 2, TENSOR_INT64 = 7, TENSOR_NAME = 8, TENSOR_RAW = 9 };
enum { DT_FLOAT = 1, DT_INT64 = 7 };
enum { VALUE_NAME = 1, VALUE_TYPE = 2, TYPE_TENSOR = 1, TT_ELEM = 1, TT_SHAPE = 2, SHAPE_DIM = 1,
       DIM_VALUE = 1, DIM_PARAM = 2 };

typedef singa_onnx_graph ox; /* short, for the many writers below */
struct singa_onnx_graph {
    singa_pbw w;          /* the whole model; the graph is open while layers are written */
    int nodes;
    const char **inits;   /* names of the params written as initializers */
    int ninits, capinits;
    singa_layer **parts;  /* kSlice parts written (they are not in the net's layer list) */
    int nparts, capparts;
    bool oom;
};

/* ---- the pieces of a graph ---- */

/* Opens a node with inputs in[0..nin) and one output, named after it; attributes follow. */
static size_t node_begin_list(ox *x, const char *op, const char *out, int nin, const char *const *in)
{
    size_t at = singa_pbw_begin(&x->w, GRAPH_NODE);
    for (int i = 0; i < nin; i++)
        singa_pbw_str(&x->w, NODE_INPUT, in[i]);
    singa_pbw_str(&x->w, NODE_OUTPUT, out);
    singa_pbw_str(&x->w, NODE_NAME, out);
    singa_pbw_str(&x->w, NODE_OP, op);
    x->nodes++;
    return at;
}

static size_t node_begin(ox *x, const char *op, const char *out, int nin, ...)
{
    const char *in[4];
    va_list ap;
    va_start(ap, nin);
    for (int i = 0; i < nin; i++)
        in[i] = va_arg(ap, const char *);
    va_end(ap);
    return node_begin_list(x, op, out, nin, in);
}

static void node_end(ox *x, size_t at) { singa_pbw_end(&x->w, at); }

static void attr_i(ox *x, const char *name, int64_t v)
{
    size_t a = singa_pbw_begin(&x->w, NODE_ATTR);
    singa_pbw_str(&x->w, ATTR_NAME, name);
    singa_pbw_int(&x->w, ATTR_TYPE, ATTR_INT);
    singa_pbw_int(&x->w, ATTR_I, v);
    singa_pbw_end(&x->w, a);
}

static void attr_f(ox *x, const char *name, float v)
{
    size_t a = singa_pbw_begin(&x->w, NODE_ATTR);
    singa_pbw_str(&x->w, ATTR_NAME, name);
    singa_pbw_int(&x->w, ATTR_TYPE, ATTR_FLOAT);
    singa_pbw_float(&x->w, ATTR_F, v);
    singa_pbw_end(&x->w, a);
}

static void attr_ints(ox *x, const char *name, int n, const int64_t *v)
{
    size_t a = singa_pbw_begin(&x->w, NODE_ATTR);
    singa_pbw_str(&x->w, ATTR_NAME, name);
    singa_pbw_int(&x->w, ATTR_TYPE, ATTR_INTS_TYPE);
    singa_pbw_ints(&x->w, ATTR_INTS, v, (size_t)n);
    singa_pbw_end(&x->w, a);
}

/* A node with no attributes. */
static void node(ox *x, const char *op, const char *out, int nin, const char *a, const char *b, const char *c)
{
    node_end(x, node_begin(x, op, out, nin, a, b, c));
}

static void init_floats(ox *x, const char *name, int ndim, const int64_t *dims, const float *v, size_t n)
{
    size_t t = singa_pbw_begin(&x->w, GRAPH_INITIALIZER);
    singa_pbw_ints(&x->w, TENSOR_DIMS, dims, (size_t)ndim);
    singa_pbw_int(&x->w, TENSOR_TYPE, DT_FLOAT);
    singa_pbw_str(&x->w, TENSOR_NAME, name);
    singa_pbw_floats(&x->w, TENSOR_RAW, v, n);
    singa_pbw_end(&x->w, t);
}

static void init_scalar(ox *x, const char *name, float v) { init_floats(x, name, 0, NULL, &v, 1); }

/* A 1-d int64 initializer (shapes, slice bounds). */
static void init_ints(ox *x, const char *name, int n, const int64_t *v)
{
    size_t t = singa_pbw_begin(&x->w, GRAPH_INITIALIZER);
    int64_t dim = n;
    singa_pbw_ints(&x->w, TENSOR_DIMS, &dim, 1);
    singa_pbw_int(&x->w, TENSOR_TYPE, DT_INT64);
    singa_pbw_str(&x->w, TENSOR_NAME, name);
    singa_pbw_ints(&x->w, TENSOR_INT64, v, (size_t)n);
    singa_pbw_end(&x->w, t);
}

/* Remembers a pointer in a growable list; false when memory ran out. */
static bool remember(ox *x, const void ***items, int *n, int *cap, const void *item)
{
    if (*n == *cap) {
        int c = *cap ? 2 * *cap : 16;
        const void **p = realloc(*items, (size_t)c * sizeof *p);
        if (!p) {
            x->oom = true;
            return false;
        }
        *items = p;
        *cap = c;
    }
    (*items)[(*n)++] = item;
    return true;
}

/* The initializer of param p (by its owner's name, written once), optionally as `ndim` dims;
 * returns its name. */
static const char *param(ox *x, const singa_param *p, int ndim, const int64_t *dims)
{
    while (p->owner)
        p = p->owner;
    for (int i = 0; i < x->ninits; i++)
        if (strcmp(x->inits[i], p->name) == 0)
            return p->name;
    int64_t own[SINGA_MAX_DIMS];
    if (!dims) {
        ndim = p->data.ndim;
        for (int d = 0; d < ndim; d++)
            own[d] = p->data.shape[d];
        dims = own;
    }
    init_floats(x, p->name, ndim, dims, p->data.data, p->data.size);
    remember(x, (const void ***)&x->inits, &x->ninits, &x->capinits, p->name);
    return p->name;
}

/* ---- what a layer type's export_onnx hook writes with (singa/onnx.h) ---- */

int singa_onnx_node(singa_onnx_graph *g, const char *op, const char *out, int nin, const char *const *in, int nattrs,
                    const singa_onnx_attr *attrs, singa_err *err)
{
    if (!op || !out || nin < 0 || (nin && !in) || nattrs < 0 || (nattrs && !attrs))
        return singa_err_set(err, "singa_onnx_node: an op, an output and the inputs are required");
    size_t n = node_begin_list(g, op, out, nin, in);
    for (int k = 0; k < nattrs; k++) {
        const singa_onnx_attr *a = &attrs[k];
        if (a->kind == SINGA_ONNX_INT)
            attr_i(g, a->name, a->i);
        else if (a->kind == SINGA_ONNX_FLOAT)
            attr_f(g, a->name, a->f);
        else if (a->kind == SINGA_ONNX_INTS)
            attr_ints(g, a->name, a->nints, a->ints);
        else
            return singa_err_set(err, "singa_onnx_node: attribute '%s' of node '%s' has an unknown kind %d", a->name, out,
                                 (int)a->kind);
    }
    node_end(g, n);
    return 0;
}

int singa_onnx_initializer(singa_onnx_graph *g, const char *name, int ndim, const int64_t *dims, const float *values,
                           singa_err *err)
{
    size_t n = 1;
    for (int d = 0; d < ndim; d++) {
        if (dims[d] < 0)
            return singa_err_set(err, "singa_onnx_initializer: '%s' has a negative dimension", name);
        n *= (size_t)dims[d];
    }
    init_floats(g, name, ndim, dims, values, n);
    return 0;
}

const char *singa_onnx_param(singa_onnx_graph *g, const singa_param *p, int ndim, const int64_t *dims, singa_err *err)
{
    size_t n = 1;
    for (int d = 0; dims && d < ndim; d++)
        n *= dims[d] > 0 ? (size_t)dims[d] : 0;
    if (dims && n != p->data.size) {
        singa_err_set(err, "singa_onnx_param: param '%s' has %zu values, not the %zu of the shape asked for", p->name,
                      p->data.size, n);
        return NULL;
    }
    return param(g, p, ndim, dims);
}

/* "<layer>/<what>" */
static const char *helper(char *buf, const singa_layer *l, const char *what)
{
    snprintf(buf, NAME_LEN, "%s/%s", l->name, what);
    return buf;
}

/* The value of l's source i as a matrix (instances x features), flattened when it is not one. */
static const char *src_matrix(ox *x, const singa_layer *l, int i, char *buf)
{
    const singa_layer *s = l->src[i];
    if (s->data.ndim <= 2)
        return s->name;
    snprintf(buf, NAME_LEN, "%s/flat%d", l->name, i);
    size_t n = node_begin(x, "Flatten", buf, 1, s->name);
    attr_i(x, "axis", 1);
    node_end(x, n);
    return buf;
}

/* Reshapes value `in` to l's own shape (the batch kept): the layer's output. */
static void reshape_to(ox *x, const singa_layer *l, const char *in)
{
    char shape[NAME_LEN];
    int64_t dims[SINGA_MAX_DIMS] = {0};
    for (int d = 1; d < l->data.ndim; d++)
        dims[d] = l->data.shape[d];
    init_ints(x, helper(shape, l, "shape"), l->data.ndim, dims);
    node(x, "Reshape", l->name, 2, in, shape, NULL);
}

/* ---- the layer types ---- */

typedef int (*emit_fn)(ox *x, singa_layer *l, singa_err *err);

static int emit_identity(ox *x, singa_layer *l, singa_err *err)
{
    node(x, "Identity", l->name, 1, l->src[0]->name, NULL, NULL);
    return 0;
}

static int emit_mnist(ox *x, singa_layer *l, singa_err *err)
{
    char a[NAME_LEN], b[NAME_LEN], scaled[NAME_LEN], shifted[NAME_LEN];
    double norm_a = singa_conf_num(l->conf, "norm_a", 1.0);
    /* The layer's own float constants, so the products round as its forward pass does. */
    init_scalar(x, helper(a, l, "inv_norm_a"), (float)(1.0 / norm_a));
    init_scalar(x, helper(b, l, "norm_b"), (float)singa_conf_num(l->conf, "norm_b", 0.0));
    node(x, "Mul", helper(scaled, l, "scaled"), 2, l->src[0]->name, a, NULL);
    if (l->data.ndim == l->src[0]->data.ndim) {
        node(x, "Sub", l->name, 2, scaled, b, NULL);
        return 0;
    }
    node(x, "Sub", helper(shifted, l, "shifted"), 2, scaled, b, NULL);
    reshape_to(x, l, shifted);
    return 0;
}

/* kRGBImage over a data layer, kImagePreprocess: in kTest the centred window of (image - mean),
 * times scale; Sub before Slice and Mul, as the layer rounds. */
static int emit_image_parse(ox *x, singa_layer *l, singa_err *err)
{
    const singa_image_parse *p = singa_image_parse_of(l);
    const singa_tensor *in = &l->src[0]->data;
    int c = in->shape[1], h = in->shape[2], w = in->shape[3], s = p->crop;
    char mean[NAME_LEN], centred[NAME_LEN], starts[NAME_LEN], ends[NAME_LEN], axes[NAME_LEN], cut[NAME_LEN],
        scale[NAME_LEN];
    const char *v = l->src[0]->name;
    if (p->mean) {
        int64_t dims[3] = {c, h, w};
        init_floats(x, helper(mean, l, "mean"), 3, dims, p->mean, (size_t)c * (size_t)h * (size_t)w);
        node(x, "Sub", helper(centred, l, "centred"), 2, v, mean, NULL);
        v = centred;
    }
    if (s < h || s < w) {
        int64_t y0 = (h - s) / 2, x0 = (w - s) / 2; /* singa_image_crop_pick's centre */
        int64_t from[2] = {y0, x0}, to[2] = {y0 + s, x0 + s}, ax[2] = {2, 3};
        init_ints(x, helper(starts, l, "starts"), 2, from);
        init_ints(x, helper(ends, l, "ends"), 2, to);
        init_ints(x, helper(axes, l, "axes"), 2, ax);
        const char *slice_in[4] = {v, starts, ends, axes};
        node_end(x, node_begin_list(x, "Slice", helper(cut, l, "window"), 4, slice_in));
        v = cut;
    }
    init_scalar(x, helper(scale, l, "scale"), p->scale);
    node(x, "Mul", l->name, 2, v, scale, NULL);
    return 0;
}

static int emit_inner_product(ox *x, singa_layer *l, singa_err *err)
{
    char flat[NAME_LEN];
    const char *in = src_matrix(x, l, 0, flat);
    const char *w = param(x, l->params[0], 0, NULL);
    bool bias = l->nparams > 1;
    size_t n = node_begin(x, "Gemm", l->name, bias ? 3 : 2, in, w, bias ? param(x, l->params[1], 0, NULL) : NULL);
    /* W is num_output x input (transB), or input x num_output with `transpose`. */
    attr_i(x, "transB", singa_conf_bool(l->conf, "transpose", false) ? 0 : 1);
    node_end(x, n);
    return 0;
}

/* kernel, pads and strides as kConvolution and kPooling read them. */
static void window_attrs(ox *x, const singa_layer *l)
{
    int kx, ky, px, py, sx, sy;
    singa_layer_conf_xy(l, "kernel", 0, &kx, &ky);
    singa_layer_conf_xy(l, "pad", 0, &px, &py);
    singa_layer_conf_xy(l, "stride", 1, &sx, &sy);
    int64_t k[2] = {ky, kx}, p[4] = {py, px, py, px}, s[2] = {sy, sx};
    attr_ints(x, "kernel_shape", 2, k);
    attr_ints(x, "pads", 4, p);
    attr_ints(x, "strides", 2, s);
}

static int emit_conv(ox *x, singa_layer *l, singa_err *err)
{
    const singa_param *w = l->params[0];
    int kx, ky;
    singa_layer_conf_xy(l, "kernel", 0, &kx, &ky);
    /* num_filters x (C * ky * kx) is, in memory, ONNX's F x C x ky x kx. */
    int64_t dims[4] = {w->data.shape[0], l->src[0]->data.shape[1], ky, kx};
    bool bias = l->nparams > 1;
    const char *wn = param(x, w, 4, dims);
    size_t n = node_begin(x, "Conv", l->name, bias ? 3 : 2, l->src[0]->name, wn,
                          bias ? param(x, l->params[1], 0, NULL) : NULL);
    window_attrs(x, l);
    node_end(x, n);
    return 0;
}

static int emit_pooling(ox *x, singa_layer *l, singa_err *err)
{
    bool max = singa_conf_str(l->conf, "pool", "MAX")[0] == 'M';
    size_t n = node_begin(x, max ? "MaxPool" : "AveragePool", l->name, 1, l->src[0]->name);
    window_attrs(x, l);
    if (!max) /* AVG divides by the whole window, padding counting as zeros */
        attr_i(x, "count_include_pad", 1);
    node_end(x, n);
    return 0;
}

static void relu(ox *x, const singa_layer *l)
{
    double slope = singa_conf_num(l->conf, "negative_slope", 0.0);
    if (slope == 0) {
        node(x, "Relu", l->name, 1, l->src[0]->name, NULL, NULL);
        return;
    }
    size_t n = node_begin(x, "LeakyRelu", l->name, 1, l->src[0]->name);
    attr_f(x, "alpha", (float)slope);
    node_end(x, n);
}

/* 1.7159047 * tanh(0.6666667 x), activation.c's constants. */
static void stanh(ox *x, const singa_layer *l)
{
    char a[NAME_LEN], b[NAME_LEN], bx[NAME_LEN], t[NAME_LEN];
    init_scalar(x, helper(b, l, "stanh_b"), 0.6666667f);
    init_scalar(x, helper(a, l, "stanh_a"), 1.7159047f);
    node(x, "Mul", helper(bx, l, "bx"), 2, l->src[0]->name, b, NULL);
    node(x, "Tanh", helper(t, l, "tanh"), 1, bx, NULL, NULL);
    node(x, "Mul", l->name, 2, t, a, NULL);
}

static int emit_relu(ox *x, singa_layer *l, singa_err *err)
{
    relu(x, l);
    return 0;
}

static int emit_sigmoid(ox *x, singa_layer *l, singa_err *err)
{
    node(x, "Sigmoid", l->name, 1, l->src[0]->name, NULL, NULL);
    return 0;
}

static int emit_tanh(ox *x, singa_layer *l, singa_err *err)
{
    node(x, "Tanh", l->name, 1, l->src[0]->name, NULL, NULL);
    return 0;
}

static int emit_stanh(ox *x, singa_layer *l, singa_err *err)
{
    stanh(x, l);
    return 0;
}

static int emit_activation(ox *x, singa_layer *l, singa_err *err)
{
    const char *a = singa_conf_str(l->conf, "activation", "");
    if (strcmp(a, "RELU") == 0)
        return emit_relu(x, l, err);
    if (strcmp(a, "SIGMOID") == 0)
        return emit_sigmoid(x, l, err);
    if (strcmp(a, "TANH") == 0)
        return emit_tanh(x, l, err);
    return emit_stanh(x, l, err);
}

static int emit_lrn(ox *x, singa_layer *l, singa_err *err)
{
    size_t n = node_begin(x, "LRN", l->name, 1, l->src[0]->name);
    /* ONNX divides alpha by size too, and its window is the same centred, clipped one. */
    attr_i(x, "size", singa_conf_int(l->conf, "local_size", 5));
    attr_f(x, "alpha", (float)singa_conf_num(l->conf, "alpha", 1.0));
    attr_f(x, "beta", (float)singa_conf_num(l->conf, "beta", 0.75));
    attr_f(x, "bias", (float)singa_conf_num(l->conf, "knorm", 1.0));
    node_end(x, n);
    return 0;
}

/* Softmax over each instance's features: of source 0's matrix view, in l's shape. */
static void softmax_rows(ox *x, const singa_layer *l)
{
    char flat[NAME_LEN], sm[NAME_LEN];
    const char *in = src_matrix(x, l, 0, flat);
    bool matrix = l->data.ndim <= 2;
    size_t n = node_begin(x, "Softmax", matrix ? l->name : helper(sm, l, "softmax"), 1, in);
    attr_i(x, "axis", 1);
    node_end(x, n);
    if (!matrix)
        reshape_to(x, l, sm);
}

static int emit_softmax(ox *x, singa_layer *l, singa_err *err)
{
    softmax_rows(x, l);
    return 0;
}

static int emit_bm(ox *x, singa_layer *l, singa_err *err)
{
    const float eps = (float)singa_conf_num(l->conf, "eps", 1e-5);
    const singa_param *invvar = l->params[3];
    int c = invvar->data.shape[0];
    float *var = malloc((size_t)c * sizeof *var);
    if (!var) {
        x->oom = true;
        return singa_err_set(err, "out of memory");
    }
    /* The layer keeps 1 / sqrt(var + eps); ONNX wants var. */
    for (int i = 0; i < c; i++) {
        double inv = invvar->data.data[i], v = 1.0 / (inv * inv) - eps;
        var[i] = v > 0 ? (float)v : 0.0f;
    }
    char vn[NAME_LEN];
    int64_t dim = c;
    init_floats(x, helper(vn, l, "running_var"), 1, &dim, var, (size_t)c);
    free(var);
    const char *scale = param(x, l->params[0], 0, NULL), *bias = param(x, l->params[1], 0, NULL);
    const char *mean = param(x, l->params[2], 0, NULL);
    const char *ins[] = {l->src[0]->name, scale, bias, mean, vn};
    size_t at = node_begin_list(x, "BatchNormalization", l->name, 5, ins);
    attr_f(x, "epsilon", eps);
    node_end(x, at);
    return 0;
}

static int emit_concate(ox *x, singa_layer *l, singa_err *err)
{
    if (singa_conf_int(l->conf, "concate_dim", 0) != 1)
        return singa_layer_err(l, err, "concate_dim 0 joins instances of the batch; ONNX export needs every "
                                       "instance computed on its own (concate_dim = 1)");
    const char **in = malloc((size_t)l->nsrc * sizeof *in);
    if (!in) {
        x->oom = true;
        return singa_err_set(err, "out of memory");
    }
    for (int i = 0; i < l->nsrc; i++)
        in[i] = l->src[i]->name;
    size_t n = node_begin_list(x, "Concat", l->name, l->nsrc, in);
    free(in);
    attr_i(x, "axis", 1);
    node_end(x, n);
    return 0;
}

static int emit_slice(ox *x, singa_layer *l, singa_err *err)
{
    if (singa_conf_int(l->conf, "slice_dim", 0) != 1)
        return singa_layer_err(l, err, "slice_dim 0 cuts the batch into instances; ONNX export needs every "
                                       "instance computed on its own (slice_dim = 1)");
    return 0; /* its parts, which its destinations read, are written as they are needed */
}

/* Part `name` = "<slice>[k]" of kSlice layer s (slice.c): columns [k w, (k + 1) w) of its
 * source's matrix view, in the part's shape. */
static void emit_part(ox *x, singa_layer *p)
{
    for (int i = 0; i < x->nparts; i++)
        if (x->parts[i] == p)
            return;
    if (!remember(x, (const void ***)&x->parts, &x->nparts, &x->capparts, p))
        return;
    const singa_layer *s = p->src[0];
    int k = atoi(strrchr(p->name, '[') + 1), num = singa_conf_int(s->conf, "num_slices", 1);
    int64_t w = singa_tensor_cols(&s->src[0]->data) / num;
    char flat[NAME_LEN], b[NAME_LEN], e[NAME_LEN], axes[NAME_LEN], cut[NAME_LEN];
    const char *in = s->src[0]->name;
    if (s->src[0]->data.ndim > 2) {
        size_t n = node_begin(x, "Flatten", helper(flat, p, "flat"), 1, in);
        attr_i(x, "axis", 1);
        node_end(x, n);
        in = flat;
    }
    int64_t begin = k * w, end = (k + 1) * w, one = 1;
    init_ints(x, helper(b, p, "starts"), 1, &begin);
    init_ints(x, helper(e, p, "ends"), 1, &end);
    init_ints(x, helper(axes, p, "axes"), 1, &one);
    size_t n = node_begin(x, "Slice", p->data.ndim > 2 ? helper(cut, p, "cut") : p->name, 4, in, b, e, axes);
    node_end(x, n);
    if (p->data.ndim > 2)
        reshape_to(x, p, cut);
}

static int emit_embedding(ox *x, singa_layer *l, singa_err *err)
{
    const singa_param *w = l->params[0];
    int vocab = w->data.shape[0], dim = w->data.shape[1];
    /* A zero row after the table: index -1 (a zero vector here) is Gather's last row. */
    float *table = calloc((size_t)(vocab + 1) * (size_t)dim, sizeof *table);
    if (!table) {
        x->oom = true;
        return singa_err_set(err, "out of memory");
    }
    memcpy(table, w->data.data, w->data.size * sizeof *table);
    char tn[NAME_LEN], idx[NAME_LEN], rows[NAME_LEN];
    int64_t dims[2] = {vocab + 1, dim};
    init_floats(x, helper(tn, l, "table"), 2, dims, table, (size_t)(vocab + 1) * (size_t)dim);
    free(table);
    size_t n = node_begin(x, "Cast", helper(idx, l, "index"), 1, l->src[0]->name);
    attr_i(x, "to", DT_INT64);
    node_end(x, n);
    node(x, "Gather", helper(rows, l, "rows"), 2, tn, idx, NULL);
    n = node_begin(x, "Flatten", l->name, 1, rows);
    attr_i(x, "axis", 1);
    node_end(x, n);
    return 0;
}

/* One gate's pre-activation, x W + b (+ h U): gru.c's preact. */
static void gru_preact(ox *x, singa_layer *l, int g, const char *in, const char *h, const char *out)
{
    char xw[NAME_LEN], xwb[NAME_LEN], hu[NAME_LEN], what[32];
    static const char gate[] = "zrc";
    snprintf(what, sizeof what, "%c_xw", gate[g]);
    node(x, "MatMul", helper(xw, l, what), 2, in, param(x, l->params[3 * g], 0, NULL), NULL);
    if (!h) {
        node(x, "Add", out, 2, xw, param(x, l->params[3 * g + 2], 0, NULL), NULL);
        return;
    }
    snprintf(what, sizeof what, "%c_xwb", gate[g]);
    node(x, "Add", helper(xwb, l, what), 2, xw, param(x, l->params[3 * g + 2], 0, NULL), NULL);
    snprintf(what, sizeof what, "%c_hu", gate[g]);
    node(x, "MatMul", helper(hu, l, what), 2, h, param(x, l->params[3 * g + 1], 0, NULL), NULL);
    node(x, "Add", out, 2, xwb, hu, NULL);
}

static int emit_gru(ox *x, singa_layer *l, singa_err *err)
{
    char flat[NAME_LEN], pz[NAME_LEN], pr[NAME_LEN], pc[NAME_LEN], z[NAME_LEN], r[NAME_LEN], c[NAME_LEN];
    char rh[NAME_LEN], one[NAME_LEN], zc[NAME_LEN], a[NAME_LEN], zh[NAME_LEN];
    const char *in = src_matrix(x, l, 0, flat);
    const char *h = l->nsrc > 1 ? l->src[l->nsrc - 1]->name : NULL; /* the previous copy */
    gru_preact(x, l, 0, in, h, helper(pz, l, "z_pre"));
    node(x, "Sigmoid", helper(z, l, "z"), 1, pz, NULL, NULL);
    gru_preact(x, l, 1, in, h, helper(pr, l, "r_pre"));
    node(x, "Sigmoid", helper(r, l, "r"), 1, pr, NULL, NULL);
    if (h)
        node(x, "Mul", helper(rh, l, "rh"), 2, r, h, NULL);
    gru_preact(x, l, 2, in, h ? rh : NULL, helper(pc, l, "c_pre"));
    node(x, "Tanh", helper(c, l, "c"), 1, pc, NULL, NULL);
    /* h' = (1 - z) c + z h */
    init_scalar(x, helper(one, l, "one"), 1.0f);
    node(x, "Sub", helper(zc, l, "1-z"), 2, one, z, NULL);
    if (!h) {
        node(x, "Mul", l->name, 2, zc, c, NULL);
        return 0;
    }
    node(x, "Mul", helper(a, l, "(1-z)c"), 2, zc, c, NULL);
    node(x, "Mul", helper(zh, l, "zh"), 2, z, h, NULL);
    node(x, "Add", l->name, 2, a, zh, NULL);
    return 0;
}

static int emit_softmax_loss(ox *x, singa_layer *l, singa_err *err)
{
    softmax_rows(x, l); /* its output: the probabilities; the labels are not read */
    return 0;
}

typedef struct op_map {
    const singa_layer_type *type;
    emit_fn emit;
} op_map;

static const op_map ops[] = {
    {&singa_mnist_layer, emit_mnist},
    {&singa_inner_product_layer, emit_inner_product},
    {&singa_conv_layer, emit_conv},
    {&singa_pooling_layer, emit_pooling},
    {&singa_relu_layer, emit_relu},
    {&singa_sigmoid_layer, emit_sigmoid},
    {&singa_tanh_layer, emit_tanh},
    {&singa_stanh_layer, emit_stanh},
    {&singa_activation_layer, emit_activation},
    {&singa_lrn_layer, emit_lrn},
    {&singa_dropout_layer, emit_identity},
    {&singa_split_layer, emit_identity},
    {&singa_softmax_layer, emit_softmax},
    {&singa_softmax_loss_layer, emit_softmax_loss},
    {&singa_bm_layer, emit_bm},
    {&singa_concate_layer, emit_concate},
    {&singa_slice_layer, emit_slice},
    {&singa_embedding_layer, emit_embedding},
    {&singa_gru_layer, emit_gru},
};

static const op_map *op_of(const singa_layer *l)
{
    static const op_map image_parse = {NULL, emit_image_parse};
    if (singa_image_parse_of(l))
        return &image_parse;
    for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
        if (ops[i].type == l->type)
            return &ops[i];
    return NULL;
}

/* ---- the graph ---- */

static int index_of(const singa_net *net, const singa_layer *l)
{
    for (int i = 0; i < net->nlayers; i++)
        if (net->layers[i] == l)
            return i;
    return -1;
}

/* The sources l's output depends on: a loss layer's scores only (not its labels). */
static int used_srcs(const singa_layer *l) { return l->type == &singa_softmax_loss_layer ? 1 : l->nsrc; }

/* A kSlice part stands in for its slice as a source (slice.c). */
static const singa_layer *through_part(const singa_layer *s) { return index_of(s->net, s) < 0 ? s->src[0] : s; }

/* Marks every layer out depends on. */
static void mark_needed(const singa_net *net, const singa_layer *out, bool *needed)
{
    needed[index_of(net, out)] = true;
    for (int i = net->nlayers - 1; i >= 0; i--) {
        const singa_layer *l = net->layers[i];
        if (!needed[i])
            continue;
        for (int k = 0; k < used_srcs(l); k++) {
            int j = index_of(net, through_part(l->src[k]));
            if (j >= 0)
                needed[j] = true;
        }
    }
}

static void value_info(ox *x, int field, const singa_layer *l)
{
    size_t v = singa_pbw_begin(&x->w, field);
    singa_pbw_str(&x->w, VALUE_NAME, l->name);
    size_t t = singa_pbw_begin(&x->w, VALUE_TYPE);
    size_t tt = singa_pbw_begin(&x->w, TYPE_TENSOR);
    singa_pbw_int(&x->w, TT_ELEM, DT_FLOAT);
    size_t sh = singa_pbw_begin(&x->w, TT_SHAPE);
    for (int d = 0; d < l->data.ndim; d++) {
        size_t dim = singa_pbw_begin(&x->w, SHAPE_DIM);
        if (d == 0)
            singa_pbw_str(&x->w, DIM_PARAM, "N");
        else
            singa_pbw_int(&x->w, DIM_VALUE, l->data.shape[d]);
        singa_pbw_end(&x->w, dim);
    }
    singa_pbw_end(&x->w, sh);
    singa_pbw_end(&x->w, tt);
    singa_pbw_end(&x->w, t);
    singa_pbw_end(&x->w, v);
}

/* Why layer l cannot be written. */
static int refuse(const singa_layer *l, singa_err *err)
{
    return singa_err_set(err, "layer '%s' (%s) has no ONNX form in this export (nor an export_onnx of its own); "
                              "the kTest net's output depends on it",
                         l->name, l->type->name);
}

static int write_graph(ox *x, const singa_model *m, const char *name, singa_onnx_info *info, singa_err *err)
{
    const singa_net *net = singa_model_net(m);
    singa_layer *out = singa_model_output(m, NULL, err), *in = NULL;
    if (!out)
        return -1;
    bool *needed = calloc((size_t)net->nlayers, sizeof *needed);
    if (!needed)
        return singa_err_set(err, "out of memory");
    mark_needed(net, out, needed);
    int rc = 0;
    for (int i = 0; i < net->nlayers && rc == 0; i++) {
        singa_layer *l = net->layers[i];
        if (!needed[i])
            continue;
        if (l->type->flags & SINGA_LAYER_INPUT) {
            if (in)
                rc = singa_err_set(err, "the output '%s' depends on two input layers, '%s' and '%s'; ONNX export needs one",
                                   out->name, in->name, l->name);
            in = l;
            continue;
        }
        const op_map *op = op_of(l);
        if (!op && !l->type->export_onnx) {
            rc = refuse(l, err);
            break;
        }
        for (int k = 0; k < used_srcs(l); k++)
            if (index_of(net, l->src[k]) < 0)
                emit_part(x, l->src[k]);
        rc = op ? op->emit(x, l, err) : l->type->export_onnx(l, x, err);
        if (rc < 0 && !op)
            singa_err_prefix(err, "layer '%s' (%s): ", l->name, l->type->name);
    }
    free(needed);
    if (rc == 0 && !in)
        rc = singa_err_set(err, "the output '%s' depends on no input layer", out->name);
    if (rc < 0)
        return -1;
    singa_pbw_str(&x->w, GRAPH_NAME, name);
    value_info(x, GRAPH_INPUT, in);
    value_info(x, GRAPH_OUTPUT, out);
    snprintf(info->input, sizeof info->input, "%s", in->name);
    snprintf(info->output, sizeof info->output, "%s", out->name);
    return 0;
}

/* Writes the bytes to a temporary file beside path, then renames it into place. */
static int write_file(const char *path, const uint8_t *p, size_t n, singa_err *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmpXXXXXX", path) >= (int)sizeof tmp)
        return singa_err_set(err, "'%s': the path is too long", path);
    int fd = mkstemp(tmp);
    if (fd < 0)
        return singa_err_set(err, "cannot create '%s': %s", tmp, strerror(errno));
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(fd, p + done, n - done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        done += (size_t)k;
    }
    int saved = errno;
    bool failed = done < n || fsync(fd) != 0;
    saved = failed && done == n ? errno : saved;
    if (close(fd) != 0 && !failed) {
        failed = true;
        saved = errno;
    }
    /* mkstemp makes the file 0600; a model is for others to read, as a file written by fopen */
    mode_t mask = umask(0);
    umask(mask);
    if (!failed && chmod(tmp, 0666 & ~mask) != 0) {
        failed = true;
        saved = errno;
    }
    if (failed) {
        unlink(tmp);
        return singa_err_set(err, "writing '%s' failed: %s", tmp, strerror(saved ? saved : EIO));
    }
    if (rename(tmp, path) != 0) {
        saved = errno;
        unlink(tmp);
        return singa_err_set(err, "cannot rename '%s' to '%s': %s", tmp, path, strerror(saved));
    }
    if (singa_ckpt_fsync_dir(path) != 0)
        return singa_err_set(err, "'%s': syncing its folder failed: %s", path, strerror(errno));
    return 0;
}

int singa_onnx_export(const singa_conf *job, const char *path, const char *checkpoint, const singa_registry *reg,
                      singa_onnx_info *info, singa_err *err)
{
    singa_onnx_info own;
    info = info ? info : &own;
    memset(info, 0, sizeof *info);
    singa_model *m;
    if (singa_model_load_from(&m, job, checkpoint, reg, NULL, err) < 0)
        return singa_err_prefix(err, "export_onnx: ");
    ox x = {.nodes = 0};
    singa_pbw_init(&x.w);
    singa_pbw_int(&x.w, MODEL_IR_VERSION, IR_VERSION);
    singa_pbw_str(&x.w, MODEL_PRODUCER, "singa-tui");
    singa_pbw_str(&x.w, MODEL_PRODUCER_VERSION, SINGA_VERSION);
    size_t os = singa_pbw_begin(&x.w, MODEL_OPSET);
    singa_pbw_int(&x.w, OPSET_VERSION, OPSET);
    singa_pbw_end(&x.w, os);
    size_t g = singa_pbw_begin(&x.w, MODEL_GRAPH);
    int rc = write_graph(&x, m, singa_conf_str(job, "name", "job"), info, err);
    singa_pbw_end(&x.w, g);
    if (rc == 0 && (x.oom || singa_pbw_ok(&x.w) < 0))
        rc = singa_err_set(err, "out of memory");
    if (rc == 0)
        rc = write_file(path, x.w.data, x.w.len, err);
    if (rc == 0) {
        snprintf(info->checkpoint, sizeof info->checkpoint, "%s", singa_model_checkpoint(m));
        info->step = singa_model_step(m);
        info->nodes = x.nodes;
        info->bytes = x.w.len;
    }
    singa_pbw_free(&x.w);
    free(x.inits);
    free(x.parts);
    singa_model_free(m);
    return rc < 0 ? singa_err_prefix(err, "export_onnx: '%s': ", path) : 0;
}
