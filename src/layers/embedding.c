/* kEmbedding: looks up a row of a vocab_size x feature_dim table for each instance's integer
 * index (SINGA's EmbeddingLayer); index -1 gives a zero vector, any other index outside the
 * vocabulary stops the job.  The table's gradient adds dy of every instance into its index's row
 * (an index seen twice in a batch gets both); no gradient flows to the indices. */
#include <stdlib.h>
#include <string.h>

#include "layers/layers.h"
#include "onnx/graph.h"

typedef struct embedding_state {
    int vocab, dim;
} embedding_state;

static const singa_field fields[] = {
    {"vocab_size", SINGA_FIELD_INT}, {"feature_dim", SINGA_FIELD_INT}, {NULL, 0},
};

static int setup(singa_layer *l, singa_err *err)
{
    embedding_state *s = l->state;
    s->vocab = singa_conf_int(l->conf, "vocab_size", 0);
    s->dim = singa_conf_int(l->conf, "feature_dim", 100);
    if (s->vocab <= 0)
        return singa_layer_err(l, err, "field 'vocab_size' must be a positive integer");
    if (s->dim <= 0)
        return singa_layer_err(l, err, "field 'feature_dim' must be a positive integer, got %d", s->dim);
    if (singa_layer_check_index_column(l, err) < 0)
        return -1;
    int wshape[2] = {s->vocab, s->dim};
    if (!singa_layer_param(l, 0, "weight", 2, wshape, s->dim, s->dim, "kUniformSqrtFanIn", err))
        return -1;
    int shape[2] = {singa_tensor_rows(&l->src[0]->data), s->dim};
    return singa_layer_shape(l, 2, shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const embedding_state *s = l->state;
    const singa_tensor *w = &l->params[0]->data;
    for (int r = 0; r < singa_tensor_rows(&l->data); r++) {
        int i = singa_layer_index(l, "index", l->src[0]->data.data[r], s->vocab, true, r, err);
        if (i < -1)
            return -1;
        singa_tensor row = singa_tensor_view_rows(&l->data, r, 1);
        if (i < 0) {
            singa_tensor_fill(&row, 0.0f);
        } else {
            singa_tensor table_row = singa_tensor_view_rows(w, i, 1);
            singa_tensor_copy(&row, &table_row);
        }
    }
    return 0;
}

static void backward(singa_layer *l)
{
    singa_param *w = l->params[0];
    /* grad = grad_alpha * dL/dW + grad_beta * grad, with dL/dW zero outside the batch's rows. */
    if (w->grad_beta == 0.0f)
        singa_tensor_fill(&w->grad, 0.0f);
    else if (w->grad_beta != 1.0f)
        singa_tensor_scale(&w->grad, w->grad_beta);
    for (int r = 0; r < singa_tensor_rows(&l->data); r++) {
        int i = (int)l->src[0]->data.data[r]; /* checked by forward */
        if (i >= 0) {
            singa_tensor dy = singa_tensor_view_rows(&l->grad, r, 1);
            singa_tensor g = singa_tensor_view_rows(&w->grad, i, 1);
            singa_tensor_axpy(w->grad_alpha, &dy, &g);
        }
    }
    singa_param_grad_done(w);
}

static int export_onnx(const singa_layer *l, singa_onnx_graph *x, singa_err *err)
{
    const singa_param *w = l->params[0];
    int vocab = w->data.shape[0], dim = w->data.shape[1];
    /* A zero row after the table: index -1 (a zero vector here) is Gather's last row. */
    float *table = calloc((size_t)(vocab + 1) * (size_t)dim, sizeof *table);
    if (!table) {
        x->oom = true; /* the export says so */
        return 0;
    }
    memcpy(table, w->data.data, w->data.size * sizeof *table);
    char tn[SINGA_OX_NAME_LEN], idx[SINGA_OX_NAME_LEN], rows[SINGA_OX_NAME_LEN];
    int64_t dims[2] = {vocab + 1, dim};
    singa_ox_floats(x, singa_ox_name(tn, l, "table"), 2, dims, table, (size_t)(vocab + 1) * (size_t)dim);
    free(table);
    size_t n = singa_ox_begin(x, "Cast", singa_ox_name(idx, l, "index"), 1, l->src[0]->name);
    singa_ox_attr_i(x, "to", SINGA_OX_INT64);
    singa_ox_end(x, n);
    singa_ox_node(x, "Gather", singa_ox_name(rows, l, "rows"), 2, tn, idx, NULL);
    n = singa_ox_begin(x, "Flatten", l->name, 1, rows);
    singa_ox_attr_i(x, "axis", 1);
    singa_ox_end(x, n);
    return 0;
}

const singa_layer_type singa_embedding_layer = {
    .name = "kEmbedding", .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(embedding_state), .setup = setup, .forward = forward, .backward = backward,
    .export_onnx = export_onnx,
};
