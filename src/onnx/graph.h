/* An ONNX graph being written (struct singa_onnx_graph of singa/onnx.h): what the layer types'
 * export_onnx write with, and the pieces model.c assembles.  The built-in types use the short
 * writers below; a plugin's the singa_onnx_* functions of singa/onnx.h, which wrap them. */
#ifndef SINGA_ONNX_GRAPH_H
#define SINGA_ONNX_GRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/pbwrite.h"
#include "singa/onnx.h"

#define SINGA_OX_NAME_LEN (SINGA_NAME_MAX + 32) /* a value's name: "<layer>/<what>" */
#define SINGA_OX_INT64 7                         /* onnx.proto's TensorProto INT64 (Cast's "to") */

struct singa_onnx_graph {
    singa_pbw *w;         /* the whole model; the graph is open while layers are written */
    int nodes;
    const char **inits;   /* names of the params written as initializers */
    int ninits, capinits;
    const singa_layer **parts; /* kSlice parts written (they are not in the net's layer list) */
    int nparts, capparts;
    bool oom;
};

/* Opens a node with inputs in[0..nin) and one output, named after it; attributes follow, then
 * singa_ox_end closes it.  singa_ox_begin takes up to 4 inputs as arguments. */
size_t singa_ox_begin_list(singa_onnx_graph *x, const char *op, const char *out, int nin, const char *const *in);
size_t singa_ox_begin(singa_onnx_graph *x, const char *op, const char *out, int nin, ...);
void singa_ox_end(singa_onnx_graph *x, size_t at);
void singa_ox_attr_i(singa_onnx_graph *x, const char *name, int64_t v);
void singa_ox_attr_f(singa_onnx_graph *x, const char *name, float v);
void singa_ox_attr_ints(singa_onnx_graph *x, const char *name, int n, const int64_t *v);
/* A node with no attributes and up to 3 inputs (NULL past nin). */
void singa_ox_node(singa_onnx_graph *x, const char *op, const char *out, int nin, const char *a, const char *b,
                   const char *c);
/* Initializers: floats of ndim dims, a float scalar, a 1-d int64 (shapes, slice bounds). */
void singa_ox_floats(singa_onnx_graph *x, const char *name, int ndim, const int64_t *dims, const float *v, size_t n);
void singa_ox_scalar(singa_onnx_graph *x, const char *name, float v);
void singa_ox_ints(singa_onnx_graph *x, const char *name, int n, const int64_t *v);
/* The initializer of param p (by its owner's name, written once), as `ndim` dims or, with dims
 * NULL, its own shape; returns its name. */
const char *singa_ox_param(singa_onnx_graph *x, const singa_param *p, int ndim, const int64_t *dims);
/* Remembers a pointer in a growable list; false (and x->oom) when memory ran out. */
bool singa_ox_remember(singa_onnx_graph *x, const void ***items, int *n, int *cap, const void *item);

/* "<layer>/<what>" into buf (SINGA_OX_NAME_LEN bytes); returns buf. */
const char *singa_ox_name(char *buf, const singa_layer *l, const char *what);
/* The value of l's source i as a matrix (instances x features), flattened when it is not one. */
const char *singa_ox_src_matrix(singa_onnx_graph *x, const singa_layer *l, int i, char *buf);
/* Reshapes value `in` to l's own shape (the batch kept): the layer's output. */
void singa_ox_reshape_to(singa_onnx_graph *x, const singa_layer *l, const char *in);
/* The export_onnx of a layer that hands its source on in kTest (kDropout, kSplit). */
int singa_ox_identity(const singa_layer *l, singa_onnx_graph *x, singa_err *err);

#endif
