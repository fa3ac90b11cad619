/* kRNNLabel: the labels of an unrolled character model: copy i reads position i + 1 of its
 * sequence source (kCharRNN), the character that follows the one copy i was fed. */
#include "layers/layers.h"

static const singa_field fields[] = {{NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    const singa_tensor *in = &l->src[0]->data;
    if (in->ndim != 2 || singa_tensor_cols(in) < l->unroll_len + 1)
        return singa_layer_err(l, err, "copy %d needs position %d of a sequence source, but '%s' gives %d per row",
                               l->unroll_index, l->unroll_index + 1, l->src[0]->name, singa_tensor_cols(in));
    int rows = singa_tensor_rows(in);
    return singa_layer_shape(l, 1, &rows, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const singa_tensor *in = &l->src[0]->data;
    for (int r = 0; r < singa_tensor_rows(in); r++)
        l->data.data[r] = in->data[(size_t)r * (size_t)in->ld + (size_t)l->unroll_index + 1];
    return 0;
}

const singa_layer_type singa_rnn_label_layer = {
    .name = "kRNNLabel", .fields = fields, .min_src = 1, .max_src = 1,
    .setup = setup, .forward = forward,
};
