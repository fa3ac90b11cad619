/* kEmbedding: looks up a row of a vocab_size x feature_dim table for each instance's integer
 * index (SINGA's EmbeddingLayer); index -1 gives a zero vector, any other index outside the
 * vocabulary stops the job.  The table's gradient adds dy of every instance into its index's row
 * (an index seen twice in a batch gets both); no gradient flows to the indices. */
#include "layers/layers.h"

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

const singa_layer_type singa_embedding_layer = {
    .name = "kEmbedding", .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(embedding_state), .setup = setup, .forward = forward, .backward = backward,
};
