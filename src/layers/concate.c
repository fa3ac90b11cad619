/* kConcate: joins its sources along concate_dim, 0 (instances: rows) or 1 (features: columns of
 * the matrix view, which for N x C x H x W blobs are channels).  As in SINGA, every dimension
 * other than concate_dim must agree; `num_concates`, when given, must equal the number of
 * sources.  The gradient is cut back into the same slabs. */
#include <stdlib.h>

#include "layers/layers.h"
#include "onnx/graph.h"

typedef struct concate_state {
    int dim;
} concate_state;

static const singa_field fields[] = {
    {"concate_dim", SINGA_FIELD_INT}, {"num_concates", SINGA_FIELD_INT}, {NULL, 0},
};

static int setup(singa_layer *l, singa_err *err)
{
    concate_state *s = l->state;
    const singa_tensor *first = &l->src[0]->data;
    if ((s->dim = singa_layer_conf_dim(l, "concate_dim", first->ndim, err)) < 0)
        return -1;
    int want = singa_conf_int(l->conf, "num_concates", l->nsrc);
    if (want != l->nsrc)
        return singa_layer_err(l, err, "field 'num_concates' is %d but the layer has %d sources", want, l->nsrc);
    int shape[SINGA_MAX_DIMS];
    for (int d = 0; d < first->ndim; d++)
        shape[d] = first->shape[d];
    for (int i = 1; i < l->nsrc; i++) {
        const singa_tensor *t = &l->src[i]->data;
        bool same = t->ndim == first->ndim;
        for (int d = 0; same && d < t->ndim; d++)
            same = d == s->dim || t->shape[d] == first->shape[d];
        if (!same) {
            char a[64], b[64];
            return singa_layer_err(l, err, "source '%s' has shape %s but '%s' has shape %s: they may differ in dimension %d (concate_dim) only",
                                   l->src[i]->name, singa_tensor_shape_str(t, a, sizeof a),
                                   l->src[0]->name, singa_tensor_shape_str(first, b, sizeof b), s->dim);
        }
        shape[s->dim] += t->shape[s->dim];
    }
    if (singa_layer_shape(l, first->ndim, shape, err) < 0)
        return -1;
    bool labels = l->src[0]->aux.data != NULL; /* rows joined keep their labels */
    for (int i = 1; i < l->nsrc && s->dim == 0; i++)
        labels &= l->src[i]->aux.data != NULL;
    return labels ? singa_layer_aux_rows(l, shape[0], err) : 0;
}

/* Where source i starts along the cut: rows for dim 0, matrix columns for dim 1. */
static int width(const singa_layer *l, int i)
{
    const concate_state *s = l->state;
    const singa_tensor *t = &l->src[i]->data;
    return s->dim == 0 ? singa_tensor_rows(t) : singa_tensor_cols(t);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const concate_state *s = l->state;
    for (int i = 0, at = 0; i < l->nsrc; at += width(l, i), i++) {
        singa_tensor slab = singa_layer_slab(&l->data, s->dim, at, width(l, i));
        singa_tensor_copy(&slab, &l->src[i]->data);
        if (l->aux.data && (s->dim == 0 || i == 0))
            singa_layer_aux_copy(&l->aux, s->dim == 0 ? at : 0, &l->src[i]->aux, 0, l->src[i]->aux.shape[0]);
    }
    return 0;
}

static void backward(singa_layer *l)
{
    const concate_state *s = l->state;
    for (int i = 0, at = 0; i < l->nsrc; at += width(l, i), i++) {
        singa_layer *src = l->src[i];
        if (!src->needs_grad)
            continue;
        singa_tensor slab = singa_layer_slab(&l->grad, s->dim, at, width(l, i));
        singa_layer_grad_add(&src->grad, singa_layer_grad_beta(src), &slab);
    }
}

static int export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    if (singa_conf_int(l->conf, "concate_dim", 0) != 1)
        return singa_err_set(err, "concate_dim 0 joins instances of the batch; ONNX export needs every "
                                  "instance computed on its own (concate_dim = 1)");
    const char **in = malloc((size_t)l->nsrc * sizeof *in);
    if (!in) {
        x->oom = true; /* the export says so */
        return 0;
    }
    for (int i = 0; i < l->nsrc; i++)
        in[i] = l->src[i]->name;
    size_t n = singa_ox_begin_list(x, "Concat", l->name, l->nsrc, in);
    free(in);
    singa_ox_attr_i(x, "axis", 1);
    singa_ox_end(x, n);
    return 0;
}

const singa_layer_type singa_concate_layer = {
    .name = "kConcate", .fields = fields, .min_src = 1, .max_src = -1,
    .state_size = sizeof(concate_state), .setup = setup, .forward = forward, .backward = backward,
    .export_onnx = export_onnx,
};
