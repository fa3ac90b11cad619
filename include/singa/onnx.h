/* ONNX export: a job's kTest net, with the params of its newest (or a named) checkpoint, as an
 * ONNX model (opset 13) that computes what singa_model_predict gives. */
#ifndef SINGA_ONNX_H
#define SINGA_ONNX_H

#include <stddef.h>
#include <stdint.h>

#include "singa/job.h"

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

#pragma GCC visibility pop

#endif
