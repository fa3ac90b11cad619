/* ONNX export: a job's kTest net, with the params of its newest (or a named) checkpoint, as an
 * ONNX model (opset 13) that computes what singa_model_predict gives. */
#ifndef SINGA_ONNX_H
#define SINGA_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "singa/layer.h"

#pragma GCC visibility push(default) /* exported: libsinga is built hidden */

/* What an export wrote. */
typedef struct singa_onnx_info {
    char input[256], output[256]; /* the graph's input and output: the layers' names */
    char checkpoint[4096];        /* the checkpoint the params came from, and its step */
    uint64_t step;
    int nodes;                    /* ONNX nodes in the graph */
    size_t bytes;                 /* of the file */
} singa_onnx_info;

/* Loads the model as singa_model_load does (from `checkpoint`, a file or a directory, when not
 * NULL) and writes it to `path`: the graph's input is the net's input layer (its batch as
 * singa_model_predict takes it, the batch dimension named "N"), its output the layer
 * singa_model_predict reads by default.  Every layer between them must have an ONNX form, or
 * the export is refused naming the first that has none.  The file is written to a temporary
 * file beside `path`, fsync'd and renamed, so `path` is either the whole model or untouched.
 * info may be NULL. */
int singa_onnx_export(const singa_conf *job, const char *path, const char *checkpoint, const singa_registry *reg,
                      singa_onnx_info *info, singa_err *err);

/* For a layer type's export_onnx (singa/layer.h; plugin ABI 1.4), which writes the nodes that
 * compute its layer's output in kTest from its sources: source i is the value named
 * l->src[i]->name (a float tensor shaped as that source's blob, batch first), and the layer's
 * output must be the value named l->name, shaped as l->data.  Values of its own it names
 * "<layer>/<what>".  Each function returns 0 (or the name) or -1 (NULL) with err set. */
typedef struct singa_onnx_attr {
    const char *name;
    enum { SINGA_ONNX_FLOAT = 1, SINGA_ONNX_INT = 2, SINGA_ONNX_INTS = 7 } kind; /* onnx.proto's */
    float f;
    int64_t i;
    const int64_t *ints;
    int nints;
} singa_onnx_attr;
/* A node of the default domain (opset 13): op, inputs in[0..nin), the one output out. */
int singa_onnx_node(singa_onnx_graph *g, const char *op, const char *out, int nin, const char *const *in, int nattrs,
                    const singa_onnx_attr *attrs, singa_err *err);
/* A float initializer of ndim dims holding the product of dims values. */
int singa_onnx_initializer(singa_onnx_graph *g, const char *name, int ndim, const int64_t *dims, const float *values,
                           singa_err *err);
/* The initializer of param p (written once per export, under its owner's name when it shares
 * one), shaped as dims[0..ndim) or, with dims NULL, as the param; returns its name. */
const char *singa_onnx_param(singa_onnx_graph *g, const singa_param *p, int ndim, const int64_t *dims, singa_err *err);

#pragma GCC visibility pop

#endif
