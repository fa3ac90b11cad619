/* kArgSort: for each instance, the indices of its topk highest scores, highest first, as floats
 * (SINGA's ArgSortLayer).  Of equal scores the lower index comes first.  No gradient. */
#include "layers/layers.h"

typedef struct argsort_state {
    int topk;
} argsort_state;

static const singa_field fields[] = {{"topk", SINGA_FIELD_INT}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    argsort_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    s->topk = singa_conf_int(l->conf, "topk", 1);
    if (s->topk < 1 || s->topk > singa_tensor_cols(x))
        return singa_layer_err(l, err, "field 'topk' must be in 1..%d (the scores per instance), got %d",
                               singa_tensor_cols(x), s->topk);
    int shape[2] = {singa_tensor_rows(x), s->topk};
    return singa_layer_shape(l, 2, shape, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    const argsort_state *s = l->state;
    const singa_tensor *x = &l->src[0]->data;
    int k = singa_tensor_cols(x), t = s->topk;
    for (int r = 0; r < singa_tensor_rows(x); r++) {
        const float *in = x->data + (size_t)r * (size_t)x->ld;
        float *out = l->data.data + (size_t)r * (size_t)t;
        /* Insertion into the sorted top list; strict > keeps the earlier of equal scores first. */
        int n = 0;
        for (int c = 0; c < k; c++) {
            int at = n;
            while (at > 0 && in[c] > in[(int)out[at - 1]])
                at--;
            if (at == t)
                continue;
            for (int j = (n < t ? n : t - 1); j > at; j--)
                out[j] = out[j - 1];
            out[at] = (float)c;
            n += n < t;
        }
    }
    return 0;
}

const singa_layer_type singa_argsort_layer = {
    .name = "kArgSort", .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(argsort_state), .setup = setup, .forward = forward,
};
