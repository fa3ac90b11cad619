/* The pieces of an ONNX graph (onnx/graph.h): nodes, attributes and initializers written by
 * core/pbwrite.c into the model's buffer, and the singa_onnx_* functions a plugin's export_onnx
 * writes with (singa/onnx.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "singa/layer.h"
#include "onnx/graph.h"

/* onnx.proto's field numbers and enums. */
enum { GRAPH_NODE = 1, GRAPH_INITIALIZER = 5 };
enum { NODE_INPUT = 1, NODE_OUTPUT = 2, NODE_NAME = 3, NODE_OP = 4, NODE_ATTR = 5 };
enum { ATTR_NAME = 1, ATTR_F = 2, ATTR_I = 3, ATTR_INTS = 8, ATTR_TYPE = 20 };
enum { ATTR_FLOAT = 1, ATTR_INT = 2, ATTR_INTS_TYPE = 7 };
enum { TENSOR_DIMS = 1, TENSOR_TYPE = 2, TENSOR_INT64 = 7, TENSOR_NAME = 8, TENSOR_RAW = 9 };
enum { DT_FLOAT = 1, DT_INT64 = SINGA_OX_INT64 };

/* Opens a node with inputs in[0..nin) and one output, named after it; attributes follow. */
size_t singa_ox_begin_list(singa_onnx_graph *x, const char *op, const char *out, int nin, const char *const *in)
{
    size_t at = singa_pbw_begin(x->w, GRAPH_NODE);
    for (int i = 0; i < nin; i++)
        singa_pbw_str(x->w, NODE_INPUT, in[i]);
    singa_pbw_str(x->w, NODE_OUTPUT, out);
    singa_pbw_str(x->w, NODE_NAME, out);
    singa_pbw_str(x->w, NODE_OP, op);
    x->nodes++;
    return at;
}

size_t singa_ox_begin(singa_onnx_graph *x, const char *op, const char *out, int nin, ...)
{
    const char *in[4];
    va_list ap;
    va_start(ap, nin);
    for (int i = 0; i < nin; i++)
        in[i] = va_arg(ap, const char *);
    va_end(ap);
    return singa_ox_begin_list(x, op, out, nin, in);
}

void singa_ox_end(singa_onnx_graph *x, size_t at) { singa_pbw_end(x->w, at); }

void singa_ox_attr_i(singa_onnx_graph *x, const char *name, int64_t v)
{
    size_t a = singa_pbw_begin(x->w, NODE_ATTR);
    singa_pbw_str(x->w, ATTR_NAME, name);
    singa_pbw_int(x->w, ATTR_TYPE, ATTR_INT);
    singa_pbw_int(x->w, ATTR_I, v);
    singa_pbw_end(x->w, a);
}

void singa_ox_attr_f(singa_onnx_graph *x, const char *name, float v)
{
    size_t a = singa_pbw_begin(x->w, NODE_ATTR);
    singa_pbw_str(x->w, ATTR_NAME, name);
    singa_pbw_int(x->w, ATTR_TYPE, ATTR_FLOAT);
    singa_pbw_float(x->w, ATTR_F, v);
    singa_pbw_end(x->w, a);
}

void singa_ox_attr_ints(singa_onnx_graph *x, const char *name, int n, const int64_t *v)
{
    size_t a = singa_pbw_begin(x->w, NODE_ATTR);
    singa_pbw_str(x->w, ATTR_NAME, name);
    singa_pbw_int(x->w, ATTR_TYPE, ATTR_INTS_TYPE);
    singa_pbw_ints(x->w, ATTR_INTS, v, (size_t)n);
    singa_pbw_end(x->w, a);
}

/* A node with no attributes. */
void singa_ox_node(singa_onnx_graph *x, const char *op, const char *out, int nin, const char *a, const char *b, const char *c)
{
    singa_ox_end(x, singa_ox_begin(x, op, out, nin, a, b, c));
}

void singa_ox_floats(singa_onnx_graph *x, const char *name, int ndim, const int64_t *dims, const float *v, size_t n)
{
    size_t t = singa_pbw_begin(x->w, GRAPH_INITIALIZER);
    singa_pbw_ints(x->w, TENSOR_DIMS, dims, (size_t)ndim);
    singa_pbw_int(x->w, TENSOR_TYPE, DT_FLOAT);
    singa_pbw_str(x->w, TENSOR_NAME, name);
    singa_pbw_floats(x->w, TENSOR_RAW, v, n);
    singa_pbw_end(x->w, t);
}

void singa_ox_scalar(singa_onnx_graph *x, const char *name, float v) { singa_ox_floats(x, name, 0, NULL, &v, 1); }

/* A 1-d int64 initializer (shapes, slice bounds). */
void singa_ox_ints(singa_onnx_graph *x, const char *name, int n, const int64_t *v)
{
    size_t t = singa_pbw_begin(x->w, GRAPH_INITIALIZER);
    int64_t dim = n;
    singa_pbw_ints(x->w, TENSOR_DIMS, &dim, 1);
    singa_pbw_int(x->w, TENSOR_TYPE, DT_INT64);
    singa_pbw_str(x->w, TENSOR_NAME, name);
    singa_pbw_ints(x->w, TENSOR_INT64, v, (size_t)n);
    singa_pbw_end(x->w, t);
}

/* Remembers a pointer in a growable list; false when memory ran out. */
bool singa_ox_remember(singa_onnx_graph *x, const void ***items, int *n, int *cap, const void *item)
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
const char *singa_ox_param(singa_onnx_graph *x, const singa_param *p, int ndim, const int64_t *dims)
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
    singa_ox_floats(x, p->name, ndim, dims, p->data.data, p->data.size);
    singa_ox_remember(x, (const void ***)&x->inits, &x->ninits, &x->capinits, p->name);
    return p->name;
}

/* ---- what a layer type's export_onnx hook writes with (singa/onnx.h) ---- */

int singa_onnx_node(singa_onnx_graph *g, const char *op, const char *out, int nin, const char *const *in, int nattrs,
                    const singa_onnx_attr *attrs, singa_err *err)
{
    if (!op || !out || nin < 0 || (nin && !in) || nattrs < 0 || (nattrs && !attrs))
        return singa_err_set(err, "singa_onnx_node: an op, an output and the inputs are required");
    size_t n = singa_ox_begin_list(g, op, out, nin, in);
    for (int k = 0; k < nattrs; k++) {
        const singa_onnx_attr *a = &attrs[k];
        if (a->kind == SINGA_ONNX_INT)
            singa_ox_attr_i(g, a->name, a->i);
        else if (a->kind == SINGA_ONNX_FLOAT)
            singa_ox_attr_f(g, a->name, a->f);
        else if (a->kind == SINGA_ONNX_INTS)
            singa_ox_attr_ints(g, a->name, a->nints, a->ints);
        else
            return singa_err_set(err, "singa_onnx_node: attribute '%s' of node '%s' has an unknown kind %d", a->name, out,
                                 (int)a->kind);
    }
    singa_ox_end(g, n);
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
    singa_ox_floats(g, name, ndim, dims, values, n);
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
    return singa_ox_param(g, p, ndim, dims);
}

/* "<layer>/<what>" */
const char *singa_ox_name(char *buf, const singa_layer *l, const char *what)
{
    snprintf(buf, SINGA_OX_NAME_LEN, "%s/%s", l->name, what);
    return buf;
}

/* The value of l's source i as a matrix (instances x features), flattened when it is not one. */
const char *singa_ox_src_matrix(singa_onnx_graph *x, const singa_layer *l, int i, char *buf)
{
    const singa_layer *s = l->src[i];
    if (s->data.ndim <= 2)
        return s->name;
    snprintf(buf, SINGA_OX_NAME_LEN, "%s/flat%d", l->name, i);
    size_t n = singa_ox_begin(x, "Flatten", buf, 1, s->name);
    singa_ox_attr_i(x, "axis", 1);
    singa_ox_end(x, n);
    return buf;
}

/* Reshapes value `in` to l's own shape (the batch kept): the layer's output. */
void singa_ox_reshape_to(singa_onnx_graph *x, const singa_layer *l, const char *in)
{
    char shape[SINGA_OX_NAME_LEN];
    int64_t dims[SINGA_MAX_DIMS] = {0};
    for (int d = 1; d < l->data.ndim; d++)
        dims[d] = l->data.shape[d];
    singa_ox_ints(x, singa_ox_name(shape, l, "shape"), l->data.ndim, dims);
    singa_ox_node(x, "Reshape", l->name, 2, in, shape, NULL);
}

int singa_ox_identity(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    singa_ox_node(x, "Identity", l->name, 1, l->src[0]->name, NULL, NULL);
    return 0;
}
