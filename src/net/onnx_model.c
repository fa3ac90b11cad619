/* The ONNX model of a net (net/onnx_model.h).
 *
 * Only the layers the output depends on are written (labels, other loss layers and metrics are
 * dropped), in the net's topological order; every layer's output is the ONNX value named after
 * the layer, its helpers "<layer>/<what>", and params are initializers named after the params
 * (a shared param once, by its owner's name).  Each layer type writes itself through its
 * export_onnx (the built-in types beside their forward pass, a plugin's with the singa_onnx_*
 * functions of plugin ABI 1.4): ops that compute exactly what its forward pass does in kTest.
 * A layer whose type has none stops the export before anything is written. */
#include <stdio.h>
#include <stdlib.h>

#include "layers/layers.h"
#include "onnx/graph.h"
#include "net/onnx_model.h"
#include "singa/singa.h"

#define IR_VERSION 7 /* ONNX 1.8's, the first to know opset 13 */
#define OPSET 13

/* onnx.proto's field numbers and enums. */
enum { MODEL_IR_VERSION = 1, MODEL_PRODUCER = 2, MODEL_PRODUCER_VERSION = 3, MODEL_GRAPH = 7, MODEL_OPSET = 8 };
enum { OPSET_VERSION = 2 };
enum { GRAPH_NAME = 2, GRAPH_INPUT = 11, GRAPH_OUTPUT = 12 };
enum { DT_FLOAT = 1 };
enum { VALUE_NAME = 1, VALUE_TYPE = 2, TYPE_TENSOR = 1, TT_ELEM = 1, TT_SHAPE = 2, SHAPE_DIM = 1,
       DIM_VALUE = 1, DIM_PARAM = 2 };

typedef singa_onnx_graph ox;

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
    size_t v = singa_pbw_begin(x->w, field);
    singa_pbw_str(x->w, VALUE_NAME, l->name);
    size_t t = singa_pbw_begin(x->w, VALUE_TYPE);
    size_t tt = singa_pbw_begin(x->w, TYPE_TENSOR);
    singa_pbw_int(x->w, TT_ELEM, DT_FLOAT);
    size_t sh = singa_pbw_begin(x->w, TT_SHAPE);
    for (int d = 0; d < l->data.ndim; d++) {
        size_t dim = singa_pbw_begin(x->w, SHAPE_DIM);
        if (d == 0)
            singa_pbw_str(x->w, DIM_PARAM, "N");
        else
            singa_pbw_int(x->w, DIM_VALUE, l->data.shape[d]);
        singa_pbw_end(x->w, dim);
    }
    singa_pbw_end(x->w, sh);
    singa_pbw_end(x->w, tt);
    singa_pbw_end(x->w, t);
    singa_pbw_end(x->w, v);
}

/* Why layer l cannot be written. */
static int refuse(const singa_layer *l, singa_err *err)
{
    return singa_err_set(err, "layer '%s' (%s) has no ONNX form in this export (nor an export_onnx of its own); "
                              "the kTest net's output depends on it",
                         l->name, l->type->name);
}

/* A layer the net does not list (a kSlice part) that l reads: written once, by its own type. */
static int write_part(ox *x, const singa_layer *p, singa_err *err)
{
    for (int i = 0; i < x->nparts; i++)
        if (x->parts[i] == p)
            return 0;
    if (!singa_ox_remember(x, (const void ***)&x->parts, &x->nparts, &x->capparts, p))
        return 0;
    if (!p->type->export_onnx)
        return refuse(p, err);
    return p->type->export_onnx(p, x, err);
}

/* Layer l, its unlisted sources first. */
static int write_layer(ox *x, const singa_net *net, singa_layer *l, singa_err *err)
{
    if (!l->type->export_onnx)
        return refuse(l, err);
    for (int k = 0; k < used_srcs(l); k++)
        if (index_of(net, l->src[k]) < 0 && write_part(x, l->src[k], err) < 0)
            return -1;
    if (l->type->export_onnx(l, x, err) < 0)
        return singa_err_prefix(err, "layer '%s' (%s): ", l->name, l->type->name);
    return 0;
}

/* The needed layers; *in: the one input layer among them. */
static int write_layers(ox *x, const singa_net *net, const singa_layer *out, const singa_layer **in, singa_err *err)
{
    bool *needed = calloc((size_t)net->nlayers, sizeof *needed);
    if (!needed)
        return singa_err_set(err, "out of memory");
    mark_needed(net, out, needed);
    int rc = 0;
    for (int i = 0; i < net->nlayers && rc == 0; i++) {
        singa_layer *l = net->layers[i];
        if (!needed[i])
            continue;
        if (!(l->type->flags & SINGA_LAYER_INPUT)) {
            rc = write_layer(x, net, l, err);
        } else {
            if (*in)
                rc = singa_err_set(err, "the output '%s' depends on two input layers, '%s' and '%s'; ONNX export needs one",
                                   out->name, (*in)->name, l->name);
            *in = l;
        }
    }
    free(needed);
    if (rc == 0 && !*in)
        rc = singa_err_set(err, "the output '%s' depends on no input layer", out->name);
    return rc < 0 ? -1 : 0;
}

static int write_graph(ox *x, const singa_net *net, const singa_layer *out, const char *name, singa_onnx_info *info,
                       singa_err *err)
{
    const singa_layer *in = NULL;
    if (write_layers(x, net, out, &in, err) < 0)
        return -1;
    singa_pbw_str(x->w, GRAPH_NAME, name);
    value_info(x, GRAPH_INPUT, in);
    value_info(x, GRAPH_OUTPUT, out);
    snprintf(info->input, sizeof info->input, "%s", in->name);
    snprintf(info->output, sizeof info->output, "%s", out->name);
    return 0;
}

int singa_onnx_model(singa_pbw *w, const singa_net *net, const singa_layer *out, const char *name,
                     singa_onnx_info *info, int *nodes, singa_err *err)
{
    ox x = {.w = w};
    singa_pbw_int(w, MODEL_IR_VERSION, IR_VERSION);
    singa_pbw_str(w, MODEL_PRODUCER, "singa-tui");
    singa_pbw_str(w, MODEL_PRODUCER_VERSION, SINGA_VERSION);
    size_t os = singa_pbw_begin(w, MODEL_OPSET);
    singa_pbw_int(w, OPSET_VERSION, OPSET);
    singa_pbw_end(w, os);
    size_t g = singa_pbw_begin(w, MODEL_GRAPH);
    int rc = write_graph(&x, net, out, name, info, err);
    singa_pbw_end(w, g);
    if (rc == 0 && (x.oom || singa_pbw_ok(w) < 0))
        rc = singa_err_set(err, "out of memory");
    *nodes = x.nodes;
    free(x.inits);
    free(x.parts);
    return rc;
}
