/* kOneHot: integer indices, one per instance, become one-hot rows of vocab_size features (SINGA's
 * onehot_conf.vocab_size); index -1 gives a row of zeros, as it gives a zero vector in
 * kEmbedding.  Also the index checks that layers reading indices or labels share. */
#include "layers/layers.h"

int singa_layer_index(const singa_layer *l, const char *what, float v, int n, bool allow_none,
                      int row, singa_err *err)
{
    /* Range first: converting a float outside int's range is undefined. */
    if (v >= (allow_none ? -1.0f : 0.0f) && v < (float)n && (float)(int)v == v)
        return (int)v;
    return singa_layer_err(l, err, "%s %g in row %d is not an integer in 0..%d%s", what, v, row,
                           n - 1, allow_none ? " or -1" : "") - 1;
}

int singa_layer_check_index_column(singa_layer *l, singa_err *err)
{
    const singa_tensor *in = &l->src[0]->data;
    if (singa_tensor_cols(in) == 1)
        return 0;
    char b[64];
    return singa_layer_err(l, err, "needs one integer index per row, but '%s' gives shape %s",
                           l->src[0]->name, singa_tensor_shape_str(in, b, sizeof b));
}

typedef struct onehot_state {
    int vocab;
} onehot_state;

static const singa_field fields[] = {{"vocab_size", SINGA_FIELD_INT}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    onehot_state *s = l->state;
    s->vocab = singa_conf_int(l->conf, "vocab_size", 0);
    if (s->vocab <= 0)
        return singa_layer_err(l, err, "field 'vocab_size' must be a positive integer");
    if (singa_layer_check_index_column(l, err) < 0)
        return -1;
    int shape[2] = {singa_tensor_rows(&l->src[0]->data), s->vocab};
    return singa_layer_shape(l, 2, shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const onehot_state *s = l->state;
    singa_tensor_fill(&l->data, 0.0f);
    for (int r = 0; r < singa_tensor_rows(&l->data); r++) {
        int i = singa_layer_index(l, "index", l->src[0]->data.data[r], s->vocab, true, r, err);
        if (i < -1)
            return -1;
        if (i >= 0)
            l->data.data[(size_t)r * (size_t)s->vocab + (size_t)i] = 1.0f;
    }
    return 0;
}

const singa_layer_type singa_onehot_layer = {
    .name = "kOneHot", .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(onehot_state), .setup = setup, .forward = forward,
};
