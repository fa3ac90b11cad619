/* The ONNX model of a net: what singa_onnx_export (train/onnx.c) writes to its file. */
#ifndef SINGA_ONNX_MODEL_H
#define SINGA_ONNX_MODEL_H

#include "core/pbwrite.h"
#include "singa/net.h"
#include "singa/onnx.h"

/* Writes into w (initialised) the ONNX model (IR 7, opset 13) named `name` that computes
 * layer out of net (a kTest net) from its one input layer, the batch dimension named "N";
 * sets info's input and output and *nodes.  -1 with err set naming the layer that cannot be
 * written (nothing of w is then meant for a file). */
int singa_onnx_model(singa_pbw *w, const singa_net *net, const singa_layer *out, const char *name,
                     singa_onnx_info *info, int *nodes, singa_err *err);

#endif
