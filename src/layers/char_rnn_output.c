/* kCharRNNOutput: samples the next character of a character model.  Each row of its source holds
 * the scores of the vocabulary; the layer draws one index per row from softmax(scores /
 * temperature) with the job's generator (temperature below 1 sharpens the distribution).  Put
 * it after the last copy of an unrolled model and read it with singa.predict to generate text. */

#include "layers/ctx.h"
#include "core/vmath.h"
#include "layers/layers.h"
#include "singa/net.h"

typedef struct sample_state {
    float inv_temp;
    singa_tensor prob; /* one row's probabilities */
} sample_state;

static const singa_field fields[] = {{"temperature", SINGA_FIELD_NUM}, {NULL, 0}};

static int setup(singa_layer *l, singa_err *err)
{
    sample_state *s = l->state;
    double t = singa_conf_num(l->conf, "temperature", 1.0);
    if (!(t > 0))
        return singa_layer_err(l, err, "field 'temperature' must be positive, got %g", t);
    s->inv_temp = (float)(1.0 / t);
    int cols = singa_tensor_cols(&l->src[0]->data), rows = singa_tensor_rows(&l->src[0]->data);
    if (singa_tensor_init(&s->prob, 1, &cols, err) < 0)
        return singa_layer_err(l, err, "%s", err->msg);
    return singa_layer_shape(l, 1, &rows, err);
}

static int forward(singa_layer *l, singa_phase phase, singa_err *err)
{
    sample_state *s = l->state;
    const singa_tensor *in = &l->src[0]->data;
    int k = singa_tensor_cols(in);
    float *p = s->prob.data;
    for (int r = 0; r < singa_tensor_rows(in); r++) {
        const float *row = in->data + (size_t)r * (size_t)in->ld;
        float mx = row[0];
        for (int c = 1; c < k; c++)
            mx = row[c] > mx ? row[c] : mx;
        for (int c = 0; c < k; c++)
            p[c] = (row[c] - mx) * s->inv_temp;
        float sum = singa_vexp_shift(p, p, (size_t)k, 0.0f);
        float u = singa_rng_uniform(l->ctx->rng) * sum;
        int pick = k - 1; /* what rounding leaves past the last bin */
        for (int c = 0; c < k; c++)
            if ((u -= p[c]) < 0) {
                pick = c;
                break;
            }
        l->data.data[r] = (float)pick;
    }
    return 0;
}

static void destroy(singa_layer *l)
{
    sample_state *s = l->state;
    singa_tensor_free(&s->prob);
}

const singa_layer_type singa_char_rnn_output_layer = {
    .name = "kCharRNNOutput", .fields = fields, .min_src = 1, .max_src = 1,
    .state_size = sizeof(sample_state), .setup = setup, .forward = forward, .destroy = destroy,
};
